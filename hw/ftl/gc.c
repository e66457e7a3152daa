/*
 * gc.c - garbage collection: pick a victim GC unit, move its valid units, erase it.
 *
 * Victim policies (gc_policy):
 *   greedy        fewest valid units (capacity lost to bad blocks counts as valid, so a shrunken
 *                 superblock is never picked for nothing). O(1) amortized: closed units sit in
 *                 buckets by that count, and min_bucket only moves down on insert.
 *   fifo          the unit closed longest ago (a ring in close order; stale entries skipped).
 *   cost-benefit  max (1-u)*age/(1+u), Rosenblum & Ousterhout's LFS cleaner (SOSP'91), u the
 *                 valid fraction, age in closes since it was written. O(closed units) per victim.
 *   d-choice      the fewest-valid of d units drawn uniformly from the closed ones (with
 *                 replacement). O(d).
 * GC of a unit with no reclaimable space cannot make progress: that, and only that, is "full".
 *
 * GC copies go to the GC frontier (gc_stream=separate; with persistently isolated FDP handles,
 * the victim's handle's GC frontier) or to host frontier 0 (shared, the
 * layout the classic analytic models assume, and shared-burst, FEMU's; alloc.c says how the two
 * differ). Reads cost tR per page holding valid data and a
 * channel transfer per unit; programs and the erase occupy their LUNs, delaying host I/O.
 */
#include "ftl_int.h"

static uint32_t victim_greedy(struct ftl *f)
{
	for (uint32_t k = f->min_bucket; k <= f->upg; k++)
		if (f->bucket[k] != NONE) {
			f->min_bucket = k;
			return f->bucket[k];
		}
	f->min_bucket = f->upg;
	return NONE;
}

static uint32_t victim_fifo(struct ftl *f)
{
	uint32_t cap = 2 * f->g.gc_units;
	while (f->fifo_n) {
		struct fifo_ent e = f->fifo[f->fifo_head];
		if (f->gu[e.gu].state == GU_CLOSED && f->gu[e.gu].close_seq == e.seq)
			return e.gu; /* peek: the entry goes stale once the unit is reclaimed */
		f->fifo_head = (f->fifo_head + 1) % cap;
		f->fifo_n--;
	}
	return NONE;
}

static uint32_t victim_cost_benefit(struct ftl *f)
{
	uint32_t best = NONE;
	double best_score = -1;
	for (uint32_t i = 0; i < f->nclosed; i++) {
		const struct gu *u = &f->gu[f->closed[i]];
		if (u->valid >= u->cap)
			continue;
		double util = (double)u->valid / u->cap;
		double age = (double)(f->close_seq - u->close_seq + 1);
		double score = (1 - util) * age / (1 + util);
		if (score > best_score) {
			best_score = score;
			best = f->closed[i];
		}
	}
	return best;
}

static uint32_t victim_dchoice(struct ftl *f)
{
	uint32_t best = NONE;
	uint64_t best_key = UINT64_MAX;
	if (!f->nclosed)
		return NONE;
	for (uint32_t i = 0; i < f->cfg.gc_dchoice; i++) {
		uint32_t g = f->closed[ftl_rand(f->rng) % f->nclosed];
		uint64_t key = f->gu[g].valid + (uint64_t)(f->upg - f->gu[g].cap);
		if (key < best_key) {
			best_key = key;
			best = g;
		}
	}
	return best;
}

uint32_t ftl_gc_victim(struct ftl *f)
{
	switch (f->cfg.gc_policy) {
	case FTL_GC_GREEDY: return victim_greedy(f);
	case FTL_GC_FIFO: return victim_fifo(f);
	case FTL_GC_COST_BENEFIT: return victim_cost_benefit(f);
	case FTL_GC_DCHOICE: return victim_dchoice(f);
	}
	return NONE;
}

/* The valid units of the page whose first unit is ppn (upp <= 64), as a count. */
static inline uint32_t page_valid(const struct ftl *f, uint64_t ppn)
{
	/* 4 bits of one word: their count from a table of 16 in one constant (__builtin_popcountll
	 * is a library call without -mpopcnt); tests compare it with the popcount (host_per_unit) */
	if (f->upp == 4 && !f->host_per_unit) {
		uint64_t nib = (f->valid[ppn >> 6] >> (ppn & 63)) & 15;
		return (uint32_t)(0x4332322132212110ull >> (nib * 4)) & 15;
	}
	uint64_t w = ppn >> 6, sh = ppn & 63, bits = f->valid[w] >> sh;
	if (sh + f->upp > 64)
		bits |= f->valid[w + 1] << (64 - sh);
	if (f->upp < 64)
		bits &= (1ull << f->upp) - 1;
	return (uint32_t)__builtin_popcountll(bits);
}

/*
 * Timing of a superblock victim's reads, before any copy is programmed: its pages are read in
 * stripe order (page 0 of every member, then page 1, ...), as a controller reads a superblock
 * across all its dies at once, and each page's done time is kept for ftl_move_run() at
 * gc_rd[member * pages_per_block + page]. Read in
 * the mapping order below instead (one member block after another), a victim's reads would
 * queue on one plane at a time, each waiting for the copies programmed on its LUN, and GC
 * would run at a fraction of the drive's bandwidth. Only times depend on this order: which
 * units move where does not.
 */
