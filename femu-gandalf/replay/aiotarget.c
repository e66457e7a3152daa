/*
 * aiotarget.c - replay a block I/O trace onto a real block device or file (libaio, O_DIRECT).
 *
 * Why O_DIRECT: the point of a replay is to make the drive see the trace's I/O. Through the page
 * cache, reads of recently written data never reach the drive, writes are merged, reordered and
 * delayed by writeback, and overwrites of the same block within the dirty window reach the NAND
 * once instead of N times, which would understate exactly the write amplification being measured.
 * O_DIRECT sends each I/O to the device as submitted, at the trace's size and offset, so offsets
 * and lengths must be multiples of the logical block size and buffers aligned; a misaligned trace
 * record is reported (never rounded), since rounding would change what the drive sees.
 *
 * Why libaio: O_DIRECT with synchronous pread/pwrite allows one outstanding I/O per thread, while
 * a trace from a real host had many; io_submit()/io_getevents() keep up to iodepth I/Os in flight
 * from one thread. Completions are reaped with a zero-timeout io_getevents() after each submit
 * (libaio answers that from the user-space ring, no syscall), so a completion's latency is taken
 * close to when it happened. Overlapping writes are serialized (a write waits for in-flight writes
 * it overlaps), so the final content is that of applying the trace in order, at any iodepth.
 * Discards (BLKDISCARD, or a punched hole in a file) and flushes (fdatasync) are synchronous and
 * first drain the queue: the trace's ordering against them is kept, and neither has a portable
 * asynchronous form in libaio.
 *
 * Why the safety checks: a replay overwrites the target's blocks from wherever the trace says, so
 * pointing it at the wrong device destroys data. Unless forced, the target is refused when it is
 * mounted (its major:minor, or its mount source, in /proc/self/mountinfo; for a whole disk also
 * its partitions, for a partition also its disk), when the kernel has it claimed (O_EXCL on a
 * block device fails with EBUSY for swap, md, LVM, device-mapper and mounted filesystems), and
 * when libblkid finds a filesystem, RAID/LVM member or partition-table signature on it.
 *
 * An NVMe generic device (/dev/ngXnY) is driven through io_uring NVMe passthrough instead
 * (nvmept.c): the one way to give a write its FDP placement ID (blk_io.placed, .pid). It is
 * guarded through its namespace's block device (/dev/nvmeXnY: mounts, signatures), and
 * everything above the queue (ordering, verification, pacing, statistics) is the same.
 *
 * Timing: with speed > 0, I/O k is not submitted before start + (t_k - t_0) / speed of wall time;
 * while waiting, completions keep being reaped. Written data is stamped per 512-byte sector with
 * its lba and I/O number and filled with xorshift output (aio_target_pattern()): verifiable, and
 * incompressible so drives that compress or deduplicate are not flattered.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libaio.h>
#include <limits.h>
#include <linux/fs.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <blkid/blkid.h>

#include "aiotarget.h"
#include "atomicfile.h"
#include "err.h"
#include "nvmept.h"
#include "vec.h"

#define SECTOR 512u
#define NSEC 1000000000ull
#define PROGRESS_NS (NSEC / 4)

/* Latency histogram, log-linear in ns: 32 sub-buckets per power of two (error below 2%). */
#define LAT_SHIFT 5
#define LAT_SUB (1u << LAT_SHIFT)
#define LAT_BUCKETS ((64 - LAT_SHIFT + 1) * LAT_SUB)

struct slot {
	struct iocb cb; /* first: an io_event's obj points here */
	void *buf;
	size_t cap;
	uint64_t seq, lba, bytes, t_sub;
	struct aio_ctx ctx;
	char op;
	bool busy;
};

struct aio_target {
	char *path;
	int fd;
	bool blk;
	unsigned lbs;
	uint64_t size;
	double speed;
	bool progress;
	uint64_t total_hint;

	unsigned depth, inflight, nfree;
	io_context_t ctx;        /* libaio, or (an NVMe generic device) pt */
	struct nvmept *pt;
	struct nvmept_done *done;
	uint64_t placed;         /* writes sent with a placement ID */
	struct slot *slots;
	unsigned *freel;
	struct io_event *ev;
	size_t bufsz; /* largest I/O seen: slots' buffers grow to it */

	uint64_t nsub;                   /* calls to aio_target_submit() */
	bool started;                    /* first I/O submitted */
	uint64_t t0_trace, t0_wall, t_last; /* t_last: last completion, monotonic ns */
	bool failed;                     /* a device error happened: fail[] says which */
	char fail[512];

	uint64_t ios, rbytes, wbytes, dbytes, flushes;
	uint64_t lat_sum, lat_n, hist[LAT_BUCKETS];

	uint64_t prog_t, prog_bytes, prog_ios;
	int prog_len;
	struct aio_target_data data; /* fill/check hooks, or all NULL */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC + (uint64_t)ts.tv_nsec;
}

static struct timespec ns_ts(uint64_t ns)
{
	struct timespec ts = {.tv_sec = (time_t)(ns / NSEC), .tv_nsec = (long)(ns % NSEC)};
	return ts;
}

