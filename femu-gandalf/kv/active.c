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
 * Every kv run and every job a sweep emits computes it, so it is made cheap. An agentic trace
 * resends its conversation each turn (the WEKA subset: 18.5 M block references, 675 K distinct
 * ids), and the in-memory trace stores a session's ids once, each request pointing at a prefix of
 * them (kvmem.c). So the first and last use are found per stored id (a "slot": one place in
 * memory, whatever number of requests point at it), not per reference: the requests' id ranges
 * are laid out in one index space (ranges that overlap in memory share their slots), then a pass
 * from the last request back gives every slot to the last request covering it, skipping the
 * slots already given (a "next free slot" union-find: each slot is given once), and a pass from
 * the first request gives the first. One hash lookup per slot then folds the slots into ids. A
 * trace built by hand, each request with its own array, has as many slots as references and
 * costs what a per-reference count would. tests/test_kv.c holds the result to a per-reference
 * count on random traces with shared, overlapping and repeated ids.
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

/* what the passes share; every array is freed by peak_free() */
struct peak {
	const struct kv_trace *kt;
	uint64_t nslots;
	uint64_t *first_slot; /* per request: the index of its blocks[0] (meaningless if none) */
	uint64_t *slot_id;    /* per slot: its block id */
	uint64_t *slot_first, *slot_last; /* per slot: the first and the last request using it */
	uint64_t *next;       /* the union-find: the first slot >= i not yet given (nslots + 1) */
	uint64_t *first, *last; /* per distinct id (the value in ids) */
	struct u64map ids;      /* block id -> its index in first/last */
	uint64_t *arrive, *leave; /* per request: chunk bytes that become active / stop being */
};

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct kv_request *const *)a)[0]->blocks;
	uintptr_t y = (uintptr_t)((const struct kv_request *const *)b)[0]->blocks;
	return x < y ? -1 : x > y;
}

/* Lay the requests' id ranges out in one index space: sorted by address, ranges that overlap
 * (or touch) in memory become one run of slots. 0, or -1 when out of memory. */
static int lay_out(struct peak *p)
{
	const struct kv_trace *kt = p->kt;
	const struct kv_request **by = malloc((kt->n ? kt->n : 1) * sizeof(*by));
	if (!by)
		return -1;
	uint64_t m = 0;
	for (uint64_t r = 0; r < kt->n; r++)
		if (kt->rq[r].nblocks)
			by[m++] = &kt->rq[r];
	qsort(by, m, sizeof(*by), by_address);
	uintptr_t start = 0, end = 0; /* the run being laid out: [start, end) */
	uint64_t base = 0;            /* its first slot */
	for (uint64_t k = 0; k < m; k++) {
		uintptr_t a = (uintptr_t)by[k]->blocks;
		uintptr_t b = (uintptr_t)(by[k]->blocks + by[k]->nblocks);
		if (k == 0 || a > end) { /* a new run */
			base += (end - start) / sizeof(uint64_t);
			start = a;
			end = b;
		} else if (b > end) {
			end = b;
		}
		p->first_slot[by[k] - kt->rq] = base + (a - start) / sizeof(uint64_t);
	}
	p->nslots = base + (end - start) / sizeof(uint64_t);
	free(by);
	return 0;
}

static uint64_t next_free(uint64_t *next, uint64_t x)
{
	while (next[x] != x) {
		next[x] = next[next[x]]; /* (path halving) */
		x = next[x];
	}
	return x;
}

/* use[slot] = the last (backward) or the first request whose ids cover the slot */
static void give_slots(struct peak *p, uint64_t *use, bool backward)
{
	const struct kv_trace *kt = p->kt;
	for (uint64_t i = 0; i <= p->nslots; i++)
		p->next[i] = i;
	for (uint64_t k = 0; k < kt->n; k++) {
		uint64_t r = backward ? kt->n - 1 - k : k;
		uint64_t lo = p->first_slot[r], hi = lo + kt->rq[r].nblocks;
		if (lo == hi)
			continue;
		for (uint64_t x = next_free(p->next, lo); x < hi; x = next_free(p->next, x + 1)) {
			use[x] = r;
			p->slot_id[x] = kt->rq[r].blocks[x - lo];
			p->next[x] = x + 1;
		}
	}
}

