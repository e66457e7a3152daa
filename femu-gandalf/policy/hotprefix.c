/*
 * hotprefix.c - HotPrefix (Li et al., "HotPrefix: Hotness-Aware KV Cache Scheduling for Efficient
 * Prefix Sharing in LLM Inference Systems", SIGMOD 2025 / PACMMOD 3(4), the Gandalf paper's
 * baseline [22]), in the two forms we have used.
 *
 * "hotprefix" (the Gandalf paper's rule, Sec. 5.7: "HotPrefix admits a prefix to DRAM only if it
 * has been requested at least K times while DRAM has room, and otherwise only if its frequency
 * times its recency clock beats the coldest DRAM entry; a refused prefix is dropped rather than
 * written to the SSD"). HotPrefix's own selective admission is GPU -> CPU memory; the Gandalf
 * paper moves it to the DRAM tier's admission, and so do we:
 *   - demand: every request demands each block of its prefix and the state at its boundary (a
 *     hybrid hit also demands the state it uses); the policy counts demands per key, cached or
 *     not (a table of every key seen: the count survives the object), and remembers the index
 *     of the last demanding request, the recency clock. hotness = count x (clock + 1).
 *   - admission (the core's admit() gate): a new object enters DRAM when it fits without an
 *     eviction and has been demanded at least `threshold` times (this request included); when
 *     DRAM is full, when its hotness beats the coldest DRAM entry's. A refused object is a miss
 *     that is not cached and never reaches the SSD (for a chunk, the rest of its request's prefix
 *     stays out too: a chunk is cached only below its cached parent).
 *   - eviction: DRAM evicts its coldest entry and writes it to the SSD (the paper's two-tier
 *     extension: an entry reaches the lower tier only when the upper one evicts it); the SSD
 *     evicts its coldest resident of the kind being written.
 *   "The coldest" is the lowest hotness among the 256 least recently used objects of the tier (a
 *   sampled minimum, as marconi and workload-aware take theirs; a parent is demanded whenever its
 *   child is, so the coldest is a leaf up to ties). Parameter threshold (default 2, 1..inf;
 *   swept 1..10).
 *
 * "hotprefix-ssd" (our earlier reading, kept for comparison): every object enters DRAM; an
 * object leaving DRAM (by LRU) is written to SSD only if it has been used at least `threshold`
 * times (admission + hits since it entered the cache); when the SSD is full, it replaces the SSD
 * resident used least often, and only if it is hotter than that resident (else it is dropped).
 * The SSD evicts its least-used resident. Parameter threshold (default 2, 1..inf; swept 1..10).
 */
#include <math.h>

#include "kv_policy.h"
#include "pheap.h"
#include "u64map.h"

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

const struct kv_policy kv_policy_hotprefix_ssd = {
        .name = "hotprefix-ssd",
        .params = hp_params,
        .init = hp_init,
        .fini = hp_fini,
        .spill = hp_spill,
        .ssd_victim = hp_ssd_victim,
};

/* ---- hotprefix: the DRAM admission gate ---- */

#define HP_WINDOW 256                 /* the sampled coldest: this many LRU-tail objects */
#define HP_CLOCK_BITS 40              /* a demand table value: count << 40 | last request */
#define HP_COUNT_MAX ((1u << 23) - 1) /* counts saturate (the value never reaches UINT64_MAX) */

struct hpa {
	double threshold;
	struct u64map demand; /* key -> count << HP_CLOCK_BITS | index of the last demanding request */
	uint64_t state_key;   /* the state at the current request's boundary (demanded at begin) */
};

