/*
 * preset.c - drive presets: INI files of config keys, and the search path they are found on.
 *
 * The parser is a small INI reader of its own rather than a library's, so that hw/ftl stays
 * plain C with libm as its only dependency (it is linked into the nbdkit plugin and, later,
 * QEMU). It reads what the shipped presets use: [group] lines, key=value lines, '#' comment
 * lines. Every [ssd] key goes through ftl_config_set(), so config.c's key table stays the one
 * place where keys are defined and checked, and each error names the file and line.
 *
 * The search path (docs/install.md) is built here too, because the CLI, the nbdkit plugin and
 * the model catalog all need the same answer to "which data goes with this binary". Its rules
 * are in ftl.h. Two decisions shape it:
 *  - An uninstalled binary is recognised by where it is (its directory is the build
 *    directory), not by a flag compiled into it: the same build/femu-gandalf copied into a VM
 *    guest, or installed, must stop reading the source tree.
 *  - Installed data is found relative to the binary first (the relative path from the
 *    configured install directory to the configured data directory, applied to the directory
 *    the binary really is in). DESTDIR shifts both by the same prefix, so a staged tree under
 *    DESTDIR finds its own data before anything at the configured prefix. The plugin, installed
 *    in nbdkit's plugin directory outside our prefix, gets its own relative path the same way.
 * Paths are compared and joined after realpath() (the binary) and lexical normalisation (the
 * configured paths), so a "../" never walks out through a symlink.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "err.h"
#include "ftl_int.h"
#include "parse.h"

/* snprintf into a fixed buffer; false when it does not fit. */
static bool put(char *dst, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dst, len, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < len;
}

/*
 * Lexically normalise an absolute path into out (len bytes): no empty, "." or ".." components,
 * no trailing '/'. False when in is not absolute or out is too small.
 */
static bool normalize(const char *in, char *out, size_t len)
{
	size_t n = 0;
	const char *p = in;

	if (!in || in[0] != '/' || len < 2)
		return false;
	out[0] = 0;
	while (*p) {
		size_t k;

		while (*p == '/')
			p++;
		k = strcspn(p, "/");
		if (k == 2 && p[0] == '.' && p[1] == '.') {
			char *s = strrchr(out, '/');
			n = s ? (size_t)(s - out) : 0;
			out[n] = 0;
		} else if (k && !(k == 1 && p[0] == '.')) {
			if (n + 1 + k + 1 > len)
				return false;
			out[n++] = '/';
			memcpy(out + n, p, k);
			n += k;
			out[n] = 0;
		}
		p += k;
	}
	if (!n)
		strcpy(out, "/");
	return true;
}

/* Length of the longest run of whole leading components that a and b share. */
static size_t common_prefix(const char *a, const char *b)
{
	size_t i, last = 0;

	for (i = 0;; i++) {
		if ((a[i] == '/' || !a[i]) && (b[i] == '/' || !b[i]))
			last = i;
		if (!a[i] || !b[i] || a[i] != b[i])
			break;
	}
	return last;
}

/*
 * out = dir with the relative path from from_dir to to_dir applied to it: dir's last
 * (components of from_dir below the common prefix) components replaced by to_dir's rest.
 * All three absolute and normalised. False when dir is too shallow or out too small.
 */
static bool rebase(const char *dir, const char *from_dir, const char *to_dir, char *out, size_t len)
{
	size_t c = common_prefix(from_dir, to_dir), n = strlen(dir);
	const char *up = strcmp(from_dir, "/") ? from_dir + c : ""; /* one '/' per component */
	char tmp[FTL_PATH_MAX];

	for (const char *p = up; *p; p++) {
		if (*p != '/')
			continue;
		while (n > 0 && dir[n - 1] != '/')
			n--;
		if (n == 0)
			return false; /* more ".." than dir has components */
		n--;
	}
	return put(tmp, sizeof(tmp), "%.*s/%s", (int)n, dir, to_dir + c) &&
	       normalize(tmp, out, len);
}

/* The real directory of the running binary (self, or /proc/self/exe) into out. */
static bool self_dir(const char *self, char *out, size_t len)
{
	char real[PATH_MAX];
	char *slash;

	if (self) {
		if (!realpath(self, real))
			return false;
	} else {
		ssize_t n = readlink("/proc/self/exe", real, sizeof(real) - 1);
		if (n <= 0)
			return false;
		real[n] = 0;
	}
	slash = strrchr(real, '/');
	if (!slash)
		return false;
	*slash = 0;
	return put(out, len, "%s", real[0] ? real : "/");
}

