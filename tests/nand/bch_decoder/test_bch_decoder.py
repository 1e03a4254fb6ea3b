# SPDX-License-Identifier: BSD-2-Clause
"""bch_decoder against bchlib (the Linux kernel's lib/bch.c): every codeword's corrected data
and status must be what bchlib's decode and correct give for the same received bytes.

Each codeword is random data, its parity from bchlib's encoder, then bit errors: none, one,
exactly t, t+1, t+2, up to 2t at random, only in the parity, and a burst, plus random bits in
the room past the parity (which the code does not cover: the decoder must ignore them). Past
t, bchlib either detects the failure (the decoder must report `failed`) or miscorrects into
another codeword (the decoder must return the same data and count). The streams run with
random idle cycles on the input and backpressure on both outputs; `back_to_back` runs clean
streams and checks the codeword period the core's docstring states; `limit` (full tier)
counts the correction limit over hundreds of codewords with t and t+1 errors. Parameters
come from the build (core_params): smoke builds a t = 8 code on 512 B, the full tier the
personas' code (t = 32 on 1 KiB, GF(2^14)) at widths 1 and 2 and two more codes."""

import os
import random

import bchlib
import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run
from ssdlab_streams import StreamSink, StreamSource

from spec.bch import BchCode

SMOKE = ["error_patterns", "back_to_back"]
PERSONA = {"m": 14, "t": 32, "data_bytes": 1024, "parity_bytes": 56, "width": 1}
# smoke: a t = 8 code on 512 B, the same generator at a quarter of the personas' build time
SMALL = {"m": 13, "t": 8, "data_bytes": 512, "parity_bytes": 16, "width": 1}
# full tier (the encoder's test builds the same): the personas' code at widths 1 and 2, a
# 2 KiB code at width 4 and a short one at width 8
SWEEP = [PERSONA, {**PERSONA, "width": 2},
         {"m": 15, "t": 40, "data_bytes": 2048, "parity_bytes": 80, "width": 4},
         {"m": 13, "t": 3, "data_bytes": 40, "parity_bytes": 8, "width": 8}]
SWEEP_IDS = ["persona", "persona_w2", "t40_2KiB_w4", "t3_w8"]


