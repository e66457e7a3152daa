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
 * or linear state) crossed with whether it has been used more than once. Within a category the
 * least recently used has the lowest priority, so the minimum is sought among the 256 least
 * recently used objects of the tier (sampled eviction). Parameter tau (seconds, default 600).
 */
#include <math.h>
#include <stdlib.h>

#include "kv_policy.h"

#define WINDOW 256

struct wa {
	double tau;
	double seen[4], reused[4];
	double memo_now, memo_t, memo_decay; /* the last exp() computed: neighbours in LRU order
	                                         often share a last use time (one request) */
};

static int cat(const struct kvsim *s, uint32_t x)
{
	return kv_obj_kind(s, x) * 2 + (kv_obj_refs(s, x) > 1);
}

static double prio(const struct kvsim *s, uint32_t x)
{
	struct wa *w = kv_state(s);
	int c = cat(s, x);
	double p = (w->reused[c] + 1) / (w->seen[c] + 2);
	if (w->memo_now != kv_now(s) || w->memo_t != kv_obj_last_t(s, x)) {
		w->memo_now = kv_now(s);
		w->memo_t = kv_obj_last_t(s, x);
		w->memo_decay = exp(-(kv_now(s) - kv_obj_last_t(s, x)) / w->tau);
	}
	return p * w->memo_decay;
}

static double prio_cb(struct kvsim *s, uint32_t o, void *arg)
{
	(void)arg;
	return prio(s, o);
}

static uint32_t lowest(struct kvsim *s, int tier, int kind)
{
	return kv_tail_min(s, tier, kind, WINDOW, prio_cb, NULL);
}

static uint32_t dram_victim(struct kvsim *s)
{
	return lowest(s, 0, 0);
}

static void wa_make_room(struct kvsim *s, uint64_t need)
{
	kv_make_room_writeback(s, need, dram_victim);
}

static uint32_t wa_ssd_victim(struct kvsim *s, int kind)
{
	return lowest(s, 1, kind);
}

static void wa_admitted(struct kvsim *s, uint32_t o)
{
	struct wa *w = kv_state(s);
	w->seen[cat(s, o)] += 1;
}

static void wa_touched(struct kvsim *s, uint32_t o)
{
	struct wa *w = kv_state(s);
	if (kv_obj_refs(s, o) == 1) /* its first reuse */
		w->reused[cat(s, o)] += 1;
}

enum { TAU };
static const struct kv_param wa_params[] = {
        [TAU] = {"tau", 600, 0, INFINITY, .min_open = true,
                 .help = "seconds of idleness per e-fold of priority", KV_SWEEP(60, 600, 3600)},
        {NULL},
};

static int wa_init(struct kvsim *s, char *err, size_t errlen)
{
	struct wa *w = calloc(1, sizeof(*w));
	if (!w)
		return snprintf(err, errlen, "out of memory"), -1;
	w->tau = kv_param(s, TAU);
	w->memo_now = NAN; /* nothing memoized yet */
	kv_set_state(s, w);
	return 0;
}

static void wa_fini(struct kvsim *s)
{
	free(kv_state(s));
	kv_set_state(s, NULL);
}

const struct kv_policy kv_policy_workload_aware = {
        .name = "workload-aware",
        .params = wa_params,
        .init = wa_init,
        .fini = wa_fini,
        .admitted = wa_admitted,
        .touched = wa_touched,
        .make_room = wa_make_room,
        .ssd_victim = wa_ssd_victim,
};
