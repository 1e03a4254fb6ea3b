# SPDX-License-Identifier: BSD-2-Clause
"""System test of nvme_cq_post: CQEs reach a cocotbext-pcie root complex's memory by real TLPs.

RootComplex -> NvmeBridgeDevice -> PCIeSimPHY -> LitePCIeEndpoint -> NvmeCqPost. The testbench
drives the engine's configuration, head doorbell and completion streams directly and plays the
host driver: it reads the CQs in host memory by phase tag, like the Linux nvme driver, and rings
the head doorbell. Expected CQEs come from the NVMe CQE format written out here, not from RTL.
"""

import random
import struct

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Lock, RisingEdge
from cocotbext.axi.address_space import MemoryRegion
from cocotbext.pcie.core.tlp import TlpType
from pcie_tb import PcieSystemTB
from ssdlab_harness import LiteXCore, core_params, run

CORE = LiteXCore("tests.nvme.nvme_cq_post.nvme_cq_post_top:NvmeCqPostTop",
                 toplevel="nvme_cq_post_top")
DEFAULTS = {"data_width": 64, "n_cqs": 3}
HIGH_BASE = 0x1_2345_0000     # A host region above 4 GiB: exercises MWr64.


def cqe_bytes(sqid, sq_head, cid, status, dw0, phase):
    """The 16-byte CQE of NVMe 1.4 figure 124, little endian."""
    return struct.pack("<IIHHHH", dw0, 0, sq_head, sqid, cid, (status << 1) | phase)


# Testbench ---------------------------------------------------------------------------------------

class Queue:
    """Host view of one CQ: memory, size, where the host reads next and the phase it expects."""
    def __init__(self, cqid, region, base, qsize, iv, ien):
        self.cqid, self.region, self.base = cqid, region, base
        self.qsize, self.iv, self.ien = qsize, iv, ien
        self.head = 0
        self.phase = 1
        self.expected = []          # CQE fields in posting order, not yet seen by the host.
        self.seen = 0

    def entry(self, i):
        return bytes(self.region.mem[16 * i:16 * i + 16])


