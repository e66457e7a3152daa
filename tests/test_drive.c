/*
 * test_drive.c - hw/drive, the drive's life both device adapters share, and hw/qemu/fg-nvme.c,
 * QEMU's glue on top of it, compiled here without QEMU: configuration errors in each adapter's
 * spelling, a drive saved and loaded back with its wear and clock, snapshots that do not match
 * refused, checkpoints bound to the data file, the stats file read back, and the cadence.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

#include "check.h"

#include "drive.h"
#include "fg-nvme.h"
#include "json.h"

static char dir[256], snap[300], stats[300], data[300];
static const char *const presets[] = {FG_PRESET_DIR, NULL};

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/fg-drive-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(snap, sizeof(snap), "%s/d.snap", dir);
	snprintf(stats, sizeof(stats), "%s/d.json", dir);
	snprintf(data, sizeof(data), "%s/d.img", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return rm_tree(dir);
}

static struct fg_drive_params tiny(const char *prefix, const char *const *sets)
{
	return (struct fg_drive_params){.prefix = prefix, .preset = "tiny", .sets = sets,
	                                .preset_dirs = presets};
}

/* fg_drive_open must fail with want in its message */
static void refused(const struct fg_drive_params *p, const char *want)
{
	char err[2048] = "";
	struct fg_drive *d = fg_drive_open(p, err, sizeof(err));
	if (d || !strstr(err, want))
		fail_msg("want a refusal with '%s', got %s: '%s'", want, d ? "a drive" : "NULL", err);
}

static void test_config_errors(void **state)
{
	(void)state;
	const char *not_kv[] = {"foo", NULL}, *bad_val[] = {"pages_per_block=x", NULL};
	const char *no_key[] = {"nokey=1", NULL}, *zero[] = {"pages_per_block=0", NULL};
	struct fg_drive_params p = tiny("ftl-", not_kv);

	refused(&p, "ftl-set=foo: expected key=value");
	p = tiny("", bad_val);
	refused(&p, "set=pages_per_block=x: ");
	p = tiny("", no_key);
	refused(&p, "set=nokey=1: ");
	p = tiny("ftl-", zero);
	refused(&p, "ftl-set=pages_per_block=0");
	p = tiny("", NULL);
	p.preset = "nope";
	refused(&p, "preset=nope: ");
	refused(&p, "FEMU_GANDALF_PRESETS=DIR replaces the search path");
	p.preset = NULL;
	p.prefix = "ftl-";
	refused(&p, "ftl-preset: needed unless ftl-snapshot names an existing file");
	p.snapshot = snap; /* (does not exist yet: no help) */
	refused(&p, "ftl-preset: needed");
}

static void test_save_load(void **state)
{
	(void)state;
	const char *other[] = {"pe_cycles=100", NULL};
	struct fg_drive_params p = tiny("", NULL);
	struct ftl_stats st;
	uint64_t done, clock;
	char err[2048];

	p.snapshot = snap;
	struct fg_drive *d = fg_drive_open(&p, err, sizeof(err));
	assert_non_null(d);
	assert_false(fg_drive_loaded(d));
	assert_int_equal(fg_drive_base(d), 0);
	struct ftl *f = fg_drive_ftl(d);
	uint64_t user = ftl_get_geometry(f)->user_bytes;
	for (uint64_t off = 0; off + (1 << 20) <= user; off += 1 << 20) /* the drive, once over */
		assert_int_equal(ftl_write(f, off, 1 << 20, 0, off / 1000, &done), FTL_OK);
	ftl_get_stats(f, &st);
	clock = st.clock_ns;
	assert_true(clock > 0);
	assert_int_equal(fg_drive_checkpoint(d, err, sizeof(err)), 0);
	assert_int_equal(fg_drive_checkpoints(d), 1);
	fg_drive_free(d);

	/* back with its writes and its clock, from the snapshot alone or with the same preset */
	for (int with_preset = 0; with_preset < 2; with_preset++) {
		p.preset = with_preset ? "tiny" : NULL;
		assert_non_null(d = fg_drive_open(&p, err, sizeof(err)));
		assert_true(fg_drive_loaded(d));
		assert_int_equal(fg_drive_base(d), clock);
		ftl_get_stats(fg_drive_ftl(d), &st);
		assert_int_equal(st.host_write_bytes, user / (1 << 20) * (1 << 20));
		assert_int_equal(fg_drive_checkpoints(d), 0);
		fg_drive_free(d);
	}
	/* another drive's description is refused, naming the key */
	p.sets = other;
	refused(&p, "pe_cycles");
	refused(&p, "preset= and set= must describe the drive the snapshot was saved from");
	/* a snapshot that is not one */
	FILE *o = fopen(snap, "r+");
	assert_non_null(o);
	fseek(o, 5000, SEEK_SET);
	fputc('X', o);
	fclose(o);
	p.sets = NULL;
	refused(&p, "snapshot=");
}

