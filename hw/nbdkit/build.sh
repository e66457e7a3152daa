#!/bin/bash
# build.sh - development build of the nbdkit plugin without meson:
#   hw/nbdkit/build.sh [BUILD_DIR]   ->  BUILD_DIR/nbdkit-femu-gandalf-plugin.so (default build/)
# Compiles hw/ftl/*.c and hw/drive/drive.c into the shared object directly (no LTO archive involved). The meson
# build (docs/nbdkit.md) produces the same file. fg_paths.h, which meson generates, is written
# to a temporary directory (never over meson's in BUILD_DIR), for the default prefix /usr/local
# and with BUILD_DIR as the build directory, so the plugin there reads the source tree's presets.
# EXTRA_CFLAGS='-fsanitize=address,undefined' builds a sanitizer plugin; run nbdkit with
# LD_PRELOAD=$(gcc -print-file-name=libasan.so) to load it.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build}
mkdir -p "$out"
out=$(cd "$out" && pwd)
pkg-config --exists nbdkit || { echo "build.sh: pkg-config cannot find nbdkit (apt-get install nbdkit-plugin-dev)" >&2; exit 1; }
gen=$(mktemp -d)
trap 'rm -rf "$gen"' EXIT
cat >"$gen/fg_paths.h" <<EOH
/* fg_paths.h - written by hw/nbdkit/build.sh (meson.build writes the same from its options) */
#pragma once
#define FG_SOURCE_ROOT "$root"
#define FG_BUILD_ROOT "$out"
#define FG_BINDIR "/usr/local/bin"
#define FG_PKGDATADIR "/usr/local/share/femu-gandalf"
#define FG_NBDKIT_PLUGINDIR "$(pkg-config --variable=plugindir nbdkit)"
EOH
# shellcheck disable=SC2046
${CC:-gcc} -std=gnu11 -O2 -g ${EXTRA_CFLAGS:-} -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
	-I"$gen" -I"$root/hw/ftl" -I"$root/hw/drive" -I"$root/common" -I"$root/hw/nbdkit" \
	$(pkg-config --cflags nbdkit) \
	"$root"/hw/nbdkit/plugin.c "$root"/hw/nbdkit/userdata.c "$root"/hw/drive/drive.c "$root"/hw/ftl/*.c "$root"/common/{atomicfile,json,err,parse,u64map,vec}.c \
	-lpthread -lm -ldl \
	-o "$out/nbdkit-femu-gandalf-plugin.so"
