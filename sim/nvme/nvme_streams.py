# SPDX-License-Identifier: BSD-2-Clause
"""cocotb drivers for the flat-port LiteX streams of a test top (`<prefix>_valid`,
`<prefix>_ready` and one port per payload field, `<prefix>_<field>`), and access to the
buffer RAM `buf_mem` of nvme_controller_top.

- `FieldSource`: drives a DUT input stream from a queue (`put`) or one beat at a time
  (`await send(...)`), with an idle inserter; sleeps while it has nothing to send;
- `FieldSink`: takes beats of a DUT output stream, calls `on_beat(dict)`; ready is high but
  for a `pause` probability per cycle (backpressure knob); sleeps on valid while idle;
- `BufferMem`: byte access to buffer handles of `dut.buf_mem` (64-bit words, buffer handle h
  at word h * max_transfer / 8, byte n of a word in bits 8n+7:8n).

Signals are written only after a RisingEdge (cocotb 2.x: never after a ReadOnly).
"""

from collections import deque

import cocotb
from cocotb.triggers import ClockCycles, Event, ReadOnly, RisingEdge

__all__ = ["FieldSource", "FieldSink", "BufferMem"]


class FieldSource:
    """A DUT input stream `prefix` (e.g. "s_fw_cpl"); fields are the payload port names
    without the prefix. `idle`: probability of 1..4 idle cycles before a beat."""
    def __init__(self, dut, prefix, fields, rng=None, idle=0.0, clk=None):
        self.dut, self.prefix, self.rng, self.idle = dut, prefix, rng, idle
        self.clk = clk if clk is not None else dut.clk
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.ports = {f: getattr(dut, f"{prefix}_{f}") for f in fields}
        self.queue = deque()
        self.kick = Event()
        self.sent = 0
        self.valid.value = 0
        self._task = cocotb.start_soon(self._run())

    def put(self, beat, done=None):
        """Queue a beat (dict of fields); `done` (an Event) is set once the DUT took it."""
        unknown = set(beat) - set(self.ports)
        if unknown:
            raise KeyError(f"{self.prefix}: no fields {sorted(unknown)}")
        self.queue.append((beat, done))
        self.kick.set()

    async def send(self, **beat):
        """One beat; returns once the DUT has taken it."""
        done = Event()
        self.put(beat, done)
        await done.wait()

    def clear(self):
        """Drop queued beats (controller reset); the beat on the wires goes too."""
        self.queue.clear()

    async def _run(self):
        while True:
            if not self.queue:
                self.valid.value = 0
                self.kick.clear()
                await self.kick.wait()
                await RisingEdge(self.clk)
                continue
            if self.idle and self.rng is not None and self.rng.random() < self.idle:
                self.valid.value = 0
                await ClockCycles(self.clk, self.rng.randint(1, 4))
                if not self.queue:
                    continue
            beat, done = self.queue[0]
            for f, port in self.ports.items():
                port.value = int(beat.get(f, 0))
            self.valid.value = 1
            while True:
                await RisingEdge(self.clk)
                if not self.queue or self.queue[0][0] is not beat:
                    break               # cleared while offered
                if int(self.ready.value):
                    self.queue.popleft()
                    self.sent += 1
                    if done is not None:
                        done.set()
                    break
            if not self.queue:
                self.valid.value = 0


class FieldSink:
    """A DUT output stream `prefix` (e.g. "m_fw_cmd"); `on_beat(dict)` for each beat taken.
    `pause`: probability of ready low in a cycle (0: ready always high)."""
    def __init__(self, dut, prefix, fields, on_beat, rng=None, pause=0.0, clk=None):
        self.dut, self.prefix, self.on_beat, self.rng, self.pause = \
            dut, prefix, on_beat, rng, pause
        self.clk = clk if clk is not None else dut.clk
        self.valid = getattr(dut, f"{prefix}_valid")
        self.ready = getattr(dut, f"{prefix}_ready")
        self.ports = {f: getattr(dut, f"{prefix}_{f}") for f in fields}
        self.received = 0
        self.ready.value = 1
        self._task = cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await ReadOnly()
            if not int(self.valid.value):
                await RisingEdge(self.valid)
                continue
            if int(self.ready.value):
                beat = {f: int(p.value) for f, p in self.ports.items()}
                self.received += 1
                self.on_beat(beat)              # taken at the next edge
            await RisingEdge(self.clk)
            hold = self.pause and self.rng is not None and self.rng.random() < self.pause
            self.ready.value = int(not hold)


class BufferMem:
    """Byte access to `dut.buf_mem` buffers (handle h at byte h * max_transfer), in words of
    the memory's own width (64 to 512 bits: the front end's data path)."""
    def __init__(self, dut, max_transfer, name="buf_mem"):
        self.mem = getattr(dut, name)
        self.max_transfer = max_transfer
        self._wb = None

    @property
    def wb(self):
        """Bytes per word: the memory's, read at the first access (a model's test may hand
        in a dut without the memory)."""
        if self._wb is None:
            self._wb = len(self.mem[0].value) // 8
        return self._wb

    def _word(self, handle, offset):
        if offset % self.wb:
            raise ValueError(f"buffer offset {offset} not a multiple of {self.wb}")
        return (handle * self.max_transfer + offset) // self.wb

    def write(self, handle, offset, data):
        """Write `data` at `offset` (word aligned); a partial last word is zero padded."""
        wb = self.wb
        data = bytes(data) + bytes(-len(data) % wb)
        if offset + len(data) > self.max_transfer:
            raise ValueError(f"{len(data)} bytes at {offset} overflow a buffer")
        w0 = self._word(handle, offset)
        mem = self.mem
        for i in range(len(data) // wb):
            mem[w0 + i].value = int.from_bytes(data[wb * i:wb * i + wb], "little")

    def read(self, handle, offset, n):
        if offset + n > self.max_transfer:
            raise ValueError(f"{n} bytes at {offset} overflow a buffer")
        wb = self.wb
        w0 = self._word(handle, offset)
        mem = self.mem
        return b"".join(int(mem[w0 + i].value).to_bytes(wb, "little")
                        for i in range((n + wb - 1) // wb))[:n]
