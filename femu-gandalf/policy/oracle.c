/*
 * oracle.c - "oracle": offline, knows the future (the Gandalf paper's Sec. 3.2).
 *
 * Before the run, one pass over the trace records, for every chunk and every state, the requests
 * that will use it: a chunk is used by every request whose prefix holds its block; a state is used
 * by a later request when it is the longest state already created (at an earlier request's
 * boundary) along that request's prefix: a newer state supersedes it. During the run:
 *   - DRAM evicts by Belady: the object whose next use is farthest away (never = infinitely far);
 *   - an object leaving DRAM is written to SSD only when its remaining uses pay for it:
 *       uses x recompute(x) > fee x size(x) + replacement,
 *     where replacement is the recompute value of the remaining uses of the SSD residents of its
 *     kind with the fewest remaining uses that must go to make room (0 while a slot of its class
 *     is free; a slot is refilled from its own class, docs/kv.md); otherwise it is dropped.
 *     Those residents are then the SSD victims.
 * Priority queues are lazy: an entry records the key it was pushed with and is skipped when the
 * object's current key differs. Future uses are counted in requests, so the oracle is exact
 * about *whether* an object is needed again, not about whether the hit would have used it (a
 * state may be superseded by a longer one): an approximation of the optimum, which is
 * NP-hard with sizes and two tiers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kv_policy.h"
#include "pheap.h"
#include "u64map.h"
#include "vec.h"

struct fut {
	struct u64map slot; /* key -> slot (sized by distinct keys, not references) */
	/* per slot: its uses are uses[off, off + n), request indices, ascending; pos is the first
	 * one not yet passed (requests only move forward) */
	struct ulist {
		uint64_t off;
		uint32_t n, pos;
	} * ul;
	uint64_t nslot, slotcap;
	uint32_t *uses;
};

#define NO_FUTURE (UINT32_MAX - 1) /* no slot: a key no request uses */

struct ostate {
	struct fut *f;
	double gpu_per_token, fee;
	struct pheap dram; /* max next use (stored negated: min-heap) */
	struct pheap
	        ssd[2]; /* min remaining uses, per kind (a slot class is refilled from itself) */
	uint64_t *orphaned; /* keys of parents that lost a child: re-keyed before the next choice */
	uint64_t norph, orphcap;
};

static uint32_t fut_find(const struct fut *f, uint64_t key)
{
	uint64_t v = u64map_get(&f->slot, key);
	return v == U64MAP_EMPTY ? UINT32_MAX : (uint32_t)v;
}

/* The key's slot, added (with a use count of 0) if new. UINT32_MAX when out of memory. */
static uint32_t fut_add(struct fut *f, uint64_t key)
{
	if (f->nslot >= UINT32_MAX - 2)
		return UINT32_MAX;
	uint64_t *v = u64map_upsert(&f->slot, key, f->nslot);
	if (!v)
		return UINT32_MAX;
	if (*v != f->nslot) /* there already */
		return (uint32_t)*v;
	if (vec_reserve(f->ul, f->slotcap, f->nslot + 1)) {
		u64map_del(&f->slot, key);
		return UINT32_MAX;
	}
	f->ul[f->nslot] = (struct ulist){0, 0, 0};
	return (uint32_t)f->nslot++;
}

static void oracle_unprepare(void *p)
{
	struct fut *f = p;
	if (!f)
		return;
	u64map_free(&f->slot);
	free(f->ul);
	free(f->uses);
	free(f);
}

/* Where requests' ids are stored: the loader's buffers (shared by the requests of a session), or
 * else each request's own array. Sorted by address, to find a request's. */
struct seg {
	uintptr_t lo;
	uint64_t n, base; /* ids; the first one's index in the slot array */
};

static int seg_cmp(const void *a, const void *b)
{
	uintptr_t x = ((const struct seg *)a)->lo, y = ((const struct seg *)b)->lo;
	return x < y ? -1 : x > y;
}

/* index in the slot array of the request's first id */
static uint64_t seg_base(const struct seg *sg, uint64_t nseg, const uint64_t *ids)
{
	uintptr_t p = (uintptr_t)ids;
	uint64_t lo = 0, hi = nseg; /* the last segment starting at or before p */
	while (hi - lo > 1) {
		uint64_t mid = (lo + hi) / 2;
		if (sg[mid].lo <= p)
			lo = mid;
		else
			hi = mid;
	}
	return sg[lo].base + (p - sg[lo].lo) / sizeof(uint64_t);
}

