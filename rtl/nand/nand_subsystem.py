# SPDX-License-Identifier: BSD-2-Clause
"""The flash subsystem of the SoC (Verilog module `nand_subsystem`): `nand_backend` with
`nand_buffer_dma` on its data streams, so that the SoC sees flash operations, completions,
two buffer-memory ports and the ONFI pins of every channel. The LiteX side (soc/) wraps the
generated Verilog with a thin module. See rtl/nand/README.md ("nand_subsystem").
"""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .nand_backend import NandBackend
from .nand_buffer_dma import NandBufferDma, mem_wr_layout
from .nand_common import BUSY_NOW_BITS, BUSY_TIMEOUT_BITS
from .nand_die_scheduler import (
    ChannelCompletion,
    FlashCompletion,
    dqs_cal_members,
    flash_op_layout,
    geometry_layout,
)
from .onfi_nvddr2_engine import nvddr2_timing_layout
from .onfi_phy_if import OnfiPhySignature
from .onfi_sdr_engine import timing_layout

__all__ = ["NandSubsystem", "pins_signature", "PINS"]

PINS = ("dq_o", "dq_oe", "dq_i", "ce_n", "cle", "ale", "we_n", "re_n", "wp_n", "rb_n")


def pins_signature(n_ways):
    """The ONFI pins of one channel, towards the dies."""
    all_ones = (1 << n_ways) - 1
    return wiring.Signature({
        "dq_o": Out(8), "dq_oe": Out(1), "dq_i": In(8),
        "ce_n": Out(n_ways, init=all_ones), "cle": Out(1), "ale": Out(1),
        "we_n": Out(1, init=1), "re_n": Out(1, init=1), "wp_n": Out(1, init=0),
        "rb_n": In(n_ways, init=all_ones),
    })


class NandSubsystem(wiring.Component):
    """nand_backend + nand_buffer_dma.

    Parameters: NandBackend's (n_channels, n_ways, n_luns, queue_depth, max_planes, max_len,
    row_cycles, col_cycles, timer_width, with_nvddr2) and NandBufferDma's addr_width and
    words; each checked there, with the parameter named. with_nvddr2: `ch[i]` is the engine
    side of channel i's PHY (OnfiPhySignature, for a board's ONFI PHY) instead of its pins,
    and `nvddr2_timing` / `nvddr2` are inputs. ecc: None or NandBackend's `ecc` (a BCH code
    per channel on the data path, rtl/nand/nand_ecc.py). Ports: the back end's (its `busy` and
    `ecc_busy` among them) and the DMA's buffer-memory ports.
    """

    def __init__(self, n_channels=18, n_ways=4, queue_depth=4, max_planes=2, max_len=18432,
                 row_cycles=3, col_cycles=2, timer_width=8, addr_width=21, words=4,
                 with_nvddr2=False, dqs_tap_bits=5, n_luns=1, ecc=None):
        self.backend_params = dict(n_channels=n_channels, n_ways=n_ways, n_luns=n_luns,
                                   queue_depth=queue_depth, max_planes=max_planes,
                                   max_len=max_len, row_cycles=row_cycles,
                                   col_cycles=col_cycles, timer_width=timer_width,
                                   with_nvddr2=with_nvddr2, dqs_tap_bits=dqs_tap_bits,
                                   ecc=ecc)
        self.dma_params = dict(n_channels=n_channels, max_len=max_len, addr_width=addr_width,
                               words=words)
        be = NandBackend(**self.backend_params)
        be._MustUse__silence = True
        NandBufferDma(**self.dma_params)._MustUse__silence = True
        self.n_channels = n_channels
        self.with_nvddr2 = with_nvddr2
        cal = dqs_cal_members(dqs_tap_bits)
        bus = (wiring.Signature({**OnfiPhySignature(n_ways).members,
                                 **{n: m for n, m in cal.items() if m.flow == Out}})
               if with_nvddr2 else pins_signature(n_ways))
        nvddr2 = ({"nvddr2_timing": In(nvddr2_timing_layout(timer_width)), "nvddr2": In(1),
                   **{n: m for n, m in cal.items() if m.flow == In}}
                  if with_nvddr2 else {})
        self.dqs_tap_bits = dqs_tap_bits
        super().__init__({
            "s_op": In(stream.Signature(flash_op_layout(max_len, be.channel_bits))),
            "m_cpl": Out(stream.Signature(FlashCompletion if ecc is not None
                                          else ChannelCompletion)),
            "geometry": In(geometry_layout),
            "timing": In(timing_layout(timer_width)),
            **nvddr2,
            "write_protect": In(1),
            "busy_timeout": In(BUSY_TIMEOUT_BITS),
            "busy_now": In(BUSY_NOW_BITS),
            "plane_slots": In(8),
            "busy": Out(1),
            "ecc_busy": Out(1),
            "m_rd": Out(stream.Signature(addr_width)),
            "s_rdd": In(stream.Signature(64)),
            "m_wr": Out(stream.Signature(mem_wr_layout(addr_width))),
            "ch": Out(bus).array(n_channels),
        })

    def elaborate(self, platform):
        m = Module()
        be = m.submodules.backend = NandBackend(**self.backend_params)
        dma = m.submodules.dma = NandBufferDma(**self.dma_params)
        wiring.connect(m, wiring.flipped(self.s_op), be.s_op)
        wiring.connect(m, wiring.flipped(self.m_cpl), be.m_cpl)
        wiring.connect(m, wiring.flipped(self.m_rd), dma.m_rd)
        wiring.connect(m, wiring.flipped(self.s_rdd), dma.s_rdd)
        wiring.connect(m, wiring.flipped(self.m_wr), dma.m_wr)
        m.d.comb += [be.geometry.eq(self.geometry), be.timing.eq(self.timing),
                     be.write_protect.eq(self.write_protect), self.busy.eq(be.busy),
                     be.busy_timeout.eq(self.busy_timeout), be.busy_now.eq(self.busy_now),
                     self.ecc_busy.eq(be.ecc_busy),
                     dma.plane_slots.eq(self.plane_slots)]
        if self.with_nvddr2:
            m.d.comb += [be.nvddr2_timing.eq(self.nvddr2_timing), be.nvddr2.eq(self.nvddr2)]
            for name, member in dqs_cal_members(self.dqs_tap_bits).items():
                if member.flow == In:
                    m.d.comb += getattr(be, name).eq(getattr(self, name))
        for i in range(self.n_channels):
            port, mover = be.ch[i], dma.ch[i]
            wiring.connect(m, port.m_wreq, mover.s_wreq)
            wiring.connect(m, mover.m_wdata, port.s_wdata)
            wiring.connect(m, port.m_rdata, mover.s_rdata)
            if self.with_nvddr2:
                for name, member in OnfiPhySignature(self.backend_params["n_ways"]).members.items():
                    if member.flow == In:
                        m.d.comb += getattr(port.phy, name).eq(getattr(self.ch[i], name))
                    else:
                        m.d.comb += getattr(self.ch[i], name).eq(getattr(port.phy, name))
                for name, member in dqs_cal_members(self.dqs_tap_bits).items():
                    if member.flow == Out:
                        m.d.comb += getattr(self.ch[i], name).eq(getattr(port, name))
                continue
            for name in PINS:
                if name in ("dq_i", "rb_n"):
                    m.d.comb += getattr(port, name).eq(getattr(self.ch[i], name))
                else:
                    m.d.comb += getattr(self.ch[i], name).eq(getattr(port, name))
        return m
