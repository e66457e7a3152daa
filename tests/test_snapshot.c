/*
 * test_snapshot.c - save/load round trips, and every way a snapshot can be bad.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "check.h"
#include "ftl_int.h" /* ftl_crc32c: a version-4 file made from a version-5 one */

#define TEST_SEED 42
#include "testutil.h"

static char dir[256], path[300];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/fg-snap-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/ftl.snap", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rm_tree(dir);
}


static struct ftl_config busy_config(enum ftl_gc_policy pol, enum ftl_gc_unit unit)
{
	struct ftl_config c;
	ftl_config_default(&c);
	c.channels = 2;
	c.luns_per_channel = 2;
	c.blocks_per_plane = 64;
	c.pages_per_block = 16;
	c.page_size = 8192;
	c.spare_factor = 0.25;
	c.op_percent = -1;
	c.gc_policy = pol;
	c.gc_unit = unit;
	c.pe_variation = 0.1;
	return c;
}

/* 5 drive writes of single units, a tenth of them TRIMs */
static struct ftl *busy_work(struct ftl *f)
{
	uint64_t n = ftl_get_geometry(f)->user_units, now = 0;
	for (uint64_t i = 0; i < 5 * n; i++) {
		uint64_t r = rnd();
		if (r % 10 == 0)
			assert_int_equal(ftl_trim(f, (r >> 8) % n * 4096, 4096, now, &now), FTL_OK);
		else
			assert_int_equal(ftl_write(f, (r >> 8) % n * 4096, 4096, (unsigned)r % 2, now, &now), FTL_OK);
	}
	return f;
}

static struct ftl *busy_ftl(enum ftl_gc_policy pol, enum ftl_gc_unit unit)
{
	struct ftl_config c = busy_config(pol, unit);
	return busy_work(mk(&c));
}

static void same_stats(struct ftl *a, struct ftl *b)
{
	struct ftl_stats x, y;
	ftl_get_stats(a, &x);
	ftl_get_stats(b, &y);
	assert_memory_equal(&x, &y, sizeof(x));
}

/* Save, load, and both copies then behave identically. */
static void test_round_trip(void **state)
{
	(void)state;
	enum ftl_gc_policy pols[] = {FTL_GC_GREEDY, FTL_GC_FIFO, FTL_GC_DCHOICE};
	for (int k = 0; k < 3; k++) {
		char err[256];
		struct ftl *a = busy_ftl(pols[k], k == 1 ? FTL_GC_BLOCK : FTL_GC_SUPERBLOCK);
		/* objects of whole pages too: a keeps their lpns per page (p2l_pg), the snapshot
		 * per unit, and GC below moves them on both */
		uint64_t units = ftl_get_geometry(a)->user_units, t = 1ull << 39;
		for (uint64_t i = 0; i < units / 8; i++)
			assert_int_equal(ftl_write(a, rnd() % (units / 4) * 16384, 16384, 0, t, &t), FTL_OK);
		assert_int_equal(ftl_check(a, err, sizeof(err)), 0);
		assert_int_equal(ftl_snapshot_save(a, path, err, sizeof(err)), FTL_OK);
		struct ftl *b = ftl_snapshot_load(path, err, sizeof(err));
		if (!b)
			fail_msg("load: %s", err);
		same_stats(a, b);
		uint64_t n = ftl_get_geometry(a)->user_units;
		for (uint64_t i = 0; i < n; i++)
			assert_int_equal(ftl_is_mapped(a, i * 4096, 4096), ftl_is_mapped(b, i * 4096, 4096));
		uint64_t s = rs;
		for (int pass = 0; pass < 2; pass++) {
			rs = s;
			struct ftl *f = pass ? b : a;
			uint64_t now = 1ull << 40;
			for (uint64_t i = 0; i < 3 * n; i++)
				assert_int_equal(ftl_write(f, rnd() % n * 4096, 4096, 0, now, &now), FTL_OK);
		}
		same_stats(a, b);
		assert_int_equal(ftl_check(a, err, sizeof(err)), 0);
		assert_int_equal(ftl_check(b, err, sizeof(err)), 0);
		ftl_destroy(a);
		ftl_destroy(b);
	}
}

