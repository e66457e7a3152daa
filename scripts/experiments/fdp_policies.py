#!/usr/bin/env python3
"""fdp_policies.py INDEX OUT - fdp-policies' tables and the figure's data.

INDEX: "SET POLICY PLACEMENT LOOPS USER_BYTES TABLE.csv" per run (SET: all, the whole trace,
or a fold). Two tables, each with the whole trace's value, the folds' range and the verdict
(fgresults):
  1. per policy and placement: the WAF, whether it is about 1 (at most ABOUT_ONE on the whole
     trace and in every fold, in none, or it depends on the sample), the WAF over the policy's
     WAF with one handle, and the erase-count life over one handle's (both runs steady);
  2. Gandalf, and gandalf-wa when it ran (Gandalf's admission evicting the SSD tier in recency
     order, results/README.md 5e), against each baseline under each placement: its erase-count
     life over the baseline's (both steady) beside its TBW-division life over the baseline's,
     which is the write savings alone (host bytes per day; WAF 1 assumed). When the first
     follows the second, the drive no longer undoes what the policy saves.
Writes OUT/fdp-policies.csv (every run, with its set), OUT/table.md and OUT/plot.dat (WAF by
placement, one line per policy, the whole trace)."""
import os
import sys

import fgresults as fr

COLS = ["miss_ratio", "ssd_write_bytes", "waf", "lifetime_tbw_days", "lifetime_erase_days"]
ORDER = ["set", "policy", "placement", "loops", "drive_writes", "steady"] + COLS
# the rule for "about 1": a WAF at most this
ABOUT_ONE = 1.10
# the policies compared with the baselines (every other policy that ran)
SUBJECTS = ["gandalf", "gandalf-wa"]


def about_one(wafs):
    """"yes, in every fold" when every WAF given (the whole trace's first) is at most
    ABOUT_ONE, "no, in every fold" when none is, "depends on the sample" otherwise (or when one
    is missing)."""
    if any(w is None for w in wafs):
        return fr.DEPENDS
    ok = [w <= ABOUT_ONE for w in wafs]
    if all(ok):
        return "yes, in every fold"
    if not any(ok):
        return "no, in every fold"
    return fr.DEPENDS


class Runs:
    def __init__(self, runs):
        self.by = {(r["set"], r["policy"], r["placement"]): r for r in runs}
        self.sets = list(dict.fromkeys(r["set"] for r in runs))
        self.folds = fr.fold_sets(self.sets)
        self.policies = list(dict.fromkeys(r["policy"] for r in runs))
        self.placements = list(dict.fromkeys(r["placement"] for r in runs))

    def get(self, s, p, pl):
        return self.by.get((s, p, pl))

    def waf(self, s, p, pl):
        r = self.get(s, p, pl)
        return fr.num(r["waf"]) if r else None

    def ratio(self, s, a, b, col, steady=True):
        """col of run a over col of run b (a, b: (policy, placement)) in set s; None when a run
        is missing or, with steady, either is not steady."""
        ra, rb = self.get(s, *a), self.get(s, *b)
        if not ra or not rb or (steady and (ra["steady"] != "true" or rb["steady"] != "true")):
            return None
        return fr.life_ratio(fr.num(ra[col]), fr.num(rb[col]))

    def unsteady(self, runs):
        return sum(self.by[(s, p, pl)]["steady"] != "true" for s in self.sets for p, pl in runs
                   if (s, p, pl) in self.by)

    def cell(self, values, fmt):
        return fr.with_range(values[0], values[1:], fmt)

    def verdict(self, values, fmt):
        return "%s: %s" % (self.cell(values, fmt), fr.verdict_word(values[0], values[1:]))


def waf_table(R, plot):
    lead = ["Over %d folds of the conversations, each scaled to 1/%d of the DRAM and of the drive: "
            "the whole trace's value, the folds' range in brackets, and the verdict on which side "
            "of 1 a ratio lies (`-`: a run not steady). The WAF ratio pairs each fold's runs and "
            "is given for runs that are not steady too." % (len(R.folds), len(R.folds)), ""] \
        if R.folds else []
    body = []
    with open(plot, "w") as f:
        f.write("policy " + " ".join(R.placements) + "\n")
        for p in R.policies:
            f.write(p + " " + " ".join("%s" % (R.waf("all", p, pl) or "nan") for pl in R.placements) + "\n")
            for pl in R.placements:
                w = [R.waf(s, p, pl) for s in R.sets]
                w0 = [R.waf(s, p, "none") for s in R.sets]
                wr = [a / b if a is not None and b else None for a, b in zip(w, w0)]
                life = [R.ratio(s, (p, pl), (p, "none"), "lifetime_erase_days") for s in R.sets]
                n = R.unsteady([(p, pl)])
                body.append([p, pl, R.cell(w, lambda x: "%.3f" % x), about_one(w),
                             "-" if pl == "none" else R.verdict(wr, lambda x: "%.3f" % x),
                             "-" if pl == "none" else R.verdict(life, fr.fmt_ratio),
                             "%d of %d" % (n, len(R.sets)) if n else "-"])
    return lead + fr.md_table(["policy", "placement", "WAF", "about 1 (WAF <= %.2f)?" % ABOUT_ONE,
                        "WAF / one handle's", "erase-count life / one handle's",
                        "runs not steady"], body)


def gandalf_table(R):
    body = []
    subjects = [p for p in SUBJECTS if p in R.policies]
    for sub in subjects:
        for pl in R.placements:
            for b in R.policies:
                if b in SUBJECTS:
                    continue
                erase = [R.ratio(s, (sub, pl), (b, pl), "lifetime_erase_days") for s in R.sets]
                tbw = [R.ratio(s, (sub, pl), (b, pl), "lifetime_tbw_days", steady=False)
                       for s in R.sets]
                follows = [e / t if e is not None and t else None for e, t in zip(erase, tbw)]
                body.append(([sub] if len(subjects) > 1 else []) +
                            [pl, b, R.verdict(erase, fr.fmt_ratio), R.verdict(tbw, fr.fmt_ratio),
                             R.cell(follows, lambda x: "%.2f" % x)])
    who = " and ".join(subjects)
    return ["", "%s against each baseline under the same placement: the erase-count life "
            "ratio (both runs steady, else `-`), the TBW-division ratio (the write savings alone, "
            "at WAF 1), and the first over the second (1: the lifetime follows the write "
            "savings; below 1: the drive takes back that share of them). Whole trace, the folds' "
            "range in brackets." % who.capitalize(), ""] + \
        fr.md_table((["policy"] if len(subjects) > 1 else []) +
                    ["placement", "baseline", ("Gandalf's " if subjects == ["gandalf"] else "") +
                     "erase-count life / baseline's",
                     "TBW-division life / baseline's", "erase-count ratio / TBW ratio"], body)


def main():
    index, out = sys.argv[1:3]
    runs = fr.load_runs(index, ["policy", "placement"], COLS)
    fr.write_csv(os.path.join(out, "fdp-policies.csv"), runs, ORDER)
    R = Runs(runs)
    lines = waf_table(R, os.path.join(out, "plot.dat"))
    if any(p in R.policies for p in SUBJECTS) and len(R.policies) > 1:
        lines += gandalf_table(R)
    fr.write_lines(os.path.join(out, "table.md"), lines)


if __name__ == "__main__":
    main()
