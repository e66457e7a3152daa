#!/usr/bin/env python3
"""wear_attribution.py INDEX OUT - wear-attribution's tables from its runs: INDEX holds one line
"SET PATH" per run, PATH its `kv --json`. Writes OUT/wear-attribution.csv (every run: its NAND
programs by kind and cause, per request and in total), OUT/table.md (per policy, the whole trace
with the folds' range, and the comparisons that explain the WAFs, each with its fold verdict) and
OUT/plot-SET.csv for the stacked bars.

Every byte count is the drive's own attribution (docs/ftl.md, "Wear attribution"), over the whole
run. The check that it adds up (programs by kind and cause plus padding = the NAND bytes) is the
drive's test (test_wear, test_cli); here a run whose parts do not add up to its cumulative WAF
times its host bytes within 0.1% is refused, so a table never quotes a broken attribution."""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fgresults as fr  # noqa: E402

KINDS = (("full", "chunks"), ("linear", "states"))
CAUSES = (("host", "host_program_bytes"), ("GC", "gc_program_bytes"), ("WL", "wl_program_bytes"))
MiB = 1 << 20
MB = 1e6
# the comparisons that explain the WAFs, by role (the points differ with --quick):
# (what, the per-run figure), each for Gandalf at its default against LRU, gandalf-wa against
# Gandalf at the same params, and gandalf-wa against Dynamo
FIGURES = (("GC copy bytes per evicted state", "gc_copy_per_evicted_state_bytes"),
           ("NAND bytes per request", "nand_per_request_bytes"),
           ("host bytes per request", "host_per_request_bytes"))


def pairs(points):
    """(run, against) label pairs for the comparisons, in the table's order."""
    out = [("gandalf", "lru")] if {"gandalf", "lru"} <= set(points) else []
    for p in points:
        if p.startswith("gandalf-wa "):
            twin = "gandalf " + p[len("gandalf-wa "):]
            if twin in points:
                out.append((p, twin))
            if "dynamo" in points:
                out.append((p, "dynamo"))
    return out


def flatten(s, path):
    """One run's `kv --json` as a flat row with units in its keys."""
    with open(path) as f:
        d = json.load(f)
    att, per = d.get("attribution"), d.get("wear_per_kind")
    if not att or not per:
        raise SystemExit("wear_attribution: %s: no attribution in this kv --json (an older build?)"
                         % path)
    r = {"set": s, "policy": d["policy"], "params": d["params"] or "",
         "requests": d["requests"], "passes": d["passes"], "miss_ratio": d["miss_ratio"],
         "waf": d["waf"], "waf_cumulative": d["waf_cumulative"],
         "steady": int(bool(d["lifetime_days"].get("steady"))),
         "drive_writes": d["drive_writes"],
         "lifetime_erase_days": d["lifetime_days"].get("erase"),
         "ssd_read_bytes": d["ssd_read_bytes"],
         "load_latency_mean_s": d["load_latency_s"]["mean"]}
    nand = att["pad_program_bytes"]
    host = 0
    for k, name in KINDS:
        a = att[k]
        for cause, key in CAUSES:
            r["%s_%s_program_bytes" % (name, cause.lower())] = a[key]
            nand += a[key]
        host += a["host_program_bytes"]
        r["%s_evictions" % name] = per[k]["evictions"]
        r["%s_gc_copy_caused_bytes" % name] = per[k]["gc_copy_bytes_caused"]
    r["pad_program_bytes"] = att["pad_program_bytes"]
    r["nand_program_bytes"] = nand
    r["host_program_bytes"] = host
    if host and abs(nand / host - d["waf_cumulative"]) > 1e-3 * d["waf_cumulative"] + 1e-4:
        raise SystemExit("wear_attribution: %s: the attribution's parts make a WAF of %.4f, the "
                         "run's cumulative WAF is %.4f" % (path, nand / host, d["waf_cumulative"]))
    n = d["requests"]
    r["nand_per_request_bytes"] = nand / n if n else None
    r["host_per_request_bytes"] = host / n if n else None
    r["states_share_of_host"] = r["states_host_program_bytes"] / host if host else None
    r["copy_share_of_nand"] = (nand - host - att["pad_program_bytes"]) / nand if nand else None
    for k, name in KINDS:
        ev = r["%s_evictions" % name]
        r["gc_copy_per_evicted_%s_bytes" % name[:-1]] = \
            r["%s_gc_copy_caused_bytes" % name] / ev if ev else None
    return r


