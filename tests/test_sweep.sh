#!/bin/bash
# test_sweep.sh - a sweep as independent jobs (femu-gandalf sweep, docs/sweep.md):
#  1. the jobs of `kv --policy all --sweep`, run by xargs on two cores, merge into kv's own table
#     (wall_s aside), row for row and byte for byte;
#  2. the same jobs run by GNU parallel merge into the same bytes;
#  3. a missing and a cut-short result stop the merge, which names both and writes nothing;
#     --missing prints exactly their two lines, and once run the merge is whole again;
#  4. emitting again keeps the jobs and results, another sweep in the same directory is refused;
#  5. --job and --output, and every bad flag, each with a clear error;
#  6. --emit-batch: each line's jobs.txt the same bytes as --emit-jobs writes (a directory with a
#     space and a quote in its name among them); a refused line names FILE:LINE, the sweeps
#     before it are written and the ones after it are not;
#  7. --run-batch: the jobs of two sweeps on two drive geometries, two by two, run in one
#     process (the trace kept, the drive's tables reused) merge into the same bytes as run by sh,
#     also from standard input, and into kv's own table of the same points in one process; a line that is not a job, a job of another program and a run
#     that fails each stop the batch with FILE:LINE, the results before it written.
# Usage: test_sweep.sh path/to/femu-gandalf (run from the source root: it reads traces/)
set -u
FG=${1:?usage: test_sweep.sh FEMU_GANDALF}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/testlib.sh"

KV=(--trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G
	--device none --policy all --sweep)

# sameas DIRECT TABLE: TABLE is DIRECT (kv's CSV) without its wall_s column, byte for byte
sameas() {
	python3 - "$1" "$2" <<'EOF'
import sys
def fields(line):  # RFC 4180 fields, each kept as written (quotes and all)
    out, cur, q = [], "", False
    for ch in line:
        if ch == '"':
            q = not q
        if ch == "," and not q:
            out.append(cur); cur = ""
        else:
            cur += ch
    out.append(cur)
    return out
direct = open(sys.argv[1]).read().splitlines()
k = fields(direct[0]).index("wall_s")
want = "".join(",".join(f[:k] + f[k + 1:]) + "\n" for f in map(fields, direct))
got = open(sys.argv[2]).read()
if got != want:
    print("differs: %d vs %d lines" % (got.count("\n"), want.count("\n")))
    sys.exit(1)
print("%d rows" % (len(direct) - 1))
EOF
}

# --- 1. xargs on two cores --------------------------------------------------------------------
"$FG" kv "${KV[@]}" >"$T/direct.csv" || fail "the direct run"
rows=$(($(wc -l <"$T/direct.csv") - 1))
"$FG" sweep --emit-jobs "$T/a" "${KV[@]}" >"$T/a.out" 2>"$T/a.err"
n=$(wc -l <"$T/a/jobs.txt")
if [ "$n" -eq "$rows" ] && [ "$rows" -ge 50 ] && cmp -s "$T/a.out" "$T/a/jobs.txt" &&
	grep -q "sbatch --array=1-$n " "$T/a.err"; then
	pass "emit: $n jobs, one per row of kv's table, printed and in jobs.txt, with the sbatch line"
else
	fail "emit: $n jobs for $rows rows: $(cat "$T/a.err")"
fi
xargs -d '\n' -P 2 -I{} sh -c {} <"$T/a/jobs.txt" 2>"$T/xargs.err" || fail "xargs: $(head -5 "$T/xargs.err")"
if "$FG" sweep --merge "$T/a" --output "$T/a.csv" 2>"$T/m.err" && out=$(sameas "$T/direct.csv" "$T/a.csv"); then
	pass "xargs -P 2: the merged table is kv's own without wall_s, byte for byte ($out)"
else
	fail "xargs merge: $(cat "$T/m.err") $out"
fi
w=$(python3 -c "import csv,sys; r=list(csv.DictReader(open(sys.argv[1]))); \
print(len(r) if [int(x['job']) for x in r] == list(range(1, len(r) + 1)) and all(float(x['wall_s']) >= 0 for x in r) else -1)" "$T/a/wall.csv")
[ "$w" -eq "$n" ] && pass "wall.csv: the wall time of each of the $n jobs, in job order" || fail "wall.csv: $w rows"

