/*
 * gandalf.c - "gandalf": drop-or-move pricing from the Gandalf paper (Sec. 3.3-3.4). The rule in
 * full, the reasoning behind it and where it departs from the paper: docs/policies.md, "gandalf".
 *
 * New objects enter DRAM. When DRAM needs room, compare
 *   the cheapest drop: a DRAM *leaf* (no cached child), priced  value(x) / (size(x) x w)
 *   the cheapest move to SSD: the longest-waiting *movable* DRAM object of each size class (full
 *   chunks, linear states), priced  (lambda x m x fee x size(x) + replacement(x)) / (size(x) x w)
 * and do the cheaper. w = the requests the object's session (or, without sessions, the object)
 * has waited since it was last active (>= 1); fee = SSD price / rated TBW bytes; m = 1, or the
 * write-budget multiplier with target_years; replacement(x) = what the SSD victims that make
 * room for x are worth (0 while a slot of its class is free).
 * value(x) = p(w) x recompute(x) x GPU $/token: a chunk costs its tokens (a hybrid model's leaf
 * chunk, which can end no hit, 0), a state its whole prefix (once used, times the learned
 * p_again: state_reuse). p(w) is learned online: the share of sessions idle w requests (of
 * objects, without sessions) that came back. Movable: root-side objects (parent not in DRAM),
 * children of a branch point or of a parent with an SSD copy, and linear states (state_move).
 * Victims are always leaves, so no cached object loses its parent; the current request's chunks
 * are never dropped from DRAM.
 *
 * Candidates come from two watch lists (every DRAM leaf and movable object; every SSD-only
 * leaf), ordered into lazy heaps once per request (Sec. 3.4); scan=1 finds the DRAM ones by
 * scanning DRAM instead (the tests compare the two). Parameters: gandalf_params below.
 * FG_GANDALF_DEBUG=1 prints what it learned at the end.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gandalf.h"
#include "kv_policy.h"
#include "pheap.h"
#include "u64map.h"
#include "vec.h"

#define NB 40       /* log2 buckets of idle requests */
#define MOVE_CANDIDATES_MAX 64 /* the move_candidates parameter's maximum: keep[] below holds them */


struct gandalf {
	double lambda, target_years, wear;
	int move_candidates, state_move, state_reuse, ssd_order;
	double gpu_per_token, fee;
	/* reuse statistics */
	double back[NB], gone[NB]; /* returned after idle in bucket k; still idle / left unused */
	double p[NB];              /* p(idle >= 2^k), refreshed once per request */
	struct u64map sess;        /* session -> its last request (sessioned traces) */
	bool sessions;
	/* candidates of the current request */
	uint64_t built_req;
	struct pheap drop, move[2];
	struct vq {
		struct pheap heap;
		struct pent *v; /* popped in order; v[cur..n) not yet taken */
		uint64_t n, cur, cap;
	} vq[2];
	bool vbuilt;
	size_t swpriced; /* swatch[0..swpriced) are in the heaps */
	uint64_t budget_written;
	/* of the states used once, how many were used again (again[0]: once, again[1]: twice) */
	double again[2];
	uint64_t nmove[2], ndrop[2], ninf, nbuild, npriced, nexpose, nlru;
	/* the watch list (pol_flag bit 0: on it); seq is the DRAM LRU stamp, set when sorting */
	struct went {
		uint64_t seq;
		uint32_t o;
	} * watch;
	uint64_t nwatch, wcap;
	/* the SSD watch list: every SSD-only leaf is on it (pol_flag ON_SWATCH), and some stale
	 * ones */
	uint32_t *swatch;
	uint64_t nswatch, swcap;
	bool scan_all; /* scan=1, or out of memory for the watch list: build() scans all of DRAM */
};
/* per-object scratch (one byte): which lists the object is on */
static uint8_t *flags(const struct kvsim *s, uint32_t o)
{
	return kv_obj_scratch(s, o);
}
#define ON_WATCH 1
#define KEPT 4
#define ON_SWATCH 8

static struct gandalf *gandalf_of(const struct kvsim *s)
{
	return kv_state(s);
}

static int bucket(uint64_t w)
{
	int b = 0;
	while (w > 1 && b < NB - 1) {
		w >>= 1;
		b++;
	}
	return b;
}

/* ---- sessions ---- */

