#!/usr/bin/env python3
"""fdp_drives.py INDEX OUT - fdp-drives' tables and the figure's data.

INDEX lines:
  femu DEVSZ_MB SPARE_FACTOR FEMU_WAF RULE RUN.json       (ssd --json; RULE command or idle)
  lmcache ORDER PLACEMENT THEIR_WAF SPARE RUN.json FILL.json
                                   (blkreplay --json; PLACEMENT off or fdp; SPARE op18 or op33)
FILL.json: blkreplay of the fill alone plus one 4 KiB write. A run's WAF over its trace is
(its NAND bytes - the fill's) / (its host bytes - the fill's), the one 4 KiB write counted
back on both sides; the WAF of the last drive write is the run's own `waf` (its window).
Writes OUT/femu.csv, OUT/lmcache.csv, OUT/table.md, OUT/femu.dat and OUT/lmcache.dat."""
import json
import os
import sys

import fgresults as fr

ONE = 4096


def load(path):
    with open(path) as f:
        return json.load(f)


def femu_table(rows, out):
    by = {}
    for mb, sf, femu, rule, path in rows:
        by.setdefault((mb, sf, femu), {})[rule] = load(path)["waf"]
    csv, body = [], []
    with open(os.path.join(out, "femu.dat"), "w") as f:
        f.write("devsz_mb FEMU femu-bbssd idle-time-GC\n")
        for (mb, sf, femu), w in by.items():
            ours, idle = w["command"], w["idle"]
            d = 100 * (ours / float(femu) - 1)
            csv.append({"devsz_mb": mb, "spare_factor": sf, "femu_waf": femu,
                        "femu_bbssd_waf": "%.4f" % ours, "diff_pct": "%+.2f" % d,
                        "idle_gc_waf": "%.4f" % idle})
            body.append([mb, sf, femu, "%.2f (%+.1f%%)" % (ours, d), "%.2f" % idle])
            f.write("%s %s %.4f %.4f\n" % (mb, femu, ours, idle))
    fr.write_csv(os.path.join(out, "femu.csv"), csv, list(csv[0]))
    return fr.md_table(["FEMU devsz_mb", "spare factor", "FEMU's WAF (measured in FEMU)",
                        "femu-bbssd (FEMU's GC rules)", "the same, idle-time background GC"], body)


def handles(d):
    f = d.get("fdp")
    return len(f["handles"]) if f else 1


SPARES = {"op18": "OP 18.3% (the preset's)", "op33": "OP 33% (Sf 0.25)"}


def lmcache_table(rows, out):
    csv, body = [], []
    with open(os.path.join(out, "lmcache.dat"), "w") as f:
        f.write("run PM9D3a(LMCache) pm9d3a-class\n")
        for order, placement, theirs, spare, path, fillpath in rows:
            fill = load(fillpath)
            hf, nf = fill["host_write_bytes"] - ONE, fill["nand_write_bytes"] - ONE
            d = load(path)
            host, nand = d["host_write_bytes"] - hf, d["nand_write_bytes"] - nf
            waf = nand / host
            label = "no placement IDs" if placement == "off" else \
                "one ID per class, FDP initially isolated"
            csv.append({"order": order, "spare": spare, "physical_bytes": d["physical_bytes"],
                        "placement": placement, "handles": handles(d),
                        "trace_host_bytes": host, "trace_nand_bytes": nand, "waf_trace": "%.4f" % waf,
                        "waf_last_drive_write": "%.4f" % d["waf"], "pm9d3a_waf": theirs,
                        "gc_write_bytes": d["gc_write_bytes"], "erases": d["erases"]})
            body.append([order, SPARES[spare], label, handles(d), "%.3f" % waf, "%.3f" % d["waf"], theirs,
                         "%.2f" % (waf / float(theirs))])
            f.write("%s/%s/%s %s %.4f\n" % (order, spare, "ids" if placement == "fdp" else "none", theirs, waf))
    fr.write_csv(os.path.join(out, "lmcache.csv"), csv, list(csv[0]))
    return fr.md_table(["which object a new one replaces (guess)", "spare (guess)", "placement", "handles",
                        "WAF, the 4 drive writes after the fill", "WAF, the last drive write",
                        "PM9D3a (LMCache PR #4016)", "ours / PM9D3a"], body)


def main():
    index, out = sys.argv[1:3]
    femu, lmc = [], []
    with open(index) as f:
        for line in f:
            x = line.split()
            if x[0] == "femu":
                femu.append(x[1:])
            elif x[0] == "lmcache":
                lmc.append(tuple(x[1:7]))
            else:
                raise ValueError("%s: %r: not a femu or lmcache line" % (index, line.strip()))
    lines = ["FEMU's black-box SSD and femu-bbssd, 512 MiB, a sequential fill then 4 user "
             "capacities of random 4 KiB writes (WAF over the last user capacity):", ""]
    lines += femu_table(femu, out)
    lines += ["", "LMCache PR #4016's FDP measurement and the same shape on pm9d3a-class (the "
              "trace's guesses: scripts/experiments/lmcache_fdp_trace.py):", ""]
    lines += lmcache_table(lmc, out)
    fr.write_lines(os.path.join(out, "table.md"), lines)


if __name__ == "__main__":
    main()