/* ---- data pattern ---- */

uint64_t aio_mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

void aio_sector_fill(uint64_t *w, const uint64_t *stamp, unsigned nstamp, uint64_t seed)
{
	uint64_t x = seed | 1;
	for (unsigned i = 0; i < nstamp; i++)
		w[i] = stamp[i];
	for (unsigned i = nstamp; i < SECTOR / 8; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

void aio_target_pattern(void *buf, uint64_t lba, uint64_t bytes, uint64_t seq)
{
	uint64_t *w = buf, sq = aio_mix64(seq);
	for (uint64_t s = 0; s < bytes / SECTOR; s++, w += SECTOR / 8) {
		uint64_t stamp[2] = {lba + s, seq};
		aio_sector_fill(w, stamp, 2, aio_mix64((lba + s) ^ sq));
	}
}

/* ---- latency histogram ---- */

static unsigned lat_bucket(uint64_t ns)
{
	if (ns < LAT_SUB)
		return (unsigned)ns;
	unsigned e = 63 - (unsigned)__builtin_clzll(ns); /* >= LAT_SHIFT */
	return (e - LAT_SHIFT + 1) * LAT_SUB + (unsigned)((ns >> (e - LAT_SHIFT)) & (LAT_SUB - 1));
}

/* midpoint of bucket i, ns */
static double lat_value(unsigned i)
{
	if (i < LAT_SUB)
		return i;
	unsigned e = i / LAT_SUB + LAT_SHIFT - 1, sub = i % LAT_SUB;
	double w = ldexp(1.0, (int)(e - LAT_SHIFT));
	return (LAT_SUB + sub) * w + w / 2;
}

static void lat_add(struct aio_target *t, uint64_t ns)
{
	t->hist[lat_bucket(ns)]++;
	t->lat_sum += ns;
	t->lat_n++;
}

/* ---- progress ---- */

static void progress(struct aio_target *t)
{
	if (!t->progress || !t->started)
		return;
	uint64_t now = mono_ns();
	if (now - t->prog_t < PROGRESS_NS)
		return;
	double dt = (double)(now - t->prog_t) / 1e9;
	uint64_t bytes = t->rbytes + t->wbytes;
	char line[160];
	int n = snprintf(line, sizeof(line), "blkreplay: %" PRIu64 " I/Os", t->ios);
	if (t->total_hint) {
		double pct = 100.0 * (double)t->ios / (double)t->total_hint;
		n += snprintf(line + n, sizeof(line) - (size_t)n, " (%.1f%%)", pct > 100 ? 100 : pct);
	}
	n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.1f MB/s, %.0f IOPS, %u in flight",
		      (double)(bytes - t->prog_bytes) / 1e6 / dt, (double)(t->ios - t->prog_ios) / dt,
		      t->inflight);
	fprintf(stderr, "\r%s%*s", line, t->prog_len > n ? t->prog_len - n : 0, "");
	fflush(stderr);
	t->prog_len = n;
	t->prog_t = now;
	t->prog_bytes = bytes;
	t->prog_ios = t->ios;
}

static void progress_clear(struct aio_target *t)
{
	if (t->prog_len > 0) {
		fprintf(stderr, "\r%*s\r", t->prog_len, "");
		fflush(stderr);
	}
	t->prog_len = 0;
}

/* ---- completions ---- */

static int io_desc(char *b, size_t len, uint64_t seq, char op, uint64_t lba, uint64_t bytes)
{
	if (op > ' ' && op < 127)
		return snprintf(b, len, "I/O #%" PRIu64 " (%c %" PRIu64 " %" PRIu64 ")", seq, op,
				lba, bytes);
	return snprintf(b, len, "I/O #%" PRIu64 " (op 0x%02x %" PRIu64 " %" PRIu64 ")", seq,
			(unsigned char)op, lba, bytes);
}

/* Record the first device error; every later call reports it. SEQ 0: not tied to one I/O. */
static void set_fail(struct aio_target *t, uint64_t seq, char op, uint64_t lba, uint64_t bytes,
		     const char *fmt, ...) __attribute__((format(printf, 6, 7)));

static void set_fail(struct aio_target *t, uint64_t seq, char op, uint64_t lba, uint64_t bytes,
		     const char *fmt, ...)
{
	if (t->failed)
		return;
	t->failed = true;
	int n = seq ? io_desc(t->fail, sizeof(t->fail), seq, op, lba, bytes) : 0;
	if (n < 0 || (size_t)n >= sizeof(t->fail) - 3)
		return;
	n += snprintf(t->fail + n, sizeof(t->fail) - (size_t)n, seq ? ": %s: " : "%s: ", t->path);
	if ((size_t)n >= sizeof(t->fail))
		return;
	va_list ap;
	va_start(ap, fmt);
	fg_verr_rc(t->fail + n, sizeof(t->fail) - (size_t)n, 0, fmt, ap);
	va_end(ap);
}

static int report_fail(const struct aio_target *t, char *err, size_t len)
{
	return fg_err(err, len, "%s", t->fail);
}

/* Slot s is done: res its bytes, or -errno; why (not NULL) a failure of its own. */
static void complete(struct aio_target *t, struct slot *s, long res, const char *why,
                     uint64_t now)
{
	s->busy = false;
	t->inflight--;
	t->freel[t->nfree++] = (unsigned)(s - t->slots);
	t->t_last = now;
	if (why || res < 0) {
		set_fail(t, s->seq, s->op, s->lba, s->bytes, "%s", why ? why : strerror((int)-res));
		return;
	}
	if ((uint64_t)res != s->bytes) {
		set_fail(t, s->seq, s->op, s->lba, s->bytes, "short %s: %ld of %" PRIu64 " bytes",
			 s->op == 'W' ? "write" : "read", res, s->bytes);
		return;
	}
	if (s->op == 'R' && t->data.check) {
		char m[384];
		struct blk_io io = {.op = 'R', .lba = s->lba, .bytes = s->bytes};
		if (t->data.check(t->data.arg, s->buf, &io, &s->ctx, m, sizeof(m))) {
			set_fail(t, s->seq, s->op, s->lba, s->bytes, "%s", m);
			return;
		}
	}
	t->ios++;
	if (s->op == 'W')
		t->wbytes += s->bytes;
	else
		t->rbytes += s->bytes;
	lat_add(t, now > s->t_sub ? now - s->t_sub : 0);
}

/* One io_getevents(): at least MIN completions, or until TO (NULL = no limit). 0 or -1 (failed). */
static int reap(struct aio_target *t, long min, struct timespec *to)
{
	if (!t->inflight)
		return 0;
	int n;
	if (t->pt) {
		uint64_t rel = to ? (uint64_t)to->tv_sec * NSEC + (uint64_t)to->tv_nsec : UINT64_MAX;
		n = nvmept_reap(t->pt, (unsigned)min, rel, t->done, t->inflight);
		if (n < 0) {
			set_fail(t, 0, 0, 0, 0, "io_uring: %s", strerror(-n));
			return -1;
		}
		uint64_t now = mono_ns();
		for (int i = 0; i < n; i++) {
			struct slot *s = &t->slots[t->done[i].tag];
			char why[160];
			int res = t->done[i].res;
			complete(t, s, res ? -1 : (long)s->bytes,
			         res ? nvmept_strerror(res, why, sizeof(why)) : NULL, now);
		}
		progress(t);
		return 0;
	}
	do
		n = io_getevents(t->ctx, min, t->inflight, t->ev, to);
	while (n == -EINTR);
	if (n < 0) {
		set_fail(t, 0, 0, 0, 0, "io_getevents: %s", strerror(-n));
		return -1;
	}
	uint64_t now = mono_ns();
	for (int i = 0; i < n; i++)
		complete(t, (struct slot *)(void *)t->ev[i].obj, (long)t->ev[i].res, NULL, now);
	progress(t);
	return 0;
}

static int poll_events(struct aio_target *t)
{
	struct timespec zero = {0, 0};
	return reap(t, 0, &zero);
}

static int drain_inflight(struct aio_target *t)
{
	while (t->inflight)
		if (reap(t, 1, NULL))
			return -1;
	return t->failed ? -1 : 0;
}

/* Sleep until DEADLINE (monotonic ns), reaping completions meanwhile. */
static int wait_until(struct aio_target *t, uint64_t deadline)
{
	for (;;) {
		uint64_t now = mono_ns();
		if (now >= deadline)
			return 0;
		if (t->inflight) {
			struct timespec ts = ns_ts(deadline - now);
			if (reap(t, 1, &ts))
				return -1;
		} else {
			struct timespec ts = ns_ts(deadline);
			uint64_t left = deadline - now;
			if (t->progress && left > PROGRESS_NS)
				ts = ns_ts(now + PROGRESS_NS);
			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL); /* EINTR: loop */
			progress(t);
		}
	}
}