/* oracle_prepare()'s working state: the trace, the result, and the per-id and per-request
 * arrays its two passes share. */
struct prep {
	const struct kv_trace *kt;
	struct fut *f;
	struct seg *sg; /* the id arrays, by address */
	uint64_t nseg;
	uint32_t *sl;    /* per stored id: its slot */
	uint32_t *state; /* per request: the slot of the state it may use, or NO_FUTURE */
	uint32_t *nch;   /* per request: the chunks it may hit */
};

/* Collect the id arrays into p->sg, sorted by address, and give each its base in the slot
 * array. Returns the number of stored ids. */
static uint64_t seg_build(struct prep *p)
{
	const struct kv_trace *kt = p->kt;
	struct seg *sg = p->sg;
	uint64_t nseg = 0, total = 0;
	for (uint64_t k = 0; k < (kt->nbufs ? kt->nbufs : kt->n); k++) {
		const uint64_t *ids = kt->nbufs ? kt->bufs[k] : kt->rq[k].blocks;
		uint64_t n = kt->nbufs ? kt->buflen[k] : kt->rq[k].nblocks;
		if (n)
			sg[nseg++] = (struct seg){(uintptr_t)ids, n, 0};
	}
	qsort(sg, nseg, sizeof(*sg), seg_cmp);
	uint64_t m = 0; /* merge requests that share an array (a caller's own trace) */
	for (uint64_t k = 0; k < nseg; k++) {
		if (m && sg[m - 1].lo == sg[k].lo) {
			sg[m - 1].n = sg[k].n > sg[m - 1].n ? sg[k].n : sg[m - 1].n;
			continue;
		}
		sg[m++] = sg[k];
	}
	p->nseg = m;
	for (uint64_t k = 0; k < m; k++) {
		sg[k].base = total;
		total += sg[k].n;
	}
	return total;
}

/* Hash every stored id once: p->sl[] gets its slot. -1 when out of memory. */
static int seg_slots(struct prep *p)
{
	for (uint64_t k = 0; k < p->nseg; k++)
		for (uint64_t j = 0; j < p->sg[k].n; j++)
			if ((p->sl[p->sg[k].base + j] = fut_add(
			             p->f, ((const uint64_t *)p->sg[k].lo)[j])) == UINT32_MAX)
				return -1;
	return 0;
}

/* the slots of the request's ids (NULL when it has none) */
static const uint32_t *req_slots(const struct prep *p, const struct kv_request *rq)
{
	return rq->nblocks ? p->sl + seg_base(p->sg, p->nseg, rq->blocks) : NULL;
}

/*
 * Count the uses of every key. A state is used by a later request when it is the longest state
 * created so far (at an earlier boundary) on its prefix; chunks by every request whose prefix
 * holds them, for a hybrid model only up to that state (no hit can reach past it, whatever is
 * cached). Fills p->state and p->nch. -1 when out of memory.
 */
static int count_uses(struct prep *p, bool hybrid)
{
	struct fut *f = p->f;
	struct u64map bset = {0}; /* boundaries (states) created so far: block id -> 0 */
	int rc = -1;
	for (uint64_t i = 0; i < p->kt->n; i++) {
		const struct kv_request *rq = &p->kt->rq[i];
		const uint32_t *rs = req_slots(p, rq);
		uint32_t b = rq->nblocks;
		while (b > 0 && u64map_get(&bset, rq->blocks[b - 1]) == U64MAP_EMPTY)
			b--;
		p->nch[i] = hybrid ? b : rq->nblocks;
		for (uint32_t j = 0; j < p->nch[i]; j++)
			f->ul[rs[j]].n++;
		p->state[i] = b ? fut_add(f, rq->blocks[b - 1] | KV_LINEAR_BIT) : NO_FUTURE;
		if (p->state[i] == UINT32_MAX)
			goto out;
		if (b)
			f->ul[p->state[i]].n++;
		uint32_t bnd = rq->block_tokens ? (uint32_t)(rq->input_tokens / rq->block_tokens)
		                                : rq->nblocks;
		if (bnd > rq->nblocks)
			bnd = rq->nblocks;
		if (bnd > 0 && u64map_put(&bset, rq->blocks[bnd - 1], 0))
			goto out;
	}
	rc = 0;
out:
	u64map_free(&bset);
	return rc;
}

