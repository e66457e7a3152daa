/*
 * fg-nvme.c - opening and closing the FTL behind QEMU's NVMe device (fg-nvme.h).
 *
 * Presets are looked up in $FEMU_GANDALF_PRESETS, then in the source tree the QEMU build was
 * made from (FG_PRESET_DIR, set by scripts/build-qemu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fg-nvme.h"
#if __has_include("fg-paths.h")
#include "fg-paths.h" /* written by scripts/build-qemu */
#endif

#ifndef FG_PRESET_DIR
#define FG_PRESET_DIR "/usr/share/femu-gandalf/presets"
#endif

static struct ftl *from_preset(const char *preset, const char *sets, char *err, size_t errlen)
{
	struct ftl_config cfg;
	char e[512], *copy, *kv, *save = NULL;
	const char *dirs[3] = {NULL, NULL, NULL};
	int nd = 0;
	if (getenv("FEMU_GANDALF_PRESETS"))
		dirs[nd++] = getenv("FEMU_GANDALF_PRESETS");
	dirs[nd] = FG_PRESET_DIR;
	ftl_config_default(&cfg);
	if (ftl_preset_load(&cfg, preset, dirs, NULL, e, sizeof(e))) {
		snprintf(err, errlen, "ftl-preset=%s: %s", preset, e);
		return NULL;
	}
	if (sets && *sets) {
		if (!(copy = strdup(sets))) {
			snprintf(err, errlen, "ftl-set: out of memory");
			return NULL;
		}
		for (kv = strtok_r(copy, ":", &save); kv; kv = strtok_r(NULL, ":", &save)) {
			char *eq = strchr(kv, '=');
			if (!eq || eq == kv) {
				snprintf(err, errlen, "ftl-set=%s: '%s' is not key=value", sets, kv);
				free(copy);
				return NULL;
			}
			*eq = 0;
			if (ftl_config_set(&cfg, kv, eq + 1, e, sizeof(e))) {
				snprintf(err, errlen, "ftl-set: %s", e);
				free(copy);
				return NULL;
			}
		}
		free(copy);
	}
	if (ftl_config_validate(&cfg, e, sizeof(e))) {
		snprintf(err, errlen, "ftl-preset=%s: %s", preset, e);
		return NULL;
	}
	struct ftl *f = ftl_create(&cfg, e, sizeof(e));
	if (!f)
		snprintf(err, errlen, "ftl-preset=%s: %s", preset, e);
	return f;
}

struct ftl *fg_nvme_open(const char *preset, const char *sets, const char *snapshot,
                         uint64_t capacity, char *err, size_t errlen)
{
	struct ftl *f;
	char e[512];
	if (snapshot && access(snapshot, F_OK) == 0) {
		if (!(f = ftl_snapshot_load(snapshot, e, sizeof(e)))) {
			snprintf(err, errlen, "ftl-snapshot=%s: %s", snapshot, e);
			return NULL;
		}
	} else if (!preset) {
		snprintf(err, errlen, "ftl-preset: needed unless ftl-snapshot names an existing file");
		return NULL;
	} else if (!(f = from_preset(preset, sets, err, errlen)))
		return NULL;
	uint64_t user = ftl_get_geometry(f)->user_bytes;
	if (user < capacity) {
		snprintf(err, errlen,
		         "ftl-preset=%s: the drive holds %llu bytes, the namespace %llu: size the "
		         "image to the drive (or a larger preset)",
		         preset ? preset : snapshot, (unsigned long long)user,
		         (unsigned long long)capacity);
		ftl_destroy(f);
		return NULL;
	}
	return f;
}

int fg_nvme_close(struct ftl *f, const char *snapshot, const char *stats, char *err, size_t errlen)
{
	char e[512];
	int rc = 0;
	if (snapshot && ftl_snapshot_save(f, snapshot, e, sizeof(e))) {
		snprintf(err, errlen, "ftl-snapshot=%s: %s", snapshot, e);
		rc = -1;
	}
	if (stats) {
		FILE *o = fopen(stats, "w");
		int bad = !o || ftl_json(f, 0, o);
		if ((o && fclose(o)) || bad) {
			snprintf(err, errlen, "ftl-stats=%s: cannot write it", stats);
			rc = -1;
		}
	}
	ftl_destroy(f);
	return rc;
}
