#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Find or build the Linux guest image (kernel + initramfs) that QEMU boots to drive an NVMe
# device with the stock Linux nvme driver, and print the directory that holds it:
#
#   ~/.cache/ssdlab/linux-guest-<kernel>-<hash>/vmlinuz             Debian's stock kernel
#   ~/.cache/ssdlab/linux-guest-<kernel>-<hash>/initramfs.cpio.gz   /init, modules, tools
#   ~/.cache/ssdlab/linux-guest-<kernel>-<hash>/manifest.txt        every package and version
#
# Everything comes from the Debian release the machine runs (bookworm): the kernel the package
# linux-image-amd64 depends on (its vmlinuz and the modules the guest needs, unmodified), and
# busybox-static, nvme-cli, fio and e2fsprogs with only the shared libraries their binaries
# load. /init is sw/linux/init (see sw/linux/README.md). Packages are fetched with a private
# apt configuration (setup/apt_private.sh: own sources list, lists and cache, an empty dpkg
# status so the whole dependency closure is downloaded); the machine's apt set-up is read for
# its mirror and keyring but never changed, and nothing is installed: no root needed.
# <hash> covers this script, sw/linux/init and the package versions.
#
# Order: $SSDLAB_GUEST if set (a directory with those three files); the newest complete cached
# image built from the current script and init; otherwise build one into that cache (one to two
# minutes; downloads about 150 MB). `linux_guest.sh --update` looks up Debian's current versions
# first and builds a new image when they changed (a new kernel point release, say). Progress
# goes to stderr; stdout is the directory and nothing else, so callers can do
# GUEST=$(setup/linux_guest.sh).
set -euo pipefail

CACHE_ROOT=${SSDLAB_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ssdlab}
here=$(cd "$(dirname "$0")" && pwd)
init_src="$here/../sw/linux/init"
update=0
[ "${1:-}" = "--update" ] && update=1

log() { echo "linux_guest.sh: $*" >&2; }
die() { echo "linux_guest.sh: error: $*" >&2; exit 1; }

# What the guest runs, by Debian package; e2fsprogs' tools by name (its package has more).
USER_PKGS="busybox-static nvme-cli fio e2fsprogs"
USER_BINS="busybox nvme fio mke2fs e2fsck tune2fs dumpe2fs resize2fs"
# Modules loaded at boot (their dependencies are added from the modules' own depends= list):
#   nvme                the PCIe driver (nvme-core, t10-pi ... follow)
#   ext4                file system tests (jbd2, mbcache, crc16 follow)
#   qemu_fw_cfg         /sys/firmware/qemu_fw_cfg: the script QEMU passes with -fw_cfg
#   crc32c_generic      ext4's metadata checksums: a soft dependency (crypto-crc32c), by alias
#   crct10dif_generic crc64_rocksoft_generic   t10-pi's, also by alias (PI-formatted namespaces)
MODULES="crc32c_generic crct10dif_generic crc64_rocksoft_generic nvme ext4 qemu_fw_cfg"

# guest_ok DIR -> true when DIR holds a finished image.
guest_ok() {
    [ -s "$1/vmlinuz" ] && [ -s "$1/initramfs.cpio.gz" ] && [ -s "$1/manifest.txt" ]
}

if [ -n "${SSDLAB_GUEST:-}" ]; then
    guest_ok "$SSDLAB_GUEST" || die "SSDLAB_GUEST=$SSDLAB_GUEST lacks vmlinuz," \
        "initramfs.cpio.gz or manifest.txt; unset SSDLAB_GUEST to let this script build one"
    (cd "$SSDLAB_GUEST" && pwd); exit 0
fi

[ -r "$init_src" ] || die "$init_src is missing: run this script from an ssdlab checkout"
# The local inputs; a cached image is reused only when built from these very files.
local_hash=$(cat "$0" "$init_src" | sha256sum | cut -c1-16)

# cached_guest -> the newest complete cached image built from this script and init, if any.
cached_guest() {
    local stamp dir
    for stamp in $(ls -d "$CACHE_ROOT"/linux-guest-*/.ssdlab-complete 2>/dev/null | sort -rV); do
        dir=${stamp%/.ssdlab-complete}
        if guest_ok "$dir" && [ "$(cat "$dir/.ssdlab-inputs" 2>/dev/null)" = "$local_hash" ]; then
            echo "$dir"; return 0
        fi
    done
    return 1
}
[ "$update" = 0 ] && cached_guest && exit 0

