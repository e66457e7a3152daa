/*
 * test_aio.c - the libaio/O_DIRECT replay engine (femu-gandalf/replay/aio.c) on regular files.
 *
 * Files live in a mkdtemp() directory under /tmp. When /tmp does not support O_DIRECT (tmpfs),
 * every test skips with a message. Content checks compare the file, read back with normal I/O,
 * against a model that applies the trace's writes in order with aio_target_pattern().
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "aiotarget.h"

#define MIB (1024ull * 1024)

static char dir[64];
static int nfile;

static uint64_t rs = 88172645463325252ull;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A new zero-filled (sparse) file of SIZE bytes; skips the test if O_DIRECT does not work here. */
static char *mkfile(uint64_t size)
{
	char *p = malloc(128);
	assert_non_null(p);
	snprintf(p, 128, "%s/f%d", dir, nfile++);
	int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	close(fd);
	fd = open(p, O_RDWR | O_DIRECT);
	if (fd < 0 && errno == EINVAL) {
		unlink(p);
		free(p);
		print_message("skipped: %s does not support O_DIRECT (tmpfs?)\n", dir);
		skip();
	}
	assert_true(fd >= 0);
	close(fd);
	return p;
}

static void rmfile(char *p)
{
	unlink(p);
	free(p);
}

static uint8_t *slurp(const char *p, uint64_t size)
{
	uint8_t *b = malloc(size);
	assert_non_null(b);
	int fd = open(p, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, b, size, 0), (ssize_t)size);
	close(fd);
	return b;
}

static struct aio_target *topen(const char *p, unsigned depth)
{
	char err[512];
	struct aio_target_opts o = {.iodepth = depth};
	struct aio_target *t = aio_target_open(p, &o, err, sizeof(err));
	if (!t)
		fail_msg("aio_target_open(%s): %s", p, err);
	return t;
}

static void sub(struct aio_target *t, char op, uint64_t lba, uint64_t bytes)
{
	char err[512];
	struct blk_io io = {.t_ns = 0, .op = op, .lba = lba, .bytes = bytes};
	if (aio_target_submit(t, &io, err, sizeof(err)))
		fail_msg("submit %c %" PRIu64 " %" PRIu64 ": %s", op, lba, bytes, err);
}

static void drain(struct aio_target *t)
{
	char err[512];
	if (aio_target_drain(t, err, sizeof(err)))
		fail_msg("drain: %s", err);
}

/* Replay IOS (N of them) onto P at DEPTH; apply them to MODEL (SIZE bytes) if non-NULL. */
static void replay(const char *p, unsigned depth, const struct blk_io *ios, size_t n,
		   uint8_t *model, uint64_t size)
{
	struct aio_target *t = topen(p, depth);
	for (size_t i = 0; i < n; i++) {
		sub(t, ios[i].op, ios[i].lba, ios[i].bytes);
		if (!model)
			continue;
		uint64_t off = ios[i].lba * 512;
		assert_true(off + ios[i].bytes <= size || ios[i].op == 'F');
		if (ios[i].op == 'W')
			aio_target_pattern(model + off, ios[i].lba, ios[i].bytes, i + 1);
		else if (ios[i].op == 'D')
			memset(model + off, 0, ios[i].bytes);
	}
	drain(t);
	aio_target_close(t);
}

static void test_pattern(void **state)
{
	uint64_t a[3 * 64], b[3 * 64];
	aio_target_pattern(a, 100, sizeof(a), 7);
	aio_target_pattern(b, 100, sizeof(b), 7);
	assert_memory_equal(a, b, sizeof(a));
	for (int s = 0; s < 3; s++) {
		assert_int_equal(a[s * 64], 100 + s);
		assert_int_equal(a[s * 64 + 1], 7);
	}
	assert_memory_not_equal(&a[2], &a[64 + 2], 62 * 8); /* sectors differ */
	aio_target_pattern(b, 100, sizeof(b), 8);
	assert_memory_not_equal(&a[2], &b[2], 62 * 8); /* so do I/O numbers */
}

