/*
 * test_json.c - the JSON emitter (common/json.c): escaping of every control character, UTF-8
 * pass-through and the replacement of ill-formed sequences (one U+FFFD per maximal subpart, as
 * Python's errors="replace"), commas and layout of nested containers, NaN/Inf as null, number
 * formats, the depth limit and every misuse, stream errors; and 20,000 random byte strings, each
 * emitted and parsed back with jansson (which rejects invalid UTF-8).
 */
#include <locale.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>

#include "json.h"

struct buf {
	char *p;
	size_t n;
	FILE *f;
	struct json_out j;
};

static void bopen(struct buf *b)
{
	b->p = NULL;
	b->n = 0;
	b->f = open_memstream(&b->p, &b->n);
	assert_non_null(b->f);
	jout_init(&b->j, b->f);
}

/* close the stream; returns the text (free it) */
static char *bclose(struct buf *b)
{
	fclose(b->f);
	return b->p;
}

/* one top-level string value, as text without the final newline */
static char *emit_str(const char *s, size_t len)
{
	struct buf b;
	bopen(&b);
	jout_strn(&b.j, NULL, s, len);
	assert_int_equal(jout_finish(&b.j), JOUT_OK);
	char *t = bclose(&b);
	size_t n = strlen(t);
	assert_true(n > 0 && t[n - 1] == '\n');
	t[n - 1] = 0;
	return t;
}

static void check_str(const char *in, size_t len, const char *want)
{
	char *got = emit_str(in, len);
	assert_string_equal(got, want);
	free(got);
}
#define CHECK(in, want) check_str(in, sizeof(in) - 1, want)

static void test_control_chars(void **state)
{
	static const char *const esc[32] = {
		"\\u0000", "\\u0001", "\\u0002", "\\u0003", "\\u0004", "\\u0005", "\\u0006", "\\u0007",
		"\\b",     "\\t",     "\\n",     "\\u000b", "\\f",     "\\r",     "\\u000e", "\\u000f",
		"\\u0010", "\\u0011", "\\u0012", "\\u0013", "\\u0014", "\\u0015", "\\u0016", "\\u0017",
		"\\u0018", "\\u0019", "\\u001a", "\\u001b", "\\u001c", "\\u001d", "\\u001e", "\\u001f",
	};
	for (int c = 0; c < 32; c++) {
		char in[3] = {'a', (char)c, 'z'}, want[16];
		snprintf(want, sizeof(want), "\"a%sz\"", esc[c]);
		check_str(in, 3, want);
	}
	CHECK("q\"x\\y/", "\"q\\\"x\\\\y/\"");
	CHECK("\x7f", "\"\x7f\""); /* DEL is valid JSON */
	CHECK("", "\"\"");
	CHECK("/tmp/q\"x/t.csv", "\"/tmp/q\\\"x/t.csv\"");
	(void)state;
}

static void test_utf8_passes(void **state)
{
	/* boundaries of each sequence length, and a mix */
	static const char *const ok[] = {
		"\xc2\x80", "\xdf\xbf", "\xe0\xa0\x80", "\xed\x9f\xbf", "\xee\x80\x80", "\xef\xbf\xbf",
		"\xf0\x90\x80\x80", "\xf4\x8f\xbf\xbf", "caf\xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80",
		"\xe2\x80\xa8\xe2\x80\xa9", /* U+2028/9: valid JSON, passed through */
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(*ok); i++) {
		char want[64];
		snprintf(want, sizeof(want), "\"%s\"", ok[i]);
		check_str(ok[i], strlen(ok[i]), want);
	}
	(void)state;
}

#define R "\xef\xbf\xbd" /* U+FFFD */

