# SPDX-License-Identifier: BSD-2-Clause
"""Unit tests of the firmware model's command logic (sim/nvme/nvme_fw_model.py) and the RAM
back end's request checks and storage (sim/nvme/nvme_ram_backend.py), without a simulator:
the model's streams are replaced by recorders and its data transfers by a fake that keeps
what was sent, so every admin / I/O command check runs as plain Python. Expected statuses
are NVMe 1.4's, written out here."""

import logging

import pytest

from sim.nvme.nvme_fw_model import NvmeFirmwareModel
from sim.nvme.nvme_ram_backend import NvmeRamBackend
from spec import nvme as ns
from spec.nvme import SC, FeatureId, Sqe

pytestmark = pytest.mark.smoke
N_IO = 4
PAGE = 4096


def run(coro):
    """Run a coroutine that must not block on a simulator trigger."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    raise AssertionError("coroutine waited on a trigger")


class Sig:
    def __init__(self):
        self.value = 0


class FakeDut:
    def __init__(self):
        self._log = logging.getLogger("fake_dut")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        sig = Sig()
        setattr(self, name, sig)
        return sig


class Recorder:
    """Stands for a FieldSource; `hook(beat)` runs during the handshake."""
    def __init__(self):
        self.beats = []
        self.hook = None

    async def send(self, **beat):
        self.beats.append(beat)
        if self.hook:
            self.hook(beat)


class FakeBackend:
    def __init__(self):
        self.calls = []
        self.reads = self.writes = 0
        self.blocks_read = self.blocks_written = 0

    def deallocate(self, slba, nlb):
        self.calls.append(("deallocate", slba, nlb))

    def write_zeroes(self, slba, nlb):
        self.calls.append(("write_zeroes", slba, nlb))


def make_fw(queue_lists=False):
    f = NvmeFirmwareModel(FakeDut(), FakeBackend(), n_io_queues=N_IO, max_transfer=131072,
                          ns_size=1000, seed=0, acl=1, aerl=1, queue_lists=queue_lists)
    for name in ("cpl", "sq_cfg", "cq_cfg", "ivc", "sq_page", "cq_page"):
        setattr(f, name, Recorder())
    f.xfers = []
    f.host_data = b""

    async def xfer(prp1, prp2, length, to_host, data=None, buf=0):
        f.xfers.append(dict(prp1=prp1, prp2=prp2, length=length, to_host=to_host, data=data))
        return 0, (None if to_host else f.host_data[:length])
    f.xfer = xfer
    return f


@pytest.fixture
def fw():
    return make_fw()


def admin(f, sqe, cid=1):
    sqe.cid = cid
    return run(f.serve(0, 1, sqe))


def io(f, sqe, sqid=1):
    return run(f.serve(sqid, 1, sqe))


def create_pair(f, qid, cqid=None, iv=0):
    cqid = qid if cqid is None else cqid
    if cqid not in f.cqs:
        assert admin(f, ns.sqe_create_io_cq(cqid, 63, 0x10000 * cqid, iv=iv)) == (0, 0)
    assert admin(f, ns.sqe_create_io_sq(qid, 63, 0x20000 * qid, cqid)) == (0, 0)


# Identify ----------------------------------------------------------------------------------------

def test_identify(fw):
    assert admin(fw, ns.sqe_identify(ns.Cns.CONTROLLER, prp1=0x5000)) == (0, 0)
    x = fw.xfers[-1]
    assert x["to_host"] and x["length"] == 4096 and x["prp1"] == 0x5000
    c = ns.parse_identify_controller(x["data"])
    assert c.mdts == 5 and c.nn == 1 and c.acl == 1 and c.aerl == 1 and c.sqes == 0x66
    assert c.ver == 0x00010400 and c.oncs & ns.ONCS_DSM and c.oncs & ns.ONCS_WRITE_ZEROES
    assert admin(fw, ns.sqe_identify(ns.Cns.NAMESPACE, nsid=1)) == (0, 0)
    n = ns.parse_identify_namespace(fw.xfers[-1]["data"])
    assert n.nsze == 1000 and n.ncap == 1000 and n.lba_size == 512 and n.nlbaf == 0
    assert admin(fw, ns.sqe_identify(ns.Cns.ACTIVE_NS_LIST, nsid=0)) == (0, 0)
    assert ns.parse_active_ns_list(fw.xfers[-1]["data"]) == [1]
    assert admin(fw, ns.sqe_identify(ns.Cns.ACTIVE_NS_LIST, nsid=1)) == (0, 0)
    assert ns.parse_active_ns_list(fw.xfers[-1]["data"]) == []
    # CNS 03h (mandatory since NVMe 1.3): the namespace's EUI-64 descriptor (NIDT 1, 8 bytes)
    assert admin(fw, ns.sqe_identify(0x03, nsid=1)) == (0, 0)
    d = fw.xfers[-1]["data"]
    assert d[0] == 1 and d[1] == 8 and any(d[4:12]), bytes(d[:16]).hex()
    n_xfers = len(fw.xfers)
    assert admin(fw, ns.sqe_identify(ns.Cns.NAMESPACE, nsid=2))[0] == SC.INVALID_NAMESPACE
    assert admin(fw, ns.sqe_identify(ns.Cns.NAMESPACE, nsid=0))[0] == SC.INVALID_NAMESPACE
    assert admin(fw, ns.sqe_identify(0x03, nsid=2))[0] == SC.INVALID_NAMESPACE
    assert admin(fw, ns.sqe_identify(ns.Cns.ACTIVE_NS_LIST, nsid=0xFFFFFFFF))[0] == \
        SC.INVALID_NAMESPACE
    assert len(fw.xfers) == n_xfers, "a failed Identify moved data"


def test_invalid_opcodes(fw):
    for op in (0x03, 0x07, 0x10, 0x11, 0x80, 0x84, 0xC0):
        assert admin(fw, Sqe(opcode=op))[0] == SC.INVALID_OPCODE, f"admin {op:02x}"
    create_pair(fw, 1)
    for op in (0x04, 0x05, 0x0C, 0x0D, 0x81):
        assert io(fw, Sqe(opcode=op, nsid=1))[0] == SC.INVALID_OPCODE, f"I/O {op:02x}"
    assert admin(fw, ns.sqe_keep_alive()) == (0, 0)


# Queues ------------------------------------------------------------------------------------------

def test_number_of_queues(fw):
    nq = FeatureId.NUMBER_OF_QUEUES
    assert admin(fw, ns.sqe_get_features(nq)) == (0, 3 | 3 << 16)
    assert admin(fw, ns.sqe_set_features(nq, 15 | 15 << 16)) == (0, 3 | 3 << 16)
    assert admin(fw, ns.sqe_set_features(nq, 1 | 0 << 16)) == (0, 1 | 0 << 16)
    assert admin(fw, ns.sqe_get_features(nq)) == (0, 1)
    assert admin(fw, ns.sqe_set_features(nq, 0xFFFF))[0] == SC.INVALID_FIELD
    assert admin(fw, ns.sqe_set_features(nq, 3 | 3 << 16)) == (0, 3 | 3 << 16)
    create_pair(fw, 1)
    assert admin(fw, ns.sqe_set_features(nq, 0))[0] == SC.COMMAND_SEQUENCE_ERROR


def test_create_io_cq_checks(fw):
    ok = dict(qid=1, qsize=63, base=0x10000, iv=1)
    cases = [
        (dict(qid=0), SC.INVALID_QID), (dict(qid=N_IO + 1), SC.INVALID_QID),
        (dict(qsize=0), SC.INVALID_QUEUE_SIZE), (dict(qsize=4096), SC.INVALID_QUEUE_SIZE),
        (dict(pc=False), SC.INVALID_FIELD), (dict(iv=N_IO + 1), SC.INVALID_INTERRUPT_VECTOR),
        (dict(base=0x10040), SC.PRP_OFFSET_INVALID),
    ]
    for bad, status in cases:
        got = admin(fw, ns.sqe_create_io_cq(**{**ok, **bad}))
        assert got[0] == status, f"{bad}: {ns.status_name(got[0])}"
    assert not fw.cq_cfg.beats, "a rejected create reached the hardware"
    assert admin(fw, ns.sqe_create_io_cq(**ok, ien=False)) == (0, 0)
    assert fw.cq_cfg.beats == [dict(cqid=1, base=0x10000, qsize=63, iv=1, ien=0, enable=1)]
    assert admin(fw, ns.sqe_create_io_cq(**ok))[0] == SC.INVALID_QID        # exists
    assert admin(fw, ns.sqe_create_io_cq(qid=N_IO, qsize=4095, base=0, iv=N_IO)) == (0, 0)


def test_create_io_sq_checks(fw):
    assert admin(fw, ns.sqe_create_io_cq(2, 63, 0x10000)) == (0, 0)
    ok = dict(qid=1, qsize=15, base=0x20000, cqid=2)
    cases = [
        (dict(qid=0), SC.INVALID_QID), (dict(qid=N_IO + 1), SC.INVALID_QID),
        (dict(qsize=0), SC.INVALID_QUEUE_SIZE), (dict(qsize=5000), SC.INVALID_QUEUE_SIZE),
        (dict(cqid=3), SC.CQ_INVALID), (dict(cqid=0), SC.CQ_INVALID),
        (dict(pc=False), SC.INVALID_FIELD), (dict(base=0x20008), SC.PRP_OFFSET_INVALID),
    ]
    for bad, status in cases:
        got = admin(fw, ns.sqe_create_io_sq(**{**ok, **bad}))
        assert got[0] == status, f"{bad}: {ns.status_name(got[0])}"
    assert not fw.sq_cfg.beats
    assert admin(fw, ns.sqe_create_io_sq(**ok)) == (0, 0)
    assert fw.sq_cfg.beats == [dict(sqid=1, base=0x20000, qsize=15, enable=1, cqid=2)]
    assert admin(fw, ns.sqe_create_io_sq(**ok))[0] == SC.INVALID_QID
    # Number of Queues allocated 1 SQ: queue 2 is beyond it.
    fw2_nq = FeatureId.NUMBER_OF_QUEUES
    fw.features[fw2_nq] = 0 | 3 << 16
    assert admin(fw, ns.sqe_create_io_sq(2, 15, 0x30000, 2))[0] == SC.INVALID_QID


def test_queue_lists():
    """With the page list ports (CAP.CQR=0), PC=0 queues: the PRP list is read, its pages go
    to the hardware's page list, the queue is created with nc=1."""
    f = make_fw(queue_lists=True)
    pages = [0x7000, 0x3000, 0x9000]
    f.host_data = b"".join(p.to_bytes(8, "little") for p in pages)
    # 512 CQEs: 2 pages.
    assert admin(f, ns.sqe_create_io_cq(1, 511, 0x5000, pc=False)) == (0, 0)
    assert f.xfers[-1] == dict(prp1=0x5000, prp2=0, length=16, to_host=False, data=None)
    assert f.cq_page.beats == [dict(cqid=1, index=0, page=7), dict(cqid=1, index=1, page=3)]
    assert f.cq_cfg.beats[-1] == dict(cqid=1, base=0, qsize=511, iv=0, ien=1, enable=1, nc=1)
    # 129 SQEs: 3 pages.
    assert admin(f, ns.sqe_create_io_sq(1, 128, 0x6000, 1, pc=False)) == (0, 0)
    assert f.xfers[-1]["length"] == 24
    assert [b["page"] for b in f.sq_page.beats] == [7, 3, 9]
    assert f.sq_cfg.beats[-1] == dict(sqid=1, base=0, qsize=128, enable=1, cqid=1, nc=1)
    # Contiguous queues still work: nc=0.
    assert admin(f, ns.sqe_create_io_cq(2, 15, 0x8000)) == (0, 0)
    assert f.cq_cfg.beats[-1]["nc"] == 0 and f.cq_cfg.beats[-1]["base"] == 0x8000
    # A list entry with an offset, a list pointer with an offset.
    f.host_data = (0x7000).to_bytes(8, "little") + (0x3100).to_bytes(8, "little")
    n = len(f.cq_cfg.beats)
    assert admin(f, ns.sqe_create_io_cq(3, 511, 0x5000, pc=False))[0] == SC.PRP_OFFSET_INVALID
    assert admin(f, ns.sqe_create_io_cq(3, 15, 0x5008, pc=False))[0] == SC.PRP_OFFSET_INVALID
    assert len(f.cq_cfg.beats) == n and 3 not in f.cqs