/* Is an in-flight I/O that an I/O of op at [lba, lba + n) must wait for? A write waits for every
 * overlapping one, a read for the writes. */
static bool overlaps(const struct aio_target *t, char op, uint64_t lba, uint64_t n)
{
	for (unsigned i = 0; i < t->depth; i++) {
		const struct slot *s = &t->slots[i];
		if (s->busy && (op == 'W' || s->op == 'W') && s->lba < lba + n &&
		    lba < s->lba + s->bytes / SECTOR)
			return true;
	}
	return false;
}

/* ---- submit ---- */

static int sync_op(struct aio_target *t, const struct blk_io *io, uint64_t seq)
{
	if (drain_inflight(t))
		return -1;
	uint64_t t_sub = mono_ns();
	if (t->pt) { /* an NVMe Flush, or a Dataset Management deallocate */
		int r = nvmept_sync(t->pt, io->op, io->lba * SECTOR, io->bytes);
		char why[160];
		if (r) {
			set_fail(t, seq, io->op, io->lba, io->bytes, "%s: %s",
			         io->op == 'F' ? "NVMe flush" : "NVMe deallocate",
			         nvmept_strerror(r, why, sizeof(why)));
			return -1;
		}
		if (io->op == 'F')
			t->flushes++;
		else
			t->dbytes += io->bytes;
	} else if (io->op == 'F') {
		if (fdatasync(t->fd)) {
			set_fail(t, seq, io->op, io->lba, io->bytes, "fdatasync: %s", strerror(errno));
			return -1;
		}
		t->flushes++;
	} else if (t->blk) {
		uint64_t range[2] = {io->lba * SECTOR, io->bytes};
		if (ioctl(t->fd, BLKDISCARD, range)) {
			set_fail(t, seq, io->op, io->lba, io->bytes, "BLKDISCARD: %s", strerror(errno));
			return -1;
		}
		t->dbytes += io->bytes;
	} else {
		if (fallocate(t->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			      (off_t)(io->lba * SECTOR), (off_t)io->bytes)) {
			set_fail(t, seq, io->op, io->lba, io->bytes, "fallocate(PUNCH_HOLE): %s",
				 strerror(errno));
			return -1;
		}
		t->dbytes += io->bytes;
	}
	uint64_t now = mono_ns();
	t->t_last = now;
	t->ios++;
	lat_add(t, now - t_sub);
	return 0;
}

