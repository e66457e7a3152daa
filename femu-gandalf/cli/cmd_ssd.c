/*
 * cmd_ssd.c - `femu-gandalf ssd`: a synthetic workload on an emulated SSD, with WAF, erase
 * statistics and the three lifetimes (TBW division, naive P/E, erase count).
 *
 * The host issues one I/O at a time (closed loop): each write is issued at the virtual time the
 * previous one completed. Phases:
 *   --precondition  2x user capacity of 128 KiB sequential writes (SNIA PTS);
 *   --steady        rounds of --round x user capacity until, over the last 5 rounds, the WAF
 *                   range is within 20% of its mean and the fitted slope within 10% (SNIA PTS);
 *   --writes N      N x user capacity of workload writes (after any preconditioning);
 *   --accelerate F  divide the rated P/E by F, run to end of life, and scale the host bytes
 *                   written by F: the accelerated-aging lifetime, printed beside the
 *                   extrapolated one.
 * Lifetimes assume the host writes --dwpd drive writes per day (default: the preset's rating).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "preset.h"
#include "workload.h"

struct run {
	struct ftl *f;
	struct workload wl;
	uint64_t bs, now;
	struct progress pr;
	uint64_t done_bytes, total_bytes;
};

/* Write `bytes` with the workload (or sequentially with chunk size seq_bs when seq_bs != 0). */
static int do_writes(struct run *r, uint64_t bytes, uint64_t seq_bs, bool stop_at_pe)
{
	const struct ftl_geometry *g = ftl_get_geometry(r->f);
	uint64_t pos = 0, written = 0, check_every = g->user_bytes / 512 + 1, next_check = check_every;
	while (written < bytes) {
		uint64_t off, len;
		if (seq_bs) {
			off = pos;
			len = seq_bs < g->user_bytes - pos ? seq_bs : g->user_bytes - pos;
			pos = (pos + len) % g->user_bytes;
		} else {
			off = workload_next(&r->wl) * r->bs;
			len = r->bs;
		}
		uint64_t done;
		int rc = ftl_write(r->f, off, len, 0, r->now, &done);
		if (rc)
			return rc;
		r->now = done;
		written += len;
		r->done_bytes += len;
		if (written >= next_check) {
			next_check += check_every;
			char extra[64];
			struct ftl_stats st;
			if (stop_at_pe || r->pr.tty)
				ftl_get_stats(r->f, &st);
			if (stop_at_pe && st.erase_mean >= ftl_get_config(r->f)->pe_cycles)
				return FTL_E_WORN;
			if (r->pr.tty) {
				snprintf(extra, sizeof(extra), "WAF %.3f", st.waf_window);
				progress_update(&r->pr, (double)r->done_bytes, (double)r->total_bytes, extra);
			}
		}
	}
	return FTL_OK;
}

