/*
 * ftl.h - the one public header of hw/ftl, the NAND + flash translation layer model.
 *
 * Everything in femu-gandalf that touches "the SSD" goes through this API: the in-process
 * replay, the nbdkit plugin behind QEMU's NVMe device, and (later) the FTL built into QEMU.
 * So a WAF or an erase count means the same thing on every path.
 *
 * The model stores no user data, only metadata: an L2P table, a P2L table and a valid bitmap
 * (about 8.6 bytes per 4 KiB mapping unit at 10% spare), per-block erase counts and
 * endurance, write frontiers, GC state and a NAND timing model in virtual nanoseconds.
 *
 * Addresses are bytes; they must be multiples of FTL_SECTOR (512). Every I/O call takes the
 * virtual time at which the host issued it and returns the time it completes.
 * All calls return FTL_OK (0) or a negative FTL_E_* status; ftl_strerror() names it.
 */
#ifndef FTL_H
#define FTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FTL_SECTOR 512u
#define FTL_NAME_MAX 64
#define FTL_STREAMS_MAX 64 /* host write frontiers (FDP reclaim unit handles) at most */

enum ftl_status {
	FTL_OK = 0,
	FTL_E_INVAL = -1,   /* zero length, misaligned, bad argument */
	FTL_E_RANGE = -2,   /* LBA range past the end of the device */
	FTL_E_FULL = -3,    /* no reclaimable space: the device is full of valid data */
	FTL_E_WORN = -4,    /* end of life: the device is read-only */
	FTL_E_NOMEM = -5,   /* allocation failed */
	FTL_E_IO = -6,      /* snapshot or preset file I/O failed */
	FTL_E_CORRUPT = -7, /* snapshot truncated, corrupted or of another version */
	FTL_E_NOENT = -8,   /* no such preset on the search path */
};
const char *ftl_strerror(int status);

enum ftl_gc_unit { FTL_GC_BLOCK, FTL_GC_SUPERBLOCK };
/* separate: GC copies on their own frontier. shared: on host frontier 0, host writes resuming
 * behind each victim's copies (mixed pool). shared-burst: on host frontier 0, foreground GC in
 * bursts until the pool is above its threshold (FEMU bbssd). docs/ftl.md. */
enum ftl_gc_stream { FTL_GC_SEPARATE, FTL_GC_SHARED, FTL_GC_SHARED_BURST };
enum ftl_gc_policy { FTL_GC_GREEDY, FTL_GC_FIFO, FTL_GC_COST_BENEFIT, FTL_GC_DCHOICE };
/* When background GC runs: in the device's idle time before a host command (idle), or one cycle
 * after every host command while the pool is below the threshold, busy or not (command: FEMU
 * bbssd's rule, docs/ftl.md). */
enum ftl_gc_bg_trigger { FTL_GC_BG_IDLE, FTL_GC_BG_COMMAND };
/* NVMe Flexible Data Placement (docs/fdp.md): the host_streams frontiers become reclaim unit
 * handles. Initially isolated: GC copies of every handle go to one GC frontier (mixed);
 * persistently isolated: each handle has a GC frontier of its own, so its data never shares a
 * reclaim unit with another handle's. */
enum ftl_fdp_ruh_type { FTL_RUHT_INITIALLY, FTL_RUHT_PERSISTENTLY };

/*
 * Configuration. Fill with ftl_config_default(), change with ftl_config_set() (the same
 * key=value names as the preset INI files), check with ftl_config_validate().
 */
