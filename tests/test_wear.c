/*
 * test_wear.c - erase counts, wear leveling, retirement, SMART and the three lifetimes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "check.h"

#define TEST_SEED 0x243f6a8885a308d3ull
#include "testutil.h"


static struct ftl_config base(void)
{
	struct ftl_config c;
	ftl_config_default(&c);
	c.blocks_per_plane = 1024;
	c.pages_per_block = 32;
	c.page_size = c.unit_size = 4096;
	c.spare_factor = 0.2;
	c.op_percent = -1;
	c.host_streams = 1;
	c.pe_cycles = 100000;
	return c;
}



/* Fill the drive, then hammer the first 10% only: the other 90% is static cold data. */
static uint32_t hot_cold_spread(bool wl, uint32_t thr, uint64_t *wl_bytes)
{
	struct ftl_config c = base();
	c.wl_static = wl;
	c.wl_threshold = thr;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units;
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	uint32_t worst = 0;
	for (uint64_t i = 0; i < 40 * n; i++) {
		assert_int_equal(ftl_write(f, rnd() % (n / 10) * 4096, 4096, 0, 0, NULL), FTL_OK);
		if (i % 4096 == 0) {
			struct ftl_stats st;
			ftl_get_stats(f, &st);
			if (st.erase_max - st.erase_min > worst)
				worst = st.erase_max - st.erase_min;
		}
	}
	check_ok(f);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	*wl_bytes = st.wl_prog_bytes;
	printf("static WL %-3s threshold %u: max-min erase reached %u (mean %.1f), WL wrote %llu bytes\n",
	       wl ? "on" : "off", thr, worst, st.erase_mean, (unsigned long long)st.wl_prog_bytes);
	ftl_destroy(f);
	return worst;
}

static void test_static_wl(void **state)
{
	(void)state;
	uint64_t wlb;
	uint32_t off = hot_cold_spread(false, 20, &wlb);
	assert_int_equal(wlb, 0);
	uint32_t on = hot_cold_spread(true, 20, &wlb);
	assert_true(wlb > 0);
	assert_true(on <= 20 + 2);  /* within its threshold plus a small margin */
	assert_true(off > 4 * 20);  /* without it the spread grows with the writes */
}

/* Dynamic WL alone (least-worn free block first) keeps uniform wear tight. */
static void test_dynamic_wl(void **state)
{
	(void)state;
	struct ftl_config c = base();
	c.wl_static = false;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units;
	for (uint64_t i = 0; i < 20 * n; i++)
		assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	printf("dynamic WL only, uniform: erase min %u mean %.1f max %u\n", st.erase_min, st.erase_mean, st.erase_max);
	assert_true(st.erase_mean > 30);
	assert_true(st.erase_max - st.erase_min <= 0.3 * st.erase_mean);
	ftl_destroy(f);
}

static void test_smart(void **state)
{
	(void)state;
	struct ftl_config c = base();
	c.pe_cycles = 200;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units;
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_int_equal(st.percentage_used, 0);
	assert_int_equal(st.available_spare, 100);
	assert_int_equal(st.data_units_written, 0);
	assert_int_equal(ftl_write(f, 0, 512, 0, 0, NULL), FTL_OK);
	ftl_get_stats(f, &st);
	assert_int_equal(st.data_units_written, 1); /* 512 bytes round up to one 512,000-byte unit */
	while (st.erase_mean < 100) {
		for (int i = 0; i < 10000; i++)
			assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
		ftl_get_stats(f, &st);
	}
	assert_int_equal(st.percentage_used, (uint32_t)floor(100.0 * st.erase_mean / 200));
	assert_true(st.percentage_used >= 50);
	assert_int_equal(st.data_units_written, (st.host_write_bytes + 511999) / 512000);
	assert_int_equal(st.media_units_written, (st.nand_write_bytes + 511999) / 512000);
	ftl_destroy(f);
}

