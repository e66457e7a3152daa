/*
 * test_kv.c - the KV-cache tier simulator: hand-computed traces for the core rules and the
 * policies, and invariants after random traces.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kvsim.h"

#define TOK 16 /* tokens per block in these tests */

/* a model with 1 byte of full KV per token: a chunk is 16 bytes; states are 32 bytes */
static struct kv_config cfg(uint64_t dram_chunks, uint64_t ssd_chunks, bool hybrid)
{
	struct kv_config c;
	memset(&c, 0, sizeof(c));
	strcpy(c.model.name, hybrid ? "test-hybrid" : "test-dense");
	c.model.full_kv_bytes_per_token = 1;
	c.model.linear_state_bytes = hybrid ? 32 : 0;
	c.dram_bytes = dram_chunks * TOK;
	c.ssd_bytes = ssd_chunks * 4096; /* SSD slots are 4 KiB */
	c.ssd_gbps = 10;
	c.pcie_gbps = 50;
	c.prefill_tokens_per_s = 60000;
	c.gpu_usd_per_hour = 2.5;
	c.ssd_usd = 100;
	c.tbw_bytes = 1e12;
	c.trim = true;
	return c;
}

static void req(struct kvsim *s, double t, uint64_t session, int n, ...)
{
	uint64_t b[64];
	va_list ap;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		b[i] = va_arg(ap, int);
	va_end(ap);
	struct kv_request rq = {.t = t, .session = session, .parent = KV_NO_SESSION, .block_tokens = TOK,
				.input_tokens = (uint32_t)n * TOK, .output_tokens = 1, .nblocks = (uint32_t)n, .blocks = b};
	char err[256];
	assert_int_equal(kvsim_request(s, &rq, err, sizeof(err)), 0);
	assert_int_equal(kvsim_check(s, err, sizeof(err)), 0);
}

static struct kvsim *sim(const char *pol, const char *params, struct kv_config c)
{
	static struct kvsim s;
	char err[256];
	const struct kv_policy *p = kv_policy_find(pol);
	assert_non_null(p);
	if (kvsim_init(&s, &c, p, params, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	return &s;
}

/* LRU, dense: DRAM holds 2 chunks, SSD 4. Worked out:
 *  r1 [1 2]:   miss 2; DRAM {2,1}
 *  r2 [1 2 3]: hit 2 (DRAM); admit 3: DRAM full, LRU tail is 1 -> written to SSD; DRAM {3,2}
 *  r3 [1 2 3]: hit 3: 1 from SSD, 2 and 3 from DRAM
 *  r4 [7]:     miss; admit 7: tail is 2 -> SSD (1 is there already). SSD {2,1}
 */
static void test_lru_dense(void **state)
{
	(void)state;
	struct kvsim *s = sim("lru", "", cfg(2, 4, false));
	req(s, 0, 1, 2, 1, 2);
	req(s, 1, 1, 3, 1, 2, 3);
	req(s, 2, 1, 3, 1, 2, 3);
	req(s, 3, 2, 1, 7);
	kvsim_finish(s);
	assert_int_equal(s->st.requests, 4);
	assert_int_equal(s->st.prefix_blocks, 9);
	assert_int_equal(s->st.hit_blocks, 5);
	assert_int_equal(s->st.hits[0][OBJ_FULL], 4);
	assert_int_equal(s->st.hits[1][OBJ_FULL], 1);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 2);
	assert_int_equal(s->st.ssd_write_bytes[OBJ_FULL], 2 * 4096);
	assert_int_equal(s->st.ssd_writes[OBJ_LINEAR], 0);
	assert_int_equal(s->st.ssd_written_hit[OBJ_FULL], 1); /* block 1 was hit on SSD, block 2 not */
	assert_int_equal(s->dram_used, 2 * TOK);
	kvsim_free(s);
}

/* Hybrid: a hit needs a state at its boundary.
 *  r1 [1 2]:     miss 2; admit 1, 2 and the state at 2 (32 B). DRAM holds 4 chunks = 64 B.
 *  r2 [1 2 3]:   hit 2 (chunks 1, 2 + state at 2); admit 3 and state at 3 -> over 64 B:
 *                LRU evicts (write-back to SSD)
 *  r3 [1 2 9]:   chunks 1,2 cached, state at 2 cached (DRAM or SSD) -> hit 2
 *  r4 [5 6]:     unrelated: miss
 */
static void test_hybrid_needs_state(void **state)
{
	(void)state;
	struct kvsim *s = sim("lru", "", cfg(4, 16, true));
	req(s, 0, 1, 2, 1, 2);
	assert_int_equal(s->st.hit_blocks, 0);
	assert_int_equal(s->dram_used, 2 * TOK + 32);
	req(s, 1, 1, 3, 1, 2, 3);
	assert_int_equal(s->st.hit_blocks, 2);
	assert_int_equal(s->st.hits[0][OBJ_LINEAR] + s->st.hits[1][OBJ_LINEAR], 1);
	req(s, 2, 1, 3, 1, 2, 9);
	assert_int_equal(s->st.hit_blocks, 4);
	req(s, 3, 2, 2, 5, 6);
	assert_int_equal(s->st.hit_blocks, 4);
	/* a prefix with all chunks but no state at any boundary: no hit */
	struct kvsim *d = sim("lru", "", cfg(64, 64, true));
	req(d, 0, 1, 3, 1, 2, 3);   /* state at 3 only */
	req(d, 1, 1, 2, 1, 2);      /* chunks 1, 2 cached, but no state at 2 */
	assert_int_equal(d->st.hit_blocks, 0);
	req(d, 2, 1, 4, 1, 2, 3, 4); /* state at 3: hit 3 */
	assert_int_equal(d->st.hit_blocks, 3);
	kvsim_free(d);
	kvsim_free(s);
}

/* write-through writes every admitted object; DRAM evictions write nothing more. */
static void test_write_through(void **state)
{
	(void)state;
	struct kvsim *s = sim("write-through", "", cfg(2, 8, false));
	req(s, 0, 1, 2, 1, 2);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 2);
	req(s, 1, 1, 3, 1, 2, 3);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 3);
	req(s, 2, 1, 1, 4);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 4);
	assert_int_equal(s->st.dram_drops, 0); /* nothing lost: all are on SSD */
	kvsim_free(s);
}

