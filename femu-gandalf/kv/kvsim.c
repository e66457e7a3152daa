/*
 * kvsim.c - the KV-cache tier simulator core: objects, tiers, hits, SSD slots on the FTL.
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
 * DRAM and whether it is written to SSD (docs/policies.md). SSD objects get LBAs in the SSD tier's
 * range from one of two allocators (docs/kv.md):
 *   slots: fixed-size slots per size class (LMCache raw-block style): a free list per class and a
 *          bump pointer. The policy picks SSD victims until the object fits and a slot is free.
 *   log:   a circular append log (CacheLib's BlockCache, Kangaroo's KLog, Flashield): objects go
 *          at a write head that wraps around the range, and the head evicts every object it runs
 *          into (FIFO log cleaning). A hole left by an earlier eviction is reused only when the
 *          head gets there again. The head clears its own way, so the tier cannot overflow and
 *          the policy's SSD victim is never asked for; the drive sees purely sequential writes.
 * A write is an FTL write at the request's trace time, an SSD hit an FTL read (its completion time
 * gives the load latency), an eviction an optional TRIM.
 */
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

/* Trace time in ns for the FTL. Past 1.8e10 s (570 years) the ns no longer fit a uint64_t
 * (1.8e19): such a time (a malformed trace) is pinned to UINT64_MAX / 2 instead of wrapping. */
#define KV_NS_MAX_S 1.8e10

static uint64_t now_ns(const struct kvsim *s)
{
	return s->now_t > 0 ? (s->now_t < KV_NS_MAX_S ? (uint64_t)(s->now_t * 1e9) : UINT64_MAX / 2)
	                    : 0;
}

/* Tell the store (if any) about one I/O of x. A failure stops the run at the request's end. */
static void sink_io(struct kvsim *s, char op, const struct kv_obj *x)
{
	if (!s->sink || s->sink_failed)
		return;
	struct kv_io e = {.op = op,
	                  .kind = x->kind,
	                  .key = x->key,
	                  .session = x->session,
	                  .lba = x->lba,
	                  .slot_bytes = slot_size(x),
	                  .size = x->size};
	if (s->sink->io(s->sink->arg, &e))
		s->sink_failed = true;
}

static bool slot_alloc(struct kvsim *s, struct kv_obj *x)
{
	int k = x->kind;
	if (s->nfree[k]) {
		/* LIFO: the newest free slot (LMCache); FIFO: the oldest (KVBM) */
		x->lba = s->cfg.slot_fifo ? s->freeslot[k][s->ffirst[k]++]
		                          : s->freeslot[k][s->ffirst[k] + s->nfree[k] - 1];
		s->nfree[k]--;
		return true;
	}
	uint64_t sz = slot_size(x);
	if (s->bump + sz > s->cfg.ssd_bytes)
		return false;
	x->lba = s->bump;
	s->bump += sz;
	return true;
}

static void slot_free(struct kvsim *s, struct kv_obj *x)
{
	int k = x->kind;
	if (s->ffirst[k] && s->ffirst[k] + s->nfree[k] == s->freecap[k]) {
		memmove(s->freeslot[k], s->freeslot[k] + s->ffirst[k],
		        s->nfree[k] * sizeof(*s->freeslot[k]));
		s->ffirst[k] = 0;
	}
	if (vec_reserve(s->freeslot[k], s->freecap[k], s->ffirst[k] + s->nfree[k] + 1))
		return; /* the slot leaks; the allocator stays correct */
	s->freeslot[k][s->ffirst[k] + s->nfree[k]++] = x->lba;
}

static int ring_push(struct kvsim *s, uint64_t pos, uint32_t o)
{
	if (s->rlen == s->rcap) {
		/* vec doubles a power of two into a power of two; the entries that had wrapped to
		 * the front, ring[0..rfirst), then move past the old end, so the ring reads in
		 * order again */
		uint64_t old = s->rcap;
		if (vec_reserve(s->ring, s->rcap, s->rlen + 1))
			return -1;
		memcpy(s->ring + old, s->ring, (s->rfirst + s->rlen - old) * sizeof(*s->ring));
	}
	s->ring[(s->rfirst + s->rlen++) & (s->rcap - 1)] = (struct kv_logent){pos, o};
	return 0;
}

