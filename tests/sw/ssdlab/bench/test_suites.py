# SPDX-License-Identifier: BSD-2-Clause
"""The suites are workloads.md's tables, and the scale factors do what they say."""

import pytest

from sw.ssdlab.bench.scale import PROFILES, Scale, thin
from sw.ssdlab.bench.suites import KIB, SUITES, Fill, Idle, Point, Trim

pytestmark = pytest.mark.smoke


def test_review_tables():
    s = SUITES["review"]
    assert [t.name for t in s.tests] == ["seq", "rand", "qd", "bs", "mixed-seq", "mixed-rand",
                                         "degradation", "recovery", "cdm"]
    assert not s.decimal and s.mb_unit == "MiB/s"
    assert s.precondition == [Fill(1.0)]
    for t in s.tests[:7]:                      # deallocate + 15 min idle before each test
        assert t.steps[:2] == [Trim(), Idle(900)], t.name
    seq = s.test("seq").points
    assert {(p.rw, p.bs, p.qd, p.duration_s) for p in seq} == {
        ("read", 256 * KIB, 1, 60), ("write", 256 * KIB, 1, 60)}
    rand = s.test("rand").points
    assert {(p.rw, p.qd, p.duration_s) for p in rand} == {
        (rw, q, 180) for rw in ("randread", "randwrite") for q in (1, 4)}
    qd = s.test("qd").points
    assert sorted({p.qd for p in qd}) == [1, 2, 4, 8, 16, 32]
    bs = s.test("bs").points
    assert sorted({p.bs for p in bs}) == [512 << i for i in range(10)]
    assert {p.qd for p in bs} == {4}
    mseq = s.test("mixed-seq").points
    assert [p.rwmixread for p in mseq] == [100, 80, 60, 40, 20, 0]
    assert {(p.rw, p.bs, p.workers, p.qd) for p in mseq} == {("rw", 128 * KIB, 2, 1)}
    mrand = s.test("mixed-rand").points
    assert {(p.rw, p.bs, p.workers) for p in mrand} == {("randrw", 4 * KIB, 4)}
    (deg,) = s.test("degradation").points
    assert (deg.rw, deg.bs, deg.qd, deg.duration_s, deg.sample) == (
        "randwrite", 4 * KIB, 32, None, True)
    rec = s.test("recovery").steps
    assert isinstance(rec[0], Idle) and rec[0].seconds == 900
    assert [type(x) for x in rec] == [Idle, Point, Trim, Point]
    cdm = s.test("cdm").points
    assert {(p.rw, p.qd) for p in cdm} == {("read", 32), ("write", 32), ("randread", 32),
                                           ("randwrite", 32), ("randread", 1), ("randwrite", 1)}
    assert {p.region for p in cdm} == {"cdm"}


def test_enterprise_cdm8_profile_empty_and_full():
    s = SUITES["enterprise"]
    assert s.decimal and s.mb_unit == "MB/s"
    assert [t.name for t in s.tests] == ["cdm8-empty", "cdm8-full"]
    for t in s.tests:
        pts = t.points
        assert len(pts) == 3 + 10 + 4
        labels = {p.label for p in pts}
        for q, th in ((1, 1), (4, 1), (4, 4), (4, 8), (32, 8)):
            assert f"RND4K Q{q}T{th}" in labels
        seq = [p for p in pts if p.bs == 128 * KIB]
        assert {(p.qd, p.workers) for p in seq} == {(8, 8)}
        assert {p.rwmixread for p in seq} == {None, 70}
        qd1 = [p.bs for p in pts if p.label.endswith("QD1 read")]
        assert qd1 == [4 * KIB, 16 * KIB, 64 * KIB, 256 * KIB]
        assert {(p.qd, p.workers, p.rw) for p in pts if p.label.endswith("QD1 read")} == {
            (1, 1, "randread")}
        assert len(pts) == len({(p.label, p.series) for p in pts})
    assert s.tests[0].steps[0] == Trim()
    assert Fill(0.9) in s.tests[1].steps