def test_delete_queues(fw):
    create_pair(fw, 1)
    create_pair(fw, 2, cqid=1)
    assert admin(fw, ns.sqe_delete_io_cq(1))[0] == SC.INVALID_QUEUE_DELETION
    assert admin(fw, ns.sqe_delete_io_sq(0))[0] == SC.INVALID_QID
    assert admin(fw, ns.sqe_delete_io_sq(3))[0] == SC.INVALID_QID
    assert admin(fw, ns.sqe_delete_io_cq(0))[0] == SC.INVALID_QID
    # A DSM of SQ 2 held by the firmware, and a Write Zeroes fetched during the delete
    # handshake, are aborted by the deletion, before its completion.
    fw.cmds.append((2, 5, Sqe(opcode=0x09, cid=77, nsid=1)))
    fw.sq_cfg.hook = lambda beat: fw.cmds.append((2, 6, Sqe(opcode=0x08, cid=78, nsid=1)))
    assert admin(fw, ns.sqe_delete_io_sq(2)) == (0, 0)
    fw.sq_cfg.hook = None
    assert fw.sq_cfg.beats[-1] == dict(sqid=2, base=0, qsize=0, enable=0, cqid=1)
    assert fw.cpl.beats[-2:] == [
        dict(cqid=1, sqid=2, sq_head=5, cid=77, status=SC.ABORT_SQ_DELETION, dw0=0),
        dict(cqid=1, sqid=2, sq_head=6, cid=78, status=SC.ABORT_SQ_DELETION, dw0=0)]
    assert not fw.cmds
    assert admin(fw, ns.sqe_delete_io_cq(1))[0] == SC.INVALID_QUEUE_DELETION   # SQ 1 left
    assert admin(fw, ns.sqe_delete_io_sq(1)) == (0, 0)
    assert admin(fw, ns.sqe_delete_io_cq(1)) == (0, 0)
    assert fw.cq_cfg.beats[-1]["enable"] == 0 and fw.cq_cfg.beats[-1]["cqid"] == 1
    assert admin(fw, ns.sqe_delete_io_cq(1))[0] == SC.INVALID_QID
    create_pair(fw, 1)                                      # the ids are free again