struct ftl_config {
	char name[FTL_NAME_MAX];
	uint32_t channels, luns_per_channel, planes_per_lun, blocks_per_plane, pages_per_block;
	uint32_t page_size, unit_size;
	double op_percent;   /* OP = (T-U)/U in percent; < 0 when spare_factor is used */
	double spare_factor; /* Sf = (T-U)/T; < 0 when op_percent is used */
	uint32_t pe_cycles;
	double pe_variation; /* relative std-dev of per-block endurance */
	double dwpd, warranty_years;
	double t_read_us, t_prog_us, t_erase_us, channel_mbps;
	bool multiplane;         /* planes of a LUN run operations of one kind together */
	double t_suspend_us;     /* program/erase suspend latency for host reads; 0 = no suspend */
	uint32_t suspend_max;    /* suspensions of one program or erase at most */
	double host_mbps;        /* host link bandwidth (PCIe); 0 = no link model */
	double t_cmd_us;         /* controller time per host read or write command (not a resource) */
	enum ftl_gc_unit gc_unit;
	uint32_t gc_unit_superblocks; /* gc_unit=superblock: superblocks per GC unit (FDP: per RU) */
	enum ftl_gc_stream gc_stream;
	enum ftl_gc_policy gc_policy;
	uint32_t gc_dchoice;     /* d for d-choice */
	uint32_t gc_reserve;     /* free GC units held back for GC, per frontier slot */
	double gc_bg_free_pct;   /* background GC below this % of free GC units */
	double gc_fg_free_pct;   /* foreground GC below this % of free GC units */
	double gc_bg_min_invalid_pct; /* background GC only takes victims at least this % invalid */
	enum ftl_gc_bg_trigger gc_bg_trigger; /* when background GC runs */
	bool wl_static;          /* static wear leveling on/off */
	uint32_t wl_threshold;   /* max-min erase count that triggers static WL; 0 = auto */
	uint32_t write_buffer_pages; /* controller write buffer, in NAND pages; 0 = auto */
	uint32_t host_streams;   /* host write frontiers (placement hints) */
	bool fdp;                /* FDP: host_streams are reclaim unit handles (docs/fdp.md) */
	enum ftl_fdp_ruh_type fdp_ruh_type;
	double spare_threshold_pct; /* end of life when available spare falls below this */
	uint64_t seed;           /* seeds the endurance distribution */
};

void ftl_config_default(struct ftl_config *cfg);
/* Set one key. On error returns FTL_E_INVAL and writes "key=value: reason" into err. */
int ftl_config_set(struct ftl_config *cfg, const char *key, const char *value, char *err,
		   size_t errlen);
/* Check the whole config; the error names the offending key, e.g. "pages_per_block=0: must be > 0". */
int ftl_config_validate(const struct ftl_config *cfg, char *err, size_t errlen);
struct ftl_geometry;
/* ftl_config_validate(), and the drive's geometry into g (user and physical bytes...) without
 * making the drive. */
int ftl_config_geometry(const struct ftl_config *cfg, struct ftl_geometry *g, char *err,
                        size_t errlen);
/* Write every key as "key=value\n" lines; returns the length (snprintf semantics: a result
 * >= len means the text was cut). FTL_CONFIG_TEXT_MAX holds any config's text with room to
 * spare (about 1.3 KB today), and is the bound a snapshot's config section is read against. */
#define FTL_CONFIG_TEXT_MAX 8192
size_t ftl_config_format(const struct ftl_config *cfg, char *buf, size_t len);
/* The first key whose value differs between two configs (the informational name= ignored):
 * 0 when they describe the same drive, else 1 with
 * "the snapshot's drive has KEY=HAVE, this run asks for KEY=WANT" in out. */
int ftl_config_diff(const struct ftl_config *want, const struct ftl_config *have, char *out,
                    size_t outlen);
/* Iterate the key table: returns NULL past the end. help gets a one-line description. */
const char *ftl_config_key(size_t i, const char **help);

/*
 * Presets and where they are found (docs/install.md).
 *
 * A preset is an INI file: an [ssd] group of the config keys above, each applied with
 * ftl_config_set() in file order, and an [about] group whose description= is reported. Lines
 * starting with '#' are comments; keys and values are trimmed and otherwise taken literally; a
 * key given twice keeps the last value; other groups are ignored. [ssd] must set op_percent or
 * spare_factor.
 *
 * Which directories a preset NAME is looked up in is the caller's decision, passed as a
 * NULL-terminated list. ftl_search_path() builds the project's standard list for any data
 * directory (presets, the model catalog) from where the running binary is.
 */
