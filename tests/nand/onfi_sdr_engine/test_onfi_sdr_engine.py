# SPDX-License-Identifier: BSD-2-Clause
"""Tests of onfi_sdr_engine: latched bytes, read data, R/B# waits, response backpressure, every
SDR timing mode under the pin-level timing checker, and broken timing registers caught by it.

The clock is 100 MHz (10 ns); timing registers come from onfi_timing.engine_registers().
The responder stands in for the dies: it drives DQ tREA after RE# falls (tCEA after CE#),
keeps it tRHOH after RE# rises and then drives garbage, and pulls R/B# low after the busy
commands (30h, 10h, 15h, D0h, FFh, EFh) for a while.
"""

import random
from collections import deque
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields

from rtl.nand.onfi_sdr_engine import (
    TIMING_REGISTERS,
    CycleKind,
    CycleRequest,
    OnfiSdrEngine,
    ReadData,
    timing_layout,
)
from spec.onfi_timing import (
    ENGINE_REGISTERS,
    SDR_MODES,
    OnfiTimingChecker,
    engine_registers,
)

CLK_MHZ = 100
PERIOD_NS = 1000 // CLK_MHZ
BUSY_CMDS = {0x30, 0x10, 0x15, 0xD0, 0xFF, 0xEF}

CMD, ADDR, DIN, DOUT, WAIT_RB, WAIT_CCS = (CycleKind.CMD, CycleKind.ADDR, CycleKind.DIN,
                                           CycleKind.DOUT, CycleKind.WAIT_RB, CycleKind.WAIT_CCS)




def pattern(way, index):
    """The byte the responder returns for the index-th read of a way."""
    return (0xA5 ^ (index * 37) ^ (way * 0x11)) & 0xFF


class NandResponder:
    """Behavioural stand-in for n_ways dies on the engine's pins (no cell array)."""

    def __init__(self, dut, n_ways, timings, rng, busy_ns=(1500, 3000)):
        self.dut, self.n_ways, self.t, self.rng = dut, n_ways, timings, rng
        self.busy_ns = busy_ns
        self.reads = [0] * n_ways           # bytes returned per way
        self.rb = (1 << n_ways) - 1
        self.rb_rise = [[] for _ in range(n_ways)]   # times R/B# returned high
        self.rb_fall = [[] for _ in range(n_ways)]
        self.ce_fall = [None] * n_ways
        self.last_cmd = [None] * n_ways
        self.busy_reads = 0                 # RE# pulses while busy, other than status reads
        dut.rb_n.value = self.rb
        dut.dq_i.value = 0
        for coro in (self._reader(), self._busy(), self._ce()):
            cocotb.start_soon(coro)

    def selected(self):
        ce_n = int(self.dut.ce_n.value)
        ways = [i for i in range(self.n_ways) if not (ce_n >> i) & 1]
        return ways[0] if len(ways) == 1 else None

    async def _ce(self):
        prev = (1 << self.n_ways) - 1
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            ce_n = int(self.dut.ce_n.value)
            for i in range(self.n_ways):
                if (prev >> i) & 1 and not (ce_n >> i) & 1:
                    self.ce_fall[i] = get_sim_time("ns")
            prev = ce_n

    async def _drive(self, delay_ns, value):
        # tRHOH <= tREA in every mode, so the drives of successive bytes cannot overtake
        await Timer(max(1, round(delay_ns * 1000)), unit="ps")
        self.dut.dq_i.value = value

    async def _reader(self):
        while True:
            await FallingEdge(self.dut.re_n)
            now = get_sim_time("ns")
            way = self.selected()
            if way is not None:
                value = pattern(way, self.reads[way])
                if not (self.rb >> way) & 1 and self.last_cmd[way] not in (0x70, 0x78):
                    # a busy die returns nothing useful, except its status
                    self.busy_reads += 1
                    value = self.rng.randrange(256)
                valid_at = max(now + self.t.tREA, self.ce_fall[way] + self.t.tCEA)
                cocotb.start_soon(self._drive(valid_at - now, value))
                self.reads[way] += 1
            await RisingEdge(self.dut.re_n)
            # data holds tRHOH after RE# high; after that the bus is garbage
            cocotb.start_soon(self._drive(self.t.tRHOH, self.rng.randrange(256)))

    async def _busy(self):
        while True:
            await RisingEdge(self.dut.we_n)
            way = self.selected()
            if way is not None and int(self.dut.cle.value) and int(self.dut.dq_oe.value):
                self.last_cmd[way] = int(self.dut.dq_o.value)
                if self.last_cmd[way] in BUSY_CMDS:
                    cocotb.start_soon(self._busy_period(way))

    async def _busy_period(self, way):
        await Timer(round(self.t.tWB * 1000 * self.rng.uniform(0.2, 1.0)), unit="ps")
        self.rb &= ~(1 << way)
        self.dut.rb_n.value = self.rb
        self.rb_fall[way].append(get_sim_time("ns"))
        await Timer(self.rng.randrange(*self.busy_ns), unit="ns")
        self.rb |= 1 << way
        self.dut.rb_n.value = self.rb
        self.rb_rise[way].append(get_sim_time("ns"))


