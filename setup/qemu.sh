#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Find or build QEMU >= 10.1 with the vfio-user client (device vfio-user-pci) and print the path
# of its qemu-system-x86_64. The Linux flow (sw/ssdlab/flows/linux.py) boots a guest on q35 with
# the drive on vfio-user-pci and guest RAM in a shared file; Debian 12's QEMU (7.2) predates
# vfio-user-pci, so this script builds one:
#
#   ~/.cache/ssdlab/qemu-<version>/bin/qemu-system-x86_64     the binary (stdout of this script)
#   ~/.cache/ssdlab/qemu-<version>/share/qemu/                its firmware: SeaBIOS (from Debian's
#                                                             seabios package) and the option ROMs
#                                                             -kernel needs (built here)
#
# Order: $QEMU if set (it must be >= 10.1 and list vfio-user-pci); qemu-system-x86_64 on PATH
# when it qualifies; the newest complete cached build; otherwise build the newest QEMU source
# package Debian publishes (setup/qemu_source.sh; 10.2.2 at the time of writing) into that
# cache: x86_64-softmmu only, no default features or devices, with the devices of
# configs/devices/x86_64-softmmu/ssdlab.mak (written below): q35, the vfio-user client and QEMU's
# own NVMe device (for validating a guest image without the simulator); KVM and TCG. The build
# takes about 3 min on 2 cores (2 min 47 s measured, with a test run sharing the cores; the
# binary alone, no tests) and downloads about 40 MB; the cache holds about 11 MB.
# Packages are fetched with a private apt configuration (setup/apt_private.sh): the machine's
# apt set-up is read for its mirror and keyring but never changed. Progress goes to stderr;
# stdout is the binary path and nothing else, so callers can do QEMU=$(setup/qemu.sh).
set -euo pipefail

CACHE_ROOT=${SSDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdlab}
JOBS=${JOBS:-$(nproc)}
here=$(cd "$(dirname "$0")" && pwd)

log() { echo "qemu.sh: $*" >&2; }
die() { echo "qemu.sh: error: $*" >&2; exit 1; }

. "$here/apt_private.sh"
. "$here/qemu_source.sh"     # QEMU_MIN, qemu_version_ge, qemu_source

# qemu_ok BINARY -> true when BINARY is QEMU >= QEMU_MIN and has the device vfio-user-pci
qemu_ok() {
    local v devices
    v=$("$1" --version 2>/dev/null \
        | sed -n 's/^QEMU emulator version \([0-9][0-9.]*\).*/\1/p') || return 1
    [ -n "$v" ] && qemu_version_ge "$v" "$QEMU_MIN" || return 1
    devices=$("$1" -device help 2>/dev/null) || return 1
    [[ $devices == *'"vfio-user-pci"'* ]]
}
# build_ok PREFIX -> true when PREFIX holds a qualifying binary and the firmware it loads
build_ok() {
    [ -r "$1/share/qemu/bios-256k.bin" ] && [ -r "$1/share/qemu/linuxboot_dma.bin" ] \
        && qemu_ok "$1/bin/qemu-system-x86_64"
}

if [ -n "${QEMU:-}" ]; then
    qemu_ok "$QEMU" || die "QEMU=$QEMU is not QEMU >= $QEMU_MIN with the device vfio-user-pci" \
        "(see: $QEMU -device help); unset QEMU to let this script build one"
    echo "$QEMU"; exit 0
fi
if command -v qemu-system-x86_64 >/dev/null && qemu_ok "$(command -v qemu-system-x86_64)"; then
    command -v qemu-system-x86_64; exit 0
fi
# cached_build -> path of the newest complete cached build, if any.
cached_build() {
    local stamp
    for stamp in $(ls -d "$CACHE_ROOT"/qemu-*/.ssdlab-complete 2>/dev/null | sort -rV); do
        if build_ok "${stamp%/.ssdlab-complete}"; then
            echo "${stamp%/.ssdlab-complete}/bin/qemu-system-x86_64"; return 0
        fi
    done
    return 1
}
cached_build && exit 0

# One build per machine at a time: a second clone waits, then reuses the first one's build.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/qemu.lock"
flock 9
cached_build && exit 0

