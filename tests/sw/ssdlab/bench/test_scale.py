# SPDX-License-Identifier: BSD-2-Clause
"""Scale: the minimum I/Os per point (issue 18: at least 2,000 4 KiB or 256 128 KiB I/Os in
the quick profile) and count-based points."""

import pytest

from sw.ssdlab.bench import fiojobs
from sw.ssdlab.bench.fiojobs import Geometry
from sw.ssdlab.bench.scale import PROFILES, Scale
from sw.ssdlab.bench.suites import SUITES

pytestmark = pytest.mark.smoke

GEO = Geometry(capacity=26214400, lba_bytes=512, max_transfer=131072, max_qd=32)


def test_quick_minimum_per_block_size():
    q = PROFILES["quick"]
    assert q.point_min_ios(512) == q.point_min_ios(4096) == 2000
    assert q.point_min_ios(131072) == q.point_min_ios(1 << 20) == 256
    mids = [q.point_min_ios(1 << k) for k in range(12, 18)]
    assert mids == sorted(mids, reverse=True) and len(set(mids)) == 6   # falls at every size
    assert PROFILES["full"].min_ios == (2000, 256)


def test_quick_points_run_their_minimum():
    """Every point of every suite in the quick profile asks fio for at least its minimum
    (io_size, no runtime to cut it short)."""
    q = PROFILES["quick"]
    n = 0
    for s in SUITES.values():
        for t in s.tests:
            for sec in fiojobs.test_jobs(t, t.points, GEO, q, seed=1):
                if sec.kind != "point" or sec.point.duration_s is None:
                    continue
                assert "runtime" not in sec.opts, sec.name
                assert sec.opts["io_size"] >= q.point_min_ios(sec.point.bs) * sec.point.bs
                n += 1
    assert n > 20


def test_max_ios_caps_a_count_point():
    s = Scale(by_count=True, min_ios=(2000, 256), max_ios=300)
    assert s.point_ios(4096) == 300 and s.point_ios(131072) == 256


@pytest.mark.parametrize("bad", [(0, 256), (2000,), (2000, 2.5), "2000"])
def test_bad_min_ios_names_the_field(bad):
    field, msg = Scale(min_ios=bad).check()
    assert field == "min_ios" and "min_ios" in msg


def test_short_point_is_marked_in_the_report():
    from sw.ssdlab.bench.report import ios_text
    assert "SHORT" in ios_text({"ios": 512, "short": True, "min_ios": 2000})
    assert ios_text({"ios": 2000, "short": False, "min_ios": 2000}) == "2000"
