# SPDX-License-Identifier: BSD-2-Clause
"""BufferCopy: the copy / fill / XOR engine of the buffer memory, for the FTL (write buffer in,
write buffer out, zeroes for deallocated blocks, die parity) so the CPU never moves data words.

Jobs {dst, src, bytes, fill, pattern, xor} queue in a FIFO (CSRs: write the fields, then
`push`); each works on bytes / B words (B = the memory's data_width / 8 bytes: 8 at 64 bits, 64
at 512):

- copy (fill = 0, xor = 0): dst[i] = src[i], one memory word per cycle when the memory ports
  are free;
- fill (fill = 1; xor is ignored): dst[i] = `pattern` (repeated across the word), one word per
  cycle when the write port is free;
- xor (fill = 0, xor = 1): dst[i] = dst[i] ^ src[i] in place, the parity of a RAID-5 stripe
  across NAND dies built up one die's page at a time. The src words come through the
  engine's first reader, the dst words through its second (`copyx`); a word is written once
  both have arrived. Both readers share the memory's one read port, so an XOR job moves at
  most one word every two cycles. src and dst must not overlap (dst may read a word the job
  has already written).

`done` counts finished jobs of every kind (wrapping). Addresses and byte counts are multiples of
B (the firmware's are of the LBA size, 512 or 4096); a job of 0 bytes finishes at once.

Output `busy`: a job is queued or running (the drive is not quiet: soc/ssdlab_soc.py ff_quiet,
since the engine works with no output of the top changing).
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSR, CSRStatus, CSRStorage
from migen import If, Replicate, Signal

__all__ = ["BufferCopy"]


def _job_layout():
    return [("dst", 32), ("src", 32), ("words", 29), ("fill", 1), ("pattern", 64), ("xor", 1)]


def _log2(n):
    return (n - 1).bit_length()


class BufferCopy(LiteXModule):
    """Parameters: memory (BufferMemory; adds one writer and two readers), depth (job queue,
    2..64, default 16)."""

    def __init__(self, memory, depth=16):
        aw = memory.addr_width
        dw = memory.data_width
        sb = _log2(dw // 8)           # byte address -> word address
        wr = memory.add_writer("copy")
        rd, rdata = memory.add_reader("copy")       # src words (copy, xor)
        rdx, rdatax = memory.add_reader("copyx")    # dst words (xor)

        # CPU interface. New registers go last, so no earlier one moves.
        self._dst     = CSRStorage(32, description="Destination byte address.")
        self._src     = CSRStorage(32, description="Source byte address (copy, xor).")
        self._bytes   = CSRStorage(32, description=f"Bytes (multiple of {dw // 8}).")
        self._pattern = CSRStorage(64, description="Fill pattern.")
        self._fill    = CSRStorage(1, description="1: fill with pattern, 0: copy (or xor).")
        self._push    = CSR()
        self._room    = CSRStatus(1, description="The job queue has room.")
        self._done    = CSRStatus(32, description="Jobs finished since reset (wraps).")
        self._xor     = CSRStorage(1, description="1: dst ^= src (with fill = 0).")
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
            jobs.sink.xor.eq(self._xor.storage),
            self._room.status.eq(jobs.sink.ready),
        ]

        # Engine: readers issue word reads (src; and dst for xor), their data (or the pattern)
        # goes to the writer. The job is taken from the queue when it starts; its fields are
        # kept in registers.
        job = jobs.source
        r_left = Signal(29)        # src words still to read (copy, xor)
        x_left = Signal(29)        # dst words still to read (xor)
        w_left = Signal(29)        # words still to write
        r_adr = Signal(aw)
        x_adr = Signal(aw)
        w_adr = Signal(aw)
        pattern = Signal(dw)
        fill = Signal()
        xor_mode = Signal()        # (not `xor`: a Verilog keyword)
        active = Signal()
        done = Signal(32)
        # Read data waiting for the write port: src words in `data`, dst words in `datax`.
        # Each reader keeps its reads in flight plus its FIFO's level under 3, so its data
        # (which must be accepted at once) always finds room.
        data = stream.SyncFIFO([("data", dw)], 4)
        datax = stream.SyncFIFO([("data", dw)], 4)
        self.data = data
        self.datax = datax
        in_flight = Signal(3)      # src reads accepted whose data has not reached `data`
        x_in_flight = Signal(3)    # dst reads accepted whose data has not reached `datax`
        rd_fire = Signal()
        rdx_fire = Signal()
        wr_fire = Signal()
        src_ok = Signal()          # the write's input words are there
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
            rdx.valid.eq(active & xor_mode & (x_left != 0) & (datax.level + x_in_flight < 3)),
            rdx.addr.eq(x_adr),
            rdx_fire.eq(rdx.valid & rdx.ready),
            datax.sink.valid.eq(rdatax.valid),
            datax.sink.data.eq(rdatax.data),
            rdatax.ready.eq(1),
            src_ok.eq(fill | (data.source.valid & (~xor_mode | datax.source.valid))),
            wr.valid.eq(active & (w_left != 0) & src_ok),
            wr.addr.eq(w_adr),
            If(fill,
                wr.data.eq(pattern)
            ).Elif(xor_mode,
                wr.data.eq(data.source.data ^ datax.source.data)
            ).Else(
                wr.data.eq(data.source.data)
            ),
            wr.strb.eq((1 << dw // 8) - 1),
            wr_fire.eq(wr.valid & wr.ready),
            data.source.ready.eq(wr_fire & ~fill),
            datax.source.ready.eq(wr_fire & xor_mode),
        ]
        self.sync += [
            in_flight.eq(in_flight + rd_fire - rdata.valid),
            x_in_flight.eq(x_in_flight + rdx_fire - rdatax.valid),
            If(job.valid & ~active,
                If(job.words == 0,
                    done.eq(done + 1)
                ).Else(
                    active.eq(1),
                    r_left.eq(job.words), x_left.eq(job.words), w_left.eq(job.words),
                    r_adr.eq(job.src[sb:]), x_adr.eq(job.dst[sb:]), w_adr.eq(job.dst[sb:]),
                    pattern.eq(Replicate(job.pattern, dw // 64)), fill.eq(job.fill),
                    xor_mode.eq(job.xor & ~job.fill),
                )
            ),
            If(rd_fire, r_left.eq(r_left - 1), r_adr.eq(r_adr + 1)),
            If(rdx_fire, x_left.eq(x_left - 1), x_adr.eq(x_adr + 1)),
            If(wr_fire,
                w_left.eq(w_left - 1), w_adr.eq(w_adr + 1),
                If(w_left == 1, active.eq(0), done.eq(done + 1))
            ),
        ]
