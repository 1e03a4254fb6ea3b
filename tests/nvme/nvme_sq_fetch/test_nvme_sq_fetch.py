# SPDX-License-Identifier: BSD-2-Clause
"""System test of nvme_sq_fetch: SQEs are read from a cocotbext-pcie root complex's memory by
real TLPs.

RootComplex -> NvmeBridgeDevice -> PCIeSimPHY -> LitePCIeEndpoint -> NvmeSqFetch. The testbench
plays the host driver: it writes SQEs into SQs in host memory (NVMe 1.4 SQE layout, CID and an
opcode pattern in DW0), rings the tail doorbells on `s_tail`, and takes the fetched SQEs from
`m_sqe` with optional backpressure, checking each against what it wrote, in order, with the
SQ head the CQE will report. The read requests the host sees are checked against the rules
(burst size, queue wrap, 4 KiB boundary, max read request size, MRd32/MRd64 by address).
"""

import random
import struct

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Lock, RisingEdge
from cocotbext.axi.address_space import MemoryRegion
from cocotbext.pcie.core.tlp import TlpType
from pcie_tb import CplFault, PcieSystemTB
from ssdlab_harness import LiteXCore, core_params, run

CORE = LiteXCore("tests.nvme.nvme_sq_fetch.nvme_sq_fetch_top:NvmeSqFetchTop",
                 toplevel="nvme_sq_fetch_top")
DEFAULTS = {"data_width": 64, "n_sqs": 3, "max_burst": 4}
HIGH_BASE = 0x1_2345_0000     # A host region above 4 GiB: exercises MRd64.
UNMAPPED  = 0x80_0000_0000    # No host memory here: reads complete with UR.
SQE_BYTES = 64
CPL_TIMEOUT_CYCLES = 4000     # NvmeSqFetchTop's default cpl_timeout_cycles


def sqe_bytes(sqid, cid, opcode, rest):
    """A 64-byte SQE (NVMe 1.4 figure 104): DW0 opcode 7:0, CID 31:16; DW1 NSID (the sqid here
    so that a misrouted entry shows); DW2..15 `rest` (56 bytes)."""
    return struct.pack("<II", opcode | (cid << 16), 0x5A00_0000 | sqid) + rest


# Testbench ---------------------------------------------------------------------------------------

class Queue:
    """Host view of one SQ: memory, size, host tail, what was submitted and not yet fetched."""
    def __init__(self, sqid, region, offset, base, qsize):
        self.sqid, self.region, self.offset, self.base, self.qsize = \
            sqid, region, offset, base, qsize
        self.tail = 0
        self.head = 0               # As last reported by the DUT (sq_head of the last SQE).
        self.cid = 0
        self.expected = []          # (index, bytes) in submission order, not yet fetched.
        self.fetched = 0

    def free(self):
        """Slots the host may still fill (one stays empty: full != empty)."""
        return (self.head - self.tail - 1) % (self.qsize + 1)


