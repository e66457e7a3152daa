#!/bin/bash
# test_lift.sh - the store and lift round trip (docs/lift.md), in process:
#   T --kv --capture--> a block trace --lift--> T'
# T' must have T's requests, chains, session grouping and times (up to renaming of ids), and
# `kv` on T' must give T's miss ratio and SSD bytes, to the byte, for every policy at a DRAM/SSD
# size other than the capture's. Then bad captures: each a clear error, or a counted warning.
# Usage: test_lift.sh path/to/femu-gandalf
set -u
FG=${1:?usage: test_lift.sh FEMU_GANDALF}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/testlib.sh"
field() { grep -o "\"$1\": [0-9.]*" "$2" | head -1 | sed 's/.*: //'; }

"$FG" synth --kind agentic --sessions 6 --subagent-p 0.3 --seed 3 --out "$T/agentic.jsonl" ||
	fail "synth agentic"

# roundtrip NAME TRACE MODEL LAYOUT SESSION_ERRORS SESSION_POLICIES
#   SESSION_POLICIES: the policies that read sessions, compared only when SESSION_ERRORS is 0
roundtrip() {
	local name=$1 tr=$2 model=$3 layout=$4 serr=$5 spol=$6 img=$T/store.img
	rm -f "$img"
	truncate -s 2G "$img"
	if ! "$FG" kv --trace "$tr" --model "$model" --policy write-through --dram 0 --target "$img" \
		--layout "$layout" --capture --record "$T/cap.csv" --json >"$T/kv.json" 2>"$T/err"; then
		fail "$name: the capture run: $(cat "$T/err")"
		return
	fi
	local puts gets verified
	puts=$(field puts "$T/kv.json")
	gets=$(field gets "$T/kv.json")
	verified=$(field verified "$T/kv.json")
	[ "$verified" -gt 0 ] && [ "$verified" -ge "$gets" ] || fail "$name: $verified of $gets reads verified"
	if ! "$FG" lift "$T/cap.csv" --layout "$layout" --model "$model" --out "$T/lifted.jsonl" \
		--against "$tr" --json >"$T/lift.json" 2>"$T/err"; then
		fail "$name: lift: $(cat "$T/err")"
		return
	fi
	local n inv ch se tm reqs wr
	n=$(field original "$T/lift.json")
	inv=$(field invisible "$T/lift.json")
	reqs=$(field requests "$T/lift.json")
	ch=$(field chain_wrong "$T/lift.json")
	se=$(field session_wrong "$T/lift.json")
	tm=$(field time_wrong "$T/lift.json")
	wr=$(field writes "$T/lift.json")
	if [ "$reqs" = "$((n - inv))" ] && [ "$ch" = 0 ] && [ "$tm" = 0 ] && [ "$se" = "$serr" ] &&
		[ "$wr" = "$puts" ]; then
		pass "$name: $reqs requests lifted, chains and times exact, $se session errors, $wr puts"
	else
		fail "$name: requests $reqs of $n-$inv, chain errors $ch, time errors $tm, session errors $se (want $serr), writes $wr (puts $puts)"
	fi
	# every policy at another size: the same miss ratio and SSD bytes
	for f in "$tr" "$T/lifted.jsonl"; do
		"$FG" kv --trace "$f" --model "$model" --policy all --device none --dram 2M --ssd 12M 2>/dev/null |
			cut -d, -f1-10 | grep -v -E "^(${spol})," >"$f.cmp"
	done
	if [ "$(wc -l <"$tr.cmp")" -gt 5 ] && cmp -s "$tr.cmp" "$T/lifted.jsonl.cmp"; then
		pass "$name: kv --policy all on T' equals T ($(($(wc -l <"$tr.cmp") - 1)) policies)"
	else
		fail "$name: kv on T' differs: $(diff "$tr.cmp" "$T/lifted.jsonl.cmp" | head -4)"
	fi
	rm -f "$tr.cmp"
}

for layout in lmcache-rawblock kvbm vllm-disk; do
	roundtrip "agentic-small $layout" traces/agentic-small.jsonl test-hybrid-256 $layout 0 "NONE"
	roundtrip "multiturn-small $layout" traces/multiturn-small.jsonl test-hybrid-256 $layout 0 "NONE"
	roundtrip "synth agentic $layout" "$T/agentic.jsonl" test-hybrid-256 $layout 0 "NONE"
done
roundtrip "agentic-small dense" traces/agentic-small.jsonl test-dense-256 lmcache-rawblock 0 "NONE"
# aiperf-small: session s3's first turn is one partial block (154 tokens), which leaves nothing
# a later turn reads: its second turn starts a new session in T' (docs/lift.md). Policies that
# read sessions (gandalf) may differ; the rest must not.
roundtrip "aiperf-small" traces/aiperf-small.jsonl test-hybrid-256 lmcache-rawblock 1 "gandalf|lru-k"

