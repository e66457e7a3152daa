/*
 * store.c - the KV tier simulator's SSD I/O made real, in a real backend's layout (store.h,
 * docs/store.md).
 *
 * The simulator allocates slots (kvsim.c, slot allocator) with the geometry this file gives it:
 * round_up(header + object, alignment) per kind, freed slots reused newest first (LMCache) or
 * oldest first (KVBM; vLLM after every never-used slot). So a slot's address in the tier is the simulator's lba, and the device
 * offset is the data region's base plus it. What this file adds is the I/O itself: the events of
 * one request are buffered and submitted when it ends, stamped with its trace time, so the
 * record (and aiotarget's pacing) carry the trace's clock.
 *
 * Versions: an object's version counts its writes (a key rewritten after an eviction is a new
 * version), so its payload differs from the stale copy a lost write would leave behind, and
 * the check can say which object and which version it found instead.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aiotarget.h"
#include "atomicfile.h"
#include "err.h"
#include "store.h"
#include "u64map.h"
#include "vec.h"

#define SECTOR 512u
#define PAYLOAD_MAGIC 0x46474b5650594c44ull /* "FGKVPYLD" */
#define CTX_HEADER 0x100u                   /* ctx.w[2]: the I/O is a rawblock slot header */
#define CTX_META 0x200u                     /* ctx.w[2]: a checkpoint */

struct store {
	struct store_opts o;
	enum store_layout layout;
	struct aio_target *t;
	struct fg_atomic rec_file; /* --record: written beside it, renamed over it when whole */
	FILE *rec;
	uint64_t base, tier, meta, copy_bytes; /* copy_bytes: a checkpoint copy's room */
	double ckpt_s, last_ckpt;
	bool dirty; /* the index changed since the last checkpoint */
	uint64_t ckpt_seq, live, t_last_ns;
	struct u64map ver; /* key -> its last written version */
	struct kv_io *ev;  /* the window's requests' events */
	uint64_t nev, evcap;
	/* the window (--concurrency): nwin requests so far of window; request j's events are
	 * ev[wbeg[j] .. wbeg[j + 1]), its time wt[j], its last write wlast[j] (if wpend[j]) */
	uint64_t window, nwin, *wbeg, *wcur, *wt, *wlast;
	bool *wpend;
	struct u64map wmap;
	struct kv_io_sink sink;
	const struct kv_config *cfg; /* placement: the classes (kv_stream) */
	uint16_t pool[128];          /* placement: the device's non-zero placement IDs */
	unsigned npool, next_pid;
	struct store_stats st;
	char err[1024];
	bool failed;
};

int store_layout_parse(const char *name, enum store_layout *l)
{
	if (!strcmp(name, "lmcache-rawblock"))
		*l = STORE_LMCACHE_RAWBLOCK;
	else if (!strcmp(name, "kvbm"))
		*l = STORE_KVBM;
	else if (!strcmp(name, "vllm-disk"))
		*l = STORE_VLLM_DISK;
	else
		return -1;
	return 0;
}

const char *store_layout_name(enum store_layout l)
{
	return l == STORE_KVBM ? "kvbm" : l == STORE_VLLM_DISK ? "vllm-disk" : "lmcache-rawblock";
}

/* ---- payloads ---- */

void store_payload(void *buf, uint64_t key, uint64_t version, uint64_t off, uint64_t bytes)
{
	uint64_t *w = buf, seed = aio_mix64(key ^ aio_mix64(version));
	for (uint64_t p = off; p < off + bytes; p += SECTOR, w += SECTOR / 8) {
		uint64_t stamp[4] = {PAYLOAD_MAGIC, key, version, p};
		aio_sector_fill(w, stamp, 4, aio_mix64(seed ^ p));
	}
}

/* The rawblock slot header: LMCache's magic, identity and payload length (bytes 0..24), then
 * ours: version, kind, slot offset; zeros to 4 KiB. */
