/*
 * preset.c - the CLI's side of drive presets. hw/ftl reads them (ftl_preset_load, ftl.h) and
 * builds the search path; this file says where the femu-gandalf binary looks (docs/install.md:
 * $FEMU_GANDALF_PRESETS, the source tree for the uninstalled build/femu-gandalf, else the
 * installed datadir found relative to the binary), prints the errors, lists the presets and
 * applies --set overrides.
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fg_paths.h"
#include "preset.h"

const struct ftl_search_path *fg_preset_search(void)
{
	static struct ftl_search_path sp;
	static bool done;
	const struct ftl_search_spec spec = {
		.env = "FEMU_GANDALF_PRESETS",
		.build_dir = FG_BUILD_ROOT,
		.src_dir = FG_SOURCE_ROOT "/hw/ftl/presets",
		.install_dir = FG_BINDIR,
		.data_dir = FG_PKGDATADIR "/presets",
	};

	if (!done)
		ftl_search_path(&sp, &spec);
	done = true;
	return &sp;
}

int fg_preset_load(struct ftl_config *cfg, const char *name)
{
	char err[1024];
	int rc = ftl_preset_load(cfg, name, fg_preset_search()->dir, NULL, err, sizeof(err));

	if (rc == FTL_E_NOENT)
		fprintf(stderr, "femu-gandalf: %s; try 'femu-gandalf presets'\n", err);
	else if (rc)
		fprintf(stderr, "femu-gandalf: %s\n", err);
	return rc ? -1 : 0;
}

int fg_preset_set(struct ftl_config *cfg, const char *kv)
{
	char key[FTL_NAME_MAX], err[256];
	const char *val;
	int rc = fg_kv_split_copy(kv, key, sizeof(key), &val);

	if (rc == -1) {
		fprintf(stderr, "femu-gandalf: --set %s: expected key=value\n", kv);
		return -1;
	}
	if (rc == -2) { /* no key is this long */
		fprintf(stderr, "femu-gandalf: --set %s: unknown config key\n", kv);
		return -1;
	}
	if (ftl_config_set(cfg, key, val, err, sizeof(err))) {
		fprintf(stderr, "femu-gandalf: --set %s\n", err);
		return -1;
	}
	return 0;
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
	return g_ascii_strcasecmp(*(char *const *)a, *(char *const *)b);
}

/* Every NAME.ini on the search path, the first directory's copy of a name winning (as in
 * ftl_preset_load), sorted by name, with its description. */
int fg_preset_list(FILE *out)
{
	const struct ftl_search_path *sp = fg_preset_search();
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	bool opened = false;
	int rc = 0;

	for (int i = 0; sp->dir[i]; i++) {
		GDir *d = g_dir_open(sp->dir[i], 0, NULL);
		const char *e;

		if (!d)
			continue;
		opened = true;
		while ((e = g_dir_read_name(d))) {
			char *n;

			if (!g_str_has_suffix(e, ".ini"))
				continue;
			n = g_strndup(e, strlen(e) - 4);
			if (g_hash_table_contains(seen, n)) {
				g_free(n);
				continue;
			}
			g_ptr_array_add(names, n);
			g_hash_table_add(seen, n);
		}
		g_dir_close(d);
	}
	if (!opened) {
		char dirs[2048];
		fprintf(stderr, "femu-gandalf: no preset directory: %s (%s)\n",
			ftl_search_path_str(sp->dir, dirs, sizeof(dirs)), sp->origin);
		rc = -1;
		goto out;
	}
	g_ptr_array_sort(names, cmp_names);
	for (guint i = 0; i < names->len; i++) {
		const char *n = g_ptr_array_index(names, i);
		struct ftl_preset_info info;
		struct ftl_config cfg;
		char err[1024];

		if (ftl_preset_load(&cfg, n, sp->dir, &info, err, sizeof(err)))
			fprintf(out, "%-16s (broken: %s)\n", n, err);
		else
			fprintf(out, "%-16s %s\n", n, info.description);
	}
out:
	g_hash_table_destroy(seen);
	g_ptr_array_free(names, TRUE);
	return rc;
}
