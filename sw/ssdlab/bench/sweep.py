# SPDX-License-Identifier: BSD-2-Clause
"""A grid of bench runs (personas x parameter values x suites) on Dask distributed: each cell
is one task running one bench (its own simulated drive and result directory); the results are
collected into sweep.json, sweep.csv and one chart set comparing the cells.

    ssdlab sweep --persona default --param n_channels=2,4 --suite qdscan --workers 2
    ssdlab sweep ... --address tcp://scheduler:8786      # an existing Dask cluster

LocalCluster by default (`--workers N` processes, one thread each: a cell is a process-heavy
simulation); builds of one configuration are serialised by a file lock (session.drive_for).
"""

import csv
import itertools
import json
import time
from dataclasses import replace
from pathlib import Path

from sw.ssdlab.bench.charts import draw_all
from sw.ssdlab.bench.compare import legend_labels
from sw.ssdlab.bench.results import CSV_FIELDS, csv_rows
from sw.ssdlab.bench.session import bench

__all__ = ["grid", "run_sweep", "run_cell"]


def grid(personas, params_multi, suites):
    """The cells: [{"persona", "params", "suite"}], every combination."""
    keys = list(params_multi)
    combos = list(itertools.product(*[params_multi[k] for k in keys])) or [()]
    cells = []
    for suite in suites:
        for persona in personas:
            for combo in combos:
                cells.append({"persona": persona, "suite": suite,
                              "params": dict(zip(keys, combo, strict=True))})
    return cells


def cell_name(cell):
    p = "-".join(f"{k}{v}" for k, v in cell["params"].items())
    return "-".join(x for x in (cell["persona"], p, cell["suite"]) if x)


def run_cell(spec, cell, out_dir):
    """One cell (runs in a Dask worker): the bench of spec with the cell's persona, params and
    suite; returns a small summary (the result stays in its directory)."""
    import io
    log = io.StringIO()
    s = replace(spec, persona=cell["persona"], suite=cell["suite"],
                params={**spec.params, **cell["params"]}, out=str(out_dir),
                label=cell_name(cell))
    if spec.device:             # a device per cell: "{cell}" in the path names the cell's
        s = replace(s, device=spec.device.format(cell=cell_name(cell)), params={})
    t0 = time.monotonic()
    try:
        result, out = bench(s, log=log)
    except Exception as e:                      # reported per cell, the sweep goes on
        return {"cell": cell, "name": cell_name(cell), "out": str(out_dir), "ok": False,
                "error": f"{type(e).__name__}: {e}", "wall_s": round(time.monotonic() - t0, 1),
                "log": log.getvalue()[-4000:]}
    return {"cell": cell, "name": cell_name(cell), "out": str(out), "ok": True,
            "wall_s": round(time.monotonic() - t0, 1)}


def run_sweep(spec, cells, out_dir, workers=1, address=None, echo=print):
    """Run the cells on Dask (address: a scheduler; else a LocalCluster of `workers`);
    write sweep.json, sweep.csv and charts/ into out_dir; returns the sweep document."""
    from dask.distributed import Client, LocalCluster, as_completed
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    cluster = None
    if address:
        client = Client(address)
    else:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
        client = Client(cluster)
    try:
        futures = [client.submit(run_cell, spec, c, out_dir / cell_name(c), pure=False,
                                 key=f"cell-{i}-{cell_name(c)}")
                   for i, c in enumerate(cells)]
        done = []
        for fut in as_completed(futures):
            r = fut.result()
            done.append(r)
            state = "ok" if r["ok"] else f"FAILED: {r['error']}"
            echo(f"sweep: [{len(done)}/{len(cells)}] {r['name']}: {state} ({r['wall_s']} s)")
    finally:
        client.close()
        if cluster:
            cluster.close()
    wall = round(time.monotonic() - t0, 1)
    order = {cell_name(c): i for i, c in enumerate(cells)}
    done.sort(key=lambda r: order[r["name"]])
    doc = {"schema_version": 1, "tool": "ssdlab sweep", "workers": workers if not address
           else None, "address": address, "wall_s": wall, "scale": spec.scale.as_dict(),
           "profile": spec.profile, "seed": spec.seed, "cells": done}
    (out_dir / "sweep.json").write_text(json.dumps(doc, indent=1) + "\n")
    from sw.ssdlab.bench.results import load_result
    results = {}
    for r in done:
        if r["ok"]:
            results[r["name"]] = load_result(r["out"])
    with open(out_dir / "sweep.csv", "w", newline="") as f:
        w = csv.DictWriter(f, ["cell", *CSV_FIELDS])
        w.writeheader()
        for name, res in results.items():
            for row in csv_rows(res):
                w.writerow({"cell": name, **row})
    by_suite = {}
    for res in results.values():
        by_suite.setdefault(res["suite"], []).append(res)
    for suite, rs in by_suite.items():
        labels = legend_labels(rs)
        draw_all(list(zip(labels, rs, strict=True)),
                 out_dir / "charts" / suite if len(by_suite) > 1 else out_dir / "charts")
    return doc
