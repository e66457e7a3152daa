#!/usr/bin/env python3
"""loop_ids.py INDEX OUT - loop-ids' tables and the figure's data.

INDEX: "SET POLICY MODE LOOPS USER_BYTES TABLE.csv" per run (SET: all, the whole trace, or a
fold; MODE: fresh or same, kv's --loop-ids). Writes OUT/loop-ids.csv (every run, with its set),
OUT/table.md and OUT/plot.dat (each policy's life over LRU's by TBW division and by erase count,
both ways, the whole trace).

table.md: the whole trace's runs; then, over the folds, each policy's life over LRU's under the
same mode (TBW division and erase count; the erase-count ratio needs both runs steady), and how
replaying the same content moves that ratio, (ratio under same) / (ratio under fresh), each
with the whole trace's value, the folds' range and the verdict (fgresults.fold_verdict)."""
import os
import sys

import fgresults as fr

COLS = ["miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days", "lifetime_erase_days"]
ORDER = ["set", "policy", "loop_ids", "loops", "drive_writes", "steady"] + COLS
BASE = "lru"


def ratio(by, s, p, mode, col):
    """Policy p's lifetime (col) over LRU's under mode in set s; the erase count needs both runs
    steady (None otherwise, or when a run is missing)."""
    a, b = by.get((s, p, mode)), by.get((s, BASE, mode))
    if not a or not b:
        return None
    if col == "lifetime_erase_days" and (a["steady"] != "true" or b["steady"] != "true"):
        return None
    return fr.life_ratio(fr.num(a[col]), fr.num(b[col]))


def whole_table(rows):
    body = []
    for r in rows:
        passes = int(r["loops"])
        body.append([r["policy"], r["loop_ids"], r["loops"],
                     r["drive_writes"] + ("" if r["steady"] == "true" else " (not steady)"),
                     "%.4f" % float(r["miss_ratio"]),
                     "%.0f" % (int(r["ssd_write_bytes"]) / 1e9 / passes), r["waf"],
                     r["lifetime_tbw_days"], r["lifetime_erase_days"]])
    return fr.md_table(["policy", "passes' ids", "passes", "drive writes", "miss (blocks)",
                        "SSD GB per pass", "WAF", "TBW div. d", "erase count d"], body)


def verdict(values, fmt=fr.fmt_ratio):
    return "%s: %s" % (fr.with_range(values[0], values[1:], fmt), fr.verdict_word(values[0], values[1:]))


def folds_table(runs):
    sets = list(dict.fromkeys(r["set"] for r in runs))
    folds = fr.fold_sets(sets)
    by = {(r["set"], r["policy"], r["loop_ids"]): r for r in runs}
    body, moved = [], []
    for p in dict.fromkeys(r["policy"] for r in runs):
        if p == BASE:
            continue
        per = {}
        for mode in ("fresh", "same"):
            miss = [fr.num(by[(s, p, mode)]["miss_ratio"]) if (s, p, mode) in by else None for s in sets]
            tbw = [ratio(by, s, p, mode, "lifetime_tbw_days") for s in sets]
            erase = [ratio(by, s, p, mode, "lifetime_erase_days") for s in sets]
            per[mode] = (tbw, erase)
            body.append([p, mode, fr.with_range(miss[0], miss[1:], lambda x: "%.4f" % x),
                         verdict(tbw), verdict(erase)])

        def over(a, b):
            return [x / y if x is not None and y else None for x, y in zip(a, b)]
        moved.append([p, verdict(over(per["same"][0], per["fresh"][0])),
                      verdict(over(per["same"][1], per["fresh"][1]))])
    head = ("Over %d folds of the conversations, each scaled to 1/%d of the DRAM and of the drive: "
            "the whole trace's value, the folds' range in brackets, and the verdict on which side "
            "of 1 the ratio lies (`-`: a run not steady)." % (len(folds), len(folds)))
    return (["", head, ""] +
            fr.md_table(["policy", "passes' ids", "miss", "TBW-division life / LRU's",
                         "erase-count life / LRU's"], body) +
            ["", "What replaying the same content does to each comparison: (life / LRU's, same) / "
             "(life / LRU's, fresh); above 1, the same-content replay flatters the policy against LRU.",
             ""] +
            fr.md_table(["policy", "TBW division, same / fresh", "erase count, same / fresh"], moved))


def plot_data(rows, path):
    by = {("all", r["policy"], r["loop_ids"]): r for r in rows}
    with open(path, "w") as f:
        f.write("policy TBW,fresh TBW,same erase,fresh erase,same\n")
        for p in dict.fromkeys(r["policy"] for r in rows):
            vals = [ratio(by, "all", p, m, c) for c in ("lifetime_tbw_days", "lifetime_erase_days")
                    for m in ("fresh", "same")]
            f.write(p + " " + " ".join("nan" if v is None else "%.6g" % v for v in vals) + "\n")


def main():
    index, out = sys.argv[1:3]
    runs = fr.load_runs(index, ["policy", "loop_ids"], COLS)
    fr.write_csv(os.path.join(out, "loop-ids.csv"), runs, ORDER)
    rows = [r for r in runs if r["set"] == "all"]
    lines = whole_table(rows)
    if len({r["set"] for r in runs}) > 1:
        lines += folds_table(runs)
    fr.write_lines(os.path.join(out, "table.md"), lines)
    plot_data(rows, os.path.join(out, "plot.dat"))


if __name__ == "__main__":
    main()
