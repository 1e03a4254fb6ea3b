# SPDX-License-Identifier: BSD-2-Clause
"""The persona's ECC in the simulated drive: the LUN drive of test_drive_luns.py (crucial-m500-960,
2 channels x 1 way x 2 LUNs, SIM_SCALE) built with `ecc=persona` (its BCH code, t = 32 on
1 KiB + 56 B, on every channel) and dies that flip bits at a raw bit error rate of 2e-4
before wear (about 1.7 errors in each 1,080-byte codeword), with a retention loss far
steeper than the part's (retention_shift 1.0 read-retry steps per decade of hours, 2e-3 per
step squared; the part's 20 nm MLC model: 0.19 and 3e-4), so that a year's bake moves the
cells about 3.9 steps: level 0 then sees about 270 errors per codeword, level 3 about 19,
level 4 about 2 (spec/nand_errors.py). Full tier: the ECC halves the simulation's speed and
this drive is a build of its own (rtl/nand/README.md, nand_ecc).

Testplan: tests/system/drive/README.md ("ECC").
"""

import random

import pytest

from .test_drive import LBA, SEED, UNIT, Image, short_workload, shuffled_fill
from .test_drive_luns import PARAMS, SCALE, open_drive

ECC_PARAMS = {**PARAMS, "ecc": "persona",
              "nand_bit_errors": {"rber_base": 2e-4, "retention_shift": 1.0,
                                  "rber_shift": 2e-3}}
YEAR_H = 8760


@pytest.fixture(scope="module")
def drive():
    yield from open_drive(ECC_PARAMS)


@pytest.mark.full
def test_drive_ecc(drive):
    """The persona's ECC on a drive whose dies flip bits (about 7 errors in every 4 KiB read):
    every read of a short workload comes back right, the firmware's flash reads had bits
    corrected (vendor log C0h; the hardware read path's reads are not counted there yet),
    none beyond the code's t = 32, no media error (SMART); after a shutdown and power cycle
    the boot finds the checkpoint areas through the system directory (under the ECC a
    programmed block's bad-block mark is codeword data) and the data reads back."""
    d = drive.d
    rng = random.Random(f"{SEED}-luns-ecc")
    img = short_workload(d, rng)
    img.verify(d)
    log = d.ftl_log()
    smart = d.smart_log()
    print(f"ECC: {log['ecc_corrected_reads']} corrected reads, {log['ecc_failed_reads']} "
          f"failed, at most {log['ecc_max_bits']} bits in a codeword; media errors "
          f"{smart['media_errors']}")
    assert log["ecc_corrected_reads"] >= 1, log
    assert log["ecc_failed_reads"] == 0 and smart["media_errors"] == 0, (log, smart)
    assert 1 <= log["ecc_max_bits"] <= 32, log
    d = drive.power_cycle()
    img.verify(d)
    smart = d.smart_log()
    assert smart["unsafe_shutdowns"] == 0 and smart["media_errors"] == 0, smart
    assert d.ftl_log()["ecc_failed_reads"] == 0


