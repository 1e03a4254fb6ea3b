# SPDX-License-Identifier: BSD-2-Clause
"""Bring-up test of nvme_controller_top at the processor interface: registers and CC.EN, an
admin command routed to the firmware port and its completion posted, I/O queues created
through the firmware port, NVM Write / Read / Flush on the fast path with a RAM back end."""

import logging
import random

import cocotb
import pytest
from cocotb.triggers import ClockCycles, RisingEdge
from pcie_tb import PcieSystemTB
from ssdlab_harness import LiteXCore, core_params, run

from spec import nvme_regmap as rm

CORE = LiteXCore("rtl.nvme.nvme_controller_top:NvmeControllerTop",
                 toplevel="nvme_controller_top")
# clk_freq_hz: the bench clock (PcieSystemTB, 8 ns), so aggregation times are real time.
DEFAULTS = {"n_io_queues": 8, "tag_width": 6, "max_transfer": 131072, "clk_freq_hz": 125e6}
PAGE = 4096


class TB(PcieSystemTB):
    def __init__(self, dut):
        super().__init__(dut)
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        self.rc.log.setLevel(logging.WARNING)
        for name in ["m_fw_cmd_ready", "s_fw_cpl_valid", "s_fw_sq_cfg_valid",
                     "s_fw_cq_cfg_valid", "s_fw_xfer_valid", "m_fw_xfer_cpl_ready",
                     "s_fw_ivc_valid", "m_fw_aer_ready", "m_be_req_ready", "s_be_cpl_valid",
                     "fw_agg_thr", "fw_agg_time", "fw_abort_arm"]:
            getattr(dut, name).value = 0
        dut.fw_ns_size.value = 1 << 20
        self.mem = self.rc.mem_pool.alloc_region(PAGE * 64)
        base = self.mem.get_absolute_address(0)
        self.base = (base + PAGE - 1) & ~(PAGE - 1)
        self.next_page = 0
        self.fw_cmds = []

    def alloc(self, pages=1):
        a = self.base + PAGE * self.next_page
        self.next_page += pages
        return a

    def wr(self, addr, data):
        off = addr - self.mem.get_absolute_address(0)
        self.mem.mem[off:off + len(data)] = data

    def rd(self, addr, n):
        off = addr - self.mem.get_absolute_address(0)
        return bytes(self.mem.mem[off:off + n])

    def start_backend(self):
        """A RAM back end: stores written LBAs, returns them (zeros if never written).
        self.be_seen: each request's (sqid, cid, opcode), the command it came from."""
        dut, store = self.dut, {}
        self.be_seen = []
        words = self.p["max_transfer"] // 8

        async def backend():
            dut.m_be_req_ready.value = 1
            while True:
                await RisingEdge(dut.clk)
                if not int(dut.m_be_req_valid.value):
                    continue
                tag = int(dut.m_be_req_tag.value)
                op = int(dut.m_be_req_opcode.value)
                slba = int(dut.m_be_req_slba.value)
                nlb = int(dut.m_be_req_nlb.value) + 1
                self.be_seen.append((int(dut.m_be_req_sqid.value), int(dut.m_be_req_cid.value),
                                     op))
                if op == 1:
                    for i in range(nlb * 64):
                        store[slba * 64 + i] = int(dut.buf_mem[tag * words + i].value)
                elif op == 2:
                    for i in range(nlb * 64):
                        dut.buf_mem[tag * words + i].value = store.get(slba * 64 + i, 0)
                dut.m_be_req_ready.value = 0
                await drive(dut, "s_be_cpl", tag=tag, status=0)
                dut.m_be_req_ready.value = 1

        cocotb.start_soon(backend())

    async def reg_write(self, name, value):
        reg = rm.REGS[name]
        bar = self.pdev.bar_window[0]
        if reg.width == 64:
            await bar.write_qword(reg.offset, value)
        else:
            await bar.write_dword(reg.offset, value)

    async def reg_read(self, name):
        reg = rm.REGS[name]
        bar = self.pdev.bar_window[0]
        return await (bar.read_qword if reg.width == 64 else bar.read_dword)(reg.offset)


