/*
 * err.c - the one error formatter (err.h).
 *
 * Why it exists. Every layer returned errors as "text in the caller's buffer + a status", and
 * each file had grown its own static fail()/bad() wrapper around vsnprintf: five copies, some
 * checking for a NULL buffer and some not. One copy means one behaviour: a NULL or empty buffer
 * is allowed (the caller only wants the status), the text is always NUL-terminated and silently
 * truncated (an error message must never be the reason a program crashes), and the status is
 * the return value so a failing path is one statement.
 */
#include "err.h"

#include <stdio.h>

int fg_verr_rc(char *err, size_t len, int rc, const char *fmt, va_list ap)
{
	if (err && len)
		vsnprintf(err, len, fmt, ap);
	return rc;
}

int fg_err_rc(char *err, size_t len, int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fg_verr_rc(err, len, rc, fmt, ap);
	va_end(ap);
	return rc;
}

int fg_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fg_verr_rc(err, len, -1, fmt, ap);
	va_end(ap);
	return -1;
}
