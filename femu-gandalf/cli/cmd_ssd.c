/*
 * cmd_ssd.c - `femu-gandalf ssd`: a synthetic workload on an emulated SSD, with WAF, erase
 * statistics and the three lifetimes (TBW division, naive P/E, erase count).
 *
 * This file only parses flags, builds the drive's config from --preset/--set/--gc (the CLI's
 * preset search path), and prints: the experiment itself (precondition, steady-state rounds,
 * accelerated aging, the report) is ssd_run() in femu-gandalf/run/ (docs/run.md), which tests
 * and the sweep runner call the same way. Options that need no drive are checked before the
 * preset is read, so a bad flag is reported first whatever the preset.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "drive_presets.h"
#include "run.h"

/* The flags as GOption fills them; turned into a struct ssd_run_opts by ssd_opts_from_flags(). */
struct ssd_flags {
	char *preset, *workload, *bs, *gc, *save, *load, *steady_rule, *rw;
	char **sets;
	gboolean precondition, steady, json, check, zone_streams;
	double writes, round, dwpd, accel, rate, runtime, ramp;
	gint max_rounds, iodepth;
	char *seed;
};

static const char ssd_description[] =
        "Prints WAF (windowed over ~1 user capacity, and cumulative), erase statistics, SMART\n"
        "and three lifetimes: TBW division, naive P/E (WAF=1), and erase count.\n"
        "A run whose drive reaches end of life stops at the refused write and reports up to it\n"
        "(exit 0; JSON \"eol\" says so, docs/output.md).\n\n"
        "Examples:\n"
        "  femu-gandalf ssd --preset ent-tlc-1t --set blocks_per_plane=64 --precondition --steady\n"
        "  femu-gandalf ssd --preset tiny --workload zoned:80/20:20/80 --writes 5 --json\n"
        "  femu-gandalf ssd --preset tiny --workload jesd219 --bs jesd219 --precondition --steady\n"
        "  femu-gandalf ssd --preset tiny --precondition --accelerate 30 --json\n"
        "  femu-gandalf ssd --preset ent-tlc-1t --precondition --rw randread --iodepth 256\n"
        "  femu-gandalf ssd --preset ent-tlc-1t --set blocks_per_plane=64 --precondition --steady \\\n"
        "      --rw randwrite --iodepth 32 --ramp 0.5 --runtime 2\n";

