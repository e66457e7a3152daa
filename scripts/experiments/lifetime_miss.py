#!/usr/bin/env python3
"""lifetime_miss.py OUT USER_BYTES - lifetime-miss's table and the figures' data.

Reads OUT/lifetime-miss.csv (every point of every policy's sweep, kv's columns); USER_BYTES:
the drive's user bytes, which count a point's drive writes when the table has no steady column.
Writes OUT/table.md (each policy's lowest-miss point and its longest-lived steady point within
+0.01 of that miss, fgresults.best_points; then writes by kind and load cost at the lowest-miss
point), OUT/plot.csv (one block per policy, sorted by miss: miss, TBW life, erase life, mean
load latency, cost per 1k requests) and OUT/kinds.dat (GB written per kind)."""
import os
import sys

import fgresults as fr


def policies(rows):
    """The policies in the table's order."""
    return list(dict.fromkeys(r["policy"] for r in rows))


def write_plot(rows, path):
    fr.write_blocks(path, rows, "policy", "miss,tbw,%s", lambda r: "%s,%s,%s,%s,%s" % (
        r["miss_ratio"], r["lifetime_tbw_days"], r["lifetime_erase_days"], r["latency_mean_s"],
        r["cost_per_1k_usd"]), order=fr.miss)


def cell(r, user):
    """A point's cells: params, miss, drive writes (marked when not steady), lifetimes, WAF."""
    dw = fr.drive_writes(r, user)
    return "%s | %.4f | %.2f%s | %s | %s | %s" % (
        r["params"] or "defaults", fr.miss(r), dw, "" if fr.is_steady(r, user) else " (not steady)",
        r["lifetime_tbw_days"], r["lifetime_erase_days"], r["waf"] or "-")


def best_table(rows, user):
    t = ["| policy | points | lowest miss: params | miss | drive writes | TBW div. d | erase count d | WAF | "
         "longest-lived within +%g miss (steady): params | miss | drive writes | TBW div. d | "
         "erase count d | WAF |" % fr.SWEEP_WINDOW, fr.md_rule(14)]
    for p in policies(rows):
        rs = [r for r in rows if r["policy"] == p]
        b = fr.best_points(rs, fr.SWEEP_WINDOW, user)
        t.append("| %s | %d | %s | %s |" % (p, len(rs), cell(b.lowest, user), cell(b.longest, user)))
    return t


def kinds_table(rows, path):
    """Where the writes go (the paper's Fig. 12) and what loads cost (Figs. 13-14), at each
    policy's lowest-miss point; writes the bars' data to path."""
    t = ["", "Where the writes go, and what loading costs, at each policy's lowest-miss point:", "",
         "| policy | params | SSD writes: full-attention GB | linear states GB | share of full "
         "chunks written later hit on SSD | of linear states | load latency mean / p99 (s) | "
         "$ per 1k requests |", fr.md_rule(8)]
    with open(path, "w") as f:
        f.write("policy full linear\n")
        for p in policies(rows):
            lo = fr.lowest_miss([r for r in rows if r["policy"] == p])
            full, lin = int(lo["ssd_write_full_bytes"]) / 1e9, int(lo["ssd_write_linear_bytes"]) / 1e9
            t.append("| %s | %s | %.0f | %.0f | %s | %s | %s / %s | %s |" % (
                p, lo["params"] or "defaults", full, lin, lo["hit_share_full"], lo["hit_share_linear"],
                lo["latency_mean_s"], lo["latency_p99_s"], lo["cost_per_1k_usd"]))
            f.write("%s %.3f %.3f\n" % (p, full, lin))
    return t


def main():
    out, user = sys.argv[1], int(sys.argv[2])
    rows = fr.read_rows(os.path.join(out, "lifetime-miss.csv"))
    write_plot(rows, os.path.join(out, "plot.csv"))
    t = best_table(rows, user) + kinds_table(rows, os.path.join(out, "kinds.dat"))
    fr.write_lines(os.path.join(out, "table.md"), t)


if __name__ == "__main__":
    main()
