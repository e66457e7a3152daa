#!/bin/bash
# overhead.sh PLUGIN [PRESET] - QD1 4 KiB round trips through QEMU's NBD client (qemu-img bench)
# against `nbdkit memory` and the plugin with latency=off and latency=on; prints microseconds
# per request (best of 3 runs of 4000) and the plugin's own model/served times from its stats.
# The difference on - model - memory is the wake-up cost a delayed reply adds on this host.
set -euo pipefail
PLUGIN=$(realpath "${1:?usage: overhead.sh PLUGIN.so [PRESET]}")
PRESET=${2:-tiny}
T=$(mktemp -d)
trap 'kill $(cat "$T"/pid 2>/dev/null) 2>/dev/null; rm -rf "$T"' EXIT
U="nbd+unix:///?socket=$T/sock"
bench()
{
	local best=
	for _ in 1 2 3; do
		s=$(qemu-img bench -f raw -c 4000 -d 1 -s 4k -S 4k "$@" "$U" 2>&1 |
			sed -n 's/.*completed in \([0-9.]*\) seconds.*/\1/p')
		best=$(python3 -c "print(min(x for x in [$s, ${best:-1e9}]))")
	done
	python3 -c "print(round($best / 4000 * 1e6, 1))"
}
for mode in memory off on; do
	rm -f "$T/sock" "$T/pid"
	if [ $mode = memory ]; then
		nbdkit -U "$T/sock" -P "$T/pid" memory 64M
	else
		nbdkit -U "$T/sock" -P "$T/pid" "$PLUGIN" preset="$PRESET" latency=$mode \
			stats="$T/$mode.json"
	fi
	qemu-img bench -f raw -w -c 4000 -d 1 -s 4k -S 4k "$U" >/dev/null 2>&1 # map the blocks
	sleep 0.3
	w=$(bench -w)
	sleep 0.3
	r=$(bench)
	kill "$(cat "$T/pid")"
	sleep 0.5
	extra=
	[ $mode = memory ] || extra=$(python3 -c "
import json; d = json.load(open('$T/$mode.json'))['nbdkit']['requests']['read']
print('plugin: read model %.1f us, served %.1f us' % (d['model_ns_mean'] / 1e3, d['wall_ns_mean'] / 1e3))")
	printf '%-7s write %7s us  read %7s us  %s\n' "$mode" "$w" "$r" "$extra"
done
