/*
 * fg-nvme.c - the FTL behind QEMU's NVMe device (fg-nvme.h): the device's properties turned
 * into hw/drive's parameters, and its commands into FTL calls. The drive's life (preset,
 * snapshot, checkpoints, the stats file, their cadence) is hw/drive's, shared with the nbdkit
 * plugin.
 *
 * Presets are looked up in $FEMU_GANDALF_PRESETS when it is set, else in the source tree the
 * QEMU build was made from (FG_PRESET_DIR, set by scripts/build-qemu).
 *
 * Time. The FTL gets now = base + QEMU's virtual clock, base being a loaded snapshot's latest
 * completion time (0 for a new drive), so the FTL's clock never goes backwards across restarts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drive.h" /* (copied beside this file by scripts/build-qemu) */
#include "fg-nvme.h"
#if __has_include("fg-paths.h")
#include "fg-paths.h" /* written by scripts/build-qemu */
#endif

#ifndef FG_PRESET_DIR
#define FG_PRESET_DIR "/usr/share/femu-gandalf/presets"
#endif

struct fg_nvme {
	struct fg_drive *drive;
	struct ftl *ftl;
	uint64_t base;
	uint64_t fdp_seen; /* FDP events logged by the FTL that fg_nvme_fdp_events() returned */
	bool latency;
};

/* The ftl-set property's "key=value:key=value" (':' between pairs, since ',' separates QEMU's
 * properties) as a NULL-terminated array in one allocation, or NULL when out of memory. */
static char **split_sets(const char *list)
{
	size_t n = 2, len = strlen(list) + 1;
	char **v, *s;

	for (const char *c = list; *c; c++)
		n += *c == ':';
	if (!(v = malloc(n * sizeof(*v) + len)))
		return NULL;
	s = memcpy((char *)(v + n), list, len);
	n = 0;
	for (char *c = s; c;) {
		char *next = strchr(c, ':');
		if (next)
			*next++ = 0;
		if (*c) /* (an empty pair, as in "a=1::b=2", is no set) */
			v[n++] = c;
		c = next;
	}
	v[n] = NULL;
	return v;
}

struct fg_nvme *fg_nvme_open(const struct fg_nvme_params *p, uint64_t capacity, char *err,
                             size_t errlen)
{
	struct ftl_search_spec spec = {.env = "FEMU_GANDALF_PRESETS", .data_dir = FG_PRESET_DIR};
	struct ftl_search_path dirs;
	struct fg_nvme *d = calloc(1, sizeof(*d));
	/* the subsystem's FDP as two sets ahead of the user's (checked against them below) */
	const char *user = p->sets ? p->sets : "";
	size_t llen = strlen(user) + 64;
	char *list = malloc(llen);
	char **sets = NULL;
	if (list) {
		if (p->fdp_nruh)
			snprintf(list, llen, "fdp=on:host_streams=%u:%s", p->fdp_nruh, user);
		else
			snprintf(list, llen, "%s", user);
		sets = split_sets(list);
		free(list);
	}

	if (!d || !sets) {
		snprintf(err, errlen, "ftl-preset: out of memory");
		free(d);
		free(sets);
		return NULL;
	}
	ftl_search_path(&dirs, &spec);
	struct fg_drive_params dp = {
	        .prefix = "ftl-",
	        .preset = p->preset,
	        .sets = (const char *const *)sets,
	        .preset_dirs = dirs.dir,
	        .snapshot = p->snapshot,
	        .stats = p->stats,
	        .data = p->data,
	        .checkpoint_s = p->checkpoint,
	        .stats_s = p->checkpoint, /* the stats file goes with each checkpoint */
	        .checkpoint_flush = p->checkpoint_flush,
	};
	d->drive = fg_drive_open(&dp, err, errlen);
	free(sets);
	if (!d->drive) {
		free(d);
		return NULL;
	}
	d->ftl = fg_drive_ftl(d->drive);
	const struct ftl_config *fc = ftl_get_config(d->ftl);
	uint64_t ubytes = ftl_get_geometry(d->ftl)->user_bytes;
	if (fc->fdp != !!p->fdp_nruh || (p->fdp_nruh && fc->host_streams != p->fdp_nruh)) {
		/* FDP is the subsystem's to declare: the guest sees it there (its log pages, its
		 * placement handles), and each handle must be one of the FTL's streams */
		if (!p->fdp_nruh)
			snprintf(err, errlen,
			         "ftl-set=fdp=on%s: FDP is declared on the subsystem: put the controller on "
			         "an nvme-subsys with fdp=on (docs/vm.md)",
			         p->snapshot ? " (or an FDP snapshot)" : "");
		else
			snprintf(err, errlen,
			         "ftl-set: the drive has %s and %u host streams, the nvme-subsys fdp.nruh=%u "
			         "reclaim unit handles: one stream per handle (leave fdp and host_streams "
			         "out of ftl-set)",
			         fc->fdp ? "fdp=on" : "fdp=off", fc->host_streams, p->fdp_nruh);
		fg_drive_free(d->drive);
		free(d);
		return NULL;
	}
	if (ubytes < capacity) {
		snprintf(err, errlen,
		         "ftl-preset=%s: the drive holds %llu bytes, the namespace %llu: size the "
		         "image to the drive (or a larger preset)",
		         p->preset ? p->preset : p->snapshot, (unsigned long long)ubytes,
		         (unsigned long long)capacity);
		fg_drive_free(d->drive);
		free(d);
		return NULL;
	}
	d->base = fg_drive_base(d->drive);
	d->latency = p->latency;
	if (fc->fdp) { /* events logged before (a loaded snapshot's) are not the guest's news */
		struct ftl_fdp_stats st;
		ftl_fdp_stats(d->ftl, &st);
		d->fdp_seen = st.events;
	}
	return d;
}

