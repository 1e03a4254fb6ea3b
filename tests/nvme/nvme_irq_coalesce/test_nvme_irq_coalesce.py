# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nvme_irq_coalesce: NVMe 1.4 interrupt coalescing (features 08h and 09h).

clk_freq_hz is 1 MHz in these builds, so one Aggregation Time unit (100 us) is 100 cycles and
the timer tests finish in a few hundred cycles; the RTL only uses clk_freq_hz / 10000 as a
cycle count, so nothing else changes with the frequency.

Every test runs a cycle-level Python model of the coalescing rules beside the DUT and checks
m_msi (valid, vector) against it on every cycle; the directed tests also state the rules
themselves (counts and exact latencies), so the model is not the only judge.
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge
from ssdlab_harness import LiteXCore, core_params, run

CORE = LiteXCore("rtl.nvme.nvme_irq_coalesce:NvmeIrqCoalesce", "nvme_irq_coalesce")
DEFAULTS = {"n_vectors": 65, "clk_freq_hz": 250e6}
TEST_CLK_HZ = 1e6


# Reference model ---------------------------------------------------------------------------------

class Model:
    """The coalescing rules, one step per rising edge.

    Per vector: count of requests since its last interrupt and the edge of the first one.
    A vector fires when count > thr, or when time != 0 and its timer has run time * unit - 1
    edges (the output register adds one: the MSI can be taken exactly time * unit edges after
    the edge that took the first request), or at once (vector 0, cd = 1, time = 0). A firing
    vector is loaded, round robin after the last one loaded, into the output register when it
    is free or being taken; taking it clears the vector (a request in the same edge starts a
    new count).
    """
    def __init__(self, n, unit):
        self.n, self.unit = n, unit
        self.cnt = [0] * n
        self.t0 = [0] * n
        self.cd = [0] * n
        self.out_valid, self.out_vector = 0, 0

    def fire(self, v, k, thr, time):
        if not self.cnt[v]:
            return False
        if v == 0 or self.cd[v] or time == 0 or self.cnt[v] > thr:
            return True
        return k - self.t0[v] >= time * self.unit - 1

    def step(self, k, irq, ivc, ready, thr, time):
        """Edge k with inputs irq (vector or None), ivc ((vector, cd) or None), ready.
        Returns the vector sent at this edge, or None."""
        sent = self.out_valid and ready
        held = self.out_vector
        req = [self.fire(v, k, thr, time) and not (self.out_valid and held == v)
               for v in range(self.n)]
        if not self.out_valid or ready:
            order = list(range(held + 1, self.n)) + list(range(0, min(held + 1, self.n)))
            pick = next((v for v in order if req[v]), None)
            self.out_valid = int(pick is not None)
            if pick is not None:
                self.out_vector = pick
        if irq is not None and irq < self.n:
            if self.cnt[irq] == 0 or (sent and held == irq):
                self.cnt[irq], self.t0[irq] = 1, k
            elif self.cnt[irq] <= thr:
                self.cnt[irq] += 1
        if sent and irq != held:
            self.cnt[held] = 0
        if ivc is not None and 0 < ivc[0] < self.n:
            self.cd[ivc[0]] = ivc[1]
        return held if sent else None


# Testbench ---------------------------------------------------------------------------------------

