# SPDX-License-Identifier: BSD-2-Clause
"""System test: a cocotbext-pcie root complex reaches nvme_regs through real TLPs.

RootComplex -> NvmeBridgeDevice (config space, TLP streams) -> PCIeSimPHY -> LitePCIeEndpoint
-> NvmeBar0 -> NvmeRegs. Expected register values come from spec.nvme_regmap, never from the
RTL; completions are checked field by field (status, byte count, lower address, tag, IDs) by
the root complex model and again here on the raw TLPs the bridge saw.
"""

import random

import cocotb
import pytest
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.pcie.core.tlp import CplStatus, TlpType
from pcie_tb import NVME_CLASS_CODE, PcieSystemTB
from ssdlab_harness import LiteXCore, core_params, run

from spec import nvme_regmap as rm

CORE = LiteXCore("tests.pcie.pcie_sim_phy.pcie_nvme_regs_top:PcieNvmeRegsTop",
                 toplevel="pcie_nvme_regs_top")
DEFAULTS = {"data_width": 64, "bar0_size": 0x4000, "n_io_queues": 4}
POLL_LIMIT = 100


# Testbench ---------------------------------------------------------------------------------------

class TB(PcieSystemTB):
    def __init__(self, dut):
        p = {**DEFAULTS, **core_params()}
        super().__init__(dut, bar0_size=p["bar0_size"])
        self.p = p
        self.regp = {**rm.DEFAULT_PARAMS, "n_io_queues": self.p["n_io_queues"]}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        dut.m_db_ready.value = 0
        self.doorbells = []         # (qid, is_cq, value) taken from m_db
        self.bad_req = 0            # NvmeBar0 bad_req pulses
        self.bar = None

    async def init(self):
        await super().init()
        self.bar = self.pdev.bar_window[0]

    async def _monitor(self):
        dut = self.dut
        while True:
            ready = self.rng.random() < 0.7
            dut.m_db_ready.value = int(ready)
            await RisingEdge(dut.clk)
            if ready and int(dut.m_db_valid.value):
                self.doorbells.append((int(dut.m_db_qid.value), int(dut.m_db_is_cq.value),
                                       int(dut.m_db_value.value)))
            self.bad_req += int(dut.bad_req.value)

    def backpressure(self, on):
        """Random idle cycles on s_tlp and backpressure on m_tlp and m_msi."""
        b = self.bridge
        if on:
            b.tlp_source.set_pause_generator(self._pauses())
            b.tlp_sink.set_pause_generator(self._pauses())
            b.msi_ready_prob = 0.3
        else:
            b.tlp_source.set_pause_generator(None)
            b.tlp_sink.set_pause_generator(None)
            b.msi_ready_prob = 1.0

    def _pauses(self):
        while True:
            yield self.rng.random() < 0.4

    # Register access by name, width from the table, through BAR0.
    async def read(self, name):
        reg = rm.REGS[name]
        if reg.width == 64:
            return await self.bar.read_qword(reg.offset)
        return await self.bar.read_dword(reg.offset)

    async def write(self, name, value):
        reg = rm.REGS[name]
        if reg.width == 64:
            await self.bar.write_qword(reg.offset, value)
        else:
            await self.bar.write_dword(reg.offset, value)

    def completions(self):
        return [t for t in self.bridge.from_dut if t.is_completion()]

    def check_clean(self):
        assert not self.bridge.malformed, f"malformed TLPs from the DUT: {self.bridge.malformed}"


async def make_tb(dut):
    tb = TB(dut)
    await tb.init()
    return tb


# Tests -------------------------------------------------------------------------------------------

