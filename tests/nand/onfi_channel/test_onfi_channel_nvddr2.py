# SPDX-License-Identifier: BSD-2-Clause
"""onfi_channel built `with_nvddr2`, on onfi_phy_sim, against golden dies: the bring-up a
host does (RESET and SET FEATURES 01h in SDR mode 0 through the PHY, then the channel's
`nvddr2` input switches to the NV-DDR2 engine) and then the channel's ops in NV-DDR2: READ ID,
GET FEATURES, erase / program / read of full pages, the split-phase read, READ STATUS, with
read backpressure; every die's checker (NV-DDR2 rules after the switch) stays clean.
Scaled-down geometry (2 KB + 64 B pages), the part's real array times."""

import random
from collections import deque
from dataclasses import replace

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, Event, RisingEdge
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from rtl.nand.onfi_channel import ChannelOp, Completion, op_layout
from rtl.nand.onfi_nvddr2_engine import nvddr2_timing_layout
from rtl.nand.onfi_phy_if import PHY_IN_LATENCY, PHY_OUT_LATENCY
from rtl.nand.onfi_sdr_engine import timing_layout
from sim.nand.python.nand_die import SR_FAIL, NandDie
from sim.nand.python.onfi_die_pins import OnfiBus, OnfiPinTarget
from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry
from spec.onfi_timing import NVDDR2_MODES, engine_registers, nvddr2_engine_registers
from tests.nand.onfi_channel.onfi_cmd_monitor import CommandMonitor, slc_blocks

GEO = NandGeometry(page_bytes=2048, spare_bytes=64, pages_per_block=16, blocks_per_plane=8,
                   planes=2, luns=2, bits_per_cell=2)
PART = replace(PARTS["imft-20nm-mlc-64gbit"], geometry=GEO,
               timing=NandArrayTiming())  # one tR, tPROG for every page type
PARAMS = {"n_ways": 2, "row_cycles": 2, "col_cycles": 2, "max_len": GEO.register_bytes}
OP = ChannelOp
READS = {OP.READ_ID, OP.READ_PARAM, OP.READ_PAGE, OP.GET_FEATURES, OP.READ_STATUS,
         OP.READ_DATA}


class TB:
    def __init__(self, dut, mode, clk_mhz, salt=0, pause=0.0):
        self.dut = dut
        p = core_params()
        self.n_ways, self.width = p["n_ways"], p.get("timer_width", 8)
        self.layout = op_layout(p["max_len"])
        self.seed = cocotb.RANDOM_SEED * 1000 + salt
        self.rng = random.Random(self.seed)
        self.log = dut._log
        self.mode, self.pause = mode, pause
        period_ps = round(1e6 / clk_mhz)
        self.log.info("seed %d NV-DDR2 mode %d at %.2f MHz, pause %.2f", cocotb.RANDOM_SEED,
                      mode, clk_mhz, pause)
        # the SDR engine sees its pins through the PHY: its sample point moves by the PHY's
        # latencies (onfi_phy_if.connect_sdr_engine)
        sdr = engine_registers(0, clk_mhz, self.width, sample_margin_ns=1 + (
            PHY_OUT_LATENCY + PHY_IN_LATENCY) * period_ps / 1000)
        dut.timing.value = struct_bits(timing_layout(self.width), **sdr)
        dut.nvddr2_timing.value = struct_bits(nvddr2_timing_layout(self.width),
                                              **nvddr2_engine_registers(mode, clk_mhz,
                                                                        self.width))
        dut.nvddr2.value = 0
        dut.write_protect.value = 0
        Clock(dut.clk, period_ps, unit="ps", impl="gpi").start()
        self.bus = OnfiBus(dut, seed=self.seed, log=self.log)
        self.targets = [OnfiPinTarget(self.bus, NandDie(PART, seed=self.seed + i), ce=i)
                        for i in range(self.n_ways)]
        self.dies = [t.die for t in self.targets]
        self.next_tag = 0
        self.expected = deque()
        self.packet = bytearray()
        self.packets = deque()
        self.results = {}
        self.ev = Event()

    async def start(self):
        dut = self.dut
        dut.rst.value = 1
        dut.s_op__valid.value = 0
        dut.s_wdata__valid.value = 0
        await ClockCycles(dut.clk, 3)
        dut.rst.value = 0
        await RisingEdge(dut.clk)
        self.ops = StreamSource(dut, "s_op", self.rng)
        self.wdata = StreamSource(dut, "s_wdata", self.rng)
        StreamSink(dut, "m_rdata", self.rng, self._rdata, self.pause)
        StreamSink(dut, "m_cpl", self.rng, self._cpl)
        for way in range(self.n_ways):
            assert not (await self.run(OP.RESET, way))[0]["error"]
        for way in range(self.n_ways):
            cpl, _ = await self.run(OP.SET_FEATURES, way, column=0x01,
                                    wdata=bytes([0x20 | self.mode, 0, 0, 0]))
            assert not cpl["error"]
        for t in self.targets:
            assert t.iface == "nvddr2" and t.mode == self.mode, (t.iface, t.mode)
        await ClockCycles(dut.clk, 2)
        dut.nvddr2.value = 1                    # the channel is idle: switch engines

    def _rdata(self, value):
        self.packet.append(value & 0xFF)
        if value >> 8:
            self.packets.append(bytes(self.packet))
            self.packet = bytearray()

    def _cpl(self, value):
        cpl = struct_fields(Completion, value)
        tag, op = self.expected.popleft()
        assert cpl["tag"] == tag, (cpl, tag)
        data = self.packets.popleft() if op in READS and not cpl["error"] and \
            (self.packets or self.packet) else b""
        self.results[tag] = (cpl, data)
        self.ev.set()

    async def run(self, op, way, row=0, column=0, length=0, wdata=b"", multi=0, slc=0):
        tag = self.next_tag
        self.next_tag = (tag + 1) % 256
        self.expected.append((tag, op))
        self.ops.put(struct_bits(self.layout, tag=tag, op=op, way=way, row=row, column=column,
                                 length=length, multi=multi, slc=slc))
        for b in wdata:
            self.wdata.put(b)
        while tag not in self.results:
            self.ev.clear()
            await self.ev.wait()
        return self.results.pop(tag)


