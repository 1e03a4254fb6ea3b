# SPDX-License-Identifier: BSD-2-Clause
"""ONFI NV-DDR2 bus-cycle engine (Verilog module `onfi_nvddr2_engine`).

The NV-DDR2 counterpart of `onfi_sdr_engine`, with the same request and read-data streams
(`CycleRequest`, `ReadData`, `CycleKind`), so a channel controller can hold both and pick one
with a run-time register. It drives the pins through an ONFI PHY (`OnfiPhySignature`,
rtl/nand/onfi_phy_if.py), whose outputs carry two phases per clock.

- CMD / ADDR: as in SDR, one WE# pulse with CLE / ALE high (tCALS/tCALH, tCAS/tCAH, tWP/tWH).
- DIN: a data-in burst strobed by DQS, which the engine drives: write preamble (DQS low
  t_wpre), one byte per DQS edge, DQ changing at clock edges and DQS in the middle of each
  byte slot (`t_dqs` clocks per byte; an odd `t_dqs` puts the DQS edge on phase 1, i.e. mid
  clock), write postamble (DQS low t_wpst) and DQS released. Consecutive DIN requests on one
  way form one burst; a burst that would end after a rising DQS edge gets a pad byte (the
  last byte again) so that it ends low. The burst pauses with DQS static when the next
  request is late.
- DOUT: a data-out burst by RE#: read preamble (RE# low t_rpre), one byte per RE# edge
  (`t_re` clocks per byte), the die drives DQS edge-aligned with DQ and the PHY captures the
  bytes on DQS edges (returned as pairs on `rx`); read postamble (RE# low t_rpst >= tDQSRE +
  tRC/2) and RE# high. RE# only pauses high (between the two bytes of a pair); when the next
  DOUT request or room for its bytes is missing when a rising edge is due, the burst ends
  (postamble) and a new one starts later. An odd burst gets a pad edge whose byte is
  dropped.
  Single-ended RE# (no RE_c) and single-ended DQS (no DQS_c).
See rtl/nand/README.md ("onfi_nvddr2_engine").
"""

from amaranth.hdl import Array, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.cdc import FFSynchronizer
from amaranth.lib.fifo import SyncFIFO, SyncFIFOBuffered
from amaranth.lib.wiring import In, Out

from .nand_common import BUSY_NOW_BITS, BUSY_TIMEOUT_BITS, bad_int, busy_timer
from .onfi_phy_if import OnfiPhySignature, two_phase
from .onfi_sdr_engine import RB_SYNC_STAGES, CycleKind, CycleRequest, ReadData

__all__ = ["OnfiNvddr2Engine", "NVDDR2_TIMING_REGISTERS", "nvddr2_timing_layout",
           "RDATA_DEPTH"]

# Timing registers, in clock cycles, in the order of the `timing` struct. Mirrored by
# spec/onfi_timing.NVDDR2_ENGINE_REGISTERS (nvddr2_engine_registers()).
NVDDR2_TIMING_REGISTERS = (
    ("t_wp", "WE# low (tWP)"),
    ("t_wh", "WE# high (tWH; stretch to meet tWC)"),
    ("t_cals", "CLE/ALE setup before WE# rising (tCALS)"),
    ("t_calh", "CLE/ALE hold after WE# rising (tCALH)"),
    ("t_cas", "command/address DQ setup before WE# rising (tCAS)"),
    ("t_cah", "command/address DQ hold after WE# rising (tCAH)"),
    ("t_cs", "CE# falling to WE# rising / first DQS edge (tCS)"),
    ("t_ch", "WE# rising to CE# rising (tCH)"),
    ("t_cr", "CE# falling to RE# falling (tCR)"),
    ("t_whr", "WE# rising to RE# falling (tWHR)"),
    ("t_adl", "last address WE# rising to the first data DQS edge (tADL)"),
    ("t_ccs", "WE# rising to the end of a WAIT_CCS request (tCCS)"),
    ("t_wb", "WE# rising to the first R/B# sample of WAIT_RB (>= tWB)"),
    ("t_rr", "R/B# ready to RE# falling (tRR)"),
    ("t_rhw", "RE# rising to WE# falling (tRHW)"),
    ("t_wpre", "write preamble: DQS driven low before the first byte slot (tWPRE)"),
    ("t_wpst", "write postamble: DQS low after the last byte slot (tWPST)"),
    ("t_wpsth", "DQS released to the next WE# falling / burst (tWPSTH)"),
    ("t_dqs", "clocks per data-in byte, DQS half period (tDSC/2, tDQSH, tDQSL, tDS+tDH)"),
    ("t_rpre", "read preamble: RE# low before the first RE# rising edge (tRPRE)"),
    ("t_re", "clocks per data-out byte, RE# half period (tRC/2, tRP, tREH)"),
    ("t_rpst", "read postamble: RE# low after the last falling edge (tRPST)"),
    ("t_rpsth", "RE# high after the postamble to the next cycle or CE# high (tRPSTH)"),
)

