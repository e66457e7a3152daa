/*
 * kvcheck.c - kvsim_check(): every invariant of the KV simulator, in one place (as ftl_check()
 * is for the drive), so tests and the fuzzer can call it after each request.
 *
 * Checked: the tiers are within capacity and their byte counts match their lists; each list
 * holds only objects of its tier (and the SSD list of a kind only that kind); no two SSD objects
 * overlap and none lies past the tier; every cached object is found under its key and the map
 * holds nothing else; the cache is a tree (each object's parent is cached, and the child links
 * agree with the child counts); a dense model stores no linear state.
 */
#include <stdarg.h>
#include <stdlib.h>

#include "err.h"
#include "kv_int.h"

#define slot_size(x) kv_slot_bytes(s, x)

static int cmp_extent(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
	return x < y ? -1 : x > y;
}

/* No two SSD objects share an LBA (either allocator). */
static int check_extents(const struct kvsim *s, uint64_t n, char *err, size_t errlen)
{
	uint64_t(*e)[2] = malloc((n ? n : 1) * sizeof(*e)), k = 0;
	int rc = 0;
	if (!e)
		return fg_err(err, errlen, "out of memory");
	for (int c = 0; c < 2; c++)
		for (uint32_t o = s->shead[c]; o != KV_NONE && k < n; o = s->obj[o].snext, k++) {
			e[k][0] = s->obj[o].lba;
			e[k][1] = slot_size(&s->obj[o]);
		}
	qsort(e, k, sizeof(*e), cmp_extent);
	for (uint64_t i = 1; i < k && !rc; i++)
		if (e[i - 1][0] + e[i - 1][1] > e[i][0])
			rc = fg_err(err, errlen, "SSD objects overlap at LBA %llu",
			          (unsigned long long)e[i][0]);
	free(e);
	return rc;
}

/* --alloc region: every SSD object lies inside the filled part of one open or sealed region, each
 * region's live bytes are its objects', and every region is free, open or sealed exactly once. */
static int check_regions(const struct kvsim *s, char *err, size_t errlen)
{
	uint64_t *live = calloc(s->nreg ? s->nreg : 1, sizeof(*live));
	int rc = 0;
	if (!live)
		return fg_err(err, errlen, "out of memory");
	for (int c = 0; c < 2 && !rc; c++)
		for (uint32_t o = s->shead[c]; o != KV_NONE && !rc; o = s->obj[o].snext) {
			uint64_t a = s->obj[o].lba, z = a + slot_size(&s->obj[o]);
			uint64_t r = a / s->rbytes;
			if (r >= s->nreg || (z - 1) / s->rbytes != r)
				rc = fg_err(err, errlen, "object %u (LBA %llu) is not inside one region",
				            o, (unsigned long long)a);
			else if (s->reg[r].state == 0 || z > r * s->rbytes + s->reg[r].fill)
				rc = fg_err(err, errlen,
				            "object %u lies in region %llu outside its filled part", o,
				            (unsigned long long)r);
			else
				live[r] += z - a;
		}
	uint32_t nopen = 0;
	for (uint32_t r = 0; r < s->nreg && !rc; r++) {
		const struct kv_region *g = &s->reg[r];
		if (g->live != live[r] || g->live > g->fill || g->fill > s->rbytes)
			rc = fg_err(err, errlen, "region %u: %llu live bytes counted, %llu found, fill %llu",
			            r, (unsigned long long)g->live, (unsigned long long)live[r],
			            (unsigned long long)g->fill);
		else if (g->state == 0 && (g->fill || g->ne))
			rc = fg_err(err, errlen, "free region %u holds data", r);
		else if (g->state == 2 && (g->pos >= s->nsealed || s->sealed[g->pos] != r))
			rc = fg_err(err, errlen, "sealed region %u is not listed", r);
		nopen += g->state == 1;
	}
	if (!rc && s->rclean != KV_NONE)
		rc = fg_err(err, errlen, "region %u is still being cleaned", s->rclean);
	if (!rc && (nopen > s->nopen || s->nrfree + s->nsealed + nopen != s->nreg))
		rc = fg_err(err, errlen, "regions: %u free + %u sealed + %u open != %u", s->nrfree,
		            s->nsealed, nopen, s->nreg);
	for (uint32_t i = 0; i < s->nrfree && !rc; i++)
		if (s->reg[s->rfree[i]].state != 0)
			rc = fg_err(err, errlen, "region %u is on the free list but not free",
			            s->rfree[i]);
	free(live);
	return rc;
}