[ -r /etc/debian_version ] && command -v apt-get >/dev/null \
    || die "not a Debian system: build QEMU >= $QEMU_MIN with the vfio-user client yourself" \
           "(https://www.qemu.org/download/; its default x86_64-softmmu configuration has" \
           "vfio-user-pci) and set QEMU=/path/to/qemu-system-x86_64"

# What the build needs: QEMU's own requirements for this configuration (glib, zlib, ninja,
# pkg-config; Python with venv for configure's mkvenv.py), the compiler of the x86 option ROMs
# (Debian's QEMU builds them with gcc-i686-linux-gnu too: configure probes for a 32-bit
# compiler that links -lgcc, which the host gcc without multilib does not), plus what
# apt-get source uses.
BUILD_DEPS="gcc make pkgconf ninja-build libglib2.0-dev zlib1g-dev python3 python3-venv
            gcc-i686-linux-gnu dpkg-dev debian-archive-keyring"
ensure_packages $BUILD_DEPS

# pip, to fetch the meson wheel below: Debian's Python's, else the project virtualenv's
# (setup/python.sh creates it before anything builds QEMU).
pip=
for py in /usr/bin/python3 python3 "$here/../.venv/bin/python"; do
    if "$py" -m pip --version >/dev/null 2>&1; then pip="$py -m pip"; break; fi
done
[ -n "$pip" ] || die "no pip to fetch meson with: run setup/python.sh (the project virtualenv)" \
    "or install python3-pip"

work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-qemu.XXXXXX")
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
qemu_source "$work"
src=$QEMU_SRC
prefix="$CACHE_ROOT/qemu-$QEMU_UPSTREAM"
rm -rf "$prefix"
log "building QEMU $QEMU_VERSION into $prefix (about 3 min on 2 cores)"

# configure always runs python/scripts/mkvenv.py, which wants meson >= 1.5 (Debian 12 has
# 1.0.1) and otherwise installs the version pythondeps.toml names from python/wheels/, offline;
# Debian's repacked (+ds) tarball ships that directory empty, so the wheel is fetched here.
deps_toml=$(ls "$src/pythondeps.toml" "$src/python/pythondeps.toml" 2>/dev/null | head -n1) \
    || true
[ -n "$deps_toml" ] || die "QEMU $QEMU_VERSION has no pythondeps.toml"
meson_ver=$(awk '/^\[/ { sect = $0 } sect == "[meson]" && $1 == "meson"' "$deps_toml" \
            | sed -n 's/.*installed *= *"\([^"]*\)".*/\1/p' | head -n1)
[ -n "$meson_ver" ] || die "no meson version in $QEMU_VERSION's pythondeps.toml"
log "fetching the meson $meson_ver wheel configure installs into its virtualenv"
$pip download -q --no-deps --only-binary=:all: -d "$src/python/wheels" "meson==$meson_ver" \
    >"$work/pip.log" 2>&1 || { cat "$work/pip.log" >&2
        die "pip could not download meson==$meson_ver (is PyPI reachable? a pip index" \
            "configured?)"; }

# The devices: under --without-default-devices every Kconfig default is off (minikconf runs
# allnoconfig), the vfio-user client (hw/vfio-user/Kconfig: default y, depends on VFIO_PCI)
# included, so the build names what it needs. Q35 selects the rest a Linux guest boots on: the
# ICH9 LPC bridge, ACPI, the ISA serial port, the RTC and the i8254/i8259; fw_cfg is always
# built. No virtio disk or NIC, no display. SPDM_SOCKET only because QEMU 10.2 does not link
# without it: hw/nvme/ctrl.c calls spdm_socket_*, and NVME_PCI does not select it.
cat > "$src/configs/devices/x86_64-softmmu/ssdlab.mak" <<'EOF'
# ssdlab: q35, the vfio-user client, QEMU's NVMe device
CONFIG_Q35=y
CONFIG_VFIO_PCI=y
CONFIG_VFIO_USER=y
CONFIG_NVME_PCI=y
CONFIG_SPDM_SOCKET=y
EOF
# Nor does QEMU 10.2 link with hw/acpi/cxl.c (ACPI_X86 selects ACPI_CXL) but without hw/cxl
# (CONFIG_CXL needs the PCI expander bridge and the CXL memory device, a lot more code): the
# stubs then built in its place lack cxl_fmws_get_all_sorted. The stub is added when missing:
# no CXL fixed memory windows (this machine has no CXL).
stubs="$src/hw/cxl/cxl-host-stubs.c"
if [ -f "$stubs" ] && grep -qs cxl_fmws_get_all_sorted "$src/hw/acpi/cxl.c" \
        && ! grep -q cxl_fmws_get_all_sorted "$stubs"; then
    printf '\nGSList *cxl_fmws_get_all_sorted(void)\n{\n    return NULL;\n}\n' >> "$stubs"
