#!/bin/bash
# test_qemu_ftl.sh - the FTL inside QEMU's NVMe device (docs/vm.md), under TCG:
#
#  0. bad properties and files are refused by QEMU at start, with a message naming the property
#     (unknown preset, bad ftl-set, namespace larger than the drive, a snapshot of another
#     geometry, a data file older than the checkpoint, a corrupted snapshot);
#  1. aged drive: a tiny drive aged on the host to about half its rated P/E (femu-gandalf ssd
#     --save-snapshot); the guest's nvme smart-log shows Percentage Used within 1 of the host's;
#  2. wear in the guest: a verified fill and random overwrite (GC runs); the WAF the guest
#     computes from the OCP C0h log (NAND bytes) and the SMART log (data units) equals the
#     host stats' WAF to 3 decimals; fio verify=crc32c passes (data integrity);
#  3. end of life: a drive rated for 30 P/E cycles written until it goes read-only: the guest
#     sees critical warning 0x8 (read-only) in its SMART log and a SMART asynchronous event, a
#     write fails with Namespace Is Write Protected (sc 0x20), and data written before still
#     verifies;
#  4. crash, on each device path (this one, then the nbdkit plugin): three rounds of fio
#     writing, each killed with SIGKILL (QEMU, or nbdkit) at a random point during writes after
#     a flushed region; after each, the checkpoint loads, ftl_check passes, erase counts never
#     go backwards, and the next boot verifies every region flushed before the kills; with
#     checkpoints at flush only, the state saved before a kill holds exactly the bytes flushed;
#  5. latency: QD1 4 KiB random reads at tiny's own tR, guest mean against the model's mean,
#     for this path and the nbdkit path side by side; neither path completes a read before the
#     model's time (which path is closer is reported, not asserted: under TCG one boot's mean
#     moves by 30-70 us from the next, more than the difference between the paths);
#  6. QEMU's own NVMe qtests (qos-test) pass on the patched build with the FTL off and on;
#  7. FDP (boot-vm --fdp 2, docs/vm.md): refused where it cannot work (ftl-set=fdp=on without an
#     FDP subsystem, fdp.nrg=2, the nbdkit path); the guest's `nvme fdp configs` shows the FTL's
#     reclaim unit and handle type; fio writes through /dev/ng0n1 (io_uring_cmd) with placement
#     IDs by LBA range (dp_scheme: the hot 5% of the space, which takes 95% of the random writes,
#     on one ID, the rest on another), after a sequential fill the same way; the guest's `nvme
#     fdp stats` (HBMW, MBMW, MBE) equal the host's stats JSON to the byte; its host events hold
#     the invalid placement ID and the RU `nvme fdp update` closed; and the WAF with two IDs is
#     below the WAF with one (all data on ID 0) by the in-process amount (`ssd --zone-streams`):
#     each guest WAF within 0.03 of the in-process one, the gain within 25% of it (fio's random
#     offsets are not ours: measured 0.006-0.011 apart, gain 3% apart); and the KV store
#     through passthrough (`kv --target /dev/ng0n1 --streams kind`): chunks and states on
#     placement IDs 1 and 2, checkpoints on none, the FTL's per-handle host bytes exactly those,
#     the store's record lifted exactly with its IDs per kind.
#
# Usage: test_qemu_ftl.sh [SOURCE_ROOT]. Exit 77 (skipped) when our QEMU is not built
# (scripts/build-qemu) or nbdkit is missing. FG_TEST_ACCEL=auto lets boot-vm use KVM.
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
. "$ROOT/tests/vmlib.sh"

if ! QEMU=$("$ROOT/scripts/build-qemu" --print-path 2>/dev/null); then
	echo "SKIP: our QEMU is not built (scripts/build-qemu; make check builds it)"
	exit 77
fi
if ! command -v nbdkit >/dev/null; then
	echo "SKIP: nbdkit is not installed (apt-get install nbdkit)"
	exit 77
fi
export FG_QEMU=$QEMU

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export TMPDIR=$T
"$ROOT/scripts/mkguest" >"$T/mkguest.out" 2>&1 || { cat "$T/mkguest.out"; echo "FAIL scripts/mkguest"; exit 1; }
QDEV=(--device qemu-ftl)

