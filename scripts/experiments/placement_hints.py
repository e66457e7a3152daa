#!/usr/bin/env python3
"""placement_hints.py INDEX OUT - placement-hints' table and the figure's data.

INDEX: "POLICY HINT LOOPS USER_BYTES TABLE.csv" per run. For each policy: its drive writes
(without hints), the WAF and erase-count life under each hint, and the hint that lives longest
by erase count with its gain over no hints (ties: the first hint in the runs' order). Writes
OUT/placement-hints.csv, OUT/table.md and OUT/plot.dat (WAF by hint, one line per policy)."""
import os
import sys

import fgresults as fr

COLS = ["miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days", "lifetime_erase_days"]


def load(index):
    rows = []
    for line in open(index):
        pol, hint, loops, user, path = line.split()
        r = fr.read_row(path)
        rows.append(dict({"policy": pol, "streams": hint, "loops": r["passes"],
                          "drive_writes": "%.3f" % fr.drive_writes(r, int(user))},
                         **{k: r[k] for k in COLS}))
    return rows


def best_hint(by, p, hints):
    """The hint with the longest erase-count life for policy p, and its life over no hints'."""
    base = float(by[(p, "none")]["lifetime_erase_days"])
    best = max(hints, key=lambda h: float(by[(p, h)]["lifetime_erase_days"]))
    gain = float(by[(p, best)]["lifetime_erase_days"]) / base if base else float("nan")
    return best, gain


def table(rows, plot):
    hints = list(dict.fromkeys(r["streams"] for r in rows))
    by = {(r["policy"], r["streams"]): r for r in rows}
    body = []
    with open(plot, "w") as f:
        f.write("policy " + " ".join(hints) + "\n")
        for p in dict.fromkeys(r["policy"] for r in rows):
            best, gain = best_hint(by, p, hints)
            body.append([p, by[(p, "none")]["drive_writes"]] +
                        [by[(p, h)]["waf"] or "-" for h in hints] +
                        [by[(p, h)]["lifetime_erase_days"] for h in hints] +
                        ["none" if best == "none" else "%s (%.2fx)" % (best, gain)])
            f.write(p + " " + " ".join(by[(p, h)]["waf"] or "nan" for h in hints) + "\n")
    return fr.md_table(["policy", "drive writes"] + ["WAF %s" % h for h in hints] +
                       ["erase-count d, %s" % h for h in hints] + ["best hint (erase count)"], body)


def main():
    index, out = sys.argv[1:3]
    rows = load(index)
    fr.write_csv(os.path.join(out, "placement-hints.csv"), rows)
    fr.write_lines(os.path.join(out, "table.md"), table(rows, os.path.join(out, "plot.dat")))


if __name__ == "__main__":
    main()
