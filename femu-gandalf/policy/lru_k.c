/*
 * lru_k.c - "lru-k": write an object leaving DRAM to SSD only once it has been used k times.
 *
 * Rule: DRAM and SSD evict by LRU; an object leaving DRAM is written to SSD when its use count
 * (admission + hits) is at least k, else dropped. Source: the LRU-K idea (O'Neil et al.,
 * SIGMOD'93) as used for selective KV offload in the Gandalf paper's baselines; the paper's
 * description ("written when the session's k-th most recent entry is still in DRAM") is ambiguous
 * about what is counted, and we count uses of the object itself. Parameter k (default 2, 1..1000;
 * swept 1..10).
 */
#include "kv_policy.h"

enum { K };
static const struct kv_param lruk_params[] = {
        [K] = {"k", 2, 1, 1000, .help = "uses before an object is worth writing",
               KV_SWEEP(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
        {NULL},
};

static bool lruk_spill(struct kvsim *s, uint32_t o)
{
	return kv_obj_refs(s, o) >= (uint32_t)kv_param(s, K);
}

const struct kv_policy kv_policy_lru_k = {
        .name = "lru-k",
        .params = lruk_params,
        .spill = lruk_spill,
};
