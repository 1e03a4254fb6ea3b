# SPDX-License-Identifier: BSD-2-Clause
"""Tests of onfi_die_pins: the golden die model at pin level behind the real onfi_sdr_engine.

A small command sequencer in this file issues ONFI command sequences as engine requests; one
OnfiPinTarget (NandDie + timing checker) sits on each CE#. The geometry is scaled down (2 KB +
64 B pages, 16 pages per block, 2 planes x 8 blocks, 2 LUNs) so pages move quickly; the array
times are the part's real ones (tR 100 us, tPROG 1.3 ms, tBERS 3 ms, first tRST 1 ms): the
clock runs in the simulator and the pin model sleeps on events, so waiting costs little.
Clock 100 MHz; engine timing registers from onfi_timing.engine_registers().
"""

import os
import random
from collections import deque
from dataclasses import replace

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, ReadOnly, RisingEdge, Timer
from cocotb.utils import get_sim_time
from ssdlab_harness import core_params, run, struct_bits

from rtl.nand.onfi_sdr_engine import CycleKind, CycleRequest, timing_layout
from sim.nand.python.nand_die import SR_ARDY, SR_FAIL, SR_RDY, NandDie
from sim.nand.python.onfi_die_pins import OnfiBus, OnfiPinTarget
from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry, is_factory_bad
from spec.onfi_param_page import crc16_onfi, parse_parameter_page
from spec.onfi_timing import engine_registers
from sw.ssdlab.flows.elaborate import CATALOGUE

CLK_MHZ = 100
PERIOD_NS = 1000 // CLK_MHZ
GEO = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=8,
                   planes=2, luns=2, bits_per_cell=2)
PART = replace(PARTS["imft-20nm-mlc-64gbit"], geometry=GEO,
               timing=NandArrayTiming())  # one tR, tPROG for every page type
CMD, ADDR, DIN, DOUT, WAIT_RB, WAIT_CCS = (CycleKind.CMD, CycleKind.ADDR, CycleKind.DIN,
                                           CycleKind.DOUT, CycleKind.WAIT_RB, CycleKind.WAIT_CCS)


