/*
 * alloc.c - the SSD tier's allocators: where an object's bytes go in the tier's LBA range, and
 * what must leave to make room (docs/kv.md, docs/placement.md). kvsim.c calls the four entry
 * points at the end (kv_alloc_init, kv_alloc_place, kv_alloc_forget, kv_alloc_fini); the I/O
 * an allocator makes itself (a region's re-admissions and its TRIM) goes through the SSD port
 * (ssd_port.c), like every other I/O of the tier.
 *
 *   slots:  fixed-size slots per size class (LMCache raw-block style): a free list per class and
 *           a bump pointer (freed slots first, or with slot_fresh_first never-used ones first).
 *           The policy picks SSD victims until the object fits and a slot is free.
 *   log:    a circular append log (CacheLib's BlockCache, Kangaroo's KLog, Flashield): objects go
 *           at a write head that wraps around the range, and the head evicts every object it runs
 *           into (FIFO log cleaning). A hole left by an earlier eviction is reused only when the
 *           head gets there again. The head clears its own way, so the tier cannot overflow and
 *           the policy's SSD victim is never asked for; the drive sees purely sequential writes.
 *   region: erase-unit-sized regions, one open per stream, cleaned whole (below).
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kv_policy.h"
#include "vec.h"

#define slot_size(x) kv_slot_bytes(s, x)

/* ---- slots ---- */

static bool slot_alloc(struct kvsim *s, struct kv_obj *x)
{
	int k = x->kind;
	uint64_t sz = slot_size(x);
	bool fresh = s->bump + sz <= s->cfg.ssd_bytes;
	if (s->nfree[k] && !(fresh && s->cfg.slot_fresh_first)) {
		/* LIFO: the newest free slot (LMCache); FIFO: the oldest (KVBM) */
		x->lba = s->cfg.slot_fifo ? s->freeslot[k][s->ffirst[k]++]
		                          : s->freeslot[k][s->ffirst[k] + s->nfree[k] - 1];
		s->nfree[k]--;
		return true;
	}
	if (!fresh)
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

/* ---- log ---- */

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
	uint64_t r = s->cfg.region_bytes, stripe = kv_port_stripe_bytes(s);
	uint64_t unit = stripe ? stripe : KV_SLOT_BYTES;
	uint64_t big = (s->cfg.model.linear_state_bytes + KV_SLOT_BYTES - 1) / KV_SLOT_BYTES *
	               KV_SLOT_BYTES;
	const char *what = stripe ? "the drive's write stripe (a block on every plane)" : "4 KiB";
	if (!r) {
		r = stripe ? unit : 64ull << 20;
		while (r < 4 * big)
			r += stripe ? unit : r;
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
	unsigned k = kv_obj_stream(s, &s->obj[o]);
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
	kv_count_written_hit(s, x);
	s->st.ssd_writes[x->kind]++;
	s->st.ssd_write_bytes[x->kind] += sz;
	s->st.readmits++;
	s->st.readmit_bytes += sz;
	kv_port_read(s, x, old, NULL);
	kv_port_write(s, x);
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
	kv_port_trim(s, (uint64_t)v * s->rbytes, s->rbytes);
	g->state = REG_FREE;
	g->fill = g->ne = 0;
	s->rfree[s->nrfree++] = v;
	s->rclean = KV_NONE;
}

/* Put o at its stream's open region, cleaning first when a region must be opened. */
static bool region_alloc(struct kvsim *s, uint32_t o)
{
	uint64_t key = s->obj[o].key, sz = slot_size(&s->obj[o]);
	unsigned k = kv_obj_stream(s, &s->obj[o]);
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


/* ---- the entry points ---- */

int kv_alloc_init(struct kvsim *s, char *err, size_t errlen)
{
	return s->cfg.alloc == KV_ALLOC_REGION ? region_init(s, err, errlen) : 0;
}

/* Give o (in DRAM, not on SSD) an LBA in the tier: slots evicts the policy's SSD victims of its
 * class until a slot is free; the log head and a region's cleaning evict what is in their way.
 * false when o cannot be placed, or when an eviction took o's ancestor and o with it. */
bool kv_alloc_place(struct kvsim *s, uint32_t o)
{
	struct kv_obj *x = &s->obj[o];
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
		x = &s->obj[o];
	}
	return true;
}

/* x leaves the SSD: give its space back. true when its range is TRIMmed by the allocator (its
 * region is being cleaned, and is TRIMmed whole at the end), so the caller must not. */
bool kv_alloc_forget(struct kvsim *s, struct kv_obj *x)
{
	if (s->cfg.alloc == KV_ALLOC_SLOTS)
		slot_free(s, x);
	if (s->cfg.alloc != KV_ALLOC_REGION)
		return false;
	s->reg[lba_region(s, x->lba)].live -= slot_size(x);
	return lba_region(s, x->lba) == s->rclean;
}

void kv_alloc_fini(struct kvsim *s)
{
	free(s->freeslot[0]);
	free(s->freeslot[1]);
	free(s->ring);
	region_release(s);
}
