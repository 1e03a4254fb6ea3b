# SPDX-License-Identifier: BSD-2-Clause
"""fio JSON to figures, IOPS logs to per-second samples, the result files and their
schema check."""

import json

import pytest
from conftest import fio_job, fio_side

from sw.ssdlab.bench.results import (
    SCHEMA_VERSION,
    ResultError,
    iolog_figures,
    load_result,
    point_figures,
    read_iops_log,
    write_result,
)

pytestmark = pytest.mark.smoke


def test_point_figures_one_side():
    job = fio_job(read=fio_side(iops=12000.0, bw=49152000, ios=1200, mean_ns=2650.0,
                                p50=2000, p99=4490, p999=6000, runtime=100))
    f = point_figures(job, decimal=True)
    assert f["iops"] == 12000.0 and f["mb_s"] == 49.15 and f["ios"] == 1200
    assert f["lat_mean_us"] == 2.65 and f["lat_p99_us"] == 4.49 and f["lat_p999_us"] == 6.0
    assert f["runtime_ms"] == 100
    assert point_figures(job, decimal=False)["mb_s"] == round(49152000 / 2**20, 2)


def test_point_figures_mixed_adds_up():
    job = fio_job(read=fio_side(iops=300.0, bw=300 * 4096, ios=30, mean_ns=1000.0, p99=9000,
                                runtime=100),
                  write=fio_side(iops=700.0, bw=700 * 4096, ios=70, mean_ns=2000.0, p99=7000,
                                 runtime=100))
    f = point_figures(job, decimal=True)
    assert f["iops"] == 1000.0 and f["ios"] == 100
    assert f["lat_mean_us"] == 1.7                       # I/O-weighted
    assert f["lat_p99_us"] == 7.0                        # the larger side's


def test_iolog_figures_in_nanoseconds(tmp_path):
    """512 reads of 4 KiB at QD 8 over 8.4 ms of simulated time: 60,952.4 IOPS, where fio's
    whole-millisecond runtime (8 ms) would give 64,000. Latency percentiles by nearest rank of
    the per-command times; a write counts, a trim and a flush do not."""
    lines, t = [], 0
    for i in range(512):
        submit = (i // 8) * 131_250         # batches of 8, 131.25 us apart
        lines.append(f"r 4096 {submit} {submit + 100_000 + 997 * i} 0")
        t = submit + 100_000 + 997 * i
    lines += ["t 1048576 0 5 0", "f 0 0 5 0"]
    log = tmp_path / "p.iolog"
    log.write_text("\n".join(lines) + "\n")
    f = iolog_figures(log, decimal=True)
    span = max(int(x.split()[3]) for x in lines[:512])
    assert f["span_ns"] == span == t
    assert f["ios"] == 512 and f["bytes"] == 512 * 4096
    assert f["iops"] == round(512e9 / span, 1) != 64000.0
    assert f["mb_s"] == round(512 * 4096 * 1e9 / span / 1e6, 2)
    lat = sorted(100_000 + 997 * i for i in range(512))
    assert f["lat_p50_us"] == round(lat[255] / 1e3, 2)            # rank ceil(0.5 * 512) = 256
    assert f["lat_p99_us"] == round(lat[506] / 1e3, 2)            # rank ceil(0.99 * 512) = 507
    assert f["lat_p999_us"] == round(lat[511] / 1e3, 2)           # rank ceil(0.999 * 512) = 512
    assert f["lat_mean_us"] == round(sum(lat) / 512 / 1e3, 2)
    assert f["read"]["ios"] == 512 and f["write"]["ios"] == 0
    log.write_text("w 8192 1000 3000 0\nr 4096 2000 5000 0\n")
    f = iolog_figures(log, decimal=False)
    assert (f["ios"], f["span_ns"], f["iops"]) == (2, 4000, 500000.0)
    assert f["write"]["io_bytes"] == 8192 and f["read"]["lat_mean_us"] == 3.0
    log.write_text("t 4096 0 10 0\n")
    assert iolog_figures(log, decimal=True) is None


def test_per_io_log_binned(tmp_path):
    log = tmp_path / "x_iops.1.log"
    # 3 I/Os in ms 0, 5 in ms 1, none in ms 2, 2 in ms 3, 1 in ms 4 (the partial last one)
    times = [0] * 3 + [1] * 5 + [3] * 2 + [4]
    log.write_text("".join(f"{t}, 1, 1, 4096, 0\n" for t in times))
    assert read_iops_log(log, 1) == [[0, 3000.0], [1, 5000.0], [2, 0.0], [3, 2000.0]]
    assert read_iops_log(log, 2) == [[0, 4000.0], [2, 1000.0]]


def test_averaged_log(tmp_path):
    log = tmp_path / "y_iops.1.log"
    log.write_text("1000, 500, 0, 4096, 0\n1000, 300, 1, 4096, 0\n2000, 700, 1, 4096, 0\n")
    assert read_iops_log(log, 1000, per_io=False) == [[1000, 800.0], [2000, 700.0]]


def test_write_and_load(tmp_path, result_factory):
    r = result_factory("qdscan")
    write_result(r, tmp_path)
    back = load_result(tmp_path)
    assert back["suite"] == "qdscan" and back["schema_version"] == SCHEMA_VERSION
    rows = (tmp_path / "results.csv").read_text().splitlines()
    assert len(rows) == 1 + 14 and rows[0].startswith("suite,persona,label,test,point")
    r["schema_version"] = SCHEMA_VERSION + 1
    (tmp_path / "result.json").write_text(json.dumps(r))
    with pytest.raises(ResultError, match="schema_version 2"):
        load_result(tmp_path)
    with pytest.raises(ResultError, match="no result.json"):
        load_result(tmp_path / "nothing")


def test_iolog_of_several_jobs(tmp_path):
    """numjobs > 1: one log, a queue id per line; the span runs from the first submission of
    any job to the last completion of any job."""
    log = tmp_path / "t8.iolog"
    log.write_text("r 4096 1000 9000 0 1\nr 4096 500 4000 0 2\nr 4096 2000 12500 0 2\n"
                   "w 4096 100 200 0\n")
    f = iolog_figures(log, decimal=True)
    assert f["span_ns"] == 12400 and f["ios"] == 4
    assert f["queues"] == {1: 2, 2: 2}                   # the old 5-column line is queue 1
    assert f["iops"] == round(4e9 / 12400, 1)
