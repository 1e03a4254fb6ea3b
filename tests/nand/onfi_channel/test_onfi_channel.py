# SPDX-License-Identifier: BSD-2-Clause
"""Tests of onfi_channel: tagged flash ops through the channel controller, with the golden die
model (NandDie behind OnfiPinTarget, timing checker included) on the ONFI pins of every CE#.

The geometry is scaled down (2 KB + 64 B pages, 16 pages per block, 2 planes x 8 blocks,
2 LUNs: 2 row cycles); a build with row_cycles=3 uses a taller target (2 x 1024 blocks,
4 LUNs). The array times are the part's real ones (tR 100 us, tPROG 1.3 ms, tBERS 3 ms).
Clock 100 MHz; engine timing registers from onfi_timing.engine_registers(). The stream
drivers sleep on events (ready/valid edges), so busy times cost no Python time; `idle` and
`pause` set the probability of a gap on s_wdata / s_op and of ready low on m_rdata / m_cpl.
"""

import os
import random
from collections import deque
from dataclasses import replace

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, RisingEdge
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from rtl.nand.onfi_channel import ChannelOp, Completion, OnfiChannel, op_layout
from rtl.nand.onfi_sdr_engine import timing_layout
from sim.nand.python.nand_die import SR_ARDY, SR_FAIL, SR_RDY, SR_WP_N, NandDie
from sim.nand.python.onfi_die_pins import OnfiBus, OnfiPinTarget
from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry, is_factory_bad
from spec.onfi_param_page import crc16_onfi, parse_parameter_page
from spec.onfi_timing import engine_registers
from tests.nand.onfi_channel.onfi_cmd_monitor import CommandMonitor, slc_blocks

CLK_MHZ = 100
PERIOD_NS = 1000 // CLK_MHZ
GEOS = {
    2: NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=8,
                    planes=2, luns=2, bits_per_cell=2),
    3: NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=1024,
                    planes=2, luns=4, bits_per_cell=2),
}
SMOKE_PARAMS = {"n_ways": 2, "row_cycles": 2, "col_cycles": 2, "max_len": 2112}
OP = ChannelOp
# Ops whose bytes come out on m_rdata (one packet each, `last` on the final byte).
READS = {OP.READ_ID, OP.READ_PARAM, OP.READ_PAGE, OP.GET_FEATURES, OP.READ_STATUS,
         OP.READ_DATA, OP.READ_CACHE, OP.READ_STATUS_ENHANCED, OP.CHANGE_READ_COLUMN}
SR_IDLE = SR_RDY | SR_ARDY | SR_WP_N


def now_ns():
    return get_sim_time("ns")


