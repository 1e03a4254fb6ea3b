# SPDX-License-Identifier: BSD-2-Clause
"""Tests of onfi_nvddr2_engine through onfi_phy_sim against golden dies in NV-DDR2 mode.

The test top (onfi_nvddr2_top.py, beside this file) holds the NV-DDR2 engine and the SDR
engine on one simulation PHY, selected by its `nvddr2` input, as a channel controller would.
Each test resets the dies and selects NV-DDR2 through SET FEATURES 01h in SDR mode 0, the way
a host does it; the die model switches its interface when that command completes. One
OnfiPinTarget (NandDie + OnfiTimingChecker, NV-DDR2 rules once switched) sits on each CE#;
every test ends with no timing or NAND rule violation left. The geometry is scaled down (2 KB
+ 64 B pages); the array times are the part's real ones.
"""

import random
from collections import deque
from dataclasses import replace
from pathlib import Path

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import (
    ClockCycles,
    Event,
    First,
    ReadOnly,
    RisingEdge,
    Timer,
    ValueChange,
)
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits

from rtl.nand.onfi_nvddr2_engine import (
    NVDDR2_TIMING_REGISTERS,
    OnfiNvddr2Engine,
    nvddr2_timing_layout,
)
from rtl.nand.onfi_phy_if import PHY_IN_LATENCY, PHY_OUT_LATENCY
from rtl.nand.onfi_sdr_engine import CycleKind, CycleRequest, timing_layout
from sim.nand.python.nand_die import NandDie
from sim.nand.python.onfi_die_pins import OnfiBus, OnfiPinTarget
from spec.nand_geometry import PARTS, NandGeometry
from spec.onfi_timing import (
    NVDDR2_ENGINE_REGISTERS,
    NVDDR2_MODES,
    OnfiPins,
    OnfiTimingChecker,
    engine_registers,
    nvddr2_engine_registers,
)

GEO = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=8,
                   planes=2, luns=1, bits_per_cell=2)
PART = replace(PARTS["imft-20nm-mlc-64gbit"], geometry=GEO)
CMD, ADDR, DIN, DOUT, WAIT_RB, WAIT_CCS = (CycleKind.CMD, CycleKind.ADDR, CycleKind.DIN,
                                           CycleKind.DOUT, CycleKind.WAIT_RB, CycleKind.WAIT_CCS)


# longest wait for read data before a test fails with the engine's state (tBERS is 3 ms)
STUCK_US = 4000


def full_rate_mhz(mode):
    """The clock at which one engine cycle is half the mode's period: one byte per clock,
    DQS and RE# at the mode's full rate."""
    return 2000.0 / NVDDR2_MODES[mode].tDSC


