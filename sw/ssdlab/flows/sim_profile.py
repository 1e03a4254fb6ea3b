# SPDX-License-Identifier: BSD-2-Clause
"""Where the wall time of the simulated drive goes: `ssdlab sim profile` (`make profile`).

    ssdlab sim profile [--persona P] [--channels N] [--ways N] [--blocks-per-plane N]
                       [--fill-kib N] [--write-ios N] [--read-ios N] [--json FILE]

It builds the drive's profiling variant (`build_drive(profile=True)`: the same RTL, Verilator
--prof-cfuncs so every function of the model is named after its source file and line, and -g;
its own directory drive-<hash>-prof), starts it, opens it through libssdlab (the `drive bench`
path), then runs a fixed workload under `perf record -e cpu-clock` attached to the harness:

    fill      128 KiB sequential write, QD 8, over the region (maps it for the reads)
    seqwrite  128 KiB sequential write, QD 8, `write_ios` I/Os
    randread  4 KiB random read, QD 32, `read_ios` I/Os over the region

and prints each group's share of the wall time: the harness's CPU time (from /proc, the
child's rusage) split by its perf samples into the Verilated modules (by source module: the
LiteX SoC's parts, VexRiscv, each Amaranth core of nand_subsystem.v, the sim top), Verilator's
scheduler and library, the C++ die models, the harness and bridge, kernel and libc; the host
process's own CPU time (this process: libssdlab); and the rest (waiting, scheduling). Then the
speed of the run: cycles, simulated time and I/Os per wall second.

`parse_perf_report` and `group_samples` are the pure part (tests/sw/ssdlab/sim_profile).
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["Phase", "default_workload", "parse_perf_report", "source_map", "classify",
           "group_samples", "profile", "format_report"]


# The workload -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Phase:
    """One `sl_bench` run: name, write or read, random or sequential, bytes per I/O, QD,
    I/Os, first LBA and region (in LBAs)."""
    name: str
    write: bool
    random: bool
    bs: int
    qd: int
    ios: int
    lba: int = 0
    count: int = 0

    def describe(self):
        kind = ("rand" if self.random else "seq ") + ("write" if self.write else "read")
        return (f"{self.name:9s} {self.bs // 1024:4d} KiB {kind:9s} QD {self.qd:2d}, "
                f"{self.ios} I/Os over LBA {self.lba} + {self.count}")


def default_workload(lba_bytes, fill_kib=1024, write_ios=48, read_ios=800):
    """The fixed workload: fill `fill_kib` KiB (a multiple of 128, >= 128), then `write_ios`
    128 KiB sequential writes at QD 8 (>= 0) and `read_ios` 4 KiB random reads at QD 32
    (>= 0) over the filled region."""
    if fill_kib < 128 or fill_kib % 128:
        raise ValueError(f"fill_kib={fill_kib}: must be a multiple of 128, at least 128")
    if write_ios < 0 or read_ios < 0:
        raise ValueError(f"write_ios={write_ios}, read_ios={read_ios}: must be >= 0")
    count = fill_kib * 1024 // lba_bytes
    phases = [Phase("fill", True, False, 131072, 8, fill_kib // 128, 0, count)]
    if write_ios:
        phases.append(Phase("seqwrite", True, False, 131072, 8, write_ios, 0, count))
    if read_ios:
        phases.append(Phase("randread", False, True, 4096, 32, read_ios, 0, count))
    return phases


# perf report parsing and grouping -----------------------------------------------------------

# `perf report --stdio --no-children --sort dso,sym`:  "  12.34%  ssdlab_sim  [.] symbol"
_PERF_LINE = re.compile(r"^\s*([0-9.]+)%\s+(\S+)\s+\[([.kgu])\]\s+(.*?)\s*$")


def parse_perf_report(text):
    """[(percent, dso, symbol)] of a `perf report --stdio --no-children --sort dso,sym`
    listing (comment and blank lines skipped)."""
    rows = []
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _PERF_LINE.match(line)
        if m:
            rows.append((float(m.group(1)), m.group(2), m.group(4)))
    return rows


def _litex_part(names):
    """The LiteX/Migen part of ssdlab_soc.v that a statement's assigned signals belong to."""
    votes = {}
    for n in names:
        n = n.lstrip("\\")
        if n.startswith("soc_nvme_"):
            part = "nvme_" + n.split("_")[2]
        elif n.startswith(("litepcie", "soc_packetizer", "soc_depacketizer", "soc_slave",
                           "soc_master", "soc_cpl", "soc_cmd", "soc_pcie", "pcie")):
            part = "litepcie"
        elif n.startswith(("csr_", "soc_csr")):
            part = "csr banks"
        elif n.startswith("soc_nand"):
            part = "nand wrapper"
        elif n == "buf_mem":
            part = "data buffer memory (buf_mem)"
        elif n.startswith(("storage", "mem", "rom", "sram", "main_ram")) or n.endswith(
                ("_pages", "_table", "_map", "_entries")):
            part = "memories and FIFO storage"
        elif n.startswith(("cases_", "rhs_", "self", "lhs_")):
            continue            # Migen's temporaries say nothing
        else:
            part = "soc (bus, RAM, UART, timer, misc)"
        votes[part] = votes.get(part, 0) + 1
    if not votes:
        return "soc (bus, RAM, UART, timer, misc)"
    return max(votes, key=votes.get)         # a tie: the first name in order


