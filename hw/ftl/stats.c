/*
 * stats.c - counters, WAF (cumulative and windowed), SMART view, lifetimes, JSON.
 *
 * NAND program bytes are counted per unit as it is placed in a page, by cause (host, GC,
 * wear leveling, flush padding), so nand = host + gc + wl + pad holds at every instant.
 * WAF = nand_write_bytes / host_write_bytes.
 *
 * The windowed WAF covers about the last user capacity of host writes: a sample of
 * (host, nand, erases) is taken every user_bytes/8 host bytes into a ring of 9, and the window
 * runs from the oldest sample to now. Lifetime by erase count uses the erase rate over the same
 * window, so it reflects the recent (ideally steady) state, not the fresh-drive start.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ftl_int.h"
#include "json.h"

#define SMART_UNIT 512000ull

void ftl_count_prog(struct ftl *f, uint8_t cause, uint64_t units)
{
	uint64_t b = units * f->cfg.unit_size;
	f->st.nand_write_bytes += b;
	switch (cause) {
	case PROG_HOST: f->st.host_prog_bytes += b; break;
	case PROG_GC: f->st.gc_prog_bytes += b; break;
	case PROG_WL: f->st.wl_prog_bytes += b; break;
	default:
		f->st.pad_prog_bytes += b;
		f->attr.pad_bytes += b;
		break;
	}
}

int ftl_set_class(struct ftl *f, unsigned cls)
{
	if (cls >= FTL_CLASSES)
		return FTL_E_INVAL;
	f->wcls = (uint8_t)cls;
	return FTL_OK;
}

void ftl_get_attribution(const struct ftl *f, struct ftl_attribution *a)
{
	*a = f->attr;
}

/*
 * GC unit g is about to be erased (its valid data moved by cause): charge its bytes to what
 * they held, and, for a GC victim, its copies to its invalid units' classes and ways of
 * leaving (largest remainder: the shares add up to the copies exactly). Resets its units.
 */
/* a ucls byte's class (at most FTL_CLASSES, so 3 bits) and its way of leaving, packed into 5
 * bits: the index of its count */
#define UCLS_IDX(x) (((x) & 7) | ((x) >> 6) << 3)

/*
 * Counts the ucls bytes u[0..n) by UCLS_IDX into h (4 tables: the caller adds them up). A word
 * of 8 equal bytes counts at once: a unit's byte is set per host write or move, so they come in
 * runs. The rest go to the 4 tables in turn, so that a run of equal bytes does not make each
 * increment wait for the one before it through the store buffer.
 */
static void ucls_count(const uint8_t *u, uint64_t n, uint32_t h[4][32])
{
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, u + i, 8);
		if (w == u[i] * 0x0101010101010101ull) {
			h[0][UCLS_IDX(u[i])] += 8;
			continue;
		}
		for (int k = 0; k < 8; k++)
			h[k & 3][UCLS_IDX((uint8_t)(w >> 8 * k))]++;
	}
	for (; i < n; i++)
		h[i & 3][UCLS_IDX(u[i])]++;
}

