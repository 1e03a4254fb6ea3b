# SPDX-License-Identifier: BSD-2-Clause
"""report.md and report.html of a bench result: what was measured (persona, its scaled
configuration and capacity, every scale factor, commit, seed, fio version, target and time
domain), the suite's mapping notes, one section per test (chart and a table of its points:
IOPS, MB/s, mean/p50/p99/p99.9 latency, runtime, wall time) and the steps between them."""

import html
from pathlib import Path

from sw.ssdlab import simspeed
from sw.ssdlab.bench.charts import value
from sw.ssdlab.bench.limits import bus_of

__all__ = ["write_report", "header_rows", "point_rows"]

_SCALE_TEXT = {
    "time_scale": "every duration of the suite (runs, idle periods) multiplied by this",
    "write_multiple": "the degradation run writes this many times the user capacity",
    "max_ios": "a point stops after this many I/Os (run-length cap)",
    "min_ios": "the fewest I/Os a point may rest on (at 4 KiB, at 128 KiB); fewer: SHORT",
    "by_count": "points end by I/O count (min_ios), not by their scaled time",
    "region_mib": "test region of read/write tests, MiB (None: the whole drive)",
    "cdm_mib": "CrystalDiskMark area, MiB (methodology: 1 GiB; capped by capacity)",
    "fill": "fraction of the drive written by the preconditioning",
    "max_points": "points kept per sweep curve (None: all)",
}


def header_rows(r):
    c = r.get("configuration") or {}
    rows = [("persona", r["persona"]), ("label", r.get("label", "")),
            ("parameters", ", ".join(f"{k}={v}" for k, v in r.get("params", {}).items())
             or "(persona as is)"),
            ("suite", f"{r['suite']}: {r['suite_title']} ({r['units']})"),
            ("profile", r.get("profile") or "(custom)")]
    if c:
        rows.append(("drive", f"{c.get('n_channels')} channels x {c.get('n_ways')} ways, "
                              f"{c.get('part')}, {c.get('planes')} planes x "
                              f"{c.get('blocks_per_plane')} blocks x "
                              f"{c.get('pages_per_block')} pages of {c.get('page_bytes')} B"
                              + (f"; {c['part2']['part']} ({c['part2']['page_bytes']} B "
                                 f"pages) on {len(c.get('part2_targets', []))} targets"
                                 if c.get("part2") else "")
                              + f", OP {c.get('op_pct')} %"))
        rows.append(("capacity scale", c.get("scale_note", "")))
        for n in c.get("notes", []):
            rows.append(("note", n))
    link = r.get("link")
    if link:
        rows.append(("host link", f"{link['describe']}: payload limit {link['read_mb_s']:,.0f} "
                                  f"MB/s device-to-host (reads), {link['write_mb_s']:,.0f} "
                                  "MB/s host-to-device (writes)"))
    if c.get("n_channels"):
        bus = bus_of(c)["describe"] if c.get("sys_clk_freq") else "?"
        rows.append(("limit column", "the analytic limit of each point: the flash's (bus and "
                                     f"array times of the build on its bus, {bus}; page "
                                     "data only, no spare; "
                                     "FTL read and program sizes, before write "
                                     "amplification) or the link's payload limit, whichever "
                                     "is lower (sw/ssdlab/bench/limits.py)"))
    cap = r["capacity"]
    rows.append(("user capacity", f"{cap['user_bytes']} B ({cap['user_bytes'] / 2**20:.1f} "
                                  f"MiB), {cap['lba_bytes']} B LBAs, max transfer "
                                  f"{cap['max_transfer']} B, queue up to {cap['max_qd']}"))
    for k, v in r["scale"].items():
        rows.append((f"scale: {k}", f"{v} — {_SCALE_TEXT.get(k, '')}"))
    rows.append(("sampling", f"per-second samples become one per {r['sample_ms']} ms of "
                             f"{r['time_domain']} time (max(1 ms, 1 s x time_scale)); the "
                             "30 s moving mean spans 30 s x time_scale"))
    rows += [("commit", f"{r.get('commit')}{' (dirty tree)' if r.get('dirty') else ''}"),
             ("seed", str(r["seed"])), ("fio", r.get("fio_version", "")),
             ("target", ", ".join(f"{k}={v}" for k, v in r["target"].items())),
             ("time domain", f"{r['time_domain']} (IOPS, MB/s, latency and runtime)"),
             ("started", r.get("started", "")), ("wall time", f"{r.get('wall_s', 0):.0f} s")]
    if r.get("sim_speed"):
        rows.append(("simulation speed", f"{simspeed.text(r['sim_speed'])} (the whole run; "
                                         "per point and step under Simulation speed)"))
    return rows


