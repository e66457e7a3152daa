/*
 * test_store.c - the KV store on a file (femu-gandalf/store): where each layout puts every
 * object (hand-computed offsets from the record), that reads return what was written (a
 * corrupted or stale slot is an error naming the object and the byte), slot reuse order
 * (LMCache newest first, KVBM oldest first, vLLM every never-used slot first), checkpoints in alternating copies, and the capture
 * mode's probes, fences and walk order.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kv_policy.h"
#include "kvsim.h"
#include "store.h"

#define TOK 16
#define CHUNK (TOK * 1024) /* 1 KiB per token: a 16 KiB chunk */
#define STATE (64 * 1024)

static char dir[] = "/tmp/fg-test-store-XXXXXX";
static char img[256], rec[256];

static struct kv_config cfg(bool hybrid, const char *pol_wt)
{
	struct kv_config c;
	(void)pol_wt;
	memset(&c, 0, sizeof(c));
	kv_config_default(&c);
	strcpy(c.model.name, "t");
	c.model.full_kv_bytes_per_token = 1024;
	c.model.linear_state_bytes = hybrid ? STATE : 0;
	c.dram_bytes = 0;
	c.trim = true;
	kv_cost_no_device(&c);
	return c;
}

struct run {
	struct kvsim *s;
	struct store *st;
	struct kv_config c;
};

static void open_run(struct run *r, enum store_layout l, bool hybrid, bool capture, bool trim,
                     uint64_t ssd_bytes, const char *pol)
{
	char err[1024];
	FILE *f = fopen(img, "w");
	assert_non_null(f);
	assert_int_equal(ftruncate(fileno(f), 64 << 20), 0);
	fclose(f);
	r->c = cfg(hybrid, pol);
	r->c.ssd_bytes = ssd_bytes;
	if (strcmp(pol, "write-through"))
		r->c.dram_bytes = 1 << 20;
	struct store_opts o = {.layout = l,
	                       .target = img,
	                       .meta_bytes = l == STORE_LMCACHE_RAWBLOCK ? 1 << 20 : 0,
	                       .chunk_bytes = CHUNK,
	                       .iodepth = 8,
	                       .trim = trim,
	                       .capture = capture,
	                       .record = rec};
	r->st = store_open(&o, &r->c, err, sizeof(err));
	if (!r->st)
		fail_msg("%s", err);
	r->s = kvsim_new(&r->c, kv_policy_find(pol), "", NULL, NULL, err, sizeof(err));
	if (!r->s)
		fail_msg("%s", err);
	kvsim_set_sink(r->s, store_sink(r->st));
}

static int reqv(struct run *r, double t, uint32_t in, int n, const uint64_t *b);

static int req(struct run *r, double t, uint32_t in, int n, ...)
{
	uint64_t b[64];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		b[i] = (uint64_t)va_arg(ap, int);
	va_end(ap);
	return reqv(r, t, in, n, b);
}

