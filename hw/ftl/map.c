/*
 * map.c - the host I/O path: write, read, trim, flush over the L2P / P2L / valid-bitmap tables.
 *
 * Invariants kept here (ftl_check() verifies them):
 *   - l2p[lpn] = ppn+1  <=>  valid bit ppn set and p2l[ppn] = lpn+1;
 *   - gu[g].valid = number of valid bits in GC unit g.
 * A unit is written by first reserving its new physical place (which may run GC and move the
 * unit's old copy), then reading l2p to find the old copy, invalidating it and mapping the new
 * one. In that order a failed allocation leaves the old data untouched: nothing is lost.
 *
 * Partial units: a write covering part of a unit is a read-modify-write: the old copy is read
 * (when mapped; counted in rmw_units) and the whole unit is programmed. A trim covering part of a
 * unit leaves it alone (counted in trim_partial_units), as drives with a larger indirection unit
 * do; attachments that need zeroes there write them.
 *
 * The asserts at the points that change the tables (compiled into the debug and ASan builds,
 * out of the release build) catch a broken invariant at the line that breaks it; ftl_check()
 * after the fact would name only the state it finds.
 */
#include <assert.h>

#include "ftl_int.h"

/* Point lpn at ppn (its old copy, if any, already invalidated). */
static inline void map_set(struct ftl *f, uint32_t lpn, uint32_t ppn)
{
	assert(lpn < f->g.user_units && ppn < f->g.phys_units && !bit_get(f->valid, ppn));
	f->l2p[lpn] = ppn + 1;
	f->p2l[ppn] = lpn + 1;
	bit_set(f->valid, ppn);
	struct gu *u = &f->gu[gu_of(f, ppn)];
	if (u->state == GU_CLOSED && f->cfg.gc_policy == FTL_GC_GREEDY)
		ftl_bucket_up(f, gu_of(f, ppn), u->valid + (f->upg - u->cap));
	u->valid++;
}

/* a host write of lpn to ppn */
static inline void map_unit(struct ftl *f, uint32_t lpn, uint32_t ppn)
{
	uint32_t old = f->l2p[lpn];
	if (old)
		ftl_invalidate(f, old - 1);
	map_set(f, lpn, ppn);
	ucls_host(f, ppn, 1);
}

void ftl_invalidate(struct ftl *f, uint32_t ppn)
{
	struct gu *u = &f->gu[gu_of(f, ppn)];
	assert(ppn < f->g.phys_units && bit_get(f->valid, ppn) && u->valid > 0);
	bit_clr(f->valid, ppn);
	if (f->sp_whole)
		bit_clr(f->sp_whole, spage_of(f, ppn));
	if (u->state == GU_CLOSED && f->cfg.gc_policy == FTL_GC_GREEDY)
		ftl_bucket_move(f, gu_of(f, ppn), u->valid + (f->upg - u->cap));
	u->valid--;
}

/*
 * Block gblk is erased: its pages' p2l_pg entries go. Only the set ones are written, so the
 * table's pages that only ever held zeroes stay untouched (no memory) on a drive written in
 * single units.
 */
void ftl_p2l_forget(struct ftl *f, uint32_t gblk)
{
	if (!f->p2l_pg)
		return;
	uint32_t *e = f->p2l_pg + (uint64_t)gblk * f->ppb;
	for (uint32_t i = 0; i < f->ppb; i++)
		if (e[i])
			e[i] = 0;
}

/*
 * Write the units of pages recorded in p2l_pg into p2l too, so that p2l alone is the P2L a
 * snapshot stores (its format predates p2l_pg); p2l_get() gives the same either way.
 */
void ftl_p2l_materialize(const struct ftl *f)
{
	if (!f->p2l_pg)
		return;
	for (uint64_t pg = 0; pg < (uint64_t)f->g.blocks * f->ppb; pg++)
		if (f->p2l_pg[pg])
			for (uint32_t i = 0; i < f->upp; i++)
				f->p2l[pg * f->upp + i] = f->p2l_pg[pg] + i;
}

/*
 * Invalidations of a range (trim, overwrite), batched per GC unit: consecutive ones that fall
 * in the same GC unit update its count and greedy bucket once. The state is the one n
 * ftl_invalidate() calls leave; inval_flush() must run before anything else reads the counts.
 */
struct inval {
	uint32_t gu, n;
	uint32_t page; /* the last page whose stripe certificate was cleared */
};

static inline void inval_flush(struct ftl *f, struct inval *iv)
{
	if (!iv->n)
		return;
	struct gu *u = &f->gu[iv->gu];
	assert(u->valid >= iv->n);
	if (u->state == GU_CLOSED && f->cfg.gc_policy == FTL_GC_GREEDY)
		ftl_bucket_drop(f, iv->gu, u->valid + (f->upg - u->cap), iv->n);
	u->valid -= iv->n;
	iv->n = 0;
}

static inline __attribute__((always_inline)) void inval_add(struct ftl *f, struct inval *iv,
                                                           uint32_t ppn)
{
	uint32_t g = gu_of(f, ppn);
	assert(ppn < f->g.phys_units && bit_get(f->valid, ppn));
	bit_clr(f->valid, ppn);
	if (f->sp_whole) { /* the page no longer holds all its units: once per page */
		uint32_t pg = page_of(f, ppn);
		if (pg != iv->page) {
			iv->page = pg;
			bit_clr(f->sp_whole, spage_of(f, ppn));
		}
	}
	if (g != iv->gu) {
		inval_flush(f, iv);
		iv->gu = g;
	}
	iv->n++;
}

/*
 * Page ppn.. now holds lpn.. lpn + upp - 1, all valid (a whole page, mapped from frontier fr
 * before its program, so fr's current slot is that page): its stripe certificate, and whether
 * it continues the page before it in write order (same superblock; that page whole, its last
 * unit lpn - 1). The page's place in write order comes from the frontier (the superblock, the
 * member, the row), not from dividing ppn: this runs for every page of a KV replay.
 */
