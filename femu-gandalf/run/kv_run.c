/*
 * kv_run.c - one KV-cache tier experiment: what `femu-gandalf kv` runs for one policy at one
 * parameter point, as a library call (run.h, docs/run.md).
 *
 * A fresh cache (kvsim) and a fresh drive built from the caller's validated config (or none:
 * the TBW division only), the whole trace --loop N times (each pass shifted in time after the
 * previous one's last request), then the figures `kv` reports: the simulator's counters, the
 * mean and p99 load latency, SSD host bytes per day of trace time, the TBW lifetime, GPU
 * recompute and wear cost through kv/cost.c (the formulas the policies price with), and with a
 * drive its WAF and lifetimes (ftl_lifetime()). The trace is loaded by the caller, once for
 * every run, and an offline policy's prepare() result is the caller's too (prepared_for).
 * Nothing is printed but by the writers: kv_result_json() (the object of `kv --json`) and the
 * CSV of `kv --sweep`; the text form stays in the CLI (cmd_kv.c). Errors are one line naming
 * the option at fault, as the CLI prints them after "femu-gandalf: ".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "err.h"
#include "run.h"
#include "vec.h"

/* The wall clock, for the replay rate only: no simulated figure depends on it. */
static double wall_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The drive for the SSD tier, and what the tier's config takes from it. */
static struct ftl *kv_drive(const struct kv_run_opts *o, struct kv_config *cfg, char *err,
                            size_t errlen)
{
	char e[FG_ERR_LEN];
	struct ftl_config fc = *o->drive;
	const uint32_t rated_pe = fc.pe_cycles;

	if (o->accelerate) { /* (the policies keep pricing the rated drive: cfg->ssd_pe below) */
		if (!(o->accelerate >= 1 && o->accelerate <= fc.pe_cycles)) {
			snprintf(err, errlen, "%s %g: must be in [1, %u] (the %s drive's rated "
			         "P/E cycles), so that the aged drive keeps at least one",
			         run_opt(RUN_OPT_ACCELERATE), o->accelerate, fc.pe_cycles, o->device);
			return NULL;
		}
		long pe = lround(fc.pe_cycles / o->accelerate);
		fc.pe_cycles = (uint32_t)(pe < 1 ? 1 : pe);
	}
	/* the SSD tier and the drive use both streams when placement hints are on */
	if (fc.host_streams < kv_streams(cfg))
		fc.host_streams = kv_streams(cfg);
	struct ftl *f = ftl_create(&fc, e, sizeof(e));
	if (!f) {
		snprintf(err, errlen, "%s %s: %s", run_opt(RUN_OPT_DEVICE), o->device, e);
		return NULL;
	}
	const struct ftl_geometry *g = ftl_get_geometry(f);
	if (!cfg->ssd_bytes)
		cfg->ssd_bytes = g->user_bytes;
	if (cfg->ssd_bytes > g->user_bytes) {
		snprintf(err, errlen,
		         "%s %llu bytes is larger than the %s drive (%llu bytes user)",
		         run_opt(RUN_OPT_SSD), (unsigned long long)cfg->ssd_bytes, o->device,
		         (unsigned long long)g->user_bytes);
		ftl_destroy(f);
		return NULL;
	}
	cfg->tbw_bytes = fc.dwpd * (double)g->user_bytes * 365.0 * fc.warranty_years;
	cfg->ssd_usd = cfg->ssd_usd_per_tb * (double)g->user_bytes / 1e12;
	cfg->ssd_pe = rated_pe;
	cfg->ssd_phys_bytes = (double)g->phys_bytes;
	cfg->use_ftl_timing = true;
	return f;
}

/* A pass's own id for x (pass >= 1): splitmix64's finalizer of x mixed with the pass, computed
 * modulo 2^bits. Each step (an odd multiplier, a right xorshift) is a bijection there, so
 * prefixes stay prefixes within the pass, a block id stays below 2^63 (KV_LINEAR_BIT is the
 * state's), and two passes share an id with probability ~ n^2 / 2^63 (1e-3 for 1e8 ids). */
static uint64_t pass_mix(uint64_t x, int pass, int bits)
{
	const uint64_t m = bits == 64 ? UINT64_MAX : (1ull << bits) - 1;
	uint64_t z = (x + (uint64_t)pass * 0x9e3779b97f4a7c15ull) & m;
	z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull) & m;
	z = ((z ^ (z >> 27)) * 0x94d049bb133111ebull) & m;
	return z ^ (z >> 31);
}

static uint64_t pass_session(uint64_t session, int pass)
{
	if (session == KV_NO_SESSION)
		return session;
	uint64_t z = pass_mix(session, pass, 64);
	return z == KV_NO_SESSION ? session : z; /* (2^-64: keep the trace's own) */
}

/* rq as pass `pass` of fresh ids sees it, its blocks rewritten into ids (room for them). */
static void pass_request(struct kv_request *rq, int pass, uint64_t *ids)
{
	for (uint32_t b = 0; b < rq->nblocks; b++)
		ids[b] = pass_mix(rq->blocks[b], pass, 63);
	rq->blocks = ids;
	rq->session = pass_session(rq->session, pass);
	rq->parent = pass_session(rq->parent, pass);
}

/* Has the run done its passes? After pass (0-based) ended: its fixed number, or the drive
 * written drive_writes times over (and, with until_steady, steady by the pass rule), or
 * (accelerate) end of life; never more than the cap. */
static bool passes_done(const struct kv_run_opts *o, struct ftl *f, const struct run_passes *pp,
                        int pass)
{
	bool until = o->drive_writes || o->until_steady;
	if (!until && !o->accelerate)
		return pass + 1 >= o->loops;
	if (pass + 1 >= (o->loops > 0 ? o->loops : KV_RUN_MAX_LOOPS_DEF))
		return true;
	if (!until || !f)
		return false;
	struct ftl_stats st;
	double spread;
	uint64_t user = ftl_get_geometry(f)->user_bytes;
	ftl_get_stats(f, &st);
	if ((double)st.host_write_bytes < o->drive_writes * (double)user)
		return false;
	return !o->until_steady || run_passes_steady(pp, user, &spread);
}

/* At the end of a pass of an accelerated run: the unscaled drive's extrapolation, once, at the
 * first pass that leaves the drive steady (the host rate so far stands for the whole run's). */
