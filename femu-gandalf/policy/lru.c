/*
 * lru.c - "lru": write-back LRU, the baseline every offloading stack starts from.
 *
 * Rule: new objects enter DRAM. When DRAM is full, its least recently used object leaves it and
 * is written to SSD (unless a copy is already there). When the SSD is full, its least recently
 * used object is evicted (TRIMmed with --trim on). Source: LMCache's local CPU + disk backends
 * and Dynamo KVBM's G2 -> G3 offload without filters. No parameters.
 */
#include "kv_policy.h"

static bool lru_spill(struct kvsim *s, uint32_t o)
{
	(void)s;
	(void)o;
	return true;
}

const struct kv_policy kv_policy_lru = {
        .name = "lru",
        .spill = lru_spill,
};