class TB:
    def __init__(self, dut):
        self.dut = dut
        self.p = {**DEFAULTS, **core_params()}
        self.n = self.p["n_vectors"]
        self.unit = round(self.p["clk_freq_hz"]) // 10_000
        self.rng = random.Random(cocotb.RANDOM_SEED)
        dut._log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        self.model = Model(self.n, self.unit)
        self.k = 0                      # rising edges since reset
        self.msis = []                  # (edge, vector) taken on m_msi
        self.ready_prob = 1.0
        self.thr = self.time = 0
        cocotb.start_soon(Clock(dut.clk, 1, unit="us").start())
        for name in ["s_irq_valid", "s_irq_vector", "s_ivc_valid", "s_ivc_vector", "s_ivc_cd",
                     "agg_thr", "agg_time", "m_msi_ready"]:
            getattr(dut, name).value = 0
        dut.rst.value = 0

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def config(self, thr, time):
        """Set features 08h and let the registered delay settle (2 idle cycles)."""
        self.thr, self.time = thr, time
        self.dut.agg_thr.value = thr
        self.dut.agg_time.value = time
        await self.idle(2)

    async def cycle(self, irq=None, ivc=None):
        """One clock: check m_msi against the model, drive inputs for the next rising edge."""
        dut = self.dut
        await FallingEdge(dut.clk)
        valid, vector = int(dut.m_msi_valid.value), int(dut.m_msi_vector.value)
        m = self.model
        assert (valid, vector if valid else 0) == (m.out_valid,
                                                   m.out_vector if m.out_valid else 0), \
            f"edge {self.k}: m_msi valid/vector {valid}/{vector}, model " \
            f"{m.out_valid}/{m.out_vector}"
        ready = int(self.rng.random() < self.ready_prob)
        dut.m_msi_ready.value = ready
        dut.s_irq_valid.value = int(irq is not None)
        dut.s_irq_vector.value = irq or 0
        dut.s_ivc_valid.value = int(ivc is not None)
        dut.s_ivc_vector.value, dut.s_ivc_cd.value = ivc or (0, 0)
        self.k += 1
        sent = m.step(self.k, irq, ivc, ready, self.thr, self.time)
        if sent is not None:
            self.msis.append((self.k, sent))
        return self.k

    async def idle(self, cycles):
        for _ in range(cycles):
            await self.cycle()

    async def drain(self):
        """Idle until every pending vector has been sent (the timers included)."""
        limit = 4 * (255 * self.unit + self.n + 10)
        for _ in range(limit):
            await self.cycle()
            if not any(self.model.cnt) and not self.model.out_valid:
                await self.idle(2)
                return
        raise AssertionError("pending interrupts never sent")

    def sent(self, v):
        return [k for k, x in self.msis if x == v]


async def make_tb(dut):
    tb = TB(dut)
    await tb.reset()
    return tb


def coalescing_vectors(tb):
    return sorted({v for v in (1, 2, tb.n - 1) if 0 < v < tb.n})


# Tests -------------------------------------------------------------------------------------------

@cocotb.test()
async def test_threshold(dut):
    """thr=3: one MSI per 4 completions per vector, vectors interleaved and counted apart."""
    tb = await make_tb(dut)
    await tb.config(3, 255)
    vs = coalescing_vectors(tb)
    if not vs:
        return
    takes = {v: [] for v in vs}
    for _ in range(8):
        for v in vs:
            takes[v].append(await tb.cycle(irq=v))
    await tb.idle(len(vs) + 4)
    for v in vs:
        got = tb.sent(v)
        assert len(got) == 2, f"vector {v}: {len(got)} MSIs for 8 completions at thr=3"
        # Each MSI follows the 4th / 8th completion (2 edges of pipeline, round robin).
        for msi, fourth in zip(got, (takes[v][3], takes[v][7]), strict=True):
            assert fourth < msi <= fourth + 2 + len(vs), (v, msi, fourth)
    assert not any(tb.model.cnt)


