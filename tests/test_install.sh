#!/bin/bash
# test_install.sh BUILD SRC BINDIR PKGDATADIR DOCDIR [PLUGINDIR] - an installed tree works on
# its own (docs/install.md).
#
# `meson install --destdir` into a temporary directory, then, with every FEMU_GANDALF_*/FG_*
# variable cleared and the working directory outside the source tree: the installed binary runs
# `ssd --preset tiny` and `kv --model` from the installed catalog; nbdkit loads the installed
# plugin (--dump-plugin, and a served export read with nbdinfo). That the installed copies are
# the ones read, and never the source tree, is shown with a preset and a model that exist only in
# the installed tree, with the directories an unknown preset's error lists, and by removing
# tiny.ini from the installed tree. The tree moved elsewhere as a whole still finds its data.
# The plugin part is skipped without nbdkit; nbdinfo comes from libnbd-bin.
set -uo pipefail

BUILD=$(realpath "${1:?usage: test_install.sh BUILD SRC BINDIR PKGDATADIR DOCDIR [PLUGINDIR]}")
SRC=$(realpath "$2")
BINDIR=$3 DATA=$4 DOCDIR=$5 PLUGINDIR=${6:-}
PY=/usr/bin/python3

T=$(mktemp -d /tmp/test_install.XXXXXX)
PIDS=()
cleanup()
{
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
cd "$T" || exit 1

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
# clean CMD...: run with an empty environment but PATH (no FEMU_GANDALF_* or FG_* override)
clean()
{
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$T" "$@"
}
# expect NAME CODE PATTERN [!ANTIPATTERN] -- CMD...: exit code, output has PATTERN (and not
# ANTIPATTERN); the output is left in $OUT
expect()
{
	local name=$1 code=$2 pat=$3 anti='' rc
	shift 3
	if [ "$1" != -- ]; then
		anti=${1#!}
		shift
	fi
	shift
	OUT=$(clean "$@" 2>&1)
	rc=$?
	if [ $rc -ne "$code" ]; then
		bad "$name: exit $rc, want $code: $OUT"
	elif ! grep -qF -- "$pat" <<<"$OUT"; then
		bad "$name: output lacks '$pat': $OUT"
	elif [ -n "$anti" ] && grep -qF -- "$anti" <<<"$OUT"; then
		bad "$name: output mentions '$anti': $OUT"
	else
		ok "$name"
	fi
}
# json FILE EXPR: evaluate EXPR with d = the JSON object in FILE
json()
{
	$PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

echo "# 1. meson install --destdir"
D=$T/dest
if ! meson install -C "$BUILD" --destdir "$D" --no-rebuild --quiet >"$T/install.log" 2>&1; then
	bad "meson install --destdir: $(cat "$T/install.log")"
	exit 1
fi
FG=$D$BINDIR/femu-gandalf
PRESETS=$D$DATA/presets
for f in "$FG" "$PRESETS/tiny.ini" "$PRESETS/ent-tlc-1t.ini" "$D$DATA/models.ini" \
	"$D$DOCDIR/README.md" "$D$DOCDIR/docs/install.md" "$D$DOCDIR/docs/presets.md" \
	${PLUGINDIR:+"$D$PLUGINDIR/nbdkit-femu-gandalf-plugin.so"}; do
	[ -e "$f" ] && ok "installed ${f#"$D"}" || bad "not installed: ${f#"$D"}"
done
[ -x "$FG" ] || exit 1

# a preset and a model only the installed tree has: finding them proves which tree is read
sed 's/^blocks_per_plane=256$/blocks_per_plane=128/' "$PRESETS/tiny.ini" >"$PRESETS/staged-only.ini"
printf '\n[staged-model]\ndescription=only in the installed catalog\nfull_kv_bytes_per_token=4096\nlinear_state_bytes=0\n' \
	>>"$D$DATA/models.ini"

echo "# 2. the installed binary reads the installed presets and catalog, never the source tree"
expect "presets --help: the installed directory first" 0 "  $PRESETS" "!$SRC" -- "$FG" presets --help
[ "$(grep -m1 '^  /' <<<"$OUT")" = "  $PRESETS" ] && ok "presets --help: lookup starts in $PRESETS" ||
	bad "presets --help: first directory is not $PRESETS: $OUT"
expect "presets lists the installed presets" 0 "staged-only" -- "$FG" presets
expect "ssd --preset tiny --writes 1" 0 '"lifetime_days"' -- "$FG" ssd --preset tiny --writes 1 --json
clean "$FG" ssd --preset staged-only --writes 0 --json >"$T/staged.json" 2>"$T/err"
if [ "$(json "$T/staged.json" 'd["preset"], d["physical_bytes"]' 2>&1)" = "('staged-only', 33554432)" ]; then
	ok "ssd --preset staged-only: the installed tree's file (128 blocks, 32 MiB NAND)"
else
	bad "ssd --preset staged-only: $(cat "$T/err" "$T/staged.json")"
fi
expect "unknown preset: names it and the installed directories, not the source tree" 2 \
	"unknown preset 'nope' (no nope.ini in $PRESETS, " "!$SRC" -- "$FG" ssd --preset nope
expect "models --help: the installed catalog" 0 "$D$DATA/models.ini" -- "$FG" models --help
expect "models lists the installed catalog" 0 "staged-model" -- "$FG" models
KV=(kv --trace "$SRC/traces/multiturn-small.jsonl" --dram 2G --policy lru --json)
clean "$FG" "${KV[@]}" --model qwen3-next-80b-a3b --device none --ssd 1G >"$T/kv.json" 2>"$T/err" &&
	[ "$(json "$T/kv.json" 'd["requests"] > 0' 2>&1)" = True ] &&
	ok "kv --model qwen3-next-80b-a3b --device none" || bad "kv --model qwen3-next-80b-a3b: $(cat "$T/err")"
clean "$FG" "${KV[@]}" --model staged-model --device tiny --ssd 32M >"$T/kv2.json" 2>"$T/err" &&
	[ "$(json "$T/kv2.json" 'd["model"]' 2>&1)" = staged-model ] &&
	ok "kv --model staged-model --device tiny: model and drive from the installed tree" ||
	bad "kv --model staged-model --device tiny: $(cat "$T/err" "$T/kv2.json")"
expect "unknown model" 2 "unknown model 'nope'" -- "$FG" "${KV[@]}" --model nope --device none --ssd 1G

echo "# 3. overrides still win"
mkdir -p "$T/mine"
cp "$PRESETS/tiny.ini" "$T/mine/mine.ini"
expect "FEMU_GANDALF_PRESETS replaces the search path" 0 '"preset": "mine"' -- \
	env FEMU_GANDALF_PRESETS="$T/mine" "$FG" ssd --preset mine --writes 0 --json
expect "FEMU_GANDALF_PRESETS: nothing else is searched" 2 "no tiny.ini in $T/mine)" -- \
	env FEMU_GANDALF_PRESETS="$T/mine" "$FG" ssd --preset tiny
expect "--preset FILE" 0 '"preset": "mine"' -- "$FG" ssd --preset "$T/mine/mine.ini" --writes 0 --json
cp "$D$DATA/models.ini" "$T/mine/models.ini"
expect "FEMU_GANDALF_MODELS" 0 "$T/mine/models.ini" -- env FEMU_GANDALF_MODELS="$T/mine" "$FG" models --help
mkdir -p "$T/empty"
expect "FEMU_GANDALF_MODELS without models.ini: names the directory" 2 \
	"no models.ini in $T/empty (FEMU_GANDALF_MODELS" -- \
	env FEMU_GANDALF_MODELS="$T/empty" "$FG" "${KV[@]}" --model qwen3-next-80b-a3b --device none --ssd 1G

echo "# 4. nbdkit loads the installed plugin"
P=$D$PLUGINDIR/nbdkit-femu-gandalf-plugin.so
if [ -z "$PLUGINDIR" ] || ! command -v nbdkit >/dev/null; then
	echo "skip: no nbdkit"
else
	expect "nbdkit --dump-plugin" 0 "femu_gandalf_preset_path=$PRESETS:" "!$SRC" -- \
		nbdkit --dump-plugin "$P"
	grep -qx "name=femu-gandalf" <<<"$OUT" && ok "--dump-plugin: name=femu-gandalf" ||
		bad "--dump-plugin: no name=femu-gandalf: $OUT"
	expect "plugin: unknown preset names it and the installed directories" 1 \
		"preset=nope: unknown preset 'nope' (no nope.ini in $PRESETS, " "!$SRC" -- \
		nbdkit -f -U "$T/nope.sock" "$P" preset=nope
	if command -v nbdinfo >/dev/null; then
		for preset in tiny staged-only; do
			clean "$FG" ssd --preset $preset --writes 0 --json >"$T/$preset.json"
			want=$(json "$T/$preset.json" 'd["user_bytes"]')
			clean nbdkit -f --exit-with-parent -U "$T/$preset.sock" -P "$T/$preset.pid" "$P" \
				preset=$preset data=none 2>"$T/$preset.log" &
			PIDS+=($!)
			for _ in $(seq 100); do
				[ -s "$T/$preset.pid" ] && break
				sleep 0.1
			done
			got=$(nbdinfo --size "nbd+unix:///?socket=$T/$preset.sock" 2>&1)
			[ "$got" = "$want" ] && ok "nbdkit serves the installed plugin, preset=$preset: $got bytes" ||
				bad "nbdkit preset=$preset: size '$got', want $want: $(cat "$T/$preset.log")"
		done
	else
		echo "skip: no nbdinfo (libnbd-bin)"
	fi
fi

echo "# 5. the tree moved as a whole still finds its own data"
mv "$D" "$T/moved"
M=$T/moved
expect "moved: ssd --preset staged-only" 0 '"preset": "staged-only"' -- \
	"$M$BINDIR/femu-gandalf" ssd --preset staged-only --writes 0 --json
[ -n "$PLUGINDIR" ] && command -v nbdkit >/dev/null &&
	expect "moved: the plugin's preset path" 0 "femu_gandalf_preset_path=$M$DATA/presets:" -- \
		nbdkit --dump-plugin "$M$PLUGINDIR/nbdkit-femu-gandalf-plugin.so"

echo "# 6. no fallback to the source tree when the installed preset is gone"
rm "$M$DATA/presets/tiny.ini"
if [ -e "$DATA/presets/tiny.ini" ]; then
	echo "skip: $DATA/presets/tiny.ini is installed on this machine (the configured datadir)"
else
	expect "tiny.ini removed from the installed tree: unknown preset" 2 "unknown preset 'tiny'" \
		-- "$M$BINDIR/femu-gandalf" ssd --preset tiny
fi

[ $fails -eq 0 ] && echo "all install tests passed" || echo "$fails install test(s) failed"
[ $fails -eq 0 ]
