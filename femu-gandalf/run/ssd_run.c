/*
 * ssd_run.c - one synthetic-workload experiment on an emulated SSD: what `femu-gandalf ssd`
 * runs, as a library call (run.h, docs/run.md).
 *
 * The host issues one I/O at a time (closed loop): each write is issued at the virtual time the
 * previous one completed, so the timing model sees a queue depth of one. Phases, in order:
 *   precondition  2x user capacity of 128 KiB sequential writes (SNIA PTS), so the first
 *                 measured byte lands on a full drive and not on a fresh one;
 *   steady        rounds of `round` x user capacity until run_steady_add() says steady (by
 *                 SNIA's rule, or the tight one with steady_rule), capped by max_rounds and
 *                 by `writes` (default 50 user capacities);
 *   then either   `writes` x user capacity of workload writes, or, with accelerate F, writes
 *                 until end of life on a drive whose P/E limits were divided by F.
 * Accelerated aging first records what the unscaled drive would extrapolate at that point
 * (ftl_lifetime_scaled), so the report can set the two lifetimes side by side: extrapolation
 * cannot see retirements eating the spare near the end, the aging run does.
 *
 * End of life during aging is either the device going read-only (FTL_E_WORN from a write) or
 * the mean erase count reaching the scaled rated P/E. The second is polled with the progress
 * callback, ~512 times per user capacity, because reading the stats costs O(blocks).
 *
 * End of life is a result, not a failure: in any phase, the first write the drive refuses with
 * FTL_E_WORN ends the run there, and the report (rep->eol, run_eol_note) covers the run up to
 * it. Writes are counted across the whole run, so the refused one has one index whatever the
 * phase; nothing after it is written.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "atomicfile.h"
#include "run.h"
#include "workload.h"

#define PRECONDITION_BS (128 * 1024)
#define STEADY_DEFAULT_CAP 50.0 /* user capacities of steady rounds without `writes` */
#define ACCEL_DEFAULT_CAP 1e6   /* user capacities of aging without `writes` */

struct runner {
	const struct ssd_run_opts *o;
	struct ftl *f;
	uint64_t user; /* user capacity, bytes */
	struct workload wl;
	uint64_t unit;     /* bytes per block of wl */
	struct bs_mix mix; /* with o->bs_mix: the sizes; wl then runs over 512-byte sectors */
	uint64_t mix_rng;
	uint64_t now;                     /* virtual ns: the last completion */
	uint64_t writes;                  /* writes the drive accepted, every phase */
	/* for the progress callback: the phase, its bytes written and to write (0: until a rule
	 * says so) */
	char phase[64];
	uint64_t done_bytes, total_bytes;
};

void ssd_run_opts_default(struct ssd_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->workload = "uniform";
	o->bs = 4096;
	o->seed = 1;
	o->round = 0.25;
	o->max_rounds = 200;
	o->writes = -1;
	o->dwpd = -1;
	o->perf.iodepth = 1;
	o->perf.runtime_s = 1;
}

