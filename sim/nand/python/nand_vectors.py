# SPDX-License-Identifier: BSD-2-Clause
"""NAND die vector files: a bus-cycle-level text format, a generator that runs scenario
scripts against the golden model (NandDie behind OnfiPinTarget's byte-level path) and writes
what it observed, and a golden runner that replays a file and checks every expectation.
The C++ runner (sim/nand/cpp/nand_vectors_main.cpp) replays the same files against the fast
model (NandDieFast), so both models pass the same vectors.

File format (text, one item per line, `#` starts a comment):

    NANDVEC 1
    PART imft-20nm-mlc-64gbit                      informative
    GEOMETRY page_bytes=.. spare_bytes=.. pages_per_block=.. blocks_per_plane=.. planes=..
             luns=.. bits_per_cell=..              (one line)
    TIMING t_r_ns=.. t_prog_ns=.. ... (every NandArrayTiming field; none = not set;
           typical=0|1)
    IDENT id_bytes=<hex> manufacturer=.. model=.. jedec_id=.. pe_cycles=.. ecc_bits=..
          sdr_modes=.. max_bad_blocks=<n|none>
    DIE seed=.. strict=0|1 factory_bad_block_rate=.. pe_limit=<n|none> rber_base=..
        rber_per_kcycle=.. rber_exponent=.. retention_shift=.. rber_shift=..
        rber_per_kread=.. retry_levels=.. factory_erased=0|1 require_reset=0|1
        param_page_copies=..                   (BitErrorModel: spec/nand_errors.py)
    CYCLE_NS <n>                                   time of one bus cycle
    BEGIN
    ... body ...

Body (time `now` starts at 0 and only grows; CMD/ADDR/DIN/DOUT take CYCLE_NS per byte; in
NV-DDR2 a DIN or DOUT byte is one DQS edge, so SET FEATURES parameters, READ ID and GET
FEATURES bytes appear twice each):

    CMD xx                  a command latch (hex)
    ADDR xx [xx ...]        address latches
    DIN xx [xx ...]         data-in latches; or DIN PAT <seed> <n>: n pattern bytes
    DOUT xx|XX [...]        data-out cycles and the expected bytes (XX: garbage, the die
                            drives nothing valid); DOUT PAT <seed> <n>; DOUT CRC <n> <crc32>
    WAIT_RB <ns>            R/B# busy expected for <ns> after the last latch (0: ready);
                            time moves to the end of the busy period
    ADVANCE <ns>            time moves on
    RB 0|1                  R/B# expected now
    MODE <m> [sdr|nvddr2]   the timing mode (and interface) the pins run (SET FEATURES 01h /
                            RESET, applied once the die is ready)
    RULE <name>             the next NAND rule violation (in order) is <name>
    TIMING <param>          the next interface timing violation is <param> (e.g. tWH)
    STATS k=v ...           die statistics (reads, programs, erases, bit_errors,
                            bits_read, program_fail, erase_fail, resets)
    WEAR <lun> <block> <n>  backdoor: the block's P/E count becomes n
    DISTURB <lun> <block> <n>  backdoor: the block's reads since erase become n
    BAKE <hours>            backdoor: a retention bake, every programmed page ages <hours>
    PRECYCLE <cycles>       backdoor: every block takes <cycles> more P/E cycles
    BITERR <lun> <rber>     inject bit errors: every read of the LUN flips <rber> more
    DIE_FAIL <lun>          inject a die failure: the LUN's programs and erases FAIL, its
                            reads return noise
    BAD <lun> <block>       inject a grown bad block
    STUCK <lun> 1|0         inject a hung LUN: R/B# stuck low from its next busy period on;
                            1: until a RESET (or a power cut), 0: for good
    WP 0|1                  the WP# pin
    POWER_CUT               the target loses power now and gets it back (NandDie.power_cut:
                            operations in flight torn, registers and features lost, RESET
                            needed again; the array stays)
    PINS <t_ns> <ce_n> <cle> <ale> <we_n> <re_n> <dq hex|--> <rb_n> [<dqs 0|1|-->]
                            a pin snapshot for the interface timing checker at t_ns (dqs:
                            the controller's DQS, NV-DDR2; absent: not driven)

A violation not claimed by a RULE/TIMING line before the next other line is a mismatch.
Pattern bytes: byte i of PAT <seed> is _mix64((seed << 32) | i) & 0xFF.

Commands:
    python -m sim.nand.python.nand_vectors generate [--out DIR]   write sim/nand/vectors/*.vec
    python -m sim.nand.python.nand_vectors check FILE...            golden runner
"""

import argparse
import dataclasses
import logging
import random
import sys
import zlib
from dataclasses import replace
from pathlib import Path

from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry
from spec.onfi_timing import OnfiPins

from .nand_die import RULES, BitErrorModel, NandDie, _mix64
from .onfi_die_pins import OnfiBus, OnfiPinTarget

__all__ = ["VectorError", "pattern", "bus_bytes", "dout_expectation", "GoldenRunner",
           "run_file", "Scenario", "SCENARIOS", "generate", "VECTOR_DIR"]

VECTOR_DIR = Path(__file__).resolve().parents[1] / "vectors"
GEOMETRY_FIELDS = ("page_bytes", "spare_bytes", "pages_per_block", "blocks_per_plane",
                   "planes", "luns", "bits_per_cell")
TIMING_FIELDS = tuple(f.name for f in dataclasses.fields(NandArrayTiming))
STAT_KEYS = ("reads", "programs", "erases", "bit_errors", "bits_read", "program_fail",
             "erase_fail", "resets")


class VectorError(AssertionError):
    """A mismatch between a vector file and the model: names file, line, expected, got."""


def pattern(seed, n):
    """The PAT byte stream: byte i is _mix64((seed << 32) | i) & 0xFF."""
    return bytes(_mix64(((seed & 0xFFFFFFFF) << 32) | i) & 0xFF for i in range(n))


def _kv(fields):
    out = {}
    for item in fields:
        k, _, v = item.partition("=")
        out[k] = v
    return out


def _num(v):
    if v == "none":
        return None
    return float(v) if any(c in v for c in ".eE") and not v.startswith("0x") else int(v, 0)


class _Bus(OnfiBus):
    """A pin-less stand-in for OnfiBus: OnfiPinTarget's byte-level path without cocotb; the
    byte a data-out cycle drives is captured instead of scheduled on a pin."""

    def __init__(self):     # noqa: D107 - deliberately not OnfiBus.__init__ (no DUT)
        self.h = {"ce_n": [0]}
        self.log = logging.getLogger("ssdlab.nand_vectors")
        self.targets = []
        self.driven = None

    def attach(self, target):
        self.targets.append(target)

    def drive_dq(self, delay_ns, value):
        self.driven = value

    def set_rb(self, bit, value):
        pass


_log = logging.getLogger("ssdlab.nand_vectors")
_log.addHandler(logging.NullHandler())
_log.propagate = False


def make_die(header):
    """A fresh NandDie from a parsed header."""
    g = NandGeometry(**{k: int(header["GEOMETRY"][k]) for k in GEOMETRY_FIELDS})
    t = NandArrayTiming(**{k: _num(header["TIMING"][k]) for k in TIMING_FIELDS
                           if k != "typical"}, typical=header["TIMING"]["typical"] == "1")
    ident = header["IDENT"]
    d = header["DIE"]
    base = PARTS.get(header.get("PART", ""), PARTS["imft-20nm-mlc-64gbit"])
    part = replace(base, geometry=g, timing=t, id_bytes=bytes.fromhex(ident["id_bytes"]),
                   manufacturer=ident["manufacturer"], model=ident["model"],
                   jedec_id=int(ident["jedec_id"]), pe_cycles=int(ident["pe_cycles"]),
                   ecc_bits=int(ident["ecc_bits"]), sdr_modes=int(ident["sdr_modes"]),
                   max_bad_blocks=_num(ident["max_bad_blocks"]))
    bit_errors = BitErrorModel(float(d["rber_base"]), float(d["rber_per_kcycle"]),
                               float(d["rber_exponent"]), float(d["retention_shift"]),
                               float(d["rber_shift"]), float(d["rber_per_kread"]),
                               int(d["retry_levels"]))
    return NandDie(part, seed=int(d["seed"]), strict=bool(int(d["strict"])),
                   factory_bad_block_rate=float(d["factory_bad_block_rate"]),
                   pe_limit=_num(d["pe_limit"]), bit_errors=bit_errors,
                   factory_erased=bool(int(d["factory_erased"])),
                   require_reset=bool(int(d["require_reset"])),
                   param_page_copies=int(d["param_page_copies"]))


def header_lines(die, cycle_ns, part_name):
    """The header of a vector file for `die` (a NandDie)."""
    g, t, p = die.geometry, die.timing, die.part
    bem = die.bit_errors

    def none(v):
        return "none" if v is None else str(int(v)) if isinstance(v, bool) else repr(v)
    assert " " not in p.manufacturer and " " not in p.model
    return [
        "NANDVEC 1",
        f"PART {part_name}",
        "GEOMETRY " + " ".join(f"{k}={getattr(g, k)}" for k in GEOMETRY_FIELDS),
        "TIMING " + " ".join(f"{k}={none(getattr(t, k))}" for k in TIMING_FIELDS),
        f"IDENT id_bytes={p.id_bytes.hex()} manufacturer={p.manufacturer} model={p.model} "
        f"jedec_id={p.jedec_id} pe_cycles={p.pe_cycles} ecc_bits={p.ecc_bits} "
        f"sdr_modes={p.sdr_modes} max_bad_blocks={none(p.max_bad_blocks)}",
        f"DIE seed={die.seed} strict={int(die.strict)} "
        f"factory_bad_block_rate={die.factory_bad_block_rate!r} "
        f"pe_limit={none(die.pe_limit)} rber_base={float(bem.rber_base)!r} "
        f"rber_per_kcycle={float(bem.rber_per_kcycle)!r} "
        f"rber_exponent={float(bem.exponent)!r} "
        f"retention_shift={float(bem.retention_shift)!r} "
        f"rber_shift={float(bem.rber_shift)!r} rber_per_kread={float(bem.rber_per_kread)!r} "
        f"retry_levels={bem.retry_levels} "
        f"factory_erased={int(die.luns[0]._factory_erased)} "
        f"require_reset={int(die.require_reset)} param_page_copies={die.param_page_copies}",
        f"CYCLE_NS {cycle_ns}",
        "BEGIN",
    ]