# --- 0. refused at start ---------------------------------------------------------------------
# qstart NAME PATTERN IMAGE DEVICE-PROPS: QEMU exits 1 at once with PATTERN in its message
qstart() {
	local name=$1 pat=$2 img=$3 props=$4 out rc
	out=$(timeout 60 "$QEMU" -M q35 -nodefaults -display none -monitor none -serial none -S \
		-drive "file=$img,if=none,id=nvm,format=raw" -device "nvme,drive=nvm,serial=t,$props" 2>&1)
	rc=$?
	if [ $rc -eq 1 ] && grep -q -- "$pat" <<<"$out"; then pass "refused: $name: $(tail -1 <<<"$out" | cut -c1-160)"
	else fail "$name: exit $rc, want 1 and '$pat': $out"; fi
}
truncate -s 53686272 "$T/tiny.img"
truncate -s 64M "$T/big.img"
qstart "unknown preset" "ftl-preset=nope: unknown preset 'nope'" "$T/tiny.img" ftl-preset=nope
qstart "ftl-set not key=value" "ftl-set=foo: expected key=value" "$T/tiny.img" ftl-preset=tiny,ftl-set=foo
qstart "ftl-set bad value" "ftl-set=pages_per_block=x: " "$T/tiny.img" ftl-preset=tiny,ftl-set=pages_per_block=x
qstart "ftl-stats alone" "ftl-stats: needs ftl-preset or ftl-snapshot" "$T/tiny.img" ftl-stats=$T/s.json
qstart "namespace larger than the drive" "the drive holds 53686272 bytes, the namespace 67108864" "$T/big.img" ftl-preset=tiny
"$FG" ssd --preset tiny --writes 2 --save-snapshot "$T/host.snap" --json >/dev/null
qstart "snapshot of another geometry" "the snapshot's drive has blocks_per_plane=256, this run asks for blocks_per_plane=512" \
	"$T/tiny.img" "ftl-preset=tiny,ftl-set=blocks_per_plane=512,ftl-snapshot=$T/host.snap"
cp "$T/host.snap" "$T/bad.snap"
printf 'X' | dd of="$T/bad.snap" bs=1 seek=5000 conv=notrunc status=none
qstart "corrupted snapshot" "ftl-snapshot=$T/bad.snap: .*checksum mismatch" "$T/tiny.img" "ftl-snapshot=$T/bad.snap"

# --- 1. aged drive: Percentage Used ----------------------------------------------------------
"$FG" ssd --preset tiny --set pe_cycles=200 --precondition --writes 44 --save-snapshot "$T/aged.snap" \
	--json >"$T/aged.json"
boot aged "${QDEV[@]}" --snapshot "$T/aged.snap" --data "file:$T/aged.img" --stats "$T/aged-stats.json" \
	-- nvme smart-log /dev/nvme0
guest_pct=$(sed -n 's/^percentage_used[^:]*: *\([0-9]*\)%.*/\1/p' "$T/aged.out")
check "aged drive: guest Percentage Used ${guest_pct:-?}% against the host's" "
h = J[0]['smart']['percentage_used']; g = int('${guest_pct:-0}' or 0)
msg = 'host %d%%, guest %d%% (rated 200 P/E, mean erase count %.1f)' % (h, g, J[0]['erase_count']['mean'])
ok = $rc == 0 and '${guest_pct}' != '' and 40 <= h <= 60 and abs(g - h) <= 1" "$T/aged.json"

# --- 2. wear in the guest: WAF from C0h and 02h; fio verify ----------------------------------
FIO="fio --name=w --filename=/dev/nvme0n1 --bs=4k --direct=1 --verify=crc32c --iodepth=16 --ioengine=libaio --eta=never"
# the total written is made a multiple of 512,000 bytes (125 units of 4 KiB), so the SMART data
# units (of 512,000 bytes, rounded up) hold the host bytes exactly
boot wear "${QDEV[@]}" --preset tiny --stats "$T/wear.json" -- sh -c "
	$FIO --rw=write --size=100% && $FIO --rw=randwrite --randseed=7 --size=100% || exit 3
	n=\$((\$(blockdev --getsize64 /dev/nvme0n1) / 4096)); pad=\$(( (125 - (2 * n) % 125) % 125 ))
	[ \$pad -eq 0 ] || dd if=/dev/urandom of=/dev/nvme0n1 bs=4096 count=\$pad oflag=direct 2>/dev/null
	sync; nvme flush /dev/nvme0 -n 1 >/dev/null
	du=\$(nvme smart-log /dev/nvme0 | sed -n 's/^Data Units Written[^:]*: *\([0-9,]*\) .*/\1/p' | tr -d ,)
	nand=\$(nvme ocp smart-add-log /dev/nvme0 | sed -n 's/.*Physical media units written -[[:space:]]*\([0-9]*\)[[:space:]]*\([0-9]*\).*/\1 \2/p')
	echo GUEST-WEAR du=\$du nand=\$nand"
