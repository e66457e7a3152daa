#!/usr/bin/env python3
"""capacity_ratio.py INDEX OUT - capacity-ratio's table and the figure's data.

INDEX: "DRAM SSD TABLE.csv" per run (sizes as given to kv: "600M", "3G" or bytes; TABLE.csv the
merged one-row kv table). Writes OUT/capacity-ratio.csv, OUT/table.md (a row per split: each
policy's miss and erase-count life) and OUT/plot.csv (one block per policy: DRAM GB, miss,
erase-count life)."""
import os
import sys

import fgresults as fr

COLS = ["policy", "miss_ratio", "token_miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days",
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
        dram, ssd, path = line.split()
        r = fr.read_row(path)
        rows.append(dict({"dram": dram, "ssd": ssd}, **{k: r[k] for k in COLS}))
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


def main():
    index, out = sys.argv[1:3]
    rows = load(index)
    fr.write_csv(os.path.join(out, "capacity-ratio.csv"), rows)
    fr.write_lines(os.path.join(out, "table.md"), table(rows))
    write_plot(rows, os.path.join(out, "plot.csv"))


if __name__ == "__main__":
    main()
