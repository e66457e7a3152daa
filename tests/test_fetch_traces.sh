#!/bin/bash
# test_fetch_traces.sh - scripts/fetch-traces on a local mirror made from the project's copy of
# the traces (../shared/traces, or FG_SHARED_TRACES): the 145 files it holds are fetched with
# --mirror and --subset/--files, byte for byte; a second run fetches nothing; a corrupted mirror
# file is refused and leaves nothing behind; --check finds a changed or missing file; an
# unreachable server fails at once pointing to --mirror; files pinned only by their git blob id
# are verified by it; and the download path itself, through curl from a loopback HTTP server.
# Skipped (77) when the shared traces are absent. Usage: test_fetch_traces.sh SOURCE_ROOT
set -u
ROOT=${1:?usage: test_fetch_traces.sh SOURCE_ROOT}
ROOT=$(cd "$ROOT" && pwd)
FG=$ROOT/scripts/fetch-traces # expect (testlib.sh) runs $FG
MAN=$ROOT/scripts/traces.sha256
SH=${FG_SHARED_TRACES:-$ROOT/../shared/traces}
if [ ! -d "$SH/weka-claude-code" ] || [ ! -d "$SH/mooncake" ]; then
	echo "SKIP test_fetch_traces.sh: $SH (weka-claude-code/, mooncake/) not found: nothing to mirror"
	exit 77
fi
SH=$(cd "$SH" && pwd)
T=$(mktemp -d)
srv=
trap '[ -z "$srv" ] || kill "$srv" 2>/dev/null; rm -rf "$T"' EXIT
. "$ROOT/tests/testlib.sh"
# check NAME FAILURE COMMAND...: pass NAME when COMMAND succeeds, else fail with FAILURE
check() {
	local name=$1 why=$2
	shift 2
	if "$@"; then pass "$name"; else fail "$why"; fi
}

# ---- the manifest: 7 fields a line, one line per DEST, every file of both folders ----
if out=$(awk '!/^#/ && NF {
		n++; if (NF != 7) { print "line " NR ": " NF " fields"; bad = 1 }
		if (seen[$7]++) { print "DEST " $7 " twice"; bad = 1 }
		if ($6 == "LICENSE") lic++
		else if ($4 == "callanjfox/kv-cache-tester" && $6 ~ /^traces\/trace_[0-9]+\.json$/) w++
		else if ($4 == "kvcache-ai/Mooncake" && $6 ~ /^FAST25-release\/traces\/[a-z_]+\.jsonl$/) m++
		else { print "unexpected line " NR; bad = 1 }
	} END { printf "%d lines: %d WEKA + %d LICENSE, %d Mooncake\n", n, w, lic, m; exit bad }' "$MAN") &&
	[ "$out" = "743 lines: 739 WEKA + 1 LICENSE, 3 Mooncake" ]; then
	pass "manifest: $out"
else
	fail "manifest: $out"
fi