static void accel_extrapolate(struct kv_result *res, struct kvsim *s, struct ftl *f,
                              const struct run_passes *pp, double factor)
{
	const struct kv_stats *st = kvsim_stats(s);
	struct ftl_lifetime lt;
	double spread;
	if (!isnan(res->accel.extrapolated_days) ||
	    !run_passes_steady(pp, ftl_get_geometry(f)->user_bytes, &spread))
		return;
	uint64_t host = st->ssd_write_bytes[0] + st->ssd_write_bytes[1];
	double bpd = kv_bytes_per_day(host, st->t_last - st->t_first);
	ftl_lifetime_scaled(f, bpd, factor, &lt);
	res->accel.extrapolated_days = lt.erase_days;
}

static void kv_progress(const struct kv_run_opts *o, struct kvsim *s, struct ftl *f, int pass,
                        uint64_t request)
{
	struct kv_run_progress p = {.pass = pass + 1,
	                            .passes = o->loops > 0 ? o->loops : KV_RUN_MAX_LOOPS_DEF,
	                            .request = request,
	                            .requests = o->kt->n,
	                            .drive_writes_goal = o->drive_writes,
	                            .life_used = NAN,
	                            .until_steady = o->until_steady,
	                            .st = kvsim_stats(s)};
	if (f) {
		struct ftl_stats fs;
		ftl_get_stats(f, &fs);
		p.drive_writes = (double)fs.host_write_bytes / (double)ftl_get_geometry(f)->user_bytes;
		if (o->accelerate)
			p.life_used = fs.erase_mean / ftl_get_config(f)->pe_cycles;
	}
	o->progress(o->progress_arg, &p);
}

/* The passes. 0, or -1 with the failing request in err. With fresh_ids, each pass after the
 * first is a new population of sessions behaving as the trace's (new users, the same load):
 * the tier keeps meeting new content, as a deployment does, and a drive larger than the trace's
 * whole KV still reaches steady state; with the same ids, the passes replay the same content,
 * and what the previous pass left on the SSD is hit. A drive that reaches end of life ends the
 * run after the request during which it went read-only (res->eol). */
/* The passes' clock: each pass starts after the one before ended (toff), span is the latest
 * request time so far, ids the room for a pass's fresh ids (NULL: the trace's own). */
struct pass_clock {
	double toff, span;
	uint64_t *ids;
};

/* Room for the longest request's ids (pass_request()), or NULL out of memory. */
static uint64_t *pass_ids_new(const struct kv_trace *kt)
{
	uint64_t nmax = 1;
	for (uint64_t i = 0; i < kt->n; i++)
		if (kt->rq[i].nblocks > nmax)
			nmax = kt->rq[i].nblocks;
	return malloc(nmax * sizeof(uint64_t));
}

/* Request i of pass `pass` into s. KVSIM_OK, or kvsim_request()'s code with "TRACE: request N:
 * why" in err. */
static int pass_step(const struct kv_run_opts *o, struct kvsim *s, struct pass_clock *c, int pass,
                     uint64_t i, char *err, size_t errlen)
{
	char e[FG_ERR_LEN];
	struct kv_request rq = o->kt->rq[i];
	rq.t += c->toff;
	if (rq.t > c->span)
		c->span = rq.t;
	if (c->ids && pass)
		pass_request(&rq, pass, c->ids);
	int r = kvsim_request(s, &rq, e, sizeof(e));
	if (r)
		snprintf(err, errlen, "%s: request %llu: %s", o->trace, (unsigned long long)i + 1, e);
	return r;
}

static int kv_passes(const struct kv_run_opts *o, struct kvsim *s, struct ftl *f,
                     struct kv_result *res, struct run_passes *pp, char *err, size_t errlen)
{
	struct pass_clock c = {0};
	bool more = o->loops > 1 || o->drive_writes || o->until_steady || o->accelerate;

	if (o->fresh_ids && more && !(c.ids = pass_ids_new(o->kt))) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	int rc = 0;
	if (f && run_passes_note(pp, f)) {
		free(c.ids);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int pass = 0; !rc && !res->eol.reached; pass++) {
		res->passes = pass + 1;
		for (uint64_t i = 0; i < o->kt->n; i++) {
			int r = pass_step(o, s, &c, pass, i, err, errlen);
			if (r) {
				res->sink_failed = r == KVSIM_E_SINK;
				rc = -1;
				break;
			}
			if (f && ftl_eol_cause(f)) {
				run_eol_note(&res->eol, f, pass + 1, i + 1, "request");
				break;
			}
			if (o->progress && !((i + 1) & 1023))
				kv_progress(o, s, f, pass, i + 1);
		}
		if (rc || res->eol.reached)
			break;
		if (o->progress)
			kv_progress(o, s, f, pass, o->kt->n);
		if (f && run_passes_note(pp, f)) {
			snprintf(err, errlen, "out of memory");
			rc = -1;
			break;
		}
		if (o->accelerate && f)
			accel_extrapolate(res, s, f, pp, o->accelerate);
		if (passes_done(o, f, pp, pass))
			break;
		c.toff = c.span + 1;
	}
	free(c.ids);
	return rc;
}

/* The figures, from the finished simulator's counters st (their latencies become res's) and the
 * drive (NULL: none). */
static void kv_figures(struct kv_result *res, struct kv_stats *st, struct ftl *f)
{
	const struct kv_config *cfg = &res->cfg;

	res->st = *st;
	res->duration = st->t_last - st->t_first;
	if (st->nlat) {
		double sum = 0;
		for (uint64_t i = 0; i < st->nlat; i++)
			sum += st->lat[i];
		qsort(st->lat, st->nlat, sizeof(double), cmp_d);
		res->lat_mean = sum / st->nlat;
		res->lat_p99 = st->lat[(uint64_t)(0.99 * (st->nlat - 1))];
	}
	uint64_t host = st->ssd_write_bytes[0] + st->ssd_write_bytes[1];
	res->bpd = kv_bytes_per_day(host, res->duration);
	res->tbw_days = kv_tbw_days(cfg, res->bpd);
	res->cost_gpu = st->missed_tokens * kv_gpu_usd_per_token(cfg);
	if (f) {
		res->have_ftl = true;
		ftl_get_stats(f, &res->fs);
		ftl_get_attribution(f, &res->attr);
		if ((res->fdp = ftl_get_config(f)->fdp)) {
			ftl_fdp_stats(f, &res->fdp_st);
			res->fdp_nev = ftl_fdp_events(f, res->fdp_ev, FTL_FDP_EVENTS);
		}
		ftl_lifetime(f, res->bpd, &res->lt);
		res->drive_writes =
		        (double)res->fs.host_write_bytes / (double)ftl_get_geometry(f)->user_bytes;
		res->cost_ssd = kv_wear_usd(cfg, true, host, res->fs.nand_write_bytes);
	} else {
		res->cost_ssd = kv_wear_usd(cfg, false, host, 0);
	}
	st->lat = NULL; /* now res->st's */
}

