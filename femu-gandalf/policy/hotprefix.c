/*
 * hotprefix.c - "hotprefix": frequency-gated SSD admission with replacement of the coldest entry.
 *
 * Rule: an object leaving DRAM (by LRU) is written to SSD only if it has been used at least
 * `threshold` times; when the SSD is full, it replaces the SSD resident used least often, and only
 * if it is hotter than that resident (else it is dropped). The SSD evicts its least-used resident.
 * Source: HotPrefix (the Gandalf paper's baseline [22]), whose GPU -> DRAM admission we apply to
 * DRAM -> SSD as the paper's evaluation does; "hotness" is the object's use count (admission +
 * hits) since it entered the cache. Parameter threshold (default 2, 1..10).
 */
#include <math.h>

#include "kv_policy.h"
#include "pheap.h"

struct hp {
	double threshold;
	struct pheap cold[2]; /* SSD residents by use count, per kind */
};

enum { THRESHOLD };
static const struct kv_param hp_params[] = {
        [THRESHOLD] = {"threshold", 2, 1, INFINITY, .help = "uses before an object is written",
                       KV_SWEEP(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
        {NULL},
};

static int hp_init(struct kvsim *s, char *err, size_t errlen)
{
	struct hp *h = calloc(1, sizeof(*h));
	if (!h)
		return snprintf(err, errlen, "out of memory"), -1;
	h->threshold = kv_param(s, THRESHOLD);
	kv_set_state(s, h);
	return 0;
}

static void hp_fini(struct kvsim *s)
{
	struct hp *h = kv_state(s);
	if (h) {
		pheap_free(&h->cold[0]);
		pheap_free(&h->cold[1]);
	}
	free(h);
	kv_set_state(s, NULL);
}

/* the least-used SSD resident of a kind (lazy: entries whose count changed are re-keyed) */
static uint32_t coldest(struct kvsim *s, int kind, bool pop)
{
	struct pheap *c = &((struct hp *)kv_state(s))->cold[kind];
	while (c->n) {
		struct pent e = c->a[0];
		if (!kv_obj_in_ssd(s, e.o) || kv_obj_kind(s, e.o) != kind) {
			pheap_pop(c);
			continue;
		}
		if ((double)kv_obj_refs(s, e.o) != e.key) {
			pheap_pop(c);
			pheap_push(c, kv_obj_refs(s, e.o), e.o);
			continue;
		}
		if (pop)
			pheap_pop(c);
		return e.o;
	}
	return KV_NONE;
}

static bool hp_spill(struct kvsim *s, uint32_t o)
{
	struct hp *h = kv_state(s);
	if (kv_obj_refs(s, o) < h->threshold)
		return false;
	if (!kv_ssd_shortfall(s, o))
		goto admit;
	uint32_t c = coldest(s, kv_obj_kind(s, o), false);
	if (c != KV_NONE && kv_obj_refs(s, c) >= kv_obj_refs(s, o))
		return false; /* not hotter than the coldest resident */
admit:
	pheap_push(&h->cold[kv_obj_kind(s, o)], kv_obj_refs(s, o), o);
	return true;
}

static uint32_t hp_ssd_victim(struct kvsim *s, int kind)
{
	uint32_t c = coldest(s, kind, true);
	return c != KV_NONE ? c : kv_ssd_tail(s, kind);
}

const struct kv_policy kv_policy_hotprefix = {
        .name = "hotprefix",
        .params = hp_params,
        .init = hp_init,
        .fini = hp_fini,
        .spill = hp_spill,
        .ssd_victim = hp_ssd_victim,
};
