# SPDX-License-Identifier: BSD-2-Clause
"""The simulated drive with two LUNs per chip enable (crucial-m500-960's dies_per_way 2),
end to end: the back end interleaves the LUNs of a target (78h polls), the FTL stripes and
collects garbage over every LUN as a die. A drive of its own, kept small so that it is written
end to end and half again: 2 channels x 1 way x 2 LUNs, 16 blocks per plane, 16 pages per block
(SIM_SCALE). test_drive_ecc.py opens the same drive with the persona's ECC and dies that
flip bits (`open_drive`).

Testplan: tests/system/drive/README.md ("LUNs").
"""

import random
import time

import pytest

from .test_drive import CHUNK, SEED, UNIT, Image, short_workload, shuffled_fill, vendor_log

PERSONA = "crucial-m500-960"
PARAMS = {"n_channels": 2, "n_ways": 1}
SCALE = {"blocks_per_plane": 16, "pages_per_block": 16}
BOOT_US = 60000


@pytest.fixture(scope="module")
def drive():
    yield from open_drive(PARAMS)


def open_drive(params, persona=PERSONA):
    """Build (when needed) and start the drive of `persona` (default: the LUN drive's) with
    `params` at SCALE; yields a LunDrive."""
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    cfg = drive_config(persona, params, **SCALE)
    t0 = time.monotonic()
    out = build_drive(cfg)
    c = cfg.as_dict()
    print(f"\ndrive: persona {c['persona']} ({c['part']}), {c['n_channels']} channels x "
          f"{c['n_ways']} ways x {c['luns']} LUNs x {c['planes']} planes, "
          f"{c['pages_per_block']} pages/block x {c['blocks_per_plane']} blocks/plane, page "
          f"{c['page_bytes']} B, NV-DDR2 mode {c.get('nvddr2_mode')} (SDR mode "
          f"{c['onfi_mode']} at bring-up); notes: {'; '.join(c['notes'])}\n"
          f"build: {out} ({time.monotonic() - t0:.0f} s)\nSEED={SEED}")
    with SimDrive(out, boot_us=BOOT_US) as sim:
        env = LunDrive(sim, Drive(sim=sim.socket))
        try:
            yield env
        finally:
            env.d.close()
            print(f"harness log: {sim.log_path}")


class LunDrive:
    """The module's drive: `sim` (the harness), `d` (the open controller; a new one after
    power_cycle)."""

    def __init__(self, sim, d):
        self.sim, self.d = sim, d

    def power_cycle(self):
        """Close the controller, power-cycle the device (SB_RESET: NAND kept), open it again."""
        from sw.ssdlab.drive import Drive, Transport
        self.d.close()
        with Transport(sim=self.sim.socket) as t:
            t.power_cycle()
        self.d = Drive(sim=self.sim.socket)
        return self.d


@pytest.mark.smoke
def test_luns_smoke(drive):
    """A short run on the same drive: every LUN is a die of the FTL (n_dies 4); 4 MiB in random
    128 KiB order (32 multi-plane pages: 8 stripes over the 4 LUNs), 4 KiB overwrites, one
    deallocated range, and everything read back at QD 1, so reads of one LUN run while the other
    LUN of its target programs or reads."""
    d = drive.d
    rng = random.Random(f"{SEED}-luns-smoke")
    assert vendor_log(d)["n_dies"] == 2 * 1 * 2
    # A QD 1 read of never-written LBAs is one 128 KiB fill job of the buffer's copy engine
    # and nothing else: the drive must not count as quiet (fast-forward) while it runs, or
    # the read never completes (the whole-drive test's verify hang).
    far = d.info()["ns_blocks"] - CHUNK
    t0 = d.time_ns()
    assert d.read(far, CHUNK) == bytes(CHUNK * 512)
    took_us = (d.time_ns() - t0) / 1e3
    assert took_us < 2000, f"128 KiB read of never-written LBAs took {took_us:.0f} us"
    img = short_workload(d, rng)
    img.verify(d)


