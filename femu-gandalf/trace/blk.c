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
 * it contains 'D' for discards, 'W' for writes, 'R' for reads; 'F' with no data is a flush
 * (libbpf-tools 0.31 prints its sector as -1 and its COMM as '?').
 * TIME(s) is seconds since biosnoop started; it becomes nanoseconds.
 *
 * blk-ftrace: the text of the kernel's block_rq_issue / block_rq_complete tracepoints, as
 * tracefs's trace and trace_pipe, trace-cmd report and perf script print them:
 *   TASK-PID [CPU] FLAGS TIMESTAMP: block_rq_issue: MAJ,MIN RWBS BYTES (CMD) SECTOR + NR [COMM]
 *   TASK-PID [CPU] FLAGS TIMESTAMP: block_rq_complete: MAJ,MIN RWBS (CMD) SECTOR + NR [ERROR]
 * (perf script writes "block:block_rq_issue:"). Each I/O appears once per event, so the first
 * of the two events in the file is the one kept and the other is ignored, as are other
 * events (block_bio_queue, ...). One device per trace: an event for a second device is a bad
 * record. ftrace reporting lost or overwritten events is an error: the capture is incomplete.
 * This needs no BPF, so it works where Debian 12's biosnoop cannot attach (kernel >= 5.17).
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace_int.h"

int blk_open(struct trace *t)
{
	return trace_lineio_open(t);
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
	char *f[6];
	int n = 0;
	for (char *p = line; n < 6; n++) {
		f[n] = p;
		char *c = strchr(p, ',');
		if (!c) {
			n++;
			break;
		}
		*c = 0;
		p = c + 1;
	}
	if (n != 4 && n != 5)
		return trace_bad(t, "expected 4 fields time_ns,op,lba,bytes (and pid), got %d", n);
	for (int i = 0; i < n; i++) {
		while (*f[i] == ' ')
			f[i]++;
		char *e = f[i] + strlen(f[i]);
		while (e > f[i] && e[-1] == ' ')
			*--e = 0;
	}
	if (!parse_u64(f[0], &io->t_ns))
		return trace_bad(t, "time_ns '%s': not a non-negative integer", f[0]);
	if (strlen(f[1]) != 1 || !strchr("RWDF", f[1][0]))
		return trace_bad(t, "op '%s': must be R, W, D or F", f[1]);
	io->op = f[1][0];
	if (!parse_u64(f[2], &io->lba))
		return trace_bad(t, "lba '%s': not a non-negative integer (512-byte sectors)",
		                 f[2]);
	if (!parse_u64(f[3], &io->bytes))
		return trace_bad(t, "bytes '%s': not a non-negative integer", f[3]);
	if (!io->bytes && io->op != 'F')
		return trace_bad(t, "bytes 0: only a flush (F) may be empty");
	io->placed = false;
	io->pid = 0;
	if (n == 5 && *f[4]) { /* a write's FDP placement ID; empty: none */
		uint64_t pid;
		if (!parse_u64(f[4], &pid) || pid > UINT16_MAX)
			return trace_bad(t, "pid '%s': an FDP placement ID, 0 to 65535", f[4]);
		if (io->op != 'W')
			return trace_bad(t, "pid %s on a %c: only a write has a placement ID", f[4],
			                 io->op);
		io->placed = true;
		io->pid = (uint16_t)pid;
	}
	if (io->lba > UINT64_MAX / 512 || io->bytes > UINT64_MAX - io->lba * 512)
		return trace_bad(t, "lba %llu + bytes %llu overflows", (unsigned long long)io->lba,
		                 (unsigned long long)io->bytes);
	return 1;
}

/* The request's op from the kernel's rwbs string (blk_fill_rwbs): a leading 'F' is a
 * pre-flush, a trailing one FUA; 'D' discard, 'W' write, 'R' read. Returns false for 'N'
 * (write-zeroes, passthrough) and anything else. */
static bool rwbs_op(const char *rwbs, uint64_t bytes, char *op)
{
	if (strchr(rwbs, 'D'))
		*op = 'D';
	else if (strchr(rwbs, 'W'))
		*op = bytes || !strchr(rwbs, 'F') ? 'W' : 'F';
	else if (strchr(rwbs, 'R'))
		*op = 'R';
	else if (strchr(rwbs, 'F'))
		*op = 'F';
	else
		return false;
	return true;
}