static void certify_page(struct ftl *f, const struct frontier *fr, uint32_t lpn, uint32_t ppn)
{
	const uint32_t P = f->bpg, m = fr->cur, b = fr->slot[m].gblk, row = fr->slot[m].page;
	const uint64_t s = ((uint64_t)fr->gu * f->ppb + row) * P + m;
	assert((uint64_t)b * f->upb + (uint64_t)row * f->upp == ppn && s == spage_of(f, ppn));
	(void)ppn;
	bit_set(f->sp_whole, s);
	if ((!row && !m) || !lpn || !bit_get(f->sp_whole, s - 1))
		return; /* the superblock's first page, or the page before is not whole */
	/* the page before: the member before on the same row, or the last member a row up */
	const uint64_t prev = (uint64_t)(m ? b - 1 : b + P - 1) * f->ppb + (m ? row : row - 1);
	const uint32_t h = f->p2l_pg ? f->p2l_pg[prev] : 0; /* (lpn + 1 of its unit 0) */
	if ((h ? h + f->upp - 1 : f->p2l[(prev + 1) * f->upp - 1]) == lpn) /* its last: lpn - 1 */
		bit_set(f->sp_cont, s);
}

/*
 * map_unit() for n units lpn.. to ppn.. of one open (not closed) GC unit, as n calls would
 * leave it: the open unit has no bucket to keep, so its valid count moves once. Host writes.
 */
static inline void map_run(struct ftl *f, const struct frontier *fr, uint32_t lpn, uint32_t ppn,
                           uint32_t n)
{
	struct inval iv = {NONE, 0, NONE};
	const bool whole = f->p2l_pg && n == f->upp; /* the page's lpns go to p2l_pg */
	uint32_t *l2p = f->l2p + lpn;
	/* each unit's old copy, then its new mapping (the new units were never valid: no old
	 * copy is among them) */
	for (uint32_t i = 0; i < n; i++) {
		if (l2p[i])
			inval_add(f, &iv, l2p[i] - 1);
		l2p[i] = ppn + i + 1;
	}
	if (whole)
		f->p2l_pg[page_of(f, ppn)] = lpn + 1;
	else
		for (uint32_t i = 0; i < n; i++)
			f->p2l[ppn + i] = lpn + i + 1;
	bits_set(f->valid, ppn, n);
	inval_flush(f, &iv);
	f->gu[gu_of(f, ppn)].valid += n;
	ucls_host(f, ppn, n);
	if (f->sp_whole && n == f->upp)
		certify_page(f, fr, lpn, ppn);
}

/*
 * Whole pages of a host write, lpn.. (npg pages), into frontier fid's open superblock a page
 * per slot in stripe order: what ftl_frontier_take_to_end(), map_run() and ftl_frontier_fill()
 * leave page by page, with what the pages share done once at the end (the GC unit's valid
 * count, the attribution's and the media's byte counts) and the frontier's checks made once
 * per page instead of once per step. Per page remain its L2P entries, its p2l_pg entry, its
 * valid bits, its attribution bytes, its certificates, its write-buffer slot and its program's
 * timing (ftl_time_program(): the planes and channels a stripe shares make it a recurrence, so
 * it stays one step per page). Returns the pages written (*done: the latest buffer-slot time)
 * and stops, possibly at 0, before a page that takes the general path: the superblock's last
 * page (its program closes the GC unit), a page followed by a bad block's slot, or no open
 * superblock (opening may run GC). Old copies of a page's units are invalidated as map_run()
 * does, a page at a time (one greedy bucket move per GC unit and page, in the same order).
 * Needs p2l_pg and the certificates (a superblock of one block per plane) and a power-of-two
 * units_per_page (a page's valid bits in one word): ftl_write() checks that.
 */
static inline __attribute__((always_inline)) uint32_t
stripe_run(struct ftl *f, uint32_t fid, uint32_t lpn, uint64_t npg, uint64_t now, uint64_t *done,
           const uint32_t U)
{
	struct frontier *fr = &f->fr[fid];
	if (fr->gu == NONE || fr->slot[fr->cur].unit)
		return 0;
	/* (in locals: the stores into the tables could otherwise alias them, and reload them) */
	const uint32_t n = f->g.frontier_slots, last = f->ppb - 1, upb = f->upb, ppb = f->ppb;
	const uint64_t mask = U == 64 ? UINT64_MAX : (1ull << U) - 1;
	const uint64_t sp0 = (uint64_t)fr->gu * ppb, P = f->bpg;
	uint32_t *const l2p = f->l2p, *const p2l_pg = f->p2l_pg;
	uint64_t *const valid = f->valid, *const sp_whole = f->sp_whole, *const sp_cont = f->sp_cont;
	uint8_t *const ucls = f->ucls;
	const uint8_t cls = (uint8_t)(f->wcls + 1);
	struct slot *const slot = fr->slot;
	uint32_t m = fr->cur, k = 0;
	uint64_t rdy = *done;
	for (; k < npg; k++, lpn += U) {
		struct slot *s = &slot[m];
		const uint32_t b = s->gblk, row = s->page, ppn = b * upb + row * U;
		uint32_t nx = m + 1 < n ? m + 1 : 0;
		if (slot[nx].gblk == NONE || (nx <= m && row == last))
			break; /* a bad block's slot follows, or this page closes the superblock */
		uint32_t *l = l2p + lpn, any = 0;
		for (uint32_t j = 0; j < U; j++)
			any |= l[j];
		if (any) { /* the old copies, as map_run() invalidates them: batched per page */
			struct inval iv = {NONE, 0, NONE};
			for (uint32_t j = 0; j < U; j++)
				if (l[j])
					inval_add(f, &iv, l[j] - 1);
			inval_flush(f, &iv);
		}
		/* the slot's next line of p2l_pg (16 rows on) and of the valid bitmap (128 pages of 4
		 * units on), fetched long before it is needed: two instructions, and no slower than
		 * fetching the lines 8 slots ahead or nothing (bench --kv, 4 interleaved runs each:
		 * 4.74-5.04 s of CPU against 4.78-5.38 and 4.80-6.24) */
		__builtin_prefetch(&p2l_pg[(uint64_t)b * ppb + row + 16], 1);
		__builtin_prefetch(&valid[(ppn >> 6) + 8], 1);
		const uint64_t ready = ftl_wbuf_wait(f, now);
		s->ready = ready;
		for (uint32_t j = 0; j < U; j++)
			l[j] = ppn + j + 1;
		p2l_pg[(uint64_t)b * ppb + row] = lpn + 1;
		valid[ppn >> 6] |= mask << (ppn & 63);
		ucls_fill(ucls + ppn, cls, U);
		if (!k) {
			certify_page(f, fr, lpn, ppn);
		} else { /* the page before in write order is the one just written, its last lpn - 1 */
			const uint64_t sp = (sp0 + row) * P + m;
			bit_set(sp_whole, sp);
			bit_set(sp_cont, sp);
		}
		ftl_wbuf_done(f, ftl_time_program(f, b, now));
		s->page = row + 1;
		f->blk[b].wp = row + 1;
		rdy = max64(rdy, ready);
		m = nx;
		fr->cur = m; /* (certify_page() reads the page's slot from the frontier) */
	}
	if (k) {
		f->stripe_pages += k;
		f->gu[fr->gu].valid += k * U;
		f->attr.prog[f->wcls][FTL_ATTR_HOST] += (uint64_t)k * U * f->cfg.unit_size;
		f->own_media[fr->owner] += (uint64_t)k * f->cfg.page_size;
	}
	*done = rdy;
	return k;
}

