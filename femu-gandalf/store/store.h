/*
 * store.h - the KV tier simulator as a store: every SSD write, read and TRIM a policy makes
 * becomes real I/O on a block device or file (libaio, O_DIRECT, through replay/aiotarget), laid
 * out as a real offload backend lays it out (docs/store.md):
 *   - lmcache-rawblock: LMCache's raw-block backend (lmcache/v1/storage_backend/raw_block/
 *     core.py): a metadata region at the start with two alternating checkpoint copies, then
 *     slots of round_up(4 KiB header + object, 4 KiB), a freed slot reused newest first, then a
 *     bump pointer; a put writes the header, then the payload; a get reads the payload;
 *   - kvbm: Dynamo KVBM's disk tier (lib/llm/src/block_manager/layout.rs, FullyContiguous): one
 *     preallocated region, block b at b x align_up(bytes per block); freed blocks reused oldest
 *     first. A linear state (KVBM has none) takes a run of whole blocks.
 *   - vllm-disk: vLLM's disk offload (SimpleCPUOffloadConnector, kv_offload_backend="disk";
 *     vllm/v1/simple_kv_offload/disk_backend.py): one file per rank, slot i of
 *     round_up(bytes per block, 4 KiB) at i x slot; slot 0 is BlockPool's null block and never
 *     written; every never-used slot is taken, in id order, before a freed one, and freed slots
 *     are reused oldest first. A put is one write of the slot, a get one read, an eviction
 *     writes nothing. A linear state takes a run of whole slots, as in kvbm.
 * Payloads are deterministic per object and version: every read is verified, and a mismatch is
 * an error naming the object and the offset. The capture mode (--capture) adds what lift needs
 * to rebuild requests from the block trace (docs/lift.md): reads of the unused cached chunks and
 * a flush after each request.
 *
 * Usage: store_open() (it also sets the kv_config's slot geometry and, when 0, the tier size),
 * kvsim_set_sink(sim, store_sink(st)), the requests, store_close(), store_stats(), store_free().
 * Errors are one line in the caller's buffer; nothing is printed but the progress line.
 */
#ifndef FG_STORE_H
#define FG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kvsim.h"

enum store_layout { STORE_LMCACHE_RAWBLOCK = 0, STORE_KVBM = 1, STORE_VLLM_DISK = 2 };

#define STORE_HEADER_BYTES 4096ull       /* rawblock: the slot header (LMCache's default) */
#define STORE_META_DEF (128ull << 20)    /* rawblock: the metadata region (LMCache's plugin) */
#define STORE_CHECKPOINT_S_DEF 60.0      /* rawblock: seconds of trace time between checkpoints */
#define STORE_ALIGN 4096ull              /* O_DIRECT and both backends' block alignment */
#define STORE_HDR_MAGIC "LMCBLK01"       /* the slot header's magic (LMCache's) */
#define STORE_IDX_MAGIC "LMCIDX01"       /* the checkpoint header's magic (LMCache's) */

struct store_opts {
	enum store_layout layout;
	const char *target;   /* block device or regular file */
	uint64_t meta_bytes;  /* rawblock: metadata region bytes (0: STORE_META_DEF) */
	double checkpoint_s;  /* rawblock: 0: STORE_CHECKPOINT_S_DEF */
	uint64_t chunk_bytes; /* a full-attention chunk's bytes (kvbm's block) */
	unsigned iodepth;     /* 0: 32 */
	double speed;         /* 0 as fast as possible, 1 trace time, N N x faster */
	bool force, progress;
	bool trim;            /* discard an evicted object's slot (LMCache writes nothing) */
	bool capture;         /* probes and request fences, for lift */
	bool no_fences;       /* capture without the fences (as a deployment that never flushes) */
	const char *record;   /* blk-csv of every I/O submitted, stamped with trace time (NULL) */
	uint64_t total_hint;  /* expected I/Os, for the progress line */
	unsigned concurrency; /* requests in flight at once, their I/O interleaved (0, 1: none) */
	/* FDP placement (docs/store.md): a write's class is kv_stream(cfg, kind, session), kv's
	 * --streams; each class takes the next of the device's non-zero placement IDs when first
	 * written, as LMCache's cache-salt buckets do (PR #4016); classes beyond them, and the
	 * checkpoints, carry none. Needs an NVMe generic device (/dev/ngXnY) with FDP. */
	bool placement;
};

struct store_stats {
	uint64_t puts, gets, verified, probes, trims, fences;
	uint64_t evictions; /* objects the tier evicted (trims counts the discards sent) */
	uint64_t checkpoints, checkpoints_skipped; /* skipped: the index outgrew a copy */
	uint64_t object_write_bytes, object_read_bytes, meta_write_bytes;
	uint64_t reordered; /* capture: requests whose state write moved next to its chunk */
	uint64_t windows_interleaved; /* --concurrency: windows whose requests' I/O interleaved */
	uint64_t base, tier_bytes; /* where the data region starts and its size */
	/* placement: object writes (puts) sent with a placement ID and without one (their class
	 * found no ID left); class_pid[c] the ID of class c (-1: none yet or none left) */
	uint64_t placed_puts, unplaced_puts;
	unsigned nclasses, npids;
	int32_t class_pid[64];
	/* the device's side (aiotarget) */
	uint64_t ios, read_bytes, write_bytes, discard_bytes, flushes;
	double seconds, lat_mean_us, lat_p99_us;
};

int store_layout_parse(const char *name, enum store_layout *l); /* 0, or -1 */
const char *store_layout_name(enum store_layout l);

struct store;
/* Open the target and fit the layout to it: sets cfg's slot geometry and, when cfg->ssd_bytes is
 * 0, the tier size (what the target holds after the metadata region). NULL with err. */
struct store *store_open(const struct store_opts *o, struct kv_config *cfg, char *err,
                         size_t errlen);
const struct kv_io_sink *store_sink(struct store *st);
/* The store's error after a run stopped because the store failed (kv_result.sink_failed). */
const char *store_error(const struct store *st);
/* Wait for every I/O submitted so far: 0, or -1 with the first failure (a read that did not
 * verify names its object). */
int store_sync(struct store *st, char *err, size_t errlen);
/* Final checkpoint, drain, close the record. 0 or -1 with err. Call once. */
int store_close(struct store *st, char *err, size_t errlen);
void store_stats(const struct store *st, struct store_stats *out);
void store_free(struct store *st);

/* The payload of (key, version) from byte offset off of the object's data, for bytes bytes (a
 * multiple of 512): 512-byte sectors stamped with (magic, key, version, offset) and filled with
 * xorshift output. The same for every layout, and what a read is checked against. */
void store_payload(void *buf, uint64_t key, uint64_t version, uint64_t off, uint64_t bytes);

#endif
