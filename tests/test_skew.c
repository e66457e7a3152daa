/*
 * test_skew.c - WAF under skewed (hot/cold and zoned) random writes, held to an independent
 * reference simulator and to the analytic models (docs/ftl.md "GC streams").
 *
 * Device: 1 channel x 1 LUN x 1 plane (a GC unit is one block), REF_BLOCKS blocks of Np = 64
 * 4 KiB pages, gc_reserve 1 (one free block held back), GC thresholds 0, static WL off. Each run
 * is a sequential fill, WARM x user capacity of random 4 KiB overwrites, then MEAS x user
 * capacity measured. The FTL and the reference see the same sequence of logical pages.
 *
 * The reference simulator (struct ref below) shares no code with hw/ftl: a page-mapped log with
 * exact greedy (scan of every closed block for the fewest valid pages) or FIFO (oldest closed
 * block) cleaning and
 *   one write point (mixed pool): when the write block is full and the pool is at its reserve,
 *     one victim is cleaned, its valid pages copied to a fresh block, and host writes continue
 *     in that block behind them: every block is one victim's survivors followed by host data;
 *   two write points (separate): host and GC each have their own open block; when the host
 *     block is full, victims are cleaned until the pool is above its reserve.
 * The FTL modes held to it: gc_stream=shared against one write point, gc_stream=separate
 * against two. gc_stream=shared-burst (FEMU's burst GC) is printed beside them.
 *
 * Models (alpha = T/U at the effective spare factor, class i: share f_i of the writes over
 * share r_i of the space):
 *   FIFO (LRW), Desnoyers TOS'14 Eq. 14 (its hot/cold LRW model, which the paper reports to be
 *   exact): a page survives T writes between being written and its block being cleaned, i.e.
 *   T/A host writes, so it is still valid w.p. p_i = exp(-f_i alpha / (r_i A)); each host write
 *   of class i costs 1/(1-p_i) programs in all, hence  A = sum_i f_i / (1 - p_i(A)), solved for
 *   A by bisection. One class gives the uniform A = a / (a + W0(-a e^-a)).
 *   Greedy, mixed pool: the same with alpha replaced by k alpha and divided by k,
 *   k = 1 + 1/(2 Np): the scaling that turns the uniform LRW formula into Desnoyers' uniform
 *   greedy one (Eq. 10 / test_theory.c). It is our approximation in the spirit of his
 *   mixed-pool greedy model (Eq. 16), printed for reference only: no assertion uses it.
 *
 * Asserted (exact tolerances):
 *   FIFO, both streams:           |FTL - Eq. 14| / Eq. 14 <= 1%   (and <= 1% of the reference)
 *   greedy shared vs 1 write pt:  |FTL - ref| / ref <= 2%
 *   greedy separate vs 2 write pt:|FTL - ref| / ref <= 2%
 *   separate beats shared on skew: FTL shared/separate - 1 within 1.5 points of the reference's
 *                                  ratio, and > 0.5% (the reference's gain is 0.6-24% here)
 *   shared-burst lands nearer separate than shared (the segregation it causes)
 * Greedy ties follow the FTL's rule, which the reference states on its own (test_greedy_ties).
 * on 80/20, 90/10, 90/5 and JESD219's zones (50/5:30/15:20/80) at Sf 0.07, 0.10 and 0.20.
 * Under AddressSanitizer (CI's build-asan, unoptimized) only 90/10 at Sf 0.10 runs and the tie
 * test is skipped; every comparison runs in the normal build of `make check` (~20 s of CPU).
 * FG_SKEW_ALL=1 forces every point.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"

#include "ftl.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define REF_BLOCKS 2048u
#define NP 64u
#define WARM 8
#define MEAS 8
#define NIL UINT32_MAX
#define REF_MAXH 4 /* host write points (FDP handles) at most */

/* ---- workloads: zones of (share of writes, share of space) ---- */

struct skew {
	const char *name;
	int nz;
	double f[3], r[3]; /* percent */
};

