/*
 * test_fdp.c - NVMe Flexible Data Placement in the FTL (ftl.h, docs/fdp.md): exact per-handle
 * counters (HBMW, MBMW, MBE), isolation of each handle's data in its own reclaim units, the
 * events, snapshots and the config's refusals. WAF against the reference simulator is in
 * test_skew.c (test_fdp_skew).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "check.h"

#define TEST_SEED 0x9e3779b97f4a7c15ull
#include "testutil.h"

#define US 4096u

/* 2 channels x 2 planes, 16 KiB pages of 4 KiB units: the frontier stripes and fills pages */
static struct ftl_config base(enum ftl_gc_unit gu, enum ftl_fdp_ruh_type t)
{
	struct ftl_config c;
	ftl_config_default(&c);
	c.channels = 2;
	c.planes_per_lun = 2;
	c.blocks_per_plane = 96;
	c.pages_per_block = 16;
	c.page_size = 4 * US;
	c.unit_size = US;
	c.spare_factor = gu == FTL_GC_SUPERBLOCK ? 0.25 : 0.15;
	c.op_percent = -1;
	c.gc_unit = gu;
	c.gc_reserve = 1;
	c.host_streams = 2;
	c.fdp = true;
	c.fdp_ruh_type = t;
	c.wl_static = false;
	c.pe_cycles = 100000;
	return c;
}

/* Handle of a unit: the first tenth of the drive is hot (handle 0), the rest cold (handle 1). */
static unsigned handle_of(uint64_t lpn, uint64_t user)
{
	return lpn < user / 10 ? 0 : 1;
}

/*
 * Fill, then 6 capacities of 90/10 writes, each zone through its own handle, some of them 2 or
 * 3 units long (runs into the open page), then a flush. Every counter checked exactly.
 */
static void run_counts(enum ftl_gc_unit gu, enum ftl_fdp_ruh_type t)
{
	struct ftl_config c = base(gu, t);
	struct ftl *f = mk(&c);
	uint64_t user = ftl_get_geometry(f)->user_units, hot = user / 10, host[2] = {0, 0};
	for (uint64_t u = 0; u < user; u++) {
		assert_int_equal(ftl_write(f, u * US, US, handle_of(u, user), 0, NULL), FTL_OK);
		host[handle_of(u, user)] += US;
	}
	for (uint64_t i = 0; i < 6 * user; i++) {
		uint64_t r = rnd(), n = 1 + r % 3;
		uint64_t u = r >> 8 & 1 ? (r >> 16) % (hot - 3) : hot + (r >> 16) % (user - hot - 3);
		if (rnd() % 10 == 0) /* a tenth of the writes cold, on handle 1 */
			u = hot + (r >> 16) % (user - hot - 3);
		else
			u = (r >> 16) % (hot - 3);
		unsigned h = handle_of(u, user);
		assert_int_equal(ftl_write(f, u * US, n * US, h, 0, NULL), FTL_OK);
		host[h] += n * US;
	}
	assert_int_equal(ftl_flush(f, 0, NULL), FTL_OK);
	check_ok(f);

	struct ftl_stats st;
	struct ftl_fdp_stats fd;
	ftl_get_stats(f, &st);
	ftl_fdp_stats(f, &fd);
	const struct ftl_geometry *g = ftl_get_geometry(f);
	assert_int_equal(fd.nruh, 2);
	assert_int_equal(fd.persistently, t == FTL_RUHT_PERSISTENTLY);
	assert_int_equal(fd.ru_bytes, (uint64_t)g->units_per_gc_unit * US);
	/* HBMW: what the host wrote through each handle */
	assert_int_equal(fd.ruh[0].host_bytes, host[0]);
	assert_int_equal(fd.ruh[1].host_bytes, host[1]);
	assert_int_equal(fd.hbmw, st.host_write_bytes);
	/* MBMW: every page programmed, the flush left none half full */
	assert_int_equal(fd.mbmw, st.nand_write_bytes);
	/* MBE: every erase, a block's bytes */
	assert_int_equal(fd.mbe, st.erases * c.pages_per_block * c.page_size);
	assert_true(st.gc_prog_bytes > 0 && st.erases > 0);
	/* who programmed what: host frontiers their host units plus padding, the rest GC */
	uint64_t hm = fd.ruh[0].media_bytes + fd.ruh[1].media_bytes;
	if (t == FTL_RUHT_INITIALLY) {
		assert_true(hm >= st.host_prog_bytes);
		assert_true(fd.ctrl_media_bytes >= st.gc_prog_bytes + st.wl_prog_bytes);
		assert_int_equal((hm - st.host_prog_bytes) + (fd.ctrl_media_bytes - st.gc_prog_bytes -
		                                              st.wl_prog_bytes),
		                 st.pad_prog_bytes);
	} else {
		/* nothing is ever programmed outside a handle's reclaim units */
		assert_int_equal(fd.ctrl_media_bytes, 0);
		assert_int_equal(fd.ctrl_erased_bytes, 0);
		assert_int_equal(hm, st.nand_write_bytes);
	}

	/* isolation: where every unit lives */
	uint64_t in_gc = 0;
	for (uint64_t u = 0; u < user; u++) {
		int o = ftl_unit_owner(f, u * US, NULL);
		if (t == FTL_RUHT_PERSISTENTLY) {
			if (o != (int)handle_of(u, user))
				fail_msg("unit %llu of handle %u lies in an RU of %d",
				         (unsigned long long)u, handle_of(u, user), o);
		} else {
			assert_true(o == (int)handle_of(u, user) || o == 2);
			in_gc += o == 2;
		}
	}
	if (t == FTL_RUHT_INITIALLY)
		assert_true(in_gc > 0); /* GC copies mixed on the shared GC frontier */
	assert_int_equal(ftl_unit_owner(f, user * US, NULL), -1);
	assert_int_equal(fd.events, 0);
	ftl_destroy(f);
}

