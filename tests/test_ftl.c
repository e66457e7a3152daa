/*
 * test_ftl.c - the FTL's API contract: config errors, bad I/O, mapping, TRIM, partial units,
 * timing against hand-computed figures, and ftl_check() after millions of random operations
 * on every GC mode, stream layout and victim policy.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#define TEST_SEED 88172645463325252ull
#include "testutil.h"

static struct ftl_config small(void)
{
	struct ftl_config c;
	ftl_config_default(&c);
	c.channels = 2;
	c.luns_per_channel = 2;
	c.planes_per_lun = 2;
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.page_size = 16384;
	c.unit_size = 4096;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	return c;
}



/* ---- configuration ---- */

static void expect_set_error(const char *key, const char *val, const char *msg)
{
	struct ftl_config c;
	char err[256];
	ftl_config_default(&c);
	assert_int_equal(ftl_config_set(&c, key, val, err, sizeof(err)), FTL_E_INVAL);
	if (!strstr(err, msg))
		fail_msg("'%s=%s' gave '%s', expected '%s'", key, val, err, msg);
}

static void test_config_errors(void **state)
{
	(void)state;
	expect_set_error("pages_per_block", "0", "pages_per_block=0: must be > 0");
	expect_set_error("channels", "-3", "channels=-3: must be > 0");
	expect_set_error("no_such_key", "1", "no_such_key: unknown config key");
	expect_set_error("gc_policy", "lru", "gc_policy=lru: must be one of greedy|fifo|cost-benefit|d-choice");
	expect_set_error("page_size", "4x", "page_size=4x: trailing characters");
	expect_set_error("blocks_per_plane", "1.5", "must be an integer");
	expect_set_error("spare_factor", "0.99", "spare_factor=0.99: must be in");
	expect_set_error("wl_static", "maybe", "wl_static=maybe: must be on or off");
	expect_set_error("t_read_us", "", "t_read_us=: empty value");

	struct ftl_config c = small();
	char err[256];
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_OK);
	c.page_size = 6144;
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_E_INVAL);
	assert_non_null(strstr(err, "page_size=6144: must be a multiple of unit_size=4096"));
	c = small();
	c.pages_per_block = 0;
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_E_INVAL);
	assert_non_null(strstr(err, "pages_per_block=0: must be > 0"));
	c = small();
	c.op_percent = 10; /* both set */
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_E_INVAL);
	assert_non_null(strstr(err, "set exactly one"));
	c = small();
	c.spare_factor = 0.01; /* too little spare for the reserve and open frontiers */
	assert_null(ftl_create(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "spare_factor=0.01: only"));
	c = small();
	c.blocks_per_plane = 1u << 24;
	c.pages_per_block = 4096;
	assert_null(ftl_create(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "must be < 2^"));
	/* setting one of op_percent/spare_factor clears the other; format round-trips */
	c = small();
	assert_int_equal(ftl_config_set(&c, "op_percent", "28", err, sizeof(err)), FTL_OK);
	assert_true(c.spare_factor < 0);
	assert_int_equal(ftl_config_set(&c, "blocks_per_plane", "1k", err, sizeof(err)), FTL_OK);
	assert_int_equal(c.blocks_per_plane, 1024);
	/* the one size rule (common/parse) for every integer key, the 64-bit one too */
	assert_int_equal(ftl_config_set(&c, "page_size", "16KiB", err, sizeof(err)), FTL_OK);
	assert_int_equal(c.page_size, 16384);
	assert_int_equal(ftl_config_set(&c, "seed", "4k", err, sizeof(err)), FTL_OK);
	assert_int_equal(c.seed, 4096);
	assert_int_equal(ftl_config_set(&c, "seed", "1152921504606846977", err, sizeof(err)),
	                 FTL_OK);
	assert_true(c.seed == (1ull << 60) + 1); /* digits stay exact past 2^53 */
	char text[4096];
	ftl_config_format(&c, text, sizeof(text));
	assert_non_null(strstr(text, "op_percent=28\n"));
	assert_null(strstr(text, "spare_factor="));
}

