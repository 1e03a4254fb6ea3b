# SPDX-License-Identifier: BSD-2-Clause
"""BCH encoder of one channel's write data (Verilog module `bch_encoder`).

Takes a page's data as codewords of `data_bytes` bytes and passes each codeword's data
through unchanged, followed by its parity: the code of spec/bch.py (Linux lib/bch.c's, so
`bchlib` computes the same bytes), `parity_bytes` bytes on the stream (the parity, then zero
bytes up to the persona's room in the spare). `width` bytes move per cycle; the parity is the
remainder of the division by g(x), kept in a register that a parallel LFSR (one XOR network
per register bit, from the serial LFSR unrolled over a beat's 8 * width bits) updates on
every data beat. See rtl/nand/README.md ("bch_encoder").
"""

from amaranth.hdl import Cat, Const, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from spec.bch import linear_map

from .nand_common import bch_code, gf2_map

__all__ = ["BchEncoder"]


class BchEncoder(wiring.Component):
    """Parity of every codeword of a byte stream, appended after its data.

    Parameters
    ----------
    m : int, 5..15 (default 14)
        The field GF(2^m); the codeword (data and parity room, in bits) must fit in 2^m - 1.
    t : int, 1..64 (default 32)
        Correctable bits per codeword; the parity is deg g(x) <= m * t bits.
    data_bytes : int, 1..4096 (default 1024)
        Data bytes per codeword (the persona's `ecc.codeword_bytes`).
    parity_bytes : int, 0..512 (default 0: the parity's own size, ceil(deg g / 8))
        Bytes the parity occupies on the stream (the persona's `ecc.parity_bytes`): the parity
        then zero bytes. Must hold the parity.
    width : 1, 2, 4 or 8 (default 1)
        Bytes per beat; must divide data_bytes and the parity room. Byte i of a beat is bits
        8i+7..8i and comes before byte i+1.

    Ports
    -----
    s_data : stream in, 8 * width bits: the data, codeword after codeword (no framing: every
        data_bytes bytes close a codeword)
    m_data : stream out, 8 * width bits: each codeword's data then its parity room
    """

    def __init__(self, m=14, t=32, data_bytes=1024, parity_bytes=0, width=1):
        try:
            self.code = bch_code("BchEncoder", m, t, data_bytes, parity_bytes, width)
        except ValueError:
            self._MustUse__silence = True
            raise
        self.width = width
        super().__init__({
            "s_data": In(stream.Signature(8 * width)),
            "m_data": Out(stream.Signature(8 * width)),
        })

    def elaborate(self, platform):
        m = Module()
        code, w = self.code, self.width
        bits = 8 * w
        e = code.ecc_bits
        room = 8 * code.room
        data_beats = code.data_bytes // w
        parity_beats = code.room // w

        # The remainder sits in the top e bits of a room-wide register (zeros below), so the
        # parity beats are its top bits, shifted out a beat at a time.
        sr = Signal(room)
        rem = sr[room - e:]
        beat = Signal(range(max(data_beats, parity_beats) + 1))
        in_parity = Signal()

        # One data beat through the serial LFSR, bit by bit in stream order (byte 0 first,
        # each byte's most significant bit first). Feeding the message at the top makes the
        # step linear in rem and the data together: rem' = (rem << bits) ^ G(x), where x's
        # stream bit p is the data's XOR rem[e-1-p] (the bits the shift pushes out) and G is
        # the step of an empty register on x. So the XOR network sees only the beat's bits,
        # not the whole remainder (a tenth of the logic the plain map of rem and data takes).
        g_low = code.generator & ((1 << e) - 1)

        def step(v):
            r, d = v & ((1 << e) - 1), v >> e
            for i in range(w):
                for b in range(7, -1, -1):
                    fb = (d >> (8 * i + b) & 1) ^ (r >> (e - 1))
                    r = (r << 1) & ((1 << e) - 1)
                    if fb:
                        r ^= g_low
            return r

        def q_of(p):                    # stream bit p -> payload bit (byte p // 8, MSB first)
            return 8 * (p // 8) + 7 - p % 8

        def g_of(x):                    # G: x in stream order, through the empty register
            d = sum(1 << q_of(p) for p in range(bits) if x >> p & 1)
            return step(d << e)
        x = Cat(*[self.s_data.payload[q_of(p)] ^ (rem[e - 1 - p] if p < e else 0)
                  for p in range(bits)])
        shifted = Cat(Const(0, bits), rem[:e - bits]) if bits < e else Const(0, e)
        rem_next = shifted ^ gf2_map(x, linear_map(bits, e, g_of))

        # The parity's beat: byte i of the beat is the (i+1)-th byte from the top.
        out_parity = Cat(*[sr[room - 8 * (i + 1):room - 8 * i] for i in range(w)])

        with m.If(~in_parity):
            m.d.comb += [
                self.m_data.payload.eq(self.s_data.payload),
                self.m_data.valid.eq(self.s_data.valid),
                self.s_data.ready.eq(self.m_data.ready),
            ]
            with m.If(self.s_data.valid & self.m_data.ready):
                m.d.sync += [rem.eq(rem_next), beat.eq(beat + 1)]
                with m.If(beat == data_beats - 1):
                    m.d.sync += [beat.eq(0), in_parity.eq(1)]
        with m.Else():
            m.d.comb += [
                self.m_data.payload.eq(out_parity),
                self.m_data.valid.eq(1),
            ]
            with m.If(self.m_data.ready):
                m.d.sync += [sr.eq(sr << bits), beat.eq(beat + 1)]
                with m.If(beat == parity_beats - 1):
                    m.d.sync += [sr.eq(0), beat.eq(0), in_parity.eq(0)]
        return m
