# SPDX-License-Identifier: BSD-2-Clause
"""nand_ecc between a modelled die scheduler and a modelled buffer DMA, against bchlib.

Program side: an ECC write request passes to the mover unchanged, the mover's data comes
back to the scheduler as codewords (each codeword's data, bchlib's parity, zero room); a raw
request passes bytes unchanged. Read side: an ECC op's bus bytes (two planes of codewords,
with none, some, exactly t and t + 1 bit errors) reach the mover as each codeword's data as
bchlib corrects it (a failed codeword's data is not compared), with the op's tag, buffer and
plane and `last` on each plane's last data byte; its completion waits for the last data byte
and carries the most bits corrected in a codeword and whether one failed (bchlib's verdict);
a raw op after it passes unchanged with a completion of zeros; a refused op's completion
passes at once even while the decoder holds data. Random idle cycles and backpressure on
every stream. The smoke build is a t = 8 code on 512 B; the full tier builds the personas'
code (t = 32 on 1 KiB)."""

import random

import bchlib
import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from rtl.nand.nand_die_scheduler import FlashCompletion, rdata_layout, wreq_layout
from spec.bch import BchCode

SMALL = {"m": 13, "t": 8, "data_bytes": 512, "parity_bytes": 16, "max_len": 4352,
         "gate_clocks": True}
PERSONA = {"m": 14, "t": 32, "data_bytes": 1024, "parity_bytes": 56, "max_len": 18432}


