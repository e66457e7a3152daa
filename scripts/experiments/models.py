#!/usr/bin/env python3
"""models.py INDEX OUT - models' table and the figure's data.
models.py state-ratio MODEL BLOCK_TOKENS - MODEL's linear-attention state over one
full-attention chunk of BLOCK_TOKENS tokens ("%.1f"), from `femu-gandalf models --json` on stdin.

INDEX: "SET MODEL STATE_PER_CHUNK DRAM_BYTES SSD_BYTES TABLE.csv" per run (SET: all, the first
sample, or another: a seed or a fold). Rows are ordered by the state-to-chunk ratio; Gandalf's
TBW-division life is divided by each other policy's on the same model and sample. Writes
OUT/models.csv (every run, with its set), OUT/table.md (the first sample's table, then each
ratio with the other samples' range and the verdict) and OUT/plot.dat (the ratios, one line per
model, the first sample)."""
import json
import os
import sys

import fgresults as fr

COLS = ["policy", "miss_ratio", "token_miss_ratio", "ssd_write_bytes", "lifetime_tbw_days"]


def state_ratio(catalog, name, block_tokens):
    """A model's linear-attention state bytes over a full-attention chunk's (block_tokens tokens)."""
    m = [x for x in catalog if x["name"] == name][0]
    return m["linear_state_bytes"] / (m["full_kv_bytes_per_token"] * block_tokens)


def load(index):
    rows = []
    for line in open(index):
        sset, m, ratio, dram, ssd, path = line.split()
        r = fr.read_row(path)
        rows.append(dict({"set": sset, "model": m, "state_per_chunk": ratio, "dram_bytes": dram, "ssd_bytes": ssd},
                         **{k: r[k] for k in COLS}))
    rows.sort(key=lambda r: float(r["state_per_chunk"]))  # (stable: the sets keep their order)
    return rows


def gains(by, others):
    """Gandalf's TBW-division life over each of others' (nan without a gandalf run)."""
    g = float(by["gandalf"]["lifetime_tbw_days"]) if "gandalf" in by else float("nan")
    return [g / float(by[p]["lifetime_tbw_days"]) for p in others]


def table(rows, plot):
    pols = list(dict.fromkeys(r["policy"] for r in rows))
    others = [p for p in pols if p != "gandalf"]
    body = []
    with open(plot, "w") as f:
        f.write("model " + " ".join(others) + "\n")
        for m in dict.fromkeys(r["model"] for r in rows):
            by = {r["policy"]: r for r in rows if r["model"] == m}
            gs = gains(by, others)
            first = by[pols[0]]
            body.append([m, first["state_per_chunk"], "%.2f" % (int(first["dram_bytes"]) / 1e9)] +
                        ["%.4f, %s" % (fr.miss(by[p]), by[p]["lifetime_tbw_days"]) for p in pols] +
                        ["%.2fx" % x for x in gs])
            f.write("%s(%s) %s\n" % (m, first["state_per_chunk"], " ".join("%.4f" % x for x in gs)))
    return fr.md_table(["model", "state / chunk", "DRAM GB"] + ["%s: miss, TBW d" % p for p in pols] +
                       ["gandalf life / %s" % p for p in others], body)


def folds_table(runs):
    """Gandalf's TBW-division life over each other policy's, per model: on the first sample, the
    others' range, and the verdict."""
    sets = list(dict.fromkeys(r["set"] for r in runs))
    by = {(r["set"], r["model"], r["policy"]): r for r in runs}
    pols = list(dict.fromkeys(r["policy"] for r in runs))
    others = [p for p in pols if p != "gandalf"]
    body = []
    for m in dict.fromkeys(r["model"] for r in runs):
        cells = [m]
        for p in others:
            q = [fr.life_ratio(fr.tbw_life(by[(s, m, "gandalf")]), fr.tbw_life(by[(s, m, p)]))
                 if (s, m, "gandalf") in by and (s, m, p) in by else None for s in sets]
            cells.append("%s: %s" % (fr.with_range(q[0], q[1:], fr.fmt_ratio),
                                     fr.verdict_word(q[0], q[1:])))
        body.append(cells)
    return ["", "On %d more samples (%s): the first sample's ratio, the others' range in "
            "brackets, and the verdict on which side of 1 it lies." % (
                len(sets) - 1, ", ".join(fr.fold_sets(sets))), ""] + fr.md_table(
        ["model"] + ["gandalf's TBW-division life / %s's" % p for p in others], body)


def main():
    if sys.argv[1:2] == ["state-ratio"]:
        print("%.1f" % state_ratio(json.load(sys.stdin), sys.argv[2], int(sys.argv[3])))
        return
    index, out = sys.argv[1:3]
    runs = load(index)
    fr.write_csv(os.path.join(out, "models.csv"), runs)
    lines = table([r for r in runs if r["set"] == "all"], os.path.join(out, "plot.dat"))
    if len({r["set"] for r in runs}) > 1:
        lines += folds_table(runs)
    fr.write_lines(os.path.join(out, "table.md"), lines)


if __name__ == "__main__":
    main()
