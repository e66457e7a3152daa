/*
 * kvsim.c - the KV-cache tier simulator core: objects, tiers, hits, and the request path.
 *
 * Objects. One full-attention KV object per block id (size block_tokens x full bytes/token), and
 * one linear state per request boundary (keyed by the block id at the boundary | 1<<63, fixed
 * size). The boundary is the request's last *full* block: floor(input tokens / block tokens). Dense
 * models have no linear state. Objects live in one array, found by key through common/u64map
 * (linear probing, backward-shift deletion: no tombstones), so a block access costs one probe on
 * average, and freed objects are reused through a free list. The policy's per-object scratch
 * (kv_policy.obj_bytes) is a second array in step with the first, zeroed when an index is reused.
 *
 * The policy boundary: this file and kvcheck.c are the only ones that change struct kvsim
 * (kv_int.h); a policy reads it through kv_policy.h's accessors and changes it only through the
 * actions defined here (kv_drop_dram, kv_write_ssd, kv_move_to_ssd, kv_evict_ssd), which keep
 * the tier lists, byte counts, prefix tree and key map consistent (docs/kv-policy.md).
 *
 * A hit on a request with prefix blocks B1..Bn is the largest b such that B1..Bb are all cached
 * (in DRAM or on SSD) and, for a hybrid model, a linear state at b is cached. Tokens past b are
 * recomputed; the miss ratio counts blocks. Objects in the prefix are used in order, so a hit
 * never uses a chunk whose ancestors are missing. After the request its new blocks and the state
 * at its boundary n are admitted to DRAM. Before an object enters a tier, room is made for it,
 * so the tier capacities are never exceeded, not even for a moment.
 *
 * Tiers. Each tier keeps an LRU list (head = most recently used). The policy decides what leaves
 * DRAM and whether it is written to SSD (docs/policies.md). An SSD write asks the tier's allocator
 * (alloc.c: slots, log or regions; docs/kv.md) for an LBA, which may evict SSD objects first, and
 * then goes out through the SSD port (ssd_port.c) to the drive and/or the store: a write at the
 * request's trace time; an SSD hit is a read there (its completion time gives the load latency),
 * an eviction an optional TRIM. This file makes no drive call of its own.
 *
 * The actions assert their preconditions (an object index in range; a write of a DRAM object not
 * yet on SSD; a free of an object in neither tier) in the debug and ASan builds, so that a broken
 * caller fails at its line, not at kvsim_check() requests later.
 */
#include <assert.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kv_policy.h"
#include "u64map.h"
#include "vec.h"

/* ---- key -> object map (common/u64map.h) ---- */

uint32_t kv_lookup(const struct kvsim *s, uint64_t key)
{
	uint64_t v = u64map_get(&s->map, key);
	return v == U64MAP_EMPTY ? KV_NONE : (uint32_t)v;
}

/* ---- LRU lists ---- */

#define LIST_OPS(name, prev, next, head, tail)                                                     \
	static void name##_unlink(struct kvsim *s, uint32_t o)                                     \
	{                                                                                          \
		struct kv_obj *x = &s->obj[o];                                                     \
		if (x->prev != KV_NONE)                                                            \
			s->obj[x->prev].next = x->next;                                            \
		else                                                                               \
			s->head = x->next;                                                         \
		if (x->next != KV_NONE)                                                            \
			s->obj[x->next].prev = x->prev;                                            \
		else                                                                               \
			s->tail = x->prev;                                                         \
		x->prev = x->next = KV_NONE;                                                       \
	}                                                                                          \
	static void name##_push(struct kvsim *s, uint32_t o)                                       \
	{                                                                                          \
		struct kv_obj *x = &s->obj[o];                                                     \
		x->prev = KV_NONE;                                                                 \
		x->next = s->head;                                                                 \
		if (s->head != KV_NONE)                                                            \
			s->obj[s->head].prev = o;                                                  \
		s->head = o;                                                                       \
		if (s->tail == KV_NONE)                                                            \
			s->tail = o;                                                               \
	}
