# SPDX-License-Identifier: BSD-2-Clause
"""The ssdlab fio ioengine (sw/fio): stock fio job files on the small simulated drive.

smoke: the engine builds against the fio of setup/fio.sh and fio lists it with its
options; bad options are named; a random read job, a write + verify job and a trim job (with
interrupts) run on a 2-channel simulated drive, through fio's JSON output; fio's latencies are
simulated time — each equals the driver's own doorbell-to-completion time of the same
command (libssdlab's timestamps) plus the one CQ-head doorbell the host writes before fio reads
its clock.
full: every example job file; the same job on two fresh drives gives identical latencies;
verify catches data that is not what was written.

SSDLAB_FIO_DRIVE=<build dir> runs on a drive already built instead of the 2-channel default.
The drive is started once per test session (one simulation at a time: with pytest-xdist the
workers take turns through a lock and share the results of the first).
"""

import fcntl
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
WRAPPER = ROOT / "sw" / "fio" / "ssdlab-fio"
JOBS = ROOT / "sw" / "fio" / "jobs"
HERE = Path(__file__).resolve().parent
OUT = ROOT / "build" / "fio" / "tests"
HOST_DELAY_NS = 200                 # SimDrive's default --host-delay-ns

sys.path.insert(0, str(ROOT))


def fio(*args, env=None, timeout=900):
    """Run the wrapper in build/fio/tests (fio leaves verify state files in its working
    directory); returns CompletedProcess (text)."""
    OUT.mkdir(parents=True, exist_ok=True)
    return subprocess.run([str(WRAPPER), *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=timeout, cwd=OUT)


def engine_stats(stderr):
    """The engine's cleanup line: commands, min/avg/max doorbell-to-completion ns."""
    m = re.search(r"ssdlab: \S+: (\d+) commands on queue \d+, doorbell to completion "
                  r"\(simulated time\) "
                  r"min/avg/max = (\d+)/([\d.]+)/(\d+) ns", stderr)
    assert m, f"no engine statistics line in stderr:\n{stderr}"
    return dict(n=int(m[1]), min=int(m[2]), avg=float(m[3]), max=int(m[4]))


def fio_json(proc):
    assert proc.returncode == 0, f"fio failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    return json.loads(proc.stdout)


# --- one simulated drive, one set of runs, shared by every test of the session ---------------

SMOKE_RUNS = {
    # name: (job file, extra fio arguments)
    "randread": (JOBS / "randread-4k-qd1.fio", ()),
    "verify": (HERE / "jobs" / "verify-smoke.fio", ()),
    "trim_irq": (HERE / "jobs" / "trim-smoke.fio", ("--irq=1", "--shutdown=1")),
}


def run_jobs(runs, fresh_drive_per_run=False, timeout=900):
    """Start the 2-channel simulated drive, run each job through ssdlab-fio; returns
    {name: {"json": ..., "stderr": ..., "wall_s": ...}}."""
    from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
    # SSDLAB_FIO_DRIVE=<build dir>: a drive already built (its firmware as it is), e.g. to
    # test the engine while the drive's sources are being changed.
    prebuilt = os.environ.get("SSDLAB_FIO_DRIVE")
    build = Path(prebuilt) if prebuilt else build_drive(drive_config("default", {"n_channels": 2}))
    results = {}

    def one(sim, name, job, extra):
        t0 = time.monotonic()
        p = fio("--sim", sim.socket, "--output-format=json", *extra, job, timeout=timeout)
        results[name] = dict(returncode=p.returncode, stdout=p.stdout, stderr=p.stderr,
                             wall_s=time.monotonic() - t0)

    if fresh_drive_per_run:
        for name, (job, extra) in runs.items():
            with SimDrive(build, boot_us=60000, host_delay_ns=HOST_DELAY_NS) as sim:
                one(sim, name, job, extra)
    else:
        with SimDrive(build, boot_us=60000, host_delay_ns=HOST_DELAY_NS) as sim:
            for name, (job, extra) in runs.items():
                one(sim, name, job, extra)
            from sw.ssdlab.drive import Drive
            with Drive(sim=sim.socket) as d:
                # the firmware's checkpoint count (vendor log C0h, sw/firmware/README.md)
                results["_ftl"] = ftl = d.ftl_log()
                results["_ckpt_saves"] = ftl["ckpt_saves"]
    return results


def shared(key, runs, **kw):
    """run_jobs once per test session (xdist workers share through a lock and a file)."""
    OUT.mkdir(parents=True, exist_ok=True)
    uid = os.environ.get("PYTEST_XDIST_TESTRUNUID", f"pid{os.getppid()}-{os.getpid()}")
    path = OUT / f"{key}-{uid}.json"
    with open(OUT / "drive.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if path.exists():
            return json.loads(path.read_text())
        res = run_jobs(runs, **kw)
        path.write_text(json.dumps(res))
        return res


@pytest.fixture(scope="module")
def smoke_runs():
    return shared("smoke", SMOKE_RUNS)


def ok(res):
    assert res["returncode"] == 0, f"fio failed:\n{res['stdout']}\n{res['stderr']}"
    return json.loads(res["stdout"])


# --- smoke ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_engine_builds_and_fio_lists_it():
    p = fio("--which")
    assert p.returncode == 0, p.stderr
    engine = re.search(r"engine: (\S+)", p.stdout)[1]
    assert Path(engine).is_file()
    p = fio("--enghelp=" + engine)
    assert p.returncode == 0, p.stderr
    for opt in ("sim", "vfio", "irq", "queues", "qid", "ssdlab_timeout"):
        assert re.search(rf"^{opt}\s+:", p.stdout, re.M), f"option {opt} not listed:\n{p.stdout}"


@pytest.mark.smoke
@pytest.mark.parametrize("args, needle", [
    (["--queues=0"], "queues"),                 # fio's range check of the engine's table
    (["--qeues=2"], "qeues"),                   # unknown option
    (["--queues=2", "--qid=3"], "qid=3"),       # the engine's own check
    (["--irq=maybe"], "irq"),
])
def test_bad_option_names_it(tmp_path, args, needle):
    # No drive is reached: a nonexistent socket, the option is rejected first.
    p = fio("--sim", tmp_path / "none.sock", *args, JOBS / "randread-4k-qd1.fio", timeout=120)
    assert p.returncode != 0
    assert needle in p.stdout + p.stderr, p.stdout + p.stderr


@pytest.mark.smoke
def test_no_drive_is_a_clear_error(tmp_path):
    p = fio("--sim", tmp_path / "none.sock", JOBS / "randread-4k-qd1.fio", timeout=120)
    assert p.returncode != 0
    assert "none.sock" in p.stderr and "is it running" in p.stderr, p.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("SSDLAB_SIM_SOCKET", "SSDLAB_VFIO")}
    p = subprocess.run([str(WRAPPER), str(JOBS / "randread-4k-qd1.fio")], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 2 and "no drive" in p.stderr, p.stderr


@pytest.mark.smoke
def test_randread_json(smoke_runs):
    res = smoke_runs["randread"]
    j = ok(res)
    job = j["jobs"][0]
    assert job["error"] == 0
    rd = job["read"]
    assert rd["io_bytes"] == 512 * 1024 and rd["total_ios"] == 128
    assert rd["iops"] > 0 and rd["bw"] > 0
    for p in ("50.000000", "99.000000"):
        assert rd["clat_ns"]["percentile"][p] > 0
    # Simulated time: the run took well over its reported runtime in wall time.
    assert rd["runtime"] / 1000 < res["wall_s"] / 10


@pytest.mark.smoke
def test_latencies_are_simulated_time(smoke_runs):
    """At QD1 fio's clat of each I/O is the driver's doorbell-to-CQE time of that command
    (libssdlab's sl_cpl timestamps, in simulated time) plus the CQ head doorbell the host
    writes before fio reads its clock (one host delay). With fio on the real clock nothing
    would line up to the nanosecond."""
    res = smoke_runs["randread"]
    clat = ok(res)["jobs"][0]["read"]["clat_ns"]
    eng = engine_stats(res["stderr"])
    assert eng["n"] == 128
    assert clat["min"] == eng["min"] + HOST_DELAY_NS
    assert clat["max"] == eng["max"] + HOST_DELAY_NS
    assert abs(clat["mean"] - (eng["avg"] + HOST_DELAY_NS)) < 0.5


@pytest.mark.smoke
def test_write_then_verify(smoke_runs):
    j = ok(smoke_runs["verify"])
    job = j["jobs"][0]
    assert job["error"] == 0
    assert job["write"]["io_bytes"] == 512 * 1024
    # fio's verify phase read every block back and checked its crc32c and header.
    assert job["read"]["io_bytes"] == 512 * 1024


@pytest.mark.smoke
def test_trim_with_interrupts(smoke_runs):
    """trim is NVMe Dataset Management (one range per command); irq=1 completes by MSI-X."""
    res = smoke_runs["trim_irq"]
    job = ok(res)["jobs"][0]
    assert job["error"] == 0
    assert job["trim"]["io_bytes"] == 512 * 1024 and job["trim"]["total_ios"] == 8
    assert engine_stats(res["stderr"])["n"] == 8


@pytest.mark.smoke
def test_shutdown_only_when_asked(smoke_runs):
    """A job leaves the controller disabled, not shut down (shutdown=0, what the kernel does
    between fio runs), so the firmware saves no checkpoint; shutdown=1 (the trim job) makes
    it save one. Checkpoints: the first boot's format, then the trim job's shutdown."""
    assert smoke_runs["_ckpt_saves"] == 2


# --- full -------------------------------------------------------------------------------------

FULL_JOBS = ["seqread-128k-qd32", "seqwrite-128k-qd32", "randread-4k-qd1", "randread-4k-qd32",
             "randwrite-4k-qd1", "randwrite-4k-qd32", "verify-crc32c"]


@pytest.fixture(scope="module")
def full_runs():
    return shared("full", {n: (JOBS / f"{n}.fio", ()) for n in FULL_JOBS})


@pytest.mark.full
@pytest.mark.parametrize("name", FULL_JOBS)
def test_example_job(full_runs, name):
    job = ok(full_runs[name])["jobs"][0]
    assert job["error"] == 0
    done = job["read"]["io_bytes"] + job["write"]["io_bytes"]
    assert done > 0
    eng = engine_stats(full_runs[name]["stderr"])
    assert eng["n"] == job["read"]["total_ios"] + job["write"]["total_ios"]


@pytest.mark.full
def test_same_job_on_fresh_drives_is_identical():
    """Lockstep determinism seen through fio: one job on two freshly booted drives gives the
    same latency distribution to the nanosecond."""
    runs = shared("determinism", {"a": (JOBS / "randwrite-4k-qd32.fio", ()),
                                  "b": (JOBS / "randwrite-4k-qd32.fio", ())},
                  fresh_drive_per_run=True)
    a, b = (ok(runs[k])["jobs"][0]["write"] for k in "ab")
    for key in ("clat_ns", "lat_ns", "slat_ns"):
        assert a[key] == b[key], key
    assert a["runtime"] == b["runtime"] and a["iops"] == b["iops"]


@pytest.mark.full
def test_verify_catches_corruption():
    """Write blocks with crc32c headers, overwrite part of them without, verify: fio must
    fail — the verify path really compares what the drive returns."""
    runs = shared("corrupt", {
        "write": (HERE / "jobs" / "verify-smoke.fio", ("--do_verify=0",)),
        "overwrite": (HERE / "jobs" / "overwrite-plain.fio", ()),
        "check": (HERE / "jobs" / "verify-smoke.fio", ("--verify_only",)),
    })
    ok(runs["write"])
    ok(runs["overwrite"])
    assert runs["check"]["returncode"] != 0
    assert "verify" in (runs["check"]["stdout"] + runs["check"]["stderr"]).lower()


@pytest.mark.full
def test_gc_under_verified_reads():
    """The whole drive written twice at QD 32 with fio's verify backlog reading back what was
    written while GC runs (jobs/gc-verify.fio): every block checks out, GC moved data and
    erased blocks, and (with the hardware read path) the verify reads of data on flash went
    through it."""
    # about 2.9 s of simulated time (the drive written twice at its GC-bound write rate):
    # 15 to 20 min of wall time on a core of its own, more on a loaded machine
    res = run_jobs({"gc": (HERE / "jobs" / "gc-verify.fio", ())}, timeout=3600)
    j = ok(res["gc"])
    job = j["jobs"][0]
    assert job["error"] == 0
    ftl = res["_ftl"]
    assert job["write"]["total_ios"] > 0 and job["read"]["total_ios"] > 0
    assert ftl["gc_units_moved"] > 0 and ftl["erases"] > 0, ftl
    assert ftl["hw_reads"] > 0, ftl           # the default build has the hardware read path
    print(f"gc-verify: {job['write']['total_ios']} writes, {job['read']['total_ios']} verify "
          f"reads; {ftl['gc_units_moved']} units moved by GC, {ftl['erases']} erases, "
          f"{ftl['hw_reads']} reads by the hardware read path; {res['gc']['wall_s']:.0f} s "
          f"wall")
