# SPDX-License-Identifier: BSD-2-Clause
"""The sweep grid and its Dask run (LocalCluster, 2 worker processes), on files through the
device path so no simulation is needed: every cell a result directory, one sweep.json and
sweep.csv, charts comparing the cells."""

import csv
import json

import pytest

from sw.ssdlab.bench.scale import Scale
from sw.ssdlab.bench.session import BenchSpec
from sw.ssdlab.bench.sweep import cell_name, grid, run_sweep

pytestmark = pytest.mark.smoke


def test_grid():
    cells = grid(["a", "b"], {"n_channels": [2, 4], "n_ways": [1]}, ["qdscan"])
    assert len(cells) == 4
    assert cells[1] == {"persona": "a", "suite": "qdscan",
                        "params": {"n_channels": 4, "n_ways": 1}}
    assert cell_name(cells[1]) == "a-n_channels4-n_ways1-qdscan"
    assert len(grid(["a"], {}, ["qdscan", "review"])) == 2


def test_dask_sweep_on_files(tmp_path):
    spec = BenchSpec(scale=Scale(time_scale=0.005, max_ios=2000, fill=0.25, max_points=2),
                     device=str(tmp_path / "{cell}.bin"), device_size=8 << 20, direct=False,
                     tests=None)
    cells = grid(["default"], {}, ["qdscan", "freespace"])
    lines = []
    doc = run_sweep(spec, cells, tmp_path / "sw", workers=2, echo=lines.append)
    assert [c["ok"] for c in doc["cells"]] == [True, True], doc["cells"]
    assert doc["workers"] == 2 and doc["wall_s"] > 0 and len(lines) == 2
    back = json.loads((tmp_path / "sw" / "sweep.json").read_text())
    assert [c["name"] for c in back["cells"]] == ["default-qdscan", "default-freespace"]
    rows = list(csv.DictReader(open(tmp_path / "sw" / "sweep.csv")))
    assert {r["cell"] for r in rows} == {"default-qdscan", "default-freespace"}
    assert all(float(r["iops"]) > 0 for r in rows)
    assert (tmp_path / "sw" / "charts" / "qdscan" / "qd-read.png").exists()
    assert (tmp_path / "sw" / "charts" / "freespace" / "freespace.svg").exists()
    assert (tmp_path / "default-qdscan.bin").exists()          # each cell its own device


def test_failed_cell_is_reported_on_a_scheduler(tmp_path):
    """--address: an existing Dask scheduler; a failing cell is reported, not fatal."""
    from dask.distributed import LocalCluster
    spec = BenchSpec(scale=Scale(time_scale=0.005), device=str(tmp_path / "none" / "{cell}"),
                     direct=False)
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=None) as cluster:
        doc = run_sweep(spec, grid(["default"], {}, ["qdscan"]), tmp_path / "sw",
                        address=cluster.scheduler_address, echo=lambda s: None)
    assert doc["address"] == cluster.scheduler_address and doc["workers"] is None
    (c,) = doc["cells"]
    assert not c["ok"] and "does not exist" in c["error"]
