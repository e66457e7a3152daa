/*
 * trace.h - trace readers: block I/O traces and KV-request traces, one streaming API.
 *
 * Block traces yield struct blk_io records in file order; KV traces yield struct kv_request
 * records in time order (sessions merged). Formats are detected from the content (and, for a
 * directory, from its *.json files); .zst files are decompressed on the fly. Every malformed
 * record is reported as "FILE:LINE: reason"; with opts.skip_bad it is counted and skipped.
 * Formats are documented in traces/FORMATS.md.
 */
#ifndef FG_TRACE_H
#define FG_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum trace_format {
	TF_UNKNOWN,
	TF_BLK_CSV,   /* canonical block CSV: time_ns,op,lba,bytes (also scripts/capture-blk.bt) */
	TF_BIOSNOOP,  /* text output of libbpf-tools biosnoop */
	TF_FTRACE,    /* block_rq_issue/complete tracepoint text (tracefs, trace-cmd, perf script) */
	TF_MOONCAKE,  /* Mooncake JSONL: timestamp(ms), input_length, output_length, hash_ids */
	TF_BAILIAN,   /* Alibaba Bailian JSONL: chat_id, parent_chat_id, timestamp(s), turn, ... */
	TF_AIPERF,    /* AIPerf mooncake_trace JSONL: Mooncake fields + session_id, delay(ms) */
	TF_WEKA,      /* WEKA / Claude Code: a directory of per-conversation JSON files */
};

/* One block I/O. op: 'R' read, 'W' write, 'D' discard, 'F' flush. */
struct blk_io {
	uint64_t t_ns;
	uint64_t lba; /* 512-byte sectors */
	uint64_t bytes;
	char op;
	bool placed;  /* a write with an FDP placement ID (blk-csv's optional 5th field) */
	uint16_t pid; /* that ID (DSPEC) */
};

/* One KV-cache request. blocks[] are prefix block ids (namespaced per file where needed). */
struct kv_request {
	double t;              /* seconds since the trace start */
	uint64_t session;      /* session id; KV_NO_SESSION when the trace has none */
	uint64_t parent;       /* parent session (sub-agent, Bailian parent chat), or KV_NO_SESSION */
	uint32_t block_tokens; /* tokens per block */
	uint32_t input_tokens, output_tokens;
	uint32_t nblocks;
	const uint64_t *blocks; /* valid until the next trace_next_kv() call */
};
#define KV_NO_SESSION UINT64_MAX

/* The leading ids b[0..nb) shares with a[0..na): what a turn keeps of its session's previous
 * turn (the peak active KV and trace info count only the rest). */
static inline uint32_t kv_ids_kept(const uint64_t *a, uint32_t na, const uint64_t *b, uint32_t nb)
{
	uint32_t n = na < nb ? na : nb, k = 0;
	while (k < n && a[k] == b[k])
		k++;
	return k;
}

struct trace_opts {
	bool skip_bad;           /* count and skip malformed records instead of failing */
	enum trace_format force; /* TF_UNKNOWN = detect */
	uint32_t block_tokens;   /* override (AIPerf has no block size in the data; default 512) */
	double session_rate;     /* WEKA: Poisson session arrivals per second (default 0.05) */
	double stagger;          /* WEKA: fixed gap between session starts in s (>0 overrides rate) */
	uint64_t seed;           /* WEKA arrival seed */
	/* one fold of the sessions (folds 0: the whole trace; else fold 1..folds). A WEKA
	 * directory's conversations are dealt out whole and evenly: sorted by a hash of their file
	 * name, the i-th goes to fold i mod folds + 1, and the kept ones arrive as the whole set's
	 * would (the same --session-rate). Any other format with sessions keeps the requests whose
	 * root session (the parent of a sub-agent, else the session) hashes to the fold
	 * (trace_fold_of()). A trace without sessions (Mooncake, whose requests nearly all share
	 * a first block) is cut by kv_trace_load() into folds equal spans of its time; a streaming
	 * reader keeps all of it. */
	uint32_t fold, folds;
};
/* The fold (1..folds) of a key, for formats dealt out by hash. */
uint32_t trace_fold_of(uint64_t key, uint32_t folds);
void trace_opts_default(struct trace_opts *o);
/* Whether a and b read a trace the same way (every field equal). */
bool trace_opts_same(const struct trace_opts *a, const struct trace_opts *b);

struct trace;
/* Open a file or directory. On failure returns NULL with a message in err. */
struct trace *trace_open(const char *path, const struct trace_opts *o, char *err, size_t errlen);
void trace_close(struct trace *t);
enum trace_format trace_format(const struct trace *t);
const char *trace_format_name(enum trace_format f);
/* The format named s (as trace_format_name() spells it), or TF_UNKNOWN. */
enum trace_format trace_format_parse(const char *s);
bool trace_is_block(const struct trace *t);
bool trace_format_is_block(enum trace_format f);
/* Next record: 1 = got one, 0 = end, -1 = error (message from trace_error()). */
int trace_next_blk(struct trace *t, struct blk_io *io);
int trace_next_kv(struct trace *t, struct kv_request *rq);
const char *trace_error(const struct trace *t);
uint64_t trace_skipped(const struct trace *t); /* malformed records skipped (skip_bad) */
uint64_t trace_bytes_read(const struct trace *t); /* input bytes consumed (decompressed) */
/* The share of a text trace's file read so far (compressed bytes for a compressed one), for a
 * progress line: 0..1, or NaN when not known. */
double trace_read_share(const struct trace *t);
/* "FILE:LINE" of the record last returned (line-based formats), for the caller's own errors. */
const char *trace_where(struct trace *t);

/* A whole KV-request trace in memory (kvmem.c), to replay it many times for one parse. */
struct kv_trace {
	struct kv_request *rq; /* in trace order; blocks point into bufs (requests may share ids) */
	uint64_t n, nids;      /* requests, block ids they hold */
	uint64_t **bufs;       /* owned; none when the caller built rq itself */
	uint64_t *buflen;      /* ids in each buffer */
	uint64_t nbufs, stored; /* ids actually stored */
	uint64_t skipped;       /* malformed records skipped (trace_opts.skip_bad) */
	char skipped_last[512]; /* the last one's "FILE:LINE: why" ("" when none) */
};
int kv_trace_load(const char *path, const struct trace_opts *o, struct kv_trace *kt, char *err, size_t errlen);
void kv_trace_free(struct kv_trace *kt);

#endif
