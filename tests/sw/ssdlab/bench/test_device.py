# SPDX-License-Identifier: BSD-2-Clause
"""The device path (`ssdlab bench --device`): the same generated jobs through the host's fio
with io_uring on a regular file (direct=0: the temp directory may be tmpfs); idle is a real
sleep; deallocation punches the file's blocks out (on a block device: a fio trim job)."""

import json
import os
import time

import pytest
from click.testing import CliRunner

from sw.ssdlab.bench.target import DeviceTarget
from sw.ssdlab.cli import main

pytestmark = pytest.mark.smoke


def test_deallocate_and_idle(tmp_path):
    f = tmp_path / "dev.bin"
    with DeviceTarget(f, direct=False, size=4 << 20) as t:
        assert t.geometry.capacity == 4 << 20
        with open(f, "r+b") as fh:
            fh.write(os.urandom(4 << 20))
            fh.flush()
            os.fsync(fh.fileno())
        assert os.stat(f).st_blocks * 512 >= 4 << 20
        t0 = time.monotonic()
        ns = t.settle(trim=True, idle_ms=200)
        assert time.monotonic() - t0 >= 0.2 and ns >= 200_000_000
        assert os.stat(f).st_blocks == 0                    # every block deallocated
        assert f.stat().st_size == 4 << 20


def test_bench_on_a_file(tmp_path):
    # the full profile: points run their scaled time (1.2 s), not the quick profile's I/O
    # count. --max-ios high enough that every point runs its scaled time: with 100,000 the
    # QD 64 point could end (buffered, on a quiet machine) before fio wrote any averaged
    # sample, and the test failed on a fast machine
    out = tmp_path / "res"
    r = CliRunner().invoke(main, [
        "bench", "--device", str(tmp_path / "dev.bin"), "--device-size", "16m", "--buffered",
        "--suite", "qdscan", "--tests", "qd-write", "--max-points", "2", "--time-scale",
        "0.02", "--fill", "0.5", "--max-ios", "1000000", "--profile", "full", "--no-progress",
        "--out", str(out)])
    assert r.exit_code == 0, r.output + str(r.exception)
    res = json.loads((out / "result.json").read_text())
    assert res["target"]["kind"] == "device" and res["target"]["ioengine"] == "io_uring"
    assert res["time_domain"] == "host" and res["sample_ms"] == 20
    (t,) = res["tests"]
    assert [p["iodepth"] for p in t["points"]] == [1, 64]
    for p in t["points"]:
        assert p["iops"] > 0 and p["runtime_ms"] > 0 and p["lat_mean_us"] > 0
        assert p["samples"], "no per-interval samples"
        assert p["sample_mean_iops"] > 0
    assert res["steps"][0]["kind"] == "fill" and res["steps"][0]["bytes"] == 8 << 20
    job = (out / "jobs" / "qd-write.fio").read_text()
    assert "[qd-write-64]" in job and "write_iops_log=logs/qd-write-64" in job
    assert (out / "charts" / "qd-write.svg").exists() and (out / "report.html").exists()
    assert "io_uring" in (out / "report.md").read_text()
