/*
 * test_batch.c - ftl_write_batch() gives bit for bit what ftl_write() in a loop gives: the same
 * completion times, counters, JSON report and whole saved state (the snapshot holds every table
 * and scalar), through GC, static wear leveling and the batch boundaries, on every GC mode and
 * stream layout, with issue times given or chained (FTL_NOW_PREV); a failing write stops the
 * batch where the loop would stop. The same for the closed forms of the hot paths against their
 * page-by-page references: striped reads (read_stripe), whole pages written a stripe at a time
 * (write_stripe) and trimmed a page at a time. Also the multiply-for-divide helper of the hot
 * paths (udiv32, ftl_int.h) against the divide.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#define TEST_SEED 0x5eed0fba7c4ull
#include "testutil.h"
#include "ftl_int.h"

static struct ftl_config small(void)
{
	struct ftl_config c;
	ftl_config_default(&c);
	c.channels = 2;
	c.luns_per_channel = 2;
	c.planes_per_lun = 2;
	c.blocks_per_plane = 64;
	c.pages_per_block = 12; /* not a power of two: the multiply path of udiv32 */
	c.page_size = 16384;
	c.unit_size = 4096;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	c.host_streams = 2;
	return c;
}

static char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	long sz = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	char *b = malloc(sz > 0 ? (size_t)sz : 1);
	assert_non_null(b);
	assert_int_equal(fread(b, 1, (size_t)sz, fp), (size_t)sz);
	fclose(fp);
	*n = (size_t)sz;
	return b;
}

/* Everything observable of a and b is the same: stats, JSON, the saved state, ftl_check. */
static void assert_same(struct ftl *a, struct ftl *b, const char *dir)
{
	check_ok(a);
	check_ok(b);
	struct ftl_stats sa, sb;
	ftl_get_stats(a, &sa);
	ftl_get_stats(b, &sb);
	assert_int_equal(sa.host_write_bytes, sb.host_write_bytes);
	assert_int_equal(sa.nand_write_bytes, sb.nand_write_bytes);
	assert_int_equal(sa.gc_prog_bytes, sb.gc_prog_bytes);
	assert_int_equal(sa.erases, sb.erases);
	assert_int_equal(sa.clock_ns, sb.clock_ns);
	char *ja = NULL, *jb = NULL;
	size_t la = 0, lb = 0;
	FILE *fa = open_memstream(&ja, &la), *fb = open_memstream(&jb, &lb);
	assert_non_null(fa);
	assert_non_null(fb);
	assert_int_equal(ftl_json(a, 1e12, fa), 0);
	assert_int_equal(ftl_json(b, 1e12, fb), 0);
	fclose(fa);
	fclose(fb);
	assert_string_equal(ja, jb);
	free(ja);
	free(jb);
	char pa[512], pb[512], err[256];
	snprintf(pa, sizeof(pa), "%s/a.snap", dir);
	snprintf(pb, sizeof(pb), "%s/b.snap", dir);
	if (ftl_snapshot_save(a, pa, err, sizeof(err)) || ftl_snapshot_save(b, pb, err, sizeof(err)))
		fail_msg("snapshot: %s", err);
	size_t na, nb;
	char *ba = slurp(pa, &na), *bb = slurp(pb, &nb);
	assert_int_equal(na, nb);
	assert_memory_equal(ba, bb, na);
	free(ba);
	free(bb);
	unlink(pa);
	unlink(pb);
}

/*
 * Random writes (mostly single 4 KiB units, hot/cold, some partial-unit and multi-unit ones,
 * two streams, advancing issue times) in batches of 1..300, with TRIMs between batches, to
 * drive a through several device writes of GC. a gets them one ftl_write() at a time.
 */
