/*
 * timing.c - NAND timing in virtual nanoseconds: per-plane, per-LUN, per-channel and host-link
 * busy-until times (docs/ftl.md, "Timing").
 *
 * An operation starts when its plane (and, for a transfer, its channel) is free and the host
 * has issued it, and pushes those busy-until times forward:
 *   read     the plane senses the page (tR), then the channel moves the units read
 *   program  the channel moves the page into the plane's cache register while the plane's
 *            current program runs, then the plane programs it
 *   erase    the plane erases the block (tBERS)
 * GC and wear-leveling traffic use the same resources, so they delay host I/O.
 *
 * Planes (multiplane=on). The planes of a LUN share its word-line drivers and charge pumps, so
 * they run operations of one kind together (multi-plane read, program, erase) but never a read
 * beside a program. So an operation of the kind the LUN is running starts as soon as its own
 * plane is free (and not before the LUN switched to that kind); an operation of another kind
 * waits until every plane of the LUN is done. A sustained program stream then runs at
 * planes x page / tPROG per LUN, as a real multi-plane die does. Not modelled: the start
 * alignment real multi-plane commands need (a plane starts when its own data is in; with
 * pages striped channel-fastest the planes of a LUN are fed one page time apart, so the gap
 * is at most (planes - 1) page transfers, 2% of tPROG on the enterprise presets), and the
 * same-page-offset restriction of older NAND (random reads use independent plane reads,
 * which current 3D TLC has). multiplane=off is the old model: a LUN's planes share one busy
 * time (FEMU's bbssd does this).
 *
 * Suspend (t_suspend_us > 0). A host read that finds its LUN programming or erasing suspends
 * the operation: it starts t_suspend after issue (later reads queue behind a suspension in
 * progress at no further cost), and every plane of the LUN resumes after the read, late by
 * the time the suspension took. An operation is suspended at most suspend_max times; then
 * reads wait for it, as firmware does to guarantee program progress. GC and wear-leveling
 * reads never suspend. The delay lands on the LUN's busy times; a completion already handed
 * out (a write-buffer slot's free time) is not moved back, so under heavy mixed load buffer
 * slots free up to one suspension early.
 *
 * Host writes are acknowledged once their page has a slot in the controller's write buffer
 * (write_buffer_pages slots, as drives with power-loss protection do). A slot frees when its
 * page's program completes, so a sustained write stream runs at the NAND program bandwidth.
 * With host_mbps > 0 every command's data also crosses one host link (PCIe) of that
 * bandwidth: reads after their NAND transfer, writes before their buffer slot. t_cmd_us is
 * the controller's own time per host read or write (command processing, mapping lookup, DMA
 * set-up), added to its completion; it holds no resource, as a controller pipelines commands.
 */
#include "ftl_int.h"

/*
 * A host read on plane p of LUN l, issued at t, while the LUN programs or erases: the start of
 * its sense under suspension, or UINT64_MAX when it may not suspend (then it waits).
 */
uint64_t ftl_time_suspend(struct ftl *f, uint32_t l, uint64_t t)
{
	const uint32_t ppl = f->ppl, first = l; /* planes of LUN l: l, l + luns, l + 2 luns, ... */
	uint64_t s, ext;
	for (uint32_t i = 0, q = first; i < ppl; i++, q += f->g.luns)
		if (f->pl_busy[q] > t && f->pl_susp[q] >= f->cfg.suspend_max)
			return UINT64_MAX;
	if (t < f->lun_susp[l]) {
		s = f->lun_susp[l]; /* a suspension is in progress: queue behind its reads */
		ext = f->t_read_ns;
	} else {
		s = t + f->t_susp_ns;
		ext = f->t_susp_ns + f->t_read_ns;
	}
	f->lun_susp[l] = s + f->t_read_ns;
	for (uint32_t i = 0, q = first; i < ppl; i++, q += f->g.luns)
		if (f->pl_busy[q] > t) {
			f->pl_busy[q] += ext;
			f->pl_susp[q]++;
		}
	f->lun_busy[l] += ext;
	f->st.read_suspends++;
	return s;
}

uint64_t ftl_time_erase(struct ftl *f, uint32_t gblk, uint64_t now)
{
	uint32_t p = plane_of(f, gblk), l = f->plane_lun[p];
	uint64_t d;
	d = array_start(f, p, l, OP_ERASE, now) + f->t_erase_ns;
	array_end(f, p, l, d);
	f->clock = max64(f->clock, d);
	return d;
}

uint64_t ftl_time_link(struct ftl *f, uint64_t bytes, uint64_t t)
{
	uint64_t s = max64(t, f->host_busy) + link_ns(f, bytes);
	f->host_busy = s;
	return s;
}
