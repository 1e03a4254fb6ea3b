# SPDX-License-Identifier: BSD-2-Clause
"""The drive with its NAND emulated in RTL (SocConfig nand_model="emulator"): a nand_emulator
per channel on LiteDRAM's DDR3 simulation model, the configuration of a card without NAND.

full: the 2-channel default drive boots on emulated NAND (the firmware reads the parameter
page, sets the timing mode, builds its bad-block table), a stock fio write + verify job runs
through the ssdlab engine, and the emulators saw no NAND rule broken.

full, the same build: the lab's fault injection on a card, end to end: `Drive.bad_block`,
`pe_count` and `pe_limit` (`ssdlab drive bad-block`, `pe-count`, `pe-limit`) go to the
firmware as ssdlab's admin C1h (spec/nvme.py Fault NAND_*), the firmware to the emulators'
block-table backdoor through its CSRs (soc/nand_emulation.py NandEmulatorBackdoor); the
grown bad blocks and the blocks past the P/E limit fail their next erase or program in the
RTL, the firmware retires them and the data stays right.

Testplan: tests/system/drive/README.md ("NAND emulator").
"""

import random
import subprocess
import time
from pathlib import Path

import pytest

from .test_drive import SEED, shuffled_fill

ROOT = Path(__file__).resolve().parents[3]
WRAPPER = ROOT / "sw" / "fio" / "ssdlab-fio"
JOB = ROOT / "tests" / "sw" / "fio" / "jobs" / "verify-smoke.fio"
OUT = ROOT / "build" / "fio" / "tests-emulation"
# the default persona is NV-DDR2; the emulator speaks SDR (its part's fastest SDR mode)
PARAMS = {"n_channels": 2, "nand_model": "emulator", "sdr_fallback": True}
BOOT_US = 60000


def build():
    from sw.ssdlab.flows.sim import build_drive, drive_config
    cfg = drive_config("default", PARAMS)
    print(f"drive: {cfg.persona} {cfg.n_channels} ch x {cfg.n_ways} ways, nand_model="
          f"{cfg.nand_model}; notes: {'; '.join(cfg.notes)}\nSEED={SEED}")
    return build_drive(cfg)


@pytest.mark.full
def test_fio_verify_on_emulated_nand():
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive
    out = build()
    OUT.mkdir(parents=True, exist_ok=True)
    with SimDrive(out, boot_us=BOOT_US) as sim:
        p = subprocess.run([str(WRAPPER), "--sim", sim.socket, str(JOB)], capture_output=True,
                           text=True, timeout=1800, cwd=OUT)
        assert p.returncode == 0, f"fio failed:\n{p.stdout}\n{p.stderr}"
        assert "verify" in p.stdout
        with Drive(sim=sim.socket) as d:
            stats = d.stats()
    # no NAND rule broken, and every data-out byte served in time (the emulators' failures)
    assert stats.get("nand_rules") == "0" and stats.get("nand_timing") == "0", stats


def pairs(die_blocks=16):
    """Every other block pair, 1, 3, .., 15, as (pair, block of plane 0, block of plane 1).
    Not neighbours: a run of a die's blocks all failing is a failed die to the firmware (its
    die test erases the die's first free blocks, sw/firmware/ftl_die.c), not this test."""
    return [(k, 2 * k, 2 * k + 1) for k in range(1, die_blocks, 2)]


@pytest.mark.full
def test_emulated_grown_bad_blocks_and_wear_out():
    """Fault injection through admin C1h on emulated NAND. Refused with Invalid Field, and a
    message naming the fields: channel 2, way 4, LUN 1, block 32 (16 blocks a plane x 2),
    P/E count and limit 2^20. Then every other block pair of die 3 (channel 1, way 1) grows
    bad and 8 MiB is written in random 128 KiB order: the firmware takes some of them (erase
    on allocate, or a program of the pair in use), each fails in the emulator (FAIL), the
    firmware retires it (vendor log bad blocks + 1..8) and every LBA reads back. Then every
    other pair of die 4 (channel 0, way 2) gets P/E count 100, the limit 100, and the 8 MiB is
    written again: the next erase of such a pair passes the limit and fails, more are retired;
    everything reads back, SMART Available Spare fell, no media error, no NAND rule broken."""
    from sw.ssdlab.drive import Drive, NvmeStatusError
    from sw.ssdlab.flows.sim import SimDrive
    out = build()
    rng = random.Random(f"{SEED}-emulated-bad")
    t0 = time.monotonic()
    with SimDrive(out, boot_us=BOOT_US) as sim, Drive(sim=sim.socket) as d:
        print(f"SEED={SEED}; harness log {sim.log_path}")
        for what, call in (("channel", lambda: d.bad_block(2, 0, 0, 0)),
                           ("way", lambda: d.bad_block(0, 4, 0, 0)),
                           ("lun", lambda: d.bad_block(0, 0, 1, 0)),
                           ("block", lambda: d.bad_block(0, 0, 0, 32)),
                           ("count", lambda: d.pe_count(0, 0, 0, 0, 1 << 20)),
                           ("limit", lambda: d.pe_limit(1 << 20))):
            with pytest.raises(NvmeStatusError, match="Invalid Field") as e:
                call()
            assert what in str(e.value) and "no NAND emulator" in str(e.value), str(e.value)
        v0, s0 = d.ftl_log(), d.smart_log()
        for _, b0, b1 in pairs():
            assert d.bad_block(1, 1, 0, b0) and d.bad_block(1, 1, 0, b1)
        img = shuffled_fill(d, rng, 8 << 11)
        img.verify(d)
        v1 = d.ftl_log()
        grown = v1["bad_blocks"] - v0["bad_blocks"]
        print(f"grown bad: {grown} of die 3's 8 pairs retired after 8 MiB "
              f"({time.monotonic() - t0:.0f} s)")
        assert 1 <= grown <= 8, (v0, v1)
        for _, b0, b1 in pairs():
            assert d.pe_count(0, 2, 0, b0, 100) and d.pe_count(0, 2, 0, b1, 100)
        assert d.pe_limit(100)
        img = shuffled_fill(d, rng, 8 << 11)
        img.verify(d)
        v2, s2, stats = d.ftl_log(), d.smart_log(), d.stats()
        worn = v2["bad_blocks"] - v1["bad_blocks"]
        print(f"past the P/E limit: {worn} of die 4's 8 pairs retired after 8 MiB more; "
              f"available spare {s0['available_spare']} % -> {s2['available_spare']} %; "
              f"erases {v2['erases']}; {time.monotonic() - t0:.0f} s")
        assert 1 <= worn <= 8, (v1, v2)
        assert s2["available_spare"] < s0["available_spare"], (s0, s2)
        assert s2["media_errors"] == s0["media_errors"] and v2["units_lost"] == 0, (s2, v2)
        assert v2["dead_dies"] == 0, v2
    # no NAND rule broken, and every data-out byte served in time (the emulators' failures)
    assert stats.get("nand_rules") == "0" and stats.get("nand_timing") == "0", stats
