/*
 * blk_run.c - a block trace replayed on the emulated SSD: what `femu-gandalf blkreplay` runs
 * in process, as a library call (run.h, docs/run.md).
 *
 * The trace comes through struct blk_run_source callbacks, not the trace reader itself, so
 * run/ stays plain C on hw/ftl (the reader needs GLib and zstd): the CLI opens the file for each
 * pass and prints the reader's warnings, tests can feed an array. Each I/O is issued at its trace
 * time plus the start of its pass (open loop), so the timing model and idle-time GC see the
 * trace's real gaps; a pass starts after the previous pass's last I/O and the device's last
 * completion. Preconditioning issues all its writes at time 0 and the first pass starts when
 * the last completes: unlike ssd_run()'s closed loop, which chains each write to the previous
 * completion, so the two are kept apart to keep blkreplay's virtual times (and latencies) as
 * they were. Per-pass WAFs go to struct run_steady, whose verdict ends --until-steady.
 *
 * End of life ends the replay at the first I/O the drive refuses (FTL_E_WORN) and is a result,
 * not a failure: rep->eol names the pass and the I/O, and nothing after it is issued. The rest of
 * that pass is still read, so the per-pass figures (I/Os, duration, bytes written, hence the
 * write rate the lifetimes assume) stay the trace's own; the cut pass adds no WAF to the series.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "run.h"

#define PRECONDITION_BS (128 * 1024)
#define ISSUE_WORN 1 /* issue(): the drive refused the I/O at end of life */

void blk_run_opts_default(struct blk_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->loops = 1;
	o->max_loops = 100;
	o->dwpd = -1;
}

int blk_run_opts_check(const struct blk_run_opts *o, char *err, size_t errlen)
{
	if (o->loops < 1 || o->max_loops < 5) {
		snprintf(err, errlen, "%s must be >= 1 and %s >= 5", run_opt(RUN_OPT_LOOP),
		         run_opt(RUN_OPT_MAX_LOOPS));
		return RUN_E_INPUT;
	}
	return RUN_OK;
}

/* The wall clock, for the replay rate only: no simulated figure depends on it. */
static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* 2x user capacity of 128 KiB sequential writes (SNIA PTS), all at time 0; *t_off ends after
 * the last completion. End of life here is noted as pass 0, the 1-based write. */
static int precondition_drive(struct blk_report *rep, uint64_t *t_off, char *err, size_t errlen)
{
	const uint64_t user = ftl_get_geometry(rep->ftl)->user_bytes;
	uint64_t n = 0;

	for (uint64_t pos = 0; pos < 2 * user; pos += PRECONDITION_BS) {
		uint64_t off = pos % user;
		uint64_t len = user - off < PRECONDITION_BS ? user - off : PRECONDITION_BS;
		int s = ftl_write(rep->ftl, off, len, 0, 0, t_off);

		n++;
		if (s == FTL_E_WORN) {
			run_eol_note(&rep->eol, rep->ftl, 0, n, "write");
			return RUN_OK;
		}
		if (s) {
			snprintf(err, errlen, "preconditioning failed: %s", ftl_strerror(s));
			return RUN_E_FAIL;
		}
	}
	return RUN_OK;
}