#define FTL_PATH_MAX 4096
#define FTL_SEARCH_MAX 2

struct ftl_search_spec {
	const char *env;         /* override variable, e.g. "FEMU_GANDALF_PRESETS" */
	const char *self;        /* the running executable or shared object; NULL: /proc/self/exe */
	const char *build_dir;   /* where the uninstalled binaries are built */
	const char *src_dir;     /* the source tree's copy, read only by those binaries */
	const char *install_dir; /* where self is installed (absolute, as configured) */
	const char *data_dir;    /* where the data is installed (absolute, as configured) */
};

struct ftl_search_path {
	const char *dir[FTL_SEARCH_MAX + 1]; /* lookup order, NULL-terminated */
	const char *origin; /* why: spec->env's name, "build tree" or "installed" */
	char buf[FTL_SEARCH_MAX][FTL_PATH_MAX];
};

/*
 * Fill sp, first rule that applies:
 *   1. $env set and not empty: that directory alone;
 *   2. self's directory is build_dir: src_dir alone (an uninstalled binary reads the source
 *      tree; an installed or copied one never does);
 *   3. dirname(self) plus the relative path from install_dir to data_dir, then data_dir itself
 *      unless it is the same directory. The first finds a tree installed with DESTDIR or moved
 *      as a whole, the second the data of a binary copied away from its tree.
 * Never fails: a directory that cannot be derived is left out, so sp->dir may be empty.
 */
void ftl_search_path(struct ftl_search_path *sp, const struct ftl_search_spec *spec);
/* The directories as "A, B" for messages ("(none)" when empty); returns buf. */
const char *ftl_search_path_str(const char *const *dirs, char *buf, size_t len);
/* First dirs[i]/file that exists, into path. FTL_OK, or FTL_E_NOENT (path unchanged). */
int ftl_search_find(const char *const *dirs, const char *file, char *path, size_t pathlen);

struct ftl_preset_info {
	char path[FTL_PATH_MAX]; /* the file that was read */
	char description[256];   /* [about] description=, "" when absent */
};

/*
 * Load a preset into cfg, starting from ftl_config_default(). name_or_file is a file when it
 * contains '/' or ends in ".ini"; otherwise NAME.ini is taken from the first of dirs that has
 * it. The name becomes cfg->name (the file's base name without .ini) unless [ssd] sets name=.
 * info may be NULL. The whole config is not validated: callers apply their overrides, then call
 * ftl_config_validate(). Returns FTL_OK, or writes one line into err and returns
 *   FTL_E_NOENT  "unknown preset 'nope' (no nope.ini in DIR1, DIR2)"
 *   FTL_E_IO     "FILE: No such file or directory" (a FILE that cannot be read)
 *   FTL_E_INVAL  "FILE:LINE: channels=two: not a number" (ftl_config_set's error),
 *                "FILE:LINE: expected [group] or key=value",
 *                "FILE:LINE: channels= before any [group]", "FILE: no [ssd] group",
 *                "FILE: set op_percent or spare_factor"
 *   FTL_E_NOMEM  "FILE: Cannot allocate memory" (a line that does not fit in memory)
 */
int ftl_preset_load(struct ftl_config *cfg, const char *name_or_file, const char *const *dirs,
		    struct ftl_preset_info *info, char *err, size_t errlen);

/* Derived geometry. "GC unit" is a block or a superblock (same block index on every plane). */
struct ftl_geometry {
	uint64_t user_bytes, phys_bytes;
	uint64_t user_units, phys_units;
	uint32_t units_per_page, units_per_block, units_per_gc_unit;
	uint32_t planes, luns, blocks, gc_units, blocks_per_gc_unit;
	uint32_t frontier_slots; /* open blocks per write frontier */
	uint32_t reserve_gc_units, fg_free_gc_units, bg_free_gc_units;
};

struct ftl;

