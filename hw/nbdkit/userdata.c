/*
 * userdata.c - the user-data store of the nbdkit plugin.
 *
 * hw/ftl models metadata only, so the plugin keeps the bytes the guest wrote here:
 *   USERDATA_NONE  nothing: writes are dropped, reads return zeroes (endurance runs on drives
 *               larger than RAM; the FTL's tables are all that grows);
 *   USERDATA_RAM   a memfd (tmpfs) of the device's size: sparse, pages appear when written;
 *   USERDATA_FILE  a regular file of the device's size: sparse on filesystems that support holes.
 * RAM and file share one code path (pread/pwrite on an fd). Zeroing punches a hole
 * (fallocate PUNCH_HOLE | KEEP_SIZE), so TRIM and write-zeroes give memory and disk back; where
 * the filesystem cannot punch, zeroes are written instead.
 *
 * Invariants: the fd's size is exactly s->size; every call is bounded by it (the plugin has
 * already checked the range against the same size); no call holds a lock, so the plugin can
 * run store I/O of parallel requests concurrently.
 *
 * userdata_save/userdata_load copy only the data extents (SEEK_DATA/SEEK_HOLE) and skip all-zero
 * chunks, so a mostly empty RAM store saves to a mostly empty sparse file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "err.h"
#include "userdata.h"

#define CHUNK (1u << 20)

int userdata_open(struct userdata *s, enum userdata_kind kind, const char *path, uint64_t size,
                  bool fresh, char *err, size_t errlen)
{
	struct stat st;

	memset(s, 0, sizeof(*s));
	s->kind = kind;
	s->fd = -1;
	s->size = size;
	if (kind == USERDATA_NONE)
		return 0;
	if (kind == USERDATA_RAM) {
		s->fd = memfd_create("femu-gandalf-data", MFD_CLOEXEC);
		if (s->fd < 0)
			return fg_err(err, errlen, "data=ram: memfd_create: %s", strerror(errno));
		if (ftruncate(s->fd, (off_t)size) < 0) {
			fg_err(err, errlen, "data=ram: cannot size the store to %llu bytes: %s",
			       (unsigned long long)size, strerror(errno));
			userdata_close(s);
			return -1;
		}
		return 0;
	}
	s->path = strdup(path);
	s->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (s->fd < 0 || !s->path) {
		fg_err(err, errlen, "data=file:%s: %s", path, strerror(errno));
		userdata_close(s);
		return -1;
	}
	if (fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		fg_err(err, errlen, "data=file:%s: not a regular file", path);
		userdata_close(s);
		return -1;
	}
	if (flock(s->fd, LOCK_EX | LOCK_NB) < 0) {
		fg_err(err, errlen, "data=file:%s: in use by another process (flock: %s)", path,
		       strerror(errno));
		userdata_close(s);
		return -1;
	}
	if (fresh && st.st_size != 0) {
		fg_err(err, errlen,
		       "data=file:%s: exists and is not empty, but the drive starts empty (no "
		       "snapshot "
		       "loaded); remove the file, or pass the snapshot= it was saved with",
		       path);
		userdata_close(s);
		return -1;
	}
	if (!fresh && st.st_size != 0 && (uint64_t)st.st_size != size) {
		fg_err(err, errlen, "data=file:%s: size %llu does not match the drive's %llu bytes",
		       path, (unsigned long long)st.st_size, (unsigned long long)size);
		userdata_close(s);
		return -1;
	}
	if (ftruncate(s->fd, (off_t)size) < 0) {
		fg_err(err, errlen, "data=file:%s: cannot size it to %llu bytes: %s", path,
		       (unsigned long long)size, strerror(errno));
		userdata_close(s);
		return -1;
	}
	return 0;
}

void userdata_close(struct userdata *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	s->path = NULL;
}

int userdata_read(struct userdata *s, void *buf, uint64_t count, uint64_t off)
{
	char *p = buf;

	if (s->kind == USERDATA_NONE) {
		memset(buf, 0, count);
		return 0;
	}
	while (count) {
		ssize_t r = pread(s->fd, p, count, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		if (r == 0) { /* cannot happen below the fixed size; treat as zeroes */
			memset(p, 0, count);
			return 0;
		}
		p += r;
		off += (uint64_t)r;
		count -= (uint64_t)r;
	}
	return 0;
}

