#!/bin/bash
# test_configure.sh - every failure path of ./configure (and scripts/need-qemu) that can be
# provoked without breaking the machine: each must exit non-zero with a message that says what
# is wrong and what to type, never silently.
#
#  1. an unknown option: exit 1, named;
#  2. not root, a Debian package missing (a dpkg-query on PATH that denies one): the exact
#     `sudo apt-get install -y PKG` line and exit 1; with --vm and no QEMU, the QEMU lines too;
#  3. --vm, QEMU missing: the backports step (on bookworm) and the install line, exit 1;
#  4. --vm, QEMU 7.x: refused with the reason, exit 1;
#  5. as root with --install-deps and FG_QEMU pointing at an old QEMU: refused, nothing installed;
#  6. without --vm, no QEMU: configure succeeds and never mentions QEMU (make demo needs none).
#
# Non-root cases run as nobody (setpriv) on a copy of configure and scripts/need-qemu when the
# test runs as root, and as the caller otherwise.
# Usage: test_configure.sh [SOURCE_ROOT]
set -u
ROOT=${1:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
chmod 755 "$T"
fails=0
pass() { echo "ok   $1"; }
fail() { echo "FAIL $1"; fails=$((fails + 1)); }

# A copy of the two scripts (configure stops before meson in every failure case below).
mkdir -p "$T/src/scripts" "$T/bin"
cp "$ROOT/configure" "$T/src/"
cp "$ROOT/scripts/need-qemu" "$T/src/scripts/"
: >"$T/src/meson.build"
printf '#!/bin/sh\n# dpkg-query that says libzstd-dev is not installed\nfor a; do p=$a; done\n[ "$p" = libzstd-dev ] && exit 1\nexec /usr/bin/dpkg-query "$@"\n' >"$T/bin/dpkg-query"
printf '#!/bin/sh\necho "QEMU emulator version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u12)"\n' >"$T/bin/qemu7"
chmod -R a+rX "$T"
chmod +x "$T/bin/"*

as_user() { # as_user CMD...: run CMD as a non-root user
	if [ "$(id -u)" -eq 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/ "$@"
	else
		"$@"
	fi
}
# expect NAME RC PATTERN... -- CMD...: CMD exits RC and its output matches every PATTERN
expect() {
	local name=$1 want=$2 pats=() out rc p ok=yes
	shift 2
	while [ "$1" != -- ]; do pats+=("$1"); shift; done
	shift
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" = "$want" ] || ok=no
	for p in "${pats[@]}"; do grep -q -- "$p" <<<"$out" || ok=no; done
	if [ $ok = yes ]; then pass "$name"; else
		fail "$name: exit $rc (want $want); output:"
		sed 's/^/     | /' <<<"$out"
	fi
}
bookworm=no
[ "$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")" = bookworm ] && bookworm=yes
bp=apt-get
[ $bookworm = no ] || bp="bookworm-backports"

expect "unknown option" 1 "configure: error: unknown option: --frob" -- "$T/src/configure" --frob
# not a Debian system (no dpkg-query on PATH): one message with what to install, before anything
mkdir -p "$T/nodpkg"
for c in bash dirname id cat; do ln -s "$(command -v $c)" "$T/nodpkg/$c"; done
printf 'ID=fedora\nVERSION_ID=41\n' >"$T/fedora-release"
expect "Fedora (no dpkg-query): the dnf line, exit 1" 1 "sudo dnf install gcc make .*libaio-devel" "untested" -- \
	env PATH="$T/nodpkg" FG_OS_RELEASE="$T/fedora-release" "$T/src/configure"
printf 'ID=arch\n' >"$T/arch-release"
expect "another distribution (no dpkg-query): the Debian names and where the others are" 1 \
	"elsewhere install the equivalents of: build-essential" "docs/install.md" -- \
	env PATH="$T/nodpkg" FG_OS_RELEASE="$T/arch-release" "$T/src/configure"
expect "not root, a package missing: the sudo line, exit 1" 1 \
	"^  sudo apt-get install -y libzstd-dev$" "configure: error: missing Debian packages: libzstd-dev" -- \
	as_user env PATH="$T/bin:$PATH" "$T/src/configure"
expect "not root, --install-deps, a package missing: needs root" 1 \
	"needs root" "^  sudo apt-get install -y libzstd-dev$" -- \
	as_user env PATH="$T/bin:$PATH" "$T/src/configure" --install-deps
expect "not root, --vm, package and QEMU missing: both said at once" 1 \
	"^  sudo apt-get install -y libzstd-dev$" "not found" "$bp" "missing Debian packages" -- \
	as_user env PATH="$T/bin:$PATH" FG_QEMU="$T/none/qemu" "$T/src/configure" --vm
expect "--vm, QEMU missing: the install lines, exit 1" 1 \
	"$T/none/qemu not found" "apt-get install -y .*qemu-system-x86" "$bp" "configure: error: the VM tests need QEMU" -- \
	as_user env FG_QEMU="$T/none/qemu" "$T/src/configure" --vm
expect "--vm, QEMU 7.x: refused with the reason" 1 \
	"is QEMU 7.2.15" "stalls under random I/O" "configure: error: the VM tests need QEMU" -- \
	as_user env FG_QEMU="$T/bin/qemu7" "$T/src/configure" --vm
if [ "$(id -u)" -eq 0 ]; then
	expect "root, --install-deps --vm, FG_QEMU too old: not installed over" 1 \
		"not installing over it" "configure: error: the VM tests need QEMU" -- \
		env FG_QEMU="$T/bin/qemu7" "$T/src/configure" --install-deps --vm
else
	echo "skip root --install-deps case: not root"
fi
expect "need-qemu: unknown option" 2 "unknown option '--frob'" -- "$T/src/scripts/need-qemu" --frob

# 6. the real tree, no QEMU, no --vm: configure succeeds and says nothing about QEMU.
out=$(FG_QEMU="$T/none/qemu" "$ROOT/configure" --builddir "$T/build" 2>&1)
rc=$?
# (meson's own "Program test_qemu_ftl.sh found" line names a test script, not a QEMU)
if [ $rc -eq 0 ] && [ -f "$T/build/build.ninja" ] && ! grep -i qemu <<<"$out" | grep -qv '^Program test_'; then
	pass "no --vm, no QEMU: configure succeeds without a word about QEMU"
else
	fail "no --vm, no QEMU: exit $rc"
	sed 's/^/     | /' <<<"$out"
fi

[ $fails -eq 0 ] && echo "test_configure: all passed" || echo "test_configure: $fails failed"
exit $((fails > 0))
