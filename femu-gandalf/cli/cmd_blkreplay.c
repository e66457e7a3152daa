/*
 * cmd_blkreplay.c - `femu-gandalf blkreplay`: replay a block trace on the emulated SSD
 * (in-process, the default) and report WAF, erase counts and the three lifetimes.
 *
 * Each I/O is issued at its trace time (plus, on later passes, the length of the earlier
 * passes), so the FTL's timing model and idle-time background GC see the trace's real gaps.
 * Host writes per day come from the trace: bytes written per pass / trace duration x 86,400 s
 * (or --dwpd). The first pass over a fresh drive is not steady state: --precondition fills it
 * first, --loop N replays N times, --until-steady loops until the per-pass WAF is steady.
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
#include "trace.h"

struct pass_result {
	uint64_t ios, write_bytes;
	double t_first, t_last;
};

/* One pass over the trace into the FTL. Returns 0, or 1 after printing FILE:LINE: reason. */
static int replay_pass(const char *path, const struct trace_opts *to, struct ftl *f, uint64_t t_off,
		       bool wrap, struct pass_result *pr, struct progress *pg)
{
	char err[8192];
	struct trace *t = trace_open(path, to, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return EXIT_USAGE;
	}
	if (!trace_is_block(t)) {
		fprintf(stderr, "femu-gandalf: %s: a %s trace holds KV requests; blkreplay needs a block trace "
				"(use 'femu-gandalf kv' for KV traces)\n",
			path, trace_format_name(trace_format(t)));
		trace_close(t);
		return EXIT_USAGE;
	}
	const uint64_t user = ftl_get_geometry(f)->user_bytes;
	struct blk_io io;
	int r, rc = 0;
	memset(pr, 0, sizeof(*pr));
	while ((r = trace_next_blk(t, &io)) == 1) {
		uint64_t off = io.lba * 512, now = t_off + io.t_ns;
		if (!pr->ios)
			pr->t_first = io.t_ns / 1e9;
		pr->t_last = io.t_ns / 1e9;
		pr->ios++;
		if (io.op != 'F' && (off >= user || io.bytes > user - off)) {
			if (!wrap || io.bytes > user) {
				fprintf(stderr, "femu-gandalf: %s: %c at lba %llu (+%llu bytes) is past the end of the device "
						"(%llu bytes); use a larger drive or --wrap\n",
					trace_where(t), io.op, (unsigned long long)io.lba, (unsigned long long)io.bytes,
					(unsigned long long)user);
				rc = EXIT_USAGE;
				break;
			}
			off = off % (user - io.bytes + 1) / 512 * 512;
		}
		int s = FTL_OK;
		switch (io.op) {
		case 'W':
			s = ftl_write(f, off, io.bytes, 0, now, NULL);
			pr->write_bytes += io.bytes;
			break;
		case 'R': s = ftl_read(f, off, io.bytes, now, NULL); break;
		case 'D': s = ftl_trim(f, off, io.bytes, now, NULL); break;
		default: s = ftl_flush(f, now, NULL); break;
		}
		if (s) {
			fprintf(stderr, "femu-gandalf: %s: %c lba %llu bytes %llu: %s\n", trace_where(t), io.op,
				(unsigned long long)io.lba, (unsigned long long)io.bytes, ftl_strerror(s));
			rc = s == FTL_E_INVAL ? EXIT_USAGE : 1;
			break;
		}
		if (pg->tty && !(pr->ios & 0xffff)) {
			char extra[64];
			snprintf(extra, sizeof(extra), "%llu I/Os", (unsigned long long)pr->ios);
			progress_update(pg, 0, 0, extra);
		}
	}
	if (r < 0) {
		fprintf(stderr, "femu-gandalf: %s\n", trace_error(t));
		rc = EXIT_USAGE;
	}
	if (!rc && trace_skipped(t))
		fprintf(stderr, "femu-gandalf: %s: skipped %llu malformed records (last: %s)\n", path,
			(unsigned long long)trace_skipped(t), trace_error(t));
	trace_close(t);
	return rc;
}

/* --timing afap | trace | xN -> speed factor (0 = as fast as possible). */
static bool parse_timing(const char *s, double *speed)
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

