# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nand_die_fast, the fast (C++ through DPI) NAND die model.

(a) every vector file in sim/nand/vectors passes the golden runner (NandDie behind
    OnfiPinTarget's byte path); (b) g++ builds the standalone C++ runner into build/ and every
    file passes it against NandDieFast; (c) under Verilator + cocotb the onfi_channel core
    (n_ways = 2) drives two nand_die_fast instances (nand_die_fast_tb.sv): reset, READ ID,
    parameter page, features and a mode-5 retime, erase/program/read with data checked, FAIL on
    a factory bad block, split multi-plane ops, no rule or timing violation at the end; and a
    too-short t_wh register that the model reports as "tWH violated". The simulation tests
    also measure the model's speed (simulated clock cycles per wall-clock second).
"""

import os
import random
import re
import subprocess
import time
from collections import deque
from dataclasses import replace
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, RisingEdge, Timer
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from sim.nand.fast_sources import CPP, DPI_SOURCES, HEADERS, MODEL_SOURCES, VECTOR_MAIN
from sim.nand.python.nand_die import SR_ARDY, SR_RDY, SR_WP_N, NandDie
from sim.nand.python.nand_vectors import VECTOR_DIR, run_file
from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry
from spec.onfi_param_page import crc16_onfi, parse_parameter_page
from spec.onfi_timing import engine_registers

REPO = Path(__file__).resolve().parents[4]
HERE = Path(__file__).resolve().parent
VECTORS = sorted(VECTOR_DIR.glob("*.vec"))
BUILD = REPO / "build" / "nand_die_fast"
SOURCES = [*DPI_SOURCES, HERE / "nand_die_fast_tb.sv"]
PARAMS = {"n_ways": 2, "row_cycles": 2, "col_cycles": 2, "max_len": 2112}
CORE = AmaranthCore("rtl.nand.onfi_channel:OnfiChannel", "onfi_channel", params=PARAMS)
TOP = "nand_die_fast_tb"

CLK_MHZ = 100
GEO = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=8,
                   planes=2, luns=2, bits_per_cell=2)
# the tb's dies run nand_die_fast.sv's default array times: one tR and tPROG for every page
PART = replace(PARTS["imft-20nm-mlc-64gbit"], timing=NandArrayTiming())
SEEDS = (1000, 1001)            # the SEED parameters of die0 / die1 in nand_die_fast_tb.sv
SR_IDLE = SR_RDY | SR_ARDY | SR_WP_N


# --- (a) and (b): vector files ------------------------------------------------------------

@pytest.mark.smoke
def test_vector_files_exist():
    """The checked-in vector set: every scenario present and small."""
    assert len(VECTORS) >= 12, VECTORS
    assert sum(p.stat().st_size for p in VECTORS) < 300_000


@pytest.mark.smoke
@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_vectors_golden(path):
    assert run_file(path) > 0


@pytest.mark.smoke
def test_vectors_cover_rules():
    """Between them the files use every ONFI command of the model and every SDR timing mode,
    break every NAND rule of the golden model and violate the main interface timing
    parameters, each claimed by name."""
    from sim.nand.python.nand_die import RULES
    text = "\n".join(p.read_text() for p in VECTORS)
    rules = {line.split()[1] for line in text.splitlines() if line.startswith("RULE ")}
    assert rules == set(RULES), set(RULES) - rules
    body = "\n".join(t.split("BEGIN", 1)[1] for t in (p.read_text() for p in VECTORS))
    timing = {line.split()[1] for line in body.splitlines() if line.startswith("TIMING ")}
    want = {"tWP", "tWH", "tWC", "tCLS", "tCLH", "tALS", "tALH", "tDS", "tDH", "tCS", "tADL",
            "tWHR", "tRP", "tREH", "tRC", "tRHW", "tRR", "tCCS", "protocol"}
    assert want <= timing, want - timing
    cmds = {int(line.split()[1], 16) for line in body.splitlines() if line.startswith("CMD ")}
    onfi = {0xFF, 0x90, 0xEC, 0x70, 0x78, 0x00, 0x30, 0x32, 0x31, 0x3F, 0x05, 0x06, 0xE0,
            0x80, 0x85, 0x10, 0x11, 0x15, 0x60, 0xD0, 0xD1, 0xEF, 0xEE, 0xDA}
    assert onfi <= cmds, sorted(onfi - cmds)
    modes = {int(line.split()[1]) for line in body.splitlines() if line.startswith("MODE ")}
    assert set(range(6)) <= modes, modes


@pytest.mark.smoke
def test_vectors_cover_nvddr2():
    """NV-DDR2: every mode 0..7 entered, every NV-DDR2 timing rule of the golden checker
    violated and claimed by name, and READ ID / GET FEATURES bytes doubled."""
    body = "\n".join(t.split("BEGIN", 1)[1] for t in (p.read_text() for p in VECTORS))
    lines = body.splitlines()
    modes = {int(ln.split()[1]) for ln in lines if ln.startswith("MODE ") and
             ln.endswith(" nvddr2")}
    assert modes == set(range(8)), modes
    timing = {ln.split()[1] for ln in lines if ln.startswith("TIMING ")}
    want = {"tWP", "tWH", "tWC", "tCALS", "tCALH", "tCAS", "tCAH", "tCS", "tCH", "tCR",
            "tADL", "tCCS", "tWPRE", "tDS", "tDH", "tDQSH", "tDQSL", "tDSC", "tWPST",
            "tWPSTH", "tWHR", "tRR", "tRPRE", "tRP", "tREH", "tRC", "tRPST", "tRPSTH", "tRHW"}
    assert want <= timing, want - timing
    text = (VECTOR_DIR / "nvddr2.vec").read_text()
    assert "DOUT 2C 2C 64 64 44 44 4B 4B A9 A9" in text        # READ ID 00h
    assert "DOUT 4F 4F 4E 4E 46 46 49 49" in text               # READ ID 20h: "ONFI"
    assert "DOUT 24 24 00 00 00 00 00 00" in text               # GET FEATURES 01h


@pytest.mark.smoke
def test_vectors_cover_slc():
    """slc.vec: SLC-mode (DAh) erase, program and read with the SLC busy times on R/B#,
    native ones on the same die, every slc-mode mismatch and DAh before a wrong command
    claimed by name, a DAh per plane of multi-plane ops, cache ops, SDR and NV-DDR2."""
    from sim.nand.python.nand_vectors import SLC_TIMING
    text = (VECTOR_DIR / "slc.vec").read_text()
    body = text.split("BEGIN", 1)[1]
    lines = [ln for ln in body.splitlines() if not ln.startswith("#")]
    assert "t_prog_slc_typ_ns=300000" in text and "t_r_slc_typ_ns=20000" in text
    waits = {float(ln.split()[1]) for ln in lines if ln.startswith("WAIT_RB ")}
    slc = {SLC_TIMING.t_prog("slc"), SLC_TIMING.t_r("slc")}
    native = {SLC_TIMING.t_prog("lower"), SLC_TIMING.t_r("upper")}
    assert slc | native <= waits and not slc & native
    rules = [ln.split()[1] for ln in lines if ln.startswith("RULE ")]
    assert rules.count("slc-mode") >= 10 and "command-sequence" in rules
    for seq in ("CMD DA\nCMD 60", "CMD DA\nCMD 80", "CMD DA\nCMD 00", "CMD DA\nCMD 70"):
        assert seq in "\n".join(lines), seq
    confirms = {ln for ln in lines if ln in ("CMD D1", "CMD 11", "CMD 32", "CMD 15", "CMD 31")}
    assert len(confirms) == 5, confirms
    assert re.search(r"\nMODE \d+ nvddr2\n", body) and "DOUT E1" in body     # FAIL status


@pytest.mark.smoke
def test_source_list_complete():
    """sim/nand/fast_sources.py names every file of the model in sim/nand/cpp (the builds
    compile what it lists: a file left out would be missing from all of them)."""
    mains = {VECTOR_MAIN, CPP / "nand_die_fast_dpi.cpp"}
    assert set(CPP.glob("*.cpp")) - mains == set(MODEL_SOURCES)
    assert set(CPP.glob("*.h")) == set(HEADERS)
    assert all(p.is_file() for p in [*DPI_SOURCES, VECTOR_MAIN])


@pytest.mark.smoke
def test_dpi_parts_match_spec():
    """The DPI wrapper's identity table (nand_die_fast_dpi.cpp PARTS: ID bytes, manufacturer,
    model, JEDEC ID, P/E cycles) holds every part of spec/nand_geometry.PARTS, as there: a
    persona on a part the table lacks would fail at the drive's first clock."""
    import re
    text = (CPP / "nand_die_fast_dpi.cpp").read_text()
    rows = re.findall(r'\{"([^"]+)", \{([^}]*)\}, "([^"]*)",\s*"([^"]*)",\s*(0x[0-9a-f]+), '
                      r'(\d+)\}', text)
    got = {n: (bytes(int(b, 16) for b in ids.split(",")), man, model, int(j, 16), int(pe))
           for n, ids, man, model, j, pe in rows}
    want = {n: (p.id_bytes, p.manufacturer, p.model, p.jedec_id, p.pe_cycles)
            for n, p in PARTS.items()}
    assert got == want


