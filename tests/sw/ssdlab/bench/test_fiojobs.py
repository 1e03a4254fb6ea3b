# SPDX-License-Identifier: BSD-2-Clause
"""Generated fio jobs: scaled durations, the run-length cap, capacity-based degradation,
queue and transfer limits of the target."""

import pytest

from sw.ssdlab.bench import fiojobs
from sw.ssdlab.bench.fiojobs import Geometry
from sw.ssdlab.bench.runner import plan
from sw.ssdlab.bench.scale import Scale
from sw.ssdlab.bench.suites import SUITES

pytestmark = pytest.mark.smoke

GEO = Geometry(capacity=26214400, lba_bytes=512, max_transfer=131072, max_qd=32)
SC = Scale(time_scale=1e-3, write_multiple=3.0, max_ios=1000, region_mib=4, cdm_mib=8,
           fill=0.5)


def sections(suite, test):
    s = SUITES[suite]
    t = s.test(test)
    return fiojobs.test_jobs(t, t.points, GEO, SC, seed=5)


def test_point_options():
    secs = {s.name: s for s in sections("review", "qd")}
    s = secs["qd-read-8"]
    assert s.opts["rw"] == "randread" and s.opts["bs"] == 4096 and s.opts["iodepth"] == 8
    assert s.opts["runtime"] == "180ms"                       # 180 s x 1e-3
    assert s.opts["io_size"] == 1000 * 4096                   # the cap
    assert s.opts["size"] == 4 << 20 and s.opts["randseed"] == 5


def test_degradation_writes_capacity_multiple_and_samples():
    (s,) = [x for x in sections("review", "degradation") if x.kind == "point"]
    assert s.opts["io_size"] == 3 * 26214400 and "runtime" not in s.opts
    assert s.opts["write_iops_log"] == "logs/degradation"
    assert "log_avg_msec" not in s.opts          # per-I/O log on sim, binned by the runner
    t = SUITES["review"].test("degradation")
    (d,) = [x for x in fiojobs.test_jobs(t, t.points, GEO, SC, 5, avg_logs=True)
            if x.kind == "point"]
    assert d.opts["log_avg_msec"] == 1


def test_target_limits():
    secs = sections("qdscan", "qd-read")
    (q64,) = [s for s in secs if s.name == "qd-read-64"]
    assert q64.opts["iodepth"] == 32 and "iodepth 64 -> 32" in q64.notes[0]
    assert q64.opts["size"] == 13107200                 # reads stay in the filled half
    split = [s for s in sections("review", "bs") if s.point and s.point.bs > GEO.max_transfer]
    assert len(split) == 2
    for s in split:                       # 256 KiB at QD 4: 2 x 128 KiB commands at QD 8
        assert s.kind == "point" and s.opts["bs"] == 131072 and s.opts["iodepth"] == 8
        assert "issued as 2 x 131072 B commands" in s.notes[0]


def test_steps_and_render():
    secs = sections("review", "recovery")
    assert [s.kind for s in secs] == ["idle", "point", "trim", "point"]
    assert secs[0].opts["ms"] == 900
    text = fiojobs.render("t", secs)
    assert "; step: idle 900 ms" in text and "; step: deallocate" in text
    assert text.count("stonewall") == 2 and "[recovery-trim]" in text
    opts = [ln for ln in text.splitlines() if ln and not ln.startswith(";")]
    assert not [ln for ln in opts if ln.split("=")[0] in ("ioengine", "filename", "direct")]


def test_plan_precondition_uses_fill_factor():
    work = plan(SUITES["review"], [], GEO, SC, 1)
    (t, secs), = work
    assert t.name == "precondition"
    assert secs[0].kind == "fill" and secs[0].opts["size"] == 13107200   # half the drive
    assert secs[0].opts["end_fsync"] == 1


def test_workers_are_jobs_on_their_own_queues():
    """CrystalDiskMark's Q32T8: eight fio jobs at iodepth 32 (eight queue pairs) when the
    drive has eight queues; one job at iodepth 256 on a one-queue drive, with a note."""
    t = SUITES["enterprise"].test("cdm8-empty")
    geo8 = Geometry(capacity=26214400, lba_bytes=512, max_transfer=131072, max_qd=1024,
                    n_io_queues=8)
    secs = {s.name: s for s in fiojobs.test_jobs(t, t.points, geo8, SC, seed=5)}
    s = secs["empty-rnd4k-q32t8-read"]
    assert (s.opts["numjobs"], s.opts["iodepth"], s.opts["group_reporting"]) == (8, 32, 1)
    assert s.opts["io_size"] * 8 == SC.max_ios * 4096      # the point's I/Os over 8 jobs
    assert not s.notes
    q = secs["empty-seq-read-q8t8" if "empty-seq-read-q8t8" in secs else "empty-seq-read"]
    assert q.opts["numjobs"] == 8 and q.opts["offset_increment"] == q.opts["size"]
    assert q.opts["size"] * 8 <= 8 << 20                   # each job its own slice
    assert "numjobs" not in secs["empty-rnd4k-q1t1-read"].opts
    geo1 = Geometry(capacity=26214400, lba_bytes=512, max_transfer=131072, max_qd=1024,
                    n_io_queues=1)
    secs = {s.name: s for s in fiojobs.test_jobs(t, t.points, geo1, SC, seed=5)}
    s = secs["empty-rnd4k-q32t8-read"]
    assert s.opts["iodepth"] == 256 and "numjobs" not in s.opts
    assert "T8 as one job at iodepth 256: the drive has 1 I/O queue(s)" in s.notes[0]
