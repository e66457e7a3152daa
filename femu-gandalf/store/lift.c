/*
 * lift.c - a block trace of a KV store back to KV requests (lift.h, docs/lift.md).
 *
 * Four passes over the I/O, in trace order:
 *   1. the layout: rawblock puts are a 4 KiB header write followed by the payload write right
 *      after it; the metadata region ends where the lowest put starts (or at --meta), and every
 *      other write below it is a checkpoint; the slot sizes are the puts' sizes (one or two
 *      classes: with two, the larger is the linear state unless --slot says otherwise);
 *   2. objects: a slot's write starts a new object (slot and version), a read uses the slot's
 *      current object, a discard ends it; a write that straddles a slot, or a read that does not
 *      match one, means this is not a capture of the layout: an error;
 *   3. requests: cut at the capture mode's fences (else before a read that cannot continue the
 *      current chain, or that follows its writes); a chunk written extends the chain below the
 *      chunk before it, a chunk read must continue it; a state hangs off the chunk before it;
 *   4. sessions: a request continues the session whose last request ended where this one's
 *      cached prefix ends (the state's chunk, or the last full chunk); else it starts one.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "json.h"
#include "kvsim.h"
#include "lift.h"
#include "u64map.h"
#include "vec.h"

#define SECTOR ((uint64_t)512)
#define NONE UINT64_MAX

struct lobj {
	uint64_t slot, parent; /* parent: the chunk it hangs below (NONE: a root) */
	uint8_t kind;
	bool read_later; /* read by a request after its writer's */
	uint64_t writer; /* the request that wrote it (NONE: before the capture) */
};

struct lev {
	uint64_t t_ns, obj;
	char op; /* R, W, F */
};

struct lreq {
	uint64_t t_ns, c0, n, nread; /* chain: pool[c0 .. c0 + n), the first nread read */
	int64_t bnd;                 /* chunks below its state (-1: no state I/O) */
	uint64_t session;
	bool wrote;
	/* demultiplexing: the chain's tip, where its last chunk's slot ends, its last event */
	uint64_t tip, front, act;
	uint64_t sslot, after_state; /* no fences: its state's slot (NONE), chunks written after it */
	bool uncertain; /* demux: one of its I/Os was given to it among several candidates */
	uint32_t *chain; /* demux: its chunks, until they move to the pool */
	uint64_t nchain, chaincap;
};

struct lift {
	const struct lift_opts *o;
	struct lift_result *r;
	struct blk_io *io;
	uint64_t nio, iocap;
	bool *is_put; /* rawblock: io[i] is a put's header (io[i + 1] its payload) */
	struct lobj *obj;
	uint64_t nobj, objcap;
	struct lev *ev;
	uint64_t nev, evcap;
	struct lreq *rq;
	uint64_t nrq, rqcap;
	uint64_t *pool;
	uint64_t npool, poolcap;
	GTree *slots; /* slot offset -> struct slotent */
	uint64_t hdr; /* rawblock: 4 KiB header; kvbm, vllm-disk: 0 */
	bool demux;   /* interleaved requests: attribute each I/O to one of several open ones */
	/* demux: every put's slot, sorted, with its object and event index */
	struct wslot {
		uint64_t off, obj, ev;
	} * wslot;
	uint64_t nwslot;
};

struct slotent {
	uint64_t off, bytes, obj; /* obj: NONE when the slot holds nothing (discarded) */
};

