# SPDX-License-Identifier: BSD-2-Clause
"""Run a suite on a started target: write each test's fio job file into the result directory,
run its sections one by one (fills and points through fio; deallocation and idle periods
through the target), collect the figures, write result.json and results.csv.

    with SimTarget(build_dir) as t:
        result = run_suite("review", t, profile("quick"), out_dir, seed=1, persona="default")
"""

import datetime
import subprocess
import time
from pathlib import Path

from sw.ssdlab import simspeed
from sw.ssdlab.bench import fiojobs, steady
from sw.ssdlab.bench.limits import point_limit
from sw.ssdlab.bench.results import (
    SCHEMA_VERSION,
    iolog_figures,
    point_figures,
    read_iops_log,
    write_result,
)
from sw.ssdlab.bench.scale import thin
from sw.ssdlab.bench.suites import SUITES, Fill, Test
from sw.ssdlab.bench.target import BenchError

__all__ = ["run_suite", "plan", "git_commit", "ftl_delta", "BenchError"]

ROOT = Path(__file__).resolve().parents[3]


def git_commit():
    """(commit, dirty) of the ssdlab tree (None, None outside git)."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                                    cwd=ROOT, capture_output=True, text=True).stdout.strip())
        return head, dirty
    except (OSError, subprocess.CalledProcessError):
        return None, None


def select_tests(suite, names):
    """The suite's tests, or those named (comma list); KeyError naming an unknown one."""
    if not names:
        return list(suite.tests)
    out = []
    for n in names:
        try:
            out.append(suite.test(n))
        except KeyError:
            raise KeyError(f"suite {suite.name} has no test {n!r} (tests: "
                           f"{', '.join(t.name for t in suite.tests)})") from None
    return out


def plan(suite, tests, geo, scale, seed, avg_logs=False):
    """[(test, sections)] including the preconditioning (a pseudo-test)."""
    out = []
    if suite.precondition:
        pre = [Fill(s.end * scale.fill, s.start, s.region) if isinstance(s, Fill) else s
               for s in suite.precondition]
        t = Test("precondition", "Preconditioning", "none", "none", pre)
        out.append((t, fiojobs.test_jobs(t, [], geo, scale, seed)))
    for t in tests:
        pts = thin(t.points, scale.max_points if t.thin else None)
        out.append((t, fiojobs.test_jobs(t, pts, geo, scale, seed, avg_logs)))
    return out


def ftl_delta(before, after):
    """What a test did to the flash, from the FTL counters before and after it: units written
    by the host and to the NAND (user data, GC moves, map checkpoints), erases, and the
    write amplification (NAND / host, and with the map's own writes)."""
    keys = ("host_units_written", "nand_units_written", "gc_units_moved", "erases",
            "ckpt_units_written")
    out = {k: after[k] - before[k] for k in keys}
    # the SLC write cache's work (sw/firmware/ftl_slc.c), where the drive has one
    for k in ("slc_units_written", "slc_blocks_folded", "slc_units_folded"):
        if after.get(k) is not None and before.get(k) is not None:
            out[k] = after[k] - before[k]
    host = out["host_units_written"]
    out["write_amplification"] = round(out["nand_units_written"] / host, 3) if host else None
    out["write_amplification_with_map"] = (
        round((out["nand_units_written"] + out["ckpt_units_written"]) / host, 3)
        if host else None)
    return out