class TB(PcieSystemTB):
    def __init__(self, dut):
        super().__init__(dut)
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        for s in ["s_cfg", "s_tail"]:
            getattr(dut, f"{s}_valid").value = 0
        dut.m_sqe_ready.value = 0
        self.locks = {s: Lock() for s in ["s_cfg", "s_tail"]}
        self.sqe_ready_prob = 1.0
        self.bad = {"bad_sqid": 0, "bad_tail": 0, "bad_cfg": 0, "fetch_err": 0}
        self.queues = {}
        self.all_queues = []        # every queue ever created, for mapping read addresses
        self.received = []          # (sqid, sq_head, sqe bytes) in arrival order

    async def _monitor(self):
        """Take SQEs from m_sqe (random ready) and check each against the host's queue."""
        dut = self.dut
        while True:
            ready = self.rng.random() < self.sqe_ready_prob
            dut.m_sqe_ready.value = int(ready)
            await RisingEdge(dut.clk)
            if ready and int(dut.m_sqe_valid.value):
                sqid = int(dut.m_sqe_sqid.value)
                sq_head = int(dut.m_sqe_sq_head.value)
                raw = int(dut.m_sqe_sqe.value).to_bytes(SQE_BYTES, "little")
                self.received.append((sqid, sq_head, raw))
                self._check_sqe(sqid, sq_head, raw)
            for name in self.bad:
                self.bad[name] += int(getattr(dut, name).value)

    def _check_sqe(self, sqid, sq_head, raw):
        q = self.queues.get(sqid)
        assert q is not None, f"SQE for unknown sqid {sqid}: {raw.hex()}"
        assert q.expected, f"SQ{sqid}: unexpected SQE {raw.hex()}"
        index, exp = q.expected.pop(0)
        assert raw == exp, (f"SQ{sqid} entry {index} (SQE #{q.fetched}): got {raw.hex()}, "
                            f"expected {exp.hex()}")
        exp_head = (index + 1) % (q.qsize + 1)
        assert sq_head == exp_head, f"SQ{sqid} entry {index}: sq_head {sq_head} != {exp_head}"
        q.head = sq_head
        q.fetched += 1

    def backpressure(self, on):
        """Idle cycles and backpressure on m_tlp and s_tlp, backpressure on m_sqe."""
        self.bridge.tlp_sink.set_pause_generator(self._pauses() if on else None)
        self.bridge.tlp_source.set_pause_generator(self._pauses() if on else None)
        self.sqe_ready_prob = 0.3 if on else 1.0

    def _pauses(self):
        while True:
            yield self.rng.random() < 0.5

    def set_mrrs(self, code):
        """Max Read Request Size, as the host driver would program Device Control."""
        self.bridge.function.pcie_cap.max_read_request_size = code

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

    def alloc(self, qsize, high=False, offset=0):
        """Host memory for a queue; `offset` bytes into the region (64-byte multiple) lets a
        queue straddle a 4 KiB boundary."""
        size = 4096
        while size < offset + SQE_BYTES * (qsize + 1):
            size *= 2
        if high:
            region = MemoryRegion(size)
            self.rc.mem_address_space.register_region(region, HIGH_BASE)
            return region, HIGH_BASE + offset
        region = self.rc.mem_pool.alloc_region(size)
        return region, region.get_absolute_address(0) + offset

    async def create(self, sqid, qsize, high=False, offset=0, base=None):
        if base is None:
            region, base = self.alloc(qsize, high, offset)
        else:
            region = None
        q = Queue(sqid, region, offset, base, qsize)
        self.queues[sqid] = q
        self.all_queues.append(q)
        await self.send("s_cfg", sqid=sqid, base=base, qsize=qsize, enable=1)
        return q

    async def delete(self, sqid):
        await self.send("s_cfg", sqid=sqid, base=0, qsize=0, enable=0)

    def write_sqes(self, q, count):
        """Host driver: write `count` SQEs at the tail (no doorbell yet)."""
        assert count <= q.free(), f"SQ{q.sqid}: {count} SQEs do not fit"
        for _ in range(count):
            opcode = (q.cid * 7 + q.sqid) & 0xFF
            raw = sqe_bytes(q.sqid, q.cid, opcode, self.rng.randbytes(56))
            at = q.offset + SQE_BYTES * q.tail
            q.region.mem[at:at + SQE_BYTES] = raw
            q.expected.append((q.tail, raw))
            q.cid = (q.cid + 1) & 0xFFFF
            q.tail = (q.tail + 1) % (q.qsize + 1)

    async def ring_tail(self, q):
        await self.send("s_tail", sqid=q.sqid, tail=q.tail)

    async def submit(self, q, count):
        self.write_sqes(q, count)
        await self.ring_tail(q)

    async def wait_cycles_for(self, cond, limit=5000):
        for _ in range(limit):
            if cond():
                return
            await RisingEdge(self.dut.clk)
        raise AssertionError("timeout waiting for the DUT")

    async def drain(self, queues=None, limit=20000):
        queues = list(self.queues.values()) if queues is None else queues
        await self.wait_cycles_for(lambda: all(not q.expected for q in queues), limit)

    def reads(self):
        """(queue, first entry index, entries) of every read request the DUT sent, in order."""
        out = []
        for t in self.bridge.from_dut:
            q = next((q for q in reversed(self.all_queues)
                      if q.base <= t.address < q.base + SQE_BYTES * (q.qsize + 1)), None)
            assert q is not None, f"read outside every SQ: {t!r}"
            out.append((q, (t.address - q.base) // SQE_BYTES, t.length // 16))
        return out

    def check_tlps(self, mrrs=512):
        """Every TLP from the DUT is a well-formed read of whole SQEs within one pass of one
        queue, no larger than max_burst and the max read request size, not crossing 4 KiB."""
        assert not self.bridge.malformed, f"malformed TLPs from the DUT: {self.bridge.malformed}"
        max_burst = self.p["max_burst"]
        for t in self.bridge.from_dut:
            assert t.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64), f"TLP {t!r}"
            assert t.first_be == 0xF and t.last_be == 0xF, f"TLP {t!r}"
            assert t.requester_id == self.bridge.function.pcie_id
            addr = t.address
            assert addr % SQE_BYTES == 0 and t.length % 16 == 0, f"TLP {t!r}"
            assert 1 <= t.length // 16 <= min(max_burst, mrrs // SQE_BYTES), f"burst {t!r}"
            assert addr // 4096 == (addr + 4 * t.length - 1) // 4096, f"crosses 4 KiB: {t!r}"
            assert (addr >= 2**32) == (t.fmt_type == TlpType.MEM_READ_64), \
                f"MRd format for address 0x{addr:x}: {t!r}"
        for q, first, n in self.reads():
            assert first + n <= q.qsize + 1, f"SQ{q.sqid}: read of {n} at {first} crosses the wrap"


async def make_tb(dut):
    tb = TB(dut)
    await tb.init()
    return tb


# Tests -------------------------------------------------------------------------------------------

@cocotb.test(timeout_time=1, timeout_unit="ms")
@cocotb.parametrize(backpressure=[False, True])
async def test_fetch(dut, backpressure):
    """SQEs of the admin SQ and I/O SQs (one above 4 GiB, one straddling a 4 KiB boundary)
    arrive once each, in order per SQ, with the right sq_head; reads are bursts of
    min(pending, max_burst, up to the wrap, up to 4 KiB) at the expected addresses."""
    tb = await make_tb(dut)
    tb.backpressure(backpressure)
    n_sqs, max_burst = tb.p["n_sqs"], tb.p["max_burst"]
    queues = [await tb.create(0, 31)]
    if n_sqs > 1:                          # 3 entries before a 4 KiB boundary, above 4 GiB.
        queues.append(await tb.create(n_sqs - 1, 15, high=True, offset=4096 - 3 * SQE_BYTES))
    if n_sqs > 2:
        queues.append(await tb.create(1, 7))
    for rnd, count in enumerate([1, 5, 2, 7]):
        for q in queues:
            await tb.submit(q, min(count, q.qsize - 1) if rnd else count)
        await tb.drain()
    assert len(tb.received) == sum(q.fetched for q in queues)
    tb.check_tlps()
    if not backpressure:
        # Unloaded, each doorbell's entries are read in ceil(n / limit) requests, each as large
        # as the rules allow: check the exact request list of the admin SQ.
        exp, head = [], 0
        for count in [1, 5, 2, 7]:
            left = count
            while left:
                n = min(left, max_burst, 32 - head, 64 - (head % 64))
                exp.append((head, n))
                head, left = (head + n) % 32, left - n
        got = [(first, n) for q, first, n in tb.reads() if q.sqid == 0]
        assert got == exp, f"SQ0 reads {got}, expected {exp}"
    if n_sqs > 1:
        high = [(first, n) for q, first, n in tb.reads() if q.sqid == n_sqs - 1]
        assert high[0] == (0, min(1, max_burst)) and \
            all(first + n <= 3 or first >= 3 for first, n in high), \
            f"SQ{n_sqs - 1} reads {high} cross the 4 KiB boundary after entry 2"
    assert tb.bad == {"bad_sqid": 0, "bad_tail": 0, "bad_cfg": 0, "fetch_err": 0}


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def test_wrap(dut):
    """A 6-entry SQ through several passes: every burst stops at the wrap point and the next
    one starts at entry 0; sq_head wraps from qsize to 0."""
    tb = await make_tb(dut)
    max_burst = tb.p["max_burst"]
    q = await tb.create(0, 5)
    total = 0
    for rnd in range(8):
        count = 1 + (rnd * 3) % 5          # <= 5: never more than the queue holds.
        await tb.submit(q, count)
        total += count
        await tb.drain()
    assert q.fetched == total and total > 3 * 6
    tb.check_tlps()
    reads = [(first, n) for _, first, n in tb.reads()]
    wraps = sum(1 for first, n in reads if first + n == 6)
    assert wraps >= 3, f"reads {reads}: expected bursts ending at the wrap point"
    assert all(n <= max_burst for _, n in reads)
    heads = [h for _, h, _ in tb.received]
    assert heads.count(0) >= 3, "sq_head never wrapped to 0"


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def test_round_robin(dut):
    """Two SQs with many entries each: their read requests alternate until one runs dry."""
    tb = await make_tb(dut)
    n_sqs, max_burst = tb.p["n_sqs"], tb.p["max_burst"]
    if n_sqs < 2:
        tb.log.info("n_sqs = 1: nothing to arbitrate")
        return
    a = await tb.create(0, 63)
    b = await tb.create(n_sqs - 1, 63, high=True)
    tb.sqe_ready_prob = 0.0                # Hold m_sqe: one burst of A fills the FIFO.
    await ClockCycles(dut.clk, 2)
    tb.write_sqes(a, 6 * max_burst)
    tb.write_sqes(b, 4 * max_burst)
    await tb.ring_tail(a)
    await tb.ring_tail(b)
    await ClockCycles(dut.clk, 200)
    assert len(tb.bridge.from_dut) == 1, "a read was issued without room for its data"
    tb.sqe_ready_prob = 1.0
    await tb.drain()
    order = [q.sqid for q, _, _ in tb.reads()]
    exp = [a.sqid, b.sqid] * 4 + [a.sqid] * 2
    assert order == exp, f"read order {order}, expected {exp}"
    tb.check_tlps()


@cocotb.test(timeout_time=2, timeout_unit="ms")
@cocotb.parametrize(backpressure=[False, True])
async def test_random(dut, backpressure):
    """Random submissions on every SQ, random doorbell batching, random m_sqe ready, split
    completions; with backpressure the max read request size is 128 bytes (2 SQEs). Every SQE
    is seen exactly once, in order per SQ, with the right sq_head."""
    tb = await make_tb(dut)
    tb.backpressure(backpressure)
    mrrs = 512
    if backpressure:
        tb.set_mrrs(0)                     # 128 bytes
        tb.rc.split_on_all_rcb = True      # 64-byte completions
        mrrs = 128
    await ClockCycles(dut.clk, 5)
    rng = tb.rng
    n_sqs = tb.p["n_sqs"]
    queues = []
    for sqid in range(n_sqs):
        qsize = rng.choice([1, 2, 5, 7, 63])
        queues.append(await tb.create(sqid, qsize, high=(sqid == 1),
                                      offset=SQE_BYTES * rng.randrange(0, 64 - qsize)))
    n_per_q = 40

    async def host(q):
        submitted = 0
        while submitted < n_per_q:
            await ClockCycles(tb.dut.clk, rng.randrange(1, 40))
            count = min(q.free(), n_per_q - submitted, rng.randrange(1, 6))
            if count:
                await tb.submit(q, count)
                submitted += count

    hosts = [cocotb.start_soon(host(q)) for q in queues]
    for h in hosts:
        await h
    await tb.drain(limit=50000)
    assert all(q.fetched == n_per_q for q in queues)
    assert len(tb.received) == n_per_q * n_sqs
    tb.check_tlps(mrrs)
    assert tb.bad == {"bad_sqid": 0, "bad_tail": 0, "bad_cfg": 0, "fetch_err": 0}


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def test_bad(dut):
    """Tail doorbells for a disabled or non-existent sqid pulse bad_sqid, tails beyond qsize
    pulse bad_tail, bad configurations pulse bad_cfg; all are dropped, nothing is read for
    them, and the engine keeps working. A deleted SQ stops fetching; re-created, it restarts
    at entry 0."""
    tb = await make_tb(dut)
    n_sqs = tb.p["n_sqs"]
    q = await tb.create(0, 7)
    await tb.submit(q, 2)
    bad_ids = sorted({n_sqs - 1, n_sqs, 0xFFFF} - {0})
    for sqid in bad_ids:                    # Never created / beyond n_sqs.
        await tb.send("s_tail", sqid=sqid, tail=1)
    await tb.send("s_tail", sqid=0, tail=8)            # qsize 7: tail 8 is out of range.
    await tb.send("s_tail", sqid=0, tail=0xFFFF)
    await tb.drain()
    await ClockCycles(dut.clk, 50)
    assert tb.bad["bad_sqid"] == len(bad_ids) and tb.bad["bad_tail"] == 2, f"{tb.bad}"
    assert q.fetched == 2 and all(r[0] is q for r in tb.reads())

    await tb.send("s_cfg", sqid=n_sqs, base=0x1000, qsize=3, enable=1)
    await tb.send("s_cfg", sqid=0, base=0x1000, qsize=0, enable=1)
    await ClockCycles(dut.clk, 5)
    assert tb.bad["bad_cfg"] == 2, f"{tb.bad}"
    await tb.submit(q, 1)                   # The queue is unchanged by the refused creates.
    await tb.drain()

    n_reads = len(tb.bridge.from_dut)
    await tb.delete(0)
    tb.write_sqes(q, 2)
    await tb.ring_tail(q)
    await ClockCycles(dut.clk, 200)
    assert tb.bad["bad_sqid"] == len(bad_ids) + 1
    assert len(tb.bridge.from_dut) == n_reads, "deleted SQ still fetches"

    q = await tb.create(0, 7)               # Re-created: head and tail 0 again.
    await tb.submit(q, 3)
    await tb.drain()
    assert [first for r, first, _ in tb.reads() if r is q][0] == 0
    assert [h for _, h, _ in tb.received[-3:]] == [1, 2, 3]
    tb.check_tlps()
    assert tb.bad["fetch_err"] == 0


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def test_fetch_err(dut):
    """A read that completes with Unsupported Request (no host memory there) pulses fetch_err
    once, delivers nothing and stops that SQ: later doorbells read nothing. The other SQs keep
    working; re-created at a good address, the SQ works again."""
    tb = await make_tb(dut)
    n_sqs = tb.p["n_sqs"]
    good = await tb.create(0, 15) if n_sqs > 1 else None
    bad_id = n_sqs - 1
    await tb.create(bad_id, 15, base=UNMAPPED)
    await tb.send("s_tail", sqid=bad_id, tail=3)
    await tb.wait_cycles_for(lambda: tb.bad["fetch_err"] == 1)
    if good is not None:
        await tb.submit(good, 5)
        await tb.drain()
    await tb.send("s_tail", sqid=bad_id, tail=6)
    await ClockCycles(dut.clk, 200)
    assert tb.bad["fetch_err"] == 1, f"{tb.bad}"
    bad_reads = [t for t in tb.bridge.from_dut if t.address >= UNMAPPED]
    assert len(bad_reads) == 1, f"stopped SQ read again: {bad_reads}"
    assert all(sqid != bad_id for sqid, _, _ in tb.received), "SQE from a failed read"

    q = await tb.create(bad_id, 15)
    await tb.submit(q, 4)
    await tb.drain()
    assert q.fetched == 4
    assert tb.bad["bad_sqid"] == 0 and tb.bad["bad_tail"] == 0


@cocotb.test(timeout_time=1, timeout_unit="ms")
@cocotb.parametrize(kind=["poison", "timeout"])
async def test_cpl_fault(dut, kind):
    """A poisoned completion (EP set on the CplD of an SQ read) or a read never answered (the
    completion timeout, cpl_timeout_cycles) is a fetch error: fetch_err pulses once, nothing
    of that read is delivered and the SQ stops. The other SQs keep working; re-created, the SQ
    works again. A timed-out read's completion delivered late is dropped (an Unexpected
    Completion): the SQEs fetched after it are the right ones."""
    tb = await make_tb(dut)
    n_sqs = tb.p["n_sqs"]
    good = await tb.create(0, 15) if n_sqs > 1 else None
    bad_id = n_sqs - 1
    q = await tb.create(bad_id, 15)
    fault = CplFault(tb.bridge, "poison" if kind == "poison" else "hold")
    tb.write_sqes(q, 3)
    q.expected.clear()                      # lost with the failed read
    await tb.ring_tail(q)
    await tb.wait_cycles_for(lambda: tb.bad["fetch_err"] == 1, limit=6000)
    assert fault.hit >= 1 and fault.tag == -1, f"fault hit {fault.hit} completions"
    if kind == "timeout":
        assert len(tb.bridge.from_dut) == 1 and fault.held, "the read was answered"
    if good is not None:
        await tb.submit(good, 5)
        await tb.drain()
    assert tb.bad["fetch_err"] == 1, f"{tb.bad}"
    assert all(sqid != bad_id for sqid, _, _ in tb.received), "SQE from a failed read"

    q = await tb.create(bad_id, 15)
    n_reads = len(tb.bridge.from_dut)
    if kind == "timeout":
        await fault.release()               # late: must not land in a later read
        await ClockCycles(dut.clk, 3 * CPL_TIMEOUT_CYCLES)     # past any quarantine
    for _ in range(4):                      # 4 reads at least: every tag used again
        tb.write_sqes(q, 4)
        await tb.ring_tail(q)
        await tb.drain()
    assert q.fetched == 16
    later = {t.tag for t in tb.bridge.from_dut[n_reads:]}
    assert later == set(range(4)), f"tags of the later reads {later}: one was never freed"
    assert tb.bad == {"bad_sqid": 0, "bad_tail": 0, "bad_cfg": 0, "fetch_err": 1}, f"{tb.bad}"
    tb.check_tlps()


# pytest entry ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_nvme_sq_fetch():
    run(CORE.with_params(**DEFAULTS), __file__)


@pytest.mark.full
@pytest.mark.parametrize("n_sqs,max_burst", [(1, 1), (2, 8), (65, 3)])
def test_nvme_sq_fetch_sweep(n_sqs, max_burst):
    run(CORE.with_params(**{**DEFAULTS, "n_sqs": n_sqs, "max_burst": max_burst}), __file__)
