/*
 * perf.c - a host with a queue: the I/O phase `femu-gandalf ssd --rw` measures, the way fio
 * measures a drive (docs/run.md, "Performance").
 *
 * The host keeps iodepth I/Os outstanding in virtual time. Closed loop (rate 0): a new I/O is
 * issued the moment one completes, so the drive always has iodepth commands; open loop (rate
 * R IOPS): I/Os are issued every 1/R seconds, or when a slot frees if all iodepth are
 * outstanding (fio's rate_iops with its iodepth cap). A latency is completion minus issue (fio's
 * clat plus slat, which are both zero here). Issue times never go backwards, so the FTL sees
 * the same causal order a real host would give it.
 *
 * The first ramp seconds are not measured (fio's ramp_time); the next runtime seconds are. IOPS
 * and MB/s are the I/Os issued in that window over its length; latencies are kept in a
 * log-linear histogram (64 sub-buckets per power of two: a percentile is within 1.6%, and never
 * outside the smallest and largest latency seen).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "run.h"
#include "workload.h"

static inline uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

#define SUB_BITS 6
#define NBUCKETS (64 << SUB_BITS)

static const char *const rw_names[] = {"read", "write", "randread", "randwrite", "randrw", NULL};

int perf_rw_parse(const char *s, enum perf_rw *rw, uint32_t *read_pct, char *err, size_t errlen)
{
	const char *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : strlen(s);
	*read_pct = 0;
	for (int i = 0; rw_names[i]; i++)
		if (strlen(rw_names[i]) == n && !strncmp(rw_names[i], s, n)) {
			*rw = (enum perf_rw)(i + 1);
			if (*rw == PERF_READ || *rw == PERF_RANDREAD)
				*read_pct = 100;
			if (*rw == PERF_RANDRW) {
				char *end;
				long v = colon ? strtol(colon + 1, &end, 10) : 70;
				if (colon && (end == colon + 1 || *end || v < 0 || v > 100)) {
					snprintf(err, errlen, "%s %s: the read share after ':' must be 0..100 (percent)",
					         run_opt(RUN_OPT_RW), s);
					return -1;
				}
				*read_pct = (uint32_t)v;
			} else if (colon) {
				break;
			}
			return 0;
		}
	snprintf(err, errlen, "%s %s: must be read, write, randread, randwrite or randrw[:READ%%]",
	         run_opt(RUN_OPT_RW), s);
	return -1;
}

const char *perf_rw_name(enum perf_rw rw)
{
	return rw >= PERF_READ && rw <= PERF_RANDRW ? rw_names[rw - 1] : "none";
}

/* ---- latency histogram ---- */

static unsigned bucket_of(uint64_t v)
{
	if (v < (1u << SUB_BITS))
		return (unsigned)v;
	int msb = 63 - __builtin_clzll(v);
	return (unsigned)((msb - SUB_BITS + 1) << SUB_BITS) |
	       (unsigned)((v >> (msb - SUB_BITS)) & ((1u << SUB_BITS) - 1));
}

/* the middle of bucket b's range */
static double bucket_mid(unsigned b)
{
	if (b < (1u << SUB_BITS))
		return b;
	int shift = (int)(b >> SUB_BITS) - 1;
	double lo = (double)(((1u << SUB_BITS) | (b & ((1u << SUB_BITS) - 1)))) * ldexp(1, shift);
	return lo + ldexp(1, shift) / 2;
}

/* the q-quantile of n latencies: its bucket's middle, kept within the exact [lo, hi] seen */
static double percentile(const uint64_t *h, uint64_t n, double q, uint64_t lo, uint64_t hi)
{
	uint64_t want = (uint64_t)ceil(q * (double)n), seen = 0;
	if (!want)
		want = 1;
	for (unsigned b = 0; b < NBUCKETS; b++) {
		seen += h[b];
		if (seen >= want) {
			double m = bucket_mid(b);
			return m < (double)lo ? (double)lo : m > (double)hi ? (double)hi : m;
		}
	}
	return NAN;
}

/* ---- outstanding I/Os: a min-heap of completion times ---- */

struct qheap {
	uint64_t *a;
	uint32_t n;
};