static void test_utf8_invalid(void **state)
{
	CHECK("\xff", "\"" R "\"");
	CHECK("a\xffz", "\"a" R "z\"");
	CHECK("\xfe\xfe", "\"" R R "\"");
	CHECK("\x80", "\"" R "\"");                       /* stray continuation */
	CHECK("a\xc3", "\"a" R "\"");                     /* truncated at the end */
	CHECK("\xc3x", "\"" R "x\"");                     /* missing continuation */
	CHECK("\xc0\xaf", "\"" R R "\"");                 /* overlong '/' */
	CHECK("\xc1\xbf", "\"" R R "\"");
	CHECK("\xe0\x80\xaf", "\"" R R R "\"");           /* overlong, 3 bytes */
	CHECK("\xf0\x80\x80\xaf", "\"" R R R R "\"");     /* overlong, 4 bytes */
	CHECK("\xed\xa0\x80", "\"" R R R "\"");           /* surrogate U+D800 */
	CHECK("\xf4\x90\x80\x80", "\"" R R R R "\"");     /* U+110000 */
	CHECK("\xf5\x80\x80\x80", "\"" R R R R "\"");
	CHECK("\xe6\xbc", "\"" R "\"");                   /* 2 of 3 bytes: one maximal subpart */
	CHECK("\xe6\xbcx\xe6\xbc\xa2", "\"" R "x\xe6\xbc\xa2\"");
	CHECK("\xf0\x9f\x98", "\"" R "\"");
	CHECK("\xf0\x9f\x98\"", "\"" R "\\\"\"");         /* the quote after it is still escaped */
	CHECK("\xe6\xbc\n", "\"" R "\\n\"");
	(void)state;
}

static char *doc(void (*fn)(struct json_out *), int want_err)
{
	struct buf b;
	bopen(&b);
	fn(&b.j);
	assert_int_equal(jout_finish(&b.j), want_err);
	return bclose(&b);
}

static void nested(struct json_out *j)
{
	jout_object(j, NULL, JOUT_BLOCK);
	jout_str(j, "path", "a\"b");
	jout_u64(j, "n", 18446744073709551615ull);
	jout_i64(j, "neg", -5);
	jout_bool(j, "t", true);
	jout_null(j, "none");
	jout_str(j, "nulls", NULL);
	jout_object(j, "erase_count", JOUT_INLINE);
	jout_u64(j, "min", 1);
	jout_num(j, "mean", "%.4f", 2.0);
	jout_u64(j, "max", 3);
	jout_end(j);
	jout_array(j, "counts", JOUT_INLINE);
	for (int i = 0; i < 3; i++)
		jout_u64(j, NULL, (uint64_t)i);
	jout_end(j);
	jout_array(j, "empty", JOUT_INLINE);
	jout_end(j);
	jout_object(j, "empty_block", JOUT_BLOCK);
	jout_end(j);
	jout_array(j, "rows", JOUT_BLOCK);
	for (int i = 0; i < 2; i++) {
		jout_object(j, NULL, JOUT_INLINE);
		jout_i64(j, "i", i);
		jout_end(j);
	}
	jout_end(j);
	jout_object(j, "long", JOUT_INLINE);
	jout_u64(j, "a", 1);
	jout_break(j);
	jout_u64(j, "b", 2);
	jout_object(j, "sub", JOUT_BLOCK);
	jout_u64(j, "c", 3);
	jout_end(j);
	jout_break(j);
	jout_end(j);
	jout_end(j);
}

static void test_nesting(void **state)
{
	char *t = doc(nested, JOUT_OK);
	assert_string_equal(t, "{\n"
			       "  \"path\": \"a\\\"b\",\n"
			       "  \"n\": 18446744073709551615,\n"
			       "  \"neg\": -5,\n"
			       "  \"t\": true,\n"
			       "  \"none\": null,\n"
			       "  \"nulls\": null,\n"
			       "  \"erase_count\": {\"min\": 1, \"mean\": 2.0000, \"max\": 3},\n"
			       "  \"counts\": [0, 1, 2],\n"
			       "  \"empty\": [],\n"
			       "  \"empty_block\": {},\n"
			       "  \"rows\": [\n"
			       "    {\"i\": 0},\n"
			       "    {\"i\": 1}\n"
			       "  ],\n"
			       "  \"long\": {\"a\": 1,\n"
			       "    \"b\": 2, \"sub\": {\n"
			       "      \"c\": 3\n"
			       "    }\n"
			       "  }\n"
			       "}\n");
	json_t *v = json_loads(t, JSON_DECODE_INT_AS_REAL, NULL); /* 2^64-1 is too big for json_int_t */
	assert_non_null(v);
	json_decref(v);
	free(t);
	(void)state;
}

