# SPDX-License-Identifier: BSD-2-Clause
"""The firmware (sw/firmware) on the host: `make -C sw/firmware host-test` builds the
firmware sources with the mock HAL (tests/sw/firmware/mock_hal.c) and the test program
(test_fw.c) under AddressSanitizer and UBSan; each test here runs one of its tests.

Identify, flash op completions through their clients' functions, queues, features, log
pages (SMART, error, firmware slot, vendor C0h), AER and Abort; FTL integrity on a scaled
drive (whole drive three times, random overwrites, deallocate and Write Zeroes, read back
everything against a shadow copy), read-modify-write of 512-byte LBAs, GC and write
amplification, factory and grown bad blocks, restart from a checkpoint, Format NVM, FUA /
write-through; power cuts at random flash ops and completions, checked against a host model
of what is durable (the map journal). A failure prints the seed and the command that
replays it; SEED=<n> picks the seed."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "build" / "firmware"
BINARY = BUILD / "host" / "test_fw"
SEED = int(os.environ.get("SEED") or "1")     # make exports SEED empty when not given

TESTS = ["identify", "bringup_fail", "bringup_nvddr2", "flash_cb", "queues", "sq_delete",
         "queues_mqes",
         "features", "logs", "integrity", "rmw", "gc", "watchdog", "badblocks", "emu_faults",
         "refresh_paced",
         "restart", "format",
         "fua", "tight", "smallram", "lba4k", "powerloss", "ecc", "retry", "diefail", "diefail_sys",
         "gc_partial_loss", "diefail_reads", "parity_diefail", "parity_reads", "parity_double",
         "die_hang", "parity_hang",
         "persona_op", "idle_gc",
         "luns", "luns_drive", "perf", "slc_static", "slc_dynamic",
         "mixed", "powercut", "powercut_full", "spare", "release", "live_ckpt"]
# the long power-cut campaign (1,500 cuts) is the full tier's; smoke runs 40
FULL = {"powercut_full"}


@pytest.fixture(scope="module")
def test_fw():
    subprocess.run(["make", "-j1", "-C", str(ROOT / "sw" / "firmware"), "host-test",
                    f"BUILD={BUILD}"], check=True, capture_output=True, text=True)
    return BINARY


@pytest.mark.smoke
def test_cross_compiles():
    """Every firmware source compiles for rv32im with -Wall -Wextra -Werror."""
    r = subprocess.run(["make", "-j1", "-C", str(ROOT / "sw" / "firmware"), "check",
                        f"BUILD={BUILD}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.smoke
def test_list_matches(test_fw):
    listed = subprocess.run([str(test_fw)], check=True, capture_output=True,
                            text=True).stdout.split()
    assert listed == TESTS


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.full if n in FULL
                                                else pytest.mark.smoke) for n in TESTS])
def test_firmware(test_fw, name):
    r = subprocess.run([str(test_fw), name, str(SEED)], capture_output=True, text=True,
                       timeout=1800 if name in FULL else 120)
    print(r.stdout)
    assert r.returncode == 0, (f"{name} failed (replay: {test_fw} {name} {SEED})\n"
                               f"{r.stdout}{r.stderr}")
    assert f"PASS {name}" in r.stdout
