# SPDX-License-Identifier: BSD-2-Clause
"""The harness's firmware profile (--fw-profile, `ssdlab sim fw-profile`) on the drive of
test_drive.py (default persona, 2 channels): over a window of random 4 KiB writes every
clocked cycle is counted for exactly one PC and every instruction retired for exactly one PC
(the sums equal the window's cycles less the fast-forwarded ones, and the CPU's minstret
delta), the write path's functions hold instructions, and the hardware read path's reads
cost the firmware's request handler (about) no instruction."""

import pytest

pytestmark = pytest.mark.smoke

PERSONA, PARAMS = "default", {"n_channels": 2}


@pytest.fixture(scope="module")
def build():
    from sw.ssdlab.flows.sim import build_drive, drive_config
    return build_drive(drive_config(PERSONA, PARAMS))


def check_sums(r):
    funcs = r["functions"]
    assert sum(c for c, _ in funcs.values()) == r["cycles"] - r["skipped"]
    assert sum(k for _, k in funcs.values()) == r["instret"] > 0


def test_writes(build, tmp_path):
    from sw.ssdlab.flows.fw_profile import format_report, profile_window
    r = profile_window(build, "randwrite", qd=4, n_ios=150, region_mib=2, out_dir=tmp_path)
    print("\n" + format_report(r, top=12))
    assert r["errors"] == 0 and r["n_ios"] == 150
    check_sums(r)
    funcs = r["functions"]
    for f in ("ftl_be_request", "ftl_write_unit_from", "copy_start"):
        assert funcs.get(f, (0, 0))[1] >= 150, f"{f}: {funcs.get(f)}"


def test_hardware_path_reads(build, tmp_path):
    from sw.ssdlab.flows.fw_profile import profile_window
    r = profile_window(build, "randread", qd=4, n_ios=150, region_mib=2, out_dir=tmp_path)
    assert r["errors"] == 0 and r["n_ios"] == 150
    check_sums(r)
    assert r["ftl"].get("hw_reads", 0) == 150, r["ftl"]
    # a request the firmware handles costs its handler a few hundred instructions; a few
    # instructions of the handler that the link-time optimiser moved into the main loop
    # still count for its lines
    assert r["functions"].get("ftl_be_request", (0, 0))[1] < 150 // 10, r["functions"]
