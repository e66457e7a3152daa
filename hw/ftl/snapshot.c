/*
 * snapshot.c - save and load the whole FTL state.
 *
 * File layout (little-endian, same ABI as the writer; the header records the struct sizes and
 * a mismatch is refused rather than misread):
 *   header  magic "FGFTLSNP", version, struct sizes, body length, body CRC-32C, header CRC-32C
 *   body    the config as key=value text, then every table and scalar, each section prefixed by
 *           its length so that a mismatch is caught where it happens.
 * Saving goes through common/atomicfile (a temporary file beside PATH, fsync'd, renamed over
 * it, the directory fsync'd; a PATH that is a device or other non-regular file is refused): the
 * old file is intact until the new one is complete.
 * Loading checks magic, version, sizes, the exact file length and both CRCs before it trusts a
 * byte, then rebuilds the FTL and runs ftl_check() on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "atomicfile.h"
#include "err.h"
#include "ftl_int.h"
#include "parse.h"

#define MAGIC "FGFTLSNP"
#define VERSION 5u /* 2: per-plane timing, suspend and host link state; 3: the host tag;
                    * 4: per-stream (FDP handle) counters and FDP events; 5: wear attribution */
#define OLDEST 2u  /* the oldest version still read (a v2 file has no tag) */

struct hdr {
	char magic[8];
	uint32_t version;
	uint32_t sizes[4]; /* struct ftl_stats, gu, blk, slot */
	uint32_t pad;
	uint64_t body_len;
	uint32_t body_crc;
	uint32_t hdr_crc; /* over everything above */
};

struct wr {
	int fd;
	uint32_t crc;
	uint64_t len;
	int err;
};

static void put(struct wr *w, const void *p, uint64_t n)
{
	const char *c = p;
	w->crc = ftl_crc32c(w->crc, p, n);
	w->len += n;
	while (n && !w->err) {
		ssize_t k = write(w->fd, c, n > (1u << 30) ? (1u << 30) : n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			w->err = errno ? errno : EIO;
			return;
		}
		c += k;
		n -= (uint64_t)k;
	}
}

static void put_sec(struct wr *w, const void *p, uint64_t n)
{
	put(w, &n, sizeof(n));
	put(w, p, n);
}

#define SCALARS(X)                                                                          \
	X(min_bucket) X(nclosed) X(fifo_head) X(fifo_n) X(close_seq) X(nfree) X(nopen)      \
	X(nretired_gu) X(gc_futile) X(emin) X(emax) X(erase_sum) X(live_blocks)             \
	X(initial_spare_units) X(usable_units) X(bg_min_reclaim) X(wbuf_head) X(clock) X(host_busy) X(st) X(win_host)      \
	X(win_nand) X(win_erase) X(win_n) X(win_step) X(win_next) X(rng) X(wl_threshold)

static void body(const struct ftl *f, struct wr *w, const char *cfgtext)
{
	put_sec(w, cfgtext, strlen(cfgtext));
#define X(field) put_sec(w, &f->field, sizeof(f->field));
	SCALARS(X)
#undef X
	put_sec(w, f->l2p, f->l2p_bytes);
	ftl_p2l_materialize(f); /* p2l alone is the P2L the format stores */
	put_sec(w, f->p2l, f->p2l_bytes);
	put_sec(w, f->valid, f->valid_bytes);
	put_sec(w, f->blk, (uint64_t)f->g.blocks * sizeof(*f->blk));
	put_sec(w, f->gu, (uint64_t)f->g.gc_units * sizeof(*f->gu));
	put_sec(w, f->bucket, (uint64_t)(f->upg + 1) * sizeof(uint32_t));
	put_sec(w, f->closed, (uint64_t)f->g.gc_units * sizeof(uint32_t));
	if (f->fifo)
		put_sec(w, f->fifo, (uint64_t)2 * f->g.gc_units * sizeof(*f->fifo));
	for (uint32_t i = 0; i < f->npools; i++) {
		put_sec(w, &f->pool[i].n, sizeof(uint32_t));
		put_sec(w, f->pool[i].a, (uint64_t)f->pool[i].n * sizeof(uint32_t));
	}
	for (uint32_t i = 0; i < f->nfr; i++) {
		put_sec(w, &f->fr[i].gu, sizeof(uint32_t));
		put_sec(w, &f->fr[i].cur, sizeof(uint32_t));
		put_sec(w, &f->fr[i].used, sizeof(uint8_t));
		put_sec(w, f->fr[i].slot, (uint64_t)f->g.frontier_slots * sizeof(struct slot));
	}
	put_sec(w, &f->ehist_len, sizeof(f->ehist_len));
	put_sec(w, f->ehist, (uint64_t)f->ehist_len * sizeof(uint64_t));
	put_sec(w, f->lun_busy, (uint64_t)f->g.luns * sizeof(uint64_t));
	put_sec(w, f->lun_from, (uint64_t)f->g.luns * sizeof(uint64_t));
	put_sec(w, f->lun_susp, (uint64_t)f->g.luns * sizeof(uint64_t));
	put_sec(w, f->lun_kind, f->g.luns);
	put_sec(w, f->pl_busy, (uint64_t)f->g.planes * sizeof(uint64_t));
	put_sec(w, f->pl_susp, f->g.planes);
	put_sec(w, f->ch_busy, (uint64_t)f->ch * sizeof(uint64_t));
	put_sec(w, f->wbuf, (uint64_t)f->nwbuf * sizeof(uint64_t));
	put_sec(w, f->tag, sizeof(f->tag));
	put_sec(w, f->own_host, sizeof(f->own_host));
	put_sec(w, f->own_media, sizeof(f->own_media));
	put_sec(w, f->own_erased, sizeof(f->own_erased));
	put_sec(w, f->ev, sizeof(f->ev));
	put_sec(w, &f->ev_head, sizeof(f->ev_head));
	put_sec(w, &f->ev_n, sizeof(f->ev_n));
	put_sec(w, &f->ev_total, sizeof(f->ev_total));
	put_sec(w, f->ucls, f->ucls_bytes);
	put_sec(w, &f->attr, sizeof(f->attr));
	put_sec(w, &f->wcls, sizeof(f->wcls));
}

