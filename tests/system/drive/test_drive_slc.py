# SPDX-License-Identifier: BSD-2-Clause
"""The SLC write cache in the simulated drive (issue 20): samsung-750-evo-250 (planar TLC,
static 3 GB cache: 3.3 % of the raw capacity in SLC blocks) at 2 channels x 1 way,
16 blocks per plane x 16 pages per block, so each die has one SLC block of 5 pages. Host
writes go to the SLC blocks (the channel's DAh prefix; the dies program them at the part's
SLC tPROG) until the cache is full, then to TLC blocks; idle time folds the cache back; reads
of SLC data are SLC reads (a die reports an op in the wrong mode as an slc-mode violation,
which fails the test). Firmware: sw/firmware/ftl_slc.c; dies: sim/nand/README.md."""

import os
import random

import pytest

PERSONA = "samsung-750-evo-250"
PARAMS = {"n_channels": 2, "n_ways": 1}
SCALE = {"blocks_per_plane": 16, "pages_per_block": 16}
BOOT_US = 60000
SEED = int(os.environ.get("SEED") or random.SystemRandom().randrange(1 << 31))
CHUNK = 256                     # LBAs: 128 KiB


@pytest.mark.smoke
def test_slc_config():
    """The persona's static cache reaches the build: policy and native footprint."""
    from sw.ssdlab.flows.sim import drive_config
    cfg = drive_config(PERSONA, PARAMS, **SCALE)
    assert cfg.slc_policy == "static" and cfg.slc_permille == 33, (cfg.slc_policy,
                                                                    cfg.slc_permille)
    assert drive_config("default", {"n_channels": 2}).slc_policy == "none"


@pytest.mark.smoke
def test_slc_drive():
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    cfg = drive_config(PERSONA, PARAMS, **SCALE)
    out = build_drive(cfg)
    print(f"\ndrive: {cfg.persona}, {cfg.n_channels} channels x {cfg.n_ways} ways, "
          f"{cfg.pages_per_block} pages x {cfg.blocks_per_plane} blocks per plane; SLC "
          f"{cfg.slc_policy} {cfg.slc_permille} per mille\nSEED={SEED}")
    rng = random.Random(SEED)
    with SimDrive(out, boot_us=BOOT_US) as sim:
        with Drive(sim=sim.socket) as d:
            v0 = d.ftl_log()
            assert v0["slc_blocks_max"] == 2 and v0["slc_block_units"] == 5 * 8, v0
            written = {}

            def write(lba, n_chunks):
                for k in range(n_chunks):
                    data = rng.randbytes(CHUNK * 512)
                    d.write(lba + k * CHUNK, data)
                    written[lba + k * CHUNK] = data

            # a burst under the cache (256 KiB: 64 of its 80 units): all SLC programs
            write(0, 2)
            d.flush()
            v1 = d.ftl_log()
            slc = v1["slc_units_written"] - v0["slc_units_written"]
            nand = v1["nand_units_written"] - v0["nand_units_written"]
            assert slc == nand == 64, (slc, nand)
            # 2 MiB more: the cache fills, the rest goes to TLC blocks
            write(4096, 16)
            d.flush()
            v2 = d.ftl_log()
            slc = v2["slc_units_written"] - v0["slc_units_written"]
            nand = v2["nand_units_written"] - v0["nand_units_written"]
            print(f"after 2.25 MiB: {slc} of {nand} units programmed in SLC; SLC blocks "
                  f"{v2['slc_blocks']} of {v2['slc_blocks_max']}")
            assert slc <= 80 + 16 and nand >= 64 + 512, (slc, nand)
            assert v2["slc_blocks"] == 2, v2
            for lba, data in written.items():
                assert d.read(lba, CHUNK) == data, f"LBA {lba}: read back differs"
            # idle time folds the cache into TLC blocks
            d.idle(50_000_000)
            v3 = d.ftl_log()
            print(f"after 50 ms idle: {v3['slc_blocks_folded']} SLC blocks folded "
                  f"({v3['slc_units_folded']} units), {v3['slc_blocks']} left")
            assert v3["slc_blocks"] == 0 and v3["slc_blocks_folded"] >= 2, v3
            for lba, data in written.items():
                assert d.read(lba, CHUNK) == data, f"LBA {lba}: differs after the fold"
            # the next burst is cached again
            write(0, 1)
            d.flush()
            v4 = d.ftl_log()
            assert v4["slc_units_written"] - v3["slc_units_written"] == 32, (v3, v4)
            assert d.read(0, CHUNK) == written[0]
        log = sim.log_path.read_text()
    assert "nand_die_fast[" not in log, "a die reported a violation:\n" + log[-3000:]