struct ftl *ftl_create(const struct ftl_config *cfg, char *err, size_t errlen);
void ftl_destroy(struct ftl *ftl);
/*
 * on: the tables of drives destroyed from now on are kept, and a drive created next with the
 * same geometry reuses them, zeroed (its state is exactly a fresh drive's); a drive of another
 * geometry releases them first. off: undo one on; the last one releases what is kept (so a
 * batch of runs and each run's own points can both ask). For a process that runs drives one
 * after another (kv's points, sweep --run-batch); not thread-safe: call it before and after,
 * with no drive being created or destroyed meanwhile.
 */
void ftl_keep_tables(bool on);
const struct ftl_config *ftl_get_config(const struct ftl *ftl);
const struct ftl_geometry *ftl_get_geometry(const struct ftl *ftl);

/*
 * I/O. off and len are bytes, multiples of FTL_SECTOR, len > 0, inside the user capacity.
 * stream is a placement hint (0..host_streams-1, taken modulo). now_ns is the virtual time
 * of issue; *done_ns (may be NULL) receives the completion time.
 *
 * A write that covers part of a mapping unit is a read-modify-write of that unit: the old
 * unit (if mapped) is read from NAND and the whole unit is programmed again.
 * A TRIM invalidates every unit it fully covers. A unit it covers only in part keeps its data
 * (rewriting it would cost a program); those are counted in trim_partial_units.
 * After end of life, write and trim fail with FTL_E_WORN; reads still succeed.
 */
int ftl_write(struct ftl *ftl, uint64_t off, uint64_t len, unsigned stream, uint64_t now_ns,
	      uint64_t *done_ns);
int ftl_read(struct ftl *ftl, uint64_t off, uint64_t len, uint64_t now_ns, uint64_t *done_ns);
int ftl_trim(struct ftl *ftl, uint64_t off, uint64_t len, uint64_t now_ns, uint64_t *done_ns);
/* Write zeroes (NVMe Write Zeroes, NBD_CMD_WRITE_ZEROES). With may_trim the units wholly inside
 * are deallocated and the partial units at either end written, as a drive that deallocates
 * does; otherwise the whole range is programmed. */
int ftl_write_zeroes(struct ftl *ftl, uint64_t off, uint64_t len, bool may_trim, uint64_t now_ns,
                     uint64_t *done_ns);
/* Program every partly filled open page (padding counts as NAND writes). */
int ftl_flush(struct ftl *ftl, uint64_t now_ns, uint64_t *done_ns);
/*
 * Batched writes, for a host that knows its next writes (a replay, a benchmark): w[0..n) are
 * issued in order, each exactly as ftl_write(f, w[i].off, w[i].len, w[i].stream, w[i].now_ns,
 * &done_ns[i]) would, and the batch stops at the first one that fails, returning its status;
 * every counter, mapping and timing result is the one the loop of ftl_write() calls gives.
 * What differs is speed: while write i runs, the L2P lines of write i+2k and, through them,
 * the valid-bitmap line and GC-unit record of write i+k's old copy are being fetched
 * (k = FTL_BATCH_AHEAD), so the cache misses of a random workload overlap instead of
 * stalling one after another. now_ns = FTL_NOW_PREV issues a write when the one before it in
 * the batch completed (a closed-loop host at queue depth 1); the first write must give a time
 * (FTL_E_INVAL otherwise). done_ns may be NULL; *ndone (may be NULL) receives the number of
 * writes that succeeded.
 */
struct ftl_wreq {
	uint64_t off, len;
	uint64_t now_ns;
	unsigned stream;
};
#define FTL_BATCH_AHEAD 8
#define FTL_NOW_PREV UINT64_MAX
int ftl_write_batch(struct ftl *ftl, const struct ftl_wreq *w, size_t n, uint64_t *done_ns,
		    size_t *ndone);

/*
 * A hint, no effect on results: the caller will soon read or write [off, off+len). Starts
 * fetching the first L2P lines of the range into the cache (a bounded amount, whatever len),
 * so that a replay that knows its next I/O overlaps the cache miss that would otherwise stall
 * it. Bad ranges are ignored.
 */
