# SPDX-License-Identifier: BSD-2-Clause
"""One channel's ECC between its die scheduler and the buffer DMA (Verilog module `nand_ecc`).

Program data of an ECC op (the scheduler's `wreq.ecc`) goes through `bch_encoder`: each
`data_bytes` of data is followed by its parity room on the bus, so a page holds whole
codewords back to back (data then parity, the layout Linux calls interleaved ECC placement;
the spare area's bytes pay for the parity). Read bytes of an ECC op (`rdata.ecc`) go through
`bch_decoder`: the mover receives each codeword's data, corrected, with the op's tag, buffer
and plane, and `last` on the last data byte of the plane. Other bytes (raw reads and programs,
ID, parameter page, features) pass unchanged.

The op's completion waits until the decoder has given back all its codewords and carries
their outcome: `ecc_bits` the most bits corrected in one codeword, `ecc_fail` some codeword
held more errors than the code corrects (its data is not to be used: see bch_decoder). A
channel runs one op on the bus at a time and completes it before the next op's data, so
everything the decoder holds when a completion arrives belongs to that op. See
rtl/nand/README.md ("nand_ecc").
"""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from .bch_decoder import BchDecoder
from .bch_encoder import BchEncoder
from .nand_common import bch_code
from .nand_die_scheduler import (
    BUFFER_BITS,
    TAG_BITS,
    ChannelCompletion,
    FlashCompletion,
    rdata_layout,
    wreq_layout,
)

__all__ = ["NandEcc", "bus_length"]

META_DEPTH = 4      # codewords in the decoder at once: one streaming in, two in its buffer

# a codeword's op context, kept while the decoder holds it
context_layout = data.StructLayout({"tag": unsigned(TAG_BITS), "buffer": unsigned(BUFFER_BITS),
                                    "plane": unsigned(2), "last": unsigned(1)})


