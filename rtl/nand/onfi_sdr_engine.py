# SPDX-License-Identifier: BSD-2-Clause
"""ONFI asynchronous SDR bus-cycle engine (Verilog module `onfi_sdr_engine`).

Turns a stream of bus-cycle requests (command, address, data-in, data-out, waits) into ONFI
pin waveforms whose spacing comes from run-time timing registers in clock cycles, so one
bitstream drives every NAND part and SDR timing mode 0..5. The command sequencer sits above;
the I/O PHY (IOBUFs) below, hence the split dq_o / dq_oe / dq_i.

How spacing is kept: the engine stamps the pin edges it makes with saturating counters
(cycles since the last WE# rising edge, RE# rising edge, CE# falling edge, R/B# ready) and
lets an edge happen only when every ONFI rule referenced to it holds. WE# falls when tWH and
the previous cycle's hold times (tCLH/tALH, tDH) and tRHW have passed; it rises when tWP,
the setup times (tCLS/tALS, tDS, tCS) and, for the first data byte after an address, tADL
have passed. RE# falls when tREH, tWHR, tRR and tCEA allow and the response can be taken; DQ
is sampled t_rea cycles after RE# falls. See rtl/nand/README.md ("onfi_sdr_engine").
"""

from amaranth.hdl import Array, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.wiring import In, Out

from .nand_common import BUSY_NOW_BITS, BUSY_TIMEOUT_BITS, busy_timer

__all__ = ["OnfiSdrEngine", "CycleKind", "CycleRequest", "ReadData", "timing_layout",
           "channel_members", "TIMING_REGISTERS", "RB_SYNC_STAGES"]

# Timing registers, in clock cycles, in the order of the `timing` struct. Mirrored by
# spec/onfi_timing.ENGINE_REGISTERS, which converts an ONFI mode to these values.
TIMING_REGISTERS = (
    ("t_wp", "WE# low (tWP)"),
    ("t_wh", "WE# high (tWH; stretch to meet tWC)"),
    ("t_rp", "RE# low (tRP)"),
    ("t_reh", "RE# high (tREH; stretch to meet tRC)"),
    ("t_rea", "RE# falling to the DQ sampling edge (>= tREA)"),
    ("t_cls", "CLE/ALE setup before WE# rising (tCLS, tALS)"),
    ("t_clh", "CLE/ALE hold after WE# rising (tCLH, tALH)"),
    ("t_ds", "DQ setup before WE# rising (tDS)"),
    ("t_dh", "DQ hold after WE# rising (tDH)"),
    ("t_cs", "CE# falling to WE# rising (tCS)"),
    ("t_ch", "WE# rising to CE# rising (tCH)"),
    ("t_cea", "CE# falling to the DQ sampling edge (>= tCEA)"),
    ("t_whr", "WE# rising to RE# falling (tWHR)"),
    ("t_adl", "last address WE# rising to first data WE# rising (tADL)"),
    ("t_rhw", "RE# rising to WE# falling (tRHW)"),
    ("t_ccs", "WE# rising to the end of a WAIT_CCS request (tCCS)"),
    ("t_wb", "WE# rising to the first R/B# sample of WAIT_RB (>= tWB)"),
    ("t_rr", "R/B# ready to RE# falling (tRR)"),
)

# R/B# comes straight from the pins: a 2-flop synchroniser, whose latency WAIT_RB adds to
# t_wb so that a busy die is never mistaken for a ready one.
RB_SYNC_STAGES = 2


def channel_members(n_ways, timer_width):
    """Signature members every core driving one ONFI channel has, flat so that the Verilog
    ports keep these names in each of them: run-time configuration, then the pins towards the
    I/O PHY (DQ split into dq_o / dq_oe / dq_i; CE# and R/B# one bit per way)."""
    all_ones = (1 << n_ways) - 1
    return {
        # run-time configuration
        "timing": In(timing_layout(timer_width)),
        "write_protect": In(1),
        "busy_timeout": In(BUSY_TIMEOUT_BITS),     # R/B# waits, in busy ticks (0: none)
        "busy_now": In(BUSY_NOW_BITS),             # the uptime's busy ticks (nand_common)
        # ONFI pins, towards the PHY
        "dq_o": Out(8),
        "dq_oe": Out(1),
        "dq_i": In(8),
        "ce_n": Out(n_ways, init=all_ones),
        "cle": Out(1),
        "ale": Out(1),
        "we_n": Out(1, init=1),
        "re_n": Out(1, init=1),
        "wp_n": Out(1, init=0),
        "rb_n": In(n_ways, init=all_ones),
    }


