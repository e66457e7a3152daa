/* workload.h - synthetic device workloads: uniform, seq, zoned (fio's random_distribution=zoned). */
#ifndef FG_WORKLOAD_H
#define FG_WORKLOAD_H

#include <stdint.h>

#define WL_MAX_ZONES 16

struct workload {
	enum { WL_UNIFORM, WL_SEQ, WL_ZONED } kind;
	uint64_t nblocks; /* I/O-size blocks in the target range */
	uint64_t next;    /* seq cursor */
	uint32_t nz;
	double zr[WL_MAX_ZONES];    /* cumulative share of I/Os, 0..1 */
	uint64_t zstart[WL_MAX_ZONES + 1]; /* first block of each zone */
	uint64_t rng;
};

/* Parse "uniform", "seq" or "zoned:R1/F1:R2/F2:..." (percent of I/Os / percent of space).
 * Returns 0, or -1 after printing a clear error. */
int workload_init(struct workload *w, const char *spec, uint64_t nblocks, uint64_t seed);
/* The next block index (in I/O-size blocks). */
uint64_t workload_next(struct workload *w);
uint64_t fg_rand64(uint64_t *state);
static inline uint64_t fg_rand_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)fg_rand64(state) * n) >> 64);
}

#endif