void ftl_prefetch(const struct ftl *ftl, uint64_t off, uint64_t len);
/* Is this byte range mapped (every unit it touches holds data)? For tests and attachments. */
bool ftl_is_mapped(const struct ftl *ftl, uint64_t off, uint64_t len);
/* The valid share (0..1) of the GC unit that holds the mapping unit at byte off: what GC would
 * have to copy to reclaim it. 1 while that unit is still open (no GC victim yet); -1 when off is
 * unmapped or past the end. For hosts that want their invalidations to finish GC units off
 * (docs/placement.md). */
double ftl_unit_valid(const struct ftl *ftl, uint64_t off);
/* Who opened the GC unit (FDP: the reclaim unit) holding the mapping unit at byte off: the host
 * stream (FDP handle) whose write did, or host_streams for a unit of the shared GC frontier
 * (GC copies of initially isolated handles, or of every stream with fdp=off). -1 when off is
 * unmapped or past the end. *ru (may be NULL) receives the GC unit's index. */
int ftl_unit_owner(const struct ftl *ftl, uint64_t off, uint32_t *ru);

/*
 * NVMe Flexible Data Placement (fdp=on; docs/fdp.md). The host streams are the reclaim unit
 * handles (RUH) 0..host_streams-1 and a write's stream is its placement handle; a reclaim unit
 * (RU) is a GC unit (a superblock, or a block with gc_unit=block, where a handle has one open
 * per plane); one reclaim group. Counted whatever fdp says (per host stream), reported by
 * ftl_fdp_stats():
 *   host_bytes   host bytes written through the handle (FDP statistics log: HBMW, summed)
 *   media_bytes  NAND bytes programmed into RUs the handle's data opened: its host writes and,
 *                with persistently isolated handles, the GC and WL copies of its data
 *                (MBMW, summed with ctrl_media_bytes); whole pages, so a page still being
 *                filled counts once it is programmed
 *   erased_bytes NAND bytes erased from those RUs (MBE, summed with ctrl_erased_bytes)
 * ctrl_*: the RUs of the shared GC frontier (initially isolated handles, or fdp=off), where
 * GC mixes every handle's data.
 * Events (the FDP events log page; the newest FTL_FDP_EVENTS kept):
 *   FTL_FDP_EV_RU_NOT_FULLY_WRITTEN  ftl_fdp_ruh_update() closed an RU before it was full
 *   FTL_FDP_EV_INVALID_PID           a write named a handle >= host_streams; it went to 0
 *   FTL_FDP_EV_MEDIA_REALLOCATED     an erase retired blocks of an RU: nlbam is the capacity
 *                                    lost, in logical blocks of FTL_SECTOR bytes
 */
#define FTL_FDP_EVENTS 64
enum ftl_fdp_event_type {
	FTL_FDP_EV_RU_NOT_FULLY_WRITTEN = 0x00,
	FTL_FDP_EV_INVALID_PID = 0x03,
	FTL_FDP_EV_MEDIA_REALLOCATED = 0x80,
};
struct ftl_fdp_event {
	uint8_t type;
	uint8_t rsvd;     /* 0 (no padding: snapshots store the ring byte for byte) */
	uint16_t ruh;     /* the handle, or UINT16_MAX when none (an RU of the GC frontier) */
	uint32_t ru;      /* the RU (GC unit index), UINT32_MAX when none */
	uint64_t time_ns; /* virtual time */
	uint64_t nlbam;   /* logical blocks moved or lost (type-specific, else 0) */
};
const char *ftl_fdp_event_name(uint8_t type);
struct ftl_fdp_ruh {
	uint64_t host_bytes, media_bytes, erased_bytes;
	uint64_t ru_avail_bytes; /* RUAMW: what its open RU (or the next, if none) still takes */
	uint32_t ru;             /* its open RU (plane 0's in block mode), UINT32_MAX when none */
};
struct ftl_fdp_stats {
	uint32_t nruh;
	bool persistently;        /* handle type */
	uint64_t ru_bytes;        /* nominal RU size (RUNS): a GC unit's NAND bytes */
	uint64_t hbmw, mbmw, mbe; /* the statistics log page's sums */
	uint64_t ctrl_media_bytes, ctrl_erased_bytes;
	uint64_t events; /* logged since the drive was made (the ring keeps the last 64) */
	struct ftl_fdp_ruh ruh[FTL_STREAMS_MAX];
};
void ftl_fdp_stats(const struct ftl *ftl, struct ftl_fdp_stats *st);
/* The "fdp" member (docs/output.md) of the JSON object open in j: st and n events. ftl_json()
 * writes it when fdp=on. */
