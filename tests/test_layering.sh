#!/usr/bin/env bash
# test_layering.sh SRC_ROOT - the KV simulator's layering rule (docs/kv-policy.md), by grep:
#  - a policy file (femu-gandalf/policy/*.[ch]) includes kv_policy.h, never kv_int.h, never
#    names struct kv_obj and never dereferences the simulator itself ("s->"): it reads the
#    core through kv_policy.h's accessors and changes it only through its actions;
#  - kv_int.h is included only by the core (kvsim.c, alloc.c, ssd_port.c, kvcheck.c) and by kv_policy.h;
#  - the command files (cli/) include neither: to them struct kvsim is opaque;
#  - in femu-gandalf/kv/ only ssd_port.c calls the drive (ftl_read/write/trim/get_...) or the
#    store (sink->): the SSD tier has one output port;
#  - no message in femu-gandalf/run/ spells a CLI flag ("--ssd"): it names the option through
#    run_opt(), and the CLI says how its flags are spelled.
#  - the device adapters (hw/nbdkit, hw/qemu) leave the drive's life to hw/drive: none loads a
#    preset or a snapshot, sets a config key, checkpoints or writes a file atomically itself
#    (hw/nbdkit/userdata.c, the data store, saves its own data).
# Each violation is printed as file:line: text; exit 1 if there is any.
set -u
root=${1:?usage: test_layering.sh SRC_ROOT}
cd "$root" || exit 2
fails=0
report() { # rule, then grep -n output
	[ -n "$2" ] || return 0
	echo "layering: $1:" >&2
	echo "$2" | sed 's/^/  /' >&2
	fails=$((fails + 1))
}
pol=(femu-gandalf/policy/*.c femu-gandalf/policy/*.h)
report "a policy includes kv_int.h" "$(grep -nH '#include *"kv_int\.h"' "${pol[@]}")"
report "a policy names struct kv_obj" "$(grep -nHw 'struct kv_obj' "${pol[@]}")"
report "a policy dereferences the simulator (s->)" "$(grep -nHE '(^|[^A-Za-z0-9_])s->' "${pol[@]}")"
for f in femu-gandalf/policy/*.c; do
	[ "$(basename "$f")" = registry.c ] && continue
	grep -q '#include "kv_policy.h"' "$f" || report "a policy does not include kv_policy.h" "$f"
done
report "kv_int.h included outside the core" "$(grep -rnH '#include *"kv_int\.h"' femu-gandalf cli tests 2>/dev/null |
	grep -vE '^femu-gandalf/kv/(kvsim\.c|alloc\.c|ssd_port\.c|kvcheck\.c|kv_policy\.h):')"
report "a command file reaches into the simulator" "$(grep -nHE '#include *"(kv_int|kv_policy)\.h"' femu-gandalf/cli/*.c)"
report "a drive or store call outside the SSD port" "$(grep -nHE '(^|[^A-Za-z0-9_])(ftl_(read|write|trim|prefetch|unit_valid|get_[a-z]+)\(|sink->)' femu-gandalf/kv/*.c |
	grep -v '^femu-gandalf/kv/ssd_port\.c:')"
report "a CLI flag spelled in run/" "$(grep -nHE '"[^"]*--[a-z]' femu-gandalf/run/*.c)"
report "a device adapter manages the drive's life itself (hw/drive does)" "$(grep -nHE '(^|[^A-Za-z0-9_])(ftl_(preset_load|snapshot_load|snapshot_save|checkpoint|checkpoint_verify|config_set|config_validate|config_diff|create|json|json_members)|fg_atomic_[a-z]+)\(' hw/nbdkit/plugin.c hw/qemu/*.c)"
[ $fails -eq 0 ] && echo "layering: ok"
exit $((fails > 0))
