# SPDX-License-Identifier: BSD-2-Clause
"""The engine-side interface of an ONFI PHY (`OnfiPhySignature`), shared by the bus-cycle
engines (`onfi_sdr_engine`, `onfi_nvddr2_engine`) and the PHYs (`onfi_phy_sim`,
`onfi_phy_xilinx7`, `onfi_phy_xilinxus`). Not a core: a signature, an adapter, the DQS
capture every PHY uses and the pad structure the Xilinx PHYs share (`OnfiPhyXilinx`).

Every signal is in the engine's clock domain (`sync`). Outputs towards the pins come in two
phases per clock where DDR needs them: phase 0 is the first half of the clock period (after
the rising edge), phase 1 the second half (after the falling edge). A PHY registers them,
so each pin lags the engine by exactly `PHY_OUT_LATENCY` clock cycles and phase 1 appears
half a clock after phase 0. SDR use sets both phases equal.

Read data comes back two ways: `dq_i`, the DQ pins sampled by the engine clock
(`PHY_IN_LATENCY` cycles after they settle; for SDR data-out), and `rx`, bytes captured on
the die's DQS edges (NV-DDR2 data-out): one pair per DQS period, the byte of the rising edge
in `rx_data.p0`, that of the falling edge in `rx_data.p1`, moved into the engine domain by
the PHY. `rx_en` low discards whatever the PHY captured (the engine raises it for a read
burst), so DQS glitches outside a read never become data. See rtl/nand/README.md
("ONFI PHY interface").
"""

from amaranth.hdl import Array, Cat, ClockDomain, Const, Instance, IOPort, Module, Signal, unsigned
from amaranth.lib import data, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .nand_common import bad_int

__all__ = ["OnfiPhySignature", "PHY_OUT_LATENCY", "PHY_IN_LATENCY", "RX_DEPTH",
           "connect_sdr_engine", "add_dqs_capture", "two_phase", "OnfiPhyXilinx"]

# Clock cycles from an engine output register to the pin (the PHY's output register).
PHY_OUT_LATENCY = 1
# Clock cycles from a settled DQ pin to `dq_i` (the PHY's input register plus one more stage,
# as an IOB flip-flop followed by a fabric register).
PHY_IN_LATENCY = 2
# Captured pairs a PHY buffers (the NV-DDR2 engine never has more than 8 RE# pairs open).
RX_DEPTH = 8


def two_phase(width):
    """A value with one field per phase: `p0` (first half of the clock period, from the
    rising edge) and `p1` (second half, from the falling edge), p0 in the low bits."""
    return data.StructLayout({"p0": unsigned(width), "p1": unsigned(width)})


class OnfiPhySignature(wiring.Signature):
    """The engine's view (Out: towards the PHY) of one 8-bit ONFI channel's PHY.

    n_ways: 1..8, chip enables and R/B# inputs.

    Members (engine's direction):
      ce_n[n_ways], cle, ale, we_n, wp_n   Out  control pins, one value per clock
      re_n {p0, p1}                        Out  RE#, phases 0 and 1
      dq_o {p0, p1} x 8, dq_oe             Out  DQ, phases 0 and 1; output enable per clock
      dqs_o {p0, p1}, dqs_oe               Out  DQS (data-in strobe), phases 0 and 1; enable
      rx_en                                Out  accept DQS-captured read data (else discard)
      rx_ready                             Out  the engine takes `rx_data` this cycle
      dq_i x 8                             In   DQ sampled by the engine clock
      rx_valid                             In   `rx_data` holds a captured pair
      rx_data {p0, p1} x 8                 In   bytes of a DQS rising (p0) and falling edge
      rb_n[n_ways]                         In   R/B#, straight from the pins (asynchronous)
    """

    def __init__(self, n_ways=1):
        if isinstance(n_ways, bool) or not isinstance(n_ways, int) or not 1 <= n_ways <= 8:
            raise ValueError(f"OnfiPhySignature: n_ways must be an int in 1..8, "
                             f"got {n_ways!r}")
        self.n_ways = n_ways
        all_ones = (1 << n_ways) - 1
        super().__init__({
            "ce_n": Out(n_ways, init=all_ones),
            "cle": Out(1),
            "ale": Out(1),
            "we_n": Out(1, init=1),
            "wp_n": Out(1, init=0),
            "re_n": Out(two_phase(1), init={"p0": 1, "p1": 1}),
            "dq_o": Out(two_phase(8)),
            "dq_oe": Out(1),
            "dqs_o": Out(two_phase(1)),
            "dqs_oe": Out(1),
            "rx_en": Out(1),
            "rx_ready": Out(1),
            "dq_i": In(8),
            "rx_valid": In(1),
            "rx_data": In(two_phase(8)),
            "rb_n": In(n_ways, init=all_ones),
        })

    def __eq__(self, other):
        return isinstance(other, OnfiPhySignature) and other.n_ways == self.n_ways

    def __repr__(self):
        return f"OnfiPhySignature({self.n_ways})"


