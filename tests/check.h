/* check.h - assertions shared by the cmocka tests (include after <cmocka.h> and <math.h>). */
#ifndef FG_TEST_CHECK_H
#define FG_TEST_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* |a - b| < tol, or the test fails naming both expressions and values, and the difference */
#define assert_near(a, b, tol)                                                                     \
	do {                                                                                       \
		double a_ = (a), b_ = (b), t_ = (tol);                                             \
		if (!(fabs(a_ - b_) < t_))                                                         \
			fail_msg("%s = %.10g and %s = %.10g differ by %.3g, not less than %.3g", #a, \
			         a_, #b, b_, fabs(a_ - b_), t_);                                   \
	} while (0)

/* A test's temporary directory removed with everything in it (a cmocka teardown's body):
 * 0 on success. */
static inline int rm_tree(const char *dir)
{
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

#endif
