# SPDX-License-Identifier: BSD-2-Clause
"""Read-capture delay calibration of one NV-DDR2 channel (Verilog module
`onfi_dqs_calibration`).

Sits between an op source (the die scheduler) and an `OnfiChannel` built `with_nvddr2`, with
the channel's op, write-data, read-data and completion streams on both sides. Idle, it passes
all four straight through (combinationally: the channel behaves as if it were not there).
On `start` it lets the ops it has forwarded complete, holds new ops back, then sweeps the
board PHY's `dqs_delay` over every tap: load the tap, let it settle, READ ID 20h ("ONFI",
4 bytes) on die `way`, and mark the tap passing if the bytes and completion are right; those
bytes and completions never reach the op source. It then loads the centre of the longest run
of passing taps (or `fallback` if that run is shorter than `min_window`), reports the result
and passes ops through again. See rtl/nand/README.md ("onfi_dqs_calibration").
"""

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .nand_common import bad_int
from .onfi_channel import ChannelOp, Completion, op_layout
from .onfi_sdr_engine import ReadData

__all__ = ["OnfiDqsCalibration", "SIGNATURE_COLUMN", "SIGNATURE"]

SIGNATURE_COLUMN = 0x20         # READ ID address of the ONFI signature
SIGNATURE = b"ONFI"             # what every ONFI die returns there (4F 4E 46 49)
OUTSTANDING_BITS = 8            # forwarded ops not yet completed (the channel holds one)


