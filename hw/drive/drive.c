/*
 * drive.c - one emulated drive's life behind a device adapter (drive.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "atomicfile.h"
#include "drive.h"
#include "json.h"
#include "parse.h"

struct fg_drive {
	struct ftl *ftl;
	char *prefix, *snapshot, *stats, *data;
	uint64_t base;
	bool loaded, checkpoint_flush;
	uint64_t checkpoints;
	double checkpoint_s, stats_s;
	double next_ckpt, next_stats; /* NAN before the first fg_drive_due */
	pthread_mutex_t *lock;
};

/* hw/ftl's errors read "key=value: reason"; after "set=key=value: " print only the reason. */
static const char *reason(const char *err, const char *keyval)
{
	size_t n = strlen(keyval);
	return !strncmp(err, keyval, n) && err[n] == ':' && err[n + 1] == ' ' ? err + n + 2 : err;
}

int fg_drive_set(const char *prefix, struct ftl_config *cfg, const char *keyval, char *err,
                 size_t errlen)
{
	char key[FTL_NAME_MAX], e[256];
	const char *val;
	int rc = fg_keyval_split_copy(keyval, key, sizeof(key), &val);

	if (rc == -1)
		return snprintf(err, errlen,
		                "%sset=%s: expected key=value (keys: femu-gandalf config-keys)", prefix,
		                keyval),
		       -1;
	if (rc == -2) /* no key is this long */
		return snprintf(err, errlen,
		                "%sset=%s: unknown config key (keys: femu-gandalf config-keys)", prefix,
		                keyval),
		       -1;
	if (ftl_config_set(cfg, key, val, e, sizeof(e)))
		return snprintf(err, errlen, "%sset=%s: %s", prefix, keyval, reason(e, keyval)), -1;
	return 0;
}

int fg_drive_config(const struct fg_drive_params *p, struct ftl_config *cfg, char *err,
                    size_t errlen)
{
	const char *pre = p->prefix ? p->prefix : "";
	char e[1024];
	int rc, n = 0;

	ftl_config_default(cfg);
	rc = ftl_preset_load(cfg, p->preset, p->preset_dirs, NULL, e, sizeof(e));
	if (rc)
		return snprintf(err, errlen, "%spreset=%s: %s%s", pre, p->preset, e,
		                rc == FTL_E_NOENT
		                        ? "; FEMU_GANDALF_PRESETS=DIR replaces the search path"
		                        : ""),
		       -1;
	for (; p->sets && p->sets[n]; n++)
		if (fg_drive_set(pre, cfg, p->sets[n], err, errlen))
			return -1;
	if (ftl_config_validate(cfg, e, sizeof(e)))
		return snprintf(err, errlen, "%spreset=%s%s%s%s: %s", pre, p->preset,
		                n ? " with " : "", n ? pre : "", n ? "set=" : "", e),
		       -1;
	return 0;
}

/* The snapshot's drive, checked against the configuration when a preset is given. */
static struct ftl *from_snapshot(const struct fg_drive_params *p, const char *pre, char *err,
                                 size_t errlen)
{
	struct ftl_config want;
	struct ftl *f;
	char e[1024];

	if (!(f = ftl_snapshot_load(p->snapshot, e, sizeof(e)))) {
		snprintf(err, errlen, "%ssnapshot=%s: %s", pre, p->snapshot, e);
		return NULL;
	}
	if (p->preset && fg_drive_config(p, &want, err, errlen))
		goto fail;
	if (p->preset && ftl_config_diff(&want, ftl_get_config(f), e, sizeof(e))) {
		snprintf(err, errlen,
		         "%ssnapshot=%s: %s (%spreset= and %sset= must describe the drive the snapshot "
		         "was saved from)",
		         pre, p->snapshot, e, pre, pre);
		goto fail;
	}
	if (ftl_checkpoint_verify(f, p->data, e, sizeof(e))) {
		snprintf(err, errlen, "%ssnapshot=%s: %s", pre, p->snapshot, e);
		goto fail;
	}
	return f;
fail:
	ftl_destroy(f);
	return NULL;
}

/* A new drive from the configuration. */
static struct ftl *fresh(const struct fg_drive_params *p, const char *pre, char *err,
                         size_t errlen)
{
	struct ftl_config cfg;
	struct ftl *f;
	char e[512];

	if (!p->preset) {
		snprintf(err, errlen, "%spreset: needed unless %ssnapshot names an existing file", pre,
		         pre);
		return NULL;
	}
	if (fg_drive_config(p, &cfg, err, errlen))
		return NULL;
	if (!(f = ftl_create(&cfg, e, sizeof(e))))
		snprintf(err, errlen, "%spreset=%s: %s", pre, p->preset, e);
	return f;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *c = s ? strdup(s) : NULL;
	if (s && !c)
		*oom = true;
	return c;
}

struct fg_drive *fg_drive_open(const struct fg_drive_params *p, char *err, size_t errlen)
{
	const char *pre = p->prefix ? p->prefix : "";
	struct fg_drive *d;
	struct ftl_stats st;
	struct stat sb;
	struct ftl *f;
	bool oom = false, load = false;