class TB:
    """Clock, reset, timing registers, stream drivers, one pin target (die) per CE#, and a
    scoreboard: completions in op order, each after its read data."""

    def __init__(self, dut, mode=0, salt=0, idle=0.0, pause=0.0, per_way=None, die_seed=None,
                 **die_args):
        self.dut = dut
        self.p = core_params()
        self.n_ways = self.p.get("n_ways", 1)
        self.width = self.p.get("timer_width", 8)
        self.max_len = self.p.get("max_len", 18432)
        self.geo = GEOS[self.p.get("row_cycles", 3)]
        self.part = replace(PARTS["imft-20nm-mlc-64gbit"], geometry=self.geo,
                            timing=NandArrayTiming())  # one tR, tPROG for every page type
        self.layout = op_layout(self.max_len)
        self.seed = cocotb.RANDOM_SEED * 1000 + salt
        self.rng = random.Random(self.seed)
        self.log = dut._log
        self.log.info("seed %d salt %d params %s idle %.2f pause %.2f", cocotb.RANDOM_SEED,
                      salt, self.p, idle, pause)
        self.idle, self.pause = idle, pause
        dut.write_protect.value = 0
        self.set_timing(mode)
        Clock(dut.clk, PERIOD_NS, unit="ns", impl="gpi").start()
        self.bus = OnfiBus(dut, seed=self.seed, log=self.log)
        self.targets = []
        for i in range(self.n_ways):
            args = {**die_args, **((per_way or {}).get(i, {}))}
            die = NandDie(self.part, seed=(self.seed if die_seed is None else die_seed) + i,
                          **args)
            self.targets.append(OnfiPinTarget(self.bus, die, ce=i))
        self.dies = [t.die for t in self.targets]
        self.errors = []
        self.next_tag = 0
        self.expected = deque()     # (tag, op, reads data) in submission order
        self.packets = deque()      # finished m_rdata packets
        self.partial = bytearray()
        self.results = {}           # tag -> (completion fields, data)
        self.done_ev = Event()

    def set_timing(self, mode, **overrides):
        self.regs = engine_registers(mode, CLK_MHZ, self.width, **overrides)
        self.dut.timing.value = struct_bits(timing_layout(self.width), **self.regs)

    async def reset(self, reset_dies=True):
        dut = self.dut
        dut.rst.value = 1
        dut.s_op__valid.value = 0
        dut.s_wdata__valid.value = 0
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        self.ops = StreamSource(dut, "s_op", self.rng, self.idle)
        self.wdata = StreamSource(dut, "s_wdata", self.rng, self.idle)
        self.rdata = StreamSink(dut, "m_rdata", self.rng, self._rdata_beat, self.pause)
        self.cpl = StreamSink(dut, "m_cpl", self.rng, self._cpl_beat, self.pause)
        if reset_dies:
            tags = [self.submit(OP.RESET, way) for way in range(self.n_ways)]
            for tag in tags:
                cpl, _ = await self.result(tag)
                assert cpl == {"tag": tag, "status": 0, "fail": 0, "error": 0,
                               "timeout": 0}, cpl

    # -- scoreboard --

    def _error(self, message):
        self.log.error("%s", message)
        self.errors.append(message)

    def _rdata_beat(self, value):
        self.partial.append(value & 0xFF)
        if value >> 8:
            self.packets.append(bytes(self.partial))
            self.partial = bytearray()

    def _cpl_beat(self, value):
        cpl = struct_fields(Completion, value)
        if not self.expected:
            self._error(f"completion {cpl} with no op outstanding")
            return
        tag, op, reads = self.expected.popleft()
        if cpl["tag"] != tag:
            self._error(f"completion tag {cpl['tag']} out of order, expected {tag} ({op})")
        data = b""
        if reads and not cpl["error"]:
            if self.partial:
                self._error(f"tag {tag}: completion before the last of its data "
                            f"({len(self.partial)} bytes without `last`)")
            if self.packets:
                data = self.packets.popleft()
            else:
                self._error(f"tag {tag} ({op}): completion without read data")
        elif self.packets or self.partial:
            self._error(f"tag {tag} ({op}): read data for an op that reads nothing")
        self.results[tag] = (cpl, data)
        self.done_ev.set()

    # -- ops --

    def submit(self, op, way, row=0, column=0, length=0, wdata=b"", op_value=None, multi=0,
               slc=0):
        """Queue one op (and its s_wdata bytes); returns its tag."""
        tag = self.next_tag
        self.next_tag = (self.next_tag + 1) % 256
        self.results.pop(tag, None)
        bits = struct_bits(self.layout, tag=tag, op=op, way=way, row=row, column=column,
                           length=length, multi=multi, slc=slc)
        if op_value is not None:        # an op code ChannelOp does not name
            f = self.layout["op"]
            bits = (bits & ~(((1 << f.width) - 1) << f.offset)) | (op_value << f.offset)
        self.ops.put(bits)
        for b in wdata:
            self.wdata.put(b)
        # a read op sends one packet, unless it reads nothing (length 0)
        reads = op in READS and (length > 0 or op in (OP.GET_FEATURES, OP.READ_STATUS,
                                                      OP.READ_STATUS_ENHANCED))
        self.expected.append((tag, op, reads))
        return tag

    async def result(self, tag):
        while tag not in self.results:
            self.done_ev.clear()
            await self.done_ev.wait()
        return self.results.pop(tag)

    async def run(self, op, way, **kw):
        return await self.result(self.submit(op, way, **kw))

    async def read_page(self, way, row, column, n):
        cpl, got = await self.run(OP.READ_PAGE, way, row=row, column=column, length=n)
        assert cpl["status"] == 0 and not cpl["fail"] and not cpl["error"], cpl
        return got

    async def program(self, way, row, payload, column=0):
        cpl, _ = await self.run(OP.PROGRAM_PAGE, way, row=row, column=column,
                                length=len(payload), wdata=payload)
        return cpl

    async def erase(self, way, row):
        cpl, _ = await self.run(OP.ERASE_BLOCK, way, row=row)
        return cpl

    async def retime(self, mode, **overrides):
        """New engine timing registers, written while the channel is idle (no op out)."""
        assert not self.expected
        await ClockCycles(self.dut.clk, 4)
        self.set_timing(mode, **overrides)

    def row(self, lun, block, page):
        return self.geo.pack_row(lun, block, page)

    def page(self, n=None):
        return self.rng.randbytes(self.geo.register_bytes if n is None else n)

    def finish(self):
        assert not self.errors, "scoreboard:\n  " + "\n  ".join(self.errors)
        assert not self.expected, f"{len(self.expected)} ops never completed"
        self.bus.assert_clean()