def _header(suite, scale, target, seed, persona, params, label, profile, configuration):
    commit, dirty = git_commit()
    g = target.geometry
    return {"schema_version": SCHEMA_VERSION, "tool": "ssdlab bench", "suite": suite.name,
            "suite_title": suite.title, "units": suite.mb_unit, "profile": profile,
            "scale": scale.as_dict(), "sample_ms": scale.sample_ms, "persona": persona,
            "params": params or {}, "label": label or persona,
            "configuration": configuration or {},
            "capacity": {"user_bytes": g.capacity, "lba_bytes": g.lba_bytes,
                         "max_transfer": g.max_transfer, "max_qd": g.max_qd},
            "commit": commit, "dirty": dirty, "seed": seed,
            "fio_version": target.fio_version(), "target": target.describe(),
            "time_domain": target.time_domain,
            "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "notes": list(suite.notes), "steps": [], "tests": []}


def run_suite(suite_name, target, scale, out_dir, seed=1, persona="default", params=None,
              label=None, profile=None, configuration=None, tests=None, progress=None,
              log=None, link=None):
    """Run `suite_name` (optionally only `tests`, a list of names) on a started target; write
    the result files into out_dir; returns the result dict. progress(done, total, text) is
    called before each section and at the end. link: the host link's payload limits
    ({"read_mb_s", "write_mb_s", "describe"}) for the analytic limit beside each point."""
    suite = SUITES[suite_name]
    chosen = select_tests(suite, tests)
    out_dir = Path(out_dir).resolve()
    (out_dir / "jobs").mkdir(parents=True, exist_ok=True)
    (out_dir / "logs").mkdir(exist_ok=True)
    result = _header(suite, scale, target, seed, persona, params, label, profile,
                     configuration)
    result["link"] = link
    cfg = configuration if (configuration or {}).get("n_channels") else None
    geo = target.geometry
    work = plan(suite, chosen, geo, scale, seed, target.avg_logs)
    total = sum(len(s) for _, s in work)
    ftl_last = target.ftl_log() if hasattr(target, "ftl_log") else None
    done = 0
    t_wall, m_start = time.monotonic(), target.mark()
    io_done = 0                                     # I/Os of every fio run, precondition too

    def note(text):
        if progress:
            progress(done, total, text)
        if log:
            print(f"bench: {text}", file=log, flush=True)

    for test, sections in work:
        jobfile = out_dir / "jobs" / f"{test.name}.fio"
        jobfile.write_text(fiojobs.render(
            f"ssdlab bench: suite {suite.name}, test {test.name}: {test.title}", sections,
            header=[f"scale: {scale.as_dict()}", f"capacity {geo.capacity} B, seed {seed}"]))
        tres = {"name": test.name, "title": test.title, "chart": test.chart,
                "metric": test.metric, "x_label": test.x_label, "points": [], "notes": []}
        pending = {"trim": False, "idle_ms": 0}
        # the FTL counters after the previous test are this one's "before": one read a test
        ftl_before = ftl_last

        def flush_settle(test=test, pending=pending):
            if pending["trim"] or pending["idle_ms"]:
                t0, m0 = time.monotonic(), target.mark()
                ns = target.settle(pending["trim"], pending["idle_ms"])
                wall = time.monotonic() - t0
                result["steps"].append({"test": test.name, "kind": "settle",
                                        "trim": pending["trim"],
                                        "idle_ms": pending["idle_ms"],
                                        "elapsed_ns": ns, "wall_s": round(wall, 1),
                                        "sim_speed": simspeed.speed(m0, target.mark(),
                                                                    wall)})
                pending.update(trim=False, idle_ms=0)

        for sec in sections:
            if sec.kind == "trim":
                note(f"{test.name}: deallocate")
                pending["trim"] = True
            elif sec.kind == "idle":
                note(f"{test.name}: idle {sec.opts['ms']} ms")
                pending["idle_ms"] += sec.opts["ms"]
            elif sec.kind == "skip":
                tres["notes"] += [f"{sec.name}: {n}" for n in sec.notes]
            else:
                flush_settle()
                note(f"{test.name}: {sec.name}")
                iolog = out_dir / "logs" / f"{sec.name}.iolog" if sec.kind != "fill" else None
                m0 = target.mark()
                job, wall, _ = target.run_fio(jobfile, sec.name, out_dir, iolog=iolog)
                m1 = target.mark()
                io_done += sum(job[d].get("total_ios", 0) for d in ("read", "write", "trim")
                                  if d in job)
                if sec.kind == "fill":
                    f = point_figures(job, suite.decimal)
                    result["steps"].append({"test": test.name, "kind": "fill",
                                            "name": sec.name, "bytes": f["bytes"],
                                            "runtime_ms": f["runtime_ms"],
                                            "mb_s": f["mb_s"], "wall_s": round(wall, 1),
                                            "sim_speed": simspeed.speed(m0, m1, wall,
                                                                        f["ios"])})
                else:
                    row = _point(sec, job, wall, suite, out_dir, scale, target.avg_logs,
                                 iolog)
                    row["sim_speed"] = simspeed.speed(m0, m1, wall, row["ios"])
                    if cfg:
                        p = sec.point
                        row["limit"] = point_limit(cfg, link, p.rw, p.bs, p.rwmixread)
                    tres["points"].append(row)
            done += 1
        flush_settle()
        if ftl_before is not None:
            ftl_last = target.ftl_log()
            tres["ftl"] = ftl_delta(ftl_before, ftl_last)
        if test.name != "precondition":
            result["tests"].append(tres)
        _whole_run(result, target, t_wall, m_start, io_done)
        write_result(result, out_dir)              # partial results survive a failure
    done = total
    note("done")
    _whole_run(result, target, t_wall, m_start, io_done)
    write_result(result, out_dir)
    return result


def _whole_run(result, target, t_wall, m_start, ios):
    """The run's wall time so far, and its simulation speed (ios: fio's I/Os so far)."""
    wall = time.monotonic() - t_wall
    result["wall_s"] = round(wall, 1)
    result["sim_speed"] = simspeed.speed(m_start, target.mark(), wall, ios)


def _point(sec, job, wall, suite, out_dir, scale, avg_logs, iolog=None):
    """One point's row. Where the ioengine logged every command (the simulated drive), IOPS,
    MB/s and latency come from its nanosecond timestamps ("time_basis": "ns"), and fio's own
    figures, over its whole-millisecond runtime, are kept under "fio"; otherwise fio's
    ("time_basis": "fio")."""
    p = sec.point
    f = point_figures(job, suite.decimal)
    ns = iolog_figures(iolog, suite.decimal) if iolog and Path(iolog).exists() else None
    if ns is not None:
        fio = {k: f[k] for k in ("iops", "mb_s", "lat_mean_us", "lat_p50_us", "lat_p99_us",
                                 "lat_p999_us", "runtime_ms", "ios")}
        f = {**f, **{k: ns[k] for k in ("iops", "mb_s", "lat_mean_us", "lat_p50_us",
                                          "lat_p99_us", "lat_p999_us", "ios", "bytes",
                                          "read", "write")},
             "span_ns": ns["span_ns"], "time_basis": "ns", "fio": fio}
    else:
        f = {**f, "time_basis": "fio"}
    row = {"name": p.name, "series": p.series, "x": p.x, "label": p.label or str(p.x),
           "rw": p.rw, "bs": p.bs, "iodepth": sec.opts["iodepth"],
           "numjobs": sec.opts.get("numjobs", 1),
           "rwmixread": p.rwmixread, **f, "wall_s": round(wall, 1),
           "notes": list(sec.notes)}
    # the profile's minimum, in the point's own I/Os (a split I/O is one I/O of p.bs)
    row["min_ios"] = scale.point_min_ios(p.bs)
    ios = f["bytes"] // p.bs if f.get("bytes") else f.get("ios") or 0
    row["short"] = ios < row["min_ios"]
    if p.sample:
        logs = sorted((out_dir / "logs").glob(f"{p.name}_iops*.log"))
        samples = read_iops_log(logs[0], scale.sample_ms, not avg_logs) if logs else []
        row["samples"] = samples
        row["sample_ms"] = scale.sample_ms
        row["sample_mean_iops"] = (round(sum(v for _, v in samples) / len(samples), 1)
                                   if samples else None)
        row["steady_state"] = steady.verdict([v for _, v in samples])
    return row
