/*
 * ftl_int.h - internal state of hw/ftl, shared by its .c files only.
 *
 * Physical layout. A global block number is  gblk = blk_idx * planes + plane, where plane
 * runs channel-fastest: plane = (pl * luns_per_channel + lun) * channels + ch. So a superblock
 * (the same blk_idx on every plane) is the contiguous range of gblk [s*planes, (s+1)*planes),
 * and a physical unit number is  ppn = gblk * units_per_block + page * units_per_page + u.
 * In both GC modes the GC unit of ppn is  ppn / units_per_gc_unit.
 *
 * Tables store "+1" values so that 0 means empty: fresh pages from mmap are already zero,
 * and a 4 TiB device costs RSS only for the part that has been written.
 *   l2p[lpn]  = ppn + 1, or 0 when unmapped        (user_units x 4 bytes)
 *   p2l[ppn]  = lpn + 1 of the unit last written there (phys_units x 4 bytes); it is not
 *               cleared on invalidation: the valid bitmap says whether it is current. Read it
 *               through p2l_get(): a page a host write filled whole keeps its lpns in
 *               p2l_pg instead, and its units' p2l entries are not written.
 *   p2l_pg[pg] = lpn + 1 of unit 0 of page pg when a host write, or a GC or wear-leveling
 *               move, mapped the whole page (units lpn.., in order) since its block's erase,
 *               else 0 (upp > 1 only; 4 bytes a page).
 *               A KV replay whose objects are whole pages (qwen3-next-80b-a3b's 1.5 MiB
 *               chunks) never touches p2l, and the kernel never has to zero it (1 GB on
 *               ent-tlc-1t). Objects that end in a part of a page (paper-kimi-k3's chunks are
 *               31.5 pages) write p2l for that page, one page in 32, which is enough to have
 *               all of p2l resident (docs/performance.md). The erase clears the p2l_pg entries
 *               it finds set, and only those, so a drive written in single units never
 *               touches p2l_pg either.
 *   valid     = one bit per physical unit.
 */
#ifndef FTL_INT_H
#define FTL_INT_H

#include <string.h>

#include "ftl.h"

#define NONE UINT32_MAX

enum gu_state { GU_FREE, GU_OPEN, GU_CLOSED, GU_RETIRED };
enum prog_cause { PROG_HOST, PROG_GC, PROG_WL, PROG_PAD };
enum op_kind { OP_NONE, OP_READ, OP_PROG, OP_ERASE }; /* what a LUN's planes are doing */

struct gu {
	uint32_t valid;      /* valid units */
	uint32_t cap;        /* units in good blocks */
	uint32_t prev, next; /* greedy bucket list */
	uint32_t pos;        /* index in closed[] or in its free heap */
	uint32_t erase;      /* erase count (superblock: of its good members, which move together) */
	uint64_t close_seq;  /* when it was closed: age for FIFO and cost-benefit */
	uint32_t pool;       /* free pool (plane in block mode, 0 in superblock mode) */
	uint8_t state;
	uint16_t owner;      /* who opened it: host stream (FDP handle) h, or host_streams for
	                      * the shared GC frontier (fits the padding: sizeof unchanged) */
};

struct blk {
	uint32_t erase, endurance;
	uint32_t wp; /* pages programmed since the last erase */
	uint8_t bad;
};

struct slot {
	uint32_t gblk;  /* open block, NONE when it needs one */
	uint32_t page;  /* next page to program in the block */
	uint32_t unit;  /* units already placed in that page */
	uint64_t ready; /* latest buffer-slot wait of the units in the open page (host) */
};

struct frontier {
	uint32_t gu;      /* superblock mode: the open GC unit, NONE if none */
	uint32_t cur;     /* slot receiving the next unit */
	uint8_t cause;    /* PROG_HOST or PROG_GC */
	uint8_t used;     /* has ever been opened */
	uint16_t owner;   /* the owner of the GC units it opens (struct gu) */
	struct slot *slot;
};