static void qpush(struct qheap *q, uint64_t v)
{
	uint32_t i = q->n++;
	while (i && q->a[(i - 1) / 2] > v) {
		q->a[i] = q->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	q->a[i] = v;
}

static uint64_t qpop(struct qheap *q)
{
	uint64_t top = q->a[0], v = q->a[--q->n];
	uint32_t i = 0;
	for (;;) {
		uint32_t l = 2 * i + 1, m = l;
		if (l >= q->n)
			break;
		if (l + 1 < q->n && q->a[l + 1] < q->a[l])
			m = l + 1;
		if (q->a[m] >= v)
			break;
		q->a[i] = q->a[m];
		i = m;
	}
	if (q->n)
		q->a[i] = v;
	return top;
}

/* Reads of units never written cost no NAND time: a read workload needs a written drive.
 * RUN_OK, or RUN_E_INPUT with the reason. */
static int perf_check_written(struct ftl *f, const struct perf_opts *o, char *err, size_t errlen)
{
	struct ftl_stats a;
	uint64_t units = ftl_get_geometry(f)->user_bytes / ftl_get_config(f)->unit_size;

	if (!o->read_pct)
		return RUN_OK;
	ftl_get_stats(f, &a);
	if (a.valid_units >= units)
		return RUN_OK;
	snprintf(err, errlen,
	         "%s %s: %llu of %llu units were never written, and reading them costs "
	         "no NAND time; add %s",
	         run_opt(RUN_OPT_RW), perf_rw_name(o->rw),
	         (unsigned long long)(units - a.valid_units), (unsigned long long)units,
	         run_opt(RUN_OPT_PRECONDITION));
	return RUN_E_INPUT;
}

/* The measured I/Os' latencies: a log-bucket histogram, their sum and extremes (ns). */
struct perf_lat {
	uint64_t *hist;
	uint64_t sum, max, min;
};

static void perf_lat_add(struct perf_lat *l, uint64_t lat)
{
	l->hist[bucket_of(lat)]++;
	l->sum += lat;
	l->max = max_u64(l->max, lat);
	l->min = lat < l->min ? lat : l->min;
}

/* rep->lat_us from the latencies of rep->ios I/Os. */
static void perf_lat_report(const struct perf_lat *l, struct perf_report *rep)
{
	if (!rep->ios)
		return;
	rep->lat_us.mean = (double)l->sum / (double)rep->ios / 1e3;
	rep->lat_us.p50 = percentile(l->hist, rep->ios, 0.50, l->min, l->max) / 1e3;
	rep->lat_us.p90 = percentile(l->hist, rep->ios, 0.90, l->min, l->max) / 1e3;
	rep->lat_us.p99 = percentile(l->hist, rep->ios, 0.99, l->min, l->max) / 1e3;
	rep->lat_us.p999 = percentile(l->hist, rep->ios, 0.999, l->min, l->max) / 1e3;
	rep->lat_us.p9999 = percentile(l->hist, rep->ios, 0.9999, l->min, l->max) / 1e3;
	rep->lat_us.max = (double)l->max / 1e3;
}

/* The next I/O's issue time after t: at an open rate (gap ns apart, *sched the schedule) a
 * slot frees when an earlier I/O completes, and with all iodepth slots busy the I/O waits for
 * the first completion; closed loop (gap 0), it issues when a slot frees. */
static uint64_t perf_next_issue(struct qheap *q, uint32_t iodepth, double gap, double *sched,
                                uint64_t t)
{
	if (gap > 0) {
		t = (uint64_t)*sched;
		*sched += gap;
		while (q->n && q->a[0] <= t) /* completions before it free their slots */
			qpop(q);
		if (q->n == iodepth)
			t = max_u64(t, qpop(q));
	} else if (q->n == iodepth) {
		t = qpop(q);
	}
	return t;
}

int perf_run(struct ftl *f, const struct perf_opts *o, struct workload *wl, uint64_t *now,
             struct perf_report *rep, char *err, size_t errlen)
{
	const uint64_t user = ftl_get_geometry(f)->user_bytes, bs = o->bs;
	struct ftl_stats a, b;
	struct qheap q = {calloc(o->iodepth, sizeof(uint64_t)), 0};
	struct perf_lat lat = {calloc(NBUCKETS, sizeof(uint64_t)), 0, 0, UINT64_MAX};
	uint64_t rng = o->seed ^ 0x510e527fade682d1ull, pos = 0;
	int rc = 0;

	memset(rep, 0, sizeof(*rep));
	rep->rw = o->rw;
	rep->read_pct = o->read_pct;
	rep->iodepth = o->iodepth;
	rep->rate_iops = o->rate_iops;
	rep->bs = bs;
	if (!q.a || !lat.hist) {
		snprintf(err, errlen, "out of memory");
		rc = RUN_E_FAIL;
		goto out;
	}
	if ((rc = perf_check_written(f, o, err, errlen)))
		goto out;
	ftl_get_stats(f, &a);
	const uint64_t t0 = *now, m0 = t0 + (uint64_t)(o->ramp_s * 1e9),
	               m1 = m0 + (uint64_t)(o->runtime_s * 1e9);
	const double gap = o->rate_iops > 0 ? 1e9 / o->rate_iops : 0;
	double sched = (double)t0;
	uint64_t t = t0, last = t0;
	for (;;) {
		t = perf_next_issue(&q, o->iodepth, gap, &sched, t);
		if (t >= m1)
			break;
		/* the I/O */
		bool rd = o->read_pct == 100 || (o->read_pct && fg_rand_below(&rng, 100) < o->read_pct);
		uint64_t off;
		if (o->rw == PERF_READ || o->rw == PERF_WRITE) {
			off = pos;
			pos = pos + bs > user - bs ? 0 : pos + bs;
		} else {
			off = workload_next(wl) * bs;
		}
		uint64_t done;
		int io = rd ? ftl_read(f, off, bs, t, &done) : ftl_write(f, off, bs, 0, t, &done);
		if (io) {
			snprintf(err, errlen, "%s at byte %llu failed: %s", rd ? "read" : "write",
			         (unsigned long long)off, ftl_strerror(io));
			rc = RUN_E_FAIL;
			break;
		}
		qpush(&q, done);
		last = max_u64(last, done);
		if (t >= m0) {
			perf_lat_add(&lat, done - t);
			rep->ios++;
			rep->bytes += bs;
			if (rd)
				rep->reads++;
		}
	}
	while (q.n) /* the last ones finish */
		last = max_u64(last, qpop(&q));
	*now = last;
	ftl_get_stats(f, &b);
	rep->seconds = o->runtime_s;
	rep->iops = (double)rep->ios / o->runtime_s;
	rep->mbps = (double)rep->bytes / o->runtime_s / 1e6;
	perf_lat_report(&lat, rep);
	rep->host_write_bytes = b.host_write_bytes - a.host_write_bytes;
	rep->waf = rep->host_write_bytes
	                   ? (double)(b.nand_write_bytes - a.nand_write_bytes) / (double)rep->host_write_bytes
	                   : NAN;
	rep->read_suspends = b.read_suspends - a.read_suspends;
out:
	free(q.a);
	free(lat.hist);
	return rc;
}

void perf_report_json(const struct perf_report *p, struct json_out *j)
{
	jout_object(j, "perf", JOUT_INLINE);
	jout_str(j, "rw", perf_rw_name(p->rw));
	jout_u64(j, "read_pct", p->read_pct);
	jout_u64(j, "bs", p->bs);
	jout_u64(j, "iodepth", p->iodepth);
	jout_num(j, "rate_iops", "%.6g", p->rate_iops);
	jout_num(j, "seconds", "%.6g", p->seconds);
	jout_u64(j, "ios", p->ios);
	jout_num(j, "iops", "%.1f", p->iops);
	jout_num(j, "mb_s", "%.2f", p->mbps);
	jout_num(j, "waf", "%.4f", p->waf);
	jout_u64(j, "read_suspends", p->read_suspends);
	jout_object(j, "lat_us", JOUT_INLINE);
	jout_num(j, "mean", "%.2f", p->lat_us.mean);
	jout_num(j, "p50", "%.2f", p->lat_us.p50);
	jout_num(j, "p90", "%.2f", p->lat_us.p90);
	jout_num(j, "p99", "%.2f", p->lat_us.p99);
	jout_num(j, "p99.9", "%.2f", p->lat_us.p999);
	jout_num(j, "p99.99", "%.2f", p->lat_us.p9999);
	jout_num(j, "max", "%.2f", p->lat_us.max);
	jout_end(j);
	jout_end(j);
}