/* idle requests of the object's session (or the object itself without sessions) */
static uint64_t idle(const struct kvsim *s, uint32_t x)
{
	struct gandalf *g = gandalf_of(s);
	uint64_t last = kv_obj_last_req(s, x);
	if (g->sessions && kv_obj_session(s, x) != KV_NO_SESSION) {
		uint64_t e =
		        u64map_get(&g->sess, kv_obj_session(s, x)); /* U64MAP_EMPTY: not seen */
		if (e != U64MAP_EMPTY && e > last)
			last = e;
	}
	return kv_req(s) > last ? kv_req(s) - last : 1;
}

/* when x or its session was last active (a request index): what "waiting" is measured from */
static double last_activity(const struct kvsim *s, uint32_t x)
{
	return (double)(kv_req(s) - idle(s, x));
}

static double reuse_p(const struct kvsim *s, uint64_t w)
{
	return gandalf_of(s)->p[bucket(w)];
}

/* refresh p(k) = back(>=k) / (back(>=k) + gone(>=k)), with still-idle sessions counted as gone */
static void refresh_p(struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	double gone[NB];
	memcpy(gone, g->gone, sizeof(gone));
	if (g->sessions)
		for (uint64_t i = 0; i < g->sess.cap; i++) {
			uint64_t last =
			        g->sess.slot[i].val; /* (counts: table order does not matter) */
			if (last != U64MAP_EMPTY && kv_req(s) > last)
				gone[bucket(kv_req(s) - last)] += 1;
		}
	double b = 0, d = 0;
	for (int k = NB - 1; k >= 0; k--) {
		b += g->back[k];
		d += gone[k];
		g->p[k] = (b + 1) / (b + d + 2);
	}
}

/*
 * What keeping x is worth: p(reuse) x the GPU time its loss would cost. For a hybrid model a
 * hit needs a state at the end of the cached chain (docs/kv.md), which prices two cases apart:
 *  - a full chunk that is a leaf (no cached chunk or state below it) can end no hit and lead to
 *    none: it is worth nothing (except while its own request is being admitted: its state
 *    comes last);
 *  - a state stands for its whole prefix: the paper's linear states are "reused about once", so
 *    the state a request hit is superseded by the one it leaves and cannot be counted on as a
 *    fallback; losing the newest state costs the prefix back to its start. A state that has
 *    been used once is reused again with the learned probability p_again.
 * (Pricing a state by its span back to the state its request hit, as an earlier version did,
 * made both look cheap - each assumed the other stays - and gandalf lost whole chains: WEKA with
 * a 200 GB SSD, miss 0.061 against 0.057 now.)
 */
/* the learned share of used states used again (Laplace-smoothed) */
static double p_again(const struct gandalf *g)
{
	return (g->again[1] + 1) / (g->again[0] + 2);
}

static double value(const struct kvsim *s, uint32_t x)
{
	struct gandalf *g = gandalf_of(s);
	double p = reuse_p(s, idle(s, x)), tokens = kv_obj_recompute_tokens(s, x);
	if (kv_cfg(s)->model.linear_state_bytes && kv_obj_kind(s, x) == OBJ_FULL &&
	    !kv_obj_nchild(s, x) && kv_obj_last_req(s, x) != kv_req(s))
		return 0; /* (the current request's chunks get their state when it completes) */
	if (kv_obj_kind(s, x) == OBJ_LINEAR) {
		tokens = kv_obj_end_tokens(s, x) > tokens ? kv_obj_end_tokens(s, x) : tokens;
		bool used = kv_obj_refs(s, x) > 1;
		if (g->state_reuse == STATE_REUSE_PAPER)
			p = used ? 0 : 1;
		else if (used)
			p *= g->state_reuse == STATE_REUSE_ONCE ? 0 : p_again(g);
	}
	return p * tokens * g->gpu_per_token;
}

static double drop_price(const struct kvsim *s, uint32_t x)
{
	uint64_t w = idle(s, x);
	return value(s, x) / ((double)kv_obj_size(s, x) * (double)w);
}

/* ---- the watch list and the parent-key index ---- */

static void watch(struct kvsim *s, uint32_t o)
{
	struct gandalf *g = gandalf_of(s);
	if (*flags(s, o) & ON_WATCH)
		return;
	if (vec_reserve(g->watch, g->wcap, g->nwatch + 1)) {
		g->scan_all = true; /* a lost candidate would change results: scan DRAM instead */
		return;
	}
	g->watch[g->nwatch++].o = o;
	*flags(s, o) |= ON_WATCH;
}

