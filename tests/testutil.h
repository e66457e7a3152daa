/* testutil.h - helpers shared by the cmocka tests (include after <cmocka.h>). */
#ifndef FG_TESTUTIL_H
#define FG_TESTUTIL_H

#include "ftl.h"

/* each test file picks its seed: assertions on measured figures were calibrated with it */
#ifndef TEST_SEED
#define TEST_SEED 88172645463325252ull
#endif
static uint64_t rs = TEST_SEED;

/* xorshift64: fast, and the same sequence on every machine */
static inline uint64_t rnd(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return rs;
}

static inline struct ftl *mk(const struct ftl_config *c)
{
	char err[256];
	struct ftl *f = ftl_create(c, err, sizeof(err));
	if (!f)
		fail_msg("ftl_create: %s", err);
	return f;
}

static inline void check_ok(struct ftl *f)
{
	char err[256];
	if (ftl_check(f, err, sizeof(err)))
		fail_msg("ftl_check: %s", err);
}

/* The wear attribution adds up to the drive's totals, exactly (ftl.h, docs/ftl.md) */
static inline void check_attribution_sums(struct ftl *f)
{
	struct ftl_stats st;
	struct ftl_attribution a;
	ftl_get_stats(f, &st);
	ftl_get_attribution(f, &a);
	const struct ftl_geometry *g = ftl_get_geometry(f);
	uint64_t prog[3] = {0}, erased = a.erased_empty_bytes, gc = a.gc_uncaused_bytes;
	for (int c = 0; c < FTL_CLASSES; c++) {
		for (int k = 0; k < 3; k++)
			prog[k] += a.prog[c][k];
		for (int e = 0; e < 3; e++)
			erased += a.erased[c][e];
		gc += a.gc_cause[c][FTL_ATTR_TRIMMED] + a.gc_cause[c][FTL_ATTR_OVERWRITTEN];
		assert_int_equal(a.gc_cause[c][FTL_ATTR_MOVED], 0);
	}
	assert_int_equal(prog[FTL_ATTR_HOST], st.host_prog_bytes);
	assert_int_equal(prog[FTL_ATTR_GC], st.gc_prog_bytes);
	assert_int_equal(prog[FTL_ATTR_WL], st.wl_prog_bytes);
	assert_int_equal(a.pad_bytes, st.pad_prog_bytes);
	assert_int_equal(prog[0] + prog[1] + prog[2] + a.pad_bytes, st.nand_write_bytes);
	assert_int_equal(erased, st.erases * (uint64_t)g->units_per_block * ftl_get_config(f)->unit_size);
	assert_int_equal(gc, st.gc_prog_bytes);
}

#endif