class TB:
    """Clock, reset, request driver, response monitor, responder and one checker per way."""

    def __init__(self, dut, mode=0, salt=0, **reg_overrides):
        self.dut = dut
        params = core_params()
        self.n_ways = params.get("n_ways", 1)
        self.width = params.get("timer_width", 8)
        self.rng = random.Random(cocotb.RANDOM_SEED * 1000 + salt)
        self.log = dut._log
        self.log.info("seed %d salt %d mode %d", cocotb.RANDOM_SEED, salt, mode)
        self.mode = mode
        self.timings = SDR_MODES[mode]
        self.requests = deque()
        self.rdata = []
        self.ready_prob = 1.0
        self.idle_prob = 0.0
        self.busy = False
        self.re_falls = 0
        self.outstanding_max = 0
        self.checkers = [OnfiTimingChecker(mode, ce=i, log=self.log) for i in range(self.n_ways)]
        dut.s_cycle__valid.value = 0
        dut.s_cycle__payload.value = 0
        dut.m_rdata__ready.value = 0
        dut.write_protect.value = 0
        self.set_timing(mode, **reg_overrides)
        Clock(dut.clk, PERIOD_NS, unit="ns").start()
        self.responder = NandResponder(dut, self.n_ways, self.timings, self.rng)

    def set_timing(self, mode, **overrides):
        regs = engine_registers(mode, CLK_MHZ, self.width, **overrides)
        self.regs = regs
        self.dut.timing.value = struct_bits(timing_layout(self.width), **regs)

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await RisingEdge(self.dut.clk)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)
        for c in self.checkers:
            c.start(self.dut)
        cocotb.start_soon(self._driver())
        cocotb.start_soon(self._monitor())

    # -- request driver --

    def send(self, kind, way=0, data=0, last=0):
        self.requests.append(struct_bits(CycleRequest, kind=kind, way=way, data=data, last=last))

    async def _driver(self):
        dut = self.dut
        while True:
            if not self.requests or self.rng.random() < self.idle_prob:
                self.busy = bool(self.requests)
                await RisingEdge(dut.clk)
                continue
            self.busy = True
            dut.s_cycle__payload.value = self.requests.popleft()
            dut.s_cycle__valid.value = 1
            while True:
                await ReadOnly()
                accepted = int(dut.s_cycle__ready.value)
                await RisingEdge(dut.clk)
                if accepted:
                    break
            dut.s_cycle__valid.value = 0

    # -- response monitor: random ready, and RE# must not run ahead of the response --

    async def _monitor(self):
        dut = self.dut
        prev_re = 1
        while True:
            dut.m_rdata__ready.value = int(self.rng.random() < self.ready_prob)
            await ReadOnly()
            if int(dut.m_rdata__valid.value) and int(dut.m_rdata__ready.value):
                self.rdata.append(struct_fields(ReadData, int(dut.m_rdata__payload.value)))
            re_n = int(dut.re_n.value)
            if prev_re and not re_n:
                self.re_falls += 1
            prev_re = re_n
            outstanding = self.re_falls - len(self.rdata)
            self.outstanding_max = max(self.outstanding_max, outstanding)
            await RisingEdge(dut.clk)

    async def drain(self, n_rdata=None, timeout_us=200):
        """Wait until every request ran and the engine is idle (and n_rdata bytes arrived)."""
        dut = self.dut
        deadline = get_sim_time("ns") + timeout_us * 1000
        quiet = 0
        while quiet < 8:
            await RisingEdge(dut.clk)
            idle = (not self.requests and not self.busy and int(dut.s_cycle__ready.value)
                    and int(dut.we_n.value) and int(dut.re_n.value)
                    and (n_rdata is None or len(self.rdata) >= n_rdata))
            quiet = quiet + 1 if idle else 0
            assert get_sim_time("ns") < deadline, (
                f"engine stuck: {len(self.requests)} requests queued, "
                f"{len(self.rdata)}/{n_rdata} bytes read")

    def violations(self):
        return [v for c in self.checkers for v in c.violations]

    def assert_clean(self):
        v = self.violations()
        assert not v, f"{len(v)} timing violations, first: {v[0]}"
        assert not self.responder.busy_reads, \
            f"{self.responder.busy_reads} data reads while a die was busy"
        assert self.outstanding_max <= 1, \
            f"RE# ran ahead of the response stream ({self.outstanding_max} bytes outstanding)"

    def way(self):
        return self.rng.randrange(self.n_ways)

    # -- sequences --

    def program(self, way, addr, payload, confirm=0x10):
        self.send(CMD, way, 0x80)
        for b in addr:
            self.send(ADDR, way, b)
        for b in payload:
            self.send(DIN, way, b)
        self.send(CMD, way, confirm, last=1)
        return ([("cmd", 0x80)] + [("addr", b) for b in addr] + [("data", b) for b in payload]
                + [("cmd", confirm)])

    def read_page(self, way, addr, n, wait=True):
        self.send(CMD, way, 0x00)
        for b in addr:
            self.send(ADDR, way, b)
        self.send(CMD, way, 0x30)
        if wait:
            self.send(WAIT_RB, way)
        for i in range(n):
            self.send(DOUT, way, last=int(i == n - 1))
        return [("cmd", 0x00)] + [("addr", b) for b in addr] + [("cmd", 0x30)]

    def expect_reads(self, way, start, n):
        return [pattern(way, start + i) for i in range(n)]