int fg_nvme_io(struct fg_nvme *d, char op, uint64_t off, uint64_t len, unsigned stream,
               uint64_t vnow_ns, uint64_t *delay_ns)
{
	uint64_t now = d->base + vnow_ns, done = now;
	int rc = FTL_OK;

	switch (op) {
	case 'R':
		rc = ftl_read(d->ftl, off, len, now, &done);
		break;
	case 'W':
		rc = ftl_write(d->ftl, off, len, stream, now, &done);
		break;
	case 'Z':
		rc = ftl_write_zeroes(d->ftl, off, len, true, now, &done);
		break;
	case 'D':
		rc = ftl_trim(d->ftl, off, len, now, &done);
		break;
	case 'F':
		rc = ftl_flush(d->ftl, now, &done);
		break;
	}
	*delay_ns = d->latency && done > now ? done - now : 0;
	return rc;
}

void fg_nvme_fdp_stats(struct fg_nvme *d, struct ftl_fdp_stats *st)
{
	ftl_fdp_stats(d->ftl, st);
}

size_t fg_nvme_fdp_events(struct fg_nvme *d, struct ftl_fdp_event *ev, size_t max)
{
	struct ftl_fdp_event ring[FTL_FDP_EVENTS];
	struct ftl_fdp_stats st;
	ftl_fdp_stats(d->ftl, &st);
	size_t kept = ftl_fdp_events(d->ftl, ring, FTL_FDP_EVENTS);
	uint64_t fresh = st.events - d->fdp_seen;
	size_t avail = fresh < kept ? (size_t)fresh : kept; /* the ring's newest avail are new */
	size_t n = avail < max ? avail : max;
	memcpy(ev, ring + kept - avail, n * sizeof(*ev));
	d->fdp_seen += (fresh - avail) + n; /* those the ring lost, and those returned */
	return n;
}

int fg_nvme_ruh_update(struct fg_nvme *d, unsigned ruh, uint64_t vnow_ns)
{
	uint64_t done;
	return ftl_fdp_ruh_update(d->ftl, ruh, d->base + vnow_ns, &done);
}

uint8_t fg_nvme_health(struct fg_nvme *d, struct ftl_stats *st)
{
	uint8_t w = 0;
	ftl_get_stats(d->ftl, st);
	if (st->available_spare < st->available_spare_threshold)
		w |= 0x1;
	if (st->read_only)
		w |= 0x4 | 0x8;
	return w;
}

bool fg_nvme_checkpoint_due(struct fg_nvme *d, double now_s, bool after_flush)
{
	if (after_flush)
		return fg_drive_checkpoint_on_flush(d->drive);
	return fg_drive_due(d->drive, now_s) != 0;
}

int fg_nvme_checkpoint(struct fg_nvme *d, double now_s, char *err, size_t errlen)
{
	char e[1024];
	int rc = fg_drive_checkpoint(d->drive, err, errlen);

	if (fg_drive_write_stats(d->drive, NULL, NULL, e, sizeof(e)) && !rc) {
		snprintf(err, errlen, "%s", e); /* the first error is the one reported */
		rc = -1;
	}
	return rc;
}

int fg_nvme_close(struct fg_nvme *d, char *err, size_t errlen)
{
	int rc;
	if (!d)
		return 0;
	rc = fg_nvme_checkpoint(d, 0, err, errlen);
	fg_drive_free(d->drive);
	free(d);
	return rc;
}