# One build per machine at a time: a second clone waits, then reuses the first one's image.
mkdir -p "$CACHE_ROOT"
exec 9>"$CACHE_ROOT/linux-guest.lock"
flock 9
[ "$update" = 0 ] && cached_guest && exit 0

[ -r /etc/debian_version ] && command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null \
    || die "not a Debian system: the guest image is built from Debian packages; build one on" \
           "Debian 12 and set SSDLAB_GUEST=<its directory>"
[ "$(dpkg --print-architecture)" = amd64 ] || die "the guest is x86-64 (QEMU q35) and is" \
    "built from amd64 packages; this machine is $(dpkg --print-architecture): build the image" \
    "on an amd64 Debian machine and set SSDLAB_GUEST=<its directory>"

work=$(mktemp -d "${TMPDIR:-/tmp}/ssdlab-guest.XXXXXX")
trap 'rm -rf "$work"' EXIT
. "$here/apt_private.sh"
apt_private_init "$work/apt"
suite=$(apt_machine_suite)
log "looking up Debian $suite packages on $APT_MIRROR"
apt_private_sources deb "$suite" \
    || die "apt-get update of Debian $suite failed: $(tail -n2 "$APT_WORK/update.err")"
# The empty dpkg status makes apt resolve (and download) each package's whole closure.
apt_opts=("${APT_PRIVATE[@]}" -o "Dir::State::status=$APT_WORK/status")