line=$(grep '^GUEST-WEAR' "$T/wear.out")
du=$(sed -n 's/.*du=\([0-9]*\).*/\1/p' <<<"$line")
nand_hi=$(sed -n 's/.*nand=\([0-9]*\) \([0-9]*\).*/\1/p' <<<"$line")
nand_lo=$(sed -n 's/.*nand=\([0-9]*\) \([0-9]*\).*/\2/p' <<<"$line")
[ $rc -eq 0 ] && [ -n "$du" ] && grep -q 'err= 0' "$T/wear.out" || { fail "wear: exit $rc"; show wear; }
check "guest WAF from C0h and 02h against the host stats" "
s = J[0]; du = int('${du:-0}' or 0); nand = (int('${nand_hi:-0}' or 0) << 64) + int('${nand_lo:-0}' or 0)
g = nand / (du * 512000.0) if du else 0
msg = 'guest %.4f (C0h %d B / 02h %d units), host %.4f (%d / %d B), %d erases' % (
    g, nand, du, s['waf_cumulative'], s['nand_write_bytes'], s['host_write_bytes'], s['erases'])
ok = du * 512000 == s['host_write_bytes'] and nand == s['nand_write_bytes'] and s['erases'] > 0 \
    and s['waf_cumulative'] > 1 and round(g, 3) == round(s['waf_cumulative'], 3)" "$T/wear.json"

# --- 3. end of life -------------------------------------------------------------------------
# (the guest enables the SMART critical-warning events, which Linux leaves off, and traces the
# asynchronous events it receives; long options: nvme-cli 2.13 took -v for --verbose, and its
# set-feature then wrote 0)
boot eol "${QDEV[@]}" --preset tiny --set pe_cycles=30 --stats "$T/eol.json" -- sh -c "
	tr=/sys/kernel/tracing; [ -d \$tr/events ] || tr=/sys/kernel/debug/tracing
	echo 1 >\$tr/events/nvme/nvme_async_event/enable
	nvme set-feature /dev/nvme0 --feature-id=0x0b --value=0x1f >/dev/null
	$FIO --rw=write --size=8M --do_verify=0 || exit 3
	fio --name=burn --filename=/dev/nvme0n1 --offset=8M --rw=randwrite --bs=64k --direct=1 \
		--ioengine=libaio --iodepth=8 --time_based --runtime=900 --eta=never >/dev/null 2>&1
	echo GUEST-BURN-DONE \$?
	nvme smart-log /dev/nvme0 | grep -i 'critical_warning'
	dd if=/dev/zero of=/dev/nvme0n1 bs=4096 count=1 seek=4000 oflag=direct 2>&1; echo GUEST-DD \$?
	dmesg | grep -i 'nvme0n1' | grep -i 'write' | tail -2
	$FIO --rw=write --size=8M --verify_only; echo GUEST-VERIFY \$?
	grep -m1 'nvme_async_event' \$tr/trace"
cw=$(sed -n 's/^critical_warning[^:]*: *\(0x[0-9a-f]*\).*/\1/p' "$T/eol.out")
if [ $rc -eq 0 ] && grep -q '^GUEST-VERIFY 0' "$T/eol.out" && ! grep -q '^GUEST-DD 0' "$T/eol.out" &&
	[ -n "$cw" ] && [ $((cw & 0x8)) -ne 0 ] && grep -qiE 'sc 0x20|write protect' "$T/eol.out" &&
	grep -q 'nvme_async_event: .*NVME_AER_SMART' "$T/eol.out"; then
	pass "end of life: critical_warning $cw, the SMART AER came ($(grep -m1 -o 'NVME_AEN=[0-9a-fx]* \[NVME_AER_SMART\]' "$T/eol.out")), the write fails ($(grep -m1 -ioE 'Namespace Is Write Protected[^)]*\)|sc 0x20' "$T/eol.out")), the data written before verifies"
