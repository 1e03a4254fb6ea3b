# SPDX-License-Identifier: BSD-2-Clause
"""The wear-out run (sw/ssdlab/wearout.py, `ssdlab sim wearout`) on its drive: crucial-m500-960
scaled (2 channels x 1 way x 2 LUNs), the persona's BCH code (t = 32 on 1 KiB) on every
channel, dies flipping bits at their part's own rates (imft-20nm-mlc-128gbit: 5e-7 + 2e-5 x
(P/E / 1000)^1.5), 2 MiB written once and read back whole at 0, 20,000 and 26,000 P/E
cycles (pre-cycled parts: SB_PRECYCLE). Full tier: an ECC build of its own, about ten
minutes.

Testplan: tests/system/drive/README.md ("Wear-out").
"""

import pytest

from spec.nand_geometry import PARTS
from sw.ssdlab.wearout import run_wearout

URE = 0x281                 # NVMe: Media and Data Integrity Errors / Unrecovered Read Error


@pytest.mark.full
def test_wearout(tmp_path):
    """The dies' raw bit error rate follows the part's wear curve; the ECC corrects it,
    with the most bits in a codeword rising towards t; no read fails until the weak cells of
    some codeword outnumber t, and then about as many fail as the binomial tail predicts,
    each an Unrecovered Read Error with its error log entry and a SMART media error, none
    ever returning wrong data."""
    report = run_wearout(steps=(0, 20000, 26000), fill_mib=2, bench_ios=50, out=tmp_path)
    print((tmp_path / "wearout.md").read_text())
    model = PARTS[report["config"]["part"]].bit_errors
    fresh, worn, failing = report["steps"]
    assert report["smart_before"]["media_errors"] == 0
    for r in report["steps"]:
        assert r["units_wrong"] == 0, r                 # a failed read is an error, not data
    assert fresh["units_failed"] == 0 and fresh["smart"]["media_errors"] == 0, fresh
    # the die's truth follows the part's wear curve (a few per cent: one weak-cell draw per
    # page; the failing step's retries read at shifted levels and add their own errors)
    assert abs(worn["rber"] / model.wear_rber(20000) - 1) < 0.1, worn
    assert failing["rber"] >= 0.9 * model.wear_rber(26000), failing
    assert worn["ecc_corrected_reads"] > 0 and 15 <= worn["ecc_max_bits_so_far"] <= 32, worn
    assert worn["units_failed"] <= 2, worn              # analytic: about 0.1 of 512
    # past the limit: failures near the analytic expectation, each retried first
    expect = failing["units_read"] * failing["unit_fail_p"]
    got = failing["units_failed"]
    assert got >= 1 and 0.3 * expect - 3 <= got <= 3 * expect + 3, (got, expect)
    assert failing["read_retries"] >= got, failing
    ure = report["first_ure"]
    assert ure["pe"] == 26000 and ure["status"] == URE, ure
    entry = next(e for e in ure["error_log"] if e["lba"] == ure["lba"])
    assert entry["status"] & 0x7FF == URE and entry["nsid"] == 1, ure
    after = report["smart_after"]
    assert after["media_errors"] >= got and after["num_err_log_entries"] >= got, after
    # pre-cycled parts: the firmware's own erase counts, and so Percentage Used, do not move
    assert after["percentage_used"] == report["smart_before"]["percentage_used"]
    assert (tmp_path / "wearout.png").exists()
