# SPDX-License-Identifier: BSD-2-Clause
"""The workload suites of ../shared/reference/workloads.md as data: `SUITES[name]` is a
`Suite`, a list of `Test`s; a test is a sequence of steps (`Trim`, `Idle`, `Fill`) and
measured `Point`s. Durations are the methodology's, in seconds of the drive's time; the runner
applies the scale factors (`scale.py`). Nothing here runs anything.

Mapping choices (also printed in every report, `Suite.notes`):
- T workers x queue depth Q become T fio jobs (numjobs=T, group_reporting) at iodepth Q, each
  on its own I/O queue pair (sw/fio/README.md); on a drive with fewer than T queues (SATA: one
  NCQ queue) one job at iodepth Q x T, with a note.
- "Mixed, one worker reads and one writes" is one job with rw=rw (sequential) or randrw and
  rwmixread = the read share.
- Read tests after a deallocation first write their region (a `Fill` of the test region):
  reading deallocated LBAs would measure the controller, not the flash.
"""

from dataclasses import dataclass, field

__all__ = ["Point", "Trim", "Idle", "Fill", "Test", "Suite", "SUITES", "suite_names", "KIB",
           "MIB", "GIB"]

KIB, MIB, GIB = 1 << 10, 1 << 20, 1 << 30


@dataclass(frozen=True)
class Point:
    """One measurement: one fio job. x: the chart's x value; series: the curve it belongs to.
    region: "drive" (the whole LBA range), "filled" (what the preconditioning wrote), "test"
    (the test region, the `region_mib` scale factor) or "cdm" (the CrystalDiskMark 1 GB
    area, `cdm_mib`). duration_s: None for the degradation run (its
    length is `write_multiple` x capacity). sample: record per-second IOPS."""
    name: str
    series: str
    x: object
    rw: str
    bs: int
    qd: int = 1
    workers: int = 1
    rwmixread: int | None = None
    duration_s: float | None = 180.0
    region: str = "drive"
    sample: bool = False
    label: str = ""


@dataclass(frozen=True)
class Trim:
    """Deallocate the whole drive (NVMe Dataset Management / TRIM)."""


@dataclass(frozen=True)
class Idle:
    """Leave the drive idle (no I/O) for seconds (scaled by time_scale)."""
    seconds: float


@dataclass(frozen=True)
class Fill:
    """Write sequentially (128 KiB, QD 32, random incompressible data) from fraction `start`
    to fraction `end` of the region ("drive" or "test")."""
    end: float
    start: float = 0.0
    region: str = "drive"


@dataclass
class Test:
    """name: file-system safe; chart: qd | bs | mixed | bars | degradation | recovery | table |
    fill; metric: iops | mb_s (the figure the methodology reports)."""
    name: str
    title: str
    chart: str
    metric: str
    steps: list
    x_label: str = ""
    thin: bool = True       # the quick profile may keep fewer points of its sweeps

    @property
    def points(self):
        return [s for s in self.steps if isinstance(s, Point)]


@dataclass
class Suite:
    name: str
    title: str
    decimal: bool                     # MB/s = 10^6 B/s (True) or MiB/s (False)
    tests: list
    precondition: list = field(default_factory=list)
    notes: list = field(default_factory=list)

    @property
    def mb_unit(self):
        return "MB/s" if self.decimal else "MiB/s"

    def test(self, name):
        for t in self.tests:
            if t.name == name:
                return t
        raise KeyError(name)


_MAP_NOTES = [
    "T workers x queue depth Q run as T fio jobs (numjobs=T) at iodepth Q, each on its own "
    "I/O queue pair, figures of the T jobs together; one job at iodepth Q x T where the drive "
    "has fewer than T queues (noted on the point)",
    "random data, direct I/O, I/O aligned to 4 KiB (or to the block size when smaller)",
]


def _rw_pair(prefix, rws, xs, bs_of, qd_of, duration, region="drive", workers=1,
             label_of=None):
    out = []
    for rw, series in rws:
        for x in xs:
            out.append(Point(f"{prefix}-{series}-{x}", series, x, rw, bs_of(x), qd_of(x),
                             workers, None, duration, region,
                             label=label_of(series, x) if label_of else ""))
    return out


def _bs_label(b):
    return f"{b // KIB}K" if b >= KIB else f"{b}B"