else
	fail "end of life: exit $rc, critical_warning ${cw:-?}"
	show eol 30
fi
check "end of life: the host stats say read-only" "
s = J[0]; msg = 'read_only %s, %d retired blocks, %d erases' % (s['read_only'], s['retired_blocks'], s['erases'])
ok = s['read_only'] is True" "$T/eol.json"

# --- 4. crash: kill -9 three times on each path ------------------------------------------------
# Round k verifies the regions 1..k-1 (4 MiB each, flushed in earlier rounds), writes region k
# and flushes it, then writes at random past them until the host kills the device process.
kill_device() { # kill_device PATH SNAPSHOT: SIGKILL QEMU (qemu-ftl) or nbdkit; its pid, or nothing
	local re pid
	if [ "$1" = qemu-ftl ]; then re="^$QEMU .*ftl-snapshot=$2"; else re="^nbdkit .*snapshot=$2"; fi
	pid=$(procs "$re" | head -1 | cut -d' ' -f1)
	[ -z "$pid" ] || kill -KILL "$pid"
	echo "$pid"
}
crash_round() { # crash_round PATH K: one round; sets rc
	local path=$1 k=$2 dargs=() pid='' i
	if [ "$path" = qemu-ftl ]; then dargs=(--device qemu-ftl --device-arg ftl-checkpoint=1)
	else dargs=(--plugin-arg checkpoint=1); fi
	"$BOOT" --accel "$ACCEL" --timeout 300 --preset tiny "${dargs[@]}" --snapshot "$T/c-$path.snap" \
		--data "file:$T/c-$path.img" --stats "$T/c-$path.json" -- sh -c "
		i=1; while [ \$i -lt $k ]; do
			$FIO --rw=write --offset=\$(((i - 1) * 4))M --size=4M --verify_only >/dev/null || { echo GUEST-BAD \$i; exit 3; }
			i=\$((i + 1)); done
		echo GUEST-VERIFIED \$(($k - 1))
		[ $k -le 3 ] || exit 0
		$FIO --rw=write --offset=$(((k - 1) * 4))M --size=4M --do_verify=0 --end_fsync=1 >/dev/null || exit 4
		echo GUEST-FLUSHED $k
		fio --name=r --filename=/dev/nvme0n1 --offset=16M --rw=randwrite --bs=4k --direct=1 \
			--ioengine=libaio --iodepth=16 --time_based --runtime=600 --eta=never >/dev/null 2>&1
		exit 0" >"$T/crash-$path-$k.out" 2>&1 &
	local boot_pid=$!
	[ "$k" -le 3 ] || { wait $boot_pid; rc=$?; return; }
	# (until the region is flushed, or the device's boot has ended without it: a failed start
	# fails the round at once, not after 300 s, and the test stays inside its time limit)
	for i in $(seq 1200); do
		grep -qs "^GUEST-FLUSHED $k" "$T/crash-$path-$k.out" && break
		kill -0 $boot_pid 2>/dev/null || break
		sleep 0.25
	done
	sleep "$(awk -v s=$RANDOM 'BEGIN { srand(s); printf "%.2f", 2 + 5 * rand() }')"
	pid=$(kill_device "$path" "$T/c-$path.snap")
	sleep 1
	kill -TERM $boot_pid 2>/dev/null
	wait $boot_pid
	rc=$?
	grep -q "^GUEST-FLUSHED $k" "$T/crash-$path-$k.out" && [ -n "$pid" ] || rc=999
}
for path in qemu-ftl nbdkit; do
	prev=0
	for k in 1 2 3; do
		crash_round "$path" "$k"
		if [ $rc -eq 999 ]; then fail "crash $path round $k: no flushed region or no process to kill"; sed 's/^/     | /' "$T/crash-$path-$k.out" | tail -20; continue; fi
		chk=$("$FG" ssd --load-snapshot "$T/c-$path.snap" --writes 0 --check --json 2>&1)
		crc=$?
		er=$(sed -n 's/^ *"erases": \([0-9]*\),*$/\1/p' <<<"$chk" | head -1)
		if [ $crc -eq 0 ] && [ -n "$er" ] && [ "$er" -ge "$prev" ] && grep -q "^GUEST-VERIFIED $((k - 1))" "$T/crash-$path-$k.out"; then
			pass "crash $path round $k: killed during writes; regions 1..$((k - 1)) verified; the checkpoint loads, ftl_check passes, erases $prev -> $er"
		else
			fail "crash $path round $k: check exit $crc, erases ${er:-?} (before $prev)"
			sed 's/^/     | /' "$T/crash-$path-$k.out" | tail -15
			head -c 600 <<<"$chk"
		fi
		prev=${er:-0}
	done
	[ "$prev" -gt 0 ] && pass "crash $path: the wear of the killed runs is kept ($prev erases after three kills)" ||
		fail "crash $path: no erase recorded across the three killed runs"
	crash_round "$path" 4
	grep -q '^GUEST-VERIFIED 3' "$T/crash-$path-4.out" && [ $rc -eq 0 ] &&
		pass "crash $path: after three kills, all three flushed regions verify" ||
		{ fail "crash $path: final verification, exit $rc"; sed 's/^/     | /' "$T/crash-$path-4.out" | tail -15; }
