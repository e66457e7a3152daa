/*
 * fg-nvme.c - the FTL behind QEMU's NVMe device (fg-nvme.h).
 *
 * Presets are looked up in $FEMU_GANDALF_PRESETS, then in the source tree the QEMU build was
 * made from (FG_PRESET_DIR, set by scripts/build-qemu).
 *
 * Time. The FTL gets now = base + QEMU's virtual clock, base being a loaded snapshot's latest
 * completion time (0 for a new drive), so the FTL's clock never goes backwards across restarts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h" /* (copied beside this file by scripts/build-qemu) */
#include "fg-nvme.h"
#if __has_include("fg-paths.h")
#include "fg-paths.h" /* written by scripts/build-qemu */
#endif

#ifndef FG_PRESET_DIR
#define FG_PRESET_DIR "/usr/share/femu-gandalf/presets"
#endif

struct fg_nvme {
	struct ftl *ftl;
	char *snapshot, *stats, *data;
	uint64_t base;
	uint32_t checkpoint;
	bool checkpoint_flush, latency;
	double last_ckpt; /* real seconds of the last checkpoint; < 0 before the first tick */
};

/* cfg from preset, with sets applied and validated. 0, or -1 with err. */
static int preset_config(struct ftl_config *cfg, const char *preset, const char *sets, char *err,
                         size_t errlen)
{
	char e[512], *copy, *kv, *save = NULL;
	const char *dirs[3] = {NULL, NULL, NULL};
	int nd = 0, rc = 0;
	if (getenv("FEMU_GANDALF_PRESETS"))
		dirs[nd++] = getenv("FEMU_GANDALF_PRESETS");
	dirs[nd] = FG_PRESET_DIR;
	ftl_config_default(cfg);
	if (ftl_preset_load(cfg, preset, dirs, NULL, e, sizeof(e)))
		return snprintf(err, errlen, "ftl-preset=%s: %s", preset, e), -1;
	if (!(copy = strdup(sets ? sets : "")))
		return snprintf(err, errlen, "ftl-set: out of memory"), -1;
	for (kv = strtok_r(copy, ":", &save); kv && !rc; kv = strtok_r(NULL, ":", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq || eq == kv) {
			snprintf(err, errlen, "ftl-set=%s: '%s' is not key=value", sets, kv);
			rc = -1;
			break;
		}
		*eq = 0;
		if (ftl_config_set(cfg, kv, eq + 1, e, sizeof(e))) {
			snprintf(err, errlen, "ftl-set: %s", e);
			rc = -1;
		}
	}
	free(copy);
	if (!rc && ftl_config_validate(cfg, e, sizeof(e))) {
		snprintf(err, errlen, "ftl-preset=%s: %s", preset, e);
		rc = -1;
	}
	return rc;
}

/* The snapshot's drive, checked against the preset (when given) and the data file. */
static struct ftl *from_snapshot(const struct fg_nvme_params *p, char *err, size_t errlen)
{
	struct ftl_config want;
	struct ftl *f;
	char e[1024];

	if (!(f = ftl_snapshot_load(p->snapshot, e, sizeof(e)))) {
		snprintf(err, errlen, "ftl-snapshot=%s: %s", p->snapshot, e);
		return NULL;
	}
	if (p->preset) {
		if (preset_config(&want, p->preset, p->sets, err, errlen))
			goto fail;
		if (ftl_config_diff(&want, ftl_get_config(f), e, sizeof(e))) {
			snprintf(err, errlen,
			         "ftl-snapshot=%s: %s (ftl-preset and ftl-set must describe the drive "
			         "the snapshot was saved from, or be left out)",
			         p->snapshot, e);
			goto fail;
		}
	}
	if (ftl_checkpoint_verify(f, p->data, e, sizeof(e))) {
		snprintf(err, errlen, "ftl-snapshot=%s: %s", p->snapshot, e);
		goto fail;
	}
	return f;
fail:
	ftl_destroy(f);
	return NULL;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		*oom = true;
	return c;
}

