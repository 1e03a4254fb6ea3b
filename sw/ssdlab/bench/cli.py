# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab bench`, `ssdlab compare`, `ssdlab sweep` (registered on sw/ssdlab/cli.py's group).

    python -m sw.ssdlab bench [--suite review] [--persona default] [--param n_channels=2]
                              [--profile quick|full] [--time-scale F] ... [--out DIR]
    python -m sw.ssdlab bench --device /dev/nvme0n1 --suite qdscan --profile full
    python -m sw.ssdlab compare build/bench/A build/bench/B [--out DIR]
    python -m sw.ssdlab sweep --persona default --param n_channels=2,4 --suite qdscan \\
                              --workers 2 [--address tcp://host:8786]

Exit status: 0 done; 1 a persona that is invalid (its message), a run or a result that
failed; 2 a usage error naming the option (unknown suite, persona, profile or test, a bad
--param, a non-positive scale factor).
"""

import json
import sys
import time
from pathlib import Path

import click

from sw.ssdlab.bench.scale import PROFILES
from sw.ssdlab.bench.suites import SUITES

__all__ = ["register"]

_POS = click.FloatRange(min=0, min_open=True)


def _scale_options(f):
    opts = [
        click.option("--profile", type=click.Choice(list(PROFILES)), default="quick",
                     show_default=True, help="Named scale factors (quick: make bench)."),
        click.option("--time-scale", type=_POS, help="Multiply every duration by F."),
        click.option("--write-multiple", type=_POS,
                     help="Degradation run: write F x the user capacity."),
        click.option("--max-ios", type=click.IntRange(min=1),
                     help="Run-length cap: I/Os per point at most."),
        click.option("--min-ios", callback=_min_ios, metavar="N4K,N128K",
                     help="Fewest I/Os a point may rest on, at 4 KiB and at 128 KiB "
                          "(quick: 2000,256); a point with fewer is marked SHORT."),
        click.option("--region-mib", type=_POS, help="Test region of read/write tests."),
        click.option("--cdm-mib", type=_POS, help="CrystalDiskMark area (methodology 1024)."),
        click.option("--fill", type=click.FloatRange(min=0, max=1, min_open=True),
                     help="Fraction of the drive the preconditioning writes."),
        click.option("--max-points", type=click.IntRange(min=2),
                     help="Points kept per sweep curve."),
        click.option("--all-points", is_flag=True, help="Keep every point of every curve."),
        click.option("--tests", "tests", metavar="T1,T2", help="Only these tests of the suite."),
        click.option("--blocks-per-plane", type=click.IntRange(min=1),
                     help="Drive capacity scale: blocks per plane (default 16, SIM_SCALE)."),
        click.option("--pages-per-block", type=click.IntRange(min=1),
                     help="Drive capacity scale: pages per block (default 16, SIM_SCALE)."),
        click.option("--pgo/--no-pgo", default=True, show_default=True,
                     help="Simulated drive: its model compiled with gcc's profile-guided "
                          "optimisation (sim/harness/README.md: about 1.2x the simulation "
                          "speed, a minute more to build once; the same simulated figures)."),
        click.option("--seed", type=click.IntRange(min=0), default=1, show_default=True),
        click.option("--out", type=click.Path(file_okay=False),
                     help="Result directory (default build/bench/<persona>-<suite>-<time>)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def _min_ios(ctx, param, value):
    if value is None:
        return None
    try:
        n = tuple(int(x) for x in value.split(","))
    except ValueError:
        n = ()
    if len(n) != 2 or min(n) < 1:
        raise click.BadParameter(f"{value!r}: two integers >= 1, at 4 KiB and at 128 KiB "
                                 "(e.g. 2000,256)")
    return n


def _scale(ctx_opts):
    s = PROFILES[ctx_opts["profile"]].with_(
        time_scale=ctx_opts["time_scale"], write_multiple=ctx_opts["write_multiple"],
        max_ios=ctx_opts["max_ios"], min_ios=ctx_opts["min_ios"],
        region_mib=ctx_opts["region_mib"], cdm_mib=ctx_opts["cdm_mib"], fill=ctx_opts["fill"],
        max_points=ctx_opts["max_points"])
    if ctx_opts["all_points"]:
        from dataclasses import replace
        s = replace(s, max_points=None)
    return s


def _check_persona(name, option="--persona"):
    from spec.persona import PersonaError, load_persona, persona_names
    if name not in persona_names() and not Path(name).exists():
        raise click.BadParameter(f"no persona {name!r} (personas: "
                                 f"{', '.join(persona_names())})", param_hint=option)
    try:
        load_persona(name)
    except PersonaError as e:
        click.echo(str(e), err=True)
        raise SystemExit(1) from None


def _params(items, multi=False):
    from sw.ssdlab.bench.session import ParamError, check_params, parse_params
    try:
        p = parse_params(items, multi=multi)
        if multi:
            for k, vs in p.items():
                for v in vs:
                    check_params({k: v})
        else:
            check_params(p)
        return p
    except ParamError as e:
        raise click.BadParameter(str(e), param_hint="--param") from None


def _tests(suite, tests):
    if not tests:
        return None
    names = [t.strip() for t in tests.split(",") if t.strip()]
    for n in names:
        for s in suite if isinstance(suite, (list, tuple)) else [suite]:
            if n not in [t.name for t in SUITES[s].tests]:
                raise click.BadParameter(
                    f"suite {s} has no test {n!r} (tests: "
                    f"{', '.join(t.name for t in SUITES[s].tests)})", param_hint="--tests")
    return names


def _print_setup(spec, echo):
    echo(f"ssdlab bench: suite {spec.suite} ({SUITES[spec.suite].title}), "
         f"{'device ' + spec.device if spec.device else 'persona ' + spec.persona}"
         + (f", params {spec.params}" if spec.params else "")
         + f", profile {spec.profile}, seed {spec.seed}")
    echo("  scale factors: " + ", ".join(f"{k}={v}" for k, v in spec.scale.as_dict().items())
         + f"; samples every {spec.scale.sample_ms} ms"
         + (f"; blocks_per_plane={spec.blocks_per_plane}" if spec.blocks_per_plane else "")
         + (f"; pages_per_block={spec.pages_per_block}" if spec.pages_per_block else ""))
    if spec.tests:
        echo(f"  tests: {', '.join(spec.tests)}")


class _Progress:
    """click.progressbar driven by the runner's progress(done, total, text) calls."""

    def __init__(self):
        self.bar = None
        self.done = 0
        self.t0 = time.monotonic()

    def __call__(self, done, total, text):
        if self.bar is None:
            self.bar = click.progressbar(length=total, label="bench", show_pos=True,
                                         item_show_func=lambda t: t, file=sys.stderr)
            self.bar.__enter__()
        self.bar.update(done - self.done, current_item=f"{text} "
                                                      f"[{time.monotonic() - self.t0:.0f} s]")
        self.done = done
        if text == "done":
            self.bar.__exit__(None, None, None)

    def close(self):
        if self.bar is not None and not self.bar.finished:
            self.bar.__exit__(None, None, None)


@click.command("bench")
@click.option("--suite", type=click.Choice(list(SUITES)), default="review", show_default=True)
@click.option("--persona", default="default", show_default=True,
              help="Persona name or file (personas/).")
@click.option("--param", "params", multiple=True, metavar="KEY=VALUE",
              help="Drive configuration override (SocConfig field), e.g. n_channels=2.")
@_scale_options
@click.option("--label", help="Legend label (default: the persona).")
@click.option("--device", metavar="PATH",
              help="Run on a block device or file with the host's fio instead of simulating.")
@click.option("--ioengine", default="io_uring", show_default=True, help="With --device.")
@click.option("--buffered", is_flag=True, help="With --device: direct=0 (files on tmpfs).")
@click.option("--device-size", metavar="BYTES", help="With --device: bytes to use (a file "
              "is created that large), e.g. 64m.")
@click.option("--no-progress", is_flag=True, help="Log lines instead of a progress bar.")
def bench_cmd(suite, persona, params, label, device, ioengine, buffered, device_size,
              no_progress, **opts):
    """Run a workload SUITE (workloads.md) on a persona's simulated drive, or on a device:
    result.json, results.csv, charts/, report.md/.html, jobs/*.fio in the result directory."""
    from sw.ssdlab.bench.session import BenchSpec, bench
    from sw.ssdlab.bench.target import BenchError
    spec = BenchSpec(suite=suite, persona=persona, scale=_scale(opts), profile=opts["profile"],
                     seed=opts["seed"], tests=_tests(suite, opts["tests"]),
                     blocks_per_plane=opts["blocks_per_plane"],
                     pages_per_block=opts["pages_per_block"], pgo=opts["pgo"], device=device,
                     ioengine=ioengine, direct=not buffered,
                     device_size=_size(device_size), label=label, out=opts["out"])
    if device:
        if params:
            raise click.BadParameter("drive parameters apply to the simulated drive only",
                                     param_hint="--param")
    else:
        _check_persona(persona)
        spec.params = _params(params)
    _print_setup(spec, click.echo)
    progress = None if no_progress else _Progress()
    try:
        result, out = bench(spec, progress=progress)
    except BenchError as e:
        if progress:
            progress.close()
        click.echo(f"ssdlab bench: {e}", err=True)
        raise SystemExit(1) from None
    _summary(result, out)


def _size(text):
    if text is None:
        return None
    t = text.strip().lower()
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(t[-1:], 1)
    try:
        n = int(t[:-1] if t[-1:] in "kmg" else t) * mult
    except ValueError:
        n = 0
    if n <= 0:
        raise click.BadParameter(f"{text!r}: a positive size (bytes, or k/m/g)",
                                 param_hint="--device-size")
    return n


def _summary(result, out):
    click.echo(f"\nssdlab bench: {result['suite']} on {result['label']} in "
               f"{result['wall_s']:.0f} s wall ({result['time_domain']} time figures)")
    from sw.ssdlab.bench.charts import value
    from sw.ssdlab.bench.report import ftl_note
    for t in result["tests"]:
        click.echo(f"  {t['title']}")
        for p in t["points"]:
            click.echo(f"    {p['label']:>22} {p['series']:>8}  {value(p, 'iops'):10.1f} IOPS "
                       f"{p['mb_s']:9.2f} {result['units']}  lat {p['lat_mean_us'] or 0:9.1f} "
                       f"us  p99 {p['lat_p99_us'] or 0:9.1f} us"
                       + ("  NOT steady" if (p.get("steady_state") or {}).get("steady") is False
                          else ""))
        if ftl_note(t):
            click.echo(f"    {ftl_note(t)}")
    click.echo(f"result: {out}/result.json, results.csv, charts/, report.md, report.html, jobs/")


@click.command("compare")
@click.argument("results", nargs=-1, required=True)
@click.option("--out", type=click.Path(file_okay=False),
              help="Output directory (default build/bench/compare-<time>).")
def compare_cmd(results, out):
    """Overlay bench RESULTS (result directories or result.json files, two or more) on the
    same charts: charts/, compare.md, compare.csv."""
    from sw.ssdlab.bench.compare import compare
    from sw.ssdlab.bench.results import ResultError
    if len(results) < 2:
        raise click.BadParameter("give two or more results", param_hint="RESULTS")
    if out is None:
        out = Path("build/bench") / f"compare-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        out_dir, charts = compare(results, out)
    except ResultError as e:
        click.echo(f"ssdlab compare: {e}", err=True)
        raise SystemExit(1) from None
    click.echo(f"compare: {len(charts)} chart(s) in {out_dir}/charts, table in "
               f"{out_dir}/compare.md")


@click.command("sweep")
@click.option("--persona", "personas", multiple=True, default=["default"], show_default=True)
@click.option("--param", "params", multiple=True, metavar="KEY=V1,V2",
              help="A grid axis: a drive parameter and its values.")
@click.option("--suite", "suites", multiple=True, type=click.Choice(list(SUITES)),
              default=["qdscan"], show_default=True)
@_scale_options
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Dask LocalCluster worker processes.")
@click.option("--address", help="A Dask scheduler (tcp://host:8786) instead of a local one.")
def sweep_cmd(personas, params, suites, workers, address, **opts):
    """Run the grid personas x parameter values x suites, one bench per cell, on Dask;
    sweep.json, sweep.csv and charts comparing the cells."""
    from sw.ssdlab.bench.session import BenchSpec
    from sw.ssdlab.bench.sweep import grid, run_sweep
    for p in personas:
        _check_persona(p)
    grid_params = _params(params, multi=True)
    cells = grid(list(personas), grid_params, list(suites))
    spec = BenchSpec(scale=_scale(opts), profile=opts["profile"], seed=opts["seed"],
                     tests=_tests(list(suites), opts["tests"]),
                     blocks_per_plane=opts["blocks_per_plane"],
                     pages_per_block=opts["pages_per_block"], pgo=opts["pgo"])
    out = Path(opts["out"] or Path("build/bench") / f"sweep-{time.strftime('%Y%m%d-%H%M%S')}")
    click.echo(f"ssdlab sweep: {len(cells)} cell(s) on "
               f"{address or f'a LocalCluster of {workers} worker(s)'}; scale "
               + ", ".join(f"{k}={v}" for k, v in spec.scale.as_dict().items()))
    doc = run_sweep(spec, cells, out, workers=workers, address=address, echo=click.echo)
    bad = [c for c in doc["cells"] if not c["ok"]]
    click.echo(f"sweep: {len(cells) - len(bad)}/{len(cells)} cells in {doc['wall_s']} s wall; "
               f"{out}/sweep.json, sweep.csv, charts/")
    if bad:
        for c in bad:
            click.echo(f"  {c['name']}: {c['error']}", err=True)
        raise SystemExit(1)


@click.command("fidelity")
@click.option("--persona", "personas", multiple=True,
              help="Only these personas (may repeat; default: every shipped one).")
@_scale_options
@click.option("--device", metavar="TEMPLATE",
              help="Run on files or devices instead of simulated drives; \"{cell}\" in the "
                   "path names the persona (tests the campaign itself).")
@click.option("--device-size", metavar="BYTES", help="With --device: bytes to use.")
@click.option("--dry-run", is_flag=True, help="Print the plan and the limits, run nothing.")
@click.option("--from", "from_dirs", multiple=True,
              type=click.Path(file_okay=False, exists=True),
              help="Tabulate an earlier campaign's directory (its fidelity.json), run nothing; "
                   "may repeat: the campaigns merged, a later one's persona replacing an "
                   "earlier one's.")
@click.option("--readme", is_flag=True,
              help="Write the table into personas/README.md between its fidelity markers.")
def fidelity_cmd(personas, device, device_size, dry_run, from_dirs, readme, **opts):
    """Every shipped persona at its own full channel x way x LUN topology (only capacity
    scaled: --blocks-per-plane, default 16): the `fidelity` suite beside the analytic
    limits; fidelity.json, table.md and each persona's bench result in the output directory.
    Exits 1 when a persona could not be run (its row says why)."""
    from sw.ssdlab.bench import fidelity
    from sw.ssdlab.bench.session import BenchSpec
    if from_dirs:
        docs = [json.loads((Path(d) / "fidelity.json").read_text()) for d in from_dirs]
        out = Path(from_dirs[-1])
        try:
            doc = docs[0] if len(docs) == 1 else fidelity.merge(docs, from_dirs)
        except fidelity.FidelityError as e:
            raise click.UsageError(f"--from: {e}") from None
    else:
        bpp = opts["blocks_per_plane"] or 16
        ppb = opts["pages_per_block"] or 16
        try:
            entries = fidelity.plan(list(personas) or fidelity.shipped(), bpp, ppb)
        except fidelity.FidelityError as e:
            raise click.UsageError(str(e)) from None
        for e in entries:
            lim = e["limits"]
            click.echo(f"{e['persona']}: {e['topology']}, {', '.join(e['parts'])}, "
                       f"{e['onfi']}, {e['host']}; {e['scale']}; limits read "
                       f"{lim['read']} MB/s ({lim['read_bound']}), program {lim['program']} "
                       f"MB/s ({lim['program_bound']})")
        if dry_run:
            return
        spec = BenchSpec(scale=_scale(opts), profile=opts["profile"], seed=opts["seed"],
                         tests=_tests("fidelity", opts["tests"]), blocks_per_plane=bpp,
                         pages_per_block=ppb, pgo=opts["pgo"], device=device, direct=device is None,
                         device_size=_size(device_size))
        out = Path(opts["out"] or Path("build/bench") /
                   f"fidelity-{time.strftime('%Y%m%d-%H%M%S')}")
        doc = fidelity.run_all(spec, entries, out, echo=click.echo)
    text = fidelity.table(doc, base=out)
    (out / "table.md").write_text(text)
    click.echo(text)
    if readme:
        from sw.ssdlab.bench.session import ROOT
        try:
            fidelity.update_readme(ROOT / "personas" / "README.md", text)
        except fidelity.FidelityError as e:
            raise click.ClickException(str(e)) from None
        click.echo("fidelity: table written into personas/README.md")
    click.echo(f"fidelity: {out}/fidelity.json, table.md, <persona>/report.md")
    if not all(p["ok"] for p in doc["personas"]):
        raise SystemExit(1)         # a persona failed, or (with --from) is still pending


def register(main):
    """Add bench, compare, sweep and fidelity to the `ssdlab` command line."""
    main.add_command(bench_cmd)
    main.add_command(compare_cmd)
    main.add_command(sweep_cmd)
    main.add_command(fidelity_cmd)