static void fill_hdr(struct hdr *h)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, MAGIC, 8);
	h->version = VERSION;
	h->sizes[0] = sizeof(struct ftl_stats);
	h->sizes[1] = sizeof(struct gu);
	h->sizes[2] = sizeof(struct blk);
	h->sizes[3] = sizeof(struct slot);
}

int ftl_snapshot_save(const struct ftl *f, const char *path, char *err, size_t errlen)
{
	char cfgtext[FTL_CONFIG_TEXT_MAX];
	struct hdr h;
	struct wr w = {0};

	/* a cut config would load as a different drive: refuse before touching the file */
	if (ftl_config_format(&f->cfg, cfgtext, sizeof(cfgtext)) >= sizeof(cfgtext))
		return fg_err_rc(err, errlen, FTL_E_INVAL,
		                 "%s: the drive's config is longer than %d bytes", path,
		                 FTL_CONFIG_TEXT_MAX - 1);
	struct fg_atomic a;
	if (fg_atomic_open(&a, path, err, errlen))
		return FTL_E_IO;
	w.fd = a.fd;
	/* header placeholder, then the body, then the real header */
	fill_hdr(&h);
	put(&w, &h, sizeof(h));
	w.crc = 0;
	w.len = 0;
	body(f, &w, cfgtext);
	h.body_len = w.len;
	h.body_crc = w.crc;
	h.hdr_crc = ftl_crc32c(0, &h, offsetof(struct hdr, hdr_crc));
	if (!w.err && pwrite(w.fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h))
		w.err = errno ? errno : EIO;
	if (w.err) {
		snprintf(err, errlen, "%s: cannot write snapshot: %s (existing file left unchanged)", path,
		         strerror(w.err));
		fg_atomic_abort(&a);
		return FTL_E_IO;
	}
	if (fg_atomic_commit(&a, err, errlen))
		return FTL_E_IO;
	return FTL_OK;
}

struct rd {
	const uint8_t *p;
	uint64_t left;
	int bad;
	const char *what;
};

static void get_sec(struct rd *r, void *dst, uint64_t n, const char *what)
{
	uint64_t len;
	if (r->bad)
		return;
	if (r->left < sizeof(len) + n) {
		r->bad = 1;
		r->what = what;
		return;
	}
	memcpy(&len, r->p, sizeof(len));
	if (len != n) {
		r->bad = 2;
		r->what = what;
		return;
	}
	memcpy(dst, r->p + sizeof(len), n);
	r->p += sizeof(len) + n;
	r->left -= sizeof(len) + n;
}

