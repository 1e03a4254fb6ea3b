# SPDX-License-Identifier: BSD-2-Clause
"""The NVMe compliance cases: one table of commands and what the NVMe 1.4 specification
says a controller of this project answers, run by both compliance suites:

- tests/nvme/nvme_controller/test_nvme_compliance.py (`test_table`): the RTL front end with
  the Python firmware model (sim/nvme/nvme_fw_model.py) and a RAM back end, in cocotb;
- tests/system/drive/test_compliance.py (`test_table_*`): the simulated drive with the
  shipped C firmware (sw/firmware) and the FTL, through libssdlab.

So the Python model and the C firmware are held equal by the same expectations: a
disagreement fails one of the two suites.

A case is one command: an SQE (spec/nvme.py), the queue it goes to (0 admin, 1 the first I/O
queue), an optional data transfer laid out by `layout` (PRP1 offset, PRP2, a PRP list at an
offset, chained lists, malformed entries: the same host memory picture on both benches), the
expected status (the whole status field: SCT, SC and DNR) and optional checks of DW0 and of
the data read. Where controllers legitimately differ (queue counts, MQES, MDTS, namespace
size, whether Format NVM or a write cache exists), the expectation is derived from `Facts`:
what the controller itself reports in CAP, Identify and Number of Queues (the `PROBES`).

State the table assumes and leaves: the controller enabled, Number of Queues granted G >= 2
and I/O queue pairs 1..G created by the host (SQ q on CQ q), queue 1 free for I/O. The table
deletes queue pair G and builds it again in memory of its own, then deletes it: the runner
resets the controller afterwards (or ends the test). Features are set back to their defaults.
LBAs used: the last 2048 of the namespace.

A runner provides: contiguous host memory (alloc / write / read) and "submit this SQE on
queue q, give me (status, dw0, cid)". It calls `plan` for each case, writes the pokes,
executes, reads the spans, and collects `verify`'s problems; it fails with all of them
listed (case name and NVMe section), so one run shows every disagreement.
"""

import random
import struct
from dataclasses import dataclass, field

from spec import nvme as ns
from spec.nvme import SC, AdminOpcode, Cns, FeatureId, LogPage, NvmOpcode, Sqe

PAGE = ns.PAGE_SIZE

__all__ = ["Case", "Facts", "PROBES", "Result", "Xfer", "cases", "groups", "plan", "verify"]


# Data transfers ----------------------------------------------------------------------------------

