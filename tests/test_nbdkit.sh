#!/bin/bash
# test_nbdkit.sh PLUGIN - tests of the nbdkit plugin (hw/nbdkit) on the tiny preset.
#
# Starts `nbdkit -f --exit-with-parent -U SOCKET PLUGIN preset=tiny ...` in a temporary
# directory and drives it with tests/nbdkit/client.py (python3-libnbd): data integrity across GC,
# exact host-byte accounting, TRIM and write-zeroes, data=none, snapshot round trips with
# data=ram and data=file, bad parameters, and latency=on against the timing model.
# Needs the Debian packages nbdkit and python3-libnbd; exits 77 (skipped) without them.
set -uo pipefail

PLUGIN=$(realpath "${1:?usage: test_nbdkit.sh PLUGIN.so}")
HERE=$(cd "$(dirname "$0")" && pwd)
CLIENT=$HERE/nbdkit/client.py
PY=/usr/bin/python3 # Debian's python3-libnbd is for the system interpreter
# not exported: the build tree's plugin finds the source tree's presets by itself
TINY=${FEMU_GANDALF_PRESETS:-$HERE/../hw/ftl/presets}/tiny.ini

if ! command -v nbdkit >/dev/null || ! $PY -c 'import nbd' 2>/dev/null; then
	echo "SKIP: needs nbdkit and python3-libnbd (apt-get install nbdkit python3-libnbd)"
	exit 77
fi