/* stripe_run() with its loops over a page's units unrolled for 16 KiB pages of 4 KiB units */
static uint32_t write_stripe(struct ftl *f, uint32_t fid, uint32_t lpn, uint64_t npg,
                             uint64_t now, uint64_t *done)
{
	return f->upp == 4 ? stripe_run(f, fid, lpn, npg, now, done, 4)
	                   : stripe_run(f, fid, lpn, npg, now, done, f->upp);
}

/*
 * Move n valid units that share one NAND page (GC or WL): one read of that page, then the units
 * to the GC frontier a page at a time, as the host path writes them (a whole page of lpns in
 * order is recorded in p2l_pg and certified). The old copies are known, so L2P is only written,
 * never read: the stores overlap instead of stalling on cache misses one after another.
 */
int ftl_move_run(struct ftl *f, const uint32_t *ppn_old, uint32_t n, uint8_t cause, uint64_t now)
{
	uint32_t gblk = blk_of(f, ppn_old[0]);
	uint64_t t;
	if (f->gc_rd) /* timed with the rest of the victim (gc.c) */
		t = f->gc_rd[page_of(f, ppn_old[0]) - (uint64_t)gu_of(f, ppn_old[0]) * f->bpg * f->ppb];
	else
		t = ftl_time_read(f, gblk, n, now, false);
	f->clock = max64(f->clock, t);
	uint64_t bytes = (uint64_t)n * f->cfg.unit_size;
	f->st.gc_read_bytes += bytes;
	f->st.nand_read_bytes += bytes;
	int err = 0;
	const int why = cause == PROG_GC ? FTL_ATTR_GC : FTL_ATTR_WL;
	if (f->upp == 1) { /* one unit per page: one per call */
		for (uint32_t i = 0; i < n; i++) {
			uint32_t old = ppn_old[i], lpn = p2l_get(f, old) - 1;
			uint32_t ppn = ftl_frontier_take(f, f->gc_dst, t, &err, cause, NULL);
			if (ppn == NONE)
				break;
			ftl_invalidate(f, old);
			map_set(f, lpn, ppn);
			ucls_move(f, &ppn_old[i], ppn, 1, why);
		}
		return err;
	}
	/* what the units share, once: their page (no longer whole), its lpns if it was written
	 * whole, their bitmap word when a page's units lie in one word (units_per_page a power of
	 * two), their GC unit */
	const uint32_t spg = page_of(f, ppn_old[0]), h = f->p2l_pg ? f->p2l_pg[spg] : 0;
	const bool one_word = f->page_word;
	uint64_t run_units = 0;
	if (f->sp_whole)
		bit_clr(f->sp_whole, spage_of(f, ppn_old[0]));
	for (uint32_t i = 0; i < n; i++) {
		/* units into the GC frontier's open page, up to its end: one reservation, the
		 * units mapped, then the page's program if they filled it */
		bool full;
		uint32_t k, ppn = ftl_frontier_take_to_end(f, f->gc_dst, t, n - i, &k, &err, cause,
		                                           NULL, &full);
		if (!k)
			break; /* the frontier could not get a block: err says why */
		uint32_t lpn[64];
		bool seq = f->p2l_pg && k == f->upp; /* a whole page in order? */
		uint64_t clr = 0;
		for (uint32_t j = 0; j < k; j++) {
			uint32_t o = ppn_old[i + j];
			assert(page_of(f, o) == spg && bit_get(f->valid, o));
			lpn[j] = h ? h - 1 + (o - spg * f->upp) : f->p2l[o] - 1;
			seq = seq && lpn[j] == lpn[0] + j;
			if (one_word)
				clr |= 1ull << (o & 63);
			else
				bit_clr(f->valid, o);
			f->l2p[lpn[j]] = ppn + j + 1;
		}
		ucls_move(f, &ppn_old[i], ppn, k, why);
		if (one_word)
			f->valid[ppn_old[i] >> 6] &= ~clr;
		struct inval iv = {gu_of(f, ppn_old[i]), k, NONE};
		inval_flush(f, &iv);
		if (seq) /* as a host write of the whole page records it (ftl_int.h) */
			f->p2l_pg[page_of(f, ppn)] = lpn[0] + 1;
		else
			for (uint32_t j = 0; j < k; j++)
				f->p2l[ppn + j] = lpn[j] + 1;
		bits_set(f->valid, ppn, k);
		f->gu[gu_of(f, ppn)].valid += k;
		if (seq && f->sp_whole)
			certify_page(f, &f->fr[f->gc_dst], lpn[0], ppn);
		if (full)
			ftl_frontier_fill(f, f->gc_dst, t, cause);
		run_units += k;
		i += k - 1;
	}
	ftl_count_prog(f, cause, run_units);
	return err;
}

static int check_range(const struct ftl *f, uint64_t off, uint64_t len)
{
	if (!len || off % FTL_SECTOR || len % FTL_SECTOR)
		return FTL_E_INVAL;
	if (off >= f->g.user_bytes || len > f->g.user_bytes - off)
		return FTL_E_RANGE;
	return FTL_OK;
}

/*
 * Background GC fills idle time: while the free pool is below the background threshold and the
 * device went idle before the host issued this command (every LUN and channel done strictly
 * before now), reclaim victims. A closed-loop host that keeps the device busy gets none; a
 * trace with think time gets GC in its gaps.
 */
static void background_gc(struct ftl *f, uint64_t now)
{
	uint64_t progress = UINT64_MAX;
	if (f->cfg.gc_bg_trigger != FTL_GC_BG_IDLE)
		return;
	while (f->nfree < f->g.bg_free_gc_units && !f->st.read_only && f->clock < now &&
	       f->st.gc_victims != progress) {
		uint64_t idle_from = f->clock;
		progress = f->st.gc_victims;
		if (ftl_gc_one(f, idle_from, false))
			break;
	}
}

