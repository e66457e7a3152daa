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

struct bounds {
	double alpha, fmin, fmax, tmin, tmax;
};

static double bound(struct kvsim *s, uint32_t o, void *arg)
{
	struct bounds *b = arg;
	double f = fpb(&s->obj[o]), t = s->obj[o].last_t;
	b->fmin = b->fmin < f ? b->fmin : f;
	b->fmax = b->fmax > f ? b->fmax : f;
	b->tmin = b->tmin < t ? b->tmin : t;
	b->tmax = b->tmax > t ? b->tmax : t;
	return 0;
}

static double utility(struct kvsim *s, uint32_t o, void *arg)
{
	const struct bounds *b = arg;
	double f = b->fmax > b->fmin ? (fpb(&s->obj[o]) - b->fmin) / (b->fmax - b->fmin) : 0;
	double t = b->tmax > b->tmin ? (s->obj[o].last_t - b->tmin) / (b->tmax - b->tmin) : 0;
	return b->alpha * f + t;
}

/* lowest utility among the WINDOW least recently used objects of the tier, normalized there */
static uint32_t lowest(struct kvsim *s, int tier)
{
	struct bounds b = {((struct mc *)s->pol_state)->alpha, INFINITY, -INFINITY, INFINITY, -INFINITY};
	kv_tail_min(s, tier, WINDOW, bound, &b);
	return kv_tail_min(s, tier, WINDOW, utility, &b);
}

static uint32_t dram_victim(struct kvsim *s)
{
	return lowest(s, 0);
}

static void mc_make_room(struct kvsim *s, uint64_t need)
{
	kv_make_room_writeback(s, need, dram_victim);
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