int kvsim_check(const struct kvsim *s, char *err, size_t errlen)
{
	uint64_t dram = 0, ssd = 0, nd = 0, ns = 0, live = 0;
	if (s->dram_used > s->cfg.dram_bytes || s->ssd_used > s->cfg.ssd_bytes)
		return fg_err(err, errlen, "tier over capacity: DRAM %llu/%llu SSD %llu/%llu",
		            (unsigned long long)s->dram_used, (unsigned long long)s->cfg.dram_bytes,
		            (unsigned long long)s->ssd_used, (unsigned long long)s->cfg.ssd_bytes);
	for (uint32_t o = s->dhead; o != KV_NONE; o = s->obj[o].dnext) {
		if (!s->obj[o].in_dram || ++nd > s->nobj)
			return fg_err(err, errlen, "DRAM list broken at %u", o);
		dram += s->obj[o].size;
	}
	for (int c = 0; c < 2; c++)
		for (uint32_t o = s->shead[c]; o != KV_NONE; o = s->obj[o].snext) {
			if (!s->obj[o].in_ssd || s->obj[o].kind != c || ++ns > s->nobj)
				return fg_err(err, errlen, "SSD list broken at %u", o);
			ssd += slot_size(&s->obj[o]);
			if (s->obj[o].lba + slot_size(&s->obj[o]) > s->cfg.ssd_bytes)
				return fg_err(err, errlen, "SSD slot past the tier");
		}
	if (check_extents(s, ns, err, errlen))
		return -1;
	if (dram != s->dram_used || ssd != s->ssd_used)
		return fg_err(err, errlen, "tier bytes: DRAM %llu vs %llu, SSD %llu vs %llu",
		            (unsigned long long)dram, (unsigned long long)s->dram_used,
		            (unsigned long long)ssd, (unsigned long long)s->ssd_used);
	for (uint32_t o = 0; o < s->nobj; o++) {
		const struct kv_obj *x = &s->obj[o];
		if (!x->in_dram && !x->in_ssd)
			continue;
		live++;
		if (kv_lookup(s, x->key) != o)
			return fg_err(err, errlen, "object %u not found under its key", o);
		if (x->kind == OBJ_LINEAR && !s->cfg.model.linear_state_bytes)
			return fg_err(err, errlen, "a dense model stores a linear state");
		/* a tree: every object's parent is cached (a hit can reach it), and the child links
		 * agree with the child count */
		uint64_t pk = kv_parent_key(x->key, x->parent_key);
		uint32_t p = pk == KV_NO_PARENT ? KV_NONE : kv_lookup(s, pk);
		if (p != x->parent && !(p == o && x->parent == KV_NONE))
			return fg_err(err, errlen, "object %u: its parent is %s", o,
			            p == KV_NONE ? "not cached" : "another object");
		uint32_t k = 0;
		for (uint32_t c = x->kid; c != KV_NONE && k <= x->nchild; c = s->obj[c].sib[1], k++)
			if (s->obj[c].parent != o || (!s->obj[c].in_dram && !s->obj[c].in_ssd))
				return fg_err(err, errlen,
				            "object %u: child %u is not its own or not cached", o,
				            c);
		if (k != x->nchild)
			return fg_err(err, errlen, "object %u: %u children linked, %u counted", o, k,
			            x->nchild);
	}
	if (s->cfg.alloc == KV_ALLOC_REGION && check_regions(s, err, errlen))
		return -1;
	if (live != s->map.count)
		return fg_err(err, errlen, "%llu live objects, map holds %llu",
		            (unsigned long long)live, (unsigned long long)s->map.count);
	return 0;
}
