# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's pin front end: the ONFI pins sampled, a latch on every WE# rising edge of a
selected target (the byte before the edge, stamped with the cycle counter) queued in the latch
FIFO for the command engine, and the RE# falling edge that clocks the data-out byte.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its logic
to the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Mux, Signal
from amaranth.lib import data
from amaranth.lib.fifo import SyncFIFOBuffered

from .nand_emulator_defs import TIME_BITS

__all__ = ["NandEmulatorPins"]


class NandEmulatorPins:
    """The pin sampler and latch FIFO of a NandEmulator.

    - emu: the NandEmulator (its pins; n_ways 1..8).
    - m: the emulator's Module.
    - now: the free-running cycle counter that stamps every latch (TIME_BITS).

    After `build()`: `ev` the latch at the FIFO's head (a View: stamp, kind, byte, way) with
    `evq` the FIFO (the engine pops it with `r_en`), `re_fall` / `re_way` the RE# falling edge
    (this cycle) and the target it selects.
    """

    def __init__(self, emu, m, now):
        self.emu, self.m, self.now = emu, m, now

    def _way_of(self, ce):
        """The lowest selected target of a CE# vector."""
        m, W = self.m, self.emu.n_ways
        w = Signal(self.emu.way_bits)
        for i in reversed(range(W)):
            with m.If(~ce[i]):
                m.d.comb += w.eq(i)
        return w

    def build(self):
        emu, m, now, W = self.emu, self.m, self.now, self.emu.n_ways
        way_of = self._way_of
        # a latch on WE# rising (the byte before the edge), RE# falling
        p_we, p_re = Signal(init=1), Signal(init=1)
        p_ce, p_cle, p_ale, p_dq = Signal(W, init=(1 << W) - 1), Signal(), Signal(), Signal(8)
        m.d.sync += [p_we.eq(emu.we_n), p_re.eq(emu.re_n), p_ce.eq(emu.ce_n),
                     p_cle.eq(emu.cle), p_ale.eq(emu.ale), p_dq.eq(emu.dq_o)]

        sel_prev = p_ce != (1 << W) - 1
        latch = emu.we_n & ~p_we & sel_prev
        latch_way = way_of(p_ce)
        self.re_fall = ~emu.re_n & p_re & (emu.ce_n != (1 << W) - 1)
        self.re_way = way_of(emu.ce_n)

        ev_layout = data.StructLayout({"stamp": TIME_BITS, "kind": 2, "byte": 8,
                                       "way": emu.way_bits})
        m.submodules.evq = evq = SyncFIFOBuffered(width=ev_layout.size, depth=8)
        ev_in = data.View(ev_layout, evq.w_data)
        m.d.comb += [evq.w_en.eq(latch), ev_in.stamp.eq(now), ev_in.byte.eq(p_dq),
                     ev_in.kind.eq(Mux(p_cle, 0, Mux(p_ale, 1, 2))), ev_in.way.eq(latch_way)]
        self.evq = evq
        self.ev = data.View(ev_layout, evq.r_data)
