# SPDX-License-Identifier: BSD-2-Clause
"""Build the simulated drive: SoC Verilog (sw.ssdlab.flows.sim_gateware), firmware image, Verilator model and
harness (sim/harness/ssdlab_sim.cpp), into one directory.

    python -m sw.ssdlab.flows.sim_build --out build/sim/drive [--persona default] [--trace]

The binary is <out>/obj/ssdlab_sim; <out>/gateware/ssdlab_soc_rom.init holds the firmware
(rewritten by `--firmware-only` without rebuilding the model).
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from sim.nand.fast_sources import DPI_SOURCES

ROOT = Path(__file__).resolve().parents[3]
HARNESS = ROOT / "sim" / "harness"
NAND_CPP = ROOT / "sim" / "nand" / "cpp"

__all__ = ["build_model", "write_rom_init", "build_firmware", "verilator"]


def verilator():
    if os.environ.get("VERILATOR"):
        return os.environ["VERILATOR"]
    return subprocess.run([str(ROOT / "setup" / "verilator.sh")], check=True,
                          capture_output=True, text=True).stdout.strip()


def build_firmware(out, quiet=False):
    """make -C sw/firmware against this build's generated headers; returns firmware.bin."""
    fw_build = Path(out).resolve() / "firmware"
    inc = Path(out).resolve() / "software" / "include"
    subprocess.run(["make", "-C", str(ROOT / "sw" / "firmware"), "-j1",
                    f"BUILD={fw_build}", f"GEN_INC={inc}"], check=True,
                   stdout=subprocess.DEVNULL if quiet else None)
    return fw_build / "firmware.bin"


def write_rom_init(out, firmware_bin, rom_bytes=128 * 1024):
    """The ROM's $readmemh file from a firmware image (little-endian 32-bit words)."""
    data = Path(firmware_bin).read_bytes()
    if len(data) > rom_bytes:
        raise SystemExit(f"sw.ssdlab.flows.sim_build: firmware is {len(data)} bytes, the ROM holds "
                         f"{rom_bytes}")
    data += bytes(-len(data) % 4)
    words = [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    words += [0] * (rom_bytes // 4 - len(words))
    path = Path(out) / "gateware" / "ssdlab_soc_rom.init"
    path.write_text("".join(f"{w:08x}\n" for w in words))
    return path


def absolute_memory_inits(out):
    """LiteX names the memories' init files relative to the build directory: make them
    absolute, so the harness runs from anywhere."""
    gw = (Path(out) / "gateware").resolve()
    v = gw / "ssdlab_soc.v"
    text = v.read_text()
    new = text
    for name in ("rom", "sram", "main_ram", "mem"):
        new = new.replace(f'$readmemh("ssdlab_soc_{name}.init"',
                          f'$readmemh("{gw}/ssdlab_soc_{name}.init"')
    if new != text:
        v.write_text(new)


def build_model(out, trace=False, jobs=2):
    out = Path(out).resolve()
    gw = out / "gateware"
    absolute_memory_inits(out)
    sources = [gw / "ssdlab_sim_top.sv", gw / "ssdlab_soc.v"]
    sources += [Path(p) for p in (out / "sources.txt").read_text().split()]
    sources += [*DPI_SOURCES, HARNESS / "ssdlab_sim.cpp"]
    obj = out / "obj"
    cmd = [verilator(), "--cc", "--exe", "--build", "-j", str(jobs),
           "--top-module", "ssdlab_sim_top", "--prefix", "Vssdlab_sim_top",
           "--Mdir", str(obj), "-o", "ssdlab_sim",
           "-Wno-fatal", "-Wno-lint", "-Wno-style", "-Wno-MULTIDRIVEN", "-Wno-TIMESCALEMOD",
           "--timescale", "1ns/1ps", "-O3", "--x-assign", "fast", "--x-initial", "fast",
           "--noassert", "-CFLAGS", f"-O2 -I{ROOT / 'sim' / 'bridge'} -I{NAND_CPP}",
           "-MAKEFLAGS", "OPT_FAST=-O2"]
    if trace:
        cmd += ["--trace-fst", "--trace-structs"]
    cmd += [str(s) for s in sources]
    print("sw.ssdlab.flows.sim_build:", " ".join(cmd[:12]), "...", file=sys.stderr)
    subprocess.run(cmd, check=True)
    return obj / "ssdlab_sim"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "sim" / "drive")
    ap.add_argument("--json", type=Path, help="SocConfig parameters as JSON (default: the "
                    "default persona's)")
    ap.add_argument("--persona", default=None, help="persona name (personas/*.yaml)")
    ap.add_argument("--trace", action="store_true", help="build with FST tracing")
    ap.add_argument("--firmware-only", action="store_true",
                    help="rebuild the firmware and its ROM image only")
    ap.add_argument("--no-firmware", action="store_true", help="leave the ROM empty")
    args = ap.parse_args(argv)
    from soc.sim_config import soc_config
    from sw.ssdlab.flows.sim_gateware import build as soc_build
    if not args.firmware_only:
        params = json.loads(args.json.read_text()) if args.json else None
        cfg = soc_config(args.persona, params)
        soc_build(args.out, cfg)
    if not args.no_firmware:
        write_rom_init(args.out, build_firmware(args.out))
    if not args.firmware_only:
        binary = build_model(args.out, trace=args.trace)
        print(f"sw.ssdlab.flows.sim_build: {binary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
