# SPDX-License-Identifier: BSD-2-Clause
"""The flows on `ssdlab`'s command line: one front door for every build and check.

    ssdlab elaborate CORE [-p NAME=VALUE ...] [-o FILE] [--hash]   Verilog of a catalogued core
    ssdlab elaborate --all --hash                                  every core's Verilog hash
    ssdlab lint [CORE ...]                                         Verilator -Wall per core
    ssdlab synth [CORE ...] [-p NAME=VALUE] [--family xc7]         Yosys counts per core
    ssdlab synth --soc [--persona P] [--buf-kib N] ...             Yosys counts of the SoC
    ssdlab sim build [--persona P] [--channels N] [--trace]        build the simulated drive
    ssdlab sim run [--persona P] [--socket PATH] ...               build and start it
    ssdlab sim profile [--persona P] [--channels N] [--ways N]     where its wall time goes
    ssdlab board build --board B [--persona P] [--lint]            a card's Verilog/TCL/XDC
    ssdlab board load|flash --board B                              program the card
    ssdlab board synth [--board B ...] [--channels N --ways N]     Yosys counts vs the part
    ssdlab linux [--persona P] [--script FILE | --acceptance]      stock Linux on the drive

The work is in sw/ssdlab/flows/<flow>.py; the Makefile's targets call these commands.
"""

import hashlib
import os
import sys
from pathlib import Path

import click

__all__ = ["register"]


def _params(items):
    from sw.ssdlab.flows.elaborate import parse_params
    try:
        return parse_params(items)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--param") from None


def _core_names():
    from sw.ssdlab.flows.elaborate import CATALOGUE
    return sorted(CATALOGUE)


def _check_cores(names):
    known = _core_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise click.BadParameter(f"unknown core {', '.join(unknown)}; known: "
                                 f"{', '.join(known)}", param_hint="CORE")
    return list(names)


def _verilator():
    from sw.ssdlab.flows.sim_build import verilator
    return verilator()


_PARAM = click.option("-p", "--param", "params", multiple=True, metavar="NAME=VALUE",
                      help="HDL parameter (a Python literal), may repeat.")


@click.command("elaborate")
@click.argument("cores", nargs=-1)
@_PARAM
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path),
              help="Verilog file (default: stdout). One core only.")
@click.option("--all", "every", is_flag=True, help="Every catalogued core (with --hash).")
@click.option("--hash", "as_hash", is_flag=True,
              help="Print each core's SHA-256 instead of its Verilog.")
def elaborate_cmd(cores, params, output, every, as_hash):
    """Elaborate catalogued cores to Verilog with the house boundary (clk, rst)."""
    from sw.ssdlab.flows.elaborate import CATALOGUE
    names = _core_names() if every else _check_cores(cores)
    if not names:
        raise click.UsageError("name a core, or --all (known: " + ", ".join(_core_names()) + ")")
    if (every or len(names) > 1) and not as_hash:
        raise click.UsageError("several cores: use --hash (or name one core)")
    p = _params(params)
    for name in names:
        try:
            text = CATALOGUE[name].with_params(**p).verilog()
        except (TypeError, ValueError) as e:
            raise click.UsageError(f"{name}: {e}") from None
        if as_hash:
            click.echo(f"{hashlib.sha256(text.encode()).hexdigest()}  {name}")
        elif output:
            output.parent.mkdir(parents=True, exist_ok=True)
            output.write_text(text)
        else:
            click.echo(text, nl=False)


@click.command("lint")
@click.argument("cores", nargs=-1)
def lint_cmd(cores):
    """Verilator lint (-Wall) of each catalogued core's Verilog (default: all)."""
    from sw.ssdlab.flows.lint import lint_all
    failed = lint_all(_verilator(), _check_cores(cores))
    if failed:
        raise click.ClickException(f"lint: {failed} core(s) have warnings")


@click.command("synth")
@click.argument("cores", nargs=-1)
@_PARAM
@click.option("--family", default="xc7", show_default=True, help="synth_xilinx -family.")
@click.option("--soc", is_flag=True, help="The whole SoC of a persona instead of cores.")
@click.option("--persona", default="intel-750-400g", show_default=True, help="With --soc.")
@click.option("--buf-kib", type=click.IntRange(min=4), default=1024, show_default=True,
              help="With --soc: on-chip buffer memory.")
