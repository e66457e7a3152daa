#!/usr/bin/env python3
"""fgresults.py - the rules that turn `femu-gandalf kv` tables into the experiments' findings.

Every experiment reads kv's CSV (one row per run; columns as kv_result_csv_header writes them,
femu-gandalf/run/kv_run.c) and decides the same few things: which runs reached steady state,
which point of a policy's parameter sweep is its best, which baseline a policy is compared
with, and whether a ratio holds on every sample of the trace or depends on which one was run.
Those rules live here, once, with tests on hand-made tables (tests/test_fgresults.py); the
experiments' scripts only read their runs and print.

Rows are dicts of strings, as csv.DictReader gives them. Newer tables end with the columns
drive_writes, steady, lifetime_erase_cumulative_days, lifetime_basis and eol; every function
here works on tables with and without them.

Run as a command, it serves the experiments' shell library (lib.sh):
    fgresults.py json-get KEY[.KEY...]...       values from one JSON document on stdin
Python 3 standard library only."""
import csv
import json
import math
import sys
from collections import namedtuple

# the drive writes from which a row counts as steady state when its table has no steady column
STEADY_DRIVE_WRITES = 3
# how far above a sweep's lowest miss its longest-lived point may lie (lifetime-miss's table)
SWEEP_WINDOW = 0.01
# the comparison rules: a baseline point qualifies when its miss is at most the policy
# point's miss plus the window (name -> window; the first is the paper's)
RULES = {
    "equal or lower miss": 0.0,
    "miss +0.005": 0.005,
    "miss +0.01": 0.01,
}


# --- reading -----------------------------------------------------------------------------


# columns renamed to carry their unit, by their old names: tables written before read the same
RENAMED = {"ssd_write_full": "ssd_write_full_bytes", "ssd_write_linear": "ssd_write_linear_bytes",
           "cost_per_1k": "cost_per_1k_usd"}


def _renamed(row):
    return {RENAMED.get(k, k): v for k, v in row.items()}


def read_rows(path):
    """Every row of the kv CSV at path, as dicts of strings, in the table's order (columns under
    their current names, RENAMED)."""
    with open(path, newline="") as f:
        return [_renamed(r) for r in csv.DictReader(f)]


def read_row(path):
    """The first row of the kv CSV at path (a one-run table)."""
    with open(path, newline="") as f:
        return _renamed(next(csv.DictReader(f)))


def num(s):
    """A CSV field as a number: "" (not measured) is None, "inf" is infinity."""
    if s is None or s == "":
        return None
    return float(s)


def miss(row):
    """The row's miss ratio (prompt blocks recomputed), a float."""
    return float(row["miss_ratio"])


def erase_life(row):
    """The erase-count lifetime in days (None without a drive; inf when nothing was written)."""
    return num(row.get("lifetime_erase_days"))


def tbw_life(row):
    """The TBW-division lifetime in days (None when not given)."""
    return num(row.get("lifetime_tbw_days"))


# --- steadiness ----------------------------------------------------------------------------


def drive_writes(row, user_bytes=None):
    """How many times the run wrote the drive over.

    ssd_write_bytes / user_bytes when user_bytes is given (exact, not rounded); otherwise the
    table's own drive_writes column (rounded to 4 decimals by kv). None when neither is
    available (no user_bytes, and no column or an empty one: a run without a drive)."""
    if user_bytes is not None:
        return int(row["ssd_write_bytes"]) / user_bytes
    own = row.get("drive_writes")
    return float(own) if own not in (None, "") else None


def is_steady(row, user_bytes=None):
    """Whether the run reached steady state, so that its erase count measures the drive.

    The table's steady column when it has one with a value ("1" steady, anything else not);
    otherwise the run is steady iff drive_writes(row, user_bytes) >= STEADY_DRIVE_WRITES (3):
    below it the erase count extrapolates a drive whose GC has barely started. A row with
    neither a steady column nor a way to count its drive writes is not steady."""
    own = row.get("steady")
    if own not in (None, ""):
        return own.strip() == "1"
    dw = drive_writes(row, user_bytes)
    return dw is not None and dw >= STEADY_DRIVE_WRITES


def load_runs(index, keys, cols):
    """An experiment's runs from its index file, one line per run: "SET K1 .. Kn LOOPS
    USER_BYTES TABLE.csv" (keys names K1 .. Kn; LOOPS is not read: the table's passes are). Each
    run as a dict of strings: set, the keys, loops (the run's passes), drive_writes (over
    USER_BYTES, 3 decimals), steady ("true" or "false", is_steady) and cols from its table."""
    runs = []
    with open(index) as f:
        for line in f:
            fields = line.split()
            if len(fields) != len(keys) + 4:
                raise ValueError("%s: %r: want SET %s LOOPS USER_BYTES TABLE" % (index, line.strip(), " ".join(keys)))
            sset, named, user, path = fields[0], fields[1:1 + len(keys)], int(fields[-2]), fields[-1]
            r = read_row(path)
            run = {"set": sset}
            run.update(zip(keys, named))
            run.update({"loops": r["passes"], "drive_writes": "%.3f" % drive_writes(r, user),
                        "steady": str(is_steady(r, user)).lower()})
            run.update({k: r[k] for k in cols})
            runs.append(run)
    return runs


