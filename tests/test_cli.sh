#!/bin/bash
# test_cli.sh - the femu-gandalf command line: help, bad input, JSON output, snapshots.
# Usage: test_cli.sh path/to/femu-gandalf
set -u
FG=${1:?usage: test_cli.sh FEMU_GANDALF}
unset FEMU_GANDALF_PRESETS FEMU_GANDALF_MODELS # the binary's own lookup (docs/install.md)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/testlib.sh"
SRC=$(cd "$(dirname "$0")/.." && pwd)

expect 2 "Usage" "no arguments" --
expect 2 "unknown command 'frob'" "unknown command" -- frob
for sub in ssd bench presets config-keys trace blkreplay synth kv lift models; do
	expect 0 "Example" "$sub --help" -- $sub --help
done
expect 0 "ent-tlc-1t" "presets lists presets" -- presets
expect 0 "pages_per_block" "config-keys lists keys" -- config-keys

# bad input: clear message, exit 2, never a crash
expect 2 "unknown preset 'nope' (no nope.ini in [^,]*/hw/ftl/presets); try" "unknown preset" -- ssd --preset nope
expect 0 "(build tree" "presets --help: the build tree's binary reads the source tree" -- presets --help
expect 2 "pages_per_block=0: must be > 0" "zero pages_per_block" -- ssd --preset tiny --set pages_per_block=0
expect 2 "bogus: unknown config key" "unknown key" -- ssd --preset tiny --set bogus=1
expect 2 "expected key=value" "malformed --set" -- ssd --preset tiny --set pages_per_block
expect 2 "must be greedy, fifo" "bad --gc" -- ssd --preset tiny --gc lru
expect 2 "d-choice:D" "bad d-choice" -- ssd --preset tiny --gc d-choice:0
expect 2 "multiple of 512" "bad --bs" -- ssd --preset tiny --bs 1000
expect 2 "larger than the device" "huge --bs" -- ssd --preset tiny --bs 1T
expect 2 "\-\-bs jesd218: must be a positive multiple of 512 bytes or jesd219" "unknown --bs mix" -- ssd --preset tiny --bs jesd218
expect 2 "\-\-steady-rule loose: must be snia or tight" "bad --steady-rule" -- ssd --preset tiny --steady --steady-rule loose
expect 2 "\-\-steady-rule needs \-\-steady" "--steady-rule without --steady" -- ssd --preset tiny --steady-rule tight
expect 2 "gc_stream=mixed: must be one of separate|shared|shared-burst" "bad gc_stream" -- ssd --preset tiny --set gc_stream=mixed
expect 2 "both must be 100" "zoned sums" -- ssd --preset tiny --workload zoned:80/20:30/80
expect 2 "expected zoned" "zoned syntax" -- ssd --preset tiny --workload zoned:80-20
expect 2 "must be uniform, seq or zoned" "unknown workload" -- ssd --preset tiny --workload zipf
expect 2 "--writes" "negative writes" -- ssd --preset tiny --writes -3
expect 2 "unexpected argument" "stray argument" -- ssd --preset tiny extra
expect 2 "Unknown option" "unknown option" -- ssd --preset tiny --frobnicate
expect 2 "preset is required" "missing preset" -- ssd
expect 2 "\-\-rw trim: must be read, write" "bad --rw" -- ssd --preset tiny --rw trim
expect 2 "\-\-iodepth, \-\-rate, \-\-runtime and \-\-ramp need \-\-rw" "--iodepth without --rw" -- ssd --preset tiny --iodepth 8
expect 2 "\-\-iodepth 0: must be 1..65536" "zero --iodepth" -- ssd --preset tiny --rw write --iodepth 0
expect 2 "were never written, and reading them costs no NAND time; add \-\-precondition" "--rw randread on an empty drive" -- ssd --preset tiny --rw randread
expect 2 "spare_factor=0.01: only" "impossible spare" -- ssd --preset tiny --set spare_factor=0.01
printf '[ssd]\nchannels=1\nblocks_per_plane=64\n' >"$T/nospare.ini"
expect 2 "set op_percent or spare_factor" "preset without spare" -- ssd --preset "$T/nospare.ini"
printf '[ssd]\nchannels=two\nspare_factor=0.2\n' >"$T/badval.ini"
expect 2 "badval.ini:2: channels=two: not a number" "preset bad value" -- ssd --preset "$T/badval.ini"
printf 'not an ini file\n' >"$T/garbage.ini"
expect 2 "garbage.ini:1: expected \[group\] or key=value" "garbage preset" -- ssd --preset "$T/garbage.ini"
printf '# no group yet\nchannels=1\n[ssd]\n' >"$T/nogroup.ini"
expect 2 "nogroup.ini:2: channels= before any \[group\]" "preset key outside a group" -- ssd --preset "$T/nogroup.ini"
printf '[ssd]\nchannels=1\nluns_per_channel=1\nplanes_per_lun=1\npages_per_block=64\npage_size=4096\nspare_factor=0.2\nchannels=2\n' >"$T/twice.ini"
expect 2 "twice.ini:8: channels= again (first at line 2)" "preset: a key given twice" -- ssd --preset "$T/twice.ini"
printf '[ssd]\nchannels=1\nluns_per_channel=1\nplanes_per_lun=1\npages_per_block=64\npage_size=4096\nspare_factor=0.2\n' >"$T/nobpp.ini"
expect 2 "nobpp.ini: \[ssd\] has no blocks_per_plane=" "preset: geometry not in full" -- ssd --preset "$T/nobpp.ini"
printf '[about]\ndescription=x\n' >"$T/nossd.ini"
expect 2 "nossd.ini: no \[ssd\] group" "preset without [ssd]" -- ssd --preset "$T/nossd.ini"
expect 2 "$T/absent.ini: No such file" "missing preset file" -- ssd --preset "$T/absent.ini"
printf '[ssd]\n  channels = 1 \r\nluns_per_channel=1\nplanes_per_lun=1\nblocks_per_plane=256\npages_per_block=64\npage_size=4096\nspare_factor=0.2\n[other]\nx=y\n' >"$T/spaces.ini"
expect 0 '"preset": "spaces"' "preset: trimmed keys and values, CRLF, other groups ignored" -- ssd --preset "$T/spaces.ini" --writes 0 --json
printf 'FGFTLSNP garbage' >"$T/bad.snap"
expect 2 "too short" "corrupt snapshot" -- ssd --load-snapshot "$T/bad.snap"
expect 2 "cannot open" "missing snapshot" -- ssd --load-snapshot "$T/none.snap"

