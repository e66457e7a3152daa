/*
 * kvsim.h - the KV-cache tier simulator: a DRAM + SSD cache of full-attention KV chunks and
 * linear-attention states, driven by a KV-request trace, under a placement policy, with the
 * SSD tier on the emulated SSD (hw/ftl). Semantics: docs/kv.md.
 *
 * The public header: the configuration, the counters, the opaque simulator (struct kvsim, laid
 * out in kv_int.h), the policy interface (struct kv_policy with its parameter table, struct
 * kv_param: the CLI reads both) and the cost model (cost.c). A policy's view of the core is
 * kv_policy.h (docs/kv-policy.md).
 */
#ifndef FG_KVSIM_H
#define FG_KVSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ftl.h"
#include "trace.h"

#define KV_NONE UINT32_MAX

/* ---- model catalog (models.ini) ---- */
struct kv_model {
	char name[64];
	uint64_t full_kv_bytes_per_token, linear_state_bytes;
	char description[256];
};
int kv_model_load(const char *name, struct kv_model *m, char *err, size_t errlen);
int kv_model_list(FILE *out, bool json); /* 0, or -1 after printing why */
const char *kv_model_dir(void);

/* ---- the peak active KV of a trace for a model (active.c) ---- */
struct kv_active {
	uint64_t peak_bytes; /* the most KV active at once: chunks still to be used + live states */
	uint64_t peak_req;   /* the request (index) where it peaks, at trace time peak_t */
	double peak_t, mean_bytes;
};
struct kv_trace;
int kv_active_peak(const struct kv_trace *kt, const struct kv_model *m, struct kv_active *a,
                   char *err, size_t errlen);

/* ---- objects ---- */
enum { OBJ_FULL = 0, OBJ_LINEAR = 1 };

#define KV_NO_PARENT UINT64_MAX
/* The SSD tier's allocation unit: an object takes whole 4 KiB slots (the mapping unit). */
#define KV_SLOT_BYTES 4096ull
#define KV_LINEAR_BIT (1ull << 63)

/* The key of an object's parent: a state hangs off the chunk at its boundary, a chunk off the
 * previous block (parent_key, KV_NO_PARENT for block 0). */
static inline uint64_t kv_parent_key(uint64_t key, uint64_t parent_key)
{
	return key & KV_LINEAR_BIT ? key & ~KV_LINEAR_BIT : parent_key;
}

/* How SSD objects get LBAs (docs/kv.md): fixed slots per size class with free-list reuse, a
 * circular append log whose head evicts whatever it runs into, or erase-block-aligned regions
 * that are cleaned whole (docs/placement.md): the policy prices the victim region, valuable
 * objects are re-admitted, the rest leave and the region is TRIMmed at once. */
enum kv_alloc { KV_ALLOC_SLOTS = 0, KV_ALLOC_LOG = 1, KV_ALLOC_REGION = 2 };
/* region allocator defaults: re-admitted bytes per cleaned region at most this share of it */
#define KV_REGION_READMIT_DEF 0.25
#define KV_REGION_READMIT_MAX 0.5
#define KV_REGION_MIN 4      /* regions the tier must hold */
#define KV_REGION_CHOICES 16 /* sealed regions priced per cleaning (plus the oldest) */

struct kv_config {
	struct kv_model model;
	enum kv_alloc alloc;
	uint64_t dram_bytes, ssd_bytes;
	double ssd_gbps, pcie_gbps, prefill_tokens_per_s;
	bool trim, streams_by_kind;
	/* --streams session:N: an SSD object's write stream also follows its session (hashed
	 * into N groups, times 2 with kind), so that a session's data, which dies together, fills
	 * its own erase units (FDP-style placement hints); 0: off */
	uint32_t session_streams;
	bool use_ftl_timing;
	double gpu_usd_per_hour, ssd_usd; /* prices; ssd_usd is for the SSD tier's drive */
	double ssd_usd_per_tb;            /* drive price per TB of user capacity */
	double tbw_bytes;                 /* rated TBW of the SSD tier for the TBW lifetime */
	double ssd_phys_bytes, ssd_pe;    /* for naive P/E without a device */
	/* --alloc region: region bytes (0: the drive's write stripe, planes x block, at least 4x
	 * the largest object; 64 MiB without a device) and the re-admission cap (share of a region) */
	uint64_t region_bytes;
	double readmit;
	/* slot geometry (docs/store.md): an object's slot is round_up(slot_header + size,
	 * slot_align[kind]) bytes (0: 4 KiB), and freed slots are reused oldest first with
	 * slot_fifo (KVBM's free list) instead of newest first (LMCache's); slot_fresh_first takes
	 * every never-used slot before a freed one (vLLM's BlockPool, whose free queue starts with
	 * all blocks in id order). Defaults: 0, 4 KiB, LIFO, freed first - the simulator's own 4 KiB
	 * slots. */
	uint64_t slot_header, slot_align[2];
	bool slot_fifo, slot_fresh_first;
};
/*
 * The SSD tier's I/O as events, for a store that makes it real (femu-gandalf/store): every write,
 * read and TRIM the simulator makes of an SSD object, in its order, with the object's identity.
 * KV_IO_PROBE is a read of a cached chunk the request did not use (past its last usable state):
 * the simulator sends it only with probe set, and counts it nowhere (docs/lift.md: it shows a
 * capture the whole cached prefix). end() closes each request that reached kvsim_request().
 */