/* o may have become an SSD-only leaf: an SSD victim candidate */
static void swatch(struct kvsim *s, uint32_t o)
{
	struct gandalf *g = gandalf_of(s);
	if (*flags(s, o) & ON_SWATCH)
		return;
	if (vec_reserve(g->swatch, g->swcap, g->nswatch + 1))
		return; /* a missed victim: build() falls back to the SSD LRU tail */
	g->swatch[g->nswatch++] = o;
	*flags(s, o) |= ON_SWATCH;
}

/* Object o (key) left DRAM or became a branch point: if still cached it may be an SSD-only leaf
 * now, and its DRAM children may be root-side (the core's child links find them). */
static void departed(struct kvsim *s, uint32_t o, uint64_t key)
{
	if (kv_obj_key(s, o) != key || (!kv_obj_in_dram(s, o) && !kv_obj_in_ssd(s, o)))
		return; /* it left the cache, and its descendants with it */
	if (kv_obj_in_ssd(s, o))
		swatch(s, o);
	for (uint32_t c = kv_obj_first_child(s, o); c != KV_NONE; c = kv_obj_next_sibling(s, c))
		if (kv_obj_in_dram(s, c))
			watch(s, c);
}

/* the cached chunks below y (its children but the state at its boundary) */
static uint32_t chunk_children(const struct kvsim *s, uint32_t y)
{
	return kv_obj_nchild(s, y) - (kv_lookup(s, kv_obj_key(s, y) | KV_LINEAR_BIT) != KV_NONE);
}

/*
 * May x move to SSD? The paper moves "root-side" objects, whose parent is not in DRAM, so that
 * the SSD holds prefixes and DRAM their continuations. A hot prefix shared by many sessions (a
 * system prompt) would then block every session below it: it stays in DRAM because it is used
 * all the time, and none of its descendants is ever root-side. So a parent that is a branch
 * point (more than one cached chunk below it) or already has an SSD copy counts as a root too.
 * A linear state has no children and may always move: with it on SSD, the chunks in DRAM still
 * make a hit, and it is the one object a hybrid hit cannot do without.
 */
static bool movable(const struct kvsim *s, uint32_t o)
{
	if (!kv_obj_in_dram(s, o) || kv_obj_in_ssd(s, o))
		return false;
	if (kv_is_root_side(s, o))
		return true;
	if (kv_obj_kind(s, o) == OBJ_LINEAR)
		return gandalf_of(s)->state_move == STATE_MOVE_ALWAYS;
	uint32_t y = kv_obj_parent(s, o); /* in DRAM: o is not root-side */
	return kv_obj_in_ssd(s, y) || chunk_children(s, y) > 1;
}

/* ---- candidates, once per request ---- */

/*
 * The paper (Sec. 3.4): "moving a root-side node exposes its children as new move candidates".
 * After x (key) moved to SSD its DRAM children are root-side: they join this request's move
 * heaps at once (departed() also puts them on the watch list for later requests). Before this,
 * they waited for the next request's build(), so a request that needed several moves ran out of
 * candidates after the first and dropped chains instead (WEKA, paper-kimi-k3, 4G DRAM / 40G SSD,
 * lambda=1: miss 0.3045 before, against LRU's 0.18).
 */
static void expose_children(struct kvsim *s, uint32_t x, uint64_t key)
{
	struct gandalf *g = gandalf_of(s);
	if (kv_obj_key(s, x) != key || !kv_obj_in_ssd(s, x))
		return;
	/* children of a branch point were candidates already, and so were states when they may
	 * always move: pushing them twice would take two of the k priced slots */
	bool branch = chunk_children(s, x) > 1;
	for (uint32_t c = kv_obj_first_child(s, x); c != KV_NONE; c = kv_obj_next_sibling(s, c)) {
		bool was = kv_obj_kind(s, c) == OBJ_LINEAR ? g->state_move == STATE_MOVE_ALWAYS
		                                            : branch;
		if (!was && movable(s, c))
			pheap_push(&g->move[kv_obj_kind(s, c)], last_activity(s, c), c);
	}
}

static int seq_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct went *)a)->seq, y = ((const struct went *)b)->seq;
	return x < y ? -1 : x > y;
}

static void candidate(struct kvsim *s, uint32_t o)
{
	struct gandalf *g = gandalf_of(s);
	if (kv_is_leaf(s, o))
		pheap_push(&g->drop, drop_price(s, o), o);
	if (movable(s, o))
		pheap_push(&g->move[kv_obj_kind(s, o)], last_activity(s, o),
		           o); /* longest waiting first */
}

static bool victim_ok(const struct kvsim *s, uint32_t o);

