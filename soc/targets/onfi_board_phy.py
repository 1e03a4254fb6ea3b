# SPDX-License-Identifier: BSD-2-Clause
"""OnfiBoardPhy: one flash channel's pins of the SoC (nand_subsystem's SDR engine pins) through
the 7-series ONFI PHY to the pads of a NAND daughter card (Verilog module `onfi_board_phy`).

    nand_subsystem ch<i> pins ── connect_sdr_engine ── OnfiPhyXilinx7 ── pads (FMC)
    (dq_o/dq_oe/dq_i, ce_n, ...)  (both phases alike,   (ODDR/IDDR/IOBUF,
                                   no DQS capture)       IDELAYE2 on DQS)

The engine then sees its pins PHY_OUT_LATENCY cycles late and DQ PHY_IN_LATENCY cycles late
(LATENCY below); the SoC adds that to tREA's sampling margin (SsdlabSoC onfi_phy_latency).
The DQS pad is placed and driven low-impedance-off (SDR modes never use it); NV-DDR2 on a board
needs the NV-DDR2 engine in nand_subsystem, which it does not have yet.
"""

from amaranth.hdl import Const, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from rtl.nand.nand_subsystem import pins_signature
from rtl.nand.onfi_phy_if import connect_sdr_engine
from rtl.nand.onfi_phy_xilinx7 import LINT_BLACKBOXES, OnfiPhyXilinx7

__all__ = ["OnfiBoardPhy", "LATENCY", "LINT_BLACKBOXES", "verilog"]

LATENCY = 1 + 2         # onfi_phy_xilinx7: PHY_OUT_LATENCY 1, PHY_IN_LATENCY 2


class OnfiBoardPhy(wiring.Component):
    """n_ways: 1..8 (the SoC's); the pads are OnfiPhyXilinx7's (single-ended DQS and RE#)."""

    def __init__(self, n_ways):
        self.n_ways = n_ways
        super().__init__({"ch": In(pins_signature(n_ways))})    # ch__dq_o, ... ch__rb_n
        self.phy = OnfiPhyXilinx7(n_ways=n_ways)

    def elaborate(self, platform):
        m = Module()
        m.submodules.phy = phy = self.phy
        connect_sdr_engine(m, self.ch, phy.phy)
        m.d.comb += [phy.dqs_delay.eq(Const(0, 5)), phy.dqs_delay_load.eq(0)]
        return m


def verilog(n_ways):
    """The module's Verilog text (pads: dq, dqs, re_n, we_n, ce_n, cle, ale, wp_n, rb_n)."""
    from amaranth.back import verilog as back
    return back.convert(OnfiBoardPhy(n_ways), name="onfi_board_phy", emit_src=False,
                        strip_internal_attrs=True)
