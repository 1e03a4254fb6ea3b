# SPDX-License-Identifier: BSD-2-Clause
"""Valid/ready/payload stream drivers for cocotb tests of Amaranth `lib.stream` ports (the
`<prefix>__valid`, `__ready`, `__payload` ports of an elaborated core), with idle and
backpressure inserters. They sleep on events, so long idle stretches cost no Python time."""

from collections import deque

import cocotb
from cocotb.triggers import ClockCycles, Event, ReadOnly, RisingEdge

__all__ = ["StreamSource", "StreamSink"]


class StreamSource:
    """Drives a valid/ready/payload stream from a queue; `idle` is the probability of a gap
    of 1..4 cycles before a beat. Sleeps while the queue is empty or ready is low."""

    def __init__(self, dut, prefix, rng, idle=0.0):
        self.dut, self.rng, self.idle = dut, rng, idle
        self.valid = getattr(dut, f"{prefix}__valid")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.queue = deque()
        self.kick = Event()
        self.sent = 0
        self.valid.value = 0
        self.payload.value = 0
        cocotb.start_soon(self._run())

    def put(self, value):
        self.queue.append(value)
        self.kick.set()

    async def _run(self):
        clk = self.dut.clk
        while True:
            if not self.queue:
                self.valid.value = 0
                self.kick.clear()
                await self.kick.wait()
                await RisingEdge(clk)           # back in a writable phase, at an edge
                continue
            if self.idle and self.rng.random() < self.idle:
                self.valid.value = 0
                await ClockCycles(clk, self.rng.randint(1, 4))
            self.payload.value = self.queue[0]
            self.valid.value = 1
            while True:
                await ReadOnly()
                if int(self.ready.value):
                    await RisingEdge(clk)       # the beat moves at this edge
                    break
                await RisingEdge(self.ready)
            self.queue.popleft()
            self.sent += 1
            if not self.queue:
                self.valid.value = 0


class StreamSink:
    """Takes beats of a valid/ready/payload stream; `pause` is the probability of ready low
    in a cycle where valid is high. Calls `on_beat(payload)` for each beat."""

    def __init__(self, dut, prefix, rng, on_beat, pause=0.0):
        self.dut, self.rng, self.on_beat, self.pause = dut, rng, on_beat, pause
        self.valid = getattr(dut, f"{prefix}__valid")
        self.ready = getattr(dut, f"{prefix}__ready")
        self.payload = getattr(dut, f"{prefix}__payload")
        self.ready.value = 1
        cocotb.start_soon(self._run())

    async def _run(self):
        clk = self.dut.clk
        while True:
            await ReadOnly()
            if not int(self.valid.value):
                await RisingEdge(self.valid)
                continue
            if int(self.ready.value):
                self.on_beat(int(self.payload.value))   # taken at the next edge
            await RisingEdge(clk)
            self.ready.value = int(not (self.pause and self.rng.random() < self.pause))
