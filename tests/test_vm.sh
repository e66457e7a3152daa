#!/bin/bash
# test_vm.sh - VM smoke test: scripts/mkguest + scripts/boot-vm under TCG.
#
#  1. boot on `nbdkit memory 256M`: the guest sees a 256 MiB /dev/nvme0n1 and fio 4 KiB random
#     writes (libaio, QD16, direct) with verify=crc32c pass; the command's exit status comes back;
#  2. when build/nbdkit-femu-gandalf-plugin.so exists: the same on preset tiny, twice the user
#     capacity (a sequential fill, then a random overwrite pass, each verified) so GC runs,
#     fio's JSON brought out through --share; the host stats show
#     host_write_bytes == fio's bytes written, erases > 0 and WAF > 1;
#  3. clear errors without booting: missing kernel, busy socket, QEMU 7.x, bad plugin parameter.
#
# Usage: test_vm.sh [SOURCE_ROOT]      (default: the directory above this script)
# Exit 77 (skipped, for meson) when qemu-system-x86_64 or nbdkit is not installed.
# FG_TEST_ACCEL=auto lets boot-vm use KVM when it works (default tcg).
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
BUILD=${FG_BUILD:-$ROOT/build}
export FG_BUILD=$BUILD
BOOT=$ROOT/scripts/boot-vm
ACCEL=${FG_TEST_ACCEL:-tcg}

if ! command -v qemu-system-x86_64 >/dev/null; then
	echo "SKIP: qemu-system-x86_64 is not installed (apt-get install -t bookworm-backports qemu-system-x86)"
	exit 77
fi
if ! command -v nbdkit >/dev/null; then
	echo "SKIP: nbdkit is not installed (apt-get install nbdkit)"
	exit 77
fi

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TMPDIR=$T   # boot-vm's private directories go under $T (checked for leaks at the end)
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }
# boot NAME ARGS...: run boot-vm, output in $T/NAME.out, status in $rc
boot() {
	local name=$1 t0
	shift
	t0=$(date +%s)
	"$BOOT" --accel "$ACCEL" --timeout 300 "$@" >"$T/$name.out" 2>&1
	rc=$?
	echo "     ($name: exit $rc, $(($(date +%s) - t0)) s)"
}
show() { sed 's/^/     | /' "$T/$1.out" | tail -"${2:-25}"; }

t0=$(date +%s)
if ! "$ROOT/scripts/mkguest" >"$T/mkguest.out" 2>&1; then
	cat "$T/mkguest.out"
	echo "FAIL scripts/mkguest"
	exit 1
fi
pass "mkguest ($(($(date +%s) - t0)) s, $(du -h "$BUILD/guest/initramfs.img" | cut -f1) initramfs)"

FIO="fio --name=w --filename=/dev/nvme0n1 --bs=4k --direct=1 --verify=crc32c \
--iodepth=16 --ioengine=libaio --eta=never"

# --- 1. nbdkit memory --------------------------------------------------------------------
boot mem --memory-disk 256M -- sh -c "$FIO --rw=randwrite --size=64M; st=\$?; echo fio-status \$st; exit \$st"
if [ $rc -eq 0 ] && grep -q '^FG-GUEST-DEVICE: /dev/nvme0n1 268435456 bytes' "$T/mem.out" &&
	grep -q 'err= 0' "$T/mem.out" && grep -q '^fio-status 0' "$T/mem.out"; then
	pass "nbdkit memory 256M: device seen, fio randwrite 64 MiB + crc32c verify ($(grep -o 'write: IOPS=[^,]*' "$T/mem.out"))"
else
	fail "nbdkit memory 256M: exit $rc"
	show mem
fi

# the guest command's exit status comes back
boot status --memory-disk 16M -- sh -c 'exit 7'
[ $rc -eq 7 ] && pass "guest exit status 7 returned" || { fail "guest exit status: got $rc, want 7"; show status; }

