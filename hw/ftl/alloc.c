/*
 * alloc.c - write frontiers, free pools and the sets of closed GC units.
 *
 * A write frontier is where a stream's units land: host streams 0..host_streams-1 and, when
 * gc_stream=separate, one GC frontier that keeps relocated (cold) data away from hot host data
 * (shared and shared-burst put GC copies on host frontier 0; see frontier_open()).
 * A frontier has one slot per plane. Units fill a slot's open page; when the page holds
 * units_per_page units it is programmed and the frontier moves to the next slot, so consecutive
 * pages of a stream go to different channels/LUNs (channel-fastest striping).
 *   - gc_unit=block: each slot owns its own open block, taken from its plane's free pool.
 *   - gc_unit=superblock: the frontier owns one superblock; slot i is its block on plane i, and
 *     retired members are skipped.
 *
 * Free pools are binary min-heaps keyed by erase count, so the least-worn free unit is always
 * taken first (dynamic wear leveling). Host allocations may not dig into the last
 * fg_free_gc_units free units: below that they run foreground GC first. GC allocations may use
 * the whole pool; the reserve exists so they always can, which is why GC never wedges.
 *
 * Closed GC units (full, holding data) sit in: a dense array (d-choice, cost-benefit, static
 * WL scans), valid-count buckets (greedy, O(1) victim selection), and a ring in close order
 * (FIFO, with lazy deletion of entries whose unit was reclaimed out of order).
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "ftl_int.h"

/* Greedy rank: units that cannot be reclaimed (valid ones, and capacity lost to bad blocks). */
static inline uint32_t gu_key(const struct ftl *f, const struct gu *u)
{
	return u->valid + (f->upg - u->cap);
}

/* ---- free pools ---- */

static void heap_swap(struct ftl *f, struct heap *h, uint32_t i, uint32_t j)
{
	uint32_t t = h->a[i];
	h->a[i] = h->a[j];
	h->a[j] = t;
	f->gu[h->a[i]].pos = i;
	f->gu[h->a[j]].pos = j;
}

static void heap_up(struct ftl *f, struct heap *h, uint32_t i)
{
	while (i && f->gu[h->a[(i - 1) / 2]].erase > f->gu[h->a[i]].erase) {
		heap_swap(f, h, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
}

static void heap_down(struct ftl *f, struct heap *h, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < h->n && f->gu[h->a[l]].erase < f->gu[h->a[m]].erase)
			m = l;
		if (r < h->n && f->gu[h->a[r]].erase < f->gu[h->a[m]].erase)
			m = r;
		if (m == i)
			return;
		heap_swap(f, h, i, m);
		i = m;
	}
}

uint32_t heap_min_key(const struct ftl *f, const struct heap *h)
{
	return h->n ? f->gu[h->a[0]].erase : UINT32_MAX;
}

void ftl_pool_put(struct ftl *f, uint32_t g)
{
	struct gu *u = &f->gu[g];
	struct heap *h = &f->pool[u->pool];
	u->state = GU_FREE;
	u->valid = 0;
	u->pos = h->n;
	h->a[h->n++] = g;
	heap_up(f, h, u->pos);
	f->nfree++;
}

static uint32_t pool_take(struct ftl *f, uint32_t want)
{
	struct heap *h = &f->pool[want];
	if (!h->n) {
		/* block mode: this plane is empty, borrow from the fullest pool */
		uint32_t best = 0;
		for (uint32_t i = 1; i < f->npools; i++)
			if (f->pool[i].n > f->pool[best].n)
				best = i;
		h = &f->pool[best];
		if (!h->n)
			return NONE;
	}
	uint32_t g = h->a[0];
	h->a[0] = h->a[--h->n];
	if (h->n) {
		f->gu[h->a[0]].pos = 0;
		heap_down(f, h, 0);
	}
	f->nfree--;
	f->gu[g].state = GU_OPEN;
	f->gu[g].valid = 0;
	f->nopen++;
	return g;
}

