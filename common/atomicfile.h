/*
 * atomicfile - every file the tools write, written whole or not at all, and never over
 * something that is not ours to replace.
 *
 *   struct fg_atomic a;
 *   if (fg_atomic_open(&a, path, err, sizeof(err)))   ... refused or cannot create: err says
 *   write(a.fd, ...) or fprintf(fg_atomic_stream(&a, ...), ...)
 *   if (fg_atomic_commit(&a, err, sizeof(err)))       ... nothing was replaced: err says
 *   (or fg_atomic_abort(&a): the temporary file goes, the target is untouched)
 *
 * The rules, the same for every writer (snapshots, the nbdkit plugin's state and stats, the QEMU
 * device's stats file, kv/sweep/lift/synth outputs):
 * - The data goes to a temporary file beside the target (TARGET.tmp.XXXXXX, same directory, so
 *   the rename cannot cross file systems), is flushed and fsync'd, then renamed over the
 *   target, and the directory is fsync'd. A reader sees the old file or the new one, never
 *   half of one; after commit returns, the new file survives a power cut (on file systems
 *   that honour fsync).
 * - A target that exists and is not a regular file (a device node such as /dev/full, a FIFO, a
 *   socket, a directory) is refused before anything is written: renaming over it would
 *   replace it.
 * - A symbolic link is followed: the file it points to is replaced (in that file's directory)
 *   and the link stays. A link that points nowhere, or to something that is not a regular
 *   file, is refused.
 * - A new file gets mode 0666 less the umask, as fopen() would give it; a replaced file keeps
 *   its mode.
 * - Nothing but our own temporary file is ever deleted, on any error.
 */
#ifndef FG_ATOMICFILE_H
#define FG_ATOMICFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct fg_atomic {
	char *target; /* the file that will be replaced (symbolic links resolved) */
	char *tmp;    /* the temporary file beside it, NULL once renamed or removed */
	int fd;       /* open on tmp for writing */
	FILE *stream; /* fg_atomic_stream's stream on fd, or NULL */
};

/* Check path (see the rules above) and create the temporary file: 0, or -1 with err filled
 * ("PATH: not a regular file ..."). On error a has nothing to release. */
int fg_atomic_open(struct fg_atomic *a, const char *path, char *err, size_t errlen);

/* A stdio stream on a->fd (made once; closed by commit or abort), or NULL with err filled. */
FILE *fg_atomic_stream(struct fg_atomic *a, char *err, size_t errlen);

/* Flush, fsync, close, rename over the target, fsync its directory: 0, or -1 with err filled
 * and the temporary file removed (the target is then as it was). a is released either way. */
int fg_atomic_commit(struct fg_atomic *a, char *err, size_t errlen);

/* Drop the temporary file; the target is untouched. a is released. */
void fg_atomic_abort(struct fg_atomic *a);

/* The whole of buf[0..len) into path by the rules above: 0, or -1 with err filled. */
int fg_atomic_write(const char *path, const void *buf, size_t len, char *err, size_t errlen);

/* What a file of mode m is, for a message: "a directory", "a character device", "a block
 * device", "a FIFO", "a socket", "a symbolic link", else "not a regular file". */
const char *fg_file_kind(mode_t m);

/* Whether path may be written by these rules (does not exist, or is a regular file or a link
 * to one): 0, or -1 with err filled. For callers that want to refuse before doing any work. */
int fg_atomic_check(const char *path, char *err, size_t errlen);

#endif
