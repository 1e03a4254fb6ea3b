# SPDX-License-Identifier: BSD-2-Clause
"""The `ssdlab` command line (click): the one front door. Run from the repository root:

    .venv/bin/python -m sw.ssdlab elaborate | lint | synth | sim | board ...  (sw/ssdlab/flows)
    .venv/bin/python -m sw.ssdlab drive ...                (a drive: simulated or a card)

    .venv/bin/python -m sw.ssdlab persona list
    .venv/bin/python -m sw.ssdlab persona show intel-750-400g [--scale 0.01] [--json] [--rtl]
    .venv/bin/python -m sw.ssdlab persona validate personas/*.yaml
    .venv/bin/python -m sw.ssdlab bench [--suite review] [--profile quick]   (sw/ssdlab/bench)
    .venv/bin/python -m sw.ssdlab compare RESULT_A RESULT_B
    .venv/bin/python -m sw.ssdlab sweep --param n_channels=2,4 --suite qdscan --workers 2

Exit status: 0 on success, 1 when a persona is invalid (the messages name file and field),
2 on a usage error (click's).
"""

import json

import click

from soc.persona_params import rtl_params
from spec.persona import (
    PersonaError,
    display_path,
    load_persona,
    persona_names,
    schema_markdown,
)

__all__ = ["main"]


@click.group()
def main():
    """ssdlab: build, simulate and measure NAND/NVMe SSDs."""


@main.group()
def persona():
    """Drive personas (personas/*.yaml): list, show, validate."""


def _gib(n):
    return f"{n / 2**30:.2f} GiB"


@persona.command("list")
def persona_list():
    """The shipped personas, one line each."""
    rows = []
    for name in persona_names():
        try:
            p = load_persona(name)
        except PersonaError as e:
            rows.append((name, f"INVALID: {e.messages[0]}"))
            continue
        c = p.controller
        what = (f"{p.host.interface:4}  {c.channels:2} ch x {c.ways_per_channel} ways x "
                f"{c.dies_per_way}  {p.die_count:3} dies  raw {_gib(p.raw_bytes):>12}  user "
                f"{p.user_bytes / 1e9:8.2f} GB  OP {p.op_pct:5.1f} %")
        if p.based_on:
            what += f"  ({p.based_on}, {p.scale.requested})"
        rows.append((name, what))
    width = max(len(n) for n, _ in rows)
    for name, what in rows:
        click.echo(f"{name:{width}}  {what}")


def _load(name, scale, blocks_per_plane):
    try:
        p = load_persona(name)
        if scale is not None or blocks_per_plane is not None:
            p = p.scaled(capacity_factor=scale, blocks_per_plane=blocks_per_plane)
        return p
    except PersonaError as e:
        click.echo(str(e), err=True)
        raise SystemExit(1) from None


@persona.command("show")
@click.argument("name")
@click.option("--scale", type=float, default=None, metavar="F",
              help="Scale raw capacity by F (0 < F <= 1), keeping die geometry and timings.")
@click.option("--blocks-per-plane", type=int, default=None, metavar="N",
              help="Scale to N blocks per plane on every die instead.")
@click.option("--json", "as_json", is_flag=True, help="Print the persona as JSON.")
@click.option("--rtl", is_flag=True, help="Also map it to the RTL cores' parameters.")
@click.option("--sdr-fallback", is_flag=True,
              help="With --rtl: run an NV-DDR2 persona in SDR (default: NV-DDR2 channels, "
                   "brought up in SDR).")
@click.option("--clk-mhz", type=float, default=100.0, show_default=True,
              help="With --rtl: the NAND engine clock.")
@click.option("--pages-per-block", type=int, default=None, metavar="N",
              help="With --rtl: the simulation's N pages per block on every part (a power "
                   "of two), as `ssdlab sim` builds; two part types need one row geometry.")