fi

build() {
    mkdir -p "$src/build"
    cd "$src/build"
    ../configure --prefix="$prefix" --firmwarepath="$prefix/share/qemu" \
        --python=/usr/bin/python3 --target-list=x86_64-softmmu \
        --without-default-features --without-default-devices --with-devices-x86_64=ssdlab \
        --enable-kvm --enable-tcg --disable-docs --disable-download --disable-install-blobs \
        --disable-debug-info --disable-werror
    # The binary and the option ROMs (pc-bios/optionrom: linuxboot_dma.bin for -kernel,
    # kvmvapic.bin, ...) only: `make` would also build the unit tests and the softfloat
    # libraries of the FPU tests, a third of the work. Installed by hand (`make install` wants
    # them all); the binary finds its firmware at <prefix>/share/qemu.
    make -j"$JOBS" qemu-system-x86_64 pc-bios/optionrom/all
    mkdir -p "$prefix/bin" "$prefix/share/qemu"
    cp qemu-system-x86_64 "$prefix/bin/"
    cp pc-bios/optionrom/*.bin "$prefix/share/qemu/"
}
# errexit holds inside the subshell only when its status is not tested on the spot (|| would
# switch it off for every command in it): hence the set +e around it.
set +e
(set -e; build) >"$work/build.log" 2>&1
rc=$?
set -e
if [ "$rc" != 0 ]; then
    tail -n 40 "$work/build.log" >&2
    cp "$work/build.log" "$CACHE_ROOT/qemu-build.log"
    die "QEMU build failed; the whole log is $CACHE_ROOT/qemu-build.log"
fi

# SeaBIOS: the +ds tarball carries no x86 firmware binaries; Debian builds SeaBIOS separately.
# The seabios package of the Debian release the machine runs, unpacked into the prefix, so the
# binary needs nothing system-wide at run time.
suite=$(apt_machine_suite)
log "fetching SeaBIOS (Debian $suite's seabios package)"
apt_private_sources deb "$suite" \
    || die "apt-get update of Debian $suite failed: $(tail -n2 "$APT_WORK/update.err")"
mkdir -p "$work/seabios"
(cd "$work/seabios" && apt-get "${APT_PRIVATE[@]}" download -qq seabios) >"$work/dl.log" 2>&1 \
    || { cat "$work/dl.log" >&2; die "apt-get download seabios failed"; }
seabios_deb=$(ls "$work"/seabios/seabios_*.deb)
dpkg-deb -x "$seabios_deb" "$work/seabios/root"
cp "$work"/seabios/root/usr/share/seabios/*.bin "$prefix/share/qemu/"

qemu=$prefix/bin/qemu-system-x86_64
build_ok "$prefix" || die "built QEMU at $prefix is not >= $QEMU_MIN with vfio-user-pci" \
    "(see $qemu -device help)"
[[ $'\n'$("$qemu" -machine help) == *$'\n'"q35 "* ]] \
    || die "built QEMU at $prefix has no q35 machine"
# The firmware loads (QEMU stops at once when it cannot): start a q35 machine, CPUs halted.
rc=0
timeout 5 "$qemu" -machine q35 -accel tcg -nodefaults -display none -S >"$work/run.log" 2>&1 \
    || rc=$?
[ "$rc" = 124 ] || { cat "$work/run.log" >&2; die "built QEMU at $prefix does not start q35"; }
{ echo "qemu $QEMU_VERSION"; dpkg-deb -W --showformat='${Package} ${Version}\n' "$seabios_deb"
  echo "meson $meson_ver"; } > "$prefix/.ssdlab-versions"
log "built in $(( ($(date +%s) - started) / 60 )) min"
touch "$prefix/.ssdlab-complete"   # only a finished install is ever reused
echo "$qemu"