class Sequencer:
    """Engine request driver and read-data collector, with ONFI command sequences on top.

    Waits are event driven (engine ready, read data), so tR/tPROG/tBERS cost no Python time.
    """

    def __init__(self, dut, geometry, width):
        self.dut, self.g, self.width = dut, geometry, width
        self.queue = deque()
        self.kick, self.accepted_ev, self.dout_ev, self.rdata_ev = (Event(), Event(), Event(),
                                                                     Event())
        self.queued = self.accepted = self.pending_dout = 0
        self.rdata = []
        self.taken = 0
        dut.s_cycle__valid.value = 0
        dut.s_cycle__payload.value = 0
        dut.m_rdata__ready.value = 1
        cocotb.start_soon(self._driver())
        cocotb.start_soon(self._collector())

    # -- engine requests --

    def send(self, kind, way, data=0, last=0):
        self.queue.append((kind, way, data, last))
        self.queued += 1
        self.kick.set()

    async def _driver(self):
        dut = self.dut
        while True:
            if not self.queue:
                dut.s_cycle__valid.value = 0
                self.kick.clear()
                await self.kick.wait()
                await RisingEdge(dut.clk)       # write the request in a writable phase
                continue
            kind, way, byte, last = self.queue.popleft()
            dut.s_cycle__payload.value = struct_bits(CycleRequest, kind=kind, way=way,
                                                     data=byte, last=last)
            dut.s_cycle__valid.value = 1
            while True:
                await ReadOnly()
                if int(dut.s_cycle__ready.value):
                    await RisingEdge(dut.clk)
                    break
                await RisingEdge(dut.s_cycle__ready)
            self.accepted += 1
            if kind == DOUT:
                self.pending_dout += 1
                self.dout_ev.set()
            self.accepted_ev.set()
            if not self.queue:
                dut.s_cycle__valid.value = 0

    async def _collector(self):
        dut = self.dut
        while True:
            if not self.pending_dout:
                self.dout_ev.clear()
                await self.dout_ev.wait()
                continue
            await RisingEdge(dut.clk)
            await ReadOnly()
            if int(dut.m_rdata__valid.value) and int(dut.m_rdata__ready.value):
                value = int(dut.m_rdata__payload.value)
                self.rdata.append(value & 0xFF)
                self.pending_dout -= 1
                self.rdata_ev.set()

    async def collect(self, n):
        while len(self.rdata) < self.taken + n:
            self.rdata_ev.clear()
            await self.rdata_ev.wait()
        out = bytes(self.rdata[self.taken:self.taken + n])
        self.taken += n
        return out

    async def idle(self):
        """Every queued request accepted and done (the engine back in IDLE)."""
        dut = self.dut
        while self.accepted < self.queued:
            self.accepted_ev.clear()
            await self.accepted_ev.wait()
        await RisingEdge(dut.clk)       # callers may come from a read-only phase
        await ReadOnly()
        while not int(dut.s_cycle__ready.value):
            await RisingEdge(dut.s_cycle__ready)
            await ReadOnly()
        await ClockCycles(dut.clk, 2)

    # -- ONFI sequences (way = CE#) --

    def cmd(self, way, c, last=0):
        self.send(CMD, way, c, last)

    def addr(self, way, cycles):
        for b in cycles:
            self.send(ADDR, way, b)

    def dout(self, way, n):
        for i in range(n):
            self.send(DOUT, way, last=int(i == n - 1))

    async def reset(self, way, wait=True):
        self.cmd(way, 0xFF)
        self.send(WAIT_RB, way, last=1)
        if wait:
            await self.idle()

    async def read_id(self, way, address, n):
        self.cmd(way, 0x90)
        self.addr(way, [address])
        self.dout(way, n)
        return await self.collect(n)

    async def read_parameter_page(self, way, n):
        self.cmd(way, 0xEC)
        self.addr(way, [0x00])
        self.send(WAIT_RB, way)
        self.dout(way, n)
        return await self.collect(n)

    async def status(self, way):
        self.cmd(way, 0x70)
        self.dout(way, 1)
        return (await self.collect(1))[0]

    async def poll(self, way, interval_ns=20_000):
        """Poll READ STATUS until RDY (the controller's poll interval is its own choice)."""
        polls = 0
        while True:
            sr = await self.status(way)
            polls += 1
            if sr & SR_RDY:
                return sr, polls
            await Timer(interval_ns, unit="ns")

    def erase(self, way, row, wait=True):
        self.cmd(way, 0x60)
        self.addr(way, self.g.row_address_bytes(row))
        self.cmd(way, 0xD0, last=int(not wait))
        if wait:
            self.send(WAIT_RB, way, last=1)

    def program(self, way, row, payload, column=0, wait=True):
        self.cmd(way, 0x80)
        self.addr(way, self.g.address_bytes(column, row))
        for b in payload:
            self.send(DIN, way, b)
        self.cmd(way, 0x10, last=int(not wait))
        if wait:
            self.send(WAIT_RB, way, last=1)

    async def read_page(self, way, row, column, n):
        self.cmd(way, 0x00)
        self.addr(way, self.g.address_bytes(column, row))
        self.cmd(way, 0x30)
        self.send(WAIT_RB, way)
        self.dout(way, n)
        return await self.collect(n)

    async def change_read_column(self, way, column, n):
        self.cmd(way, 0x05)
        self.addr(way, self.g.column_address_bytes(column))
        self.cmd(way, 0xE0)
        self.send(WAIT_CCS, way)
        self.dout(way, n)
        return await self.collect(n)

    async def set_features(self, way, address, params):
        self.cmd(way, 0xEF)
        self.addr(way, [address])
        for b in params:
            self.send(DIN, way, b)
        self.send(WAIT_RB, way, last=1)
        await self.idle()

    async def get_features(self, way, address):
        self.cmd(way, 0xEE)
        self.addr(way, [address])
        self.send(WAIT_RB, way)
        self.dout(way, 4)
        return await self.collect(4)