/* ---- I/O contract ---- */

static void test_bad_io(void **state)
{
	(void)state;
	struct ftl_config c = small();
	struct ftl *f = mk(&c);
	uint64_t user = ftl_get_geometry(f)->user_bytes, done = 7;
	assert_int_equal(ftl_write(f, 0, 0, 0, 0, &done), FTL_E_INVAL);
	assert_int_equal(ftl_write(f, 100, 512, 0, 0, NULL), FTL_E_INVAL);
	assert_int_equal(ftl_write(f, 0, 1000, 0, 0, NULL), FTL_E_INVAL);
	assert_int_equal(ftl_write(f, user, 4096, 0, 0, NULL), FTL_E_RANGE);
	assert_int_equal(ftl_write(f, user - 4096, 8192, 0, 0, NULL), FTL_E_RANGE);
	assert_int_equal(ftl_write(f, UINT64_MAX - 511, 512, 0, 0, NULL), FTL_E_RANGE);
	assert_int_equal(ftl_read(f, user, 512, 0, NULL), FTL_E_RANGE);
	assert_int_equal(ftl_trim(f, 0, 0, 0, NULL), FTL_E_INVAL);
	assert_int_equal(ftl_trim(f, user - 512, 1024, 0, NULL), FTL_E_RANGE);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_int_equal(st.host_write_bytes, 0);
	assert_int_equal(st.nand_write_bytes, 0);
	assert_int_equal(ftl_write(f, user - 4096, 4096, 0, 0, NULL), FTL_OK);
	assert_true(ftl_is_mapped(f, user - 4096, 4096));
	check_ok(f);
	ftl_destroy(f);
}

static void test_map_trim_partial(void **state)
{
	(void)state;
	struct ftl_config c = small();
	struct ftl *f = mk(&c);
	struct ftl_stats st;
	/* 3 whole units */
	assert_int_equal(ftl_write(f, 8192, 12288, 0, 0, NULL), FTL_OK);
	assert_true(ftl_is_mapped(f, 8192, 12288));
	assert_false(ftl_is_mapped(f, 4096, 4096));
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_units, 3);
	assert_int_equal(st.host_write_bytes, 12288);
	assert_int_equal(st.host_prog_bytes, 12288);
	/* a 512-byte write into a mapped unit: read-modify-write, one unit programmed */
	assert_int_equal(ftl_write(f, 8192 + 512, 512, 0, 0, NULL), FTL_OK);
	ftl_get_stats(f, &st);
	assert_int_equal(st.rmw_units, 1);
	assert_int_equal(st.valid_units, 3);
	assert_int_equal(st.host_write_bytes, 12800);
	assert_int_equal(st.host_prog_bytes, 16384);
	/* into an unmapped unit: no read needed */
	assert_int_equal(ftl_write(f, 0, 1024, 0, 0, NULL), FTL_OK);
	ftl_get_stats(f, &st);
	assert_int_equal(st.rmw_units, 1);
	assert_int_equal(st.valid_units, 4);
	/* trim [10240, 18432): covers unit 3 (12288..16383) fully, units 2 and 4 in part */
	assert_int_equal(ftl_trim(f, 10240, 8192, 0, NULL), FTL_OK);
	ftl_get_stats(f, &st);
	assert_int_equal(st.trim_units, 1);
	assert_int_equal(st.trim_partial_units, 2);
	assert_int_equal(st.valid_units, 3);
	assert_true(ftl_is_mapped(f, 8192, 4096));
	assert_false(ftl_is_mapped(f, 12288, 4096));
	assert_true(ftl_is_mapped(f, 16384, 4096));
	/* trimming what is not mapped changes nothing */
	assert_int_equal(ftl_trim(f, 12288, 4096, 0, NULL), FTL_OK);
	ftl_get_stats(f, &st);
	assert_int_equal(st.trim_units, 1);
	check_ok(f);
	/* flush pads the open page: 4 units per 16 KiB page */
	ftl_get_stats(f, &st);
	uint64_t before = st.nand_write_bytes;
	assert_int_equal(ftl_flush(f, 0, NULL), FTL_OK);
	ftl_get_stats(f, &st);
	assert_int_equal(st.nand_write_bytes % 16384, 0);
	assert_int_equal(st.pad_prog_bytes, st.nand_write_bytes - before);
	assert_true(st.pad_prog_bytes > 0);
	check_ok(f);
	ftl_destroy(f);
}