struct json_out;
void ftl_fdp_json(const struct ftl_fdp_stats *st, const struct ftl_fdp_event *ev, size_t n,
                  struct json_out *j);
/* The kept events, oldest first, at most max; returns how many. */
size_t ftl_fdp_events(const struct ftl *ftl, struct ftl_fdp_event *ev, size_t max);
/*
 * Wear attribution (docs/ftl.md, "Wear attribution"): every NAND program and every erased byte
 * charged to the data it served. The host names a class for its writes (ftl_set_class: the KV
 * tier gives full-attention chunks and linear states classes of their own; 0 is "unclassified",
 * every write before a class is set), and each mapping unit remembers its class and what ended
 * it. Counted always, in exact bytes:
 *   prog[c][k]       NAND bytes programmed for class c's data, k the cause: FTL_ATTR_HOST,
 *                    FTL_ATTR_GC (a GC copy) or FTL_ATTR_WL (a wear-leveling copy); with
 *                    pad_bytes they add up to nand_write_bytes
 *   erased[c][e]     bytes erased that last held class c's data, by how it left: FTL_ATTR_MOVED
 *                    (still valid, copied away first), FTL_ATTR_TRIMMED, FTL_ATTR_OVERWRITTEN;
 *                    with erased_empty_bytes (never programmed since the last erase, or
 *                    padding) they add up to every erased byte (erases x block bytes)
 *   gc_cause[c][e]   GC copy bytes charged to what made their victim worth taking: each victim's
 *                    copies split over its invalid units in proportion to their class and way of
 *                    leaving (e: TRIMMED or OVERWRITTEN; largest remainder, so each victim's
 *                    shares add up to its copies exactly); gc_uncaused_bytes: the copies of
 *                    victims with nothing invalid (FIFO's futile moves). Together: gc_write_bytes
 */
#define FTL_CLASSES 4
enum { FTL_ATTR_HOST, FTL_ATTR_GC, FTL_ATTR_WL };
enum { FTL_ATTR_MOVED, FTL_ATTR_TRIMMED, FTL_ATTR_OVERWRITTEN };
struct ftl_attribution {
	uint64_t prog[FTL_CLASSES][3];
	uint64_t pad_bytes;
	uint64_t erased[FTL_CLASSES][3];
	uint64_t erased_empty_bytes;
	uint64_t gc_cause[FTL_CLASSES][3]; /* [c][FTL_ATTR_TRIMMED or FTL_ATTR_OVERWRITTEN] */
	uint64_t gc_uncaused_bytes;
};
/* The class of the host writes that follow (0 .. FTL_CLASSES-1; FTL_E_INVAL otherwise). */
int ftl_set_class(struct ftl *ftl, unsigned cls);
void ftl_get_attribution(const struct ftl *ftl, struct ftl_attribution *a);
/* The "attribution" member (docs/output.md) of the JSON object open in j. names[c] names class
 * c, a NULL entry leaving it out; names NULL: "class0".."class3", class 0 and the classes in use
 * only. ftl_json() writes it so. */
void ftl_attribution_json(const struct ftl_attribution *a, const char *const *names,
                          struct json_out *j);
/* Reclaim Unit Handle Update (I/O Management Send): handle ruh's next write starts a new RU.
 * Its open page is padded and programmed (counted as padding) and its RU closed; an RU with
 * unwritten pages left logs FTL_FDP_EV_RU_NOT_FULLY_WRITTEN. FTL_E_INVAL for a handle out of
 * range, FTL_E_WORN after end of life. */
