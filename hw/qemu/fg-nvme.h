/*
 * fg-nvme.h - the glue between QEMU's NVMe device (hw/nvme/ctrl.c, patched by
 * hw/qemu/nvme-ftl.patch) and hw/ftl, which is linked in unchanged (issue 14, docs/vm.md).
 * Plain C: no QEMU header, so that the glue is the project's code and the patch stays small.
 */
#ifndef FG_NVME_H
#define FG_NVME_H

#include <stddef.h>
#include <stdint.h>

#include "ftl.h"

/*
 * The drive behind the device: loaded from snapshot when that file exists, else built from
 * preset with sets ("key=value:key=value", ':' between pairs since ',' is QEMU's property
 * separator) applied. Refused, with a message naming the property, when its user capacity is
 * smaller than the namespace (capacity bytes). NULL with err.
 */
struct ftl *fg_nvme_open(const char *preset, const char *sets, const char *snapshot,
                         uint64_t capacity, char *err, size_t errlen);
/* Save the snapshot (if a path is given) and the stats JSON (if one is), then free the drive.
 * 0, or -1 with err (the drive is freed either way). */
int fg_nvme_close(struct ftl *f, const char *snapshot, const char *stats, char *err, size_t errlen);

#endif