# every shipped preset opens
for p in femu-bbssd ent-tlc-1t ent-tlc-4t client-tlc-1t qlc-8t hbf-512g hbf-4t pm9d3a-class tiny; do
	expect 0 '"lifetime_days"' "preset $p opens" -- ssd --preset $p --writes 0 --json
done

# JSON output has the documented keys and sane values
"$FG" ssd --preset tiny --precondition --steady --json --check >"$T/out.json" 2>"$T/err" || fail "ssd --json run: $(cat "$T/err")"
python3 - "$T/out.json" <<'PY' && pass "ssd --json keys and values" || fail "ssd --json keys and values"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["waf", "waf_cumulative", "host_write_bytes", "nand_write_bytes", "gc_write_bytes", "erases",
          "erase_count", "effective_spare_factor", "pages_per_gc_unit", "lifetime_days", "smart", "steady"]:
    assert k in d, k
for k in ["min", "mean", "max"]: assert k in d["erase_count"], k
for k in ["tbw", "naive_pe", "erase"]: assert d["lifetime_days"][k] > 0, k
for k in ["percentage_used", "available_spare"]: assert k in d["smart"], k
assert d["steady"]["reached"] is True
assert d["nand_write_bytes"] >= d["host_write_bytes"] > 0
assert 1.5 < d["waf"] < 6, d["waf"]
assert abs(d["effective_spare_factor"] - 0.2) / 0.2 < 0.15
assert d["smart"]["data_units_written"] == -(-d["host_write_bytes"] // 512000)
PY

# the queued host through the CLI: QD1 reads on tiny are one sense (40 us) and one 4 KiB
# transfer (5.12 us) each, so the mean is exact and the text report says the same
"$FG" ssd --preset tiny --precondition --rw randread --iodepth 1 --ramp 0.05 --runtime 0.1 --json \
	>"$T/perf.json" 2>"$T/err" || fail "ssd --rw --json: $(cat "$T/err")"
python3 - "$T/perf.json" <<'PY' && pass "ssd --rw --json: perf object, QD1 latency exact" || fail "ssd --rw --json"
import json, sys
p = json.load(open(sys.argv[1]))["perf"]
assert p["rw"] == "randread" and p["iodepth"] == 1 and p["bs"] == 4096, p
assert p["lat_us"]["mean"] == 45.12 and p["lat_us"]["max"] == 45.12, p["lat_us"]
assert p["ios"] in (2216, 2217) and p["read_pct"] == 100, p
PY
"$FG" ssd --preset tiny --precondition --rw randread --iodepth 1 --ramp 0.05 --runtime 0.1 >"$T/perf.txt" 2>"$T/err" &&
	grep -Eq "^perf         randread, bs 4096, iodepth 1, 0.1 s measured: 22(16|17)0 IOPS" "$T/perf.txt" &&
	grep -q "mean 45.1  p50 45.1  p90 45.1  p99 45.1  p99.9 45.1  max 45.1" "$T/perf.txt" && pass "ssd --rw text report" ||
	fail "ssd --rw text report: $(cat "$T/perf.txt" "$T/err")"

# snapshots through the CLI: the second run continues the first one's wear
"$FG" ssd --preset tiny --writes 3 --json --save-snapshot "$T/a.snap" >"$T/1.json" 2>"$T/err" || fail "save: $(cat "$T/err")"
"$FG" ssd --load-snapshot "$T/a.snap" --writes 3 --json --check >"$T/2.json" 2>"$T/err" || fail "load: $(cat "$T/err")"
python3 - "$T/1.json" "$T/2.json" <<'PY' && pass "snapshot continues erase counts" || fail "snapshot continues erase counts"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert b["erases"] > a["erases"] > 0
assert b["erase_count"]["min"] >= a["erase_count"]["min"]
assert b["host_write_bytes"] == 2 * a["host_write_bytes"]
PY
cp "$T/a.snap" "$T/b.snap"
printf 'X' | dd of="$T/b.snap" bs=1 seek=4000 conv=notrunc status=none
expect 2 "checksum mismatch" "flipped snapshot byte" -- ssd --load-snapshot "$T/b.snap"
# a line break in a config string would end its key=value line in a snapshot: refused in --set,
# '_' in a name taken from a file name, and that drive's snapshot loads back
expect 2 "name: a line break in the value" "--set name with a newline" -- ssd --preset tiny --set "name=a
b"
cp "$(dirname "$0")/../hw/ftl/presets/tiny.ini" "$T/new
line.ini"
"$FG" ssd --preset "$T/new
line.ini" --writes 1 --save-snapshot "$T/nl.snap" >/dev/null 2>"$T/err" || fail "save, newline in the preset's file name: $(cat "$T/err")"
expect 0 "" "load a snapshot of a preset whose file name has a newline" -- ssd --load-snapshot "$T/nl.snap" --writes 1

# accelerated aging agrees with extrapolation
"$FG" ssd --preset tiny --set pe_variation=0 --set wl_threshold=8 --precondition --steady --accelerate 30 --json >"$T/acc.json" 2>"$T/err" || fail "accelerate: $(cat "$T/err")"
python3 - "$T/acc.json" <<'PY' && pass "accelerated vs extrapolated lifetime within 5%" || fail "accelerated vs extrapolated lifetime"
import json, sys
d = json.load(open(sys.argv[1]))["accelerated"]
print("   eol %.1f days, extrapolated %.1f days" % (d["eol_days"], d["extrapolated_days"]))
assert abs(d["eol_days"] / d["extrapolated_days"] - 1) < 0.05
PY

# end of life is a result: the run stops at the first refused write, reports up to it, exits 0
expect 0 "end of life (gc-reserve) at write 16001: 1.22 drive writes" "ssd to end of life: text report" -- ssd --preset tiny --set pe_cycles=1 --writes 3
expect 0 "end of life reached (gc-reserve) at write 16001; the report covers the run up to it" "ssd to end of life: stderr line" -- ssd --preset tiny --set pe_cycles=1 --writes 3
"$FG" ssd --preset tiny --set pe_cycles=1 --writes 3 --json >"$T/eol.json" 2>"$T/err" && grep -q '"eol": {' "$T/eol.json" &&
	python3 -m json.tool "$T/eol.json" >/dev/null && python3 - "$T/eol.json" <<'PY' && pass "ssd to end of life: JSON eol" || fail "ssd to end of life: JSON: $(cat "$T/err")"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["eol"]
assert e["cause"] == "gc-reserve" and e["write"] == 16001 and "pass" not in e, e
assert e["host_write_bytes"] == d["host_write_bytes"] == 16000 * 4096, e
PY
"$FG" ssd --preset tiny --writes 0 --json 2>&1 | python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["eol"] is not None)' &&
	pass "ssd --json: eol null before end of life" || fail "ssd --json: eol null before end of life"