enum kv_io_op { KV_IO_READ = 'R', KV_IO_WRITE = 'W', KV_IO_TRIM = 'D', KV_IO_PROBE = 'P' };
struct kv_io {
	char op;
	uint8_t kind;
	uint64_t key, session;
	uint64_t lba, slot_bytes, size; /* the slot (bytes, the tier's own addresses), object bytes */
};
struct kv_io_sink {
	int (*io)(void *arg, const struct kv_io *e); /* nonzero: the run stops with the store's error */
	int (*end)(void *arg, const struct kv_request *rq);
	void *arg;
	bool probe;
};

/*
 * The SSD tier's I/O recorded as a log (kvsim_set_log(), ssd_port.c), for drives to replay
 * instead of the simulation (run/kv_run.c, kv_run_keep_sims()): in order, each request's start
 * and time (KV_LOG_REQ), every write, read and TRIM the tier asks of its drive (whether or not
 * the run TRIMs: the replay decides), and each request's load latency but for its SSD reads
 * (KV_LOG_LOAD). The simulator makes no decision on what its drive does, with one exception: a
 * policy that reads the drive's state (kv_obj_unit_valid()) sets feedback, and its log stands
 * for no drive.
 */
enum kv_log_op { KV_LOG_REQ = 1, KV_LOG_WRITE, KV_LOG_READ, KV_LOG_TRIM, KV_LOG_LOAD };
struct kv_log {
	uint64_t *w; /* records of 1 to 3 words (kv_log_next()) */
	size_t n, cap;
	bool oom;      /* a record could not be appended: the log is incomplete */
	bool feedback; /* the policy read the drive's state */
};
struct kv_log_rec {
	int op;
	unsigned kind;             /* WRITE: the object's kind (its wear class and stream) */
	uint64_t bytes, lba;       /* WRITE, READ, TRIM */
	uint64_t session;          /* WRITE: the object's session (its stream) */
	uint64_t now;              /* REQ: kv_now_ns() */
	double rest, recompute;    /* LOAD (kv_port_load()) */
};
/* The drive's wear attribution class of an object's data (ftl_set_class()): 1 + its kind, so
 * full-attention chunks are class 1 and linear states class 2 (kv_run.c names them). */
static inline unsigned kv_wear_class(unsigned kind)
{
	return 1u + kind;
}
/* Record i (a word index) into r; the next record's index. */
size_t kv_log_next(const struct kv_log *l, size_t i, struct kv_log_rec *r);
void kv_log_free(struct kv_log *l);

/* The FTL stream of an object of this kind and session under c's --streams (0 without hints);
 * the drive needs kv_streams(c) host streams. */
unsigned kv_stream(const struct kv_config *c, int kind, uint64_t session);
unsigned kv_streams(const struct kv_config *c);
/* The kv command's defaults: bandwidths, prefill rate, prices (docs/kv.md). */
void kv_config_default(struct kv_config *c);

/* ---- costs and lifetimes, defined once (cost.c) ---- */
/* Without a device: the SSD tier is rated 1 DWPD for 5 years and priced by its own size. */
void kv_cost_no_device(struct kv_config *c);
double kv_gpu_usd_per_second(const struct kv_config *c);
double kv_gpu_usd_per_token(const struct kv_config *c); /* recomputing one prefill token */
double kv_wear_usd_per_byte(const struct kv_config *c); /* the wear fee: drive price / rated TBW */
double kv_bytes_per_day(uint64_t bytes, double duration_s);
double kv_tbw_days(const struct kv_config *c, double bytes_per_day); /* INFINITY without writes */
/* What the run cost the drive: NAND bytes over its P/E budget with a device, else host bytes
 * over the rated TBW, times the drive's price. */
