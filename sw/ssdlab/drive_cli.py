# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab drive ...`: a running simulation (--sim SOCKET) or a card (--vfio PCI_ADDR) as an
NVMe drive, through libssdlab (sw/lib, via sw/ssdlab/drive.py):

    python -m sw.ssdlab drive identify --sim build/sim/drive.sock
    python -m sw.ssdlab drive write  --lba 0 --count 256 --pattern seed:7
    python -m sw.ssdlab drive verify --lba 0 --count 256 --pattern seed:7
    python -m sw.ssdlab drive trim   --lba 0 --count 64
    python -m sw.ssdlab drive verify --lba 0 --count 64 --pattern zero
    python -m sw.ssdlab drive smart-log --json
    python -m sw.ssdlab drive power-cycle; python -m sw.ssdlab drive stats

Without --sim/--vfio the socket comes from $SSDLAB_SIM_SOCKET. Figures are in simulated time
on a simulation (the transport's clock), in wall time on a card. Exit status: 0 success, 1 the
drive or transport failed (or verify found mismatches), 2 a usage error.
"""

import functools
import json
import os
import re
import sys

import click

from sw.ssdlab import simspeed

__all__ = ["drive", "register", "PatternType", "PciAddress"]

PCI_RE = re.compile(r"^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[01][0-9a-fA-F]\.[0-7]$")


class PatternType(click.ParamType):
    """seed:N | zero | byte:V, checked at parse time."""
    name = "PATTERN"

    def convert(self, value, param, ctx):
        from sw.ssdlab.drive import Pattern
        if isinstance(value, Pattern):
            return value
        try:
            return Pattern(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class PciAddress(click.ParamType):
    name = "PCI_ADDR"

    def convert(self, value, param, ctx):
        if not PCI_RE.match(value):
            self.fail(f"{value!r} is not a PCI address like 0000:01:00.0", param, ctx)
        return value if value.count(":") == 2 else "0000:" + value


def _device_options(f):
    @click.option("--sim", "sim", metavar="SOCKET", default=None,
                  help="The simulation harness's socket (default: $SSDLAB_SIM_SOCKET).")
    @click.option("--vfio", "vfio", type=PciAddress(), default=None,
                  help="A card bound to vfio-pci, e.g. 0000:01:00.0.")
    @click.option("--irq", is_flag=True, help="Complete by interrupts instead of polling.")
    @click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
    @click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                  metavar="S", help="Per-command timeout in seconds of transport time "
                  "(default: Linux's, 60 admin / 30 I/O).")
    @click.option("--trace", is_flag=True,
                  help="Log every bridge request and reply to stderr (sim; SSDLAB_SIM_TRACE=1).")
    @functools.wraps(f)
    def wrapper(*args, sim, vfio, irq, as_json, trace, timeout, **kwargs):
        if trace:
            os.environ["SSDLAB_SIM_TRACE"] = "1"
        if sim and vfio:
            raise click.UsageError("give --sim or --vfio, not both")
        if not sim and not vfio:
            sim = os.environ.get("SSDLAB_SIM_SOCKET")
            if not sim:
                raise click.UsageError("no device: give --sim SOCKET or --vfio PCI_ADDR (or set "
                                       "SSDLAB_SIM_SOCKET)")
        dev = {"sim": sim, "vfio": vfio, "irq": irq, "timeout": timeout}
        return f(*args, dev=dev, as_json=as_json, **kwargs)
    return wrapper


def _range_options(f):
    f = click.option("--count", type=click.IntRange(min=1), required=True,
                     help="Number of logical blocks (>= 1).")(f)
    f = click.option("--lba", type=click.IntRange(min=0), required=True,
                     help="First logical block (>= 0).")(f)
    return f


def _open(dev):
    from sw.ssdlab.drive import Drive, DriveError
    try:
        t = dev.get("timeout")
        return Drive(sim=dev["sim"], vfio=dev["vfio"], irq=dev["irq"],
                     admin_timeout_s=t or 60.0, io_timeout_s=t or 30.0)
    except DriveError as e:
        _fail(e)


def _fail(e):
    click.echo(f"error: {e}", err=True)
    sys.exit(1)


def _run(dev, fn):
    """Open the drive, run fn(drive), close it; drive errors exit 1 with the message."""
    from sw.ssdlab.drive import DriveError
    d = _open(dev)
    try:
        with d:
            return fn(d)
    except DriveError as e:
        _fail(e)


def _check_range(d, lba, count):
    n = d.info()["ns_blocks"]
    if lba + count > n:
        raise click.BadParameter(f"--lba {lba} --count {count} reaches past the end of namespace "
                                 f"1 ({n} blocks)", param_hint="'--lba'/'--count'")


def _chunks(d, lba, count):
    info = d.info()
    if not info["lba_bytes"]:
        raise click.ClickException("namespace 1 does not exist (Identify: NN = 0)")
    per = max(1, info["max_transfer"] // info["lba_bytes"])
    while count:
        n = min(per, count)
        yield lba, n
        lba += n
        count -= n


def _figures(d, t0, nbytes, ncmds):
    ns = d.time_ns() - t0
    out = {"time_ns": ns, "clock": "simulated" if d.simulated else "wall", "bytes": nbytes,
           "commands": ncmds}
    if ns:
        out["mb_per_s"] = nbytes / ns * 1e3
        out["iops"] = ncmds / ns * 1e9
    return out


def _fig_text(f):
    if not f["time_ns"]:
        return f"{f['bytes']} bytes in {f['commands']} commands"
    return (f"{f['bytes']} bytes in {f['commands']} commands, {f['time_ns'] / 1e3:.1f} us "
            f"{f['clock']} time: {f['mb_per_s']:.1f} MB/s, {f['iops']:.0f} IOPS")


def _emit(as_json, obj, text):
    click.echo(json.dumps(obj, indent=2) if as_json else text)


@click.group()
def drive():
    """An NVMe drive through libssdlab: a simulation (--sim) or a card (--vfio)."""


@drive.command()
@_device_options
def identify(dev, as_json):
    """Identify Controller and Namespace 1."""
    def go(d):
        i = d.info()
        i["cap"] = f"0x{i['cap']:016x}"
        i["capacity_bytes"] = i["ns_blocks"] * i["lba_bytes"]
        return i
    i = _run(dev, go)
    text = "\n".join([
        f"model       {i['model']}", f"serial      {i['serial']}",
        f"firmware    {i['firmware']}", f"vendor id   0x{i['vid']:04x}",
        f"NVMe        {i['version']}  CAP {i['cap']}",
        f"max xfer    {i['max_transfer']} bytes (MDTS)",
        f"namespaces  {i['nn']}  ONCS 0x{i['oncs']:04x}  VWC {i['vwc']}",
        f"namespace 1 {i['ns_blocks']} x {i['lba_bytes']} B = {i['capacity_bytes'] / 1e9:.3f} GB"
        f" (capacity {i['ns_capacity']}, used {i['ns_used']})",
        f"queues      {i['n_io_queues']} I/O x {i['io_depth']}, "
        f"{'interrupts' if i['use_irq'] else 'polling'}, {i['n_vectors']} vector(s), "
        f"transport {i['transport']}"])
    _emit(as_json, i, text)


@drive.command("smart-log")
@_device_options
def smart_log(dev, as_json):
    """SMART / Health Information (log page 02h)."""
    s = _run(dev, lambda d: d.smart_log())
    lines = [f"{k:28} {v}" for k, v in s.items()]
    lines.insert(1, f"{'temperature':28} {s['temperature_k'] - 273} C")
    for k in ("data_units_read", "data_units_written"):
        lines.append(f"{k + ' (bytes)':28} {s[k] * 512000}")
    _emit(as_json, s, "\n".join(lines))


@drive.command("format")
@_device_options
@click.option("--lbaf", type=click.IntRange(0, 15), default=0, show_default=True,
              help="LBA format index.")
@click.option("--ses", type=click.IntRange(0, 2), default=0, show_default=True,
              help="Secure erase: 0 none, 1 user data, 2 cryptographic.")
@click.option("--yes", is_flag=True, help="Really erase namespace 1.")
def format_(dev, as_json, lbaf, ses, yes):
    """Format NVM namespace 1 (erases it)."""
    if not yes:
        raise click.UsageError("format erases every block of namespace 1: add --yes")

    def go(d):
        t0 = d.time_ns()
        d.format(lbaf=lbaf, ses=ses)
        return {"lbaf": lbaf, "ses": ses, "time_ns": d.time_ns() - t0,
                "clock": "simulated" if d.simulated else "wall",
                "ns_blocks": d.info()["ns_blocks"], "lba_bytes": d.info()["lba_bytes"]}
    r = _run(dev, go)
    _emit(as_json, r, f"formatted namespace 1 (LBA format {lbaf}, SES {ses}) in "
          f"{r['time_ns'] / 1e3:.1f} us {r['clock']} time: {r['ns_blocks']} x "
          f"{r['lba_bytes']} B")


@drive.command()
@_device_options
@_range_options
@click.option("--pattern", type=PatternType(), default="seed:0", show_default=True,
              help="Data: seed:N, zero or byte:V.")
@click.option("--input", "input_", type=click.File("rb"), default=None,
              help="Write this file's bytes instead of a pattern.")
@click.option("--unchecked", is_flag=True,
              help="Send even past the namespace's end (to test the drive's answer).")
def write(dev, as_json, lba, count, pattern, input_, unchecked):
    """Write COUNT blocks from LBA."""
    blob = input_.read() if input_ else None

    def go(d):
        if not unchecked:
            _check_range(d, lba, count)
        lb = d.info()["lba_bytes"]
        if blob is not None and len(blob) != count * lb:
            raise click.BadParameter(f"{len(blob)} bytes, but --count {count} x {lb} B = "
                                     f"{count * lb}", param_hint="'--input'")
        t0, n = d.time_ns(), 0
        for first, k in _chunks(d, lba, count):
            if blob is not None:
                data = blob[(first - lba) * lb:(first - lba + k) * lb]
            else:
                data = pattern.data(first, k, lb)
            d.write(first, data)
            n += 1
        return _figures(d, t0, count * lb, n)
    f = _run(dev, go)
    f.update(lba=lba, count=count, pattern=None if input_ else pattern.spec)
    _emit(as_json, f, f"wrote LBA {lba}..{lba + count - 1}: {_fig_text(f)}")


@drive.command()
@_device_options
@_range_options
@click.option("--output", type=click.File("wb"), default=None,
              help="Write the data here (default: a hex dump of the first block).")
@click.option("--unchecked", is_flag=True, help="Send even past the namespace's end.")
def read(dev, as_json, lba, count, output, unchecked):
    """Read COUNT blocks from LBA."""
    def go(d):
        if not unchecked:
            _check_range(d, lba, count)
        t0, n, parts = d.time_ns(), 0, []
        for first, k in _chunks(d, lba, count):
            parts.append(d.read(first, k))
            n += 1
        return _figures(d, t0, sum(map(len, parts)), n), b"".join(parts)
    f, data = _run(dev, go)
    f.update(lba=lba, count=count)
    if output:
        output.write(data)
    if as_json:
        click.echo(json.dumps(f, indent=2))
        return
    click.echo(f"read LBA {lba}..{lba + count - 1}: {_fig_text(f)}")
    if not output:
        for off in range(0, min(len(data), 256), 16):
            row = data[off:off + 16]
            click.echo(f"{off:08x}  {row.hex(' ')}")


@drive.command()
@_device_options
@_range_options
def trim(dev, as_json, lba, count):
    """Deallocate COUNT blocks from LBA (Dataset Management, AD)."""
    def go(d):
        _check_range(d, lba, count)
        t0 = d.time_ns()
        d.trim(lba, count)
        return _figures(d, t0, 0, 1)
    f = _run(dev, go)
    f.update(lba=lba, count=count)
    _emit(as_json, f, f"deallocated LBA {lba}..{lba + count - 1} in {f['time_ns'] / 1e3:.1f} us "
          f"{f['clock']} time")


@drive.command()
@_device_options
@_range_options
@click.option("--pattern", type=PatternType(), default="seed:0", show_default=True,
              help="Expected data: seed:N, zero (e.g. after trim) or byte:V.")
def verify(dev, as_json, lba, count, pattern):
    """Read COUNT blocks from LBA and compare them with PATTERN."""
    def go(d):
        _check_range(d, lba, count)
        lb = d.info()["lba_bytes"]
        t0, n, bad = d.time_ns(), 0, []
        for first, k in _chunks(d, lba, count):
            bad += pattern.mismatches(first, d.read(first, k), lb)
            n += 1
        return _figures(d, t0, count * lb, n), bad
    f, bad = _run(dev, go)
    f.update(lba=lba, count=count, pattern=pattern.spec, mismatches=len(bad),
             mismatched_lbas=bad[:64])
    if as_json:
        click.echo(json.dumps(f, indent=2))
    elif bad:
        shown = ", ".join(map(str, bad[:10])) + (" ..." if len(bad) > 10 else "")
        click.echo(f"verify LBA {lba}..{lba + count - 1} against {pattern.spec}: {len(bad)} "
                   f"block(s) differ: {shown}")
    else:
        click.echo(f"verify LBA {lba}..{lba + count - 1} against {pattern.spec}: all {count} "
                   f"blocks match; {_fig_text(f)}")
    if bad:
        sys.exit(1)


@drive.command()
@_device_options
def flush(dev, as_json):
    """Flush the volatile write cache."""
    def go(d):
        t0 = d.time_ns()
        d.flush()
        return _figures(d, t0, 0, 1)
    f = _run(dev, go)
    _emit(as_json, f, f"flushed in {f['time_ns'] / 1e3:.1f} us {f['clock']} time")


@drive.command()
@_device_options
@click.option("--rw", type=click.Choice(["read", "write", "randread", "randwrite"]),
              default="randread", show_default=True, help="Access pattern.")
@click.option("--bs", type=click.IntRange(min=1), default=4096, show_default=True,
              help="Bytes per I/O (a multiple of the LBA size, at most MDTS).")
@click.option("--qd", type=click.IntRange(1, 4095), default=1, show_default=True,
              help="I/Os kept in flight.")
@click.option("--ios", type=click.IntRange(min=1), default=1000, show_default=True,
              help="I/Os to complete.")
@click.option("--lba", type=click.IntRange(min=0), default=0, show_default=True,
              help="First LBA of the region.")
@click.option("--count", type=click.IntRange(min=0), default=0,
              help="Blocks in the region (default: to the end of the namespace).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Random offsets and write data (seed:N pattern, verifiable).")
def bench(dev, as_json, rw, bs, qd, ios, lba, count, seed):
    """A fixed-queue-depth workload; IOPS, MB/s and latency in simulated time on a sim."""
    import time as _time

    def go(d):
        info = d.info()
        if bs % info["lba_bytes"] or bs > info["max_transfer"]:
            raise click.BadParameter(f"{bs} is not a multiple of the {info['lba_bytes']}-byte "
                                     f"LBA up to the {info['max_transfer']}-byte MDTS",
                                     param_hint="'--bs'")
        if info["io_depth"] - 1 < qd:
            raise click.BadParameter(f"{qd} commands in flight, but the drive's I/O queue has "
                                     f"{info['io_depth']} entries and holds at most "
                                     f"{info['io_depth'] - 1}", param_hint="'--qd'")
        before = d.stats() if d.simulated else {}
        w0 = _time.monotonic()
        r = d.bench(write=rw.endswith("write"), random=rw.startswith("rand"),
                    io_blocks=bs // info["lba_bytes"], qd=qd, n_ios=ios, lba_first=lba,
                    lba_count=count, seed=seed)
        wall = _time.monotonic() - w0
        after = d.stats() if d.simulated else {}
        r["config"] = {"rw": rw, "bs": bs, "qd": qd, "ios": ios, "lba": lba,
                       "count": count or info["ns_blocks"] - lba, "seed": seed,
                       "transport": info["transport"], "model": info["model"],
                       "firmware": info["firmware"], "irq": info["use_irq"],
                       "clock": "simulated" if d.simulated else "wall"}
        r["wall_s"] = wall
        if after:
            sp = simspeed.speed(simspeed.mark(before), simspeed.mark(after), wall, r["ios"])
            r["sim_speed"] = sp
            r["sim_cycles"] = sp["cycles"]
            r["sim_cycles_per_wall_s"] = sp["cycles_per_s"]
            r["ios_per_wall_s"] = sp["ios_per_s"]
        return r
    r = _run(dev, go)
    ns = r["elapsed_ns"] or 1
    r["iops"] = r["ios"] / ns * 1e9
    r["mb_per_s"] = r["bytes"] / ns * 1e3
    if as_json:
        click.echo(json.dumps(r, indent=2))
    else:
        c = r["config"]
        click.echo(f"{c['rw']} bs={c['bs']} qd={c['qd']} ios={c['ios']} LBA {c['lba']} + "
                   f"{c['count']} seed={c['seed']} on {c['model']} ({c['transport']}, "
                   f"{'interrupts' if c['irq'] else 'polling'})")
        click.echo(f"  {r['iops']:.0f} IOPS, {r['mb_per_s']:.1f} MB/s over "
                   f"{r['elapsed_ns'] / 1e3:.1f} us {c['clock']} time")
        click.echo("  latency us: " + ", ".join(
            f"{k} {r['lat_' + k + '_ns'] / 1e3:.2f}" for k in ("min", "mean", "p50", "p99",
                                                               "p999", "max")))
        if "sim_cycles" in r:
            click.echo(f"  simulation: {r['sim_cycles']} cycles in {r['wall_s']:.2f} s wall "
                       f"({simspeed.text(r['sim_speed'])})")
        if r["errors"]:
            click.echo(f"  {r['errors']} I/O error(s), first: {r['first_error']}")
    if r["errors"]:
        sys.exit(1)


def _transport(dev, fn):
    from sw.ssdlab.drive import DriveError, Transport
    try:
        with Transport(sim=dev["sim"], vfio=dev["vfio"]) as t:
            return fn(t)
    except DriveError as e:
        _fail(e)


@drive.command()
@_device_options
def stats(dev, as_json):
    """Transport statistics (sim: cycles, MSIs, DMA writes, simulated time, harness keys)."""
    s = _transport(dev, lambda t: t.stats())
    _emit(as_json, s, "\n".join(f"{k:16} {v}" for k, v in s.items()))


@drive.command("power-cycle")
@_device_options
def power_cycle(dev, as_json):
    """Power-cycle the device (sim: SB_RESET keeps NAND and host RAM; vfio: function reset)."""
    _transport(dev, lambda t: t.power_cycle())
    _emit(as_json, {"power_cycle": True}, "power cycled")


@drive.command()
@click.argument("hours", type=click.FloatRange(0.001, 1e6))
@_device_options
def bake(dev, as_json, hours):
    """A retention bake of the simulated drive's NAND (sim only): every programmed page ages
    HOURS at once (0.001 .. 1e6), so its raw bit errors grow as the part's model says
    (spec/nand_errors.py); no simulated time passes."""
    if dev["vfio"]:
        raise click.UsageError("bake ages a simulated drive's NAND: it takes --sim, not --vfio")
    n = _transport(dev, lambda t: t.bake(hours))
    _emit(as_json, {"bake_hours": hours, "dies": n},
          f"baked {n} dies {hours:g} hours" if n else
          "nothing baked: this drive's NAND (the emulator) does not age")


@drive.command()
@click.argument("cycles", type=click.IntRange(1, 10**7))
@_device_options
def precycle(dev, as_json, cycles):
    """Pre-cycle the simulated drive's NAND (sim only): every block of every die takes CYCLES
    more P/E cycles at once (1 .. 10^7), as a lab pre-cycles parts on a tester before a
    wear-out test. Raw bit errors grow as the part's model says (spec/nand_errors.py) and
    erases fail at its P/E limit sooner; the firmware's erase counts (SMART's Percentage
    Used) do not see it."""
    if dev["vfio"]:
        raise click.UsageError("precycle wears a simulated drive's NAND: it takes --sim, "
                               "not --vfio")
    n = _transport(dev, lambda t: t.precycle(cycles))
    _emit(as_json, {"precycle_cycles": cycles, "dies": n},
          f"pre-cycled {n} dies {cycles} P/E cycles" if n else
          "nothing pre-cycled: this drive's NAND (the emulator) does not wear")


def _die_options(f):
    """--channel, --way, --lun: the die (LUN) a fault is injected into."""
    for opt in reversed([
            click.option("--channel", type=click.IntRange(0, 255), required=True),
            click.option("--way", type=click.IntRange(0, 255), default=0, show_default=True,
                         help="chip enable on the channel"),
            click.option("--lun", type=click.IntRange(0, 255), default=0, show_default=True)]):
        f = opt(f)
    return f


def _inject(dev, as_json, command, call, record, done):
    """A fault injected into a simulated drive: `call(transport)` -> injected; the JSON
    record and the text when it was."""
    if dev["vfio"]:
        raise click.UsageError(f"{command} injects into a simulated drive: it takes --sim, "
                               "not --vfio")
    ok = _transport(dev, call)
    _emit(as_json, {**record, "injected": ok}, done if ok else
          "nothing injected: this drive's NAND (the emulator) has no die models")


@drive.command("bad-block")
@_die_options
@click.option("--block", type=click.IntRange(0), required=True,
              help="block of the LUN (the plane in its low bits)")
@_device_options
def bad_block(dev, as_json, channel, way, lun, block):
    """Fault injection: a grown bad block. From now on every program and erase of that block
    fails (its FAIL status bit), as a worn-out block's does; the firmware retires it, and
    SMART's Available Spare shows it. A simulated drive's die models take it from the
    harness; the NAND emulator (a card without NAND chips, --vfio, or a simulated drive built
    with it) from the firmware, by ssdlab's admin C1h (this opens the controller)."""
    via = "die model"
    if dev["vfio"] or not _transport(dev, lambda t: t.bad_block(channel, way, lun, block)):
        _run(dev, lambda d: d.bad_block(channel, way, lun, block))
        via = "NAND emulator"
    _emit(as_json, {"bad_block": dict(channel=channel, way=way, lun=lun, block=block),
                    "injected": True, "via": via},
          f"channel {channel} way {way} LUN {lun} block {block}: grown bad ({via})")


