#!/bin/bash
# test_results.sh - the experiments' quick mode, end to end: scripts/experiments/all
# --quick into a temporary directory, with its own job directories (so every run is made again
# by this build); then every CSV must parse with its expected columns and a row for each run,
# every figure must exist as PNG and SVG, meta.json must name the command, the commit and the
# wall time, and results/README.md's quick tables must be exactly the tables just made
# (scripts/experiments/readme-sync --check): the numbers in the README are the scripts' numbers.
# Usage: test_results.sh SOURCE_ROOT
set -u
ROOT=${1:?usage: test_results.sh SOURCE_ROOT}
cd "$ROOT"
FG=$ROOT/build/femu-gandalf
. tests/testlib.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

t0=$(date +%s)
if FG_EXP_WORK=$T/work scripts/experiments/all --quick --out-root "$T/out" >"$T/all.log" 2>&1; then
	pass "experiments/all --quick: $(tail -1 "$T/all.log") (test wall $(($(date +%s) - t0)) s)"
else
	fail "experiments/all --quick: $(tail -20 "$T/all.log")"
fi

# check_csv FILE ROWS COLUMN...: FILE has exactly ROWS data rows and these columns, each row full
check_csv() {
	local f=$1 n=$2
	shift 2
	local out
	if out=$(python3 - "$f" "$n" "$@" <<'PY'
import csv, sys
f, n, cols = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
rows = list(csv.DictReader(open(f)))
missing = [c for c in cols if c not in (rows[0] if rows else {})]
assert not missing, "missing columns %s" % missing
assert len(rows) == n, "%d rows, want %d" % (len(rows), n)
for i, r in enumerate(rows, 2):
    for c in cols:
        assert r[c] not in (None,), "line %d: no %s" % (i, c)
print("%d rows, %d columns" % (len(rows), len(rows[0])))
PY
	); then pass "$(basename "$f"): $out"; else fail "$f: $out"; fi
}
O=$T/out
# waf-check --quick: 1 drive x 2 TRIM x 2 layouts x 5 policies, on the whole trace and 2 folds
check_csv "$O/waf-check/waf-check.csv" 60 set drive trim alloc policy loops drive_writes steady miss_ratio \
	token_miss_ratio request_miss_ratio ssd_write_bytes waf lifetime_tbw_days lifetime_naive_pe_days lifetime_erase_days erase_over_tbw
# loop-ids --quick: 2 policies x 2 ways of looping, on the whole trace and 2 folds
check_csv "$O/loop-ids/loop-ids.csv" 12 set policy loop_ids loops drive_writes steady miss_ratio ssd_write_bytes \
	waf lifetime_tbw_days lifetime_erase_days
# hbf-endurance --quick: 1 preset x 2 policies, on the whole trace and 2 folds
check_csv "$O/hbf-endurance/hbf-endurance.csv" 6 set preset policy loops drive_writes miss_ratio token_miss_ratio request_miss_ratio \
	waf_pe_low waf_pe_high erase_years_pe_low erase_years_pe_high scaling tbw_years_pe_low pe_for_5y \
	load_latency_mean_s load_latency_p99_s
# lifetime-miss --quick: every point of seven policies' sweeps (17 + 10 + 1 + 1 + 10 + 3 + 10)
check_csv "$O/lifetime-miss/lifetime-miss.csv" 52 policy params miss_ratio token_miss_ratio request_miss_ratio ssd_write_bytes \
	waf lifetime_tbw_days lifetime_naive_pe_days lifetime_erase_days
# lifetime-folds --quick: 9 points on the whole trace and each of 2 folds, as they are and scaled
check_csv "$O/lifetime-folds/lifetime-folds.csv" 45 set policy params miss_ratio ssd_write_bytes waf \
	lifetime_tbw_days lifetime_erase_days drive_writes steady lifetime_erase_cumulative_days lifetime_basis eol
python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
sets = sorted(set(r['set'] for r in rows))
assert sets == ['1/2', '1/2s', '2/2', '2/2s', 'all'], sets
" "$O/lifetime-folds/lifetime-folds.csv" && pass "lifetime-folds: the whole trace and 2 folds" || fail "lifetime-folds: sets"
# capacity-ratio --quick: 5 splits x 5 policies; models --quick: 6 models x 5 policies; each on
# the whole trace and 2 folds
check_csv "$O/capacity-ratio/capacity-ratio.csv" 75 set dram ssd policy miss_ratio token_miss_ratio ssd_write_bytes \
	waf lifetime_tbw_days lifetime_erase_days