/*
 * gc_bg_trigger=command (FEMU bbssd): after every host command, one background GC cycle while the
 * free pool is below the background threshold, whether or not the device is busy. Like any
 * background cycle it skips a victim with less than gc_bg_min_invalid_pct invalid data, so when
 * the threshold cannot be held the pool shrinks until victims are that invalid (FEMU's WAF of
 * about 8 = 1 / (1/8) over a band of over-provisioning), and foreground GC keeps the floor.
 */
static void command_gc(struct ftl *f, uint64_t now)
{
	if (f->cfg.gc_bg_trigger == FTL_GC_BG_COMMAND && f->nfree < f->g.bg_free_gc_units &&
	    !f->st.read_only)
		ftl_gc_one(f, now, false);
}

/* Read one unit's old copy for a read-modify-write; returns when it is in the buffer. */
static uint64_t rmw_read(struct ftl *f, uint32_t lpn, uint64_t now)
{
	uint32_t m = f->l2p[lpn];
	if (!m)
		return now;
	f->st.rmw_units++;
	uint32_t pg = page_of(f, m - 1), gblk = page_blk(f, pg);
	if (pg - gblk * f->ppb >= f->blk[gblk].wp)
		return now; /* still in the write buffer */
	f->st.nand_read_bytes += f->cfg.unit_size;
	return ftl_time_read(f, gblk, 1, now, true);
}

int ftl_write(struct ftl *f, uint64_t off, uint64_t len, unsigned stream, uint64_t now,
	      uint64_t *done_ns)
{
	assert(f && f->l2p && f->p2l && f->valid);
	int rc = check_range(f, off, len), err = 0;
	uint64_t us = f->cfg.unit_size, done = now;
	if (rc)
		return rc;
	if (f->st.read_only)
		return FTL_E_WORN;
	background_gc(f, now);
	if (f->link_fp) /* the data crosses the host link before the controller can place it */
		done = now = ftl_time_link(f, len, now);
	uint32_t fid;
	if (f->cfg.fdp && stream >= f->cfg.host_streams) {
		/* no such handle: the write goes to handle 0, as a drive does, and the log says so */
		ftl_fdp_event(f, FTL_FDP_EV_INVALID_PID, stream > UINT16_MAX ? UINT16_MAX : stream,
		              UINT32_MAX, now, 0);
		fid = 0;
	} else {
		fid = f->cfg.host_streams == 1 ? 0 : stream % f->cfg.host_streams;
	}
	uint64_t first = unit_of(f, off), last = unit_of(f, off + len - 1);
	const bool head_part = unit_rem(f, off) != 0, tail_part = unit_rem(f, off + len) != 0;
	f->st.host_write_cmds++;
	/* whole units, up to but not including a partly written last one */
	uint64_t whole_end = tail_part ? last : last + 1, run_units = 0;
	for (uint64_t lpn = first; lpn <= last; lpn++) {
		uint64_t t = now, ready = now;
		if (f->upp > 1 && lpn < whole_end && (lpn != first || !head_part)) {
			if (f->stripe_writes && !f->host_per_unit && whole_end - lpn >= f->upp) {
				/* whole pages, a page per slot of the open superblock (as many as it
				 * takes before a page needs the general path below) */
				uint32_t r = write_stripe(f, fid, (uint32_t)lpn,
				                          (whole_end - lpn) / f->upp, now, &done);
				if (r) {
					run_units += (uint64_t)r * f->upp;
					lpn += (uint64_t)r * f->upp - 1;
					continue;
				}
			}
			/* a run of whole units into the open page, up to its end: one reservation for
			 * all, then the page's program once they are mapped */
			uint64_t want = whole_end - lpn;
			bool full;
			uint32_t n, ppn = ftl_frontier_take_to_end(f, fid, now,
			                                           want < f->upp ? (uint32_t)want : f->upp,
			                                           &n, &err, PROG_HOST, &ready, &full);
			if (n) {
				run_units += n;
				map_run(f, &f->fr[fid], (uint32_t)lpn, ppn, n);
				if (full)
					ftl_frontier_fill(f, fid, now, PROG_HOST);
				done = max64(done, ready);
				lpn += n - 1;
				continue;
			}
			/* nothing taken: the frontier could not get a block (units before are
			 * written; count exactly what was) */
			ftl_count_prog(f, PROG_HOST, run_units);
			f->st.host_write_bytes += lpn == first ? 0 : (lpn * us - off);
			f->own_host[fid] += lpn == first ? 0 : (lpn * us - off);
			ftl_stats_tick(f);
			return err;
		}
		if ((lpn == first && head_part) || (lpn == last && tail_part))
			t = rmw_read(f, (uint32_t)lpn, now);
		uint32_t ppn = ftl_frontier_take(f, fid, t, &err, PROG_HOST, &ready);
		if (ppn == NONE) {
			/* units before this one are written; count exactly what was */
			ftl_count_prog(f, PROG_HOST, run_units);
			f->st.host_write_bytes += lpn == first ? 0 : (lpn * us - off);
			f->own_host[fid] += lpn == first ? 0 : (lpn * us - off);
			ftl_stats_tick(f);
			return err;
		}
		map_unit(f, (uint32_t)lpn, ppn);
		done = max64(done, max64(t, ready));
	}
	ftl_count_prog(f, PROG_HOST, run_units);
	f->st.host_write_bytes += len;
	f->own_host[fid] += len;
	done += f->t_cmd_ns;
	f->clock = max64(f->clock, done);
	command_gc(f, now);
	ftl_stats_tick(f);
	if (done_ns)
		*done_ns = done;
	return FTL_OK;
}

/* ftl_time_read() of a host read, folded into its completion time */
static inline __attribute__((always_inline)) uint64_t time_read(struct ftl *f, uint32_t gblk,
                                                                uint32_t units, uint64_t now,
                                                                uint64_t done)
{
	return max64(done, ftl_time_read(f, gblk, units, now, true));
}

/* Stage 2 of the batch's prefetch: the old copy's valid-bitmap word and GC-unit record. */
static inline void prefetch_old(const struct ftl *f, const struct ftl_wreq *w)
{
	if (check_range(f, w->off, w->len))
		return;
	uint32_t m = f->l2p[unit_of(f, w->off)];
	if (m) {
		prefetch_w(&f->valid[(m - 1) >> 6]);
		prefetch_w(&f->gu[gu_of(f, m - 1)]);
	}
}