struct fifo_ent {
	uint32_t gu;
	uint32_t pad;
	uint64_t seq; /* the gu's close_seq when queued: a mismatch marks a stale entry */
};

struct heap {
	uint32_t *a;
	uint32_t n;
};

struct ftl {
	struct ftl_config cfg;
	struct ftl_geometry g;
	uint32_t ch, lpc, ppl; /* channels, luns per channel, planes per lun */
	/* the hot path's short names for g's sizes: units (the mapping unit, unit_size bytes) per
	 * page, pages per block, units per block, units per GC unit, blocks per GC unit */
	uint32_t upp, ppb, upb, upg, bpg;
	uint64_t xfer_unit_ns, xfer_page_ns, t_read_ns, t_prog_ns, t_erase_ns, t_susp_ns, t_cmd_ns;
	uint64_t link_fp; /* host link: ns per byte, 32.32 fixed point; 0 = no link model */
	uint32_t wl_threshold;
	/* divisions on the hot path become shifts/masks when sizes are powers of two */
	int upg_shift, upb_shift, upp_shift, ppb_shift, us_shift; /* us: unit_size (bytes) */
	uint64_t upg_c, upb_c, upp_c, ppb_c; /* otherwise a multiply: udiv32() */
	bool planes_pow2;
	uint32_t *plane_lun, *plane_ch; /* global LUN and channel of each plane */

	uint32_t *l2p, *p2l, *p2l_pg;
	uint64_t *valid;
	size_t l2p_bytes, p2l_bytes, valid_bytes, p2l_pg_bytes;

	struct blk *blk;
	struct gu *gu;

	/* GC victim structures */
	uint32_t *bucket;       /* greedy: head of the list of closed GUs with v valid units */
	uint32_t min_bucket;    /* no closed GU has fewer valid units than this */
	uint32_t *closed;       /* dense array of closed GU ids (d-choice, cost-benefit, WL) */
	uint32_t nclosed;
	struct fifo_ent *fifo;  /* ring of closed GUs in close order (FIFO), lazily pruned */
	uint32_t fifo_head, fifo_n;
	uint64_t close_seq;

	/* free pools: least-worn first (dynamic wear leveling) */
	struct heap *pool;
	uint32_t npools, nfree, nopen, nretired_gu;

	struct frontier *fr;   /* host_streams host frontiers, then the GC frontier(s) */
	uint32_t nfr, gc_fr;
	uint32_t gc_dst;       /* where the victim in hand moves to (ftl_relocate) */
	bool in_gc;
	bool page_word;     /* a page's valid bits lie in one bitmap word (units_per_page 2^k <= 64) */
	bool stripe_writes; /* host writes of whole pages go a stripe at a time (map.c, write_stripe) */
	bool host_per_unit; /* tests: whole pages written and trimmed by the general path, GC's
	                     * valid count of a page by popcount (the reference) */
	uint64_t stripe_pages; /* pages write_stripe() wrote (tests) */
	uint32_t gc_futile; /* FIFO victims in a row with nothing to reclaim */
	uint32_t bg_min_reclaim; /* background GC skips victims reclaiming fewer units */

	/* wear */
	uint64_t *ehist;       /* live blocks per erase count */
	uint32_t ehist_len, emin, emax;
	uint64_t erase_sum, live_blocks;
	uint64_t initial_spare_units;
	uint64_t spare_units_floor; /* EOL when usable units fall to user + this */
	uint64_t usable_units;      /* units in good blocks */

