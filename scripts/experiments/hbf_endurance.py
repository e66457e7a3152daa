#!/usr/bin/env python3
"""hbf_endurance.py INDEX READS OUT - hbf-endurance's table, its answers and the figure's data.

INDEX: "SET PRESET POLICY PE LOOPS USER_BYTES TABLE.csv" per run (SET: all, the whole trace, or
a fold; TABLE.csv: the merged `kv` row); READS: "PRESET MB/s" per preset (may be empty). Writes
OUT/hbf-endurance.csv (every policy on every set), OUT/table.md (the whole trace's tables, then
each policy's figures with the folds' ranges, its life against LRU's and whether it lives 5
years, with the verdicts) and OUT/plot-PRESET.csv (the whole trace). Lifetimes between the two rated P/E values run are interpolated on log-log
axes between the two runs (the erase-count lifetime is close to proportional to P/E: the ratio
is in the table). A preset run at one rated P/E only has its lifetime taken as proportional to
P/E (scaling "1 (assumed)"), which the presets run at two check. Deterministic: no wall time.
A run is steady as fgresults.is_steady says.

hbf_endurance.py dwpd PE - the DWPD rating that goes with PE rated cycles: PE / 1825 (5 years),
so that the TBW division is the paper's estimate at WAF 1."""
import math
import os
import sys

import fgresults as fr

YEARS = 5
GRID = [3000, 10000, 30000, 100000]
STACK_MBPS = 1.6e6  # the public 1.6 TB/s of read per stack


num = fr.num


def dwpd_for(pe):
    """The DWPD rating for pe rated cycles over YEARS years (rounded to 6 decimals)."""
    return round(pe / (365 * YEARS), 6)


def interp(points, pe):
    """years at pe on the log-log line through points [(pe, years)], sorted by pe"""
    (p0, y0), (p1, y1) = points[0], points[-1]
    if math.isinf(y0) or math.isinf(y1):
        return float("inf")
    if p0 == p1:
        return y0 * pe / p0
    t = (math.log(pe) - math.log(p0)) / (math.log(p1) - math.log(p0))
    return math.exp(math.log(y0) + t * (math.log(y1) - math.log(y0)))


def pe_needed(points):
    """the rated P/E for YEARS on the same line (None if not within 1K..1M)"""
    (p0, y0), (p1, y1) = points[0], points[-1]
    if math.isinf(y0):
        return 0
    if p0 == p1:
        pe = p0 * YEARS / y0
        return pe if pe <= 1e6 else None
    slope = (math.log(y1) - math.log(y0)) / (math.log(p1) - math.log(p0))
    if slope <= 0:
        return None
    pe = math.exp(math.log(p0) + (math.log(YEARS) - math.log(y0)) / slope)
    return pe if pe <= 1e6 else None


def load(index):
    """{set: {(preset, policy): {pe: (passes, user bytes, row)}}}, in the index's order."""
    runs = {}
    for line in open(index):
        sset, preset, pol, pe, loops, user, path = line.split()
        r = fr.read_row(path)
        runs.setdefault(sset, {}).setdefault((preset, pol), {})[int(pe)] = (int(r["passes"]), int(user), r)
    return runs


def rows_of(runs, sset="all"):
    rows = []
    for (preset, pol), by_pe in runs.items():
        pes = sorted(by_pe)
        loops, user, lo = by_pe[pes[0]]
        hi = by_pe[pes[-1]][2]
        pts = [(pe, num(by_pe[pe][2]["lifetime_erase_days"]) / 365) for pe in pes]
        if len(pes) == 1:
            scale = "1 (assumed)"
        elif math.isinf(pts[0][1]):
            scale = ""
        else:
            scale = "%.3f" % ((pts[-1][1] / pts[0][1]) / (pes[-1] / pes[0]))
        need = pe_needed(pts)
        rows.append({
            "set": sset, "preset": preset, "policy": pol, "loops": loops,
            "drive_writes": "%.3f" % fr.drive_writes(lo, user),
            "_steady": fr.is_steady(lo, user),
            "miss_ratio": lo["miss_ratio"], "token_miss_ratio": lo["token_miss_ratio"],
            "request_miss_ratio": lo["request_miss_ratio"],
            "waf_pe_low": lo["waf"], "waf_pe_high": hi["waf"] if len(pes) > 1 else "",
            "erase_years_pe_low": "%.4g" % pts[0][1],
            "erase_years_pe_high": "%.4g" % pts[-1][1] if len(pes) > 1 else "",
            "scaling": scale,
            "tbw_years_pe_low": "%.4g" % (num(lo["lifetime_tbw_days"]) / 365),
            "pe_for_5y": "" if need is None else "%.0f" % need,
            "load_latency_mean_s": lo["latency_mean_s"], "load_latency_p99_s": lo["latency_p99_s"],
            "_pts": pts})
    return rows


