# SPDX-License-Identifier: BSD-2-Clause
"""Power cuts at random cycles of the simulated drive, checked against a host-side model.

Each cut: a phase (sequential, random or FUA writes, Dataset Management deallocate, Write
Zeroes, a Flush between two batches, GC-heavy overwrites, a Format NVM) is submitted
asynchronously with per-LBA patterns, the simulation runs a seeded random time (so the cut
lands on a random cycle: inside programs, erases, GC, journal commits, checkpoints), the
completions that reached host memory are reaped, and the harness cuts the power
(`sl_transport_power_cut`: SB_RESET with SB_RESET_POWER_CUT, the dies lose power too:
programs and erases in flight are torn). The drive boots again; the host opens it afresh and
reads the region back:

- durable data is there: a unit whose last durable command (a completed FUA write or Write
  Zeroes; any completed write or Write Zeroes with the volatile write cache off; a command
  completed before a completed Flush was submitted; a completed Format) holds that command's
  data or a later command's;
- every unit holds one of the values it could have (the durable one or a later submitted
  command's, completed or not), the same command's for its 8 LBAs (never a mix within a
  4 KiB unit), each LBA its own pattern (never another LBA's data);
- SMART unsafe shutdowns went up by exactly 1.

Commands in flight at once never share a unit, so every unit's commands form a chain in
submit order. SEED=<n> replays a run; POWERCUT_CUTS=<n> overrides the number of cuts.
Testplan: tests/system/drive/README.md.
"""

import ctypes
import errno
import math
import os
import random
import time
from collections import Counter

import pytest

from sw.ssdlab.drive import load_library

from . import test_drive as td
from .nvme_raw import CB, Dma, Raw, _lib, sqe
from .test_drive import LBA, SEED, UNIT

env = td.env                     # the drive fixture (this module starts a drive of its own)

UNIT_BYTES = UNIT * LBA
MAX_UNITS = 32                   # units per command (128 KiB, the MDTS)
PHASES = ("seq", "rand", "fua", "trim", "zeroes", "flush", "gc", "format")
# Relative weights of the phases; the full tier adds Format NVM (about 45 s wall each).
WEIGHTS = {"seq": 3, "rand": 3, "fua": 3, "trim": 2, "zeroes": 2, "flush": 3, "gc": 2,
           "format": 0}


# --- asynchronous commands ------------------------------------------------------------------

class Cmd:
    """One submitted command: kind, first unit, unit count, seed (0: zeroes), fua."""

    def __init__(self, kind, u0=0, n=0, seed=0, fua=False):
        self.kind, self.u0, self.n, self.seed, self.fua = kind, u0, n, seed, fua
        self.order = None        # submit order in the round
        self.done = False        # completion reaped before the cut
        self.status = None
        self.reaped_at = None    # reap pass that saw the completion
        self.submitted_pass = 0  # reap passes before the submission

    def units(self):
        return range(self.u0, self.u0 + self.n)

    def __repr__(self):
        return (f"{self.kind}#{self.order}(u{self.u0}+{self.n} seed={self.seed}"
                f"{' fua' if self.fua else ''}{' done' if self.done else ''})")