	/* timing, virtual ns (timing.c) */
	uint64_t *lun_busy;  /* every plane of the LUN is done */
	uint64_t *lun_from;  /* the LUN switched to its current kind of operation */
	uint64_t *lun_susp;  /* the reads of the LUN's suspension in progress are done */
	uint8_t *lun_kind;   /* enum op_kind */
	uint64_t *pl_busy;   /* the plane's last operation is done */
	uint8_t *pl_susp;    /* suspensions of the plane's current operation */
	uint64_t *ch_busy;
	uint64_t host_busy;  /* the host link is free */
	uint64_t *gc_rd;     /* superblock GC: when each page of the victim is read (gc.c) */
	/* a striped read timed in closed form (map.c, read_stripe): per channel */
	struct rd_ch {
		int64_t best;    /* max over its planes of s1 - j w + max(0, o (tR - per w)) */
		uint32_t m, per; /* pages of the read on the channel; planes of it in the read */
		int64_t seen;    /* planes of it visited so far */
	} *rd_ch;
	int64_t *rd_key, *rd_cnt; /* read_every_lun(): per plane (NULL: channels not a power of 2) */
	bool read_per_page;  /* tests: time every read page by page (the reference) */
	uint64_t read_stripes; /* reads read_stripe() timed (tests) */
	/*
	 * Stripe certificates (map.c, read_stripe), when a GC unit is a superblock of one block
	 * per plane: one bit per page, in the superblock's write order
	 * spage = (gc unit * pages_per_block + row) * planes + member (spage_of()):
	 *   sp_whole: the page holds units_per_page consecutive lpns, every one still valid;
	 *   sp_cont:  its first lpn follows the last lpn of the page before it in that order.
	 * A set bit is a fact about the tables (ftl_check() verifies it); a clear one says nothing
	 * (a snapshot loads with none set). sp_whole is set by a host write of a whole page and
	 * cleared when a unit of the page is invalidated; both are cleared when the superblock is
	 * erased. So a read whose first page is whole and whose other pages are whole and
	 * continue is laid out as one stripe, known from two short bit ranges instead of the L2P
	 * entry of every unit.
	 */
	uint64_t *sp_whole, *sp_cont;
	size_t sp_bytes;
	uint64_t read_stripes_cert; /* reads of those read_stripe() certified by the bits (tests) */
	uint64_t *wbuf;        /* write buffer ring: time each slot frees */
	uint32_t nwbuf, wbuf_head;
	/* wear attribution (stats.c): per physical unit, UCLS_CLS = its data's class + 1 (0: no
	 * data since the erase, or padding), UCLS_MOVED / UCLS_TRIMMED: how it left (neither:
	 * overwritten, or still valid); wcls the class of host writes now */
	uint8_t *ucls;
	uint64_t ucls_bytes;
	uint8_t wcls;
	struct ftl_attribution attr;
	char tag[FTL_TAG_MAX]; /* the host's (ftl_set_tag), saved with the snapshot */
	uint64_t clock;

	/* stats */
	struct ftl_stats st;
	/* per owner (host stream / FDP handle h < host_streams, then the shared GC frontier):
	 * host bytes written, NAND bytes programmed (whole pages, padding included), bytes erased */
	uint64_t own_host[FTL_STREAMS_MAX + 1], own_media[FTL_STREAMS_MAX + 1],
	        own_erased[FTL_STREAMS_MAX + 1];
	struct ftl_fdp_event ev[FTL_FDP_EVENTS]; /* ring, oldest at ev_head */
	uint32_t ev_head, ev_n;
	uint64_t ev_total;
	uint64_t win_host[9], win_nand[9], win_erase[9];
	uint32_t win_n;
	uint64_t win_step, win_next;
	uint64_t rng[4];
};

/* config.c */
int ftl_geometry_derive(const struct ftl_config *c, struct ftl_geometry *g, char *err, size_t len);
uint32_t ftl_config_frontiers(const struct ftl_config *c);
/* FDP with persistently isolated handles: a GC frontier per handle (docs/fdp.md) */
static inline bool ftl_config_pi(const struct ftl_config *c)
{
	return c->fdp && c->fdp_ruh_type == FTL_RUHT_PERSISTENTLY;
}

/* map.c */
void ftl_invalidate(struct ftl *f, uint32_t ppn);
void ftl_p2l_forget(struct ftl *f, uint32_t gblk);
void ftl_p2l_materialize(const struct ftl *f);