class TB:
    def __init__(self, dut, idle=0.0, pause=0.0):
        p = core_params()
        self.dut, self.w = dut, p["width"]
        self.code = BchCode(p["m"], p["t"], p["data_bytes"], p["parity_bytes"])
        self.bch = bchlib.BCH(p["t"], m=p["m"])
        self.rng = random.Random(cocotb.RANDOM_SEED)
        dut._log.info("params %s seed %d", p, cocotb.RANDOM_SEED)
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())
        self.src = StreamSource(dut, "s_data", self.rng, idle=idle)
        self.data, self.status = bytearray(), []
        self.sink = StreamSink(dut, "m_data", self.rng, self._data, pause=pause)
        self.ssink = StreamSink(dut, "m_status", self.rng, self.status.append, pause=pause)
        self.expected = []

    def _data(self, v):
        self.data.extend(v.to_bytes(self.w, "little"))

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0

    def codeword(self, n_errors=None, where="all", burst=False):
        """Queue one received codeword and its expected outcome from bchlib."""
        c, rng = self.code, self.rng
        k = c.data_bytes
        data = bytes(rng.getrandbits(8) for _ in range(k))
        frame = bytearray(data + self.bch.encode(data) + bytes(c.room - c.ecc_bytes))
        # stream bit g: byte g // 8, most significant bit first; the code covers g < covered
        covered = 8 * k + c.ecc_bits
        lo = 8 * k if where == "parity" else 0
        if burst:
            start = rng.randrange(lo, covered - n_errors)
            locs = range(start, start + n_errors)
        else:
            locs = rng.sample(range(lo, covered), n_errors)
        for g in locs:
            frame[g // 8] ^= 0x80 >> (g % 8)
        for g in range(covered, 8 * len(frame)):           # noise the code does not cover
            frame[g // 8] ^= rng.getrandbits(1) << (7 - g % 8)
        # bchlib's view: the data and the parity bytes, pad bits as the encoder left them
        rx_data = bytearray(frame[:k])
        rx_ecc = bytearray(frame[k:k + c.ecc_bytes])
        for g in range(c.ecc_bits, 8 * c.ecc_bytes):
            rx_ecc[g // 8] &= ~(0x80 >> g % 8) & 0xff
        n = self.bch.decode(bytes(rx_data), bytes(rx_ecc))
        if n >= 0:
            self.bch.correct(rx_data, rx_ecc)
        self.expected.append((n_errors, n, bytes(rx_data), data))
        for i in range(0, len(frame), self.w):
            self.src.put(int.from_bytes(frame[i:i + self.w], "little"))

    async def check(self, timeout_cycles):
        n = len(self.expected)
        for _ in range(timeout_cycles // 64):
            if len(self.status) >= n:
                break
            await ClockCycles(self.dut.clk, 64)
        assert len(self.status) == n, f"{len(self.status)} of {n} statuses after the timeout"
        k, t = self.code.data_bytes, self.code.t
        assert len(self.data) == n * k, f"{len(self.data)} data bytes for {n} codewords"
        counts = {"corrected": 0, "failed": 0, "miscorrected": 0}
        for i, (injected, ref, ref_data, sent) in enumerate(self.expected):
            got = self.data[i * k:(i + 1) * k]
            corrected, failed = self.status[i] & ((1 << t.bit_length()) - 1), \
                self.status[i] >> t.bit_length()
            what = f"codeword {i}: {injected} bit errors, bchlib {ref}"
            if ref < 0:
                assert failed == 1, f"{what}: the decoder did not report failure"
                assert corrected == 0, f"{what}: failed with corrected={corrected}"
                counts["failed"] += 1
                continue
            assert failed == 0, f"{what}: the decoder reported failure"
            assert corrected == ref, f"{what}: corrected {corrected}"
            assert got == ref_data, f"{what}: data differs from bchlib's correction"
            if injected <= t:
                assert got == sent, f"{what}: data not restored"
                counts["corrected"] += 1
            else:
                counts["miscorrected"] += 1
        self.dut._log.info("%d codewords: %s", n, counts)
        return counts


def cycles_for(code, w, n):
    """Enough cycles for n codewords at full rate: n periods, the first one's latency, slack."""
    return (n + 2) * ((code.frame_bits // 8 // w) + 2 * code.t + 3) + 200


@cocotb.test()
async def error_patterns(dut):
    """Every pattern class, with idle input cycles and output backpressure."""
    tb = TB(dut, idle=0.2, pause=0.2)
    await tb.reset()
    t = tb.code.t
    plan = ([0, 1, t, t, t + 1, t + 1, t + 2, 2 * t] +
            [tb.rng.randint(0, 2 * t) for _ in range(6)])
    for n in plan:
        tb.codeword(n)
    tb.codeword(t, where="parity")
    tb.codeword(min(t, 8), burst=True)
    tb.codeword(t + 1, burst=True)
    counts = await tb.check(3 * cycles_for(tb.code, tb.w, len(tb.expected)))
    # 0, 1, t, t, t in the parity, a burst of min(t, 8): corrected; t+1, t+1, t+2, 2t and the
    # burst of t+1: beyond the code
    assert counts["corrected"] >= 6 and counts["failed"] + counts["miscorrected"] >= 5


@cocotb.test()
async def back_to_back(dut):
    """Streams without idle or backpressure: codewords with errors leave at one per
    (data + room) / width + 2t + 3 cycles; error-free ones (all syndromes zero: no
    Berlekamp-Massey, no search) at one per (data + room) / width + 3."""
    tb = TB(dut)
    await tb.reset()
    n = 6
    starts = []

    async def watch():
        while True:
            await RisingEdge(dut.clk)
            if int(dut.m_status__valid.value) and int(dut.m_status__ready.value):
                starts.append(get_sim_time(unit="ns"))
    cocotb.start_soon(watch())
    beats = tb.code.frame_bits // 8 // tb.w
    for errors, want in ((lambda i: 1 + i % 3 * (tb.code.t - 1) // 2, beats + 2 * tb.code.t + 3),
                         (lambda i: 0, beats + 3)):
        starts.clear()
        tb.expected.clear()
        tb.data.clear()
        tb.status.clear()
        for i in range(n):
            tb.codeword(errors(i))
        await tb.check(2 * cycles_for(tb.code, tb.w, n))
        # whole cycles between the second status and the last (the first has the latency)
        cycles = round((starts[-1] - starts[1]) / 8)
        period = cycles / (len(starts) - 2)
        dut._log.info("codeword period %.1f cycles with %s (%d data bytes: %.3f bytes per "
                      "cycle)", period, "errors" if want > beats + 3 else "no errors",
                      tb.code.data_bytes, tb.code.data_bytes / period)
        assert cycles == want * (len(starts) - 2), f"period {period} cycles, expected {want}"


@cocotb.test()
async def limit(dut):
    """The correction limit, counted: codewords with exactly t and with t+1 bit errors (full
    tier, LIMIT_CODEWORDS of each, default 200). Every t must be corrected; every t+1 must be
    detected or miscorrected exactly as bchlib does it."""
    tb = TB(dut)
    await tb.reset()
    n = int(os.environ.get("LIMIT_CODEWORDS", "200"))
    t = tb.code.t
    for _ in range(n):
        tb.codeword(t)
    await tb.check(cycles_for(tb.code, tb.w, n))
    assert all(ref == t for _, ref, _, _ in tb.expected), "bchlib failed on t errors"
    tb.expected.clear()
    tb.data.clear()
    tb.status.clear()
    for _ in range(n):
        tb.codeword(t + 1)
    counts = await tb.check(cycles_for(tb.code, tb.w, n))
    dut._log.info("t = %d: %d of %d codewords with t errors corrected; with t + 1 errors: "
                  "%d detected, %d miscorrected (as bchlib)", t, n, n, counts["failed"],
                  counts["miscorrected"])
    assert counts["failed"] + counts["miscorrected"] == n


def core(**params):
    return AmaranthCore("rtl.nand.bch_decoder:BchDecoder", "bch_decoder",
                        params={**PERSONA, **params})


@pytest.mark.smoke
def test_bch_decoder():
    """The small code with gated clocks, as the simulated drive builds it."""
    run(core(**SMALL, gate_clocks=True), __file__, testcase=SMOKE)


@pytest.mark.full
def test_bch_decoder_gated_persona():
    """The personas' code with gated clocks (the sweep below: clock enables)."""
    run(core(**PERSONA, gate_clocks=True), __file__, testcase=SMOKE)


@pytest.mark.full
@pytest.mark.parametrize("params", [{}, {"m": 13, "t": 3, "data_bytes": 40,
                                         "parity_bytes": 8, "width": 8}],
                         ids=["persona", "t3_w8"])
def test_bch_decoder_limit(params):
    run(core(**params), __file__, testcase="limit")


@pytest.mark.full
@pytest.mark.parametrize("params", SWEEP, ids=SWEEP_IDS)
def test_bch_decoder_sweep(params):
    run(core(**params), __file__, testcase=SMOKE)


@pytest.mark.smoke
def test_parameters_refused():
    """Illegal parameters stop elaboration with the parameter's name."""
    from rtl.nand.bch_decoder import BchDecoder
    from rtl.nand.bch_encoder import BchEncoder
    cases = [({"m": 4}, "m"), ({"m": 16}, "m"), ({"t": 0}, "t"), ({"t": True}, "t"),
             ({"data_bytes": 0}, "data_bytes"), ({"width": 3}, "width"),
             ({"parity_bytes": 10}, "parity_bytes"),          # the parity needs 56
             ({"m": 13}, "data_bytes"),                      # 1024 + 56 bytes > 2^13 - 1 bits
             ({"data_bytes": 1023, "width": 2}, "width"),
             ({"parity_bytes": 57, "width": 2}, "width")]     # the room, 57 bytes
    with pytest.raises(ValueError, match=r"^BchDecoder: gate_clocks"):
        BchDecoder(**PERSONA, gate_clocks=1)
    for cls in (BchDecoder, BchEncoder):
        for kwargs, name in cases:
            with pytest.raises(ValueError, match=rf"^{cls.__name__}: {name}") as e:
                cls(**{**PERSONA, **kwargs})
            assert cls.__name__ in str(e.value)