def rand_bytes(rng, n):
    return [rng.randrange(256) for _ in range(n)]


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_latch_sequence(dut):
    """CMD/ADDR/DIN requests on random ways latch the right bytes on WE# rising edges."""
    tb = TB(dut, mode=0, salt=1)
    tb.idle_prob = 0.3
    await tb.reset()
    expect = [[] for _ in range(tb.n_ways)]
    for _ in range(6):
        way = tb.way()
        expect[way] += tb.program(way, rand_bytes(tb.rng, 5), rand_bytes(tb.rng, 6))
        tb.send(WAIT_RB, way)
        # a way switch without `last`: the engine must move CE# itself
        way2 = tb.way()
        tb.send(CMD, way2, 0x70)
        tb.send(DOUT, way2, last=1)
        expect[way2].append(("cmd", 0x70))
    await tb.drain(n_rdata=6)
    for way in range(tb.n_ways):
        assert tb.checkers[way].latched == expect[way], f"way {way} latched wrong bytes"
    assert int(dut.ce_n.value) == (1 << tb.n_ways) - 1, "CE# left low after `last`"
    tb.assert_clean()


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_read_data(dut):
    """DOUT requests return the responder's bytes in order, with the request's `last` flag."""
    tb = TB(dut, mode=0, salt=2)
    await tb.reset()
    expect = []
    for _ in range(4):
        way = tb.way()
        n = tb.rng.randrange(1, 12)
        # drained between pages, so the responder's per-way count is where this page starts
        expect += [(b, int(i == n - 1))
                   for i, b in enumerate(tb.expect_reads(way, tb.responder.reads[way], n))]
        tb.read_page(way, rand_bytes(tb.rng, 5), n)
        await tb.drain(n_rdata=len(expect))
    got = [(r["data"], r["last"]) for r in tb.rdata]
    assert got == expect, f"read data mismatch:\n got {got}\nwant {expect}"
    tb.assert_clean()


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_wait_rb(dut):
    """WAIT_RB holds RE# until R/B# is back high (and tRR after)."""
    tb = TB(dut, mode=1, salt=3)
    await tb.reset()
    for _ in range(3):
        way = tb.way()
        falls = tb.checkers[way].edges.get("re_fall", 0)
        tb.read_page(way, rand_bytes(tb.rng, 5), 2)
        # the first RE# falling edge after the 30h command
        while tb.checkers[way].edges.get("re_fall", 0) == falls:
            await RisingEdge(dut.clk)
        first_re = tb.checkers[way].last["re_fall"]
        rises = tb.responder.rb_rise[way]
        assert tb.responder.rb_fall[way], "responder never went busy"
        assert rises and rises[-1] <= first_re - tb.timings.tRR, (
            f"RE# fell at {first_re} ns, R/B# rose at {rises[-1] if rises else None} ns")
        await tb.drain(n_rdata=None)
    tb.assert_clean()


