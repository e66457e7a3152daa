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
 */
#include <math.h>

#include "run.h"

bool run_is_steady(const double *w, int n, double *mean_out)
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
	return mx - mn <= RUN_STEADY_RANGE * mean &&
	       fabs(slope * (n - 1)) <= RUN_STEADY_SLOPE * mean;
}

void run_steady_init(struct run_steady *s)
{
	s->rounds = 0;
	s->reached = false;
	s->waf = NAN;
}

bool run_steady_add(struct run_steady *s, double waf)
{
	if (s->rounds >= RUN_STEADY_MAX_ROUNDS)
		return false;
	s->round_waf[s->rounds++] = waf;
	if (s->rounds < RUN_STEADY_WINDOW)
		return false;
	s->reached = run_is_steady(s->round_waf + s->rounds - RUN_STEADY_WINDOW, RUN_STEADY_WINDOW,
	                           &s->waf);
	return s->reached;
}