def persona_show(name, scale, blocks_per_plane, as_json, rtl, sdr_fallback, clk_mhz,
                 pages_per_block):
    """Inputs, derived capacities and analytic limits of persona NAME (a name or a file)."""
    if scale is not None and blocks_per_plane is not None:
        raise click.UsageError("give --scale or --blocks-per-plane, not both")
    p = _load(name, scale, blocks_per_plane)
    rtl_map = rtl_err = None
    if rtl:
        try:
            rtl_map = rtl_params(p, clk_mhz=clk_mhz, sdr_fallback=sdr_fallback,
                                 pages_per_block=pages_per_block)
        except PersonaError as e:
            rtl_err = e
        except ValueError as e:             # pages_per_block out of range
            raise click.BadParameter(str(e), param_hint="--pages-per-block") from None
    if as_json:
        out = p.to_dict()
        if rtl:
            out["rtl"] = rtl_map if rtl_err is None else {"errors": rtl_err.messages}
        click.echo(json.dumps(out, indent=2, default=str))
    else:
        _print(p)
        if rtl_map is not None:
            click.echo("\nRTL mapping:")
            for key in ("nand_backend", "geometry", "luns", "parts", "onfi", "timing",
                        "nvddr2_timing",
                        "nvme_controller", "host_link", "limits_mb_s"):
                click.echo(f"  {key}: {rtl_map[key]}")
            for s in rtl_map["substitutions"]:
                click.echo(f"  substituted: {s}")
            for s in rtl_map["notes"]:
                click.echo(f"  note: {s}")
    if rtl_err is not None:
        click.echo(f"RTL mapping impossible:\n{rtl_err}", err=True)
        raise SystemExit(1)


def _print_page_timing(part):
    """The part's tR / tPROG per page type, typical and maximum, each with its source; the
    sources are listed once each and numbered."""
    echo, sources = click.echo, []

    def ref(text):
        if text not in sources:
            sources.append(text)
        return f"[{sources.index(text) + 1}]"
    t = part.timing
    corner = "typical" if t.typical else "maximum"
    echo(f"    page types (page % {part.geometry.bits_per_cell}), us, typical / maximum; the "
         f"dies run {corner}, the limits below the mean over the types (slc: SLC mode, "
         f"DAh-prefixed, not in the mean):")
    for op, ptype, typ, typ_src, most, most_src in part.page_timing():
        echo(f"      {op:5} {ptype:6} {typ / 1000:8g} {ref(typ_src):4} / {most / 1000:8g} "
             f"{ref(most_src)}")
    for i, text in enumerate(sources, 1):
        echo(f"      [{i}] {text}")


