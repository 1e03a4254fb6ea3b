# SPDX-License-Identifier: BSD-2-Clause
"""soc/fw_watchdog.py: FwWatchdog fires on the cycle the CPU has run PERIOD cycles without a
wait, in Migen's simulator.

Checked: PERIOD 0 never fires; with the CPU running it fires on exactly the PERIOD-th running
cycle, holds the CPU in reset for RESET_CYCLES cycles and stops counting while FIRED; a wait
more often than PERIOD keeps it quiet however long the CPU runs, and the cycles spent waiting
never count; CLEAR drops FIRED and the count starts again from zero.
"""

import pytest
from migen import run_simulation

from soc.fw_watchdog import RESET_CYCLES, FwWatchdog

PERIOD = 50


def run(body):
    dut = FwWatchdog()
    out = {}
    run_simulation(dut, body(dut, out))
    return out


def cycles_until_fired(dut, limit):
    for n in range(1, limit + 1):
        yield
        if (yield dut.fired):
            return n
    return None


@pytest.mark.smoke
def test_off_never_fires():
    def body(dut, out):
        out["fired"] = yield from cycles_until_fired(dut, 10 * PERIOD)
    assert run(body)["fired"] is None


@pytest.mark.smoke
def test_fires_after_period_running_cycles():
    def body(dut, out):
        yield dut._period.storage.eq(PERIOD)
        yield
        out["fired"] = yield from cycles_until_fired(dut, 10 * PERIOD)
        held = 0
        for _ in range(4 * RESET_CYCLES):
            held += (yield dut.cpu_reset)
            yield
        out["held"] = held
        out["count"] = yield dut._count.status
        out["still"] = yield dut.fired
    out = run(body)
    # the count reaches PERIOD - 1 after PERIOD - 1 running cycles; the next one fires
    assert out["fired"] == PERIOD, out
    assert out["held"] == RESET_CYCLES, out
    assert out["count"] == 0 and out["still"] == 1, "it counts on, or FIRED fell, while fired"


@pytest.mark.smoke
def test_waits_keep_it_quiet():
    def body(dut, out):
        yield dut._period.storage.eq(PERIOD)
        fired = 0
        for k in range(20 * PERIOD):
            # run PERIOD - 2 cycles, then wait 3 * PERIOD cycles: waiting time never counts
            yield dut.waiting.eq(k % (4 * PERIOD) >= PERIOD - 2)
            yield
            fired |= (yield dut.fired)
        out["fired"] = fired
    assert run(body)["fired"] == 0


@pytest.mark.smoke
def test_clear_restarts():
    def body(dut, out):
        yield dut._period.storage.eq(PERIOD)
        yield
        first = yield from cycles_until_fired(dut, 10 * PERIOD)
        yield dut._clear.re.eq(1)
        yield
        yield dut._clear.re.eq(0)
        yield
        out["cleared"] = 1 - (yield dut.fired)
        out["again"] = yield from cycles_until_fired(dut, 10 * PERIOD)
        out["first"] = first
    out = run(body)
    assert out["first"] == PERIOD and out["cleared"] == 1, out
    # counting from zero again (the cycle after CLEAR's is already one): a PERIOD again
    assert out["again"] in (PERIOD - 1, PERIOD), out
