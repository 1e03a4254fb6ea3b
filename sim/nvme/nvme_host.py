# SPDX-License-Identifier: BSD-2-Clause
"""NvmeHost: a Python NVMe host driver model on a cocotbext-pcie root complex.

It drives the controller the way the Linux `nvme` driver does (and the way Corundum's Python
driver model drives its NIC in simulation): registers through BAR0, queues and data buffers
in the root complex's memory, doorbells, MSI, phase-tag completion processing.

    tb = MyTB(dut)                      # a pcie_tb.PcieSystemTB subclass
    await tb.init()
    host = NvmeHost(tb)
    await host.init(n_io_queues=4, qdepth=64, msi_vectors=4)
    await host.write(1, slba=0, data=bytes(4096))
    data = await host.read(1, slba=0, nlb=8)
    cmd = await host.submit(1, sqe_read(0, 1, prp1=...))    # Command: awaitable completion
    cqe = await cmd

Parts:

- `HostMemory`: page allocator over a region of the root complex's memory pool below 4 GiB and
  optionally a `MemoryRegion` registered above 4 GiB (`high_base`), so PRPs, lists and queues
  can sit in either; `read` / `write` by bus address.
- `build_prps()` / `walk_prps()`: PRP construction for a host buffer as the Linux driver builds
  it (PRP1 at a dword-aligned offset into its page, PRP2 the second page or a PRP list pointer,
  lists chained through their page's last entry), with knobs forcing the buffer offset, the
  list offset and the placement; and a reference walker checking a PRP set (pure Python, used
  by the unit tests).
- `NvmeHost`: initialisation in the Linux driver's order, admin and I/O queues, submission that
  never overfills an SQ (outstanding commands bounded like the driver's tags, SQ head tracked
  from CQE SQHD) nor a CQ, completion matching by (sqid, cid), an interrupt-driven completion
  loop per MSI vector (or polling), timeouts listing the outstanding commands, command helpers
  and a raw path for malformed commands; shutdown, disable, reset and re-initialisation.

Time is simulated time only (cocotb `Timer`): register polls every `poll_us`, command
timeouts in simulated microseconds.
"""

import logging
import random
from dataclasses import dataclass, field

import cocotb
from cocotb.triggers import Event, First, Timer
from cocotb.utils import get_sim_time
from cocotbext.axi.address_space import MemoryRegion

from spec import nvme as ns
from spec import nvme_regmap as rm
from spec.nvme import SC, Cqe, Sqe

__all__ = ["HostMemory", "PrpBuffer", "build_prps", "walk_prps", "prp_page_count",
           "NvmeHost", "Command", "NvmeError", "NvmeTimeout", "NvmeAborted", "NvmeFatal",
           "QueueMemory", "SubmissionQueue", "CompletionQueue", "HIGH_BASE", "PAGE", "SC",
           "Sqe", "Cqe"]

PAGE = ns.PAGE_SIZE
HIGH_BASE = 0x1_0000_0000 * 0x21       # default host memory window above 4 GiB


# Errors ----------------------------------------------------------------------------------------

class NvmeError(Exception):
    """A command completed with a non-success status; `cqe` and `sqe` are attached."""
    def __init__(self, cqe, sqe=None, what=""):
        self.cqe, self.sqe = cqe, sqe
        op = f" opcode 0x{sqe.opcode:02x}" if sqe is not None else ""
        super().__init__(f"{what}{op}: {cqe}")

    @property
    def status(self):
        return self.cqe.status


class NvmeTimeout(Exception):
    """A command or a register wait did not finish in (simulated) time."""


class NvmeAborted(Exception):
    """The host dropped the command (controller disabled or reset before it completed)."""


class NvmeFatal(Exception):
    """CSTS.CFS set, or CSTS reads all ones."""


# Host memory ------------------------------------------------------------------------------------

class HostMemory:
    """Page allocator over the root complex's memory.

    rc:          the cocotbext-pcie RootComplex; `low_pages` pages come from its `mem_pool`
                 (below 4 GiB);
    high_pages:  pages of a `MemoryRegion` registered in `rc.mem_address_space` at
                 `high_base` (page aligned, above 4 GiB), 0 for none;
    rng:         random.Random used to scatter data pages (`alloc_page`).
    """
    def __init__(self, rc, low_pages=2048, high_pages=0, high_base=HIGH_BASE, rng=None):
        if low_pages < 16:
            raise ValueError(f"HostMemory: low_pages={low_pages} < 16")
        if high_pages and (high_base % PAGE or high_base < 2**32):
            raise ValueError(f"HostMemory: high_base=0x{high_base:x} not a page above 4 GiB")
        self.rng = rng or random.Random(0)
        self.low = rc.mem_pool.alloc_region(PAGE * (low_pages + 1))
        self.low_addr = self.low.get_absolute_address(0)
        self.low_base = (self.low_addr + PAGE - 1) & ~(PAGE - 1)
        self.high = None
        self.high_base = high_base
        self.free_pages = {False: {self.low_base + PAGE * i for i in range(low_pages)},
                           True: set()}
        if high_pages:
            self.high = MemoryRegion(PAGE * high_pages)
            rc.mem_address_space.register_region(self.high, high_base)
            self.free_pages[True] = {high_base + PAGE * i for i in range(high_pages)}
        self.high_pages = high_pages

    def _region(self, addr, n):
        if self.high is not None and self.high_base <= addr < self.high_base + self.high.size:
            region, off = self.high, addr - self.high_base
        else:
            region, off = self.low, addr - self.low_addr
        if off < 0 or off + n > region.size:
            raise ValueError(f"host address 0x{addr:x} (+{n}) outside host memory")
        return region, off

    def read(self, addr, n):
        region, off = self._region(addr, n)
        return bytes(region.mem[off:off + n])

    def write(self, addr, data):
        region, off = self._region(addr, len(data))
        region.mem[off:off + len(data)] = data

    def fill(self, addr, n, byte=0):
        self.write(addr, bytes([byte]) * n)

    def _pool(self, high):
        if high and self.high is None:
            raise ValueError("HostMemory: no memory above 4 GiB (high_pages=0)")
        return self.free_pages[bool(high)]

    def alloc_page(self, high=None):
        """One page anywhere in the pool (random: data pages scatter); `high` None picks
        either pool."""
        if high is None:
            high = self.high is not None and bool(self.free_pages[True]) and \
                self.rng.random() < 0.5
        pool = self._pool(high)
        if not pool:
            raise MemoryError(f"HostMemory: out of {'high' if high else 'low'} pages")
        addr = self.rng.choice(sorted(pool))
        pool.remove(addr)
        return addr

    def alloc(self, n_pages, high=False):
        """`n_pages` physically contiguous pages (queues: CAP.CQR=1); the lowest free run."""
        pool = self._pool(high)
        pages = sorted(pool)
        run = []
        for a in pages:
            run = run + [a] if run and a == run[-1] + PAGE else [a]
            if len(run) == n_pages:
                for p in run:
                    pool.remove(p)
                return run[0]
        raise MemoryError(f"HostMemory: no {n_pages} contiguous free pages")

    def free(self, addr, n_pages=1):
        addr &= ~(PAGE - 1)
        high = self.high is not None and addr >= self.high_base
        for i in range(n_pages):
            self.free_pages[high].add(addr + PAGE * i)


