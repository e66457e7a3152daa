/*
 * lru_k.c - the Gandalf paper's LRU-K baseline ([35]), in its two readings.
 *
 * The paper describes LRU-K twice, differently:
 *   Sec. 5.6 / 5.7: "LRU-K writes an object to the SSD only once it has been referenced K
 *     times" and "LRU-K [35] counts references per object"; its analysis (states "referenced at
 *     most about twice", written after their one reuse) depends on that per-object count.
 *   Sec. 5.3 (cache ratio): "LRU-K writes a KV entry evicted from DRAM to the SSD when the
 *     session's K-th most recent entry is still in DRAM".
 *
 * "lru-k" (the default: the reading the paper's own analysis of its figures uses, and O'Neil et
 * al.'s LRU-K, SIGMOD'93, which keeps the last K reference times of each page): DRAM and SSD
 * evict by LRU; an object leaving DRAM is written to SSD when its use count (admission + hits
 * since it entered the cache) is at least k, else dropped. Parameter k (default 2, 1..1000;
 * swept 1..10).
 *
 * "lru-k-session" (Sec. 5.3's sentence): a session's entries are the KV entries its requests
 * leave, one per request: the linear state at the request's boundary for a hybrid model (the
 * object a next turn resumes from), its last chunk for a dense one; the policy remembers each
 * session's last k of them. An object leaving DRAM is written to SSD when its session (the one
 * that created it) has made at least k requests and the entry of its k-th most recent request is
 * still in DRAM; else it is dropped. A request's entry counts from the end of that request (its
 * own evictions judge by the requests before it). k = 1 asks whether the session's latest entry
 * is still in DRAM. Without a session (KV_NO_SESSION, e.g. Mooncake) there is no session
 * history and the per-object count above decides. Both tiers evict by LRU. Parameter k (default
 * 2, 1..64; swept 1..10).
 */
#include <stdlib.h>

#include "kv_policy.h"
#include "u64map.h"
#include "vec.h"

enum { K };
static const struct kv_param lruk_params[] = {
        [K] = {"k", 2, 1, 1000, .help = "uses before an object is worth writing",
               KV_SWEEP(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
        {NULL},
};

static bool lruk_spill(struct kvsim *s, uint32_t o)
{
	return kv_obj_refs(s, o) >= (uint32_t)kv_param(s, K);
}

const struct kv_policy kv_policy_lru_k = {
        .name = "lru-k",
        .params = lruk_params,
        .spill = lruk_spill,
};

/* ---- lru-k-session ---- */

static const struct kv_param lks_params[] = {
        [K] = {"k", 2, 1, 64,
               .help = "write when the session's k-th most recent entry is still in DRAM",
               KV_SWEEP(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)},
        {NULL},
};

struct lks {
	uint32_t k;
	struct u64map sess; /* session id -> its index */
	uint64_t *ring;     /* k entry keys per session: index i's ring is ring[i*k .. i*k+k) */
	uint64_t *count;    /* requests recorded per session */
	uint64_t ringcap, countcap, nsess;
	/* the request in progress: its entry is recorded when the next one begins */
	bool pending;
	uint64_t pend_sess, pend_key;
};

static int lks_init(struct kvsim *s, char *err, size_t errlen)
{
	struct lks *l = calloc(1, sizeof(*l));
	if (!l || u64map_init(&l->sess, 64)) {
		free(l);
		return snprintf(err, errlen, "out of memory"), -1;
	}
	l->k = (uint32_t)kv_param(s, K);
	kv_set_state(s, l);
	return 0;
}

static void lks_fini(struct kvsim *s)
{
	struct lks *l = kv_state(s);
	if (l) {
		u64map_free(&l->sess);
		free(l->ring);
		free(l->count);
	}
	free(l);
	kv_set_state(s, NULL);
}

/* Record (session, key) as the session's most recent entry. */
static void lks_record(struct lks *l, uint64_t session, uint64_t key)
{
	uint64_t i = u64map_get(&l->sess, session);
	if (i == U64MAP_EMPTY) {
		if (vec_reserve(l->ring, l->ringcap, (l->nsess + 1) * l->k) ||
		    vec_reserve(l->count, l->countcap, l->nsess + 1) ||
		    u64map_put(&l->sess, session, l->nsess))
			return; /* out of memory: the session keeps no history (its objects drop) */
		i = l->nsess++;
		l->count[i] = 0;
	}
	l->ring[i * l->k + l->count[i] % l->k] = key;
	l->count[i]++;
}

static void lks_begin(struct kvsim *s)
{
	struct lks *l = kv_state(s);
	const struct kv_request *rq = kv_request_cur(s);
	if (l->pending)
		lks_record(l, l->pend_sess, l->pend_key);
	l->pending = false;
	if (!rq || rq->session == KV_NO_SESSION || !rq->nblocks)
		return;
	if (kv_hybrid(s)) {
		uint32_t bnd = rq->block_tokens ? rq->input_tokens / rq->block_tokens : rq->nblocks;
		if (bnd > rq->nblocks)
			bnd = rq->nblocks;
		if (!bnd)
			return; /* no full block: the request leaves no state */
		l->pend_key = rq->blocks[bnd - 1] | KV_LINEAR_BIT;
	} else {
		l->pend_key = rq->blocks[rq->nblocks - 1];
	}
	l->pend_sess = rq->session;
	l->pending = true;
}

static bool lks_spill(struct kvsim *s, uint32_t o)
{
	struct lks *l = kv_state(s);
	uint64_t session = kv_obj_session(s, o);
	if (session == KV_NO_SESSION)
		return kv_obj_refs(s, o) >= l->k;
	uint64_t i = u64map_get(&l->sess, session);
	if (i == U64MAP_EMPTY || l->count[i] < l->k)
		return false;
	/* the ring holds the last k entries; the k-th most recent is the oldest, next overwritten */
	uint32_t e = kv_lookup(s, l->ring[i * l->k + l->count[i] % l->k]);
	return e != KV_NONE && kv_obj_in_dram(s, e);
}

const struct kv_policy kv_policy_lru_k_session = {
        .name = "lru-k-session",
        .params = lks_params,
        .init = lks_init,
        .fini = lks_fini,
        .begin = lks_begin,
        .spill = lks_spill,
};
