/*
 * ssd_port.c - the SSD tier's one output port. Every I/O the simulator makes on its SSD tier
 * (a write, a read, an eviction, a range TRIM, a probe) goes through these functions, to what is
 * attached behind the tier: the emulated drive (struct ftl: bytes, wear, timing), the store that
 * does the I/O on a real device (struct kv_io_sink: docs/store.md), both, or neither (then the
 * run is a TBW division only); or a log of it that drives replay later (struct kv_log, below).
 * Nothing else in femu-gandalf/kv calls the FTL.
 *
 * An I/O the drive refuses (end of life, out of range) is counted in kv_stats.ftl_errors; the
 * run goes on and the caller reports it. A failure of the store stops the run at the end of the
 * request (kv_port_end).
 */
#include <stdlib.h>
#include <string.h>

#include "kv_policy.h"
#include "vec.h"

/*
 * The log's records. A write, read or TRIM of whole 4 KiB units (a KV tier's slots) below 256
 * TiB and 4 GiB long is one word, op | 8 | kind << 4 | units << 8 | lba units << 28 (a write
 * then its session); another is a first word op | kind << 4 | bytes << 8 and its lba (a write
 * then its session). REQ is op and its time, LOAD op and its two doubles' bits. A record that
 * cannot be appended marks the log incomplete (oom), and the replay refuses it.
 */
#define LOG_SHORT 8u
#define LOG_U 4096u

static void log_put(struct kv_log *l, int op, unsigned kind, uint64_t bytes, uint64_t a,
                    uint64_t b, int nw)
{
	if (l->oom || vec_reserve(l->w, l->cap, l->n + 3)) {
		l->oom = true;
		return;
	}
	uint64_t *w = l->w + l->n;
	w[0] = (uint64_t)op | (uint64_t)kind << 4 | bytes << 8;
	w[1] = a;
	w[2] = b;
	l->n += (size_t)nw;
}

/* an I/O of an object: one word when its place and size are whole units that fit */
static void log_io(struct kv_log *l, int op, unsigned kind, uint64_t bytes, uint64_t lba,
                   uint64_t session)
{
	const bool w = op == KV_LOG_WRITE;
	if ((bytes | lba) % LOG_U || bytes / LOG_U >= 1u << 20 || lba / LOG_U >= 1ull << 36) {
		log_put(l, op, kind, bytes, lba, session, w ? 3 : 2);
		return;
	}
	log_put(l, op | LOG_SHORT, kind, 0, session, 0, w ? 2 : 1);
	if (!l->oom)
		l->w[l->n - (w ? 2 : 1)] |= bytes / LOG_U << 8 | lba / LOG_U << 28;
}

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return u;
}

size_t kv_log_next(const struct kv_log *l, size_t i, struct kv_log_rec *r)
{
	const uint64_t *w = l->w + i;
	r->op = (int)(w[0] & 7);
	r->kind = (unsigned)(w[0] >> 4 & 15);
	if (w[0] & LOG_SHORT) {
		r->bytes = (w[0] >> 8 & ((1u << 20) - 1)) * LOG_U;
		r->lba = (w[0] >> 28) * LOG_U;
		if (r->op != KV_LOG_WRITE)
			return i + 1;
		r->session = w[1];
		return i + 2;
	}
	r->bytes = w[0] >> 8;
	switch (r->op) {
	case KV_LOG_REQ:
		r->now = w[1];
		return i + 2;
	case KV_LOG_WRITE:
		r->lba = w[1];
		r->session = w[2];
		return i + 3;
	case KV_LOG_LOAD:
		memcpy(&r->rest, &w[1], sizeof(double));
		memcpy(&r->recompute, &w[2], sizeof(double));
		return i + 3;
	default: /* READ, TRIM */
		r->lba = w[1];
		return i + 2;
	}
}

void kv_log_free(struct kv_log *l)
{
	free(l->w);
	memset(l, 0, sizeof(*l));
}

void kv_port_begin(struct kvsim *s)
{
	if (s->log)
		log_put(s->log, KV_LOG_REQ, 0, 0, kv_now_ns(s), 0, 2);
}

void kv_port_load(struct kvsim *s, double rest, double recompute)
{
	if (s->log)
		log_put(s->log, KV_LOG_LOAD, 0, 0, dbits(rest), dbits(recompute), 3);
}