/* lru-k with k=2: an object leaving DRAM is written only after its second use.
 *  r1 [1]: admit 1 (1 use). r2 [2]: admit 2. r3 [1]: hit 1 (2 uses). r4 [3]: DRAM (2 chunks) evicts
 *  LRU 2 (1 use): dropped. r5 [4]: evicts 1 (2 uses): written.
 */
static void test_lru_k(void **state)
{
	(void)state;
	struct kvsim *s = sim("lru-k", "k=2", cfg(2, 8, false));
	req(s, 0, 1, 1, 1);
	req(s, 1, 2, 1, 2);
	req(s, 2, 1, 1, 1);
	req(s, 3, 3, 1, 3);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 0);
	assert_int_equal(s->st.dram_drops, 1);
	req(s, 4, 4, 1, 4);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 1);
	kvsim_free(s);
}

/* dynamo: threshold 2, counts double per use and halve every 600 s of idle.
 *  block 1 used at t=0 and t=1 (count 2) -> written when evicted at t=2.
 *  block 5 used at t=3 and t=1000 (count 1 -> decayed 0.5 -> 1 after doubling): dropped.
 */
static void test_dynamo(void **state)
{
	(void)state;
	struct kvsim *s = sim("dynamo", "threshold=2,decay=600", cfg(1, 8, false));
	req(s, 0, 1, 1, 1);
	req(s, 1, 1, 1, 1);
	req(s, 2, 2, 1, 2); /* evicts 1: count 2 -> SSD */
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 1);
	req(s, 3, 3, 1, 5); /* evicts 2: count 1 -> dropped */
	assert_int_equal(s->st.dram_drops, 1);
	req(s, 1000, 3, 1, 5); /* count 1 at t=3, one decay period later 0.5, doubled: 1 */
	req(s, 1001, 4, 1, 6); /* evicts 5: 1 < 2 -> dropped */
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 1);
	assert_int_equal(s->st.dram_drops, 2);
	kvsim_free(s);
}

/* gandalf: with lambda=0 moving is free (only replacement counts), so when the SSD has room it
 * moves rather than drops; with a huge lambda it drops everything. */
static void test_gandalf_lambda(void **state)
{
	(void)state;
	struct kvsim *s = sim("gandalf", "lambda=0", cfg(2, 64, false));
	for (int i = 0; i < 10; i++)
		req(s, i, 1, 1, 100 + i);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 8);
	assert_int_equal(s->st.dram_drops, 0);
	kvsim_free(s);
	s = sim("gandalf", "lambda=1e12", cfg(2, 64, false));
	for (int i = 0; i < 10; i++)
		req(s, i, 1, 1, 100 + i);
	assert_int_equal(s->st.ssd_writes[OBJ_FULL], 0);
	assert_int_equal(s->st.dram_drops, 8);
	kvsim_free(s);
}

