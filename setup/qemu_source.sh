# SPDX-License-Identifier: BSD-2-Clause
# Sourced by setup/qemu.sh and setup/libvfio_user.sh: fetch and unpack the newest QEMU source
# package Debian publishes that is at least QEMU_MIN (libvfio-user comes from the same package:
# Debian bundles it as QEMU's subprojects/libvfio-user, and publishes no libvfio-user package).
#
#   . "$here/apt_private.sh"; . "$here/qemu_source.sh"
#   qemu_source WORKDIR      # sets QEMU_SRC (the unpacked tree), QEMU_VERSION (Debian's,
#                            # 1:10.2.2+ds-1) and QEMU_UPSTREAM (10.2.2)
#
# Every version >= QEMU_MIN that unstable, testing or trixie-backports lists is tried, newest
# first: the mirror may list a version whose files it no longer (or does not yet) serve, and
# then the next one is used. `apt-get source` unpacks with dpkg-source, which applies Debian's
# patches (the build needs them: disable-pycotap.patch drops a Python package configure would
# otherwise look for in python/wheels/). Callers define log() and die() before sourcing, and may
# set QEMU_SOURCE_HINT: what the user can do instead, appended to the error messages.

QEMU_MIN=10.1
QEMU_SUITES="unstable testing trixie-backports"
: "${QEMU_SOURCE_HINT:=install QEMU >= $QEMU_MIN with vfio-user-pci and set QEMU=<its path>}"

# qemu_version_ge A B -> true when version A >= version B
qemu_version_ge() {
    [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]
}

# qemu_upstream DEBIAN_VERSION -> the upstream version (1:10.2.2+ds-1 -> 10.2.2)
qemu_upstream() {
    local u=${1#*:}
    u=${u%-*}
    echo "${u%%+*}"
}

# qemu_source WORKDIR: the source package unpacked under WORKDIR/src.
qemu_source() {
    local work=$1 ver v tried=
    apt_private_init "$work/apt"
    log "looking up QEMU source packages (Debian $QEMU_SUITES) on $APT_MIRROR"
    apt_private_sources deb-src $QEMU_SUITES \
        || die "apt-get update of Debian $QEMU_SUITES sources failed:" \
               "$(tail -n2 "$APT_WORK/update.err"); $QEMU_SOURCE_HINT"
    mkdir -p "$work/src"
    for ver in $(apt-cache "${APT_PRIVATE[@]}" showsrc qemu 2>/dev/null \
                 | awk '/^Version:/{print $2}' | sort -rV | uniq); do
        v=$(qemu_upstream "$ver")
        qemu_version_ge "$v" "$QEMU_MIN" || continue
        tried="$tried $ver"
        log "fetching the QEMU $ver source package (about 40 MB)"
        rm -rf "${work:?}/src"/*
        if (cd "$work/src" && apt-get "${APT_PRIVATE[@]}" source -qq "qemu=$ver") \
                >"$work/source.log" 2>&1; then
            QEMU_SRC=$(find "$work/src" -maxdepth 1 -mindepth 1 -type d -name 'qemu-*' \
                       | head -n1)
            [ -n "$QEMU_SRC" ] || die "the QEMU $ver source package did not unpack"
            QEMU_VERSION=$ver
            QEMU_UPSTREAM=$v
            return 0
        fi
        log "QEMU $ver could not be fetched ($(grep -m1 -E '^(E|W):' "$work/source.log" \
            || tail -n1 "$work/source.log")); trying the next version"
    done
    [ -n "$tried" ] || die "Debian ($QEMU_SUITES) lists no QEMU >= $QEMU_MIN source package;" \
        "$QEMU_SOURCE_HINT"
    die "no QEMU source package could be fetched (tried:$tried); $QEMU_SOURCE_HINT"
}
