# SPDX-License-Identifier: BSD-2-Clause
"""The drive with its NAND emulated in RTL (SocConfig nand_model="emulator"): a nand_emulator
per channel on LiteDRAM's DDR3 simulation model, the configuration of a card without NAND.

full: the 2-channel default drive boots on emulated NAND (the firmware reads the parameter
page, sets the timing mode, builds its bad-block table), a stock fio write + verify job runs
through the ssdlab engine, and the emulators saw no NAND rule broken.
"""

import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
WRAPPER = ROOT / "sw" / "fio" / "ssdlab-fio"
JOB = ROOT / "tests" / "sw" / "fio" / "jobs" / "verify-smoke.fio"
OUT = ROOT / "build" / "fio" / "tests-emulation"


@pytest.mark.full
def test_fio_verify_on_emulated_nand():
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    cfg = drive_config("default", {"n_channels": 2, "nand_model": "emulator"})
    print(f"drive: {cfg.persona} {cfg.n_channels} ch x {cfg.n_ways} ways, nand_model="
          f"{cfg.nand_model}")
    build = build_drive(cfg)
    OUT.mkdir(parents=True, exist_ok=True)
    with SimDrive(build, boot_us=60000) as sim:
        p = subprocess.run([str(WRAPPER), "--sim", sim.socket, str(JOB)], capture_output=True,
                           text=True, timeout=1800, cwd=OUT)
        assert p.returncode == 0, f"fio failed:\n{p.stdout}\n{p.stderr}"
        assert "verify" in p.stdout
        with Drive(sim=sim.socket) as d:
            stats = d.stats()
    assert stats.get("nand_rules") == "0", stats