# ---- the mirror: DIR/OWNER/REPO/PATH, a symlink per file of $SH, named through the manifest ----
M=$T/mirror
: >"$T/list"
nf=0
for f in "$SH"/weka-claude-code/* "$SH"/mooncake/*; do
	name=${f#"$SH"/}
	line=$(awk -v d="$name" '!/^#/ && $7 == d' "$MAN")
	if [ -z "$line" ]; then
		fail "$name (in $SH) is not in the manifest"
		continue
	fi
	read -r _ _ _ repo _ path _ <<<"$line"
	mkdir -p "$(dirname "$M/$repo/$path")"
	ln -s "$f" "$M/$repo/$path"
	echo "$name" >>"$T/list"
	nf=$((nf + 1))
done
check "mirror of $SH: 145 files" "mirror of $SH: $nf files, want 145" [ $nf = 145 ]
if diff <(grep -v '^#' "$ROOT/scripts/traces.subset" | sort) <(sort "$T/list") >"$T/d"; then
	pass "scripts/traces.subset lists exactly the files of $SH"
else
	fail "scripts/traces.subset differs from $SH: $(head -5 "$T/d")"
fi

# same_tree DIR NAME: DIR holds exactly the files of the list, each identical to $SH's
same_tree() {
	local n=0 bad=0 name
	while read -r name; do
		cmp -s "$SH/$name" "$1/$name" || { bad=$((bad + 1)); [ $bad -gt 3 ] || echo "  differs: $name"; }
		n=$((n + 1))
	done <"$T/list"
	local files
	files=$(find "$1" -type f | wc -l)
	if [ $bad = 0 ] && [ "$files" = "$n" ]; then pass "$2: $n files identical to $SH, nothing else"
	else fail "$2: $bad of $n differ, $files files in $1"; fi
}

O=$T/out
expect 0 "145 files in $O: 145 fetched, 0 already present" "fetch from the mirror (--files)" -- \
	--dest "$O" --mirror "$M" --files "$T/list"
same_tree "$O" "the fetched tree"
expect 0 "145 files in $O: 0 fetched, 145 already present" "a second run fetches nothing" -- \
	--dest "$O" --mirror "$M" --subset
expect 0 "\[2/2\] present mooncake/synthetic_trace.jsonl" "--verbose: a line per file" -- \
	--dest "$O" --mirror "$M" --subset --only mooncake --verbose
expect 0 "check $O: all 145 files match the manifest" "--check --subset" -- --dest "$O" --subset --check
expect 1 "mooncake/toolagent_trace.jsonl: .*/toolagent_trace.jsonl is not in the mirror" "a file the mirror lacks is an error" -- \
	--dest "$O" --mirror "$M" --only mooncake
expect 1 "not in $MAN" "--files: a name not in the manifest" -- --dest "$O" --mirror "$M" --files <(echo mooncake/nope.jsonl)
expect 2 "--only moon: must be weka or mooncake" "bad --only" -- --dest "$O" --only moon
expect 2 "--mirror $T/none: no such directory" "missing --mirror" -- --dest "$O" --mirror "$T/none"

# ---- --check finds a changed file and a missing one; a fetch puts the pinned one back ----
w1=weka-claude-code/$(sed -n 2p "$T/list" | xargs basename)
printf ' ' >>"$O/$w1"
rm "$O/mooncake/synthetic_trace.jsonl"
expect 1 "$O/$w1: differs: expected sha256 $(sha256sum <"$SH/$w1" | cut -c1-64)" "--check: a changed file" -- \
	--dest "$O" --subset --check
expect 1 "$O/mooncake/synthetic_trace.jsonl: missing" "--check: a missing file" -- --dest "$O" --subset --check
expect 1 "2 of 145 files missing or different" "--check: the count" -- --dest "$O" --subset --check
expect 0 "145 files in $O: 2 fetched, 143 already present" "a fetch replaces the changed file" -- \
	--dest "$O" --mirror "$M" --subset
same_tree "$O" "the repaired tree"

# ---- a corrupted mirror file: refused, named with both checksums, nothing left behind ----
C=$T/corrupt
cp -r "$M" "$C"
s=$C/kvcache-ai/Mooncake/FAST25-release/traces/synthetic_trace.jsonl
rm "$s"
sed '1s/"timestamp": /"timestamp":  /' "$SH/mooncake/synthetic_trace.jsonl" >"$s"
want=$(sha256sum <"$SH/mooncake/synthetic_trace.jsonl" | cut -c1-64)
got=$(sha256sum <"$s" | cut -c1-64)
[ "$want" != "$got" ] || fail "the corrupted copy is the same"
O2=$T/out2
expect 1 "mooncake/synthetic_trace.jsonl: checksum mismatch, not written: expected sha256 $want ([0-9]* bytes), got $got" \
	"a corrupted mirror file is refused" -- --dest "$O2" --mirror "$C" --subset --only mooncake
left=$(cd "$O2" && find . -type f | sort | tr '\n' ' ')
check "the refused file left nothing behind (only the good one before it: $left)" "after the refusal: $left" \
	[ "$left" = "./mooncake/conversation_trace.jsonl " ]