def test_freespace_steps():
    t = SUITES["freespace"].tests[0]
    fills = [s for s in t.steps if isinstance(s, Fill)]
    assert [round(f.end * 100) for f in fills] == [10, 25, 50, 75, 90, 100]
    assert all(a.end == b.start for a, b in zip(fills, fills[1:], strict=False))
    assert isinstance(t.steps[-2], Trim) and t.steps[-1].series == "after deallocation"
    assert {(p.rw, p.bs, p.qd, p.region) for p in t.points} == {("randwrite", 4 * KIB, 4,
                                                                  "drive")}


def test_qdscan():
    s = SUITES["qdscan"]
    for t, rw in zip(s.tests, ("randread", "randwrite"), strict=True):
        assert [p.qd for p in t.points] == [1, 2, 4, 8, 16, 32, 64]
        assert {(p.rw, p.bs, p.duration_s, p.sample) for p in t.points} == {
            (rw, 4 * KIB, 60, True)}
        assert {p.region for p in t.points} == {"filled" if rw == "randread" else "drive"}


def test_basic_figures_and_write_amplification():
    """The basic suite (what the former sim/harness/measure.py measured): six figures on the
    written test region; then write_multiple x capacity of random 128 KiB writes for the WA."""
    s = SUITES["basic"]
    basic, wa = s.test("basic"), s.test("wa")
    assert basic.steps[:2] == [Trim(), Fill(1.0, region="test")]
    assert [(p.rw, p.bs, p.qd) for p in basic.points] == [
        ("write", 128 * KIB, 32), ("read", 128 * KIB, 32), ("randread", 4 * KIB, 1),
        ("randread", 4 * KIB, 32), ("randwrite", 4 * KIB, 1), ("randwrite", 4 * KIB, 32)]
    assert {p.region for p in basic.points} == {"test"}
    assert isinstance(wa.steps[0], Trim)
    (p,) = wa.points
    assert (p.rw, p.bs, p.qd, p.duration_s, p.region) == ("randwrite", 128 * KIB, 32, None,
                                                          "drive")


def test_ftl_delta_write_amplification():
    from sw.ssdlab.bench.report import ftl_note
    from sw.ssdlab.bench.runner import ftl_delta
    before = dict(host_units_written=100, nand_units_written=110, gc_units_moved=5, erases=2,
                  ckpt_units_written=4)
    after = dict(host_units_written=300, nand_units_written=560, gc_units_moved=205,
                 erases=12, ckpt_units_written=14)
    d = ftl_delta(before, after)
    assert d["host_units_written"] == 200 and d["nand_units_written"] == 450
    assert d["write_amplification"] == 2.25
    assert d["write_amplification_with_map"] == 2.3
    assert "write amplification 2.250 (2.300 with the map's writes)" in ftl_note({"ftl": d})
    idle = ftl_delta(after, after)
    assert idle["write_amplification"] is None and ftl_note({"ftl": idle}) is None
    # a drive with an SLC cache: its counters' deltas, in the note
    slc0 = dict(before, slc_units_written=10, slc_blocks_folded=1, slc_units_folded=8)
    slc1 = dict(after, slc_units_written=90, slc_blocks_folded=3, slc_units_folded=40)
    d = ftl_delta(slc0, slc1)
    assert (d["slc_units_written"], d["slc_blocks_folded"], d["slc_units_folded"]) == (80, 2, 32)
    assert "SLC cache: 80 units programmed in SLC, 2 SLC blocks (32 units) folded" in \
        ftl_note({"ftl": d})
    assert "slc_units_written" not in ftl_delta(before, after)


def test_scale_factors():
    s = Scale(time_scale=1e-4)
    assert s.seconds(180) == 18 and s.seconds(1) == 1          # ms, at least 1
    assert s.sample_ms == 1 and Scale(time_scale=0.01).sample_ms == 10
    assert Scale(time_scale=0).check()[0] == "time_scale"
    assert Scale(fill=1.5).check()[0] == "fill"
    assert Scale(max_points=1).check()[0] == "max_points"
    assert all(p.check() is None for p in PROFILES.values())
    pts = SUITES["review"].test("qd").points
    kept = thin(pts, 3)
    assert [p.qd for p in kept if p.series == "read"] == [1, 4, 32]
    assert [p.qd for p in kept if p.series == "write"] == [1, 4, 32]
    assert thin(pts, None) == pts
