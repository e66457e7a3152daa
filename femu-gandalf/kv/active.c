/*
 * active.c - the peak active KV of a trace for a model: how much KV the cache would have to
 * hold at once to keep everything that is still going to be used.
 *
 * The Gandalf paper sizes its DRAM from this figure ("this DRAM size is chosen to hold less than
 * 1% of the peak active KV cache size of most of the traces", Sec. 5; "at peak, the concurrently
 * active KV-cache working set reaches 8.6 TB", Sec. 2). It does not define it further; ours:
 *   - a full-attention chunk (a block id) is active from the first request that references it
 *     to the last one, inclusive: block_tokens x full_kv_bytes_per_token (of its first
 *     request), counted once however many sessions share it;
 *   - a linear state (hybrid models): a session holds one, superseded every turn, from its first
 *     request to its last; a request without a session leaves one at its boundary (the last
 *     full block of its input, as the simulator admits it) that stays active until the last
 *     request referencing that block, the last that could extend it.
 * The active bytes during request r are everything that became active at or before r and is
 * still to be used at or after r; the peak is their maximum over the trace.
 *
 * Every kv run and every job a sweep emits computes it, so it is made cheap. A conversation
 * resends its history each turn (the WEKA subset: 18.5 M block references, 675 K distinct ids;
 * AIPerf-style traces rehash the last, partial block when a turn extends it, so a turn keeps
 * all but its predecessor's last id). So references are grouped before they are hashed: a turn
 * that keeps the first k ids of its session's previous turn continues that turn's "slots" at
 * positions 0..k-1, and a slot (one id at one position over consecutive turns) is folded into
 * the id's first and last use once, when it ends. Finding k compares ids in order, far cheaper
 * than a hash lookup; a request without a session is its own slot per id. tests/test_kv.c holds
 * the result to a per-reference count on random traces.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kvsim.h"
#include "u64map.h"
#include "vec.h"

/* the boundary of rq's state: its last full input block (kvsim_request's bnd), 0 for none */
static uint32_t boundary(const struct kv_request *rq)
{
	uint32_t bnd = rq->block_tokens ? (uint32_t)(rq->input_tokens / rq->block_tokens)
	                                : rq->nblocks;
	return bnd > rq->nblocks ? rq->nblocks : bnd;
}

/* a session's turns so far */
struct chain {
	uint64_t first, last; /* its first and its latest request */
	uint64_t *opened;     /* per position of last's ids: the request that opened its slot */
	uint64_t cap;
};

struct peak {
	const struct kv_trace *kt;
	struct u64map ids;            /* block id -> index in first/last */
	uint64_t *first, *last, nid, fcap, lcap;
	struct u64map sess;           /* session -> index in chains */
	struct chain *chains;
	uint64_t nchains, ccap;
	uint64_t *arrive, *leave;     /* per request: chunk bytes becoming active, leaving after it */
};

/* A slot ended: id was used from request from to request to. 0, or -1 (out of memory). */
static int slot_end(struct peak *p, uint64_t id, uint64_t from, uint64_t to)
{
	uint64_t *e = u64map_upsert(&p->ids, id, p->nid);
	if (!e)
		return -1;
	if (*e == p->nid) {
		if (vec_reserve(p->first, p->fcap, p->nid + 1) ||
		    vec_reserve(p->last, p->lcap, p->nid + 1))
			return -1;
		p->first[p->nid] = from;
		p->last[p->nid++] = to;
		return 0;
	}
	if (from < p->first[*e])
		p->first[*e] = from;
	if (to > p->last[*e])
		p->last[*e] = to;
	return 0;
}

/* End the slots of c's latest turn from position k on. 0, or -1. */
static int chain_cut(struct peak *p, const struct chain *c, uint32_t k)
{
	const struct kv_request *rq = &p->kt->rq[c->last];
	for (uint32_t i = k; i < rq->nblocks; i++)
		if (slot_end(p, rq->blocks[i], c->opened[i], c->last))
			return -1;
	return 0;
}

/* Request r joins its session's chain: the ids it keeps from the previous turn continue their
 * slots, the previous turn's others end, its own new ones open. 0, or -1. */