_ASSIGNED = re.compile(r"^\s*(\\?[A-Za-z_][\w$.]*)\s*(?:\[[^\]]*\])*\s*<?=")
_MODULE = re.compile(r"^\s*module\s+(\\?\S+?)\s*[(#;]")


def source_map(paths):
    """{sanitised file name: [group of each line (1-based; index 0 unused)]} for the model's
    Verilog sources: the Verilog module a line lies in (an Amaranth core of nand_subsystem.v,
    its channel and queue indices dropped), or for the flat LiteX ssdlab_soc.v the part whose
    signals the statement starting at that line assigns."""
    out = {}
    for p in map(Path, paths):
        if p.suffix not in (".v", ".sv") or not p.exists():
            continue
        lines = p.read_text(errors="replace").splitlines()
        key = re.sub(r"[^A-Za-z0-9_]", "_", p.stem)
        groups = [""] * (len(lines) + 2)
        if p.stem == "ssdlab_soc":
            for i in range(len(lines)):
                names = []
                for j in range(i, min(i + 40, len(lines))):
                    if j > i and re.match(r"^(always|assign|end$)", lines[j]):
                        break
                    m = _ASSIGNED.match(lines[j])
                    if m:
                        names.append(m.group(1))
                groups[i + 1] = "litex: " + _litex_part(names)
        else:
            module = p.stem
            for i, line in enumerate(lines):
                m = _MODULE.match(line)
                if m:
                    module = m.group(1).lstrip("\\")
                groups[i + 1] = module
            if p.stem == "nand_subsystem":
                groups = ["amaranth: " + re.sub(r"\d+(?=\.|$)", "", g) if g else g
                          for g in groups]
            elif p.stem == "VexRiscv":
                groups = ["VexRiscv"] * len(groups)
            elif p.stem.startswith("nand_die_fast"):
                groups = ["nand_die_fast.sv (die wrapper)"] * len(groups)
            else:
                groups = [f"{p.stem}.sv"] * len(groups)
        out[key] = groups
    return out


_PROF = re.compile(r"__PROF__([A-Za-z0-9_]+?)__l(\d+)")
_REGION = re.compile(r"___(ico|act|nba|stl)_(sequent|comb)")

DIE_MODEL = re.compile(r"nandfast::|nand_die_fast_|NandDie|nand_die_|OnfiTiming|onfi_timing|"
                       r"nand_part|NandPart|nand_random|NandRandom|nand_hash")
HARNESS = re.compile(r"(^|::)Drive::|tlp_beats|TlpBeats|PcieLinkPacer|LinkPacer|^main$|serve_|"
                     r"^Bridge|bridge_|handle_request|^(std::)?vector<Tlp")