done

# checkpoints at flush only (no period): 8 MiB written and flushed, then SIGKILL; the state
# saved holds exactly those bytes
for path in qemu-ftl nbdkit; do
	if [ "$path" = qemu-ftl ]; then
		dargs=(--device qemu-ftl --device-arg ftl-checkpoint=0 --device-arg ftl-checkpoint-flush=on)
	else
		dargs=(--plugin-arg checkpoint=0 --plugin-arg checkpoint_flush=on)
	fi
	"$BOOT" --accel "$ACCEL" --timeout 300 --preset tiny "${dargs[@]}" --snapshot "$T/f-$path.snap" \
		--data "file:$T/f-$path.img" -- sh -c "dd if=/dev/urandom of=/dev/nvme0n1 bs=1M count=8 oflag=direct 2>/dev/null &&
			nvme flush /dev/nvme0 -n 1 >/dev/null && echo GUEST-FLUSHED && sleep 600" >"$T/f-$path.out" 2>&1 &
	bp=$!
	for i in $(seq 1200); do grep -qs '^GUEST-FLUSHED' "$T/f-$path.out" && break; sleep 0.25; done
	sleep 2 # the checkpoint follows the flush within a tick
	pid=$(kill_device "$path" "$T/f-$path.snap")
	sleep 1
	kill -TERM $bp 2>/dev/null
	wait $bp
	hb=$("$FG" ssd --load-snapshot "$T/f-$path.snap" --writes 0 --json 2>&1 | sed -n 's/^ *"host_write_bytes": \([0-9]*\),*$/\1/p')
	[ -n "$pid" ] && [ "${hb:-0}" -eq $((8 << 20)) ] &&
		pass "checkpoint at flush ($path): killed after the flush, the state holds the 8 MiB written ($hb B)" ||
		{ fail "checkpoint at flush ($path): pid '${pid}', host_write_bytes ${hb:-none}, want $((8 << 20))"; tail -5 "$T/f-$path.out"; }
done

# a data file older than the state that describes it (restored from an older copy) is refused
cp "$T/c-qemu-ftl.img" "$T/stale.img"
touch -d 2001-01-01 "$T/stale.img"
qstart "data file older than its checkpoint" "the state is newer than the data" "$T/stale.img" \
	"ftl-snapshot=$T/c-qemu-ftl.snap"

