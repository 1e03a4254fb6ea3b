# SPDX-License-Identifier: BSD-2-Clause
"""NVMe compliance of the simulated drive with the shipped C firmware (sw/firmware): the
groups of the cocotb compliance suite (tests/nvme/nvme_controller/test_nvme_compliance.py,
UNH-IOL-like), against the whole drive (SoC, C firmware, FTL, NAND) through libssdlab.

The command-level cases are one table, tests/lib/nvme_compliance_cases.py, which the cocotb
suite runs against the Python firmware model too: the two firmwares are held equal by it.
Where the drive differs from the cocotb bench (queue counts, MQES, MDTS, namespace size,
Format NVM, the write cache), the expectations come from the drive's own CAP, Identify and
Number of Queues. Groups, test name prefix (NVMe 1.4 sections):

  1 `test_regs`         CAP, VS, CC / CSTS, AQA / ASQ / ACQ, INTMS / INTMC (3.1)
  2 `test_init_*`       controller reset with commands outstanding, normal shutdown (7.6)
  3-7 `test_table[*]`   the shared table: identify (5.15), features (5.9, 5.21), log (5.14),
                        queue (5.3-5.6, PRP-list queues), nvm (6, PRPs 4.3), err (4.6, 5.1)
  8 `test_qm_*`         queue mechanics by hand on queues in the test's memory: 2- and
                        3-entry queues wrapping many times, a CQ smaller than its SQ (full
                        CQ), PSDT on a queue libssdlab does not rewrite; every I/O queue
  9 interrupts          per MSI-X vector, coalescing, CD, MSI: test_drive.py
                        test_msix_vectors_coalescing (the harness counts per vector)
 10 `test_err_*`        SQ deletion with commands outstanding, invalid doorbell writes as
                        asynchronous events (00h, 01h) masked until the log is read; Abort
                        and the AER limit: test_drive.py test_admin_aer_abort
 11 `test_random_*`     a seeded random I/O stream (PRP forms of the table's layout) against
                        a shadow of the LBAs it touches: 200 commands in smoke, 3000 in full

Already covered elsewhere and not repeated: Format NVM (test_admin_format), Dataset
Management details and Write Zeroes (test_dsm_write_zeroes_flush), shutdown and power cycle
(test_shutdown_restart), fuzzing (test_fuzz.py). SEED=<n> replays a run (printed).
"""

import time

import pytest
from nvme_compliance_cases import PAGE, PROBES, Facts, Result, cases, groups, plan, verify

from sw.ssdlab.drive import Drive

from . import nvme_raw as nr
from .nvme_raw import Raw, sqe
from .test_drive import SEED, env, rng_for  # noqa: F401 (env: the drive fixture)

GROUPS = ("identify", "features", "log", "nvm", "err", "queue")
QUEUES = 4                  # I/O queue pairs the module's controller asks for (G)
OWN = 3                     # the pair tests take from the library and build by hand


@pytest.fixture
def d(env, request):  # noqa: F811
    """The open controller, QUEUES I/O queue pairs; a test that changed its queues calls
    env.abandon() (the next one resets the controller)."""
    print(f"SEED={SEED} (replay: SEED={SEED} make test T={request.node.nodeid})")
    if env.d is None:
        env.d = Drive(sim=env.sim.socket, queues=QUEUES)
    return env.d


