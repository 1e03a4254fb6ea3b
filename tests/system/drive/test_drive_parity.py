# SPDX-License-Identifier: BSD-2-Clause
"""Die parity in the simulated drive (issue 24): intel-750-1.2t, whose persona stripes parity
across its dies (die-raid5), narrowed to 4 channels x 1 way (one stripe of the 4 dies: 3 data
pages and a parity page per row) at SIM_SCALE, built with the persona's ECC (BCH t = 32 on
1 KiB + 56 B), so the reads of a failed die fail the code. The firmware writes bands, XORs each
row's pages with the copy engine's XOR mode (soc/buffer_copy.py) and rebuilds what a die
cannot return (sw/firmware/ftl_parity.c). Full tier: a drive build of its own.

Testplan: tests/system/drive/README.md ("Die parity").
"""

import random

import pytest

from .test_drive import LBA, SEED, UNIT, Image, shuffled_fill
from .test_drive_luns import open_drive

PERSONA = "intel-750-1.2t"
PARAMS = {"n_channels": 4, "n_ways": 1, "ecc": "persona"}


@pytest.fixture(scope="module")
def drive():
    yield from open_drive(PARAMS, PERSONA)


@pytest.mark.full
def test_drive_parity_die_failure(drive):
    """A whole die killed mid-run (SB_FAULT_DIE_FAIL, `ssdlab drive die-fail --channel 1`) on
    the parity persona: 6 MiB written in random 128 KiB order and overwritten in part, the die
    fails, 2 MiB more written (its programs there fail and go to the other dies), then every
    4 KiB of the 8 MiB read back: all right, none an Unrecovered Read Error; the firmware took
    the die out of service (vendor log dead_dies 1), rebuilt its units from the other dies
    (parity_rebuilt), lost none (units_lost 0, parity_failed 0), and moved them off the die
    in the background; SMART says reliability is degraded and counts no media error (every
    failed read was recovered). After a power cycle the data still reads back right."""
    d = drive.d
    assert d.ftl_log()["dies"] == 4
    rng = random.Random(f"{SEED}-parity")
    n, more = 6 << 11, 2 << 11
    img = shuffled_fill(d, rng, n)
    whole = Image(0, n + more)
    whole.data[:n * LBA] = img.data
    for _ in range(64):                         # overwrites: rows of several bands
        whole.write(d, rng.randrange(0, n // UNIT) * UNIT, UNIT, rng.randrange(1, 1 << 31))
    d.flush()
    assert d.die_fail(1, 0, 0)                  # channel 1, way 0: the FTL's die 1
    for lba in range(n, n + more, 256):
        whole.write(d, lba, 256, rng.randrange(1, 1 << 31))
    wrong = 0
    for lba in range(0, n + more, UNIT):
        wrong += d.read(lba, UNIT) != bytes(whole.data[lba * LBA:(lba + UNIT) * LBA])
    log, smart = d.ftl_log(), d.smart_log()
    print(f"die parity: die 1 of 4 failed; {wrong} of {(n + more) // UNIT} units wrong; vendor "
          f"log: dead dies {log['dead_dies']}, rebuilt {log['parity_rebuilt']}, rebuilds "
          f"failed {log['parity_failed']}, units lost {log['units_lost']}; SMART: critical "
          f"warning {smart['critical_warning']:#x}, media errors {smart['media_errors']}")
    assert wrong == 0
    assert log["dead_dies"] == 1 and log["parity_rebuilt"] > 0, log
    assert log["units_lost"] == 0 and log["parity_failed"] == 0, log
    assert smart["critical_warning"] & 0x04 and smart["media_errors"] == 0, smart
    d = drive.power_cycle()
    whole.verify(d)
    assert d.ftl_log()["units_lost"] == 0