/* The drive (*f, NULL without one) and the tier's config from it, and the checks on the run's
 * flags. 0, or RUN_E_INPUT with the reason in err. */
static int kv_setup(const struct kv_run_opts *o, const struct kv_policy *pol,
                    struct kv_config *cfg, struct ftl **f, char *err, size_t errlen)
{
	*f = NULL;
	if (o->drive) {
		if (!(*f = kv_drive(o, cfg, err, errlen)))
			return RUN_E_INPUT;
	} else {
		if (!cfg->ssd_bytes) {
			snprintf(err, errlen, "%s none needs %s SIZE", run_opt(RUN_OPT_DEVICE),
			         run_opt(RUN_OPT_SSD));
			return RUN_E_INPUT;
		}
		kv_cost_no_device(cfg);
	}
	/* a tier smaller than its smallest object holds nothing: a typo, not an experiment */
	uint64_t chunk = o->kt && o->kt->n ? (uint64_t)o->kt->rq[0].block_tokens *
	                                             cfg->model.full_kv_bytes_per_token
	                                   : 0,
	         state = cfg->model.linear_state_bytes;
	uint64_t least = chunk && state ? (chunk < state ? chunk : state) : chunk ? chunk : state;
	if (cfg->ssd_bytes < least) {
		snprintf(err, errlen,
		         "%s %llu bytes: smaller than the smallest object the tier stores (%s of "
		         "%s: %llu bytes), so it could hold nothing",
		         run_opt(RUN_OPT_SSD), (unsigned long long)cfg->ssd_bytes,
		         least == chunk ? "a KV block" : "a linear-attention state", cfg->model.name,
		         (unsigned long long)least);
		ftl_destroy(*f);
		*f = NULL;
		return RUN_E_INPUT;
	}
	bool until = o->drive_writes || o->until_steady || o->accelerate;
	const char *dw = run_opt(RUN_OPT_DRIVE_WRITES), *us = run_opt(RUN_OPT_UNTIL_STEADY),
	           *ac = run_opt(RUN_OPT_ACCELERATE);
	bool bad = true;
	if (o->loops < (until ? 0 : 1))
		snprintf(err, errlen, "%s must be >= 1",
		         run_opt(until ? RUN_OPT_MAX_LOOPS : RUN_OPT_LOOP));
	else if (o->drive_writes && !(o->drive_writes > 0 && o->drive_writes <= 1e6))
		snprintf(err, errlen, "%s must be in (0, 1e6]", dw);
	else if (until && !o->drive)
		snprintf(err, errlen, "%s, %s and %s need a drive (%s PRESET)", dw, us, ac,
		         run_opt(RUN_OPT_DEVICE));
	else if ((o->drive_writes || o->until_steady) && o->accelerate)
		snprintf(err, errlen, "%s and %s exclude each other (%s runs to end of life)", dw, ac,
		         ac);
	else if (pol->one_pass && (o->loops > 1 || until))
		snprintf(err, errlen, "policy %s knows one pass of the trace: drop %s, %s, %s and %s",
		         pol->name, run_opt(RUN_OPT_LOOP), dw, us, ac);
	else
		bad = false;
	if (bad) {
		ftl_destroy(*f);
		*f = NULL;
		return RUN_E_INPUT;
	}
	return RUN_OK;
}

/*
 * One simulation for several drives (kv_run_keep_sims()). The simulator decides nothing on
 * what its drive does: the drive's timing only makes the load latencies, and its wear only
 * the figures. So runs that differ only in the drive (FDP, TRIM, placement hints, another
 * rule for when to stop) share one simulation: the first records the tier's I/O (struct
 * kv_log) pass by pass, with the simulator's counters at each pass's end, and each run
 * replays that I/O into its own drive, calling the FTL as the simulator would have (the same
 * writes, reads and TRIMs, at the same times, in the same order), and takes the latencies
 * from its own drive's reads. A run that needs more passes than were recorded simulates the
 * next one. What a replay cannot stand for is run as before: a drive that reaches end of life
 * (its run ends inside a pass, where no counters were kept), a policy that reads the drive's
 * state (the log says so), the region allocator (its regions follow the drive's stripe and
 * streams), an offline policy, a store, --accelerate. tests/test_run.c holds each replayed run
 * to the run made alone, byte for byte.
 */
struct sim_pass {
	size_t start, end;          /* the pass's records in the log */
	struct kv_stats st;         /* the counters there (kvsim_finish_into()'d; no latencies) */
	struct kv_figure fig[KV_MAX_FIGURES];
	int nfig;
};

static struct {
	int on;
	bool have;       /* a simulation is kept, for the key below */
	bool live;       /* ... which replays cannot stand for (the policy read the drive) */
	/* the key: what the simulation depends on */
	const struct kv_trace *kt;
	uint64_t fp;
	char *trace, *params;
	const struct kv_policy *pol;
	struct kv_config cfg;
	bool fresh_ids;
	/* the simulation, after npass passes */
	struct kvsim *s;
	struct kv_log log;
	struct sim_pass *pass;
	uint64_t npass, pcap;
	struct pass_clock clock;
	char fail[FG_ERR_LEN + 256]; /* the request that failed in pass npass, or "" */
	bool partial; /* the log outgrew its budget: the passes before the last are gone */
} sk;

/* The memory the kernel could give without swapping (MemAvailable), or the free pages. */
static uint64_t mem_available(void)
{
	FILE *m = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;
	bool found = false;
	while (m && !found && fgets(line, sizeof(line), m))
		found = sscanf(line, "MemAvailable: %llu kB", &kb) == 1;
	if (m)
		fclose(m);
	long avail = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	return found ? kb << 10 : avail > 0 && size > 0 ? (uint64_t)avail * (uint64_t)size : 0;
}