/* Log allocator: put o at the head. An object written at position p occupies LBA p mod tier; the
 * head reaches that LBA again at p + tier, so every ring entry with p + tier < head + size lies
 * (at least partly) in the head's way, or in the padding it skipped: evict it, unless it has left
 * the SSD already (a hole) - then its entry is stale. Live objects thus always lie within the
 * last (tier - size) bytes of positions behind the head: no overlap, no overflow. */
static bool log_alloc(struct kvsim *s, uint32_t o)
{
	uint64_t cap = s->cfg.ssd_bytes, sz = slot_size(&s->obj[o]);
	if (s->head % cap + sz > cap)
		s->head += cap - s->head % cap; /* no room before the end: pad, restart at LBA 0 */
	while (s->rlen) {
		struct kv_logent e = s->ring[s->rfirst];
		if (e.pos + cap >= s->head + sz)
			break;
		s->rfirst = (s->rfirst + 1) & (s->rcap - 1);
		s->rlen--;
		/* an LBA is written once per lap, so a live object at e's LBA is e's object */
		if (s->obj[e.o].in_ssd && s->obj[e.o].lba == e.pos % cap)
			kv_evict_ssd(s, e.o);
	}
	if (!s->obj[o].in_dram)
		return false; /* an object in the way was its ancestor: it left with it */
	if (ring_push(s, s->head, o))
		return false;
	s->obj[o].lba = s->head % cap;
	s->head += sz;
	return true;
}

static void count_written_hit(struct kvsim *s, struct kv_obj *x)
{
	if (x->ssd_hits)
		s->st.ssd_written_hit[x->kind]++;
	x->ssd_hits = 0;
}

/* ---- region allocator (docs/placement.md) ----
 *
 * The tier is cut into nreg regions of rbytes, each a whole number of the drive's write stripes
 * (one block on every plane: the GC unit of a superblock drive), so that what one region's
 * writes fill on NAND is whole erase units. Objects are appended into the open region of their
 * stream (one, or one per kind with --streams kind); when it is full it is sealed and a free one
 * opened. Before a region is opened the allocator keeps one free region per stream in reserve
 * (for the re-admissions of a cleaning) by cleaning sealed regions: the victim is the oldest
 * sealed region or, with the policy's ssd_value() price, the cheapest of it and 16 sampled ones.
 * Its live objects are priced, the most valuable per byte re-admitted (rewritten into the open
 * region, together with the SSD-only ancestors in the victim that their chain needs) up to
 * readmit x rbytes, the rest evicted, and the region TRIMmed whole: the FTL sees only whole
 * regions die, so its garbage collection finds whole dead erase units (WAF 1).
 */

enum { REG_FREE = 0, REG_OPEN = 1, REG_SEALED = 2 };

static unsigned obj_stream(const struct kvsim *s, const struct kv_obj *x)
{
	return kv_stream(&s->cfg, x->kind, x->session);
}

static uint32_t lba_region(const struct kvsim *s, uint64_t lba)
{
	return (uint32_t)(lba / s->rbytes);
}

/* the region of a live SSD object listed in region r as (key, o): still there? */
static bool region_holds(const struct kvsim *s, uint32_t r, uint32_t o, uint64_t key)
{
	const struct kv_obj *x = &s->obj[o];
	return o < s->nobj && x->key == key && x->in_ssd && lba_region(s, x->lba) == r;
}

static void region_release(struct kvsim *s)
{
	for (uint32_t i = 0; s->reg && i < s->nreg; i++)
		free(s->reg[i].e);
	free(s->reg);
	free(s->rfree);
	free(s->sealed);
	free(s->ropen);
	free(s->mark);
	free(s->cand);
}