def _fmt(v, nd=1):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.{nd}f}"
    return str(v)


POINT_COLUMNS = ["point", "series", "x", "QD", "IOPS", "MB/s", "limit MB/s (bound)",
                 "% of limit", "lat mean µs", "p50 µs", "p99 µs", "p99.9 µs", "I/Os",
                 "time basis", "steady state", "wall s"]


def limit_text(p):
    """The analytic limit beside a point, and the fraction of it the point reached."""
    lim = p.get("limit")
    if not lim:
        return "-", "-"
    pct = 100 * p["mb_s"] / lim["mb_s"] if lim["mb_s"] and p.get("mb_s") is not None else None
    text = f"{lim['mb_s']:,.1f} ({lim['bound']})"
    if lim.get("slc_mb_s"):
        text += f"; {lim['slc_mb_s']:,.1f} into the SLC cache"
    return text, "-" if pct is None else f"{pct:.0f} %"


def ios_text(p):
    """I/O count, marked where it is under the profile's minimum."""
    n = _fmt(p.get("ios"))
    if p.get("short"):
        return f"{n} (SHORT: min {p['min_ios']:,})"
    return n


def steady_text(p):
    """The point's steady-state verdict in a few words ("-" where it was not judged)."""
    s = p.get("steady_state")
    if not s:
        return "-"
    if s["steady"] is None:
        return f"not judged ({s.get('why', '')})"
    words = "steady" if s["steady"] else "NOT steady"
    return f"{words} (±{s['excursion_pct']} %, slope {s['slope_pct']} %)"


def point_rows(t, r):
    for p in t["points"]:
        basis = "ns" if p.get("time_basis") == "ns" else f"fio, {_fmt(p['runtime_ms'])} ms"
        yield [p["label"], p["series"], str(p["x"]), str(p["iodepth"]),
               _fmt(value(p, "iops")), _fmt(p["mb_s"], 2), *limit_text(p),
               _fmt(p["lat_mean_us"]), _fmt(p["lat_p50_us"]), _fmt(p["lat_p99_us"]),
               _fmt(p["lat_p999_us"]), ios_text(p), basis, steady_text(p),
               _fmt(p["wall_s"])]


def _md_table(head, rows):
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(str(c).replace("|", "/") for c in row) + " |" for row in rows]
    return out


def ftl_note(t):
    """One sentence on what the test wrote to the flash (None without FTL counters)."""
    f = t.get("ftl") or {}
    if f.get("write_amplification") is None:
        return None
    return (f"write amplification {f['write_amplification']:.3f} "
            f"({f['write_amplification_with_map']:.3f} with the map's writes): "
            f"{f['nand_units_written']} NAND / {f['host_units_written']} host units, "
            f"{f['gc_units_moved']} moved by GC, {f['erases']} erases"
            + (f"; SLC cache: {f['slc_units_written']} units programmed in SLC, "
               f"{f['slc_blocks_folded']} SLC blocks ({f['slc_units_folded']} units) folded"
               if "slc_units_written" in f else "")
            + " (FTL counters, vendor log page C0h)")