static void header(void *buf, const struct aio_ctx *c, uint64_t off)
{
	uint64_t *w = buf;
	memset(buf, 0, STORE_HEADER_BYTES);
	memcpy(buf, STORE_HDR_MAGIC, 8);
	w[1] = c->w[0];
	w[2] = c->w[3];
	w[3] = c->w[1];
	w[4] = c->w[2] & 0xff;
	w[5] = off;
}

static const char *kind_name(uint64_t k)
{
	return k == OBJ_LINEAR ? "state" : "chunk";
}

static void fill(void *arg, void *buf, const struct blk_io *io, const struct aio_ctx *c)
{
	(void)arg;
	if (c->w[2] & CTX_HEADER)
		header(buf, c, io->lba * SECTOR);
	else if (c->w[2] & CTX_META) { /* header block, then the index (not read back) */
		uint64_t *w = buf;
		memset(buf, 0, STORE_ALIGN);
		memcpy(buf, STORE_IDX_MAGIC, 8);
		w[1] = 1;       /* format version */
		w[2] = c->w[1]; /* seq */
		w[3] = c->w[3]; /* payload bytes */
		store_payload((char *)buf + STORE_ALIGN, 0, c->w[1], 0, io->bytes - STORE_ALIGN);
	} else
		store_payload(buf, c->w[0], c->w[1], 0, io->bytes);
}

static int check(void *arg, const void *buf, const struct blk_io *io, const struct aio_ctx *c,
                 char *msg, size_t len)
{
	(void)arg;
	uint64_t key = c->w[0], ver = c->w[1], sec[SECTOR / 8];
	const char *kind = kind_name(c->w[2] & 0xff);
	for (uint64_t p = 0; p < io->bytes; p += SECTOR) {
		const uint64_t *w = (const uint64_t *)((const char *)buf + p);
		store_payload(sec, key, ver, p, SECTOR);
		if (!memcmp(w, sec, SECTOR))
			continue;
		if (w[0] == PAYLOAD_MAGIC && (w[1] != key || w[2] != ver || w[3] != p))
			return fg_err(msg, len,
			              "%s %#" PRIx64 " v%" PRIu64 " at byte %" PRIu64
			              ": found %s %#" PRIx64 " v%" PRIu64 " (its byte %" PRIu64 ")",
			              kind, key, ver, io->lba * SECTOR + p,
			              w[1] == key ? "an older copy of" : "object", w[1], w[2], w[3]);
		return fg_err(msg, len,
		              "%s %#" PRIx64 " v%" PRIu64 " at byte %" PRIu64 ": the data differs%s",
		              kind, key, ver, io->lba * SECTOR + p,
		              w[0] == PAYLOAD_MAGIC ? " (right stamp, wrong contents)" : "");
	}
	return 0;
}

/* ---- I/O ---- */

/* pid: a write's placement ID, or -1 */
static int submit(struct store *st, char op, uint64_t off, uint64_t bytes, uint64_t t_ns,
                  const struct aio_ctx *c, int32_t pid)
{
	struct blk_io io = {.t_ns = t_ns, .lba = off / SECTOR, .bytes = bytes, .op = op,
	                    .placed = pid >= 0, .pid = pid >= 0 ? (uint16_t)pid : 0};
	char pf[16] = "";
	if (st->o.placement && pid >= 0)
		snprintf(pf, sizeof(pf), ",%d", pid);
	else if (st->o.placement)
		strcpy(pf, ",");
	if (st->rec && fprintf(st->rec, "%" PRIu64 ",%c,%" PRIu64 ",%" PRIu64 "%s\n", t_ns, op,
	                       io.lba, bytes, pf) < 0) {
		fg_err(st->err, sizeof(st->err), "%s: cannot write the record", st->o.record);
		return -1;
	}
	if (aio_target_submit_ctx(st->t, &io, c, st->err, sizeof(st->err)))
		return -1;
	return 0;
}

