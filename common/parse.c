/*
 * parse.c - key=value splitting and size parsing (parse.h).
 *
 * Why it exists. The same "key=value" split was written four times (the INI preset reader, the
 * snapshot's embedded config, the CLI's --set, the nbdkit plugin's set=), and sizes with k/M/G/T
 * suffixes were parsed twice with different rules (the config refused "4B", the CLI took it).
 * Here each rule is written once: the first '=' splits (a value may hold '='), an empty key
 * is an error, and a size suffix is binary (k = 1024), case-insensitive, with an optional "i"
 * and "B". The functions only report that the text is malformed; the caller names the text in
 * its message, since only it knows where the text came from (a file's line, a flag, a key).
 */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static char *trim(char *s)
{
	char *e = s + strlen(s);

	while (blank(*s))
		s++;
	while (e > s && blank(e[-1]))
		*--e = 0;
	return s;
}

int fg_keyval_split(char *s, unsigned flags, char **key, char **val)
{
	char *eq = strchr(s, '=');
	char *k = s;

	if (!eq)
		return -1;
	if (flags & FG_KEYVAL_TRIM)
		while (k < eq && blank(*k))
			k++;
	if (k == eq)
		return -1;
	*eq = 0;
	*key = flags & FG_KEYVAL_TRIM ? trim(k) : k;
	*val = flags & FG_KEYVAL_TRIM ? trim(eq + 1) : eq + 1;
	return 0;
}

int fg_keyval_split_copy(const char *s, char *key, size_t keylen, const char **val)
{
	const char *eq = strchr(s, '=');

	if (!eq || eq == s)
		return -1;
	if ((size_t)(eq - s) >= keylen)
		return -2;
	memcpy(key, s, (size_t)(eq - s));
	key[eq - s] = 0;
	*val = eq + 1;
	return 0;
}

double fg_size_suffix(const char *s)
{
	static const char units[] = "kmgtp";
	const char *u = *s ? strchr(units, tolower((unsigned char)*s)) : NULL;
	double bin = 1, dec = 1;

	if (!u)
		return !strcmp(s, "") || !strcmp(s, "B") || !strcmp(s, "b") ? 1 : 0;
	for (const char *q = units; q <= u; q++)
		bin *= 1024.0, dec *= 1000.0;
	s++;
	if (!*s || !strcmp(s, "i") || !strcmp(s, "iB"))
		return bin; /* 4k, 100G, 128KiB: binary */
	if (!strcmp(s, "B"))
		return dec; /* 960GB, 4TB: decimal, as drives are sold */
	return 0;      /* (4kb: bits or bytes? refused) */
}

bool fg_parse_size(const char *s, unsigned long long *out)
{
	char *end;
	double v, mul;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno || !(v >= 0))
		return false;
	mul = fg_size_suffix(end);
	/* 2^64 and above do not fit (and NaN/inf never get here: v >= 0 and finite * mul) */
	if (!mul || !(v * mul + 0.5 < 18446744073709551616.0))
		return false;
	*out = (unsigned long long)(v * mul + 0.5);
	return true;
}