class GoldenRunner:
    """Replays bus cycles against a NandDie through OnfiPinTarget's byte-level path
    (_latch / _data_out), the same path the pin front end takes under cocotb."""

    def __init__(self, die, cycle_ns):
        self.die = die
        self.bus = _Bus()
        self.target = OnfiPinTarget(self.bus, die, name="vec")
        self.target.log = _log
        self.target._update_rb = lambda now: None     # no R/B# pin: nothing to schedule
        self.switch_pending = False
        self.cycle_ps = int(round(cycle_ns * 1000))
        self.now_ps = 0
        self.last_latch_ns = 0.0
        self._sd = self._so = 0
        self._seen_timing = 0

    @property
    def now(self):
        return self.now_ps / 1000

    # OnfiPinTarget switches its interface/timing mode after SET FEATURES or RESET once the
    # die is ready again, in a cocotb task (`_switch`). Without a simulator the task is taken
    # out of cocotb.start_soon and its effect applied by sync() at the first event at or after
    # that time, which is when the task would have run.

    def _start_soon(self, coro):
        if getattr(coro, "__name__", "") == "_switch":
            coro.close()
            self.switch_pending = True
            return None
        coro.close()
        raise RuntimeError(f"nand_vectors: unexpected cocotb task {coro!r}")

    def _in_target(self, fn, *args):
        import cocotb
        saved = getattr(cocotb, "start_soon", None)
        cocotb.start_soon = self._start_soon
        try:
            return fn(*args)
        finally:
            cocotb.start_soon = saved

    def sync(self):
        """Apply a pending interface/timing mode switch once the die is ready (R/B# high)."""
        t, die = self.target, self.die
        if self.switch_pending and die.ready_ns() <= self.now:
            self.switch_pending = False
            t.iface, t.mode = die.data_interface, die.timing_mode
            t.t = t._timing_set(t.iface, t.mode)
            t.checker.set_timings(t.t)
            t.rd = None

    def latch(self, kind, byte):
        self.sync()
        self._in_target(self.target._latch, self.now, kind, byte)
        self.last_latch_ns = self.now
        self.now_ps += self.cycle_ps

    def data_out(self):
        """One data-out cycle: an RE# falling edge in SDR, one DQS edge in NV-DDR2."""
        self.sync()
        self.bus.driven = None
        if self.target.iface == "nvddr2":
            value = self._in_target(self.target._nvddr2_byte, self.now)
        else:
            self._in_target(self.target._data_out, self.now)
            value = self.bus.driven
        self.now_ps += self.cycle_ps
        return value

    def wait_rb(self):
        ready = self.die.ready_ns()
        busy = max(0.0, ready - self.last_latch_ns) if ready > self.now else 0.0
        self.now_ps = max(self.now_ps, -(-round(ready * 1e6) // 1000))
        return busy

    def pins(self, t_ns, pins):
        self.now_ps = max(self.now_ps, round(t_ns * 1000))
        self.sync()
        self.target.checker.observe(t_ns, pins)

    def power_cut(self):
        self.target.power_cut(self.now)
        self.switch_pending = False

    def take_rules(self):
        die_v, own_v = self.die.violations, self.target.own_violations
        # the die's new violations, then the front end's (the C++ runner does the same)
        fresh = die_v[self._sd:] + own_v[self._so:]
        self._sd, self._so = len(die_v), len(own_v)
        return [(v.rule, str(v)) for v in fresh]

    def take_timing(self):
        v = self.target.checker.violations
        fresh = v[self._seen_timing:]
        self._seen_timing = len(v)
        return [(x.param, str(x)) for x in fresh]

    def stats(self):
        return {k: self.die.stats.get(k, 0) for k in STAT_KEYS}


def _parse_header(lines, path):
    header, body_at = {}, None
    for i, raw in enumerate(lines):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, *rest = line.split()
        if key == "BEGIN":
            body_at = i + 1
            break
        if key in ("GEOMETRY", "TIMING", "IDENT", "DIE"):
            header[key] = _kv(rest)
        else:
            header[key] = rest[0] if rest else ""
    if body_at is None or header.get("NANDVEC") != "1":
        raise VectorError(f"{path}: not a NANDVEC 1 file (no header or no BEGIN)")
    return header, body_at


def _hex_bytes(tokens):
    return [None if t.upper() == "XX" else int(t, 16) for t in tokens]


def bus_bytes(key, args):
    """The latches of a CMD, ADDR or DIN line: (kind, bytes), kind "cmd" | "addr" | "data";
    DIN PAT <seed> <n> expands to its pattern bytes."""
    kind = {"CMD": "cmd", "ADDR": "addr", "DIN": "data"}[key]
    if key == "DIN" and args[0] == "PAT":
        return kind, list(pattern(int(args[1]), int(args[2])))
    return kind, [int(b, 16) for b in args]


def dout_expectation(args):
    """What a DOUT line expects: (want, n, crc). Hex and PAT lines give `want`, the expected
    bytes (None for XX: the die drives nothing valid), n = len(want), crc None; a CRC line
    gives want None and n bytes whose CRC-32 is crc. Shared by every runner of the vectors
    (this golden one, the RTL emulator's)."""
    if args[0] == "PAT":
        want = list(pattern(int(args[1]), int(args[2])))
    elif args[0] == "CRC":
        return None, int(args[1]), int(args[2], 16)
    else:
        want = _hex_bytes(args)
    return want, len(want), None


def run_file(path):
    """Replay a vector file against a fresh golden die; VectorError at the first mismatch.
    Returns the number of checked expectations."""
    path = Path(path)
    lines = path.read_text().splitlines()
    header, body_at = _parse_header(lines, path)
    r = GoldenRunner(make_die(header), float(header["CYCLE_NS"]))
    pend_rules, pend_timing = [], []
    checks = 0

    def fail(lineno, expected, got):
        raise VectorError(f"{path}:{lineno}: expected {expected}, got {got}")

    for lineno in range(body_at + 1, len(lines) + 1):
        line = lines[lineno - 1].split("#", 1)[0].strip()
        if not line:
            continue
        key, *args = line.split()
        if key == "RULE":
            checks += 1
            if not pend_rules:
                fail(lineno, f"NAND rule {args[0]}", "no violation")
            got = pend_rules.pop(0)
            if got[0] != args[0]:
                fail(lineno, f"NAND rule {args[0]}", f"{got[0]} ({got[1]})")
            continue
        if key == "TIMING":
            checks += 1
            if not pend_timing:
                fail(lineno, f"timing violation {args[0]}", "no violation")
            got = pend_timing.pop(0)
            if got[0] != args[0]:
                fail(lineno, f"timing violation {args[0]}", f"{got[0]} ({got[1]})")
            continue
        if pend_rules:
            fail(lineno, "no unclaimed NAND rule violation", pend_rules[0][1])
        if pend_timing:
            fail(lineno, "no unclaimed timing violation", pend_timing[0][1])
        r.sync()
        if key in ("CMD", "ADDR", "DIN"):
            kind, data = bus_bytes(key, args)
            for b in data:
                r.latch(kind, b)
        elif key == "DOUT":
            checks += 1
            want, n, crc = dout_expectation(args)
            if want is not None:
                got = [r.data_out() for _ in want]
                if got != want:
                    i = next(i for i, (a, b) in enumerate(zip(want, got, strict=True)) if a != b)
                    fail(lineno, f"byte {i} = {_fmt(want[i])}", _fmt(got[i]))
            else:
                got = [r.data_out() for _ in range(n)]
                if None in got:
                    fail(lineno, f"{n} valid bytes", f"garbage at byte {got.index(None)}")
                g = zlib.crc32(bytes(got))
                if g != crc:
                    fail(lineno, f"CRC {crc:08x}", f"CRC {g:08x}")
        elif key == "WAIT_RB":
            checks += 1
            busy = r.wait_rb()
            if abs(busy - float(args[0])) > 1e-3:
                fail(lineno, f"busy {args[0]} ns", f"busy {busy:.3f} ns")
        elif key == "ADVANCE":
            r.now_ps += round(float(args[0]) * 1000)
        elif key == "RB":
            checks += 1
            got = r.die.rb_n(r.now)
            if got != int(args[0]):
                fail(lineno, f"R/B# {args[0]}", got)
        elif key == "MODE":
            checks += 1
            if r.target.mode != int(args[0]):
                fail(lineno, f"timing mode {args[0]}", r.target.mode)
            if len(args) > 1 and r.target.iface != args[1]:
                fail(lineno, f"interface {args[1]}", r.target.iface)
        elif key == "STATS":
            checks += 1
            got = r.stats()
            for k, v in _kv(args).items():
                if got.get(k) != int(v):
                    fail(lineno, f"{k}={v}", f"{k}={got.get(k)}")
        elif key == "WEAR":
            lun, block, n = map(int, args)
            r.die.luns[lun].block(block).erase_count = n
        elif key == "DISTURB":
            lun, block, n = map(int, args)
            r.die.luns[lun].block(block).reads = n
        elif key == "BAKE":
            r.die.bake(float(args[0]))
        elif key == "PRECYCLE":
            r.die.precycle(int(args[0]))
        elif key == "DIE_FAIL":
            r.die.inject_die_failure(int(args[0]))
        elif key == "BITERR":
            r.die.inject_bit_errors(int(args[0]), float(args[1]))
        elif key == "BAD":
            r.die.inject_bad_block(int(args[0]), int(args[1]))
        elif key == "STUCK":
            r.die.inject_stuck_busy(int(args[0]), bool(int(args[1])))
        elif key == "WP":
            r.die.set_wp_n(r.now, int(args[0]))
        elif key == "POWER_CUT":
            r.power_cut()
        elif key == "PINS":
            t_ns = float(args[0])
            ce_n, cle, ale, we_n, re_n = map(int, args[1:6])
            dq = None if args[6] == "--" else int(args[6], 16)
            dqs = None if len(args) < 9 or args[8] == "--" else int(args[8])
            r.pins(t_ns, OnfiPins(ce_n, cle, ale, we_n, re_n, dq, int(args[7]), dqs))
        else:
            raise VectorError(f"{path}:{lineno}: unknown line {key!r}")
        pend_rules += r.take_rules()
        pend_timing += r.take_timing()
    if pend_rules:
        fail(len(lines), "no unclaimed NAND rule violation at the end", pend_rules[0][1])
    if pend_timing:
        fail(len(lines), "no unclaimed timing violation at the end", pend_timing[0][1])
    return checks


def _fmt(v):
    return "XX (garbage)" if v is None else f"{v:02X}"


# --- scenarios -----------------------------------------------------------------------------

SMALL = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=8,
                     planes=2, luns=2, bits_per_cell=2)
# The array times of the scenarios that do not test them: one tR and tPROG for every page type,
# fixed here rather than taken from the part table (whose per page type values may change).
UNIFORM = NandArrayTiming()


class Scenario:
    """Runs bus operations on the golden model and records each with what the model did.

    Every operation writes its lines; new rule/timing violations are written as RULE/TIMING
    lines right after the line that caused them. The high-level helpers (read, program, ...)
    issue the ONFI sequences byte by byte."""

    def __init__(self, name, part="imft-20nm-mlc-64gbit", geometry=SMALL, timing=None,
                 cycle_ns=25, **die_args):
        self.name = name
        base = PARTS[part]
        die = NandDie(base, geometry=geometry, timing=timing or UNIFORM, **die_args)
        self.r = GoldenRunner(die, cycle_ns)
        self.die = die
        self.g = die.geometry
        self.lines = header_lines(die, cycle_ns, part)

    # -- raw lines --

    def _emit(self, line):
        self.lines.append(line)
        for rule, _ in self.r.take_rules():
            self.lines.append(f"RULE {rule}")
        for param, _ in self.r.take_timing():
            self.lines.append(f"TIMING {param}")

    def comment(self, text):
        self.lines.append(f"# {text}")

    def cmd(self, c):
        self.r.latch("cmd", c)
        self._emit(f"CMD {c:02X}")

    def addr(self, *cycles):
        for a in cycles:
            self.r.latch("addr", a)
        self._emit("ADDR " + " ".join(f"{a:02X}" for a in cycles))

    def din(self, data=None, pat=None):
        if pat is not None:
            for b in pattern(*pat):
                self.r.latch("data", b)
            self._emit(f"DIN PAT {pat[0]} {pat[1]}")
            return
        for i in range(0, len(data), 32):
            part = data[i:i + 32]
            for b in part:
                self.r.latch("data", b)
            self._emit("DIN " + " ".join(f"{b:02X}" for b in part))

    def dout(self, n, pat=None, crc=None):
        """n data-out cycles; written as hex (n <= 64), PAT when they match `pat`, else CRC."""
        got = [self.r.data_out() for _ in range(n)]
        if n <= 64 or (None in got and crc is None):
            for i in range(0, n, 32):
                self._emit("DOUT " + " ".join(_fmt(v).split()[0] for v in got[i:i + 32]))
        elif pat is not None and bytes(got) == pattern(*pat):
            self._emit(f"DOUT PAT {pat[0]} {pat[1]}")
        else:
            self._emit(f"DOUT CRC {n} {zlib.crc32(bytes(got)):08x}")
        return got

    def wait_rb(self):
        busy = self.r.wait_rb()
        self._emit(f"WAIT_RB {busy:.3f}")
        return busy

    def advance(self, ns):
        self.r.now_ps += round(ns * 1000)
        self._emit(f"ADVANCE {ns}")

    def rb(self):
        self._emit(f"RB {self.die.rb_n(self.r.now)}")

    def mode(self):
        self.r.sync()
        t = self.r.target
        self._emit(f"MODE {t.mode}" + (" nvddr2" if t.iface == "nvddr2" else ""))

    def stats(self):
        s = self.r.stats()
        self._emit("STATS " + " ".join(f"{k}={v}" for k, v in s.items()))

    def wear(self, lun, block, n):
        self.die.luns[lun].block(block).erase_count = n
        self._emit(f"WEAR {lun} {block} {n}")

    def disturb(self, lun, block, n):
        self.die.luns[lun].block(block).reads = n
        self._emit(f"DISTURB {lun} {block} {n}")

    def bake(self, hours):
        self.die.bake(hours)
        self._emit(f"BAKE {hours!r}")

    def die_fail(self, lun):
        self.die.inject_die_failure(lun)
        self._emit(f"DIE_FAIL {lun}")

    def bit_errors_fault(self, lun, rber):
        self.die.inject_bit_errors(lun, rber)
        self._emit(f"BITERR {lun} {rber!r}")

    def precycle(self, cycles):
        self.die.precycle(cycles)
        self._emit(f"PRECYCLE {cycles}")

    def bad(self, lun, block):
        self.die.inject_bad_block(lun, block)
        self._emit(f"BAD {lun} {block}")

    def stuck(self, lun, until_reset):
        self.die.inject_stuck_busy(lun, until_reset)
        self._emit(f"STUCK {lun} {int(until_reset)}")

    def wp(self, value):
        self.die.set_wp_n(self.r.now, value)
        self._emit(f"WP {int(value)}")

    def power_cut(self):
        self.r.power_cut()
        self._emit("POWER_CUT")

    def pins(self, t_ns, ce_n, cle, ale, we_n, re_n, dq, rb_n=1, dqs=None):
        self.r.pins(t_ns, OnfiPins(ce_n, cle, ale, we_n, re_n, dq, rb_n, dqs))
        self._emit(f"PINS {t_ns:.3f} {ce_n} {cle} {ale} {we_n} {re_n} "
                   f"{'--' if dq is None else f'{dq:02X}'} {rb_n}"
                   + ("" if dqs is None else f" {dqs}"))

    # -- ONFI sequences --

    def row(self, lun, block, page):
        return self.g.pack_row(lun, block, page)

    def col_bytes(self, col):
        return list(self.g.column_address_bytes(col))

    def row_bytes(self, row):
        return list(self.g.row_address_bytes(row))

    def reset(self, wait=True):
        self.cmd(0xFF)
        if wait:
            self.wait_rb()

    def status(self):
        self.cmd(0x70)
        return self.dout(1)[0]

    def status_enhanced(self, row):
        self.cmd(0x78)
        self.addr(*self.row_bytes(row))
        return self.dout(1)[0]

    def read_id(self, address, n):
        self.cmd(0x90)
        self.addr(address)
        return self.dout(n)

    def param_page(self, n=None):
        self.cmd(0xEC)
        self.addr(0x00)
        self.wait_rb()
        return self.dout(n or 256 * self.die.param_page_copies)

    def set_features(self, address, params, wait=True):
        """SET FEATURES at whatever interface the pins run: in NV-DDR2 each parameter byte
        goes on both DQS edges (twice)."""
        self.cmd(0xEF)
        self.addr(address)
        if self.r.target.iface == "nvddr2":
            params = [b for p in params for b in (p, p)]
        self.din(bytes(params))
        if wait:
            self.wait_rb()

    def get_features(self, address):
        self.cmd(0xEE)
        self.addr(address)
        self.wait_rb()
        return self.dout(8 if self.r.target.iface == "nvddr2" else 4)

    def read(self, row, col=0, n=0, confirm=0x30, wait=True, pat=None, slc=False):
        if slc:
            self.cmd(0xDA)              # SLC-mode prefix (spec/nand_geometry.py)
        self.cmd(0x00)
        self.addr(*self.col_bytes(col), *self.row_bytes(row))
        self.cmd(confirm)
        if wait:
            self.wait_rb()
        if n:
            return self.dout(n, pat=pat)
        return None

    def program(self, row, data=None, col=0, confirm=0x10, wait=True, pat=None, chunks=(),
                slc=False):
        if slc:
            self.cmd(0xDA)
        self.cmd(0x80)
        self.addr(*self.col_bytes(col), *self.row_bytes(row))
        if pat is not None or data:
            self.din(data, pat=pat)
        for c, d in chunks:             # 85h CHANGE WRITE COLUMN chunks
            self.cmd(0x85)
            self.addr(*self.col_bytes(c))
            self.din(d)
        self.cmd(confirm)
        if wait:
            self.wait_rb()

    def erase(self, row, confirm=0xD0, wait=True, slc=False):
        if slc:
            self.cmd(0xDA)
        self.cmd(0x60)
        self.addr(*self.row_bytes(row))
        self.cmd(confirm)
        if wait:
            self.wait_rb()

    def change_col(self, col, row=None):
        if row is None:
            self.cmd(0x05)
            self.addr(*self.col_bytes(col))
        else:
            self.cmd(0x06)
            self.addr(*self.col_bytes(col), *self.row_bytes(row))
        self.cmd(0xE0)

    def text(self):
        return "\n".join(self.lines) + "\n"


def _sc_identify():
    s = Scenario("identify")
    s.comment("power-on RESET (tRST first), READ ID 00h/20h, parameter page, features")
    s.rb()
    s.reset()
    s.stats()
    s.read_id(0x00, 5)
    s.read_id(0x20, 4)
    s.read_id(0x00, 8)                  # past the ID bytes: garbage
    s.param_page()
    s.status()
    s.get_features(0x01)
    for mode in (1, 2, 3, 4, 5, 0):
        s.comment(f"SDR timing mode {mode}")
        s.set_features(0x01, [mode, 0, 0, 0])
        s.mode()
        s.get_features(0x01)
    s.set_features(0x01, [5, 0, 0, 0])
    s.mode()
    s.reset()                           # RESET returns to mode 0
    s.mode()
    s.set_features(0x90, [1, 2, 3, 4])  # another feature address: stored and read back
    s.get_features(0x90)
    s.read_id(0x00, 5)
    return s


def _sc_full_part():
    s = Scenario("full_part", geometry=PARTS["imft-20nm-mlc-64gbit"].geometry)
    s.comment("the real part geometry (8 KB pages, 2 x 2048 blocks): ID, parameter page, a page")
    s.reset()
    s.read_id(0x00, 5)
    s.param_page()
    row = s.row(0, 4095, 0)
    s.erase(row)
    s.program(row, pat=(11, s.g.register_bytes))
    s.status()
    s.read(row, 0, s.g.register_bytes, pat=(11, s.g.register_bytes))
    s.program(s.row(0, 4095, 1), pat=(12, 100), col=8000)
    s.read(s.row(0, 4095, 1), 7990, 120)
    s.stats()
    return s


def _sc_program_read():
    s = Scenario("program_read", seed=3)
    g = s.g
    s.reset()
    s.comment("erase, program pages in order, read back, columns and the spare area")
    s.erase(s.row(0, 2, 0))
    s.status()
    for page in range(3):
        s.program(s.row(0, 2, page), pat=(page, g.register_bytes))
        s.status()
    for page in range(3):
        s.read(s.row(0, 2, page), 0, g.register_bytes, pat=(page, g.register_bytes))
    s.read(s.row(0, 2, 1), g.page_bytes, g.spare_bytes)
    s.read(s.row(0, 2, 3), 0, 16)       # erased page reads FF
    s.comment("CHANGE READ COLUMN 05h-E0h, then past the page register")
    s.read(s.row(0, 2, 0), 100, 8)
    s.change_col(2000)
    s.dout(16)
    s.change_col(g.register_bytes - 2)
    s.dout(3)
    s.comment("85h CHANGE WRITE COLUMN, partial page")
    s.program(s.row(0, 2, 3), bytes(range(16)), col=10, chunks=[(500, b"\x55" * 8),
                                                                (2100, b"\xaa\xbb")])
    s.read(s.row(0, 2, 3), 0, 32)
    s.change_col(500)
    s.dout(10)
    s.change_col(2098)
    s.dout(6)
    s.comment("LUN 1, status enhanced 78h, LUNs busy in parallel")
    s.erase(s.row(1, 5, 0), wait=False)
    s.rb()
    s.status_enhanced(s.row(1, 5, 0))
    s.status_enhanced(s.row(0, 0, 0))
    s.read(s.row(0, 2, 2), 0, 0, wait=False)
    s.rb()
    s.status_enhanced(s.row(0, 0, 0))
    s.wait_rb()
    s.status_enhanced(s.row(1, 0, 0))
    s.advance(3_000_000)
    s.status_enhanced(s.row(1, 0, 0))
    s.program(s.row(1, 5, 0), pat=(7, 64))
    s.read(s.row(1, 5, 0), 0, 64, pat=(7, 64))
    s.comment("70h then 00h: back to data output")
    s.read(s.row(1, 5, 0), 4, 2)
    s.status()
    s.cmd(0x00)
    s.dout(2)
    s.stats()
    return s


def _sc_multiplane():
    s = Scenario("multiplane", seed=4)
    g = s.g
    s.reset()
    s.comment("multi-plane erase 60h-D1h / 60h-D0h, program 80h-11h / 80h-10h, read 32h/30h")
    s.erase(s.row(0, 2, 0), confirm=0xD1)
    s.erase(s.row(0, 3, 0))
    s.status()
    s.program(s.row(0, 2, 0), pat=(20, g.register_bytes), confirm=0x11)
    s.program(s.row(0, 3, 0), pat=(21, g.register_bytes))
    s.status()
    s.read(s.row(0, 2, 0), 0, 0, confirm=0x32)
    s.read(s.row(0, 3, 0), 0, 0)
    s.comment("output plane 1 (last), then plane 0 by 06h-E0h")
    s.dout(g.register_bytes, pat=(21, g.register_bytes))
    s.change_col(0, s.row(0, 2, 0))
    s.dout(g.register_bytes, pat=(20, g.register_bytes))
    s.change_col(g.page_bytes, s.row(0, 3, 0))
    s.dout(8)
    s.comment("multi-plane rule: two addresses on one plane, different pages")
    s.erase(s.row(0, 4, 0), confirm=0xD1)
    s.erase(s.row(0, 6, 0))
    s.status()
    s.program(s.row(0, 2, 1), pat=(22, 32), confirm=0x11)
    s.program(s.row(0, 3, 2), pat=(23, 32))
    s.status()
    s.comment("a mixed queue: program confirm while a read is queued")
    s.read(s.row(0, 2, 0), 0, 0, confirm=0x32)
    s.program(s.row(0, 3, 1), pat=(24, 32))
    s.status()
    s.stats()
    return s


def _sc_cache():
    s = Scenario("cache", seed=5)
    g = s.g
    s.reset()
    s.erase(s.row(0, 1, 0))
    s.comment("cache program 80h-15h x3 then 80h-10h; status RDY/ARDY and FAILC")
    for page in range(3):
        s.program(s.row(0, 1, page), pat=(30 + page, g.register_bytes), confirm=0x15,
                  wait=False)
        s.status()
        s.wait_rb()
        s.status()
    s.program(s.row(0, 1, 3), pat=(33, g.register_bytes), wait=False)
    s.status()
    s.wait_rb()
    s.status()
    s.comment("cache read: 00h-30h, 31h sequential, 00h-31h random, 3Fh")
    s.read(s.row(0, 1, 0), 0, 16)
    s.cmd(0x31)
    s.status()
    s.wait_rb()
    s.status()
    s.cmd(0x00)
    s.dout(g.register_bytes, pat=(30, g.register_bytes))
    s.cmd(0x31)
    s.wait_rb()
    s.dout(g.register_bytes, pat=(31, g.register_bytes))
    s.read(s.row(0, 1, 3), 0, 0, confirm=0x31)
    s.wait_rb()
    s.dout(g.register_bytes, pat=(32, g.register_bytes))
    s.cmd(0x3F)
    s.wait_rb()
    s.dout(g.register_bytes, pat=(33, g.register_bytes))
    s.status()
    s.comment("a cache program to a factory... no: to a protected array gives FAIL/FAILC")
    s.erase(s.row(0, 3, 0))
    s.program(s.row(0, 3, 0), pat=(40, 16), confirm=0x15)
    s.wp(0)
    s.program(s.row(0, 3, 1), pat=(41, 16), confirm=0x15)
    s.status()
    s.wp(1)
    s.program(s.row(0, 3, 2), pat=(42, 16))
    s.status()
    s.stats()
    return s


def _rules(s):
    g = s.g
    s.comment("reset-after-power-on")
    s.read_id(0x00, 2)
    s.reset()
    s.comment("address-range: row, column, READ ID / parameter page address")
    s.read(g.pack_row(0, 0, 0) | (3 << (g.page_bits + g.block_bits)), 0, 0)
    s.read(s.row(0, 0, 0), g.register_bytes + 5, 0)
    s.read_id(0x40, 2)
    s.cmd(0xEC)
    s.addr(0x10)
    s.dout(2)
    s.comment("busy: a read while the LUN is busy; data output while busy")
    s.erase(s.row(0, 1, 0), wait=False)
    s.read(s.row(0, 1, 0), 0, 0, wait=False)
    s.param_page(2)
    s.wait_rb()
    s.comment("page-order, page-reprogram")
    s.program(s.row(0, 1, 2), pat=(1, 8))
    s.status()
    s.program(s.row(0, 1, 0), pat=(2, 8))
    s.program(s.row(0, 1, 0), pat=(3, 8))
    s.status()
    s.comment("erase-before-program: an erase aborted by RESET")
    s.erase(s.row(0, 4, 0), wait=False)
    s.advance(1000)
    s.reset()
    s.program(s.row(0, 4, 0), pat=(4, 8))
    s.status()
    s.comment("multi-plane")
    s.erase(s.row(0, 6, 0), confirm=0xD1)
    s.erase(s.row(0, 8, 0))
    s.comment("command-sequence: 31h/3Fh without a read, unknown command, stray bytes")
    s.cmd(0x31)
    s.cmd(0x3F)
    s.cmd(0x42)
    s.cmd(0xE0)
    s.cmd(0x10)
    s.addr(0x00)
    s.din(b"\x12")
    s.cmd(0x60)
    s.addr(0x00)
    s.cmd(0xD0)
    s.cmd(0x80)
    s.addr(0x00, 0x00, 0x00, 0x00)
    s.cmd(0x70)
    s.dout(1)
    s.comment("data-output-after-status: 70h, a refused 05h-E0h, data out")
    s.read(s.row(0, 1, 0), 0, 2)
    s.status()
    s.dout(2)
    s.change_col(g.register_bytes + 10)
    s.dout(2)
    s.cmd(0x00)
    s.dout(2)
    s.comment("feature-value: mode 6, NV-DDR interface bits")
    s.set_features(0x01, [6, 0, 0, 0])
    s.set_features(0x01, [0x12, 0, 0, 0])
    s.mode()
    s.stats()


def _sc_rules_strict():
    s = Scenario("rules_strict", seed=6)
    s.comment("every NAND rule broken once, strict die (refused, nothing changes)")
    _rules(s)
    return s


def _sc_rules_lenient():
    s = Scenario("rules_lenient", seed=7, strict=False)
    s.comment("every NAND rule broken once, lenient die (recorded, programs FAIL)")
    _rules(s)
    return s


def _sc_unerased():
    s = Scenario("unerased", seed=8, factory_erased=False, require_reset=False)
    s.comment("blocks shipped unerased, no power-on RESET required")
    s.read_id(0x00, 5)
    s.program(s.row(0, 3, 0), pat=(1, 16))
    s.status()
    s.erase(s.row(0, 3, 0))
    s.program(s.row(0, 3, 0), pat=(1, 16))
    s.status()
    s.read(s.row(0, 3, 0), 0, 16)
    return s


def _sc_bad_blocks():
    s = Scenario("bad_blocks", seed=9, factory_bad_block_rate=0.25, pe_limit=5)
    g = s.g
    s.reset()
    bad = s.die.factory_bad_blocks(0)
    good = [b for b in range(g.blocks_per_lun) if b not in bad]
    s.comment(f"factory bad blocks of LUN 0: {bad}; the marker and FAIL")
    for b in bad[:3]:
        s.read(s.row(0, b, 0), g.page_bytes, 2)
        s.read(s.row(0, b, g.pages_per_block - 1), g.page_bytes, 2)
        s.read(s.row(0, b, 1), g.page_bytes, 2)
        s.erase(s.row(0, b, 0))
        s.status()
        s.program(s.row(0, b, 0), pat=(5, 16))
        s.status()
    bad1 = s.die.factory_bad_blocks(1)
    s.comment(f"factory bad blocks of LUN 1: {bad1}")
    if bad1:
        s.read(s.row(1, bad1[0], 0), g.page_bytes, 1)
    s.comment("grown bad block: the erase past pe_limit=5 FAILs, then program FAILs")
    b = good[1]
    s.wear(0, b, 4)
    s.erase(s.row(0, b, 0))
    s.status()
    s.program(s.row(0, b, 0), pat=(6, 16))
    s.status()
    s.erase(s.row(0, b, 0))
    s.status()
    s.program(s.row(0, b, 1), pat=(6, 16))
    s.status()
    s.comment("injected grown bad block; write protect")
    c = good[2]
    s.bad(0, c)
    s.erase(s.row(0, c, 0))
    s.status()
    d = good[3]
    s.wp(0)
    s.erase(s.row(0, d, 0))
    s.status()
    s.wp(1)
    s.erase(s.row(0, d, 0))
    s.status()
    s.comment("RESET during a program: the page holds seeded random data")
    s.program(s.row(0, d, 0), pat=(7, g.register_bytes), wait=False)
    s.advance(5000)
    s.reset()
    s.read(s.row(0, d, 0), 0, g.register_bytes)
    s.stats()
    return s


def _sc_power_cut():
    s = Scenario("power_cut", seed=12)
    g = s.g
    s.reset()
    s.comment("before the cut: two pages, timing mode 5, a feature, a page in the register")
    s.erase(s.row(0, 2, 0))
    s.program(s.row(0, 2, 0), pat=(20, g.register_bytes))
    s.program(s.row(0, 2, 1), pat=(21, g.register_bytes))
    s.set_features(0x01, [5, 0, 0, 0])
    s.mode()
    s.set_features(0x90, [1, 2, 3, 4])
    s.read(s.row(0, 2, 0))
    s.comment("a program on LUN 0 and an erase on LUN 1 in flight, then the power cut")
    s.program(s.row(0, 2, 2), pat=(22, g.register_bytes), wait=False)
    s.erase(s.row(1, 3, 0), wait=False)
    s.advance(1000)
    s.power_cut()
    s.comment("after it: SDR mode 0, R/B# high, nothing but RESET before the first RESET")
    s.mode()
    s.rb()
    s.read_id(0x00, 5)
    s.comment("the first RESET after power-on: busy tRST first; the features are gone")
    s.reset()
    s.mode()
    s.get_features(0x90)
    s.comment("the register lost its page; the array kept its pages; the torn one is random")
    s.dout(4)
    s.read(s.row(0, 2, 0), 0, g.register_bytes, pat=(20, g.register_bytes))
    s.read(s.row(0, 2, 1), 0, g.register_bytes, pat=(21, g.register_bytes))
    s.read(s.row(0, 2, 2), 0, g.register_bytes)
    s.comment("the torn erase: the block needs another erase; the torn page counts as written")
    s.program(s.row(1, 3, 0), pat=(23, 16))
    s.erase(s.row(1, 3, 0))
    s.program(s.row(1, 3, 0), pat=(23, 16))
    s.read(s.row(1, 3, 0), 0, 16, pat=(23, 16))
    s.program(s.row(0, 2, 3), pat=(24, 16))
    s.status()
    s.comment("a power cut with nothing in flight tears nothing; RESET again")
    s.power_cut()
    s.reset()
    s.read(s.row(0, 2, 3), 0, 16, pat=(24, 16))
    s.stats()
    return s


def _sc_bit_errors():
    s = Scenario("bit_errors", seed=10, bit_errors=BitErrorModel(1e-5, 2e-4, 1.5))
    g = s.g
    s.reset()
    s.comment("raw bit errors growing with P/E cycles (seeded flips, exact positions)")
    for i, pe in enumerate((0, 1000, 3000, 10000)):
        b = 2 + i
        s.wear(0, b, pe)
        s.erase(s.row(0, b, 0))
        s.program(s.row(0, b, 0), pat=(50 + i, g.register_bytes))
        for _ in range(2):
            s.read(s.row(0, b, 0), 0, g.register_bytes, pat=(50 + i, g.register_bytes))
        s.stats()
    s.comment("a short read of a worn page: the flipped bytes in clear")
    s.read(s.row(0, 5, 0), 0, 64)
    s.read(s.row(0, 9, 0), 0, 8)       # erased: no flips
    s.stats()
    return s


def _sc_precycle():
    s = Scenario("precycle", seed=13, pe_limit=3003, bit_errors=BitErrorModel(1e-5, 2e-4, 1.5))
    n = s.g.register_bytes
    s.reset()
    s.comment("a fresh part: a page read at 1 P/E cycle")
    s.erase(s.row(0, 2, 0))
    s.program(s.row(0, 2, 0), pat=(70, n))
    s.read(s.row(0, 2, 0), 0, n, pat=(70, n))
    s.stats()
    s.comment("pre-cycled 3000 times: the same page reads as a worn block's")
    s.precycle(3000)
    s.read(s.row(0, 2, 0), 0, n, pat=(70, n))
    s.stats()
    s.comment("the P/E limit (3003) counts the pre-cycling: the third erase from now FAILs")
    for _ in range(3):
        s.erase(s.row(0, 2, 0))
        s.status()
    s.program(s.row(0, 2, 0), pat=(71, n))
    s.status()
    s.comment("a block never erased here has the pre-cycling too")
    s.erase(s.row(1, 5, 0))
    s.program(s.row(1, 5, 0), pat=(72, n))
    s.read(s.row(1, 5, 0), 0, n, pat=(72, n))
    s.stats()
    return s


def _sc_fault_bit_errors():
    s = Scenario("fault_bit_errors", seed=14, bit_errors=BitErrorModel(1e-6, 0.0, 1.0))
    n = s.g.register_bytes
    s.reset()
    for lun in (0, 1):
        s.erase(s.row(lun, 2, 0))
        s.program(s.row(lun, 2, 0), pat=(80 + lun, n))
    s.comment("injected bit errors on LUN 1: its reads flip 1e-3 more, LUN 0's do not")
    s.bit_errors_fault(1, 1e-3)
    for lun in (0, 1, 1):
        s.read(s.row(lun, 2, 0), 0, n, pat=(80 + lun, n))
        s.stats()
    s.comment("the fault ends: LUN 1 reads as before")
    s.bit_errors_fault(1, 0.0)
    s.read(s.row(1, 2, 0), 0, n, pat=(81, n))
    s.stats()
    s.comment("LUN 1 fails: noise from a programmed and an erased page, program and erase FAIL")
    s.die_fail(1)
    s.read(s.row(1, 2, 0), 0, 64)
    s.read(s.row(1, 3, 0), 0, 16)
    s.program(s.row(1, 2, 1), pat=(82, 16))
    s.status()
    s.erase(s.row(1, 4, 0))
    s.status()
    s.comment("LUN 0 is unharmed")
    s.read(s.row(0, 2, 0), 0, n, pat=(80, n))
    s.erase(s.row(0, 4, 0))
    s.status()
    s.stats()
    return s


def _sc_fault_stuck_busy():
    s = Scenario("fault_stuck_busy", seed=15)
    n = 64
    s.reset()
    s.erase(s.row(0, 2, 0))
    s.comment("LUN 1 hangs at its next busy period: an erase that never ends; R/B# stays low, "
              "70h shows RDY = ARDY = 0, 78h on LUN 0 shows it ready")
    s.stuck(1, True)
    s.erase(s.row(1, 2, 0), wait=False)
    s.advance(20e6)
    s.rb()
    s.status()
    s.status_enhanced(s.row(0, 0, 0))
    s.comment("RESET brings it back: busy tRST (longer: an erase was under way), then ready")
    s.reset()
    s.rb()
    s.erase(s.row(1, 2, 0))
    s.status()
    s.program(s.row(1, 2, 0), pat=(90, n))
    s.read(s.row(1, 2, 0), 0, n, pat=(90, n))
    s.comment("LUN 0 hung for good: a program never ends, nor the RESET after it")
    s.stuck(0, False)
    s.program(s.row(0, 2, 0), pat=(91, n), wait=False)
    s.advance(20e6)
    s.rb()
    s.reset(wait=False)
    s.advance(20e6)
    s.rb()
    s.status()
    s.comment("a power cut: still hung once the RESET after power-on makes it busy")
    s.power_cut()
    s.rb()
    s.reset(wait=False)
    s.advance(20e6)
    s.rb()
    s.stats()
    return s


def _sc_retention_retry():
    model = BitErrorModel(1e-6, 2e-5, 1.5, retention_shift=0.2, rber_shift=1e-3,
                          rber_per_kread=2e-3, retry_levels=8)
    s = Scenario("retention_retry", seed=11, strict=False, bit_errors=model)
    n = s.g.register_bytes
    s.reset()
    s.comment("a worn block (3000 P/E), a page read fresh, then after a year's bake")
    s.wear(0, 2, 3000)
    s.erase(s.row(0, 2, 0))
    s.program(s.row(0, 2, 0), pat=(60, n))
    s.read(s.row(0, 2, 0), 0, n, pat=(60, n))
    s.bake(8760.0)
    s.read(s.row(0, 2, 0), 0, n, pat=(60, n))
    s.stats()
    s.comment("read retry (SET FEATURES 89h): the level near the shift, one past it, back")
    for level in (3, 7, 0, 3):
        s.set_features(0x89, [level, 0, 0, 0])
        s.read(s.row(0, 2, 0), 0, n, pat=(60, n))
        s.stats()
    s.get_features(0x89)
    s.comment("a page written after the bake is young: its errors at level 3 are the shift's")
    s.program(s.row(0, 2, 1), pat=(61, n))
    s.read(s.row(0, 2, 1), 0, n, pat=(61, n))
    s.comment("the level stays over RESET; a level the part lacks is refused")
    s.reset()
    s.get_features(0x89)
    s.set_features(0x89, [8, 0, 0, 0])
    s.get_features(0x89)
    s.comment("read disturb: 20 K reads of the block since its erase")
    s.set_features(0x89, [0, 0, 0, 0])
    s.wear(0, 3, 0)
    s.erase(s.row(0, 3, 0))
    s.program(s.row(0, 3, 0), pat=(62, n))
    s.read(s.row(0, 3, 0), 0, n, pat=(62, n))
    s.disturb(0, 3, 20000)
    s.read(s.row(0, 3, 0), 0, n, pat=(62, n))
    s.stats()
    s.comment("an erase resets retention and disturb: the page reads clean again")
    s.erase(s.row(0, 3, 0))
    s.program(s.row(0, 3, 0), pat=(63, n))
    s.read(s.row(0, 3, 0), 0, n, pat=(63, n))
    s.comment("a power cut loses the read-retry level")
    s.set_features(0x89, [5, 0, 0, 0])
    s.power_cut()
    s.reset()
    s.get_features(0x89)
    s.read(s.row(0, 2, 0), 0, 64)
    s.stats()
    return s


# Pin-level waveforms for the interface timing checker ------------------------------------

def _waveform(s, t0, mode, short=None, kinds=("cmd", "addr", "data", "dout", "dout")):
    """A controller waveform in SDR `mode` from t0 (ns): CE# low, write cycles (command,
    address, data in) and data-out cycles, CE# high; each edge is placed at the minimum the
    mode allows. `short` = (parameter, ns) uses a shorter value for one parameter (tWP, tWH
    and tRP, tREH also shorten the cycle tWC / tRC so the shortening shows)."""
    from spec.onfi_timing import SDR_MODES
    t = dict(vars(SDR_MODES[mode]))
    if short is not None:
        t[short[0]] = short[1]
        if short[0] in ("tWP", "tWH"):
            t["tWC"] = t["tWP"] + t["tWH"]
        if short[0] in ("tRP", "tREH"):
            t["tRC"] = t["tRP"] + t["tREH"]
    events = [(t0, "ce_n", 0)]
    setup = max(t["tCLS"], t["tALS"], t["tDS"], t["tWP"])
    hold = max(t["tCLH"], t["tALH"], t["tDH"])
    rise = t0 + max(t["tCS"], setup)
    last_rise = last_kind = re_rise = None
    first = True
    for kind in kinds:
        if kind == "dout":
            fall = max(last_rise + t["tWHR"], (re_rise or 0) + max(t["tREH"], 0))
            if re_rise is not None:
                fall = max(fall, re_rise + t["tREH"], re_rise - t["tRP"] + t["tRC"])
            events += [(fall, "re_n", 0), (fall + t["tRP"], "re_n", 1)]
            re_rise = fall + t["tRP"]
            continue
        if not first:
            rise = max(last_rise + t["tWC"], last_rise + t["tWH"] + t["tWP"],
                       last_rise + hold + setup)
            if re_rise is not None:
                rise = max(rise, re_rise + t["tRHW"] + t["tWP"])
        if kind == "data" and last_kind == "addr":
            rise = max(rise, last_rise + t["tADL"])
        first = False
        pin = {"cmd": "cle", "addr": "ale", "data": None}[kind]
        byte = {"cmd": 0x90, "addr": 0x00, "data": 0x5A}[kind]
        if pin:
            lead = t["tCLS"] if pin == "cle" else t["tALS"]
            lag = t["tCLH"] if pin == "cle" else t["tALH"]
            events += [(rise - lead, pin, 1), (rise + lag, pin, 0)]
        events += [(rise - t["tDS"], "dq", byte), (rise + t["tDH"], "dq", None),
                   (rise - t["tWP"], "we_n", 0), (rise, "we_n", 1)]
        last_rise, last_kind = rise, kind
    end = max(last_rise + max(t["tCH"], hold), (re_rise or 0) + t["tRHOH"])
    events.append((end, "ce_n", 1))
    state = {"ce_n": 1, "cle": 0, "ale": 0, "we_n": 1, "re_n": 1, "dq": None}
    order = {"ce_n": 0, "cle": 1, "ale": 1, "dq": 1, "we_n": 2, "re_n": 2}
    events.sort(key=lambda e: (e[0], order[e[1]]))
    i = 0
    while i < len(events):
        when = events[i][0]
        while i < len(events) and events[i][0] == when:
            state[events[i][1]] = events[i][2]
            i += 1
        s.pins(when, state["ce_n"], state["cle"], state["ale"], state["we_n"], state["re_n"],
               state["dq"])
    return end + t["tCEH"] + 1000


def _sc_timing():
    s = Scenario("timing", seed=11, require_reset=False)
    s.comment("interface timing checker: clean waveforms in every SDR mode (SET FEATURES), "
              "then one parameter violated at a time")
    now = 1000.0
    for mode in range(6):
        if mode:
            s.r.now_ps = max(s.r.now_ps, round(now * 1000))
            s.set_features(0x01, [mode, 0, 0, 0])
            s.mode()
            now = s.r.now_ps / 1000 + 1000
        now = _waveform(s, now, mode)
        now = _waveform(s, now, mode, kinds=("cmd", "dout"))
    from spec.onfi_timing import SDR_MODES
    for mode in (0, 3, 5):
        s.r.now_ps = max(s.r.now_ps, round(now * 1000))
        s.set_features(0x01, [mode, 0, 0, 0])
        s.mode()
        now = s.r.now_ps / 1000 + 1000
        m = SDR_MODES[mode]
        for param in ("tWP", "tWH", "tWC", "tCLS", "tCLH", "tALS", "tALH", "tDS", "tDH", "tCS",
                      "tCH", "tREH", "tRC",
                      "tADL", "tWHR", "tRP", "tRHW"):
            value = getattr(m, param)
            now = _waveform(s, now, mode, short=(param, max(0.0, value / 2 - 0.5)))
    s.comment("tRR: R/B# rising to RE# falling; tREH/tRC; tCCS after E0h; protocol")
    now += 100
    # a command first: tRR is checked at the first RE# of a data output, not inside a burst
    s.pins(now, 0, 1, 0, 0, 1, 0x00, 0)
    s.pins(now + 30, 0, 1, 0, 1, 1, 0x00, 0)
    s.pins(now + 40, 0, 0, 0, 1, 1, None, 0)
    now += 200
    s.pins(now, 0, 0, 0, 1, 1, None, 0)
    s.pins(now + 100, 0, 0, 0, 1, 1, None, 1)
    s.pins(now + 105, 0, 0, 0, 1, 0, None, 1)
    s.pins(now + 105 + 10, 0, 0, 0, 1, 1, None, 1)
    s.pins(now + 105 + 15, 0, 0, 0, 1, 0, None, 1)
    s.pins(now + 105 + 30, 0, 0, 0, 1, 1, None, 1)
    s.pins(now + 200, 0, 1, 0, 0, 1, 0xE0)
    s.pins(now + 300, 0, 1, 0, 1, 1, 0xE0)
    s.pins(now + 400, 0, 0, 0, 1, 1, None)
    s.pins(now + 600, 0, 0, 0, 1, 0, None)
    s.pins(now + 700, 0, 0, 0, 0, 0, None)
    s.pins(now + 800, 0, 1, 1, 1, 1, 0x00)
    s.pins(now + 900, 0, 0, 0, 1, 1, None)
    s.pins(now + 2000, 1, 0, 0, 1, 1, None)
    return s


# NV-DDR2 ------------------------------------------------------------------------------------

def _sc_nvddr2():
    s = Scenario("nvddr2", seed=21)
    s.comment("NV-DDR2 at byte level: the switch on SET FEATURES 01h (P1 = 20h | mode) once "
              "the die is ready, READ ID / GET FEATURES / parameter page bytes on both DQS "
              "edges (twice each), status live on every edge, SET FEATURES parameters twice, "
              "data in and out one byte per DQS edge, mode changes, RESET back to SDR mode 0")
    s.reset()
    s.set_features(0x01, [0x24, 0, 0, 0], wait=False)
    s.mode()                            # still SDR: the switch waits for R/B#
    s.wait_rb()
    s.mode()
    s.get_features(0x01)
    s.read_id(0x00, 10)
    s.read_id(0x20, 8)
    s.read_id(0x00, 14)                 # past the ID bytes: garbage
    s.cmd(0x70)
    s.dout(2)
    s.param_page(512)
    g = s.g
    rows = [s.row(lun, 3, 0) for lun in range(g.luns)]
    for i, row in enumerate(rows):
        s.erase(row)
        s.program(row, pat=(210 + i, g.register_bytes))
    for i, row in enumerate(rows):
        s.read(row, 0, g.register_bytes, pat=(210 + i, g.register_bytes))
    s.read(rows[0], 100, 16)
    s.change_col(1000)
    s.dout(8)
    s.change_col(40, rows[1])
    s.dout(8)
    s.status_enhanced(rows[1])
    s.program(s.row(0, 3, 1), pat=(220, 64), chunks=[(512, bytes(range(16)))])
    s.read(s.row(0, 3, 1), 500, 32)
    s.comment("mode 7 set in NV-DDR2, then SDR mode 2 set in NV-DDR2, NV-DDR2 mode 0 again")
    s.set_features(0x01, [0x27, 0, 0, 0])
    s.mode()
    s.get_features(0x01)
    s.read(rows[1], 0, 64)
    s.set_features(0x01, [0x02, 0, 0, 0])
    s.mode()
    s.get_features(0x01)
    s.read(rows[1], 0, 8)
    s.set_features(0x01, [0x20, 0, 0, 0])
    s.mode()
    s.comment("rules in NV-DDR2: an illegal mode, output while busy, data without a command, "
              "program out of order")
    s.set_features(0x01, [0x28, 0, 0, 0])
    s.mode()
    s.cmd(0xEC)
    s.addr(0x00)
    s.dout(2)
    s.wait_rb()
    s.din(bytes([0x11, 0x22]))
    s.program(s.row(0, 3, 5), pat=(230, 32))
    s.comment("RESET returns to SDR mode 0")
    s.reset(wait=False)
    s.mode()
    s.wait_rb()
    s.mode()
    s.read_id(0x00, 5)
    s.stats()
    return s


def _waveform_nvddr2(s, t0, mode, short=None):
    """A controller waveform in NV-DDR2 `mode` from t0 (ns): CE# low, a command and an
    address latch (WE#), a 4-byte data-in burst on DQS (preamble, edges, postamble), a
    command latch, a 4-byte data-out burst on RE# (preamble, edges, postamble), CE# high; each
    edge at the minimum the mode allows. `short` = (parameter, ns) uses a shorter value for
    one parameter; returns the time the next waveform may start."""
    from spec.onfi_timing import NVDDR2_MODES
    t = dict(vars(NVDDR2_MODES[mode]))
    p = short[0] if short is not None else None
    if short is not None:
        t[p] = short[1]
        if p == "tWH":                  # WE# low longer, so the cycle still meets tWC
            t["tWP"] = t["tWC"] - t["tWH"]
    ev = [(t0, "ce_n", 0)]
    setup = max(t["tCALS"], t["tCAS"], t["tWP"])
    hold = max(t["tCALH"], t["tCAH"])
    rises = []

    def latch(rise, pin, byte):
        ev.extend([(rise - t["tCALS"], pin, 1), (rise + t["tCALH"], pin, 0),
                   (rise - t["tCAS"], "dq", byte), (rise + t["tCAH"], "dq", None),
                   (rise - t["tWP"], "we_n", 0), (rise, "we_n", 1)])
        rises.append(rise)

    def next_rise(after, earliest=0.0):
        return max(after + t["tWC"], after + t["tWH"] + t["tWP"], after + hold + setup,
                   earliest)

    latch(t0 + max(t["tCS"], setup), "cle", 0x80)
    latch(next_rise(rises[-1]), "ale", 0x00)
    # data in: DQS low (preamble), edges alternating high / low, DQ set tDS before each edge
    high = low = t["tDSC"] / 2          # tDQSH / tDQSL are 0.43 of it
    if p == "tDQSH":
        high, low = t["tDQSH"], t["tDSC"] - t["tDQSH"]
    if p == "tDQSL":
        high, low = t["tDSC"] - t["tDQSL"], t["tDQSL"]
    e = max(rises[-1] + t["tADL"], t0 + t["tCS"])
    ev.append((e - t["tWPRE"], "dqs", 0))
    edges = [e, e + high, e + high + low, e + 2 * high + low]
    for k, edge in enumerate(edges):
        at = edge - t["tDS"] if k == 0 or p == "tDS" else edges[k - 1] + t["tDH"]
        ev += [(at, "dq", 0xA0 + k), (edge, "dqs", 1 - k % 2)]
    ev += [(edges[-1] + t["tDH"], "dq", None), (edges[-1] + t["tWPST"], "dqs", None)]
    wpst_end = edges[-1] + t["tWPST"]
    latch(next_rise(rises[-1], wpst_end + t["tWPSTH"] + t["tWP"]), "cle", 0x70)
    # data out: RE# low (preamble), a rising edge tRPRE later, then alternating edges, the
    # postamble (RE# low tRPST), RE# high
    high = low = t["tRC"] / 2           # tREH / tRP are 0.43 of it
    if p == "tREH":
        high, low = t["tREH"], t["tRC"] - t["tREH"]
    if p == "tRP":
        high, low = t["tRC"] - t["tRP"], t["tRP"]
    r0 = rises[-1] + t["tWHR"]
    ev.append((r0, "re_n", 0))
    a = [r0 + t["tRPRE"]]
    a += [a[0] + high, a[0] + high + low, a[0] + 2 * high + low]
    ev += [(x, "re_n", 1 - k % 2) for k, x in enumerate(a)]
    post = a[-1] + t["tRPST"]
    ev.append((post, "re_n", 1))
    end = max(post + t["tRPSTH"], rises[-1] + t["tCH"])
    ev.append((end, "ce_n", 1))
    state = {"ce_n": 1, "cle": 0, "ale": 0, "we_n": 1, "re_n": 1, "dq": None, "dqs": None}
    order = {"ce_n": 0, "cle": 1, "ale": 1, "dq": 1, "dqs": 2, "we_n": 2, "re_n": 2}
    ev.sort(key=lambda x: (x[0], order[x[1]]))
    i = 0
    while i < len(ev):
        when = ev[i][0]
        while i < len(ev) and ev[i][0] == when:
            state[ev[i][1]] = ev[i][2]
            i += 1
        s.pins(when, state["ce_n"], state["cle"], state["ale"], state["we_n"], state["re_n"],
               state["dq"], dqs=state["dqs"])
    return end + t["tCEH"] + 1000


def _nv_mode(s, now, value):
    s.r.now_ps = max(s.r.now_ps, round(now * 1000))
    s.set_features(0x01, [value, 0, 0, 0])
    s.mode()
    return s.r.now_ps / 1000 + 1000


def _sc_nvddr2_timing():
    from spec.onfi_timing import NVDDR2_MODES
    s = Scenario("nvddr2_timing", seed=22, require_reset=False)
    s.comment("NV-DDR2 interface timing checker: clean waveforms in every NV-DDR2 mode, then "
              "one parameter violated at a time (modes 0, 4, 7), then the rules a waveform "
              "cannot show alone (tCR, tRPST, tRHW, tRR, tCCS, tCH) and protocol errors")
    now = 1000.0
    for mode in range(8):
        now = _nv_mode(s, now, 0x20 | mode)
        now = _waveform_nvddr2(s, now, mode)
    for mode in (0, 4, 7):
        now = _nv_mode(s, now, 0x20 | mode)
        m = NVDDR2_MODES[mode]
        for param in ("tWP", "tWH", "tWC", "tCALS", "tCALH", "tCAS", "tCAH", "tCS", "tADL",
                      "tWPRE", "tDS", "tDH", "tDQSH", "tDQSL", "tDSC", "tWPST", "tWPSTH",
                      "tWHR", "tRPRE", "tRP", "tREH", "tRC", "tRPSTH"):
            value = getattr(m, param)
            if param in ("tDSC", "tRC"):
                value = 0.93 * value            # its halves still meet tDQSH/L, tREH/tRP
            elif param in ("tDS", "tDH"):
                value = value / 2               # DQ must still change between the edges
            elif param in ("tDQSH", "tDQSL"):
                value = max(value / 2 - 0.5, m.tDS + m.tDH)     # DQ still meets tDS/tDH
            else:
                value = max(0.0, value / 2 - 0.5)
            s.comment(f"mode {mode}: {param} {value:g} ns")
            now = _waveform_nvddr2(s, now, mode, short=(param, value))
    m = NVDDR2_MODES[7]
    s.comment("tCR: RE# low right after CE#; tRPST: RE# high too early to end a burst "
              "(seen at WE# low)")
    now += 100
    s.pins(now, 0, 0, 0, 1, 1, None)
    s.pins(now + 2, 0, 0, 0, 1, 0, None)
    s.pins(now + 20, 0, 0, 0, 1, 1, None)
    s.pins(now + 23, 0, 0, 0, 1, 0, None)
    s.pins(now + 26, 0, 0, 0, 1, 1, None)
    s.pins(now + 200, 0, 0, 0, 0, 1, None)
    s.pins(now + 220, 0, 1, 0, 0, 1, 0x00)
    s.pins(now + 240, 0, 1, 0, 1, 1, 0x00)
    s.pins(now + 260, 0, 0, 0, 1, 1, None)
    s.pins(now + 400, 1, 0, 0, 1, 1, None)
    now += 1000
    s.comment("tRR: R/B# rising to the read preamble; tRHW: RE# high to WE# low; tCCS: E0h "
              "to the read preamble")
    s.pins(now, 0, 0, 0, 1, 1, None, 0)
    s.pins(now + 100, 0, 0, 0, 1, 1, None, 1)
    s.pins(now + 105, 0, 0, 0, 1, 0, None, 1)
    s.pins(now + 125, 0, 0, 0, 1, 1, None, 1)
    s.pins(now + 128, 0, 0, 0, 1, 0, None, 1)
    s.pins(now + 160, 0, 0, 0, 1, 1, None, 1)       # postamble end
    s.pins(now + 200, 0, 1, 0, 1, 1, 0xE0)
    s.pins(now + 220, 0, 1, 0, 0, 1, 0xE0)          # tRHW 60 < 100
    s.pins(now + 240, 0, 1, 0, 1, 1, 0xE0)
    s.pins(now + 260, 0, 0, 0, 1, 1, None)
    s.pins(now + 400, 0, 0, 0, 1, 0, None)          # tCCS 160 < 400
    s.pins(now + 420, 0, 0, 0, 1, 1, None)
    s.pins(now + 423, 0, 0, 0, 1, 0, None)
    s.pins(now + 460, 0, 0, 0, 1, 1, None)
    s.pins(now + 600, 1, 0, 0, 1, 1, None)
    now += 1000
    s.comment("protocol: DQS driven high, data on WE#, DQS driven in a read, CE# high in a "
              "write burst, DQS released high, tCH")
    s.pins(now, 0, 0, 0, 1, 1, None)
    s.pins(now + 30, 0, 0, 0, 1, 1, 0x11, dqs=1)
    s.pins(now + 60, 0, 0, 0, 0, 1, 0x11, dqs=1)
    s.pins(now + 80, 0, 0, 0, 1, 1, 0x11, dqs=1)
    s.pins(now + 100, 0, 0, 0, 1, 1, None)
    s.pins(now + 200, 0, 0, 0, 1, 0, None, dqs=0)
    s.pins(now + 240, 0, 0, 0, 1, 1, None)
    s.pins(now + 300, 0, 1, 0, 0, 1, 0x00)
    s.pins(now + 330, 0, 1, 0, 1, 1, 0x00)
    s.pins(now + 331, 1, 0, 0, 1, 1, None)
    s.pins(now + 400, 0, 0, 0, 1, 1, None)
    s.pins(now + 430, 0, 0, 0, 1, 1, 0x22, dqs=0)
    s.pins(now + 460, 1, 0, 0, 1, 1, 0x22, dqs=0)
    return s


def _sc_random():
    s = Scenario("random", seed=12, strict=False, factory_bad_block_rate=0.05, pe_limit=40,
                 bit_errors=BitErrorModel(1e-6, 5e-5, 1.0))
    g = s.g
    rng = random.Random(1234)
    s.reset()
    s.comment("seeded random stream: program/read/erase/multi-plane/cache/illegal ops")
    next_page = {}
    for i in range(160):
        lun = rng.randrange(g.luns)
        block = rng.randrange(g.blocks_per_lun)
        op = rng.choice(["prog", "prog", "prog", "read", "read", "erase", "mp_erase",
                         "mp_prog", "illegal", "status", "cache", "wear", "mode"])
        page = next_page.get((lun, block), 0)
        if op == "prog" and page < g.pages_per_block:
            n = rng.choice([16, 100, g.register_bytes])
            s.program(s.row(lun, block, page), pat=(1000 + i, n), col=0)
            next_page[(lun, block)] = page + 1
            s.status()
        elif op == "read":
            p = rng.randrange(g.pages_per_block)
            col = rng.randrange(g.register_bytes - 40)
            s.read(s.row(lun, block, p), col, rng.choice([8, 40]))
        elif op == "erase":
            s.erase(s.row(lun, block, 0))
            next_page[(lun, block)] = 0
            s.status()
        elif op == "mp_erase":
            b0 = block & ~1
            s.erase(s.row(lun, b0, 0), confirm=0xD1)
            s.erase(s.row(lun, b0 + 1, 0))
            next_page[(lun, b0)] = next_page[(lun, b0 + 1)] = 0
            s.status()
        elif op == "mp_prog":
            b0 = block & ~1
            p = max(next_page.get((lun, b0), 0), next_page.get((lun, b0 + 1), 0))
            if p < g.pages_per_block:
                s.program(s.row(lun, b0, p), pat=(2000 + i, 64), confirm=0x11)
                s.program(s.row(lun, b0 + 1, p), pat=(3000 + i, 64))
                s.status()
                s.read(s.row(lun, b0, p), 0, 0, confirm=0x32)
                s.read(s.row(lun, b0 + 1, p), 0, 70)
                s.change_col(0, s.row(lun, b0, p))
                s.dout(70)
        elif op == "illegal":
            s.program(s.row(lun, block, rng.randrange(g.pages_per_block)), pat=(4000 + i, 8))
            s.status()
        elif op == "cache":
            s.read(s.row(lun, block, 0), 0, 4)
            s.cmd(0x31)
            s.wait_rb()
            s.dout(20)
            s.cmd(0x3F)
            s.wait_rb()
            s.dout(20)
        elif op == "wear":
            s.wear(lun, block, rng.randrange(60))
        elif op == "mode":
            s.set_features(0x01, [rng.randrange(6), 0, 0, 0])
            s.mode()
        else:
            s.status_enhanced(s.row(lun, 0, 0))
        if rng.random() < 0.2:
            s.advance(rng.randrange(1, 2_000_000))
    s.stats()
    return s


def _sc_edges():
    timing = NandArrayTiming(t_r_ns=90_000, t_r_lower_ns=50_000, t_r_upper_ns=120_000,
                             t_prog_ns=1_300_000, t_prog_lower_ns=600_000,
                             t_prog_upper_ns=2_000_000, t_bers_ns=2_500_000)
    s = Scenario("edges", seed=13, timing=timing, strict=False, factory_bad_block_rate=0.2)
    g = s.g
    s.reset()
    s.comment("per page type tR/tPROG (lower even, upper odd pages)")
    s.erase(s.row(1, 3, 0))
    for page in range(4):
        s.program(s.row(1, 3, page), pat=(60 + page, 32))
    for page in range(4):
        s.read(s.row(1, 3, page), 0, 32, pat=(60 + page, 32))
    s.comment("multi-plane read of two upper pages (tR upper); 06h-E0h on LUN 1")
    s.read(s.row(1, 2, 1), 0, 0, confirm=0x32)
    s.read(s.row(1, 3, 1), 0, 0)
    s.change_col(0, s.row(1, 3, 1))
    s.dout(8)
    s.comment("85h with a row: the data goes to another page of the plane")
    s.program(s.row(1, 3, 4), bytes(range(8)), chunks=[(16, b"\x01\x02")])
    s.read(s.row(1, 3, 4), 0, 20)
    s.comment("cache read past the last page; 00h-31h to another LUN; 3Fh after RESET")
    s.read(s.row(1, 3, g.pages_per_block - 1), 0, 2)
    s.cmd(0x31)
    s.read(s.row(0, 3, 0), 0, 0, confirm=0x31)
    s.reset()
    s.cmd(0x3F)
    s.comment("data output while busy (parameter page before R/B#), features before ready")
    s.cmd(0xEC)
    s.addr(0x00)
    s.dout(2)
    s.wait_rb()
    s.dout(2)
    s.set_features(0x01, [4, 0, 0, 0], wait=False)
    s.mode()
    s.status()
    s.wait_rb()
    s.mode()
    s.comment("NV-DDR2 interface bits (10b) accepted as a feature value; RESET back to SDR")
    s.set_features(0x01, [0x21, 0, 0, 0])
    s.mode()
    s.reset()
    s.mode()
    s.comment("lenient multi-plane program with a factory bad plane: FAIL, the good plane kept")
    bad = [b for b in s.die.factory_bad_blocks(0) if b >= 2]
    if bad:
        b = bad[0]
        mate = b ^ 1
        s.erase(s.row(0, mate, 0))
        s.program(s.row(0, min(b, mate), 0), pat=(70, 16), confirm=0x11)
        s.program(s.row(0, max(b, mate), 0), pat=(71, 16))
        s.status()
        s.read(s.row(0, mate, 0), 0, 16)
    s.comment("cache program interrupted by RESET, then erase during RESET-busy")
    s.erase(s.row(0, 5, 0))
    s.program(s.row(0, 5, 0), pat=(72, 64), confirm=0x15, wait=False)
    s.program(s.row(0, 5, 1), pat=(73, 64), confirm=0x15, wait=False)
    s.wait_rb()
    s.program(s.row(0, 5, 1), pat=(74, 64), confirm=0x15, wait=False)
    s.advance(2000)
    s.reset(wait=False)
    s.erase(s.row(0, 5, 0), wait=False)
    s.wait_rb()
    s.read(s.row(0, 5, 0), 0, 64)
    s.read(s.row(0, 5, 1), 0, 64)
    s.stats()
    return s


# TLC page types (lower, middle, upper by page % 3) with a distinct tR and tPROG per type and
# per corner, so a model that maps a page to the wrong type, or runs the wrong corner, waits
# a different time. Some values are left to the fallbacks: middle tR typical is the uniform
# typical; upper tPROG has no typical value, so it programs at its maximum in both corners.
TLC = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=12, blocks_per_plane=8,
                   planes=2, luns=2, bits_per_cell=3)