static void test_write_readback(void **state)
{
	const uint64_t size = 1 * MIB;
	char *p = mkfile(size);
	struct blk_io ios[] = {
		{.op = 'W', .lba = 0, .bytes = 4096},
		{.op = 'W', .lba = 8, .bytes = 65536},
		{.op = 'R', .lba = 0, .bytes = 8192},
		{.op = 'W', .lba = 16, .bytes = 4096},   /* overwrites part of I/O 2 */
		{.op = 'W', .lba = 2047, .bytes = 512},  /* last sector */
		{.op = 'W', .lba = 1000, .bytes = 1536}, /* odd but 512-aligned */
		{.op = 'F', .lba = 0, .bytes = 0},
		{.op = 'W', .lba = 4, .bytes = 8192}, /* straddles I/Os 1 and 2 */
	};
	uint8_t *model = calloc(1, size);
	replay(p, 8, ios, sizeof(ios) / sizeof(ios[0]), model, size);
	uint8_t *got = slurp(p, size);
	assert_memory_equal(got, model, size);
	/* spot-check the stamp of I/O 4 (sector 20: I/O 8 covers 4..19) and of the last sector */
	uint64_t w[2];
	memcpy(w, got + 20 * 512, 16);
	assert_int_equal(w[0], 20);
	assert_int_equal(w[1], 4);
	memcpy(w, got + 2047 * 512, 16);
	assert_int_equal(w[0], 2047);
	assert_int_equal(w[1], 5);
	free(got);
	free(model);
	rmfile(p);
}

/* Random overlapping writes: iodepth 1 and 32 leave the same bytes, those of the model. */
static void test_depth_same_content(void **state)
{
	const uint64_t size = 4 * MIB;
	enum { N = 3000 };
	struct blk_io *ios = calloc(N, sizeof(*ios));
	for (int i = 0; i < N; i++) {
		uint64_t len = 4096 * (1 + rnd() % 16);
		ios[i].op = rnd() % 10 == 0 ? 'R' : 'W';
		ios[i].lba = (rnd() % ((size - len) / 4096 + 1)) * 8;
		ios[i].bytes = len;
	}
	ios[N / 2].op = 'D'; /* discards and flushes drain the queue in the middle */
	ios[N / 3] = (struct blk_io){.op = 'F'};
	uint8_t *model = calloc(1, size);
	char *p1 = mkfile(size), *p32 = mkfile(size);
	replay(p1, 1, ios, N, model, size);
	replay(p32, 32, ios, N, NULL, 0);
	uint8_t *a = slurp(p1, size), *b = slurp(p32, size);
	assert_memory_equal(a, model, size);
	assert_memory_equal(b, model, size);
	free(a);
	free(b);
	free(model);
	free(ios);
	rmfile(p1);
	rmfile(p32);
}

static void test_misaligned(void **state)
{
	char *p = mkfile(1 * MIB), err[512];
	struct aio_target *t = topen(p, 4);
	struct blk_io io = {.op = 'W', .lba = 8, .bytes = 100};
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "aligned"));
	assert_non_null(strstr(err, "I/O #1 (W 8 100): "));
	io.op = 'R';
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "I/O #2 (R 8 100)"));
	io = (struct blk_io){.op = 'X', .lba = 0, .bytes = 512};
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "unknown op"));
	io = (struct blk_io){.op = 'W', .lba = 0, .bytes = 0};
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "zero length"));
	/* a rejected I/O does not poison the target */
	sub(t, 'W', 0, 4096);
	drain(t);
	struct aio_target_stats st;
	aio_target_stats(t, &st);
	assert_int_equal(st.ios, 1);
	assert_int_equal(st.write_bytes, 4096);
	aio_target_close(t);
	rmfile(p);
}

static void test_out_of_range(void **state)
{
	char *p = mkfile(1 * MIB), err[512];
	struct aio_target *t = topen(p, 4);
	assert_int_equal(aio_target_size(t), 1 * MIB);
	struct blk_io io = {.op = 'W', .lba = 2040, .bytes = 8192}; /* ends 4 KiB past the end */
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "past the end"));
	io = (struct blk_io){.op = 'R', .lba = 1ull << 60, .bytes = 512}; /* would overflow */
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "past the end"));
	io = (struct blk_io){.op = 'D', .lba = 2048, .bytes = 512};
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "past the end"));
	sub(t, 'W', 2040, 4096); /* exactly up to the end is fine */
	drain(t);
	aio_target_close(t);
	rmfile(p);
}