class TB(PcieSystemTB):
    def __init__(self, dut):
        super().__init__(dut)
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        for s in ["s_cfg", "s_head", "s_cpl"]:
            getattr(dut, f"{s}_valid").value = 0
        dut.m_irq_ready.value = 0
        self.locks = {s: Lock() for s in ["s_cfg", "s_head", "s_cpl"]}
        self.irqs = []              # vectors taken from m_irq
        self.irq_ready_prob = 1.0
        self.bad = {"bad_cqid": 0, "bad_head": 0, "bad_cfg": 0}
        self.queues = {}

    async def _monitor(self):
        dut = self.dut
        while True:
            ready = self.rng.random() < self.irq_ready_prob
            dut.m_irq_ready.value = int(ready)
            await RisingEdge(dut.clk)
            if ready and int(dut.m_irq_valid.value):
                self.irqs.append(int(dut.m_irq_vector.value))
            for name in self.bad:
                self.bad[name] += int(getattr(dut, name).value)

    def backpressure(self, on):
        """Idle cycles and backpressure on m_tlp, backpressure on m_irq."""
        self.bridge.tlp_sink.set_pause_generator(self._pauses() if on else None)
        self.irq_ready_prob = 0.3 if on else 1.0

    def _pauses(self):
        while True:
            yield self.rng.random() < 0.5

    async def send(self, name, **fields):
        """One transfer on stream `name`; returns when the DUT has taken it."""
        dut = self.dut
        async with self.locks[name]:
            for k, v in fields.items():
                getattr(dut, f"{name}_{k}").value = v
            getattr(dut, f"{name}_valid").value = 1
            while True:
                await RisingEdge(dut.clk)
                if int(getattr(dut, f"{name}_ready").value):
                    break
            getattr(dut, f"{name}_valid").value = 0

    def alloc(self, qsize, high=False):
        size = max(4096, 16 * (qsize + 1))
        if high:
            region = MemoryRegion(size)
            self.rc.mem_address_space.register_region(region, HIGH_BASE)
            return region, HIGH_BASE
        region = self.rc.mem_pool.alloc_region(size)
        return region, region.get_absolute_address(0)

    async def create(self, cqid, qsize, iv=0, ien=1, high=False):
        region, base = self.alloc(qsize, high)
        region.mem[:] = bytes(region.size)    # Phase 0 everywhere: nothing posted yet.
        q = Queue(cqid, region, base, qsize, iv, ien)
        self.queues[cqid] = q
        await self.send("s_cfg", cqid=cqid, base=base, qsize=qsize, iv=iv, ien=ien, enable=1)
        return q

    async def delete(self, cqid):
        await self.send("s_cfg", cqid=cqid, base=0, qsize=0, iv=0, ien=0, enable=0)

    def random_cpl(self, cqid):
        r = self.rng
        return dict(cqid=cqid, sqid=r.getrandbits(16), sq_head=r.getrandbits(16),
                    cid=r.getrandbits(16), status=r.getrandbits(15), dw0=r.getrandbits(32))

    async def post(self, cpl):
        if cpl["cqid"] in self.queues:
            self.queues[cpl["cqid"]].expected.append(cpl)
        await self.send("s_cpl", **cpl)

    def consume(self, q, check=True):
        """Host driver: take every new CQE of q by phase tag, checking each against the
        expected completions in order. Returns the number taken (head is not rung here)."""
        n = 0
        while True:
            raw = q.entry(q.head)
            if (raw[14] & 1) != q.phase:
                return n
            assert q.expected, f"CQ{q.cqid}: unexpected CQE at {q.head}: {raw.hex()}"
            c = q.expected.pop(0)
            exp = cqe_bytes(c["sqid"], c["sq_head"], c["cid"], c["status"], c["dw0"], q.phase)
            assert raw == exp, (f"CQ{q.cqid} entry {q.head} (CQE #{q.seen}): "
                                f"got {raw.hex()}, expected {exp.hex()}")
            q.seen += 1
            n += 1
            q.head += 1
            if q.head > q.qsize:
                q.head, q.phase = 0, q.phase ^ 1

    async def ring_head(self, q):
        await self.send("s_head", cqid=q.cqid, head=q.head)

    async def wait_cycles_for(self, cond, limit=2000):
        for _ in range(limit):
            if cond():
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError("timeout waiting for the DUT")

    def check_tlps(self):
        assert not self.bridge.malformed, f"malformed TLPs from the DUT: {self.bridge.malformed}"
        for t in self.bridge.from_dut:
            assert t.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64), f"TLP {t!r}"
            assert t.length == 4 and t.first_be == 0xF and t.last_be == 0xF, f"TLP {t!r}"
            assert t.requester_id == self.bridge.function.pcie_id
            addr = t.address
            assert addr % 16 == 0
            assert (addr >= 2**32) == (t.fmt_type == TlpType.MEM_WRITE_64), \
                f"MWr format for address 0x{addr:x}: {t!r}"


async def make_tb(dut):
    tb = TB(dut)
    await tb.init()
    return tb


# Tests -------------------------------------------------------------------------------------------

@cocotb.test(timeout_time=500, timeout_unit="us")
@cocotb.parametrize(backpressure=[False, True])
async def test_cqe_fields(dut, backpressure):
    """CQEs land at base + tail * 16 with every field right and phase 1, for the admin CQ and
    I/O CQs (one above 4 GiB); one interrupt per CQE with the queue's vector, none for ien=0."""
    tb = await make_tb(dut)
    tb.backpressure(backpressure)
    n_cqs = tb.p["n_cqs"]
    queues = [await tb.create(0, 31, iv=0, ien=1)]
    if n_cqs > 1:
        queues.append(await tb.create(n_cqs - 1, 15, iv=5, ien=1, high=True))
    if n_cqs > 2:
        queues.append(await tb.create(1, 7, iv=9, ien=0))
    posted = {q.cqid: [] for q in queues}
    for i in range(12):
        q = queues[i % len(queues)]
        cpl = tb.random_cpl(q.cqid)
        posted[q.cqid].append(cpl)
        await tb.post(cpl)
    n_irq = sum(len(posted[q.cqid]) for q in queues if q.ien)
    await tb.wait_cycles_for(lambda: len(tb.irqs) >= n_irq
                             and len(tb.bridge.from_dut) >= 12)
    await ClockCycles(dut.clk, 50)
    for q in queues:
        for i, c in enumerate(posted[q.cqid]):
            exp = cqe_bytes(c["sqid"], c["sq_head"], c["cid"], c["status"], c["dw0"], 1)
            assert q.entry(i) == exp, f"CQ{q.cqid}[{i}] {q.entry(i).hex()} != {exp.hex()}"
        assert q.entry(len(posted[q.cqid])) == bytes(16), f"CQ{q.cqid}: write past the tail"
    exp_irqs = [q.iv for i in range(12) for q in [queues[i % len(queues)]] if q.ien]
    assert tb.irqs == exp_irqs, f"interrupt vectors {tb.irqs}, expected {exp_irqs}"
    addrs = sorted(t.address for t in tb.bridge.from_dut)
    exp_addrs = sorted(q.base + 16 * i for q in queues for i in range(len(posted[q.cqid])))
    assert addrs == exp_addrs, "MWr addresses"
    tb.check_tlps()
    assert tb.bad == {"bad_cqid": 0, "bad_head": 0, "bad_cfg": 0}


