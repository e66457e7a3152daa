/*
 * trace.c - open a trace, detect its format, and read it record by record.
 *
 * Detection looks at content, not names: the first meaningful line of a file (a JSON object's
 * keys, a biosnoop header, a CSV row) or, for a directory, its *.json files (WEKA). The readers
 * themselves live in blk.c (block traces) and kv.c (KV-request traces); this file holds what
 * they share: opening, error reporting as FILE:LINE, --skip-bad accounting.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "trace_int.h"

void trace_opts_default(struct trace_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->session_rate = 0.05;
	o->seed = 1;
}

bool trace_opts_same(const struct trace_opts *a, const struct trace_opts *b)
{
	return a->skip_bad == b->skip_bad && a->force == b->force &&
	       a->block_tokens == b->block_tokens && a->session_rate == b->session_rate &&
	       a->stagger == b->stagger && a->seed == b->seed && a->fold == b->fold &&
	       a->folds == b->folds;
}

const char *trace_format_name(enum trace_format f)
{
	switch (f) {
	case TF_BLK_CSV: return "blk-csv";
	case TF_BIOSNOOP: return "biosnoop";
	case TF_FTRACE: return "blk-ftrace";
	case TF_MOONCAKE: return "mooncake";
	case TF_BAILIAN: return "bailian";
	case TF_AIPERF: return "aiperf";
	case TF_WEKA: return "weka";
	default: return "unknown";
	}
}

enum trace_format trace_format_parse(const char *s)
{
	for (int f = TF_BLK_CSV; f <= TF_WEKA; f++)
		if (!strcmp(s, trace_format_name(f)))
			return f;
	return TF_UNKNOWN;
}

/* Record a malformed record. Returns 0 to continue (skipped) or -1 to stop. */
int trace_bad(struct trace *t, const char *fmt, ...)
{
	char why[400];
	va_list ap;
	va_start(ap, fmt);
	fg_verr_rc(why, sizeof(why), 0, fmt, ap);
	va_end(ap);
	if (t->lio.f)
		snprintf(t->err, sizeof(t->err), "%s:%llu: %s", t->path, (unsigned long long)t->lio.line, why);
	else
		snprintf(t->err, sizeof(t->err), "%s", why);
	if (t->o.skip_bad) {
		t->skipped++;
		return 0;
	}
	return -1;
}

int trace_lineio_open(struct trace *t)
{
	if (lineio_open(&t->lio, t->spool[0] ? t->spool : t->path, t->err, sizeof(t->err)))
		return -1;
	t->lio.path = t->path; /* (its own messages name the user's path) */
	return 0;
}

int trace_next_line(struct trace *t, char **line, size_t *len)
{
	int rc;
	while ((rc = lineio_next(&t->lio, line, len, t->err, sizeof(t->err))) == 1) {
		const char *nul = memchr(*line, 0, *len);
		if (!nul)
			return 1;
		if (trace_bad(t, "a NUL byte at column %zu: binary or corrupt data",
		              (size_t)(nul - *line) + 1))
			return -1;
	}
	return rc;
}

/*
 * A pipe, a FIFO or a character device can be read once only, and a trace is read at least
 * twice (its format is told from its first line, then it is read through; some formats are
 * loaded up front). Its data is copied into an unlinked temporary file (in $TMPDIR, else /tmp)
 * and read from there as /proc/self/fd/N: as much room as the trace takes, for the run only.
 */