static void build(struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	g->built_req = kv_req(s);
	g->drop.n = g->move[0].n = g->move[1].n = 0;
	refresh_p(s);
	/* the DRAM leaves and root-side nodes, least recently used first, as a scan of DRAM from
	 * its tail meets them (the heaps break ties by push order) */
	if (g->scan_all) {
		for (uint32_t o = kv_dram_tail(s); o != KV_NONE; o = kv_dram_prev(s, o))
			candidate(s, o);
	} else {
		/* an index freed and reused may be listed twice (a new object starts with no flags)
		 */
		size_t n = 0;
		for (size_t i = 0; i < g->nwatch; i++) {
			uint32_t o = g->watch[i].o;
			if (!(*flags(s, o) & KEPT) && kv_obj_in_dram(s, o) &&
			    (kv_is_leaf(s, o) || movable(s, o))) {
				g->watch[n++] = (struct went){kv_obj_dram_stamp(s, o), o};
				*flags(s, o) |= ON_WATCH | KEPT;
			} else if (!(*flags(s, o) & KEPT)) {
				*flags(s, o) &= ~ON_WATCH;
			}
		}
		g->nwatch = n;
		for (size_t i = 0; i < n; i++)
			*flags(s, g->watch[i].o) &= ~KEPT;
		qsort(g->watch, n, sizeof(*g->watch), seq_cmp);
		for (size_t i = 0; i < n; i++)
			candidate(s, g->watch[i].o);
	}
	/* SSD victims are priced when this request first needs one (the SSD is full) */
	g->vbuilt = false;
}

/* A victim's heap key: value per request waited; with wear=w > 0 times v^w, v the valid share of
 * the drive's GC unit holding it, so that victims in mostly dead units go first and GC finds
 * them empty (ties among worthless victims too: + 1e-30 v). docs/placement.md. */
static double victim_key(struct kvsim *s, uint32_t o)
{
	if (gandalf_of(s)->ssd_order == GANDALF_SSD_RECENCY)
		return (double)kv_obj_last_req(s, o); /* least recently used first */
	double k = value(s, o) / (double)idle(s, o), w = gandalf_of(s)->wear;
	if (w > 0) {
		double v = kv_obj_unit_valid(s, o);
		k = k * pow(v, w) + 1e-30 * v;
	}
	return k;
}

/*
 * The SSD watch list is walked in its own order, which is unrelated to where its objects live:
 * each step would wait on a cache miss for the object, then on one for its session's entry
 * (idle()). Fetched ahead instead, SWATCH_AHEAD objects and half as many sessions.
 */
#define SWATCH_AHEAD 16
static void swatch_prefetch(const struct kvsim *s, size_t i)
{
	const struct gandalf *g = gandalf_of(s);
	if (i + SWATCH_AHEAD < g->nswatch)
		kv_obj_prefetch(s, g->swatch[i + SWATCH_AHEAD]);
	if (g->sessions && i + SWATCH_AHEAD / 2 < g->nswatch)
		u64map_prefetch(&g->sess, kv_obj_session(s, g->swatch[i + SWATCH_AHEAD / 2]));
}

/* price SSD-only leaf o into its kind's victim heap */
static void victim_price(struct kvsim *s, uint32_t o)
{
	pheap_push(&gandalf_of(s)->vq[kv_obj_kind(s, o)].heap, victim_key(s, o), o);
}

/* price SSD-only leaves swatch[from..] into their kind's victim heap */
static void victims_push(struct kvsim *s, size_t from)
{
	struct gandalf *g = gandalf_of(s);
	for (size_t i = from; i < g->nswatch; i++) {
		uint32_t o = g->swatch[i];
		swatch_prefetch(s, i);
		if (victim_ok(s, o))
			victim_price(s, o);
	}
	g->npriced += g->nswatch - from;
	g->swpriced = g->nswatch;
}

/* SSD victims: every SSD-only leaf, in a heap per kind (a slot is refilled from its own class),
 * cheapest first on the drop scale (value per request waited); popped into vq[k].v in order as
 * replacement() and ssd_victim() walk them. Leaves that appear during the request (a victim's
 * parent) join the heap when the walk next moves on. */
