#!/bin/bash
# test_hostile.sh - outputs that are not ours to replace, and output that must not vanish.
#
# 1. Every writer (snapshots, kv/sweep/lift/synth outputs, kv --record) is given, as its output,
#    a character device (as root: mknod of /dev/full's and /dev/null's numbers in a private
#    directory), a FIFO, a directory, and symbolic links to each and to nothing. Each must be
#    refused with the path and what it is named, and left exactly as it was. A link to a regular
#    file is followed: the file is replaced, the link stays.
# 2. A run that fails leaves an existing output file as it was (never deleted, never cut).
# 3. With standard output on a full device (/dev/full), every command exits non-zero and says so.
# Usage: test_hostile.sh FEMU_GANDALF
set -u
FG=${1:?usage: test_hostile.sh FEMU_GANDALF}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
. tests/testlib.sh
T=$(mktemp -d)
trap 'umount "$T/small" 2>/dev/null; rm -rf "$T"' EXIT

# ---- the hostile outputs ----
mkfifo "$T/fifo"
mkdir "$T/dir"
ln -s fifo "$T/link-fifo"
ln -s dir "$T/link-dir"
ln -s nowhere "$T/link-nowhere"
NODES=(fifo dir link-fifo link-dir link-nowhere)
if [ "$(id -u)" = 0 ] && mknod "$T/full" c 1 7 2>/dev/null && mknod "$T/null" c 1 3; then
	ln -s full "$T/link-full"
	NODES+=(full null link-full)
else
	echo "skip device nodes: mknod needs root (FIFOs, directories and links are still checked)"
fi
# state NAME: what NAME is, to compare before and after (type, device numbers, link target)
state() {
	stat -c '%F %t:%T %N' "$T/$1"
}

# a capture to lift, a job directory for sweep, a trace for blkreplay
truncate -s 1G "$T/store.img"
"$FG" kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through --dram 0 \
	--target "$T/store.img" --capture --record "$T/cap.csv" >/dev/null 2>&1 || fail "the capture run"
"$FG" sweep --emit-jobs "$T/jobs" --trace traces/multiturn-small.jsonl --model test-hybrid-256 \
	--dram 1G --device none --ssd 1G --policy lru >/dev/null 2>&1 || fail "sweep --emit-jobs"
sh -c "$("$FG" sweep --missing "$T/jobs" | head -1)" >/dev/null 2>&1 || fail "the sweep's job"
"$FG" sweep --emit-jobs "$T/todo" --trace traces/multiturn-small.jsonl --model test-hybrid-256 \
	--dram 1G --device none --ssd 1G --policy lru >/dev/null 2>&1 || fail "sweep --emit-jobs (not run)"

# writers: NAME|FLAG|the command, OUT standing for the output path
WRITERS=(
	"ssd --save-snapshot|--save-snapshot|ssd --preset tiny --writes 0.01 --save-snapshot OUT"
	"kv --output|--output|kv --trace traces/multiturn-small.jsonl --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru --output OUT"
	"kv --record|--record|kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through --dram 0 --target $T/store.img --capture --record OUT"
	"lift --out|--out|lift $T/cap.csv --model test-hybrid-256 --out OUT"
	"synth --out|--out|synth --kind multiturn --sessions 3 --out OUT"
	"sweep --merge --output|--output|sweep --merge $T/jobs --output OUT"
)
for w in "${WRITERS[@]}"; do
	IFS='|' read -r name flag cmd <<<"$w"
	for n in "${NODES[@]}"; do
		before=$(state "$n")
		# shellcheck disable=SC2086
		out=$("$FG" ${cmd/OUT/$T/$n} 2>&1 >/dev/null)
		rc=$?
		after=$(state "$n")
		if [ "$rc" = 0 ]; then
			fail "$name $n: exit 0 (must refuse)"
		elif [ "$before" != "$after" ]; then
			fail "$name $n: replaced: $before -> $after"
		elif ! grep -q -- "$flag $T/$n: .*\(a character device\|a FIFO\|a directory\|a symbolic link\)" <<<"$out"; then
			fail "$name $n: exit $rc, message lacks the path and what it is: $out"
		else
			pass "$name $n: refused (exit $rc), left as it was"
		fi
	done
done
# nothing but the outputs' own files were made beside them (no temporary file left)
left=$(find "$T" -maxdepth 1 -name '*.tmp.*' | head -3)
[ -z "$left" ] && pass "no temporary file left behind" || fail "temporary files left: $left"

# ---- a link to a regular file: followed ----
echo old >"$T/real.json"
ln -s real.json "$T/link-real"
if "$FG" ssd --preset tiny --writes 0.01 --save-snapshot "$T/link-real" >/dev/null 2>&1 &&
	[ -L "$T/link-real" ] && [ "$(head -c 8 "$T/real.json")" = FGFTLSNP ] &&
	"$FG" ssd --load-snapshot "$T/link-real" --writes 0 >/dev/null 2>&1; then
	pass "a link to a regular file: the file is replaced, the link stays, the snapshot loads"