# --- 5. latency: QD1 random reads against the model -----------------------------------------
"$FG" ssd --preset tiny --precondition --rw randread --iodepth 1 --runtime 0.5 --json >"$T/model.json"
READS="$FIO --rw=write --size=16M --do_verify=0 >/dev/null && fio --name=r --filename=/dev/nvme0n1 --size=16M \
--rw=randread --bs=4k --direct=1 --ioengine=psync --time_based --runtime=5 --output-format=json --output=/mnt/share/lat.json --eta=never"
mkdir -p "$T/lq" "$T/ln"
boot lat-q "${QDEV[@]}" --preset tiny --latency on --share "$T/lq" -- sh -c "$READS"
boot lat-n --preset tiny --latency on --share "$T/ln" -- sh -c "$READS"
check "latency, QD1 4 KiB random reads" '
m = J[0]["perf"]["lat_us"]["mean"]
q = J[1]["jobs"][0]["read"]["clat_ns"]["mean"] / 1000.0
n = J[2]["jobs"][0]["read"]["clat_ns"]["mean"] / 1000.0
pq = J[1]["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"] / 1000.0
pn = J[2]["jobs"][0]["read"]["clat_ns"]["percentile"]["50.000000"] / 1000.0
msg = "mean: model %.1f us; guest %.1f us in-device (+%.1f), %.1f us over nbdkit (+%.1f); median in-device %.1f, over nbdkit %.1f us" % (
    m, q, q - m, n, n - m, pq, pn)
msg += "; closer: %s" % ("in-device" if abs(q - m) < abs(n - m) else "nbdkit")
ok = q >= m * 0.99 and n >= m * 0.99' "$T/model.json" "$T/lq/lat.json" "$T/ln/lat.json"

# --- 6. QEMU's own NVMe qtests, FTL off and on -------------------------------------------------
QOS=$(dirname "$(dirname "$QEMU")")/b/tests/qtest/qos-test
if [ -x "$QOS" ]; then
	mkdir -p "$T/qw"
	# a QEMU whose nvme devices all get the FTL (the qtests' null-co drive is 1 GiB)
	cat >"$T/qw/qemu-system-x86_64" <<EOF
#!/bin/bash
a=()
for x in "\$@"; do case "\$x" in nvme,*) x="\$x,ftl-preset=tiny,ftl-set=blocks_per_plane=8192,ftl-latency=on,ftl-stats=$T/qt-stats.json" ;; esac; a+=("\$x"); done
exec "$QEMU" "\${a[@]}"
EOF
	chmod +x "$T/qw/qemu-system-x86_64"
	for mode in off on; do
		q=$QEMU
		[ $mode = off ] || q=$T/qw/qemu-system-x86_64
		n=0 bad=0
		# (-l prints one path per line; GLib 2.84 prefixes each with "# ")
		for p in $(QTEST_QEMU_BINARY=$q "$QOS" -l 2>/dev/null | grep -o '/[^ ]*/nvme/[^ ]*'); do
			n=$((n + 1))
			QTEST_QEMU_BINARY=$q timeout 300 "$QOS" -p "$p" >"$T/qt.out" 2>&1 && grep -q '^ok 1' "$T/qt.out" ||
				{ bad=$((bad + 1)); tail -5 "$T/qt.out"; }
		done
		if [ $mode = on ] && [ ! -s "$T/qt-stats.json" ]; then bad=$((bad + 1)); echo "     (no FTL stats: the FTL was not on)"; fi
		[ $n -ge 4 ] && [ $bad -eq 0 ] && pass "QEMU's NVMe qtests, FTL $mode: $n of $n pass" ||
			fail "QEMU's NVMe qtests, FTL $mode: $bad of $n failed"
	done
else
	echo "SKIP QEMU's qtests: $QOS is not built (scripts/build-qemu --qtests)"
fi

# --- 7. FDP: placement IDs from the guest to the FTL ------------------------------------------
out=$(timeout 60 "$QEMU" -M q35 -nodefaults -display none -monitor none -serial none -S \
	-drive "file=$T/tiny.img,if=none,id=nvm,format=raw" \
	-device nvme-subsys,id=s,fdp=on,fdp.nruh=2,fdp.nrg=2 \
	-device nvme,drive=nvm,serial=t,subsys=s,ftl-preset=tiny 2>&1)
[ $? -eq 1 ] && grep -q "fdp.nrg=2: the FTL has one reclaim group" <<<"$out" &&
	pass "refused: two reclaim groups: $(tail -1 <<<"$out" | cut -c1-140)" || fail "fdp.nrg=2: $out"
qstart "FDP without an FDP subsystem" "ftl-set=fdp=on: FDP is declared on the subsystem" "$T/tiny.img" \
	ftl-preset=tiny,ftl-set=fdp=on
