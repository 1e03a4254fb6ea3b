# SPDX-License-Identifier: BSD-2-Clause
"""soc/buffer_memory.py: BufferMemory's full-width and narrow (lane-selected) ports against a
byte-array model.

Random writes (random byte strobes, dword granular as the clients use them) through the 32-,
64- and data_width-bit writers, all three at once so the round robin is exercised, then every
byte read back through every reader, each narrow read checked against its lane of the model
(a lane off by one, a strobe shifted the wrong way, a read lane taken from the wrong cycle all
fail). Readers also run concurrently, with back-to-back requests, so the lane kept for the
data cycle is checked.
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from ssdlab_harness import LiteXCore, core_params, run

CORE = LiteXCore("tests.soc.buffer_memory.buffer_memory_top:BufferMemoryTop",
                 toplevel="buffer_memory_top")
DEFAULTS = {"data_width": 64, "size": 4096}


async def transfer(dut, prefix):
    """Wait for the handshake of the beat on `prefix`_valid (ready sampled before the edge);
    returns after the edge that took it."""
    while True:
        await ReadOnly()
        fire = int(getattr(dut, f"{prefix}_ready").value)
        await RisingEdge(dut.clk)
        if fire:
            return


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.widths = sorted({32, 64, self.p["data_width"]})
        self.model = bytearray(self.p["size"])
        dut._log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        for w in self.widths:
            for n in ("w", "r"):
                getattr(dut, f"{n}{w}_valid").value = 0
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    async def writer(self, w, n):
        dut, wb = self.dut, w // 8
        for _ in range(n):
            addr = self.rng.randrange(self.p["size"] // wb)
            data = self.rng.getrandbits(w)
            strb = 0
            for d in range(wb // 4):
                if self.rng.random() < 0.7:
                    strb |= 0xF << (4 * d)
            getattr(dut, f"w{w}_valid").value = 1
            getattr(dut, f"w{w}_addr").value = addr
            getattr(dut, f"w{w}_data").value = data
            getattr(dut, f"w{w}_strb").value = strb
            await transfer(dut, f"w{w}")
            raw = data.to_bytes(wb, "little")
            for b in range(wb):
                if strb >> b & 1:
                    self.model[addr * wb + b] = raw[b]
            getattr(dut, f"w{w}_valid").value = 0
            if self.rng.random() < 0.3:
                await RisingEdge(dut.clk)

    async def reader(self, w, addrs):
        """Requests back to back; returns {addr: data} from the data port."""
        dut = self.dut
        got, sent = [], []

        async def collect():
            while len(got) < len(addrs):
                await ReadOnly()
                if int(getattr(dut, f"d{w}_valid").value):
                    got.append(int(getattr(dut, f"d{w}_data").value))
                await RisingEdge(dut.clk)
        task = cocotb.start_soon(collect())
        for a in addrs:
            getattr(dut, f"r{w}_valid").value = 1
            getattr(dut, f"r{w}_addr").value = a
            await transfer(dut, f"r{w}")
            sent.append(a)
        getattr(dut, f"r{w}_valid").value = 0
        await task
        return list(zip(sent, got, strict=True))

    def expect(self, w, addr):
        wb = w // 8
        return int.from_bytes(self.model[addr * wb:(addr + 1) * wb], "little")


@cocotb.test()
async def test_narrow_ports(dut):
    tb = TB(dut)
    await tb.reset()
    w = tb.p["data_width"]                  # Defined contents (the RAM starts unknown).
    wb = w // 8
    for a in range(tb.p["size"] // wb):
        getattr(dut, f"w{w}_valid").value = 1
        getattr(dut, f"w{w}_addr").value = a
        getattr(dut, f"w{w}_data").value = 0
        getattr(dut, f"w{w}_strb").value = (1 << wb) - 1
        await transfer(dut, f"w{w}")
    getattr(dut, f"w{w}_valid").value = 0
    for _ in range(3):
        ws = [cocotb.start_soon(tb.writer(w, 150)) for w in tb.widths]
        for t in ws:
            await t
        await RisingEdge(dut.clk)
        rs = []
        for w in tb.widths:
            n = tb.p["size"] // (w // 8)
            addrs = list(range(n))
            tb.rng.shuffle(addrs)
            rs.append((w, cocotb.start_soon(tb.reader(w, addrs))))
        for w, t in rs:
            for a, d in await t:
                assert d == tb.expect(w, a), (
                    f"{w}-bit read of word {a}: {d:#x}, expected {tb.expect(w, a):#x}")


@pytest.mark.smoke
@pytest.mark.parametrize("data_width", [64, 256])
def test_buffer_memory(data_width):
    run(CORE.with_params(**{**DEFAULTS, "data_width": data_width}), __file__)


@pytest.mark.full
@pytest.mark.parametrize("data_width", [128, 512])
def test_buffer_memory_full(data_width):
    run(CORE.with_params(**{**DEFAULTS, "data_width": data_width}), __file__)