def folds_table(by_set, lo):
    """Each policy's WAF and erase-count life at the lowest rated P/E and its P/E for 5 years, on
    the whole trace with the folds' range; its life over LRU's (both steady) and whether it lives
    5 years at that P/E, with the verdicts."""
    sets = list(by_set)
    idx = {(s, r["preset"], r["policy"]): r for s in sets for r in by_set[s]}
    body = []
    for r in by_set["all"]:
        col = [idx.get((s, r["preset"], r["policy"])) for s in sets]
        lru = [idx.get((s, r["preset"], "lru")) for s in sets]

        def vals(f):
            return [f(x) if x is not None else None for x in col]
        waf = vals(lambda x: num(x["waf_pe_low"]))
        yrs = vals(lambda x: num(x["erase_years_pe_low"]))
        need = vals(lambda x: num(x["pe_for_5y"]) if x["pe_for_5y"] else math.inf)
        ratio = [fr.life_ratio(num(a["erase_years_pe_low"]), num(b["erase_years_pe_low"]))
                 if a and b and a["_steady"] and b["_steady"] else None for a, b in zip(col, lru)]
        # (years over 5: above 1 lives 5 years)
        alive = [y / YEARS if y is not None and x["_steady"] else None for y, x in zip(yrs, col)]
        body.append([r["preset"], r["policy"], fr.with_range(waf[0], waf[1:], lambda x: "%.2f" % x),
                     fr.with_range(yrs[0], yrs[1:], lambda x: "%.3g" % x),
                     fr.with_range(need[0], need[1:], lambda x: "> 1M" if math.isinf(x) else "%.0f" % x),
                     "-" if r["policy"] == "lru" else "%s: %s" % (
                         fr.with_range(ratio[0], ratio[1:], fr.fmt_ratio),
                         fr.verdict_word(ratio[0], ratio[1:])),
                     "%s: %s" % ("yes" if alive[0] and alive[0] > 1 else "no" if alive[0] else "-",
                                 fr.verdict_word(alive[0], alive[1:]))])
    k = len(sets) - 1
    return ["", "Over %d folds of the conversations, each scaled to 1/%d of the DRAM and of the "
            "tier: the whole trace's value, the folds' range in brackets, and the verdicts (a "
            "ratio needs both runs steady; 5 years needs a steady run)." % (k, k), ""] + fr.md_table(
        ["preset", "policy", "WAF at %dK" % (lo // 1000), "erase-count years at %dK" % (lo // 1000),
         "P/E for 5 years", "erase-count life / LRU's at %dK" % (lo // 1000),
         "%d years at %dK?" % (YEARS, lo // 1000)], body)


def write(all_rows, reads, outdir, pes, by_set):
    rows = by_set["all"]
    cols = [k for k in rows[0] if not k.startswith("_")]
    fr.write_csv(os.path.join(outdir, "hbf-endurance.csv"), all_rows, cols)
    presets = list(dict.fromkeys(r["preset"] for r in rows))
    for p in presets:
        with open(os.path.join(outdir, "plot-%s.csv" % p), "w") as f:
            for r in rows:
                if r["preset"] == p:
                    f.write("P/E,years,%s\n" % r["policy"])
                    for pe in GRID:
                        f.write("%d,%.6g\n" % (pe, interp(r["_pts"], pe)))
                    f.write("\n\n")
    lo, hi = pes[0], pes[-1]
    out = ["| preset | policy | passes | drive writes | miss (blocks) | miss (tokens) | miss (requests) | WAF at %dK / %dK P/E | "
           "erase-count years at %dK / %dK | scaling | TBW-division years at %dK | P/E for 5 years | "
           "load latency mean / p99 (s) |" % (lo // 1000, hi // 1000, lo // 1000, hi // 1000, lo // 1000),
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        steady = "" if r["_steady"] else " (not steady)"
        out.append("| %s | %s | %d | %s%s | %.4f | %.4f | %.4f | %s / %s | %s / %s | %s | %s | %s | %s / %s |" % (
            r["preset"], r["policy"], r["loops"], r["drive_writes"], steady, float(r["miss_ratio"]),
            float(r["token_miss_ratio"]), float(r["request_miss_ratio"]), r["waf_pe_low"] or "-", r["waf_pe_high"] or "-",
            r["erase_years_pe_low"], r["erase_years_pe_high"] or "-", r["scaling"] or "-",
            r["tbw_years_pe_low"], r["pe_for_5y"] or "> 1M", r["load_latency_mean_s"],
            r["load_latency_p99_s"]))
    out.append("")
    out.append("| preset | rated P/E | alive for %d years (erase count) | lowest miss among them |" % YEARS)
    out.append("|---|---|---|---|")
    for p in presets:
        for pe in GRID:
            alive = [r for r in rows if r["preset"] == p and interp(r["_pts"], pe) >= YEARS]
            best = min(alive, key=lambda r: float(r["miss_ratio"])) if alive else None
            out.append("| %s | %d | %s | %s |" % (
                p, pe, ", ".join(r["policy"] for r in alive) or "none",
                "%s (miss %.4f)" % (best["policy"], float(best["miss_ratio"])) if best else "-"))
    for line in open(reads):
        p, mbps = line.split()
        stacks = 8 if p.endswith("4t") else 1
        out.append("")
        out.append("%s: 4 MiB sequential reads at QD1024 after preconditioning: %.2f TB/s "
                   "(public: %.1f TB/s)" % (p, float(mbps) / 1e6, stacks * STACK_MBPS / 1e6))
    if len(by_set) > 1:
        out += folds_table(by_set, lo)
    fr.write_lines(os.path.join(outdir, "table.md"), out)


def main():
    if sys.argv[1:2] == ["dwpd"]:
        print(dwpd_for(int(sys.argv[2])))
        return
    index, reads, outdir = sys.argv[1:4]
    runs = load(index)
    pes = sorted({pe for v in runs["all"].values() for pe in v})
    by_set = {s: rows_of(r, s) for s, r in runs.items()}
    write([r for rs in by_set.values() for r in rs], reads, outdir, pes, by_set)


if __name__ == "__main__":
    main()
