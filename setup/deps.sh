#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Everything ssdlab needs, installed by the project itself: Debian packages, the Python
# virtualenv from requirements.lock, and Verilator >= 5.036 (built into a per-user cache when
# the system one is older). Quick when everything is already there.
set -euo pipefail
here=$(dirname "$0")
"$here/debian_packages.sh"
"$here/python.sh"
verilator=$("$here/verilator.sh")
echo "deps: $("$verilator" --version) at $verilator" >&2