/* A put's placement ID: its class's, given from the pool when the class is first written
 * (LMCache: _get_or_assign_fdp_bucket_placement_id); -1 without placement or when none is
 * left. */
static int32_t put_pid(struct store *st, const struct kv_io *e)
{
	if (!st->o.placement)
		return -1;
	unsigned k = kv_stream(st->cfg, e->kind, e->session);
	if (k >= st->st.nclasses)
		k = st->st.nclasses - 1;
	if (st->st.class_pid[k] < 0 && st->next_pid < st->npool)
		st->st.class_pid[k] = st->pool[st->next_pid++];
	if (st->st.class_pid[k] < 0)
		st->st.unplaced_puts++;
	else
		st->st.placed_puts++;
	return st->st.class_pid[k];
}

/* One object's I/O. */
static int object_io(struct store *st, const struct kv_io *e, uint64_t t_ns)
{
	uint64_t off = st->base + e->lba, hdr = st->layout == STORE_LMCACHE_RAWBLOCK
	                                                ? STORE_HEADER_BYTES
	                                                : 0;
	struct aio_ctx c = {{e->key, 0, e->kind, e->size}};
	uint64_t *v = u64map_upsert(&st->ver, e->key, 0);
	if (!v)
		return fg_err(st->err, sizeof(st->err), "out of memory");
	switch (e->op) {
	case KV_IO_WRITE:
		c.w[1] = ++*v;
		int32_t pid = put_pid(st, e); /* the header and the payload alike */
		st->st.puts++;
		st->st.object_write_bytes += e->slot_bytes;
		st->live++;
		st->dirty = true;
		if (hdr) { /* LMCache: the header, then the payload, as two writes */
			c.w[2] |= CTX_HEADER;
			if (submit(st, 'W', off, hdr, t_ns, &c, pid))
				return -1;
			c.w[2] &= ~(uint64_t)CTX_HEADER;
		}
		return submit(st, 'W', off + hdr, e->slot_bytes - hdr, t_ns, &c, pid);
	case KV_IO_READ:
	case KV_IO_PROBE:
		if (!*v)
			return fg_err(st->err, sizeof(st->err),
			              "internal: a read of %s %#" PRIx64 ", which was never written",
			              kind_name(e->kind), e->key);
		c.w[1] = *v;
		if (e->op == KV_IO_PROBE)
			st->st.probes++;
		else
			st->st.gets++;
		st->st.verified++;
		st->st.object_read_bytes += e->slot_bytes - hdr;
		return submit(st, 'R', off + hdr, e->slot_bytes - hdr, t_ns, &c, -1);
	case KV_IO_TRIM:
		st->live--;
		st->st.evictions++;
		st->dirty = true;
		if (!st->o.trim)
			return 0; /* LMCache frees the slot in memory only */
		st->st.trims++;
		return submit(st, 'D', off, e->slot_bytes, t_ns, &c, -1);
	}
	return fg_err(st->err, sizeof(st->err), "internal: I/O op %c", e->op);
}

/* rawblock: write the index to the next copy (payload, then header, as LMCache does), if it
 * changed. The payload's size follows the index (32 bytes an object); it is not read back. */
static int checkpoint(struct store *st, uint64_t t_ns, bool force)
{
	if (st->layout != STORE_LMCACHE_RAWBLOCK || (!st->dirty && !force))
		return 0;
	uint64_t body = st->live * 32, bytes = (body + STORE_ALIGN - 1) / STORE_ALIGN * STORE_ALIGN;
	st->dirty = false;
	if (STORE_ALIGN + bytes > st->copy_bytes) {
		st->st.checkpoints_skipped++;
		return 0;
	}
	uint64_t seq = ++st->ckpt_seq, off = ((seq - 1) % 2) * st->copy_bytes;
	struct aio_ctx c = {{0, seq, CTX_META, body}};
	st->st.checkpoints++;
	st->st.meta_write_bytes += STORE_ALIGN + bytes;
	/* one write: LMCache submits the payload and then the header in one call; here they are
	 * one I/O, header block first */
	return submit(st, 'W', off, STORE_ALIGN + bytes, t_ns, &c, -1); /* (no ID: LMCache's default) */
}

