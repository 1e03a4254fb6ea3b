#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Install the Debian packages ssdlab needs, where missing. As root it runs apt-get; otherwise
# it names the missing packages and the command that installs them, and fails.
set -euo pipefail

# What each group is for:
#   python3-venv python3-dev   the project virtualenv; libpython for cocotb's embedding
#   build-essential zlib1g-dev Verilator-built simulators (C++ and their trace writers)
#   ccache                     objects every simulator build shares, compiled once
#   gcc-riscv64-unknown-elf    VexRiscv firmware (LiteX BIOS and ssdlab firmware)
#   meson ninja-build          picolibc build for LiteX software
#   libjson-c-dev libevent-dev litex_sim's simulation modules
#   gtkwave                    `make wave`
PACKAGES="python3-venv python3-dev build-essential zlib1g-dev ccache gcc-riscv64-unknown-elf
          meson ninja-build libjson-c-dev libevent-dev gtkwave"

missing=
for p in $PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing="$missing $p"
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null; then
    echo "debian_packages.sh: error: not a Debian system; install the equivalents of:" \
         "$missing" >&2
    exit 1
fi
if [ "$(id -u)" != 0 ]; then
    echo "debian_packages.sh: error: missing Debian packages: $missing" >&2
    echo "  run: sudo apt-get update && sudo apt-get install -y $missing" >&2
    exit 1
fi
echo "debian_packages.sh: installing $missing" >&2
apt-get update -qq >&2 || echo "debian_packages.sh: apt-get update failed; trying anyway" >&2
if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $missing \
        >/dev/null; then
    echo "debian_packages.sh: error: apt-get could not install: $missing" >&2
    echo "  (no network, or no package mirror?) run: apt-get install -y $missing" >&2
    exit 1
fi
