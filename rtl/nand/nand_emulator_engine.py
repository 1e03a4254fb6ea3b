# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's command engine: one FSM that pops a latch when idle (most take one cycle)
and walks the block table for a program, erase or read confirm (one or two cycles a plane),
a RESET's aborted operations and the backdoor. This file holds the FSM's frame, the walk
registers and the walk helpers the operations share; the states are in
nand_emulator_decoder.py (IDLE), nand_emulator_tables.py (BACKDOOR),
nand_emulator_target.py (features, RESET), nand_emulator_program.py,
nand_emulator_erase.py and nand_emulator_read.py.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its logic
to the emulator's Module, so the Verilog stays one module.
"""

from contextlib import contextmanager

from amaranth.hdl import Cat, Const, Mux, Signal

from .nand_emulator_decoder import NandEmulatorDecoder
from .nand_emulator_defs import MP_NONE, TIME_BITS
from .nand_emulator_erase import NandEmulatorErase
from .nand_emulator_program import NandEmulatorProgram
from .nand_emulator_read import NandEmulatorRead
from .nand_emulator_target import NandEmulatorTarget

__all__ = ["NandEmulatorEngine"]

# The states during which a target shows busy on R/B# (walking): a confirm's walk, RESET's,
# SET FEATURES and a cache read's table look-up.
WALK_STATES = ("PROG_CONFIRM", "PROG_WALK", "PROG_WALK_CHK", "ERASE_CONFIRM", "ERASE_WALK",
               "ERASE_WALK_WR", "READ_CONFIRM", "READ_WALK", "READ_WALK_KIND", "RESET",
               "RESET_ERASE", "RESET_ERASE_WR", "SETFEAT", "CACHE_READ", "CACHE_READ_KIND")


class NandEmulatorEngine:
    """The command engine of a NandEmulator.

    - emu: the NandEmulator; geo its EmuGeometry; m its Module.
    - pins, luns, tables, counters, dram, dataout: its other parts (NandEmulatorPins, ...).

    Walk registers (loaded by a confirm in IDLE, used by the states after it): `idx` the LUN
    of the walk, `walk_mask` the planes left, `walk_plane`, `walk_pass` (program: 0 check
    every plane, 1 write), `walk_fail`, `walk_rule` / `walk_ruled` (the first rule a program's
    check found), `walk_page`, `walk_stamp` (the confirm's latch), `walk_conf` (its command),
    `walk_way`, `walk_col`, `walk_lun`.
    """

    def __init__(self, emu, geo, m, *, pins, luns, tables, counters, dram, dataout):
        self.emu, self.geo, self.m = emu, geo, m
        self.pins, self.luns, self.tables = pins, luns, tables
        self.counters, self.dram, self.dataout = counters, dram, dataout
        N, P, pb, lb, col_w = geo.N, geo.P, geo.pb, geo.lb, geo.col_w
        self.idx = Signal(range(max(N, 2)))     # the LUN of the current table walk
        self.walk_mask = Signal(P)              # planes left to walk
        self.walk_plane = Signal(range(P + 1))
        self.walk_pass = Signal()               # program: 0 check every plane, 1 write
        self.walk_fail = Signal()
        self.walk_rule = Signal(4)
        self.walk_ruled = Signal()
        self.walk_page = Signal(max(1, pb))
        self.walk_stamp = Signal(TIME_BITS)
        self.walk_conf = Signal(8)
        self.walk_way = Signal(emu.way_bits)
        self.walk_col = Signal(col_w)
        self.walk_lun = Signal(lb)
        self.decoder = NandEmulatorDecoder(self)
        self.target = NandEmulatorTarget(self)
        self.program = NandEmulatorProgram(self)
        self.erase = NandEmulatorErase(self)
        self.read = NandEmulatorRead(self)

    # --- helpers of the operations' states ----------------------------------------------------

    @contextmanager
    def group_checks(self, li, ok, busy_ok, out_of_range, kind, pl, page_differs):
        """The golden's checks of one plane of a (multi-plane) program, erase or read, in
        its order; the body runs when every check passes, else the rule is counted.
        out_of_range / page_differs: None where the operation has no such check."""
        emu, m, violate = self.emu, self.m, self.counters.violate
        reset_seen, mp_mask, mp_kind = self.luns.reset_seen, self.luns.mp_mask, self.luns.mp_kind
        walk_way = self.walk_way
        with m.If(~(reset_seen[walk_way] | ~emu.cfg_require_reset)):
            violate("reset-after-power-on")
            m.next = "IDLE"
        with m.Elif(~ok):
            violate("address-range")
            m.next = "IDLE"
        with m.Elif(~busy_ok):
            violate("busy")
            m.next = "IDLE"
        if out_of_range is not None:       # (a constant condition trips Verilator lint)
            with m.Elif(out_of_range):
                violate("address-range")
                m.next = "IDLE"
        with m.Elif((mp_mask[li] != 0) & (mp_kind[li] != kind)):
            violate("command-sequence")
            m.d.sync += [mp_mask[li].eq(0), mp_kind[li].eq(MP_NONE)]
            m.next = "IDLE"
        same_plane = mp_mask[li].bit_select(pl, 1)
        clash = same_plane if page_differs is None else same_plane | page_differs
        with m.Elif((mp_mask[li] != 0) & clash):
            violate("multi-plane")
            m.d.sync += [mp_mask[li].eq(0), mp_kind[li].eq(MP_NONE)]
            m.next = "IDLE"
        with m.Else():
            yield

    def queue_plane(self, li, kind, pl, page):
        """11h / 32h / D1h: the plane joins the group; the LUN is busy tDBSY."""
        m, luns = self.m, self.luns
        mp_kind, mp_page, mp_mask = luns.mp_kind, luns.mp_page, luns.mp_mask
        rdy_dl, ardy_dl = luns.rdy_dl, luns.ardy_dl
        dl = luns.after(self.geo.t.t_dbsy_ns, self.walk_stamp)
        m.d.sync += [mp_kind[li].eq(kind), mp_page[li].eq(page),
                     mp_mask[li].eq(mp_mask[li] | (1 << pl)), rdy_dl[li].eq(dl),
                     ardy_dl[li].eq(Mux(ardy_dl[li] > dl, ardy_dl[li], dl))]
        m.next = "IDLE"

    @contextmanager
    def plane_walk(self, block, per_plane, first=True):
        """One step of a walk over the planes of walk_mask (a state that comes back to
        itself): a plane in the mask has the table entry of `block` read and goes to the
        `per_plane` state, which steps walk_plane; a plane not in it is skipped; the
        body runs once every plane is done. first=False: an Elif of the caller's If."""
        m, walk_plane, tb_rd = self.m, self.walk_plane, self.tables.tb_rd
        with (m.If if first else m.Elif)(walk_plane == self.geo.P):
            yield
        with m.Elif(self.walk_mask.bit_select(walk_plane, 1)):
            m.d.comb += tb_rd.addr.eq(self.geo.tb_index(self.walk_way, self.decoder.p_lun,
                                                        block))
            m.next = per_plane
        with m.Else():
            m.d.sync += walk_plane.eq(walk_plane + 1)

    def page_cycles(self, time_of, page):
        """Cycles of an array time by page type: time_of is the timing's t_r or t_prog (the
        corner it selects, typical or maximum). MLC: lower/upper by page parity, as the die
        models; other cells run their slowest page type on every page (the emulator does not
        divide the page by 3: a TLC drive on the card is timed pessimistically)."""
        cyc, g = self.emu._cyc, self.geo.g
        times = [time_of(t) for t in g.page_types]
        if len(set(times)) == 1:
            return Const(cyc(times[0]), 32)
        if g.bits_per_cell != 2:
            return Const(cyc(max(times)), 32)
        return Mux(page[0], cyc(times[1]), cyc(times[0]))

    # --- logic --------------------------------------------------------------------------------

    def build(self):
        """The FSM, its states in the order of the original single elaborate()."""
        m, luns = self.m, self.luns
        self.decoder.build()
        with m.FSM(name="engine") as fsm:
            m.d.comb += luns.walking.eq(Cat(fsm.ongoing(n) for n in WALK_STATES).any())
            m.d.comb += [luns.walking_way.eq(self.walk_way),
                         luns.engine_idle.eq(fsm.ongoing("IDLE"))]
            self.decoder.idle_state()
            self.tables.backdoor_state()
            self.target.feature_states()
            self.target.reset_states()
            self.program.states()
            self.erase.states()
            self.read.read_states()
            self.read.column_states()
            self.read.cache_read_states()
            self.read.restart_state()
