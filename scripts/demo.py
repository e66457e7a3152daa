#!/usr/bin/env python3
"""scripts/demo.py DIR POLICY... - make demo's table and closing sentence from DIR/POLICY.json
(kv --json of each policy; the first is the one compared with the others, the baselines).
The comparison rule is fgresults.py's: the longest-lived steady baseline whose miss ratio is at
most the first policy's plus DEMO_WINDOW."""
import json
import os
import sys
import textwrap

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "experiments"))
import fgresults  # noqa: E402

DEMO_WINDOW = 0.005  # a comparable miss ratio: the window of the placement goal (docs/kv.md)


def row(policy, r):
    """A kv --json object as the kv CSV row fgresults reads."""
    lt = r["lifetime_days"]
    return {"policy": policy, "miss_ratio": str(r["miss_ratio"]),
            "lifetime_erase_days": "" if lt["erase"] is None else str(lt["erase"]),
            "lifetime_tbw_days": "" if lt["tbw"] is None else str(lt["tbw"]),
            "steady": "1" if r.get("steady") else "0"}


def say(text):
    print(textwrap.fill(text, 100))


def days(x, steady=True):
    return "%12s" % "-" if x is None else "%11.1f%s" % (x, " " if steady else "*")


def main():
    d, pols = sys.argv[1], sys.argv[2:]
    runs = [(p, json.load(open(os.path.join(d, p + ".json")))) for p in pols]
    r0 = runs[0][1]
    print("trace: %d requests in %d to %d passes, as new users each pass, over %.0f s of trace "
          "time; model %s; DRAM %.0f GiB; SSD tier %.1f GiB" % (
              r0["requests"] // r0["passes"], min(r["passes"] for _, r in runs),
              max(r["passes"] for _, r in runs), r0["trace_duration_s"], r0["model"],
              r0["dram_bytes"] / 2**30, r0["ssd_bytes"] / 2**30))
    print()
    fmt = "%-14s %7s %10s %6s %7s %12s %12s %12s"
    print(fmt % ("policy", "miss", "SSD writes", "drive", "WAF", "TBW div.", "naive P/E", "erase count"))
    print(fmt % ("", "ratio", "GiB", "writes", "", "days", "days", "days"))
    for p, r in runs:
        lt = r["lifetime_days"]
        waf = "%7.3f" % r["waf"] if r["waf"] is not None else "%7s" % "-"
        print("%-14s %7.4f %10.1f %6.2f %s %s %s %s" % (
            p, r["miss_ratio"], r["ssd_write_bytes"] / 2**30, r["drive_writes"], waf,
            days(lt["tbw"]), days(lt["naive_pe"]), days(lt["erase"], r["steady"])))
    print()
    print("Miss ratio: share of prompt blocks recomputed. TBW div.: rated TBW / host writes per day (WAF 1")
    print("assumed); naive P/E: P/E x NAND / host writes; erase count: the emulated drive's measured erase")
    print("rate extrapolated to end of life (docs/lifetime.md). The trace is only 15 minutes long, so the")
    print("drive ages at the trace's write rate: lifetimes are short, ratios are the point.")
    if any(not r["steady"] for _, r in runs):
        print("* not steady: the drive's WAF still moved by more than 5% between passes (docs/kv.md).")
    name, first = runs[0]
    base = [row(p, r) for p, r in runs[1:]]
    c = fgresults.compare(row(name, first), base, DEMO_WINDOW)
    if c.baseline is None:
        say("No baseline reaches a steady miss ratio within +%g of %s's %.3f." % (
            DEMO_WINDOW, name, first["miss_ratio"]))
    else:
        b = c.baseline
        say("%s (miss %.3f) against the longest-lived baseline at most %g above its miss ratio, %s "
              "(miss %.3f): %s its erase-count life (%.1f against %.1f days); the TBW division says %s." % (
                  name.capitalize(), first["miss_ratio"], DEMO_WINDOW, b["policy"], float(b["miss_ratio"]),
                  fgresults.fmt_ratio(c.erase_ratio), fgresults.erase_life(row(name, first)),
                  fgresults.erase_life(b), fgresults.fmt_ratio(c.tbw_ratio)))
    print("JSON for any row: femu-gandalf kv ... --policy P --json; every policy and its sweep: --policy all --sweep")


if __name__ == "__main__":
    main()