@click.option("--tag-width", type=click.IntRange(1, 8), default=3, show_default=True,
              help="With --soc: log2 of the command tags.")
@click.option("--max-transfer-kib", type=click.IntRange(min=4), default=32, show_default=True,
              help="With --soc: MDTS.")
@click.option("--main-ram-kib", type=click.IntRange(min=16), default=256, show_default=True,
              help="With --soc: firmware RAM.")
def synth_cmd(cores, params, family, soc, persona, buf_kib, tag_width, max_transfer_kib,
              main_ram_kib):
    """Yosys synth_xilinx resource counts of catalogued cores (default: all), or --soc."""
    if soc:
        if cores or params:
            raise click.UsageError("--soc takes no CORE or --param")
        from sw.ssdlab.flows.soc_synth import synth_soc
        synth_soc(persona, buf_kib, tag_width, max_transfer_kib, main_ram_kib, family,
                  echo=click.echo)
        return
    from sw.ssdlab.flows.synth import synth_cores
    synth_cores(_check_cores(cores), _params(params), family, echo=click.echo)


# The simulated drive ------------------------------------------------------------------------

@click.group("sim")
def sim_group():
    """The simulated drive (Verilator): build it, run it."""


def _drive_options(f):
    from sw.ssdlab.flows.sim import SIM_SCALE
    for opt in reversed([
            click.option("--persona", default="default", show_default=True),
            click.option("--channels", type=click.IntRange(min=1), help="Override the "
                         "persona's channel count."),
            click.option("--blocks-per-plane", type=click.IntRange(min=1),
                         default=SIM_SCALE["blocks_per_plane"], show_default=True),
            click.option("--pages-per-block", type=click.IntRange(min=1),
                         default=SIM_SCALE["pages_per_block"], show_default=True),
            click.option("--trace", is_flag=True, help="Build with FST tracing."),
            click.option("--sdr-fallback", is_flag=True, help="An NV-DDR2 persona's bus in "
                         "its part's fastest SDR mode (default: NV-DDR2 channels, DQS "
                         "calibration)."),
            click.option("--pgo", is_flag=True, help="Build the model with gcc's profile-"
                         "guided optimisation (a training run; about a minute more, "
                         "drive-<hash>-pgo).")]):
        f = opt(f)
    return f


@sim_group.command("build")
@_drive_options
def sim_build_cmd(persona, channels, blocks_per_plane, pages_per_block, trace, sdr_fallback,
                  pgo):
    """Build the simulated drive of a persona (reused while nothing changed); prints its
    directory."""
    from spec.persona import PersonaError
    from sw.ssdlab.flows.sim import build_drive, drive_config
    params = {"n_channels": channels} if channels else {}
    if sdr_fallback:
        params["sdr_fallback"] = True
    try:
        cfg = drive_config(persona, params,
                           blocks_per_plane=blocks_per_plane, pages_per_block=pages_per_block)
    except (PersonaError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    try:
        click.echo(build_drive(cfg, trace=trace, pgo=pgo))
    except ValueError as e:
        raise click.ClickException(str(e)) from None


@sim_group.command("run")
@_drive_options
@click.option("--host-delay-ns", type=click.IntRange(min=0), default=200, show_default=True)
@click.option("--socket", help="Unix socket (default build/sim/drive.sock).")
def sim_run_cmd(persona, channels, blocks_per_plane, pages_per_block, trace, sdr_fallback, pgo,
                host_delay_ns, socket):
    """Build (when needed) and start the simulated drive; attach with `ssdlab drive --sim`."""
    from spec.persona import PersonaError
    from sw.ssdlab.flows.sim import run_drive
    try:
        run_drive(persona, channels, blocks_per_plane, pages_per_block, host_delay_ns, socket,
                  trace, pgo, sdr_fallback=sdr_fallback)
    except (PersonaError, ValueError) as e:
        raise click.ClickException(str(e)) from None


def _pe_steps(ctx, param, value):
    try:
        steps = [int(v) for v in value.split(",")]
    except ValueError:
        raise click.BadParameter(f"{value!r}: comma-separated P/E counts") from None
    if any(s < 0 or s > 10**7 for s in steps) or steps != sorted(steps):
        raise click.BadParameter(f"{value!r}: P/E counts 0..10^7, not decreasing")
    return steps


@sim_group.command("wearout")
@click.option("--persona", default="crucial-m500-960", show_default=True,
              help="A persona with a BCH code (ecc.scheme bch).")
@click.option("--steps", default="0,3000,10000,20000,23000,26000", show_default=True,
              callback=_pe_steps, help="The P/E counts the NAND is pre-cycled to, in order.")
@click.option("--fill-mib", type=click.IntRange(1, 64), default=4, show_default=True,
              help="Data written once and read back whole at every step.")
@click.option("--bake-hours", type=click.FloatRange(0, 1e6), default=0.0, show_default=True,
              help="A retention bake before each step's reads.")
@click.option("--bench-ios", type=click.IntRange(1), default=200, show_default=True,
              help="QD 1 4 KiB random reads per step (latency percentiles).")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True)
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("build/wearout"), show_default=True,
              help="wearout.json, wearout.md, wearout.png.")