/* Lay out each slot's uses by the counts, then record them, using pos as the fill count (rewound
 * by oracle_init). -1 when out of memory. */
static int record_uses(struct prep *p)
{
	struct fut *f = p->f;
	uint64_t nuses = 0;
	for (uint64_t s = 0; s < f->nslot; s++) {
		f->ul[s].off = nuses;
		nuses += f->ul[s].n;
	}
	if (!(f->uses = malloc((nuses + 1) * sizeof(uint32_t))))
		return -1;
	for (uint64_t i = 0; i < p->kt->n; i++) {
		const uint32_t *rs = req_slots(p, &p->kt->rq[i]);
		for (uint32_t j = 0; j < p->nch[i]; j++) {
			struct ulist *u = &f->ul[rs[j]];
			f->uses[u->off + u->pos++] = (uint32_t)i;
		}
		if (p->state[i] != NO_FUTURE) {
			struct ulist *u = &f->ul[p->state[i]];
			f->uses[u->off + u->pos++] = (uint32_t)i;
		}
	}
	return 0;
}

/* Count the uses of every key, then record them. Each stored id is hashed once (most ids of an
 * agentic trace are repeats of a stored prefix); a request's state is looked up once. */
static void *oracle_prepare(const struct kv_trace *kt, const struct kv_config *c, char *err,
                            size_t errlen)
{
	const bool hybrid = c->model.linear_state_bytes > 0;
	uint64_t nreq = kt->n;
	struct prep p = {
	        .kt = kt,
	        .f = calloc(1, sizeof(*p.f)),
	        .sg = malloc(((kt->nbufs ? kt->nbufs : kt->n) + 1) * sizeof(*p.sg)),
	        .state = malloc((nreq + 1) * sizeof(uint32_t)),
	        .nch = malloc((nreq + 1) * sizeof(uint32_t)),
	};
	struct fut *f = p.f;
	if (!p.f || !p.sg || !p.state || !p.nch)
		goto oom;
	if (nreq >= UINT32_MAX) {
		snprintf(err, errlen, "oracle: too many requests");
		goto fail;
	}
	uint64_t total = seg_build(&p);
	if (!(p.sl = malloc((total + 1) * sizeof(uint32_t))) || seg_slots(&p) ||
	    count_uses(&p, hybrid) || record_uses(&p))
		goto oom;
	goto done;
oom:
	snprintf(err, errlen, "oracle: out of memory");
fail:
	oracle_unprepare(f);
	f = NULL;
done:
	free(p.sg);
	free(p.sl);
	free(p.state);
	free(p.nch);
	return f;
}

/* uses of o after the current request: count, and the next one (UINT32_MAX when none). The
 * object caches its key's slot in its scratch, so only its first call hashes. */
static uint64_t future(struct kvsim *s, uint32_t o, uint32_t *next)
{
	struct fut *f = ((struct ostate *)kv_state(s))->f;
	uint32_t *cached = kv_obj_scratch(s, o); /* slot + 1; 0: not looked up yet */
	if (!*cached) {
		uint32_t slot = fut_find(f, kv_obj_key(s, o));
		*cached = 1 + (slot == UINT32_MAX ? NO_FUTURE : slot);
	}
	uint32_t slot = *cached - 1;
	*next = UINT32_MAX;
	if (slot == NO_FUTURE)
		return 0;
	struct ulist *l = &f->ul[slot];
	const uint32_t *u = f->uses + l->off;
	uint32_t lo = l->pos;
	while (lo < l->n && u[lo] <= kv_req(s)) /* amortized O(1): requests only advance */
		lo++;
	l->pos = lo;
	if (lo < l->n)
		*next = u[lo];
	return l->n - lo;
}

/*
 * A hybrid hit ends at a state, so a chunk with nothing cached below it (no chunk, no state) can
 * serve no request: whatever passes through it misses from an earlier state on. It is worth
 * nothing, whatever its future uses, until a state is admitted below it (which happens only when
 * a request admits it again). The current request's own chunks get their state last.
 */