static void time_victim_reads(struct ftl *f, uint32_t g, uint64_t now)
{
	for (uint32_t p = 0; p < f->ppb; p++)
		for (uint32_t i = 0; i < f->bpg; i++) {
			uint32_t b = g * f->bpg + i, n;
			if (f->blk[b].bad || p >= f->blk[b].wp)
				continue;
			if ((n = page_valid(f, (uint64_t)b * f->upb + (uint64_t)p * f->upp)))
				f->gc_rd[(uint64_t)i * f->ppb + p] = ftl_time_read(f, b, n, now, false);
		}
}

/*
 * Move every valid unit of GC unit g (already taken out of the closed sets) to the GC
 * frontier, page by page. Returns 0, or an FTL_E_* status if the frontier could not get space
 * (then g keeps the units not yet moved, and the state is still consistent).
 */
static int relocate(struct ftl *f, uint32_t g, uint8_t cause, uint64_t now)
{
	const uint64_t base = (uint64_t)g * f->upg, end = base + f->upg;
	if (f->gc_rd)
		time_victim_reads(f, g, now);
	uint32_t run[64], n = 0; /* valid units of one NAND page (units_per_page <= 64 assumed below) */
	uint64_t run_page = UINT64_MAX;
	/* scan the bitmap a word at a time: victims are mostly invalid */
	for (uint64_t w = base >> 6; w <= (end - 1) >> 6 && f->gu[g].valid; w++) {
		uint64_t bits = f->valid[w];
		if (w == base >> 6)
			bits &= ~0ull << (base & 63);
		if (w == (end - 1) >> 6 && (end & 63))
			bits &= ~(~0ull << (end & 63));
		/* the lpns of the valid units two words ahead (about 100 moves, longer than a DRAM
		 * miss on a loaded VM): start fetching their L2P lines */
		for (uint64_t a = w == base >> 6 ? w + 1 : w + 2; a <= w + 2; a++) {
			uint64_t nb = a <= (end - 1) >> 6 ? f->valid[a] : 0;
			while (nb) {
				__builtin_prefetch(&f->l2p[p2l_get(f, (uint32_t)((a << 6) + __builtin_ctzll(nb))) - 1], 1);
				nb &= nb - 1;
			}
		}
		for (;;) {
			uint64_t ppn = bits ? (w << 6) + __builtin_ctzll(bits) : UINT64_MAX;
			uint64_t page = bits ? page_of(f, (uint32_t)ppn) : UINT64_MAX;
			if (page != run_page || n == 64) {
				if (n) {
					int rc = ftl_move_run(f, run, n, cause, now);
					if (rc)
						return rc;
				}
				n = 0;
				run_page = page;
			}
			if (!bits)
				break;
			run[n++] = (uint32_t)ppn;
			bits &= bits - 1;
		}
	}
	if (n)
		return ftl_move_run(f, run, n, cause, now);
	return FTL_OK;
}

/* Reclaim g: relocate its valid data and erase it. */
int ftl_relocate(struct ftl *f, uint32_t g, uint8_t cause, uint64_t now)
{
	ftl_closed_del(f, g);
	/* persistently isolated FDP handles: the copies stay with their handle's data */
	uint32_t o = f->gu[g].owner;
	f->gc_dst = ftl_config_pi(&f->cfg) && o < f->cfg.host_streams ? f->gc_fr + o : f->gc_fr;
	int rc = relocate(f, g, cause, now);
	if (rc) {
		/* out of space mid-way (the reserve prevents it; stay consistent anyway) */
		ftl_closed_add(f, g);
		return rc;
	}
	ftl_attr_erase(f, g, cause);
	ftl_erase_gu(f, g, now);
	return FTL_OK;
}

/*
 * One GC cycle. Returns FTL_E_FULL when no closed unit has anything to reclaim (the device is
 * full of valid data) and FTL_E_WORN when erasing pushed the device to end of life.
 */
int ftl_gc_one(struct ftl *f, uint64_t now, bool foreground)
{
	uint32_t g = ftl_gc_victim(f);
	if (g == NONE)
		return FTL_E_FULL;
	uint32_t reclaim = f->upg - (f->gu[g].valid + (f->upg - f->gu[g].cap));
	/* background GC only takes victims worth it (FEMU skips lines < 1/8 invalid likewise) */
	if (!foreground && reclaim < f->bg_min_reclaim)
		return FTL_OK;
	if (!reclaim) {
		/*
		 * Nothing to reclaim in this victim. FIFO still moves it (its data goes to the back
		 * of the queue) unless a whole round made no progress; other policies look for any
		 * unit with invalid data before declaring the device full.
		 */
		if (f->cfg.gc_policy == FTL_GC_FIFO) {
			if (++f->gc_futile > f->nclosed + 1) {
				f->gc_futile = 0;
				return FTL_E_FULL;
			}
		} else {
			g = NONE;
			for (uint32_t i = 0; i < f->nclosed && g == NONE; i++) {
				const struct gu *u = &f->gu[f->closed[i]];
				if (u->valid < u->cap)
					g = f->closed[i];
			}
			if (g == NONE)
				return FTL_E_FULL;
		}
	} else {
		f->gc_futile = 0;
	}
	f->in_gc = true;
	int rc = ftl_relocate(f, g, PROG_GC, now);
	f->in_gc = false;
	if (rc) {
		/*
		 * There is space to reclaim but no free block to move the valid data to: the reserve
		 * is gone because reclaimed blocks kept retiring. The device is worn out.
		 */
		f->st.read_only = true;
		return FTL_E_WORN;
	}
	f->st.gc_victims++;
	if (foreground)
		f->st.fg_gc_victims++;
	else
		f->st.bg_gc_victims++;
	ftl_wear_level(f, now);
	return FTL_OK;
}
