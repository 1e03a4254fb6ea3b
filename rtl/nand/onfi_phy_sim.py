# SPDX-License-Identifier: BSD-2-Clause
"""ONFI simulation PHY for Verilator (Verilog module `onfi_phy_sim`).

The PHY of `OnfiPhySignature` (rtl/nand/onfi_phy_if.py) in plain RTL, so an engine and a die
model meet at exact pin edges in simulation:

- Outputs: every pin is a register of the engine clock. Two-phase pins (RE#, DQ, DQS) use a
  double-edge register built from one rising-edge and one falling-edge flip-flop whose XOR is
  the pin (the falling-edge half is clocked by the inverted engine clock, an Amaranth domain
  with clk_edge="neg"): phase 0 appears at the rising edge, phase 1 half a clock later, one
  clock after the engine set them (PHY_OUT_LATENCY). DQ and DQS are split into _o / _oe / _i
  (Verilator has no tri-states here; a board PHY has IOBUFs).
- DQ sampling for SDR: two engine-clock registers (PHY_IN_LATENCY).
- DQS capture for NV-DDR2 data-out, as a real PHY: the die's DQS itself clocks the capture
  registers (rising edge: byte 0 kept; falling edge: the pair written to a small buffer), so
  DQ is taken at the DQS edges with the die's own alignment; in simulation the DQS-to-DQ
  delay a board PHY needs (IDELAY, a quarter period) is zero and the registers take the DQ
  value the die drives with the edge. The buffer's write pointer is Gray coded and crosses to
  the engine clock through a two-flop synchroniser; the engine side reads one pair per clock
  while `rx_en` is high and discards everything while it is low.
See rtl/nand/README.md ("onfi_phy_sim").
"""

from amaranth.hdl import ClockDomain, ClockSignal, Module, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .onfi_phy_if import RX_DEPTH, OnfiPhySignature, add_dqs_capture

__all__ = ["OnfiPhySim", "RX_DEPTH", "pin_members"]



def pin_members(n_ways):
    """The ONFI pins of a PHY in simulation, named as the die model's OnfiBus expects."""
    all_ones = (1 << n_ways) - 1
    return {
        "ce_n": Out(n_ways, init=all_ones),
        "cle": Out(1),
        "ale": Out(1),
        "we_n": Out(1, init=1),
        "re_n": Out(1, init=1),
        "wp_n": Out(1, init=0),
        "dq_o": Out(8),
        "dq_oe": Out(1),
        "dq_i": In(8),
        "dqs_o": Out(1),
        "dqs_oe": Out(1),
        "dqs_i": In(1),
        "rb_n": In(n_ways, init=all_ones),
    }


class OnfiPhySim(wiring.Component):
    """ONFI PHY for simulation.

    Parameters
    ----------
    n_ways : int, 1..8 (default 1)
        Chip enables and R/B# inputs.

    Ports
    -----
    phy : In(OnfiPhySignature(n_ways)); the engine side (see rtl/nand/onfi_phy_if.py)
    ce_n, cle, ale, we_n, re_n, wp_n, dq_o, dq_oe, dqs_o, dqs_oe : ONFI outputs
    dq_i, dqs_i, rb_n : ONFI inputs (dqs_i clocks the read capture)
    """

    def __init__(self, n_ways=1):
        if isinstance(n_ways, bool) or not isinstance(n_ways, int) or not 1 <= n_ways <= 8:
            self._MustUse__silence = True
            raise ValueError(f"OnfiPhySim: n_ways must be an int in 1..8, got {n_ways!r}")
        self.n_ways = n_ways
        super().__init__({
            "phy": In(OnfiPhySignature(n_ways)),
            **pin_members(n_ways),
        })

    def elaborate(self, platform):
        m = Module()
        phy = self.phy

        # The falling-edge half of the double-edge output registers
        m.domains.sync_n = sync_n = ClockDomain("sync_n", clk_edge="neg", local=True)
        m.d.comb += [sync_n.clk.eq(ClockSignal("sync")), sync_n.rst.eq(ResetSignal("sync"))]

        # Single-phase outputs: one register
        m.d.sync += [
            self.ce_n.eq(phy.ce_n), self.cle.eq(phy.cle), self.ale.eq(phy.ale),
            self.we_n.eq(phy.we_n), self.wp_n.eq(phy.wp_n),
            self.dq_oe.eq(phy.dq_oe), self.dqs_oe.eq(phy.dqs_oe),
        ]

        def ddr_out(pin, d0, d1, width, init=0):
            # q = a ^ b ^ init; a (rising edge) <- d0 ^ b ^ init makes q = d0 after the rising
            # edge; b (falling edge) <- d1 ^ a ^ init makes q = d1 after the falling edge. d1
            # is delayed a cycle so both phases come from the same engine cycle.
            a = Signal(width, name=f"{pin.name}_a")
            b = Signal(width, name=f"{pin.name}_b")
            d1_q = Signal(width, name=f"{pin.name}_d1", init=init)
            m.d.sync += [a.eq(d0 ^ b ^ init), d1_q.eq(d1)]
            m.d.sync_n += b.eq(d1_q ^ a ^ init)
            m.d.comb += pin.eq(a ^ b ^ init)

        ddr_out(self.re_n, phy.re_n.p0, phy.re_n.p1, 1, init=1)
        ddr_out(self.dq_o, phy.dq_o.p0, phy.dq_o.p1, 8)
        ddr_out(self.dqs_o, phy.dqs_o.p0, phy.dqs_o.p1, 1)

        # DQ sampled by the engine clock (SDR data-out)
        dq_s1 = Signal(8)
        m.d.sync += [dq_s1.eq(self.dq_i), phy.dq_i.eq(dq_s1)]
        m.d.comb += phy.rb_n.eq(self.rb_n)

        # DQS capture: the die's DQS clocks the capture registers (no delay in simulation)
        add_dqs_capture(m, self.dqs_i, self.dq_i, phy)
        return m
