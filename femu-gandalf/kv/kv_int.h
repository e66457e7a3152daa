/*
 * kv_int.h - the KV simulator's internals: the object record and the simulator state.
 *
 * For the core (kvsim.c, alloc.c, ssd_port.c, kvcheck.c), and for kv_policy.h's inline accessors (which need the layout so
 * that a policy's reads cost what a field access costs). Nothing else includes this file: the
 * CLI sees struct kvsim as opaque (kvsim.h) and a policy sees it through kv_policy.h's accessors
 * only; tests/test_layering.sh fails the build's tests when a policy file includes it, names
 * struct kv_obj or dereferences the simulator (s->) itself.
 */
#ifndef FG_KV_INT_H
#define FG_KV_INT_H

#include "kvsim.h"
#include "u64map.h"

struct kv_obj {
	/* the first 64 bytes are what a hit reads and writes */
	uint64_t key; /* block id (full) or block id at the boundary | 1<<63 (linear) */
	uint64_t size;
	uint64_t last_req; /* request index of the last use */
	double last_t;     /* trace time of the last use */
	uint64_t dseq;     /* DRAM LRU stamp: the DRAM list is in stamp order (head = largest) */
	uint32_t dprev, dnext, sprev,
	        snext; /* DRAM and SSD (per kind) LRU lists (head = most recent) */
	uint32_t refs; /* uses: admission and hits */
	uint8_t kind, in_dram, in_ssd;
	uint64_t parent_key; /* full: previous block id, KV_NO_PARENT for the first */
	uint64_t lba;        /* SSD slot, bytes */
	uint64_t session;
	uint32_t nchild; /* cached objects whose parent this is (chunks and the state here) */
	uint32_t parent; /* index of the cached parent, KV_NONE for a root (a chunk at block 0) */
	uint32_t kid, sib[2];      /* first cached child; previous and next sibling */
	uint32_t ssd_hits;         /* hits served from SSD since it was last written there */
	uint32_t recompute_tokens; /* what losing it costs: a chunk's tokens; a state's span */
	uint32_t end_tokens;       /* prefix tokens up to its end: a chunk's last token, a state's
	                              boundary */
};
struct kvsim {
	struct kv_config cfg;
	struct u64map seen; /* every block id a request has carried: the entries that exist */
	const struct kv_policy *pol;
	void *pol_state;
	double pv[KV_MAX_PARAMS]; /* the policy's parameters, in its table's order */
	void *prepared;           /* the policy's prepare() result */
	struct ftl *ftl;          /* NULL = no device (TBW division only) */
	struct kv_log *log;       /* the tier's I/O recorded for drives to replay, or NULL */
	/* objects and the key -> index map */
	struct kv_obj *obj;
	uint32_t nobj, free_head;
	uint64_t cap;
	/* the policy's per-object scratch: obj_bytes per object, parallel to obj, zero when new */
	unsigned char *scratch;
	uint64_t scratch_cap; /* in objects */
	uint32_t obj_bytes;
	struct u64map map; /* key -> object index */
	/* tiers: DRAM in object bytes, SSD in slot bytes (what it takes of the device) */
	uint64_t dram_used, ssd_used;
	uint32_t dhead, dtail;
	uint32_t shead[2], stail[2]; /* the SSD's LRU list of each kind */
	uint64_t dclock;             /* the last DRAM LRU stamp given */
	/* SSD slot allocator: per kind, a free list of slot LBAs and a bump pointer */
	uint64_t *freeslot[2];
	uint64_t nfree[2], freecap[2];
	uint64_t bump;
	/* log allocator: the head is a position that only grows (LBA = position mod the tier, after
	 * padding past the end); the ring holds the objects written, oldest first */
	uint64_t head;
	struct kv_logent {
		uint64_t pos;
		uint32_t o;
	} * ring;
	uint64_t rfirst, rlen, rcap; /* rcap is a power of two */
	/* region allocator (docs/placement.md): nreg regions of rbytes; each lists the objects
	 * written into it (stale entries are skipped: the object moved or left); the free ones are
	 * a stack, the sealed ones an unordered array (pos: an index in it) */
	uint64_t rbytes;
	uint32_t nreg, nrfree, nsealed, nopen; /* nopen: streams, each with an open region */
	uint32_t nreserve; /* free regions held back for re-admissions: min(nopen, 2) */
	struct kv_region {
		uint64_t fill, live, seq; /* bytes appended, bytes of live objects, seal order */
		struct kv_rent {
			uint64_t key;
			uint32_t o;
		} * e;
		uint64_t ne, ecap;
		uint32_t pos;
		uint8_t state; /* REG_FREE, REG_OPEN, REG_SEALED */
	} * reg;
	uint32_t *rfree, *sealed;
	uint32_t *ropen;     /* the open region of each stream (KV_NONE: none) */
	uint32_t rclean;     /* the region being cleaned (KV_NONE): its objects are not TRIMmed one
	                        by one, the whole region is at the end */
	uint64_t rseq, rng[4];
	uint64_t *mark, markcap, markgen; /* per object: the cleaning step that visited it */
	struct kv_cand {
		double prio; /* value per byte of keeping it (<= 0: not re-admitted) */
		uint64_t key;
		uint32_t o, i;
	} * cand; /* the live objects of the region being cleaned */
	uint64_t ncand, candcap;
	/* the request being processed */
	uint64_t req;
	uint64_t cur_session;
	const struct kv_request *cur_rq; /* during kvsim_request(), else NULL */
	double now_t;
	struct kv_stats st;
	uint32_t *idx; /* object index of each prefix block of the current request */
	uint64_t idxcap;
	/* slot geometry: round_up(header + size, align[kind]); amask[kind] = align - 1 when a
	 * power of two, else 0 (divide) */
	uint64_t shdr, salign[2], amask[2];
	uint64_t ffirst[2]; /* slot_fifo: the free list of a kind is freeslot[k][ffirst..+nfree) */
	const struct kv_io_sink *sink;
	bool sink_failed;
};