class Sequencer:
    """Request driver (optional random gaps) and read-data collector (optional random
    ready), with ONFI sequences on top. Waits are event driven."""

    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.queue = deque()
        self.kick, self.rdata_ev, self.want_ev = Event(), Event(), Event()
        self.rdata = []
        self.rtimes = []            # sim time (ps) at which each read byte was taken
        self.taken = 0
        self.gap_prob = 0.0         # chance of an idle cycle before a request
        self.ready_prob = 1.0       # chance m_rdata.ready is high in a cycle
        self.nvddr2 = False
        dut.s_cycle__valid.value = 0
        dut.s_cycle__payload.value = 0
        dut.m_rdata__ready.value = 0
        cocotb.start_soon(self._driver())
        cocotb.start_soon(self._collector())
        self.want = 0

    def send(self, kind, way, data=0, last=0):
        self.queue.append((kind, way, data, last))
        self.kick.set()

    async def _driver(self):
        dut = self.dut
        while True:
            if not self.queue:
                dut.s_cycle__valid.value = 0
                self.kick.clear()
                await self.kick.wait()
                await RisingEdge(dut.clk)
                continue
            if self.gap_prob and self.rng.random() < self.gap_prob:
                dut.s_cycle__valid.value = 0
                await ClockCycles(dut.clk, self.rng.randrange(1, 6))
            kind, way, byte, last = self.queue.popleft()
            dut.s_cycle__payload.value = struct_bits(CycleRequest, kind=kind, way=way,
                                                     data=byte, last=last)
            dut.s_cycle__valid.value = 1
            while True:         # event driven while the engine holds a request (WAIT_RB)
                await ReadOnly()
                if int(dut.s_cycle__ready.value):
                    await RisingEdge(dut.clk)
                    break
                await RisingEdge(dut.s_cycle__ready)
            if not self.queue:
                dut.s_cycle__valid.value = 0

    async def _collector(self):
        # event driven while m_rdata is empty, so long busy times cost no Python time
        dut = self.dut
        while True:
            if len(self.rdata) >= self.want:
                dut.m_rdata__ready.value = 0
                self.want_ev.clear()
                await self.want_ev.wait()
                await RisingEdge(dut.clk)
                continue
            dut.m_rdata__ready.value = int(self.rng.random() < self.ready_prob)
            await ReadOnly()
            valid = int(dut.m_rdata__valid.value)
            if valid and int(dut.m_rdata__ready.value):
                self.rdata.append(int(dut.m_rdata__payload.value))
                self.rtimes.append(get_sim_time("ps"))
                if len(self.rdata) >= self.want:
                    self.rdata_ev.set()
            if valid:
                await RisingEdge(dut.clk)
            else:
                await RisingEdge(dut.m_rdata__valid)

    async def collect(self, n):
        """The next n read bytes, checking `last` is set on the final one only."""
        self.want = self.taken + n
        self.want_ev.set()
        while len(self.rdata) < self.want:
            self.rdata_ev.clear()
            timer = Timer(STUCK_US, "us")
            fired = await First(self.rdata_ev.wait(), timer)
            dut = self.dut
            if fired is timer and len(self.rdata) < self.want:
                raise AssertionError(
                    f"read data stuck for {STUCK_US} us: {len(self.rdata)} of {self.want} "
                    f"bytes, {len(self.queue)} requests queued, ce_n={int(dut.ce_n.value):b} "
                    f"re_n={int(dut.re_n.value)} we_n={int(dut.we_n.value)} "
                    f"dqs_oe={int(dut.dqs_oe.value)} rb_n={int(dut.rb_n.value):b}; "
                    f"{self.internals()}")
        await RisingEdge(self.dut.clk)      # leave the read-only phase the data came in
        beats = self.rdata[self.taken:self.want]
        self.taken = self.want
        lasts = [b >> 8 for b in beats]
        assert lasts == [0] * (n - 1) + [1], f"`last` flags {lasts}"
        return bytes(b & 0xFF for b in beats)

    def internals(self):
        """Engine and PHY state for a failure message (names of the generated Verilog)."""
        out = []
        for path in ("nvddr2_engine.fsm_state", "nvddr2_engine.pairs_open",
                     "nvddr2_engine.held", "nvddr2_engine.hold_cnt", "phy.rp", "phy.wp_s",
                     "phy.phy__rx_en"):
            handle = self.dut
            try:
                for part in path.split("."):
                    handle = getattr(handle, part)
                out.append(f"{path}={int(handle.value)}")
            except (AttributeError, ValueError):
                out.append(f"{path}=?")
        for t in getattr(self, "targets", []):
            out.append(f"{t.name}: rd={t.rd} out={t.out if not isinstance(t.out, list) else 'list'}"
                       f" edges={t.checker.edges}")
        return " ".join(out)

    async def drained(self, n_ways):
        """Every request sent, CE# high and the pins at rest for a few cycles (waits on pin
        changes, not on every clock, so a RESET's busy time costs no Python time)."""
        dut = self.dut
        all_high = (1 << n_ways) - 1
        await RisingEdge(dut.clk)       # callers may come from a read-only phase
        while True:
            await ReadOnly()
            if self.queue or int(dut.s_cycle__valid.value):
                await First(ValueChange(dut.s_cycle__valid), ValueChange(dut.s_cycle__ready))
                continue
            if int(dut.ce_n.value) != all_high:
                await ValueChange(dut.ce_n)
                continue
            await ClockCycles(dut.clk, 4)
            await ReadOnly()
            if (not self.queue and int(dut.ce_n.value) == all_high and int(dut.we_n.value)
                    and int(dut.re_n.value) and not int(dut.dqs_oe.value)
                    and not int(dut.s_cycle__valid.value)):
                break
        await RisingEdge(dut.clk)

    # -- ONFI sequences --

    def dout(self, way, n):
        for i in range(n):
            self.send(DOUT, way, last=int(i == n - 1))

    def addr(self, way, value, cycles):
        for i in range(cycles):
            self.send(ADDR, way, (value >> (8 * i)) & 0xFF)

    def reset(self, way):
        self.send(CMD, way, 0xFF)
        self.send(WAIT_RB, way, last=1)

    def set_features(self, way, fa, params):
        self.send(CMD, way, 0xEF)
        self.send(ADDR, way, fa)
        for p in params:
            for _ in range(2 if self.nvddr2 else 1):     # NV-DDR2: each byte twice
                self.send(DIN, way, p)
        self.send(WAIT_RB, way, last=1)

    async def get_features(self, way, fa):
        self.send(CMD, way, 0xEE)
        self.send(ADDR, way, fa)
        self.send(WAIT_RB, way)
        n = 8 if self.nvddr2 else 4
        self.dout(way, n)
        raw = await self.collect(n)
        return raw[::2] if self.nvddr2 else raw

    async def read_id(self, way, a, n):
        self.send(CMD, way, 0x90)
        self.send(ADDR, way, a)
        k = 2 * n if self.nvddr2 else n
        self.dout(way, k)
        raw = await self.collect(k)
        if self.nvddr2:
            assert raw[::2] == raw[1::2], f"NV-DDR2 READ ID bytes not doubled: {raw.hex()}"
            return raw[::2]
        return raw

    async def status(self, way):
        self.send(CMD, way, 0x70)
        self.dout(way, 1)
        return (await self.collect(1))[0]

    async def erase(self, way, row):
        self.send(CMD, way, 0x60)
        self.addr(way, row, GEO.row_cycles)
        self.send(CMD, way, 0xD0)
        self.send(WAIT_RB, way)
        return await self.status(way)

    async def program(self, way, row, column, payload):
        self.send(CMD, way, 0x80)
        self.addr(way, column, GEO.column_cycles)
        self.addr(way, row, GEO.row_cycles)
        for b in payload:
            self.send(DIN, way, b)
        self.send(CMD, way, 0x10)
        self.send(WAIT_RB, way)
        return await self.status(way)

    async def read(self, way, row, column, n):
        self.send(CMD, way, 0x00)
        self.addr(way, column, GEO.column_cycles)
        self.addr(way, row, GEO.row_cycles)
        self.send(CMD, way, 0x30)
        self.send(WAIT_RB, way)
        self.dout(way, n)
        return await self.collect(n)

    async def change_read_column(self, way, column, n):
        self.send(CMD, way, 0x05)
        self.addr(way, column, GEO.column_cycles)
        self.send(CMD, way, 0xE0)
        self.send(WAIT_CCS, way)
        self.dout(way, n)
        return await self.collect(n)