def classify(dso, sym, smap=None):
    """(group, region) of one perf row: group is where the time goes; region the Verilator
    scheduling region of a Verilated function (ico, act, nba, stl) or "" ."""
    smap = smap or {}
    if dso.startswith("[kernel") or dso == "[unknown]" and sym.startswith("0xffff"):
        return "kernel", ""
    if re.match(r"(libc|libstdc\+\+|libm|ld-linux|libgcc|libpthread)", dso):
        return "libc/libstdc++", ""
    region = (_REGION.search(sym) or [None, ""])[1] if "Vssdlab" in sym else ""
    m = _PROF.search(sym)
    if m:
        lines = smap.get(m.group(1))
        line = int(m.group(2))
        if lines and line < len(lines) and lines[line]:
            return lines[line], region
        return f"{m.group(1)}.v", region
    if DIE_MODEL.search(sym):
        return "die models (C++)", ""
    if HARNESS.search(sym):
        return "harness + bridge", ""
    if sym.startswith(("Vssdlab", "Vssdlab_sim_top")):
        return "Verilator scheduler (eval, triggers)", region
    if re.match(r"(VL_|_?vl_|Verilated)", sym):
        return "Verilator library", ""
    return "other (harness binary)", ""


def group_samples(rows, smap=None):
    """({group: percent}, {region: percent}) of parse_perf_report rows."""
    groups, regions = {}, {}
    for pct, dso, sym in rows:
        g, r = classify(dso, sym, smap)
        groups[g] = groups.get(g, 0.0) + pct
        if r:
            regions[r] = regions.get(r, 0.0) + pct
    return groups, regions


# Running it -----------------------------------------------------------------------------------

