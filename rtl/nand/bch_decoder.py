# SPDX-License-Identifier: BSD-2-Clause
"""BCH decoder of one channel's read data (Verilog module `bch_decoder`).

Takes codewords as bch_encoder writes them (data_bytes of data, then the parity room) and
gives back each codeword's data, corrected, followed by a status: the bits it corrected, or
that the codeword was uncorrectable. The code is spec/bch.py's (Linux lib/bch.c's): it
corrects up to t bit errors anywhere in the data and parity, and reports failure exactly
when lib/bch.c's decode_bch does (more errors are detected or, as in every bounded-distance
decoder, miscorrected into another codeword). See rtl/nand/README.md ("bch_decoder").

Two stages, so a codeword streams in while the previous one is corrected:

1. Syndromes: the odd syndromes S_1, S_3 .. S_(2t-1) of the codeword, one XOR network per
   syndrome over a beat (Horner's rule unrolled over 8 * width bits); the data goes into one
   half of a two-codeword buffer. Bits of the parity room past the parity are ignored.
2. Correction: the inversion-free Berlekamp-Massey algorithm, one of its 2t iterations per
   cycle (the even syndromes are squares of the odd ones), gives the error locator; a Chien
   search, 8 * width positions per cycle in stream order, flips the data bits whose position
   is a root as the data leaves the buffer, then goes on over the parity to count every root.
   The codeword is corrected when the roots number the locator's degree and all lie inside
   the codeword.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from spec.bch import linear_map

from .nand_common import bch_code, enabled_domain, gf2_map, gf_mul

__all__ = ["BchDecoder", "bch_status_layout"]


def bch_status_layout(t):
    """A codeword's outcome: `corrected` bits flipped back (0 when failed), `failed`: more
    errors than the code corrects were detected. A failed codeword's data is not to be used:
    it leaves while the search still runs, so bits at the locator's roots in the data are
    flipped before the failure is known (a retry or a parity rebuild replaces it)."""
    return data.StructLayout({"corrected": unsigned(max(t, 1).bit_length()),
                              "failed": unsigned(1)})


class BchDecoder(wiring.Component):
    """Corrects codewords of a byte stream and reports each one's status.

    Parameters
    ----------
    m, t, data_bytes, parity_bytes, width :
        The code and the stream, as BchEncoder's (the same ranges and checks).

    Ports
    -----
    s_data : stream in, 8 * width bits: each codeword's data then its parity room, as read
        from flash (no framing: data_bytes + room bytes make a codeword)
    m_data : stream out, 8 * width bits: each codeword's data bytes, corrected
    m_status : stream out, `bch_status_layout(t)`: one per codeword, after its last data beat
    busy : out, a codeword is being corrected (stage 2 works)
    gate_clocks : bool (default False)
        True: the syndrome, Berlekamp-Massey and Chien registers run on gated clocks that tick
        only while they work (nand_common.enabled_domain), so a simulator skips their XOR
        networks otherwise (for simulation builds); False: clock enables on the one clock (for
        synthesis). The two behave the same, cycle for cycle. Either way a codeword whose
        syndromes are all zero skips the Berlekamp-Massey and Chien registers.

    Timing: stage 1 takes (data_bytes + room) / width cycles per codeword; stage 2 takes
    2t + 3 cycles more than that (taking the syndromes, 2t iterations, the Chien start, the
    status), so back-to-back codewords leave at one per (data_bytes + room) / width + 2t + 3
    cycles without backpressure; a codeword without errors (all syndromes zero) skips the 2t
    iterations: (data_bytes + room) / width + 3. Latency: a codeword's first data byte leaves
    2t + 2 cycles after its last input beat (2 without errors), its status (data_bytes +
    room) / width cycles later.
    """

    def __init__(self, m=14, t=32, data_bytes=1024, parity_bytes=0, width=1, gate_clocks=False):
        try:
            self.code = bch_code("BchDecoder", m, t, data_bytes, parity_bytes, width)
            if not isinstance(gate_clocks, bool):
                raise ValueError(f"BchDecoder: gate_clocks must be a bool, got {gate_clocks!r}")
        except ValueError:
            self._MustUse__silence = True
            raise
        self.width = width
        self.gate_clocks = gate_clocks
        super().__init__({
            "s_data": In(stream.Signature(8 * width)),
            "m_data": Out(stream.Signature(8 * width)),
            "m_status": Out(stream.Signature(bch_status_layout(t))),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        code, w, t, gm = self.code, self.width, self.code.t, self.code.m
        bits = 8 * w
        nb = code.frame_bits                      # codeword bits as streamed (incl. the room)
        valid_bits = 8 * code.data_bytes + code.ecc_bits     # bits that carry the code
        data_beats = code.data_bytes // w
        beats = nb // bits

        # The received word r(x): stream bit g (byte g // 8, its most significant bit first)
        # is the coefficient of x^(nb-1-g), room bits past the parity forced to 0. The stream
        # bit of payload bit j of a beat is q(j): byte j // 8, bit 7 - j % 8 of it.
        def q_of(j):
            return 8 * (j // 8) + 7 - j % 8

        # Each stage's registers live in a domain that ticks only when the stage works
        # (gate_clocks; else clock enables): "syn" on input beats, "bm" while the
        # Berlekamp-Massey step runs, "chien" while the Chien search does; the sequencer is
        # on the plain clock. A codeword passes from stage 1 to stage 2 by a toggle pair
        # (a_count, b_count), one register in each.

        # Stage 1: syndromes, buffer ----------------------------------------------------------
        a_fire = Signal()
        d_syn = enabled_domain(m, "syn", a_fire, self.gate_clocks)
        mem = Memory(shape=unsigned(bits), depth=2 * data_beats, init=[])
        m.submodules.mem = mem
        wr = mem.write_port(domain=d_syn)
        rd = mem.read_port(domain="sync", transparent_for=())

        odd = list(range(1, 2 * t, 2))
        syn = {j: Signal(gm, name=f"s{j}") for j in odd}
        a_beat = Signal(range(beats + 1))
        a_half = Signal()                      # the buffer half stage 1 fills
        a_count = Signal()                     # codewords stage 1 finished, mod 2
        b_count = Signal()                     # codewords stage 2 took, mod 2
        a_done = Signal()                      # a whole codeword in, syndromes ready
        m.d.comb += a_done.eq(a_count != b_count)

        def covered(beat, pos):
            """The bits of beat number `beat` that carry the code: bit j is set when its stream
            bit, beat * bits + pos(j), is below valid_bits (the rest: room past the parity)."""
            edge = valid_bits // bits          # the beat holding the first ignored bit
            part = sum(1 << j for j in range(bits) if edge * bits + pos(j) < valid_bits)
            return Mux(beat < edge, (1 << bits) - 1, Mux(beat == edge, part, 0))

        # the beat's payload with the bits past the parity cleared
        keep = Signal(bits)
        m.d.comb += keep.eq(covered(a_beat, q_of))
        payload = self.s_data.payload & keep
        first = a_beat == 0                    # a codeword's first beat: Horner from zero
        syn_next = {}
        for j in odd:
            def horner(v, j=j):
                s, d = v & ((1 << gm) - 1), v >> gm
                s = code.mul(s, code.alpha(j * bits))
                for jj in range(bits):
                    if d >> jj & 1:
                        s ^= code.alpha(j * (bits - 1 - q_of(jj)))
                return s
            syn_next[j] = gf2_map(Cat(Mux(first, 0, syn[j]), payload),
                                  linear_map(gm + bits, gm, horner))

        m.d.comb += [
            a_fire.eq(self.s_data.valid & self.s_data.ready),
            self.s_data.ready.eq(~a_done),
            wr.addr.eq(Mux(a_half, data_beats, 0) + a_beat),
            wr.data.eq(self.s_data.payload),
            wr.en.eq(a_fire & (a_beat < data_beats)),
        ]
        with m.If(a_fire):
            m.d[d_syn] += [syn[j].eq(syn_next[j]) for j in odd]
            m.d[d_syn] += a_beat.eq(a_beat + 1)
            with m.If(a_beat == beats - 1):
                m.d[d_syn] += [a_beat.eq(0), a_half.eq(~a_half), a_count.eq(~a_count)]

        # Stage 2: Berlekamp-Massey ------------------------------------------------------------
        # sq: the syndromes still to enter the window (S_(r+1) first at iteration r); win:
        # S_r, S_(r-1) .. S_(r-t+1) (zeros before S_1). lam: the locator, bm_b: its correction
        # polynomial, gamma, k: the inversion-free algorithm's scale and length counter.
        bm_load = Signal()                     # take a codeword with errors
        bm_run = Signal()
        d_bm = enabled_domain(m, "bm", bm_load | bm_run, self.gate_clocks)
        sq = [Signal(gm, name=f"sq{i}") for i in range(2 * t)]
        win = [Signal(gm, name=f"win{i}") for i in range(t)]
        lam = [Signal(gm, name=f"lam{i}") for i in range(t + 1)]
        bm_b = [Signal(gm, name=f"bmb{i}") for i in range(t + 1)]
        gamma = Signal(gm)
        k = Signal(range(-2 * t - 1, 2 * t + 2))
        r = Signal(range(2 * t + 1))
        b_half = Signal()
        clean = Signal()                       # all syndromes zero: no errors, no search

        window = [sq[0]] + win
        delta = 0
        for i in range(t + 1):
            delta = delta ^ gf_mul(m, code, lam[i], window[i], f"d{i}")
        delta_s = Signal(gm)
        m.d.comb += delta_s.eq(delta)
        # lam_i <- gamma * lam_i + delta * b_(i-1)
        lam_next = [gf_mul(m, code, gamma, lam[0], "g0")]
        for i in range(1, t + 1):
            lam_next.append(gf_mul(m, code, gamma, lam[i], f"g{i}") ^
                            gf_mul(m, code, delta_s, bm_b[i - 1], f"e{i}"))

        # the even syndromes from the odd ones: S_(o * 2^a) = S_o^(2^a), a linear map
        def power_map(a):
            return linear_map(gm, gm, lambda v: _frobenius(code, v, a))
        syn_all = []
        for j in range(1, 2 * t + 1):
            o, a = j, 0
            while o % 2 == 0:
                o, a = o // 2, a + 1
            syn_all.append(syn[o] if a == 0 else gf2_map(syn[o], power_map(a)))
        syn_zero = Signal()
        m.d.comb += syn_zero.eq(Cat(*syn.values()) == 0)

        with m.If(bm_load):
            m.d[d_bm] += [r.eq(0), gamma.eq(1), k.eq(0)]
            m.d[d_bm] += [sq[i].eq(syn_all[i]) for i in range(2 * t)]
            m.d[d_bm] += [x.eq(0) for x in win]
            m.d[d_bm] += [lam[0].eq(1), bm_b[0].eq(1)]
            m.d[d_bm] += [x.eq(0) for x in lam[1:] + bm_b[1:]]
        with m.If(bm_run):
            m.d[d_bm] += [sq[i].eq(sq[i + 1]) for i in range(2 * t - 1)]
            m.d[d_bm] += sq[2 * t - 1].eq(0)
            m.d[d_bm] += [win[0].eq(sq[0])] + [win[i].eq(win[i - 1]) for i in range(1, t)]
            m.d[d_bm] += [lam[i].eq(lam_next[i]) for i in range(t + 1)]
            with m.If((delta_s != 0) & (k >= 0)):
                m.d[d_bm] += [bm_b[i].eq(lam[i]) for i in range(t + 1)]
                m.d[d_bm] += [gamma.eq(delta_s), k.eq(-k - 1)]
            with m.Else():
                m.d[d_bm] += [bm_b[0].eq(0)] + [bm_b[i].eq(bm_b[i - 1]) for i in range(1, t + 1)]
                m.d[d_bm] += k.eq(k + 1)
            m.d[d_bm] += r.eq(r + 1)

        # Stage 2: Chien search ----------------------------------------------------------------
        # c[i] = lam_i * alpha^(-i * p0) for the step's first position p0 = nb-1 - bits*step;
        # position p0 - q is a root when lam_0 + sum_i c[i] * alpha^(i*q) = 0.
        ch_load = Signal()
        ch_step = Signal()
        d_chien = enabled_domain(m, "chien", ch_load | ch_step, self.gate_clocks)
        c = [Signal(gm, name=f"c{i}") for i in range(1, t + 1)]
        step = Signal(range(beats + 1))
        deg = Signal(range(t + 1))
        nroots = Signal(range(nb + 1))
        bad = Signal()                         # a root outside the codeword's bits

        def cmul(x, const):
            return gf2_map(x, linear_map(gm, gm, lambda v: code.mul(v, const)))

        root = Signal(bits)                    # stream bit q of this step is a root
        for qq in range(bits):
            v = lam[0]
            for i in range(1, t + 1):
                v = v ^ (c[i - 1] if qq == 0 else cmul(c[i - 1], code.alpha(i * qq)))
            m.d.comb += root[qq].eq(v == 0)
        # the step's stream bits inside the code
        in_code = Signal(bits)
        m.d.comb += in_code.eq(covered(step, lambda qq: qq))
        flip = Cat(*[root[q_of(j)] for j in range(bits)])       # root as payload bits
        n_here = sum((root & in_code)[qq] for qq in range(bits))

        # the degree of the locator: its highest nonzero coefficient
        deg_now = Const(0, range(t + 1))
        for i in range(1, t + 1):
            deg_now = Mux(lam[i] != 0, i, deg_now)

        with m.If(ch_load):
            m.d[d_chien] += [c[i - 1].eq(cmul(lam[i], code.alpha(-i * (nb - 1))))
                          for i in range(1, t + 1)]
            m.d[d_chien] += [deg.eq(deg_now), nroots.eq(0), bad.eq(0)]
        with m.If(ch_step):
            m.d[d_chien] += [c[i - 1].eq(cmul(c[i - 1], code.alpha(i * bits)))
                          for i in range(1, t + 1)]
            m.d[d_chien] += nroots.eq(nroots + n_here)
            with m.If((root & ~in_code) != 0):
                m.d[d_chien] += bad.eq(1)

        rd_base = Mux(b_half, data_beats, 0)

        with m.FSM():
            with m.State("IDLE"):
                with m.If(a_done):
                    # take the codeword; stage 1 goes on with the other half. No errors: the
                    # data leaves as it is, no Berlekamp-Massey, no search.
                    m.d.sync += [b_count.eq(~b_count), b_half.eq(~a_half),
                                 clean.eq(syn_zero), step.eq(0)]
                    m.d.comb += bm_load.eq(~syn_zero)
                    with m.If(syn_zero):
                        m.next = "INIT"
                    with m.Else():
                        m.next = "BM"
            with m.State("BM"):
                m.d.comb += [self.busy.eq(1), bm_run.eq(1)]
                with m.If(r == 2 * t - 1):
                    m.next = "INIT"
            with m.State("INIT"):
                m.d.comb += [self.busy.eq(1), rd.addr.eq(rd_base), ch_load.eq(~clean)]
                m.next = "CHIEN"
            with m.State("CHIEN"):
                m.d.comb += self.busy.eq(1)
                advance = Signal()
                is_data = step < data_beats
                m.d.comb += [
                    self.m_data.payload.eq(rd.data ^ Mux(clean, 0, flip)),
                    self.m_data.valid.eq(is_data),
                    advance.eq(~is_data | self.m_data.ready),
                    rd.addr.eq(rd_base + step + advance),
                    ch_step.eq(advance & ~clean),
                ]
                with m.If(advance):
                    m.d.sync += step.eq(step + 1)
                    with m.If(step == beats - 1):
                        m.next = "STATUS"
            with m.State("STATUS"):
                m.d.comb += self.busy.eq(1)
                failed = ~clean & (bad | (nroots != deg))
                m.d.comb += [
                    self.m_status.valid.eq(1),
                    self.m_status.payload.failed.eq(failed),
                    self.m_status.payload.corrected.eq(Mux(failed | clean, 0, nroots)),
                ]
                with m.If(self.m_status.ready):
                    m.next = "IDLE"
        return m


def _frobenius(code, v, a):
    """v^(2^a) in GF(2^m)."""
    for _ in range(a):
        v = code.mul(v, v)
    return v
