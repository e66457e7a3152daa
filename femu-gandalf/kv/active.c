/*
 * active.c - the peak active KV of a trace for a model: how much KV the cache would have to
 * hold at once to keep everything that is still going to be used.
 *
 * The Gandalf paper sizes its DRAM from this figure ("this DRAM size is chosen to hold less than
 * 1% of the peak active KV cache size of most of the traces", Sec. 5; "at peak, the concurrently
 * active KV-cache working set reaches 8.6 TB", Sec. 2). It does not define it further; ours:
 *   - a full-attention chunk (a block id) is active from the first request that references it
 *     to the last one, inclusive: block_tokens x full_kv_bytes_per_token, counted once however
 *     many sessions share it;
 *   - a linear state (hybrid models): a session holds one, superseded every turn, from its first
 *     request to its last; a request without a session leaves one at its boundary (the last
 *     full block of its input, as the simulator admits it) that stays active until the last
 *     request referencing that block, the last that could extend it.
 * The active bytes during request r are everything that became active at or before r and is
 * still to be used at or after r; the peak is their maximum over the trace. Two passes over the
 * requests in memory, one hash lookup per block reference.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "kvsim.h"
#include "u64map.h"

/* the boundary of rq's state: its last full input block (kvsim_request's bnd), 0 for none */
static uint32_t boundary(const struct kv_request *rq)
{
	uint32_t bnd = rq->block_tokens ? (uint32_t)(rq->input_tokens / rq->block_tokens)
	                                : rq->nblocks;
	return bnd > rq->nblocks ? rq->nblocks : bnd;
}

/* last[id] = the last request referencing block id; lastsess[s] = a session's last request */
static int last_uses(const struct kv_trace *kt, struct u64map *last, struct u64map *lastsess)
{
	for (uint64_t r = 0; r < kt->n; r++) {
		const struct kv_request *rq = &kt->rq[r];
		for (uint32_t i = 0; i < rq->nblocks; i++)
			if (u64map_put(last, rq->blocks[i], r))
				return -1;
		if (rq->session != KV_NO_SESSION && u64map_put(lastsess, rq->session, r))
			return -1;
	}
	return 0;
}

/* first use of key (seen[] marks it): add bytes now, and free them after request `until` */
static int arrive(struct u64map *seen, uint64_t key, uint64_t bytes, uint64_t until,
                  uint64_t *active, uint64_t *leave)
{
	uint64_t before = seen->count;
	if (!u64map_upsert(seen, key, 1))
		return -1;
	if (seen->count != before) {
		*active += bytes;
		leave[until] += bytes;
	}
	return 0;
}

static int sweep(const struct kv_trace *kt, const struct kv_model *m, struct u64map *last,
                 struct u64map *lastsess, uint64_t *leave, struct kv_active *a)
{
	struct u64map seen = {0}, seensess = {0};
	uint64_t active = 0, state = m->linear_state_bytes;
	int rc = -1;
	double sum = 0;
	for (uint64_t r = 0; r < kt->n; r++) {
		const struct kv_request *rq = &kt->rq[r];
		uint64_t chunk = (uint64_t)rq->block_tokens * m->full_kv_bytes_per_token;
		for (uint32_t i = 0; i < rq->nblocks; i++)
			if (arrive(&seen, rq->blocks[i], chunk, u64map_get(last, rq->blocks[i]),
			           &active, leave))
				goto out;
		uint32_t bnd = boundary(rq);
		if (state && rq->session != KV_NO_SESSION) {
			if (arrive(&seensess, rq->session, state, u64map_get(lastsess, rq->session),
			           &active, leave))
				goto out;
		} else if (state && bnd) {
			active += state;
			leave[u64map_get(last, rq->blocks[bnd - 1])] += state;
		}
		if (active > a->peak_bytes) {
			a->peak_bytes = active;
			a->peak_req = r;
			a->peak_t = rq->t;
		}
		sum += (double)active;
		active -= leave[r];
	}
	a->mean_bytes = kt->n ? sum / (double)kt->n : 0;
	rc = 0;
out:
	u64map_free(&seen);
	u64map_free(&seensess);
	return rc;
}

int kv_active_peak(const struct kv_trace *kt, const struct kv_model *m, struct kv_active *a,
                   char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	struct u64map last = {0}, lastsess = {0};
	uint64_t *leave = calloc(kt->n ? kt->n : 1, sizeof(*leave));
	int rc = -1;
	if (leave && !u64map_init(&last, kt->nids / 4 + 16) && !u64map_init(&lastsess, 64) &&
	    !last_uses(kt, &last, &lastsess) && !sweep(kt, m, &last, &lastsess, leave, a))
		rc = 0;
	free(leave);
	u64map_free(&last);
	u64map_free(&lastsess);
	return rc ? fg_err(err, errlen, "out of memory computing the peak active KV") : 0;
}
