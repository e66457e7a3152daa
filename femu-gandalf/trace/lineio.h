/* lineio.h - line-by-line reading of plain or zstd-compressed text files (see lineio.c). */
#ifndef FG_LINEIO_H
#define FG_LINEIO_H

#include <stdint.h>
#include <stdio.h>

struct lineio {
	const char *path;
	FILE *f;
	int zst, eof, frame_open;
	void *dctx;
	uint8_t *in;
	size_t in_len, in_pos;
	char *buf;
	size_t cap, len, pos; /* cap: room for text at buf */
	uint64_t bufcap;      /* bytes allocated at buf: cap + 1, the spare one for a NUL */
	uint64_t line;  /* number of the line last returned (1-based) */
	uint64_t bytes; /* decompressed bytes returned so far */
};

int lineio_open(struct lineio *l, const char *path, char *err, size_t errlen);
/* 1: *line is the next line (NUL-terminated, no '\n'), 0: end of file, -1: error in err. */
int lineio_next(struct lineio *l, char **line, size_t *len, char *err, size_t errlen);
void lineio_close(struct lineio *l);

#endif