def _cpu_s(pid):
    """utime + stime of a process in seconds (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start_perf(pid, data):
    if not shutil.which("perf"):
        return None, "perf not found (install linux-perf): no per-function profile, speed only"
    p = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-F", "1999", "-p", str(pid),
                          "-o", str(data)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not data.exists() or data.stat().st_size == 0:   # perf has attached
        if p.poll() is not None:
            return None, f"perf record failed: {p.stderr.read().decode()[-400:]}"
        if time.monotonic() > deadline:
            break
        time.sleep(0.05)
    return p, None


def _perf_report(data):
    r = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "--no-children",
                        "--sort", "dso,sym", "--percent-limit", "0.01"],
                       capture_output=True, text=True)
    return r.stdout


def profile(build_dir, phases=None, out_dir=None, use_perf=True, binary=None, log=sys.stderr,
            fill_kib=1024, write_ios=48, read_ios=800):
    """Run the workload on the drive of `build_dir` (its harness, or `binary`), under perf
    when use_perf; returns the report dict (also written to out_dir/profile.json)."""
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive
    build_dir = Path(build_dir)
    out_dir = Path(out_dir or build_dir / "profile")
    out_dir.mkdir(parents=True, exist_ok=True)
    sim = SimDrive(build_dir, socket=out_dir / "drive.sock", log_path=out_dir / "harness.log",
                   extra_args=["--quiet-uart"])
    if binary:
        sim.args[0] = str(binary)
    cfg = json.loads((build_dir / "config.json").read_text())
    report = {"build": str(build_dir), "binary": sim.args[0],
              "config": {k: cfg.get(k) for k in ("persona", "n_channels", "n_ways",
                                                  "pcie_data_width", "blocks_per_plane",
                                                  "pages_per_block", "sys_clk_freq")}}
    perf_note = None
    with sim:
        w0 = time.monotonic()
        with Drive(sim=sim.socket) as d:
            info = d.info()
            report["open_wall_s"] = time.monotonic() - w0
            phases = phases or default_workload(info["lba_bytes"], fill_kib, write_ios, read_ios)
            report["workload"] = [asdict(p) for p in phases]
            print("workload:\n  " + "\n  ".join(p.describe() for p in phases), file=log)
            data = out_dir / "perf.data"
            data.unlink(missing_ok=True)
            perf, perf_note = _start_perf(sim.proc.pid, data) if use_perf else (None, None)
            s0, h0, c0, t0 = d.stats(), _cpu_s(sim.proc.pid), time.process_time(), \
                time.monotonic()
            report["phases"] = []
            for p in phases:
                b0, pw = d.stats(), time.monotonic()
                r = d.bench(write=p.write, random=p.random, io_blocks=p.bs // info["lba_bytes"],
                            qd=p.qd, n_ios=p.ios, lba_first=p.lba, lba_count=p.count, seed=1)
                pw = time.monotonic() - pw
                b1 = d.stats()
                report["phases"].append({
                    "name": p.name, "ios": r["ios"], "errors": r["errors"],
                    "elapsed_ns": r["elapsed_ns"], "lat_mean_ns": r["lat_mean_ns"],
                    "lat_p99_ns": r["lat_p99_ns"], "wall_s": pw,
                    "cycles": int(b1["cycles"]) - int(b0["cycles"])})
                print(f"  {p.name}: {r['ios']} I/Os, {report['phases'][-1]['cycles']} cycles, "
                      f"{pw:.1f} s wall", file=log)
            wall = time.monotonic() - t0
            s1, h1, c1 = d.stats(), _cpu_s(sim.proc.pid), time.process_time()
            if perf:
                perf.send_signal(signal.SIGINT)
                perf.wait(60)
    cycles = int(s1["cycles"]) - int(s0["cycles"])
    sim_ps = int(s1.get("sim_ps", 0)) - int(s0.get("sim_ps", 0))
    ios = sum(p["ios"] for p in report["phases"])
    report["run"] = {"wall_s": wall, "cycles": cycles, "sim_ns": sim_ps / 1e3, "ios": ios,
                     "harness_cpu_s": h1 - h0, "host_cpu_s": c1 - c0,
                     "cycles_per_wall_s": cycles / wall,
                     "sim_us_per_wall_s": sim_ps / 1e6 / wall, "ios_per_wall_s": ios / wall}
    shares = {"host process (libssdlab, Python)": (c1 - c0) / wall}
    harness_share = (h1 - h0) / wall
    report["perf"] = perf_note or ("perf.data: " + str(data) if perf else "not run")
    if perf:
        text = _perf_report(data)
        (out_dir / "perf_report.txt").write_text(text)
        from sim.nand.fast_sources import DPI_SOURCES
        smap = source_map([*(build_dir / "gateware").glob("*.v"),
                           *(build_dir / "gateware").glob("*.sv"), *DPI_SOURCES,
                           *(build_dir / "sources.txt").read_text().split()])
        groups, regions = group_samples(parse_perf_report(text), smap)
        total = sum(groups.values()) or 1.0
        for g, pct in groups.items():
            shares[g] = harness_share * pct / total
        report["regions"] = {r: harness_share * pct / total for r, pct in regions.items()}
    else:
        shares["harness (no perf: not split)"] = harness_share
    shares["waiting, scheduling, perf"] = max(0.0, 1.0 - sum(shares.values()))
    report["shares"] = dict(sorted(shares.items(), key=lambda kv: -kv[1]))
    (out_dir / "profile.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def format_report(r):
    """The report as text: configuration, workload, shares table, speed."""
    c = r["config"]
    lines = [f"drive: {c['persona']}, {c['n_channels']} ch x {c['n_ways']} ways, "
             f"{c['pcie_data_width']}-bit TLP path, {c['blocks_per_plane']} blocks/plane x "
             f"{c['pages_per_block']} pages/block; binary {r['binary']}",
             "workload:"]
    lines += ["  " + Phase(**p).describe() for p in r["workload"]]
    lines += ["", f"{'share of wall time':>20s}  group", f"{'-' * 20}  {'-' * 40}"]
    lines += [f"{100 * v:19.1f}%  {k}" for k, v in r["shares"].items() if v >= 0.0005]
    if r.get("regions"):
        lines += ["", "Verilated code by scheduling region (share of wall time): " + ", ".join(
            f"{k} {100 * v:.1f}%" for k, v in sorted(r["regions"].items(), key=lambda kv: -kv[1]))]
    u = r["run"]
    lines += ["", f"run: {u['ios']} I/Os, {u['cycles']:,} cycles, {u['sim_ns'] / 1e6:.3f} ms "
              f"simulated in {u['wall_s']:.1f} s wall (harness CPU {u['harness_cpu_s']:.1f} s, "
              f"host CPU {u['host_cpu_s']:.1f} s)",
              f"speed: {u['cycles_per_wall_s'] / 1e3:,.0f} K cycles/s, "
              f"{u['sim_us_per_wall_s']:,.1f} us simulated/s, {u['ios_per_wall_s']:,.1f} I/Os/s",
              f"perf: {r['perf']}"]
    for p in r["phases"]:
        lines.append(f"  {p['name']}: {p['ios']} I/Os, {p['cycles']:,} cycles, "
                     f"mean latency {p['lat_mean_ns'] / 1e3:,.1f} us, "
                     f"{p['cycles'] / p['wall_s'] / 1e3:,.0f} K cycles/s")
    return "\n".join(lines)