@cocotb.test(timeout_time=4, timeout_unit="ms")
async def test_backpressure(dut):
    """Random m_rdata ready and s_cycle idles lose no byte; RE# never runs ahead."""
    tb = TB(dut, mode=5, salt=4)
    await tb.reset()
    expect = []
    for prob in (0.8, 0.5, 0.2):
        tb.ready_prob = prob
        tb.idle_prob = 1 - prob
        for _ in range(3):
            way = tb.way()
            n = tb.rng.randrange(8, 40)
            expect += tb.expect_reads(way, tb.responder.reads[way], n)
            tb.read_page(way, rand_bytes(tb.rng, 5), n)
            await tb.drain(n_rdata=len(expect))
    assert [r["data"] for r in tb.rdata] == expect, "bytes lost or reordered under backpressure"
    tb.assert_clean()


def mixed_traffic(tb):
    """A program, a page read, change read/write column and status reads on random ways.
    Returns the expected latched bytes per way and the expected read data."""
    rng = tb.rng
    expect = [[] for _ in range(tb.n_ways)]
    rdata = []
    count = list(tb.responder.reads)    # call when drained: where each way's pattern is

    def reads(way, n):
        rdata.extend(pattern(way, count[way] + i) for i in range(n))
        count[way] += n
    way = tb.way()
    expect[way] += tb.program(way, rand_bytes(rng, 5), rand_bytes(rng, 4))
    tb.send(WAIT_RB, way)
    way = tb.way()
    expect[way] += tb.read_page(way, rand_bytes(rng, 5), 3)
    reads(way, 3)
    # change read column: 05h addr addr E0h, tCCS, data out
    tb.send(CMD, way, 0x05)
    tb.send(ADDR, way, 0x10)
    tb.send(ADDR, way, 0x00)
    tb.send(CMD, way, 0xE0)
    tb.send(WAIT_CCS, way)
    tb.send(DOUT, way)
    tb.send(DOUT, way, last=1)
    expect[way] += [("cmd", 0x05), ("addr", 0x10), ("addr", 0x00), ("cmd", 0xE0)]
    reads(way, 2)
    # program with change write column: 80h addr data 85h addr addr, tCCS, data 10h
    way = tb.way()
    tb.send(CMD, way, 0x80)
    for b in (1, 2, 3, 4, 5):
        tb.send(ADDR, way, b)
    tb.send(DIN, way, 0x11)
    tb.send(CMD, way, 0x85)
    tb.send(ADDR, way, 0x40)
    tb.send(ADDR, way, 0x00)
    tb.send(WAIT_CCS, way)
    tb.send(DIN, way, 0x22)
    tb.send(DIN, way, 0x33)
    tb.send(CMD, way, 0x10, last=1)
    expect[way] += ([("cmd", 0x80)] + [("addr", b) for b in (1, 2, 3, 4, 5)] +
                    [("data", 0x11), ("cmd", 0x85), ("addr", 0x40), ("addr", 0x00),
                     ("data", 0x22), ("data", 0x33), ("cmd", 0x10)])
    tb.send(WAIT_RB, way)
    # read status on every way
    for w in range(tb.n_ways):
        tb.send(CMD, w, 0x70)
        tb.send(DOUT, w, last=1)
        expect[w].append(("cmd", 0x70))
        reads(w, 1)
    return expect, rdata