void ftl_search_path(struct ftl_search_path *sp, const struct ftl_search_spec *spec)
{
	const char *env = spec->env ? getenv(spec->env) : NULL;
	char here[FTL_PATH_MAX], build[PATH_MAX], from[FTL_PATH_MAX], to[FTL_PATH_MAX];
	int n = 0;

	memset(sp->dir, 0, sizeof(sp->dir));
	sp->origin = "installed";
	if (env && *env) {
		sp->origin = spec->env;
		if (put(sp->buf[0], sizeof(sp->buf[0]), "%s", env))
			sp->dir[n++] = sp->buf[0];
		return;
	}
	if (!self_dir(spec->self, here, sizeof(here)))
		here[0] = 0;
	if (here[0] && spec->build_dir && spec->src_dir && realpath(spec->build_dir, build) &&
	    !strcmp(build, here)) {
		sp->origin = "build tree";
		if (put(sp->buf[0], sizeof(sp->buf[0]), "%s", spec->src_dir))
			sp->dir[n++] = sp->buf[0];
		return;
	}
	if (!spec->data_dir || !normalize(spec->data_dir, to, sizeof(to)))
		return;
	if (here[0] && spec->install_dir && normalize(spec->install_dir, from, sizeof(from)) &&
	    rebase(here, from, to, sp->buf[0], sizeof(sp->buf[0]))) {
		sp->dir[n++] = sp->buf[0];
		if (!strcmp(sp->buf[0], to))
			return; /* installed where it was configured to be */
	}
	strcpy(sp->buf[n], to);
	sp->dir[n] = sp->buf[n];
}

const char *ftl_search_path_str(const char *const *dirs, char *buf, size_t len)
{
	size_t n = 0;

	if (!len)
		return buf;
	buf[0] = 0;
	if (!dirs || !dirs[0])
		snprintf(buf, len, "(none)");
	for (int i = 0; dirs && dirs[i] && n < len; i++) {
		int k = snprintf(buf + n, len - n, "%s%s", i ? ", " : "", dirs[i]);
		if (k < 0)
			break;
		n += (size_t)k;
	}
	return buf;
}

int ftl_search_find(const char *const *dirs, const char *file, char *path, size_t pathlen)
{
	char p[FTL_PATH_MAX];

	for (int i = 0; dirs && dirs[i]; i++)
		if (put(p, sizeof(p), "%s/%s", dirs[i], file) && !access(p, F_OK) &&
		    put(path, pathlen, "%s", p))
			return FTL_OK;
	return FTL_E_NOENT;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = 0;
	return s;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && !strcmp(s + n - k, suffix);
}

/* The preset's name: the file's base name without ".ini", line breaks as '_'. */
static void set_name(struct ftl_config *cfg, const char *path)
{
	const char *base = strrchr(path, '/');
	size_t n;

	base = base ? base + 1 : path;
	n = strlen(base);
	if (ends_with(base, ".ini"))
		n -= 4;
	if (n >= sizeof(cfg->name))
		n = sizeof(cfg->name) - 1;
	memcpy(cfg->name, base, n);
	cfg->name[n] = 0;
	/* The name is informational, but a snapshot stores it as a key=value line: a line break
	 * in the file's name becomes '_' so the snapshot loads back. */
	for (char *q = cfg->name; (q = strpbrk(q, "\n\r")); q++)
		*q = '_';
}

/* The geometry a preset must state in full: a forgotten key would silently take config.c's
 * default and make another drive. */
static const char *const GEOMETRY[] = {"channels",        "luns_per_channel", "planes_per_lun",
                                       "blocks_per_plane", "pages_per_block",  "page_size"};
#define MAX_KEYS 128 /* more [ssd] keys than config.c defines */

/* The [ssd] keys read so far, each with its line: a key stated twice is an error. */
struct ini_seen {
	struct {
		char key[FTL_NAME_MAX];
		unsigned line;
	} k[MAX_KEYS];
	unsigned n;
};

enum ini_group { G_NONE, G_SSD, G_ABOUT, G_OTHER };

/* A "[name]" line (s trimmed) into *group. -1 when it is not one. */
static int ini_group(char *s, enum ini_group *group)
{
	size_t n = strlen(s);
	if (n < 3 || s[n - 1] != ']')
		return -1;
	s[n - 1] = 0;
	*group = !strcmp(s + 1, "ssd") ? G_SSD : !strcmp(s + 1, "about") ? G_ABOUT : G_OTHER;
	return 0;
}

/* Note an [ssd] key at lineno; FTL_E_INVAL with the message when it was stated before. */
static int ini_note(struct ini_seen *seen, const char *path, unsigned lineno, const char *key,
                    char *err, size_t errlen)
{
	for (unsigned i = 0; i < seen->n; i++) /* which of two values was meant is a guess */
		if (!strcmp(seen->k[i].key, key))
			return fg_err_rc(err, errlen, FTL_E_INVAL,
			                 "%s:%u: %s= again (first at line %u); a preset states each key "
			                 "once",
			                 path, lineno, key, seen->k[i].line);
	if (seen->n < MAX_KEYS) { /* (a known key: ftl_config_set took it) */
		snprintf(seen->k[seen->n].key, sizeof(seen->k[seen->n].key), "%s", key);
		seen->k[seen->n++].line = lineno;
	}
	return FTL_OK;
}

/* After the last line: an [ssd] group, one of op_percent and spare_factor, the geometry in
 * full. */