"$BOOT" --preset tiny --fdp 2 -- true >"$T/fdp-nbd.out" 2>&1
rc=$?
[ $rc -eq 125 ] && grep -q "NBD carries no placement hint" "$T/fdp-nbd.out" &&
	pass "refused: boot-vm --fdp on the nbdkit path" || { fail "boot-vm --fdp on nbdkit: exit $rc"; show fdp-nbd; }

mkdir -p "$T/fdp"
cat >"$T/fdp/fdp.sh" <<'EOF'
# fdp.sh HOT COLD OUT: placement ID indices for the hot 5% and the cold 95% of the space
set -e
hot=$1 cold=$2 out=$3
mkdir -p "$out"
U=$(($(cat /sys/block/nvme0n1/size) * 512))
H=$((U / 20 / 4096 * 4096))
printf '0, %d, %d\n%d, %d, %d\n' "$H" "$hot" "$H" "$U" "$cold" >/tmp/scheme
F="--filename=/dev/ng0n1 --ioengine=io_uring_cmd --cmd_type=nvme --fdp=1 --plid_select=scheme --dp_scheme=/tmp/scheme"
for p in 0 1; do # host events: RU not fully written (0), invalid placement ID (3)
	nvme fdp set-events /dev/nvme0n1 --namespace-id=1 --placement-handle=$p --event-types=0,3 --enable
done
fio --name=fill $F --rw=write --bs=128k --iodepth=8 --loops=2 >"$out/fill.txt"
fio --name=skew $F --rw=randwrite --bs=4k --iodepth=16 --random_distribution=zoned:95/5:5/95 \
	--io_size=$((3 * U)) --randseed=7 >"$out/skew.txt"
head -c 4096 /dev/zero >/tmp/z
nvme write /dev/nvme0n1 --start-block=0 --block-count=7 --data-size=4096 --data=/tmp/z \
	--dir-type=2 --dir-spec=9
nvme fdp update /dev/nvme0n1 --namespace-id=1 --pids="$cold"
sync
nvme flush /dev/nvme0n1 # (the partly filled page programmed now, not at power-off)
nvme fdp configs /dev/nvme0 --endgrp-id=1 >"$out/configs.txt"
nvme fdp status /dev/nvme0n1 >"$out/status.txt"
nvme fdp events /dev/nvme0 --endgrp-id=1 --host-events -o json >"$out/events.json"
nvme fdp stats /dev/nvme0 --endgrp-id=1 -o json >"$out/stats.json"
EOF
for run in "sep 0 1" "one 0 0"; do
	set -- $run
	boot "fdp-$1" "${QDEV[@]}" --preset tiny --fdp 2 --share "$T/fdp" --stats "$T/fdp/$1-host.json" \
		-- sh /mnt/share/fdp.sh "$2" "$3" "/mnt/share/$1"
	[ $rc -eq 0 ] || { fail "fdp $1: exit $rc"; show "fdp-$1"; }
done
for zs in one sep; do # the in-process reference: zone i's writes on handle i, or all on 0
	"$FG" ssd --preset tiny --set fdp=on --set host_streams=2 --workload zoned:95/5:5/95 \
		$([ $zs = sep ] && echo --zone-streams) --precondition --writes 3 --json >"$T/fdp/$zs-inproc.json"