def _review():
    settle = [Trim(), Idle(15 * 60)]
    fill_test = Fill(1.0, region="test")
    t1 = Test("seq", "Sequential read and write, 256 KB, QD 1", "bars", "mb_s",
              [*settle, fill_test,
               Point("seq-read", "read", "read", "read", 256 * KIB, 1, duration_s=60,
                     region="test", label="read"),
               Point("seq-write", "write", "write", "write", 256 * KIB, 1, duration_s=60,
                     region="test", label="write")], thin=False)
    t2 = Test("rand", "Random 4 KB read and write at QD 1 and QD 4", "bars", "iops",
              [*settle, fill_test,
               *_rw_pair("rand", [("randread", "read"), ("randwrite", "write")], [1, 4],
                         lambda x: 4 * KIB, lambda x: x, 180, "test",
                         label_of=lambda s, x: f"{s} QD{x}")], thin=False)
    qds = [1, 2, 4, 8, 16, 32]
    t3 = Test("qd", "Random 4 KB read and write vs queue depth", "qd", "iops",
              [*settle, fill_test,
               *_rw_pair("qd", [("randread", "read"), ("randwrite", "write")], qds,
                         lambda x: 4 * KIB, lambda x: x, 180, "test")],
              x_label="queue depth")
    sizes = [512 << i for i in range(10)]          # 512 B ... 256 KB
    t4 = Test("bs", "Random read and write vs block size, QD 4", "bs", "mb_s",
              [*settle, fill_test,
               *_rw_pair("bs", [("randread", "read"), ("randwrite", "write")], sizes,
                         lambda x: x, lambda x: 4, 180, "test")],
              x_label="block size")
    shares = [100, 80, 60, 40, 20, 0]
    t5a = Test("mixed-seq", "Mixed sequential 128 KB, 2 workers x QD 1, vs read share",
               "mixed", "mb_s",
               [*settle, fill_test,
                *[Point(f"mixseq-{s}", "mixed", s, "rw", 128 * KIB, 1, 2, s, 180, "test")
                  for s in shares]], x_label="read share (%)")
    t5b = Test("mixed-rand", "Mixed random 4 KB, 4 workers x QD 1, vs read share",
               "mixed", "iops",
               [*settle, fill_test,
                *[Point(f"mixrand-{s}", "mixed", s, "randrw", 4 * KIB, 1, 4, s, 180, "test")
                  for s in shares]], x_label="read share (%)")
    t6 = Test("degradation", "Write degradation: random 4 KB writes at QD 32", "degradation",
              "iops",
              [*settle,
               Point("degradation", "write", 0, "randwrite", 4 * KIB, 32, duration_s=None,
                     sample=True)], x_label="data written (GB)", thin=False)
    recover = dict(rw="randwrite", bs=4 * KIB, qd=32, duration_s=10)
    t7 = Test("recovery", "Recovery after the degradation run: random 4 KB writes at QD 32",
              "recovery", "iops",
              [Idle(15 * 60),
               Point("recovery-idle", "write", "after 15 min idle", label="after 15 min idle",
                     **recover),
               Trim(),
               Point("recovery-trim", "write", "after deallocation",
                     label="after deallocation", **recover)], thin=False)
    cdm = Test("cdm", "CrystalDiskMark-style summary, 1 GB region", "table", "mb_s",
               [Trim(), Fill(1.0, region="cdm"),
                Point("cdm-seq-read", "read", "Seq Q32T1", "read", 128 * KIB, 32,
                      duration_s=5, region="cdm", label="Seq Q32T1"),
                Point("cdm-seq-write", "write", "Seq Q32T1", "write", 128 * KIB, 32,
                      duration_s=5, region="cdm", label="Seq Q32T1"),
                Point("cdm-4k-q32-read", "read", "4K Q32T1", "randread", 4 * KIB, 32,
                      duration_s=5, region="cdm", label="4K Q32T1"),
                Point("cdm-4k-q32-write", "write", "4K Q32T1", "randwrite", 4 * KIB, 32,
                      duration_s=5, region="cdm", label="4K Q32T1"),
                Point("cdm-4k-q1-read", "read", "4K Q1T1", "randread", 4 * KIB, 1,
                      duration_s=5, region="cdm", label="4K Q1T1"),
                Point("cdm-4k-q1-write", "write", "4K Q1T1", "randwrite", 4 * KIB, 1,
                      duration_s=5, region="cdm", label="4K Q1T1")], thin=False)
    return Suite("review", "3DNews desktop methodology (2015-2016)", False,
                 [t1, t2, t3, t4, t5a, t5b, t6, t7, cdm],
                 precondition=[Fill(1.0)],
                 notes=_MAP_NOTES + [
                     "preconditioning: the drive written sequentially once (the fraction "
                     "`fill` of it); before each test the drive is deallocated and left idle "
                     "15 min (x time_scale)",
                     "read tests write their region first (after the deallocation)",
                     "recovery: 15 min idle without TRIM after the degradation run, measure; "
                     "deallocate, measure (10 s each)",
                     "CrystalDiskMark-style table: Seq = 128 KiB at QD 32 (CrystalDiskMark "
                     "5's Seq Q32T1), 5 s per cell, on min(1 GiB, capacity)"])