void ftl_attr_erase(struct ftl *f, uint32_t g, uint8_t cause)
{
	uint64_t n[FTL_CLASSES][3] = {{0}}, empty = 0, us = f->cfg.unit_size;
	uint32_t h[4][32] = {{0}}; /* (a GC unit holds under 2^32 units: ppns are 32-bit) */
	for (uint32_t i = 0; i < f->bpg; i++) {
		uint32_t b = g * f->bpg + i;
		uint8_t *u = f->ucls + (uint64_t)b * f->upb;
		if (!f->blk[b].bad) /* (a retired block is not erased, and holds nothing) */
			ucls_count(u, f->upb, h);
		memset(u, 0, f->upb);
	}
	for (unsigned x = 0; x < 32; x++) {
		uint64_t k = (uint64_t)h[0][x] + h[1][x] + h[2][x] + h[3][x], c = x & 7;
		if (!k)
			continue;
		if (!c)
			empty += k;
		else
			n[c - 1][x & (UCLS_MOVED >> 3)     ? FTL_ATTR_MOVED
			         : x & (UCLS_TRIMMED >> 3) ? FTL_ATTR_TRIMMED
			                                   : FTL_ATTR_OVERWRITTEN] += k;
	}
	uint64_t moved = 0, inval = 0;
	for (int c = 0; c < FTL_CLASSES; c++) {
		for (int e = 0; e < 3; e++)
			f->attr.erased[c][e] += n[c][e] * us;
		moved += n[c][FTL_ATTR_MOVED];
		inval += n[c][FTL_ATTR_TRIMMED] + n[c][FTL_ATTR_OVERWRITTEN];
	}
	f->attr.erased_empty_bytes += empty * us;
	if (cause != PROG_GC || !moved)
		return;
	if (!inval) {
		f->attr.gc_uncaused_bytes += moved * us;
		return;
	}
	/* moved x cell / inval for each invalid cell, the units left over to the largest remainders */
	uint64_t share[FTL_CLASSES][3] = {{0}}, rem[FTL_CLASSES][3] = {{0}}, given = 0;
	for (int c = 0; c < FTL_CLASSES; c++)
		for (int e = FTL_ATTR_TRIMMED; e <= FTL_ATTR_OVERWRITTEN; e++) {
			share[c][e] = moved * n[c][e] / inval;
			rem[c][e] = moved * n[c][e] % inval;
			given += share[c][e];
		}
	for (; given < moved; given++) {
		int bc = 0, be = FTL_ATTR_TRIMMED;
		for (int c = 0; c < FTL_CLASSES; c++)
			for (int e = FTL_ATTR_TRIMMED; e <= FTL_ATTR_OVERWRITTEN; e++)
				if (rem[c][e] > rem[bc][be])
					bc = c, be = e;
		share[bc][be]++;
		rem[bc][be] = 0;
	}
	for (int c = 0; c < FTL_CLASSES; c++)
		for (int e = FTL_ATTR_TRIMMED; e <= FTL_ATTR_OVERWRITTEN; e++)
			f->attr.gc_cause[c][e] += share[c][e] * us;
}

void ftl_attribution_json(const struct ftl_attribution *a, const char *const *names,
                          struct json_out *j)
{
	static const char *const dflt[FTL_CLASSES] = {"class0", "class1", "class2", "class3"};
	static const char *const prog[3] = {"host", "gc", "wl"};
	static const char *const left[3] = {"moved", "trimmed", "overwritten"};
	const bool own = names != NULL;
	if (!own)
		names = dflt;
	jout_object(j, "attribution", JOUT_BLOCK);
	for (int c = 0; c < FTL_CLASSES; c++) {
		bool any = false;
		for (int k = 0; k < 3; k++)
			any |= a->prog[c][k] || a->erased[c][k] || a->gc_cause[c][k];
		/* the caller's classes, each named; without names, class 0 and any other in use */
		if (!names[c] || (!own && c && !any))
			continue;
		jout_object(j, names[c], JOUT_INLINE);
		for (int k = 0; k < 3; k++) {
			char key[32];
			snprintf(key, sizeof(key), "%s_program_bytes", prog[k]);
			jout_u64(j, key, a->prog[c][k]);
		}
		for (int e = 0; e < 3; e++) {
			char key[32];
			snprintf(key, sizeof(key), "erased_%s_bytes", left[e]);
			jout_u64(j, key, a->erased[c][e]);
		}
		jout_u64(j, "gc_copies_by_trim_bytes", a->gc_cause[c][FTL_ATTR_TRIMMED]);
		jout_u64(j, "gc_copies_by_overwrite_bytes", a->gc_cause[c][FTL_ATTR_OVERWRITTEN]);
		jout_end(j);
	}
	jout_u64(j, "pad_program_bytes", a->pad_bytes);
	jout_u64(j, "erased_empty_bytes", a->erased_empty_bytes);
	jout_u64(j, "gc_copies_uncaused_bytes", a->gc_uncaused_bytes);
	jout_end(j);
}

void ftl_stats_tick(struct ftl *f)
{
	if (f->st.host_write_bytes < f->win_next)
		return;
	uint32_t n = sizeof(f->win_host) / sizeof(f->win_host[0]);
	memmove(f->win_host, f->win_host + 1, (n - 1) * sizeof(uint64_t));
	memmove(f->win_nand, f->win_nand + 1, (n - 1) * sizeof(uint64_t));
	memmove(f->win_erase, f->win_erase + 1, (n - 1) * sizeof(uint64_t));
	f->win_host[n - 1] = f->st.host_write_bytes;
	f->win_nand[n - 1] = f->st.nand_write_bytes;
	f->win_erase[n - 1] = f->st.erases;
	if (f->win_n < n)
		f->win_n++;
	f->win_next = f->st.host_write_bytes + f->win_step;
}