def ok(cpl):
    return not cpl["error"] and not cpl["fail"] and not cpl["status"] & SR_FAIL


async def exercise(tb):
    n = GEO.register_bytes
    for way in range(tb.n_ways):
        cpl, got = await tb.run(OP.GET_FEATURES, way, column=0x01)
        assert got == bytes([0x20 | tb.mode, 0, 0, 0]), got
        _, got = await tb.run(OP.READ_ID, way, column=0x20, length=4)
        assert got == b"ONFI", got
        row = GEO.pack_row(way % GEO.luns, 2 + way, 0)
        assert ok((await tb.run(OP.ERASE_BLOCK, way, row=row))[0])
        page = tb.rng.randbytes(n)
        assert ok((await tb.run(OP.PROGRAM_PAGE, way, row=row, length=n, wdata=page))[0])
        assert tb.dies[way].page_data(way % GEO.luns, 2 + way, 0) == page
        _, got = await tb.run(OP.READ_PAGE, way, row=row, length=n)
        assert got == page, "whole-op read back differs"
        await tb.run(OP.READ_ARRAY, way, row=row)
        _, got = await tb.run(OP.READ_DATA, way, row=row, column=300, length=700)
        assert got == page[300:1000], "split-phase read differs"
        _, got = await tb.run(OP.READ_STATUS, way)
        assert got[0] & 0x40, f"status {got!r} not ready"
    tb.bus.assert_clean()


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_nvddr2_ops(dut):
    """Mode 4 at 100 MHz, no backpressure."""
    tb = TB(dut, mode=4, clk_mhz=100, salt=1)
    await tb.start()
    await exercise(tb)


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_nvddr2_full_rate_backpressure(dut):
    """Mode 7 with one byte per clock (the engine's full rate), read ready randomly low."""
    mode = 7
    tb = TB(dut, mode=mode, clk_mhz=2000.0 / NVDDR2_MODES[mode].tDSC, salt=2, pause=0.4)
    await tb.start()
    await exercise(tb)


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_nvddr2_slc_prefix(dut):
    """Pseudo-SLC through the NV-DDR2 engine (mode 4): DAh as a command cycle right before
    60h / 80h / 00h of an slc=1 op (whole ops, and a two-plane split erase, program and
    read: before each plane's sequence), none for slc=0; the NV-DDR2 checkers stay clean."""
    tb = TB(dut, mode=4, clk_mhz=100, salt=3)
    await tb.start()
    mon = CommandMonitor(tb.bus)
    n, way = GEO.register_bytes, tb.n_ways - 1
    for slc, block in ((1, 2), (0, 4)):
        since = mon.mark(way)
        row = GEO.pack_row(0, block, 0)
        page = tb.rng.randbytes(n)
        assert ok((await tb.run(OP.ERASE_BLOCK, way, row=row, slc=slc))[0])
        assert ok((await tb.run(OP.PROGRAM_PAGE, way, row=row, length=n, wdata=page,
                                slc=slc))[0])
        assert (await tb.run(OP.READ_PAGE, way, row=row, length=n, slc=slc))[1] == page
        assert mon.array_cmds(way, since) == [(0x60, slc), (0x80, slc), (0x00, slc)], \
            (slc, mon.commands(way, since))
    blocks, since = (6, 7), mon.mark(way)
    pages = [tb.rng.randbytes(n) for _ in blocks]
    for i, b in enumerate(blocks):
        await tb.run(OP.ERASE_START, way, row=GEO.pack_row(0, b, 0), multi=i == 0, slc=1)
    assert ok((await tb.run(OP.STATUS_FINISH, way, slc=1))[0])
    for i, b in enumerate(blocks):
        await tb.run(OP.PROGRAM_LOAD, way, row=GEO.pack_row(0, b, 0), length=n,
                     wdata=pages[i], multi=i == 0, slc=1)
    assert ok((await tb.run(OP.STATUS_FINISH, way, slc=1))[0])
    for i, b in enumerate(blocks):
        await tb.run(OP.READ_ARRAY, way, row=GEO.pack_row(0, b, 0), multi=i == 0, slc=1)
    for i, b in enumerate(blocks):
        _, got = await tb.run(OP.READ_DATA, way, row=GEO.pack_row(0, b, 0), length=n, slc=1)
        assert got == pages[i], f"plane {i}: read back differs"
    assert mon.array_cmds(way, since) == [(0x60, 1), (0x60, 1), (0x80, 1), (0x80, 1),
                                          (0x00, 1), (0x00, 1)], mon.commands(way, since)
    assert mon.n_prefix(way) == 3 + 6
    assert slc_blocks(tb.targets[way].die) == {2, 6, 7}
    tb.bus.assert_clean()


def core(**params):
    return AmaranthCore("tests.nand.onfi_channel.onfi_channel_phy_top:OnfiChannelPhyTop",
                        toplevel="onfi_channel_phy_top", params={**PARAMS, **params})


@pytest.mark.smoke
def test_onfi_channel_nvddr2():
    run(core(), __file__)


@pytest.mark.full
@pytest.mark.parametrize("n_ways", [1, 4])
def test_onfi_channel_nvddr2_sweep(n_ways):
    run(core(n_ways=n_ways), __file__)