static bool orphan(const struct kvsim *s, uint32_t o)
{
	return kv_cfg(s)->model.linear_state_bytes && kv_obj_kind(s, o) == OBJ_FULL &&
	       !kv_obj_nchild(s, o) && kv_obj_last_req(s, o) != kv_req(s);
}

/* future() as it matters for a hit: an orphan has no use */
static uint64_t useful(struct kvsim *s, uint32_t o, uint32_t *next)
{
	if (orphan(s, o)) {
		*next = UINT32_MAX;
		return 0;
	}
	return future(s, o, next);
}

static double dram_key(struct kvsim *s, uint32_t o)
{
	uint32_t next;
	useful(s, o, &next);
	return -(double)next; /* farthest next use on top */
}

static double ssd_key(struct kvsim *s, uint32_t o)
{
	uint32_t next;
	return (double)useful(s, o, &next);
}

/* Rebuild a lazy heap from the live objects when stale entries outnumber them (tier 1 + kind:
 * the SSD heap of that kind). */
static void compact(struct kvsim *s, int tier)
{
	struct ostate *g = kv_state(s);
	struct pheap *h = tier ? &g->ssd[tier - 1] : &g->dram;
	h->n = 0;
	for (uint32_t o = tier ? kv_ssd_head(s, tier - 1) : kv_dram_head(s); o != KV_NONE;
	     o = tier ? kv_ssd_next(s, o) : kv_dram_next(s, o))
		pheap_push(h, tier ? ssd_key(s, o) : dram_key(s, o), o);
}

static void requeue(struct kvsim *s, uint32_t o)
{
	struct ostate *g = kv_state(s);
	if (g->dram.n > 64 + 4 * (size_t)kv_nobj(s))
		compact(s, 0);
	for (int k = 0; k < 2; k++)
		if (g->ssd[k].n > 64 + 4 * (size_t)kv_nobj(s))
			compact(s, 1 + k);
	if (kv_obj_in_dram(s, o))
		pheap_push(&g->dram, dram_key(s, o), o);
	if (kv_obj_in_ssd(s, o))
		pheap_push(&g->ssd[kv_obj_kind(s, o)], ssd_key(s, o), o);
}

static double worth(const struct kvsim *s, uint32_t o, uint64_t uses)
{
	struct ostate *g = kv_state(s);
	return (double)uses * kv_obj_recompute_tokens(s, o) * g->gpu_per_token;
}

/* SSD victims of x's kind with the fewest remaining uses until x fits; their lost value */
static double ssd_replacement(struct kvsim *s, uint32_t x, uint32_t *vict, size_t *nv, size_t maxv)
{
	struct ostate *g = kv_state(s);
	struct pheap *h = &g->ssd[kv_obj_kind(s, x)];
	uint64_t need = kv_ssd_shortfall(s, x), freed = 0;
	double cost = 0;
	struct pent held[4096];
	size_t nh = 0;
	*nv = 0;
	while (freed < need && h->n && nh < 4096 && *nv < maxv) {
		struct pent e = pheap_pop(h);
		if (!kv_obj_in_ssd(s, e.o) || kv_obj_kind(s, e.o) != kv_obj_kind(s, x))
			continue;
		if (ssd_key(s, e.o) != e.key) { /* a use passed without a touch: re-key it */
			pheap_push(h, ssd_key(s, e.o), e.o);
			continue;
		}
		held[nh++] = e;
		vict[(*nv)++] = e.o;
		freed += kv_obj_slot_bytes(s, e.o);
		cost += worth(s, e.o, (uint64_t)e.key);
	}
	for (size_t i = 0; i < nh; i++)
		pheap_push(h, held[i].key, held[i].o);
	return freed >= need ? cost : INFINITY;
}

/* Parents that lost a child may have become orphans: queue them with their new keys (the
 * removed() hook runs before the child is unlinked, so this waits for the next decision). */
static void requeue_orphaned(struct kvsim *s)
{
	struct ostate *g = kv_state(s);
	for (size_t i = 0; i < g->norph; i++) {
		uint32_t p = kv_lookup(s, g->orphaned[i]);
		if (p != KV_NONE && orphan(s, p))
			requeue(s, p);
	}
	g->norph = 0;
}

