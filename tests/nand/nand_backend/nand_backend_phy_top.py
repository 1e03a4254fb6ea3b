# SPDX-License-Identifier: BSD-2-Clause
"""Test top of nand_backend with NV-DDR2: the back end built `with_nvddr2`, one `onfi_phy_sim`
on every channel's PHY interface, whose pins (named as OnfiBus expects, `ch__<c>__<pin>`) are
the ports, so golden dies sit on them as on the SDR back end's pins. The calibration's
results per channel are ports too; the simulation PHY has no delay line (`dqs_delay` is
left open), so every tap passes."""

from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import Out

from rtl.nand.nand_backend import NandBackend, channel_signature
from rtl.nand.onfi_phy_sim import OnfiPhySim, pin_members
from tests.nand.onfi_channel.onfi_channel_phy_top import connect_pins

__all__ = ["NandBackendPhyTop"]


class NandBackendPhyTop(wiring.Component):
    def __init__(self, **params):
        self.backend = NandBackend(with_nvddr2=True, **params)
        b = self.backend
        streams = {name: member for name, member in
                   channel_signature(b.n_ways, b.max_len, True, b.dqs_tap_bits).members.items()
                   if name != "phy"}       # data streams and the calibration's outputs
        members = {name: member for name, member in b.signature.members.items()
                   if name != "ch"}
        channel = wiring.Signature({**streams, **pin_members(b.n_ways)})
        super().__init__({**members, "ch": Out(channel).array(b.n_channels)})

    def elaborate(self, platform):
        m = Module()
        be = m.submodules.backend = self.backend
        for name, member in be.signature.members.items():
            if name == "ch":
                continue
            if member.is_signature:
                wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(be, name))
            elif member.flow == wiring.In:
                m.d.comb += getattr(be, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(be, name))
        for c in range(be.n_channels):
            port, ch = self.ch[c], be.ch[c]
            phy = m.submodules[f"phy{c}"] = OnfiPhySim(be.n_ways)
            wiring.connect(m, ch.phy, phy.phy)
            for name, member in ch.signature.members.items():
                if name == "phy":
                    continue
                if member.is_signature:
                    wiring.connect(m, wiring.flipped(getattr(port, name)), getattr(ch, name))
                else:
                    m.d.comb += getattr(port, name).eq(getattr(ch, name))
            connect_pins(m, port, phy, be.n_ways)
        return m