static void test_counts_superblock_initially(void **s)
{
	(void)s;
	run_counts(FTL_GC_SUPERBLOCK, FTL_RUHT_INITIALLY);
}
static void test_counts_superblock_persistently(void **s)
{
	(void)s;
	run_counts(FTL_GC_SUPERBLOCK, FTL_RUHT_PERSISTENTLY);
}
static void test_counts_block_initially(void **s)
{
	(void)s;
	run_counts(FTL_GC_BLOCK, FTL_RUHT_INITIALLY);
}
static void test_counts_block_persistently(void **s)
{
	(void)s;
	run_counts(FTL_GC_BLOCK, FTL_RUHT_PERSISTENTLY);
}

/* An invalid placement handle goes to handle 0 and is logged; RUH update closes a partial RU. */
static void test_events(void **s)
{
	(void)s;
	struct ftl_config c = base(FTL_GC_SUPERBLOCK, FTL_RUHT_PERSISTENTLY);
	struct ftl *f = mk(&c);
	struct ftl_fdp_stats fd;
	struct ftl_fdp_event ev[FTL_FDP_EVENTS];

	assert_int_equal(ftl_write(f, 0, 2 * US, 5, 100, NULL), FTL_OK);
	ftl_fdp_stats(f, &fd);
	assert_int_equal(fd.events, 1);
	assert_int_equal(fd.ruh[0].host_bytes, 2 * US);
	assert_int_equal(ftl_unit_owner(f, 0, NULL), 0);
	assert_int_equal(ftl_fdp_events(f, ev, FTL_FDP_EVENTS), 1);
	assert_int_equal(ev[0].type, FTL_FDP_EV_INVALID_PID);
	assert_int_equal(ev[0].ruh, 5);
	assert_int_equal(ev[0].time_ns, 100);
	assert_string_equal(ftl_fdp_event_name(ev[0].type), "invalid-placement-id");

	/* a handle with no open RU: nothing to close, nothing logged; out of range refused */
	assert_int_equal(ftl_fdp_ruh_update(f, 1, 200, NULL), FTL_OK);
	assert_int_equal(ftl_fdp_ruh_update(f, 2, 200, NULL), FTL_E_INVAL);
	ftl_fdp_stats(f, &fd);
	assert_int_equal(fd.events, 1);

	/* five units on handle 1 (one page and a bit), then the update */
	uint32_t ru_a, ru_b;
	assert_int_equal(ftl_write(f, 100 * US, 5 * US, 1, 300, NULL), FTL_OK);
	assert_int_equal(ftl_unit_owner(f, 100 * US, &ru_a), 1);
	ftl_fdp_stats(f, &fd);
	assert_int_equal(fd.ruh[1].ru, ru_a);
	uint64_t avail = fd.ruh[1].ru_avail_bytes, ru = fd.ru_bytes;
	assert_int_equal(avail, ru - 5 * US);
	struct ftl_stats a, b;
	ftl_get_stats(f, &a);
	assert_int_equal(ftl_fdp_ruh_update(f, 1, 400, NULL), FTL_OK);
	ftl_get_stats(f, &b);
	/* the half page was padded (3 units) and the RU closed, not fully written */
	assert_int_equal(b.pad_prog_bytes - a.pad_prog_bytes, 3 * US);
	ftl_fdp_stats(f, &fd);
	assert_int_equal(fd.events, 2);
	assert_int_equal(fd.ruh[1].ru, UINT32_MAX);
	assert_int_equal(fd.ruh[1].ru_avail_bytes, ru);
	assert_int_equal(ftl_fdp_events(f, ev, FTL_FDP_EVENTS), 2);
	assert_int_equal(ev[1].type, FTL_FDP_EV_RU_NOT_FULLY_WRITTEN);
	assert_int_equal(ev[1].ruh, 1);
	assert_int_equal(ev[1].ru, ru_a);
	/* the next write opens another RU; the data read back where it was */
	assert_int_equal(ftl_write(f, 200 * US, US, 1, 500, NULL), FTL_OK);
	assert_int_equal(ftl_unit_owner(f, 200 * US, &ru_b), 1);
	assert_true(ru_b != ru_a);
	assert_int_equal(ftl_unit_owner(f, 104 * US, &ru_b), 1);
	assert_int_equal(ru_b, ru_a);
	assert_true(ftl_is_mapped(f, 100 * US, 5 * US));
	check_ok(f);
	/* the partial RU is reclaimed like any other: overwrite the drive a few times */
	uint64_t user = ftl_get_geometry(f)->user_units;
	for (uint64_t i = 0; i < 4 * user; i++)
		assert_int_equal(ftl_write(f, (rnd() % user) * US, US, rnd() & 1, 600, NULL), FTL_OK);
	check_ok(f);
	assert_int_not_equal(ftl_unit_owner(f, 104 * US, &ru_b), -1);
	/* the newest events come back, oldest first: ask for one */
	assert_int_equal(ftl_fdp_events(f, ev, 1), 1);
	assert_int_equal(ev[0].type, FTL_FDP_EV_RU_NOT_FULLY_WRITTEN);
	ftl_destroy(f);
}