class TB:
    """Clock, reset, both engines' registers, the sequencer and one pin target per CE#."""

    def __init__(self, dut, mode, clk_mhz, salt=0, **overrides):
        self.dut = dut
        params = core_params()
        self.n_ways = params.get("n_ways", 1)
        self.width = params.get("timer_width", 8)
        self.seed = cocotb.RANDOM_SEED * 1000 + salt
        self.rng = random.Random(self.seed)
        self.log = dut._log
        self.mode, self.clk_mhz = mode, clk_mhz
        self.period_ps = round(1e6 / clk_mhz)
        self.log.info("seed %d salt %d n_ways %d NV-DDR2 mode %d at %.2f MHz",
                      cocotb.RANDOM_SEED, salt, self.n_ways, mode, clk_mhz)
        period_ns = self.period_ps / 1000
        self.sdr_regs = engine_registers(
            0, clk_mhz, self.width,
            sample_margin_ns=1 + (PHY_OUT_LATENCY + PHY_IN_LATENCY) * period_ns)
        self.regs = nvddr2_engine_registers(mode, clk_mhz, self.width, **overrides)
        dut.sdr_timing.value = struct_bits(timing_layout(self.width), **self.sdr_regs)
        dut.timing.value = struct_bits(nvddr2_timing_layout(self.width), **self.regs)
        dut.write_protect.value = 0
        dut.nvddr2.value = 0
        Clock(dut.clk, self.period_ps, unit="ps", impl="gpi").start()
        self.bus = OnfiBus(dut, seed=self.seed, log=self.log)
        self.targets = [OnfiPinTarget(self.bus, NandDie(PART, seed=self.seed + i), ce=i)
                        for i in range(self.n_ways)]
        self.dies = [t.die for t in self.targets]
        self.seq = None

    async def start(self):
        """Reset, RESET every die (SDR mode 0), select NV-DDR2 `mode` on every die with SET
        FEATURES 01h, then switch the top to the NV-DDR2 engine."""
        dut = self.dut
        dut.rst.value = 1
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        self.seq = Sequencer(dut, self.rng)
        self.seq.targets = self.targets
        for way in range(self.n_ways):
            self.seq.reset(way)
        for way in range(self.n_ways):
            self.seq.set_features(way, 0x01, [0x20 | self.mode, 0, 0, 0])
        await self.seq.drained(self.n_ways)
        for t in self.targets:
            assert t.iface == "nvddr2" and t.mode == self.mode, \
                f"{t.name}: die interface {t.iface} mode {t.mode} after SET FEATURES"
        dut.nvddr2.value = 1
        self.seq.nvddr2 = True
        await RisingEdge(dut.clk)

    def way(self):
        return self.rng.randrange(self.n_ways)

    def finish(self):
        self.bus.assert_clean()