TLC_TIMING = NandArrayTiming(
    t_r_ns=95_000, t_r_lower_ns=60_000, t_r_middle_ns=80_000, t_r_upper_ns=110_000,
    t_r_typ_ns=70_000, t_r_lower_typ_ns=40_000, t_r_upper_typ_ns=90_000,
    t_prog_ns=3_000_000, t_prog_lower_ns=900_000, t_prog_middle_ns=1_800_000,
    t_prog_upper_ns=2_700_000, t_prog_lower_typ_ns=500_000, t_prog_middle_typ_ns=1_200_000,
    t_bers_ns=2_500_000)
MLC_TIMING = NandArrayTiming(
    t_r_ns=90_000, t_r_lower_ns=70_000, t_r_upper_ns=120_000, t_r_lower_typ_ns=45_000,
    t_r_upper_typ_ns=85_000, t_prog_ns=1_300_000, t_prog_lower_ns=800_000,
    t_prog_upper_ns=2_400_000, t_prog_lower_typ_ns=500_000, t_prog_upper_typ_ns=2_000_000,
    t_bers_ns=2_500_000)


def _page_types(name, geometry, timing, typical):
    timing = replace(timing, typical=typical)
    s = Scenario(name, geometry=geometry, timing=timing, seed=15)
    g = s.g
    corner = "typical" if typical else "maximum"
    types = ", ".join(f"{p}: {g.page_type(p)}" for p in range(g.bits_per_cell))
    s.comment(f"per page type tR/tPROG, {corner} values; page % {g.bits_per_cell} -> {types}")
    s.reset()
    for lun in (0, 1):
        s.erase(s.row(lun, 2, 0))
    n = 2 * g.bits_per_cell
    for page in range(n):
        s.comment(f"page {page} ({g.page_type(page)}): tPROG {timing.t_prog(g.page_type(page))}"
                  f" ns, tR {timing.t_r(g.page_type(page))} ns")
        s.program(s.row(0, 2, page), pat=(90 + page, 32))
    for page in range(n):
        s.read(s.row(0, 2, page), 0, 32, pat=(90 + page, 32))
    s.comment("multi-plane program and read of the last type: both planes' pages, one busy")
    s.erase(s.row(1, 3, 0))
    last = g.bits_per_cell - 1
    for page in range(last + 1):
        s.program(s.row(1, 2, page), pat=(100 + page, 16), confirm=0x11)
        s.program(s.row(1, 3, page), pat=(110 + page, 16))
    s.read(s.row(1, 2, last), 0, 0, confirm=0x32)
    s.read(s.row(1, 3, last), 0, 0)
    s.change_col(0, s.row(1, 3, last))
    s.dout(16, pat=(110 + last, 16))
    s.comment("sequential cache read across the types: each 31h waits for the page in the "
              "array (its type's tR), then hands over the previous page")
    s.read(s.row(0, 2, 0), 0, 8, pat=(90, 8))
    for page in range(1, g.bits_per_cell + 1):
        s.cmd(0x31)
        s.wait_rb()
        s.dout(8, pat=(90 + page - 1, 8))
    s.cmd(0x3F)
    s.wait_rb()
    s.dout(8, pat=(90 + g.bits_per_cell, 8))
    s.stats()
    return s