static int region_init(struct kvsim *s, char *err, size_t errlen)
{
	uint64_t r = s->cfg.region_bytes, unit = KV_SLOT_BYTES;
	uint64_t big = (s->cfg.model.linear_state_bytes + KV_SLOT_BYTES - 1) / KV_SLOT_BYTES *
	               KV_SLOT_BYTES;
	const char *what = "4 KiB";
	if (s->ftl) {
		const struct ftl_geometry *g = ftl_get_geometry(s->ftl);
		uint64_t us = ftl_get_config(s->ftl)->unit_size;
		unit = (uint64_t)g->frontier_slots * g->units_per_block * us;
		uint64_t gcu = (uint64_t)g->units_per_gc_unit * us;
		if (gcu > unit)
			unit = gcu % unit ? gcu * unit : gcu; /* a multiple of both */
		what = "the drive's write stripe (a block on every plane)";
	}
	if (!r) {
		r = s->ftl ? unit : 64ull << 20;
		while (r < 4 * big)
			r += s->ftl ? unit : r;
	} else if (r % unit) {
		return fg_err(err, errlen, "--region %llu: must be a multiple of %llu bytes (%s)",
		              (unsigned long long)r, (unsigned long long)unit, what);
	}
	if (4 * big > r)
		return fg_err(err, errlen,
		              "--region %llu: a linear state (%llu bytes) must fit 4 times in a region",
		              (unsigned long long)r, (unsigned long long)big);
	if (!(s->cfg.readmit >= 0 && s->cfg.readmit <= KV_REGION_READMIT_MAX))
		return fg_err(err, errlen, "--readmit %g: must be in [0, %g]", s->cfg.readmit,
		              KV_REGION_READMIT_MAX);
	uint64_t n = s->cfg.ssd_bytes / r;
	if (n >= KV_REGION_MIN && n < kv_streams(&s->cfg) + 3)
		return fg_err(err, errlen,
		              "--alloc region: the SSD tier holds %llu regions of %llu bytes, too few "
		              "for %u streams (an open region each, and 3 more)",
		              (unsigned long long)n, (unsigned long long)r, kv_streams(&s->cfg));
	if (n < KV_REGION_MIN || n > UINT32_MAX / 2)
		return fg_err(err, errlen,
		              "--alloc region: the SSD tier (%llu bytes) holds %llu regions of %llu "
		              "bytes; it needs %d to %u (change --region or --ssd)",
		              (unsigned long long)s->cfg.ssd_bytes, (unsigned long long)n,
		              (unsigned long long)r, KV_REGION_MIN, UINT32_MAX / 2);
	s->rbytes = r;
	s->nreg = (uint32_t)n;
	s->reg = calloc(n, sizeof(*s->reg));
	s->rfree = malloc(n * sizeof(*s->rfree));
	s->sealed = malloc(n * sizeof(*s->sealed));
	if (!s->reg || !s->rfree || !s->sealed)
		return fg_err(err, errlen, "out of memory");
	for (uint32_t i = 0; i < s->nreg; i++)
		s->rfree[i] = s->nreg - 1 - i; /* region 0 is taken first */
	s->nrfree = s->nreg;
	s->nopen = kv_streams(&s->cfg);
	s->nreserve = s->nopen < 2 ? s->nopen : 2;
	s->ropen = malloc(s->nopen * sizeof(*s->ropen));
	if (!s->ropen)
		return fg_err(err, errlen, "out of memory");
	for (uint32_t k = 0; k < s->nopen; k++)
		s->ropen[k] = KV_NONE;
	s->rclean = KV_NONE;
	ftl_seed(s->rng, 12);
	return 0;
}

/* Seal the open region of stream k and open a free one. false when none is free. */
static bool region_open(struct kvsim *s, unsigned k)
{
	uint32_t r = s->ropen[k];
	if (r != KV_NONE) {
		s->reg[r].state = REG_SEALED;
		s->reg[r].seq = ++s->rseq;
		s->reg[r].pos = s->nsealed;
		s->sealed[s->nsealed++] = r;
		s->ropen[k] = KV_NONE;
	}
	if (!s->nrfree)
		return false;
	r = s->rfree[--s->nrfree];
	s->reg[r].state = REG_OPEN;
	s->reg[r].fill = s->reg[r].live = s->reg[r].ne = 0;
	s->ropen[k] = r;
	return true;
}

