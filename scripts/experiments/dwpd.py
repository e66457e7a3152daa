#!/usr/bin/env python3
"""dwpd.py INDEX OUT TIER_BYTES - dwpd's table and the figure's data.

INDEX: "SET MODEL RATE PAPER_DWPD RUN_TIER INFO.json TABLE.csv" per run (SET: all, the whole
trace, or a fold; RATE: sessions per second, or "trace" for the trace's own arrivals; RUN_TIER:
the tier bytes the run had, 1/K of TIER_BYTES in a fold; INFO.json: `trace info --json` of the
sample at that rate). DWPD over the replay = bytes written / the sample's span x 86,400 /
RUN_TIER; DWPD of a stream = rate x bytes per session x 86,400 / TIER_BYTES (a trace's own rate:
sessions / span); the rate at which the stream needs the paper's DWPD inverts the latter.
Writes OUT/dwpd.csv (every run, with its set), OUT/table.md (the whole trace; then each figure
with the folds' range) and OUT/plot.csv (one block per model, the whole trace)."""
import json
import os
import sys

import fgresults as fr


def row(sset, m, rate, paper, info, r, run_tier, tier):
    """One run's figures (strings as the table prints them)."""
    b, span, n = int(r["ssd_write_bytes"]), float(info["duration_s"]), int(info["sessions"])
    lam = n / span if rate == "trace" else float(rate)
    per = b / n
    return {"set": sset, "_rate": rate, "_per": per, "model": m, "session_rate": "%g" % lam, "rate_source": "trace" if rate == "trace" else "set",
            "sessions": n, "span_h": "%.2f" % (span / 3600), "host_tb": "%.4f" % (b / 1e12),
            "miss_ratio": r["miss_ratio"], "gb_per_session": "%.2f" % (per / 1e9),
            "dwpd_replay": "%.3f" % (b / span * 86400 / run_tier),
            "dwpd_stream": "%.2f" % (lam * per * 86400 / tier),
            "paper_dwpd": paper, "rate_for_paper": "%.4f" % (float(paper) * tier / 86400 / per)}


def load(index, tier):
    rows = []
    for line in open(index):
        sset, m, rate, paper, run_tier, info, path = line.split()
        with open(info) as f:
            i = json.load(f)
        rows.append(row(sset, m, rate, paper, i, fr.read_row(path), int(run_tier), tier))
    return rows


def table(rows):
    return fr.md_table(
        ["model", "sessions/s", "span h", "host TB", "GB per session", "DWPD, replay", "DWPD, stream",
         "paper", "stream rate for the paper's DWPD"],
        [[r["model"], r["session_rate"], r["span_h"], r["host_tb"], r["gb_per_session"],
          r["dwpd_replay"], r["dwpd_stream"], r["paper_dwpd"], r["rate_for_paper"] + " /s"]
         for r in rows])


def write_plot(rows, path):
    fr.write_blocks(path, rows, "model", "rate,replay,stream,paper,%s", lambda r: "%s,%s,%s,%s" % (
        r["session_rate"], r["dwpd_replay"], r["dwpd_stream"], r["paper_dwpd"]))


def folds_table(runs, tier):
    """Per model and rate: GB per session and both DWPD figures on the whole trace, with the
    folds' range (a fold's stream: the whole trace's rate of its conversations)."""
    sets = list(dict.fromkeys(r["set"] for r in runs))
    by = {(r["set"], r["model"], r["_rate"]): r for r in runs}
    body = []
    for r in (r for r in runs if r["set"] == "all"):
        def col(k, r=r):
            return [float(by[(s, r["model"], r["_rate"])][k]) if (s, r["model"], r["_rate"]) in by
                    else None for s in sets]
        cells = [r["model"], r["session_rate"]]
        for k, f in (("gb_per_session", "%.2f"), ("dwpd_replay", "%.3f")):
            v = col(k)
            cells.append(fr.with_range(v[0], v[1:], lambda x, f=f: f % x))
        # the stream at the whole trace's rate, of each sample's conversations
        v = [x * float(r["session_rate"]) * 86400 / tier for x in col("_per")]
        cells.append(fr.with_range(v[0], v[1:], lambda x: "%.2f" % x))
        body.append(cells)
    return ["", "Over %d folds of the conversations (each with 1/%d of the DRAM and of the "
            "tier): the whole trace's figure and the folds' range in brackets; a fold's stream has the "
            "whole trace's rate of the fold's conversations." % (
                len(sets) - 1, len(sets) - 1), ""] + fr.md_table(
        ["model", "sessions/s", "GB per session", "DWPD, replay", "DWPD, stream"], body)


def main():
    index, out, tier = sys.argv[1], sys.argv[2], int(sys.argv[3])
    runs = load(index, tier)
    fr.write_csv(os.path.join(out, "dwpd.csv"), runs, [k for k in runs[0] if not k.startswith("_")])
    rows = [r for r in runs if r["set"] == "all"]
    lines = table(rows)
    if len({r["set"] for r in runs}) > 1:
        lines += folds_table(runs, tier)
    fr.write_lines(os.path.join(out, "table.md"), lines)
    write_plot(rows, os.path.join(out, "plot.csv"))


if __name__ == "__main__":
    main()
