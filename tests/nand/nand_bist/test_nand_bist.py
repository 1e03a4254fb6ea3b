# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nand_bist: the pattern it answers write requests with, the check of read data, and
its counters.

Program data is compared byte for byte with `pattern_bytes(buffer, plane, n)` (the core's
Python model) and, for one seed, with xorshift32 values written out here, so a model and core
that drift together still fail. Read data is that pattern (clean, then with corrupted bytes);
the counters and the first bad tag are checked after each phase. Idle cycles on the inputs and
backpressure on m_wdata throughout.
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits
from ssdlab_streams import StreamSink, StreamSource

from rtl.nand.nand_bist import FIXED_BUFFER, NandBist, pattern_bytes
from rtl.nand.nand_die_scheduler import rdata_layout, wreq_layout

CORE = AmaranthCore("rtl.nand.nand_bist:NandBist", toplevel="nand_bist")
DEFAULTS = {"max_len": 18432}
SMOKE = {"max_len": 600}


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        dut._log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.rst.value = 1
        dut.check.value = 1
        dut.fixed.value = 0
        self.wdata = bytearray()
        self.wreq = StreamSource(dut, "s_wreq", self.rng, idle=0.2)
        self.rdata = StreamSource(dut, "s_rdata", self.rng, idle=0.2)
        StreamSink(dut, "m_wdata", self.rng, self.wdata.append, pause=0.3)

    async def reset(self):
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0

    def request(self, tag, buffer, plane, length):
        self.wreq.put(struct_bits(wreq_layout(self.p["max_len"]), tag=tag, buffer=buffer,
                                  plane=plane, length=length))

    def read(self, tag, buffer, plane, data):
        for i, b in enumerate(data):
            self.rdata.put(struct_bits(rdata_layout, data=b, last=int(i == len(data) - 1),
                                       tag=tag, buffer=buffer, plane=plane))

    async def settle(self, want_wdata=None):
        """Wait until every queued beat went in (and `want_wdata` bytes came out)."""
        for _ in range(100_000):
            await FallingEdge(self.dut.clk)
            if not self.wreq.queue and not self.rdata.queue and \
                    (want_wdata is None or len(self.wdata) >= want_wdata):
                break
        else:
            raise AssertionError("streams did not drain")
        await ClockCycles(self.dut.clk, 8)
        await FallingEdge(self.dut.clk)

    def counters(self):
        d = self.dut
        return {"written": int(d.written.value), "read": int(d.read.value),
                "mismatches": int(d.mismatches.value),
                "first_bad_valid": int(d.first_bad_valid.value),
                "first_bad_tag": int(d.first_bad_tag.value)}


def xorshift32_bytes(x, n):
    """The low bytes of n successive xorshift32 states from x (Marsaglia 2003, 13/17/5)."""
    out = []
    for _ in range(n):
        out.append(x & 0xFF)
        x ^= (x << 13) & 0xFFFF_FFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFF_FFFF
    return bytes(out)


@cocotb.test()
async def test_program_pattern(dut):
    """Write requests get the (buffer, plane) pattern, from the first byte each time; the
    fixed buffer gets the `fixed` bytes, P1 first, repeating."""
    tb = TB(dut)
    await tb.reset()
    max_len = tb.p["max_len"]
    # The seed of (buffer 1, plane 0) written out: (1 << 8 | 0 << 6 | 2Ah) ^ 9E3779B9h.
    assert pattern_bytes(1, 0, 8) == xorshift32_bytes(0x012A ^ 0x9E3779B9, 8)
    reqs = [(1, 1, 0, 8), (2, 1, 0, 8), (3, 7, 1, max_len), (4, 0x1234, 3, 1),
            (5, 7, 2, 33), (6, FIXED_BUFFER, 0, 6), (7, 0xFFFE, 3, min(max_len, 300))]
    dut.fixed.value = 0x44332211
    want = bytearray()
    for tag, buffer, plane, length in reqs:
        tb.request(tag, buffer, plane, length)
        want += (bytes([0x11, 0x22, 0x33, 0x44, 0x11, 0x22]) if buffer == FIXED_BUFFER
                 else pattern_bytes(buffer, plane, length))
    for _ in range(20):
        length = tb.rng.randint(1, max_len)
        buffer, plane = tb.rng.randrange(FIXED_BUFFER), tb.rng.randrange(4)
        tb.request(0, buffer, plane, length)
        want += pattern_bytes(buffer, plane, length)
    await tb.settle(len(want))
    got = bytes(tb.wdata)
    assert len(got) == len(want), f"{len(got)} bytes, expected {len(want)}"
    bad = [i for i in range(len(want)) if got[i] != want[i]]
    assert not bad, f"{len(bad)} bytes differ, the first at {bad[0]}: " \
        f"{got[bad[0]]:#04x}, expected {want[bad[0]]:#04x}"
    assert tb.counters()["written"] == len(want)
    assert tb.counters()["mismatches"] == 0


@cocotb.test()
async def test_read_check(dut):
    """Clean reads count and match; a corrupted byte counts once and names its tag; with
    `check` low bytes are counted, not compared."""
    tb = TB(dut)
    await tb.reset()
    max_len, rng = tb.p["max_len"], tb.rng
    total = 0
    for tag in range(12):                        # single and multi-plane reads, any length
        buffer, length = rng.randrange(FIXED_BUFFER), rng.randint(1, max_len)
        for plane in range(rng.choice([1, 2, 4])):
            tb.read(tag, buffer, plane, pattern_bytes(buffer, plane, length))
            total += length
    await tb.settle()
    c = tb.counters()
    assert (c["read"], c["mismatches"], c["first_bad_valid"]) == (total, 0, 0), c

    # One wrong byte in the second plane of tag 0x5A, then one in tag 0x33.
    for tag, where in [(0x5A, 17), (0x33, 0)]:
        for plane in range(2):
            data = bytearray(pattern_bytes(9, plane, 40))
            if plane == 1:
                data[where] ^= 0x80
            tb.read(tag, 9, plane, data)
            total += len(data)
    await tb.settle()
    c = tb.counters()
    assert (c["read"], c["mismatches"]) == (total, 2), c
    assert (c["first_bad_valid"], c["first_bad_tag"]) == (1, 0x5A), c

    # check low (ID, features, parameter page): counted, not compared.
    dut.check.value = 0
    tb.read(0x11, 3, 0, bytes(range(50)))
    await tb.settle()
    c = tb.counters()
    assert (c["read"], c["mismatches"], c["first_bad_tag"]) == (total + 50, 2, 0x5A), c


@pytest.mark.smoke
def test_nand_bist():
    run(CORE.with_params(**SMOKE), __file__)


@pytest.mark.full
def test_nand_bist_default():
    run(CORE.with_params(**DEFAULTS), __file__)


@pytest.mark.smoke
@pytest.mark.parametrize("max_len", [0, 65537, True, 1.5])
def test_nand_bist_bad_params(max_len):
    with pytest.raises(ValueError, match=r"NandBist: max_len"):
        NandBist(max_len=max_len)