@cocotb.test(timeout_time=500, timeout_unit="us")
async def test_wrap_phase(dut):
    """A 4-entry CQ through 3+ passes: the phase flips to 0 on the first wrap and back; the host
    reading by phase tag sees every CQE exactly once, in order."""
    tb = await make_tb(dut)
    q = await tb.create(0, 3, iv=2)
    total = 0
    for rnd in range(7):
        burst = 1 + rnd % 3                # <= 3: never more than the queue holds.
        for _ in range(burst):
            await tb.post(tb.random_cpl(0))
        total += burst
        await tb.wait_cycles_for(lambda n=total: len(tb.irqs) >= n)
        await ClockCycles(dut.clk, 20)
        phase_before = q.phase
        assert tb.consume(q) == burst
        assert q.expected == []
        await tb.ring_head(q)
        if total - burst < 4 <= total:      # This burst crossed the end of the ring.
            assert phase_before == 1 and q.phase == 0, "phase did not flip on the first wrap"
            assert q.entry(0)[14] & 1 == 0, "entry 0 of the second pass carries phase 1"
    assert q.seen == total == 13            # 3 passes and a bit of the 4-entry ring.
    assert tb.irqs == [2] * total
    tb.check_tlps()


@cocotb.test(timeout_time=500, timeout_unit="us")
async def test_full(dut):
    """A full CQ (tail + 1 == head) holds the next completion until a head doorbell frees a
    slot; the unconsumed entries are never overwritten while it waits."""
    tb = await make_tb(dut)
    q = await tb.create(0, 3, iv=1)
    for _ in range(3):
        await tb.post(tb.random_cpl(0))
    await tb.wait_cycles_for(lambda: len(tb.bridge.from_dut) == 3)
    snapshot = bytes(q.region.mem[:64])

    # The 4th completion must wait: the queue holds 3 unconsumed entries.
    cpl4 = tb.random_cpl(0)
    q.expected.append(cpl4)
    task = cocotb.start_soon(tb.send("s_cpl", **cpl4))
    await ClockCycles(dut.clk, 300)
    assert not task.done(), "a completion for a full CQ was accepted"
    assert len(tb.bridge.from_dut) == 3 and bytes(q.region.mem[:64]) == snapshot, \
        "host memory changed while the CQ was full"

    # Host consumes one entry: slot 3 may be written, then the queue is full again.
    raw0 = q.entry(0)
    assert tb.consume(q) == 3               # Reads all 3, but rings head = 1 only.
    await tb.send("s_head", cqid=0, head=1)
    await tb.wait_cycles_for(task.done)
    await tb.wait_cycles_for(lambda: len(tb.bridge.from_dut) == 4)
    assert q.entry(0) == raw0, "entry 0 changed"
    cpl5 = tb.random_cpl(0)
    q.expected.append(cpl5)
    task = cocotb.start_soon(tb.send("s_cpl", **cpl5))
    await ClockCycles(dut.clk, 300)
    assert not task.done() and len(tb.bridge.from_dut) == 4, "CQ full after one head moved"
    assert q.entry(0) == raw0 and q.entry(1) == snapshot[16:32], "overwrite while full"
    await tb.send("s_head", cqid=0, head=3)
    await tb.wait_cycles_for(task.done)
    await tb.wait_cycles_for(lambda: len(tb.bridge.from_dut) == 5)
    await ClockCycles(dut.clk, 20)
    assert tb.consume(q) == 2 and q.expected == [] and q.phase == 0
    assert q.entry(1) == snapshot[16:32], "entry 1 overwritten before the host freed it"
    tb.check_tlps()
    assert tb.bad["bad_head"] == 0