def ok_status(cpl):
    return (cpl["status"] & SR_IDLE) == SR_IDLE and not cpl["fail"] and not cpl["error"]


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_reset_read_id(dut):
    """RESET then READ ID 00h and 20h on every CE#: the model's bytes, exact ONFI bytes."""
    tb = TB(dut, salt=1)
    await tb.reset()
    for way, die in enumerate(tb.dies):
        n = len(die.part.id_bytes)
        cpl, ident = await tb.run(OP.READ_ID, way, column=0x00, length=n)
        assert ident == die.part.id_bytes, f"way {way}: READ ID 00h {ident.hex()}"
        assert cpl["status"] == 0 and not cpl["fail"]
        cpl, onfi = await tb.run(OP.READ_ID, way, column=0x20, length=4)
        assert onfi == b"ONFI", f"way {way}: READ ID 20h {onfi!r}"
        assert die.stats["resets"] == 1
        assert tb.targets[way].latched[:5] == [("cmd", 0xFF), ("cmd", 0x90), ("addr", 0x00),
                                               ("cmd", 0x90), ("addr", 0x20)]
    # a zero-length READ ID moves no data and still completes
    cpl, got = await tb.run(OP.READ_ID, 0, column=0x00, length=0)
    assert got == b"" and not cpl["error"], cpl
    # READ STATUS: one byte out, the die ready
    cpl, sr = await tb.run(OP.READ_STATUS, 0)
    assert len(sr) == 1 and (sr[0] & SR_IDLE) == SR_IDLE, sr.hex()
    tb.finish()