/* ---- closed sets ---- */

static void bucket_link(struct ftl *f, uint32_t g, uint32_t k)
{
	struct gu *u = &f->gu[g];
	u->prev = NONE;
	u->next = f->bucket[k];
	if (u->next != NONE)
		f->gu[u->next].prev = g;
	f->bucket[k] = g;
	if (k < f->min_bucket)
		f->min_bucket = k;
}

static void bucket_unlink(struct ftl *f, uint32_t g, uint32_t k)
{
	struct gu *u = &f->gu[g];
	if (u->prev != NONE)
		f->gu[u->prev].next = u->next;
	else
		f->bucket[k] = u->next;
	if (u->next != NONE)
		f->gu[u->next].prev = u->prev;
}

/* A closed unit lost one valid unit: move it from bucket "from" to the next lower one. */
void ftl_bucket_move(struct ftl *f, uint32_t g, uint32_t from)
{
	bucket_unlink(f, g, from);
	bucket_link(f, g, from - 1);
}

/* A closed unit lost n valid units at once: the state n ftl_bucket_move() calls leave. */
void ftl_bucket_drop(struct ftl *f, uint32_t g, uint32_t from, uint32_t n)
{
	bucket_unlink(f, g, from);
	bucket_link(f, g, from - n);
}

/* A unit was placed in g after g closed (its last unit closes it before being mapped). */
void ftl_bucket_up(struct ftl *f, uint32_t g, uint32_t from)
{
	bucket_unlink(f, g, from);
	bucket_link(f, g, from + 1);
}

void ftl_closed_add(struct ftl *f, uint32_t g)
{
	struct gu *u = &f->gu[g];
	u->state = GU_CLOSED;
	u->close_seq = ++f->close_seq;
	u->pos = f->nclosed;
	f->closed[f->nclosed++] = g;
	f->nopen--;
	if (f->cfg.gc_policy == FTL_GC_GREEDY)
		bucket_link(f, g, gu_key(f, u));
	if (f->cfg.gc_policy == FTL_GC_FIFO) {
		uint32_t cap = 2 * f->g.gc_units;
		if (f->fifo_n == cap) {
			/* drop stale entries (units reclaimed out of order by static WL) */
			uint32_t n = 0;
			for (uint32_t i = 0; i < f->fifo_n; i++) {
				struct fifo_ent e = f->fifo[(f->fifo_head + i) % cap];
				if (f->gu[e.gu].state == GU_CLOSED && f->gu[e.gu].close_seq == e.seq)
					f->fifo[n++] = e;
			}
			f->fifo_head = 0;
			f->fifo_n = n;
		}
		f->fifo[(f->fifo_head + f->fifo_n++) % cap] = (struct fifo_ent){.gu = g, .seq = u->close_seq};
	}
}

void ftl_closed_del(struct ftl *f, uint32_t g)
{
	struct gu *u = &f->gu[g];
	uint32_t last = f->closed[--f->nclosed];
	f->closed[u->pos] = last;
	f->gu[last].pos = u->pos;
	if (f->cfg.gc_policy == FTL_GC_GREEDY)
		bucket_unlink(f, g, gu_key(f, u));
	u->state = GU_OPEN; /* being reclaimed; erase sets FREE or RETIRED */
	f->nopen++;
}

/* ---- frontiers ---- */

static void frontier_close_gu(struct ftl *f, uint32_t g)
{
	ftl_closed_add(f, g);
}

/* Next slot of a superblock frontier whose block is good, after slot i (wrapping). */
static uint32_t next_good_slot(const struct ftl *f, const struct frontier *fr, uint32_t i)
{
	const uint32_t n = f->g.frontier_slots;
	for (uint32_t k = 1, j = i; k <= n; k++) {
		j = j + 1 == n ? 0 : j + 1; /* (i + k) % n, without a divide per page */
		if (fr->slot[j].gblk != NONE)
			return j;
	}
	return NONE;
}