static int chain_turn(struct peak *p, uint64_t r)
{
	const struct kv_request *rq = &p->kt->rq[r];
	uint64_t *e = u64map_upsert(&p->sess, rq->session, p->nchains);
	if (!e)
		return -1;
	if (*e == p->nchains) {
		if (vec_reserve(p->chains, p->ccap, p->nchains + 1))
			return -1;
		p->chains[p->nchains++] = (struct chain){.first = r, .last = UINT64_MAX};
	}
	struct chain *c = &p->chains[*e];
	uint32_t k = 0;
	if (c->last != UINT64_MAX) {
		const struct kv_request *prev = &p->kt->rq[c->last];
		k = kv_ids_kept(prev->blocks, prev->nblocks, rq->blocks, rq->nblocks);
		if (chain_cut(p, c, k))
			return -1;
	}
	if (vec_reserve(c->opened, c->cap, rq->nblocks))
		return -1;
	for (uint32_t i = k; i < rq->nblocks; i++)
		c->opened[i] = r;
	c->last = r;
	return 0;
}

/* Every id's first and last use, then the bytes its chunk brings at the first and takes away
 * after the last. 0, or -1 (out of memory). */
static int uses(struct peak *p, const struct kv_model *m)
{
	const struct kv_trace *kt = p->kt;
	if (u64map_init(&p->ids, kt->nids / 16 + 16) || u64map_init(&p->sess, 64))
		return -1;
	for (uint64_t r = 0; r < kt->n; r++) {
		const struct kv_request *rq = &kt->rq[r];
		if (rq->session != KV_NO_SESSION) {
			if (chain_turn(p, r))
				return -1;
			continue;
		}
		for (uint32_t i = 0; i < rq->nblocks; i++)
			if (slot_end(p, rq->blocks[i], r, r))
				return -1;
	}
	for (uint64_t i = 0; i < p->nchains; i++)
		if (chain_cut(p, &p->chains[i], 0))
			return -1;
	for (uint64_t i = 0; i < p->nid; i++) {
		uint64_t chunk = (uint64_t)kt->rq[p->first[i]].block_tokens * m->full_kv_bytes_per_token;
		p->arrive[p->first[i]] += chunk;
		p->leave[p->last[i]] += chunk;
	}
	return 0;
}

/* The walk over the requests: chunks arrive and leave as uses() said, states as the sessions
 * (or the boundaries) say. */
static void sweep(struct peak *p, const struct kv_model *m, struct kv_active *a)
{
	const struct kv_trace *kt = p->kt;
	uint64_t active = 0, state = m->linear_state_bytes;
	double sum = 0;
	for (uint64_t r = 0; r < kt->n; r++) {
		const struct kv_request *rq = &kt->rq[r];
		active += p->arrive[r];
		uint32_t bnd = boundary(rq);
		if (state && rq->session != KV_NO_SESSION) {
			const struct chain *c = &p->chains[u64map_get(&p->sess, rq->session)];
			if (c->first == r) {
				active += state;
				p->leave[c->last] += state;
			}
		} else if (state && bnd) {
			active += state;
			p->leave[p->last[u64map_get(&p->ids, rq->blocks[bnd - 1])]] += state;
		}
		if (active > a->peak_bytes) {
			a->peak_bytes = active;
			a->peak_req = r;
			a->peak_t = rq->t;
		}
		sum += (double)active;
		active -= p->leave[r];
	}
	a->mean_bytes = kt->n ? sum / (double)kt->n : 0;
}

int kv_active_peak(const struct kv_trace *kt, const struct kv_model *m, struct kv_active *a,
                   char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	struct peak p = {.kt = kt};
	p.arrive = calloc(kt->n ? kt->n : 1, sizeof(uint64_t));
	p.leave = calloc(kt->n ? kt->n : 1, sizeof(uint64_t));
	int rc = p.arrive && p.leave && !uses(&p, m) ? 0 : -1;
	if (!rc)
		sweep(&p, m, a);
	for (uint64_t i = 0; i < p.nchains; i++)
		free(p.chains[i].opened);
	free(p.chains);
	free(p.first);
	free(p.last);
	free(p.arrive);
	free(p.leave);
	u64map_free(&p.ids);
	u64map_free(&p.sess);
	return rc ? fg_err(err, errlen, "out of memory computing the peak active KV") : 0;
}
