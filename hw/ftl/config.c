/*
 * config.c - the FTL configuration: one table of keys, parsed and validated in one place.
 *
 * Every key (its name, type, bounds, help) is declared once in keys[] below. ftl_config_set()
 * parses a value against that row, and ftl_config_validate() checks the relations between keys
 * (e.g. unit_size must divide page_size). Errors always name the key and the value, in the form
 * "pages_per_block=0: must be > 0", so a user can fix a preset or a --set flag without reading
 * code. Presets (INI files) are read elsewhere and fed through ftl_config_set().
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "ftl_int.h"
#include "parse.h"

enum ktype { K_U32, K_U64, K_DBL, K_BOOL, K_ENUM, K_STR };

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	double min, max;       /* inclusive bounds for numbers */
	const char *const *names; /* enum value names */
	const char *help;
};

static const char *const gc_unit_names[] = {"block", "superblock", NULL};
static const char *const gc_stream_names[] = {"separate", "shared", "shared-burst", NULL};
static const char *const gc_policy_names[] = {"greedy", "fifo", "cost-benefit", "d-choice", NULL};
static const char *const gc_bg_trigger_names[] = {"idle", "command", NULL};
static const char *const ruh_type_names[] = {"initially", "persistently", NULL};

#define O(f) offsetof(struct ftl_config, f)
static const struct key keys[] = {
	{"name", K_STR, O(name), 0, 0, NULL, "preset name (informational)"},
	{"channels", K_U32, O(channels), 1, 1024, NULL, "NAND channels"},
	{"luns_per_channel", K_U32, O(luns_per_channel), 1, 1024, NULL, "LUNs (dies) per channel"},
	{"planes_per_lun", K_U32, O(planes_per_lun), 1, 16, NULL, "planes per LUN"},
	{"blocks_per_plane", K_U32, O(blocks_per_plane), 1, 1u << 24, NULL, "erase blocks per plane"},
	{"pages_per_block", K_U32, O(pages_per_block), 1, 65536, NULL, "NAND pages per block"},
	{"page_size", K_U32, O(page_size), 512, 1u << 20, NULL, "NAND page (program unit) bytes"},
	{"unit_size", K_U32, O(unit_size), 512, 1u << 20, NULL, "mapping unit bytes (L2P granule)"},
	{"op_percent", K_DBL, O(op_percent), 0, 1000, NULL, "over-provisioning (T-U)/U in % (or spare_factor)"},
	{"spare_factor", K_DBL, O(spare_factor), 0, 0.95, NULL, "spare factor (T-U)/T (or op_percent)"},
	{"pe_cycles", K_U32, O(pe_cycles), 1, 1e7, NULL, "rated program/erase cycles"},
	{"pe_variation", K_DBL, O(pe_variation), 0, 0.5, NULL, "relative std-dev of per-block endurance"},
	{"dwpd", K_DBL, O(dwpd), 0, 1000, NULL, "rated drive writes per day"},
	{"warranty_years", K_DBL, O(warranty_years), 0, 100, NULL, "warranty years (TBW = dwpd*user*365*years)"},
	{"t_read_us", K_DBL, O(t_read_us), 0, 1e6, NULL, "NAND page read latency tR (us)"},
	{"t_prog_us", K_DBL, O(t_prog_us), 0, 1e6, NULL, "NAND page program latency tPROG (us)"},
	{"t_erase_us", K_DBL, O(t_erase_us), 0, 1e7, NULL, "NAND block erase latency tBERS (us)"},
	{"channel_mbps", K_DBL, O(channel_mbps), 0, 1e6, NULL, "channel bandwidth (MB/s, 1 MB = 1e6 B; 0 = no transfer cost)"},
	{"multiplane", K_BOOL, O(multiplane), 0, 0, NULL, "planes of a LUN run reads, programs or erases together (multi-plane); off: a LUN's planes share one busy time"},
	{"t_suspend_us", K_DBL, O(t_suspend_us), 0, 1e6, NULL, "program/erase suspend latency for a host read (us; 0 = reads wait for programs and erases)"},
	{"suspend_max", K_U32, O(suspend_max), 0, 255, NULL, "suspensions of one program or erase at most"},
	{"host_mbps", K_DBL, O(host_mbps), 0, 1e8, NULL, "host link bandwidth (MB/s, 1 MB = 1e6 B; 0 = no link model)"},
	{"t_cmd_us", K_DBL, O(t_cmd_us), 0, 1e6, NULL, "controller time added to every host read and write (us): command processing, FTL lookup, DMA"},
	{"gc_unit", K_ENUM, O(gc_unit), 0, 0, gc_unit_names, "GC/erase unit: block|superblock"},
	{"gc_unit_superblocks", K_U32, O(gc_unit_superblocks), 1, 65536, NULL, "superblocks per GC unit with gc_unit=superblock (an FDP reclaim unit of several superblocks, as a 16 GiB RU)"},
	{"gc_stream", K_ENUM, O(gc_stream), 0, 0, gc_stream_names, "GC copies: separate frontier|shared with host (mixed per victim)|shared-burst (FEMU-like)"},
	{"gc_policy", K_ENUM, O(gc_policy), 0, 0, gc_policy_names, "victim policy: greedy|fifo|cost-benefit|d-choice"},
	{"gc_dchoice", K_U32, O(gc_dchoice), 1, 1024, NULL, "d for d-choice victim selection"},
	{"gc_reserve", K_U32, O(gc_reserve), 1, 64, NULL, "free GC units reserved for GC, per frontier slot"},
	{"gc_bg_free_pct", K_DBL, O(gc_bg_free_pct), 0, 90, NULL, "background GC when free GC units < this %"},
	{"gc_fg_free_pct", K_DBL, O(gc_fg_free_pct), 0, 90, NULL, "foreground GC when free GC units < this %"},
	{"gc_bg_min_invalid_pct", K_DBL, O(gc_bg_min_invalid_pct), 0, 100, NULL, "background GC skips victims with less invalid data than this %"},
	{"gc_bg_trigger", K_ENUM, O(gc_bg_trigger), 0, 0, gc_bg_trigger_names, "background GC in idle time before a host command (idle) or one cycle after every host command, busy or not (command: FEMU bbssd)"},
	{"wl_static", K_BOOL, O(wl_static), 0, 0, NULL, "static wear leveling on|off"},
	{"wl_threshold", K_U32, O(wl_threshold), 0, 1e7, NULL, "max-min erase count triggering static WL (0 = auto)"},
	{"write_buffer_pages", K_U32, O(write_buffer_pages), 0, 1u << 20, NULL, "write buffer in NAND pages (0 = 2 per LUN)"},
	{"host_streams", K_U32, O(host_streams), 1, FTL_STREAMS_MAX, NULL, "host write frontiers (placement hints); with fdp=on, the reclaim unit handles"},
	{"fdp", K_BOOL, O(fdp), 0, 0, NULL, "NVMe Flexible Data Placement: host streams are reclaim unit handles, a reclaim unit is a GC unit, per-handle statistics and events (needs gc_stream=separate)"},
	{"fdp_ruh_type", K_ENUM, O(fdp_ruh_type), 0, 0, ruh_type_names, "FDP reclaim unit handles: initially isolated (GC mixes the handles' data) or persistently isolated (a GC frontier per handle)"},
	{"spare_threshold_pct", K_DBL, O(spare_threshold_pct), 0, 100, NULL, "end of life when available spare < this %"},
	{"seed", K_U64, O(seed), 0, 1.8e19, NULL, "seed of the per-block endurance draw"},
};
#undef O
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

