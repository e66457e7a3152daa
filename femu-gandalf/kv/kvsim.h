/*
 * kvsim.h - the KV-cache tier simulator: a DRAM + SSD cache of full-attention KV chunks and
 * linear-attention states, driven by a KV-request trace, under a placement policy, with the
 * SSD tier on the emulated SSD (hw/ftl). Semantics: docs/kv.md.
 */
#ifndef FG_KVSIM_H
#define FG_KVSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ftl.h"
#include "trace.h"
#include "u64map.h"

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

/* ---- objects ---- */
enum { OBJ_FULL = 0, OBJ_LINEAR = 1 };

struct kv_obj {
	/* the first 64 bytes are what a hit reads and writes */
	uint64_t key;        /* block id (full) or block id at the boundary | 1<<63 (linear) */
	uint64_t size;
	uint64_t last_req;   /* request index of the last use */
	double last_t;       /* trace time of the last use */
	uint64_t dseq;       /* DRAM LRU stamp: the DRAM list is in stamp order (head = largest) */
	uint32_t dprev, dnext, sprev, snext; /* DRAM and SSD (per kind) LRU lists (head = most recent) */
	uint32_t refs;       /* uses: admission and hits */
	uint8_t kind, in_dram, in_ssd;
	uint8_t pol_flag;    /* policy scratch (0 when new) */
	uint64_t parent_key; /* full: previous block id, KV_NO_PARENT for the first */
	uint64_t lba;        /* SSD slot, bytes */
	uint64_t session;
	double score;        /* policy scratch */
	uint32_t nchild;     /* cached objects whose parent this is (chunks and the state here) */
	uint32_t parent;     /* index of the cached parent, KV_NONE for a root (a chunk at block 0) */
	uint32_t kid, sib[2];/* first cached child; previous and next sibling */
	uint32_t ssd_hits;   /* hits served from SSD since it was last written there */
	uint32_t recompute_tokens; /* what losing it costs: a chunk's tokens; a state's span */
	uint32_t end_tokens; /* prefix tokens up to its end: a chunk's last token, a state's boundary */
	uint32_t pol_link[2];/* policy scratch: links of a policy's own list (KV_NONE when new) */
};
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

/* How SSD objects get LBAs (docs/kv.md): fixed slots per size class with free-list reuse, or a
 * circular append log whose head evicts whatever it runs into. */
enum kv_alloc { KV_ALLOC_SLOTS = 0, KV_ALLOC_LOG = 1 };

struct kv_config {
	struct kv_model model;
	enum kv_alloc alloc;
	uint64_t dram_bytes, ssd_bytes;
	double ssd_gbps, pcie_gbps, prefill_tokens_per_s;
	bool trim, streams_by_kind;
	bool use_ftl_timing;
	double gpu_usd_per_hour, ssd_usd;      /* prices; ssd_usd is for the SSD tier's drive */
	double ssd_usd_per_tb;                 /* drive price per TB of user capacity */
	double tbw_bytes;                      /* rated TBW of the SSD tier for the TBW lifetime */
	double ssd_phys_bytes, ssd_pe;         /* for naive P/E without a device */
};
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
double kv_wear_usd(const struct kv_config *c, bool device, uint64_t host_bytes, uint64_t nand_bytes);

struct kv_stats {
	uint64_t requests, prefix_blocks, hit_blocks, prefix_tokens, missed_tokens;
	uint64_t hits[2][2];           /* [tier: 0 DRAM, 1 SSD][kind] objects served */
	uint64_t ssd_write_bytes[2], ssd_writes[2], ssd_written_hit[2]; /* by kind */
	uint64_t ssd_read_bytes, ssd_evictions, dram_drops, not_admitted, ssd_alloc_fail;
	uint64_t unreachable;          /* objects freed because an ancestor left the cache */
	uint64_t dram_peak, ssd_peak;
	double t_first, t_last;
	double *lat;
	uint64_t nlat, latcap;
	uint64_t ftl_errors;
};

struct kvsim;

/*
 * A policy parameter, declared once in the policy's file: the CLI's --param validation, --sweep
 * and `kv --help` read the table. A value must lie in [min, max] (min itself excluded when
 * min_open); sweep[0..nsweep) is the --sweep grid (none: the parameter stays at its default).
 */
struct kv_param {
	const char *name;
	double def, min, max;
	bool min_open;
	const double *sweep;
	int nsweep;
	const char *help;
};
#define KV_SWEEP(...)                                                                              \
	.sweep = (const double[]){__VA_ARGS__},                                                    \
	.nsweep = (int)(sizeof((const double[]){__VA_ARGS__}) / sizeof(double))
#define KV_MAX_PARAMS 8

struct kv_policy {
	const char *name;
	const struct kv_param *params; /* NULL, or a table ended by an entry with a NULL name */
	/* An offline policy's pass over the whole trace before any run: its result is handed to
	 * every run of the policy on that trace (kv_prepared()), and freed with unprepare(). */
	void *(*prepare)(const struct kv_trace *kt, const struct kv_config *c, char *err, size_t errlen);
	void (*unprepare)(void *prepared);
	bool one_pass; /* prepare() knows one pass of the trace: the trace may not be looped */
	int (*init)(struct kvsim *s, char *err, size_t errlen);
	void (*fini)(struct kvsim *s);
	/* a new object entered DRAM / an object was used (hit or re-admission) */
	void (*admitted)(struct kvsim *s, uint32_t o);
	void (*touched)(struct kvsim *s, uint32_t o);
	/* the object is about to leave the cache entirely */
	void (*removed)(struct kvsim *s, uint32_t o);
	/* called before each request with its index and time */
	void (*begin)(struct kvsim *s);
	/* make `need` bytes free in DRAM; default: LRU victims, spilled when spill() says so */
	void (*make_room)(struct kvsim *s, uint64_t need);
	bool (*spill)(struct kvsim *s, uint32_t o);
	uint32_t (*ssd_victim)(struct kvsim *s); /* an SSD resident of kind s->need_kind to evict */
	bool write_through;
};

