/*
 * run.h - the one public header of femu-gandalf/run/: experiments on the emulated SSD as a
 * library (docs/run.md).
 *
 * The CLI's cmd_*.c files parse flags and print; the work they drive lives here so that tests,
 * the sweep runner, the KV store and a Python binding can call it too:
 *   - ssd_run(): a synthetic workload on one drive (precondition, SNIA steady-state rounds, a
 *     fixed amount of writes or accelerated aging to end of life), filling a struct ssd_report;
 *   - ssd_report_json(): that report as the JSON object `femu-gandalf ssd --json` prints;
 *   - blk_run() and blk_report_json(): a block trace replayed on one drive (`blkreplay` in
 *     process: precondition, --loop N passes or until steady), through a caller's trace source;
 *   - kv_run() and kv_result_json() / kv_result_csv_row(): one KV-cache tier run (`kv`: one
 *     policy at one parameter point over a loaded KV-request trace, --loop N passes), with its
 *     load latency, cost and lifetimes;
 *   - run_is_steady() and struct run_steady: the SNIA PTS steady-state rule, for any series of
 *     per-round (or per-pass) WAFs.
 * Plain C11 on hw/ftl, common/json and the KV simulator (femu-gandalf/kv): no GOption, nothing
 * printed but by the writers, which take a json_out or a FILE *. Errors are one line in the
 * caller's buffer, naming the option at fault ("--writes -3: must be >= 0").
 */
#ifndef FG_RUN_H
#define FG_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ftl.h"
#include "kvsim.h"

struct json_out;

/* What ssd_run(), blk_run() and kv_run() return. Each maps to one exit code of the CLI
 * (docs/output.md). */
enum run_status {
	RUN_OK = 0,
	RUN_E_INPUT = -1,     /* bad option or input: unknown workload, bad snapshot (exit 2) */
	RUN_E_FAIL = -2,      /* the run failed: a write, the snapshot save, no EOL (exit 1) */
	RUN_E_INVARIANT = -3, /* opts.check found a broken FTL invariant (exit 3) */
};

/*
 * The options the run layer checks, as its messages name them: run_opt() is the option's key
 * ("max-loops") unless the front-end gave its own spelling of every option (RUN_OPT_N strings,
 * indexed by enum run_opt; the CLI gives "--max-loops"). opt.c.
 */
enum run_opt {
	RUN_OPT_ACCELERATE, RUN_OPT_BS, RUN_OPT_DEVICE, RUN_OPT_DRIVE_WRITES, RUN_OPT_DWPD,
	RUN_OPT_IODEPTH, RUN_OPT_LOOP, RUN_OPT_MAX_LOOPS, RUN_OPT_MAX_ROUNDS, RUN_OPT_PRECONDITION,
	RUN_OPT_PRESET, RUN_OPT_RAMP, RUN_OPT_RATE, RUN_OPT_ROUND, RUN_OPT_RUNTIME, RUN_OPT_RW,
	RUN_OPT_SAVE_SNAPSHOT, RUN_OPT_SSD, RUN_OPT_STEADY_RULE, RUN_OPT_UNTIL_STEADY,
	RUN_OPT_WORKLOAD, RUN_OPT_WRAP, RUN_OPT_WRITES, RUN_OPT_ZONE_STREAMS,
	RUN_OPT_N
};
const char *run_opt(enum run_opt o);
const char *run_opt_key(enum run_opt o);
void run_opt_spelling(const char *const *spelled); /* NULL: back to the keys */

/*
 * SNIA PTS steady state: over the last RUN_STEADY_WINDOW rounds, max - min of the WAF is within
 * RUN_STEADY_RANGE of the mean, and the excursion of the least-squares line across the window
 * (slope x (n - 1)) within RUN_STEADY_SLOPE of the mean.
 */
#define RUN_STEADY_WINDOW 5
#define RUN_STEADY_RANGE 0.20
#define RUN_STEADY_SLOPE 0.10
#define RUN_STEADY_MAX_ROUNDS 1024
/*
 * The tight rule, for WAF (docs/run.md): SNIA's 20%/10% bounds pass while the window's WAF still
 * drifts by a few percent, so a WAF quoted at SNIA steady state can sit 1% above where the
 * drive settles. Tight: over the last RUN_TIGHT_WINDOW rounds, max - min within RUN_TIGHT_RANGE
 * of the mean and the least-squares excursion within RUN_TIGHT_SLOPE of the mean.
 */
