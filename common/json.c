/*
 * json.c - the one JSON emitter (json.h).
 *
 * Why it exists. Scripts read femu-gandalf's --json output, the nbdkit plugin's stats file and
 * synth's JSONL with json.loads or jq, so each document must be valid JSON whatever it holds.
 * Formatting it by hand with printf got three things wrong in places: strings (a file path with
 * a '"', a '\' or a control character broke the document), commas (a skipped array element left
 * a trailing one) and non-finite numbers (printf's "inf" and "nan" are not JSON). jansson is a
 * dependency of the trace readers but not of hw/ftl, which must stay plain C + libm and prints
 * its stats as JSON, and a DOM library would build every document in memory and print numbers
 * in its own format. This writer is small, streams to a FILE*, and keeps the output byte-stable:
 * numbers are printed with the caller's printf format (so "%.4f" stays "1.0000"), and the layout
 * (block or inline containers, jout_break) reproduces the documents' historical shape. The
 * names start with jout_ because jansson, linked into the same programs, owns json_*.
 *
 * Invariants.
 *  - Output is valid JSON and valid UTF-8 as long as jout_error() is JOUT_OK: the writer alone
 *    writes separators, so a caller cannot produce a missing or trailing comma; keys and string
 *    values are escaped ('"', '\', every byte below 0x20; ill-formed UTF-8 replaced by U+FFFD
 *    per maximal subpart, as Python's errors="replace" does); DEL and U+2028/U+2029 are valid
 *    JSON and pass through.
 *  - Numbers: integers exactly (PRIu64/PRId64); doubles through a format restricted to
 *    %[.N]{g,f,e}, with whatever the current locale uses as decimal point rewritten to '.', and null
 *    for NaN and infinities.
 *  - Errors are sticky: the first misuse (a key in an array, none in an object, too deep, a bad
 *    number format, closing nothing) or stream error stops all further output, and
 *    jout_finish() reports it, so a bug yields a truncated document and an error, never a
 *    well-formed lie. Depth is bounded by JOUT_MAX_DEPTH; no memory is allocated.
 *  - Layout: a BLOCK container puts each value on its own line indented 2 spaces per open
 *    container and its closing bracket on a line of its own (an empty one is "{}"); an INLINE
 *    one writes ", " between values and closes on the same line unless jout_break() asked for a
 *    new line. A completed top-level value is followed by "\n".
 */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <string.h>

void jout_init(struct json_out *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
}

static void fail(struct json_out *j, int err)
{
	if (!j->err)
		j->err = err;
}

static void indent(struct json_out *j, int depth)
{
	fputc('\n', j->f);
	for (int i = 0; i < depth; i++)
		fputs("  ", j->f);
}

/* Length of the well-formed UTF-8 sequence at s (1..4 bytes), or minus the length of its
 * maximal ill-formed subpart (Unicode, chapter 3, "U+FFFD substitution of maximal subparts"). */
static int utf8_seq(const unsigned char *s, size_t len)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	int n;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		return -1; /* a continuation byte, C0/C1 (overlong) or F5..FF */
	}
	for (int k = 1; k < n; k++) {
		if ((size_t)k >= len || s[k] < lo || s[k] > hi)
			return -k;
		lo = 0x80, hi = 0xbf;
	}
	return n;
}

static void put_string(FILE *f, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0; /* start of the bytes not yet written, which need no escaping */
	fputc('"', f);
	for (size_t i = 0; i < len;) {
		unsigned c = s[i];
		if (c >= 0x80) {
			int n = utf8_seq(s + i, len - i);
			if (n > 0) {
				i += (size_t)n;
				continue;
			}
			fwrite(s + run, 1, i - run, f);
			fputs("\xef\xbf\xbd", f); /* U+FFFD */
			i += (size_t)-n;
			run = i;
			continue;
		}
		if (c >= 0x20 && c != '"' && c != '\\') {
			i++;
			continue;
		}
		fwrite(s + run, 1, i - run, f);
		fputc('\\', f);
		switch (c) {
		case '"': fputc('"', f); break;
		case '\\': fputc('\\', f); break;
		case '\b': fputc('b', f); break;
		case '\f': fputc('f', f); break;
		case '\n': fputc('n', f); break;
		case '\r': fputc('r', f); break;
		case '\t': fputc('t', f); break;
		default:
			fputs("u00", f);
			fputc(hex[c >> 4], f);
			fputc(hex[c & 15], f);
			break;
		}
		run = ++i;
	}
	fwrite(s + run, 1, len - run, f);
	fputc('"', f);
}

/* Before a value: check the key, write the separator, the line break and the key. */
static bool begin(struct json_out *j, const char *key)
{
	if (j->err)
		return false;
	if (!j->depth) {
		if (key) {
			fail(j, JOUT_E_STATE);
			return false;
		}
		return true;
	}
	struct jout_level *l = &j->lv[j->depth - 1];
	if (l->array ? key != NULL : key == NULL) {
		fail(j, JOUT_E_STATE);
		return false;
	}
	if (l->count)
		fputc(',', j->f);
	if (!l->inline_ || l->brk)
		indent(j, j->depth);
	else if (l->count)
		fputc(' ', j->f);
	l->brk = false;
	l->count++;
	if (key) {
		put_string(j->f, key, strlen(key));
		fputs(": ", j->f);
	}
	return true;
}

