/*
 * ftl.c - creating and destroying an FTL instance, and small shared helpers.
 *
 * ftl_create() validates the config (config.c), derives the geometry, and allocates the big
 * tables with mmap so that untouched parts cost no memory: the tables use 0 as "empty", so
 * anonymous zero pages are a valid initial state. Transparent huge pages are requested for
 * them: random L2P lookups on a multi-GiB table are otherwise dominated by TLB misses.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ftl_int.h"

const char *ftl_strerror(int s)
{
	switch (s) {
	case FTL_OK: return "ok";
	case FTL_E_INVAL: return "invalid argument (zero length or not 512-byte aligned)";
	case FTL_E_RANGE: return "LBA range past the end of the device";
	case FTL_E_FULL: return "device full: no reclaimable space";
	case FTL_E_WORN: return "device worn out (end of life): read-only";
	case FTL_E_NOMEM: return "out of memory";
	case FTL_E_IO: return "I/O error";
	case FTL_E_CORRUPT: return "snapshot corrupted, truncated or incompatible";
	case FTL_E_NOENT: return "no such preset";
	}
	return "unknown error";
}

/* xoshiro256** (Blackman & Vigna), seeded through splitmix64 */
static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t ftl_rand(uint64_t s[4])
{
	uint64_t r = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

void ftl_seed(uint64_t s[4], uint64_t seed)
{
	for (int i = 0; i < 4; i++) {
		uint64_t z = (seed += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		s[i] = z ^ (z >> 31);
	}
}

/*
 * Mappings a destroyed drive left for the next one (ftl_keep_tables). A new drive of the same
 * geometry asks for the same sizes and gets them back with their resident pages zeroed, as a
 * fresh mapping would read: the kernel does not have to back them again. On a VM whose balloon
 * reports free pages to its host, backing a freed page again costs 0.15-4.6 s/GiB (docs/
 * performance.md); zeroing a resident one runs at memset's speed.
 */
#define KEPT_MAX 16
static struct kept {
	void *p;
	size_t bytes;
} kept[KEPT_MAX];
static int nkept;
static int keep_on; /* ftl_keep_tables(true) calls not yet matched by a false one */

static void *map_new(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (bytes >= (2u << 20))
		madvise(p, bytes, MADV_HUGEPAGE);
#endif
	return p;
}

/* Zero what the kernel backs of p (mincore: a page never touched reads as zero already and
 * stays unbacked). false if mincore failed (then nothing was zeroed). */
static bool zero_resident(void *p, size_t bytes)
{
	const size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + pg - 1) / pg;
	unsigned char *vec = malloc(n ? n : 1);
	if (!vec || mincore(p, bytes, vec)) {
		free(vec);
		return false;
	}
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && (vec[j] & 1))
			j++;
		if (j > i) {
			size_t end = j * pg < bytes ? j * pg : bytes;
			memset((char *)p + i * pg, 0, end - i * pg);
		}
		i = j + 1;
	}
	free(vec);
	return true;
}

static void kept_release(void)
{
	for (int i = 0; i < nkept; i++)
		munmap(kept[i].p, kept[i].bytes);
	nkept = 0;
}

void ftl_keep_tables(bool on)
{
	if (on)
		keep_on++;
	else if (keep_on && !--keep_on)
		kept_release();
}

void *ftl_big_alloc(size_t bytes)
{
	if (!bytes)
		bytes = 1;
	for (int i = 0; keep_on && i < nkept; i++) {
		if (kept[i].bytes != bytes)
			continue;
		void *p = kept[i].p;
		kept[i] = kept[--nkept];
		if (zero_resident(p, bytes))
			return p;
		munmap(p, bytes); /* (not zeroed: a new mapping instead) */
		return map_new(bytes);
	}
	/* another geometry: what is kept would only add to this drive's memory */
	if (keep_on)
		kept_release();
	return map_new(bytes);
}

void ftl_big_free(void *p, size_t bytes)
{
	if (!p)
		return;
	if (!bytes)
		bytes = 1;
	if (keep_on && nkept < KEPT_MAX)
		kept[nkept++] = (struct kept){p, bytes};
	else
		munmap(p, bytes);
}

