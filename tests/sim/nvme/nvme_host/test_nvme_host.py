# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the Python NVMe models, without a simulator: spec/nvme.py (SQE/CQE
layout, status field values, Identify / log page byte offsets against NVMe 1.4), the PRP
builder of sim/nvme/nvme_host.py (against a fake memory, checked by walking the PRPs it
built), HostMemory, and NvmeHost's queue mechanics (submission slots, doorbells, phase tags,
SQHD tracking) against a fake controller.

Expected offsets and values are written out from the specification's figures, never taken
from the code under test."""

import random
import struct

import pytest

from sim.nvme import nvme_host as nh
from spec import nvme as ns
from spec import nvme_regmap as rm
from spec.nvme import SC, Cqe, Sqe

pytestmark = pytest.mark.smoke
PAGE = 4096


def u(data, offset, size):
    return int.from_bytes(data[offset:offset + size], "little")


# SQE / CQE ---------------------------------------------------------------------------------------

def test_sqe_layout():
    s = Sqe(opcode=0xA5, fuse=2, psdt=1, cid=0xBEEF, nsid=0x11223344, cdw2=0x55, cdw3=0x66,
            mptr=0x0102030405060708, prp1=0x1111222233334444, prp2=0x5555666677778888,
            cdw10=0xA0, cdw11=0xA1, cdw12=0xA2, cdw13=0xA3, cdw14=0xA4, cdw15=0xA5A5A5A5)
    b = s.pack()
    assert len(b) == 64
    # NVMe 1.4 figure 105: CDW0 opcode 7:0, FUSE 9:8, PSDT 15:14, CID 31:16.
    assert b[0] == 0xA5 and (b[1] & 3) == 2 and (b[1] >> 6) == 1 and u(b, 2, 2) == 0xBEEF
    assert u(b, 4, 4) == 0x11223344                        # NSID
    assert u(b, 8, 4) == 0x55 and u(b, 12, 4) == 0x66      # CDW2, CDW3
    assert u(b, 16, 8) == 0x0102030405060708                # MPTR
    assert u(b, 24, 8) == 0x1111222233334444                # PRP1
    assert u(b, 32, 8) == 0x5555666677778888                # PRP2
    for i, v in enumerate([0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5A5A5A5]):
        assert u(b, 40 + 4 * i, 4) == v, f"CDW{10 + i}"
    assert Sqe.unpack(b) == s
    # The RTL's sqe port: byte n in bits 8n+7:8n.
    assert s.to_int() & 0xFF == 0xA5 and (s.to_int() >> 16) & 0xFFFF == 0xBEEF
    assert Sqe.from_int(s.to_int()) == s


def test_sqe_round_trip_random():
    rng = random.Random(1)
    for _ in range(200):
        raw = bytearray(rng.randbytes(64))
        raw[1] &= 0xC3          # DW0 bits 13:10 are reserved (not kept)
        s = Sqe.unpack(bytes(raw))
        assert s.pack() == bytes(raw)


def test_cqe_layout():
    c = Cqe(dw0=0xDEADBEEF, dw1=0x12345678, sqhd=0x0102, sqid=0x0304, cid=0x0506, phase=1,
            status=SC.INVALID_QID)
    b = c.pack()
    assert len(b) == 16
    # NVMe 1.4 figures 121-125: DW0, DW1, DW2 SQHD 15:0 SQID 31:16, DW3 CID 15:0, P 16,
    # status field 31:17.
    assert u(b, 0, 4) == 0xDEADBEEF and u(b, 4, 4) == 0x12345678
    assert u(b, 8, 2) == 0x0102 and u(b, 10, 2) == 0x0304 and u(b, 12, 2) == 0x0506
    dw3 = u(b, 12, 4)
    assert (dw3 >> 16) & 1 == 1
    assert dw3 >> 17 == (1 << 14) | (1 << 8) | 0x01         # DNR, SCT 1, SC 01h
    back = Cqe.unpack(b)
    assert back == c and back.sct == 1 and back.sc == 1 and back.dnr and not back.ok
    assert Cqe(status=0).ok and not Cqe(status=SC.ABORT_REQUESTED).ok


def test_status_values():
    assert ns.status(0, 0x02, dnr=True) == 0x4002
    assert ns.status(1, 0x0C, dnr=True) == 0x410C
    assert ns.status(2, 0x81) == 0x0281
    assert ns.status(0, 0x07, more=True, crd=2) == 0x3007
    with pytest.raises(ValueError):
        ns.status(8, 0)
    expected = {
        "SUCCESS": 0x0000, "INVALID_OPCODE": 0x4001, "INVALID_FIELD": 0x4002,
        "DATA_TRANSFER_ERROR": 0x0004, "ABORT_REQUESTED": 0x0007,
        "ABORT_SQ_DELETION": 0x0008, "INVALID_NAMESPACE": 0x400B,
        "PRP_OFFSET_INVALID": 0x4013, "LBA_OUT_OF_RANGE": 0x4080, "CQ_INVALID": 0x4100,
        "INVALID_QID": 0x4101, "INVALID_QUEUE_SIZE": 0x4102, "ABORT_LIMIT_EXCEEDED": 0x4103,
        "AER_LIMIT_EXCEEDED": 0x4105, "INVALID_INTERRUPT_VECTOR": 0x4108,
        "INVALID_LOG_PAGE": 0x4109, "INVALID_QUEUE_DELETION": 0x410C,
        "FEATURE_NOT_SAVEABLE": 0x410D,
    }
    for name, value in expected.items():
        assert getattr(SC, name) == value, name


def test_status_name():
    assert ns.status_name(SC.INVALID_QUEUE_DELETION) == \
        "Invalid Queue Deletion (SCT 1h SC 0Ch, DNR)"
    assert ns.status_name(SC.ABORT_SQ_DELETION) == \
        "Command Aborted due to SQ Deletion (SCT 0h SC 08h)"
    assert ns.status_name(0) .startswith("Successful Completion")
    assert "LBA Out of Range" in ns.status_name(SC.LBA_OUT_OF_RANGE)
    assert "status 7Fh" in ns.status_name(ns.status(7, 0x7F))


def test_command_builders():
    s = ns.sqe_create_io_cq(qid=3, qsize=63, base=0x1234000, iv=5, ien=True, pc=True)
    assert s.opcode == 0x05 and s.prp1 == 0x1234000
    assert s.cdw10 == 3 | 63 << 16 and s.cdw11 == 0b11 | 5 << 16
    s = ns.sqe_create_io_sq(qid=3, qsize=15, base=0x5000, cqid=2, qprio=2, pc=True)
    assert s.opcode == 0x01 and s.cdw10 == 3 | 15 << 16 and s.cdw11 == 1 | 2 << 1 | 2 << 16
    s = ns.sqe_read(slba=0x1_0000_0002, nlb=8, prp1=0x1000, fua=True)
    assert s.opcode == 0x02 and s.cdw10 == 2 and s.cdw11 == 1 and s.cdw12 == 7 | 1 << 30
    assert s.slba == 0x1_0000_0002 and s.nlb == 7
    s = ns.sqe_get_log_page(0x02, 512 * 1024, nsid=0xFFFFFFFF)
    numd = 512 * 1024 // 4 - 1
    assert s.cdw10 == 0x02 | (numd & 0xFFFF) << 16 and s.cdw11 == numd >> 16
    s = ns.sqe_abort(sqid=4, cid=0x77)
    assert s.opcode == 0x08 and s.cdw10 == 4 | 0x77 << 16
    s = ns.sqe_write_zeroes(100, 16, deac=True)
    assert s.opcode == 0x08 and s.cdw12 == 15 | 1 << 25
    s = ns.sqe_dataset_management(3, ns.DSM_AD)
    assert s.opcode == 0x09 and s.cdw10 == 2 and s.cdw11 == 4
    s = ns.sqe_set_features(ns.FeatureId.NUMBER_OF_QUEUES, 3 | 3 << 16, save=True)
    assert s.cdw10 == 0x07 | 1 << 31
    with pytest.raises(ValueError):
        ns.sqe_read(0, 0)


# Identify ----------------------------------------------------------------------------------------

def test_identify_controller_offsets():
    d = ns.build_identify_controller(
        vid=0x1D1D, ssvid=0x2E2E, sn="SN123", mn="model", fr="1.2", rab=6, ieee=0xABCDEF,
        mdts=5, cntlid=0x0102, oacs=0x0304, acl=3, aerl=7, frmw=0x03, lpa=0x04, elpe=63,
        npss=0, nn=1, vwc=1)
    assert len(d) == 4096
    # NVMe 1.4 figure 247.
    assert u(d, 0, 2) == 0x1D1D and u(d, 2, 2) == 0x2E2E
    assert d[4:24] == b"SN123" + b" " * 15
    assert d[24:64] == b"model" + b" " * 35
    assert d[64:72] == b"1.2     "
    assert d[72] == 6 and u(d, 73, 3) == 0xABCDEF and d[77] == 5 and u(d, 78, 2) == 0x0102
    assert d[80:84] == bytes([0x00, 0x04, 0x01, 0x00])     # VER 1.4.0
    assert u(d, 256, 2) == 0x0304 and d[258] == 3 and d[259] == 7 and d[260] == 0x03
    assert d[261] == 0x04 and d[262] == 63 and d[263] == 0
    assert d[512] == 0x66 and d[513] == 0x44                # SQES, CQES
    assert u(d, 516, 4) == 1                                # NN
    oncs = u(d, 520, 2)
    assert oncs & (1 << 2) and oncs & (1 << 3)              # DSM, Write Zeroes
    assert d[525] == 1                                      # VWC
    p = ns.parse_identify_controller(d)
    assert p.sn == "SN123" and p.mn == "model" and p.fr == "1.2" and p.mdts == 5
    assert p.ver == 0x00010400 and p.sqes == 0x66 and p.cqes == 0x44 and p.aerl == 7
    with pytest.raises(KeyError):
        ns.build_identify_controller(nonsense=1)


def test_identify_namespace_offsets():
    d = ns.build_identify_namespace(nsze=0x123456789, lbads=12, nuse=5)
    # NVMe 1.4 figure 245.
    assert u(d, 0, 8) == 0x123456789 and u(d, 8, 8) == 0x123456789 and u(d, 16, 8) == 5
    assert d[25] == 0 and d[26] == 0                        # NLBAF, FLBAS
    assert u(d, 128, 2) == 0 and d[130] == 12               # LBAF0: MS, LBADS
    p = ns.parse_identify_namespace(d)
    assert p.nsze == 0x123456789 and p.lba_size == 4096


def test_active_ns_list():
    d = ns.build_active_ns_list([1, 5, 3], start=1)
    assert len(d) == 4096 and u(d, 0, 4) == 3 and u(d, 4, 4) == 5 and u(d, 8, 4) == 0
    assert ns.parse_active_ns_list(ns.build_active_ns_list([1])) == [1]


# Log pages ---------------------------------------------------------------------------------------

def test_smart_log_offsets():
    d = ns.build_smart_log(critical_warning=0x02, composite_temperature=330,
                           available_spare=90, data_units_read=2**70, data_units_written=7,
                           host_read_commands=8, host_write_commands=9, power_cycles=10,
                           num_err_log_entries=11)
    assert len(d) == 512
    # NVMe 1.4 figure 194.
    assert d[0] == 0x02 and u(d, 1, 2) == 330 and d[3] == 90
    assert u(d, 32, 16) == 2**70 and u(d, 48, 16) == 7 and u(d, 64, 16) == 8
    assert u(d, 80, 16) == 9 and u(d, 112, 16) == 10 and u(d, 176, 16) == 11
    assert ns.parse_smart_log(d).data_units_read == 2**70


def test_error_log_offsets():
    e = ns.ErrorLogEntry(error_count=0x1122, sqid=3, cid=0x44, status=SC.INVALID_FIELD,
                         param_error_location=0x0128, lba=0x99, nsid=1)
    d = ns.build_error_log([e], n_entries=4)
    assert len(d) == 256
    # NVMe 1.4 figure 193.
    assert u(d, 0, 8) == 0x1122 and u(d, 8, 2) == 3 and u(d, 10, 2) == 0x44
    assert u(d, 12, 2) == SC.INVALID_FIELD << 1 and u(d, 14, 2) == 0x0128
    assert u(d, 16, 8) == 0x99 and u(d, 24, 4) == 1
    assert d[64:] == bytes(192)
    assert ns.parse_error_log(d) == [e]


def test_fw_slot_log_and_dsm():
    d = ns.build_fw_slot_log(["1.2"])
    assert d[0] == 1 and d[8:16] == b"1.2     " and ns.parse_fw_slot_log(d) == (1, ["1.2"] +
                                                                           [""] * 6)
    raw = ns.build_dsm_ranges([ns.DsmRange(slba=0x10, nlb=8, attributes=1)])
    # NVMe 1.4 figure 365: context attributes 3:0, length 7:4, SLBA 15:8.
    assert struct.unpack("<IIQ", raw) == (1, 8, 0x10)
    assert ns.parse_dsm_ranges(raw, 1) == [ns.DsmRange(0x10, 8, 1)]


# PRPs --------------------------------------------------------------------------------------------

class FakeMem:
    """Pages handed out from a shuffled pool (some above 4 GiB); a dict of written bytes."""
    def __init__(self, seed=0):
        self.rng = rng = random.Random(seed)
        self.low = [0x10_0000 + PAGE * i for i in range(4096)]
        self.high = [0x3_0000_0000 + PAGE * i for i in range(4096)]
        rng.shuffle(self.low)
        rng.shuffle(self.high)
        self.bytes = {}
        self.freed = []

    def alloc_page(self, high=None):
        if high is None:
            high = self.rng.random() < 0.5
        return (self.high if high else self.low).pop()

    def write(self, addr, data):
        for i, b in enumerate(data):
            self.bytes[addr + i] = b

    def read_qword(self, addr):
        assert addr % 8 == 0, f"unaligned list read at 0x{addr:x}"
        return int.from_bytes(bytes(self.bytes[addr + i] for i in range(8)), "little")

    def free(self, addr):
        self.freed.append(addr)


def check_prps(mem, buf, length, offset):
    spans, reads = nh.walk_prps(mem.read_qword, buf.prp1, buf.prp2, length)
    assert spans == buf.spans, "the PRPs describe other pages than the buffer's"
    assert sum(n for _, n in spans) == length
    assert spans[0][0] % PAGE == offset
    for a, n in spans[1:]:
        assert a % PAGE == 0 and n <= PAGE
    for a, n in spans:
        assert a // PAGE == (a + n - 1) // PAGE, "a span crosses a page"
    return spans, reads


@pytest.mark.parametrize("length,offset,list_offset,n_lists", [
    (512, 0, 0, 0), (4096, 0, 0, 0), (12, 4096 - 12, 0, 0), (4096, 4, 0, 0),
    (8192, 0, 0, 0), (5000, 0x7FC, 0, 0), (12288, 0, 0, 1), (12288, 4, 0x100, 1),
    (513 * PAGE, 0, 0, 1),              # 512 entries: one full list page, no chain
    (514 * PAGE, 0, 0, 2),              # 513 entries: 511 + chain, 2 in the next page
    (6 * PAGE, 0, PAGE - 3 * 8, 2),     # chains after 2 entries
    (5 * PAGE, 0x10, PAGE - 8, 2),      # the list pointer's entry is only the chain pointer
    (2000 * PAGE, 0x200, 0x808, 5),
])
def test_prp_build(length, offset, list_offset, n_lists):
    mem = FakeMem()
    buf = nh.build_prps(mem, length, offset=offset, list_offset=list_offset)
    spans, reads = check_prps(mem, buf, length, offset)
    assert len(buf.lists) == n_lists
    if n_lists:
        assert buf.prp2 == buf.lists[0] + list_offset
        assert {a & ~(PAGE - 1) for a in reads} == set(buf.lists)
    else:
        assert buf.prp2 == (spans[1][0] if len(spans) == 2 else 0)
    assert buf.length == length


def test_prp_high_and_forced_pages():
    mem = FakeMem(3)
    buf = nh.build_prps(mem, 40000, offset=0x40, high=True)
    assert all(a >= 2**32 for a, _ in buf.spans) and all(p >= 2**32 for p in buf.lists)
    check_prps(mem, buf, 40000, 0x40)
    pages = [0x20_0000, 0x40_0000, 0x30_0000]
    buf = nh.build_prps(mem, 3 * PAGE - 8, offset=8, pages=pages)
    assert [a & ~(PAGE - 1) for a, _ in buf.spans] == pages
    check_prps(mem, buf, 3 * PAGE - 8, 8)
    buf.free(mem)
    assert set(mem.freed) >= set(pages) | set(buf.lists)


def test_prp_bad_arguments():
    mem = FakeMem()
    for kw in ({"offset": 2}, {"offset": PAGE}, {"list_offset": 4}):
        with pytest.raises(ValueError):
            nh.build_prps(mem, 4096, **kw)
    with pytest.raises(ValueError):
        nh.build_prps(mem, 0)


def test_prp_walker_rejects():
    mem = FakeMem()
    buf = nh.build_prps(mem, 6 * PAGE, list_offset=PAGE - 2 * 8)
    with pytest.raises(ValueError, match="dword"):
        nh.walk_prps(mem.read_qword, buf.prp1 + 2, buf.prp2, 6 * PAGE)
    with pytest.raises(ValueError, match="qword"):
        nh.walk_prps(mem.read_qword, buf.prp1, buf.prp2 + 4, 6 * PAGE)
    chain = buf.prp2 + 8
    mem.write(chain, (mem.read_qword(chain) + 0x100).to_bytes(8, "little"))
    with pytest.raises(ValueError, match="chain"):
        nh.walk_prps(mem.read_qword, buf.prp1, buf.prp2, 6 * PAGE)
    with pytest.raises(ValueError, match="PRP2"):
        nh.walk_prps(mem.read_qword, 0x1000, 0x2200, 8192)


# HostMemory --------------------------------------------------------------------------------------

class FakeRegion:
    def __init__(self, base, size):
        self.base, self.size, self.mem = base, size, bytearray(size)

    def get_absolute_address(self, offset):
        return self.base + offset


class FakePool:
    def alloc_region(self, size):
        return FakeRegion(0x8_0100, size)           # deliberately not page aligned


class FakeSpace:
    def __init__(self):
        self.regions = []

    def register_region(self, region, base):
        self.regions.append((region, base))


class FakeRc:
    def __init__(self):
        self.mem_pool = FakePool()
        self.mem_address_space = FakeSpace()


def test_host_memory():
    rc = FakeRc()
    m = nh.HostMemory(rc, low_pages=64, high_pages=8, high_base=0x21_0000_0000,
                      rng=random.Random(2))
    assert rc.mem_address_space.regions[0][1] == 0x21_0000_0000
    q = m.alloc(4)
    assert q % PAGE == 0 and q >= 0x8_0100
    m.write(q + 4 * PAGE - 3, b"abc")
    assert m.read(q + 4 * PAGE - 3, 3) == b"abc"
    h = m.alloc_page(high=True)
    assert h >= 0x21_0000_0000
    m.write(h + 10, b"xyz")
    assert m.read(h + 10, 3) == b"xyz"
    pages = {m.alloc_page(high=False) for _ in range(10)}
    assert len(pages) == 10 and not any(q <= p < q + 4 * PAGE for p in pages)
    with pytest.raises(ValueError):
        m.read(0x21_0000_0000 + 8 * PAGE, 4)
    m.free(q, 4)
    assert m.alloc(4) == q
    with pytest.raises(MemoryError):
        m.alloc(1000)


# NvmeHost queue mechanics against a fake controller ----------------------------------------------

def run(coro):
    """Run a coroutine that must not block on a simulator trigger."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("coroutine waited on a trigger")