def _enterprise():
    tests = []
    for phase, title, pre in (("empty", "empty drive", [Trim()]),
                              ("full", "drive with 10 % free", [Fill(0.9)])):
        steps = list(pre) + ([Fill(1.0, region="cdm")] if phase == "empty" else [])

        def p(name, series, x, rw, bs, q, t, mix=None, phase=phase):
            return Point(f"{phase}-{name}", series, x, rw, bs, q, t, mix, 30, "cdm",
                         label=x)
        steps += [p("seq-read", "read", "SEQ128K Q8T8", "read", 128 * KIB, 8, 8),
                  p("seq-write", "write", "SEQ128K Q8T8", "write", 128 * KIB, 8, 8),
                  p("seq-mix", "mix 70/30", "SEQ128K Q8T8", "rw", 128 * KIB, 8, 8, 70)]
        for q, t in ((1, 1), (4, 1), (4, 4), (4, 8), (32, 8)):
            steps += [p(f"rnd4k-q{q}t{t}-read", "read", f"RND4K Q{q}T{t}", "randread",
                        4 * KIB, q, t),
                      p(f"rnd4k-q{q}t{t}-write", "write", f"RND4K Q{q}T{t}", "randwrite",
                        4 * KIB, q, t)]
        for bs in (4, 16, 64, 256):
            steps.append(p(f"rnd{bs}k-qd1-read", "read", f"RND{bs}K QD1 read", "randread",
                           bs * KIB, 1, 1))
        tests.append(Test(f"cdm8-{phase}", f"CrystalDiskMark 8 profile, {title}", "table",
                          "mb_s", steps, thin=False))
    return Suite("enterprise", "iXBT 2021 methodology (CrystalDiskMark 8 profile)", True,
                 tests, notes=_MAP_NOTES + [
                     "MB/s decimal (10^6 B/s); 30 s per cell on min(1 GiB, capacity)",
                     "empty: after deallocating the drive (the test region written first); "
                     "full: the drive filled to 90 % before the second pass"])


def _freespace():
    levels = [0, 10, 25, 50, 75, 90, 100]
    steps = [Trim()]
    prev = 0
    for lv in levels:
        if lv > prev:
            steps.append(Fill(lv / 100, prev / 100))
        steps.append(Point(f"fill-{lv}", "write", lv, "randwrite", 4 * KIB, 4,
                           duration_s=60, label=f"{lv} %"))
        prev = lv
    steps += [Trim(), Point("fill-trimmed", "after deallocation", 0, "randwrite", 4 * KIB, 4,
                            duration_s=60, label="after deallocation")]
    t = Test("freespace", "Random 4 KB writes at QD 4 vs fill level", "fill", "iops", steps,
             x_label="drive filled (%)")
    return Suite("freespace", "3DNews 2013 free-space methodology", False, [t],
                 notes=_MAP_NOTES + [
                     "fill levels 0, 10, 25, 50, 75, 90, 100 % (sequential 128 KiB writes "
                     "of random data); 60 s of random 4 KiB writes at QD 4 over the whole "
                     "LBA range after each; then deallocate and measure once more"])