@pytest.mark.full
def test_drive_ecc_read_rate():
    """The channels' read throughput with the ECC against the analytic limit (issue 24), on a
    drive of this build of its own (the module's keeps its workloads): 4 MiB written in
    128 KiB order, a shutdown and power cycle (the write buffer goes to flash, so every read
    comes from the dies through the decoder), then 160 sequential 128 KiB reads at QD 32.
    At a raw bit error rate of 2e-4 nearly every codeword has errors, so each takes the
    decoder's (1,024 + 56) + 2t + 3 = 1,147 clocks: 111.6 MB/s a channel at 125 MHz, below
    the bus's 1,080 bytes a codeword (sw/ssdlab/bench/limits.py). The rate must reach 90 %
    of that bound and never pass it; no command fails, reads are corrected and none is
    uncorrectable (the data itself is checked by test_drive_ecc)."""
    from sw.ssdlab.bench.limits import ecc_decoder_mb_s, flash_limit_mb_s
    from sw.ssdlab.flows.sim import drive_config
    cfg = drive_config("crucial-m500-960", ECC_PARAMS, **SCALE).as_dict()
    region = 4 << 11                                    # 4 MiB of 512 B LBAs
    for env in open_drive(ECC_PARAMS):
        d = env.d
        w = d.bench(write=True, io_blocks=256, qd=8, n_ios=region // 256, lba_count=region)
        d = env.power_cycle()
        before = d.ftl_log()
        r = d.bench(write=False, io_blocks=256, qd=32, n_ios=160, lba_count=region)
        log = d.ftl_log()
    mb_s = r["bytes"] / r["elapsed_ns"] * 1e3
    decoder = cfg["n_channels"] * ecc_decoder_mb_s(cfg, errors=True)
    flash = flash_limit_mb_s(cfg, "read", 131072)        # error-free codewords
    corrected = log["ecc_corrected_reads"] - before["ecc_corrected_reads"]
    print(f"ECC read rate: {cfg['persona']}, {cfg['n_channels']} ch x {cfg['n_ways']} way x "
          f"{cfg['luns']} LUNs, BCH t = {cfg['ecc']['t']} on {cfg['ecc']['data_bytes']} + "
          f"{cfg['ecc']['parity_bytes']} B: 160 x 128 KiB sequential reads QD 32 after a power "
          f"cycle: {mb_s:.1f} MB/s; decoder bound with errors {decoder:.1f} MB/s "
          f"({100 * mb_s / decoder:.1f} %), error-free limit {flash:.1f} MB/s; "
          f"{corrected} reads corrected, p50 {r['lat_p50_ns']} ns")
    assert w["errors"] == r["errors"] == 0, (w, r)
    assert 0.9 * decoder <= mb_s <= decoder * 1.001, (mb_s, decoder)
    assert corrected >= 1 and log["ecc_failed_reads"] == before["ecc_failed_reads"], log


@pytest.mark.full
def test_drive_read_retry(drive):
    """Read retry on the drive: 4 MiB written, read back at QD 1 (4 KiB random reads), then
    a year's retention bake (SB_BAKE: `ssdlab drive bake 8760`) and the same reads again:
    every read returns the right data, through read retry (SET FEATURES 89h levels; the
    hardware read path hands its failed requests back to the firmware, which retries) and
    refresh (a block whose read needed retry has its data moved), with no media error; the
    latency percentiles before and after the bake show the retry tail.
    A power cycle then boots through the aged system directory and journal and the data
    still reads back."""
    d = drive.d
    rng = random.Random(f"{SEED}-luns-retry")
    img = short_workload(d, rng)
    d.flush()
    n = img.n
    bench = dict(random=True, io_blocks=8, qd=1, n_ios=300, lba_count=n, seed=7)
    start = d.ftl_log()
    fresh = d.bench(**bench)
    before = d.ftl_log()
    assert d.bake(YEAR_H) == 2              # the die models: 2 channels x 1 way (2 LUNs each)
    aged = d.bench(**bench)
    img.verify(d)
    log, smart = d.ftl_log(), d.smart_log()
    retries = log["read_retries"] - before["read_retries"]
    recovered = log["retry_recovered"] - before["retry_recovered"]
    print(f"read retry: 300 QD1 4 KiB random reads, fresh: p50 {fresh['lat_p50_ns']} ns, "
          f"p99 {fresh['lat_p99_ns']} ns, max {fresh['lat_max_ns']} ns; after {YEAR_H} h "
          f"bake: p50 {aged['lat_p50_ns']} ns, p99 {aged['lat_p99_ns']} ns, max "
          f"{aged['lat_max_ns']} ns; {retries} reads again at a retry level, {recovered} "
          f"recovered, {log['refreshed_blocks']} blocks refreshed, {log['hw_handbacks']} "
          f"handed back by the hardware path, "
          f"{log['ecc_failed_reads']} failed, media errors {smart['media_errors']}")
    assert fresh["errors"] == 0 and aged["errors"] == 0, (fresh, aged)
    assert before["read_retries"] == start["read_retries"], (start, before)   # fresh: none
    # every read needing retry passed at level 3 or 4 (shift 3.9 steps); refresh moved the
    # blocks they were in, so later reads of those blocks' data need none
    assert recovered >= 1 and retries >= 3 * recovered, log
    assert log["refreshed_blocks"] >= 1 and log["hw_handbacks"] >= 1, log
    assert log["ecc_failed_reads"] == 0 and smart["media_errors"] == 0, (log, smart)
    assert aged["lat_p99_ns"] > fresh["lat_p99_ns"] * 2, (fresh, aged)     # the retry tail
    d = drive.power_cycle()
    img.verify(d)
    smart = d.smart_log()
    assert smart["unsafe_shutdowns"] == 0 and smart["media_errors"] == 0, smart


@pytest.mark.full
def test_drive_die_failure(drive):
    """A whole die killed mid-run (SB_FAULT_DIE_FAIL: `ssdlab drive die-fail --channel 1
    --lun 1`): 4 MiB written, the die fails, 1 MiB more written (its programs there fail),
    then every 4 KiB of the first 4 MiB read back: the firmware takes the die out of service
    (vendor log dead_dies 1), every unit it held is an Unrecovered Read Error (lost: this
    persona has no die parity), every other unit reads back right, never wrong data; SMART's
    Critical Warning says reliability is degraded and counts the media errors. Last in the
    module: the drive keeps the failed die."""
    from sw.ssdlab.drive import NvmeStatusError
    d = drive.d
    rng = random.Random(f"{SEED}-luns-diefail")
    n = 4 << 11
    img = shuffled_fill(d, rng, n)
    d.flush()
    assert d.die_fail(1, 0, 1)                  # channel 1, way 0, LUN 1: the FTL's die 3
    more = Image(n, 2 << 11)
    for lba in range(n, n + (2 << 11), 256):
        try:
            more.write(d, lba, 256, rng.randrange(1, 1 << 31))
        except NvmeStatusError:                 # read-only once the spare is gone
            break
    lost = wrong = 0
    for lba in range(0, n, UNIT):
        try:
            got = d.read(lba, UNIT)
        except NvmeStatusError as e:
            assert e.status & 0x7FF == 0x281, hex(e.status)     # Unrecovered Read Error
            lost += 1
            continue
        wrong += got != bytes(img.data[lba * LBA:(lba + UNIT) * LBA])
    log, smart = d.ftl_log(), d.smart_log()
    print(f"die failure: {lost} of {n // UNIT} units lost, {wrong} wrong; vendor log: dead "
          f"dies {log['dead_dies']}, units lost {log['units_lost']}; SMART: critical "
          f"warning {smart['critical_warning']:#x}, available spare "
          f"{smart['available_spare']} %, media errors {smart['media_errors']}")
    assert log["dead_dies"] == 1 and wrong == 0, (log, wrong)
    # a quarter of the units, give or take the striping's order
    assert n // UNIT // 8 <= lost <= n // UNIT // 2 and log["units_lost"] >= lost, log
    assert smart["critical_warning"] & 0x04 and smart["media_errors"] >= lost, smart