LIST_OPS(dlist, dprev, dnext, dhead, dtail)
LIST_OPS(slist_k0, sprev, snext, shead[0], stail[0])
LIST_OPS(slist_k1, sprev, snext, shead[1], stail[1])

/* the SSD keeps one LRU list per kind: a slot class is refilled from its own class */
static void slist_unlink(struct kvsim *s, uint32_t o)
{
	if (s->obj[o].kind)
		slist_k1_unlink(s, o);
	else
		slist_k0_unlink(s, o);
}

static void slist_push(struct kvsim *s, uint32_t o)
{
	if (s->obj[o].kind)
		slist_k1_push(s, o);
	else
		slist_k0_push(s, o);
}

/* Make o the most recent DRAM object; its stamp lets policies order a subset of DRAM as the list
 * does without walking it. */
static void dram_push(struct kvsim *s, uint32_t o)
{
	s->obj[o].dseq = ++s->dclock;
	dlist_push(s, o);
}

/* ---- objects ---- */

/* Room for the policy's scratch of objects 0..nobj (one more than now): the array parallel to obj
 */
static int vec_reserve_bytes(struct kvsim *s)
{
	uint64_t need = ((uint64_t)s->nobj + 1) * s->obj_bytes, cap = s->scratch_cap * s->obj_bytes;
	if (vec_reserve(s->scratch, cap, need))
		return -1;
	s->scratch_cap = cap / s->obj_bytes;
	return 0;
}

/* A new object under the cached parent p (KV_NONE: a root). */
static uint32_t obj_new(struct kvsim *s, uint64_t key, uint64_t parent_key, uint8_t kind,
                        uint64_t size, uint32_t p)
{
	uint32_t o;
	if (s->free_head != KV_NONE) {
		o = s->free_head;
		s->free_head = s->obj[o].dnext;
	} else {
		if (s->nobj == KV_NONE - 1 || vec_reserve(s->obj, s->cap, (uint64_t)s->nobj + 1))
			return KV_NONE;
		if (s->obj_bytes && vec_reserve_bytes(s))
			return KV_NONE;
		o = s->nobj++;
	}
	struct kv_obj *x = &s->obj[o];
	memset(x, 0, sizeof(*x));
	x->key = key;
	x->parent_key = parent_key;
	x->kind = kind;
	x->size = size;
	x->dprev = x->dnext = x->sprev = x->snext = KV_NONE;
	if (s->obj_bytes)
		memset(s->scratch + (size_t)o * s->obj_bytes, 0, s->obj_bytes);
	if (u64map_put(&s->map, key, o))
		return KV_NONE;
	x = &s->obj[o];
	x->parent = p;
	x->kid = x->sib[0] = x->sib[1] = KV_NONE;
	if (p != KV_NONE) {
		struct kv_obj *y = &s->obj[p];
		y->nchild++;
		x->sib[1] = y->kid;
		if (y->kid != KV_NONE)
			s->obj[y->kid].sib[0] = o;
		y->kid = o;
	}
	return o;
}

static void obj_free(struct kvsim *s, uint32_t o);

/*
 * o is leaving the cache: its cached descendants can never be reached again (a hit walks from
 * block 0), so they leave with it, deepest first - each one is a leaf when it goes, as if the
 * policy had evicted it. This keeps the cache a tree: no object outlives its parent.
 */
static void free_descendants(struct kvsim *s, uint32_t o)
{
	uint32_t c = s->obj[o].kid;
	while (c != KV_NONE) {
		while (s->obj[c].kid != KV_NONE)
			c = s->obj[c].kid;
		uint32_t p = s->obj[c].parent;
		struct kv_obj *x = &s->obj[c];
		s->st.unreachable++;
		if (x->in_dram)
			kv_drop_dram(s, c); /* frees it unless it has an SSD copy */
		if (x->in_ssd)
			kv_evict_ssd(s, c);
		c = p == o ? s->obj[o].kid : (s->obj[p].kid != KV_NONE ? s->obj[p].kid : p);
	}
}

