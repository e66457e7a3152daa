#!/usr/bin/env python3
"""lmcache_fdp_trace.py ORDER OUT.csv [--drive-writes X] [--seed S] [--scale K] - a block trace shaped like
LMCache PR #4016's FDP measurement on a Samsung PM9D3a, for scripts/experiments/fdp-drives.

What the PR states (LMCache/LMCache#4016, the measurement comment of 2026-07-28): a 960 GiB
test capacity filled sequentially by fio first, 89% used, 4x the capacity written by
"synthetic storage-level LMCache traces" with nine concurrent workers spanning 855 GiB:
  2x chat/churn            4 MiB objects, 90 GiB each
  1x long-context         32 MiB objects, 180 GiB
  2x RAG/shared-prefix    16 MiB objects, 90 GiB each
  3x random-prompt         2 MiB objects, 90 GiB each
  1x metadata-heavy        1 MiB objects, 45 GiB
and each workload class its own placement ID in the FDP run.

What it does not state, and this generator guesses (fdp-drives' table says so):
  * where a worker's objects live: each worker owns a contiguous range of the capacity, in
    the order above from LBA 0; the last 105 GiB keep the fill and are never written again;
  * how fast each worker writes: all nine at the same bandwidth, interleaved by bytes (the
    worker that has written the fewest bytes goes next);
  * which object a new one replaces, ORDER: "fifo" (the worker's slots in a ring: an LRU
    store whose objects are seldom reused evicts the oldest), "uniform" (a slot drawn at
    random: eviction order unrelated to write order), or "mixed" (by the classes' names: the
    low-reuse ones, chat/churn and random-prompt, in a ring; the reused ones, long-context,
    RAG/shared-prefix and metadata, at random);
  * the placement IDs: 1-5, one per class in the order above (LMCache's FDP plumbing gives
    the classes the device's non-zero IDs; the fill carries none, i.e. ID 0).
The fill itself is not in the trace: fdp-drives replays it with blkreplay --precondition.

Writes blk-csv (traces/FORMATS.md) with the pid field; X (default 4) drive capacities of
writes in all. --scale K divides the capacity and every worker's range by K (objects keep
their sizes): fdp-drives --quick runs the shape on a 15 GiB drive. Python 3 standard library
only."""
import os
import random
import sys

GIB, MIB = 1 << 30, 1 << 20
CAPACITY = 960 * GIB
# (class, placement ID, object bytes, region bytes) per worker, in LBA order
# the classes whose objects are seldom reused: in "mixed", replaced oldest first
LOW_REUSE = {"chat", "random-prompt"}
WORKERS = ([("chat", 1, 4 * MIB, 90 * GIB)] * 2 + [("long-context", 2, 32 * MIB, 180 * GIB)] +
           [("rag", 3, 16 * MIB, 90 * GIB)] * 2 + [("random-prompt", 4, 2 * MIB, 90 * GIB)] * 3 +
           [("metadata", 5, 1 * MIB, 45 * GIB)])


def generate(order, out, drive_writes=4.0, seed=1, scale=1):
    rng = random.Random(seed)
    base, state = 0, []
    for cls, pid, obj, region in WORKERS:
        region //= scale
        ring = order == "fifo" or (order == "mixed" and cls in LOW_REUSE)
        state.append({"base": base, "pid": pid, "obj": obj, "slots": region // obj, "next": 0,
                      "written": 0, "ring": ring})
        base += region
    assert base == 855 * GIB // scale
    total = int(drive_writes * CAPACITY / scale)
    done, t = 0, 0
    out.write("time_ns,op,lba,bytes,pid\n")
    while done < total:
        w = min(state, key=lambda s: s["written"])
        if w["ring"]:
            slot = w["next"]
            w["next"] = (slot + 1) % w["slots"]
        else:
            slot = rng.randrange(w["slots"])
        off = w["base"] + slot * w["obj"]
        out.write("%d,W,%d,%d,%d\n" % (t, off // 512, w["obj"], w["pid"]))
        w["written"] += w["obj"]
        done += w["obj"]
        t += 1000
    return done


def main():
    a = sys.argv[1:]
    if len(a) < 2 or a[0] not in ("fifo", "uniform", "mixed"):
        sys.exit(__doc__.split("\n")[0])
    x = float(a[a.index("--drive-writes") + 1]) if "--drive-writes" in a else 4.0
    seed = int(a[a.index("--seed") + 1]) if "--seed" in a else 1
    scale = int(a[a.index("--scale") + 1]) if "--scale" in a else 1
    with open(a[1] + ".tmp", "w") as f:
        generate(a[0], f, x, seed, scale)
    os.replace(a[1] + ".tmp", a[1])


if __name__ == "__main__":
    main()