@cocotb.test(timeout_time=4, timeout_unit="ms")
@cocotb.parametrize(mode=[0, 1, 2, 3, 4, 5])
async def test_timing_mode(dut, mode):
    """SDR timing modes 0..5 programmed through the registers at 100 MHz pass the checker."""
    tb = TB(dut, mode=mode, salt=10 + mode)
    await tb.reset()
    expect, rdata = mixed_traffic(tb)
    await tb.drain(n_rdata=len(rdata))
    for way in range(tb.n_ways):
        assert tb.checkers[way].latched == expect[way], f"way {way} latched wrong bytes"
    got = [r["data"] for r in tb.rdata]
    assert got == rdata, f"mode {mode}: read data {got} != {rdata}"
    assert sum(c.edges.get("we_rise", 0) for c in tb.checkers) > 20
    tb.assert_clean()


# register -> (a value too short for mode 0 at 100 MHz, the ONFI parameter it breaks)
BROKEN = {"t_wh": (1, "tWH"), "t_whr": (3, "tWHR"), "t_adl": (10, "tADL"), "t_rr": (1, "tRR"),
          "t_cs": (1, "tCS")}


@cocotb.test(timeout_time=4, timeout_unit="ms")
@cocotb.parametrize(reg=list(BROKEN))
async def test_checker_catches_short_register(dut, reg):
    """A timing register programmed too short for mode 0 is reported by the checker."""
    value, param = BROKEN[reg]
    tb = TB(dut, mode=0, salt=20, **{reg: value})
    await tb.reset()
    _, rdata = mixed_traffic(tb)
    await tb.drain(n_rdata=len(rdata))
    hits = [v for c in tb.checkers for v in c.violated(param)]
    assert hits, f"{reg}={value} broke {param} but the checker saw nothing"
    required = getattr(SDR_MODES[0], param)
    assert f"{param} violated:" in hits[0].message and f"< {required:g} ns" in hits[0].message
    tb.log.info("caught as expected: %s", hits[0])


CORE = AmaranthCore("rtl.nand.onfi_sdr_engine:OnfiSdrEngine", toplevel="onfi_sdr_engine")


@pytest.mark.smoke
@pytest.mark.parametrize("n_ways", [1, 8])
def test_onfi_sdr_engine(n_ways):
    run(CORE.with_params(n_ways=n_ways), __file__)


@pytest.mark.full
@pytest.mark.parametrize("n_ways,timer_width", [(2, 8), (3, 7), (4, 10), (5, 8), (6, 12),
                                                (7, 8), (8, 16), (1, 6)])
def test_onfi_sdr_engine_sweep(n_ways, timer_width):
    run(CORE.with_params(n_ways=n_ways, timer_width=timer_width), __file__)


@pytest.mark.smoke
@pytest.mark.parametrize("params,name", [({"n_ways": 0}, "n_ways"), ({"n_ways": 9}, "n_ways"),
                                         ({"timer_width": 5}, "timer_width"),
                                         ({"timer_width": 17}, "timer_width")])
def test_onfi_sdr_engine_bad_params(params, name):
    with pytest.raises(ValueError, match=name):
        OnfiSdrEngine(**params)


@pytest.mark.smoke
def test_onfi_sdr_engine_register_list():
    """The converter, the core and the README agree on the timing registers."""
    names = tuple(name for name, _ in TIMING_REGISTERS)
    assert ENGINE_REGISTERS == names
    readme = (Path(__file__).resolve().parents[3] / "rtl" / "nand" / "README.md").read_text()
    missing = [n for n in names if f"| `{n}` |" not in readme]
    assert not missing, f"rtl/nand/README.md does not document {missing}"