static gint cmp_u64(gconstpointer a, gconstpointer b, gpointer u)
{
	(void)u;
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static void warn(struct lift *L, uint64_t *count, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(struct lift *L, uint64_t *count, const char *fmt, ...)
{
	if (!L->r->first_warning[0]) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(L->r->first_warning, sizeof(L->r->first_warning), fmt, ap);
		va_end(ap);
	}
	(*count)++;
}

static int io_name(char *b, size_t n, uint64_t i, const struct blk_io *io)
{
	return snprintf(b, n, "I/O #%" PRIu64 " (%c at byte %" PRIu64 ", %" PRIu64 " bytes)", i + 1,
	                io->op, io->lba * SECTOR, io->bytes);
}

/* A warning about I/O i: only the first is described, so the name is made only then (this runs
 * once per I/O of a capture). */
static void warn_io(struct lift *L, uint64_t *count, uint64_t i, const char *what)
{
	if (!L->r->first_warning[0]) {
		char d[160];
		io_name(d, sizeof(d), i, &L->io[i]);
		warn(L, count, "%s: %s", d, what);
	} else
		(*count)++;
}

/* ---- 1. the layout ---- */

/* The puts (is_put[]), the lowest put's offset and the slot sizes (at most two). */
static int find_puts(struct lift *L, uint64_t *minput, uint64_t sizes[2], uint64_t *ns,
                     char *err, size_t errlen)
{
	*minput = NONE;
	*ns = 0;
	L->is_put = calloc(L->nio ? L->nio : 1, sizeof(bool));
	if (!L->is_put)
		return fg_err(err, errlen, "out of memory");
	for (uint64_t i = 0; i < L->nio; i++) {
		const struct blk_io *a = &L->io[i];
		if (a->op != 'W')
			continue;
		uint64_t off = a->lba * SECTOR, slot = a->bytes;
		if (L->hdr) {
			const struct blk_io *b = i + 1 < L->nio ? &L->io[i + 1] : NULL;
			if (a->bytes != L->hdr || !b || b->op != 'W' || b->lba * SECTOR != off + L->hdr)
				continue;
			slot = L->hdr + b->bytes;
			L->is_put[i++] = true;
		} else
			L->is_put[i] = true;
		if (off < *minput)
			*minput = off;
		uint64_t k = 0;
		while (k < *ns && sizes[k] != slot)
			k++;
		if (k < *ns)
			continue;
		if (*ns == 2)
			return fg_err(err, errlen,
			              "more than two slot sizes (%" PRIu64 ", %" PRIu64 ", %" PRIu64
			              " bytes, ...): not a %s capture with one size class per object "
			              "kind (wrong --layout?)",
			              sizes[0], sizes[1], slot, store_layout_name(L->o->layout));
		sizes[(*ns)++] = slot;
	}
	if (*minput == NONE)
		return fg_err(err, errlen, "no object writes%s: not a %s capture (wrong --layout?)",
		              L->hdr ? " (a 4 KiB header write followed by its payload)" : "",
		              store_layout_name(L->o->layout));
	return 0;
}

/* rawblock: the metadata region ends at the lowest put, or at twice the second checkpoint
 * copy's offset, the better witness when the first slot's put was lost (its header then lies
 * below the first put seen). */
static int find_meta(struct lift *L, uint64_t minput, char *err, size_t errlen)
{
	const struct lift_opts *o = L->o;
	struct lift_result *r = L->r;
	r->meta_inferred = !o->meta_bytes;
	r->meta_bytes = o->meta_bytes ? o->meta_bytes : minput;
	uint64_t c2 = 0;
	for (uint64_t i = 0; i < L->nio && !o->meta_bytes; i++) {
		const struct blk_io *a = &L->io[i];
		uint64_t off = a->lba * SECTOR;
		if (a->op == 'W' && !L->is_put[i] && off > c2 && off % STORE_ALIGN == 0 &&
		    2 * off <= minput)
			c2 = off;
		i += L->is_put[i] && L->hdr; /* skip the payload */
	}
	if (c2)
		r->meta_bytes = 2 * c2;
	if (minput < r->meta_bytes)
		return fg_err(err, errlen,
		              "a put at byte %" PRIu64 " lies inside the %" PRIu64
		              "-byte metadata region (--meta too large?)",
		              minput, r->meta_bytes);
	return 0;
}

/* The size classes (the larger is the state, unless --slot says), and tokens per block. */
static int find_classes(struct lift *L, uint64_t sizes[2], uint64_t ns, char *err,
                        size_t errlen)
{
	const struct lift_opts *o = L->o;
	struct lift_result *r = L->r;
	if (ns == 2 && sizes[0] > sizes[1]) {
		uint64_t t = sizes[0];
		sizes[0] = sizes[1];
		sizes[1] = t;
	}
	r->nclasses = ns;
	r->slot_inferred = !o->slot[0];
	for (uint64_t k = 0; k < ns && o->slot[0]; k++)
		if (sizes[k] != o->slot[0] && sizes[k] != o->slot[1])
			return fg_err(err, errlen,
			              "the capture has %" PRIu64 "-byte slots, which --slot does not "
			              "name",
			              sizes[k]);
	r->slot[0] = o->slot[0] ? o->slot[0] : sizes[0];
	r->slot[1] = o->slot[0] ? o->slot[1] : ns == 2 ? sizes[1] : 0;
	r->block_tokens = o->block_tokens;
	if (r->block_tokens)
		return 0;
	uint64_t pay = r->slot[0] - L->hdr;
	if (!o->have_model || !o->bytes_per_token)
		return fg_err(err, errlen,
		              "give --block-tokens N, or --model M to derive it from the chunk slot");
	if (pay % o->bytes_per_token || pay / o->bytes_per_token > UINT32_MAX)
		return fg_err(err, errlen,
		              "a chunk's %" PRIu64 " bytes are not a whole number of the model's "
		              "%" PRIu64 " bytes per token: give --block-tokens",
		              pay, o->bytes_per_token);
	r->block_tokens = (uint32_t)(pay / o->bytes_per_token);
	return 0;
}

/* vllm-disk: every put starts on the chunk slot's grid, and none in slot 0 (BlockPool's null
 * block, never written). */
static int check_vllm_grid(struct lift *L, char *err, size_t errlen)
{
	uint64_t slot = L->r->slot[0];
	for (uint64_t i = 0; i < L->nio; i++) {
		uint64_t off = L->io[i].lba * SECTOR;
		if (!L->is_put[i] || (off % slot == 0 && off >= slot))
			continue;
		return fg_err(err, errlen,
		              "a %" PRIu64 "-byte write at byte %" PRIu64 " %s: not a vllm-disk "
		              "capture with %" PRIu64 "-byte slots (wrong --layout or --slot?)",
		              L->io[i].bytes, off,
		              off < slot ? "lies in slot 0, vLLM's null block, which it never writes"
		                         : "is off the slot grid",
		              slot);
	}
	return 0;
}

static int find_layout(struct lift *L, char *err, size_t errlen)
{
	uint64_t minput, sizes[2] = {0}, ns;
	if (find_puts(L, &minput, sizes, &ns, err, errlen) ||
	    (L->o->layout == STORE_LMCACHE_RAWBLOCK && find_meta(L, minput, err, errlen)) ||
	    find_classes(L, sizes, ns, err, errlen))
		return -1;
	return L->o->layout == STORE_VLLM_DISK ? check_vllm_grid(L, err, errlen) : 0;
}

/* ---- 2. objects ---- */

static uint64_t obj_new(struct lift *L, uint64_t slot, uint8_t kind)
{
	if (vec_reserve(L->obj, L->objcap, L->nobj + 1))
		return NONE;
	L->obj[L->nobj] = (struct lobj){.slot = slot, .parent = NONE, .kind = kind, .writer = NONE};
	return L->nobj++;
}

static int ev_push(struct lift *L, uint64_t t, uint64_t obj, char op)
{
	if (vec_reserve(L->ev, L->evcap, L->nev + 1))
		return -1;
	L->ev[L->nev++] = (struct lev){t, obj, op};
	return 0;
}

static int kind_of(const struct lift *L, uint64_t slot_bytes)
{
	if (slot_bytes == L->r->slot[0])
		return OBJ_FULL;
	if (L->r->slot[1] && slot_bytes == L->r->slot[1])
		return OBJ_LINEAR;
	return -1;
}

/* The slot at off, or NULL; *clash: a slot that [off, off + bytes) overlaps but does not start
 * at off. */
static struct slotent *slot_at(struct lift *L, uint64_t off, uint64_t bytes,
                               struct slotent **clash)
{
	*clash = NULL;
	GTreeNode *n = g_tree_lower_bound(L->slots, &off);
	GTreeNode *p = n ? g_tree_node_previous(n) : g_tree_node_last(L->slots);
	if (p) {
		struct slotent *s = g_tree_node_value(p);
		if (s->off + s->bytes > off)
			*clash = s;
	}
	if (n) {
		struct slotent *s = g_tree_node_value(n);
		if (s->off == off)
			return s;
		if (s->off < off + bytes)
			*clash = s;
	}
	return NULL;
}

/* I/O i when it is no object's: a flush (kept, for the cutting), a checkpoint, a write that is
 * not a put, a read inside the metadata region. 1 handled, 0 an object's, -1 out of memory. */
static int not_object(struct lift *L, uint64_t i)
{
	struct lift_result *r = L->r;
	const struct blk_io *a = &L->io[i];
	uint64_t off = a->lba * SECTOR;
	if (a->op == 'F') {
		r->flushes++;
		return ev_push(L, a->t_ns, NONE, 'F') ? -1 : 1;
	}
	if (off < r->meta_bytes + (a->op == 'R' ? L->hdr : 0)) {
		if (a->op == 'W')
			r->checkpoints++;
		else
			warn_io(L, &r->other_ios, i, "inside the metadata region");
		return 1;
	}
	if (a->op != 'W' || L->is_put[i])
		return 0;
	if (a->bytes == L->hdr)
		warn_io(L, &r->orphan_headers, i, "a slot header without its payload write (lost events?)");
	else
		warn_io(L, &r->other_ios, i, "a write that is not a put");
	return 1;
}

/* The object I/O at io[*i] (a put advances *i past its payload). 0, or -1 with err. */
static int object_event(struct lift *L, uint64_t *i, char *err, size_t errlen)
{
	struct lift_result *r = L->r;
	const struct blk_io *a = &L->io[*i];
	uint64_t off = a->lba * SECTOR, slot_off = a->op == 'R' ? off - L->hdr : off;
	uint64_t bytes = a->op == 'W' && L->hdr ? L->hdr + L->io[*i + 1].bytes
	                 : a->op == 'R'         ? a->bytes + L->hdr
	                                        : a->bytes;
	char d[160];
	struct slotent *clash, *s = slot_at(L, slot_off, bytes, &clash);
	int kind = kind_of(L, bytes);
	/* a read that is no slot's payload, or any read before the store's first put: someone
	 * else's (the kernel's partition scan, libblkid's probe, the capture script finding the
	 * device): counted, not used */
	if (a->op == 'R' && (!r->writes || clash || kind < 0 || (s && s->bytes != bytes))) {
		warn_io(L, &r->other_ios, *i, "a read that is no slot's payload");
		return 0;
	}
	if (clash || (s && s->bytes != bytes && a->op != 'D')) {
		struct slotent *c = clash ? clash : s;
		io_name(d, sizeof(d), *i, a);
		return fg_err(err, errlen,
		              "%s straddles the %" PRIu64 "-byte slot at byte %" PRIu64 ": not a %s "
		              "capture with these slots (wrong --layout or --slot?)",
		              d, c->bytes, c->off, store_layout_name(L->o->layout));
	}
	if (a->op == 'D') {
		r->discards++;
		if (s)
			s->obj = NONE;
		else
			warn_io(L, &r->other_ios, *i, "a discard outside any slot");
		return 0;
	}
	if (kind < 0) {
		io_name(d, sizeof(d), *i, a);
		return fg_err(err, errlen,
		              "%s: a %" PRIu64 "-byte slot, neither class (%" PRIu64 " and %" PRIu64
		              " bytes)",
		              d, bytes, r->slot[0], r->slot[1]);
	}
	if (!s) {
		s = g_new(struct slotent, 1);
		*s = (struct slotent){slot_off, bytes, NONE};
		g_tree_insert(L->slots, &s->off, s);
	}
	if (a->op == 'W') {
		s->obj = obj_new(L, slot_off, (uint8_t)kind);
		r->writes++;
		if (a->placed) { /* which classes each placement ID carried */
			unsigned k = 0;
			r->placed_writes++;
			while (k < r->nplacement && r->placement[k].pid != a->pid)
				k++;
			if (k == r->nplacement && k < 16)
				r->placement[r->nplacement++] = (struct lift_placement){.pid = a->pid};
			if (k < r->nplacement)
				*(kind == OBJ_LINEAR ? &r->placement[k].states : &r->placement[k].chunks) += 1;
		}
		*i += L->hdr != 0; /* the payload write */
	} else {
		if (s->obj == NONE) {
			warn_io(L, &r->unwritten_reads, *i,
			        "a read of a slot never written in the capture (written before it "
			        "started, or lost events)");
			s->obj = obj_new(L, slot_off, (uint8_t)kind);
		}
		r->reads++;
	}
	if (s->obj == NONE || ev_push(L, a->t_ns, s->obj, a->op))
		return fg_err(err, errlen, "out of memory");
	return 0;
}

static int objects(struct lift *L, char *err, size_t errlen)
{
	for (uint64_t i = 0; i < L->nio; i++) {
		int k = not_object(L, i);
		if (k < 0)
			return fg_err(err, errlen, "out of memory");
		if (!k && object_event(L, &i, err, errlen))
			return -1;
	}
	return 0;
}

/* ---- 3. requests ---- */

static struct lreq *req_open(struct lift *L, uint64_t t)
{
	if (vec_reserve(L->rq, L->rqcap, L->nrq + 1))
		return NULL;
	struct lreq *q = &L->rq[L->nrq++];
	*q = (struct lreq){.t_ns = t, .c0 = L->npool, .bnd = -1, .session = NONE, .sslot = NONE};
	return q;
}

/* Event e joins request q, whose chain ends at tip: a write makes the object q's, below tip; a
 * read by another request than its writer marks it reused; a state sets q's boundary. */
static void take(struct lift *L, struct lreq *q, uint64_t tip, const struct lev *e)
{
	struct lobj *x = &L->obj[e->obj];
	uint64_t rid = (uint64_t)(q - L->rq);
	if (e->op == 'W') {
		x->parent = tip;
		x->writer = rid;
		q->wrote = true;
	} else if (x->writer != rid && x->writer != NONE)
		x->read_later = true;
	if (x->kind == OBJ_LINEAR)
		q->bnd = (int64_t)q->n;
}

static int requests(struct lift *L, char *err, size_t errlen)
{
	struct lift_result *r = L->r;
	struct lreq *q = NULL;
	for (uint64_t i = 0; i < L->nev; i++) {
		const struct lev *e = &L->ev[i];
		if (e->op == 'F') {
			if (q && (q->n || q->bnd >= 0 || q->wrote))
				q = NULL;
			continue;
		}
		struct lobj *x = &L->obj[e->obj];
		uint64_t tip = q && q->n ? L->pool[q->c0 + q->n - 1] : NONE;
		/* no fences: a new request where the chain cannot go on: a read after writes or off
		 * the chain; a second state write; a chunk write after the state, unless it is the
		 * partial last chunk, which the store allocated right before the state */
		if (!r->fenced && q &&
		    ((e->op == 'R' && (q->wrote || (x->kind == OBJ_FULL && x->parent != tip))) ||
		     (e->op == 'W' && q->sslot != NONE &&
		      (x->kind == OBJ_LINEAR || q->after_state ||
		       x->slot + r->slot[0] != q->sslot))))
			q = NULL;
		if (!q) {
			if (!(q = req_open(L, e->t_ns)))
				return fg_err(err, errlen, "out of memory");
			tip = NONE;
		}
		uint64_t rid = (uint64_t)(q - L->rq);
		if (e->op == 'R' && x->kind == OBJ_FULL) { /* before take(): it may set nothing here */
			if (q->wrote)
				warn(L, &r->read_after_write,
				     "request %" PRIu64 ": a read after its writes (requests "
				     "interleaved?)",
				     rid + 1);
			else if (x->writer == NONE && x->parent == NONE && tip != NONE)
				x->parent = tip; /* written before the capture: it continues here */
			else if (x->parent != tip)
				warn(L, &r->chain_breaks,
				     "request %" PRIu64 ": chunk %" PRIu64 " does not continue its "
				     "chain",
				     rid + 1, e->obj);
		}
		take(L, q, tip, e);
		if (x->kind == OBJ_LINEAR) {
			if (e->op == 'W')
				q->sslot = x->slot;
			continue;
		}
		if (e->op == 'W')
			q->after_state += q->sslot != NONE;
		else if (!q->wrote)
			q->nread = q->n + 1;
		if (vec_reserve(L->pool, L->poolcap, L->npool + 1))
			return fg_err(err, errlen, "out of memory");
		L->pool[L->npool++] = e->obj;
		q->n++;
	}
	return 0;
}

/*
 * Interleaved requests (--split demux, docs/lift.md): several requests are open at once and each
 * I/O is given to one of them.
 *   - A chunk read continues an open request that has not written yet and whose chain ends at
 *     the chunk's parent (a root read opens a new request); a state read, the one whose chain
 *     ends at its chunk. Ties go to the request that waited longest.
 *   - A write continues the request whose last chunk's slot ends where it starts (the store
 *     allocates a request's slots one after another; a state may skip one chunk slot: it is
 *     written before the partial chunk allocated ahead of it). Otherwise it is a request's first
 *     write: the earliest opened request that has read but not written, or a new one.
 * A fence closes the request of the I/O just before it (the store fences a request right after
 * its last I/O); without fences a request is closed after DEMUX_IDLE events without I/O. Every
 * decision with more than one candidate, or a first write given by order only, is counted as
 * uncertain.
 */
#define DEMUX_IDLE 4096 /* events without an I/O after which a request is closed */

static struct lreq *demux_pick(struct lift *L, const uint64_t *open, uint64_t nopen, uint64_t ev,
                               bool wrote, uint64_t tip, uint64_t front, uint64_t front2,
                               uint64_t *ambiguous)
{
	struct lreq *best = NULL;
	uint64_t n = 0;
	for (uint64_t k = 0; k < nopen; k++) {
		struct lreq *q = &L->rq[open[k]];
		bool ok = wrote ? q->wrote && (q->front == front || (front2 && q->front == front2))
		                : !q->wrote && q->tip == tip;
		if (!ok)
			continue;
		n++;
		if (!best || q->act < best->act)
			best = q;
	}
	*ambiguous += n > 1;
	if (best && n > 1)
		best->uncertain = true;
	(void)ev;
	return best;
}

/* A request's first write at slot X. The store allocates requests' slots in request order, so
 * the owner of X comes after the owner of the slot allocated just before X (P). If P has been
 * written, its owner is known, and X's is the earliest open request after it that has only read
 * (none: a request that read nothing). If not, X's owner is the request that has only read and
 * has been quiet longest: it finished reading while the others still read. *certain: one
 * candidate only, and P known. */
static struct lreq *demux_first(struct lift *L, const uint64_t *open, uint64_t nopen, uint64_t X,
                                uint64_t ev, bool *certain)
{
	uint64_t lo = 0, hi = L->nwslot, after = 0; /* requests before index `after` are out */
	while (lo < hi) { /* the last slot below X */
		uint64_t mid = (lo + hi) / 2;
		if (L->wslot[mid].off < X)
			lo = mid + 1;
		else
			hi = mid;
	}
	bool pknown = lo == 0;
	const struct wslot *p = lo ? &L->wslot[lo - 1] : NULL;
	if (p && p->ev < ev && L->obj[p->obj].writer != NONE) {
		after = L->obj[p->obj].writer + 1;
		pknown = true;
	}
	struct lreq *best = NULL;
	uint64_t n = 0;
	for (uint64_t k = 0; k < nopen; k++) {
		struct lreq *c = &L->rq[open[k]];
		if (c->wrote || !c->n || (uint64_t)(c - L->rq) < after)
			continue;
		n++;
		if (!best || (pknown ? c < best : c->act < best->act))
			best = c;
	}
	*certain = n <= 1 && pknown;
	return best;
}

static int chain_push(struct lreq *q, uint64_t o)
{
	if (vec_reserve(q->chain, q->chaincap, q->nchain + 1))
		return -1;
	q->chain[q->nchain++] = (uint32_t)o;
	q->n++;
	return 0;
}

static int cmp_wslot(const void *a, const void *b)
{
	const struct wslot *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off ? 1 : (x->ev > y->ev) - (x->ev < y->ev);
}

/* Which open request event i goes to (NULL: a new one). */
static struct lreq *demux_owner(struct lift *L, const uint64_t *open, uint64_t nopen, uint64_t i)
{
	struct lift_result *r = L->r;
	const struct lev *e = &L->ev[i];
	struct lobj *x = &L->obj[e->obj];
	const uint64_t cslot = r->slot[0];
	struct lreq *q = NULL;
	if (e->op == 'R') {
		if (x->parent != NONE || x->kind == OBJ_LINEAR)
			q = demux_pick(L, open, nopen, i, false, x->parent, 0, 0, &r->uncertain);
		if (!q && x->parent != NONE)
			warn(L, &r->chain_breaks, "event %" PRIu64 ": a read that continues no open request",
			     i + 1);
		return q;
	}
	uint64_t front2 = x->kind == OBJ_LINEAR && x->slot >= cslot ? x->slot - cslot : 0;
	q = demux_pick(L, open, nopen, i, true, 0, x->slot, front2, &r->uncertain);
	if (!q) { /* a first write: see demux_first() */
		bool certain;
		q = demux_first(L, open, nopen, x->slot, i, &certain);
		r->uncertain += !certain;
		if (q && !certain)
			q->uncertain = true;
	}
	return q;
}

/* The demultiplexed chains into the pool, in request order. 0, or -1 (out of memory). */
static int demux_to_pool(struct lift *L)
{
	for (uint64_t k = 0; k < L->nrq; k++) {
		struct lreq *q = &L->rq[k];
		L->r->uncertain_requests += q->uncertain;
		q->c0 = L->npool;
		if (vec_reserve(L->pool, L->poolcap, L->npool + q->nchain))
			return -1;
		for (uint64_t c = 0; c < q->nchain; c++)
			L->pool[L->npool++] = q->chain[c];
		free(q->chain);
		q->chain = NULL;
	}
	return 0;
}

static int requests_demux(struct lift *L, char *err, size_t errlen)
{
	uint64_t *open = NULL, nopen = 0, opencap = 0, prev = NONE; /* prev: the last I/O's request */
	L->wslot = malloc((L->nev ? L->nev : 1) * sizeof(*L->wslot));
	if (!L->wslot)
		return fg_err(err, errlen, "out of memory");
	for (uint64_t i = 0; i < L->nev; i++)
		if (L->ev[i].op == 'W')
			L->wslot[L->nwslot++] = (struct wslot){L->obj[L->ev[i].obj].slot, L->ev[i].obj, i};
	qsort(L->wslot, L->nwslot, sizeof(*L->wslot), cmp_wslot);
	for (uint64_t i = 0; i < L->nev; i++) {
		const struct lev *e = &L->ev[i];
		/* a fence follows its request's last I/O: that one is done; so is one long idle */
		for (uint64_t k = 0; k < nopen;)
			if ((e->op == 'F' && open[k] == prev) || i - L->rq[open[k]].act > DEMUX_IDLE)
				open[k] = open[--nopen];
			else
				k++;
		if (e->op == 'F') {
			prev = NONE;
			continue;
		}
		struct lreq *q = demux_owner(L, open, nopen, i);
		if (!q) {
			if (!(q = req_open(L, e->t_ns)) || vec_reserve(open, opencap, nopen + 1))
				goto oom;
			q->tip = NONE;
			open[nopen++] = (uint64_t)(q - L->rq);
		}
		struct lobj *x = &L->obj[e->obj];
		q->act = i;
		prev = (uint64_t)(q - L->rq);
		take(L, q, q->tip, e);
		if (x->kind == OBJ_LINEAR)
			continue;
		if (chain_push(q, e->obj))
			goto oom;
		q->tip = e->obj;
		if (e->op == 'W')
			q->front = x->slot + L->r->slot[0];
		else
			q->nread = q->n;
	}
	free(open);
	if (demux_to_pool(L))
		return fg_err(err, errlen, "out of memory");
	return 0;
oom:
	free(open);
	return fg_err(err, errlen, "out of memory");
}

/* ---- 4. sessions, and the output ---- */

/* The chunk where request q's cached context ends: its state's chunk, else its last chunk if a
 * later request read it (a full block), else the one before (the last was a partial block). */
static uint64_t req_end(const struct lift *L, const struct lreq *q)
{
	if (!q->n)
		return NONE;
	if (q->bnd > 0)
		return L->pool[q->c0 + q->bnd - 1];
	if (q->bnd == 0)
		return NONE;
	uint64_t last = L->pool[q->c0 + q->n - 1];
	return L->obj[last].read_later || q->n == 1 ? last : L->pool[q->c0 + q->n - 2];
}

static int sessions(struct lift *L, char *err, size_t errlen)
{
	struct u64map ends; /* end chunk -> session */
	if (u64map_init(&ends, 1024))
		return fg_err(err, errlen, "out of memory");
	for (uint64_t i = 0; i < L->nrq; i++) {
		struct lreq *q = &L->rq[i];
		uint64_t d = q->nread ? L->pool[q->c0 + q->nread - 1] : NONE, s;
		if (d != NONE && (s = u64map_get(&ends, d)) != U64MAP_EMPTY)
			q->session = s;
		else
			q->session = L->r->sessions++;
		uint64_t end = req_end(L, q);
		if (end != NONE && u64map_put(&ends, end, q->session)) {
			u64map_free(&ends);
			return fg_err(err, errlen, "out of memory");
		}
	}
	u64map_free(&ends);
	return 0;
}

static int write_jsonl(struct lift *L, FILE *out)
{
	struct lift_result *r = L->r;
	const uint32_t bt = r->block_tokens;
	struct json_out j;
	char sid[32];
	jout_init(&j, out);
	for (uint64_t i = 0; i < L->nrq && !jout_error(&j); i++) {
		const struct lreq *q = &L->rq[i];
		/* tokens: whole blocks, but a state below the last chunk means the last block was
		 * partial: its tokens are not in the capture, half a block is the estimate */
		uint64_t in = q->n * bt;
		int64_t bnd = q->bnd;
		if (bnd < 0 && r->slot[1] && q->n == 1)
			bnd = 0; /* a hybrid model keeps no state below one partial block */
		if (bnd >= 0 && (uint64_t)bnd + 1 == q->n) {
			in = (uint64_t)bnd * bt + (bt > 1 ? bt / 2 : 1);
			r->tokens_estimated++;
		}
		snprintf(sid, sizeof(sid), "l%" PRIu64, q->session);
		jout_object(&j, NULL, JOUT_INLINE); /* one line per request: JSONL */
		/* a capture paced at N x trace speed (--timing xN): its gaps times N */
		double t0 = L->nrq ? (double)L->rq[0].t_ns : 0;
		jout_num(&j, "timestamp", "%.6f",
		         (t0 + ((double)q->t_ns - t0) * (L->o->speed > 0 ? L->o->speed : 1)) / 1e6);
		jout_str(&j, "session_id", sid);
		jout_u64(&j, "input_length", in);
		jout_u64(&j, "output_length", 0);
		jout_array(&j, "hash_ids", JOUT_INLINE);
		for (uint64_t k = 0; k < q->n; k++)
			jout_u64(&j, NULL, L->pool[q->c0 + k]);
		jout_end(&j);
		jout_u64(&j, "block_tokens", bt);
		jout_end(&j);
		r->requests++;
	}
	for (uint64_t o = 0; o < L->nobj; o++)
		L->obj[o].kind == OBJ_LINEAR ? r->states++ : r->chunks++;
	return jout_finish(&j) ? -1 : 0;
}

static void lift_free(struct lift *L)
{
	for (uint64_t k = 0; k < L->nrq; k++)
		free(L->rq[k].chain);
	free(L->wslot);
	free(L->io);
	free(L->is_put);
	free(L->obj);
	free(L->ev);
	free(L->rq);
	free(L->pool);
	if (L->slots)
		g_tree_destroy(L->slots);
}

int lift_run(const char *path, const struct trace_opts *to, const struct lift_opts *o, FILE *out,
             struct lift_result *r, char *err, size_t errlen)
{
	struct lift L = {.o = o, .r = r, .hdr = o->layout == STORE_LMCACHE_RAWBLOCK
	                                            ? STORE_HEADER_BYTES
	                                            : 0};
	char e[1024];
	int rc = -1;
	memset(r, 0, sizeof(*r));
	struct trace *t = trace_open(path, to, e, sizeof(e));
	if (!t)
		return fg_err(err, errlen, "%s", e);
	if (!trace_is_block(t)) {
		fg_err(err, errlen, "%s: a %s trace, not a block trace", path,
		       trace_format_name(trace_format(t)));
		trace_close(t);
		return -1;
	}
	struct blk_io io;
	int k;
	while ((k = trace_next_blk(t, &io)) == 1) {
		if (vec_reserve(L.io, L.iocap, L.nio + 1)) {
			trace_close(t);
			lift_free(&L);
			return fg_err(err, errlen, "out of memory");
		}
		L.io[L.nio++] = io;
		r->fenced |= io.op == 'F';
	}
	if (k < 0) {
		fg_err(err, errlen, "%s", trace_error(t));
		trace_close(t);
		lift_free(&L);
		return -1;
	}
	trace_close(t);
	L.slots = g_tree_new_full(cmp_u64, NULL, NULL, g_free);
	if (find_layout(&L, err, errlen) || objects(&L, err, errlen))
		goto done;
	L.demux = o->split == LIFT_SPLIT_DEMUX;
	if (o->split == LIFT_SPLIT_AUTO) { /* a read after a write between fences: interleaved */
		for (uint64_t i = 0, open = 0, bad = 0; r->fenced && i < L.nev && !L.demux; i++) {
			const struct lev *e = &L.ev[i];
			if (e->op == 'F') {
				open = 0;
				continue;
			}
			/* a read after a write before the fence: two requests in one */
			bad = e->op == 'R' && open == 'W';
			open = e->op == 'W' ? 'W' : open ? open : 'R';
			L.demux = bad;
		}
	}
	r->demuxed = L.demux;
	if ((L.demux ? requests_demux(&L, err, errlen) : requests(&L, err, errlen)) ||
	    sessions(&L, err, errlen))
		goto done;
	if (write_jsonl(&L, out) || fflush(out) || ferror(out)) {
		fg_err(err, errlen, "cannot write the lifted trace");
		goto done;
	}
	rc = 0;
done:
	lift_free(&L);
	return rc;
}

/* ---- comparison ---- */

/* Is a <-> b the pairing so far? Each side remembers its latest partner (values + 1:
 * KV_NO_SESSION is UINT64_MAX, the map's empty value), so a session split in two, or two merged,
 * is one error where it happens, not one per request after it. */
static bool pair(struct u64map *ab, struct u64map *ba, uint64_t a, uint64_t b, bool *oom)
{
	uint64_t x = u64map_get(ab, a), y = u64map_get(ba, b);
	bool ok = (x == U64MAP_EMPTY && y == U64MAP_EMPTY) || (x == b + 1 && y == a + 1);
	if (!ok || x == U64MAP_EMPTY)
		*oom |= u64map_put(ab, a, b + 1) || u64map_put(ba, b, a + 1);
	return ok;
}

int lift_compare(const char *lifted, const char *original, const struct trace_opts *to,
                 struct lift_compare *c, char *err, size_t errlen)
{
	struct kv_trace A = {0}, B = {0};
	struct u64map ab, ba, sab, sba;
	bool oom = false;
	int rc = -1;
	memset(c, 0, sizeof(*c));
	if (kv_trace_load(original, to, &A, err, errlen))
		return -1;
	if (kv_trace_load(lifted, to, &B, err, errlen)) {
		kv_trace_free(&A);
		return -1;
	}
	if (u64map_init(&ab, 1024) || u64map_init(&ba, 1024) || u64map_init(&sab, 64) ||
	    u64map_init(&sba, 64)) {
		fg_err(err, errlen, "out of memory");
		goto out;
	}
	c->original = A.n;
	c->lifted = B.n;
	uint64_t j = 0;
	for (uint64_t i = 0; i < A.n; i++) {
		const struct kv_request *a = &A.rq[i];
		if (!a->nblocks) {
			c->invisible++;
			continue;
		}
		if (j >= B.n)
			break;
		const struct kv_request *b = &B.rq[j++];
		bool chain = a->nblocks == b->nblocks, sess, tok, tm;
		for (uint32_t k = 0; chain && k < a->nblocks; k++)
			chain = pair(&ab, &ba, a->blocks[k], b->blocks[k], &oom);
		sess = pair(&sab, &sba, a->session, b->session, &oom);
		tok = a->input_tokens == b->input_tokens;
		tm = a->t - b->t < 1e-6 && b->t - a->t < 1e-6;
		c->chain_wrong += !chain;
		c->session_wrong += !sess;
		c->tokens_wrong += !tok;
		c->time_wrong += !tm;
		c->exact += chain && sess;
		c->exact_tokens += chain && sess && tok;
		c->tokens += a->input_tokens;
		c->token_abs_err += a->input_tokens > b->input_tokens ? a->input_tokens - b->input_tokens
		                                                       : b->input_tokens - a->input_tokens;
	}
	if (oom) {
		fg_err(err, errlen, "out of memory");
		goto out;
	}
	rc = 0;
out:
	u64map_free(&ab);
	u64map_free(&ba);
	u64map_free(&sab);
	u64map_free(&sba);
	kv_trace_free(&A);
	kv_trace_free(&B);
	return rc;
}
