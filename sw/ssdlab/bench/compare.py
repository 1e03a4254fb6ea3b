# SPDX-License-Identifier: BSD-2-Clause
"""Two (or more) bench results on the same charts: `ssdlab compare A B [--out DIR]`.

Results must share schema_version and suite (ResultError says which differs). The legend of
each curve is the result's persona and label; charts go to DIR/charts, a side-by-side table
of every point to DIR/compare.md and compare.csv."""

import csv
from pathlib import Path

from sw.ssdlab.bench.charts import draw_all, value
from sw.ssdlab.bench.results import ResultError, load_result

__all__ = ["compare", "legend_labels"]


def _base(r):
    label = r.get("label") or r["persona"]
    return label if r["persona"] in label else f"{r['persona']} ({label})"


def legend_labels(results):
    """persona + label for each result; where two would read the same, each gets its result
    directory's name (or its position)."""
    bases = [_base(r) for r in results]
    out = []
    for i, (r, name) in enumerate(zip(results, bases, strict=True)):
        if bases.count(name) > 1:
            name = f"{name} ({Path(r['_path']).name})" if r.get("_path") else f"{name} #{i + 1}"
        out.append(name)
    return out


def check_comparable(results, paths):
    r0 = results[0]
    for r, p in zip(results[1:], paths[1:], strict=True):
        if r["schema_version"] != r0["schema_version"]:
            raise ResultError(f"{p}: schema_version {r['schema_version']} differs from "
                              f"{paths[0]}'s {r0['schema_version']}: cannot compare")
        if r["suite"] != r0["suite"]:
            raise ResultError(f"{p}: suite {r['suite']!r} differs from {paths[0]}'s "
                              f"{r0['suite']!r}: cannot compare")


def compare(paths, out_dir):
    """Load, check and overlay the results at `paths`; returns (out_dir, charts)."""
    results = [load_result(p) for p in paths]
    check_comparable(results, [str(p) for p in paths])
    labels = legend_labels(results)
    out_dir = Path(out_dir)
    charts = draw_all(list(zip(labels, results, strict=True)), out_dir / "charts")
    rows = []
    names = []
    for r in results:
        for t in r["tests"]:
            for p in t["points"]:
                key = (t["name"], p["name"])
                if key not in names:
                    names.append(key)
    index = [{(t["name"], p["name"]): (t, p) for t in r["tests"] for p in t["points"]}
             for r in results]
    for key in names:
        row = {"test": key[0], "point": key[1]}
        for label, idx in zip(labels, index, strict=True):
            t, p = idx.get(key, (None, None))
            row[f"{label} IOPS"] = value(p, "iops") if p else None
            row[f"{label} MB/s"] = p["mb_s"] if p else None
            row[f"{label} p99 us"] = p["lat_p99_us"] if p else None
        rows.append(row)
    fields = list(rows[0]) if rows else ["test", "point"]
    with open(out_dir / "compare.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fields)
        w.writeheader()
        w.writerows(rows)
    md = [f"# ssdlab compare: suite {results[0]['suite']}", ""]
    for label, r in zip(labels, results, strict=True):
        c = r.get("configuration") or {}
        md.append(f"- **{label}**: `{r['_path']}`, commit {r.get('commit')}, seed "
                  f"{r['seed']}, scale {r['scale']}, {c.get('n_channels')} ch x "
                  f"{c.get('n_ways')} ways, {r['capacity']['user_bytes'] / 2**20:.1f} MiB "
                  f"user, {r['time_domain']} time")
    md.append("")
    for t in results[0]["tests"]:
        for f in charts.get(t["name"], []):
            if str(f).endswith(".png"):
                md += [f"![{t['name']}](charts/{Path(f).name})", ""]
    md += ["| " + " | ".join(fields) + " |", "|" + "---|" * len(fields)]
    for row in rows:
        md.append("| " + " | ".join("-" if row[k] is None else str(row[k]) for k in fields)
                  + " |")
    (out_dir / "compare.md").write_text("\n".join(md) + "\n")
    return out_dir, charts
