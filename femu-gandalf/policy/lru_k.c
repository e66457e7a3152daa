/*
 * lru_k.c - "lru-k": write an object leaving DRAM to SSD only once it has been used k times.
 *
 * Rule: DRAM and SSD evict by LRU; an object leaving DRAM is written to SSD when its use count
 * (admission + hits) is at least k, else dropped. Source: the LRU-K idea (O'Neil et al.,
 * SIGMOD'93) as used for selective KV offload in the Gandalf paper's baselines; the paper's
 * description ("written when the session's k-th most recent entry is still in DRAM") is ambiguous
 * about what is counted, and we count uses of the object itself. Parameter k (default 2, 1..10).
 */
#include "kvsim.h"

static int lruk_init(struct kvsim *s, char *err, size_t errlen)
{
	if (kv_params_check(s, "k", err, errlen))
		return -1;
	double k = kv_param(s, "k", 2);
	if (k < 1 || k > 1000) {
		snprintf(err, errlen, "--param k=%g: must be in 1..1000", k);
		return -1;
	}
	return 0;
}

static bool lruk_spill(struct kvsim *s, uint32_t o)
{
	return s->obj[o].refs >= (uint32_t)kv_param(s, "k", 2);
}

const struct kv_policy kv_policy_lru_k = {
	.name = "lru-k",
	.params = "k=2",
	.init = lruk_init,
	.spill = lruk_spill,
};