# The stock kernel: the linux-image-<abi>-amd64 package the meta-package depends on.
kpkg=$(apt-cache "${apt_opts[@]}" depends linux-image-amd64 2>/dev/null \
       | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
[ -n "$kpkg" ] || die "Debian $suite has no linux-image-amd64 depending on a kernel image"
kver=${kpkg#linux-image-}

log "downloading $kpkg and $USER_PKGS with their dependencies"
mkdir -p "$work/kdeb"
(cd "$work/kdeb" && apt-get "${apt_opts[@]}" download -qq "$kpkg") >"$work/dl.log" 2>&1 \
    || { cat "$work/dl.log" >&2; die "apt-get download $kpkg failed"; }
apt-get "${apt_opts[@]}" install --download-only -y -qq --no-install-recommends $USER_PKGS \
    >"$work/dl.log" 2>&1 || { cat "$work/dl.log" >&2; die "apt-get download of $USER_PKGS failed"; }
kdeb=$(ls "$work"/kdeb/*.deb)
debs=$(ls "$APT_WORK"/cache/archives/*.deb)

# pkgver DEB -> "package version"
pkgver() { dpkg-deb -W --showformat='${Package} ${Version}' "$1"; }
versions=$( { for d in $kdeb $debs; do pkgver "$d"; done; } | sort)
hash=$( { cat "$0" "$init_src"; echo "$versions"; } | sha256sum | cut -c1-12)
out="$CACHE_ROOT/linux-guest-$kver-$hash"
if [ -f "$out/.ssdlab-complete" ] && guest_ok "$out"; then
    echo "$local_hash" > "$out/.ssdlab-inputs"
    log "up to date: $out"; echo "$out"; exit 0
fi
log "building $out"

# Unpack: the kernel alone; the user-space closure into one tree, remembering which package
# each file comes from (for the manifest).
kroot="$work/kernel" proot="$work/pkgs" img="$work/img"
mkdir -p "$kroot" "$proot" "$img"
dpkg-deb -x "$kdeb" "$kroot"
: > "$work/owners"
for d in $debs; do
    dpkg-deb -x "$d" "$proot"
    pv=$(pkgver "$d")
    dpkg-deb --fsys-tarfile "$d" | tar -t | sed -e 's|^\./|/|' -e "s|\$|	$pv|" >> "$work/owners"
done
# owner PATH -> "package version" of the package that ships PATH (/usr/bin/fio)
owner() { awk -F'\t' -v p="$1" '$1 == p { print $2; exit }' "$work/owners"; }

mkdir -p "$img"/{bin,sbin,usr/bin,usr/sbin,lib64,etc,proc,sys,dev,tmp,run,mnt,root}
: > "$work/used"    # "package version<TAB>path" of every file copied from a package

# copy_file PATH: a file of the unpacked packages into the image at the same path (symlinks
# followed: a library is stored under the name the loader asks for).
in_root() {   # PATH -> the file PATH ends at, symlinks followed inside $proot (some are absolute)
    local p=$1 t n=0
    while [ -L "$proot$p" ] && [ $((n += 1)) -lt 20 ]; do
        t=$(readlink "$proot$p")
        case $t in /*) p=$t;; *) p=$(realpath -ms "$(dirname "$p")/$t");; esac
    done
    echo "$p"
}
copy_file() {
    local real
    real=$proot$(in_root "$1")
    [ -f "$real" ] || die "$1 is not in the unpacked packages"
    mkdir -p "$img$(dirname "$1")"
    cp "$real" "$img$1"
    printf '%s\t%s\n' "$(owner "${real#"$proot"}")" "$1" >> "$work/used"
}

# --- User space: the binaries and the libraries the loader maps for them -----------------
ldso="$proot/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
[ -x "$ldso" ] || die "libc6 of Debian $suite did not unpack a loader at ${ldso#"$proot"}"
# Every directory of the unpacked tree that holds shared libraries (ceph's private one too),
# so that the loader resolves everything inside the tree and never on this machine.
libpath=$(find "$proot" -name '*.so*' -printf '%h\n' | sort -u | paste -sd:)
for b in $USER_BINS; do
    path=
    for dir in /sbin /bin /usr/sbin /usr/bin; do
        [ -f "$proot$dir/$b" ] && { path=$dir/$b; break; }
    done
    [ -n "$path" ] || die "no $b in the unpacked packages ($USER_PKGS)"
    copy_file "$path"
    # --verify: 0 for a dynamically linked program, 2 for a static one (busybox)
    rc=0; "$ldso" --verify "$proot$path" >/dev/null 2>&1 || rc=$?
    [ "$rc" = 0 ] || continue
    "$ldso" --inhibit-cache --library-path "$libpath" --list "$proot$path" \
        > "$work/ldd" 2>&1 || { cat "$work/ldd" >&2; die "cannot resolve the libraries of $path"; }
    grep -q 'not found' "$work/ldd" && { cat "$work/ldd" >&2; die "$path: library not found"; }
    awk '$2 == "=>" && $3 ~ /^\// { print $3 }' "$work/ldd" > "$work/libs"
    while read -r lib; do
        case $lib in
            "$proot"/*) ;;
            *) die "$path: $lib resolved outside the unpacked packages";;
        esac
        [ -e "$img${lib#"$proot"}" ] || copy_file "${lib#"$proot"}"
    done < "$work/libs"
done
# The program interpreter every binary names.
ln -sf /lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 "$img/lib64/ld-linux-x86-64.so.2"
ln -s mke2fs "$img/sbin/mkfs.ext4"
ln -s e2fsck "$img/sbin/fsck.ext4"
copy_file /etc/mke2fs.conf        # mke2fs' ext4 defaults (features, inode size)
ln -s /proc/mounts "$img/etc/mtab"   # mke2fs and e2fsck refuse mounted devices by it
# busybox for the rest (sh, mount, insmod, poweroff, dmesg ...), never shadowing a real tool.
"$proot/bin/busybox" --list-full | while read -r a; do
    name=${a##*/}
    for dir in sbin bin usr/sbin usr/bin; do [ -e "$img/$dir/$name" ] && continue 2; done
    mkdir -p "$img/$(dirname "$a")"
    ln -s /bin/busybox "$img/$a"
done

# --- Kernel modules: the list above and what they depend on, in load order -----------------
mdir=/lib/modules/$kver
[ -f "$kroot$mdir/modules.order" ] || die "$kpkg has no $mdir/modules.order"
# Debian ships no modules.dep (depmod runs at installation): each module's .modinfo holds
# depends=, the modules whose symbols it uses.
mod_file() {   # NAME -> its path under $mdir, by modules.order (- and _ are the same)
    local n
    n=$(echo "$1" | sed 's/[-_]/[-_]/g')
    grep -E "/${n}\.ko(\.(xz|gz|zst))?\$" "$kroot$mdir/modules.order" | head -n1 || true
}
mod_depends() {   # PATH -> its depends= names
    tr '\0' '\n' < "$img$mdir/$1" | sed -n 's/^depends=//p' | tr ',' ' '
}
: > "$work/modorder"
add_module() {   # NAME: its dependencies first, then itself (once)
    local f d
    f=$(mod_file "$1")
    [ -n "$f" ] || die "$kpkg has no module $1 (is it built in? see $mdir/modules.builtin)"
    grep -qxF "${f%.ko*}.ko" "$work/modorder" && return 0
    mkdir -p "$img$mdir/$(dirname "$f")"
    case $f in
        *.ko) cp "$kroot$mdir/$f" "$img$mdir/$f";;
        # busybox insmod may not read compressed modules: unpack with the image's busybox
        *.ko.xz) "$proot/bin/busybox" unxz -c "$kroot$mdir/$f" > "$img$mdir/${f%.xz}";;
        *.ko.gz) "$proot/bin/busybox" gunzip -c "$kroot$mdir/$f" > "$img$mdir/${f%.gz}";;
        *) die "$f: compressed in a form this script does not unpack; extend add_module";;
    esac
    f=${f%.ko*}.ko
    for d in $(mod_depends "$f"); do add_module "$d"; done
    grep -qxF "$f" "$work/modorder" || echo "$f" >> "$work/modorder"
}
for m in $MODULES; do add_module "$m"; done
mkdir -p "$img/etc/ssdlab"
cp "$work/modorder" "$img/etc/ssdlab/modules"    # what /init loads, in this order
# A modules.dep for these modules, so that busybox modprobe works by hand in the guest.
while read -r f; do
    echo "$f: $(for d in $(mod_depends "$f"); do mod_file "$d"; done | sed 's/\.\(xz\|gz\|zst\)$//' \
                | paste -sd' ')"
