# SPDX-License-Identifier: BSD-2-Clause
"""The simulated drive's basic figures, in simulated time, with stock fio through the ssdlab
ioengine (sw/fio/ssdlab-fio): 128 KiB sequential write and read at QD 32, 4 KiB random read
and write at QD 1 and QD 32, QD 1 read latency; then write amplification after writing the
drive three times at random (optional, long), and simulation speed.

    python -m sw.ssdlab.bench.measure [--persona intel-750-400g] [--region-mib 64]
                                  [--repeat 2] [--wa] [--wa-bs 128k] [--no-jobs]
                                  [--json out.json]

Order on one drive, after the firmware's first boot: precondition (sequential 128 KiB
writes over the measured region, so reads hit flash, not deallocated blocks), then each job.
`--repeat 2` runs the whole sequence twice on two fresh drives (new harness, same build):
the same configuration must give the same simulated-time results, which is checked.
Each job also records its wall time and the simulated cycles it took (simulation speed:
cycles and I/Os per wall second).
"""

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
FIO = ROOT / "sw" / "fio" / "ssdlab-fio"

__all__ = ["JOBS", "run_fio", "measure"]

# name, fio options (no ioengine, no device: ssdlab-fio adds them)
JOBS = [
    ("seqwrite-128k-qd32", dict(rw="write", bs="128k", iodepth=32)),
    ("seqread-128k-qd32", dict(rw="read", bs="128k", iodepth=32)),
    ("randread-4k-qd1", dict(rw="randread", bs="4k", iodepth=1, io_size="1m")),
    ("randread-4k-qd32", dict(rw="randread", bs="4k", iodepth=32, io_size="8m")),
    ("randwrite-4k-qd1", dict(rw="randwrite", bs="4k", iodepth=1, io_size="1m")),
    ("randwrite-4k-qd32", dict(rw="randwrite", bs="4k", iodepth=32, io_size="8m")),
]


def run_fio(socket, name, opts, size, offset=0, extra=()):
    """One fio job; returns fio's JSON for it (times are simulated)."""
    args = [str(FIO), "--sim", socket, "--output-format=json", f"--name={name}",
            "--direct=1", "--randrepeat=1", f"--size={size}", f"--offset={offset}",
            *[f"--{k}={v}" for k, v in opts.items()], *extra]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out[out.index("{"):])["jobs"][0]


def _summary(job):
    r, w = job["read"], job["write"]
    side = r if r["io_bytes"] else w
    lat = side["clat_ns"]
    pct = lat.get("percentile", {})
    return {
        "iops": round(side["iops"], 1), "mb_s": round(side["bw_bytes"] / 1e6, 1),
        "lat_mean_us": round(side["lat_ns"]["mean"] / 1e3, 2),
        "clat_p50_us": round(pct.get("50.000000", 0) / 1e3, 2),
        "clat_p99_us": round(pct.get("99.000000", 0) / 1e3, 2),
        "runtime_ms": side["runtime"], "ios": side["total_ios"],
    }


def _sim_cycles(socket):
    from sw.ssdlab.drive import Transport
    with Transport(sim=socket) as t:
        return int(t.stats()["cycles"])


def _job(socket, name, opts, size, speed):
    """One fio job's summary; its wall time and simulated cycles go to speed[name]."""
    c0, w0 = _sim_cycles(socket), time.monotonic()
    out = _summary(run_fio(socket, name, opts, size))
    wall, cycles = time.monotonic() - w0, _sim_cycles(socket) - c0
    speed[name] = {"wall_s": round(wall, 1), "cycles": cycles,
                   "cycles_per_wall_s": round(cycles / wall), "ios": out["ios"],
                   "ios_per_wall_s": round(out["ios"] / wall, 1)}
    return out