else
	fail "a link to a regular file: $(ls -la "$T/link-real" "$T/real.json")"
fi

# ---- a failed run leaves an existing output as it was ----
echo keep >"$T/kept"
printf 'garbage,line\n' >"$T/bad.csv"
"$FG" lift "$T/bad.csv" --model test-hybrid-256 --out "$T/kept" >/dev/null 2>"$T/err"
rc=$?
if [ $rc != 0 ] && [ "$(cat "$T/kept")" = keep ] && grep -q "bad.csv:1:" "$T/err"; then
	pass "lift of a bad capture: exit $rc, FILE:LINE named, --out left as it was"
else
	fail "lift of a bad capture over an existing --out: exit $rc, --out now '$(head -c 40 "$T/kept")': $(cat "$T/err")"
fi
"$FG" synth --kind multiturn --sessions 0 --out "$T/kept" >/dev/null 2>&1
if [ "$(cat "$T/kept")" = keep ]; then pass "synth with bad options: --out left as it was"
else fail "synth with bad options replaced --out"; fi

# ---- readers: what they must refuse, and input from a pipe ----
printf 'time_ns,op,lba,bytes\n100,W,0,4096\n176865683,R,26624,2' >"$T/cut.csv"
expect 2 "cut.csv:3: bytes 2: not a whole number of 512-byte sectors" "trace info: a block CSV cut mid-line" -- \
	trace info "$T/cut.csv"
expect 2 "cut.csv:3: bytes 2: not a whole number of 512-byte sectors" "blkreplay: the same" -- \
	blkreplay "$T/cut.csv" --preset tiny
want=$("$FG" trace info traces/multiturn-small.jsonl --json | grep -v '"path"\|parse_mb_per_s')
for src in - /dev/stdin; do
	got=$("$FG" trace info "$src" --json <traces/multiturn-small.jsonl | grep -v '"path"\|parse_mb_per_s')
	[ "$got" = "$want" ] && pass "trace info $src from a pipe: the file's figures" ||
		fail "trace info $src from a pipe: $(diff <(echo "$want") <(echo "$got") | head -5)"
done
want=$("$FG" kv --trace traces/multiturn-small.jsonl --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru --csv)
got=$(zstd -q -c traces/multiturn-small.jsonl | "$FG" kv --trace - --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru --csv)
[ "$(wc -l <<<"$got")" = 2 ] && [ "$(tail -1 <<<"$want" | cut -d, -f3-8)" = "$(tail -1 <<<"$got" | cut -d, -f3-8)" ] &&
	pass "kv --trace - (zstd through a pipe): the file's row" || fail "kv --trace -: $got"
printf '{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}\nnot json\n{"timestamp": 1, "input_length": 100, "output_length": 10, "hash_ids": [1]}\n' >"$T/mc.jsonl"
out=$("$FG" kv --trace "$T/mc.jsonl" --skip-bad --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru --json 2>"$T/err")
if grep -q '"skipped_records": 1,' <<<"$out" && grep -q "1 malformed record skipped (the last: $T/mc.jsonl:2:" "$T/err"; then
	pass "kv --skip-bad: the count in the JSON, the last one on stderr"
else fail "kv --skip-bad: $(grep skipped <<<"$out") / $(cat "$T/err")"; fi

# Mooncake's invariant: one hash id per 512-token block, none twice
printf '{"timestamp": 0, "input_length": 1000000000, "output_length": 10, "hash_ids": [1]}\n' >"$T/mc-len.jsonl"
expect 2 "mc-len.jsonl:1: 1 hash_ids for input_length 1000000000: Mooncake has one per 512-token block, ceil(input_length / 512) = 1953125" \
	"Mooncake: input_length against its hash_ids" -- trace info "$T/mc-len.jsonl"
printf '{"timestamp": 0, "input_length": 1500, "output_length": 10, "hash_ids": [1, 2, 1]}\n' >"$T/mc-rep.jsonl"
expect 2 "mc-rep.jsonl:1: a hash id appears twice" "Mooncake: an id twice in one request" -- \
	kv --trace "$T/mc-rep.jsonl" --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru
cat "$T/mc-len.jsonl" "$T/mc-rep.jsonl" "$T/mc.jsonl" >"$T/mc-all.jsonl"
expect 0 "3 malformed records skipped" "Mooncake --skip-bad: counted" -- trace info "$T/mc-all.jsonl" --skip-bad

# ---- binary data where a text trace should be: said so, not "out of memory" or a format ----
printf '\x01\x9c\xfe garbage\x02 bytes\n' >"$T/rand.jsonl"
expect 2 "rand.jsonl:1: byte 0x01 at column 1: not a text trace" "random bytes in a .jsonl: named as binary" -- \
	trace info "$T/rand.jsonl"
