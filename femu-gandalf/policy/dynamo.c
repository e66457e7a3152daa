/*
 * dynamo.c - "dynamo": Dynamo KVBM's frequency filter for offloading to the disk tier.
 *
 * Rule: each object carries a count that starts at 1 and doubles every time the object is
 * offered (used again); every `decay` seconds of trace time all counts halve. An object leaving
 * DRAM is written to SSD only if its count is at least `threshold` (default 2), i.e. it was used
 * at least twice recently. DRAM and SSD evict by LRU. Source: NVIDIA Dynamo KVBM's
 * frequency-based offload filter (G2 -> G3); the decay is applied lazily per object
 * (count >> elapsed periods) instead of a sweep. Parameters: threshold=2, decay=600.
 */
#include <math.h>

#include "kv_policy.h"

enum { THRESHOLD, DECAY };
static const struct kv_param dyn_params[] = {
        [THRESHOLD] = {"threshold", 2, 1, INFINITY, .help = "count an object needs to be written",
                       KV_SWEEP(2, 4, 8)},
        [DECAY] = {"decay", 600, 0, INFINITY, .min_open = true,
                   .help = "seconds of trace time per halving"},
        {NULL},
};

/* the object's count, valid as of its last_t: the policy's per-object scratch */
static double *score(const struct kvsim *s, uint32_t o)
{
	return kv_obj_scratch(s, o);
}

/* the count decayed to now */
static double decayed(const struct kvsim *s, uint32_t x)
{
	double periods = floor(kv_now(s) / kv_param(s, DECAY)) -
	                 floor(kv_obj_last_t(s, x) / kv_param(s, DECAY));
	return periods > 0 ? *score(s, x) / pow(2, periods) : *score(s, x);
}

static void dyn_admitted(struct kvsim *s, uint32_t o)
{
	*score(s, o) = 1;
}

static void dyn_touched(struct kvsim *s, uint32_t o)
{
	/* called before last_t moves to now: decay from the previous use, then double */
	*score(s, o) = decayed(s, o) * 2;
	if (*score(s, o) > 1e9)
		*score(s, o) = 1e9;
}

static bool dyn_spill(struct kvsim *s, uint32_t o)
{
	return decayed(s, o) >= kv_param(s, THRESHOLD);
}

const struct kv_policy kv_policy_dynamo = {
        .name = "dynamo",
        .params = dyn_params,
        .obj_bytes = sizeof(double),
        .admitted = dyn_admitted,
        .touched = dyn_touched,
        .spill = dyn_spill,
};