static int hpa_init(struct kvsim *s, char *err, size_t errlen)
{
	struct hpa *h = calloc(1, sizeof(*h));
	if (!h || u64map_init(&h->demand, 1 << 16)) {
		free(h);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	h->threshold = kv_param(s, THRESHOLD);
	h->state_key = KV_NO_PARENT;
	kv_set_state(s, h);
	return 0;
}

static void hpa_fini(struct kvsim *s)
{
	struct hpa *h = kv_state(s);
	if (h)
		u64map_free(&h->demand);
	free(h);
	kv_set_state(s, NULL);
}

static double hotness(uint64_t v)
{
	if (v == U64MAP_EMPTY)
		return 0;
	uint64_t clock = v & ((1ull << HP_CLOCK_BITS) - 1);
	return (double)(v >> HP_CLOCK_BITS) * (double)(clock + 1);
}

static uint64_t demands(const struct hpa *h, uint64_t key)
{
	uint64_t v = u64map_get(&h->demand, key);
	return v == U64MAP_EMPTY ? 0 : v >> HP_CLOCK_BITS;
}

/* one more demand of key by the current request (counted once per request) */
static void demand(struct kvsim *s, struct hpa *h, uint64_t key)
{
	uint64_t clock = kv_req(s) & ((1ull << HP_CLOCK_BITS) - 1);
	uint64_t *v = u64map_upsert(&h->demand, key, (uint64_t)1 << HP_CLOCK_BITS | clock);
	if (!v)
		return; /* out of memory: the key stays uncounted (it looks cold) */
	uint64_t n = *v >> HP_CLOCK_BITS, last = *v & ((1ull << HP_CLOCK_BITS) - 1);
	if (last == clock)
		return; /* new (count 1), or counted already for this request */
	*v = (n < HP_COUNT_MAX ? n + 1 : n) << HP_CLOCK_BITS | clock;
}

/* the object's hotness, cached in its scratch (kept current at admission and every use) */
static double *hot(const struct kvsim *s, uint32_t o)
{
	return kv_obj_scratch(s, o);
}

static void hpa_begin(struct kvsim *s)
{
	struct hpa *h = kv_state(s);
	const struct kv_request *rq = kv_request_cur(s);
	h->state_key = KV_NO_PARENT;
	if (!rq)
		return;
	for (uint32_t i = 0; i < rq->nblocks; i++)
		demand(s, h, rq->blocks[i]);
	if (kv_hybrid(s)) {
		uint32_t bnd = rq->block_tokens ? rq->input_tokens / rq->block_tokens : rq->nblocks;
		if (bnd > rq->nblocks)
			bnd = rq->nblocks;
		if (bnd) {
			h->state_key = rq->blocks[bnd - 1] | KV_LINEAR_BIT;
			demand(s, h, h->state_key);
		}
	}
}

static void hpa_admitted(struct kvsim *s, uint32_t o)
{
	struct hpa *h = kv_state(s);
	*hot(s, o) = hotness(u64map_get(&h->demand, kv_obj_key(s, o)));
}

static void hpa_touched(struct kvsim *s, uint32_t o)
{
	struct hpa *h = kv_state(s);
	uint64_t key = kv_obj_key(s, o);
	if (kv_obj_kind(s, o) == OBJ_LINEAR)
		demand(s, h, key); /* a state a hit used (the boundary's was counted at begin) */
	*hot(s, o) = hotness(u64map_get(&h->demand, key));
}

static double hot_score(struct kvsim *s, uint32_t o, void *arg)
{
	(void)arg;
	return *hot(s, o);
}

static uint32_t coldest_dram(struct kvsim *s)
{
	return kv_tail_min(s, 0, 0, HP_WINDOW, hot_score, NULL);
}

static bool hpa_admit(struct kvsim *s, uint64_t key, int kind, uint64_t size)
{
	(void)kind;
	struct hpa *h = kv_state(s);
	if (!kv_dram_over(s, size))
		return (double)demands(h, key) >= h->threshold;
	uint32_t c = coldest_dram(s);
	return c == KV_NONE || hotness(u64map_get(&h->demand, key)) > *hot(s, c);
}

static void hpa_make_room(struct kvsim *s, uint64_t need)
{
	kv_make_room_writeback(s, need, coldest_dram);
}

static uint32_t hpa_ssd_victim(struct kvsim *s, int kind)
{
	return kv_tail_min(s, 1, kind, HP_WINDOW, hot_score, NULL);
}

const struct kv_policy kv_policy_hotprefix = {
        .name = "hotprefix",
        .params = hp_params,
        .obj_bytes = sizeof(double),
        .init = hpa_init,
        .fini = hpa_fini,
        .begin = hpa_begin,
        .admit = hpa_admit,
        .admitted = hpa_admitted,
        .touched = hpa_touched,
        .make_room = hpa_make_room,
        .ssd_victim = hpa_ssd_victim,
};