static void obj_free(struct kvsim *s, uint32_t o)
{
	struct kv_obj *x = &s->obj[o];
	assert(!x->in_dram && !x->in_ssd && kv_lookup(s, x->key) == o);
	if (x->kid != KV_NONE)
		free_descendants(s, o);
	x = &s->obj[o];
	if (s->pol->removed)
		s->pol->removed(s, o);
	uint32_t p = x->parent;
	if (p != KV_NONE) {
		struct kv_obj *y = &s->obj[p];
		y->nchild--;
		if (x->sib[0] != KV_NONE)
			s->obj[x->sib[0]].sib[1] = x->sib[1];
		else
			y->kid = x->sib[1];
		if (x->sib[1] != KV_NONE)
			s->obj[x->sib[1]].sib[0] = x->sib[0];
	}
	u64map_del(&s->map, x->key);
	x->in_dram = x->in_ssd = 0;
	x->size = 0;
	x->dnext = s->free_head;
	s->free_head = o;
}

/* ---- the SSD tier ---- */

#define slot_size(x) kv_slot_bytes(s, x)

void kv_evict_ssd(struct kvsim *s, uint32_t o)
{
	assert(o < s->nobj);
	struct kv_obj *x = &s->obj[o];
	if (!x->in_ssd)
		return;
	slist_unlink(s, o);
	x->in_ssd = 0;
	s->ssd_used -= slot_size(x);
	s->st.ssd_evictions++;
	s->st.ssd_evictions_kind[x->kind]++;
	kv_count_written_hit(s, x);
	bool whole = kv_alloc_forget(s, x);
	kv_port_evicted(s, x, !whole);
	if (!x->in_dram)
		obj_free(s, o);
}

unsigned kv_stream(const struct kv_config *c, int kind, uint64_t session)
{
	unsigned k = c->streams_by_kind ? (unsigned)kind : 0, nk = c->streams_by_kind ? 2 : 1;
	if (!c->session_streams || session == KV_NO_SESSION)
		return k;
	uint64_t h = session * 0x9e3779b97f4a7c15ull; /* Fibonacci hashing, as u64map */
	return (unsigned)((h >> 32) % c->session_streams) * nk + k;
}

unsigned kv_streams(const struct kv_config *c)
{
	return (c->streams_by_kind ? 2 : 1) * (c->session_streams ? c->session_streams : 1);
}

/* Write x to SSD: the allocator gives it an LBA, evicting what must go (false: it cannot fit, or
 * its ancestor went and it with it), and the port writes it to the drive and the store. */
static bool ssd_put(struct kvsim *s, uint32_t o)
{
	assert(s->obj[o].in_dram && !s->obj[o].in_ssd);
	if (slot_size(&s->obj[o]) > s->cfg.ssd_bytes || !kv_alloc_place(s, o))
		return false;
	struct kv_obj *x = &s->obj[o];
	x->in_ssd = 1;
	s->ssd_used += slot_size(x);
	if (s->ssd_used > s->st.ssd_peak)
		s->st.ssd_peak = s->ssd_used;
	slist_push(s, o);
	s->st.ssd_write_bytes[x->kind] += slot_size(x);
	s->st.ssd_writes[x->kind]++;
	x->ssd_hits = 0;
	kv_port_write(s, x);
	return true;
}

bool kv_write_ssd(struct kvsim *s, uint32_t o)
{
	assert(o < s->nobj);
	if (!s->obj[o].in_dram) /* only a DRAM object is written (one freed meanwhile is not) */
		return s->obj[o].in_ssd;
	return s->obj[o].in_ssd || ssd_put(s, o);
}

void kv_drop_dram(struct kvsim *s, uint32_t o)
{
	assert(o < s->nobj);
	struct kv_obj *x = &s->obj[o];
	if (!x->in_dram)
		return;
	dlist_unlink(s, o);
	x->in_dram = 0;
	s->dram_used -= x->size;
	if (!x->in_ssd) {
		s->st.dram_drops++;
		obj_free(s, o);
	}
}

bool kv_move_to_ssd(struct kvsim *s, uint32_t o)
{
	bool ok = kv_write_ssd(s, o);
	kv_drop_dram(s, o);
	return ok;
}

