# SPDX-License-Identifier: BSD-2-Clause
"""Every chart kind draws (PNG and SVG), the moving mean and the data-written axis, and the
report names persona, scale factors, commit and seed."""

import pytest

from sw.ssdlab.bench.charts import draw_all, moving_mean, written_axis
from sw.ssdlab.bench.report import write_report
from sw.ssdlab.bench.suites import SUITES

pytestmark = pytest.mark.smoke


def test_moving_mean_and_written():
    assert moving_mean([1, 2, 3, 4, 5], 2) == [1, 1.5, 2.5, 3.5, 4.5]
    assert moving_mean([4, 4, 4], 30) == [4, 4, 4]
    x = written_axis([[0, 1000.0], [1, 1000.0]], 1000, 4096, decimal=True)
    assert x == [pytest.approx(4.096e-3), pytest.approx(8.192e-3)]


@pytest.mark.parametrize("suite", list(SUITES))
def test_charts_and_report(tmp_path, result_factory, suite):
    r = result_factory(suite)
    charts = draw_all([("default", r)], tmp_path / "charts")
    assert set(charts) == {t.name for t in SUITES[suite].tests}
    for files in charts.values():
        assert {f.suffix for f in files} == {".png", ".svg"}
        assert all(f.stat().st_size > 5000 for f in files)
    md, html = write_report(r, tmp_path, charts)
    text = md.read_text()
    for needle in ("persona | default", "scale: time_scale | 0.0001", "0123456789abcdef",
                   "seed | 7", "fio-3.33", "simulated", "n_channels=2", "16 blocks per plane",
                   "per-second samples become one per 1 ms",
                   "simulation speed | 1,000 K cycles/s, 8.00 ms simulated per wall s",
                   "| x | settle: deallocate + idle 90 ms | 30,000,000 | 240.00 | 1.0 | "
                   "30,000 | 240.000 | - | 90.0 % |",
                   "| 400,000 | 3.20 | 1.0 | 400 | 3.200 | 100.0 | 0.0 % |"):
        assert needle in text, needle
    assert "Simulation speed" in html.read_text()
    for t in SUITES[suite].tests:
        assert f"charts/{t.name}.png" in text
        assert f"charts/{t.name}.svg" in html.read_text()
