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

#include "kvsim.h"

enum { THRESHOLD, DECAY };
static const struct kv_param dyn_params[] = {
	[THRESHOLD] = {"threshold", 2, 1, INFINITY, .help = "count an object needs to be written", KV_SWEEP(2, 4, 8)},
	[DECAY] = {"decay", 600, 0, INFINITY, .min_open = true, .help = "seconds of trace time per halving"},
	{NULL},
};

/* score = count, valid as of last_t */
static double decayed(const struct kvsim *s, const struct kv_obj *x)
{
	double periods = floor(s->now_t / kv_param(s, DECAY)) - floor(x->last_t / kv_param(s, DECAY));
	return periods > 0 ? x->score / pow(2, periods) : x->score;
}

static void dyn_admitted(struct kvsim *s, uint32_t o)
{
	s->obj[o].score = 1;
}

static void dyn_touched(struct kvsim *s, uint32_t o)
{
	/* called before last_t moves to now: decay from the previous use, then double */
	struct kv_obj *x = &s->obj[o];
	x->score = decayed(s, x) * 2;
	if (x->score > 1e9)
		x->score = 1e9;
}

static bool dyn_spill(struct kvsim *s, uint32_t o)
{
	return decayed(s, &s->obj[o]) >= kv_param(s, THRESHOLD);
}

const struct kv_policy kv_policy_dynamo = {
	.name = "dynamo",
	.params = dyn_params,
	.admitted = dyn_admitted,
	.touched = dyn_touched,
	.spill = dyn_spill,
};
