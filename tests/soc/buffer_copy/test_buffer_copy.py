# SPDX-License-Identifier: BSD-2-Clause
"""soc/buffer_copy.py: BufferCopy's copy, fill and XOR jobs against a byte-array model.

The memory is preloaded with random words, then random jobs are queued back to back through
the CSR fields (so the job queue fills: checked), each job's kind, addresses and size random:
copy (dst = src), fill (dst = pattern; xor set at random, which fill ignores) and xor
(dst ^= src in place), sizes from 0 bytes up, src and dst of a job not overlapping but jobs
overlapping each other freely (a later job reads what an earlier one wrote). Ignored fields
(src and xor of a fill, pattern of a copy or xor) carry random values. When `done` has counted
every job (and no more), every word is read back and compared with the model: a wrong XOR, a
word lost or doubled by the data FIFOs' flow control, a pattern not replicated across a wide
word, a job applied out of order all fail.

With `noise`, the testbench's own reader and writer compete with the engine's ports all the
while (writes to a scratch region no job touches), so the round robin holds the engine's
reads and writes back at random. `test_rate` checks the engine's speed on idle ports: a copy
or fill moves a word a cycle, an XOR a word every two (the readers share the read port).
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from ssdlab_harness import LiteXCore, core_params, run

from soc.buffer_copy import BufferCopy
from soc.buffer_memory import BufferMemory
from tests.soc.buffer_memory.test_buffer_memory import transfer

CORE = LiteXCore("tests.soc.buffer_copy.buffer_copy_top:BufferCopyTop",
                 toplevel="buffer_copy_top")
DEFAULTS = {"data_width": 64, "size": 16384, "depth": 16}
N_JOBS = 80
MAX_WORDS = 40             # words per job, at most
SCRATCH = 8                # the last 1/SCRATCH of the memory: the noise writer's
ROOM_LIMIT = 50 * MAX_WORDS     # cycles a push may wait for room (a job's time, many times)


class TB:
    def __init__(self, dut):
        self.dut = dut
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.wb = self.p["data_width"] // 8                 # bytes per memory word
        self.n_words = self.p["size"] // self.wb
        self.job_words = self.n_words - self.n_words // SCRATCH   # words jobs may touch
        self.model = bytearray(self.p["size"])
        self.full_seen = False
        dut._log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        for s in ("w_valid", "r_valid", "csr_push", "csr_fill", "csr_xor"):
            getattr(dut, s).value = 0
        dut.d_ready.value = 1
        cocotb.start_soon(Clock(dut.clk, 8, unit="ns").start())

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 3)
        self.dut.rst.value = 0
        await RisingEdge(self.dut.clk)

    # Memory access through the testbench's own ports.

    async def write_word(self, addr, data):
        dut = self.dut
        dut.w_valid.value = 1
        dut.w_addr.value = addr
        dut.w_data.value = data
        dut.w_strb.value = (1 << self.wb) - 1
        await transfer(dut, "w")
        dut.w_valid.value = 0
        self.model[addr * self.wb:(addr + 1) * self.wb] = data.to_bytes(self.wb, "little")

    async def read_words(self, addrs):
        """Requests back to back; returns [(addr, data)]."""
        dut = self.dut
        got, sent = [], []

        async def collect():
            while len(got) < len(addrs):
                await ReadOnly()
                if int(dut.d_valid.value):
                    got.append(int(dut.d_data.value))
                await RisingEdge(dut.clk)
        task = cocotb.start_soon(collect())
        for a in addrs:
            dut.r_valid.value = 1
            dut.r_addr.value = a
            await transfer(dut, "r")
            sent.append(a)
        dut.r_valid.value = 0
        await task
        return list(zip(sent, got, strict=True))

    def word(self, addr):
        return int.from_bytes(self.model[addr * self.wb:(addr + 1) * self.wb], "little")

    async def preload(self):
        for a in range(self.n_words):
            await self.write_word(a, self.rng.getrandbits(self.p["data_width"]))

    async def noise(self, stop):
        """Random reads anywhere and writes to the scratch region until stop() holds."""
        dut = self.dut
        while not stop():
            if self.rng.random() < 0.5:
                a = self.rng.randrange(self.job_words, self.n_words)
                await self.write_word(a, self.rng.getrandbits(self.p["data_width"]))
            else:
                dut.r_valid.value = 1
                dut.r_addr.value = self.rng.randrange(self.n_words)
                await transfer(dut, "r")
                dut.r_valid.value = 0
            if self.rng.random() < 0.3:
                await ClockCycles(dut.clk, self.rng.randrange(1, 4))

    # Jobs.

    def random_job(self):
        rng, wb = self.rng, self.wb
        kind = rng.choice(["copy", "fill", "xor"])
        words = 0 if rng.random() < 0.1 else rng.randrange(1, MAX_WORDS + 1)
        while True:
            dst = rng.randrange(self.job_words - words + 1)
            src = rng.randrange(self.job_words - words + 1)
            if kind == "fill" or dst + words <= src or src + words <= dst:
                break
        return {"kind": kind, "dst": dst * wb, "src": src * wb, "bytes": words * wb,
                "pattern": rng.getrandbits(64),
                "fill": int(kind == "fill"),
                "xor": int(kind == "xor" or (kind == "fill" and rng.random() < 0.5))}

    def apply(self, job):
        """The job's effect on the model."""
        m, n, d, s = self.model, job["bytes"], job["dst"], job["src"]
        if job["kind"] == "fill":
            m[d:d + n] = (job["pattern"].to_bytes(8, "little") * (n // 8 + 1))[:n]
        elif job["kind"] == "copy":
            m[d:d + n] = m[s:s + n]
        else:
            m[d:d + n] = bytes(a ^ b for a, b in zip(m[d:d + n], m[s:s + n], strict=True))

    async def push(self, job):
        """Write the job's fields and `push` when the queue has room (as hal_copy: room, then
        push); returns after the edge that queued it."""
        dut = self.dut
        for f in ("dst", "src", "bytes", "pattern", "fill", "xor"):
            getattr(dut, f"csr_{f}").value = job[f]
        dut.csr_push.value = 1
        for _ in range(ROOM_LIMIT):
            await ReadOnly()
            room = int(dut.csr_room.value)
            await RisingEdge(dut.clk)
            if room:
                break
            self.full_seen = True
        else:
            raise AssertionError(f"no room in the job queue for {ROOM_LIMIT} cycles "
                                 f"(done = {int(dut.csr_done.value)}): the engine is stuck")
        dut.csr_push.value = 0

    async def wait_done(self, n, limit):
        """Wait until `done` reads n and the engine is idle; fail after `limit` cycles."""
        dut = self.dut
        for _ in range(limit):
            await ReadOnly()
            done, busy = int(dut.csr_done.value), int(dut.busy.value)
            assert done <= n, f"done = {done}, only {n} jobs pushed"
            if done == n and not busy:
                await RisingEdge(dut.clk)
                return
            await RisingEdge(dut.clk)
        raise AssertionError(f"done = {done} (want {n}), busy = {busy} after {limit} cycles")

    async def check(self):
        got = await self.read_words(list(range(self.n_words)))
        bad = [(a, d) for a, d in got if d != self.word(a)]
        for a, d in bad[:8]:
            self.dut._log.error("word %d (byte %#x): %#x, expected %#x", a, a * self.wb, d,
                                self.word(a))
        assert not bad, f"{len(bad)} of {self.n_words} words differ from the model"


@cocotb.test(timeout_time=1, timeout_unit="ms")      # (a run takes < 0.1 ms)
@cocotb.parametrize(noise=[False, True])
async def test_random_jobs(dut, noise):
    tb = TB(dut)
    await tb.reset()
    await tb.preload()
    finished = False
    noise_task = cocotb.start_soon(tb.noise(lambda: finished)) if noise else None
    jobs = [tb.random_job() for _ in range(N_JOBS)]
    for job in jobs:
        await tb.push(job)
        tb.apply(job)          # the engine runs jobs in order, each to its end
    await tb.wait_done(len(jobs), 10 * N_JOBS * MAX_WORDS)
    finished = True
    if noise_task:
        await noise_task
    await ClockCycles(dut.clk, 5)
    assert int(dut.csr_done.value) == len(jobs), "done counted on after the last job"
    assert tb.full_seen, "the job queue never filled: the jobs are not back to back"
    kinds = {k: sum(j["kind"] == k for j in jobs) for k in ("copy", "fill", "xor")}
    dut._log.info("jobs %s, %d of 0 bytes", kinds, sum(j["bytes"] == 0 for j in jobs))
    await tb.check()


@cocotb.test(timeout_time=1, timeout_unit="ms")
async def test_rate(dut):
    """On idle ports: copy and fill a word a cycle, xor a word every two cycles (from the edge
    that queues the job to the one that counts it done, plus a few cycles of latency)."""
    tb = TB(dut)
    await tb.reset()
    await tb.preload()
    words = 32
    limits = {"copy": words + 5, "fill": words + 3, "xor": 2 * words + 6}
    for n, kind in enumerate(["copy", "fill", "xor"], 1):
        job = {"kind": kind, "dst": 0, "src": 2 * words * tb.wb, "bytes": words * tb.wb,
               "pattern": 0x0123456789ABCDEF, "fill": int(kind == "fill"),
               "xor": int(kind == "xor")}
        await tb.push(job)
        tb.apply(job)
        cycles = 0
        while True:
            await ReadOnly()
            if int(dut.csr_done.value) == n:
                break
            await RisingEdge(dut.clk)
            cycles += 1
        await RisingEdge(dut.clk)
        dut._log.info("%s of %d words: %d cycles", kind, words, cycles)
        assert cycles <= limits[kind], f"{kind} of {words} words took {cycles} cycles"
    await tb.check()


@pytest.mark.smoke
def test_csr_order():
    """New registers go last: the addresses of the earlier ones (the firmware's csr.h) stay."""
    names = [c.name for c in BufferCopy(BufferMemory(4096)).get_csrs()]
    assert names == ["dst", "src", "bytes", "pattern", "fill", "push", "room", "done", "xor"]


@pytest.mark.smoke
@pytest.mark.parametrize("data_width", [64, 256])
def test_buffer_copy(data_width):
    run(CORE.with_params(**{**DEFAULTS, "data_width": data_width}), __file__)


@pytest.mark.full
@pytest.mark.parametrize("data_width,depth", [(128, 2), (512, 16)])
def test_buffer_copy_full(data_width, depth):
    run(CORE.with_params(**{**DEFAULTS, "data_width": data_width, "depth": depth}), __file__)