@drive.command("pe-count")
@_die_options
@click.option("--block", type=click.IntRange(0), required=True,
              help="block of the LUN (the plane in its low bits)")
@click.option("--count", type=click.IntRange(0, 2**20 - 1), required=True,
              help="the block's P/E count from now on")
@_device_options
def pe_count(dev, as_json, channel, way, lun, block, count):
    """Fault injection (the NAND emulator: a card without NAND chips, or a simulated drive
    built with it): set a block's P/E count, e.g. to the P/E limit (pe-limit) so that its
    next erase fails and the block goes bad, as a worn-out block's does. Through the
    firmware (ssdlab's admin C1h); a drive without the emulator refuses it."""
    _run(dev, lambda d: d.pe_count(channel, way, lun, block, count))
    _emit(as_json, {"pe_count": dict(channel=channel, way=way, lun=lun, block=block,
                                     count=count), "injected": True},
          f"channel {channel} way {way} LUN {lun} block {block}: P/E count {count}")


@drive.command("pe-limit")
@click.argument("limit", type=click.IntRange(0, 2**20 - 1))
@_device_options
def pe_limit(dev, as_json, limit):
    """Fault injection (the NAND emulator, as pe-count): every block's P/E limit, LIMIT
    (0: none, the default). An erase that takes a block's P/E count past it fails and the
    block goes bad. The SoC's register: a power cycle clears it."""
    _run(dev, lambda d: d.pe_limit(limit))
    _emit(as_json, {"pe_limit": limit, "injected": True},
          f"P/E limit {limit}" if limit else "no P/E limit")