def data_latched(target):
    return bytes(b for kind, b in target.latched if kind == "data")


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_vectors(dut):
    """Command, address, data-in and data-out vectors: the die latches exactly the bytes
    sent (commands and addresses on WE#, data on DQS edges), GET FEATURES and READ ID come
    back doubled, a partial page programmed at a column reads back, status and CCS work."""
    tb = TB(dut, mode=4, clk_mhz=100, salt=1)
    await tb.start()
    seq = tb.seq
    for way, target in enumerate(tb.targets):
        assert await seq.get_features(way, 0x01) == bytes([0x24, 0, 0, 0])
        assert await seq.read_id(way, 0x00, 5) == tb.dies[way].part.id_bytes[:5]
        assert await seq.read_id(way, 0x20, 4) == b"ONFI"
        n_latched = len(target.latched)
        row = GEO.pack_row(0, 1, 0)
        payload = bytes(tb.rng.randrange(256) for _ in range(22))
        assert await seq.program(way, row, 0x30, payload) & 0x01 == 0
        cmds = [("cmd", 0x80)] + [("addr", b) for b in (0x30, 0x00)] + \
            [("addr", b) for b in row.to_bytes(GEO.row_cycles, "little")] + \
            [("data", b) for b in payload] + [("cmd", 0x10), ("cmd", 0x70)]
        assert target.latched[n_latched:] == cmds, f"way {way}: latched {target.latched}"
        assert tb.dies[way].page_data(0, 1, 0)[0x30:0x30 + 22] == payload
        got = await seq.read(way, row, 0x30, 22)
        assert got == payload, f"way {way}: read {got.hex()} != {payload.hex()}"
        # an odd count: the engine pads the burst with one RE# edge, the byte is dropped
        assert await seq.change_read_column(way, 0x31, 5) == payload[1:6]
        # odd data-in count: the pad slot repeats the last byte (column + 1)
        odd = bytes([0x5A, 0xC3, 0x81])
        assert await seq.program(way, GEO.pack_row(0, 1, 1), 0, odd) & 0x01 == 0
        assert tb.dies[way].page_data(0, 1, 1)[:4] == odd + odd[-1:]
    tb.finish()
    for t in tb.targets:
        assert t.checker.edges.get("dqs_rise", 0) >= 12
        assert t.checker.edges.get("rpre", 0) >= 5