static int spool_input(struct trace *t, const char *path, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	char tmp[PATH_MAX], buf[1 << 16];
	int in = strcmp(path, "-") ? open(path, O_RDONLY | O_CLOEXEC) : 0;
	ssize_t n = 0;

	if (in < 0)
		return fg_err(err, errlen, "%s: %s", t->path, strerror(errno));
	snprintf(tmp, sizeof(tmp), "%s/femu-gandalf-trace.XXXXXX", dir && *dir ? dir : "/tmp");
	t->spool_fd = mkostemp(tmp, O_CLOEXEC);
	if (t->spool_fd < 0) {
		fg_err(err, errlen, "%s: cannot copy it to %s: %s", t->path, tmp, strerror(errno));
		goto out;
	}
	unlink(tmp);
	while ((n = read(in, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR)) {
		for (ssize_t w = 0, k; n > 0 && w < n; w += k)
			if ((k = write(t->spool_fd, buf + w, (size_t)(n - w))) < 0) {
				fg_err(err, errlen, "%s: cannot copy it to %s: %s", t->path, tmp,
				       strerror(errno));
				n = -1;
				goto out;
			}
	}
	if (n < 0)
		fg_err(err, errlen, "%s: %s", t->path, strerror(errno));
	snprintf(t->spool, sizeof(t->spool), "/proc/self/fd/%d", t->spool_fd);
out:
	if (in > 0)
		close(in);
	return n < 0 || t->spool_fd < 0 ? -1 : 0;
}

/* First line that is not blank and not a comment, to tell formats apart. */
static enum trace_format detect_file(const struct trace *t, char *err, size_t errlen)
{
	const char *path = t->path;
	struct lineio l;
	char *line;
	size_t len;
	enum trace_format f = TF_UNKNOWN;
	if (lineio_open(&l, t->spool[0] ? t->spool : path, err, errlen))
		return TF_UNKNOWN;
	l.path = path;
	int rc;
	while ((rc = lineio_next(&l, &line, &len, err, errlen)) == 1) {
		for (size_t i = 0; i < len; i++) {
			unsigned char c = (unsigned char)line[i];
			if ((c < 0x20 && c != '\t') || c == 0x7f) {
				snprintf(err, errlen,
				         "%s:%llu: byte 0x%02x at column %zu: not a text trace (binary "
				         "or corrupt data?)",
				         path, (unsigned long long)l.line, c, i + 1);
				rc = -1;
				break;
			}
		}
		if (rc < 0)
			break;
		while (*line == ' ' || *line == '\t')
			line++;
		if (!*line || *line == '#')
			continue;
		if (*line == '{' || *line == '[') {
			if (strstr(line, "\"chat_id\""))
				f = TF_BAILIAN;
			else if (strstr(line, "\"session_id\""))
				f = TF_AIPERF;
			else if (strstr(line, "\"hash_ids\"") || strstr(line, "\"input_length\""))
				f = TF_MOONCAKE;
			else if (strstr(line, "\"requests\"") || strstr(line, "\"block_size\"") ||
				 strstr(line, "\"hash_id_scope\""))
				f = TF_WEKA;
		} else if (blk_ftrace_event(line)) {
			f = TF_FTRACE;
		} else if (!strncmp(line, "TIME(s)", 7)) {
			f = TF_BIOSNOOP;
		} else if (!strncmp(line, "time_ns", 7) || strchr(line, ',')) {
			f = TF_BLK_CSV;
		} else {
			/* a biosnoop data line: TIME COMM PID DISK T SECTOR BYTES [QUE] LAT */
			char a[64], b[64], c[64], d[64], e[64];
			if (sscanf(line, "%63s %63s %63s %63s %63s", a, b, c, d, e) == 5)
				f = TF_BIOSNOOP;
		}
		break;
	}
	if (rc < 0)
		f = TF_UNKNOWN;
	else if (f == TF_UNKNOWN)
		snprintf(err, errlen, "%s: unknown trace format (not block CSV, biosnoop, block tracepoint text, Mooncake, Bailian, AIPerf or WEKA)%s",
			 path, rc == 0 && l.line == 0 ? ": empty file" : "");
	lineio_close(&l);
	return f;
}

static bool dir_has_json(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool yes = false;
	if (!d)
		return false;
	while (!yes && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		yes = n > 5 && (!strcmp(e->d_name + n - 5, ".json") || (n > 9 && !strcmp(e->d_name + n - 9, ".json.zst")));
	}
	closedir(d);
	return yes;
}

struct trace *trace_open(const char *path, const struct trace_opts *o, char *err, size_t errlen)
{
	struct stat sb;
	bool std_in = !strcmp(path, "-");
	if (std_in ? fstat(0, &sb) : stat(path, &sb)) {
		snprintf(err, errlen, "%s: %s", std_in ? "standard input" : path, strerror(errno));
		return NULL;
	}
	struct trace *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	t->o = *o;
	t->spool_fd = -1;
	snprintf(t->path, sizeof(t->path), "%s", std_in ? "standard input" : path);
	if (std_in || S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode) || S_ISSOCK(sb.st_mode)) {
		if (spool_input(t, path, err, errlen))
			goto fail;
		sb.st_mode = S_IFREG;
	}
	enum trace_format f = o->force;
	if (S_ISDIR(sb.st_mode)) {
		if (f == TF_UNKNOWN && dir_has_json(path))
			f = TF_WEKA;
		if (f != TF_WEKA) {
			snprintf(err, errlen, "%s: a directory, but not a WEKA trace (no *.json files)", path);
			goto fail;
		}
	} else if (f == TF_UNKNOWN) {
		f = detect_file(t, err, errlen);
		if (f == TF_UNKNOWN)
			goto fail;
	}
	t->fmt = f;
	int rc = trace_is_block(t) ? blk_open(t) : kv_open(t);
	if (rc) {
		snprintf(err, errlen, "%s", t->err);
		goto fail;
	}
	return t;
fail:
	trace_close(t);
	return NULL;
}

