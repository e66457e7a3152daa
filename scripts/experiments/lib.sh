# scripts/experiments/lib.sh - what every experiment shares. An experiment is one command,
# scripts/experiments/NAME [--quick] [--jobs N] [--fresh] [--out DIR], writing results/NAME/
# (results/NAME/quick/ with --quick): its CSV tables, PNG and SVG figures, table.md (the table
# results/README.md quotes), and meta.json (the command, the git commit, the wall time).
#
# Its runs are `femu-gandalf kv` jobs made by `femu-gandalf sweep --emit-jobs` and run by GNU
# parallel (docs/sweep.md), so they can equally run on a Slurm cluster. Each job directory is
# kept under build/exp/NAME[-quick]/ (FG_EXP_WORK instead of build/exp) until the binary
# changes: a stopped experiment resumes where it was, and one that crashed loses only the jobs
# in flight.
#
#   . "$(dirname "$0")/lib.sh"; exp_init NAME "$@"
#   exp_trace DEFAULT          TRACE: --trace's, or DEFAULT (missing: exit 77, a skip)
#   exp_kv TAG KV-FLAGS...     the jobs of one `kv` command line (TAG: a directory name)
#   exp_run                    the jobs of every exp_kv so far written (one process for all),
#                              then every job not yet done, JOBS at a time
#   exp_job OUT CMD...         a run that is not a kv sweep: CMD's output into WORK/OUT (kept)
#   exp_run_jobs               every exp_job not yet made, JOBS at a time
#   exp_merge TAG              that command's table (kv's CSV without wall_s) on stdout
#   exp_user_bytes PRESET ...  a drive's user bytes (runs go to steady state with kv --drive-writes)
#   exp_py NAME ARGS...        scripts/experiments/NAME.py: an experiment's analysis (the rules
#                              they share are fgresults.py's, with tests/test_fgresults.py)
#   exp_plot NAME <<'GP'       one gnuplot script drawn twice: OUT/NAME.png and OUT/NAME.svg
#   exp_sets                   EXP_SETS: the whole trace, then its folds (below)
#   exp_fold SET               kv's flags that select SET's sessions (none for the whole trace)
#   exp_scale SET SIZE         a size (kv's form: 100G, 1200M, bytes) for SET: SIZE / K in a fold
#   exp_drive SET PRESET [BPP] --device PRESET, cut to BPP blocks per plane if given, and to 1/K
#                              of them in a fold
#   exp_finish                 meta.json (wall_s: this invocation, which may have resumed;
#                              runs_wall_s: every run's own wall time, summed), the time taken
#
# Folds. A comparison is a finding only when it holds on the whole trace and in every fold
# (fgresults.fold_verdict), so every experiment that compares runs each configuration on the
# whole trace (set "all") and on K disjoint folds of its sessions (kv --fold I/K; sets "1/Ks" ..
# "K/Ks"; --folds K, default 4, 2 with --quick, 0 for the whole trace only). A fold is scaled to
# the whole trace's pressure: 1/K of the DRAM, of the SSD tier and of the drive's blocks per
# plane. (Run at the whole trace's settings, a fold of WEKA is a lighter load, with another
# WAF: results/README.md section 2b measured both.) A synthetic trace's samples are seeds
# instead; the experiment that uses one (models) says how.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
FG=${FG:-$ROOT/build/femu-gandalf}
SH=${FG_SHARED_TRACES:-$ROOT/../shared/traces}

exp_usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
	cat <<EOF