# Bytes of read data the engine can hold; RE# only starts a pair when its bytes have room.
RDATA_DEPTH = 16


def nvddr2_timing_layout(timer_width):
    """The `timing` port: one unsigned(timer_width) field per NVDDR2_TIMING_REGISTERS entry."""
    return data.StructLayout({name: unsigned(timer_width)
                              for name, _ in NVDDR2_TIMING_REGISTERS})


class OnfiNvddr2Engine(wiring.Component):
    """ONFI NV-DDR2 bus-cycle engine.

    Parameters
    ----------
    n_ways : int, 1..8 (default 1)
        Chip enables (and R/B# inputs) driven by this engine.
    timer_width : int, 6..16 (default 8)
        Width of every timing register and spacing counter (longest spacing
        2**timer_width - 1 cycles; 8 bits: tADL = 400 ns fits up to 635 MHz).

    Ports
    -----
    s_cycle : stream of CycleRequest, in (as OnfiSdrEngine)
    m_rdata : stream of ReadData, out (as OnfiSdrEngine); RE# never outruns its room
    timing : nvddr2_timing_layout(timer_width), in; change only while idle
    write_protect : in; drives WP# low
    phy : OnfiPhySignature(n_ways), out; the PHY interface (rtl/nand/onfi_phy_if.py)
    rb_ready[n_ways] : out; R/B# after the synchroniser (RB_SYNC_STAGES cycles late)
    """

    def __init__(self, n_ways=1, timer_width=8):
        error = bad_int("n_ways", n_ways, 1, 8) or bad_int("timer_width", timer_width, 6, 16)
        if error:
            self._MustUse__silence = True   # no "created but never used" warning on top
            raise ValueError(f"OnfiNvddr2Engine: {error}")
        self.n_ways = n_ways
        self.timer_width = timer_width
        super().__init__({
            "s_cycle": In(stream.Signature(CycleRequest)),
            "m_rdata": Out(stream.Signature(ReadData)),
            "timing": In(nvddr2_timing_layout(timer_width)),
            "write_protect": In(1),
            "busy_timeout": In(BUSY_TIMEOUT_BITS),     # R/B# waits, in busy ticks (0: none)
            "busy_now": In(BUSY_NOW_BITS),             # the uptime's busy ticks (nand_common)
            "phy": Out(OnfiPhySignature(n_ways)),
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
        phy = self.phy
        all_ones = (1 << self.n_ways) - 1

        # R/B# synchroniser (ways beyond n_ways read as ready)
        rb_sync = Signal(self.n_ways, init=all_ones)
        m.submodules.rb_sync = FFSynchronizer(phy.rb_n, rb_sync, stages=RB_SYNC_STAGES,
                                              init=all_ones, reset_less=False)
        m.d.comb += self.rb_ready.eq(rb_sync)
        rb_ready = Array([rb_sync[i] for i in range(self.n_ways)] +
                         [Const(1)] * (8 - self.n_ways))

        # Pin registers (towards the PHY): the PHY interface's own signals where they have one
        # phase, so no alias is left behind; RE# and DQ drive both phases alike
        ce_n, cle, ale, we_n, wp_n = phy.ce_n, phy.cle, phy.ale, phy.we_n, phy.wp_n
        dq_oe, dqs_oe, rx_en = phy.dq_oe, phy.dqs_oe, phy.rx_en
        dqs0, dqs1 = phy.dqs_o.p0, phy.dqs_o.p1
        re_n = Signal(init=1)
        dq = Signal(8)
        m.d.sync += wp_n.eq(~self.write_protect)
        m.d.comb += [phy.re_n.p0.eq(re_n), phy.re_n.p1.eq(re_n),
                     phy.dq_o.p0.eq(dq), phy.dq_o.p1.eq(dq)]

        # Spacing counters: cycles since an event, saturating (see OnfiSdrEngine)
        def counter(name):
            c = Signal(w, name=name, init=sat)
            m.d.sync += c.eq(Mux(c == sat, c, c + 1))
            return c
        c_phase = counter("c_phase")        # since the current pulse / slot / wait began
        c_we_rise = counter("c_we_rise")    # since the last WE# rising edge
        c_re_rise = counter("c_re_rise")    # since RE# went high at the end of a read burst
        c_ce_fall = counter("c_ce_fall")    # since CE# fell
        c_rb = counter("c_rb")              # since a WAIT_RB saw R/B# ready
        c_wpost = counter("c_wpost")        # since DQS was released after a write postamble

        ce_on = Signal()
        ce_way = Signal(3)
        release = Signal()                  # a `last` cycle ran: raise CE# when allowed
        adl_pending = Signal()              # the last latch was an address: tADL applies

        # One request register, refilled in the cycle its request is used (`take`), so a
        # burst can use one request per clock.
        held = Signal()
        req = Signal(CycleRequest)
        take = Signal()
        m.d.comb += self.s_cycle.ready.eq(~held | take)
        with m.If(self.s_cycle.valid & self.s_cycle.ready):
            m.d.sync += [req.eq(self.s_cycle.payload), held.eq(1)]
        with m.Elif(take):
            m.d.sync += held.eq(0)

        kind = req.kind
        is_latch = (kind == CycleKind.CMD) | (kind == CycleKind.ADDR)
        is_din = kind == CycleKind.DIN
        is_dout = kind == CycleKind.DOUT
        needs_ce = is_latch | is_din | is_dout
        same_way = req.way == ce_way

        # --- read data path: captured pairs -> hold register -> byte FIFO -> m_rdata ---
        m.submodules.rfifo = rfifo = SyncFIFOBuffered(width=9, depth=RDATA_DEPTH)
        m.submodules.meta = meta = SyncFIFO(width=3, depth=RDATA_DEPTH // 2)
        # meta per RE# pair: [0] second byte valid, [1] last of byte 0, [2] last of byte 1
        m.d.comb += [
            self.m_rdata.valid.eq(rfifo.r_rdy),
            self.m_rdata.payload.eq(rfifo.r_data),
            rfifo.r_en.eq(self.m_rdata.ready),
        ]
        hold = Signal(two_phase(8))
        hold_meta = Signal(3)
        hold_cnt = Signal(2)                # bytes of `hold` still to write (0..2)
        # the next pair comes in while the last byte of this one goes into the FIFO, so the
        # hold register passes a pair every two clocks: one byte per clock, RE#'s rate
        m.d.comb += phy.rx_ready.eq(meta.r_rdy & ((hold_cnt == 0) |
                                                  ((hold_cnt == 1) & rfifo.w_rdy)))
        pair_in = phy.rx_valid & phy.rx_ready
        m.d.comb += meta.r_en.eq(pair_in)
        with m.If(pair_in):
            m.d.sync += [hold.eq(phy.rx_data), hold_meta.eq(meta.r_data),
                         hold_cnt.eq(Mux(meta.r_data[0], 2, 1))]
        with m.Elif((hold_cnt != 0) & rfifo.w_rdy):
            m.d.sync += hold_cnt.eq(hold_cnt - 1)
        second = (hold_cnt == 1) & hold_meta[0]       # writing byte 1 of the pair
        m.d.comb += [
            rfifo.w_en.eq(hold_cnt != 0),
            rfifo.w_data.eq(Mux(second, hold.p1, hold.p0) |
                            (Mux(second, hold_meta[2], hold_meta[1]) << 8)),
        ]
        pairs_open = Signal(range(RDATA_DEPTH // 2 + 2))   # RE# pairs begun, not captured
        pair_start = Signal()
        m.d.sync += pairs_open.eq(pairs_open + pair_start - pair_in)
        credit = (rfifo.level + hold_cnt + 2 * pairs_open + 2) <= RDATA_DEPTH

        # Byte-0 flags of the open RE# pair
        b0_last = Signal()

        # DQS level at the end of the last data-in slot, the slot's byte was `last`, pad slot
        lvl = Signal()
        cur_last = Signal()
        pad = Signal()
        h = Mux(t.t_dqs == 0, 1, t.t_dqs)
        mid = h >> 1
        re_half = Mux(t.t_re == 0, 1, t.t_re)

        def slot_outputs(s, level):
            """DQS phases in clock `s` of a data-in slot; `level` is DQS before the slot's
            edge, which comes in the slot's middle (`h` phases in)."""
            if isinstance(s, int):          # s = 0: the edge is never in phase 0
                return [dqs0.eq(level), dqs1.eq(Mux(mid == 0, ~level, level))]
            return [dqs0.eq(Mux((s > mid) | ((s == mid) & ~h[0]), ~level, level)),
                    dqs1.eq(Mux(s >= mid, ~level, level))]

        # Edge gates
        holds_ok = ((c_we_rise >= t.t_calh) & (c_we_rise >= t.t_cah) &
                    (c_re_rise >= t.t_rhw) & (c_re_rise >= t.t_rpsth) &
                    (c_wpost >= t.t_wpsth))
        we_fall_ok = holds_ok & (c_we_rise >= t.t_wh)
        we_rise_ok = ((c_phase >= t.t_wp) & (c_phase >= t.t_cals) & (c_phase >= t.t_cas) &
                      (c_ce_fall >= t.t_cs))
        # after an address, the preamble starts t_wpre before tADL is over, so tADL is spent
        # with DQS released and the preamble keeps its programmed length
        wburst_ok = (holds_ok & ~cle & ~ale & ~dqs_oe &
                     ~(adl_pending & ((c_we_rise + t.t_wpre) < t.t_adl)))
        rburst_ok = ((c_we_rise >= t.t_whr) & (c_rb >= t.t_rr) & (c_ce_fall >= t.t_cr) &
                     (c_re_rise >= t.t_rpsth) & (c_wpost >= t.t_wpsth) &
                     ~cle & ~ale & ~dq_oe & ~dqs_oe & credit)
        more_dout = held & is_dout & same_way

        fsm_rb_wait = Signal()
        expired = busy_timer(m, self.busy_now, fsm_rb_wait, self.busy_timeout, "rb_wait")
        with m.FSM(name="fsm") as fsm:
            with m.State("IDLE"):
                with m.If(c_we_rise >= t.t_calh):
                    m.d.sync += [cle.eq(0), ale.eq(0)]
                with m.If(c_we_rise >= t.t_cah):
                    m.d.sync += dq_oe.eq(0)
                with m.If(pairs_open == 0):
                    m.d.sync += rx_en.eq(0)

                switch_way = held & needs_ce & ~same_way
                with m.If(ce_on & (release | switch_way)):
                    with m.If((c_we_rise >= t.t_ch) & holds_ok):
                        m.d.sync += [ce_on.eq(0), release.eq(0), ce_n.eq(all_ones)]
                with m.Elif(held & needs_ce & ~ce_on):
                    m.d.sync += [ce_on.eq(1), ce_way.eq(req.way), c_ce_fall.eq(1),
                                 ce_n.eq(~(Const(1, 8) << req.way)[:self.n_ways])]
                with m.Elif(held & is_latch):
                    with m.If(we_fall_ok):
                        m.d.comb += take.eq(1)
                        m.d.sync += [
                            we_n.eq(0), c_phase.eq(1),
                            cle.eq(kind == CycleKind.CMD), ale.eq(kind == CycleKind.ADDR),
                            dq.eq(req.data), dq_oe.eq(1), release.eq(req.last),
                            adl_pending.eq(kind == CycleKind.ADDR),
                        ]
                        m.next = "WE_LOW"
                with m.Elif(held & is_din):
                    with m.If(wburst_ok):
                        # write preamble: DQS driven low, the first byte on DQ
                        m.d.sync += [dqs_oe.eq(1), dqs0.eq(0), dqs1.eq(0), lvl.eq(0),
                                     dq.eq(req.data), dq_oe.eq(1), c_phase.eq(1)]
                        m.next = "W_PRE"
                with m.Elif(held & is_dout):
                    with m.If(rburst_ok):
                        # read preamble: RE# low
                        m.d.comb += pair_start.eq(1)
                        m.d.sync += [re_n.eq(0), rx_en.eq(1), c_phase.eq(1)]
                        m.next = "R_PRE"
                with m.Elif(held & (kind == CycleKind.WAIT_RB)):
                    with m.If(c_we_rise >= t.t_wb):
                        m.d.sync += c_phase.eq(1)
                        m.next = "RB_WAIT"
                with m.Elif(held & (kind == CycleKind.WAIT_CCS)):
                    with m.If(c_we_rise >= t.t_ccs):
                        m.d.comb += take.eq(1)
                        m.d.sync += release.eq(ce_on & req.last)
                with m.Elif(held):
                    m.d.comb += take.eq(1)      # reserved kinds are dropped

            with m.State("WE_LOW"):
                with m.If(we_rise_ok):
                    m.d.sync += [we_n.eq(1), c_we_rise.eq(1)]
                    m.next = "IDLE"

            # -- data in --
            slot = Signal(w)

            with m.State("W_PRE"):
                with m.If((c_phase >= t.t_wpre) & (c_ce_fall >= t.t_cs) &
                          ~(adl_pending & (c_we_rise < t.t_adl))):
                    m.d.comb += take.eq(1)
                    m.d.sync += [adl_pending.eq(0), release.eq(req.last), pad.eq(0),
                                 dq.eq(req.data), slot.eq(0), cur_last.eq(req.last),
                                 *slot_outputs(0, lvl)]
                    m.next = "W_SLOT"

            with m.State("W_SLOT"):
                nxt = slot + 1
                with m.If(nxt < h):
                    m.d.sync += [slot.eq(nxt), *slot_outputs(nxt, lvl)]
                with m.Else():
                    # slot end: this slot's DQS edge (lvl -> ~lvl) has happened
                    ended = cur_last | pad | (held & ~(is_din & same_way))
                    with m.If(~ended & held):
                        m.d.comb += take.eq(1)
                        m.d.sync += [lvl.eq(~lvl), release.eq(req.last), dq.eq(req.data),
                                     slot.eq(0), cur_last.eq(req.last),
                                     *slot_outputs(0, ~lvl)]
                    with m.Elif(ended & ~lvl):
                        # the edge was rising: a pad slot (same byte) brings DQS low again
                        m.d.sync += [lvl.eq(1), pad.eq(1), slot.eq(0), *slot_outputs(0, 1)]
                    with m.Elif(ended):
                        # postamble: DQ released, DQS stays low t_wpst, then released
                        m.d.sync += [dq_oe.eq(0), c_phase.eq(1), lvl.eq(0),
                                     dqs0.eq(0), dqs1.eq(0)]
                        m.next = "W_POST"
                    with m.Else():
                        # pause: DQ and DQS static (at the level after this slot's edge) until
                        # the next request; with one clock per byte the slot's two phases
                        # would otherwise strobe again every clock
                        m.d.sync += [dqs0.eq(~lvl), dqs1.eq(~lvl)]

            with m.State("W_POST"):
                with m.If(c_phase >= t.t_wpst):
                    m.d.sync += [dqs_oe.eq(0), c_wpost.eq(1)]
                    m.next = "IDLE"

            # -- data out --
            with m.State("R_PRE"):
                with m.If(c_phase >= t.t_rpre):
                    m.d.comb += take.eq(1)
                    m.d.sync += [re_n.eq(1), c_phase.eq(1), b0_last.eq(req.last),
                                 release.eq(req.last)]
                    m.next = "R_HIGH"

            with m.State("R_HIGH"):
                # RE# high after a rising edge (byte 0 of a pair); the falling edge gives
                # byte 1: the next DOUT, or a pad byte when the burst ends here
                with m.If(c_phase >= re_half):
                    with m.If(~b0_last & more_dout):
                        m.d.comb += [take.eq(1), meta.w_en.eq(1),
                                     meta.w_data.eq(1 | (b0_last << 1) | (req.last << 2))]
                        m.d.sync += [re_n.eq(0), c_phase.eq(1), release.eq(req.last),
                                     b0_last.eq(req.last)]
                        m.next = "R_LOW"
                    with m.Elif(b0_last | (held & ~(is_dout & same_way))):
                        m.d.comb += [meta.w_en.eq(1), meta.w_data.eq(b0_last << 1)]
                        m.d.sync += [re_n.eq(0), c_phase.eq(1), b0_last.eq(1)]
                        m.next = "R_LOW"
                    # else: pause with RE# high until the next request

            with m.State("R_LOW"):
                with m.If(c_phase >= re_half):
                    with m.If(~b0_last & more_dout & credit):
                        m.d.comb += [take.eq(1), pair_start.eq(1)]
                        m.d.sync += [re_n.eq(1), c_phase.eq(1), b0_last.eq(req.last),
                                     release.eq(req.last)]
                        m.next = "R_HIGH"
                    with m.Else():
                        m.next = "R_POST"

            with m.State("R_POST"):
                with m.If(c_phase >= t.t_rpst):
                    m.d.sync += [re_n.eq(1), c_re_rise.eq(1)]
                    m.next = "IDLE"

            with m.State("RB_WAIT"):
                # a die that stays busy past busy_timeout (hung) ends the wait too, flagged
                rb_up = (c_phase > RB_SYNC_STAGES) & rb_ready[req.way]
                with m.If(rb_up | expired):
                    m.d.comb += [take.eq(1), self.rb_timed_out.eq(~rb_up)]
                    m.d.sync += [c_rb.eq(1), release.eq(ce_on & req.last)]
                    m.next = "IDLE"

        m.d.comb += fsm_rb_wait.eq(fsm.ongoing("RB_WAIT"))
        return m