struct kvsim {
	struct kv_config cfg;
	const struct kv_policy *pol;
	void *pol_state;
	double pv[KV_MAX_PARAMS]; /* the policy's parameters, in its table's order */
	void *prepared;           /* the policy's prepare() result */
	struct ftl *ftl; /* NULL = no device (TBW division only) */
	/* objects and the key -> index map */
	struct kv_obj *obj;
	uint32_t nobj, free_head;
	uint64_t cap;
	struct u64map map; /* key -> object index */
	/* tiers: DRAM in object bytes, SSD in slot bytes (what it takes of the device) */
	uint64_t dram_used, ssd_used;
	uint32_t dhead, dtail;
	uint32_t shead[2], stail[2]; /* the SSD's LRU list of each kind */
	uint8_t need_kind;           /* the kind an SSD victim must be of (set before ssd_victim()) */
	uint64_t dclock; /* the last DRAM LRU stamp given */
	/* SSD slot allocator: per kind, a free list of slot LBAs and a bump pointer */
	uint64_t *freeslot[2];
	uint64_t nfree[2], freecap[2];
	uint64_t bump;
	/* log allocator: the head is a position that only grows (LBA = position mod the tier, after
	 * padding past the end); the ring holds the objects written, oldest first */
	uint64_t head;
	struct kv_logent { uint64_t pos; uint32_t o; } *ring;
	uint64_t rfirst, rlen, rcap; /* rcap is a power of two */
	/* the request being processed */
	uint64_t req;
	uint64_t cur_session;
	double now_t;
	struct kv_stats st;
	uint32_t *idx;       /* object index of each prefix block of the current request */
	uint64_t idxcap;
};

/* Parameter i of the policy's table (the value given, or its default). */
static inline double kv_param(const struct kvsim *s, int i)
{
	return s->pv[i];
}

const struct kv_policy *kv_policy_find(const char *name);
void kv_policy_list(FILE *out);
/* Every policy with its parameters (default, range, sweep grid), for --help. */
void kv_policy_help(FILE *out);
extern const struct kv_policy *const kv_policies[];
/* The parameter named name of p, or NULL. */
const struct kv_param *kv_policy_param(const struct kv_policy *p, const char *name);
/* Parse "k=v,k=v" against p's table into pv (defaults first). 0, or -1 with a message naming the
 * key (unknown key, not a number, out of range: with the range). */
int kv_params_parse(const struct kv_policy *p, const char *params, double *pv, char *err, size_t errlen);
/* --sweep: the points of p's grid (the product of every swept parameter's values, the first
 * parameter outermost), each as a "k=v,..." string; one empty point without a grid. */
uint64_t kv_sweep_points(const struct kv_policy *p);
void kv_sweep_point(const struct kv_policy *p, uint64_t j, char *buf, size_t len);

/* prepared: p->prepare()'s result when p has one (required then), else NULL */
int kvsim_init(struct kvsim *s, const struct kv_config *c, const struct kv_policy *p, const char *params,
	       void *prepared, struct ftl *ftl, char *err, size_t errlen);
void kvsim_free(struct kvsim *s);
/* End-of-run accounting (objects still on SSD: were they hit there?). Call once, before reading st. */
void kvsim_finish(struct kvsim *s);
/* Process one request. Returns 0, or -1 on an internal error (message in err). */
int kvsim_request(struct kvsim *s, const struct kv_request *rq, char *err, size_t errlen);
/* Check the invariants: capacities, tier lists, map, child counts. 0 or -1 with err. */
int kvsim_check(const struct kvsim *s, char *err, size_t errlen);

/* helpers for policies */
uint64_t kv_slot_bytes(const struct kv_obj *x); /* SSD bytes the object occupies (4 KiB slots) */
/* Bytes that SSD residents of x's kind must free before x can be written: 0 when it fits now.
 * With slots only a resident of the same kind (size class) frees a slot x can take, so policies
 * pick SSD victims of x's kind (ssd_victim() finds it in need_kind) and need one of them. */
uint64_t kv_ssd_shortfall(const struct kvsim *s, const struct kv_obj *x);
uint32_t kv_lookup(const struct kvsim *s, uint64_t key);
void kv_drop_dram(struct kvsim *s, uint32_t o);       /* drop the DRAM copy (frees if nowhere else) */
bool kv_move_to_ssd(struct kvsim *s, uint32_t o);     /* write to SSD (evicting SSD victims), drop from DRAM */
bool kv_write_ssd(struct kvsim *s, uint32_t o);       /* write a copy to SSD, keep DRAM */
void kv_evict_ssd(struct kvsim *s, uint32_t o);
void kv_default_make_room(struct kvsim *s, uint64_t need);
/* The lowest score among the `window` least recently used objects of a tier (0 DRAM, 1 SSD: of
 * kind need_kind). */
uint32_t kv_tail_min(struct kvsim *s, int tier, uint32_t window,
		     double (*score)(struct kvsim *s, uint32_t o, void *arg), void *arg);
/* Free DRAM by victim(), writing each victim to SSD unless it is there already (write-back). */
void kv_make_room_writeback(struct kvsim *s, uint64_t need, uint32_t (*victim)(struct kvsim *s));
bool kv_is_leaf(const struct kvsim *s, uint32_t o);
bool kv_is_root_side(const struct kvsim *s, uint32_t o); /* in DRAM, parent not in DRAM */

#endif
