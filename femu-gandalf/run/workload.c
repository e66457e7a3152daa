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

#include "run.h"
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
			         "%s %s: expected zoned:R1/F1:R2/F2... (percent/percent)",
			         run_opt(RUN_OPT_WORKLOAD), spec);
			return -1;
		}
		if (w->nz == WL_MAX_ZONES) {
			snprintf(err, errlen, "%s %s: at most %d zones", run_opt(RUN_OPT_WORKLOAD),
			         spec, WL_MAX_ZONES);
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
		         "%s %s: I/O shares sum to %g%% and space shares to %g%%; both "
		         "must be 100",
		         run_opt(RUN_OPT_WORKLOAD), spec, rsum, fsum);
		return -1;
	}
	w->zstart[w->nz] = w->nblocks;
	for (uint32_t i = 0; i < w->nz; i++)
		if (w->zstart[i + 1] <= w->zstart[i]) {
			snprintf(err, errlen, "%s %s: zone %u is empty at this block size",
			         run_opt(RUN_OPT_WORKLOAD), spec, i + 1);
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
	if (!strcmp(spec, "jesd219")) {
		/* JESD219 enterprise: 50% of accesses to the first 5% of the LBAs, 30% to the next
		 * 15%, 20% to the remaining 80% */
		if (parse_zoned(w, "zoned:50/5:30/15:20/80", err, errlen)) {
			snprintf(err, errlen, "%s jesd219: zone empty at this block size",
			         run_opt(RUN_OPT_WORKLOAD));
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen,
	         "%s %s: must be uniform, seq or zoned:R/F[:R/F...] or jesd219",
	         run_opt(RUN_OPT_WORKLOAD), spec);
	return -1;
}

/*
 * JESD219 (JEDEC, "Solid-State Drive (SSD) Endurance Workloads", 2010; JESD219A 2012), the
 * enterprise workload's transfer sizes, in % of I/Os.
 */
static const uint32_t jesd219_bytes[] = {512,  1024, 1536, 2048,  2560,  3072,
                                         3584, 4096, 8192, 16384, 32768, 65536};
static const double jesd219_pct[] = {4, 1, 1, 1, 1, 1, 1, 67, 10, 7, 3, 3};

int bs_mix_init(struct bs_mix *m, const char *spec, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	if (!spec || strcmp(spec, "jesd219")) {
		snprintf(err, errlen, "%s %s: must be a size or jesd219", run_opt(RUN_OPT_BS),
		         spec ? spec : "(null)");
		return -1;
	}
	double c = 0;
	m->name = "jesd219";
	m->n = sizeof(jesd219_bytes) / sizeof(jesd219_bytes[0]);
	for (uint32_t i = 0; i < m->n; i++) {
		c += jesd219_pct[i];
		m->bytes[i] = jesd219_bytes[i];
		m->cum[i] = c / 100;
	}
	m->cum[m->n - 1] = 1;
	return 0;
}

uint32_t bs_mix_next(const struct bs_mix *m, uint64_t *rng)
{
	double r = (double)(fg_rand64(rng) >> 11) * 0x1.0p-53;
	uint32_t i = 0;
	while (i + 1 < m->n && r >= m->cum[i])
		i++;
	return m->bytes[i];
}

double bs_mix_mean(const struct bs_mix *m)
{
	double mean = 0, prev = 0;
	for (uint32_t i = 0; i < m->n; i++) {
		mean += (m->cum[i] - prev) * m->bytes[i];
		prev = m->cum[i];
	}
	return mean;
}

uint32_t workload_zone(const struct workload *w, uint64_t block)
{
	uint32_t z = 0;
	while (w->kind == WL_ZONED && z + 1 < w->nz && block >= w->zstart[z + 1])
		z++;
	return z;
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
