# SPDX-License-Identifier: BSD-2-Clause
"""The flows behind `ssdlab`'s front door: elaborate, lint, synth (cores, SoC, boards), the
simulated drive's build and launch, and the board build. Each module is a library; the command
line is `sw/ssdlab/cli.py`."""
