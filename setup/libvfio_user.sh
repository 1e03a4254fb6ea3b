#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Find or build libvfio-user (the vfio-user server library sim/vm_bridge links) and print its
# install prefix:
#
#   ~/.cache/ssdlab/libvfio-user-<version>-<revision>/include/vfio-user/libvfio-user.h  (with
#        pci_defs.h, vfio-user.h and pci_caps/*.h)
#   ~/.cache/ssdlab/libvfio-user-<version>-<revision>/lib/libvfio-user.a      what sim/vm_bridge
#        links, so the server needs no LD_LIBRARY_PATH (libvfio-user.so is installed as well)
#   ~/.cache/ssdlab/libvfio-user-<version>-<revision>/lib/pkgconfig/libvfio-user.pc   links the
#        static library (-l:libvfio-user.a) and json-c, the system's (libjson-c-dev)
#
# Debian publishes no libvfio-user package; its QEMU source package bundles the revision QEMU's
# vfio-user client is tested against (subprojects/libvfio-user, pinned by libvfio-user.wrap),
# so that is what this script builds: the QEMU source package setup/qemu.sh builds
# (setup/qemu_source.sh), built with meson (Debian's: libvfio-user needs >= 0.53) into that
# cache (about 15 s; downloads about 40 MB). The build is checked by compiling a small server
# against the installed library (with the .pc file) and running it. Packages are fetched with a
# private apt configuration (setup/apt_private.sh): the machine's apt set-up is read for its
# mirror and keyring but never changed.
#
# Order: $LIBVFIO_USER if set (a prefix laid out as above); the newest complete cached build;
# otherwise build. Progress goes to stderr; stdout is the prefix and nothing else, so callers
# can do LIBVFIO_USER=$(setup/libvfio_user.sh).
set -euo pipefail

CACHE_ROOT=${SSDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdlab}
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "libvfio_user.sh: $*" >&2; }
die() { echo "libvfio_user.sh: error: $*" >&2; exit 1; }

# prefix_ok PREFIX -> true when PREFIX holds the headers and the static library
prefix_ok() {
    [ -r "$1/include/vfio-user/libvfio-user.h" ] && [ -r "$1/include/vfio-user/pci_defs.h" ] \
        && ls "$1"/lib*/libvfio-user.a >/dev/null 2>&1
}

if [ -n "${LIBVFIO_USER:-}" ]; then
    prefix_ok "$LIBVFIO_USER" || die "LIBVFIO_USER=$LIBVFIO_USER is not a libvfio-user install" \
        "prefix (include/vfio-user/libvfio-user.h, lib/libvfio-user.a); unset LIBVFIO_USER to" \
        "let this script build one"
    (cd "$LIBVFIO_USER" && pwd); exit 0
fi
# cached_build -> the newest complete cached build, if any.
cached_build() {
    local stamp
    for stamp in $(ls -d "$CACHE_ROOT"/libvfio-user-*/.ssdlab-complete 2>/dev/null \
                   | sort -rV); do
        if prefix_ok "${stamp%/.ssdlab-complete}"; then
            echo "${stamp%/.ssdlab-complete}"; return 0
        fi
    done
    return 1
}
cached_build && exit 0

# One build per machine at a time: a second clone waits, then reuses the first one's build.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/libvfio-user.lock"
flock 9
cached_build && exit 0

QEMU_SOURCE_HINT="build libvfio-user (https://github.com/nutanix/libvfio-user) with meson"
QEMU_SOURCE_HINT+=" into a prefix and set LIBVFIO_USER=<prefix>"
[ -r /etc/debian_version ] && command -v apt-get >/dev/null \
    || die "not a Debian system: $QEMU_SOURCE_HINT"
. "$here/apt_private.sh"
. "$here/qemu_source.sh"     # qemu_source

# What the build needs: meson and ninja, json-c (the library's one dependency), cmocka (its
# meson.build requires it unconditionally, for the unit tests, which are built, not run), plus
# what apt-get source uses.
BUILD_DEPS="gcc meson ninja-build pkgconf libjson-c-dev libcmocka-dev dpkg-dev
            debian-archive-keyring"
ensure_packages $BUILD_DEPS

