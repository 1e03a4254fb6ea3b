# SPDX-License-Identifier: BSD-2-Clause
"""fio job files from a suite's tests: one file per test, one section per step that does I/O
(fills, points, deallocations on a device), each with `stonewall` so the whole file reruns the
test in order:

    sw/fio/ssdlab-fio --sim SOCKET --direct=1 <test>.fio                  # simulated drive
    fio --ioengine=io_uring --direct=1 --filename=/dev/nvme0n1 <test>.fio   # a device

The runner runs one section at a time (`--section=NAME`) to follow progress and to do the
steps that are not I/O (idle periods, deallocation on the simulated drive) in between. No
engine, device or `direct` in the file: the command line gives them.
"""

from dataclasses import dataclass

from sw.ssdlab.bench.suites import MIB, Fill, Idle, Point, Trim

__all__ = ["Geometry", "Section", "test_jobs", "render"]


@dataclass(frozen=True)
class Geometry:
    """What the jobs need of the target: user bytes, LBA bytes, the largest transfer, the
    deepest queue the target takes and its I/O queue pairs (T workers need T of them)."""
    capacity: int
    lba_bytes: int = 512
    max_transfer: int = 1 << 20
    max_qd: int = 1024
    n_io_queues: int = 64


@dataclass
class Section:
    name: str
    kind: str              # point | fill | trim | idle | skip
    opts: dict
    point: Point | None = None
    notes: tuple = ()


def _align(n, a):
    return max(a, n // a * a)


def region_bytes(region, geo, scale):
    if region == "drive":
        return _align(geo.capacity, 128 * 1024)
    if region == "filled":              # what the preconditioning wrote (reads of it hit flash)
        return _align(int(geo.capacity * scale.fill), 128 * 1024)
    mib = scale.cdm_mib if region == "cdm" else scale.region_mib
    if mib is None:
        return _align(geo.capacity, 128 * 1024)
    return _align(min(int(mib * MIB), geo.capacity), 128 * 1024)


def point_opts(p, geo, scale, seed, avg_logs=False):
    """fio options of one point, and notes on what the target forced."""
    notes = []
    # T workers: T fio jobs (numjobs), each on its own I/O queue pair at queue depth Q, as a
    # host runs them; a target with fewer queues (a SATA-like drive: one NCQ queue) gets one
    # job at depth Q x T, which is what T submitters on one queue amount to.
    jobs = p.workers
    if jobs > 1 and geo.n_io_queues < jobs:
        notes.append(f"T{jobs} as one job at iodepth {p.qd * jobs}: the drive has "
                     f"{geo.n_io_queues} I/O queue(s), numjobs={jobs} needs {jobs}")
        jobs = 1
    qd = p.qd * p.workers // jobs
    bs = p.bs
    if bs > geo.max_transfer:           # what the host's block layer does: split at MDTS
        k = -(-bs // geo.max_transfer)
        bs = geo.max_transfer
        notes.append(f"{p.bs} B I/Os issued as {k} x {bs} B commands (the drive's largest "
                     f"transfer), iodepth {qd} -> {qd * k}")
        qd *= k
    if qd > geo.max_qd:
        notes.append(f"iodepth {qd} -> {geo.max_qd} (the drive's queue size)")
        qd = geo.max_qd
    size = region_bytes(p.region, geo, scale)
    o = {"rw": p.rw, "bs": bs, "iodepth": qd, "offset": 0, "size": size,
         "randrepeat": 1, "randseed": seed}
    if jobs > 1:
        o.update(numjobs=jobs, group_reporting=1)
        if not p.rw.startswith("rand"):     # sequential: each job its own slice, in a row
            o["size"] = _align(size // jobs, 128 * 1024)
            o["offset_increment"] = o["size"]
    if p.rw.startswith("rand"):
        o["norandommap"] = 1
    if p.rwmixread is not None:
        o["rwmixread"] = p.rwmixread
    if p.duration_s is None:                       # degradation: capacity, not time
        o["io_size"] = _align(int(scale.write_multiple * geo.capacity), bs)
    elif scale.by_count:                           # the point is its I/O count
        o["io_size"] = scale.point_ios(p.bs) * p.bs      # counted in the point's own I/Os
    else:
        o["io_size"] = _align(scale.max_ios * bs // jobs, bs)     # the point's I/Os in all
        o["runtime"] = f"{scale.seconds(p.duration_s)}ms"
    if p.sample:                # one line per I/O on sim (binned by the runner), see results
        o["write_iops_log"] = f"logs/{p.name}"
        if avg_logs:
            o["log_avg_msec"] = scale.sample_ms
    return o, notes


def test_jobs(test, points, geo, scale, seed, avg_logs=False):
    """Sections for `test` (only `points` of its points are kept: the thinned sweep)."""
    keep = {id(p) for p in points}
    out = []
    for i, s in enumerate(test.steps):
        if isinstance(s, Point):
            if id(s) not in keep:
                continue
            o, notes = point_opts(s, geo, scale, seed, avg_logs)
            out.append(Section(s.name, "point", o, s, tuple(notes)))
        elif isinstance(s, Fill):
            size = region_bytes(s.region, geo, scale)
            a, b = _align(int(s.start * size), 128 * 1024), _align(int(s.end * size),
                                                                   128 * 1024)
            if s.start == 0:
                a = 0
            if b <= a:
                continue
            out.append(Section(f"fill{i}-{s.region}-{round(s.end * 100)}", "fill",
                               {"rw": "write", "bs": min(128 * 1024, geo.max_transfer),
                                "iodepth": 32, "offset": a, "size": b - a,
                                "end_fsync": 1}))      # Flush: the data is on the flash
        elif isinstance(s, Trim):
            out.append(Section(f"trim{i}", "trim", {}))
        elif isinstance(s, Idle):
            out.append(Section(f"idle{i}", "idle", {"ms": scale.seconds(s.seconds)}))
    return out


def render(title, sections, header=()):
    lines = [f"; {title}", *(f"; {h}" for h in header),
             "; Run: sw/fio/ssdlab-fio --sim SOCKET --direct=1 <this file> (simulated drive) or",
             ";      fio --ioengine=io_uring --direct=1 --filename=DEV <this file>",
             "[global]", "group_reporting=1", ""]
    for s in sections:
        if s.kind == "skip":
            lines += [f"; [{s.name}] not run: {'; '.join(s.notes)}", ""]
            continue
        if s.kind == "trim":
            lines += ["; step: deallocate the whole drive (NVMe Dataset Management / TRIM)", ""]
            continue
        if s.kind == "idle":
            lines += [f"; step: idle {s.opts['ms']} ms (no I/O)", ""]
            continue
        lines.append(f"[{s.name}]")
        lines.append("stonewall")
        lines += [f"{k}={v}" for k, v in s.opts.items()]
        lines.append("")
    return "\n".join(lines) + "\n"
