# SPDX-License-Identifier: BSD-2-Clause
"""`make wave T=<test>`: run one test with WAVES=1, then open its FST in GTKWave.

A test directory may hold `<core>.gtkw`, a saved GTKWave layout; it is opened with the trace.
Without a display (no $DISPLAY) the trace path and the GTKWave command are printed instead.
"""

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BUILD_ROOT = REPO / "build" / "sim"


def main(argv):
    if len(argv) != 1 or argv[0] == "tests":
        sys.exit("usage: make wave T=<test file or node id>, e.g. "
                 "T=tests/nand/onfi_sdr_engine/test_onfi_sdr_engine.py::"
                 "test_onfi_sdr_engine[1]")
    target = argv[0]
    start = time.time()
    env = {**os.environ, "WAVES": "1"}
    # One process: the trace must belong to the test just run, not to a parallel worker's.
    result = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-m",
                             "smoke or full", target], cwd=REPO, env=env)
    traces = sorted((p for p in BUILD_ROOT.glob("*/run/*/dump.fst")
                     if p.stat().st_mtime >= start), key=lambda p: p.stat().st_mtime)
    if not traces:
        sys.exit(f"wave: {target} wrote no FST trace (exit {result.returncode})")
    trace = traces[-1]
    if len(traces) > 1:
        print(f"wave: {len(traces)} traces written, opening the newest: {trace}")
    test_dir = REPO / target.split("::")[0]
    test_dir = test_dir if test_dir.is_dir() else test_dir.parent
    core = trace.parents[2].name.split("-")[0]
    layout = test_dir / f"{core}.gtkw"
    cmd = ["gtkwave", str(trace)] + ([str(layout)] if layout.exists() else [])
    if not os.environ.get("DISPLAY") or not shutil.which("gtkwave"):
        print("wave: trace at", trace)
        print("wave: no display or no gtkwave; open it with:", " ".join(cmd))
        return
    subprocess.run(cmd, check=False)


if __name__ == "__main__":
    main(sys.argv[1:])
