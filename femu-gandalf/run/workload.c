/*
 * workload.c - synthetic device workloads for `ssd` (through ssd_run()) and `bench`.
 *
 * It lives in femu-gandalf/run/ rather than cli/ because the generator is part of an
 * experiment's definition: a run is reproducible only if the library that runs it also owns the
 * offsets it writes. It needs nothing but libc, so run/ stays free of GLib, and it reports
 * errors into a buffer, never on stderr, so a sweep runner or a binding can call it.
 *
 * zoned:R1/F1:R2/F2 has fio's meaning: R1% of the I/Os go to the first F1% of the space, R2% to
 * the next F2%, and so on (both lists must sum to 100). Inside a zone offsets are uniform.
 * The generator is splitmix64: fast, seeded and reproducible across runs and machines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "workload.h"

uint64_t fg_rand64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Parse one zone "R/F" at *p, advancing *p past it and its ':' separator. */
static int parse_zone(const char **p, double *r, double *fr)
{
	char *end;

	*r = strtod(*p, &end);
	if (end == *p || *end != '/' || *r < 0)
		return -1;
	*p = end + 1;
	*fr = strtod(*p, &end);
	if (end == *p || (*end && *end != ':') || *fr <= 0)
		return -1;
	*p = *end ? end + 1 : end;
	return 0;
}

/* zoned:R1/F1:R2/F2...: cumulative I/O shares and zone starts; both lists sum to 100. */
static int parse_zoned(struct workload *w, const char *spec, char *err, size_t errlen)
{
	double rsum = 0, fsum = 0, r, fr;
	const char *p = spec + 6;

	w->kind = WL_ZONED;
	while (*p) {
		if (parse_zone(&p, &r, &fr)) {
			snprintf(err, errlen,
			         "--workload %s: expected zoned:R1/F1:R2/F2... (percent/percent)",
			         spec);
			return -1;
		}
		if (w->nz == WL_MAX_ZONES) {
			snprintf(err, errlen, "--workload %s: at most %d zones", spec,
			         WL_MAX_ZONES);
			return -1;
		}
		rsum += r;
		fsum += fr;
		w->zr[w->nz] = rsum / 100.0;
		w->zstart[w->nz + 1] = (uint64_t)(fsum / 100.0 * (double)w->nblocks + 0.5);
		w->nz++;
	}
	if (!w->nz || rsum < 99.999 || rsum > 100.001 || fsum < 99.999 || fsum > 100.001) {
		snprintf(err, errlen,
		         "--workload %s: I/O shares sum to %g%% and space shares to %g%%; both "
		         "must be 100",
		         spec, rsum, fsum);
		return -1;
	}
	w->zstart[w->nz] = w->nblocks;
	for (uint32_t i = 0; i < w->nz; i++)
		if (w->zstart[i + 1] <= w->zstart[i]) {
			snprintf(err, errlen, "--workload %s: zone %u is empty at this block size",
			         spec, i + 1);
			return -1;
		}
	return 0;
}

int workload_init(struct workload *w, const char *spec, uint64_t nblocks, uint64_t seed, char *err,
                  size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->nblocks = nblocks;
	w->rng = seed;
	if (!nblocks) {
		snprintf(err, errlen, "workload: the device holds no block of this size");
		return -1;
	}
	if (!strcmp(spec, "uniform")) {
		w->kind = WL_UNIFORM;
		return 0;
	}
	if (!strcmp(spec, "seq")) {
		w->kind = WL_SEQ;
		return 0;
	}
	if (!strncmp(spec, "zoned:", 6))
		return parse_zoned(w, spec, err, errlen);
	snprintf(err, errlen, "--workload %s: must be uniform, seq or zoned:R/F[:R/F...]", spec);
	return -1;
}

uint64_t workload_next(struct workload *w)
{
	switch (w->kind) {
	case WL_SEQ: {
		uint64_t b = w->next++;
		if (w->next == w->nblocks)
			w->next = 0;
		return b;
	}
	case WL_UNIFORM:
		return fg_rand_below(&w->rng, w->nblocks);
	case WL_ZONED: {
		double r = (double)(fg_rand64(&w->rng) >> 11) * 0x1.0p-53;
		uint32_t z = 0;
		while (z + 1 < w->nz && r >= w->zr[z])
			z++;
		return w->zstart[z] + fg_rand_below(&w->rng, w->zstart[z + 1] - w->zstart[z]);
	}
	}
	return 0;
}