/* Tell the store (if any) about one I/O of x at lba. */
static void sink_io(struct kvsim *s, char op, const struct kv_obj *x, uint64_t lba)
{
	if (!s->sink || s->sink_failed)
		return;
	struct kv_io e = {.op = op,
	                  .kind = x->kind,
	                  .key = x->key,
	                  .session = x->session,
	                  .lba = lba,
	                  .slot_bytes = kv_slot_bytes(s, x),
	                  .size = x->size};
	if (s->sink->io(s->sink->arg, &e))
		s->sink_failed = true;
}

void kv_port_write(struct kvsim *s, const struct kv_obj *x)
{
	sink_io(s, KV_IO_WRITE, x, x->lba);
	if (s->log)
		log_io(s->log, KV_LOG_WRITE, x->kind, kv_slot_bytes(s, x), x->lba, x->session);
	if (s->ftl)
		ftl_set_class(s->ftl, kv_wear_class(x->kind));
	if (s->ftl && ftl_write(s->ftl, x->lba, kv_slot_bytes(s, x), kv_obj_stream(s, x),
	                        kv_now_ns(s), NULL))
		s->st.ftl_errors++;
}

void kv_port_read(struct kvsim *s, const struct kv_obj *x, uint64_t lba, uint64_t *done)
{
	sink_io(s, KV_IO_READ, x, lba);
	if (s->log)
		log_io(s->log, KV_LOG_READ, 0, kv_slot_bytes(s, x), lba, 0);
	if (!s->ftl)
		return;
	uint64_t t;
	if (ftl_read(s->ftl, lba, kv_slot_bytes(s, x), kv_now_ns(s), done ? &t : NULL))
		s->st.ftl_errors++;
	else if (done && t > *done)
		*done = t;
}

void kv_port_evicted(struct kvsim *s, const struct kv_obj *x, bool trim)
{
	sink_io(s, KV_IO_TRIM, x, x->lba);
	if (trim)
		kv_port_trim(s, x->lba, kv_slot_bytes(s, x));
}

void kv_port_trim(struct kvsim *s, uint64_t lba, uint64_t bytes)
{
	if (s->log) /* (whether the run TRIMs is the replay's to decide) */
		log_io(s->log, KV_LOG_TRIM, 0, bytes, lba, 0);
	if (s->ftl && s->cfg.trim && ftl_trim(s->ftl, lba, bytes, kv_now_ns(s), NULL))
		s->st.ftl_errors++;
}

bool kv_port_probes(const struct kvsim *s)
{
	return s->sink && s->sink->probe;
}

void kv_port_probe(struct kvsim *s, const struct kv_obj *x)
{
	sink_io(s, KV_IO_PROBE, x, x->lba);
}

void kv_port_prefetch(const struct kvsim *s, const struct kv_obj *x)
{
	if (s->ftl && !x->in_dram)
		ftl_prefetch(s->ftl, x->lba, kv_slot_bytes(s, x));
}

bool kv_port_timed(const struct kvsim *s)
{
	return s->ftl && s->cfg.use_ftl_timing;
}

int kv_port_end(struct kvsim *s, const struct kv_request *rq)
{
	if (s->sink && !s->sink_failed && s->sink->end && s->sink->end(s->sink->arg, rq))
		s->sink_failed = true;
	return s->sink_failed ? -1 : 0;
}

uint64_t kv_port_stripe_bytes(const struct kvsim *s)
{
	if (!s->ftl)
		return 0;
	const struct ftl_geometry *g = ftl_get_geometry(s->ftl);
	uint64_t us = ftl_get_config(s->ftl)->unit_size;
	uint64_t unit = (uint64_t)g->frontier_slots * g->units_per_block * us;
	uint64_t gcu = (uint64_t)g->units_per_gc_unit * us;
	if (gcu > unit)
		unit = gcu % unit ? gcu * unit : gcu; /* a multiple of both */
	return unit;
}

double kv_obj_unit_valid(const struct kvsim *s, uint32_t o)
{
	if (s->log)
		s->log->feedback = true;
	if (!s->ftl || !s->obj[o].in_ssd)
		return 1;
	double v = ftl_unit_valid(s->ftl, s->obj[o].lba);
	return v < 0 ? 1 : v;
}