void kv_default_make_room(struct kvsim *s, uint64_t need)
{
	while (s->dram_used + need > s->cfg.dram_bytes && s->dtail != KV_NONE) {
		uint32_t v = s->dtail;
		if (!s->obj[v].in_ssd && s->pol->spill && s->pol->spill(s, v))
			kv_move_to_ssd(s, v);
		else
			kv_drop_dram(s, v);
	}
}

uint32_t kv_tail_min(struct kvsim *s, int tier, int kind, uint32_t window,
                     double (*score)(struct kvsim *s, uint32_t o, void *arg), void *arg)
{
	uint32_t tail = tier ? s->stail[kind] : s->dtail, best = tail, o, k;
	double bs = INFINITY;
	for (o = tail, k = 0; o != KV_NONE && k < window;
	     o = tier ? s->obj[o].sprev : s->obj[o].dprev, k++) {
		double v = score(s, o, arg);
		if (v < bs) {
			bs = v;
			best = o;
		}
	}
	return best;
}

void kv_make_room_writeback(struct kvsim *s, uint64_t need, uint32_t (*victim)(struct kvsim *s))
{
	while (s->dram_used + need > s->cfg.dram_bytes && s->dhead != KV_NONE) {
		uint32_t v = victim(s);
		if (!s->obj[v].in_ssd)
			kv_move_to_ssd(s, v);
		else
			kv_drop_dram(s, v);
	}
}

static void make_room(struct kvsim *s, uint64_t need)
{
	if (s->pol->make_room)
		s->pol->make_room(s, need);
	else
		kv_default_make_room(s, need);
}

/* ---- requests ---- */

static void touch(struct kvsim *s, uint32_t o)
{
	struct kv_obj *x = &s->obj[o];
	if (s->pol->touched) /* before the update: the policy sees the previous use */
		s->pol->touched(s, o);
	x->refs++;
	x->last_req = s->req;
	x->last_t = s->now_t;
	if (x->in_dram) {
		dlist_unlink(s, o);
		dram_push(s, o);
	}
	if (x->in_ssd) {
		slist_unlink(s, o);
		slist_push(s, o);
	}
}

/* Is object index o (remembered earlier in the request) still the cached object with this key? */
static bool alive(const struct kvsim *s, uint32_t o, uint64_t key)
{
	return o != KV_NONE && o < s->nobj && s->obj[o].key == key &&
	       (s->obj[o].in_dram || s->obj[o].in_ssd);
}

/* Make o the most recent object of its tiers, without counting a use. */
static void reposition(struct kvsim *s, uint32_t o)
{
	if (o == KV_NONE)
		return;
	if (s->obj[o].in_dram) {
		dlist_unlink(s, o);
		dram_push(s, o);
	}
	if (s->obj[o].in_ssd) {
		slist_unlink(s, o);
		slist_push(s, o);
	}
}

/*
 * After a request, its prefix is the most recent part of the LRU lists in tree order: the root
 * at the head, every object ahead of its descendants, the states last. An LRU tail then meets
 * leaves before their parents, as in a radix-tree prefix cache (SGLang evicts leaves; vLLM frees
 * a sequence's blocks from its end): evicting a chunk before its descendants would leave them
 * cached but unreachable. (The hit loop's touches, root first, only keep the hit safe from the
 * admissions' evictions; this pass sets the final order.)
 */
static void recency(struct kvsim *s, const struct kv_request *rq, uint32_t n, uint32_t b,
                    uint32_t bnd)
{
	if (s->cfg.model.linear_state_bytes) {
		if (b > 0 && b != bnd) /* the state the hit used goes behind the new one */
			reposition(s, kv_lookup(s, rq->blocks[b - 1] | KV_LINEAR_BIT));
		if (bnd > 0)
			reposition(s, kv_lookup(s, rq->blocks[bnd - 1] | KV_LINEAR_BIT));
	}
	for (uint32_t i = n; i-- > 0;)
		if (alive(s, s->idx[i], rq->blocks[i]))
			reposition(s, s->idx[i]);
}