static void run_both(struct ftl_config c, uint64_t writes, const char *dir)
{
	struct ftl *a = mk(&c), *b = mk(&c);
	const struct ftl_geometry *g = ftl_get_geometry(a);
	uint64_t sectors = g->user_bytes / 512, units = g->user_bytes / 4096, now = 0;
	struct ftl_wreq w[300];
	uint64_t da[300], db[300];
	for (uint64_t done = 0; done < writes;) {
		size_t n = 1 + rnd() % 300;
		for (size_t i = 0; i < n; i++) {
			uint64_t r = rnd(), off, len;
			int kind = r % 100;
			uint64_t span = (r >> 8) & 1 ? units / 8 : units;
			if (kind < 85) { /* one whole unit */
				off = rnd() % span * 4096;
				len = 4096;
			} else if (kind < 95) { /* several units, maybe crossing pages */
				off = rnd() % span * 4096;
				len = (1 + rnd() % 40) * 4096;
			} else { /* sector-granular: read-modify-write at the ends */
				off = rnd() % sectors * 512;
				len = (1 + rnd() % 24) * 512;
			}
			if (off + len > g->user_bytes)
				len = g->user_bytes - off;
			now += rnd() % 3000;
			/* a third of them closed-loop: issued when the write before completes */
			bool chained = i > 0 && rnd() % 3 == 0;
			w[i] = (struct ftl_wreq){.off = off, .len = len,
			                         .now_ns = chained ? FTL_NOW_PREV : now,
			                         .stream = (unsigned)(r >> 20) % 3};
		}
		for (size_t i = 0; i < n; i++) {
			uint64_t t = w[i].now_ns == FTL_NOW_PREV ? da[i - 1] : w[i].now_ns;
			assert_int_equal(ftl_write(a, w[i].off, w[i].len, w[i].stream, t, &da[i]),
			                 FTL_OK);
			if (da[i] > now)
				now = da[i];
		}
		size_t nd = 0;
		assert_int_equal(ftl_write_batch(b, w, n, db, &nd), FTL_OK);
		assert_int_equal(nd, n);
		assert_memory_equal(da, db, n * sizeof(da[0]));
		if (rnd() % 4 == 0) { /* a TRIM between batches, on both */
			uint64_t off = rnd() % units * 4096, len = (1 + rnd() % 64) * 4096;
			if (off + len > g->user_bytes)
				len = g->user_bytes - off;
			assert_int_equal(ftl_trim(a, off, len, now, NULL), FTL_OK);
			assert_int_equal(ftl_trim(b, off, len, now, NULL), FTL_OK);
		}
		done += n;
	}
	struct ftl_stats st;
	ftl_get_stats(b, &st);
	assert_true(st.gc_victims > 0); /* the comparison went through GC */
	assert_true(st.host_write_bytes > 2 * g->user_bytes);
	assert_same(a, b, dir);
	ftl_destroy(a);
	ftl_destroy(b);
}

static char dir[64];

/*
 * Striped reads timed in closed form (map.c, read_stripe) give what timing them page by page
 * gives: every completion time, and the whole saved state with the timing tables. Objects of
 * whole pages are written at random page-aligned places and read back, with small writes that
 * break stripes (and GC that moves them), TRIMs, reads of part of an object, and issue times
 * that leave the LUNs programming (suspends, waits), idle, or reading. Half the objects are
 * packed instead, one after the other as a KV tier's slots lie, each a whole number of pages
 * and 0-3 units (paper-kimi-k3's 31.5 pages): they start and end inside pages, on the drive
 * as in the LBA space, and their reads time the partial pages one by one around a stripe.
 */
