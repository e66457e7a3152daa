/*
 * drive.h - one emulated drive's life behind a device adapter: the part QEMU's NVMe device
 * (hw/qemu/fg-nvme.c) and the nbdkit plugin (hw/nbdkit/plugin.c) share, so that the two device
 * paths cannot drift apart. The adapters keep protocol translation only: requests, the data
 * store, their own parameters' syntax.
 *
 *   struct fg_drive_params p = {.prefix = "ftl-", .preset = "tiny", .sets = sets,
 *                               .snapshot = "d.snap", .stats = "d.json", .data = "disk.img",
 *                               .checkpoint_s = 60, .stats_s = 60};
 *   struct fg_drive *d = fg_drive_open(&p, err, sizeof(err));   // NULL: err names the property
 *   ftl_write(fg_drive_ftl(d), off, len, 0, fg_drive_base(d) + elapsed_ns, &done);
 *   unsigned due = fg_drive_due(d, now_s);                   // every tick
 *   if (due & FG_DRIVE_DUE_CHECKPOINT) { make the data durable; fg_drive_checkpoint(d, ...); }
 *   if (due & FG_DRIVE_DUE_STATS) fg_drive_write_stats(d, NULL, NULL, ...);
 *   ... at exit: make the data durable, fg_drive_checkpoint, fg_drive_write_stats, fg_drive_free
 *
 * What it does, once for both paths:
 * - the configuration: a preset (name or .ini file) from a search path, then key=value sets,
 *   validated as a whole;
 * - the drive: loaded from the snapshot file when it exists (it must describe the same drive as
 *   the preset and sets, when a preset is given, and be bound to the same data file:
 *   hw/ftl/checkpoint.c), else built new;
 * - the virtual clock's base: a loaded drive's latest completion time (0 for a new one), so
 *   the FTL's clock never runs backwards across restarts;
 * - checkpoints: the FTL state saved crash-safe and bound to the data file (the adapter makes
 *   the data durable first: it owns the data);
 * - the stats file: the adapter's own members, the checkpoint sequence and the FTL's figures
 *   (lifetimes at the preset's rated DWPD), written whole or not at all (common/atomicfile);
 * - the cadence: a checkpoint every checkpoint_s seconds (with a snapshot), the stats file every
 *   stats_s seconds (with a stats file), and a checkpoint after a flush when asked.
 *
 * Errors read "PREFIXKEY=VALUE: reason" in the adapter's own spelling of its properties (QEMU's
 * "ftl-preset=nope: ...", nbdkit's "preset=nope: ..."). Not thread-safe: the adapter serialises
 * its calls, and params.lock (when set) is taken around the FTL reads the stats file makes, so
 * that the file itself is written outside the adapter's lock.
 */
#ifndef FG_DRIVE_H
#define FG_DRIVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ftl.h"

struct json_out;

struct fg_drive_params {
	const char *prefix;            /* the adapter's property prefix in messages ("ftl-", "") */
	const char *preset;            /* name or .ini file; NULL: the snapshot must exist */
	const char *const *sets;       /* "key=value" each, applied in order; NULL-terminated */
	const char *const *preset_dirs; /* where a preset name is looked up; NULL-terminated */
	const char *snapshot;          /* loaded when it exists, written by checkpoints; or NULL */
	const char *stats;             /* the JSON stats file, or NULL */
	const char *data;              /* the data file checkpoints are bound to, or NULL */
	double checkpoint_s;           /* seconds between checkpoints; 0: only when asked */
	double stats_s;                /* seconds between stats files; 0: only when asked */
	bool checkpoint_flush;         /* also a checkpoint after every flush (with a snapshot) */
	pthread_mutex_t *lock;         /* held around the stats file's FTL reads, or NULL */
};

struct fg_drive;

/* The configuration p->preset and p->sets describe, validated: 0, or -1 with err. */
int fg_drive_config(const struct fg_drive_params *p, struct ftl_config *cfg, char *err,
                    size_t errlen);

/* One "key=value" onto cfg (its syntax, key and bounds; relations between keys are checked by
 * fg_drive_config): 0, or -1 with err ("PREFIXset=key=value: reason"). For adapters that check
 * each set as it is given. */
int fg_drive_set(const char *prefix, struct ftl_config *cfg, const char *keyval, char *err,
                 size_t errlen);

/* The drive p describes (above). NULL with err, and nothing written. The strings in p are
 * copied. */
struct fg_drive *fg_drive_open(const struct fg_drive_params *p, char *err, size_t errlen);

struct ftl *fg_drive_ftl(const struct fg_drive *d);
uint64_t fg_drive_base(const struct fg_drive *d); /* virtual ns at open */
bool fg_drive_loaded(const struct fg_drive *d);   /* opened from the snapshot */
uint64_t fg_drive_checkpoints(const struct fg_drive *d); /* taken since open */

enum { FG_DRIVE_DUE_CHECKPOINT = 1, FG_DRIVE_DUE_STATS = 2 };

/* What is due at now_s (seconds on any monotonic clock): FG_DRIVE_DUE_* bits; each one returned
 * starts its next period at now_s. The first call starts both periods and returns 0.
 * fg_drive_next_due(): when the next is due (the same clock), INFINITY when none is periodic
 * (or before the first call to fg_drive_due). */
unsigned fg_drive_due(struct fg_drive *d, double now_s);
double fg_drive_next_due(const struct fg_drive *d);

/* Whether a flush should be followed by a checkpoint (checkpoint_flush, with a snapshot). */
bool fg_drive_checkpoint_on_flush(const struct fg_drive *d);

/* Save the state to the snapshot, bound to the data file (which the caller has made durable):
 * 0 (also without a snapshot: nothing to do), or -1 with err; the previous snapshot then
 * stands. */
int fg_drive_checkpoint(struct fg_drive *d, char *err, size_t errlen);

/* The stats file: one JSON object, members(j, arg)'s first when given, then checkpoint_seq
 * and the FTL's figures. 0 (also without a stats file), or -1 with err; the previous file then
 * stands. */
int fg_drive_write_stats(struct fg_drive *d, void (*members)(struct json_out *j, void *arg),
                         void *arg, char *err, size_t errlen);

/* The drive and its copies freed; nothing is written (checkpoint first). NULL is ignored. */
void fg_drive_free(struct fg_drive *d);

#endif