static void lines(struct json_out *j)
{
	for (int i = 0; i < 2; i++) {
		jout_object(j, NULL, JOUT_INLINE);
		jout_i64(j, "i", i);
		jout_array(j, "a", JOUT_INLINE);
		jout_u64(j, NULL, 7);
		jout_end(j);
		jout_end(j);
	}
	jout_u64(j, NULL, 3);
}

static void test_json_lines(void **state)
{
	char *t = doc(lines, JOUT_OK);
	assert_string_equal(t, "{\"i\": 0, \"a\": [7]}\n{\"i\": 1, \"a\": [7]}\n3\n");
	free(t);
	(void)state;
}

static void numbers(struct json_out *j)
{
	jout_array(j, NULL, JOUT_INLINE);
	jout_num(j, NULL, "%.4f", 1.0);
	jout_num(j, NULL, "%.6g", 1e6);
	jout_num(j, NULL, "%.6g", 1e-5);
	jout_num(j, NULL, "%.10g", 0.1742061492);
	jout_num(j, NULL, "%.0f", 2.5e9);
	jout_num(j, NULL, "%e", -1.5);
	jout_num(j, NULL, "%g", 0.0);
	jout_num(j, NULL, "%.6g", NAN);
	jout_num(j, NULL, "%.6g", INFINITY);
	jout_num(j, NULL, "%.4f", -INFINITY);
	jout_num(j, NULL, "%.2f", 1.797e308);
	jout_end(j);
}

static void test_numbers(void **state)
{
	char *t = doc(numbers, JOUT_OK);
	const char *want = "[1.0000, 1e+06, 1e-05, 0.1742061492, 2500000000, -1.500000e+00, 0, null, null, null, ";
	assert_memory_equal(t, want, strlen(want));
	json_t *v = json_loads(t, 0, NULL);
	assert_non_null(v);
	assert_int_equal(json_array_size(v), 11);
	assert_true(json_is_null(json_array_get(v, 7)));
	json_decref(v);
	free(t);
	/* a decimal comma locale still gives '.' (when such a locale is installed) */
	if (setlocale(LC_NUMERIC, "de_DE.UTF-8") || setlocale(LC_NUMERIC, "fr_FR.UTF-8")) {
		struct buf b;
		bopen(&b);
		jout_num(&b.j, NULL, "%.4f", 1.5);
		assert_int_equal(jout_finish(&b.j), JOUT_OK);
		t = bclose(&b);
		assert_string_equal(t, "1.5000\n");
		free(t);
		setlocale(LC_NUMERIC, "C");
	}
	(void)state;
}

static void test_bad_formats(void **state)
{
	static const char *const bad[] = {"%d", "%s", "%.6gx", "%lf", "%5.2f", "x%g", "%.", "%.123f", "%G", "%a", ""};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		struct buf b;
		bopen(&b);
		jout_array(&b.j, NULL, JOUT_INLINE);
		jout_num(&b.j, NULL, bad[i], 1.0);
		jout_u64(&b.j, NULL, 1); /* nothing after the first error */
		jout_end(&b.j);
		assert_int_equal(jout_finish(&b.j), JOUT_E_FORMAT);
		char *t = bclose(&b);
		assert_string_equal(t, "[");
		free(t);
	}
	(void)state;
}

static void test_max_depth(void **state)
{
	struct buf b;
	bopen(&b);
	for (int i = 0; i < JOUT_MAX_DEPTH; i++)
		jout_array(&b.j, NULL, JOUT_INLINE);
	assert_int_equal(jout_error(&b.j), JOUT_OK);
	jout_array(&b.j, NULL, JOUT_INLINE);
	assert_int_equal(jout_error(&b.j), JOUT_E_DEPTH);
	for (int i = 0; i < JOUT_MAX_DEPTH; i++)
		jout_end(&b.j);
	assert_int_equal(jout_finish(&b.j), JOUT_E_DEPTH);
	char *t = bclose(&b);
	assert_int_equal(strlen(t), JOUT_MAX_DEPTH); /* the 16 brackets, nothing more */
	free(t);
	/* exactly the maximum is fine */
	bopen(&b);
	for (int i = 0; i < JOUT_MAX_DEPTH; i++)
		jout_array(&b.j, NULL, JOUT_INLINE);
	for (int i = 0; i < JOUT_MAX_DEPTH; i++)
		jout_end(&b.j);
	assert_int_equal(jout_finish(&b.j), JOUT_OK);
	free(bclose(&b));
	(void)state;
}

