# SPDX-License-Identifier: BSD-2-Clause
"""FwWait: the firmware's low-power wait, as a real controller's `wfi` with a wake timer.

The firmware's main loop (sw/firmware/main.c) polls. When a pass found nothing to do it reads
WAIT here: the read is not acknowledged (the CPU stalls on the load, its state frozen) until
a wake source is active, a status the firmware reads has changed since it wrote ARM, or the
uptime has reached DEADLINE. The stall makes the whole drive quiet, so the simulation harness
can jump over it (sim/harness/README.md, "Fast-forward").

Registers (32-bit Wishbone slave, word offsets):

    0  DEADLINE_LO  rw  uptime cycle to wake at, bits 31:0   (all ones in both: no deadline)
    1  DEADLINE_HI  rw  bits 63:32
    2  ARM          w   latch `status`, forget earlier writes (at the start of a poll pass)
    3  WAIT         r   stall until woken; returns the reason: bit 0 a wake source is active,
                        bit 1 a status differs from ARM's latch, bit 2 uptime >= deadline,
                        bit 3 the CPU wrote a register since ARM
    4  UPTIME_LO    r   uptime bits 31:0; latches bits 63:32 for UPTIME_HI
    5  UPTIME_HI    r   uptime bits 63:32 as of the last UPTIME_LO read
    6  IDLE         rw  cycles (0: off) the hardware I/O path must have been idle before the
                        deadline wakes: with IDLE set, bit 2 of WAIT is `active` low, uptime >=
                        DEADLINE and uptime >= IDLE_SINCE + IDLE
    7  IDLE_SINCE_LO r  the uptime of the first cycle `active` was low in the current idle
                        time (while it is high: the next cycle's); latches bits 63:32
    8  IDLE_SINCE_HI r  bits 63:32 as of the last IDLE_SINCE_LO read

Parameters: n_sources (1..256) and n_status (1..4096) are the widths of `sources` (levels
that wake: a stream towards the firmware is valid, a controller reset is pending) and
`status` (everything else the firmware reads in its loop: busy flags, counters; a change
wakes); uptime: the 64-bit Signal of the timer the firmware's hal_cycles() reads (here,
so reading the time is not a register write).

Input `wrote`: the CPU wrote a register this cycle (the SoC's CSR bus write strobe). It stands
in for a software count of the firmware's register writes, which cost instructions on every
write of the firmware's hot path.

Input `active`: the hardware works on host commands (a doorbell not yet fetched, a command
in flight). Its changes do not wake the firmware: the commands the hardware path carries
alone cost the CPU no instruction (issue 21). The firmware's idle-time work (background GC)
asks for host idle time through IDLE instead of waking on every command.

Outputs: `waiting`, the CPU is stalled in WAIT now; `wake_at`, the uptime the deadline wakes
at (for the harness): DEADLINE, or with IDLE set, all ones while `active` and else the later
of DEADLINE and IDLE_SINCE + IDLE.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import wishbone
from migen import Case, Cat, If, Mux, Signal

__all__ = ["FwWait", "NO_DEADLINE", "REG_DEADLINE_LO", "REG_DEADLINE_HI", "REG_ARM",
           "REG_WAIT", "REG_UPTIME_LO", "REG_UPTIME_HI", "REG_IDLE", "REG_IDLE_SINCE_LO",
           "REG_IDLE_SINCE_HI", "WAKE_SOURCE", "WAKE_STATUS",
           "WAKE_DEADLINE", "WAKE_WROTE"]

NO_DEADLINE = (1 << 64) - 1
(REG_DEADLINE_LO, REG_DEADLINE_HI, REG_ARM, REG_WAIT, REG_UPTIME_LO, REG_UPTIME_HI, REG_IDLE,
 REG_IDLE_SINCE_LO, REG_IDLE_SINCE_HI) = range(9)
WAKE_SOURCE, WAKE_STATUS, WAKE_DEADLINE, WAKE_WROTE = 1, 2, 4, 8


class FwWait(LiteXModule):
    def __init__(self, n_sources, n_status, uptime):
        for name, v, hi in (("n_sources", n_sources, 256), ("n_status", n_status, 4096)):
            if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= hi:
                raise ValueError(f"FwWait: {name}={v!r}: out of range 1..{hi}")
        if len(uptime) != 64:
            raise ValueError(f"FwWait: uptime is {len(uptime)} bits, must be 64")

        # Ports.
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        self.sources = Signal(n_sources)
        self.status = Signal(n_status)
        self.wrote = Signal()
        self.active = Signal()
        self.waiting = Signal()
        self.wake_at = Signal(64)

        # # #

        armed = Signal(n_status)
        dirty = Signal()                # a register was written since ARM
        uptime_hi = Signal(32)
        deadline = Signal(64, reset=NO_DEADLINE)
        idle = Signal(32)
        idle_since = Signal(64)
        idle_since_hi = Signal(32)
        idle_at = Signal(65)
        self.comb += [
            idle_at.eq(idle_since + idle),
            If(idle == 0,
                self.wake_at.eq(deadline)
            ).Elif(self.active,
                self.wake_at.eq(NO_DEADLINE)
            ).Else(
                self.wake_at.eq(Mux(idle_at > deadline, idle_at, deadline))
            ),
        ]
        self.sync += If(self.active, idle_since.eq(uptime + 1))
        reason = Signal(4)
        self.comb += reason.eq(Cat(self.sources != 0, self.status != armed,
                                   uptime >= self.wake_at, dirty))
        adr = bus.adr[:4]
        access = Signal()
        stall = Signal()
        self.comb += [
            access.eq(bus.cyc & bus.stb & ~bus.ack),
            stall.eq(access & ~bus.we & (adr == REG_WAIT) & (reason == 0)),
            self.waiting.eq(stall),
        ]
        lo, hi = deadline[:32], deadline[32:]
        self.sync += [
            bus.ack.eq(0),
            If(access & ~stall,
                bus.ack.eq(1),
                If(bus.we,
                    Case(adr, {
                        REG_DEADLINE_LO: lo.eq(bus.dat_w),
                        REG_DEADLINE_HI: hi.eq(bus.dat_w),
                        REG_ARM: [armed.eq(self.status), dirty.eq(0)],
                        REG_IDLE: idle.eq(bus.dat_w),
                        "default": [],
                    })
                ).Else(
                    Case(adr, {
                        REG_DEADLINE_LO: bus.dat_r.eq(lo),
                        REG_DEADLINE_HI: bus.dat_r.eq(hi),
                        REG_WAIT: bus.dat_r.eq(reason),
                        REG_UPTIME_LO: [bus.dat_r.eq(uptime[:32]), uptime_hi.eq(uptime[32:])],
                        REG_UPTIME_HI: bus.dat_r.eq(uptime_hi),
                        REG_IDLE: bus.dat_r.eq(idle),
                        REG_IDLE_SINCE_LO: [bus.dat_r.eq(idle_since[:32]),
                                            idle_since_hi.eq(idle_since[32:])],
                        REG_IDLE_SINCE_HI: bus.dat_r.eq(idle_since_hi),
                        "default": bus.dat_r.eq(0),
                    })
                )
            ),
            # After the Case: a write on the CSR bus in ARM's cycle still counts.
            If(self.wrote, dirty.eq(1)),
        ]