static int sink_io(void *arg, const struct kv_io *e)
{
	struct store *st = arg;
	if (vec_reserve(st->ev, st->evcap, st->nev + 1))
		return fg_err(st->err, sizeof(st->err), "out of memory");
	st->ev[st->nev++] = *e;
	return 0;
}

/*
 * Capture mode: a state's write goes right after its chunk's I/O (docs/lift.md), so that lift
 * can tell which chunk a state hangs from. Only when the request evicted nothing: a TRIM between
 * them could free the slot the state was given.
 */
static void walk_order(struct store *st, uint64_t from)
{
	for (uint64_t i = from; i < st->nev; i++)
		if (st->ev[i].op == KV_IO_TRIM)
			return;
	for (uint64_t i = from; i < st->nev; i++) {
		if (st->ev[i].op != KV_IO_WRITE || st->ev[i].kind != OBJ_LINEAR)
			continue;
		uint64_t anchor = st->ev[i].key & ~KV_LINEAR_BIT, j = i;
		while (j > from && !(st->ev[j - 1].kind == OBJ_FULL && st->ev[j - 1].key == anchor))
			j--;
		if (j == from && !(st->ev[from].kind == OBJ_FULL && st->ev[from].key == anchor))
			continue; /* its chunk did no I/O here: leave it */
		if (j == i)
			continue;
		struct kv_io s = st->ev[i];
		memmove(st->ev + j + 1, st->ev + j, (i - j) * sizeof(*st->ev));
		st->ev[j] = s;
		st->st.reordered++;
	}
}

/* Emit the window's requests (st->ev[wbeg[j] .. wbeg[j + 1])), each followed right away by its
 * fence. One request: in order. Several (--concurrency): interleaved one I/O each in turn, as concurrent
 * requests would be, except that a read waits for an earlier request's write of the same
 * object; a window with an eviction is emitted in order (a slot freed and refilled must not be
 * reordered). Each I/O is stamped with the latest start time of the requests begun so far, so
 * the record's time never goes back and each request's first I/O carries its own time. */
static int flush_window(struct store *st)
{
	const uint64_t m = st->nwin;
	bool serial = m == 1;
	st->wbeg[m] = st->nev;
	for (uint64_t i = 0; i < st->nev && !serial; i++)
		serial = st->ev[i].op == KV_IO_TRIM;
	if (!serial) {
		st->st.windows_interleaved++;
		u64map_free(&st->wmap);
		if (u64map_init(&st->wmap, 256))
			return fg_err(st->err, sizeof(st->err), "out of memory");
		for (uint64_t j = 0; j < m; j++) /* key -> the last request (+1) of the window writing it */
			for (uint64_t i = st->wbeg[j]; i < st->wbeg[j + 1]; i++)
				if (st->ev[i].op == KV_IO_WRITE && u64map_put(&st->wmap, st->ev[i].key, j + 1))
					return fg_err(st->err, sizeof(st->err), "out of memory");
	}
	uint64_t left = m, tmax = 0;
	for (uint64_t j = 0; j < m; j++)
		st->wcur[j] = st->wbeg[j];
	while (left) {
		for (uint64_t j = 0; j < m; j++) {
			uint64_t c = st->wcur[j], end = st->wbeg[j + 1];
			if (c > end)
				continue; /* done, fence sent */
			if (c < end) {
				const struct kv_io *e = &st->ev[c];
				if (!serial && (e->op == KV_IO_READ || e->op == KV_IO_PROBE)) {
					uint64_t w = u64map_get(&st->wmap, e->key);
					/* written in the window by an earlier request: wait for that write */
					if (w != U64MAP_EMPTY && w - 1 < j && st->wpend[w - 1] &&
					    st->wcur[w - 1] <= st->wlast[w - 1])
						continue;
				}
				if (st->wt[j] > tmax)
					tmax = st->wt[j];
				if (object_io(st, e, tmax))
					return -1;
				c = ++st->wcur[j];
			}
			if (c == end) { /* its last I/O is out: the fence, right after it */
				if (st->wt[j] > tmax)
					tmax = st->wt[j];
				if (st->o.capture && !st->o.no_fences && end > st->wbeg[j]) {
					st->st.fences++;
					if (submit(st, 'F', 0, 0, tmax, NULL, -1))
						return -1;
				}
				st->wcur[j] = end + 1;
				left--;
			} else if (serial)
				j--; /* serial: finish this request first */
		}
	}
	st->nev = 0;
	st->nwin = 0;
	return 0;
}

