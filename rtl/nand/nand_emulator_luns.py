# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's per-target and per-LUN state and timers: the RDY/ARDY deadlines (R/B# and
the status byte), FAIL/FAILC and their updates due at an array deadline, the page registers
(pointers), multi-plane groups, cache operations and the operations in flight that a RESET
aborts; per target, the power-on RESET, the selected LUN, status output mode and timing mode.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its logic
to the emulator's Module, so the Verilog stays one module. The command engine writes most of
this state; this part applies the FAIL updates and drives `rb_n` and `timing_mode`.
"""

from amaranth.hdl import Array, Cat, Const, Mux, Signal

from .nand_emulator_defs import TIME_BITS

__all__ = ["NandEmulatorLuns"]


def _arr(width, n, init=0, name=None):
    """n registers, name0..name<n-1> (unnamed without a name), indexable by a Value."""
    return Array(Signal(width, init=init, name=f"{name}{i}" if name else None)
                 for i in range(n))


class NandEmulatorLuns:
    """The state of a NandEmulator's n_ways targets and their LUNs.

    - emu: the NandEmulator (n_ways 1..8, its part's LUNs, planes, timing, clk_freq).
    - geo: its EmuGeometry.
    - m: the emulator's Module.
    - now: the free-running cycle counter (TIME_BITS); a deadline has passed at now >= it.

    Inputs from the command engine: `engine_idle` (FAIL updates are applied only then: the
    engine schedules them) and `walking` / `walking_way` (a confirm shows busy on that
    target's R/B# from its latch on, while the engine walks the block table).
    """

    def __init__(self, emu, geo, m, now):
        self.emu, self.geo, self.m, self.now = emu, geo, m, now
        W, N, P, lb = geo.W, geo.N, geo.P, geo.lb
        pb, bb, row_w, col_w, plane_bits = geo.pb, geo.bb, geo.row_w, geo.col_w, geo.plane_bits
        arr = _arr
        # per target
        self.reset_seen = arr(1, W, name="reset_seen")
        self.sel_lun = arr(lb, W, name="sel_lun")
        self.out_status = arr(1, W, name="out_status")     # output_mode "status"
        self.tmode = arr(8, W, name="tmode")                 # feature 01h P1
        self.tmode_act = arr(8, W, name="tmode_act")         # ... in force (R/B# was high)
        # per LUN
        self.rdy_dl = arr(TIME_BITS, N, name="rdy_dl")
        self.ardy_dl = arr(TIME_BITS, N, name="ardy_dl")
        self.fail = arr(1, N, name="fail")
        self.failc = arr(1, N, name="failc")
        # FAIL/FAILC updates due at an array deadline: two slots (a cache program queues a
        # second page behind the array's current one)
        self.evf_valid = arr(1, N, name="evf_valid")
        self.evf_dl = arr(TIME_BITS, N, name="evf_dl")
        self.evf_fail = arr(1, N, name="evf_fail")
        self.evf_cache = arr(1, N, name="evf_cache")
        self.evf2_valid = arr(1, N, name="evf2_valid")
        self.evf2_dl = arr(TIME_BITS, N, name="evf2_dl")
        self.evf2_fail = arr(1, N, name="evf2_fail")
        self.evf2_cache = arr(1, N, name="evf2_cache")
        self.cache_mode = arr(2, N, name="cache_mode")     # CACHE_NONE / _READ / _PROG
        self.lrr_valid = arr(1, N, name="lrr_valid")       # last_read_row (for 31h)
        self.lrr_row = arr(row_w, N, name="lrr_row")
        self.dreg_row = arr(row_w, N, name="dreg_row")     # the data register (cache read)
        self.dreg_kind = arr(2, N, name="dreg_kind")
        self.dreg_plane = arr(plane_bits, N, name="dreg_plane")
        self.reg_row = Array(arr(row_w, P) for _ in range(N))   # page registers, per plane
        self.reg_kind = Array(arr(2, P) for _ in range(N))
        self.column = arr(col_w, N, name="column")
        self.out_plane = arr(plane_bits, N, name="out_plane")
        self.mp_kind = arr(2, N, name="mp_kind")
        self.mp_mask = arr(P, N, name="mp_mask")
        self.mp_page = arr(max(1, pb), N, name="mp_page")
        self.mp_row = Array(arr(row_w, P) for _ in range(N))
        self.inf_erase = arr(P, N, name="inf_erase")        # planes of an erase in flight
        self.inf_prog = arr(P, N, name="inf_prog")          # planes of a program in flight
        self.inf_prog_q = arr(1, N, name="inf_prog_q")      # a cache page queued behind it
        self.inf_block = Array(arr(max(1, bb), P) for _ in range(N))
        # inputs from the command engine
        self.engine_idle = Signal()
        self.walking = Signal()
        self.walking_way = Signal(emu.way_bits)

    # --- time -------------------------------------------------------------------------------

    def after(self, ns, stamp):
        """The deadline ns after a latch stamped `stamp` (see NandEmulator's docstring)."""
        return stamp + self.emu._cyc(ns)

    def ready(self, dl):
        return self.now >= dl

    # --- views and updates the engine uses ----------------------------------------------------

    def status_of(self, idx):
        """The status byte of LUN idx (FAIL/FAILC shown once RDY)."""
        ready, fail, failc = self.ready, self.fail, self.failc
        rdy, ardy = ready(self.rdy_dl[idx]), ready(self.ardy_dl[idx])
        return Cat(rdy & fail[idx], rdy & failc[idx], Const(0, 3), ardy, rdy, self.emu.wp_n)

    def target_ready(self, way):
        """Every LUN of the target is RDY and ARDY."""
        ready, lun_index = self.ready, self.geo.lun_index
        rdy_dl, ardy_dl = self.rdy_dl, self.ardy_dl
        return Cat(ready(rdy_dl[lun_index(way, l)]) & ready(ardy_dl[lun_index(way, l)])
                   for l in range(self.geo.L)).all()

    def busy_target(self, way, ns, stamp):
        """Every LUN of the target busy for ns from `stamp` (ARDY no earlier)."""
        m, rdy_dl, ardy_dl = self.m, self.rdy_dl, self.ardy_dl
        for l in range(self.geo.L):
            i = self.geo.lun_index(way, l)
            dl = self.after(ns, stamp)
            m.d.sync += rdy_dl[i].eq(dl)
            m.d.sync += ardy_dl[i].eq(Mux(ardy_dl[i] > dl, ardy_dl[i], dl))

    def schedule_fail(self, li, dl, value, cache):
        """FAIL (and FAILC along a cache program) take `value` at deadline dl."""
        m = self.m
        evf_valid, evf_dl, evf_fail, evf_cache = (self.evf_valid, self.evf_dl, self.evf_fail,
                                                  self.evf_cache)
        evf2_valid, evf2_dl, evf2_fail, evf2_cache = (self.evf2_valid, self.evf2_dl,
                                                      self.evf2_fail, self.evf2_cache)
        with m.If(evf_valid[li]):
            m.d.sync += [evf2_valid[li].eq(1), evf2_dl[li].eq(dl), evf2_fail[li].eq(value),
                         evf2_cache[li].eq(cache)]
        with m.Else():
            m.d.sync += [evf_valid[li].eq(1), evf_dl[li].eq(dl), evf_fail[li].eq(value),
                         evf_cache[li].eq(cache)]

    # --- logic --------------------------------------------------------------------------------

    def build(self):
        """FAIL updates at their deadlines; R/B# and the timing mode of each target."""
        emu, m, ready = self.emu, self.m, self.ready
        W, L, N = self.geo.W, self.geo.L, self.geo.N
        fail, failc = self.fail, self.failc
        evf_valid, evf_dl, evf_fail, evf_cache = (self.evf_valid, self.evf_dl, self.evf_fail,
                                                  self.evf_cache)
        evf2_valid, evf2_dl, evf2_fail, evf2_cache = (self.evf2_valid, self.evf2_dl,
                                                      self.evf2_fail, self.evf2_cache)
        rdy_dl, tmode, tmode_act = self.rdy_dl, self.tmode, self.tmode_act
        engine_idle, walking, walking_way = self.engine_idle, self.walking, self.walking_way

        for i in range(N):
            # applied while the engine is idle (it schedules them), a few cycles at most late
            with m.If(evf_valid[i] & ready(evf_dl[i]) & engine_idle):
                m.d.sync += [fail[i].eq(evf_fail[i]),
                             failc[i].eq(Mux(evf_cache[i], fail[i], 0)),
                             evf_valid[i].eq(evf2_valid[i]), evf_dl[i].eq(evf2_dl[i]),
                             evf_fail[i].eq(evf2_fail[i]), evf_cache[i].eq(evf2_cache[i]),
                             evf2_valid[i].eq(0)]

        # a confirm shows busy from the latch on, while the engine walks the block table
        for w in range(W):
            m.d.comb += [
                emu.rb_n[w].eq(Cat(ready(rdy_dl[w * L + l]) for l in range(L)).all()
                               & ~(walking & (walking_way == w))),
                emu.timing_mode[4 * w:4 * w + 4].eq(tmode_act[w][:4])]
            # a new timing mode (SET FEATURES 01h, RESET) applies once the target is ready
            with m.If(emu.rb_n[w]):
                m.d.sync += tmode_act[w].eq(tmode[w])
