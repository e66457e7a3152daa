/*
 * cmd_blkreplay.c - `femu-gandalf blkreplay`: replay a block trace on the emulated SSD
 * (in-process, the default) and report WAF, erase counts and the three lifetimes.
 *
 * Each I/O is issued at its trace time (plus, on later passes, the length of the earlier
 * passes), so the FTL's timing model and idle-time background GC see the trace's real gaps.
 * Host writes per day come from the trace: bytes written per pass / trace duration x 86,400 s
 * (or --dwpd). The first pass over a fresh drive is not steady state: --precondition fills it
 * first, --loop N replays N times, --until-steady loops until the per-pass WAF is steady. That
 * experiment is blk_run() (femu-gandalf/run/blk_run.c); this file parses the flags, hands it the
 * trace reader as a source, and prints the report.
 *
 * With --target PATH the trace goes instead to a real block device or file through libaio with
 * O_DIRECT (femu-gandalf/replay/aiotarget.c): this is what runs inside the VM against
 * /dev/nvme0n1, whose FTL then counts the writes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aiotarget.h"
#include "cli.h"
#include "run.h"
#include "trace.h"

/* The trace reader behind blk_run()'s source: the file is reopened for each pass, and the
 * reader's warnings and the progress line are printed here, since run/ prints nothing. */
struct br_source {
	const char *path;
	const struct trace_opts *to;
	struct trace *t;
	struct progress pg;
	uint64_t ios;
	int pass, passes; /* the pass being read (from 1), and how many (0: until steady) */
	int most;         /* until steady: the most passes */
	uint64_t ios_per_pass; /* known after the first pass */
};

static int src_open(void *arg, char *err, size_t errlen)
{
	struct br_source *s = arg;

	if (s->pass++)
		s->ios_per_pass = s->ios;
	s->ios = 0;
	s->t = trace_open(s->path, s->to, err, errlen);
	if (!s->t)
		return -1;
	if (!trace_is_block(s->t)) {
		snprintf(err, errlen,
		         "%s: a %s trace holds KV requests; blkreplay needs a block trace (use "
		         "'femu-gandalf kv' for KV traces)",
		         s->path, trace_format_name(trace_format(s->t)));
		trace_close(s->t);
		s->t = NULL;
		return -1;
	}
	return 0;
}

/* The progress line, every 65536 I/Os and at the end of each pass: within the pass by I/Os once
 * a pass is known, by the file's bytes before. */
static void br_progress(struct br_source *s, bool pass_end)
{
	double in = pass_end          ? 1
	            : s->ios_per_pass ? (double)s->ios / (double)s->ios_per_pass
	                              : trace_read_share(s->t);
	char extra[128], of[48];
	if (s->passes)
		snprintf(of, sizeof(of), "/%d", s->passes);
	else
		snprintf(of, sizeof(of), " (until steady, at most %d)", s->most);
	snprintf(extra, sizeof(extra), "pass %d%s, %llu I/Os", s->pass, of, (unsigned long long)s->ios);
	in = in < 1 ? in : 1;
	if (s->passes && !isnan(in)) {
		progress_update(&s->pg, s->pass - 1 + in, s->passes, extra);
	} else { /* until steady: the pass's share only */
		if (!isnan(in))
			snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra),
			         " (%.0f%% of the pass)", 100 * in);
		progress_update(&s->pg, 0, 0, extra);
	}
}

static int src_next(void *arg, struct blk_run_io *io, char *err, size_t errlen)
{
	struct br_source *s = arg;
	struct blk_io b;
	int r = trace_next_blk(s->t, &b);

	if (r < 0) {
		snprintf(err, errlen, "%s", trace_error(s->t));
		return -1;
	}
	if (!r) {
		if (trace_skipped(s->t))
			fprintf(stderr,
			        "femu-gandalf: %s: skipped %llu malformed records (last: %s)\n",
			        s->path, (unsigned long long)trace_skipped(s->t),
			        trace_error(s->t));
		if (s->pg.on)
			br_progress(s, true);
		return 0;
	}
	*io = (struct blk_run_io){.t_ns = b.t_ns, .lba = b.lba, .bytes = b.bytes, .op = b.op,
	                          .stream = b.op == 'W' && b.placed ? b.pid : 0};
	if (!(++s->ios & 0xffff) && s->pg.on)
		br_progress(s, false);
	return 1;
}

