# SPDX-License-Identifier: BSD-2-Clause
"""MSI-X of nvme_controller_top built `with_msix` (rtl/nvme/nvme_msix.py): the root complex
(cocotbext-pcie) enables MSI-X as Linux does, programming the function's table through BAR0,
then the host driver model runs I/O with one vector per queue. NVMe 1.4 7.5.1.2, PCIe 3.0
6.8.2:

- the table and PBA as the host reads them back: addresses, data, Vector Control, 2 DW reads,
  read-only PBA, reserved bits, the rest of the window, unsupported request sizes;
- one message per interrupt, a 1 DW write of the entry's data to its address, after the CQE
  it announces; MWr64 for an address above 4 GiB; no MSI;
- a masked vector (Vector Control) or a masked function (Message Control) holds its message
  as a Pending Bit, the other vectors go on; unmasking sends it;
- with MSI-X disabled again the same build interrupts with MSI.
"""

import struct

import cocotb
import pytest
from cocotb.triggers import ClockCycles, Timer
from cocotbext.pcie.core.caps import PciCapId
from cocotbext.pcie.core.tlp import CplStatus, TlpType
from ssdlab_harness import core_params, run

from spec import nvme as ns
from spec.nvme import Cqe
from tests.nvme.nvme_controller.test_nvme_compliance import (
    CORE,
    DEFAULTS,
    TB,
    rw_check,
    wait_until,
)

TABLE, PBA = 0x2000, 0x3000      # rtl.nvme.nvme_msix TABLE_OFFSET / PBA_OFFSET
MSI_BASE = 0x8000_0000           # cocotbext-pcie's MSI region at the root complex


class MsixTB(TB):
    def __init__(self, dut):
        self.n_vec = {**DEFAULTS, **core_params()}["n_io_queues"] + 1
        super().__init__(dut, bridge_kw={"msix_vectors": self.n_vec})

    async def start_msix(self, **kw):
        host = await self.start(n_io_queues=4, qdepth=16, msix_vectors=self.n_vec, **kw)
        self.bar = self.pdev.bar_window[0]
        assert self.pdev.msix_enabled and int(self.dut.cfg_msix_enable.value) == 1
        return host

    def messages(self, since=0):
        """(index in from_dut, TLP) of every MSI-X message write from the DUT."""
        return [(i, t) for i, t in enumerate(self.bridge.from_dut) if i >= since
                and t.fmt_type in (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64) and t.length == 1
                and t.address == MSI_BASE]

    def vector_of(self, tlp):
        number, = struct.unpack("<L", bytes(tlp.get_data()))
        return number

    async def set_function_mask(self, on):
        ctrl = await self.pdev.capability_read_word(PciCapId.MSIX, 0x02)
        ctrl = ctrl | 0x4000 if on else ctrl & ~0x4000
        await self.pdev.capability_write_word(PciCapId.MSIX, 0x02, ctrl)
        await ClockCycles(self.dut.clk, 4)
        assert int(self.dut.cfg_msix_fm.value) == int(on)


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_msix_table(dut):
    """The table as the root complex programmed it, read back by dwords and qwords; Vector
    Control's reserved bits and the address's bits 1:0 read 0; the PBA is read only; the rest
    of the window reads 0; unsupported sizes get UR and leave the table alone."""
    tb = MsixTB(dut)
    await tb.start_msix()
    bar, vecs = tb.bar, tb.pdev.msi_vectors
    for k in range(tb.n_vec):
        e = TABLE + 16 * k
        got = [await bar.read_dword(e + 4 * d) for d in range(4)]
        assert got == [vecs[k].addr & 0xFFFF_FFFC, vecs[k].addr >> 32, vecs[k].data, 0], (k, got)
        assert await bar.read_qword(e) == vecs[k].addr
    assert await bar.read_qword(PBA) == 0
    last = TABLE + 16 * (tb.n_vec - 1)
    await bar.write_dword(last + 12, 0xFFFF_FFFF)
    assert await bar.read_dword(last + 12) == 1, "Vector Control: only the Mask Bit is kept"
    await bar.write_qword(last + 8, 0x0000_0000_1234_5678)      # data and Vector Control
    assert [await bar.read_dword(last + 8), await bar.read_dword(last + 12)] == [0x1234_5678, 0]
    await bar.write_dword(last + 8, vecs[-1].data)
    await bar.write_dword(last, 0x0BAD_F00F)
    assert await bar.read_dword(last) == 0x0BAD_F00C, "address bits 1:0 read 0"
    await bar.write_dword(last, vecs[-1].addr & 0xFFFF_FFFF)
    await bar.write_dword(PBA, 0xFFFF_FFFF)
    assert await bar.read_qword(PBA) == 0, "the PBA is read only"
    await bar.write_dword(TABLE + 0x800, 0xFFFF_FFFF)
    assert await bar.read_dword(TABLE + 0x800) == 0, "reserved window"
    assert await bar.read_dword(PBA + 0x100) == 0
    for offset, length in [(TABLE, 3), (TABLE + 4, 2), (PBA, 4)]:
        cpls = await tb.raw_request(TlpType.MEM_READ, offset, length)
        assert len(cpls) == 1 and cpls[0].status == CplStatus.UR, (hex(offset), length, cpls)
    await tb.raw_request(TlpType.MEM_WRITE, TABLE, 4, bytes(range(16)))   # dropped
    assert await bar.read_qword(TABLE) == vecs[0].addr
    # The controller's registers below the window are untouched by all this.
    await rw_check(tb.host, 1, 0, 512, tb.rng)
    await tb.check_clean()