def _sc_page_types():
    return _page_types("page_types", TLC, TLC_TIMING, True)


def _sc_page_types_max():
    return _page_types("page_types_max", TLC, TLC_TIMING, False)


def _sc_page_types_mlc():
    return _page_types("page_types_mlc", SMALL, MLC_TIMING, True)


# SLC mode (DAh prefix): SLC times distinct from every native page type and per corner, so a
# model that ignores the prefix, or times an SLC page by its page type, waits a different time.
SLC_TIMING = replace(MLC_TIMING, t_r_slc_ns=30_000, t_r_slc_typ_ns=20_000,
                     t_prog_slc_ns=450_000, t_prog_slc_typ_ns=300_000)


def _slc_ops(s, lun, slc_block, native_block, seed):
    """SLC erase, programs and reads in `slc_block`, native ones in `native_block` of the same
    LUN, then every mismatch (each FAILs a program or flags a read)."""
    g = s.g
    s.erase(s.row(lun, slc_block, 0), slc=True)
    s.status()
    for page in range(3):
        s.program(s.row(lun, slc_block, page), pat=(seed + page, 32), slc=True)
    s.status()
    for page in range(3):
        s.read(s.row(lun, slc_block, page), 0, 32, pat=(seed + page, 32), slc=True)
    s.erase(s.row(lun, native_block, 0))
    for page in range(2):
        s.program(s.row(lun, native_block, page), pat=(seed + 10 + page, 32))
        s.read(s.row(lun, native_block, page), 0, 32, pat=(seed + 10 + page, 32))
    s.comment("mismatch: DAh program of a native block (FAIL, nothing stored)")
    s.program(s.row(lun, native_block, 2), pat=(seed + 20, 16), slc=True)
    s.status()
    s.read(s.row(lun, native_block, 2), 0, 16)
    s.comment("mismatch: a program without DAh in an SLC block (FAIL)")
    s.program(s.row(lun, slc_block, 3), pat=(seed + 21, 16))
    s.status()
    s.comment("mismatch: reads in the other mode (flagged, the data as stored, the command's "
              "mode's tR)")
    s.read(s.row(lun, slc_block, 1), 0, 8, pat=(seed + 1, 8))
    s.read(s.row(lun, native_block, 1), 0, 8, pat=(seed + 11, 8), slc=True)
    s.status()
    s.comment(f"the last SLC page ({g.slc_pages_per_block - 1}), then one past it (FAIL)")
    for page in range(3, g.slc_pages_per_block):
        s.program(s.row(lun, slc_block, page), pat=(seed + 30 + page, 8), slc=True)
    s.program(s.row(lun, slc_block, g.slc_pages_per_block), pat=(seed + 40, 8), slc=True)
    s.status()
    s.read(s.row(lun, slc_block, g.slc_pages_per_block - 1), 0, 8, slc=True)


