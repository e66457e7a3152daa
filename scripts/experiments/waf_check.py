#!/usr/bin/env python3
"""waf_check.py INDEX OUT - waf-check's table, its answers in words, and the figures' data.

INDEX: one line per run, "SET DRIVE TRIM ALLOC LOOPS USER_BYTES TABLE.csv" (SET: all for the
whole trace, or a fold; TABLE.csv: the merged `kv` row of that run). Writes OUT/waf-check.csv
(every run, with its set), OUT/table.md (the whole trace's runs and answers, then each policy
against LRU over the folds) and OUT/plot-DRIVE-TRIM-ALLOC.csv (the whole trace).
Everything written depends only on the runs' tables (no wall time), so a rerun gives the same
bytes: tests/test_results.sh compares table.md with results/README.md. A run is steady as
fgresults.is_steady says."""
import os
import sys

import fgresults as fr

COLS = ["set", "drive", "trim", "alloc", "policy", "loops", "drive_writes", "steady", "miss_ratio",
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
        sset, drive, trim, alloc, loops, user, path = line.split()
        r = fr.read_row(path)
        w = int(r["ssd_write_bytes"])
        tbw, erase = num(r["lifetime_tbw_days"]), num(r["lifetime_erase_days"])
        dw = fr.drive_writes(r, int(user))
        rows.append({
            "set": sset, "drive": drive, "trim": trim, "alloc": alloc, "policy": r["policy"],
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


# Policies designed here from these very measurements (gandalf-wa: Gandalf's admission with the
# SSD tier evicting in recency order, results/README.md 5e). They have their rows, but the two
# questions (does the TBW ranking survive, does writing less lower the WAF) are asked of the
# published policies: counting a policy built to answer them would be circular.
OURS = {"gandalf-wa"}


def measured(rows, k):
    """Configuration k's runs of the published policies (not OURS) with both lifetimes finite."""
    return [r for r in rows if (r["drive"], r["trim"], r["alloc"]) == k and
            r["policy"] not in OURS and
            num(r["lifetime_tbw_days"]) not in (None, float("inf")) and
            num(r["lifetime_erase_days"]) not in (None, float("inf"))]


def flips(rs):
    """The pairs of runs that the TBW division and the erase counts order differently."""
    tbw = sorted(rs, key=lambda r: -num(r["lifetime_tbw_days"]))
    out = []
    for i, a in enumerate(tbw):
        for b in tbw[i + 1:]:
            if num(a["lifetime_erase_days"]) < num(b["lifetime_erase_days"]):
                out.append("%s/%s" % (a["policy"], b["policy"]))
    return out


def correlation(rs):
    """Spearman's rho of writes per pass against WAF over rs (nan when undefined)."""
    wr = [r for r in rs if r["waf"]]
    if len(wr) < 2:
        return float("nan")
    return spearman([r["ssd_write_bytes"] / r["loops"] for r in wr], [float(r["waf"]) for r in wr])


def answers(rows, out):
    """The two questions, answered from the numbers, one line per configuration."""
    out.append("")
    out.append("| drive | TRIM | layout | TBW ranking = erase-count ranking? | "
               "Spearman(writes per pass, WAF) |")
    out.append("|---|---|---|---|---|")
    for k in configs(rows):
        rs = measured(rows, k)
        tbw = sorted(rs, key=lambda r: -num(r["lifetime_tbw_days"]))
        ers = sorted(rs, key=lambda r: -num(r["lifetime_erase_days"]))
        same = [r["policy"] for r in tbw] == [r["policy"] for r in ers]
        fl = flips(rs)
        rank = "yes" if same else "no: %d of %d pairs flip (%s)" % (
            len(fl), len(rs) * (len(rs) - 1) // 2, ", ".join(fl))
        rho = correlation(rs)
        wafs = sorted({r["waf"] for r in rs if r["waf"]})
        corr = "%+.2f" % rho if rho == rho else "- (WAF %s for all)" % wafs[0] if len(wafs) == 1 \
            else "-"
        out.append("| %s | %s | %s | %s | %s |" % (k[0], k[1], k[2], rank, corr))


def life_ratio(a, b, attr):
    """a's lifetime over b's (attr: the column), None unless both runs are steady."""
    if a is None or b is None or a["steady"] != "true" or b["steady"] != "true":
        return None
    return fr.life_ratio(num(a[attr]), num(b[attr]))


def folds_table(runs, out):
    """Each policy against LRU in the same configuration, on the whole trace with the range
    over the folds and the verdict (fgresults.fold_verdict); then, per configuration, the
    pairs that flip and the correlation, with their ranges. A ratio needs both runs steady."""
    sets = list(dict.fromkeys(r["set"] for r in runs))
    folds = fr.fold_sets(sets)
    by = {(r["set"], r["drive"], r["trim"], r["alloc"], r["policy"]): r for r in runs}
    whole = [r for r in runs if r["set"] == "all"]
    out += ["", "Over %d folds of the conversations, each scaled to 1/%d of the DRAM and of the "
            "drive: the whole trace's value, the folds' range in brackets, and the verdict on "
            "which side of 1 the ratio lies (`-`: a run not steady, or no LRU run)." %
            (len(folds), len(folds)), ""]
    body = []
    f2, f4 = (lambda x: "%.2f" % x), (lambda x: "%.4f" % x)
    fx = fr.fmt_ratio
    for k in configs(whole):
        for pol in dict.fromkeys(r["policy"] for r in whole if (r["drive"], r["trim"], r["alloc"]) == k):
            def get(s, p=pol):
                return by.get((s,) + k + (p,))

            def ratio(s, attr):
                return life_ratio(get(s), get(s, "lru"), attr)

            wafs = [num(get(s)["waf"]) if get(s) else None for s in sets]
            misses = [fr.miss(get(s)) if get(s) else None for s in sets]
            cells = list(k) + [pol, fr.with_range(misses[0], misses[1:], f4),
                               fr.with_range(wafs[0], wafs[1:], f2)]
            for attr in ("lifetime_erase_days", "lifetime_tbw_days"):
                rs = [ratio(s, attr) for s in sets]
                cells.append("-" if pol == "lru" else "%s: %s" % (
                    fr.with_range(rs[0], rs[1:], fx), fr.verdict_word(rs[0], rs[1:])))
            body.append(cells)
    out += fr.md_table(["drive", "TRIM", "layout", "policy", "miss", "WAF",
                        "erase-count life / LRU's", "TBW-division life / LRU's"], body)
    out += [""]
    body = []
    for k in configs(whole):
        per = [[r for r in runs if r["set"] == s and r["steady"] == "true"] for s in sets]
        nfl = [len(flips(measured(rs, k))) for rs in per]
        rho = [correlation(measured(rs, k)) for rs in per]
        body.append(list(k) + [fr.with_range(nfl[0], nfl[1:], lambda x: "%d" % x),
                               "%s: %s" % (fr.with_range(rho[0], rho[1:], lambda x: "%+.2f" % x),
                                           fr.verdict_word(rho[0], rho[1:], pivot=0))])
    out += fr.md_table(["drive", "TRIM", "layout", "pairs the erase counts flip (steady runs)",
                        "Spearman(writes per pass, WAF), steady runs"], body)


def main():
    index, outdir = sys.argv[1:3]
    runs = load(index)
    fr.write_csv(os.path.join(outdir, "waf-check.csv"), runs, COLS)
    rows = [r for r in runs if r["set"] == "all"]
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
    if len({r["set"] for r in runs}) > 1:
        folds_table(runs, out)
    fr.write_lines(os.path.join(outdir, "table.md"), out)


if __name__ == "__main__":
    main()