class FakeBar:
    def __init__(self):
        self.writes = []

    async def write_dword(self, offset, value):
        self.writes.append((offset, value))


class FakePdev:
    def __init__(self):
        self.bar_window = [FakeBar()]


class FakeTb:
    def __init__(self):
        self.rc = FakeRc()
        self.pdev = FakePdev()


@pytest.fixture
def host(monkeypatch):
    monkeypatch.setattr(nh, "get_sim_time", lambda unit="ns": 0)
    tb = FakeTb()
    mem = nh.HostMemory(tb.rc, low_pages=64, rng=random.Random(0))
    h = nh.NvmeHost(tb, mem=mem, seed=0)
    h.dstrd = 1
    h._new_sq(0, 4, 0)
    h._new_cq(0, 4, 0, True)
    return h


def post(h, cq, sqid, cid, sqhd, phase, status=0, dw0=0):
    """The fake controller writes CQE at its own tail (tracked in cq.fake_tail)."""
    tail = getattr(cq, "fake_tail", 0)
    raw = Cqe(dw0=dw0, sqhd=sqhd, sqid=sqid, cid=cid, phase=phase, status=status).pack()
    h.mem.write(cq.base + 16 * tail, raw)
    cq.fake_tail = (tail + 1) % cq.entries


def test_host_submit_and_complete(host):
    h, bar = host, host.bar
    sq, cq = h.sqs[0], h.cqs[0]
    cmds = [run(h.submit(0, ns.sqe_keep_alive())) for _ in range(3)]
    assert [c.cid for c in cmds] == [0, 1, 2]
    assert sq.room() == 0, "a 4-entry SQ takes 3 commands"
    # SQEs at slots 0..2, tail doorbell of SQ0 at 0x1000 with stride 8 (DSTRD 1).
    for i in range(3):
        assert Sqe.unpack(h.mem.read(sq.base + 64 * i, 64)).cid == i
    assert bar.writes == [(0x1000, 1), (0x1000, 2), (0x1000, 3)]
    assert rm.doorbell_offset(0, 1, 1) == 0x1008

    post(h, cq, 0, 1, sqhd=2, phase=1, status=SC.INVALID_FIELD)
    post(h, cq, 0, 0, sqhd=1, phase=1, dw0=0x55)     # stale SQHD: ignored
    assert run(h.drain_cq(cq)) == 2
    assert bar.writes[-1] == (0x1008, 2)              # one CQ head doorbell for both
    assert cmds[1].done and cmds[1].cqe.status == SC.INVALID_FIELD
    assert run(cmds[0].wait()).dw0 == 0x55
    assert not cmds[2].done
    assert sq.head == 2 and sq.room() == 2
    assert run(h.drain_cq(cq)) == 0                   # nothing new: no doorbell
    assert bar.writes[-1] == (0x1008, 2)

    # Wrap: slots 3, 0 then the CQ wraps and the phase flips.
    more = [run(h.submit(0, ns.sqe_keep_alive())) for _ in range(2)]
    assert bar.writes[-1] == (0x1000, 1)
    post(h, cq, 0, cmds[2].cid, sqhd=3, phase=1)
    post(h, cq, 0, more[0].cid, sqhd=0, phase=1)      # CQ slot 3; the next is slot 0
    post(h, cq, 0, more[1].cid, sqhd=1, phase=0)      # new phase
    assert run(h.drain_cq(cq)) == 3
    assert cq.head == 1 and cq.phase == 0 and sq.head == 1
    assert all(c.done and c.cqe.ok for c in cmds[2:] + more)
    assert not h.unexpected and not h.outstanding()