static const struct skew skews[] = {
        {"80/20", 2, {80, 20}, {20, 80}},
        {"90/10", 2, {90, 10}, {10, 90}},
        {"90/5", 2, {90, 10}, {5, 95}},
        {"jesd219", 3, {50, 30, 20}, {5, 15, 80}},
};
static const double sfs[] = {0.07, 0.10, 0.20};

/* The logical page sequence: xorshift64 from a fixed seed, zone by write share, uniform inside. */
struct gen {
	uint64_t s;
	int nz;
	double cf[3];      /* cumulative write share, 0..1 */
	uint64_t start[4]; /* first page of each zone */
};

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void gen_init(struct gen *g, const struct skew *k, uint64_t user)
{
	double cf = 0, cr = 0;
	g->s = 0x2545f4914f6cdd1dull;
	g->nz = k->nz;
	g->start[0] = 0;
	for (int i = 0; i < k->nz; i++) {
		cf += k->f[i] / 100;
		cr += k->r[i] / 100;
		g->cf[i] = cf;
		g->start[i + 1] = i + 1 == k->nz ? user : (uint64_t)(cr * (double)user + 0.5);
	}
}

/* The zone of page p: its FDP handle when each zone is written through a handle of its own. */
static unsigned zone_of(const struct gen *g, uint64_t p)
{
	unsigned z = 0;
	while ((int)z + 1 < g->nz && p >= g->start[z + 1])
		z++;
	return z;
}

static uint64_t gen_next(struct gen *g)
{
	double u = (double)(xs(&g->s) >> 11) * 0x1.0p-53;
	int z = 0;
	while (z + 1 < g->nz && u >= g->cf[z])
		z++;
	return g->start[z] + xs(&g->s) % (g->start[z + 1] - g->start[z]);
}

/* ---- the reference simulator ---- */

enum { REF_GREEDY, REF_FIFO };

struct ref {
	uint32_t nb, np, user, reserve;
	int policy;
	bool two_wp;
	uint32_t *l2p;   /* page -> physical page, NIL unmapped */
	uint32_t *p2l;   /* physical page -> page, NIL when not valid */
	uint32_t *valid; /* valid pages per block */
	uint8_t *closed; /* block holds data and is not being written */
	uint32_t *freel, nfree;
	uint32_t *ring, rhead, rn; /* closed blocks in close order (FIFO) */
	/* write points: host 0..nh-1 (and GC's with one write point), then GC's: one, or with
	 * persistently isolated handles (pi) one per handle (nh + the victim's owner) */
	uint32_t nh;
	bool pi;
	uint32_t wblk[2 * REF_MAXH], wpg[2 * REF_MAXH];
	uint8_t *owner; /* who filled the block: host write point h, or nh for the shared GC one */
	uint64_t *chg, clock; /* when a closed block's valid count last changed (greedy ties) */
	bool oldest_ties;     /* ties to the block closed first instead */
	uint64_t host, prog;
};

static void ref_init(struct ref *r, uint32_t nb, uint32_t np, uint32_t user, int policy,
                     bool two_wp)
{
	memset(r, 0, sizeof(*r));
	r->nb = nb;
	r->np = np;
	r->user = user;
	r->reserve = 1;
	r->policy = policy;
	r->two_wp = two_wp;
	r->l2p = malloc(sizeof(uint32_t) * user);
	r->p2l = malloc(sizeof(uint32_t) * nb * np);
	r->valid = calloc(nb, sizeof(uint32_t));
	r->closed = calloc(nb, 1);
	r->freel = malloc(sizeof(uint32_t) * nb);
	r->ring = malloc(sizeof(uint32_t) * nb);
	r->chg = calloc(nb, sizeof(uint64_t));
	r->owner = calloc(nb, 1);
	r->nh = 1;
	assert_true(r->l2p && r->p2l && r->valid && r->closed && r->freel && r->ring && r->chg &&
	            r->owner);
	memset(r->l2p, 0xff, sizeof(uint32_t) * user);
	memset(r->p2l, 0xff, sizeof(uint32_t) * nb * np);
	for (uint32_t b = 0; b < nb; b++)
		r->freel[r->nfree++] = nb - 1 - b;
	for (uint32_t w = 0; w < 2 * REF_MAXH; w++)
		r->wblk[w] = NIL;
}