/* alloc.c */
int ftl_alloc_init(struct ftl *f);
uint32_t ftl_frontier_take(struct ftl *f, uint32_t fid, uint64_t now, int *err, uint8_t cause,
			   uint64_t *ready);
uint32_t ftl_frontier_take_run(struct ftl *f, uint32_t fid, uint64_t now, uint32_t want,
			       uint32_t *n, int *err, uint8_t cause, uint64_t *ready);
uint32_t ftl_frontier_take_to_end(struct ftl *f, uint32_t fid, uint64_t now, uint32_t want,
				  uint32_t *n, int *err, uint8_t cause, uint64_t *ready, bool *full);
void ftl_frontier_fill(struct ftl *f, uint32_t fid, uint64_t now, uint8_t cause);
void ftl_frontier_pad(struct ftl *f, uint32_t fr, uint64_t now, uint64_t *done);
void ftl_pool_put(struct ftl *f, uint32_t gu);
void ftl_closed_add(struct ftl *f, uint32_t gu);
void ftl_closed_del(struct ftl *f, uint32_t gu);
void ftl_bucket_move(struct ftl *f, uint32_t gu, uint32_t from);
void ftl_bucket_drop(struct ftl *f, uint32_t gu, uint32_t from, uint32_t n);
void ftl_bucket_up(struct ftl *f, uint32_t gu, uint32_t from);
uint32_t heap_min_key(const struct ftl *f, const struct heap *h);

/* gc.c */
int ftl_gc_one(struct ftl *f, uint64_t now, bool foreground);
uint32_t ftl_gc_victim(struct ftl *f);
int ftl_relocate(struct ftl *f, uint32_t gu, uint8_t cause, uint64_t now);
int ftl_move_run(struct ftl *f, const uint32_t *ppn_old, uint32_t n, uint8_t cause, uint64_t now);

/* wear.c */
int ftl_wear_init(struct ftl *f);
void ftl_erase_gu(struct ftl *f, uint32_t gu, uint64_t now);
void ftl_wear_level(struct ftl *f, uint64_t now);
bool ftl_worn_out(const struct ftl *f);
uint64_t ftl_held_units(const struct ftl *f);

/* timing.c (ftl_time_read, ftl_time_program and the write buffer's are inline, below) */
uint64_t ftl_time_suspend(struct ftl *f, uint32_t l, uint64_t t);
uint64_t ftl_time_link(struct ftl *f, uint64_t bytes, uint64_t t);
uint64_t ftl_time_erase(struct ftl *f, uint32_t gblk, uint64_t now);

/* stats.c */
void ftl_stats_tick(struct ftl *f);
void ftl_fdp_event(struct ftl *f, uint8_t type, uint32_t ruh, uint32_t ru, uint64_t now,
                   uint64_t nlbam);
void ftl_count_prog(struct ftl *f, uint8_t cause, uint64_t units);

/* small helpers */
static inline uint64_t max64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}
/*
 * n / d for a divisor fixed at creation, without a divide instruction (20-40 cycles on the hot
 * paths otherwise: ent-tlc-1t's 4608-unit blocks and 294912-unit superblocks are not powers of
 * two). A power of two is a shift (shift >= 0); otherwise c = ceil(2^64 / d) and
 * n / d = (c * n) >> 64, exact for every 32-bit n and d (Lemire, Kaser & Kurz, "Faster
 * remainder by direct computation", 2019). udiv32_c(d) gives c for d >= 2.
 */