@drive.command("bit-errors")
@_die_options
@click.option("--rber", type=click.FloatRange(0, 0.5), required=True,
              help="bits flipped per bit read, on top of the die's own (0 ends the fault)")
@_device_options
def bit_errors(dev, as_json, channel, way, lun, rber):
    """Fault injection (sim only): a degraded die. From now on every read of that LUN flips
    bits at RBER more, drawn afresh at each read; the ECC corrects them while a codeword
    holds no more than t (vendor log C0h: corrected reads, the most bits), past that the
    read fails after read retry: an Unrecovered Read Error."""
    _inject(dev, as_json, "bit-errors", lambda t: t.bit_errors(channel, way, lun, rber),
            {"bit_errors": dict(channel=channel, way=way, lun=lun, rber=rber)},
            f"channel {channel} way {way} LUN {lun}: reads flip bits at {rber:g} more")


@drive.command("die-fail")
@_die_options
@_device_options
def die_fail(dev, as_json, channel, way, lun):
    """Fault injection (sim only): a whole die fails. From now on every program and erase of
    that LUN fails and every read returns noise; the firmware declares the die failed (SMART
    Critical Warning: reliability degraded), its data is lost (Unrecovered Read Errors) and
    no write goes to it again."""
    _inject(dev, as_json, "die-fail", lambda t: t.die_fail(channel, way, lun),
            {"die_fail": dict(channel=channel, way=way, lun=lun)},
            f"channel {channel} way {way} LUN {lun}: failed")


