/*
 * gandalf.h - Gandalf's pricing for the policies built on it (gandalf.c, gandalf_wa.c): one
 * implementation, started with the options each policy's own parameter table gives. A policy
 * file that uses it defines its kv_policy with these hooks and its own init().
 */
#ifndef FG_POLICY_GANDALF_H
#define FG_POLICY_GANDALF_H

#include "kv_policy.h"

/* Which SSD-only leaf of a kind an SSD write evicts (and what replacement() prices):
 * VALUE - the cheapest by value per request waited (the paper's rule, gandalf);
 * RECENCY - the least recently used (gandalf-wa: the SSD tier evicts in write order, so the
 *           drive's erase units empty whole; docs/policies.md, "gandalf-wa"). */
/* state_move: which linear states may move to SSD; state_reuse: what a state's reuse is */
enum { STATE_MOVE_ROOT = 0, STATE_MOVE_ALWAYS = 1 };
enum { STATE_REUSE_PAPER = 0, STATE_REUSE_ONCE = 1, STATE_REUSE_LEARNED = 2 };

enum { GANDALF_SSD_VALUE = 0, GANDALF_SSD_RECENCY = 1 };

struct gandalf_opts {
	double lambda, target_years, wear;
	int move_candidates, state_move, state_reuse, ssd_order;
	bool scan;
};

int gandalf_start(struct kvsim *s, const struct gandalf_opts *o, char *err, size_t errlen);
void gandalf_fini(struct kvsim *s);
void gandalf_begin_req(struct kvsim *s);
void gandalf_admitted(struct kvsim *s, uint32_t o);
void gandalf_touched(struct kvsim *s, uint32_t o);
void gandalf_removed(struct kvsim *s, uint32_t o);
void gandalf_make_room(struct kvsim *s, uint64_t need);
uint32_t gandalf_ssd_victim(struct kvsim *s, int kind);
double gandalf_ssd_value(struct kvsim *s, uint32_t o);
int gandalf_figures(const struct kvsim *s, struct kv_figure *f, int max);

/* A kv_policy built on this pricing: its name, params and init, then these. */
#define GANDALF_POLICY_HOOKS                                                                      \
	.obj_bytes = 1, .fini = gandalf_fini, .begin = gandalf_begin_req,                          \
	.admitted = gandalf_admitted, .touched = gandalf_touched, .removed = gandalf_removed,       \
	.make_room = gandalf_make_room, .ssd_victim = gandalf_ssd_victim,                          \
	.figures = gandalf_figures, .ssd_value = gandalf_ssd_value

#endif
