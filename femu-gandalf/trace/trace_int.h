/* trace_int.h - state shared by the trace readers (trace.c, blk.c, kv.c). Internal. */
#ifndef FG_TRACE_INT_H
#define FG_TRACE_INT_H

#include <limits.h>

#include "lineio.h"
#include "trace.h"

struct kv_buffered; /* kv.c: requests loaded and sorted up front (WEKA, AIPerf) */
struct idtab;       /* kv.c: the hash_ids side table of the record being parsed */

struct trace {
	enum trace_format fmt;
	struct trace_opts o;
	char path[PATH_MAX];  /* as the user named it ("-": standard input), for messages */
	char spool[64];       /* a pipe's or device's data, copied: the file to open, or "" */
	int spool_fd;         /* the copy's descriptor (its name is unlinked), or -1 */
	struct lineio lio;
	char err[PATH_MAX + 600];
	char where[PATH_MAX + 32];
	uint64_t skipped, bytes_loaded;
	/* block traces */
	int bio_que;       /* biosnoop output has the QUE(ms) column */
	uint64_t last_t_ns;
	int ft_event;      /* blk-ftrace: the event kept (1 issue, 2 complete), 0 until the first */
	unsigned ft_dev[2]; /* blk-ftrace: the device (major, minor) of the first event */
	/* KV traces */
	uint64_t *blocks;
	uint64_t blocks_cap;
	double last_t;
	void *sessions;    /* GHashTable: session key -> dense id + last time */
	uint64_t nsessions;
	struct kv_buffered *buf;
	struct idtab *ids;
};

/* Open t's text for reading line by line (the spooled copy of a pipe, or the file itself);
 * messages name t->path. 0, or -1 with t->err filled. */
int trace_lineio_open(struct trace *t);
/* The next line of a text trace: 1, 0 at the end, -1 on error (in t->err). A line holding a NUL
 * byte is a malformed record (trace_bad(): skipped with skip_bad), never cut short at the NUL. */
int trace_next_line(struct trace *t, char **line, size_t *len);

/*
 * A malformed record: its error, as "FILE:LINE: why", goes into t->err. Returns 0 when
 * --skip-bad skips it, -1 to stop: exactly what a reader's record function returns for a bad
 * record (1 = a record, 0 = none, -1 = error), so every bad-record path is one statement,
 *	return trace_bad(t, "op '%s': must be R, W, D or F", f[1]);
 */
int trace_bad(struct trace *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int blk_open(struct trace *t);
int blk_ftrace_event(const char *line); /* 1 block_rq_issue, 2 block_rq_complete, 0 neither */
int blk_next(struct trace *t, struct blk_io *io);
int kv_open(struct trace *t);
int kv_next(struct trace *t, struct kv_request *rq);
void kv_free(struct trace *t);

#endif