class Async:
    """Asynchronous submission on an open Drive: sl_submit with DMA buffers, sl_reap."""

    def __init__(self, d, base_lba):
        self.d, self.c, self.lib = d, d._c, _lib()
        self.base = base_lba
        self.by_cid = {}
        self._cbs = []
        self.pass_no = 0

    def _dma(self, nbytes):
        m = Dma()
        rc = self.lib.sl_dma_alloc(self.c, max(nbytes, 4096), ctypes.byref(m))
        if rc < 0:
            raise OSError(-rc, self.lib.sl_errmsg(self.c).decode())
        return m

    def submit(self, cmd, qid=1):
        lba = self.base + cmd.u0 * UNIT
        nlb = cmd.n * UNIT
        buf, length = None, 0
        if cmd.kind == "write":
            length = nlb * LBA
            buf = self._dma(length)
            fill = load_library().sl_pattern_fill
            for i in range(nlb):
                fill(cmd.seed, lba + i, ctypes.c_char_p(buf.vaddr + i * LBA), LBA)
            s = sqe(0x01, nsid=1, cdw10=lba, cdw11=lba >> 32,
                    cdw12=(nlb - 1) | (int(cmd.fua) << 30))
        elif cmd.kind == "zeroes":
            s = sqe(0x08, nsid=1, cdw10=lba, cdw11=lba >> 32,
                    cdw12=(nlb - 1) | (int(cmd.fua) << 30))
        elif cmd.kind == "trim":
            length = 16
            buf = self._dma(length)
            ctypes.memmove(buf.vaddr, (0).to_bytes(4, "little") + nlb.to_bytes(4, "little")
                           + lba.to_bytes(8, "little"), 16)
            s = sqe(0x09, nsid=1, cdw10=0, cdw11=1 << 2)
        elif cmd.kind == "flush":
            s = sqe(0x00, nsid=1)
        elif cmd.kind == "format":
            qid = 0
            s = sqe(0x80, nsid=1, cdw10=0)
        else:
            raise ValueError(cmd.kind)

        def cb(cpl, _user, cmd=cmd):
            cmd.done = True
            cmd.status = cpl.contents.status
            cmd.reaped_at = self.pass_no
        fn = CB(cb)
        self._cbs.append(fn)
        while True:
            rc = self.lib.sl_submit(self.c, qid, ctypes.byref(s),
                                    ctypes.byref(buf) if buf else None, 0, length, fn, None)
            if rc != -errno.EBUSY:
                break
            # the queue is full: a host waits for a completion that frees a slot (a reap
            # pass of its own, so what it completes counts as completed before what follows)
            self.pass_no += 1
            w = self.lib.sl_wait(self.c, qid, 1, 10_000_000)
            if w < 0 and w != -errno.ETIMEDOUT:
                raise OSError(-w, self.lib.sl_errmsg(self.c).decode())
        if rc < 0:
            raise OSError(-rc, self.lib.sl_errmsg(self.c).decode())

    def reap(self):
        """Process the completions already in host memory (no simulated time passes)."""
        self.pass_no += 1
        for qid in (0, 1):
            rc = self.lib.sl_reap(self.c, qid, 0)
            assert rc >= 0, self.lib.sl_errmsg(self.c).decode()


# --- the model ---------------------------------------------------------------------------------

class Model:
    """What each 4 KiB unit of the region holds: the seed of its value (0: zeroes)."""

    def __init__(self, n_units):
        self.n = n_units
        self.value = [0] * n_units           # durable at the start of the round
        self.patterns = {}

    def unit_pattern(self, seed, lba):
        key = (seed, lba)
        p = self.patterns.get(key)
        if p is None:
            p = td.pattern(seed, lba, UNIT)
            if len(self.patterns) > 20000:
                self.patterns.clear()
            self.patterns[key] = p
        return p

    def expectations(self, cmds, vwc):
        """Per unit: (allowed seeds, durable seed or None, the seeds older than the durable
        command: reading one of them is a lost durable write)."""
        flushes = [c for c in cmds if c.kind == "flush" and c.done and c.status == 0]
        out = []
        chains = self.chains = [[] for _ in range(self.n)]
        for c in sorted(cmds, key=lambda c: c.order):
            if c.kind in ("write", "zeroes", "trim"):
                for u in c.units():
                    chains[u].append(c)
            elif c.kind == "format":
                for u in range(self.n):
                    chains[u].append(c)

        def durable(c):
            if not c.done or c.status != 0:
                return False
            if c.kind == "format":
                return True
            if c.fua and c.kind in ("write", "zeroes"):
                return True
            if not vwc and c.kind in ("write", "zeroes"):
                return True
            # completed before a completed Flush was submitted
            return any(c.reaped_at is not None and f.order > c.order and
                       c.reaped_at <= f.submitted_pass for f in flushes)

        for u in range(self.n):
            chain = chains[u]
            seeds = [self.value[u]] + [c.seed for c in chain]
            j = max((i + 1 for i, c in enumerate(chain) if durable(c)), default=0)
            allowed = set(seeds[j:])
            older = set(seeds[:j]) - allowed
            out.append((allowed, seeds[j] if j else None, older))
        return out