def bus_length(code, length):
    """Bytes on the bus for `length` data bytes of an ECC op: whole codewords, each followed
    by its parity room (the RTL's rule, for tests and the firmware's arithmetic)."""
    return length + (length // code.data_bytes) * code.room


class NandEcc(wiring.Component):
    """BCH encode and decode of one channel's page data, with the outcome in its completions.

    Parameters
    ----------
    m, t, data_bytes, parity_bytes :
        The BCH code (BchEncoder's ranges); data_bytes must be a power of two (the bus
        layout of an op is then a shift and a constant multiply away from its data layout).
    max_len : int, 1..65536
        The scheduler's max_len (its wreq length field).
    gate_clocks : bool (default False)
        BchDecoder's: gated clocks for its stages (simulation builds), else clock enables.

    Ports (`s_` into this core, `m_` out of it)
    -----
    s_wreq, m_wreq : wreq_layout(max_len), scheduler -> mover: passed through; an ECC request
        (`ecc`) is for `length` data bytes, the scheduler takes them plus their parity
    s_wdata : bytes, mover -> here; m_wdata : bytes, here -> scheduler
    s_rdata : rdata_layout, scheduler -> here (bus bytes); m_rdata : rdata_layout, here ->
        mover (an ECC op's corrected data bytes, `last` on the plane's last data byte)
    s_cpl : ChannelCompletion, scheduler -> here; m_cpl : FlashCompletion, here -> the back
        end's merge, with
        `ecc_bits` and `ecc_fail` set (an `error` completion passes at once, fields 0)
    busy : out; codewords in the decoder, program data moving or a completion held: the back
        end's `busy` (the simulation's fast-forward skips no cycle while it is set)
    """

    def __init__(self, m=14, t=32, data_bytes=1024, parity_bytes=0, max_len=18432,
                 gate_clocks=False):
        try:
            self.code = bch_code("NandEcc", m, t, data_bytes, parity_bytes, 1)
            if data_bytes & (data_bytes - 1):
                raise ValueError(f"NandEcc: data_bytes must be a power of two, got "
                                 f"{data_bytes}")
            if not 1 <= max_len <= 1 << 16:
                raise ValueError(f"NandEcc: max_len must be 1..65536, got {max_len!r}")
        except ValueError:
            self._MustUse__silence = True
            raise
        self.params = dict(m=m, t=t, data_bytes=data_bytes, parity_bytes=parity_bytes)
        self.max_len = max_len
        self.gate_clocks = gate_clocks
        super().__init__({
            "s_wreq": In(stream.Signature(wreq_layout(max_len))),
            "m_wreq": Out(stream.Signature(wreq_layout(max_len))),
            "s_wdata": In(stream.Signature(8)),
            "m_wdata": Out(stream.Signature(8)),
            "s_rdata": In(stream.Signature(rdata_layout)),
            "m_rdata": Out(stream.Signature(rdata_layout)),
            "s_cpl": In(stream.Signature(ChannelCompletion)),
            "m_cpl": Out(stream.Signature(FlashCompletion)),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        code = self.code
        cw_bits = code.data_bytes.bit_length() - 1
        cw_bus = code.data_bytes + code.room            # a codeword's bytes on the bus
        enc = m.submodules.encoder = BchEncoder(**self.params)
        dec = m.submodules.decoder = BchDecoder(**self.params, gate_clocks=self.gate_clocks)

        # -- program data: mover -> (encoder) -> scheduler ----------------------------------
        req = self.s_wreq.payload
        w_ecc = Signal()
        w_left = Signal(range(self.max_len + (self.max_len >> cw_bits) * code.room + 1))
        m.d.comb += [self.m_wreq.payload.eq(req),
                     self.m_wreq.valid.eq(self.s_wreq.valid & (w_left == 0)),
                     self.s_wreq.ready.eq(self.m_wreq.ready & (w_left == 0))]
        with m.If(self.s_wreq.valid & self.s_wreq.ready):
            m.d.sync += [w_ecc.eq(req.ecc),
                         w_left.eq(Mux(req.ecc, req.length + (req.length >> cw_bits) * code.room,
                                       req.length))]
        moving = w_left != 0
        with m.If(w_ecc):
            m.d.comb += [enc.s_data.payload.eq(self.s_wdata.payload),
                         enc.s_data.valid.eq(self.s_wdata.valid & moving),
                         self.s_wdata.ready.eq(enc.s_data.ready & moving),
                         self.m_wdata.payload.eq(enc.m_data.payload),
                         self.m_wdata.valid.eq(enc.m_data.valid & moving),
                         enc.m_data.ready.eq(self.m_wdata.ready & moving)]
        with m.Else():
            m.d.comb += [self.m_wdata.payload.eq(self.s_wdata.payload),
                         self.m_wdata.valid.eq(self.s_wdata.valid & moving),
                         self.s_wdata.ready.eq(self.m_wdata.ready & moving)]
        with m.If(self.m_wdata.valid & self.m_wdata.ready):
            m.d.sync += w_left.eq(w_left - 1)

        # -- read data: scheduler -> (decoder) -> mover -------------------------------------
        beat = self.s_rdata.payload
        out = self.m_rdata.payload
        # the op context of each codeword in the decoder, in order
        meta = m.submodules.meta = fifo.SyncFIFOBuffered(width=context_layout.size,
                                                         depth=META_DEPTH)
        r_count = Signal(range(cw_bus))                 # byte of the codeword coming in
        inflight = Signal(range(META_DEPTH + 2))        # codewords in, status not yet out
        empty = Signal()
        m.d.comb += empty.eq((r_count == 0) & (inflight == 0))
        closing = r_count == cw_bus - 1
        r_fire = Signal()
        status_fire = Signal()
        with m.If(beat.ecc):
            gate = ~closing | meta.w_rdy
            m.d.comb += [dec.s_data.payload.eq(beat.data),
                         dec.s_data.valid.eq(self.s_rdata.valid & gate),
                         self.s_rdata.ready.eq(dec.s_data.ready & gate),
                         r_fire.eq(dec.s_data.valid & dec.s_data.ready),
                         meta.w_en.eq(r_fire & closing),
                         meta.w_data.eq(Cat(beat.tag, beat.buffer, beat.plane, beat.last))]
            # (context_layout's field order)
            with m.If(r_fire):
                m.d.sync += r_count.eq(Mux(closing, 0, r_count + 1))
        with m.Else():
            # a raw byte waits until the decoder is empty: the mover sees ops in bus order
            m.d.comb += [out.eq(beat),
                         self.m_rdata.valid.eq(self.s_rdata.valid & empty),
                         self.s_rdata.ready.eq(self.m_rdata.ready & empty)]
        m.d.sync += inflight.eq(inflight + (r_fire & (r_count == 0)) - status_fire)

        o_count = Signal(range(code.data_bytes))        # data byte of the codeword going out
        ctx = Signal(context_layout)
        m.d.comb += ctx.eq(meta.r_data)
        with m.If(dec.m_data.valid):                    # only while inflight: never raw then
            m.d.comb += [out.data.eq(dec.m_data.payload), out.ecc.eq(1), out.tag.eq(ctx.tag),
                         out.buffer.eq(ctx.buffer), out.plane.eq(ctx.plane),
                         out.last.eq(ctx.last & (o_count == code.data_bytes - 1)),
                         self.m_rdata.valid.eq(1)]
        m.d.comb += dec.m_data.ready.eq(self.m_rdata.ready)
        with m.If(dec.m_data.valid & dec.m_data.ready):
            m.d.sync += o_count.eq(Mux(o_count == code.data_bytes - 1, 0, o_count + 1))

        # each codeword's outcome, gathered until the op's completion
        acc_bits = Signal(7)
        acc_fail = Signal()
        st = dec.m_status.payload
        m.d.comb += [dec.m_status.ready.eq(1), status_fire.eq(dec.m_status.valid),
                     meta.r_en.eq(status_fire)]
        with m.If(status_fire):
            m.d.sync += [acc_bits.eq(Mux(st.corrected > acc_bits, st.corrected, acc_bits)),
                         acc_fail.eq(acc_fail | st.failed)]

        # -- completions: after the op's codewords --------------------------------------------
        m.d.comb += self.busy.eq(~empty | moving | self.s_cpl.valid)
        cpl = self.s_cpl.payload
        go = cpl.error | empty
        m.d.comb += [self.m_cpl.payload.tag.eq(cpl.tag), self.m_cpl.payload.status.eq(cpl.status),
                     self.m_cpl.payload.fail.eq(cpl.fail), self.m_cpl.payload.error.eq(cpl.error),
                     self.m_cpl.payload.timeout.eq(cpl.timeout),
                     self.m_cpl.valid.eq(self.s_cpl.valid & go),
                     self.s_cpl.ready.eq(self.m_cpl.ready & go)]
        with m.If(~cpl.error):
            m.d.comb += [self.m_cpl.payload.ecc_bits.eq(acc_bits),
                         self.m_cpl.payload.ecc_fail.eq(acc_fail)]
            with m.If(self.m_cpl.valid & self.m_cpl.ready):
                m.d.sync += [acc_bits.eq(0), acc_fail.eq(0)]
        return m