expect 0 "end of life (spare) at pass 689, io 3175" "blkreplay to end of life: text report" -- blkreplay "$SRC/traces/blk-kvcache-small.csv" --preset tiny --loop 3000
"$FG" blkreplay "$SRC/traces/blk-kvcache-small.csv" --preset tiny --loop 3000 --json >"$T/beol.json" 2>"$T/err" && grep -q '"eol": {' "$T/beol.json" &&
	grep -q "end of life reached (spare) at pass 689, io 3175; the report covers the run up to it" "$T/err" &&
	python3 -m json.tool "$T/beol.json" >/dev/null && python3 - "$T/beol.json" <<'PY' && pass "blkreplay to end of life: JSON eol" || fail "blkreplay to end of life: JSON: $(cat "$T/err")"
import json, sys
d = json.load(open(sys.argv[1]))
e = d["eol"]
assert e["cause"] == "spare" and e["pass"] == 689 and e["io"] == 3175, e
assert d["passes"] == 688 and d["ios_per_pass"] == 5421 and e["host_write_bytes"] == d["host_write_bytes"], d
PY
"$FG" ssd --preset tiny --precondition --accelerate 30 --json 2>"$T/err" | python3 -c 'import json,sys; e=json.load(sys.stdin)["eol"]; sys.exit(not e["write"] > 0)' &&
	! grep -q "end of life reached" "$T/err" && pass "ssd --accelerate: eol object, no stderr line" || fail "ssd --accelerate eol: $(cat "$T/err")"
expect 2 "\-\-accelerate 1e+30: must be in \[1, 3000\], the drive's rated pe_cycles" "--accelerate beyond the rated P/E" -- ssd --preset tiny --accelerate 1e30
expect 2 "\-\-accelerate 0: must be >= 1" "--accelerate 0 is an error, not off" -- ssd --preset tiny --accelerate 0
expect 2 "\-\-dwpd -1: must be >= 0" "ssd negative --dwpd" -- ssd --preset tiny --dwpd -1
expect 2 "\-\-dwpd -1: must be > 0" "blkreplay negative --dwpd" -- blkreplay "$SRC/traces/blk-kvcache-small.csv" --preset tiny --dwpd -1
# a lifetime that is not steady is marked, with what it lacks
expect 0 "^  \* not steady: drive written 1.00 times, WAF range" "ssd: unsteady lifetime footnote" -- ssd --preset tiny --writes 1

# zoned workload: 80% of writes to 20% of space runs and skews wear less than uniform WAF
expect 0 '"waf"' "zoned workload" -- ssd --preset tiny --workload zoned:80/20:20/80 --writes 4 --json

# JESD219's enterprise workload (zones and transfer sizes); sub-4 KiB writes are RMW of 4 KiB units
"$FG" ssd --preset tiny --workload jesd219 --bs jesd219 --precondition --writes 2 --json >"$T/jesd.json" 2>&1
python3 - "$T/jesd.json" <<'PY' && pass "jesd219 workload and transfer-size mix" || fail "jesd219 workload: $(head -c 300 "$T/jesd.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["workload"] == "jesd219" and d["bs_mix"] == "jesd219" and d["bs"] == 0, d["workload"]
assert d["rmw_units"] > 0 and d["waf"] > 1
PY
expect 0 "bs jesd219 (transfer-size mix)" "jesd219 text report" -- ssd --preset tiny --bs jesd219 --writes 1
# --steady reports SNIA's verdict and the tight one; --steady-rule tight runs until the latter
expect 0 "tight 3%/0.5%  NOT steady within" "steady: tight verdict beside SNIA's" -- ssd --preset tiny --precondition --steady
"$FG" ssd --preset tiny --precondition --steady --steady-rule tight --json >"$T/tight.json" 2>&1
python3 - "$T/tight.json" <<'PY' && pass "--steady-rule tight waits past SNIA" || fail "--steady-rule tight: $(head -c 300 "$T/tight.json")"
import json, sys
s = json.load(open(sys.argv[1]))["steady"]
assert s["rule"] == "tight" and s["reached"] and s["tight"]["reached"], s
assert s["snia"]["round"] < s["tight"]["round"] == s["rounds"], s
print("   SNIA round %d WAF %.4f, tight round %d WAF %.4f" % (s["snia"]["round"], s["snia"]["waf"], s["tight"]["round"], s["tight"]["waf"]))
PY
# gc_stream: shared (mixed per victim) and shared-burst (FEMU-like) both run
expect 0 '"waf"' "gc_stream=shared-burst" -- ssd --preset tiny --set gc_stream=shared-burst --set host_streams=1 --writes 2 --json --check
expect 0 '"waf"' "gc_stream=shared" -- ssd --preset tiny --set gc_stream=shared --writes 2 --json --check
# --zone-streams: zone i's writes on stream i. tiny holds 13,107 4 KiB blocks; zoned:95/5:5/95's
# first zone is blocks 0..654 (2,682,880 bytes), and the precondition's 128 KiB writes that start
# there (21 a pass, two passes) are 5,505,024 bytes on handle 0, the other 101,867,520 on handle 1
for h in "0, \"host_bytes\": 5505024," "1, \"host_bytes\": 101867520,"; do
	expect 0 "\"ruh\": $h" "--zone-streams: the precondition by zone (ruh $h)" -- \
		ssd --preset tiny --set fdp=on --set host_streams=2 --workload zoned:95/5:5/95 --zone-streams \
		--precondition --writes 0 --json
done
expect 2 "--zone-streams: needs --workload zoned" "--zone-streams without zones" -- \
	ssd --preset tiny --zone-streams --writes 0
expect 2 "has 2 zones, the drive 1 host stream (set host_streams=2" "--zone-streams, too few streams" -- \
	ssd --preset tiny --workload zoned:95/5:5/95 --zone-streams --writes 0

