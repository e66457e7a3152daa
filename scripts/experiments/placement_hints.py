#!/usr/bin/env python3
"""placement_hints.py INDEX OUT - placement-hints' table and the figure's data.

INDEX: "SET POLICY HINT LOOPS USER_BYTES TABLE.csv" per run (SET: all, the whole trace, or a
fold). For each policy on the whole trace: its drive writes (without hints), the WAF and
erase-count life under each hint, and the hint that lives longest by erase count with its gain
over no hints (ties: the first hint in the runs' order); then, over the folds, each hint's WAF
and its erase-count life over no hints' (both runs steady), with the folds' range and the
verdict (fgresults.fold_verdict). Writes OUT/placement-hints.csv (every run, with its set),
OUT/table.md and OUT/plot.dat (WAF by hint, one line per policy, the whole trace)."""
import os
import sys

import fgresults as fr

COLS = ["miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days", "lifetime_erase_days"]
ORDER = ["set", "policy", "streams", "loops", "drive_writes", "steady"] + COLS


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


def folds_table(runs):
    """Each hint against no hints, per policy: WAF and the erase-count life ratio (None unless
    both runs are steady) on the whole trace, the folds' range and the verdict."""
    sets = list(dict.fromkeys(r["set"] for r in runs))
    folds = fr.fold_sets(sets)
    by = {(r["set"], r["policy"], r["streams"]): r for r in runs}
    hints = [h for h in dict.fromkeys(r["streams"] for r in runs) if h != "none"]

    def ratio(s, p, h):
        a, b = by.get((s, p, h)), by.get((s, p, "none"))
        if not a or not b or a["steady"] != "true" or b["steady"] != "true":
            return None
        return fr.life_ratio(fr.num(a["lifetime_erase_days"]), fr.num(b["lifetime_erase_days"]))

    def waf(s, p, h):
        r = by.get((s, p, h))
        return fr.num(r["waf"]) if r else None

    body = []
    for p in dict.fromkeys(r["policy"] for r in runs):
        for h in hints:
            w = [waf(s, p, h) for s in sets]
            w0 = [waf(s, p, "none") for s in sets]
            rs = [ratio(s, p, h) for s in sets]
            wr = [a / b if a is not None and b else None for a, b in zip(w, w0)]
            unsteady = sum(by[(s, p, x)]["steady"] != "true" for s in sets for x in (h, "none")
                           if (s, p, x) in by)
            body.append([p, h, fr.with_range(w0[0], w0[1:], lambda x: "%.2f" % x),
                         fr.with_range(w[0], w[1:], lambda x: "%.2f" % x),
                         "%s: %s%s" % (fr.with_range(wr[0], wr[1:], lambda x: "%.3f" % x),
                                       fr.verdict_word(wr[0], wr[1:]),
                                       " (%d runs not steady)" % unsteady if unsteady else ""),
                         "%s: %s" % (fr.with_range(rs[0], rs[1:], fr.fmt_ratio),
                                     fr.verdict_word(rs[0], rs[1:]))])
    return ["", "Over %d folds of the conversations, each scaled to 1/%d of the DRAM and of the "
            "drive: the whole trace's value, the folds' range in brackets, and the verdict on "
            "which side of 1 the ratio lies (`-`: a run not steady). The WAF ratio pairs each fold's "
            "runs and is given for runs that are not steady too, counted." % (len(folds), len(folds)),
            ""] + fr.md_table(["policy", "hint", "WAF, none", "WAF, hint", "WAF, hint / none",
                               "erase-count life, hint / none"], body)


def main():
    index, out = sys.argv[1:3]
    runs = fr.load_runs(index, ["policy", "streams"], COLS)
    fr.write_csv(os.path.join(out, "placement-hints.csv"), runs, ORDER)
    rows = [r for r in runs if r["set"] == "all"]
    lines = table(rows, os.path.join(out, "plot.dat"))
    if len({r["set"] for r in runs}) > 1:
        lines += folds_table(runs)
    fr.write_lines(os.path.join(out, "table.md"), lines)


if __name__ == "__main__":
    main()
