#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Find or fetch qboot, QEMU's minimal x86 firmware, and print the path of qboot.rom.
#
# The Linux guest of `ssdlab linux` boots with -bios qboot.rom, not SeaBIOS: SeaBIOS has an
# NVMe driver of its own, which brings the simulated drive up at power-on with wall-clock
# timeouts the slowed-down drive cannot meet, gives up, frees its queue and buffer memory
# and leaves its commands in the drive; their late completions then land in memory Linux has
# reused (seen: the guest's initramfs corrupted on every boot after the first). qboot probes no
# disks; it sets up PCI and loads -kernel/-initrd through fw_cfg.
#
#   ~/.cache/ssdlab/qboot-<qemu-system-data version>/qboot.rom
#
# Order: $SSDLAB_QBOOT if set (a file); the cached copy; otherwise the qboot.rom of the Debian
# package qemu-system-data of the release the machine runs, fetched with a private apt
# configuration (setup/apt_private.sh; nothing installed, no root needed). Progress goes to
# stderr; stdout is the path and nothing else.
set -euo pipefail

CACHE_ROOT=${SSDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdlab}
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "qboot.sh: $*" >&2; }
die() { echo "qboot.sh: error: $*" >&2; exit 1; }

if [ -n "${SSDLAB_QBOOT:-}" ]; then
    [ -s "$SSDLAB_QBOOT" ] || die "SSDLAB_QBOOT=$SSDLAB_QBOOT is not a file; unset it to let" \
        "this script fetch qboot.rom"
    echo "$SSDLAB_QBOOT"; exit 0
fi
cached() {
    local f
    f=$(ls -d "$CACHE_ROOT"/qboot-*/qboot.rom 2>/dev/null | sort -rV | head -n1)
    [ -n "$f" ] && [ -s "$f" ] && echo "$f"
}
cached && exit 0

mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/qboot.lock"
flock 9
cached && exit 0

. "$here/apt_private.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-qboot.XXXXXX")
trap 'rm -rf "$work"' EXIT
apt_private_init "$work"
suite=$(apt_machine_suite)
apt_private_sources deb "$suite" \
    || die "apt-get update of Debian $suite failed: $(tail -n2 "$work/update.err")"
log "fetching qboot.rom (Debian $suite's qemu-system-data package)"
(cd "$work" && apt-get "${APT_PRIVATE[@]}" download -qq qemu-system-data) >"$work/dl.log" 2>&1 \
    || { cat "$work/dl.log" >&2; die "apt-get download qemu-system-data failed"; }
deb=$(ls "$work"/qemu-system-data_*.deb)
ver=$(dpkg-deb -W --showformat='${Version}' "$deb"); ver=${ver#*:}
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work" ./usr/share/qemu/qboot.rom \
    || die "qemu-system-data $ver has no usr/share/qemu/qboot.rom"
dir="$CACHE_ROOT/qboot-$ver"
mkdir -p "$dir"
cp "$work/usr/share/qemu/qboot.rom" "$dir/qboot.rom.part"
mv "$dir/qboot.rom.part" "$dir/qboot.rom"      # only a complete copy is ever found
echo "$dir/qboot.rom"