double kv_wear_usd(const struct kv_config *c, bool device, uint64_t host_bytes,
                   uint64_t nand_bytes);

struct kv_stats {
	uint64_t requests, prefix_blocks, hit_blocks, prefix_tokens, missed_tokens;
	uint64_t missed_requests; /* requests that recomputed a block an earlier request produced */
	uint64_t hits[2][2]; /* [tier: 0 DRAM, 1 SSD][kind] objects served */
	uint64_t ssd_write_bytes[2], ssd_writes[2], ssd_written_hit[2]; /* by kind */
	uint64_t ssd_read_bytes, ssd_evictions, dram_drops, not_admitted, ssd_alloc_fail;
	uint64_t ssd_evictions_kind[2]; /* ssd_evictions by kind */
	uint64_t refused; /* new objects the policy's admit() kept out of DRAM */
	uint64_t unreachable; /* objects freed because an ancestor left the cache */
	uint64_t dram_peak, ssd_peak;
	double t_first, t_last;
	double *lat;
	uint64_t nlat, latcap;
	uint64_t ftl_errors;
	/* --alloc region: regions cleaned, objects and bytes re-admitted (rewritten: they count in
	 * ssd_write_bytes too) */
	uint64_t regions_cleaned, readmits, readmit_bytes;
};

struct kvsim;

/*
 * A policy parameter, declared once in the policy's file: the CLI's --param validation, --sweep
 * and `kv --help` read the table. A value must lie in [min, max] (min itself excluded when
 * min_open), and be whole when integer; sweep[0..nsweep) is the --sweep grid (none: the
 * parameter stays at its default).
 */
