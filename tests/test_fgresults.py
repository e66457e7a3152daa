#!/usr/bin/env python3
"""test_fgresults.py - the experiments' shared rules (scripts/experiments/fgresults.py) on
small hand-made tables, each answer worked out by hand beside it.

    python3 tests/test_fgresults.py        (or: python3 -m unittest tests/test_fgresults.py)"""
import math
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
EXP = os.path.join(HERE, "..", "scripts", "experiments")
sys.path.insert(0, EXP)
import fgresults as fr  # noqa: E402

OLD_HEADER = ("policy,params,requests,miss_ratio,ssd_write_bytes,ssd_write_full,ssd_write_linear,"
              "ssd_read_bytes,hit_share_full,hit_share_linear,waf,lifetime_tbw_days,"
              "lifetime_naive_pe_days,lifetime_erase_days,latency_mean_s,latency_p99_s,cost_per_1k,"
              "wall_s,token_miss_ratio,peak_active_kv_bytes,policy_figures,request_miss_ratio")
NEW_HEADER = OLD_HEADER + ",drive_writes,steady,lifetime_erase_cumulative_days,lifetime_basis,eol"

USER = 100  # user bytes of the hand-made drive: ssd_write_bytes 300 is 3 drive writes


def row(policy, params, miss, written, erase, tbw, **extra):
    """A kv row with the fields the rules read (strings, as csv gives them)."""
    r = {"policy": policy, "params": params, "miss_ratio": miss, "ssd_write_bytes": str(written),
         "lifetime_erase_days": erase, "lifetime_tbw_days": tbw}
    r.update(extra)
    return r


def write(text):
    f = tempfile.NamedTemporaryFile("w", suffix=".csv", delete=False)
    f.write(text)
    f.close()
    return f.name


class Reading(unittest.TestCase):
    def test_old_csv(self):
        # a table without the new columns: steady comes from the drive writes (250/100 = 2.5 < 3,
        # 400/100 = 4 >= 3); a quoted params field keeps its comma
        path = write(OLD_HEADER + "\n"
                     'gandalf,"lambda=8,x=1",10,0.043000,250,1,2,3,0.1,0.2,1.5,100,200,150,'
                     '0.1,0.2,0.3,1.0,0.05,7,"",0.06\n'
                     'lru,"",10,0.050000,400,1,2,3,0.1,0.2,1.0,90,180,inf,'
                     '0.1,0.2,0.3,1.0,0.05,7,"",0.06\n')
        rows = fr.read_rows(path)
        os.unlink(path)
        self.assertEqual([r["params"] for r in rows], ["lambda=8,x=1", ""])
        # the columns renamed with their units read under the new names
        self.assertEqual((rows[0]["cost_per_1k_usd"], rows[0]["ssd_write_full_bytes"],
                          rows[0]["ssd_write_linear_bytes"]), ("0.3", "1", "2"))
        self.assertNotIn("cost_per_1k", rows[0])
        self.assertNotIn("steady", rows[0])
        self.assertEqual(fr.drive_writes(rows[0], USER), 2.5)
        self.assertIsNone(fr.drive_writes(rows[0]))  # no column, no user bytes
        self.assertEqual([fr.is_steady(r, USER) for r in rows], [False, True])
        self.assertFalse(fr.is_steady(rows[1]))  # no way to count its drive writes
        self.assertEqual(fr.erase_life(rows[1]), math.inf)
        self.assertEqual(fr.erase_life(rows[0]), 150.0)

    def test_new_csv(self):
        # with the new columns, steady is the table's own: row 1 wrote 5 drive writes but its
        # WAF had not settled (steady 0); row 2 wrote 2.9 by our count yet kv says steady 1;
        # row 3 has no drive (empty drive_writes, steady 0)
        path = write(NEW_HEADER + "\n"
                     'gandalf,"",10,0.04,500,1,2,3,0.1,0.2,1.5,100,200,150,0.1,0.2,0.3,1.0,0.05,7,"",'
                     '0.06,5.0000,0,140,window-erase-rate,0\n'
                     'lru,"",10,0.05,290,1,2,3,0.1,0.2,1.0,90,180,120,0.1,0.2,0.3,1.0,0.05,7,"",'
                     '0.06,2.9000,1,118,program-rate,1\n'
                     'lru,"",10,0.05,290,1,2,3,0.1,0.2,,90,,,0.1,0.2,0.3,1.0,0.05,7,"",0.06,,0,,,0\n')
        rows = fr.read_rows(path)
        os.unlink(path)
        self.assertEqual([fr.is_steady(r, USER) for r in rows], [False, True, False])
        self.assertEqual([fr.is_steady(r) for r in rows], [False, True, False])
        self.assertEqual(fr.drive_writes(rows[0]), 5.0)  # the column, without user bytes
        self.assertEqual(fr.drive_writes(rows[1], USER), 2.9)  # computed, given user bytes
        self.assertIsNone(fr.drive_writes(rows[2]))
        self.assertIsNone(fr.erase_life(rows[2]))
        self.assertEqual(rows[1]["lifetime_basis"], "program-rate")
        path = write(NEW_HEADER + "\n" + "x," * 26 + "1\n")
        self.assertEqual(fr.read_row(path)["eol"], "1")
        os.unlink(path)

    def test_load_runs(self):
        # two runs of 100-byte drives: 300 bytes written is 3 drive writes (steady by count, as
        # the old table has no steady column); 250 is 2.5 (not steady)
        t1 = write(OLD_HEADER + ",passes\n" + "lru,,10,0.5,300,200,100,0,0,0,1.0,10,20,30,0,0,0,1,0.5,0,,0.2,4\n")
        t2 = write(OLD_HEADER + ",passes\n" + "gandalf,,10,0.4,250,200,50,0,0,0,1.5,12,24,20,0,0,0,1,0.4,0,,0.2,3\n")
        index = write("all lru fresh - 100 %s\n1/2s gandalf same - 100 %s\n" % (t1, t2))
        runs = fr.load_runs(index, ["policy", "loop_ids"], ["miss_ratio", "waf"])
        self.assertEqual(runs, [
            {"set": "all", "policy": "lru", "loop_ids": "fresh", "loops": "4", "drive_writes": "3.000",
             "steady": "true", "miss_ratio": "0.5", "waf": "1.0"},
            {"set": "1/2s", "policy": "gandalf", "loop_ids": "same", "loops": "3",
             "drive_writes": "2.500", "steady": "false", "miss_ratio": "0.4", "waf": "1.5"}])
        bad = write("all lru - 100 %s\n" % t1)  # a key short
        with self.assertRaises(ValueError):
            fr.load_runs(bad, ["policy", "loop_ids"], [])
        for p in (t1, t2, index, bad):
            os.unlink(p)

    def test_steady_boundary(self):
        # exactly 3 drive writes is steady; 299 bytes is not
        self.assertTrue(fr.is_steady(row("a", "", "0.1", 300, "1", "1"), USER))
        self.assertFalse(fr.is_steady(row("a", "", "0.1", 299, "1", "1"), USER))


