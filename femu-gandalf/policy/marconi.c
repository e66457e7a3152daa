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
 * (the last token), so every state passes that filter. Utilities are computed once per request,
 * when the request first needs room, over all objects of the tier, and used in ascending order
 * for its evictions. Parameter alpha (default 1, 0..2).
 */
#include <math.h>

#include "kvsim.h"
#include "pheap.h"

struct mc {
	double alpha;
	uint64_t built[2];
	struct pheap order[2]; /* [0] DRAM, [1] SSD */
};

static double fpb(const struct kv_obj *x)
{
	return (double)x->recompute_tokens / (double)x->size;
}

static void build(struct kvsim *s, int tier)
{
	struct mc *m = s->pol_state;
	double fmin = INFINITY, fmax = -INFINITY, tmin = INFINITY, tmax = -INFINITY;
	uint32_t head = tier ? s->shead : s->dhead;
	m->order[tier].n = 0;
	m->built[tier] = s->req;
	for (uint32_t o = head; o != KV_NONE; o = tier ? s->obj[o].snext : s->obj[o].dnext) {
		double f = fpb(&s->obj[o]), t = s->obj[o].last_t;
		fmin = fmin < f ? fmin : f;
		fmax = fmax > f ? fmax : f;
		tmin = tmin < t ? tmin : t;
		tmax = tmax > t ? tmax : t;
	}
	for (uint32_t o = head; o != KV_NONE; o = tier ? s->obj[o].snext : s->obj[o].dnext) {
		double f = fmax > fmin ? (fpb(&s->obj[o]) - fmin) / (fmax - fmin) : 0;
		double t = tmax > tmin ? (s->obj[o].last_t - tmin) / (tmax - tmin) : 0;
		pheap_push(&m->order[tier], m->alpha * f + t, o);
	}
}

static uint32_t lowest(struct kvsim *s, int tier)
{
	struct mc *m = s->pol_state;
	for (int tries = 0; tries < 2; tries++) {
		if (m->built[tier] != s->req || !m->order[tier].n)
			build(s, tier);
		while (m->order[tier].n) {
			uint32_t o = pheap_pop(&m->order[tier]).o;
			if (tier ? s->obj[o].in_ssd : s->obj[o].in_dram)
				return o;
		}
		m->built[tier] = UINT64_MAX; /* all consumed: rebuild once with what is left */
	}
	return tier ? s->stail : s->dtail;
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
	m->built[0] = m->built[1] = UINT64_MAX;
	if (m->alpha < 0) {
		free(m);
		return snprintf(err, errlen, "--param alpha must be >= 0"), -1;
	}
	s->pol_state = m;
	return 0;
}

static void mc_fini(struct kvsim *s)
{
	struct mc *m = s->pol_state;
	if (m) {
		pheap_free(&m->order[0]);
		pheap_free(&m->order[1]);
	}
	free(m);
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
