/* preset.h - drive presets (INI files) and --set overrides, on top of hw/ftl's config table. */
#ifndef FG_PRESET_H
#define FG_PRESET_H

#include <stdbool.h>
#include <stdio.h>

#include "ftl.h"

/* Load preset NAME (from the preset directory) or FILE (a path containing '/' or ending in .ini)
 * into cfg, starting from the defaults. On error prints "femu-gandalf: ..." to stderr. */
int fg_preset_load(struct ftl_config *cfg, const char *name_or_file);
/* Apply one "key=value" override. */
int fg_preset_set(struct ftl_config *cfg, const char *kv);
/* Preset directory: $FEMU_GANDALF_PRESETS, else the source tree's hw/ftl/presets. */
const char *fg_preset_dir(void);
/* Print the available presets with their one-line descriptions. */
void fg_preset_list(FILE *out);
/* Parse a size such as 4k, 128KiB, 100G, 1T, 4096 (binary suffixes). Returns false if bad. */
bool fg_parse_size(const char *s, unsigned long long *out);

#endif
