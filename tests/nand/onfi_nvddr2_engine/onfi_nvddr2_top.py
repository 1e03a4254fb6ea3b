# SPDX-License-Identifier: BSD-2-Clause
"""Test top of onfi_nvddr2_engine: the NV-DDR2 engine and the SDR engine on one simulation PHY,
the engine picked by the `nvddr2` input, the way a channel controller holds both.

The die starts in SDR mode 0 (power-on, RESET), so a test talks SDR first (RESET, SET
FEATURES 01h selecting NV-DDR2) and then switches `nvddr2` high. Change `nvddr2` only while
both engines are idle.
"""

from amaranth.hdl import Module, Mux
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.nand.onfi_nvddr2_engine import OnfiNvddr2Engine, nvddr2_timing_layout
from rtl.nand.onfi_phy_if import OnfiPhySignature, connect_sdr_engine
from rtl.nand.onfi_phy_sim import OnfiPhySim, pin_members
from rtl.nand.onfi_sdr_engine import CycleRequest, OnfiSdrEngine, ReadData, timing_layout

__all__ = ["OnfiNvddr2Top"]


class OnfiNvddr2Top(wiring.Component):
    """n_ways 1..8, timer_width 6..16 (checked by the engines)."""

    def __init__(self, n_ways=1, timer_width=8):
        self.n_ways = n_ways
        self.timer_width = timer_width
        self.nv = OnfiNvddr2Engine(n_ways, timer_width)
        self.sdr = OnfiSdrEngine(n_ways, timer_width)
        super().__init__({
            "s_cycle": In(stream.Signature(CycleRequest)),
            "m_rdata": Out(stream.Signature(ReadData)),
            "nvddr2": In(1),
            "timing": In(nvddr2_timing_layout(timer_width)),
            "sdr_timing": In(timing_layout(timer_width)),
            "write_protect": In(1),
            **pin_members(n_ways),
        })

    def elaborate(self, platform):
        m = Module()
        nv = m.submodules.nvddr2_engine = self.nv
        sdr = m.submodules.sdr_engine = self.sdr
        phy = m.submodules.phy = OnfiPhySim(self.n_ways)
        sel = self.nvddr2

        m.d.comb += [
            nv.timing.eq(self.timing), sdr.timing.eq(self.sdr_timing),
            nv.write_protect.eq(self.write_protect), sdr.write_protect.eq(self.write_protect),
        ]
        # requests to the selected engine, read data from it
        for eng, on in ((nv, sel), (sdr, ~sel)):
            m.d.comb += [eng.s_cycle.payload.eq(self.s_cycle.payload),
                         eng.s_cycle.valid.eq(self.s_cycle.valid & on),
                         eng.m_rdata.ready.eq(self.m_rdata.ready & on)]
        m.d.comb += [
            self.s_cycle.ready.eq(Mux(sel, nv.s_cycle.ready, sdr.s_cycle.ready)),
            self.m_rdata.valid.eq(Mux(sel, nv.m_rdata.valid, sdr.m_rdata.valid)),
            self.m_rdata.payload.eq(Mux(sel, nv.m_rdata.payload, sdr.m_rdata.payload)),
        ]

        # the PHY interface: the SDR engine's flat pins adapted, then one of the two chosen
        sdr_if = OnfiPhySignature(self.n_ways).create(path=("sdr_if",))
        connect_sdr_engine(m, sdr, sdr_if)
        for name, member in OnfiPhySignature(self.n_ways).members.items():
            ours, theirs, port = getattr(nv.phy, name), getattr(sdr_if, name), \
                getattr(phy.phy, name)
            if member.flow == wiring.Out:
                m.d.comb += port.eq(Mux(sel, ours, theirs))
            else:
                m.d.comb += [ours.eq(port), theirs.eq(port)]

        for name in pin_members(self.n_ways):
            ours, port = getattr(self, name), getattr(phy, name)
            if name in ("dq_i", "dqs_i", "rb_n"):
                m.d.comb += port.eq(ours)
            else:
                m.d.comb += ours.eq(port)
        return m