# --- 2. the femu-gandalf plugin ----------------------------------------------------------
PLUGIN=${FG_NBDKIT_PLUGIN:-$BUILD/nbdkit-femu-gandalf-plugin.so}
if [ -f "$PLUGIN" ]; then
	mkdir -p "$T/share"
	boot plugin --preset tiny --stats "$T/stats.json" --share "$T/share" -- \
		sh -c "$FIO --rw=write --size=100% --output-format=json --output=fio1.json &&
			$FIO --rw=randwrite --randrepeat=0 --size=100% --output-format=json --output=fio2.json; st=\$?; echo fio-status \$st; exit \$st"
	if [ $rc -eq 0 ] && grep -q '^FG-GUEST-DEVICE: /dev/nvme0n1 ' "$T/plugin.out" && [ -s "$T/share/fio2.json" ] &&
		[ -s "$T/stats.json" ]; then
		if out=$(python3 - "$T/share/fio1.json" "$T/share/fio2.json" "$T/stats.json" <<'EOF'
import json, sys
jobs = [json.load(open(f))["jobs"][0] for f in sys.argv[1:3]]
st = json.load(open(sys.argv[3]))
wrote = sum(j["write"]["io_bytes"] for j in jobs)
errs = sum(j["error"] for j in jobs)
msg = "fio wrote %d B, FTL host_write_bytes %d, erases %d, WAF %.3f, %d IOPS" % (
    wrote, st["host_write_bytes"], st["erases"], st["waf_cumulative"], jobs[1]["write"]["iops"])
ok = errs == 0 and wrote == st["host_write_bytes"] and wrote >= 2 * st["user_bytes"] \
    and st["erases"] > 0 and st["waf_cumulative"] > 1
print(msg)
sys.exit(0 if ok else 1)
EOF
		); then
			pass "plugin preset tiny: fill + random overwrite, verified; $out"
		else
			fail "plugin preset tiny: $out"
		fi
	else
		fail "plugin preset tiny: exit $rc, fio2.json $([ -s "$T/share/fio2.json" ] && echo present || echo missing), stats $([ -s "$T/stats.json" ] && echo present || echo missing)"
		show plugin
	fi
else
	echo "skip plugin boot: $PLUGIN not built"
fi

# --- 3. clear errors (no boot) -------------------------------------------------------------
# expect NAME PATTERN ARGS...: boot-vm exits 125 with PATTERN on stderr
expect() {
	local name=$1 pat=$2 out r
	shift 2
	out=$("$@" 2>&1)
	r=$?
	if [ $r -eq 125 ] && grep -q -- "$pat" <<<"$out"; then pass "$name"; else fail "$name: exit $r: $out"; fi
}
expect "missing kernel" "run scripts/mkguest" env FG_GUEST_DIR="$T/none" "$BOOT" --memory-disk 16M -- true
printf '#!/bin/sh\necho "QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u12)"\n' >"$T/qemu7"
chmod +x "$T/qemu7"
expect "QEMU 7.x refused" "stalls under random I/O" env FG_QEMU="$T/qemu7" "$BOOT" --memory-disk 16M -- true
nbdkit --foreground --unix "$T/busy.sock" memory 1M 2>/dev/null &
npid=$!
for _ in $(seq 50); do [ -S "$T/busy.sock" ] && break; sleep 0.1; done
expect "busy socket" "is busy" "$BOOT" --memory-disk 16M --socket "$T/busy.sock" -- true
kill $npid
wait $npid 2>/dev/null
if [ -f "$PLUGIN" ]; then
	expect "bad preset" "unknown preset" "$BOOT" --preset no-such-preset -- true
	expect "bad --set" "unknown config key" "$BOOT" --preset tiny --set bogus=1 -- true
fi
expect "unknown option" "unknown option" "$BOOT" --frob -- true

leak=$(pgrep -a -f "$T/fg-vm\." | grep -E 'qemu-system|nbdkit' || true)
[ -z "$leak" ] && pass "no qemu/nbdkit left running" || fail "processes left: $leak"

[ $fails -eq 0 ] && echo "test_vm: all passed" || echo "test_vm: $fails failed"
exit $((fails > 0))