static double ratio(uint64_t a, uint64_t b)
{
	return b ? (double)a / (double)b : 0.0;
}

void ftl_get_stats(const struct ftl *f, struct ftl_stats *st)
{
	*st = f->st;
	uint32_t n = sizeof(f->win_host) / sizeof(f->win_host[0]);
	uint32_t o = n - (f->win_n ? f->win_n : 1); /* oldest sample (zeros before the first) */
	uint64_t h0 = f->win_n ? f->win_host[o] : 0, n0 = f->win_n ? f->win_nand[o] : 0,
		 e0 = f->win_n ? f->win_erase[o] : 0;
	if (f->win_n < n)
		h0 = n0 = e0 = 0; /* fewer than a full window: since the start */
	st->window_host_bytes = f->st.host_write_bytes - h0;
	st->window_nand_bytes = f->st.nand_write_bytes - n0;
	st->window_erases = f->st.erases - e0;
	st->waf_cumulative = ratio(f->st.nand_write_bytes, f->st.host_write_bytes);
	st->waf_window = ratio(st->window_nand_bytes, st->window_host_bytes);
	st->valid_units = 0;
	for (uint32_t g = 0; g < f->g.gc_units; g++)
		st->valid_units += f->gu[g].valid;
	st->free_gc_units = f->nfree;
	st->open_gc_units = f->nopen;
	st->erase_min = f->live_blocks ? f->emin : 0;
	st->erase_max = f->emax;
	st->erase_mean = f->live_blocks ? (double)f->erase_sum / f->live_blocks : 0;
	/* effective spare: count only units GC can use, not the reserve or open frontiers */
	uint64_t held = ftl_held_units(f);
	double t_eff = (double)f->usable_units - (double)held;
	st->effective_spare_factor = t_eff > 0 ? (t_eff - (double)f->g.user_units) / t_eff : 0;
	/* SMART (NVMe log page 02h) */
	double used = 100.0 * st->erase_mean / f->cfg.pe_cycles;
	st->percentage_used = used >= 255 ? 255 : (uint32_t)floor(used);
	uint64_t need = f->g.user_units + held;
	double spare = f->usable_units > need ? (double)(f->usable_units - need) : 0;
	st->available_spare =
		f->initial_spare_units ? (uint32_t)floor(100.0 * spare / f->initial_spare_units) : 0;
	if (st->available_spare > 100)
		st->available_spare = 100;
	st->available_spare_threshold = (uint32_t)ceil(f->cfg.spare_threshold_pct);
	st->data_units_written = (f->st.host_write_bytes + SMART_UNIT - 1) / SMART_UNIT;
	st->data_units_read = (f->st.host_read_bytes + SMART_UNIT - 1) / SMART_UNIT;
	st->media_units_written = (f->st.nand_write_bytes + SMART_UNIT - 1) / SMART_UNIT;
	st->clock_ns = f->clock;
}

void ftl_erase_histogram(const struct ftl *f, uint64_t *bins, size_t nbins, uint32_t *width)
{
	uint32_t w = 1;
	memset(bins, 0, nbins * sizeof(*bins));
	if (!nbins)
		return;
	while ((uint64_t)w * nbins <= f->emax)
		w *= 2;
	for (uint32_t e = 0; e < f->ehist_len && e <= f->emax; e++)
		bins[e / w] += f->ehist[e];
	if (width)
		*width = w;
}

uint32_t ftl_block_erases(const struct ftl *f, uint32_t b, uint32_t *endurance, bool *bad)
{
	if (b >= f->g.blocks)
		return 0;
	if (endurance)
		*endurance = f->blk[b].endurance;
	if (bad)
		*bad = f->blk[b].bad;
	return f->blk[b].erase;
}