def connect_sdr_engine(m, engine, phy):
    """Drive a PHY interface (`phy`, an `OnfiPhySignature` port in the engine's direction, e.g.
    `OnfiPhySignature(n).create()` connected to a PHY) from an `OnfiSdrEngine`'s flat pins:
    both phases equal, DQS never driven, no DQS capture. The engine then sees its pins
    PHY_OUT_LATENCY cycles late and `dq_i` PHY_IN_LATENCY cycles late, so its `t_rea` register
    must grow by PHY_OUT_LATENCY + PHY_IN_LATENCY cycles (onfi_timing.engine_registers(...,
    sample_margin_ns=1 + (PHY_OUT_LATENCY + PHY_IN_LATENCY) * period_ns))."""
    m.d.comb += [
        phy.ce_n.eq(engine.ce_n), phy.cle.eq(engine.cle), phy.ale.eq(engine.ale),
        phy.we_n.eq(engine.we_n), phy.wp_n.eq(engine.wp_n),
        phy.re_n.p0.eq(engine.re_n), phy.re_n.p1.eq(engine.re_n),
        phy.dq_o.p0.eq(engine.dq_o), phy.dq_o.p1.eq(engine.dq_o), phy.dq_oe.eq(engine.dq_oe),
        phy.dqs_o.eq(Const(0, 2)), phy.dqs_oe.eq(0), phy.rx_en.eq(0), phy.rx_ready.eq(1),
        engine.dq_i.eq(phy.dq_i), engine.rb_n.eq(phy.rb_n),
    ]


def add_dqs_capture(m, dqs_clk, dq_in, phy, depth=RX_DEPTH):
    """The DQS-strobed read capture every PHY shares: `dqs_clk` (the die's DQS, delayed as the
    PHY needs) clocks two reset-less local domains; its rising edge keeps the DQ byte, its
    falling edge writes the pair (rising byte, falling byte) into a `depth`-entry buffer and
    advances a Gray-coded write pointer, which a two-flop synchroniser brings into `sync`.
    There the pairs go out on phy.rx_* while phy.rx_en is high; while it is low the read
    pointer follows the write pointer, so whatever DQS did outside a read is dropped. The
    pair is written by the falling edge itself: a read burst ends with DQS low and no further
    edge, so the last pair must be stored by its own edge."""
    m.domains.dqs_r = dqs_r = ClockDomain("dqs_r", reset_less=True, local=True)
    m.domains.dqs_f = dqs_f = ClockDomain("dqs_f", clk_edge="neg", reset_less=True,
                                          local=True)
    m.d.comb += [dqs_r.clk.eq(dqs_clk), dqs_f.clk.eq(dqs_clk)]
    abits = (depth - 1).bit_length()
    byte0 = Signal(8)
    mem = Array(Signal(two_phase(8), name=f"rx_mem{i}") for i in range(depth))
    wp = Signal(abits + 1)
    wp_gray = Signal(abits + 1)
    m.d.dqs_r += byte0.eq(dq_in)
    wp_next = (wp + 1)[:abits + 1]     # wraps: the Gray code is of the pointer's own width
    m.d.dqs_f += [
        mem[wp[:abits]].eq(byte0 | (dq_in << 8)),
        wp.eq(wp_next),
        wp_gray.eq(wp_next ^ (wp_next >> 1)),
    ]
    wp_gray_s = Signal(abits + 1)
    m.submodules.rx_wp_sync = FFSynchronizer(wp_gray, wp_gray_s, o_domain="sync", stages=2,
                                               reset_less=False)
    wp_s = Signal(abits + 1)
    for i in reversed(range(abits + 1)):
        m.d.comb += wp_s[i].eq(wp_gray_s[i:].xor())
    rp = Signal(abits + 1)
    valid = rp != wp_s
    m.d.comb += [
        phy.rx_valid.eq(valid & phy.rx_en),
        phy.rx_data.eq(mem[rp[:abits]]),
    ]
    with m.If(~phy.rx_en):
        m.d.sync += rp.eq(wp_s)
    with m.Elif(valid & phy.rx_ready):
        m.d.sync += rp.eq(rp + 1)