int ftl_fdp_ruh_update(struct ftl *ftl, unsigned ruh, uint64_t now_ns, uint64_t *done_ns);

/* Counters. All bytes are uint64_t; WAF = nand_write_bytes / host_write_bytes. */
struct ftl_stats {
	uint64_t host_write_bytes, host_read_bytes, host_trim_bytes;
	uint64_t host_write_cmds, host_read_cmds, host_trim_cmds, flush_cmds;
	uint64_t rmw_units, trim_units, trim_partial_units;
	uint64_t nand_write_bytes; /* = host + gc + wl + pad program bytes */
	uint64_t host_prog_bytes, gc_prog_bytes, wl_prog_bytes, pad_prog_bytes;
	uint64_t nand_read_bytes, gc_read_bytes;
	uint64_t erases, gc_victims, wl_victims, retired_blocks;
	uint64_t fg_gc_victims, bg_gc_victims;
	uint64_t read_suspends; /* host reads that suspended a program or erase */
	uint64_t valid_units, free_gc_units, open_gc_units;
	uint32_t erase_min, erase_max;
	double erase_mean;
	double waf_cumulative, waf_window; /* window: about the last user capacity of writes */
	uint64_t window_host_bytes, window_nand_bytes, window_erases;
	double effective_spare_factor;
	uint32_t percentage_used;  /* SMART: 100 * mean erase / rated P/E, capped at 255 */
	uint32_t available_spare;  /* SMART: % of the initial spare still usable */
	uint32_t available_spare_threshold;
	uint64_t data_units_written, data_units_read; /* SMART units of 512,000 bytes, rounded up */
	uint64_t media_units_written;                /* NAND bytes programmed, in 512,000-byte units */
	bool read_only;
	uint64_t clock_ns; /* latest completion time seen */
};
void ftl_get_stats(const struct ftl *ftl, struct ftl_stats *st);
/* Why the drive is read-only (end of life), or NULL while it is not: "spare" (retired blocks
 * took the available spare below spare_threshold_pct) or "gc-reserve" (GC had data to move and
 * no free block left to move it to). Blocks retire when their erase count reaches their own
 * endurance (rated P/E, varied by pe_variation), so P/E exhaustion shows up as "spare". */
const char *ftl_eol_cause(const struct ftl *ftl);
/* Erase-count histogram over live blocks: bins[i] counts blocks with erase in [i*w,(i+1)*w). */
void ftl_erase_histogram(const struct ftl *ftl, uint64_t *bins, size_t nbins, uint32_t *width);
/* Erase count and endurance of global block b (0..blocks-1); *bad set when it is retired. */
uint32_t ftl_block_erases(const struct ftl *ftl, uint32_t b, uint32_t *endurance, bool *bad);
/* Bytes of FTL metadata allocated (tables, block and GC-unit arrays). */
uint64_t ftl_metadata_bytes(const struct ftl *ftl);

/*
 * Three lifetimes, side by side (docs/lifetime.md):
 *   tbw      rated TBW / host bytes per day          (what prior work does)
 *   naive_pe P/E x physical bytes / host bytes per day (WAF = 1)
 *   erase    days until end of life at the measured erase rate: erases per host byte over the
 *            recent window, extrapolated until either retirements eat the spare below the
 *            threshold ("spare") or the mean erase count reaches the rated P/E ("rated-pe").
 */
