# SPDX-License-Identifier: BSD-2-Clause
"""Test top of onfi_channel with NV-DDR2: the channel built `with_nvddr2` on an `onfi_phy_sim`,
whose pins (named as OnfiBus expects) are the ports, so golden dies sit on them."""

from amaranth.hdl import Module
from amaranth.lib import wiring

from rtl.nand.onfi_channel import OnfiChannel
from rtl.nand.onfi_phy_sim import OnfiPhySim, pin_members

__all__ = ["OnfiChannelPhyTop", "PIN_INPUTS", "connect_pins"]

PIN_INPUTS = ("dq_i", "dqs_i", "rb_n")


def connect_pins(m, port, phy, n_ways):
    """A sim PHY's pins to the top's ports of the same names (where OnfiBus finds them)."""
    for name in pin_members(n_ways):
        if name in PIN_INPUTS:
            m.d.comb += getattr(phy, name).eq(getattr(port, name))
        else:
            m.d.comb += getattr(port, name).eq(getattr(phy, name))


class OnfiChannelPhyTop(wiring.Component):
    def __init__(self, **params):
        self.channel = OnfiChannel(with_nvddr2=True, **params)
        n_ways = self.channel.n_ways
        members = {name: member for name, member in self.channel.signature.members.items()
                   if name != "phy"}
        super().__init__({**members, **pin_members(n_ways)})

    def elaborate(self, platform):
        m = Module()
        chan = m.submodules.channel = self.channel
        phy = m.submodules.phy = OnfiPhySim(chan.n_ways)
        wiring.connect(m, chan.phy, phy.phy)
        for name, member in chan.signature.members.items():
            if name == "phy":
                continue
            if member.is_signature:       # the streams: ours flipped meets the channel's
                wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(chan, name))
            elif member.flow == wiring.In:
                m.d.comb += getattr(chan, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(chan, name))
        connect_pins(m, self, phy, chan.n_ways)
        return m