class OnfiPhyXilinx(wiring.Component):
    """What the Xilinx ONFI PHYs (`onfi_phy_xilinx7`, `onfi_phy_xilinxus`) share, so the two
    families cannot drift apart: the checks of the common parameters, the engine-side ports,
    the pads, and the pad structure: every output through the family's ODDR (control pins
    with both phases equal) into an OBUF (RE# an OBUFDS with `diff_re`), R/B# IBUFs, DQ and
    DQS IOBUFs (DQS an IOBUFDS with `diff_dqs`) whose data and tri-state come from ODDRs, DQ
    sampled for SDR by the family's input path plus one fabric register, and the DQS capture
    of `add_dqs_capture` clocked by the family's DQS clock.

    A family sets TAP_BITS (width of `dqs_delay`) and gives `_oddr(d1, d2, q)` (the ODDR
    Instance), `_dq_input(m, i, pad_in, sdr, sdr_fall)` (bit i from its IOBUF to the SDR
    sample; returns the bit the DQS capture sees) and `_dqs_clock(m, dqs_in)` (the capture
    clock from the DQS IOBUF). `family_error`: the family's own parameter check, or None."""
    TAP_BITS = None

    def __init__(self, n_ways, dqs_delay_taps, diff_dqs, diff_re, family_error=None):
        error = (bad_int("n_ways", n_ways, 1, 8)
                 or bad_int("dqs_delay_taps", dqs_delay_taps, 0, (1 << self.TAP_BITS) - 1))
        if not error:
            for name, value in (("diff_dqs", diff_dqs), ("diff_re", diff_re)):
                if not isinstance(value, bool):
                    error = f"{name} must be a bool, got {value!r}"
        error = error or family_error
        if error:
            self._MustUse__silence = True
            raise ValueError(f"{type(self).__name__}: {error}")
        self.n_ways = n_ways
        self.dqs_delay_taps = dqs_delay_taps
        self.diff_dqs = diff_dqs
        self.diff_re = diff_re
        super().__init__({
            "phy": In(OnfiPhySignature(n_ways)),
            "dqs_delay": In(self.TAP_BITS),
            "dqs_delay_load": In(1),
        })
        # pads
        self.dq = IOPort(8, name="dq")
        if diff_dqs:
            self.dqs_p, self.dqs_n = IOPort(1, name="dqs_p"), IOPort(1, name="dqs_n")
        else:
            self.dqs = IOPort(1, name="dqs")
        if diff_re:
            self.re_p, self.re_c = IOPort(1, name="re_p"), IOPort(1, name="re_c")
        else:
            self.re_n = IOPort(1, name="re_n")
        self.we_n = IOPort(1, name="we_n")
        self.ce_n = IOPort(n_ways, name="ce_n")
        self.cle = IOPort(1, name="cle")
        self.ale = IOPort(1, name="ale")
        self.wp_n = IOPort(1, name="wp_n")
        self.rb_n = IOPort(n_ways, name="rb_n")

    def elaborate(self, platform):
        m = Module()
        phy = self.phy
        count = [0]

        def oddr(d1, d2):
            q = Signal()
            count[0] += 1
            m.submodules[f"oddr{count[0]}"] = self._oddr(d1, d2, q)
            return q

        def obuf(name, value, pad):
            m.submodules[name] = Instance("OBUF", i_I=value, o_O=pad)

        # control outputs: both phases equal
        for name, value, pad in (("we_n", phy.we_n, self.we_n), ("cle", phy.cle, self.cle),
                                 ("ale", phy.ale, self.ale), ("wp_n", phy.wp_n, self.wp_n)):
            obuf(f"obuf_{name}", oddr(value, value), pad)
        for i in range(self.n_ways):
            obuf(f"obuf_ce_n{i}", oddr(phy.ce_n[i], phy.ce_n[i]), self.ce_n[i])
        re_q = oddr(phy.re_n.p0, phy.re_n.p1)
        if self.diff_re:
            m.submodules.obuf_re = Instance("OBUFDS", i_I=re_q, o_O=self.re_p, o_OB=self.re_c)
        else:
            obuf("obuf_re_n", re_q, self.re_n)

        # R/B#: IBUFs, synchronised in the engine
        rb = Signal(self.n_ways)
        for i in range(self.n_ways):
            m.submodules[f"ibuf_rb_n{i}"] = Instance("IBUF", i_I=self.rb_n[i], o_O=rb[i])
        m.d.comb += phy.rb_n.eq(rb)

        # DQ: IOBUF, ODDR out, tri-state through an ODDR; in through the family's path
        dq_in = Signal(8)
        dq_sdr = Signal(8)
        dq_fall_unused = Signal(8)      # the falling-edge sample, not needed for SDR
        dq_capture = []
        for i in range(8):
            t = oddr(~phy.dq_oe, ~phy.dq_oe)
            m.submodules[f"iobuf_dq{i}"] = Instance(
                "IOBUF", i_I=oddr(phy.dq_o.p0[i], phy.dq_o.p1[i]), i_T=t, o_O=dq_in[i],
                io_IO=self.dq[i])
            dq_capture.append(self._dq_input(m, i, dq_in[i], dq_sdr[i], dq_fall_unused[i]))
        m.d.sync += phy.dq_i.eq(dq_sdr)

        # DQS: IOBUF(DS), ODDR out; in to the family's capture clock
        dqs_in = Signal()
        dqs_t = oddr(~phy.dqs_oe, ~phy.dqs_oe)
        dqs_q = oddr(phy.dqs_o.p0, phy.dqs_o.p1)
        if self.diff_dqs:
            m.submodules.iobuf_dqs = Instance("IOBUFDS", i_I=dqs_q, i_T=dqs_t, o_O=dqs_in,
                                              io_IO=self.dqs_p, io_IOB=self.dqs_n)
        else:
            m.submodules.iobuf_dqs = Instance("IOBUF", i_I=dqs_q, i_T=dqs_t, o_O=dqs_in,
                                              io_IO=self.dqs)

        # capture, shared with onfi_phy_sim
        add_dqs_capture(m, self._dqs_clock(m, dqs_in), Cat(*dq_capture), phy)
        return m
