# SPDX-License-Identifier: BSD-2-Clause
"""Tests of onfi_phy_sim on its own: two-phase outputs at exact clock edges, DQ sampling
latency, and the DQS-clocked read capture with its clock-domain crossing and rx_en discard.

The engine side is driven from cocotb with random values every cycle; the pins are sampled in
the read-only phase right after each rising and falling clock edge and a quarter period later
(so a pin that moved off an edge would be caught). DQS and DQ come from a cocotb "die" at
random times, unrelated to the clock.
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge, Timer
from ssdlab_harness import AmaranthCore, core_params, run

from rtl.nand.onfi_phy_if import PHY_IN_LATENCY, PHY_OUT_LATENCY
from rtl.nand.onfi_phy_sim import OnfiPhySim

PERIOD_PS = 10_000
SINGLE = ("ce_n", "cle", "ale", "we_n", "wp_n", "dq_oe", "dqs_oe")


async def reset(dut):
    for name in ("phy__ce_n", "phy__cle", "phy__ale", "phy__we_n", "phy__wp_n", "phy__re_n",
                 "phy__dq_o", "phy__dq_oe", "phy__dqs_o", "phy__dqs_oe", "phy__rx_en",
                 "phy__rx_ready", "dq_i", "dqs_i"):
        getattr(dut, name).value = 0
    dut.rb_n.value = 0
    Clock(dut.clk, PERIOD_PS, unit="ps", impl="gpi").start()
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    await RisingEdge(dut.clk)


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_two_phase_outputs(dut):
    """RE#, DQ and DQS show phase 0 from the rising edge and phase 1 from the falling edge,
    PHY_OUT_LATENCY cycles after the engine set them; one-phase pins follow at the rising
    edge; nothing moves between edges."""
    n_ways = core_params().get("n_ways", 1)
    rng = random.Random(cocotb.RANDOM_SEED)
    await reset(dut)
    history = []
    checked = 0
    for cycle in range(400):
        v = {
            "re_n": rng.randrange(4), "dq_o": rng.randrange(1 << 16),
            "dqs_o": rng.randrange(4), "ce_n": rng.randrange(1 << n_ways),
            **{n: rng.randrange(2) for n in SINGLE if n != "ce_n"},
        }
        for name, value in v.items():
            getattr(dut, f"phy__{name}").value = value
        history.append(v)
        await RisingEdge(dut.clk)
        await ReadOnly()
        after_rise = {n: int(getattr(dut, n).value) for n in ("re_n", "dq_o", "dqs_o") + SINGLE}
        await Timer(PERIOD_PS // 4, unit="ps")
        quarter = {n: int(getattr(dut, n).value) for n in after_rise}
        assert quarter == after_rise, f"cycle {cycle}: a pin moved between edges"
        await FallingEdge(dut.clk)
        await ReadOnly()
        after_fall = {n: int(getattr(dut, n).value) for n in after_rise}
        if len(history) >= PHY_OUT_LATENCY:
            # the values written in cycle k-1 are the engine registers of cycle k-1
            src = history[-PHY_OUT_LATENCY]
            assert after_rise["re_n"] == src["re_n"] & 1
            assert after_fall["re_n"] == src["re_n"] >> 1
            assert after_rise["dq_o"] == src["dq_o"] & 0xFF
            assert after_fall["dq_o"] == src["dq_o"] >> 8
            assert after_rise["dqs_o"] == src["dqs_o"] & 1
            assert after_fall["dqs_o"] == src["dqs_o"] >> 1
            for n in SINGLE:
                assert after_rise[n] == after_fall[n] == src[n], f"cycle {cycle}: {n}"
            checked += 1
        await Timer(PERIOD_PS // 4, unit="ps")
        assert {n: int(getattr(dut, n).value) for n in after_fall} == after_fall
    assert checked > 390


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_dq_sampling(dut):
    """phy.dq_i is the DQ pins PHY_IN_LATENCY rising edges later; R/B# passes through."""
    rng = random.Random(cocotb.RANDOM_SEED + 1)
    await reset(dut)
    seen = []
    for _ in range(200):
        value = rng.randrange(256)
        dut.dq_i.value = value
        seen.append(value)
        rb = rng.randrange(1 << len(dut.rb_n))
        dut.rb_n.value = rb
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert int(dut.phy__rb_n.value) == rb
        if len(seen) > PHY_IN_LATENCY:
            assert int(dut.phy__dq_i.value) == seen[-PHY_IN_LATENCY], "DQ sampling latency"
        await FallingEdge(dut.clk)