static int async_op(struct aio_target *t, const struct blk_io *io, uint64_t seq,
		    const struct aio_ctx *ctx, char *err, size_t len)
{
	char d[96];
	while (!t->nfree)
		if (reap(t, 1, NULL))
			return -1;
	while (overlaps(t, io->op, io->lba, io->bytes / SECTOR))
		if (reap(t, 1, NULL))
			return -1;
	if (t->failed)
		return -1;

	struct slot *s = &t->slots[t->freel[t->nfree - 1]];
	if (io->bytes > t->bufsz)
		t->bufsz = io->bytes;
	if (s->cap < io->bytes) {
		void *b = NULL;
		size_t align = (size_t)sysconf(_SC_PAGESIZE);
		if (align < t->lbs)
			align = t->lbs;
		int r = posix_memalign(&b, align, t->bufsz);
		if (r) {
			io_desc(d, sizeof(d), seq, io->op, io->lba, io->bytes);
			return fg_err(err, len, "%s: cannot allocate a %zu-byte buffer: %s", d,
			              t->bufsz, strerror(r));
		}
		free(s->buf);
		s->buf = b;
		s->cap = t->bufsz;
	}
	t->nfree--;
	s->seq = seq;
	s->lba = io->lba;
	s->bytes = io->bytes;
	s->op = io->op;
	if (ctx)
		s->ctx = *ctx;
	if (io->op == 'W') {
		if (t->data.fill)
			t->data.fill(t->data.arg, s->buf, io, &s->ctx);
		else
			aio_target_pattern(s->buf, io->lba, io->bytes, seq);
		io_prep_pwrite(&s->cb, t->fd, s->buf, io->bytes, (long long)(io->lba * SECTOR));
	} else {
		io_prep_pread(&s->cb, t->fd, s->buf, io->bytes, (long long)(io->lba * SECTOR));
	}
	if (t->pt) {
		s->t_sub = mono_ns();
		int r = nvmept_submit(t->pt, io->op, s->buf, io->lba * SECTOR, io->bytes,
		                      io->op == 'W' && io->placed, io->pid, (uint64_t)(s - t->slots));
		if (r) {
			t->freel[t->nfree++] = (unsigned)(s - t->slots);
			set_fail(t, seq, io->op, io->lba, io->bytes, "NVMe passthrough: %s%s",
			         strerror(-r),
			         r == -EINVAL ? " (not whole logical blocks, or over 65,536 of them)"
			                      : "");
			return -1;
		}
		t->placed += io->op == 'W' && io->placed;
		s->busy = true;
		t->inflight++;
		return poll_events(t);
	}
	struct iocb *cbs[1] = {&s->cb};
	for (;;) {
		s->t_sub = mono_ns();
		int r = io_submit(t->ctx, 1, cbs);
		if (r == 1)
			break;
		if (r == -EINTR)
			continue;
		if (r == -EAGAIN && t->inflight) {
			if (reap(t, 1, NULL) == 0)
				continue;
		}
		t->freel[t->nfree++] = (unsigned)(s - t->slots);
		set_fail(t, seq, io->op, io->lba, io->bytes, "io_submit: %s",
			 strerror(r < 0 ? -r : EIO));
		return -1;
	}
	s->busy = true;
	t->inflight++;
	return poll_events(t);
}

void aio_target_set_data(struct aio_target *t, const struct aio_target_data *d)
{
	t->data = *d;
}

int aio_target_submit(struct aio_target *t, const struct blk_io *io, char *err, size_t len)
{
	return aio_target_submit_ctx(t, io, NULL, err, len);
}