static void key_in_array(struct json_out *j)
{
	jout_array(j, NULL, JOUT_BLOCK);
	jout_u64(j, "k", 1);
}
static void no_key_in_object(struct json_out *j)
{
	jout_object(j, NULL, JOUT_BLOCK);
	jout_u64(j, NULL, 1);
}
static void key_at_top(struct json_out *j)
{
	jout_u64(j, "k", 1);
}
static void end_nothing(struct json_out *j)
{
	jout_u64(j, NULL, 1);
	jout_end(j);
}
static void unfinished(struct json_out *j)
{
	jout_object(j, NULL, JOUT_BLOCK);
	jout_u64(j, "k", 1);
}
static void break_in_block(struct json_out *j)
{
	jout_object(j, NULL, JOUT_BLOCK);
	jout_break(j);
}
static void break_at_top(struct json_out *j)
{
	jout_break(j);
}

static void test_misuse(void **state)
{
	void (*fns[])(struct json_out *) = {key_in_array, no_key_in_object, key_at_top, end_nothing,
					    unfinished, break_in_block, break_at_top};
	for (size_t i = 0; i < sizeof(fns) / sizeof(*fns); i++)
		free(doc(fns[i], JOUT_E_STATE));
	(void)state;
}

static void test_io_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	if (!f)
		skip();
	struct json_out j;
	jout_init(&j, f);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_str(&j, "k", "v");
	jout_end(&j);
	assert_int_equal(jout_finish(&j), JOUT_E_IO);
	fclose(f);
	assert_non_null(jout_strerror(JOUT_E_IO));
	(void)state;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
	/* independent of json.c: decode by the book and check the ranges */
	for (size_t i = 0; i < n;) {
		unsigned c = s[i], need, cp;
		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0)
			need = 1, cp = c & 0x1f;
		else if ((c & 0xf0) == 0xe0)
			need = 2, cp = c & 0x0f;
		else if ((c & 0xf8) == 0xf0)
			need = 3, cp = c & 0x07;
		else
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80)
				return false;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		static const unsigned min[] = {0, 0x80, 0x800, 0x10000};
		if (cp < min[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

static void test_random_bytes(void **state)
{
	uint64_t r = 88172645463325252ull;
	unsigned char in[24];
	for (int it = 0; it < 20000; it++) {
		size_t n = 0, len;
		r ^= r << 13, r ^= r >> 7, r ^= r << 17;
		len = r % sizeof(in);
		for (size_t i = 0; i < len; i++) {
			r ^= r << 13, r ^= r >> 7, r ^= r << 17;
			/* bias toward bytes that matter: controls, quotes, UTF-8 leads and continuations */
			static const unsigned char pick[] = {0, 1, '\n', '\t', 0x1f, '"', '\\', 'a', 0x7f, 0x80,
							     0xbf, 0xc2, 0xc0, 0xe0, 0xe6, 0xed, 0xf0, 0xf4, 0xff, 0xa0};
			in[n++] = (r >> 8) % 3 ? pick[(r >> 16) % sizeof(pick)] : (unsigned char)(r >> 24);
		}
		char *t = emit_str((const char *)in, n);
		json_error_t e;
		json_t *v = json_loads(t, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
		if (!v)
			fail_msg("iteration %d: jansson rejects %s: %s", it, t, e.text);
		assert_true(json_is_string(v));
		if (valid_utf8(in, n)) {
			assert_int_equal(json_string_length(v), n);
			assert_memory_equal(json_string_value(v), in, n);
		}
		json_decref(v);
		free(t);
	}
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_control_chars), cmocka_unit_test(test_utf8_passes),
		cmocka_unit_test(test_utf8_invalid),  cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_json_lines),    cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_bad_formats),   cmocka_unit_test(test_max_depth),
		cmocka_unit_test(test_misuse),        cmocka_unit_test(test_io_error),
		cmocka_unit_test(test_random_bytes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