/* SSD bytes the object occupies: round_up(header + size, the kind's alignment) */
static inline uint64_t kv_slot_bytes(const struct kvsim *s, const struct kv_obj *x)
{
	uint64_t n = s->shdr + x->size, m = s->amask[x->kind];
	return m ? (n + m) & ~m : (n + s->salign[x->kind] - 1) / s->salign[x->kind] * s->salign[x->kind];
}
uint32_t kv_lookup(const struct kvsim *s, uint64_t key);

/* Trace time in ns for the drive. Past 1.8e10 s (570 years) the ns no longer fit a uint64_t
 * (1.8e19): such a time (a malformed trace) is pinned to UINT64_MAX / 2 instead of wrapping. */
#define KV_NS_MAX_S 1.8e10
static inline uint64_t kv_now_ns(const struct kvsim *s)
{
	return s->now_t > 0 ? (s->now_t < KV_NS_MAX_S ? (uint64_t)(s->now_t * 1e9) : UINT64_MAX / 2)
	                    : 0;
}

/* the write stream of x (kv_stream() of its kind and session) */
static inline unsigned kv_obj_stream(const struct kvsim *s, const struct kv_obj *x)
{
	return kv_stream(&s->cfg, x->kind, x->session);
}

/* x's SSD copy is rewritten or leaves: count whether it was hit there */
static inline void kv_count_written_hit(struct kvsim *s, struct kv_obj *x)
{
	if (x->ssd_hits)
		s->st.ssd_written_hit[x->kind]++;
	x->ssd_hits = 0;
}

/* alloc.c: the SSD tier's allocators (slots, log, region) */
int kv_alloc_init(struct kvsim *s, char *err, size_t errlen);
bool kv_alloc_place(struct kvsim *s, uint32_t o);
bool kv_alloc_forget(struct kvsim *s, struct kv_obj *x);
void kv_alloc_fini(struct kvsim *s);

/* ssd_port.c: the SSD tier's one output port, to the drive and/or the store */
void kv_port_write(struct kvsim *s, const struct kv_obj *x);  /* x at x->lba */
/* x's bytes at lba (its slot, or its old one on a re-admission); *done (done may be NULL) is
 * raised to the drive's completion time */
void kv_port_read(struct kvsim *s, const struct kv_obj *x, uint64_t lba, uint64_t *done);
void kv_port_evicted(struct kvsim *s, const struct kv_obj *x, bool trim); /* trim: TRIM its slot */
void kv_port_trim(struct kvsim *s, uint64_t lba, uint64_t bytes); /* when the config TRIMs */
bool kv_port_probes(const struct kvsim *s);   /* does the store want KV_IO_PROBE? */
void kv_port_probe(struct kvsim *s, const struct kv_obj *x);
void kv_port_prefetch(const struct kvsim *s, const struct kv_obj *x); /* its L2P entries */
bool kv_port_timed(const struct kvsim *s);    /* are SSD loads timed by the drive? */
int kv_port_end(struct kvsim *s, const struct kv_request *rq); /* -1: the store failed */
uint64_t kv_port_stripe_bytes(const struct kvsim *s); /* the drive's write stripe; 0: no drive */
void kv_port_begin(struct kvsim *s);         /* a request starts (at kv_now_ns()) */
/* a request's load latency, but for its SSD reads: its transfers' time over PCIe and its
 * recompute time, both in s (the latency is the larger of reads + rest and recompute) */
void kv_port_load(struct kvsim *s, double rest, double recompute);

#endif