check_csv "$O/models/models.csv" 90 set model state_per_chunk dram_bytes ssd_bytes policy miss_ratio \
	token_miss_ratio ssd_write_bytes lifetime_tbw_days
# placement-hints --quick: 4 policies x 2 hints, on the whole trace and 2 folds
check_csv "$O/placement-hints/placement-hints.csv" 24 set policy streams loops drive_writes miss_ratio \
	ssd_write_bytes waf lifetime_tbw_days lifetime_erase_days
# fdp-policies --quick: 2 policies x 3 placements, on the whole trace and 2 folds
check_csv "$O/fdp-policies/fdp-policies.csv" 18 set policy placement loops drive_writes steady miss_ratio \
	ssd_write_bytes waf lifetime_tbw_days lifetime_erase_days
# fdp-drives --quick: FEMU's 4 rows; LMCache's shape, 4 orders and spares x with and without IDs
check_csv "$O/fdp-drives/femu.csv" 4 devsz_mb spare_factor femu_waf femu_bbssd_waf diff_pct idle_gc_waf
check_csv "$O/fdp-drives/lmcache.csv" 8 order spare physical_bytes placement handles trace_host_bytes trace_nand_bytes waf_trace \
	waf_last_drive_write pm9d3a_waf gc_write_bytes erases
# dwpd --quick: 2 models at the trace's own arrival rate, where a stream's DWPD is the replay's,
# on the whole trace and 2 folds
check_csv "$O/dwpd/dwpd.csv" 6 set model session_rate rate_source sessions span_h host_tb miss_ratio gb_per_session \
	dwpd_replay dwpd_stream paper_dwpd rate_for_paper
python3 -c "
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r['set'] != 'all':
        continue
    assert r['rate_source'] == 'trace' and abs(float(r['dwpd_replay']) - float(r['dwpd_stream'])) < 0.01, r
" "$O/dwpd/dwpd.csv" && pass "dwpd: a stream at the trace's own rate writes what its replay does" || fail "dwpd: replay and stream differ"
# wear-placement --quick: 5 points x (the whole trace and 2 scaled folds) x 3 setups (2 drives, and
# the paper's regime of DRAM at a share of the peak), and the goal judged for every point on every set
check_csv "$O/wear-placement/wear-placement.csv" 45 setup set policy params miss_ratio waf \
	lifetime_erase_days lifetime_tbw_days steady
python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted(set((r['setup'], r['set']) for r in rows)) == [(d, s) for d in ('ent-tlc-1t', 'ent-tlc-1t-dram10pct', 'ent-tlc-4t')
                                                             for s in ('1/2s', '2/2s', 'all')], rows
t = open(sys.argv[2]).read()
assert t.count('| ent-tlc-') == 3 * (3 + 3 * 3 + 5), 'a row is missing'
assert 'not met' in t or 'met on the whole trace' in t, 'no verdict'
" "$O/wear-placement/wear-placement.csv" "$O/wear-placement/table.md" &&
	pass "wear-placement: 3 setups, the whole trace and 2 folds, a verdict per point" || fail "wear-placement: sets or goal table"
# wear-attribution --quick: 8 points x (the whole trace and 2 scaled folds); every run's NAND
# bytes are its parts (wear_attribution.py refuses a run whose parts miss its cumulative WAF)
check_csv "$O/wear-attribution/wear-attribution.csv" 24 set policy params miss_ratio waf waf_cumulative \
	chunks_host_program_bytes chunks_gc_program_bytes states_host_program_bytes states_gc_program_bytes \
	pad_program_bytes nand_per_request_bytes gc_copy_per_evicted_state_bytes lifetime_erase_days
python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert sorted(set(r['set'] for r in rows)) == ['1/2s', '2/2s', 'all'], rows
for r in rows:
    parts = sum(int(r[k]) for k in r if k.endswith('_program_bytes') and k not in ('nand_program_bytes', 'host_program_bytes'))
    assert parts == int(r['nand_program_bytes']), (r['policy'], parts, r['nand_program_bytes'])
    host = int(r['chunks_host_program_bytes']) + int(r['states_host_program_bytes'])
    assert host == int(r['host_program_bytes']) and abs(parts / host - float(r['waf_cumulative'])) < 1e-3 * float(r['waf_cumulative']) + 1e-4, r
