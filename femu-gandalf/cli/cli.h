/* cli.h - shared bits of the femu-gandalf subcommands. */
#ifndef FG_CLI_H
#define FG_CLI_H

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#include "atomicfile.h"
#include "ftl.h"
#include "json.h"
#include "trace.h"

/* exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 3 invariant violated */
enum { EXIT_USAGE = 2, EXIT_INVARIANT = 3 };

int cmd_ssd(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_blkreplay(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_kv(int argc, char **argv);
int cmd_models(int argc, char **argv);
int cmd_lift(int argc, char **argv);
int cmd_sweep(int argc, char **argv);

/* A sweep's jobs being written (cmd_sweep.c): emit() is called for every point that
 * `femu-gandalf kv` with the same flags would run, in the order it would run them. */
struct kv_jobs {
	int (*emit)(const struct kv_jobs *j, const char *policy, uint64_t point); /* 0 or exit code */
	void *arg;
	struct kv_trace_keep *keep; /* sweep --emit-batch: the last trace, kept; else NULL */
};
/* The trace the last sweep of a batch loaded, for the next one that reads the same path with
 * the same options (a batch lists an experiment's sweeps set by set, so one is enough). */
struct kv_trace_keep {
	char *path;
	struct trace_opts to;
	struct kv_trace kt;
};
void kv_trace_keep_free(struct kv_trace_keep *k);
/* `femu-gandalf kv ARGS` checked as a run would be (the trace loaded and measured), then its
 * points handed to jobs->emit instead of run. 0, or an exit code after printing the error. */
int kv_emit_jobs(int argc, char **argv, const struct kv_jobs *jobs);
/* `femu-gandalf kv ARGS`, run, with the trace taken from keep when it is the same file read
 * the same way, and kept there for the next (sweep --run-batch). The exit code. */
int kv_run_kept(int argc, char **argv, struct kv_trace_keep *keep);

/* Options every trace-reading command shares (--format, --skip-bad, --block-tokens, WEKA arrivals). */
struct trace_cli {
	char *format;
	gboolean skip_bad;
	gint block_tokens;
	double session_rate, stagger;
	char *seed; /* NULL: the default */
	char *fold;
};
GOptionEntry *fg_trace_entries(struct trace_cli *c);
int fg_trace_opts(const struct trace_cli *c, struct trace_opts *o);

/* Build a config from --preset, --set and --gc. Prints errors; returns 0 or -1. */
int fg_config_from_opts(struct ftl_config *cfg, const char *preset, char **sets, const char *gc);
/* Parse a GOption context; on error prints it with a hint and returns false. Options that name
 * a file, or a preset or model matched against names read from files, are
 * G_OPTION_ARG_FILENAME: the bytes as given. G_OPTION_ARG_STRING converts from the locale's
 * charset, which rejects any non-ASCII byte under LANG=C and invalid UTF-8 under any locale. */
bool fg_parse_opts(GOptionContext *ctx, int *argc, char ***argv);
/* The same, expecting exactly npos positional arguments (named `what` in the error); npos < 0:
 * any number, the caller checks them. */
bool fg_parse_opts_args(GOptionContext *ctx, int *argc, char ***argv, int npos, const char *what);
/* --seed S: a decimal integer in 0..2^64-1 (every command's seeds, the same rule); false after
 * printing the error. */
bool fg_parse_seed(const char *s, uint64_t *v);
/* --timing afap | trace | xN -> speed factor (0 = as fast as possible); false if malformed. */
bool fg_parse_timing(const char *s, double *speed);

/*
 * Progress on stderr: one line rewritten in place on a terminal, at most ~4 times a second, with
 * the share done and the time left when the total is known ("ssd: 37.0%, 1m20s left; ..."),
 * else the time so far. FEMU_GANDALF_PROGRESS=S prints it whatever stderr is, one line at most
 * every S seconds (logs, tests); =off never. `on` says whether to compute and call at all.
 */
struct progress {
	bool on, tty;
	double start, last, every;
	const char *what;
	char phase[128];
};
void progress_init(struct progress *p, const char *what);
/* A run in phases: what becomes the line's name, and the clock of the time left restarts when
 * the phase's name up to its first " (" changes ("steady state (round 3 ...)" is one phase). */
void progress_phase(struct progress *p, const char *what);
/* done of total (total <= 0: unknown), then extra (may be NULL) */
void progress_update(struct progress *p, double done, double total, const char *extra);
void progress_end(struct progress *p);
double now_seconds(void);
/* data into path whole or not at all (a temporary file in its directory, synced, renamed over
 * it). A path that exists and is not a regular file (a device, a pipe, a symlink) is refused,
 * since the rename would replace it. 0, or -1 after printing "femu-gandalf: what: why". */
int fg_save_file(const char *what, const char *path, const char *data, size_t len);
/* An output stream for flag's path, written beside it and renamed over it by fg_out_commit when
 * whole (common/atomicfile.h's rules: a device, FIFO or directory is refused, a link is
 * followed): the stream, or NULL with the error printed. Drop a failed one with
 * fg_atomic_abort(a), which leaves path as it was. */
FILE *fg_out_open(struct fg_atomic *a, const char *flag, const char *path);
/* Commit fg_out_open's file: 0, or -1 with the error printed (path then as it was). */
int fg_out_commit(struct fg_atomic *a, const char *flag);
/* "1.50 GiB" into buf (>= 32 bytes). */
const char *fg_human(double bytes, char *buf);
/* End a JSON document written with common/json.h to stdout: 0, or 1 after saying why on stderr
 * (a write error, or a bug in the document's construction). */
static inline int fg_json_finish(struct json_out *j)
{
	int e = jout_finish(j);
	if (e)
		fprintf(stderr, "femu-gandalf: JSON output: %s\n", jout_strerror(e));
	return e ? 1 : 0;
}
/* WAF, erases, SMART and the lifetimes as text (the erase-count line unless erase_line is false). */
void fg_report_text(const struct ftl *f, double bytes_per_day, bool erase_line);

#endif
