/*
 * wear.c - erase counts, endurance, wear leveling, bad-block retirement and end of life.
 *
 * Endurance. Each block gets its own endurance, drawn once from a normal distribution with
 * mean pe_cycles and relative std-dev pe_variation (seeded, so a run is reproducible), clamped
 * to [1, 2*pe_cycles]. A block that reaches its endurance at an erase is retired: it never
 * holds data again, and the usable capacity (hence the effective spare) shrinks, which raises
 * WAF. In a superblock the retired member is skipped and the superblock shrinks.
 *
 * End of life. Spare = usable units - user units - units held by the GC reserve and the open
 * frontiers. available_spare = 100 * spare / initial spare. When it falls below
 * spare_threshold_pct the device turns read-only (writes and trims fail with FTL_E_WORN, reads
 * still work), as an NVMe drive does when Available Spare drops below its threshold.
 *
 * Dynamic wear leveling is in the free pools (least-worn first, alloc.c). Static wear leveling
 * is here: when max - min erase count over live blocks exceeds wl_threshold and the least-worn
 * block holds data (cold data pins it), that unit is relocated and erased, so it rejoins the
 * pool and takes hot data. The histogram of erase counts gives min and max in O(1) amortized.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ftl_int.h"
#include "vec.h"

static int ehist_add(struct ftl *f, uint32_t e)
{
	if (e >= f->ehist_len) {
		/* the first histogram has room for 64 erase counts; it doubles from there */
		uint64_t cap = f->ehist_len, need = (uint64_t)e + 1;
		if (!cap && need < 64)
			need = 64;
		if (vec_reserve(f->ehist, cap, need) || cap > UINT32_MAX)
			return FTL_E_NOMEM;
		memset(f->ehist + f->ehist_len, 0, (cap - f->ehist_len) * sizeof(*f->ehist));
		f->ehist_len = (uint32_t)cap;
	}
	f->ehist[e]++;
	if (e > f->emax)
		f->emax = e;
	if (e < f->emin)
		f->emin = e;
	return FTL_OK;
}

static void ehist_del(struct ftl *f, uint32_t e)
{
	f->ehist[e]--;
	while (f->live_blocks && f->emin < f->ehist_len && !f->ehist[f->emin])
		f->emin++;
}

static double gauss(uint64_t rng[4])
{
	double u1 = ((ftl_rand(rng) >> 11) + 1) * 0x1.0p-53;
	double u2 = (ftl_rand(rng) >> 11) * 0x1.0p-53;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

/* Units that hold no reclaimable space at steady state: GC reserve + open frontier blocks. */
uint64_t ftl_held_units(const struct ftl *f)
{
	uint64_t nfront = f->nfr;
	return (uint64_t)f->g.fg_free_gc_units * f->upg + nfront * f->g.frontier_slots * f->upb;
}

int ftl_wear_init(struct ftl *f)
{
	uint64_t rng[4];
	ftl_seed(rng, f->cfg.seed ^ 0x5eedu);
	f->emin = UINT32_MAX;
	for (uint32_t b = 0; b < f->g.blocks; b++) {
		double e = f->cfg.pe_cycles;
		if (f->cfg.pe_variation > 0)
			e *= 1 + f->cfg.pe_variation * gauss(rng);
		if (e < 1)
			e = 1;
		if (e > 2.0 * f->cfg.pe_cycles)
			e = 2.0 * f->cfg.pe_cycles;
		f->blk[b].endurance = (uint32_t)llround(e);
		if (ehist_add(f, 0))
			return FTL_E_NOMEM;
	}
	f->live_blocks = f->g.blocks;
	f->usable_units = f->g.phys_units;
	f->initial_spare_units = f->usable_units - f->g.user_units - ftl_held_units(f);
	f->wl_threshold = f->cfg.wl_threshold ? f->cfg.wl_threshold
					      : (f->cfg.pe_cycles / 32 > 8 ? f->cfg.pe_cycles / 32 : 8);
	return FTL_OK;
}

bool ftl_worn_out(const struct ftl *f)
{
	uint64_t need = f->g.user_units + ftl_held_units(f);
	if (f->usable_units <= need)
		return true;
	return (double)(f->usable_units - need) * 100.0 <
	       f->cfg.spare_threshold_pct * (double)f->initial_spare_units;
}

/* Erase every good block of GC unit g (its data already moved); retire worn-out blocks. */
void ftl_erase_gu(struct ftl *f, uint32_t g, uint64_t now)
{
	struct gu *u = &f->gu[g];
	uint32_t emax = 0, cap0 = u->cap;
	if (f->sp_whole) { /* its pages' stripe certificates go with their data */
		uint64_t pages = (uint64_t)f->bpg * f->ppb;
		bits_clear(f->sp_whole, g * pages, pages);
		bits_clear(f->sp_cont, g * pages, pages);
	}
	for (uint32_t i = 0; i < f->bpg; i++) {
		uint32_t b = g * f->bpg + i;
		struct blk *k = &f->blk[b];
		ftl_p2l_forget(f, b);
		if (k->bad)
			continue;
		ftl_time_erase(f, b, now);
		ehist_del(f, k->erase);
		k->erase++;
		k->wp = 0;
		f->erase_sum++;
		f->st.erases++;
		f->own_erased[u->owner] += (uint64_t)f->ppb * f->cfg.page_size;
		if (k->erase >= k->endurance) {
			k->bad = 1;
			f->live_blocks--;
			f->erase_sum -= k->erase;
			f->usable_units -= f->upb;
			u->cap -= f->upb;
			f->st.retired_blocks++;
			while (f->live_blocks && f->emin < f->ehist_len && !f->ehist[f->emin])
				f->emin++;
			continue;
		}
		ehist_add(f, k->erase);
		if (k->erase > emax)
			emax = k->erase;
	}
	f->nopen--;
	u->erase = emax;
	if (f->cfg.fdp && u->cap < cap0) /* the RU lost capacity: FDP's media reallocated */
		ftl_fdp_event(f, FTL_FDP_EV_MEDIA_REALLOCATED,
		              u->owner < f->cfg.host_streams ? u->owner : UINT16_MAX, g, now,
		              (uint64_t)(cap0 - u->cap) * f->cfg.unit_size / FTL_SECTOR);
	if (!u->cap) {
		u->state = GU_RETIRED;
		f->nretired_gu++;
	} else {
		ftl_pool_put(f, g);
	}
	if (!f->st.read_only && ftl_worn_out(f))
		f->st.read_only = true;
}

/*
 * Static wear leveling, called after each GC cycle. Relocates at most one cold unit per call,
 * so its cost is bounded by one extra GC cycle; it runs again on the next erase if needed.
 */
void ftl_wear_level(struct ftl *f, uint64_t now)
{
	if (!f->cfg.wl_static || f->emax - f->emin <= f->wl_threshold)
		return;
	/* the least-worn block is free: dynamic WL will hand it out next */
	for (uint32_t i = 0; i < f->npools; i++)
		if (heap_min_key(f, &f->pool[i]) <= f->emin)
			return;
	uint32_t best = NONE, best_e = UINT32_MAX;
	for (uint32_t i = 0; i < f->nclosed; i++) {
		uint32_t g = f->closed[i];
		if (f->gu[g].erase < best_e) {
			best_e = f->gu[g].erase;
			best = g;
		}
	}
	if (best == NONE || best_e > f->emin)
		return; /* the coldest block is in an open frontier: wait */
	f->in_gc = true;
	ftl_relocate(f, best, PROG_WL, now);
	f->in_gc = false;
	f->st.wl_victims++;
}
