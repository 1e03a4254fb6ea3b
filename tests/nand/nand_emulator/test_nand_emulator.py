# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nand_emulator, the synthesizable NAND emulator over LiteDRAM.

Under Verilator + cocotb, nand_emulator_top puts the emulator on a LiteDRAM core whose PHY is
LiteDRAM's simulation model (DDR3 at 1:4, 128-bit port, 200 MHz). A vector runner drives the
ONFI pins from the die model's vector files (sim/nand/vectors, the files the golden and the
fast model pass), a bus cycle every 25 ns (CYCLE_NS), and checks every expectation the
emulator models:

- DOUT bytes (data, status, ID, parameter page, features), PAT and CRC;
- WAIT_RB: R/B# rises no earlier than the golden model's R/B# and less than one clock (5 ns)
  later, the golden seeing every bus cycle at the same instant as the emulator; RB, MODE,
  STATS;
- RULE: the emulator's rule counter and code (the code of the last rule of a line);
- WEAR / BAD / WP through the block-table backdoor and the WP# pin.

Files the emulator cannot replay are listed in NOT_EMULATED with the reason; the test checks
that each of them really uses what it names, so the list cannot hide a file.
"""

import os
import re
import zlib
from dataclasses import replace

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time
from ssdlab_harness import BUILD_ROOT, LiteXCore, run

from sim.nand.python.nand_vectors import (
    SMALL,
    UNIFORM,
    VECTOR_DIR,
    GoldenRunner,
    _kv,
    _parse_header,
    bus_bytes,
    dout_expectation,
    make_die,
    pattern,
)
from spec.nand_geometry import PARTS

CLK_NS = 5
T_WB_CLOCKS = 100 // CLK_NS     # tWB, 100 ns
T_CCS_CLOCKS = 500 // CLK_NS    # tCCS, 500 ns: E0h to data out (the part's parameter page)
CLK_FREQ = 1e9 / CLK_NS
# the scaled part of most vector files: one tR and tPROG for every page type (UNIFORM)
PART = replace(PARTS["imft-20nm-mlc-64gbit"], geometry=SMALL, timing=UNIFORM)
EMU = dict(n_ways=1, clk_freq=CLK_FREQ, dram_data_width=128, dram_addr_width=24)

# Files the emulator does not replay, and what in them it does not model (checked below).
NOT_EMULATED = {
    "bit_errors": "raw bit errors (rber_base/rber_per_kcycle): the emulator stores pages exactly",
    "big_seed": "raw bit errors (rber_base)",
    "random": "raw bit errors (rber_base, rber_per_kcycle)",
    "retention_retry": "raw bit errors (retention, read disturb, read retry levels)",
    "precycle": "raw bit errors and a P/E limit of pre-cycled blocks (PRECYCLE)",
    "fault_bit_errors": "raw bit errors, injected on a LUN (BITERR), and a failed die "
                        "(DIE_FAIL)",
    "fault_stuck_busy": "a hung LUN (STUCK): the emulator's fault injection is its block-table "
                        "backdoor",
    "timing": "interface timing checks (PINS/TIMING): a die does not report them",
    "full_part": "the full 8 KB x 256 x 4096-block geometry: 8.6 GB, more than the card's DRAM",
    "sparse_4tb": "a 4 TB target: more than the card's DRAM",
    "nvddr2": "the NV-DDR2 interface (DQS-strobed data, doubled ID and feature bytes): the "
              "emulator's pins are SDR",
    "nvddr2_timing": "the NV-DDR2 interface's timing checks (PINS/TIMING): the emulator's pins "
                     "are SDR and a die does not report them",
    "page_types": "TLC page types (page % 3): the emulator runs a TLC part's slowest type",
    "page_types_max": "TLC page types (page % 3): the emulator runs a TLC part's slowest type",
    "page_types_mlc": "typical per page type times: a build of its own, not made (edges.vec "
                      "covers MLC page types on the emulator)",
    "slc": "the SLC-mode prefix DAh (SLC blocks, SLC tR/tPROG): the emulator does not take it",
    "power_cut": "a power cut of the die (POWER_CUT): the emulator's dies are memory on the "
                 "card with no power of their own (a drive built with it is only reset)",
}
# Lines where the emulator differs from the golden on purpose: (file, line) -> (what the
# emulator gives instead, why). The runner checks the replacement, so it cannot hide a bug.
DIVERGES = {
    ("bad_blocks", "DOUT CRC 2112 1635f4ad"): (
        "DOUT PAT 7 2112", "a program aborted by RESET keeps the data sent (the golden leaves "
                           "seeded random bytes, which a die does not promise either)"),
}


def _aborted_cache_program():
    """edges.vec: RESET aborts a cache program of pages 50h (PAT 72) and 51h (PAT 74, the
    retry after a busy refusal); the emulator keeps the data sent, the golden random bytes."""
    lines = (VECTOR_DIR / "edges.vec").read_text().splitlines()
    at = lines.index("# cache program interrupted by RESET, then erase during RESET-busy")
    douts = [ln for ln in lines[at:] if ln.startswith("DOUT ")][:4]
    for i, line in enumerate(douts):
        page, half = divmod(i, 2)
        n = len(line.split()) - 1
        sent = pattern((72, 74)[page], 64) + b"\xff" * 64
        want = " ".join(f"{b:02X}" for b in sent[half * n:(half + 1) * n])
        DIVERGES["edges", line] = (f"DOUT {want}", "a cache program aborted by RESET keeps "
                                                   "the data sent")


_aborted_cache_program()
VECTORS = sorted(VECTOR_DIR.glob("*.vec"))
EMULATED = [p for p in VECTORS if p.stem not in NOT_EMULATED]


def _part_of(path):
    header, _ = _parse_header(path.read_text().splitlines(), path)
    die = make_die(header)
    return replace(PART, geometry=die.geometry, timing=die.timing)


# One emulator build per part the files use: "small" (the scaled geometry of most files) in
# the smoke tier, "paged" (per-page-type tR/tPROG, edges.vec) in the full tier.
VARIANTS = {"small": PART, "paged": _part_of(VECTOR_DIR / "edges.vec")}


def files_of(variant):
    return [p.stem for p in EMULATED if _part_of(p) == VARIANTS[variant]]


def emulator_verilog(variant):
    """Elaborate the emulator for a variant's part into the build tree; returns the path."""
    from amaranth.back import verilog

    from rtl.nand.nand_emulator import NandEmulator
    e = NandEmulator(VARIANTS[variant], **EMU)
    out = BUILD_ROOT / "nand_emulator" / variant
    out.mkdir(parents=True, exist_ok=True)
    path = out / "nand_emulator.v"
    text = verilog.convert(e, name="nand_emulator", emit_src=False)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path, e