class TB:
    """Clock, reset, engine timing registers, the sequencer and one pin target per CE#."""

    def __init__(self, dut, mode=0, salt=0, die_seed=None, **die_args):
        self.dut = dut
        params = core_params()
        self.n_ways = params.get("n_ways", 1)
        self.width = params.get("timer_width", 8)
        self.seed = cocotb.RANDOM_SEED * 1000 + salt
        self.rng = random.Random(self.seed)
        self.log = dut._log
        self.log.info("seed %d salt %d n_ways %d", cocotb.RANDOM_SEED, salt, self.n_ways)
        dut.write_protect.value = 0
        self.set_timing(mode)
        Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start()
        self.bus = OnfiBus(dut, seed=self.seed, log=self.log)
        die_seed = self.seed if die_seed is None else die_seed
        self.targets = [OnfiPinTarget(self.bus, NandDie(PART, seed=die_seed + i, **die_args),
                                      ce=i) for i in range(self.n_ways)]
        self.dies = [t.die for t in self.targets]
        self.seq = None

    def set_timing(self, mode, **overrides):
        self.regs = engine_registers(mode, CLK_MHZ, self.width, **overrides)
        self.dut.timing.value = struct_bits(timing_layout(self.width), **self.regs)

    async def retime(self, mode, **overrides):
        """New engine timing registers, written while the engine is idle."""
        await self.seq.idle()
        self.set_timing(mode, **overrides)

    async def reset(self, reset_dies=True):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)
        self.seq = Sequencer(self.dut, GEO, self.width)
        if reset_dies:
            for way in range(self.n_ways):      # every RESET first, so their tRST overlap
                await self.seq.reset(way, wait=False)
            await self.seq.idle()

    def row(self, lun, block, page):
        return GEO.pack_row(lun, block, page)

    def page(self, n=None):
        return self.rng.randbytes(GEO.register_bytes if n is None else n)

    def finish(self):
        self.bus.assert_clean()


def now_ns():
    return get_sim_time("ns")


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_reset_read_id(dut):
    """RESET then READ ID 00h and 20h on every CE# return the model's bytes."""
    tb = TB(dut, salt=1)
    await tb.reset()
    for way, die in enumerate(tb.dies):
        ident = await tb.seq.read_id(way, 0x00, len(die.part.id_bytes))
        assert ident == die.part.id_bytes, f"way {way}: READ ID 00h {ident.hex()}"
        onfi = await tb.seq.read_id(way, 0x20, 4)
        assert onfi == b"ONFI", f"way {way}: READ ID 20h {onfi!r}"
        assert die.stats["resets"] == 1
        # the pin target latched exactly what the sequencer sent
        assert tb.targets[way].latched[:4] == [("cmd", 0xFF), ("cmd", 0x90), ("addr", 0x00),
                                               ("cmd", 0x90)]
    tb.finish()


@cocotb.test(timeout_time=20, timeout_unit="ms")
async def test_parameter_page_geometry(dut):
    """READ PARAMETER PAGE through the engine passes the CRC and gives the geometry back."""
    tb = TB(dut, salt=2)
    await tb.reset()
    die = tb.dies[0]
    t0 = now_ns()
    buf = await tb.seq.read_parameter_page(0, 256 * die.param_page_copies)
    # the target was busy tR before the first byte came out
    assert now_ns() - t0 >= die.timing.t_r_ns
    pages = [buf[i:i + 256] for i in range(0, len(buf), 256)]
    assert all(crc16_onfi(p[:254]) == int.from_bytes(p[254:], "little") for p in pages)
    assert all(p == pages[0] for p in pages), "parameter page copies differ"
    geo = parse_parameter_page(buf)
    want = {"page_bytes": GEO.page_bytes, "spare_bytes": GEO.spare_bytes,
            "pages_per_block": GEO.pages_per_block, "blocks_per_lun": GEO.blocks_per_lun,
            "luns": GEO.luns, "column_cycles": GEO.column_cycles, "row_cycles": GEO.row_cycles,
            "bits_per_cell": GEO.bits_per_cell, "planes": GEO.planes, "t_ccs_ns": 500,
            "copy": 0}
    assert geo == want, f"parameter page geometry {geo} != {want}"
    tb.log.info("geometry from the parameter page: %s", geo)
    # a corrupted first copy: the host falls back to the second one
    bad = bytearray(buf)
    bad[80] ^= 0x01
    assert parse_parameter_page(bytes(bad))["copy"] == 1
    tb.finish()


