# SPDX-License-Identifier: BSD-2-Clause
"""Test top of onfi_dqs_calibration: the calibration in front of an OnfiChannel built
`with_nvddr2`, on an `onfi_phy_sim` whose pins (named as OnfiBus expects) are ports, so golden
dies sit on them (as tests/nand/onfi_channel/onfi_channel_phy_top.py), plus a model of the
read data eye.

The eye model is a test fixture, not a PHY: onfi_phy_sim captures every read byte right
whatever `dqs_delay` says, so the top keeps the tap last loaded (`eye_tap`, latched on
`dqs_delay_load`, 0 after reset) and flips bit 0 of both bytes of every DQS-captured pair
(`rx_data`, NV-DDR2 reads only; SDR's `dq_i` is untouched, as on a board) while that tap is
outside [`eye_lo`, `eye_hi`] or inside [`hole_lo`, `hole_hi`] (no hole when hole_lo >
hole_hi). A hole splits the eye into two runs of passing taps."""

from amaranth.hdl import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from rtl.nand.onfi_channel import OnfiChannel
from rtl.nand.onfi_dqs_calibration import OnfiDqsCalibration
from rtl.nand.onfi_phy_if import OnfiPhySignature
from rtl.nand.onfi_phy_sim import OnfiPhySim, pin_members
from tests.nand.onfi_channel.onfi_channel_phy_top import connect_pins

__all__ = ["OnfiDqsCalTop"]

CAL_PARAMS = ("tap_bits", "settle_cycles", "min_window")
# streams between the calibration and the channel, not ports of the top
CHANNEL_STREAMS = ("s_op", "s_wdata", "m_rdata", "m_cpl")
CAL_CHANNEL_SIDE = ("m_op", "m_wdata", "s_rdata", "s_cpl")
RX_FLIP = 0x0101        # bit 0 of both bytes of a captured pair


class OnfiDqsCalTop(wiring.Component):
    def __init__(self, **params):
        cal = {k: params.pop(k) for k in CAL_PARAMS if k in params}
        self.cal = OnfiDqsCalibration(max_len=params.get("max_len", 18432), **cal)
        self.channel = OnfiChannel(with_nvddr2=True, **params)
        tb = self.cal.tap_bits
        chan_members = {name: member for name, member in self.channel.signature.members.items()
                        if name != "phy" and name not in CHANNEL_STREAMS}
        cal_members = {name: member for name, member in self.cal.signature.members.items()
                       if name not in CAL_CHANNEL_SIDE}
        super().__init__({
            **cal_members,
            **chan_members,
            **pin_members(self.channel.n_ways),
            # the eye model
            "eye_lo": In(tb), "eye_hi": In(tb), "hole_lo": In(tb), "hole_hi": In(tb),
            "eye_tap": Out(tb),
        })

    def elaborate(self, platform):
        m = Module()
        cal = m.submodules.cal = self.cal
        chan = m.submodules.channel = self.channel
        phy = m.submodules.phy = OnfiPhySim(chan.n_ways)

        # calibration -> channel
        wiring.connect(m, cal.m_op, chan.s_op)
        wiring.connect(m, cal.m_wdata, chan.s_wdata)
        wiring.connect(m, chan.m_rdata, cal.s_rdata)
        wiring.connect(m, chan.m_cpl, cal.s_cpl)

        # the calibration's op-source side and results, and the channel's configuration
        for sub, skip in ((cal, CAL_CHANNEL_SIDE),
                          (chan, ("phy", *CHANNEL_STREAMS))):
            for name, member in sub.signature.members.items():
                if name in skip:
                    continue
                if member.is_signature:
                    wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(sub, name))
                elif member.flow == In:
                    m.d.comb += getattr(sub, name).eq(getattr(self, name))
                else:
                    m.d.comb += getattr(self, name).eq(getattr(sub, name))

        # the eye: the loaded tap decides whether captured bytes arrive intact
        t = self.eye_tap
        with m.If(cal.dqs_delay_load):
            m.d.sync += t.eq(cal.dqs_delay)
        good = ((self.eye_lo <= t) & (t <= self.eye_hi) &
                ~((self.hole_lo <= t) & (t <= self.hole_hi)))

        # channel <-> PHY, rx_data through the eye
        for name, member in OnfiPhySignature(chan.n_ways).members.items():
            ours, theirs = getattr(chan.phy, name), getattr(phy.phy, name)
            if member.flow == Out:
                m.d.comb += theirs.eq(ours)
            elif name == "rx_data":
                m.d.comb += ours.eq(theirs.as_value() ^ Mux(good, 0, RX_FLIP))
            else:
                m.d.comb += ours.eq(theirs)

        connect_pins(m, self, phy, chan.n_ways)
        return m
