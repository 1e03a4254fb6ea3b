# SPDX-License-Identifier: BSD-2-Clause
"""Flash built-in self test for one channel (Verilog module `nand_bist`).

Sits on a channel's data streams of `nand_backend` / `nand_die_scheduler` in place of buffer
memory: answers every write request (`s_wreq`) with a pseudo-random page seeded by the
request's (buffer, plane), and checks every read byte (`s_rdata`) against the same sequence
seeded by the read's (buffer, plane), restarting at each plane's first byte. Program a page
with buffer B, read it back with buffer B: zero mismatches. Like LiteDRAM's BIST, it makes
long array runs checkable at simulation (or hardware) speed without moving page data through
software. Reads must start at column 0 (the pattern is by offset from the page start). The
buffer handle FIXED_BUFFER (FFFFh) is not a pattern: it returns the bytes of the `fixed`
input, P1 first, repeating, for SET FEATURES parameters during bring-up.
See rtl/nand/README.md ("nand_bist").
"""

from amaranth.hdl import Cat, Const, Module, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .nand_die_scheduler import TAG_BITS, rdata_layout, wreq_layout

__all__ = ["NandBist", "pattern_seed", "pattern_bytes", "FIXED_BUFFER"]

FIXED_BUFFER = 0xFFFF


def pattern_seed(buffer, plane):
    """The xorshift32 state a page of (buffer, plane) starts from (never 0)."""
    return ((buffer << 8) | (plane << 6) | 0x2A) ^ 0x9E3779B9


def pattern_bytes(buffer, plane, n):
    """The first n bytes of the pattern of (buffer, plane): the Python model of the core."""
    x = pattern_seed(buffer, plane)
    out = bytearray()
    for _ in range(n):
        out.append(x & 0xFF)
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
    return bytes(out)


def _step(x):
    """One xorshift32 step as Amaranth expressions."""
    a = x ^ (x << 13)[:32]
    b = a ^ (a >> 17)
    return b ^ (b << 5)[:32]


class NandBist(wiring.Component):
    """Pattern generator and checker on one channel's data streams.

    Parameters
    ----------
    max_len : int, 1..65536 (default 18432): as the back end's (sets the length width)

    Ports
    -----
    s_wreq : stream of wreq_layout(max_len), in (the back end's m_wreq)
    m_wdata : stream of unsigned(8), out (to the back end's s_wdata)
    s_rdata : stream of rdata_layout, in (the back end's m_rdata); always ready
    check : in; compare read bytes (when low they are counted, not compared: ID, features)
    fixed : in, 32 bits; the bytes a FIXED_BUFFER request gets (P1 = fixed[7:0])
    written, read, mismatches : out, 32-bit counters of bytes
    first_bad_tag, first_bad_valid : out; the tag of the first mismatching read
    """

    def __init__(self, max_len=18432):
        if isinstance(max_len, bool) or not isinstance(max_len, int) or \
                not 1 <= max_len <= 1 << 16:
            self._MustUse__silence = True
            raise ValueError(f"NandBist: max_len must be an int in 1..65536, got {max_len!r}")
        self.max_len = max_len
        super().__init__({
            "s_wreq": In(stream.Signature(wreq_layout(max_len))),
            "m_wdata": Out(stream.Signature(unsigned(8))),
            "s_rdata": In(stream.Signature(rdata_layout)),
            "check": In(1, init=1),
            "fixed": In(32),
            "written": Out(32),
            "read": Out(32),
            "mismatches": Out(32),
            "first_bad_tag": Out(TAG_BITS),
            "first_bad_valid": Out(1),
        })

    def elaborate(self, platform):
        m = Module()

        def seed(buffer, plane):
            return Cat(Const(0x2A, 6), plane, buffer) ^ 0x9E3779B9

        # Generator: one request at a time, one byte per cycle the back end takes.
        gen = Signal(32)
        fixed = Signal()                # this request reads `fixed`, rotating a byte a beat
        left = Signal(self.max_len.bit_length())
        m.d.comb += [self.s_wreq.ready.eq(left == 0), self.m_wdata.valid.eq(left != 0),
                     self.m_wdata.payload.eq(gen[:8])]
        req = self.s_wreq.payload
        with m.If(self.s_wreq.valid & (left == 0)):
            m.d.sync += [left.eq(req.length), fixed.eq(req.buffer == FIXED_BUFFER)]
            with m.If(req.buffer == FIXED_BUFFER):
                m.d.sync += gen.eq(self.fixed)
            with m.Else():
                m.d.sync += gen.eq(seed(req.buffer, req.plane))
        with m.If(self.m_wdata.valid & self.m_wdata.ready):
            m.d.sync += [left.eq(left - 1), self.written.eq(self.written + 1)]
            with m.If(fixed):
                m.d.sync += gen.eq(gen.rotate_right(8))
            with m.Else():
                m.d.sync += gen.eq(_step(gen))

        # Checker: a plane's bytes follow each other until `last`; the first byte seeds.
        chk = Signal(32)
        midway = Signal()           # inside a plane's data (after its first byte)
        beat = self.s_rdata.payload
        expect = Signal(32)
        m.d.comb += [self.s_rdata.ready.eq(1),
                     expect.eq(chk)]
        with m.If(~midway):
            m.d.comb += expect.eq(seed(beat.buffer, beat.plane))
        with m.If(self.s_rdata.valid):
            m.d.sync += [chk.eq(_step(expect)), midway.eq(~beat.last),
                         self.read.eq(self.read + 1)]
            with m.If(self.check & (beat.data != expect[:8])):
                m.d.sync += self.mismatches.eq(self.mismatches + 1)
                with m.If(~self.first_bad_valid):
                    m.d.sync += [self.first_bad_valid.eq(1), self.first_bad_tag.eq(beat.tag)]
        return m