uint64_t ftl_metadata_bytes(const struct ftl *f)
{
	return f->l2p_bytes + f->p2l_bytes + f->valid_bytes + f->ucls_bytes + 2 * f->sp_bytes + f->p2l_pg_bytes +
	       (uint64_t)f->g.blocks * sizeof(struct blk) +
	       (uint64_t)f->g.gc_units * (sizeof(struct gu) + 2 * sizeof(uint32_t)) +
	       (uint64_t)(f->upg + 1) * sizeof(uint32_t);
}

const char *ftl_eol_cause(const struct ftl *f)
{
	if (!f->st.read_only)
		return NULL;
	return ftl_worn_out(f) ? "spare" : "gc-reserve";
}

/* The WAF of the last user capacity of host writes in four quarters (two window samples each):
 * (max - min) / mean, or NaN before the window holds a whole capacity or when a quarter has no
 * host writes. */
static double window_waf_range(const struct ftl *f)
{
	const uint32_t n = sizeof(f->win_host) / sizeof(f->win_host[0]);
	if (f->win_n < n)
		return NAN;
	double w[4], lo = INFINITY, hi = -INFINITY, sum = 0;
	for (int q = 0; q < 4; q++) {
		uint32_t a = 2 * q, b = 2 * q + 2;
		uint64_t dh = f->win_host[b] - f->win_host[a], dn = f->win_nand[b] - f->win_nand[a];
		if (!dh)
			return NAN;
		w[q] = (double)dn / (double)dh;
		lo = w[q] < lo ? w[q] : lo;
		hi = w[q] > hi ? w[q] : hi;
		sum += w[q];
	}
	return sum > 0 ? (hi - lo) / (sum / 4) : NAN;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void ftl_lifetime(const struct ftl *f, double bytes_per_day, struct ftl_lifetime *lt)
{
	ftl_lifetime_scaled(f, bytes_per_day, 1.0, lt);
}

void ftl_lifetime_scaled(const struct ftl *f, double bytes_per_day, double pe_scale, struct ftl_lifetime *lt)
{
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	memset(lt, 0, sizeof(*lt));
	double user = (double)f->g.user_bytes, phys = (double)f->g.phys_bytes;
	lt->drive_writes = (double)f->st.host_write_bytes / user;
	lt->window_waf_range = window_waf_range(f);
	lt->steady = lt->drive_writes >= FTL_STEADY_DRIVE_WRITES &&
		     lt->window_waf_range <= FTL_STEADY_WAF_RANGE;
	if (bytes_per_day <= 0) {
		lt->tbw_days = lt->naive_pe_days = lt->erase_days = INFINITY;
		lt->erase_cumulative_days = INFINITY;
		lt->eol_reason = "none";
		lt->basis = "no writes";
		return;
	}
	lt->tbw_days = f->cfg.dwpd * user * 365.0 * f->cfg.warranty_years / bytes_per_day;
	double pe = (double)f->cfg.pe_cycles * pe_scale;
	lt->naive_pe_days = pe * phys / bytes_per_day;
	lt->elapsed_days = (double)f->st.host_write_bytes / bytes_per_day;

	/* erases per host byte: measured over the window, or, before any erase, from the program
	 * rate (every programmed block must be erased once it is reused) */
	double rate;
	if (st.window_erases && st.window_host_bytes) {
		rate = (double)st.window_erases / (double)st.window_host_bytes;
		lt->basis = "window-erase-rate";
	} else {
		double waf = st.window_host_bytes ? st.waf_window : 1.0;
		rate = (waf < 1 ? 1 : waf) / ((double)f->upb * f->cfg.unit_size);
		lt->basis = "program-rate";
	}
	lt->erases_per_host_byte = rate;
	double erases_per_day = rate * bytes_per_day;
	if (!f->live_blocks || f->st.read_only) {
		lt->erase_days = lt->erase_cumulative_days = lt->elapsed_days;
		lt->eol_reason = "spare";
		return;
	}
	/* (1) rated P/E: the mean erase count of live blocks reaches pe_cycles */
	double to_pe = (pe - st.erase_mean) * (double)f->live_blocks;
	if (to_pe < 0)
		to_pe = 0;
	/* (2) spare: blocks wear evenly from now on; block i retires after endurance-erase more of
	 * its own erases. EOL comes when the k-th such retirement leaves the spare below threshold,
	 * k = the number of blocks the remaining spare margin can absorb, plus one. */
	uint64_t held = ftl_held_units(f);
	double floor_units = f->cfg.spare_threshold_pct / 100.0 * (double)f->initial_spare_units;
	double margin = (double)f->usable_units - (double)(f->g.user_units + held) - floor_units;
	uint64_t k = margin > 0 ? (uint64_t)floor(margin / f->upb) + 1 : 1;
	double to_spare = INFINITY;
	double *rem = malloc(f->live_blocks * sizeof(double));
	if (rem) {
		uint64_t n = 0;
		for (uint32_t b = 0; b < f->g.blocks; b++)
			if (!f->blk[b].bad)
				rem[n++] = f->blk[b].endurance * pe_scale - f->blk[b].erase;
		if (k <= n) {
			qsort(rem, n, sizeof(double), cmp_dbl);
			to_spare = (rem[k - 1] > 0 ? rem[k - 1] : 0) * (double)f->live_blocks;
		}
		free(rem);
	}
	double to_go = to_pe < to_spare ? to_pe : to_spare;
	lt->eol_reason = to_pe < to_spare ? "rated-pe" : "spare";
	lt->erase_days = lt->elapsed_days + to_go / erases_per_day;
	/* the cumulative rate; before any erase it is the program rate, as above */
	double cum = st.erases && st.host_write_bytes
			     ? (double)st.erases / (double)st.host_write_bytes : rate;
	lt->erase_cumulative_days = lt->elapsed_days + to_go / (cum * bytes_per_day);
}

/* ---- FDP (ftl.h, docs/fdp.md) ---- */

void ftl_fdp_event(struct ftl *f, uint8_t type, uint32_t ruh, uint32_t ru, uint64_t now,
                   uint64_t nlbam)
{
	struct ftl_fdp_event *e;
	if (f->ev_n < FTL_FDP_EVENTS) {
		e = &f->ev[(f->ev_head + f->ev_n++) % FTL_FDP_EVENTS];
	} else { /* full: the oldest goes */
		e = &f->ev[f->ev_head];
		f->ev_head = (f->ev_head + 1) % FTL_FDP_EVENTS;
	}
	*e = (struct ftl_fdp_event){.type = type, .ruh = (uint16_t)ruh, .ru = ru, .time_ns = now,
	                            .nlbam = nlbam};
	f->ev_total++;
}

const char *ftl_fdp_event_name(uint8_t type)
{
	switch (type) {
	case FTL_FDP_EV_RU_NOT_FULLY_WRITTEN: return "ru-not-fully-written";
	case FTL_FDP_EV_INVALID_PID: return "invalid-placement-id";
	case FTL_FDP_EV_MEDIA_REALLOCATED: return "media-reallocated";
	}
	return "unknown";
}

size_t ftl_fdp_events(const struct ftl *f, struct ftl_fdp_event *ev, size_t max)
{
	size_t n = f->ev_n < max ? f->ev_n : max;
	for (size_t i = 0; i < n; i++)
		ev[i] = f->ev[(f->ev_head + f->ev_n - n + i) % FTL_FDP_EVENTS];
	return n;
}

/* Units a frontier's open RU still takes (its current GC unit in superblock mode, the open
 * blocks of its slots in block mode); a whole RU when none is open. */
static uint64_t ru_avail_units(const struct ftl *f, const struct frontier *fr, uint32_t *ru)
{
	uint64_t n = 0;
	bool open = false;
	*ru = UINT32_MAX;
	for (uint32_t i = 0; i < f->g.frontier_slots; i++) {
		const struct slot *s = &fr->slot[i];
		if (s->gblk == NONE)
			continue;
		if (!open)
			*ru = f->cfg.gc_unit == FTL_GC_SUPERBLOCK ? fr->gu : s->gblk;
		open = true;
		n += (uint64_t)(f->ppb - s->page) * f->upp - s->unit;
	}
	return open ? n : f->upg;
}

void ftl_fdp_stats(const struct ftl *f, struct ftl_fdp_stats *st)
{
	memset(st, 0, sizeof(*st));
	uint32_t h = f->cfg.host_streams;
	st->nruh = h;
	st->persistently = f->cfg.fdp_ruh_type == FTL_RUHT_PERSISTENTLY;
	st->ru_bytes = (uint64_t)f->ppb * f->bpg * f->cfg.page_size;
	for (uint32_t i = 0; i < h; i++) {
		struct ftl_fdp_ruh *r = &st->ruh[i];
		r->host_bytes = f->own_host[i];
		r->media_bytes = f->own_media[i];
		r->erased_bytes = f->own_erased[i];
		r->ru_avail_bytes = ru_avail_units(f, &f->fr[i], &r->ru) * f->cfg.unit_size;
		st->hbmw += r->host_bytes;
		st->mbmw += r->media_bytes;
		st->mbe += r->erased_bytes;
	}
	st->ctrl_media_bytes = f->own_media[h];
	st->ctrl_erased_bytes = f->own_erased[h];
	st->mbmw += st->ctrl_media_bytes;
	st->mbe += st->ctrl_erased_bytes;
	st->events = f->ev_total;
}

void ftl_fdp_json(const struct ftl_fdp_stats *sp, const struct ftl_fdp_event *ev, size_t n,
                  struct json_out *j)
{
	const struct ftl_fdp_stats st = *sp;
	jout_object(j, "fdp", JOUT_BLOCK);
	jout_str(j, "ruh_type", st.persistently ? "persistently-isolated" : "initially-isolated");
	jout_u64(j, "reclaim_groups", 1);
	jout_u64(j, "reclaim_unit_handles", st.nruh);
	jout_u64(j, "reclaim_unit_bytes", st.ru_bytes);
	jout_u64(j, "hbmw_bytes", st.hbmw);
	jout_u64(j, "mbmw_bytes", st.mbmw);
	jout_u64(j, "mbe_bytes", st.mbe);
	jout_u64(j, "gc_frontier_media_bytes", st.ctrl_media_bytes);
	jout_u64(j, "gc_frontier_erased_bytes", st.ctrl_erased_bytes);
	jout_array(j, "handles", JOUT_BLOCK);
	for (uint32_t i = 0; i < st.nruh; i++) {
		const struct ftl_fdp_ruh *r = &st.ruh[i];
		jout_object(j, NULL, JOUT_INLINE);
		jout_u64(j, "ruh", i);
		jout_u64(j, "host_bytes", r->host_bytes);
		jout_u64(j, "media_bytes", r->media_bytes);
		jout_u64(j, "erased_bytes", r->erased_bytes);
		jout_u64(j, "ru_available_bytes", r->ru_avail_bytes);
		jout_end(j);
	}
	jout_end(j);
	jout_u64(j, "events_total", st.events);
	jout_array(j, "events", JOUT_BLOCK);
	for (size_t i = 0; i < n; i++) {
		jout_object(j, NULL, JOUT_INLINE);
		jout_str(j, "type", ftl_fdp_event_name(ev[i].type));
		jout_u64(j, "code", ev[i].type);
		if (ev[i].ruh != UINT16_MAX)
			jout_u64(j, "ruh", ev[i].ruh);
		if (ev[i].ru != UINT32_MAX)
			jout_u64(j, "ru", ev[i].ru);
		jout_u64(j, "time_ns", ev[i].time_ns);
		jout_u64(j, "nlbam", ev[i].nlbam);
		jout_end(j);
	}
	jout_end(j);
	jout_end(j);
}

static void fdp_json(const struct ftl *f, struct json_out *j)
{
	struct ftl_fdp_stats st;
	struct ftl_fdp_event ev[FTL_FDP_EVENTS];
	ftl_fdp_stats(f, &st);
	ftl_fdp_json(&st, ev, ftl_fdp_events(f, ev, FTL_FDP_EVENTS), j);
}

void ftl_json_members(const struct ftl *f, double bytes_per_day, struct json_out *j)
{
	struct ftl_stats st;
	struct ftl_lifetime lt;
	ftl_get_stats(f, &st);
	ftl_lifetime(f, bytes_per_day, &lt);
	jout_str(j, "preset", f->cfg.name);
	jout_u64(j, "user_bytes", f->g.user_bytes);
	jout_u64(j, "physical_bytes", f->g.phys_bytes);
	jout_num(j, "waf", "%.10g", st.waf_window);
	jout_num(j, "waf_cumulative", "%.10g", st.waf_cumulative);
	jout_u64(j, "host_write_bytes", st.host_write_bytes);
	jout_u64(j, "host_read_bytes", st.host_read_bytes);
	jout_u64(j, "host_trim_bytes", st.host_trim_bytes);
	jout_u64(j, "nand_write_bytes", st.nand_write_bytes);
	jout_u64(j, "host_program_bytes", st.host_prog_bytes);
	jout_u64(j, "gc_write_bytes", st.gc_prog_bytes);
	jout_u64(j, "wl_write_bytes", st.wl_prog_bytes);
	jout_u64(j, "pad_write_bytes", st.pad_prog_bytes);
	jout_u64(j, "nand_read_bytes", st.nand_read_bytes);
	jout_u64(j, "window_host_bytes", st.window_host_bytes);
	jout_u64(j, "window_nand_bytes", st.window_nand_bytes);
	jout_u64(j, "erases", st.erases);
	jout_u64(j, "gc_victims", st.gc_victims);
	jout_u64(j, "wl_victims", st.wl_victims);
	jout_u64(j, "retired_blocks", st.retired_blocks);
	jout_u64(j, "read_suspends", st.read_suspends);
	jout_u64(j, "rmw_units", st.rmw_units);
	jout_u64(j, "trim_units", st.trim_units);
	jout_u64(j, "trim_partial_units", st.trim_partial_units);
	jout_u64(j, "valid_units", st.valid_units);
	jout_object(j, "erase_count", JOUT_INLINE);
	jout_u64(j, "min", st.erase_min);
	jout_num(j, "mean", "%.4f", st.erase_mean);
	jout_u64(j, "max", st.erase_max);
	jout_end(j);
	uint64_t bins[16];
	uint32_t w;
	ftl_erase_histogram(f, bins, 16, &w);
	jout_object(j, "erase_histogram", JOUT_INLINE);
	jout_u64(j, "bin_width", w);
	jout_array(j, "counts", JOUT_INLINE);
	for (int i = 0; i < 16; i++)
		jout_u64(j, NULL, bins[i]);
	jout_end(j);
	jout_end(j);
	jout_num(j, "effective_spare_factor", "%.10g", st.effective_spare_factor);
	jout_u64(j, "pages_per_gc_unit", (uint64_t)f->ppb * f->bpg);
	jout_u64(j, "units_per_gc_unit", f->upg);
	jout_num(j, "host_bytes_per_day", "%.10g", bytes_per_day);
	jout_object(j, "lifetime_days", JOUT_INLINE);
	jout_num(j, "tbw", "%.6g", lt.tbw_days);
	jout_num(j, "naive_pe", "%.6g", lt.naive_pe_days);
	jout_num(j, "erase", "%.6g", lt.erase_days);
	jout_num(j, "erase_cumulative", "%.6g", lt.erase_cumulative_days);
	jout_num(j, "elapsed", "%.6g", lt.elapsed_days);
	jout_str(j, "eol_reason", lt.eol_reason);
	jout_str(j, "basis", lt.basis);
	jout_bool(j, "steady", lt.steady);
	jout_num(j, "window_waf_range", "%.4f", lt.window_waf_range);
	jout_end(j);
	jout_object(j, "smart", JOUT_INLINE);
	jout_u64(j, "percentage_used", st.percentage_used);
	jout_u64(j, "available_spare", st.available_spare);
	jout_u64(j, "available_spare_threshold", st.available_spare_threshold);
	jout_u64(j, "data_units_written", st.data_units_written);
	jout_u64(j, "data_units_read", st.data_units_read);
	jout_u64(j, "media_units_written", st.media_units_written);
	jout_u64(j, "critical_warning", (st.available_spare < st.available_spare_threshold ? 1u : 0u) |
						 (st.percentage_used >= 100 ? 4u : 0u) | (st.read_only ? 8u : 0u));
	jout_end(j);
	jout_bool(j, "read_only", st.read_only);
	if (f->cfg.fdp)
		fdp_json(f, j);
	ftl_attribution_json(&f->attr, NULL, j);
	jout_u64(j, "metadata_bytes", ftl_metadata_bytes(f));
	jout_u64(j, "virtual_time_ns", st.clock_ns);
}

int ftl_json(const struct ftl *f, double bytes_per_day, FILE *o)
{
	struct json_out j;
	jout_init(&j, o);
	jout_object(&j, NULL, JOUT_BLOCK);
	ftl_json_members(f, bytes_per_day, &j);
	jout_end(&j);
	return jout_finish(&j);
}