/* ---- timing, by hand ---- */

static void test_timing(void **state)
{
	(void)state;
	struct ftl_config c;
	ftl_config_default(&c);
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.page_size = 16384;
	c.unit_size = 4096;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	c.t_read_us = 50;
	c.t_prog_us = 600;
	c.t_erase_us = 3000;
	c.channel_mbps = 800; /* 4096 B -> 5120 ns, 16384 B -> 20480 ns */
	c.write_buffer_pages = 1;
	c.host_streams = 1;
	struct ftl *f = mk(&c);
	uint64_t done;
	/* a read of unmapped data completes at once */
	assert_int_equal(ftl_read(f, 0, 4096, 1000, &done), FTL_OK);
	assert_int_equal(done, 1000);
	/* 4 units fill one page: the first 3 are buffered (ack at issue time); the 4th also gets its
	 * buffer slot at once, and its page program occupies the LUN: xfer 20480 + tPROG 600000 */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, &done), FTL_OK);
		assert_int_equal(done, 0);
	}
	/* the next page needs the only buffer slot: it frees when page 0's program ends */
	assert_int_equal(ftl_write(f, 4 * 4096, 4096, 0, 0, &done), FTL_OK);
	assert_int_equal(done, 20480 + 600000);
	/* an idle read of one unit: tR + one unit over the channel */
	uint64_t t = 10000000;
	assert_int_equal(ftl_read(f, 0, 4096, t, &done), FTL_OK);
	assert_int_equal(done, t + 50000 + 5120);
	/* two units of the same page: one tR, two transfers */
	t = 20000000;
	assert_int_equal(ftl_read(f, 0, 8192, t, &done), FTL_OK);
	assert_int_equal(done, t + 50000 + 2 * 5120);
	/* a unit still in the write buffer (page 1 not full) is served at once */
	assert_int_equal(ftl_read(f, 4 * 4096, 4096, t, &done), FTL_OK);
	assert_int_equal(done, t);
	/* a read issued while the LUN programs waits for it */
	t = 30000000;
	for (int i = 5; i < 8; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, t, NULL), FTL_OK);
	/* page 1 was programmed at t: LUN busy until t + 20480 + 600000 */
	assert_int_equal(ftl_read(f, 0, 4096, t, &done), FTL_OK);
	assert_int_equal(done, t + 20480 + 600000 + 50000 + 5120);
	ftl_destroy(f);
}

/*
 * Planes, suspend and the host link, by hand (timing.c). One LUN of four planes, 16 KiB pages
 * of four 4 KiB units over an 800 MB/s channel: a page moves in 20480 ns, a unit in 5120 ns.
 * Pages stripe over the planes: units 0-3 are plane 0's page 0, units 4-7 plane 1's, ...,
 * units 16-19 plane 0's page 1.
 */
static struct ftl *four_planes(bool multiplane, double t_suspend_us, uint32_t suspend_max,
                               double host_mbps)
{
	struct ftl_config c = small();
	c.channels = c.luns_per_channel = 1;
	c.planes_per_lun = 4;
	c.t_read_us = 50;
	c.t_prog_us = 600;
	c.t_erase_us = 3000;
	c.channel_mbps = 800;
	c.write_buffer_pages = 64;
	c.host_streams = 1;
	c.multiplane = multiplane;
	c.t_suspend_us = t_suspend_us;
	c.suspend_max = suspend_max;
	c.host_mbps = host_mbps;
	return mk(&c);
}