work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-libvfio-user.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
qemu_source "$work"
src="$QEMU_SRC/subprojects/libvfio-user"
[ -r "$src/meson.build" ] || die "QEMU $QEMU_VERSION's source package has no" \
    "subprojects/libvfio-user; $QEMU_SOURCE_HINT"
version=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$src/meson.build" | head -n1)
rev=$(sed -n 's/^revision *= *\([0-9a-f]\{7\}\).*/\1/p' "$QEMU_SRC/subprojects/libvfio-user.wrap" \
      2>/dev/null | head -n1) || true
[ -n "$version" ] || die "no version in libvfio-user's meson.build"
prefix="$CACHE_ROOT/libvfio-user-$version${rev:+-$rev}"
rm -rf "$prefix"
log "building libvfio-user $version${rev:+ (revision $rev)} from QEMU $QEMU_VERSION into $prefix"
build() {
    cd "$src"
    # release: optimised, without the debug build's -Werror and extra logging; both the static
    # and the shared library.
    meson setup "$work/build" --prefix="$prefix" --libdir=lib --buildtype=release \
        -Ddefault_library=both
    ninja -C "$work/build" -j"$JOBS"
    meson install -C "$work/build" --no-rebuild
}
# errexit holds inside the subshell only when its status is not tested on the spot (|| would
# switch it off for every command in it): hence the set +e around it.
set +e
(set -e; build) >"$work/build.log" 2>&1
rc=$?
set -e
if [ "$rc" != 0 ]; then
    tail -n 40 "$work/build.log" >&2
    cp "$work/build.log" "$CACHE_ROOT/libvfio-user-build.log"
    die "libvfio-user build failed; the whole log is $CACHE_ROOT/libvfio-user-build.log"
fi

# The pkg-config file (upstream installs none): the static library, and json-c from the system.
mkdir -p "$prefix/lib/pkgconfig"
cat > "$prefix/lib/pkgconfig/libvfio-user.pc" <<EOF
prefix=$prefix
includedir=\${prefix}/include
libdir=\${prefix}/lib

Name: libvfio-user
Description: vfio-user server library (from QEMU $QEMU_VERSION, revision ${rev:-unknown}), static
Version: $version
Requires: json-c
Cflags: -I\${includedir}
Libs: -L\${libdir} -l:libvfio-user.a
EOF

# Check: a server that creates a PCI Express device, realizes it (the socket appears) and
# destroys it, built with the .pc file and run.
cat > "$work/check.c" <<'EOF'
#include <stdio.h>
#include <unistd.h>
#include <vfio-user/libvfio-user.h>
int main(int argc, char **argv)
{
    vfu_ctx_t *ctx = vfu_create_ctx(VFU_TRANS_SOCK, argv[1], 0, NULL, VFU_DEV_TYPE_PCI);
    if (argc != 2 || ctx == NULL) { perror("vfu_create_ctx"); return 1; }
    if (vfu_pci_init(ctx, VFU_PCI_TYPE_EXPRESS, PCI_HEADER_TYPE_NORMAL, 0) != 0) {
        perror("vfu_pci_init"); return 1; }
    vfu_pci_set_id(ctx, 0x1b36, 0x0010, 0x1af4, 0x1100);
    if (vfu_realize_ctx(ctx) != 0) { perror("vfu_realize_ctx"); return 1; }
    if (access(argv[1], F_OK) != 0) { perror("socket"); return 1; }
    vfu_destroy_ctx(ctx);
    return 0;
}
EOF
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs libvfio-user) \
    || die "pkg-config cannot read $prefix/lib/pkgconfig/libvfio-user.pc"
cc -Wall -Werror -o "$work/check" "$work/check.c" $flags >"$work/check.log" 2>&1 \
    || { cat "$work/check.log" >&2; die "a test program does not build against $prefix"; }
"$work/check" "$work/check.sock" >"$work/check.log" 2>&1 \
    || { cat "$work/check.log" >&2; die "a test program built against $prefix fails"; }
prefix_ok "$prefix" || die "libvfio-user install at $prefix is incomplete"
echo "libvfio-user $version ${rev:-} from qemu $QEMU_VERSION" > "$prefix/.ssdlab-versions"
log "built in $(( $(date +%s) - started )) s"
touch "$prefix/.ssdlab-complete"   # only a finished, checked install is ever reused
echo "$prefix"
