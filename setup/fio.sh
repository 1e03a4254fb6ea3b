#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Find or build fio from Debian's source package and print the path of the fio binary.
#
# The ssdlab ioengine (sw/fio) is a fio external engine: it must be compiled against the
# headers and the config-host.h of the very fio that loads it (struct thread_data and
# struct ioengine_ops change between versions and configurations). Debian ships no fio headers,
# so this script builds fio itself, keeping its configured source tree next to the binary:
#
#   ~/.cache/ssdlab/fio-<version>/bin/fio      the binary (stdout of this script)
#   ~/.cache/ssdlab/fio-<version>/src/         the configured source tree (fio.h, config-host.h)
#
# Order: $FIO if set (it must sit in such a tree: <prefix>/bin/fio with <prefix>/src/fio.h);
# the newest complete cached build; otherwise build the fio source package of the Debian
# release the machine runs (bookworm: fio 3.33) into that cache. The source package is fetched
# with a private apt configuration (own sources list, own lists and cache directories): the
# machine's apt set-up is read for its mirror and keyring but never changed. Progress goes to
# stderr; stdout is the binary path and nothing else, so callers can do FIO=$(setup/fio.sh).
# `fio.sh --src` prints the source tree instead.
set -euo pipefail

CACHE_ROOT=${SSDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdlab}
JOBS=${JOBS:-$(nproc)}
[ "$JOBS" -gt 2 ] && JOBS=2
what=bin
[ "${1:-}" = "--src" ] && what=src

log() { echo "fio.sh: $*" >&2; }
die() { echo "fio.sh: error: $*" >&2; exit 1; }
. "$(cd "$(dirname "$0")" && pwd)/apt_private.sh"   # ensure_packages

# tree_ok PREFIX -> true when PREFIX holds a runnable fio and its configured source tree
tree_ok() {
    [ -x "$1/bin/fio" ] && [ -r "$1/src/fio.h" ] && [ -r "$1/src/config-host.h" ] \
        && "$1/bin/fio" --version >/dev/null 2>&1
}
emit() {
    if [ "$what" = src ]; then echo "$1/src"; else echo "$1/bin/fio"; fi
}

if [ -n "${FIO:-}" ]; then
    prefix=$(cd "$(dirname "$FIO")/.." && pwd)
    tree_ok "$prefix" || die "FIO=$FIO is not in a fio build tree (<prefix>/bin/fio with" \
        "<prefix>/src/fio.h and config-host.h); unset FIO to let this script build one"
    emit "$prefix"; exit 0
fi

# cached_build -> the newest complete cached build, if any.
cached_build() {
    local stamp
    for stamp in $(ls -d "$CACHE_ROOT"/fio-*/.ssdlab-complete 2>/dev/null | sort -rV); do
        if tree_ok "${stamp%/.ssdlab-complete}"; then
            emit "${stamp%/.ssdlab-complete}"; return 0
        fi
    done
    return 1
}
cached_build && exit 0

# One build per machine at a time: a second clone waits, then reuses the first one's build.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/fio.lock"
flock 9
cached_build && exit 0

[ -r /etc/debian_version ] || die "not a Debian system: build fio from source" \
    "(https://github.com/axboe/fio), keep the tree as <prefix>/src with the binary in" \
    "<prefix>/bin/fio, and set FIO=<prefix>/bin/fio"

# What fio's build needs (a subset of its Debian build dependencies: the engines the ssdlab
# job files use on a real card — io_uring is built in, libaio needs libaio-dev) plus what
# apt-get source uses.
BUILD_DEPS="gcc make pkg-config zlib1g-dev libaio-dev dpkg-dev debian-archive-keyring"
ensure_packages $BUILD_DEPS

# The machine's own Debian mirror, read from its apt configuration (deb822 or one-line form).
mirror=$( { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}';
            grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                | sed -E 's/\[[^]]*\]//' | awk '{print $2}'; } \
          | grep -E '/debian/?$' | head -n1 ) || true
[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt; build fio yourself and set FIO="
log "Debian mirror from the machine's apt configuration: $mirror"
# The release the machine runs (bookworm on Debian 12), so fio is the version Debian ships.
suite=$( . /etc/os-release 2>/dev/null; echo "${VERSION_CODENAME:-}" )
[ -n "$suite" ] || suite=stable

work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-fio.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
             -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
             -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=/dev/null"
             -o "Debug::NoLocking=1" -o "APT::Get::List-Cleanup=0"
             -o "APT::Sandbox::User=$(id -un)")
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
    > "$work/sources.list"
apt-get "${apt_private[@]}" update -qq >&2 2>"$work/update.err" \
    || die "apt-get update of Debian $suite sources failed: $(tail -n2 "$work/update.err")"
ver=$(apt-cache "${apt_private[@]}" showsrc fio 2>/dev/null \
      | awk '/^Version:/{print $2}' | sort -V | tail -n1)
[ -n "$ver" ] || die "Debian $suite publishes no fio source package"
upstream=${ver%%-*}; upstream=${upstream#*:}

prefix="$CACHE_ROOT/fio-$upstream"
rm -rf "$prefix"
mkdir -p "$prefix/bin"
log "building fio $ver from Debian $suite into $prefix (about 3 min on 2 cores)"
(cd "$work/src" && apt-get "${apt_private[@]}" source -qq "fio=$ver") \
    >"$work/source.log" 2>&1 || { cat "$work/source.log" >&2; die "apt-get source failed"; }
srcdir=$(find "$work/src" -maxdepth 1 -mindepth 1 -type d -name 'fio-*' | head -n1)
[ -n "$srcdir" ] || die "source package did not unpack"
mv "$srcdir" "$prefix/src"
(
    cd "$prefix/src"
    # Debian's patches are applied by dpkg-source; configure as Debian's rules do, without
    # the optional engines for storage systems ssdlab has no use for (fewer dependencies).
    ./configure --prefix="$prefix" --disable-native
    make -j"$JOBS" fio
    cp fio "$prefix/bin/fio"
) >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; die "fio build failed"; }
tree_ok "$prefix" || die "built fio at $prefix does not run"
touch "$prefix/.ssdlab-complete"   # only a finished build is ever reused
emit "$prefix"