def core(variant):
    from rtl.nand.nand_emulator import NandEmulator
    e = NandEmulator(VARIANTS[variant], **EMU)
    e._MustUse__silence = True      # a probe for the sizes, never elaborated
    return LiteXCore("tests.nand.nand_emulator.nand_emulator_top:NandEmulatorTop",
                     "nand_emulator_top", {"variant": variant, "n_ways": e.n_ways,
                                           "index_bits": len(e.bd_index),
                                           "entry_bits": e.entry.size})


# --- the vector runner --------------------------------------------------------------------

class EmulatorBus:
    """The controller's side of the pins, one bus cycle per CYCLE_NS (5 clocks)."""

    def __init__(self, dut, golden):
        self.dut = dut
        # The golden model sees every bus cycle at the instant the emulator does, so its
        # R/B# instant (ready_ns) is the reference on this simulation's own timeline (which
        # waits where a controller waits: tWB, tCCS).
        self.golden = golden
        self.last_latch_ns = 0.0

    def _at_now(self):
        self.golden.now_ps = round(get_sim_time("ps"))

    async def idle(self, n=1):
        await ClockCycles(self.dut.clk, n)

    async def latch(self, kind, byte):
        d = self.dut
        await RisingEdge(d.clk)
        d.ce_n.value = 0
        d.cle.value = int(kind == "cmd")
        d.ale.value = int(kind == "addr")
        d.dq_o.value = byte
        d.dq_oe.value = 1
        d.we_n.value = 0
        await ClockCycles(d.clk, 2)
        d.we_n.value = 1            # the emulator sees WE# rise in this clock cycle
        self.last_latch_ns = get_sim_time("ns")
        self._at_now()
        self.golden.latch(kind, byte)
        await ClockCycles(d.clk, 2)
        d.cle.value = d.ale.value = d.dq_oe.value = 0

    async def data_out(self):
        d = self.dut
        await RisingEdge(d.clk)
        d.ce_n.value = 0
        d.re_n.value = 0
        self._at_now()
        self.golden.data_out()
        await ClockCycles(d.clk, 2)
        await ReadOnly()
        value = int(d.dq_i.value)
        await RisingEdge(d.clk)
        d.re_n.value = 1
        await ClockCycles(d.clk, 1)
        return value