static int biosnoop_line(struct trace *t, char *line, struct blk_io *io)
{
	char *tok[64];
	int n = 0;
	char *save;
	for (char *p = strtok_r(line, " \t", &save); p && n < 64; p = strtok_r(NULL, " \t", &save))
		tok[n++] = p;
	int tail = t->bio_que ? 5 : 4; /* T SECTOR BYTES [QUE] LAT, after TIME COMM PID DISK */
	if (n < 4 + tail)
		return trace_bad(t, "biosnoop line has %d fields, expected at least %d", n,
		                 4 + tail);
	char *end;
	errno = 0;
	double secs = strtod(tok[0], &end);
	if (errno || *end || !(secs >= 0 && secs < 1e10))
		return trace_bad(t, "TIME(s) '%s': not a time in seconds (0 to 1e10)", tok[0]);
	const char *rwbs = tok[n - tail], *sector = tok[n - tail + 1];
	if (!parse_u64(tok[n - tail + 2], &io->bytes))
		return trace_bad(t, "BYTES '%s': not a byte count", tok[n - tail + 2]);
	if (!rwbs_op(rwbs, io->bytes, &io->op))
		return trace_bad(t, "T '%s': not a read, write, discard or flush", rwbs);
	/* a flush has no sector: biosnoop prints the kernel's (sector_t)-1 as -1 */
	if (!(io->op == 'F' && !strcmp(sector, "-1")) && !parse_u64(sector, &io->lba))
		return trace_bad(t, "SECTOR '%s': not a sector number", sector);
	if (io->op == 'F')
		io->bytes = 0, io->lba = 0;
	else if (!io->bytes)
		return trace_bad(t, "BYTES 0 on a %c request", io->op);
	io->t_ns = (uint64_t)(secs * 1e9 + 0.5);
	return 1;
}

/*
 * Find "TIMESTAMP: EVENT: " in a tracepoint line: TIMESTAMP is digits and dots after a blank,
 * EVENT an identifier, optionally "block:"-prefixed. Returns 1 for block_rq_issue, 2 for
 * block_rq_complete, 3 for another block_* event, 4 for any other event, 0 when the line is no
 * event line; sets *ts and *rest (the text after "EVENT: ").
 */
static int ftrace_split(const char *line, double *ts, const char **rest)
{
	for (const char *p = line; (p = strchr(p, ':')); p++) {
		const char *b = p;
		while (b > line && (isdigit((unsigned char)b[-1]) || b[-1] == '.'))
			b--;
		if (b == p || (b > line && b[-1] != ' ' && b[-1] != '\t') || p[1] != ' ')
			continue;
		char *end;
		double v = strtod(b, &end);
		if (end != p)
			continue;
		const char *ev = p + 1;
		while (*ev == ' ')
			ev++;
		const char *name = !strncmp(ev, "block:", 6) ? ev + 6 : ev;
		const char *c = name;
		while (isalnum((unsigned char)*c) || *c == '_')
			c++;
		if (c == name || c[0] != ':' || (c[1] != ' ' && c[1] != 0))
			return 0;
		*ts = v;
		*rest = c + 1;
		size_t n = (size_t)(c - name);
		if (n == 14 && !strncmp(name, "block_rq_issue", n))
			return 1;
		if (n == 17 && !strncmp(name, "block_rq_complete", n))
			return 2;
		return !strncmp(name, "block_", 6) ? 3 : 4;
	}
	return 0;
}

int blk_ftrace_event(const char *line)
{
	double ts;
	const char *rest;
	int k = ftrace_split(line, &ts, &rest);
	return k >= 1 && k <= 3 ? k : 0;
}

