# SPDX-License-Identifier: BSD-2-Clause
"""bch_encoder against bchlib (the Linux kernel's lib/bch.c): each codeword's data must come
out unchanged, followed by exactly bchlib's parity bytes for that data and zero bytes up to
the parity room, with random idle cycles on the input and backpressure on the output.
Data patterns: random, all zeros (parity zero), all ones, a single set bit at the first and
the last data bit. Parameters come from the build (core_params): smoke builds a t = 8 code
on 512 B, the full tier the personas' code at widths 1 and 2 and two more codes. The
refused parameters are tested with the decoder's (tests/nand/bch_decoder,
test_parameters_refused)."""

import random

import bchlib
import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles
from ssdlab_harness import AmaranthCore, core_params, run
from ssdlab_streams import StreamSink, StreamSource

from spec.bch import BchCode
from tests.nand.bch_decoder.test_bch_decoder import PERSONA, SMALL, SWEEP, SWEEP_IDS


@cocotb.test()
async def parity_matches_bchlib(dut):
    p = core_params()
    w = p["width"]
    code = BchCode(p["m"], p["t"], p["data_bytes"], p["parity_bytes"])
    bch = bchlib.BCH(p["t"], m=p["m"])
    rng = random.Random(cocotb.RANDOM_SEED)
    dut._log.info("params %s seed %d", p, cocotb.RANDOM_SEED)
    cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
    out = bytearray()
    src = StreamSource(dut, "s_data", rng, idle=0.2)
    StreamSink(dut, "m_data", rng, lambda v: out.extend(v.to_bytes(w, "little")), pause=0.2)
    dut.rst.value = 1
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0

    k = code.data_bytes
    first_bit = bytes([0x80]) + bytes(k - 1)
    last_bit = bytes(k - 1) + bytes([0x01])
    pages = [bytes(rng.getrandbits(8) for _ in range(k)) for _ in range(4)]
    pages += [bytes(k), bytes([0xff]) * k, first_bit, last_bit]
    expected = b""
    for data in pages:
        for i in range(0, k, w):
            src.put(int.from_bytes(data[i:i + w], "little"))
        expected += data + bch.encode(data) + bytes(code.room - code.ecc_bytes)
    for _ in range(400):
        if len(out) >= len(expected):
            break
        await ClockCycles(dut.clk, len(expected) // w // 100 + 8)
    assert len(out) == len(expected), f"{len(out)} bytes out, expected {len(expected)}"
    n = k + code.room
    for i, data in enumerate(pages):
        got = out[i * n:(i + 1) * n]
        assert got[:k] == data, f"codeword {i}: data changed"
        want = expected[i * n + k:(i + 1) * n]
        assert got[k:] == want, f"codeword {i}: parity {got[k:].hex()} != bchlib's {want.hex()}"
    assert expected[4 * n + k:5 * n] == bytes(code.room), "all-zero data has zero parity"


def core(**params):
    return AmaranthCore("rtl.nand.bch_encoder:BchEncoder", "bch_encoder",
                        params={**PERSONA, **params})


@pytest.mark.smoke
def test_bch_encoder():
    run(core(**SMALL), __file__)


@pytest.mark.full
@pytest.mark.parametrize("params", SWEEP, ids=SWEEP_IDS)
def test_bch_encoder_sweep(params):
    run(core(**params), __file__)