class VectorFail(AssertionError):
    pass


async def backdoor(dut, op, index, entry=0):
    dut.bd_op.value = op
    dut.bd_index.value = index
    dut.bd_entry.value = entry
    dut.bd_valid.value = 1
    while True:
        await RisingEdge(dut.clk)
        if int(dut.bd_ready.value):
            break
    dut.bd_valid.value = 0


async def replay(dut, path):
    """Replay one vector file on a freshly reset emulator; returns the checks made."""
    from rtl.nand.nand_emulator import RULE_CODES, entry_layout
    lines = path.read_text().splitlines()
    header, body_at = _parse_header(lines, path)
    die = make_die(header)          # the golden's options: bad blocks from the same hash
    g = die.geometry
    part = VARIANTS[os.environ.get("NAND_EMU_VARIANT", "small")]
    assert g == part.geometry and die.timing == part.timing, f"{path.name}: another part"
    golden = GoldenRunner(make_die(header), float(header["CYCLE_NS"]))
    bus = EmulatorBus(dut, golden)
    # power on: reset the emulator, load the block table as the golden die starts
    dut.rst.value = 1
    for name, v in (("ce_n", 1), ("we_n", 1), ("re_n", 1), ("cle", 0), ("ale", 0),
                    ("dq_o", 0), ("dq_oe", 0), ("wp_n", 1), ("bd_valid", 0),
                    ("cfg_strict", int(die.strict)), ("cfg_require_reset", int(die.require_reset)),
                    ("cfg_pe_limit", die.pe_limit or 0)):
        getattr(dut, name).value = v
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 2)
    lay = entry_layout(g.pages_per_block)
    bb, lb = g.block_bits, max(1, g.lun_bits)
    for lun in range(g.luns):
        for block in range(g.blocks_per_lun):
            fields = {"next_page": 0, "erased": int(die.luns[lun]._factory_erased), "bad": 0,
                      "fbad": int(die.is_factory_bad(lun, block)), "pe": 0}
            await backdoor(dut, 0, (lun << bb) | block, lay.const(fields).as_value().value)
    assert lb >= 1

    seen = int(dut.rule_count.value)
    pend = []
    checks = 0
    worst_late = 0.0
    # busy times, and a cache operation's (the array's time, then tCBSY/tRCBSY)

    def fail(lineno, expected, got):
        raise VectorFail(f"{path.name}:{lineno}: expected {expected}, got {got}")

    async def take_rules():
        nonlocal seen
        await bus.idle(T_WB_CLOCKS)     # the engine has decided within tWB of the latch
        count = int(dut.rule_count.value)
        code = int(dut.rule_code.value)
        pend.extend([RULE_CODES[code]] * ((count - seen) & 0xFFFF))
        seen = count

    for lineno in range(body_at + 1, len(lines) + 1):
        line = lines[lineno - 1].split("#", 1)[0].strip()
        if not line:
            continue
        if (path.stem, line) in DIVERGES:
            line = DIVERGES[path.stem, line][0]
        key, *args = line.split()
        if key == "RULE":
            checks += 1
            if not pend:
                fail(lineno, f"NAND rule {args[0]}", "no violation")
            got = pend.pop(0)
            if got != args[0] and len(pend) == 0:
                fail(lineno, f"NAND rule {args[0]}", got)
            continue
        if pend:
            fail(lineno, "no unclaimed NAND rule violation", pend)
        if key in ("CMD", "ADDR", "DIN"):
            kind, data = bus_bytes(key, args)
            for b in data:
                await bus.latch(kind, b)
            if key == "CMD" and args[-1].upper() == "E0":
                await bus.idle(T_CCS_CLOCKS)    # a controller waits tCCS after E0h
        elif key == "DOUT":
            checks += 1
            want, n, crc = dout_expectation(args)
            if want is not None:
                got = [await bus.data_out() for _ in want]
                for i, (a, b) in enumerate(zip(want, got, strict=True)):
                    if a is not None and a != b:
                        fail(lineno, f"byte {i} = {a:02X}", f"{b:02X}")
            else:
                got = bytes([await bus.data_out() for _ in range(n)])
                if zlib.crc32(got) != crc:
                    fail(lineno, f"CRC {crc:08x}", f"CRC {zlib.crc32(got):08x}")
        elif key == "WAIT_RB":
            checks += 1
            want = float(args[0])
            await bus.idle(T_WB_CLOCKS)     # ONFI: R/B# is valid tWB after the latch
            ready = golden.die.ready_ns()   # the golden's R/B# instant, this timeline
            if int(dut.rb_n.value) & 1:
                if want and ready > get_sim_time("ns"):
                    fail(lineno, f"busy until {ready} ns", "ready")
            else:
                while not int(dut.rb_n.value) & 1:
                    await RisingEdge(dut.rb_n)
                s_rise = get_sim_time("ns")
                late = s_rise - ready
                # never early, less than one clock late
                if not 0 <= late < CLK_NS:
                    fail(lineno, f"R/B# at the golden's {ready} ns (within one {CLK_NS} ns "
                                 f"clock)", f"{s_rise} ns ({s_rise - bus.last_latch_ns:.3f} ns "
                                            f"after the last latch)")
                worst_late = max(worst_late, late)
        elif key == "ADVANCE":
            await Timer(round(float(args[0]) * 1000), unit="ps")
        elif key == "RB":
            checks += 1
            await bus.idle(3)
            if (int(dut.rb_n.value) & 1) != int(args[0]):
                fail(lineno, f"R/B# {args[0]}", int(dut.rb_n.value) & 1)
        elif key == "MODE":
            checks += 1
            if (int(dut.timing_mode.value) & 0xF) != int(args[0]):
                fail(lineno, f"timing mode {args[0]}", int(dut.timing_mode.value) & 0xF)
        elif key == "STATS":
            checks += 1
            await bus.idle(4)
            for k, v in _kv(args).items():
                if k == "bits_read":        # the dies' bit error bookkeeping: not counted
                    continue
                got = 0 if k == "bit_errors" else int(getattr(dut, f"stat_{k}").value)
                if got != int(v):
                    fail(lineno, f"{k}={v}", f"{k}={got}")
        elif key == "WEAR":
            lun, block, n = map(int, args)
            golden.die.luns[lun].block(block).erase_count = n
            await backdoor(dut, 1, (lun << bb) | block, lay.const(
                {"next_page": 0, "erased": 0, "bad": 0, "fbad": 0, "pe": n}).as_value().value)
        elif key == "BAD":
            lun, block = map(int, args)
            golden.die.inject_bad_block(lun, block)
            await backdoor(dut, 2, (lun << bb) | block)
        elif key == "WP":
            dut.wp_n.value = int(args[0])
            golden.now_ps = round(get_sim_time("ps"))
            golden.die.set_wp_n(golden.now, int(args[0]))
        else:
            fail(lineno, "a line the emulator replays", key)
        await take_rules()
    if pend:
        fail(len(lines), "no unclaimed NAND rule violation at the end", pend)
    assert int(dut.overrun.value) == 0, "the DRAM write queue overflowed"
    return checks, worst_late