def sim_wearout_cmd(persona, steps, fill_mib, bake_hours, bench_ios, seed, out):
    """A wear-out run: the simulated drive (the persona's ECC, dies flipping bits at their
    part's rates) pre-cycled step by step until its reads fail; raw bit errors, corrected
    bits, retries, refreshes, the first Unrecovered Read Error and SMART (sw/ssdlab/wearout.py)."""
    from spec.persona import PersonaError
    from sw.ssdlab.wearout import run_wearout
    try:
        report = run_wearout(persona, steps, fill_mib, bake_hours, seed, bench_ios, out,
                             log=click.echo)
    except (PersonaError, ValueError) as e:
        raise click.ClickException(str(e)) from None
    click.echo(f"first Unrecovered Read Error: {report['first_ure']}")
    click.echo(f"report: {out}/wearout.md, wearout.json, wearout.png")


def _scaled_drive(f):
    """The options of a drive built to measure it (persona, topology overrides, scale, HDL
    parameters), as `scaled_cfg` takes them."""
    for opt in reversed([
            click.option("--persona", default="default", show_default=True),
            click.option("--channels", type=click.IntRange(1, 18),
                         help="Override the persona's channels."),
            click.option("--ways", type=click.IntRange(1, 8),
                         help="Override the ways per channel."),
            click.option("--blocks-per-plane", type=click.IntRange(min=1), default=16,
                         show_default=True),
            click.option("--pages-per-block", type=click.IntRange(min=1), default=16,
                         show_default=True),
            _PARAM]):
        f = opt(f)
    return f


def _scaled_cfg(persona, channels, ways, blocks_per_plane, pages_per_block, params):
    from spec.persona import PersonaError
    from sw.ssdlab.flows.sim import drive_config
    p = _params(params)
    if channels:
        p["n_channels"] = channels
    if ways:
        p["n_ways"] = ways
    try:
        return drive_config(persona, p or None, blocks_per_plane=blocks_per_plane,
                            pages_per_block=pages_per_block)
    except (PersonaError, ValueError, TypeError) as e:
        raise click.ClickException(str(e)) from None


@sim_group.command("profile")
@_scaled_drive
@click.option("--fill-kib", type=click.IntRange(min=128), default=1024, show_default=True,
              help="Sequential fill (128 KiB writes, QD 8), a multiple of 128; the reads' "
                   "region.")
@click.option("--write-ios", type=click.IntRange(min=0), default=48, show_default=True,
              help="128 KiB sequential writes at QD 8 after the fill.")
@click.option("--read-ios", type=click.IntRange(min=0), default=800, show_default=True,
              help="4 KiB random reads at QD 32 over the region.")