int ssd_run_opts_check(const struct ssd_run_opts *o, char *err, size_t errlen)
{
	struct bs_mix mix;

	if (o->bs_mix && bs_mix_init(&mix, o->bs_mix, err, errlen))
		return RUN_E_INPUT;
	if (o->steady_rule != RUN_RULE_SNIA && o->steady_rule != RUN_RULE_TIGHT) {
		snprintf(err, errlen, "%s %d: must be snia or tight", run_opt(RUN_OPT_STEADY_RULE),
		         (int)o->steady_rule);
		return RUN_E_INPUT;
	}
	if (!o->bs_mix && (!o->bs || o->bs % FTL_SECTOR)) {
		snprintf(err, errlen, "%s %llu: must be a positive multiple of 512 bytes",
		         run_opt(RUN_OPT_BS), (unsigned long long)o->bs);
		return RUN_E_INPUT;
	}
	if (o->writes != -1 && !(o->writes >= 0 && o->writes < 1e6)) {
		snprintf(err, errlen, "%s %g: must be at least 0 and under 1e6 user capacities",
		         run_opt(RUN_OPT_WRITES), o->writes);
		return RUN_E_INPUT;
	}
	if (!(o->round > 0 && o->round <= 100) || o->max_rounds < 5) {
		snprintf(err, errlen, "%s must be in (0, 100] and %s >= 5", run_opt(RUN_OPT_ROUND),
		         run_opt(RUN_OPT_MAX_ROUNDS));
		return RUN_E_INPUT;
	}
	if (o->perf.rw != PERF_NONE) {
		const struct perf_opts *p = &o->perf;
		if (o->accelerate || o->bs_mix) {
			snprintf(err, errlen, "%s cannot be combined with %s%s", run_opt(RUN_OPT_RW),
			         run_opt(o->accelerate ? RUN_OPT_ACCELERATE : RUN_OPT_BS),
			         o->accelerate ? "" : " jesd219 (one I/O size per phase)");
			return RUN_E_INPUT;
		}
		if (p->iodepth < 1 || p->iodepth > 65536) {
			snprintf(err, errlen, "%s %u: must be 1..65536", run_opt(RUN_OPT_IODEPTH),
			         p->iodepth);
			return RUN_E_INPUT;
		}
		if (!(p->runtime_s > 0 && p->runtime_s <= 1e6) || !(p->ramp_s >= 0 && p->ramp_s <= 1e6)) {
			snprintf(err, errlen, "%s must be in (0, 1e6] and %s in [0, 1e6] (virtual seconds)",
			         run_opt(RUN_OPT_RUNTIME), run_opt(RUN_OPT_RAMP));
			return RUN_E_INPUT;
		}
		if (!(p->rate_iops >= 0 && p->rate_iops <= 1e9)) {
			snprintf(err, errlen, "%s %g: must be 0 (closed loop) or a rate in IOPS up to 1e9",
			         run_opt(RUN_OPT_RATE), p->rate_iops);
			return RUN_E_INPUT;
		}
	}
	if (o->accelerate && !(o->accelerate >= 1)) {
		snprintf(err, errlen, "%s %g: must be >= 1", run_opt(RUN_OPT_ACCELERATE), o->accelerate);
		return RUN_E_INPUT;
	}
	if (o->save_snapshot) { /* refused before the run, not after it */
		char why[512];
		if (fg_atomic_check(o->save_snapshot, why, sizeof(why))) {
			snprintf(err, errlen, "%s %s", run_opt(RUN_OPT_SAVE_SNAPSHOT), why);
			return RUN_E_INPUT;
		}
	}
	return RUN_OK;
}

/* Every ~1/512 user capacity: report progress and, when aging, stop at the rated P/E. */
static int poll_drive(struct runner *r, bool stop_at_pe)
{
	struct ftl_stats st;

	if (!stop_at_pe && !r->o->progress)
		return FTL_OK;
	ftl_get_stats(r->f, &st);
	if (stop_at_pe && st.erase_mean >= ftl_get_config(r->f)->pe_cycles)
		return FTL_E_WORN;
	if (!r->o->progress)
		return FTL_OK;
	if (stop_at_pe) /* aging: the share of the (scaled) rated P/E used */
		r->o->progress(r->o->progress_arg, r->phase, st.erase_mean,
		               ftl_get_config(r->f)->pe_cycles, st.waf_window);
	else
		r->o->progress(r->o->progress_arg, r->phase, (double)r->done_bytes,
		               (double)r->total_bytes, st.waf_window);
	return FTL_OK;
}

/*
 * Write `bytes` with the workload, or sequentially in seq_bs chunks when seq_bs != 0, each write
 * issued when the one before completed. The offsets are known ahead, so they go to the drive in
 * batches (ftl_write_batch, FTL_NOW_PREV: the same results as one ftl_write() each, with the
 * table lines fetched ahead); a batch ends where the loop would poll the drive.
 */