static const char *src_where(void *arg)
{
	return trace_where(((struct br_source *)arg)->t);
}

static void src_close(void *arg)
{
	struct br_source *s = arg;

	trace_close(s->t);
	s->t = NULL;
}

/* What a --target replay measured (wall-clock rates: the device's, not the model's). */
static int print_target(const char *path, const char *target, const struct aio_target_stats *st,
                        bool json)
{
	if (!json) {
		printf("%s -> %s: %llu I/Os in %.3f s (%.0f IOPS, %.1f MB/s); wrote %llu bytes, "
		       "read %llu, discarded %llu; latency mean %.1f us, p99 %.1f us\n",
		       path, target, (unsigned long long)st->ios, st->seconds, st->iops, st->mbps,
		       (unsigned long long)st->write_bytes, (unsigned long long)st->read_bytes,
		       (unsigned long long)st->discard_bytes, st->lat_mean_us, st->lat_p99_us);
		return 0;
	}
	struct json_out j;
	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_str(&j, "trace", path);
	jout_str(&j, "target", target);
	jout_u64(&j, "ios", st->ios);
	jout_u64(&j, "read_bytes", st->read_bytes);
	jout_u64(&j, "write_bytes", st->write_bytes);
	jout_u64(&j, "discard_bytes", st->discard_bytes);
	jout_u64(&j, "flushes", st->flushes);
	jout_num(&j, "seconds", "%.6f", st->seconds);
	jout_num(&j, "iops", "%.1f", st->iops);
	jout_num(&j, "mb_per_s", "%.2f", st->mbps);
	jout_object(&j, "latency_us", JOUT_INLINE);
	jout_num(&j, "mean", "%.2f", st->lat_mean_us);
	jout_num(&j, "p99", "%.2f", st->lat_p99_us);
	jout_end(&j);
	jout_end(&j);
	return fg_json_finish(&j);
}

static int replay_target(const char *path, const struct trace_opts *to, const char *target,
                         int iodepth, double speed, bool force, bool json)
{
	char err[8192];
	struct aio_target_opts ao = {.iodepth = (unsigned)iodepth,
	                             .speed = speed,
	                             .force = force,
	                             .progress = isatty(2)};
	struct trace *t = trace_open(path, to, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return EXIT_USAGE;
	}
	if (!trace_is_block(t)) {
		fprintf(stderr, "femu-gandalf: %s: not a block trace\n", path);
		trace_close(t);
		return EXIT_USAGE;
	}
	struct aio_target *a = aio_target_open(target, &ao, err, sizeof(err));
	if (!a) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		trace_close(t);
		return EXIT_USAGE;
	}
	struct blk_io io;
	int r, rc = 0;
	uint64_t n = 0;
	while ((r = trace_next_blk(t, &io)) == 1) {
		n++;
		if (aio_target_submit(a, &io, err, sizeof(err))) {
			fprintf(stderr, "femu-gandalf: %s: %s\n", trace_where(t), err);
			rc = 1;
			break;
		}
	}
	if (r < 0) {
		fprintf(stderr, "femu-gandalf: %s\n", trace_error(t));
		rc = EXIT_USAGE;
	}
	if (aio_target_drain(a, err, sizeof(err)) && !rc) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		rc = 1;
	}
	struct aio_target_stats st;
	aio_target_stats(a, &st);
	if (!rc)
		rc = print_target(path, target, &st, json);
	aio_target_close(a);
	trace_close(t);
	return rc;
}

/* blkreplay's options, as GOption fills them. */
struct br_opts {
	char *preset, *gc, *format, **sets, *target, *timing;
	gboolean json, steady, precondition, skip_bad, wrap, force;
	gint loops, max_loops, iodepth;
	double dwpd;
};

static void print_run_text(const struct br_opts *o, const struct blk_report *rep)
{
	const int npass = rep->steady.rounds;
	char b1[32];

	printf("trace        %s: %llu I/Os, %.1f s, %s written per pass; %d pass%s (%.0f I/Os per "
	       "s)\n",
	       rep->name, (unsigned long long)rep->ios_per_pass, rep->t_last - rep->t_first,
	       fg_human((double)rep->write_bytes_per_pass, b1), npass, npass == 1 ? "" : "es",
	       rep->total_ios / (rep->wall_s > 0 ? rep->wall_s : 1e-9));
	printf("drive        %s: %s user\n", ftl_get_config(rep->ftl)->name,
	       fg_human((double)ftl_get_geometry(rep->ftl)->user_bytes, b1));
	run_eol_text(&rep->eol, stdout);
	if (o->steady)
		printf("steady       %s after %d passes (WAF over last 5 passes %.3f)\n",
		       rep->steady.reached ? "reached" : "NOT reached", npass, rep->steady.waf);
	fg_report_text(rep->ftl, rep->bytes_per_day, true);
	if (npass == 1 && !o->precondition && !rep->eol.reached)
		printf("note: one pass over a fresh drive is not steady state; use --precondition, "
		       "--loop or --until-steady\n");
}

