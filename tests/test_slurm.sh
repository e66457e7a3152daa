#!/bin/bash
# test_slurm.sh - a sweep's jobs through a real Slurm (docs/sweep.md): a one-node cluster from
# Debian's slurm-wlm and munge is brought up on localhost in a temporary directory (its own
# munge key and socket, its own ports, nothing under /etc touched), the jobs of
# `kv --policy all` run as a job array (sbatch --array ... --wrap, exactly as `sweep
# --emit-jobs` prints it), and the merged table must equal the table of the same jobs run
# locally by xargs, byte for byte. Then the daemons are stopped and the directory removed.
# Skipped (77) only when not root: slurmd and munged start as root here.
# Usage: test_slurm.sh path/to/femu-gandalf (run from the source root: it reads traces/)
set -u
FG=${1:?usage: test_slurm.sh FEMU_GANDALF}
. "$(dirname "$0")/testlib.sh"
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: a one-node Slurm needs root (slurmd and munged start as root; run make check as root)"
	exit 77
fi
for p in munged munge slurmctld slurmd sbatch sinfo; do
	command -v $p >/dev/null || {
		echo "FAIL $p is missing: apt-get install -y slurm-wlm munge (make check as root installs them)"
		exit 1
	}
done

T=$(mktemp -d)
chmod 755 "$T"
pids=()
teardown() {
	local p
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap teardown EXIT

# two free TCP ports on localhost
port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 20000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo $p; return; }
	done
}
P1=$(port)
P2=$(port)
[ "$P2" != "$P1" ] || P2=$((P1 + 1))
H=$(uname -n)
H=${H%%.*}
NCPU=$(nproc)
mkdir -p "$T/state" "$T/spool"
head -c 1024 /dev/urandom >"$T/munge.key"
chmod 600 "$T/munge.key"
cat >"$T/slurm.conf" <<EOF
ClusterName=fgtest
SlurmctldHost=$H(127.0.0.1)
SlurmctldPort=$P1
SlurmdPort=$P2
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$T/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool
SlurmctldPidFile=$T/slurmctld.pid
SlurmdPidFile=$T/slurmd.pid
SlurmctldLogFile=$T/slurmctld.log
SlurmdLogFile=$T/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=$H NodeAddr=127.0.0.1 CPUs=$NCPU State=UNKNOWN
PartitionName=fg Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$T/slurm.conf

# --- bring it up ------------------------------------------------------------------------------
munged -F -f -S "$T/munge.sock" --key-file="$T/munge.key" --pid-file="$T/munged.pid" \
	--seed-file="$T/munged.seed" --log-file="$T/munged.log" >"$T/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$T/munge.sock" ] && break; sleep 0.2; done
if munge -S "$T/munge.sock" -n | unmunge -S "$T/munge.sock" >/dev/null 2>&1; then
	pass "munged: a credential made and checked on $T/munge.sock"
else
	fail "munged did not start: $(tail -n 5 "$T/munged.out")"
	exit 1
fi
slurmctld -D -f "$SLURM_CONF" >"$T/slurmctld.out" 2>&1 &
pids+=($!)
# slurmd 22.05 initialises its cgroup plugin even under proctrack/linuxproc, and stops when no
# cgroup file system is mounted (a chroot, such as fresh-debian12's). Give it one in a mount
# namespace of its own, which nothing outside sees: cgroup v2 where this process is only in
# v2, else (v1 or hybrid, where slurmd wants v1) a tmpfs with the name=systemd hierarchy.
SLURMD=(slurmd -D -f "$SLURM_CONF" -N "$H")
if ! mountpoint -q /sys/fs/cgroup; then
	cat >"$T/cgroup-ns.sh" <<'EOF'
set -e
mount --make-rprivate /sys
if grep -q '^0::' /proc/self/cgroup && ! grep -qv '^0::' /proc/self/cgroup; then
	mount -t cgroup2 none /sys/fs/cgroup
else
	mount -t tmpfs none /sys/fs/cgroup
	mkdir /sys/fs/cgroup/systemd
	mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
fi
exec "$@"
EOF
	SLURMD=(unshare -m --propagation unchanged sh "$T/cgroup-ns.sh" "${SLURMD[@]}")
fi
"${SLURMD[@]}" >"$T/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 60); do
	state=$(sinfo -h -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	sleep 0.5
done
if [ "$state" = idle ]; then
	pass "one-node Slurm up: node $H idle with $NCPU CPUs (ports $P1, $P2)"
else
	fail "Slurm did not come up (node state '$state'): $(tail -n 3 "$T/slurmctld.out" "$T/slurmd.out" "$T/slurmctld.log" "$T/slurmd.log" 2>&1)"
	exit 1
fi

# --- the same jobs through Slurm and through xargs ----------------------------------------------
KV=(--trace traces/multiturn-small.jsonl --model qwen3-next-80b-a3b --dram 1G --ssd 190M
	--device tiny --set blocks_per_plane=1024 --policy all)
"$FG" sweep --emit-jobs "$T/slurm" "${KV[@]}" >/dev/null 2>"$T/emit.err" || fail "emit: $(cat "$T/emit.err")"
"$FG" sweep --emit-jobs "$T/local" "${KV[@]}" >/dev/null 2>&1 || fail "emit (local)"
n=$(wc -l <"$T/slurm/jobs.txt")
# the sbatch line as sweep printed it, run with --wait (and a time limit on the wait)
line=$(grep -o "sbatch --array=.*" "$T/emit.err")
t0=$SECONDS
if eval "timeout 400 ${line/sbatch /sbatch --wait --quiet }" >"$T/sbatch.out" 2>&1; then
	pass "sbatch --array=1-$n: the array finished in $((SECONDS - t0)) s"
else
	fail "sbatch: $(cat "$T/sbatch.out"; tail -n 5 "$T/slurmctld.log")"
fi
logs=$(ls "$T/slurm/logs" | wc -l)
[ "$logs" -eq "$n" ] && pass "Slurm ran every task: $logs task logs (logs/%a.out)" ||
	fail "$logs task logs for $n jobs"
xargs -d '\n' -P 2 -I{} sh -c {} <"$T/local/jobs.txt" 2>"$T/xargs.err" || fail "xargs: $(head -3 "$T/xargs.err")"
"$FG" sweep --merge "$T/slurm" --output "$T/slurm.csv" 2>"$T/m1.err" || fail "merge (Slurm): $(cat "$T/m1.err")"
"$FG" sweep --merge "$T/local" --output "$T/local.csv" 2>"$T/m2.err" || fail "merge (local): $(cat "$T/m2.err")"
rows=$(($(wc -l <"$T/slurm.csv" 2>/dev/null || echo 1) - 1))
if [ "$rows" -eq "$n" ] && cmp -s "$T/slurm.csv" "$T/local.csv"; then
	pass "the Slurm array's merged table equals the local run's, byte for byte ($rows rows)"
else
	fail "Slurm and local tables differ ($rows rows): $(diff "$T/slurm.csv" "$T/local.csv" | head -5)"
fi

# --- tear it down -----------------------------------------------------------------------------
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
left=0
for p in "${pids[@]}"; do
	for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
	! kill -0 "$p" 2>/dev/null || left=$((left + 1))
done
[ $left -eq 0 ] && pass "torn down: slurmd, slurmctld and munged stopped" || fail "$left daemon(s) still running"

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
