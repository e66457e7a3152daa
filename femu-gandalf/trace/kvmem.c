/*
 * kvmem.c - a whole KV-request trace in memory.
 *
 * The KV simulator replays one trace many times: every policy of --policy all, every point of a
 * sweep, --loop passes, and the oracle's pre-pass over the future. Parsing JSON costs more than
 * simulating LRU, so the trace is parsed once into two arrays (the requests, and all their block
 * ids back to back) and replayed from there. The WEKA subset (8,853 requests, 18.5 M block ids)
 * takes about 150 MB.
 */
#include <stdlib.h>
#include <string.h>

#include "trace.h"

int kv_trace_load(const char *path, const struct trace_opts *o, struct kv_trace *kt, char *err, size_t errlen)
{
	uint64_t rcap = 0, icap = 0;
	memset(kt, 0, sizeof(*kt));
	struct trace *t = trace_open(path, o, err, errlen);
	if (!t)
		return -1;
	if (trace_is_block(t)) {
		snprintf(err, errlen, "%s: a block trace; kv needs a KV-request trace (use blkreplay)", path);
		goto fail;
	}
	struct kv_request rq;
	int r;
	while ((r = trace_next_kv(t, &rq)) == 1) {
		if (kt->n == rcap) {
			rcap = rcap ? 2 * rcap : 1024;
			struct kv_request *n = realloc(kt->rq, rcap * sizeof(*n));
			if (!n)
				goto oom;
			kt->rq = n;
		}
		if (kt->nids + rq.nblocks > icap) {
			while (kt->nids + rq.nblocks > icap)
				icap = icap ? 2 * icap : 1 << 16;
			uint64_t *n = realloc(kt->ids, icap * sizeof(*n));
			if (!n)
				goto oom;
			kt->ids = n;
		}
		if (rq.nblocks)
			memcpy(kt->ids + kt->nids, rq.blocks, rq.nblocks * sizeof(uint64_t));
		rq.blocks = NULL; /* an offset until the ids stop moving (below) */
		kt->rq[kt->n++] = rq;
		kt->nids += rq.nblocks;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s", trace_error(t));
		goto fail;
	}
	trace_close(t);
	for (uint64_t i = 0, off = 0; i < kt->n; off += kt->rq[i++].nblocks)
		kt->rq[i].blocks = kt->ids + off;
	return 0;
oom:
	snprintf(err, errlen, "%s: out of memory after %llu requests", path, (unsigned long long)kt->n);
fail:
	trace_close(t);
	kv_trace_free(kt);
	return -1;
}

void kv_trace_free(struct kv_trace *kt)
{
	free(kt->rq);
	free(kt->ids);
	memset(kt, 0, sizeof(*kt));
}