static void test_timing_planes(void **state)
{
	(void)state;
	const uint64_t xp = 20480, xu = 5120, tr = 50000, tp = 600000;
	for (int mp = 0; mp <= 1; mp++) {
		struct ftl *f = four_planes(mp, 0, 0, 0);
		uint64_t done, t;
		/* four pages at t=0, one per plane: the transfers queue on the channel; with
		 * multiplane each plane programs as soon as its page is in, otherwise one at a time */
		for (int i = 0; i < 16; i++)
			assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
		uint64_t last_prog = mp ? 4 * xp + tp : 4 * (xp + tp);
		/* a read issued meanwhile waits until every plane is done programming */
		assert_int_equal(ftl_read(f, 0, 4096, 100000, &done), FTL_OK);
		assert_int_equal(done, last_prog + tr + xu);
		/* four reads at once, one per plane: sensed together with multiplane, in turn without;
		 * their units then share the channel */
		t = 10000000;
		for (int i = 0; i < 4; i++) {
			assert_int_equal(ftl_read(f, i * 16384, 4096, t, &done), FTL_OK);
			assert_int_equal(done, mp ? t + tr + (i + 1) * xu : t + (i + 1) * tr + xu);
		}
		ftl_destroy(f);
	}
}

static void test_timing_suspend(void **state)
{
	(void)state;
	const uint64_t xp = 20480, xu = 5120, tr = 50000, tp = 600000, ts = 20000;
	struct ftl *f = four_planes(true, 20, 2, 0);
	uint64_t done, t0 = 0;
	for (int i = 0; i < 20; i++) /* units 16-19 fill plane 0's second page */
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	/* plane 0's second page: in over the channel after the first four, programmed after the
	 * first page's program */
	uint64_t p0 = xp + tp;
	/* a host read on plane 1 while the LUN programs: suspend (ts), sense, transfer */
	t0 = 100000;
	assert_int_equal(ftl_read(f, 4 * 4096, 4096, t0, &done), FTL_OK);
	assert_int_equal(done, t0 + ts + tr + xu);
	/* a second read during that suspension queues behind its sense, at no suspend cost */
	assert_int_equal(ftl_read(f, 8 * 4096, 4096, t0 + 10000, &done), FTL_OK);
	assert_int_equal(done, t0 + ts + 2 * tr + xu);
	/* every busy plane is late by ts + 2 tR; plane 0's first program was suspended twice,
	 * its limit: a third read waits until every program is done */
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_int_equal(st.read_suspends, 2);
	uint64_t late = ts + 2 * tr;
	/* the LUN's last program: plane 0's second page, after its first, both late */
	uint64_t lun_done = p0 + late + tp;
	assert_int_equal(ftl_read(f, 12 * 4096, 4096, t0 + 300000, &done), FTL_OK);
	assert_int_equal(done, lun_done + tr + xu);
	ftl_get_stats(f, &st);
	assert_int_equal(st.read_suspends, 2);
	ftl_destroy(f);
}