int ftl_write_batch(struct ftl *f, const struct ftl_wreq *w, size_t n, uint64_t *done_ns,
		    size_t *ndone)
{
	const size_t k = FTL_BATCH_AHEAD;
	int rc = FTL_OK;
	uint64_t prev = 0;
	size_t i;
	if (n && w[0].now_ns == FTL_NOW_PREV) {
		if (ndone)
			*ndone = 0;
		return FTL_E_INVAL;
	}
	for (i = 0; i < n && i < 2 * k; i++)
		ftl_prefetch(f, w[i].off, w[i].len);
	for (i = 0; i < n && i < k; i++)
		prefetch_old(f, &w[i]);
	for (i = 0; i < n; i++) {
		if (i + 2 * k < n)
			ftl_prefetch(f, w[i + 2 * k].off, w[i + 2 * k].len);
		if (i + k < n)
			prefetch_old(f, &w[i + k]);
		uint64_t now = w[i].now_ns == FTL_NOW_PREV ? prev : w[i].now_ns;
		rc = ftl_write(f, w[i].off, w[i].len, w[i].stream, now, &prev);
		if (rc)
			break;
		if (done_ns)
			done_ns[i] = prev;
	}
	if (ndone)
		*ndone = i;
	return rc;
}

/*
 * Do l[1..U) follow l[0] = m, i.e. are the U units one page's in order? Inline with a constant
 * U (4: 16 KiB pages of 4 KiB units) the loop is one vector compare, where a loop over a
 * variable count costs about 12 instructions a page on the read and TRIM paths.
 */
static inline __attribute__((always_inline)) bool units_follow(const uint32_t *l, uint32_t m,
                                                               uint32_t U)
{
	uint32_t bad = 0;
	for (uint32_t k = 1; k < U; k++)
		bad |= l[k] ^ (m + k);
	return !bad;
}
static inline __attribute__((always_inline)) bool page_follows(const struct ftl *f,
                                                               const uint32_t *l, uint32_t m)
{
	return f->upp == 4 ? units_follow(l, m, 4) : units_follow(l, m, f->upp);
}

/*
 * Units l2p[0, npg * upp) are the pages of a stripe: page k on slot (s0 + k) mod P of the
 * superblock whose first unit is base, row r0 + (s0 + k) / P. Inline, and called with a
 * constant upp where it is 4 (16 KiB pages of 4 KiB units), so that the compare of a page
 * is one vector operation. Stops at the first row with a unit out of place.
 */
static inline __attribute__((always_inline)) bool
stripe_intact(const uint32_t *l2p, uint64_t npg, uint32_t upp, uint32_t P, uint32_t s0,
	      uint32_t r0, uint32_t base, uint32_t upb)
{
	uint32_t m = base + s0 * upb + r0 * upp + 1, slot = s0, bad = 0;
	for (uint64_t k = 0; k < npg; k++, l2p += upp) {
		for (uint32_t u = 0; u < upp; u++)
			bad |= l2p[u] ^ (m + u);
		m += upb;
		if (++slot == P) {
			if (bad)
				return false;
			slot = 0;
			m = m - P * upb + upp; /* the next row, slot 0 */
		}
	}
	return !bad;
}

/*
 * read_stripe()'s pass over the planes it touches, in the order of their first page. A plane's
 * first page is at place j on its channel and its last (o = n - 1 later) at j + o per, so
 * max(first, last) = m w + s1 - j w + max(0, o (tR - per w)): only per (the channel's planes in
 * the read) must be known beforehand, and m (its pages) at the end. Leaves rd_ch[] per channel.
 */
static void read_planes_in_order(struct ftl *f, uint64_t now, uint32_t s0, uint64_t touched,
                                 uint64_t full, uint64_t rem, int64_t tR, int64_t w)
{
	const uint32_t P = f->g.planes;
	for (uint32_t c = 0; c < f->ch; c++)
		f->rd_ch[c] = (struct rd_ch){.best = INT64_MIN, .per = touched == P ? P / f->ch : 0};
	if (touched < P)
		for (uint32_t i = 0, p = s0; i < touched; i++, p = p + 1 == P ? 0 : p + 1)
			f->rd_ch[f->plane_ch[p]].per++;
	for (uint32_t i = 0, p = s0; i < touched; i++, p = p + 1 == P ? 0 : p + 1) {
		uint32_t l = f->plane_lun[p];
		if (f->lun_kind[l] != OP_READ) { /* idle: it switches to reads now, at its first page */
			f->lun_kind[l] = OP_READ;
			f->lun_from[l] = now;
		}
		int64_t o = (int64_t)(full + (i < rem)) - 1;
		uint64_t s1 = max64(now, max64(f->pl_busy[p], f->lun_from[l])) + (uint64_t)tR;
		uint64_t end = s1 + (uint64_t)(o * tR);
		f->pl_busy[p] = end;
		f->pl_susp[p] = 0;
		if (end > f->lun_busy[l])
			f->lun_busy[l] = end;
		struct rd_ch *ch = &f->rd_ch[f->plane_ch[p]];
		int64_t late = o * (tR - (int64_t)ch->per * w), key = (int64_t)s1 - ch->seen++ * w;
		key += late > 0 ? late : 0;
		ch->m += (uint32_t)o + 1;
		if (key > ch->best)
			ch->best = key;
	}
}

/*
 * The same pass when the read touches every LUN, in plane order so that the compiler
 * vectorizes it (a KV replay reads millions of objects, each over 31 or 64 of the 64 planes of
 * ent-tlc-1t): plane p = k luns + l is at place i = (p - s0) mod P of the read and, channels
 * interleaving (plane_ch[p] = p mod ch, ch a power of two dividing P), at place i / ch among its
 * channel's planes. Every LUN is touched (touched >= luns consecutive planes, plane_lun[p] =
 * p mod luns), so each that is not reading switches to reads now, before its first page, as in
 * read_planes_in_order(). A plane the read does not touch (i >= touched, only when the read
 * has fewer pages than planes, so each plane it touches reads one page and none is late) keeps
 * its state, and adds key INT64_MIN and no page to its channel. Keys and page counts go to
 * rd_key and rd_cnt, then each channel takes the maximum and the sum over its planes.
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* 64-bit compares vectorize from AVX2 on (SSE2, x86-64's baseline, has none); the build's -O2
 * vectorizes only loops its "very cheap" cost model passes, so this one takes -O3's model */
