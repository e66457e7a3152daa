/*
 * vec.h - the one growable array: a pointer and a capacity that double when a push needs room.
 *
 * Every table that grows (objects, free lists, latency samples, heaps, watch lists, trace
 * buffers) grows the same way, so the rule lives here once: capacity doubles, starting at 16
 * elements (or at what is needed, if that is more), and a failed allocation leaves the array as
 * it was so the caller can carry on or unwind. Two forms:
 *
 *   vec_reserve(a, cap, need)   for an array kept as a pointer plus a uint64_t capacity
 *                               (e.g. a struct field pair); 0, or -1 when out of memory
 *   VEC(T) v; vec_push(&v, x)   a typed array { T *v; uint64_t n, cap; }; 0 or -1
 *
 * The macros evaluate their arguments more than once: pass plain lvalues, and a need that does
 * not read cap (vec_reserve(a, cap, cap + 1) would see the grown cap and fail). Plain C11 plus
 * GNU-free macros (no typeof): the new pointer comes back as void * and is assigned, so no
 * pointer is ever accessed through a type it does not have.
 */
#ifndef FG_VEC_H
#define FG_VEC_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Grow a (cap elements of esz bytes) to at least need elements. Returns the new array with *cap
 * updated, or a itself with *cap unchanged when out of memory (or need overflows). */
void *vec_grow(void *a, uint64_t *cap, uint64_t need, size_t esz);

/* Room for need elements in a (capacity cap, a uint64_t lvalue): 0, or -1 (a untouched). */
#define vec_reserve(a, cap, need)                                                                  \
	((need) <= (cap)                                                                           \
	         ? 0                                                                               \
	         : ((a) = vec_grow((a), &(cap), (need), sizeof(*(a))), (need) <= (cap) ? 0 : -1))

/* A typed growable array: v[0..n) in use, room for cap. Zero-initialize it ({0}) to start. */
#define VEC(T)                                                                                     \
	struct {                                                                                   \
		T *v;                                                                              \
		uint64_t n, cap;                                                                   \
	}

/* Append x to the VEC at vp: 0, or -1 when out of memory (the array unchanged). */
#define vec_push(vp, x)                                                                            \
	(vec_reserve((vp)->v, (vp)->cap, (vp)->n + 1) ? -1 : ((vp)->v[(vp)->n++] = (x), 0))

#define vec_free(vp) (free((vp)->v), (vp)->v = NULL, (vp)->n = (vp)->cap = 0)

#endif