void trace_close(struct trace *t)
{
	if (!t)
		return;
	kv_free(t);
	if (t->lio.f)
		lineio_close(&t->lio);
	if (t->spool_fd >= 0)
		close(t->spool_fd);
	free(t);
}

enum trace_format trace_format(const struct trace *t)
{
	return t->fmt;
}

bool trace_format_is_block(enum trace_format f)
{
	return f == TF_BLK_CSV || f == TF_BIOSNOOP || f == TF_FTRACE;
}

bool trace_is_block(const struct trace *t)
{
	return trace_format_is_block(t->fmt);
}

const char *trace_error(const struct trace *t)
{
	return t->err;
}

uint64_t trace_skipped(const struct trace *t)
{
	return t->skipped;
}

const char *trace_where(struct trace *t)
{
	if (t->lio.f)
		snprintf(t->where, sizeof(t->where), "%s:%llu", t->path, (unsigned long long)t->lio.line);
	else
		snprintf(t->where, sizeof(t->where), "%s", t->path);
	return t->where;
}

double trace_read_share(const struct trace *t)
{
	struct stat sb;
	long pos;
	if (!t->lio.f || fstat(fileno(t->lio.f), &sb) || sb.st_size <= 0 ||
	    (pos = ftell(t->lio.f)) < 0)
		return NAN;
	return pos >= sb.st_size ? 1 : (double)pos / (double)sb.st_size;
}

uint64_t trace_bytes_read(const struct trace *t)
{
	return t->lio.f ? t->lio.bytes : t->bytes_loaded;
}

int trace_next_blk(struct trace *t, struct blk_io *io)
{
	if (!trace_is_block(t)) {
		snprintf(t->err, sizeof(t->err), "%s: a %s trace holds KV requests, not block I/O", t->path,
			 trace_format_name(t->fmt));
		return -1;
	}
	return blk_next(t, io);
}

uint32_t trace_fold_of(uint64_t key, uint32_t folds)
{
	/* splitmix64's finalizer: consecutive ids (dense session numbers) spread evenly */
	uint64_t z = key + 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (uint32_t)(z % folds) + 1;
}

int trace_next_kv(struct trace *t, struct kv_request *rq)
{
	if (trace_is_block(t)) {
		snprintf(t->err, sizeof(t->err), "%s: a %s trace holds block I/O, not KV requests", t->path,
			 trace_format_name(t->fmt));
		return -1;
	}
	return kv_next(t, rq);
}
