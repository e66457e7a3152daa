/*
 * catalog.c - the model catalog (femu-gandalf/kv/models.ini, installed in the datadir): bytes of
 * full-attention KV per token and of one linear-state snapshot, per model. Read with GLib's
 * GKeyFile; one group per model. docs/models.md shows how each figure follows from the model's
 * config; the file is found on hw/ftl's search path (ftl_search_path).
 */
#include <glib.h>
#include <stdlib.h>
#include <string.h>

#include "fg_paths.h"
#include "json.h"
#include "kvsim.h"

/* Where models.ini is looked for, as for the presets (docs/install.md): $FEMU_GANDALF_MODELS,
 * the source tree for the uninstalled binary, else the installed datadir. */
static const struct ftl_search_path *model_search(void)
{
	static struct ftl_search_path sp;
	static bool done;
	const struct ftl_search_spec spec = {
		.env = "FEMU_GANDALF_MODELS",
		.build_dir = FG_BUILD_ROOT,
		.src_dir = FG_SOURCE_ROOT "/femu-gandalf/kv",
		.install_dir = FG_BINDIR,
		.data_dir = FG_PKGDATADIR,
	};

	if (!done)
		ftl_search_path(&sp, &spec);
	done = true;
	return &sp;
}

/* The directory whose models.ini is read (the first on the path that has one, else the first). */
const char *kv_model_dir(void)
{
	const struct ftl_search_path *sp = model_search();
	char path[FTL_PATH_MAX];

	for (int i = 0; sp->dir[i]; i++) {
		const char *one[] = {sp->dir[i], NULL};
		if (!ftl_search_find(one, "models.ini", path, sizeof(path)))
			return sp->dir[i];
	}
	return sp->dir[0] ? sp->dir[0] : "(none)";
}

static GKeyFile *load(char *err, size_t errlen)
{
	const struct ftl_search_path *sp = model_search();
	GKeyFile *kf;
	GError *e = NULL;
	char path[FTL_PATH_MAX], dirs[2048];

	if (ftl_search_find(sp->dir, "models.ini", path, sizeof(path))) {
		snprintf(err, errlen,
			 "no model catalog: no models.ini in %s (%s; FEMU_GANDALF_MODELS=DIR overrides)",
			 ftl_search_path_str(sp->dir, dirs, sizeof(dirs)), sp->origin);
		return NULL;
	}
	kf = g_key_file_new();
	if (!g_key_file_load_from_file(kf, path, G_KEY_FILE_NONE, &e)) {
		snprintf(err, errlen, "%s: %s", path, e->message);
		g_error_free(e);
		g_key_file_free(kf);
		kf = NULL;
	}
	return kf;
}

static int read_model(GKeyFile *kf, const char *name, struct kv_model *m, char *err, size_t errlen)
{
	GError *e = NULL;
	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "%s", name);
	gint64 full = g_key_file_get_int64(kf, name, "full_kv_bytes_per_token", &e);
	if (e || full <= 0) {
		snprintf(err, errlen, "model %s: full_kv_bytes_per_token: %s", name, e ? e->message : "must be > 0");
		g_clear_error(&e);
		return -1;
	}
	gint64 lin = g_key_file_get_int64(kf, name, "linear_state_bytes", &e);
	if (e || lin < 0) {
		snprintf(err, errlen, "model %s: linear_state_bytes: %s", name, e ? e->message : "must be >= 0");
		g_clear_error(&e);
		return -1;
	}
	m->full_kv_bytes_per_token = (uint64_t)full;
	m->linear_state_bytes = (uint64_t)lin;
	char *d = g_key_file_get_string(kf, name, "description", NULL);
	snprintf(m->description, sizeof(m->description), "%s", d ? d : "");
	g_free(d);
	return 0;
}

int kv_model_load(const char *name, struct kv_model *m, char *err, size_t errlen)
{
	GKeyFile *kf = load(err, errlen);
	int rc = -1;
	if (!kf)
		return -1;
	if (!g_key_file_has_group(kf, name)) {
		gchar **g = g_key_file_get_groups(kf, NULL);
		GString *all = g_string_new("");
		for (gchar **p = g; p && *p; p++)
			g_string_append_printf(all, "%s%s", p == g ? "" : ", ", *p);
		snprintf(err, errlen, "unknown model '%s' (known: %s)", name, all->str);
		g_string_free(all, TRUE);
		g_strfreev(g);
	} else {
		rc = read_model(kf, name, m, err, errlen);
	}
	g_key_file_free(kf);
	return rc;
}

int kv_model_list(FILE *out, bool json)
{
	char err[512];
	GKeyFile *kf = load(err, sizeof(err));
	if (!kf) {
		fprintf(stderr, "femu-gandalf: %s\n", err);
		return -1;
	}
	gchar **g = g_key_file_get_groups(kf, NULL);
	struct json_out j;
	jout_init(&j, out);
	if (json)
		jout_array(&j, NULL, JOUT_BLOCK);
	else
		fprintf(out, "%-22s %16s %16s  %s\n", "model", "full KV B/token", "linear state B", "description");
	for (gchar **p = g; p && *p; p++) {
		struct kv_model m;
		if (read_model(kf, *p, &m, err, sizeof(err))) {
			fprintf(stderr, "femu-gandalf: %s\n", err);
			continue;
		}
		if (json) {
			jout_object(&j, NULL, JOUT_INLINE);
			jout_str(&j, "name", m.name);
			jout_u64(&j, "full_kv_bytes_per_token", m.full_kv_bytes_per_token);
			jout_u64(&j, "linear_state_bytes", m.linear_state_bytes);
			jout_end(&j);
		} else {
			fprintf(out, "%-22s %16llu %16llu  %s\n", m.name, (unsigned long long)m.full_kv_bytes_per_token,
				(unsigned long long)m.linear_state_bytes, m.description);
		}
	}
	int rc = 0;
	if (json) {
		jout_end(&j);
		if ((rc = jout_finish(&j)))
			fprintf(stderr, "femu-gandalf: JSON output: %s\n", jout_strerror(rc));
	}
	g_strfreev(g);
	g_key_file_free(kf);
	return rc ? -1 : 0;
}
