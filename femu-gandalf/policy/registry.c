/*
 * registry.c - the table of placement policies (docs/policies.md describes each rule). Adding a
 * policy: one file, one line in kv_policies[] below. Their parameter tables are read by
 * femu-gandalf/kv/params.c.
 */
#include <string.h>

#include "kv_policy.h"

extern const struct kv_policy kv_policy_lru, kv_policy_write_through, kv_policy_lru_k,
        kv_policy_dynamo, kv_policy_gandalf, kv_policy_oracle, kv_policy_hotprefix,
        kv_policy_marconi, kv_policy_workload_aware, kv_policy_meritkv, kv_policy_lru_k_session,
        kv_policy_hotprefix_ssd, kv_policy_meritkv_first3, kv_policy_gandalf_wa;

const struct kv_policy *const kv_policies[] = {
        &kv_policy_gandalf,
        &kv_policy_lru,
        &kv_policy_write_through,
        &kv_policy_lru_k,
        &kv_policy_dynamo,
        &kv_policy_hotprefix,
        &kv_policy_marconi,
        &kv_policy_workload_aware,
        &kv_policy_meritkv,
        &kv_policy_oracle,
        /* gandalf's admission with the SSD tier evicting in recency order (issue 31) */
        &kv_policy_gandalf_wa,
        /* variants of the baselines above (docs/policies.md: which one each figure uses) */
        &kv_policy_lru_k_session,
        &kv_policy_hotprefix_ssd,
        &kv_policy_meritkv_first3,
        NULL,
};

const struct kv_policy *kv_policy_find(const char *name)
{
	for (int i = 0; kv_policies[i]; i++)
		if (!strcmp(kv_policies[i]->name, name))
			return kv_policies[i];
	return NULL;
}

void kv_policy_list(FILE *out)
{
	for (int i = 0; kv_policies[i]; i++)
		fprintf(out, "%s%s", i ? ", " : "", kv_policies[i]->name);
}
