# SPDX-License-Identifier: BSD-2-Clause
"""Seeded random NVMe commands against the simulated drive with the shipped C firmware: admin
and I/O opcodes (valid, invalid, vendor), reserved bits and dwords, namespaces, LBA ranges,
transfer sizes, PRPs (aligned, with offsets, lists), queue creation and deletion, and doorbell
writes to queues that do not exist, with a verify job reading a region written before the run
every few commands.

Every command must complete (no hang) with a status the NVMe specification defines (or
success); the region must read back unchanged; cases whose reserved fields the controller must
ignore (a Flush with every reserved dword set, Get Features Number of Queues with reserved
dwords) must succeed. At the end the controller still answers, queues the fuzzer created are
deleted again, and the report counts commands and distinct statuses.

The fuzzer keeps the host's memory safe, not the drive's: every PRP points into its own DMA
buffer (so a malformed command cannot make the drive write over the library's queues), and
writes, Write Zeroes and deallocations stay outside the verify region (those must change
data). Everything else is random. SEED=<n> replays a run.
"""

import collections
import struct

import pytest

from spec.nvme import _STATUS_TABLE, status_sc, status_sct

from .nvme_raw import Raw, sqe
from .test_drive import LBA, Image, env, rng_for  # noqa: F401 (env: the drive fixture)

ARM = 0x55AA1234                        # spec/nvme.py Fault.ARM: never sent here
VERIFY_LBAS = 512
BUF_PAGES = 40                          # the fuzzer's DMA buffer (160 KiB: MDTS + a list)
PAGE = 4096


@pytest.fixture
def d(env):  # noqa: F811
    return env.drive()


def spec_status(st):
    """Success, or a status code the specification's tables name."""
    return st == 0 or (status_sct(st), status_sc(st)) in _STATUS_TABLE


