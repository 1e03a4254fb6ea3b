# SPDX-License-Identifier: BSD-2-Clause
"""NVMe 1.4 constants and data structures, in plain Python (no cocotb).

- opcodes (admin, NVM command set), feature identifiers, log page identifiers, Identify CNS
  values, asynchronous event types and information;
- status codes as *status field* values (the 15 bits of CQE DW3 31:17: DNR bit 14, M 13,
  CRD 12:11, SCT 10:8, SC 7:0), built with `status(sct, sc, dnr)` and named by
  `status_name(value)`. Errors caused by a bad command (invalid opcode, field, namespace,
  queue identifier, ...) carry DNR=1, as controllers (and Linux's nvmet) do: retrying the same
  command cannot succeed. Aborts and transfer errors carry DNR=0;
- `Sqe` (64-byte submission queue entry) and `Cqe` (16-byte completion queue entry): pack and
  unpack, little endian (NVMe 1.4 figures 104-106 and 121-125);
- command builders (`sqe_identify`, `sqe_create_io_cq`, `sqe_read`, ...) returning `Sqe`;
- 4096-byte Identify Controller / Identify Namespace structures (figures 245, 247) and the
  Active Namespace ID list, with parsers; log pages: Error Information (01h, figure 193),
  SMART / Health Information (02h, figure 194), Firmware Slot Information (03h, figure 195);
- Dataset Management ranges (figure 365).

Offsets are the specification's byte offsets; the unit tests in tests/sw check them.

`c_header()` gives the same facts to the C code (firmware and host library) as one generated
header, so C and Python cannot disagree:

    python -m spec.nvme --c-header build/include/ssdlab/nvme_spec.h
"""

import argparse
import struct
from dataclasses import dataclass, fields
from pathlib import Path

__all__ = [
    "SQE_BYTES", "CQE_BYTES", "IDENTIFY_BYTES", "PAGE_SIZE", "NVME_VERSION", "NSID_ALL",
    "AdminOpcode", "NvmOpcode", "FeatureId", "LogPage", "Cns", "AerType", "AerErrorInfo",
    "SCT_GENERIC", "SCT_COMMAND_SPECIFIC", "SCT_MEDIA", "SCT_PATH", "SCT_VENDOR",
    "STATUS_DNR", "STATUS_MORE", "STATUS_SCT_SHIFT", "STATUS_CRD_SHIFT", "status",
    "status_sct", "status_sc", "status_dnr", "status_name", "SC",
    "Sqe", "Cqe", "sqe_identify", "sqe_get_features", "sqe_set_features", "sqe_get_log_page",
    "sqe_create_io_cq", "sqe_create_io_sq", "sqe_delete_io_cq", "sqe_delete_io_sq",
    "sqe_abort", "sqe_async_event_request", "sqe_keep_alive", "sqe_read", "sqe_write",
    "sqe_flush", "sqe_dataset_management", "sqe_write_zeroes", "log_page_numd",
    "IdentifyController", "IdentifyNamespace", "build_identify_controller",
    "parse_identify_controller", "build_identify_namespace", "parse_identify_namespace",
    "build_active_ns_list", "parse_active_ns_list", "ID_CTRL_FIELDS", "ID_NS_FIELDS",
    "ONCS_COMPARE", "ONCS_WRITE_UNCORRECTABLE", "ONCS_DSM", "ONCS_WRITE_ZEROES",
    "ONCS_SAVE_SELECT", "ONCS_RESERVATIONS", "ONCS_TIMESTAMP", "ONCS_VERIFY",
    "SmartLog", "build_smart_log", "parse_smart_log", "SMART_FIELDS",
    "ErrorLogEntry", "build_error_log", "parse_error_log", "ERROR_LOG_ENTRY_BYTES",
    "ERROR_LOG_FIELDS",
    "build_fw_slot_log", "parse_fw_slot_log", "DsmRange", "build_dsm_ranges",
    "parse_dsm_ranges", "DSM_AD", "DSM_IDR", "DSM_IDW", "SQE_FIELDS", "CQE_FIELDS",
    "SMART_LOG_BYTES", "c_header",
]

SQE_BYTES = 64
CQE_BYTES = 16
IDENTIFY_BYTES = 4096
PAGE_SIZE = 4096                # CC.MPS = 0 (the only page size the controller supports)
NVME_VERSION = 0x00010400       # VS / Identify Controller VER: 1.4.0
NSID_ALL = 0xFFFFFFFF           # the broadcast namespace identifier


# Opcodes -----------------------------------------------------------------------------------------

class AdminOpcode:
    """Admin command set opcodes (NVMe 1.4 figure 139)."""
    DELETE_IO_SQ = 0x00
    CREATE_IO_SQ = 0x01
    GET_LOG_PAGE = 0x02
    DELETE_IO_CQ = 0x04
    CREATE_IO_CQ = 0x05
    IDENTIFY = 0x06
    ABORT = 0x08
    SET_FEATURES = 0x09
    GET_FEATURES = 0x0A
    ASYNC_EVENT_REQUEST = 0x0C
    NS_MANAGEMENT = 0x0D
    FIRMWARE_COMMIT = 0x10
    FIRMWARE_IMAGE_DOWNLOAD = 0x11
    DEVICE_SELF_TEST = 0x14
    NS_ATTACHMENT = 0x15
    KEEP_ALIVE = 0x18
    DIRECTIVE_SEND = 0x19
    DIRECTIVE_RECEIVE = 0x1A
    VIRTUALIZATION_MANAGEMENT = 0x1C
    NVME_MI_SEND = 0x1D
    NVME_MI_RECEIVE = 0x1E
    DOORBELL_BUFFER_CONFIG = 0x7C
    FORMAT_NVM = 0x80
    SECURITY_SEND = 0x81
    SECURITY_RECEIVE = 0x82
    SANITIZE = 0x84
    GET_LBA_STATUS = 0x86
    # vendor specific (C0h-FFh): ssdlab's fault injection, CDW10 the fault (FAULT_*), CDW12
    # FAULT_ARM (anything else: Invalid Field, so a stray or fuzzed command cannot fire it)
    SSDLAB_FAULT = 0xC1


class Fault:
    """ssdlab's injectable faults (admin opcode C1h, CDW10).

    NAND_*: the NAND emulator's block table (soc/nand_emulation.py, builds whose flash is the
    emulator: cards without NAND chips, or a simulated drive built so); on any other build,
    or with an argument out of range, Invalid Field and nothing changes. CDW13 names the
    target: channel 7:0, way 15:8, LUN 23:16 (31:24 zero); CDW14 the block of the LUN (the
    plane in its low bits, as the flash ops number it)."""
    FIRMWARE_PANIC = 1          # the firmware fails: CSTS.CFS, recovered by a controller reset
    FIRMWARE_HANG = 2           # the firmware loops without waiting: the watchdog's to catch
                                # (CDW13: its period in cycles for this test, 0: the firmware's)
    NAND_BAD_BLOCK = 3          # a grown bad block (CDW13, CDW14): from now on its every
                                # program and erase FAILs (reads still read it)
    NAND_PE = 4                 # the block's (CDW13, CDW14) P/E count set to CDW15 (0..2^20-1)
    NAND_PE_LIMIT = 5           # every block's P/E limit, CDW15 (0..2^20-1; 0: none): an erase
                                # taking a block's count past it FAILs and the block goes bad
    ARM = 0x55AA1234            # CDW12 of a fault injection that is meant