static void test_timing_link(void **state)
{
	(void)state;
	/* a 1000 MB/s link: 4096 B cross it in 4096 ns */
	struct ftl *f = four_planes(true, 0, 0, 1000);
	uint64_t done;
	/* a write is acknowledged once its data is over the link (a buffer slot is free) */
	assert_int_equal(ftl_write(f, 0, 4096, 0, 1000, &done), FTL_OK);
	assert_int_equal(done, 1000 + 4096);
	/* two writes issued together share the link */
	assert_int_equal(ftl_write(f, 4096, 4096, 0, 1000, &done), FTL_OK);
	assert_int_equal(done, 1000 + 2 * 4096);
	for (int i = 2; i < 16; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 100000, NULL), FTL_OK);
	/* a read of one unit: sense, channel, then the unit over the link */
	uint64_t t = 10000000;
	assert_int_equal(ftl_read(f, 0, 4096, t, &done), FTL_OK);
	assert_int_equal(done, t + 50000 + 5120 + 4096);
	/* 64 KiB from four planes: sensed together, four pages over the channel (the last ends at
	 * tR + 4 x 20480); the link streams behind and ends one unit after that */
	t = 20000000;
	assert_int_equal(ftl_read(f, 0, 65536, t, &done), FTL_OK);
	assert_int_equal(done, t + 50000 + 4 * 20480 + 4096);
	/* the same read issued again at once: its planes sense behind the first's (tR later) and
	 * its pages queue on the channel behind the first's */
	assert_int_equal(ftl_read(f, 0, 65536, t, &done), FTL_OK);
	assert_int_equal(done, t + 50000 + 8 * 20480 + 4096);
	ftl_destroy(f);
	/* a 100 MB/s link is the slower part: 64 KiB take 655360 ns on it */
	f = four_planes(true, 0, 0, 100);
	for (int i = 0; i < 16; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	assert_int_equal(ftl_read(f, 0, 65536, t, &done), FTL_OK);
	assert_int_equal(done, t + 655360);
	ftl_destroy(f);
}

/* GC and erases occupy the LUN: with GC active, host writes are slower than without. */
static void test_gc_delays_host(void **state)
{
	(void)state;
	struct ftl_config c;
	ftl_config_default(&c);
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	c.write_buffer_pages = 1;
	struct ftl *f = mk(&c);
	uint64_t n = ftl_get_geometry(f)->user_units, now = 0, seed = 1;
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, now, &now), FTL_OK);
	uint64_t t_fill = now;
	for (uint64_t i = 0; i < n; i++) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		assert_int_equal(ftl_write(f, (seed >> 33) % n * 4096, 4096, 0, now, &now), FTL_OK);
	}
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_true(st.erases > 0);
	/* per unit: fill = xfer + tPROG; random adds GC copies and erases */
	assert_true(now - t_fill > t_fill * (st.waf_window > 1.5 ? 1.4 : 1.0));
	ftl_destroy(f);
}

/* ---- randomized invariants ---- */


static void random_ops(struct ftl_config *c, uint64_t ops)
{
	struct ftl *f = mk(c);
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t sectors = g->user_bytes / 512, now = 0;
	uint32_t *prev = calloc(g->blocks, sizeof(uint32_t));
	assert_non_null(prev);
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t r = rnd(), off, len;
		int kind = r % 100;
		/* hot/cold skew: half the ops hit the first 10% of the space */
		uint64_t span = (r >> 8) & 1 ? sectors / 10 : sectors;
		off = (rnd() % span);
		len = kind < 5 ? 1 + rnd() % 256 : (kind < 80 ? 8 : 1 + rnd() % 64);
		if (off + len > sectors)
			len = sectors - off;
		int rc;
		if (kind < 85)
			rc = ftl_write(f, off * 512, len * 512, (unsigned)(r >> 20) % 3, now, &now);
		else if (kind < 95)
			rc = ftl_trim(f, off * 512, len * 512, now, &now);
		else if (kind < 99)
			rc = ftl_read(f, off * 512, len * 512, now, &now);
		else
			rc = ftl_flush(f, now, &now);
		if (rc)
			fail_msg("op %llu: %s", (unsigned long long)i, ftl_strerror(rc));
		if (i % 50000 == 49999) {
			check_ok(f);
			for (uint32_t b = 0; b < g->blocks; b++) {
				uint32_t e = ftl_block_erases(f, b, NULL, NULL);
				assert_true(e >= prev[b]); /* erase counts never decrease */
				prev[b] = e;
			}
		}
	}
	check_ok(f);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_true(st.erases > 0);
	assert_true(st.gc_victims > 0);
	free(prev);
	ftl_destroy(f);
}

static void test_random_superblock_separate(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.host_streams = 3;
	random_ops(&c, 1000000);
}

