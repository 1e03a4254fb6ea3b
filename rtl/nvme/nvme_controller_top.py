# SPDX-License-Identifier: BSD-2-Clause
"""NvmeControllerTop: the NVMe front end behind a simulated PCIe link, for system tests, the
benchmark and synthesis.

PCIeSimPHY -> LitePCIeEndpoint (64-bit addressing) + LitePCIeFixes -> NvmeController, and (with
`with_buf_mem`) a RAM as the data buffer memory, `buf_mem`. Top-level ports: the PHY's TLP and
MSI streams, the controller's processor interface and back-end ports (NvmeController.get_ios),
and without the RAM its buffer ports.
"""

from litepcie.core import LitePCIeEndpoint
from litex.gen import LiteXModule
from migen import If, Memory

from rtl.nvme.litepcie_fixes import LitePCIeFixes
from rtl.nvme.nvme_controller import NvmeController
from rtl.pcie.pcie_sim_phy import PCIeSimPHY

__all__ = ["NvmeControllerTop"]


class NvmeControllerTop(LiteXModule):
    """Parameters: NvmeController's (n_io_queues, tag_width, max_transfer, lbads, mqes, dstrd,
    max_burst, clk_freq_hz, with_msix: then the PHY has the MSI-X Message Control inputs too),
    data_width (64, 128, 256 or 512: the PHY's TLP stream, the front end's data path and the
    buffer RAM's words), bar0_size (power of two >= 0x2000), max_pending_requests (the
    endpoint's outstanding reads: 2, 4 or 8), with_buf_mem (True: a RAM of 2 * 2**tag_width
    buffers of max_transfer bytes, data_width-bit words, one cycle read latency)."""
    def __init__(self, n_io_queues=8, tag_width=6, max_transfer=131072, lbads=9, mqes=4095,
                 dstrd=0, max_burst=4, clk_freq_hz=250e6, data_width=64, bar0_size=0x4000,
                 max_pending_requests=8, with_buf_mem=True, with_msix=False):
        self.phy      = phy = PCIeSimPHY(data_width=data_width, bar0_size=bar0_size,
                                         with_msix=with_msix)
        self.endpoint = endpoint = LitePCIeEndpoint(
            phy, endianness=phy.endianness, address_width=64,
            max_pending_requests=max_pending_requests)
        self.pcie_fixes = LitePCIeFixes(endpoint)   # right after the endpoint
        self.ctrl = ctrl = NvmeController(
            endpoint, n_io_queues=n_io_queues, tag_width=tag_width, max_transfer=max_transfer,
            lbads=lbads, mqes=mqes, dstrd=dstrd, max_burst=max_burst, clk_freq_hz=clk_freq_hz,
            with_msix=with_msix)
        self.with_buf_mem = with_buf_mem
        if with_buf_mem:
            mem = Memory(data_width, 2**ctrl.dma.addr_width, name="buf_mem")
            wp = mem.get_port(write_capable=True, we_granularity=8)
            rp = mem.get_port()
            self.specials += mem, wp, rp
            bw, br, brd = ctrl.m_bw, ctrl.m_br, ctrl.s_brd
            self.comb += [
                bw.ready.eq(1),
                wp.adr.eq(bw.addr),
                wp.dat_w.eq(bw.data),
                If(bw.valid, wp.we.eq(bw.strb)),
                br.ready.eq(1),
                rp.adr.eq(br.addr),
                brd.data.eq(rp.dat_r),
            ]
            self.sync += brd.valid.eq(br.valid)

    def get_ios(self):
        ios = self.phy.get_ios() + self.ctrl.get_ios()
        if not self.with_buf_mem:
            ios += self.ctrl.buffer_ios()
        return ios
