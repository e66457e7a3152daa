/*
 * plugin.c - nbdkit-femu-gandalf-plugin: the emulated SSD (hw/ftl) plus a data store, served
 * as an NBD export, so QEMU's NVMe device (or any NBD client) can sit on top of the FTL.
 *
 * An adapter: every FTL decision (mapping, GC, wear, timing) is made by hw/ftl through ftl.h,
 * and the drive's life (preset and sets, the snapshot, checkpoints, the stats file and their
 * cadence) by hw/drive, which QEMU's NVMe device shares. The plugin translates NBD requests
 * into ftl_read/ftl_write/ftl_trim/ftl_flush calls, keeps the user data in a store (userdata.c:
 * none, a memfd, or a file), and adds its own members to the stats. docs/nbdkit.md is the
 * user's guide.
 *
 * Threads and locking (NBDKIT_THREAD_MODEL_PARALLEL). The FTL is single-threaded, so one mutex
 * (g.lock) covers every FTL call; it is held only for the metadata update, which is
 * microseconds. The store I/O of a request (memcpy into the memfd or a file pread/pwrite)
 * runs outside the lock, so parallel requests move data concurrently. The FTL call comes
 * first: a write the FTL refuses (end of life) never reaches the store.
 * Invariant: a 4 KiB unit the FTL does not map reads back as zeroes, because the store only
 * gets data through a write the FTL accepted, and TRIM punches exactly the units the FTL
 * invalidated (whole units; a unit a TRIM covers in part keeps its data in both).
 *
 * Virtual time. Each request's FTL call gets now_ns = base + (arrival - t0): monotonic
 * wall-clock time since the plugin started serving, so idle gaps between guest requests are
 * idle gaps for the FTL (background GC runs in them) and queueing on busy LUNs is real.
 * base is 0 for a new drive and the snapshot's latest completion time for a loaded one, so
 * virtual time never goes backwards across restarts. With latency=on a request returns no
 * earlier than arrival + (done_ns - now_ns): the FTL's modelled service time, measured from
 * when the request reached the plugin; the store I/O happens inside that window. With
 * latency=off requests return as fast as the store allows, and the FTL's clock may run ahead
 * of wall time while the host writes faster than the modelled NAND.
 *
 * Alignment. The FTL takes 512-byte multiples. nbdkit 1.32 does not enforce the advertised
 * 512-byte minimum block size, so an unaligned request is widened to 512-byte boundaries for
 * the FTL's accounting (reads, writes) or narrowed (TRIM), while the store moves exactly the
 * requested bytes.
 *
 * Lifecycle: load finds the preset search path (hw/ftl's ftl_search_path, anchored at this .so),
 * config/config_complete parse the parameters, open the drive (hw/drive: the preset, or the
 * snapshot) and the store, so a bad parameter makes nbdkit exit non-zero before it serves anything.
 * after_fork starts the clock and the stats thread. cleanup (at exit) stops the thread, saves
 * the snapshot and writes the final stats; it saves nothing if serving never started, so a
 * failed start cannot overwrite a good snapshot.
 */
#define NBDKIT_API_VERSION 2
#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL
#include <nbdkit-plugin.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <math.h>

#include "drive.h"
#include "fg_paths.h"
#include "ftl.h"
#include "json.h"
#include "userdata.h"

#define MAX_SETS 256
#define LATE_MAX_NS 1000000u

enum op { OP_READ, OP_WRITE, OP_TRIM, OP_ZERO, OP_FLUSH, OP_N };
static const char *const op_names[OP_N] = {"read", "write", "trim", "zero", "flush"};
static const char *const lat_names[] = {"off", "on", "sleep"};

struct op_stats {
	atomic_uint_fast64_t n, bytes, errors;
	atomic_uint_fast64_t model_ns; /* sum of FTL service times (done_ns - now_ns) */
	atomic_uint_fast64_t wall_ns;  /* sum of arrival-to-return times inside the plugin */
};

static struct {
	/* parameters */
	char *preset;
	char *sets[MAX_SETS + 1]; /* NULL-terminated */
	int nsets;
	enum userdata_kind data;
	char *data_path, *data_spec;
	char *snapshot, *stats;
	char *sidecar; /* SNAPSHOT.data: data=ram's data beside the snapshot (with snapshot=) */
	enum { LAT_OFF, LAT_ON, LAT_SLEEP } latency;
	bool flush_pad;
	double stats_interval;
	double checkpoint;     /* seconds between checkpoints (snapshot= only); 0: at exit only */
	bool checkpoint_flush; /* also at every flush */