Common flags: --quick (the small setup, under a minute or two; into results/$EXP/quick/),
--jobs N (runs at once, default 2), --folds K (the whole trace, then K disjoint folds of its
sessions, each scaled to 1/K: default 4, 2 with --quick, 0 for the whole trace only), --fresh (forget finished runs), --out DIR (instead of
results/$EXP[/quick]), --only "A B" (only these of the drives, presets or policies the
experiment loops over first; the tables say which ran), --policies "A B" (only these policies,
in an experiment whose --only picks drives or presets; meta.json records it), --trace PATH (the experiment on your
own KV trace, e.g. Bailian trace A: any format \`femu-gandalf kv\` reads; into
results/$EXP-NAME[/quick]/, NAME the trace's file name without its extension).
EOF
}

exp_init() {
	EXP=$1
	shift
	EXP_ARGS=("$@")
	QUICK=0 JOBS=2 FRESH=0 OUT= ONLY= EXP_POLICIES= EXP_TRACE= EXP_TAGNAME= FOLDS=
	while [ $# -gt 0 ]; do
		case "$1" in
		--quick) QUICK=1; shift ;;
		--only) ONLY=${2:?--only needs a list}; shift 2 ;;
		--policies) EXP_POLICIES=${2:?--policies needs a list}; shift 2 ;;
		--trace) EXP_TRACE=${2:?--trace needs a path}; shift 2 ;;
		--jobs) JOBS=${2:?--jobs needs N}; shift 2 ;;
		--folds) FOLDS=${2:?--folds needs K}; shift 2 ;;
		--fresh) FRESH=1; shift ;;
		--out) OUT=${2:?--out needs a directory}; shift 2 ;;
		-h|--help) exp_usage; exit 0 ;;
		*) echo "$EXP: unknown flag $1 (try --help)" >&2; exit 2 ;;
		esac
	done
	[[ $JOBS =~ ^[1-9][0-9]*$ ]] || { echo "$EXP: --jobs $JOBS: must be a number >= 1" >&2; exit 2; }
	# (an experiment that cannot take --policies says so rather than run every policy)
	[ -z "$EXP_POLICIES" ] || grep -q '^kept=$(exp_policies ' "$0" ||
		{ echo "$EXP: --policies: this experiment picks its policies with --only" >&2; exit 2; }
	[ -n "$FOLDS" ] || FOLDS=$([ $QUICK = 1 ] && echo 2 || echo 4)
	[[ $FOLDS =~ ^[0-9]+$ ]] && [ "$FOLDS" != 1 ] ||
		{ echo "$EXP: --folds $FOLDS: must be 0 (the whole trace only) or a number >= 2" >&2; exit 2; }
	[ -x "$FG" ] || { echo "$EXP: $FG is missing: build first (make)" >&2; exit 1; }
	parallel --version 2>/dev/null | grep -q "GNU parallel" ||
		{ echo "$EXP: GNU parallel is missing (apt-get install parallel)" >&2; exit 1; }
	if [ -n "$EXP_TRACE" ]; then
		[ -e "$EXP_TRACE" ] || { echo "$EXP: --trace $EXP_TRACE: no such file or directory" >&2; exit 2; }
		EXP_TAGNAME=$(basename "${EXP_TRACE%/}")
		EXP_TAGNAME=-${EXP_TAGNAME%%.*}
	fi
	if [ -z "$OUT" ]; then
		OUT=results/$EXP$EXP_TAGNAME
		[ $QUICK = 0 ] || OUT=$OUT/quick
	fi
	mkdir -p "$OUT"
	WORK=${FG_EXP_WORK:-$ROOT/build/exp}/$EXP$EXP_TAGNAME$([ $QUICK = 0 ] || echo -quick)
	local stamp
	stamp=$(sha256sum <"$FG" | cut -c1-16)
	if [ $FRESH = 1 ] || [ "$(cat "$WORK/stamp" 2>/dev/null)" != "$stamp" ]; then
		rm -rf "$WORK"
	fi
	mkdir -p "$WORK"
	echo "$stamp" >"$WORK/stamp"
	EXP_T0=$(date +%s)
	EXP_TAGS=()
	EXP_EMIT=()
	EXP_JOBS=()
	: >"$WORK/jobs"
	: >"$WORK/batch"
}

exp_trace() {
	if [ -n "$EXP_TRACE" ]; then
		TRACE=$EXP_TRACE
	elif [ ! -e "$1" ]; then
		echo "$EXP: $1 is missing (the real traces live in ../shared/traces; scripts/fetch-traces downloads them, docs/traces.md)" >&2
		exit 77
	else
		TRACE=$1
	fi
}

exp_sets() {
	EXP_SETS=(all)
	local k
	for ((k = 1; k <= FOLDS; k++)); do EXP_SETS+=("$k/${FOLDS}s"); done
}

# exp_tag SET: SET as a directory name (all, 1of4s)
exp_tag() {
	echo "${1//\//of}"
}

exp_fold() {
	[ "$1" = all ] || echo "--fold ${1%s}"
}

exp_scale() {
	local set=$1 size=$2
	if [ "$set" = all ]; then
		echo "$size"
	elif [[ $size =~ ^([0-9.]+)([A-Za-z]*)$ ]]; then
		awk -v n="${BASH_REMATCH[1]}" -v k="$FOLDS" -v u="${BASH_REMATCH[2]}" \
			'BEGIN { x = n / k; if (x == int(x) && x < 1e15) printf "%.0f%s\n", x, u; else printf "%.6g%s\n", x, u }'
	else
		echo "$EXP: exp_scale: $size is not a size" >&2
		return 2
	fi
}

exp_drive() {
	local set=$1 preset=$2 bpp=${3:-}
	if [ "$set" != all ] && [ -z "$bpp" ]; then
		bpp=$(sed -n 's/^blocks_per_plane *= *\([0-9]*\).*/\1/p' "$ROOT/hw/ftl/presets/$preset.ini")
		[ -n "$bpp" ] || { echo "$EXP: $preset.ini states no blocks_per_plane" >&2; return 2; }
	fi
	[ "$set" = all ] || bpp=$((bpp / FOLDS))
	echo "--device $preset${bpp:+ --set blocks_per_plane=$bpp}"
}

# exp_kv TAG FLAGS...: the sweep goes into WORK/batch, emitted by exp_run with all the others in
# one process (`sweep --emit-batch`: the trace is parsed once for the sweeps that share it, not
# once per sweep); WORK/TAG/flags records FLAGS once it is emitted
exp_kv() {
	local tag=$1 w line
	shift
	EXP_TAGS+=("$tag")
	# the same flags were emitted by this build already
	[ "$(cat "$WORK/$tag/flags" 2>/dev/null)" != "$*" ] || return 0
	rm -rf "${WORK:?}/$tag" # (other flags under this tag: its results are not these flags')
	line=
	for w in "$WORK/$tag" "$@"; do # (each word single-quoted, a quote in it as '\'')
		[[ $w != *$'\n'* ]] || { echo "$EXP: $tag: a newline in $w" >&2; exit 2; }
		line+="${line:+ }'${w//\'/\'\\\'\'}'"
	done
	echo "$line" >>"$WORK/batch"
	EXP_EMIT+=("$tag")
	printf '%s\n' "$*" >"$WORK/$tag.flags.next"
}

exp_run() {
	local tag pending=$WORK/pending.txt n
	if [ -s "$WORK/batch" ]; then
		"$FG" sweep --emit-batch "$WORK/batch" 2>"$WORK/batch.err" ||
			{ cat "$WORK/batch.err" >&2; echo "$EXP: a sweep's flags were refused (above)" >&2; exit 2; }
		sed 's/^femu-gandalf: sweep --emit-batch/'"$EXP"'/' "$WORK/batch.err" >&2
		# (a tag queued twice with the same flags: one file, moved once)
		for tag in "${EXP_EMIT[@]}"; do
			[ ! -e "$WORK/$tag.flags.next" ] || mv "$WORK/$tag.flags.next" "$WORK/$tag/flags"
		done
	fi
	: >"$WORK/batch"
	EXP_EMIT=()
	: >"$pending"
	for tag in "${EXP_TAGS[@]}"; do
		"$FG" sweep --missing "$WORK/$tag" >>"$pending"
	done
	n=$(wc -l <"$pending")
	if [ "$n" -gt 0 ]; then
		# runs that differ only in the drive's side (TRIM, placement hints, FDP, when to stop)
		# next to each other, in the order their first one came: a batch replays one simulation
		# for them (kv_run_keep_sims); each run's results are what it gives alone
		awk '{ k = $0; gsub(/ --(trim|streams|output|drive-writes|max-loops) [^ ]+| --until-steady| --set fdp[a-z_]*=[^ ]+/, "", k)
		       if (!(k in g)) g[k] = ++ng
		       printf "%d\t%d\t%s\n", g[k], NR, $0 }' "$pending" |
			sort -t "$(printf '\t')" -k1,1n -k2,2n | cut -f3- >"$pending.grouped"
		mv "$pending.grouped" "$pending"
		# runs in groups of up to 8 consecutive ones (the same drive, mostly), each group in one
		# process (sweep --run-batch: the trace parsed once, the drive's tables reused instead of
		# backed again by the kernel); at least 4 groups per job, so that the last ones balance
		local per=$((n / (4 * JOBS)))
		[ "$per" -le 8 ] || per=8
		[ "$per" -ge 1 ] || per=1
		echo "$EXP: $n runs to make, $JOBS at a time, up to $per per process (parallel; build/exp keeps the finished ones)" >&2
		local bar=()
		[ ! -t 2 ] || bar=(--bar)
		parallel --will-cite -q --pipe -N "$per" -j "$JOBS" "${bar[@]}" --halt soon,fail=1 \
			"$FG" sweep --run-batch - <"$pending" ||
			{ echo "$EXP: a run failed (its message is above); the finished ones are kept" >&2; exit 1; }
	fi
	for tag in "${EXP_TAGS[@]}"; do
		"$FG" sweep --merge "$WORK/$tag" --output "$WORK/$tag/table.csv" 2>"$WORK/merge.err" ||
			{ cat "$WORK/merge.err" >&2; exit 1; }
	done
}

# exp_job OUT COMMAND...: a run that is not a kv sweep (blkreplay, ssd, kv --json): COMMAND's
# standard output into WORK/OUT, written whole (.tmp, then mv), run by exp_run_jobs unless
# WORK/OUT is there already; its wall time in WORK/OUT.wall, for meta.json
exp_job() {
	local out=$WORK/$1
	shift
	EXP_JOBS+=("$out")
	[ ! -s "$out" ] || [ ! -s "$out.wall" ] || return 0
	{
		printf 't0=$EPOCHREALTIME; '
		printf '%q ' "$@"
		printf '>%q && mv %q %q && ' "$out.tmp" "$out.tmp" "$out"
		printf 'awk -v a="$t0" -v b="$EPOCHREALTIME" %q >%q\n' 'BEGIN { printf "%.3f\n", b - a }' "$out.wall"
	} >>"$WORK/jobs"
}

# exp_run_jobs: the exp_job runs not yet made, JOBS at a time; then WORK/wall.csv
exp_run_jobs() {
	local n r bar=()
	n=$(wc -l <"$WORK/jobs")
	if [ "$n" -gt 0 ]; then
		echo "$EXP: $n runs to make, $JOBS at a time" >&2
		[ ! -t 2 ] || bar=(--bar)
		SHELL=/bin/bash parallel --will-cite -j "$JOBS" "${bar[@]}" --halt soon,fail=1 <"$WORK/jobs" ||
			{ echo "$EXP: a run failed (its message is above); the finished ones are kept" >&2; exit 1; }
	fi
	{ echo wall_s; for r in "${EXP_JOBS[@]}"; do cat "$r.wall"; done; } >"$WORK/wall.csv"
}

exp_merge() {
	cat "$WORK/$1/table.csv"
}

# exp_only NAME...: NAME... restricted to --only's list (all of them without --only); prints
# the kept names, one line; an --only name outside the list is an error
exp_only() { exp_keep --only "$ONLY" "$@"; }

# exp_policies NAME...: the same for --policies, in experiments whose --only picks the drives
exp_policies() { exp_keep --policies "$EXP_POLICIES" "$@"; }

# exp_keep FLAG LIST NAME...: NAME... restricted to LIST, in LIST's order (all of them if LIST
# is empty)
exp_keep() {
	local flag=$1 list=$2 n kept=()
	shift 2
	[ -n "$list" ] || { echo "$*"; return; }
	for n in $list; do
		[[ " $* " == *" $n "* ]] || { echo "$EXP: $flag $n: not one of: $*" >&2; return 2; }
		kept+=("$n")
	done
	echo "${kept[*]}"
}

# exp_user_bytes PRESET [--set K=V...]: the drive's user bytes
exp_user_bytes() {
	local preset=$1
	shift
	"$FG" presets --json "$preset" "$@" | exp_py fgresults json-get user_bytes
}

exp_py() {
	local name=$1
	shift
	python3 "$ROOT/scripts/experiments/$name.py" "$@"
}

exp_plot() {
	local name=$1 body
	body=$(cat)
	command -v gnuplot >/dev/null || { echo "$EXP: gnuplot is missing: no $name.png" >&2; return 0; }
	# each format from the script itself, in its own gnuplot: `replot` after a multiplot draws
	# only the last panel (gnuplot 5.4), or replays every panel with the last one's settings and
	# fails (gnuplot 6: "all points y value undefined")
	gnuplot <<GP || return 1
set terminal pngcairo size 1200,800 font "sans,10" noenhanced
set output "$OUT/$name.png"
$body
GP
	gnuplot <<GP
set terminal svg size 1200,800 font "sans,10" noenhanced
set output "$OUT/$name.svg"
$body
GP
}

exp_finish() {
	local wall=$(($(date +%s) - EXP_T0)) commit dirty=false
	commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
	# (what the experiments write under results/ is not a change to the code that made it)
	[ -z "$(git status --porcelain --untracked-files=no -- . ':!results' 2>/dev/null)" ] || dirty=true
	local tag walls=()
	for tag in "${EXP_TAGS[@]}"; do walls+=("$WORK/$tag/wall.csv"); done
	# (an experiment whose runs are not kv sweeps leaves their wall times in $WORK/wall.csv)
	[ ! -s "$WORK/wall.csv" ] || walls+=("$WORK/wall.csv")
	exp_py meta "$OUT/meta.json" "$EXP" "$commit" "$dirty" "$wall" "$JOBS" "$QUICK" "$0" "${#walls[@]}" \
		"${walls[@]}" "${EXP_ARGS[@]}"
	echo "$EXP: wrote $OUT/ in ${wall} s" >&2
}
