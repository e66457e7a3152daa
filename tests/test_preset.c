/*
 * test_preset.c - hw/ftl's presets: the INI reader's errors (file, line, key), lookup by name on
 * a search path, and ftl_search_path()'s rules (docs/install.md) on fake trees in /tmp: an
 * override, an uninstalled build, a DESTDIR-staged install, the plugin's directory outside the
 * prefix, and a real install where both candidates are the same directory.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "check.h"

#include "testutil.h"

static char root[256];

static void mkdirs(const char *rel)
{
	char p[1024];
	snprintf(p, sizeof(p), "mkdir -p '%s/%s'", root, rel);
	assert_int_equal(system(p), 0);
}

/* Write root/rel with the given text; returns the full path (static buffer). */
static const char *put_file(const char *rel, const char *text)
{
	static char p[1024];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	return p;
}

static char *at(const char *rel, char *buf)
{
	sprintf(buf, "%s/%s", root, rel);
	return buf;
}

static int setup(void **state)
{
	char real[256];
	(void)state;
	strcpy(root, "/tmp/fg-preset-XXXXXX");
	assert_non_null(mkdtemp(root));
	assert_non_null(realpath(root, real)); /* ftl_search_path compares real paths */
	strcpy(root, real);
	unsetenv("FG_TEST_PRESETS");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rm_tree(root);
}

/* the geometry every preset states in full */
#define GEO "channels=1\nluns_per_channel=1\nplanes_per_lun=1\npages_per_block=64\npage_size=4096\n"
#define SMALL "[ssd]\n" GEO "blocks_per_plane=64\nspare_factor=0.2\n"

static void load_err(const char *file, const char *text, int want, const char *msg)
{
	struct ftl_config c;
	char err[512], path[600];

	put_file(file, text);
	snprintf(path, sizeof(path), "%s/%s", root, file);
	assert_int_equal(ftl_preset_load(&c, path, NULL, NULL, err, sizeof(err)), want);
	if (!strstr(err, msg))
		fail_msg("error '%s' lacks '%s'", err, msg);
	if (!strstr(err, path))
		fail_msg("error '%s' does not name the file", err);
}

static void test_ini(void **state)
{
	struct ftl_config c;
	struct ftl_preset_info info;
	char err[512];
	(void)state;

	const char *p =
	        put_file("ok.ini", "# comment\n\n[about]\ndescription = a test drive \r\n"
	                           "[ssd]\n  channels = 4 \nluns_per_channel=1\nplanes_per_lun=1\n"
	                           "blocks_per_plane=64\nspare_factor=0.2\n"
	                           "[other]\nwhatever=1\n[ssd]\npages_per_block=64\npage_size=4096\n");
	assert_int_equal(ftl_preset_load(&c, p, NULL, &info, err, sizeof(err)), FTL_OK);
	assert_string_equal(c.name, "ok");
	assert_int_equal(c.channels, 4); /* ([ssd] may come back; a key may not) */
	assert_int_equal(c.blocks_per_plane, 64);
	assert_true(c.op_percent < 0 && c.spare_factor == 0.2);
	assert_string_equal(info.path, p);
	assert_string_equal(info.description, "a test drive");
	assert_int_equal(ftl_config_validate(&c, err, sizeof(err)), FTL_OK);

	p = put_file("named.ini", "[ssd]\n" GEO "blocks_per_plane=64\nname=other\nop_percent=7\n");
	assert_int_equal(ftl_preset_load(&c, p, NULL, NULL, err, sizeof(err)), FTL_OK);
	assert_string_equal(c.name, "other");
	assert_true(c.op_percent == 7 && c.spare_factor < 0);

	load_err("val.ini", "[ssd]\n\nchannels=two\n", FTL_E_INVAL,
	         "val.ini:3: channels=two: not a number");
	load_err("key.ini", "[ssd]\nbogus=1\n", FTL_E_INVAL, ":2: bogus");
	load_err("junk.ini", "not an ini file\n", FTL_E_INVAL, ":1: expected [group] or key=value");
	load_err("grp.ini", "[ssd\nchannels=1\n", FTL_E_INVAL, ":1: expected [group] or key=value");
	load_err("empty.ini", "[]\n", FTL_E_INVAL, ":1: expected [group]");
	load_err("nokey.ini", "[ssd]\n=3\n", FTL_E_INVAL, ":2: expected [group] or key=value");
	load_err("early.ini", "channels=1\n[ssd]\n", FTL_E_INVAL,
	         ":1: channels= before any [group]");
	load_err("nossd.ini", "[about]\ndescription=x\n", FTL_E_INVAL, ": no [ssd] group");
	load_err("nospare.ini", "[ssd]\nchannels=1\n", FTL_E_INVAL,
	         ": set op_percent or spare_factor");
	/* a key given twice, and a geometry key forgotten: errors naming the key (and the line) */
	load_err("twice.ini", "[ssd]\n" GEO "blocks_per_plane=64\nspare_factor=0.2\n[about]\n[ssd]\n"
	         "blocks_per_plane=128\n", FTL_E_INVAL,
	         "twice.ini:11: blocks_per_plane= again (first at line 7)");
	load_err("nobpp.ini", "[ssd]\n" GEO "spare_factor=0.2\n", FTL_E_INVAL,
	         "nobpp.ini: [ssd] has no blocks_per_plane=; a preset states its geometry in full");

	assert_int_equal(ftl_preset_load(&c, "/nonexistent/x.ini", NULL, NULL, err, sizeof(err)),
	                 FTL_E_IO);
	assert_string_equal(err, "/nonexistent/x.ini: No such file or directory");
	assert_int_equal(ftl_preset_load(&c, "", NULL, NULL, err, sizeof(err)), FTL_E_INVAL);
}