# ---- traces ----
expect 0 '"format": "aiperf"' "trace info on a synth sample" -- trace info "$SRC/traces/multiturn-small.jsonl" --json
expect 0 '"format": "blk-csv"' "trace info on the block sample" -- trace info "$SRC/traces/blk-kvcache-small.csv" --json
# distinct ids, counted from the ids each turn adds to its session's previous turn: random
# sessions whose turns extend, rehash their last block, shrink or start over, ids shared across
# sessions and coming back after a turn dropped them, sessionless requests; against a set of all
python3 - "$T/turns.jsonl" <<'EOF'
import json, random, sys
random.seed(7)
prev, out, every = {}, [], set()
for r in range(400):
    s = random.choice([None] + ["s%d" % i for i in range(12)])
    p = prev.get(s, []) if s else []
    c = random.random()
    if c < 0.5 and p:
        ids = p[:-1] + [random.randrange(3000)] + [random.randrange(3000) for _ in range(random.randrange(4))]
    elif c < 0.7:
        ids = p + [random.randrange(3000) for _ in range(random.randrange(1, 5))]
    elif c < 0.8:
        ids = p[:random.randrange(len(p) + 1)]
    else:
        ids = [random.randrange(3000) for _ in range(random.randrange(1, 9))]
    if s:
        prev[s] = ids
    every.update(ids)
    rec = {"timestamp": r * 10, "input_length": 64 * max(len(ids), 1), "output_length": 10, "hash_ids": ids}
    if s:
        rec["session_id"] = s
    out.append(json.dumps(rec))
open(sys.argv[1], "w").write("\n".join(out) + "\n")
open(sys.argv[1] + ".want", "w").write("%d\n" % len(every))
EOF
got=$("$FG" trace info "$T/turns.jsonl" --json 2>&1 | python3 -c "import json,sys; print(json.load(sys.stdin)['unique_blocks'])")
[ "$got" = "$(cat "$T/turns.jsonl.want")" ] && pass "trace info: $got distinct ids in turns that extend, rehash, shrink and restart, as a set of all counts" ||
	fail "trace info counted $got distinct ids, a set of all $(cat "$T/turns.jsonl.want")"
expect 2 "expected one FILE" "trace info without a file" -- trace info
expect 2 "No such file" "trace info on a missing file" -- trace info "$T/none.csv"
printf '0,W,0,4096\n1,W,zz,4096\n2,W,8,4096\n' >"$T/bad.csv"
expect 2 "bad.csv:2: lba 'zz'" "malformed record gives FILE:LINE" -- trace info "$T/bad.csv"
expect 0 "1 malformed records skipped" "--skip-bad counts" -- trace info "$T/bad.csv" --skip-bad
printf '# nothing\n' >"$T/empty.csv"
expect 2 "unknown trace format" "a trace with no records" -- trace info "$T/empty.csv"
expect 2 "--format xyz" "bad --format" -- trace info "$T/bad.csv" --format xyz

# synth: deterministic, and readable by the readers
"$FG" synth --kind multiturn --sessions 20 --seed 3 --out "$T/s1.jsonl" && "$FG" synth --kind multiturn --sessions 20 --seed 3 --out "$T/s2.jsonl" \
	&& cmp -s "$T/s1.jsonl" "$T/s2.jsonl" && pass "synth is deterministic" || fail "synth is deterministic"
expect 0 '"sessions": 20' "synth output reads back" -- trace info "$T/s1.jsonl" --json
expect 2 "synth" "synth bad kind" -- synth --kind nope

# blkreplay in-process
expect 0 '"pass_waf"' "blkreplay --json" -- blkreplay "$SRC/traces/blk-kvcache-small.csv" --preset tiny --loop 2 --json
# a KV run that writes nothing to SSD: infinite lifetimes are null, the JSON still parses
# (DRAM holds the whole trace: LRU never evicts)
"$FG" kv --trace "$SRC/traces/multiturn-small.jsonl" --model qwen3-next-80b-a3b --dram 1T --ssd 32G \
	--device ent-tlc-1t --set blocks_per_plane=56 --policy lru --json >"$T/k0.json" 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d["ssd_write_bytes"] == 0 and d["lifetime_days"]["tbw"] is None and d["waf"] is None))' "$T/k0.json" &&
	pass "kv --json with no SSD writes: lifetimes and WAF null" || fail "kv --json with no SSD writes: $(head -c 300 "$T/k0.json")"
# one pass, steady state not reached: still valid JSON (waf null, not nan)
"$FG" blkreplay "$SRC/traces/blk-kvcache-small.csv" --preset tiny --json >"$T/b1.json" 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); sys.exit(d["steady"]["waf"] is not None)' "$T/b1.json" &&
	pass "blkreplay --json without steady state parses (waf null)" || fail "blkreplay --json one pass: $(head -c 300 "$T/b1.json")"
printf '0,W,0,4096\n5,W,999999999,4096\n' >"$T/far.csv"
expect 2 "far.csv:2: W at lba 999999999" "blkreplay out-of-range LBA" -- blkreplay "$T/far.csv" --preset tiny
expect 0 '"host_write_bytes": 8192' "blkreplay --wrap folds it in" -- blkreplay "$T/far.csv" --preset tiny --wrap --dwpd 1 --json
expect 2 "holds KV requests" "blkreplay on a KV trace" -- blkreplay "$SRC/traces/multiturn-small.jsonl" --preset tiny
printf '0,W,0,4096\n' >"$T/one.csv"
expect 2 "no duration" "blkreplay without duration or --dwpd" -- blkreplay "$T/one.csv" --preset tiny

# blkreplay onto a file: exact byte accounting against trace info
truncate -s 64M "$T/disk.img"
want=$("$FG" trace info "$SRC/traces/blk-kvcache-small.csv" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["write_bytes"])')
got=$("$FG" blkreplay "$SRC/traces/blk-kvcache-small.csv" --target "$T/disk.img" --json 2>"$T/err" | python3 -c 'import json,sys; print(json.load(sys.stdin)["write_bytes"])' 2>/dev/null)
if [ "$want" = "$got" ] && [ -n "$want" ]; then pass "blkreplay --target writes exactly the trace's bytes ($want)"; else fail "blkreplay --target bytes: want $want got $got: $(cat "$T/err")"; fi
expect 2 "--timing" "bad --timing" -- blkreplay "$SRC/traces/blk-kvcache-small.csv" --target "$T/disk.img" --timing fast
expect 2 "do not apply" "--target with --preset" -- blkreplay "$SRC/traces/blk-kvcache-small.csv" --target "$T/disk.img" --preset tiny
printf '0,W,1,100\n' >"$T/mis.csv"
expect 2 "mis.csv:1: bytes 100: not a whole number of 512-byte sectors" "misaligned I/O: refused by the reader (exit 2, as any malformed trace)" -- blkreplay "$T/mis.csv" --target "$T/disk.img"