/* After a value: a finished top-level value ends its line. */
static void done(struct json_out *j)
{
	if (!j->depth)
		fputc('\n', j->f);
	if (ferror(j->f))
		fail(j, JOUT_E_IO);
}

static void open_container(struct json_out *j, const char *key, int flags, bool array)
{
	if (!j->err && j->depth >= JOUT_MAX_DEPTH)
		fail(j, JOUT_E_DEPTH);
	if (!begin(j, key))
		return;
	fputc(array ? '[' : '{', j->f);
	j->lv[j->depth++] = (struct jout_level){.array = array, .inline_ = flags & JOUT_INLINE};
}

void jout_object(struct json_out *j, const char *key, int flags)
{
	open_container(j, key, flags, false);
}

void jout_array(struct json_out *j, const char *key, int flags)
{
	open_container(j, key, flags, true);
}

void jout_end(struct json_out *j)
{
	if (j->err)
		return;
	if (!j->depth) {
		fail(j, JOUT_E_STATE);
		return;
	}
	struct jout_level *l = &j->lv[--j->depth];
	if ((!l->inline_ && l->count) || l->brk)
		indent(j, j->depth);
	fputc(l->array ? ']' : '}', j->f);
	done(j);
}

void jout_break(struct json_out *j)
{
	if (j->err)
		return;
	if (!j->depth || !j->lv[j->depth - 1].inline_)
		fail(j, JOUT_E_STATE);
	else
		j->lv[j->depth - 1].brk = true;
}

void jout_strn(struct json_out *j, const char *key, const char *s, size_t len)
{
	if (!begin(j, key))
		return;
	put_string(j->f, s, len);
	done(j);
}

void jout_str(struct json_out *j, const char *key, const char *s)
{
	if (!s)
		jout_null(j, key);
	else
		jout_strn(j, key, s, strlen(s));
}

void jout_u64(struct json_out *j, const char *key, uint64_t v)
{
	if (!begin(j, key))
		return;
	fprintf(j->f, "%" PRIu64, v);
	done(j);
}

void jout_i64(struct json_out *j, const char *key, int64_t v)
{
	if (!begin(j, key))
		return;
	fprintf(j->f, "%" PRId64, v);
	done(j);
}

void jout_bool(struct json_out *j, const char *key, bool v)
{
	if (!begin(j, key))
		return;
	fputs(v ? "true" : "false", j->f);
	done(j);
}

void jout_null(struct json_out *j, const char *key)
{
	if (!begin(j, key))
		return;
	fputs("null", j->f);
	done(j);
}

/* "%g", "%f", "%e", with an optional precision of one or two digits ("%.6g"). */
static bool num_format_ok(const char *fmt)
{
	const char *p = fmt;
	if (*p++ != '%')
		return false;
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return false;
		p++;
		if (*p >= '0' && *p <= '9')
			p++;
	}
	return (*p == 'g' || *p == 'f' || *p == 'e') && !p[1];
}

void jout_num(struct json_out *j, const char *key, const char *fmt, double v)
{
	if (!j->err && !num_format_ok(fmt))
		fail(j, JOUT_E_FORMAT);
	if (!begin(j, key))
		return;
	if (!isfinite(v)) {
		fputs("null", j->f);
	} else {
		/* %.99f of DBL_MAX: 309 integer digits + '.' + 99 + sign < 512 */
		char buf[512], out[512];
		int n = snprintf(buf, sizeof(buf), fmt, v);
		size_t k = 0;
		bool dp = false;
		for (int i = 0; i < n && i < (int)sizeof(buf) - 1; i++) {
			char c = buf[i];
			if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == 'e') {
				out[k++] = c;
				dp = false;
			} else if (!dp) { /* the locale's decimal point, whatever its bytes */
				out[k++] = '.';
				dp = true;
			}
		}
		fwrite(out, 1, k, j->f);
	}
	done(j);
}

int jout_error(const struct json_out *j)
{
	return j->err;
}

int jout_finish(struct json_out *j)
{
	if (!j->err && j->depth)
		fail(j, JOUT_E_STATE);
	if (fflush(j->f) || ferror(j->f))
		fail(j, JOUT_E_IO);
	return j->err;
}

const char *jout_strerror(int err)
{
	switch (err) {
	case JOUT_OK: return "no error";
	case JOUT_E_DEPTH: return "JSON nested too deep";
	case JOUT_E_STATE: return "JSON writer misused (key, nesting or an unfinished document)";
	case JOUT_E_FORMAT: return "JSON number format not %g, %f or %e";
	case JOUT_E_IO: return "write error";
	default: return "unknown JSON error";
	}
}
