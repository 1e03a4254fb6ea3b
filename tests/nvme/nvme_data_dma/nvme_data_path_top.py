# SPDX-License-Identifier: BSD-2-Clause
"""NvmeDataPathTop: test top putting the PRP walker and the data DMA behind a simulated link.

PCIeSimPHY -> LitePCIeEndpoint (64-bit addressing) + LitePCIeFixes -> NvmePrpWalk (read-only
crossbar port, through NvmeNarrowPort above 64 bits) -> NvmeDataDma (read-only and write-only
crossbar ports) -> a RAM as the data
buffer memory. Top-level ports: the transfer requests `s_req`, the completions `m_cpl`, a
monitor of the walker's segments (`seg_*`), and two backpressure knobs on the RAM's ports
(`buf_wr_stall`, `buf_rd_stall`: 1 refuses the write / read address that cycle).
"""

from litepcie.core import LitePCIeEndpoint
from litex.gen import LiteXModule
from migen import If, Memory, Signal

from rtl.nvme.litepcie_fixes import LitePCIeFixes
from rtl.nvme.nvme_common import stream_port
from rtl.nvme.nvme_data_dma import NvmeDataDma
from rtl.nvme.nvme_narrow_port import narrow_endpoint
from rtl.nvme.nvme_prp_walk import NvmePrpWalk
from rtl.pcie.pcie_sim_phy import PCIeSimPHY

__all__ = ["NvmeDataPathTop"]


class NvmeDataPathTop(LiteXModule):
    """Parameters: data_width (64, 128, 256 or 512: the PHY's, the data path's and the buffer
    RAM's word width), tag_width, buf_width, max_transfer (as the cores'),
    max_pending_requests (the endpoint's outstanding reads: 2, 4 or 8;
    LitePCIe's TLP controller does not elaborate with 1), rd_fifo_depth,
    seg_fifo_depth (as NvmeDataDma's), bar0_size (nothing sits at BAR0 here; the host bridge
    still presents it), cpl_timeout_cycles (LitePCIeFixes'; default 4000, 32 us at the bench's
    125 MHz: short timeout tests, still far above the root complex's answer under load).

    The buffer RAM `buf_mem` holds 2**buf_width buffers of max_transfer bytes (
    byte strobes on writes, one cycle read latency; words of data_width bits)."""
    def __init__(self, data_width=64, tag_width=8, buf_width=3, max_transfer=262144,
                 max_pending_requests=4, rd_fifo_depth=512, seg_fifo_depth=64,
                 bar0_size=0x4000, cpl_timeout_cycles=4000):
        self.phy      = phy = PCIeSimPHY(data_width=data_width, bar0_size=bar0_size)
        self.endpoint = endpoint = LitePCIeEndpoint(
            phy, endianness=phy.endianness, address_width=64,
            max_pending_requests=max_pending_requests)
        self.pcie_fixes = LitePCIeFixes(endpoint,   # right after the endpoint
                                        cpl_timeout_cycles=cpl_timeout_cycles)
        ctl = narrow_endpoint(endpoint)             # the walker is 64-bit (NvmeNarrowPort)
        if ctl is not endpoint:
            self.narrow = ctl
        self.prp_walk = walk = NvmePrpWalk(ctl, tag_width=tag_width, buf_width=buf_width,
                                           max_transfer=max_transfer)
        self.data_dma = dma = NvmeDataDma(endpoint, tag_width=tag_width, buf_width=buf_width,
                                          max_transfer=max_transfer,
                                          rd_fifo_depth=rd_fifo_depth,
                                          seg_fifo_depth=seg_fifo_depth)
        self.comb += walk.m_seg.connect(dma.s_seg)

        # Segment monitor.
        seg = walk.m_seg
        self.seg_fire = Signal(name_override="seg_fire")
        self.comb += self.seg_fire.eq(seg.valid & seg.ready)
        self.seg_mon = [self.seg_fire]
        for name in ["tag", "addr", "count", "offset", "status", "last"]:
            s = Signal(len(getattr(seg, name)), name_override=f"seg_{name}")
            self.comb += s.eq(getattr(seg, name))
            self.seg_mon.append(s)

        # Buffer RAM.
        self.buf_wr_stall = Signal(name_override="buf_wr_stall")
        self.buf_rd_stall = Signal(name_override="buf_rd_stall")
        mem = Memory(dma.data_width, 2**dma.addr_width, name="buf_mem")
        wp = mem.get_port(write_capable=True, we_granularity=8)
        rp = mem.get_port()
        self.specials += mem, wp, rp
        bw, br, brd = dma.m_bw, dma.m_br, dma.s_brd
        self.comb += [
            bw.ready.eq(~self.buf_wr_stall),
            wp.adr.eq(bw.addr),
            wp.dat_w.eq(bw.data),
            If(bw.valid & bw.ready, wp.we.eq(bw.strb)),
            br.ready.eq(~self.buf_rd_stall),
            rp.adr.eq(br.addr),
            brd.data.eq(rp.dat_r),
        ]
        self.sync += brd.valid.eq(br.valid & br.ready)

    def get_ios(self):
        return (self.phy.get_ios() + stream_port(self.prp_walk.s_req, "s_req")
                + stream_port(self.data_dma.m_cpl, "m_cpl") + self.seg_mon
                + [self.buf_wr_stall, self.buf_rd_stall])
