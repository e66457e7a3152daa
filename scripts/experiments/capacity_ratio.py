#!/usr/bin/env python3
"""capacity_ratio.py INDEX OUT - capacity-ratio's table and the figure's data.

INDEX: "SET DRAM SSD TABLE.csv" per run (SET: all, the whole trace, or a fold; sizes as the
whole trace's run was given them, "600M", "3G" or bytes, a fold's being 1/K of them; TABLE.csv
the merged one-row kv table). Writes OUT/capacity-ratio.csv (every run, with its set),
OUT/table.md (a row per split: each policy's miss and erase-count life on the whole trace; then
per split and policy the folds' ranges, and Gandalf against LRU with the folds' verdicts) and
OUT/plot.csv (one block per policy: DRAM GB, miss, erase-count life; the whole trace)."""
import os
import sys

import fgresults as fr

COLS = ["set", "dram", "ssd", "policy", "miss_ratio", "token_miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days",
        "lifetime_erase_days"]


def gb(x):
    """A kv size ("600M", "3G" or bytes) in GB."""
    if x.endswith("M"):
        return float(x[:-1]) / 1000
    if x.endswith("G"):
        return float(x[:-1])
    return int(x) / 1e9


def load(index):
    rows = []
    for line in open(index):
        sset, dram, ssd, path = line.split()
        r = fr.read_row(path)
        rows.append(dict({"set": sset, "dram": dram, "ssd": ssd, "steady": r.get("steady", "")},
                         **{k: r[k] for k in COLS[3:]}))
    return rows


def table(rows):
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    body = []
    for split in dict.fromkeys((r["dram"], r["ssd"]) for r in rows):
        by = {r["policy"]: r for r in rows if (r["dram"], r["ssd"]) == split}
        body.append(["%.4g / %.4g" % (gb(split[0]), gb(split[1]))] +
                    ["%.4f, %s" % (fr.miss(by[p]), by[p]["lifetime_erase_days"]) for p in pols])
    return fr.md_table(["DRAM / SSD (GB)"] + ["%s: miss, erase-count d" % p for p in pols], body)


def write_plot(rows, path):
    fr.write_blocks(path, rows, "policy", "dram,miss,%s", lambda r: "%g,%s,%s" % (
        gb(r["dram"]), r["miss_ratio"], r["lifetime_erase_days"]))


def folds_table(runs):
    """Per split and policy, miss and both lifetimes on the whole trace with the folds' ranges;
    Gandalf against LRU at each split: its miss minus LRU's and its TBW-division life over
    LRU's, with the verdicts (one pass: the erase counts are not steady, so they compare no
    policy here)."""
    sets = list(dict.fromkeys(r["set"] for r in runs))
    folds = fr.fold_sets(sets)
    by = {(r["set"], r["dram"], r["policy"]): r for r in runs}
    pols = list(dict.fromkeys(r["policy"] for r in runs))
    splits = list(dict.fromkeys((r["dram"], r["ssd"]) for r in runs if r["set"] == "all"))

    def col(split, p, f):
        return [f(by[(s, split[0], p)]) if (s, split[0], p) in by else None for s in sets]

    body = []
    f4, f0 = (lambda x: "%.4f" % x), (lambda x: "%.0f" % x)
    for split in splits:
        for p in pols:
            m = col(split, p, fr.miss)
            t = col(split, p, fr.tbw_life)
            e = col(split, p, fr.erase_life)
            st = col(split, p, lambda r: r["steady"] == "1")
            cells = ["%.4g / %.4g" % (gb(split[0]), gb(split[1])), p, fr.with_range(m[0], m[1:], f4),
                     fr.with_range(t[0], t[1:], f0),
                     fr.with_range(e[0], e[1:], f0) + ("" if all(st) else "*")]
            if p != "gandalf" and "gandalf" in pols:
                g, gt = col(split, "gandalf", fr.miss), col(split, "gandalf", fr.tbw_life)
                d = [None if a is None or b is None else a - b for a, b in zip(g, m)]
                q = [None if a is None or b is None else fr.life_ratio(a, b) for a, b in zip(gt, t)]
                cells += ["%s: %s" % (fr.with_range(d[0], d[1:], lambda x: "%+.4f" % x),
                                      fr.verdict_word(d[0], d[1:], pivot=0)),
                          "%s: %s" % (fr.with_range(q[0], q[1:], fr.fmt_ratio),
                                      fr.verdict_word(q[0], q[1:]))]
            else:
                cells += ["-", "-"]
            body.append(cells)
    return ["", "Over %d folds of the conversations, each scaled to 1/%d (DRAM, SSD tier and "
            "drive): the whole trace's value and the folds' range in brackets, and Gandalf "
            "against each policy with the verdict on the sign of the difference and the side of "
            "1 of the ratio. One pass: `*` marks erase counts that are not steady." %
            (len(folds), len(folds)), ""] + fr.md_table(
        ["DRAM / SSD (GB), whole trace", "policy", "miss", "TBW-division d", "erase-count d",
         "gandalf's miss - this one's", "gandalf's TBW-division life / this one's"], body)


def main():
    index, out = sys.argv[1:3]
    runs = load(index)
    fr.write_csv(os.path.join(out, "capacity-ratio.csv"), runs, COLS)
    rows = [r for r in runs if r["set"] == "all"]
    lines = table(rows)
    if len({r["set"] for r in runs}) > 1:
        lines += folds_table(runs)
    fr.write_lines(os.path.join(out, "table.md"), lines)
    write_plot(rows, os.path.join(out, "plot.csv"))


if __name__ == "__main__":
    main()