# ---- kv ----
KV=(kv --trace "$SRC/traces/multiturn-small.jsonl" --dram 2G --device tiny)
expect 0 "qwen3-next-80b-a3b" "models lists the catalog" -- models
expect 2 "unknown model 'gpt-9'" "kv unknown model" -- "${KV[@]}" --model gpt-9
expect 2 "unknown policy" "kv unknown policy" -- "${KV[@]}" --policy nope
expect 2 "unknown parameter for policy gandalf" "kv unknown parameter" -- "${KV[@]}" --policy gandalf --param q=1
expect 2 "lambda=-1: must be in \[0..inf)" "kv parameter out of range" -- "${KV[@]}" --policy gandalf --param lambda=-1
expect 0 "lambda=1  \[0..inf)  sweep 0,0.25" "kv --help lists the parameter tables" -- kv --help
expect 2 "lambda is swept by --sweep" "kv --sweep with a swept --param" -- "${KV[@]}" --policy gandalf --sweep --param lambda=2
expect 2 "needs a single --policy" "kv --sweep --param with every policy" -- "${KV[@]}" --policy all --sweep --param k=2
expect 0 '"lambda=1024,state_reuse=0"' "kv --sweep with a fixed --param" -- kv --trace "$SRC/traces/multiturn-small.jsonl" --dram 1G --ssd 4G --device none --policy gandalf --sweep --param state_reuse=0
expect 2 "state_move=2: must be in \[0..1\]" "gandalf state_move out of range" -- "${KV[@]}" --policy gandalf --param state_move=2
expect 2 "take whole numbers" "gandalf state_reuse not whole" -- "${KV[@]}" --policy gandalf --param state_reuse=0.5
expect 0 "gandalf learned: p_again" "kv prints what gandalf learned" -- "${KV[@]}" --policy gandalf
expect 0 "peak active KV .*: DRAM holds" "kv prints the peak active KV" -- "${KV[@]}" --policy lru
expect 0 "peak active KV for paper-kimi-k3: " "trace info --model" -- trace info "$SRC/traces/multiturn-small.jsonl" --model paper-kimi-k3
expect 2 "unknown model 'gpt-9'" "trace info unknown model" -- trace info "$SRC/traces/multiturn-small.jsonl" --model gpt-9
expect 2 "is a block trace" "trace info --model on a block trace" -- trace info "$SRC/traces/blk-kvcache-small.csv" --model paper-kimi-k3
expect 2 "knows one pass of the trace: drop --loop" "kv one-pass policy with --loop" -- "${KV[@]}" --policy oracle --loop 2
expect 2 "--loop-ids new: must be same or fresh" "kv bad --loop-ids" -- "${KV[@]}" --loop 2 --loop-ids new
# --loop-ids: on a tier that never evicts, a second pass of the same content misses nothing new,
# and a pass of fresh ids misses exactly what the first pass did (the trace's own miss ratios)
LI=(kv --trace "$SRC/traces/multiturn-small.jsonl" --model paper-kimi-k3 --dram 1G --device none --ssd 10T --policy lru --json)
for m in one same fresh; do
	case $m in one) a=(--loop 1) ;; *) a=(--loop 2 --loop-ids "$m") ;; esac
	"$FG" "${LI[@]}" "${a[@]}" >"$T/loop-$m.json" 2>"$T/err" || fail "kv --loop-ids $m: $(cat "$T/err")"
done
python3 - "$T"/loop-{one,same,fresh}.json <<'PY' && pass "kv --loop-ids same and fresh" || fail "kv --loop-ids same and fresh"
import json, sys
one, same, fresh = (json.load(open(p)) for p in sys.argv[1:4])
assert one["ssd_evictions"] == same["ssd_evictions"] == fresh["ssd_evictions"] == 0
hits = lambda r: sum(r["hits"].values())
assert same["requests"] == fresh["requests"] == 2 * one["requests"]
assert fresh["miss_ratio"] == one["miss_ratio"] and fresh["request_miss_ratio"] == one["request_miss_ratio"]
assert fresh["token_miss_ratio"] == one["token_miss_ratio"]
assert same["miss_ratio"] < one["miss_ratio"] and same["ssd_write_bytes"] == one["ssd_write_bytes"]
assert fresh["ssd_write_bytes"] >= 2 * one["ssd_write_bytes"]
PY
expect 2 "--dram 0" "kv zero DRAM" -- "${KV[@]}" --dram 0
expect 2 "--ssd 0" "kv zero SSD" -- "${KV[@]}" --ssd 0
expect 2 "larger than the tiny drive" "kv SSD tier larger than the drive" -- "${KV[@]}" --ssd 1T
printf '# no requests here\n{"timestamp": 0, "input_length": 5, "output_length": 1, "hash_ids": "x"}\n' >"$T/none.jsonl"
expect 2 "no usable requests" "kv trace with no usable requests" -- kv --trace "$T/none.jsonl" --dram 1G --device none --ssd 1G --skip-bad
expect 2 "none.jsonl:2: 'hash_ids' is not an array" "kv malformed trace" -- kv --trace "$T/none.jsonl" --dram 1G --device none --ssd 1G
expect 2 "block trace" "kv on a block trace" -- kv --trace "$SRC/traces/blk-kvcache-small.csv" --dram 1G --device none --ssd 1G
expect 2 "--alloc heap: must be slots, log or region" "kv bad --alloc" -- "${KV[@]}" --alloc heap
expect 2 "--region and --readmit need --alloc region" "kv --region without --alloc region" -- "${KV[@]}" --region 64M
expect 2 "--readmit 0.9: must be in .0, 0.5." "kv --readmit out of range" -- "${KV[@]}" --alloc region --readmit 0.9
expect 2 "--region 5000: must be a size > 0, a multiple of 4 KiB" "kv --region not 4 KiB-aligned" -- "${KV[@]}" --alloc region --region 5000
expect 2 "--alloc region: the SSD tier" "kv --alloc region with too few regions" -- "${KV[@]}" --alloc region --region 1G --ssd 2G --device none
expect 2 "--streams session:0: session:N needs N in 1..64" "kv --streams session:0" -- "${KV[@]}" --streams session:0
expect 2 "--streams bogus: must be none, kind, session" "kv bad --streams" -- "${KV[@]}" --streams bogus
expect 2 "too few for 4 streams" "kv --alloc region with more streams than regions" -- "${KV[@]}" --model llama-3.1-8b --alloc region --streams kind+session:2 --region 16M --ssd 96M --device none
# (llama-3.1-8b's 64 MiB blocks would not fit tiny's 51 MiB tier: refused)
expect 2 "smaller than the smallest object the tier stores (a KV block of llama-3.1-8b: 67108864 bytes)" \
	"kv: a drive smaller than one of the model's KV blocks is refused" -- "${KV[@]}" --model llama-3.1-8b
