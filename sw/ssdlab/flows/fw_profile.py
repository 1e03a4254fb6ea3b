# SPDX-License-Identifier: BSD-2-Clause
"""Where the firmware's cycles go: the harness's --fw-profile (sim/harness/ssdlab_sim.cpp) counts
every clocked cycle for the PC in the soft CPU's memory stage, so a function's count is the
cycles it held the CPU (its instructions, its loads' bus waits, the fetch bubbles after it).
Here those PCs become source lines and the functions they were written in (the firmware ELF's
line information, inlined code included), over one workload's window: the
harness rewrites its profile whenever the host asks for its statistics (SB_INFO, Drive.stats),
so the snapshot before a workload subtracted from the one after it is that workload's.

`ssdlab sim fw-profile` runs it on a built drive; profile_window() and format_report() serve
probes of their own."""

import shutil
import subprocess
from pathlib import Path

__all__ = ["read_profile", "subtract", "source_lines", "by_function", "profile_window",
           "format_report", "WORKLOADS"]

ADDR2LINE = "riscv64-unknown-elf-addr2line"
WORKLOADS = {                        # name: (write, random)
    "randwrite": (True, True), "randread": (False, True),
    "seqwrite": (True, False), "seqread": (False, False),
}


def read_profile(path):
    """(header, {pc: (clocked cycles, instructions retired)}) of a --fw-profile file; header
    has cycles, skipped, instret, period_ps."""
    header, pcs = None, {}
    for line in Path(path).read_text().splitlines():
        if line.startswith("# ssdlab_sim fw-profile:"):
            f = line.split(":", 1)[1].split()
            header = {k: int(v) for k, v in zip(f[::2], f[1::2], strict=True)}
        elif line and not line.startswith("#"):
            pc, cycles, retired = line.split()
            pcs[int(pc, 16)] = (int(cycles), int(retired))
    if header is None or not {"cycles", "skipped", "instret", "period_ps"} <= header.keys():
        raise ValueError(f"{path}: not a --fw-profile file (no header line)")
    return header, pcs


def subtract(later, earlier):
    """The window between two snapshots of one run's profile (each a read_profile result)."""
    (h1, p1), (h0, p0) = later, earlier
    head = {k: h1[k] - h0[k] for k in ("cycles", "skipped", "instret")}
    head["period_ps"] = h1["period_ps"]
    pcs = {}
    for pc, (c, i) in p1.items():
        c0, i0 = p0.get(pc, (0, 0))
        if (c, i) != (c0, i0):
            pcs[pc] = (c - c0, i - i0)
    if any(v < 0 for v in head.values()) or any(min(v) < 0 for v in pcs.values()):
        raise ValueError("the earlier profile is not a snapshot of the same run")
    return head, pcs


def source_lines(pcs, elf):
    """{(function, file:line): (clocked cycles, instructions retired)}: each PC to the source
    line it was compiled from and the function that line is in (addr2line's innermost frame:
    code inlined into a caller, as the link-time optimiser does, counts for the function it
    was written in). PCs without line information count as '[no line info]'."""
    a2l = shutil.which(ADDR2LINE)
    if a2l is None:
        raise FileNotFoundError(f"{ADDR2LINE} not found: the firmware's toolchain (make deps) "
                                "reads the ELF's line information")
    order = sorted(pcs)
    out = subprocess.run([a2l, "-e", str(elf), "-f", "-s"], check=True, capture_output=True,
                         text=True, input="".join(f"{pc:#x}\n" for pc in order)).stdout
    lines = {}
    for pc, func, where in zip(order, out.splitlines()[::2], out.splitlines()[1::2],
                               strict=True):
        key = ("[no line info]", "??") if func == "??" else (func, where.split(" ")[0])
        c, r = lines.get(key, (0, 0))
        lines[key] = (c + pcs[pc][0], r + pcs[pc][1])
    return lines


def by_function(lines):
    """{function: (clocked cycles, instructions retired)} of source_lines()' result, the
    function holding the most cycles first."""
    out = {}
    for (func, _), (c, r) in lines.items():
        c0, r0 = out.get(func, (0, 0))
        out[func] = (c0 + c, r0 + r)
    return dict(sorted(out.items(), key=lambda kv: -kv[1][0]))