static void test_discard_punches_hole(void **state)
{
	const uint64_t size = 1 * MIB;
	char *p = mkfile(size);
	struct aio_target *t = topen(p, 16);
	for (uint64_t off = 0; off < size; off += 64 * 1024)
		sub(t, 'W', off / 512, 64 * 1024);
	sub(t, 'F', 0, 0);
	drain(t);
	struct stat st1, st2;
	assert_int_equal(stat(p, &st1), 0);
	sub(t, 'D', 256 * 1024 / 512, 512 * 1024);
	drain(t);
	assert_int_equal(stat(p, &st2), 0);
	assert_int_equal(st2.st_size, size);
	print_message("st_blocks %lld -> %lld\n", (long long)st1.st_blocks,
		      (long long)st2.st_blocks);
	assert_true(st2.st_blocks <= st1.st_blocks - 512 * 1024 / 512);
	struct aio_target_stats s;
	aio_target_stats(t, &s);
	assert_int_equal(s.discard_bytes, 512 * 1024);
	aio_target_close(t);
	uint8_t *b = slurp(p, size), zero[4096] = {0};
	for (uint64_t off = 256 * 1024; off < 768 * 1024; off += sizeof(zero))
		assert_memory_equal(b + off, zero, sizeof(zero));
	assert_memory_not_equal(b, zero, sizeof(zero));
	free(b);
	rmfile(p);
}

static void test_refuses_non_file(void **state)
{
	char err[512];
	struct aio_target_opts o = {.force = true}; /* even forced */
	assert_null(aio_target_open(dir, &o, err, sizeof(err)));
	assert_non_null(strstr(err, "directory"));
	assert_null(aio_target_open("/dev/null", NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "character device"));
	char nx[128];
	snprintf(nx, sizeof(nx), "%s/does-not-exist", dir);
	assert_null(aio_target_open(nx, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, strerror(ENOENT)));
	assert_non_null(strstr(err, nx));
	char *p = mkfile(1 * MIB);
	assert_int_equal(truncate(p, 0), 0);
	assert_null(aio_target_open(p, NULL, err, sizeof(err)));
	assert_non_null(strstr(err, "size is 0"));
	struct aio_target_opts bad = {.speed = -1};
	assert_int_equal(truncate(p, 4096), 0);
	assert_null(aio_target_open(p, &bad, err, sizeof(err)));
	assert_non_null(strstr(err, "speed"));
	rmfile(p);
}

static void test_signature(void **state)
{
	const char *mkfs = "/sbin/mkfs.ext4";
	if (access(mkfs, X_OK))
		mkfs = "/usr/sbin/mkfs.ext4";
	if (access(mkfs, X_OK)) {
		print_message("skipped: no mkfs.ext4\n");
		skip();
	}
	char *p = mkfile(8 * MIB), cmd[512], err[512];
	snprintf(cmd, sizeof(cmd), "%s -q -F %s >/dev/null 2>&1", mkfs, p);
	if (system(cmd) != 0) {
		rmfile(p);
		print_message("skipped: %s failed\n", cmd);
		skip();
	}
	struct aio_target_opts o = {.iodepth = 4};
	assert_null(aio_target_open(p, &o, err, sizeof(err)));
	print_message("refused: %s\n", err);
	assert_non_null(strstr(err, "ext4"));
	assert_non_null(strstr(err, "force"));
	o.force = true;
	struct aio_target *t = aio_target_open(p, &o, err, sizeof(err));
	if (!t)
		fail_msg("forced open: %s", err);
	sub(t, 'W', 0, 8 * 1024); /* wipes the superblock at 1024 */
	drain(t);
	aio_target_close(t);
	o.force = false;
	t = aio_target_open(p, &o, err, sizeof(err));
	if (!t)
		fail_msg("open after the superblock was overwritten: %s", err);
	aio_target_close(t);
	rmfile(p);
}

