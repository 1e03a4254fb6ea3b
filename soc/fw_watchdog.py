# SPDX-License-Identifier: BSD-2-Clause
"""FwWatchdog: the firmware's hardware watchdog. It fires when the CPU has run PERIOD cycles
without once waiting in FwWait (soc/fw_wait.py).

The firmware waits whenever its main loop has nothing to do, and its flash, copy and
completion waits wait there too, so a firmware that runs PERIOD cycles without a wait is
stuck in a loop. The count is of running cycles, and a wait restarts it:

- the firmware pays nothing: no kick register write, which would also make every loop pass
  wake FwWait at once (FwWait wakes on any register write);
- the simulation pays nothing: fast-forward skips only cycles the CPU waits, which do not
  count, so skipping them changes nothing here.

A firmware stuck *waiting* (for a hardware event that never comes) is not this watchdog's:
the host's command timeout sees it.

On expiry FIRED latches and the CPU is held in reset for RESET_CYCLES. FIRED is CSTS.CFS for
the host (with the firmware's own fatal bit) until the firmware clears it: the firmware boots
again, finds FIRED, waits for the host's controller reset as after a panic, then writes CLEAR
(sw/firmware/util.c fw_recover). The count stops while FIRED is set or PERIOD is 0.

Registers (CSRs):

    period  rw  running cycles without a wait that fire it (0: off; the firmware sets it at
                boot and turns it off in a panic, whose wait for the host spins)
    fired   r   1: it fired since the last CLEAR
    clear   w   FIRED = 0 and the count restarts
    count   r   running cycles since the last wait (tests)

Ports: `waiting` (in, FwWait's: the CPU is stalled in WAIT), `fired` (out, level), `cpu_reset`
(out: hold the CPU in reset).
"""

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSR, CSRStatus, CSRStorage
from migen import If, Signal

__all__ = ["FwWatchdog", "RESET_CYCLES"]

RESET_CYCLES = 16


class FwWatchdog(LiteXModule):
    def __init__(self):
        # Ports.
        self.waiting = Signal()
        self.fired = Signal()
        self.cpu_reset = Signal()

        # Registers.
        self._period = CSRStorage(32, description="running cycles without a wait that fire "
                                                  "the watchdog (0: off)")
        self._fired = CSRStatus(1, description="1: fired since the last CLEAR")
        self._clear = CSR(1)
        self._count = CSRStatus(32, description="running cycles since the last wait")

        # # #

        count = Signal(32)
        hold = Signal(max=RESET_CYCLES + 1)
        period = self._period.storage
        self.comb += [
            self._fired.status.eq(self.fired),
            self._count.status.eq(count),
            self.cpu_reset.eq(hold != 0),
        ]
        self.sync += [
            If(hold != 0, hold.eq(hold - 1)),
            If(self._clear.re,
                self.fired.eq(0),
                count.eq(0),
            ).Elif(self.waiting | (period == 0) | self.fired,
                count.eq(0),
            ).Elif(count + 1 >= period,
                self.fired.eq(1),
                hold.eq(RESET_CYCLES),
                count.eq(0),
            ).Else(
                count.eq(count + 1),
            ),
        ]