T=$(mktemp -d /tmp/test_nbdkit.XXXXXX)
PIDS=()
cleanup()
{
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

fails=0
ok()
{
	echo "ok   $*"
}
bad()
{
	echo "FAIL $*"
	fails=$((fails + 1))
}
# check DESCRIPTION PYTHON-EXPR: the expression is evaluated with d = the stats JSON ($STATS)
check()
{
	local r
	r=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(bool(eval(sys.argv[2])))' \
		"$STATS" "$2" 2>&1)
	if [ "$r" = True ]; then ok "$1"; else bad "$1 ($2: $r)"; fi
}
# val FILE EXPR: print a value from a stats JSON
val()
{
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# start NAME ARGS...: serve PLUGIN ARGS on $T/NAME.sock; sets $PID. Fails if it does not come up.
start()
{
	local name=$1 i
	shift
	SOCK=$T/$name.sock
	rm -f "$SOCK" "$T/$name.pid"
	nbdkit -f --exit-with-parent -U "$SOCK" -P "$T/$name.pid" "$PLUGIN" "$@" \
		2>>"$T/$name.log" &
	PID=$!
	PIDS+=("$PID")
	for i in $(seq 100); do
		[ -s "$T/$name.pid" ] && return 0
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	bad "$name: nbdkit did not start: $(cat "$T/$name.log")"
	return 1
}
# stop: SIGTERM, as QEMU's parent script would; nbdkit saves the snapshot and final stats.
stop()
{
	kill -TERM "$PID"
	wait "$PID"
	local rc=$?
	[ $rc -eq 0 ] || bad "nbdkit exited with $rc on SIGTERM"
}

echo "# 1. data integrity across GC, TRIM, write-zeroes, exact accounting (data=ram, snapshot)"
STATS=$T/a.json
start a preset=tiny data=ram snapshot="$T/snap" stats="$STATS" stats_interval=0.5 || exit 1
if summary=$($PY "$CLIENT" fill "$SOCK" "$T/shadow"); then
	ok "fill: 2.2x capacity random writes at QD16, trims, zeroes, FUA, unaligned I/O: all verified"
else
	bad "fill: $summary"
fi
echo "     client: $summary"
sleep 0.7
check "periodic stats written while serving" 'd["nbdkit"]["final"] is False and d["erases"] > 0'
stop
written=$(echo "$summary" | $PY -c 'import json,sys; s=json.load(sys.stdin); print(s["written"] + s["zero_written"])')
trimmed=$(echo "$summary" | $PY -c 'import json,sys; print(json.load(sys.stdin)["trimmed"])')
check "final stats at exit" 'd["nbdkit"]["final"] is True'
check "erases > 0 after 2.2x capacity of random writes" 'd["erases"] > 0'
check "WAF > 1" 'd["waf_cumulative"] > 1'
check "host_write_bytes = bytes the client wrote ($written)" "d['host_write_bytes'] == $written"
check "host_trim_bytes = bytes the client trimmed ($trimmed)" "d['host_trim_bytes'] == $trimmed"
check "no request errors (the past-the-end ones never reach the plugin)" 'all(v["errors"] == 0 for v in d["nbdkit"]["requests"].values())'
echo "     erases $(val "$STATS" 'd["erases"]'), WAF $(val "$STATS" 'round(d["waf_cumulative"], 3)'), host writes $(val "$STATS" 'd["host_write_bytes"]') B"
erases_a=$(val "$STATS" 'd["erases"]')
hw_a=$(val "$STATS" 'd["host_write_bytes"]')
[ -s "$T/snap" ] && [ -s "$T/snap.data" ] && ok "snapshot and snapshot.data saved" ||
	bad "snapshot files missing"
alloc=$(du -k "$T/snap.data" | cut -f1)
[ "$alloc" -lt 60000 ] && ok "snapshot.data is sparse-copied (${alloc} KiB)" || bad "snapshot.data ${alloc} KiB"

echo "# 2. snapshot round trip (data=ram): same data, erase counts continue"
STATS=$T/b.json
start b preset=tiny data=ram snapshot="$T/snap" stats="$STATS" || exit 1
check "restart: snapshot loaded, erases continue from $erases_a" \
	"d['nbdkit']['snapshot_loaded'] and d['erases'] == $erases_a and d['host_write_bytes'] == $hw_a"
check "restart: virtual time continues (base > 0)" 'd["nbdkit"]["virtual_time_base_ns"] > 0'
if out=$($PY "$CLIENT" verify "$SOCK" "$T/shadow" 1.0); then
	ok "restart: all data reads back, then 1x capacity more writes verified"
else
	bad "restart verify: $out"
fi
stop
check "erases grew after the restart (from $erases_a)" "d['erases'] > $erases_a"
echo "     erases $(val "$STATS" 'd["erases"]'), WAF $(val "$STATS" 'round(d["waf_cumulative"], 3)')"

echo "# 3. snapshot with data=file"
STATS=$T/c.json
start c preset=tiny data="file:$T/disk.img" snapshot="$T/fsnap" stats="$STATS" || exit 1
dd if=/dev/urandom of="$T/pattern" bs=64k count=16 status=none
if out=$($PY - "$SOCK" "$T/pattern" <<'EOF'
import nbd, sys
h = nbd.NBD(); h.connect_unix(sys.argv[1])
d = open(sys.argv[2], "rb").read()
h.pwrite(d, 12345 * 4096); h.flush(); h.shutdown()
EOF
); then :; else bad "data=file write: $out"; fi
stop
start d preset=tiny data="file:$T/disk.img" snapshot="$T/fsnap" || exit 1
if $PY - "$SOCK" "$T/pattern" <<'EOF'
import nbd, sys
h = nbd.NBD(); h.connect_unix(sys.argv[1])
d = open(sys.argv[2], "rb").read()
assert h.pread(len(d), 12345 * 4096) == d
assert h.pread(4096, 0) == bytes(4096)
h.shutdown()
EOF
then ok "data=file: data survives a restart with the snapshot"; else bad "data=file round trip"; fi
stop
[ ! -e "$T/fsnap.data" ] && ok "data=file snapshot has no .data sidecar" || bad "stray fsnap.data"

echo "# 3b. checkpoints: SIGKILL after a flushed write and GC; the next start has both"
STATS=$T/k.json
start k preset=tiny data="file:$T/kdisk.img" snapshot="$T/ksnap" checkpoint=0.2 stats="$STATS" || exit 1
if out=$($PY - "$SOCK" "$T/pattern" <<'EOF'
import nbd, random, sys
h = nbd.NBD(); h.connect_unix(sys.argv[1])
d = open(sys.argv[2], "rb").read()
h.pwrite(d, 777 * 4096); h.flush()
n = h.get_size() // 4096 - 1200  # random writes past the pattern: GC, erases
r = random.Random(5)
for i in range(30000):
    h.pwrite(r.randbytes(4096), (1200 + r.randrange(n)) * 4096)
EOF
); then :; else bad "checkpoint writes: $out"; fi
sleep 1.5 # several checkpoints after the last write
kill -KILL "$PID"
wait "$PID" 2>/dev/null
start k2 preset=tiny data="file:$T/kdisk.img" snapshot="$T/ksnap" stats="$STATS" || exit 1
if $PY - "$SOCK" "$T/pattern" <<'EOF'
import nbd, sys
h = nbd.NBD(); h.connect_unix(sys.argv[1])
d = open(sys.argv[2], "rb").read()
assert h.pread(len(d), 777 * 4096) == d
h.shutdown()
EOF
then ok "kill -9: the flushed data reads back after the restart"; else bad "kill -9: the flushed data is lost"; fi
check "kill -9: the restart resumed from a checkpoint with the wear" \
	"d['nbdkit']['snapshot_loaded'] and d['checkpoint_seq'] > 1 and d['erases'] > 0 and d['host_write_bytes'] >= 30000 * 4096"
echo "     checkpoint $(val "$STATS" 'd["checkpoint_seq"]'), erases $(val "$STATS" 'd["erases"]'), host bytes $(val "$STATS" 'd["host_write_bytes"]')"
stop

echo "# 4. data=none: metadata only, reads return zeroes"
STATS=$T/e.json
start e preset=tiny data=none stats="$STATS" || exit 1
if $PY "$CLIENT" zeros "$SOCK"; then ok "data=none reads return zeroes"; else bad "data=none"; fi
stop
check "data=none: the FTL still counts the writes, no data stored" \
	'd["host_write_bytes"] == 64 * 4096 and d["nbdkit"]["data_allocated_bytes"] == 0'

echo "# 5. bad parameters: nbdkit exits non-zero and names the parameter"
snap_sum=$(md5sum <"$T/snap")
# expect NAME PATTERN ARGS...
expect_fail()
{
	local name=$1 pat=$2 out rc
	shift 2
	out=$(timeout 20 nbdkit -f -U "$T/bad.sock" "$PLUGIN" "$@" 2>&1)
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && grep -q -- "$pat" <<<"$out"; then
		ok "$name -> exit $rc: $(head -1 <<<"$out")"
	else
		bad "$name: exit $rc, output: $out"
	fi
}
expect_fail "unknown key" "unknown parameter 'foo'" preset=tiny foo=bar
expect_fail "preset=nope" "preset=nope" preset=nope
if [ -z "${FEMU_GANDALF_PRESETS:-}" ]; then
	expect_fail "preset=nope names the directory searched (the source tree's)" \
		"unknown preset 'nope' (no nope.ini in [^,]*/hw/ftl/presets)" preset=nope
	dump=$(nbdkit --dump-plugin "$PLUGIN" 2>&1)
	grep -q "^femu_gandalf_preset_path=[^:]*/hw/ftl/presets$" <<<"$dump" &&
		grep -qx "femu_gandalf_preset_path_origin=build tree" <<<"$dump" &&
		ok "--dump-plugin: the build tree's plugin reads the source tree's presets" ||
		bad "--dump-plugin: $dump"
fi
expect_fail "set=pages_per_block=0" "pages_per_block=0" preset=tiny set=pages_per_block=0
expect_fail "set=nokey=1" "set=nokey=1" preset=tiny set=nokey=1
expect_fail "set=fdp=on (NBD carries no placement hint)" "fdp=on: NBD has no placement hints" \
	preset=tiny set=fdp=on
expect_fail "missing preset" "preset= is required" data=ram
expect_fail "data=disk" "data=disk" preset=tiny data=disk
expect_fail "latency=maybe" "latency=maybe" preset=tiny latency=maybe
expect_fail "non-empty data file without snapshot" "data=file:" preset=tiny data="file:$T/disk.img"
expect_fail "snapshot of another drive" "pe_cycles" preset=tiny set=pe_cycles=100 snapshot="$T/snap"
head -c 1000 "$T/snap" >"$T/trunc"
expect_fail "truncated snapshot" "snapshot=" preset=tiny data=none snapshot="$T/trunc"
expect_fail "checkpoint=soon" "checkpoint=soon: expected seconds" preset=tiny checkpoint=soon
expect_fail "checkpoint_flush=maybe" "checkpoint_flush=maybe" preset=tiny checkpoint_flush=maybe
# the snapshot is bound to its data (snap.data, data=ram): an older copy of the data is refused
if [ -f "$T/snap.data" ]; then
	touch -r "$T/snap.data" "$T/stamp"
	touch -d 2001-01-01 "$T/snap.data"
	expect_fail "data older than the checkpoint" "the state is newer than the data" preset=tiny snapshot="$T/snap"
	touch -r "$T/stamp" "$T/snap.data"
else
	bad "no snap.data beside the data=ram snapshot"
fi
[ "$(md5sum <"$T/snap")" = "$snap_sum" ] && ok "the failed starts left the snapshot untouched" ||
	bad "a failed start changed the snapshot"

echo "# 6. latency=on: QD1 4 KiB reads take at least tR + transfer; writes bound by tPROG"
t_read=$(sed -n 's/^t_read_us=//p' "$TINY")
mbps=$(sed -n 's/^channel_mbps=//p' "$TINY")
t_prog=$(sed -n 's/^t_prog_us=//p' "$TINY")
wbuf=$(sed -n 's/^write_buffer_pages=//p' "$TINY")
model=$($PY -c "print($t_read + 4096 / $mbps)")          # us: tR + 4 KiB over the channel
prog=$t_prog   # us per page program, one LUN: each page's transfer overlaps the program before it (cache program)
STATS=$T/off.json
start off preset=tiny latency=off stats="$STATS" || exit 1
off=$($PY "$CLIENT" latency "$SOCK") || bad "latency=off client"
stop
plugin_off=$(val "$STATS" 'd["nbdkit"]["requests"]["read"]["wall_ns_mean"] / 1e3')
STATS=$T/on.json
start on preset=tiny latency=on stats="$STATS" || exit 1
on=$($PY "$CLIENT" latency "$SOCK") || bad "latency=on client"
stop
j()
{
	echo "$1" | $PY -c "import json,sys; s=json.load(sys.stdin); print(round($2, 1))"
}
echo "     model 4 KiB read ${model} us; latency=off: client mean $(j "$off" 's["read_mean_us"]') us" \
	"(median $(j "$off" 's["read_median_us"]'), plugin-internal ${plugin_off%.*} us);" \
	"latency=on: client mean $(j "$on" 's["read_mean_us"]') us (median $(j "$on" 's["read_median_us"]'), min $(j "$on" 's["read_min_us"]'))"
check "latency=on: the FTL modelled each idle read as tR + transfer" \
	"abs(d['nbdkit']['requests']['read']['model_ns_mean'] / 1e3 - $model) < 0.5"
check "latency=on: plugin-internal read time >= model" \
	"d['nbdkit']['requests']['read']['wall_ns_mean'] / 1e3 >= $model"
echo "     plugin-internal read: model $(val "$STATS" 'd["nbdkit"]["requests"]["read"]["model_ns_mean"] / 1e3') us," \
	"served $(val "$STATS" 'round(d["nbdkit"]["requests"]["read"]["wall_ns_mean"] / 1e3, 1)') us;" \
	"sleep wake-up lateness $(val "$STATS" 'round(d["nbdkit"]["sleep_late_ns_mean"] / 1e3, 1)') us"
min_on=$(j "$on" 's["read_min_us"]')
$PY -c "import sys; sys.exit(not $min_on >= $model)" &&
	ok "latency=on: every client read took >= ${model} us (fastest ${min_on} us)" ||
	bad "latency=on: a read took ${min_on} us < model ${model} us"
# sequential QD16 writes: once the write buffer is full, one page program per 4 KiB write
wmin=$($PY -c "print(round((2048 - $wbuf) * $prog / 1e6, 3))")
wsec=$(echo "$on" | $PY -c 'import json,sys; print(round(json.load(sys.stdin)["seq_write_seconds"], 3))')
$PY -c "import sys; sys.exit(not $wsec >= 0.98 * $wmin)" &&
	ok "latency=on: 2048 sequential 4 KiB writes at QD16 took ${wsec} s >= program-bound ${wmin} s" ||
	bad "latency=on: writes took ${wsec} s < ${wmin} s"
echo "     latency=off: the same writes took $(echo "$off" | $PY -c 'import json,sys; print(round(json.load(sys.stdin)["seq_write_seconds"], 3))') s"

echo "# 7. hw/nbdkit/build.sh (the build without meson) makes a plugin that loads and refuses as this one"
if "$HERE/../hw/nbdkit/build.sh" "$T/dev" >"$T/build-sh.log" 2>&1 &&
	nbdkit --dump-plugin "$T/dev/nbdkit-femu-gandalf-plugin.so" >"$T/dump.log" 2>&1 &&
	grep -q '^femu_gandalf_preset_path=' "$T/dump.log"; then
	out=$(nbdkit "$T/dev/nbdkit-femu-gandalf-plugin.so" preset=tiny set=foo 2>&1)
	if grep -q 'set=foo: expected key=value' <<<"$out"; then ok "build.sh: loads, and names set=foo"
	else bad "build.sh's plugin: $out"; fi
else
	bad "hw/nbdkit/build.sh: $(tail -3 "$T/build-sh.log" "$T/dump.log" 2>/dev/null)"
fi

if [ $fails -ne 0 ]; then
	echo "test_nbdkit: $fails FAILED"
	for f in "$T"/*.log; do echo "--- $f"; cat "$f"; done
	exit 1
fi
echo "test_nbdkit: all passed"