class NvmOpcode:
    """NVM command set opcodes (NVMe 1.4 figure 346)."""
    FLUSH = 0x00
    WRITE = 0x01
    READ = 0x02
    WRITE_UNCORRECTABLE = 0x04
    COMPARE = 0x05
    WRITE_ZEROES = 0x08
    DATASET_MANAGEMENT = 0x09
    VERIFY = 0x0C
    RESERVATION_REGISTER = 0x0D
    RESERVATION_REPORT = 0x0E
    RESERVATION_ACQUIRE = 0x11
    RESERVATION_RELEASE = 0x15


class FeatureId:
    """Feature identifiers (NVMe 1.4 figure 271)."""
    ARBITRATION = 0x01
    POWER_MANAGEMENT = 0x02
    LBA_RANGE_TYPE = 0x03
    TEMPERATURE_THRESHOLD = 0x04
    ERROR_RECOVERY = 0x05
    VOLATILE_WRITE_CACHE = 0x06
    NUMBER_OF_QUEUES = 0x07
    INTERRUPT_COALESCING = 0x08
    INTERRUPT_VECTOR_CONFIG = 0x09
    WRITE_ATOMICITY = 0x0A
    ASYNC_EVENT_CONFIG = 0x0B
    AUTONOMOUS_POWER_STATE = 0x0C
    HOST_MEMORY_BUFFER = 0x0D
    TIMESTAMP = 0x0E
    KEEP_ALIVE_TIMER = 0x0F


class LogPage:
    """Log page identifiers (NVMe 1.4 figure 191)."""
    ERROR_INFORMATION = 0x01
    SMART_HEALTH = 0x02
    FIRMWARE_SLOT = 0x03
    CHANGED_NS_LIST = 0x04
    COMMANDS_SUPPORTED = 0x05
    DEVICE_SELF_TEST = 0x06
    FTL_COUNTERS = 0xC0         # vendor specific: the firmware's FTL counters (sw/firmware)


class Cns:
    """Identify CNS values (NVMe 1.4 figure 244)."""
    NAMESPACE = 0x00
    CONTROLLER = 0x01
    ACTIVE_NS_LIST = 0x02
    NS_DESCRIPTOR_LIST = 0x03


class AerType:
    """Asynchronous event types (NVMe 1.4 figure 146)."""
    ERROR = 0
    SMART_HEALTH = 1
    NOTICE = 2
    IO_COMMAND_SET = 6
    VENDOR = 7


class AerSmartInfo:
    """Asynchronous event information for type SMART / Health Status (NVMe 1.4 figure
    148)."""
    NVM_SUBSYSTEM_RELIABILITY = 0
    TEMPERATURE_THRESHOLD = 1
    SPARE_BELOW_THRESHOLD = 2


class CriticalWarning:
    """SMART / Health log byte 0 bits (NVMe 1.4 figure 196)."""
    SPARE = 0x01                # available spare below its threshold
    TEMPERATURE = 0x02
    RELIABILITY = 0x04          # NVM subsystem reliability degraded (media or internal errors)
    READ_ONLY = 0x08            # media placed in read-only mode
    VOLATILE_BACKUP = 0x10


class AerErrorInfo:
    """Asynchronous event information for type Error Status (NVMe 1.4 figure 147)."""
    INVALID_DOORBELL_REGISTER = 0
    INVALID_DOORBELL_VALUE = 1
    DIAGNOSTIC_FAILURE = 2
    PERSISTENT_INTERNAL_ERROR = 3
    TRANSIENT_INTERNAL_ERROR = 4
    FIRMWARE_IMAGE_LOAD_ERROR = 5


# Status --------------------------------------------------------------------------------------

SCT_GENERIC = 0
SCT_COMMAND_SPECIFIC = 1
SCT_MEDIA = 2
SCT_PATH = 3
SCT_VENDOR = 7
STATUS_DNR = 1 << 14
STATUS_MORE = 1 << 13
STATUS_SCT_SHIFT = 8            # SCT 10:8, above SC 7:0
STATUS_CRD_SHIFT = 11           # CRD 12:11


def status(sct, sc, dnr=False, more=False, crd=0):
    """Status field value (15 bits) of status code type `sct` (0..7), status code `sc`
    (0..255), Do Not Retry, More and Command Retry Delay (0..3)."""
    if not (0 <= sct < 8 and 0 <= sc < 256 and 0 <= crd < 4):
        raise ValueError(f"status: sct={sct} sc={sc} crd={crd} out of range")
    return (sc | sct << STATUS_SCT_SHIFT | crd << STATUS_CRD_SHIFT
            | (STATUS_MORE if more else 0) | (STATUS_DNR if dnr else 0))


def status_sct(value):
    return (value >> STATUS_SCT_SHIFT) & 7


def status_sc(value):
    return value & 0xFF


def status_dnr(value):
    return bool(value & STATUS_DNR)