/* Give slot fr->cur an open block. Host frontiers run foreground GC first when space is low. */
static int frontier_open(struct ftl *f, uint32_t fid, uint64_t now, uint64_t *gc_end)
{
	struct frontier *fr = &f->fr[fid];
	bool sb = f->cfg.gc_unit == FTL_GC_SUPERBLOCK;

	if (!f->in_gc) {
		/*
		 * Reclaim until the pool is above the foreground threshold (gc_stream=separate and
		 * shared-burst), even if GC opened this very slot meanwhile (shared-burst):
		 * otherwise blocks that GC opens for the host frontier would let the host eat into
		 * the reserve a little at a time. In shared-burst mode that burst lets the copies
		 * of several victims fill whole blocks of their own before the host writes again
		 * (FEMU's bbssd does the same), which segregates them almost as separate does
		 * (docs/ftl.md).
		 *
		 * gc_stream=shared is the mixed pool at victim granularity: as soon as one victim's
		 * copies have opened this slot and the pool is back at the threshold, the host
		 * writes right behind them in the same block, so each block holds one victim's
		 * survivors followed by host data (Desnoyers' single write point). The reserve is
		 * intact: the host takes no block from the pool here. Other host streams never get
		 * a slot opened by GC, so they see the burst rule.
		 */
		bool mixed = f->cfg.gc_stream == FTL_GC_SHARED && fid == f->gc_fr;
		while (f->nfree <= f->g.fg_free_gc_units) {
			if (mixed && f->nfree == f->g.fg_free_gc_units &&
			    (sb ? fr->gu != NONE : fr->slot[fr->cur].gblk != NONE))
				return FTL_OK;
			int rc = ftl_gc_one(f, now, true);
			if (f->st.read_only)
				return FTL_E_WORN; /* this GC retired the blocks that ended the device's life */
			if (rc)
				return rc;
			if (gc_end)
				*gc_end = max64(*gc_end, f->clock);
		}
		if (sb ? fr->gu != NONE : fr->slot[fr->cur].gblk != NONE)
			return FTL_OK;
	}
	uint32_t g = pool_take(f, sb ? 0 : fr->cur);
	if (g == NONE)
		return FTL_E_FULL;
	fr->used = 1;
	f->gu[g].owner = fr->owner;
	if (!sb) {
		fr->slot[fr->cur] = (struct slot){.gblk = g, .page = 0, .unit = 0, .ready = 0};
		return FTL_OK;
	}
	fr->gu = g;
	for (uint32_t i = 0; i < f->bpg; i++) {
		uint32_t b = g * f->bpg + i;
		fr->slot[i] = (struct slot){.gblk = f->blk[b].bad ? NONE : b};
	}
	fr->cur = f->blk[g * f->bpg].bad ? next_good_slot(f, fr, 0) : 0;
	return FTL_OK;
}