struct fg_nvme *fg_nvme_open(const struct fg_nvme_params *p, uint64_t capacity, char *err,
                             size_t errlen)
{
	struct ftl_config cfg;
	struct ftl_stats st;
	struct ftl *f = NULL;
	char e[512];
	bool oom = false;

	if (p->snapshot && access(p->snapshot, F_OK) == 0) {
		if (!(f = from_snapshot(p, err, errlen)))
			return NULL;
	} else if (!p->preset) {
		snprintf(err, errlen, "ftl-preset: needed unless ftl-snapshot names an existing file");
		return NULL;
	} else if (preset_config(&cfg, p->preset, p->sets, err, errlen)) {
		return NULL;
	} else if (!(f = ftl_create(&cfg, e, sizeof(e)))) {
		snprintf(err, errlen, "ftl-preset=%s: %s", p->preset, e);
		return NULL;
	}
	uint64_t user = ftl_get_geometry(f)->user_bytes;
	if (user < capacity) {
		snprintf(err, errlen,
		         "ftl-preset=%s: the drive holds %llu bytes, the namespace %llu: size the "
		         "image to the drive (or a larger preset)",
		         p->preset ? p->preset : p->snapshot, (unsigned long long)user,
		         (unsigned long long)capacity);
		ftl_destroy(f);
		return NULL;
	}
	struct fg_nvme *d = calloc(1, sizeof(*d));
	if (d) {
		d->snapshot = dup_or_null(p->snapshot, &oom);
		d->stats = dup_or_null(p->stats, &oom);
		d->data = dup_or_null(p->data, &oom);
	}
	if (!d || oom) {
		snprintf(err, errlen, "ftl-preset: out of memory");
		ftl_destroy(f);
		fg_nvme_close(d, e, sizeof(e)); /* no drive: frees the strings only */
		return NULL;
	}
	d->ftl = f;
	ftl_get_stats(f, &st);
	d->base = st.clock_ns;
	d->checkpoint = p->checkpoint;
	d->checkpoint_flush = p->checkpoint_flush;
	d->latency = p->latency;
	d->last_ckpt = -1;
	return d;
}

int fg_nvme_io(struct fg_nvme *d, char op, uint64_t off, uint64_t len, uint64_t vnow_ns,
               uint64_t *delay_ns)
{
	uint64_t now = d->base + vnow_ns, done = now;
	int rc = FTL_OK;

	switch (op) {
	case 'R':
		rc = ftl_read(d->ftl, off, len, now, &done);
		break;
	case 'W':
		rc = ftl_write(d->ftl, off, len, 0, now, &done);
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

static int write_stats(struct fg_nvme *d, char *err, size_t errlen)
{
	struct fg_atomic a;
	FILE *o;
	char why[256];

	if (!d->stats)
		return 0;
	/* renamed over it when whole (common/atomicfile): a reader never sees half a file */
	if (fg_atomic_open(&a, d->stats, why, sizeof(why)))
		return snprintf(err, errlen, "ftl-stats=%s", why), -1;
	if (!(o = fg_atomic_stream(&a, why, sizeof(why))) || ftl_json(d->ftl, 0, o)) {
		if (o)
			snprintf(why, sizeof(why), "%s: cannot write it", d->stats);
		fg_atomic_abort(&a);
		return snprintf(err, errlen, "ftl-stats=%s", why), -1;
	}
	if (fg_atomic_commit(&a, why, sizeof(why)))
		return snprintf(err, errlen, "ftl-stats=%s", why), -1;
	return 0;
}

bool fg_nvme_checkpoint_due(struct fg_nvme *d, double now_s, bool after_flush)
{
	if (after_flush)
		return d->checkpoint_flush && d->snapshot;
	if (d->last_ckpt < 0) /* the first tick starts the period */
		d->last_ckpt = now_s;
	/* (without a snapshot or a stats file there is nothing to write) */
	return d->checkpoint && (d->snapshot || d->stats) && now_s - d->last_ckpt >= d->checkpoint;
}

int fg_nvme_checkpoint(struct fg_nvme *d, double now_s, char *err, size_t errlen)
{
	char e[1024];
	int rc = 0;

	d->last_ckpt = now_s;
	if (d->snapshot && ftl_checkpoint(d->ftl, d->snapshot, d->data, e, sizeof(e))) {
		snprintf(err, errlen, "ftl-snapshot=%s: %s", d->snapshot, e);
		rc = -1;
	}
	if (write_stats(d, e, sizeof(e)) && !rc) { /* the first error is the one reported */
		snprintf(err, errlen, "%s", e);
		rc = -1;
	}
	return rc;
}

int fg_nvme_close(struct fg_nvme *d, char *err, size_t errlen)
{
	int rc = 0;
	if (!d)
		return 0;
	if (d->ftl)
		rc = fg_nvme_checkpoint(d, 0, err, errlen);
	if (d->ftl)
		ftl_destroy(d->ftl);
	free(d->snapshot);
	free(d->stats);
	free(d->data);
	free(d);
	return rc;
}
