# SPDX-License-Identifier: BSD-2-Clause
"""Yosys synth_xilinx resource counts of the whole SoC (sw/ssdlab/flows/synth.py's flow).

    ssdlab synth --soc [--persona intel-750-400g] [--buf-kib 1024] [--tag-width 3]
                       [--max-transfer-kib 32] [--main-ram-kib 256]

The simulated drive's 16 MiB of on-chip buffer memory is a simulation convenience; a card
keeps its buffers in block RAM only in small configurations (or in DRAM, issue 7), so the
synthesised configuration is stated: persona, buffer size, tags, MDTS, firmware RAM. The
firmware image is left empty (its size does not change the ROM's block RAM). Results go to
build/synth/ssdlab_soc/report.json.
"""

import json
import shutil
from pathlib import Path

from sw.ssdlab.flows.synth import run_yosys

ROOT = Path(__file__).resolve().parents[3]


def synth_soc(persona="intel-750-400g", buf_kib=1024, tag_width=3, max_transfer_kib=32,
              main_ram_kib=256, family="xc7", echo=print):
    """Generate the SoC of `persona` with these buffer, tag, MDTS and firmware RAM sizes and
    synthesise it; writes build/synth/ssdlab_soc/report.json and returns the report."""
    from soc.sim_config import soc_config
    from sw.ssdlab.flows.sim_gateware import build
    params = dict(buf_size=buf_kib * 1024, tag_width=tag_width,
                  max_transfer=max_transfer_kib * 1024,
                  main_ram_size=main_ram_kib * 1024)
    cfg = soc_config(persona, params)
    out = ROOT / "build" / "synth" / "ssdlab_soc"
    gen = out / "gen"
    build(gen, cfg)
    from sw.ssdlab.flows.sim_build import build_firmware, write_rom_init
    write_rom_init(gen, build_firmware(gen, quiet=True))
    sources = []
    for p in [gen / "gateware" / "ssdlab_soc.v",
              *[Path(s) for s in (gen / "sources.txt").read_text().split()]]:
        shutil.copy(p, out / p.name)
        sources.append(p.name)
    for init in (gen / "gateware").glob("*.init"):
        shutil.copy(init, out / init.name)
    report = run_yosys(out, sources, "ssdlab_soc", family)
    report["config"] = {k: v for k, v in cfg.as_dict().items() if k != "notes"}
    (out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    echo(f"ssdlab_soc ({cfg.persona}: {cfg.n_channels} ch x {cfg.n_ways} ways, "
          f"{cfg.n_io_queues} I/O queues, {1 << cfg.tag_width} tags, MDTS "
          f"{cfg.max_transfer // 1024} KiB, buffer {cfg.buf_size // 1024} KiB, main RAM "
          f"{cfg.main_ram_size // 1024} KiB): {report['lut']} LUT, {report['ff']} FF, "
          f"{report['bram18']} BRAM18, {report['lutram']} LUTRAM, {report['carry4']} CARRY4")
    return report