static int sink_end_(struct store *st, const struct kv_request *rq)
{
	uint64_t t_ns = rq->t > 0 ? (uint64_t)(rq->t * 1e9) : 0, j = st->nwin;
	st->t_last_ns = t_ns;
	if (st->o.capture)
		walk_order(st, st->wbeg[j]);
	st->wt[j] = t_ns;
	/* the last write of the request, for the window's read-after-write rule */
	st->wpend[j] = false;
	for (uint64_t i = st->wbeg[j]; i < st->nev; i++)
		if (st->ev[i].op == KV_IO_WRITE) {
			st->wlast[j] = i;
			st->wpend[j] = true;
		}
	st->nwin++;
	if (st->nwin < st->window) {
		st->wbeg[st->nwin] = st->nev;
		return 0;
	}
	if (flush_window(st))
		return -1;
	st->wbeg[0] = 0;
	if (rq->t >= st->last_ckpt + st->ckpt_s) {
		if (checkpoint(st, t_ns, false))
			return -1;
		st->last_ckpt = rq->t;
	}
	return 0;
}

static int sink_end(void *arg, const struct kv_request *rq)
{
	struct store *st = arg;
	if (sink_end_(st, rq)) {
		st->failed = true;
		return -1;
	}
	return 0;
}

/* ---- open / close ---- */

/* The layout's geometry: where the data region starts, and the simulator's slots. */
static int fit_layout(struct store *st, struct kv_config *cfg, char *err, size_t errlen)
{
	const struct store_opts *o = &st->o;
	if (cfg->alloc != KV_ALLOC_SLOTS)
		return fg_err(err, errlen, "--target needs --alloc slots: every layout is a slot store");
	if (o->layout == STORE_LMCACHE_RAWBLOCK) {
		st->meta = o->meta_bytes ? o->meta_bytes : STORE_META_DEF;
		if (st->meta % (2 * STORE_ALIGN))
			return fg_err(err, errlen,
			              "--meta %" PRIu64 ": must be a multiple of 8 KiB (two 4 KiB-aligned "
			              "copies)",
			              st->meta);
		st->copy_bytes = st->meta / 2;
		st->base = st->meta;
		cfg->slot_header = STORE_HEADER_BYTES;
		cfg->slot_align[0] = cfg->slot_align[1] = STORE_ALIGN;
		cfg->slot_fifo = false;
		return 0;
	}
	const char *name = store_layout_name(o->layout);
	if (o->meta_bytes)
		return fg_err(err, errlen, "--meta: the %s layout has no metadata region", name);
	if (!o->chunk_bytes)
		return fg_err(err, errlen, "internal: %s needs the chunk size", name);
	/* kvbm: block_stride = align_up(block bytes, alignment), 4 KiB for O_DIRECT. vllm-disk:
	 * the slot is the block's bytes, which vLLM asserts to be a multiple of 4 KiB; its open
	 * PR #52678 pads them to it instead, as here, so that any model runs */
	uint64_t stride = (o->chunk_bytes + STORE_ALIGN - 1) / STORE_ALIGN * STORE_ALIGN;
	cfg->slot_header = 0;
	cfg->slot_align[0] = cfg->slot_align[1] = stride;
	cfg->slot_fifo = true;
	if (o->layout == STORE_VLLM_DISK) {
		/* BlockPool reserves block 0 as its null block (the free queue's first popleft), so
		 * the file's first slot is a hole and the tier starts one slot in; its free queue
		 * starts with every block in id order and takes freed ones back at the tail */
		st->base = stride;
		cfg->slot_fresh_first = true;
	}
	return 0;
}