@drive.command("stuck-busy")
@_die_options
@click.option("--for-good", is_flag=True,
              help="the die never comes back (else a RESET or a power cut brings it back)")
@_device_options
def stuck_busy(dev, as_json, channel, way, lun, for_good):
    """Fault injection (sim only): a hung die. From its next busy period on, that LUN's R/B#
    stays low (busy); the back end gives its op up after the busy timeout and fences the
    die, the firmware takes it out of service (SMART Critical Warning: reliability
    degraded; vendor log C0h flash_timeouts), its data rebuilt from die parity where the
    drive has it, else Unrecovered Read Errors. The next boot's RESET brings back a die
    that hung until a RESET."""
    _inject(dev, as_json, "stuck-busy", lambda t: t.stuck_busy(channel, way, lun, for_good),
            {"stuck_busy": dict(channel=channel, way=way, lun=lun, for_good=for_good)},
            f"channel {channel} way {way} LUN {lun}: R/B# stuck busy "
            f"{'for good' if for_good else 'until a RESET'}")


@drive.command("cpl-fault")
@click.option("--kind", type=click.Choice(["poison", "timeout"]), required=True,
              help="poison: completions with EP set; timeout: no completion at all")
@click.option("--reads", type=click.IntRange(1, 255), default=1, show_default=True,
              help="how many of the drive's next DMA reads of host memory")
