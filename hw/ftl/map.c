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
 */
#include "ftl_int.h"

/* Point lpn at ppn (its old copy, if any, already invalidated). */
static inline void map_set(struct ftl *f, uint32_t lpn, uint32_t ppn)
{
	f->l2p[lpn] = ppn + 1;
	f->p2l[ppn] = lpn + 1;
	bit_set(f->valid, ppn);
	struct gu *u = &f->gu[gu_of(f, ppn)];
	if (u->state == GU_CLOSED && f->cfg.gc_policy == FTL_GC_GREEDY)
		ftl_bucket_up(f, gu_of(f, ppn), u->valid + (f->upg - u->cap));
	u->valid++;
}

static inline void map_unit(struct ftl *f, uint32_t lpn, uint32_t ppn)
{
	uint32_t old = f->l2p[lpn];
	if (old)
		ftl_invalidate(f, old - 1);
	map_set(f, lpn, ppn);
}

void ftl_invalidate(struct ftl *f, uint32_t ppn)
{
	struct gu *u = &f->gu[gu_of(f, ppn)];
	bit_clr(f->valid, ppn);
	if (u->state == GU_CLOSED && f->cfg.gc_policy == FTL_GC_GREEDY)
		ftl_bucket_move(f, gu_of(f, ppn), u->valid + (f->upg - u->cap));
	u->valid--;
}

/*
 * Move n valid units that share one NAND page (GC or WL): one read of that page, then each unit
 * to the GC frontier. The old copies are known, so L2P is only written, never read: the
 * stores overlap instead of stalling on cache misses one after another.
 */
int ftl_move_run(struct ftl *f, const uint32_t *ppn_old, uint32_t n, uint8_t cause, uint64_t now)
{
	uint32_t gblk = blk_of(f, ppn_old[0]);
	uint64_t t = ftl_time_read(f, gblk, n, now);
	uint64_t bytes = (uint64_t)n * f->cfg.unit_size;
	f->st.gc_read_bytes += bytes;
	f->st.nand_read_bytes += bytes;
	for (uint32_t i = 0; i < n; i++) {
		int err = 0;
		uint32_t old = ppn_old[i], lpn = f->p2l[old] - 1;
		uint32_t ppn = ftl_frontier_take(f, f->gc_fr, t, &err, cause, NULL);
		if (ppn == NONE)
			return err;
		ftl_invalidate(f, old);
		map_set(f, lpn, ppn);
	}
	return FTL_OK;
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
	while (f->nfree < f->g.bg_free_gc_units && !f->st.read_only && f->clock < now &&
	       f->st.gc_victims != progress) {
		uint64_t idle_from = f->clock;
		progress = f->st.gc_victims;
		if (ftl_gc_one(f, idle_from, false))
			break;
	}
}

/* Read one unit's old copy for a read-modify-write; returns when it is in the buffer. */
static uint64_t rmw_read(struct ftl *f, uint32_t lpn, uint64_t now)
{
	uint32_t m = f->l2p[lpn];
	if (!m)
		return now;
	f->st.rmw_units++;
	uint32_t gblk = blk_of(f, m - 1);
	if ((m - 1) % f->upb / f->upp >= f->blk[gblk].wp)
		return now; /* still in the write buffer */
	f->st.nand_read_bytes += f->cfg.unit_size;
	return ftl_time_read(f, gblk, 1, now);
}

int ftl_write(struct ftl *f, uint64_t off, uint64_t len, unsigned stream, uint64_t now,
	      uint64_t *done_ns)
{
	int rc = check_range(f, off, len), err = 0;
	uint64_t us = f->cfg.unit_size, done = now;
	if (rc)
		return rc;
	if (f->st.read_only)
		return FTL_E_WORN;
	background_gc(f, now);
	uint32_t fid = stream % f->cfg.host_streams;
	uint64_t first = off / us, last = (off + len - 1) / us;
	f->st.host_write_cmds++;
	for (uint64_t lpn = first; lpn <= last; lpn++) {
		uint64_t t = now, ready = now;
		if ((lpn == first && off % us) || (lpn == last && (off + len) % us))
			t = rmw_read(f, (uint32_t)lpn, now);
		uint32_t ppn = ftl_frontier_take(f, fid, t, &err, PROG_HOST, &ready);
		if (ppn == NONE) {
			/* units before this one are written; count exactly what was */
			f->st.host_write_bytes += lpn == first ? 0 : (lpn * us - off);
			ftl_stats_tick(f);
			return err;
		}
		map_unit(f, (uint32_t)lpn, ppn);
		done = max64(done, max64(t, ready));
	}
	f->st.host_write_bytes += len;
	f->clock = max64(f->clock, done);
	ftl_stats_tick(f);
	if (done_ns)
		*done_ns = done;
	return FTL_OK;
}

int ftl_read(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done_ns)
{
	int rc = check_range(f, off, len);
	uint64_t us = f->cfg.unit_size, done = now;
	if (rc)
		return rc;
	uint64_t first = off / us, last = (off + len - 1) / us;
	uint32_t run_page = NONE, run_n = 0;
	/* units that sit in the same physical page cost one tR */
	for (uint64_t lpn = first; lpn <= last + 1; lpn++) {
		uint32_t page = NONE;
		if (lpn <= last && f->l2p[lpn]) {
			uint32_t ppn = f->l2p[lpn] - 1;
			uint32_t gblk = blk_of(f, ppn);
			if (ppn % f->upb / f->upp < f->blk[gblk].wp)
				page = ppn / f->upp;
		}
		if (page != run_page || page == NONE) {
			if (run_page != NONE) {
				done = max64(done, ftl_time_read(f, run_page / f->ppb, run_n, now));
				f->st.nand_read_bytes += (uint64_t)run_n * us;
			}
			run_page = page;
			run_n = 0;
		}
		run_n++;
	}
	f->st.host_read_cmds++;
	f->st.host_read_bytes += len;
	f->clock = max64(f->clock, done);
	if (done_ns)
		*done_ns = done;
	return FTL_OK;
}

int ftl_trim(struct ftl *f, uint64_t off, uint64_t len, uint64_t now, uint64_t *done_ns)
{
	int rc = check_range(f, off, len);
	uint64_t us = f->cfg.unit_size;
	if (rc)
		return rc;
	if (f->st.read_only)
		return FTL_E_WORN;
	uint64_t first = (off + us - 1) / us, end = (off + len) / us; /* fully covered [first,end) */
	uint64_t touched = (off + len + us - 1) / us - off / us;
	f->st.trim_partial_units += touched - (end > first ? end - first : 0);
	for (uint64_t lpn = first; lpn < end; lpn++) {
		uint32_t m = f->l2p[lpn];
		if (m) {
			ftl_invalidate(f, m - 1);
			f->l2p[lpn] = 0;
			f->st.trim_units++;
		}
	}
	f->st.host_trim_cmds++;
	f->st.host_trim_bytes += len;
	background_gc(f, now);
	if (done_ns)
		*done_ns = now;
	return FTL_OK;
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
	for (uint64_t lpn = off / f->cfg.unit_size; lpn <= (off + len - 1) / f->cfg.unit_size; lpn++)
		if (!f->l2p[lpn])
			return false;
	return true;
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