@pytest.fixture(scope="module")
def vector_runner():
    """g++ builds the C++ runner into build/nand_die_fast/ (rebuilt when a source changed)."""
    BUILD.mkdir(parents=True, exist_ok=True)
    exe = BUILD / "nand_vectors"
    srcs = [VECTOR_MAIN, *MODEL_SOURCES]
    if not exe.exists() or any(s.stat().st_mtime > exe.stat().st_mtime
                               for s in [*srcs, *HEADERS]):
        subprocess.run(["g++", "-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror",
                        f"-I{CPP}", "-o", str(exe), *map(str, srcs)], check=True)
    return exe


@pytest.mark.smoke
def test_vectors_cpp(vector_runner):
    out = subprocess.run([str(vector_runner), *map(str, VECTORS)], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    assert out.returncode == 0, out.stdout
    assert out.stdout.count("checks pass") == len(VECTORS), out.stdout


@pytest.mark.smoke
def test_vectors_golden_mismatch(tmp_path):
    """The golden runner names the first mismatch too."""
    from sim.nand.python.nand_vectors import VectorError
    src = (VECTOR_DIR / "program_read.vec").read_text().replace("RULE", "RULE_X", 0)
    bad = tmp_path / "bad.vec"
    bad.write_text(src.replace("WAIT_RB 100000.000", "WAIT_RB 99000.000", 1))
    with pytest.raises(VectorError, match=r"bad.vec:\d+: expected busy 99000.000 ns, got busy "
                                          r"100000.000 ns"):
        run_file(bad)


@pytest.mark.smoke
def test_vectors_cpp_mismatch(vector_runner, tmp_path):
    """The C++ runner names the first mismatch (file, line, expected, got)."""
    src = (VECTOR_DIR / "identify.vec").read_text().replace("DOUT 2C 64", "DOUT 2C 65", 1)
    bad = tmp_path / "bad.vec"
    bad.write_text(src)
    out = subprocess.run([str(vector_runner), str(bad)], stdout=subprocess.PIPE, text=True)
    assert out.returncode != 0
    assert f"FAIL {bad}:" in out.stdout and "expected byte 1 = 65, got 64" in out.stdout


@pytest.mark.full
def test_vectors_up_to_date(tmp_path):
    """The checked-in files are what the golden model generates today (regenerate with
    `python -m sim.nand.python.nand_vectors generate` when the golden changes on purpose)."""
    from sim.nand.python.nand_vectors import generate
    for path in generate(tmp_path):
        assert path.read_text() == (VECTOR_DIR / path.name).read_text(), path.name


# --- (c): cocotb + Verilator, onfi_channel driving two nand_die_fast ----------------------

class TB:
    """Clock, reset, timing registers and op/completion streams of the channel."""

    def __init__(self, dut, mode=0, **overrides):
        from rtl.nand.onfi_channel import ChannelOp, Completion, op_layout
        from rtl.nand.onfi_sdr_engine import timing_layout
        self.OP, self.Completion = ChannelOp, Completion
        self.timing_layout = timing_layout
        self.dut = dut
        self.p = core_params()
        self.layout = op_layout(self.p["max_len"])
        assert len(dut.s_op__payload) == self.layout.size, (
            f"nand_die_fast_tb.sv s_op__payload is {len(dut.s_op__payload)} bits, the "
            f"channel's op layout {self.layout.size}")
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.log = dut._log
        dut.write_protect.value = 0
        self.set_timing(mode, **overrides)
        Clock(dut.clk, 1000 // CLK_MHZ, unit="ns", impl="gpi").start()
        self.next_tag = 0
        self.results = {}
        self.expected = deque()
        self.partial = bytearray()
        self.packets = deque()
        self.done = Event()

    def set_timing(self, mode, **overrides):
        regs = engine_registers(mode, CLK_MHZ, 8, **overrides)
        self.dut.timing.value = struct_bits(self.timing_layout(8), **regs)

    async def reset(self):
        dut = self.dut
        dut.rst.value = 1
        dut.s_op__valid.value = 0
        dut.s_wdata__valid.value = 0
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        rng = random.Random(0)              # no idle or pause inserted: unused
        self.ops = StreamSource(dut, "s_op", rng)
        self.wdata = StreamSource(dut, "s_wdata", rng)
        StreamSink(dut, "m_rdata", rng, self._rdata)
        StreamSink(dut, "m_cpl", rng, self._cpl)

    def _rdata(self, value):
        self.partial.append(value & 0xFF)
        if value >> 8:
            self.packets.append(bytes(self.partial))
            self.partial = bytearray()

    def _cpl(self, value):
        cpl = struct_fields(self.Completion, value)
        tag, reads = self.expected.popleft()
        assert cpl["tag"] == tag, (cpl, tag)
        data = self.packets.popleft() if reads and not cpl["error"] else b""
        self.results[tag] = (cpl, data)
        self.done.set()

    async def run(self, op, way, row=0, column=0, length=0, wdata=b"", multi=0, reads=None):
        tag = self.next_tag
        self.next_tag = (tag + 1) % 256
        fields = {"tag": tag, "op": op, "way": way, "row": row, "column": column,
                  "length": length}
        if "multi" in self.layout.members:
            fields["multi"] = multi
        self.ops.put(struct_bits(self.layout, **fields))
        for b in wdata:
            self.wdata.put(b)
        OP = self.OP
        if reads is None:
            reads = op in (OP.READ_ID, OP.READ_PARAM, OP.READ_PAGE, OP.GET_FEATURES,
                           OP.READ_STATUS) and (length > 0 or op in (OP.GET_FEATURES,
                                                                      OP.READ_STATUS))
        self.expected.append((tag, reads))
        while tag not in self.results:
            self.done.clear()
            await self.done.wait()
        return self.results.pop(tag)

    def violations(self):
        d = self.dut
        return [int(d.rules0.value), int(d.timing0.value), int(d.rules1.value),
                int(d.timing1.value)]


class RbLog:
    """Every change of a multi-bit R/B# signal: [(time ps, bit, value)]."""

    def __init__(self, signal, width):
        self.signal, self.width, self.edges = signal, width, []
        self.prev = int(signal.value)
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await self.signal.value_change
            v = int(self.signal.value)
            for bit in range(self.width):
                if (v ^ self.prev) >> bit & 1:
                    self.edges.append((get_sim_time("ps"), bit, (v >> bit) & 1))
            self.prev = v


def check_rb(dpi, gold, period_ps):
    """The DPI dies' R/B# (registered at negedge for the next posedge) against the golden's
    (exact times): each golden edge at t shows at the first posedge P >= t, so the DPI output
    changes at P - period/2, the negedge before it."""
    assert len(dpi.edges) == len(gold.edges) > 0, (len(dpi.edges), len(gold.edges))
    for (td, bd, vd), (tg, bg, vg) in zip(dpi.edges, gold.edges, strict=True):
        post = -(-tg // period_ps) * period_ps
        assert (bd, vd) == (bg, vg) and td == post - period_ps // 2, (
            f"R/B#[{bg}] -> {vg} at {tg} ps (golden); DPI: R/B#[{bd}] -> {vd} at {td} ps")


@cocotb.test()
async def test_ops(dut):
    """Every channel op on both dies, data checked, then no violation anywhere. The golden
    model (NandDie behind OnfiPinTarget, with its timing checker) watches the same pins: its
    R/B# must change at the same clock edges and it must see no violation either. Measures
    the simulation speed."""
    tb = TB(dut)
    OP = tb.OP
    bus = attach_golden(dut)
    wall0, sim0 = time.perf_counter(), get_sim_time("ns")
    await tb.reset()
    rb_dpi, rb_gold = RbLog(dut.rb_n, 2), RbLog(dut.gold_rb_n, 2)
    dq_dpi, t_start = DqLog(dut.dq_bus), get_sim_time("ps")
    for way in range(2):
        cpl, _ = await tb.run(OP.RESET, way)
        assert not cpl["error"], cpl
        cpl, ident = await tb.run(OP.READ_ID, way, column=0x00, length=5)
        assert ident == PART.id_bytes, ident.hex()
        _, onfi = await tb.run(OP.READ_ID, way, column=0x20, length=4)
        assert onfi == b"ONFI", onfi
    # parameter page: three copies, CRC, the geometry of the DIE parameters
    t0 = get_sim_time("ns")
    _, buf = await tb.run(OP.READ_PARAM, 1, length=768)
    assert get_sim_time("ns") - t0 >= PART.timing.t_r_ns
    assert all(crc16_onfi(buf[i:i + 254]) == int.from_bytes(buf[i + 254:i + 256], "little")
               for i in range(0, 768, 256))
    geo = parse_parameter_page(buf)
    assert (geo["page_bytes"], geo["spare_bytes"], geo["pages_per_block"], geo["luns"],
            geo["planes"], geo["row_cycles"]) == (2048, 64, 16, 2, 2, 2), geo
    golden = NandDie(PART, geometry=GEO)
    assert buf == golden.read_parameter_page(golden.reset(0)), "differs from the golden's"
    # features: timing mode 5 on both dies, then the engine retimed to mode 5
    for way in range(2):
        await tb.run(OP.SET_FEATURES, way, column=0x01, wdata=bytes([5, 0, 0, 0]))
        _, p = await tb.run(OP.GET_FEATURES, way, column=0x01)
        assert p == bytes([5, 0, 0, 0]), p.hex()
    await ClockCycles(dut.clk, 4)
    tb.set_timing(5)
    # erase / program / read back, LUN 0 and 1 of both dies, with a column offset
    pages = {}
    for way in range(2):
        bad = set(NandDie(PART, geometry=GEO, seed=SEEDS[way],
                          factory_bad_block_rate=0.25 if way else 0.0).factory_bad_blocks(1))
        for lun in range(2):
            block = next(b for b in range(2, 16) if lun == 0 or b not in bad)
            row = GEO.pack_row(lun, block, 0)
            cpl, _ = await tb.run(OP.ERASE_BLOCK, way, row=row)
            assert (cpl["status"] & SR_IDLE) == SR_IDLE and not cpl["fail"], (way, lun, cpl)
            for page in range(2):
                data = tb.rng.randbytes(GEO.register_bytes)
                r = GEO.pack_row(lun, block, page)
                cpl, _ = await tb.run(OP.PROGRAM_PAGE, way, row=r, length=len(data),
                                      wdata=data)
                assert not cpl["fail"] and (cpl["status"] & SR_IDLE) == SR_IDLE, cpl
                pages[(way, r)] = data
    for (way, r), data in pages.items():
        _, got = await tb.run(OP.READ_PAGE, way, row=r, length=len(data))
        assert got == data, f"way {way} row {r:#x}: read back differs"
        _, got = await tb.run(OP.READ_PAGE, way, row=r, column=1000, length=100)
        assert got == data[1000:1100]
    _, sr = await tb.run(OP.READ_STATUS, 0)
    assert (sr[0] & SR_IDLE) == SR_IDLE, sr.hex()
    # die1 has factory bad blocks: the marker reads 00h, erase and program FAIL
    bad0 = NandDie(PART, geometry=GEO, seed=SEEDS[1],
                   factory_bad_block_rate=0.25).factory_bad_blocks(0)
    assert bad0
    row = GEO.pack_row(0, bad0[0], 0)
    _, marker = await tb.run(OP.READ_PAGE, 1, row=row, column=GEO.page_bytes, length=2)
    assert marker == b"\x00\xff", marker.hex()
    cpl, _ = await tb.run(OP.ERASE_BLOCK, 1, row=row)
    assert cpl["fail"] == 1, cpl
    cpl, _ = await tb.run(OP.PROGRAM_PAGE, 1, row=row, length=16, wdata=bytes(16))
    assert cpl["fail"] == 1, cpl
    # multi-plane through the split ops (when this channel build has them)
    if hasattr(OP, "ERASE_START"):
        rows = [GEO.pack_row(0, 6, 0), GEO.pack_row(0, 7, 0)]
        await tb.run(OP.ERASE_START, 0, row=rows[0], multi=1)
        await tb.run(OP.ERASE_START, 0, row=rows[1])
        cpl, _ = await tb.run(OP.STATUS_FINISH, 0)
        assert not cpl["fail"], cpl
        datas = [tb.rng.randbytes(64) for _ in rows]
        await tb.run(OP.PROGRAM_LOAD, 0, row=rows[0], length=64, wdata=datas[0], multi=1)
        await tb.run(OP.PROGRAM_LOAD, 0, row=rows[1], length=64, wdata=datas[1])
        cpl, _ = await tb.run(OP.STATUS_FINISH, 0)
        assert not cpl["fail"], cpl
        await tb.run(OP.READ_ARRAY, 0, row=rows[0], multi=1)
        await tb.run(OP.READ_ARRAY, 0, row=rows[1])
        for r, data in zip(rows, datas, strict=True):
            _, got = await tb.run(OP.READ_DATA, 0, row=r, length=64, reads=True)
            assert got == data, f"multi-plane read of row {r:#x} differs"
    # WP# low: program and erase FAIL (both models see the pin)
    await ClockCycles(dut.clk, 4)
    dut.write_protect.value = 1
    await ClockCycles(dut.clk, 4)
    cpl, _ = await tb.run(OP.ERASE_BLOCK, 0, row=GEO.pack_row(0, 9, 0))
    assert cpl["fail"] == 1 and not cpl["status"] & SR_WP_N, cpl
    await ClockCycles(dut.clk, 4)
    dut.write_protect.value = 0
    await ClockCycles(dut.clk, 4)
    cpl, _ = await tb.run(OP.ERASE_BLOCK, 0, row=GEO.pack_row(0, 9, 0))
    assert cpl["fail"] == 0 and cpl["status"] & SR_WP_N, cpl
    # an idle stretch: the cost of the dies when nothing happens
    await ClockCycles(dut.clk, 10)
    w1 = time.perf_counter()
    await Timer(2, unit="ms")
    idle = time.perf_counter() - w1
    wall = time.perf_counter() - wall0
    cycles = (get_sim_time("ns") - sim0) / (1000 / CLK_MHZ)
    tb.log.info("speed: %d cycles in %.2f s wall = %.0f cycles/s with 2 nand_die_fast; idle "
                "200000 cycles in %.2f s = %.0f cycles/s", cycles, wall, cycles / wall, idle,
                200000 / idle)
    assert tb.violations() == [0, 0, 0, 0], tb.violations()
    bus.assert_clean()
    check_rb(rb_dpi, rb_gold, 1_000_000 // CLK_MHZ)
    n_dq = check_dq(bus, dq_dpi, 1_000_000 // CLK_MHZ, t_start)
    assert n_dq > 10000, n_dq
    tb.log.info("R/B#: %d edges, DQ: %d clock edges with valid data, the same as the golden "
                "model's", len(rb_dpi.edges), n_dq)


def attach_golden(dut):
    """The golden model (OnfiPinTarget + NandDie per CE#) on the test top's pins; every DQ
    drive it schedules is recorded in bus.dq_events as (time ps, value or None)."""
    from sim.nand.python.onfi_die_pins import OnfiBus, OnfiPinTarget
    dut.gold_rb_n.value = 3
    bus = OnfiBus(dut, pins={"dq_i": "gold_dq_i", "rb_n": "gold_rb_n"}, seed=1,
                  log=dut._log)
    for way in range(2):
        die = NandDie(PART, geometry=GEO, seed=SEEDS[way],
                      factory_bad_block_rate=0.25 if way else 0.0)
        OnfiPinTarget(bus, die, ce=way)
    bus.dq_events = []
    drive = bus.drive_dq

    def record(delay_ns, value):
        bus.dq_events.append((get_sim_time("ps") + max(1, round(delay_ns * 1000)), value))
        drive(delay_ns, value)
    bus.drive_dq = record
    return bus


class DqLog:
    """Every change of the DPI dies' DQ (dq_bus): [(time ps, value)]."""

    def __init__(self, signal):
        self.signal, self.changes = signal, []
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await self.signal.value_change
            self.changes.append((get_sim_time("ps"), int(self.signal.value)))


def check_dq(bus, dq, period_ps, since_ps):
    """At every posedge where the golden model drives valid data, the DPI dies' DQ holds the
    same byte: the data windows (tREA, tCEA, tRHOH, tCOH) agree at clock resolution."""
    import bisect
    events = sorted((t, i, v) for i, (t, v) in enumerate(bus.dq_events) if t >= since_ps)
    times = [t for t, _ in dq.changes]
    checked = 0
    for k, (t, _, v) in enumerate(events):
        if v is None:
            continue
        end = events[k + 1][0] if k + 1 < len(events) else t + period_ps
        post = -(-t // period_ps) * period_ps
        while post < end:
            j = bisect.bisect_right(times, post) - 1
            got = dq.changes[j][1] if j >= 0 else None
            assert got == v, f"DQ at posedge {post} ps: golden {v:02X}, DPI {got}"
            checked += 1
            post += period_ps
    return checked


@cocotb.test()
async def test_random(dut):
    """Seeded random erase/program/read/status traffic on both dies and LUNs in SDR mode 0
    or 5, read data checked against a dictionary, FAIL against the golden's factory bad
    blocks; the golden model on the same pins agrees on R/B# edges and sees no violation."""
    tb = TB(dut)
    OP = tb.OP
    n_ops = int(os.environ.get("NAND_FAST_OPS", "120"))
    bus = attach_golden(dut)
    await tb.reset()
    rb_dpi, rb_gold = RbLog(dut.rb_n, 2), RbLog(dut.gold_rb_n, 2)
    dq_dpi, t_start = DqLog(dut.dq_bus), get_sim_time("ps")
    for way in range(2):
        await tb.run(OP.RESET, way)
    mode = tb.rng.choice([0, 5])
    if mode:
        for way in range(2):
            await tb.run(OP.SET_FEATURES, way, column=0x01, wdata=bytes([mode, 0, 0, 0]))
        await ClockCycles(dut.clk, 4)
        tb.set_timing(mode)
    dies = [t.die for t in bus.targets]
    store, next_page = {}, {}
    for _ in range(n_ops):
        way, lun, block = tb.rng.randrange(2), tb.rng.randrange(2), tb.rng.randrange(16)
        bad = dies[way].is_factory_bad(lun, block)
        op = tb.rng.choice(["erase", "program", "program", "read", "read", "status"])
        key = (way, lun, block)
        if op == "erase":
            cpl, _ = await tb.run(OP.ERASE_BLOCK, way, row=GEO.pack_row(lun, block, 0))
            assert cpl["fail"] == bad, (key, cpl)
            next_page[key] = 0
            for page in range(16):
                store.pop((way, lun, block, page), None)
        elif op == "program" and next_page.get(key, 0) < 16 and not bad:
            page = next_page.get(key, 0)
            n = tb.rng.choice([1, 64, GEO.register_bytes])
            data = tb.rng.randbytes(n)
            cpl, _ = await tb.run(OP.PROGRAM_PAGE, way, row=GEO.pack_row(lun, block, page),
                                  length=n, wdata=data)
            assert not cpl["fail"], (key, cpl)
            store[(way, lun, block, page)] = data + b"\xff" * (GEO.register_bytes - n)
            next_page[key] = page + 1
        elif op == "read" and not bad:
            page = tb.rng.randrange(16)
            col = tb.rng.randrange(GEO.register_bytes - 1)
            n = tb.rng.randint(1, min(300, GEO.register_bytes - col))
            _, got = await tb.run(OP.READ_PAGE, way, row=GEO.pack_row(lun, block, page),
                                  column=col, length=n)
            want = store.get((way, lun, block, page), b"\xff" * GEO.register_bytes)
            assert got == want[col:col + n], (key, page, col, n)
        else:
            _, sr = await tb.run(OP.READ_STATUS, way)
            assert (sr[0] & SR_IDLE) == SR_IDLE, sr.hex()
    assert tb.violations() == [0, 0, 0, 0], tb.violations()
    bus.assert_clean()
    check_rb(rb_dpi, rb_gold, 1_000_000 // CLK_MHZ)
    n_dq = check_dq(bus, dq_dpi, 1_000_000 // CLK_MHZ, t_start)
    tb.log.info("random: %d ops in SDR mode %d, %d R/B# edges and %d valid-DQ clock edges "
                "as the golden's", n_ops, mode, len(rb_dpi.edges), n_dq)


@cocotb.test()
async def test_short_trea(dut):
    """The engine samples DQ one cycle before tREA: the die has not driven the data yet, so
    READ ID reads garbage (the data window is modelled, not just checked)."""
    regs = engine_registers(0, CLK_MHZ, 8)
    tb = TB(dut, mode=0, t_rea=regs["t_rea"] - 2)
    OP = tb.OP
    await tb.reset()
    await tb.run(OP.RESET, 0)
    _, ident = await tb.run(OP.READ_ID, 0, column=0x00, length=5)
    assert ident != PART.id_bytes, ident.hex()
    await ClockCycles(dut.clk, 4)
    tb.set_timing(0)
    _, ident = await tb.run(OP.READ_ID, 0, column=0x00, length=5)
    assert ident == PART.id_bytes, ident.hex()


@cocotb.test()
async def test_short_twh(dut):
    """A t_wh register far below tWH: the dies report tWH violations (counted and named)."""
    tb = TB(dut, mode=0, t_wh=1)
    OP = tb.OP
    await tb.reset()
    await tb.run(OP.RESET, 0)
    _, ident = await tb.run(OP.READ_ID, 0, column=0x00, length=5)
    assert ident == PART.id_bytes
    v = tb.violations()
    assert v[1] > 0 and v[0] == 0, v
    assert v[3] == 0, v          # die 1 was never selected


@cocotb.test()
async def test_bench(dut):
    """72 dies on one clock, die 0 polled with 70h: simulated clocks per wall second."""
    Clock(dut.clk, 1000 // CLK_MHZ, unit="ns", impl="gpi").start()
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 100)
    wall = time.perf_counter()
    await Timer(5, unit="ms")
    wall = time.perf_counter() - wall
    cycles = 5_000_000 // (1000 // CLK_MHZ)
    dut._log.info("speed: 72 nand_die_fast, %d cycles in %.2f s wall = %.0f cycles/s "
                  "(%.3g die evaluations/s)", cycles, wall, cycles / wall, 72 * cycles / wall)
    assert int(dut.status.value) == SR_IDLE, hex(int(dut.status.value))
    assert int(dut.violations.value) == 0, int(dut.violations.value)


def _sim_log(top=TOP):
    node = os.environ.get("PYTEST_CURRENT_TEST", "manual").rsplit(" ", 1)[0].split("::")[-1]
    import re

    from ssdlab_harness import BUILD_ROOT, test_id
    run_dir = BUILD_ROOT / f"{test_id(CORE)}-{top}" / "run" / re.sub(
        r"[^A-Za-z0-9_.=-]+", "_", node)
    return (run_dir / "sim.log").read_text(errors="replace")


@pytest.mark.smoke
def test_nand_die_fast_channel():
    run(CORE, __file__, testcase="test_ops", sources=SOURCES, toplevel=TOP)
    log = _sim_log()
    assert "nand_die_fast[" not in log, "a die reported a violation"
    print(next(line for line in log.splitlines() if "speed:" in line))


@pytest.mark.full
def test_nand_die_fast_random():
    run(CORE, __file__, testcase="test_random", sources=SOURCES, toplevel=TOP)


@pytest.mark.smoke
def test_nand_die_fast_short_trea():
    run(CORE, __file__, testcase="test_short_trea", sources=SOURCES, toplevel=TOP)


@pytest.mark.smoke
def test_nand_die_fast_short_twh():
    run(CORE, __file__, testcase="test_short_twh", sources=SOURCES, toplevel=TOP)
    log = _sim_log()
    assert "nand_die_fast[0]" in log and "tWH violated" in log, log[-2000:]


@pytest.mark.full
def test_nand_die_fast_bench():
    """Speed of 72 DPI dies under Verilator + cocotb (printed; the READ STATUS of die 0 and
    zero violations are checked)."""
    run(CORE, __file__, testcase="test_bench", toplevel="nand_die_fast_bench_tb",
        sources=[*DPI_SOURCES, HERE / "nand_die_fast_bench_tb.sv"])
    log = _sim_log("nand_die_fast_bench_tb")
    print(next(line for line in log.splitlines() if "speed:" in line))
