#!/bin/bash
# build.sh - development build of the nbdkit plugin without meson:
#   hw/nbdkit/build.sh [BUILD_DIR]   ->  BUILD_DIR/nbdkit-femu-gandalf-plugin.so (default build/)
# Compiles hw/ftl/*.c and femu-gandalf/cli/preset.c into the shared object directly (no LTO
# archive involved). The meson build (docs/nbdkit.md) produces the same file.
# EXTRA_CFLAGS='-fsanitize=address,undefined' builds a sanitizer plugin; run nbdkit with
# LD_PRELOAD=$(gcc -print-file-name=libasan.so) to load it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build}
mkdir -p "$out"
for p in nbdkit glib-2.0; do
	pkg-config --exists "$p" || { echo "build.sh: pkg-config cannot find $p (apt-get install nbdkit-plugin-dev libglib2.0-dev)" >&2; exit 1; }
done
# shellcheck disable=SC2046
exec ${CC:-gcc} -std=gnu11 -O2 -g ${EXTRA_CFLAGS:-} -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
	-DFG_PRESET_DIR="\"$root/hw/ftl/presets\"" \
	-I"$root/hw/ftl" -I"$root/femu-gandalf/cli" -I"$root/hw/nbdkit" \
	$(pkg-config --cflags nbdkit glib-2.0) \
	"$root"/hw/nbdkit/plugin.c "$root"/hw/nbdkit/store.c "$root"/femu-gandalf/cli/preset.c \
	"$root"/hw/ftl/*.c \
	$(pkg-config --libs glib-2.0) -lpthread -lm \
	-o "$out/nbdkit-femu-gandalf-plugin.so"