static void run_reads(struct ftl_config c, uint64_t ops, const char *dir)
{
	struct ftl *a = mk(&c), *b = mk(&c);
	a->read_per_page = true;
	const struct ftl_geometry *g = ftl_get_geometry(a);
	uint64_t page = c.page_size, pages = g->user_bytes / page, now = 0, nread = 0;
	uint64_t obj[64][2] = {{0}}; /* the last objects written: offset, length */
	uint64_t packed = 0, npacked = 0, packed_stripes = 0; /* the next packed object's offset */
	bool is_packed[64] = {false};
	for (uint64_t i = 0; i < ops; i++) {
		uint64_t r = rnd(), kind = r % 100, np = 4 + (r >> 8) % (3 * g->planes);
		uint64_t off = (r >> 16) % (pages - np - 1) * page, len = np * page;
		now += (r >> 40) % 4 == 0 ? 0 : (r >> 42) % 2000000; /* 0-2 ms, or at once */
		if (kind < 30 && (r >> 52) % 2) { /* packed, the tail of a page beyond */
			len += (r >> 54) % 4 * 4096;
			if (packed + len > g->user_bytes / 2)
				packed = 0;
			off = packed;
			packed += len;
		}
		if (kind < 30) {
			is_packed[i % 64] = (r >> 52) % 2;
			assert_int_equal(ftl_write(a, off, len, 0, now, NULL), FTL_OK);
			assert_int_equal(ftl_write(b, off, len, 0, now, NULL), FTL_OK);
			obj[i % 64][0] = off, obj[i % 64][1] = len;
		} else if (kind < 40) { /* a small write inside a stripe, or a TRIM */
			uint64_t o = off + (r >> 24) % np * page + (r >> 30) % 4 * 4096;
			if (kind < 37) {
				assert_int_equal(ftl_write(a, o, 4096, 1, now, NULL), FTL_OK);
				assert_int_equal(ftl_write(b, o, 4096, 1, now, NULL), FTL_OK);
			} else {
				assert_int_equal(ftl_trim(a, o, 4096, now, NULL), FTL_OK);
				assert_int_equal(ftl_trim(b, o, 4096, now, NULL), FTL_OK);
			}
		} else {
			bool pk = false;
			if (kind < 90 && obj[(r >> 48) % 64][1]) { /* an object written before */
				off = obj[(r >> 48) % 64][0], len = obj[(r >> 48) % 64][1];
				pk = is_packed[(r >> 48) % 64];
			}
			if (kind >= 95) /* a part of an object, maybe not on a page boundary */
				off += (r >> 24) % 8 * 4096, len -= (r >> 28) % 3 * page, pk = false;
			uint64_t da, db, before = b->read_stripes;
			assert_int_equal(ftl_read(a, off, len, now, &da), FTL_OK);
			assert_int_equal(ftl_read(b, off, len, now, &db), FTL_OK);
			assert_int_equal(da, db);
			nread++;
			if (pk && len % page)
				npacked++, packed_stripes += b->read_stripes - before;
		}
		if (i == ops / 2 && b->sp_whole) {
			/* no certificates, as after loading a snapshot: the stripes written before are
			 * compared unit by unit from here on, and must time as before */
			memset(b->sp_whole, 0, b->sp_bytes);
			memset(b->sp_cont, 0, b->sp_bytes);
		}
		if (i % 4096 == 4095) { /* every stripe certificate set is true of the tables */
			char err[256];
			if (ftl_check(b, err, sizeof(err)))
				fail_msg("after %llu operations: %s", (unsigned long long)i + 1, err);
		}
	}
	/*
	 * The closed form timed a good share of the reads (about a quarter with these seeds; the
	 * rest start off a page, run past a superblock's last row, 12 pages here, or find a unit
	 * moved or overwritten or a LUN programming), so the comparison is not vacuous.
	 */
	assert_int_equal(a->read_stripes, 0);
	if (c.multiplane) {
		assert_true(b->read_stripes > nread / 5);
		/* most of those stripes were certified by the bits, not compared unit by unit;
		 * the rest were broken pages, moved by GC or written in parts */
		assert_true(b->read_stripes_cert > b->read_stripes / 2);
		assert_true(b->read_stripes_cert < b->read_stripes);
		/* and so were packed objects that end inside a page, between their partial pages */
		assert_true(npacked > 100);
		assert_true(packed_stripes > npacked / 5);
	} else {
		assert_int_equal(b->read_stripes, 0);
	}
	struct ftl_stats st;
	ftl_get_stats(b, &st);
	assert_true(st.gc_victims > 0);
	assert_true(st.read_suspends > 0);
	assert_same(a, b, dir);
	ftl_destroy(a);
	ftl_destroy(b);
}