static void ref_free(struct ref *r)
{
	free(r->l2p);
	free(r->p2l);
	free(r->valid);
	free(r->closed);
	free(r->freel);
	free(r->ring);
	free(r->chg);
	free(r->owner);
}

static uint32_t ref_victim(struct ref *r)
{
	if (r->policy == REF_FIFO) {
		assert_true(r->rn > 0);
		uint32_t b = r->ring[r->rhead];
		r->rhead = (r->rhead + 1) % r->nb;
		r->rn--;
		return b;
	}
	uint32_t best = NIL;
	for (uint32_t b = 0; b < r->nb; b++) {
		if (!r->closed[b])
			continue;
		if (best == NIL || r->valid[b] < r->valid[best] ||
		    (r->valid[b] == r->valid[best] &&
		     (r->oldest_ties ? r->chg[b] < r->chg[best] : r->chg[b] > r->chg[best])))
			best = b;
	}
	assert_true(best != NIL);
	return best;
}

static void ref_place(struct ref *r, int w, uint32_t lpn);

/* Clean one victim: copy its valid pages to the GC write point, erase it. */
static void ref_clean(struct ref *r)
{
	uint32_t v = ref_victim(r);
	int w = !r->two_wp ? 0 : r->pi ? (int)(r->nh + r->owner[v]) : (int)r->nh;
	r->closed[v] = 0;
	for (uint32_t p = v * r->np; p < (v + 1) * r->np; p++)
		if (r->p2l[p] != NIL) {
			ref_place(r, w, r->p2l[p]); /* invalidates p */
			r->prog++;
		}
	assert_int_equal(r->valid[v], 0);
	r->freel[r->nfree++] = v;
}

/* Write page lpn at write point w (the caller made sure it has a block, or w is GC's). */
static void ref_place(struct ref *r, int w, uint32_t lpn)
{
	if (r->wblk[w] == NIL) {
		/* only GC gets here without the host's check: it may use the reserve */
		assert_true(r->nfree > 0);
		r->wblk[w] = r->freel[--r->nfree];
		r->wpg[w] = 0;
		r->owner[r->wblk[w]] = (uint8_t)((uint32_t)w < r->nh ? (uint32_t)w
		                                 : r->pi             ? w - r->nh
		                                                     : r->nh);
	}
	uint32_t b = r->wblk[w], p = b * r->np + r->wpg[w];
	uint32_t old = r->l2p[lpn];
	if (old != NIL) {
		r->p2l[old] = NIL;
		r->valid[old / r->np]--;
		if (r->closed[old / r->np] && !r->oldest_ties)
			r->chg[old / r->np] = ++r->clock;
	}
	r->l2p[lpn] = p;
	r->p2l[p] = lpn;
	r->valid[b]++;
	if (++r->wpg[w] == r->np) {
		r->closed[b] = 1;
		r->chg[b] = ++r->clock;
		r->ring[(r->rhead + r->rn++) % r->nb] = b;
		r->wblk[w] = NIL;
	}
}

/* A host write of page lpn at host write point h. */
static void ref_write_h(struct ref *r, uint32_t lpn, uint32_t h)
{
	/* the host's write block is full: take a free block, cleaning first at the reserve */
	while (r->wblk[h] == NIL) {
		if (r->nfree > r->reserve) {
			r->wblk[h] = r->freel[--r->nfree];
			r->wpg[h] = 0;
			r->owner[r->wblk[h]] = (uint8_t)h;
		} else {
			/* one write point: its copies open the block the host continues */
			ref_clean(r);
		}
	}
	ref_place(r, (int)h, lpn);
	r->host++;
	r->prog++;
}

static void ref_write(struct ref *r, uint32_t lpn)
{
	ref_write_h(r, lpn, 0);
}

/* ---- models ---- */