/* The open page of the current slot is full (or padded): program it and move on. */
static uint64_t frontier_program(struct ftl *f, struct frontier *fr, uint64_t now, bool host)
{
	struct slot *s = &fr->slot[fr->cur];
	uint64_t done = ftl_time_program(f, s->gblk, now);
	if (host)
		ftl_wbuf_done(f, done);
	f->own_media[fr->owner] += f->cfg.page_size;
	s->unit = 0;
	s->page++;
	f->blk[s->gblk].wp = s->page; /* pages below wp are on NAND; the rest is buffered */
	{
		/* the frontier's pages stripe over its slots, so each slot's P2L is its own stream:
		 * start fetching the P2L line of the page a few slots ahead will fill (its p2l_pg
		 * entry when there is one: a whole page goes there, and p2l may never have been
		 * touched, its pages not even mapped, where a prefetch costs a page walk for nothing) */
		uint32_t n = f->g.frontier_slots, j = fr->cur + 8 < n ? fr->cur + 8 : (fr->cur + 8) % n;
		const struct slot *a = &fr->slot[j];
		if (a->gblk != NONE && a->page < f->ppb) {
			if (f->p2l_pg)
				__builtin_prefetch(&f->p2l_pg[(uint64_t)a->gblk * f->ppb + a->page], 1);
			else
				__builtin_prefetch(&f->p2l[a->gblk * f->upb + a->page * f->upp], 1);
		}
	}
	if (f->cfg.gc_unit == FTL_GC_BLOCK) {
		if (s->page == f->ppb) {
			frontier_close_gu(f, s->gblk);
			s->gblk = NONE;
		}
		fr->cur = fr->cur + 1 == f->g.frontier_slots ? 0 : fr->cur + 1;
		return done;
	}
	uint32_t nx = next_good_slot(f, fr, fr->cur);
	if (nx <= fr->cur && s->page == f->ppb) {
		/* the last good member finished its last page: the superblock is full */
		frontier_close_gu(f, fr->gu);
		fr->gu = NONE;
		for (uint32_t i = 0; i < f->g.frontier_slots; i++)
			fr->slot[i].gblk = NONE;
		fr->cur = 0;
		return done;
	}
	fr->cur = nx;
	return done;
}

/*
 * Reserve the next physical unit of frontier fid for one unit of the given cause and return
 * it (NONE on failure, with *err set). *ready receives, for host units, the time its page got a
 * write-buffer slot, and any foreground GC end time.
 */
uint32_t ftl_frontier_take(struct ftl *f, uint32_t fid, uint64_t now, int *err, uint8_t cause,
			   uint64_t *ready)
{
	struct frontier *fr = &f->fr[fid];
	bool sb = f->cfg.gc_unit == FTL_GC_SUPERBLOCK;
	struct slot *s;
	uint64_t gc_end = 0;

	while (sb ? fr->gu == NONE : fr->slot[fr->cur].gblk == NONE) {
		int rc = frontier_open(f, fid, now, cause == PROG_HOST ? &gc_end : NULL);
		if (rc) {
			*err = rc;
			return NONE;
		}
	}
	s = &fr->slot[fr->cur];
	assert(s->page < f->ppb && s->unit < f->upp);
	uint32_t ppn = s->gblk * f->upb + s->page * f->upp + s->unit;
	if (cause == PROG_HOST) {
		if (s->unit == 0)
			s->ready = ftl_wbuf_wait(f, now);
		if (ready)
			*ready = max64(s->ready, gc_end);
	}
	ftl_count_prog(f, cause, 1);
	if (++s->unit == f->upp)
		frontier_program(f, fr, now, cause == PROG_HOST);
	return ppn;
}

/*
 * Reserve up to want consecutive units of frontier fid's open page at once, as that many
 * ftl_frontier_take(cause) calls would, but never the page's last unit (taking it programs the
 * page, which must follow the mapping of the units before it): *n receives the count, 0 (and
 * nothing done) when the page has one free unit left. Returns the first unit's ppn, or NONE
 * with *err set when the frontier could not get a block. *ready as for ftl_frontier_take (host
 * units only; may be NULL). The caller counts the units' program bytes (ftl_count_prog) before
 * it returns: the counters are read by no one in between, and one update per command keeps
 * them out of the loop. Needs units_per_page >= 2.
 */
