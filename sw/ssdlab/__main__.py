# SPDX-License-Identifier: BSD-2-Clause
"""`python -m sw.ssdlab ...` from the repository root: the ssdlab command line."""

from sw.ssdlab.cli import main

main(prog_name="python -m sw.ssdlab")