/* A = sum f_i / (1 - exp(-f_i a / (r_i A))), the root in (1, inf), by bisection. */
static double model_lrw(const struct skew *k, double a)
{
	double lo = 1, hi = 1e4;
	for (int it = 0; it < 200; it++) {
		double A = (lo + hi) / 2, s = 0;
		for (int i = 0; i < k->nz; i++) {
			double f = k->f[i] / 100, r = k->r[i] / 100;
			s += f / (1 - exp(-f * a / (r * A)));
		}
		if (s > A)
			lo = A;
		else
			hi = A;
	}
	return (lo + hi) / 2;
}

static double model_greedy_mixed(const struct skew *k, double a, double np)
{
	double kk = 1 + 1 / (2 * np);
	return model_lrw(k, kk * a) / kk;
}

static void test_models(void **state)
{
	(void)state;
	/* one class: the uniform closed forms (test_theory.c's reference values) */
	struct skew u = {"uniform", 1, {100}, {100}};
	assert_near(model_lrw(&u, 1 / 0.9), 5.179, 0.001);
	assert_near(model_lrw(&u, 1 / 0.8), 2.693, 0.001);
	assert_near(model_greedy_mixed(&u, 1 / 0.9, 64), 4.82, 0.01);
	/* a "skew" whose classes all have f_i = r_i is uniform */
	struct skew flat = {"flat", 2, {30, 70}, {30, 70}};
	assert_near(model_lrw(&flat, 1 / 0.9), model_lrw(&u, 1 / 0.9), 1e-9);
	/* skew costs LRW: 90/10 well above uniform */
	printf("LRW model Sf 0.10: uniform %.4f, 90/10 %.4f\n", model_lrw(&u, 1 / 0.9),
	       model_lrw(&skews[1], 1 / 0.9));
	assert_true(model_lrw(&skews[1], 1 / 0.9) > 1.15 * model_lrw(&u, 1 / 0.9));
}

/* The reference on its own: invariants, and what it must show by construction. */
static void test_reference_sanity(void **state)
{
	(void)state;
	struct ref r;
	uint32_t nb = 256, user = (uint32_t)floor(nb * NP * 0.9);
	struct gen g;
	ref_init(&r, nb, NP, user, REF_GREEDY, false);
	gen_init(&g, &skews[1], user);
	for (uint32_t i = 0; i < user; i++)
		ref_write(&r, i);
	for (uint32_t i = 0; i < 8 * user; i++)
		ref_write(&r, (uint32_t)gen_next(&g));
	uint64_t nvalid = 0;
	for (uint32_t b = 0; b < nb; b++) {
		uint32_t n = 0;
		for (uint32_t p = b * NP; p < (b + 1) * NP; p++)
			n += r.p2l[p] != NIL && r.l2p[r.p2l[p]] == p;
		assert_int_equal(n, r.valid[b]);
		nvalid += n;
	}
	assert_int_equal(nvalid, user);
	assert_true(r.prog > r.host);
	ref_free(&r);
}

/* ---- one point: the FTL and the reference on the same sequence ---- */

enum mode { M_SHARED, M_SEPARATE, M_BURST };
static const char *const mode_name[] = {"shared", "separate", "shared-burst"};

struct point {
	double eff_sf, waf;
};

/* fdp: 0 = off (every write on stream 0), else each zone written through FDP handle = its zone,
 * handles of type ruht */