# (sct, sc) -> (name, DNR set when this controller model reports it)
_STATUS_TABLE = {
    (0, 0x00): ("Successful Completion", False),
    (0, 0x01): ("Invalid Command Opcode", True),
    (0, 0x02): ("Invalid Field in Command", True),
    (0, 0x03): ("Command ID Conflict", True),
    (0, 0x04): ("Data Transfer Error", False),
    (0, 0x05): ("Commands Aborted due to Power Loss Notification", False),
    (0, 0x06): ("Internal Error", False),
    (0, 0x07): ("Command Abort Requested", False),
    (0, 0x08): ("Command Aborted due to SQ Deletion", False),
    (0, 0x09): ("Command Aborted due to Failed Fused Command", False),
    (0, 0x0A): ("Command Aborted due to Missing Fused Command", False),
    (0, 0x0B): ("Invalid Namespace or Format", True),
    (0, 0x0C): ("Command Sequence Error", True),
    (0, 0x0D): ("Invalid SGL Segment Descriptor", True),
    (0, 0x0E): ("Invalid Number of SGL Descriptors", True),
    (0, 0x0F): ("Data SGL Length Invalid", True),
    (0, 0x10): ("Metadata SGL Length Invalid", True),
    (0, 0x11): ("SGL Descriptor Type Invalid", True),
    (0, 0x12): ("Invalid Use of Controller Memory Buffer", True),
    (0, 0x13): ("PRP Offset Invalid", True),
    (0, 0x14): ("Atomic Write Unit Exceeded", True),
    (0, 0x15): ("Operation Denied", True),
    (0, 0x16): ("SGL Offset Invalid", True),
    (0, 0x18): ("Host Identifier Inconsistent Format", True),
    (0, 0x19): ("Keep Alive Timer Expired", False),
    (0, 0x1A): ("Keep Alive Timeout Invalid", True),
    (0, 0x1B): ("Command Aborted due to Preempt and Abort", False),
    (0, 0x1C): ("Sanitize Failed", False),
    (0, 0x1D): ("Sanitize In Progress", False),
    (0, 0x1E): ("SGL Data Block Granularity Invalid", True),
    (0, 0x1F): ("Command Not Supported for Queue in CMB", True),
    (0, 0x20): ("Namespace is Write Protected", True),
    (0, 0x21): ("Command Interrupted", False),
    (0, 0x22): ("Transient Transport Error", False),
    (0, 0x80): ("LBA Out of Range", True),
    (0, 0x81): ("Capacity Exceeded", True),
    (0, 0x82): ("Namespace Not Ready", False),
    (0, 0x83): ("Reservation Conflict", True),
    (0, 0x84): ("Format In Progress", False),
    (1, 0x00): ("Completion Queue Invalid", True),
    (1, 0x01): ("Invalid Queue Identifier", True),
    (1, 0x02): ("Invalid Queue Size", True),
    (1, 0x03): ("Abort Command Limit Exceeded", True),
    (1, 0x05): ("Asynchronous Event Request Limit Exceeded", True),
    (1, 0x06): ("Invalid Firmware Slot", True),
    (1, 0x07): ("Invalid Firmware Image", True),
    (1, 0x08): ("Invalid Interrupt Vector", True),
    (1, 0x09): ("Invalid Log Page", True),
    (1, 0x0A): ("Invalid Format", True),
    (1, 0x0B): ("Firmware Activation Requires Conventional Reset", False),
    (1, 0x0C): ("Invalid Queue Deletion", True),
    (1, 0x0D): ("Feature Identifier Not Saveable", True),
    (1, 0x0E): ("Feature Not Changeable", True),
    (1, 0x0F): ("Feature Not Namespace Specific", True),
    (1, 0x10): ("Firmware Activation Requires NVM Subsystem Reset", False),
    (1, 0x11): ("Firmware Activation Requires Controller Level Reset", False),
    (1, 0x12): ("Firmware Activation Requires Maximum Time Violation", False),
    (1, 0x13): ("Firmware Activation Prohibited", False),
    (1, 0x14): ("Overlapping Range", True),
    (1, 0x15): ("Namespace Insufficient Capacity", True),
    (1, 0x16): ("Namespace Identifier Unavailable", True),
    (1, 0x18): ("Namespace Already Attached", True),
    (1, 0x19): ("Namespace Is Private", True),
    (1, 0x1A): ("Namespace Not Attached", True),
    (1, 0x1B): ("Thin Provisioning Not Supported", True),
    (1, 0x1C): ("Controller List Invalid", True),
    (1, 0x1D): ("Device Self-test In Progress", False),
    (1, 0x1E): ("Boot Partition Write Prohibited", True),
    (1, 0x1F): ("Invalid Controller Identifier", True),
    (1, 0x20): ("Invalid Secondary Controller State", True),
    (1, 0x21): ("Invalid Number of Controller Resources", True),
    (1, 0x22): ("Invalid Resource Identifier", True),
    (1, 0x23): ("Sanitize Prohibited While Persistent Memory Region is Enabled", True),
    (1, 0x24): ("ANA Group Identifier Invalid", True),
    (1, 0x25): ("ANA Attach Failed", True),
    (1, 0x80): ("Conflicting Attributes", True),
    (1, 0x81): ("Invalid Protection Information", True),
    (1, 0x82): ("Attempted Write to Read Only Range", True),
    (2, 0x80): ("Write Fault", False),
    (2, 0x81): ("Unrecovered Read Error", False),
    (2, 0x82): ("End-to-end Guard Check Error", True),
    (2, 0x83): ("End-to-end Application Tag Check Error", True),
    (2, 0x84): ("End-to-end Reference Tag Check Error", True),
    (2, 0x85): ("Compare Failure", True),
    (2, 0x86): ("Access Denied", True),
    (2, 0x87): ("Deallocated or Unwritten Logical Block", True),
    (3, 0x00): ("Internal Path Error", False),
    (3, 0x01): ("Asymmetric Access Persistent Loss", False),
    (3, 0x02): ("Asymmetric Access Inaccessible", False),
    (3, 0x03): ("Asymmetric Access Transition", False),
    (3, 0x60): ("Controller Pathing Error", False),
    (3, 0x70): ("Host Pathing Error", False),
    (3, 0x71): ("Command Aborted By Host", False),
}


class SC:
    """Status field values as this project's controller reports them (DNR included where the
    table above says so). Names follow the specification's."""
    SUCCESS = 0
    INVALID_OPCODE = status(0, 0x01, dnr=True)
    INVALID_FIELD = status(0, 0x02, dnr=True)
    CID_CONFLICT = status(0, 0x03, dnr=True)
    DATA_TRANSFER_ERROR = status(0, 0x04)
    INTERNAL_ERROR = status(0, 0x06)
    ABORT_REQUESTED = status(0, 0x07)
    ABORT_SQ_DELETION = status(0, 0x08)
    INVALID_NAMESPACE = status(0, 0x0B, dnr=True)
    COMMAND_SEQUENCE_ERROR = status(0, 0x0C, dnr=True)
    PRP_OFFSET_INVALID = status(0, 0x13, dnr=True)
    LBA_OUT_OF_RANGE = status(0, 0x80, dnr=True)
    CAPACITY_EXCEEDED = status(0, 0x81, dnr=True)
    NAMESPACE_NOT_READY = status(0, 0x82)
    NAMESPACE_WRITE_PROTECTED = status(0, 0x20, dnr=True)
    CQ_INVALID = status(1, 0x00, dnr=True)
    INVALID_QID = status(1, 0x01, dnr=True)
    INVALID_QUEUE_SIZE = status(1, 0x02, dnr=True)
    ABORT_LIMIT_EXCEEDED = status(1, 0x03, dnr=True)
    AER_LIMIT_EXCEEDED = status(1, 0x05, dnr=True)
    INVALID_FIRMWARE_SLOT = status(1, 0x06, dnr=True)
    INVALID_INTERRUPT_VECTOR = status(1, 0x08, dnr=True)
    INVALID_LOG_PAGE = status(1, 0x09, dnr=True)
    INVALID_FORMAT = status(1, 0x0A, dnr=True)
    INVALID_QUEUE_DELETION = status(1, 0x0C, dnr=True)
    FEATURE_NOT_SAVEABLE = status(1, 0x0D, dnr=True)
    FEATURE_NOT_CHANGEABLE = status(1, 0x0E, dnr=True)
    FEATURE_NOT_NS_SPECIFIC = status(1, 0x0F, dnr=True)
    CONFLICTING_ATTRIBUTES = status(1, 0x80, dnr=True)
    WRITE_FAULT = status(2, 0x80)
    UNRECOVERED_READ_ERROR = status(2, 0x81)


_SCT_NAMES = {0: "Generic", 1: "Command Specific", 2: "Media and Data Integrity",
              3: "Path Related", 7: "Vendor Specific"}