def sqe(opcode, cid, nsid=0, prp1=0, prp2=0, cdw10=0, cdw11=0, cdw12=0):
    b = bytearray(64)
    b[0:4] = (opcode | cid << 16).to_bytes(4, "little")
    b[4:8] = nsid.to_bytes(4, "little")
    b[24:32] = prp1.to_bytes(8, "little")
    b[32:40] = prp2.to_bytes(8, "little")
    for i, v in enumerate([cdw10, cdw11, cdw12]):
        b[40 + 4 * i:44 + 4 * i] = v.to_bytes(4, "little")
    return bytes(b)


async def drive(dut, prefix, **fields):
    """One beat on a LiteX-field stream input of the DUT."""
    for k, v in fields.items():
        getattr(dut, f"{prefix}_{k}").value = v
    getattr(dut, f"{prefix}_valid").value = 1
    while True:
        await RisingEdge(dut.clk)
        if int(getattr(dut, f"{prefix}_ready").value):
            break
    getattr(dut, f"{prefix}_valid").value = 0


@cocotb.test(timeout_time=2, timeout_unit="ms")
async def test_bringup_rw(dut):
    tb = TB(dut)
    await tb.init()
    asq, acq = tb.alloc(), tb.alloc()
    await tb.reg_write("AQA", (15 << 16) | 15)
    await tb.reg_write("ASQ", asq)
    await tb.reg_write("ACQ", acq)
    await tb.reg_write("CC", (6 << 16) | (4 << 20) | 1)
    for _ in range(100):
        if await tb.reg_read("CSTS") & 1:
            break
    else:
        raise AssertionError("CSTS.RDY did not rise")
    assert int(dut.ctrl_enabled.value) == 1

    # Admin command -> firmware port.
    tb.wr(asq, sqe(0x06, cid=0x1234, cdw10=1))
    bar = tb.pdev.bar_window[0]
    await bar.write_dword(rm.doorbell_offset(0, 0, 0), 1)
    dut.m_fw_cmd_ready.value = 1
    for _ in range(2000):
        await RisingEdge(dut.clk)
        if int(dut.m_fw_cmd_valid.value):
            break
    else:
        raise AssertionError("no admin command on m_fw_cmd")
    got = int(dut.m_fw_cmd_sqe.value).to_bytes(64, "little")
    assert got == sqe(0x06, cid=0x1234, cdw10=1)
    assert int(dut.m_fw_cmd_sqid.value) == 0 and int(dut.m_fw_cmd_sq_head.value) == 1
    await RisingEdge(dut.clk)
    dut.m_fw_cmd_ready.value = 0
    await drive(dut, "s_fw_cpl", cqid=0, sqid=0, sq_head=1, cid=0x1234, status=0,
                dw0=0xabcd)
    for _ in range(2000):
        await RisingEdge(dut.clk)
        cqe = tb.rd(acq, 16)
        if cqe[14] & 1:
            break
    else:
        raise AssertionError("no CQE posted")
    assert int.from_bytes(cqe[0:4], "little") == 0xabcd
    assert int.from_bytes(cqe[12:14], "little") == 0x1234

    # I/O queue pair 1 through the firmware port.
    iosq, iocq = tb.alloc(), tb.alloc()
    await drive(dut, "s_fw_cq_cfg", cqid=1, base=iocq, qsize=63, iv=1, ien=1, enable=1)
    await drive(dut, "s_fw_sq_cfg", sqid=1, base=iosq, qsize=63, enable=1, cqid=1)

    tb.start_backend()
    data = bytes(tb.rng.randrange(256) for _ in range(2 * PAGE))
    src, dst = tb.alloc(2), tb.alloc(2)
    tb.wr(src, data)
    tb.wr(iosq, sqe(0x01, cid=7, nsid=1, prp1=src, prp2=src + PAGE, cdw10=100, cdw12=15))
    tb.wr(iosq + 64, sqe(0x00, cid=8, nsid=1))
    tb.wr(iosq + 128, sqe(0x02, cid=10, nsid=1, prp1=dst, cdw10=(1 << 20) - 1, cdw12=1))
    tb.wr(iosq + 192, sqe(0x02, cid=9, nsid=1, prp1=dst, prp2=dst + PAGE, cdw10=100,
                          cdw12=15))

    async def wait_cqe(slot):
        for _ in range(20000):
            await RisingEdge(dut.clk)
            if tb.rd(iocq + 16 * slot, 16)[14] & 1:
                return
        raise AssertionError(f"I/O completions missing: {tb.rd(iocq, 64).hex()}")

    await bar.write_dword(rm.doorbell_offset(1, 0, 0), 3)   # the write, flush, bad read
    await wait_cqe(2)
    await bar.write_dword(rm.doorbell_offset(1, 0, 0), 4)   # then the read
    await wait_cqe(3)
    cqes = [tb.rd(iocq + 16 * i, 16) for i in range(4)]
    status = {int.from_bytes(c[12:14], "little"): int.from_bytes(c[14:16], "little") >> 1
              for c in cqes}
    assert status == {7: 0, 8: 0, 9: 0, 10: 0x80 | 1 << 14}, status
    assert tb.rd(dst, 2 * PAGE) == data
    # each block request names its command (the back end's error log entries do)
    assert sorted(tb.be_seen) == [(1, 7, 1), (1, 8, 0), (1, 9, 2)], tb.be_seen
    await ClockCycles(dut.clk, 10)