# --- the best point of a sweep -----------------------------------------------------------

Best = namedtuple("Best", "lowest longest steady")
Best.__doc__ = """A sweep's best points: lowest (its lowest-miss row), longest (its longest-lived
row near that miss) and steady (whether longest was chosen among steady rows; False means the
TBW fallback was taken and the caller must mark it)."""


def _life_key(life):
    """A lifetime as a sort key: a missing one (None) sorts below every measured one."""
    return -math.inf if life is None else life


def lowest_miss(rows):
    """The row with the lowest miss; among equal misses, the longest erase-count life; among
    those, the first in the table's order. None for no rows."""
    if not rows:
        return None
    return min(rows, key=lambda r: (miss(r), -_life_key(erase_life(r))))


def best_points(rows, window=SWEEP_WINDOW, user_bytes=None):
    """A policy's sweep (rows: its points) reduced to its best points, as a Best.

    lowest: lowest_miss(rows). longest: among the rows whose miss is at most lowest's miss +
    window, the steady ones (is_steady) by erase-count life, longest first; a non-steady row is
    never chosen while a steady one is in the window. With none steady there, the longest by
    TBW-division life, and steady is False. Ties: the first in the table's order. A missing
    lifetime counts as the shortest. Best(None, None, False) for no rows."""
    lo = lowest_miss(rows)
    if lo is None:
        return Best(None, None, False)
    near = [r for r in rows if miss(r) <= miss(lo) + window]
    steady = [r for r in near if is_steady(r, user_bytes)]
    if steady:
        return Best(lo, max(steady, key=lambda r: _life_key(erase_life(r))), True)
    return Best(lo, max(near, key=lambda r: _life_key(tbw_life(r))), False)


# --- comparison rules --------------------------------------------------------------------

Comparison = namedtuple("Comparison", "baseline erase_ratio tbw_ratio")
Comparison.__doc__ = """A policy point against its best baseline under one rule: the chosen
baseline row (None when no baseline qualifies), the point's erase-count life over the
baseline's, and the same by TBW division (None when undefined)."""


def life_ratio(a, b):
    """a / b for two lifetimes: None when either is missing or both are infinite; infinity
    when only a is infinite or b is 0 (and a is not); 0 when only b is infinite."""
    if a is None or b is None or (math.isinf(a) and math.isinf(b)):
        return None
    if b == 0:
        return math.inf if a > 0 else None
    return a / b


def best_baseline(point, baselines, window, user_bytes=None):
    """The longest-lived steady baseline row by erase count whose miss is at most the point's
    miss + window (window 0: equal or lower miss). Non-steady rows (is_steady) never qualify;
    ties: the first in the given order. None when no row qualifies."""
    limit = miss(point) + window
    ok = [b for b in baselines if miss(b) <= limit and is_steady(b, user_bytes)]
    if not ok:
        return None
    return max(ok, key=lambda b: _life_key(erase_life(b)))


def compare(point, baselines, window, user_bytes=None):
    """The point against best_baseline(point, baselines, window), as a Comparison. The point
    itself is not checked for steadiness: the caller marks a non-steady one."""
    b = best_baseline(point, baselines, window, user_bytes)
    if b is None:
        return Comparison(None, None, None)
    return Comparison(b, life_ratio(erase_life(point), erase_life(b)),
                      life_ratio(tbw_life(point), tbw_life(b)))


def compare_rules(point, baselines, rules=None, user_bytes=None):
    """compare() under every rule: {rule name: Comparison}, in the rules' order (RULES by
    default)."""
    rules = RULES if rules is None else rules
    return {name: compare(point, baselines, w, user_bytes) for name, w in rules.items()}


# --- fold verdicts -----------------------------------------------------------------------

HOLDS = "holds in every fold"
DEPENDS = "depends on the sample"
EQUAL = "equal in every fold"

Verdict = namedtuple("Verdict", "holds lo hi")
Verdict.__doc__ = """A ratio's verdict over the folds: holds (True or False) and the lowest and
highest ratio over the folds that have one (None when none has)."""


def _side(x, pivot=1.0):
    """+1 above pivot, -1 below it, 0 at it or undefined (None, nan)."""
    if x is None or x != x or x == pivot:
        return 0
    return 1 if x > pivot else -1


def fold_verdict(whole, folds, pivot=1.0):
    """Whether a ratio's direction survives resampling: it holds when the ratio on the whole set
    and on every one of the folds lie strictly on the same side of pivot (1 for a ratio, 0 for a
    correlation or a difference; all above, or all below). A value exactly at the pivot, or a
    fold without one (None: no baseline qualified there, or a run was not steady), makes the
    finding depend on the sample. lo and hi range over the folds' defined values. At least one
    fold is needed (ValueError)."""
    folds = list(folds)
    if not folds:
        raise ValueError("fold_verdict: no folds")
    side = _side(whole, pivot)
    holds = side != 0 and all(_side(f, pivot) == side for f in folds)
    have = [f for f in folds if f is not None and f == f]
    return Verdict(holds, min(have) if have else None, max(have) if have else None)