def profile_window(build_dir, workload="randwrite", qd=32, n_ios=1000, io_kib=4,
                   region_mib=64, fill=True, seed=1, boot_us=60000, out_dir=None):
    """Run `workload` (WORKLOADS) on the built drive with the profile on: a sequential 128 KiB
    fill of the region and a Flush first when `fill`, then n_ios I/Os of io_kib at QD qd over
    the region, the window. Returns the report dict format_report() prints."""
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive
    if workload not in WORKLOADS:
        raise ValueError(f"workload {workload!r}: one of {', '.join(WORKLOADS)}")
    write, random = WORKLOADS[workload]
    build_dir = Path(build_dir)
    out_dir = Path(out_dir or build_dir / "fw_profile")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "fw_profile.txt"
    path.unlink(missing_ok=True)
    with SimDrive(build_dir, boot_us=boot_us, extra_args=["--quiet-uart", "--fw-profile",
                                                          str(path)]) as sim:
        with Drive(sim=sim.socket, queues=1, depth=max(64, qd)) as d:
            lba_size = d.info()["lba_bytes"]
            io_blocks = io_kib * 1024 // lba_size
            fill_blocks = 128 * 1024 // lba_size
            region = min(region_mib << 20, d.info()["ns_blocks"] * lba_size) // lba_size
            region -= region % fill_blocks
            if fill:
                d.bench(write=True, random=False, io_blocks=fill_blocks, qd=8,
                        n_ios=region // fill_blocks, lba_first=0, lba_count=region)
                d.flush()                       # the fill on flash: reads find it there
            log0 = d.ftl_log()
            d.stats()                           # SB_INFO: the harness writes a snapshot
            before = read_profile(path)
            r = d.bench(write=write, random=random, io_blocks=io_blocks, qd=qd, n_ios=n_ios,
                        lba_first=0, lba_count=region, seed=seed)
            d.stats()
            after = read_profile(path)
            log1 = d.ftl_log()
    head, pcs = subtract(after, before)
    lines = source_lines(pcs, build_dir / "firmware" / "firmware.elf")
    return {"build": build_dir.name, "workload": workload, "qd": qd, "io_kib": io_kib,
            "n_ios": r["ios"], "errors": r["errors"], "elapsed_ns": r["elapsed_ns"],
            "lat_p50_ns": r["lat_p50_ns"], "lat_p99_ns": r["lat_p99_ns"],
            "region_mib": region * lba_size / 2**20, "fill": fill, **head,
            "ftl": {k: log1[k] - log0[k] for k in log1
                    if isinstance(log1[k], int) and log1[k] != log0.get(k, log1[k])},
            "functions": by_function(lines),
            "lines": sorted(((n, f, w) for (f, w), n in lines.items()), reverse=True),
            "profile": str(path)}


def format_report(r, top=25):
    ios = max(r["n_ios"], 1)
    clocked = r["cycles"] - r["skipped"]
    ns_per_cycle = r["period_ps"] / 1e3
    lines = [f"{r['build']}: {r['workload']} {r['io_kib']} KiB QD {r['qd']}, {r['n_ios']} I/Os "
             f"over {r['region_mib']:.0f} MiB ({'filled first' if r['fill'] else 'not filled'}),"
             f" {r['n_ios'] / (r['elapsed_ns'] * 1e-9):,.0f} IOPS in {r['elapsed_ns'] / 1e6:.3f}"
             f" ms simulated (latency p50 {r['lat_p50_ns'] / 1e3:.1f} us, p99 "
             f"{r['lat_p99_ns'] / 1e3:.1f} us)",
             f"CPU cycles in the window {r['cycles']:,} ({r['cycles'] / ios:,.0f} per I/O at "
             f"{1e3 / ns_per_cycle:.0f} MHz): clocked {clocked:,}, fast-forwarded in the "
             f"firmware's wait {r['skipped']:,}; instructions {r['instret']:,} "
             f"({r['instret'] / ios:,.0f} per I/O, {r['instret'] / max(clocked, 1):.2f} per "
             f"clocked cycle)",
             "FTL counters moved: " + (", ".join(f"{k} {v:,}" for k, v in r["ftl"].items())
                                       or "none"),
             "", f"{'function':<32} {'cycles':>12} {'per I/O':>9} {'share':>7} "
             f"{'instr/IO':>9} {'CPI':>6}"]
    for name, (n, k) in list(r["functions"].items())[:top]:
        lines.append(f"{name:<32} {n:>12,} {n / ios:>9,.0f} {100 * n / max(r['cycles'], 1):>6.1f}%"
                     f" {k / ios:>9,.0f} {n / k if k else float('inf'):>6.1f}")
    lines.append(f"{'[fast-forwarded wait]':<32} {r['skipped']:>12,} {r['skipped'] / ios:>9,.0f} "
                 f"{100 * r['skipped'] / max(r['cycles'], 1):>6.1f}%")
    lines += ["", f"{'source line':<40} {'function':<28} {'per I/O':>9} {'instr/IO':>9}"]
    for (n, k), func, where in r["lines"][:top]:
        lines.append(f"{where:<40} {func:<28} {n / ios:>9,.0f} {k / ios:>9,.1f}")
    return "\n".join(lines)