static struct point run_ftl(const struct skew *k, double sf, int policy, enum mode m, bool fdp,
                            enum ftl_fdp_ruh_type ruht)
{
	struct ftl_config c;
	char err[256];
	ftl_config_default(&c);
	c.channels = c.luns_per_channel = c.planes_per_lun = 1;
	c.blocks_per_plane = REF_BLOCKS;
	c.pages_per_block = NP;
	c.page_size = c.unit_size = 4096;
	c.spare_factor = sf;
	c.op_percent = -1;
	c.gc_unit = FTL_GC_BLOCK;
	c.gc_policy = policy == REF_FIFO ? FTL_GC_FIFO : FTL_GC_GREEDY;
	c.gc_stream = m == M_SHARED     ? FTL_GC_SHARED
	              : m == M_SEPARATE ? FTL_GC_SEPARATE
	                                : FTL_GC_SHARED_BURST;
	c.gc_fg_free_pct = c.gc_bg_free_pct = 0;
	c.host_streams = fdp ? (uint32_t)k->nz : 1;
	c.fdp = fdp;
	c.fdp_ruh_type = ruht;
	c.wl_static = false;
	c.gc_reserve = 1;
	c.pe_cycles = 1000000;
	struct ftl *f = ftl_create(&c, err, sizeof(err));
	if (!f)
		fail_msg("ftl_create: %s", err);
	uint64_t user = ftl_get_geometry(f)->user_units;
	assert_int_equal(user, (uint64_t)floor((double)REF_BLOCKS * NP * (1 - sf)));
	struct gen g;
	gen_init(&g, k, user);
#define W(p) assert_int_equal(ftl_write(f, (p) * 4096, 4096, fdp ? zone_of(&g, (p)) : 0, 0, NULL), FTL_OK)
	for (uint64_t i = 0; i < user; i++)
		W(i);
	for (uint64_t i = 0; i < WARM * user; i++) {
		uint64_t p = gen_next(&g);
		W(p);
	}
	struct ftl_stats a, b;
	ftl_get_stats(f, &a);
	for (uint64_t i = 0; i < MEAS * user; i++) {
		uint64_t p = gen_next(&g);
		W(p);
	}
#undef W
	ftl_get_stats(f, &b);
	if (ftl_check(f, err, sizeof(err)))
		fail_msg("ftl_check: %s", err);
	ftl_destroy(f);
	return (struct point){.eff_sf = b.effective_spare_factor,
	                      .waf = (double)(b.nand_write_bytes - a.nand_write_bytes) /
	                             (double)(b.host_write_bytes - a.host_write_bytes)};
}

/* handles: 0 = one host write point, else one per zone (the FDP handles of run_ftl), with GC
 * write points per handle when pi */
static struct point run_ref(const struct skew *k, double sf, int policy, bool two_wp,
                            bool oldest_ties, int handles, bool pi)
{
	struct ref r;
	uint32_t user = (uint32_t)floor((double)REF_BLOCKS * NP * (1 - sf));
	struct gen g;
	ref_init(&r, REF_BLOCKS, NP, user, policy, two_wp);
	r.oldest_ties = oldest_ties;
	if (handles) {
		assert_true(handles <= REF_MAXH && two_wp);
		r.nh = (uint32_t)handles;
		r.pi = pi;
		r.reserve = pi ? r.nh : 1; /* the FTL's: gc_reserve 1, plus 1 per other GC frontier */
	}
	gen_init(&g, k, user);
#define W(p) ref_write_h(&r, (uint32_t)(p), handles ? zone_of(&g, (p)) : 0)
	for (uint32_t i = 0; i < user; i++)
		W(i);
	for (uint64_t i = 0; i < (uint64_t)WARM * user; i++) {
		uint64_t p = gen_next(&g);
		W(p);
	}
	uint64_t h0 = r.host, p0 = r.prog;
	for (uint64_t i = 0; i < (uint64_t)MEAS * user; i++) {
		uint64_t p = gen_next(&g);
		W(p);
	}
#undef W
	/* blocks that never hold reclaimable data: the reserve and the open write points */
	double t = (double)(REF_BLOCKS - r.reserve - (two_wp ? r.nh + (r.pi ? r.nh : 1) : 1)) * NP;
	struct point pt = {.eff_sf = (t - user) / t,
	                   .waf = (double)(r.prog - p0) / (double)(r.host - h0)};
	ref_free(&r);
	return pt;
}

static double err_pct(double x, double ref)
{
	return 100 * (x / ref - 1);
}

