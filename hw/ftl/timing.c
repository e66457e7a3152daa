/*
 * timing.c - NAND timing in virtual nanoseconds: per-LUN and per-channel busy-until times.
 *
 * An operation starts when its LUN (and, for a transfer, its channel) is free and the host has
 * issued it, and pushes those busy-until times forward:
 *   read     LUN busy tR, then the channel moves the units read:   done = start + tR + xfer
 *   program  the channel moves the page in, then the LUN programs: done = start + xfer + tPROG
 *   erase    LUN busy tBERS
 * Planes of one LUN share its busy time (no multi-plane overlap: a conservative choice).
 * GC and wear-leveling traffic use the same resources, so they delay host I/O.
 *
 * Host writes are acknowledged once their page has a slot in the controller's write buffer
 * (write_buffer_pages slots, as drives with power-loss protection do). A slot frees when its
 * page's program completes, so a sustained write stream runs at the NAND program bandwidth.
 */
#include "ftl_int.h"

static inline uint32_t lun_of(const struct ftl *f, uint32_t gblk)
{
	return f->plane_lun[plane_of(f, gblk)];
}

static inline uint32_t ch_of(const struct ftl *f, uint32_t gblk)
{
	return f->plane_ch[plane_of(f, gblk)];
}

/* ftl_time_read() is in ftl_int.h (inline) */

uint64_t ftl_time_program(struct ftl *f, uint32_t gblk, uint64_t now)
{
	uint32_t l = lun_of(f, gblk), c = ch_of(f, gblk);
	uint64_t s = max64(now, max64(f->lun_busy[l], f->ch_busy[c]));
	f->ch_busy[c] = s + f->xfer_page_ns;
	uint64_t d = s + f->xfer_page_ns + f->t_prog_ns;
	f->lun_busy[l] = d;
	f->clock = max64(f->clock, d);
	return d;
}

uint64_t ftl_time_erase(struct ftl *f, uint32_t gblk, uint64_t now)
{
	uint32_t l = lun_of(f, gblk);
	uint64_t d = max64(now, f->lun_busy[l]) + f->t_erase_ns;
	f->lun_busy[l] = d;
	f->clock = max64(f->clock, d);
	return d;
}

/* A host page needs a buffer slot: it gets the oldest one once that slot's program is done. */
uint64_t ftl_wbuf_wait(struct ftl *f, uint64_t now)
{
	return max64(now, f->wbuf[f->wbuf_head]);
}

void ftl_wbuf_done(struct ftl *f, uint64_t done)
{
	f->wbuf[f->wbuf_head] = done;
	f->wbuf_head = f->wbuf_head + 1 == f->nwbuf ? 0 : f->wbuf_head + 1;
}