int aio_target_submit_ctx(struct aio_target *t, const struct blk_io *io, const struct aio_ctx *ctx,
                          char *err, size_t len)
{
	uint64_t seq = ++t->nsub;
	char d[96];
	if (t->failed)
		return report_fail(t, err, len);
	io_desc(d, sizeof(d), seq, io->op, io->lba, io->bytes);

	switch (io->op) {
	case 'R':
	case 'W':
	case 'D':
	case 'F':
		break;
	default:
		return fg_err(err, len, "%s: unknown op (expected R, W, D or F)", d);
	}
	if (io->placed && !t->pt)
		return fg_err(err, len,
		              "%s: placement ID %u: only an NVMe generic device (/dev/ngXnY) takes "
		              "one (io_uring passthrough); %s is not one",
		              d, io->pid, t->path);
	if (io->op != 'F') {
		if (!io->bytes)
			return fg_err(err, len, "%s: zero length", d);
		if (io->lba > (t->size / SECTOR))
			return fg_err(err, len,
			              "%s: starts at sector %" PRIu64
			              ", past the end of %s (%" PRIu64 " bytes)",
			              d, io->lba, t->path, t->size);
		uint64_t off = io->lba * SECTOR;
		if (off % t->lbs)
			return fg_err(err, len,
			              "%s: offset %" PRIu64
			              " is not aligned to the %u-byte logical block"
			              " size of %s",
			              d, off, t->lbs, t->path);
		if (io->bytes % t->lbs)
			return fg_err(err, len,
			              "%s: length %" PRIu64
			              " is not aligned to the %u-byte logical block"
			              " size of %s",
			              d, io->bytes, t->lbs, t->path);
		if (io->bytes > t->size - off)
			return fg_err(err, len,
			              "%s: ends at byte %" PRIu64 ", past the end of %s (%" PRIu64
			              " bytes)",
			              d, off + io->bytes, t->path, t->size);
		if (io->op != 'D' && io->bytes > AIO_TARGET_MAX_IO)
			return fg_err(err, len, "%s: larger than the %llu MiB limit for one I/O", d,
			              (unsigned long long)(AIO_TARGET_MAX_IO >> 20));
	}

	if (!t->started) {
		t->started = true;
		t->t0_trace = io->t_ns;
		t->t0_wall = t->t_last = t->prog_t = mono_ns();
	} else if (t->speed > 0 && io->t_ns > t->t0_trace) {
		double dt = (double)(io->t_ns - t->t0_trace) / t->speed;
		if (dt > 1e18)
			dt = 1e18;
		if (wait_until(t, t->t0_wall + (uint64_t)dt))
			return report_fail(t, err, len);
	}

	int r = (io->op == 'D' || io->op == 'F') ? sync_op(t, io, seq)
						 : async_op(t, io, seq, ctx, err, len);
	if (r && t->failed)
		return report_fail(t, err, len);
	progress(t);
	return r;
}

int aio_target_drain(struct aio_target *t, char *err, size_t len)
{
	int r = drain_inflight(t);
	progress_clear(t);
	return r ? report_fail(t, err, len) : 0;
}

int aio_target_placement_ids(struct aio_target *t, uint16_t *pid, unsigned max, char *err,
                             size_t errlen)
{
	int n = t->pt ? nvmept_placement_ids(t->pt, pid, max) : 0;
	if (n < 0)
		return fg_err(err, errlen, "%s: reclaim unit handle status: %s", t->path,
		              strerror(-n));
	return n;
}

void aio_target_stats(const struct aio_target *t, struct aio_target_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->ios = t->ios;
	st->read_bytes = t->rbytes;
	st->write_bytes = t->wbytes;
	st->discard_bytes = t->dbytes;
	st->flushes = t->flushes;
	st->passthrough = t->pt != NULL;
	st->placed_writes = t->placed;
	if (t->started) {
		uint64_t end = t->inflight ? mono_ns() : t->t_last;
		st->seconds = (double)(end - t->t0_wall) / 1e9;
	}
	if (st->seconds > 0) {
		st->iops = (double)t->ios / st->seconds;
		st->mbps = (double)(t->rbytes + t->wbytes) / 1e6 / st->seconds;
	}
	if (t->lat_n) {
		st->lat_mean_us = (double)t->lat_sum / (double)t->lat_n / 1e3;
		uint64_t rank = (uint64_t)ceil(0.99 * (double)t->lat_n), cum = 0;
		for (unsigned i = 0; i < LAT_BUCKETS; i++) {
			cum += t->hist[i];
			if (cum >= rank) {
				st->lat_p99_us = lat_value(i) / 1e3;
				break;
			}
		}
	}
}

unsigned aio_target_block_size(const struct aio_target *t)
{
	return t->lbs;
}

uint64_t aio_target_size(const struct aio_target *t)
{
	return t->size;
}

/* ---- open: safety checks ---- */

struct devset {
	dev_t *d;
	size_t n;
	uint64_t cap;
};

static int devset_add(struct devset *s, dev_t d)
{
	if (vec_reserve(s->d, s->cap, s->n + 1))
		return -1;
	s->d[s->n++] = d;
	return 0;
}