/* The timing model's figures in ns (the config's are in us and MB/s). */
static void ftl_timing_init(struct ftl *f, const struct ftl_config *cfg)
{
	/* bytes / (MB/s) = bytes * 1000 / mbps ns */
	if (cfg->channel_mbps > 0) {
		f->xfer_unit_ns = (uint64_t)((double)cfg->unit_size * 1000.0 / cfg->channel_mbps + 0.5);
		f->xfer_page_ns = (uint64_t)((double)cfg->page_size * 1000.0 / cfg->channel_mbps + 0.5);
	}
	f->t_read_ns = (uint64_t)(cfg->t_read_us * 1000.0 + 0.5);
	f->t_prog_ns = (uint64_t)(cfg->t_prog_us * 1000.0 + 0.5);
	f->t_erase_ns = (uint64_t)(cfg->t_erase_us * 1000.0 + 0.5);
	f->t_susp_ns = (uint64_t)(cfg->t_suspend_us * 1000.0 + 0.5);
	f->t_cmd_ns = (uint64_t)(cfg->t_cmd_us * 1000.0 + 0.5);
	if (cfg->t_suspend_us > 0 && !f->t_susp_ns)
		f->t_susp_ns = 1; /* a suspend that costs nothing still is one */
	if (cfg->host_mbps > 0)
		f->link_fp = (uint64_t)(1000.0 / cfg->host_mbps * 4294967296.0 + 0.5);
}

/* The hot path's divisors (a shift for a power of two, else a multiply) and each plane's LUN
 * and channel. */
static void ftl_divisors_init(struct ftl *f)
{
	f->upg_shift = udiv32_shift(f->upg);
	f->upb_shift = udiv32_shift(f->upb);
	f->upp_shift = udiv32_shift(f->upp);
	f->ppb_shift = udiv32_shift(f->ppb);
	f->us_shift = udiv32_shift(f->cfg.unit_size);
	f->upg_c = f->upg_shift < 0 ? udiv32_c(f->upg) : 0;
	f->upb_c = f->upb_shift < 0 ? udiv32_c(f->upb) : 0;
	f->upp_c = f->upp_shift < 0 ? udiv32_c(f->upp) : 0;
	f->ppb_c = f->ppb_shift < 0 ? udiv32_c(f->ppb) : 0;
	f->planes_pow2 = !(f->g.planes & (f->g.planes - 1));
	f->plane_lun = malloc(f->g.planes * sizeof(uint32_t));
	f->plane_ch = malloc(f->g.planes * sizeof(uint32_t));
	if (f->plane_lun && f->plane_ch)
		for (uint32_t p = 0; p < f->g.planes; p++) {
			/* plane = (pl * luns_per_channel + lun) * channels + ch, channel-fastest */
			f->plane_lun[p] = p % f->g.luns;
			f->plane_ch[p] = p % f->ch;
		}
}

/* The mapping tables, the per-block and per-GC-unit state and the timing model's queues.
 * false when one could not be allocated (ftl_destroy frees the others). */
static bool ftl_tables_alloc(struct ftl *f)
{
	f->l2p_bytes = f->g.user_units * sizeof(uint32_t);
	f->p2l_bytes = f->g.phys_units * sizeof(uint32_t);
	f->valid_bytes = (f->g.phys_units + 63) / 64 * sizeof(uint64_t);
	f->l2p = ftl_big_alloc(f->l2p_bytes);
	f->p2l = ftl_big_alloc(f->p2l_bytes);
	f->valid = ftl_big_alloc(f->valid_bytes);
	f->ucls_bytes = f->g.phys_units;
	f->ucls = ftl_big_alloc(f->ucls_bytes);
	if (f->upp > 1) { /* the lpns of pages written whole (p2l_get()) */
		f->p2l_pg_bytes = (uint64_t)f->g.blocks * f->ppb * sizeof(uint32_t);
		f->p2l_pg = ftl_big_alloc(f->p2l_pg_bytes);
	}
	if (f->bpg == f->g.planes && f->bpg > 1) { /* stripe certificates: one bit per page */
		f->sp_bytes = ((uint64_t)f->g.blocks * f->ppb + 63) / 64 * sizeof(uint64_t);
		f->sp_whole = ftl_big_alloc(f->sp_bytes);
		f->sp_cont = ftl_big_alloc(f->sp_bytes);
	}
	f->page_word = f->upp <= 64 && !(f->upp & (f->upp - 1));
	f->stripe_writes = f->p2l_pg && f->sp_whole && f->cfg.gc_unit == FTL_GC_SUPERBLOCK &&
	                   f->g.frontier_slots == f->bpg && f->page_word;
	f->blk = calloc(f->g.blocks, sizeof(*f->blk));
	f->gu = calloc(f->g.gc_units, sizeof(*f->gu));
	f->lun_busy = calloc(f->g.luns, sizeof(uint64_t));
	f->lun_from = calloc(f->g.luns, sizeof(uint64_t));
	f->lun_susp = calloc(f->g.luns, sizeof(uint64_t));
	f->lun_kind = calloc(f->g.luns, 1);
	f->pl_busy = calloc(f->g.planes, sizeof(uint64_t));
	f->pl_susp = calloc(f->g.planes, 1);
	f->rd_ch = calloc(f->ch, sizeof(*f->rd_ch));
	if (!(f->ch & (f->ch - 1))) {
		f->rd_key = calloc(f->g.planes, sizeof(int64_t));
		f->rd_cnt = calloc(f->g.planes, sizeof(int64_t));
	}
	if (f->bpg > 1)
		f->gc_rd = calloc((size_t)f->bpg * f->ppb, sizeof(uint64_t));
	f->ch_busy = calloc(f->ch, sizeof(uint64_t));
	f->nwbuf = f->cfg.write_buffer_pages ? f->cfg.write_buffer_pages : 2 * f->g.luns;
	f->wbuf = calloc(f->nwbuf, sizeof(uint64_t));
	return f->plane_lun && f->plane_ch && f->l2p && f->p2l && f->valid && f->ucls && f->blk && f->gu &&
	       f->lun_busy && f->ch_busy && f->lun_from && f->lun_susp && f->lun_kind && f->pl_busy &&
	       f->pl_susp && f->rd_ch && (f->ch & (f->ch - 1) || (f->rd_key && f->rd_cnt)) && (f->bpg <= 1 || f->gc_rd) && f->wbuf &&
	       (!f->sp_bytes || (f->sp_whole && f->sp_cont)) && (!f->p2l_pg_bytes || f->p2l_pg);
}