/* Retirements are "media reallocated", one per retiring erase, the capacity lost in sectors;
 * the ring keeps the newest 64. */
static void test_media_reallocated(void **s)
{
	(void)s;
	struct ftl_config c = base(FTL_GC_BLOCK, FTL_RUHT_INITIALLY);
	c.pe_cycles = 40;
	c.pe_variation = 0.3;
	c.spare_factor = 0.3;
	struct ftl *f = mk(&c);
	uint64_t user = ftl_get_geometry(f)->user_units;
	int rc = FTL_OK;
	for (uint64_t i = 0; i < 200 * user && rc == FTL_OK; i++)
		rc = ftl_write(f, (rnd() % user) * US, US, rnd() & 1, 0, NULL);
	assert_int_equal(rc, FTL_E_WORN);
	struct ftl_stats st;
	struct ftl_fdp_stats fd;
	struct ftl_fdp_event ev[FTL_FDP_EVENTS];
	ftl_get_stats(f, &st);
	ftl_fdp_stats(f, &fd);
	assert_true(st.retired_blocks > FTL_FDP_EVENTS);
	assert_int_equal(fd.events, st.retired_blocks); /* block mode: an RU is one block */
	assert_int_equal(ftl_fdp_events(f, ev, FTL_FDP_EVENTS), FTL_FDP_EVENTS);
	for (int i = 0; i < FTL_FDP_EVENTS; i++) {
		assert_int_equal(ev[i].type, FTL_FDP_EV_MEDIA_REALLOCATED);
		assert_int_equal(ev[i].nlbam, (uint64_t)c.pages_per_block * c.page_size / FTL_SECTOR);
		assert_true(ev[i].ru != UINT32_MAX);
		if (i)
			assert_true(ev[i].time_ns >= ev[i - 1].time_ns);
	}
	check_ok(f);
	ftl_destroy(f);
}

