/*
 * prefetch.h - a prefetch hint that survives the optimizer. GCC takes __builtin_prefetch as free
 * of side effects, so a helper made only of prefetches counts as "pure", and a call to it whose
 * result is unused is deleted (the IPA passes did that to u64map_prefetch(), so the KV core's
 * look-ahead over a request's blocks was gone from the -O2 LTO build). The empty volatile asm
 * naming the address keeps the hint. hw/ftl has the same two lines (prefetch_r() in ftl_int.h):
 * the FTL builds on its own, without common/.
 */
#ifndef FG_PREFETCH_H
#define FG_PREFETCH_H

static inline void fg_prefetch(const void *p)
{
	__builtin_prefetch(p);
	__asm__ volatile("" : : "r"(p));
}

#endif