__attribute__((target_clones("avx2", "default"), optimize("vect-cost-model=dynamic")))
#endif
static void read_every_lun(struct ftl *f, uint64_t now, uint32_t s0, uint64_t full,
                           uint64_t rem, uint64_t touched, int64_t tR, int64_t w)
{
	const uint32_t P = f->g.planes, L = f->g.luns, C = f->ch;
	const int64_t chs = __builtin_ctz(C);
	const int64_t per_late = tR - (int64_t)(P / C) * w, n0 = (int64_t)now;
	/* o = full - 1 or full pages after the plane's first: no 64-bit multiply in the loop
	 * (AVX2 has none); j w = (i >> chs) w in 32 bits (j < P, w a page's transfer time) */
	const int64_t endA = ((int64_t)full - 1) * tR, endB = endA + tR;
	const int64_t lA = ((int64_t)full - 1) * per_late, lB = lA + per_late;
	const int64_t lateA = lA > 0 ? lA : 0, lateB = lB > 0 ? lB : 0;
	const int64_t cA = (int64_t)full, cB = cA + 1, Pi = (int64_t)P, remi = (int64_t)rem;
	const int64_t tch = (int64_t)touched;
	const int32_t w32 = (int32_t)w;
	int64_t *restrict key = f->rd_key, *restrict lb = (int64_t *)f->lun_busy;
	int64_t *restrict cnt = f->rd_cnt;
	uint8_t *restrict susp = f->pl_susp;
	const int64_t *restrict lf = (const int64_t *)f->lun_from;
	for (uint32_t l = 0; l < L; l++)
		if (f->lun_kind[l] != OP_READ) {
			f->lun_kind[l] = OP_READ;
			f->lun_from[l] = now;
		}
	for (uint32_t k = 0; k < P; k += L) {
		int64_t *restrict pb = (int64_t *)f->pl_busy + k;
		int64_t *restrict ky = key + k, *restrict cn = cnt + k;
		for (uint32_t l = 0; l < L; l++) {
			int64_t i = (int64_t)(k + l) - (int64_t)s0;
			i += i < 0 ? Pi : 0;
			const bool more = i < remi, in = i < tch;
			int64_t s1 = pb[l] > lf[l] ? pb[l] : lf[l];
			s1 = (s1 > n0 ? s1 : n0) + tR;
			int64_t end = s1 + (more ? endB : endA);
			pb[l] = in ? end : pb[l];
			lb[l] = in && end > lb[l] ? end : lb[l];
			ky[l] = in ? s1 - (int64_t)((int32_t)(i >> chs) * w32) + (more ? lateB : lateA)
			           : INT64_MIN;
			cn[l] = in ? (more ? cB : cA) : 0;
		}
	}
	/* the planes touched, s0.. (mod P): at most two ranges */
	const uint64_t head = touched < P - s0 ? touched : P - s0;
	memset(susp + s0, 0, head);
	memset(susp, 0, touched - head);
	for (uint32_t c = 0; c < C; c++) {
		int64_t best = INT64_MIN, m = 0;
		for (uint32_t p = c; p < P; p += C) {
			best = key[p] > best ? key[p] : best;
			m += cnt[p];
		}
		f->rd_ch[c] = (struct rd_ch){.best = best, .m = (uint32_t)m, .per = P / C};
	}
}

/*
 * A read of whole pages laid out as one write of the host frontier leaves them on a superblock
 * with one block per plane: page k of the read on member (s0 + k) mod P, page row
 * r0 + (s0 + k) / P (P planes = blocks per superblock). When every unit of the range is where that
 * stripe puts it and on NAND, and every LUN it touches already runs reads (or is idle and may
 * switch to them at once), read_stripe() times the read in closed form, O(P) instead of a
 * ftl_time_read() per page, and leaves the timing state and completion exactly as the page by
 * page loop would (tests/test_batch.c compares them):
 *  - plane p with n_p pages: its pages sense back to back from s1 = max(now, plane free,
 *    LUN's switch to reads) + tR, so it is busy until s1 + (n_p - 1) tR;
 *  - a channel moves its pages in read order, w = upp transfers each:
 *    x_j = max(s_j, x_{j-1}) + w, so after its m pages x = max(x0 + m w, max_j s_j + (m - j) w).
 *    Between two pages of one plane the read visits every plane once, so s grows by tR and j by
 *    the channel's planes per round: s_j + (m - j) w is linear along a plane's pages and its
 *    maximum is at the plane's first or last page.
 * Returns false, with nothing changed, when the read is not such a stripe.
 */