class Die:
    """Drives DQS and DQ edge-aligned at random times: one byte per DQS edge."""

    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.level = 0

    async def burst(self, pairs, min_ps=1500, max_ps=23_000):
        sent = []
        for _ in range(pairs):
            pair = (self.rng.randrange(256), self.rng.randrange(256))
            for byte in pair:
                await Timer(self.rng.randrange(min_ps, max_ps), unit="ps")
                self.level ^= 1
                self.dut.dq_i.value = byte
                self.dut.dqs_i.value = self.level
            sent.append(pair)
        return sent


async def receive(dut, rng, n, ready_prob, out, limit=200):
    for _ in range(limit):
        if len(out) >= n:
            dut.phy__rx_ready.value = 0
            return
        dut.phy__rx_ready.value = int(rng.random() < ready_prob)
        await ReadOnly()
        if int(dut.phy__rx_valid.value) and int(dut.phy__rx_ready.value):
            v = int(dut.phy__rx_data.value)
            out.append((v & 0xFF, v >> 8))
        await RisingEdge(dut.clk)
    assert len(out) >= n, f"{n - len(out)} of the pairs missing: got {out}"


@cocotb.test(timeout_time=100, timeout_unit="us")
async def test_dqs_capture(dut):
    """Pairs captured on the die's DQS edges reach the engine side in order, whatever the
    strobe's phase and rate against the clock and with rx_ready backpressure; with rx_en low
    everything the strobe captured is discarded."""
    rng = random.Random(cocotb.RANDOM_SEED + 2)
    await reset(dut)
    die = Die(dut, rng)
    # rx_en low: a burst is captured and dropped
    await die.burst(5)
    for _ in range(6):
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert not int(dut.phy__rx_valid.value), "data offered while rx_en is low"
    await RisingEdge(dut.clk)
    dut.phy__rx_en.value = 1
    got = []
    for ready_prob, pairs in ((1.0, 7), (0.5, 7), (0.9, 7)):
        # the die never runs more than RX_DEPTH pairs ahead (the engine's credit rule)
        sent = await die.burst(pairs, min_ps=1500, max_ps=12_000)
        start = len(got)
        await receive(dut, rng, start + pairs, ready_prob, got)
        assert got[start:] == sent, f"ready {ready_prob}: got {got[start:]}, sent {sent}"
    # single-pair bursts (a status read) across every pointer wrap: each pair arrives within
    # the synchroniser's latency of its falling edge, none waits for a later edge
    for i in range(40):
        sent = await die.burst(1, min_ps=1500, max_ps=12_000)
        start = len(got)
        await receive(dut, rng, start + 1, 1.0, got, limit=5)
        assert got[start:] == sent, f"single pair {i}: got {got[start:]}, sent {sent}"
    await RisingEdge(dut.clk)
    await ReadOnly()
    assert not int(dut.phy__rx_valid.value)


CORE = AmaranthCore("rtl.nand.onfi_phy_sim:OnfiPhySim", toplevel="onfi_phy_sim")


@pytest.mark.smoke
@pytest.mark.parametrize("n_ways", [1, 8])
def test_onfi_phy_sim(n_ways):
    run(CORE.with_params(n_ways=n_ways), __file__)


@pytest.mark.smoke
@pytest.mark.parametrize("n_ways", [0, 9, True])
def test_onfi_phy_sim_bad_params(n_ways):
    with pytest.raises(ValueError, match="n_ways"):
        OnfiPhySim(n_ways=n_ways)