static void victims_build(struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	g->vbuilt = true;
	for (int k = 0; k < 2; k++)
		g->vq[k].heap.n = g->vq[k].n = g->vq[k].cur = 0;
	/* the list without its stale and repeated entries, each kept one priced as it is kept, in
	 * list order as victims_push() would (a binary heap's order among equal keys depends on
	 * the order of the pushes, so the results do too) */
	size_t n = 0;
	for (size_t i = 0; i < g->nswatch; i++) {
		uint32_t o = g->swatch[i];
		swatch_prefetch(s, i);
		if (!(*flags(s, o) & KEPT) && victim_ok(s, o)) {
			g->swatch[n++] = o;
			*flags(s, o) |= ON_SWATCH | KEPT;
			victim_price(s, o);
		} else if (!(*flags(s, o) & KEPT)) {
			*flags(s, o) &= ~ON_SWATCH;
		}
	}
	g->nswatch = g->swpriced = n;
	g->npriced += n;
	for (size_t i = 0; i < n; i++)
		*flags(s, g->swatch[i]) &= ~KEPT;
	g->nbuild++;
}

/* the i-th cheapest victim of kind k in this request (i >= cur), or false when there is none */
static bool victim_at(struct kvsim *s, int k, size_t i)
{
	struct gandalf *g = gandalf_of(s);
	struct vq *q = &g->vq[k];
	if (!g->vbuilt)
		victims_build(s);
	else if (g->swpriced < g->nswatch)
		victims_push(s, g->swpriced);
	while (q->n <= i) {
		if (!q->heap.n)
			return false;
		if (vec_reserve(q->v, q->cap, q->n + 1))
			return false;
		q->v[q->n++] = pheap_pop(&q->heap);
	}
	return true;
}

static bool victim_ok(const struct kvsim *s, uint32_t o)
{
	return kv_obj_in_ssd(s, o) && !kv_obj_in_dram(s, o) && kv_is_leaf(s, o);
}

/*
 * With a hybrid model an SSD chain ends in a state, so when no chunk on SSD is a leaf, a chunk
 * slot is freed by evicting a state whose parent chunk is SSD-only and has no other child: the
 * chunk is then an orphan leaf (worth nothing) and goes next. The state's value is the price.
 */
static uint32_t exposes_chunk(const struct kvsim *s, uint32_t state)
{
	uint32_t p = kv_obj_parent(s, state);
	if (p == KV_NONE || kv_obj_in_dram(s, p) || !kv_obj_in_ssd(s, p) ||
	    kv_obj_nchild(s, p) != 1)
		return KV_NONE;
	return p;
}

/* value lost to make room on SSD for x: its kind's cheapest victims until x fits (for a chunk,
 * then states that expose one) */
static double replacement(struct kvsim *s, uint32_t x)
{
	struct gandalf *g = gandalf_of(s);
	uint64_t need = kv_ssd_shortfall(s, x), freed = 0;
	if (!need)
		return 0;
	double cost = 0;
	for (int k = kv_obj_kind(s, x), pass = 0; pass < 2 && freed < need;
	     pass++, k = OBJ_LINEAR) {
		if (pass && kv_obj_kind(s, x) == OBJ_LINEAR)
			break;
		struct vq *q = &g->vq[k];
		for (size_t i = q->cur; freed < need && victim_at(s, k, i); i++) {
			uint32_t o = q->v[i].o;
			if (!victim_ok(s, o) || (pass && exposes_chunk(s, o) == KV_NONE))
				continue;
			freed += kv_obj_slot_bytes(s, pass ? x : o);
			cost += g->wear > 0 || g->ssd_order == GANDALF_SSD_RECENCY
			                ? value(s, o) / (double)idle(s, o)
			                : q->v[i].key;
		}
	}
	if (freed < need)
		g->ninf++;
	return freed >= need ? cost : INFINITY;
}

uint32_t gandalf_ssd_victim(struct kvsim *s, int k)
{
	struct gandalf *g = gandalf_of(s);
	struct vq *q = &g->vq[k];
	while (victim_at(s, k, q->cur)) {
		uint32_t o = q->v[q->cur++].o;
		if (victim_ok(s, o) && kv_obj_kind(s, o) == k)
			return o;
	}
	for (q = &g->vq[OBJ_LINEAR]; k == OBJ_FULL && victim_at(s, OBJ_LINEAR, q->cur);) {
		uint32_t o = q->v[q->cur++].o, p;
		if (victim_ok(s, o) && (p = exposes_chunk(s, o)) != KV_NONE) {
			kv_evict_ssd(s, o);
			return p;
		}
	}
	return kv_ssd_tail(s, k); /* no leaf of the kind on SSD: plain LRU */
}

/*
 * No DRAM leaf to drop and no move possible: DRAM holds chains whose states sit on SSD. Evict the
 * cheapest such state from SSD; its DRAM parent becomes a leaf (an orphan, worth nothing) and is
 * dropped next. false when there is none.
 */