@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_enumerate(dut):
    """Enumeration: NVMe class code, a 64-bit non-prefetchable BAR0 of the PHY's size below 4 GiB,
    MSI and MSI-X capabilities; the DUT's ID follows the assigned bus/device/function."""
    tb = await make_tb(dut)
    d = tb.pdev
    assert d.class_code == NVME_CLASS_CODE, f"class code 0x{d.class_code:06x}"
    assert d.bar_size[0] == tb.p["bar0_size"], f"BAR0 size 0x{d.bar_size[0]:x}"
    assert d.bar_raw[0] & 0x6 == 0x4 and not d.bar_raw[0] & 0x8, f"BAR0 {d.bar_raw[0]:#x}"
    assert 0 < d.bar_addr[0] < 2**32 and d.bar_addr[0] % tb.p["bar0_size"] == 0
    caps = [c[0] for c in d.capabilities]
    assert 0x05 in caps and 0x11 in caps, f"capabilities {caps}"
    await ClockCycles(dut.clk, 2)
    assert int(dut.cfg_bus_dev_fn.value) == int(tb.bridge.function.pcie_id)
    tb.check_clean()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_cap_vs(dut):
    """CAP as one 64-bit read (2 DW TLP) and as two 32-bit reads; VS; the raw completions carry
    the right byte count, lower address, tag and IDs."""
    tb = await make_tb(dut)
    cap = rm.reset_value("CAP", tb.regp)
    got = await tb.bar.read_qword(0x00)
    assert got == cap, f"CAP readq 0x{got:016x}, table 0x{cap:016x}"
    lo, hi = await tb.bar.read_dword(0x00), await tb.bar.read_dword(0x04)
    assert (hi << 32 | lo) == cap, f"CAP 2 x readl 0x{hi:08x}_{lo:08x}"
    vs = await tb.read("VS")
    assert vs == rm.reset_value("VS", tb.regp), f"VS 0x{vs:08x}"

    for offset, length in [(0x00, 2), (0x04, 1), (0x08, 1), (0x1C, 1), (0x28, 2)]:
        cpls = await tb.raw_request(TlpType.MEM_READ, offset, length)
        assert len(cpls) == 1, f"{len(cpls)} completions for a read at 0x{offset:x}"
        c = cpls[0]
        assert c.status == CplStatus.SC and c.fmt_type == TlpType.CPL_DATA
        assert c.length == length, f"Length {c.length} for {length} DW at 0x{offset:x}"
        assert c.byte_count == 4 * length, f"Byte Count {c.byte_count} at 0x{offset:x}"
        assert c.lower_address == (tb.pdev.bar_addr[0] + offset) & 0x7F, \
            f"Lower Address 0x{c.lower_address:x} for offset 0x{offset:x}"
        assert c.completer_id == tb.bridge.function.pcie_id
        assert c.requester_id == tb.rc.pcie_id
    tb.check_clean()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_admin_queue_regs(dut):
    """AQA, ASQ, ACQ: 64-bit writes and reads, 32-bit halves, RW masks from the table."""
    tb = await make_tb(dut)
    for name in ["ASQ", "ACQ"]:
        val = tb.rng.getrandbits(64)
        await tb.write(name, val)
        exp = val & rm.rw_mask(name)
        got = await tb.read(name)
        assert got == exp, f"{name} writeq 0x{val:x}: read 0x{got:x}, expected 0x{exp:x}"
        # lo_hi_writeq, as the Linux driver writes it.
        val = tb.rng.getrandbits(64)
        off = rm.REGS[name].offset
        await tb.bar.write_dword(off, val & 0xFFFFFFFF)
        await tb.bar.write_dword(off + 4, val >> 32)
        exp = val & rm.rw_mask(name)
        got = await tb.read(name)
        assert got == exp, f"{name} lo_hi_writeq 0x{val:x}: read 0x{got:x}"
    aqa = (31 << 16) | 31
    await tb.write("AQA", aqa)
    assert await tb.read("AQA") == aqa & rm.rw_mask("AQA")
    tb.check_clean()