static inline uint32_t take_run(struct ftl *f, uint32_t fid, uint64_t now, uint32_t want,
				uint32_t *n, int *err, uint8_t cause, uint64_t *ready, bool *full)
{
	struct frontier *fr = &f->fr[fid];
	bool sb = f->cfg.gc_unit == FTL_GC_SUPERBLOCK;
	uint64_t gc_end = 0;
	*n = 0;
	if (!full && !(sb ? fr->gu == NONE : fr->slot[fr->cur].gblk == NONE) &&
	    fr->slot[fr->cur].unit + 1 >= f->upp)
		return NONE;
	while (sb ? fr->gu == NONE : fr->slot[fr->cur].gblk == NONE) {
		int rc = frontier_open(f, fid, now, cause == PROG_HOST ? &gc_end : NULL);
		if (rc) {
			*err = rc;
			return NONE;
		}
	}
	struct slot *s = &fr->slot[fr->cur];
	uint32_t k = f->upp - (full ? 0 : 1) - s->unit;
	if (k > want)
		k = want;
	if (full)
		*full = s->unit + k == f->upp;
	uint32_t ppn = s->gblk * f->upb + s->page * f->upp + s->unit;
	if (cause == PROG_HOST) {
		if (s->unit == 0)
			s->ready = ftl_wbuf_wait(f, now);
		if (ready)
			*ready = max64(s->ready, gc_end);
	}
	s->unit += k;
	*n = k;
	return ppn;
}

uint32_t ftl_frontier_take_run(struct ftl *f, uint32_t fid, uint64_t now, uint32_t want,
			       uint32_t *n, int *err, uint8_t cause, uint64_t *ready)
{
	return take_run(f, fid, now, want, n, err, cause, ready, NULL);
}

/*
 * ftl_frontier_take_run() that may take the page's last unit as well: *full tells whether it
 * did. The page is then full but not programmed; the caller maps the units (the program may
 * close the GC unit, whose greedy bucket follows its valid count) and then calls
 * ftl_frontier_fill(). One call per page of a large write instead of three.
 */
uint32_t ftl_frontier_take_to_end(struct ftl *f, uint32_t fid, uint64_t now, uint32_t want,
				  uint32_t *n, int *err, uint8_t cause, uint64_t *ready, bool *full)
{
	return take_run(f, fid, now, want, n, err, cause, ready, full);
}

/* Program the full open page that ftl_frontier_take_to_end() left (its units mapped). */
void ftl_frontier_fill(struct ftl *f, uint32_t fid, uint64_t now, uint8_t cause)
{
	struct frontier *fr = &f->fr[fid];
	assert(fr->slot[fr->cur].unit == f->upp);
	frontier_program(f, fr, now, cause == PROG_HOST);
}

/*
 * Program the partly filled page of frontier fid, padding it with invalid units. Only the
 * current slot can hold a partial page: the frontier moves on right after each program.
 */
void ftl_frontier_pad(struct ftl *f, uint32_t fid, uint64_t now, uint64_t *done)
{
	struct frontier *fr = &f->fr[fid];
	struct slot *s = &fr->slot[fr->cur];
	if (s->gblk == NONE || !s->unit)
		return;
	ftl_count_prog(f, PROG_PAD, f->upp - s->unit);
	uint64_t t = frontier_program(f, fr, now, fid != f->gc_fr && fid < f->cfg.host_streams);
	if (done)
		*done = max64(*done, t);
}