def _print(p):
    c, h, o = p.controller, p.host, p.controller.onfi
    echo = click.echo
    echo(f"{p.name}: {p.description}")
    echo(f"  {p.scale_note}")
    if p.path:
        echo(f"  file: {display_path(p.path)}")
    echo(f"  host: {h.describe()}; {h.io_queues} I/O queue(s) x {h.queue_depth}, max transfer "
         f"{h.max_transfer_kib} KiB, {h.lba_bytes} B LBAs")
    clock = f"{c.clock_mhz:g} MHz" if c.clock_mhz else "clock not published"
    echo(f"  controller: {c.channels} channels x {c.ways_per_channel} ways x {c.dies_per_way} "
         f"dies per way, {c.multi_plane}-plane ops, {clock}; ONFI {o.interface} mode {o.mode} "
         f"({o.mt_s:.0f} MT/s), bus engine at {o.clock_mhz:g} MHz")
    for g in p.groups:
        geo, t = g.part.geometry, g.part.timing
        echo(f"  dies: {len(g.slots()) * c.dies_per_way} x {g.part_name} on channels "
             f"{_ranges(g.channels)} ways {_ranges(g.ways)}: {geo.page_bytes} + "
             f"{geo.spare_bytes} B pages, {geo.pages_per_block} pages/block, "
             f"{geo.blocks_per_plane} blocks/plane, {geo.planes} planes, {geo.bits_per_cell} "
             f"bits/cell; tR {t.t_r_ns / 1000:g} us, tPROG {t.t_prog_ns / 1000:g} us, tBERS "
             f"{t.t_bers_ns / 1000:g} us; {g.part.pe_cycles} P/E")
        _print_page_timing(g.part)
    echo(f"  capacity: {p.die_count} dies, raw {_gib(p.raw_bytes)} ({p.raw_bytes} B), user "
         f"{p.user_bytes / 1e9:.3f} GB ({p.lba_count} LBAs), exposed {p.exposed_pct:.1f} %, "
         f"OP {p.op_pct:.1f} %")
    echo(f"  parity: {p.parity.scheme}"
         + (f", stripe of {p.parity.stripe_dies} dies ({_gib(p.parity_bytes)})"
            if p.parity.scheme != "none" else ""))
    echo(f"  SLC cache: {p.slc_cache.policy}"
         + (f", {p.slc_cache_bytes / 1e9:.3f} GB" if p.slc_cache.policy != "none" else ""))
    e = p.ecc
    echo(f"  ECC: {e.scheme}, {e.codeword_bytes} B codewords, "
         + (f"{e.correctable_bits} bits, " if e.correctable_bits else "")
         + f"{e.parity_bytes} parity B; DRAM {p.dram.mib} MiB {p.dram.type or ''}".rstrip())
    echo(f"  power-loss protection: {'yes' if p.power_loss_protection else 'no'}; endurance: "
         + (f"{p.endurance.gb_per_day:g} GB/day for {p.endurance.years:g} years"
            if p.endurance.gb_per_day else "not given"))
    lim = p.flash_limits()
    echo("  analytic limits, MB/s of user data (array: no bus cost; channel: bus + array):")
    echo(f"    read:    array {lim['array_read']:.0f}, channels {lim['channel_read']:.0f} (bus "
         f"peak {lim['bus_peak']:.0f}), host {lim['host']:.0f} -> {lim['read']:.0f} "
         f"({lim['read_bound']})")
    echo(f"    program: array {lim['array_program']:.0f}, channels {lim['channel_program']:.0f}, "
         f"host {lim['host']:.0f} -> {lim['program']:.0f} ({lim['program_bound']})")
    lk = p.link_limits()
    fe = lk["front_end"]
    echo(f"  host link limits, MB/s of payload (spec/pcie_link.py): {lk['description']}:")
    echo(f"    read (to host): {lk['read_mb_s']:.1f}; write (from host): {lk['write_mb_s']:.1f}"
         f"; raw {lk['raw_mb_s']:.1f}")
    echo("    front end: " + (f"{fe['data_width']}-bit TLP path at {fe['clk_mhz']:g} MHz "
                             f"({fe['mb_s']:.0f} MB/s)" if "error" not in fe else
                             f"none: {fe['error']}"))
    echo("  sources:")
    for s in p.sources:
        echo(f"    - {s}")
    echo("  assumed:")
    for a in p.assumptions:
        echo(f"    - {a.field}: {a.reason}")


def _ranges(idx):
    out, start = [], None
    for i, v in enumerate(idx):
        if start is None:
            start = v
        if i + 1 == len(idx) or idx[i + 1] != v + 1:
            out.append(str(start) if start == v else f"{start}-{v}")
            start = None
    return ",".join(out)


@persona.command("validate")
@click.argument("files", nargs=-1, required=True)
def persona_validate(files):
    """Check persona FILES; print every error (file: field = value: why); exit 1 if any."""
    bad = 0
    for f in files:
        try:
            p = load_persona(f)
        except PersonaError as e:
            bad += 1
            click.echo(str(e), err=True)
            continue
        click.echo(f"{f}: ok ({p.name}, {p.die_count} dies, raw {_gib(p.raw_bytes)}, "
                   f"{p.scale_note})")
    if bad:
        click.echo(f"{bad} of {len(files)} persona file(s) invalid", err=True)
        raise SystemExit(1)


@persona.command("schema")
def persona_schema():
    """The persona fields as a Markdown table (as in personas/README.md)."""
    click.echo(schema_markdown())
from sw.ssdlab.drive_cli import register; register(main)  # noqa: E402, E702, I001
from sw.ssdlab.bench.cli import register as _bench; _bench(main)  # noqa: E402, E702, I001
from sw.ssdlab.flows.cli import register as _flows; _flows(main)  # noqa: E402, E702, I001
