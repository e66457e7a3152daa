#!/bin/bash
# test_fetch_traces.sh - scripts/fetch-traces on a local mirror made from the project's copy of
# the traces (../shared/traces, or FG_SHARED_TRACES): the 145 files it holds are fetched with
# --mirror and --subset/--files, byte for byte; a second run fetches nothing; a corrupted mirror
# file is refused and leaves nothing behind; --check finds a changed or missing file; an
# unreachable server fails at once pointing to --mirror; files pinned only by their git blob id
# are verified by it; and the download path itself, through curl from a loopback HTTP server.
# Where the shared traces are absent (a user's machine before fetching them), the same checks run
# on six small synthetic files under the real names, with a manifest of their own
# (FG_TRACES_MANIFEST) that keeps the real repositories, commits and paths, and with --files in
# place of --subset. Usage: test_fetch_traces.sh SOURCE_ROOT
set -u
ROOT=${1:?usage: test_fetch_traces.sh SOURCE_ROOT}
ROOT=$(cd "$ROOT" && pwd)
FG=$ROOT/scripts/fetch-traces # expect (testlib.sh) runs $FG
REALMAN=$ROOT/scripts/traces.sha256
MAN=$REALMAN
SH=${FG_SHARED_TRACES:-$ROOT/../shared/traces}
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

SYN=0
if [ ! -d "$SH/weka-claude-code" ] || [ ! -d "$SH/mooncake" ]; then
	echo "note: $SH (weka-claude-code/, mooncake/) not found: testing on a synthetic mirror"
	SYN=1 SH=$T/synth MAN=$T/synth.sha256
	mkdir -p "$SH/weka-claude-code" "$SH/mooncake"
	printf 'Synthetic licence text for the fetch test.\n' >"$SH/weka-claude-code/LICENSE"
	for i in 1 2 3; do
		printf '{"id": "conv-%d", "requests": [{"t": %d.5, "hash_ids": [%d, %d]}]}\n' \
			$i $i $((i * 10)) $((i * 10 + 1)) >"$SH/weka-claude-code/trace_000$i.json"
	done
	for k in conversation synthetic; do
		for t in 0 1000 2500; do
			printf '{"timestamp": %d, "input_length": 1024, "output_length": 8, "hash_ids": [%d, %d]}\n' \
				$t $t $((t + 1))
		done >"$SH/mooncake/${k}_trace.jsonl"
	done
	# the real manifest's lines for these names (and toolagent, which the mirror lacks), with
	# the synthetic files' sha256, size and git blob id
	while read -r sha size blob repo commit path dest; do
		case $dest in
		weka-claude-code/LICENSE | weka-claude-code/trace_000[123].json | mooncake/*) ;;
		*) continue ;;
		esac
		if [ -f "$SH/$dest" ]; then
			sha=$(sha256sum <"$SH/$dest") sha=${sha%% *}
			size=$(stat -c %s "$SH/$dest")
			blob=$({ printf 'blob %d\0' "$size"; cat "$SH/$dest"; } | sha1sum) blob=${blob%% *}
		fi
		echo "$sha $size $blob $repo $commit $path $dest"
	done < <(grep -v '^#' "$REALMAN") >"$MAN"
	export FG_TRACES_MANIFEST=$MAN
fi
SH=$(cd "$SH" && pwd)
NW=$(find "$SH/weka-claude-code" "$SH/mooncake" -type f | wc -l) # the files mirrored: 145, or 6 synthetic

# ---- the manifest: 7 fields a line, one line per DEST, every file of both folders ----
if out=$(awk '!/^#/ && NF {
		n++; if (NF != 7) { print "line " NR ": " NF " fields"; bad = 1 }
		if (seen[$7]++) { print "DEST " $7 " twice"; bad = 1 }
		if ($6 == "LICENSE") lic++
		else if ($4 == "callanjfox/kv-cache-tester" && $6 ~ /^traces\/trace_[0-9]+\.json$/) w++
		else if ($4 == "kvcache-ai/Mooncake" && $6 ~ /^FAST25-release\/traces\/[a-z_]+\.jsonl$/) m++
		else { print "unexpected line " NR; bad = 1 }
	} END { printf "%d lines: %d WEKA + %d LICENSE, %d Mooncake\n", n, w, lic, m; exit bad }' "$REALMAN") &&
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
check "mirror of $SH: $NW files" "mirror of $SH: $nf files, want $NW" [ $nf = "$NW" ]
if [ $SYN = 1 ]; then
	SUBSET=(--files "$T/list") # the synthetic tree is not scripts/traces.subset
else
	SUBSET=(--subset)
	check "... the project's trace set (145 files)" "$SH holds $NW files, want 145" [ "$NW" = 145 ]
	if diff <(grep -v '^#' "$ROOT/scripts/traces.subset" | sort) <(sort "$T/list") >"$T/d"; then
		pass "scripts/traces.subset lists exactly the files of $SH"
	else
		fail "scripts/traces.subset differs from $SH: $(head -5 "$T/d")"
	fi
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
expect 0 "$NW files in $O: $NW fetched, 0 already present" "fetch from the mirror (--files)" -- \
	--dest "$O" --mirror "$M" --files "$T/list"
same_tree "$O" "the fetched tree"
expect 0 "$NW files in $O: 0 fetched, $NW already present" "a second run fetches nothing" -- \
	--dest "$O" --mirror "$M" "${SUBSET[@]}"
expect 0 "\[2/2\] present mooncake/synthetic_trace.jsonl" "--verbose: a line per file" -- \
	--dest "$O" --mirror "$M" "${SUBSET[@]}" --only mooncake --verbose
expect 0 "check $O: all $NW files match the manifest" "--check ${SUBSET[0]}" -- --dest "$O" "${SUBSET[@]}" --check
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
	--dest "$O" "${SUBSET[@]}" --check
expect 1 "$O/mooncake/synthetic_trace.jsonl: missing" "--check: a missing file" -- --dest "$O" "${SUBSET[@]}" --check
expect 1 "2 of $NW files missing or different" "--check: the count" -- --dest "$O" "${SUBSET[@]}" --check
expect 0 "$NW files in $O: 2 fetched, $((NW - 2)) already present" "a fetch replaces the changed file" -- \
	--dest "$O" --mirror "$M" "${SUBSET[@]}"
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
	"a corrupted mirror file is refused" -- --dest "$O2" --mirror "$C" "${SUBSET[@]}" --only mooncake
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
if [ $SYN = 1 ]; then export FG_TRACES_MANIFEST=$MAN; else unset FG_TRACES_MANIFEST; fi

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