def status_name(value):
    """'Invalid Field in Command (SCT 0h SC 02h, DNR)' for a status field value."""
    sct, sc = status_sct(value), status_sc(value)
    name = _STATUS_TABLE.get((sct, sc), (None,))[0]
    if name is None:
        name = f"{_SCT_NAMES.get(sct, 'Reserved')} status {sc:02X}h"
    flags = [f"SCT {sct:X}h SC {sc:02X}h"]
    if value & STATUS_DNR:
        flags.append("DNR")
    if value & STATUS_MORE:
        flags.append("M")
    if (value >> 11) & 3:
        flags.append(f"CRD {(value >> 11) & 3}")
    return f"{name} ({', '.join(flags)})"


# Submission / completion queue entries -----------------------------------------------------------

# (name, struct format) in entry order; the C structs of sw/lib are checked against them.
SQE_FIELDS = (("cdw0", "I"), ("nsid", "I"), ("cdw2", "I"), ("cdw3", "I"), ("mptr", "Q"),
              ("prp1", "Q"), ("prp2", "Q"), ("cdw10", "I"), ("cdw11", "I"), ("cdw12", "I"),
              ("cdw13", "I"), ("cdw14", "I"), ("cdw15", "I"))
CQE_FIELDS = (("dw0", "I"), ("dw1", "I"), ("sqhd", "H"), ("sqid", "H"), ("cid", "H"),
              ("status", "H"))      # status: phase tag 0, status field 15:1
_SQE = struct.Struct("<" + "".join(f for _, f in SQE_FIELDS))
_CQE = struct.Struct("<" + "".join(f for _, f in CQE_FIELDS))


@dataclass
class Sqe:
    """A submission queue entry (NVMe 1.4 figure 104-106). DW0: opcode 7:0, FUSE 9:8,
    PSDT 15:14, CID 31:16; DW1 NSID; DW2-3 (reserved / command specific); DW4-5 MPTR;
    DW6-7 PRP1 (DPTR 63:0); DW8-9 PRP2 (DPTR 127:64); DW10-15 command specific."""
    opcode: int = 0
    fuse: int = 0
    psdt: int = 0
    cid: int = 0
    nsid: int = 0
    cdw2: int = 0
    cdw3: int = 0
    mptr: int = 0
    prp1: int = 0
    prp2: int = 0
    cdw10: int = 0
    cdw11: int = 0
    cdw12: int = 0
    cdw13: int = 0
    cdw14: int = 0
    cdw15: int = 0

    def pack(self):
        dw0 = (self.opcode & 0xFF) | (self.fuse & 3) << 8 | (self.psdt & 3) << 14 | \
            (self.cid & 0xFFFF) << 16
        return _SQE.pack(dw0, self.nsid & 0xFFFFFFFF, self.cdw2 & 0xFFFFFFFF,
                         self.cdw3 & 0xFFFFFFFF, self.mptr & (2**64 - 1),
                         self.prp1 & (2**64 - 1), self.prp2 & (2**64 - 1),
                         *(getattr(self, f"cdw{n}") & 0xFFFFFFFF for n in range(10, 16)))

    @classmethod
    def unpack(cls, data):
        if len(data) != SQE_BYTES:
            raise ValueError(f"Sqe.unpack: {len(data)} bytes, expected {SQE_BYTES}")
        dw0, nsid, cdw2, cdw3, mptr, prp1, prp2, *cdw = _SQE.unpack(bytes(data))
        return cls(dw0 & 0xFF, (dw0 >> 8) & 3, (dw0 >> 14) & 3, dw0 >> 16, nsid, cdw2, cdw3,
                   mptr, prp1, prp2, *cdw)

    @classmethod
    def from_int(cls, value):
        """From a 512-bit integer holding SQE byte n in bits 8n+7:8n (the RTL's sqe port)."""
        return cls.unpack(value.to_bytes(SQE_BYTES, "little"))

    def to_int(self):
        return int.from_bytes(self.pack(), "little")

    @property
    def slba(self):
        return self.cdw10 | self.cdw11 << 32

    @property
    def nlb(self):
        """0's based number of logical blocks (CDW12 15:0) of Read/Write/Write Zeroes."""
        return self.cdw12 & 0xFFFF


@dataclass
class Cqe:
    """A completion queue entry (NVMe 1.4 figures 121-125): DW0 command specific, DW1,
    DW2 SQHD 15:0 / SQID 31:16, DW3 CID 15:0, phase tag 16, status field 31:17."""
    dw0: int = 0
    dw1: int = 0
    sqhd: int = 0
    sqid: int = 0
    cid: int = 0
    phase: int = 0
    status: int = 0

    def pack(self):
        return _CQE.pack(self.dw0 & 0xFFFFFFFF, self.dw1 & 0xFFFFFFFF, self.sqhd & 0xFFFF,
                         self.sqid & 0xFFFF, self.cid & 0xFFFF,
                         (self.phase & 1) | (self.status & 0x7FFF) << 1)

    @classmethod
    def unpack(cls, data):
        if len(data) != CQE_BYTES:
            raise ValueError(f"Cqe.unpack: {len(data)} bytes, expected {CQE_BYTES}")
        dw0, dw1, sqhd, sqid, cid, sf = _CQE.unpack(bytes(data))
        return cls(dw0, dw1, sqhd, sqid, cid, sf & 1, sf >> 1)

    @property
    def sct(self):
        return status_sct(self.status)

    @property
    def sc(self):
        return status_sc(self.status)

    @property
    def dnr(self):
        return status_dnr(self.status)

    @property
    def ok(self):
        return (self.status & 0x7FF) == 0

    def __str__(self):
        return (f"CQE(sqid={self.sqid} cid={self.cid} sqhd={self.sqhd} dw0=0x{self.dw0:08x} "
                f"p={self.phase} status=0x{self.status:04x} {status_name(self.status)})")


# Command builders (CID and, for data commands, PRPs filled in by the caller) --------------------

def sqe_identify(cns, nsid=0, cntid=0, prp1=0, prp2=0):
    return Sqe(opcode=AdminOpcode.IDENTIFY, nsid=nsid, prp1=prp1, prp2=prp2,
               cdw10=(cns & 0xFF) | (cntid & 0xFFFF) << 16)


def sqe_get_features(fid, sel=0, cdw11=0, nsid=0, prp1=0, prp2=0):
    return Sqe(opcode=AdminOpcode.GET_FEATURES, nsid=nsid, prp1=prp1, prp2=prp2,
               cdw10=(fid & 0xFF) | (sel & 7) << 8, cdw11=cdw11)


def sqe_set_features(fid, cdw11, save=False, nsid=0, cdw12=0, prp1=0, prp2=0):
    return Sqe(opcode=AdminOpcode.SET_FEATURES, nsid=nsid, prp1=prp1, prp2=prp2,
               cdw10=(fid & 0xFF) | int(bool(save)) << 31, cdw11=cdw11, cdw12=cdw12)


def log_page_numd(length):
    """Number of dwords (0's based) of a Get Log Page of `length` bytes (dword multiple)."""
    if length <= 0 or length % 4:
        raise ValueError(f"log page length {length} not a positive dword multiple")
    return length // 4 - 1