class Fuzzer:
    def __init__(self, d, rng):
        self.d, self.rng, self.raw = d, rng, Raw(d)
        info = d.info()
        self.nsze, self.mdts = info["ns_blocks"], info["max_transfer"]
        self.n_io = info["n_io_queues"]
        self.buf = self.raw.dma(BUF_PAGES * PAGE)
        self.raw.poke(self.buf, 0, bytes(BUF_PAGES * PAGE))
        self.vbase = rng.randrange(0, self.nsze // VERIFY_LBAS) * VERIFY_LBAS
        self.statuses = collections.Counter()
        self.sent = 0
        self.created = []               # (qid, is_cq) the fuzzer created and must delete

    # --- PRPs: always inside the fuzzer's buffer --------------------------------------------
    def prps(self, nbytes):
        """PRP1 / PRP2 for a transfer of nbytes: usually well formed (direct or a list built
        in the buffer's last page), sometimes with a PRP1 offset, a misaligned entry or a
        PRP2 offset (malformed: the drive must refuse, or move data only inside the buffer)."""
        rng, base = self.rng, self.buf.bus
        off = 0
        kind = rng.random()
        if kind < 0.15:
            off = rng.randrange(1, PAGE // 4) * 4      # dword-aligned offset: legal
        elif kind < 0.2:
            off = rng.randrange(1, PAGE) | 1           # not dword aligned: PRP Offset Invalid
        prp1 = base + off
        first = PAGE - (off & (PAGE - 1))
        if nbytes <= first:
            return prp1, rng.choice([0, base + PAGE])
        if nbytes <= first + PAGE:
            return prp1, base + PAGE + (rng.choice([0, 0, 0, 0x80]))
        pages = (nbytes - first + PAGE - 1) // PAGE
        lst = base + (BUF_PAGES - 1) * PAGE
        entries = [base + (1 + k) * PAGE for k in range(min(pages, BUF_PAGES - 2))]
        if rng.random() < 0.1:
            entries[rng.randrange(len(entries))] += 0x200   # entry with an offset: invalid
        self.raw.poke(self.buf, (BUF_PAGES - 1) * PAGE, struct.pack(f"<{len(entries)}Q",
                                                                    *entries))
        return prp1, lst

    # --- one command ----------------------------------------------------------------------
    def admin(self):
        rng = self.rng
        r = rng.random()
        if r < 0.15:        # Identify
            cns = rng.choice([0, 1, 2, 3, rng.randrange(256)])
            c = sqe(0x06, nsid=rng.choice([0, 1, 2, 0xFFFFFFFF, rng.getrandbits(32)]),
                    cdw10=cns | rng.choice([0, rng.getrandbits(16) << 16]))
            c.prp1, c.prp2 = self.prps(PAGE)
        elif r < 0.3:       # Get Log Page
            numd = rng.choice([127, 1023, rng.randrange(1 << 12), rng.getrandbits(27)])
            lid = rng.choice([1, 2, 3, 0xC0, rng.randrange(256)])
            c = sqe(0x02, nsid=rng.choice([0, 1, 0xFFFFFFFF, 5]),
                    cdw10=lid | (numd & 0xFFFF) << 16 | rng.choice([0, 1 << 15]),
                    cdw11=numd >> 16, cdw12=rng.choice([0, 4, 512, rng.getrandbits(32)]))
            c.prp1, c.prp2 = self.prps(min((numd + 1) * 4, self.mdts))
        elif r < 0.45:      # Get / Set Features
            fid = rng.choice([1, 2, 4, 6, 7, 8, 9, 0xB, rng.randrange(256)])
            opc = rng.choice([0x09, 0x0A])
            c = sqe(opc, nsid=rng.choice([0, 1, 0xFFFFFFFF]),
                    cdw10=fid | rng.choice([0, 1 << 31, rng.randrange(4) << 8]),
                    cdw11=rng.getrandbits(32))
            if opc == 0x09 and fid == 6:
                c.cdw11 &= 1                    # the write cache on or off: both fine
            c.prp1, c.prp2 = self.prps(PAGE)
        elif r < 0.55:      # Abort
            c = sqe(0x08, cdw10=rng.randrange(0, 70) | rng.getrandbits(16) << 16)
        elif r < 0.7:       # queue creation / deletion, never the library's queues
            qid = rng.choice([0, self.n_io + 1 + rng.randrange(8), rng.randrange(65, 0x10000)])
            opc = rng.choice([0x00, 0x01, 0x04, 0x05])
            size = rng.choice([0, 1, 15, rng.randrange(1 << 16)])
            c = sqe(opc, cdw10=qid | size << 16,
                    cdw11=rng.choice([1, 3, 0]) | rng.randrange(0, 3) << 1 |
                    rng.choice([qid, 1, 0, rng.randrange(70)]) << 16)
            c.prp1 = self.buf.bus + rng.choice([0, 0, PAGE, 0x10])
        elif r < 0.75:      # ssdlab's fault injection, never armed
            c = sqe(0xC1, cdw10=rng.getrandbits(32), cdw12=rng.getrandbits(31) << 1 | 1)
            assert c.cdw12 != ARM
        else:               # anything else: a random opcode and dwords
            opc = rng.choice([o for o in range(256)
                              if o not in (0x80, 0x84, 0x0C, 0xC1, 0x00, 0x01, 0x04, 0x05)])
            c = sqe(opc, nsid=rng.getrandbits(32), **{f"cdw{k}": rng.getrandbits(32)
                                                      for k in range(10, 16)})
            c.prp1, c.prp2 = self.prps(PAGE)
        st = self.raw.admin(c)[0]
        if st == 0 and c.opc in (0x01, 0x05):
            self.created.append((c.cdw10 & 0xFFFF, c.opc == 0x05))
        if st == 0 and c.opc in (0x00, 0x04):
            self.created = [q for q in self.created if q != (c.cdw10 & 0xFFFF, c.opc == 0x04)]
        return c, st

    def outside_verify(self, nlb):
        while True:
            slba = self.rng.randrange(0, max(1, self.nsze - nlb))
            if slba + nlb <= self.vbase or slba >= self.vbase + VERIFY_LBAS:
                return slba

    def io(self):
        rng = self.rng
        r = rng.random()
        nlb = rng.choice([1, 8, rng.randrange(1, self.mdts // LBA + 1),
                          rng.randrange(1, 1 << 16)])
        if r < 0.25:        # Read: anywhere, in range or not
            slba = rng.choice([rng.randrange(self.nsze), self.nsze - 1, self.nsze,
                               rng.getrandbits(64)])
            c = sqe(0x02, nsid=rng.choice([1, 1, 1, 0, 2, 0xFFFFFFFF]), cdw10=slba,
                    cdw11=slba >> 32, cdw12=(nlb - 1) | rng.choice([0, 1 << 30]))
            c.prp1, c.prp2 = self.prps(min(nlb * LBA, self.mdts))
        elif r < 0.45:      # Write: outside the verify region only
            nlb = min(nlb, 64)
            slba = self.outside_verify(nlb)
            c = sqe(0x01, nsid=rng.choice([1, 1, 1, 2]), cdw10=slba, cdw11=slba >> 32,
                    cdw12=(nlb - 1) | rng.choice([0, 1 << 30]))
            c.prp1, c.prp2 = self.prps(nlb * LBA)
        elif r < 0.55:      # Write Zeroes, outside the region
            nlb = min(nlb, 256)
            slba = self.outside_verify(nlb)
            c = sqe(0x08, nsid=1, cdw10=slba, cdw11=slba >> 32,
                    cdw12=(nlb - 1) | rng.choice([0, 1 << 25, 1 << 30]))
        elif r < 0.65:      # Dataset Management: ranges outside the region, odd attributes
            nr = rng.randrange(1, 5)
            ranges = b""
            for _ in range(nr):
                n = rng.randrange(1, 512)
                ranges += struct.pack("<IIQ", rng.getrandbits(32), n, self.outside_verify(n))
            self.raw.poke(self.buf, 0, ranges)
            c = sqe(0x09, nsid=1, cdw10=(nr - 1) | rng.choice([0, rng.getrandbits(24) << 8]),
                    cdw11=rng.choice([4, 0, 1, 2, 7, rng.getrandbits(32)]))
            c.prp1, c.prp2 = self.buf.bus, 0
        elif r < 0.75:      # Flush, nsid good or not
            c = sqe(0x00, nsid=rng.choice([1, 0xFFFFFFFF, 0, 2]))
        else:               # a random I/O opcode and dwords (not the ones that change data)
            opc = rng.choice([o for o in range(256) if o not in (0x01, 0x08, 0x09)])
            c = sqe(opc, nsid=rng.choice([1, rng.getrandbits(32)]),
                    **{f"cdw{k}": rng.getrandbits(32) for k in range(10, 16)})
            if opc == 0x02:
                c.cdw12 &= 0x7FFF001F   # a Read: within MDTS and the buffer
            c.prp1, c.prp2 = self.prps(PAGE)
        return c, self.raw.io(c)[0]

    def must_succeed(self):
        """Reserved fields the controller ignores: these succeed whatever they hold."""
        rng = self.rng
        c = sqe(0x00, nsid=1, **{f"cdw{k}": rng.getrandbits(32) for k in range(10, 16)})
        st = self.raw.io(c)[0]
        assert st == 0, f"Flush with reserved dwords set: {st:#x}"
        c = sqe(0x0A, cdw10=7, **{f"cdw{k}": rng.getrandbits(32) for k in range(12, 16)})
        st = self.raw.admin(c)[0]
        assert st == 0, f"Get Features (Number of Queues) with reserved dwords set: {st:#x}"
        return 2

    def doorbell(self):
        """A doorbell write to a queue that does not exist: an invalid doorbell (the error
        is an asynchronous event, the command stream goes on)."""
        qid = self.rng.randrange(self.n_io + 9, 64)
        if all(q != qid for q, _ in self.created):
            self.raw.doorbell(qid, self.rng.random() < 0.5, self.rng.getrandbits(16))

    def cleanup(self):
        for qid, is_cq in sorted(self.created, key=lambda q: q[1]):     # SQs first
            st = self.raw.admin(sqe(0x04 if is_cq else 0x00, cdw10=qid))[0]
            assert st == 0 or not is_cq, (qid, is_cq, hex(st))
        # a CQ whose SQ was created by the fuzzer with another CQ: deleted above; retry once
        for qid, is_cq in self.created:
            if is_cq:
                self.raw.admin(sqe(0x04, cdw10=qid))
        self.created = []


def fuzz(d, request, commands):
    rng = rng_for(request)
    f = Fuzzer(d, rng)
    img = Image(f.vbase, VERIFY_LBAS)
    img.write(d, f.vbase, VERIFY_LBAS, rng.randrange(1, 1 << 31))
    d.flush()
    verified = 0
    odd = []
    for k in range(commands):
        if k % 50 == 49:
            f.sent += f.must_succeed()
        if rng.random() < 0.05:
            f.doorbell()
        c, st = f.admin() if rng.random() < 0.45 else f.io()
        f.sent += 1
        f.statuses[st & 0x7FF] += 1
        if not spec_status(st):
            odd.append((c.opc, hex(st)))
        if k % 25 == 24:
            img.verify(d)
            verified += 1
    assert not odd, f"statuses the specification does not define: {odd[:10]}"
    f.cleanup()
    img.verify(d)
    info = d.info()
    assert info["ns_blocks"] == f.nsze
    names = {f"{s:#05x}": n for s, n in sorted(f.statuses.items())}
    print(f"fuzz: {f.sent} commands, {len(f.statuses)} distinct statuses {names}, 0 hangs, "
          f"{verified + 1} verify reads of {VERIFY_LBAS} LBAs, 0 corrupted")
    return f


@pytest.mark.smoke
def test_fuzz_smoke(d, request):
    f = fuzz(d, request, 300)
    assert len(f.statuses) >= 6, f.statuses


@pytest.mark.full
def test_fuzz_full(d, request):
    fuzz(d, request, 5000)