class TB:
    def __init__(self, dut):
        p = core_params()
        self.dut, self.p = dut, p
        self.code = BchCode(p["m"], p["t"], p["data_bytes"], p["parity_bytes"])
        self.bch = bchlib.BCH(p["t"], m=p["m"])
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.wreq_layout = wreq_layout(p["max_len"])
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        rng = self.rng
        self.wreq = StreamSource(dut, "s_wreq", rng, idle=0.2)
        self.wdata = StreamSource(dut, "s_wdata", rng, idle=0.2)
        self.rdata = StreamSource(dut, "s_rdata", rng, idle=0.2)
        self.cpl = StreamSource(dut, "s_cpl", rng)
        self.got_wreq, self.got_wdata, self.got_rdata, self.got_cpl = [], [], [], []
        self.cycle = 0
        StreamSink(dut, "m_wreq", rng, self.got_wreq.append, pause=0.2)
        StreamSink(dut, "m_wdata", rng, self.got_wdata.append, pause=0.2)
        StreamSink(dut, "m_rdata", rng, lambda v: self.got_rdata.append((self.cycle, v)),
                   pause=0.2)
        StreamSink(dut, "m_cpl", rng, lambda v: self.got_cpl.append((self.cycle, v)),
                   pause=0.2)
        cocotb.start_soon(self._count())

    async def _count(self):
        while True:
            await RisingEdge(self.dut.clk)
            self.cycle += 1

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0

    def parity(self, data):
        return self.bch.encode(data) + bytes(self.code.room - self.code.ecc_bytes)

    def received(self, data, n_errors):
        """A codeword as read with n_errors bit errors, and bchlib's (count, corrected data)."""
        c = self.code
        frame = bytearray(data + self.parity(data))
        for g in self.rng.sample(range(8 * c.data_bytes + c.ecc_bits), n_errors):
            frame[g // 8] ^= 0x80 >> (g % 8)
        rx_data = bytearray(frame[:c.data_bytes])
        rx_ecc = bytearray(frame[c.data_bytes:c.data_bytes + c.ecc_bytes])
        n = self.bch.decode(bytes(rx_data), bytes(rx_ecc))
        if n >= 0:
            self.bch.correct(rx_data, rx_ecc)
        return bytes(frame), n, bytes(rx_data)

    async def wait_for(self, what, count, cycles):
        for _ in range(cycles // 16):
            if len(what) >= count:
                return
            await ClockCycles(self.dut.clk, 16)
        assert len(what) >= count, f"{len(what)} of {count} beats after {cycles} cycles"


@cocotb.test()
async def program_path(dut):
    tb = TB(dut)
    await tb.reset()
    k = tb.code.data_bytes
    ops = [dict(tag=5, buffer=40, plane=1, length=3 * k, ecc=1),
           dict(tag=6, buffer=41, plane=0, length=7, ecc=0),        # raw: 7 bytes as they are
           dict(tag=7, buffer=42, plane=0, length=k, ecc=1)]
    want = bytearray()
    for op in ops:
        tb.wreq.put(struct_bits(tb.wreq_layout, **op))
        data = bytes(tb.rng.getrandbits(8) for _ in range(op["length"]))
        for b in data:
            tb.wdata.put(b)
        if op["ecc"]:
            for i in range(0, len(data), k):
                want += data[i:i + k] + tb.parity(data[i:i + k])
        else:
            want += data
    await tb.wait_for(tb.got_wdata, len(want), 40 * len(want))
    await ClockCycles(dut.clk, 50)
    assert bytes(tb.got_wdata) == bytes(want), "bus bytes differ from data + bchlib parity"
    assert [struct_fields(tb.wreq_layout, v) for v in tb.got_wreq] == ops


@cocotb.test()
async def read_path(dut):
    tb = TB(dut)
    await tb.reset()
    k, t = tb.code.data_bytes, tb.code.t
    beat = lambda **f: struct_bits(rdata_layout, **f)   # noqa: E731
    # op 9: two planes of two codewords; errors 0, 3 | t, t + 1
    want, outcome = [], []
    plane_errors = [[0, 3], [t, t + 1]]
    for plane, errors in enumerate(plane_errors):
        for i, n_err in enumerate(errors):
            data = bytes(tb.rng.getrandbits(8) for _ in range(k))
            frame, n, fixed = tb.received(data, n_err)
            outcome.append(n)
            last_cw = i == len(errors) - 1
            for j, b in enumerate(frame):
                tb.rdata.put(beat(data=b, tag=9, buffer=100, plane=plane, ecc=1,
                                  last=int(last_cw and j == len(frame) - 1)))
            # a failed codeword's data is not to be used (bch_decoder): None, not compared
            for j, b in enumerate(fixed if n >= 0 else [None] * k):
                want.append(dict(data=b, last=int(last_cw and j == k - 1), tag=9, buffer=100,
                                 plane=plane, ecc=1))
    # the op's completion right behind its data; a refused op's completion in the middle
    tb.cpl.put(struct_bits(FlashCompletion, tag=33, error=1))
    bus = 2 * 2 * (k + tb.code.room)
    while tb.rdata.sent < bus:
        await ClockCycles(dut.clk, 1)
    tb.cpl.put(struct_bits(FlashCompletion, tag=9, status=0xE0))
    # then a raw op: 8 bytes, its completion
    raw = bytes(tb.rng.getrandbits(8) for _ in range(8))
    for j, b in enumerate(raw):
        tb.rdata.put(beat(data=b, tag=10, buffer=7, plane=0, ecc=0, last=int(j == 7)))
        want.append(dict(data=b, last=int(j == 7), tag=10, buffer=7, plane=0, ecc=0))
    while tb.rdata.sent < bus + 8:
        await ClockCycles(dut.clk, 1)
    tb.cpl.put(struct_bits(FlashCompletion, tag=10, status=0xE0))
    await tb.wait_for(tb.got_cpl, 3, 60 * bus)
    got = [struct_fields(rdata_layout, v) for _, v in tb.got_rdata]
    assert len(got) == len(want), f"{len(got)} data bytes, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        if w["data"] is None:
            w = {**w, "data": g["data"]}
        assert g == w, f"byte {i}: {g} != {w}"
    cpls = [(c, struct_fields(FlashCompletion, v)) for c, v in tb.got_cpl]
    first = cpls[0][1]
    assert first["tag"] == 33 and first["error"] == 1 and first["ecc_bits"] == 0
    assert cpls[0][0] < tb.got_rdata[2 * k][0], "the refused op's completion waited"
    cycle, c9 = cpls[1]
    fail = any(n < 0 for n in outcome)
    assert c9["tag"] == 9 and c9["ecc_fail"] == int(fail)
    assert c9["ecc_bits"] == max(n for n in outcome if n >= 0)
    last_ecc_byte = tb.got_rdata[4 * k - 1][0]
    assert cycle > last_ecc_byte, "the op's completion came before its last data byte"
    c10 = cpls[2][1]
    assert c10["tag"] == 10 and c10["ecc_bits"] == 0 and c10["ecc_fail"] == 0
    dut._log.info("codeword outcomes (bchlib): %s; completion %s", outcome, c9)
    assert outcome[:3] == [0, 3, t]


def core(**params):
    return AmaranthCore("rtl.nand.nand_ecc:NandEcc", "nand_ecc", params=params)


@pytest.mark.smoke
def test_nand_ecc():
    run(core(**SMALL), __file__)


@pytest.mark.full
def test_nand_ecc_persona():
    run(core(**PERSONA), __file__)


@pytest.mark.smoke
def test_parameters_refused():
    from rtl.nand.nand_ecc import NandEcc
    for kwargs, name in (({"data_bytes": 768}, "data_bytes must be a power of two"),
                         ({"max_len": 0}, "max_len"), ({"t": 0}, "t")):
        with pytest.raises(ValueError, match=rf"^NandEcc: {name}"):
            NandEcc(**{**PERSONA, **kwargs})