t = open(sys.argv[2]).read()
assert t.count('| gandalf-wa ') >= 2 and ('holds in every fold' in t or 'depends on the sample' in t), 'no comparison'
" "$O/wear-attribution/wear-attribution.csv" "$O/wear-attribution/table.md" &&
	pass "wear-attribution: 2 folds, the parts add up to every run's NAND bytes, comparisons with verdicts" ||
	fail "wear-attribution: sets, sums or comparisons"
# every experiment that compares: the whole trace and 2 folds, and a fold table with verdicts
for e in waf-check loop-ids capacity-ratio models placement-hints fdp-policies hbf-endurance dwpd; do
	if python3 -c "
import csv, sys
sets = sorted(set(r['set'] for r in csv.DictReader(open(sys.argv[1]))))
assert sets == ['1/2s', '2/2s', 'all'], sets
t = open(sys.argv[2]).read()
assert 'On 2 more samples' in t or 'Over 2 folds' in t, 'no fold table'
assert sys.argv[3] == 'dwpd' or 'holds in every fold' in t or 'depends on the sample' in t, 'no verdict'
" "$O/$e/$e.csv" "$O/$e/table.md" "$e"; then pass "$e: the whole trace, 2 folds and their table"
	else fail "$e: sets or fold table"; fi
done
for fig in dwpd/dwpd waf-check/waf-check-ent-tlc-1t loop-ids/loop-ids lifetime-miss/lifetime-miss lifetime-miss/writes-by-kind \
	lifetime-miss/latency-cost capacity-ratio/capacity-ratio models/models placement-hints/placement-hints \
	fdp-policies/fdp-policies fdp-drives/fdp-drives \
	hbf-endurance/hbf-endurance lifetime-folds/lifetime-folds wear-placement/wear-placement wear-attribution/wear-attribution; do
	if [ -s "$O/$fig.png" ] && [ "$(head -c 4 "$O/$fig.png" | od -An -c | tr -d ' ')" = '211PNG' ] &&
		grep -q "<svg" "$O/$fig.svg"; then pass "figure $fig: PNG and SVG"
	else fail "figure $fig: missing or not PNG/SVG"; fi
done
# a multiplot's SVG holds every panel, not only the last (replot after a multiplot drew one)
if grep -q 'TBW division (WAF 1 assumed)' "$O/lifetime-miss/lifetime-miss.svg" &&
	grep -q 'erase count (the emulated drive)' "$O/lifetime-miss/lifetime-miss.svg"; then
	pass "lifetime-miss.svg: both panels"
else fail "lifetime-miss.svg: a panel is missing"; fi
for e in waf-check loop-ids lifetime-miss lifetime-folds wear-placement wear-attribution capacity-ratio models placement-hints fdp-policies fdp-drives hbf-endurance dwpd; do
	python3 -c "
import json, sys, subprocess
m = json.load(open(sys.argv[1]))
assert m['command'].startswith('scripts/experiments/' + sys.argv[2]) and '--quick' in m['command'], m['command']
assert len(m['commit']) == 40 and m['wall_s'] >= 0 and m['quick'] is True and m['runs'] > 0 and m['runs_wall_s'] >= 0, m  # (dwpd's quick runs take a millisecond)
" "$O/$e/meta.json" "$e" && pass "$e/meta.json: command, commit, wall time" || fail "$e/meta.json"
done
# walltime: every quick experiment's meta.json found, and the total is their wall times' sum
if out=$(scripts/experiments/walltime --quick --root "$O") && python3 -c "
import json, sys
names = sys.argv[2].split()
want = sum(int(json.load(open(sys.argv[1] + '/' + n + '/meta.json'))['wall_s']) for n in names)
last = sys.stdin.read().strip().splitlines()[-1]
assert last.startswith('Total: %d s ' % want) and 'over %d experiments.' % len(names) in last, (want, last)
" "$O" "waf-check loop-ids lifetime-miss lifetime-folds wear-placement wear-attribution capacity-ratio models placement-hints fdp-policies fdp-drives hbf-endurance dwpd" <<<"$out"; then
	pass "walltime --quick: $(tail -1 <<<"$out")"