@cocotb.test(timeout_time=40, timeout_unit="ms")
async def test_parameter_page(dut):
    """READ PARAMETER PAGE through the channel: CRC holds, the geometry (and so the address
    cycle counts of this build) comes back, the die was busy tR."""
    tb = TB(dut, salt=2)
    await tb.reset()
    die, g = tb.dies[-1], tb.geo
    t0 = now_ns()
    cpl, buf = await tb.run(OP.READ_PARAM, tb.n_ways - 1, length=256 * die.param_page_copies)
    assert now_ns() - t0 >= die.timing.t_r_ns
    assert not cpl["fail"] and not cpl["error"]
    pages = [buf[i:i + 256] for i in range(0, len(buf), 256)]
    assert len(pages) == die.param_page_copies
    assert all(crc16_onfi(p[:254]) == int.from_bytes(p[254:], "little") for p in pages)
    geo = parse_parameter_page(buf)
    want = {"page_bytes": g.page_bytes, "spare_bytes": g.spare_bytes,
            "pages_per_block": g.pages_per_block, "blocks_per_lun": g.blocks_per_lun,
            "luns": g.luns, "column_cycles": g.column_cycles, "row_cycles": g.row_cycles,
            "bits_per_cell": g.bits_per_cell, "planes": g.planes, "t_ccs_ns": 500,
            "copy": 0}
    assert geo == want, f"parameter page geometry {geo} != {want}"
    assert (geo["row_cycles"], geo["column_cycles"]) == (tb.p["row_cycles"],
                                                         tb.p["col_cycles"])
    assert tb.targets[-1].latched[-2:] == [("cmd", 0xEC), ("addr", 0x00)]
    tb.finish()


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_program_read(dut):
    """ERASE, PROGRAM random pages (full and partial at a column), READ back whole, at a
    column, and from the spare area; completions carry the 70h status."""
    tb = TB(dut, salt=3)
    await tb.reset()
    g, die = tb.geo, tb.dies[0]
    lun, block = g.luns - 1, 3
    t0 = now_ns()
    cpl = await tb.erase(0, tb.row(lun, block, 0))
    assert ok_status(cpl), cpl
    assert now_ns() - t0 >= die.timing.t_bers_ns
    full = tb.page()
    t0 = now_ns()
    cpl = await tb.program(0, tb.row(lun, block, 0), full)
    assert ok_status(cpl), cpl
    assert now_ns() - t0 >= die.timing.t_prog_ns
    assert die.page_data(lun, block, 0) == full
    t0 = now_ns()
    got = await tb.read_page(0, tb.row(lun, block, 0), 0, g.register_bytes)
    assert now_ns() - t0 >= die.timing.t_r_ns
    assert got == full, f"{sum(a != b for a, b in zip(got, full, strict=True))} bytes differ"
    column = tb.rng.randrange(1, g.page_bytes)
    n = tb.rng.randrange(1, g.register_bytes - column + 1)
    assert await tb.read_page(0, tb.row(lun, block, 0), column, n) == full[column:column + n]
    spare_col = g.page_bytes + tb.rng.randrange(g.spare_bytes)
    spare = await tb.read_page(0, tb.row(lun, block, 0), spare_col, g.register_bytes - spare_col)
    assert spare == full[spare_col:], "spare-area read differs"
    # a partial page at a column: the rest programs as FFh
    column = tb.rng.randrange(g.register_bytes - 100)
    part = tb.page(tb.rng.randrange(1, 100))
    cpl = await tb.program(0, tb.row(lun, block, 1), part, column=column)
    assert ok_status(cpl), cpl
    image = bytearray(b"\xff" * g.register_bytes)
    image[column:column + len(part)] = part
    assert die.page_data(lun, block, 1) == bytes(image)
    assert await tb.read_page(0, tb.row(lun, block, 1), 0, g.register_bytes) == bytes(image)
    # the exact sequence of the program: 80h, 2 column, row cycles, data, 10h, 70h
    latched = tb.targets[0].latched
    start = max(i for i, x in enumerate(latched) if x == ("cmd", 0x80))
    cycles = g.address_bytes(column, tb.row(lun, block, 1))
    assert latched[start:start + 1 + len(cycles)] == [("cmd", 0x80)] + [("addr", b)
                                                                         for b in cycles]
    assert [b for k, b in latched[start + 1 + len(cycles):][:len(part)]] == list(part)
    assert latched[start + 1 + len(cycles) + len(part):][:2] == [("cmd", 0x10), ("cmd", 0x70)]
    tb.finish()


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_features(dut):
    """SET FEATURES timing mode 5 (params from s_wdata), engine registers for mode 5,
    GET FEATURES reads it back, a page moves faster and reads back right."""
    tb = TB(dut, salt=4)
    await tb.reset()
    way = tb.n_ways - 1
    target, die = tb.targets[way], tb.dies[way]
    await tb.erase(way, tb.row(0, 1, 0))
    payload = tb.page()
    assert ok_status(await tb.program(way, tb.row(0, 1, 0), payload))
    cpl, _ = await tb.run(OP.SET_FEATURES, way, column=0x01, wdata=bytes([5, 0, 0, 0]))
    assert cpl == {"tag": cpl["tag"], "status": 0, "fail": 0, "error": 0,
                   "timeout": 0}
    assert die.timing_mode == 5
    await tb.retime(5)
    _, got = await tb.run(OP.GET_FEATURES, way, column=0x01, length=0)
    assert got == bytes([5, 0, 0, 0]), got.hex()
    assert target.checker.t.tRC == 20.0, "checker not in mode 5"
    t0 = now_ns()
    got = await tb.read_page(way, tb.row(0, 1, 0), 0, tb.geo.register_bytes)
    per_byte = (now_ns() - t0 - die.timing.t_r_ns) / tb.geo.register_bytes
    tb.log.info("mode 5: %.1f ns per byte read", per_byte)
    assert got == payload, "mode 5 read differs"
    assert per_byte < 40, "the channel did not speed up"
    tb.finish()


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_bad_block_fail(dut):
    """A factory bad block: its marker reads 00h from the spare area; its erase and program
    complete with FAIL; a good block's do not."""
    rate = 0.3
    geo = GEOS[core_params().get("row_cycles", 3)]
    # a die seed with a factory bad block in LUN 0 (some seeds have none at this rate)
    seed = cocotb.RANDOM_SEED * 1000 + 5
    while not any(is_factory_bad(seed, rate, 0, b) for b in range(geo.blocks_per_lun)):
        seed += 1000
    tb = TB(dut, salt=5, die_seed=seed, factory_bad_block_rate=rate)
    await tb.reset()
    g, die = tb.geo, tb.dies[0]
    bad = die.factory_bad_blocks(0)
    assert bad, f"die seed {seed} has no factory bad block although the spec rule says so"
    block = bad[0]
    marker = await tb.read_page(0, tb.row(0, block, 0), g.page_bytes, 1)
    assert marker == b"\x00", f"bad block {block} marker {marker.hex()}"
    cpl = await tb.erase(0, tb.row(0, block, 0))
    assert cpl["fail"] and cpl["status"] & SR_FAIL and cpl["status"] & SR_RDY, cpl
    cpl = await tb.program(0, tb.row(0, block, 0), tb.page(64))
    assert cpl["fail"] and cpl["status"] & SR_FAIL, cpl
    assert die.fail_events[-1].reason == "factory bad block"
    good = next(b for b in range(g.blocks_per_lun) if b not in bad)
    assert ok_status(await tb.erase(0, tb.row(0, good, 0)))
    assert ok_status(await tb.program(0, tb.row(0, good, 0), tb.page(64)))
    tb.finish()


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_program_out_of_order(dut):
    """Page 2 programmed after page 0: the model names 'page-order'. The completion shows
    FAIL exactly when the model sets it: a strict die refuses the command and leaves FAIL
    clear; a lenient one (strict=False, last way) refuses it and reports FAIL."""
    tb = TB(dut, salt=6, per_way={way: {"strict": False} for way in range(1, 8)})
    await tb.reset()
    for way in range(tb.n_ways):
        die = tb.dies[way]
        await tb.erase(way, tb.row(0, 2, 0))
        assert ok_status(await tb.program(way, tb.row(0, 2, 0), tb.page(32)))
        assert not tb.targets[way].rule_violations
        cpl = await tb.program(way, tb.row(0, 2, 2), tb.page(32))
        v = tb.targets[way].expect_rule("page-order")
        assert "page 2" in v.message and "page 1" in v.message
        model_fail = bool(die.status(now_ns(), 0) & SR_FAIL)
        tb.log.info("way %d strict=%s: %s; completion fail %d, model FAIL %d", way,
                    die.strict, v, cpl["fail"], model_fail)
        assert cpl["fail"] == model_fail, cpl
        assert cpl["fail"] == (not die.strict)
        assert die.block_info(0, 2)["programmed_pages"] == 1, "the refused page was written"
    tb.finish()