async def program_read_back(tb, way, lun, block, page, column):
    """Erase, program a random page, read it back from `column` with a CHANGE READ COLUMN."""
    seq, row = tb.seq, tb.row(lun, block, page)
    if page == 0:
        seq.erase(way, row)
        await seq.idle()
        sr = await seq.status(way)
        assert sr & SR_RDY and not sr & SR_FAIL, f"erase status {sr:02x}"
    payload = tb.page()
    seq.program(way, row, payload)
    await seq.idle()
    sr = await seq.status(way)
    assert sr & SR_RDY and sr & SR_ARDY and not sr & SR_FAIL, f"program status {sr:02x}"
    head = await seq.read_page(way, row, 0, 16)
    assert head == payload[:16], f"way {way}: first bytes {head.hex()}"
    rest = await seq.change_read_column(way, column, GEO.register_bytes - column)
    wrong = sum(a != b for a, b in zip(rest, payload[column:], strict=True))
    assert rest == payload[column:], (
        f"way {way} row {row:#x}: {wrong} bytes differ after CHANGE READ COLUMN to {column}")
    assert tb.dies[way].page_data(lun, block, page) == payload
    return payload


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_program_read_column(dut):
    """ERASE, PROGRAM a page of random data, READ it back with a column offset."""
    tb = TB(dut, salt=3)
    await tb.reset()
    t0 = now_ns()
    await program_read_back(tb, 0, 0, 3, 0, tb.rng.randrange(1, GEO.register_bytes))
    # R/B# followed tBERS + tPROG + tR of the model: the sequence cannot be faster
    t = tb.dies[0].timing
    assert now_ns() - t0 >= t.t_bers_ns + t.t_prog_ns + t.t_r_ns
    await program_read_back(tb, 0, 1, 5, 0, 2048)       # LUN 1, spare area only
    tb.finish()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_bad_block_status_fail(dut):
    """A program to a factory bad block: status polling sees RDY, then FAIL."""
    rate = 0.3
    # a die seed with a factory bad block in LUN 0: at this rate one in ~200 seeds has none
    seed = cocotb.RANDOM_SEED * 1000 + 4
    while not any(is_factory_bad(seed, rate, 0, b) for b in range(GEO.blocks_per_lun)):
        seed += 1000
    tb = TB(dut, salt=4, die_seed=seed, factory_bad_block_rate=rate)
    await tb.reset()
    die = tb.dies[0]
    bad = die.factory_bad_blocks(0)
    assert bad, f"die seed {seed} has no factory bad block although the spec rule says so"
    block = bad[0]
    # the ONFI bad-block marker: first spare byte of page 0 reads 00h
    marker = await tb.seq.read_page(0, tb.row(0, block, 0), GEO.page_bytes, 1)
    assert marker == b"\x00", f"bad block {block} marker {marker.hex()}"
    tb.seq.program(0, tb.row(0, block, 0), tb.page(64), wait=False)
    sr, polls = await tb.seq.poll(0)
    assert sr & SR_FAIL, f"program of factory bad block {block}: status {sr:02x}, no FAIL"
    assert polls > 1, "the program was not busy at all"
    assert die.fail_events and die.fail_events[-1].reason == "factory bad block"
    # a good block still passes
    good = next(b for b in range(GEO.blocks_per_lun) if b not in bad)
    tb.seq.program(0, tb.row(0, good, 0), tb.page(64), wait=False)
    sr, _ = await tb.seq.poll(0)
    assert not sr & SR_FAIL, f"program of good block {good}: status {sr:02x}"
    tb.finish()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_program_out_of_order(dut):
    """Programming page 2 after page 0 is reported by the model as rule page-order."""
    tb = TB(dut, salt=5)
    await tb.reset()
    seq = tb.seq
    seq.erase(0, tb.row(0, 2, 0))
    seq.program(0, tb.row(0, 2, 0), tb.page(32))
    await seq.idle()
    assert not tb.targets[0].rule_violations
    seq.program(0, tb.row(0, 2, 2), tb.page(32))
    await seq.idle()
    v = tb.targets[0].expect_rule("page-order")
    tb.log.info("reported as expected: %s", v)
    assert "page 2" in v.message and "page 1" in v.message
    tb.finish()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_timing_mode_5(dut):
    """SET FEATURES timing mode 5, engine registers for mode 5, read again: no violations."""
    tb = TB(dut, salt=6)
    await tb.reset()
    target = tb.targets[0]
    payload = await program_read_back(tb, 0, 0, 1, 0, 100)
    assert target.checker.t.tRC == 100.0
    await tb.seq.set_features(0, 0x01, [0x05, 0, 0, 0])
    assert tb.dies[0].timing_mode == 5
    await tb.retime(5)
    assert (await tb.seq.get_features(0, 0x01)) == bytes([5, 0, 0, 0])
    assert target.checker.t.tRC == 20.0, "checker not in mode 5"
    reads = target.checker.edges.get("re_fall", 0)
    t0 = now_ns()
    got = await tb.seq.read_page(0, tb.row(0, 1, 0), 0, GEO.register_bytes)
    assert got == payload, "mode 5 read differs"
    n = target.checker.edges["re_fall"] - reads
    per_byte = (now_ns() - t0 - tb.dies[0].timing.t_r_ns) / n
    tb.log.info("mode 5: %d RE# cycles, %.1f ns per byte", n, per_byte)
    assert per_byte < 40, "the engine did not speed up"
    tb.finish()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_short_t_rea_reads_garbage(dut):
    """The model's DQ is valid only from tREA: an engine sampling one cycle before tREA reads
    garbage (the checker looks at the controller side only, so the data must show it)."""
    tb = TB(dut, salt=7)
    await tb.reset()
    payload = await program_read_back(tb, 0, 0, 4, 0, 1)
    # The last sample point before tREA: the zero-margin rounding, less one cycle.
    early = engine_registers(0, CLK_MHZ, tb.width, sample_margin_ns=0)["t_rea"] - 1
    await tb.retime(0, t_rea=early)
    got = await tb.seq.read_page(0, tb.row(0, 4, 0), 0, 256)
    wrong = sum(a != b for a, b in zip(got, payload[:256], strict=True))
    assert wrong > 200, f"only {wrong}/256 bytes wrong sampling {early} cycles after RE# fell"
    tb.finish()