static int write_phase(struct runner *r, uint64_t bytes, uint64_t seq_bs, bool stop_at_pe)
{
	enum { BATCH = 256 };
	uint64_t pos = 0, written = 0, check_every = r->user / 512 + 1, next_check = check_every;
	struct ftl_wreq w[BATCH];
	uint64_t done[BATCH];

	while (written < bytes) {
		size_t n = 0;
		uint64_t ahead = written;

		/* the writes the loop makes before it next polls (or stops) */
		while (n < BATCH && ahead < bytes && (n == 0 || ahead < next_check)) {
			uint64_t off, len;

			if (seq_bs) {
				off = pos;
				len = seq_bs < r->user - pos ? seq_bs : r->user - pos;
				pos = (pos + len) % r->user;
			} else if (r->o->bs_mix) {
				/*
				 * A size from the mix at a sector from the access distribution: 4 KiB
				 * and larger aligned to 4 KiB, smaller ones to 512 B (so a 1.5 KiB
				 * write may span two 4 KiB units), pulled back inside the device at
				 * its end.
				 */
				len = bs_mix_next(&r->mix, &r->mix_rng);
				uint64_t align = len >= 4096 ? 4096 : FTL_SECTOR;
				off = workload_next(&r->wl) * FTL_SECTOR / align * align;
				if (off + len > r->user)
					off = (r->user - len) / align * align;
			} else {
				off = workload_next(&r->wl) * r->o->bs;
				len = r->o->bs;
			}
			w[n] = (struct ftl_wreq){.off = off, .len = len,
			                         .now_ns = n ? FTL_NOW_PREV : r->now};
			if (r->o->zone_streams) /* by where it lands, as fio's placement scheme */
				w[n].stream = workload_zone(&r->wl, off / r->unit);
			n++;
			ahead += len;
		}
		size_t ok = 0;
		int rc = ftl_write_batch(r->f, w, n, done, &ok);
		for (size_t i = 0; i < ok; i++) {
			r->now = done[i];
			written += w[i].len;
			r->done_bytes += w[i].len;
		}
		r->writes += ok;
		if (rc)
			return rc;
		if (written >= next_check) {
			next_check += check_every;
			if ((rc = poll_drive(r, stop_at_pe)))
				return rc;
		}
	}
	return FTL_OK;
}

/* Aging divides the rated P/E by F, and the aged drive must keep at least one cycle. */
static int accel_fits(const struct ssd_run_opts *o, uint32_t pe_cycles, char *err, size_t errlen)
{
	if (o->accelerate <= pe_cycles)
		return RUN_OK;
	snprintf(err, errlen,
	         "%s %g: must be in [1, %u], the drive's rated pe_cycles (the aged drive "
	         "keeps >= 1 P/E cycle)",
	         run_opt(RUN_OPT_ACCELERATE), o->accelerate, pe_cycles);
	return RUN_E_INPUT;
}

/* The drive: loaded from a snapshot, or created from cfg with the P/E limit scaled for aging. */
/* --zone-streams: a zoned workload, and a host stream for each zone. */
static int zone_streams_fit(struct runner *r, char *err, size_t errlen)
{
	unsigned streams = ftl_get_config(r->f)->host_streams;
	if (!r->o->zone_streams)
		return RUN_OK;
	if (r->wl.kind != WL_ZONED) {
		snprintf(err, errlen, "%s: needs %s zoned:R1/F1:R2/F2...",
		         run_opt(RUN_OPT_ZONE_STREAMS), run_opt(RUN_OPT_WORKLOAD));
		return RUN_E_INPUT;
	}
	if (r->wl.nz > streams) {
		snprintf(err, errlen,
		         "%s: %s %s has %u zones, the drive %u host stream%s "
		         "(set host_streams=%u; with fdp=on they are FDP handles)",
		         run_opt(RUN_OPT_ZONE_STREAMS), run_opt(RUN_OPT_WORKLOAD), r->o->workload,
		         r->wl.nz, streams,
		         streams == 1 ? "" : "s", r->wl.nz);
		return RUN_E_INPUT;
	}
	return RUN_OK;
}