# PRPs -------------------------------------------------------------------------------------------

@dataclass
class PrpBuffer:
    """A host data buffer described by PRPs: spans [(bus address, bytes)] in transfer order,
    the PRP list pages, and every page to free."""
    length: int
    prp1: int
    prp2: int
    spans: list
    lists: list
    pages: list = field(default_factory=list)

    def read(self, mem):
        return b"".join(mem.read(a, n) for a, n in self.spans)

    def write(self, mem, data):
        if len(data) != self.length:
            raise ValueError(f"PrpBuffer.write: {len(data)} bytes for a {self.length} buffer")
        pos = 0
        for a, n in self.spans:
            mem.write(a, data[pos:pos + n])
            pos += n

    def free(self, mem):
        for p in self.pages + self.lists:
            mem.free(p)
        self.pages, self.lists = [], []


def prp_page_count(length, offset=0):
    """Memory pages a buffer of `length` bytes starting `offset` into its first page spans."""
    return (offset + length + PAGE - 1) // PAGE


def build_prps(mem, length, offset=0, list_offset=0, high=None, pages=None, list_high=None):
    """Place a buffer of `length` bytes in host memory and describe it with PRPs.

    mem:          HostMemory-like (alloc_page(high), write(addr, bytes));
    offset:       PRP1's offset into the first page (dword aligned, < PAGE);
    list_offset:  the PRP list's offset into its first page (qword aligned); a list that does
                  not fit in the rest of its page chains through the page's last entry to a
                  new list page, as the Linux driver's lists do;
    high:         data pages above 4 GiB (True), below (False), either (None);
    pages:        force the data pages' addresses (page aligned);
    list_high:    the same for list pages (default: as `high`).
    """
    if length <= 0:
        raise ValueError(f"build_prps: length={length}")
    if offset % 4 or not 0 <= offset < PAGE:
        raise ValueError(f"build_prps: offset={offset} not dword aligned in a page")
    if list_offset % 8 or not 0 <= list_offset < PAGE:
        raise ValueError(f"build_prps: list_offset={list_offset} not qword aligned in a page")
    n = prp_page_count(length, offset)
    if pages is None:
        pages = [mem.alloc_page(high) for _ in range(n)]
    elif len(pages) != n:
        raise ValueError(f"build_prps: {len(pages)} pages given, {n} needed")
    list_high = high if list_high is None else list_high
    spans, left = [], length
    for i, page in enumerate(pages):
        start = page + (offset if i == 0 else 0)
        size = min(left, PAGE - (offset if i == 0 else 0))
        spans.append((start, size))
        left -= size
    prp1, prp2, lists = spans[0][0], 0, []
    if len(spans) == 2:
        prp2 = spans[1][0]
    elif len(spans) > 2:
        entries = [a for a, _ in spans[1:]]
        lpage = mem.alloc_page(list_high)
        lists.append(lpage)
        prp2 = at = lpage + list_offset
        while entries:
            room = (PAGE - at % PAGE) // 8
            if len(entries) <= room:
                chunk, nxt = entries, None
            else:
                chunk, nxt = entries[:room - 1], mem.alloc_page(list_high)
            raw = b"".join(e.to_bytes(8, "little") for e in chunk)
            if nxt is not None:
                raw += nxt.to_bytes(8, "little")
                lists.append(nxt)
            mem.write(at, raw)
            entries = entries[len(chunk):]
            at = nxt
    return PrpBuffer(length, prp1, prp2, spans, lists, list(pages))