static bool expose(struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	for (size_t i = g->vq[OBJ_LINEAR].cur; victim_at(s, OBJ_LINEAR, i); i++) {
		uint32_t o = g->vq[OBJ_LINEAR].v[i].o;
		if (!victim_ok(s, o))
			continue;
		uint32_t p = kv_obj_parent(s, o);
		if (p == KV_NONE || !kv_obj_in_dram(s, p) || kv_obj_nchild(s, p) != 1 ||
		    kv_obj_last_req(s, p) == kv_req(s))
			continue;
		kv_evict_ssd(s, o);
		g->nexpose++;
		pheap_push(&g->drop, drop_price(s, p), p);
		return true;
	}
	return false;
}

static double multiplier(const struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	if (g->target_years <= 0 || kv_now(s) <= kv_stats(s)->t_first)
		return 1;
	double budget = kv_cfg(s)->tbw_bytes * (kv_now(s) - kv_stats(s)->t_first) /
	                (g->target_years * 365.0 * 86400.0);
	double written =
	        (double)(kv_stats(s)->ssd_write_bytes[0] + kv_stats(s)->ssd_write_bytes[1]);
	double m = budget > 0 ? written / budget : 1;
	return m < 1.0 / 16 ? 1.0 / 16 : (m > 16 ? 16 : m);
}

void gandalf_make_room(struct kvsim *s, uint64_t need)
{
	struct gandalf *g = gandalf_of(s);
	if (!kv_dram_over(s, need))
		return;
	if (g->built_req != kv_req(s) || !g->drop.a)
		build(s);
	double m = multiplier(s);
	int rebuilt = 0;
	bool nomove = false;
	while (kv_dram_over(s, need) && kv_dram_head(s) != KV_NONE) {
		/* cheapest valid drop */
		/* (the current request's own chunks are not dropped: its chain would break) */
		while (g->drop.n &&
		       (!kv_obj_in_dram(s, g->drop.a[0].o) || !kv_is_leaf(s, g->drop.a[0].o) ||
		        kv_obj_last_req(s, g->drop.a[0].o) == kv_req(s)))
			(void)pheap_pop(&g->drop);
		double dprice = g->drop.n ? g->drop.a[0].key : INFINITY;
		/* best move among the first k candidates of each class */
		double mprice = INFINITY;
		uint32_t mo = KV_NONE;
		for (int c = 0; c < 2; c++) {
			struct pheap *h = &g->move[c];
			struct pent keep[MOVE_CANDIDATES_MAX];
			int nk = 0;
			while (h->n && nk < g->move_candidates) {
				uint32_t o = h->a[0].o;
				struct pent top = h->a[0];
				(void)pheap_pop(h);
				if (!movable(s, o) || last_activity(s, o) != top.key)
					continue;
				keep[nk++] = top;
				double price = g->lambda * m * g->fee / (double)idle(s, o) +
				               replacement(s, o) / (double)kv_obj_size(s, o);
				if (price < mprice) {
					mprice = price;
					mo = o;
				}
			}
			for (int i = 0; i < nk; i++)
				pheap_push(h, keep[i].key, keep[i].o);
		}
		if (mo == KV_NONE && !g->drop.n && rebuilt++ < 2) {
			build(s);
			continue;
		}
		if (mo != KV_NONE && mprice < dprice && !nomove) {
			uint64_t key = kv_obj_key(s, mo);
			if (!kv_write_ssd(s, mo)) { /* it stays; no more moves this time */
				nomove = true;
				continue;
			}
			g->nmove[kv_obj_kind(s, mo)]++;
			kv_drop_dram(s, mo);
			departed(s, mo, key);
			expose_children(s, mo, key);
		} else if (g->drop.n) {
			uint32_t o = g->drop.a[0].o;
			(void)pheap_pop(&g->drop);
			uint64_t key = kv_obj_key(s, o);
			uint32_t p = kv_obj_parent(s, o);
			g->ndrop[kv_obj_kind(s, o)]++;
			kv_drop_dram(s, o);
			departed(s, o, key);
			/* dropping a leaf may expose its parent as a leaf */
			if (p != KV_NONE && kv_obj_in_dram(s, p) && kv_is_leaf(s, p))
				pheap_push(&g->drop, drop_price(s, p), p);
		} else if (!expose(s)) {
			uint32_t o = kv_dram_tail(s);
			uint64_t key = kv_obj_key(s, o);
			g->nlru++;
			kv_drop_dram(s, o); /* no priced candidate left: LRU */
			departed(s, o, key);
		}
	}
}