/* GC units of two superblocks (16 blocks over the 8 planes, two on each), two host streams as
 * FDP handles, both handle types: the invariants hold through GC, and an RU is two superblocks */
static void test_random_multi_superblock(void **state)
{
	(void)state;
	for (int pi = 0; pi < 2; pi++) {
		struct ftl_config c = small();
		c.gc_unit_superblocks = 2;
		c.host_streams = 2;
		c.fdp = true;
		c.fdp_ruh_type = pi ? FTL_RUHT_PERSISTENTLY : FTL_RUHT_INITIALLY;
		c.spare_factor = 0.35;
		char err[256];
		struct ftl *f = ftl_create(&c, err, sizeof(err));
		if (!f)
			fail_msg("%s", err);
		struct ftl_fdp_stats st;
		ftl_fdp_stats(f, &st);
		assert_int_equal(st.ru_bytes, 2ull * 8 * 16 * 16384);
		assert_int_equal(ftl_get_geometry(f)->gc_units, 8 * 64 / 16);
		ftl_destroy(f);
		random_ops(&c, 300000);
	}
	struct ftl_config c = small();
	char err[256];
	c.gc_unit_superblocks = 3; /* 64 blocks per plane: not whole units */
	assert_null(ftl_create(&c, err, sizeof(err)));
	assert_non_null(strstr(err, "gc_unit_superblocks=3: must divide blocks_per_plane=64"));
}

static void test_random_block_shared(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.gc_unit = FTL_GC_BLOCK;
	c.gc_stream = FTL_GC_SHARED;
	c.host_streams = 2;
	random_ops(&c, 1000000);
}

static void test_random_superblock_shared_burst(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.gc_stream = FTL_GC_SHARED_BURST;
	random_ops(&c, 300000);
	/* and the mixed-pool shared mode on superblocks, several host streams */
	c.gc_stream = FTL_GC_SHARED;
	c.host_streams = 3;
	random_ops(&c, 300000);
}

/* 3 units a page (12 KiB pages): a page's units can straddle two words of the valid bitmap,
 * so GC moves clear them one by one (map.c ftl_move_run); static WL moves them too */
static void test_random_three_unit_pages(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.page_size = 12288;
	c.wl_threshold = 4;
	random_ops(&c, 300000);
}

static void test_random_policies(void **state)
{
	(void)state;
	enum ftl_gc_policy pols[] = {FTL_GC_FIFO, FTL_GC_COST_BENEFIT, FTL_GC_DCHOICE};
	for (int i = 0; i < 3; i++) {
		struct ftl_config c = small();
		c.gc_policy = pols[i];
		c.gc_unit = i == 1 ? FTL_GC_BLOCK : FTL_GC_SUPERBLOCK;
		c.wl_threshold = 4; /* force static WL moves too */
		random_ops(&c, 500000);
	}
}

static void test_random_wear_out(void **state)
{
	(void)state;
	/* low endurance with variation: blocks retire mid-run; the device must stay consistent
	 * and end read-only, never crash or lose mapped data */
	struct ftl_config c = small();
	c.pe_cycles = 40;
	c.pe_variation = 0.2;
	c.gc_unit = FTL_GC_SUPERBLOCK;
	struct ftl *f = mk(&c);
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t n = g->user_units, i;
	int rc = FTL_OK;
	for (i = 0; i < 200 * n && rc == FTL_OK; i++) {
		rc = ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL);
		if (i % 20000 == 0)
			check_ok(f);
	}
	assert_int_equal(rc, FTL_E_WORN);
	check_ok(f);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_true(st.read_only);
	assert_true(st.retired_blocks > 0);
	assert_true(st.available_spare < st.available_spare_threshold);
	/* read-only: writes and trims fail, reads of existing data still work */
	uint64_t mapped = 0;
	while (!ftl_is_mapped(f, mapped * 4096, 4096))
		mapped++;
	assert_int_equal(ftl_write(f, mapped * 4096, 4096, 0, 0, NULL), FTL_E_WORN);
	assert_int_equal(ftl_trim(f, mapped * 4096, 4096, 0, NULL), FTL_E_WORN);
	assert_int_equal(ftl_read(f, mapped * 4096, 4096, 0, NULL), FTL_OK);
	assert_true(ftl_is_mapped(f, mapped * 4096, 4096));
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_units, (uint64_t)st.valid_units); /* unchanged below */
	uint64_t v = st.valid_units;
	ftl_write(f, 0, 4096, 0, 0, NULL);
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_units, v);
	ftl_destroy(f);
}