static void row(const char *pol, const char *mode, const char *wl, double sf, double ftl,
                double ref, double model)
{
	char m[32] = "      -", e[32] = "       -";
	if (!isnan(model)) {
		snprintf(m, sizeof(m), "%7.4f", model);
		snprintf(e, sizeof(e), "%+7.2f%%", err_pct(ftl, model));
	}
	printf("| %-6s | %-12s | %-7s | %.2f | %7.4f | %7.4f | %s | %+6.2f%% | %s |\n", pol, mode,
	       wl, sf, ftl, ref, m, err_pct(ftl, ref), e);
}

/* Under ASan (an unoptimized build, ~10x slower) only 90/10 at Sf 0.10 runs, unless FG_SKEW_ALL=1.
 */
static bool all_points(void)
{
	const char *all = getenv("FG_SKEW_ALL");
	return !UNDER_ASAN || (all && *all == '1');
}

static bool point_runs(double sf, size_t w)
{
	return all_points() || (sf == 0.10 && w == 1);
}

static void header(void)
{
	printf("| policy | mode         | skew    | Sf   | FTL WAF | ref WAF | model   | vs ref  | "
	       "vs model |\n"
	       "|--------|--------------|---------|------|---------|---------|---------|---------|-"
	       "---------|\n");
}

/* Run fn on every (skew, Sf) point this build runs, after the table's header. */
static void each_point(void (*fn)(const struct skew *k, double sf))
{
	header();
	for (size_t s = 0; s < sizeof(sfs) / sizeof(sfs[0]); s++)
		for (size_t w = 0; w < sizeof(skews) / sizeof(skews[0]); w++)
			if (point_runs(sfs[s], w))
				fn(&skews[w], sfs[s]);
}

/* FIFO: Eq. 14 within 1% in both stream modes (FIFO's victim order ignores the segregation). */
static void fifo_point(const struct skew *k, double sf)
{
	for (int m = M_SHARED; m <= M_SEPARATE; m++) {
		struct point f = run_ftl(k, sf, REF_FIFO, (enum mode)m, false, FTL_RUHT_INITIALLY);
		struct point r = run_ref(k, sf, REF_FIFO, m == M_SEPARATE, false, 0, false);
		double model = model_lrw(k, 1 / (1 - f.eff_sf));
		row("fifo", mode_name[m], k->name, sf, f.waf, r.waf, model);
		assert_near(f.eff_sf, r.eff_sf, 1e-9);
		assert_true(fabs(f.waf - model) / model <= 0.01);
		assert_true(fabs(f.waf - r.waf) / r.waf <= 0.01);
	}
}

static void test_fifo_skew(void **state)
{
	(void)state;
	each_point(fifo_point);
}

/* One gain line: how much higher the first configuration's WAF is than the second's. */
static void gain_row(const char *what, const char *wl, double sf, double gain_ftl, double gain_ref)
{
	printf("| greedy | %-12s | %-7s | %.2f | %+6.2f%% | %+6.2f%% |       - |         |          |\n",
	       what, wl, sf, 100 * gain_ftl, 100 * gain_ref);
}

/* Greedy: each mode against its reference, and separate's gain as the reference shows it. */
static void greedy_point(const struct skew *k, double sf)
{
	struct point fs = run_ftl(k, sf, REF_GREEDY, M_SHARED, false, FTL_RUHT_INITIALLY);
	struct point fp = run_ftl(k, sf, REF_GREEDY, M_SEPARATE, false, FTL_RUHT_INITIALLY);
	struct point fb = run_ftl(k, sf, REF_GREEDY, M_BURST, false, FTL_RUHT_INITIALLY);
	struct point rs = run_ref(k, sf, REF_GREEDY, false, false, 0, false);
	struct point rp = run_ref(k, sf, REF_GREEDY, true, false, 0, false);
	row("greedy", "shared", k->name, sf, fs.waf, rs.waf,
	    model_greedy_mixed(k, 1 / (1 - fs.eff_sf), NP));
	row("greedy", "separate", k->name, sf, fp.waf, rp.waf, NAN);
	row("greedy", "shared-burst", k->name, sf, fb.waf, rs.waf, NAN);
	double gain_ftl = fs.waf / fp.waf - 1, gain_ref = rs.waf / rp.waf - 1;
	gain_row("sep. gain", k->name, sf, gain_ftl, gain_ref);
	assert_true(fabs(fs.waf - rs.waf) / rs.waf <= 0.02);
	assert_true(fabs(fp.waf - rp.waf) / rp.waf <= 0.02);
	assert_true(fabs(gain_ftl - gain_ref) <= 0.015);
	assert_true(gain_ftl > 0.005);
	assert_near(fb.waf, fp.waf, fabs(fb.waf - fs.waf));
}