/* The log's most bytes: an eighth of the memory available at the time, at most 1/64 of the
 * machine's (360 MB on 23 GB: two batches beside two drives of 4 TB, 10.6 GB each, leave little
 * room), or FEMU_GANDALF_SIM_LOG_MAX bytes. A simulation whose log outgrows it serves the run
 * that made it only (each pass's log dropped once replayed): the next run simulates anew. */
static uint64_t sim_log_budget(void)
{
	const char *env = getenv("FEMU_GANDALF_SIM_LOG_MAX");
	if (env && *env)
		return strtoull(env, NULL, 10);
	long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
	uint64_t most = pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 64 : 256ull << 20;
	uint64_t avail = mem_available() / 8;
	return avail < most ? avail : most;
}

static uint64_t sims_made;

uint64_t kv_run_sims_made(void)
{
	return sims_made;
}

/* Forget the kept simulation (but not whether to keep one). */
static void sim_drop(void)
{
	int on = sk.on;
	kvsim_free(sk.s);
	kv_log_free(&sk.log);
	free(sk.pass);
	free(sk.clock.ids);
	free(sk.trace);
	free(sk.params);
	memset(&sk, 0, sizeof(sk));
	sk.on = on;
}

void kv_run_keep_sims(bool on)
{
	if (on)
		sk.on++;
	else if (sk.on && !--sk.on)
		sim_drop();
}

/* A fingerprint of the requests: the keep's trace may be reloaded at the same address. */
static uint64_t trace_fp(const struct kv_trace *kt)
{
	uint64_t h = 0xcbf29ce484222325ull ^ kt->n;
	for (uint64_t i = 0; i < kt->n; i++) {
		const struct kv_request *rq = &kt->rq[i];
		uint64_t t;
		memcpy(&t, &rq->t, sizeof(t));
		uint64_t v[6] = {t, rq->nblocks, rq->input_tokens, rq->block_tokens, rq->session,
		                 rq->nblocks ? rq->blocks[0] ^ rq->blocks[rq->nblocks - 1] : 0};
		for (int k = 0; k < 6; k++)
			h = (h ^ v[k]) * 0x100000001b3ull;
	}
	return h;
}

/* The tier's settings the simulation depends on: all of them but the drive's side of the
 * I/O (TRIM, streams, the drive's own timing). A field added to struct kv_config must be added
 * here, or to the list of what the replay takes from the run's own config. */
static bool sim_cfg_same(const struct kv_config *a, const struct kv_config *b)
{
	_Static_assert(sizeof(void *) != 8 || sizeof(struct kv_config) == 496,
	               "struct kv_config changed: see sim_cfg_same()");
	return !strcmp(a->model.name, b->model.name) &&
	       a->model.full_kv_bytes_per_token == b->model.full_kv_bytes_per_token &&
	       a->model.linear_state_bytes == b->model.linear_state_bytes && a->alloc == b->alloc &&
	       a->dram_bytes == b->dram_bytes && a->ssd_bytes == b->ssd_bytes &&
	       a->ssd_gbps == b->ssd_gbps && a->pcie_gbps == b->pcie_gbps &&
	       a->prefill_tokens_per_s == b->prefill_tokens_per_s &&
	       a->gpu_usd_per_hour == b->gpu_usd_per_hour && a->ssd_usd == b->ssd_usd &&
	       a->ssd_usd_per_tb == b->ssd_usd_per_tb && a->tbw_bytes == b->tbw_bytes &&
	       a->ssd_phys_bytes == b->ssd_phys_bytes && a->ssd_pe == b->ssd_pe &&
	       a->region_bytes == b->region_bytes && a->readmit == b->readmit &&
	       a->slot_header == b->slot_header && a->slot_align[0] == b->slot_align[0] &&
	       a->slot_align[1] == b->slot_align[1] && a->slot_fifo == b->slot_fifo &&
	       a->slot_fresh_first == b->slot_fresh_first;
}

/* The kept simulation for this run, made anew when the key differs. 0, or -1 (no memory or
 * the simulator refused its config: the run goes alone and says why). */
static int sim_take(const struct kv_run_opts *o, const struct kv_policy *pol,
                    const struct kv_config *cfg, const char *params)
{
	uint64_t fp = trace_fp(o->kt);
	if (sk.have && sk.kt == o->kt && sk.fp == fp && !strcmp(sk.trace, o->trace) &&
	    sk.pol == pol && !strcmp(sk.params, params) && sk.fresh_ids == o->fresh_ids &&
	    sim_cfg_same(&sk.cfg, cfg))
		return 0;
	sim_drop();
	char e[FG_ERR_LEN];
	struct kv_config c = *cfg;
	c.use_ftl_timing = false; /* (no drive: the latencies come from the replays) */
	sk.s = kvsim_new(&c, pol, params, NULL, NULL, e, sizeof(e));
	sk.trace = strdup(o->trace);
	sk.params = strdup(params);
	if (!sk.s || !sk.trace || !sk.params) {
		sim_drop();
		return -1;
	}
	kvsim_set_log(sk.s, &sk.log);
	sims_made++;
	sk.have = true;
	sk.kt = o->kt;
	sk.fp = fp;
	sk.pol = pol;
	sk.cfg = *cfg;
	sk.fresh_ids = o->fresh_ids;
	return 0;
}

/* Simulate pass sk.npass, recording it. 0, or -1 out of memory (the run goes alone); a
 * failing request leaves its message in sk.fail and the pass recorded up to it. */
static int sim_pass_more(const struct kv_run_opts *o)
{
	const uint64_t pass = sk.npass;
	if (vec_reserve(sk.pass, sk.pcap, pass + 1))
		return -1;
	if (o->fresh_ids && pass && !sk.clock.ids && !(sk.clock.ids = pass_ids_new(o->kt)))
		return -1;
	for (uint64_t i = 0; i < o->kt->n; i++)
		if (pass_step(o, sk.s, &sk.clock, (int)pass, i, sk.fail, sizeof(sk.fail)))
			break;
	struct sim_pass *p = &sk.pass[pass];
	p->start = pass ? sk.pass[pass - 1].end : 0;
	p->end = sk.log.n;
	p->st = *kvsim_stats(sk.s);
	p->st.lat = NULL;
	p->st.nlat = p->st.latcap = 0;
	kvsim_finish_into(sk.s, &p->st);
	p->nfig = kvsim_policy_figures(sk.s, p->fig);
	sk.npass++;
	sk.clock.toff = sk.clock.span + 1;
	return sk.log.oom ? -1 : 0;
}