@cocotb.test(timeout_time=80, timeout_unit="ms")
async def test_page_readback(dut):
    """Erase, program a full page (data + spare) with random bytes, read it back."""
    tb = TB(dut, mode=5, clk_mhz=full_rate_mhz(5), salt=2)
    await tb.start()
    for way in range(tb.n_ways):
        row = GEO.pack_row(0, 2 + way % 4, 0)
        assert await tb.seq.erase(way, row) & 0x01 == 0
        page = tb.rng.randbytes(GEO.register_bytes)
        assert await tb.seq.program(way, row, 0, page) & 0x01 == 0
        assert tb.dies[way].page_data(0, 2 + way % 4, 0) == page
        got = await tb.seq.read(way, row, 0, len(page))
        bad = [i for i, (a, b) in enumerate(zip(got, page, strict=True)) if a != b]
        assert not bad, f"way {way}: {len(bad)} bytes differ, first at {bad[0]}"
    tb.finish()


@cocotb.test(timeout_time=20, timeout_unit="ms")
@cocotb.parametrize(mode=list(range(8)))
async def test_timing_mode(dut, mode):
    """Each NV-DDR2 timing mode at the clock of its full rate (one byte per clock, DQS and
    RE# at tDSC = tRC): program and read back, no violation."""
    tb = TB(dut, mode=mode, clk_mhz=full_rate_mhz(mode), salt=10 + mode)
    assert tb.regs["t_dqs"] == 1 and tb.regs["t_re"] == 1
    await tb.start()
    way = tb.way()
    row = GEO.pack_row(0, 3, 0)
    payload = tb.rng.randbytes(64)
    assert await tb.seq.program(way, row, 0, payload) & 0x01 == 0
    assert await tb.seq.read(way, row, 0, 64) == payload
    assert await tb.seq.change_read_column(way, 8, 16) == payload[8:24]
    t = tb.targets[way].checker
    # the strobes ran at the mode's full rate
    assert t.edges.get("dqs_rise", 0) >= 32
    tb.finish()


@cocotb.test(timeout_time=80, timeout_unit="ms")
async def test_read_rate(dut):
    """A full page (data + spare) read in mode 7 at its full rate, m_rdata always ready: one
    read burst (one preamble) at one byte per clock, so the capture path (PHY pairs, the hold
    register, the FIFO) keeps up with RE#. The rate is counted on m_rdata from the first to
    the last byte."""
    tb = TB(dut, mode=7, clk_mhz=full_rate_mhz(7), salt=6)
    await tb.start()
    way = tb.way()
    row = GEO.pack_row(0, 6, 0)
    page = tb.rng.randbytes(GEO.register_bytes)
    assert await tb.seq.program(way, row, 0, page) & 0x01 == 0
    checker = tb.targets[way].checker
    pre = checker.edges.get("rpre", 0)
    first = len(tb.seq.rdata)
    assert await tb.seq.read(way, row, 0, len(page)) == page
    times = tb.seq.rtimes[first:]
    cycles = (times[-1] - times[0]) / tb.period_ps
    rate = (len(page) - 1) / cycles
    bursts = checker.edges.get("rpre", 0) - pre
    tb.log.info("%d bytes in %.0f cycles: %.3f bytes per clock, %d read bursts",
                len(page), cycles, rate, bursts)
    assert bursts == 1, f"the page read took {bursts} bursts (preambles), not one"
    assert rate >= 0.99, f"{rate:.3f} bytes per clock on m_rdata, not one"
    tb.finish()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_backpressure(dut):
    """Random m_rdata ready and gaps in the request stream lose and reorder no byte; the
    engine never lets RE# run ahead of the room for its bytes."""
    tb = TB(dut, mode=7, clk_mhz=full_rate_mhz(7), salt=4)
    await tb.start()
    rows = []
    for way in range(tb.n_ways):
        row = GEO.pack_row(0, 4, 0)     # one die per way: page 0 of each
        page = tb.rng.randbytes(300)
        assert await tb.seq.program(way, row, 0, page) & 0x01 == 0
        rows.append((way, row, page))
    for prob in (0.7, 0.3, 0.05):
        tb.seq.ready_prob = prob
        tb.seq.gap_prob = 1 - prob
        for way, row, page in rows:
            got = await tb.seq.read(way, row, 0, len(page))
            assert got == page, f"ready {prob}: bytes lost or reordered"
    tb.finish()


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_reset_returns_to_sdr(dut):
    """RESET in NV-DDR2 mode returns the die to SDR mode 0 once it completes: the SDR engine
    then reads status and ID again."""
    tb = TB(dut, mode=3, clk_mhz=100, salt=5)
    await tb.start()
    for way in range(tb.n_ways):
        assert await tb.seq.get_features(way, 0x01) == bytes([0x23, 0, 0, 0])
        tb.seq.reset(way)
    await tb.seq.drained(tb.n_ways)
    for t in tb.targets:
        assert t.iface == "sdr" and t.mode == 0, f"{t.name}: {t.iface} mode {t.mode}"
        assert t.checker.edges.get("rpre", 0) == 1, "the NV-DDR2 GET FEATURES read burst"
    dut.nvddr2.value = 0
    tb.seq.nvddr2 = False
    await RisingEdge(dut.clk)
    for way, die in enumerate(tb.dies):
        assert await tb.seq.read_id(way, 0x00, 5) == die.part.id_bytes[:5]
        assert await tb.seq.status(way) & 0x40
    tb.finish()