def main():
    index, out = sys.argv[1:3]
    runs = [flatten(*line.split()) for line in open(index) if line.strip()]
    sets = list(dict.fromkeys(r["set"] for r in runs))
    folds = fr.fold_sets(sets)
    points = list(dict.fromkeys(fr.run_label(r) for r in runs))
    by = {(fr.run_label(r), r["set"]): r for r in runs}
    fr.write_csv(os.path.join(out, "wear-attribution.csv"), runs)

    def across(p, key, fmt, scale=1.0):
        def v(s):
            r = by.get((p, s))
            x = None if r is None else r.get(key)
            return None if x is None else x / scale
        return fr.with_range(v("all"), [v(s) for s in folds], fmt)

    lines = ["Every figure is the drive's own attribution over the whole run (its fill "
             "included): the whole trace, then the range over the %d folds in brackets. "
             "`*`: not steady. NAND per request counts every program (host writes, GC and "
             "wear-leveling copies, padding); copies caused per evicted object charge each GC "
             "victim's copies to the objects whose leaving made the victim's other pages "
             "invalid." % len(folds), ""]
    rows = []
    for p in points:
        rows.append([p + ("" if all(by[(p, s)]["steady"] for s in sets if (p, s) in by) else "*"),
                     across(p, "miss_ratio", lambda x: "%.4f" % x),
                     across(p, "waf", lambda x: "%.2f" % x),
                     across(p, "waf_cumulative", lambda x: "%.2f" % x),
                     across(p, "states_share_of_host", lambda x: "%.0f%%" % (100 * x)),
                     across(p, "copy_share_of_nand", lambda x: "%.0f%%" % (100 * x)),
                     across(p, "nand_per_request_bytes", lambda x: "%.1f" % x, MiB),
                     across(p, "gc_copy_per_evicted_state_bytes", lambda x: "%.1f" % x, MB),
                     across(p, "gc_copy_per_evicted_chunk_bytes", lambda x: "%.2f" % x, MB)])
    lines += fr.md_table(["policy", "miss", "WAF (window)", "WAF (whole run)", "states' share of host bytes",
                          "copies' share of NAND bytes", "NAND MiB per request",
                          "GC copy MB caused per evicted state", "per evicted chunk"], rows)
    lines += ["", "The comparisons (ratio of the per-run figures, whole trace, folds' range, "
              "verdict):", ""]
    crow = []
    for a, b in pairs(points):
        for what, key in FIGURES:
            def ratio(s):
                x, y = by.get((a, s)), by.get((b, s))
                if not x or not y or x[key] is None or not y[key]:
                    return None
                return x[key] / y[key]
            crow.append([what, a, b, fr.format_verdict(ratio("all"), [ratio(s) for s in folds])
                         if folds else fr.fmt_ratio(ratio("all"))])
    lines += fr.md_table(["figure", "run", "against", "ratio"], crow)
    fr.write_lines(os.path.join(out, "table.md"), lines)

    head = ["policy"] + ["%s %s" % (name, c) for _, name in KINDS for c, _ in CAUSES] + ["padding"]
    for s in sets:
        with open(os.path.join(out, "plot-%s.csv" % s.replace("/", "of")), "w") as f:
            f.write(",".join(head) + "\n")
            for p in points:
                r = by.get((p, s))
                if r is None:
                    continue
                n = r["requests"] or 1
                vals = [r["%s_%s_program_bytes" % (name, c.lower())] / n / MiB
                        for _, name in KINDS for c, _ in CAUSES] + [r["pad_program_bytes"] / n / MiB]
                f.write(",".join([p] + ["%.3f" % v for v in vals]) + "\n")


if __name__ == "__main__":
    main()