async def _trace(dut):
    """NAND_EMU_DEBUG=1: log the engine's state changes (debugging a failing file)."""
    e = dut.nand_emulator
    last = None
    while True:
        await RisingEdge(dut.clk)
        st = (int(e.engine_state.value), int(e.walk_plane.value), int(e.walk_pass.value))
        if st != last:
            dut._log.info("engine %s -> %s rdy_dl0=%d plane=%d pass=%d mask=%d", last, st,
                          int(e.rdy_dl0.value), int(e.walk_plane.value), int(e.walk_pass.value),
                          int(e.walk_mask.value))
            last = st


@cocotb.test()
async def vectors(dut):
    """Every emulated vector file, each on a freshly reset emulator."""
    cocotb.start_soon(Clock(dut.clk, CLK_NS, unit="ns").start())
    names = [n for n in os.environ["NAND_EMU_FILES"].split(",") if n]
    if os.environ.get("NAND_EMU_DEBUG"):
        cocotb.start_soon(_trace(dut))
    total = 0
    for name in names:
        n, late = await replay(dut, VECTOR_DIR / f"{name}.vec")
        # every data-out byte came from the prefetch in time (an underrun outputs 00h)
        assert int(dut.underrun.value) == 0 and int(dut.overrun.value) == 0, \
            f"{name}: underruns {int(dut.underrun.value)}, overrun {int(dut.overrun.value)}"
        dut._log.info("%s: %d checks pass; R/B# at most %.1f ns after the golden's", name, n,
                      late)
        total += n
    dut._log.info("vectors: %d files, %d checks, no underrun", len(names), total)