else fail "walltime --quick: $out"; fi
if ! scripts/experiments/walltime --quick --root "$T/nowhere" >/dev/null 2>&1; then
	pass "walltime: exit 1 when meta.json files are missing"
else fail "walltime: exit 0 without any meta.json"; fi
# --trace: an experiment on the user's own trace; here a small Bailian-format one (the paper's
# trace A is the user's to supply): 12 root chats, chains of 1-4 turns, 16-token blocks
python3 - "$T/bailian-a.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    cid, t = 100, 0.0
    for root in range(12):
        parent, ids = -1, []
        for turn in range(1 + root % 4):
            ids = ids + [root * 1000 + turn * 10 + k for k in range(3 + turn)]
            f.write(json.dumps({"chat_id": cid, "parent_chat_id": parent, "timestamp": t,
                                "input_length": 16 * len(ids) - 5, "output_length": 40, "type": "text",
                                "turn": turn + 1, "hash_ids": ids}) + "\n")
            parent, cid, t = cid, cid + 1, t + 1.5
PY
if FG_EXP_WORK=$T/work scripts/experiments/dwpd --quick --trace "$T/bailian-a.jsonl" --out "$T/bailian" >"$T/b.log" 2>&1 &&
	python3 -c "
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1] + '/dwpd.csv')))
assert len(rows) == 6 and all(r['sessions'] == '12' for r in rows if r['set'] == 'all'), rows
for m in ('paper-qwen3.5-27b', 'paper-kimi-k3'):  # the folds split the 12 sessions
    assert sum(int(r['sessions']) for r in rows if r['set'] != 'all' and r['model'] == m) == 12, rows
assert json.load(open(sys.argv[1] + '/meta.json'))['command'].endswith('--trace ' + sys.argv[2] + ' --out ' + sys.argv[1])
" "$T/bailian" "$T/bailian-a.jsonl"; then pass "dwpd --quick --trace on a Bailian-format trace: 12 sessions"
else fail "dwpd --trace bailian: $(tail -5 "$T/b.log")"; fi
expect_rc() { "$@" >"$T/e.log" 2>&1; echo $?; }
rc=$(expect_rc scripts/experiments/waf-check --quick --trace "$T/nope.jsonl")
if [ "$rc" = 2 ] && grep -q "waf-check: --trace $T/nope.jsonl: no such file or directory" "$T/e.log"; then
	pass "--trace of a missing file: exit 2, named"
else fail "--trace missing: exit $rc: $(cat "$T/e.log")"; fi
# --policies: where --only picks the presets, it picks the policies (hbf-endurance's whole-trace
# lru runs are the ones `all` made, so this reruns nothing); elsewhere, and for a name the
# experiment does not run, exit 2 with the reason
if FG_EXP_WORK=$T/work scripts/experiments/hbf-endurance --quick --folds 0 --policies lru --out "$T/hbf-lru" \
	>"$T/p.log" 2>&1 && python3 -c "
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1] + '/hbf-endurance.csv')))
assert [(r['set'], r['policy']) for r in rows] == [('all', 'lru')], rows
" "$T/hbf-lru"; then pass "hbf-endurance --policies lru: one run, lru's"
else fail "hbf-endurance --policies lru: $(tail -5 "$T/p.log")"; fi
rc=$(expect_rc scripts/experiments/hbf-endurance --quick --policies "lru nope" --out "$T/hbf-nope")
if [ "$rc" = 2 ] && grep -q "hbf-endurance: --policies nope: not one of: gandalf lru" "$T/e.log"; then
	pass "--policies with a policy the experiment does not run: exit 2, named"
else fail "--policies nope: exit $rc: $(cat "$T/e.log")"; fi
rc=$(expect_rc scripts/experiments/capacity-ratio --quick --policies lru --out "$T/cr-policies")
if [ "$rc" = 2 ] && grep -q "capacity-ratio: --policies: this experiment picks its policies with --only" "$T/e.log"; then
	pass "--policies where --only picks the policies: exit 2, said"
else fail "capacity-ratio --policies: exit $rc: $(cat "$T/e.log")"; fi
if out=$(scripts/experiments/readme-sync --check --quick-root "$O" 2>&1); then
	pass "results/README.md: every quick table is the script's, byte for byte"
else
	fail "results/README.md differs from the scripts' quick tables: $out"
fi

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
