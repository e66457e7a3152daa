/*
 * nvmept.h - NVMe I/O passthrough on an NVMe generic device (/dev/ngXnY) through io_uring
 * (liburing, IORING_OP_URING_CMD, 128-byte SQEs), for the one thing the block layer cannot
 * carry: a write's FDP placement ID (DTYPE 2 in CDW12, DSPEC in CDW13; docs/store.md). aiotarget
 * uses it for a target that is an NVMe generic device; everything else (ordering, verification,
 * pacing, statistics) stays aiotarget's.
 *
 * Reads and writes are asynchronous, up to the queue's depth; flush and deallocate (Dataset
 * Management) are synchronous, for a caller that has drained its queue. Offsets and lengths are
 * bytes, multiples of the namespace's logical block size; buffers are the caller's, aligned.
 */
#ifndef FG_NVMEPT_H
#define FG_NVMEPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

/* Is path (st its stat) an NVMe generic device, named ngXnY? Then *blk (blen bytes) gets the
 * namespace's block device, /dev/nvmeXnY, whose mounts and signatures guard it. */
bool nvmept_is(const char *path, const struct stat *st, char *blk, size_t blen);

struct nvmept;
/* The queue on fd (the generic device, open O_RDWR): the namespace id, its logical block size
 * and capacity (from the block device's sysfs). NULL with err. */
struct nvmept *nvmept_open(int fd, const char *path, const char *blk, unsigned depth,
                           unsigned *lbs, uint64_t *size, char *err, size_t errlen);
/* Queue a read ('R') or write ('W'); tag comes back with its completion. placed: a write with
 * placement ID pid. 0, or a negative errno (the queue is full: reap first). */
int nvmept_submit(struct nvmept *q, char op, void *buf, uint64_t off, uint64_t bytes, bool placed,
                  uint16_t pid, uint64_t tag);
struct nvmept_done {
	uint64_t tag;
	int res; /* 0, an NVMe status (> 0: status code type << 8 | status code), or -errno */
};
/* Completions: at least min (waiting at most rel_ns, UINT64_MAX: no limit; 0 with min 0: only
 * those ready), at most max. How many, or a negative errno. */
int nvmept_reap(struct nvmept *q, unsigned min, uint64_t rel_ns, struct nvmept_done *out,
                unsigned max);
/* Flush ('F') or deallocate ('D', bytes at off), waiting for it; nothing else may be in flight.
 * 0, an NVMe status (> 0) or a negative errno. */
int nvmept_sync(struct nvmept *q, char op, uint64_t off, uint64_t bytes);
/* The namespace's placement IDs (FDP's Reclaim Unit Handle Status, I/O Management Receive),
 * at most max into pid: how many; 0 when the namespace has no FDP; a negative errno. */
int nvmept_placement_ids(struct nvmept *q, uint16_t *pid, unsigned max);
/* One line for a result of nvmept_reap()/nvmept_sync() that is not 0. */
const char *nvmept_strerror(int res, char *buf, size_t len);
void nvmept_close(struct nvmept *q);

#endif