class BestPoints(unittest.TestCase):
    # one policy's sweep; USER = 100, so written >= 300 is steady
    SWEEP = [
        row("g", "l=1", "0.040", 500, "100", "400"),  # A: lowest miss, steady, short-lived
        row("g", "l=2", "0.040", 500, "120", "300"),  # B: ties A's miss, lives longer: lowest
        row("g", "l=4", "0.045", 250, "900", "900"),  # C: in the window, longest, NOT steady
        row("g", "l=8", "0.050", 400, "300", "500"),  # D: 0.050 <= 0.040 + 0.01: in, steady
        row("g", "l=16", "0.0501", 400, "999", "999"),  # E: just outside the window
    ]

    def test_lowest_tie_by_erase_life(self):
        # A and B share the lowest miss; B's erase life (120) is longer
        self.assertIs(fr.lowest_miss(self.SWEEP), self.SWEEP[1])

    def test_longest_steady_in_window(self):
        # window 0.01 around 0.040: A, B, C, D; steady A, B, D; longest by erase: D (300);
        # C (900) is not steady and E (999) is outside
        b = fr.best_points(self.SWEEP, 0.01, USER)
        self.assertIs(b.lowest, self.SWEEP[1])
        self.assertIs(b.longest, self.SWEEP[3])
        self.assertTrue(b.steady)

    def test_window_is_a_parameter(self):
        # window 0.005: A, B, C (0.045 <= 0.045); steady A, B; longest: B (120)
        self.assertIs(fr.best_points(self.SWEEP, 0.005, USER).longest, self.SWEEP[1])

    def test_none_steady_falls_back_to_tbw_and_says_so(self):
        # every point below 3 drive writes: the longest by TBW within the window, flagged
        rs = [row("g", "a", "0.10", 100, "500", "50"),
              row("g", "b", "0.105", 100, "50", "70"),  # longest by TBW: chosen
              row("g", "c", "0.2", 100, "900", "900")]  # outside the window
        b = fr.best_points(rs, 0.01, USER)
        self.assertIs(b.longest, rs[1])
        self.assertFalse(b.steady)

    def test_life_ties_keep_the_first(self):
        rs = [row("g", "a", "0.1", 300, "50", "1"), row("g", "b", "0.1", 300, "50", "1")]
        b = fr.best_points(rs, 0.01, USER)
        self.assertIs(b.lowest, rs[0])
        self.assertIs(b.longest, rs[0])

    def test_infinite_and_missing_lives(self):
        # "inf" (nothing written) is the longest; "" (no drive) the shortest
        rs = [row("g", "a", "0.1", 300, "", "1"), row("g", "b", "0.1", 300, "inf", "1"),
              row("g", "c", "0.1", 300, "7", "1")]
        self.assertIs(fr.best_points(rs, 0.01, USER).longest, rs[1])
        self.assertIs(fr.lowest_miss(rs), rs[1])

    def test_new_columns_decide_steadiness(self):
        # by bytes both are steady (500/100); by the steady column only the shorter-lived one
        rs = [row("g", "a", "0.1", 500, "10", "1", steady="1"),
              row("g", "b", "0.1", 500, "90", "1", steady="0")]
        self.assertIs(fr.best_points(rs, 0.01, USER).longest, rs[0])

    def test_empty(self):
        self.assertEqual(fr.best_points([], 0.01, USER), fr.Best(None, None, False))