static void test_stats_exact(void **state)
{
	const uint64_t size = 2 * MIB;
	char *p = mkfile(size);
	struct aio_target *t = topen(p, 32);
	uint64_t rb = 0, wb = 0, db = 0, n = 0, fl = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t len = 512 * (1 + rnd() % 64), lba = rnd() % ((size - len) / 512 + 1);
		char op = "RWWWWDF"[i % 7];
		if (op == 'F') {
			sub(t, 'F', 0, 0);
			fl++;
		} else {
			sub(t, op, lba, len);
			*(op == 'R' ? &rb : op == 'W' ? &wb : &db) += len;
		}
		n++;
	}
	drain(t);
	struct aio_target_stats st;
	aio_target_stats(t, &st);
	assert_int_equal(st.ios, n);
	assert_int_equal(st.read_bytes, rb);
	assert_int_equal(st.write_bytes, wb);
	assert_int_equal(st.discard_bytes, db);
	assert_int_equal(st.flushes, fl);
	assert_true(st.seconds > 0);
	assert_true(st.iops > 0 && st.mbps > 0);
	assert_true(st.lat_mean_us > 0);
	assert_true(st.lat_p99_us >= st.lat_mean_us * 0.5);
	print_message("%" PRIu64 " I/Os in %.3f s: %.0f IOPS, %.1f MB/s, latency mean %.1f us,"
		      " p99 %.1f us\n",
		      st.ios, st.seconds, st.iops, st.mbps, st.lat_mean_us, st.lat_p99_us);
	aio_target_close(t);
	rmfile(p);
}

/* speed 1: the trace's spacing (200 ms); speed 10: a tenth; speed 0: no waiting. */
static void test_speed(void **state)
{
	char *p = mkfile(1 * MIB), err[512];
	const double speeds[] = {1, 10, 0};
	const double lo[] = {0.2, 0.02, 0}, hi[] = {0.6, 0.15, 0.1};
	for (int k = 0; k < 3; k++) {
		struct aio_target_opts o = {.iodepth = 4, .speed = speeds[k]};
		struct aio_target *t = aio_target_open(p, &o, err, sizeof(err));
		assert_non_null(t);
		double t0 = now_s();
		for (int i = 0; i < 5; i++) {
			struct blk_io io = {.t_ns = 5000000000ull + i * 50000000ull, /* 50 ms apart */
					    .op = 'W', .lba = 8 * i, .bytes = 4096};
			assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), 0);
		}
		drain(t);
		double dt = now_s() - t0;
		print_message("speed %g: %.3f s\n", speeds[k], dt);
		assert_true(dt >= lo[k]);
		assert_true(dt < hi[k]);
		aio_target_close(t);
	}
	rmfile(p);
}

/* A write the kernel fails (EFBIG past RLIMIT_FSIZE) is reported, naming it, and sticks. */
static void test_device_error(void **state)
{
	char *p = mkfile(1 * MIB), err[512];
	struct rlimit old, lim;
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 512 * 1024;
	void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	struct aio_target *t = topen(p, 8);
	sub(t, 'W', 0, 4096);
	struct blk_io io = {.op = 'W', .lba = 768 * 2, .bytes = 4096};
	int r = aio_target_submit(t, &io, err, sizeof(err));
	for (int i = 0; r == 0 && i < 3; i++) {
		io.lba += 8;
		r = aio_target_submit(t, &io, err, sizeof(err));
	}
	if (r == 0)
		r = aio_target_drain(t, err, sizeof(err));
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, oldsig);
	print_message("error: %s\n", err);
	assert_int_equal(r, -1);
	assert_non_null(strstr(err, "I/O #2 (W 1536 4096): "));
	assert_non_null(strstr(err, strerror(EFBIG)));
	assert_non_null(strstr(err, p));
	io.lba = 0; /* fine by itself, but the target has failed */
	assert_int_equal(aio_target_submit(t, &io, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "I/O #2 "));
	assert_int_equal(aio_target_drain(t, err, sizeof(err)), -1);
	struct aio_target_stats st;
	aio_target_stats(t, &st);
	assert_int_equal(st.ios, 1);
	assert_int_equal(st.write_bytes, 4096);
	aio_target_close(t);
	rmfile(p);
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/fg-aio-XXXXXX");
	if (!mkdtemp(dir)) {
		fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static int teardown(void **state)
{
	return nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pattern),
		cmocka_unit_test(test_write_readback),
		cmocka_unit_test(test_depth_same_content),
		cmocka_unit_test(test_misaligned),
		cmocka_unit_test(test_out_of_range),
		cmocka_unit_test(test_discard_punches_hole),
		cmocka_unit_test(test_refuses_non_file),
		cmocka_unit_test(test_signature),
		cmocka_unit_test(test_stats_exact),
		cmocka_unit_test(test_speed),
		cmocka_unit_test(test_device_error),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
