/*
 * test_wear.c - erase counts, wear leveling, retirement, SMART and the three lifetimes.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <cmocka.h>

#include "check.h"
#include "ftl_int.h" /* ftl_gc_one: one GC cycle on demand */

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

/* ---- wear attribution (ftl.h, docs/ftl.md) ---- */

/*
 * By hand, on one plane of 4-unit blocks: class 1 writes lpns 0-3 (block A), trims 0 and 1,
 * class 2 overwrites lpn 2 (block B); class 3 writes 11 new lpns; then one GC cycle. Every
 * other closed block is wholly valid, so greedy takes A (1 valid unit): one copy (class 1), charged
 * to A's invalid units, two trimmed and one overwritten of class 1: 2/3 and 1/3 of one unit,
 * the largest remainder (the trims') takes it. A's erase: class 1 moved 4 KiB, trimmed 8 KiB,
 * overwritten 4 KiB.
 */
static void test_attribution_by_hand(void **state)
{
	(void)state;
	struct ftl_config c;
	ftl_config_default(&c);
	c.channels = c.luns_per_channel = c.planes_per_lun = 1;
	c.blocks_per_plane = 32;
	c.pages_per_block = 4;
	c.page_size = c.unit_size = 4096;
	c.gc_unit = FTL_GC_BLOCK;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	c.write_buffer_pages = 1;
	struct ftl *f = mk(&c);
	assert_int_equal(ftl_set_class(f, FTL_CLASSES), FTL_E_INVAL);
	assert_int_equal(ftl_set_class(f, 1), FTL_OK);
	assert_int_equal(ftl_write(f, 0, 4 * 4096, 0, 0, NULL), FTL_OK);
	assert_int_equal(ftl_trim(f, 0, 2 * 4096, 0, NULL), FTL_OK);
	assert_int_equal(ftl_set_class(f, 2), FTL_OK);
	assert_int_equal(ftl_write(f, 2 * 4096, 4096, 0, 0, NULL), FTL_OK);
	assert_int_equal(ftl_set_class(f, 3), FTL_OK);
	const uint64_t n3 = 11; /* B's last 3 units and two more blocks, all valid */
	assert_int_equal(ftl_write(f, 4 * 4096, n3 * 4096, 0, 0, NULL), FTL_OK);
	assert_int_equal(ftl_gc_one(f, 0, true), FTL_OK);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_int_equal(st.gc_victims, 1);
	assert_int_equal(st.gc_prog_bytes, 4096);
	struct ftl_attribution a;
	ftl_get_attribution(f, &a);
	assert_int_equal(a.prog[1][FTL_ATTR_HOST], 4 * 4096);
	assert_int_equal(a.prog[2][FTL_ATTR_HOST], 4096);
	assert_int_equal(a.prog[3][FTL_ATTR_HOST], n3 * 4096);
	assert_int_equal(a.prog[1][FTL_ATTR_GC], 4096);
	assert_int_equal(a.erased[1][FTL_ATTR_MOVED], 4096);
	assert_int_equal(a.erased[1][FTL_ATTR_TRIMMED], 2 * 4096);
	assert_int_equal(a.erased[1][FTL_ATTR_OVERWRITTEN], 4096);
	assert_int_equal(a.erased_empty_bytes, 0);
	assert_int_equal(a.gc_cause[1][FTL_ATTR_TRIMMED], 4096);
	assert_int_equal(a.gc_cause[1][FTL_ATTR_OVERWRITTEN], 0);
	for (int k = 0; k < FTL_CLASSES; k++)
		if (k != 1)
			assert_int_equal(a.erased[k][FTL_ATTR_MOVED] + a.erased[k][FTL_ATTR_TRIMMED] +
			                         a.erased[k][FTL_ATTR_OVERWRITTEN],
			                 0);
	check_attribution_sums(f);
	check_ok(f);
	ftl_destroy(f);
}

/*
 * The sums, exactly, through everything that programs or erases: four classes, random
 * overwrites, TRIMs, flushes that pad 16 KiB pages of 4 KiB units, GC on superblocks and
 * static wear leveling; then across a snapshot: the loaded drive has the same attribution and
 * goes on adding up.
 */
static void test_attribution_sums(void **state)
{
	(void)state;
	struct ftl_config c;
	ftl_config_default(&c);
	c.channels = 2;
	c.luns_per_channel = 2;
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.page_size = 16384;
	c.unit_size = 4096;
	c.gc_unit = FTL_GC_SUPERBLOCK;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	c.wl_static = true;
	c.wl_threshold = 4;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units;
	assert_int_equal(ftl_write(f, 0, n * 4096, 0, 0, NULL), FTL_OK); /* class 0: cold */
	for (uint64_t i = 0; i < 6 * n; i++) {
		uint64_t r = rnd(), lpn = r % n;
		assert_int_equal(ftl_set_class(f, (unsigned)(r >> 40) % FTL_CLASSES), FTL_OK);
		if ((r >> 20) % 16 == 0)
			assert_int_equal(ftl_trim(f, lpn * 4096, 4096 * (1 + (r >> 50) % 8 % (n - lpn)), 0, NULL), FTL_OK);
		else if ((r >> 20) % 64 == 1)
			assert_int_equal(ftl_flush(f, 0, NULL), FTL_OK);
		else
			/* 3 in 4 writes to a hot tenth of the drive */
			assert_int_equal(ftl_write(f, ((r >> 30) % 4 ? lpn % (n / 10) : lpn) * 4096, 4096, 0, 0, NULL), FTL_OK);
	}
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	printf("attribution sums: gc %llu, wl %llu, pad %llu bytes, %llu units trimmed\n",
	       (unsigned long long)st.gc_prog_bytes, (unsigned long long)st.wl_prog_bytes,
	       (unsigned long long)st.pad_prog_bytes, (unsigned long long)st.trim_units);
	assert_true(st.gc_prog_bytes > 0 && st.wl_prog_bytes > 0 && st.pad_prog_bytes > 0 && st.trim_units > 0);
	check_attribution_sums(f);
	check_ok(f);
	char path[] = "/tmp/fg-attr-XXXXXX", err[256];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(ftl_snapshot_save(f, path, err, sizeof(err)), FTL_OK);
	struct ftl *g = ftl_snapshot_load(path, err, sizeof(err));
	unlink(path);
	if (!g)
		fail_msg("%s", err);
	struct ftl_attribution a, b;
	ftl_get_attribution(f, &a);
	ftl_get_attribution(g, &b);
	assert_memory_equal(&a, &b, sizeof(a));
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(g, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
	check_attribution_sums(g);
	ftl_destroy(g);
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
		cmocka_unit_test(test_attribution_by_hand),
		cmocka_unit_test(test_attribution_sums),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