/* Slots into ids: an id's first use is its slots' earliest, its last their latest; then each
 * id's chunk bytes arrive at its first use and leave after its last. 0, or -1 (out of memory). */
static int fold_ids(struct peak *p, const struct kv_model *m)
{
	const struct kv_trace *kt = p->kt;
	if (u64map_init(&p->ids, p->nslots / 2 + 16))
		return -1;
	uint64_t n = 0;
	for (uint64_t x = 0; x < p->nslots; x++) {
		uint64_t *e = u64map_upsert(&p->ids, p->slot_id[x], n);
		if (!e)
			return -1;
		if (*e == n) {
			p->first[n] = p->slot_first[x];
			p->last[n++] = p->slot_last[x];
			continue;
		}
		if (p->slot_first[x] < p->first[*e])
			p->first[*e] = p->slot_first[x];
		if (p->slot_last[x] > p->last[*e])
			p->last[*e] = p->slot_last[x];
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t chunk = (uint64_t)kt->rq[p->first[i]].block_tokens * m->full_kv_bytes_per_token;
		p->arrive[p->first[i]] += chunk;
		p->leave[p->last[i]] += chunk;
	}
	return 0;
}

/* The walk over the requests: chunks arrive and leave as fold_ids() said, states as the
 * sessions (or the boundaries) say. 0, or -1 (out of memory). */
static int sweep(struct peak *p, const struct kv_model *m, struct kv_active *a)
{
	const struct kv_trace *kt = p->kt;
	struct u64map lastsess = {0}, seensess = {0};
	uint64_t active = 0, state = m->linear_state_bytes;
	int rc = -1;
	double sum = 0;
	for (uint64_t r = 0; state && r < kt->n; r++)
		if (kt->rq[r].session != KV_NO_SESSION && u64map_put(&lastsess, kt->rq[r].session, r))
			goto out;
	for (uint64_t r = 0; r < kt->n; r++) {
		const struct kv_request *rq = &kt->rq[r];
		active += p->arrive[r];
		uint32_t bnd = boundary(rq);
		if (state && rq->session != KV_NO_SESSION) {
			uint64_t before = seensess.count;
			if (!u64map_upsert(&seensess, rq->session, 1))
				goto out;
			if (seensess.count != before) {
				active += state;
				p->leave[u64map_get(&lastsess, rq->session)] += state;
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
	rc = 0;
out:
	u64map_free(&lastsess);
	u64map_free(&seensess);
	return rc;
}

static void peak_free(struct peak *p)
{
	free(p->first_slot);
	free(p->slot_id);
	free(p->slot_first);
	free(p->slot_last);
	free(p->next);
	free(p->first);
	free(p->last);
	free(p->arrive);
	free(p->leave);
	u64map_free(&p->ids);
}

int kv_active_peak(const struct kv_trace *kt, const struct kv_model *m, struct kv_active *a,
                   char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	uint64_t n = kt->n ? kt->n : 1;
	struct peak p = {.kt = kt};
	int rc = -1;
	p.first_slot = malloc(n * sizeof(uint64_t));
	p.arrive = calloc(n, sizeof(uint64_t));
	p.leave = calloc(n, sizeof(uint64_t));
	if (!p.first_slot || !p.arrive || !p.leave || lay_out(&p))
		goto out;
	uint64_t s = p.nslots ? p.nslots : 1;
	p.slot_id = malloc(s * sizeof(uint64_t));
	p.slot_first = malloc(s * sizeof(uint64_t));
	p.slot_last = malloc(s * sizeof(uint64_t));
	p.next = malloc((s + 1) * sizeof(uint64_t));
	p.first = malloc(s * sizeof(uint64_t));
	p.last = malloc(s * sizeof(uint64_t));
	if (!p.slot_id || !p.slot_first || !p.slot_last || !p.next || !p.first || !p.last)
		goto out;
	give_slots(&p, p.slot_last, true);
	give_slots(&p, p.slot_first, false);
	if (!fold_ids(&p, m) && !sweep(&p, m, a))
		rc = 0;
out:
	peak_free(&p);
	return rc ? fg_err(err, errlen, "out of memory computing the peak active KV") : 0;
}