static bool read_stripe(struct ftl *f, uint64_t first, uint64_t npg, uint64_t now, uint64_t *done)
{
	const uint32_t P = f->g.planes, upp = f->upp;
	const uint32_t *l2p = f->l2p + first;
	uint32_t m0 = l2p[0];
	if (!m0 || (m0 - 1) % upp)
		return false;
	uint32_t pg0 = page_of(f, m0 - 1), b0 = page_blk(f, pg0);
	uint32_t G = b0 / P, s0 = b0 - G * P, r0 = pg0 - b0 * f->ppb;
	uint64_t rows = r0 + (s0 + npg - 1) / P; /* the last page's row */
	if (rows >= f->ppb)
		return false;
	const struct blk *sb = f->blk + (uint64_t)G * P;
	for (uint32_t q = 0; q < P; q += 4)
		prefetch_r(sb + q);
	/*
	 * Every unit where the stripe puts it (a unit overwritten, trimmed or moved by GC is not).
	 * The certificates say so for a stripe written whole and left alone: its first page whole
	 * (holding first.., as l2p[first] is its unit 0), and each later page whole and continuing
	 * the one before. Otherwise the L2P entry of every unit is compared: its lines fetched
	 * together first, as walked one after the other each would miss on its own (a random KV
	 * object's L2P is not in cache; ent-tlc-1t's 96-page stripe spans 24 lines of it).
	 */
	uint64_t sp = ((uint64_t)G * f->ppb + r0) * P + s0;
	const bool cert = f->sp_whole && bits_all(f->sp_whole, sp, npg) &&
	                  bits_all(f->sp_cont, sp + 1, npg - 1);
	if (!cert) {
		uint64_t nunits = npg * upp;
		for (uint64_t i = 16; i < nunits; i += 16)
			prefetch_r(l2p + i);
		if (upp == 4 ? !stripe_intact(l2p, npg, 4, P, s0, r0, G * P * f->upb, f->upb)
		             : !stripe_intact(l2p, npg, upp, P, s0, r0, G * P * f->upb, f->upb))
			return false;
	}
	/*
	 * Plane s0 + i (mod P), i < touched, holds n_i = full + (i < rem) pages of the read, the
	 * last on row r0 + n_i - 1, or one more when it is past the wrap (s0 + i >= P). No
	 * divisions here: a run times millions of reads, each visiting every plane.
	 */
	const uint64_t full = npg / P, rem = npg % P, touched = npg < P ? npg : P;
	/*
	 * On NAND, not in the write buffer: a closed superblock is (its last good member's last
	 * page closed it), an open one up to each member's write pointer.
	 */
	if (f->gu[G].state != GU_CLOSED)
		for (uint32_t i = 0, p = s0; i < touched; i++, p = p + 1 == P ? 0 : p + 1)
			if (r0 + full + (i < rem) - 1 + (s0 + i >= P) >= sb[p].wp)
				return false;
	/* each LUN may read at once: it reads already, or is idle (a plane is never busy past its
	 * LUN); one reading the whole stripe touches every LUN */
	if (touched >= f->g.luns) { /* (consecutive planes: every LUN) */
		for (uint32_t l = 0; l < f->g.luns; l++)
			if (f->lun_kind[l] != OP_READ && f->lun_busy[l] > now)
				return false;
	} else {
		for (uint32_t i = 0, p = s0; i < touched; i++, p = p + 1 == P ? 0 : p + 1) {
			uint32_t l = f->plane_lun[p];
			if (f->lun_kind[l] != OP_READ && f->lun_busy[l] > now)
				return false;
		}
	}
	/* the planes' pass (read_planes_in_order()), then each channel's */
	const int64_t tR = (int64_t)f->t_read_ns, w = (int64_t)upp * (int64_t)f->xfer_unit_ns;
	if (touched >= f->g.luns && f->rd_key)
		read_every_lun(f, now, s0, full, rem, touched, tR, w);
	else
		read_planes_in_order(f, now, s0, touched, full, rem, tR, w);
	uint64_t d = *done;
	for (uint32_t c = 0; c < f->ch; c++) {
		const struct rd_ch *ch = &f->rd_ch[c];
		if (!ch->m)
			continue;
		uint64_t mw = ch->m * (uint64_t)w;
		f->ch_busy[c] = max64(f->ch_busy[c] + mw, mw + (uint64_t)ch->best);
		d = max64(d, f->ch_busy[c]);
	}
	*done = d;
	f->read_stripes_cert += cert;
	return true;
}

/*
 * Units that sit in the same physical page cost one tR: consecutive units of the range that
 * map to one page on NAND form a run, read with one time_read(). A unit that is unmapped or
 * still in the write buffer costs no NAND read and ends the run. Only a new page needs its
 * block's write pointer and the timing model; units of the current run cost a load and a
 * compare, and a whole page written in order is taken in one step. KV replays read terabytes
 * here.
 *
 * Where the range holds 4 or more whole pages from a unit at the start of its physical page,
 * those pages are offered once to read_stripe()'s closed form, after whatever came before them
 * was timed: an object that starts or ends inside a page (paper-kimi-k3's chunk is 31.5 pages,
 * so its objects alternate between a half page first and a half page last) is timed as its
 * partial page, its stripe, and its partial page, as the page-by-page loop would time them. One
 * offer per read bounds what a range that is no stripe costs (its units compared once).
 */
int ftl_read(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done_ns)
{
	int rc = check_range(f, off, len);
	uint64_t us = f->cfg.unit_size, done = now;
	if (rc)
		return rc;
	uint64_t first = unit_of(f, off), last = unit_of(f, off + len - 1);
	const uint32_t *l2p = f->l2p;
	const struct blk *blk = f->blk;
	const uint32_t ppb = f->ppb, upp = f->upp;
	uint32_t run_page = NONE, run_n = 0, run_blk = 0;
	uint64_t read_units = 0;
	bool offered = !(f->cfg.multiplane && f->bpg == f->g.planes && f->bpg > 1 &&
	                 !f->read_per_page); /* read_stripe() has had its one offer */
	for (uint64_t lpn = first;; lpn++) {
		uint32_t m = lpn <= last ? l2p[lpn] : 0, page = NONE, gblk = 0;
		if (m) {
			uint32_t pg = page_of(f, m - 1);
			if (pg == run_page) {
				run_n++;
				continue;
			}
			if (lpn + 64 <= last) /* a new page: fetch the L2P a few lines ahead */
				__builtin_prefetch(&l2p[lpn + 64]);
			gblk = page_blk(f, pg);
			if (pg - gblk * ppb < blk[gblk].wp)
				page = pg;
			/* a whole page written in order (a large sequential write's layout): take its
			 * upp units at once; the next unit is on another page (a page holds upp) */
			if (page != NONE && m - 1 == pg * upp && lpn + upp - 1 <= last) {
				if (!offered && last + 1 - lpn >= 4 * (uint64_t)upp) {
					offered = true;
					if (run_page != NONE) /* (the partial page before) */
						read_units += run_n, done = time_read(f, run_blk, run_n, now, done);
					run_page = NONE;
					uint64_t npg = (last + 1 - lpn) / upp;
					if (read_stripe(f, lpn, npg, now, &done)) {
						read_units += npg * upp;
						f->read_stripes++;
						lpn += npg * upp - 1;
						continue;
					}
				}
				if (page_follows(f, l2p + lpn, m)) {
					if (run_page != NONE)
						read_units += run_n, done = time_read(f, run_blk, run_n, now, done);
					run_page = NONE;
					read_units += upp;
					done = time_read(f, gblk, upp, now, done);
					lpn += upp - 1;
					continue;
				}
			}
		}
		if (run_page != NONE) {
			done = time_read(f, run_blk, run_n, now, done);
			read_units += run_n;
		}
		if (lpn > last)
			break;
		run_page = page;
		run_blk = gblk;
		run_n = 1;
	}
	if (f->link_fp) {
		/* the data streams over the host link as NAND delivers it: the link is busy for len,
		 * and the last unit crosses it after the last NAND transfer */
		uint64_t tail = done + link_ns(f, len < us ? len : us);
		done = max64(ftl_time_link(f, len, now), tail);
		f->host_busy = done;
	}
	f->st.nand_read_bytes += read_units * us;
	f->st.host_read_cmds++;
	f->st.host_read_bytes += len;
	done += f->t_cmd_ns;
	f->clock = max64(f->clock, done);
	command_gc(f, now);
	if (done_ns)
		*done_ns = done;
	return FTL_OK;
}