class CycleKind(enum.Enum, shape=3):
    """The kind of one bus-cycle request."""
    CMD = 0         # command latch cycle: CLE high, `data` on DQ, one WE# pulse
    ADDR = 1        # address latch cycle: ALE high, `data` on DQ, one WE# pulse
    DIN = 2         # data-in cycle (a byte written to the NAND): one WE# pulse
    DOUT = 3        # data-out cycle (a byte read from the NAND): one RE# pulse, one response
    WAIT_RB = 4     # wait t_wb after the last WE# rising edge, then until R/B#[way] is high
    WAIT_CCS = 5    # wait until t_ccs after the last WE# rising edge (05h-E0h, 85h)


class CycleRequest(data.Struct):
    """One bus-cycle request (the `s_cycle` payload)."""
    kind: CycleKind
    way: unsigned(3)    # CE#/R/B# index, < n_ways (a larger way selects no CE#)
    data: unsigned(8)   # CMD/ADDR/DIN byte; ignored by the other kinds
    last: unsigned(1)   # deassert CE# after this cycle (after tCH)


class ReadData(data.Struct):
    """One byte read by a DOUT request (the `m_rdata` payload)."""
    data: unsigned(8)
    last: unsigned(1)   # the `last` flag of the DOUT request


def timing_layout(timer_width):
    """The `timing` port: one unsigned(timer_width) field per entry of TIMING_REGISTERS."""
    return data.StructLayout({name: unsigned(timer_width) for name, _ in TIMING_REGISTERS})