@pytest.mark.full
def test_luns_whole_drive(drive):
    """Every LUN is a die of the FTL (vendor log n_dies = channels x ways x LUNs); the whole
    drive written in random 128 KiB order, then half as much again in random 4 KiB overwrites
    (GC must move data), deallocated ranges reading as zeroes, everything read back, and again
    after a shutdown and power cycle."""
    d = drive.d
    rng = random.Random(f"{SEED}-luns")
    v0 = vendor_log(d)
    assert v0["n_dies"] == 2 * 1 * 2, v0
    nsze = d.info()["ns_blocks"]
    img = Image(0, nsze)
    t0 = time.monotonic()
    order = list(range(0, nsze, CHUNK))
    rng.shuffle(order)
    seed = rng.randrange(1, 1 << 31)
    for s in order:
        img.write(d, s, min(CHUNK, nsze - s), seed)
    for _ in range(nsze // UNIT // 2):
        s = rng.randrange(0, nsze // UNIT) * UNIT
        img.write(d, s, UNIT, rng.randrange(1, 1 << 31))
    for _ in range(8):
        k = rng.randrange(1, 2048)
        s = rng.randrange(0, nsze - k)
        d.trim(s, k)
        img.zero(s, k)
    img.verify(d)
    v1 = vendor_log(d)
    moved = v1["gc_units_moved"] - v0["gc_units_moved"]
    print(f"LUN drive: {nsze} LBAs written, {nsze // UNIT // 2} 4 KiB overwrites, 8 trims; "
          f"GC moved {moved} units, {v1['erases'] - v0['erases']} erases, WAF "
          f"{v1['waf_milli'] / 1000:.3f}; {time.monotonic() - t0:.0f} s wall, simulated "
          f"{d.time_ns() / 1e6:.1f} ms")
    assert moved > 0, "GC never ran"
    img.verify(drive.power_cycle())


@pytest.mark.full
def test_luns_grown_bad_blocks(drive):
    """Fault injection at run time (SB_FAULT, `ssdlab drive bad-block`): seven block pairs of
    one die (channel 1, way 0, LUN 1: the FTL's die 3) grow bad while the drive runs, then 8 MiB
    is written in random 128 KiB order. The die's next blocks fail their erase or program (the
    die's FAIL bit): the firmware retires them, writes the data elsewhere and every LBA reads
    back right, with no media error; the vendor log's bad blocks and SMART's Available Spare
    show them (this scaled drive has a few spare pairs: below the threshold, the critical
    warning's spare bit), and so they stay after a power cycle."""
    from sw.ssdlab.drive import DriveError
    d = drive.d
    rng = random.Random(f"{SEED}-luns-bad")
    v0, s0 = vendor_log(d), d.smart_log()
    for block in range(6, 20):                  # pairs 3..9: planes 0 and 1 of each
        assert d.bad_block(1, 0, 1, block)
    with pytest.raises(DriveError, match="no block 32"):
        d.bad_block(1, 0, 1, 32)                # 16 blocks per plane x 2 planes
    with pytest.raises(DriveError):
        d.bad_block(2, 0, 0, 0)                 # the drive has 2 channels
    img = shuffled_fill(d, rng, 8 << 11)
    img.verify(d)
    v1, s1 = vendor_log(d), d.smart_log()
    grown = v1["bad_blocks"] - v0["bad_blocks"]
    print(f"grown bad blocks: {grown} pairs retired on die 3 of the 7 injected; available "
          f"spare {s0['available_spare']} % -> {s1['available_spare']} %; media errors "
          f"{s1['media_errors']}")
    assert 1 <= grown <= 7, (v0, v1)
    assert s1["available_spare"] < s0["available_spare"], (s0, s1)
    assert s1["media_errors"] == s0["media_errors"], (s0, s1)
    if s1["available_spare"] < s1["available_spare_threshold"]:
        assert s1["critical_warning"] & 0x01, s1    # spare below threshold: warned
    d = drive.power_cycle()
    img.verify(d)
    assert vendor_log(d)["bad_blocks"] == v1["bad_blocks"]