/* A replay in progress: the time of the request being replayed, when its SSD reads complete,
 * the requests replayed, the I/Os the drive refused, and the load latencies (in st). */
struct replay {
	uint64_t now, t_done, req, errors;
	struct kv_stats st;
};

/* Pass `pass` of the kept log into f, as kvsim_request() would have called the FTL. 0, or 1
 * when the run must go alone: its drive reached end of life inside the pass (the run alone ends
 * after that request), or no memory for a latency. */
static int replay_pass(const struct kv_run_opts *o, const struct kv_config *cfg, struct ftl *f,
                       int pass, struct replay *rp)
{
	for (size_t i = sk.pass[pass].start, end = sk.pass[pass].end; i < end;) {
		struct kv_log_rec r;
		i = kv_log_next(&sk.log, i, &r);
		switch (r.op) {
		case KV_LOG_REQ:
			if (rp->req && ftl_eol_cause(f))
				return 1;
			rp->now = rp->t_done = r.now;
			if (!(++rp->req & 1023) && o->progress)
				kv_progress(o, sk.s, f, pass, rp->req % o->kt->n);
			break;
		case KV_LOG_WRITE:
			ftl_set_class(f, kv_wear_class(r.kind));
			rp->errors += ftl_write(f, r.lba, r.bytes, kv_stream(cfg, (int)r.kind, r.session),
			                        rp->now, NULL) != 0;
			break;
		case KV_LOG_READ: {
			uint64_t t;
			if (ftl_read(f, r.lba, r.bytes, rp->now, &t))
				rp->errors++;
			else if (t > rp->t_done)
				rp->t_done = t;
			break;
		}
		case KV_LOG_TRIM:
			rp->errors += cfg->trim && ftl_trim(f, r.lba, r.bytes, rp->now, NULL);
			break;
		case KV_LOG_LOAD: { /* (account() in kvsim.c, with this drive's reads) */
			double xfer = (rp->t_done - rp->now) / 1e9 + r.rest;
			struct kv_stats *st = &rp->st;
			if (vec_reserve(st->lat, st->latcap, st->nlat + 1))
				return 1;
			st->lat[st->nlat++] = xfer > r.recompute ? xfer : r.recompute;
			break;
		}
		}
	}
	return ftl_eol_cause(f) ? 1 : 0;
}

/* kv_run()'s passes on the kept simulation, replayed into f. RUN_OK with res filled,
 * RUN_E_FAIL (a request failed, as it would alone), or 1: this run must be made alone. */
static int kv_replay(const struct kv_run_opts *o, const struct kv_policy *pol, const char *params,
                     struct kv_result *res, struct ftl *f, struct run_passes *pp, char *err,
                     size_t errlen)
{
	if (sim_take(o, pol, &res->cfg, params) || sk.live || run_passes_note(pp, f))
		return 1;
	struct replay rp = {0};
	int pass = 0, rc = 1;
	for (;; pass++) {
		res->passes = pass + 1;
		if ((uint64_t)pass == sk.npass && !*sk.fail && sim_pass_more(o)) {
			sim_drop(); /* (out of memory: no use keeping it) */
			goto out;
		}
		if (sk.log.feedback) { /* a policy that reads the drive: alone, always */
			sk.live = true;
			goto out;
		}
		if (replay_pass(o, &res->cfg, f, pass, &rp))
			goto out;
		if ((uint64_t)pass + 1 == sk.npass && *sk.fail) { /* as the run alone fails */
			snprintf(err, errlen, "%s", sk.fail);
			rc = RUN_E_FAIL;
			goto out;
		}
		if (o->progress)
			kv_progress(o, sk.s, f, pass, o->kt->n);
		if (run_passes_note(pp, f))
			goto out;
		if (passes_done(o, f, pp, pass))
			break;
		if ((uint64_t)pass + 1 == sk.npass && sk.log.n * sizeof(uint64_t) > sim_log_budget()) {
			sk.partial = true; /* (this run needs no pass before the next) */
			free(sk.log.w);
			sk.log.w = NULL;
			sk.log.n = sk.log.cap = 0;
			sk.pass[pass].end = 0;
		}
	}
	struct kv_stats st = sk.pass[pass].st;
	st.lat = rp.st.lat, st.nlat = rp.st.nlat, st.latcap = rp.st.latcap;
	st.ftl_errors = rp.errors;
	kv_figures(res, &st, f); /* (res owns the latencies now) */
	rp.st.lat = NULL;
	res->nfig = sk.pass[pass].nfig;
	memcpy(res->fig, sk.pass[pass].fig, sizeof(res->fig));
	res->region_bytes = kvsim_region_bytes(sk.s);
	res->replayed = true;
	rc = RUN_OK;
out:
	free(rp.st.lat);
	if (sk.partial) /* (the next run could not replay the passes before) */
		sim_drop();
	return rc;
}

/* May this run replay a kept simulation? */
static bool kv_shareable(const struct kv_run_opts *o, const struct kv_policy *pol)
{
	return sk.on && o->drive && o->kt && !o->sink && !o->accelerate && !pol->prepare &&
	       o->cfg.alloc != KV_ALLOC_REGION;
}

int kv_run_check(const struct kv_run_opts *o, const struct kv_policy *pol, const char *params,
                 char *err, size_t errlen)
{
	char e[FG_ERR_LEN];
	struct kv_config cfg = o->cfg;
	struct ftl *f;
	int rc = kv_setup(o, pol, &cfg, &f, err, errlen);
	if (!rc && !pol->prepare) { /* (an offline policy's needs its pass to be made) */
		struct kvsim *s = kvsim_new(&cfg, pol, params, NULL, f, e, sizeof(e));
		if (!s) {
			snprintf(err, errlen, "%s", e);
			rc = RUN_E_INPUT;
		}
		kvsim_free(s);
	}
	ftl_destroy(f);
	return rc;
}