	/* state */
	struct ftl_search_path presets; /* where preset=NAME is looked up */
	struct fg_drive *drive;
	struct ftl *ftl;                /* the drive's */
	pthread_mutex_t lock; /* every FTL call */
	struct userdata store;
	uint64_t size, unit;
	uint64_t t0, base; /* monotonic ns at start of serving; virtual ns at t0 */
	bool ready;
	atomic_uint_fast64_t fua, logged_errors;
	atomic_uint_fast64_t late_ewma_ns, sleeps, late_ns; /* wake-up lateness of latency sleeps */
	atomic_uint_fast64_t spinners;
	atomic_uint_fast64_t held,
	        over_ns; /* sum over held requests of release - modelled completion */
	struct op_stats ops[OP_N];

	pthread_t stats_thr; /* the stats file and the periodic checkpoints (hw/drive's cadence) */
	bool stats_started, stopping;
	pthread_mutex_t stop_lock;
	pthread_cond_t stop_cv;
} g = {
        .data = USERDATA_RAM,
        .flush_pad = true,
        .stats_interval = 2.0,
        .checkpoint = 60.0,
        .lock = PTHREAD_MUTEX_INITIALIZER,
        .stop_lock = PTHREAD_MUTEX_INITIALIZER,
};

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Virtual time of a request that arrived at monotonic time t. */
static uint64_t virt_ns(uint64_t t)
{
	return g.base + (t > g.t0 ? t - g.t0 : 0);
}

static int ftl_errno(int rc)
{
	switch (rc) {
	case FTL_E_RANGE:
	case FTL_E_INVAL:
		return EINVAL;
	case FTL_E_FULL:
		return ENOSPC;
	case FTL_E_WORN:
		return EROFS; /* nbdkit sends NBD_EPERM: the drive is write-protected */
	case FTL_E_NOMEM:
		return ENOMEM;
	}
	return EIO;
}

/* Report a failed request; past the first 20, only every power of two (a worn drive under a
 * retrying guest would otherwise flood the log). */
static int request_error(enum op op, int err, uint64_t off, uint64_t count, const char *why)
{
	uint64_t k = atomic_fetch_add(&g.ops[op].errors, 1) + 1;
	uint64_t all = atomic_fetch_add(&g.logged_errors, 1) + 1;

	if (all <= 20 || !(all & (all - 1)))
		nbdkit_error("%s at offset %" PRIu64 " length %" PRIu64 ": %s (%" PRIu64
		             " %s errors so far)",
		             op_names[op], off, count, why, k, op_names[op]);
	errno = err;
	return -1;
}

/*
 * With latency on, hold the request until its modelled completion, wake = t_arr + model, and
 * never release it earlier. A timed sleep wakes late by the host's timer and scheduler latency
 * (5-100 us on a VM, more when it is loaded), which would add to every request. latency=on
 * therefore sleeps until wake minus the running mean of that lateness and spins (reading the
 * clock) for the rest: the mean service time is the model plus about a microsecond, at the
 * cost of one CPU spinning for about the lateness per request. latency=sleep only sleeps: no
 * spinning, each request late by the wake-up latency (reported in the stats).
 */
