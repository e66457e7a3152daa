/*
 * blk.c - block I/O trace readers.
 *
 * blk-csv (traces/FORMATS.md): "time_ns,op,lba,bytes" with op R, W, D (discard) or F (flush) and
 * lba in 512-byte sectors; an optional header line and '#' comments. scripts/capture-blk.bt
 * prints exactly this.
 *
 * biosnoop: the text output of libbpf-tools' biosnoop:
 *   TIME(s)  COMM  PID  DISK  T  SECTOR  BYTES  [QUE(ms)]  LAT(ms)
 * COMM may contain spaces, so a line is parsed from the right. T is the kernel's rwbs string:
 * it contains 'D' for discards, 'W' for writes, 'R' for reads; 'F' with no data is a flush.
 * TIME(s) is seconds since biosnoop started; it becomes nanoseconds.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

int blk_open(struct trace *t)
{
	return lineio_open(&t->lio, t->path, t->err, sizeof(t->err));
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static int csv_line(struct trace *t, char *line, struct blk_io *io)
{
	char *f[5];
	int n = 0;
	for (char *p = line; n < 5; n++) {
		f[n] = p;
		char *c = strchr(p, ',');
		if (!c) {
			n++;
			break;
		}
		*c = 0;
		p = c + 1;
	}
	if (n != 4)
		return trace_bad(t, "expected 4 fields time_ns,op,lba,bytes, got %d", n) ? -1 : 0;
	for (int i = 0; i < 4; i++) {
		while (*f[i] == ' ')
			f[i]++;
		char *e = f[i] + strlen(f[i]);
		while (e > f[i] && e[-1] == ' ')
			*--e = 0;
	}
	if (!parse_u64(f[0], &io->t_ns))
		return trace_bad(t, "time_ns '%s': not a non-negative integer", f[0]) ? -1 : 0;
	if (strlen(f[1]) != 1 || !strchr("RWDF", f[1][0]))
		return trace_bad(t, "op '%s': must be R, W, D or F", f[1]) ? -1 : 0;
	io->op = f[1][0];
	if (!parse_u64(f[2], &io->lba))
		return trace_bad(t, "lba '%s': not a non-negative integer (512-byte sectors)", f[2]) ? -1 : 0;
	if (!parse_u64(f[3], &io->bytes))
		return trace_bad(t, "bytes '%s': not a non-negative integer", f[3]) ? -1 : 0;
	if (!io->bytes && io->op != 'F')
		return trace_bad(t, "bytes 0: only a flush (F) may be empty") ? -1 : 0;
	if (io->lba > UINT64_MAX / 512 || io->bytes > UINT64_MAX - io->lba * 512)
		return trace_bad(t, "lba %llu + bytes %llu overflows", (unsigned long long)io->lba,
				 (unsigned long long)io->bytes) ? -1 : 0;
	return 1;
}

static int biosnoop_line(struct trace *t, char *line, struct blk_io *io)
{
	char *tok[64];
	int n = 0;
	for (char *p = strtok(line, " \t"); p && n < 64; p = strtok(NULL, " \t"))
		tok[n++] = p;
	int tail = t->bio_que ? 5 : 4; /* T SECTOR BYTES [QUE] LAT, after TIME COMM PID DISK */
	if (n < 4 + tail)
		return trace_bad(t, "biosnoop line has %d fields, expected at least %d", n, 4 + tail) ? -1 : 0;
	char *end;
	errno = 0;
	double secs = strtod(tok[0], &end);
	if (errno || *end || !(secs >= 0 && secs < 1e10))
		return trace_bad(t, "TIME(s) '%s': not a time in seconds (0 to 1e10)", tok[0]) ? -1 : 0;
	const char *rwbs = tok[n - tail];
	if (!parse_u64(tok[n - tail + 1], &io->lba))
		return trace_bad(t, "SECTOR '%s': not a sector number", tok[n - tail + 1]) ? -1 : 0;
	if (!parse_u64(tok[n - tail + 2], &io->bytes))
		return trace_bad(t, "BYTES '%s': not a byte count", tok[n - tail + 2]) ? -1 : 0;
	if (strchr(rwbs, 'D'))
		io->op = 'D';
	else if (strchr(rwbs, 'W'))
		io->op = io->bytes || !strchr(rwbs, 'F') ? 'W' : 'F';
	else if (strchr(rwbs, 'R'))
		io->op = 'R';
	else if (strchr(rwbs, 'F'))
		io->op = 'F';
	else
		return trace_bad(t, "T '%s': not a read, write, discard or flush", rwbs) ? -1 : 0;
	if (io->op == 'F')
		io->bytes = 0, io->lba = 0;
	else if (!io->bytes)
		return trace_bad(t, "BYTES 0 on a %c request", io->op) ? -1 : 0;
	io->t_ns = (uint64_t)(secs * 1e9 + 0.5);
	return 1;
}

int blk_next(struct trace *t, struct blk_io *io)
{
	char *line;
	size_t len;
	int rc;
	while ((rc = lineio_next(&t->lio, &line, &len, t->err, sizeof(t->err))) == 1) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		if (t->fmt == TF_BIOSNOOP && !strncmp(line, "TIME(s)", 7)) {
			t->bio_que = strstr(line, "QUE(ms)") != NULL;
			continue;
		}
		if (t->fmt == TF_BLK_CSV && t->lio.line == 1 && !strncmp(line, "time_ns", 7))
			continue;
		int r = t->fmt == TF_BIOSNOOP ? biosnoop_line(t, line, io) : csv_line(t, line, io);
		if (r < 0)
			return -1;
		if (r == 0)
			continue; /* skipped */
		if (io->t_ns < t->last_t_ns && t->fmt == TF_BLK_CSV) {
			if (trace_bad(t, "time_ns %llu goes back (previous %llu)", (unsigned long long)io->t_ns,
				      (unsigned long long)t->last_t_ns))
				return -1;
			continue;
		}
		/* biosnoop prints completions; issue times can be slightly out of order: keep them */
		if (io->t_ns > t->last_t_ns)
			t->last_t_ns = io->t_ns;
		return 1;
	}
	return rc;
}