expect 0 '"regions_cleaned": [1-9]' "kv --alloc region in the JSON, regions cleaned" -- "${KV[@]}" --dram 64M --model test-hybrid-256 --policy gandalf --alloc region --json
expect 0 '"alloc": "log"' "kv --alloc log in the JSON" -- "${KV[@]}" --policy lru --alloc log --json
expect 2 "needs --ssd" "kv without device needs --ssd" -- kv --trace "$SRC/traces/multiturn-small.jsonl" --device none
# end of life stops the run, with the report up to it (a drive rated 20 P/E dies in pass 16)
EOL=(kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M --device tiny --policy write-through --set pe_cycles=20 --loop 1000)
expect 0 "end of life (spare) at pass 16, request 70: 21.85 drive writes" "kv stops at end of life" -- "${EOL[@]}"
expect 0 '"eol": {"cause": "spare", "pass": 16, "request": 70,' "kv --json eol object" -- "${EOL[@]}" --json
LIVE=(kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M --device tiny --policy lru)
expect 0 '"eol": null' "kv --json eol null on a live drive" -- "${LIVE[@]}" --json
expect 0 "erase count .* d\* (" "kv marks a lifetime that is not steady" -- "${LIVE[@]}"
expect 0 "\* not steady: the drive was written 1.23x its capacity and its passes are too few" "kv explains a lifetime that is not steady" -- "${LIVE[@]}"
expect 2 "--drive-writes -1: must be in (0, 1e6]" "kv bad --drive-writes" -- "${KV[@]}" --drive-writes -1
expect 2 "--loop: drop it" "kv --loop with --drive-writes" -- "${KV[@]}" --drive-writes 3 --loop 2
expect 2 "--max-loops 5: needs --drive-writes, --until-steady or --accelerate" "kv --max-loops alone" -- "${KV[@]}" --max-loops 5
expect 2 "--accelerate 0: must be >= 1" "kv --accelerate 0" -- "${KV[@]}" --accelerate 0
expect 2 "--accelerate 1e+30: must be in \[1, 3000\]" "kv --accelerate beyond the rated P/E" -- "${KV[@]}" --accelerate 1e30
expect 2 "need a drive" "kv --drive-writes without a drive" -- kv --trace "$SRC/traces/multiturn-small.jsonl" --device none --ssd 1G --drive-writes 3
expect 0 '"passes": 3,' "kv --drive-writes stops at --max-loops" -- "${LIVE[@]}" --drive-writes 30 --max-loops 3 --json
expect 0 "--drive-writes 30 not reached in 3 passes" "kv says --drive-writes was not reached" -- "${LIVE[@]}" --drive-writes 30 --max-loops 3
# --fold: the four folds of a trace partition its requests and its sessions
expect 2 "--fold 5/4: must be I/K" "kv bad --fold" -- "${KV[@]}" --fold 5/4
for f in 1 2 3 4; do
	"$FG" trace info "$SRC/traces/multiturn-small.jsonl" --fold "$f/4" --json >"$T/fold-$f.json" 2>"$T/err" || fail "trace info --fold $f/4: $(cat "$T/err")"
done
python3 - "$T"/fold-{1,2,3,4}.json <<'PY' && pass "trace --fold: four folds partition the requests and sessions" || fail "trace --fold partition"
import json, sys
folds = [json.load(open(p)) for p in sys.argv[1:]]
assert sum(f["requests"] for f in folds) == 1066, [f["requests"] for f in folds]
assert sum(f["sessions"] for f in folds) == 100, [f["sessions"] for f in folds]
assert all(f["requests"] > 0 for f in folds)
PY
"$FG" kv --trace "$SRC/traces/multiturn-small.jsonl" --model qwen3-next-80b-a3b --dram 1G --device tiny --policy gandalf --json >"$T/kv.json" 2>"$T/err" || fail "kv --json: $(cat "$T/err")"
python3 - "$T/kv.json" <<'PY' && pass "kv --json keys" || fail "kv --json keys"
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["policy", "params", "requests", "miss_ratio", "ssd_write_bytes", "ssd_read_bytes", "waf", "lifetime_days",
          "load_latency_s", "cost_per_1k_requests", "hits", "ssd_objects_written", "ssd_written_hit_share", "alloc"]:
    assert k in d, k
for k in ["tbw", "naive_pe", "erase"]: assert k in d["lifetime_days"], k
assert d["requests"] == 1066 and 0 <= d["miss_ratio"] <= 1
assert d["ssd_read_timing"] == "emulated-ssd"
assert d["alloc"] == "slots"
PY
# nothing reaches the SSD: the lifetimes are infinite, printed as null (the JSON stays valid)
"$FG" kv --trace "$SRC/traces/multiturn-small.jsonl" --dram 1T --device none --ssd 1G --policy lru --json 2>"$T/err" |
	python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["ssd_write_bytes"] == 0 and d["lifetime_days"]["tbw"] is None' &&
	pass "kv --json with no SSD writes: null lifetimes" || fail "kv --json with no SSD writes: $(cat "$T/err")"
# the text report: full + linear = SSD writes (each size in its own buffer)
"$FG" kv --trace "$SRC/traces/multiturn-small.jsonl" --dram 8G --device none --ssd 32G --policy lru >"$T/kt.txt" 2>&1
python3 - "$T/kt.txt" <<'PY' && pass "kv text report: full + linear = SSD writes" || fail "kv text report sizes: $(grep 'SSD writes' "$T/kt.txt")"
import re, sys
u = {"B": 1, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40}
m = re.search(r"SSD writes ([\d.]+) (\w+) \(full ([\d.]+) (\w+), linear ([\d.]+) (\w+)\)", open(sys.argv[1]).read())
tot, full, lin = (float(m.group(i)) * u[m.group(i + 1)] for i in (1, 3, 5))
sys.exit(not (abs(full + lin - tot) <= 0.01 * tot and full != lin))
PY
"$FG" kv --trace "$SRC/traces/multiturn-small.jsonl" --dram 1G --device none --ssd 8G --policy all >"$T/all.csv" 2>"$T/err" || fail "kv --policy all: $(cat "$T/err")"
[ "$(wc -l <"$T/all.csv")" -ge 6 ] && pass "kv --policy all prints a CSV row per policy" || fail "kv --policy all CSV: $(cat "$T/all.csv")"

