/*
 * check.c - ftl_check(): verify every invariant of the FTL state, in O(metadata).
 *
 * Tests call it after randomized write/trim/GC/WL sequences (SQLite-style: every invariant in one
 * place). It checks:
 *   - L2P and P2L agree: each mapped lpn points at a valid unit whose p2l names it back;
 *   - a valid unit's attribution byte names a class and neither way of leaving;
 *   - each valid unit is mapped by exactly one lpn (no unit mapped twice, no valid orphan);
 *   - per-GC-unit valid counts equal the popcount of the bitmap over the unit;
 *   - free, open, closed and retired GC units add up, and each is where its state says;
 *   - free and retired units hold no valid data; bad blocks hold none either;
 *   - the erase histogram matches the blocks; erase counts sum correctly;
 *   - counters are coherent: nand = host + gc + wl + pad program bytes.
 * Erase counts never decreasing is checked by the tests across calls (they only increment).
 */
#include <stdlib.h>

#include "err.h"
#include "ftl_int.h"

/* The stripe certificates of page s of GC unit g (row r, member m; first unit u0). */
static int check_certificate(const struct ftl *f, uint64_t g, uint64_t r, uint64_t m, char *err,
                             size_t len)
{
	uint64_t s = (g * f->ppb + r) * f->bpg + m, u0 = (g * f->bpg + m) * f->upb + r * f->upp;
	if (bit_get(f->sp_whole, s))
		for (uint64_t i = 0; i < f->upp; i++)
			if (!bit_get(f->valid, u0 + i) ||
			    p2l_get(f, (uint32_t)(u0 + i)) != p2l_get(f, (uint32_t)u0) + i)
				return fg_err(err, len, "page of unit %llu is certified whole but "
				              "unit %llu is not in its place",
				              (unsigned long long)u0, (unsigned long long)(u0 + i));
	if (!bit_get(f->sp_cont, s))
		return 0;
	if (!r && !m)
		return fg_err(err, len, "the first page of GC unit %llu is certified to continue "
		              "a page", (unsigned long long)g);
	uint64_t pm = m ? m - 1 : f->bpg - 1, pr = m ? r : r - 1;
	uint64_t prev = (g * f->bpg + pm) * f->upb + pr * f->upp + f->upp - 1;
	uint32_t a0 = p2l_get(f, (uint32_t)u0), ap = p2l_get(f, (uint32_t)prev);
	if (!a0 || a0 != ap + 1)
		return fg_err(err, len, "page of unit %llu is certified to continue unit %llu but "
		              "p2l says %u after %u", (unsigned long long)u0,
		              (unsigned long long)prev, a0, ap);
	return 0;
}

/*
 * The records kept per NAND page: p2l_pg names only pages programmed since their block's
 * erase, and every stripe certificate set is true of the tables now.
 */
static int check_page_records(const struct ftl *f, char *err, size_t len)
{
	if (f->p2l_pg)
		for (uint64_t pg = 0; pg < (uint64_t)f->g.blocks * f->ppb; pg++) {
			const struct blk *k = &f->blk[pg / f->ppb];
			if (f->p2l_pg[pg] && (k->bad || pg % f->ppb >= k->wp))
				return fg_err(err, len, "page %llu of block %llu is recorded whole in "
				              "p2l_pg but not written", (unsigned long long)(pg % f->ppb),
				              (unsigned long long)(pg / f->ppb));
		}
	if (f->sp_whole)
		for (uint64_t g = 0; g < f->g.gc_units; g++)
			for (uint64_t r = 0; r < f->ppb; r++)
				for (uint64_t m = 0; m < f->bpg; m++) {
					int rc = check_certificate(f, g, r, m, err, len);
					if (rc)
						return rc;
				}
	return 0;
}

