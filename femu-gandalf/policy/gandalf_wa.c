/*
 * gandalf_wa.c - "gandalf-wa": Gandalf's admission with the SSD tier evicting in recency order
 * (docs/policies.md, "gandalf-wa", gives the design and the measurements behind each part).
 *
 * DRAM is managed exactly as gandalf's (gandalf.c): drop or move, whichever is cheaper, with
 * the move priced by lambda x the SSD write fee plus what its replacement is worth. What
 * differs is the SSD tier: a write evicts the least recently used SSD-only leaf of its kind
 * (a leaf, so no cached object loses its parent), not the cheapest by value. Gandalf's
 * value-ordered victims are scattered over the drive's erase units, so GC copies their live
 * neighbours (results/README.md 5d: 27x LRU's copy bytes per evicted state); victims taken in
 * recency order leave in about the order they were written, and an erase unit empties whole.
 * The move price counts the value of those recency victims, so Gandalf still declines a move
 * that would evict something worth more than it saves.
 */
#include <math.h>

#include "gandalf.h"
#include "kv_policy.h"

enum { LAMBDA, MOVE_CANDIDATES };
static const struct kv_param gandalf_wa_params[] = {
        [LAMBDA] = {"lambda", 1, 0, INFINITY,
                    .help = "weight of the SSD write fee in the move price",
                    KV_SWEEP(0, 1, 2, 4, 8, 16, 32, 64, 128, 256)},
        [MOVE_CANDIDATES] = {"move_candidates", 1, 1, 64,
                             .help = "longest-waiting movable objects priced per class"},
        {NULL},
};

static int gandalf_wa_init(struct kvsim *s, char *err, size_t errlen)
{
	struct gandalf_opts o = {
	        .lambda = kv_param(s, LAMBDA),
	        .move_candidates = (int)kv_param(s, MOVE_CANDIDATES),
	        .state_move = STATE_MOVE_ALWAYS, /* gandalf's defaults */
	        .state_reuse = STATE_REUSE_LEARNED,
	        .ssd_order = GANDALF_SSD_RECENCY,
	};
	return gandalf_start(s, &o, err, errlen);
}

const struct kv_policy kv_policy_gandalf_wa = {
        .name = "gandalf-wa",
        .params = gandalf_wa_params,
        .init = gandalf_wa_init,
        GANDALF_POLICY_HOOKS,
};