static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void sleep_abs(uint64_t t)
{
	struct timespec ts = {.tv_sec = (time_t)(t / 1000000000u),
	                      .tv_nsec = (long)(t % 1000000000u)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void sleep_until(uint64_t wake)
{
	static __thread bool slack_set;
	uint64_t target = wake, t;

	if (!slack_set) /* the default 50 us timer slack would add to every sleep */
		prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
	slack_set = true;
	/* one spinner at a time: at queue depth > 1, spinning threads would only delay each other
	 * and the client, so the others just sleep */
	bool spin = g.latency == LAT_ON && atomic_fetch_add(&g.spinners, 1) == 0;
	if (spin)
		target -= atomic_load(&g.late_ewma_ns);
	if (target > mono_ns()) {
		sleep_abs(target);
		uint64_t late = mono_ns() - target;
		if (late > LATE_MAX_NS) /* a preemption, not the wake-up latency */
			late = LATE_MAX_NS;
		/* EWMA, weight 1/16; a racing update loses one sample, which is harmless */
		uint64_t e = atomic_load(&g.late_ewma_ns);
		atomic_store(&g.late_ewma_ns, e - e / 16 + late / 16);
		atomic_fetch_add(&g.sleeps, 1);
		atomic_fetch_add(&g.late_ns, late);
	}
	while ((t = mono_ns()) < wake)
		cpu_relax();
	if (g.latency == LAT_ON)
		atomic_fetch_sub(&g.spinners, 1);
	atomic_fetch_add(&g.held, 1);
	atomic_fetch_add(&g.over_ns, t - wake);
}

/* Account a request and, with latency on, hold it until its modelled completion. */
static void finish(enum op op, uint64_t bytes, uint64_t t_arr, uint64_t now, uint64_t done)
{
	uint64_t model = done > now ? done - now : 0;

	if (g.latency != LAT_OFF && model)
		sleep_until(t_arr + model);
	atomic_fetch_add(&g.ops[op].n, 1);
	atomic_fetch_add(&g.ops[op].bytes, bytes);
	atomic_fetch_add(&g.ops[op].model_ns, model);
	atomic_fetch_add(&g.ops[op].wall_ns, mono_ns() - t_arr);
}

static uint64_t down512(uint64_t x)
{
	return x / FTL_SECTOR * FTL_SECTOR;
}

static uint64_t up512(uint64_t x)
{
	return (x + FTL_SECTOR - 1) / FTL_SECTOR * FTL_SECTOR;
}

/* ---- parameters ------------------------------------------------------------------------- */

static int parse_onoff(const char *key, const char *v, bool *out)
{
	if (!strcmp(v, "on") || !strcmp(v, "1") || !strcmp(v, "true") || !strcmp(v, "yes")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false") || !strcmp(v, "no")) {
		*out = false;
		return 0;
	}
	nbdkit_error("%s=%s: expected on or off%s", key, v,
	             strcmp(key, "latency") ? "" : " (or sleep)");
	return -1;
}

static int set_path(char **dst, const char *key, const char *v)
{
	if (*dst) {
		nbdkit_error("%s= given twice", key);
		return -1;
	}
	if (!*v) {
		nbdkit_error("%s=: empty path", key);
		return -1;
	}
	*dst = nbdkit_absolute_path(v); /* nbdkit may chdir("/") when it daemonizes */
	return *dst ? 0 : -1;
}

static int config_set(const char *value)
{
	struct ftl_config scratch;
	char err[512];

	if (g.nsets == MAX_SETS) {
		nbdkit_error("set=%s: more than %d set= parameters", value, MAX_SETS);
		return -1;
	}
	/* check the key and the value's syntax and bounds now; relations between keys are
	 * checked once the preset is loaded */
	ftl_config_default(&scratch);
	if (fg_drive_set("", &scratch, value, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	g.sets[g.nsets] = strdup(value);
	return g.sets[g.nsets++] ? 0 : -1;
}

static int config_data(const char *value)
{
	free(g.data_spec);
	free(g.data_path);
	g.data_path = NULL;
	g.data_spec = strdup(value);
	if (!strcmp(value, "ram")) {
		g.data = USERDATA_RAM;
	} else if (!strcmp(value, "none")) {
		g.data = USERDATA_NONE;
	} else if (!strncmp(value, "file:", 5) && value[5]) {
		g.data = USERDATA_FILE;
		g.data_path = nbdkit_absolute_path(value + 5);
		if (!g.data_path)
			return -1;
	} else {
		nbdkit_error("data=%s: expected ram, none or file:PATH", value);
		return -1;
	}
	return 0;
}

static int fg_config(const char *key, const char *value)
{
	if (!strcmp(key, "preset")) {
		if (g.preset) {
			nbdkit_error("preset= given twice (%s, %s)", g.preset, value);
			return -1;
		}
		g.preset = strdup(value);
		return g.preset ? 0 : -1;
	}
	if (!strcmp(key, "set"))
		return config_set(value);
	if (!strcmp(key, "data"))
		return config_data(value);
	if (!strcmp(key, "snapshot"))
		return set_path(&g.snapshot, key, value);
	if (!strcmp(key, "stats"))
		return set_path(&g.stats, key, value);
	if (!strcmp(key, "latency")) {
		bool on;
		if (!strcmp(value, "sleep")) {
			g.latency = LAT_SLEEP;
			return 0;
		}
		if (parse_onoff(key, value, &on))
			return -1;
		g.latency = on ? LAT_ON : LAT_OFF;
		return 0;
	}
	if (!strcmp(key, "flush")) {
		if (strcmp(value, "pad") && strcmp(value, "ignore")) {
			nbdkit_error("flush=%s: expected pad or ignore", value);
			return -1;
		}
		g.flush_pad = !strcmp(value, "pad");
		return 0;
	}
	if (!strcmp(key, "checkpoint_flush")) {
		return parse_onoff(key, value, &g.checkpoint_flush);
	}
	if (!strcmp(key, "checkpoint")) {
		char *end;
		double v = strtod(value, &end);
		if (end == value || *end || !(v == 0 || (v >= 0.01 && v <= 86400))) {
			nbdkit_error("checkpoint=%s: expected seconds in [0.01, 86400], or 0 (at exit only)",
			             value);
			return -1;
		}
		g.checkpoint = v;
		return 0;
	}
	if (!strcmp(key, "stats_interval")) {
		char *end;
		double v = strtod(value, &end);
		if (end == value || *end || !(v >= 0.01 && v <= 86400)) {
			nbdkit_error("stats_interval=%s: expected seconds in [0.01, 86400]", value);
			return -1;
		}
		g.stats_interval = v;
		return 0;
	}
	nbdkit_error(
	        "unknown parameter '%s' (expected preset, set, data, snapshot, stats, latency, "
	        "flush, stats_interval, checkpoint or checkpoint_flush; see docs/nbdkit.md)",
	        key);
	return -1;
}

/*
 * The preset search path (docs/install.md), anchored at this shared object rather than at
 * nbdkit's executable: build/nbdkit-femu-gandalf-plugin.so reads the source tree's presets,
 * the installed plugin (in nbdkit's plugin directory) the installed ones. Built at load, right
 * after dlopen: the .so's path may be relative, and nbdkit may chdir later.
 */
static void fg_load(void)
{
	struct ftl_search_spec spec = {
	        .env = "FEMU_GANDALF_PRESETS",
	        .build_dir = FG_BUILD_ROOT,
	        .src_dir = FG_SOURCE_ROOT "/hw/ftl/presets",
	        .install_dir = FG_NBDKIT_PLUGINDIR,
	        .data_dir = FG_PKGDATADIR "/presets",
	};
	Dl_info di;

	if (dladdr(&g, &di) && di.dli_fname && strchr(di.dli_fname, '/'))
		spec.self = di.dli_fname;
	else
		spec.install_dir = spec.build_dir = NULL; /* only the configured datadir is known */
	ftl_search_path(&g.presets, &spec);
}

static char *data_sidecar(void)
{
	size_t n = strlen(g.snapshot) + 8;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s.data", g.snapshot);
	return p;
}

/* The file the saved state is bound to: data=file's, data=ram's .data file beside the snapshot,
 * NULL for data=none. */
static const char *bound_data(void)
{
	return g.data == USERDATA_FILE ? g.data_path : g.data == USERDATA_RAM ? g.sidecar : NULL;
}

/* The data store, and a loaded snapshot's data when the store is in RAM. */
static int open_store(void)
{
	char err[512];
	bool loaded = fg_drive_loaded(g.drive); /* (hw/drive checked that the state is this data's) */

	if (userdata_open(&g.store, g.data, g.data_path, g.size, !loaded, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	if (loaded && g.data == USERDATA_RAM) {
		if (userdata_load(&g.store, g.sidecar, err, sizeof(err))) {
			nbdkit_error(
			        "snapshot=%s with data=ram: cannot load the data: %s (a snapshot "
			        "saved with data=none or data=file has no .data file)",
			        g.snapshot, err);
			return -1;
		}
	}
	return 0;
}

static int fg_config_complete(void)
{
	char err[2048];

	if (!g.preset) {
		nbdkit_error(
		        "preset= is required: a name from %s (femu-gandalf presets) or an .ini "
		        "file",
		        ftl_search_path_str(g.presets.dir, err, sizeof(err)));
		return -1;
	}
	if (g.snapshot && !(g.sidecar = data_sidecar())) {
		nbdkit_error("snapshot=%s: out of memory", g.snapshot);
		return -1;
	}
	struct fg_drive_params p = {
	        .prefix = "",
	        .preset = g.preset,
	        .sets = (const char *const *)g.sets,
	        .preset_dirs = g.presets.dir,
	        .snapshot = g.snapshot,
	        .stats = g.stats,
	        .data = bound_data(),
	        .checkpoint_s = g.checkpoint,
	        .stats_s = g.stats_interval,
	        .checkpoint_flush = g.checkpoint_flush,
	        .lock = &g.lock,
	};
	if (!(g.drive = fg_drive_open(&p, err, sizeof(err)))) {
		nbdkit_error("%s", err);
		return -1;
	}
	g.ftl = fg_drive_ftl(g.drive);
	if (ftl_get_config(g.ftl)->fdp) {
		/* NBD's write carries no placement hint: every write would land on handle 0 */
		nbdkit_error("fdp=on: NBD has no placement hints, so FDP cannot work through nbdkit "
		             "(every write would go to handle 0); drop set=fdp=on, or run the drive "
		             "inside QEMU's NVMe device (docs/fdp.md)");
		fg_drive_free(g.drive);
		g.drive = NULL;
		g.ftl = NULL;
		return -1;
	}
	g.base = fg_drive_base(g.drive);
	g.size = ftl_get_geometry(g.ftl)->user_bytes;
	g.unit = ftl_get_config(g.ftl)->unit_size;
	if (open_store())
		return -1;
	nbdkit_debug("femu-gandalf: preset %s, %" PRIu64 " user bytes, data=%s%s, latency=%s",
	             ftl_get_config(g.ftl)->name, g.size, g.data_spec ? g.data_spec : "ram",
	             fg_drive_loaded(g.drive) ? ", snapshot loaded" : "", lat_names[g.latency]);
	return 0;
}

/* ---- stats -------------------------------------------------------------------------------- */

/* The plugin's own members: the "nbdkit" object of the stats file. */
static void stats_plugin_json(struct json_out *j, void *final_flag)
{
	bool final = *(const bool *)final_flag;
	uint64_t now = mono_ns(), sleeps = atomic_load(&g.sleeps), held = atomic_load(&g.held);

	jout_object(j, "nbdkit", JOUT_INLINE);
	jout_num(j, "uptime_s", "%.3f", (double)(now - g.t0) / 1e9);
	jout_bool(j, "final", final);
	jout_str(j, "data", g.data_spec ? g.data_spec : "ram");
	jout_u64(j, "data_allocated_bytes", userdata_allocated(&g.store));
	jout_str(j, "snapshot", g.snapshot); /* null without one */
	jout_bool(j, "snapshot_loaded", fg_drive_loaded(g.drive));
	jout_u64(j, "virtual_time_base_ns", g.base);
	jout_num(j, "checkpoint_interval_s", "%g", g.snapshot ? g.checkpoint : 0);
	jout_bool(j, "checkpoint_on_flush", g.snapshot && g.checkpoint_flush);
	pthread_mutex_lock(&g.lock); /* (counted under it, by save_state) */
	jout_u64(j, "checkpoints", fg_drive_checkpoints(g.drive));
	pthread_mutex_unlock(&g.lock);
	jout_break(j);
	jout_str(j, "latency", lat_names[g.latency]);
	jout_str(j, "flush", g.flush_pad ? "pad" : "ignore");
	jout_u64(j, "fua_writes", atomic_load(&g.fua));
	jout_u64(j, "held", held);
	jout_num(j, "release_late_ns_mean", "%.0f",
	         held ? (double)atomic_load(&g.over_ns) / (double)held : 0.0);
	jout_u64(j, "sleeps", sleeps);
	jout_num(j, "sleep_late_ns_mean", "%.0f",
	         sleeps ? (double)atomic_load(&g.late_ns) / (double)sleeps : 0.0);
	jout_u64(j, "sleep_late_ns_ewma", atomic_load(&g.late_ewma_ns));
	jout_break(j);
	jout_object(j, "requests", JOUT_BLOCK);
	for (int i = 0; i < OP_N; i++) {
		struct op_stats *s = &g.ops[i];
		uint64_t n = atomic_load(&s->n);
		jout_object(j, op_names[i], JOUT_INLINE);
		jout_u64(j, "n", n);
		jout_u64(j, "bytes", atomic_load(&s->bytes));
		jout_u64(j, "errors", atomic_load(&s->errors));
		jout_num(j, "model_ns_mean", "%.0f",
		         n ? (double)atomic_load(&s->model_ns) / (double)n : 0.0);
		jout_num(j, "wall_ns_mean", "%.0f",
		         n ? (double)atomic_load(&s->wall_ns) / (double)n : 0.0);
		jout_end(j);
	}
	jout_end(j);
	jout_break(j);
	jout_end(j);
}

/* The stats file (hw/drive: these members, then the FTL's, written whole or not at all). */
static void write_stats(bool final)
{
	static bool warned; /* say it once; the next period tries again */
	char err[1024];

	if (fg_drive_write_stats(g.drive, stats_plugin_json, &final, err, sizeof(err)) && !warned) {
		nbdkit_error("%s", err);
		warned = true;
	}
}

/*
 * A checkpoint: the data made durable (fdatasync; data=ram: saved to the .data file), then the
 * FTL state saved atomically and bound to that data (hw/ftl/checkpoint.c), so that a crash at
 * any moment leaves a state that matches its data. The data goes first: if the FTL snapshot
 * fails, the old one names older data, which is the lesser evil next to a new state with no
 * data. At exit, and with the FTL lock held while serving. 0, or -1 (logged).
 */
static int save_state(void)
{
	char err[512];

	if (userdata_sync(&g.store))
		nbdkit_error("data=%s: fdatasync: %s", g.data_spec, strerror(errno));
	if (g.data != USERDATA_RAM) {
		unlink(g.sidecar); /* a stale .data from a data=ram run no longer matches */
	} else if (userdata_save(&g.store, g.sidecar, err, sizeof(err))) {
		nbdkit_error("snapshot=%s: cannot save the data: %s", g.snapshot, err);
		return -1;
	}
	if (fg_drive_checkpoint(g.drive, err, sizeof(err))) {
		nbdkit_error("%s", err);
		return -1;
	}
	return 0;
}

static void checkpoint_now(void)
{
	pthread_mutex_lock(&g.lock);
	save_state();
	pthread_mutex_unlock(&g.lock);
}

static double mono_s(void)
{
	return (double)mono_ns() / 1e9;
}

/* The stats file every stats_interval seconds, a checkpoint every checkpoint seconds (with a
 * snapshot): whatever hw/drive says is due. */
static void *ticker_main(void *arg)
{
	pthread_mutex_lock(&g.stop_lock);
	while (!g.stopping) {
		double at = fg_drive_next_due(g.drive);
		struct timespec ts = {.tv_sec = (time_t)at,
		                      .tv_nsec = (long)((at - floor(at)) * 1e9)};
		pthread_cond_timedwait(&g.stop_cv, &g.stop_lock, &ts);
		if (g.stopping)
			break;
		pthread_mutex_unlock(&g.stop_lock);
		unsigned due = fg_drive_due(g.drive, mono_s());
		if (due & FG_DRIVE_DUE_CHECKPOINT)
			checkpoint_now();
		if (due & FG_DRIVE_DUE_STATS)
			write_stats(false);
		pthread_mutex_lock(&g.stop_lock);
	}
	pthread_mutex_unlock(&g.stop_lock);
	return NULL;
}

/* After nbdkit's fork into the background (threads do not survive a fork), before serving. */
static int fg_after_fork(void)
{
	g.t0 = mono_ns();
	g.ready = true;
	write_stats(false); /* (without stats=, nothing) */
	fg_drive_due(g.drive, mono_s()); /* the periods start now */
	if (isinf(fg_drive_next_due(g.drive)))
		return 0; /* nothing periodic */
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g.stop_cv, &ca);
	pthread_condattr_destroy(&ca);
	int rc = pthread_create(&g.stats_thr, NULL, ticker_main, NULL);
	if (rc) {
		nbdkit_error("cannot start the stats and checkpoint thread: %s", strerror(rc));
		return -1;
	}
	g.stats_started = true;
	return 0;
}

/* At exit, after the last connection closed: save the snapshot, write the final stats. */
static void fg_cleanup(void)
{
	if (g.stats_started) {
		pthread_mutex_lock(&g.stop_lock);
		g.stopping = true;
		pthread_cond_signal(&g.stop_cv);
		pthread_mutex_unlock(&g.stop_lock);
		pthread_join(g.stats_thr, NULL);
		g.stats_started = false;
	}
	if (!g.ready || !g.ftl)
		return;
	if (g.snapshot)
		save_state();
	else if (userdata_sync(&g.store))
		nbdkit_error("data=%s: fdatasync: %s", g.data_spec, strerror(errno));
	write_stats(true);
	g.ready = false;
}

static void fg_unload(void)
{
	userdata_close(&g.store);
	fg_drive_free(g.drive);
	g.drive = NULL;
	g.ftl = NULL;
	free(g.preset);
	for (int i = 0; i < g.nsets; i++)
		free(g.sets[i]);
	free(g.data_spec);
	free(g.data_path);
	free(g.snapshot);
	free(g.sidecar);
	free(g.stats);
}

/* The search path in lookup order, ':'-separated like $PATH, and why it is that one. */
static void fg_dump_plugin(void)
{
	printf("femu_gandalf_preset_path=");
	for (int i = 0; g.presets.dir[i]; i++)
		printf("%s%s", i ? ":" : "", g.presets.dir[i]);
	printf("\nfemu_gandalf_preset_path_origin=%s\n", g.presets.origin);
}

/* ---- connections and requests --------------------------------------------------------------- */

static void *fg_open(int readonly)
{
	return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t fg_get_size(void *h)
{
	return (int64_t)g.size;
}

static int fg_block_size(void *h, uint32_t *minimum, uint32_t *preferred, uint32_t *maximum)
{
	uint64_t u = g.unit;
	*minimum = FTL_SECTOR;
	*preferred = u >= 512 && u <= (32u << 20) && !(u & (u - 1)) ? (uint32_t)u : 4096;
	*maximum = 0xffffffff;
	return 0;
}

static int fg_can_true(void *h)
{
	return 1;
}

static int fg_can_fua(void *h)
{
	return NBDKIT_FUA_NATIVE;
}

static int fg_is_rotational(void *h)
{
	return 0;
}

static int fg_pread(void *h, void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	uint64_t t = mono_ns(), now = virt_ns(t), done = now;
	uint64_t a = down512(off), e = up512(off + count);
	int rc, err;

	if (!count)
		return 0;
	pthread_mutex_lock(&g.lock);
	rc = ftl_read(g.ftl, a, e - a, now, &done);
	pthread_mutex_unlock(&g.lock);
	if (rc)
		return request_error(OP_READ, ftl_errno(rc), off, count, ftl_strerror(rc));
	err = userdata_read(&g.store, buf, count, off);
	if (err)
		return request_error(OP_READ, err, off, count, strerror(err));
	finish(OP_READ, count, t, now, done);
	return 0;
}

/* FTL side of a FUA write or a flush: program the partly filled pages (flush=pad). */
static void ftl_flush_locked(uint64_t now, uint64_t *done)
{
	uint64_t d = now;
	if (g.flush_pad && ftl_flush(g.ftl, now, &d) == FTL_OK && d > *done)
		*done = d;
}

static int fg_pwrite(void *h, const void *buf, uint32_t count, uint64_t off, uint32_t flags)
{
	uint64_t t = mono_ns(), now = virt_ns(t), done = now;
	uint64_t a = down512(off), e = up512(off + count);
	int rc, err;

	if (!count)
		return 0;
	pthread_mutex_lock(&g.lock);
	rc = ftl_write(g.ftl, a, e - a, 0, now, &done);
	if (!rc && (flags & NBDKIT_FLAG_FUA))
		ftl_flush_locked(now, &done);
	pthread_mutex_unlock(&g.lock);
	if (rc)
		return request_error(OP_WRITE, ftl_errno(rc), off, count, ftl_strerror(rc));
	err = userdata_write(&g.store, buf, count, off);
	if (err)
		return request_error(OP_WRITE, err, off, count, strerror(err));
	if (flags & NBDKIT_FLAG_FUA)
		atomic_fetch_add(&g.fua, 1);
	finish(OP_WRITE, count, t, now, done);
	return 0;
}

static int fg_flush(void *h, uint32_t flags)
{
	uint64_t t = mono_ns(), now = virt_ns(t), done = now;

	pthread_mutex_lock(&g.lock);
	ftl_flush_locked(now, &done);
	pthread_mutex_unlock(&g.lock);
	if (fg_drive_checkpoint_on_flush(g.drive))
		checkpoint_now();
	finish(OP_FLUSH, 0, t, now, done);
	return 0;
}

/* Whole mapping units inside [off, off+count): [*ua, *ue), empty when *ue <= *ua. */
static void whole_units(uint64_t off, uint64_t count, uint64_t *ua, uint64_t *ue)
{
	*ua = (off + g.unit - 1) / g.unit * g.unit;
	*ue = (off + count) / g.unit * g.unit;
}

static int fg_trim(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	uint64_t t = mono_ns(), now = virt_ns(t), done = now;
	uint64_t a = up512(off), e = down512(off + count), ua, ue;
	int rc = 0, err;

	if (e > a) {
		pthread_mutex_lock(&g.lock);
		rc = ftl_trim(g.ftl, a, e - a, now, &done);
		pthread_mutex_unlock(&g.lock);
	}
	if (rc)
		return request_error(OP_TRIM, ftl_errno(rc), off, count, ftl_strerror(rc));
	whole_units(off, count, &ua, &ue);
	err = ue > ua ? userdata_zero(&g.store, ue - ua, ua) : 0;
	if (err)
		return request_error(OP_TRIM, err, off, count, strerror(err));
	finish(OP_TRIM, count, t, now, done);
	return 0;
}

/*
 * Write zeroes (ftl_write_zeroes). With may_trim (QEMU: discard=unmap and the NVMe DEAC bit), the whole units
 * inside the range are trimmed and the partial units at either end written, as a drive that
 * deallocates does; without it, the whole range is written through the FTL. Either way the
 * store punches the exact range, so it reads back as zeroes.
 */
static int fg_zero(void *h, uint32_t count, uint64_t off, uint32_t flags)
{
	uint64_t t = mono_ns(), now = virt_ns(t), done = now;
	int rc, err;

	if (!count)
		return 0;
	pthread_mutex_lock(&g.lock);
	rc = ftl_write_zeroes(g.ftl, down512(off), up512(off + count) - down512(off),
	                      flags & NBDKIT_FLAG_MAY_TRIM, now, &done);
	if (!rc && (flags & NBDKIT_FLAG_FUA))
		ftl_flush_locked(now, &done);
	pthread_mutex_unlock(&g.lock);
	if (rc)
		return request_error(OP_ZERO, ftl_errno(rc), off, count, ftl_strerror(rc));
	err = userdata_zero(&g.store, count, off);
	if (err)
		return request_error(OP_ZERO, err, off, count, strerror(err));
	finish(OP_ZERO, count, t, now, done);
	return 0;
}

#define CONFIG_HELP                                                                                \
	"preset=NAME|FILE       (required) preset name (docs/install.md) or .ini file\n"           \
	"set=KEY=VALUE          override one preset key (repeatable; femu-gandalf config-keys)\n"  \
	"data=ram|none|file:P   user data store (default ram; none: reads return zeroes)\n"        \
	"snapshot=PATH          load the drive state at start if PATH exists, save it at exit\n"   \
	"stats=PATH             JSON stats, every stats_interval seconds and at exit\n"            \
	"stats_interval=SEC     default 2\n"                                                       \
	"latency=on|sleep|off   complete requests at the FTL timing model's time (default off)\n"  \
	"flush=pad|ignore       flush and FUA program partly filled NAND pages (default pad)\n"   \
	"checkpoint=SEC         with snapshot=: save the state (and data=ram's data) every SEC\n" \
	"                       seconds, crash-safe (default 60; 0: at exit only)\n"              \
	"checkpoint_flush=on    with snapshot=: also at every flush"

static struct nbdkit_plugin plugin = {
        .name = "femu-gandalf",
        .longname = "femu-gandalf emulated SSD (FTL, GC, wear, NAND timing)",
        .version = "0.1.0",
        .description = "Serves hw/ftl, the femu-gandalf NAND + FTL model, plus a data store",
        .magic_config_key = "preset",
        .load = fg_load,
        .config = fg_config,
        .config_complete = fg_config_complete,
        .config_help = CONFIG_HELP,
        .after_fork = fg_after_fork,
        .cleanup = fg_cleanup,
        .unload = fg_unload,
        .dump_plugin = fg_dump_plugin,
        .open = fg_open,
        .get_size = fg_get_size,
        .block_size = fg_block_size,
        .can_write = fg_can_true,
        .can_flush = fg_can_true,
        .can_trim = fg_can_true,
        .can_zero = fg_can_true,
        .can_fua = fg_can_fua,
        .can_multi_conn = fg_can_true,
        .is_rotational = fg_is_rotational,
        .pread = fg_pread,
        .pwrite = fg_pwrite,
        .flush = fg_flush,
        .trim = fg_trim,
        .zero = fg_zero,
        .errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN(plugin)