def fmt_ratio(x, digits=2):
    """A ratio as "1.74x" ("-" when undefined, "inf" when infinite)."""
    if x is None or x != x:
        return "-"
    if math.isinf(x):
        return "inf"
    return "%.*fx" % (digits, x)


def format_verdict(whole, folds, digits=2):
    """A ratio with its folds' range and verdict, e.g.
    "1.74x (folds 0.62-2.10x: depends on the sample)" or
    "0.45x (folds 0.41-0.55x: holds in every fold)"."""
    v = fold_verdict(whole, folds)
    word = HOLDS if v.holds else DEPENDS
    if v.lo is None:
        return "%s (folds -: %s)" % (fmt_ratio(whole, digits), word)
    return "%s (folds %.*f-%s: %s)" % (fmt_ratio(whole, digits), digits, v.lo,
                                       fmt_ratio(v.hi, digits), word)


def fold_sets(sets):
    """The folds among a table's sets (every set but "all", the whole trace), in order."""
    return [s for s in sets if s != "all"]


def with_range(whole, folds, fmt):
    """A value on the whole set with the range over the folds, e.g. "1.79 (1.52-2.04)", or
    "+0.30 (-0.10 to +0.40)" when the range starts below 0:
    fmt(x) formats one value; an undefined one (None, nan) prints "-", and the range covers the
    defined ones only ("(-)" when none is). Without folds, the whole value alone."""
    def f(x):
        return "-" if x is None or x != x else fmt(x)
    folds = list(folds)
    if not folds:
        return f(whole)
    have = [x for x in folds if x is not None and x == x]
    lo, hi = (min(have), max(have)) if have else (None, None)
    rng = "-" if not have else f(lo) if f(lo) == f(hi) else \
        "%s%s%s" % (f(lo), " to " if lo < 0 else "-", f(hi))
    return "%s (%s)" % (f(whole), rng)


def verdict_word(whole, folds, pivot=1.0):
    """HOLDS or DEPENDS for fold_verdict(whole, folds, pivot) ("-" without folds), or EQUAL when
    the whole set and every fold are exactly at pivot: two runs that do the same (gandalf-wa and
    gandalf when the SSD tier never evicts) have no direction, and none that depends on the
    sample either."""
    folds = list(folds)
    if not folds:
        return "-"
    if all(x == pivot for x in [whole] + folds):
        return EQUAL
    return HOLDS if fold_verdict(whole, folds, pivot).holds else DEPENDS


# --- writing -----------------------------------------------------------------------------


def run_label(row):
    """A run as "policy params" ("policy" alone at its defaults)."""
    return "%s %s" % (row["policy"], row["params"]) if row["params"] else row["policy"]


def fmt_days(x):
    """A lifetime in days: "-" when undefined, "inf" when infinite, else a whole number."""
    return "-" if x is None else ("inf" if x == float("inf") else "%.0f" % x)


def run_cell(row):
    """A run as "miss / WAF / erase days", with * when it is not steady."""
    return "%.4f / %s / %s%s" % (miss(row), row["waf"] or "-", fmt_days(erase_life(row)),
                                 "" if is_steady(row) else "*")


def md_row(cells):
    """One markdown table row: "| a | b |"."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def md_rule(ncols):
    """The markdown header rule for ncols columns: "|---|---|"."""
    return "|" + "---|" * ncols


def md_table(header, rows):
    """A markdown table as a list of lines: the header row, its rule, then each row."""
    return [md_row(header), md_rule(len(header))] + [md_row(r) for r in rows]


def write_lines(path, lines):
    """lines to path, each ended by a newline (a table.md)."""
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_csv(path, rows, cols=None):
    """rows (dicts) to path as CSV with a header (cols, default the first row's keys; other keys
    are left out), "\\n" line ends."""
    cols = list(rows[0]) if cols is None else cols
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, cols, extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


# --- the shell library's commands --------------------------------------------------------


def write_blocks(path, rows, key, header, line, order=None):
    """gnuplot's data for one line per group: for each value of row[key] (in first-seen order),
    the header line header % value, the group's rows (sorted by order when given) as
    line(row), then two blank lines (gnuplot's index separator)."""
    with open(path, "w") as f:
        for v in dict.fromkeys(r[key] for r in rows):
            f.write(header % v + "\n")
            group = [r for r in rows if r[key] == v]
            for r in sorted(group, key=order) if order else group:
                f.write(line(r) + "\n")
            f.write("\n\n")


def json_get(doc, path):
    """doc's value at a dotted path ("perf.mb_s")."""
    for k in path.split("."):
        doc = doc[k]
    return doc


def _cli(argv):
    cmd, args = (argv[0], argv[1:]) if argv else ("", [])
    if cmd == "json-get" and args:
        doc = json.load(sys.stdin)
        print(" ".join(str(json_get(doc, p)) for p in args))
    else:
        sys.exit("usage: fgresults.py json-get KEY...")


if __name__ == "__main__":
    _cli(sys.argv[1:])
