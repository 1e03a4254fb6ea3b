# SPDX-License-Identifier: BSD-2-Clause
"""sw/ssdlab/wearout.py's analytic side and report, without a drive: the binomial tail that
stands beside a wear-out run's measured failures, and the report's table and plot (the run
itself: tests/system/drive/test_drive_wearout.py, full tier)."""

import json
import math

import pytest

from sw.ssdlab.wearout import codeword_fail_probability, markdown, write_report

pytestmark = pytest.mark.smoke


def exact_tail(p, n, t):
    """1 - P(X <= t), X ~ Binomial(n, p), directly (the cases here keep the complement's
    precision)."""
    return 1 - sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(t + 1))


@pytest.mark.parametrize("p, n, t", [(0.02, 200, 5), (0.001, 1000, 0), (0.3, 50, 20),
                                     (1e-4, 8640, 3)])
def test_tail_matches_the_exact_sum(p, n, t):
    got, want = codeword_fail_probability(p, n, t), exact_tail(p, n, t)
    assert math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-300), (got, want)


def test_tail_of_the_personas_code():
    """BCH t = 32 on 1 KiB + 448 parity bits: safe at the part's rated-wear RBER, half the
    codewords lost where the mean reaches t."""
    n, t = 8 * 1024 + 448, 32
    assert codeword_fail_probability(1e-4, n, t) < 1e-20
    assert 0.4 < codeword_fail_probability(32.5 / n, n, t) < 0.6
    assert codeword_fail_probability(0.0, n, t) == 0.0
    assert codeword_fail_probability(1.0, n, t) == 1.0
    ps = [codeword_fail_probability(r, n, t) for r in (1e-3, 2e-3, 3e-3, 4e-3)]
    assert ps == sorted(ps) and ps[0] < 1e-6 < ps[-1]


def test_report_files(tmp_path):
    row = {"pe": 0, "rber": 1e-6, "model_rber": 5e-7, "codeword_fail_p": 0.0, "unit_fail_p": 0.0,
           "units_read": 512, "units_failed": 0, "units_wrong": 0, "ecc_corrected_reads": 3,
           "ecc_max_bits_so_far": 2, "read_retries": 0, "retry_recovered": 0,
           "refreshed_blocks": 0, "lat_p50_ns": 110000, "lat_p99_ns": 150000,
           "smart": {"media_errors": 0}}
    worn = {**row, "pe": 30000, "rber": 3e-3, "model_rber": 3.3e-3, "codeword_fail_p": 0.2,
            "unit_fail_p": 0.6,
            "units_failed": 300, "smart": {"media_errors": 300}}
    report = {"config": {"persona": "p", "part": "x", "channels": 2, "ways": 1, "luns": 2,
                         "code": {"m": 14, "t": 32, "data_bytes": 1024, "parity_bytes": 56},
                         "fill_mib": 2, "bake_h_per_step": 0, "bench": "QD 1"},
              "smart_before": {}, "smart_after": {}, "first_ure": {"pe": 30000},
              "steps": [row, worn]}
    write_report(report, tmp_path)
    assert json.loads((tmp_path / "wearout.json").read_text()) == report
    md = (tmp_path / "wearout.md").read_text()
    assert md == markdown(report)
    assert "| 30000 | 3.00e-03 | 3.30e-03 | 2.0e-01 | 512 | 300 (307.2) | 0 |" in md
    assert (tmp_path / "wearout.png").stat().st_size > 10_000
