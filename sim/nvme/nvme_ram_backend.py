# SPDX-License-Identifier: BSD-2-Clause
"""NvmeRamBackend: a RAM-backed block back end for the controller's back-end ports.

It serves `m_be_req_*` (tag, opcode, nsid, slba, nlb 0's based, flags) and answers on
`s_be_cpl_*` (tag, status) the way the front end / back end contract says
(docs: ARCHITECTURE.md, "NVMe front end <-> back end"): the data buffer of a request is buffer
handle `tag` in `dut.buf_mem`. A Write's data is in the buffer when the request arrives and is
stored then; a Read fills the buffer just before its completion; Flush completes.

Storage is a sparse dict of LBAs (unwritten or deallocated LBAs read as zeros). Requests are
accepted every cycle (ready high unless `pause` > 0); each completes `latency` cycles later
plus 0..`jitter` random cycles, so completions come out of order when jitter > 0. A request
outside the namespace (`ns_size`), for another namespace than 1, or with an unknown opcode
gets LBA Out of Range / Invalid Namespace / Invalid Command Opcode; `inject()` makes chosen
LBAs fail (media errors, say).

Counters for SMART (`reads`, `writes`, `blocks_read`, `blocks_written`) and the firmware
model's entry points `deallocate(slba, nlb)` and `write_zeroes(slba, nlb)`; `peek` / `poke`
give tests backdoor access to the stored blocks.
"""

import random

import cocotb
from cocotb.triggers import ClockCycles

from sim.nvme.nvme_streams import BufferMem, FieldSink, FieldSource
from spec.nvme import SC, NvmOpcode

__all__ = ["NvmeRamBackend"]


class NvmeRamBackend:
    """dut:          the test top (ports m_be_req_*, s_be_cpl_*, buf_mem, clk);
    tag_width:    the controller's TAG_WIDTH (1..8);
    max_transfer: bytes per buffer (the controller's max_transfer);
    lbads:        LBA size 2^lbads bytes (9..12);
    ns_size:      namespace size in LBAs;
    latency:      cycles from request to completion (>= 1), jitter: extra 0..jitter cycles;
    pause:        probability of m_be_req_ready low in a cycle; seed: for jitter/pauses.
    """
    def __init__(self, dut, tag_width=6, max_transfer=131072, lbads=9, ns_size=1 << 20,
                 latency=8, jitter=0, pause=0.0, seed=None, start=True):
        if not 9 <= lbads <= 12:
            raise ValueError(f"NvmeRamBackend: lbads={lbads} out of 9..12")
        if latency < 1 or jitter < 0:
            raise ValueError(f"NvmeRamBackend: latency={latency} jitter={jitter}")
        self.dut = dut
        self.tag_width = tag_width
        self.lba_size = 1 << lbads
        self.ns_size = ns_size
        self.latency, self.jitter = latency, jitter
        self.rng = random.Random(cocotb.RANDOM_SEED if seed is None else seed)
        self.pause = pause
        self.buf = BufferMem(dut, max_transfer)
        self.blocks = {}            # lba -> bytes (lba_size)
        self.errors = {}            # (opcode, lba) -> status
        self.in_flight = {}         # tag -> request
        self.log = dut._log
        self.reads = self.writes = self.flushes = 0
        self.blocks_read = self.blocks_written = 0
        self.requests = []          # every request, in arrival order (dicts)
        self.protocol_errors = []
        self.sink = self.source = None
        if start:
            self.start()

    def start(self):
        self.source = FieldSource(self.dut, "s_be_cpl", ["tag", "status"])
        self.sink = FieldSink(self.dut, "m_be_req",
                              ["tag", "opcode", "nsid", "slba", "nlb", "flags"],
                              self._on_req, rng=self.rng, pause=self.pause)

    # Backdoor / firmware entry points ---------------------------------------------------------

    def peek(self, slba, nlb):
        z = bytes(self.lba_size)
        return b"".join(self.blocks.get(lba, z) for lba in range(slba, slba + nlb))

    def poke(self, slba, data):
        if len(data) % self.lba_size:
            raise ValueError("poke: not whole blocks")
        for i in range(len(data) // self.lba_size):
            self.blocks[slba + i] = bytes(data[i * self.lba_size:(i + 1) * self.lba_size])

    def deallocate(self, slba, nlb):
        for lba in range(slba, slba + nlb):
            self.blocks.pop(lba, None)

    def write_zeroes(self, slba, nlb):
        self.deallocate(slba, nlb)      # unwritten LBAs read as zeros

    def inject(self, opcode, lba, status):
        """Requests `opcode` touching `lba` complete with `status` (None removes)."""
        if status is None:
            self.errors.pop((opcode, lba), None)
        else:
            self.errors[(opcode, lba)] = status

    # Requests ---------------------------------------------------------------------------------

    def _on_req(self, req):
        tag = req["tag"]
        self.requests.append(req)
        if tag in self.in_flight:
            msg = f"back end: tag {tag} reused while in flight ({self.in_flight[tag]} / {req})"
            self.log.error(msg)
            self.protocol_errors.append(msg)
        self.in_flight[tag] = req
        # A Write's data is in the buffer now: store it before the buffer can be reused.
        status = self._check(req)
        data = None
        if status == 0 and req["opcode"] == NvmOpcode.WRITE:
            data = self.buf.read(tag, 0, (req["nlb"] + 1) * self.lba_size)
        cocotb.start_soon(self._serve(req, status, data))

    def _check(self, req):
        op, slba, nlb = req["opcode"], req["slba"], req["nlb"] + 1
        if op not in (NvmOpcode.READ, NvmOpcode.WRITE, NvmOpcode.FLUSH):
            return SC.INVALID_OPCODE
        if req["nsid"] != 1 and not (op == NvmOpcode.FLUSH and req["nsid"] == 0xFFFFFFFF):
            return SC.INVALID_NAMESPACE
        if op == NvmOpcode.FLUSH:
            return 0
        if slba + nlb > self.ns_size:
            return SC.LBA_OUT_OF_RANGE
        for lba in range(slba, slba + nlb):
            if (op, lba) in self.errors:
                return self.errors[(op, lba)]
        return 0

    async def _serve(self, req, status, data):
        delay = self.latency + (self.rng.randint(0, self.jitter) if self.jitter else 0)
        await ClockCycles(self.dut.clk, delay)
        tag, op, slba, nlb = req["tag"], req["opcode"], req["slba"], req["nlb"] + 1
        if status == 0:
            if op == NvmOpcode.WRITE:
                self.poke(slba, data)
                self.writes += 1
                self.blocks_written += nlb
            elif op == NvmOpcode.READ:
                self.buf.write(tag, 0, self.peek(slba, nlb))
                self.reads += 1
                self.blocks_read += nlb
            else:
                self.flushes += 1
        self.in_flight.pop(tag, None)
        await self.source.send(tag=tag, status=status)