static void test_bad_params(void **state)
{
	(void)state;
	struct kvsim s;
	char err[256];
	struct kv_config c = cfg(2, 8, false);
	assert_int_equal(kvsim_init(&s, &c, kv_policy_find("lru-k"), "q=3", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--param q: unknown parameter for policy lru-k"));
	assert_int_equal(kvsim_init(&s, &c, kv_policy_find("lru-k"), "k=x", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "not a number"));
	assert_int_equal(kvsim_init(&s, &c, kv_policy_find("gandalf"), "lambda=-1", NULL, err, sizeof(err)), -1);
	c.dram_bytes = 0;
	assert_int_equal(kvsim_init(&s, &c, kv_policy_find("lru"), "", NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--dram 0"));
	c = cfg(2, 8, false);
	c.ssd_bytes = 0;
	assert_int_equal(kvsim_init(&s, &c, kv_policy_find("lru"), "", NULL, err, sizeof(err)), -1);
	assert_null(kv_policy_find("nope"));
}

/* ---- random traces: invariants for every policy ---- */

static uint64_t rs = 12345;
static uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

/* sessions that grow their prefix turn by turn; ids encode (session, position) */
static void random_trace(struct kvsim *s, int nreq, bool *seen_blocks, bool *seen_states, uint64_t *compulsory_hit)
{
	int len[32] = {0};
	for (int r = 0; r < nreq; r++) {
		int sess = (int)(rnd() % 32);
		int n = len[sess] + 1 + (int)(rnd() % 3);
		if (n > 40)
			n = 1 + (int)(rnd() % 3), len[sess] = 0;
		uint64_t b[64];
		for (int i = 0; i < n; i++)
			b[i] = (uint64_t)sess * 64 + (uint64_t)i + (sess % 4 == 0 ? 0 : 0);
		/* compulsory: the longest prefix of blocks seen before with a state seen at its end */
		if (seen_blocks) {
			int r0 = 0;
			while (r0 < n && seen_blocks[b[r0]])
				r0++;
			int hb = r0;
			if (s->cfg.model.linear_state_bytes)
				while (hb > 0 && !seen_states[b[hb - 1]])
					hb--;
			*compulsory_hit += (uint64_t)hb;
			for (int i = 0; i < n; i++)
				seen_blocks[b[i]] = true;
			seen_states[b[n - 1]] = true;
		}
		struct kv_request rq = {.t = r, .session = (uint64_t)sess, .parent = KV_NO_SESSION, .block_tokens = TOK,
					.input_tokens = (uint32_t)n * TOK, .output_tokens = 1, .nblocks = (uint32_t)n,
					.blocks = b};
		char err[256];
		assert_int_equal(kvsim_request(s, &rq, err, sizeof(err)), 0);
		if (kvsim_check(s, err, sizeof(err)))
			fail_msg("request %d: %s", r, err);
		len[sess] = n;
	}
}

static void test_random_invariants(void **state)
{
	(void)state;
	for (int i = 0; kv_policies[i]; i++)
		for (int hybrid = 0; hybrid < 2; hybrid++) {
			struct kvsim *s = sim(kv_policies[i]->name, "", cfg(20, 12, hybrid));
			random_trace(s, 3000, NULL, NULL, NULL);
			kvsim_finish(s);
			assert_true(s->st.dram_peak <= s->cfg.dram_bytes);
			assert_true(s->st.ssd_peak <= s->cfg.ssd_bytes);
			if (!hybrid)
				assert_int_equal(s->st.ssd_writes[OBJ_LINEAR] + s->st.hits[0][OBJ_LINEAR] +
							 s->st.hits[1][OBJ_LINEAR],
						 0);
			kvsim_free(s);
		}
}

/* With DRAM larger than the working set, every policy's misses are the compulsory ones. */
static void test_compulsory(void **state)
{
	(void)state;
	for (int i = 0; kv_policies[i]; i++)
		for (int hybrid = 0; hybrid < 2; hybrid++) {
			static bool sb[32 * 64], ss[32 * 64];
			memset(sb, 0, sizeof(sb));
			memset(ss, 0, sizeof(ss));
			uint64_t comp = 0;
			struct kvsim *s = sim(kv_policies[i]->name, "", cfg(1 << 20, 1 << 10, hybrid));
			rs = 777;
			random_trace(s, 2000, sb, ss, &comp);
			assert_int_equal(s->st.hit_blocks, comp);
			kvsim_free(s);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lru_dense),
		cmocka_unit_test(test_hybrid_needs_state),
		cmocka_unit_test(test_write_through),
		cmocka_unit_test(test_lru_k),
		cmocka_unit_test(test_dynamo),
		cmocka_unit_test(test_gandalf_lambda),
		cmocka_unit_test(test_bad_params),
		cmocka_unit_test(test_random_invariants),
		cmocka_unit_test(test_compulsory),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