/* Retirement eats spare, and the lost spare shows up as higher WAF. */
static void test_retirement_raises_waf(void **state)
{
	(void)state;
	struct ftl_config c = base();
	c.pe_cycles = 60;
	c.pe_variation = 0.25;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units;
	struct ftl_stats st, early = {0};
	bool have_early = false;
	int rc = FTL_OK;
	while (rc == FTL_OK) {
		for (int i = 0; i < 10000 && rc == FTL_OK; i++)
			rc = ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL);
		ftl_get_stats(f, &st);
		if (!have_early && st.erase_mean > 5 && !st.retired_blocks) {
			early = st;
			have_early = true;
		}
		if (st.retired_blocks > 60)
			break;
	}
	assert_true(have_early);
	assert_int_equal(rc, FTL_OK);
	check_ok(f);
	printf("retired %llu blocks: effective Sf %.4f -> %.4f, WAF %.3f -> %.3f\n",
	       (unsigned long long)st.retired_blocks, early.effective_spare_factor, st.effective_spare_factor,
	       early.waf_window, st.waf_window);
	assert_true(st.effective_spare_factor < early.effective_spare_factor - 0.03);
	assert_true(st.waf_window > early.waf_window * 1.05);
	assert_true(st.available_spare < 100);
	ftl_destroy(f);
}

/*
 * Lifetime by erase count, two ways: extrapolated from the steady-state erase rate of a drive
 * rated 3000 P/E, and by accelerated aging (the same drive at 3000/30 = 100 P/E, run to end of
 * life, host bytes scaled back by 30). No endurance variation, so both end at the same point.
 */
static void test_lifetime_two_ways(void **state)
{
	(void)state;
	const double F = 30, bpd = 1e9;
	struct ftl_config c = base();
	c.pe_cycles = 3000;
	c.wl_threshold = 8;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units;
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	for (uint64_t i = 0; i < 3 * n; i++)
		assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
	struct ftl_lifetime ex;
	ftl_lifetime(f, bpd, &ex);
	assert_string_equal(ex.basis, "window-erase-rate");
	ftl_destroy(f);

	c.pe_cycles = (uint32_t)(3000 / F);
	f = mk(&c);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	struct ftl_stats st;
	int rc = FTL_OK;
	for (;;) {
		for (int i = 0; i < 4096 && rc == FTL_OK; i++)
			rc = ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL);
		ftl_get_stats(f, &st);
		if (rc == FTL_E_WORN || st.erase_mean >= c.pe_cycles)
			break;
		assert_int_equal(rc, FTL_OK);
	}
	double acc = (double)st.host_write_bytes * F / bpd;
	printf("lifetime: extrapolated %.1f days (%s), accelerated x%.0f %.1f days (%+.2f%%); TBW %.1f, naive P/E %.1f\n",
	       ex.erase_days, ex.eol_reason, F, acc, 100 * (acc / ex.erase_days - 1), ex.tbw_days, ex.naive_pe_days);
	assert_true(fabs(acc / ex.erase_days - 1) <= 0.05);
	/* and the erase-count lifetime is the naive one divided by about WAF */
	struct ftl_config c2 = base();
	(void)c2;
	assert_true(ex.erase_days < ex.naive_pe_days / 2);
	check_ok(f);
	ftl_destroy(f);
}

/* TBW and naive P/E lifetimes, by hand. */
static void test_lifetime_formulas(void **state)
{
	(void)state;
	struct ftl_config c = base();
	c.dwpd = 1;
	c.warranty_years = 5;
	c.pe_cycles = 3000;
	struct ftl *f = mk(&c);
	const struct ftl_geometry *g = ftl_get_geometry(f);
	struct ftl_lifetime lt;
	double bpd = 2.0 * g->user_bytes; /* 2 drive writes per day */
	ftl_lifetime(f, bpd, &lt);
	assert_near(lt.tbw_days, 365.0 * 5 / 2, 1e-6);
	assert_near(lt.naive_pe_days, 3000.0 * g->phys_bytes / bpd, 1e-6);
	ftl_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lifetime_formulas),
		cmocka_unit_test(test_smart),
		cmocka_unit_test(test_dynamic_wl),
		cmocka_unit_test(test_static_wl),
		cmocka_unit_test(test_retirement_raises_waf),
		cmocka_unit_test(test_lifetime_two_ways),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