/* One option a line reads better than clang-format's wrapping. */
/* clang-format off */
static GOptionContext *ssd_option_context(struct ssd_flags *fl)
{
	GOptionEntry opts[] = {
		{"preset", 'p', 0, G_OPTION_ARG_FILENAME, &fl->preset, "drive preset name or INI file", "NAME|FILE"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &fl->sets, "override a config key (repeatable)", "KEY=VALUE"},
		{"workload", 'w', 0, G_OPTION_ARG_STRING, &fl->workload, "uniform | seq | zoned:R1/F1:R2/F2:... | jesd219 (default uniform)", "W"},
		{"bs", 0, 0, G_OPTION_ARG_STRING, &fl->bs, "I/O size, or jesd219: JESD219's enterprise transfer-size mix (default 4k)", "SIZE|jesd219"},
		{"gc", 0, 0, G_OPTION_ARG_STRING, &fl->gc, "victim policy: greedy | fifo | cost-benefit | d-choice:D", "POLICY"},
		{"precondition", 0, 0, G_OPTION_ARG_NONE, &fl->precondition, "first write 2x user capacity sequentially (128 KiB)", NULL},
		{"steady", 0, 0, G_OPTION_ARG_NONE, &fl->steady, "run rounds until WAF is steady (SNIA PTS criteria; see --steady-rule)", NULL},
		{"steady-rule", 0, 0, G_OPTION_ARG_STRING, &fl->steady_rule, "which rule ends --steady: snia (20%/10% over 5 rounds, default) | tight (3%/0.5% over 10); both are reported", "RULE"},
		{"writes", 'n', 0, G_OPTION_ARG_DOUBLE, &fl->writes, "host writes, in multiples of the user capacity (default 1; with --steady: a cap)", "N"},
		{"round", 0, 0, G_OPTION_ARG_DOUBLE, &fl->round, "steady-state round size, x user capacity (default 0.25)", "F"},
		{"max-rounds", 0, 0, G_OPTION_ARG_INT, &fl->max_rounds, "give up on --steady after this many rounds (default 200)", "N"},
		{"dwpd", 0, 0, G_OPTION_ARG_DOUBLE, &fl->dwpd, "host write rate for lifetimes, drive writes/day, >= 0 (default: preset's rating)", "X"},
		{"accelerate", 0, 0, G_OPTION_ARG_DOUBLE, &fl->accel, "accelerated aging: P/E / F, run to end of life, scale by F (1 <= F <= the drive's pe_cycles)", "F"},
		{"seed", 0, 0, G_OPTION_ARG_STRING, &fl->seed, "workload seed (default 1)", "S"},
		{"zone-streams", 0, 0, G_OPTION_ARG_NONE, &fl->zone_streams, "with --workload zoned: zone i's writes (and the precondition's) go to host stream i, an FDP handle with fdp=on (as fio's per-range placement IDs)", NULL},
		{"load-snapshot", 0, 0, G_OPTION_ARG_FILENAME, &fl->load, "start from a saved FTL state (instead of --preset)", "PATH"},
		{"save-snapshot", 0, 0, G_OPTION_ARG_FILENAME, &fl->save, "save the FTL state at the end", "PATH"},
		{"rw", 0, 0, G_OPTION_ARG_STRING, &fl->rw, "then measure I/O as fio does: read | write | randread | randwrite | randrw[:READ%] (bs = --bs, offsets = --workload)", "MODE"},
		{"iodepth", 0, 0, G_OPTION_ARG_INT, &fl->iodepth, "I/Os outstanding in the --rw phase (default 1)", "N"},
		{"rate", 0, 0, G_OPTION_ARG_DOUBLE, &fl->rate, "open loop: issue --rw I/Os at this rate, IOPS (default 0: closed loop)", "IOPS"},
		{"runtime", 0, 0, G_OPTION_ARG_DOUBLE, &fl->runtime, "virtual seconds the --rw phase measures (default 1)", "S"},
		{"ramp", 0, 0, G_OPTION_ARG_DOUBLE, &fl->ramp, "virtual seconds of --rw I/O before measuring (default 0)", "S"},
		{"check", 0, 0, G_OPTION_ARG_NONE, &fl->check, "verify every FTL invariant at the end (exit 3 if broken)", NULL},
		{"json", 'j', 0, G_OPTION_ARG_NONE, &fl->json, "print one JSON object", NULL},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("- synthetic workload on an emulated SSD");

	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_set_description(ctx, ssd_description);
	return ctx;
}
/* clang-format on */

/*
 * --dwpd and --accelerate default to NaN, so that a value given differs from none: an explicit
 * --accelerate 0 is a mistake, not "off". The drive's bound on --accelerate (its pe_cycles) is
 * ssd_run()'s. Returns 0 or -1 after printing why.
 */
static int rate_flags(const struct ssd_flags *fl, struct ssd_run_opts *o)
{
	if (!isnan(fl->dwpd) && !(fl->dwpd >= 0 && isfinite(fl->dwpd))) {
		fprintf(stderr,
		        "femu-gandalf: --dwpd %g: must be >= 0 (0: no host writes, no wear)\n",
		        fl->dwpd);
		return -1;
	}
	if (!isnan(fl->accel) && !(fl->accel >= 1 && isfinite(fl->accel))) {
		fprintf(stderr,
		        "femu-gandalf: --accelerate %g: must be >= 1 and at most the drive's "
		        "pe_cycles (leave it out for no aging)\n",
		        fl->accel);
		return -1;
	}
	o->dwpd = isnan(fl->dwpd) ? -1 : fl->dwpd;
	o->accelerate = isnan(fl->accel) ? 0 : fl->accel;
	return 0;
}

/* Flags into run options; the drive-independent checks. Returns 0 or -1 after printing why. */
static int ssd_opts_from_flags(const struct ssd_flags *fl, struct ssd_run_opts *o)
{
	unsigned long long bs;
	const char *bs_arg = fl->bs ? fl->bs : "4k";
	char err[512];

	ssd_run_opts_default(o);
	if (!strcmp(bs_arg, "jesd219")) {
		o->bs_mix = "jesd219";
	} else if (!fg_parse_size(bs_arg, &bs) || !bs || bs % FTL_SECTOR) {
		fprintf(stderr,
		        "femu-gandalf: --bs %s: must be a positive multiple of 512 bytes "
		        "or jesd219\n",
		        bs_arg);
		return -1;
	} else {
		o->bs = bs;
	}
	if (fl->steady_rule && strcmp(fl->steady_rule, "snia") &&
	    strcmp(fl->steady_rule, "tight")) {
		fprintf(stderr, "femu-gandalf: --steady-rule %s: must be snia or tight\n",
		        fl->steady_rule);
		return -1;
	}
	if (fl->steady_rule && !fl->steady) {
		fprintf(stderr, "femu-gandalf: --steady-rule needs --steady\n");
		return -1;
	}
	o->steady_rule = fl->steady_rule && !strcmp(fl->steady_rule, "tight") ? RUN_RULE_TIGHT
	                                                                      : RUN_RULE_SNIA;
	o->workload = fl->workload ? fl->workload : "uniform";
	o->seed = 1;
	if (fl->seed && !fg_parse_seed(fl->seed, &o->seed))
		return -1;
	o->precondition = fl->precondition;
	o->zone_streams = fl->zone_streams;
	o->steady = fl->steady;
	o->round = fl->round;
	o->max_rounds = fl->max_rounds;
	o->writes = fl->writes;
	if (rate_flags(fl, o))
		return -1;
	o->check = fl->check;
	o->load_snapshot = fl->load;
	o->save_snapshot = fl->save;
	if (fl->rw && perf_rw_parse(fl->rw, &o->perf.rw, &o->perf.read_pct, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return -1;
	}
	if (!fl->rw && (fl->iodepth != 1 || fl->rate || fl->runtime != 1 || fl->ramp)) {
		fprintf(stderr, "femu-gandalf: --iodepth, --rate, --runtime and --ramp need --rw\n");
		return -1;
	}
	o->perf.iodepth = fl->iodepth < 0 ? 0 : (uint32_t)fl->iodepth;
	o->perf.rate_iops = fl->rate;
	o->perf.runtime_s = fl->runtime;
	o->perf.ramp_s = fl->ramp;
	if (ssd_run_opts_check(o, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return -1;
	}
	if (fl->load && (fl->preset || fl->sets || fl->gc)) {
		fprintf(stderr,
		        "femu-gandalf: --load-snapshot takes the config from the snapshot; drop "
		        "--preset/--set/--gc\n");
		return -1;
	}
	return 0;
}

static void ssd_progress(void *arg, const char *phase, double done, double total,
                         double waf_window)
{
	struct progress *p = arg;

	progress_phase(p, phase); /* each phase its own share done and time left */
	char extra[64];
	snprintf(extra, sizeof(extra), "WAF %.3f", waf_window);
	progress_update(p, done, total, extra);
}

static void print_report_text(const struct ssd_report *rep)
{
	char b1[32], b2[32];

	printf("drive        %s: %s user, %s physical, %u units per GC unit\n", rep->cfg.name,
	       fg_human((double)rep->geo.user_bytes, b1), fg_human((double)rep->geo.phys_bytes, b2),
	       rep->geo.units_per_gc_unit);
	if (rep->bs_mix)
		printf("workload     %s, bs %s (transfer-size mix)%s\n", rep->workload, rep->bs_mix,
		       rep->precondition ? ", preconditioned" : "");
	else
		printf("workload     %s, bs %llu%s\n", rep->workload, (unsigned long long)rep->bs,
		       rep->precondition ? ", preconditioned" : "");
	run_eol_text(&rep->eol, stdout);
	if (rep->steady_requested) {
		const struct run_steady *s = &rep->steady;
		bool tight = s->rule == RUN_RULE_TIGHT;
		printf("steady       %s after %d rounds (WAF over last %d rounds %.3f)\n",
		       s->reached ? "reached" : "NOT reached", s->rounds,
		       tight ? RUN_TIGHT_WINDOW : RUN_STEADY_WINDOW, s->waf);
		if (s->snia_round)
			printf("  SNIA 20%%/10%%   steady at round %d, WAF %.4f%s\n", s->snia_round,
			       s->snia_waf, tight ? "" : " (ended the rounds)");
		else
			printf("  SNIA 20%%/10%%   NOT steady\n");
		if (s->tight_round)
			printf("  tight 3%%/0.5%%  steady at round %d, WAF %.4f%s\n",
			       s->tight_round, s->tight_waf, tight ? " (ended the rounds)" : "");
		else
			printf("  tight 3%%/0.5%%  NOT steady within %d rounds%s\n", s->rounds,
			       tight ? "" : " (--steady-rule tight waits for it)");
	}
	if (rep->perf_done) {
		const struct perf_report *p = &rep->perf;
		printf("perf         %s", perf_rw_name(p->rw));
		if (p->rw == PERF_RANDRW)
			printf(":%u", p->read_pct);
		printf(", bs %llu, iodepth %u, ", (unsigned long long)p->bs, p->iodepth);
		if (p->rate_iops > 0)
			printf("open loop at %.0f IOPS, ", p->rate_iops);
		printf("%.3g s measured: %.0f IOPS, %.1f MB/s", p->seconds, p->iops, p->mbps);
		if (p->host_write_bytes)
			printf(", WAF %.3f", p->waf);
		printf("\n  latency us   mean %.1f  p50 %.1f  p90 %.1f  p99 %.1f  p99.9 %.1f  max %.1f",
		       p->lat_us.mean, p->lat_us.p50, p->lat_us.p90, p->lat_us.p99, p->lat_us.p999,
		       p->lat_us.max);
		if (p->read_suspends)
			printf("  (%llu reads suspended a program or erase)",
			       (unsigned long long)p->read_suspends);
		printf("\n");
	}
	fg_report_text(rep->ftl, rep->bytes_per_day, !rep->accelerated);
	if (rep->accelerated)
		printf("  erase count    %10.1f days (%.2f years)  accelerated aging x%g to end of "
		       "life "
		       "(extrapolated: %.1f days)\n",
		       rep->accel.eol_days, rep->accel.eol_days / 365, rep->accel.factor,
		       rep->accel.extrapolated_days);
	if (!rep->steady_requested && !rep->precondition && !rep->accelerated && !rep->perf_done)
		printf("note: a fresh drive is not in steady state; use --precondition and "
		       "--steady\n");
}

static int print_report_json(const struct ssd_report *rep)
{
	struct json_out j;

	jout_init(&j, stdout);
	ssd_report_json(rep, &j);
	return fg_json_finish(&j);
}

static void free_flags(struct ssd_flags *fl)
{
	g_free(fl->preset);
	g_free(fl->workload);
	g_free(fl->seed);
	g_free(fl->bs);
	g_free(fl->steady_rule);
	g_free(fl->rw);
	g_free(fl->gc);
	g_free(fl->save);
	g_free(fl->load);
	g_strfreev(fl->sets);
}

/* An ssd_run() status as the CLI's exit code (docs/output.md). */
static int exit_code(int status)
{
	switch (status) {
	case RUN_OK:
		return 0;
	case RUN_E_INPUT:
		return EXIT_USAGE;
	case RUN_E_INVARIANT:
		return EXIT_INVARIANT;
	default:
		return 1;
	}
}

/* Run and print; the CLI's exit code. */
static int ssd_run_and_print(struct ssd_run_opts *o, bool json)
{
	struct ssd_report rep;
	struct progress pr;
	char err[1024];
	int rc;

	progress_init(&pr, "ssd");
	if (pr.on) {
		o->progress = ssd_progress;
		o->progress_arg = &pr;
	}
	rc = ssd_run(o, &rep, err, sizeof(err));
	progress_end(&pr);
	if (rc) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		rc = exit_code(rc);
		ssd_report_free(&rep);
		return rc;
	}
	/* aging runs to end of life on purpose; anywhere else it cut the run short */
	if (rep.eol.reached && !rep.accelerated)
		fprintf(stderr,
		        "femu-gandalf: end of life reached (%s) at write %llu; the report covers the "
		        "run up to it\n",
		        rep.eol.cause, (unsigned long long)rep.eol.index);
	if (json) {
		rc = print_report_json(&rep);
	} else {
		print_report_text(&rep);
	}
	ssd_report_free(&rep);
	return rc;
}

int cmd_ssd(int argc, char **argv)
{
	/* strings stay NULL unless given, so that all of them can be freed */
	struct ssd_flags fl = {
	        .writes = -1,
	        .round = 0.25,
	        .dwpd = NAN,
	        .accel = NAN,
	        .max_rounds = 200,
	        .iodepth = 1,
	        .runtime = 1,
	};
	GOptionContext *ctx = ssd_option_context(&fl);
	struct ssd_run_opts o;
	struct ftl_config cfg;
	int rc = EXIT_USAGE;

	if (!fg_parse_opts(ctx, &argc, &argv) || ssd_opts_from_flags(&fl, &o))
		goto out;
	if (!fl.load) {
		if (fg_config_from_opts(&cfg, fl.preset, fl.sets, fl.gc))
			goto out;
		o.cfg = &cfg;
	}
	rc = ssd_run_and_print(&o, fl.json);
out:
	free_flags(&fl);
	g_option_context_free(ctx);
	return rc;
}
