# SPDX-License-Identifier: BSD-2-Clause
"""The simulated drive's firmware image and Verilator model: `build_firmware`, `write_rom_init`
and `build_model` (the SoC's Verilog and the harness, sim/harness/ssdlab_sim.cpp), into the
build directory that sw.ssdlab.flows.sim_gateware generated (`ssdlab sim build` runs them).

The binary is <out>/obj/ssdlab_sim; <out>/gateware/ssdlab_soc_rom.init holds the firmware
(rewritten at every start without rebuilding the model).
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from sim.nand.fast_sources import DPI_SOURCES

ROOT = Path(__file__).resolve().parents[3]
HARNESS = ROOT / "sim" / "harness"
NAND_CPP = ROOT / "sim" / "nand" / "cpp"

__all__ = ["build_model", "pgo_rebuild", "write_rom_init", "build_firmware", "verilator",
           "drop_precompiled_headers"]

# gcc profile-guided optimisation of the model (`ssdlab sim build --pgo`): build_model(pgo=True)
# builds it instrumented, a training run writes its .gcda files next to the objects, and
# pgo_rebuild() compiles the same C++ again with the profile.
PGO_GENERATE = "-fprofile-generate -fprofile-update=single"
PGO_USE = ("-fprofile-use -fprofile-partial-training -Wno-missing-profile "
           "-Wno-coverage-mismatch")  # inline functions seen by several objects


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
    text = "".join(f"{w:08x}\n" for w in words)
    if not path.exists() or path.read_text() != text:
        # a harness of this build starting now reads the old file or the new, never half
        tmp = path.with_suffix(f".init.{os.getpid()}")
        tmp.write_text(text)
        tmp.replace(path)
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


def use_ccache():
    """Verilator's make rules put $OBJCACHE before each compiler call: with ccache there,
    the objects every build shares (Verilator's runtime, cocotb's main, the drive harness and
    its DPI models) compile once per machine instead of once per build, about 10 s of CPU
    each; a test suite builds some fifty models. An OBJCACHE already set (empty: off) is
    kept. Files compiled with the precompiled header pass through uncached."""
    if "OBJCACHE" not in os.environ and shutil.which("ccache"):
        os.environ["OBJCACHE"] = "ccache"
        # a smoke run's objects take about 400 MB; bounded on a small CI disk
        os.environ.setdefault("CCACHE_MAXSIZE", "1G")


def drop_precompiled_headers(obj_dir):
    """Delete the precompiled headers a finished Verilator build leaves in obj_dir: Verilator
    5.0xx's make rules precompile its runtime headers twice per build (fast and slow flags,
    about 70 MB each), used only while compiling. Kept, a test suite's few hundred builds
    fill a CI machine's disk; a later build of the same directory compiles them again."""
    for path in Path(obj_dir).glob("*.gch"):
        path.unlink(missing_ok=True)


def _cflags(profile=False):
    return f"-O2 -I{ROOT / 'sim' / 'bridge'} -I{NAND_CPP}" + (" -g" if profile else "")


def build_model(out, trace=False, jobs=2, profile=False, pgo=False):
    """Verilate and compile the drive into <out>/obj/ssdlab_sim. profile: the profiling variant
    of `ssdlab sim profile` (same RTL; --prof-cfuncs names every function after its source
    file and line, -g for perf's symbols). pgo: instrumented for gcc's profile-guided
    optimisation (run it, then `pgo_rebuild`)."""
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
           "--noassert", "-CFLAGS", _cflags(profile) + (f" {PGO_GENERATE}" if pgo else ""),
           "-MAKEFLAGS", "OPT_FAST=-O2"]
    if pgo:
        cmd += ["-LDFLAGS", PGO_GENERATE]
    if profile:
        # named functions for perf, without gprof's -pg: an mcount call in each of the
        # thousands of small functions would dominate the profile
        cmd += ["--prof-cfuncs", "-MAKEFLAGS", "VM_PROFC=0"]
    if trace:
        cmd += ["--trace-fst", "--trace-structs"]
    cmd += [str(s) for s in sources]
    print("sw.ssdlab.flows.sim_build:", " ".join(cmd[:12]), "...", file=sys.stderr)
    use_ccache()
    subprocess.run(cmd, check=True)
    drop_precompiled_headers(obj)
    return obj / "ssdlab_sim"


def pgo_rebuild(out, jobs=2):
    """Compile the instrumented model of <out>/obj again with the profile its training run
    left there (.gcda files); the same Verilated C++, so the same model, only faster."""
    obj = Path(out).resolve() / "obj"
    gcda = list(obj.glob("*.gcda"))
    if not gcda:
        raise SystemExit(f"sw.ssdlab.flows.sim_build: no profile (.gcda) in {obj}: run the "
                         "instrumented model first")
    for p in [*obj.glob("*.o"), *obj.glob("*.a"), *obj.glob("*.gch"), obj / "ssdlab_sim"]:
        p.unlink(missing_ok=True)
    print(f"sw.ssdlab.flows.sim_build: rebuilding {obj} with the profile of {len(gcda)} "
          "objects", file=sys.stderr)
    use_ccache()
    subprocess.run(["make", "-C", str(obj), "-j", str(jobs), "-f", "Vssdlab_sim_top.mk",
                    f"VM_USER_CFLAGS={_cflags()} {PGO_USE}", "VM_USER_LDLIBS=", "ssdlab_sim"],
                   check=True, stdout=subprocess.DEVNULL)
    drop_precompiled_headers(obj)
    return obj / "ssdlab_sim"