void ftl_config_default(struct ftl_config *c)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->name, "default");
	c->channels = 1;
	c->luns_per_channel = 1;
	c->planes_per_lun = 1;
	c->blocks_per_plane = 1024;
	c->pages_per_block = 256;
	c->page_size = 4096;
	c->unit_size = 4096;
	c->op_percent = -1;
	c->spare_factor = 0.1;
	c->pe_cycles = 3000;
	c->pe_variation = 0;
	c->dwpd = 1;
	c->warranty_years = 5;
	c->t_read_us = 40;
	c->t_prog_us = 200;
	c->t_erase_us = 2000;
	c->channel_mbps = 800;
	c->multiplane = true;
	c->suspend_max = 4;
	c->gc_unit = FTL_GC_SUPERBLOCK;
	c->gc_unit_superblocks = 1;
	c->gc_stream = FTL_GC_SEPARATE;
	c->gc_policy = FTL_GC_GREEDY;
	c->gc_dchoice = 8;
	c->gc_reserve = 2;
	c->gc_bg_min_invalid_pct = 12.5;
	c->wl_static = true;
	c->host_streams = 2;
	c->spare_threshold_pct = 10;
	c->seed = 1;
}

const char *ftl_config_key(size_t i, const char **help)
{
	if (i >= NKEYS)
		return NULL;
	if (help)
		*help = keys[i].help;
	return keys[i].name;
}

