/*
 * checkpoint.c - the FTL state bound to the data file it describes (ftl.h, docs/checkpoint.md).
 *
 * The device paths keep the user data in one file (QEMU's drive, the nbdkit plugin's data=)
 * and the FTL state in another (the snapshot). A checkpoint saves the state with, in its tag,
 * the data file's size and modification time at that moment:
 *     "checkpoint seq=12 size=268435456 mtime=1764639112.123456789"
 * Every later write to the data file moves its mtime forward, so at the next start a data file
 * whose mtime is older than the recorded one cannot hold what the state describes: it was
 * restored from an older copy, and the state is refused. A different size is refused too.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ftl_int.h"

struct binding {
	uint64_t seq, size;
	int64_t sec, nsec;
	int has_data;
};

static int parse_tag(const char *tag, struct binding *b)
{
	memset(b, 0, sizeof(*b));
	if (strncmp(tag, "checkpoint ", 11))
		return -1;
	if (sscanf(tag, "checkpoint seq=%" SCNu64 " size=%" SCNu64 " mtime=%" SCNd64 ".%" SCNd64,
	           &b->seq, &b->size, &b->sec, &b->nsec) == 4)
		b->has_data = 1;
	else if (sscanf(tag, "checkpoint seq=%" SCNu64, &b->seq) != 1)
		return -1;
	return 0;
}

uint64_t ftl_checkpoint_seq(const struct ftl *f)
{
	struct binding b;
	return parse_tag(f->tag, &b) ? 0 : b.seq;
}

int ftl_checkpoint(struct ftl *f, const char *snapshot, const char *data_path, char *err,
                   size_t errlen)
{
	char tag[FTL_TAG_MAX], old[FTL_TAG_MAX];
	uint64_t seq = ftl_checkpoint_seq(f) + 1;
	struct stat st;
	int rc;

	/* the data file's inode made durable too: fdatasync (the caller's) does not write a change
	 * of mtime alone, and after a power loss an older mtime on disk would refuse good data */
	int fd = data_path ? open(data_path, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	if (data_path && stat(data_path, &st)) {
		snprintf(err, errlen, "%s: %s (the data file of checkpoint %s)", data_path,
		         strerror(errno), snapshot);
		return FTL_E_IO;
	}
	if (data_path)
		snprintf(tag, sizeof(tag), "checkpoint seq=%" PRIu64 " size=%" PRIu64 " mtime=%lld.%09ld",
		         seq, (uint64_t)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	else
		snprintf(tag, sizeof(tag), "checkpoint seq=%" PRIu64, seq);
	memcpy(old, f->tag, sizeof(old));
	ftl_set_tag(f, tag);
	rc = ftl_snapshot_save(f, snapshot, err, errlen);
	if (rc) /* the file on disk still holds the old state: so does the tag */
		memcpy(f->tag, old, sizeof(old));
	return rc;
}

int ftl_checkpoint_verify(const struct ftl *f, const char *data_path, char *err, size_t errlen)
{
	struct binding b;
	struct stat st;

	if (!data_path || parse_tag(f->tag, &b) || !b.has_data)
		return FTL_OK;
	if (stat(data_path, &st)) {
		snprintf(err, errlen,
		         "%s: %s: the saved FTL state (checkpoint %" PRIu64 ") describes this data "
		         "file",
		         data_path, strerror(errno), b.seq);
		return FTL_E_IO;
	}
	if ((uint64_t)st.st_size != b.size) {
		snprintf(err, errlen,
		         "%s: %" PRIu64 " bytes, but the saved FTL state (checkpoint %" PRIu64
		         ") was taken with %" PRIu64 ": another drive's data?",
		         data_path, (uint64_t)st.st_size, b.seq, b.size);
		return FTL_E_INVAL;
	}
	if (st.st_mtim.tv_sec < b.sec || (st.st_mtim.tv_sec == b.sec && st.st_mtim.tv_nsec < b.nsec)) {
		snprintf(err, errlen,
		         "%s: last modified at %lld.%09ld, before the saved FTL state's checkpoint %" PRIu64
		         " (%" PRId64 ".%09" PRId64 "): the state is newer than the data (a data file "
		         "restored from an older copy?); restore the snapshot saved with it, or start "
		         "a new drive",
		         data_path, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, b.seq, b.sec, b.nsec);
		return FTL_E_INVAL;
	}
	return FTL_OK;
}
