/*
 * fg-nvme.h - the glue between QEMU's NVMe device (hw/nvme/ctrl.c, patched by
 * hw/qemu/nvme-ftl.patch) and hw/ftl, which is linked in unchanged (docs/vm.md).
 * Plain C: no QEMU header, so that the glue is the project's code and the patch stays small.
 * The patch calls these from QEMU's main loop only (the device has no iothread of its own).
 */
#ifndef FG_NVME_H
#define FG_NVME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftl.h"

/* The -device nvme properties (docs/vm.md). Strings may be NULL. */
struct fg_nvme_params {
	const char *preset, *sets, *snapshot, *stats;
	const char *data;   /* the drive's backing file (its mtime binds the checkpoints), or NULL */
	uint32_t checkpoint; /* seconds between checkpoints (with snapshot); 0: at exit only */
	bool checkpoint_flush, latency;
	/* the subsystem's FDP (nvme-subsys fdp=on): its fdp.nruh, 0 without FDP. The drive is made
	 * with fdp=on and one host stream per reclaim unit handle (docs/vm.md) */
	uint32_t fdp_nruh;
};

struct fg_nvme;

/*
 * The drive behind the device: loaded from p->snapshot when that file exists (it must match the
 * preset and sets when those are given, and the data file must be the one it was saved with),
 * else built from p->preset with p->sets ("key=value:key=value", ':' between pairs since ',' is
 * QEMU's property separator). Refused when its user capacity is smaller than the namespace
 * (capacity bytes). NULL with err naming the property.
 */
struct fg_nvme *fg_nvme_open(const struct fg_nvme_params *p, uint64_t capacity, char *err,
                             size_t errlen);

/* One command through the FTL at QEMU's virtual time vnow_ns. op: 'R' read, 'W' write,
 * 'Z' write zeroes (deallocating), 'D' deallocate, 'F' flush; stream: a write's reclaim unit
 * handle with FDP (one >= fdp_nruh is logged as an invalid placement ID and goes to 0), else 0.
 * *delay_ns: how long after vnow the model completes it (0 without latency). FTL_OK, or
 * FTL_E_WORN for a write to a read-only (end of life) drive; the command then fails and nothing
 * is written. */
int fg_nvme_io(struct fg_nvme *d, char op, uint64_t off, uint64_t len, unsigned stream,
               uint64_t vnow_ns, uint64_t *delay_ns);

/* FDP. The FTL's statistics (hbmw, mbmw, mbe: the statistics log page; ruh[i].ru_avail_bytes:
 * the RUH status's RUAMW), all 0 without FDP. fg_nvme_fdp_events() copies the events the FTL
 * logged since the last call (oldest first, at most max; a gap beyond the FTL's ring of
 * FTL_FDP_EVENTS is lost, as a real drive's log overflows) and returns how many.
 * fg_nvme_ruh_update() is I/O Management Send's Reclaim Unit Handle Update for one handle:
 * FTL_OK, FTL_E_INVAL (no such handle), FTL_E_WORN. */
void fg_nvme_fdp_stats(struct fg_nvme *d, struct ftl_fdp_stats *st);
size_t fg_nvme_fdp_events(struct fg_nvme *d, struct ftl_fdp_event *ev, size_t max);
int fg_nvme_ruh_update(struct fg_nvme *d, unsigned ruh, uint64_t vnow_ns);

/* The SMART critical-warning bits the drive's state sets (spare 0x1, reliability 0x4,
 * read-only 0x8), and the log pages' figures. O(drive metadata): call it per log page or per
 * second, not per command. */
uint8_t fg_nvme_health(struct fg_nvme *d, struct ftl_stats *st);

/* Whether a checkpoint is due at real time now_s (seconds, any monotonic origin; the first call
 * starts the period), or, with after_flush, after a guest flush (now_s unused);
 * fg_nvme_checkpoint() takes one (the caller has made the data file durable first) and writes
 * the stats file. 0, or -1 with err. */
bool fg_nvme_checkpoint_due(struct fg_nvme *d, double now_s, bool after_flush);
int fg_nvme_checkpoint(struct fg_nvme *d, double now_s, char *err, size_t errlen);

/* A final checkpoint (with a snapshot) and the stats file, then free the drive. 0, or -1 with
 * err (freed either way). */
int fg_nvme_close(struct fg_nvme *d, char *err, size_t errlen);

#endif
