#!/usr/bin/env python3
"""device_paths.py INDEX OUT DRIVE W - device-paths' table.
device_paths.py ios W USER_BYTES - JESD219's I/O count per size group (scripts/fio/jesd219.fio)
for W x USER_BYTES of writes, as "FG_IOS_GROUP=N ..." for fio's environment.

INDEX: "BG PATH WORKLOAD HOST0 NAND0 ERASES0 HOST1 NAND1 ERASES1" per run (the drive's counters
after preconditioning and after the workload; an in-process path has one line per workload
seed). Each path's figures are over the workload alone, the mean over its lines, and are set
against the in-process mean of the same background-GC setting and workload; the bound is 2%.
Writes OUT/device-paths.csv and OUT/table.md; prints the largest difference per setting on
stderr."""
import os
import sys

import fgresults as fr

BOUND_PCT = 2
# JESD219's share of I/Os per size group, and its mean bytes per I/O
JESD219_SHARES = (("SMALL", .10), ("4K", .67), ("8K", .10), ("16K", .07), ("32K_64K", .06))
JESD219_MEAN_IO = 7818.24


def jesd219_ios(w, user):
    """The fio environment assignments for w x user bytes of JESD219 writes."""
    n = w * user / JESD219_MEAN_IO
    return " ".join("FG_IOS_%s=%d" % (k, round(s * n)) for k, s in JESD219_SHARES)


def mean(xs):
    return sum(xs) / len(xs)


def load(index):
    """{(bg, path, workload): [(host, nand, erases, waf)]}, the workload's own counts."""
    runs = {}
    for line in open(index):
        bg, path, wl, h0, n0, e0, h1, n1, e1 = line.split()
        host, nand, erases = int(h1) - int(h0), int(n1) - int(n0), int(e1) - int(e0)
        runs.setdefault((bg, path, wl), []).append((host, nand, erases, nand / host))
    return runs


def rows_of(runs):
    rows = []
    for (bg, path, wl), rs in runs.items():
        ref = runs[(bg, "inproc", wl)]
        ref_waf, ref_erases = mean([r[3] for r in ref]), mean([r[2] for r in ref])
        host, nand, erases, waf = (mean([r[i] for r in rs]) for i in range(4))
        rows.append({"background_gc": bg, "path": path, "workload": wl, "runs": len(rs),
                     "host_bytes": round(host), "nand_bytes": round(nand),
                     "erases": "%.1f" % erases if len(rs) > 1 else "%d" % erases,
                     "waf": "%.4f" % waf,
                     "waf_min": "%.4f" % min(r[3] for r in rs), "waf_max": "%.4f" % max(r[3] for r in rs),
                     "waf_vs_inproc": "%+.2f%%" % (100 * (waf / ref_waf - 1)),
                     "erases_vs_inproc": "%+.2f%%" % (100 * (erases / ref_erases - 1)) if ref_erases else ""})
    return rows


def worst(rows, bg):
    """The largest |difference| from the in-process mean, in percent, for one GC setting."""
    return max((abs(float(r[k].rstrip("%"))) for r in rows if r["path"] != "inproc"
                and r["background_gc"] == bg for k in ("waf_vs_inproc", "erases_vs_inproc") if r[k]),
               default=0)


def table(rows, runs, drive, w):
    seeds = len(runs[("on", "inproc", "jesd219")])
    t = ["Drive `%s`; each workload writes %s x the capacity after preconditioning; figures over "
         "the workload alone. In process: the mean of %d workload seeds (their WAF range beside it); "
         "fio's seeds are fixed, one run per path. Background GC off: gc_bg_free_pct set to the "
         "preset's gc_fg_free_pct." % (drive.strip(), w, seeds), ""]
    body = []
    for r in rows:
        inproc = r["path"] == "inproc"
        body.append([r["background_gc"], r["path"], r["workload"], "%.3f" % (r["host_bytes"] / 1e9),
                     "%.3f" % (r["nand_bytes"] / 1e9), r["erases"],
                     r["waf"] + (" (%s-%s)" % (r["waf_min"], r["waf_max"]) if r["runs"] > 1 else ""),
                     r["waf_vs_inproc"] if not inproc else "-",
                     r["erases_vs_inproc"] if not inproc else "-"])
    t += fr.md_table(["background GC", "path", "workload", "host GB", "NAND GB", "erases", "WAF (range)",
                      "WAF vs in process", "erases vs in process"], body)
    t.append("")
    for bg in ("on", "off"):
        x = worst(rows, bg)
        t.append("Background GC %s: largest difference from the in-process mean %.2f%% (%s the %d%% "
                 "bound)." % (bg, x, "within" if x <= BOUND_PCT else "OUTSIDE", BOUND_PCT))
        print("device-paths: background GC %s: largest difference %.2f%%" % (bg, x), file=sys.stderr)
    return t


def main():
    if sys.argv[1:2] == ["ios"]:
        print(jesd219_ios(int(sys.argv[2]), int(sys.argv[3])))
        return
    index, out, drive, w = sys.argv[1:5]
    runs = load(index)
    rows = rows_of(runs)
    fr.write_csv(os.path.join(out, "device-paths.csv"), rows)
    fr.write_lines(os.path.join(out, "table.md"), table(rows, runs, drive, w))


if __name__ == "__main__":
    main()
