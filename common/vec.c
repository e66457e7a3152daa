/*
 * vec.c - the growth rule behind vec.h: double, from 16 elements, never past what size_t can
 * address. Kept out of line: it runs once per doubling, and the inline check in vec_reserve()
 * is all a push costs otherwise.
 */
#include "vec.h"

#define VEC_FIRST 16

void *vec_grow(void *a, uint64_t *cap, uint64_t need, size_t esz)
{
	uint64_t c = *cap ? *cap : VEC_FIRST;
	while (c < need) {
		if (c > UINT64_MAX / 2)
			return a;
		c *= 2;
	}
	if (!esz || c > SIZE_MAX / esz)
		return a;
	void *n = realloc(a, (size_t)c * esz);
	if (!n)
		return a;
	*cap = c;
	return n;
}