def sqe_get_log_page(lid, length, nsid=0xFFFFFFFF, offset=0, lsp=0, rae=False, prp1=0,
                     prp2=0):
    numd = log_page_numd(length)
    return Sqe(opcode=AdminOpcode.GET_LOG_PAGE, nsid=nsid, prp1=prp1, prp2=prp2,
               cdw10=(lid & 0xFF) | (lsp & 0xF) << 8 | int(bool(rae)) << 15
               | (numd & 0xFFFF) << 16,
               cdw11=numd >> 16, cdw12=offset & 0xFFFFFFFF, cdw13=offset >> 32)


def sqe_create_io_cq(qid, qsize, base, iv=0, ien=True, pc=True):
    """`qsize` is 0's based (entries - 1), as in CDW10 31:16."""
    return Sqe(opcode=AdminOpcode.CREATE_IO_CQ, prp1=base,
               cdw10=(qid & 0xFFFF) | (qsize & 0xFFFF) << 16,
               cdw11=int(bool(pc)) | int(bool(ien)) << 1 | (iv & 0xFFFF) << 16)


def sqe_create_io_sq(qid, qsize, base, cqid, qprio=0, pc=True, nvmsetid=0):
    return Sqe(opcode=AdminOpcode.CREATE_IO_SQ, prp1=base,
               cdw10=(qid & 0xFFFF) | (qsize & 0xFFFF) << 16,
               cdw11=int(bool(pc)) | (qprio & 3) << 1 | (cqid & 0xFFFF) << 16,
               cdw12=nvmsetid & 0xFFFF)


def sqe_delete_io_cq(qid):
    return Sqe(opcode=AdminOpcode.DELETE_IO_CQ, cdw10=qid & 0xFFFF)


def sqe_delete_io_sq(qid):
    return Sqe(opcode=AdminOpcode.DELETE_IO_SQ, cdw10=qid & 0xFFFF)


def sqe_abort(sqid, cid):
    return Sqe(opcode=AdminOpcode.ABORT, cdw10=(sqid & 0xFFFF) | (cid & 0xFFFF) << 16)


def sqe_async_event_request():
    return Sqe(opcode=AdminOpcode.ASYNC_EVENT_REQUEST)


def sqe_keep_alive():
    return Sqe(opcode=AdminOpcode.KEEP_ALIVE)


def _rw(opcode, nsid, slba, nlb, prp1, prp2, fua, lr, dsm):
    if not 1 <= nlb <= 0x10000:
        raise ValueError(f"nlb={nlb}: 1..65536 logical blocks")
    return Sqe(opcode=opcode, nsid=nsid, prp1=prp1, prp2=prp2, cdw10=slba & 0xFFFFFFFF,
               cdw11=(slba >> 32) & 0xFFFFFFFF,
               cdw12=(nlb - 1) | int(bool(fua)) << 30 | int(bool(lr)) << 31, cdw13=dsm)


def sqe_read(slba, nlb, nsid=1, prp1=0, prp2=0, fua=False, lr=False, dsm=0):
    """`nlb` is the block count (1-based); CDW12 gets nlb - 1."""
    return _rw(NvmOpcode.READ, nsid, slba, nlb, prp1, prp2, fua, lr, dsm)


def sqe_write(slba, nlb, nsid=1, prp1=0, prp2=0, fua=False, lr=False, dsm=0):
    return _rw(NvmOpcode.WRITE, nsid, slba, nlb, prp1, prp2, fua, lr, dsm)


def sqe_flush(nsid=1):
    return Sqe(opcode=NvmOpcode.FLUSH, nsid=nsid)


DSM_IDR, DSM_IDW, DSM_AD = 1, 2, 4      # CDW11 attributes of Dataset Management


def sqe_dataset_management(nr, attributes=DSM_AD, nsid=1, prp1=0, prp2=0):
    """`nr` ranges (1..256, 1-based); CDW10 gets nr - 1."""
    if not 1 <= nr <= 256:
        raise ValueError(f"nr={nr}: 1..256 ranges")
    return Sqe(opcode=NvmOpcode.DATASET_MANAGEMENT, nsid=nsid, prp1=prp1, prp2=prp2,
               cdw10=nr - 1, cdw11=attributes)


def sqe_write_zeroes(slba, nlb, nsid=1, deac=False, fua=False, lr=False):
    s = _rw(NvmOpcode.WRITE_ZEROES, nsid, slba, nlb, 0, 0, fua, lr, 0)
    s.cdw12 |= int(bool(deac)) << 25
    return s


# Packed structures: field tables ---------------------------------------------------------------

def _put(buf, offset, size, value):
    if isinstance(value, (bytes, bytearray, str)):
        raw = value.encode("ascii") if isinstance(value, str) else bytes(value)
        if len(raw) > size:
            raise ValueError(f"{raw!r} longer than {size} bytes")
        # ASCII fields are padded with spaces (NVMe 1.4 section 1.5), binary ones with 0.
        pad = b" " if isinstance(value, str) else b"\0"
        buf[offset:offset + size] = raw + pad * (size - len(raw))
    else:
        buf[offset:offset + size] = int(value).to_bytes(size, "little")


def _get(buf, offset, size, kind):
    raw = bytes(buf[offset:offset + size])
    if kind == "s":
        return raw.decode("ascii", errors="replace").rstrip(" \0")
    if kind == "b":
        return raw
    return int.from_bytes(raw, "little")


def _build(table, values, size):
    unknown = set(values) - {name for name, *_ in table}
    if unknown:
        raise KeyError(f"unknown fields {sorted(unknown)}")
    buf = bytearray(size)
    for name, offset, fsize, kind, default in table:
        value = values.get(name, default)
        if kind == "s" and not isinstance(value, str):
            raise TypeError(f"{name} is an ASCII string field")
        _put(buf, offset, fsize, value)
    return buf


def _parse(table, data):
    return {name: _get(data, offset, fsize, kind) for name, offset, fsize, kind, _ in table}


# Identify Controller (NVMe 1.4 figure 247): (name, byte offset, size, kind, default);
# kind "i" little-endian integer, "s" ASCII (space padded), "b" raw bytes.
ONCS_COMPARE, ONCS_WRITE_UNCORRECTABLE, ONCS_DSM, ONCS_WRITE_ZEROES = 1, 2, 4, 8
ONCS_SAVE_SELECT, ONCS_RESERVATIONS, ONCS_TIMESTAMP, ONCS_VERIFY = 16, 32, 64, 128

