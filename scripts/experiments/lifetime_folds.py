#!/usr/bin/env python3
"""lifetime_folds.py WORK OUT - lifetime-folds' tables from its runs: WORK/index holds one line
"SET TAG" per run (SET: all or I/K), WORK/TAG/table.csv its kv row. Writes OUT/lifetime-folds.csv
(every run with its set), OUT/table.md (each point of Gandalf and of gandalf-wa against the best
baseline under every comparison rule, on the whole trace with the range over the folds and the verdict; each policy's
points by set) and OUT/plot-SET.csv for the figure. The rules are fgresults.py's."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgresults as fr  # noqa: E402

CANDIDATES = ("gandalf", "gandalf-wa")  # compared with the baselines, never with each other


def load(work):
    """[(set, row)] in the index's order."""
    runs = []
    for line in open(os.path.join(work, "index")):
        s, tag = line.split()
        row = dict(fr.read_row(os.path.join(work, tag, "table.csv")))
        row["set"] = s
        runs.append((s, row))
    return runs


def comparisons(by_set, sets, point_label, window):
    """{set: Comparison} for the Gandalf point named point_label under one rule's window; a set
    where the point is not steady (or absent) has no comparison."""
    out = {}
    for s in sets:
        pts = [r for r in by_set[s] if fr.run_label(r) == point_label]
        base = [r for r in by_set[s] if r["policy"] not in CANDIDATES]
        ok = pts and fr.is_steady(pts[0])
        out[s] = fr.compare(pts[0], base, window) if ok else fr.Comparison(None, None, None)
    return out


def folds_cell(cmps, group, attr):
    """The folds' range of a ratio and its verdict together with the whole trace's ratio."""
    v = fr.fold_verdict(getattr(cmps["all"], attr), [getattr(cmps[s], attr) for s in group])
    rng = "-" if v.lo is None else "%.2f-%s" % (v.lo, fr.fmt_ratio(v.hi))
    missing = sum(getattr(cmps[s], attr) is None for s in group)
    note = "" if not missing else " (%d of %d without a steady comparison)" % (missing, len(group))
    return "%s: %s%s" % (rng, fr.HOLDS if v.holds else fr.DEPENDS, note), v.holds


def main():
    work, out = sys.argv[1:3]
    runs = load(work)
    sets = list(dict.fromkeys(s for s, _ in runs))
    plain = [s for s in sets if s != "all" and not s.endswith("s")]
    scaled = [s for s in sets if s.endswith("s")]
    by_set = {s: [r for t, r in runs if t == s] for s in sets}
    cols = ["set"] + [c for c in runs[0][1] if c != "set"]
    fr.write_csv(os.path.join(out, "lifetime-folds.csv"), [r for _, r in runs], cols)
    gpoints = list(dict.fromkeys(fr.run_label(r) for _, r in runs if r["policy"] in CANDIDATES))
    lines = ["Each point of Gandalf and of gandalf-wa against the longest-lived steady baseline point whose miss ratio is "
             "at most the point's plus the rule's window (fgresults.RULES), by erase count, then by "
             "TBW division under the first rule: on the whole trace, then the range over the %d "
             "folds run with the whole trace's settings (a lighter load) and over the %d folds "
             "scaled to its pressure (1/%d of the DRAM and of the drive), each with its verdict. "
             "A comparison is a finding only where both say it holds."
             % (len(plain), len(scaled), len(plain)), ""]
    header = ["point", "whole: miss / WAF / erase d", "rule", "whole trace",
              "folds, same settings", "folds, scaled", "finding"]
    rows = []
    rules = [(name, w, "erase_ratio") for name, w in fr.RULES.items()]
    first = next(iter(fr.RULES.items()))
    rules.append(("TBW division, " + first[0], first[1], "tbw_ratio"))
    for g in gpoints:
        whole = [r for r in by_set["all"] if fr.run_label(r) == g][0]
        for name, w, attr in rules:
            cmps = comparisons(by_set, sets, g, w)
            b = cmps["all"].baseline
            wcell = fr.fmt_ratio(getattr(cmps["all"], attr))
            if b is not None:
                wcell += " vs %s" % fr.run_label(b)
            pc, ph = folds_cell(cmps, plain, attr)
            sc, sh = folds_cell(cmps, scaled, attr) if scaled else ("-", True)
            rows.append([g, fr.run_cell(whole), name,
                         wcell, pc, sc, "holds" if ph and sh else "depends on the sample"])
    lines += fr.md_table(header, rows)
    lines += ["", "Every run, by set (miss / WAF / erase-count days; `*` not steady):", ""]
    rows = []
    for lab in dict.fromkeys(fr.run_label(r) for _, r in runs):
        cells = [lab]
        for s in sets:
            rs = [r for r in by_set[s] if fr.run_label(r) == lab]
            cells.append(fr.run_cell(rs[0]) if rs else "-")
        rows.append(cells)
    lines += fr.md_table(["point"] + sets, rows)
    lines += ["", "Requests served per set (the first point's, over all its passes): " + ", ".join(
        "%s %s" % (s, by_set[s][0]["requests"] if by_set[s] else "-") for s in sets) + "."]
    fr.write_lines(os.path.join(out, "table.md"), lines)
    for s in sets:  # the figure: a line per candidate policy, then the baselines as labelled points
        with open(os.path.join(out, "plot-%s.csv" % s.replace("/", "of")), "w") as f:
            for pol in CANDIDATES:
                for r in sorted((r for r in by_set[s] if r["policy"] == pol), key=fr.miss):
                    if fr.is_steady(r):
                        f.write("%s,%s\n" % (r["miss_ratio"], r["lifetime_erase_days"]))
                f.write("\n\n")
            for r in by_set[s]:
                if r["policy"] not in CANDIDATES and fr.is_steady(r):
                    f.write("%s,%s,%s\n" % (r["miss_ratio"], r["lifetime_erase_days"], fr.run_label(r)))


if __name__ == "__main__":
    main()