/* Admit a new object to DRAM (making room first). Returns its index or KV_NONE. */
static uint32_t admit(struct kvsim *s, uint64_t key, uint64_t parent_key, uint8_t kind,
                      uint64_t size, uint64_t session, uint32_t recompute_tokens,
                      uint32_t end_tokens)
{
	const bool no_dram = !s->cfg.dram_bytes; /* write-through only: pass through to SSD */
	if (size > s->cfg.dram_bytes && !no_dram) {
		s->st.not_admitted++;
		return KV_NONE;
	}
	if (s->pol->admit && !s->pol->admit(s, key, kind, size)) {
		s->st.refused++;
		return KV_NONE;
	}
	if (!no_dram)
		make_room(s, size);
	/* a state hangs off the chunk at its boundary, a chunk off the previous chunk; a block that
	 * repeats its predecessor's id (a malformed trace) is a root */
	uint64_t pk = kv_parent_key(key, parent_key);
	uint32_t p = pk == KV_NO_PARENT || pk == key ? KV_NONE : kv_lookup(s, pk);
	if ((s->dram_used + size > s->cfg.dram_bytes && !no_dram) ||
	    (pk != KV_NO_PARENT && pk != key && p == KV_NONE)) {
		s->st.not_admitted++; /* no room, or making room took its parent */
		return KV_NONE;
	}
	uint32_t o = obj_new(s, key, parent_key, kind, size, p);
	if (o == KV_NONE)
		return KV_NONE;
	struct kv_obj *x = &s->obj[o];
	x->in_dram = 1;
	x->refs = 1;
	x->last_req = s->req;
	x->last_t = s->now_t;
	x->session = session;
	x->recompute_tokens = recompute_tokens ? recompute_tokens : 1;
	x->end_tokens = end_tokens;
	s->dram_used += size;
	if (s->dram_used > s->st.dram_peak)
		s->st.dram_peak = s->dram_used;
	dram_push(s, o);
	if (s->pol->admitted)
		s->pol->admitted(s, o);
	if (s->pol->write_through)
		kv_write_ssd(s, o);
	if (no_dram) { /* it leaves DRAM at once: on SSD if the write went in, else gone */
		kv_drop_dram(s, o);
		return alive(s, o, key) ? o : KV_NONE;
	}
	return o;
}

static int lat_push(struct kvsim *s, double v)
{
	if (vec_reserve(s->st.lat, s->st.latcap, s->st.nlat + 1))
		return -1;
	s->st.lat[s->st.nlat++] = v;
	return 0;
}

/* Block ids at or above 2^63 would collide with the state keys (id | KV_LINEAR_BIT). */
static inline int check_blocks(const struct kv_request *rq, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < rq->nblocks; i++)
		if (rq->blocks[i] & KV_LINEAR_BIT)
			return fg_err(err, errlen, "block id %llu >= 2^63 is not supported",
			            (unsigned long long)rq->blocks[i]);
	return 0;
}

/*
 * The cached run of chunks from the root: returns r, with s->idx[0..r) their objects. The
 * lookups run 8 blocks ahead of the scan so that their cache misses overlap.
 */
static inline uint32_t cached_chunks(struct kvsim *s, const struct kv_request *rq)
{
	const uint32_t n = rq->nblocks;
	uint32_t r = 0;
	for (uint32_t i = 0; i < n && i < 8; i++)
		u64map_prefetch(&s->map, rq->blocks[i]);
	while (r < n) {
		if (r + 8 < n)
			u64map_prefetch(&s->map, rq->blocks[r + 8]);
		uint32_t o = kv_lookup(s, rq->blocks[r]);
		if (o == KV_NONE)
			break;
		s->idx[r++] = o;
	}
	return r;
}

/* The bytes a hit loads from each tier, and when the last SSD read completes. */
struct hit_load {
	uint64_t dram_bytes, ssd_bytes, t_ssd_done;
};

/* Use one object of the hit: count it, and read it through the FTL if it is on SSD. */
static inline void serve_obj(struct kvsim *s, uint32_t o, struct hit_load *h)
{
	struct kv_obj *x = &s->obj[o];
	if (x->in_dram) {
		s->st.hits[0][x->kind]++;
		h->dram_bytes += x->size;
	} else {
		s->st.hits[1][x->kind]++;
		h->ssd_bytes += x->size;
		x->ssd_hits++;
		s->st.ssd_read_bytes += slot_size(x);
		kv_port_read(s, x, x->lba, &h->t_ssd_done);
	}
	touch(s, o);
}

