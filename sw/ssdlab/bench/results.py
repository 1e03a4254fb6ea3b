# SPDX-License-Identifier: BSD-2-Clause
"""The bench result: a versioned JSON document (result.json) and a flat CSV (results.csv, one
row per point). `point_figures` turns one fio JSON job into the figures reviewers quote;
`load_result` reads a result directory or file back and checks its schema version.

result.json (schema_version 1):
    schema_version, tool, suite, suite_title, units ("MB/s" decimal or "MiB/s" binary),
    profile, scale {time_scale, write_multiple, max_ios, region_mib, cdm_mib, fill,
    max_points}, sample_ms, persona, params, label, configuration (the scaled drive
    configuration: config.json of the build, or the device), capacity {user_bytes, lba_bytes,
    max_transfer, max_qd}, commit, dirty, seed, fio_version, target, time_domain, started,
    wall_s, sim_speed (the whole run, below), notes [...], steps [...] (each with sim_speed),
    tests: [{name, title, chart, metric, x_label, points: [{name, series, x, label, rw, bs,
             iodepth, rwmixread, iops, mb_s, read {...}, write {...}, lat_mean_us,
             lat_p50_us, lat_p99_us, lat_p999_us, runtime_ms, ios, bytes, wall_s,
             samples [[t_ms, iops], ...], sample_mean_iops, time_basis ("ns": from the
             ioengine's per-command log, span_ns from the first submission to the last
             completion, fio's own figures under fio {...}; "fio": fio's), steady_state
             {steady, window, mean, excursion_pct, slope_pct, rule} where sampled,
             sim_speed, notes}],
             ftl {FTL counter deltas, write_amplification} where the drive has them}]
sim_speed (sw.ssdlab.simspeed; null on a device): {cycles, sim_ns, ff_skipped, wall_s, ios,
    cycles_per_s, sim_us_per_s, ios_per_s, ff_skipped_pct, fw_instr, fw_instr_per_io (the
    firmware's instructions, the CPU's minstret; null where the build does not count them)}
"""

import csv
import json
from pathlib import Path

__all__ = ["SCHEMA_VERSION", "point_figures", "iolog_figures", "read_iops_log", "write_result",
           "load_result", "ResultError", "CSV_FIELDS"]

SCHEMA_VERSION = 1


class ResultError(Exception):
    """A result file that cannot be used (missing, not JSON, other schema)."""


def _pct(clat, key):
    p = (clat.get("percentile") or {}).get(key)
    return round(p / 1e3, 2) if p is not None else None


def _side(s):
    clat = s.get("clat_ns", {})
    return {"iops": round(s.get("iops", 0.0), 1), "bw_bytes": s.get("bw_bytes", 0),
            "io_bytes": s.get("io_bytes", 0), "ios": s.get("total_ios", 0),
            "runtime_ms": s.get("runtime", 0),
            "lat_mean_us": round(s.get("lat_ns", {}).get("mean", 0.0) / 1e3, 2),
            "lat_p50_us": _pct(clat, "50.000000"), "lat_p99_us": _pct(clat, "99.000000"),
            "lat_p999_us": _pct(clat, "99.900000")}


def point_figures(job, decimal):
    """IOPS, MB/s (decimal or binary, as the suite says), latency (mean of fio's total lat,
    clat percentiles) and runtime of one fio job; mixed jobs add read and write up (latency:
    the I/O-weighted mean; percentiles of the larger side)."""
    r, w = _side(job["read"]), _side(job["write"])
    sides = [s for s in (r, w) if s["ios"]]
    ios = sum(s["ios"] for s in sides)
    unit = 1e6 if decimal else float(1 << 20)
    main = max(sides, key=lambda s: s["ios"]) if sides else r
    out = {"iops": round(sum(s["iops"] for s in sides), 1),
           "mb_s": round(sum(s["bw_bytes"] for s in sides) / unit, 2),
           "read": r, "write": w,
           "lat_mean_us": round(sum(s["lat_mean_us"] * s["ios"] for s in sides) / ios, 2)
           if ios else None,
           "lat_p50_us": main["lat_p50_us"], "lat_p99_us": main["lat_p99_us"],
           "lat_p999_us": main["lat_p999_us"],
           "runtime_ms": max((s["runtime_ms"] for s in sides), default=0),
           "ios": ios, "bytes": sum(s["io_bytes"] for s in sides)}
    return out


