# SPDX-License-Identifier: BSD-2-Clause
"""BufferCopy: the copy / fill engine of the buffer memory, for the FTL (write buffer in,
write buffer out, zeroes for deallocated blocks) so the CPU never moves data words.

Jobs {dst, src, bytes, fill, pattern} queue in a FIFO (CSRs: write the fields, then `push`);
each copies bytes / B words from src to dst, or writes `pattern` (repeated) to them, at one
memory word per cycle when the memory ports are free (B = the memory's data_width / 8 bytes:
8 at 64 bits, 64 at 512). `done` counts finished jobs (wrapping). Addresses and byte counts
are multiples of B (the firmware's are of the LBA size, 512 or 4096); a job of 0 bytes
finishes at once.

Output `busy`: a job is queued or running (the drive is not quiet: soc/ssdlab_soc.py ff_quiet,
since the engine works with no output of the top changing).
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSR, CSRStatus, CSRStorage
from migen import If, Replicate, Signal

__all__ = ["BufferCopy"]


def _job_layout():
    return [("dst", 32), ("src", 32), ("words", 29), ("fill", 1), ("pattern", 64)]


def _log2(n):
    return (n - 1).bit_length()


class BufferCopy(LiteXModule):
    """Parameters: memory (BufferMemory; adds one writer and one reader), depth (job queue,
    2..64, default 16)."""

    def __init__(self, memory, depth=16):
        aw = memory.addr_width
        dw = memory.data_width
        sb = _log2(dw // 8)           # byte address -> word address
        wr = memory.add_writer("copy")
        rd, rdata = memory.add_reader("copy")

        # CPU interface.
        self._dst     = CSRStorage(32, description="Destination byte address.")
        self._src     = CSRStorage(32, description="Source byte address (copy).")
        self._bytes   = CSRStorage(32, description=f"Bytes (multiple of {dw // 8}).")
        self._pattern = CSRStorage(64, description="Fill pattern.")
        self._fill    = CSRStorage(1, description="1: fill with pattern, 0: copy.")
        self._push    = CSR()
        self._room    = CSRStatus(1, description="The job queue has room.")
        self._done    = CSRStatus(32, description="Jobs finished since reset (wraps).")
        self.busy = Signal()

        jobs = stream.SyncFIFO(_job_layout(), depth)
        self.jobs = jobs
        self.comb += [
            jobs.sink.valid.eq(self._push.re),
            jobs.sink.dst.eq(self._dst.storage),
            jobs.sink.src.eq(self._src.storage),
            jobs.sink.words.eq(self._bytes.storage[sb:]),
            jobs.sink.fill.eq(self._fill.storage),
            jobs.sink.pattern.eq(self._pattern.storage),
            self._room.status.eq(jobs.sink.ready),
        ]

        # Engine: a reader issues word reads, their data (or the pattern) goes to the writer.
        # The job is taken from the queue when it starts; its fields are kept in registers.
        job = jobs.source
        r_left = Signal(29)        # words still to read (copy)
        w_left = Signal(29)        # words still to write
        r_adr = Signal(aw)
        w_adr = Signal(aw)
        pattern = Signal(dw)
        fill = Signal()
        active = Signal()
        done = Signal(32)
        data = stream.SyncFIFO([("data", dw)], 4)      # read data waiting for the write port
        self.data = data
        in_flight = Signal(3)      # reads accepted whose data has not reached `data`
        rd_fire = Signal()
        wr_fire = Signal()
        self.comb += [
            self._done.status.eq(done),
            self.busy.eq(active | job.valid),
            job.ready.eq(~active),
            rd.valid.eq(active & ~fill & (r_left != 0) & (data.level + in_flight < 3)),
            rd.addr.eq(r_adr),
            rd_fire.eq(rd.valid & rd.ready),
            data.sink.valid.eq(rdata.valid),
            data.sink.data.eq(rdata.data),
            rdata.ready.eq(1),
            wr.valid.eq(active & (w_left != 0) & (fill | data.source.valid)),
            wr.addr.eq(w_adr),
            If(fill, wr.data.eq(pattern)).Else(wr.data.eq(data.source.data)),
            wr.strb.eq((1 << dw // 8) - 1),
            wr_fire.eq(wr.valid & wr.ready),
            data.source.ready.eq(wr_fire & ~fill),
        ]
        self.sync += [
            in_flight.eq(in_flight + rd_fire - rdata.valid),
            If(job.valid & ~active,
                If(job.words == 0,
                    done.eq(done + 1)
                ).Else(
                    active.eq(1),
                    r_left.eq(job.words), w_left.eq(job.words),
                    r_adr.eq(job.src[sb:]), w_adr.eq(job.dst[sb:]),
                    pattern.eq(Replicate(job.pattern, dw // 64)), fill.eq(job.fill),
                )
            ),
            If(rd_fire, r_left.eq(r_left - 1), r_adr.eq(r_adr + 1)),
            If(wr_fire,
                w_left.eq(w_left - 1), w_adr.eq(w_adr + 1),
                If(w_left == 1, active.eq(0), done.eq(done + 1))
            ),
        ]
