# SPDX-License-Identifier: BSD-2-Clause
"""NvmeSqFetchTop: test top putting the SQ fetch engine behind a simulated PCIe link.

PCIeSimPHY -> LitePCIeEndpoint (64-bit addressing) -> NvmeSqFetch. The engine's streams
(s_cfg, s_tail, m_sqe) and error pulses are top-level ports driven by the testbench; its
memory reads leave through the PHY's m_tlp port to the cocotbext-pcie root complex and the
completions come back on s_tlp.
"""

from litepcie.core import LitePCIeEndpoint
from litex.gen import LiteXModule

from rtl.nvme.litepcie_fixes import LitePCIeFixes
from rtl.nvme.nvme_sq_fetch import NvmeSqFetch
from rtl.pcie.pcie_sim_phy import PCIeSimPHY

__all__ = ["NvmeSqFetchTop"]


class NvmeSqFetchTop(LiteXModule):
    """Parameters: data_width (64), n_sqs (1..65, default 3), max_burst (1..8, default 4),
    bar0_size (default 0x4000; nothing sits at BAR0 here, the host bridge still presents it),
    cpl_timeout_cycles (LitePCIeFixes'; default 4000, 32 us at the bench's 125 MHz: short timeout
    tests, still far above the root complex's answer under backpressure)."""
    def __init__(self, data_width=64, n_sqs=3, max_burst=4, bar0_size=0x4000,
                 cpl_timeout_cycles=4000):
        self.phy      = phy = PCIeSimPHY(data_width=data_width, bar0_size=bar0_size)
        self.endpoint = endpoint = LitePCIeEndpoint(phy, endianness=phy.endianness,
                                                    address_width=64)
        self.pcie_fixes = LitePCIeFixes(endpoint,   # right after the endpoint
                                        cpl_timeout_cycles=cpl_timeout_cycles)
        self.sq_fetch = NvmeSqFetch(endpoint, n_sqs=n_sqs, max_burst=max_burst)

    def get_ios(self):
        return self.phy.get_ios() + self.sq_fetch.get_ios()