class OwnPair:
    """I/O queue pair `qid` in the test's own DMA memory, used by hand (SQEs, tail and head
    doorbells, phase tags); the library's pair `qid` is deleted first (the test abandons the
    controller afterwards). Interrupts off (IEN 0): the CQ is polled, simulated time passes
    on CSTS reads."""

    def __init__(self, raw, qid, sq_entries=16, cq_entries=16):
        self.raw, self.qid = raw, qid
        self.sqn, self.cqn = sq_entries, cq_entries
        if raw.admin(sqe(0x00, cdw10=qid))[0] == 0:
            assert raw.admin(sqe(0x04, cdw10=qid))[0] == 0
        self.sq = raw.dma(-(-64 * sq_entries // PAGE) * PAGE)
        self.cq = raw.dma(-(-16 * cq_entries // PAGE) * PAGE)
        raw.poke(self.cq, 0, bytes(16 * cq_entries))
        st = raw.admin(sqe(0x05, prp1=self.cq.bus, cdw10=qid | (cq_entries - 1) << 16,
                           cdw11=1))[0]
        assert st == 0, f"create CQ {qid}: {st:#x}"
        st = raw.admin(sqe(0x01, prp1=self.sq.bus, cdw10=qid | (sq_entries - 1) << 16,
                           cdw11=1 | qid << 16))[0]
        assert st == 0, f"create SQ {qid}: {st:#x}"
        self.tail = self.head = 0
        self.phase = 1
        self.cid = 0

    def put(self, cmd):
        """Place an SQE (an spec.nvme Sqe) at the tail, CID assigned; not rung."""
        self.cid = (self.cid + 1) & 0xFFFF
        cmd.cid = self.cid
        self.raw.poke(self.sq, 64 * self.tail, cmd.pack())
        self.tail = (self.tail + 1) % self.sqn
        return cmd.cid

    def ring(self):
        self.raw.doorbell(self.qid, False, self.tail)

    def peek_new(self):
        """CQEs posted since the host's head, not consumed: [(dw0, sqhd, sqid, cid, status)]."""
        out, slot, phase = [], self.head, self.phase
        while len(out) < self.cqn:
            dw0, sqhd, sqid, cid, ph, st = nr.cqe_unpack(self.raw.peek(self.cq, 16 * slot, 16))
            if ph != phase:
                break
            out.append((dw0, sqhd, sqid, cid, st))
            slot = (slot + 1) % self.cqn
            phase ^= slot == 0
        return out

    def take(self, n, timeout_ns=200_000_000, ring=True):
        """Wait for n CQEs, consume them (head doorbell rung once when `ring`)."""
        d, got = self.raw.d, []
        deadline = d.time_ns() + timeout_ns
        while len(got) < n:
            new = self.peek_new()[:n - len(got)]
            for _ in new:
                self.head = (self.head + 1) % self.cqn
                self.phase ^= self.head == 0
            got += new
            if new and ring:
                self.raw.doorbell(self.qid, True, self.head)
            if len(got) < n:
                assert d.time_ns() < deadline, f"Q{self.qid}: {len(got)} of {n} completions"
                self.raw.bar_read32(0x1C)
        return got

    def execute(self, cmd):
        cid = self.put(cmd)
        self.ring()
        dw0, _, sqid, got_cid, st = self.take(1)[0]
        assert (sqid, got_cid) == (self.qid, cid), (sqid, got_cid, cid)
        return st, dw0, cid

    def delete(self):
        assert self.raw.admin(sqe(0x00, cdw10=self.qid))[0] == 0
        assert self.raw.admin(sqe(0x04, cdw10=self.qid))[0] == 0


# --- the shared table ------------------------------------------------------------------------

def execute(raw, case, own=None):
    """One case: its memory (zeroed, in DMA memory of its own; kept by `raw` until the test
    frees it), its PRPs, the command through sl_admin / sl_io (PRPs as given), the data.
    libssdlab forces PSDT 00b: an I/O case with PSDT set goes to `own` (an OwnPair)."""
    n = case.pages()
    m = raw.dma(n * PAGE) if n else None
    base = m.bus if m else 0
    if m:
        raw.poke(m, 0, bytes(n * PAGE))
    s, pokes, spans = plan(case, base)
    for addr, data in pokes:
        raw.poke(m, addr - base, data)
    c = nr.Sqe.from_buffer_copy(s.pack())
    if s.psdt and case.qid:
        st, dw0, cid = own.execute(s)
        return Result(st, dw0, cid, b"".join(raw.peek(m, a - base, k) for a, k in spans))
    if case.qid == 0:
        st, dw0, _ = raw.admin(c)
    else:
        st, dw0, _ = raw.io(c, qid=case.qid)
    data = b"".join(raw.peek(m, a - base, k) for a, k in spans)
    return Result(st, dw0, c.cid, data)


def probe(d, raw):
    results = {c.name: execute(raw, c) for c in PROBES}
    assert all(r.status == 0 for r in results.values()), results
    return Facts.from_probes(d.info()["cap"], results), results


def run_table(env, d, only):  # noqa: F811
    raw = Raw(d)
    facts, results = probe(d, raw)
    table = cases(facts, only)
    problems, prev, own, skipped = [], None, None, []
    t0 = time.monotonic()
    for case in table:
        if case.sqe.psdt and case.qid == 0:
            skipped.append(case.name)       # sl_admin forces PSDT 00b: not expressible
            continue
        if case.sqe.psdt and own is None:
            own = OwnPair(raw, OWN)
        res = execute(raw, case, own)
        results[case.name] = res
        problems += verify(case, res, facts, {"results": results, "prev": prev, "res": res})
        prev = res
    raw.free()
    print(f"compliance table {'+'.join(only)}: {len(table) - len(skipped)} cases "
          f"{groups(table)} against the C firmware, {skipped or 'none'} not expressible "
          f"through libssdlab"
          f" ({time.monotonic() - t0:.1f} s wall); drive: G={facts.nq} of "
          f"{facts.nq_max} queues, MQES {facts.mqes}, MDTS {facts.max_transfer} B, NSZE "
          f"{facts.nsze}, OACS {facts.id_ctrl.oacs:#x}, VWC {facts.id_ctrl.vwc}")
    if "queue" in only or own is not None:
        env.abandon()       # queue pair G was rebuilt and deleted: the next test resets
    assert not problems, f"{len(problems)} of {len(table)} cases differ:\n" + \
        "\n".join(problems)


@pytest.mark.smoke
@pytest.mark.parametrize("group", GROUPS)
def test_table(env, d, group):  # noqa: F811
    run_table(env, d, (group,))