static char *json_of(struct ftl *f)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(ftl_json(f, 1e12, m), 0);
	fclose(m);
	return buf;
}

/* Counters and events survive a snapshot, byte for byte. */
static void test_snapshot(void **s)
{
	(void)s;
	struct ftl_config c = base(FTL_GC_SUPERBLOCK, FTL_RUHT_PERSISTENTLY);
	struct ftl *f = mk(&c);
	uint64_t user = ftl_get_geometry(f)->user_units;
	for (uint64_t i = 0; i < 3 * user; i++)
		assert_int_equal(ftl_write(f, (rnd() % user) * US, US, rnd() & 1, 0, NULL), FTL_OK);
	assert_int_equal(ftl_write(f, 0, US, 7, 0, NULL), FTL_OK);
	assert_int_equal(ftl_fdp_ruh_update(f, 0, 0, NULL), FTL_OK);
	char path[] = "/tmp/test_fdp_XXXXXX", err[256];
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	if (ftl_snapshot_save(f, path, err, sizeof(err)))
		fail_msg("save: %s", err);
	struct ftl *g = ftl_snapshot_load(path, err, sizeof(err));
	unlink(path);
	if (!g)
		fail_msg("load: %s", err);
	struct ftl_fdp_stats a, b;
	struct ftl_fdp_event ea[FTL_FDP_EVENTS], eb[FTL_FDP_EVENTS];
	ftl_fdp_stats(f, &a);
	ftl_fdp_stats(g, &b);
	assert_true(a.events >= 2 && a.mbe > 0);
	assert_memory_equal(&a, &b, sizeof(a));
	size_t n = ftl_fdp_events(f, ea, FTL_FDP_EVENTS);
	assert_int_equal(ftl_fdp_events(g, eb, FTL_FDP_EVENTS), n);
	assert_memory_equal(ea, eb, n * sizeof(ea[0]));
	for (uint64_t u = 0; u < user; u += 7)
		assert_int_equal(ftl_unit_owner(f, u * US, NULL), ftl_unit_owner(g, u * US, NULL));
	char *ja = json_of(f), *jb = json_of(g);
	assert_string_equal(ja, jb);
	assert_non_null(strstr(ja, "\"fdp\""));
	assert_non_null(strstr(ja, "\"persistently-isolated\""));
	free(ja);
	free(jb);
	check_ok(g);
	ftl_destroy(f);
	ftl_destroy(g);
}

/* What the config refuses, naming the key; fdp=off prints no fdp object. */
static void test_config(void **s)
{
	(void)s;
	struct ftl_config c = base(FTL_GC_SUPERBLOCK, FTL_RUHT_INITIALLY);
	char err[256];
	c.gc_stream = FTL_GC_SHARED;
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_E_INVAL);
	assert_non_null(strstr(err, "gc_stream=shared: fdp=on needs gc_stream=separate"));
	assert_int_equal(ftl_config_set(&c, "fdp_ruh_type", "sometimes", err, sizeof(err)),
	                 FTL_E_INVAL);
	assert_non_null(strstr(err, "fdp_ruh_type=sometimes"));
	assert_int_equal(ftl_config_set(&c, "fdp_ruh_type", "persistently", err, sizeof(err)), 0);
	assert_int_equal(c.fdp_ruh_type, FTL_RUHT_PERSISTENTLY);
	assert_int_equal(ftl_config_set(&c, "host_streams", "65", err, sizeof(err)), FTL_E_INVAL);
	/* persistently isolated handles hold a GC frontier each: the spare must carry them */
	c = base(FTL_GC_SUPERBLOCK, FTL_RUHT_PERSISTENTLY);
	c.spare_factor = 0.05;
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_E_INVAL);
	assert_non_null(strstr(err, "spare_factor=0.05"));
	c.fdp = false;
	c.spare_factor = 0.25;
	struct ftl *f = mk(&c);
	char *j = json_of(f);
	assert_null(strstr(j, "\"fdp\""));
	free(j);
	ftl_destroy(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_counts_superblock_initially),
	        cmocka_unit_test(test_counts_superblock_persistently),
	        cmocka_unit_test(test_counts_block_initially),
	        cmocka_unit_test(test_counts_block_persistently),
	        cmocka_unit_test(test_events),
	        cmocka_unit_test(test_media_reallocated),
	        cmocka_unit_test(test_snapshot),
	        cmocka_unit_test(test_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