/* Serve the hit of b chunks (and, hybrid, the state at b): DRAM directly, SSD through the FTL. */
static inline void serve_hit(struct kvsim *s, const struct kv_request *rq, uint32_t b, bool hybrid,
                             struct hit_load *h)
{
	h->dram_bytes = h->ssd_bytes = 0;
	h->t_ssd_done = kv_now_ns(s);
	for (uint32_t i = 0; i < b; i++) {
		if (i + 4 < b) /* the objects are scattered: overlap their misses */
			fg_prefetch(&s->obj[s->idx[i + 4]]);
		if (i + 2 < b) /* and so are their L2P entries on the drive */
			kv_port_prefetch(s, &s->obj[s->idx[i + 2]]);
		serve_obj(s, s->idx[i], h);
	}
	if (hybrid && b > 0)
		serve_obj(s, kv_lookup(s, rq->blocks[b - 1] | KV_LINEAR_BIT), h);
}

/*
 * Record the request's load latency and hit counts. Transfers (SSD -> DRAM -> GPU, two hops)
 * overlap the recompute of the missed tokens, so the latency is the longer of the two.
 */
static inline int account(struct kvsim *s, const struct kv_request *rq, uint32_t b,
                          const struct hit_load *h)
{
	uint64_t tokens = rq->input_tokens, hit_tokens = (uint64_t)b * rq->block_tokens;
	if (hit_tokens > tokens)
		hit_tokens = tokens;
	double ssd_t = kv_port_timed(s) ? (h->t_ssd_done - kv_now_ns(s)) / 1e9
	                                : h->ssd_bytes / (s->cfg.ssd_gbps * 1e9);
	double rest = (h->dram_bytes + h->ssd_bytes) / (s->cfg.pcie_gbps * 1e9), xfer = ssd_t + rest;
	double recompute = (tokens - hit_tokens) / s->cfg.prefill_tokens_per_s;
	kv_port_load(s, rest, recompute);
	if (lat_push(s, xfer > recompute ? xfer : recompute))
		return -1;
	s->st.requests++;
	s->st.prefix_blocks += rq->nblocks;
	s->st.hit_blocks += b;
	s->st.prefix_tokens += tokens;
	s->st.missed_tokens += tokens - hit_tokens;
	return 0;
}

/*
 * The request-level miss (the Gandalf paper's words: a request served "without needing to
 * recompute the KV cache entries" is a hit): the request recomputes a block that an earlier
 * request produced. Blocks no request carried before are new work, not misses. Then its
 * recomputed blocks are known to exist. 0, or -1 when out of memory.
 */
static int count_recomputed(struct kvsim *s, const struct kv_request *rq, uint32_t b)
{
	bool again = false;
	for (uint32_t i = b; i < rq->nblocks; i++) {
		uint64_t *v = u64map_upsert(&s->seen, rq->blocks[i], s->st.requests);
		if (!v)
			return -1;
		again |= *v != s->st.requests;
	}
	s->st.missed_requests += again;
	return 0;
}

/*
 * Admit the recomputed chunks b..n-1. A chunk is admitted only below its cached parent: once one
 * cannot be (no room, or the admissions' evictions took its parent), the rest of the prefix
 * stays out. Leaves s->idx[b..n) the chunks' objects (KV_NONE where not cached).
 */
static inline void admit_chunks(struct kvsim *s, const struct kv_request *rq, uint32_t b,
                                uint32_t r)
{
	const uint64_t chunk = (uint64_t)rq->block_tokens * s->cfg.model.full_kv_bytes_per_token;
	bool cut = false;
	for (uint32_t i = b; i < rq->nblocks; i++) {
		/* cached chunks past b are where the first scan found them, unless the admissions'
		 * evictions took them */
		uint32_t o = i < r && alive(s, s->idx[i], rq->blocks[i])
		                     ? s->idx[i]
		                     : kv_lookup(s, rq->blocks[i]);
		if (o != KV_NONE)
			touch(s, o);
		else if (!cut && (!i || alive(s, s->idx[i - 1], rq->blocks[i - 1])))
			o = admit(s, rq->blocks[i], i ? rq->blocks[i - 1] : KV_NO_PARENT, OBJ_FULL,
			          chunk, rq->session, rq->block_tokens, (i + 1) * rq->block_tokens);
		cut |= o == KV_NONE;
		s->idx[i] = o;
	}
}