/* A checkpoint is bound to its data file: another file of another size is refused. */
static void test_bound_data(void **state)
{
	(void)state;
	struct fg_drive_params p = tiny("ftl-", NULL);
	char err[2048];
	FILE *o = fopen(data, "w");

	assert_non_null(o);
	fputs("some data", o);
	fclose(o);
	p.snapshot = snap;
	p.data = data;
	struct fg_drive *d = fg_drive_open(&p, err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(fg_drive_checkpoint(d, err, sizeof(err)), 0);
	fg_drive_free(d);
	assert_non_null(d = fg_drive_open(&p, err, sizeof(err))); /* the same file: accepted */
	fg_drive_free(d);
	assert_int_equal(truncate(data, 3), 0);
	refused(&p, "another drive's data?");
	refused(&p, "ftl-snapshot=");
}

struct extra {
	int calls;
};

static void members(struct json_out *j, void *arg)
{
	struct extra *x = arg;
	x->calls++;
	jout_str(j, "adapter", "test");
}

static void test_stats(void **state)
{
	(void)state;
	struct fg_drive_params p = tiny("", NULL);
	struct extra x = {0};
	json_error_t je;
	uint64_t done;
	char err[2048];

	p.stats = stats;
	struct fg_drive *d = fg_drive_open(&p, err, sizeof(err));
	assert_non_null(d);
	assert_int_equal(ftl_write(fg_drive_ftl(d), 0, 1 << 20, 0, 0, &done), FTL_OK);
	assert_int_equal(fg_drive_write_stats(d, members, &x, err, sizeof(err)), 0);
	assert_int_equal(x.calls, 1);
	json_t *root = json_load_file(stats, 0, &je);
	if (!root)
		fail_msg("%s: %s", stats, je.text);
	assert_string_equal(json_string_value(json_object_get(root, "adapter")), "test");
	assert_int_equal(json_integer_value(json_object_get(root, "checkpoint_seq")), 0);
	assert_int_equal(json_integer_value(json_object_get(root, "host_write_bytes")), 1 << 20);
	json_decref(root);
	fg_drive_free(d);

	/* a device node is never replaced, and the error names the property */
	p.stats = "/dev/null";
	assert_non_null(d = fg_drive_open(&p, err, sizeof(err)));
	assert_int_equal(fg_drive_write_stats(d, NULL, NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "stats=/dev/null"));
	fg_drive_free(d);
	struct stat sb;
	assert_int_equal(stat("/dev/null", &sb), 0);
	assert_true(S_ISCHR(sb.st_mode));
}

static void test_cadence(void **state)
{
	(void)state;
	struct fg_drive_params p = tiny("", NULL);
	char err[2048];

	p.snapshot = snap;
	p.stats = stats;
	p.checkpoint_s = 10;
	p.stats_s = 3;
	struct fg_drive *d = fg_drive_open(&p, err, sizeof(err));
	assert_non_null(d);
	assert_true(isinf(fg_drive_next_due(d))); /* not started */
	assert_int_equal(fg_drive_due(d, 100), 0); /* starts the periods */
	assert_true(fg_drive_next_due(d) == 103);
	assert_int_equal(fg_drive_due(d, 102.9), 0);
	assert_int_equal(fg_drive_due(d, 103), FG_DRIVE_DUE_STATS);
	assert_true(fg_drive_next_due(d) == 106);
	assert_int_equal(fg_drive_due(d, 110.5), FG_DRIVE_DUE_STATS | FG_DRIVE_DUE_CHECKPOINT);
	assert_true(fg_drive_next_due(d) == 113.5);
	assert_int_equal(fg_drive_due(d, 113), 0);
	assert_false(fg_drive_checkpoint_on_flush(d));
	fg_drive_free(d);

	/* no snapshot: no periodic checkpoint, and no checkpoint after a flush */
	p.snapshot = NULL;
	p.checkpoint_flush = true;
	assert_non_null(d = fg_drive_open(&p, err, sizeof(err)));
	fg_drive_due(d, 0);
	assert_true(fg_drive_next_due(d) == 3);
	assert_int_equal(fg_drive_due(d, 50), FG_DRIVE_DUE_STATS);
	assert_false(fg_drive_checkpoint_on_flush(d));
	assert_int_equal(fg_drive_checkpoint(d, err, sizeof(err)), 0); /* nothing to save */
	assert_int_equal(fg_drive_checkpoints(d), 0);
	fg_drive_free(d);

	/* nothing periodic at all */
	p.stats = NULL;
	assert_non_null(d = fg_drive_open(&p, err, sizeof(err)));
	fg_drive_due(d, 0);
	assert_true(isinf(fg_drive_next_due(d)));
	assert_int_equal(fg_drive_due(d, 1e9), 0);
	fg_drive_free(d);

	p.snapshot = snap;
	assert_non_null(d = fg_drive_open(&p, err, sizeof(err)));
	assert_true(fg_drive_checkpoint_on_flush(d));
	fg_drive_free(d);
}

/* QEMU's glue: its property syntax (':' between sets), the namespace check, its life. */
static void test_qemu_glue(void **state)
{
	(void)state;
	struct fg_nvme_params p = {.preset = "tiny", .sets = "::pe_cycles=100::", .snapshot = snap,
	                           .stats = stats, .checkpoint = 60};
	struct ftl_stats st;
	uint64_t delay;
	char err[2048] = "";

	setenv("FEMU_GANDALF_PRESETS", FG_PRESET_DIR, 1);
	struct fg_nvme *n = fg_nvme_open(&p, 1 << 20, err, sizeof(err));
	if (!n)
		fail_msg("%s", err);
	assert_int_equal(fg_nvme_io(n, 'W', 0, 1 << 20, 0, 5000, &delay), FTL_OK);
	assert_int_equal(delay, 0); /* latency off */
	assert_int_equal(fg_nvme_io(n, 'D', 0, 4096, 0, 6000, &delay), FTL_OK);
	assert_int_equal(fg_nvme_health(n, &st), 0);
	assert_int_equal(st.host_write_bytes, 1 << 20);
	assert_false(fg_nvme_checkpoint_due(n, 0, true)); /* ftl-checkpoint-flush is off */
	assert_false(fg_nvme_checkpoint_due(n, 1000, false)); /* the first tick starts the period */
	assert_true(fg_nvme_checkpoint_due(n, 1060, false));
	assert_int_equal(fg_nvme_close(n, err, sizeof(err)), 0);
	assert_int_equal(access(stats, F_OK), 0);

	/* the sets were applied: the snapshot's drive has pe_cycles=100, and says so */
	p.sets = "pe_cycles=200";
	n = fg_nvme_open(&p, 1 << 20, err, sizeof(err));
	assert_null(n);
	assert_non_null(strstr(err, "ftl-snapshot="));
	assert_non_null(strstr(err, "pe_cycles"));
	p.sets = "pe_cycles=100";
	assert_non_null(n = fg_nvme_open(&p, 1 << 20, err, sizeof(err)));
	fg_nvme_health(n, &st);
	assert_int_equal(st.host_write_bytes, 1 << 20); /* its writes came back */
	assert_int_equal(fg_nvme_close(n, err, sizeof(err)), 0);

	/* a namespace larger than the drive */
	p.snapshot = NULL;
	assert_null(fg_nvme_open(&p, 1ull << 40, err, sizeof(err)));
	assert_non_null(strstr(err, "the namespace 1099511627776"));
	p.sets = "foo";
	assert_null(fg_nvme_open(&p, 1 << 20, err, sizeof(err)));
	assert_non_null(strstr(err, "ftl-set=foo: expected key=value"));
	unsetenv("FEMU_GANDALF_PRESETS");
}

/* QEMU's glue with FDP: the subsystem's fdp.nruh makes the drive (fdp=on, one stream per
 * handle), a write's handle reaches its stream, the statistics are the FTL's, and the events
 * come out once each, oldest first. */
static void test_qemu_glue_fdp(void **state)
{
	(void)state;
	struct fg_nvme_params p = {.preset = "tiny", .sets = "fdp=on"};
	struct ftl_fdp_stats fs;
	struct ftl_fdp_event ev[8];
	uint64_t delay;
	char err[2048] = "";

	setenv("FEMU_GANDALF_PRESETS", FG_PRESET_DIR, 1);
	/* FDP without the subsystem's, or a stream count that is not its handle count */
	assert_null(fg_nvme_open(&p, 1 << 20, err, sizeof(err)));
	assert_non_null(strstr(err, "ftl-set=fdp=on: FDP is declared on the subsystem"));
	p.fdp_nruh = 2;
	p.sets = "host_streams=4";
	assert_null(fg_nvme_open(&p, 1 << 20, err, sizeof(err)));
	assert_non_null(strstr(err, "fdp=on and 4 host streams, the nvme-subsys fdp.nruh=2"));

	p.sets = NULL;
	struct fg_nvme *n = fg_nvme_open(&p, 1 << 20, err, sizeof(err));
	if (!n)
		fail_msg("%s", err);
	assert_int_equal(fg_nvme_io(n, 'W', 0, 256 << 10, 0, 1000, &delay), FTL_OK);
	assert_int_equal(fg_nvme_io(n, 'W', 256 << 10, 128 << 10, 1, 2000, &delay), FTL_OK);
	assert_int_equal(fg_nvme_fdp_events(n, ev, 8), 0);
	/* placement handle 5 of 2: an invalid placement ID, written through handle 0 */
	assert_int_equal(fg_nvme_io(n, 'W', 384 << 10, 64 << 10, 5, 3000, &delay), FTL_OK);
	fg_nvme_fdp_stats(n, &fs);
	assert_int_equal(fs.nruh, 2);
	assert_int_equal(fs.ruh[0].host_bytes, 320 << 10);
	assert_int_equal(fs.ruh[1].host_bytes, 128 << 10);
	assert_int_equal(fs.hbmw, 448 << 10);
	assert_int_equal(fg_nvme_fdp_events(n, ev, 8), 1);
	assert_int_equal(ev[0].type, FTL_FDP_EV_INVALID_PID);
	assert_int_equal(fg_nvme_fdp_events(n, ev, 8), 0); /* once */
	/* handle 1's RU is partly written: an update closes it with an event; no handle 2 */
	assert_int_equal(fg_nvme_ruh_update(n, 1, 4000), FTL_OK);
	assert_int_equal(fg_nvme_ruh_update(n, 2, 4000), FTL_E_INVAL);
	assert_int_equal(fg_nvme_fdp_events(n, ev, 8), 1);
	assert_int_equal(ev[0].type, FTL_FDP_EV_RU_NOT_FULLY_WRITTEN);
	assert_int_equal(ev[0].ruh, 1);
	/* three more, read one at a time: oldest first, none twice */
	for (int i = 0; i < 3; i++)
		assert_int_equal(fg_nvme_io(n, 'W', 0, 4096, 9, 5000 + i, &delay), FTL_OK);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(fg_nvme_fdp_events(n, ev, 1), 1);
		assert_int_equal(ev[0].time_ns, 5000 + i);
	}
	assert_int_equal(fg_nvme_fdp_events(n, ev, 8), 0);
	assert_int_equal(fg_nvme_close(n, err, sizeof(err)), 0);
	unsetenv("FEMU_GANDALF_PRESETS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	        cmocka_unit_test_setup_teardown(test_config_errors, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_qemu_glue_fdp, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_save_load, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_bound_data, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_stats, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_cadence, setup, teardown),
	        cmocka_unit_test_setup_teardown(test_qemu_glue, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