done < "$work/modorder" | sed 's/ $//' > "$img$mdir/modules.dep"
cp "$kroot$mdir/modules.builtin" "$kroot$mdir/modules.order" "$img$mdir/"

# --- /init and the archive --------------------------------------------------------------------
cp "$init_src" "$img/init"
chmod 755 "$img/init"
busybox="$proot/bin/busybox"   # its cpio writes newc archives: no cpio needed on this machine
# One time stamp for every file, so that the same packages give the same archive for everyone.
find "$img" -exec touch -h -d @0 {} +
(cd "$img" && find . -mindepth 1 | LC_ALL=C sort \
    | "$busybox" cpio -o -H newc -R 0:0 --ignore-devno --renumber-inodes 2>/dev/null) \
    | gzip -9n > "$work/initramfs.cpio.gz"
[ -s "$work/initramfs.cpio.gz" ] || die "packing the initramfs failed"

# --- Manifest ----------------------------------------------------------------------------------
kver_pkg=$(pkgver "$kdeb")
{
    echo "# ssdlab Linux guest, built by setup/linux_guest.sh from Debian $suite ($(date -u +%F))"
    echo "kernel $kver"
    echo "inputs $hash (local $local_hash)"
    echo "vmlinuz $(stat -c %s "$kroot/boot/vmlinuz-$kver") bytes"
    echo "initramfs.cpio.gz $(stat -c %s "$work/initramfs.cpio.gz") bytes" \
         "($(du -sb "$img" | cut -f1) bytes unpacked)"
    echo
    echo "# Packages whose files are in the image (package version: files)"
    echo "$kver_pkg: /boot/vmlinuz-$kver $(paste -sd' ' "$work/modorder")"
    sort "$work/used" | awk -F'\t' '
        $1 != cur { if (cur != "") print cur ":" files; cur = $1; files = "" }
        { files = files " " $2 }
        END { if (cur != "") print cur ":" files }'
    echo
    echo "# Downloaded: $kpkg alone, and the closure of $USER_PKGS (to resolve the libraries)"
    echo "$versions" | sed 's/^/  /'
} > "$work/manifest.txt"
grep -q '^	' "$work/used" && die "no package ships these files:" $(grep '^	' "$work/used")

rm -rf "$out"
mkdir -p "$out"
cp "$kroot/boot/vmlinuz-$kver" "$out/vmlinuz"
mv "$work/initramfs.cpio.gz" "$work/manifest.txt" "$out/"
echo "$local_hash" > "$out/.ssdlab-inputs"
guest_ok "$out" || die "image at $out is incomplete"
touch "$out/.ssdlab-complete"   # only a finished image is ever reused
log "kernel $kver, initramfs $(du -h "$out/initramfs.cpio.gz" | cut -f1)"
echo "$out"