def _cut(env):
    """Power cut through the open controller's own connection; the controller is dropped
    without a shutdown (it no longer exists)."""
    d, env.d = env.d, None
    lib = load_library()
    t = lib.sl_ctrl_transport(d._c)
    rc = lib.sl_transport_power_cut(t)
    assert rc >= 0, lib.sl_transport_errmsg(t).decode()
    lib.sl_transport_close(t)
    d._c = None
    return rc


def _pick_free(rng, busy, n_units, n):
    """A run of n units none of which is busy (in flight), or None."""
    for _ in range(20):
        u0 = rng.randrange(0, n_units - n + 1)
        if not busy.intersection(range(u0, u0 + n)):
            return u0
    return None


def _batch(rng, phase, n_units):
    """One batch of the phase's commands, no two of them sharing a unit."""
    out, busy = [], set()

    def writes(count, sizes, fua_p, seq=False):
        u = rng.randrange(0, n_units)
        for _ in range(count):
            n = rng.choice(sizes)
            if seq:
                u0 = u if u + n <= n_units else 0
                u = u0 + n
                if busy.intersection(range(u0, u0 + n)):
                    continue
            else:
                u0 = _pick_free(rng, busy, n_units, n)
                if u0 is None:
                    continue
            busy.update(range(u0, u0 + n))
            out.append(Cmd("write", u0, n, rng.randrange(1, 1 << 31), rng.random() < fua_p))

    if phase == "seq":
        writes(rng.randrange(4, 17), [MAX_UNITS, 16, 8], 0.1, seq=True)
    elif phase == "rand":
        writes(rng.randrange(8, 33), [1, 1, 2, 4], 0.1)
    elif phase == "fua":
        writes(rng.randrange(4, 25), [1, 2, 4, 8], 1.0)
    elif phase in ("trim", "zeroes"):
        writes(rng.randrange(2, 9), [1, 4, 8], 0.2)
        for _ in range(rng.randrange(2, 7)):
            n = rng.choice([1, 2, 8, 16, MAX_UNITS])
            u0 = _pick_free(rng, busy, n_units, n)
            if u0 is not None:
                busy.update(range(u0, u0 + n))
                out.append(Cmd(phase, u0, n, 0, phase == "zeroes" and rng.random() < 0.3))
    elif phase == "flush":
        writes(rng.randrange(4, 17), [1, 2, 4, 8], 0.0)
    elif phase == "gc":
        writes(rng.randrange(24, 49), [1], 0.05)
    elif phase == "format":
        out.append(Cmd("format"))
    return out


def _advance_ns(rng, phase):
    """How long the round runs before the cut: log-uniform, so cuts land anywhere from the
    first fetch to well after the last completion (idle GC, journal commits)."""
    hi = {"gc": 100e6, "format": 400e6}.get(phase, 50e6)
    return int(math.exp(rng.uniform(math.log(5e3), math.log(hi))))


def _verify(d, model, base, expect):
    """Read the region; per unit: (status, seed) with status "ok", "lost" (an older value
    than the durable one), "mix" (LBAs of different commands) or "foreign" (no value it
    could hold). Returns the counts and the first problems."""
    counts = Counter()
    problems = []
    chunk = MAX_UNITS
    for u0 in range(0, model.n, chunk):
        k = min(chunk, model.n - u0)
        got = d.read(base + u0 * UNIT, k * UNIT)
        for i in range(k):
            u = u0 + i
            lba = base + u * UNIT
            data = got[i * UNIT_BYTES:(i + 1) * UNIT_BYTES]
            allowed, dur, older = expect[u]
            seed = next((s for s in allowed if model.unit_pattern(s, lba) == data), None)
            if seed is not None:
                counts["ok"] += 1
                model.value[u] = seed
                continue
            old = next((s for s in older if model.unit_pattern(s, lba) == data), None)
            if old is not None:
                kind = "lost"
            else:
                per_lba = set()
                for j in range(UNIT):
                    blk = data[j * LBA:(j + 1) * LBA]
                    per_lba.add(next((s for s in allowed | older
                                      if model.unit_pattern(s, lba)[j * LBA:(j + 1) * LBA]
                                      == blk), None))
                kind = "mix" if None not in per_lba and len(per_lba) > 1 else "foreign"
            counts[kind] += 1
            problems.append((u, kind, sorted(allowed), dur, old))
            model.value[u] = None
    return counts, problems