static void test_greedy_skew(void **state)
{
	(void)state;
	each_point(greedy_point);
}

/*
 * FDP: each zone (a lifetime class) written through a reclaim unit handle of its own, greedy GC
 * on a separate GC frontier. Initially isolated handles: the reference with a host write point
 * per handle and one GC write point; persistently isolated: a GC write point per handle, the
 * victim's copies on its owner's. Both within 2% of their reference (the greedy tolerance above),
 * and the gain over one handle (the separate case above) within 1.5 points of the reference's.
 */
static void fdp_point(const struct skew *k, double sf)
{
	struct point one = run_ref(k, sf, REF_GREEDY, true, false, 0, false);
	struct point fone = run_ftl(k, sf, REF_GREEDY, M_SEPARATE, false, FTL_RUHT_INITIALLY);
	for (int pi = 0; pi <= 1; pi++) {
		struct point f = run_ftl(k, sf, REF_GREEDY, M_SEPARATE, true,
		                         pi ? FTL_RUHT_PERSISTENTLY : FTL_RUHT_INITIALLY);
		struct point r = run_ref(k, sf, REF_GREEDY, true, false, k->nz, pi);
		row("greedy", pi ? "fdp persist." : "fdp initial.", k->name, sf, f.waf, r.waf, NAN);
		double gain_ftl = fone.waf / f.waf - 1, gain_ref = one.waf / r.waf - 1;
		gain_row("fdp gain", k->name, sf, gain_ftl, gain_ref);
		assert_true(fabs(f.waf - r.waf) / r.waf <= 0.02);
		assert_true(fabs(gain_ftl - gain_ref) <= 0.015);
	}
}

static void test_fdp_skew(void **state)
{
	(void)state;
	each_point(fdp_point);
}

/*
 * Greedy's ties are not a detail under skew. The FTL (valid-count buckets, each a LIFO list)
 * takes, among the blocks with the fewest valid pages, the one whose count changed last, and the
 * reference above does the same. Taking the block that has been closed longest instead favours
 * cold blocks (their count will not drop further) and makes separate GC markedly better. Printed
 * for docs/ftl.md; asserted only as the direction the reference shows.
 */
static void test_greedy_ties(void **state)
{
	(void)state;
	if (!all_points())
		skip(); /* four more greedy reference runs: the normal build's make check has them
		         */
	const struct skew *k = &skews[1];
	struct point s_lifo = run_ref(k, 0.10, REF_GREEDY, false, false, 0, false);
	struct point p_lifo = run_ref(k, 0.10, REF_GREEDY, true, false, 0, false);
	struct point s_old = run_ref(k, 0.10, REF_GREEDY, false, true, 0, false);
	struct point p_old = run_ref(k, 0.10, REF_GREEDY, true, true, 0, false);
	printf("greedy 90/10 Sf 0.10, ties to last changed: 1 wp %.4f, 2 wp %.4f (gain %+.2f%%)\n",
	       s_lifo.waf, p_lifo.waf, err_pct(s_lifo.waf, p_lifo.waf));
	printf("greedy 90/10 Sf 0.10, ties to oldest:       1 wp %.4f, 2 wp %.4f (gain %+.2f%%)\n",
	       s_old.waf, p_old.waf, err_pct(s_old.waf, p_old.waf));
	assert_true(p_old.waf < p_lifo.waf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_models),      cmocka_unit_test(test_reference_sanity),
	        cmocka_unit_test(test_fifo_skew),   cmocka_unit_test(test_greedy_skew),
	        cmocka_unit_test(test_greedy_ties), cmocka_unit_test(test_fdp_skew),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