static void test_lookup(void **state)
{
	struct ftl_config c;
	struct ftl_preset_info info;
	char err[1024], a[300], b[300], want[1024];
	(void)state;

	mkdirs("a");
	mkdirs("b");
	put_file("a/both.ini", SMALL "[about]\ndescription=from a\n");
	put_file("b/both.ini", SMALL "[about]\ndescription=from b\n");
	put_file("b/onlyb.ini", SMALL);
	const char *dirs[] = {at("a", a), at("b", b), NULL};

	assert_int_equal(ftl_preset_load(&c, "both", dirs, &info, err, sizeof(err)), FTL_OK);
	assert_string_equal(info.description, "from a"); /* the first directory wins */
	assert_string_equal(c.name, "both");
	assert_int_equal(ftl_preset_load(&c, "onlyb", dirs, &info, err, sizeof(err)), FTL_OK);
	snprintf(want, sizeof(want), "%s/onlyb.ini", b);
	assert_string_equal(info.path, want);

	assert_int_equal(ftl_preset_load(&c, "nope", dirs, NULL, err, sizeof(err)), FTL_E_NOENT);
	snprintf(want, sizeof(want), "unknown preset 'nope' (no nope.ini in %s, %s)", a, b);
	assert_string_equal(err, want);
	assert_int_equal(ftl_preset_load(&c, "nope", NULL, NULL, err, sizeof(err)), FTL_E_NOENT);
	assert_string_equal(err, "unknown preset 'nope' (no nope.ini in (none))");

	assert_int_equal(ftl_search_find(dirs, "onlyb.ini", want, sizeof(want)), FTL_OK);
	assert_int_equal(ftl_search_find(dirs, "none.ini", want, sizeof(want)), FTL_E_NOENT);
}

/* Build the search path for a binary at root/self_rel with the given configured paths. */
static void search(struct ftl_search_path *sp, const char *self_rel, const char *build_rel,
                   const char *install_dir, const char *data_dir)
{
	char self[600], build[600];
	const struct ftl_search_spec spec = {
	        .env = "FG_TEST_PRESETS",
	        .self = at(self_rel, self),
	        .build_dir = build_rel ? at(build_rel, build) : NULL,
	        .src_dir = "/src/hw/ftl/presets",
	        .install_dir = install_dir,
	        .data_dir = data_dir,
	};
	ftl_search_path(sp, &spec);
}

static void expect_dirs(const struct ftl_search_path *sp, const char *origin, const char *d0,
                        const char *d1)
{
	assert_string_equal(sp->origin, origin);
	assert_non_null(sp->dir[0]);
	assert_string_equal(sp->dir[0], d0);
	if (d1) {
		assert_non_null(sp->dir[1]);
		assert_string_equal(sp->dir[1], d1);
		assert_null(sp->dir[2]);
	} else {
		assert_null(sp->dir[1]);
	}
}