@click.option("--addr", type=click.IntRange(0, 2**64 - 1), default=0,
              help="only reads touching the 4 KiB host page holding this address (0: any)")
@_device_options
def cpl_fault(dev, as_json, kind, reads, addr):
    """Fault injection (sim only): host link faults on the drive's DMA reads. The next READS
    reads of host memory get a poisoned completion (EP) or none (the drive's 1 ms completion
    timeout ends them). A command whose data or PRP list read fails completes with Data
    Transfer Error (04h); a failed submission queue fetch stops that SQ and raises an error
    event (transient internal error, log page 01h). The harness logs each read it hits."""
    _inject(dev, as_json, "cpl-fault", lambda t: t.cpl_fault(kind, reads, addr) > 0,
            {"cpl_fault": dict(kind=kind, reads=reads, addr=addr)},
            f"next {reads} DMA read(s){f' of page 0x{addr & ~0xFFF:x}' if addr else ''}: "
            f"{'poisoned completions' if kind == 'poison' else 'never answered'}")


@drive.command("quit")
@_device_options
def quit_(dev, as_json):
    """Tell the simulation harness to finish and exit (sim only)."""
    if dev["vfio"]:
        raise click.UsageError("quit ends a simulation: it takes --sim, not --vfio")
    _transport(dev, lambda t: t.quit())
    _emit(as_json, {"quit": True}, "harness told to quit")


def register(main):
    """Add the `drive` group to the `ssdlab` command line."""
    main.add_command(drive)
