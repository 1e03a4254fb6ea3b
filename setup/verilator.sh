#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Find or build Verilator >= 5.036 (cocotb 2.x needs it) and print the path of the binary.
#
# Order: $VERILATOR if set; `verilator` on PATH when new enough; a per-user cached build
# (~/.cache/ssdlab/verilator-<version>); otherwise build the newest Verilator source package
# Debian publishes into that cache. The source package is fetched with a private apt
# configuration (own sources list, own lists and cache directories): the machine's apt set-up
# is read for its mirror and keyring but never changed. Progress goes to stderr; stdout is the
# binary path and nothing else, so callers can do VERILATOR=$(setup/verilator.sh).
set -euo pipefail

MIN_VERSION=5.036
CACHE_ROOT=${SSDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdlab}
JOBS=${JOBS:-$(nproc)}

log() { echo "verilator.sh: $*" >&2; }
die() { echo "verilator.sh: error: $*" >&2; exit 1; }
. "$(cd "$(dirname "$0")" && pwd)/apt_private.sh"   # ensure_packages

# version_ok BINARY -> true when BINARY reports a version >= MIN_VERSION
version_ok() {
    local v
    v=$("$1" --version 2>/dev/null | awk '{print $2}') || return 1
    [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$MIN_VERSION" "$v" | sort -V | head -n1)" = "$MIN_VERSION" ]
}

if [ -n "${VERILATOR:-}" ]; then
    version_ok "$VERILATOR" || die "VERILATOR=$VERILATOR is not Verilator >= $MIN_VERSION"
    echo "$VERILATOR"; exit 0
fi
if command -v verilator >/dev/null && version_ok "$(command -v verilator)"; then
    command -v verilator; exit 0
fi
# cached_build -> path of the newest complete cached build, if any.
cached_build() {
    local stamp
    for stamp in $(ls -d "$CACHE_ROOT"/verilator-*/.ssdlab-complete 2>/dev/null | sort -rV); do
        if version_ok "${stamp%/.ssdlab-complete}/bin/verilator"; then
            echo "${stamp%/.ssdlab-complete}/bin/verilator"; return 0
        fi
    done
    return 1
}
cached_build && exit 0

# One build per machine at a time: a second clone waits, then reuses the first one's build.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/verilator.lock"
flock 9
cached_build && exit 0

[ -r /etc/debian_version ] || die "not a Debian system: install Verilator >= $MIN_VERSION" \
    "yourself (https://verilator.org/guide/latest/install.html) and set VERILATOR=/path"

# Build dependencies of Verilator (from its Debian control file) plus what apt-get source uses.
BUILD_DEPS="autoconf bison flex help2man libfl-dev perl python3 zlib1g-dev g++ make dpkg-dev
            debian-archive-keyring"
ensure_packages $BUILD_DEPS

# The machine's own Debian mirror, read from its apt configuration (deb822 or one-line form).
mirror=$( { grep -hs '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}';
            grep -hs '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                | sed -E 's/\[[^]]*\]//' | awk '{print $2}'; } \
          | grep -E '/debian/?$' | head -n1 ) || true
[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt; install Verilator >= $MIN_VERSION" \
    "and set VERILATOR=/path"
log "Debian mirror from the machine's apt configuration: $mirror"

work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-verilator.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
apt_private=(-o "Dir::Etc::SourceList=$work/sources.list" -o "Dir::Etc::SourceParts=/dev/null"
             -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache"
             -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=/dev/null"
             -o "Debug::NoLocking=1" -o "APT::Get::List-Cleanup=0"
             -o "APT::Sandbox::User=$(id -un)")

# The newest published source: unstable first, then testing. Keys come from the system keyring.
found=
for suite in unstable testing; do
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" \
        > "$work/sources.list"
    if apt-get "${apt_private[@]}" update -qq >&2 2>"$work/update.err"; then
        ver=$(apt-cache "${apt_private[@]}" showsrc verilator 2>/dev/null \
              | awk '/^Version:/{print $2}' | sort -V | tail -n1)
        upstream=${ver%%-*}; upstream=${upstream#*:}
        if [ -n "$ver" ] && [ "$(printf '%s\n%s\n' "$MIN_VERSION" "$upstream" | sort -V \
                | head -n1)" = "$MIN_VERSION" ]; then
            found=$suite; break
        fi
        log "Debian $suite has verilator ${ver:-none}, older than $MIN_VERSION"
    else
        log "apt-get update of Debian $suite sources failed: $(tail -n2 "$work/update.err")"
    fi
done
[ -n "$found" ] || die "no Verilator >= $MIN_VERSION in Debian's sources; install one and set" \
    "VERILATOR=/path"

prefix="$CACHE_ROOT/verilator-$upstream"
rm -rf "$prefix"
log "building Verilator $ver from Debian $found into $prefix (about 8 min on 2 cores)"
(cd "$work/src" && apt-get "${apt_private[@]}" source -qq "verilator=$ver") \
    >"$work/source.log" 2>&1 || { cat "$work/source.log" >&2; die "apt-get source failed"; }
srcdir=$(find "$work/src" -maxdepth 1 -mindepth 1 -type d -name 'verilator-*' | head -n1)
[ -n "$srcdir" ] || die "source package did not unpack"
(
    cd "$srcdir"
    autoconf
    ./configure --prefix="$prefix"
    # Optimised binary only: skip the debug build that `make` would also produce.
    make -C src opt -j"$JOBS"
    # Install the scripts, the optimised binary and the runtime headers; the debug binaries
    # the stock install list names were not built.
    make installbin installdata VL_INST_PUBLIC_BIN_FILES=verilator_bin
) >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log" >&2; die "Verilator build failed"; }
version_ok "$prefix/bin/verilator" || die "built Verilator at $prefix does not run"
touch "$prefix/.ssdlab-complete"   # only a finished install is ever reused
echo "$prefix/bin/verilator"