@cocotb.test()
@cocotb.parametrize(time=[1, 3])
async def test_time(dut, time):
    """A single completion is sent exactly time * 100 us after it was taken (to the cycle:
    the MSI handshake is the (time * unit)-th rising edge after the one taking the request)."""
    tb = await make_tb(dut)
    await tb.config(255, time)
    for v in coalescing_vectors(tb):
        k = await tb.cycle(irq=v)
        await tb.drain()
        assert tb.sent(v) == [k + time * tb.unit], (v, k, tb.sent(v))
    # The timer starts at the first completion: more (below thr) do not extend it.
    vs = coalescing_vectors(tb)
    if vs:
        k = await tb.cycle(irq=vs[0])
        await tb.idle(tb.unit // 2)
        await tb.cycle(irq=vs[0])
        await tb.drain()
        assert tb.sent(vs[0])[-1] == k + time * tb.unit


@cocotb.test()
async def test_vector0_never_coalesced(dut):
    """The admin vector 0 gets one MSI per completion at the largest thr and time."""
    tb = await make_tb(dut)
    await tb.config(255, 255)
    ks = []
    for _ in range(5):
        ks.append(await tb.cycle(irq=0))
        await tb.idle(3)
    assert tb.sent(0) == [k + 2 for k in ks]


@cocotb.test()
async def test_cd_immediate(dut):
    """Feature 09h CD=1 makes a vector immediate; CD=0 coalesces it again."""
    tb = await make_tb(dut)
    await tb.config(255, 255)
    for v in coalescing_vectors(tb):
        await tb.cycle(ivc=(v, 1))
        ks = []
        for _ in range(3):
            ks.append(await tb.cycle(irq=v))
            await tb.idle(3)
        assert tb.sent(v) == [k + 2 for k in ks], v
        await tb.cycle(ivc=(v, 0))
        await tb.cycle(irq=v)
        await tb.idle(20)
        assert len(tb.sent(v)) == 3, f"vector {v} not coalesced after CD=0"
        await tb.cycle(ivc=(v, 1))       # CD=1 releases the pending one at once
        await tb.idle(4)
        assert len(tb.sent(v)) == 4


@cocotb.test()
@cocotb.parametrize(thr=[0, 7])
async def test_time0_immediate(dut, thr):
    """thr=0, time=0 (the defaults) and, by NVMe 1.4 5.21.1.8 ('0h corresponds to no
    delay'), time=0 at any thr: every completion is sent at once."""
    tb = await make_tb(dut)
    await tb.config(thr, 0)
    vs = [0, *coalescing_vectors(tb)]
    ks = {v: [] for v in vs}
    for _ in range(3):
        for v in vs:
            ks[v].append(await tb.cycle(irq=v))
            await tb.idle(3)
    for v in vs:
        assert tb.sent(v) == [k + 2 for k in ks[v]], v


@cocotb.test()
@cocotb.parametrize(ready_prob=[0.5, 0.1])
async def test_backpressure(dut, ready_prob):
    """Under m_msi backpressure nothing is lost: every completion is covered by an MSI of its
    vector taken after it, no MSI without a completion, and the total matches the model."""
    tb = await make_tb(dut)
    tb.ready_prob = ready_prob
    await tb.config(1, 1)
    vs = list(range(tb.n))
    last_irq, seen = {}, []
    for _ in range(600):
        v = tb.rng.choice(vs) if tb.rng.random() < 0.7 else None
        k = await tb.cycle(irq=v)
        if v is not None:
            last_irq[v] = k
            seen.append((k, v))
    await tb.drain()
    for v, k in last_irq.items():
        assert tb.sent(v) and tb.sent(v)[-1] >= k, f"vector {v}: completion at {k} uncovered"
    for v in vs:
        # Between consecutive MSIs of a vector (and before its first) there is a completion.
        prev = 0
        for msi in tb.sent(v):
            assert any(prev <= k < msi and x == v for k, x in seen), (v, prev, msi)
            prev = msi
    dut._log.info("%d completions, %d MSIs", len(seen), len(tb.msis))


@cocotb.test()
@cocotb.parametrize(ready_prob=[1.0, 0.3])
async def test_random(dut, ready_prob):
    """Seeded random requests, CD writes and feature 08h changes, checked cycle by cycle
    against the model."""
    tb = await make_tb(dut)
    tb.ready_prob = ready_prob
    for _ in range(4):
        await tb.config(tb.rng.choice([0, 1, 2, 5]), tb.rng.choice([0, 1, 2]))
        hot = [tb.rng.randrange(tb.n) for _ in range(4)]
        for _ in range(400):
            r = tb.rng.random()
            irq = tb.rng.choice(hot) if r < 0.5 else None
            ivc = None
            if tb.rng.random() < 0.03:
                ivc = (tb.rng.randrange(tb.n), tb.rng.randint(0, 1))
            await tb.cycle(irq=irq, ivc=ivc)
        await tb.drain()
    dut._log.info("%d MSIs", len(tb.msis))


# pytest entry ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_nvme_irq_coalesce():
    run(CORE.with_params(n_vectors=65, clk_freq_hz=TEST_CLK_HZ), __file__)


@pytest.mark.full
@pytest.mark.parametrize("n_vectors", [1, 65])
def test_nvme_irq_coalesce_sweep(n_vectors):
    run(CORE.with_params(n_vectors=n_vectors, clk_freq_hz=TEST_CLK_HZ), __file__)


@pytest.mark.smoke
@pytest.mark.parametrize("name,value", [("n_vectors", 0), ("n_vectors", 66),
                                        ("n_vectors", True), ("clk_freq_hz", 5e5),
                                        ("clk_freq_hz", 1.5e9), ("clk_freq_hz", 1234567)])
def test_bad_params(name, value):
    """A parameter out of its legal range stops elaboration with a message naming it."""
    with pytest.raises(ValueError, match=name):
        CORE.with_params(**{name: value}).instantiate()