/*
 * Keep (touch or admit) the linear state at the boundary bnd, if its chunk is cached. The state
 * is kept at the last full block: a partial last block (Mooncake's ceil) has an id the next turn
 * does not share, so a state there could never be used.
 */
static inline void admit_state(struct kvsim *s, const struct kv_request *rq, uint32_t b,
                               uint32_t bnd)
{
	if (bnd == 0 || kv_lookup(s, rq->blocks[bnd - 1]) == KV_NONE)
		return;
	uint64_t key = rq->blocks[bnd - 1] | KV_LINEAR_BIT;
	uint32_t o = kv_lookup(s, key);
	if (o != KV_NONE) {
		if (b != bnd) /* the state was not used by the hit */
			touch(s, o);
	} else {
		/* losing this state costs the blocks since the boundary this request hit */
		admit(s, key, KV_NO_PARENT, OBJ_LINEAR, s->cfg.model.linear_state_bytes,
		      rq->session, (bnd > b ? bnd - b : 1) * rq->block_tokens,
		      bnd * rq->block_tokens);
	}
}

int kvsim_request(struct kvsim *s, const struct kv_request *rq, char *err, size_t errlen)
{
	const bool hybrid = s->cfg.model.linear_state_bytes > 0;
	const uint32_t n = rq->nblocks;
	if (check_blocks(rq, err, errlen))
		return -1;
	if (!s->st.requests)
		s->st.t_first = rq->t;
	s->st.t_last = rq->t;
	s->now_t = rq->t;
	s->cur_session = rq->session;
	s->cur_rq = rq;
	kv_port_begin(s);
	if (s->pol->begin)
		s->pol->begin(s);

	/* the usable prefix: all chunks cached up to r, and (hybrid) a state at b <= r */
	if (vec_reserve(s->idx, s->idxcap, n)) {
		s->cur_rq = NULL;
		return fg_err(err, errlen, "out of memory");
	}
	uint32_t r = cached_chunks(s, rq);
	uint32_t b = r;
	if (hybrid) {
		while (b > 0 && kv_lookup(s, rq->blocks[b - 1] | KV_LINEAR_BIT) == KV_NONE)
			b--;
	}
	struct hit_load h;
	serve_hit(s, rq, b, hybrid, &h);
	if (kv_port_probes(s)) /* the cached chunks past the usable state, unused */
		for (uint32_t i = b; i < r; i++)
			if (s->obj[s->idx[i]].in_ssd)
				kv_port_probe(s, &s->obj[s->idx[i]]);
	if (account(s, rq, b, &h) || count_recomputed(s, rq, b)) {
		s->cur_rq = NULL;
		return fg_err(err, errlen, "out of memory");
	}

	/* admit the recomputed blocks and the state at the boundary */
	admit_chunks(s, rq, b, r);
	uint32_t bnd = rq->block_tokens ? (uint32_t)(rq->input_tokens / rq->block_tokens) : n;
	if (bnd > n)
		bnd = n;
	if (hybrid)
		admit_state(s, rq, b, bnd);
	recency(s, rq, n, b, bnd);
	s->req++;
	s->cur_rq = NULL;
	if (kv_port_end(s, rq)) {
		fg_err(err, errlen, "the store failed");
		return KVSIM_E_SINK;
	}
	return KVSIM_OK;
}

void kvsim_set_sink(struct kvsim *s, const struct kv_io_sink *k)
{
	s->sink = k;
}

void kvsim_set_log(struct kvsim *s, struct kv_log *l)
{
	s->log = l;
}

