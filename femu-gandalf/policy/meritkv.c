/*
 * meritkv.c - "meritkv": merit-based SSD admission (MeritKV, the Gandalf paper's baseline [17]).
 *
 * Rule: DRAM and SSD evict by LRU. An object leaving DRAM is written to SSD when its merit is
 * positive:
 *     p x prefill_time(x)  >  load_time(x) + write_cost_time(x)
 * prefill_time = its tokens / the prefill rate; load_time = size / SSD bandwidth + size / PCIe
 * bandwidth (the two hops a hit takes); write_cost_time = the SSD wear cost of writing it (size x
 * SSD price / rated TBW bytes) expressed in GPU seconds at the GPU price; p = the measured share of
 * written objects that were later hit on SSD (Laplace-smoothed). The first three objects are
 * admitted unconditionally so that p has something to learn from. No parameters.
 */
#include "kv_policy.h"

static bool merit_spill(struct kvsim *s, uint32_t o)
{
	uint64_t written = kv_stats(s)->ssd_writes[0] + kv_stats(s)->ssd_writes[1];
	if (written < 3)
		return true;
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

const struct kv_policy kv_policy_meritkv = {
        .name = "meritkv",
        .spill = merit_spill,
};