def _sc_slc():
    s = Scenario("slc", timing=SLC_TIMING, seed=16)
    g = s.g
    t = SLC_TIMING
    s.comment(f"SLC mode (DAh prefix): tPROG {t.t_prog('slc')} ns, tR {t.t_r('slc')} ns "
              f"(typical; native lower/upper tPROG {t.t_prog('lower')}/{t.t_prog('upper')}, "
              f"tR {t.t_r('lower')}/{t.t_r('upper')}); {g.slc_pages_per_block} SLC pages of "
              f"{g.pages_per_block}")
    s.reset()
    _slc_ops(s, 0, 2, 4, 300)
    s.comment("an SLC block erased natively is a native block again")
    s.erase(s.row(0, 2, 0))
    s.program(s.row(0, 2, 0), pat=(350, 16))
    s.status()
    s.comment("SLC cache program (DAh-80h-15h, DAh-80h-10h); SLC cache read (DAh-00h-30h, 31h "
              "sequential in SLC mode, DAh-00h-31h random, 3Fh)")
    s.erase(s.row(0, 6, 0), slc=True)
    for page in range(3):
        s.program(s.row(0, 6, page), pat=(360 + page, 64), confirm=0x15, wait=False, slc=True)
        s.status()
        s.wait_rb()
    s.program(s.row(0, 6, 3), pat=(363, 64), wait=False, slc=True)
    s.wait_rb()
    s.status()
    s.read(s.row(0, 6, 0), 0, 8, pat=(360, 8), slc=True)
    s.cmd(0x31)
    s.wait_rb()
    s.dout(64, pat=(360, 64))
    s.read(s.row(0, 6, 3), 0, 0, confirm=0x31, slc=True)
    s.wait_rb()
    s.dout(64, pat=(361, 64))
    s.cmd(0x3F)
    s.wait_rb()
    s.dout(64, pat=(363, 64))
    s.comment("DAh followed by a command other than 60h/80h/00h: command-sequence (the command "
              "itself still runs); DAh in the middle of a sequence")
    s.cmd(0xDA)
    s.status()
    s.cmd(0xDA)
    s.read_id(0x00, 5)
    s.cmd(0xDA)
    s.cmd(0xDA)
    s.cmd(0x00)
    s.cmd(0x70)
    s.dout(1)
    s.cmd(0x80)
    s.addr(*s.col_bytes(0), *s.row_bytes(s.row(0, 6, 4)))
    s.cmd(0xDA)
    s.cmd(0x10)
    s.status()
    s.comment("multi-plane SLC erase / program / read, a DAh per plane")
    rows = [s.row(1, 8, 0), s.row(1, 9, 0)]
    s.erase(rows[0], confirm=0xD1, slc=True)
    s.erase(rows[1], slc=True)
    s.program(rows[0], pat=(370, g.register_bytes), confirm=0x11, slc=True)
    s.program(rows[1], pat=(371, g.register_bytes), slc=True)
    s.status()
    s.read(rows[0], 0, 0, confirm=0x32, slc=True)
    s.read(rows[1], 0, 0, slc=True)
    s.dout(g.register_bytes, pat=(371, g.register_bytes))
    s.change_col(0, rows[0])
    s.dout(g.register_bytes, pat=(370, g.register_bytes))
    s.comment("multi-plane program with DAh on one plane only: that plane FAILs")
    s.program(s.row(1, 8, 1), pat=(372, 16), confirm=0x11, slc=True)
    s.program(s.row(1, 9, 1), pat=(373, 16))
    s.status()
    s.read(s.row(1, 8, 1), 0, 16, pat=(372, 16), slc=True)
    s.read(s.row(1, 9, 1), 0, 4, slc=True)
    s.comment("a mixed multi-plane erase: one SLC plane, one native")
    s.erase(s.row(1, 10, 0), confirm=0xD1, slc=True)
    s.erase(s.row(1, 11, 0))
    s.program(s.row(1, 10, 0), pat=(374, 16), confirm=0x11, slc=True)
    s.program(s.row(1, 11, 0), pat=(375, 16))
    s.status()
    s.comment("NV-DDR2 mode 4: the same on LUN 1")
    s.set_features(0x01, [0x24, 0, 0, 0])
    s.mode()
    _slc_ops(s, 1, 2, 4, 400)
    s.read(s.row(1, 8, 0), 0, 16, pat=(370, 16), slc=True)
    s.reset()
    s.mode()
    s.stats()
    return s