def test_host_unexpected_and_raw(host):
    h = host
    cq = h.cqs[0]
    raw = bytearray(ns.sqe_identify(0x55).pack())
    raw[2:4] = (0x1234).to_bytes(2, "little")
    cmd = run(h.submit_raw(0, bytes(raw)))
    assert cmd.cid == 0x1234
    assert h.mem.read(h.sqs[0].base, 64) == bytes(raw)
    with pytest.raises(ValueError):
        run(h.submit_raw(0, bytes(raw)))               # CID still outstanding
    post(h, cq, 0, 0x999, sqhd=1, phase=1)             # matches nothing
    post(h, cq, 0, 0x1234, sqhd=1, phase=1, status=SC.INVALID_FIELD)
    assert run(h.drain_cq(cq)) == 2
    assert len(h.unexpected) == 1 and h.unexpected[0][1].cid == 0x999
    with pytest.raises(nh.NvmeError):
        raise nh.NvmeError(run(cmd.wait()), cmd.sqe, "Identify")


def test_queue_memory_lists(host):
    h = host
    q = nh.QueueMemory(h.mem, 129, 64, pc=False)         # 3 scattered pages + a list
    assert len(q.pages) == 3 and q.base == q.list_page and q.list_page not in q.pages
    lst = h.mem.read(q.base, 24)
    assert [int.from_bytes(lst[8 * i:8 * i + 8], "little") for i in range(3)] == q.pages
    assert q.slot(0) == q.pages[0] and q.slot(63) == q.pages[0] + 63 * 64
    assert q.slot(64) == q.pages[1] and q.slot(128) == q.pages[2]
    c = nh.QueueMemory(h.mem, 16, 16, pc=True)
    assert c.pages == [c.base] and c.slot(15) == c.base + 240 and c.list_page is None
    # An SQ on it: the SQE of slot 64 lands at the start of the second page.
    h.sqs[0] = sq = nh.SubmissionQueue(0, q, 129, 0)
    sq.tail = sq.head = 64
    cmd = run(h.submit(0, ns.sqe_keep_alive()))
    assert Sqe.unpack(h.mem.read(q.pages[1], 64)).cid == cmd.cid
    freed = set(q.pages) | {q.list_page}
    q.free(h.mem)
    assert freed <= h.mem.free_pages[False]


def test_sq_head_tracking():
    sq = nh.SubmissionQueue(1, nh.QueueMemory(FakeMem(), 8, 64, base=0), 8, 1)
    sq.tail = 6
    sq.take_sqhd(4)
    assert sq.head == 4
    sq.take_sqhd(2)                 # older than the head: stale
    assert sq.head == 4
    sq.take_sqhd(7)                 # beyond the tail: impossible, ignored
    assert sq.head == 4
    sq.tail = 2                     # wrapped
    sq.take_sqhd(0)
    assert sq.head == 0 and sq.used() == 2 and sq.room() == 5