# ---- FDP (docs/fdp.md): kv's placement hints as reclaim unit handles, the fdp object in --json ----
"$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M --device tiny --policy gandalf \
	--streams kind+session:4 --set fdp=on --set fdp_ruh_type=persistently --loop 4 --json >"$T/fdp.json" 2>"$T/err" &&
	python3 - "$T/fdp.json" <<'PY' && pass "kv --set fdp=on: HBMW = the SSD tier's writes, per handle, MBMW >= HBMW, 8 handles" || fail "kv fdp: $(cat "$T/err")"
import json, sys
d = json.load(open(sys.argv[1])); f = d["fdp"]
assert f["reclaim_unit_handles"] == 8 and f["ruh_type"] == "persistently-isolated"
assert f["hbmw_bytes"] == d["ssd_write_bytes"] == sum(h["host_bytes"] for h in f["handles"])
assert f["mbmw_bytes"] >= f["hbmw_bytes"] and f["gc_frontier_media_bytes"] == 0
assert all(h["host_bytes"] > 0 for h in f["handles"])
PY
# ---- wear attribution (docs/ftl.md): kv's drive charges every program and erased byte to the
# object kinds, and the shares add up to the totals exactly, with TRIM (evictions) and without
# (overwrites); tiny's blocks are 64 pages of 4 KiB
for tr in on off; do
	"$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M --device tiny \
		--policy gandalf --trim $tr --loop 6 --json >"$T/wear.json" 2>"$T/err" &&
		python3 - "$T/wear.json" "$tr" <<'PY' && pass "kv --trim $tr: wear attribution adds up to the drive's totals" || fail "kv wear attribution (trim $tr): $(cat "$T/err")"
import json, sys
d, trim = json.load(open(sys.argv[1])), sys.argv[2] == "on"
a, w = d["attribution"], d["wear_per_kind"]
kinds = ("full", "linear")
assert set(a) == set(kinds) | {"pad_program_bytes", "erased_empty_bytes", "gc_copies_uncaused_bytes"}, a
for k in kinds:
    assert a[k]["host_program_bytes"] == d["ssd_write_bytes_by_kind"][k], (k, a[k])
    assert a[k]["gc_program_bytes"] == a[k]["erased_moved_bytes"], a[k]  # every copied unit's block was erased
    left = "gc_copies_by_overwrite_bytes" if trim else "gc_copies_by_trim_bytes"
    assert a[k][left] == 0 and a[k]["erased_" + ("overwritten" if trim else "trimmed") + "_bytes"] == 0, a[k]
    nand = sum(a[k][c + "_program_bytes"] for c in ("host", "gc", "wl"))
    assert w[k]["nand_program_bytes"] == nand and w[k]["evictions"] > 0, w[k]
erased = sum(a[k]["erased_" + e + "_bytes"] for k in kinds for e in ("moved", "trimmed", "overwritten"))
assert erased + a["erased_empty_bytes"] == d["erases"] * 64 * 4096, (erased, d["erases"])
gc = sum(a[k]["gc_program_bytes"] for k in kinds)
caused = sum(a[k]["gc_copies_by_trim_bytes"] + a[k]["gc_copies_by_overwrite_bytes"] for k in kinds)
assert gc > 0 and caused + a["gc_copies_uncaused_bytes"] == gc, (gc, caused)
nand = sum(w[k]["nand_program_bytes"] for k in kinds) + a["pad_program_bytes"]
assert abs(nand / d["ssd_write_bytes"] - d["waf_cumulative"]) < 1e-4, (nand, d["waf_cumulative"])
PY
done
# blkreplay: a write's placement ID (blk-csv's pid) is its FTL stream. Handle 0 gets the ID 0
# write (64 KiB), the write without an ID (8 KiB) and the one with ID 5, which tiny with two
# handles does not have (4 KiB, an invalid-placement-id event): 77,824 bytes; handle 1 64 KiB.
printf 'time_ns,op,lba,bytes,pid\n0,W,0,65536,1\n1,W,128,65536,0\n2,W,256,4096,5\n3,W,512,8192,\n' >"$T/pid.csv"
"$FG" blkreplay "$T/pid.csv" --preset tiny --set fdp=on --set host_streams=2 --json >"$T/pid.json" 2>"$T/err" &&
	python3 - "$T/pid.json" <<'PY' && pass "blkreplay: placement IDs as FDP handles (77,824 / 65,536 host bytes, one invalid-ID event)" || fail "blkreplay pid: $(cat "$T/err")"
import json, sys
f = json.load(open(sys.argv[1]))["fdp"]
assert [h["host_bytes"] for h in f["handles"]] == [77824, 65536], f["handles"]
assert f["hbmw_bytes"] == 143360, f
ev = [(e["type"], e["ruh"]) for e in f["events"]]
assert ev == [("invalid-placement-id", 5)], ev
PY
"$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M --device tiny --policy lru --json >"$T/nofdp.json" 2>&1 &&
	! grep -q '"fdp"' "$T/nofdp.json" && pass "kv without fdp: no fdp object" || fail "kv without fdp printed fdp"
if "$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M --device tiny --policy lru \
	--set fdp=on --set gc_stream=shared --json >/dev/null 2>"$T/err"; then fail "fdp=on with gc_stream=shared accepted"
else grep -q "gc_stream=shared: fdp=on needs gc_stream=separate" "$T/err" && pass "fdp=on refuses gc_stream=shared, naming the key" || fail "fdp/gc_stream error: $(cat "$T/err")"; fi

# ---- FEMU bbssd reproduced: the femu-bbssd preset's GC rules (gc_bg_trigger=command, victims
# under 1/8 invalid skipped by background GC) on FEMU's 512 MiB geometry, zero latencies, a
# sequential fill then 4 user capacities of random 4 KiB writes, against the WAF FEMU itself
# measured at four namespace sizes (devsz_mb 384, 420, 256, 464 of 512 MiB: docs/presets.md)
FEMU=(ssd --preset femu-bbssd --set channels=2 --set luns_per_channel=2 --set pages_per_block=128
	--set t_read_us=0 --set t_prog_us=0 --set t_erase_us=0 --precondition --writes 4 --json)