struct kv_param {
	const char *name;
	double def, min, max;
	bool min_open, integer;
	const double *sweep;
	int nsweep;
	const char *help;
};
#define KV_SWEEP(...)                                                                              \
	.sweep = (const double[]){__VA_ARGS__},                                                    \
	.nsweep = (int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
#define KV_MAX_PARAMS 8

/* A figure a policy reports (struct kv_policy.figures): name is a static [a-z_] string. */
struct kv_figure {
	const char *name;
	double value;
};
#define KV_MAX_FIGURES 8

struct kv_policy {
	const char *name;
	const struct kv_param *params; /* NULL, or a table ended by an entry with a NULL name */
	/* An offline policy's pass over the whole trace before any run: its result is handed to
	 * every run of the policy on that trace (kv_prepared()), and freed with unprepare(). */
	void *(*prepare)(const struct kv_trace *kt, const struct kv_config *c, char *err,
	                 size_t errlen);
	void (*unprepare)(void *prepared);
	bool one_pass; /* prepare() knows one pass of the trace: the trace may not be looped */
	/* bytes of per-object scratch the policy keeps (kv_obj_scratch(); zero when an object is
	 * new) */
	uint32_t obj_bytes;
	int (*init)(struct kvsim *s, char *err, size_t errlen);
	void (*fini)(struct kvsim *s);
	/* a new object entered DRAM / an object was used (hit or re-admission) */
	void (*admitted)(struct kvsim *s, uint32_t o);
	void (*touched)(struct kvsim *s, uint32_t o);
	/* the object is about to leave the cache entirely */
	void (*removed)(struct kvsim *s, uint32_t o);
	/* called before each request with its index and time */
	void (*begin)(struct kvsim *s);
	/* DRAM admission gate: may a new object (key, kind, size bytes) enter DRAM? false keeps it
	 * out: a miss that is not cached, and for a chunk the rest of the request's prefix stays out
	 * with it (a chunk is cached only below its cached parent). Asked before room is made, so
	 * kv_dram_over(s, size) tells whether it would evict. Default: every object enters. */
	bool (*admit)(struct kvsim *s, uint64_t key, int kind, uint64_t size);
	/* make `need` bytes free in DRAM; default: LRU victims, spilled when spill() says so */
	void (*make_room)(struct kvsim *s, uint64_t need);
	bool (*spill)(struct kvsim *s, uint32_t o);
	/* an SSD resident of this kind to evict (a slot is refilled from its own size class) */
	uint32_t (*ssd_victim)(struct kvsim *s, int kind);
	/* what the policy learned, for the report (e.g. gandalf's p_again): up to max named
	 * figures into f; returns how many. May be NULL. */
	int (*figures)(const struct kvsim *s, struct kv_figure *f, int max);
	/* --alloc region: what losing the SSD-only object o would cost (the policy's price, >= 0;
	 * whatever its loss makes unreachable included). The allocator cleans the sampled region
	 * whose objects are worth least and re-admits the most valuable per byte. NULL: FIFO
	 * regions, objects hit since written are re-admitted (CacheLib's reinsertion). */
	double (*ssd_value)(struct kvsim *s, uint32_t o);
	bool write_through;
};

const struct kv_policy *kv_policy_find(const char *name);
void kv_policy_list(FILE *out);
/* Every policy with its parameters (default, range, sweep grid), for --help. */
void kv_policy_help(FILE *out);
extern const struct kv_policy *const kv_policies[];
/* The parameter named name of p, or NULL. */
const struct kv_param *kv_policy_param(const struct kv_policy *p, const char *name);
/* Parse "k=v,k=v" against p's table into pv (defaults first). 0, or -1 with a message naming the
 * key (unknown key, not a number, out of range: with the range). */
int kv_params_parse(const struct kv_policy *p, const char *params, double *pv, char *err,
                    size_t errlen);
/* --sweep: the points of p's grid (the product of every swept parameter's values, the first
 * parameter outermost), each as a "k=v,..." string; one empty point without a grid. */
uint64_t kv_sweep_points(const struct kv_policy *p);
void kv_sweep_point(const struct kv_policy *p, uint64_t j, char *buf, size_t len);

/*
 * The simulator: opaque (its layout is kv_int.h's, for the core and the policy accessors).
 * kvsim_new() takes the policy, its "k=v,..." parameters (checked against its table), prepared =
 * p->prepare()'s result when p has one (required then; owned by the caller, it must outlive the
 * simulator), and the drive (NULL: no device, TBW division only). NULL with a message in err.
 */
struct kvsim *kvsim_new(const struct kv_config *c, const struct kv_policy *p, const char *params,
                        void *prepared, struct ftl *ftl, char *err, size_t errlen);
void kvsim_free(struct kvsim *s);
/* The counters so far. The caller may take st->lat (setting it to NULL) to keep the latency
 * samples past kvsim_free(). */
struct kv_stats *kvsim_stats(struct kvsim *s);
const struct kv_policy *kvsim_policy(const struct kvsim *s);
void *kvsim_prepared(const struct kvsim *s);
/* Tier occupancy: DRAM in object bytes, SSD in slot bytes. */
uint64_t kvsim_dram_used(const struct kvsim *s);
uint64_t kvsim_ssd_used(const struct kvsim *s);
/* --alloc region: the region size in use (0 with the other allocators). */
uint64_t kvsim_region_bytes(const struct kvsim *s);
/* End-of-run accounting (objects still on SSD: were they hit there?). Call once, before reading st.
 */
void kvsim_finish(struct kvsim *s);
/* kvsim_finish()'s counts added to st instead, the simulator left as it is (a run that ends
 * here while the simulation goes on). */
void kvsim_finish_into(const struct kvsim *s, struct kv_stats *st);
/* The policy's figures (struct kv_policy.figures), at most KV_MAX_FIGURES; 0 when it has none. */
int kvsim_policy_figures(const struct kvsim *s, struct kv_figure *f);
/* Send the SSD tier's I/O to k (NULL: none) from now on. k must outlive the simulator. */
void kvsim_set_sink(struct kvsim *s, const struct kv_io_sink *k);
/* Record the SSD tier's I/O into l (NULL: stop) from now on; a simulator without a drive. */
void kvsim_set_log(struct kvsim *s, struct kv_log *l);
/* kvsim_request()'s results */
enum { KVSIM_OK = 0, KVSIM_E_INTERNAL = -1, KVSIM_E_SINK = -2 };
/* Process one request. Returns KVSIM_OK; KVSIM_E_INTERNAL on an internal error (message in
 * err); KVSIM_E_SINK when the sink failed (its reason is the sink owner's to give: err only
 * says "the store failed"). */
int kvsim_request(struct kvsim *s, const struct kv_request *rq, char *err, size_t errlen);
/* Check the invariants: capacities, tier lists, map, child counts. 0 or -1 with err. */
int kvsim_check(const struct kvsim *s, char *err, size_t errlen);

#endif
