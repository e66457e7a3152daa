#!/usr/bin/env python3
"""waf_check.py INDEX OUT - waf-check's table, its answers in words, and the figures' data.

INDEX: one line per run, "DRIVE TRIM ALLOC LOOPS USER_BYTES TABLE.csv" (TABLE.csv: the merged
`kv` row of that run). Writes OUT/waf-check.csv, OUT/table.md and OUT/plot-DRIVE-TRIM-ALLOC.csv.
Everything written depends only on the runs' tables (no wall time), so a rerun gives the same
bytes: tests/test_results.sh compares table.md with results/README.md. A run is steady as
fgresults.is_steady says."""
import os
import sys

import fgresults as fr

COLS = ["drive", "trim", "alloc", "policy", "loops", "drive_writes", "steady", "miss_ratio",
        "token_miss_ratio", "request_miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days",
        "lifetime_naive_pe_days", "lifetime_erase_days", "erase_over_tbw"]


num = fr.num


def ranks(xs):
    """1 = largest; ties share the mean rank"""
    order = sorted(range(len(xs)), key=lambda i: -xs[i])
    r = [0.0] * len(xs)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and xs[order[j + 1]] == xs[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    n = len(a)
    ma, mb = sum(ra) / n, sum(rb) / n
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    va = sum((x - ma) ** 2 for x in ra) ** 0.5
    vb = sum((y - mb) ** 2 for y in rb) ** 0.5
    return cov / (va * vb) if va and vb else float("nan")


def load(index):
    rows = []
    for line in open(index):
        drive, trim, alloc, loops, user, path = line.split()
        r = fr.read_row(path)
        w = int(r["ssd_write_bytes"])
        tbw, erase = num(r["lifetime_tbw_days"]), num(r["lifetime_erase_days"])
        dw = fr.drive_writes(r, int(user))
        rows.append({
            "drive": drive, "trim": trim, "alloc": alloc, "policy": r["policy"],
            "loops": int(r["passes"]), "drive_writes": "%.3f" % dw, "steady": str(fr.is_steady(r, int(user))).lower(),
            "miss_ratio": r["miss_ratio"], "token_miss_ratio": r["token_miss_ratio"],
            "request_miss_ratio": r["request_miss_ratio"], "ssd_write_bytes": w, "waf": r["waf"] or "",
            "lifetime_tbw_days": r["lifetime_tbw_days"],
            "lifetime_naive_pe_days": r["lifetime_naive_pe_days"],
            "lifetime_erase_days": r["lifetime_erase_days"],
            "erase_over_tbw": "%.3f" % (erase / tbw) if tbw and erase and tbw != float("inf")
            and erase != float("inf") else ""})
    return rows


def configs(rows):
    seen = []
    for r in rows:
        k = (r["drive"], r["trim"], r["alloc"])
        if k not in seen:
            seen.append(k)
    return seen


def answers(rows, out):
    """The two questions, answered from the numbers, one line per configuration."""
    out.append("")
    out.append("| drive | TRIM | layout | TBW ranking = erase-count ranking? | "
               "Spearman(writes per pass, WAF) |")
    out.append("|---|---|---|---|---|")
    for k in configs(rows):
        rs = [r for r in rows if (r["drive"], r["trim"], r["alloc"]) == k and
              num(r["lifetime_tbw_days"]) not in (None, float("inf")) and
              num(r["lifetime_erase_days"]) not in (None, float("inf"))]
        tbw = sorted(rs, key=lambda r: -num(r["lifetime_tbw_days"]))
        ers = sorted(rs, key=lambda r: -num(r["lifetime_erase_days"]))
        same = [r["policy"] for r in tbw] == [r["policy"] for r in ers]
        flips = []
        for i, a in enumerate(tbw):
            for b in tbw[i + 1:]:
                if num(a["lifetime_erase_days"]) < num(b["lifetime_erase_days"]):
                    flips.append("%s/%s" % (a["policy"], b["policy"]))
        rank = "yes" if same else "no: %d of %d pairs flip (%s)" % (
            len(flips), len(rs) * (len(rs) - 1) // 2, ", ".join(flips))
        wr = [r for r in rs if r["waf"]]
        rho = spearman([r["ssd_write_bytes"] / r["loops"] for r in wr], [float(r["waf"]) for r in wr])
        wafs = sorted({r["waf"] for r in wr})
        corr = "%+.2f" % rho if rho == rho else "- (WAF %s for all)" % wafs[0] if len(wafs) == 1 \
            else "-"
        out.append("| %s | %s | %s | %s | %s |" % (k[0], k[1], k[2], rank, corr))


def main():
    index, outdir = sys.argv[1:3]
    rows = load(index)
    fr.write_csv(os.path.join(outdir, "waf-check.csv"), rows, COLS)
    for k in configs(rows):
        with open(os.path.join(outdir, "plot-%s-%s-%s.csv" % k), "w") as f:
            for r in rows:
                if (r["drive"], r["trim"], r["alloc"]) == k:
                    f.write("%s,%s,%s,%s,%s\n" % (r["policy"], r["lifetime_tbw_days"],
                                                  r["lifetime_naive_pe_days"],
                                                  r["lifetime_erase_days"], r["waf"] or "nan"))
    out = ["| drive | TRIM | layout | policy | passes | drive writes | miss: blocks / requests | "
           "host GB | WAF | TBW div. d | naive P/E d | erase count d | erase / TBW |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append("| %s | %s | %s | %s | %d | %s%s | %.4f / %.4f | %.0f | %s | %s | %s | %s | %s |" % (
            r["drive"], r["trim"], r["alloc"], r["policy"], r["loops"], r["drive_writes"],
            "" if r["steady"] == "true" else " (not steady)", float(r["miss_ratio"]),
            float(r["request_miss_ratio"]),
            r["ssd_write_bytes"] / 1e9, r["waf"] or "-", r["lifetime_tbw_days"],
            r["lifetime_naive_pe_days"], r["lifetime_erase_days"], r["erase_over_tbw"] or "-"))
    answers(rows, out)
    fr.write_lines(os.path.join(outdir, "table.md"), out)


if __name__ == "__main__":
    main()