def _qdscan():
    qds = [1, 2, 4, 8, 16, 32, 64]
    tests = []
    for rw, series in (("randread", "read"), ("randwrite", "write")):
        tests.append(Test(f"qd-{series}", f"Random 4 KB {series} vs queue depth", "qd",
                          "iops",
                          [Point(f"qd-{series}-{q}", series, q, rw, 4 * KIB, q,
                                 duration_s=60, sample=True,
                                 region="filled" if rw == "randread" else "drive")
                           for q in qds],
                          x_label="queue depth"))
    return Suite("qdscan", "Overclockers.ru 2016 queue-depth scan", False, tests,
                 precondition=[Fill(1.0)],
                 notes=_MAP_NOTES + [
                     "the drive written sequentially once before the scan (the fraction "
                     "`fill` of it; the reads stay in that part); one minute per "
                     "point; a point's IOPS is the mean of its per-second samples"])


def _figures(name, title):
    """The drive's basic figures on the test region, just written: 128 KiB sequential write
    and read at QD 32, 4 KiB random read and write at QD 1 and QD 32 (10 s each)."""
    def p(pname, rw, bs, qd, label):
        return Point(pname, "read" if "read" in rw else "write", label, rw, bs, qd,
                     duration_s=10, region="test", label=label)
    return Test(name, title, "table", "mb_s",
                [Trim(), Fill(1.0, region="test"),
                 p("seqwrite-128k-qd32", "write", 128 * KIB, 32, "SEQ128K Q32"),
                 p("seqread-128k-qd32", "read", 128 * KIB, 32, "SEQ128K Q32"),
                 p("randread-4k-qd1", "randread", 4 * KIB, 1, "RND4K Q1"),
                 p("randread-4k-qd32", "randread", 4 * KIB, 32, "RND4K Q32"),
                 p("randwrite-4k-qd1", "randwrite", 4 * KIB, 1, "RND4K Q1"),
                 p("randwrite-4k-qd32", "randwrite", 4 * KIB, 32, "RND4K Q32")],
                thin=False)


_FIGURES_NOTE = ("the test region deallocated, written sequentially, then each figure for 10 s "
                 "(x time_scale) on it; QD 1 read latency is randread-4k-qd1's")


def _basic():
    figures = _figures("basic", "Basic figures: sequential 128 KiB and random 4 KiB")
    wa = Test("wa", "Write amplification: uniform random 128 KiB writes over the whole drive",
              "table", "mb_s",
              [Trim(), Point("wa-randwrite-128k-qd32", "write", "RND128K Q32 x capacity",
                             "randwrite", 128 * KIB, 32, duration_s=None, region="drive",
                             label="RND128K Q32")], thin=False)
    return Suite("basic", "The drive's basic figures and its write amplification", False,
                 [figures, wa], notes=_MAP_NOTES + [
                     f"basic: {_FIGURES_NOTE}",
                     "wa: the drive deallocated, then write_multiple x its capacity of uniform "
                     "random 128 KiB writes (with replacement: fio's random map would "
                     "overwrite in write order and measure no GC); the test's write "
                     "amplification is the FTL's NAND units over host units during it "
                     "(vendor log page C0h, sw/firmware/README.md)"])


def _fidelity():
    """What `ssdlab fidelity` measures on every persona (issue 20, item 6)."""
    figures = _figures("figures", "Sequential 128 KiB and random 4 KiB at QD 1 and QD 32")
    recover = dict(rw="randwrite", bs=4 * KIB, qd=32, duration_s=10)
    sustained = Test(
        "sustained", "Sustained random 4 KB writes at QD 32 (crosses an SLC cache)",
        "degradation", "iops",
        [Trim(), Idle(15 * 60),
         Point("sustained", "write", 0, "randwrite", 4 * KIB, 32, duration_s=None,
               sample=True),
         Idle(15 * 60),
         Point("sustained-idle", "write", "after 15 min idle", label="after 15 min idle",
               **recover)],
        x_label="data written (GB)", thin=False)
    return Suite("fidelity", "A persona's figures at its full topology", False,
                 [figures, sustained], notes=_MAP_NOTES + [
                     f"figures: {_FIGURES_NOTE}",
                     "sustained: the drive deallocated and left idle 15 min, then "
                     "write_multiple x its capacity of random 4 KiB writes at QD 32 sampled "
                     "against data written (an SLC cache shows as a plateau, then a cliff); "
                     "then 15 min idle and 10 s more of the same writes (the cache folded "
                     "back)"])


SUITES = {s.name: s for s in (_review(), _enterprise(), _freespace(), _qdscan(), _basic(),
                              _fidelity())}


def suite_names():
    return list(SUITES)


def bs_label(b):
    return _bs_label(b)