static int replay_target(const char *path, const struct trace_opts *to, const char *target, int iodepth,
			 double speed, bool force, bool json)
{
	char err[8192];
	struct aio_target_opts ao = {.iodepth = (unsigned)iodepth, .speed = speed, .force = force,
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
	if (!rc) {
		if (json) {
			struct json_out j;
			jout_init(&j, stdout);
			jout_object(&j, NULL, JOUT_BLOCK);
			jout_str(&j, "trace", path);
			jout_str(&j, "target", target);
			jout_u64(&j, "ios", st.ios);
			jout_u64(&j, "read_bytes", st.read_bytes);
			jout_u64(&j, "write_bytes", st.write_bytes);
			jout_u64(&j, "discard_bytes", st.discard_bytes);
			jout_u64(&j, "flushes", st.flushes);
			jout_num(&j, "seconds", "%.6f", st.seconds);
			jout_num(&j, "iops", "%.1f", st.iops);
			jout_num(&j, "mb_per_s", "%.2f", st.mbps);
			jout_object(&j, "latency_us", JOUT_INLINE);
			jout_num(&j, "mean", "%.2f", st.lat_mean_us);
			jout_num(&j, "p99", "%.2f", st.lat_p99_us);
			jout_end(&j);
			jout_end(&j);
			rc = fg_json_finish(&j);
		} else {
			printf("%s -> %s: %llu I/Os in %.3f s (%.0f IOPS, %.1f MB/s); wrote %llu bytes, read %llu, "
			       "discarded %llu; latency mean %.1f us, p99 %.1f us\n",
			       path, target, (unsigned long long)st.ios, st.seconds, st.iops, st.mbps,
			       (unsigned long long)st.write_bytes, (unsigned long long)st.read_bytes,
			       (unsigned long long)st.discard_bytes, st.lat_mean_us, st.lat_p99_us);
		}
	}
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

/* The in-process run: the per-pass WAFs and what the report needs. */
struct br_run {
	double wpass[1024], steady_waf, wall;
	int npass;
	bool reached;
	struct pass_result pr; /* the last pass */
	uint64_t total_ios;
};

/* 2x user capacity of 128 KiB sequential writes (SNIA PTS); *t_off ends after the last one. */
static int precondition_drive(struct ftl *f, uint64_t *t_off)
{
	const struct ftl_geometry *g = ftl_get_geometry(f);

	for (uint64_t pos = 0; pos < 2 * g->user_bytes; pos += 128 * 1024) {
		uint64_t off = pos % g->user_bytes;
		uint64_t len = g->user_bytes - off < 131072 ? g->user_bytes - off : 131072;
		if (ftl_write(f, off, len, 0, 0, t_off)) {
			fprintf(stderr, "femu-gandalf: preconditioning failed\n");
			return 1;
		}
	}
	return 0;
}

/* --loop N passes, or until the per-pass WAF is steady: the exit code. */
static int replay_passes(const char *path, const struct br_opts *o, const struct trace_opts *to,
                         struct ftl *f, uint64_t t_off, struct br_run *run)
{
	struct progress pg;
	int want = o->steady ? o->max_loops : o->loops, rc = 0;
	double t0 = now_seconds();

	progress_init(&pg, "blkreplay");
	run->steady_waf = NAN;
	while (run->npass < want && run->npass < 1024) {
		struct ftl_stats a, b;
		ftl_get_stats(f, &a);
		rc = replay_pass(path, to, f, t_off, o->wrap, &run->pr, &pg);
		if (rc)
			return rc;
		if (!run->pr.ios) {
			fprintf(stderr, "femu-gandalf: %s: no usable I/O in the trace\n", path);
			return EXIT_USAGE;
		}
		run->total_ios += run->pr.ios;
		ftl_get_stats(f, &b);
		uint64_t dh = b.host_write_bytes - a.host_write_bytes;
		run->wpass[run->npass++] =
		        dh ? (double)(b.nand_write_bytes - a.nand_write_bytes) / dh : NAN;
		/* the next pass starts after this one's last I/O and the device's last completion */
		uint64_t span = (uint64_t)((run->pr.t_last - 0) * 1e9) + 1;
		t_off = (t_off + span > b.clock_ns ? t_off + span : b.clock_ns + 1);
		if (o->steady && run->npass >= 5 &&
		    fg_is_steady(run->wpass + run->npass - 5, 5, &run->steady_waf)) {
			run->reached = true;
			break;
		}
	}
	run->wall = now_seconds() - t0;
	progress_end(&pg);
	return rc;
}

static int print_run_json(const char *path, const struct br_opts *o, struct ftl *f,
                          const struct br_run *run, double bpd)
{
	const struct pass_result *pr = &run->pr;
	struct json_out j;

	jout_init(&j, stdout);
	jout_object(&j, NULL, JOUT_BLOCK);
	jout_str(&j, "trace", path);
	jout_i64(&j, "passes", run->npass);
	jout_u64(&j, "ios_per_pass", pr->ios);
	jout_num(&j, "trace_duration_s", "%.6f", pr->t_last - pr->t_first);
	jout_u64(&j, "write_bytes_per_pass", pr->write_bytes);
	jout_num(&j, "replay_ios_per_s", "%.0f",
	         run->total_ios / (run->wall > 0 ? run->wall : 1e-9));
	jout_object(&j, "steady", JOUT_INLINE);
	jout_bool(&j, "requested", o->steady);
	jout_bool(&j, "reached", run->reached);
	jout_num(&j, "waf", "%.6g", run->reached ? run->steady_waf : NAN);
	jout_array(&j, "pass_waf", JOUT_INLINE);
	for (int i = 0; i < run->npass; i++)
		jout_num(&j, NULL, "%.4f", isfinite(run->wpass[i]) ? run->wpass[i] : 0.0);
	jout_end(&j);
	jout_end(&j);
	ftl_json_members(f, bpd, &j);
	jout_end(&j);
	return fg_json_finish(&j) ? 1 : 0;
}

static void print_run_text(const char *path, const struct br_opts *o, struct ftl *f,
                           const struct br_run *run, double bpd)
{
	const struct pass_result *pr = &run->pr;
	char b1[32];

	printf("trace        %s: %llu I/Os, %.1f s, %s written per pass; %d pass%s (%.0f I/Os per "
	       "s)\n",
	       path, (unsigned long long)pr->ios, pr->t_last - pr->t_first,
	       fg_human((double)pr->write_bytes, b1), run->npass, run->npass == 1 ? "" : "es",
	       run->total_ios / (run->wall > 0 ? run->wall : 1e-9));
	printf("drive        %s: %s user\n", ftl_get_config(f)->name,
	       fg_human((double)ftl_get_geometry(f)->user_bytes, b1));
	if (o->steady)
		printf("steady       %s after %d passes (WAF over last 5 passes %.3f)\n",
		       run->reached ? "reached" : "NOT reached", run->npass, run->steady_waf);
	fg_report_text(f, bpd, true);
	if (run->npass == 1 && !o->precondition)
		printf("note: one pass over a fresh drive is not steady state; use --precondition, "
		       "--loop or --until-steady\n");
}

/* The trace on the emulated SSD: the exit code. */
static int replay_ftl(const char *path, const struct br_opts *o, const struct trace_opts *to)
{
	struct ftl_config cfg;
	char err[512];
	struct br_run run = {0};
	uint64_t t_off = 0;
	double bpd, dur;
	struct ftl *f;
	int rc;

	if (fg_config_from_opts(&cfg, o->preset, o->sets, o->gc))
		return EXIT_USAGE;
	f = ftl_create(&cfg, err, sizeof(err));
	if (!f) {
		fprintf(stderr, "femu-gandalf: preset %s: %s\n", o->preset, err);
		return EXIT_USAGE;
	}
	rc = o->precondition ? precondition_drive(f, &t_off) : 0;
	if (!rc)
		rc = replay_passes(path, o, to, f, t_off, &run);
	if (rc)
		goto out;
	dur = run.pr.t_last - run.pr.t_first;
	if (o->dwpd > 0) {
		bpd = o->dwpd * (double)ftl_get_geometry(f)->user_bytes;
	} else if (dur > 0) {
		bpd = (double)run.pr.write_bytes / dur * 86400.0;
	} else {
		fprintf(stderr,
		        "femu-gandalf: %s: the trace has no duration; give the write rate with "
		        "--dwpd\n",
		        path);
		rc = EXIT_USAGE;
		goto out;
	}
	if (o->json)
		rc = print_run_json(path, o, f, &run, bpd);
	else
		print_run_text(path, o, f, &run, bpd);
out:
	ftl_destroy(f);
	return rc;
}

/* Check the options and fill the reader's: 0, or EXIT_USAGE after saying why. */
static int check_opts(const struct br_opts *o, struct trace_opts *to)
{
	if (o->loops < 1 || o->max_loops < 5) {
		fprintf(stderr, "femu-gandalf: --loop must be >= 1 and --max-loops >= 5\n");
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

	if (!parse_timing(o->timing, &speed)) {
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
	        .timing = "afap", .loops = 1, .max_loops = 100, .iodepth = 32, .dwpd = -1};
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
	         "host write rate for lifetimes (default: from the trace's duration)", "X"},
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
	        "or biosnoop output, optionally .zst-compressed.\n\n"
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