#define RUN_TIGHT_WINDOW 10
#define RUN_TIGHT_RANGE 0.03
#define RUN_TIGHT_SLOPE 0.005

/* The rule over w[0..n-1] (n >= 2); the mean goes to *mean whatever the verdict. */
bool run_is_steady(const double *w, int n, double *mean);
/* The tight rule over w[0..n-1] (n >= 2), likewise. */
bool run_is_steady_tight(const double *w, int n, double *mean);
/* Which rule ends a series (both are always evaluated and reported). */
enum run_steady_rule { RUN_RULE_SNIA, RUN_RULE_TIGHT };

/* A series of rounds and its verdict: feed each round's WAF to run_steady_add(). */
struct run_steady {
	int rounds;   /* rounds recorded (at most RUN_STEADY_MAX_ROUNDS) */
	enum run_steady_rule rule; /* the rule that ends the series (run_steady_init: SNIA) */
	bool reached;              /* the last window met that rule */
	double waf;                /* mean of that rule's last window once there is one, else NaN */
	/* both rules, whichever ends the series: the round (1-based) whose window first met it
	 * (0: never) and that window's mean WAF (NaN: never) */
	int snia_round, tight_round;
	double snia_waf, tight_waf;
	double round_waf[RUN_STEADY_MAX_ROUNDS];
};
void run_steady_init(struct run_steady *s);
/* Record one round; true when the last RUN_STEADY_WINDOW rounds are steady. A full series
 * (RUN_STEADY_MAX_ROUNDS) drops the round and returns false. */
bool run_steady_add(struct run_steady *s, double waf);

/*
 * End of life as an event (docs/output.md, "eol"): the first write the drive refused because it
 * had gone read-only. Every command stops there by default and prints its report up to that
 * point with this beside it. where names the position in the command's own terms: the pass
 * (1-based; 0 when the command has no passes) and the request, I/O or write (1-based, within
 * the pass) that failed.
 */
struct run_eol {
	bool reached;
	const char *cause;         /* ftl_eol_cause(): "spare" or "gc-reserve" */
	int pass;                  /* 1-based, 0: no passes */
	uint64_t index;            /* 1-based request / I/O / write within the pass */
	const char *unit;          /* what index counts: "request", "io", "write" */
	uint64_t host_write_bytes; /* the drive's host bytes written by then */
	double drive_writes;       /* the same over the user capacity */
	double virtual_s;          /* the drive's virtual clock, seconds */
	uint32_t percentage_used;  /* SMART Percentage Used then (mean erase / rated P/E) */
	uint32_t available_spare;  /* SMART Available Spare then, % */
	uint64_t retired_blocks;
};
/* Record end of life on f (read-only) at pass/index into e. */
void run_eol_note(struct run_eol *e, const struct ftl *f, int pass, uint64_t index,
                  const char *unit);
/* "eol": null, or the object. */
void run_eol_json(const struct run_eol *e, struct json_out *j);
/* One text line ("end of life: ...\n") when reached, else nothing. */
void run_eol_text(const struct run_eol *e, FILE *out);

/* Progress, called about 512 times per user capacity written: the phase's name, and done of
 * total (bytes written of the phase's; aging: mean erase count of the scaled rated P/E; total 0:
 * not known, as for steady-state rounds). */
typedef void (*ssd_run_progress_fn)(void *arg, const char *phase, double done, double total,
                                    double waf_window);

/*
 * A host with a queue (perf.c): iodepth I/Os of bs bytes outstanding, closed loop or at an open
 * rate, measured after a ramp over runtime_s virtual seconds, as fio measures a drive.
 */
enum perf_rw { PERF_NONE, PERF_READ, PERF_WRITE, PERF_RANDREAD, PERF_RANDWRITE, PERF_RANDRW };
struct perf_opts {
	enum perf_rw rw;    /* PERF_NONE: no such phase */
	uint32_t read_pct;  /* share of reads: 100 for read/randread, 0 for writes, randrw's own */
	uint64_t bs;        /* I/O size (the run's --bs) */
	uint32_t iodepth;   /* >= 1 */
	double rate_iops;   /* 0: closed loop; > 0: issue at this rate, at most iodepth outstanding */
	double ramp_s;      /* virtual seconds issued but not measured */
	double runtime_s;   /* virtual seconds measured, > 0 */
	uint64_t seed;      /* read/write choice of randrw */
};
struct perf_report {
	enum perf_rw rw;
	uint32_t read_pct, iodepth;
	uint64_t bs;
	double rate_iops, seconds;
	uint64_t ios, reads, bytes, host_write_bytes, read_suspends;
	double iops, mbps, waf; /* waf: of the phase's own writes (NaN without writes) */
	struct {
		double mean, p50, p90, p99, p999, p9999, max;
	} lat_us;
};
struct workload;
/* "read" | "write" | "randread" | "randwrite" | "randrw[:READ%]" (default 70% reads). */
int perf_rw_parse(const char *s, enum perf_rw *rw, uint32_t *read_pct, char *err, size_t errlen);
const char *perf_rw_name(enum perf_rw rw);
/* Run the phase on f from virtual time *now (set to the last completion); random offsets come
 * from wl (in bs blocks). RUN_OK, or RUN_E_INPUT (reads of a drive not fully written)
 * or RUN_E_FAIL (an I/O failed: full, worn out) with one line in err. */
