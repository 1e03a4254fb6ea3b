# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nvme_regs: the NVMe 1.4 BAR0 register file and doorbells.

Expected values come from the register table (spec.nvme_regmap) and the NVMe formulas,
never from the RTL. The TB drives BAR0 through cocotbext-axi, models the queue engines
(ctrl_ready / shutdown_done after a random delay, or stalled on request) and takes doorbell
events with random backpressure.
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotbext.axi import AxiLiteBus, AxiLiteMaster
from ssdlab_harness import LiteXCore, core_params, run

from spec import nvme_regmap as rm

CORE = LiteXCore("rtl.nvme.nvme_regs:NvmeRegs", "nvme_regs")
POLL_LIMIT = 200        # CSTS polls before a wait counts as a timeout


# Testbench ---------------------------------------------------------------------------------------

class TB:
    def __init__(self, dut):
        self.dut = dut
        self.log = dut._log
        self.p = {**rm.DEFAULT_PARAMS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
        self.axil = AxiLiteMaster(AxiLiteBus.from_prefix(dut, "s_axil"), dut.clk, dut.rst)
        # Engine model knobs.
        self.stall_ready = False        # hold ctrl_ready where it is
        self.stall_shutdown = False     # hold shutdown_done low
        # Doorbell monitor.
        self.events = []                # (qid, is_cq, value) in arrival order
        self.invalid = 0                # db_invalid pulses seen
        self.ready_prob = 0.5           # m_db_ready probability per cycle
        self.ready_block = False        # hold m_db_ready low
        dut.ctrl_ready.value = 0
        dut.shutdown_done.value = 0
        dut.fatal.value = 0
        dut.m_db_ready.value = 0
        dut.rst.value = 0

    async def reset(self):
        self.dut.rst.value = 1
        await ClockCycles(self.dut.clk, 4)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 2)
        cocotb.start_soon(self._engine())
        cocotb.start_soon(self._db_monitor())

    async def _engine(self):
        """Queue engines: acknowledge CC.EN / CC.SHN after 5..40 cycles."""
        dut, en_wait, shn_wait = self.dut, None, None
        while True:
            await RisingEdge(dut.clk)
            en = int(dut.cc_en.value)
            if en != int(dut.ctrl_ready.value) and not self.stall_ready:
                en_wait = self.rng.randint(5, 40) if en_wait is None else en_wait - 1
                if en_wait == 0:
                    dut.ctrl_ready.value, en_wait = en, None
            else:
                en_wait = None
            shn = int(dut.cc_shn.value) != 0
            if not shn:
                dut.shutdown_done.value, shn_wait = 0, None
            elif not self.stall_shutdown and not int(dut.shutdown_done.value):
                shn_wait = self.rng.randint(5, 40) if shn_wait is None else shn_wait - 1
                if shn_wait == 0:
                    dut.shutdown_done.value, shn_wait = 1, None

    async def _db_monitor(self):
        dut = self.dut
        while True:
            ready = not self.ready_block and self.rng.random() < self.ready_prob
            dut.m_db_ready.value = int(ready)
            await RisingEdge(dut.clk)
            if ready and int(dut.m_db_valid.value):
                self.events.append((int(dut.m_db_qid.value), int(dut.m_db_is_cq.value),
                                    int(dut.m_db_value.value)))
            self.invalid += int(dut.db_invalid.value)

    # Register access by name, width from the table.
    async def read(self, name):
        reg = rm.REGS[name]
        if reg.width == 64:
            return await self.axil.read_qword(reg.offset)
        return await self.axil.read_dword(reg.offset)

    async def write(self, name, value):
        reg = rm.REGS[name]
        if reg.width == 64:
            await self.axil.write_qword(reg.offset, value)
        else:
            await self.axil.write_dword(reg.offset, value)

    async def wait_csts(self, field, value):
        for _ in range(POLL_LIMIT):
            if rm.field_get("CSTS", field, await self.read("CSTS")) == value:
                return
            await ClockCycles(self.dut.clk, self.rng.randint(0, 4))
        raise AssertionError(f"timeout waiting for CSTS.{field} == {value}")

    def expected_doorbells(self, offset, nbytes):
        """Reference: the (lane, qid, is_cq) events and the invalid count of a write of `nbytes`
        bytes at `offset`; lane i carries bytes 4i..4i+3 of the data."""
        events, invalid = [], 0
        stride = 4 << self.p["dstrd"]
        for lane, lane_off in enumerate(range(offset, offset + nbytes, 4)):
            rel = lane_off - rm.DOORBELL_BASE
            if rel < 0 or rel % stride:
                continue
            qid, is_cq = divmod(rel // stride, 2)
            if qid <= self.p["n_io_queues"]:
                events.append((lane, qid, is_cq))
            else:
                invalid += 1
        return events, invalid

    async def drain(self, n_events, cycles=500):
        for _ in range(cycles):
            if len(self.events) >= n_events:
                break
            await RisingEdge(self.dut.clk)
        await ClockCycles(self.dut.clk, 20)   # anything extra would show up here


async def make_tb(dut):
    tb = TB(dut)
    await tb.reset()
    return tb


# Tests -------------------------------------------------------------------------------------------

@cocotb.test()
async def test_reset_values(dut):
    """Every register reads its table reset value; unimplemented offsets and doorbells read 0."""
    tb = await make_tb(dut)
    for reg in rm.REGISTERS:
        got = await tb.read(reg.name)
        exp = rm.reset_value(reg, tb.p)
        assert got == exp, f"{reg.name}: read 0x{got:x}, table reset 0x{exp:x}"
    for off in [0x18, 0x20, 0x38, 0x3C, 0x40, 0x50, 0xE00, 0xFF8, 0xFFC]:
        assert await tb.axil.read_dword(off) == 0, f"offset 0x{off:x} not 0"
    for qid in [0, tb.p["n_io_queues"]]:
        for is_cq in (0, 1):
            off = rm.doorbell_offset(qid, is_cq, tb.p["dstrd"])
            assert await tb.axil.read_dword(off) == 0, f"doorbell 0x{off:x} reads non-zero"


@cocotb.test()
async def test_cap_fields(dut):
    """CAP fields follow the HDL parameters (NVMe 1.4 3.1.1)."""
    tb = await make_tb(dut)
    cap = await tb.read("CAP")
    # 32-bit halves, the way a driver without readq reads CAP.
    lo, hi = await tb.axil.read_dword(0x00), await tb.axil.read_dword(0x04)
    assert cap == lo | hi << 32
    p = tb.p
    assert rm.field_get("CAP", "MQES", cap) == p["mqes"]
    assert rm.field_get("CAP", "CQR", cap) == 1
    assert rm.field_get("CAP", "TO", cap) == p["timeout_500ms"]
    assert rm.field_get("CAP", "DSTRD", cap) == p["dstrd"]
    assert rm.field_get("CAP", "NSSRS", cap) == 0
    assert cap >> 37 & 1, "CAP.CSS bit 37 (NVM command set) clear"
    assert rm.field_get("CAP", "MPSMIN", cap) == p["mpsmin"]
    assert rm.field_get("CAP", "MPSMAX", cap) == p["mpsmax"]
    assert await tb.read("VS") == 0x00010400, "VS is not 1.4.0"


@cocotb.test()
async def test_rw_ro_masks(dut):
    """Write all-ones then all-zeros: only RW bits change; RO and reserved bits keep reset."""
    tb = await make_tb(dut)
    tb.stall_ready = tb.stall_shutdown = True    # keep CSTS at reset while CC changes
    ones = {32: 0xFFFF_FFFF, 64: (1 << 64) - 1}
    order = [r for r in rm.REGISTERS if r.name != "CC"] + [rm.REGS["CC"]]
    for reg in order:
        if reg.name in ("INTMS", "INTMC"):
            continue                             # shared mask: test_intms_intmc
        reset, mask = rm.reset_value(reg, tb.p), rm.rw_mask(reg)
        for pattern in (ones[reg.width], 0):
            await tb.write(reg.name, pattern)
            got = await tb.read(reg.name)
            exp = (reset & ~mask) | (pattern & mask)
            assert got == exp, f"{reg.name} <- 0x{pattern:x}: read 0x{got:x}, expected 0x{exp:x}"
    # Byte strobes: a 32-bit write to the upper half of ASQ leaves the lower half alone.
    await tb.write("ASQ", 0x1234_5000)
    await tb.axil.write_dword(rm.REGS["ASQ"].offset + 4, 0xABCD)
    assert await tb.read("ASQ") == 0xABCD_1234_5000
    assert int(dut.asq.value) == 0xABCD_1234_5000


@cocotb.test()
async def test_intms_intmc(dut):
    """INTMS sets and INTMC clears one mask; both read it; the intm port follows."""
    tb = await make_tb(dut)
    mask = 0
    for _ in range(20):
        bits = tb.rng.getrandbits(32)
        if tb.rng.random() < 0.5:
            await tb.write("INTMS", bits)
            mask |= bits
        else:
            await tb.write("INTMC", bits)
            mask &= ~bits
        assert await tb.read("INTMS") == mask
        assert await tb.read("INTMC") == mask
        assert int(dut.intm.value) == mask


async def enable(tb, asqs, acqs, asq, acq, split):
    """The Linux driver's nvme_pci_configure_admin_queue + nvme_enable_ctrl."""
    cap = await tb.read("CAP")
    cc = 0
    await tb.write("CC", cc)
    await tb.wait_csts("RDY", 0)
    await tb.write("AQA", asqs | acqs << 16)
    if split:   # lo_hi_writeq
        for name, value in (("ASQ", asq), ("ACQ", acq)):
            off = rm.REGS[name].offset
            await tb.axil.write_dword(off, value & 0xFFFF_FFFF)
            await tb.axil.write_dword(off + 4, value >> 32)
    else:
        await tb.write("ASQ", asq)
        await tb.write("ACQ", acq)
    mps = rm.field_get("CAP", "MPSMIN", cap)
    for name, value in (("MPS", mps), ("IOSQES", 6), ("IOCQES", 4), ("EN", 1)):
        cc = rm.field_put("CC", name, cc, value)
    await tb.write("CC", cc)
    await tb.wait_csts("RDY", 1)
    return cc


@cocotb.test()
async def test_enable_disable(dut):
    """Driver enable sequence with 32- and 64-bit writes, then disable; ports follow."""
    tb = await make_tb(dut)
    for split in (False, True):
        asqs, acqs = tb.rng.randrange(1, 4096), tb.rng.randrange(1, 4096)
        asq = tb.rng.getrandbits(52) << 12
        acq = tb.rng.getrandbits(52) << 12
        cc = await enable(tb, asqs, acqs, asq, acq, split)
        assert await tb.read("ASQ") == asq and int(dut.asq.value) == asq
        assert await tb.read("ACQ") == acq and int(dut.acq.value) == acq
        assert await tb.read("AQA") == asqs | acqs << 16
        assert (int(dut.aqa_asqs.value), int(dut.aqa_acqs.value)) == (asqs, acqs)
        assert await tb.read("CC") == cc
        assert int(dut.cc_en.value) == 1
        assert int(dut.cc_iosqes.value) == 6 and int(dut.cc_iocqes.value) == 4
        assert int(dut.cc_mps.value) == tb.p["mpsmin"]
        await tb.write("CC", rm.field_put("CC", "EN", cc, 0))
        await tb.wait_csts("RDY", 0)
        assert int(dut.cc_en.value) == 0


@cocotb.test()
async def test_rdy_waits_for_engines(dut):
    """CSTS.RDY changes only after the engines acknowledge CC.EN, both ways."""
    tb = await make_tb(dut)
    tb.stall_ready = True
    await tb.write("CC", rm.field_put("CC", "EN", 0, 1))
    for _ in range(10):
        assert rm.field_get("CSTS", "RDY", await tb.read("CSTS")) == 0, \
            "RDY rose before ctrl_ready"
    tb.stall_ready = False
    await tb.wait_csts("RDY", 1)
    assert int(dut.ctrl_ready.value) == 1
    tb.stall_ready = True
    await tb.write("CC", 0)
    for _ in range(10):
        assert rm.field_get("CSTS", "RDY", await tb.read("CSTS")) == 1, \
            "RDY fell before the engines acknowledged the reset"
    tb.stall_ready = False
    await tb.wait_csts("RDY", 0)
    assert int(dut.ctrl_ready.value) == 0


@cocotb.test()
async def test_fatal(dut):
    """CSTS.CFS reflects the fatal input."""
    tb = await make_tb(dut)
    dut.fatal.value = 1
    await tb.wait_csts("CFS", 1)
    dut.fatal.value = 0
    await tb.wait_csts("CFS", 0)


@cocotb.test()
async def test_shutdown(dut):
    """CC.SHN -> SHST 01b (processing) -> 10b (complete) on shutdown_done -> 00b on SHN=0."""
    tb = await make_tb(dut)
    cc = await enable(tb, 31, 31, 0x1000, 0x2000, False)
    for shn in (0b01, 0b10):
        tb.stall_shutdown = True
        await tb.write("CC", rm.field_put("CC", "SHN", cc, shn))
        assert int(dut.cc_shn.value) == shn
        for _ in range(5):
            assert rm.field_get("CSTS", "SHST", await tb.read("CSTS")) == 0b01
        tb.stall_shutdown = False
        await tb.wait_csts("SHST", 0b10)
        # Linux then resets the controller: CC.EN=0 with SHN cleared.
        await tb.write("CC", 0)
        await tb.wait_csts("SHST", 0b00)
        await tb.wait_csts("RDY", 0)
        cc = await enable(tb, 31, 31, 0x1000, 0x2000, False)


@cocotb.test()
@cocotb.parametrize(ready_prob=[1.0, 0.5, 0.1])
async def test_doorbells(dut, ready_prob):
    """32- and 64-bit doorbell writes become events with the right qid/is_cq/value under
    random backpressure; none lost, none extra, in order."""
    tb = await make_tb(dut)
    tb.ready_prob = ready_prob
    n, dstrd = tb.p["n_io_queues"], tb.p["dstrd"]
    expected, invalid = [], 0
    qids = sorted({0, n, *(tb.rng.randint(0, n) for _ in range(6))})
    for _ in range(40):
        qid, is_cq = tb.rng.choice(qids), tb.rng.randint(0, 1)
        off = rm.doorbell_offset(qid, is_cq, dstrd)
        if tb.rng.random() < 0.3 and off % 8 == 0:
            # 64-bit write: with dstrd=0 it rings the SQ and CQ doorbell of a queue at once.
            values = [tb.rng.getrandbits(16), tb.rng.getrandbits(16)]
            await tb.axil.write_qword(off, values[0] | values[1] << 32)
            evs, inv = tb.expected_doorbells(off, 8)
            expected += [(q, c, values[lane]) for lane, q, c in evs]
        else:
            value = tb.rng.getrandbits(16)
            await tb.axil.write_dword(off, value | tb.rng.getrandbits(16) << 16)
            evs, inv = tb.expected_doorbells(off, 4)
            expected += [(q, c, value) for _, q, c in evs]
        invalid += inv
    assert len(expected) >= 40, "the test rang too few doorbells"
    await tb.drain(len(expected))
    assert tb.events == expected, f"events {tb.events}\nexpected {expected}"
    assert tb.invalid == invalid == 0


@cocotb.test()
async def test_doorbell_backpressure_holds_b(dut):
    """While the event cannot be taken the AXI write stays unacknowledged; nothing is lost."""
    tb = await make_tb(dut)
    tb.ready_block = True
    off = rm.doorbell_offset(tb.p["n_io_queues"], 1, tb.p["dstrd"])
    task = cocotb.start_soon(tb.axil.write_dword(off, 0x5A5A))
    await ClockCycles(dut.clk, 100)
    assert not task.done(), "B returned while m_db_ready was low"
    assert tb.events == []
    tb.ready_block = False
    await task
    await tb.drain(1)
    assert tb.events == [(tb.p["n_io_queues"], 1, 0x5A5A)]


@cocotb.test()
async def test_invalid_doorbell(dut):
    """Doorbells above n_io_queues make no event but raise db_invalid once each."""
    tb = await make_tb(dut)
    n, dstrd = tb.p["n_io_queues"], tb.p["dstrd"]
    writes = [(n + 1, 0), (n + 1, 1), (n + 7, 0)]
    for qid, is_cq in writes:
        await tb.axil.write_dword(rm.doorbell_offset(qid, is_cq, dstrd), 0x1)
    # A valid doorbell after them still gets through.
    await tb.axil.write_dword(rm.doorbell_offset(0, 1, dstrd), 0x7)
    await tb.drain(1)
    assert tb.events == [(0, 1, 0x7)]
    assert tb.invalid == len(writes)
    if dstrd:
        # Padding between strided doorbells is neither a doorbell nor flagged.
        await tb.axil.write_dword(rm.doorbell_offset(0, 0, dstrd) + 4, 0x3)
        await tb.drain(2)
        assert tb.events == [(0, 1, 0x7)] and tb.invalid == len(writes)


# pytest entry points -----------------------------------------------------------------------------

SMOKE = [dict(n_io_queues=4, dstrd=0), dict(n_io_queues=3, dstrd=2)]
FULL = [
    dict(n_io_queues=1, dstrd=0),
    dict(n_io_queues=64, dstrd=1),
    dict(n_io_queues=64, dstrd=0, mqes=255, timeout_500ms=1, mpsmin=1, mpsmax=4),
    dict(n_io_queues=300, dstrd=3, mqes=65535, timeout_500ms=255),
    dict(n_io_queues=65535, dstrd=0),
    dict(n_io_queues=2, dstrd=15),
]


def _id(params):
    return "-".join(f"{k}{v}" for k, v in params.items())


@pytest.mark.smoke
@pytest.mark.parametrize("params", SMOKE, ids=_id)
def test_nvme_regs(params):
    run(CORE.with_params(**params), __file__)


@pytest.mark.full
@pytest.mark.parametrize("params", FULL, ids=_id)
def test_nvme_regs_sweep(params):
    run(CORE.with_params(**params), __file__)


@pytest.mark.smoke
def test_readme_table_current():
    """rtl/nvme/README.md carries the table generated from nvme_regmap."""
    assert rm.readme_is_current(), \
        "rtl/nvme/README.md is stale: run python -m spec.nvme_regmap --update-readme"


@pytest.mark.smoke
def test_c_header(tmp_path):
    """The generated C header compiles and names the doorbell macro."""
    import shutil
    import subprocess
    text = rm.c_header()
    assert "#define NVME_DB_OFFSET(qid, is_cq, dstrd)" in text
    assert "#define NVME_REG_CAP" in text and "NVME_CC_EN_MASK" in text
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        pytest.skip("no C compiler")
    src = tmp_path / "t.c"
    src.write_text('#include "nvme_regs.h"\n_Static_assert(NVME_DB_OFFSET(3, 1, 2) == '
                   f'{rm.doorbell_offset(3, 1, 2)}, "db");\n'
                   f'_Static_assert(NVME_REG_ACQ == {rm.REGS["ACQ"].offset}, "acq");\n')
    (tmp_path / "nvme_regs.h").write_text(text)
    subprocess.run([cc, "-fsyntax-only", "-std=c11", "-I", str(tmp_path), str(src)], check=True)


@pytest.mark.smoke
@pytest.mark.parametrize("name,value", [
    ("n_io_queues", 0), ("n_io_queues", 65536), ("mqes", 0), ("dstrd", 16),
    ("timeout_500ms", 0), ("mpsmin", 16), ("address_width", 12),
])
def test_bad_params(name, value):
    """Illegal parameters stop elaboration with a message naming the parameter."""
    from rtl.nvme.nvme_regs import NvmeRegs
    with pytest.raises(ValueError, match=name):
        NvmeRegs(**{name: value})
    with pytest.raises(ValueError, match="mpsmax"):
        NvmeRegs(mpsmin=3, mpsmax=2)
    with pytest.raises(ValueError, match="address_width"):
        NvmeRegs(n_io_queues=65535, dstrd=15)