@click.option("--no-perf", is_flag=True, help="Speed only, no perf record.")
@click.option("--binary", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Run this harness binary of the same configuration instead of the "
                   "profiling build's (e.g. the normal build's, for its speed).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="perf.data, perf_report.txt, profile.json (default <build>/profile).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sim_profile_cmd(persona, channels, ways, blocks_per_plane, pages_per_block, params,
                    fill_kib, write_ios, read_ios, no_perf, binary, out, as_json):
    """Profile the simulated drive: a fixed workload under perf; the wall time's shares per
    Verilated module, die models, harness, host; cycles, simulated time and I/Os per second."""
    import json

    from sw.ssdlab.flows.sim import build_drive
    from sw.ssdlab.flows.sim_profile import format_report, profile
    if fill_kib % 128:
        raise click.BadParameter(f"{fill_kib} is not a multiple of 128", param_hint="--fill-kib")
    cfg = _scaled_cfg(persona, channels, ways, blocks_per_plane, pages_per_block, params)
    build = build_drive(cfg, profile=True)
    r = profile(build, out_dir=out, use_perf=not no_perf, binary=binary, fill_kib=fill_kib,
                write_ios=write_ios, read_ios=read_ios)
    click.echo(json.dumps(r, indent=2) if as_json else format_report(r))


@sim_group.command("fw-profile")
@_scaled_drive
@click.option("--workload", type=click.Choice(["randwrite", "randread", "seqwrite", "seqread"]),
              default="randwrite", show_default=True)
@click.option("--qd", type=click.IntRange(1, 1023), default=32, show_default=True)
@click.option("--ios", type=click.IntRange(min=1), default=1000, show_default=True)
@click.option("--io-kib", type=click.IntRange(min=4), default=4, show_default=True)
@click.option("--region-mib", type=click.IntRange(min=1), default=8, show_default=True,
              help="The LBAs the I/Os go to, filled first (128 KiB writes, QD 8).")
@click.option("--no-fill", is_flag=True, help="Skip the fill.")
@click.option("--seed", type=int, default=1, show_default=True)
@click.option("--top", type=click.IntRange(min=1), default=30, show_default=True,
              help="Functions and source lines listed.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="fw_profile.txt, the harness's PC counts (default <build>/fw_profile).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def sim_fw_profile_cmd(persona, channels, ways, blocks_per_plane, pages_per_block, params,
                       workload, qd, ios, io_kib, region_mib, no_fill, seed, top, out, as_json):
    """Where the firmware's CPU cycles go on one workload: each clocked cycle counted for the
    function (and source line) in the soft CPU's memory stage, instructions retired beside,
    per I/O; the time the CPU stalled in its wait apart."""
    import json

    from sw.ssdlab.flows.fw_profile import format_report, profile_window
    from sw.ssdlab.flows.sim import build_drive
    cfg = _scaled_cfg(persona, channels, ways, blocks_per_plane, pages_per_block, params)
    build = build_drive(cfg)
    r = profile_window(build, workload, qd=qd, n_ios=ios, io_kib=io_kib, region_mib=region_mib,
                       fill=not no_fill, seed=seed, out_dir=out)
    click.echo(json.dumps(r, indent=2) if as_json else format_report(r, top=top))


# Boards ---------------------------------------------------------------------------------------

def _board_choice():
    from soc.targets import BOARDS
    return click.Choice(list(BOARDS))


@click.group("board")
def board_group():
    """PCIe FPGA cards (soc/targets): build, load, flash, synth."""


@board_group.command("build")
@click.option("--board", required=True, type=_board_choice())
@click.option("--persona", help="Drive persona (default: default).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              help="Default build/boards/<board>.")
@click.option("--no-firmware", is_flag=True, help="Leave the ROM empty (no RISC-V compiler).")
@click.option("--lint", "lint_top", is_flag=True, help="Also lint the top with Verilator.")
@click.option("--no-vivado", is_flag=True, help="Stop after generating.")
@click.option("--update-constraints", is_flag=True,
              help="Rewrite constraints/<board>/ from the target (then commit them).")
def board_build_cmd(board, persona, out, no_firmware, lint_top, no_vivado, update_constraints):
    """A card's Verilog, Vivado TCL and constraints; the bitstream where Vivado is."""
    from sw.ssdlab.flows.board import build_board
    if lint_top:
        os.environ.setdefault("VERILATOR", _verilator())
    sys.exit(build_board(board, persona, out, firmware=not no_firmware, lint_top=lint_top,
                         vivado=not no_vivado, update_constraints=update_constraints))


@board_group.command("load")
@click.option("--board", required=True, type=_board_choice())
@click.option("--out", type=click.Path(file_okay=False, path_type=Path))
def board_load_cmd(board, out):
    """Load the built bitstream into the card over JTAG."""
    from sw.ssdlab.flows.board import program
    sys.exit(program(board, out))


@board_group.command("flash")
@click.option("--board", required=True, type=_board_choice())
@click.option("--out", type=click.Path(file_okay=False, path_type=Path))
def board_flash_cmd(board, out):
    """Write the built bitstream to the card's configuration flash."""
    from sw.ssdlab.flows.board import program
    sys.exit(program(board, out, flash=True))


@board_group.command("synth")
@click.option("--board", "boards", multiple=True, type=_board_choice(),
              help="May repeat (default: every board, one after the other).")
@click.option("--channels", type=click.IntRange(min=1), help="Override the channel count.")
@click.option("--ways", type=click.IntRange(min=1), help="Override the ways per channel.")
@click.option("--persona")
@click.option("--yosys-opts", default="", help='Extra synth_xilinx options, e.g. "-nolutram".')
@click.option("--hierarchical", is_flag=True,
              help="Keep the module hierarchy (each module synthesised once, every instance "
                   "counted): arrays too big to flatten in YoWASP's 4 GiB.")
def board_synth_cmd(boards, channels, ways, persona, yosys_opts, hierarchical):
    """Yosys resource estimate of each board's whole SoC against its part."""
    from soc.targets import BOARDS
    from sw.ssdlab.flows.board_synth import synth_board, table
    reports = []
    for name in boards or BOARDS:
        reports.append(synth_board(name, channels, ways, persona, yosys_opts,
                                   flatten=not hierarchical))
        click.echo(table(reports[-1:]).splitlines()[-1])
    click.echo(table(reports))


@click.command("linux")
@click.option("--persona", default="default", show_default=True)
@click.option("--channels", type=click.IntRange(1, 32), help="Override the persona's channels.")
@click.option("--script", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Run this shell script in the guest (its exit status is this command's); "
                   "without it, a shell on this terminal.")
@click.option("--acceptance", is_flag=True,
              help="sw/linux/acceptance.sh: nvme-cli, fio, ext4, a power cycle, checksums.")
@click.option("--power-cut", is_flag=True,
              help="With --acceptance: cut the drive's power between the boots instead of a "
                   "clean power cycle.")
@click.option("--guest-ram-mib", type=click.IntRange(256, 2048), default=512, show_default=True,
              help="The guest's RAM (the harness's host RAM file; under q35's 2.75 GiB hole).")
@click.option("--timeout-min", type=click.IntRange(1), default=60, show_default=True,
              help="Wall-time limit per boot.")
def linux_cmd(persona, channels, script, acceptance, power_cut, guest_ram_mib, timeout_min):
    """A virtual machine's stock Linux (Debian's kernel and nvme driver, nvme-cli, fio,
    e2fsprogs) on the simulated drive through QEMU's vfio-user-pci (sw/ssdlab/flows/linux.py,
    sim/vm_bridge/README.md)."""
    from spec.persona import PersonaError
    from sw.ssdlab.flows.linux import run_acceptance, run_linux
    if script and acceptance:
        raise click.BadParameter("give --script or --acceptance, not both",
                                 param_hint="--script")
    if power_cut and not acceptance:
        raise click.BadParameter("only with --acceptance", param_hint="--power-cut")
    try:
        if acceptance:
            first, second = run_acceptance(persona, guest_ram_mib, channels, power_cut,
                                           timeout_min * 60)
            runs = [r for r in (first, second) if r]
            for i, r in enumerate(runs, 1):
                click.echo(f"linux: phase {i}: exit {r.exit_status}, {r.wall_s:.0f} s of wall "
                           "time; drive: " + _server_figures(r.server_log))
            failed = sum(1 for r in runs for line in r.console.splitlines()
                         if line.startswith("FAIL "))
            ok = second is not None and all(r.exit_status == 0 for r in runs)
            click.echo(f"linux: acceptance {'passed' if ok else 'FAILED'} "
                       f"({failed} failed checks)")
            sys.exit(0 if ok else 1)
        r = run_linux(persona, str(script) if script else None, guest_ram_mib, channels,
                      timeout_min * 60)
        if script:
            click.echo(f"linux: script exit {r.exit_status}, {r.wall_s:.0f} s of wall time; "
                       "drive: " + _server_figures(r.server_log))
            sys.exit(1 if r.exit_status is None else r.exit_status)
    except (PersonaError, ValueError, RuntimeError) as e:
        raise click.ClickException(str(e)) from None


def _server_figures(server_log):
    """The vfio-user server's closing line (simulated time, MMIO, interrupts)."""
    lines = [x for x in server_log.splitlines() if " us simulated" in x]
    return lines[-1].split(": ", 1)[-1] if lines else "(no figures: the server did not finish)"


def register(main):
    """Add the flows to the `ssdlab` command line."""
    for cmd in (elaborate_cmd, lint_cmd, synth_cmd, sim_group, board_group, linux_cmd):
        main.add_command(cmd)