done
if out=$(python3 - "$T/fdp" <<'PY'
import json, re, sys
d = sys.argv[1]
L = lambda f: json.load(open("%s/%s" % (d, f)))
msgs, ok = [], True
txt = open(d + "/sep/configs.txt").read()
runs = int(re.search(r"Reclaim Unit Nominal Size: (\d+)", txt).group(1))
nruh = int(re.search(r"Number of Reclaim Unit Handles: (\d+)", txt).group(1))
host = {k: L(k + "-host.json")["fdp"] for k in ("sep", "one")}
ok &= runs == host["sep"]["reclaim_unit_bytes"] and nruh == 2 and txt.count("Initially Isolated") == 2
msgs.append("configs: %d initially isolated handles of %d-byte RUs" % (nruh, runs))
waf = {}
for k in ("sep", "one"):
    g, h = L(k + "/stats.json"), host[k]
    same = (g["hbmw"], g["mbmw"], g["mbe"]) == (h["hbmw_bytes"], h["mbmw_bytes"], h["mbe_bytes"])
    ok &= same and g["hbmw"] > 0
    waf[k] = g["mbmw"] / g["hbmw"]
    msgs.append("%s: guest HBMW/MBMW/MBE %d/%d/%d %s the host's" % (
        k, g["hbmw"], g["mbmw"], g["mbe"], "=" if same else "!="))
types = sorted((e["type"], e["pid"]) for e in L("sep/events.json")["events"])
ok &= (0, 1) in types and (3, 9) in types
msgs.append("host events (type, pid): %s" % types)
ip = {k: (lambda f: f["mbmw_bytes"] / f["hbmw_bytes"])(L(k + "-inproc.json")["fdp"])
      for k in ("sep", "one")}
gain, igain = waf["one"] - waf["sep"], ip["one"] - ip["sep"]
ok &= all(abs(waf[k] - ip[k]) <= 0.03 for k in waf) and igain > 0 and abs(gain - igain) <= 0.25 * igain
msgs.append("WAF one ID %.4f, two IDs %.4f (in process %.4f, %.4f): gain %.4f against %.4f" % (
    waf["one"], waf["sep"], ip["one"], ip["sep"], gain, igain))
print("; ".join(msgs))
sys.exit(0 if ok else 1)
PY
); then pass "FDP through the VM: $out"; else fail "FDP through the VM: $out"; fi

# the KV store through passthrough: kv --target /dev/ng0n1 --streams kind on three handles puts
# chunks on placement ID 1 and states on 2 (the device's non-zero IDs, first written first),
# the checkpoints on none (handle 0); the FTL's per-handle host bytes are exactly those, and the
# store's own record (which carries the IDs) lifts exactly
mkdir -p "$T/kvpt"
cp "$ROOT/traces/agentic-small.jsonl" "$T/kvpt/"
boot kvpt "${QDEV[@]}" --preset tiny --set blocks_per_plane=512 --fdp 3 --share "$T/kvpt" \
	--stats "$T/kvpt/host.json" -- sh -c 'femu-gandalf kv --trace agentic-small.jsonl \
	--model test-hybrid-256 --policy write-through --dram 0 --target /dev/ng0n1 --meta 2M \
	--streams kind --capture --record cap.csv --json >kv.json && nvme flush /dev/nvme0n1'
[ $rc -eq 0 ] || { fail "kv through passthrough: exit $rc"; show kvpt; }
"$FG" lift "$T/kvpt/cap.csv" --model test-hybrid-256 --out "$T/kvpt/lifted.jsonl" \
	--against "$T/kvpt/agentic-small.jsonl" --json >"$T/kvpt/lift.json" 2>"$T/kvpt/lift.err" ||
	fail "lift of the passthrough capture: $(cat "$T/kvpt/lift.err")"
check "kv through NVMe passthrough with placement IDs" '
k, h, l = J[0]["store"], J[1]["fdp"], J[2]
p, hb = k["placement"], {x["ruh"]: x["host_bytes"] for x in h["handles"]}
chunks = 3072 * (4096 + 16384)  # a put is its 4 KiB header and its payload, one ID for both
states = 92 * (4096 + 262144)
pl = {x["pid"]: (x["chunks"], x["states"]) for x in l["placement"]}
a = l["against"]
msg = ("classes -> IDs %s; handle bytes %s (chunks %d, states %d, checkpoints %d); lift: %s, "
       "%d of %d requests exact" % (p["class_pid"], hb, chunks, states, k["meta_write_bytes"], pl,
                                    a["exact"], a["original"]))
ok = (p["class_pid"] == [1, 2] and p["unplaced_puts"] == 0 and hb == {0: k["meta_write_bytes"],
      1: chunks, 2: states} and pl == {1: (3072, 0), 2: (0, 92)} and a["exact"] == a["original"]
      and a["chain_wrong"] == 0 and a["session_wrong"] == 0)' \
	"$T/kvpt/kv.json" "$T/kvpt/host.json" "$T/kvpt/lift.json"

leak=$(find "$T" -maxdepth 1 -name 'fg-vm.*' | wc -l)
[ "$leak" -eq 0 ] && pass "no boot-vm private directory left behind" || fail "$leak boot-vm private directories left"
echo "$fails failure(s)"
[ "$fails" -eq 0 ]
