/*
 * workload.h - synthetic device workloads: uniform, seq, zoned (fio's random_distribution=zoned),
 * and the project's splitmix64 generator behind them.
 *
 * Part of femu-gandalf/run/ (docs/run.md): ssd_run() drives these generators, and `bench` draws
 * its random offsets from fg_rand_below(). Plain C11, no GLib, no stdio output: errors go into
 * the caller's buffer.
 */
#ifndef FG_WORKLOAD_H
#define FG_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#define WL_MAX_ZONES 16

struct workload {
	enum { WL_UNIFORM, WL_SEQ, WL_ZONED } kind;
	uint64_t nblocks; /* I/O-size blocks in the target range */
	uint64_t next;    /* seq cursor */
	uint32_t nz;
	double zr[WL_MAX_ZONES];           /* cumulative share of I/Os, 0..1 */
	uint64_t zstart[WL_MAX_ZONES + 1]; /* first block of each zone */
	uint64_t rng;
};

/* Parse "uniform", "seq" or "zoned:R1/F1:R2/F2:..." (percent of I/Os / percent of space) over
 * nblocks I/O-size blocks. Returns 0, or -1 with one line naming --workload in err. */
int workload_init(struct workload *w, const char *spec, uint64_t nblocks, uint64_t seed, char *err,
                  size_t errlen);
/* The next block index (in I/O-size blocks). */
uint64_t workload_next(struct workload *w);
uint64_t fg_rand64(uint64_t *state);
static inline uint64_t fg_rand_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)fg_rand64(state) * n) >> 64);
}

#endif