class OnfiDqsCalibration(wiring.Component):
    """DQS (read-capture) delay sweep of one NV-DDR2 channel, in front of its OnfiChannel.

    Parameters
    ----------
    tap_bits : int, 1..9 (default 5)
        Width of `dqs_delay`: the PHY's tap count is 2**tap_bits (5 on onfi_phy_xilinx7,
        9 on onfi_phy_xilinxus). Every tap 0 .. 2**tap_bits - 1 is tried.
    settle_cycles : int, 0..65535 (default 16)
        Clock cycles between a `dqs_delay_load` pulse and the READ ID that tests the tap
        (the delay line's update time; also kept after the final load).
    min_window : int, 1..2**tap_bits (default 3)
        Fewest consecutive passing taps that count as an eye (`ok`); a shorter best run
        loads `fallback` instead.
    max_len : int, 1..65536 (default 18432)
        The channel's max_len (sets the width of the op's `length` field).

    Ports
    -----
    s_op, s_wdata : streams in, as OnfiChannel's (from the op source)
    m_rdata, m_cpl : streams out, as OnfiChannel's (to the op source)
    m_op, m_wdata : streams out, to the channel's s_op, s_wdata
    s_rdata, s_cpl : streams in, from the channel's m_rdata, m_cpl
    start : in, pulse (ignored while `busy`): calibrate, reading die `way`
    way : in, 3 bits, the die (chip enable) whose READ ID is used; sampled with `start`
    fallback : in, tap_bits, the tap loaded when no run reaches `min_window`
    busy : out, from `start` until `done`
    done : out, one-cycle pulse at the end, with the results valid (kept until next start)
    ok, window_lo, window_hi, tap, passes : out, results: the longest run of passing taps
        (`window_lo`..`window_hi`, first run on ties; both 0 with no passing tap), whether it
        is at least `min_window` long, the tap loaded, and one bit per tap (bit t: tap t
        passed)
    dqs_delay, dqs_delay_load : out, to the PHY: the tap and its load pulse
    """

    def __init__(self, tap_bits=5, settle_cycles=16, min_window=3, max_len=18432):
        error = (bad_int("tap_bits", tap_bits, 1, 9) or
                 bad_int("settle_cycles", settle_cycles, 0, 65535) or
                 bad_int("max_len", max_len, 1, 1 << 16))
        if not error:
            error = bad_int("min_window", min_window, 1, 1 << tap_bits)
        if error:
            self._MustUse__silence = True   # no "created but never used" warning on top
            raise ValueError(f"OnfiDqsCalibration: {error}")
        self.tap_bits = tap_bits
        self.settle_cycles = settle_cycles
        self.min_window = min_window
        self.max_len = max_len
        n_taps = 1 << tap_bits
        super().__init__({
            # op source side
            "s_op": In(stream.Signature(op_layout(max_len))),
            "s_wdata": In(stream.Signature(unsigned(8))),
            "m_rdata": Out(stream.Signature(ReadData)),
            "m_cpl": Out(stream.Signature(Completion)),
            # channel side
            "m_op": Out(stream.Signature(op_layout(max_len))),
            "m_wdata": Out(stream.Signature(unsigned(8))),
            "s_rdata": In(stream.Signature(ReadData)),
            "s_cpl": In(stream.Signature(Completion)),
            # control and results
            "start": In(1),
            "way": In(3),
            "fallback": In(tap_bits),
            "busy": Out(1),
            "done": Out(1),
            "ok": Out(1),
            "window_lo": Out(tap_bits),
            "window_hi": Out(tap_bits),
            "tap": Out(tap_bits),
            "passes": Out(n_taps),
            # PHY delay
            "dqs_delay": Out(tap_bits),
            "dqs_delay_load": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        tb = self.tap_bits
        last_tap = (1 << tb) - 1

        way = Signal(3)                     # die under test, latched at start
        # The tap the PHY holds. dqs_delay shows it, and carries the new tap (combinationally)
        # in the cycle of the load pulse, since the PHY takes both at the same clock edge.
        loaded = Signal(tb)
        tap = Signal(tb)                    # tap being tried
        settle = Signal(range(max(self.settle_cycles, 1) + 1))     # at least one bit
        nbytes = Signal(3)                  # READ ID bytes received (0..4, saturating)
        bad = Signal()                      # ... one of them was wrong
        # Run tracking, one tap at a time: the run ending at the current tap and the best so
        # far. Lengths need one more bit than taps (2**tap_bits taps may all pass).
        run_lo = Signal(tb)
        run_len = Signal(tb + 1)
        best_lo = Signal(tb)
        best_len = Signal(tb + 1)
        # Forwarded ops not yet completed: calibration starts only at 0, so no byte or
        # completion of an op source's op can be taken for a calibration READ ID.
        outstanding = Signal(OUTSTANDING_BITS)

        passing = Signal()                  # ops, data, completions pass straight through
        hold_ops = Signal()                 # ... except s_op, held back (draining)

        # Pass-through: combinational, so the channel sees the op source directly.
        with m.If(passing):
            m.d.comb += [
                self.m_op.payload.eq(self.s_op.payload),
                self.m_op.valid.eq(self.s_op.valid & ~hold_ops),
                self.s_op.ready.eq(self.m_op.ready & ~hold_ops),
                self.m_wdata.payload.eq(self.s_wdata.payload),
                self.m_wdata.valid.eq(self.s_wdata.valid),
                self.s_wdata.ready.eq(self.m_wdata.ready),
                self.m_rdata.payload.eq(self.s_rdata.payload),
                self.m_rdata.valid.eq(self.s_rdata.valid),
                self.s_rdata.ready.eq(self.m_rdata.ready),
                self.m_cpl.payload.eq(self.s_cpl.payload),
                self.m_cpl.valid.eq(self.s_cpl.valid),
                self.s_cpl.ready.eq(self.m_cpl.ready),
            ]
        fwd = passing & ~hold_ops & self.m_op.valid & self.m_op.ready
        cpl = passing & self.s_cpl.valid & self.s_cpl.ready
        m.d.sync += outstanding.eq(outstanding + fwd - cpl)

        # The calibration READ ID, offered in ISSUE
        cal_op = self.m_op.payload
        cal_op_fields = [cal_op.tag.eq(0), cal_op.op.eq(ChannelOp.READ_ID), cal_op.way.eq(way),
                         cal_op.row.eq(0), cal_op.column.eq(SIGNATURE_COLUMN),
                         cal_op.length.eq(len(SIGNATURE)), cal_op.multi.eq(0),
                         cal_op.slc.eq(0)]

        # The byte expected next ("ONFI"[nbytes]); beyond the fourth, any byte is wrong.
        expect = Signal(8)
        with m.Switch(nbytes):
            for i, byte in enumerate(SIGNATURE):
                with m.Case(i):
                    m.d.comb += expect.eq(byte)

        # Run update for the tap just tested (`tap_ok`): extend or end the current run; a new
        # best needs a strictly longer run, so the first of equal runs wins.
        # (Expressions, not named signals: Yosys would leave such a name an unread alias.)
        tap_ok = Signal()
        new_len = Mux(tap_ok, run_len + 1, 0)
        new_lo = Mux(run_len == 0, tap, run_lo)
        # centre of the best run, the lower of the two middle taps of an even run
        centre = (best_lo + ((best_len - 1) >> 1))[:tb]
        # the longest run is at least min_window (min_window >= 1: an empty map is never ok)
        wide = best_len >= self.min_window

        m.d.comb += self.dqs_delay.eq(loaded)     # overridden in LOAD and PICK
        with m.FSM(name="cal"):
            with m.State("IDLE"):
                m.d.comb += passing.eq(1)
                with m.If(self.start):
                    m.d.sync += [way.eq(self.way), tap.eq(0), run_len.eq(0), best_lo.eq(0),
                                 best_len.eq(0), self.passes.eq(0), self.ok.eq(0),
                                 self.window_lo.eq(0), self.window_hi.eq(0)]
                    m.next = "DRAIN"

            with m.State("DRAIN"):
                # ops already in the channel finish through the pass-through, new ones wait
                m.d.comb += [passing.eq(1), hold_ops.eq(1), self.busy.eq(1)]
                with m.If(outstanding == 0):
                    m.next = "LOAD"

            with m.State("LOAD"):
                m.d.comb += [self.busy.eq(1), self.dqs_delay_load.eq(1),
                             self.dqs_delay.eq(tap)]
                m.d.sync += [loaded.eq(tap), settle.eq(self.settle_cycles)]
                m.next = "SETTLE"

            with m.State("SETTLE"):
                # the PHY takes dqs_delay with the pulse; reads wait for the delay line
                m.d.comb += self.busy.eq(1)
                with m.If(settle == 0):
                    m.next = "ISSUE"
                with m.Else():
                    m.d.sync += settle.eq(settle - 1)

            with m.State("ISSUE"):
                m.d.comb += [self.busy.eq(1), self.m_op.valid.eq(1), *cal_op_fields]
                m.d.sync += [nbytes.eq(0), bad.eq(0)]
                with m.If(self.m_op.ready):
                    m.next = "CHECK"

            with m.State("CHECK"):
                # the op's bytes, then its completion: taken here, never forwarded
                m.d.comb += [self.busy.eq(1), self.s_rdata.ready.eq(1),
                             self.s_cpl.ready.eq(1)]
                with m.If(self.s_rdata.valid):
                    rd = self.s_rdata.payload
                    is_last = nbytes == len(SIGNATURE) - 1
                    with m.If((nbytes >= len(SIGNATURE)) | (rd.data != expect) |
                              (rd.last != is_last)):
                        m.d.sync += bad.eq(1)
                    with m.If(nbytes < len(SIGNATURE)):
                        m.d.sync += nbytes.eq(nbytes + 1)
                with m.If(self.s_cpl.valid):
                    # the channel sends the completion after the op's last byte
                    m.d.comb += tap_ok.eq(~bad & (nbytes == len(SIGNATURE)) &
                                          ~self.s_cpl.payload.error)
                    m.d.sync += [self.passes.bit_select(tap, 1).eq(tap_ok),
                                 run_len.eq(new_len), run_lo.eq(new_lo)]
                    with m.If(new_len > best_len):
                        m.d.sync += [best_len.eq(new_len), best_lo.eq(new_lo)]
                    with m.If(tap == last_tap):
                        m.next = "PICK"
                    with m.Else():
                        m.d.sync += tap.eq(tap + 1)
                        m.next = "LOAD"

            with m.State("PICK"):
                final = Mux(wide, centre, self.fallback)
                m.d.comb += [self.busy.eq(1), self.dqs_delay_load.eq(1),
                             self.dqs_delay.eq(final)]
                m.d.sync += [
                    self.ok.eq(wide),
                    self.window_lo.eq(best_lo),
                    self.window_hi.eq(Mux(best_len == 0, 0, best_lo + best_len - 1)),
                    self.tap.eq(final), loaded.eq(final),
                    settle.eq(self.settle_cycles),
                ]
                m.next = "FINAL_SETTLE"

            with m.State("FINAL_SETTLE"):
                # the chosen tap settles before the op source's reads resume
                m.d.comb += self.busy.eq(1)
                with m.If(settle == 0):
                    m.d.comb += self.done.eq(1)
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += settle.eq(settle - 1)
        return m