static void test_read_stripe_closed_form(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.multiplane = true;
	c.t_suspend_us = 20;
	c.host_mbps = 7000;
	c.t_cmd_us = 15;
	run_reads(c, 40000, dir);
	c.planes_per_lun = 4; /* 16 planes, 4 per channel */
	c.channels = 1;
	c.luns_per_channel = 4;
	c.blocks_per_plane = 32;
	run_reads(c, 40000, dir);
	/* a LUN per plane: a read of fewer pages than planes leaves LUNs out, and goes plane by
	 * plane in read order (read_planes_in_order) instead of over every LUN */
	c.planes_per_lun = 1;
	c.channels = 2;
	c.luns_per_channel = 4;
	c.blocks_per_plane = 64;
	run_reads(c, 40000, dir);
	c.multiplane = false; /* the closed form is off: still the same */
	run_reads(c, 10000, dir);
}

/*
 * Host writes of whole pages a stripe at a time (map.c, write_stripe), whole-page TRIMs
 * (trim_page) and GC's count of a victim page's valid units from a table (gc.c, page_valid:
 * it times the victim's reads) give what the general path and popcount give: every return code
 * and completion time, the tables the snapshot leaves out (p2l_pg, the stripe certificates) and
 * the whole saved state. KV-like objects of whole pages go to trimmed places or over live data
 * (old copies to invalidate, a page at a time), or start inside a page (the general path); with
 * small writes, TRIMs of whole and partial pages, two streams, issue times that leave the
 * write buffer full or empty, GC throughout, and blocks that retire (pe_cycles low, with
 * variation) so that superblocks have bad members to skip, until the drive wears out.
 */
static void run_writes(struct ftl_config c, uint64_t ops, const char *dir)
{
	struct ftl *a = mk(&c), *b = mk(&c);
	a->host_per_unit = true;
	const struct ftl_geometry *g = ftl_get_geometry(a);
	uint64_t page = c.page_size, pages = g->user_bytes / page, now = 0, i, pages_written = 0;
	int rc = FTL_OK;
	for (i = 0; i < ops && rc == FTL_OK; i++) {
		uint64_t r = rnd(), kind = r % 100, np = 1 + (r >> 8) % (3 * g->planes);
		uint64_t off = (r >> 16) % (pages - np) * page, len = np * page, da = 0, db = 0;
		now += (r >> 40) % 4 == 0 ? 0 : (r >> 42) % 4000000; /* at once, or 0-4 ms later */
		int ra, rb;
		if (kind < 40) { /* an object into a trimmed place */
			ra = ftl_trim(a, off, len, now, NULL);
			rb = ftl_trim(b, off, len, now, NULL);
			assert_int_equal(ra, rb);
			if (ra == FTL_OK) {
				ra = ftl_write(a, off, len, (r >> 30) % 2, now, &da);
				rb = ftl_write(b, off, len, (r >> 30) % 2, now, &db);
			}
			pages_written += np;
		} else if (kind < 70) { /* over live data, or starting inside a page */
			if (kind >= 60)
				off += (r >> 24) % 4 * 4096, len -= (r >> 28) % 2 * 4096;
			ra = ftl_write(a, off, len, (r >> 30) % 2, now, &da);
			rb = ftl_write(b, off, len, (r >> 30) % 2, now, &db);
		} else if (kind < 85) { /* a small write */
			uint64_t o = off + (r >> 24) % 4 * 4096, l = kind < 80 ? 4096 : 512;
			ra = ftl_write(a, o, l, 1, now, &da);
			rb = ftl_write(b, o, l, 1, now, &db);
		} else if (kind < 95) { /* a TRIM of whole pages, or of a part of one */
			uint64_t o = kind < 92 ? off : off + 4096, l = kind < 92 ? len : 8192;
			ra = ftl_trim(a, o, l, now, &da);
			rb = ftl_trim(b, o, l, now, &db);
		} else {
			ra = ftl_read(a, off, len, now, &da);
			rb = ftl_read(b, off, len, now, &db);
		}
		assert_int_equal(ra, rb);
		assert_int_equal(da, db);
		rc = ra;
		if (i % 4096 == 4095)
			check_ok(b);
	}
	/* not vacuous: the object pages went a stripe at a time, none in the reference */
	assert_int_equal(a->stripe_pages, 0);
	struct ftl_stats st;
	ftl_get_stats(b, &st);
	assert_true(b->stripe_pages > pages_written); /* objects, and overwrites of whole pages */
	/* the general path the rest: writes inside pages, small ones, superblocks' last pages */
	assert_true(b->stripe_pages * page < st.host_write_bytes / 100 * 95);
	assert_true(st.gc_victims > 0);
	if (c.pe_cycles < 100) { /* worn out, through retirements */
		assert_int_equal(rc, FTL_E_WORN);
		assert_true(st.retired_blocks > 0);
	} else {
		assert_int_equal(rc, FTL_OK);
	}
	assert_memory_equal(a->p2l_pg, b->p2l_pg, a->p2l_pg_bytes);
	assert_memory_equal(a->sp_whole, b->sp_whole, a->sp_bytes);
	assert_memory_equal(a->sp_cont, b->sp_cont, a->sp_bytes);
	assert_same(a, b, dir);
	ftl_destroy(a);
	ftl_destroy(b);
}