int perf_run(struct ftl *f, const struct perf_opts *o, struct workload *wl, uint64_t *now,
             struct perf_report *rep, char *err, size_t errlen);
void perf_report_json(const struct perf_report *p, struct json_out *j);

/*
 * One `ssd` experiment. Sizes of writes are in multiples of the user capacity. Fill with
 * ssd_run_opts_default(), then set cfg (or load_snapshot) and what differs.
 */
struct ssd_run_opts {
	const struct ftl_config *cfg; /* the drive (validated), unless load_snapshot is set */
	const char *load_snapshot;    /* start from this saved state; cfg is then ignored */
	const char *save_snapshot;    /* save the final state here; NULL: do not */
	const char *workload;         /* "uniform" | "seq" | "zoned:R1/F1:R2/F2..." | "jesd219" */
	uint64_t bs;                  /* I/O size, a positive multiple of FTL_SECTOR */
	const char *bs_mix;           /* NULL, or "jesd219": JESD219's enterprise transfer sizes
	                                 (bs is then ignored); workload.h */
	uint64_t seed;                /* workload seed */
	bool zone_streams;            /* zoned workload: zone i's writes (the precondition's too)
	                                 go to host stream i (FDP: handle i) */
	bool precondition;            /* first 2x user capacity of 128 KiB sequential writes */
	bool steady;                  /* rounds until run_steady_add() says steady */
	enum run_steady_rule steady_rule; /* which rule ends the rounds (default SNIA) */
	double round;                 /* steady round size, in (0, 100] */
	int max_rounds;               /* give up on steady state after this many (>= 5) */
	double writes;     /* workload writes; < 0: 1, or the cap with steady (50) or accelerate */
	double dwpd;       /* host write rate for the lifetimes; < 0: the drive's rating, else 1 */
	double accelerate; /* 0: off; F >= 1: P/E limits / F, run to end of life, bytes x F */
	bool check;        /* ftl_check() at the end */
	struct perf_opts perf; /* rw != PERF_NONE: a queued I/O phase after the writes (bs = the
	                          run's bs); then the writes phase runs only if writes is given */
	ssd_run_progress_fn progress;
	void *progress_arg;
};
void ssd_run_opts_default(struct ssd_run_opts *o);
/* The checks that need no drive (writes, round, max_rounds, accelerate, bs alignment), so a
 * caller can refuse bad flags before loading a preset. ssd_run() makes them too. */
int ssd_run_opts_check(const struct ssd_run_opts *o, char *err, size_t errlen);

/* Accelerated aging: the lifetime run to end of life beside the extrapolated one. */
struct ssd_accel_report {
	double factor;            /* F */
	uint32_t pe_cycles;       /* the rated P/E the run used (scaled by 1/F unless loaded) */
	double eol_days;          /* host bytes written x F / bytes per day */
	double extrapolated_days; /* the unscaled drive's prediction when the aging run began */
};
/* "accelerated": {factor, pe_cycles, eol_days, extrapolated_days}, as ssd and kv print it. */
void run_accel_json(const struct ssd_accel_report *a, struct json_out *j);

/*
 * What a run measured: every figure `ssd` prints. The report owns the drive in its final state
 * (ftl), for ftl_json_members(), ftl_erase_histogram() or a snapshot, and a copy of the workload
 * spec; ssd_report_free() releases both. stats and lifetime are read from it at the end of the run.
 */