def _resettle(d, model, base):
    """After a failed unit: learn what the region holds now (seeds unknown: rewrite them)."""
    for u in range(model.n):
        if model.value[u] is None:
            seed = random.Random(f"{SEED}-{u}").randrange(1, 1 << 31)
            d.write(base + u * UNIT, td.pattern(seed, base + u * UNIT, UNIT))
            model.value[u] = seed
    d.flush()


def _fill(d, nsze):
    """The whole namespace written once (libssdlab's sequential 128 KiB writes at QD 8), so
    the drive has no never-written space left: overwrites in the region then use up the free
    blocks and GC moves data during the campaign."""
    step = MAX_UNITS * UNIT
    r = d.bench(write=True, io_blocks=step, qd=8, n_ios=nsze // step)
    assert r["errors"] == 0, r
    d.flush()


def campaign(env, n_cuts, n_units, weights, request, label, cover=False, fill=False):
    """n_cuts cuts over a region of n_units units; phases drawn by weight, or (cover) from
    a shuffled deck of every phase, so a few cuts hit different phases. fill: the whole
    drive written first (_fill), so the gc phase finds GC at work."""
    rng = random.Random(f"{SEED}-{request.node.name}")
    replay = f"SEED={SEED} make test T={request.node.nodeid}"
    print(f"\n{label}: {n_cuts} cuts over {n_units} units ({n_units * UNIT_BYTES >> 10} KiB); "
          f"SEED={SEED} (replay: {replay})")
    d = env.drive()
    nsze = d.info()["ns_blocks"]
    if fill:
        t = time.monotonic()
        _fill(d, nsze)
        print(f"{label}: the drive filled ({nsze} blocks) in {time.monotonic() - t:.0f} s")
    base = rng.randrange(0, (nsze - n_units * UNIT) // UNIT) * UNIT
    model = Model(n_units)
    # start from known contents: the region written once and flushed
    for u0 in range(0, n_units, MAX_UNITS):
        seed = rng.randrange(1, 1 << 31)
        k = min(MAX_UNITS, n_units - u0)
        d.write(base + u0 * UNIT, b"".join(td.pattern(seed, base + (u0 + i) * UNIT, UNIT)
                                           for i in range(k)))
        model.value[u0:u0 + k] = [seed] * k
    d.flush()
    phases = [p for p in PHASES if weights.get(p)]
    hits, totals, boots = Counter(), Counter(), []
    t_wall = time.monotonic()
    failures = []
    gc0 = d.ftl_log()["gc_units_moved"]
    deck = []
    for cut in range(n_cuts):
        wr = time.monotonic()
        if cover:
            if not deck:
                deck = rng.sample(phases, len(phases))
            phase = deck.pop()
        else:
            phase = rng.choices(phases, [weights[p] for p in phases])[0]
        vwc = rng.random() < 0.6
        d = env.drive()
        s0 = d.smart_log()
        _set_vwc(d, vwc)
        # batch A; a random run; its completions reaped; a Flush (the flush phase, and a
        # quarter of the others); batch B on the units not in flight; a random run; the cut
        a = _batch(rng, phase, n_units)
        b = _batch(rng, phase, n_units) if phase != "format" else []
        flush = phase == "flush" or (phase != "format" and rng.random() < 0.25)
        io = Async(d, base)
        order = 0
        for c in a:
            c.order, order = order, order + 1
            c.submitted_pass = io.pass_no
            io.submit(c)
        if b:
            d.idle(int(math.exp(rng.uniform(math.log(2e5), math.log(30e6)))))
            io.reap()
            if flush:
                f = Cmd("flush")
                f.order, order = order, order + 1
                f.submitted_pass = io.pass_no
                io.submit(f)
                a.append(f)
            busy = {u for c in a if not c.done for u in c.units()}
            for c in b:
                if busy.intersection(c.units()):
                    continue
                c.order, order = order, order + 1
                c.submitted_pass = io.pass_no
                io.submit(c)
                a.append(c)
        adv = _advance_ns(rng, phase)
        d.idle(adv)
        io.reap()
        cmds = a
        bad = [c for c in cmds if c.done and c.status != 0]
        assert not bad, f"cut {cut}: commands failed: {bad} (replay: {replay})"
        expect = model.expectations(cmds, vwc)
        w0 = time.monotonic()
        torn = _cut(env)
        d = env.drive()
        w1 = time.monotonic()
        s1 = d.smart_log()
        counts, problems = _verify(d, model, base, expect)
        v = d.ftl_log()
        w2 = time.monotonic()
        totals["torn"] += torn
        totals["cuts_tearing"] += torn > 0
        gc_moved = v["gc_units_moved"] - gc0
        gc0 = v["gc_units_moved"]
        totals["gc_cuts"] += phase == "gc" and gc_moved > 0
        totals["gc_moved"] += gc_moved
        boots.append(v["boot_cycles"])
        durable_units = sum(1 for e in expect if e[1] is not None)
        hits[phase] += 1
        totals["durable_units"] += durable_units
        totals["durable_cmds"] += sum(1 for c in cmds if c.kind != "flush" and any(
            expect[u][1] is not None for u in c.units()))
        totals["completed"] += sum(c.done for c in cmds)
        totals["in_flight"] += sum(not c.done for c in cmds)
        totals["jnl_replayed"] += v["jnl_replayed_pages"]
        for k_, n_ in counts.items():
            totals[k_] += n_
        unsafe = s1["unsafe_shutdowns"] - s0["unsafe_shutdowns"]
        line = (f"cut {cut:3d} {phase:6s} vwc={int(vwc)} at +{adv / 1e3:9.1f} us: "
                f"{sum(c.done for c in cmds)}/{len(cmds)} done, {durable_units} durable units; "
                f"{torn} pages/blocks torn; unsafe +{unsafe}; replayed "
                f"{v['jnl_replayed_pages']}; boot {v['boot_cycles']} cycles; gc moved "
                f"{gc_moved}; wall: round {w0 - wr:.1f} s, reboot {w1 - w0:.1f} s, check "
                f"{w2 - w1:.1f} s")
        print(line)
        if problems or unsafe != 1:
            failures.append((cut, phase, unsafe, problems[:8]))
            print(f"  FAIL cut {cut}: unsafe shutdowns +{unsafe}; {len(problems)} units: "
                  f"{problems[:8]}")
            for u, *_ in problems[:3]:
                print(f"  unit {u}: its commands {model.chains[u]}")
            _resettle(d, model, base)
    wall = time.monotonic() - t_wall
    print(f"{label}: {n_cuts} cuts in {wall:.0f} s wall; phases {dict(hits)}; "
          f"durable units checked {totals['durable_units']} (commands {totals['durable_cmds']});"
          f" units ok {totals['ok']}, lost {totals['lost']}, mixed {totals['mix']}, foreign "
          f"{totals['foreign']}; cuts that tore a program or erase {totals['cuts_tearing']} "
          f"({totals['torn']} pages/blocks); commands completed {totals['completed']}, in "
          f"flight at the cut {totals['in_flight']}; journal pages replayed "
          f"{totals['jnl_replayed']}; GC moved {totals['gc_moved']} units ({totals['gc_cuts']} "
          f"gc-phase cuts with GC at work); boot cycles min {min(boots)} max {max(boots)}")
    assert not failures, (f"{len(failures)} of {n_cuts} cuts failed, first: {failures[:3]} "
                          f"(replay: {replay})")
    return totals, hits


def _set_vwc(d, on):
    """Set Features 06h (Volatile Write Cache), not saved: a power cycle restores the default."""
    st, _, _ = Raw(d).admin(sqe(0x09, cdw10=0x06, cdw11=int(on)))
    assert st == 0, hex(st)


@pytest.mark.smoke
def test_powercut_smoke(env, request):
    n = int(os.environ.get("POWERCUT_CUTS") or 4)
    campaign(env, n, 128, WEIGHTS, request, "power-cut smoke", cover=True)


@pytest.mark.full
def test_powercut_full(env, request):
    n = int(os.environ.get("POWERCUT_CUTS") or 300)
    # every phase in turn (a shuffled deck), so a short run (POWERCUT_CUTS) hits them all
    totals, hits = campaign(env, n, 256, dict(WEIGHTS, format=1), request,
                            "power-cut campaign", cover=True, fill=True)
    # the gc phase found GC at work (the drive full: overwrites use up its free blocks)
    assert not hits["gc"] or totals["gc_cuts"], "no gc-phase cut saw GC move data"