static void test_write_stripe(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.gc_unit = FTL_GC_SUPERBLOCK;
	c.multiplane = true;
	c.host_mbps = 7000;
	c.t_cmd_us = 15;
	run_writes(c, 30000, dir);
	c.multiplane = false;
	c.pe_cycles = 30;
	c.pe_variation = 0.3;
	run_writes(c, 1000000, dir);
}

static void test_batch_superblock_separate(void **state)
{
	(void)state;
	run_both(small(), 120000, dir);
}

static void test_batch_block_shared(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.gc_unit = FTL_GC_BLOCK;
	c.gc_stream = FTL_GC_SHARED;
	run_both(c, 120000, dir);
}

static void test_batch_policies_wl(void **state)
{
	(void)state;
	enum ftl_gc_policy pols[] = {FTL_GC_FIFO, FTL_GC_COST_BENEFIT, FTL_GC_DCHOICE};
	for (int i = 0; i < 3; i++) {
		struct ftl_config c = small();
		c.gc_policy = pols[i];
		c.gc_unit = i == 1 ? FTL_GC_BLOCK : FTL_GC_SUPERBLOCK;
		c.wl_threshold = 4; /* static wear leveling moves too */
		c.gc_bg_free_pct = 20; /* and background GC in the think time */
		run_both(c, 60000, dir);
	}
}

/* One unit per page: the run path is off, the batch still matches. */
static void test_batch_unit_is_page(void **state)
{
	(void)state;
	struct ftl_config c = small();
	c.page_size = 4096;
	run_both(c, 60000, dir);
}

