#!/usr/bin/env python3
"""lift_weka.py WORK OUT CONV MODEL SPEED DRAM SSD DRIVE GUEST_S ACCEL - scripts/experiments/lift-weka's
tables: OUT/policies.csv (every policy on the original and on the lifted trace) and OUT/table.md
(the pipeline's figures, then the same table), from the files the script left in WORK."""
import csv
import json
import os
import sys

import fgresults as fr

COLS = ["miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days", "lifetime_erase_days"]


def load_csv(path):
    """kv's CSV as {policy: row}, in the file's order."""
    with open(path, newline="") as f:
        return {r["policy"]: r for r in csv.DictReader(f)}


def load_json(path):
    with open(path) as f:
        return json.load(f)


def days(v):
    """A lifetime in days with thousands separators ("inf" when the run wrote nothing)."""
    return "inf" if v in ("inf", "") else format(float(v), ",.0f")


def main():
    work, out, conv, model, speed, dram, ssd, drive, guest_s, accel = sys.argv[1:11]
    orig, lifted = load_csv(os.path.join(work, "orig.csv")), load_csv(os.path.join(work, "lifted.csv"))
    if list(orig) != list(lifted):
        sys.exit("lift_weka: the two kv runs ran different policies: %s / %s" % (list(orig), list(lifted)))
    lift = load_json(os.path.join(work, "lift.json"))
    store = load_json(os.path.join(work, "share", "kv-store.json"))["store"]
    stats = load_json(os.path.join(work, "drive-stats.json"))
    cap = load_json(os.path.join(work, "cap-info.json"))
    orig_span = load_json(os.path.join(work, "orig-info.json"))["duration_s"]
    lifted_span = load_json(os.path.join(work, "lifted-info.json"))["duration_s"]

    with open(os.path.join(out, "policies.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy"] + [c + "_original" for c in COLS] + [c + "_lifted" for c in COLS])
        for p in orig:
            w.writerow([p] + [orig[p][c] for c in COLS] + [lifted[p][c] for c in COLS])

    a = lift["against"]
    equal = cap["write_bytes"] == stats["host_write_bytes"]
    same = [p for p in orig if all(orig[p][c] == lifted[p][c] for c in ("miss_ratio", "ssd_write_bytes"))]
    lines = [
        "%s conversations, %d requests; the guest's step took %s s under %s." % (
            conv, a["original"], guest_s, accel),
        "",
        "* The store in the guest (`kv --model %s --policy write-through --dram 0 --target /dev/nvme0n1"
        " --capture --meta 4M --iodepth 1 --timing x%s`): %d puts, %d gets, %d probes; %d reads"
        " verified." % (model, speed, store["puts"], store["gets"], store["probes"], store["verified"]),
        "* The capture: %d I/Os, %s bytes written; the drive counted %s host bytes written: %s." % (
            cap["ios"], format(cap["write_bytes"], ","), format(stats["host_write_bytes"], ","),
            "equal" if equal else "**they differ**"),
        "* `lift --speed %s --against`: %d requests in %d sessions; %d of %d visible requests exact"
        " in chain and session; %d chain errors, %d session errors; tokens off by %.3f%%; the lifted"
        " trace spans %.0f s against the original's %.0f s." % (
            speed, lift["requests"], lift["sessions"], a["exact"], a["original"] - a["invisible"],
            a["chain_wrong"], a["session_wrong"], 100 * a["token_error"],
            lifted_span, orig_span),
        "* `kv --policy all --model %s --dram %s --ssd %s %s` on both traces: %d of %d policies"
        " have the same miss ratio and SSD bytes%s." % (
            model, dram, ssd, drive, len(same), len(orig),
            "" if len(same) == len(orig) else " (the others: %s)" % ", ".join(p for p in orig if p not in same)),
        "",
    ]
    body = []
    for p in orig:
        x, y = orig[p], lifted[p]
        body.append([p, "%.4f" % float(x["miss_ratio"]), "%.4f" % float(y["miss_ratio"]),
                     format(int(x["ssd_write_bytes"]) / 1e6, ",.1f"), format(int(y["ssd_write_bytes"]) / 1e6, ",.1f"),
                     x["waf"], y["waf"], days(x["lifetime_tbw_days"]), days(y["lifetime_tbw_days"]),
                     days(x["lifetime_erase_days"]), days(y["lifetime_erase_days"])])
    lines += fr.md_table(["policy", "miss (original)", "miss (lifted)", "SSD writes MB (original)",
                          "SSD writes MB (lifted)", "WAF (original)", "WAF (lifted)", "TBW div. d (original)",
                          "TBW div. d (lifted)", "erase count d (original)", "erase count d (lifted)"], body)
    fr.write_lines(os.path.join(out, "table.md"), lines)
    print("\n".join(lines))
    if not equal:
        sys.exit("lift_weka: the capture's bytes written differ from the drive's host writes")


if __name__ == "__main__":
    main()
