/*
 * lineio.c - read a text file line by line, plain or zstd-compressed, with line numbers.
 *
 * Traces are big and often compressed, so readers never load a whole file: this keeps one
 * growing buffer of decompressed text and hands out one NUL-terminated line at a time.
 * Compression is detected from the zstd frame magic (28 b5 2f fd), not the file name, and
 * decoded with libzstd's streaming API. A corrupt or truncated stream is an error naming the
 * file, never a silently shortened trace.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "lineio.h"
#include "vec.h"

#define CHUNK (1u << 17)
/* The longest line read. A text trace's records are kilobytes (a Mooncake request with
 * thousands of hash ids is tens of KiB); a longer "line" is binary or corrupt data, and saying so
 * beats growing a buffer until memory runs out. */
#define LINE_MAX_BYTES (64u << 20)

int lineio_open(struct lineio *l, const char *path, char *err, size_t errlen)
{
	memset(l, 0, sizeof(*l));
	l->path = path;
	l->f = fopen(path, "rb");
	if (!l->f) {
		snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	uint8_t magic[4];
	size_t n = fread(magic, 1, 4, l->f);
	rewind(l->f);
	l->zst = n == 4 && magic[0] == 0x28 && magic[1] == 0xb5 && magic[2] == 0x2f && magic[3] == 0xfd;
	l->cap = CHUNK;
	l->bufcap = CHUNK + 1;
	l->buf = malloc(l->bufcap);
	if (l->zst) {
		l->dctx = ZSTD_createDCtx();
		l->in = malloc(CHUNK);
	}
	if (!l->buf || (l->zst && (!l->dctx || !l->in))) {
		snprintf(err, errlen, "%s: out of memory", path);
		lineio_close(l);
		return -1;
	}
	return 0;
}

void lineio_close(struct lineio *l)
{
	if (l->f)
		fclose(l->f);
	if (l->dctx)
		ZSTD_freeDCtx(l->dctx);
	free(l->in);
	free(l->buf);
	memset(l, 0, sizeof(*l));
}

/* Append more decompressed bytes at buf+len. Returns bytes added, 0 at end, -1 on error. */
static long refill(struct lineio *l, char *err, size_t errlen)
{
	if (l->len == l->cap) {
		if (l->len >= LINE_MAX_BYTES) {
			snprintf(err, errlen,
			         "%s:%llu: a line longer than %u MiB: not a text trace (binary or "
			         "corrupt data?)",
			         l->path, (unsigned long long)l->line + 1, LINE_MAX_BYTES >> 20);
			return -1;
		}
		/* room for one more byte past the NUL's: the buffer doubles (need is computed
		 * first: vec_reserve() reads it again after growing bufcap) */
		uint64_t need = l->bufcap + 1;
		if (vec_reserve(l->buf, l->bufcap, need)) {
			snprintf(err, errlen, "%s:%llu: out of memory for a line of %zu bytes", l->path,
			         (unsigned long long)l->line + 1, l->len);
			return -1;
		}
		l->cap = (size_t)l->bufcap - 1;
	}
	if (!l->zst) {
		size_t n = fread(l->buf + l->len, 1, l->cap - l->len, l->f);
		if (!n && ferror(l->f)) {
			snprintf(err, errlen, "%s: read error: %s", l->path, strerror(errno));
			return -1;
		}
		l->len += n;
		return (long)n;
	}
	for (;;) {
		if (l->in_pos == l->in_len) {
			l->in_len = fread(l->in, 1, CHUNK, l->f);
			l->in_pos = 0;
			if (!l->in_len) {
				if (ferror(l->f)) {
					snprintf(err, errlen, "%s: read error: %s", l->path, strerror(errno));
					return -1;
				}
				if (l->frame_open) {
					snprintf(err, errlen, "%s: truncated zstd stream", l->path);
					return -1;
				}
				return 0;
			}
		}
		ZSTD_inBuffer in = {l->in, l->in_len, l->in_pos};
		ZSTD_outBuffer out = {l->buf + l->len, l->cap - l->len, 0};
		size_t r = ZSTD_decompressStream(l->dctx, &out, &in);
		l->in_pos = in.pos;
		if (ZSTD_isError(r)) {
			snprintf(err, errlen, "%s: corrupt zstd stream: %s", l->path, ZSTD_getErrorName(r));
			return -1;
		}
		l->frame_open = r != 0;
		l->len += out.pos;
		if (out.pos)
			return (long)out.pos;
	}
}

int lineio_next(struct lineio *l, char **line, size_t *len, char *err, size_t errlen)
{
	for (;;) {
		char *nl = memchr(l->buf + l->pos, '\n', l->len - l->pos);
		if (nl || (l->eof && l->pos < l->len)) {
			size_t n = nl ? (size_t)(nl - (l->buf + l->pos)) : l->len - l->pos;
			char *s = l->buf + l->pos;
			l->pos = nl ? (size_t)(nl - l->buf) + 1 : l->len;
			l->bytes += n + (nl ? 1 : 0);
			l->line++;
			s[n] = 0; /* buf has one spare byte past cap for a last line without '\n' */
			if (n && s[n - 1] == '\r')
				s[--n] = 0;
			*line = s;
			*len = n;
			return 1;
		}
		if (l->eof)
			return 0;
		/* keep the partial line, make room after it */
		if (l->pos) {
			memmove(l->buf, l->buf + l->pos, l->len - l->pos);
			l->len -= l->pos;
			l->pos = 0;
		}
		long r = refill(l, err, errlen);
		if (r < 0)
			return -1;
		if (!r)
			l->eof = 1;
	}
}