def walk_prps(read_qword, prp1, prp2, length):
    """Reference PRP walker (NVMe 1.4 section 4.3): the data spans [(addr, bytes)] and the
    list entry addresses read, for a transfer of `length` bytes. Raises ValueError where a
    controller reports PRP Offset Invalid (PRP1 not dword aligned, a data pointer after the
    first or a chain pointer with an offset, a list pointer not qword aligned)."""
    if prp1 & 3:
        raise ValueError("PRP1 not dword aligned")
    first = min(length, PAGE - prp1 % PAGE)
    spans, left = [(prp1, first)], length - first
    if left == 0:
        return spans, []
    if left <= PAGE:
        if prp2 % PAGE:
            raise ValueError("PRP2 data pointer with an offset")
        return spans + [(prp2, left)], []
    if prp2 & 7:
        raise ValueError("PRP list pointer not qword aligned")
    reads, at = [], prp2
    while left > 0:
        entry = read_qword(at)
        reads.append(at)
        last_in_page = (at % PAGE) == PAGE - 8
        if last_in_page and left > PAGE:
            if entry % PAGE:
                raise ValueError("PRP list chain pointer with an offset")
            at = entry
            continue
        if entry % PAGE:
            raise ValueError("PRP entry with an offset")
        n = min(left, PAGE)
        spans.append((entry, n))
        left -= n
        at += 8
    return spans, reads


# Queues -----------------------------------------------------------------------------------------