struct ssd_report {
	struct ftl *ftl;
	struct ftl_config cfg; /* the drive's config (P/E already scaled when accelerated) */
	struct ftl_geometry geo;
	char *workload; /* a copy of the workload spec, as given */
	uint64_t bs;    /* 0 with a bs_mix */
	const char *bs_mix; /* NULL or the mix's name (a static string) */
	bool precondition;
	double dwpd;          /* the rate the lifetimes assume, drive writes per day */
	double bytes_per_day; /* dwpd x user capacity */
	bool steady_requested;
	struct run_steady steady; /* the rounds, when steady_requested */
	bool accelerated;
	struct ssd_accel_report accel;
	bool perf_done;
	struct perf_report perf;
	struct ftl_stats stats;
	struct ftl_lifetime lifetime;
	/* end of life, when a write was refused (pass 0, unit "write": the run's writes counted
	 * from 1, precondition and --rw writes included), or, with accelerate, when the mean
	 * erase count reached the scaled rated P/E (cause "rated-pe", index the last write) */
	struct run_eol eol;
};

/* Run o into rep (overwritten; call ssd_report_free() afterwards whatever the result). Returns
 * RUN_OK, or an run_status with one line in err. */
int ssd_run(const struct ssd_run_opts *o, struct ssd_report *rep, char *err, size_t errlen);
void ssd_report_free(struct ssd_report *rep);

/* The report as one JSON object (a top-level value or an array element): the keys of
 * `femu-gandalf ssd --json` (docs/output.md). Errors stay in j (jout_finish()). */
void ssd_report_json(const struct ssd_report *rep, struct json_out *j);

/* One block I/O, as a blk_run_source yields it. op: 'R' read, 'W' write, 'D' discard, 'F' flush. */
struct blk_run_io {
	uint64_t t_ns;
	uint64_t lba; /* 512-byte sectors */
	uint64_t bytes;
	char op;
	unsigned stream; /* a write's FTL stream: its FDP placement ID (blk-csv's pid), else 0 */
};

/*
 * Where blk_run() reads the trace: open() before each pass (0, or -1 with one line in err), then
 * next() until it returns 0 (end of pass; 1: an I/O, -1: a read error in err), then close().
 * where() names the last I/O for error messages ("FILE:LINE"). The CLI wraps femu-gandalf/trace
 * (and prints its warnings there), keeping the trace reader's GLib out of run/.
 */
struct blk_run_source {
	int (*open)(void *arg, char *err, size_t errlen);
	int (*next)(void *arg, struct blk_run_io *io, char *err, size_t errlen);
	const char *(*where)(void *arg);
	void (*close)(void *arg);
	void *arg;
};

/* One in-process `blkreplay`. Fill with blk_run_opts_default(), then set cfg, src and name. */
struct blk_run_opts {
	const struct ftl_config *cfg; /* the drive (validated) */
	struct blk_run_source src;
	const char *name;  /* the trace as the report and errors name it */
	bool precondition; /* first 2x user capacity of 128 KiB sequential writes, all at time 0 */
	bool steady;       /* passes until run_steady_add() says steady, at most max_loops */
	int loops;         /* passes without steady (>= 1) */
	int max_loops;     /* cap of the steady passes (>= 5) */
	bool wrap;         /* fold I/Os past the end of the device back into it */
	double dwpd; /* host write rate for the lifetimes; <= 0: the trace's (bytes / duration) */
};
void blk_run_opts_default(struct blk_run_opts *o);
/* The checks that need no drive (loops, max_loops); blk_run() makes them too. */
int blk_run_opts_check(const struct blk_run_opts *o, char *err, size_t errlen);

/* What a replay measured. The report owns the drive in its final state (blk_report_free()). The
 * per-pass figures are those of the last pass; steady.round_waf[] holds every pass's WAF (NaN for
 * a pass without writes) and steady.reached is false unless steady was requested. */
struct blk_report {
	struct ftl *ftl;
	const char *name; /* opts.name */
	bool precondition, steady_requested;
	struct run_steady steady; /* steady.rounds = passes */
	uint64_t ios_per_pass, write_bytes_per_pass, total_ios;
	double t_first, t_last; /* seconds: the pass's first and last I/O times */
	double wall_s;          /* wall-clock seconds of the passes (the replay rate only) */
	double bytes_per_day;   /* the rate the lifetimes assume */
	/* end of life: the pass and the 1-based I/O of that pass the drive refused (unit "io"),
	 * or pass 0 and the 128 KiB write of --precondition (unit "write") */
	struct run_eol eol;
};

/* Replay o into rep (overwritten; call blk_report_free() whatever the result). Returns
 * RUN_OK, or RUN_E_INPUT (bad option, unreadable or out-of-range trace, exit 2) or
 * RUN_E_FAIL (a write failed, exit 1), with one line in err. */
