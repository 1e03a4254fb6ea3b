# SPDX-License-Identifier: BSD-2-Clause
"""SimOnfiPhy: one flash channel of an NV-DDR2 build (nand_subsystem with_nvddr2, whose
channel is the engine side of a PHY) through rtl/nand/onfi_phy_sim to the ONFI pins the
simulated drive's die models sit on (Verilog module `sim_onfi_phy`): the simulation's
counterpart of soc/targets/onfi_board_phy (a board's IOBUF/ODDR/IDELAY PHY).

    nand_subsystem ch<i> (OnfiPhySignature) ── onfi_phy_sim ── pins ── nand_die_fast (DDR_PINS)

RE#, DQ and DQS change at both clock edges; the die's DQS clocks the read capture. The SDR
engine sees its pins PHY_OUT_LATENCY + PHY_IN_LATENCY cycles late (LATENCY), which the SoC
adds to tREA's sampling margin (SsdlabSoC onfi_phy_latency). The simulation PHY has no input
delay line: the DQS calibration sweeps its taps (`dqs_delay`, not connected) and every tap
reads the signature.
"""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In

from rtl.nand.onfi_phy_if import PHY_IN_LATENCY, PHY_OUT_LATENCY, OnfiPhySignature
from rtl.nand.onfi_phy_sim import OnfiPhySim, pin_members

__all__ = ["SimOnfiPhy", "LATENCY", "PIN_INPUTS", "verilog"]

LATENCY = PHY_OUT_LATENCY + PHY_IN_LATENCY
PIN_INPUTS = ("dq_i", "dqs_i", "rb_n")      # driven by the dies


class SimOnfiPhy(wiring.Component):
    """n_ways: 1..8 (the SoC's). Ports: ch__* (the SoC channel's PHY interface, the PHY's
    side) and the pins of `rtl.nand.onfi_phy_sim.pin_members`."""

    def __init__(self, n_ways):
        self.phy = OnfiPhySim(n_ways)
        self.n_ways = n_ways
        super().__init__({"ch": In(OnfiPhySignature(n_ways)), **pin_members(n_ways)})

    def elaborate(self, platform):
        m = Module()
        m.submodules.phy = phy = self.phy
        wiring.connect(m, wiring.flipped(self.ch), phy.phy)
        for name in pin_members(self.n_ways):
            if name in PIN_INPUTS:
                m.d.comb += getattr(phy, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(phy, name))
        return m


def verilog(n_ways):
    """The module's Verilog text."""
    from amaranth.back import verilog as back
    return back.convert(SimOnfiPhy(n_ways), name="sim_onfi_phy", emit_src=False,
                        strip_internal_attrs=True)
