# SPDX-License-Identifier: BSD-2-Clause
"""soc/fw_wait.py: FwWait's WAIT read stalls exactly until a wake condition, in Migen's
simulator against the register description.

A free-running 64-bit uptime drives the core, as timer0's does in the SoC. Checked: the
deadline registers read back; WAIT with the deadline in the future stalls (ack withheld,
`waiting` high every stalled cycle) and is acknowledged with WAKE_DEADLINE on the cycle the
uptime reaches it, not one earlier; a deadline already passed returns at once; a wake
source level returns WAKE_SOURCE; a status that changed after ARM returns WAKE_STATUS while
one that changed before ARM does not wake; with no deadline and nothing changing the read
stays stalled; a register write (`wrote`) after ARM makes WAIT return at once with WAKE_WROTE
while one before ARM is forgotten; UPTIME_LO/HI read the uptime with the high word latched at
the low word's read; `wake_at` shows the deadline; bad parameters are refused naming the
field. With IDLE set, `active` (the hardware I/O path at work) never wakes the CPU, holds the
deadline off while high and for IDLE cycles after it falls, IDLE_SINCE reads the first idle
cycle, and `wake_at` follows (all ones while active).
"""

import pytest
from migen import Module, Signal, run_simulation

from soc.fw_wait import (
    NO_DEADLINE,
    REG_ARM,
    REG_DEADLINE_HI,
    REG_DEADLINE_LO,
    REG_IDLE,
    REG_IDLE_SINCE_HI,
    REG_IDLE_SINCE_LO,
    REG_UPTIME_HI,
    REG_UPTIME_LO,
    REG_WAIT,
    WAKE_DEADLINE,
    WAKE_SOURCE,
    WAKE_STATUS,
    WAKE_WROTE,
    FwWait,
)


class Top(Module):
    def __init__(self):
        self.uptime = Signal(64)
        self.sync += self.uptime.eq(self.uptime + 1)
        self.submodules.dut = FwWait(n_sources=2, n_status=8, uptime=self.uptime)


def access(dut, adr, we=False, dat=0, limit=10_000):
    """One Wishbone access; returns (data, cycles until ack, cycles `waiting` was high)."""
    bus = dut.bus
    yield bus.adr.eq(adr)
    yield bus.we.eq(int(we))
    yield bus.dat_w.eq(dat)
    yield bus.sel.eq(0xF)
    yield bus.cyc.eq(1)
    yield bus.stb.eq(1)
    n = waiting = 0
    while True:
        yield
        n += 1
        if (yield bus.ack):
            break
        waiting += (yield dut.waiting)
        assert n < limit, "no ack"
    data = yield bus.dat_r
    yield bus.cyc.eq(0)
    yield bus.stb.eq(0)
    yield
    return data, n, waiting


def stall_in_wait(dut, cycles):
    """Start a read of WAIT and leave it open: for `cycles` edges it is not acknowledged and
    the core says the CPU is waiting. The caller ends it."""
    bus = dut.bus
    yield bus.adr.eq(REG_WAIT)
    yield bus.we.eq(0)
    yield bus.cyc.eq(1)
    yield bus.stb.eq(1)
    for _ in range(cycles):
        yield
        assert not (yield bus.ack)
        assert (yield dut.waiting)


def set_deadline(dut, t):
    yield from access(dut, REG_DEADLINE_LO, True, t & 0xFFFFFFFF)
    yield from access(dut, REG_DEADLINE_HI, True, t >> 32)


def run(gen):
    top = Top()
    run_simulation(top, gen(top))


@pytest.mark.smoke
def test_fw_wait_deadline():
    def gen(top):
        dut = top.dut
        assert (yield dut.wake_at) == NO_DEADLINE
        now = yield top.uptime
        t = now + 200
        yield from set_deadline(dut, t)
        assert (yield from access(dut, REG_DEADLINE_LO))[0] == t & 0xFFFFFFFF
        assert (yield from access(dut, REG_DEADLINE_HI))[0] == t >> 32
        assert (yield dut.wake_at) == t
        yield from access(dut, REG_ARM, True, 1)
        data, n, waiting = yield from access(dut, REG_WAIT)
        after = yield top.uptime
        assert data == WAKE_DEADLINE
        # stalled until the uptime reached the deadline, acknowledged on the next edge
        assert waiting == n - 2 and n > 100, (n, waiting)
        assert after - 2 == t, (after, t)
        # a deadline in the past: at once
        data, n, waiting = yield from access(dut, REG_WAIT)
        assert (data, n, waiting) == (WAKE_DEADLINE, 2, 0)      # registered ack
    run(gen)


@pytest.mark.smoke
def test_fw_wait_sources_and_status():
    def gen(top):
        dut = top.dut
        yield from set_deadline(dut, NO_DEADLINE)
        yield dut.status.eq(0x5A)                   # changed before ARM: latched, no wake
        yield
        yield from access(dut, REG_ARM, True, 1)

        # nothing changes: stays stalled
        for _ in range(3):
            yield
        bus = dut.bus
        yield from stall_in_wait(dut, 500)
        yield dut.sources.eq(0b10)                  # a source level: wakes
        yield
        yield
        assert (yield bus.ack)
        assert (yield bus.dat_r) == WAKE_SOURCE
        yield bus.cyc.eq(0)
        yield bus.stb.eq(0)
        yield dut.sources.eq(0)
        yield
    run(gen)