@cocotb.test(timeout_time=60, timeout_unit="ms")
async def test_refused_ops(dut):
    """Ops the channel refuses (unknown op, way out of range, length > max_len) complete with
    `error` and touch no pin; a refused program's data is consumed, so the next program
    gets its own bytes."""
    tb = TB(dut, salt=7)
    await tb.reset()
    latched = [len(t.latched) for t in tb.targets]
    for value in (18, 31):
        cpl, _ = await tb.run(OP.RESET, 0, op_value=value)
        assert cpl["error"] and not cpl["fail"], cpl
    if tb.n_ways < 8:
        cpl, _ = await tb.run(OP.READ_PAGE, tb.n_ways, length=16)
        assert cpl["error"], cpl
    long = tb.max_len + 1
    if long < 1 << op_layout(tb.max_len)["length"].width:
        cpl, _ = await tb.run(OP.PROGRAM_PAGE, 0, row=tb.row(0, 5, 0), length=long,
                              wdata=tb.page(long))
        assert cpl["error"], cpl
    assert [len(t.latched) for t in tb.targets] == latched, "a refused op reached the pins"
    await tb.erase(0, tb.row(0, 5, 0))
    payload = tb.page(200)
    assert ok_status(await tb.program(0, tb.row(0, 5, 0), payload))
    assert tb.dies[0].page_data(0, 5, 0)[:200] == payload
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_split_phase_ops(dut):
    """The split-phase ops a die scheduler interleaves with: the start phases release the bus
    at their confirm (CE# high, die still busy), the finish phases wait for R/B#; a two-plane
    erase, program and read (32h/11h/D1h with tDBSY) moves both planes' data."""
    tb = TB(dut, salt=11)
    await tb.reset()
    g = tb.geo
    blocks = (6, 7)                 # planes 0 and 1
    n = g.register_bytes
    pages = [tb.page(n) for _ in blocks]
    die = tb.dies[0]
    # two-plane erase: 60h-D1h (tDBSY), 60h-D0h, then status
    for i, b in enumerate(blocks):
        cpl, _ = await tb.run(OP.ERASE_START, 0, row=tb.row(0, b, 0), multi=i == 0)
        assert cpl == {"tag": cpl["tag"], "status": 0, "fail": 0, "error": 0,
                       "timeout": 0}, cpl
    assert not die.rb_n(now_ns()), "die not busy after ERASE_START"
    cpl, _ = await tb.run(OP.STATUS_FINISH, 0)
    assert ok_status(cpl), cpl
    assert die.stats["erases"] == 2
    # two-plane program: 80h-11h (tDBSY), 80h-10h; the start returns while tPROG runs
    for i, b in enumerate(blocks):
        cpl, _ = await tb.run(OP.PROGRAM_LOAD, 0, row=tb.row(0, b, 0), length=n,
                              wdata=pages[i], multi=i == 0)
        assert not cpl["error"], cpl
    started = now_ns()
    cpl, _ = await tb.run(OP.STATUS_FINISH, 0)
    assert ok_status(cpl), cpl
    assert now_ns() - started > 0.9 * die.timing.t_prog(g.page_type(0)), "finish did not wait"
    # two-plane read: 00h-32h (tDBSY), 00h-30h; then 06h-E0h per plane selects its register
    for i, b in enumerate(blocks):
        cpl, _ = await tb.run(OP.READ_ARRAY, 0, row=tb.row(0, b, 0), multi=i == 0)
        assert not cpl["error"], cpl
    for i, b in enumerate(blocks):
        cpl, got = await tb.run(OP.READ_DATA, 0, row=tb.row(0, b, 0), length=n)
        assert not cpl["error"], cpl
        assert got == pages[i], f"plane {i}: read back differs"
    # single-plane read from a column, through the split ops
    await tb.run(OP.READ_ARRAY, 0, row=tb.row(0, blocks[1], 0))
    _, got = await tb.run(OP.READ_DATA, 0, row=tb.row(0, blocks[1], 0), column=100, length=50)
    assert got == pages[1][100:150]
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_cache_and_column_ops(dut):
    """Cache program (80h-15h twice, then 80h-10h), cache read (00h-30h, 31h, 31h, 3Fh) of the
    same pages, CHANGE READ COLUMN (05h-E0h) and READ STATUS ENHANCED (78h) per LUN."""
    tb = TB(dut, salt=12)
    await tb.reset()
    g = tb.geo
    n = g.register_bytes
    block = 3
    die = tb.dies[0]
    assert ok_status(await tb.erase(0, tb.row(0, block, 0)))
    pages = [tb.page(n) for _ in range(3)]
    for i in range(2):
        cpl, _ = await tb.run(OP.PROGRAM_CACHE, 0, row=tb.row(0, block, i), length=n,
                              wdata=pages[i])
        assert not cpl["error"] and not cpl["fail"] and cpl["status"] & SR_RDY, cpl
    assert ok_status(await tb.program(0, tb.row(0, block, 2), pages[2]))
    for i in range(3):
        assert die.page_data(0, block, i) == pages[i], f"page {i}"
    # cache read: page 0 to the cache register while the array reads page 1, and so on
    await tb.run(OP.READ_ARRAY, 0, row=tb.row(0, block, 0))
    for i in range(3):
        cpl, got = await tb.run(OP.READ_CACHE, 0, length=n, multi=i == 2)
        assert not cpl["error"], cpl
        assert got == pages[i], f"cache read of page {i} differs"
    # change read column inside the page register (the last page read, page 2)
    cpl, got = await tb.run(OP.CHANGE_READ_COLUMN, 0, column=500, length=40)
    assert got == pages[2][500:540]
    # 78h: the status of each LUN, as the model has it
    for lun in range(g.luns):
        cpl, got = await tb.run(OP.READ_STATUS_ENHANCED, 0, row=tb.row(lun, 0, 0))
        assert got == bytes([die.status(now_ns(), lun)]), (lun, got)
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_slc_prefix(dut):
    """Pseudo-SLC (issue 20): an op with `slc` set that starts an array operation shows DAh as
    a command cycle right before its 60h / 80h / 00h, in the same CE# assertion (a monitor on
    the pins): the whole ops ERASE_BLOCK, PROGRAM_PAGE, READ_PAGE, the cache program, and
    the split phases of a two-plane erase, program and read, DAh before each plane's
    sequence. The same ops with slc=0, and ops that ignore `slc` (READ_DATA, STATUS_FINISH,
    READ_STATUS, READ ID, 78h) sent with slc=1, show none. The data still moves, and the
    timing checker stays clean: DAh keeps a command cycle's CLE / WE# / CE# timing."""
    tb = TB(dut, salt=13)
    await tb.reset()
    mon = CommandMonitor(tb.bus)
    n = tb.geo.register_bytes
    way = tb.n_ways - 1
    die = tb.dies[way]

    async def run(op, **kw):
        cpl, got = await tb.run(op, way, **kw)
        assert not cpl["error"] and not cpl["fail"], (op, cpl)
        return got

    # Whole ops: an SLC block (2) and a normal one (4), erase, program, read each.
    for slc, block in ((1, 2), (0, 4)):
        since = mon.mark(way)
        page = tb.page()
        await run(OP.ERASE_BLOCK, row=tb.row(0, block, 0), slc=slc)
        await run(OP.PROGRAM_PAGE, row=tb.row(0, block, 0), length=n, wdata=page, slc=slc)
        assert await run(OP.READ_PAGE, row=tb.row(0, block, 0), length=n, slc=slc) == page
        assert die.page_data(0, block, 0) == page
        assert mon.array_cmds(way, since) == [(0x60, slc), (0x80, slc), (0x00, slc)], \
            (slc, mon.commands(way, since))
        assert mon.n_prefix(way, since) == 3 * slc
    # Ops that ignore slc.
    since = mon.mark(way)
    await run(OP.READ_STATUS, slc=1)
    await run(OP.READ_ID, column=0x20, length=4, slc=1)
    await run(OP.READ_STATUS_ENHANCED, row=tb.row(0, 2, 0), slc=1)
    assert mon.commands(way, since) == [0x70, 0x90, 0x78], mon.commands(way, since)
    # Split phases, two planes (blocks 6 and 7): DAh before each plane's sequence; the
    # finish phases (06h-E0h, 70h) sent with slc=1 too, and without a DAh.
    blocks = (6, 7)
    pages = [tb.page() for _ in blocks]
    since = mon.mark(way)
    for i, b in enumerate(blocks):
        await run(OP.ERASE_START, row=tb.row(0, b, 0), multi=i == 0, slc=1)
    assert ok_status((await tb.run(OP.STATUS_FINISH, way, slc=1))[0])
    for i, b in enumerate(blocks):
        await run(OP.PROGRAM_LOAD, row=tb.row(0, b, 0), length=n, wdata=pages[i],
                  multi=i == 0, slc=1)
    assert ok_status((await tb.run(OP.STATUS_FINISH, way, slc=1))[0])
    for i, b in enumerate(blocks):
        await run(OP.READ_ARRAY, row=tb.row(0, b, 0), multi=i == 0, slc=1)
    for i, b in enumerate(blocks):
        assert await run(OP.READ_DATA, row=tb.row(0, b, 0), length=n, slc=1) == pages[i]
    assert mon.commands(way, since) == [0xDA, 0x60, 0xD1, 0xDA, 0x60, 0xD0, 0x70,
                                        0xDA, 0x80, 0x11, 0xDA, 0x80, 0x10, 0x70,
                                        0xDA, 0x00, 0x32, 0xDA, 0x00, 0x30,
                                        0x06, 0xE0, 0x06, 0xE0], \
        [f"{c:02X}" for c in mon.commands(way, since)]
    # Cache program in SLC: 80h-15h, then 80h-10h, each after DAh.
    since = mon.mark(way)
    await run(OP.ERASE_BLOCK, row=tb.row(0, 8, 0), slc=1)
    cache = [tb.page() for _ in range(2)]
    cpl, _ = await tb.run(OP.PROGRAM_CACHE, way, row=tb.row(0, 8, 0), length=n,
                          wdata=cache[0], slc=1)
    assert not cpl["error"] and cpl["status"] & SR_RDY, cpl
    await run(OP.PROGRAM_PAGE, row=tb.row(0, 8, 1), length=n, wdata=cache[1], slc=1)
    for i in range(2):
        assert await run(OP.READ_PAGE, row=tb.row(0, 8, i), length=n, slc=1) == cache[i]
    assert mon.array_cmds(way, since) == [(0x60, 1), (0x80, 1), (0x80, 1), (0x00, 1),
                                          (0x00, 1)], mon.commands(way, since)
    # Every DAh on the pins, and no other way saw one.
    total = mon.n_prefix(way)
    assert total == 3 + 6 + 5, total
    assert all(mon.n_prefix(w) == 0 for w in range(tb.n_ways) if w != way)
    assert slc_blocks(die) == {2, 6, 7, 8}, slc_blocks(die)
    tb.finish()