# ---- interleaved and unfenced captures (acceptance 3) ----
# split NAME SPLIT_MODE KV_ARGS...: capture agentic-small, lift, print the JSON summary
split() {
	local name=$1
	shift
	rm -f "$T/store.img"
	truncate -s 1G "$T/store.img"
	"$FG" kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through \
		--dram 0 --target "$T/store.img" --capture --record "$T/sp.csv" "$@" >/dev/null 2>&1 ||
		fail "$name: the capture run"
	"$FG" lift "$T/sp.csv" --model test-hybrid-256 --out "$T/sp.jsonl" \
		--against traces/agentic-small.jsonl --json >"$T/sp.json" 2>&1 || fail "$name: lift"
}
split "no fences" --no-fences --iodepth 8
[ "$(field fenced "$T/sp.json")" = "" ] && [ "$(field exact "$T/sp.json")" = 92 ] &&
	grep -q '"fenced": false' "$T/sp.json" &&
	pass "no fences, iodepth 8: 92 of 92 requests exact (cut at chain breaks and the state's slot)" ||
	fail "no fences: $(cat "$T/sp.json")"
split "concurrency 2" --concurrency 2 --iodepth 8
grep -q '"demultiplexed": true' "$T/sp.json" && [ "$(field exact "$T/sp.json")" = 92 ] &&
	pass "2 requests in flight, iodepth 8: demultiplexed, 92 of 92 exact" ||
	fail "concurrency 2: $(cat "$T/sp.json")"
split "concurrency 8" --concurrency 8 --iodepth 8
ex=$(field exact "$T/sp.json")
ur=$(field uncertain_requests "$T/sp.json")
rq=$(field requests "$T/sp.json")
# 8 in flight: the split is a heuristic (docs/lift.md); what it could not decide is counted
[ "$ur" -gt 0 ] && [ "$rq" -gt 0 ] && [ "$ex" -le 92 ] &&
	pass "8 requests in flight: $ex of 92 exact, $ur of $rq lifted requests uncertain (counted)" ||
	fail "concurrency 8: $(cat "$T/sp.json")"

# ---- bad captures ----
rm -f "$T/store.img"
truncate -s 1G "$T/store.img"
"$FG" kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through --dram 0 \
	--target "$T/store.img" --capture --record "$T/raw.csv" >/dev/null || fail "capture raw"
rm -f "$T/store.img"
truncate -s 1G "$T/store.img"
"$FG" kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through --dram 0 \
	--target "$T/store.img" --layout kvbm --capture --record "$T/kvbm.csv" >/dev/null || fail "capture kvbm"
expect 1 "more than two slot sizes.*wrong --layout" "a rawblock capture lifted as kvbm" -- \
	lift "$T/raw.csv" --layout kvbm --model test-hybrid-256 --out "$T/x.jsonl"
[ -e "$T/x.jsonl" ] && fail "a failed lift leaves no output behind" || pass "a failed lift leaves no output behind"
expect 1 "no object writes.*wrong --layout" "a kvbm capture lifted as rawblock" -- \
	lift "$T/kvbm.csv" --model test-hybrid-256 --out "$T/x.jsonl"
# kvbm's block 0 is vLLM's null block, which vLLM never writes
expect 1 "byte 0 lies in slot 0, vLLM's null block.*wrong --layout" "a kvbm capture lifted as vllm-disk" -- \
	lift "$T/kvbm.csv" --layout vllm-disk --model test-hybrid-256 --out "$T/x.jsonl"
# the capture's first half lost: its objects are read but were never written in it
{ head -1 "$T/raw.csv"; tail -n +20000 "$T/raw.csv"; } >"$T/half.csv"
expect 0 "reads of never-written slots" "a capture that starts late: a warning with a count" -- \
	lift "$T/half.csv" --model test-hybrid-256 --out "$T/x.jsonl"
"$FG" lift "$T/half.csv" --model test-hybrid-256 --out "$T/x.jsonl" --json >"$T/half.json"
[ "$(field unwritten_reads "$T/half.json")" -gt 0 ] && pass "unwritten_reads counted" ||
	fail "unwritten_reads not counted: $(cat "$T/half.json")"
# a write across two slots
{ cat "$T/raw.csv"; echo "999999999999,W,$((262144 + 16)),4096"; echo "999999999999,W,$((262144 + 24)),16384"; } >"$T/straddle.csv"
expect 1 "I/O #36798 (W at byte 134225920, 4096 bytes) straddles the 20480-byte slot at byte" "a write that straddles slots" -- \
	lift "$T/straddle.csv" --model test-hybrid-256 --out "$T/x.jsonl"