static inline uint64_t udiv32_c(uint32_t d)
{
	return UINT64_MAX / d + 1;
}
static inline int udiv32_shift(uint32_t d)
{
	return d && !(d & (d - 1)) ? __builtin_ctz(d) : -1;
}
static inline uint32_t udiv32(uint32_t n, int shift, uint64_t c)
{
	return shift >= 0 ? n >> shift : (uint32_t)(((unsigned __int128)c * n) >> 64);
}
/* byte offset -> mapping unit, and the offset within it (a shift and a mask for 4 KiB units) */
static inline uint64_t unit_of(const struct ftl *f, uint64_t off)
{
	return f->us_shift >= 0 ? off >> f->us_shift : off / f->cfg.unit_size;
}
static inline uint64_t unit_rem(const struct ftl *f, uint64_t off)
{
	return f->us_shift >= 0 ? off & (f->cfg.unit_size - 1) : off % f->cfg.unit_size;
}
static inline uint32_t gu_of(const struct ftl *f, uint32_t ppn)
{
	return udiv32(ppn, f->upg_shift, f->upg_c);
}
static inline uint32_t blk_of(const struct ftl *f, uint32_t ppn)
{
	return udiv32(ppn, f->upb_shift, f->upb_c);
}
/* global page number (gblk * pages_per_block + page) of ppn */
static inline uint32_t page_of(const struct ftl *f, uint32_t ppn)
{
	return udiv32(ppn, f->upp_shift, f->upp_c);
}
/* the block of a global page number */
static inline uint32_t page_blk(const struct ftl *f, uint32_t pg)
{
	return udiv32(pg, f->ppb_shift, f->ppb_c);
}
/* lpn + 1 of the data last written at ppn (0: none since the erase), from p2l_pg or p2l */
static inline uint32_t p2l_get(const struct ftl *f, uint32_t ppn)
{
	if (f->p2l_pg) {
		uint32_t pg = page_of(f, ppn), h = f->p2l_pg[pg];
		if (h)
			return h + (ppn - pg * f->upp);
	}
	return f->p2l[ppn];
}
/* the page of ppn in its superblock's write order (sp_whole, sp_cont); superblock mode */
static inline uint64_t spage_parts(const struct ftl *f, uint32_t ppn, uint32_t *b, uint32_t *row,
                                   uint32_t *m)
{
	uint32_t g = gu_of(f, ppn);
	*b = blk_of(f, ppn);
	*row = page_of(f, ppn) - *b * f->ppb;
	*m = *b - g * f->bpg; /* its member (plane) in the superblock */
	return ((uint64_t)g * f->ppb + *row) * f->bpg + *m;
}
static inline uint64_t spage_of(const struct ftl *f, uint32_t ppn)
{
	uint32_t b, row, m;
	return spage_parts(f, ppn, &b, &row, &m);
}
static inline uint32_t plane_of(const struct ftl *f, uint32_t gblk)
{
	return f->planes_pow2 ? gblk & (f->g.planes - 1) : gblk % f->g.planes;
}

/* Time for bytes to cross the host link (host_mbps): bytes x ns per byte in 32.32 fixed point. */
static inline uint64_t link_ns(const struct ftl *f, uint64_t bytes)
{
	return (uint64_t)(((unsigned __int128)bytes * f->link_fp) >> 32);
}

/*
 * When an operation of kind k on plane p of LUN l, ready at t, may start on the array
 * (timing.c): with multiplane, at once beside operations of the same kind on other planes;
 * otherwise when every plane of the LUN is done. array_end() records its end.
 */
static inline uint64_t array_start(struct ftl *f, uint32_t p, uint32_t l, uint8_t k, uint64_t t)
{
	if (f->cfg.multiplane && f->lun_kind[l] == k)
		return max64(t, max64(f->pl_busy[p], f->lun_from[l]));
	uint64_t s = max64(t, f->lun_busy[l]);
	if (f->lun_kind[l] != k) {
		f->lun_kind[l] = k;
		f->lun_from[l] = s;
	}
	return s;
}
static inline void array_end(struct ftl *f, uint32_t p, uint32_t l, uint64_t end)
{
	f->pl_busy[p] = end;
	f->pl_susp[p] = 0;
	if (end > f->lun_busy[l])
		f->lun_busy[l] = end;
}

/*
 * Read units units of one page of gblk (timing.c's model): the plane senses the page (tR), a
 * host read suspending a program or erase when it may, then its channel moves the units.
 * Returns when they are in the controller. The caller moves f->clock. Inline: kv replays read
 * terabytes, a call per page.
 */