static int open_drive(struct runner *r, struct ssd_report *rep, char *err, size_t errlen)
{
	const struct ssd_run_opts *o = r->o;

	if (o->load_snapshot) {
		rep->ftl = ftl_snapshot_load(o->load_snapshot, err, errlen);
		if (!rep->ftl)
			return RUN_E_INPUT;
		rep->cfg = *ftl_get_config(rep->ftl);
		if (accel_fits(o, rep->cfg.pe_cycles, err, errlen))
			return RUN_E_INPUT;
	} else {
		char why[512];

		rep->cfg = *o->cfg;
		if (accel_fits(o, rep->cfg.pe_cycles, err, errlen))
			return RUN_E_INPUT;
		if (o->accelerate) {
			long pe = lround(rep->cfg.pe_cycles / o->accelerate);
			rep->cfg.pe_cycles = pe < 1 ? 1 : (uint32_t)pe;
		}
		rep->ftl = ftl_create(&rep->cfg, why, sizeof(why));
		if (!rep->ftl) {
			snprintf(err, errlen, "preset %s: %s", rep->cfg.name, why);
			return RUN_E_INPUT;
		}
	}
	r->f = rep->ftl;
	rep->geo = *ftl_get_geometry(r->f);
	r->user = rep->geo.user_bytes;
	if (o->bs_mix) {
		if (bs_mix_init(&r->mix, o->bs_mix, err, errlen))
			return RUN_E_INPUT;
		r->mix_rng = o->seed ^ 0x6a09e667f3bcc909ull;
		if (r->mix.bytes[r->mix.n - 1] > r->user) {
			snprintf(err, errlen,
			         "%s %s: its largest transfer (%u bytes) is larger than "
			         "the device (%llu bytes)",
			         run_opt(RUN_OPT_BS), o->bs_mix, r->mix.bytes[r->mix.n - 1],
			         (unsigned long long)r->user);
			return RUN_E_INPUT;
		}
		r->unit = FTL_SECTOR;
		if (workload_init(&r->wl, o->workload, r->user / FTL_SECTOR, o->seed, err, errlen))
			return RUN_E_INPUT;
		return zone_streams_fit(r, err, errlen);
	}
	if (o->bs > r->user) {
		snprintf(err, errlen, "%s %llu is larger than the device (%llu bytes)",
		         run_opt(RUN_OPT_BS), (unsigned long long)o->bs, (unsigned long long)r->user);
		return RUN_E_INPUT;
	}
	r->unit = o->bs;
	if (workload_init(&r->wl, o->workload, r->user / o->bs, o->seed, err, errlen))
		return RUN_E_INPUT;
	return zone_streams_fit(r, err, errlen);
}

/* Steady-state rounds, at most cap user capacities in all; each round's WAF into rep->steady. */
static int steady_rounds(struct runner *r, struct ssd_report *rep, double cap_x)
{
	uint64_t rb = (uint64_t)(r->o->round * (double)r->user);
	double cap = cap_x * (double)r->user, total = 0;
	int io = FTL_OK;

	int most = r->o->max_rounds < RUN_STEADY_MAX_ROUNDS ? r->o->max_rounds : RUN_STEADY_MAX_ROUNDS;
	r->done_bytes = r->total_bytes = 0; /* rounds until steady: how many is not known */
	while (rep->steady.rounds < most && total < cap) {
		struct ftl_stats a, b;
		double waf;

		snprintf(r->phase, sizeof(r->phase), "steady state (round %d of at most %d)",
		         rep->steady.rounds + 1, most);
		ftl_get_stats(r->f, &a);
		io = write_phase(r, rb, 0, r->o->accelerate > 0);
		ftl_get_stats(r->f, &b);
		if (io)
			break;
		total += rb;
		waf = (double)(b.nand_write_bytes - a.nand_write_bytes) /
		      (double)(b.host_write_bytes - a.host_write_bytes);
		if (run_steady_add(&rep->steady, waf))
			break;
	}
	return io;
}