# Features ----------------------------------------------------------------------------------------

def test_features(fw):
    dut = fw.dut
    assert admin(fw, ns.sqe_set_features(FeatureId.INTERRUPT_COALESCING, 0x0A05)) == (0, 0)
    assert dut.fw_agg_thr.value == 0x05 and dut.fw_agg_time.value == 0x0A
    assert admin(fw, ns.sqe_get_features(FeatureId.INTERRUPT_COALESCING)) == (0, 0x0A05)
    assert admin(fw, ns.sqe_get_features(FeatureId.INTERRUPT_COALESCING, sel=1)) == (0, 0)
    assert admin(fw, ns.sqe_set_features(FeatureId.INTERRUPT_VECTOR_CONFIG, 2 | 1 << 16)) \
        == (0, 0)
    assert fw.ivc.beats == [dict(vector=2, cd=1)]
    assert admin(fw, ns.sqe_get_features(FeatureId.INTERRUPT_VECTOR_CONFIG, cdw11=2)) == \
        (0, 2 | 1 << 16)
    assert admin(fw, ns.sqe_set_features(FeatureId.INTERRUPT_VECTOR_CONFIG, N_IO + 1))[0] \
        == SC.INVALID_FIELD
    assert admin(fw, ns.sqe_set_features(FeatureId.ARBITRATION, 0x030201)) == (0, 0)
    assert admin(fw, ns.sqe_get_features(FeatureId.ARBITRATION)) == (0, 0x030201)
    assert admin(fw, ns.sqe_set_features(FeatureId.POWER_MANAGEMENT, 1))[0] == SC.INVALID_FIELD
    assert admin(fw, ns.sqe_set_features(FeatureId.TEMPERATURE_THRESHOLD, 350)) == (0, 0)
    assert admin(fw, ns.sqe_get_features(FeatureId.TEMPERATURE_THRESHOLD)) == (0, 350)
    assert admin(fw, ns.sqe_get_features(FeatureId.TEMPERATURE_THRESHOLD, cdw11=1 << 20)) \
        == (0, 1 << 20)
    assert admin(fw, ns.sqe_set_features(FeatureId.ASYNC_EVENT_CONFIG, 0x1FF)) == (0, 0)
    assert admin(fw, ns.sqe_get_features(FeatureId.ASYNC_EVENT_CONFIG)) == (0, 0x1FF)
    assert admin(fw, ns.sqe_get_features(FeatureId.ARBITRATION, sel=3)) == (0, 0b100)
    assert admin(fw, ns.sqe_get_features(FeatureId.ARBITRATION, sel=4))[0] == SC.INVALID_FIELD
    assert admin(fw, ns.sqe_set_features(FeatureId.ARBITRATION, 0, save=True))[0] == \
        SC.FEATURE_NOT_SAVEABLE
    for fid in (0x00, 0x03, 0x06, 0x0C, 0x0E, 0x80):
        assert admin(fw, ns.sqe_get_features(fid))[0] == SC.INVALID_FIELD, f"FID {fid:02x}"
        assert admin(fw, ns.sqe_set_features(fid, 0))[0] == SC.INVALID_FIELD, f"FID {fid:02x}"