/* Placement: the device's non-zero placement IDs (LMCache keeps 0 for the writes without
 * one), and the classes. */
static int open_placement(struct store *st, const struct kv_config *cfg, char *err, size_t errlen)
{
	struct aio_target_stats a;
	uint16_t ids[128];
	aio_target_stats(st->t, &a);
	if (!a.passthrough)
		return fg_err(err, errlen,
		              "--target %s: FDP placement IDs (--streams) go through io_uring NVMe "
		              "passthrough: give the namespace's generic device (/dev/ngXnY)",
		              st->o.target);
	int n = aio_target_placement_ids(st->t, ids, 128, err, errlen);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++)
		if (ids[i])
			st->pool[st->npool++] = ids[i];
	if (!st->npool)
		return fg_err(err, errlen,
		              "--target %s: the namespace reports %s: --streams needs FDP with at least "
		              "two placement IDs (0 stays for the writes without one)",
		              st->o.target, n ? "placement ID 0 only" : "no FDP placement IDs");
	st->cfg = cfg;
	st->st.nclasses = kv_streams(cfg) < 64 ? kv_streams(cfg) : 64;
	st->st.npids = st->npool;
	for (unsigned k = 0; k < 64; k++)
		st->st.class_pid[k] = -1;
	return 0;
}

struct store *store_open(const struct store_opts *o, struct kv_config *cfg, char *err,
                         size_t errlen)
{
	struct store *st = calloc(1, sizeof(*st));
	if (!st) {
		fg_err(err, errlen, "out of memory");
		return NULL;
	}
	st->o = *o;
	st->layout = o->layout;
	st->ckpt_s = o->checkpoint_s > 0 ? o->checkpoint_s : STORE_CHECKPOINT_S_DEF;
	st->last_ckpt = 0;
	st->window = o->concurrency ? o->concurrency : 1;
	st->wbeg = calloc(st->window + 1, sizeof(uint64_t));
	st->wcur = calloc(st->window, sizeof(uint64_t));
	st->wt = calloc(st->window, sizeof(uint64_t));
	st->wlast = calloc(st->window, sizeof(uint64_t));
	st->wpend = calloc(st->window, sizeof(bool));
	if (!st->wbeg || !st->wcur || !st->wt || !st->wlast || !st->wpend ||
	    u64map_init(&st->wmap, 16) || u64map_init(&st->ver, 1024)) {
		fg_err(err, errlen, "out of memory");
		goto fail;
	}
	if (fit_layout(st, cfg, err, errlen))
		goto fail;
	struct aio_target_opts ao = {.iodepth = o->iodepth,
	                             .speed = o->speed,
	                             .force = o->force,
	                             .progress = o->progress,
	                             .total_hint = o->total_hint};
	char e[1024];
	st->t = aio_target_open(o->target, &ao, e, sizeof(e));
	if (!st->t) {
		fg_err(err, errlen, "--target %s", e);
		goto fail;
	}
	struct aio_target_data d = {.fill = fill, .check = check, .arg = st};
	aio_target_set_data(st->t, &d);
	if (o->placement && open_placement(st, cfg, err, errlen))
		goto fail;
	uint64_t size = aio_target_size(st->t);
	if (size <= st->base) {
		fg_err(err, errlen,
		       "--target %s: %" PRIu64 " bytes leave no room after the %" PRIu64
		       "-byte metadata region",
		       o->target, size, st->base);
		goto fail;
	}
	if (!cfg->ssd_bytes)
		cfg->ssd_bytes = (size - st->base) / STORE_ALIGN * STORE_ALIGN;
	if (st->base + cfg->ssd_bytes > size) {
		fg_err(err, errlen,
		       "--ssd %" PRIu64 ": the %s target holds %" PRIu64 " bytes after the %" PRIu64
		       "-byte metadata region",
		       cfg->ssd_bytes, o->target, size - st->base, st->base);
		goto fail;
	}
	st->tier = cfg->ssd_bytes;
	if (o->record) {
		char why[512];
		if (fg_atomic_open(&st->rec_file, o->record, why, sizeof(why))) {
			fg_err(err, errlen, "--record %s", why);
			goto fail;
		}
		if (!(st->rec = fg_atomic_stream(&st->rec_file, why, sizeof(why)))) {
			fg_atomic_abort(&st->rec_file);
			fg_err(err, errlen, "--record %s", why);
			goto fail;
		}
	}
	if (st->rec)
		fputs(o->placement ? "time_ns,op,lba,bytes,pid\n" : "time_ns,op,lba,bytes\n", st->rec);
	st->sink = (struct kv_io_sink){.io = sink_io, .end = sink_end, .arg = st, .probe = o->capture};
	st->st.base = st->base;
	st->st.tier_bytes = st->tier;
	return st;
fail:
	store_free(st);
	return NULL;
}