static const struct key *find_key(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

/* The value of a string, bool or enum key into p. */
static int set_word(const struct key *k, void *p, const char *name, const char *val, char *err,
                    size_t len)
{
	char opts[128] = "";

	switch (k->type) {
	case K_STR:
		if (strlen(val) >= FTL_NAME_MAX)
			return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: longer than %d characters",
			                 name, val, FTL_NAME_MAX - 1);
		/* snapshots keep the config as key=value lines: a line break would end the value */
		if (strpbrk(val, "\n\r"))
			return fg_err_rc(err, len, FTL_E_INVAL, "%s: a line break in the value", name);
		strcpy(p, val);
		return FTL_OK;
	case K_BOOL:
		if (!strcmp(val, "on") || !strcmp(val, "true") || !strcmp(val, "1"))
			*(bool *)p = true;
		else if (!strcmp(val, "off") || !strcmp(val, "false") || !strcmp(val, "0"))
			*(bool *)p = false;
		else
			return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: must be on or off", name,
			                 val);
		return FTL_OK;
	default: /* K_ENUM */
		for (int i = 0; k->names[i]; i++)
			if (!strcmp(val, k->names[i])) {
				*(int *)p = i;
				return FTL_OK;
			}
		for (int i = 0, n = 0; k->names[i] && n < (int)sizeof(opts); i++)
			n += snprintf(opts + n, sizeof(opts) - (size_t)n, "%s%s", i ? "|" : "",
			              k->names[i]);
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: must be one of %s", name, val,
		                 opts);
	}
}

/* A number for key k: integers take the binary size suffixes (common/parse: k, KiB, ...). */
static int parse_number(const struct key *k, const char *name, const char *val, double *out,
                        char *err, size_t len)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(val, &end);
	if (end == val || errno)
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: not a number", name, val);
	if (k->type != K_DBL && *end) {
		double mul = fg_size_suffix(end); /* the CLI's sizes and the config's: one rule */
		if (mul) {
			d *= mul;
			end += strlen(end);
		}
	}
	if (*end)
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: trailing characters '%s'", name,
		                 val, end);
	if (!isfinite(d))
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: not a finite number", name, val);
	if (k->type != K_DBL && d != floor(d))
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: must be an integer", name, val);
	*out = d;
	return FTL_OK;
}

int ftl_config_set(struct ftl_config *c, const char *name, const char *val, char *err, size_t len)
{
	const struct key *k = find_key(name);
	double d = 0; /* set by parse_number() on success (gcc cannot always see it) */
	void *p;
	int rc;

	if (!k)
		return fg_err_rc(err, len, FTL_E_INVAL, "%s: unknown config key", name);
	p = (char *)c + k->off;
	if (!val || !*val)
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=: empty value", name);
	if (k->type == K_STR || k->type == K_BOOL || k->type == K_ENUM)
		return set_word(k, p, name, val, err, len);
	if ((rc = parse_number(k, name, val, &d, err, len)))
		return rc;
	/* op_percent and spare_factor are alternatives: setting one clears the other */
	if (!strcmp(name, "op_percent") || !strcmp(name, "spare_factor")) {
		if (d < k->min || d > k->max)
			return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: must be in [%g, %g]", name,
			                 val, k->min, k->max);
		c->op_percent = c->spare_factor = -1;
		*(double *)p = d;
		return FTL_OK;
	}
	if (d < k->min)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 k->min == 1 && k->type != K_DBL ? "%s=%s: must be > 0"
		                                                 : "%s=%s: must be >= %g",
		                 name, val, k->min);
	if (d > k->max)
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%s: must be <= %g", name, val, k->max);
	switch (k->type) {
	case K_U32: *(uint32_t *)p = (uint32_t)d; break;
	case K_U64: {
		/* exact past 2^53 when given in digits; a size suffix ("4k") was applied to d */
		char *e;
		uint64_t v = strtoull(val, &e, 0);
		*(uint64_t *)p = *e ? (uint64_t)d : v;
		break;
	}
	case K_DBL: *(double *)p = d; break;
	default: break;
	}
	return FTL_OK;
}