# Log pages ---------------------------------------------------------------------------------------

def test_get_log_page(fw):
    fw.backend.reads, fw.backend.blocks_read = 3, 2001
    assert admin(fw, ns.sqe_get_log_page(ns.LogPage.SMART_HEALTH, 512, prp1=0x7000)) == (0, 0)
    x = fw.xfers[-1]
    assert x["length"] == 512 and x["prp1"] == 0x7000 and x["to_host"]
    s = ns.parse_smart_log(x["data"])
    # Thousands of 512-byte units, rounded up: 2001 -> 3.
    assert s.host_read_commands == 3 and s.data_units_read == 3
    # An error is logged; the error log shows it, newest first.
    assert admin(fw, Sqe(opcode=0x80), cid=9)[0] == SC.INVALID_OPCODE
    run(fw.complete(0, 1, Sqe(opcode=0x80, cid=9), SC.INVALID_OPCODE))
    assert admin(fw, ns.sqe_get_log_page(ns.LogPage.ERROR_INFORMATION, 64 * 64)) == (0, 0)
    entries = ns.parse_error_log(fw.xfers[-1]["data"])
    assert entries[0].cid == 9 and entries[0].status == SC.INVALID_OPCODE
    # Offset and a length past the log's end (zero filled).
    assert admin(fw, ns.sqe_get_log_page(ns.LogPage.FIRMWARE_SLOT, 1024, offset=8)) == (0, 0)
    d = fw.xfers[-1]["data"]
    assert len(d) == 1024 and d[:8] == b"0.1     " and d[504:] == bytes(520)
    assert admin(fw, ns.sqe_get_log_page(0x05, 512))[0] == SC.INVALID_LOG_PAGE
    assert admin(fw, ns.sqe_get_log_page(0x02, 512, offset=512))[0] == SC.INVALID_FIELD
    assert admin(fw, ns.sqe_get_log_page(0x02, 512, offset=2))[0] == SC.INVALID_FIELD
    assert admin(fw, ns.sqe_get_log_page(0x02, 512, nsid=7))[0] == SC.INVALID_NAMESPACE
    assert admin(fw, ns.sqe_get_log_page(0x02, 256 * 1024))[0] == SC.INVALID_FIELD


