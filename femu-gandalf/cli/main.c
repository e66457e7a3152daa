/*
 * main.c - the femu-gandalf command: dispatch to subcommands, shared option helpers, progress.
 *
 * Each subcommand lives in its own cmd_*.c file and parses its own options with GOption, so
 * `femu-gandalf SUB --help` always works and shows an example.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "atomicfile.h"
#include "cli.h"
#include "drive_presets.h"
#include "run.h"

static int cmd_presets(int argc, char **argv)
{
	const struct ftl_search_path *sp = fg_preset_search();
	gboolean json = FALSE;
	char **sets = NULL;
	GOptionEntry entries[] = {
	        {"json", 0, 0, G_OPTION_ARG_NONE, &json,
	         "every preset (or NAME alone) as JSON: user and physical bytes, rated TBW, every "
	         "config key",
	         NULL},
	        {"set", 0, 0, G_OPTION_ARG_STRING_ARRAY, &sets,
	         "with --json NAME: override a config key (repeatable)", "KEY=VALUE"},
	        {NULL},
	};
	GOptionContext *ctx = g_option_context_new("[NAME|FILE.ini]");
	GString *dirs = g_string_new(NULL);
	for (int i = 0; sp->dir[i]; i++)
		g_string_append_printf(dirs, "  %s\n", sp->dir[i]);
	char *desc = g_strdup_printf(
	        "List drive presets: the NAME.ini files that --preset NAME finds, looked up in\n"
	        "(%s; docs/install.md):\n%sFEMU_GANDALF_PRESETS=DIR replaces these; --preset "
	        "FILE.ini reads any file.\n\nExamples:\n  femu-gandalf presets\n"
	        "  femu-gandalf presets --json\n"
	        "  femu-gandalf presets --json ent-tlc-1t --set blocks_per_plane=112",
	        sp->origin, dirs->str);
	g_option_context_set_summary(ctx, desc);
	g_option_context_add_main_entries(ctx, entries, NULL);
	int rc = EXIT_USAGE;
	if (!fg_parse_opts_args(ctx, &argc, &argv, -1, NULL)) /* (NAME is checked below) */
		goto out;
	if (argc > 2 || (argc == 2 && !json)) {
		fprintf(stderr, "femu-gandalf presets: unexpected argument '%s' (a NAME needs --json)\n",
		        argv[argc > 2 ? 2 : 1]);
		goto out;
	}
	if (sets && argc < 2) {
		fprintf(stderr, "femu-gandalf presets: --set needs --json NAME\n");
		goto out;
	}
	if (json) {
		rc = fg_preset_json(stdout, argc == 2 ? argv[1] : NULL, sets);
		rc = rc < 0 ? EXIT_USAGE : rc;
	}
	else
		rc = fg_preset_list(stdout) ? 1 : 0;
out:
	g_option_context_free(ctx);
	g_string_free(dirs, TRUE);
	g_free(desc);
	g_strfreev(sets);
	return rc;
}

static int cmd_config_keys(int argc, char **argv)
{
	const char *help;
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		printf("Usage: femu-gandalf config-keys\n\nList the SSD config keys usable in presets and "
		       "with --set.\nExample:\n  femu-gandalf config-keys\n");
		return 0;
	}
	for (size_t i = 0; ftl_config_key(i, &help); i++)
		printf("%-20s %s\n", ftl_config_key(i, NULL), help);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
	const char *help;
} cmds[] = {
	{"ssd", cmd_ssd, "run a synthetic workload on an emulated SSD: WAF, wear, lifetimes"},
	{"bench", cmd_bench, "FTL speed and memory benchmarks (JSON)"},
	{"kv", cmd_kv, "a KV-cache tier (DRAM + emulated SSD) under a placement policy"},
	{"models", cmd_models, "list the model catalog"},
	{"sweep", cmd_sweep, "a kv sweep as jobs for parallel, xargs or Slurm, and their merge"},
	{"lift", cmd_lift, "a KV store's block trace back to KV requests (docs/lift.md)"},
	{"blkreplay", cmd_blkreplay, "replay a block trace on an emulated SSD"},
	{"synth", cmd_synth, "write a seeded synthetic KV-request trace (AIPerf JSONL)"},
	{"trace", cmd_trace, "describe a block or KV-request trace (trace info)"},
	{"presets", cmd_presets, "list drive presets"},
	{"config-keys", cmd_config_keys, "list SSD config keys (for presets and --set)"},
};

