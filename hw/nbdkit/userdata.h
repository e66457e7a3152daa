/* userdata.h - the user-data store behind the nbdkit plugin: none, RAM (a memfd) or a file. */
#ifndef FG_USERDATA_H
#define FG_USERDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum userdata_kind { USERDATA_NONE, USERDATA_RAM, USERDATA_FILE };

struct userdata {
	enum userdata_kind kind;
	int fd;        /* -1 for USERDATA_NONE */
	uint64_t size; /* bytes, the FTL's user capacity */
	char *path;    /* USERDATA_FILE only */
	bool no_punch; /* fallocate(PUNCH_HOLE) unsupported: zero by writing */
};

/*
 * Open the store. fresh: the FTL starts empty, so a data file must be new or empty (its old
 * contents would contradict the FTL). On error returns -1 with a message in err.
 */
int userdata_open(struct userdata *s, enum userdata_kind kind, const char *path, uint64_t size,
                  bool fresh, char *err, size_t errlen);
void userdata_close(struct userdata *s);

/* I/O; offsets and counts need no alignment. Return 0 or an errno value. */
int userdata_read(struct userdata *s, void *buf, uint64_t count, uint64_t off);
int userdata_write(struct userdata *s, const void *buf, uint64_t count, uint64_t off);
/* Make [off, off+count) read back as zeroes, releasing the space where possible. */
int userdata_zero(struct userdata *s, uint64_t count, uint64_t off);
int userdata_sync(struct userdata *s);

/* Copy the store into a sparse file (temp file + fsync + rename), or back from one. */
int userdata_save(struct userdata *s, const char *path, char *err, size_t errlen);
int userdata_load(struct userdata *s, const char *path, char *err, size_t errlen);
/* Bytes the store holds (allocated blocks), for the stats. */
uint64_t userdata_allocated(const struct userdata *s);

#endif
