/* atomicfile - files written whole or not at all (atomicfile.h says the rules). */
#include "atomicfile.h"

#include "err.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *fg_file_kind(mode_t m)
{
	if (S_ISDIR(m))
		return "a directory";
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO";
	if (S_ISSOCK(m))
		return "a socket";
	if (S_ISLNK(m))
		return "a symbolic link";
	return "not a regular file";
}

/* The file path names, to be replaced: a malloc'd path (symbolic links resolved), *mode its
 * mode when it exists (0 when it does not), or NULL with err filled. */
static char *resolve(const char *path, mode_t *mode, char *err, size_t errlen)
{
	struct stat st;
	char *target;

	*mode = 0;
	if (!path || !*path)
		return fg_err(err, errlen, "no file name"), NULL;
	if (lstat(path, &st)) {
		if (errno != ENOENT)
			return fg_err(err, errlen, "%s: %s", path, strerror(errno)), NULL;
		if (!(target = strdup(path)))
			return fg_err(err, errlen, "%s: out of memory", path), NULL;
		return target;
	}
	if (S_ISLNK(st.st_mode)) {
		if (!(target = realpath(path, NULL)))
			return fg_err(err, errlen, "%s: a symbolic link to nothing (%s); name a new file or a "
			                           "regular one", path, strerror(errno)), NULL;
		if (stat(target, &st)) {
			fg_err(err, errlen, "%s: %s", target, strerror(errno));
			free(target);
			return NULL;
		}
		if (!S_ISREG(st.st_mode)) {
			fg_err(err, errlen, "%s: a symbolic link to %s (%s), which would be replaced; name a "
			                    "new file or a regular one", path, target, fg_file_kind(st.st_mode));
			free(target);
			return NULL;
		}
		*mode = st.st_mode & 07777;
		return target;
	}
	if (!S_ISREG(st.st_mode))
		return fg_err(err, errlen, "%s: %s, which would be replaced; name a new file or a "
		                           "regular one", path, fg_file_kind(st.st_mode)), NULL;
	*mode = st.st_mode & 07777;
	if (!(target = strdup(path)))
		return fg_err(err, errlen, "%s: out of memory", path), NULL;
	return target;
}

int fg_atomic_check(const char *path, char *err, size_t errlen)
{
	mode_t mode;
	char *t = resolve(path, &mode, err, errlen);

	free(t);
	return t ? 0 : -1;
}

int fg_atomic_open(struct fg_atomic *a, const char *path, char *err, size_t errlen)
{
	static unsigned counter;
	mode_t mode;
	size_t n;

	memset(a, 0, sizeof(*a));
	a->fd = -1;
	if (!(a->target = resolve(path, &mode, err, errlen)))
		return -1;
	n = strlen(a->target) + 32;
	if (!(a->tmp = malloc(n))) {
		fg_err(err, errlen, "%s: out of memory", path);
		goto fail;
	}
	/* O_EXCL on a name of our own: never an existing file; mode 0666 less the umask */
	for (int i = 0; i < 100 && a->fd < 0; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		snprintf(a->tmp, n, "%s.tmp.%06x", a->target,
		         (unsigned)((uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 8) ^ (counter++ * 2654435761u)) &
		                 0xffffff);
		a->fd = open(a->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (a->fd < 0 && errno != EEXIST)
			break;
	}
	if (a->fd < 0) {
		fg_err(err, errlen, "%s: cannot create a file beside it: %s", path, strerror(errno));
		goto fail;
	}
	if (mode && fchmod(a->fd, mode)) {
		fg_err(err, errlen, "%s: cannot give it %s's mode: %s", a->tmp, path, strerror(errno));
		fg_atomic_abort(a);
		return -1;
	}
	return 0;
fail:
	free(a->tmp);
	free(a->target);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
	return -1;
}

FILE *fg_atomic_stream(struct fg_atomic *a, char *err, size_t errlen)
{
	if (!a->stream && !(a->stream = fdopen(a->fd, "w")))
		fg_err(err, errlen, "%s: %s", a->tmp, strerror(errno));
	return a->stream;
}

static void release(struct fg_atomic *a)
{
	if (a->stream)
		fclose(a->stream); /* (closes fd) */
	else if (a->fd >= 0)
		close(a->fd);
	if (a->tmp)
		unlink(a->tmp); /* ours: created by O_EXCL above */
	free(a->tmp);
	free(a->target);
	memset(a, 0, sizeof(*a));
	a->fd = -1;
}

void fg_atomic_abort(struct fg_atomic *a)
{
	release(a);
}

/* fsync the directory that holds path, so that its rename is durable */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];
	int fd, rc;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	rc = fsync(fd);
	close(fd);
	return rc;
}

int fg_atomic_commit(struct fg_atomic *a, char *err, size_t errlen)
{
	int e = 0;

	if (a->stream) {
		if (fflush(a->stream) || ferror(a->stream))
			e = errno ? errno : EIO;
	}
	if (!e && fsync(a->fd))
		e = errno;
	if (a->stream) {
		if (fclose(a->stream) && !e)
			e = errno;
		a->stream = NULL;
	} else if (close(a->fd) && !e) {
		e = errno;
	}
	a->fd = -1;
	if (e) {
		fg_err(err, errlen, "%s: cannot write it: %s", a->target, strerror(e));
		release(a);
		return -1;
	}
	if (rename(a->tmp, a->target)) {
		fg_err(err, errlen, "%s: cannot rename %s over it: %s", a->target, a->tmp, strerror(errno));
		release(a);
		return -1;
	}
	free(a->tmp);
	a->tmp = NULL;
	if (sync_dir(a->target)) {
		fg_err(err, errlen, "%s: written, but its directory could not be synced: %s", a->target,
		       strerror(errno));
		release(a);
		return -1;
	}
	release(a);
	return 0;
}

int fg_atomic_write(const char *path, const void *buf, size_t len, char *err, size_t errlen)
{
	struct fg_atomic a;
	const char *p = buf;

	if (fg_atomic_open(&a, path, err, errlen))
		return -1;
	while (len) {
		ssize_t w = write(a.fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			fg_err(err, errlen, "%s: cannot write it: %s", path, w < 0 ? strerror(errno) : "short write");
			fg_atomic_abort(&a);
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return fg_atomic_commit(&a, err, errlen);
}
