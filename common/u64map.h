/*
 * u64map.h - the one hash map: uint64_t key -> uint64_t value, open addressing.
 *
 * Linear probing over a power-of-two table at most 3/4 full, with backward-shift deletion, so
 * there are no tombstones and a lookup ends at the first empty slot: one probe, one cache line,
 * on average. A slot is {key, value} (16 bytes, four to a line). A slot is empty when its value
 * is U64MAP_EMPTY, so every key is allowed (the KV core's keys use all 64 bits) and that one
 * value is not: store an index, a count or a time, never UINT64_MAX.
 *
 * One hash function for every user: Fibonacci hashing (Knuth 6.4: multiply by 2^64 / phi, keep
 * the top bits). Block ids are hash outputs (any hash spreads them) or sequential (synthetic
 * traces, session ids), and the golden-ratio multiply spreads a run of consecutive keys evenly
 * over the table, which a mixing hash does only at random; a key that differs only in its top
 * bit (a linear state's key, block id | 1<<63) lands half a table away. One multiply and one
 * shift: the KV core's hit path is a string of lookups, so they are inline; insertion and
 * growth live in u64map.c.
 *
 * Walk the entries with: for (i = 0; i < m->cap; i++) if (m->slot[i].val != U64MAP_EMPTY) ...
 * (table order: arbitrary, so a caller whose result depends on order must sort).
 */
#ifndef FG_U64MAP_H
#define FG_U64MAP_H

#include <stdint.h>

#include "prefetch.h"

#define U64MAP_EMPTY UINT64_MAX

struct u64map_slot {
	uint64_t key, val;
};

struct u64map {
	struct u64map_slot *slot;
	uint64_t cap, count; /* cap: 0 or a power of two, 2^(64 - shift) */
	unsigned shift;
};

/* The home slot of key k: Fibonacci hashing, the top bits of k times 2^64 / golden ratio. */
static inline uint64_t u64map_home(const struct u64map *m, uint64_t k)
{
	return (k * 0x9e3779b97f4a7c15ull) >> m->shift;
}

/* The value under key, or U64MAP_EMPTY when there is none. */
static inline uint64_t u64map_get(const struct u64map *m, uint64_t key)
{
	if (!m->cap)
		return U64MAP_EMPTY;
	uint64_t mask = m->cap - 1;
	for (uint64_t i = u64map_home(m, key);; i = (i + 1) & mask) {
		if (m->slot[i].val == U64MAP_EMPTY || m->slot[i].key == key)
			return m->slot[i].val;
	}
}

/* Start fetching key's home slot: independent lookups can then overlap their cache misses. */
static inline void u64map_prefetch(const struct u64map *m, uint64_t key)
{
	if (m->cap)
		fg_prefetch(&m->slot[u64map_home(m, key)]);
}

/* An empty map with room for about hint entries before it grows. 0, or -1 when out of memory. */
int u64map_init(struct u64map *m, uint64_t hint);
void u64map_free(struct u64map *m);
/* The value slot of key: the existing one, or a new one set to val (val != U64MAP_EMPTY). NULL
 * when out of memory. The pointer is valid until the next insertion. */
uint64_t *u64map_upsert(struct u64map *m, uint64_t key, uint64_t val);
/* Set key to val (inserting it). 0, or -1 when out of memory. */
int u64map_put(struct u64map *m, uint64_t key, uint64_t val);
/* Remove key. Returns whether it was there. */
int u64map_del(struct u64map *m, uint64_t key);

#endif