/* One I/O at virtual time now: RUN_OK, ISSUE_WORN, or a status with "WHERE: ..." in err. */
static int issue(struct ftl *f, const struct blk_run_opts *o, struct blk_run_io io, uint64_t now,
                 char *err, size_t errlen)
{
	const uint64_t user = ftl_get_geometry(f)->user_bytes;
	const char *where = o->src.where(o->src.arg);
	uint64_t off = io.lba * 512;
	int s;

	if (io.op != 'F' && (off >= user || io.bytes > user - off)) {
		if (!o->wrap || io.bytes > user) {
			snprintf(err, errlen,
			         "%s: %c at lba %llu (+%llu bytes) is past the end of the device "
			         "(%llu bytes); use a larger drive or %s",
			         where, io.op, (unsigned long long)io.lba,
			         (unsigned long long)io.bytes, (unsigned long long)user,
			         run_opt(RUN_OPT_WRAP));
			return RUN_E_INPUT;
		}
		off = off % (user - io.bytes + 1) / 512 * 512;
	}
	switch (io.op) {
	case 'W':
		s = ftl_write(f, off, io.bytes, io.stream, now, NULL);
		break;
	case 'R':
		s = ftl_read(f, off, io.bytes, now, NULL);
		break;
	case 'D':
		s = ftl_trim(f, off, io.bytes, now, NULL);
		break;
	default:
		s = ftl_flush(f, now, NULL);
		break;
	}
	if (s == FTL_E_WORN)
		return ISSUE_WORN;
	if (s)
		snprintf(err, errlen, "%s: %c lba %llu bytes %llu: %s", where, io.op,
		         (unsigned long long)io.lba, (unsigned long long)io.bytes, ftl_strerror(s));
	return !s ? RUN_OK : s == FTL_E_INVAL ? RUN_E_INPUT : RUN_E_FAIL;
}

/* One pass over the source, starting at t_off; the pass's counts into rep. After end of life
 * the I/Os are counted but not issued. */
static int replay_pass(const struct blk_run_opts *o, struct blk_report *rep, uint64_t t_off,
                       char *err, size_t errlen)
{
	const int pass = rep->steady.rounds + 1;
	struct blk_run_io io;
	int r, rc = RUN_OK;

	if (o->src.open(o->src.arg, err, errlen))
		return RUN_E_INPUT;
	rep->ios_per_pass = rep->write_bytes_per_pass = 0;
	rep->t_first = rep->t_last = 0;
	while ((r = o->src.next(o->src.arg, &io, err, errlen)) == 1) {
		if (!rep->ios_per_pass)
			rep->t_first = io.t_ns / 1e9;
		rep->t_last = io.t_ns / 1e9;
		rep->ios_per_pass++;
		if (io.op == 'W')
			rep->write_bytes_per_pass += io.bytes;
		if (rep->eol.reached)
			continue;
		rc = issue(rep->ftl, o, io, t_off + io.t_ns, err, errlen);
		if (rc == ISSUE_WORN) {
			run_eol_note(&rep->eol, rep->ftl, pass, rep->ios_per_pass, "io");
			rc = RUN_OK;
			continue;
		}
		if (rc)
			break;
		rep->total_ios++;
	}
	if (r < 0)
		rc = RUN_E_INPUT;
	o->src.close(o->src.arg);
	return rc;
}

/* --loop N passes, or until the per-pass WAF is steady, or until end of life (a drive already
 * at end of life gets one pass that only reads the trace). */
static int replay_passes(const struct blk_run_opts *o, struct blk_report *rep, uint64_t t_off,
                         char *err, size_t errlen)
{
	int want = o->steady ? o->max_loops : o->loops, rc;
	double t0 = wall_seconds();

	while (rep->steady.rounds < want && rep->steady.rounds < RUN_STEADY_MAX_ROUNDS) {
		struct ftl_stats a, b;

		ftl_get_stats(rep->ftl, &a);
		if ((rc = replay_pass(o, rep, t_off, err, errlen)))
			return rc;
		if (!rep->ios_per_pass) {
			snprintf(err, errlen, "%s: no usable I/O in the trace", rep->name);
			return RUN_E_INPUT;
		}
		if (rep->eol.reached)
			break;
		ftl_get_stats(rep->ftl, &b);
		uint64_t dh = b.host_write_bytes - a.host_write_bytes;
		double waf = dh ? (double)(b.nand_write_bytes - a.nand_write_bytes) / dh : NAN;
		/* the next pass starts after its last I/O and the device's last completion */
		uint64_t span = (uint64_t)(rep->t_last * 1e9) + 1;
		t_off = t_off + span > b.clock_ns ? t_off + span : b.clock_ns + 1;
		if (run_steady_add(&rep->steady, waf) && o->steady)
			break;
	}
	rep->steady.reached = o->steady && rep->steady.reached;
	rep->wall_s = wall_seconds() - t0;
	return RUN_OK;
}