@cocotb.test(timeout_time=80, timeout_unit="ms")
async def test_ways_interleaved(dut):
    """Operations on several CE#s interleaved while the other dies are busy, each read back."""
    tb = TB(dut, salt=8)
    await tb.reset()
    seq, n = tb.seq, tb.n_ways
    block = 6
    for way in range(n):                        # every erase running at once
        seq.erase(way, tb.row(0, block, 0), wait=False)
    await seq.idle()
    busy = sum(not d.rb_n(now_ns()) for d in tb.dies)
    assert busy == n, f"{busy}/{n} dies busy after issuing the erases"
    payloads = {}
    for way in range(n):                        # program way k while later ways still erase
        seq.send(WAIT_RB, way)
        payloads[way] = tb.page()
        seq.program(way, tb.row(0, block, 0), payloads[way], wait=False)
    await seq.idle()
    overlap = sum(not d.rb_n(now_ns()) for d in tb.dies)
    assert overlap >= min(n, 2), f"only {overlap} dies busy programming at once"
    for way in range(n):                        # read way k while later ways still program
        seq.send(WAIT_RB, way)
        await seq.idle()
        others = sum(not d.rb_n(now_ns()) for i, d in enumerate(tb.dies) if i != way)
        got = await seq.read_page(way, tb.row(0, block, 0), 0, GEO.register_bytes)
        assert got == payloads[way], f"way {way}: read back differs"
        tb.log.info("way %d read back while %d other dies were busy", way, others)
        if way < n - 1:
            assert others, f"way {way}: no other die busy while it was read"
    assert tb.targets[0].checker.edges["we_rise"] > GEO.register_bytes
    tb.finish()