static int ini_complete(const struct ftl_config *cfg, const struct ini_seen *seen, bool have_ssd,
                        const char *path, char *err, size_t errlen)
{
	if (!have_ssd)
		return fg_err_rc(err, errlen, FTL_E_INVAL, "%s: no [ssd] group", path);
	if (cfg->op_percent < 0 && cfg->spare_factor < 0)
		return fg_err_rc(err, errlen, FTL_E_INVAL, "%s: set op_percent or spare_factor", path);
	for (size_t g = 0; g < sizeof(GEOMETRY) / sizeof(GEOMETRY[0]); g++) {
		bool have = false;
		for (unsigned i = 0; i < seen->n && !have; i++)
			have = !strcmp(seen->k[i].key, GEOMETRY[g]);
		if (!have)
			return fg_err_rc(err, errlen, FTL_E_INVAL,
			                 "%s: [ssd] has no %s=; a preset states its geometry in "
			                 "full (channels, luns_per_channel, planes_per_lun, "
			                 "blocks_per_plane, pages_per_block, page_size)",
			                 path, GEOMETRY[g]);
	}
	return FTL_OK;
}

static int read_ini(struct ftl_config *cfg, struct ftl_preset_info *in, char *err, size_t errlen)
{
	struct ini_seen seen = {.n = 0};
	enum ini_group group = G_NONE;
	FILE *f = fopen(in->path, "r");
	char *line = NULL, kerr[256];
	size_t cap = 0;
	unsigned lineno = 0;
	bool have_ssd = false;
	int rc = FTL_OK;

	if (!f)
		return fg_err_rc(err, errlen, FTL_E_IO, "%s: %s", in->path, strerror(errno));
	/* op_percent and spare_factor are alternatives: a preset names one of them */
	cfg->op_percent = cfg->spare_factor = -1;
	set_name(cfg, in->path);
	for (;;) {
		char *s, *key, *val;

		errno = 0; /* getline() leaves it alone at end of file */
		if (getline(&line, &cap, f) < 0)
			break;
		s = trim(line);
		lineno++;
		if (!*s || *s == '#')
			continue;
		if (*s == '[') {
			if (ini_group(s, &group))
				goto syntax;
			have_ssd |= group == G_SSD;
			continue;
		}
		if (fg_keyval_split(s, FG_KEYVAL_TRIM, &key, &val))
			goto syntax;
		if (group == G_NONE) {
			rc = fg_err_rc(err, errlen, FTL_E_INVAL, "%s:%u: %s= before any [group]",
			               in->path, lineno, key);
			goto out;
		}
		if (group == G_SSD && ftl_config_set(cfg, key, val, kerr, sizeof(kerr))) {
			rc = fg_err_rc(err, errlen, FTL_E_INVAL, "%s:%u: %s", in->path, lineno,
			               kerr);
			goto out;
		}
		if (group == G_SSD && (rc = ini_note(&seen, in->path, lineno, key, err, errlen)))
			goto out;
		if (group == G_ABOUT && !strcmp(key, "description"))
			snprintf(in->description, sizeof(in->description), "%s", val);
	}
	if (ferror(f) || errno == ENOMEM)
		rc = fg_err_rc(err, errlen, errno == ENOMEM ? FTL_E_NOMEM : FTL_E_IO, "%s: %s",
		               in->path, strerror(errno));
	else
		rc = ini_complete(cfg, &seen, have_ssd, in->path, err, errlen);
	goto out;
syntax:
	rc = fg_err_rc(err, errlen, FTL_E_INVAL, "%s:%u: expected [group] or key=value", in->path,
	               lineno);
out:
	free(line);
	fclose(f);
	return rc;
}

int ftl_preset_load(struct ftl_config *cfg, const char *name_or_file, const char *const *dirs,
                    struct ftl_preset_info *info, char *err, size_t errlen)
{
	struct ftl_preset_info local, *in = info ? info : &local;
	const char *name = name_or_file;
	char file[FTL_NAME_MAX + 8], list[2048];

	ftl_config_default(cfg);
	in->path[0] = in->description[0] = 0;
	if (!name || !*name)
		return fg_err_rc(err, errlen, FTL_E_INVAL, "empty preset name");
	if (strchr(name, '/') || ends_with(name, ".ini")) {
		if (!put(in->path, sizeof(in->path), "%s", name))
			return fg_err_rc(err, errlen, FTL_E_INVAL, "%.64s...: path too long", name);
		return read_ini(cfg, in, err, errlen);
	}
	if (!put(file, sizeof(file), "%s.ini", name))
		return fg_err_rc(err, errlen, FTL_E_INVAL, "preset name '%.64s...' too long", name);
	if (ftl_search_find(dirs, file, in->path, sizeof(in->path)))
		return fg_err_rc(err, errlen, FTL_E_NOENT, "unknown preset '%s' (no %s in %s)",
		                 name, file, ftl_search_path_str(dirs, list, sizeof(list)));
	return read_ini(cfg, in, err, errlen);
}