/* --alloc region: what losing SSD object x costs. An interior object takes the chain below it
 * along, worth at least a state at its own end: p x the prefix up to it (docs/placement.md). */
double gandalf_ssd_value(struct kvsim *s, uint32_t x)
{
	double v = value(s, x);
	if (!kv_is_leaf(s, x))
		v = fmax(v, reuse_p(s, idle(s, x)) * kv_obj_end_tokens(s, x) * gandalf_of(s)->gpu_per_token);
	return v;
}

/* an object left the cache without being used again: for sessionless traces, a non-return */
void gandalf_removed(struct kvsim *s, uint32_t o)
{
	struct gandalf *g = gandalf_of(s);
	if (!g)
		return;
	if (!g->sessions)
		g->gone[bucket(kv_req(s) > kv_obj_last_req(s, o) ? kv_req(s) - kv_obj_last_req(s, o)
		                                                 : 1)] += 1;
	/* its parent loses a child: it may have become a leaf */
	uint32_t p = kv_obj_parent(s, o);
	if (p != KV_NONE && kv_obj_in_dram(s, p))
		watch(s, p);
	if (p != KV_NONE && kv_obj_in_ssd(s, p))
		swatch(s, p);
}

void gandalf_admitted(struct kvsim *s, uint32_t o)
{
	if (kv_obj_kind(s, o) == OBJ_FULL) {
		/* its parent may have become a branch point: its other chunks may now move */
		uint32_t p = kv_obj_parent(s, o);
		if (p != KV_NONE && kv_obj_in_dram(s, p) && kv_obj_nchild(s, p) > 1)
			departed(s, p, kv_obj_key(s, p));
	}
	watch(s, o);
}

void gandalf_touched(struct kvsim *s, uint32_t o)
{
	struct gandalf *g = gandalf_of(s);
	if (kv_obj_kind(s, o) == OBJ_LINEAR && kv_obj_refs(s, o) <= 2)
		g->again[kv_obj_refs(s, o) - 1] +=
		        1; /* refs counts the admission: 1 = first reuse */
	if (!g->sessions) {
		uint64_t w =
		        kv_req(s) > kv_obj_last_req(s, o) ? kv_req(s) - kv_obj_last_req(s, o) : 0;
		if (w)
			g->back[bucket(w)] += 1;
	}
}

enum { LAMBDA, MOVE_CANDIDATES, SCAN, TARGET_YEARS, STATE_MOVE, STATE_REUSE, WEAR };
static const struct kv_param gandalf_params[] = {
        [LAMBDA] = {"lambda", 1, 0, INFINITY,
                    .help = "weight of the SSD write fee in the move price",
                    KV_SWEEP(0, 0.25, 0.5, 1, 1.25, 1.5, 1.75, 2, 4, 8, 16, 32, 64, 128, 256,
                             512, 1024)},
        [MOVE_CANDIDATES] = {"move_candidates", 1, 1, MOVE_CANDIDATES_MAX,
                             .help = "longest-waiting movable objects priced per class"},
        [SCAN] = {"scan", 0, 0, 1,
                  .help = "1: find DRAM candidates by scanning DRAM (slow, same results)"},
        [TARGET_YEARS] =
                {"target_years", 0, 0, INFINITY,
                 .help = "SSD write budget to last this long (0: none; also --target-years)"},
        [STATE_MOVE] = {"state_move", STATE_MOVE_ALWAYS, 0, 1, .integer = true,
                        .help = "0: a state moves only when root-side (the paper); 1: always"},
        [STATE_REUSE] = {"state_reuse", STATE_REUSE_LEARNED, 0, 2, .integer = true,
                         .help = "a state's reuse: 0 the paper's r=1 then 0; 1 p(w) then 0; 2 "
                                 "p(w) then p(w) x learned p_again"},
        [WEAR] = {"wear", 0, 0, 64,
                  .help = "SSD victims in mostly dead GC units first: key x valid^wear (0: off)"},
        {NULL},
};