@cocotb.test(timeout_time=500, timeout_unit="us")
async def test_bad_cqid(dut):
    """Completions and head doorbells for a disabled or non-existent cqid are dropped and pulse
    bad_cqid; a deleted queue stops posting; a head beyond qsize pulses bad_head; a bad
    configuration pulses bad_cfg. The engine keeps working for the good queues."""
    tb = await make_tb(dut)
    n_cqs = tb.p["n_cqs"]
    q = await tb.create(0, 7, iv=3)
    await tb.post(tb.random_cpl(0))
    bad_ids = sorted({n_cqs - 1, n_cqs, 0xFFFF} - {0})
    for cqid in bad_ids:                    # Never created / beyond n_cqs.
        await tb.send("s_cpl", **tb.random_cpl(cqid))
        await tb.send("s_head", cqid=cqid, head=0)
    await tb.post(tb.random_cpl(0))
    await tb.wait_cycles_for(lambda: len(tb.irqs) >= 2)
    await ClockCycles(dut.clk, 20)
    assert tb.bad["bad_cqid"] == 2 * len(bad_ids), f"bad_cqid pulses {tb.bad}"
    assert len(tb.bridge.from_dut) == 2 and tb.consume(q) == 2

    await tb.send("s_head", cqid=0, head=8)          # qsize 7: head 8 is out of range.
    await tb.send("s_head", cqid=0, head=2)
    await tb.send("s_cfg", cqid=n_cqs, base=0x1000, qsize=3, iv=0, ien=0, enable=1)
    await tb.send("s_cfg", cqid=0, base=0x1000, qsize=0, iv=0, ien=0, enable=1)
    await ClockCycles(dut.clk, 5)
    assert tb.bad["bad_head"] == 1 and tb.bad["bad_cfg"] == 2, f"{tb.bad}"

    await tb.delete(0)
    await tb.send("s_cpl", **tb.random_cpl(0))
    await ClockCycles(dut.clk, 50)
    assert tb.bad["bad_cqid"] == 2 * len(bad_ids) + 1
    assert len(tb.bridge.from_dut) == 2 and len(tb.irqs) == 2, "deleted CQ still posts"

    # Re-created: tail 0, phase 1 again.
    q = await tb.create(0, 7, iv=4)
    await tb.post(tb.random_cpl(0))
    await tb.wait_cycles_for(lambda: len(tb.irqs) >= 3)
    await ClockCycles(dut.clk, 20)
    assert tb.consume(q) == 1 and tb.irqs[-1] == 4
    tb.check_tlps()


@cocotb.test(timeout_time=1, timeout_unit="ms")   # 65 CQs need ~0.2 ms.
@cocotb.parametrize(backpressure=[False, True])
async def test_random(dut, backpressure):
    """Random completions across every queue, host consumers with random reaction times and
    doorbell batching; every CQE is seen exactly once, in order, per queue; one interrupt per
    CQE of an ien queue."""
    tb = await make_tb(dut)
    tb.backpressure(backpressure)
    rng = tb.rng
    n_cqs = tb.p["n_cqs"]
    queues = []
    for cqid in range(n_cqs):
        queues.append(await tb.create(cqid, rng.choice([1, 2, 3, 7, 63]), iv=rng.randrange(32),
                                      ien=int(rng.random() < 0.8), high=(cqid == 1)))
    n_per_q = 40
    total = n_per_q * n_cqs

    async def host(q):
        rung = 0
        while q.seen < n_per_q:
            await ClockCycles(tb.dut.clk, rng.randrange(1, 60))
            tb.consume(q)
            if q.head != rung and rng.random() < 0.7:    # Sometimes batch the doorbell.
                await tb.ring_head(q)
                rung = q.head
        await tb.ring_head(q)

    hosts = [cocotb.start_soon(host(q)) for q in queues]
    order = [q for q in queues for _ in range(n_per_q)]
    rng.shuffle(order)
    for q in order:
        await tb.post(tb.random_cpl(q.cqid))
    for h in hosts:
        await h
    assert all(q.seen == n_per_q and q.expected == [] for q in queues)
    await ClockCycles(dut.clk, 50)
    exp_irqs = sorted(q.iv for q in order if q.ien)
    assert sorted(tb.irqs) == exp_irqs, "interrupt vectors"
    assert len(tb.bridge.from_dut) == total
    tb.check_tlps()
    assert tb.bad == {"bad_cqid": 0, "bad_head": 0, "bad_cfg": 0}


# pytest entry ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_nvme_cq_post():
    run(CORE.with_params(**DEFAULTS), __file__)


@pytest.mark.full
@pytest.mark.parametrize("n_cqs", [1, 65])
def test_nvme_cq_post_sweep(n_cqs):
    run(CORE.with_params(**{**DEFAULTS, "n_cqs": n_cqs}), __file__)