@dataclass
class Xfer:
    """A data buffer described by PRPs in `pages()` contiguous pages of host memory.

    nbytes:      transfer length (> 0);
    offset:      PRP1's offset in its page (a dword multiple unless testing a bad one);
    list_offset: the PRP list's offset in its page (a qword multiple unless testing);
    bad:         None, "entry" (list entry 1 gets offset 200h), "prp2" (PRP2, a data
                 pointer, gets offset 80h);
    data:        bytes the host writes into the buffer first (to the controller);
    Data pages are placed in descending addresses (the controller must follow the PRPs, not
    assume a run); lists chain through a page's last entry when they do not fit."""
    nbytes: int
    offset: int = 0
    list_offset: int = 0
    bad: str = None
    data: bytes = None

    def n_data_pages(self):
        return 1 + max(0, -(-(self.nbytes - (PAGE - self.offset)) // PAGE))

    def list_entries(self):
        return self.n_data_pages() - 1 if self.n_data_pages() > 2 else 0

    def n_list_pages(self):
        n, room, pages = self.list_entries(), (PAGE - self.list_offset) // 8, 0
        while n > 0:
            pages += 1
            if n <= room:
                break
            n -= room - 1
            room = PAGE // 8
        return pages

    def pages(self):
        return self.n_data_pages() + self.n_list_pages()

    def lay(self, base):
        """(prp1, prp2, pokes [(addr, bytes)], spans [(addr, n)] in transfer order) for the
        memory at `base` (page aligned, `pages()` pages)."""
        nd = self.n_data_pages()
        data_page = [base + PAGE * (nd - 1 - i) for i in range(nd)]     # descending
        spans, left = [], self.nbytes
        for i, p in enumerate(data_page):
            a = p + (self.offset if i == 0 else 0)
            n = min(left, PAGE - (self.offset if i == 0 else 0))
            spans.append((a, n))
            left -= n
        prp1, prp2, pokes = spans[0][0], 0, []
        if nd == 2:
            prp2 = data_page[1] + (0x80 if self.bad == "prp2" else 0)
        elif nd > 2:
            entries = list(data_page[1:])
            if self.bad == "entry":
                entries[1] += 0x200
            lp = base + PAGE * nd
            prp2 = lp + self.list_offset
            addr, room = prp2, (PAGE - self.list_offset) // 8
            while entries:
                if len(entries) <= room:
                    pokes.append((addr, struct.pack(f"<{len(entries)}Q", *entries)))
                    break
                lp += PAGE
                chunk, entries = entries[:room - 1], entries[room - 1:]
                pokes.append((addr, struct.pack(f"<{room}Q", *chunk, lp)))
                addr, room = lp, PAGE // 8
        if self.data is not None:
            pos = 0
            for a, n in spans:
                pokes.append((a, self.data[pos:pos + n]))
                pos += n
        return prp1, prp2, pokes, spans


# Cases -------------------------------------------------------------------------------------------

@dataclass
class Result:
    status: int             # the status field (15 bits: DNR 14, More 13, CRD, SCT, SC)
    dw0: int
    cid: int
    data: bytes = b""


@dataclass
class Case:
    """One command and its expected answer.

    name:   group.what (unique); group: the suites' group (identify, features, ...);
    sqe:    the command (CID and, with `xfer` or `mem`, PRPs filled by the runner);
    qid:    0 admin, 1 I/O queue 1;
    xfer:   an Xfer (data in or out), or None;
    mem:    pages of zeroed host memory for a queue the command creates (PRP1 = its base),
            or a PRP list page built by `mem_list` (PC=0 queues);
    status: the expected status field; dw0: expected DW0 (None: not checked);
    check:  f(data, facts, ctx) -> list of problems (ctx: the runner's `last` Result);
    cite:   NVMe 1.4 section."""
    name: str
    sqe: Sqe
    status: int = SC.SUCCESS
    qid: int = 0
    xfer: Xfer = None
    mem: int = 0
    mem_list: tuple = None
    dw0: int = None
    check: object = None
    cite: str = ""

    @property
    def group(self):
        return self.name.split(".")[0]


def plan(case, base):
    """(sqe, pokes, spans) for `case` with its memory at `base` (page aligned, case.pages()
    pages): the SQE gets its PRPs; the runner writes `pokes` (zeroing the memory first) and
    reads `spans` after the command."""
    sqe = Sqe(**{k: getattr(case.sqe, k) for k in case.sqe.__dataclass_fields__})
    pokes, spans = [], []
    if case.xfer is not None:
        sqe.prp1, sqe.prp2, pokes, spans = case.xfer.lay(base)
    elif case.mem:
        sqe.prp1 = base + (PAGE * len(case.mem_list) if case.mem_list else 0)
        if case.mem_list:       # PC=0: PRP1 is the list, at the end; the queue pages before
            entries = [base + PAGE * i + off for i, off in enumerate(case.mem_list)]
            pokes.append((sqe.prp1, struct.pack(f"<{len(entries)}Q", *entries)))
    return sqe, pokes, spans


def pages(case):
    if case.xfer is not None:
        return case.xfer.pages()
    return case.mem + (1 if case.mem_list else 0) if case.mem else 0


Case.pages = pages


def verify(case, res, facts, ctx):
    """Problems (strings) of result `res` against `case`."""
    out = []
    where = f"{case.name} ({case.cite})" if case.cite else case.name
    if res.status != case.status:
        out.append(f"{where}: status {ns.status_name(res.status)} ({res.status:#06x}), "
                   f"expected {ns.status_name(case.status)} ({case.status:#06x})")
        return out
    if case.dw0 is not None and res.dw0 != case.dw0:
        out.append(f"{where}: DW0 {res.dw0:#010x}, expected {case.dw0:#010x}")
    if case.check is not None:
        out += [f"{where}: {p}" for p in case.check(res.data, facts, ctx) or []]
    return out


# What the controller reports ---------------------------------------------------------------------

PROBES = [
    Case("probe.id_ctrl", ns.sqe_identify(Cns.CONTROLLER), xfer=Xfer(4096)),
    Case("probe.id_ns", ns.sqe_identify(Cns.NAMESPACE, nsid=1), xfer=Xfer(4096)),
    Case("probe.nq", ns.sqe_get_features(FeatureId.NUMBER_OF_QUEUES)),
    Case("probe.nq_default", ns.sqe_get_features(FeatureId.NUMBER_OF_QUEUES, sel=1)),
]


@dataclass
class Facts:
    """What the controller says about itself (CAP and the PROBES' results)."""
    mqes: int               # CAP.MQES (0's based)
    id_ctrl: object         # ns.IdentifyController
    id_ns: object           # ns.IdentifyNamespace
    nq: int                 # I/O queues granted (NSQA + 1; NCQA assumed equal)
    nq_max: int             # Number of Queues' default (SEL 001b): the controller's maximum
    nsze: int = 0
    lba: int = 512
    max_transfer: int = 0
    extra: dict = field(default_factory=dict)

    @classmethod
    def from_probes(cls, cap, results):
        c = ns.parse_identify_controller(results["probe.id_ctrl"].data)
        n = ns.parse_identify_namespace(results["probe.id_ns"].data)
        nq, nqd = results["probe.nq"].dw0, results["probe.nq_default"].dw0
        return cls(mqes=cap & 0xFFFF, id_ctrl=c, id_ns=n, nq=(nq & 0xFFFF) + 1,
                   nq_max=(nqd & 0xFFFF) + 1, nsze=n.nsze, lba=1 << n.lbaf0_lbads,
                   max_transfer=PAGE << c.mdts if c.mdts else 1 << 20)

    @property
    def n_vectors(self):
        """Interrupt vectors: admin + one per I/O queue the controller supports."""
        return self.nq_max + 1


# The table ---------------------------------------------------------------------------------------

def _pattern(tag, n):
    return random.Random(f"nvme-compliance-{tag}").randbytes(n)


def _printable(name, raw):
    if not raw.strip(b" \0"):
        return [f"{name} empty"]
    if not all(0x20 <= b < 0x7F for b in raw):
        return [f"{name} not printable ASCII: {raw!r}"]
    return []


def _expect(what, got, want):
    return [] if got == want else [f"{what} = {got!r}, expected {want!r}"]


def _check_id_ctrl(data, f, ctx):
    c = ns.parse_identify_controller(data)
    out = []
    for name, want in (("ver", ns.NVME_VERSION), ("cntrltype", 1), ("sqes", 0x66),
                       ("cqes", 0x44), ("nn", 1), ("acl", 3), ("aerl", 3), ("elpe", 63),
                       ("npss", 0), ("frmw", 0x03), ("lpa", 0x04), ("wctemp", 343),
                       ("cctemp", 353), ("nvscc", 1), ("fuses", 0), ("sgls", 0),
                       ("oncs", ns.ONCS_DSM | ns.ONCS_WRITE_ZEROES)):
        out += _expect(name.upper(), getattr(c, name), want)
    out += _printable("SN", data[4:24]) + _printable("MN", data[24:64])
    out += _printable("FR", data[64:72])
    if c.vid in (0, 0xFFFF):
        out.append(f"VID {c.vid:#06x}")
    if not 1 <= c.mdts <= 9:
        out.append(f"MDTS {c.mdts}: a finite transfer limit of 4 KiB .. 2 MiB expected")
    if c.oacs & ~0x0002:
        out.append(f"OACS {c.oacs:#x}: only Format NVM (bit 1) may be supported")
    if c.vwc & ~1:
        out.append(f"VWC {c.vwc:#x}: bits 2:1 (flush of all namespaces) not indicated here")
    return out


def _check_id_ns(data, f, ctx):
    n = ns.parse_identify_namespace(data)
    out = _expect("NCAP", n.ncap, n.nsze) + _expect("NLBAF", n.nlbaf, 0)
    out += _expect("FLBAS", n.flbas, 0) + _expect("LBAF0.MS", n.lbaf0_ms, 0)
    if not n.nsze or n.nuse > n.ncap:
        out.append(f"NSZE {n.nsze}, NUSE {n.nuse}, NCAP {n.ncap}")
    if n.lbaf0_lbads < 9:
        out.append(f"LBADS {n.lbaf0_lbads}")
    if n.dlfeat & 7 != 1:
        out.append(f"DLFEAT {n.dlfeat:#x}: deallocated blocks read as zeroes (001b)")
    if not any(n.eui64) and not any(n.nguid):
        out.append("neither EUI64 nor NGUID set (7.11: a globally unique identifier)")
    return out


def _check_ns_list(want):
    def check(data, f, ctx):
        return _expect("active namespace list", ns.parse_active_ns_list(data), want)
    return check


def _check_ns_desc(data, f, ctx):
    """CNS 03h (5.15.2.4, mandatory for 1.3 and later): descriptors NIDT/NIDL/NID, the
    EUI-64 equal to Identify Namespace's."""
    out, pos, found = [], 0, {}
    while pos + 4 <= len(data) and data[pos]:
        nidt, nidl = data[pos], data[pos + 1]
        if {1: 8, 2: 16, 3: 16}.get(nidt) != nidl:
            out.append(f"descriptor at {pos}: NIDT {nidt} with NIDL {nidl}")
            break
        found[nidt] = data[pos + 4:pos + 4 + nidl]
        pos += 4 + nidl
    if not found:
        out.append(f"no descriptor: {data[:8].hex()}")
    if 1 in found and found[1] != f.id_ns.eui64:
        out.append(f"EUI-64 {found[1].hex()} != Identify Namespace EUI64 "
                   f"{f.id_ns.eui64.hex()}")
    return out


def _check_error_top(status, sqid=0, nsid=None, same_cid=True):
    """The newest Error Information entry names the previous case's command."""
    def check(data, f, ctx):
        top = ns.parse_error_log(data)
        if not top:
            return ["error log empty"]
        e, out = top[0], []
        out += _expect("entry status", e.status, status) + _expect("entry SQID", e.sqid, sqid)
        if same_cid and ctx.get("prev") is not None:
            out += _expect("entry CID", e.cid, ctx["prev"].cid)
        if nsid is not None:
            out += _expect("entry NSID", e.nsid, nsid)
        if len(top) > 1 and top[1].error_count >= e.error_count:
            out.append(f"entries not newest first: {top[0].error_count}, "
                       f"{top[1].error_count}")
        return out
    return check


def _check_smart(data, f, ctx):
    s = ns.parse_smart_log(data)
    out = _expect("critical warning", s.critical_warning, 0)
    if not 200 < s.composite_temperature < 400:
        out.append(f"composite temperature {s.composite_temperature} K")
    if s.available_spare < s.available_spare_threshold or s.available_spare > 100:
        out.append(f"available spare {s.available_spare} (threshold "
                   f"{s.available_spare_threshold})")
    if s.num_err_log_entries < 1:
        out.append("no error log entries counted after failed commands")
    if s.host_write_commands < 1 or s.host_read_commands < 1 or s.data_units_written < 1:
        out.append(f"I/O not counted: {s.fields}")
    if s.power_cycles < 1:
        out.append(f"power cycles {s.power_cycles}")
    return out


def _check_fw_slot(data, f, ctx):
    afi, revs = ns.parse_fw_slot_log(data)
    out = _expect("AFI", afi & 7, 1)
    out += _expect("slot 1 revision", data[8:16], f.id_ctrl.raw[64:72])
    return out


def _check_same(tag, lo, hi):
    """Bytes lo..hi of the page read by case `tag` (a whole page read earlier)."""
    def check(data, f, ctx):
        whole = ctx["results"][tag].data
        return [] if data == whole[lo:hi] else [f"bytes {lo}..{hi} differ from {tag}'s"]
    return check


def _check_data(want):
    def check(data, f, ctx):
        if data == want:
            return []
        bad = next(i for i in range(len(want)) if data[i:i + 1] != want[i:i + 1])
        return [f"data differs from byte {bad} (of {len(want)})"]
    return check


def _check_dw0_bit0(want):
    def check(data, f, ctx):
        return _expect("DW0 bit 0", ctx["res"].dw0 & 1, want)
    return check


def _sqe(opcode, nsid=0, **kw):
    return Sqe(opcode=opcode, nsid=nsid, **kw)


def _identify(f):
    I = Cns
    return [
        Case("identify.controller", ns.sqe_identify(I.CONTROLLER), xfer=Xfer(4096),
             check=_check_id_ctrl, cite="5.15.2.2"),
        # a dword offset spilling into PRP2: the structure is the same
        Case("identify.controller_prp_offset", ns.sqe_identify(I.CONTROLLER),
             xfer=Xfer(4096, offset=1024),
             check=lambda d, f, c: _expect("bytes", d, c["results"]["identify.controller"]
                                           .data), cite="4.3"),
        Case("identify.namespace", ns.sqe_identify(I.NAMESPACE, nsid=1), xfer=Xfer(4096),
             check=_check_id_ns, cite="5.15.2.1"),
        Case("identify.active_ns_list_0", ns.sqe_identify(I.ACTIVE_NS_LIST, nsid=0),
             xfer=Xfer(4096), check=_check_ns_list([1]), cite="5.15.2.3"),
        Case("identify.active_ns_list_1", ns.sqe_identify(I.ACTIVE_NS_LIST, nsid=1),
             xfer=Xfer(4096), check=_check_ns_list([]), cite="5.15.2.3"),
        Case("identify.ns_descriptors", ns.sqe_identify(I.NS_DESCRIPTOR_LIST, nsid=1),
             xfer=Xfer(4096), check=_check_ns_desc, cite="5.15.2.4"),
    ] + [
        Case(f"identify.namespace_nsid_{nsid:x}", ns.sqe_identify(I.NAMESPACE, nsid=nsid),
             status=SC.INVALID_NAMESPACE, xfer=Xfer(4096), cite="5.15.2.1")
        for nsid in (0, 2, 0xFFFFFFFF)
    ] + [
        Case(f"identify.ns_descriptors_nsid_{nsid:x}",
             ns.sqe_identify(I.NS_DESCRIPTOR_LIST, nsid=nsid), status=SC.INVALID_NAMESPACE,
             xfer=Xfer(4096), cite="5.15.2.4")
        for nsid in (0, 2)
    ] + [
        Case(f"identify.active_ns_list_nsid_{nsid:x}",
             ns.sqe_identify(I.ACTIVE_NS_LIST, nsid=nsid), status=SC.INVALID_NAMESPACE,
             xfer=Xfer(4096), cite="5.15.2.3")
        for nsid in (0xFFFFFFFE, 0xFFFFFFFF)
    ] + [
        Case(f"identify.cns_{cns:02x}", ns.sqe_identify(cns), status=SC.INVALID_FIELD,
             xfer=Xfer(4096), cite="5.15.1")
        for cns in (0x04, 0x7E, 0xFF)
    ]


def _features(f):
    F = FeatureId
    g = ns.sqe_get_features
    s = ns.sqe_set_features
    nqv = (f.nq - 1) | (f.nq - 1) << 16
    nqd = (f.nq_max - 1) | (f.nq_max - 1) << 16
    vwc = bool(f.id_ctrl.vwc & 1)
    iv = min(2, f.n_vectors - 1)
    out = [
        Case("features.nq_current", g(F.NUMBER_OF_QUEUES), dw0=nqv, cite="5.21.1.7"),
        Case("features.nq_default", g(F.NUMBER_OF_QUEUES, sel=1), dw0=nqd, cite="5.21.1.7"),
        Case("features.nq_saved", g(F.NUMBER_OF_QUEUES, sel=2), dw0=nqd, cite="5.9.1"),
        Case("features.nq_after_queues", s(F.NUMBER_OF_QUEUES, 0),
             status=SC.COMMAND_SEQUENCE_ERROR, cite="5.21.1.7"),
        Case("features.nq_ffff", s(F.NUMBER_OF_QUEUES, 0xFFFF),
             status=SC.INVALID_FIELD, cite="5.21.1.7"),
        Case("features.nq_unchanged", g(F.NUMBER_OF_QUEUES), dw0=nqv, cite="5.21.1.7"),
        Case("features.arb_set", s(F.ARBITRATION, 0x03020103), cite="5.21.1.1"),
        Case("features.arb_get", g(F.ARBITRATION), dw0=0x03020103, cite="5.21.1.1"),
        Case("features.arb_default", g(F.ARBITRATION, sel=1), dw0=0, cite="5.9.1"),
        Case("features.arb_saved", g(F.ARBITRATION, sel=2), dw0=0, cite="5.9.1"),
        Case("features.arb_caps", g(F.ARBITRATION, sel=3), dw0=0b100, cite="5.9.1"),
        Case("features.arb_save", s(F.ARBITRATION, 0, save=True),
             status=SC.FEATURE_NOT_SAVEABLE, cite="5.21"),
        Case("features.arb_nsid_1", s(F.ARBITRATION, 0, nsid=1),
             status=SC.FEATURE_NOT_NS_SPECIFIC, cite="5.21"),
        Case("features.arb_restore", s(F.ARBITRATION, 0), cite="5.21.1.1"),
        Case("features.arb_restored", g(F.ARBITRATION), dw0=0, cite="5.21.1.1"),
        Case("features.pm_get", g(F.POWER_MANAGEMENT), dw0=0, cite="5.21.1.2"),
        Case("features.pm_ps1", s(F.POWER_MANAGEMENT, 1), status=SC.INVALID_FIELD,
             cite="5.21.1.2 (NPSS 0)"),
        Case("features.pm_ps0", s(F.POWER_MANAGEMENT, 0), cite="5.21.1.2"),
        Case("features.temp_over", g(F.TEMPERATURE_THRESHOLD), dw0=f.id_ctrl.wctemp,
             cite="5.21.1.4 (default WCTEMP)"),
        Case("features.temp_under", g(F.TEMPERATURE_THRESHOLD, cdw11=1 << 20),
             dw0=1 << 20, cite="5.21.1.4"),
        Case("features.temp_set", s(F.TEMPERATURE_THRESHOLD, 350), cite="5.21.1.4"),
        Case("features.temp_get", g(F.TEMPERATURE_THRESHOLD), dw0=350, cite="5.21.1.4"),
        Case("features.temp_restore", s(F.TEMPERATURE_THRESHOLD, f.id_ctrl.wctemp),
             cite="5.21.1.4"),
        Case("features.temp_thsel_2", g(F.TEMPERATURE_THRESHOLD, cdw11=2 << 20),
             status=SC.INVALID_FIELD, cite="5.21.1.4"),
        Case("features.temp_sensor_1", s(F.TEMPERATURE_THRESHOLD, 350 | 1 << 16),
             status=SC.INVALID_FIELD, cite="5.21.1.4 (no sensor 1)"),
        Case("features.coal_set", s(F.INTERRUPT_COALESCING, 0x0A03), cite="5.21.1.8"),
        Case("features.coal_get", g(F.INTERRUPT_COALESCING), dw0=0x0A03, cite="5.21.1.8"),
        Case("features.coal_restore", s(F.INTERRUPT_COALESCING, 0), cite="5.21.1.8"),
        Case("features.ivc_set", s(F.INTERRUPT_VECTOR_CONFIG, iv | 1 << 16),
             cite="5.21.1.9"),
        Case("features.ivc_get", g(F.INTERRUPT_VECTOR_CONFIG, cdw11=iv), dw0=iv | 1 << 16,
             cite="5.21.1.9"),
        Case("features.ivc_get_1", g(F.INTERRUPT_VECTOR_CONFIG, cdw11=1), dw0=1,
             cite="5.21.1.9"),
        Case("features.ivc_restore", s(F.INTERRUPT_VECTOR_CONFIG, iv), cite="5.21.1.9"),
        Case("features.ivc_set_beyond", s(F.INTERRUPT_VECTOR_CONFIG, f.n_vectors),
             status=SC.INVALID_FIELD, cite="5.21.1.9"),
        Case("features.ivc_get_beyond", g(F.INTERRUPT_VECTOR_CONFIG, cdw11=f.n_vectors),
             status=SC.INVALID_FIELD, cite="5.21.1.9"),
        Case("features.aec_set", s(F.ASYNC_EVENT_CONFIG, 0x1FF), cite="5.21.1.11"),
        Case("features.aec_get", g(F.ASYNC_EVENT_CONFIG), dw0=0x1FF, cite="5.21.1.11"),
        Case("features.aec_restore", s(F.ASYNC_EVENT_CONFIG, 0), cite="5.21.1.11"),
        Case("features.sel_4", g(F.ARBITRATION, sel=4), status=SC.INVALID_FIELD,
             cite="5.9.1 (SEL reserved)"),
        # Volatile Write Cache: only where Identify says there is one (5.21.1.6)
        Case("features.vwc_get", g(F.VOLATILE_WRITE_CACHE),
             status=SC.SUCCESS if vwc else SC.INVALID_FIELD, dw0=1 if vwc else None,
             cite="5.21.1.6"),
        Case("features.vwc_set", s(F.VOLATILE_WRITE_CACHE, 1),
             status=SC.SUCCESS if vwc else SC.INVALID_FIELD, cite="5.21.1.6"),
    ]
    for fid in (0x00, 0x05, 0x0F, 0x7F, 0xC0):
        out += [Case(f"features.get_fid_{fid:02x}", g(fid), status=SC.INVALID_FIELD,
                     cite="5.9"),
                Case(f"features.set_fid_{fid:02x}", s(fid, 0), status=SC.INVALID_FIELD,
                     cite="5.21")]
    return out


def _log(f):
    L = LogPage
    gl = ns.sqe_get_log_page
    io = _pattern("log-io", 4096)
    at = f.nsze - 2048 + 1024
    return [
        # I/O to count and an error to log first (the group runs alone too)
        Case("log.io_write", ns.sqe_write(at, 8), qid=1, xfer=Xfer(4096, data=io),
             cite="6.15"),
        Case("log.io_read", ns.sqe_read(at, 8), qid=1, xfer=Xfer(4096),
             check=_check_data(io), cite="6.9"),
        Case("log.make_error", ns.sqe_get_features(0x7F), status=SC.INVALID_FIELD,
             cite="5.9"),
        Case("log.error_top", gl(L.ERROR_INFORMATION, 256), xfer=Xfer(256),
             check=_check_error_top(SC.INVALID_FIELD, nsid=0), cite="5.14.1.1"),
        Case("log.error_whole", gl(L.ERROR_INFORMATION, 64 * (f.id_ctrl.elpe + 1)),
             xfer=Xfer(64 * (f.id_ctrl.elpe + 1)), cite="5.14.1.1 (ELPE + 1 entries)"),
        Case("log.smart", gl(L.SMART_HEALTH, 512), xfer=Xfer(512), check=_check_smart,
             cite="5.14.1.2"),
        Case("log.smart_nsid_1", gl(L.SMART_HEALTH, 512, nsid=1), xfer=Xfer(512),
             cite="5.14.1.2"),
        Case("log.smart_offset", gl(L.SMART_HEALTH, 28, offset=4), xfer=Xfer(28),
             check=_check_same("log.smart", 4, 32), cite="5.14 (LPA bit 2: offset)"),
        Case("log.fw_slot", gl(L.FIRMWARE_SLOT, 512), xfer=Xfer(512), check=_check_fw_slot,
             cite="5.14.1.3"),
        Case("log.offset_past_page", gl(L.SMART_HEALTH, 64, offset=4096), xfer=Xfer(64),
             status=SC.INVALID_FIELD, cite="5.14"),
        Case("log.offset_unaligned", gl(L.SMART_HEALTH, 64, offset=2), xfer=Xfer(64),
             status=SC.INVALID_FIELD, cite="5.14"),
        Case("log.above_mdts", gl(L.ERROR_INFORMATION, f.max_transfer + 4), xfer=Xfer(4),
             status=SC.INVALID_FIELD, cite="5.14 (above MDTS)"),
        Case("log.nsid_7", gl(L.SMART_HEALTH, 512, nsid=7), xfer=Xfer(512),
             status=SC.INVALID_NAMESPACE, cite="5.14"),
        Case("log.error_of_nsid_7", gl(L.ERROR_INFORMATION, 64), xfer=Xfer(64),
             check=_check_error_top(SC.INVALID_NAMESPACE, nsid=7), cite="5.14.1.1"),
    ] + [
        Case(f"log.lid_{lid:02x}", gl(lid, 512), xfer=Xfer(512), status=SC.INVALID_LOG_PAGE,
             cite="5.14")
        for lid in (0x00, 0x07, 0x7E, 0x7F, 0xBF)
    ]


def _queue(f):
    G = f.nq
    q = G                                   # the pair the table takes down and rebuilds
    big = f.mqes + 1
    cq = ns.sqe_create_io_cq
    sq = ns.sqe_create_io_sq
    out = [
        Case("queue.cq_qid_0", cq(0, 15, 0), status=SC.INVALID_QID, mem=1, cite="5.3"),
        Case("queue.cq_above_granted", cq(G + 1, 15, 0), status=SC.INVALID_QID, mem=1,
             cite="5.3"),
        Case("queue.cq_existing", cq(1, 15, 0), status=SC.INVALID_QID, mem=1, cite="5.3"),
        Case("queue.sq_qid_0", sq(0, 15, 0, cqid=1), status=SC.INVALID_QID, mem=1,
             cite="5.4"),
        Case("queue.sq_above_granted", sq(G + 1, 15, 0, cqid=1), status=SC.INVALID_QID,
             mem=1, cite="5.4"),
        Case("queue.sq_existing", sq(1, 15, 0, cqid=1), status=SC.INVALID_QID, mem=1,
             cite="5.4"),
        Case("queue.delete_cq_with_sq", ns.sqe_delete_io_cq(1),
             status=SC.INVALID_QUEUE_DELETION, cite="5.5"),
        Case("queue.delete_sq_0", ns.sqe_delete_io_sq(0), status=SC.INVALID_QID, cite="5.6"),
        Case("queue.delete_cq_0", ns.sqe_delete_io_cq(0), status=SC.INVALID_QID, cite="5.5"),
        Case("queue.delete_sq_missing", ns.sqe_delete_io_sq(G + 1), status=SC.INVALID_QID,
             cite="5.6"),
        Case("queue.delete_cq_missing", ns.sqe_delete_io_cq(G + 1), status=SC.INVALID_QID,
             cite="5.5"),
        Case("queue.delete_sq_q", ns.sqe_delete_io_sq(q), cite="5.6"),
        Case("queue.delete_cq_q", ns.sqe_delete_io_cq(q), cite="5.5"),
        Case("queue.delete_sq_q_again", ns.sqe_delete_io_sq(q), status=SC.INVALID_QID,
             cite="5.6"),
        Case("queue.delete_cq_q_again", ns.sqe_delete_io_cq(q), status=SC.INVALID_QID,
             cite="5.5"),
        Case("queue.cq_qsize_0", cq(q, 0, 0), status=SC.INVALID_QUEUE_SIZE, mem=1,
             cite="5.3"),
    ]
    if big <= 0xFFFF:
        out.append(Case("queue.cq_above_mqes", cq(q, big, 0), status=SC.INVALID_QUEUE_SIZE,
                        mem=1, cite="5.3 (CAP.MQES)"))
        out.append(Case("queue.sq_above_mqes", sq(q, big, 0, cqid=1),
                        status=SC.INVALID_QUEUE_SIZE, mem=1, cite="5.4 (CAP.MQES)"))
    out += [
        Case("queue.cq_iv_beyond", cq(q, 15, 0, iv=f.n_vectors),
             status=SC.INVALID_INTERRUPT_VECTOR, mem=1, cite="5.3"),
        Case("queue.cq_prp1_offset", cq(q, 15, 0x10), status=SC.PRP_OFFSET_INVALID,
             cite="5.3 (PC=1: PRP1 page aligned)"),
        Case("queue.sq_qsize_0", sq(q, 0, 0, cqid=1), status=SC.INVALID_QUEUE_SIZE, mem=1,
             cite="5.4"),
        Case("queue.sq_cqid_0", sq(q, 15, 0, cqid=0), status=SC.CQ_INVALID, mem=1,
             cite="5.4"),
        Case("queue.sq_cq_missing", sq(q, 15, 0, cqid=q), status=SC.CQ_INVALID, mem=1,
             cite="5.4"),
        # PC=0 (CAP.CQR=0): a PRP list with an entry at an offset, then a good one
        Case("queue.cq_list_entry_offset", cq(q, 255, 0, iv=1, pc=False),
             status=SC.PRP_OFFSET_INVALID, mem=1, mem_list=(0x100,),
             cite="5.3 (PC=0: list entries page aligned)"),
        Case("queue.cq_list", cq(q, 511, 0, iv=1, pc=False), mem=2, mem_list=(0, 0),
             cite="5.3 (PC=0)"),
        Case("queue.cq_created_again", cq(q, 15, 0), status=SC.INVALID_QID, mem=1,
             cite="5.3"),
        Case("queue.sq_list", sq(q, 127, 0, cqid=q, pc=False), mem=2, mem_list=(0, 0),
             cite="5.4 (PC=0)"),
        Case("queue.sq_created_again", sq(q, 15, 0, cqid=q), status=SC.INVALID_QID, mem=1,
             cite="5.4"),
        Case("queue.delete_cq_in_use", ns.sqe_delete_io_cq(q),
             status=SC.INVALID_QUEUE_DELETION, cite="5.5"),
        Case("queue.delete_sq_list", ns.sqe_delete_io_sq(q), cite="5.6"),
        Case("queue.delete_cq_list", ns.sqe_delete_io_cq(q), cite="5.5"),
        # contiguous, two SQs on one CQ
        Case("queue.cq_contiguous", cq(q, 15, 0, iv=1), mem=1, cite="5.3"),
        Case("queue.sq_contiguous", sq(q, 15, 0, cqid=q), mem=1, cite="5.4"),
        Case("queue.delete_sq_contiguous", ns.sqe_delete_io_sq(q), cite="5.6"),
        Case("queue.delete_cq_contiguous", ns.sqe_delete_io_cq(q), cite="5.5"),
    ]
    return out


def _nvm(f):
    """On I/O queue 1, at the namespace's last 2048 LBAs."""
    lba, base = f.lba, f.nsze - 2048
    mx = f.max_transfer // lba
    rd, wr = ns.sqe_read, ns.sqe_write
    out = []
    # PRP forms (4.3): written with one form, read back with another
    forms = [(512, dict(offset=4), dict()), (4096, dict(offset=2048), dict(offset=8)),
             (4096, dict(offset=4092), dict()), (8192, dict(), dict(offset=512)),
             (16384, dict(offset=100, list_offset=8), dict()),
             (20480, dict(list_offset=PAGE - 16), dict(offset=4, list_offset=4088)),
             (f.max_transfer, dict(list_offset=PAGE - 16, offset=4), dict()),
             (f.max_transfer, dict(), dict(list_offset=4000))]
    slba, at, written = base, [], []
    for k, (n, wform, rform) in enumerate(forms):
        data = _pattern(f"prp{k}", n)
        at.append(slba)
        written.append(data)
        nlb = n // lba
        out += [Case(f"nvm.write_prp_{k}", wr(slba, nlb), qid=1,
                     xfer=Xfer(n, data=data, **wform), cite=f"6.15, 4.3 {wform}"),
                Case(f"nvm.read_prp_{k}", rd(slba, nlb), qid=1, xfer=Xfer(n, **rform),
                     check=_check_data(data), cite=f"6.9, 4.3 {rform}")]
        slba += nlb
    last = _pattern("last", lba)
    zeroes = bytes(8 * lba)
    dsm = struct.pack("<IIQ", 0, 8, base + 8) + struct.pack("<IIQ", 0, 8, base + 24)
    out += [
        Case("nvm.write_last_lba", wr(f.nsze - 1, 1), qid=1, xfer=Xfer(lba, data=last),
             cite="6.15"),
        Case("nvm.read_last_lba", rd(f.nsze - 1, 1), qid=1, xfer=Xfer(lba),
             check=_check_data(last), cite="6.9"),
        Case("nvm.flush", ns.sqe_flush(), qid=1, cite="6.8"),
        Case("nvm.flush_all", ns.sqe_flush(nsid=ns.NSID_ALL), qid=1, cite="6.8"),
        Case("nvm.write_zeroes", ns.sqe_write_zeroes(base, 8), qid=1, cite="6.16"),
        Case("nvm.read_zeroes", rd(base, 8), qid=1, xfer=Xfer(8 * lba),
             check=_check_data(zeroes), cite="6.16"),
        Case("nvm.dsm_deallocate", ns.sqe_dataset_management(2), qid=1,
             xfer=Xfer(32, data=dsm), cite="6.7"),
        Case("nvm.read_deallocated", rd(base + 24, 8), qid=1, xfer=Xfer(8 * lba),
             check=_check_data(zeroes), cite="6.7 (DLFEAT 001b)"),
        # errors
        Case("nvm.read_past_end", rd(f.nsze - 1, 2), qid=1, xfer=Xfer(2 * lba),
             status=SC.LBA_OUT_OF_RANGE, cite="6.9"),
        Case("nvm.write_at_nsze", wr(f.nsze, 1), qid=1, xfer=Xfer(lba, data=bytes(lba)),
             status=SC.LBA_OUT_OF_RANGE, cite="6.15"),
        Case("nvm.read_2_40", rd(1 << 40, 1), qid=1, xfer=Xfer(lba),
             status=SC.LBA_OUT_OF_RANGE, cite="6.9"),
        Case("nvm.write_zeroes_past_end", ns.sqe_write_zeroes(f.nsze - 4, 8), qid=1,
             status=SC.LBA_OUT_OF_RANGE, cite="6.16"),
        Case("nvm.dsm_past_end", ns.sqe_dataset_management(1), qid=1,
             xfer=Xfer(16, data=struct.pack("<IIQ", 0, 8, f.nsze - 4)),
             status=SC.LBA_OUT_OF_RANGE, cite="6.7"),
        Case("nvm.read_above_mdts", rd(base, mx + 1), qid=1, xfer=Xfer(f.max_transfer + lba),
             status=SC.INVALID_FIELD, cite="6.9 (MDTS)"),
        Case("nvm.write_above_mdts", wr(base, mx + 1), qid=1, xfer=Xfer(f.max_transfer + lba),
             status=SC.INVALID_FIELD, cite="6.15 (MDTS)"),
        Case("nvm.read_prp1_unaligned", rd(base, 1), qid=1, xfer=Xfer(lba, offset=2),
             status=SC.PRP_OFFSET_INVALID, cite="4.3"),
        Case("nvm.read_prp2_offset", rd(base, 16), qid=1, xfer=Xfer(8192, bad="prp2"),
             status=SC.PRP_OFFSET_INVALID, cite="4.3"),
        Case("nvm.read_entry_offset", rd(base, 32), qid=1, xfer=Xfer(16384, bad="entry"),
             status=SC.PRP_OFFSET_INVALID, cite="4.3"),
        # a refused write over data written before moves nothing
        Case("nvm.write_entry_offset", wr(at[4], 32), qid=1,
             xfer=Xfer(16384, bad="entry", data=bytes(16384)),
             status=SC.PRP_OFFSET_INVALID, cite="4.3"),
        Case("nvm.read_list_unaligned", rd(base, 32), qid=1, xfer=Xfer(16384, list_offset=4),
             status=SC.PRP_OFFSET_INVALID, cite="4.3 (list qword aligned)"),
        Case("nvm.read_after_refused", rd(at[4], 32), qid=1, xfer=Xfer(16384),
             check=_check_data(written[4]), cite="4.3"),
    ]
    for nsid in (0, 2, ns.NSID_ALL):
        out.append(Case(f"nvm.read_nsid_{nsid:x}", rd(base, 1, nsid=nsid), qid=1,
                        xfer=Xfer(lba), status=SC.INVALID_NAMESPACE, cite="6.9"))
    out += [
        Case("nvm.write_nsid_3", wr(base, 1, nsid=3), qid=1, xfer=Xfer(lba, data=bytes(lba)),
             status=SC.INVALID_NAMESPACE, cite="6.15"),
        Case("nvm.write_zeroes_nsid_2", ns.sqe_write_zeroes(base, 1, nsid=2), qid=1,
             status=SC.INVALID_NAMESPACE, cite="6.16"),
        Case("nvm.dsm_nsid_2", ns.sqe_dataset_management(1, nsid=2), qid=1,
             xfer=Xfer(16, data=struct.pack("<IIQ", 0, 8, base)),
             status=SC.INVALID_NAMESPACE, cite="6.7"),
        Case("nvm.flush_nsid_2", ns.sqe_flush(nsid=2), qid=1, status=SC.INVALID_NAMESPACE,
             cite="6.8"),
    ]
    return out


def _err(f):
    oacs, oncs = f.id_ctrl.oacs, f.id_ctrl.oncs
    out = [
        Case("err.admin_opcode_7f", _sqe(0x7F), status=SC.INVALID_OPCODE, cite="4.6.1.2.1"),
        Case("err.admin_opcode_43", _sqe(0x43), status=SC.INVALID_OPCODE, cite="4.6.1.2.1"),
        Case("err.io_opcode_7f", _sqe(0x7F, nsid=1), qid=1, status=SC.INVALID_OPCODE,
             cite="4.6.1.2.1"),
        Case("err.io_opcode_03", _sqe(0x03, nsid=1), qid=1, status=SC.INVALID_OPCODE,
             cite="4.6.1.2.1"),
        Case("err.keep_alive", _sqe(AdminOpcode.KEEP_ALIVE), cite="5.16"),
        Case("err.abort_not_outstanding", ns.sqe_abort(1, 0x4321),
             check=_check_dw0_bit0(1), cite="5.1 (DW0 bit 0: not aborted)"),
        Case("err.abort_missing_sq", ns.sqe_abort(f.nq + 1, 1), check=_check_dw0_bit0(1),
             cite="5.1"),
        # Format NVM (OACS bit 1): a format that does not exist
        Case("err.format_lbaf_1", _sqe(AdminOpcode.FORMAT_NVM, nsid=1, cdw10=1),
             status=SC.INVALID_FORMAT if oacs & 2 else SC.INVALID_OPCODE,
             cite="5.23 / OACS bit 1"),
    ]
    # fused operations not supported (FUSES 0); PSDT 01b/10b (SGLs) not supported (SGLS 0)
    for what, kw in (("fuse_1", dict(fuse=1)), ("fuse_2", dict(fuse=2)),
                     ("psdt_1", dict(psdt=1)), ("psdt_2", dict(psdt=2))):
        s = ns.sqe_read(f.nsze - 2048, 8)
        for k, v in kw.items():
            setattr(s, k, v)
        out.append(Case(f"err.read_{what}", s, qid=1, xfer=Xfer(4096),
                        status=SC.INVALID_FIELD, cite="4.2 (FUSES 0, SGLS 0)"))
        s = ns.sqe_get_features(FeatureId.NUMBER_OF_QUEUES)
        for k, v in kw.items():
            setattr(s, k, v)
        out.append(Case(f"err.admin_{what}", s, status=SC.INVALID_FIELD,
                        cite="4.2 (FUSES 0, SGLS 0)"))
    # the I/O commands the firmware executes (Write Zeroes, Dataset Management), likewise
    s = ns.sqe_write_zeroes(f.nsze - 2048, 8)
    s.fuse = 1
    out.append(Case("err.write_zeroes_fuse_1", s, qid=1, status=SC.INVALID_FIELD,
                    cite="4.2 (FUSES 0)"))
    s = ns.sqe_dataset_management(1)
    s.psdt = 1
    out.append(Case("err.dsm_psdt_1", s, qid=1, status=SC.INVALID_FIELD,
                    xfer=Xfer(16, data=struct.pack("<IIQ", 0, 8, f.nsze - 2048)),
                    cite="4.2 (SGLS 0)"))
    # optional admin commands the controller does not claim (OACS): Invalid Command Opcode
    for opc, bit in ((0x0D, 3), (0x10, 2), (0x11, 2), (0x14, 4), (0x15, 3), (0x19, 5),
                     (0x1A, 5), (0x1C, 7), (0x1D, 6), (0x1E, 6), (0x7C, 8), (0x81, 0),
                     (0x82, 0), (0x84, None)):
        if bit is None and f.id_ctrl.sanicap or bit is not None and oacs >> bit & 1:
            continue
        out.append(Case(f"err.admin_opcode_{opc:02x}", _sqe(opc), status=SC.INVALID_OPCODE,
                        cite="5 (OACS / SANICAP)"))
    # optional NVM commands not in ONCS: Compare (bit 0), Write Uncorrectable (1),
    # Reservation Register (5), Verify (7)
    for opc, bit in ((NvmOpcode.COMPARE, 0), (NvmOpcode.WRITE_UNCORRECTABLE, 1),
                     (0x0D, 5), (0x0C, 7)):
        if not oncs >> bit & 1:
            out.append(Case(f"err.io_opcode_{opc:02x}",
                            _sqe(opc, nsid=1, cdw10=f.nsze - 2048), qid=1,
                            status=SC.INVALID_OPCODE, cite="6 (ONCS)"))
    return out


GROUPS = ("identify", "features", "log", "queue", "nvm", "err")


def cases(f, only=None):
    """The table for a controller that reports Facts `f` (groups: `only`, default all),
    in run order: state a group changes it restores, but for the queue group (see the
    module's docstring), which runs last but one."""
    out = []
    for g, fn in (("identify", _identify), ("features", _features), ("nvm", _nvm),
                  ("err", _err), ("log", _log), ("queue", _queue)):
        if only is None or g in only:
            out += fn(f)
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "case names repeat"
    return out


def groups(table):
    counts = {}
    for c in table:
        counts[c.group] = counts.get(c.group, 0) + 1
    return counts
