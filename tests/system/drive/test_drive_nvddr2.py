# SPDX-License-Identifier: BSD-2-Clause
"""The simulated drive of an NV-DDR2 persona runs NV-DDR2 (issue 20): the default persona
(samsung-950pro-512, NV-DDR2 mode 7) at 2 channels, simulation scale, is built with NV-DDR2
channels behind the simulation PHY; the firmware brings the bus up in SDR, switches every
die to NV-DDR2 and calibrates the DQS capture; every die model then runs NV-DDR2 mode 7,
128 KiB writes read back intact and no die reports a rule or timing violation.
The SDR fallback (`sdr_fallback=True`) is a configuration test (no second build here)."""

import os
import random
import re

import pytest

PERSONA = "default"
PARAMS = {"n_channels": 2}
BOOT_US = 60000
SEED = int(os.environ.get("SEED") or random.SystemRandom().randrange(1 << 31))


@pytest.mark.smoke
def test_nvddr2_config():
    """An NV-DDR2 persona builds NV-DDR2 channels; SDR only when asked for, and then said."""
    from sw.ssdlab.flows.sim import drive_config
    cfg = drive_config(PERSONA, PARAMS)
    assert cfg.nvddr2_mode == 7, cfg.nvddr2_mode
    assert any(n.startswith("NV-DDR2 mode 7") for n in cfg.notes), cfg.notes
    sdr = drive_config(PERSONA, {**PARAMS, "sdr_fallback": True})
    assert sdr.nvddr2_mode is None and sdr.onfi_mode == 5
    assert any("-> sdr mode 5" in n for n in sdr.notes), sdr.notes
    with pytest.raises(ValueError, match="sdr_fallback"):
        drive_config(PERSONA, {**PARAMS, "sdr_fallback": "yes"})


@pytest.mark.smoke
def test_nvddr2_drive():
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    cfg = drive_config(PERSONA, PARAMS)
    out = build_drive(cfg)
    dies = cfg.n_channels * cfg.n_ways
    print(f"\ndrive: {cfg.persona}, {cfg.n_channels} channels x {cfg.n_ways} ways; "
          f"notes: {'; '.join(cfg.notes)}\nSEED={SEED}")
    rng = random.Random(SEED)
    with SimDrive(out, boot_us=BOOT_US) as sim:
        with Drive(sim=sim.socket) as d:
            chunk = 256                                 # LBAs: 128 KiB, the MDTS
            n_lba = d.info()["ns_blocks"]
            writes = {}
            # six distinct chunk slots: overlapping writes would make the earlier one's
            # read-back differ by design
            for slot in rng.sample(range(n_lba // chunk), 6):
                lba = slot * chunk
                data = rng.randbytes(chunk * 512)
                d.write(lba, data)
                writes[lba] = data
            d.flush()
            for lba, data in writes.items():
                assert d.read(lba, chunk) == data, f"LBA {lba}: read back differs"
        log = sim.log_path.read_text()
    switched = set(re.findall(r"nand_die_fast (\d+): t=[\d.]+ ns: interface nvddr2 timing "
                              r"mode 7", log))
    # the sim top names die (channel c, way w) DIE_ID c x 8 + w (sw/ssdlab/flows/sim_gateware.py)
    want = {str(c * 8 + w) for c in range(cfg.n_channels) for w in range(cfg.n_ways)}
    assert len(want) == dies and switched == want, (switched, log[-3000:])
    assert "DQS calibration found no read window" not in log, log[-3000:]
    assert "NV-DDR2 failed" not in log, log[-3000:]
    assert "nand_die_fast[" not in log, "a die reported a violation:\n" + log[-3000:]


@pytest.mark.full
def test_nvddr2_sequential_read_rate():
    """Sequential 128 KiB reads at QD 32 reach >= 90 % of the build's analytic limit
    (sw/ssdlab/bench/limits.py: NV-DDR2 mode 7 at the engine clock, page data only), where
    the flash binds: 64 writes and a flush first (so no program backlog shares the dies),
    then 200 reads over that region."""
    from sw.ssdlab.bench.limits import bus_of, point_limit
    from sw.ssdlab.bench.session import link_limits
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    cfg = drive_config(PERSONA, PARAMS)
    out = build_drive(cfg)
    c = cfg.as_dict()
    limit = point_limit(c, link_limits(c), "read", 131072)
    assert limit["bound"] == "flash", limit
    with SimDrive(out, boot_us=BOOT_US) as sim:
        with Drive(sim=sim.socket) as d:
            region = 64 * 256
            w = d.bench(write=True, io_blocks=256, qd=32, n_ios=64, lba_count=region)
            d.flush()
            r = d.bench(write=False, io_blocks=256, qd=32, n_ios=200, lba_count=region)
    assert w["errors"] == r["errors"] == 0
    mb_s = r["bytes"] / r["elapsed_ns"] * 1e3
    print(f"\n{cfg.persona}, {cfg.n_channels} ch x {cfg.n_ways} ways, {bus_of(c)['describe']}:"
          f" 200 x 128 KiB sequential reads QD 32: {mb_s:.1f} MB/s of {limit['mb_s']} MB/s "
          f"({100 * mb_s / limit['mb_s']:.1f} %)")
    assert mb_s >= 0.9 * limit["mb_s"], (mb_s, limit)
