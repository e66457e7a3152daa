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

#endif