class QueueMemory:
    """Host memory of a queue of `entries` entries of `esize` bytes.

    Contiguous (pc=True, CAP.CQR=1 style): pages from one run; `base` (PRP1 of the create)
    is the first. Non-contiguous (pc=False): scattered pages and a PRP list page holding one
    entry per page; `base` is the list pointer. `base`/`pages` given: memory the caller owns
    (not freed)."""
    def __init__(self, mem, entries, esize, pc=True, high=False, base=None):
        self.entries, self.esize, self.pc = entries, esize, pc
        n = max(1, (entries * esize + PAGE - 1) // PAGE)
        self.owned = base is None
        self.list_page = None
        if not pc and base is None:
            self.pages = [mem.alloc_page(high) for _ in range(n)]
            self.list_page = mem.alloc_page(high)
            mem.write(self.list_page, b"".join(p.to_bytes(8, "little") for p in self.pages))
            self.base = self.list_page
        else:
            self.base = mem.alloc(n, high) if base is None else base
            self.pages = [self.base + PAGE * k for k in range(n)]

    def slot(self, i):
        off = i * self.esize
        return self.pages[off // PAGE] + off % PAGE

    def clear(self, mem):
        for p in self.pages:
            mem.fill(p, PAGE)

    def free(self, mem):
        if self.owned:
            for p in self.pages:
                mem.free(p)
            if self.list_page is not None:
                mem.free(self.list_page)
        self.pages = []


class SubmissionQueue:
    def __init__(self, qid, qmem, entries, cqid, high=False):
        self.qid, self.qmem, self.entries, self.cqid, self.high = qid, qmem, entries, cqid, high
        self.base = qmem.base
        self.tail = 0
        self.head = 0               # from the SQHD of this SQ's completions
        self.next_cid = 0
        self.outstanding = {}       # cid -> Command

    def used(self):
        return (self.tail - self.head) % self.entries

    def room(self):
        """Entries the host may write: the ring's free slots (one stays empty) and the
        driver's tag budget (entries - 1 commands outstanding)."""
        return min(self.entries - 1 - self.used(), self.entries - 1 - len(self.outstanding))

    def take_sqhd(self, sqhd):
        """Accept a reported head only if it moves forward within [head, tail]: a stale SQHD
        (a completion that left the controller late) must not look like a wrap."""
        if (sqhd - self.head) % self.entries <= (self.tail - self.head) % self.entries:
            self.head = sqhd


class CompletionQueue:
    def __init__(self, qid, qmem, entries, iv, ien, high=False):
        self.qid, self.qmem, self.entries, self.iv, self.ien, self.high = \
            qid, qmem, entries, iv, ien, high
        self.base = qmem.base
        self.head = 0
        self.phase = 1
        self.sqids = []
        self.outstanding = 0        # commands that will complete here
        self.draining = False
        self.completions = 0


class Command:
    """A submitted command; `await cmd` gives its Cqe (timeout: the host's, or cmd.wait())."""
    def __init__(self, host, sqid, cid, sqe):
        self.host, self.sqid, self.cid, self.sqe = host, sqid, cid, sqe
        self.event = Event()
        self.cqe = None
        self.error = None
        self.submitted_ns = get_sim_time("ns")
        self.completed_ns = None

    def __repr__(self):
        op = f"0x{self.sqe.opcode:02x}" if self.sqe is not None else "?"
        return (f"Command(sqid={self.sqid} cid={self.cid} opcode={op} "
                f"submitted at {self.submitted_ns} ns)")

    @property
    def done(self):
        return self.event.is_set()

    @property
    def latency_ns(self):
        return None if self.completed_ns is None else self.completed_ns - self.submitted_ns

    def _complete(self, cqe=None, error=None):
        self.cqe, self.error = cqe, error
        self.completed_ns = get_sim_time("ns")
        self.event.set()

    async def wait(self, timeout_us=None):
        if not self.event.is_set():
            t = self.host.cmd_timeout_us if timeout_us is None else timeout_us
            await First(self.event.wait(), Timer(t, unit="us"))
            if not self.event.is_set():
                raise NvmeTimeout(f"{self!r}: no completion in {t} us; outstanding: "
                                  f"{self.host.outstanding()}")
        if self.error is not None:
            raise self.error
        return self.cqe

    def __await__(self):
        return self.wait().__await__()


# Host -----------------------------------------------------------------------------------------

class NvmeHost:
    """The host driver model.

    tb:             a PcieSystemTB subclass after `await tb.init()` (uses tb.rc, tb.pdev);
    mem:            a HostMemory (default: 2048 low pages, `high_pages` above 4 GiB);
    cmd_timeout_us: simulated time a command may take before NvmeTimeout (default 2000);
    poll_us:        register poll interval while waiting for CSTS (simulated, default 2);
    ready_timeout_us: bound on CSTS waits (default: CAP.TO, up to 127.5 s simulated);
    seed:           data/page placement randomness.
    """
    def __init__(self, tb, mem=None, high_pages=256, high_base=HIGH_BASE, cmd_timeout_us=2000,
                 poll_us=2.0, ready_timeout_us=None, seed=None, log=None):
        self.tb = tb
        self.rc = tb.rc
        self.pdev = tb.pdev
        if self.pdev is None:
            raise RuntimeError("NvmeHost: call `await tb.init()` first (no enumerated device)")
        self.bar = self.pdev.bar_window[0]
        self.log = log or logging.getLogger("cocotb.nvme_host")
        self.rng = random.Random(cocotb.RANDOM_SEED if seed is None else seed)
        self.mem = mem or HostMemory(self.rc, high_pages=high_pages, high_base=high_base,
                                     rng=self.rng)
        self.cmd_timeout_us = cmd_timeout_us
        self.poll_us = poll_us
        self.ready_timeout_us = ready_timeout_us
        self.sqs = {}
        self.cqs = {}
        self.cap = None
        self.mqes = self.dstrd = self.to_500ms = None
        self.id_ctrl = self.id_ns = None
        self.lba_size = 512
        self.ns_size = 0
        self.n_vectors = 0
        self.use_irq = True
        self._tasks = []
        self._space = Event()       # set whenever a completion frees SQ / CQ room
        self._generation = 0        # bumped by disable(): stale drain loops stop
        self._init_args = None
        self.unexpected = []        # CQEs that matched no outstanding command
        self.aer_events = []        # completed AER CQEs, in order

    # Registers ---------------------------------------------------------------------------------

    async def read_reg(self, name):
        reg = rm.REGS[name]
        if reg.width == 64:
            return await self.bar.read_qword(reg.offset)
        return await self.bar.read_dword(reg.offset)

    async def write_reg(self, name, value):
        reg = rm.REGS[name]
        if reg.width == 64:
            await self.bar.write_qword(reg.offset, value)
        else:
            await self.bar.write_dword(reg.offset, value)

    def db_offset(self, qid, is_cq):
        return rm.doorbell_offset(qid, is_cq, self.dstrd)

    async def ring_doorbell(self, qid, is_cq, value):
        """Write a doorbell (any value: tests of invalid doorbell writes use this too)."""
        await self.bar.write_dword(self.db_offset(qid, is_cq), value)

    async def wait_csts(self, cond, what, timeout_us=None, fatal_on_cfs=True):
        """Poll CSTS every poll_us until cond(csts); timeout CAP.TO (500 ms units) unless
        given; an all-ones read (and CFS, when `fatal_on_cfs`) raise NvmeFatal."""
        if timeout_us is None:
            timeout_us = self.ready_timeout_us or max(1, self.to_500ms or 1) * 500_000
        deadline = get_sim_time("ns") + timeout_us * 1000
        while True:
            csts = await self.read_reg("CSTS")
            if csts == 0xFFFFFFFF:
                raise NvmeFatal(f"waiting for {what}: CSTS reads 0xffffffff")
            if fatal_on_cfs and rm.field_get("CSTS", "CFS", csts):
                raise NvmeFatal(f"waiting for {what}: CSTS.CFS set (CSTS 0x{csts:08x})")
            if cond(csts):
                return csts
            if get_sim_time("ns") >= deadline:
                raise NvmeTimeout(f"{what}: not reached in {timeout_us} us (CSTS 0x{csts:08x})")
            await Timer(self.poll_us, unit="us")

    # Initialisation ------------------------------------------------------------------------------

    async def read_cap(self):
        self.cap = await self.read_reg("CAP")
        self.mqes = rm.field_get("CAP", "MQES", self.cap)
        self.dstrd = rm.field_get("CAP", "DSTRD", self.cap)
        self.to_500ms = rm.field_get("CAP", "TO", self.cap)
        self.cqr = rm.field_get("CAP", "CQR", self.cap)
        return self.cap

    async def init(self, n_io_queues=1, qdepth=64, msi_vectors=1, admin_qdepth=32,
                   use_irq=True, high_queues=False, io_queue_pc=True, msix_vectors=0):
        """Bring the controller up as the Linux driver does: CAP; disable (CC.EN=0, RDY=0);
        admin queues; AQA/ASQ/ACQ; CC (IOSQES 6, IOCQES 4, MPS 0, CSS 0, AMS 0, EN 1); RDY=1;
        MSI (up to msi_vectors, power of two), or MSI-X with up to msix_vectors when that is
        not 0 (the root complex programs the function's table through BAR0, Linux's order);
        Identify Controller; Identify Namespace 1;
        Number of Queues; I/O CQs (PC, IEN, IV = qid mod vectors) then SQs.
        `qdepth`/`admin_qdepth` are queue entries (2..MQES+1); `high_queues` places the queues
        above 4 GiB; `io_queue_pc=False` creates the I/O queues non-contiguous (PRP lists, needs
        CAP.CQR=0). Returns the I/O queue count."""
        self._init_args = dict(n_io_queues=n_io_queues, qdepth=qdepth, msi_vectors=msi_vectors,
                               admin_qdepth=admin_qdepth, use_irq=use_irq,
                               high_queues=high_queues, io_queue_pc=io_queue_pc,
                               msix_vectors=msix_vectors)
        self.use_irq = use_irq
        await self.read_cap()
        for name, q in (("qdepth", qdepth), ("admin_qdepth", admin_qdepth)):
            if not 2 <= q <= self.mqes + 1:
                raise ValueError(f"NvmeHost.init: {name}={q} outside 2..MQES+1 ({self.mqes + 1})")
        if admin_qdepth > 4096:
            raise ValueError(f"NvmeHost.init: admin_qdepth={admin_qdepth} > 4096")
        if not io_queue_pc and self.cqr:
            raise ValueError("NvmeHost.init: io_queue_pc=False but CAP.CQR=1")
        await self.disable()

        asq = self._new_sq(0, admin_qdepth, 0, high_queues)
        acq = self._new_cq(0, admin_qdepth, 0, True, high_queues)
        await self.write_reg("AQA", (admin_qdepth - 1) | (admin_qdepth - 1) << 16)
        await self.write_reg("ASQ", asq.base)
        await self.write_reg("ACQ", acq.base)
        cc = 0
        for name, value in (("IOSQES", 6), ("IOCQES", 4), ("MPS", 0), ("CSS", 0), ("AMS", 0),
                            ("SHN", 0), ("EN", 1)):
            cc = rm.field_put("CC", name, cc, value)
        await self.write_reg("CC", cc)
        await self.wait_csts(lambda c: rm.field_get("CSTS", "RDY", c) == 1, "CSTS.RDY=1")

        if use_irq and msix_vectors:
            await self._enable_msix(msix_vectors)
        elif use_irq:
            await self._enable_msi(msi_vectors)
        self._start_completion_tasks()

        self.id_ctrl = await self.identify_controller()
        self.id_ns = await self.identify_namespace(1)
        self.lba_size = self.id_ns.lba_size
        self.ns_size = self.id_ns.nsze

        granted = await self.set_num_queues(n_io_queues)
        n = min(n_io_queues, granted[0], granted[1])
        nvec = max(1, self.n_vectors)
        for qid in range(1, n + 1):
            await self.create_io_cq(qid, qdepth, iv=qid % nvec, ien=use_irq, high=high_queues,
                                    pc=io_queue_pc)
        for qid in range(1, n + 1):
            await self.create_io_sq(qid, qdepth, cqid=qid, high=high_queues, pc=io_queue_pc)
        self.n_io_queues = n
        return n

    async def _enable_msi(self, msi_vectors):
        if msi_vectors not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"msi_vectors={msi_vectors}: a power of two 1..32")
        if self.pdev.msi_enabled:
            return
        nvec = await self.pdev.enable_msi_range(1, msi_vectors)
        if nvec < 1:
            raise RuntimeError(f"MSI not enabled (enable_msi_range returned {nvec})")
        self.n_vectors = nvec

    async def _enable_msix(self, msix_vectors):
        if self.pdev.msix_enabled:
            return
        nvec = await self.pdev.enable_msix_range(1, msix_vectors, 0)
        if nvec < 1:
            raise RuntimeError(f"MSI-X not enabled (enable_msix_range returned {nvec})")
        self.n_vectors = nvec

    def _start_completion_tasks(self):
        gen = self._generation
        if self.use_irq:
            for v in range(self.n_vectors):
                self._tasks.append(cocotb.start_soon(self._irq_loop(v, gen)))
        self._tasks.append(cocotb.start_soon(self._poll_loop(gen)))

    async def disable(self):
        """CC.EN=0 (if set) and wait for CSTS.RDY=0; outstanding commands are dropped
        (NvmeAborted), queues forgotten."""
        if self.cap is None:
            await self.read_cap()
        cc = await self.read_reg("CC")
        if rm.field_get("CC", "EN", cc):
            await self.write_reg("CC", rm.field_put("CC", "EN", cc, 0))
        # CFS does not stop a disable: a reset is how the host recovers a fatal controller.
        await self.wait_csts(lambda c: rm.field_get("CSTS", "RDY", c) == 0, "CSTS.RDY=0",
                             fatal_on_cfs=False)
        self._drop_state("controller disabled")

    def _drop_state(self, reason):
        # The completion loops of the old generation end at their next wake-up (not
        # cancelled: one may be in the middle of a doorbell write).
        self._generation += 1
        self._tasks = []
        for sq in self.sqs.values():
            for cmd in list(sq.outstanding.values()):
                cmd._complete(error=NvmeAborted(f"{cmd!r}: {reason}"))
            sq.outstanding.clear()
            sq.qmem.free(self.mem)
        for cq in self.cqs.values():
            cq.qmem.free(self.mem)
        self.sqs, self.cqs = {}, {}
        self._space.set()

    async def shutdown(self, delete_queues=True, timeout_us=None):
        """Normal shutdown: delete the I/O queues (as the driver does), CC.SHN=01b, wait for
        CSTS.SHST=10b (timeout from RTD3E, at least 10 ms simulated, unless given)."""
        if delete_queues:
            for qid in sorted(q for q in self.sqs if q):
                await self.delete_io_sq(qid)
            for qid in sorted(q for q in self.cqs if q):
                await self.delete_io_cq(qid)
        cc = await self.read_reg("CC")
        await self.write_reg("CC", rm.field_put("CC", "SHN", cc, 1))
        if timeout_us is None:
            rtd3e = self.id_ctrl.rtd3e if self.id_ctrl else 0
            timeout_us = max(10_000, rtd3e)
        await self.wait_csts(lambda c: rm.field_get("CSTS", "SHST", c) == 2, "CSTS.SHST=10b",
                             timeout_us)

    async def reset_and_reinit(self, **overrides):
        """Controller reset (disable) and a new initialisation with the same arguments."""
        await self.disable()
        args = dict(self._init_args or {}, **overrides)
        return await self.init(**args)

    # Queues --------------------------------------------------------------------------------------

    def _new_sq(self, qid, entries, cqid, high=False, qmem=None):
        if qmem is None:
            qmem = QueueMemory(self.mem, entries, ns.SQE_BYTES, True, high)
        sq = SubmissionQueue(qid, qmem, entries, cqid, high)
        self.sqs[qid] = sq
        return sq

    def _new_cq(self, qid, entries, iv, ien, high=False, qmem=None):
        if qmem is None:
            qmem = QueueMemory(self.mem, entries, ns.CQE_BYTES, True, high)
            qmem.clear(self.mem)                            # phase tags 0
        cq = CompletionQueue(qid, qmem, entries, iv, ien, high)
        self.cqs[qid] = cq
        return cq

    def outstanding(self):
        return [c for sq in self.sqs.values() for c in sq.outstanding.values()]

    def _alloc_cid(self, sq):
        for _ in range(0x10000):
            cid = sq.next_cid
            sq.next_cid = (sq.next_cid + 1) % 0xFFFF        # CID FFFFh never used
            if cid not in sq.outstanding:
                return cid
        raise RuntimeError(f"SQ{sq.qid}: no free CID")

    async def _wait_room(self, sq):
        cq = self.cqs[sq.cqid]
        deadline = get_sim_time("ns") + self.cmd_timeout_us * 1000
        while sq.room() < 1 or cq.outstanding >= cq.entries - 1:
            self._space.clear()
            await First(self._space.wait(), Timer(self.cmd_timeout_us, unit="us"))
            if sq.qid not in self.sqs:
                raise NvmeAborted(f"SQ{sq.qid} deleted while waiting for room")
            if get_sim_time("ns") >= deadline:
                raise NvmeTimeout(f"SQ{sq.qid}: no room in {self.cmd_timeout_us} us; "
                                  f"outstanding: {self.outstanding()}")

    async def submit(self, qid, sqe=None, ring=True, **fields):
        """Place a command on SQ `qid` (CID assigned here) and ring the tail doorbell; waits
        while the SQ or its CQ is full. `sqe` is an Sqe (or None: Sqe(**fields)). Returns
        the Command (await it for the Cqe)."""
        sq = self.sqs.get(qid)
        if sq is None:
            raise ValueError(f"submit: SQ{qid} does not exist")
        sqe = Sqe(**fields) if sqe is None else sqe
        await self._wait_room(sq)
        sqe.cid = self._alloc_cid(sq)
        return await self._place(sq, sqe.pack(), sqe, ring)

    async def submit_raw(self, qid, raw, ring=True):
        """Place 64 raw bytes (a malformed command, say) on SQ `qid`; completion matched by
        the CID in bytes 3:2. Returns the Command."""
        raw = bytes(raw)
        if len(raw) != ns.SQE_BYTES:
            raise ValueError(f"submit_raw: {len(raw)} bytes")
        sq = self.sqs[qid]
        await self._wait_room(sq)
        sqe = Sqe.unpack(raw)
        if sqe.cid in sq.outstanding:
            raise ValueError(f"submit_raw: CID {sqe.cid} already outstanding on SQ{qid}")
        return await self._place(sq, raw, sqe, ring)

    async def _place(self, sq, raw, sqe, ring):
        cmd = Command(self, sq.qid, sqe.cid, sqe)
        sq.outstanding[sqe.cid] = cmd
        self.cqs[sq.cqid].outstanding += 1
        self.mem.write(sq.qmem.slot(sq.tail), raw)
        sq.tail = (sq.tail + 1) % sq.entries
        if ring:
            await self.ring_sq(sq.qid)
        return cmd

    async def ring_sq(self, qid):
        """Tail doorbell of SQ `qid` with the current tail (after submit(..., ring=False))."""
        await self.ring_doorbell(qid, 0, self.sqs[qid].tail)

    async def execute(self, qid, sqe, timeout_us=None):
        """Submit and wait; the Cqe whatever its status."""
        cmd = await self.submit(qid, sqe)
        return await cmd.wait(timeout_us)

    async def admin(self, sqe, check=True, what=""):
        """An admin command; raises NvmeError on a non-success status when `check`."""
        cqe = await self.execute(0, sqe)
        if check and not cqe.ok:
            raise NvmeError(cqe, sqe, what or "admin command")
        return cqe

    # Completions ---------------------------------------------------------------------------------

    async def _irq_loop(self, vector, gen):
        ev = self.pdev.msi_vectors[vector].event
        while True:
            await ev.wait()
            if gen != self._generation:
                return
            ev.clear()
            for cq in list(self.cqs.values()):
                if cq.ien and cq.iv == vector:
                    await self.drain_cq(cq)

    async def _poll_loop(self, gen, interval_ns=500):
        """Drains the CQs that take no interrupts (IEN=0, or use_irq=False)."""
        while True:
            await Timer(interval_ns, unit="ns")
            if gen != self._generation:
                return
            for cq in list(self.cqs.values()):
                if not (self.use_irq and cq.ien):
                    await self.drain_cq(cq)

    async def drain_cq(self, cq):
        """Process the new CQEs of `cq` (phase tag), then write its head doorbell once.
        Returns the number processed."""
        if cq.draining:
            return 0
        cq.draining = True
        total = 0
        try:
            while True:
                n = 0
                while True:
                    at = cq.qmem.slot(cq.head)
                    cqe = Cqe.unpack(self.mem.read(at, ns.CQE_BYTES))
                    if cqe.phase != cq.phase:
                        break
                    cq.head += 1
                    if cq.head == cq.entries:
                        cq.head, cq.phase = 0, cq.phase ^ 1
                    self._complete(cq, cqe)
                    n += 1
                if not n:
                    break
                total += n
                if self.cqs.get(cq.qid) is cq:
                    await self.ring_doorbell(cq.qid, 1, cq.head)
        finally:
            cq.draining = False
        return total

    def _complete(self, cq, cqe):
        cq.completions += 1
        sq = self.sqs.get(cqe.sqid)
        if sq is None or sq.cqid != cq.qid or cqe.cid not in sq.outstanding:
            self.log.error("CQ%d: CQE for no outstanding command: %s", cq.qid, cqe)
            self.unexpected.append((cq.qid, cqe))
            return
        sq.take_sqhd(cqe.sqhd)
        cmd = sq.outstanding.pop(cqe.cid)
        cq.outstanding -= 1
        if cmd.sqe is not None and cmd.sqid == 0 and \
                cmd.sqe.opcode == ns.AdminOpcode.ASYNC_EVENT_REQUEST:
            self.aer_events.append(cqe)
        cmd._complete(cqe)
        self._space.set()

    async def poll_completions(self):
        """Drain every CQ now (tests with interrupts off, or after a lost interrupt)."""
        return sum([await self.drain_cq(cq) for cq in list(self.cqs.values())])

    # Admin helpers -------------------------------------------------------------------------------

    async def _admin_data_in(self, sqe, length, what, check=True, **prp_opts):
        buf = build_prps(self.mem, length, **prp_opts)
        sqe.prp1, sqe.prp2 = buf.prp1, buf.prp2
        try:
            cqe = await self.admin(sqe, check, what)
            return cqe, buf.read(self.mem)
        finally:
            buf.free(self.mem)

    async def identify(self, cns, nsid=0, cntid=0, check=True, **prp_opts):
        """Raw 4096-byte Identify data (with the Cqe: (cqe, data))."""
        return await self._admin_data_in(ns.sqe_identify(cns, nsid, cntid), ns.IDENTIFY_BYTES,
                                         f"Identify CNS {cns:02x}h", check, **prp_opts)

    async def identify_controller(self):
        _, data = await self.identify(ns.Cns.CONTROLLER)
        return ns.parse_identify_controller(data)

    async def identify_namespace(self, nsid=1):
        _, data = await self.identify(ns.Cns.NAMESPACE, nsid)
        return ns.parse_identify_namespace(data)

    async def get_features(self, fid, sel=0, cdw11=0, nsid=0, check=True):
        """Returns the Cqe (the feature value is its dw0)."""
        return await self.admin(ns.sqe_get_features(fid, sel, cdw11, nsid), check,
                                f"Get Features {fid:02x}h")

    async def set_features(self, fid, cdw11, save=False, nsid=0, check=True):
        return await self.admin(ns.sqe_set_features(fid, cdw11, save, nsid), check,
                                f"Set Features {fid:02x}h")

    async def set_num_queues(self, n):
        """Set Features Number of Queues (n SQs and n CQs); returns the granted (NSQA+1,
        NCQA+1)."""
        cqe = await self.set_features(ns.FeatureId.NUMBER_OF_QUEUES,
                                      (n - 1) | (n - 1) << 16)
        return (cqe.dw0 & 0xFFFF) + 1, (cqe.dw0 >> 16) + 1

    async def get_log_page(self, lid, length, nsid=0xFFFFFFFF, offset=0, check=True,
                           **prp_opts):
        """(cqe, data) of a Get Log Page of `length` bytes (dword multiple)."""
        return await self._admin_data_in(ns.sqe_get_log_page(lid, length, nsid, offset),
                                         length, f"Get Log Page {lid:02x}h", check, **prp_opts)

    async def create_io_cq(self, qid, entries, iv=0, ien=True, pc=True, high=False, check=True,
                           base=None, list_pc=None):
        """Create I/O CQ `qid` of `entries` entries (QSIZE = entries - 1); registered on
        success. pc=True: one contiguous run of pages; pc=False: scattered pages behind a PRP
        list (CAP.CQR=0). `base` forces PRP1 (a contiguous queue the caller placed).
        `list_pc` builds the memory as for that PC while sending `pc` (malformed creates).
        Returns the Cqe."""
        shape = pc if list_pc is None else list_pc
        qmem = QueueMemory(self.mem, max(entries, 1), ns.CQE_BYTES, shape, high, base)
        qmem.clear(self.mem)
        cqe = await self.admin(ns.sqe_create_io_cq(qid, entries - 1, qmem.base, iv, ien, pc),
                               check, f"Create I/O CQ {qid}")
        if cqe.ok:
            self._new_cq(qid, entries, iv, ien, high, qmem=qmem)
        else:
            qmem.free(self.mem)
        return cqe

    async def create_io_sq(self, qid, entries, cqid, qprio=0, pc=True, high=False, check=True,
                           base=None, list_pc=None):
        """Create I/O SQ `qid` on CQ `cqid`; as create_io_cq for pc / base / list_pc."""
        shape = pc if list_pc is None else list_pc
        qmem = QueueMemory(self.mem, max(entries, 1), ns.SQE_BYTES, shape, high, base)
        cqe = await self.admin(ns.sqe_create_io_sq(qid, entries - 1, qmem.base, cqid, qprio,
                                                   pc), check, f"Create I/O SQ {qid}")
        if cqe.ok:
            self._new_sq(qid, entries, cqid, high, qmem=qmem)
            self.cqs[cqid].sqids.append(qid)
        else:
            qmem.free(self.mem)
        return cqe

    async def delete_io_sq(self, qid, check=True):
        """Delete I/O SQ `qid`. The controller completes what the SQ still held (SQ deletion
        aborts) before this command's completion; commands the host still counts as
        outstanding afterwards fail with NvmeAborted."""
        cqe = await self.admin(ns.sqe_delete_io_sq(qid), check, f"Delete I/O SQ {qid}")
        if cqe.ok and qid in self.sqs:
            # The SQ's last completions (deletion aborts) were written before this one's:
            # take them from its CQ before forgetting the SQ.
            cq = self.cqs.get(self.sqs[qid].cqid)
            if cq is not None:
                while cq.draining:
                    await Timer(100, unit="ns")
                await self.drain_cq(cq)
            sq = self.sqs.pop(qid)
            for cmd in sq.outstanding.values():
                cmd._complete(error=NvmeAborted(f"{cmd!r}: SQ{qid} deleted, no completion"))
                if cq:
                    cq.outstanding -= 1
            if cq and qid in cq.sqids:
                cq.sqids.remove(qid)
            sq.qmem.free(self.mem)
            self._space.set()
        return cqe

    async def delete_io_cq(self, qid, check=True):
        cqe = await self.admin(ns.sqe_delete_io_cq(qid), check, f"Delete I/O CQ {qid}")
        if cqe.ok and qid in self.cqs:
            cq = self.cqs.pop(qid)
            cq.qmem.free(self.mem)
        return cqe

    async def abort(self, sqid, cid, check=True):
        """Abort; returns the Cqe (dw0 bit 0 = 0: the command was aborted)."""
        return await self.admin(ns.sqe_abort(sqid, cid), check, "Abort")

    async def async_event_request(self):
        """Submit an Asynchronous Event Request; returns its Command (completes on an event;
        it is not subject to the command timeout: await cmd.wait(timeout_us))."""
        return await self.submit(0, ns.sqe_async_event_request())

    async def keep_alive(self, check=True):
        return await self.admin(ns.sqe_keep_alive(), check, "Keep Alive")

    # I/O helpers ---------------------------------------------------------------------------------

    async def io(self, qid, sqe, buf=None, check=True, what="I/O command", timeout_us=None):
        """Run an I/O command with the PRPs of `buf`; raises NvmeError if `check`."""
        if buf is not None:
            sqe.prp1, sqe.prp2 = buf.prp1, buf.prp2
        cqe = await self.execute(qid, sqe, timeout_us)
        if check and not cqe.ok:
            raise NvmeError(cqe, sqe, what)
        return cqe

    async def read(self, qid, slba, nlb, nsid=1, offset=0, list_offset=0, high=None,
                   check=True, fua=False, timeout_us=None):
        """Read `nlb` blocks; returns the data (raises NvmeError on a non-success status).
        offset / list_offset / high place the buffer and its PRP list (see build_prps)."""
        buf = build_prps(self.mem, nlb * self.lba_size, offset, list_offset, high)
        buf.write(self.mem, bytes([0xA5]) * buf.length)     # stale data must not pass
        try:
            await self.io(qid, ns.sqe_read(slba, nlb, nsid, fua=fua), buf, check,
                          f"Read {slba}+{nlb}", timeout_us)
            return buf.read(self.mem)
        finally:
            buf.free(self.mem)

    async def read_cmd(self, qid, slba, nlb, nsid=1, **prp_opts):
        """Read without checking: (cqe, data)."""
        buf = build_prps(self.mem, nlb * self.lba_size, **prp_opts)
        try:
            cqe = await self.io(qid, ns.sqe_read(slba, nlb, nsid), buf, check=False)
            return cqe, buf.read(self.mem)
        finally:
            buf.free(self.mem)

    async def write(self, qid, slba, data, nsid=1, offset=0, list_offset=0, high=None,
                    check=True, fua=False, timeout_us=None):
        """Write `data` (a whole number of blocks) at `slba`; returns the Cqe."""
        if not data or len(data) % self.lba_size:
            raise ValueError(f"write: {len(data)} bytes, not whole {self.lba_size}-byte blocks")
        buf = build_prps(self.mem, len(data), offset, list_offset, high)
        buf.write(self.mem, data)
        try:
            return await self.io(qid, ns.sqe_write(slba, len(data) // self.lba_size, nsid,
                                                   fua=fua), buf, check,
                                 f"Write {slba}+{len(data) // self.lba_size}", timeout_us)
        finally:
            buf.free(self.mem)

    async def flush(self, qid, nsid=1, check=True):
        return await self.io(qid, ns.sqe_flush(nsid), check=check, what="Flush")

    async def dataset_management(self, qid, ranges, attributes=ns.DSM_AD, nsid=1, check=True,
                                 **prp_opts):
        """`ranges`: DsmRange objects or (slba, nlb) pairs."""
        ranges = [r if isinstance(r, ns.DsmRange) else ns.DsmRange(*r) for r in ranges]
        raw = ns.build_dsm_ranges(ranges)
        buf = build_prps(self.mem, len(raw), **prp_opts)
        buf.write(self.mem, raw)
        try:
            return await self.io(qid, ns.sqe_dataset_management(len(ranges), attributes, nsid),
                                 buf, check, "Dataset Management")
        finally:
            buf.free(self.mem)

    async def write_zeroes(self, qid, slba, nlb, nsid=1, deac=False, check=True):
        return await self.io(qid, ns.sqe_write_zeroes(slba, nlb, nsid, deac), check=check,
                             what=f"Write Zeroes {slba}+{nlb}")

