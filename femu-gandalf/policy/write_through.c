/*
 * write_through.c - "write-through": every object is written to SSD when it is admitted.
 *
 * Rule: a new object enters DRAM and is written to SSD at once. DRAM evicts its least recently
 * used object without writing it (the SSD already has it); the SSD evicts its least recently
 * used. Source: LMCache's write-through store path (local_disk with save on admission). This is
 * the upper bound on SSD writes. No parameters.
 */
#include "kv_policy.h"

const struct kv_policy kv_policy_write_through = {
        .name = "write-through",
        .write_through = true,
};