int cmd_ssd(int argc, char **argv)
{
	char *preset = NULL, *workload = "uniform", *bs_s = "4k", *gc = NULL, *save = NULL, *load = NULL;
	char **sets = NULL;
	gboolean precondition = FALSE, steady = FALSE, json = FALSE, check = FALSE;
	double writes = -1, round = 0.25, dwpd = -1, accel = 0;
	gint max_rounds = 200;
	gint64 seed = 1;
	int rc = EXIT_USAGE;
	GOptionEntry opts[] = {
		{"preset", 'p', 0, G_OPTION_ARG_FILENAME, &preset, "drive preset name or INI file", "NAME|FILE"},
		{"set", 's', 0, G_OPTION_ARG_STRING_ARRAY, &sets, "override a config key (repeatable)", "KEY=VALUE"},
		{"workload", 'w', 0, G_OPTION_ARG_STRING, &workload, "uniform | seq | zoned:R1/F1:R2/F2:... (default uniform)", "W"},
		{"bs", 0, 0, G_OPTION_ARG_STRING, &bs_s, "I/O size (default 4k)", "SIZE"},
		{"gc", 0, 0, G_OPTION_ARG_STRING, &gc, "victim policy: greedy | fifo | cost-benefit | d-choice:D", "POLICY"},
		{"precondition", 0, 0, G_OPTION_ARG_NONE, &precondition, "first write 2x user capacity sequentially (128 KiB)", NULL},
		{"steady", 0, 0, G_OPTION_ARG_NONE, &steady, "run rounds until WAF is steady (SNIA PTS criteria)", NULL},
		{"writes", 'n', 0, G_OPTION_ARG_DOUBLE, &writes, "host writes, in multiples of the user capacity (default 1; with --steady: a cap)", "N"},
		{"round", 0, 0, G_OPTION_ARG_DOUBLE, &round, "steady-state round size, x user capacity (default 0.25)", "F"},
		{"max-rounds", 0, 0, G_OPTION_ARG_INT, &max_rounds, "give up on --steady after this many rounds (default 200)", "N"},
		{"dwpd", 0, 0, G_OPTION_ARG_DOUBLE, &dwpd, "host write rate for lifetimes, drive writes/day (default: preset's rating)", "X"},
		{"accelerate", 0, 0, G_OPTION_ARG_DOUBLE, &accel, "accelerated aging: P/E / F, run to end of life, scale by F", "F"},
		{"seed", 0, 0, G_OPTION_ARG_INT64, &seed, "workload seed (default 1)", "S"},
		{"load-snapshot", 0, 0, G_OPTION_ARG_FILENAME, &load, "start from a saved FTL state (instead of --preset)", "PATH"},
		{"save-snapshot", 0, 0, G_OPTION_ARG_FILENAME, &save, "save the FTL state at the end", "PATH"},
		{"check", 0, 0, G_OPTION_ARG_NONE, &check, "verify every FTL invariant at the end (exit 3 if broken)", NULL},
		{"json", 'j', 0, G_OPTION_ARG_NONE, &json, "print one JSON object", NULL},
		{NULL},
	};
	GOptionContext *ctx = g_option_context_new("- synthetic workload on an emulated SSD");
	g_option_context_add_main_entries(ctx, opts, NULL);
	g_option_context_set_description(ctx,
		"Prints WAF (windowed over ~1 user capacity, and cumulative), erase statistics, SMART\n"
		"and three lifetimes: TBW division, naive P/E (WAF=1), and erase count.\n\n"
		"Examples:\n"
		"  femu-gandalf ssd --preset ent-tlc-1t --set blocks_per_plane=64 --precondition --steady\n"
		"  femu-gandalf ssd --preset tiny --workload zoned:80/20:20/80 --writes 5 --json\n"
		"  femu-gandalf ssd --preset tiny --precondition --accelerate 30 --json\n");
	struct ftl_config cfg;
	struct run r = {0};
	char err[512];
	if (!fg_parse_opts(ctx, &argc, &argv))
		goto out;
	unsigned long long bs;
	if (!fg_parse_size(bs_s, &bs) || !bs || bs % FTL_SECTOR) {
		fprintf(stderr, "femu-gandalf: --bs %s: must be a positive multiple of 512 bytes\n", bs_s);
		goto out;
	}
	if (writes != -1 && !(writes >= 0 && writes < 1e6)) {
		fprintf(stderr, "femu-gandalf: --writes %g: must be >= 0\n", writes);
		goto out;
	}
	if (!(round > 0 && round <= 100) || max_rounds < 5) {
		fprintf(stderr, "femu-gandalf: --round must be in (0, 100] and --max-rounds >= 5\n");
		goto out;
	}
	if (accel && !(accel >= 1)) {
		fprintf(stderr, "femu-gandalf: --accelerate %g: must be >= 1\n", accel);
		goto out;
	}
	if (load) {
		if (preset || sets || gc) {
			fprintf(stderr, "femu-gandalf: --load-snapshot takes the config from the snapshot; drop --preset/--set/--gc\n");
			goto out;
		}
		r.f = ftl_snapshot_load(load, err, sizeof(err));
		if (!r.f) {
			fprintf(stderr, "femu-gandalf: %s\n", err);
			goto out;
		}
		cfg = *ftl_get_config(r.f);
	} else {
		if (fg_config_from_opts(&cfg, preset, sets, gc))
			goto out;
		if (accel) {
			long pe = lround(cfg.pe_cycles / accel);
			cfg.pe_cycles = pe < 1 ? 1 : (uint32_t)pe;
		}
		r.f = ftl_create(&cfg, err, sizeof(err));
		if (!r.f) {
			fprintf(stderr, "femu-gandalf: preset %s: %s\n", preset, err);
			goto out;
		}
	}
	const struct ftl_geometry *g = ftl_get_geometry(r.f);
	if (bs > g->user_bytes) {
		fprintf(stderr, "femu-gandalf: --bs %s is larger than the device (%llu bytes)\n", bs_s,
			(unsigned long long)g->user_bytes);
		goto out;
	}
	if (workload_init(&r.wl, workload, g->user_bytes / bs, (uint64_t)seed))
		goto out;
	r.bs = bs;
	if (dwpd < 0)
		dwpd = cfg.dwpd > 0 ? cfg.dwpd : 1;
	double bpd = dwpd * (double)g->user_bytes;
	double steady_cap = writes < 0 ? 50 : writes, accel_cap = writes < 0 ? 1e6 : writes;
	if (writes < 0)
		writes = 1;
	rc = 1;
	progress_init(&r.pr, "ssd");
	r.total_bytes = (uint64_t)((precondition ? 2 : 0) * (double)g->user_bytes +
				   (steady ? 0 : writes * (double)g->user_bytes));
	int io = FTL_OK;
	if (precondition)
		io = do_writes(&r, 2 * g->user_bytes, 128 * 1024, false);

	/* steady-state rounds */
	double wround[1024], steady_waf = NAN;
	int nround = 0;
	bool reached = false;
	struct ftl_lifetime early = {0};
	bool have_early = false;
	if (io == FTL_OK && steady) {
		uint64_t rb = (uint64_t)(round * (double)g->user_bytes);
		double cap = steady_cap * (double)g->user_bytes, total = 0;
		r.total_bytes = r.done_bytes + (uint64_t)cap;
		while (nround < max_rounds && nround < 1024 && total < cap) {
			struct ftl_stats a, b;
			ftl_get_stats(r.f, &a);
			io = do_writes(&r, rb, 0, accel > 0);
			ftl_get_stats(r.f, &b);
			if (io)
				break;
			total += rb;
			wround[nround++] = (double)(b.nand_write_bytes - a.nand_write_bytes) /
					   (double)(b.host_write_bytes - a.host_write_bytes);
			if (nround >= 5 && fg_is_steady(wround + nround - 5, 5, &steady_waf)) {
				reached = true;
				break;
			}
		}
	}
	if (accel && io == FTL_OK) {
		/* the extrapolation the real (unscaled) drive would make at this point */
		ftl_lifetime_scaled(r.f, bpd, accel, &early);
		have_early = true;
		r.total_bytes = 0;
		io = do_writes(&r, (uint64_t)(accel_cap * (double)g->user_bytes), 0, true);
	} else if (io == FTL_OK && !steady) {
		io = do_writes(&r, (uint64_t)(writes * (double)g->user_bytes), 0, false);
	}
	progress_end(&r.pr);
	bool eol = accel && io == FTL_E_WORN;
	if (io && !eol) {
		fprintf(stderr, "femu-gandalf: write failed: %s\n", ftl_strerror(io));
		goto out;
	}
	if (accel && !eol) {
		fprintf(stderr, "femu-gandalf: --accelerate: end of life not reached within --writes %g\n", accel_cap);
		goto out;
	}
	if (check && ftl_check(r.f, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: FTL invariant violated: %s\n", err);
		rc = EXIT_INVARIANT;
		goto out;
	}
	if (save && ftl_snapshot_save(r.f, save, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		goto out;
	}

	struct ftl_stats st;
	struct ftl_lifetime lt;
	ftl_get_stats(r.f, &st);
	ftl_lifetime(r.f, bpd, &lt);
	double acc_days = NAN, extrap_days = NAN;
	if (accel) {
		acc_days = (double)st.host_write_bytes * accel / bpd;
		if (have_early)
			extrap_days = early.erase_days;
	}
	if (json) {
		struct json_out j;
		jout_init(&j, stdout);
		jout_object(&j, NULL, JOUT_BLOCK);
		jout_str(&j, "workload", workload);
		jout_u64(&j, "bs", bs);
		jout_bool(&j, "precondition", precondition);
		jout_num(&j, "dwpd", "%.6g", dwpd);
		if (steady) {
			jout_object(&j, "steady", JOUT_INLINE);
			jout_bool(&j, "reached", reached);
			jout_i64(&j, "rounds", nround);
			jout_num(&j, "waf", "%.6g", reached ? steady_waf : NAN);
			jout_array(&j, "round_waf", JOUT_INLINE);
			for (int i = 0; i < nround; i++)
				jout_num(&j, NULL, "%.4f", wround[i]);
			jout_end(&j);
			jout_end(&j);
		}
		if (accel) {
			jout_object(&j, "accelerated", JOUT_INLINE);
			jout_num(&j, "factor", "%.6g", accel);
			jout_u64(&j, "pe_cycles", cfg.pe_cycles);
			jout_num(&j, "eol_days", "%.6g", acc_days);
			jout_num(&j, "extrapolated_days", "%.6g", extrap_days);
			jout_end(&j);
		}
		ftl_json_members(r.f, bpd, &j);
		jout_end(&j);
		if (fg_json_finish(&j)) {
			rc = 1;
			goto out;
		}
	} else {
		char b1[32], b2[32];
		printf("drive        %s: %s user, %s physical, %u units per GC unit\n", cfg.name,
		       fg_human((double)g->user_bytes, b1), fg_human((double)g->phys_bytes, b2), g->units_per_gc_unit);
		printf("workload     %s, bs %llu%s\n", workload, bs, precondition ? ", preconditioned" : "");
		if (steady)
			printf("steady       %s after %d rounds (WAF over last 5 rounds %.3f)\n",
			       reached ? "reached" : "NOT reached", nround, steady_waf);
		fg_report_text(r.f, bpd, !accel);
		if (accel)
			printf("  erase count    %10.1f days (%.2f years)  accelerated aging x%g to end of life "
			       "(extrapolated: %.1f days)\n",
			       acc_days, acc_days / 365, accel, extrap_days);
		if (!steady && !precondition && !accel)
			printf("note: a fresh drive is not in steady state; use --precondition and --steady\n");
	}
	rc = 0;
out:
	ftl_destroy(r.f);
	g_option_context_free(ctx);
	return rc;
}
