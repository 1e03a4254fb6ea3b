# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nand_buffer_dma: the flash data movers between the channels and a buffer memory.

The test is the buffer memory (a word array answering reads after a random latency of 1..4
cycles, taking writes with random backpressure) and the schedulers of every channel (write
requests answered with bytes, read bytes with their buffer / plane / last). What is checked:
every channel's program bytes equal the memory bytes at ((buffer + plane * plane_slots) mod
2**16) * 4096 even when the channels' reads interleave on the shared port (the read data of
one channel never reaches another), and every read-data transfer lands at its slot with the
right byte strobes (partial last words included).
"""

import random
from collections import deque

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from ssdlab_harness import AmaranthCore, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from rtl.nand.nand_buffer_dma import NandBufferDma, mem_wr_layout
from rtl.nand.nand_die_scheduler import rdata_layout, wreq_layout

PARAMS = dict(n_channels=3, max_len=600, addr_width=12, words=4)
PLANE_SLOTS = 2


class Memory:
    """Word-addressed buffer memory on m_rd / s_rdd / m_wr."""

    def __init__(self, dut, rng, words):
        self.dut, self.rng = dut, rng
        self.mem = [rng.getrandbits(64) for _ in range(words)]
        self.pending = deque()          # (due cycle, data)
        self.cycle = 0
        aw = PARAMS["addr_width"]
        self.wr_layout = mem_wr_layout(aw)
        StreamSink(dut, "m_rd", rng, self._read, pause=0.3)
        StreamSink(dut, "m_wr", rng, self._write, pause=0.3)
        dut.s_rdd__valid.value = 0
        cocotb.start_soon(self._respond())

    def _read(self, addr):
        due = max(self.cycle + self.rng.randint(1, 4), self.pending[-1][0] + 1 if self.pending
                  else 0)
        self.pending.append((due, self.mem[addr]))

    def _write(self, bits):
        f = struct_fields(self.wr_layout, bits)
        old = self.mem[f["addr"]]
        for b in range(8):
            if f["strb"] >> b & 1:
                old = (old & ~(0xFF << 8 * b)) | (f["data"] & (0xFF << 8 * b))
        self.mem[f["addr"]] = old

    async def _respond(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if self.pending and self.pending[0][0] <= self.cycle:
                dut.s_rdd__valid.value = 1
                dut.s_rdd__payload.value = self.pending.popleft()[1]
            else:
                dut.s_rdd__valid.value = 0

    def bytes_at(self, byte_addr, n):
        out = bytearray()
        for a in range(byte_addr, byte_addr + n):
            w = self.mem[(a // 8) % len(self.mem)]
            out.append(w >> (8 * (a % 8)) & 0xFF)
        return bytes(out)


def slot_address(buffer, plane, words):
    return (((buffer + plane * PLANE_SLOTS) % (1 << 16)) * 4096) % (8 * words)


@cocotb.test()
async def test_program_and_read_data(dut):
    seed = cocotb.RANDOM_SEED          # the harness's SEED (printed, replayable)
    rng = random.Random(seed)
    dut._log.info("seed %d", seed)
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.plane_slots.value = PLANE_SLOTS
    words = 1 << PARAMS["addr_width"]
    n = PARAMS["n_channels"]
    mem = Memory(dut, rng, words)
    got = [bytearray() for _ in range(n)]
    want = [bytearray() for _ in range(n)]
    wreqs, rdata = [], []
    for c in range(n):
        def on_byte(b, c=c):
            got[c].append(b)
        StreamSink(dut, f"ch__{c}__m_wdata", rng, on_byte, pause=0.2)
        wreqs.append(StreamSource(dut, f"ch__{c}__s_wreq", rng, idle=0.2))
        rdata.append(StreamSource(dut, f"ch__{c}__s_rdata", rng, idle=0.2))
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0

    # Program data: slots 0..3 (buffers 0..1, planes 0..1) are only read.
    expected_image = {}
    for c in range(n):
        for _ in range(12):
            buffer, plane = rng.randrange(2), rng.randrange(2)
            length = rng.choice([1, 4, 7, 8, 9, 64, rng.randint(1, PARAMS["max_len"])])
            want[c] += mem.bytes_at(slot_address(buffer, plane, words), length)
            wreqs[c].put(struct_bits(wreq_layout(PARAMS["max_len"]), tag=c, buffer=buffer,
                                     plane=plane, length=length))
    # Read data: channel c writes its own slot 4 + c (buffer 4 + c, plane 0), in order.
    for c in range(n):
        image = {}
        for _ in range(6):
            length = rng.choice([1, 5, 8, 13, rng.randint(1, PARAMS["max_len"])])
            data = bytes(rng.getrandbits(8) for _ in range(length))
            base = slot_address(4 + c, 0, words)
            for k, b in enumerate(data):
                image[base + k] = b
                rdata[c].put(struct_bits(rdata_layout, data=b, last=int(k == length - 1),
                                         tag=c, buffer=4 + c, plane=0))
        expected_image.update(image)

    total = sum(len(w) for w in want)
    for _ in range(200000):
        await RisingEdge(dut.clk)
        if sum(len(g) for g in got) >= total and all(not r.queue for r in rdata):
            break
    await ClockCycles(dut.clk, 50)          # the last words leave the output queues
    await ReadOnly()
    for c in range(n):
        g, w = bytes(got[c]), bytes(want[c])
        first = next((i for i, (a, b) in enumerate(zip(g, w, strict=False)) if a != b), None)
        assert g == w, (f"channel {c}: {len(g)} of {len(w)} program bytes, first difference "
                        f"at byte {first}")
    bad = [a for a, b in expected_image.items() if mem.bytes_at(a, 1)[0] != b]
    assert not bad, f"{len(bad)} read-data bytes wrong, first at byte address {bad[0]:#x}"
    dut._log.info("%d program bytes on %d channels and %d read-data bytes checked", total, n,
                  len(expected_image))


def core(**params):
    return AmaranthCore("rtl.nand.nand_buffer_dma:NandBufferDma", toplevel="nand_buffer_dma",
                        params={**PARAMS, **params})


@pytest.mark.smoke
def test_nand_buffer_dma_params():
    """Illegal parameters stop elaboration with a message naming the parameter."""
    for name, value in (("n_channels", 0), ("n_channels", 33), ("max_len", 0),
                        ("addr_width", 8), ("words", 1), ("words", True)):
        with pytest.raises(ValueError, match=name):
            NandBufferDma(**{name: value})


@pytest.mark.smoke
def test_nand_buffer_dma():
    run(core(), __file__)