# case -> (registers too short at mode 4 / 200 MHz, the NV-DDR2 parameter they break)
BROKEN = {
    "t_whr": ({"t_whr": 3}, "tWHR"),
    "t_wpre": ({"t_wpre": 1}, "tWPRE"),
    "t_adl": ({"t_adl": 20}, "tADL"),
    # WE# stays low max(t_wp, t_cals, t_cas) cycles: both short to break the CLE/ALE setup
    "t_wp+t_cals": ({"t_wp": 1, "t_cals": 1}, "tCALS"),
    "t_rpre": ({"t_rpre": 1}, "tRPRE"),
}


@cocotb.test(timeout_time=20, timeout_unit="ms")
@cocotb.parametrize(case=list(BROKEN))
async def test_checker_catches_short_register(dut, case):
    """Timing registers programmed too short are reported by the die's checker, by name."""
    regs, param = BROKEN[case]
    tb = TB(dut, mode=4, clk_mhz=200, salt=20)
    await tb.start()
    dut.timing.value = struct_bits(nvddr2_timing_layout(tb.width),
                                   **nvddr2_engine_registers(4, 200, tb.width, **regs))
    way = tb.way()
    row = GEO.pack_row(0, 5, 0)
    payload = tb.rng.randbytes(16)
    await tb.seq.program(way, row, 0, payload)
    await tb.seq.read(way, row, 0, 16)
    hits = [v for t in tb.targets for v in t.checker.violated(param)]
    assert hits, f"{regs} broke {param} but the checker saw nothing"
    required = getattr(NVDDR2_MODES[4], param)
    assert f"{param} violated:" in hits[0].message and f"< {required:g} ns" in hits[0].message
    tb.log.info("caught as expected: %s", hits[0])


TOP = AmaranthCore("onfi_nvddr2_top:OnfiNvddr2Top", toplevel="onfi_nvddr2_top")

# the smoke tier: one build, the vectors, the fastest mode, a broken register, the return to
# SDR; the full tier runs every test on more builds
SMOKE = ["test_vectors", "test_timing_mode/mode=7", "test_read_rate",
         "test_checker_catches_short_register/case=1", "test_reset_returns_to_sdr"]


@pytest.mark.smoke
def test_onfi_nvddr2_engine():
    run(TOP.with_params(n_ways=2), __file__, testcase=SMOKE)


@pytest.mark.full
@pytest.mark.parametrize("n_ways,timer_width", [(1, 8), (2, 8), (4, 9), (8, 10), (3, 12)])
def test_onfi_nvddr2_engine_sweep(n_ways, timer_width):
    run(TOP.with_params(n_ways=n_ways, timer_width=timer_width), __file__)


@pytest.mark.smoke
@pytest.mark.parametrize("params,name", [({"n_ways": 0}, "n_ways"), ({"n_ways": 9}, "n_ways"),
                                         ({"timer_width": 5}, "timer_width"),
                                         ({"timer_width": 17}, "timer_width"),
                                         ({"n_ways": True}, "n_ways")])
def test_onfi_nvddr2_engine_bad_params(params, name):
    with pytest.raises(ValueError, match=name):
        OnfiNvddr2Engine(**params)