/* res before a run: what the options say */
static void kv_result_init(struct kv_result *res, const struct kv_run_opts *o,
                           const struct kv_policy *pol, const char *params)
{
	memset(res, 0, sizeof(*res));
	res->trace = o->trace;
	res->device = o->device;
	res->policy = pol->name;
	snprintf(res->params, sizeof(res->params), "%s", params ? params : "");
	res->cfg = o->cfg;
	res->peak_active = o->peak_active;
	res->skipped = o->kt ? o->kt->skipped : 0;
	res->more_json = o->more_json;
	res->more_arg = o->more_arg;
	res->drive_writes_target = o->drive_writes;
	res->until_steady = o->until_steady;
	res->accel.factor = o->accelerate;
	res->accel.eol_days = res->accel.extrapolated_days = NAN;
}

/* The run on the kept simulation (kv_replay()): as kv_run(), or 1 when it must go alone. */
static int kv_run_replayed(const struct kv_run_opts *o, const struct kv_policy *pol,
                           struct kv_result *res, char *err, size_t errlen)
{
	struct ftl *f;
	int rc = kv_setup(o, pol, &res->cfg, &f, err, errlen);
	if (rc)
		return rc;
	double t0 = wall_seconds();
	struct run_passes pp = {0};
	rc = kv_replay(o, pol, res->params, res, f, &pp, err, errlen);
	if (rc == RUN_OK) {
		res->wall = wall_seconds() - t0;
		res->lt.steady = run_passes_steady(&pp, ftl_get_geometry(f)->user_bytes,
		                                   &res->pass_waf_spread);
	}
	run_passes_free(&pp);
	ftl_destroy(f);
	return rc;
}

/* The run with its own simulation. */
static int kv_run_alone(const struct kv_run_opts *o, const struct kv_policy *pol,
                        struct kv_result *res, char *err, size_t errlen)
{
	char e[FG_ERR_LEN];
	struct ftl *f = NULL;
	int rc = kv_setup(o, pol, &res->cfg, &f, err, errlen);
	if (rc)
		return rc;
	struct kvsim *s = kvsim_new(&res->cfg, pol, res->params,
	                            pol == o->prepared_for ? o->prepared : NULL, f, e, sizeof(e));
	if (!s) {
		snprintf(err, errlen, "%s", e);
		ftl_destroy(f);
		return RUN_E_INPUT;
	}
	if (o->sink)
		kvsim_set_sink(s, o->sink);
	res->accel.pe_cycles = f && o->accelerate ? ftl_get_config(f)->pe_cycles : 0;
	double t0 = wall_seconds();
	struct run_passes pp = {0};
	rc = kv_passes(o, s, f, res, &pp, err, errlen) ? RUN_E_FAIL : RUN_OK;
	if (!rc && o->accelerate && !res->eol.reached) {
		snprintf(err, errlen, "%s %g: end of life not reached in %d passes (raise %s or F)",
		         run_opt(RUN_OPT_ACCELERATE), o->accelerate, res->passes,
		         run_opt(RUN_OPT_MAX_LOOPS));
		rc = RUN_E_FAIL;
	}
	if (!rc) {
		res->wall = wall_seconds() - t0;
		kvsim_finish(s);
		kv_figures(res, kvsim_stats(s), f);
		res->nfig = kvsim_policy_figures(s, res->fig);
		if (f) /* (the drive's own rule is the FTL's; a run in passes is judged by passes) */
			res->lt.steady = run_passes_steady(&pp, ftl_get_geometry(f)->user_bytes,
			                                   &res->pass_waf_spread);
		res->region_bytes = kvsim_region_bytes(s);
		if (o->accelerate) /* host bytes to end of life at the trace's rate, x F */
			res->accel.eol_days = res->lt.elapsed_days * o->accelerate;
	}
	run_passes_free(&pp);
	kvsim_free(s);
	ftl_destroy(f);
	return rc;
}

int kv_run(const struct kv_run_opts *o, const struct kv_policy *pol, const char *params,
           struct kv_result *res, char *err, size_t errlen)
{
	kv_result_init(res, o, pol, params);
	if (kv_shareable(o, pol)) {
		int rc = kv_run_replayed(o, pol, res, err, errlen);
		if (rc != 1)
			return rc;
		kv_result_init(res, o, pol, params); /* alone after all, on a new drive */
	}
	return kv_run_alone(o, pol, res, err, errlen);
}

void kv_result_free(struct kv_result *res)
{
	free(res->st.lat);
	res->st.lat = NULL;
}

double kv_result_miss_ratio(const struct kv_result *res)
{
	const struct kv_stats *st = &res->st;
	return st->prefix_blocks ? 1 - (double)st->hit_blocks / st->prefix_blocks : 0;
}

static double share(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / whole : 0;
}

/*
 * The drive's wear charged to the tier's two kinds of object (docs/output.md, "wear"): the
 * drive's attribution with the kinds as its classes (1 full-attention chunks, 2 linear states),
 * then per kind the figures that explain a WAF: NAND bytes per host byte of the kind, per object
 * written and per prompt token of the trace, and the GC copy bytes its evictions (TRIM) and
 * overwrites caused, per object evicted.
 */
static void wear_json(const struct kv_result *r, struct json_out *j)
{
	static const char *const names[FTL_CLASSES] = {NULL, "full", "linear", NULL};
	const struct ftl_attribution *a = &r->attr;
	const struct kv_stats *st = &r->st;
	ftl_attribution_json(a, names, j);
	jout_object(j, "wear_per_kind", JOUT_BLOCK);
	for (int k = 0; k < 2; k++) {
		const uint64_t *p = a->prog[1 + k], *cause = a->gc_cause[1 + k];
		uint64_t nand = p[FTL_ATTR_HOST] + p[FTL_ATTR_GC] + p[FTL_ATTR_WL];
		uint64_t caused = cause[FTL_ATTR_TRIMMED] + cause[FTL_ATTR_OVERWRITTEN];
		jout_object(j, names[1 + k], JOUT_INLINE);
		jout_u64(j, "nand_program_bytes", nand);
		jout_num(j, "nand_bytes_per_host_byte", "%.4f", share(nand, p[FTL_ATTR_HOST]));
		jout_num(j, "nand_bytes_per_object_written", "%.6g", share(nand, st->ssd_writes[k]));
		jout_num(j, "nand_bytes_per_prompt_token", "%.6g", share(nand, st->prefix_tokens));
		jout_u64(j, "evictions", st->ssd_evictions_kind[k]);
		jout_u64(j, "gc_copy_bytes_caused", caused);
		jout_num(j, "gc_copy_bytes_per_eviction", "%.6g", share(caused, st->ssd_evictions_kind[k]));
		jout_end(j);
	}
	jout_end(j);
}