def _rank(sorted_values, per_mille):
    """The nearest-rank quantile of a sorted list: the smallest value with at least
    per_mille / 1000 of the values at or below it (integer arithmetic: no float rounding)."""
    n = len(sorted_values)
    return sorted_values[max(0, (n * per_mille + 999) // 1000 - 1)]


def iolog_figures(path, decimal):
    """The figures of one fio run from the ssdlab ioengine's I/O log ($SSDLAB_IOLOG: a line per
    command, `kind bytes submit_ns complete_ns status [qid]`, transport time; the jobs of a
    numjobs > 1 run write one log, each on its own queue): IOPS and MB/s over the interval
    from the first submission to the last completion of any job, latency mean and
    percentiles (nearest rank) of each command's doorbell-to-completion time. Nanoseconds
    throughout, so no figure is a count over a whole number of milliseconds. Read and write
    commands count; trims and flushes do not. `queues`: commands per I/O queue id (a log
    without the column counts as queue 1). None when the log has no read or write."""
    sides = {"r": [], "w": []}
    queues = {}
    for line in Path(path).read_text().splitlines():
        f = line.split()
        if len(f) in (5, 6) and f[0] in sides:
            sides[f[0]].append((int(f[1]), int(f[2]), int(f[3])))
            q = int(f[5]) if len(f) == 6 else 1
            queues[q] = queues.get(q, 0) + 1
    every = sides["r"] + sides["w"]
    if not every:
        return None
    t0 = min(s for _, s, _ in every)
    span = max(c for _, _, c in every) - t0
    unit = 1e6 if decimal else float(1 << 20)

    def side(ios):
        lat = sorted(c - s for _, s, c in ios)
        n = len(ios)
        nbytes = sum(b for b, _, _ in ios)
        return {"ios": n, "io_bytes": nbytes,
                "iops": round(n * 1e9 / span, 1) if span else None,
                "bw_bytes": round(nbytes * 1e9 / span) if span else None,
                "lat_mean_us": round(sum(lat) / n / 1e3, 2) if n else None,
                "lat_p50_us": round(_rank(lat, 500) / 1e3, 2) if n else None,
                "lat_p99_us": round(_rank(lat, 990) / 1e3, 2) if n else None,
                "lat_p999_us": round(_rank(lat, 999) / 1e3, 2) if n else None}
    r, w, a = side(sides["r"]), side(sides["w"]), side(every)
    return {"iops": a["iops"], "mb_s": round(a["bw_bytes"] / unit, 2) if span else None,
            "lat_mean_us": a["lat_mean_us"], "lat_p50_us": a["lat_p50_us"],
            "lat_p99_us": a["lat_p99_us"], "lat_p999_us": a["lat_p999_us"],
            "ios": a["ios"], "bytes": a["io_bytes"], "span_ns": span,
            "queues": dict(sorted(queues.items())), "read": r, "write": w}


def read_iops_log(path, sample_ms, per_io=True):
    """IOPS samples [[t_ms, iops], ...] from fio's IOPS log (`write_iops_log`).

    per_io: the log has one line per completed I/O (no log_avg_msec: what the simulated drive
    uses, since fio's averaging runs in its helper thread, outside simulated time); the I/Os
    are counted per sample_ms window of their completion time, and the last, partial window
    is dropped when there are others. Otherwise the log is fio's own average per
    log_avg_msec, read and write directions of one interval added."""
    acc = {}
    for line in Path(path).read_text().splitlines():
        f = [x.strip() for x in line.split(",")]
        if len(f) < 3 or not f[0]:
            continue
        t = int(f[0])
        if per_io:
            k = t // sample_ms * sample_ms
            acc[k] = acc.get(k, 0.0) + 1000.0 / sample_ms
        else:
            acc[t] = acc.get(t, 0.0) + float(f[1])
    out = [[t, round(v, 1)] for t, v in sorted(acc.items())]
    if per_io and len(out) > 1:
        out = out[:-1]
    if per_io and out:                           # windows without any completion: 0 IOPS
        full = {t: v for t, v in out}
        out = [[t, full.get(t, 0.0)] for t in range(out[0][0], out[-1][0] + 1, sample_ms)]
    return out


CSV_FIELDS = ["suite", "persona", "label", "test", "point", "series", "x", "rw", "bs",
              "iodepth", "rwmixread", "iops", "mb_s", "lat_mean_us", "lat_p50_us",
              "lat_p99_us", "lat_p999_us", "runtime_ms", "ios", "bytes", "wall_s",
              "sample_mean_iops", "time_basis", "span_ns", "fio_iops", "steady",
              "sim_cycles_per_s", "sim_us_per_s", "sim_ios_per_s", "ff_skipped_pct",
              "fw_instr_per_io"]


def csv_rows(result):
    for t in result["tests"]:
        for p in t["points"]:
            row = {k: p.get(k) for k in CSV_FIELDS}
            row["fio_iops"] = (p.get("fio") or {}).get("iops")
            row["steady"] = (p.get("steady_state") or {}).get("steady")
            sp = p.get("sim_speed") or {}
            row.update(sim_cycles_per_s=sp.get("cycles_per_s"),
                       sim_us_per_s=sp.get("sim_us_per_s"), sim_ios_per_s=sp.get("ios_per_s"),
                       ff_skipped_pct=sp.get("ff_skipped_pct"),
                       fw_instr_per_io=sp.get("fw_instr_per_io"))
            row.update(suite=result["suite"], persona=result["persona"],
                       label=result.get("label", ""), test=t["name"], point=p["name"])
            yield row


def write_result(result, out_dir):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    with open(out_dir / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, CSV_FIELDS)
        w.writeheader()
        w.writerows(csv_rows(result))


def load_result(path):
    """A result.json (or the directory holding it), checked."""
    p = Path(path)
    if p.is_dir():
        p = p / "result.json"
    if not p.exists():
        raise ResultError(f"{path}: no result.json there")
    try:
        r = json.loads(p.read_text())
    except ValueError as e:
        raise ResultError(f"{p}: not JSON ({e})") from None
    if not isinstance(r, dict) or "schema_version" not in r:
        raise ResultError(f"{p}: not an ssdlab bench result (no schema_version)")
    if r["schema_version"] != SCHEMA_VERSION:
        raise ResultError(f"{p}: schema_version {r['schema_version']}, this ssdlab reads "
                          f"{SCHEMA_VERSION}")
    r["_path"] = str(p.parent)
    return r
