/*
 * kv_policy.h - what a placement policy sees of the KV simulator: read-only accessors to the
 * objects and the tiers, its own state and per-object scratch, its parameters, and the few
 * actions that change the cache (drop, write, move, evict). docs/kv-policy.md is the guide.
 *
 * Why accessors and not the struct: the core's invariants (tier lists in LRU order, byte
 * counts, the prefix tree's child links, the key map) hold only if one file changes them. A
 * policy that can write s->obj[o].in_ssd can break them without a compiler noticing; through
 * this header it can only read, and act through kv_drop_dram() and friends, which keep them.
 * The accessors are static inline over kv_int.h's layout, so reading through them costs what
 * the field access did (the bench figures in docs/kv-policy.md).
 *
 * The rule, checked by tests/test_layering.sh: a file in femu-gandalf/policy/ includes this
 * header (never kv_int.h), never names struct kv_obj and never dereferences the simulator
 * (no "s->"). Object handles are uint32_t indices (KV_NONE: none), valid until the object
 * leaves the cache (the removed() hook is the last moment).
 */
#ifndef FG_KV_POLICY_H
#define FG_KV_POLICY_H

#include "kv_int.h"
#include "kvsim.h"

/* ---- one object (o: an index of a cached object) ---- */
static inline uint64_t kv_obj_key(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].key;
}
static inline int kv_obj_kind(const struct kvsim *s, uint32_t o) /* OBJ_FULL or OBJ_LINEAR */
{
	return s->obj[o].kind;
}
static inline uint64_t kv_obj_size(const struct kvsim *s, uint32_t o) /* bytes (in DRAM) */
{
	return s->obj[o].size;
}
static inline uint64_t kv_obj_slot_bytes(const struct kvsim *s, uint32_t o) /* bytes on SSD */
{
	return kv_slot_bytes(s, &s->obj[o]);
}
static inline bool kv_obj_in_dram(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].in_dram;
}
static inline bool kv_obj_in_ssd(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].in_ssd;
}
static inline uint32_t kv_obj_refs(const struct kvsim *s, uint32_t o) /* admission + hits */
{
	return s->obj[o].refs;
}
static inline uint64_t kv_obj_last_req(const struct kvsim *s, uint32_t o) /* request index */
{
	return s->obj[o].last_req;
}
static inline double kv_obj_last_t(const struct kvsim *s, uint32_t o) /* trace time */
{
	return s->obj[o].last_t;
}
static inline uint64_t kv_obj_dram_stamp(const struct kvsim *s, uint32_t o) /* DRAM LRU order */
{
	return s->obj[o].dseq;
}
static inline uint64_t kv_obj_session(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].session;
}
static inline uint32_t kv_obj_recompute_tokens(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].recompute_tokens;
}
static inline uint32_t kv_obj_end_tokens(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].end_tokens;
}
static inline uint64_t kv_obj_lba(const struct kvsim *s, uint32_t o) /* its SSD slot, bytes */
{
	return s->obj[o].lba;
}
/* On SSD with a device: the valid share of the drive's GC unit that holds o's first LBA
 * (ftl_unit_valid(); 1 while the unit is open, without a device or when o is not on SSD). */
double kv_obj_unit_valid(const struct kvsim *s, uint32_t o);
/* the key of its parent (KV_NO_PARENT for a root), cached or not */
static inline uint64_t kv_obj_parent_key(const struct kvsim *s, uint32_t o)
{
	return kv_parent_key(s->obj[o].key, s->obj[o].parent_key);
}
/* the prefix tree of cached objects: parent (KV_NONE for a root), child count, children */
static inline uint32_t kv_obj_parent(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].parent;
}
static inline uint32_t kv_obj_nchild(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].nchild;
}
static inline uint32_t kv_obj_first_child(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].kid;
}
static inline uint32_t kv_obj_next_sibling(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].sib[1];
}
/* the policy's obj_bytes of scratch for o (zero when o was created) */
static inline void *kv_obj_scratch(const struct kvsim *s, uint32_t o)
{
	return s->scratch + (size_t)o * s->obj_bytes;
}
/* Start fetching o's fields and its scratch: a policy walking a long list of objects in an
 * order unrelated to their places (gandalf's SSD leaves) overlaps their cache misses with it. */
static inline void kv_obj_prefetch(const struct kvsim *s, uint32_t o)
{
	const char *p = (const char *)&s->obj[o];
	fg_prefetch(p);
	fg_prefetch(p + sizeof(s->obj[o]) - 1);
	fg_prefetch(kv_obj_scratch(s, o));
}
/* Is o still the cached object with this key? (an index is reused once its object is freed) */
static inline bool kv_obj_alive(const struct kvsim *s, uint32_t o, uint64_t key)
{
	return s->obj[o].key == key && (s->obj[o].in_dram || s->obj[o].in_ssd);
}
static inline bool kv_is_leaf(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].nchild == 0;
}
/* in DRAM with its parent not in DRAM */
static inline bool kv_is_root_side(const struct kvsim *s, uint32_t o)
{
	uint32_t p = s->obj[o].parent;
	return s->obj[o].in_dram && (p == KV_NONE || !s->obj[p].in_dram);
}
uint32_t kv_lookup(const struct kvsim *s, uint64_t key); /* index of the cached key, or KV_NONE */

