# SPDX-License-Identifier: BSD-2-Clause
"""OnfiBoardPhy: one flash channel's pins of the SoC (nand_subsystem's SDR engine pins) through
the family's ONFI PHY to the pads of a NAND daughter card (Verilog module `onfi_board_phy`).
Built `nvddr2`, the SoC's channel is the engine side of the PHY itself (nand_subsystem
with_nvddr2: both engines, two-phase outputs, DQS capture), connected straight through, and
the DQS input delay comes from the SoC (`dqs_delay`, loaded on `dqs_delay_load`).

    nand_subsystem ch<i> pins ── connect_sdr_engine ── OnfiPhyXilinx7 ── pads (FMC)
    (dq_o/dq_oe/dq_i, ce_n, ...)  (both phases alike,   (ODDR/IDDR/IOBUF, IDELAYE2 on DQS)
                                   no DQS capture)      or OnfiPhyXilinxUS (UltraScale/+:
                                                        ODDRE1/IDDRE1, IDELAYE3 on DQ)

The engine then sees its pins PHY_OUT_LATENCY cycles late and DQ PHY_IN_LATENCY cycles late
(LATENCY below); the SoC adds that to tREA's sampling margin (SsdlabSoC onfi_phy_latency).
In SDR builds the DQS pad is placed and its driver off (SDR modes never use it).
"""

from amaranth.hdl import Const, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from rtl.nand import onfi_phy_xilinx7, onfi_phy_xilinxus
from rtl.nand.nand_subsystem import pins_signature
from rtl.nand.onfi_phy_if import OnfiPhySignature, connect_sdr_engine

__all__ = ["OnfiBoardPhy", "LATENCY", "PHYS", "verilog"]

LATENCY = 1 + 2         # both PHYs: PHY_OUT_LATENCY 1, PHY_IN_LATENCY 2
# Board.onfi -> (PHY module: its LINT_BLACKBOXES and .vlt waivers, PHY class, kwargs)
PHYS = {
    "xilinx7": (onfi_phy_xilinx7, onfi_phy_xilinx7.OnfiPhyXilinx7, {}),
    "xilinxus": (onfi_phy_xilinxus, onfi_phy_xilinxus.OnfiPhyXilinxUS,
                 {"sim_device": "ULTRASCALE"}),
    "xilinxusp": (onfi_phy_xilinxus, onfi_phy_xilinxus.OnfiPhyXilinxUS,
                  {"sim_device": "ULTRASCALE_PLUS"}),
}


class OnfiBoardPhy(wiring.Component):
    """n_ways: 1..8 (the SoC's); onfi: a key of PHYS; nvddr2: the SoC's channel is a PHY
    interface (ch__re_n[1:0], ch__rx_data, ...) and `dqs_delay` / `dqs_delay_load` are ports;
    the pads are the PHY's (single-ended DQS and RE#)."""

    def __init__(self, n_ways, onfi="xilinx7", nvddr2=False):
        self.n_ways = n_ways
        self.nvddr2 = nvddr2
        _, cls, kw = PHYS[onfi]
        self.phy = cls(n_ways=n_ways, **kw)
        if nvddr2:
            members = {"ch": In(OnfiPhySignature(n_ways)),        # flipped: the PHY's side
                       "dqs_delay": In(cls.TAP_BITS), "dqs_delay_load": In(1)}
        else:
            members = {"ch": In(pins_signature(n_ways))}         # ch__dq_o, ... ch__rb_n
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        m.submodules.phy = phy = self.phy
        if self.nvddr2:
            wiring.connect(m, wiring.flipped(self.ch), phy.phy)
            m.d.comb += [phy.dqs_delay.eq(self.dqs_delay),
                         phy.dqs_delay_load.eq(self.dqs_delay_load)]
        else:
            connect_sdr_engine(m, self.ch, phy.phy)
            m.d.comb += [phy.dqs_delay.eq(Const(0, len(phy.dqs_delay))),
                         phy.dqs_delay_load.eq(0)]
        return m


def verilog(n_ways, onfi="xilinx7", nvddr2=False):
    """The module's Verilog text (pads: dq, dqs, re_n, we_n, ce_n, cle, ale, wp_n, rb_n)."""
    from amaranth.back import verilog as back
    return back.convert(OnfiBoardPhy(n_ways, onfi, nvddr2), name="onfi_board_phy",
                        emit_src=False, strip_internal_attrs=True)