static int ftrace_line(struct trace *t, char *line, struct blk_io *io)
{
	double ts;
	const char *p;
	int kind = ftrace_split(line, &ts, &p);
	if (!kind)
		return trace_bad(
		        t, "not a tracepoint line (expected 'TIMESTAMP: block_rq_issue: ...')");
	if (kind > 2 || (t->ft_event && kind != t->ft_event))
		return 0; /* another event, or the other half of an I/O already counted */
	unsigned maj, min;
	char rwbs[16];
	int n = 0;
	if (sscanf(p, " %u,%u %15s %n", &maj, &min, rwbs, &n) != 3 || !n)
		return trace_bad(t, "expected 'MAJ,MIN RWBS' after the event name");
	p += n;
	uint64_t bytes = 0, lba, nr;
	char *end;
	if (kind == 1) { /* block_rq_issue has the request's byte count */
		if (!isdigit((unsigned char)*p))
			return trace_bad(t, "block_rq_issue: expected the byte count after '%s'",
			                 rwbs);
		bytes = strtoull(p, &end, 10);
		p = end;
	}
	while (*p == ' ')
		p++;
	const char *close = *p == '(' ? strchr(p, ')') : NULL;
	if (!close)
		return trace_bad(t, "expected '(CMD)' before the sector");
	p = close + 1;
	errno = 0;
	lba = strtoull(p, &end, 10);
	if (errno || end == p || strncmp(end, " + ", 3))
		return trace_bad(t, "expected 'SECTOR + NR' after '(CMD)'");
	p = end + 3;
	nr = strtoull(p, &end, 10);
	if (errno || end == p || (*end && *end != ' '))
		return trace_bad(t, "NR: not a sector count");
	if (kind == 2) {
		bytes = nr * 512;
		const char *e = strrchr(end, '[');
		if (e && strtol(e + 1, NULL, 10) != 0)
			return trace_bad(
			        t,
			        "block_rq_complete with error %ld: the device may not have done it",
			        strtol(e + 1, NULL, 10));
	}
	if (!rwbs_op(rwbs, bytes, &io->op))
		return trace_bad(t,
		                 "RWBS '%s': not a read, write, discard or flush (write-zeroes and "
		                 "passthrough cannot be replayed)",
		                 rwbs);
	if (!t->ft_event) {
		t->ft_event = kind;
		t->ft_dev[0] = maj, t->ft_dev[1] = min;
	} else if (maj != t->ft_dev[0] || min != t->ft_dev[1]) {
		return trace_bad(
		        t, "device %u,%u: the trace's first I/O was on %u,%u (capture one device)",
		        maj, min, t->ft_dev[0], t->ft_dev[1]);
	}
	if (io->op == 'F') {
		lba = 0, bytes = 0;
	} else if (!bytes) {
		return trace_bad(t, "0 bytes on a %c request", io->op);
	} else if (lba > UINT64_MAX / 512 || bytes > UINT64_MAX - lba * 512) {
		return trace_bad(t, "sector %llu + %llu bytes overflows", (unsigned long long)lba,
		                 (unsigned long long)bytes);
	}
	if (!(ts >= 0 && ts < 1e10))
		return trace_bad(t, "timestamp %g: not a time in seconds (0 to 1e10)", ts);
	io->lba = lba;
	io->bytes = bytes;
	io->t_ns = (uint64_t)(ts * 1e9 + 0.5);
	return 1;
}

/* ftrace's own reports of lost events: "CPU:N [LOST M EVENTS]" in trace_pipe, or a header
 * "# entries-in-buffer/entries-written: A/B" with A < B (the ring buffer overwrote events). */
static int ftrace_lost(struct trace *t, const char *line)
{
	unsigned long long a, b;
	if (strstr(line, "[LOST ") && strstr(line, " EVENTS]"))
		return trace_bad(t, "ftrace lost events: the capture is incomplete (enlarge buffer_size_kb)") ? -1 : 1;
	if (sscanf(line, "# entries-in-buffer/entries-written: %llu/%llu", &a, &b) == 2 && a != b)
		return trace_bad(t, "ftrace kept %llu of %llu events (the ring buffer overwrote the rest; read trace_pipe or enlarge buffer_size_kb)",
				 a, b) ? -1 : 1;
	return 0;
}

int blk_next(struct trace *t, struct blk_io *io)
{
	char *line;
	size_t len;
	int rc;
	while ((rc = trace_next_line(t, &line, &len)) == 1) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (t->fmt == TF_FTRACE && (*line == '#' || *line == 'C')) {
			int lost = ftrace_lost(t, line);
			if (lost < 0)
				return -1;
			if (lost)
				continue;
		}
		if (!*line || *line == '#')
			continue;
		if (t->fmt == TF_BIOSNOOP && !strncmp(line, "TIME(s)", 7)) {
			t->bio_que = strstr(line, "QUE(ms)") != NULL;
			continue;
		}
		if (t->fmt == TF_BLK_CSV && t->lio.line == 1 && !strncmp(line, "time_ns", 7))
			continue;
		int r = t->fmt == TF_BIOSNOOP ? biosnoop_line(t, line, io)
			: t->fmt == TF_FTRACE ? ftrace_line(t, line, io)
					      : csv_line(t, line, io);
		if (r < 0)
			return -1;
		if (r == 0)
			continue; /* skipped */
		/* the block layer moves whole sectors: anything else is a cut or corrupt line (a CSV
		 * cut short in "176865683,R,26624,2" would otherwise be a 2-byte read) */
		if (io->op != 'F' && io->bytes % 512) {
			if (trace_bad(t, "bytes %llu: not a whole number of 512-byte sectors (a line "
			                 "cut short?)",
			              (unsigned long long)io->bytes))
				return -1;
			continue;
		}
		if (io->t_ns < t->last_t_ns && t->fmt == TF_BLK_CSV) {
			if (trace_bad(t, "time_ns %llu goes back (previous %llu)", (unsigned long long)io->t_ns,
				      (unsigned long long)t->last_t_ns))
				return -1;
			continue;
		}
		/* biosnoop and tracepoints on several CPUs can be slightly out of order: keep them */
		if (io->t_ns > t->last_t_ns)
			t->last_t_ns = io->t_ns;
		return 1;
	}
	return rc;
}