/* A bad write in the middle: the batch stops there with its status, like the loop. */
static void test_batch_stops_at_failure(void **state)
{
	(void)state;
	struct ftl_config c = small();
	struct ftl *a = mk(&c), *b = mk(&c);
	const struct ftl_geometry *g = ftl_get_geometry(a);
	struct ftl_wreq w[40];
	for (int i = 0; i < 40; i++)
		w[i] = (struct ftl_wreq){.off = (uint64_t)i * 8192, .len = 4096, .now_ns = 0};
	w[17].off = g->user_bytes; /* past the end */
	w[18].len = 100;           /* not sector-aligned */
	for (int i = 0; i < 17; i++)
		assert_int_equal(ftl_write(a, w[i].off, w[i].len, 0, 0, NULL), FTL_OK);
	size_t nd = 99;
	assert_int_equal(ftl_write_batch(b, w, 40, NULL, &nd), FTL_E_RANGE);
	assert_int_equal(nd, 17);
	assert_false(ftl_is_mapped(b, 17 * 8192, 4096));
	assert_true(ftl_is_mapped(b, 16 * 8192, 4096));
	assert_int_equal(ftl_write_batch(b, w + 18, 1, NULL, &nd), FTL_E_INVAL);
	assert_int_equal(nd, 0);
	assert_int_equal(ftl_write_batch(b, w, 0, NULL, &nd), FTL_OK); /* empty: nothing */
	assert_int_equal(nd, 0);
	struct ftl_wreq first_prev = {.off = 0, .len = 4096, .now_ns = FTL_NOW_PREV};
	assert_int_equal(ftl_write_batch(b, &first_prev, 1, NULL, &nd), FTL_E_INVAL);
	assert_int_equal(nd, 0); /* the first write has no write before it to wait for */
	assert_same(a, b, dir);
	/* the prefetch hint takes anything, changes nothing */
	ftl_prefetch(b, g->user_bytes, 4096);
	ftl_prefetch(b, 0, 0);
	ftl_prefetch(b, 1, 4096);
	ftl_prefetch(b, 0, g->user_bytes);
	assert_same(a, b, dir);
	ftl_destroy(a);
	ftl_destroy(b);
}

/* udiv32 is the divide for every 32-bit dividend: edges and random values, many divisors. */
static void test_udiv32(void **state)
{
	(void)state;
	uint32_t ds[] = {3, 5, 6, 7, 12, 1152, 4608, 294912, 1179648, 641, 0x7fffffff,
	                 0x80000001u, 0xfffffffeu, 0xffffffffu};
	for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
		uint32_t d = ds[i];
		uint64_t c = udiv32_c(d);
		assert_int_equal(udiv32_shift(d), -1);
		uint32_t edge[] = {0, 1, d - 1, d, d + 1, 2 * d - 1, 2 * d, UINT32_MAX,
		                   UINT32_MAX - 1, UINT32_MAX / d * d, UINT32_MAX / d * d - 1};
		for (size_t k = 0; k < sizeof(edge) / sizeof(edge[0]); k++)
			assert_int_equal(udiv32(edge[k], -1, c), edge[k] / d);
		for (int k = 0; k < 200000; k++) {
			uint32_t n = (uint32_t)rnd();
			assert_int_equal(udiv32(n, -1, c), n / d);
		}
	}
	for (int s = 0; s < 32; s++) { /* powers of two are shifts */
		assert_int_equal(udiv32_shift(1u << s), s);
		assert_int_equal(udiv32(0xdeadbeefu, s, 0), 0xdeadbeefu >> s);
	}
	for (int k = 0; k < 200000; k++) { /* random divisors */
		uint32_t d = (uint32_t)rnd() >> (rnd() % 31), n = (uint32_t)rnd();
		if (d < 2)
			continue;
		int sh = udiv32_shift(d);
		assert_int_equal(udiv32(n, sh, sh < 0 ? udiv32_c(d) : 0), n / d);
	}
}

int main(void)
{
	strcpy(dir, "/tmp/fg-batch-XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_udiv32),
		cmocka_unit_test(test_batch_stops_at_failure),
		cmocka_unit_test(test_batch_superblock_separate),
		cmocka_unit_test(test_batch_block_shared),
		cmocka_unit_test(test_batch_policies_wl),
		cmocka_unit_test(test_batch_unit_is_page),
		cmocka_unit_test(test_read_stripe_closed_form),
		cmocka_unit_test(test_write_stripe),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);
	rmdir(dir);
	return rc;
}
