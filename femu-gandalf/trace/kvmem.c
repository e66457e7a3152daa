/*
 * kvmem.c - a whole KV-request trace in memory.
 *
 * The KV simulator replays one trace many times: every policy of --policy all, every point of a
 * sweep, --loop passes, and the oracle's pre-pass over the future. Parsing JSON costs more than
 * simulating LRU, so the trace is parsed once and replayed from memory.
 *
 * Agentic and multi-turn traces resend the whole conversation each turn, so most block ids are
 * repeats: the WEKA subset has 18.5 M ids in 8,853 requests. A request whose ids extend (or
 * repeat the start of) its session's previous ids shares that session's buffer; only the new tail
 * is stored. Requests without a session, or that diverge from it, start a buffer of their own
 * (sessionless requests share one append-only buffer). Every request's ids then lie at some
 * offset of one buffer, which is fixed up into a pointer once no buffer moves any more.
 */
#include <stdlib.h>
#include <string.h>

#include "trace.h"
#include "u64map.h"
#include "vec.h"

struct buf {
	uint64_t *ids;
	uint64_t n, cap;
};

struct loader {
	struct buf *bufs;
	uint32_t nbufs;
	uint64_t bufcap;
	struct u64map sess; /* session -> its current buffer */
	uint32_t *where; /* per request: its buffer (the offset sits in rq.blocks meanwhile) */
};

static int buf_new(struct loader *l)
{
	if (l->nbufs == UINT32_MAX - 1 || vec_reserve(l->bufs, l->bufcap, (uint64_t)l->nbufs + 1))
		return -1;
	l->bufs[l->nbufs] = (struct buf){0};
	return (int)l->nbufs++;
}

static int buf_append(struct buf *b, const uint64_t *ids, uint64_t n)
{
	if (vec_reserve(b->ids, b->cap, b->n + n))
		return -1;
	memcpy(b->ids + b->n, ids, n * sizeof(*ids));
	b->n += n;
	return 0;
}

/* Store rq's ids: returns the buffer, with the offset in *off; -1 when out of memory. */
static int store(struct loader *l, const struct kv_request *rq, uint64_t *off)
{
	if (rq->session == KV_NO_SESSION) {
		if (!l->nbufs && buf_new(l) < 0) /* buffer 0: the sessionless requests */
			return -1;
		*off = l->bufs[0].n;
		return buf_append(&l->bufs[0], rq->blocks, rq->nblocks) ? -1 : 0;
	}
	if (!l->nbufs && buf_new(l) < 0)
		return -1;
	/* the session's buffer (UINT32_MAX when new); valid until the next insertion */
	uint64_t *e = u64map_upsert(&l->sess, rq->session, UINT32_MAX);
	if (!e)
		return -1;
	*off = 0;
	if (*e != UINT32_MAX) {
		struct buf *b = &l->bufs[*e];
		uint64_t same = rq->nblocks < b->n ? rq->nblocks : b->n;
		if (!memcmp(b->ids, rq->blocks, same * sizeof(uint64_t))) {
			if (rq->nblocks > b->n && buf_append(b, rq->blocks + b->n, rq->nblocks - b->n))
				return -1;
			return (int)*e;
		}
	}
	int nb = buf_new(l);
	if (nb < 0 || buf_append(&l->bufs[nb], rq->blocks, rq->nblocks))
		return -1;
	*e = (uint32_t)nb;
	return nb;
}

/* A trace without sessions (Mooncake) has no conversations to deal out: its fold I of K is the
 * I-th of K equal spans of its time instead (the reader kept every request). Requests keep their
 * times; their ids stay in the buffers. */
static void time_fold(struct kv_trace *kt, const struct trace_opts *o)
{
	if (!o->folds || !kt->n)
		return;
	for (uint64_t i = 0; i < kt->n; i++)
		if (kt->rq[i].session != KV_NO_SESSION)
			return; /* (dealt out by session in the reader) */
	double t0 = kt->rq[0].t, span = kt->rq[kt->n - 1].t - t0;
	uint64_t m = 0;
	for (uint64_t i = 0; i < kt->n; i++) {
		double x = span > 0 ? (kt->rq[i].t - t0) / span * o->folds : 0;
		uint32_t f = x >= o->folds ? o->folds : (uint32_t)x + 1;
		if (f == o->fold)
			kt->rq[m++] = kt->rq[i];
	}
	kt->n = m;
	kt->nids = 0;
	for (uint64_t i = 0; i < m; i++)
		kt->nids += kt->rq[i].nblocks;
}

int kv_trace_load(const char *path, const struct trace_opts *o, struct kv_trace *kt, char *err, size_t errlen)
{
	struct loader l = {0};
	uint64_t rcap = 0, wcap = 0;
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
		if (vec_reserve(kt->rq, rcap, kt->n + 1) || vec_reserve(l.where, wcap, kt->n + 1))
			goto oom;
		uint64_t off;
		int b = store(&l, &rq, &off);
		if (b < 0)
			goto oom;
		l.where[kt->n] = (uint32_t)b;
		rq.blocks = (const uint64_t *)(uintptr_t)off; /* a pointer once the buffers stop moving */
		kt->rq[kt->n++] = rq;
		kt->nids += rq.nblocks;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s", trace_error(t));
		goto fail;
	}
	kt->skipped = trace_skipped(t);
	if (kt->skipped)
		snprintf(kt->skipped_last, sizeof(kt->skipped_last), "%s", trace_error(t));
	trace_close(t);
	for (uint64_t i = 0; i < kt->n; i++)
		kt->rq[i].blocks = l.bufs[l.where[i]].ids + (uintptr_t)kt->rq[i].blocks;
	kt->bufs = malloc((l.nbufs + 1) * sizeof(*kt->bufs));
	kt->buflen = malloc((l.nbufs + 1) * sizeof(*kt->buflen));
	if (!kt->bufs || !kt->buflen) {
		free(kt->bufs);
		free(kt->buflen);
		t = NULL;
		goto oom;
	}
	for (uint32_t i = 0; i < l.nbufs; i++) {
		kt->bufs[i] = l.bufs[i].ids;
		kt->buflen[i] = l.bufs[i].n;
		kt->stored += l.bufs[i].n;
	}
	kt->nbufs = l.nbufs;
	free(l.bufs);
	u64map_free(&l.sess);
	free(l.where);
	time_fold(kt, o);
	return 0;
oom:
	snprintf(err, errlen, "%s: out of memory after %llu requests", path, (unsigned long long)kt->n);
fail:
	trace_close(t);
	for (uint32_t i = 0; i < l.nbufs; i++)
		free(l.bufs[i].ids);
	free(l.bufs);
	u64map_free(&l.sess);
	free(l.where);
	free(kt->rq);
	memset(kt, 0, sizeof(*kt));
	return -1;
}

void kv_trace_free(struct kv_trace *kt)
{
	for (uint64_t i = 0; i < kt->nbufs; i++)
		free(kt->bufs[i]);
	free(kt->bufs);
	free(kt->buflen);
	free(kt->rq);
	memset(kt, 0, sizeof(*kt));
}