def _sc_sparse():
    geo = NandGeometry(page_bytes=16384, spare_bytes=1024, pages_per_block=1024,
                       blocks_per_plane=1 << 16, planes=4, luns=1, bits_per_cell=3)
    s = Scenario("sparse_4tb", geometry=geo, seed=14)
    s.comment(f"a {geo.target_bytes >> 40} TiB target: only what is written is stored")
    s.reset()
    s.param_page()
    last = geo.blocks_per_lun - 1
    for block in (0, last // 3, last):
        s.erase(s.row(0, block, 0))
        s.program(s.row(0, block, 0), pat=(block & 0xFFFF, geo.register_bytes))
        s.read(s.row(0, block, 0), 0, geo.register_bytes, pat=(block & 0xFFFF,
                                                               geo.register_bytes))
    s.read(s.row(0, last, geo.pages_per_block - 1), geo.page_bytes, 8)
    s.stats()
    return s


def _sc_big_seed():
    s = Scenario("big_seed", seed=-(2**40 + 12345), factory_bad_block_rate=0.3,
                 bit_errors=BitErrorModel(1e-4, 0.0, 1.0))
    g = s.g
    s.comment("a negative 41-bit seed: CPython's seeding (abs, two 32-bit words) and the "
              "two's complement bad-block key")
    s.reset()
    bad = s.die.factory_bad_blocks(0)
    s.comment(f"factory bad blocks of LUN 0: {bad}")
    for b in range(4):
        s.read(s.row(0, b, 0), g.page_bytes, 1)
    good = [b for b in range(g.blocks_per_lun) if b not in bad][1]
    s.erase(s.row(0, good, 0))
    s.program(s.row(0, good, 0), pat=(80, g.register_bytes))
    s.read(s.row(0, good, 0), 0, g.register_bytes)
    s.program(s.row(0, good, 1), pat=(81, g.register_bytes), wait=False)
    s.advance(100)
    s.reset()
    s.read(s.row(0, good, 1), 0, g.register_bytes)
    s.stats()
    return s


SCENARIOS = {
    "identify": _sc_identify,
    "full_part": _sc_full_part,
    "program_read": _sc_program_read,
    "multiplane": _sc_multiplane,
    "cache": _sc_cache,
    "rules_strict": _sc_rules_strict,
    "rules_lenient": _sc_rules_lenient,
    "unerased": _sc_unerased,
    "bad_blocks": _sc_bad_blocks,
    "power_cut": _sc_power_cut,
    "bit_errors": _sc_bit_errors,
    "retention_retry": _sc_retention_retry,
    "precycle": _sc_precycle,
    "fault_bit_errors": _sc_fault_bit_errors,
    "fault_stuck_busy": _sc_fault_stuck_busy,
    "timing": _sc_timing,
    "nvddr2": _sc_nvddr2,
    "nvddr2_timing": _sc_nvddr2_timing,
    "random": _sc_random,
    "edges": _sc_edges,
    "page_types": _sc_page_types,
    "page_types_max": _sc_page_types_max,
    "page_types_mlc": _sc_page_types_mlc,
    "slc": _sc_slc,
    "sparse_4tb": _sc_sparse,
    "big_seed": _sc_big_seed,
}


def generate(out_dir=VECTOR_DIR, names=None):
    """Run every scenario on the golden model and write <out_dir>/<name>.vec; returns paths."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, fn in SCENARIOS.items():
        if names and name not in names:
            continue
        s = fn()
        path = out_dir / f"{name}.vec"
        path.write_text(f"# {name}: generated by python -m sim.nand.python.nand_vectors "
                        f"generate from the golden model; do not edit\n" + s.text())
        paths.append(path)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m sim.nand.python.nand_vectors",
                                 description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="what", required=True)
    g = sub.add_parser("generate", help="write the vector files from the golden model")
    g.add_argument("--out", default=str(VECTOR_DIR))
    g.add_argument("names", nargs="*", help=f"scenarios (default all): {', '.join(SCENARIOS)}")
    c = sub.add_parser("check", help="replay vector files against the golden model")
    c.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    if args.what == "generate":
        for path in generate(args.out, args.names):
            n = run_file(path)
            print(f"{path}: {path.stat().st_size} bytes, {n} checks pass (golden)")
        return 0
    status = 0
    for f in args.files:
        try:
            n = run_file(f)
            print(f"{f}: {n} checks pass")
        except VectorError as e:
            print(f"FAIL {e}")
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())

__all__ += ["RULES"]