@cocotb.test(timeout_time=2000, timeout_unit="ms")
async def test_random_traffic(dut):
    """Seeded random erase/program/read/column-change traffic on every CE#, a busy die on
    one way while others are worked, checked against a dictionary of written pages."""
    tb = TB(dut, salt=9)
    await tb.reset()
    seq, rng = tb.seq, tb.rng
    n_ops = int(os.environ.get("ONFI_PINS_OPS", "12"))
    written = {}                                 # (way, lun, block, page) -> bytes
    next_page = {}                               # (way, lun, block) -> next page, erased
    pending = set()                              # ways with an op whose R/B# wait is due
    for i in range(n_ops):
        way = rng.randrange(tb.n_ways)
        if way in pending:
            seq.send(WAIT_RB, way)
            pending.discard(way)
        # few blocks, so programs and reads meet erased and written pages often
        lun, block = rng.randrange(GEO.luns), rng.randrange(2)
        key = (way, lun, block)
        op = rng.choice(["erase", "program", "program", "program", "read", "read"])
        if op == "erase" or key not in next_page:
            seq.erase(way, tb.row(lun, block, 0), wait=False)
            next_page[key] = 0
            for p in range(GEO.pages_per_block):
                written.pop((way, lun, block, p), None)
            pending.add(way)
        elif op == "program" and next_page[key] < GEO.pages_per_block:
            page = next_page[key]
            column = rng.choice([0, rng.randrange(GEO.register_bytes)])
            data = rng.randbytes(rng.randrange(1, min(300, GEO.register_bytes - column) + 1))
            seq.program(way, tb.row(lun, block, page), data, column=column, wait=False)
            image = bytearray(b"\xff" * GEO.register_bytes)
            image[column:column + len(data)] = data
            written[(way, lun, block, page)] = bytes(image)
            next_page[key] += 1
            pending.add(way)
        else:
            page = rng.randrange(GEO.pages_per_block)
            want = written.get((way, lun, block, page), b"\xff" * GEO.register_bytes)
            column = rng.randrange(GEO.register_bytes - 8)
            n = rng.randrange(1, min(64, GEO.register_bytes - column) + 1)
            got = await seq.read_page(way, tb.row(lun, block, page), column, n)
            assert got == want[column:column + n], f"op {i}: read way {way} {key} page {page}"
            col2 = rng.randrange(GEO.register_bytes - 8)
            got = await seq.change_read_column(way, col2, 8)
            assert got == want[col2:col2 + 8], f"op {i}: change column way {way}"
    for way in pending:
        seq.send(WAIT_RB, way)
    await seq.idle()
    for (way, lun, block, page), image in written.items():
        assert tb.dies[way].page_data(lun, block, page) == image
    tb.log.info("%d ops, %d pages written, %.3f ms simulated", n_ops, len(written),
                now_ns() / 1e6)
    tb.finish()


CORE = CATALOGUE["onfi_sdr_engine"]
SMOKE_TESTS = ["test_reset_read_id", "test_parameter_page_geometry", "test_program_read_column",
               "test_bad_block_status_fail", "test_program_out_of_order", "test_timing_mode_5",
               "test_short_t_rea_reads_garbage", "test_ways_interleaved", "test_random_traffic"]


@pytest.mark.smoke
def test_onfi_die_pins():
    run(CORE.with_params(n_ways=4), __file__, testcase=SMOKE_TESTS,
        extra_env={"ONFI_PINS_OPS": "12"})


@pytest.mark.full
@pytest.mark.parametrize("n_ways", [1, 8])
def test_onfi_die_pins_random(n_ways):
    run(CORE.with_params(n_ways=n_ways), __file__, testcase=["test_random_traffic"],
        extra_env={"ONFI_PINS_OPS": "300"})
