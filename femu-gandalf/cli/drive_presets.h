/* drive_presets.h - the CLI's drive presets: where they are, errors on stderr, --set; hw/ftl
 * reads them. */
#ifndef FG_DRIVE_PRESETS_H
#define FG_DRIVE_PRESETS_H

#include <stdbool.h>
#include <stdio.h>

#include "ftl.h"
#include "parse.h" /* fg_parse_size(): sizes such as 4k, 128KiB, 100G, 1.5T */

/* Load preset NAME (looked up on fg_preset_search()) or FILE (a path containing '/' or ending
 * in .ini) into cfg, starting from the defaults (ftl_preset_load). On error prints
 * "femu-gandalf: ..." to stderr and returns -1. */
int fg_preset_load(struct ftl_config *cfg, const char *name_or_file);
/* Apply one "key=value" override. */
int fg_preset_set(struct ftl_config *cfg, const char *keyval);
/* The binary's preset search path (docs/install.md), built on first use. */
const struct ftl_search_path *fg_preset_search(void);
/* Print the available presets with their one-line descriptions; -1 when no directory opens. */
int fg_preset_list(FILE *out);
/* `presets --json`: every preset as an array of objects, or name's alone (sets applied, may be
 * NULL) as one object (docs/output.md). 0; -1 after saying why (a bad name or set); 1 when the
 * output failed. */
int fg_preset_json(FILE *out, const char *name, char **sets);

#endif