# a header write whose payload write was lost
awk -F, 'NR == 3 && $2 == "W" { next } { print }' "$T/raw.csv" >"$T/orphan.csv"
"$FG" lift "$T/orphan.csv" --model test-hybrid-256 --out "$T/x.jsonl" --json >"$T/orphan.json" 2>&1 ||
	fail "an orphan header is a warning"
[ "$(field orphan_headers "$T/orphan.json")" = 1 ] && pass "an orphan header is counted" ||
	fail "orphan header: $(cat "$T/orphan.json")"
# the slot sizes given wrong, the block size not derivable, not a block trace, lost events
expect 1 "which --slot does not name" "--slot that does not match" -- \
	lift "$T/raw.csv" --slot 8K,64K --block-tokens 64 --out "$T/x.jsonl"
expect 1 "give --block-tokens N, or --model M" "no block size" -- lift "$T/raw.csv" --out "$T/x.jsonl"
expect 1 "not a whole number of the model's" "the wrong model" -- \
	lift "$T/raw.csv" --model qwen3-next-80b-a3b --out "$T/x.jsonl"
expect 1 "not a block trace" "a KV trace is not a capture" -- \
	lift traces/agentic-small.jsonl --block-tokens 64 --out "$T/x.jsonl"
printf '%s\n' "# entries-in-buffer/entries-written: 2/2   #P:1" \
	" kv-1  [000] .....  1.000000: block_rq_issue: 259,0 WS 4096 () 262144 + 8 [kv]" \
	"CPU:0 [LOST 12 EVENTS]" \
	" kv-1  [000] .....  1.000100: block_rq_issue: 259,0 WS 16384 () 262152 + 32 [kv]" >"$T/lost.txt"
expect 1 "lost events: the capture is incomplete" "lost events in an ftrace capture" -- lift "$T/lost.txt" --block-tokens 64 --out "$T/x.jsonl"
expect 2 "--meta 0: a size > 0" "--meta 0" -- lift "$T/raw.csv" --meta 0
expect 2 "--meta .*--layout lmcache-rawblock" "--meta with kvbm" -- lift "$T/kvbm.csv" --layout kvbm --meta 1M
expect 2 "--json prints the summary on stdout" "--json without --out" -- lift "$T/raw.csv" --json

# a tier too small for an exact capture: the run warns
truncate -s 40M "$T/small.img"
expect 0 "warning: --capture: [0-9]* objects were evicted" "a capture that evicts warns" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through --dram 0 \
	--target "$T/small.img" --capture --meta 1M
rm -f "$T/small.img"

# ---- kv --target flag errors ----
expect 2 "--capture needs --policy write-through --dram 0" "--capture with gandalf" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --target "$T/store.img" --capture
expect 2 "--dram 0: only a write-through policy" "--dram 0 with gandalf" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 0 --device none --ssd 1G
expect 2 "--target is the drive: drop --device tiny" "--target with --device" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --target "$T/store.img" --device tiny
# FDP placement IDs need an NVMe generic device (io_uring passthrough); the VM test runs it
expect 2 "FDP placement IDs (--streams) go through io_uring NVMe passthrough: give the namespace's generic device" \
	"--streams on a file target" -- kv --trace traces/agentic-small.jsonl --model test-hybrid-256 \
	--policy write-through --dram 0 --target "$T/store.img" --streams kind
printf 'time_ns,op,lba,bytes,pid\n0,W,0,4096,1\n' >"$T/pid.csv"
expect 1 "placement ID 1: only an NVMe generic device (/dev/ngXnY) takes one" "a placed write on a file" -- \
	blkreplay "$T/pid.csv" --target "$T/store.img" --force
expect 2 "--layout nope: must be lmcache-rawblock, kvbm or vllm-disk" "--layout nope" -- \
	kv --trace traces/agentic-small.jsonl --target "$T/store.img" --layout nope
expect 2 "--record needs --target" "--record without --target" -- \
	kv --trace traces/agentic-small.jsonl --record "$T/r.csv"
expect 2 "runs one policy once" "--target with --sweep" -- \
	kv --trace traces/agentic-small.jsonl --target "$T/store.img" --sweep
expect 2 "--meta 12288: must be a multiple of 8 KiB" "--meta not two aligned copies" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --target "$T/store.img" --meta 12K
truncate -s 64M "$T/small.img"
expect 2 "leave no room after the 134217728-byte metadata region" "a target smaller than the metadata" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --target "$T/small.img"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