/* Version 4's per-stream counters and FDP events (an older file: none, see below). */
static void get_streams(struct rd *r, struct ftl *f, uint32_t version)
{
	if (version < 4) {
		/* older drives did not record who opened a GC unit: the shared GC frontier's, and
		 * the per-stream counters start at this load (docs/fdp.md) */
		for (uint32_t g = 0; g < f->g.gc_units; g++)
			f->gu[g].owner = (uint16_t)f->cfg.host_streams;
		return;
	}
	get_sec(r, f->own_host, sizeof(f->own_host), "stream counters");
	get_sec(r, f->own_media, sizeof(f->own_media), "stream counters");
	get_sec(r, f->own_erased, sizeof(f->own_erased), "stream counters");
	get_sec(r, f->ev, sizeof(f->ev), "fdp events");
	get_sec(r, &f->ev_head, sizeof(f->ev_head), "fdp events");
	get_sec(r, &f->ev_n, sizeof(f->ev_n), "fdp events");
	get_sec(r, &f->ev_total, sizeof(f->ev_total), "fdp events");
	if (!r->bad && (f->ev_head >= FTL_FDP_EVENTS || f->ev_n > FTL_FDP_EVENTS)) {
		r->bad = 2;
		r->what = "fdp events";
	}
}

/*
 * Every attribution byte names a class the drive has (at most FTL_CLASSES) and no bits but
 * UCLS_MOVED and UCLS_TRIMMED besides: the erase counts by them (stats.c). Eight bytes at a
 * time: a byte's low nibble plus 11 carries into 0x10 exactly when the class is above 4.
 */
static bool ucls_ok(const uint8_t *u, uint64_t n)
{
	_Static_assert(FTL_CLASSES == 4 && UCLS_CLS == 0x0f, "ucls_ok() tests for classes 0-4");
	const uint64_t ones = 0x0101010101010101ull;
	uint64_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, u + i, 8);
		if ((w & 0x30 * ones) || (((w & 0x0f * ones) + 0x0b * ones) & 0x10 * ones))
			return false;
	}
	for (; i < n; i++)
		if ((u[i] & 0x30) || (u[i] & UCLS_CLS) > FTL_CLASSES)
			return false;
	return true;
}

/*
 * Version 5's wear attribution. An older file has none: every unit programmed since its
 * block's erase, or mapped in a page still open, is taken as class 0's, and what the drive did before the load is charged to
 * class 0 (its programs by cause, its erases as overwritten data, its GC copies to no cause),
 * so that the sums still add up to the totals (docs/ftl.md, "Wear attribution").
 */
static void get_attribution(struct rd *r, struct ftl *f, uint32_t version)
{
	if (version >= 5) {
		get_sec(r, f->ucls, f->ucls_bytes, "wear attribution");
		get_sec(r, &f->attr, sizeof(f->attr), "wear attribution");
		get_sec(r, &f->wcls, sizeof(f->wcls), "wear attribution");
		if (!r->bad && (f->wcls >= FTL_CLASSES || !ucls_ok(f->ucls, f->ucls_bytes))) {
			r->bad = 2;
			r->what = "wear attribution";
		}
		return;
	}
	for (uint32_t b = 0; b < f->g.blocks; b++)
		if (!f->blk[b].bad && f->blk[b].wp <= f->ppb)
			memset(f->ucls + (uint64_t)b * f->upb, 1, (uint64_t)f->blk[b].wp * f->upp);
	for (uint64_t u = 0; u < f->g.phys_units; u++) /* (and the open pages' mapped units) */
		if (bit_get(f->valid, u))
			f->ucls[u] = 1;
	struct ftl_attribution *a = &f->attr;
	a->prog[0][FTL_ATTR_HOST] = f->st.host_prog_bytes;
	a->prog[0][FTL_ATTR_GC] = f->st.gc_prog_bytes;
	a->prog[0][FTL_ATTR_WL] = f->st.wl_prog_bytes;
	a->pad_bytes = f->st.pad_prog_bytes;
	a->erased[0][FTL_ATTR_OVERWRITTEN] = f->st.erases * f->upb * f->cfg.unit_size;
	a->gc_uncaused_bytes = f->st.gc_prog_bytes;
}

static int load_fail(char *err, size_t errlen, const char *path, const char *why)
{
	snprintf(err, errlen, "%s: %s", path, why);
	return FTL_E_CORRUPT;
}

