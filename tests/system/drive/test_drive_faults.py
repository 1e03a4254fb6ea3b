# SPDX-License-Identifier: BSD-2-Clause
"""Run-time faults of the NAND that take a die away, on the default drive (test_drive.py's
build, a simulation of its own so the other modules keep every die): a hung die, its R/B#
stuck busy (SB_FAULT_STUCK_BUSY, `ssdlab drive stuck-busy`).

Testplan: tests/system/drive/README.md ("A hung die").
"""

import random

import pytest

from sw.ssdlab.drive import NvmeStatusError

from . import test_drive as td
from .test_drive import LBA, SEED, UNIT, pattern, shuffled_fill

env = td.env                     # the drive fixture (this module starts a drive of its own)
URE = 0x281                      # Media and Data Integrity Errors / Unrecovered Read Error
WRITE_PROTECTED = 0x20           # Namespace is Write Protected


def read_units(d, img, n):
    """Every 4 KiB unit of LBAs 0..n-1: (wrong, Unrecovered Read Errors)."""
    wrong = ures = 0
    for lba in range(0, n, UNIT):
        try:
            got = d.read(lba, UNIT)
        except NvmeStatusError as e:
            assert e.status & 0x7FF == URE, f"LBA {lba}: status {e.status:#x}"
            ures += 1
            continue
        wrong += got != bytes(img.data[lba * LBA:(lba + UNIT) * LBA])
    return wrong, ures


@pytest.mark.smoke
def test_stuck_busy_die(env):
    """Channel 1, way 2 hangs for good (its R/B# stays low from its next busy period, through
    RESETs and power cycles) after 1 MiB was written in random order and flushed. Reading the
    1 MiB back: the first read of the die is given up by the back end at its busy timeout
    (vendor log flash_timeouts), the firmware takes the die out of service at once (dead_dies
    1, SMART Critical Warning bit 2), every unit it held is an Unrecovered Read Error (as many
    as units_lost: no parity on this persona), every other unit reads back right, none wrong.
    The die was 1/8 of the raw capacity, more than the spare: the drive is read-only (a write
    gets Namespace is Write Protected, Critical Warning bit 3). After a power cycle the drive
    boots with the die still hung (its bring-up RESET given up) and reads as before."""
    d = env.drive()
    rng = random.Random(f"{SEED}-stuck-busy")
    n = 1 << 11                                 # 1 MiB of 512 B LBAs
    img = shuffled_fill(d, rng, n)
    d.flush()
    log0, smart0 = d.ftl_log(), d.smart_log()
    dies = log0["dies"]
    assert d.stuck_busy(1, 2, 0, for_good=True)
    wrong, ures = read_units(d, img, n)
    log, smart = d.ftl_log(), d.smart_log()
    lost = log["units_lost"] - log0["units_lost"]
    print(f"hung die (channel 1 way 2 of {dies} dies): {ures} of {n // UNIT} units Unrecovered "
          f"Read Errors, {wrong} wrong; vendor log: flash timeouts {log['flash_timeouts']}, "
          f"dead dies {log['dead_dies']}, units lost {lost}; SMART: critical warning "
          f"{smart['critical_warning']:#x}, media errors {smart['media_errors']}")
    assert wrong == 0
    assert 0 < ures == lost < 3 * (n // UNIT) // dies, (ures, lost)
    assert log["flash_timeouts"] >= 1 and log["dead_dies"] == 1, log
    assert smart["critical_warning"] & 0x04, smart
    assert smart["media_errors"] - smart0["media_errors"] >= ures, smart
    # a die of 8 is 12.5 % of the raw capacity, more than the spare (OP 7 %): read-only now
    with pytest.raises(NvmeStatusError) as e:
        d.write(n, pattern(rng.randrange(1, 1 << 31), n, 256))
    assert e.value.status & 0x7FF == WRITE_PROTECTED, f"{e.value.status:#x}"
    assert smart["critical_warning"] & 0x08, smart
    env.power_cycle()
    d = env.drive()
    assert read_units(d, img, n) == (0, ures)
    log2 = d.ftl_log()
    print(f"after a power cycle: flash timeouts {log2['flash_timeouts']} (the bring-up RESET "
          f"of the hung target: {log['flash_timeouts']} before), dead dies "
          f"{log2['dead_dies']}, critical warning {d.smart_log()['critical_warning']:#x}")
    assert log2["dead_dies"] == 1 and log2["flash_timeouts"] >= 1, log2