/* Append o to its stream's open region (opening one when it does not fit; no cleaning). */
static bool region_place(struct kvsim *s, uint32_t o)
{
	unsigned k = obj_stream(s, &s->obj[o]);
	uint64_t sz = slot_size(&s->obj[o]);
	uint32_t r = s->ropen[k];
	if (r == KV_NONE || s->reg[r].fill + sz > s->rbytes) {
		if (!region_open(s, k))
			return false;
		r = s->ropen[k];
	}
	struct kv_region *g = &s->reg[r];
	if (vec_reserve(g->e, g->ecap, g->ne + 1))
		return false; /* unlisted, it could never be cleaned: not written */
	g->e[g->ne++] = (struct kv_rent){s->obj[o].key, o};
	s->obj[o].lba = (uint64_t)r * s->rbytes + g->fill;
	g->fill += sz;
	g->live += sz;
	return true;
}

/* What losing region r's live SSD-only objects would cost (the policy's price). */
static double region_score(struct kvsim *s, uint32_t r)
{
	const struct kv_region *g = &s->reg[r];
	uint64_t gen = ++s->markgen;
	double v = 0;
	for (uint64_t i = 0; i < g->ne; i++) {
		uint32_t o = g->e[i].o;
		if (!region_holds(s, r, o, g->e[i].key) || s->obj[o].in_dram || s->mark[o] == gen)
			continue;
		s->mark[o] = gen;
		v += s->pol->ssd_value(s, o);
	}
	return v;
}

/* The region to clean: the oldest sealed one, or the cheapest of it and KV_REGION_CHOICES
 * sampled ones when the policy prices SSD objects. */
static uint32_t region_pick(struct kvsim *s)
{
	uint32_t best = s->sealed[0];
	for (uint32_t i = 1; i < s->nsealed; i++)
		if (s->reg[s->sealed[i]].seq < s->reg[best].seq)
			best = s->sealed[i];
	if (!s->pol->ssd_value)
		return best;
	double bs = region_score(s, best);
	for (int i = 0; i < KV_REGION_CHOICES && s->nsealed > 1; i++) {
		uint32_t r = s->sealed[ftl_rand(s->rng) % s->nsealed];
		double v = region_score(s, r);
		if (v < bs) {
			bs = v;
			best = r;
		}
	}
	return best;
}