/*
 * Trim lpn.. lpn + units_per_page - 1 if they are one whole page in order (the first at its
 * page's first unit): what inval_add() and the unit loop of ftl_trim() do unit by unit, once for
 * the page (its valid bits in one word, its certificate, its attribution bytes). False, with
 * nothing done, when they are not.
 */
static inline __attribute__((always_inline)) bool trim_page_u(struct ftl *f, struct inval *iv,
                                                              uint64_t lpn, const uint32_t U)
{
	const uint32_t *l = f->l2p + lpn, ppn = l[0] - 1;
	if (!units_follow(l, l[0], U))
		return false;
	const uint64_t mask = (U == 64 ? UINT64_MAX : (1ull << U) - 1) << (ppn & 63);
	assert((f->valid[ppn >> 6] & mask) == mask);
	f->valid[ppn >> 6] &= ~mask;
	uint32_t g = gu_of(f, ppn);
	if (f->sp_whole) {
		iv->page = page_of(f, ppn);
		bit_clr(f->sp_whole, spage_of(f, ppn));
	}
	if (g != iv->gu) {
		inval_flush(f, iv);
		iv->gu = g;
	}
	iv->n += U;
	ucls_or(f->ucls + ppn, UCLS_TRIMMED, U);
	memset(f->l2p + lpn, 0, U * sizeof(uint32_t));
	f->st.trim_units += U;
	return true;
}
/* trim_page_u() with a constant page of 4 units where it is one (its checks and stores then
 * are a vector compare and single stores, not loops and a memset call) */
static inline __attribute__((always_inline)) bool trim_page(struct ftl *f, struct inval *iv,
                                                           uint64_t lpn)
{
	return f->upp == 4 ? trim_page_u(f, iv, lpn, 4) : trim_page_u(f, iv, lpn, f->upp);
}

int ftl_trim(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done_ns)
{
	assert(f && f->l2p && f->p2l && f->valid);
	int rc = check_range(f, off, len);
	uint64_t us = f->cfg.unit_size;
	if (rc)
		return rc;
	if (f->st.read_only)
		return FTL_E_WORN;
	uint64_t first = (off + us - 1) / us, end = (off + len) / us; /* fully covered [first,end) */
	uint64_t touched = (off + len + us - 1) / us - off / us;
	f->st.trim_partial_units += touched - (end > first ? end - first : 0);
	struct inval iv = {NONE, 0, NONE};
	const uint32_t U = f->upp;
	/* whole pages at once where a page's valid bits lie in one word */
	const bool pages = U > 1 && f->page_word && !f->host_per_unit;
	for (uint64_t lpn = first; lpn < end; lpn++) {
		uint32_t m = f->l2p[lpn];
		if (pages && m && !((m - 1) & (U - 1)) && end - lpn >= U && trim_page(f, &iv, lpn)) {
			lpn += U - 1;
			continue;
		}
		if (m) {
			inval_add(f, &iv, m - 1);
			f->ucls[m - 1] |= UCLS_TRIMMED;
			f->l2p[lpn] = 0;
			f->st.trim_units++;
		}
	}
	inval_flush(f, &iv);
	f->st.host_trim_cmds++;
	f->st.host_trim_bytes += len;
	background_gc(f, now);
	command_gc(f, now);
	if (done_ns)
		*done_ns = now;
	return FTL_OK;
}

int ftl_write_zeroes(struct ftl *f, uint64_t off, uint64_t len, bool may_trim, uint64_t now,
                     uint64_t *done_ns)
{
	uint64_t us = f->cfg.unit_size, ua = (off + us - 1) / us * us, ue = (off + len) / us * us;
	uint64_t end = off + len, done = now, d = now;
	int rc = check_range(f, off, len);
	if (rc)
		return rc;
	if (!may_trim || ue <= ua) /* no whole unit inside: programmed like any write */
		return ftl_write(f, off, len, 0, now, done_ns);
	if (ua > off && !(rc = ftl_write(f, off, ua - off, 0, now, &d)))
		done = d > done ? d : done;
	if (!rc && !(rc = ftl_trim(f, ua, ue - ua, now, &d)))
		done = d > done ? d : done;
	if (!rc && end > ue && !(rc = ftl_write(f, ue, end - ue, 0, now, &d)))
		done = d > done ? d : done;
	if (done_ns)
		*done_ns = done;
	return rc;
}

int ftl_flush(struct ftl *f, uint64_t now, uint64_t *done_ns)
{
	uint64_t done = now;
	for (uint32_t i = 0; i < f->nfr; i++)
		ftl_frontier_pad(f, i, now, &done);
	f->st.flush_cmds++;
	if (done_ns)
		*done_ns = done;
	return FTL_OK;
}

bool ftl_is_mapped(const struct ftl *f, uint64_t off, uint64_t len)
{
	if (check_range(f, off, len))
		return false;
	for (uint64_t lpn = unit_of(f, off); lpn <= unit_of(f, off + len - 1); lpn++)
		if (!f->l2p[lpn])
			return false;
	return true;
}

void ftl_prefetch(const struct ftl *f, uint64_t off, uint64_t len)
{
	if (check_range(f, off, len))
		return;
	/* the first four lines (64 units): the hardware prefetcher follows a run from there */
	uint64_t first = unit_of(f, off), last = unit_of(f, off + len - 1);
	const char *p = (const char *)&f->l2p[first], *end = (const char *)&f->l2p[last];
	for (int i = 0; i < 4 && p <= end; i++, p += 64)
		prefetch_w(p);
}

double ftl_unit_valid(const struct ftl *f, uint64_t off)
{
	if (off >= f->g.user_bytes)
		return -1;
	uint32_t e = f->l2p[off / f->cfg.unit_size];
	if (!e)
		return -1;
	const struct gu *u = &f->gu[(e - 1) / f->upg];
	if (u->state != GU_CLOSED || !u->cap)
		return 1; /* still being written (or being reclaimed): no GC victim yet */
	return (double)u->valid / u->cap;
}

int ftl_unit_owner(const struct ftl *f, uint64_t off, uint32_t *ru)
{
	if (off >= f->g.user_bytes)
		return -1;
	uint32_t e = f->l2p[off / f->cfg.unit_size];
	if (!e)
		return -1;
	if (ru)
		*ru = (e - 1) / f->upg;
	return f->gu[(e - 1) / f->upg].owner;
}