class OnfiSdrEngine(wiring.Component):
    """ONFI asynchronous SDR bus-cycle engine.

    Parameters
    ----------
    n_ways : int, 1..8
        Chip enables (and R/B# inputs) driven by this engine.
    timer_width : int, 6..16 (default 8)
        Width of every timing register and spacing counter; the longest spacing is
        2**timer_width - 1 cycles. 8 bits hold 1020 ns at 250 MHz: tCCS (500 ns) and tADL
        (400 ns) with margin.

    Ports
    -----
    s_cycle : stream of CycleRequest, in
    m_rdata : stream of ReadData, out; RE# does not fall while a byte is waiting in it
    timing : timing_layout(timer_width), in; sampled continuously, change between cycles
    write_protect : in; drives wp_n low
    dq_o, dq_oe, dq_i : DQ[7:0] to the PHY (dq_oe high while the engine drives DQ)
    ce_n[n_ways], cle, ale, we_n, re_n, wp_n : ONFI outputs, all registers
    rb_n[n_ways] : R/B# inputs, asynchronous (synchronised here)
    rb_ready[n_ways] : out; R/B# after the synchroniser (RB_SYNC_STAGES cycles late)
    """

    def __init__(self, n_ways=1, timer_width=8):
        error = None
        if not isinstance(n_ways, int) or not 1 <= n_ways <= 8:
            error = f"n_ways must be an int in 1..8, got {n_ways!r}"
        elif not isinstance(timer_width, int) or not 6 <= timer_width <= 16:
            error = f"timer_width must be an int in 6..16, got {timer_width!r}"
        if error:
            self._MustUse__silence = True   # no "created but never used" warning on top
            raise ValueError(f"OnfiSdrEngine: {error}")
        self.n_ways = n_ways
        self.timer_width = timer_width
        super().__init__({
            # requests and read data
            "s_cycle": In(stream.Signature(CycleRequest)),
            "m_rdata": Out(stream.Signature(ReadData)),
            **channel_members(n_ways, timer_width),
            # R/B# after the synchroniser, for schedulers that pick a ready die
            "rb_ready": Out(n_ways, init=(1 << n_ways) - 1),
            # a WAIT_RB ended by busy_timeout, not by R/B# (one cycle, as it ends)
            "rb_timed_out": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        w = self.timer_width
        sat = (1 << w) - 1
        t = self.timing

        # R/B# synchroniser; ways beyond n_ways read as ready. Reset to "ready" like the rest of
        # the engine, so nothing waits on a die before reset has released it.
        rb_sync = Signal(self.n_ways, init=(1 << self.n_ways) - 1)
        m.submodules.rb_sync = FFSynchronizer(self.rb_n, rb_sync, stages=RB_SYNC_STAGES,
                                              init=(1 << self.n_ways) - 1, reset_less=False)
        m.d.comb += self.rb_ready.eq(rb_sync)
        rb_ready = Array([rb_sync[i] for i in range(self.n_ways)] +
                         [Const(1)] * (8 - self.n_ways))

        m.d.sync += self.wp_n.eq(~self.write_protect)

        # Spacing counters: cycles since an edge, saturating at `sat` (= "long ago"). A
        # counter is 1 at the first clock edge after the event, so `c >= t_x` gives t_x cycles.
        def counter(name):
            c = Signal(w, name=name, init=sat)
            m.d.sync += c.eq(Mux(c == sat, c, c + 1))
            return c
        c_phase = counter("c_phase")        # since WE#/RE# fell, or the current wait began
        c_we_rise = counter("c_we_rise")    # since the last WE# rising edge
        c_re_rise = counter("c_re_rise")    # since the last RE# rising edge
        c_ce_fall = counter("c_ce_fall")    # since CE# fell
        c_rb = counter("c_rb")              # since a WAIT_RB saw R/B# ready

        ce_on = Signal()                    # a CE# is low
        ce_way = Signal(3)                  # ... this one
        release = Signal()                  # a `last` cycle ran: raise CE# after tCH
        adl_pending = Signal()              # the last latch was an address: tADL applies
        sampled = Signal()                  # the DOUT in progress has sampled DQ

        # The request being worked on: a held one, else the one offered on s_cycle, so a
        # cycle can start at the clock edge that accepts it.
        held = Signal()
        req_q = Signal(CycleRequest)
        req = Signal(CycleRequest)
        in_idle = Signal()
        m.d.comb += [
            req.eq(Mux(held, req_q, self.s_cycle.payload)),
            self.s_cycle.ready.eq(in_idle & ~held),
        ]
        have = held | self.s_cycle.valid
        with m.If(self.s_cycle.valid & self.s_cycle.ready):
            m.d.sync += [req_q.eq(self.s_cycle.payload), held.eq(1)]

        kind = req.kind
        is_write = (kind == CycleKind.CMD) | (kind == CycleKind.ADDR) | (kind == CycleKind.DIN)
        needs_ce = is_write | (kind == CycleKind.DOUT)

        # m_rdata: a one-entry output register
        with m.If(self.m_rdata.ready):
            m.d.sync += self.m_rdata.valid.eq(0)
        rdata_free = ~self.m_rdata.valid | self.m_rdata.ready

        # Edge gates (see the module docstring)
        din_adl = (kind == CycleKind.DIN) & adl_pending
        we_fall_ok = ((c_we_rise >= t.t_wh) & (c_we_rise >= t.t_clh) & (c_we_rise >= t.t_dh) &
                      (c_re_rise >= t.t_rhw) &
                      # wait for tADL with WE# high, so the WE# low pulse stays short
                      ~(din_adl & ((c_we_rise + t.t_wp) < t.t_adl)))
        we_rise_ok = ((c_phase >= t.t_wp) & (c_phase >= t.t_cls) & (c_phase >= t.t_ds) &
                      (c_ce_fall >= t.t_cs) & ~(din_adl & (c_we_rise < t.t_adl)))
        re_fall_ok = ((c_re_rise >= t.t_reh) & (c_we_rise >= t.t_whr) & (c_rb >= t.t_rr) &
                      ((c_ce_fall + t.t_rea) >= t.t_cea) &
                      # CLE/ALE low and DQ released a cycle before RE# falls
                      ~self.cle & ~self.ale & ~self.dq_oe & rdata_free)

        def done():
            m.d.sync += held.eq(0)

        fsm_rb_wait = Signal()
        expired = busy_timer(m, self.busy_now, fsm_rb_wait, self.busy_timeout, "rb_wait")
        with m.FSM(name="fsm") as fsm:
            with m.State("IDLE"):
                # The previous write cycle's hold: CLE/ALE and DQ return low / released.
                with m.If(c_we_rise >= t.t_clh):
                    m.d.sync += [self.cle.eq(0), self.ale.eq(0)]
                with m.If(c_we_rise >= t.t_dh):
                    m.d.sync += self.dq_oe.eq(0)

                switch_way = have & needs_ce & (req.way != ce_way)
                with m.If(ce_on & (release | switch_way)):
                    # CE# rises tCH after the last WE# rising edge
                    with m.If(c_we_rise >= t.t_ch):
                        m.d.sync += [ce_on.eq(0), release.eq(0),
                                     self.ce_n.eq((1 << self.n_ways) - 1)]
                with m.Elif(have & needs_ce & ~ce_on):
                    m.d.sync += [ce_on.eq(1), ce_way.eq(req.way), c_ce_fall.eq(1),
                                 self.ce_n.eq(~(Const(1, 8) << req.way)[:self.n_ways])]
                with m.Elif(have & is_write):
                    with m.If(we_fall_ok):
                        done()
                        m.d.sync += [
                            self.we_n.eq(0), c_phase.eq(1),
                            self.cle.eq(kind == CycleKind.CMD),
                            self.ale.eq(kind == CycleKind.ADDR),
                            self.dq_o.eq(req.data), self.dq_oe.eq(1),
                            release.eq(req.last),
                        ]
                        m.next = "WE_LOW"
                with m.Elif(have & (kind == CycleKind.DOUT)):
                    with m.If(re_fall_ok):
                        done()
                        m.d.sync += [self.re_n.eq(0), c_phase.eq(1), sampled.eq(0),
                                     release.eq(req.last)]
                        m.next = "RE_LOW"
                with m.Elif(have & (kind == CycleKind.WAIT_RB)):
                    with m.If(c_we_rise >= t.t_wb):
                        m.d.sync += c_phase.eq(1)
                        m.next = "RB_WAIT"
                with m.Elif(have & (kind == CycleKind.WAIT_CCS)):
                    with m.If(c_we_rise >= t.t_ccs):
                        done()
                        m.d.sync += release.eq(ce_on & req.last)
                with m.Elif(have):
                    done()      # reserved kinds are dropped

            with m.State("WE_LOW"):
                with m.If(we_rise_ok):
                    m.d.sync += [self.we_n.eq(1), c_we_rise.eq(1),
                                 adl_pending.eq(req_q.kind == CycleKind.ADDR)]
                    m.next = "IDLE"

            with m.State("RE_LOW"):
                with m.If(~self.re_n & (c_phase >= t.t_rp)):
                    m.d.sync += [self.re_n.eq(1), c_re_rise.eq(1)]
                sample_now = ~sampled & (c_phase >= t.t_rea) & (c_ce_fall >= t.t_cea)
                with m.If(sample_now):
                    m.d.sync += [sampled.eq(1), self.m_rdata.valid.eq(1),
                                 self.m_rdata.payload.data.eq(self.dq_i),
                                 self.m_rdata.payload.last.eq(req_q.last)]
                with m.If((self.re_n | (c_phase >= t.t_rp)) & (sampled | sample_now)):
                    m.next = "IDLE"

            with m.State("RB_WAIT"):
                # c_phase counts the synchroniser's latency before R/B# can be trusted; a die
                # that stays busy past busy_timeout (hung) ends the wait as well, flagged
                rb_up = (c_phase > RB_SYNC_STAGES) & rb_ready[req_q.way]
                with m.If(rb_up | expired):
                    done()
                    m.d.comb += self.rb_timed_out.eq(~rb_up)
                    m.d.sync += [c_rb.eq(1), release.eq(ce_on & req_q.last)]
                    m.next = "IDLE"

        m.d.comb += [in_idle.eq(fsm.ongoing("IDLE")), fsm_rb_wait.eq(fsm.ongoing("RB_WAIT"))]
        return m