# --- pytest entry points -------------------------------------------------------------------

@pytest.mark.smoke
def test_not_emulated_is_honest():
    """Each file set aside uses what its reason names."""
    for name, why in NOT_EMULATED.items():
        text = (VECTOR_DIR / f"{name}.vec").read_text()
        header, _ = _parse_header(text.splitlines(), name)
        body = text.split("BEGIN", 1)[1]
        if "bit errors" in why:
            assert any(float(header["DIE"][k]) > 0 for k in (
                "rber_base", "rber_per_kcycle", "rber_shift", "rber_per_kread")), name
        if "timing checks" in why:
            assert "\nTIMING " in body, name
        if "NV-DDR2" in why:
            assert re.search(r"\nMODE \d+ nvddr2\n", body), name
        if "TLC page types" in why:
            assert header["GEOMETRY"]["bits_per_cell"] == "3", name
        if "typical per page type" in why:
            assert header["TIMING"]["typical"] == "1", name
            assert any(v != "none" for k, v in header["TIMING"].items() if "_typ_" in k), name
        if "POWER_CUT" in why:
            assert "\nPOWER_CUT" in body, name
        if "DRAM" in why:
            g = header["GEOMETRY"]
            size = int(g["page_bytes"]) * int(g["pages_per_block"]) * \
                int(g["blocks_per_plane"]) * int(g["planes"]) * int(g["luns"])
            assert size > 4 << 30, name
    assert len(EMULATED) >= 9
    assert sorted(files_of("small") + files_of("paged")) == sorted(p.stem for p in EMULATED)
    for (name, line), _ in DIVERGES.items():
        assert line in (VECTOR_DIR / f"{name}.vec").read_text().splitlines(), (name, line)


# The smoke tier's share of the small part's files: two of the longest in simulated time
# (bad_blocks about 23 ms, rules_lenient 10 ms of the 82 ms; rules_strict
# checks the same sequences strictly) replay in the full tier, which runs every file.
SMOKE_SKIPS = ("bad_blocks", "rules_lenient")


def _run(variant, skip=()):
    path, _ = emulator_verilog(variant)
    files = os.environ.get("NAND_EMU_FILES") or \
        ",".join(f for f in files_of(variant) if f not in skip)
    env = {"NAND_EMU_FILES": files, "NAND_EMU_VARIANT": variant}
    if os.environ.get("NAND_EMU_DEBUG"):
        env["NAND_EMU_DEBUG"] = "1"
    run(core(variant), __file__, sources=[path], extra_env=env)


@pytest.mark.smoke
def test_nand_emulator_vectors():
    """The files of the scaled part (all but edges.vec) on the LiteDRAM simulation model,
    but for SMOKE_SKIPS (the full tier's test_nand_emulator_vectors_all)."""
    _run("small", skip=SMOKE_SKIPS)


@pytest.mark.full
def test_nand_emulator_vectors_all():
    """Every file of the scaled part, random.vec included."""
    _run("small")


@pytest.mark.full
def test_nand_emulator_vectors_paged():
    """edges.vec: a part with lower/upper page tR and tPROG."""
    _run("paged")