async def traffic(tb, n_ops, depth):
    """Seeded random ops on every way, up to `depth` outstanding, checked against a dict of
    written pages and the die's backdoor; returns the number of bytes moved."""
    rng, g = tb.rng, tb.geo
    written = {}                    # (way, lun, block, page) -> page image
    next_page = {}                  # (way, lun, block) -> next page to program
    checks = deque()                # (tag, expected data or None)
    moved = 0

    async def drain(limit):
        nonlocal moved
        while len(checks) > limit:
            tag, want, what = checks.popleft()
            cpl, got = await tb.result(tag)
            assert not cpl["error"], f"{what}: {cpl}"
            if want is not None:
                assert got == want, f"{what}: read data differs"
                moved += len(got)
            else:
                assert ok_status(cpl), f"{what}: {cpl}"

    for i in range(n_ops):
        way = rng.randrange(tb.n_ways)
        lun, block = rng.randrange(g.luns), rng.randrange(2)
        key = (way, lun, block)
        op = rng.choice(["erase", "program", "program", "program", "read", "read"])
        if op == "erase" or key not in next_page:
            tag = tb.submit(OP.ERASE_BLOCK, way, row=tb.row(lun, block, 0))
            checks.append((tag, None, f"op {i} erase {key}"))
            next_page[key] = 0
            for p in range(g.pages_per_block):
                written.pop((way, lun, block, p), None)
        elif op == "program" and next_page[key] < g.pages_per_block:
            page = next_page[key]
            column = rng.choice([0, rng.randrange(g.register_bytes)])
            n = rng.choice([g.register_bytes - column,
                            rng.randrange(1, min(300, g.register_bytes - column) + 1)])
            data = rng.randbytes(n)
            tag = tb.submit(OP.PROGRAM_PAGE, way, row=tb.row(lun, block, page), column=column,
                            length=n, wdata=data)
            checks.append((tag, None, f"op {i} program {key} page {page}"))
            image = bytearray(b"\xff" * g.register_bytes)
            image[column:column + n] = data
            written[(way, lun, block, page)] = bytes(image)
            next_page[key] += 1
            moved += n
        else:
            page = rng.randrange(g.pages_per_block)
            want = written.get((way, lun, block, page), b"\xff" * g.register_bytes)
            column = rng.choice([0, rng.randrange(g.register_bytes),
                                 g.page_bytes + rng.randrange(g.spare_bytes)])
            n = rng.randrange(1, g.register_bytes - column + 1)
            tag = tb.submit(OP.READ_PAGE, way, row=tb.row(lun, block, page), column=column,
                            length=n)
            checks.append((tag, want[column:column + n], f"op {i} read {key} page {page} "
                                                         f"column {column} length {n}"))
        await drain(depth)
    await drain(0)
    for (way, lun, block, page), image in written.items():
        assert tb.dies[way].page_data(lun, block, page) == image, (way, lun, block, page)
    return moved


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_backpressure(dut):
    """Gaps on s_op/s_wdata and ready low on m_rdata/m_cpl at random, several ops queued:
    every byte arrives, tags come back in order, no timing or rule violation."""
    tb = TB(dut, salt=8, idle=0.5, pause=0.6)
    await tb.reset()
    moved = await traffic(tb, int(os.environ.get("ONFI_CHANNEL_BP_OPS", "8")), depth=4)
    tb.log.info("backpressure: %d bytes moved, %.3f ms simulated", moved, now_ns() / 1e6)
    tb.finish()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_ways(dut):
    """Every way erased, programmed and read back with ops queued back to back; each die
    holds its own data, and a completion's tag matches its op."""
    tb = TB(dut, salt=9)
    await tb.reset()
    block = 6
    tags = [tb.submit(OP.ERASE_BLOCK, w, row=tb.row(0, block, 0)) for w in range(tb.n_ways)]
    payloads = [tb.page() for _ in range(tb.n_ways)]
    tags += [tb.submit(OP.PROGRAM_PAGE, w, row=tb.row(0, block, 0),
                       length=tb.geo.register_bytes, wdata=payloads[w])
             for w in range(tb.n_ways)]
    reads = [tb.submit(OP.READ_PAGE, w, row=tb.row(0, block, 0), length=tb.geo.register_bytes)
             for w in range(tb.n_ways)]
    for tag in tags:
        cpl, _ = await tb.result(tag)
        assert ok_status(cpl), cpl
    for w, tag in enumerate(reads):
        _, got = await tb.result(tag)
        assert got == payloads[w], f"way {w}: read back differs"
        assert tb.dies[w].page_data(0, block, 0) == payloads[w]
        assert tb.dies[w].stats["programs"] == 1 and tb.dies[w].stats["erases"] == 1
    tb.finish()


