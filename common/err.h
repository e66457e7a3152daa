/*
 * err.h - the one error formatter: every layer reports an error the same way, as text in a
 * caller's buffer plus a status code (the contract of hw/ftl's ftl.h, which the layers above
 * follow). Plain C11, no dependencies. Design: err.c.
 *
 *   if (n == 0)
 *           return fg_err(err, errlen, "%s=0: must be > 0", key);          // -1
 *   return fg_err_rc(err, errlen, FTL_E_IO, "%s: %s", path, strerror(errno)); // FTL_E_IO
 */
#ifndef FG_ERR_H
#define FG_ERR_H

#include <stdarg.h>
#include <stddef.h>

/* Room for one message, a nested one included: a layer that puts an inner message into its own
 * (ftl_create's error inside kv_run's) gives the inner call FG_ERR_LEN bytes, and its own caller
 * gives it FG_ERR_LEN + FG_ERR_CONTEXT, so the outer message never cuts the inner one short. */
#define FG_ERR_LEN 8192
#define FG_ERR_CONTEXT 808

/* Format into err (len bytes, always NUL-terminated, truncated to fit; nothing when err is NULL
 * or len is 0) and return -1, so a failing path is one statement: return fg_err(...). */
int fg_err(char *err, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same, returning rc: for libraries with their own codes (hw/ftl's FTL_E_*). */
int fg_err_rc(char *err, size_t len, int rc, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));
/* The va_list form, for wrappers that add context of their own (a trace's FILE:LINE). */
int fg_verr_rc(char *err, size_t len, int rc, const char *fmt, va_list ap)
        __attribute__((format(printf, 4, 0)));

#endif
