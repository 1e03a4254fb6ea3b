# SPDX-License-Identifier: BSD-2-Clause
"""fio's numjobs on one simulated drive (sw/fio README, "Several jobs on one drive"): each job on
its own I/O queue pair, all advancing one simulated clock.

smoke, on the 2-channel default drive the other fio tests use (the persona's 32 I/O queues,
so no drive is built for this file alone): numjobs=4 completes and
group_reporting adds the four up; the engine's per-command log shows each job's commands on its
own queue; the figures over simulated nanoseconds match fio's I/O count; numjobs=64 is refused
before any I/O with a message naming 64 and 32; a fixed amount of QD1 work takes less simulated
time shared by two jobs than done by one (the jobs overlap in simulated time).
"""

import re
import sys
from pathlib import Path

import pytest
from test_fio import HERE, OUT, fio, ok

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

N_QUEUES = 32                               # the default persona's host.io_queues
WORK = 192                                  # QD1 writes of the overlap comparison

RUNS = {
    # name: (job file, fio arguments)
    "nj4": (HERE / "jobs" / "numjobs-smoke.fio", ("--numjobs=4",)),
    "nj64": (HERE / "jobs" / "numjobs-smoke.fio", (f"--numjobs={2 * N_QUEUES}",)),
    "one_job": (HERE / "jobs" / "qd1-write.fio", ("--numjobs=1", f"--number_ios={WORK}")),
    "two_jobs": (HERE / "jobs" / "qd1-write.fio", ("--numjobs=2", f"--number_ios={WORK // 2}")),
}


def build_io_queues(build):
    import json
    return json.loads((Path(build) / "config.json").read_text())["n_io_queues"]


def run_numjobs():
    from sw.ssdlab.bench.results import iolog_figures
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    build = build_drive(drive_config("default", {"n_channels": 2}))
    assert build_io_queues(build) == N_QUEUES
    OUT.mkdir(parents=True, exist_ok=True)
    res = {}
    with SimDrive(build, boot_us=60000) as sim:
        for name, (job, args) in RUNS.items():
            log = OUT / f"numjobs-{name}.iolog"
            log.unlink(missing_ok=True)
            p = fio("--sim", sim.socket, "--output-format=json", *args, job,
                    env={"SSDLAB_IOLOG": str(log)})
            res[name] = dict(returncode=p.returncode, stdout=p.stdout, stderr=p.stderr,
                             ns=iolog_figures(log, True) if log.exists() else None,
                             lines=log.read_text().splitlines() if log.exists() else [])
    return res


@pytest.fixture(scope="module")
def runs():
    import fcntl
    OUT.mkdir(parents=True, exist_ok=True)
    with open(OUT / "drive.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return run_numjobs()


@pytest.mark.smoke
def test_four_jobs_each_on_its_own_queue(runs):
    r = runs["nj4"]
    j = ok(r)
    (job,) = j["jobs"]                              # group_reporting: one figure for four
    assert job["error"] == 0
    assert job["read"]["total_ios"] == 4 * 64
    ns = r["ns"]
    assert ns["queues"] == {1: 64, 2: 64, 3: 64, 4: 64}, ns["queues"]
    # the engine's own line per job, one per queue
    qs = sorted(int(q) for q in re.findall(r"64 commands on queue (\d+)", r["stderr"]))
    assert qs == [1, 2, 3, 4], r["stderr"]
    # aggregated figures from simulated nanoseconds: first submit to last completion of any
    assert ns["ios"] == 256
    assert ns["iops"] == round(256e9 / ns["span_ns"], 1)
    subs = [int(x.split()[2]) for x in r["lines"]]
    cpls = [int(x.split()[3]) for x in r["lines"]]
    assert ns["span_ns"] == max(cpls) - min(subs)
    # the four jobs overlapped: every job's first command went out before any job finished
    first = {}
    last = {}
    for x in r["lines"]:
        f = x.split()
        q = int(f[5])
        first[q] = min(first.get(q, 1 << 62), int(f[2]))
        last[q] = max(last.get(q, 0), int(f[3]))
    assert max(first.values()) < min(last.values())


@pytest.mark.smoke
def test_numjobs_beyond_queues_is_refused(runs):
    r = runs["nj64"]
    assert r["returncode"] != 0
    assert re.search(rf"numjobs={2 * N_QUEUES} but the drive has {N_QUEUES} I/O queues",
                     r["stderr"]), r["stderr"]
    assert not r["lines"]                           # before any I/O


@pytest.mark.smoke
def test_two_jobs_overlap_in_simulated_time(runs):
    one, two = runs["one_job"], runs["two_jobs"]
    for r in (one, two):
        ok(r)
        assert r["ns"]["ios"] == WORK
    assert two["ns"]["queues"] == {1: WORK // 2, 2: WORK // 2}
    print(f"{WORK} QD1 4 KiB random writes: one job {one['ns']['span_ns']} ns, two jobs "
          f"{two['ns']['span_ns']} ns (simulated)")
    assert two["ns"]["span_ns"] < 0.9 * one["ns"]["span_ns"]