# ---- files pinned by their git blob id only (no sha256 in the manifest) ----
awk '$7 == "weka-claude-code/LICENSE" { $1 = "-"; $2 = "-" } { print }' "$MAN" >"$T/blob.sha256"
export FG_TRACES_MANIFEST=$T/blob.sha256
expect 0 "1 files in $T/out3: 1 fetched (1 verified by git blob id only" "git blob id verification" -- \
	--dest "$T/out3" --mirror "$M" --files <(echo weka-claude-code/LICENSE)
check "the blob-verified file is identical" "the blob-verified file differs" \
	cmp -s "$SH/weka-claude-code/LICENSE" "$T/out3/weka-claude-code/LICENSE"
printf '\n' >>"$T/out3/weka-claude-code/LICENSE"
expect 1 "differs: expected git blob $(git hash-object --no-filters "$SH/weka-claude-code/LICENSE" 2>/dev/null)" \
	"--check by git blob id" -- --dest "$T/out3" --files <(echo weka-claude-code/LICENSE) --check
unset FG_TRACES_MANIFEST

# ---- the network path: no server fails at once and names --mirror; then curl from loopback ----
# no_network: the script, pointed at a closed loopback port, fails quickly and writes nothing
no_network() {
	local t0 dt
	t0=$(date +%s)
	FG_TRACES_URL=http://127.0.0.1:9 expect 1 "cannot reach 127.0.0.1:9 .*--mirror DIR" \
		"no network: a quick, clear failure" -- --dest "$T/out4" --only mooncake
	dt=$(($(date +%s) - t0))
	check "... within 15 s" "no network: took $dt s" [ $dt -le 15 ]
	check "... and wrote nothing" "no network: $T/out4 was created" [ ! -e "$T/out4" ]
}

# loopback: a python3 HTTP server whose tree is BASE/OWNER/REPO/COMMIT/PATH (each pinned commit a
# link to the mirror) stands in for raw.githubusercontent.com
loopback() {
	local W=$T/www repo commit port name ok
	awk '!/^#/ && NF { print $4, $5 }' "$MAN" | sort -u | while read -r repo commit; do
		mkdir -p "$W/$repo"
		ln -s "$M/$repo" "$W/$repo/$commit"
	done
	python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$W" >"$T/http.log" 2>&1 &
	srv=$!
	port=
	for _ in $(seq 50); do
		port=$(sed -n 's/^Serving HTTP on .* port \([0-9]*\) .*/\1/p' "$T/http.log")
		[ -z "$port" ] || break
		sleep 0.1
	done
	if [ -z "$port" ]; then
		fail "the loopback HTTP server did not start: $(cat "$T/http.log")"
		return
	fi
	FG_TRACES_URL=http://127.0.0.1:$port expect 0 "3 files in $T/out5: 3 fetched, 0 already present" \
		"download with curl from a loopback server" -- --dest "$T/out5" --files \
		<(printf 'mooncake/conversation_trace.jsonl\nmooncake/synthetic_trace.jsonl\nweka-claude-code/LICENSE\n')
	ok=yes
	for name in mooncake/conversation_trace.jsonl mooncake/synthetic_trace.jsonl weka-claude-code/LICENSE; do
		cmp -s "$SH/$name" "$T/out5/$name" || ok=no
	done
	check "... byte for byte" "downloaded files differ" [ $ok = yes ]
	FG_TRACES_URL=http://127.0.0.1:$port expect 1 \
		"toolagent_trace.jsonl: download of http://127.0.0.1:$port/kvcache-ai/Mooncake/.*failed" \
		"a file the server lacks (HTTP 404) fails naming it" -- --dest "$T/out5" --only mooncake
	check "... and leaves no partial file" "partial file left" [ -z "$(find "$T/out5" -name '.*part*')" ]
}

if ! command -v curl >/dev/null; then
	echo "skip the network tests: no curl"
else
	no_network
	if command -v python3 >/dev/null; then loopback; else echo "skip the download test: no python3"; fi
fi

echo "$fails failure(s)"
[ "$fails" -eq 0 ]