size_t ftl_config_format(const struct ftl_config *c, char *buf, size_t len)
{
	size_t n = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const void *p = (const char *)c + k->off;
		char v[96];
		switch (k->type) {
		case K_STR: snprintf(v, sizeof(v), "%s", (const char *)p); break;
		case K_U32: snprintf(v, sizeof(v), "%" PRIu32, *(const uint32_t *)p); break;
		case K_U64: snprintf(v, sizeof(v), "%" PRIu64, *(const uint64_t *)p); break;
		case K_DBL:
			if (*(const double *)p < 0)
				continue; /* the unused one of op_percent / spare_factor */
			snprintf(v, sizeof(v), "%.17g", *(const double *)p);
			break;
		case K_BOOL: snprintf(v, sizeof(v), "%s", *(const bool *)p ? "on" : "off"); break;
		case K_ENUM: snprintf(v, sizeof(v), "%s", k->names[*(const int *)p]); break;
		}
		n += snprintf(buf ? buf + n : NULL, n < len ? len - n : 0, "%s=%s\n", k->name, v);
	}
	return n;
}

/* Check one key's stored value against its row of the table. */
static int check_bounds(const struct ftl_config *c, const struct key *k, char *err, size_t len)
{
	const void *p = (const char *)c + k->off;
	double d;
	switch (k->type) {
	case K_U32: d = *(const uint32_t *)p; break;
	case K_DBL: d = *(const double *)p; break;
	case K_ENUM: {
		int n = 0, v = *(const int *)p;
		while (k->names[n])
			n++;
		if (v < 0 || v >= n)
			return fg_err_rc(err, len, FTL_E_INVAL, "%s=%d: not a valid choice",
			                 k->name, v);
		return FTL_OK;
	}
	default: return FTL_OK;
	}
	if (!strcmp(k->name, "op_percent") || !strcmp(k->name, "spare_factor"))
		if (d < 0)
			return FTL_OK;
	if (d < k->min) {
		if (k->min == 1 && k->type == K_U32)
			return fg_err_rc(err, len, FTL_E_INVAL, "%s=%g: must be > 0", k->name, d);
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%g: must be >= %g", k->name, d, k->min);
	}
	if (d > k->max)
		return fg_err_rc(err, len, FTL_E_INVAL, "%s=%g: must be <= %g", k->name, d, k->max);
	return FTL_OK;
}

/* Write frontiers: the host streams, then the GC frontiers (none with gc_stream=shared or
 * shared-burst; one, or with persistently isolated FDP handles one per handle). */
uint32_t ftl_config_frontiers(const struct ftl_config *c)
{
	if (c->gc_stream != FTL_GC_SEPARATE)
		return c->host_streams;
	return c->host_streams + (ftl_config_pi(c) ? c->host_streams : 1);
}

/*
 * The GC thresholds, and the check that the spare can hold the GC units that never hold
 * reclaimable data (the reserve and the open write frontiers) with room to spare.
 */
