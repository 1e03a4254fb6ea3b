# SPDX-License-Identifier: BSD-2-Clause
"""PcieNvmeRegsTop: test top putting the NVMe registers behind a PCIe endpoint.

PCIeSimPHY -> LitePCIeEndpoint -> NvmeBar0 -> NvmeRegs, plus two test stubs in RTL: a queue
engine stub that acknowledges CC.EN / CC.SHN, and an MSI stub that requests MSI vector 0 for
each doorbell event the testbench accepts on m_db (so a doorbell write comes back to the host
as an MSI write through the PHY's m_msi port and the bridge).
"""

from litepcie.core import LitePCIeEndpoint
from litex.gen import LiteXModule
from migen import If, Signal

from rtl.nvme.litepcie_fixes import LitePCIeFixes
from rtl.nvme.nvme_bar0 import NvmeBar0
from rtl.nvme.nvme_regs import NvmeRegs, doorbell_layout
from rtl.pcie.pcie_sim_phy import PCIeSimPHY

__all__ = ["PcieNvmeRegsTop"]

# Test stubs --------------------------------------------------------------------------------------


class EngineStubForTest(LiteXModule):
    """TEST STUB of the queue engines: ctrl_ready follows cc_en and shutdown_done follows
    cc_shn != 0, each `delay` cycles after the request holds steady."""
    def __init__(self, regs, delay=8):
        count = Signal(max=delay + 1)
        want  = Signal()
        self.comb += want.eq(regs.cc_en)
        self.sync += [
            If(want != regs.ctrl_ready,
                count.eq(count + 1),
                If(count == delay,
                    count.eq(0),
                    regs.ctrl_ready.eq(want),
                )
            ).Else(
                count.eq(0)
            ),
            regs.shutdown_done.eq(regs.cc_shn != 0),
        ]
        self.comb += regs.fatal.eq(0)


# Top ---------------------------------------------------------------------------------------------

class PcieNvmeRegsTop(LiteXModule):
    """Parameters: data_width (64), bar0_size (0x4000, power of two >= 0x2000: the registers
    and doorbells of n_io_queues fit), n_io_queues (1..64, default 4)."""
    def __init__(self, data_width=64, bar0_size=0x4000, n_io_queues=4):
        address_width = (bar0_size - 1).bit_length()
        self.phy      = phy = PCIeSimPHY(data_width=data_width, bar0_size=bar0_size)
        self.endpoint = endpoint = LitePCIeEndpoint(phy, endianness=phy.endianness)
        self.pcie_fixes = LitePCIeFixes(endpoint)   # right after the endpoint
        self.bar0     = bar0 = NvmeBar0(endpoint, address_width=address_width)
        self.regs     = regs = NvmeRegs(n_io_queues=n_io_queues, address_width=address_width)
        self.comb += bar0.m_axil.connect(regs.s_axil)
        self.engine   = EngineStubForTest(regs)

        # MSI stub: one MSI (vector 0) per accepted doorbell event.
        db = regs.m_db
        self.sync += [
            If(phy.msi.ready, phy.msi.valid.eq(0)),
            If(db.valid & db.ready, phy.msi.valid.eq(1)),
        ]
        self.comb += phy.msi.dat.eq(0)

        # Observation ports.
        self.cc_en   = regs.cc_en
        self.bad_req = bar0.bad_req
        self.bad_req.name_override = "bad_req"
        self.cc_en.name_override = "cc_en"

    def get_ios(self):
        db = self.regs.m_db
        return (self.phy.get_ios()
                + [db.valid, db.ready] + [getattr(db, n) for n, _ in doorbell_layout()]
                + [self.regs.db_invalid, self.cc_en, self.bad_req])