int ftl_alloc_init(struct ftl *f)
{
	uint32_t n = f->g.gc_units;
	f->npools = f->cfg.gc_unit == FTL_GC_SUPERBLOCK ? 1 : f->g.planes;
	f->pool = calloc(f->npools, sizeof(*f->pool));
	f->bucket = malloc((size_t)(f->upg + 1) * sizeof(uint32_t));
	/* zeroed: the snapshot stores these arrays whole, unused tails included */
	f->closed = calloc(n ? n : 1, sizeof(uint32_t));
	f->fifo = f->cfg.gc_policy == FTL_GC_FIFO ? calloc((size_t)2 * n, sizeof(*f->fifo)) : NULL;
	f->nfr = ftl_config_frontiers(&f->cfg);
	f->gc_fr = f->cfg.gc_stream == FTL_GC_SEPARATE ? f->cfg.host_streams : 0;
	f->gc_dst = f->gc_fr;
	f->fr = calloc(f->nfr, sizeof(*f->fr));
	if (!f->pool || !f->bucket || !f->closed || !f->fr ||
	    (f->cfg.gc_policy == FTL_GC_FIFO && !f->fifo))
		return FTL_E_NOMEM;
	for (uint32_t i = 0; i <= f->upg; i++)
		f->bucket[i] = NONE;
	f->min_bucket = f->upg;
	for (uint32_t i = 0; i < f->nfr; i++) {
		/* host frontier i is stream (handle) i's; a GC frontier is the controller's, or with
		 * persistently isolated handles handle i - host_streams's */
		uint32_t h = f->cfg.host_streams;
		f->fr[i].owner = (uint16_t)(i < h || ftl_config_pi(&f->cfg) ? i % h : h);
		f->fr[i].gu = NONE;
		f->fr[i].slot = calloc(f->g.frontier_slots, sizeof(struct slot));
		if (!f->fr[i].slot)
			return FTL_E_NOMEM;
		for (uint32_t j = 0; j < f->g.frontier_slots; j++)
			f->fr[i].slot[j].gblk = NONE;
	}
	for (uint32_t i = 0; i < f->npools; i++) {
		f->pool[i].a = malloc((size_t)(n / f->npools + 1) * sizeof(uint32_t));
		if (!f->pool[i].a)
			return FTL_E_NOMEM;
	}
	for (uint32_t g = 0; g < n; g++)
		f->gu[g].pool = f->cfg.gc_unit == FTL_GC_SUPERBLOCK ? 0 : plane_of(f, g);
	return FTL_OK;
}

/* Close RU g of handle ruh, whose open blocks are the n slots s (ftl_fdp_ruh_update). */
static void ruh_close(struct ftl *f, unsigned ruh, uint32_t g, const struct slot *s, uint32_t n,
                      uint64_t now)
{
	bool written = false, full = true;
	for (uint32_t k = 0; k < n; k++) {
		if (s[k].gblk == NONE)
			continue;
		written |= s[k].page > 0;
		full &= s[k].page == f->ppb;
	}
	if (!written) {
		f->nopen--;
		ftl_pool_put(f, g);
		return;
	}
	frontier_close_gu(f, g);
	if (!full)
		ftl_fdp_event(f, FTL_FDP_EV_RU_NOT_FULLY_WRITTEN, ruh, g, now, 0);
}

/*
 * FDP's Reclaim Unit Handle Update: handle ruh's open RU is closed as it is, so that its next
 * write opens a new one. The open page is padded first (a drive programs what it buffered). A
 * GC unit nothing was written to goes back to the free pool; one with pages left unwritten is
 * closed all the same (GC reclaims the unwritten space with the erase) and logged as not fully
 * written. In block mode the handle's open block on every plane is closed.
 */
int ftl_fdp_ruh_update(struct ftl *f, unsigned ruh, uint64_t now, uint64_t *done)
{
	if (ruh >= f->cfg.host_streams)
		return FTL_E_INVAL;
	if (f->st.read_only)
		return FTL_E_WORN;
	struct frontier *fr = &f->fr[ruh];
	uint64_t d = now;
	ftl_frontier_pad(f, ruh, now, &d);
	if (f->cfg.gc_unit == FTL_GC_SUPERBLOCK) {
		if (fr->gu != NONE) {
			ruh_close(f, ruh, fr->gu, fr->slot, f->g.frontier_slots, now);
			fr->gu = NONE;
			for (uint32_t k = 0; k < f->g.frontier_slots; k++)
				fr->slot[k].gblk = NONE;
		}
	} else {
		for (uint32_t i = 0; i < f->g.frontier_slots; i++)
			if (fr->slot[i].gblk != NONE) {
				ruh_close(f, ruh, fr->slot[i].gblk, &fr->slot[i], 1, now);
				fr->slot[i].gblk = NONE;
			}
	}
	fr->cur = 0;
	f->clock = max64(f->clock, d);
	if (done)
		*done = d;
	return FTL_OK;
}