def measure(build_dir, region_mib, wa=False, wa_bs="128k", jobs=True, log=sys.stderr):
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive
    results, speed = {}, {}
    with SimDrive(build_dir, boot_us=1000, extra_args=["--quiet-uart"]) as sim:
        t_wall = time.monotonic()
        with Drive(sim=sim.socket) as d:            # waits for the first-boot format
            info = d.info()
        speed["boot"] = {"wall_s": round(time.monotonic() - t_wall, 1),
                         "cycles": _sim_cycles(sim.socket)}
        size = f"{region_mib}m"
        if jobs:
            print(f"measure: precondition {size} sequential", file=log)
            results["precondition"] = _job(sim.socket, "precondition",
                                           dict(rw="write", bs="128k", iodepth=32), size, speed)
            for name, opts in JOBS:
                print(f"measure: {name}", file=log)
                results[name] = _job(sim.socket, name, opts, size, speed)
            qd1 = results["randread-4k-qd1"]
            results["qd1_read_latency_us"] = {"mean": qd1["lat_mean_us"],
                                              "p50": qd1["clat_p50_us"],
                                              "p99": qd1["clat_p99_us"]}
        if wa:
            user = info["ns_blocks"] * info["lba_bytes"]
            print(f"measure: write amplification: the drive ({user} B) three times at random, "
                  f"{wa_bs} blocks, QD 32", file=log)
            # uniform random with replacement (norandommap): with fio's random map every
            # pass would repeat the first pass's permutation, which overwrites blocks in the
            # order they were written and measures no GC at all (WA 1.0)
            results["wa_fill"] = _job(sim.socket, "wa-fill",
                                      dict(rw="randwrite", bs=wa_bs, iodepth=32,
                                           norandommap=1, io_size=str(3 * user)),
                                      str(user), speed)
            with Drive(sim=sim.socket) as d:
                results["wa_log"] = vendor_log(d)
        results["speed"] = speed
        results["wall_s"] = round(time.monotonic() - t_wall, 1)
    return results


def vendor_log(d):
    """The firmware's FTL counters (vendor log page C0h, sw/firmware/README.md)."""
    import struct
    names = ("host_units_written", "nand_units_written", "gc_units_moved", "erases",
             "bad_blocks", "free_blocks", "user_units", "raw_units", "wa_x1000", "avg_erase",
             "max_erase", "ckpt_saves", "wb_groups", "pu_units", "dies", "media_errors",
             "pending_reuse", "ckpt_units_written")
    raw = d.get_log_page(0xC0, 512)
    out = dict(zip(names, struct.unpack_from(f"<{len(names)}Q", raw), strict=True))
    if out["host_units_written"]:
        host = out["host_units_written"]
        out["write_amplification"] = round(out["nand_units_written"] / host, 3)
        out["write_amplification_with_map"] = round(
            (out["nand_units_written"] + out["ckpt_units_written"]) / host, 3)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--persona", default="intel-750-400g")
    ap.add_argument("--channels", type=int, default=None)
    ap.add_argument("--region-mib", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--wa", action="store_true", help="also write the drive 3x at random")
    ap.add_argument("--wa-bs", default="128k", help="block size of the --wa writes")
    ap.add_argument("--no-jobs", action="store_true", help="skip the basic figures (with --wa)")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    from sw.ssdlab.flows.sim import build_drive, drive_config
    cfg = drive_config(args.persona, {"n_channels": args.channels} if args.channels else None)
    out = build_drive(cfg)
    config = {k: v for k, v in cfg.as_dict().items()}
    print(json.dumps({"configuration": config, "region_mib": args.region_mib}, indent=1))
    runs = [measure(out, args.region_mib, wa=args.wa, wa_bs=args.wa_bs, jobs=not args.no_jobs)
            for _ in range(args.repeat)]
    report = {"configuration": config, "region_mib": args.region_mib, "runs": runs}
    if args.repeat > 1:
        keys = [k for k in runs[0] if k not in ("speed", "wall_s")]
        report["deterministic"] = all(r[k] == runs[0][k] for r in runs[1:] for k in keys)
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