static bool devset_has(const struct devset *s, dev_t d)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->d[i] == d)
			return true;
	return false;
}

/* "MAJ:MIN" from a sysfs dev file; 0 if unreadable. */
static dev_t read_devfile(const char *dir, const char *name)
{
	char p[PATH_MAX];
	unsigned ma, mi;
	if (snprintf(p, sizeof(p), "%s/%s/dev", dir, name) >= (int)sizeof(p))
		return 0;
	FILE *f = fopen(p, "re");
	if (!f)
		return 0;
	int n = fscanf(f, "%u:%u", &ma, &mi);
	fclose(f);
	return n == 2 ? makedev(ma, mi) : 0;
}

static bool is_partition(const char *dir)
{
	char p[PATH_MAX];
	if (snprintf(p, sizeof(p), "%s/partition", dir) >= (int)sizeof(p))
		return false;
	return access(p, F_OK) == 0;
}

/*
 * The devices whose being mounted makes RDEV unsafe to write: itself; for a whole disk, its
 * partitions; for a partition, its disk (siblings are independent). Without sysfs, just itself.
 */
static int related_devs(dev_t rdev, struct devset *s)
{
	char link[64], dir[PATH_MAX];
	if (devset_add(s, rdev))
		return -1;
	snprintf(link, sizeof(link), "/sys/dev/block/%u:%u", major(rdev), minor(rdev));
	if (!realpath(link, dir))
		return 0;
	if (is_partition(dir)) {
		dev_t whole = read_devfile(dir, "..");
		if (whole && devset_add(s, whole))
			return -1;
		return 0;
	}
	DIR *dp = opendir(dir);
	if (!dp)
		return 0;
	struct dirent *de;
	int r = 0;
	while ((de = readdir(dp))) {
		char sub[PATH_MAX];
		if (de->d_name[0] == '.' ||
		    snprintf(sub, sizeof(sub), "%s/%s", dir, de->d_name) >= (int)sizeof(sub))
			continue;
		if (!is_partition(sub))
			continue;
		dev_t d = read_devfile(dir, de->d_name);
		if (d && devset_add(s, d)) {
			r = -1;
			break;
		}
	}
	closedir(dp);
	return r;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *o = s;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

static int check_mounts(const char *path, dev_t rdev, char *err, size_t len)
{
	struct devset s = {0};
	if (related_devs(rdev, &s)) {
		free(s.d);
		return fg_err(err, len, "%s: out of memory", path);
	}
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		free(s.d);
		return fg_err(
		        err, len,
		        "%s: cannot read /proc/self/mountinfo to check that it is not mounted: %s"
		        " (--force to skip the check)",
		        path, strerror(errno));
	}
	char *line = NULL;
	size_t cap = 0;
	int r = 0;
	while (getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTS */
		unsigned ma, mi;
		int mp_at = 0, mp_end = 0;
		if (sscanf(line, "%*s %*s %u:%u %*s %n%*s%n", &ma, &mi, &mp_at, &mp_end) < 2 ||
		    !mp_end)
			continue;
		char *dash = strstr(line, " - ");
		char src[PATH_MAX] = "", fstype[64] = "";
		if (dash)
			sscanf(dash + 3, "%63s %4095s", fstype, src);
		unescape(src);
		dev_t hit = 0;
		struct stat st;
		if (devset_has(&s, makedev(ma, mi)))
			hit = makedev(ma, mi);
		else if (!strncmp(src, "/dev/", 5) && !stat(src, &st) && S_ISBLK(st.st_mode) &&
			 devset_has(&s, st.st_rdev))
			hit = st.st_rdev; /* btrfs and others report an anonymous major:minor */
		if (!hit)
			continue;
		line[mp_end] = 0;
		unescape(line + mp_at);
		r = fg_err(err, len,
		           "%s: %s (%u:%u) is mounted on %s; refusing to write to a mounted device"
		           " (--force to override)",
		           path, src[0] ? src : "a device", major(hit), minor(hit), line + mp_at);
		break;
	}
	free(line);
	fclose(f);
	free(s.d);
	return r;
}