/* The run's setting and the cache's counters. */
static void json_counts(const struct kv_result *r, struct json_out *j)
{
	const struct kv_stats *st = &r->st;
	const struct kv_config *c = &r->cfg;

	jout_str(j, "trace", r->trace);
	jout_u64(j, "skipped_records", r->skipped);
	jout_str(j, "model", c->model.name);
	jout_str(j, "policy", r->policy);
	jout_str(j, "params", r->params);
	jout_str(j, "device", r->device);
	jout_u64(j, "dram_bytes", c->dram_bytes);
	jout_u64(j, "ssd_bytes", c->ssd_bytes);
	jout_str(j, "alloc", c->alloc == KV_ALLOC_LOG      ? "log"
	                     : c->alloc == KV_ALLOC_REGION ? "region"
	                                                   : "slots");
	jout_bool(j, "trim", c->trim);
	if (c->session_streams) { /* (only then: the other outputs are as they were) */
		char sv[64];
		snprintf(sv, sizeof(sv), "%ssession:%u", c->streams_by_kind ? "kind+" : "",
		         c->session_streams);
		jout_str(j, "streams", sv);
	} else {
		jout_str(j, "streams", c->streams_by_kind ? "kind" : "none");
	}
	jout_u64(j, "requests", st->requests);
	jout_i64(j, "passes", r->passes);
	jout_num(j, "miss_ratio", "%.6f", kv_result_miss_ratio(r));
	jout_num(j, "token_miss_ratio", "%.6f", share(st->missed_tokens, st->prefix_tokens));
	jout_num(j, "request_miss_ratio", "%.6f", share(st->missed_requests, st->requests));
	jout_object(j, "hits", JOUT_INLINE);
	jout_u64(j, "dram_full", st->hits[0][0]);
	jout_u64(j, "dram_linear", st->hits[0][1]);
	jout_u64(j, "ssd_full", st->hits[1][0]);
	jout_u64(j, "ssd_linear", st->hits[1][1]);
	jout_end(j);
	jout_u64(j, "ssd_write_bytes", st->ssd_write_bytes[0] + st->ssd_write_bytes[1]);
	jout_object(j, "ssd_write_bytes_by_kind", JOUT_INLINE);
	jout_u64(j, "full", st->ssd_write_bytes[0]);
	jout_u64(j, "linear", st->ssd_write_bytes[1]);
	jout_end(j);
	jout_object(j, "ssd_objects_written", JOUT_INLINE);
	jout_u64(j, "full", st->ssd_writes[0]);
	jout_u64(j, "linear", st->ssd_writes[1]);
	jout_end(j);
	jout_object(j, "ssd_written_hit_share", JOUT_INLINE);
	jout_num(j, "full", "%.4f", share(st->ssd_written_hit[0], st->ssd_writes[0]));
	jout_num(j, "linear", "%.4f", share(st->ssd_written_hit[1], st->ssd_writes[1]));
	jout_end(j);
	jout_u64(j, "ssd_read_bytes", st->ssd_read_bytes);
	jout_u64(j, "ssd_evictions", st->ssd_evictions);
	jout_u64(j, "dram_drops", st->dram_drops);
	jout_u64(j, "unreachable_freed", st->unreachable);
	jout_u64(j, "not_admitted", st->not_admitted);
	jout_u64(j, "admission_refused", st->refused);
	if (c->alloc == KV_ALLOC_REGION) { /* (only here: the other allocators' output is as it was) */
		jout_u64(j, "region_bytes", r->region_bytes);
		jout_num(j, "readmit", "%g", c->readmit);
		jout_u64(j, "regions_cleaned", st->regions_cleaned);
		jout_u64(j, "readmits", st->readmits);
		jout_u64(j, "readmit_bytes", st->readmit_bytes);
	}
}

/* The drive: WAF and lifetimes (null when undefined: no device, or nothing written). */
static void json_drive(const struct kv_result *r, struct json_out *j)
{
	if (r->have_ftl && r->fs.host_write_bytes) {
		jout_num(j, "waf", "%.4f", r->fs.waf_window);
		jout_num(j, "waf_cumulative", "%.4f", r->fs.waf_cumulative);
		jout_u64(j, "erases", r->fs.erases);
		jout_num(j, "drive_writes", "%.4f", r->drive_writes);
		jout_bool(j, "steady", r->lt.steady);
		jout_num(j, "pass_waf_spread", "%.4f", r->pass_waf_spread);
	} else if (r->have_ftl) { /* nothing written: WAF is undefined, never steady */
		jout_null(j, "waf");
		jout_null(j, "waf_cumulative");
		jout_u64(j, "erases", r->fs.erases);
		jout_num(j, "drive_writes", "%.4f", 0.0);
		jout_bool(j, "steady", false);
		jout_null(j, "pass_waf_spread");
	} else { /* no drive: nothing to be steady */
		jout_null(j, "waf");
		jout_null(j, "steady");
	}
	/* no SSD writes: infinite lifetimes, null in JSON */
	jout_object(j, "lifetime_days", JOUT_INLINE);
	jout_num(j, "tbw", "%.6g", r->tbw_days);
	if (r->have_ftl) {
		jout_num(j, "naive_pe", "%.6g", r->lt.naive_pe_days);
		jout_num(j, "erase", "%.6g", r->lt.erase_days);
		jout_num(j, "erase_cumulative", "%.6g", r->lt.erase_cumulative_days);
		jout_str(j, "eol_reason", r->lt.eol_reason);
		jout_str(j, "basis", r->lt.basis);
		jout_bool(j, "steady", r->lt.steady);
	} else {
		jout_null(j, "naive_pe");
		jout_null(j, "erase");
		jout_null(j, "erase_cumulative");
		jout_str(j, "basis", "tbw-only");
		jout_null(j, "steady");
	}
	jout_end(j);
	jout_u64(j, "ftl_errors", r->st.ftl_errors);
	if (r->fdp) /* (only then: the output without FDP is as it was) */
		ftl_fdp_json(&r->fdp_st, r->fdp_ev, r->fdp_nev, j);
	if (r->have_ftl)
		wear_json(r, j);
	run_eol_json(&r->eol, j); /* (null without a drive: it cannot die) */
	if (r->drive_writes_target) {
		jout_num(j, "drive_writes_target", "%.6g", r->drive_writes_target);
		jout_bool(j, "drive_writes_reached", r->drive_writes >= r->drive_writes_target);
	}
	if (r->until_steady)
		jout_bool(j, "until_steady", true);
	if (r->accel.factor)
		run_accel_json(&r->accel, j);
}

