/*
 * test_common.c - the base library's error formatter (common/err.c) and key=value / size parser
 * (common/parse.c): return codes, NULL and tiny buffers (always NUL-terminated, truncated, never
 * overrun), splitting at the first '=', trimming, empty and over-long keys, every size suffix,
 * fractions, rounding, and the inputs both parsers must refuse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "err.h"
#include "parse.h"

static void test_err_returns(void **state)
{
	char buf[64];

	assert_int_equal(fg_err(buf, sizeof(buf), "%s=%d: must be > 0", "pages", 0), -1);
	assert_string_equal(buf, "pages=0: must be > 0");
	assert_int_equal(fg_err_rc(buf, sizeof(buf), -7, "code %d", 7), -7);
	assert_string_equal(buf, "code 7");
	assert_int_equal(fg_err_rc(buf, sizeof(buf), 0, "%s", "ok"), 0);
}

static void test_err_buffers(void **state)
{
	char buf[8];

	/* no buffer: only the status */
	assert_int_equal(fg_err(NULL, 0, "x"), -1);
	assert_int_equal(fg_err(NULL, 100, "x"), -1);
	memset(buf, 'z', sizeof(buf));
	assert_int_equal(fg_err(buf, 0, "untouched"), -1);
	assert_int_equal(buf[0], 'z');
	/* truncated, terminated, and nothing past the buffer */
	char big[16];
	memset(big, 'z', sizeof(big));
	fg_err(big, 8, "%s", "0123456789");
	assert_string_equal(big, "0123456");
	assert_int_equal(big[8], 'z');
	fg_err(buf, 1, "abc");
	assert_int_equal(buf[0], 0);
}

static int wrap(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = fg_verr_rc(err, len, 3, fmt, ap);
	va_end(ap);
	return rc;
}

static void test_err_va(void **state)
{
	char buf[32];

	assert_int_equal(wrap(buf, sizeof(buf), "%u:%s", 12u, "why"), 3);
	assert_string_equal(buf, "12:why");
}

static void test_kv_split(void **state)
{
	char s1[] = "page_size=16k", s2[] = "a=b=c", s3[] = "  gc_policy =  greedy \r\n";
	char s4[] = "novalue", s5[] = "=v", s6[] = "  = v", s7[] = "k=", s8[] = "k = v";
	char *k, *v;

	assert_int_equal(fg_keyval_split(s1, 0, &k, &v), 0);
	assert_string_equal(k, "page_size");
	assert_string_equal(v, "16k");
	assert_int_equal(fg_keyval_split(s2, 0, &k, &v), 0); /* the first '=' splits */
	assert_string_equal(k, "a");
	assert_string_equal(v, "b=c");
	assert_int_equal(fg_keyval_split(s3, FG_KEYVAL_TRIM, &k, &v), 0);
	assert_string_equal(k, "gc_policy");
	assert_string_equal(v, "greedy");
	assert_int_equal(fg_keyval_split(s4, 0, &k, &v), -1);
	assert_string_equal(s4, "novalue"); /* unchanged on error */
	assert_int_equal(fg_keyval_split(s5, 0, &k, &v), -1);
	assert_string_equal(s5, "=v");
	assert_int_equal(fg_keyval_split(s6, FG_KEYVAL_TRIM, &k, &v), -1); /* blank key */
	assert_string_equal(s6, "  = v");
	assert_int_equal(fg_keyval_split(s7, 0, &k, &v), 0); /* an empty value is the caller's call */
	assert_string_equal(v, "");
	assert_int_equal(fg_keyval_split(s8, 0, &k, &v), 0); /* untrimmed: blanks are kept */
	assert_string_equal(k, "k ");
	assert_string_equal(v, " v");
}

