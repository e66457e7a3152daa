/*
 * u64map.c - insertion, growth and deletion for u64map.h (see there for the design).
 *
 * Growth doubles the table and re-inserts every entry when an insertion would pass 3/4 full.
 * Deletion shifts later members of the probe run back into the hole (Knuth's Algorithm R), so
 * every run stays unbroken and no tombstone ever slows a lookup or needs a rebuild.
 */
#include <stdlib.h>

#include "u64map.h"

#define U64MAP_MIN 16

static int alloc_table(struct u64map *m, uint64_t cap)
{
	struct u64map_slot *t = malloc(cap * sizeof(*t));
	if (!t)
		return -1;
	for (uint64_t i = 0; i < cap; i++)
		t[i].val = U64MAP_EMPTY;
	m->slot = t;
	m->cap = cap;
	m->count = 0;
	m->shift = 64;
	while (cap > 1) { /* cap = 2^(64 - shift) */
		cap >>= 1;
		m->shift--;
	}
	return 0;
}

int u64map_init(struct u64map *m, uint64_t hint)
{
	uint64_t cap = U64MAP_MIN;
	while (cap / 4 * 3 < hint && cap < (UINT64_MAX >> 6))
		cap *= 2;
	return alloc_table(m, cap);
}

void u64map_free(struct u64map *m)
{
	free(m->slot);
	m->slot = NULL;
	m->cap = m->count = 0;
}

/* key is absent and there is room: put it in its run's first empty slot */
static uint64_t *place(struct u64map *m, uint64_t key, uint64_t val)
{
	uint64_t mask = m->cap - 1, i = u64map_home(m, key);
	while (m->slot[i].val != U64MAP_EMPTY)
		i = (i + 1) & mask;
	m->slot[i].key = key;
	m->slot[i].val = val;
	m->count++;
	return &m->slot[i].val;
}

static int grow(struct u64map *m)
{
	struct u64map old = *m;
	if (alloc_table(m, old.cap ? old.cap * 2 : U64MAP_MIN)) {
		*m = old;
		return -1;
	}
	for (uint64_t i = 0; i < old.cap; i++)
		if (old.slot[i].val != U64MAP_EMPTY)
			place(m, old.slot[i].key, old.slot[i].val);
	free(old.slot);
	return 0;
}

uint64_t *u64map_upsert(struct u64map *m, uint64_t key, uint64_t val)
{
	if (m->cap) {
		uint64_t mask = m->cap - 1;
		for (uint64_t i = u64map_home(m, key); m->slot[i].val != U64MAP_EMPTY;
		     i = (i + 1) & mask)
			if (m->slot[i].key == key)
				return &m->slot[i].val;
	}
	if ((m->count + 1) * 4 > m->cap * 3 && grow(m))
		return NULL;
	return place(m, key, val);
}

int u64map_put(struct u64map *m, uint64_t key, uint64_t val)
{
	uint64_t *v = u64map_upsert(m, key, val);
	if (!v)
		return -1;
	*v = val;
	return 0;
}

int u64map_del(struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return 0;
	uint64_t mask = m->cap - 1, i = u64map_home(m, key);
	for (;; i = (i + 1) & mask) {
		if (m->slot[i].val == U64MAP_EMPTY)
			return 0;
		if (m->slot[i].key == key)
			break;
	}
	/* backward shift: a later entry whose home is at or before the hole moves into it */
	for (uint64_t j = (i + 1) & mask; m->slot[j].val != U64MAP_EMPTY; j = (j + 1) & mask) {
		uint64_t h = u64map_home(m, m->slot[j].key);
		if (((j - h) & mask) >= ((j - i) & mask)) {
			m->slot[i] = m->slot[j];
			i = j;
		}
	}
	m->slot[i].val = U64MAP_EMPTY;
	m->count--;
	return 1;
}
