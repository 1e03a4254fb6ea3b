# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab bench` on the 2-channel simulated drive (drive_config("default", {"n_channels":
2}), the drive the fio tests use), kept small: qdscan's read curve at 2 queue depths, and the
review suite's recovery test (simulated idle, deallocation). Figures are simulated time: the
per-I/O log binned into samples adds up to fio's own I/O count, idle periods advance the
drive's clock by their length.

The simulations take turns with the other simulated-drive tests' lock (one at a time)."""

import fcntl
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from sw.ssdlab.cli import main

ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture(scope="module")
def sim_lock():
    os.environ.setdefault("VERILATOR", "verilator")
    lock = ROOT / "build" / "bench" / "tests.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield


def bench(out, *args):
    # --no-pgo: the plain build the other drive tests use (one build for all of them)
    r = CliRunner().invoke(main, ["bench", "--param", "n_channels=2", "--no-progress", "--no-pgo",
                                  "--out", str(out), "--seed", "3", *args])
    assert r.exit_code == 0, r.output + repr(r.exception)
    return json.loads((out / "result.json").read_text())


@pytest.mark.smoke
def test_qdscan_points(tmp_path, sim_lock):
    res = bench(tmp_path / "q", "--suite", "qdscan", "--tests", "qd-read", "--max-points",
                "2", "--time-scale", "1e-4", "--max-ios", "256", "--fill", "0.1")
    assert res["time_domain"] == "simulated" and res["target"]["kind"] == "sim"
    assert res["configuration"]["n_channels"] == 2 and res["params"] == {"n_channels": 2}
    assert res["capacity"]["user_bytes"] > 0 and res["seed"] == 3
    assert res["steps"][0]["kind"] == "fill"
    (t,) = res["tests"]
    assert [p["iodepth"] for p in t["points"]] == [1, 64]
    for p in t["points"]:
        assert 0 < p["ios"] <= 256
        assert p["iops"] > 0 and p["lat_mean_us"] > 0 and p["lat_p99_us"] > 0
        assert p["samples"], "no per-ms samples"
        # the binned samples count the I/Os fio completed (the dropped last window aside)
        counted = sum(v for _, v in p["samples"]) * p["sample_ms"] / 1000
        assert counted <= p["ios"] and counted >= p["ios"] * 0.5
    qd1, qd64 = t["points"]
    assert qd64["iops"] > qd1["iops"]           # queue depth buys parallel dies
    assert (tmp_path / "q" / "jobs" / "qd-read.fio").exists()
    assert (tmp_path / "q" / "charts" / "qd-read.png").exists()
    report = (tmp_path / "q" / "report.md").read_text()
    assert "simulated" in report
    # simulation speed: per point from the harness's counters around its fio run
    for p in t["points"]:
        sp = p["sim_speed"]
        assert sp["ios"] == p["ios"] and sp["cycles"] > 0 and sp["cycles_per_s"] > 0
        assert sp["sim_ns"] >= p["span_ns"] and sp["ios_per_s"] > 0
    whole = res["sim_speed"]
    assert whole["cycles"] > sum(p["sim_speed"]["cycles"] for p in t["points"])
    assert whole["ios"] >= sum(p["ios"] for p in t["points"])
    assert "## Simulation speed" in report and "K cycles/s" in report


@pytest.mark.full
def test_recovery_idle_and_trim(tmp_path, sim_lock):
    res = bench(tmp_path / "r", "--suite", "review", "--tests", "recovery", "--time-scale",
                "1e-5", "--max-ios", "128", "--fill", "0.05")
    settles = [s for s in res["steps"] if s["kind"] == "settle"]
    idle, trim = settles
    assert idle["idle_ms"] == 9 and not idle["trim"]          # 15 min x 1e-5
    assert idle["elapsed_ns"] >= 9_000_000                     # simulated time passed
    assert idle["sim_speed"]["sim_ns"] >= idle["elapsed_ns"]
    assert trim["trim"] and not trim["idle_ms"]
    (t,) = res["tests"]
    assert [p["label"] for p in t["points"]] == ["after 15 min idle", "after deallocation"]
    assert all(p["iops"] > 0 for p in t["points"])


@pytest.mark.full
def test_review_quick_profile(tmp_path, sim_lock):
    """What `make bench` runs (about 15 min): every review test has its points and chart;
    the degradation run wrote write_multiple x the capacity."""
    res = bench(tmp_path / "rq", "--suite", "review", "--profile", "quick")
    names = [t["name"] for t in res["tests"]]
    assert names == ["seq", "rand", "qd", "bs", "mixed-seq", "mixed-rand", "degradation",
                     "recovery", "cdm"]
    for t in res["tests"]:
        assert t["points"] and all(p["iops"] > 0 for p in t["points"]), t["name"]
        assert (tmp_path / "rq" / "charts" / f"{t['name']}.svg").exists()
    (deg,) = res["tests"][6]["points"]
    assert deg["bytes"] >= res["scale"]["write_multiple"] * res["capacity"]["user_bytes"] * 0.99
    assert len(deg["samples"]) > 10
