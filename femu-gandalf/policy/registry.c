/* registry.c - the table of placement policies (docs/policies.md describes each rule). */
#include <string.h>

#include "kvsim.h"

extern const struct kv_policy kv_policy_lru, kv_policy_write_through, kv_policy_lru_k, kv_policy_dynamo,
	kv_policy_gandalf, kv_policy_oracle, kv_policy_hotprefix, kv_policy_marconi, kv_policy_workload_aware,
	kv_policy_meritkv;

const struct kv_policy *const kv_policies[] = {
	&kv_policy_gandalf, &kv_policy_lru, &kv_policy_write_through, &kv_policy_lru_k, &kv_policy_dynamo,
	&kv_policy_hotprefix, &kv_policy_marconi, &kv_policy_workload_aware, &kv_policy_meritkv, &kv_policy_oracle, NULL,
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