int blk_run(const struct blk_run_opts *o, struct blk_report *rep, char *err, size_t errlen);
void blk_report_free(struct blk_report *rep);
/* The keys of `blkreplay --json` (docs/output.md), as one object. */
void blk_report_json(const struct blk_report *rep, struct json_out *j);

/* Where kv_run() is, for a progress line: called every 1024 requests of a pass. */
struct kv_run_progress {
	int pass, passes;           /* this pass (from 1), and the most the run makes */
	uint64_t request, requests; /* in this pass (from 1), and the trace's */
	double drive_writes;        /* host writes / user capacity so far (0 without a drive) */
	double drive_writes_goal;   /* --drive-writes (0: none) */
	double life_used;           /* --accelerate: mean erase count / scaled P/E; else NaN */
	bool until_steady;          /* the passes end when steady: their number is not known */
	const struct kv_stats *st;
};
typedef void (*kv_run_progress_fn)(void *arg, const struct kv_run_progress *p);

/*
 * One `kv` run: a fresh cache and a fresh drive, the whole trace loops times (each pass shifted
 * in time to start 1 s after the previous pass's last request). Zero it, then set what applies.
 */
struct kv_run_opts {
	const char *trace;              /* the trace as the errors and the report name it */
	const struct kv_trace *kt;      /* the requests (kv_trace_load()), replayed by every run */
	const char *device;             /* the drive as the errors and the report name it */
	const struct ftl_config *drive; /* the SSD tier's drive (validated); NULL: none, TBW only */
	struct kv_config cfg; /* the tier (kv_config_default() + model, sizes); ssd_bytes 0: all */
	int loops;            /* passes over the trace (>= 1); with drive_writes, until_steady or
	                         accelerate, the
	                         most passes (0: KV_RUN_MAX_LOOPS_DEF) */
	bool fresh_ids;       /* passes after the first under new block and session ids (kv_run.c) */
	double drive_writes;  /* > 0: passes until the drive's host writes reach this many user
	                         capacities (at a pass's end), at most loops passes */
	bool until_steady;    /* passes until steady by the pass rule (run_passes_steady()), after
	                         drive_writes if given, at most loops passes */
	double accelerate;    /* >= 1: the drive's P/E limits / F, passes until end of life (at most
	                         loops), the lifetime measured there x F beside the extrapolated one;
	                         0: off */
	const struct kv_policy *prepared_for; /* the policy whose prepare() result is prepared */
	void *prepared;
	kv_run_progress_fn progress;
	void *progress_arg;
	uint64_t peak_active; /* the trace's peak active KV for the model (kv_active_peak()); 0: unknown */
	const struct kv_io_sink *sink; /* the SSD tier's I/O to a store (store/), or NULL */
	/* more keys for kv_result_json()'s object (a store's figures), or NULL */
	void (*more_json)(const void *arg, struct json_out *j);
	const void *more_arg;
};

/*
 * Steady state of a run in passes (kv, blkreplay). A KV trace's write mix changes within a pass
 * (sessions arrive, grow and end), so a drive at steady state still shows a WAF that moves
 * within each pass; what must settle is the WAF from one pass to the next. The passes are
 * grouped from the last whole one backwards, each group at least RUN_PASS_GROUP user capacities
 * of host writes; the run is steady when the drive was written FTL_STEADY_DRIVE_WRITES times or
 * more and the WAF of the last two groups differs by at most FTL_STEADY_WAF_RANGE of their mean.
 */
#define RUN_PASS_GROUP 0.5
struct run_passes {
	int n, cap;           /* samples recorded: the start, then each whole pass's end */
	uint64_t *host, *nand; /* the drive's host and NAND bytes at each sample */
};
/* Record the drive's counters (zero p first; the first call is the start). 0, or -1 when out
 * of memory. run_passes_free() releases the arrays. */
int run_passes_note(struct run_passes *p, const struct ftl *f);
void run_passes_free(struct run_passes *p);
/* The WAF spread of the last two pass groups, |a - b| / mean (NaN without two groups), and the
 * verdict for a drive of user_bytes. */
bool run_passes_steady(const struct run_passes *p, uint64_t user_bytes, double *spread);

/* The most passes of a run to a number of drive writes or to end of life, by default. */
#define KV_RUN_MAX_LOOPS_DEF 1000