# Asynchronous events -----------------------------------------------------------------------------

def test_aer(fw):
    aer = ns.sqe_async_event_request
    assert admin(fw, aer(), cid=1) is None                  # outstanding
    assert admin(fw, aer(), cid=2) is None
    assert admin(fw, aer(), cid=3)[0] == SC.AER_LIMIT_EXCEEDED     # AERL 1: two at most
    fw.events.append((ns.AerType.ERROR, ns.AerErrorInfo.INVALID_DOORBELL_VALUE, 1))
    fw.events.append((ns.AerType.ERROR, ns.AerErrorInfo.INVALID_DOORBELL_REGISTER, 1))
    run(fw._report_events(fw.generation))
    assert fw.cpl.beats == [dict(cqid=0, sqid=0, sq_head=1, cid=1, status=0,
                                 dw0=0 | 1 << 8 | 1 << 16)]
    assert len(fw.events) == 1, "the second error event waits for the log page read"
    assert admin(fw, ns.sqe_get_log_page(1, 64, rae=True)) == (0, 0)
    run(fw._report_events(fw.generation))
    assert len(fw.cpl.beats) == 1, "RAE keeps the event masked"
    assert admin(fw, ns.sqe_get_log_page(1, 64)) == (0, 0)
    run(fw._report_events(fw.generation))
    assert fw.cpl.beats[-1]["cid"] == 2 and fw.cpl.beats[-1]["dw0"] == 0 | 0 << 8 | 1 << 16
    fw.events.append((0, 0, 1))
    assert admin(fw, aer(), cid=4) is None
    assert fw.cpl.beats[-1]["cid"] == 2, "masked until the log is read again"