struct ftl_lifetime {
	double tbw_days, naive_pe_days, erase_days;
	double elapsed_days;
	const char *eol_reason; /* "spare" or "rated-pe" */
	const char *basis;      /* "window-erase-rate" or "program-rate" (no erase seen yet) */
	double erases_per_host_byte;
	/* the same extrapolation at the cumulative erase rate (every erase over every host byte
	 * since the drive was new, fill included): a young drive's is lower than the window's */
	double erase_cumulative_days;
	/* steady (FTL_STEADY_*): written FTL_STEADY_DRIVE_WRITES times or more, and the WAF of the
	 * last user capacity's four quarters within FTL_STEADY_WAF_RANGE of their mean (max - min;
	 * window_waf_range is that spread over the mean, NaN before a whole window) */
	bool steady;
	double drive_writes, window_waf_range;
};
/* The steady rule for lifetimes: a drive written fewer than 3 times has not settled (GC starts
 * after the first fill, and the erase count then lags the programs), and a WAF that still
 * moves by more than 5% across the last capacity of writes would move its lifetime as much. */
#define FTL_STEADY_DRIVE_WRITES 3.0
#define FTL_STEADY_WAF_RANGE 0.05
void ftl_lifetime(const struct ftl *ftl, double host_bytes_per_day, struct ftl_lifetime *lt);
/* The same for a drive whose P/E limits (rated and per block) are pe_scale times this one's:
 * what the real drive would predict during an accelerated-aging run. */
void ftl_lifetime_scaled(const struct ftl *ftl, double host_bytes_per_day, double pe_scale,
			 struct ftl_lifetime *lt);

/* Stats, geometry and lifetimes as members of the JSON object open in out (common/json.h; the
 * keys are in docs/output.md). */
struct json_out;
void ftl_json_members(const struct ftl *ftl, double host_bytes_per_day, struct json_out *out);
/* The same as one JSON object on out. Returns 0 or a JOUT_E_* error. */
int ftl_json(const struct ftl *ftl, double host_bytes_per_day, FILE *out);

/* Verify every invariant. Returns 0, or -1 with a description in err. Cost O(metadata). */
int ftl_check(const struct ftl *ftl, char *err, size_t errlen);

/* Versioned, checksummed snapshots, written atomically (temp file + fsync + rename). */
int ftl_snapshot_save(const struct ftl *ftl, const char *path, char *err, size_t errlen);
struct ftl *ftl_snapshot_load(const char *path, char *err, size_t errlen);

/* The host's tag: a text the FTL keeps for its host and saves and loads with the snapshot
 * (empty for a new drive or a version-2 snapshot). The checkpoints below keep in it the identity
 * of the data file the state describes. ftl_set_tag: FTL_E_INVAL when it is too long. */
#define FTL_TAG_MAX 256
int ftl_set_tag(struct ftl *ftl, const char *tag);
const char *ftl_get_tag(const struct ftl *ftl);

/*
 * Checkpoints (docs/checkpoint.md): crash-safe experiments for the device paths (QEMU's NVMe
 * device, the nbdkit plugin), where the FTL's state and the user data live in two files.
 * ftl_checkpoint() binds the state to the data file data_path (NULL: none), whose writes the
 * caller has made durable first: it records the file's size and modification time and a
 * checkpoint number in the tag, then saves the snapshot atomically. A crash at any moment
 * leaves the previous or the new snapshot, whole.
 * ftl_checkpoint_verify(), after ftl_snapshot_load(), refuses a data file that cannot hold what
 * the state describes: missing, of another size, or last modified before the checkpoint (state
 * newer than the data: a data file restored from an older copy). A state with no binding (a
 * snapshot not written by ftl_checkpoint) and data_path NULL pass. Both: FTL_OK, or an
 * FTL_E_* status with a message in err that names the file.
 * ftl_checkpoint_seq(): the number of checkpoints in the state's history (0 for none).
 */
int ftl_checkpoint(struct ftl *ftl, const char *snapshot, const char *data_path, char *err,
                   size_t errlen);
int ftl_checkpoint_verify(const struct ftl *ftl, const char *data_path, char *err, size_t errlen);
uint64_t ftl_checkpoint_seq(const struct ftl *ftl);

/* The project's seeded generator (xoshiro256**, seeded through splitmix64): the FTL's endurance
 * draws and victim sampling, and the synthetic trace generator. */
uint64_t ftl_rand(uint64_t s[4]);
void ftl_seed(uint64_t s[4], uint64_t seed);

#endif