/* A request whose hit must fail verification with a message holding want; closes the run. */
static void read_fails(struct run *r, double t, uint32_t in, int n, const uint64_t *b,
                       const char *want)
{
	char err[1024];
	int rc = reqv(r, t, in, n, b);
	if (!rc) /* the read completes later: the drain reports it */
		rc = store_sync(r->st, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", store_error(r->st));
	assert_int_not_equal(rc, 0);
	if (!strstr(err, want))
		fail_msg("want '%s' in: %s", want, err);
	store_close(r->st, err, sizeof(err));
	store_free(r->st);
	kvsim_free(r->s);
}

static int reqv(struct run *r, double t, uint32_t in, int n, const uint64_t *b)
{
	struct kv_request q = {.t = t, .session = 1, .parent = KV_NO_SESSION, .block_tokens = TOK,
	                       .input_tokens = in, .output_tokens = 1, .nblocks = (uint32_t)n,
	                       .blocks = b};
	char err[256];
	return kvsim_request(r->s, &q, err, sizeof(err));
}

static void close_run(struct run *r, struct store_stats *ss)
{
	char err[1024];
	if (store_close(r->st, err, sizeof(err)))
		fail_msg("%s", err);
	store_stats(r->st, ss);
	store_free(r->st);
	kvsim_free(r->s);
}

/* The record's lines after the header, as one string. */
static char *record(void)
{
	static char buf[65536];
	FILE *f = fopen(rec, "r");
	assert_non_null(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strchr(buf, '\n');
	return p ? p + 1 : buf;
}

/* rawblock: base 1 MiB; a chunk slot is 4 KiB header + 16 KiB, a state's 4 KiB + 64 KiB. The
 * capture's walk: chunks 0 and 1 written, the state at the boundary 2 right after chunk 1, then
 * the partial chunk 2; a fence. Sector numbers: 1 MiB = 2048. */
static void test_rawblock_layout(void **state)
{
	(void)state;
	struct run r;
	struct store_stats ss;
	open_run(&r, STORE_LMCACHE_RAWBLOCK, true, true, false, 8 << 20, "write-through");
	/* 40 tokens: 3 blocks (ceil), the state at the last full block (2) */
	assert_int_equal(req(&r, 1.5, 40, 3, 10, 11, 12), 0);
	close_run(&r, &ss);
	/* slots: chunk 10 at 0, chunk 11 at 20 KiB, chunk 12 at 40 KiB, the state at 60 KiB: the
	 * simulator allocates in admission order (chunks, then the state) */
	assert_string_equal(record(), "1500000000,W,2048,4096\n"
	                              "1500000000,W,2056,16384\n"
	                              "1500000000,W,2088,4096\n"
	                              "1500000000,W,2096,16384\n"
	                              "1500000000,W,2168,4096\n" /* the state, after chunk 11 */
	                              "1500000000,W,2176,65536\n"
	                              "1500000000,W,2128,4096\n"
	                              "1500000000,W,2136,16384\n"
	                              "1500000000,F,0,0\n"
	                              "1500000000,W,0,8192\n"); /* the final checkpoint, copy 0 */
	assert_int_equal(ss.puts, 4);
	assert_int_equal(ss.reordered, 1);
	assert_int_equal(ss.fences, 1);
	assert_int_equal(ss.checkpoints, 1);
	assert_int_equal(ss.object_write_bytes, 3 * 20480 + 69632);
	assert_int_equal(ss.write_bytes, 3 * 20480 + 69632 + 8192);
}

/* A hit reads the payload only (LMCache: header_bytes past the slot) and verifies it; a probe
 * reads a cached chunk past the last usable state. Hand-counted:
 *   t0 [10]          in 16: W c10, W S10
 *   t1 [10 11 12]    in 40: R c10, R S10; W c11, S11 (moved up from last), c12
 *   t2 [10 11]       in 32: R c10, c11, S11
 *   t3 [10 11 13]    in 48: R c10, c11, S11; W c13, S13
 *   t4 [10 11 12 14] in 64: R c10, c11, S11; probe c12 (no state at 12); W c14, S14 */
static void test_rawblock_hit_and_probe(void **state)
{
	(void)state;
	struct run r;
	struct store_stats ss;
	open_run(&r, STORE_LMCACHE_RAWBLOCK, true, true, false, 8 << 20, "write-through");
	assert_int_equal(req(&r, 0, 16, 1, 10), 0);
	assert_int_equal(req(&r, 1, 40, 3, 10, 11, 12), 0);
	assert_int_equal(req(&r, 2, 32, 2, 10, 11), 0);
	assert_int_equal(req(&r, 3, 48, 3, 10, 11, 13), 0);
	assert_int_equal(req(&r, 4, 64, 4, 10, 11, 12, 14), 0);
	close_run(&r, &ss);
	assert_int_equal(ss.puts, 9);
	assert_int_equal(ss.gets, 2 + 3 + 3 + 3);
	assert_int_equal(ss.probes, 1);
	assert_int_equal(ss.verified, 12);
	assert_int_equal(ss.reordered, 1);
	assert_int_equal(ss.fences, 5);
	assert_int_equal(ss.flushes, 5);
	/* payload reads: 16 KiB a chunk, 64 KiB a state */
	assert_int_equal(ss.read_bytes, 8 * 16384 + 4 * 65536); /* 8 chunks, 4 states */
	assert_int_equal(ss.read_bytes, ss.object_read_bytes);
}

/* A slot overwritten behind the store's back: the next read names the object, the version
 * and the byte, and the run stops. */
static void test_corruption_detected(void **state)
{
	(void)state;
	struct run r;
	char err[1024];
	open_run(&r, STORE_LMCACHE_RAWBLOCK, false, false, false, 8 << 20, "write-through");
	assert_int_equal(req(&r, 0, 32, 2, 7, 8), 0);
	assert_int_equal(store_sync(r.st, err, sizeof(err)), 0);
	/* chunk 8's payload starts at 1 MiB + 20 KiB + 4 KiB; change a byte of its second sector */
	FILE *f = fopen(img, "r+");
	assert_non_null(f);
	assert_int_equal(fseek(f, (1 << 20) + 20480 + 4096 + 700, SEEK_SET), 0);
	int c = fgetc(f);
	assert_int_equal(fseek(f, (1 << 20) + 20480 + 4096 + 700, SEEK_SET), 0);
	fputc(c ^ 0x5a, f);
	fclose(f);
	read_fails(&r, 1, 48, 3, (uint64_t[]){7, 8, 9}, /* hits 7 and 8 */
	           "chunk 0x8 v1 at byte 1073664: the data differs");
}

/* A stale copy: the slot holds an older version of the same object (a lost write). */
static void test_stale_copy_detected(void **state)
{
	(void)state;
	struct run r;
	char err[1024];
	static char old[16384] __attribute__((aligned(4096)));
	/* room for one chunk: 7 is written (v1), evicted by 8, written again (v2) */
	open_run(&r, STORE_KVBM, false, false, false, CHUNK, "write-through");
	assert_int_equal(req(&r, 0, 16, 1, 7), 0);
	assert_int_equal(store_sync(r.st, err, sizeof(err)), 0);
	FILE *f = fopen(img, "r+");
	assert_int_equal(fread(old, 1, sizeof(old), f), sizeof(old)); /* 7 v1 at block 0 */
	fclose(f);
	assert_int_equal(req(&r, 1, 16, 1, 8), 0);
	assert_int_equal(req(&r, 2, 16, 1, 7), 0); /* 7 v2 at block 0 */
	assert_int_equal(store_sync(r.st, err, sizeof(err)), 0);
	f = fopen(img, "r+");
	assert_int_equal(fwrite(old, 1, sizeof(old), f), sizeof(old)); /* v2 lost */
	fclose(f);
	read_fails(&r, 3, 32, 2, (uint64_t[]){7, 9}, /* hits 7 */
	           "chunk 0x7 v2 at byte 0: found an older copy of 0x7 v1");
}

/* kvbm: no metadata, no header; block b at b x 16 KiB. With room for 3 chunks, each new one
 * evicts the LRU chunk and reuses its block; a discard with trim. */
static void test_kvbm_layout(void **state)
{
	(void)state;
	struct run r;
	struct store_stats ss;
	open_run(&r, STORE_KVBM, false, false, true, 3 * CHUNK, "write-through");
	assert_int_equal(req(&r, 0, 16, 1, 1), 0); /* block 0 */
	assert_int_equal(req(&r, 1, 16, 1, 2), 0); /* block 1 */
	assert_int_equal(req(&r, 2, 16, 1, 3), 0); /* block 2 */
	assert_int_equal(req(&r, 3, 16, 1, 4), 0); /* evicts 1 (LRU): block 0 */
	assert_int_equal(req(&r, 4, 16, 1, 5), 0); /* evicts 2: block 1 */
	assert_int_equal(req(&r, 5, 16, 1, 1), 0); /* evicts 3: block 2 */
	close_run(&r, &ss);
	assert_string_equal(record(), "0,W,0,16384\n"
	                              "1000000000,W,32,16384\n"
	                              "2000000000,W,64,16384\n"
	                              "3000000000,D,0,16384\n"
	                              "3000000000,W,0,16384\n"
	                              "4000000000,D,32,16384\n"
	                              "4000000000,W,32,16384\n"
	                              "5000000000,D,64,16384\n"
	                              "5000000000,W,64,16384\n");
	assert_int_equal(ss.trims, 3);
	assert_int_equal(ss.checkpoints, 0);
}

/* vllm-disk: slot 0 (BlockPool's null block) is a hole, block b of the tier at (b + 1) x 16 KiB
 * (sector 32 per slot); room for 4. An object that leaves the SSD while never-used slots remain
 * (chunk 1, evicted by hand as a policy can) does not get its slot reused: vLLM's free queue
 * holds every never-used block ahead of a freed one, so chunk 3 takes slot 3 where kvbm reuses
 * slot 1. Once they are gone, freed slots go oldest first; an eviction writes nothing. */
static void test_vllm_disk_layout(void **state)
{
	(void)state;
	const char *want[2] = {/* kvbm: freed first */
	                       "0,W,0,16384\n1000000000,W,32,16384\n2000000000,W,0,16384\n",
	                       /* vllm-disk */
	                       "0,W,32,16384\n1000000000,W,64,16384\n2000000000,W,96,16384\n"
	                       "3000000000,W,128,16384\n4000000000,W,32,16384\n"
	                       "5000000000,W,64,16384\n"};
	for (int v = 0; v < 2; v++) {
		struct run r;
		struct store_stats ss;
		open_run(&r, v ? STORE_VLLM_DISK : STORE_KVBM, false, false, false, 4 * CHUNK,
		         "write-through");
		assert_int_equal(req(&r, 0, 16, 1, 1), 0);
		assert_int_equal(req(&r, 1, 16, 1, 2), 0);
		kv_evict_ssd(r.s, kv_lookup(r.s, 1)); /* a policy's eviction, with room left */
		assert_int_equal(req(&r, 2, 16, 1, 3), 0);
		if (v) {
			assert_int_equal(req(&r, 3, 16, 1, 4), 0); /* the last never-used slot */
			assert_int_equal(req(&r, 4, 16, 1, 5), 0); /* chunk 1's freed slot */
			assert_int_equal(req(&r, 5, 16, 1, 6), 0); /* full: evicts 2 (LRU), its slot */
		}
		close_run(&r, &ss);
		assert_string_equal(record(), want[v]);
		assert_int_equal(ss.trims, 0);
		assert_int_equal(ss.base, v ? CHUNK : 0);
		assert_int_equal(ss.evictions, v ? 2 : 1);
	}
}

/* Without trim an eviction writes nothing (LMCache frees the slot in memory), and the slot is
 * reused. */
static void test_rawblock_no_trim(void **state)
{
	(void)state;
	struct run r;
	struct store_stats ss;
	/* room for 2 chunk slots of 20 KiB */
	open_run(&r, STORE_LMCACHE_RAWBLOCK, false, false, false, 2 * 20480, "write-through");
	assert_int_equal(req(&r, 0, 16, 1, 1), 0); /* slot 0 */
	assert_int_equal(req(&r, 1, 16, 1, 2), 0); /* slot 20 KiB */
	assert_int_equal(req(&r, 2, 16, 1, 3), 0); /* evicts 1: slot 0 */
	close_run(&r, &ss);
	assert_string_equal(record(), "0,W,2048,4096\n0,W,2056,16384\n"
	                              "1000000000,W,2088,4096\n1000000000,W,2096,16384\n"
	                              "2000000000,W,2048,4096\n2000000000,W,2056,16384\n"
	                              "2000000000,W,0,8192\n");
	assert_int_equal(ss.trims, 0);
}

/* Checkpoints every 60 s of trace time, when the index changed, alternating copies at 0 and
 * half the region (512 KiB = sector 1024). */
static void test_checkpoints(void **state)
{
	(void)state;
	struct run r;
	struct store_stats ss;
	open_run(&r, STORE_LMCACHE_RAWBLOCK, false, false, false, 8 << 20, "write-through");
	assert_int_equal(req(&r, 10, 16, 1, 1), 0);
	assert_int_equal(req(&r, 61, 16, 1, 2), 0);  /* checkpoint 1 at copy 0 */
	assert_int_equal(req(&r, 100, 16, 1, 2), 0); /* a hit: no change, no checkpoint */
	assert_int_equal(req(&r, 130, 16, 1, 3), 0); /* checkpoint 2 at copy 1 */
	close_run(&r, &ss);                          /* the final one: copy 0 */
	const char *s = record();
	assert_non_null(strstr(s, "61000000000,W,0,8192\n"));
	assert_non_null(strstr(s, "130000000000,W,1024,8192\n"));
	assert_non_null(strstr(s, "130000000000,W,0,8192\n"));
	assert_int_equal(ss.checkpoints, 3);
}

/* Layout errors name what is wrong. */
static void test_errors(void **state)
{
	(void)state;
	char err[1024];
	struct kv_config c = cfg(false, "");
	FILE *f = fopen(img, "w");
	assert_int_equal(ftruncate(fileno(f), 1 << 20), 0);
	fclose(f);
	struct store_opts o = {.layout = STORE_LMCACHE_RAWBLOCK, .target = img, .chunk_bytes = CHUNK};
	assert_null(store_open(&o, &c, err, sizeof(err))); /* 1 MiB < the 128 MiB region */
	assert_non_null(strstr(err, "leave no room after the 134217728-byte metadata region"));
	o.meta_bytes = 12288;
	assert_null(store_open(&o, &c, err, sizeof(err)));
	assert_non_null(strstr(err, "--meta 12288: must be a multiple of 8 KiB"));
	o.layout = STORE_KVBM;
	assert_null(store_open(&o, &c, err, sizeof(err)));
	assert_non_null(strstr(err, "the kvbm layout has no metadata region"));
	o.layout = STORE_VLLM_DISK;
	assert_null(store_open(&o, &c, err, sizeof(err)));
	assert_non_null(strstr(err, "the vllm-disk layout has no metadata region"));
	o.layout = STORE_KVBM;
	o.meta_bytes = 0;
	c.ssd_bytes = 2 << 20;
	assert_null(store_open(&o, &c, err, sizeof(err)));
	assert_non_null(strstr(err, "--ssd 2097152"));
	c.ssd_bytes = 0;
	c.alloc = KV_ALLOC_LOG;
	assert_null(store_open(&o, &c, err, sizeof(err)));
	assert_non_null(strstr(err, "--target needs --alloc slots"));
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(img, sizeof(img), "%s/store.img", dir);
	snprintf(rec, sizeof(rec), "%s/rec.csv", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(img);
	unlink(rec);
	rmdir(dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_rawblock_layout),
	        cmocka_unit_test(test_rawblock_hit_and_probe),
	        cmocka_unit_test(test_corruption_detected),
	        cmocka_unit_test(test_stale_copy_detected),
	        cmocka_unit_test(test_kvbm_layout),
	        cmocka_unit_test(test_vllm_disk_layout),
	        cmocka_unit_test(test_rawblock_no_trim),
	        cmocka_unit_test(test_checkpoints),
	        cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
