/*
 * lift.h - a captured block trace of a KV store, back to KV requests (docs/lift.md).
 *
 * lift_run() reads any block trace the readers know, finds the store's layout in it (the
 * metadata region, the slot size classes and which class is the linear state), names every
 * object by its slot and version (a write to a slot starts a new version), cuts the I/O into
 * requests (at the capture mode's fences, else at chain breaks), rebuilds each request's chain
 * of chunks and the state it keeps, groups requests into sessions by where their cached prefix
 * ends, and writes the AIPerf JSONL the KV readers take. lift_compare() measures a lifted trace
 * against the original.
 */
#ifndef FG_LIFT_H
#define FG_LIFT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"
#include "trace.h"

/* How requests are cut: at the fences of a sequential capture, or by demultiplexing interleaved
 * ones; auto: demultiplex when the capture has no fences or a read follows a write between two
 * of them. */
enum lift_split { LIFT_SPLIT_AUTO = 0, LIFT_SPLIT_SEQ = 1, LIFT_SPLIT_DEMUX = 2 };

struct lift_opts {
	enum store_layout layout;
	enum lift_split split;
	uint64_t meta_bytes;     /* rawblock: 0 = infer */
	uint64_t slot[2];        /* slot bytes of a chunk and of a state (0 = infer) */
	uint32_t block_tokens;   /* 0: from model */
	uint64_t bytes_per_token; /* the model's full-attention KV per token (for block_tokens) */
	bool have_model;
	double speed; /* the capture ran at this many times trace speed: gaps are multiplied (0: 1) */
};

struct lift_result {
	/* what was found (inferred or given) */
	uint64_t meta_bytes, slot[2], nclasses;
	uint32_t block_tokens;
	bool meta_inferred, slot_inferred, fenced, demuxed;
	/* what was rebuilt */
	uint64_t requests, sessions, chunks, states, reads, writes;
	uint64_t checkpoints, discards, flushes;
	uint64_t tokens_estimated; /* requests whose last block's tokens are not in the capture */
	/* warnings (the trace is still usable): each a count, and the first one's text */
	uint64_t unwritten_reads;  /* reads of a slot never written in the capture */
	uint64_t chain_breaks;     /* a read that does not continue the request's chain */
	uint64_t read_after_write; /* a read after the request's writes (interleaved requests?) */
	uint64_t orphan_headers;   /* rawblock: a header write without its payload */
	uint64_t other_ios;        /* discards and reads outside any slot */
	uint64_t uncertain;        /* demux: I/Os given to a request among several candidates */
	uint64_t uncertain_requests; /* demux: lifted requests with such an I/O */
	char first_warning[512];
	/* FDP placement IDs on the puts (a store's own record carries them: blk-csv's 5th field;
	 * a block-layer capture cannot see them): per ID, the chunks and states put with it */
	uint64_t placed_writes;
	unsigned nplacement;
	struct lift_placement {
		uint16_t pid;
		uint64_t chunks, states;
	} placement[16]; /* the first 16 IDs seen */
};

/* Lift the block trace at path; the requests go to out as JSONL. 0, or -1 with err (the trace
 * cannot be read, or it is not a capture of this layout: the message says why). */
int lift_run(const char *path, const struct trace_opts *to, const struct lift_opts *o, FILE *out,
             struct lift_result *r, char *err, size_t errlen);

struct lift_compare {
	uint64_t original, invisible; /* original requests; those with no blocks (no I/O) */
	uint64_t lifted, exact;       /* exact: chain and session as the original's */
	uint64_t exact_tokens;        /* and the token count too (time: time_wrong) */
	uint64_t chain_wrong, session_wrong, tokens_wrong, time_wrong;
	uint64_t token_abs_err, tokens;
};
/* Compare the lifted trace with the original, request by request in order, up to renaming of
 * block and session ids. 0, or -1 with err. */
int lift_compare(const char *lifted, const char *original, const struct trace_opts *to,
                 struct lift_compare *c, char *err, size_t errlen);

#endif
