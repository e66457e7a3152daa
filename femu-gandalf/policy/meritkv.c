/*
 * meritkv.c - merit-based SSD admission (MeritKV, the Gandalf paper's baseline [17]), in two
 * forms that differ only in what is admitted before the merit test applies.
 *
 * Rule: DRAM and SSD evict by LRU. An object leaving DRAM is written to SSD when its merit is
 * positive:
 *     p x prefill_time(x)  >  load_time(x) + write_cost_time(x)
 * prefill_time = its tokens / the prefill rate; load_time = size / SSD bandwidth + size / PCIe
 * bandwidth (the two hops a hit takes); write_cost_time = the SSD wear cost of writing it (size x
 * SSD price / rated TBW bytes) expressed in GPU seconds at the GPU price; p = the measured share of
 * written objects that were later hit on SSD (Laplace-smoothed). No parameters.
 *
 * "meritkv" (the Gandalf paper, Sec. 5.7: "it admits the first three demands of every object
 * unconditionally to learn its reuse"): an object is written without the test while it has been
 * demanded at most three times. A demand is a request that uses the object: its admission (a
 * miss) or a hit, counted per key over the whole run (the count survives the object's leaving the
 * cache, so a re-admitted object continues from where it was).
 *
 * "meritkv-first3" (our earlier reading, kept for comparison): the first three objects the policy
 * is asked about overall (while fewer than three have been written) are written unconditionally,
 * so that p has something to learn from; every later object takes the test.
 */
#include <stdlib.h>

#include "kv_policy.h"
#include "u64map.h"

#define MERIT_LEARN 3 /* demands (meritkv) or writes (meritkv-first3) admitted without the test */

static bool merit_positive(struct kvsim *s, uint32_t o)
{
	uint64_t written = kv_stats(s)->ssd_writes[0] + kv_stats(s)->ssd_writes[1];
	/* hits on SSD per written object so far (evicted ones are counted in ssd_written_hit) */
	double hit = (double)(kv_stats(s)->hits[1][0] + kv_stats(s)->hits[1][1]);
	double p = (hit + 1) / ((double)written + 2);
	if (p > 1)
		p = 1;
	double prefill = kv_obj_recompute_tokens(s, o) / kv_cfg(s)->prefill_tokens_per_s;
	double load = (double)kv_obj_size(s, o) / (kv_cfg(s)->ssd_gbps * 1e9) +
	              (double)kv_obj_size(s, o) / (kv_cfg(s)->pcie_gbps * 1e9);
	double fee = kv_wear_usd_per_byte(kv_cfg(s));
	double write = fee * (double)kv_obj_size(s, o) / kv_gpu_usd_per_second(kv_cfg(s));
	return p * prefill > load + write;
}

/* ---- meritkv: the first three demands of every object ---- */

static int merit_init(struct kvsim *s, char *err, size_t errlen)
{
	struct u64map *m = calloc(1, sizeof(*m));
	if (!m || u64map_init(m, 1 << 16)) {
		free(m);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	kv_set_state(s, m);
	return 0;
}

static void merit_fini(struct kvsim *s)
{
	struct u64map *m = kv_state(s);
	if (m)
		u64map_free(m);
	free(m);
	kv_set_state(s, NULL);
}

/* one more demand of o's key (admission or hit: at most one per request) */
static void merit_demand(struct kvsim *s, uint32_t o)
{
	/* (out of memory: the demand goes uncounted, and the object stays learning longer) */
	uint64_t *v = u64map_upsert(kv_state(s), kv_obj_key(s, o), 0);
	if (v && *v < UINT32_MAX)
		++*v;
}

static bool merit_spill(struct kvsim *s, uint32_t o)
{
	uint64_t d = u64map_get(kv_state(s), kv_obj_key(s, o));
	if (d == U64MAP_EMPTY || d <= MERIT_LEARN)
		return true;
	return merit_positive(s, o);
}

const struct kv_policy kv_policy_meritkv = {
        .name = "meritkv",
        .init = merit_init,
        .fini = merit_fini,
        .admitted = merit_demand,
        .touched = merit_demand,
        .spill = merit_spill,
};

/* ---- meritkv-first3: the first three objects overall ---- */

static bool first3_spill(struct kvsim *s, uint32_t o)
{
	uint64_t written = kv_stats(s)->ssd_writes[0] + kv_stats(s)->ssd_writes[1];
	if (written < MERIT_LEARN)
		return true;
	return merit_positive(s, o);
}

const struct kv_policy kv_policy_meritkv_first3 = {
        .name = "meritkv-first3",
        .spill = first3_spill,
};