static void test_kv_split_copy(void **state)
{
	const char *in = "op_percent=7=x", *v;
	char key[8];

	assert_int_equal(fg_keyval_split_copy(in, key, sizeof(key), &v), -2); /* 10 > 7 characters */
	char big[16];
	assert_int_equal(fg_keyval_split_copy(in, big, sizeof(big), &v), 0);
	assert_string_equal(big, "op_percent");
	assert_ptr_equal(v, in + 11);
	assert_int_equal(fg_keyval_split_copy("seven=7", key, sizeof(key), &v), 0); /* 5 fit in 8 */
	assert_string_equal(key, "seven");
	assert_int_equal(fg_keyval_split_copy("1234567=x", key, sizeof(key), &v), 0); /* exactly fits */
	assert_int_equal(fg_keyval_split_copy("12345678=x", key, sizeof(key), &v), -2);
	assert_int_equal(fg_keyval_split_copy("=x", key, sizeof(key), &v), -1);
	assert_int_equal(fg_keyval_split_copy("x", key, sizeof(key), &v), -1);
}

static void test_size_suffix(void **state)
{
	const double K = 1024.0;

	assert_true(fg_size_suffix("") == 1);
	assert_true(fg_size_suffix("B") == 1);
	assert_true(fg_size_suffix("b") == 1);
	assert_true(fg_size_suffix("k") == K);
	assert_true(fg_size_suffix("K") == K);
	assert_true(fg_size_suffix("KiB") == K);
	assert_true(fg_size_suffix("KB") == 1000.0); /* B after the unit: decimal */
	assert_true(fg_size_suffix("GB") == 1e9);
	assert_true(fg_size_suffix("TB") == 1e12);
	assert_true(fg_size_suffix("PB") == 1e15);
	assert_true(fg_size_suffix("P") == K * K * K * K * K);
	assert_true(fg_size_suffix("PiB") == K * K * K * K * K);
	assert_true(fg_size_suffix("kb") == 0); /* bits or bytes? */
	assert_true(fg_size_suffix("ki") == K);
	assert_true(fg_size_suffix("M") == K * K);
	assert_true(fg_size_suffix("g") == K * K * K);
	assert_true(fg_size_suffix("TiB") == K * K * K * K);
	assert_true(fg_size_suffix("x") == 0);
	assert_true(fg_size_suffix("iB") == 0); /* 'i' only after a unit */
	assert_true(fg_size_suffix("KK") == 0);
	assert_true(fg_size_suffix("KBx") == 0);
	assert_true(fg_size_suffix(" K") == 0);
}

static void test_parse_size(void **state)
{
	unsigned long long v = 42;

	assert_true(fg_parse_size("4096", &v));
	assert_int_equal(v, 4096);
	assert_true(fg_parse_size("4k", &v));
	assert_int_equal(v, 4096);
	assert_true(fg_parse_size("128KiB", &v));
	assert_int_equal(v, 131072);
	assert_true(fg_parse_size("100G", &v));
	assert_int_equal(v, 100ull << 30);
	assert_true(fg_parse_size("1.5T", &v));
	assert_int_equal(v, 3ull << 39);
	assert_true(fg_parse_size("960GB", &v)); /* the drive presets calls "960 GB" */
	assert_int_equal(v, 960000000000ull);
	assert_true(fg_parse_size("1P", &v));
	assert_int_equal(v, 1ull << 50);
	assert_true(fg_parse_size("0.5", &v)); /* rounded to the nearest byte */
	assert_int_equal(v, 1);
	assert_true(fg_parse_size("0", &v));
	assert_int_equal(v, 0);
	assert_true(fg_parse_size("16777215T", &v)); /* the largest whole number of TiB that fits */
	assert_int_equal(v, 16777215ull << 40);
	v = 42;
	assert_false(fg_parse_size("", &v));
	assert_false(fg_parse_size("k", &v));
	assert_false(fg_parse_size("-1", &v));
	assert_false(fg_parse_size("4x", &v));
	assert_false(fg_parse_size("4 k", &v));
	assert_false(fg_parse_size("nan", &v));
	assert_false(fg_parse_size("inf", &v));
	assert_false(fg_parse_size("1e300", &v));
	assert_false(fg_parse_size("16777216T", &v)); /* 2^64: does not fit */
	assert_int_equal(v, 42); /* unchanged on error */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_err_returns),   cmocka_unit_test(test_err_buffers),
		cmocka_unit_test(test_err_va),        cmocka_unit_test(test_kv_split),
		cmocka_unit_test(test_kv_split_copy), cmocka_unit_test(test_size_suffix),
		cmocka_unit_test(test_parse_size),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