int userdata_write(struct userdata *s, const void *buf, uint64_t count, uint64_t off)
{
	const char *p = buf;

	if (s->kind == USERDATA_NONE)
		return 0;
	while (count) {
		ssize_t r = pwrite(s->fd, p, count, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return errno;
		p += r;
		off += (uint64_t)r;
		count -= (uint64_t)r;
	}
	return 0;
}

int userdata_zero(struct userdata *s, uint64_t count, uint64_t off)
{
	static const char zeroes[65536];

	if (s->kind == USERDATA_NONE || !count)
		return 0;
	if (!s->no_punch) {
		if (fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off,
		              (off_t)count) == 0)
			return 0;
		if (errno != EOPNOTSUPP && errno != ENOSYS)
			return errno;
		s->no_punch = true; /* benign race: another thread may still try once */
	}
	while (count) {
		uint64_t n = count < sizeof(zeroes) ? count : sizeof(zeroes);
		int rc = userdata_write(s, zeroes, n, off);
		if (rc)
			return rc;
		off += n;
		count -= n;
	}
	return 0;
}

int userdata_sync(struct userdata *s)
{
	if (s->kind != USERDATA_FILE)
		return 0;
	return fdatasync(s->fd) < 0 ? errno : 0;
}

static bool all_zero(const char *p, size_t n)
{
	for (; n && ((uintptr_t)p & 7); n--, p++)
		if (*p)
			return false;
	for (; n >= 8; n -= 8, p += 8)
		if (*(const uint64_t *)(const void *)p)
			return false;
	for (; n; n--, p++)
		if (*p)
			return false;
	return true;
}

/* Copy the data extents of in (size bytes) to the same offsets of out, skipping zero chunks. */
static int copy_sparse(int in, int out, uint64_t size, const char *what, char *err, size_t errlen)
{
	char *buf = malloc(CHUNK);
	uint64_t pos = 0;
	bool seek_ok = true;

	if (!buf)
		return fg_err(err, errlen, "%s: out of memory", what);
	while (pos < size) {
		uint64_t data = pos, hole = size;
		if (seek_ok) {
			off_t d = lseek(in, (off_t)pos, SEEK_DATA);
			if (d < 0 && errno == ENXIO)
				break; /* no data past pos */
			if (d < 0) {
				seek_ok = false; /* no SEEK_DATA here: copy everything */
			} else {
				off_t h = lseek(in, d, SEEK_HOLE);
				data = (uint64_t)d;
				hole = h < 0 ? size : (uint64_t)h;
			}
		}
		if (hole > size)
			hole = size;
		for (uint64_t off = data; off < hole;) {
			size_t n = hole - off < CHUNK ? (size_t)(hole - off) : CHUNK;
			ssize_t r = pread(in, buf, n, (off_t)off);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0) {
				free(buf);
				return fg_err(err, errlen, "%s: read at %llu: %s", what,
				              (unsigned long long)off,
				              r < 0 ? strerror(errno) : "end of file");
			}
			if (!all_zero(buf, (size_t)r)) {
				for (ssize_t w = 0; w < r;) {
					ssize_t k = pwrite(out, buf + w, (size_t)(r - w),
					                   (off_t)off + w);
					if (k < 0 && errno == EINTR)
						continue;
					if (k < 0) {
						free(buf);
						return fg_err(err, errlen, "%s: write at %llu: %s",
						              what,
						              (unsigned long long)off +
						                      (unsigned long long)w,
						              strerror(errno));
					}
					w += k;
				}
			}
			off += (uint64_t)r;
		}
		pos = hole;
	}
	free(buf);
	return 0;
}

int userdata_save(struct userdata *s, const char *path, char *err, size_t errlen)
{
	struct fg_atomic a;
	int rc;

	if (s->kind == USERDATA_NONE)
		return 0;
	if (fg_atomic_open(&a, path, err, errlen))
		return -1;
	rc = ftruncate(a.fd, (off_t)s->size) < 0
	             ? fg_err(err, errlen, "%s: ftruncate: %s", a.tmp, strerror(errno))
	             : copy_sparse(s->fd, a.fd, s->size, path, err, errlen);
	if (rc) {
		fg_atomic_abort(&a);
		return rc;
	}
	return fg_atomic_commit(&a, err, errlen);
}

int userdata_load(struct userdata *s, const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd, rc;

	if (s->kind == USERDATA_NONE)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fg_err(err, errlen, "%s: %s", path, strerror(errno));
	if (fstat(fd, &st) < 0)
		st.st_size = -1;
	if ((uint64_t)st.st_size != s->size) {
		close(fd);
		return fg_err(err, errlen, "%s: size %llu does not match the drive's %llu bytes",
		              path, (unsigned long long)st.st_size, (unsigned long long)s->size);
	}
	rc = copy_sparse(fd, s->fd, s->size, path, err, errlen);
	close(fd);
	return rc;
}

uint64_t userdata_allocated(const struct userdata *s)
{
	struct stat st;

	if (s->fd < 0 || fstat(s->fd, &st) < 0)
		return 0;
	return (uint64_t)st.st_blocks * 512;
}