static int check_signature(const char *path, char *err, size_t len)
{
	errno = 0;
	blkid_probe pr = blkid_new_probe_from_filename(path);
	if (!pr)
		return fg_err(err, len, "%s: cannot probe for filesystem signatures: %s", path,
		              strerror(errno ? errno : EIO));
	blkid_probe_enable_superblocks(pr, 1);
	blkid_probe_set_superblocks_flags(pr, BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE |
						      BLKID_SUBLKS_LABEL);
	blkid_probe_enable_partitions(pr, 1);
	int r = blkid_do_safeprobe(pr);
	const char *type = NULL, *usage = NULL, *label = NULL;
	if (r == 0) {
		if (!blkid_probe_lookup_value(pr, "TYPE", &type, NULL)) {
			blkid_probe_lookup_value(pr, "USAGE", &usage, NULL);
			blkid_probe_lookup_value(pr, "LABEL", &label, NULL);
			fg_err(err, len,
			       "%s carries a signature of type %s (%s%s%s%s); refusing to "
			       "overwrite it"
			       " (--force to override)",
			       path, type, usage ? usage : "unknown use", label ? ", label \"" : "",
			       label ? label : "", label ? "\"" : "");
		} else if (!blkid_probe_lookup_value(pr, "PTTYPE", &type, NULL)) {
			fg_err(err, len,
			       "%s carries a %s partition table; refusing to overwrite it"
			       " (--force to override)",
			       path, type);
		} else {
			fg_err(err, len,
			       "%s carries a signature; refusing to overwrite it"
			       " (--force to override)",
			       path);
		}
		r = -1;
	} else if (r == -2) {
		r = fg_err(err, len,
		           "%s carries several conflicting signatures; refusing to overwrite it"
		           " (--force to override)",
		           path);
	} else if (r < 0) {
		r = fg_err(err, len, "%s: probing for filesystem signatures failed: %s", path,
		           strerror(errno ? errno : EIO));
	} else {
		r = 0;
	}
	blkid_free_probe(pr);
	return r;
}

/* O_DIRECT alignment of a regular file: the smallest power of two from 512 that a read accepts. */
static int file_block_size(int fd, unsigned *lbs)
{
	void *b = NULL;
	int r = posix_memalign(&b, 4096, 4096);
	if (r)
		return r;
	for (unsigned bs = SECTOR; bs <= 4096; bs *= 2) {
		if (pread(fd, b, bs, 0) >= 0) {
			*lbs = bs;
			free(b);
			return 0;
		}
		if (errno != EINVAL)
			break;
	}
	r = errno;
	free(b);
	return r;
}

/*
 * Open path for O_DIRECT I/O after the safety checks (a block device or a regular file; unless
 * o->force, not mounted, no filesystem signature, and a block device opened O_EXCL). *st gets
 * the stat of what was opened (checked to be what was checked). The fd, or -1.
 */
static int open_checked(const char *path, const struct aio_target_opts *o, struct stat *st,
                        char *err, size_t len)
{
	struct stat st0;
	bool blk;
	int fd;

	if (stat(path, &st0))
		return fg_err(err, len, "%s: %s", path, strerror(errno));
	blk = S_ISBLK(st0.st_mode);
	char nsblk[64];
	if (nvmept_is(path, &st0, nsblk, sizeof(nsblk))) {
		/* an NVMe generic device: guarded through its namespace's block device */
		struct stat sb;
		if (stat(nsblk, &sb))
			return fg_err(err, len, "%s: its namespace's block device %s: %s", path, nsblk,
			              strerror(errno));
		if (!S_ISBLK(sb.st_mode))
			return fg_err(err, len, "%s: %s, its namespace, is not a block device", path,
			              nsblk);
		if (!o->force &&
		    (check_mounts(nsblk, sb.st_rdev, err, len) || check_signature(nsblk, err, len)))
			return -1;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return fg_err(err, len, "%s: %s", path, strerror(errno));
		if (fstat(fd, st) || st->st_rdev != st0.st_rdev) {
			close(fd);
			return fg_err(err, len, "%s: changed while being opened", path);
		}
		return fd;
	}
	if (!blk && !S_ISREG(st0.st_mode))
		return fg_err(err, len,
		              "%s is %s; expected a block device, a regular file or an NVMe generic "
		              "device (/dev/ngXnY)",
		              path, fg_file_kind(st0.st_mode));
	if (blk && !o->force && check_mounts(path, st0.st_rdev, err, len))
		return -1;
	if (!o->force && check_signature(path, err, len))
		return -1;
	fd = open(path, O_RDWR | O_DIRECT | O_CLOEXEC | (blk && !o->force ? O_EXCL : 0));
	if (fd < 0) {
		int e = errno;
		if (e == EINVAL)
			return fg_err(err, len, "%s: O_DIRECT is not supported here (tmpfs?): %s",
			              path, strerror(e));
		if (e == EBUSY)
			return fg_err(err, len,
			              "%s: device is busy: claimed by a mounted filesystem, swap, "
			              "md, LVM or"
			              " device-mapper (--force to override)",
			              path);
		return fg_err(err, len, "%s: %s", path, strerror(e));
	}
	if (fstat(fd, st) || st->st_dev != st0.st_dev || st->st_ino != st0.st_ino ||
	    st->st_rdev != st0.st_rdev) {
		close(fd);
		return fg_err(err, len, "%s: changed while being opened", path);
	}
	return fd;
}