class Comparisons(unittest.TestCase):
    P = row("gandalf", "lambda=8", "0.0430", 400, "200", "300")
    BASE = [
        row("lru", "", "0.0420", 400, "100", "150"),  # X: lower miss, steady, erase 100
        row("lru", "", "0.0430", 400, "80", "160"),  # Y: equal miss, steady, erase 80
        row("lru-k", "k=2", "0.0440", 400, "125", "100"),  # Z: +0.001, steady, erase 125
        row("dynamo", "t=1", "0.0475", 400, "400", "200"),  # W: +0.0045, steady, erase 400
        row("dynamo", "t=2", "0.0470", 200, "999", "999"),  # V: +0.004, NOT steady
        row("lru-k", "k=3", "0.0530", 400, "500", "250"),  # U: +0.01 exactly, steady, erase 500
    ]

    def test_equal_or_lower(self):
        # window 0: X (0.042) and Y (0.043) qualify; longest by erase: X (100)
        c = fr.compare(self.P, self.BASE, 0.0, USER)
        self.assertIs(c.baseline, self.BASE[0])
        self.assertEqual(c.erase_ratio, 2.0)  # 200 / 100
        self.assertEqual(c.tbw_ratio, 2.0)  # 300 / 150

    def test_half_point(self):
        # window 0.005 (miss <= 0.048): X, Y, Z, W qualify (V is not steady); W: 400 -> 0.5x
        c = fr.compare(self.P, self.BASE, 0.005, USER)
        self.assertIs(c.baseline, self.BASE[3])
        self.assertEqual(c.erase_ratio, 0.5)
        self.assertEqual(c.tbw_ratio, 1.5)  # 300 / 200

    def test_rules_table(self):
        # window 0.01: 0.0430 + 0.01 is 0.053 in floating point too, so U (0.0530, erase 500)
        # qualifies and beats W; the ratios are 200/100, 200/400, 200/500
        got = fr.compare_rules(self.P, self.BASE, user_bytes=USER)
        self.assertEqual(list(got), list(fr.RULES))
        self.assertEqual([got[k].baseline for k in got], [self.BASE[0], self.BASE[3], self.BASE[5]])
        self.assertEqual([got[k].erase_ratio for k in got], [2.0, 0.5, 0.4])
        self.assertEqual([got[k].tbw_ratio for k in got], [2.0, 1.5, 1.2])

    def test_no_baseline_in_window(self):
        # every baseline misses more than 0.030: None, not a crash
        p = row("gandalf", "", "0.030", 400, "200", "300")
        self.assertEqual(fr.compare(p, self.BASE, 0.0, USER), fr.Comparison(None, None, None))
        self.assertIsNone(fr.best_baseline(p, [], 0.01, USER))

    def test_non_steady_never_qualifies(self):
        # V (0.047) is within 0.01 of 0.0415 but not steady: no baseline
        p = row("gandalf", "", "0.0415", 400, "200", "300")
        self.assertIsNone(fr.compare(p, [self.BASE[4]], 0.01, USER).baseline)

    def test_life_ratio(self):
        self.assertEqual(fr.life_ratio(3.0, 2.0), 1.5)
        self.assertIsNone(fr.life_ratio(None, 2.0))
        self.assertIsNone(fr.life_ratio(math.inf, math.inf))
        self.assertEqual(fr.life_ratio(math.inf, 2.0), math.inf)
        self.assertEqual(fr.life_ratio(2.0, math.inf), 0.0)
        self.assertEqual(fr.life_ratio(2.0, 0.0), math.inf)