/* The host write rate the lifetimes assume: --dwpd, else the trace's per-pass rate. */
static int write_rate(const struct blk_run_opts *o, struct blk_report *rep, char *err,
                      size_t errlen)
{
	double dur = rep->t_last - rep->t_first;

	if (o->dwpd > 0) {
		rep->bytes_per_day = o->dwpd * (double)ftl_get_geometry(rep->ftl)->user_bytes;
	} else if (dur > 0) {
		rep->bytes_per_day = (double)rep->write_bytes_per_pass / dur * 86400.0;
	} else {
		snprintf(err, errlen,
		         "%s: the trace has no duration; give the write rate with %s",
		         rep->name, run_opt(RUN_OPT_DWPD));
		return RUN_E_INPUT;
	}
	return RUN_OK;
}

int blk_run(const struct blk_run_opts *o, struct blk_report *rep, char *err, size_t errlen)
{
	char why[512];
	uint64_t t_off = 0;
	int rc;

	memset(rep, 0, sizeof(*rep));
	run_steady_init(&rep->steady);
	if (!o->cfg || !o->src.open || !o->src.next || !o->src.where || !o->src.close) {
		snprintf(err, errlen, "%s is required",
		         !o->cfg ? run_opt(RUN_OPT_PRESET) : "a trace source");
		return RUN_E_INPUT;
	}
	if ((rc = blk_run_opts_check(o, err, errlen)))
		return rc;
	rep->name = o->name ? o->name : "";
	rep->steady_requested = o->steady;
	rep->precondition = o->precondition;
	rep->ftl = ftl_create(o->cfg, why, sizeof(why));
	if (!rep->ftl) {
		snprintf(err, errlen, "preset %s: %s", o->cfg->name, why);
		return RUN_E_INPUT;
	}
	if (o->precondition && (rc = precondition_drive(rep, &t_off, err, errlen)))
		return rc;
	if ((rc = replay_passes(o, rep, t_off, err, errlen)))
		return rc;
	return write_rate(o, rep, err, errlen);
}

void blk_report_free(struct blk_report *rep)
{
	ftl_destroy(rep->ftl);
	rep->ftl = NULL;
}

void blk_report_json(const struct blk_report *rep, struct json_out *j)
{
	const struct run_steady *s = &rep->steady;

	jout_object(j, NULL, JOUT_BLOCK);
	jout_str(j, "trace", rep->name);
	jout_i64(j, "passes", s->rounds);
	jout_u64(j, "ios_per_pass", rep->ios_per_pass);
	jout_num(j, "trace_duration_s", "%.6f", rep->t_last - rep->t_first);
	jout_u64(j, "write_bytes_per_pass", rep->write_bytes_per_pass);
	jout_num(j, "replay_ios_per_s", "%.0f",
	         rep->total_ios / (rep->wall_s > 0 ? rep->wall_s : 1e-9));
	jout_object(j, "steady", JOUT_INLINE);
	jout_bool(j, "requested", rep->steady_requested);
	jout_bool(j, "reached", s->reached);
	jout_num(j, "waf", "%.6g", s->reached ? s->waf : NAN);
	jout_array(j, "pass_waf", JOUT_INLINE);
	for (int i = 0; i < s->rounds; i++)
		jout_num(j, NULL, "%.4f", isfinite(s->round_waf[i]) ? s->round_waf[i] : 0.0);
	jout_end(j);
	jout_end(j);
	run_eol_json(&rep->eol, j);
	ftl_json_members(rep->ftl, rep->bytes_per_day, j);
	jout_end(j);
}