struct ftl *ftl_snapshot_load(const char *path, char *err, size_t errlen)
{
	struct hdr h, want;
	struct stat sb;
	struct ftl *f = NULL;
	uint8_t *buf = NULL;
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		snprintf(err, errlen, "%s: cannot open snapshot: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &sb) || (size_t)sb.st_size < sizeof(h) || pread(fd, &h, sizeof(h), 0) != sizeof(h)) {
		load_fail(err, errlen, path, "not a snapshot (too short to hold a header)");
		goto out;
	}
	fill_hdr(&want);
	if (memcmp(h.magic, MAGIC, 8)) {
		load_fail(err, errlen, path, "not a femu-gandalf FTL snapshot (bad magic)");
		goto out;
	}
	if (h.hdr_crc != ftl_crc32c(0, &h, offsetof(struct hdr, hdr_crc))) {
		load_fail(err, errlen, path, "header checksum mismatch (corrupted)");
		goto out;
	}
	if (h.version < OLDEST || h.version > VERSION || memcmp(h.sizes, want.sizes, sizeof(h.sizes))) {
		snprintf(err, errlen, "%s: snapshot version %u / layout not supported by this build (want %u)",
			 path, h.version, VERSION);
		goto out;
	}
	if ((uint64_t)sb.st_size != sizeof(h) + h.body_len) {
		snprintf(err, errlen, "%s: truncated or extended: %lld bytes, header says %llu", path,
			 (long long)sb.st_size, (unsigned long long)(sizeof(h) + h.body_len));
		goto out;
	}
	buf = ftl_big_alloc(h.body_len);
	if (!buf) {
		snprintf(err, errlen, "%s: out of memory for %llu bytes", path, (unsigned long long)h.body_len);
		goto out;
	}
	for (uint64_t got = 0; got < h.body_len;) {
		ssize_t k = pread(fd, buf + got, h.body_len - got > (1u << 30) ? (1u << 30) : h.body_len - got,
				  (off_t)(sizeof(h) + got));
		if (k <= 0) {
			snprintf(err, errlen, "%s: read failed: %s", path, k ? strerror(errno) : "short read");
			goto out;
		}
		got += (uint64_t)k;
	}
	if (ftl_crc32c(0, buf, h.body_len) != h.body_crc) {
		load_fail(err, errlen, path, "body checksum mismatch (corrupted)");
		goto out;
	}

	/* config text -> config -> a fresh FTL of that shape, then overwrite its state */
	struct rd r = {buf, h.body_len, 0, NULL};
	uint64_t clen;
	memcpy(&clen, r.p, sizeof(clen));
	if (clen >= FTL_CONFIG_TEXT_MAX || clen + 8 > r.left) {
		load_fail(err, errlen, path, "bad config section");
		goto out;
	}
	char text[FTL_CONFIG_TEXT_MAX], *save;
	memcpy(text, r.p + 8, clen);
	text[clen] = 0;
	r.p += 8 + clen;
	r.left -= 8 + clen;
	struct ftl_config cfg;
	ftl_config_default(&cfg);
	cfg.op_percent = cfg.spare_factor = -1;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *key, *val, e2[256];
		if (fg_keyval_split(line, 0, &key, &val)) {
			load_fail(err, errlen, path, "bad config line");
			goto out;
		}
		if (ftl_config_set(&cfg, key, val, e2, sizeof(e2))) {
			snprintf(err, errlen, "%s: config in snapshot: %s", path, e2);
			goto out;
		}
	}
	f = ftl_create(&cfg, err, errlen);
	if (!f)
		goto out;
	/* forget the fresh pools: the snapshot's replace them */
#define X(field) get_sec(&r, &f->field, sizeof(f->field), #field);
	SCALARS(X)
