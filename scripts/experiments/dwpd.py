#!/usr/bin/env python3
"""dwpd.py INDEX OUT TIER_BYTES - dwpd's table and the figure's data.

INDEX: "MODEL RATE PAPER_DWPD INFO.json TABLE.csv" per run (RATE: sessions per second, or
"trace" for the trace's own arrivals; INFO.json: `trace info --json` at that rate). DWPD over
the replay = bytes written / the trace's span x 86,400 / TIER_BYTES; DWPD of a stream = rate x
bytes per session x 86,400 / TIER_BYTES (a trace's own rate: sessions / span); the rate at which
the stream needs the paper's DWPD inverts the latter. Writes OUT/dwpd.csv, OUT/table.md and
OUT/plot.csv (one block per model)."""
import json
import os
import sys

import fgresults as fr


def row(m, rate, paper, info, r, tier):
    """One run's figures (strings as the table prints them)."""
    b, span, n = int(r["ssd_write_bytes"]), float(info["duration_s"]), int(info["sessions"])
    lam = n / span if rate == "trace" else float(rate)
    per = b / n
    return {"model": m, "session_rate": "%g" % lam, "rate_source": "trace" if rate == "trace" else "set",
            "sessions": n, "span_h": "%.2f" % (span / 3600), "host_tb": "%.4f" % (b / 1e12),
            "miss_ratio": r["miss_ratio"], "gb_per_session": "%.2f" % (per / 1e9),
            "dwpd_replay": "%.3f" % (b / span * 86400 / tier),
            "dwpd_stream": "%.2f" % (lam * per * 86400 / tier),
            "paper_dwpd": paper, "rate_for_paper": "%.4f" % (float(paper) * tier / 86400 / per)}


def load(index, tier):
    rows = []
    for line in open(index):
        m, rate, paper, info, path = line.split()
        with open(info) as f:
            i = json.load(f)
        rows.append(row(m, rate, paper, i, fr.read_row(path), tier))
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


def main():
    index, out, tier = sys.argv[1], sys.argv[2], int(sys.argv[3])
    rows = load(index, tier)
    fr.write_csv(os.path.join(out, "dwpd.csv"), rows)
    fr.write_lines(os.path.join(out, "table.md"), table(rows))
    write_plot(rows, os.path.join(out, "plot.csv"))


if __name__ == "__main__":
    main()