/* Aging to end of life, after noting what the unscaled drive would extrapolate now. */
static int age_to_eol(struct runner *r, struct ssd_report *rep, double cap_x)
{
	struct ftl_lifetime early;

	ftl_lifetime_scaled(r->f, rep->bytes_per_day, r->o->accelerate, &early);
	rep->accel.extrapolated_days = early.erase_days;
	snprintf(r->phase, sizeof(r->phase), "aging to end of life (x%g)", r->o->accelerate);
	return write_phase(r, (uint64_t)(cap_x * (double)r->user), 0, true);
}

/* The phases in order; returns the FTL status of the last write. */
static int run_phases(struct runner *r, struct ssd_report *rep)
{
	const struct ssd_run_opts *o = r->o;
	double steady_cap = o->writes < 0 ? STEADY_DEFAULT_CAP : o->writes;
	double accel_cap = o->writes < 0 ? ACCEL_DEFAULT_CAP : o->writes;
	double writes = o->writes < 0 ? 1 : o->writes;
	int io = FTL_OK;

	if (o->precondition) {
		snprintf(r->phase, sizeof(r->phase), "precondition (2 drive writes, sequential)");
		r->done_bytes = 0, r->total_bytes = 2 * r->user;
		io = write_phase(r, 2 * r->user, PRECONDITION_BS, false);
	}
	if (io == FTL_OK && o->steady)
		io = steady_rounds(r, rep, steady_cap);
	if (o->accelerate && io == FTL_OK)
		io = age_to_eol(r, rep, accel_cap);
	else if (io == FTL_OK && !o->steady && (o->perf.rw == PERF_NONE || o->writes >= 0)) {
		snprintf(r->phase, sizeof(r->phase), "writes (%s, %g drive writes)", o->workload,
		         writes);
		r->done_bytes = 0, r->total_bytes = (uint64_t)(writes * (double)r->user);
		io = write_phase(r, r->total_bytes, 0, false);
	}
	return io;
}

/*
 * The end-of-life event. A refused write is the one after the last accepted; aging's own stop at
 * the rated P/E refuses nothing (the drive is still writable), so it names the last write.
 */
static void note_eol(struct runner *r, struct ssd_report *rep)
{
	bool refused = ftl_eol_cause(r->f) != NULL;

	run_eol_note(&rep->eol, r->f, 0, refused ? r->writes + 1 : r->writes, "write");
	if (!refused)
		rep->eol.cause = "rated-pe";
}

/*
 * The measured window of a --rw phase that end of life cut short: from the end of the ramp to
 * the last completion before it, so IOPS and MB/s are over the time actually measured.
 */
static void perf_cut_short(struct perf_report *p, const struct perf_opts *o, uint64_t t0,
                           uint64_t last)
{
	double start = (double)t0 + o->ramp_s * 1e9, end = (double)last;

	if (end > start + o->runtime_s * 1e9)
		end = start + o->runtime_s * 1e9;
	p->seconds = end > start ? (end - start) * 1e-9 : 0;
	p->iops = p->seconds > 0 ? (double)p->ios / p->seconds : 0;
	p->mbps = p->seconds > 0 ? (double)p->bytes / p->seconds / 1e6 : 0;
}

/*
 * The --rw phase. A write refused at end of life ends it as it ends the other phases (*io =
 * FTL_E_WORN; perf_run() says only that an I/O failed, and the drive's state says why); any other
 * failure is the run's.
 */
static int perf_phase(struct runner *r, struct ssd_report *rep, int *io, char *err,
                      size_t errlen)
{
	struct perf_opts po = r->o->perf;
	uint64_t t0 = r->now;
	int rc;

	po.bs = r->o->bs;
	po.seed = r->o->seed;
	rc = perf_run(r->f, &po, &r->wl, &r->now, &rep->perf, err, errlen);
	r->writes += rep->perf.host_write_bytes / po.bs;
	if (rc == RUN_E_FAIL && ftl_eol_cause(r->f)) {
		perf_cut_short(&rep->perf, &po, t0, r->now);
		*io = FTL_E_WORN;
		rc = RUN_OK;
	}
	rep->perf_done = rc == RUN_OK;
	return rc;
}

