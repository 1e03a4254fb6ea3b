# SPDX-License-Identifier: BSD-2-Clause
"""NvmeCqPostTop: test top putting the CQ posting engine behind a simulated PCIe link.

PCIeSimPHY -> LitePCIeEndpoint (64-bit addressing) -> NvmeCqPost. The engine's streams
(s_cfg, s_head, s_cpl, m_irq) and error pulses are top-level ports driven by the testbench; its
memory writes leave through the PHY's m_tlp port to the cocotbext-pcie root complex.
"""

from litepcie.core import LitePCIeEndpoint
from litex.gen import LiteXModule

from rtl.nvme.litepcie_fixes import LitePCIeFixes
from rtl.nvme.nvme_cq_post import NvmeCqPost
from rtl.pcie.pcie_sim_phy import PCIeSimPHY

__all__ = ["NvmeCqPostTop"]


class NvmeCqPostTop(LiteXModule):
    """Parameters: data_width (64 or 128, default 64), n_cqs (1..65, default 3),
    bar0_size (default 0x4000; nothing sits at BAR0 here, the host bridge still presents it)."""
    def __init__(self, data_width=64, n_cqs=3, bar0_size=0x4000):
        self.phy      = phy = PCIeSimPHY(data_width=data_width, bar0_size=bar0_size)
        self.endpoint = endpoint = LitePCIeEndpoint(phy, endianness=phy.endianness,
                                                    address_width=64)
        self.pcie_fixes = LitePCIeFixes(endpoint)   # right after the endpoint
        self.cq_post  = NvmeCqPost(endpoint, n_cqs=n_cqs)

    def get_ios(self):
        return self.phy.get_ios() + self.cq_post.get_ios()
