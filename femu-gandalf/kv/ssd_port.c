/*
 * ssd_port.c - the SSD tier's one output port. Every I/O the simulator makes on its SSD tier
 * (a write, a read, an eviction, a range TRIM, a probe) goes through these functions, to what is
 * attached behind the tier: the emulated drive (struct ftl: bytes, wear, timing), the store that
 * does the I/O on a real device (struct kv_io_sink: docs/store.md), both, or neither (then the
 * run is a TBW division only). Nothing else in femu-gandalf/kv calls the FTL.
 *
 * An I/O the drive refuses (end of life, out of range) is counted in kv_stats.ftl_errors; the
 * run goes on and the caller reports it. A failure of the store stops the run at the end of the
 * request (kv_port_end).
 */
#include "kv_policy.h"

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

/* The drive's wear attribution class of an object's data (ftl_set_class): 1 + its kind, so
 * full-attention chunks are class 1 and linear states class 2 (kv_run.c names them). */
#define KV_CLASS(kind) (1u + (kind))

void kv_port_write(struct kvsim *s, const struct kv_obj *x)
{
	sink_io(s, KV_IO_WRITE, x, x->lba);
	if (s->ftl)
		ftl_set_class(s->ftl, KV_CLASS(x->kind));
	if (s->ftl && ftl_write(s->ftl, x->lba, kv_slot_bytes(s, x), kv_obj_stream(s, x),
	                        kv_now_ns(s), NULL))
		s->st.ftl_errors++;
}

void kv_port_read(struct kvsim *s, const struct kv_obj *x, uint64_t lba, uint64_t *done)
{
	sink_io(s, KV_IO_READ, x, lba);
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
	if (!s->ftl || !s->obj[o].in_ssd)
		return 1;
	double v = ftl_unit_valid(s->ftl, s->obj[o].lba);
	return v < 0 ? 1 : v;
}