/* ---- the tiers: LRU lists (head = most recent; KV_NONE ends them) ---- */
static inline uint32_t kv_dram_head(const struct kvsim *s)
{
	return s->dhead;
}
static inline uint32_t kv_dram_tail(const struct kvsim *s)
{
	return s->dtail;
}
static inline uint32_t kv_dram_next(const struct kvsim *s, uint32_t o) /* toward the tail */
{
	return s->obj[o].dnext;
}
static inline uint32_t kv_dram_prev(const struct kvsim *s, uint32_t o) /* toward the head */
{
	return s->obj[o].dprev;
}
static inline uint32_t kv_ssd_head(const struct kvsim *s, int kind)
{
	return s->shead[kind];
}
static inline uint32_t kv_ssd_tail(const struct kvsim *s, int kind)
{
	return s->stail[kind];
}
static inline uint32_t kv_ssd_next(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].snext;
}
static inline uint32_t kv_ssd_prev(const struct kvsim *s, uint32_t o)
{
	return s->obj[o].sprev;
}
/* would DRAM overflow if need more bytes entered it? */
static inline bool kv_dram_over(const struct kvsim *s, uint64_t need)
{
	return s->dram_used + need > s->cfg.dram_bytes;
}
/* objects ever allocated (indices are below it) */
static inline uint32_t kv_nobj(const struct kvsim *s)
{
	return s->nobj;
}

/* ---- the run ---- */
static inline const struct kv_config *kv_cfg(const struct kvsim *s)
{
	return &s->cfg;
}
static inline bool kv_hybrid(const struct kvsim *s) /* the model has linear states */
{
	return s->cfg.model.linear_state_bytes > 0;
}
static inline const struct kv_stats *kv_stats(const struct kvsim *s)
{
	return &s->st;
}
static inline uint64_t kv_req(const struct kvsim *s) /* index of the request being processed */
{
	return s->req;
}
static inline double kv_now(const struct kvsim *s) /* its trace time */
{
	return s->now_t;
}
static inline uint64_t kv_session(const struct kvsim *s) /* its session, or KV_NO_SESSION */
{
	return s->cur_session;
}

/* the request being processed (its blocks, tokens, session), or NULL outside kvsim_request() */
static inline const struct kv_request *kv_request_cur(const struct kvsim *s)
{
	return s->cur_rq;
}

/* ---- the policy's own ---- */
static inline void *kv_state(const struct kvsim *s) /* what init() stored with kv_set_state() */
{
	return s->pol_state;
}
static inline void kv_set_state(struct kvsim *s, void *state)
{
	s->pol_state = state;
}
static inline double kv_param(const struct kvsim *s, int i) /* parameter i of its table */
{
	return s->pv[i];
}
static inline void *kv_prepared(const struct kvsim *s) /* prepare()'s result, or NULL */
{
	return s->prepared;
}

/* ---- actions: the only ways a policy changes the cache ---- */
void kv_drop_dram(struct kvsim *s, uint32_t o); /* drop the DRAM copy (frees if nowhere else) */
bool kv_move_to_ssd(struct kvsim *s,
                    uint32_t o); /* write to SSD (evicting SSD victims), drop from DRAM */
bool kv_write_ssd(struct kvsim *s, uint32_t o); /* write a copy to SSD, keep DRAM */
void kv_evict_ssd(struct kvsim *s, uint32_t o);
/* Bytes that SSD residents of o's kind must free before o can be written: 0 when it fits now.
 * With slots only a resident of the same kind (size class) frees a slot o can take, so
 * ssd_victim() is asked for that kind and one of them is needed. */
uint64_t kv_ssd_shortfall(const struct kvsim *s, uint32_t o);
void kv_default_make_room(struct kvsim *s, uint64_t need);
/* The lowest score among the `window` least recently used objects of a tier (0 DRAM, 1 SSD:
 * the list of that kind). */
uint32_t kv_tail_min(struct kvsim *s, int tier, int kind, uint32_t window,
                     double (*score)(struct kvsim *s, uint32_t o, void *arg), void *arg);
/* Free DRAM by victim(), writing each victim to SSD unless it is there already (write-back). */
void kv_make_room_writeback(struct kvsim *s, uint64_t need, uint32_t (*victim)(struct kvsim *s));

#endif
