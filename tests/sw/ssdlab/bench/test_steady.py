# SPDX-License-Identifier: BSD-2-Clause
"""The SNIA PTS steady-state rule: five rounds within ±20 % of their mean, the best-fit
slope across them within ±10 %."""

import pytest

from sw.ssdlab.bench.report import steady_text
from sw.ssdlab.bench.steady import verdict

pytestmark = pytest.mark.smoke


def test_flat_series_is_steady():
    v = verdict([50, 900, 1000, 1010, 990, 1005, 995])     # the first rounds are ignored
    assert v["steady"] is True
    assert v["window"] == [1000.0, 1010.0, 990.0, 1005.0, 995.0]
    assert v["mean"] == 1000.0 and v["excursion_pct"] == 1.0


def test_excursion_limit():
    # 1200 against a mean of 1000: 20 % exactly is steady; 1210 (mean 1002, 20.8 %) is not
    assert verdict([1000, 1000, 1200, 800, 1000])["steady"] is True
    v = verdict([1000, 1000, 1210, 800, 1000])
    assert v["steady"] is False and v["excursion_pct"] == 20.8


def test_slope_limit():
    # a steady climb of 2.5 % of the mean per round: 10 % across the window, the limit
    assert verdict([950, 975, 1000, 1025, 1050])["steady"] is True
    # 3 % per round: every round within ±6 %, but the line moves 12 %: a drift, not steady
    v = verdict([940, 970, 1000, 1030, 1060])
    assert v["excursion_pct"] == 6.0 and v["slope_pct"] == 12.0 and v["steady"] is False


def test_not_judged():
    assert verdict([1000, 1000, 1000, 1000])["steady"] is None
    assert "4 rounds, the rule needs 5" in verdict([1] * 4)["why"]
    assert verdict([0, 0, 0, 0, 0])["steady"] is None


def test_report_marks_the_verdict():
    assert steady_text({}) == "-"
    assert steady_text({"steady_state": verdict([940, 970, 1000, 1030, 1060])}) == \
        "NOT steady (±6.0 %, slope 12.0 %)"
    assert steady_text({"steady_state": verdict([1000] * 5)}) == \
        "steady (±0.0 %, slope 0.0 %)"