ID_CTRL_FIELDS = (
    ("vid", 0, 2, "i", 0x1D1D),
    ("ssvid", 2, 2, "i", 0x1D1D),
    ("sn", 4, 20, "s", "SSDLAB0001"),
    ("mn", 24, 40, "s", "ssdlab NVMe controller"),
    ("fr", 64, 8, "s", "0.1"),
    ("rab", 72, 1, "i", 0),
    ("ieee", 73, 3, "i", 0),
    ("cmic", 76, 1, "i", 0),
    ("mdts", 77, 1, "i", 5),
    ("cntlid", 78, 2, "i", 1),
    ("ver", 80, 4, "i", NVME_VERSION),
    ("rtd3r", 84, 4, "i", 0),
    ("rtd3e", 88, 4, "i", 0),
    ("oaes", 92, 4, "i", 0),
    ("ctratt", 96, 4, "i", 0),
    ("rrls", 100, 2, "i", 0),
    ("cntrltype", 111, 1, "i", 1),          # 1: I/O controller
    ("fguid", 112, 16, "b", bytes(16)),
    ("oacs", 256, 2, "i", 0),
    ("acl", 258, 1, "i", 3),                # 0's based: 4 Abort commands outstanding
    ("aerl", 259, 1, "i", 3),               # 0's based: 4 AERs outstanding
    ("frmw", 260, 1, "i", 0x03),            # one slot, slot 1 read only
    ("lpa", 261, 1, "i", 0x04),             # extended data for Get Log Page (NUMDU, offset)
    ("elpe", 262, 1, "i", 63),              # 0's based: 64 error log entries
    ("npss", 263, 1, "i", 0),               # 0's based: one power state
    ("avscc", 264, 1, "i", 0),
    ("apsta", 265, 1, "i", 0),
    ("wctemp", 266, 2, "i", 343),
    ("cctemp", 268, 2, "i", 353),
    ("mtfa", 270, 2, "i", 0),
    ("hmpre", 272, 4, "i", 0),
    ("hmmin", 276, 4, "i", 0),
    ("tnvmcap", 280, 16, "i", 0),
    ("unvmcap", 296, 16, "i", 0),
    ("rpmbs", 312, 4, "i", 0),
    ("edstt", 316, 2, "i", 0),
    ("dsto", 318, 1, "i", 0),
    ("fwug", 319, 1, "i", 0),
    ("kas", 320, 2, "i", 0),
    ("hctma", 322, 2, "i", 0),
    ("mntmt", 324, 2, "i", 0),
    ("mxtmt", 326, 2, "i", 0),
    ("sanicap", 328, 4, "i", 0),
    ("sqes", 512, 1, "i", 0x66),
    ("cqes", 513, 1, "i", 0x44),
    ("maxcmd", 514, 2, "i", 0),
    ("nn", 516, 4, "i", 1),
    ("oncs", 520, 2, "i", ONCS_DSM | ONCS_WRITE_ZEROES),
    ("fuses", 522, 2, "i", 0),
    ("fna", 524, 1, "i", 0),
    ("vwc", 525, 1, "i", 0),
    ("awun", 526, 2, "i", 0),
    ("awupf", 528, 2, "i", 0),
    ("nvscc", 530, 1, "i", 1),
    ("nwpc", 531, 1, "i", 0),
    ("acwu", 532, 2, "i", 0),
    ("sgls", 536, 4, "i", 0),
    ("mnan", 540, 4, "i", 0),
    ("subnqn", 768, 256, "s", ""),
    # Power state descriptor 0 (figure 248) at 2048: MP in centiwatts, ENLAT/EXLAT in us.
    ("psd0_mp", 2048, 2, "i", 2500),
    ("psd0_flags", 2051, 1, "i", 0),        # bit 0 MXPS, bit 1 NOPS
    ("psd0_enlat", 2052, 4, "i", 0),
    ("psd0_exlat", 2056, 4, "i", 0),
)

ID_NS_FIELDS = (
    ("nsze", 0, 8, "i", 0),
    ("ncap", 8, 8, "i", 0),
    ("nuse", 16, 8, "i", 0),
    ("nsfeat", 24, 1, "i", 0),
    ("nlbaf", 25, 1, "i", 0),               # 0's based: one LBA format
    ("flbas", 26, 1, "i", 0),
    ("mc", 27, 1, "i", 0),
    ("dpc", 28, 1, "i", 0),
    ("dps", 29, 1, "i", 0),
    ("nmic", 30, 1, "i", 0),
    ("rescap", 31, 1, "i", 0),
    ("fpi", 32, 1, "i", 0),
    ("dlfeat", 33, 1, "i", 0x01),           # deallocated blocks read as zeros
    ("nawun", 34, 2, "i", 0),
    ("nawupf", 36, 2, "i", 0),
    ("nacwu", 38, 2, "i", 0),
    ("nabsn", 40, 2, "i", 0),
    ("nabo", 42, 2, "i", 0),
    ("nabspf", 44, 2, "i", 0),
    ("noiob", 46, 2, "i", 0),
    ("nvmcap", 48, 16, "i", 0),
    ("npwg", 64, 2, "i", 0),
    ("npwa", 66, 2, "i", 0),
    ("npdg", 68, 2, "i", 0),
    ("npda", 70, 2, "i", 0),
    ("nows", 72, 2, "i", 0),
    ("anagrpid", 92, 4, "i", 0),
    ("nsattr", 99, 1, "i", 0),
    ("nvmsetid", 100, 2, "i", 0),
    ("endgid", 102, 2, "i", 0),
    ("nguid", 104, 16, "b", bytes(16)),
    ("eui64", 120, 8, "b", bytes(8)),
    # LBA format 0 (figure 246): MS 15:0, LBADS 23:16 (2^n bytes), RP 25:24.
    ("lbaf0_ms", 128, 2, "i", 0),
    ("lbaf0_lbads", 130, 1, "i", 9),
    ("lbaf0_rp", 131, 1, "i", 0),
)


@dataclass
class IdentifyController:
    """Parsed Identify Controller data: every field of ID_CTRL_FIELDS by name."""
    raw: bytes
    fields: dict

    def __getattr__(self, name):
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None


@dataclass
class IdentifyNamespace:
    raw: bytes
    fields: dict

    def __getattr__(self, name):
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def lba_size(self):
        return 1 << self.fields["lbaf0_lbads"]


def build_identify_controller(**values):
    """4096-byte Identify Controller data structure; fields by lower-case name (see
    ID_CTRL_FIELDS), defaults for the rest. SN/MN/FR/SUBNQN are ASCII, space padded."""
    return bytes(_build(ID_CTRL_FIELDS, values, IDENTIFY_BYTES))


def parse_identify_controller(data):
    if len(data) != IDENTIFY_BYTES:
        raise ValueError(f"Identify Controller: {len(data)} bytes")
    return IdentifyController(bytes(data), _parse(ID_CTRL_FIELDS, data))


def build_identify_namespace(nsze, ncap=None, nuse=None, lbads=9, **values):
    """4096-byte Identify Namespace data structure of a namespace of `nsze` logical blocks of
    2^lbads bytes (one LBA format, FLBAS 0)."""
    values = dict(values, nsze=nsze, ncap=nsze if ncap is None else ncap,
                  nuse=nsze if nuse is None else nuse, lbaf0_lbads=lbads)
    return bytes(_build(ID_NS_FIELDS, values, IDENTIFY_BYTES))


def parse_identify_namespace(data):
    if len(data) != IDENTIFY_BYTES:
        raise ValueError(f"Identify Namespace: {len(data)} bytes")
    return IdentifyNamespace(bytes(data), _parse(ID_NS_FIELDS, data))


