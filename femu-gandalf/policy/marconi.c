/*
 * marconi.c - "marconi": FLOP-aware eviction for hybrid models (Marconi, Pan et al., MLSys'25).
 *
 * Rule: each cached object has a utility
 *     u = alpha x norm(FLOPs saved per byte) + norm(recency)
 * where FLOPs saved per byte is the tokens it spares recomputing divided by its size (a chunk: its
 * block; a state: the span since the boundary its request hit) and recency is the time of its
 * last use; both are min-max normalized over the tier's objects. DRAM evicts the lowest utility
 * and writes it to SSD (write-back, as the Gandalf paper extends single-tier baselines to two
 * tiers); the SSD evicts its lowest utility. Marconi admits recurrent states only at branch points
 * and at the last token of a sequence; in this simulator states exist only at request boundaries
 * (the last token), so every state passes that filter. Utilities are compared, and min-max
 * normalized, among the 256 least recently used objects of the tier (a sampled eviction, as Redis
 * does; the exact minimum over a million-object tier per eviction would dominate the run time).
 * Parameter alpha (default 1, 0..2).
 */
#include <math.h>
#include <stdlib.h>

#include "kvsim.h"

#define WINDOW 256

struct mc {
	double alpha;
};

static double fpb(const struct kv_obj *x)
{
	return (double)x->recompute_tokens / (double)x->size;
}

/* lowest utility among the WINDOW least recently used objects of the tier */
static uint32_t lowest(struct kvsim *s, int tier)
{
	const struct mc *m = s->pol_state;
	double fmin = INFINITY, fmax = -INFINITY, tmin = INFINITY, tmax = -INFINITY;
	uint32_t tail = tier ? s->stail : s->dtail, o, k, best = tail;
	for (o = tail, k = 0; o != KV_NONE && k < WINDOW; o = tier ? s->obj[o].sprev : s->obj[o].dprev, k++) {
		double f = fpb(&s->obj[o]), t = s->obj[o].last_t;
		fmin = fmin < f ? fmin : f;
		fmax = fmax > f ? fmax : f;
		tmin = tmin < t ? tmin : t;
		tmax = tmax > t ? tmax : t;
	}
	double bu = INFINITY;
	for (o = tail, k = 0; o != KV_NONE && k < WINDOW; o = tier ? s->obj[o].sprev : s->obj[o].dprev, k++) {
		double f = fmax > fmin ? (fpb(&s->obj[o]) - fmin) / (fmax - fmin) : 0;
		double t = tmax > tmin ? (s->obj[o].last_t - tmin) / (tmax - tmin) : 0;
		double u = m->alpha * f + t;
		if (u < bu) {
			bu = u;
			best = o;
		}
	}
	return best;
}

static void mc_make_room(struct kvsim *s, uint64_t need)
{
	while (s->dram_used + need > s->cfg.dram_bytes && s->dhead != KV_NONE) {
		uint32_t v = lowest(s, 0);
		if (!s->obj[v].in_ssd)
			kv_move_to_ssd(s, v);
		else
			kv_drop_dram(s, v);
	}
}

static uint32_t mc_ssd_victim(struct kvsim *s)
{
	return lowest(s, 1);
}

static int mc_init(struct kvsim *s, char *err, size_t errlen)
{
	if (kv_params_check(s, "alpha", err, errlen))
		return -1;
	struct mc *m = calloc(1, sizeof(*m));
	if (!m)
		return snprintf(err, errlen, "out of memory"), -1;
	m->alpha = kv_param(s, "alpha", 1);
	if (m->alpha < 0) {
		free(m);
		return snprintf(err, errlen, "--param alpha must be >= 0"), -1;
	}
	s->pol_state = m;
	return 0;
}

static void mc_fini(struct kvsim *s)
{
	free(s->pol_state);
	s->pol_state = NULL;
}

const struct kv_policy kv_policy_marconi = {
	.name = "marconi",
	.params = "alpha=1",
	.init = mc_init,
	.fini = mc_fini,
	.make_room = mc_make_room,
	.ssd_victim = mc_ssd_victim,
};