static int kvsim_init(struct kvsim *s, const struct kv_config *c, const struct kv_policy *p,
                      const char *params, void *prepared, struct ftl *ftl, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->obj_bytes = p->obj_bytes;
	s->cfg = *c;
	s->pol = p;
	s->ftl = ftl;
	s->free_head = s->dhead = s->dtail = KV_NONE;
	s->shead[0] = s->shead[1] = s->stail[0] = s->stail[1] = KV_NONE;
	s->prepared = prepared;
	if (!c->dram_bytes && !p->write_through)
		return fg_err(err, errlen,
		              "--dram 0: only a write-through policy runs without a DRAM tier "
		              "(policy %s keeps objects in DRAM)",
		              p->name);
	s->shdr = c->slot_header;
	for (int k = 0; k < 2; k++) {
		uint64_t a = c->slot_align[k] ? c->slot_align[k] : KV_SLOT_BYTES;
		s->salign[k] = a;
		s->amask[k] = (a & (a - 1)) ? 0 : a - 1;
	}
	if (!c->ssd_bytes)
		return fg_err(err, errlen, "--ssd 0: the SSD tier must hold something");
	if (kv_params_parse(p, params, s->pv, err, errlen))
		return -1;
	if (kv_alloc_init(s, err, errlen))
		return -1;
	if (p->prepare && !prepared)
		return fg_err(err, errlen,
		            "policy %s needs its pass over the trace (prepare()) first", p->name);
	if (u64map_init(&s->map, 1024) || u64map_init(&s->seen, 1024)) {
		u64map_free(&s->map);
		return fg_err(err, errlen, "out of memory");
	}
	if (p->init && p->init(s, err, errlen)) {
		u64map_free(&s->map);
		u64map_free(&s->seen);
		s->pol = NULL; /* nothing for kvsim_free() to finish */
		return -1;
	}
	return 0;
}

void kvsim_finish(struct kvsim *s)
{
	/* objects still on SSD at the end: count whether they were hit there */
	for (int c = 0; c < 2; c++)
		for (uint32_t o = s->shead[c]; o != KV_NONE; o = s->obj[o].snext)
			kv_count_written_hit(s, &s->obj[o]);
}

void kvsim_finish_into(const struct kvsim *s, struct kv_stats *st)
{
	for (int c = 0; c < 2; c++)
		for (uint32_t o = s->shead[c]; o != KV_NONE; o = s->obj[o].snext)
			st->ssd_written_hit[s->obj[o].kind] += s->obj[o].ssd_hits != 0;
}

int kvsim_policy_figures(const struct kvsim *s, struct kv_figure *f)
{
	int n = s->pol->figures ? s->pol->figures(s, f, KV_MAX_FIGURES) : 0;
	return n < 0 ? 0 : (n > KV_MAX_FIGURES ? KV_MAX_FIGURES : n);
}

struct kvsim *kvsim_new(const struct kv_config *c, const struct kv_policy *p, const char *params,
                        void *prepared, struct ftl *ftl, char *err, size_t errlen)
{
	struct kvsim *s = malloc(sizeof(*s));
	if (!s) {
		fg_err(err, errlen, "out of memory");
		return NULL;
	}
	if (kvsim_init(s, c, p, params, prepared, ftl, err, errlen)) {
		kv_alloc_fini(s);
		free(s);
		return NULL;
	}
	return s;
}

struct kv_stats *kvsim_stats(struct kvsim *s)
{
	return &s->st;
}

const struct kv_policy *kvsim_policy(const struct kvsim *s)
{
	return s->pol;
}

void *kvsim_prepared(const struct kvsim *s)
{
	return s->prepared;
}

uint64_t kvsim_dram_used(const struct kvsim *s)
{
	return s->dram_used;
}

uint64_t kvsim_ssd_used(const struct kvsim *s)
{
	return s->ssd_used;
}

uint64_t kvsim_region_bytes(const struct kvsim *s)
{
	return s->rbytes;
}

void kvsim_free(struct kvsim *s)
{
	if (!s)
		return;
	if (s->pol && s->pol->fini)
		s->pol->fini(s);
	free(s->obj);
	free(s->scratch);
	u64map_free(&s->map);
	u64map_free(&s->seen);
	kv_alloc_fini(s);
	free(s->st.lat);
	free(s->idx);
	free(s);
}
