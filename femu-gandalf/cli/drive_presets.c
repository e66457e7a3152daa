/*
 * drive_presets.c - the CLI's side of drive presets. hw/ftl reads them (ftl_preset_load,
 * ftl.h) and builds the search path; this file says where the femu-gandalf binary looks
 * (docs/install.md: $FEMU_GANDALF_PRESETS, the source tree for the uninstalled
 * build/femu-gandalf, else the installed datadir found relative to the binary), prints the
 * errors, lists the presets and applies --set overrides.
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fg_paths.h"
#include "json.h"
#include "drive_presets.h"

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

int fg_preset_set(struct ftl_config *cfg, const char *keyval)
{
	char key[FTL_NAME_MAX], err[256];
	const char *val;
	int rc = fg_keyval_split_copy(keyval, key, sizeof(key), &val);

	if (rc == -1) {
		fprintf(stderr, "femu-gandalf: --set %s: expected key=value\n", keyval);
		return -1;
	}
	if (rc == -2) { /* no key is this long */
		fprintf(stderr, "femu-gandalf: --set %s: unknown config key\n", keyval);
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
 * ftl_preset_load), sorted by name; NULL after saying why when no directory opens. */
static GPtrArray *preset_names(void)
{
	const struct ftl_search_path *sp = fg_preset_search();
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	GHashTable *seen = g_hash_table_new(g_str_hash, g_str_equal);
	bool opened = false;

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
	g_hash_table_destroy(seen);
	if (!opened) {
		char dirs[2048];
		fprintf(stderr, "femu-gandalf: no preset directory: %s (%s)\n",
			ftl_search_path_str(sp->dir, dirs, sizeof(dirs)), sp->origin);
		g_ptr_array_free(names, TRUE);
		return NULL;
	}
	g_ptr_array_sort(names, cmp_names);
	return names;
}

int fg_preset_list(FILE *out)
{
	GPtrArray *names = preset_names();

	if (!names)
		return -1;
	for (guint i = 0; i < names->len; i++) {
		const char *n = g_ptr_array_index(names, i);
		struct ftl_preset_info info;
		struct ftl_config cfg;
		char err[1024];

		if (ftl_preset_load(&cfg, n, fg_preset_search()->dir, &info, err, sizeof(err)))
			fprintf(out, "%-16s (broken: %s)\n", n, err);
		else
			fprintf(out, "%-16s %s\n", n, info.description);
	}
	g_ptr_array_free(names, TRUE);
	return 0;
}

/* One preset as a JSON object (docs/output.md): its figures and every config key. The config
 * is loaded, sets applied and validated; in the list (!alone) a preset that fails has "error"
 * instead. -1 when a set is bad or the preset asked for alone fails (said on stderr), else 0. */
static int preset_json(struct json_out *j, const char *name, char **sets, bool alone)
{
	struct ftl_preset_info info;
	struct ftl_config cfg;
	struct ftl_geometry g;
	char err[1024], text[FTL_CONFIG_TEXT_MAX];
	bool broken = ftl_preset_load(&cfg, name, fg_preset_search()->dir, &info, err, sizeof(err));

	/* (a bad --set or an impossible geometry from it is refused before anything is written) */
	for (char **s = sets; !broken && s && *s; s++)
		if (fg_preset_set(&cfg, *s))
			return -1;
	if (!broken && ftl_config_geometry(&cfg, &g, err, sizeof(err)))
		broken = true;
	if (broken && alone) {
		fprintf(stderr, "femu-gandalf: preset %s: %s\n", name, err);
		return -1;
	}
	jout_object(j, NULL, JOUT_BLOCK);
	jout_str(j, "name", broken ? name : cfg.name);
	if (broken) {
		jout_str(j, "error", err);
		jout_end(j);
		return 0;
	}
	jout_str(j, "description", info.description);
	jout_u64(j, "user_bytes", g.user_bytes);
	jout_u64(j, "physical_bytes", g.phys_bytes);
	jout_num(j, "op_percent", "%.4f", 100.0 * (double)(g.phys_bytes - g.user_bytes) / (double)g.user_bytes);
	jout_u64(j, "pe_cycles", cfg.pe_cycles);
	jout_num(j, "rated_tbw_bytes", "%.0f", cfg.dwpd * (double)g.user_bytes * 365 * cfg.warranty_years);
	/* every key as the .ini files and --set write it: numbers as numbers */
	jout_object(j, "config", JOUT_BLOCK);
	ftl_config_format(&cfg, text, sizeof(text));
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *eq = strchr(line, '='), *end;
		if (!eq)
			continue;
		*eq = 0;
		double v = strtod(eq + 1, &end);
		if (eq[1] && !*end && isfinite(v))
			jout_num(j, line, "%.17g", v);
		else
			jout_str(j, line, eq + 1);
	}
	jout_end(j);
	jout_end(j);
	return 0;
}

int fg_preset_json(FILE *out, const char *name, char **sets)
{
	struct json_out j;
	int rc = 0;

	jout_init(&j, out);
	if (name) {
		rc = preset_json(&j, name, sets, true);
	} else {
		GPtrArray *names = preset_names();
		if (!names)
			return -1;
		jout_array(&j, NULL, JOUT_BLOCK);
		for (guint i = 0; i < names->len && !rc; i++)
			rc = preset_json(&j, g_ptr_array_index(names, i), NULL, false);
		jout_end(&j);
		g_ptr_array_free(names, TRUE);
	}
	if (rc)
		return -1;
	if ((rc = jout_finish(&j)))
		fprintf(stderr, "femu-gandalf: JSON output: %s\n", jout_strerror(rc));
	return rc ? 1 : 0;
}
