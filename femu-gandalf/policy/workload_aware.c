/*
 * workload_aware.c - "workload-aware": reuse-probability eviction from "KVCache Cache in the Wild"
 * (Wang et al., USENIX ATC'25), on two tiers.
 *
 * Rule: the priority of an object is p(category) x exp(-idle / tau): the probability that an
 * object of its category is reused, learned online as (objects of the category reused at least
 * once) / (objects of the category seen), times a decay in the time since its last use. DRAM
 * evicts the lowest priority and writes it to SSD (write-back); the SSD evicts its lowest. The
 * paper's categories are request types (text, file, search, multimodal...) and turn positions; our
 * traces do not carry the type except Bailian's, so the category is the object kind (full chunk
 * or linear state) crossed with whether its session has had more than one turn. Priorities are
 * computed once per request when it first needs room. Parameter tau (seconds, default 600).
 */
#include <math.h>

#include "kvsim.h"
#include "pheap.h"

struct wa {
	double tau;
	double seen[4], reused[4];
	uint64_t built[2];
	struct pheap order[2];
};

static int cat(const struct kv_obj *x)
{
	return x->kind * 2 + (x->refs > 1);
}

static double prio(const struct kvsim *s, const struct kv_obj *x)
{
	const struct wa *w = s->pol_state;
	int c = cat(x);
	double p = (w->reused[c] + 1) / (w->seen[c] + 2);
	return p * exp(-(s->now_t - x->last_t) / w->tau);
}

static void build(struct kvsim *s, int tier)
{
	struct wa *w = s->pol_state;
	w->order[tier].n = 0;
	w->built[tier] = s->req;
	for (uint32_t o = tier ? s->shead : s->dhead; o != KV_NONE; o = tier ? s->obj[o].snext : s->obj[o].dnext)
		pheap_push(&w->order[tier], prio(s, &s->obj[o]), o);
}

static uint32_t lowest(struct kvsim *s, int tier)
{
	struct wa *w = s->pol_state;
	for (int tries = 0; tries < 2; tries++) {
		if (w->built[tier] != s->req || !w->order[tier].n)
			build(s, tier);
		while (w->order[tier].n) {
			uint32_t o = pheap_pop(&w->order[tier]).o;
			if (tier ? s->obj[o].in_ssd : s->obj[o].in_dram)
				return o;
		}
		w->built[tier] = UINT64_MAX;
	}
	return tier ? s->stail : s->dtail;
}

static void wa_make_room(struct kvsim *s, uint64_t need)
{
	while (s->dram_used + need > s->cfg.dram_bytes && s->dhead != KV_NONE) {
		uint32_t v = lowest(s, 0);
		if (!s->obj[v].in_ssd)
			kv_move_to_ssd(s, v);
		else
			kv_drop_dram(s, v);
	}
}

static uint32_t wa_ssd_victim(struct kvsim *s)
{
	return lowest(s, 1);
}

static void wa_admitted(struct kvsim *s, uint32_t o)
{
	struct wa *w = s->pol_state;
	w->seen[cat(&s->obj[o])] += 1;
}

static void wa_touched(struct kvsim *s, uint32_t o)
{
	struct wa *w = s->pol_state;
	if (s->obj[o].refs == 1) /* its first reuse */
		w->reused[cat(&s->obj[o])] += 1;
}

static int wa_init(struct kvsim *s, char *err, size_t errlen)
{
	if (kv_params_check(s, "tau", err, errlen))
		return -1;
	struct wa *w = calloc(1, sizeof(*w));
	if (!w)
		return snprintf(err, errlen, "out of memory"), -1;
	w->tau = kv_param(s, "tau", 600);
	w->built[0] = w->built[1] = UINT64_MAX;
	if (w->tau <= 0) {
		free(w);
		return snprintf(err, errlen, "--param tau must be > 0"), -1;
	}
	s->pol_state = w;
	return 0;
}

static void wa_fini(struct kvsim *s)
{
	struct wa *w = s->pol_state;
	if (w) {
		pheap_free(&w->order[0]);
		pheap_free(&w->order[1]);
	}
	free(w);
	s->pol_state = NULL;
}

const struct kv_policy kv_policy_workload_aware = {
	.name = "workload-aware",
	.params = "tau=600",
	.init = wa_init,
	.fini = wa_fini,
	.admitted = wa_admitted,
	.touched = wa_touched,
	.make_room = wa_make_room,
	.ssd_victim = wa_ssd_victim,
};