/* The device never reports "full" while the host stays inside the user capacity, even at the
 * smallest spare the validator accepts. */
static void test_min_spare_never_full(void **state)
{
	(void)state;
	struct ftl_config c;
	ftl_config_default(&c);
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.op_percent = -1;
	char err[256];
	struct ftl *f = NULL;
	for (double sf = 0.01; sf < 0.5 && !f; sf += 0.01) {
		c.spare_factor = sf;
		f = ftl_create(&c, err, sizeof(err));
	}
	assert_non_null(f);
	uint64_t n = ftl_get_geometry(f)->user_units;
	for (uint64_t i = 0; i < 20 * n; i++)
		assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, 0, NULL), FTL_OK);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(ftl_write(f, i * 4096, 4096, 0, 0, NULL), FTL_OK);
	check_ok(f);
	struct ftl_stats st;
	ftl_get_stats(f, &st);
	assert_int_equal(st.valid_units, n);
	ftl_destroy(f);
}

/* ftl_unit_valid(): the valid share of the GC unit holding an LBA. One plane, 64 KiB blocks of
 * 16 one-unit pages: writing 64 KiB fills and closes block 0 (valid 16/16); a TRIM of its first
 * 16 KiB leaves 12/16; a unit in the open block reads 1 (no GC victim yet); unmapped and
 * out-of-range LBAs read -1. */
static void test_unit_valid(void **state)
{
	(void)state;
	struct ftl_config c;
	char err[256];
	ftl_config_default(&c);
	c.channels = c.luns_per_channel = c.planes_per_lun = 1;
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.page_size = c.unit_size = 4096;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	struct ftl *f = ftl_create(&c, err, sizeof(err));
	assert_non_null(f);
	assert_int_equal(ftl_write(f, 0, 65536, 0, 0, NULL), FTL_OK);
	assert_true(ftl_unit_valid(f, 0) == 1.0);
	assert_int_equal(ftl_trim(f, 0, 16384, 0, NULL), FTL_OK);
	assert_true(ftl_unit_valid(f, 0) == -1.0); /* trimmed: unmapped */
	assert_true(ftl_unit_valid(f, 20480) == 0.75);
	assert_int_equal(ftl_write(f, 65536, 4096, 0, 0, NULL), FTL_OK);
	assert_true(ftl_unit_valid(f, 65536) == 1.0);
	assert_true(ftl_unit_valid(f, 131072) == -1.0);
	assert_true(ftl_unit_valid(f, ftl_get_geometry(f)->user_bytes) == -1.0);
	ftl_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_config_errors),
		cmocka_unit_test(test_bad_io),
		cmocka_unit_test(test_map_trim_partial),
		cmocka_unit_test(test_timing),
		cmocka_unit_test(test_timing_planes),
		cmocka_unit_test(test_timing_suspend),
		cmocka_unit_test(test_timing_link),
		cmocka_unit_test(test_gc_delays_host),
		cmocka_unit_test(test_min_spare_never_full),
		cmocka_unit_test(test_random_superblock_separate),
		cmocka_unit_test(test_random_multi_superblock),
		cmocka_unit_test(test_random_block_shared),
		cmocka_unit_test(test_random_superblock_shared_burst),
		cmocka_unit_test(test_random_three_unit_pages),
		cmocka_unit_test(test_random_policies),
		cmocka_unit_test(test_random_wear_out),
		cmocka_unit_test(test_unit_valid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
