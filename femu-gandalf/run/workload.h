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

/* Parse "uniform", "seq", "zoned:R1/F1:R2/F2:..." (percent of I/Os / percent of space) or
 * "jesd219" (= zoned:50/5:30/15:20/80, JESD219's enterprise access distribution) over
 * nblocks I/O-size blocks. Returns 0, or -1 with one line naming --workload in err. */
int workload_init(struct workload *w, const char *spec, uint64_t nblocks, uint64_t seed, char *err,
                  size_t errlen);
/* The next block index (in I/O-size blocks). */
uint64_t workload_next(struct workload *w);
/* The zone (0 .. nz - 1) block lies in; 0 for a workload without zones. */
uint32_t workload_zone(const struct workload *w, uint64_t block);
uint64_t fg_rand64(uint64_t *state);

/*
 * A transfer-size mix. "jesd219": JESD219's enterprise endurance workload, in % of I/Os:
 * 512 B 4, 1 KiB, 1.5, 2, 2.5, 3, 3.5 KiB 1 each, 4 KiB 67, 8 KiB 10, 16 KiB 7, 32 KiB 3,
 * 64 KiB 3 (mean 7818.24 B). Sub-4 KiB writes are read-modify-writes of the FTL unit.
 */
#define BS_MIX_MAX 16
struct bs_mix {
	const char *name;
	uint32_t n;
	uint32_t bytes[BS_MIX_MAX];
	double cum[BS_MIX_MAX]; /* cumulative share of I/Os, 0..1 */
};
/* Returns 0, or -1 with one line naming --bs in err. */
int bs_mix_init(struct bs_mix *m, const char *spec, char *err, size_t errlen);
uint32_t bs_mix_next(const struct bs_mix *m, uint64_t *rng);
double bs_mix_mean(const struct bs_mix *m);
static inline uint64_t fg_rand_below(uint64_t *state, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)fg_rand64(state) * n) >> 64);
}

#endif