for row in "0.25 7.99 0.01" "0.1796875 7.98 0.01" "0.5 1.73 0.01" "0.09375 11.03 0.05"; do
	read -r sf femu tol <<<"$row"
	waf=$("$FG" "${FEMU[@]}" --set spare_factor="$sf" | python3 -c 'import json,sys; print(json.load(sys.stdin)["waf"])')
	if python3 -c "import sys; w, f, t = map(float, sys.argv[1:]); sys.exit(abs(w / f - 1) > t)" "$waf" "$femu" "$tol"; then
		pass "femu-bbssd at spare factor $sf: WAF $waf, FEMU's $femu ($(python3 -c "print('%+.1f%%, tolerance %g%%' % (100 * ($waf / $femu - 1), 100 * $tol))"))"
	else
		fail "femu-bbssd at spare factor $sf: WAF $waf, FEMU measured $femu (tolerance $tol)"
	fi
done
# the idle-time rule (every other preset's) on the same drive: greedy theory's 2.60, not FEMU's 8
waf=$("$FG" "${FEMU[@]}" --set spare_factor=0.25 --set gc_bg_trigger=idle | python3 -c 'import json,sys; print(json.load(sys.stdin)["waf"])')
python3 -c "import sys; sys.exit(abs(float(sys.argv[1]) / 2.60 - 1) > 0.02)" "$waf" &&
	pass "the same drive with idle-time background GC: WAF $waf, greedy theory 2.60" ||
	fail "idle-time background GC on FEMU's drive: WAF $waf, greedy theory 2.60"

# ---- presets --json: the geometry's figures without a drive, equal to the drive's own ----
"$FG" presets --json >"$T/presets.json" || fail "presets --json"
for p in $(python3 -c 'import json,sys; print(" ".join(x["name"] for x in json.load(open(sys.argv[1]))))' "$T/presets.json"); do
	[ "$p" = ent-tlc-4t ] || [ "$p" = qlc-8t ] || [ "$p" = hbf-4t ] || [ "$p" = pm9d3a-class ] && continue # (their drives take GBs to make)
	want=$("$FG" ssd --preset "$p" --writes 0 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["user_bytes"])')
	got=$(python3 -c 'import json,sys; print([x for x in json.load(open(sys.argv[1])) if x["name"] == sys.argv[2]][0]["user_bytes"])' "$T/presets.json" "$p")
	[ "$got" = "$want" ] && pass "presets --json $p: user_bytes $got, as the drive has it" ||
		fail "presets --json $p: user_bytes $got, the drive $want"
done
expect 0 '"user_bytes": 26841088,' "presets --json tiny --set blocks_per_plane=128: half the blocks, 26841088 user bytes" -- \
	presets --json tiny --set blocks_per_plane=128
expect 2 "preset nope: unknown preset 'nope'" "presets --json nope: refused" -- presets --json nope
expect 2 "--set blocks_per_plane=0: must be > 0" "presets --json with a bad --set: refused" -- presets --json tiny --set blocks_per_plane=0
expect 2 "a NAME needs --json" "presets NAME without --json" -- presets tiny

# ---- progress lines (FEMU_GANDALF_PROGRESS=0: every update, one line each, whatever stderr is) ----
# kv: the pass of N, the requests of the pass, the share of all the passes
FEMU_GANDALF_PROGRESS=0 "$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M \
	--device tiny --loop 3 >"$T/p.out" 2>"$T/p.err"
grep -q '^gandalf: 33.3%; pass 1/3, request 92/92, miss 0\.[0-9]*, drive written [0-9.]*x$' "$T/p.err" &&
	grep -q '^gandalf: 100.0%[^;]*; pass 3/3, request 92/92' "$T/p.err" &&
	pass "kv progress: pass k/3, request 92/92, the share of all passes" ||
	fail "kv progress: $(head -3 "$T/p.err")"
FEMU_GANDALF_PROGRESS=off "$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M \
	--device tiny --loop 3 >"$T/p2.out" 2>"$T/p2.err"
cmp -s "$T/p.out" "$T/p2.out" && [ ! -s "$T/p2.err" ] && pass "kv progress: off says nothing, the report is the same" ||
	fail "kv progress off: $(head -3 "$T/p2.err")"
# --drive-writes: the share is the drive writes reached; the passes are not known ahead
FEMU_GANDALF_PROGRESS=0 "$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M \
	--device tiny --drive-writes 2 --loop-ids fresh 2>&1 >/dev/null | tail -1 |
	grep -q '^gandalf: 100.0%[^;]*; pass 2 (at most 1000), request 92/92, miss [0-9.]*, drive written 2.56x$' &&
	pass "kv --drive-writes progress: by drive writes, pass of at most 1000" || fail "kv --drive-writes progress"
# a sweep says which point it is on
FEMU_GANDALF_PROGRESS=0 "$FG" kv --trace "$SRC/traces/agentic-small.jsonl" --model test-hybrid-256 --dram 8M \
	--device tiny --policy lru-k --sweep 2>&1 >/dev/null | grep -c '^point [0-9]*/10, lru-k k=[0-9]*: 100.0%' |
	grep -qx 10 && pass "kv --sweep progress: point k/10 with its parameters" || fail "kv --sweep progress"
# ssd: each phase by name, its own share (steady-state rounds: how many is not known)
FEMU_GANDALF_PROGRESS=0 "$FG" ssd --preset tiny --precondition --steady 2>"$T/p.err" >/dev/null
grep -q '^precondition (2 drive writes, sequential): [0-9.]*%.*; WAF 1.000$' "$T/p.err" &&
	grep -q '^steady state (round 1 of at most 200): [0-9]*s so far; WAF [0-9.]*$' "$T/p.err" &&
	! grep -q '^precondition.*; WAF' <(sed -n '/^steady/,$p' "$T/p.err") &&
	pass "ssd progress: precondition, then steady-state rounds, by name" || fail "ssd progress: $(head -3 "$T/p.err")"
FEMU_GANDALF_PROGRESS=0 "$FG" ssd --preset tiny --accelerate 100 2>&1 >/dev/null | tail -1 |
	grep -q '^aging to end of life (x100): [0-9.]*%' && pass "ssd --accelerate progress: the share of life used" ||
	fail "ssd --accelerate progress"
# blkreplay: pass k of N
FEMU_GANDALF_PROGRESS=0 "$FG" blkreplay "$SRC/traces/blk-kvcache-small.csv" --preset tiny --loop 12 2>&1 >/dev/null |
	grep -q '^blkreplay: 50.0%.*; pass 6/12, 5421 I/Os$' && pass "blkreplay progress: pass k/12" ||
	fail "blkreplay progress"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