# --- 2. GNU parallel --------------------------------------------------------------------------
if parallel --version 2>/dev/null | grep -q "GNU parallel"; then
	"$FG" sweep --emit-jobs "$T/b" "${KV[@]}" >/dev/null 2>&1
	parallel --will-cite -j 2 <"$T/b/jobs.txt" 2>"$T/par.err" || fail "parallel: $(head -5 "$T/par.err")"
	"$FG" sweep --merge "$T/b" >"$T/b.csv" 2>"$T/m.err"
	cmp -s "$T/a.csv" "$T/b.csv" && pass "GNU parallel -j 2: the same table, byte for byte" ||
		fail "parallel merge: $(cat "$T/m.err")"
else
	fail "GNU parallel is missing (apt-get install parallel; ./configure --install-deps does)"
fi

# --- 3. missing and cut-short results ---------------------------------------------------------
rm "$T/a/results/0005.csv"
head -1 "$T/a/results/0007.csv" >"$T/a/results/0007.tmp" && mv "$T/a/results/0007.tmp" "$T/a/results/0007.csv"
expect 1 "2 of $n jobs have no usable result; nothing written" "merge with two results bad" -- \
	sweep --merge "$T/a" --output "$T/c.csv"
out=$("$FG" sweep --merge "$T/a" 2>&1 >/dev/null)
if grep -q "job 5: .*0005.csv" <<<"$out" && grep -q "job 7: .*0007.csv: not one CSV row" <<<"$out" &&
	[ ! -e "$T/c.csv" ]; then pass "the merge names job 5 (missing) and job 7 (cut short)"
else fail "merge errors: $out"; fi
"$FG" sweep --missing "$T/a" >"$T/again.txt"
if sed -n '5p;7p' "$T/a/jobs.txt" | cmp -s - "$T/again.txt"; then
	pass "--missing prints exactly lines 5 and 7 of jobs.txt"
else
	fail "--missing: $(cat "$T/again.txt")"
fi
sh "$T/again.txt" && "$FG" sweep --merge "$T/a" >"$T/a2.csv" 2>/dev/null && cmp -s "$T/a.csv" "$T/a2.csv" &&
	pass "the two jobs run again: the same table" || fail "the table after running the missing jobs"

# a row of the wrong policy (another job's result copied in) and a row with a field dropped
cp "$T/a/results/0002.csv" "$T/keep2" && cp "$T/a/results/0003.csv" "$T/keep3"
p2=$(sed -n 2p "$T/a/results/0002.csv" | cut -d, -f1)
# j: the first job of another policy than job 2's
j=$(grep -n -v -m1 -- "--job $p2:" "$T/a/jobs.txt" | cut -d: -f1)
jj=$(printf %04d "$j")
cp "$T/a/results/$jj.csv" "$T/keepj"
cp "$T/a/results/0002.csv" "$T/a/results/$jj.csv"
{ head -1 "$T/keep3"; sed -n 2p "$T/keep3" | sed 's/,[^,]*$//'; } >"$T/a/results/0003.csv"
out=$("$FG" sweep --merge "$T/a" --output "$T/c.csv" 2>&1 >/dev/null)
rc=$?
if [ $rc = 1 ] && grep -q "job $j: results/$jj.csv: its row is policy '$p2', the job runs '" <<<"$out" &&
	grep -q "job 3: results/0003.csv: its row has [0-9]* fields, the header [0-9]*" <<<"$out" && [ ! -e "$T/c.csv" ]; then
	pass "merge: a row of another policy (job $j) and a row short of a field (job 3) refused, nothing written"
else fail "merge of wrong rows: exit $rc: $out"; fi
cp "$T/keepj" "$T/a/results/$jj.csv" && cp "$T/keep3" "$T/a/results/0003.csv"
"$FG" sweep --merge "$T/a" >"$T/a3.csv" 2>/dev/null && cmp -s "$T/a.csv" "$T/a3.csv" &&
	pass "the rows put back: the same table" || fail "the table after the rows were put back"