static void usage(FILE *o)
{
	fprintf(o, "Usage: femu-gandalf COMMAND [OPTIONS]   (COMMAND --help for details)\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(o, "  %-12s %s\n", cmds[i].name, cmds[i].help);
	fprintf(o, "\nSizes (SIZE in any command, and in presets and --set): bytes, or a number with a unit:\n"
	           "k M G T P alone or as KiB MiB GiB TiB PiB are binary (100G = 100 x 2^30 bytes);\n"
	           "kB MB GB TB PB are decimal, as drives are sold (960GB = 960 x 10^9 bytes).\n");
	fprintf(o, "\nExample:\n  femu-gandalf ssd --preset tiny --workload uniform --precondition --steady\n");
}

/*
 * Every command's standard output, checked in this one place: a write that failed (a full disk)
 * must not end in exit 0 with the table lost. stdout is flushed and closed here; a failure is
 * reported and turns the exit code into 1 (a command's own failure code is kept).
 */
static int finish_stdout(int rc)
{
	int e = 0;
	bool failed = ferror(stdout); /* an earlier write failed (its errno is gone) */

	errno = 0;
	if (fflush(stdout) == EOF)
		e = errno;
	if (fclose(stdout) == EOF && !e)
		e = errno;
	if (!e && !failed)
		return rc;
	if (e)
		fprintf(stderr, "femu-gandalf: standard output: %s: the output is incomplete\n",
		        strerror(e));
	else
		fprintf(stderr, "femu-gandalf: standard output: a write failed: the output is "
		                "incomplete\n");
	return rc ? rc : 1;
}

/* The run layer names options by key ("max-loops"); this CLI spells them as its flags. */
static void spell_options(void)
{
	static char flag[RUN_OPT_N][32];
	static const char *spelled[RUN_OPT_N];
	for (int i = 0; i < RUN_OPT_N; i++) {
		snprintf(flag[i], sizeof(flag[i]), "--%s", run_opt_key((enum run_opt)i));
		spelled[i] = flag[i];
	}
	run_opt_spelling(spelled);
}

int main(int argc, char **argv)
{
	spell_options();
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return finish_stdout(argc < 2 ? EXIT_USAGE : 0);
	}
	if (!strcmp(argv[1], "--version")) {
		printf("femu-gandalf 0.1.0\n");
		return finish_stdout(0);
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			char *prg = g_strdup_printf("femu-gandalf %s", cmds[i].name);
			g_set_prgname(prg);
			int rc = cmds[i].fn(argc - 1, argv + 1);
			g_free(prg);
			return finish_stdout(rc);
		}
	fprintf(stderr, "femu-gandalf: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_USAGE;
}

int fg_config_from_opts(struct ftl_config *cfg, const char *preset, char **sets, const char *gc)
{
	char err[256];
	if (!preset) {
		fprintf(stderr, "femu-gandalf: --preset is required (see 'femu-gandalf presets')\n");
		return -1;
	}
	if (fg_preset_load(cfg, preset))
		return -1;
	for (char **s = sets; s && *s; s++)
		if (fg_preset_set(cfg, *s))
			return -1;
	if (gc) {
		const char *colon = strchr(gc, ':');
		char pol[32];
		snprintf(pol, sizeof(pol), "%.*s", colon ? (int)(colon - gc) : (int)strlen(gc), gc);
		if (ftl_config_set(cfg, "gc_policy", pol, err, sizeof(err))) {
			fprintf(stderr, "femu-gandalf: --gc %s: must be greedy, fifo, cost-benefit or d-choice:D\n", gc);
			return -1;
		}
		if (colon && (strcmp(pol, "d-choice") || ftl_config_set(cfg, "gc_dchoice", colon + 1, err, sizeof(err)))) {
			fprintf(stderr, "femu-gandalf: --gc %s: only d-choice takes a parameter (d-choice:D, D >= 1)\n", gc);
			return -1;
		}
	}
	if (ftl_config_validate(cfg, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: preset %s: %s\n", preset, err);
		return -1;
	}
	return 0;
}

bool fg_parse_opts_args(GOptionContext *ctx, int *argc, char ***argv, int npos, const char *what)
{
	GError *e = NULL;
	if (!g_option_context_parse(ctx, argc, argv, &e)) {
		fprintf(stderr, "femu-gandalf: %s (try --help)\n", e->message);
		g_error_free(e);
		return false;
	}
	if (npos >= 0 && *argc - 1 != npos) {
		if (npos)
			fprintf(stderr, "%s: expected one %s (try --help)\n", g_get_prgname(), what);
		else
			fprintf(stderr, "femu-gandalf: unexpected argument '%s' (try --help)\n", (*argv)[1]);
		return false;
	}
	return true;
}

bool fg_parse_timing(const char *s, double *speed)
{
	char *end;
	if (!strcmp(s, "afap"))
		return *speed = 0, true;
	if (!strcmp(s, "trace"))
		return *speed = 1, true;
	if (s[0] != 'x')
		return false;
	*speed = strtod(s + 1, &end);
	return end != s + 1 && !*end && *speed > 0 && isfinite(*speed);
}

bool fg_parse_opts(GOptionContext *ctx, int *argc, char ***argv)
{
	return fg_parse_opts_args(ctx, argc, argv, 0, NULL);
}

bool fg_parse_seed(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (!isdigit((unsigned char)*s) || *end || errno) {
		fprintf(stderr, "femu-gandalf: --seed %s: must be an integer in 0..%llu\n", s,
		        (unsigned long long)UINT64_MAX);
		return false;
	}
	*v = x;
	return true;
}

double now_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void progress_init(struct progress *p, const char *what)
{
	const char *env = getenv("FEMU_GANDALF_PROGRESS");
	char *end;
	double every = env ? strtod(env, &end) : NAN;

	p->tty = isatty(2);
	p->on = p->tty;
	p->every = 0.25;
	if (env && !strcmp(env, "off")) {
		p->on = false;
	} else if (env && *env && !*end && every >= 0) {
		p->on = true;
		p->tty = false; /* whole lines */
		p->every = every;
	}
	p->start = now_seconds();
	p->last = -1;
	p->what = what;
	p->phase[0] = 0;
}

void progress_phase(struct progress *p, const char *what)
{
	size_t n = strcspn(what, "(");
	if (strlen(p->phase) != n || strncmp(p->phase, what, n)) {
		snprintf(p->phase, sizeof(p->phase), "%.*s", (int)n, what);
		p->start = now_seconds();
	}
	p->what = what;
}

/* seconds as "42s", "3m05s" or "2h07m" */
static void span_text(double s, char *buf, size_t len)
{
	long n = s > 0 ? (long)(s + 0.5) : 0;
	if (n < 60)
		snprintf(buf, len, "%lds", n);
	else if (n < 3600)
		snprintf(buf, len, "%ldm%02lds", n / 60, n % 60);
	else
		snprintf(buf, len, "%ldh%02ldm", n / 3600, n / 60 % 60);
}

void progress_update(struct progress *p, double done, double total, const char *extra)
{
	char when[32], head[64];

	if (!p->on)
		return;
	double t = now_seconds(), el = t - p->start;
	if (p->last >= 0 && t - p->last < p->every)
		return;
	p->last = t;
	if (total > 0 && done >= 0) {
		double f = done < total ? done / total : 1;
		/* the time left, once there is a rate to go by */
		if (f > 0.002 && el > 1) {
			span_text(el * (1 - f) / f, when, sizeof(when));
			snprintf(head, sizeof(head), "%.1f%%, %s left", 100 * f, when);
		} else {
			snprintf(head, sizeof(head), "%.1f%%", 100 * f);
		}
	} else {
		span_text(el, when, sizeof(when));
		snprintf(head, sizeof(head), "%s so far", when);
	}
	fprintf(stderr, "%s%s: %s%s%s%s", p->tty ? "\r\033[K" : "", p->what, head, extra ? "; " : "",
	        extra ? extra : "", p->tty ? "" : "\n");
	fflush(stderr);
}

void progress_end(struct progress *p)
{
	if (p->on && p->tty && p->last >= 0)
		fprintf(stderr, "\r\033[K");
}

int fg_save_file(const char *what, const char *path, const char *data, size_t len)
{
	char err[PATH_MAX + 256];

	if (!fg_atomic_write(path, data, len, err, sizeof(err)))
		return 0;
	fprintf(stderr, "femu-gandalf: %s %s\n", what, err);
	return -1;
}

FILE *fg_out_open(struct fg_atomic *a, const char *flag, const char *path)
{
	char err[PATH_MAX + 256];
	FILE *o;

	if (fg_atomic_open(a, path, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s %s\n", flag, err);
		return NULL;
	}
	if (!(o = fg_atomic_stream(a, err, sizeof(err)))) {
		fprintf(stderr, "femu-gandalf: %s %s\n", flag, err);
		fg_atomic_abort(a);
	}
	return o;
}

int fg_out_commit(struct fg_atomic *a, const char *flag)
{
	char err[PATH_MAX + 256];

	if (!fg_atomic_commit(a, err, sizeof(err)))
		return 0;
	fprintf(stderr, "femu-gandalf: %s %s\n", flag, err);
	return -1;
}

const char *fg_human(double b, char *buf)
{
	const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
	int i = 0;
	while (b >= 1024 && i < 5) {
		b /= 1024;
		i++;
	}
	sprintf(buf, "%.2f %s", b, u[i]);
	return buf;
}


/* The footnote of a lifetime that is not steady (ftl_lifetime.steady false): what it lacks. */
static void unsteady_note(const struct ftl_lifetime *lt)
{
	char range[64];

	if (isnan(lt->window_waf_range))
		snprintf(range, sizeof(range), "not measured yet (under one user capacity written)");
	else
		snprintf(range, sizeof(range), "%.1f%%", 100 * lt->window_waf_range);
	printf("  * not steady: drive written %.2f times, WAF range %s over the last user capacity's "
	       "quarters; steady needs >= %g drive writes and a range <= %g%%\n",
	       lt->drive_writes, range, FTL_STEADY_DRIVE_WRITES, 100 * FTL_STEADY_WAF_RANGE);
}

/*
 * The erase-count lifetime at the window's erase rate (the figure, as in JSON's "erase") and at
 * the cumulative one beside it, marked '*' with a footnote when the drive is not steady: a young
 * drive's erase rate still climbs, so its lifetime is too long by an unknown amount.
 */
static void erase_lines(const struct ftl *f, const struct ftl_lifetime *lt)
{
	const char *mark = lt->steady ? "" : "*";

	if (ftl_eol_cause(f)) {
		printf("  erase count    %10.1f days (%.2f years)  end of life reached (%s) at this "
		       "age\n",
		       lt->erase_days, lt->erase_days / 365, ftl_eol_cause(f));
		return;
	}
	printf("  erase count    %10.1f days (%.2f years)%s  erase rate of the last ~user capacity "
	       "(the figure), until %s (%s)\n",
	       lt->erase_days, lt->erase_days / 365, mark, lt->eol_reason, lt->basis);
	printf("    cumulative   %10.1f days (%.2f years)%s  erase rate since new (every erase over "
	       "every host byte)\n",
	       lt->erase_cumulative_days, lt->erase_cumulative_days / 365, mark);
	if (!lt->steady)
		unsteady_note(lt);
}

void fg_report_text(const struct ftl *f, double bpd, bool erase_line)
{
	struct ftl_stats st;
	struct ftl_lifetime lt;
	char b1[32], b2[32], b3[32], b4[32];
	ftl_get_stats(f, &st);
	ftl_lifetime(f, bpd, &lt);
	printf("host writes  %s   NAND writes %s (GC %s, WL %s)\n", fg_human((double)st.host_write_bytes, b1),
	       fg_human((double)st.nand_write_bytes, b2), fg_human((double)st.gc_prog_bytes, b3),
	       fg_human((double)st.wl_prog_bytes, b4));
	printf("WAF          %.3f (last ~user capacity), %.3f cumulative; effective Sf %.4f\n", st.waf_window,
	       st.waf_cumulative, st.effective_spare_factor);
	printf("erases       %llu; per block min %u mean %.2f max %u; retired %llu\n",
	       (unsigned long long)st.erases, st.erase_min, st.erase_mean, st.erase_max,
	       (unsigned long long)st.retired_blocks);
	printf("SMART        percentage used %u%%, available spare %u%%%s\n", st.percentage_used,
	       st.available_spare, st.read_only ? ", READ-ONLY (end of life)" : "");
	printf("lifetime at %.3g drive writes/day (%s/day):\n", bpd / (double)ftl_get_geometry(f)->user_bytes,
	       fg_human(bpd, b1));
	printf("  TBW division   %10.1f days (%.2f years)  rated TBW / host writes per day\n", lt.tbw_days,
	       lt.tbw_days / 365);
	printf("  naive P/E      %10.1f days (%.2f years)  P/E x physical / host writes (WAF=1)\n",
	       lt.naive_pe_days, lt.naive_pe_days / 365);
	if (erase_line)
		erase_lines(f, &lt);
}