struct ftl *ftl_create(const struct ftl_config *cfg, char *err, size_t errlen)
{
	struct ftl *f = calloc(1, sizeof(*f));
	if (!f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	f->cfg = *cfg;
	if (ftl_geometry_derive(cfg, &f->g, err, errlen)) {
		free(f);
		return NULL;
	}
	f->ch = cfg->channels;
	f->lpc = cfg->luns_per_channel;
	f->ppl = cfg->planes_per_lun;
	f->upp = f->g.units_per_page;
	f->ppb = cfg->pages_per_block;
	f->upb = f->g.units_per_block;
	f->upg = f->g.units_per_gc_unit;
	f->bpg = f->g.blocks_per_gc_unit;
	ftl_timing_init(f, cfg);
	ftl_divisors_init(f);
	if (!ftl_tables_alloc(f) || ftl_alloc_init(f) || ftl_wear_init(f)) {
		snprintf(err, errlen, "out of memory for a %llu-unit device",
			 (unsigned long long)f->g.phys_units);
		ftl_destroy(f);
		return NULL;
	}
	for (uint32_t g = 0; g < f->g.gc_units; g++) {
		f->gu[g].cap = f->upg;
		f->gu[g].pos = NONE;
		ftl_pool_put(f, g);
	}
	ftl_seed(f->rng, cfg->seed);
	f->bg_min_reclaim = (uint32_t)ceil(cfg->gc_bg_min_invalid_pct / 100.0 * f->upg);
	f->win_step = f->g.user_bytes / 8 ? f->g.user_bytes / 8 : 1;
	f->win_next = f->win_step;
	return f;
}

void ftl_destroy(struct ftl *f)
{
	if (!f)
		return;
	ftl_big_free(f->l2p, f->l2p_bytes);
	ftl_big_free(f->p2l, f->p2l_bytes);
	ftl_big_free(f->valid, f->valid_bytes);
	ftl_big_free(f->ucls, f->ucls_bytes);
	ftl_big_free(f->p2l_pg, f->p2l_pg_bytes);
	ftl_big_free(f->sp_whole, f->sp_bytes);
	ftl_big_free(f->sp_cont, f->sp_bytes);
	free(f->blk);
	free(f->gu);
	free(f->bucket);
	free(f->closed);
	free(f->fifo);
	if (f->pool)
		for (uint32_t i = 0; i < f->npools; i++)
			free(f->pool[i].a);
	free(f->pool);
	if (f->fr)
		for (uint32_t i = 0; i < f->nfr; i++)
			free(f->fr[i].slot);
	free(f->fr);
	free(f->ehist);
	free(f->lun_busy);
	free(f->lun_from);
	free(f->lun_susp);
	free(f->lun_kind);
	free(f->pl_busy);
	free(f->pl_susp);
	free(f->rd_ch);
	free(f->rd_key);
	free(f->rd_cnt);
	free(f->gc_rd);
	free(f->ch_busy);
	free(f->wbuf);
	free(f->plane_lun);
	free(f->plane_ch);
	free(f);
}

const struct ftl_config *ftl_get_config(const struct ftl *f)
{
	return &f->cfg;
}

const struct ftl_geometry *ftl_get_geometry(const struct ftl *f)
{
	return &f->g;
}

int ftl_set_tag(struct ftl *f, const char *tag)
{
	size_t n = strlen(tag);
	if (n >= sizeof(f->tag))
		return FTL_E_INVAL;
	memset(f->tag, 0, sizeof(f->tag));
	memcpy(f->tag, tag, n);
	return FTL_OK;
}

const char *ftl_get_tag(const struct ftl *f)
{
	return f->tag;
}
