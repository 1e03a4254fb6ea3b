# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab board synth` (`make board-synth`): Yosys synth_xilinx resource estimate of a
board's whole SoC against the part's capacity.

    ssdlab board synth [--board xilinx_ac701 ...] [--channels 18 --ways 4] [--persona default]

Each board is generated (sw/ssdlab/flows/board.py, firmware built so the ROM is the real one if
the RISC-V toolchain is there, else empty: the ROM's block RAM is the same) and synthesised
with sw/ssdlab/flows/synth.py's flow (YoWASP Yosys, synth_xilinx -family xc7 / xcu / xcup,
flattened) in
build/synth/boards/<board>/. The PCIe hard IP is a black box (Vivado makes it; its block RAM
and the GT transceivers are not counted), so are LitePCIe's UltraScale support wrappers.
--channels/--ways override the connector's count, to size a configuration that no board's
connector carries (18 channels) on a part; on the cards without NAND (sqrl_acorn,
sqrl_xcu1525) they size the emulated array (nand_emulators and the LiteDRAM core on the
board's DDR PHY are in the count; the PHY's OSERDES/ISERDES/IDELAY cells are I/O primitives,
not LUTs). Pre-place-and-route counts from an open flow, not
Vivado's: they compare and bound, they do not promise a fit. A whole SoC takes tens of
minutes: run one at a time. Results: report.json per board and a table on stdout.
"""

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

from soc.targets import get_board

ROOT = Path(__file__).resolve().parents[3]

__all__ = ["synth_board", "table"]


def _counts(cells):
    def total(pattern):
        return sum(n for c, n in cells.items() if re.fullmatch(pattern, c))
    return {
        "lut": total(r"LUT[1-6]"),
        "ff": total(r"FD[A-Z]*"),
        "bram18": total(r"RAMB18E[12]") + 2 * total(r"RAMB36E[12]"),
        "uram": total(r"URAM288(_BASE)?"),
        "dsp": total(r"DSP48E[12]"),
        "lutram": total(r"RAM\d+[A-Z0-9]*"),          # RAM32M, RAM64X1D, ... (not RAMB)
        "carry": total(r"CARRY[48]"),
    }


def synth_board(name, channels=None, ways=None, persona=None, yosys_opts="", flatten=True):
    """Generate and synthesise board `name`; returns the report (counts, capacity, config).
    yosys_opts: extra synth_xilinx options (e.g. "-nolutram": Yosys 0.70's xcu LUT RAM
    mapping stops with "invalid OPTION_ABITS/WIDTH combination" on this SoC)."""
    from sw.ssdlab.flows.board import generate, lint_stubs
    from sw.ssdlab.flows.synth import run_yosys
    b = get_board(name)
    out = ROOT / "build" / "synth" / "boards" / name
    gen = out / "gen"
    overrides = {}
    if channels:
        overrides["n_channels"] = channels
    if ways:
        overrides["n_ways"] = ways
    if overrides:
        # More channels than the connector carries: size the logic, leave the pins (the ONFI
        # pad path, a few hundred LUT/FF a channel at most, is not counted), keep what the
        # board builds for the persona (NV-DDR2 engines and calibration on the ONFI boards).
        from sw.ssdlab.flows.board import board_config
        nvddr2 = board_config(b, persona).nvddr2_mode
        if nvddr2 is not None:
            overrides["nvddr2_mode"] = nvddr2
        b = replace(b, soc=dict(b.soc, **overrides), onfi=None, fmc=[])
    firmware = shutil.which("riscv64-unknown-elf-gcc") or shutil.which("riscv-none-elf-gcc")
    soc, gen = generate(b, gen, persona, firmware=bool(firmware), quiet=True)
    gw = gen / "gateware"
    ours = [gw / "ssdlab_soc.v", gw / "nand_subsystem.v"]
    if (gw / "onfi_board_phy.v").exists():
        ours.append(gw / "onfi_board_phy.v")
    # LiteX's sources besides ours: the CPU; LitePCIe's vendor wrappers are black boxes.
    extra = [Path(p) for p, *_ in soc.platform.sources
             if Path(p).suffix == ".v" and "litepcie" not in p and Path(p) not in ours]
    defined = set()
    for p in ours + extra:
        defined |= set(re.findall(r"^module\s+(\\?[\w.$]+)", p.read_text(), re.M))
    ip = [m for m in ("pcie_s7", "pcie_support") if m not in defined]
    stubs = lint_stubs(soc, defined)
    keep = []
    for block in re.split(r"(?m)^(?=module )", stubs):
        m = re.match(r"module (\S+)", block)
        if m and m[1] in ip:
            keep.append("(* blackbox *)\n" + block)
    out.mkdir(parents=True, exist_ok=True)
    (out / "ip_blackboxes.v").write_text("".join(keep))
    sources = []
    for p in ours + extra:
        shutil.copy(p, out / p.name)
        sources.append(p.name)
    sources.append("ip_blackboxes.v")
    for init in gw.glob("*.init"):
        shutil.copy(init, out / init.name)
    # The emulators stay one module each (synthesised once, counted per instance): 18 of them
    # flattened outgrow YoWASP's 4 GiB.
    keep = ("nand_emulator",) if soc.cfg.nand_model == "emulator" and flatten else ()
    r = run_yosys(out, sources, "ssdlab_soc", f"{b.family} {yosys_opts}".strip(),
                  flatten=flatten, keep=keep)
    report = dict(board=name, part=b.capacity["part"], family=b.family,
                  yosys_opts=yosys_opts, flatten=flatten, kept=list(keep),
                  firmware=bool(firmware), **_counts(r["cells"]),
                  capacity={k: v for k, v in b.capacity.items() if k != "part"},
                  config={k: v for k, v in soc.cfg.as_dict().items() if k != "notes"},
                  cells=r["cells"])
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def table(reports):
    """Markdown table: resource (used / capacity, %) per board and configuration."""
    rows = ["| board | part | configuration | LUT | FF | BRAM18 | DSP |",
            "|---|---|---|---|---|---|---|"]
    for r in reports:
        c = r["config"]
        conf = (f"{c['n_channels']} ch x {c['n_ways']} ways, {1 << c['tag_width']} tags, "
                f"MDTS {c['max_transfer'] // 1024} KiB, buffer {c['buf_size'] // 1024} KiB, "
                f"main RAM {c['main_ram_size'] // 1024} KiB")
        cells = [f"{r[k]} / {r['capacity'][k]} ({100 * r[k] / r['capacity'][k]:.0f} %)"
                 for k in ("lut", "ff", "bram18", "dsp")]
        rows.append(f"| {r['board']} | {r['part']} | {conf} | " + " | ".join(cells) + " |")
    return "\n".join(rows)