static void test_search_path(void **state)
{
	struct ftl_search_path sp;
	char want[600];
	(void)state;

	mkdirs("build");
	put_file("build/fg", "");
	mkdirs("stage/usr/local/bin");
	put_file("stage/usr/local/bin/fg", "");
	mkdirs("stage/usr/lib/x86_64-linux-gnu/nbdkit/plugins");
	put_file("stage/usr/lib/x86_64-linux-gnu/nbdkit/plugins/p.so", "");
	mkdirs("opt/bin");
	put_file("opt/bin/fg", "");
	mkdirs("loose");
	put_file("loose/fg", "");
	symlink("stage/usr/local/bin/fg", at("link", want));

	/* an uninstalled build reads the source tree, and only it */
	search(&sp, "build/fg", "build", "/usr/local/bin", "/usr/local/share/fg/presets");
	expect_dirs(&sp, "build tree", "/src/hw/ftl/presets", NULL);
	/* the build tree's binary is recognised by its directory, not by a file under it */
	search(&sp, "stage/usr/local/bin/fg", "stage", "/usr/local/bin",
	       "/usr/local/share/fg/presets");
	assert_string_equal(sp.origin, "installed");

	/* DESTDIR: the staged data first, then the configured prefix */
	snprintf(want, sizeof(want), "%s/stage/usr/local/share/fg/presets", root);
	search(&sp, "stage/usr/local/bin/fg", "build", "/usr/local/bin",
	       "/usr/local/share/fg/presets");
	expect_dirs(&sp, "installed", want, "/usr/local/share/fg/presets");
	/* a symlink to the binary: relative to where the binary really is */
	search(&sp, "link", "build", "/usr/local/bin", "/usr/local/share/fg/presets");
	expect_dirs(&sp, "installed", want, "/usr/local/share/fg/presets");
	/* the plugin in nbdkit's directory, outside the prefix; unnormalised configured paths */
	search(&sp, "stage/usr/lib/x86_64-linux-gnu/nbdkit/plugins/p.so", "build",
	       "/usr/lib/x86_64-linux-gnu//nbdkit/./plugins/", "/usr/local/share/fg/presets/");
	expect_dirs(&sp, "installed", want, "/usr/local/share/fg/presets");

	/* a real install: both candidates are the same directory, listed once */
	snprintf(want, sizeof(want), "%s/opt/share/fg/presets", root);
	char bindir[600];
	search(&sp, "opt/bin/fg", "build", at("opt/bin", bindir), want);
	expect_dirs(&sp, "installed", want, NULL);

	/* a binary copied somewhere too shallow for the relative path: the configured datadir */
	search(&sp, "loose/fg", "build", "/a/b/c/d/e/f/g/h/i/j/k/bin", "/usr/share/fg/presets");
	expect_dirs(&sp, "installed", "/usr/share/fg/presets", NULL);

	/* the override replaces everything, even for the build tree */
	setenv("FG_TEST_PRESETS", "/mine", 1);
	search(&sp, "build/fg", "build", "/usr/local/bin", "/usr/local/share/fg/presets");
	expect_dirs(&sp, "FG_TEST_PRESETS", "/mine", NULL);
	setenv("FG_TEST_PRESETS", "", 1); /* empty means unset */
	search(&sp, "build/fg", "build", "/usr/local/bin", "/usr/local/share/fg/presets");
	assert_string_equal(sp.origin, "build tree");
	unsetenv("FG_TEST_PRESETS");

	/* a self that does not exist: only the configured datadir */
	search(&sp, "missing/fg", "build", "/usr/local/bin", "/usr/local/share/fg/presets");
	expect_dirs(&sp, "installed", "/usr/local/share/fg/presets", NULL);

	char buf[64];
	assert_string_equal(ftl_search_path_str(sp.dir, buf, sizeof(buf)),
	                    "/usr/local/share/fg/presets");
	const char *none[] = {NULL};
	assert_string_equal(ftl_search_path_str(none, buf, sizeof(buf)), "(none)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_ini, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_lookup, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_search_path, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
