# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab lint` (`make lint`): Verilator lint (-Wall) of every catalogued core's generated Verilog.

Each core is elaborated with its default parameters into build/lint/<core>.v and linted on its
own. A warning fails the run. Waivers: rtl/lint.vlt for patterns the generators emit by
construction, and a core's own <core>.vlt beside its source for its deliberate exceptions.
"""

import importlib
import subprocess
from pathlib import Path

from sw.ssdlab.flows.elaborate import CATALOGUE

REPO = Path(__file__).resolve().parents[3]

WAIVERS = REPO / "rtl" / "lint.vlt"


def lint(core, out_dir: Path, verilator: str) -> bool:
    source = out_dir / f"{core.toplevel}.v"
    source.write_text(core.verilog())
    # A core's own deliberate exceptions live beside it, as <core>.vlt, each with its reason.
    own = Path(importlib.import_module(core.factory.partition(":")[0]).__file__) \
        .with_suffix(".vlt")
    # A core built from vendor primitives lists port-compatible models of them, for lint only.
    cells = getattr(importlib.import_module(core.factory.partition(":")[0]),
                    "LINT_BLACKBOXES", None)
    if cells:
        (out_dir / f"{core.toplevel}_cells.v").write_text(cells)
    cmd = [verilator, "--lint-only", "-Wall", "--top-module", core.toplevel, str(WAIVERS),
           *([str(own)] if own.exists() else []), str(source),
           *([str(out_dir / f"{core.toplevel}_cells.v")] if cells else [])]
    result = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    status = "clean" if result.returncode == 0 else "FAILED"
    print(f"lint {core.toplevel} {core.params or '(defaults)'}: {status}")
    if result.returncode:
        print(result.stdout)
    return result.returncode == 0


def lint_all(verilator: str, cores=None) -> int:
    """Lint `cores` (names; default every catalogued core); returns how many have warnings."""
    out_dir = REPO / "build" / "lint"
    out_dir.mkdir(parents=True, exist_ok=True)
    results = [lint(CATALOGUE[name], out_dir, verilator) for name in cores or CATALOGUE]
    return results.count(False)
