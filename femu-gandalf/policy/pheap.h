/*
 * pheap.h - the lazy binary min-heap the policies share: (key, object) entries. Policies push an
 * object again whenever its key changes and skip entries whose key no longer matches when they
 * reach the top (lazy deletion), so no heap ever needs a decrease-key or an index per object.
 */
#ifndef FG_PHEAP_H
#define FG_PHEAP_H

#include <stdint.h>
#include <stdlib.h>

#include "vec.h"

struct pent {
	double key;
	uint32_t o;
};

struct pheap {
	struct pent *a;
	uint64_t n, cap;
};

static inline int pheap_push(struct pheap *h, double key, uint32_t o)
{
	if (vec_reserve(h->a, h->cap, h->n + 1))
		return -1;
	uint64_t i = h->n++;
	while (i && h->a[(i - 1) / 2].key > key) {
		h->a[i] = h->a[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->a[i] = (struct pent){key, o};
	return 0;
}

static inline struct pent pheap_pop(struct pheap *h)
{
	struct pent top = h->a[0], last = h->a[--h->n];
	uint64_t i = 0;
	for (;;) {
		uint64_t l = 2 * i + 1, m = i;
		double mk = last.key;
		if (l < h->n && h->a[l].key < mk)
			m = l, mk = h->a[l].key;
		if (l + 1 < h->n && h->a[l + 1].key < mk)
			m = l + 1;
		if (m == i)
			break;
		h->a[i] = h->a[m];
		i = m;
	}
	if (h->n)
		h->a[i] = last;
	return top;
}

static inline void pheap_free(struct pheap *h)
{
	free(h->a);
	h->a = NULL;
	h->n = h->cap = 0;
}

#endif