/* After the writes: did the run end as it should, then check, save and read the figures. */
static int finish(struct runner *r, struct ssd_report *rep, int io, char *err, size_t errlen)
{
	const struct ssd_run_opts *o = r->o;
	bool eol = io == FTL_E_WORN;

	if (eol)
		note_eol(r, rep);
	if (io && !eol) {
		snprintf(err, errlen, "write failed: %s", ftl_strerror(io));
		return RUN_E_FAIL;
	}
	if (o->accelerate && !eol) {
		snprintf(err, errlen, "%s: end of life not reached within %s %g",
		         run_opt(RUN_OPT_ACCELERATE), run_opt(RUN_OPT_WRITES),
		         o->writes < 0 ? ACCEL_DEFAULT_CAP : o->writes);
		return RUN_E_FAIL;
	}
	if (o->check && ftl_check(r->f, err, errlen)) {
		char why[512];

		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "FTL invariant violated: %s", why);
		return RUN_E_INVARIANT;
	}
	if (o->save_snapshot && ftl_snapshot_save(r->f, o->save_snapshot, err, errlen))
		return RUN_E_FAIL;
	ftl_get_stats(r->f, &rep->stats);
	ftl_lifetime(r->f, rep->bytes_per_day, &rep->lifetime);
	if (o->accelerate)
		rep->accel.eol_days =
		        (double)rep->stats.host_write_bytes * o->accelerate / rep->bytes_per_day;
	return RUN_OK;
}

/* The parameters the report repeats, and the host write rate the lifetimes assume. */
static int describe_run(const struct ssd_run_opts *o, struct ssd_report *rep)
{
	rep->workload = strdup(o->workload);
	if (!rep->workload)
		return RUN_E_FAIL;
	rep->bs = o->bs_mix ? 0 : o->bs;
	rep->bs_mix = o->bs_mix ? "jesd219" : NULL;
	rep->precondition = o->precondition;
	rep->dwpd = !(o->dwpd < 0) ? o->dwpd : rep->cfg.dwpd > 0 ? rep->cfg.dwpd : 1;
	rep->bytes_per_day = rep->dwpd * (double)rep->geo.user_bytes;
	rep->steady_requested = o->steady;
	rep->accelerated = o->accelerate != 0;
	rep->accel.factor = o->accelerate;
	rep->accel.pe_cycles = rep->cfg.pe_cycles;
	return RUN_OK;
}

int ssd_run(const struct ssd_run_opts *o, struct ssd_report *rep, char *err, size_t errlen)
{
	struct runner r = {.o = o};
	int rc;

	memset(rep, 0, sizeof(*rep));
	run_steady_init(&rep->steady);
	rep->steady.rule = o->steady_rule;
	rep->accel.eol_days = rep->accel.extrapolated_days = NAN;
	if (!o->workload || (!o->load_snapshot && !o->cfg)) {
		snprintf(err, errlen, "%s is required",
		         run_opt(!o->workload ? RUN_OPT_WORKLOAD : RUN_OPT_PRESET));
		return RUN_E_INPUT;
	}
	if ((rc = ssd_run_opts_check(o, err, errlen)) || (rc = open_drive(&r, rep, err, errlen)))
		return rc;
	if ((rc = describe_run(o, rep))) {
		snprintf(err, errlen, "out of memory");
		return rc;
	}
	int io = run_phases(&r, rep);
	if (io == FTL_OK && o->perf.rw != PERF_NONE && (rc = perf_phase(&r, rep, &io, err, errlen)))
		return rc;
	return finish(&r, rep, io, err, errlen);
}

void ssd_report_free(struct ssd_report *rep)
{
	ftl_destroy(rep->ftl);
	free(rep->workload);
	rep->ftl = NULL;
	rep->workload = NULL;
}