/* What a kv run measured: every figure `kv` prints. st.lat (the sorted load latencies, st.nlat
 * of them) is owned by the result: kv_result_free(). */
struct kv_result {
	const char *trace, *device, *policy; /* opts.trace, opts.device, the policy's name */
	char params[512];                    /* the point's "k=v,..." */
	struct kv_config cfg; /* as run: ssd_bytes, TBW, price and P/E filled from the drive */
	struct kv_stats st;
	bool have_ftl;             /* a drive: fs and lt are filled */
	bool sink_failed;          /* the run stopped because opts.sink failed (its owner says why) */
	bool replayed;             /* the drive replayed a kept simulation (kv_run_keep_sims()) */
	struct ftl_stats fs;       /* the drive at the end */
	bool fdp;                  /* the drive has fdp=on: fdp_st and fdp_ev are filled */
	struct ftl_fdp_stats fdp_st;
	struct ftl_fdp_event fdp_ev[FTL_FDP_EVENTS];
	size_t fdp_nev;
	struct ftl_attribution attr; /* the drive's wear attribution (classes: kv_port_write) */
	struct ftl_lifetime lt;    /* at bpd */
	double duration;           /* trace seconds, first to last request over every pass */
	double bpd;                /* SSD host bytes per day of trace time */
	double tbw_days;           /* rated TBW / bpd (INFINITY without writes) */
	double lat_mean, lat_p99;  /* load latency, seconds */
	double cost_gpu, cost_ssd; /* dollars: recompute of missed tokens, drive wear */
	double drive_writes;       /* host bytes written / the drive's user bytes */
	uint64_t peak_active;      /* opts.peak_active */
	uint64_t skipped;          /* malformed records the trace's reader skipped (opts.kt) */
	struct kv_figure fig[KV_MAX_FIGURES]; /* what the policy learned (kvsim_policy_figures()) */
	int nfig;
	double wall;               /* wall-clock seconds of the passes */
	int passes;                /* passes made (the last one may have stopped at end of life) */
	double pass_waf_spread;    /* run_passes_steady()'s spread; lt.steady is its verdict */
	double drive_writes_target; /* opts.drive_writes (0: none) */
	bool until_steady;          /* opts.until_steady */
	struct run_eol eol;        /* end of life, when the drive reached it (the run stopped) */
	/* opts.accelerate (factor 0: off): the P/E the drive ran with, the lifetime measured at end
	 * of life (trace days x F, NaN when not reached) and the one extrapolated by the unscaled
	 * drive at the end of the first steady pass (NaN: none was steady) */
	struct ssd_accel_report accel;
	uint64_t region_bytes;     /* --alloc region: the region size used */
	void (*more_json)(const void *arg, struct json_out *j); /* opts.more_json */
	const void *more_arg;
};

/* Run pol at params ("k=v,..." checked against its table) into res (overwritten; call
 * kv_result_free() whatever the result). Returns RUN_OK, or RUN_E_INPUT (a bad option,
 * parameter or drive, exit 2) or RUN_E_FAIL (the simulator failed on a request, exit 1),
 * with one line in err. */
int kv_run(const struct kv_run_opts *o, const struct kv_policy *pol, const char *params,
           struct kv_result *res, char *err, size_t errlen);
/* What kv_run() checks before its passes (the drive, the sizes, --loop, params), without the
 * passes: RUN_OK or RUN_E_INPUT with the reason in err. An offline policy's params are
 * not checked (its pass over the trace would have to be made first). */
int kv_run_check(const struct kv_run_opts *o, const struct kv_policy *pol, const char *params,
                 char *err, size_t errlen);
/* From kv_run_keep_sims(true) until as many (false): runs that differ from the run before
 * only in the drive's side (FDP, TRIM, placement hints, when to stop) replay its simulation
 * instead of making it again (kv_run.c), with the same results. (false) drops what is kept. */
void kv_run_keep_sims(bool on);
/* The simulations made for runs to replay since the program started (tests). */
uint64_t kv_run_sims_made(void);
void kv_result_free(struct kv_result *res);
/* Prefix blocks missed / prefix blocks (0 without any). */
double kv_result_miss_ratio(const struct kv_result *res);
/* The keys of `kv --json` (docs/output.md), as one object. */
void kv_result_json(const struct kv_result *res, struct json_out *j);
/* `kv --sweep`'s CSV: the header line, and one row per result (flushed). */
void kv_result_csv_header(FILE *out);
void kv_result_csv_row(const struct kv_result *res, FILE *out);

#endif