@cocotb.test(timeout_time=200, timeout_unit="us")
@cocotb.parametrize(backpressure=[False, True])
async def test_enable_doorbell_msi(dut, backpressure):
    """Linux-style bring-up: AQA/ASQ/ACQ, CC with EN=1, poll CSTS.RDY; ring the admin SQ tail
    doorbell and see the nvme_regs doorbell event, then the MSI the test stub raises for it;
    shut down (CC.SHN) and disable."""
    tb = await make_tb(dut)
    tb.backpressure(backpressure)
    assert await tb.pdev.enable_msi_range(1, 1) == 1
    assert tb.bridge.function.msi_cap.msi_enable
    msi = tb.pdev.msi_vectors[0].event   # (PciDevice.msi_get_event is broken in 0.2.16)

    await tb.write("AQA", (31 << 16) | 31)
    await tb.write("ASQ", 0x1_0000_0000)
    await tb.write("ACQ", 0x1_0000_1000)
    cc = (6 << 16) | (4 << 20) | 1            # IOSQES=6, IOCQES=4, EN=1
    await tb.write("CC", cc)
    assert await tb.read("CC") == cc
    for _ in range(POLL_LIMIT):
        if rm.field_get("CSTS", "RDY", await tb.read("CSTS")):
            break
    else:
        raise AssertionError("CSTS.RDY did not rise after CC.EN=1")

    msi.clear()
    await tb.bar.write_dword(rm.doorbell_offset(0, 0, tb.regp["dstrd"]), 5)   # SQ0 tail = 5
    await tb.bar.write_dword(rm.doorbell_offset(0, 1, tb.regp["dstrd"]), 3)   # CQ0 head = 3
    for _ in range(500):
        if len(tb.doorbells) >= 2 and msi.is_set():
            break
        await RisingEdge(dut.clk)
    assert tb.doorbells == [(0, 0, 5), (0, 1, 3)], f"doorbell events {tb.doorbells}"
    assert msi.is_set(), "no MSI at the root complex for the doorbell"
    assert tb.bridge.msi_requests[:1] == [0]

    await tb.write("CC", cc | (1 << 14))      # SHN = normal shutdown
    for _ in range(POLL_LIMIT):
        if rm.field_get("CSTS", "SHST", await tb.read("CSTS")) == 0b10:
            break
    else:
        raise AssertionError("CSTS.SHST did not reach 10b")
    await tb.write("CC", 0)
    for _ in range(POLL_LIMIT):
        if not rm.field_get("CSTS", "RDY", await tb.read("CSTS")):
            break
    else:
        raise AssertionError("CSTS.RDY did not fall after CC.EN=0")
    tb.check_clean()


@cocotb.test(timeout_time=200, timeout_unit="us")
async def test_bad_requests(dut):
    """Oversize and qword-crossing reads get one UR completion; such writes are dropped; the
    link keeps working afterwards."""
    tb = await make_tb(dut)
    asq = 0x1234_5000
    await tb.write("ASQ", asq)
    for offset, length in [(0x00, 4), (0x00, 3), (0x04, 2), (0x28, 16)]:
        cpls = await tb.raw_request(TlpType.MEM_READ, offset, length)
        assert len(cpls) == 1, f"{len(cpls)} completions for {length} DW at 0x{offset:x}"
        c = cpls[0]
        assert c.status == CplStatus.UR and c.fmt_type == TlpType.CPL, \
            f"{length} DW read at 0x{offset:x}: {c!r}"
        assert c.requester_id == tb.rc.pcie_id and c.completer_id == tb.bridge.function.pcie_id
        # Still alive.
        assert await tb.read("ASQ") == asq
    for offset, length in [(0x28, 4), (0x2C, 2), (0x28, 3)]:
        data = bytes(tb.rng.getrandbits(8) for _ in range(4 * length))
        await tb.raw_request(TlpType.MEM_WRITE, offset, length, data)
        assert await tb.read("ASQ") == asq, f"{length} DW write at 0x{offset:x} changed ASQ"
    await ClockCycles(dut.clk, 10)
    assert tb.bad_req == 7, f"bad_req pulses {tb.bad_req}, expected 7"
    assert await tb.read("VS") == rm.reset_value("VS", tb.regp)
    tb.check_clean()


# pytest entry ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_pcie_nvme_regs():
    run(CORE.with_params(**DEFAULTS), __file__)
