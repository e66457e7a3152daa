# testlib.sh - what the shell tests share: pass/fail counting and expect. Source it after
# setting FG (the femu-gandalf binary); end with: echo "$fails failure(s)"; [ "$fails" -eq 0 ]
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# expect CODE "PATTERN" NAME -- ARGS...: femu-gandalf ARGS exits CODE, and its stdout+stderr
# matches PATTERN (grep; empty: anything)
expect() {
	local code=$1 pat=$2 name=$3
	shift 4
	local out rc
	out=$("$FG" "$@" 2>&1)
	rc=$?
	if [ "$rc" -ne "$code" ]; then
		fail "$name: exit $rc, want $code: $out"
	elif [ -n "$pat" ] && ! grep -q -- "$pat" <<<"$out"; then
		fail "$name: output lacks '$pat': $out"
	else
		pass "$name"
	fi
}