/* The trace on the emulated SSD (run/blk_run.c): the exit code. */
static int replay_ftl(const char *path, const struct br_opts *o, const struct trace_opts *to)
{
	struct br_source s = {.path = path, .to = to};
	struct blk_run_opts bo;
	struct blk_report rep;
	struct ftl_config cfg;
	char err[8192];
	int rc;

	if (fg_config_from_opts(&cfg, o->preset, o->sets, o->gc))
		return EXIT_USAGE;
	blk_run_opts_default(&bo);
	bo.cfg = &cfg;
	bo.src = (struct blk_run_source){src_open, src_next, src_where, src_close, &s};
	bo.name = path;
	bo.precondition = o->precondition;
	bo.steady = o->steady;
	bo.loops = o->loops;
	bo.max_loops = o->max_loops;
	bo.wrap = o->wrap;
	bo.dwpd = isnan(o->dwpd) ? -1 : o->dwpd;
	progress_init(&s.pg, "blkreplay");
	s.passes = o->steady ? 0 : o->loops;
	s.most = o->max_loops;
	rc = blk_run(&bo, &rep, err, sizeof(err));
	progress_end(&s.pg);
	if (!rc && rep.eol.reached)
		fprintf(stderr,
		        "femu-gandalf: end of life reached (%s) at pass %d, %s %llu; the report "
		        "covers the run up to it\n",
		        rep.eol.cause, rep.eol.pass, rep.eol.unit,
		        (unsigned long long)rep.eol.index);
	if (rc) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		rc = rc == RUN_E_INPUT ? EXIT_USAGE : 1;
	} else if (o->json) {
		struct json_out j;
		jout_init(&j, stdout);
		blk_report_json(&rep, &j);
		rc = fg_json_finish(&j);
	} else {
		print_run_text(o, &rep);
	}
	blk_report_free(&rep);
	return rc;
}

