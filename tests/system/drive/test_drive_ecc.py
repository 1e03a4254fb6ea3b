# SPDX-License-Identifier: BSD-2-Clause
"""The persona's ECC in the simulated drive: the LUN drive of test_drive_luns.py (crucial-m500-960,
2 channels x 1 way x 2 LUNs, SIM_SCALE) built with `ecc=persona` (its BCH code, t = 32 on
1 KiB + 56 B, on every channel) and dies that flip bits at a raw bit error rate of 2e-4
before wear (about 1.7 errors in each 1,080-byte codeword). Full tier: the ECC halves the
simulation's speed and this drive is a build of its own (rtl/nand/README.md, nand_ecc).

Testplan: tests/system/drive/README.md ("ECC").
"""

import random

import pytest

from .test_drive import SEED, short_workload
from .test_drive_luns import PARAMS, open_drive

ECC_PARAMS = {**PARAMS, "ecc": "persona", "nand_bit_errors": {"rber_base": 2e-4}}


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