# --- 4. emitting again ------------------------------------------------------------------------
cp "$T/a/results/0001.csv" "$T/r1"
expect 0 "kept: the same jobs were there" "emit the same sweep again" -- sweep --emit-jobs "$T/a" "${KV[@]}"
cmp -s "$T/r1" "$T/a/results/0001.csv" && pass "its results are kept" || fail "a kept result changed"
expect 2 "holds another sweep's jobs" "another sweep in the same directory" -- \
	sweep --emit-jobs "$T/a" "${KV[@]}" --dram 16G

# --- 5. --job, --output and bad flags ---------------------------------------------------------
ONE=(--trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G --device none)
"$FG" kv "${ONE[@]}" --policy dynamo --sweep --job dynamo:2 --output "$T/j.csv" 2>/dev/null
if [ "$(wc -l <"$T/j.csv")" -eq 2 ] && grep -q '^dynamo,"threshold=8"' "$T/j.csv"; then
	pass "kv --job dynamo:2 --output: the header and dynamo's third point (threshold=8)"
else
	fail "kv --job: $(cat "$T/j.csv")"
fi
"$FG" kv "${ONE[@]}" --policy lru --json --output "$T/j.json" 2>/dev/null &&
	python3 -c "import json,sys; assert json.load(open(sys.argv[1]))['policy'] == 'lru'" "$T/j.json" &&
	pass "kv --json --output: one JSON document" || fail "kv --json --output"
expect 2 "unknown preset" "a failed run (a bad --device) with --output" -- kv "${ONE[@]}" --device nope \
	--policy lru --csv --output "$T/none.csv"
[ ! -e "$T/none.csv" ] && pass "no file after a failed run" || fail "a failed run left $T/none.csv"
expect 2 "--job nope:0: unknown policy" "--job of an unknown policy" -- kv "${ONE[@]}" --job nope:0 --csv
expect 2 "--job gandalf:0: this run's --policy is lru" "--job outside --policy" -- \
	kv "${ONE[@]}" --policy lru --job gandalf:0 --csv
expect 2 "dynamo has 3 point(s) here (0..2)" "--job past the grid" -- \
	kv "${ONE[@]}" --policy all --sweep --job dynamo:3
expect 2 "must be POLICY:J" "--job without :J" -- kv "${ONE[@]}" --job gandalf --csv
expect 2 "must be POLICY:J" "--job with a negative J" -- kv "${ONE[@]}" --job gandalf:-1 --csv
expect 2 "its directory is missing or not writable" "--output into a missing directory" -- \
	kv "${ONE[@]}" --policy lru --csv --output "$T/nodir/x.csv"
expect 2 "/dev/null: a character device, which would be replaced" "--output /dev/null (never replaced)" -- \
	kv "${ONE[@]}" --policy lru --csv --output /dev/null
[ -c /dev/null ] && pass "/dev/null is still a device" || fail "/dev/null was replaced"
expect 2 "writes CSV or JSON: add --csv or --json" "--output of the text report" -- \
	kv "${ONE[@]}" --policy lru --output "$T/t.txt"
expect 2 "drop --json" "--emit-jobs with --json" -- sweep --emit-jobs "$T/d" "${ONE[@]}" --json
expect 2 "drop --job" "--emit-jobs with --job" -- sweep --emit-jobs "$T/d" "${ONE[@]}" --job lru:0
expect 2 "unknown preset" "--emit-jobs checks the drive once" -- sweep --emit-jobs "$T/d" "${ONE[@]}" --device nope
expect 2 "is larger than the tiny drive" "--emit-jobs checks the sizes as a run would" -- \
	sweep --emit-jobs "$T/d" "${ONE[@]}" --device tiny --policy all
expect 2 "lambda=x: not a number" "--emit-jobs checks --param as a run would" -- \
	sweep --emit-jobs "$T/d" "${ONE[@]}" --policy gandalf --param lambda=x
