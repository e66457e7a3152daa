# vmlib.sh - what the VM tests (test_vm.sh, test_qemu_ftl.sh) share. Source it after setting
# ROOT (the source tree); boot() needs T (the test's temporary directory) when it runs.
# It sets BUILD (FG_BUILD, exported), BOOT, ACCEL (FG_TEST_ACCEL, default tcg) and FG.
BUILD=${FG_BUILD:-$ROOT/build}
export FG_BUILD=$BUILD
BOOT=$ROOT/scripts/boot-vm
ACCEL=${FG_TEST_ACCEL:-tcg}
FG=$BUILD/femu-gandalf
# shellcheck source=testlib.sh
. "$(dirname "${BASH_SOURCE[0]}")/testlib.sh"

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
# check NAME PYTHON FILES...: J = the JSON FILES, loaded; PYTHON sets msg and ok
check() {
	local name=$1 code=$2 out
	shift 2
	if out=$(python3 -c "import json, sys
J = [json.load(open(f)) for f in sys.argv[1:]]
$code
print(msg)
sys.exit(0 if ok else 1)" "$@" 2>&1); then pass "$name: $out"; else fail "$name: $out"; fi
}

# procs REGEX: "PID COMMAND LINE" of every process whose command line (arguments joined by
# spaces) matches REGEX, from /proc (a minimal Debian has no procps, so no pgrep)
procs() {
	local f c p
	for f in /proc/[0-9]*/cmdline; do
		p=${f#/proc/}
		p=${p%/cmdline}
		[ "$p" != $$ ] && [ "$p" != "$BASHPID" ] || continue
		c=$(tr '\0' ' ' 2>/dev/null <"$f") || continue
		[[ $c =~ $1 ]] && echo "$p $c"
	done
	return 0
}