def build_active_ns_list(nsids, start=0):
    """Identify CNS 02h: up to 1024 active NSIDs greater than `start`, ascending, 0-padded."""
    ids = sorted(n for n in nsids if n > start)[:1024]
    return struct.pack(f"<{len(ids)}I", *ids) + bytes(IDENTIFY_BYTES - 4 * len(ids))


def build_ns_descriptor_list(eui64=None, nguid=None):
    """Identify CNS 03h (figure 249): Namespace Identification Descriptors, each NIDT (1
    EUI-64, 2 NGUID), NIDL, two reserved bytes and the NID; zero after the last."""
    out = b""
    for nidt, nid in ((1, eui64), (2, nguid)):
        if nid is not None:
            out += bytes([nidt, len(nid), 0, 0]) + bytes(nid)
    return out + bytes(IDENTIFY_BYTES - len(out))


def parse_active_ns_list(data):
    ids = struct.unpack("<1024I", bytes(data[:IDENTIFY_BYTES]))
    return [n for n in ids if n]


# Log pages ---------------------------------------------------------------------------------------

# SMART / Health Information (02h, figure 194): 512 bytes. 16-byte counters are 128-bit.
SMART_FIELDS = (
    ("critical_warning", 0, 1, "i", 0),
    ("composite_temperature", 1, 2, "i", 313),          # Kelvin
    ("available_spare", 3, 1, "i", 100),
    ("available_spare_threshold", 4, 1, "i", 10),
    ("percentage_used", 5, 1, "i", 0),
    ("endurance_group_critical_warning", 6, 1, "i", 0),
    ("data_units_read", 32, 16, "i", 0),                # thousands of 512-byte units
    ("data_units_written", 48, 16, "i", 0),
    ("host_read_commands", 64, 16, "i", 0),
    ("host_write_commands", 80, 16, "i", 0),
    ("controller_busy_time", 96, 16, "i", 0),
    ("power_cycles", 112, 16, "i", 0),
    ("power_on_hours", 128, 16, "i", 0),
    ("unsafe_shutdowns", 144, 16, "i", 0),
    ("media_errors", 160, 16, "i", 0),
    ("num_err_log_entries", 176, 16, "i", 0),
    ("warning_temp_time", 192, 4, "i", 0),
    ("critical_comp_time", 196, 4, "i", 0),
    ("temp_sensor_1", 200, 2, "i", 0),
    ("temp_sensor_2", 202, 2, "i", 0),
    ("thm_temp1_trans_count", 216, 4, "i", 0),
    ("thm_temp2_trans_count", 220, 4, "i", 0),
    ("thm_temp1_total_time", 224, 4, "i", 0),
    ("thm_temp2_total_time", 228, 4, "i", 0),
)
SMART_LOG_BYTES = 512


@dataclass
class SmartLog:
    raw: bytes
    fields: dict

    def __getattr__(self, name):
        try:
            return self.__dict__["fields"][name]
        except KeyError:
            raise AttributeError(name) from None


def build_smart_log(**values):
    return bytes(_build(SMART_FIELDS, values, SMART_LOG_BYTES))


def parse_smart_log(data):
    return SmartLog(bytes(data[:SMART_LOG_BYTES]), _parse(SMART_FIELDS, data))


# Error Information (01h, figure 193): 64-byte entries, newest first; (name, struct format),
# "" for reserved bytes.
ERROR_LOG_ENTRY_BYTES = 64
ERROR_LOG_FIELDS = (("error_count", "Q"), ("sqid", "H"), ("cid", "H"),
                    ("status", "H"),        # status field 15:1, phase tag 0
                    ("param_error_location", "H"), ("lba", "Q"), ("nsid", "I"),
                    ("vs_info", "B"), ("trtype", "B"), ("", "2x"), ("cs_info", "Q"),
                    ("trtype_info", "H"), ("", "22x"))
_ERROR_LOG_ENTRY = struct.Struct("<" + "".join(f for _, f in ERROR_LOG_FIELDS))


@dataclass
class ErrorLogEntry:
    error_count: int = 0        # 0: an empty entry
    sqid: int = 0
    cid: int = 0
    status: int = 0             # status field (15 bits); stored with phase tag 0 in bit 0
    param_error_location: int = 0xFFFF
    lba: int = 0
    nsid: int = 0
    vs_info: int = 0
    trtype: int = 0
    cs_info: int = 0
    trtype_info: int = 0

    _S = _ERROR_LOG_ENTRY

    def pack(self):
        return self._S.pack(self.error_count, self.sqid, self.cid, (self.status & 0x7FFF) << 1,
                            self.param_error_location, self.lba, self.nsid, self.vs_info,
                            self.trtype, self.cs_info, self.trtype_info)

    @classmethod
    def unpack(cls, data):
        v = list(cls._S.unpack(bytes(data[:ERROR_LOG_ENTRY_BYTES])))
        v[3] >>= 1
        return cls(*v)


def build_error_log(entries, n_entries=64):
    """`entries` (ErrorLogEntry, newest first) as a log of `n_entries` entries (ELPE + 1)."""
    out = b"".join(e.pack() for e in entries[:n_entries])
    return out + bytes(ERROR_LOG_ENTRY_BYTES * n_entries - len(out))


def parse_error_log(data):
    """Non-empty entries (error count != 0) of an Error Information log."""
    out = []
    for i in range(0, len(data) - ERROR_LOG_ENTRY_BYTES + 1, ERROR_LOG_ENTRY_BYTES):
        e = ErrorLogEntry.unpack(data[i:i + ERROR_LOG_ENTRY_BYTES])
        if e.error_count:
            out.append(e)
    return out


# Firmware Slot Information (03h, figure 195): AFI at 0, FRS1..7 at 8 + 8 * (n - 1).
def build_fw_slot_log(revisions, active_slot=1):
    buf = bytearray(512)
    buf[0] = active_slot & 7
    for i, rev in enumerate(revisions[:7]):
        _put(buf, 8 + 8 * i, 8, rev)
    return bytes(buf)


def parse_fw_slot_log(data):
    afi = data[0]
    revs = [_get(data, 8 + 8 * i, 8, "s") for i in range(7)]
    return afi & 7, revs


# Dataset Management ranges (figure 365): 16 bytes each.
@dataclass
class DsmRange:
    slba: int
    nlb: int                    # length in logical blocks (1-based, as in the structure)
    attributes: int = 0

    def pack(self):
        return struct.pack("<IIQ", self.attributes, self.nlb, self.slba)


def build_dsm_ranges(ranges):
    return b"".join(r.pack() for r in ranges)


def parse_dsm_ranges(data, nr):
    """`nr` ranges (1-based count) from the range list bytes."""
    out = []
    for i in range(nr):
        attr, nlb, slba = struct.unpack_from("<IIQ", bytes(data), 16 * i)
        out.append(DsmRange(slba, nlb, attr))
    return out


def _check_tables():
    for table, size in ((ID_CTRL_FIELDS, IDENTIFY_BYTES), (ID_NS_FIELDS, IDENTIFY_BYTES),
                        (SMART_FIELDS, SMART_LOG_BYTES)):
        used = set()
        for name, offset, fsize, _, _ in table:
            span = set(range(offset, offset + fsize))
            assert offset + fsize <= size and not span & used, name
            used |= span
    assert {f.name for f in fields(Sqe)} >= {"opcode", "cid", "prp1", "prp2"}
    assert _SQE.size == SQE_BYTES and _CQE.size == CQE_BYTES
    assert _ERROR_LOG_ENTRY.size == ERROR_LOG_ENTRY_BYTES