@cocotb.test(timeout_time=5000, timeout_unit="ms")
async def test_random_traffic(dut):
    """Seeded random erase/program/read traffic on every way with random gaps and
    backpressure, checked against a dictionary of written pages."""
    seed_rng = random.Random(cocotb.RANDOM_SEED)
    idle, pause = seed_rng.choice([0.0, 0.3]), seed_rng.choice([0.0, 0.5])
    tb = TB(dut, salt=10, idle=idle, pause=pause)
    await tb.reset()
    n_ops = int(os.environ.get("ONFI_CHANNEL_OPS", "10"))
    moved = await traffic(tb, n_ops, depth=seed_rng.choice([1, 3, 8]))
    tb.log.info("%d ops, %d bytes moved, %.3f ms simulated", n_ops, moved, now_ns() / 1e6)
    tb.finish()


def core(**params):
    return AmaranthCore("rtl.nand.onfi_channel:OnfiChannel", toplevel="onfi_channel",
                        params={**SMOKE_PARAMS, **params})


@pytest.mark.smoke
def test_onfi_channel_params():
    """Illegal parameters stop elaboration with a message naming the parameter."""
    for name, value in (("n_ways", 0), ("n_ways", 9), ("row_cycles", 1), ("row_cycles", 5),
                        ("col_cycles", 0), ("col_cycles", 3), ("max_len", 0),
                        ("max_len", 65537), ("timer_width", 5), ("n_ways", True)):
        with pytest.raises(ValueError, match=name):
            OnfiChannel(**{name: value})


@pytest.mark.smoke
def test_onfi_channel():
    run(core(), __file__, extra_env={"ONFI_CHANNEL_OPS": "10", "ONFI_CHANNEL_BP_OPS": "8"})


@pytest.mark.full
@pytest.mark.parametrize("n_ways,row_cycles", [(1, 2), (4, 3), (8, 2)])
def test_onfi_channel_sweep(n_ways, row_cycles):
    run(core(n_ways=n_ways, row_cycles=row_cycles, max_len=4096), __file__,
        testcase=["test_reset_read_id", "test_parameter_page", "test_refused_ops",
                  "test_random_traffic", "test_split_phase_ops",
                  "test_cache_and_column_ops"],
        extra_env={"ONFI_CHANNEL_OPS": "150"})
