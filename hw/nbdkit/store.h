/* store.h - the user-data store behind the nbdkit plugin: none, RAM (a memfd) or a file. */
#ifndef FG_STORE_H
#define FG_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum store_kind { STORE_NONE, STORE_RAM, STORE_FILE };

struct store {
	enum store_kind kind;
	int fd;        /* -1 for STORE_NONE */
	uint64_t size; /* bytes, the FTL's user capacity */
	char *path;    /* STORE_FILE only */
	bool no_punch; /* fallocate(PUNCH_HOLE) unsupported: zero by writing */
};

/*
 * Open the store. fresh: the FTL starts empty, so a data file must be new or empty (its old
 * contents would contradict the FTL). On error returns -1 with a message in err.
 */
int store_open(struct store *s, enum store_kind kind, const char *path, uint64_t size, bool fresh,
               char *err, size_t errlen);
void store_close(struct store *s);

/* I/O; offsets and counts need no alignment. Return 0 or an errno value. */
int store_read(struct store *s, void *buf, uint64_t count, uint64_t off);
int store_write(struct store *s, const void *buf, uint64_t count, uint64_t off);
/* Make [off, off+count) read back as zeroes, releasing the space where possible. */
int store_zero(struct store *s, uint64_t count, uint64_t off);
int store_sync(struct store *s);

/* Copy the store into a sparse file (temp file + fsync + rename), or back from one. */
int store_save(struct store *s, const char *path, char *err, size_t errlen);
int store_load(struct store *s, const char *path, char *err, size_t errlen);
/* Bytes the store holds (allocated blocks), for the stats. */
uint64_t store_allocated(const struct store *s);

#endif
