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

#include "kv_policy.h"

#define WINDOW 256

struct mc {
	double alpha;
};

static double fpb(const struct kvsim *s, uint32_t x)
{
	return (double)kv_obj_recompute_tokens(s, x) / (double)kv_obj_size(s, x);
}

/* The lowest utility among the WINDOW least recently used objects of the tier, normalized over
 * them. One walk of the list (a pointer chase) gathers them; the second pass reads the copy. */
static uint32_t lowest(struct kvsim *s, int tier, int kind)
{
	double alpha = ((struct mc *)kv_state(s))->alpha;
	double f[WINDOW], t[WINDOW], fmin = INFINITY, fmax = -INFINITY, tmin = INFINITY,
	                             tmax = -INFINITY;
	uint32_t os[WINDOW], tail = tier ? kv_ssd_tail(s, kind) : kv_dram_tail(s), best = tail;
	int n = 0;
	for (uint32_t o = tail; o != KV_NONE && n < WINDOW;
	     o = tier ? kv_ssd_prev(s, o) : kv_dram_prev(s, o), n++) {
		os[n] = o;
		f[n] = fpb(s, o);
		t[n] = kv_obj_last_t(s, o);
		fmin = fmin < f[n] ? fmin : f[n];
		fmax = fmax > f[n] ? fmax : f[n];
		tmin = tmin < t[n] ? tmin : t[n];
		tmax = tmax > t[n] ? tmax : t[n];
	}
	double bu = INFINITY;
	for (int i = 0; i < n; i++) {
		double fu = fmax > fmin ? (f[i] - fmin) / (fmax - fmin) : 0;
		double tu = tmax > tmin ? (t[i] - tmin) / (tmax - tmin) : 0;
		double u = alpha * fu + tu;
		if (u < bu) {
			bu = u;
			best = os[i];
		}
	}
	return best;
}

static uint32_t dram_victim(struct kvsim *s)
{
	return lowest(s, 0, 0);
}

static void mc_make_room(struct kvsim *s, uint64_t need)
{
	kv_make_room_writeback(s, need, dram_victim);
}

static uint32_t mc_ssd_victim(struct kvsim *s, int kind)
{
	return lowest(s, 1, kind);
}

enum { ALPHA };
static const struct kv_param mc_params[] = {
        [ALPHA] = {"alpha", 1, 0, INFINITY, .help = "weight of FLOPs saved against recency",
                   KV_SWEEP(0, 0.25, 0.5, 1, 1.5, 2)},
        {NULL},
};

static int mc_init(struct kvsim *s, char *err, size_t errlen)
{
	struct mc *m = calloc(1, sizeof(*m));
	if (!m)
		return snprintf(err, errlen, "out of memory"), -1;
	m->alpha = kv_param(s, ALPHA);
	kv_set_state(s, m);
	return 0;
}

static void mc_fini(struct kvsim *s)
{
	free(kv_state(s));
	kv_set_state(s, NULL);
}

const struct kv_policy kv_policy_marconi = {
        .name = "marconi",
        .params = mc_params,
        .init = mc_init,
        .fini = mc_fini,
        .make_room = mc_make_room,
        .ssd_victim = mc_ssd_victim,
};