_check_tables()


# C header ----------------------------------------------------------------------------------------

def _constants(cls):
    """(NAME, value) of a constants class, in definition order."""
    return [(k, v) for k, v in vars(cls).items() if k.isupper()]


def _offsets(fields_):
    """(name, byte offset, size) of a (name, struct format) entry layout."""
    out, offset = [], 0
    for name, fmt in fields_:
        size = struct.calcsize("<" + fmt)
        out.append((name, offset, size))
        offset += size
    return out


def c_header():
    """The C header of these constants (`ssdlab/nvme_spec.h`) for sw/firmware and sw/lib."""
    out = ["/* SPDX-License-Identifier: BSD-2-Clause */",
           "/* NVMe 1.4 opcodes, identifiers, status codes and structure sizes and offsets.",
           " * Generated from spec/nvme.py by `python -m spec.nvme --c-header`; do not edit. */",
           "#ifndef SSDLAB_NVME_SPEC_H", "#define SSDLAB_NVME_SPEC_H", "",
           "#include <stdint.h>", ""]

    def define(name, value):
        out.append(f"#define {name:<40} {value}")

    def group(title, prefix, items, digits=2):
        out.append(f"/* {title} */")
        for name, value in items:
            define(prefix + name, f"0x{value:0{digits}x}u")
        out.append("")

    out.append("/* Sizes (bytes) and fixed values */")
    for name, value in (("SQE_BYTES", SQE_BYTES), ("CQE_BYTES", CQE_BYTES),
                        ("IDENTIFY_BYTES", IDENTIFY_BYTES), ("PAGE_SIZE", PAGE_SIZE),
                        ("SMART_LOG_BYTES", SMART_LOG_BYTES),
                        ("ERROR_LOG_ENTRY_BYTES", ERROR_LOG_ENTRY_BYTES)):
        define("NVME_" + name, f"{value}u")
    define("NVME_VERSION", f"0x{NVME_VERSION:08x}u")
    define("NVME_NSID_ALL", f"0x{NSID_ALL:08x}u")
    out.append("")
    group("Admin command set opcodes (figure 139)", "NVME_ADMIN_", _constants(AdminOpcode))
    group("NVM command set opcodes (figure 346)", "NVME_CMD_", _constants(NvmOpcode))
    group("Feature identifiers (figure 271)", "NVME_FEAT_", _constants(FeatureId))
    group("Log page identifiers (figure 191; C0h vendor specific)", "NVME_LOG_",
          _constants(LogPage))
    group("Identify CNS values (figure 244)", "NVME_ID_CNS_", _constants(Cns))
    group("Asynchronous event types (figure 146)", "NVME_AER_TYPE_", _constants(AerType))
    group("ssdlab fault injection (admin opcode C1h, CDW10; CDW12 = NVME_FAULT_ARM)",
          "NVME_FAULT_", _constants(Fault))
    group("Asynchronous event information, type Error Status (figure 147)", "NVME_AER_ERROR_",
          _constants(AerErrorInfo))
    group("Asynchronous event information, type SMART / Health Status (figure 148)",
          "NVME_AER_SMART_", _constants(AerSmartInfo))
    group("SMART / Health log Critical Warning bits (figure 196)", "NVME_CRIT_",
          _constants(CriticalWarning))

    out.append("/* Status field (CQE DW3 31:17): SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14 */")
    define("NVME_STATUS_SC(s)", "((s) & 0xffu)")
    define("NVME_STATUS_SCT(s)", f"(((s) >> {STATUS_SCT_SHIFT}) & 0x7u)")
    define("NVME_STATUS_CRD(s)", f"(((s) >> {STATUS_CRD_SHIFT}) & 0x3u)")
    define("NVME_STATUS_MORE", f"0x{STATUS_MORE:04x}u")
    define("NVME_STATUS_DNR", f"0x{STATUS_DNR:04x}u")
    define("NVME_STATUS(sct, sc)", f"((uint16_t)(((sct) << {STATUS_SCT_SHIFT}) | (sc)))")
    for name, value in (("GENERIC", SCT_GENERIC), ("COMMAND_SPECIFIC", SCT_COMMAND_SPECIFIC),
                        ("MEDIA", SCT_MEDIA), ("PATH", SCT_PATH), ("VENDOR", SCT_VENDOR)):
        define("NVME_SCT_" + name, f"{value}u")
    out.append("")
    group("Status field values as this controller reports them (DNR set where retrying "
          "cannot help)", "NVME_SC_", _constants(SC), digits=4)
    out.append("/* Names of the status codes (figures 127-130): X(sct, sc, name) for each */")
    names = [f'    X({sct}, 0x{sc:02x}, "{name}")'
             for (sct, sc), (name, _) in sorted(_STATUS_TABLE.items())]
    out += ["#define NVME_STATUS_NAMES(X) \\"] + [n + " \\" for n in names[:-1]]
    out += [names[-1], ""]

    out.append("/* Identify Controller ONCS bits; Dataset Management CDW11 attributes */")
    for name in ("COMPARE", "WRITE_UNCORRECTABLE", "DSM", "WRITE_ZEROES", "SAVE_SELECT",
                 "RESERVATIONS", "TIMESTAMP", "VERIFY"):
        define("NVME_ONCS_" + name, f"0x{globals()['ONCS_' + name]:02x}u")
    for name in ("IDR", "IDW", "AD"):
        define("NVME_DSM_" + name, f"0x{globals()['DSM_' + name]:x}u")
    out.append("")

    for title, prefix, table in (
            ("Submission queue entry", "NVME_SQE_", _offsets(SQE_FIELDS)),
            ("Completion queue entry", "NVME_CQE_", _offsets(CQE_FIELDS)),
            ("Identify Controller (figure 247)", "NVME_ID_CTRL_", ID_CTRL_FIELDS),
            ("Identify Namespace (figure 245)", "NVME_ID_NS_", ID_NS_FIELDS),
            ("SMART / Health Information log page (figure 194)", "NVME_SMART_",
             SMART_FIELDS),
            ("Error Information log page entry (figure 193)", "NVME_ERROR_LOG_",
             _offsets(ERROR_LOG_FIELDS))):
        out.append(f"/* {title}: byte offsets of the fields */")
        for name, offset, *_ in table:
            if name:
                define(f"{prefix}{name.upper()}_OFFSET", f"{offset}u")
        out.append("")
    out += ["#endif /* SSDLAB_NVME_SPEC_H */", ""]
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m spec.nvme", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--c-header", type=Path, metavar="PATH", required=True,
                        help="write the C header (ssdlab/nvme_spec.h)")
    args = parser.parse_args(argv)
    args.c_header.parent.mkdir(parents=True, exist_ok=True)
    args.c_header.write_text(c_header())


if __name__ == "__main__":
    main()