@pytest.mark.smoke
def test_fw_wait_status_change_timing():
    """The status changes while the CPU is stalled: ack on the next edge with WAKE_STATUS."""
    def gen(top):
        dut = top.dut
        yield from set_deadline(dut, NO_DEADLINE)
        yield from access(dut, REG_ARM, True, 1)
        bus = dut.bus
        yield from stall_in_wait(dut, 40)
        yield dut.status.eq(1)
        yield
        yield
        assert (yield bus.ack) and (yield bus.dat_r) == WAKE_STATUS
    run(gen)


@pytest.mark.smoke
def test_fw_wait_register_write():
    """A register write since ARM: WAIT at once; one before ARM is forgotten."""
    def pulse(dut):
        yield dut.wrote.eq(1)
        yield
        yield dut.wrote.eq(0)
        yield

    def gen(top):
        dut = top.dut
        yield from set_deadline(dut, NO_DEADLINE)
        yield from pulse(dut)                       # before ARM: forgotten
        yield from access(dut, REG_ARM, True, 1)
        bus = dut.bus
        yield from stall_in_wait(dut, 50)
        yield bus.cyc.eq(0)
        yield bus.stb.eq(0)
        yield
        yield from pulse(dut)                       # during the pass: WAIT returns at once
        data, n, waiting = yield from access(dut, REG_WAIT)
        assert (data, n, waiting) == (WAKE_WROTE, 2, 0)
        yield from access(dut, REG_ARM, True, 1)    # the next pass starts clean
        yield from stall_in_wait(dut, 20)
    run(gen)


@pytest.mark.smoke
def test_fw_wait_idle():
    """The idle deadline: `active` pulses (hardware-path commands) while the CPU is stalled
    do not wake it; the deadline waits until IDLE cycles after the last one."""
    def gen(top):
        dut = top.dut
        bus = dut.bus
        idle = 300
        yield from access(dut, REG_IDLE, True, idle)
        assert (yield from access(dut, REG_IDLE))[0] == idle
        t = (yield top.uptime) + 100
        yield from set_deadline(dut, t)
        yield from access(dut, REG_ARM, True, 1)
        # a command in the hardware path from now on, for 400 cycles: no wake meanwhile,
        # though the deadline passes
        yield dut.active.eq(1)
        yield from stall_in_wait(dut, 400)
        assert (yield dut.wake_at) == NO_DEADLINE
        yield dut.active.eq(0)
        yield
        since = yield top.uptime        # the first cycle `active` is seen low
        assert (yield dut.wake_at) == since + idle, ((yield dut.wake_at), since)
        n = 0
        while (yield dut.waiting):
            yield
            n += 1
            assert n < 2 * idle, "no wake after the idle time"
        assert (yield top.uptime) == since + idle, ((yield top.uptime), since)
        yield
        assert (yield bus.ack) and (yield bus.dat_r) == WAKE_DEADLINE
        yield bus.cyc.eq(0)
        yield bus.stb.eq(0)
        yield
        lo, _, _ = yield from access(dut, REG_IDLE_SINCE_LO)
        hi, _, _ = yield from access(dut, REG_IDLE_SINCE_HI)
        assert (hi << 32 | lo) == since, (hi << 32 | lo, since)
        # IDLE 0: the plain deadline again, `active` or not
        yield from access(dut, REG_IDLE, True, 0)
        yield dut.active.eq(1)
        yield
        assert (yield dut.wake_at) == t
        data, n, _ = yield from access(dut, REG_WAIT)
        assert (data, n) == (WAKE_DEADLINE, 2)
        yield dut.active.eq(0)
    run(gen)


@pytest.mark.smoke
def test_fw_wait_uptime():
    def gen(top):
        dut = top.dut
        yield top.uptime.eq((7 << 32) | 0xFFFFFFF0)
        yield
        lo, _, _ = yield from access(dut, REG_UPTIME_LO)
        for _ in range(40):                         # the low word wraps meanwhile
            yield
        hi, _, _ = yield from access(dut, REG_UPTIME_HI)
        assert hi == 7 and 0xFFFFFFF0 <= lo <= 0xFFFFFFFF, (hi, hex(lo))
        assert (yield top.uptime) >> 32 == 8
    run(gen)


@pytest.mark.smoke
@pytest.mark.parametrize("kw,field", [({"n_sources": 0}, "n_sources"),
                                      ({"n_status": 5000}, "n_status")])
def test_fw_wait_bad_parameters(kw, field):
    args = {"n_sources": 1, "n_status": 1, "uptime": Signal(64), **kw}
    with pytest.raises(ValueError, match=field):
        FwWait(**args)
    with pytest.raises(ValueError, match="uptime"):
        FwWait(1, 1, Signal(32))