/* Check the options and fill the reader's: 0, or EXIT_USAGE after saying why. */
static int check_opts(const struct br_opts *o, struct trace_opts *to)
{
	struct blk_run_opts bo;
	char err[256];

	/* NaN: not given (the trace's rate); a value given must be a rate */
	if (!isnan(o->dwpd) && !(o->dwpd > 0 && isfinite(o->dwpd))) {
		fprintf(stderr, "femu-gandalf: --dwpd %g: must be > 0\n", o->dwpd);
		return EXIT_USAGE;
	}
	blk_run_opts_default(&bo);
	bo.loops = o->loops;
	bo.max_loops = o->max_loops;
	if (blk_run_opts_check(&bo, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return EXIT_USAGE;
	}
	trace_opts_default(to);
	to->skip_bad = o->skip_bad;
	if (o->format) {
		to->force = trace_format_parse(o->format);
		if (!trace_format_is_block(to->force)) {
			fprintf(stderr,
			        "femu-gandalf: --format %s: must be blk-csv, biosnoop or "
			        "blk-ftrace\n",
			        o->format);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* --target: the trace onto a real device or file. */
static int run_target(const char *path, const struct br_opts *o, const struct trace_opts *to)
{
	double speed;

	if (!fg_parse_timing(o->timing, &speed)) {
		fprintf(stderr, "femu-gandalf: --timing %s: must be afap, trace or xN (N > 0)\n",
		        o->timing);
		return EXIT_USAGE;
	}
	if (o->iodepth < 1 || o->iodepth > AIO_TARGET_MAX_IODEPTH) {
		fprintf(stderr, "femu-gandalf: --iodepth %d: must be in 1..%d\n", o->iodepth,
		        AIO_TARGET_MAX_IODEPTH);
		return EXIT_USAGE;
	}
	if (o->preset || o->loops != 1 || o->steady || o->precondition) {
		fprintf(stderr,
		        "femu-gandalf: --target replays onto a real device: --preset, --loop, "
		        "--until-steady and --precondition do not apply\n");
		return EXIT_USAGE;
	}
	return replay_target(path, to, o->target, o->iodepth, speed, o->force, o->json);
}

int cmd_blkreplay(int argc, char **argv)
{
	struct br_opts o = {
	        .timing = "afap", .loops = 1, .max_loops = 100, .iodepth = 32, .dwpd = NAN};
	GOptionEntry opts[] = {
	        {"preset", 'p', 0, G_OPTION_ARG_FILENAME, &o.preset,
	         "drive preset name or INI file", "NAME|FILE"},
	        {"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &o.sets,
	         "override a config key (repeatable)", "KEY=VALUE"},
	        {"gc", 0, 0, G_OPTION_ARG_STRING, &o.gc,
	         "victim policy: greedy | fifo | cost-benefit | d-choice:D", "POLICY"},
	        {"precondition", 0, 0, G_OPTION_ARG_NONE, &o.precondition,
	         "fill the drive with 2x user capacity of 128 KiB sequential writes first", NULL},
	        {"loop", 'l', 0, G_OPTION_ARG_INT, &o.loops, "replay the trace N times (default 1)",
	         "N"},
	        {"until-steady", 0, 0, G_OPTION_ARG_NONE, &o.steady,
	         "loop until the per-pass WAF is steady (SNIA criteria)", NULL},
	        {"max-loops", 0, 0, G_OPTION_ARG_INT, &o.max_loops,
	         "cap for --until-steady (default 100)", "N"},
	        {"dwpd", 0, 0, G_OPTION_ARG_DOUBLE, &o.dwpd,
	         "host write rate for lifetimes, drive writes/day, > 0 (default: from the trace's "
	         "duration)",
	         "X"},
	        {"wrap", 0, 0, G_OPTION_ARG_NONE, &o.wrap,
	         "fold I/Os past the end of the device back into it", NULL},
	        {"format", 0, 0, G_OPTION_ARG_STRING, &o.format,
	         "force the trace format: blk-csv | biosnoop", "F"},
	        {"skip-bad", 0, 0, G_OPTION_ARG_NONE, &o.skip_bad,
	         "count and skip malformed records", NULL},
	        {"json", 'j', 0, G_OPTION_ARG_NONE, &o.json, "print one JSON object", NULL},
	        {"target", 't', 0, G_OPTION_ARG_FILENAME, &o.target,
	         "replay onto this block device or file (libaio, O_DIRECT) instead", "PATH"},
	        {"iodepth", 0, 0, G_OPTION_ARG_INT, &o.iodepth,
	         "--target: I/Os in flight (default 32)", "N"},
	        {"timing", 0, 0, G_OPTION_ARG_STRING, &o.timing,
	         "--target: afap (default) | trace (original spacing) | xN (N x faster)", "T"},
	        {"force", 0, 0, G_OPTION_ARG_NONE, &o.force,
	         "--target: allow a mounted device or one with a filesystem signature", NULL},
	        {NULL},
	};
	GOptionContext *ctx = g_option_context_new(
	        "TRACE - replay a block trace on an emulated SSD or a real device");
	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_set_description(
	        ctx,
	        "TRACE is a canonical block CSV (traces/FORMATS.md, also what "
	        "scripts/capture-blk.bt prints)\n"
	        "or biosnoop output, optionally .zst-compressed. A replay whose drive reaches end of "
	        "life\nstops at the refused I/O and reports up to it (exit 0; JSON \"eol\" says so).\n\n"
	        "Examples:\n"
	        "  femu-gandalf blkreplay traces/blk-kvcache-small.csv --preset tiny "
	        "--until-steady\n"
	        "  femu-gandalf blkreplay capture.csv.zst --preset ent-tlc-1t --loop 3 --json\n"
	        "  femu-gandalf blkreplay traces/blk-kvcache-small.csv --target /dev/nvme0n1 "
	        "--iodepth 32 --timing x10\n");
	struct trace_opts to;
	int rc = EXIT_USAGE;

	if (fg_parse_opts_args(ctx, &argc, &argv, 1, "TRACE") && !(rc = check_opts(&o, &to)))
		rc = o.target ? run_target(argv[1], &o, &to) : replay_ftl(argv[1], &o, &to);
	g_option_context_free(ctx);
	return rc;
}