	if (p->snapshot) {
		if (stat(p->snapshot, &sb) == 0) {
			load = true;
		} else if (errno != ENOENT) {
			snprintf(err, errlen, "%ssnapshot=%s: %s", pre, p->snapshot, strerror(errno));
			return NULL;
		}
	}
	if (!(f = load ? from_snapshot(p, pre, err, errlen) : fresh(p, pre, err, errlen)))
		return NULL;
	if ((d = calloc(1, sizeof(*d)))) {
		d->prefix = dup_or_null(pre, &oom);
		d->snapshot = dup_or_null(p->snapshot, &oom);
		d->stats = dup_or_null(p->stats, &oom);
		d->data = dup_or_null(p->data, &oom);
	}
	if (!d || oom) {
		snprintf(err, errlen, "%spreset: out of memory", pre);
		ftl_destroy(f);
		fg_drive_free(d);
		return NULL;
	}
	d->ftl = f;
	ftl_get_stats(f, &st);
	d->base = st.clock_ns;
	d->loaded = load;
	d->checkpoint_flush = p->checkpoint_flush;
	d->checkpoint_s = p->snapshot ? p->checkpoint_s : 0; /* nothing to save without one */
	d->stats_s = p->stats ? p->stats_s : 0;
	d->next_ckpt = d->next_stats = NAN;
	d->lock = p->lock;
	return d;
}

struct ftl *fg_drive_ftl(const struct fg_drive *d)
{
	return d->ftl;
}

uint64_t fg_drive_base(const struct fg_drive *d)
{
	return d->base;
}

bool fg_drive_loaded(const struct fg_drive *d)
{
	return d->loaded;
}

uint64_t fg_drive_checkpoints(const struct fg_drive *d)
{
	return d->checkpoints;
}

/* One period: due at *next, which then moves to now + period. */
static bool period_due(double *next, double period, double now)
{
	if (period <= 0 || now < *next)
		return false;
	*next = now + period;
	return true;
}

unsigned fg_drive_due(struct fg_drive *d, double now_s)
{
	unsigned due = 0;

	if (isnan(d->next_ckpt)) { /* the first call starts the periods */
		d->next_ckpt = now_s + d->checkpoint_s;
		d->next_stats = now_s + d->stats_s;
		return 0;
	}
	if (period_due(&d->next_ckpt, d->checkpoint_s, now_s))
		due |= FG_DRIVE_DUE_CHECKPOINT;
	if (period_due(&d->next_stats, d->stats_s, now_s))
		due |= FG_DRIVE_DUE_STATS;
	return due;
}

double fg_drive_next_due(const struct fg_drive *d)
{
	double t = INFINITY;

	if (isnan(d->next_ckpt))
		return t;
	if (d->checkpoint_s > 0)
		t = d->next_ckpt;
	if (d->stats_s > 0 && d->next_stats < t)
		t = d->next_stats;
	return t;
}

bool fg_drive_checkpoint_on_flush(const struct fg_drive *d)
{
	return d->checkpoint_flush && d->snapshot;
}

int fg_drive_checkpoint(struct fg_drive *d, char *err, size_t errlen)
{
	char e[1024];

	if (!d->snapshot)
		return 0;
	if (ftl_checkpoint(d->ftl, d->snapshot, d->data, e, sizeof(e)))
		return snprintf(err, errlen, "%ssnapshot=%s: %s", d->prefix, d->snapshot, e), -1;
	d->checkpoints++;
	return 0;
}

/* The stats text into *buf (*len bytes): -1 when the memory stream fails, else jout_finish()'s
 * verdict (0: whole). */
static int stats_text(struct fg_drive *d, void (*members)(struct json_out *j, void *arg),
                      void *arg, char **buf, size_t *len)
{
	const struct ftl_config *cfg = ftl_get_config(d->ftl);
	double bpd = (cfg->dwpd > 0 ? cfg->dwpd : 1) * (double)ftl_get_geometry(d->ftl)->user_bytes;
	struct json_out j;
	FILE *o = open_memstream(buf, len);
	int rc;

	if (!o)
		return -1;
	jout_init(&j, o);
	jout_object(&j, NULL, JOUT_BLOCK);
	if (members)
		members(&j, arg);
	if (d->lock)
		pthread_mutex_lock(d->lock);
	jout_u64(&j, "checkpoint_seq", ftl_checkpoint_seq(d->ftl)); /* of the state last saved */
	ftl_json_members(d->ftl, bpd, &j);
	if (d->lock)
		pthread_mutex_unlock(d->lock);
	jout_end(&j);
	rc = jout_finish(&j);
	return fclose(o) || !*buf ? -1 : rc;
}

int fg_drive_write_stats(struct fg_drive *d, void (*members)(struct json_out *j, void *arg),
                         void *arg, char *err, size_t errlen)
{
	char *buf = NULL, e[512];
	size_t len = 0;
	int rc;

	if (!d->stats)
		return 0;
	rc = stats_text(d, members, arg, &buf, &len);
	if (rc > 0) /* cannot happen short of a bug in the members: keep the last good file */
		snprintf(err, errlen, "%sstats=%s: %s", d->prefix, d->stats, jout_strerror(rc));
	else if (rc < 0)
		snprintf(err, errlen, "%sstats=%s: out of memory", d->prefix, d->stats);
	else if (fg_atomic_write(d->stats, buf, len, e, sizeof(e)))
		rc = -1, snprintf(err, errlen, "%sstats=%s", d->prefix, e);
	free(buf);
	return rc ? -1 : 0;
}

void fg_drive_free(struct fg_drive *d)
{
	if (!d)
		return;
	if (d->ftl)
		ftl_destroy(d->ftl);
	free(d->prefix);
	free(d->snapshot);
	free(d->stats);
	free(d->data);
	free(d);
}