printf '{"timestamp": 0, "input_length": 100, "output_length": 10, "hash_ids": [1]}\n\0\0\0\n' >"$T/nul.jsonl"
expect 2 "nul.jsonl:2: " "a NUL byte in a record: FILE:LINE" -- \
	trace info "$T/nul.jsonl"
head -c 70000000 /dev/zero | tr '\0' a >"$T/long.txt"
expect 2 "long.txt:1: a line longer than 64 MiB: not a text trace" "a 70 MB line: too long, not out of memory" -- \
	kv --trace "$T/long.txt" --model test-hybrid-256 --dram 1G
rm -f "$T/long.txt"
# a line longer than the reader's first 128 KiB buffer is read whole (it once failed as "too long")
python3 -c 'import json; print(json.dumps({"timestamp": 0, "input_length": 512 * 20000, "output_length": 1, "hash_ids": list(range(7, 20007))}))' >"$T/wide.jsonl"
expect 0 "20000 block references, 20000 unique" "a 180 KB Mooncake line: read" -- trace info "$T/wide.jsonl"

# ---- a store whose disk fills up mid-run: the store's own error, exit 1 ----
if [ "$(id -u)" = 0 ] && mkdir "$T/small" && mount -t tmpfs -o size=2M tmpfs "$T/small" 2>/dev/null; then
	truncate -s 1G "$T/small/img"
	expect 1 "request 2: the store failed: I/O #[0-9]* (W [0-9]* 262144): $T/small/img: short write" \
		"kv --target on a full disk: the store's error named, exit 1" -- \
		kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --policy write-through --dram 0 \
		--target "$T/small/img" --ssd 64M --device none
	umount "$T/small"
else
	echo "skip a full disk under the store: mounting a 2 MB tmpfs needs root"
fi

# ---- flags that accepted nonsense: refused the same way by every command ----
for c in "ssd --preset tiny --writes 0.01" "kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 8M" \
	"synth --kind multiturn --sessions 2" "trace info traces/multiturn-small.jsonl"; do
	# shellcheck disable=SC2086
	expect 2 "--seed -1: must be an integer in 0..18446744073709551615" "${c%% *} --seed -1: refused" -- $c --seed -1
done
expect 2 "--ssd 4096 bytes: smaller than the smallest object the tier stores (a KV block of test-hybrid-256: 16384 bytes)" \
	"kv --ssd 4k: a tier that could hold nothing is refused" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 8M --ssd 4k
expect 2 "--ssd 1125899906842624 bytes is larger than the ent-tlc-1t drive (960197107712 bytes user)" \
	"kv --ssd 1P on a 960 GB drive: too large, said so" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 8M --device ent-tlc-1t --ssd 1P
expect 0 "SSD 894.07 GiB (ent-tlc-1t)" "kv --ssd 960GB: decimal, fits ent-tlc-1t" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 8M --device ent-tlc-1t --ssd 960GB
expect 0 "DRAM holds 3531 times it" "a DRAM far above the peak: a multiple, not 3.53e+05%" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 100G --device none --ssd 1G
expect 2 "^femu-gandalf: --loop 0: must be > 0$" "kv --loop 0: the one flag named" -- \
	kv --trace traces/agentic-small.jsonl --model test-hybrid-256 --dram 8M --loop 0
expect 2 "--writes 1e+30: must be at least 0 and under 1e6 user capacities" "ssd --writes 1e30: the range said" -- \
	ssd --preset tiny --writes 1e30
expect 2 "--stagger -2: must be >= 0" "--stagger -2: the one flag named" -- trace info traces/multiturn-small.jsonl --stagger -2
expect 2 "--accelerate 0: must be >= 1" "ssd --accelerate 0: refused, not silently off" -- ssd --preset tiny --accelerate 0
expect 2 "--dwpd -1: must be >= 0" "ssd --dwpd -1: refused" -- ssd --preset tiny --dwpd -1

# ---- standard output on a full device ----
FULL=(
	"presets"
	"config-keys"
	"models"
	"ssd --preset tiny --writes 0.01"
	"ssd --preset tiny --writes 0.01 --json"
	"trace info traces/multiturn-small.jsonl"
	"kv --trace traces/multiturn-small.jsonl --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru"
	"kv --trace traces/multiturn-small.jsonl --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru --csv"
	"kv --trace traces/multiturn-small.jsonl --model test-hybrid-256 --dram 1G --device none --ssd 1G --policy lru-k --sweep"
	"blkreplay traces/blk-kvcache-small.csv --preset tiny"
	"sweep --missing $T/todo"
	"synth --kind multiturn --sessions 3"
	"lift $T/cap.csv --model test-hybrid-256"
	"--help"
)
for c in "${FULL[@]}"; do
	# shellcheck disable=SC2086
	"$FG" $c >/dev/full 2>"$T/err"
	rc=$?
	if [ $rc != 0 ] && grep -q "standard output: .*the output is incomplete" "$T/err"; then
		pass "$c >/dev/full: exit $rc, said"
	else
		fail "$c >/dev/full: exit $rc: $(head -3 "$T/err")"
	fi
done

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
