# SPDX-License-Identifier: BSD-2-Clause
"""Synthetic fio JSON and bench results for the pure-Python bench tests."""

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
sys.path.insert(0, str(ROOT))


def fio_side(iops=0.0, bw=0, ios=0, mean_ns=0.0, p50=0, p99=0, p999=0, runtime=0):
    return {"iops": iops, "bw_bytes": bw, "io_bytes": bw * runtime // 1000 if runtime else 0,
            "total_ios": ios, "runtime": runtime, "lat_ns": {"mean": mean_ns},
            "clat_ns": {"percentile": {"50.000000": p50, "99.000000": p99,
                                       "99.900000": p999}}}


def fio_job(read=None, write=None):
    return {"jobname": "x", "error": 0, "read": read or fio_side(), "write": write or fio_side()}


def _speed(cycles, ios, skipped=0):
    """A second of wall time at 8 ns per cycle (sw.ssdlab.simspeed's figures)."""
    from sw.ssdlab import simspeed
    return simspeed.speed({"cycles": 0, "sim_ps": 0, "ff_skipped": 0},
                          {"cycles": cycles, "sim_ps": 8000 * cycles, "ff_skipped": skipped},
                          1.0, ios)


def synthetic_result(suite="qdscan", persona="default", label=None, factor=1.0):
    """A result document as runner.run_suite writes it, with made-up figures."""
    from sw.ssdlab.bench.results import SCHEMA_VERSION
    from sw.ssdlab.bench.suites import SUITES
    s = SUITES[suite]
    tests = []
    for t in s.tests:
        pts = []
        for i, p in enumerate(t.points):
            iops = factor * 1000.0 * (i + 1)
            row = {"name": p.name, "series": p.series, "x": p.x, "label": p.label or str(p.x),
                   "rw": p.rw, "bs": p.bs, "iodepth": p.qd * p.workers,
                   "rwmixread": p.rwmixread, "iops": iops,
                   "mb_s": round(iops * p.bs / 2**20, 2), "read": {}, "write": {},
                   "lat_mean_us": 100.0, "lat_p50_us": 90.0, "lat_p99_us": 300.0,
                   "lat_p999_us": 500.0, "runtime_ms": 18, "ios": 100, "bytes": 100 * p.bs,
                   "wall_s": 1.0, "notes": [],
                   "sim_speed": _speed(400_000, 100)}
            if p.sample:
                row["samples"] = [[t_ms, iops * (1.2 if t_ms % 3 else 0.6)]
                                  for t_ms in range(0, 60)]
                row["sample_ms"] = 1
                row["sample_mean_iops"] = iops
            pts.append(row)
        tests.append({"name": t.name, "title": t.title, "chart": t.chart, "metric": t.metric,
                      "x_label": t.x_label, "points": pts, "notes": []})
    return {"schema_version": SCHEMA_VERSION, "tool": "ssdlab bench", "suite": suite,
            "suite_title": s.title, "units": s.mb_unit, "profile": "quick",
            "scale": {"time_scale": 1e-4, "write_multiple": 1.0, "max_ios": 1024,
                      "region_mib": 4, "cdm_mib": 4, "fill": 0.25, "max_points": 3},
            "sample_ms": 1, "persona": persona, "params": {"n_channels": 2},
            "label": label or persona,
            "configuration": {"n_channels": 2, "n_ways": 2, "part": "imft-20nm-mlc-128gbit",
                              "planes": 2, "blocks_per_plane": 16, "pages_per_block": 16,
                              "page_bytes": 16384, "op_pct": 14.5,
                              "scale_note": "scaled (16 blocks per plane)", "notes": []},
            "capacity": {"user_bytes": 26214400, "lba_bytes": 512, "max_transfer": 131072,
                         "max_qd": 4095},
            "commit": "0123456789abcdef", "dirty": False, "seed": 7, "fio_version": "fio-3.33",
            "target": {"kind": "sim"}, "time_domain": "simulated", "started": "now",
            "wall_s": 10.0, "notes": list(s.notes), "sim_speed": _speed(1_000_000, 0),
            "steps": [{"test": "x", "kind": "settle", "trim": True, "idle_ms": 90,
                       "elapsed_ns": 90_000_000, "wall_s": 3.0,
                       "sim_speed": _speed(30_000_000, 0, skipped=27_000_000)}],
            "tests": tests}


@pytest.fixture
def result_factory():
    return synthetic_result