@pytest.mark.smoke
def test_onfi_nvddr2_engine_register_list():
    """The converter, the core and the README agree on the timing registers; the converter
    refuses what does not fit."""
    names = tuple(name for name, _ in NVDDR2_TIMING_REGISTERS)
    assert NVDDR2_ENGINE_REGISTERS == names
    readme = (Path(__file__).resolve().parents[3] / "rtl" / "nand" / "README.md").read_text()
    section = readme[readme.index("## onfi_nvddr2_engine"):]
    missing = [n for n in names if f"| `{n}` |" not in section]
    assert not missing, f"rtl/nand/README.md does not document {missing}"
    with pytest.raises(ValueError, match="t_adl"):
        nvddr2_engine_registers(0, 800, width=8)
    with pytest.raises(ValueError, match="mode"):
        nvddr2_engine_registers(8, 100)
    with pytest.raises(ValueError, match="unknown"):
        nvddr2_engine_registers(0, 100, t_nope=1)


# --- the checker's NV-DDR2 rules on hand-made waveforms (no simulator) ---

def nvddr2_waveform(**shift):
    """A program's command, address and two data bytes, then a two-byte read, in NV-DDR2 mode
    4 with every spacing legal; `shift` moves named events (ns) to break one rule."""
    ev = {"pre": 480, "rise": 500, "dq2": 505, "fall": 510, "dq_off": 515, "release": 525,
          "re_pre": 700, "re_rise": 720, "re_fall": 730, "re_end": 780, "ce_high": 800}
    ev.update(shift)
    pins = {"ce_n": 0, "cle": 0, "ale": 0, "we_n": 1, "re_n": 1, "dq": None, "dqs": None}
    steps = [(0, {}), (10, {"cle": 1, "dq": 0x80, "we_n": 0}), (40, {"we_n": 1}),
             (50, {"cle": 0, "dq": None}), (60, {"ale": 1, "dq": 0x00, "we_n": 0}),
             (90, {"we_n": 1}), (100, {"ale": 0, "dq": None}),
             (ev["pre"], {"dqs": 0, "dq": 0xA1}), (ev["rise"], {"dqs": 1}),
             (ev["dq2"], {"dq": 0xA2}), (ev["fall"], {"dqs": 0}), (ev["dq_off"], {"dq": None}),
             (ev["release"], {"dqs": None}), (ev["re_pre"], {"re_n": 0}),
             (ev["re_rise"], {"re_n": 1}), (ev["re_fall"], {"re_n": 0}),
             (ev["re_end"], {"re_n": 1}), (ev["ce_high"], {"ce_n": 1})]
    checker = OnfiTimingChecker(NVDDR2_MODES[4])
    for t, changes in sorted(steps, key=lambda s: s[0]):
        pins.update(changes)
        checker.observe(t, OnfiPins(**pins))
    return checker


@pytest.mark.smoke
@pytest.mark.parametrize("shift,param", [
    ({}, None),
    ({"release": 512}, "tWPST"),            # DQS released 2 ns after the last falling edge
    ({"dq2": 509.8}, "tDS"),                # DQ 0.2 ns before the falling DQS edge
    ({"dq2": 500.2}, "tDH"),                # DQ 0.2 ns after the rising DQS edge
    ({"pre": 490}, "tWPRE"),                # 10 ns preamble
    ({"pre": 460, "rise": 480, "dq2": 485, "fall": 490, "dq_off": 495, "release": 505},
     "tADL"),                               # the first DQS edge 390 ns after the address
    ({"re_pre": 150, "re_rise": 170, "re_fall": 180, "re_end": 230}, "tWHR"),
    ({"re_end": 745}, "tRPST"),             # RE# high 15 ns after the last falling edge
    ({"ce_high": 785}, "tRPSTH"),           # CE# high 5 ns after the postamble
])
def test_nvddr2_checker_rules(shift, param):
    """The checker's NV-DDR2 rules: a legal waveform is clean and latches its bytes; each
    broken spacing is reported by its parameter name."""
    checker = nvddr2_waveform(**shift)
    if param is None:
        assert not checker.violations, [str(v) for v in checker.violations]
        assert checker.latched == [("cmd", 0x80), ("addr", 0x00), ("data", 0xA1),
                                   ("data", 0xA2)]
        assert checker.edges["rpre"] == 1 and checker.edges["dqs_rise"] == 1
    else:
        assert [v.param for v in checker.violations] == [param], \
            [str(v) for v in checker.violations]