static inline __attribute__((always_inline)) uint64_t ftl_time_read(struct ftl *f, uint32_t gblk,
                                                                    uint32_t units, uint64_t now,
                                                                    bool host)
{
	uint32_t p = plane_of(f, gblk), l = f->plane_lun[p], c = f->plane_ch[p];
	uint64_t s;
	if (host && f->t_susp_ns && f->lun_kind[l] != OP_READ && f->lun_busy[l] > now &&
	    (s = ftl_time_suspend(f, l, now)) != UINT64_MAX) {
		s += f->t_read_ns;
	} else {
		s = array_start(f, p, l, OP_READ, now) + f->t_read_ns;
		array_end(f, p, l, s);
	}
	uint64_t x = max64(s, f->ch_busy[c]) + units * f->xfer_unit_ns;
	f->ch_busy[c] = x;
	return x;
}
/* Program a page of gblk (timing.c's model); returns when it is done. Inline: a kv replay
 * programs a page per 16 KiB written. */
static inline __attribute__((always_inline)) uint64_t ftl_time_program(struct ftl *f, uint32_t gblk,
                                                                       uint64_t now)
{
	uint32_t p = plane_of(f, gblk), l = f->plane_lun[p], c = f->plane_ch[p];
	uint64_t d;
	/*
	 * multiplane: the page moves into the plane's cache register as soon as the plane's current
	 * program has started (cache program), so the transfer overlaps that program and does not
	 * hold the channel until the plane frees. multiplane=off (FEMU-like): once the LUN is done.
	 */
	uint64_t reg = f->cfg.multiplane ? (f->pl_busy[p] > f->t_prog_ns ? f->pl_busy[p] - f->t_prog_ns : 0)
	                                 : f->lun_busy[l];
	uint64_t x = max64(now, max64(reg, f->ch_busy[c])) + f->xfer_page_ns;
	f->ch_busy[c] = x;
	d = array_start(f, p, l, OP_PROG, x) + f->t_prog_ns;
	array_end(f, p, l, d);
	f->clock = max64(f->clock, d);
	return d;
}

/* A host page needs a buffer slot: it gets the oldest one once that slot's program is done. */
static inline uint64_t ftl_wbuf_wait(struct ftl *f, uint64_t now)
{
	return max64(now, f->wbuf[f->wbuf_head]);
}

static inline void ftl_wbuf_done(struct ftl *f, uint64_t done)
{
	f->wbuf[f->wbuf_head] = done;
	f->wbuf_head = f->wbuf_head + 1 == f->nwbuf ? 0 : f->wbuf_head + 1;
}

#define UCLS_CLS 0x0f
#define UCLS_MOVED 0x40
#define UCLS_TRIMMED 0x80
/* n attribution bytes at p, each v (a class + 1) */
static inline void ucls_fill(uint8_t *p, uint8_t v, uint32_t n)
{
	if (n == 4) { /* a 16 KiB page of 4 KiB units: one store, not a call */
		uint32_t w = 0x01010101u * v;
		memcpy(p, &w, 4);
	} else {
		memset(p, v, n);
	}
}
/* bits (UCLS_TRIMMED, UCLS_MOVED) into n attribution bytes at p */
static inline void ucls_or(uint8_t *p, uint8_t bits, uint32_t n)
{
	if (n == 4) { /* a 16 KiB page of 4 KiB units: one load and store */
		uint32_t w;
		memcpy(&w, p, 4);
		w |= 0x01010101u * bits;
		memcpy(p, &w, 4);
	} else {
		for (uint32_t j = 0; j < n; j++)
			p[j] |= bits;
	}
}
/* host data of class f->wcls now at ppn .. ppn+n-1: its bytes, and their count */
static inline void ucls_host(struct ftl *f, uint32_t ppn, uint32_t n)
{
	ucls_fill(f->ucls + ppn, (uint8_t)(f->wcls + 1), n);
	f->attr.prog[f->wcls][FTL_ATTR_HOST] += (uint64_t)n * f->cfg.unit_size;
}
/*
 * GC or WL copies (why FTL_ATTR_GC or FTL_ATTR_WL) of the k units at old[0..k) to ppn..ppn+k-1:
 * each copy keeps its class and the old unit is marked moved. The units before the first of
 * another class (all of them, usually: a page is written by one kind of object) are charged in
 * one addition.
 */
