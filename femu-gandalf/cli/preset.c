/*
 * preset.c - load drive presets from INI files (GLib GKeyFile) into an ftl_config.
 *
 * A preset file has a [ssd] group of hw/ftl config keys and an [about] group (description,
 * sources). Every key goes through ftl_config_set(), so the key table in hw/ftl/config.c stays
 * the single place where keys are defined and checked; errors name the file and the key.
 */
#include <errno.h>
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "preset.h"

const char *fg_preset_dir(void)
{
	const char *env = getenv("FEMU_GANDALF_PRESETS");
	return env && *env ? env : FG_PRESET_DIR;
}

static char *preset_path(const char *name)
{
	if (strchr(name, '/') || g_str_has_suffix(name, ".ini"))
		return g_strdup(name);
	return g_strdup_printf("%s/%s.ini", fg_preset_dir(), name);
}

int fg_preset_load(struct ftl_config *cfg, const char *name)
{
	GKeyFile *kf = g_key_file_new();
	GError *gerr = NULL;
	char *path = preset_path(name);
	gchar **keys = NULL;
	int rc = -1;

	ftl_config_default(cfg);
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &gerr)) {
		if (g_error_matches(gerr, G_FILE_ERROR, G_FILE_ERROR_NOENT))
			fprintf(stderr, "femu-gandalf: unknown preset '%s' (no file %s); try 'femu-gandalf presets'\n",
				name, path);
		else
			fprintf(stderr, "femu-gandalf: %s: %s\n", path, gerr->message);
		goto out;
	}
	keys = g_key_file_get_keys(kf, "ssd", NULL, &gerr);
	if (!keys) {
		fprintf(stderr, "femu-gandalf: %s: no [ssd] group\n", path);
		goto out;
	}
	/* op_percent and spare_factor are alternatives: a preset names one of them */
	cfg->op_percent = cfg->spare_factor = -1;
	char *base = g_path_get_basename(path);
	if (g_str_has_suffix(base, ".ini"))
		base[strlen(base) - 4] = 0;
	strncpy(cfg->name, base, sizeof(cfg->name) - 1);
	g_free(base);
	for (gchar **k = keys; *k; k++) {
		gchar *v = g_key_file_get_string(kf, "ssd", *k, NULL);
		char err[256];
		g_strstrip(v);
		if (ftl_config_set(cfg, *k, v, err, sizeof(err))) {
			fprintf(stderr, "femu-gandalf: %s: %s\n", path, err);
			g_free(v);
			goto out;
		}
		g_free(v);
	}
	if (cfg->op_percent < 0 && cfg->spare_factor < 0) {
		fprintf(stderr, "femu-gandalf: %s: set op_percent or spare_factor\n", path);
		goto out;
	}
	rc = 0;
out:
	if (gerr)
		g_error_free(gerr);
	g_strfreev(keys);
	g_key_file_free(kf);
	g_free(path);
	return rc;
}

int fg_preset_set(struct ftl_config *cfg, const char *kv)
{
	const char *eq = strchr(kv, '=');
	char err[256];
	if (!eq || eq == kv) {
		fprintf(stderr, "femu-gandalf: --set %s: expected key=value\n", kv);
		return -1;
	}
	char *key = g_strndup(kv, eq - kv);
	int rc = ftl_config_set(cfg, key, eq + 1, err, sizeof(err));
	g_free(key);
	if (rc) {
		fprintf(stderr, "femu-gandalf: --set %s\n", err);
		return -1;
	}
	return 0;
}

static gint cmp_names(gconstpointer a, gconstpointer b)
{
	return g_ascii_strcasecmp(*(char *const *)a, *(char *const *)b);
}

void fg_preset_list(FILE *out)
{
	GDir *d = g_dir_open(fg_preset_dir(), 0, NULL);
	GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
	const char *e;
	if (!d) {
		fprintf(stderr, "femu-gandalf: cannot open preset directory %s\n", fg_preset_dir());
		g_ptr_array_free(names, TRUE);
		return;
	}
	while ((e = g_dir_read_name(d)))
		if (g_str_has_suffix(e, ".ini"))
			g_ptr_array_add(names, g_strndup(e, strlen(e) - 4));
	g_dir_close(d);
	g_ptr_array_sort(names, cmp_names);
	for (guint i = 0; i < names->len; i++) {
		const char *n = *(const char **)&names->pdata[i];
		char *path = preset_path(n);
		GKeyFile *kf = g_key_file_new();
		char *desc = NULL;
		if (g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, NULL))
			desc = g_key_file_get_string(kf, "about", "description", NULL);
		fprintf(out, "%-16s %s\n", n, desc ? desc : "");
		g_free(desc);
		g_key_file_free(kf);
		g_free(path);
	}
	g_ptr_array_free(names, TRUE);
}

bool fg_parse_size(const char *s, unsigned long long *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || v < 0)
		return false;
	double mul = 1;
	switch (*end) {
	case 'k': case 'K': mul = 1024.0; end++; break;
	case 'm': case 'M': mul = 1048576.0; end++; break;
	case 'g': case 'G': mul = 1073741824.0; end++; break;
	case 't': case 'T': mul = 1099511627776.0; end++; break;
	}
	if (mul > 1 && *end == 'i')
		end++;
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return false;
	*out = (unsigned long long)(v * mul + 0.5);
	return true;
}