class Folds(unittest.TestCase):
    def test_holds_above(self):
        v = fr.fold_verdict(1.74, [1.2, 2.1, 1.5])
        self.assertEqual(v, fr.Verdict(True, 1.2, 2.1))

    def test_holds_below(self):
        self.assertEqual(fr.format_verdict(0.45, [0.41, 0.55, 0.5]),
                         "0.45x (folds 0.41-0.55x: holds in every fold)")

    def test_mixed(self):
        self.assertEqual(fr.format_verdict(1.74, [0.62, 2.1, 1.3]),
                         "1.74x (folds 0.62-2.10x: depends on the sample)")

    def test_folds_agree_but_whole_does_not(self):
        self.assertFalse(fr.fold_verdict(0.9, [1.1, 1.2]).holds)

    def test_exactly_one_and_missing_folds(self):
        self.assertFalse(fr.fold_verdict(1.0, [1.0, 1.0]).holds)
        self.assertFalse(fr.fold_verdict(1.5, [1.2, 1.0]).holds)
        v = fr.fold_verdict(1.5, [1.2, None, 1.8])  # a fold without a baseline
        self.assertEqual(v, fr.Verdict(False, 1.2, 1.8))
        self.assertEqual(fr.format_verdict(1.5, [None]), "1.50x (folds -: depends on the sample)")
        self.assertRaises(ValueError, fr.fold_verdict, 1.5, [])

    def test_pivot_zero(self):
        # a correlation's sign: +0.30 on the whole set, every fold positive
        self.assertEqual(fr.fold_verdict(0.30, [0.1, 0.4], pivot=0), fr.Verdict(True, 0.1, 0.4))
        self.assertFalse(fr.fold_verdict(0.30, [0.1, -0.2], pivot=0).holds)
        self.assertFalse(fr.fold_verdict(0.0, [0.1, 0.2], pivot=0).holds)
        self.assertEqual(fr.verdict_word(-0.5, [-0.1, -0.9], pivot=0), fr.HOLDS)
        self.assertEqual(fr.verdict_word(-0.5, [], pivot=0), "-")
        # identical runs: exactly at the pivot everywhere is neither a direction nor noise
        self.assertEqual(fr.verdict_word(0.0, [0.0, 0.0], pivot=0), fr.EQUAL)
        self.assertEqual(fr.verdict_word(1.0, [1.0, 1.0, 1.0, 1.0]), fr.EQUAL)
        self.assertEqual(fr.verdict_word(1.0, [1.0, 1.01]), fr.DEPENDS)
        self.assertEqual(fr.verdict_word(1.0, [1.0, None]), fr.DEPENDS)

    def test_fold_sets(self):
        self.assertEqual(fr.fold_sets(["all", "1/4s", "2/4s"]), ["1/4s", "2/4s"])

    def test_with_range(self):
        f = lambda x: "%.2f" % x  # noqa: E731
        self.assertEqual(fr.with_range(1.789, [2.04, 1.52, None], f), "1.79 (1.52-2.04)")
        self.assertEqual(fr.with_range(1.0, [1.0, 1.001], f), "1.00 (1.00)")
        self.assertEqual(fr.with_range(None, [None], f), "- (-)")
        self.assertEqual(fr.with_range(2.0, [], f), "2.00")
        g = lambda x: "%+.2f" % x  # noqa: E731
        self.assertEqual(fr.with_range(0.3, [-0.1, 0.4], g), "+0.30 (-0.10 to +0.40)")


class Writing(unittest.TestCase):
    def test_md_table(self):
        self.assertEqual(fr.md_table(["a", "b"], [[1, "x"]]), ["| a | b |", "|---|---|", "| 1 | x |"])

    def test_fmt_ratio(self):
        self.assertEqual([fr.fmt_ratio(x) for x in (1.745, None, math.inf, 0.5)],
                         ["1.75x", "-", "inf", "0.50x"])

    def test_write_csv(self):
        path = write("")
        fr.write_csv(path, [{"a": 1, "b": "x,y", "_hidden": 0}], ["a", "b"])
        with open(path) as f:
            self.assertEqual(f.read(), 'a,b\n1,"x,y"\n')
        os.unlink(path)

    def test_cli(self):
        def run(args, stdin):
            return subprocess.run([sys.executable, os.path.join(EXP, "fgresults.py")] + args,
                                  input=stdin, capture_output=True, text=True, check=True).stdout
        self.assertEqual(run(["json-get", "a.b", "c"], '{"a": {"b": 1.5}, "c": 7}'), "1.5 7\n")
        with self.assertRaises(subprocess.CalledProcessError):
            run(["steady-loops", "100", "6", "1"], "")  # (passes come from kv --drive-writes)

if __name__ == "__main__":
    unittest.main()