/* The logical block size (the O_DIRECT alignment) and the capacity of the open target. */
static int target_geometry(int fd, const char *path, const struct stat *st, unsigned *lbs,
                           uint64_t *size, char *err, size_t len)
{
	bool blk = S_ISBLK(st->st_mode);

	*lbs = SECTOR;
	*size = 0;
	if (blk) {
		int ss = 0;
		if (ioctl(fd, BLKSSZGET, &ss) || ioctl(fd, BLKGETSIZE64, size))
			return fg_err(err, len, "%s: cannot get the block size and capacity: %s",
			              path, strerror(errno));
		if (ss < (int)SECTOR || (ss & (ss - 1)))
			return fg_err(err, len, "%s: unexpected logical block size %d", path, ss);
		*lbs = (unsigned)ss;
	} else {
		*size = (uint64_t)st->st_size;
		int r = *size ? file_block_size(fd, lbs) : 0;
		if (r)
			return fg_err(err, len, "%s: cannot find the O_DIRECT alignment: %s", path,
			              strerror(r));
	}
	if (!*size)
		return fg_err(
		        err, len, "%s: size is 0%s", path,
		        blk ? ""
		            : " (create it with the intended size, e.g. truncate -s 16G FILE)");
	return 0;
}

/* The target's state around an open fd: depth slots, the free list, the libaio context. */
static struct aio_target *target_alloc(const char *path, int fd, unsigned depth, bool aio,
                                       char *err, size_t len)
{
	struct aio_target *t = calloc(1, sizeof(*t));
	char *p = strdup(path);
	struct slot *slots = calloc(depth, sizeof(*slots));
	unsigned *freel = calloc(depth, sizeof(*freel));
	struct io_event *ev = calloc(depth, sizeof(*ev));
	int r;

	if (!t || !p || !slots || !freel || !ev) {
		fg_err(err, len, "%s: out of memory", path);
		goto fail;
	}
	r = aio ? io_setup((int)depth, &t->ctx) : 0;
	if (r < 0) {
		fg_err(err, len, "%s: io_setup(%u): %s%s", path, depth, strerror(-r),
		       r == -EAGAIN ? " (iodepth above the free part of /proc/sys/fs/aio-max-nr)"
		                    : "");
		goto fail;
	}
	t->path = p;
	t->fd = fd;
	t->depth = depth;
	t->slots = slots;
	t->freel = freel;
	t->ev = ev;
	for (unsigned i = 0; i < depth; i++)
		freel[i] = depth - 1 - i;
	t->nfree = depth;
	return t;
fail:
	free(t);
	free(p);
	free(slots);
	free(freel);
	free(ev);
	return NULL;
}

struct aio_target *aio_target_open(const char *path, const struct aio_target_opts *o, char *err,
                                   size_t len)
{
	static const struct aio_target_opts defaults = {0};
	struct aio_target *t;
	struct stat st;
	unsigned depth, lbs;
	uint64_t size;
	int fd;

	if (!o)
		o = &defaults;
	if (!path || !*path) {
		fg_err(err, len, "empty target path");
		return NULL;
	}
	depth = o->iodepth ? o->iodepth : AIO_TARGET_DEFAULT_IODEPTH;
	if (depth > AIO_TARGET_MAX_IODEPTH) {
		fg_err(err, len, "iodepth %u: must be 1..%u", depth, AIO_TARGET_MAX_IODEPTH);
		return NULL;
	}
	if (!(o->speed >= 0) || isinf(o->speed)) {
		fg_err(err, len, "speed %g: must be >= 0 (0 = as fast as possible)", o->speed);
		return NULL;
	}
	fd = open_checked(path, o, &st, err, len);
	if (fd < 0)
		return NULL;
	char nsblk[64];
	if (nvmept_is(path, &st, nsblk, sizeof(nsblk))) {
		struct nvmept *pt = nvmept_open(fd, path, nsblk, depth, &lbs, &size, err, len);
		struct nvmept_done *done = calloc(depth, sizeof(*done));
		if (!pt || !done || !(t = target_alloc(path, fd, depth, false, err, len))) {
			if (pt && !done)
				fg_err(err, len, "%s: out of memory", path);
			nvmept_close(pt);
			free(done);
			close(fd);
			return NULL;
		}
		t->pt = pt;
		t->done = done;
	} else if (target_geometry(fd, path, &st, &lbs, &size, err, len) ||
	           !(t = target_alloc(path, fd, depth, true, err, len))) {
		close(fd);
		return NULL;
	}
	t->blk = S_ISBLK(st.st_mode);
	t->lbs = lbs;
	t->size = size;
	t->speed = o->speed;
	t->progress = o->progress;
	t->total_hint = o->total_hint;
	return t;
}

void aio_target_close(struct aio_target *t)
{
	if (!t)
		return;
	drain_inflight(t);
	if (t->pt) { /* (exiting the ring waits for what is still in flight) */
		nvmept_close(t->pt);
		free(t->done);
	} else if (t->inflight) {
		/* io_getevents failed: cancel what it can, io_destroy waits for the rest */
		for (unsigned i = 0; i < t->depth; i++) {
			struct io_event e;
			if (t->slots[i].busy)
				io_cancel(t->ctx, &t->slots[i].cb, &e);
		}
	}
	progress_clear(t);
	if (!t->pt)
		io_destroy(t->ctx);
	for (unsigned i = 0; i < t->depth; i++)
		free(t->slots[i].buf);
	free(t->slots);
	free(t->freel);
	free(t->ev);
	close(t->fd);
	free(t->path);
	free(t);
}