int ftl_check(const struct ftl *f, char *err, size_t len)
{
	uint64_t mapped = 0, valid_bits = 0;
	for (uint64_t lpn = 0; lpn < f->g.user_units; lpn++) {
		uint32_t m = f->l2p[lpn];
		if (!m)
			continue;
		uint32_t ppn = m - 1;
		if (ppn >= f->g.phys_units)
			return fg_err(err, len, "l2p[%llu]=%u past the physical end",
			              (unsigned long long)lpn, ppn);
		if (!bit_get(f->valid, ppn))
			return fg_err(err, len, "l2p[%llu]=%u but that unit is not valid",
			              (unsigned long long)lpn, ppn);
		if (p2l_get(f, ppn) != lpn + 1)
			return fg_err(err, len, "l2p[%llu]=%u but p2l[%u]=%u",
			              (unsigned long long)lpn, ppn, ppn, p2l_get(f, ppn) - 1);
		mapped++;
	}
	for (uint32_t g = 0; g < f->g.gc_units; g++) {
		uint64_t cnt = 0, base = (uint64_t)g * f->upg;
		for (uint64_t i = 0; i < f->upg; i++) {
			if (!bit_get(f->valid, base + i))
				continue;
			cnt++;
			uint32_t lpn = p2l_get(f, (uint32_t)(base + i));
			if (!lpn || lpn > f->g.user_units || f->l2p[lpn - 1] != base + i + 1)
				return fg_err(err, len,
				              "valid unit %llu is not mapped back (p2l=%u)",
				              (unsigned long long)(base + i), lpn);
			if (f->blk[(base + i) / f->upb].bad)
				return fg_err(err, len, "valid unit %llu lies in a retired block",
				              (unsigned long long)(base + i));
			uint8_t c = f->ucls[base + i];
			if (!(c & UCLS_CLS) || (c & UCLS_CLS) > FTL_CLASSES || (c & (UCLS_MOVED | UCLS_TRIMMED)))
				return fg_err(err, len, "valid unit %llu has attribution byte 0x%02x",
				              (unsigned long long)(base + i), c);
		}
		if (cnt != f->gu[g].valid)
			return fg_err(err, len, "GC unit %u: valid count %u, bitmap has %llu", g,
			              f->gu[g].valid, (unsigned long long)cnt);
		valid_bits += cnt;
	}
	if (valid_bits != mapped)
		return fg_err(err, len, "%llu valid units but %llu mapped lpns",
		              (unsigned long long)valid_bits, (unsigned long long)mapped);

	int rc = check_page_records(f, err, len);
	if (rc)
		return rc;

	/* GC unit states and the structures that hold them */
	uint32_t nfree = 0, nopen = 0, nclosed = 0, nret = 0;
	for (uint32_t g = 0; g < f->g.gc_units; g++) {
		const struct gu *u = &f->gu[g];
		uint32_t cap = 0, emax = 0;
		for (uint32_t i = 0; i < f->bpg; i++) {
			const struct blk *k = &f->blk[g * f->bpg + i];
			if (!k->bad) {
				cap += f->upb;
				if (k->erase > emax)
					emax = k->erase;
			}
		}
		if (cap != u->cap)
			return fg_err(err, len, "GC unit %u: cap %u, good blocks give %u", g,
			              u->cap, cap);
		switch (u->state) {
		case GU_FREE:
			nfree++;
			if (u->valid)
				return fg_err(err, len, "free GC unit %u holds %u valid units", g,
				              u->valid);
			if (u->pos >= f->pool[u->pool].n || f->pool[u->pool].a[u->pos] != g)
				return fg_err(err, len, "free GC unit %u not at its pool position",
				              g);
			if (u->erase != emax)
				return fg_err(err, len,
				              "free GC unit %u: erase key %u, blocks say %u", g,
				              u->erase, emax);
			break;
		case GU_OPEN: nopen++; break;
		case GU_CLOSED:
			nclosed++;
			if (u->pos >= f->nclosed || f->closed[u->pos] != g)
				return fg_err(err, len, "closed GC unit %u not in the closed set",
				              g);
			break;
		case GU_RETIRED:
			nret++;
			if (u->valid || u->cap)
				return fg_err(err, len,
				              "retired GC unit %u still has capacity or data", g);
			break;
		default:
			return fg_err(err, len, "GC unit %u: bad state %u", g, u->state);
		}
	}
	if (nfree != f->nfree || nopen != f->nopen || nclosed != f->nclosed || nret != f->nretired_gu)
		return fg_err(err, len,
		              "state counts free %u/%u open %u/%u closed %u/%u retired %u/%u",
		              nfree, f->nfree, nopen, f->nopen, nclosed, f->nclosed, nret,
		              f->nretired_gu);
	uint32_t pooled = 0;
	for (uint32_t p = 0; p < f->npools; p++) {
		const struct heap *h = &f->pool[p];
		pooled += h->n;
		for (uint32_t i = 1; i < h->n; i++)
			if (f->gu[h->a[(i - 1) / 2]].erase > f->gu[h->a[i]].erase)
				return fg_err(err, len, "free pool %u is not a min-heap at %u", p,
				              i);
	}
	if (pooled != f->nfree)
		return fg_err(err, len, "pools hold %u units, nfree is %u", pooled, f->nfree);
	if (f->cfg.gc_policy == FTL_GC_GREEDY) {
		uint32_t inb = 0;
		for (uint32_t k = 0; k <= f->upg; k++)
			for (uint32_t g = f->bucket[k]; g != NONE; g = f->gu[g].next) {
				const struct gu *u = &f->gu[g];
				if (u->state != GU_CLOSED || u->valid + f->upg - u->cap != k)
					return fg_err(err, len,
					              "GC unit %u in greedy bucket %u wrongly", g,
					              k);
				if (k < f->min_bucket)
					return fg_err(err, len, "bucket %u is below min_bucket %u",
					              k, f->min_bucket);
				if (++inb > f->nclosed)
					return fg_err(err, len, "greedy bucket lists loop");
			}
		if (inb != f->nclosed)
			return fg_err(err, len, "%u units in buckets, %u closed", inb, f->nclosed);
	}

	/* wear accounting */
	uint64_t live = 0, sum = 0;
	uint64_t *h = calloc(f->ehist_len ? f->ehist_len : 1, sizeof(uint64_t));
	if (!h)
		return fg_err(err, len, "out of memory");
	for (uint32_t b = 0; b < f->g.blocks; b++) {
		const struct blk *k = &f->blk[b];
		if (k->bad)
			continue;
		if (k->erase >= k->endurance) {
			free(h);
			return fg_err(err, len, "live block %u at erase %u >= endurance %u", b,
			              k->erase, k->endurance);
		}
		live++;
		sum += k->erase;
		if (k->erase >= f->ehist_len) {
			free(h);
			return fg_err(err, len, "block %u erase %u outside the histogram", b,
			              k->erase);
		}
		h[k->erase]++;
	}
	uint32_t mism = NONE;
	for (uint32_t e = 0; e < f->ehist_len && mism == NONE; e++)
		if (h[e] != f->ehist[e])
			mism = e;
	uint64_t got = mism == NONE ? 0 : h[mism];
	free(h);
	if (mism != NONE)
		return fg_err(err, len, "erase histogram[%u]=%llu, blocks give %llu", mism,
		              (unsigned long long)f->ehist[mism], (unsigned long long)got);
	if (live != f->live_blocks || sum != f->erase_sum)
		return fg_err(err, len, "live blocks %llu/%llu, erase sum %llu/%llu",
		              (unsigned long long)live, (unsigned long long)f->live_blocks,
		              (unsigned long long)sum, (unsigned long long)f->erase_sum);
	if (live && f->ehist[f->emin] == 0)
		return fg_err(err, len, "emin %u has no block", f->emin);
	const struct ftl_stats *s = &f->st;
	if (s->nand_write_bytes != s->host_prog_bytes + s->gc_prog_bytes + s->wl_prog_bytes + s->pad_prog_bytes)
		return fg_err(err, len, "nand bytes %llu != host+gc+wl+pad",
		              (unsigned long long)s->nand_write_bytes);
	if (s->host_prog_bytes < s->host_write_bytes)
		return fg_err(err, len, "host program bytes %llu < host write bytes %llu",
		              (unsigned long long)s->host_prog_bytes,
		              (unsigned long long)s->host_write_bytes);
	return 0;
}