@pytest.mark.smoke
def test_nvme_controller_bringup():
    run(CORE.with_params(**DEFAULTS), __file__)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def test_queue_lists(dut):
    """An I/O queue pair in PRP-list memory (scattered pages, CAP.CQR = 0): 300 Flush commands
    through a 128-entry SQ of 2 pages into a 512-entry CQ of 2 pages, so both queues cross
    their page boundary and the SQ wraps; every CQE lands in the right slot of the right page
    with the right phase."""
    tb = TB(dut)
    await tb.init()
    assert (await tb.reg_read("CAP") >> 16) & 1 == 0, "CAP.CQR should be 0"
    asq, acq = tb.alloc(), tb.alloc()
    await tb.reg_write("AQA", (15 << 16) | 15)
    await tb.reg_write("ASQ", asq)
    await tb.reg_write("ACQ", acq)
    await tb.reg_write("CC", (6 << 16) | (4 << 20) | 1)
    for _ in range(100):
        if await tb.reg_read("CSTS") & 1:
            break
    sq_pages = [tb.alloc() for _ in range(3)][::-2]          # scattered, out of order
    cq_pages = [tb.alloc() for _ in range(3)][::-2]
    for i, a in enumerate(sq_pages):
        await drive(dut, "s_fw_sq_page", sqid=2, index=i, page=a >> 12)
    for i, a in enumerate(cq_pages):
        await drive(dut, "s_fw_cq_page", cqid=2, index=i, page=a >> 12)
    await drive(dut, "s_fw_cq_cfg", cqid=2, base=0, qsize=511, iv=0, ien=0, enable=1, nc=1)
    await drive(dut, "s_fw_sq_cfg", sqid=2, base=0, qsize=127, enable=1, cqid=2, nc=1)
    bar = tb.pdev.bar_window[0]
    tb.start_backend()

    def sq_slot(i):
        return sq_pages[i // 64] + 64 * (i % 64)

    def cq_slot(i):
        return cq_pages[i // 256] + 16 * (i % 256)

    tail = done = 0
    n = 300
    while done < n:
        batch = min(100, n - tail)
        for k in range(batch):
            tb.wr(sq_slot((tail + k) % 128), sqe(0x00, cid=tail + k, nsid=1))
        tail += batch
        await bar.write_dword(rm.doorbell_offset(2, 0, 0), tail % 128)
        for _ in range(50000):
            await RisingEdge(dut.clk)
            if tb.rd(cq_slot(tail - 1), 16)[14] & 1:
                break
        else:
            reqs = [(t.fmt_type.name, hex(t.address)) for t in tb.bridge.from_dut
                    if not t.is_completion()][-8:]
            raise AssertionError(f"CQE {tail - 1} missing; sq pages {list(map(hex, sq_pages))} "
                                 f"cq pages {list(map(hex, cq_pages))}; last requests {reqs}")
        for i in range(done, tail):
            c = tb.rd(cq_slot(i), 16)
            assert int.from_bytes(c[12:14], "little") == i, f"CQE slot {i}: {c.hex()}"
            assert int.from_bytes(c[8:10], "little") == (i + 1) % 128, f"SQHD slot {i}"
            assert int.from_bytes(c[14:16], "little") == 1, f"status/phase slot {i}"
        done = tail
        await bar.write_dword(rm.doorbell_offset(2, 1, 0), done % 512)
