/*
 * aiotarget.h - replay block I/O traces onto a real block device or file (libaio, O_DIRECT).
 *
 * Usage: aio_target_open(), then aio_target_submit() for every struct blk_io of a trace, then
 * aio_target_drain() and aio_target_stats(), and aio_target_close(). Every function that can fail
 * returns -1 (or NULL) with a one-line message in err; nothing exits or aborts.
 *
 * Written data is a deterministic, incompressible pattern (see aio_target_pattern()), so a replay
 * can be verified afterwards and drives that compress or deduplicate do not flatter the result.
 * Overlapping I/O is ordered as in the trace (a write waits for the in-flight reads and writes it
 * overlaps, a read for the writes), so the final content, and what each read returns, depend on
 * the trace only, not on the queue depth or on completion order.
 */
#ifndef FG_REPLAY_AIO_H
#define FG_REPLAY_AIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace.h"

struct aio_target_opts {
	unsigned iodepth;    /* outstanding I/Os, 0 = default 32 */
	double speed;        /* 0 = as fast as possible; 1 = original trace spacing; N = N x faster */
	bool force;          /* allow a mounted device or one carrying a filesystem/partition signature */
	bool progress;       /* print progress to stderr (callers pass isatty(2)) */
	uint64_t total_hint; /* expected number of I/Os, for the progress percentage (0 = unknown) */
};

#define AIO_TARGET_DEFAULT_IODEPTH 32
#define AIO_TARGET_MAX_IODEPTH 65536
#define AIO_TARGET_MAX_IO (256ull << 20) /* largest single I/O accepted (bytes) */

struct aio_target;

/*
 * Open PATH (a block device or a regular file) with O_DIRECT. Refuses, with a message in err:
 * a path that is neither a block device nor a regular file; unless o->force, a mounted block
 * device (itself, its partitions, or the whole disk of a partition) or one claimed by the kernel,
 * and any target carrying a filesystem, RAID/LVM or partition-table signature; an empty target.
 * o may be NULL (all defaults).
 */
struct aio_target *aio_target_open(const char *path, const struct aio_target_opts *o, char *err,
				   size_t errlen);

/*
 * Submit one I/O (op 'R', 'W', 'D' discard or 'F' flush; lba in 512-byte sectors). Returns 0, or
 * -1 with "I/O #N (op lba bytes): reason" in err. N counts calls from 1. A rejected I/O
 * (misaligned, out of range, unknown op, too large) names itself; an I/O that failed on the
 * device is reported by a later submit or by aio_target_drain(), and its message names it, so N
 * may be smaller than the current call's number. After a device error every call fails.
 * With speed > 0 the call sleeps until the I/O's time in the trace (scaled) has come.
 */
int aio_target_submit(struct aio_target *t, const struct blk_io *io, char *err, size_t errlen);

/*
 * Caller data (optional, for a store): with hooks set, a write's data comes from fill() instead of
 * aio_target_pattern(), and every completed read is handed to check(), which returns 0 or writes
 * why the data is wrong into msg (the I/O then fails: the message, after the I/O's name, is the
 * run's error). ctx is the caller's description of the I/O, copied at submit and handed back.
 */
struct aio_ctx {
	uint64_t w[4];
};
struct aio_target_data {
	void (*fill)(void *arg, void *buf, const struct blk_io *io, const struct aio_ctx *ctx);
	int (*check)(void *arg, const void *buf, const struct blk_io *io, const struct aio_ctx *ctx,
	             char *msg, size_t len);
	void *arg;
};
void aio_target_set_data(struct aio_target *t, const struct aio_target_data *d);
/* aio_target_submit() with the caller's ctx for fill() and check(). */
int aio_target_submit_ctx(struct aio_target *t, const struct blk_io *io, const struct aio_ctx *ctx,
                          char *err, size_t errlen);

/* Wait for all in-flight I/O; -1 with the first failing I/O's message if any failed. */
int aio_target_drain(struct aio_target *t, char *err, size_t errlen);

struct aio_target_stats {
	uint64_t ios; /* completed successfully, all ops */
	uint64_t read_bytes, write_bytes, discard_bytes, flushes;
	double seconds;          /* first submit to last completion */
	double iops, mbps;       /* mbps: (read + write bytes) / 1e6 / seconds */
	double lat_mean_us;      /* submit -> completion, all ops */
	double lat_p99_us;       /* from a log-linear histogram: within 2% */
	bool passthrough;        /* an NVMe generic device, through io_uring passthrough */
	uint64_t placed_writes;  /* writes sent with an FDP placement ID */
};
void aio_target_stats(const struct aio_target *t, struct aio_target_stats *st);

unsigned aio_target_block_size(const struct aio_target *t); /* logical block size, bytes */
/* An NVMe generic device's FDP placement IDs (aio_target_stats().passthrough), at most max:
 * how many (0: no FDP, or not such a device), or -1 with err. */
int aio_target_placement_ids(struct aio_target *t, uint16_t *pid, unsigned max, char *err,
                             size_t errlen);
uint64_t aio_target_size(const struct aio_target *t);       /* bytes */

/* Drains (ignoring errors), clears the progress line, closes. NULL is allowed. */
void aio_target_close(struct aio_target *t);

/*
 * The data a write of I/O number SEQ (as counted by aio_target_submit) at LBA stores: for each
 * 512-byte sector s, 64 host-order uint64 words: the sector's lba (LBA + s), SEQ, then 62 words
 * of xorshift64 seeded from both. BUF gets BYTES bytes (a multiple of 512).
 */
void aio_target_pattern(void *buf, uint64_t lba, uint64_t bytes, uint64_t seq);
/* Its building blocks, shared with the KV store's payloads (store/store.c): splitmix64's
 * finalizer, and one 512-byte sector: stamp[0..nstamp), then xorshift64 output from seed | 1. */
uint64_t aio_mix64(uint64_t x);
void aio_sector_fill(uint64_t *w, const uint64_t *stamp, unsigned nstamp, uint64_t seed);

#endif