static int derive_gc(const struct ftl_config *c, struct ftl_geometry *g, char *err, size_t len)
{
	/* GC units that never hold reclaimable data: the reserve, and open frontier blocks */
	uint32_t nfront = ftl_config_frontiers(c);
	/* per frontier slot: one victim's copies may open a block on each slot of the GC
	 * frontier before its erase frees one. Persistently isolated handles have a GC frontier
	 * each, and any of them may need its slots' blocks next: one more unit per slot for each
	 * GC frontier beyond the first (once open, a frontier absorbs several victims before it
	 * needs another) */
	uint32_t ngc = ftl_config_pi(c) ? c->host_streams : 1;
	g->reserve_gc_units = (c->gc_reserve + ngc - 1) * (g->frontier_slots / g->blocks_per_gc_unit);
	g->fg_free_gc_units = (uint32_t)ceil(c->gc_fg_free_pct / 100.0 * g->gc_units);
	if (g->fg_free_gc_units < g->reserve_gc_units)
		g->fg_free_gc_units = g->reserve_gc_units;
	g->bg_free_gc_units = (uint32_t)ceil(c->gc_bg_free_pct / 100.0 * g->gc_units);
	if (g->bg_free_gc_units < g->fg_free_gc_units)
		g->bg_free_gc_units = g->fg_free_gc_units;
	uint64_t held = (uint64_t)g->fg_free_gc_units + 1 +
	                (uint64_t)nfront * g->frontier_slots / g->blocks_per_gc_unit;
	uint64_t spare_gu = (g->phys_units - g->user_units) / g->units_per_gc_unit;
	if (spare_gu < held + 2)
		return fg_err_rc(
		        err, len, FTL_E_INVAL,
		        "%s=%g: only %llu spare GC units, need > %llu (GC reserve %u + %u open "
		        "frontier units + 2); raise the spare or use more, smaller blocks",
		        c->spare_factor >= 0 ? "spare_factor" : "op_percent",
		        c->spare_factor >= 0 ? c->spare_factor : c->op_percent,
		        (unsigned long long)spare_gu, (unsigned long long)held + 1,
		        g->fg_free_gc_units, (unsigned)(held - g->fg_free_gc_units - 1));
	if (c->gc_bg_free_pct < c->gc_fg_free_pct)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "gc_bg_free_pct=%g: must be >= gc_fg_free_pct=%g",
		                 c->gc_bg_free_pct, c->gc_fg_free_pct);
	return FTL_OK;
}

/*
 * Derive the geometry and check that the device can work at all: 32-bit physical unit
 * numbers, and enough spare for the GC reserve and the open write frontiers (those blocks
 * hold no reclaimable space, so a device with less spare could wedge).
 */
