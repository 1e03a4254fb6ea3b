# SPDX-License-Identifier: BSD-2-Clause
"""Two NAND part types in one simulated drive (issue 20, mixed parts): intel-750-400g's
128 Gbit (16 KiB page) and 64 Gbit (8 KiB page) dies on a 2 x 2 test drive
(mixed-parts-2x2.yaml beside this file: the 64 Gbit die on channel 1 way 1), 16 blocks per
plane x 16 pages per block, where both parts have one row geometry. The build gives that die
its own part (page, spare, array times, identity); the firmware sizes its groups, programs,
GC reads and factory-marker reads by the die's page, and counts the capacity die by die.

Testplan: tests/system/drive/README.md ("Mixed parts")."""

import random
import time
from pathlib import Path

import pytest

from .test_drive import SEED, short_workload

PERSONA = str(Path(__file__).with_name("mixed-parts-2x2.yaml"))
SCALE = {"blocks_per_plane": 16, "pages_per_block": 16}
BOOT_US = 60000


@pytest.mark.smoke
def test_mixed_drive():
    """The drive's capacity is what its dies hold (3 dies x 8 units per multi-plane page and
    one of 4); 4 MiB in random 128 KiB order (multi-plane pages on both parts), 4 KiB
    overwrites, a deallocated range, everything read back; no die reports a violation (a
    16 KiB program into the 8 KiB die would be one)."""
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    cfg = drive_config(PERSONA, {}, **SCALE)
    assert cfg.part2["page_bytes"] == 8192 and cfg.part2_targets == ((1, 1),), cfg.part2
    t0 = time.monotonic()
    out = build_drive(cfg)
    print(f"\ndrive: {cfg.persona}; notes: {'; '.join(cfg.notes)}\nbuild: {out} "
          f"({time.monotonic() - t0:.0f} s)\nSEED={SEED}")
    rng = random.Random(f"{SEED}-mixed")
    with SimDrive(out, boot_us=BOOT_US) as sim:
        with Drive(sim=sim.socket) as d:
            v = d.ftl_log()
            assert v["dies"] == 4 and v["pu_units"] == 8, v
            assert v["raw_units"] == 16 * 16 * (3 * 8 + 4), v["raw_units"]
            img = short_workload(d, rng)
            d.flush()
            img.verify(d)
            v1 = d.ftl_log()
            print(f"mixed drive: {v1['nand_units_written']} units programmed for "
                  f"{v1['host_units_written']} written; simulated {d.time_ns() / 1e6:.1f} ms")
        log = sim.log_path.read_text()
    assert "nand_die_fast[" not in log, "a die reported a violation:\n" + log[-3000:]