@cocotb.test(timeout_time=3, timeout_unit="ms")
async def test_msix_vectors(dut):
    """Each I/O CQ interrupts on its own MSI-X vector (IV = qid); the message is a 1 DW MWr of
    the entry's data to its address, sent after the CQE it announces (the CQE's MWr is earlier
    on the link); nothing goes out as MSI; an entry with an address above 4 GiB gets an MWr64
    into host memory there."""
    tb = MsixTB(dut)
    host = await tb.start_msix()
    for qid in (1, 2, 3, 4):
        assert host.cqs[qid].iv == qid
        since = len(tb.bridge.from_dut)
        await rw_check(host, qid, 64 * qid, 1024, tb.rng)
        msgs = tb.messages(since)
        assert msgs and {tb.vector_of(t) for _, t in msgs} == {qid}, (qid, msgs)
        cq = host.cqs[qid]
        lo, hi = cq.qmem.slot(0), cq.qmem.slot(cq.entries - 1) + 16
        for i, _ in msgs:
            cqe_writes = [j for j in range(since, i) if tb.bridge.from_dut[j].fmt_type in
                          (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)
                          and lo <= tb.bridge.from_dut[j].address < hi]
            assert cqe_writes, f"MSI-X message {i} of queue {qid} before any CQE write"
    assert tb.bridge.msi_requests == [], "MSI requested while MSI-X is enabled"
    # Vector 2 redirected above 4 GiB: the message lands in host memory there.
    addr = host.mem.alloc_page(high=True)
    await tb.bar.write_dword(TABLE + 32, addr & 0xFFFF_FFFF)
    await tb.bar.write_dword(TABLE + 36, addr >> 32)
    await tb.bar.write_dword(TABLE + 40, 0xC0DE_0002)
    since = len(tb.bridge.from_dut)
    cmd = await host.submit(2, ns.sqe_flush())
    await wait_until(lambda: host.mem.read(addr, 4) == struct.pack("<L", 0xC0DE_0002), 100,
                     "MSI-X message in host memory above 4 GiB")
    t = [t for t in tb.bridge.from_dut[since:] if t.fmt_type == TlpType.MEM_WRITE_64
         and t.address == addr]
    assert len(t) == 1 and t[0].length == 1, t
    await host.drain_cq(host.cqs[2])
    assert (await cmd.wait(100)).ok
    await tb.check_clean()


@cocotb.test(timeout_time=3, timeout_unit="ms")
async def test_msix_masks(dut):
    """Vector Control Mask Bit: the CQE is posted, no message, the vector's Pending Bit is set
    while another vector still interrupts; clearing the mask sends the message and clears the
    bit. Function Mask (Message Control bit 14): the same for every vector."""
    tb = MsixTB(dut)
    host = await tb.start_msix()
    bar = tb.bar
    await bar.write_dword(TABLE + 16 * 1 + 12, 1)
    since = len(tb.bridge.from_dut)
    cmd = await host.submit(1, ns.sqe_flush())
    cq = host.cqs[1]
    await wait_until(lambda: Cqe.unpack(host.mem.read(cq.qmem.slot(cq.head), 16)).phase ==
                     cq.phase, 50, "CQE posted while masked")
    await Timer(10, unit="us")
    assert not cmd.done and not tb.messages(since), "message sent while masked"
    assert await bar.read_qword(PBA) == 1 << 1
    await rw_check(host, 2, 0, 512, tb.rng)             # vector 2 still interrupts
    assert await bar.read_qword(PBA) == 1 << 1
    await bar.write_dword(TABLE + 16 * 1 + 12, 0)
    assert (await cmd.wait(100)).ok
    assert [tb.vector_of(t) for _, t in tb.messages(since)].count(1) == 1
    assert await bar.read_qword(PBA) == 0

    await tb.set_function_mask(True)
    since = len(tb.bridge.from_dut)
    cmds = [await host.submit(q, ns.sqe_flush()) for q in (3, 4)]
    await Timer(20, unit="us")
    assert not any(c.done for c in cmds) and not tb.messages(since)
    assert await bar.read_qword(PBA) == (1 << 3) | (1 << 4)
    await tb.set_function_mask(False)
    for c in cmds:
        assert (await c.wait(100)).ok
    assert sorted(tb.vector_of(t) for _, t in tb.messages(since)) == [3, 4]
    assert await bar.read_qword(PBA) == 0
    await tb.check_clean()


@cocotb.test(timeout_time=3, timeout_unit="ms")
async def test_msix_off_msi(dut):
    """The same build with MSI-X left disabled interrupts with multi-vector MSI (the PHY's msi
    stream), and no MSI-X message leaves."""
    tb = MsixTB(dut)
    host = await tb.start(n_io_queues=2, qdepth=16, msi_vectors=4)
    assert not tb.pdev.msix_enabled and int(dut.cfg_msix_enable.value) == 0
    for qid in (1, 2):
        before = list(tb.bridge.msi_requests)
        await rw_check(host, qid, 64 * qid, 1024, tb.rng)
        assert set(tb.bridge.msi_requests[len(before):]) == {qid % 4}
    assert not tb.messages()
    await tb.check_clean()


# pytest entry ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_nvme_msix():
    run(CORE.with_params(**DEFAULTS, with_msix=True), __file__)
