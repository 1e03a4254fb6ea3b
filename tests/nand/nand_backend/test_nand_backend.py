# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nand_backend (die schedulers + ONFI channel controllers) against the golden die
model: one NandDie behind an OnfiPinTarget (with its timing checker) on every CE# of every
channel, the test acting as buffer memory on each channel's data streams.

Geometry scaled down (2 KB + 64 B pages, 16 pages per block, 2 planes x 16 blocks, 1 LUN: 2 row
cycles) with the part's real array times (tR 100 us, tPROG 1.3 ms, tBERS 3 ms); 100 MHz,
SDR timing mode 5 after an ONFI bring-up (RESET in mode 0, SET FEATURES, parameter page read
and parsed into the geometry register). What is checked: data read back equals data
programmed (and the die's backdoor), completions per die in op order and after their data,
dies interleaved on the bus (elapsed time against the serial sum), multi-plane ops, reads
started before programs, refused ops, and zero NAND-rule and interface-timing violations.
Built with n_luns = 2 (test_nand_backend_luns) every target has two LUNs (a third row cycle's
bit): the LUNs of one target overlap their array times (measured from the dies' busy
intervals) and one LUN finishes reads while the other is still programming (78h polls).
"""

import os
import random
from collections import defaultdict, deque
from dataclasses import replace

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, FallingEdge, RisingEdge
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from rtl.nand.nand_backend import NandBackend
from rtl.nand.nand_common import BUSY_NOW_BITS, BUSY_TICK_BITS
from rtl.nand.nand_die_scheduler import (
    FlashCompletion,
    FlashOp,
    NandDieScheduler,
    flash_op_layout,
    geometry_layout,
    rdata_layout,
    wreq_layout,
)
from rtl.nand.onfi_nvddr2_engine import nvddr2_timing_layout
from rtl.nand.onfi_phy_if import PHY_IN_LATENCY, PHY_OUT_LATENCY
from rtl.nand.onfi_sdr_engine import timing_layout
from sim.nand.python.nand_die import SR_FAIL, NandDie
from sim.nand.python.onfi_die_pins import PIN_NAMES, OnfiBus, OnfiPinTarget
from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry
from spec.onfi_param_page import parse_parameter_page
from spec.onfi_timing import engine_registers, nvddr2_engine_registers
from tests.nand.onfi_channel.onfi_cmd_monitor import CommandMonitor, slc_blocks

CLK_MHZ = 100
PERIOD_NS = 1000 // CLK_MHZ
GEO = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=16,
                   planes=2, luns=1, bits_per_cell=2)
PARAMS = {"n_channels": 2, "n_ways": 3, "max_len": 2112, "row_cycles": 2, "queue_depth": 4,
          "max_planes": 2}
OP = FlashOp
PAGE = GEO.register_bytes


def now_ns():
    return get_sim_time("ns")


def log2(n):
    return n.bit_length() - 1


class TB:
    """Clock, reset, registers, one golden die per (channel, way), buffer memory on every
    channel's data streams, and a scoreboard."""

    def __init__(self, dut, salt=0, idle=0.0, pause=0.0, mode=5):
        self.dut = dut
        self.p = core_params()
        self.n_luns = self.p.get("n_luns", 1)
        self.geo = replace(GEO, luns=self.n_luns)
        # The NV-DDR2 top (nand_backend_phy_top: a PHY on every channel) runs the same tests
        # in NV-DDR2 timing mode NAND_BACKEND_NVDDR2_MODE after the SDR mode 0 bring-up.
        self.nvddr2 = hasattr(dut, "nvddr2")
        if self.nvddr2:
            mode = int(os.environ.get("NAND_BACKEND_NVDDR2_MODE", "4"))
            dut.nvddr2.value = 0
            dut.dqs_cal_start.value = 0
            dut.dqs_cal_way.value = 0
            dut.dqs_cal_fallback.value = 7
            dut.nvddr2_timing.value = struct_bits(nvddr2_timing_layout(8),
                                                  **nvddr2_engine_registers(mode, CLK_MHZ, 8))
        self.n_ch, self.n_ways = self.p["n_channels"], self.p["n_ways"]
        self.max_len = self.p["max_len"]
        self.ch_bits = max(1, (self.n_ch - 1).bit_length())
        self.layout = flash_op_layout(self.max_len, self.ch_bits)
        self.wreq = wreq_layout(self.max_len)
        self.seed = cocotb.RANDOM_SEED * 1000 + salt
        self.rng = random.Random(self.seed)
        self.log = dut._log
        self.idle, self.pause = idle, pause
        self.log.info("seed %d salt %d params %s idle %.2f pause %.2f", cocotb.RANDOM_SEED,
                      salt, self.p, idle, pause)
        part = replace(PARTS["imft-20nm-mlc-64gbit"], geometry=self.geo,
                       timing=NandArrayTiming())  # one tR, tPROG for every page type
        dut.write_protect.value = 0
        self.mode = mode
        self.set_timing(0)                      # what a die speaks after power-on and RESET
        dut.geometry.value = 0                  # until the parameter page says (reset())
        Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start()
        cocotb.start_soon(self._uptime())
        self.buses, self.targets = [], {}
        for c in range(self.n_ch):
            bus = OnfiBus(dut, pins={n: f"ch__{c}__{n}" for n in PIN_NAMES},
                          seed=self.seed + c, log=self.log)
            self.buses.append(bus)
            for w in range(self.n_ways):
                die = NandDie(part, seed=self.seed + 16 * c + w)
                self.targets[c, w] = OnfiPinTarget(bus, die, ce=w, name=f"ch{c}w{w}")
        self.dies = {k: t.die for k, t in self.targets.items()}
        # (channel, way) -> [(lun, start ns, end ns)]: every array busy time a LUN starts
        self.busy_log = defaultdict(list)
        for key, die in self.dies.items():
            die.advance = self._logged_advance(die, self.busy_log[key])
        self.errors = []
        self.next_tag = 0
        self.wdata = {}                     # (tag, plane) -> bytes to give on a request
        self.rdata = defaultdict(bytearray)  # (tag, plane) -> bytes read
        self.rdone = set()                  # (tag, plane) whose `last` came
        self.order = defaultdict(deque)     # (channel, way, lun) -> tags in submission order
        self.where = {}                     # tag -> (channel, way, lun, op, planes)
        self.results = {}                   # tag -> completion fields
        self.done_ev = Event()

    async def _uptime(self):
        """busy_now: the busy ticks of an uptime counted from the start (the SoC's)."""
        ticks = 0
        while True:
            await ClockCycles(self.dut.clk, 1 << BUSY_TICK_BITS)
            ticks += 1
            self.dut.busy_now.value = ticks & ((1 << BUSY_NOW_BITS) - 1)

    @staticmethod
    def _logged_advance(die, log):
        """die.advance, first logging what the die's previous call (at die.now) did to each
        LUN's array busy time: every command calls advance first, so nothing is missed."""
        advance, seen = die.advance, [0] * len(die.luns)

        def logged(now):
            for lun in die.luns:
                if lun.array_busy_until > seen[lun.index]:
                    log.append((lun.index, max(die.now, seen[lun.index]),
                                lun.array_busy_until))
                    seen[lun.index] = lun.array_busy_until
            advance(now)
        return logged

    def set_timing(self, mode):
        # Behind a PHY the SDR engine samples DQ its latencies later (connect_sdr_engine).
        margin = 1 + (PHY_OUT_LATENCY + PHY_IN_LATENCY) * PERIOD_NS if self.nvddr2 else 1
        self.dut.timing.value = struct_bits(timing_layout(8), **engine_registers(
            0 if self.nvddr2 else mode, CLK_MHZ, 8, sample_margin_ns=margin))

    async def reset(self):
        dut = self.dut
        dut.rst.value = 1
        dut.s_op__valid.value = 0
        for c in range(self.n_ch):
            getattr(dut, f"ch__{c}__s_wdata__valid").value = 0
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        self.ops = StreamSource(dut, "s_op", self.rng, self.idle)
        self.cpl = StreamSink(dut, "m_cpl", self.rng, self._cpl_beat, self.pause)
        self.wsrc = []
        for c in range(self.n_ch):
            src = StreamSource(dut, f"ch__{c}__s_wdata", self.rng, self.idle)
            self.wsrc.append(src)
            StreamSink(dut, f"ch__{c}__m_wreq", self.rng,
                       lambda v, c=c: self._wreq_beat(c, v), self.pause)
            StreamSink(dut, f"ch__{c}__m_rdata", self.rng, self._rdata_beat, self.pause)
        # ONFI bring-up: RESET in mode 0, SET FEATURES 01h (timing mode) on every die, then
        # the controller's timing registers follow.
        for (c, w) in self.targets:
            cpl = await self.run(OP.RESET, c, w)
            assert not cpl["error"], cpl
        for (c, w) in self.targets:
            # Timing mode: bits 3:0; data interface bits 5:4 (10b: NV-DDR2).
            value = 0x20 | self.mode if self.nvddr2 else self.mode
            cpl = await self.run(OP.SET_FEATURES, c, w, column=0x01,
                                 data=[bytes([value, 0, 0, 0])])
            assert not cpl["error"], cpl
        await ClockCycles(dut.clk, 2)
        if self.nvddr2:
            for t in self.targets.values():
                assert (t.iface, t.mode) == ("nvddr2", self.mode), (t.name, t.iface, t.mode)
            dut.nvddr2.value = 1            # every channel idle: switch engines
        else:
            self.set_timing(self.mode)
        # Geometry discovery: the parameter page (3 copies) of one die sets the row packing.
        tag = self.submit(OP.READ_PARAM, 0, 0, length=768)
        assert not (await self.result(tag))["error"]
        geo = parse_parameter_page(self.read_back(tag))
        g = self.geo
        want = (g.page_bytes, g.spare_bytes, g.pages_per_block, g.blocks_per_lun,
                g.planes, g.luns, g.row_cycles, g.column_cycles)
        got = tuple(geo[k] for k in ("page_bytes", "spare_bytes", "pages_per_block",
                                     "blocks_per_lun", "planes", "luns", "row_cycles",
                                     "column_cycles"))
        assert got == want, f"parameter page geometry {got} != {want}"
        assert geo["row_cycles"] == self.p["row_cycles"], "build has other row cycles"
        await RisingEdge(dut.clk)               # out of the read-only phase the result came in
        dut.geometry.value = struct_bits(geometry_layout, page_bits=log2(geo["pages_per_block"]),
                                         block_bits=log2(geo["blocks_per_lun"]),
                                         plane_bits=log2(geo["planes"]))

    async def timing_mode_again(self, c, w):
        """After a RESET of (c, w) at run time (it is back in SDR timing mode 0): the bus
        in mode 0 while SET FEATURES gives it the mode again (the other dies idle: the timing
        registers and the engine choice are shared)."""
        dut = self.dut
        await RisingEdge(dut.clk)
        if self.nvddr2:
            dut.nvddr2.value = 0
        self.set_timing(0)
        value = 0x20 | self.mode if self.nvddr2 else self.mode
        cpl = await self.run(OP.SET_FEATURES, c, w, column=0x01, data=[bytes([value, 0, 0, 0])])
        assert not cpl["error"], cpl
        await ClockCycles(dut.clk, 2)
        if self.nvddr2:
            dut.nvddr2.value = 1
        else:
            self.set_timing(self.mode)

    # -- buffer memory and scoreboard --

    def _error(self, message):
        self.log.error("%s", message)
        self.errors.append(message)

    def _wreq_beat(self, c, value):
        req = struct_fields(self.wreq, value)
        data = self.wdata.pop((req["tag"], req["plane"]), None)
        if data is None or len(data) != req["length"]:
            self._error(f"ch{c}: write request {req} for no (or other-sized) buffer")
            data = bytes(req["length"])
        for b in data:
            self.wsrc[c].put(b)

    def _rdata_beat(self, value):
        beat = struct_fields(rdata_layout, value)
        key = (beat["tag"], beat["plane"])
        if key in self.rdone:
            self._error(f"read byte for {key} after its last byte")
        self.rdata[key].append(beat["data"])
        if beat["last"]:
            self.rdone.add(key)

    def _cpl_beat(self, value):
        cpl = struct_fields(FlashCompletion, value)
        tag = cpl["tag"]
        if tag not in self.where:
            self._error(f"completion {cpl} for no op")
            return
        c, w, lun, op, planes = self.where.pop(tag)
        if not cpl["error"]:
            queue = self.order[c, w, lun]
            if not queue or queue[0] != tag:
                self._error(f"ch{c} way {w} LUN {lun}: completion of tag {tag} out of op order "
                            f"(expected {queue[0] if queue else None})")
            else:
                queue.popleft()
            if op == OP.READ and not cpl["timeout"]:   # a read given up moved no data
                for p in planes:
                    if (tag, p) not in self.rdone:
                        self._error(f"tag {tag}: completion before plane {p}'s last byte")
        self.results[tag] = cpl
        self.done_ev.set()

    # -- ops --

    def submit(self, op, c, w, block=0, page=0, planes=(0,), column=0, length=0, data=None,
               op_value=None, lun=0, slc=0):
        """Queue one op; `data` is a list of per-plane page images for a program."""
        tag = self.next_tag
        self.next_tag = (self.next_tag + 1) % 256
        assert tag not in self.where, "more than 256 ops outstanding"
        mask = sum(1 << p for p in planes)
        bits = struct_bits(self.layout, tag=tag, op=op, channel=c, way=w, lun=lun,
                           plane_mask=mask, block=block, page=page, column=column,
                           length=length, buffer=tag, slc=slc)
        if op_value is not None:
            f = self.layout["op"]
            bits = (bits & ~(((1 << f.width) - 1) << f.offset)) | (op_value << f.offset)
        if op == OP.SET_FEATURES:
            self.wdata[tag, 0] = data[0]
        for i, p in enumerate(planes if op == OP.PROGRAM else ()):
            self.wdata[tag, p] = data[i]
        for p in (planes if op == OP.READ else (0,)):
            self.rdata.pop((tag, p), None)
            self.rdone.discard((tag, p))
        self.where[tag] = (c, w, lun, op, tuple(planes))
        self.order[c, w, lun].append(tag)
        self.ops.put(bits)
        return tag

    async def result(self, tag):
        while tag not in self.results:
            self.done_ev.clear()
            await self.done_ev.wait()
        return self.results.pop(tag)

    async def run(self, op, c, w, **kw):
        return await self.result(self.submit(op, c, w, **kw))

    def read_back(self, tag, plane=0):
        return bytes(self.rdata.pop((tag, plane), b""))

    def page(self, n=PAGE):
        return self.rng.randbytes(n)

    def finish(self):
        for bus in self.buses:
            bus.assert_clean()
        assert not self.errors, self.errors[:5]


def ok(cpl):
    return not cpl["error"] and not cpl["fail"] and not cpl["status"] & SR_FAIL


@cocotb.test(timeout_time=400, timeout_unit="ms")
async def test_interleave_readback(dut):
    """Every die of every channel erases, programs and reads back pages, all queued at once:
    the scheduler overlaps the dies' array times, so a channel takes far less than the
    serial sum of its dies' ops; every page reads back as written."""
    tb = TB(dut, salt=1)
    await tb.reset()
    n_pages = 2
    pages, tags = {}, []
    dies = [(c, w, lun) for (c, w) in tb.targets for lun in range(tb.n_luns)]
    t0 = now_ns()
    for (c, w, lun) in dies:
        tags.append(tb.submit(OP.ERASE, c, w, block=2, lun=lun))
    for page in range(n_pages):
        for (c, w, lun) in dies:
            pages[c, w, lun, page] = tb.page()
            tags.append(tb.submit(OP.PROGRAM, c, w, block=2, page=page, length=PAGE,
                                  data=[pages[c, w, lun, page]], lun=lun))
    for tag in tags:
        assert ok(await tb.result(tag))
    elapsed = now_ns() - t0
    t = tb.dies[0, 0].timing
    load_ns = PAGE * 20                         # mode 5 at 100 MHz: 2 cycles per byte
    serial = tb.n_ways * tb.n_luns * (t.t_bers_ns + sum(t.t_prog(GEO.page_type(p)) + load_ns
                                                        for p in range(n_pages)))
    tb.log.info("erase + %d programs on %d ways x %d LUNs x %d channels: %.3f ms; one "
                "channel's ops serially: %.3f ms", n_pages, tb.n_ways, tb.n_luns, tb.n_ch,
                elapsed / 1e6, serial / 1e6)
    if tb.n_ways * tb.n_luns > 1:
        assert elapsed < 0.6 * serial, "dies were not interleaved"
    reads = {(c, w, lun, page): tb.submit(OP.READ, c, w, block=2, page=page, length=PAGE,
                                          lun=lun)
             for page in range(n_pages) for (c, w, lun) in dies}
    for key, tag in reads.items():
        assert ok(await tb.result(tag))
        got = tb.read_back(tag)
        assert got == pages[key], f"{key}: read back differs"
        c, w, lun, page = key
        assert tb.dies[c, w].page_data(lun, 2, page) == pages[key]
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_multi_plane(dut):
    """Two-plane erase, program and read of one die: one op each, both planes' data."""
    tb = TB(dut, salt=2)
    await tb.reset()
    c, w = tb.n_ch - 1, tb.n_ways - 1
    die = tb.dies[c, w]
    block = 4                                   # plane 0; its plane-1 partner is block 5
    assert ok(await tb.run(OP.ERASE, c, w, block=block, planes=(0, 1)))
    assert die.stats["erases"] == 2
    data = [tb.page(), tb.page()]
    assert ok(await tb.run(OP.PROGRAM, c, w, block=block, page=0, planes=(0, 1),
                           length=PAGE, data=data))
    assert die.page_data(0, 4, 0) == data[0] and die.page_data(0, 5, 0) == data[1]
    tag = tb.submit(OP.READ, c, w, block=block, page=0, planes=(0, 1), length=PAGE)
    assert ok(await tb.result(tag))
    assert tb.read_back(tag, 0) == data[0] and tb.read_back(tag, 1) == data[1]
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_reads_first(dut):
    """While the bus is busy, a program for one die and then a read for another are queued:
    the read's array phase starts first (CE# order on the pins)."""
    tb = TB(dut, salt=3)
    await tb.reset()
    assert tb.n_ways >= 3
    c = 0
    for w in range(3):
        assert ok(await tb.run(OP.ERASE, c, w, block=1))
    assert ok(await tb.run(OP.PROGRAM, c, 2, block=1, page=0, length=PAGE, data=[tb.page()]))
    order = []

    async def watch():
        ce = getattr(tb.dut, f"ch__{c}__ce_n")
        prev = int(ce.value)
        while True:
            await FallingEdge(tb.dut.clk)
            v = int(ce.value)
            for w in range(tb.n_ways):
                if prev >> w & 1 and not v >> w & 1:
                    order.append(w)
            prev = v
    task = cocotb.start_soon(watch())
    first = tb.submit(OP.PROGRAM, c, 0, block=1, page=0, length=PAGE, data=[tb.page()])
    await ClockCycles(tb.dut.clk, 50)           # way 0's data load holds the bus
    prog = tb.submit(OP.PROGRAM, c, 1, block=1, page=0, length=PAGE, data=[tb.page()])
    read = tb.submit(OP.READ, c, 2, block=1, page=0, length=PAGE)
    for tag in (first, prog, read):
        assert ok(await tb.result(tag))
    task.cancel()
    tb.log.info("CE# order: %s", order)
    assert order[:3] == [0, 2, 1], f"read not started before the queued program: {order}"
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_slc_split(dut):
    """Pseudo-SLC (issue 20): a flash op's `slc` bit survives the scheduler's split into
    per-plane channel ops. A two-plane SLC erase, program and read show DAh (a command
    monitor on the pins) right before each plane's 60h / 80h / 00h and none before the
    finish phases (06h-E0h, 70h); the same ops with slc=0 show none. Single-plane ops with
    the bit set on one die and clear on another, queued together, each keep their own."""
    tb = TB(dut, salt=9)
    await tb.reset()
    mons = [CommandMonitor(bus) for bus in tb.buses]
    c, w = tb.n_ch - 1, tb.n_ways - 1
    mon = mons[c]
    split = [0x60, 0xD1, 0x60, 0xD0, 0x70, 0x80, 0x11, 0x80, 0x10, 0x70,
             0x00, 0x32, 0x00, 0x30, 0x06, 0xE0, 0x06, 0xE0]
    for slc, block in ((1, 4), (0, 6)):         # plane 0's block; plane 1's is block + 1
        since = mon.mark(w)
        assert ok(await tb.run(OP.ERASE, c, w, block=block, planes=(0, 1), slc=slc))
        data = [tb.page(), tb.page()]
        assert ok(await tb.run(OP.PROGRAM, c, w, block=block, page=0, planes=(0, 1),
                               length=PAGE, data=data, slc=slc))
        tag = tb.submit(OP.READ, c, w, block=block, page=0, planes=(0, 1), length=PAGE,
                        slc=slc)
        assert ok(await tb.result(tag))
        assert [tb.read_back(tag, 0), tb.read_back(tag, 1)] == data
        want = [x for cmd in split                  # DAh before each 60h, 80h, 00h
                for x in ([0xDA, cmd] if slc and cmd in (0x60, 0x80, 0x00) else [cmd])]
        got = [x for x in mon.commands(w, since) if x != 0x78]     # LUN polls, if any
        assert got == want, (slc, [f"{x:02X}" for x in got])
    # One SLC die and one normal die on the same channel, their ops queued together.
    marks = {way: mon.mark(way) for way in (0, 1)}
    tags = [tb.submit(OP.ERASE, c, way, block=8, slc=way == 0) for way in (0, 1)]
    images = [tb.page() for _ in (0, 1)]
    tags += [tb.submit(OP.PROGRAM, c, way, block=8, page=0, length=PAGE, data=[images[way]],
                       slc=way == 0) for way in (0, 1)]
    reads = [tb.submit(OP.READ, c, way, block=8, page=0, length=PAGE, slc=way == 0)
             for way in (0, 1)]
    for tag in tags + reads:
        assert ok(await tb.result(tag))
    for way in (0, 1):
        assert tb.read_back(reads[way]) == images[way], f"way {way}: read back differs"
        slc = way == 0
        assert mon.array_cmds(way, marks[way]) == [(0x60, slc), (0x80, slc), (0x00, slc)], \
            (way, mon.commands(way, marks[way]))
    assert mon.n_prefix(w) == 6 and mon.n_prefix(0) == 3 and mon.n_prefix(1) == 0
    for ch, m in enumerate(mons):
        for way in range(tb.n_ways):
            if ch != c:
                assert m.n_prefix(way) == 0, (ch, way)
            want = ({4, 5} if (ch, way) == (c, w) else set()) | \
                ({8} if (ch, way) == (c, 0) else set())
            assert slc_blocks(tb.targets[ch, way].die) == want, (ch, way)
    tb.finish()


def overlap(a, b):
    """Nanoseconds two (start, end) intervals share."""
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_lun_interleave(dut):
    """n_luns > 1 only: the two LUNs of one target work at once. Erases and programs queued
    for both overlap their array times (the dies' own busy intervals); while LUN 0 programs,
    LUN 1 completes several page reads, each with its tR inside LUN 0's tPROG: LUN 1 is found
    ready by 78h while the target's R/B# is still low. Data reads back as programmed."""
    tb = TB(dut, salt=6)
    await tb.reset()
    if tb.n_luns < 2:
        tb.log.info("one LUN per target: nothing to interleave")
        return
    c, w = 0, tb.n_ways - 1
    log, t = tb.busy_log[c, w], tb.dies[c, w].timing

    async def both(op, **kw):
        start = len(log)
        tags = [tb.submit(op, c, w, lun=lun, **{k: v[lun] if isinstance(v, tuple) else v
                                                for k, v in kw.items()})
                for lun in (0, 1)]
        for tag in tags:
            assert ok(await tb.result(tag))
        spans = [[(s, e) for lun_, s, e in log[start:] if lun_ == lun] for lun in (0, 1)]
        return tags, max(overlap(a, b) for a in spans[0] for b in spans[1])

    _, shared = await both(OP.ERASE, block=2)
    tb.log.info("erase on LUN 0 and LUN 1: %.0f us of tBERS %.0f us overlap", shared / 1e3,
                t.t_bers_ns / 1e3)
    assert shared > 0.8 * t.t_bers_ns, "the LUNs' erases did not overlap"
    data = (tb.page(), tb.page())
    _, shared = await both(OP.PROGRAM, block=2, page=0, length=PAGE,
                           data=([data[0]], [data[1]]))
    t_prog = t.t_prog(GEO.page_type(0))
    tb.log.info("program on LUN 0 and LUN 1: %.0f us of tPROG %.0f us overlap", shared / 1e3,
                t_prog / 1e3)
    assert shared > 0.8 * t_prog, "the LUNs' programs did not overlap"
    # LUN 0 programs page 1; LUN 1 reads page 0 n_reads times meanwhile.
    start = len(log)
    prog = tb.submit(OP.PROGRAM, c, w, block=2, page=1, length=PAGE, data=[tb.page()], lun=0)
    n_reads = 4
    reads = [tb.submit(OP.READ, c, w, block=2, page=0, length=PAGE, lun=1)
             for _ in range(n_reads)]
    for tag in reads:
        assert ok(await tb.result(tag))
        assert tb.read_back(tag) == data[1], "LUN 1 read back differs"
    assert ok(await tb.result(prog))
    prog_span = next((s, e) for lun, s, e in log[start:] if lun == 0)
    inside = [(s, e) for lun, s, e in log[start:] if lun == 1 and e <= prog_span[1]]
    tb.log.info("LUN 0 tPROG %.0f..%.0f us; LUN 1 reads finished inside it: %d of %d",
                prog_span[0] / 1e3, prog_span[1] / 1e3, len(inside), n_reads)
    assert len(inside) == n_reads, "LUN 1's reads waited for LUN 0's program (R/B#)"
    tag = tb.submit(OP.READ, c, w, block=2, page=0, length=PAGE, lun=0)
    assert ok(await tb.result(tag))
    assert tb.read_back(tag) == data[0], "LUN 0 read back differs"
    tb.finish()


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_dqs_calibration(dut):
    """NV-DDR2 only: the DQS calibration in every channel's scheduler, started on all channels
    while programs are queued: they finish first, the sweep reads way 1's signature at every
    tap (all pass: the simulation PHY has no delay line), loads the centre, and the data
    programmed before reads back after."""
    tb = TB(dut, salt=7)
    await tb.reset()
    n_taps = 1 << len(dut.ch__0__dqs_delay)
    blocks = {}
    for c in range(tb.n_ch):
        assert ok(await tb.run(OP.ERASE, c, 1, block=2))
        blocks[c] = tb.page()
    tags = [tb.submit(OP.PROGRAM, c, 1, block=2, page=0, length=PAGE, data=[blocks[c]])
            for c in range(tb.n_ch)]
    await RisingEdge(dut.clk)               # out of the read-only phase the last result came in
    dut.dqs_cal_way.value = 1
    dut.dqs_cal_start.value = 1
    await RisingEdge(dut.clk)
    dut.dqs_cal_start.value = 0
    for t in tags:
        assert ok(await tb.result(t))
    for _ in range(200 * n_taps * 20):
        await RisingEdge(dut.clk)
        if not any(int(getattr(dut, f"ch__{c}__dqs_cal_busy").value) for c in range(tb.n_ch)):
            break
    for c in range(tb.n_ch):
        got = [int(getattr(dut, f"ch__{c}__dqs_cal_{n}").value)
               for n in ("busy", "ok", "window_lo", "window_hi", "tap")]
        assert got == [0, 1, 0, n_taps - 1, (n_taps - 1) // 2], (c, got)
        assert int(getattr(dut, f"ch__{c}__dqs_delay").value) == (n_taps - 1) // 2
    for c in range(tb.n_ch):
        tag = tb.submit(OP.READ, c, 1, block=2, page=0, length=PAGE)
        assert ok(await tb.result(tag))
        assert tb.read_back(tag) == blocks[c], f"channel {c}: readback after calibration"
    tb.finish()


@cocotb.test(timeout_time=100, timeout_unit="ms")
async def test_refused_ops(dut):
    """Ops naming no channel, no way, no plane or too many bytes, and unknown op codes,
    complete with `error` without touching a pin; the next op works."""
    tb = TB(dut, salt=4)
    await tb.reset()
    latched = {k: len(t.latched) for k, t in tb.targets.items()}
    bad = [dict(op=OP.READ, c=0, w=0, planes=()),          # empty plane mask
           dict(op=OP.READ, c=0, w=0, planes=(2,)),        # beyond max_planes
           dict(op=OP.READ, c=0, w=0, length=tb.max_len + 1),
           dict(op=OP.RESET, c=0, w=0, op_value=9),
           dict(op=OP.RESET, c=0, w=0, op_value=15)]
    if tb.n_ways < 8:
        bad.append(dict(op=OP.READ, c=0, w=tb.n_ways))
    if tb.n_luns < 4:
        bad.append(dict(op=OP.READ, c=0, w=0, lun=tb.n_luns))
    if tb.n_ch < 1 << tb.ch_bits:
        bad.append(dict(op=OP.READ, c=tb.n_ch, w=0))
    for kw in bad:
        op, c, w = kw.pop("op"), kw.pop("c"), kw.pop("w")
        tag = tb.submit(op, c, w, **kw)
        tb.order[c, w, kw.get("lun", 0)].pop()  # refused ops are outside per-die order
        cpl = await tb.result(tag)
        assert cpl["error"] and not cpl["fail"], (kw, cpl)
    assert {k: len(t.latched) for k, t in tb.targets.items()} == latched, \
        "a refused op reached the pins"
    assert ok(await tb.run(OP.ERASE, 0, 0, block=3))
    tb.finish()


@cocotb.test(timeout_time=5000, timeout_unit="ms")
async def test_random_traffic(dut):
    """Seeded random erase / program / read (single and two-plane) on every die with random
    gaps and backpressure on every stream; reads checked against the pages written."""
    seed_rng = random.Random(cocotb.RANDOM_SEED)
    tb = TB(dut, salt=5, idle=seed_rng.choice([0.0, 0.3]), pause=seed_rng.choice([0.0, 0.3]))
    await tb.reset()
    rng = tb.rng
    n_ops = int(os.environ.get("NAND_BACKEND_OPS", "40"))
    written = {}                                # (c, w, block, page) -> image
    next_page = defaultdict(int)                # (c, w, block) -> next page to program
    pending = deque()
    for _ in range(n_ops):
        c, w = rng.choice(list(tb.targets))
        lun = rng.randrange(tb.n_luns)
        w_ = w
        w = (w, lun)                            # the die: keys below are per LUN
        base = rng.randrange(GEO.blocks_per_lun // 2) * 2
        planes = (0, 1) if rng.random() < 0.3 else (rng.randrange(2),)
        blocks = [base + p for p in planes]
        kind = rng.choice(["erase", "program", "program", "read", "read"])
        pages = [next_page[c, w, b] for b in blocks]
        if kind == "program" and (len(set(pages)) > 1 or pages[0] >= GEO.pages_per_block):
            kind = "erase"
        if kind == "erase":
            for b in blocks:
                next_page[c, w, b] = 0
                for p in range(GEO.pages_per_block):
                    written.pop((c, w, b, p), None)
            pending.append((tb.submit(OP.ERASE, c, w_, block=base, planes=planes, lun=lun),
                            None))
        elif kind == "program":
            data = [tb.page() for _ in planes]
            for b, d in zip(blocks, data, strict=True):
                written[c, w, b, pages[0]] = d
                next_page[c, w, b] += 1
            pending.append((tb.submit(OP.PROGRAM, c, w_, block=base, page=pages[0],
                                      planes=planes, length=PAGE, data=data, lun=lun), None))
        else:
            page = rng.randrange(GEO.pages_per_block)
            expect = [written.get((c, w, b, page), b"\xff" * PAGE) for b in blocks]
            tag = tb.submit(OP.READ, c, w_, block=base, page=page, planes=planes, length=PAGE,
                            lun=lun)
            pending.append((tag, list(zip(planes, expect, strict=True))))
        while len(pending) > 24:
            await check(tb, *pending.popleft())
    while pending:
        await check(tb, *pending.popleft())
    tb.log.info("%d ops, %.3f ms simulated", n_ops, now_ns() / 1e6)
    tb.finish()


@cocotb.test(timeout_time=300, timeout_unit="ms")
async def test_stuck_busy(dut):
    """A hung die (R/B# stuck low: NandDie.inject_stuck_busy) with busy_timeout at 2 ms: its
    read is given up after the timeout (`timeout`, `fail`) while the other dies keep working,
    the op queued behind it completes at once (fenced, no bus), a RESET it answers lifts the
    fence and its data reads back; hung for good, a multi-plane read is given up in the
    channel (tDBSY, or the LUN's 78h polls), so is the RESET, and the die stays fenced. No
    NAND rule broken: nothing but RESET went to the busy die."""
    tb = TB(dut, salt=9)
    await tb.reset()
    c, w, other = 0, 0, (0, 1)
    data = {}
    for key in ((c, w), other):
        assert ok(await tb.run(OP.ERASE, *key, block=4, planes=(0, 1)))
        data[key] = [tb.page(), tb.page()]
        assert ok(await tb.run(OP.PROGRAM, *key, block=4, page=0, planes=(0, 1),
                               length=PAGE, data=data[key]))
    tick_ns = (1 << BUSY_TICK_BITS) * PERIOD_NS
    ticks = -(-2_000_000 // tick_ns)                # 2 ms: every tR and tPROG here is shorter
    await RisingEdge(dut.clk)                       # out of the read-only phase
    dut.busy_timeout.value = ticks

    def timed_out(cpl):
        return cpl["timeout"] and cpl["fail"] and not cpl["error"]

    tb.log.info("way %d hangs until a RESET", w)
    tb.dies[c, w].inject_stuck_busy(0, until_reset=True)
    t0 = now_ns()
    hung = tb.submit(OP.READ, c, w, block=4, page=0, length=PAGE)
    behind = tb.submit(OP.READ, c, w, block=4, page=0, length=PAGE)
    meanwhile = tb.submit(OP.READ, *other, block=4, page=0, length=PAGE)
    await check(tb, meanwhile, [(0, data[other][0])])
    assert now_ns() - t0 < 1_000_000, "the other die waited for the hung one"
    cpl = await tb.result(hung)
    given_up = now_ns() - t0
    assert timed_out(cpl), cpl
    assert (ticks - 1) * tick_ns <= given_up <= (ticks + 1) * tick_ns + 50_000, given_up
    cpl = await tb.result(behind)
    assert timed_out(cpl), cpl
    assert now_ns() - t0 - given_up < 10_000, "a fenced op waited"
    cpl = await tb.run(OP.RESET, c, w)
    assert ok(cpl) and not cpl["timeout"], cpl
    await tb.timing_mode_again(c, w)
    await check(tb, tb.submit(OP.READ, c, w, block=4, page=0, planes=(0, 1), length=PAGE),
                enumerate(data[c, w]))

    tb.log.info("way %d hangs for good", w)
    tb.dies[c, w].inject_stuck_busy(0, until_reset=False)
    t0 = now_ns()
    cpl = await tb.run(OP.READ, c, w, block=4, page=0, planes=(0, 1), length=PAGE)
    assert timed_out(cpl), cpl
    assert now_ns() - t0 >= (ticks - 1) * tick_ns
    assert timed_out(await tb.run(OP.RESET, c, w))
    t0 = now_ns()
    assert timed_out(await tb.run(OP.PROGRAM, c, w, block=4, page=1, length=PAGE,
                                  data=[tb.page()]))
    assert now_ns() - t0 < 10_000, "a fenced op went to the bus"
    await check(tb, tb.submit(OP.READ, *other, block=4, page=0, planes=(0, 1), length=PAGE),
                enumerate(data[other]))
    tb.finish()


async def check(tb, tag, expect):
    cpl = await tb.result(tag)
    assert ok(cpl), cpl
    for plane, image in expect or ():
        got = tb.read_back(tag, plane)
        if got != image:
            # pages never programmed read as erased, but the model may add bit errors: none
            # are configured here, so any difference is a mismatch
            raise AssertionError(f"tag {tag} plane {plane}: read back differs "
                                 f"({sum(a != b for a, b in zip(got, image, strict=False))} bytes)")


def core(**params):
    return AmaranthCore("rtl.nand.nand_backend:NandBackend", toplevel="nand_backend",
                        params={**PARAMS, **params})


@pytest.mark.smoke
def test_nand_backend_params():
    """Illegal parameters stop elaboration with a message naming the parameter."""
    for name, value in (("n_channels", 0), ("n_channels", 33), ("n_ways", 0), ("n_ways", 9),
                        ("queue_depth", 0), ("queue_depth", 17), ("max_planes", 5),
                        ("max_len", 0), ("n_channels", True), ("n_luns", 0),
                        ("n_luns", 5)):
        with pytest.raises(ValueError, match=name):
            NandBackend(**{name: value})
    with pytest.raises(ValueError, match="queue_depth"):
        NandDieScheduler(queue_depth=0)


SDR_TESTS = ["test_interleave_readback", "test_multi_plane", "test_reads_first",
             "test_refused_ops", "test_random_traffic", "test_slc_split", "test_stuck_busy"]
LUN_TESTS = ["test_lun_interleave", "test_interleave_readback", "test_refused_ops",
             "test_random_traffic", "test_stuck_busy"]


@pytest.mark.smoke
def test_nand_backend():
    """One LUN per target (the smoke tier: LUNs and NV-DDR2 have their back end builds in
    the full tier, and run in the smoke tier's drives, test_drive_luns and test_drive_nvddr2)."""
    run(core(), __file__, testcase=SDR_TESTS, extra_env={"NAND_BACKEND_OPS": "30"})


@pytest.mark.full
def test_nand_backend_luns_all():
    """Two LUNs per target: every LUN test."""
    run(core(n_luns=2), __file__, testcase=LUN_TESTS, extra_env={"NAND_BACKEND_OPS": "30"})


def phy_core(**params):
    return AmaranthCore("tests.nand.nand_backend.nand_backend_phy_top:NandBackendPhyTop",
                        toplevel="nand_backend_phy_top", params={**PARAMS, **params})


@pytest.mark.full
def test_nand_backend_nvddr2_all():
    """The back end built with_nvddr2: every test in NV-DDR2 mode 4."""
    run(phy_core(), __file__, extra_env={"NAND_BACKEND_OPS": "30"})


@pytest.mark.full
@pytest.mark.parametrize("n_channels,n_ways,queue_depth", [(1, 1, 1), (2, 8, 2), (5, 4, 8)])
def test_nand_backend_sweep(n_channels, n_ways, queue_depth):
    run(core(n_channels=n_channels, n_ways=n_ways, queue_depth=queue_depth), __file__,
        testcase=["test_interleave_readback", "test_refused_ops", "test_random_traffic"],
        extra_env={"NAND_BACKEND_OPS": "150"})