int gandalf_start(struct kvsim *s, const struct gandalf_opts *o, char *err, size_t errlen)
{
	struct gandalf *g = calloc(1, sizeof(*g));
	if (!g)
		return snprintf(err, errlen, "out of memory"), -1;
	g->lambda = o->lambda;
	g->move_candidates = o->move_candidates;
	g->scan_all = o->scan;
	g->target_years = o->target_years;
	g->state_move = o->state_move;
	g->state_reuse = o->state_reuse;
	g->wear = o->wear;
	g->ssd_order = o->ssd_order;
	g->gpu_per_token = kv_gpu_usd_per_token(kv_cfg(s));
	g->fee = kv_wear_usd_per_byte(kv_cfg(s));
	g->built_req = UINT64_MAX;
	for (int k = 0; k < NB; k++)
		g->p[k] = 0.5;
	kv_set_state(s, g);
	return 0;
}

static int gandalf_init(struct kvsim *s, char *err, size_t errlen)
{
	struct gandalf_opts o = {
	        .lambda = kv_param(s, LAMBDA),
	        .move_candidates = (int)kv_param(s, MOVE_CANDIDATES),
	        .scan = kv_param(s, SCAN) != 0,
	        .target_years = kv_param(s, TARGET_YEARS),
	        .state_move = (int)kv_param(s, STATE_MOVE),
	        .state_reuse = (int)kv_param(s, STATE_REUSE),
	        .wear = kv_param(s, WEAR),
	        .ssd_order = GANDALF_SSD_VALUE,
	};
	return gandalf_start(s, &o, err, errlen);
}

void gandalf_fini(struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	if (!g)
		return;
	if (getenv("FG_GANDALF_DEBUG")) {
		fprintf(stderr, "gandalf: p_again %.3f (%.0f/%.0f), p(idle >= 2^k):", p_again(g),
		        g->again[1], g->again[0]);
		for (int k = 0; k < 16; k++)
			fprintf(stderr, " %.2f", g->p[k]);
		fprintf(stderr,
		        "\n  replacement impossible %llu times; SSD victims priced %llu times, "
		        "%.0f leaves each\n",
		        (unsigned long long)g->ninf, (unsigned long long)g->nbuild,
		        g->nbuild ? (double)g->npriced / (double)g->nbuild : 0.0);
		fprintf(stderr, "  states evicted to expose a DRAM orphan %llu; LRU drops %llu\n",
		        (unsigned long long)g->nexpose, (unsigned long long)g->nlru);
		fprintf(stderr, "  moves %llu/%llu drops %llu/%llu (full/linear)\n",
		        (unsigned long long)g->nmove[0], (unsigned long long)g->nmove[1],
		        (unsigned long long)g->ndrop[0], (unsigned long long)g->ndrop[1]);
	}
	pheap_free(&g->drop);
	pheap_free(&g->move[0]);
	pheap_free(&g->move[1]);
	for (int k = 0; k < 2; k++) {
		pheap_free(&g->vq[k].heap);
		free(g->vq[k].v);
	}
	u64map_free(&g->sess);
	free(g->watch);
	free(g->swatch);
	free(g);
	kv_set_state(s, NULL);
}

/* What the run learned: the share of used states used again (the paper's rule assumes 0), the
 * states counted, and how the room was made. */
int gandalf_figures(const struct kvsim *s, struct kv_figure *f, int max)
{
	const struct gandalf *g = gandalf_of(s);
	if (!g || max < 7)
		return 0;
	f[0] = (struct kv_figure){"p_again", p_again(g)};
	f[1] = (struct kv_figure){"states_used", g->again[0]};
	f[2] = (struct kv_figure){"states_used_again", g->again[1]};
	f[3] = (struct kv_figure){"moves_full", (double)g->nmove[0]};
	f[4] = (struct kv_figure){"moves_linear", (double)g->nmove[1]};
	f[5] = (struct kv_figure){"drops_full", (double)g->ndrop[0]};
	f[6] = (struct kv_figure){"drops_linear", (double)g->ndrop[1]};
	return 7;
}


const struct kv_policy kv_policy_gandalf = {
        .name = "gandalf",
        .params = gandalf_params,
        .init = gandalf_init,
        GANDALF_POLICY_HOOKS,
};

/* Called by the core before each request: session returns feed the estimate (the session of
 * the current request is set by the core's caller through kvsim.cur_session). */
void gandalf_begin_req(struct kvsim *s)
{
	struct gandalf *g = gandalf_of(s);
	if (kv_session(s) == KV_NO_SESSION)
		return;
	g->sessions = true;
	uint64_t *last = u64map_upsert(&g->sess, kv_session(s), kv_req(s));
	if (!last)
		return; /* out of memory: the estimate misses this session, the run goes on */
	if (*last != kv_req(s) && kv_req(s) > *last)
		g->back[bucket(kv_req(s) - *last)] += 1;
	*last = kv_req(s);
}