static inline void ucls_move(struct ftl *f, const uint32_t *old, uint32_t ppn, uint32_t k, int why)
{
	const uint8_t c0 = f->ucls[old[0]] & UCLS_CLS;
	f->ucls[old[0]] |= UCLS_MOVED;
	f->ucls[ppn] = c0;
	uint32_t run0 = 1;
	bool same = true;
	for (uint32_t j = 1; j < k; j++) {
		uint8_t c = f->ucls[old[j]] & UCLS_CLS;
		f->ucls[old[j]] |= UCLS_MOVED;
		f->ucls[ppn + j] = c;
		same = same && c == c0;
		if (same)
			run0++;
		else
			f->attr.prog[c ? c - 1 : 0][why] += f->cfg.unit_size;
	}
	f->attr.prog[c0 ? c0 - 1 : 0][why] += (uint64_t)run0 * f->cfg.unit_size;
}
void ftl_attr_erase(struct ftl *f, uint32_t g, uint8_t cause);

static inline bool bit_get(const uint64_t *bm, uint64_t i)
{
	return bm[i >> 6] >> (i & 63) & 1;
}
static inline void bit_set(uint64_t *bm, uint64_t i)
{
	bm[i >> 6] |= 1ull << (i & 63);
}
static inline void bit_clr(uint64_t *bm, uint64_t i)
{
	bm[i >> 6] &= ~(1ull << (i & 63));
}
/*
 * Bit ranges [from, from + n), a word at a time: each step's word index and mask go to
 * *w and *m, and the range moves on; false when it is empty.
 */
static inline bool bits_step(uint64_t *from, uint64_t *n, uint64_t *w, uint64_t *m)
{
	if (!*n)
		return false;
	uint64_t sh = *from & 63, k = 64 - sh < *n ? 64 - sh : *n;
	*w = *from >> 6;
	*m = k == 64 ? UINT64_MAX : ((1ull << k) - 1) << sh;
	*from += k;
	*n -= k;
	return true;
}
/* every bit of [from, from + n) set */
static inline bool bits_all(const uint64_t *bm, uint64_t from, uint64_t n)
{
	for (uint64_t w, m; bits_step(&from, &n, &w, &m);)
		if ((bm[w] & m) != m)
			return false;
	return true;
}
static inline void bits_set(uint64_t *bm, uint64_t from, uint64_t n)
{
	for (uint64_t w, m; bits_step(&from, &n, &w, &m);)
		bm[w] |= m;
}
static inline void bits_clear(uint64_t *bm, uint64_t from, uint64_t n)
{
	for (uint64_t w, m; bits_step(&from, &n, &w, &m);)
		bm[w] &= ~m;
}
/*
 * Prefetch hints that survive the optimizer. GCC sees __builtin_prefetch as free of side
 * effects, so a function made only of prefetches is "pure" and a call to it whose result is
 * unused is deleted (LTO did that to ftl_prefetch() and to the batch's look-ahead). The empty
 * volatile asm naming the address keeps the hint.
 */
static inline void prefetch_r(const void *p)
{
	__builtin_prefetch(p, 0);
	__asm__ volatile("" : : "r"(p));
}
static inline void prefetch_w(const void *p)
{
	__builtin_prefetch(p, 1);
	__asm__ volatile("" : : "r"(p));
}
void *ftl_big_alloc(size_t bytes);
uint32_t ftl_crc32c(uint32_t crc, const void *buf, size_t n);
void ftl_big_free(void *p, size_t bytes);

#endif