static void write_file(const char *p, const void *buf, size_t n)
{
	FILE *f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n, f), n);
	fclose(f);
}

static char *read_file(const char *p, size_t *n)
{
	FILE *f = fopen(p, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	rewind(f);
	char *b = malloc(*n);
	assert_int_equal(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

static void expect_refused(const char *p, const char *msg)
{
	char err[256] = "";
	struct ftl *f = ftl_snapshot_load(p, err, sizeof(err));
	assert_null(f);
	if (!strstr(err, msg))
		fail_msg("expected '%s', got '%s'", msg, err);
}

static void test_corruption(void **state)
{
	(void)state;
	char err[256], bad[320];
	struct ftl *a = busy_ftl(FTL_GC_GREEDY, FTL_GC_SUPERBLOCK);
	assert_int_equal(ftl_snapshot_save(a, path, err, sizeof(err)), FTL_OK);
	size_t n;
	char *good = read_file(path, &n);
	snprintf(bad, sizeof(bad), "%s/bad.snap", dir);

	expect_refused("/nonexistent/x.snap", "cannot open");
	write_file(bad, "", 0);
	expect_refused(bad, "too short");
	write_file(bad, "hello world, this is not a snapshot at all, just some plain text..", 66);
	expect_refused(bad, "bad magic");
	write_file(bad, good, n - 1000); /* truncated */
	expect_refused(bad, "truncated");
	char *c = malloc(n + 8);
	memcpy(c, good, n);
	memcpy(c + n, "trailing", 8);
	write_file(bad, c, n + 8);
	expect_refused(bad, "truncated or extended");
	memcpy(c, good, n);
	c[n / 2] ^= 0x40; /* a flipped bit in the body */
	write_file(bad, c, n);
	expect_refused(bad, "body checksum mismatch");
	memcpy(c, good, n);
	c[12] ^= 1; /* in the header */
	write_file(bad, c, n);
	expect_refused(bad, "header checksum mismatch");
	/* a random bit anywhere, many times: always refused, never a crash */
	for (int i = 0; i < 200; i++) {
		memcpy(c, good, n);
		c[rnd() % n] ^= (char)(1u << (rnd() % 8));
		write_file(bad, c, n);
		assert_null(ftl_snapshot_load(bad, err, sizeof(err)));
	}
	free(c);

	/* a failed save leaves the existing file untouched and no temp file behind */
	char sub[320];
	snprintf(sub, sizeof(sub), "%s/nodir/x.snap", dir);
	assert_int_equal(ftl_snapshot_save(a, sub, err, sizeof(err)), FTL_E_IO);
	assert_non_null(strstr(err, "cannot create"));
	char asdir[320];
	snprintf(asdir, sizeof(asdir), "%s/isdir", dir);
	assert_int_equal(mkdir(asdir, 0700), 0);
	assert_int_equal(ftl_snapshot_save(a, asdir, err, sizeof(err)), FTL_E_IO);
	assert_non_null(strstr(err, "a directory, which would be replaced"));
	struct stat sb;
	assert_int_equal(stat(asdir, &sb), 0);
	assert_true(S_ISDIR(sb.st_mode));
	size_t n2;
	char *again = read_file(path, &n2);
	assert_int_equal(n, n2);
	assert_memory_equal(good, again, n);
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -c tmp", dir);
	FILE *p = popen(cmd, "r");
	int count = -1;
	assert_int_equal(fscanf(p, "%d", &count), 1);
	pclose(p);
	assert_int_equal(count, 0);
	free(again);
	free(good);
	ftl_destroy(a);
}

static void expect_verify(struct ftl *f, const char *data, int rc, const char *msg)
{
	char err[512] = "";
	assert_int_equal(ftl_checkpoint_verify(f, data, err, sizeof(err)), rc);
	if (msg && !strstr(err, msg))
		fail_msg("expected '%s', got '%s'", msg, err);
}

static void set_mtime(const char *p, time_t sec, long nsec)
{
	struct timespec t[2] = {{sec, nsec}, {sec, nsec}};
	assert_int_equal(utimensat(AT_FDCWD, p, t, 0), 0);
}

/* Checkpoints: the tag survives the round trip, the number goes up by one per checkpoint, and a
 * data file that cannot hold the saved state (missing, resized, older) is refused by name. */
static void test_checkpoint(void **state)
{
	(void)state;
	char err[512], data[320];
	struct ftl *a = busy_ftl(FTL_GC_GREEDY, FTL_GC_SUPERBLOCK), *b;
	struct ftl_stats sa, sb;

	snprintf(data, sizeof(data), "%s/drive.img", dir);
	write_file(data, "0123456789abcdef", 16);
	set_mtime(data, 1700000000, 500);
	assert_string_equal(ftl_get_tag(a), "");
	assert_int_equal(ftl_checkpoint_seq(a), 0);
	/* no data file: the state alone */
	assert_int_equal(ftl_checkpoint(a, path, NULL, err, sizeof(err)), FTL_OK);
	assert_string_equal(ftl_get_tag(a), "checkpoint seq=1");
	/* the data file is gone: nothing saved, the tag unchanged */
	unlink(data);
	assert_int_equal(ftl_checkpoint(a, path, data, err, sizeof(err)), FTL_E_IO);
	assert_non_null(strstr(err, "No such file"));
	assert_string_equal(ftl_get_tag(a), "checkpoint seq=1");
	write_file(data, "0123456789abcdef", 16);
	set_mtime(data, 1700000000, 500);
	assert_int_equal(ftl_checkpoint(a, path, data, err, sizeof(err)), FTL_OK);
	assert_string_equal(ftl_get_tag(a), "checkpoint seq=2 size=16 mtime=1700000000.000000500");
	b = ftl_snapshot_load(path, err, sizeof(err));
	if (!b)
		fail_msg("load: %s", err);
	assert_string_equal(ftl_get_tag(b), ftl_get_tag(a));
	assert_int_equal(ftl_checkpoint_seq(b), 2);
	ftl_get_stats(a, &sa);
	ftl_get_stats(b, &sb);
	assert_int_equal(sa.erases, sb.erases);
	assert_true(sa.erases > 0);
	expect_verify(b, data, FTL_OK, NULL);
	expect_verify(b, NULL, FTL_OK, NULL); /* no data file to compare with */
	set_mtime(data, 1700000001, 0);       /* written after the checkpoint: fine */
	expect_verify(b, data, FTL_OK, NULL);
	set_mtime(data, 1700000000, 499); /* a nanosecond older: restored from an older copy */
	expect_verify(b, data, FTL_E_INVAL, "the state is newer than the data");
	set_mtime(data, 1700000000, 500);
	expect_verify(b, data, FTL_OK, NULL);
	write_file(data, "0123456789abcdef0", 17);
	expect_verify(b, data, FTL_E_INVAL, "17 bytes, but the saved FTL state (checkpoint 2) was taken with 16");
	unlink(data);
	expect_verify(b, data, FTL_E_IO, "No such file or directory: the saved FTL state (checkpoint 2)");
	/* the next checkpoint continues the numbering */
	assert_int_equal(ftl_checkpoint(b, path, NULL, err, sizeof(err)), FTL_OK);
	assert_int_equal(ftl_checkpoint_seq(b), 3);
	/* a tag is at most FTL_TAG_MAX - 1 bytes */
	char big[FTL_TAG_MAX + 1];
	memset(big, 'x', sizeof(big) - 1);
	big[FTL_TAG_MAX] = 0;
	assert_int_equal(ftl_set_tag(b, big), FTL_E_INVAL);
	big[FTL_TAG_MAX - 1] = 0;
	assert_int_equal(ftl_set_tag(b, big), FTL_OK);
	assert_int_equal(ftl_checkpoint_seq(b), 0);
	ftl_destroy(a);
	ftl_destroy(b);
}

/* a snapshot's header (hw/ftl/snapshot.c), to edit a saved file and make it whole again */
struct snap_hdr {
	char magic[8];
	uint32_t version, sizes[4], pad;
	uint64_t body_len;
	uint32_t body_crc, hdr_crc;
};

/* a busy drive (*a) saved to path, its file read back (*n bytes) with its header (*h, version 5) */
static char *save_busy(struct ftl **a, struct snap_hdr *h, size_t *n)
{
	char err[256];
	*a = busy_ftl(FTL_GC_GREEDY, FTL_GC_SUPERBLOCK);
	assert_int_equal(ftl_snapshot_save(*a, path, err, sizeof(err)), FTL_OK);
	char *buf = read_file(path, n);
	assert_true(*n > sizeof(*h));
	memcpy(h, buf, sizeof(*h));
	assert_int_equal(h->version, 5);
	return buf;
}

/* h's checksums redone over buf's body, h written back into buf */
static void redo_checksums(char *buf, struct snap_hdr *h)
{
	h->body_crc = ftl_crc32c(0, buf + sizeof(*h), h->body_len);
	h->hdr_crc = ftl_crc32c(0, h, offsetof(struct snap_hdr, hdr_crc));
	memcpy(buf, h, sizeof(*h));
}

/*
 * A version-4 snapshot (before wear attribution): version 5's file with its last three sections
 * (the attribution bytes, counters and write class) cut off, the header's version, length and
 * checksums redone. It loads; every unit programmed since its block's erase counts as class 0's,
 * the past is charged to class 0, and the sums keep adding up as the drive goes on.
 */
static void test_v4_attribution(void **state)
{
	(void)state;
	char err[256], old[320];
	struct ftl *a;
	struct snap_hdr h;
	size_t n;
	char *buf = save_busy(&a, &h, &n);
	uint64_t cut = 3 * sizeof(uint64_t) + ftl_get_geometry(a)->phys_units +
	               sizeof(struct ftl_attribution) + 1;
	assert_true(h.body_len > cut && sizeof(h) + h.body_len == n);
	h.version = 4;
	h.body_len -= cut;
	redo_checksums(buf, &h);
	snprintf(old, sizeof(old), "%s/v4.snap", dir);
	write_file(old, buf, sizeof(h) + h.body_len);
	free(buf);
	struct ftl *b = ftl_snapshot_load(old, err, sizeof(err));
	if (!b)
		fail_msg("v4 snapshot refused: %s", err);
	struct ftl_stats st;
	struct ftl_attribution at;
	for (int round = 0; round < 2; round++) {
		check_attribution_sums(b);
		ftl_get_stats(b, &st);
		ftl_get_attribution(b, &at);
		if (round)
			break;
		assert_int_equal(at.prog[0][FTL_ATTR_HOST], st.host_prog_bytes); /* the past: class 0 */
		/* the drive goes on, now with class 2 data, through more GC */
		uint64_t u = ftl_get_geometry(b)->user_units;
		assert_int_equal(ftl_set_class(b, 2), FTL_OK);
		for (uint64_t i = 0; i < 2 * u; i++)
			assert_int_equal(ftl_write(b, rnd() % u * 4096, 4096, 0, 0, NULL), FTL_OK);
		check_ok(b);
	}
	assert_true(at.prog[2][FTL_ATTR_HOST] > 0 && at.erased[0][FTL_ATTR_OVERWRITTEN] > 0);
	ftl_destroy(b);
	ftl_destroy(a);
}

/*
 * An attribution byte naming a class the drive does not have (7), in a file whose checksums are
 * right: the erase would count it outside its tables, so the load refuses it, naming the section.
 * A byte with a class it has (4, moved) loads.
 */
static void test_bad_attribution_byte(void **state)
{
	(void)state;
	char err[256], bad[320];
	struct ftl *a;
	struct snap_hdr h;
	size_t n;
	char *buf = save_busy(&a, &h, &n);
	/* the body ends with [len][ucls][len][attribution][len][write class] */
	uint64_t phys = ftl_get_geometry(a)->phys_units;
	size_t at = n - (1 + sizeof(uint64_t) + sizeof(struct ftl_attribution) + sizeof(uint64_t) + phys);
	uint64_t len;
	memcpy(&len, buf + at - sizeof(len), sizeof(len));
	assert_int_equal(len, phys);
	snprintf(bad, sizeof(bad), "%s/badcls.snap", dir);
	const uint8_t vals[2] = {0x07, 0x44}; /* class 7 (refused); class 4, moved (loads) */
	for (int k = 0; k < 2; k++) {
		buf[at + phys / 2] = (char)vals[k];
		redo_checksums(buf, &h);
		write_file(bad, buf, n);
		struct ftl *b = ftl_snapshot_load(bad, err, sizeof(err));
		if (k == 0) {
			assert_null(b);
			if (!strstr(err, "wear attribution"))
				fail_msg("refused, but not naming the section: %s", err);
		} else {
			if (!b && strstr(err, "wear attribution"))
				fail_msg("a valid attribution byte refused: %s", err);
			ftl_destroy(b); /* (it may fail ftl_check if that unit is valid: not this test's) */
		}
	}
	free(buf);
	ftl_destroy(a);
}

/* resident pages of a mapping (mincore) */
static size_t resident(const void *p, size_t bytes)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE), n = (bytes + pg - 1) / pg, k = 0;
	unsigned char *v = malloc(n);
	assert_non_null(v);
	assert_int_equal(mincore((void *)p, bytes, v), 0);
	for (size_t i = 0; i < n; i++)
		k += v[i] & 1;
	free(v);
	return k;
}

/* The same work, whole pages too, then the snapshot's bytes */
static char *work_and_save(struct ftl *f, const char *p, size_t *n)
{
	char err[256];
	busy_work(f);
	uint64_t units = ftl_get_geometry(f)->user_units, t = 1ull << 39;
	for (uint64_t i = 0; i < units / 8; i++)
		assert_int_equal(ftl_write(f, rnd() % (units / 4) * 16384, 16384, 0, t, &t), FTL_OK);
	assert_int_equal(ftl_check(f, err, sizeof(err)), 0);
	assert_int_equal(ftl_snapshot_save(f, p, err, sizeof(err)), FTL_OK);
	return read_file(p, n);
}

/*
 * ftl_keep_tables (sweep --run-batch): a drive made on the tables a busy drive of the same
 * geometry left takes them (its L2P is resident before its first write) and then behaves as a
 * new drive, byte for byte: the same snapshot after the same work, on every big table. A drive
 * of another geometry gets new tables.
 */
static void test_kept_tables(void **state)
{
	(void)state;
	char p2[320];
	snprintf(p2, sizeof(p2), "%s/fresh.snap", dir);
	struct ftl_config c = busy_config(FTL_GC_GREEDY, FTL_GC_SUPERBLOCK);
	ftl_keep_tables(true);
	struct ftl *a = busy_ftl(FTL_GC_GREEDY, FTL_GC_SUPERBLOCK);
	assert_true(resident(a->l2p, a->l2p_bytes) > 0 && resident(a->p2l, a->p2l_bytes) > 0);
	ftl_destroy(a);
	struct ftl *b = mk(&c);
	assert_true(resident(b->l2p, b->l2p_bytes) > 0); /* A's, zeroed */
	uint64_t s = rs;
	size_t nb, nc;
	char *sb = work_and_save(b, path, &nb);
	ftl_keep_tables(false);
	struct ftl *fresh = mk(&c);
	assert_int_equal(resident(fresh->l2p, fresh->l2p_bytes), 0);
	rs = s;
	char *sc = work_and_save(fresh, p2, &nc);
	assert_int_equal(nb, nc);
	assert_memory_equal(sb, sc, nb);
	same_stats(b, fresh);
	ftl_destroy(fresh);
	/* another geometry: B's tables are let go, and the new drive's are new */
	ftl_keep_tables(true);
	ftl_destroy(b);
	c.blocks_per_plane = 32;
	struct ftl *d = mk(&c);
	assert_int_equal(resident(d->l2p, d->l2p_bytes), 0);
	assert_int_equal(resident(d->p2l, d->p2l_bytes), 0);
	ftl_destroy(d);
	ftl_keep_tables(false);
	free(sb);
	free(sc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corruption, setup, teardown),
		cmocka_unit_test_setup_teardown(test_checkpoint, setup, teardown),
		cmocka_unit_test_setup_teardown(test_v4_attribution, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_attribution_byte, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kept_tables, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