#undef X
	get_sec(&r, f->l2p, f->l2p_bytes, "l2p");
	get_sec(&r, f->p2l, f->p2l_bytes, "p2l");
	get_sec(&r, f->valid, f->valid_bytes, "valid");
	get_sec(&r, f->blk, (uint64_t)f->g.blocks * sizeof(*f->blk), "blocks");
	get_sec(&r, f->gu, (uint64_t)f->g.gc_units * sizeof(*f->gu), "gc units");
	get_sec(&r, f->bucket, (uint64_t)(f->upg + 1) * sizeof(uint32_t), "buckets");
	get_sec(&r, f->closed, (uint64_t)f->g.gc_units * sizeof(uint32_t), "closed");
	if (f->fifo)
		get_sec(&r, f->fifo, (uint64_t)2 * f->g.gc_units * sizeof(*f->fifo), "fifo");
	for (uint32_t i = 0; i < f->npools && !r.bad; i++) {
		uint32_t n = 0;
		get_sec(&r, &n, sizeof(n), "pool size");
		if (n > f->g.gc_units / f->npools + 1) {
			r.bad = 2;
			r.what = "pool size";
			break;
		}
		f->pool[i].n = n;
		get_sec(&r, f->pool[i].a, (uint64_t)n * sizeof(uint32_t), "pool");
	}
	for (uint32_t i = 0; i < f->nfr; i++) {
		get_sec(&r, &f->fr[i].gu, sizeof(uint32_t), "frontier");
		get_sec(&r, &f->fr[i].cur, sizeof(uint32_t), "frontier");
		get_sec(&r, &f->fr[i].used, sizeof(uint8_t), "frontier");
		get_sec(&r, f->fr[i].slot, (uint64_t)f->g.frontier_slots * sizeof(struct slot), "slots");
	}
	uint32_t elen = 0;
	get_sec(&r, &elen, sizeof(elen), "erase histogram");
	if (!r.bad && elen > f->ehist_len) {
		uint64_t *nh = realloc(f->ehist, (uint64_t)elen * sizeof(uint64_t));
		if (!nh) {
			r.bad = 2;
			r.what = "erase histogram";
		} else {
			f->ehist = nh;
		}
	}
	if (!r.bad)
		f->ehist_len = elen;
	get_sec(&r, f->ehist, (uint64_t)elen * sizeof(uint64_t), "erase histogram");
	get_sec(&r, f->lun_busy, (uint64_t)f->g.luns * sizeof(uint64_t), "lun timing");
	get_sec(&r, f->lun_from, (uint64_t)f->g.luns * sizeof(uint64_t), "lun timing");
	get_sec(&r, f->lun_susp, (uint64_t)f->g.luns * sizeof(uint64_t), "lun timing");
	get_sec(&r, f->lun_kind, f->g.luns, "lun timing");
	get_sec(&r, f->pl_busy, (uint64_t)f->g.planes * sizeof(uint64_t), "plane timing");
	get_sec(&r, f->pl_susp, f->g.planes, "plane timing");
	get_sec(&r, f->ch_busy, (uint64_t)f->ch * sizeof(uint64_t), "channel timing");
	get_sec(&r, f->wbuf, (uint64_t)f->nwbuf * sizeof(uint64_t), "write buffer");
	if (h.version >= 3)
		get_sec(&r, f->tag, sizeof(f->tag), "tag");
	get_streams(&r, f, h.version);
	get_attribution(&r, f, h.version);
	if (!r.bad && memchr(f->tag, 0, sizeof(f->tag)) == NULL) {
		r.bad = 2;
		r.what = "tag";
	}
	if (r.bad || r.left) {
		snprintf(err, errlen, "%s: section '%s' does not match the config", path,
			 r.bad ? r.what : "trailing data");
		goto fail;
	}
	/* indices inside the state must be in range before ftl_check() follows them */
	for (uint32_t i = 0; i < f->nfr; i++) {
		if (f->fr[i].cur >= f->g.frontier_slots || (f->fr[i].gu != NONE && f->fr[i].gu >= f->g.gc_units))
			goto inconsistent;
		for (uint32_t j = 0; j < f->g.frontier_slots; j++)
			if (f->fr[i].slot[j].gblk != NONE && (f->fr[i].slot[j].gblk >= f->g.blocks ||
							      f->fr[i].slot[j].page >= f->ppb))
				goto inconsistent;
	}
	for (uint32_t g = 0; g < f->g.gc_units; g++)
		if (f->gu[g].state > GU_RETIRED || f->gu[g].pool >= f->npools ||
		    f->gu[g].owner > f->cfg.host_streams)
			goto inconsistent;
	for (uint32_t i = 0; i < f->npools; i++)
		for (uint32_t k = 0; k < f->pool[i].n; k++)
			if (f->pool[i].a[k] >= f->g.gc_units)
				goto inconsistent;
	for (uint32_t k = 0; k <= f->upg; k++)
		if (f->bucket[k] != NONE && f->bucket[k] >= f->g.gc_units)
			goto inconsistent;
	if (f->nclosed > f->g.gc_units || f->emin >= f->ehist_len || f->emax >= f->ehist_len ||
	    f->wbuf_head >= f->nwbuf)
		goto inconsistent;
	for (uint32_t i = 0; i < f->nclosed; i++)
		if (f->closed[i] >= f->g.gc_units)
			goto inconsistent;
	char why[256];
	if (ftl_check(f, why, sizeof(why))) {
		snprintf(err, errlen, "%s: snapshot state is inconsistent: %s", path, why);
		goto fail;
	}
	goto out;
inconsistent:
	snprintf(err, errlen, "%s: snapshot state has out-of-range indices", path);
fail:
	ftl_destroy(f);
	f = NULL;
out:
	if (buf)
		ftl_big_free(buf, h.body_len);
	close(fd);
	return f;
}