const struct kv_io_sink *store_sink(struct store *st)
{
	return &st->sink;
}

const char *store_error(const struct store *st)
{
	return st->err;
}

int store_sync(struct store *st, char *err, size_t errlen)
{
	if (aio_target_drain(st->t, st->err, sizeof(st->err)))
		return fg_err(err, errlen, "%s", st->err);
	return 0;
}

int store_close(struct store *st, char *err, size_t errlen)
{
	int rc = 0;
	if (st->nwin && !st->failed && flush_window(st)) /* the last, partial window */
		rc = fg_err(err, errlen, "%s", st->err);
	st->nev = st->nwin = 0; /* a request that failed midway: its I/O was never submitted */
	if (!rc && (checkpoint(st, st->t_last_ns, true) ||
	            aio_target_drain(st->t, st->err, sizeof(st->err))))
		rc = fg_err(err, errlen, "%s", st->err);
	else if (rc)
		aio_target_drain(st->t, st->err, sizeof(st->err));
	struct aio_target_stats a;
	aio_target_stats(st->t, &a);
	st->st.ios = a.ios;
	st->st.read_bytes = a.read_bytes;
	st->st.write_bytes = a.write_bytes;
	st->st.discard_bytes = a.discard_bytes;
	st->st.flushes = a.flushes;
	st->st.seconds = a.seconds;
	st->st.lat_mean_us = a.lat_mean_us;
	st->st.lat_p99_us = a.lat_p99_us;
	if (st->rec) {
		char why[512];
		st->rec = NULL;
		if (rc)
			fg_atomic_abort(&st->rec_file); /* a failed run leaves no half trace */
		else if (fg_atomic_commit(&st->rec_file, why, sizeof(why)))
			rc = fg_err(err, errlen, "--record %s", why);
	}
	return rc;
}

void store_stats(const struct store *st, struct store_stats *out)
{
	*out = st->st;
}

void store_free(struct store *st)
{
	if (!st)
		return;
	aio_target_close(st->t);
	if (st->rec)
		fg_atomic_abort(&st->rec_file);
	u64map_free(&st->ver);
	u64map_free(&st->wmap);
	free(st->wbeg);
	free(st->wcur);
	free(st->wt);
	free(st->wlast);
	free(st->wpend);
	free(st->ev);
	free(st);
}
