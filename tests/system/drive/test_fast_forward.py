# SPDX-License-Identifier: BSD-2-Clause
"""Fast-forward over quiet time (sim/harness/README.md "Fast-forward"): the harness's jump is
cycle for cycle the same as clocking through.

One build (the default persona, 2 channels: test_drive's) runs the same workload three times:
fast-forward off, on, and in check mode (every window it would skip is clocked through and
checked: quiet every cycle, no die evaluation, the counters advanced as the jump sets them;
the harness exits on a violation). Workload: 128 KiB writes, a flush, reads, a random-read
bench at QD 8, a trim, an idle step of 5 ms (past the firmware's 1 ms idle-GC deadline: its
checkpoint), a host idle of an odd length, a write and flush alone (a die's program time),
a random-write bench at QD 4. Compared exactly: the simulated time after every step, every
bench result (latency percentiles, elapsed), the vendor log C0h (FTL counters), SMART, the
final cycle count, and the NAND rule / timing violation counts (both 0).

The cases where the jump must stop, each shown: the firmware's timer deadline inside a window
(the idle step: its checkpoint happens at the same cycle), a host request due (the idle of an
odd length ends exactly on its cycle), a die's R/B# edge (the lone write + flush completes at
the same cycle while most of its program time was skipped).
"""

import os
import time

import pytest

from sw.ssdlab.drive import Drive, Transport

PERSONA = "default"
PARAMS = {"n_channels": 2}
BOOT_US = 60000
IDLE_NS = 5_000_000         # > gc_idle_us (1 ms, sw/firmware/ftl.c)
ODD_NS = 123_457            # not a whole number of 8 ns cycles


@pytest.fixture(scope="module")
def build():
    from sw.ssdlab.flows.sim import build_drive, drive_config
    cfg = drive_config(PERSONA, PARAMS)
    out = build_drive(cfg)          # one builder per drive directory (build_drive's lock)
    print(f"\ndrive: persona {PERSONA}, {cfg.n_channels} channels x {cfg.n_ways} ways; "
          f"build {out}")
    return out


def workload(d):
    """The steps; returns ({step: simulated ns after it}, {bench: result})."""
    t, benches = {}, {}
    lba = d.info()["lba_bytes"]
    chunk = bytes((i * 7 + 3) & 0xFF for i in range(128 * 1024))
    for k in range(4):
        d.write(k * (128 * 1024 // lba), chunk)
        t[f"write{k}"] = d.time_ns()
    d.flush()
    t["flush"] = d.time_ns()
    assert d.read(128 * 1024 // lba, 128 * 1024 // lba) == chunk
    t["read"] = d.time_ns()
    benches["randread_qd8"] = d.bench(random=True, io_blocks=4096 // lba, qd=8, n_ios=64,
                                      lba_count=4 * 128 * 1024 // lba, seed=1)
    t["randread_qd8"] = d.time_ns()
    d.trim(0, 2 * 128 * 1024 // lba)
    t["trim"] = d.time_ns()
    t0 = d.time_ns()
    t["idle"] = d.idle(IDLE_NS)
    assert t["idle"] - t0 >= IDLE_NS
    t0 = d.time_ns()
    t["odd_idle"] = d.idle(ODD_NS)
    # the host's deadline ends the window exactly: the first whole cycle at or after it
    assert t["odd_idle"] - t0 == -(-ODD_NS // 8) * 8, (t0, t["odd_idle"])
    d.write(8 * 128 * 1024 // lba, chunk[:4096])
    d.flush()
    t["lone_write_flush"] = d.time_ns()
    benches["randwrite_qd4"] = d.bench(write=True, random=True, io_blocks=4096 // lba, qd=4,
                                       n_ios=32, lba_count=4 * 128 * 1024 // lba, seed=2)
    t["randwrite_qd4"] = d.time_ns()
    return t, benches


def run(build, args, tag):
    from sw.ssdlab.flows.sim import SimDrive
    sock = f"/tmp/ssdlab-ff-{os.getpid()}-{tag}.sock"
    w0 = time.monotonic()
    with SimDrive(build, socket=sock, boot_us=BOOT_US, extra_args=args) as sim:
        d = Drive(sim=sim.socket)
        try:
            steps, benches = workload(d)
            ftl, smart = d.ftl_log(), d.smart_log()
        finally:
            d.close()
        with Transport(sim=sim.socket) as tr:
            stats = tr.stats()
            tr.quit()
        sim.proc.wait(60)
        log = sim.output()
    wall = time.monotonic() - w0
    print(f"{tag}: {stats['cycles']} cycles, ff_skipped {stats.get('ff_skipped')}, "
          f"{wall:.1f} s wall; {log.strip().splitlines()[-1]}")
    return dict(steps=steps, benches=benches, ftl=ftl, smart=smart, stats=stats, log=log)


@pytest.mark.smoke
def test_fast_forward_equivalence(build):
    off = run(build, ["--fast-forward", "0"], "off")
    on = run(build, ["--fast-forward", "1"], "on")
    chk = run(build, ["--fast-forward-check"], "check")
    for r in (off, on, chk):
        assert r["stats"]["nand_rules"] == "0" and r["stats"]["nand_timing"] == "0", r["stats"]
    assert off["stats"]["ff_skipped"] == "0"
    skipped = int(on["stats"]["ff_skipped"])
    cycles = int(on["stats"]["cycles"])
    # the boot, the idle steps and the dies' program times are mostly quiet
    assert skipped > cycles // 2, (skipped, cycles)
    # the check run looked at the same windows the jump skips
    assert chk["stats"]["ff_skipped"] == on["stats"]["ff_skipped"]
    for r in (on, chk):
        for key in ("steps", "benches", "ftl", "smart"):
            assert r[key] == off[key], (key, r[key], off[key])
        for key in ("cycles", "sim_ps", "msis", "dma_writes", "dma_rd", "to_host_B",
                    "from_host_B", "mmio", "nand_rules", "nand_timing"):
            assert r["stats"][key] == off["stats"][key], (key, r["stats"], off["stats"])
    # the idle step's timer deadline was honoured inside the window: its checkpoint is there
    assert on["ftl"]["ckpt_saves"] == off["ftl"]["ckpt_saves"] > 0
