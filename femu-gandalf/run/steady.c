/*
 * steady.c - the SNIA PTS steady-state rule, once, for every caller: ssd --steady rounds,
 * blkreplay --until-steady passes (blk_run.c), and the KV sweeps.
 *
 * A drive is in steady state when, over the last RUN_STEADY_WINDOW rounds, the WAF range
 * (max - min) is within RUN_STEADY_RANGE of the window's mean and the least-squares line through
 * the window moves by at most RUN_STEADY_SLOPE of the mean from its first round to its last.
 * Fitting against centred round numbers keeps the sums small and exact for integer windows; the
 * arithmetic is that of the original CLI copy, operation for operation, so every verdict and
 * printed mean stays the same to the last bit.
 *
 * Beside it, a tight rule for WAF (run.h: 10 rounds, range 3%, excursion 0.5%). Both are
 * evaluated on every round and the first round each was met is kept; s->rule says which one
 * ends the series (SNIA unless the caller asks; `ssd --steady-rule tight`).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

static bool steady_rule(const double *w, int n, double range, double slope_max, double *mean_out)
{
	double mean = 0, mn = INFINITY, mx = -INFINITY, sxy = 0, sxx = 0;

	for (int i = 0; i < n; i++) {
		mean += w[i];
		mn = fmin(mn, w[i]);
		mx = fmax(mx, w[i]);
	}
	mean /= n;
	for (int i = 0; i < n; i++) {
		sxy += (i - (n - 1) / 2.0) * (w[i] - mean);
		sxx += (i - (n - 1) / 2.0) * (i - (n - 1) / 2.0);
	}
	double slope = sxy / sxx;
	*mean_out = mean;
	return mx - mn <= range * mean && fabs(slope * (n - 1)) <= slope_max * mean;
}

bool run_is_steady(const double *w, int n, double *mean_out)
{
	return steady_rule(w, n, RUN_STEADY_RANGE, RUN_STEADY_SLOPE, mean_out);
}

bool run_is_steady_tight(const double *w, int n, double *mean_out)
{
	return steady_rule(w, n, RUN_TIGHT_RANGE, RUN_TIGHT_SLOPE, mean_out);
}

void run_steady_init(struct run_steady *s)
{
	s->rounds = 0;
	s->rule = RUN_RULE_SNIA;
	s->reached = false;
	s->waf = NAN;
	s->snia_round = s->tight_round = 0;
	s->snia_waf = s->tight_waf = NAN;
}

bool run_steady_add(struct run_steady *s, double waf)
{
	if (s->rounds >= RUN_STEADY_MAX_ROUNDS)
		return false;
	s->round_waf[s->rounds++] = waf;
	if (s->rounds < RUN_STEADY_WINDOW)
		return false;
	double snia_mean, tight_mean = NAN;
	bool snia = run_is_steady(s->round_waf + s->rounds - RUN_STEADY_WINDOW, RUN_STEADY_WINDOW,
	                          &snia_mean);
	bool tight = s->rounds >= RUN_TIGHT_WINDOW &&
	             run_is_steady_tight(s->round_waf + s->rounds - RUN_TIGHT_WINDOW,
	                                 RUN_TIGHT_WINDOW, &tight_mean);
	if (snia && !s->snia_round) {
		s->snia_round = s->rounds;
		s->snia_waf = snia_mean;
	}
	if (tight && !s->tight_round) {
		s->tight_round = s->rounds;
		s->tight_waf = tight_mean;
	}
	s->reached = s->rule == RUN_RULE_TIGHT ? tight : snia;
	s->waf = s->rule == RUN_RULE_TIGHT ? tight_mean : snia_mean;
	return s->reached;
}

int run_passes_note(struct run_passes *p, const struct ftl *f)
{
	struct ftl_stats st;
	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 64;
		uint64_t *h = realloc(p->host, cap * sizeof(*h)), *n;
		if (!h)
			return -1;
		p->host = h;
		if (!(n = realloc(p->nand, cap * sizeof(*n))))
			return -1;
		p->nand = n;
		p->cap = cap;
	}
	ftl_get_stats(f, &st);
	p->host[p->n] = st.host_write_bytes;
	p->nand[p->n++] = st.nand_write_bytes;
	return 0;
}

void run_passes_free(struct run_passes *p)
{
	free(p->host);
	free(p->nand);
	memset(p, 0, sizeof(*p));
}

/* The first sample (going back from sample end) that closes a group of at least min host bytes
 * after it, or -1 when the passes before end hold too little. */
static int group_start(const struct run_passes *p, int end, double min)
{
	for (int i = end - 1; i >= 0; i--)
		if ((double)(p->host[end] - p->host[i]) >= min)
			return i;
	return -1;
}

bool run_passes_steady(const struct run_passes *p, uint64_t user_bytes, double *spread)
{
	double min = RUN_PASS_GROUP * (double)user_bytes;
	int last = p->n - 1, mid = last > 0 ? group_start(p, last, min) : -1;
	int first = mid > 0 ? group_start(p, mid, min) : -1;
	*spread = NAN;
	if (first < 0)
		return false;
	double a = (double)(p->nand[mid] - p->nand[first]) / (double)(p->host[mid] - p->host[first]);
	double b = (double)(p->nand[last] - p->nand[mid]) / (double)(p->host[last] - p->host[mid]);
	*spread = fabs(a - b) / ((a + b) / 2);
	return (double)p->host[last] >= FTL_STEADY_DRIVE_WRITES * (double)user_bytes &&
	       *spread <= FTL_STEADY_WAF_RANGE;
}