static void oracle_removed(struct kvsim *s, uint32_t o)
{
	struct ostate *g = kv_state(s);
	uint64_t pk = kv_obj_parent_key(s, o);
	if (!g || !kv_cfg(s)->model.linear_state_bytes || pk == KV_NO_PARENT)
		return;
	if (vec_reserve(g->orphaned, g->orphcap, g->norph + 1))
		return; /* the parent keeps its old key: a later eviction, not a wrong one */
	g->orphaned[g->norph++] = pk;
}

static void oracle_make_room(struct kvsim *s, uint64_t need)
{
	struct ostate *g = kv_state(s);
	requeue_orphaned(s);
	while (kv_dram_over(s, need) && kv_dram_head(s) != KV_NONE) {
		uint32_t v = KV_NONE;
		while (g->dram.n) {
			struct pent e = pheap_pop(&g->dram);
			if (!kv_obj_in_dram(s, e.o))
				continue;
			double k = dram_key(s, e.o);
			if (k == e.key) {
				v = e.o;
				break;
			}
			pheap_push(&g->dram, k, e.o); /* a use passed without a touch: re-key it */
		}
		if (v == KV_NONE)
			v = kv_dram_tail(s);
		uint32_t next;
		uint64_t uses = useful(s, v, &next);
		if (kv_obj_in_ssd(s, v) || !uses) {
			kv_drop_dram(s, v);
			continue;
		}
		uint64_t sz = kv_obj_slot_bytes(s, v);
		uint32_t vict[1024];
		size_t nv;
		double repl = ssd_replacement(s, v, vict, &nv, 1024);
		if (worth(s, v, uses) > g->fee * (double)sz + repl) {
			for (size_t i = 0; i < nv; i++)
				kv_evict_ssd(s, vict[i]);
			if (kv_move_to_ssd(s, v))
				continue;
		}
		kv_drop_dram(s, v);
	}
}

static uint32_t oracle_ssd_victim(struct kvsim *s, int kind)
{
	struct ostate *g = kv_state(s);
	requeue_orphaned(s);
	struct pheap *h = &g->ssd[kind];
	while (h->n) {
		struct pent e = pheap_pop(h);
		if (!kv_obj_in_ssd(s, e.o) || kv_obj_kind(s, e.o) != kind)
			continue;
		double k = ssd_key(s, e.o);
		if (k == e.key)
			return e.o;
		pheap_push(h, k, e.o);
	}
	return kv_ssd_tail(s, kind);
}

static void oracle_admitted(struct kvsim *s, uint32_t o)
{
	requeue(s, o);
}

/* a use: its next use moves on, so queue it again with the new key */
static void oracle_touched(struct kvsim *s, uint32_t o)
{
	requeue(s, o);
}

static int oracle_init(struct kvsim *s, char *err, size_t errlen)
{
	struct ostate *g = calloc(1, sizeof(*g));
	if (!g)
		return snprintf(err, errlen, "out of memory"), -1;
	g->f = kv_prepared(s);                     /* kvsim_init() saw to it that there is one */
	for (uint64_t i = 0; i < g->f->nslot; i++) /* rewind: the future may be replayed */
		g->f->ul[i].pos = 0;
	g->gpu_per_token = kv_gpu_usd_per_token(kv_cfg(s));
	g->fee = kv_wear_usd_per_byte(kv_cfg(s));
	kv_set_state(s, g);
	return 0;
}

static void oracle_fini(struct kvsim *s)
{
	struct ostate *g = kv_state(s);
	if (!g)
		return;
	pheap_free(&g->dram);
	pheap_free(&g->ssd[0]);
	pheap_free(&g->ssd[1]);
	free(g->orphaned);
	free(g);
	kv_set_state(s, NULL);
}

const struct kv_policy kv_policy_oracle = {
        .name = "oracle",
        .prepare = oracle_prepare,
        .unprepare = oracle_unprepare,
        .one_pass = true,
        .obj_bytes = sizeof(uint32_t),
        .init = oracle_init,
        .fini = oracle_fini,
        .admitted = oracle_admitted,
        .touched = oracle_touched,
        .removed = oracle_removed,
        .make_room = oracle_make_room,
        .ssd_victim = oracle_ssd_victim,
};
