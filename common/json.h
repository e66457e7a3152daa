/*
 * json.h - the one JSON emitter: every JSON document femu-gandalf writes goes through it
 * (docs/output.md). A streaming writer over a FILE*: plain C11 + stdio, no dependencies, so
 * hw/ftl and the nbdkit plugin can use it too. Design and invariants: json.c.
 *
 *   struct json_out j;
 *   jout_init(&j, stdout);
 *   jout_object(&j, NULL, JOUT_BLOCK);             // {    (a top-level value has no key)
 *   jout_str(&j, "path", path);                    //   "path": "...",  (escaped)
 *   jout_object(&j, "erase_count", JOUT_INLINE);   //   "erase_count": {"min": 1, "mean": 2.0000}
 *   jout_u64(&j, "min", 1);
 *   jout_num(&j, "mean", "%.4f", 2.0);
 *   jout_end(&j);
 *   jout_end(&j);                                  // }\n
 *   if (jout_finish(&j)) ... jout_strerror(jout_error(&j)) ...
 *
 * Members of an object take a key, array elements and top-level values take NULL. The writer
 * puts the commas, line breaks and indentation; a finished top-level value ends with "\n", so
 * a sequence of top-level values is JSON Lines.
 */
#ifndef FG_JSON_H
#define FG_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Containers nest at most this deep (the top-level one counts as 1). */
#define JOUT_MAX_DEPTH 16

/* Container layouts. BLOCK: each member on its own line, indented two spaces per level.
 * INLINE: members on one line after the opening brace, separated by ", ". */
enum { JOUT_BLOCK = 0, JOUT_INLINE = 1 };

/* Errors (sticky: the first one stops all further output). */
enum {
	JOUT_OK = 0,
	JOUT_E_DEPTH = -1,  /* more than JOUT_MAX_DEPTH open containers */
	JOUT_E_STATE = -2,  /* a key where none belongs or none where one must, jout_end() or
	                     * jout_break() with nothing open, jout_finish() with containers open */
	JOUT_E_FORMAT = -3, /* jout_num(): not "%g"/"%f"/"%e" with an optional precision */
	JOUT_E_IO = -4,     /* the stream reported an error */
};

struct jout_level {
	bool array, inline_, brk;
	unsigned count; /* values written in this container */
};

struct json_out {
	FILE *f;
	int depth; /* open containers */
	int err;   /* JOUT_OK or the first JSON_E_* */
	struct jout_level lv[JOUT_MAX_DEPTH];
};

void jout_init(struct json_out *j, FILE *f);

/* Open an object or an array (flags: JOUT_BLOCK or JOUT_INLINE) and close the innermost one. */
void jout_object(struct json_out *j, const char *key, int flags);
void jout_array(struct json_out *j, const char *key, int flags);
void jout_end(struct json_out *j);
/* In an inline container: start the next member, or the closing bracket, on a new line
 * (indented as a block member would be). For the few long inline objects kept readable. */
void jout_break(struct json_out *j);

/* Strings: NUL-terminated (NULL writes null) or len bytes (may contain NULs). Escaped: '"',
 * '\\' and every control character below 0x20 (\b \f \n \r \t, else \u00XX); valid UTF-8 passes
 * through unchanged; each ill-formed UTF-8 sequence (stray or missing continuation bytes,
 * overlong forms, surrogates, above U+10FFFF) becomes U+FFFD, so the output is always valid
 * UTF-8 and valid JSON whatever bytes a file name holds. */
void jout_str(struct json_out *j, const char *key, const char *s);
void jout_strn(struct json_out *j, const char *key, const char *s, size_t len);
void jout_u64(struct json_out *j, const char *key, uint64_t v);
void jout_i64(struct json_out *j, const char *key, int64_t v);
void jout_bool(struct json_out *j, const char *key, bool v);
void jout_null(struct json_out *j, const char *key);
/* A double printed with fmt, one of %g %f %e (optionally %.Ng etc.), always in the C locale's
 * form; NaN and infinities, which JSON cannot hold, are written as null. */
void jout_num(struct json_out *j, const char *key, const char *fmt, double v);

/* JOUT_OK or the first error. */
int jout_error(const struct json_out *j);
/* After the last value: flushes the stream. Returns JOUT_OK, or the first error (JOUT_E_STATE if
 * a container is still open, JOUT_E_IO if the stream failed). */
int jout_finish(struct json_out *j);
const char *jout_strerror(int err);

#endif