[ ! -e "$T/d/jobs.txt" ] && pass "no jobs.txt after refused flags" || fail "refused flags left a jobs.txt"
expect 2 "the first flag must be --emit-jobs, --emit-batch, --run-batch, --merge or --missing" "sweep --bogus" -- sweep --bogus x
expect 2 "needs a directory" "sweep --merge without a directory" -- sweep --merge
expect 1 "write the jobs first" "merge of a directory without jobs" -- sweep --merge "$T"
mkdir -p "$T/e" && printf 'cd / && true' >"$T/e/jobs.txt"
expect 1 "empty, cut short or not text" "jobs.txt without its last newline" -- sweep --merge "$T/e"
expect 2 "unexpected --out" "a misspelt merge flag" -- sweep --merge "$T/a" --out x

# --- 6. --emit-batch --------------------------------------------------------------------------
q="$T/b d'q"
{
	echo "# an experiment's sweeps"
	echo "$T/b1 --trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G --device none --policy lru"
	echo ""
	printf "'%s' %s\n" "${q//\'/\'\\\'\'}" "--trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 4G --ssd 32G --device none --policy dynamo --sweep"
	echo "$T/b3 --trace traces/agentic-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G --device none --policy all"
} >"$T/batch"
"$FG" sweep --emit-jobs "$T/s1" --trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G \
	--ssd 32G --device none --policy lru >/dev/null 2>&1
"$FG" sweep --emit-jobs "$T/s2" --trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 4G \
	--ssd 32G --device none --policy dynamo --sweep >/dev/null 2>&1
"$FG" sweep --emit-jobs "$T/s3" --trace traces/agentic-small.jsonl --model qwen3-next-80b-a3b --dram 8G \
	--ssd 32G --device none --policy all >/dev/null 2>&1
out=$("$FG" sweep --emit-batch "$T/batch" 2>&1 >/dev/null)
n3=$(wc -l <"$T/s3/jobs.txt")
# samejobs DIR1 DIR2: the same jobs.txt, word for word, but for the directory each names
samejobs() {
	python3 - "$1" "$2" <<'EOF'
import shlex, sys
def words(d):
    return [[w.replace(d + "/", "X/") for w in shlex.split(l)] for l in open(d + "/jobs.txt")]
sys.exit(0 if words(sys.argv[1]) == words(sys.argv[2]) else 1)
EOF
}
if [ -z "$(ls "$T/b1/logs")" ] && samejobs "$T/s1" "$T/b1" && samejobs "$T/s2" "$q" && samejobs "$T/s3" "$T/b3" &&
	grep -q "3 sweeps, $((1 + 3 + n3)) jobs written" <<<"$out"; then
	pass "emit-batch: three sweeps (two traces, a quoted directory), each jobs.txt as --emit-jobs writes it"
else
	fail "emit-batch: $out"
fi
{
	echo "$T/c1 --trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G --device none --policy lru"
	echo "$T/c2 --trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G --device none --policy gandalf --param lambda=x"
	echo "$T/c3 --trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 8G --ssd 32G --device none --policy lru"
} >"$T/batch2"
expect 2 "batch2:2: the sweep into $T/c2 failed" "emit-batch with a refused line" -- sweep --emit-batch "$T/batch2"
[ -s "$T/c1/jobs.txt" ] && [ ! -e "$T/c2/jobs.txt" ] && [ ! -e "$T/c3" ] &&
	pass "emit-batch: the sweep before the refused line is written, the one after it is not" ||
	fail "emit-batch after a refused line: $(ls "$T")"
printf "%s --trace 'x\n" "$T/c4" >"$T/batch3"
expect 2 "batch3:1: Text ended before matching quote" "emit-batch with an unclosed quote" -- sweep --emit-batch "$T/batch3"
expect 1 "No such file" "emit-batch of a missing file" -- sweep --emit-batch "$T/nofile"

# --- 7. --run-batch ---------------------------------------------------------------------------
KD=(--trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 1G --device tiny)
for d in ra rb; do
	for s in A B; do
		set=()
		[ $s = A ] || set=(--set blocks_per_plane=200)
		"$FG" sweep --emit-jobs "$T/$d$s" "${KD[@]}" "${set[@]}" --policy all >/dev/null 2>&1 ||
			fail "emit $d$s"
	done