# I/O commands ------------------------------------------------------------------------------------

def test_dataset_management(fw):
    create_pair(fw, 1)
    fw.host_data = ns.build_dsm_ranges([ns.DsmRange(10, 8), ns.DsmRange(900, 100)])
    assert io(fw, ns.sqe_dataset_management(2, ns.DSM_AD, prp1=0x9000)) == (0, 0)
    x = fw.xfers[-1]
    assert not x["to_host"] and x["length"] == 32 and x["prp1"] == 0x9000
    assert fw.backend.calls == [("deallocate", 10, 8), ("deallocate", 900, 100)]
    assert io(fw, ns.sqe_dataset_management(2, ns.DSM_IDR)) == (0, 0)
    assert len(fw.backend.calls) == 2, "no AD: nothing deallocated"
    fw.host_data = ns.build_dsm_ranges([ns.DsmRange(10, 8), ns.DsmRange(901, 100)])
    assert io(fw, ns.sqe_dataset_management(2))[0] == SC.LBA_OUT_OF_RANGE
    assert len(fw.backend.calls) == 2, "a bad range list deallocates nothing"
    assert io(fw, ns.sqe_dataset_management(1, nsid=2))[0] == SC.INVALID_NAMESPACE


def test_write_zeroes(fw):
    create_pair(fw, 1)
    assert io(fw, ns.sqe_write_zeroes(990, 10)) == (0, 0)
    assert fw.backend.calls == [("write_zeroes", 990, 10)]
    assert io(fw, ns.sqe_write_zeroes(991, 10))[0] == SC.LBA_OUT_OF_RANGE
    assert io(fw, ns.sqe_write_zeroes(0, 1, nsid=0))[0] == SC.INVALID_NAMESPACE
    assert io(fw, ns.sqe_write_zeroes(0, 1, nsid=0xFFFFFFFF))[0] == SC.INVALID_NAMESPACE
    assert len(fw.backend.calls) == 1


def test_completion_routing(fw):
    create_pair(fw, 3, cqid=2)
    run(fw.complete(3, 7, Sqe(cid=0x42), 0, 0x1234))
    assert fw.cpl.beats[-1] == dict(cqid=2, sqid=3, sq_head=7, cid=0x42, status=0, dw0=0x1234)


# RAM back end ------------------------------------------------------------------------------------

def test_ram_backend_checks_and_storage():
    be = NvmeRamBackend(FakeDut(), ns_size=100, seed=0, start=False)
    req = dict(tag=1, opcode=ns.NvmOpcode.READ, nsid=1, slba=90, nlb=9, flags=0)
    assert be._check(req) == 0
    assert be._check({**req, "nlb": 10}) == SC.LBA_OUT_OF_RANGE
    assert be._check({**req, "nsid": 2}) == SC.INVALID_NAMESPACE
    assert be._check({**req, "opcode": 0x08}) == SC.INVALID_OPCODE
    assert be._check({**req, "opcode": ns.NvmOpcode.FLUSH, "nsid": 0xFFFFFFFF}) == 0
    be.inject(ns.NvmOpcode.READ, 95, SC.UNRECOVERED_READ_ERROR)
    assert be._check(req) == SC.UNRECOVERED_READ_ERROR
    assert be._check({**req, "opcode": ns.NvmOpcode.WRITE}) == 0
    be.inject(ns.NvmOpcode.READ, 95, None)
    assert be._check(req) == 0
    data = bytes(range(256)) * 6
    be.poke(10, data)
    assert be.peek(9, 5) == bytes(512) + data + bytes(512)
    be.deallocate(11, 1)
    assert be.peek(10, 3) == data[:512] + bytes(512) + data[1024:]
    be.write_zeroes(10, 3)
    assert be.peek(10, 3) == bytes(1536) and not be.blocks
    with pytest.raises(ValueError):
        NvmeRamBackend(FakeDut(), lbads=8, seed=0, start=False)
