# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab fidelity`: every shipped persona measured at its own full topology (issue 20,
item 6), beside its analytic limits, as one table for personas/README.md.

Each persona runs the `fidelity` suite (suites.py: 128 KiB sequential read and write at
QD 32, 4 KiB random read and write at QD 1 and QD 32 on a freshly written test region, then
a sustained 4 KiB QD 32 random-write run of write_multiple x capacity sampled against data
written, and the same writes after a 15 min idle) at the persona's own channels x ways x
LUNs, its NAND interface and mode, its host link and queues: no --param override. Only the
capacity is scaled (`blocks_per_plane`, the same for every persona, stated in the table),
since a full-size drive's preconditioning would be hours of simulated writes.

    plan(names, blocks_per_plane)        what each persona is built as, and its limits
    run_all(spec, plan, out, echo)       one bench per persona (sweep.run_cell), in order
    rows(doc) / table(doc)               the figures, and the Markdown table
    update_readme(path, text)            the table between the README's fidelity markers

The default persona is samsung-950pro-512 scaled, so it is not run twice. A persona that
cannot be built (the message names the field) is a row saying so, not a stopped campaign.
"""

import json
import time
from dataclasses import replace
from pathlib import Path

from spec.persona import load_persona, persona_names
from sw.ssdlab.bench.limits import bus_of
from sw.ssdlab.bench.sweep import run_cell

__all__ = ["FIGURES", "FidelityError", "plan", "run_all", "rows", "table", "update_readme",
           "BEGIN", "END", "shipped"]

SUITE = "fidelity"
BEGIN = "<!-- fidelity:begin (written by `ssdlab fidelity --readme`) -->"
END = "<!-- fidelity:end -->"

# (point name, column, metric): the suite's figures, in table order
FIGURES = [("seqread-128k-qd32", "seq 128K QD32 read MB/s", "mb_s"),
           ("seqwrite-128k-qd32", "seq 128K QD32 write MB/s", "mb_s"),
           ("randread-4k-qd1", "4K read QD1 IOPS", "iops"),
           ("randread-4k-qd32", "4K read QD32 IOPS", "iops"),
           ("randwrite-4k-qd1", "4K write QD1 IOPS", "iops"),
           ("randwrite-4k-qd32", "4K write QD32 IOPS", "iops")]


class FidelityError(ValueError):
    """Bad input to the campaign (the message names the option)."""


def shipped():
    """The personas the campaign runs: every file in personas/ but `default` (a scaled
    samsung-950pro-512)."""
    return [n for n in persona_names() if n != "default"]


def _n(k, word):
    return f"{k} {word}{'s' if k > 1 else ''}"


def plan(names, blocks_per_plane=16, pages_per_block=16):
    """[{persona, topology, parts, onfi, host, scale, scale_note, limits}] for the named
    personas built with `blocks_per_plane` (1..the smallest part's) blocks per plane of
    `pages_per_block` pages (the simulated drive's scale, sw/ssdlab/flows/sim.py; the
    limits are the full drive's, which the scale does not change). FidelityError names a
    persona that does not exist or a scale its parts cannot take."""
    out = []
    known = persona_names()
    for name in names:
        if name not in known:
            raise FidelityError(f"--persona {name}: no such persona (known: "
                                f"{', '.join(known)})")
        p = load_persona(name)
        full = p.full or p
        try:
            s = full.scaled(blocks_per_plane=blocks_per_plane)
        except ValueError as e:
            raise FidelityError(f"--blocks-per-plane {blocks_per_plane}: {e}") from None
        ppb = {g.part.geometry.pages_per_block for g in full.groups}
        if not 1 <= pages_per_block <= min(ppb):
            raise FidelityError(f"--pages-per-block {pages_per_block}: out of range "
                                f"1..{min(ppb)} for {name}")
        # every die at blocks_per_plane x pages_per_block (two part types: each its page)
        factor = sum(d[3].geometry.page_bytes * d[3].geometry.planes for d in full.dies) * \
            blocks_per_plane * pages_per_block / full.raw_bytes
        c = full.controller
        lim = full.flash_limits()
        out.append({
            "persona": name,
            "topology": f"{c.channels} ch x {_n(c.ways_per_channel, 'way')} x "
                        f"{_n(c.dies_per_way, 'LUN')}",
            "parts": sorted({g.part_name for g in full.groups}),
            "onfi": f"{c.onfi.interface} mode {c.onfi.mode}",
            "host": full.host.describe(),
            "scale": f"{blocks_per_plane} blocks/plane x {pages_per_block} pages/block, "
                     f"raw capacity x {factor:.3g}",
            "scale_note": s.scale_note,
            "limits": {k: (round(v, 1) if isinstance(v, float) else v)
                       for k, v in lim.items()}})
    return out


def run_all(spec, entries, out, echo=print):
    """Bench every planned persona with `spec` (a BenchSpec: scale, profile, seed, pgo; its
    blocks_per_plane is the plan's) in turn; fidelity.json in `out` (rewritten after each
    persona, so a campaign stopped part-way still tabulates what finished, "pending" on the
    rest) and the document returned. A device template in spec.device ("{cell}" names the
    persona) runs the suite on files instead (the campaign's own test)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    doc = {"tool": "ssdlab fidelity", "suite": SUITE, "profile": spec.profile,
           "scale": spec.scale.as_dict(), "blocks_per_plane": spec.blocks_per_plane,
           "pages_per_block": spec.pages_per_block, "seed": spec.seed,
           "build": "device" if spec.device else ("PGO build" if spec.pgo else "plain build"),
           "wall_s": 0.0, "personas": [{**e, "ok": False, "pending": True, "wall_s": 0.0,
                                          "error": "pending (the campaign stopped before it)"}
                                         for e in entries]}
    for i, e in enumerate(entries):
        cell = {"persona": e["persona"], "suite": SUITE, "params": {}}
        r = run_cell(replace(spec, suite=SUITE), cell, out / e["persona"])
        r.pop("cell")
        doc["personas"][i] = {**e, **r}
        doc["wall_s"] = round(time.monotonic() - t0, 1)
        (out / "fidelity.json").write_text(json.dumps(doc, indent=1))
        echo(f"fidelity: {e['persona']}: " + ("done" if r["ok"] else r["error"])
             + f" in {r['wall_s']:.0f} s wall")
    return doc


def merge(docs, bases):
    """One fidelity document from several campaigns' (`docs`, each run in `bases[i]`): their
    personas in campaign order, a later campaign's row replacing an earlier one of the same
    persona; the wall time summed. FidelityError when the campaigns ran other profiles,
    scales, seeds or builds (their figures would not compare)."""
    keys = ("profile", "scale", "seed", "build", "blocks_per_plane", "pages_per_block")
    first = docs[0]
    for d in docs[1:]:
        diff = [k for k in keys if d.get(k) != first.get(k)]
        if diff:
            raise FidelityError("campaigns differ in " + ", ".join(
                f"{k} ({first.get(k)!r} vs {d.get(k)!r})" for k in diff))
    out = {**first, "wall_s": round(sum(d["wall_s"] for d in docs), 1), "personas": []}
    for d, base in zip(docs, bases, strict=True):
        for e in d["personas"]:
            out["personas"] = [p for p in out["personas"] if p["persona"] != e["persona"]]
            out["personas"].append({**e, "base": str(base)})
    return out


def _point(result, name):
    for t in result["tests"]:
        for p in t["points"]:
            if p["name"] == name:
                return p
    return None


def _sustained(p):
    """(first tenth, last tenth) mean IOPS of the sustained run's samples."""
    s = [v for _, v in (p or {}).get("samples") or []]
    if len(s) < 10:
        return None, None
    k = len(s) // 10
    return sum(s[:k]) / k, sum(s[-k:]) / k


def rows(doc, base=None):
    """One dict per persona from a fidelity document: the figures with their limits and
    steady-state verdicts, the sustained run, the wall time, or the error. `base`: the
    campaign's directory, where each persona's result is when the recorded path (relative
    to where the campaign ran) does not lead to it."""
    out = []
    for e in doc["personas"]:
        row = {k: e[k] for k in ("persona", "topology", "onfi", "scale", "ok", "wall_s")}
        if not e["ok"]:
            row["error"] = e["error"]
            row["pending"] = e.get("pending", False)
            out.append(row)
            continue
        where = Path(e["out"])
        base_e = e.get("base", base)
        if base_e is not None and not (where / "result.json").exists():
            where = Path(base_e) / e["persona"]
        result = json.loads((where / "result.json").read_text())
        row["commit"] = result.get("commit")
        cfg = result["configuration"]
        row["bus"] = bus_of(cfg)["describe"] if "sys_clk_freq" in cfg else None
        for name, _, metric in FIGURES:
            p = _point(result, name)
            lim = (p or {}).get("limit") or {}
            row[name] = {"value": p and p[metric], "limit": lim.get(metric),
                         "bound": lim.get("bound"), "ios": p and p["ios"],
                         "steady": ((p or {}).get("steady_state") or {}).get("steady")}
        q1 = _point(result, "randread-4k-qd1")
        row["qd1_read_lat_us"] = q1 and q1["lat_mean_us"]
        sus = _point(result, "sustained")
        first, last = _sustained(sus)
        after = _point(result, "sustained-idle")
        row["sustained"] = {"first_iops": first, "last_iops": last,
                            "bytes": sus and sus["bytes"],
                            "after_idle_iops": after and after["iops"]}
        out.append(row)
    return out


def _scalar(v):
    """A scale value as the command line takes it (a pair as "a,b": JSON makes tuples lists,
    so a table re-made with --from reads the same)."""
    return ",".join(map(str, v)) if isinstance(v, (list, tuple)) else v


def _num(v, digits=0):
    return "-" if v is None else f"{v:,.{digits}f}"


def _fig(f, digits):
    s = _num(f["value"], digits)
    if f["limit"] is not None:
        s += f" ({_num(f['limit'], digits)} {f['bound'] or ''})".replace(" )", ")")
    if f["steady"] is False:
        s += " NOT steady"
    return s


def table(doc, base=None):
    """The Markdown table of a fidelity document (`base` as for rows), with the command and
    the configuration."""
    lines = [f"`ssdlab fidelity` ({doc['profile']} profile; scale "
             + ", ".join(f"{k}={_scalar(v)}" for k, v in doc["scale"].items())
             + f"; seed {doc['seed']}; {doc['build']}; {doc['wall_s']:.0f} s wall in "
             "all). Figures in simulated time; the analytic limit of the built drive and what "
             "binds it in parentheses (sw/ssdlab/bench/limits.py); the sustained run is the "
             "mean IOPS of its first and last tenth of samples, then after 15 min idle.", "",
             "| persona (build) | " + " | ".join(c for _, c, _ in FIGURES)
             + " | QD1 read lat us | sustained 4K QD32 write IOPS: start / end / after idle "
             "| wall s |",
             "|---" * (len(FIGURES) + 4) + "|"]
    rs = rows(doc, base)
    commits = sorted({r.get("commit") or "?" for r in rs if r["ok"]})
    for r in rs:
        head = f"{r['persona']} ({r['topology']}, {r.get('bus') or r['onfi']}; {r['scale']}"
        if len(commits) > 1 and r["ok"]:
            head += f"; commit {(r.get('commit') or '?')[:12]}"
        head += ")"
        if not r["ok"]:
            what = r["error"] if r.get("pending") else f"not run: {r['error']}"
            lines.append(f"| {head} | {what} |" + " |" * (len(FIGURES) + 1)
                         + f" {r['wall_s']:.0f} |")
            continue
        figs = [_fig(r[name], 1 if metric == "mb_s" else 0) for name, _, metric in FIGURES]
        s = r["sustained"]
        sus = " / ".join(_num(v) for v in (s["first_iops"], s["last_iops"],
                                           s["after_idle_iops"]))
        lines.append(f"| {head} | " + " | ".join(figs)
                     + f" | {_num(r['qd1_read_lat_us'], 1)} | {sus} | {r['wall_s']:.0f} |")
    if commits:
        lines += ["", f"Commit{'s' if len(commits) > 1 else ''}: "
                  f"{', '.join(c[:12] for c in commits)}."]
    return "\n".join(lines) + "\n"


def update_readme(path, text):
    """Replace what lies between BEGIN and END in `path` by `text`. FidelityError when the
    markers are missing or out of order (nothing is written then)."""
    path = Path(path)
    doc = path.read_text()
    i, j = doc.find(BEGIN), doc.find(END)
    if i < 0 or j < i:
        raise FidelityError(f"{path}: no '{BEGIN}' ... '{END}' markers to write between")
    path.write_text(doc[:i + len(BEGIN)] + "\n" + text + doc[j:])