done
# two of A, two of B, and so on: the second of each pair takes the first one's tables, and each
# switch releases them
pairs() { awk 'FNR == NR { a[FNR] = $0; n = FNR; next } { b[FNR] = $0; if (FNR > n) n = FNR }
	END { for (i = 1; i <= n; i += 2) { if (i in a) print a[i]; if (i + 1 in a) print a[i + 1];
		if (i in b) print b[i]; if (i + 1 in b) print b[i + 1] } }' "$1" "$2"; }
pairs "$T/raA/jobs.txt" "$T/raB/jobs.txt" >"$T/ra.txt"
pairs "$T/rbA/jobs.txt" "$T/rbB/jobs.txt" >"$T/rb.txt"
sh "$T/ra.txt" 2>"$T/ra.err" || fail "the jobs run by sh: $(head -3 "$T/ra.err")"
nr=$(wc -l <"$T/rb.txt")
"$FG" sweep --run-batch "$T/rb.txt" 2>"$T/rb.err" || fail "run-batch: $(head -3 "$T/rb.err")"
same=0
for s in A B; do
	"$FG" sweep --merge "$T/ra$s" --output "$T/ra$s.csv" 2>/dev/null &&
		"$FG" sweep --merge "$T/rb$s" --output "$T/rb$s.csv" 2>/dev/null &&
		cmp -s "$T/ra$s.csv" "$T/rb$s.csv" &&
		same=$((same + 1))
done
[ "$same" -eq 2 ] && pass "run-batch: $nr jobs on two geometries, two by two, merge into the same bytes as run by sh" ||
	fail "run-batch: the tables differ from sh's ($(head -3 "$T/rb.err"))"
# kv's own points on the drive, in one process (each drive on the last one's tables)
"$FG" kv "${KD[@]}" --policy all >"$T/kvA.csv" 2>/dev/null && out=$(sameas "$T/kvA.csv" "$T/raA.csv") &&
	pass "kv --policy all on a drive, in one process: the jobs' table ($out)" || fail "kv --policy all on a drive: $out"
rm -rf "$T/rbA/results"/* && "$FG" sweep --run-batch - <"$T/rbA/jobs.txt" 2>"$T/rc.err" &&
	"$FG" sweep --merge "$T/rbA" --output "$T/rcA.csv" 2>/dev/null && cmp -s "$T/raA.csv" "$T/rcA.csv" &&
	pass "run-batch -: the jobs from standard input, the same table" || fail "run-batch -: $(head -3 "$T/rc.err")"
# a run that fails in the middle: the one before it written, the one after it not run
rm -rf "$T/rbA/results"/*
{
	sed -n 1p "$T/rbA/jobs.txt"
	sed -n 2p "$T/rbA/jobs.txt" | sed 's/ --job [^ ]* / --job nope:0 /'
	sed -n 3p "$T/rbA/jobs.txt"
} >"$T/rd.txt"
expect 2 "rd.txt:2: the run failed" "run-batch with a failing run" -- sweep --run-batch "$T/rd.txt"
[ -s "$T/rbA/results/0001.csv" ] && [ ! -e "$T/rbA/results/0003.csv" ] &&
	pass "run-batch: the result before the failed run is written, the one after it is not run" ||
	fail "run-batch after a failed run: $(ls "$T/rbA/results")"
printf '# a comment\n\n%s --policy lru\n' "$FG" >"$T/re.txt"
expect 2 "re.txt:3: not a job line" "run-batch of a line that is not a job" -- sweep --run-batch "$T/re.txt"
printf 'cd / && /bin/true kv --policy lru\n' >"$T/rf.txt"
expect 2 "rf.txt:1: the job runs /bin/true, not this program" "run-batch of another program's job" -- \
	sweep --run-batch "$T/rf.txt"
expect 1 "No such file" "run-batch of a missing file" -- sweep --run-batch "$T/nofile"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
