/*
 * test_theory.c - WAF against Desnoyers' analytic models (SYSTOR'12, "Analytic modeling of SSD
 * write performance"; TOS'14, "Analytic models of SSD write performance").
 *
 * Uniform random 4 KiB overwrites on 1 channel x 1 LUN x 1 plane (a GC unit is one block), 4096
 * blocks, GC copies sharing the host frontier (gc_stream=shared, the mixed pool: the models'
 * layout), static WL off. After a sequential fill and 4x user capacity of random warm-up, WAF is
 * measured over 4x user capacity and compared, at the *effective* spare factor the FTL reports, with:
 *   FIFO:   A = a / (a + W0(-a e^-a)),                      a = T/U = 1/(1-Sf)
 *   greedy: A = a / (k a + W0(-k a e^(-k a))), k = 1 + 1/(2 Np)
 * Required: WAF within 2% of the model, effective Sf within 10% of the configured one.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <cmocka.h>

#include "check.h"

#define TEST_SEED 0x9e3779b97f4a7c15ull
#include "testutil.h"

/* Principal branch of Lambert W for x in [-1/e, 0), by Halley iteration. */
static double lambert_w0(double x)
{
	double w = x < -0.3 ? -1 + sqrt(2 * (1 + M_E * x)) : x;
	for (int i = 0; i < 100; i++) {
		double e = exp(w), f = w * e - x;
		double d = e * (w + 1) - (w + 2) * f / (2 * w + 2);
		double nw = w - f / d;
		if (fabs(nw - w) < 1e-15)
			return nw;
		w = nw;
	}
	return w;
}

static double model_fifo(double sf)
{
	double a = 1 / (1 - sf);
	return a / (a + lambert_w0(-a * exp(-a)));
}

static double model_greedy(double sf, double np)
{
	double a = 1 / (1 - sf), k = 1 + 1 / (2 * np), ka = k * a;
	return a / (ka + lambert_w0(-ka * exp(-ka)));
}

static void test_lambert_reference(void **state)
{
	(void)state;
	/* the worked examples of the issue / Desnoyers' tables */
	assert_near(model_fifo(0.10), 5.179, 0.001);
	assert_near(model_fifo(0.20), 2.693, 0.001);
	assert_near(model_greedy(0.10, 64), 4.82, 0.01);
	assert_near(model_greedy(0.20, 64), 2.60, 0.01);
	assert_near(model_greedy(0.10, 128), 4.99, 0.01);
}


/* k > 1: GC units of k superblocks (gc_unit_superblocks) of one block each on this one-plane
 * drive, so the model's erase unit is k x np pages */
static void run_case(double sf, uint32_t np, enum ftl_gc_policy pol, uint32_t k)
{
	struct ftl_config c;
	char err[256];
	ftl_config_default(&c);
	c.channels = c.luns_per_channel = c.planes_per_lun = 1;
	c.blocks_per_plane = 4096;
	c.pages_per_block = np;
	c.page_size = c.unit_size = 4096;
	c.spare_factor = sf;
	c.op_percent = -1;
	c.gc_policy = pol;
	c.gc_stream = FTL_GC_SHARED;
	c.host_streams = 1;
	c.wl_static = false;
	c.gc_reserve = 1;
	c.pe_cycles = 1000000;
	c.gc_unit = FTL_GC_SUPERBLOCK;
	c.gc_unit_superblocks = k;
	struct ftl *f = ftl_create(&c, err, sizeof(err));
	assert_non_null(f);
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t n = g->user_units;
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	for (uint64_t i = 0; i < 4 * n; i++)
		assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
	struct ftl_stats a, b;
	ftl_get_stats(f, &a);
	for (uint64_t i = 0; i < 4 * n; i++)
		assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
	ftl_get_stats(f, &b);
	double waf = (double)(b.nand_write_bytes - a.nand_write_bytes) / (b.host_write_bytes - a.host_write_bytes);
	double eff = b.effective_spare_factor;
	double model = pol == FTL_GC_FIFO ? model_fifo(eff) : model_greedy(eff, np * k);
	printf("%-6s Sf %.2f Np %3u x %u: effective Sf %.4f  WAF %.4f  model %.4f  (%+.2f%%)\n",
	       pol == FTL_GC_FIFO ? "fifo" : "greedy", sf, np, k, eff, waf, model,
	       100 * (waf / model - 1));
	assert_true(fabs(eff - sf) / sf <= 0.10);
	assert_true(fabs(waf - model) / model <= 0.02);
	assert_int_equal(ftl_check(f, err, sizeof(err)), 0);
	ftl_destroy(f);
}

#define CASE_K(name, sf, np, pol, k)               \
	static void name(void **state)             \
	{                                          \
		(void)state;                       \
		run_case(sf, np, pol, k);          \
	}
#define CASE(name, sf, np, pol) CASE_K(name, sf, np, pol, 1)
CASE(greedy_10_64, 0.10, 64, FTL_GC_GREEDY)
CASE(greedy_20_64, 0.20, 64, FTL_GC_GREEDY)
CASE(greedy_28_64, 0.28, 64, FTL_GC_GREEDY)
CASE(greedy_10_128, 0.10, 128, FTL_GC_GREEDY)
CASE(greedy_20_128, 0.20, 128, FTL_GC_GREEDY)
CASE(greedy_28_128, 0.28, 128, FTL_GC_GREEDY)
CASE(fifo_10_64, 0.10, 64, FTL_GC_FIFO)
CASE(fifo_20_64, 0.20, 64, FTL_GC_FIFO)
CASE(fifo_28_64, 0.28, 64, FTL_GC_FIFO)
CASE(fifo_10_128, 0.10, 128, FTL_GC_FIFO)
CASE(fifo_20_128, 0.20, 128, FTL_GC_FIFO)
CASE(fifo_28_128, 0.28, 128, FTL_GC_FIFO)
/* GC units of several superblocks (an FDP reclaim unit larger than a superblock): greedy at the
 * unit's k x np pages */
CASE_K(greedy_10_64x2, 0.10, 64, FTL_GC_GREEDY, 2)
CASE_K(greedy_20_32x4, 0.20, 32, FTL_GC_GREEDY, 4)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lambert_reference),
		cmocka_unit_test(greedy_10_64), cmocka_unit_test(greedy_20_64), cmocka_unit_test(greedy_28_64),
		cmocka_unit_test(greedy_10_128), cmocka_unit_test(greedy_20_128), cmocka_unit_test(greedy_28_128),
		cmocka_unit_test(fifo_10_64), cmocka_unit_test(fifo_20_64), cmocka_unit_test(fifo_28_64),
		cmocka_unit_test(fifo_10_128), cmocka_unit_test(fifo_20_128), cmocka_unit_test(fifo_28_128),
		cmocka_unit_test(greedy_10_64x2), cmocka_unit_test(greedy_20_32x4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