int ftl_geometry_derive(const struct ftl_config *c, struct ftl_geometry *g, char *err, size_t len)
{
	int rc;
	memset(g, 0, sizeof(*g));
	for (size_t i = 0; i < NKEYS; i++)
		if ((rc = check_bounds(c, &keys[i], err, len)))
			return rc;
	if ((c->op_percent < 0) == (c->spare_factor < 0))
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "op_percent/spare_factor: set exactly one of the two");
	if (c->unit_size % FTL_SECTOR)
		return fg_err_rc(err, len, FTL_E_INVAL, "unit_size=%u: must be a multiple of %u",
		                 c->unit_size, FTL_SECTOR);
	if (c->page_size % c->unit_size)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "page_size=%u: must be a multiple of unit_size=%u", c->page_size,
		                 c->unit_size);
	/* FDP keeps each handle's GC copies apart (persistently isolated) or pools them on one GC
	 * frontier (initially isolated): both need GC copies off the host frontiers */
	if (c->fdp && c->gc_stream != FTL_GC_SEPARATE)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "gc_stream=%s: fdp=on needs gc_stream=separate (GC copies on "
		                 "frontiers of their own, not on a handle's)",
		                 gc_stream_names[c->gc_stream]);
	uint64_t planes = (uint64_t)c->channels * c->luns_per_channel * c->planes_per_lun;
	uint64_t blocks = planes * c->blocks_per_plane;
	if (planes > 65536)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "channels*luns_per_channel*planes_per_lun=%llu: must be <= 65536",
		                 (unsigned long long)planes);
	if (blocks >= (1ull << 31))
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "blocks_per_plane=%u: %llu blocks in all, must be < 2^31",
		                 c->blocks_per_plane, (unsigned long long)blocks);
	g->units_per_page = c->page_size / c->unit_size;
	if (g->units_per_page > 64)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "page_size=%u: at most 64 mapping units (unit_size=%u) per page",
		                 c->page_size, c->unit_size);
	uint64_t upb = (uint64_t)g->units_per_page * c->pages_per_block;
	uint64_t phys = blocks * upb;
	if (phys >= UINT32_MAX)
		return fg_err_rc(
		        err, len, FTL_E_INVAL,
		        "unit_size=%u: %llu physical mapping units, must be < 2^32 (use a larger "
		        "unit_size or fewer blocks)",
		        c->unit_size, (unsigned long long)phys);
	g->planes = (uint32_t)planes;
	g->luns = c->channels * c->luns_per_channel;
	g->blocks = (uint32_t)blocks;
	g->units_per_block = (uint32_t)upb;
	bool sb = c->gc_unit == FTL_GC_SUPERBLOCK;
	if (!sb && c->gc_unit_superblocks != 1)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "gc_unit_superblocks=%u: needs gc_unit=superblock (a block GC unit is one "
		                 "block)",
		                 c->gc_unit_superblocks);
	if (sb && c->blocks_per_plane % c->gc_unit_superblocks)
		return fg_err_rc(err, len, FTL_E_INVAL,
		                 "gc_unit_superblocks=%u: must divide blocks_per_plane=%u (every GC unit "
		                 "whole)",
		                 c->gc_unit_superblocks, c->blocks_per_plane);
	/* a superblock GC unit is gc_unit_superblocks consecutive superblocks: blocks
	 * [g x planes x K, (g + 1) x planes x K), K on each plane */
	g->blocks_per_gc_unit = sb ? g->planes * c->gc_unit_superblocks : 1;
	if ((uint64_t)upb * g->blocks_per_gc_unit >= UINT32_MAX)
		return fg_err_rc(err, len, FTL_E_INVAL, "pages_per_block=%u: GC unit too large",
		                 c->pages_per_block);
	g->units_per_gc_unit = (uint32_t)upb * g->blocks_per_gc_unit;
	g->gc_units = g->blocks / g->blocks_per_gc_unit;
	/* open blocks per frontier: one per plane (block units), or every block of the open unit
	 * (superblock units), which its pages stripe over */
	g->frontier_slots = sb ? g->blocks_per_gc_unit : g->planes;
	g->phys_units = phys;
	g->phys_bytes = phys * c->unit_size;
	double sf = c->spare_factor >= 0 ? c->spare_factor : c->op_percent / (100.0 + c->op_percent);
	g->user_units = (uint64_t)floor((double)phys * (1.0 - sf));
	/* sectors must not straddle: user bytes is a whole number of units */
	g->user_bytes = g->user_units * c->unit_size;
	if (g->user_units == 0)
		return fg_err_rc(err, len, FTL_E_INVAL, "spare_factor=%g: leaves no user capacity",
		                 sf);

	return derive_gc(c, g, err, len);
}

int ftl_config_validate(const struct ftl_config *c, char *err, size_t len)
{
	struct ftl_geometry g;
	return ftl_geometry_derive(c, &g, err, len);
}

int ftl_config_geometry(const struct ftl_config *c, struct ftl_geometry *g, char *err, size_t len)
{
	return ftl_geometry_derive(c, g, err, len);
}

int ftl_config_diff(const struct ftl_config *want, const struct ftl_config *have, char *out,
                    size_t outlen)
{
	char a[FTL_CONFIG_TEXT_MAX], b[FTL_CONFIG_TEXT_MAX];
	char *sa, *sb, *la, *lb;

	/* a cut text could hide the difference: say so instead */
	if (ftl_config_format(want, a, sizeof(a)) >= sizeof(a) ||
	    ftl_config_format(have, b, sizeof(b)) >= sizeof(b))
		return snprintf(out, outlen, "config longer than %d bytes: cannot compare",
		                FTL_CONFIG_TEXT_MAX - 1),
		       1;
	la = strtok_r(a, "\n", &sa);
	lb = strtok_r(b, "\n", &sb);
	for (; la || lb; la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb)) {
		if (la && lb && !strncmp(la, "name=", 5) && !strncmp(lb, "name=", 5))
			continue;
		if (!la || !lb || strcmp(la, lb)) {
			snprintf(out, outlen, "the snapshot's drive has %s, this run asks for %s",
			         lb ? lb : "(nothing)", la ? la : "(nothing)");
			return 1;
		}
	}
	return 0;
}