def write_report(r, out_dir, charts):
    """Write report.md and report.html into out_dir; charts: {test: [files]}."""
    out_dir = Path(out_dir)
    title = f"ssdlab bench: {r['suite']} on {r['label']}"
    md = [f"# {title}", "", f"{r['suite_title']}. Every figure is in {r['time_domain']} time.",
          "", *_md_table(["", ""], header_rows(r)), "", "## Method", ""]
    md += [f"- {n}" for n in r.get("notes", [])]
    md += ["- the fio job files are in `jobs/` (one per test, one section per step): rerun "
           "with `sw/fio/ssdlab-fio --sim SOCKET --direct=1 jobs/<test>.fio` or `fio "
           "--ioengine=io_uring --direct=1 --filename=DEV jobs/<test>.fio`", ""]
    for t in r["tests"]:
        md += [f"## {t['title']}", ""]
        for f in charts.get(t["name"], []):
            if str(f).endswith(".png"):
                md += [f"![{t['name']}](charts/{Path(f).name})", ""]
        md += _md_table(POINT_COLUMNS, point_rows(t, r))
        notes = t.get("notes", []) + [n for n in [ftl_note(t)] if n]
        md += [""] + [f"- {n}" for n in notes] + [""]
    md += ["## Steps", ""]
    md += _md_table(["test", "step", "what", "drive time", "wall s"],
                    [_step_row(s) for s in r.get("steps", [])])
    speed = list(speed_rows(r))
    if speed:
        md += ["", "## Simulation speed", "", SPEED_NOTE, ""]
        md += _md_table(SPEED_COLUMNS, speed)
    (out_dir / "report.md").write_text("\n".join(md) + "\n")

    e = html.escape
    h = ["<!doctype html><html><head><meta charset='utf-8'>", f"<title>{e(title)}</title>",
         "<style>body{font-family:sans-serif;max-width:1000px;margin:auto}"
         "table{border-collapse:collapse;font-size:13px}td,th{border:1px solid #bbb;"
         "padding:2px 6px}th{background:#2e7d32;color:#fff}img{max-width:100%}</style>",
         "</head><body>", f"<h1>{e(title)}</h1>",
         f"<p>{e(r['suite_title'])}. Every figure is in {e(r['time_domain'])} time.</p>",
         _html_table(None, header_rows(r)), "<h2>Method</h2><ul>"]
    h += [f"<li>{e(n)}</li>" for n in r.get("notes", [])] + ["</ul>"]
    for t in r["tests"]:
        h.append(f"<h2>{e(t['title'])}</h2>")
        for f in charts.get(t["name"], []):
            if str(f).endswith(".svg"):
                h.append(f"<img src='charts/{e(Path(f).name)}' alt='{e(t['name'])}'>")
        h.append(_html_table(POINT_COLUMNS, list(point_rows(t, r))))
        notes = t.get("notes", []) + [n for n in [ftl_note(t)] if n]
        if notes:
            h.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in notes) + "</ul>")
    h += ["<h2>Steps</h2>", _html_table(["test", "step", "what", "drive time", "wall s"],
                                        [_step_row(s) for s in r.get("steps", [])])]
    if speed:
        h += ["<h2>Simulation speed</h2>", f"<p>{e(SPEED_NOTE)}</p>",
              _html_table(SPEED_COLUMNS, speed)]
    h.append("</body></html>")
    (out_dir / "report.html").write_text("\n".join(h) + "\n")
    return out_dir / "report.md", out_dir / "report.html"


SPEED_COLUMNS = ["test", "point or step", "cycles", "simulated ms", "wall s", "K cycles/s",
                 "simulated ms per wall s", "I/Os per wall s", "skipped by fast-forward",
                 "firmware instructions per I/O"]
SPEED_NOTE = ("Wall-clock figures of this run on this machine (the harness's cycles and "
              "simulated time over the host's wall time of each fio run or settle step): they "
              "describe the simulator, not the drive, and vary with the machine's load.")


def speed_rows(r):
    """A row per point and step that has a simulation speed, and the whole run's last."""
    def row(test, what, s):
        return [test, what, f"{s['cycles']:,}", f"{s['sim_ns'] / 1e6:,.2f}",
                f"{s['wall_s']:,.1f}", _fmt(s["cycles_per_s"] and s["cycles_per_s"] / 1e3, 0),
                _fmt(s["sim_us_per_s"] and s["sim_us_per_s"] / 1e3, 3),
                _fmt(s["ios_per_s"]) if s["ios"] else "-", f"{s['ff_skipped_pct']:.1f} %",
                _fmt(s.get("fw_instr_per_io"), 1)]
    for s in r.get("steps", []):
        if s.get("sim_speed"):
            what = s.get("name") or _step_row(s)[2]
            yield row(s["test"], f"{s['kind']}: {what}", s["sim_speed"])
    for t in r["tests"]:
        for p in t["points"]:
            if p.get("sim_speed"):
                yield row(t["name"], p["label"], p["sim_speed"])
    if r.get("sim_speed"):
        yield row("whole run", "", r["sim_speed"])


def _step_row(s):
    if s["kind"] == "fill":
        return [s["test"], "fill", f"{s['bytes']} B written sequentially ({s['mb_s']} MB/s)",
                f"{s['runtime_ms']} ms", str(s["wall_s"])]
    what = " + ".join(x for x in ("deallocate" if s["trim"] else "",
                                  f"idle {s['idle_ms']} ms" if s["idle_ms"] else "") if x)
    return [s["test"], "settle", what, f"{s['elapsed_ns'] / 1e6:.1f} ms", str(s["wall_s"])]


def _html_table(head, rows):
    e = html.escape
    out = ["<table>"]
    if head:
        out.append("<tr>" + "".join(f"<th>{e(c)}</th>" for c in head) + "</tr>")
    for row in rows:
        out.append("<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)