static int cand_cmp(const void *a, const void *b)
{
	const struct kv_cand *x = a, *y = b;
	if (x->prio != y->prio)
		return x->prio > y->prio ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* Rewrite the SSD-only object o (in the region being cleaned) into its stream's open region:
 * an SSD read and a write, counted as a write of the object. false if it could not be placed. */
static bool region_readmit(struct kvsim *s, uint32_t o)
{
	struct kv_obj *x = &s->obj[o];
	uint64_t sz = slot_size(x), old = x->lba;
	if (!region_place(s, o))
		return false;
	x = &s->obj[o];
	s->reg[lba_region(s, old)].live -= sz;
	count_written_hit(s, x);
	s->st.ssd_writes[x->kind]++;
	s->st.ssd_write_bytes[x->kind] += sz;
	s->st.readmits++;
	s->st.readmit_bytes += sz;
	if (s->ftl) {
		if (ftl_read(s->ftl, old, sz, now_ns(s), NULL))
			s->st.ftl_errors++;
		if (ftl_write(s->ftl, x->lba, sz, obj_stream(s, x), now_ns(s), NULL))
			s->st.ftl_errors++;
	}
	if (s->sink) {
		uint64_t lba = x->lba;
		x->lba = old;
		sink_io(s, KV_IO_READ, x);
		x->lba = lba;
		sink_io(s, KV_IO_WRITE, x);
	}
	return true;
}

static void region_clean(struct kvsim *s)
{
	uint32_t v = region_pick(s);
	struct kv_region *g = &s->reg[v];
	uint32_t last = s->sealed[--s->nsealed];
	s->sealed[g->pos] = last;
	s->reg[last].pos = g->pos;
	g->state = REG_OPEN; /* being cleaned */
	s->rclean = v;
	s->st.regions_cleaned++;
	/* its live objects, once each, priced: keeping an object that is also in DRAM is worth
	 * nothing now (its SSD copy just goes) */
	uint64_t gen = ++s->markgen;
	s->ncand = 0;
	for (uint64_t i = 0; i < g->ne; i++) {
		uint32_t o = g->e[i].o;
		if (!region_holds(s, v, o, g->e[i].key) || s->mark[o] == gen)
			continue;
		s->mark[o] = gen;
		if (vec_reserve(s->cand, s->candcap, s->ncand + 1))
			break; /* the rest are evicted below, unpriced */
		const struct kv_obj *x = &s->obj[o];
		double prio = x->in_dram ? 0
		              : s->pol->ssd_value ? s->pol->ssd_value(s, o) / (double)slot_size(x)
		                                  : (double)(x->ssd_hits > 0);
		s->cand[s->ncand] = (struct kv_cand){prio, x->key, o, (uint32_t)s->ncand};
		s->ncand++;
	}
	if (s->ncand) /* (qsort of no array: UB on a NULL base) */
		qsort(s->cand, s->ncand, sizeof(*s->cand), cand_cmp);
	/* the keepers, most valuable first, each with the SSD-only ancestors in this region that
	 * its chain needs (evicting one would take it along), within the cap; a walk up stops at
	 * an object already walked in this step, whose ancestors are kept or safe */
	uint64_t keep = ++s->markgen, cap = (uint64_t)(s->cfg.readmit * (double)s->rbytes);
	uint64_t kept = 0, fails = 0;
	for (uint64_t i = 0; i < s->ncand && fails < 64 && kept + KV_SLOT_BYTES <= cap; i++) {
		uint32_t o = s->cand[i].o;
		if (s->cand[i].prio <= 0)
			break;
		if (s->mark[o] == keep)
			continue;
		uint64_t need = 0;
		for (uint32_t a = o; a != KV_NONE && s->mark[a] != keep && kept + need <= cap;
		     a = s->obj[a].parent)
			if (!s->obj[a].in_dram && lba_region(s, s->obj[a].lba) == v && s->obj[a].in_ssd)
				need += slot_size(&s->obj[a]);
		if (kept + need > cap) {
			fails++;
			continue;
		}
		for (uint32_t a = o; a != KV_NONE && s->mark[a] != keep; a = s->obj[a].parent)
			s->mark[a] = keep;
		kept += need;
	}
	/* rewrite the keepers, then evict what is left (its descendants elsewhere go with it) */
	for (uint64_t i = 0; i < s->ncand; i++) {
		struct kv_cand *c = &s->cand[i];
		if (s->mark[c->o] == keep && region_holds(s, v, c->o, c->key) &&
		    !s->obj[c->o].in_dram)
			region_readmit(s, c->o);
	}
	for (uint64_t i = 0; i < g->ne; i++)
		if (region_holds(s, v, g->e[i].o, g->e[i].key))
			kv_evict_ssd(s, g->e[i].o);
	if (s->ftl && s->cfg.trim && ftl_trim(s->ftl, (uint64_t)v * s->rbytes, s->rbytes,
	                                      now_ns(s), NULL))
		s->st.ftl_errors++;
	g->state = REG_FREE;
	g->fill = g->ne = 0;
	s->rfree[s->nrfree++] = v;
	s->rclean = KV_NONE;
}

/* Put o at its stream's open region, cleaning first when a region must be opened. */
static bool region_alloc(struct kvsim *s, uint32_t o)
{
	uint64_t key = s->obj[o].key, sz = slot_size(&s->obj[o]);
	unsigned k = obj_stream(s, &s->obj[o]);
	if (sz > s->rbytes / 4)
		return false;
	uint32_t r = s->ropen[k];
	if (r == KV_NONE || s->reg[r].fill + sz > s->rbytes) {
		uint64_t had = s->markcap;
		if (vec_reserve(s->mark, s->markcap, s->nobj))
			return false;
		if (s->markcap > had) /* a new mark is no step's */
			memset(s->mark + had, 0, (s->markcap - had) * sizeof(*s->mark));
		/* keep free regions (one per stream, at most 2) for the re-admissions of a
		 * cleaning; one that finds none is evicted instead */
		for (uint32_t n = 0; s->nrfree < s->nreserve + 1 && s->nsealed && n < 4 * s->nreg;
		     n++)
			region_clean(s);
		if (s->obj[o].key != key || !s->obj[o].in_dram)
			return false; /* an ancestor was cleaned out: it left with it */
	}
	return region_place(s, o);
}

void kv_evict_ssd(struct kvsim *s, uint32_t o)
{
	struct kv_obj *x = &s->obj[o];
	if (!x->in_ssd)
		return;
	slist_unlink(s, o);
	x->in_ssd = 0;
	s->ssd_used -= slot_size(x);
	s->st.ssd_evictions++;
	count_written_hit(s, x);
	sink_io(s, KV_IO_TRIM, x);
	bool whole = false; /* its region is being cleaned: TRIMmed whole at the end */
	if (s->cfg.alloc == KV_ALLOC_REGION) {
		s->reg[lba_region(s, x->lba)].live -= slot_size(x);
		whole = lba_region(s, x->lba) == s->rclean;
	}
	if (s->ftl && s->cfg.trim && !whole &&
	    ftl_trim(s->ftl, x->lba, slot_size(x), now_ns(s), NULL))
		s->st.ftl_errors++;
	if (s->cfg.alloc == KV_ALLOC_SLOTS)
		slot_free(s, x);
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

double kv_obj_unit_valid(const struct kvsim *s, uint32_t o)
{
	if (!s->ftl || !s->obj[o].in_ssd)
		return 1;
	double v = ftl_unit_valid(s->ftl, s->obj[o].lba);
	return v < 0 ? 1 : v;
}

static uint32_t default_ssd_victim(struct kvsim *s, int kind)
{
	return s->stail[kind];
}

uint64_t kv_ssd_shortfall(const struct kvsim *s, uint32_t o)
{
	const struct kv_obj *x = &s->obj[o];
	uint64_t sz = slot_size(x);
	if (s->cfg.alloc == KV_ALLOC_LOG)
		return s->ssd_used + sz > s->cfg.ssd_bytes ? s->ssd_used + sz - s->cfg.ssd_bytes
		                                           : 0;
	/* regions: once no region is free beyond the reserve, every write is paid for by a
	 * cleaning, which evicts something of that size */
	if (s->cfg.alloc == KV_ALLOC_REGION)
		return s->nrfree > s->nreserve + 1 ? 0 : sz;
	/* slots: room when a slot of the class is free or the bump pointer can cut one; otherwise
	 * one resident of the class must go (bytes then fit: a class's slots are all one size) */
	return s->nfree[x->kind] || s->bump + sz <= s->cfg.ssd_bytes ? 0 : sz;
}

/* Write x to SSD, evicting SSD victims until it fits. false if it cannot fit at all. */
static bool ssd_put(struct kvsim *s, uint32_t o)
{
	struct kv_obj *x = &s->obj[o];
	if (slot_size(x) > s->cfg.ssd_bytes)
		return false;
	if (s->cfg.alloc == KV_ALLOC_LOG && !log_alloc(s, o)) {
		s->st.ssd_alloc_fail += s->obj[o].in_dram;
		return false;
	}
	if (s->cfg.alloc == KV_ALLOC_REGION && !region_alloc(s, o)) {
		s->st.ssd_alloc_fail += s->obj[o].in_dram;
		return false;
	}
	while (s->cfg.alloc == KV_ALLOC_SLOTS) {
		if (s->ssd_used + slot_size(x) <= s->cfg.ssd_bytes && slot_alloc(s, x))
			break;
		/* only a resident of the same class frees a slot that x can use */
		uint32_t v = s->pol->ssd_victim ? s->pol->ssd_victim(s, x->kind)
		                                : default_ssd_victim(s, x->kind);
		if (v != KV_NONE && (s->obj[v].kind != x->kind || !s->obj[v].in_ssd))
			v = default_ssd_victim(
			        s, x->kind); /* the policy named no resident of the class */
		if (v == KV_NONE || v == o) {
			s->st.ssd_alloc_fail++;
			return false;
		}
		uint64_t key = x->key;
		kv_evict_ssd(s, v);
		if (!s->obj[o].in_dram || s->obj[o].key != key)
			return false; /* the victim was its ancestor: it left with it */
	}
	x = &s->obj[o];
	x->in_ssd = 1;
	s->ssd_used += slot_size(x);
	if (s->ssd_used > s->st.ssd_peak)
		s->st.ssd_peak = s->ssd_used;
	slist_push(s, o);
	s->st.ssd_write_bytes[x->kind] += slot_size(x);
	s->st.ssd_writes[x->kind]++;
	x->ssd_hits = 0;
	sink_io(s, KV_IO_WRITE, x);
	if (s->ftl) {
		unsigned stream = kv_stream(&s->cfg, x->kind, x->session);
		int rc = ftl_write(s->ftl, x->lba, slot_size(x), stream, now_ns(s), NULL);
		if (rc)
			s->st.ftl_errors++;
	}
	return true;
}

bool kv_write_ssd(struct kvsim *s, uint32_t o)
{
	if (!s->obj[o].in_dram) /* only a DRAM object is written (one freed meanwhile is not) */
		return s->obj[o].in_ssd;
	return s->obj[o].in_ssd || ssd_put(s, o);
}

void kv_drop_dram(struct kvsim *s, uint32_t o)
{
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
		sink_io(s, KV_IO_READ, x);
		if (s->ftl) {
			uint64_t done;
			if (ftl_read(s->ftl, x->lba, slot_size(x), now_ns(s), &done))
				s->st.ftl_errors++;
			else if (done > h->t_ssd_done)
				h->t_ssd_done = done;
		}
	}
	touch(s, o);
}

/* Serve the hit of b chunks (and, hybrid, the state at b): DRAM directly, SSD through the FTL. */
static inline void serve_hit(struct kvsim *s, const struct kv_request *rq, uint32_t b, bool hybrid,
                             struct hit_load *h)
{
	h->dram_bytes = h->ssd_bytes = 0;
	h->t_ssd_done = now_ns(s);
	for (uint32_t i = 0; i < b; i++) {
		if (i + 4 < b) /* the objects are scattered: overlap their misses */
			__builtin_prefetch(&s->obj[s->idx[i + 4]]);
		if (s->ftl && i + 2 < b) { /* and so are their L2P entries on the drive */
			const struct kv_obj *x = &s->obj[s->idx[i + 2]];
			if (!x->in_dram)
				ftl_prefetch(s->ftl, x->lba, slot_size(x));
		}
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
	double ssd_t = s->ftl && s->cfg.use_ftl_timing ? (h->t_ssd_done - now_ns(s)) / 1e9
	                                               : h->ssd_bytes / (s->cfg.ssd_gbps * 1e9);
	double xfer = ssd_t + (h->dram_bytes + h->ssd_bytes) / (s->cfg.pcie_gbps * 1e9);
	double recompute = (tokens - hit_tokens) / s->cfg.prefill_tokens_per_s;
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
	if (s->sink && s->sink->probe) /* the cached chunks past the usable state, unused */
		for (uint32_t i = b; i < r; i++)
			if (s->obj[s->idx[i]].in_ssd)
				sink_io(s, KV_IO_PROBE, &s->obj[s->idx[i]]);
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
	if (s->sink && !s->sink_failed && s->sink->end && s->sink->end(s->sink->arg, rq))
		s->sink_failed = true;
	if (s->sink_failed) {
		fg_err(err, errlen, "the store failed");
		return KVSIM_E_SINK;
	}
	return KVSIM_OK;
}

void kvsim_set_sink(struct kvsim *s, const struct kv_io_sink *k)
{
	s->sink = k;
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
	if (c->alloc == KV_ALLOC_REGION && region_init(s, err, errlen))
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
			count_written_hit(s, &s->obj[o]);
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
		region_release(s);
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
	free(s->freeslot[0]);
	free(s->freeslot[1]);
	free(s->ring);
	region_release(s);
	free(s->st.lat);
	free(s->idx);
	free(s);
}