void kv_result_json(const struct kv_result *r, struct json_out *j)
{
	const struct kv_stats *st = &r->st;

	jout_object(j, NULL, JOUT_BLOCK);
	json_counts(r, j);
	jout_num(j, "trace_duration_s", "%.3f", r->duration);
	jout_num(j, "ssd_host_bytes_per_day", "%.6g", r->bpd);
	json_drive(r, j);
	jout_str(j, "ssd_read_timing", r->have_ftl ? "emulated-ssd" : "bandwidth-model");
	jout_object(j, "load_latency_s", JOUT_INLINE);
	jout_num(j, "mean", "%.6g", r->lat_mean);
	jout_num(j, "p99", "%.6g", r->lat_p99);
	jout_end(j);
	double per = 1000.0 / (double)st->requests;
	jout_object(j, "cost_per_1k_requests", JOUT_INLINE);
	jout_num(j, "gpu_recompute", "%.6g", r->cost_gpu * per);
	jout_num(j, "ssd_wear", "%.6g", r->cost_ssd * per);
	jout_num(j, "total", "%.6g", (r->cost_gpu + r->cost_ssd) * per);
	jout_end(j);
	jout_u64(j, "dram_peak_bytes", st->dram_peak);
	jout_u64(j, "ssd_peak_bytes", st->ssd_peak);
	if (r->peak_active) {
		jout_u64(j, "peak_active_kv_bytes", r->peak_active);
		jout_num(j, "dram_share_of_peak_active", "%.6g",
		         (double)r->cfg.dram_bytes / (double)r->peak_active);
	}
	if (r->nfig) {
		jout_object(j, "policy_figures", JOUT_INLINE);
		for (int i = 0; i < r->nfig; i++)
			jout_num(j, r->fig[i].name, "%.6g", r->fig[i].value);
		jout_end(j);
	}
	jout_num(j, "wall_s", "%.3f", r->wall);
	if (r->more_json)
		r->more_json(r->more_arg, j);
	jout_end(j);
}

void kv_result_csv_header(FILE *out)
{
	fprintf(out, "policy,params,requests,miss_ratio,ssd_write_bytes,ssd_write_full_bytes,"
	             "ssd_write_linear_bytes,ssd_read_bytes,hit_share_full,hit_share_linear,waf,"
	             "lifetime_tbw_days,lifetime_naive_pe_days,lifetime_erase_days,latency_mean_s,"
	             "latency_p99_s,cost_per_1k_usd,wall_s,token_miss_ratio,peak_active_kv_bytes,"
	             "policy_figures,request_miss_ratio,drive_writes,steady,"
	             "lifetime_erase_cumulative_days,lifetime_basis,eol,passes\n");
}

/* s as one quoted CSV field (RFC 4180: quotes doubled), so a comma or a quote stays inside it */
static void csv_quoted(const char *s, FILE *out)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

void kv_result_csv_row(const struct kv_result *r, FILE *out)
{
	const struct kv_stats *st = &r->st;

	fprintf(out, "%s,", r->policy); /* a policy name: [a-z-] */
	csv_quoted(r->params, out);
	fprintf(out, ",%llu,%.6f,%llu,%llu,%llu,%llu,%.4f,%.4f,", (unsigned long long)st->requests,
	        kv_result_miss_ratio(r),
	        (unsigned long long)(st->ssd_write_bytes[0] + st->ssd_write_bytes[1]),
	        (unsigned long long)st->ssd_write_bytes[0],
	        (unsigned long long)st->ssd_write_bytes[1], (unsigned long long)st->ssd_read_bytes,
	        share(st->ssd_written_hit[0], st->ssd_writes[0]),
	        share(st->ssd_written_hit[1], st->ssd_writes[1]));
	if (r->have_ftl && r->fs.host_write_bytes)
		fprintf(out, "%.4f,%.6g,%.6g,%.6g,", r->fs.waf_window, r->tbw_days,
		        r->lt.naive_pe_days, r->lt.erase_days);
	else if (r->have_ftl) /* nothing written: WAF undefined, lifetimes infinite */
		fprintf(out, ",%.6g,%.6g,%.6g,", r->tbw_days, r->lt.naive_pe_days,
		        r->lt.erase_days);
	else
		fprintf(out, ",%.6g,,,", r->tbw_days);
	fprintf(out, "%.6g,%.6g,%.6g,%.3f,%.6f,", r->lat_mean, r->lat_p99,
	        (r->cost_gpu + r->cost_ssd) * 1000.0 / (double)st->requests, r->wall,
	        share(st->missed_tokens, st->prefix_tokens));
	if (r->peak_active)
		fprintf(out, "%llu", (unsigned long long)r->peak_active);
	char figs[512] = "";
	for (int i = 0; i < r->nfig; i++)
		snprintf(figs + strlen(figs), sizeof(figs) - strlen(figs), "%s%s=%.6g", i ? ";" : "",
		         r->fig[i].name, r->fig[i].value);
	fputc(',', out);
	csv_quoted(figs, out);
	fprintf(out, ",%.6f,", share(st->missed_requests, st->requests));
	if (r->have_ftl)
		fprintf(out, "%.4f,%d,%.6g,%s,%d,", r->drive_writes, r->lt.steady,
		        r->lt.erase_cumulative_days, r->lt.basis, r->eol.reached);
	else
		fprintf(out, ",0,,,0,");
	fprintf(out, "%d\n", r->passes);
	fflush(out);
}
