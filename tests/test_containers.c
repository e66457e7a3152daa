/*
 * test_containers.c - the base layer's containers in common/: the hash map (u64map) against a plain array of
 * what it should hold, through random insertions, updates and deletions (backward-shift
 * deletion is where open addressing goes wrong), and the growable array (vec).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "u64map.h"
#include "vec.h"

static uint64_t rng = 88172645463325252ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void test_u64map_basic(void **state)
{
	(void)state;
	struct u64map m = {0};
	assert_int_equal(u64map_get(&m, 7), U64MAP_EMPTY); /* an unallocated map is empty */
	assert_int_equal(u64map_del(&m, 7), 0);
	assert_int_equal(u64map_init(&m, 100), 0);
	assert_true(m.cap >= 128);
	/* every key is allowed, UINT64_MAX and 0 included */
	assert_int_equal(u64map_put(&m, UINT64_MAX, 1), 0);
	assert_int_equal(u64map_put(&m, 0, 2), 0);
	assert_int_equal(u64map_get(&m, UINT64_MAX), 1);
	assert_int_equal(u64map_get(&m, 0), 2);
	uint64_t *v = u64map_upsert(&m, 0, 99);
	assert_non_null(v);
	assert_int_equal(*v, 2); /* upsert keeps an existing value */
	v = u64map_upsert(&m, 5, 99);
	assert_int_equal(*v, 99);
	assert_int_equal(m.count, 3);
	assert_int_equal(u64map_del(&m, 0), 1);
	assert_int_equal(u64map_get(&m, 0), U64MAP_EMPTY);
	assert_int_equal(m.count, 2);
	u64map_free(&m);
	assert_null(m.slot);
}

/* random operations against a reference; keys from a small range so that runs collide, and
 * sequential keys (block ids) as well */
static void test_u64map_random(void **state)
{
	(void)state;
	enum { RANGE = 5000, OPS = 200000 };
	uint64_t *ref = malloc(RANGE * sizeof(*ref));
	assert_non_null(ref);
	for (int i = 0; i < RANGE; i++)
		ref[i] = U64MAP_EMPTY;
	struct u64map m = {0};
	uint64_t live = 0;
	for (int op = 0; op < OPS; op++) {
		uint64_t k = next() % RANGE, r = next() % 3;
		uint64_t key = k * 0x10000000000ull + (k & 1); /* spread, with low-bit patterns */
		if (r < 2) {
			uint64_t val = next() >> 1;
			live += ref[k] == U64MAP_EMPTY;
			ref[k] = val;
			assert_int_equal(u64map_put(&m, key, val), 0);
		} else {
			assert_int_equal(u64map_del(&m, key), ref[k] != U64MAP_EMPTY);
			live -= ref[k] != U64MAP_EMPTY;
			ref[k] = U64MAP_EMPTY;
		}
		if (op % 1000 == 0)
			for (int i = 0; i < RANGE; i++)
				assert_int_equal(
				        u64map_get(&m, (uint64_t)i * 0x10000000000ull + (i & 1)),
				        ref[i]);
		assert_true(m.count * 4 <= m.cap * 3); /* never past 3/4 full */
	}
	assert_int_equal(m.count, live);
	/* walking the table finds each live entry once */
	uint64_t seen = 0;
	for (uint64_t i = 0; i < m.cap; i++)
		seen += m.slot[i].val != U64MAP_EMPTY;
	assert_int_equal(seen, live);
	u64map_free(&m);
	free(ref);
}

static void test_vec(void **state)
{
	(void)state;
	VEC(uint32_t) v = {0};
	for (uint32_t i = 0; i < 100000; i++)
		assert_int_equal(vec_push(&v, i * 3), 0);
	assert_int_equal(v.n, 100000);
	assert_true(v.cap >= v.n && v.cap < 2 * v.n + 16);
	for (uint32_t i = 0; i < 100000; i++)
		assert_int_equal(v.v[i], i * 3);
	vec_free(&v);
	assert_null(v.v);
	assert_int_equal(v.cap, 0);

	/* the pointer + capacity form: reserve many at once, contents kept */
	double *a = NULL;
	uint64_t cap = 0;
	assert_int_equal(vec_reserve(a, cap, 1), 0);
	assert_int_equal(cap, 16);
	a[0] = 1.5;
	assert_int_equal(vec_reserve(a, cap, 1000), 0);
	assert_true(cap >= 1000);
	assert_true(a[0] == 1.5);
	uint64_t c = cap;
	assert_int_equal(vec_reserve(a, cap, 10), 0); /* enough room: nothing moves */
	assert_int_equal(cap, c);
	/* an impossible size fails and leaves the array as it was */
	assert_int_equal(vec_reserve(a, cap, UINT64_MAX), -1);
	assert_int_equal(cap, c);
	assert_true(a[0] == 1.5);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test(test_u64map_basic),
	        cmocka_unit_test(test_u64map_random),
	        cmocka_unit_test(test_vec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
