/*
 * parse.h - the one key=value splitter and the one size parser, shared by the drive's config
 * (hw/ftl: presets, --set, snapshots), the nbdkit plugin's set= and the CLI's size options.
 * Plain C11, no dependencies. Design: parse.c.
 *
 *   char *k, *v;                        // "  page_size = 16k " -> "page_size", "16k"
 *   if (fg_keyval_split(line, FG_KEYVAL_TRIM, &k, &v))
 *           return fg_err(err, len, "%s: expected key=value", line);
 *   unsigned long long n;               // "1.5T" -> 1649267441664
 *   if (!fg_parse_size("1.5T", &n)) ...
 */
#ifndef FG_PARSE_H
#define FG_PARSE_H

#include <stdbool.h>
#include <stddef.h>

/* fg_keyval_split() flags */
enum { FG_KEYVAL_TRIM = 1 }; /* strip blanks (' ', '\t', '\r', '\n') around the key and the value */

/*
 * Split s in place at its first '=' (the value may hold more '='): *key is s, *val the text
 * after the '=', which is overwritten by a NUL. 0 on success; -1, s unchanged, when there is no
 * '=' or the key is empty.
 */
int fg_keyval_split(char *s, unsigned flags, char **key, char **val);

/*
 * The same on a string the caller cannot modify: the key is copied into key (keylen bytes), *val
 * points into s. -1 when there is no '=' or the key is empty, -2 when the key does not fit.
 */
int fg_keyval_split_copy(const char *s, char *key, size_t keylen, const char **val);

/*
 * The multiplier of a size suffix: 1 for "", "B" or "b". A unit letter k, m, g, t or p (either
 * case) alone or followed by "i" or "iB" is binary: 2^10, 2^20, 2^30, 2^40, 2^50 ("4k",
 * "100G", "128KiB", "1TiB"). Followed by "B" it is decimal, as drives are sold: 10^3 .. 10^15
 * ("960GB", "4TB", "1PB"). 0 for anything else, "4kb" included (bits or bytes?).
 */
double fg_size_suffix(const char *s);

/*
 * A byte count: a non-negative number (fractions allowed: "1.5T") with an optional
 * fg_size_suffix(), rounded to the nearest byte. False on anything else, *out unchanged.
 */
bool fg_parse_size(const char *s, unsigned long long *out);

#endif
