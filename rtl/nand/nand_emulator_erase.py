# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's block erase: the confirm (D0h, D1h a plane of a multi-plane group) with
the golden's checks, then one block-table write a plane (next page 0, erased, P/E count + 1;
past `cfg_pe_limit` the block goes bad and the erase fails), tBERS busy and FAIL.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its states
to the command engine's FSM in the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Const

from .nand_emulator_defs import (
    CACHE_NONE,
    MP_ERASE,
    MP_NONE,
    PE_BITS,
)

__all__ = ["NandEmulatorErase"]


class NandEmulatorErase:
    """The ERASE_CONFIRM, ERASE_WALK and ERASE_WALK_WR states of a NandEmulator.

    - engine: the NandEmulatorEngine (walk registers, helpers and the other parts).
    """

    def __init__(self, engine):
        self.engine = engine

    def states(self):
        """The confirm, then the walk over the group's planes."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        L, lun_index, plane_of = geo.L, geo.lun_index, geo.plane_of
        t, tb_index, unpack = geo.t, geo.tb_index, geo.unpack
        after, ardy_dl, cache_mode = luns.after, luns.ardy_dl, luns.cache_mode
        inf_block, inf_erase = luns.inf_block, luns.inf_erase
        inf_prog, lrr_valid = luns.inf_prog, luns.lrr_valid
        mp_kind, mp_mask, mp_row = luns.mp_kind, luns.mp_mask, luns.mp_row
        rdy_dl, ready = luns.rdy_dl, luns.ready
        schedule_fail, sel_lun = luns.schedule_fail, luns.sel_lun
        tb_entry, tb_rd = eng.tables.tb_entry, eng.tables.tb_rd
        tb_wr, wr_entry = eng.tables.tb_wr, eng.tables.wr_entry
        stat_inc = eng.counters.stat_inc
        c_row, p_lun = dec.c_row, dec.p_lun
        group_checks, idx = eng.group_checks, eng.idx
        plane_walk, queue_plane, walk_conf = eng.plane_walk, eng.queue_plane, eng.walk_conf
        walk_fail, walk_mask = eng.walk_fail, eng.walk_mask
        walk_plane, walk_stamp, walk_way = eng.walk_plane, eng.walk_stamp, eng.walk_way

        # ---- erase confirm: D0h (the group) or D1h (queue a plane) ----
        with m.State("ERASE_CONFIRM"):
            lun_c, blk_c, _, ok_c = unpack(c_row)
            li = lun_index(walk_way, lun_c) if L > 1 else walk_way
            pl = plane_of(blk_c)
            m.d.sync += [idx.eq(li), p_lun.eq(lun_c)]
            with group_checks(li, ok_c, ready(rdy_dl[li]) & ready(ardy_dl[li]), None,
                              MP_ERASE, pl, None):
                m.d.sync += [sel_lun[walk_way].eq(lun_c), mp_row[li][pl].eq(c_row)]
                with m.If(walk_conf == 0xD1):
                    queue_plane(li, MP_ERASE, pl, Const(0))
                with m.Else():
                    m.d.sync += [walk_mask.eq(mp_mask[li] | (1 << pl)), walk_plane.eq(0),
                                 walk_fail.eq(0), mp_mask[li].eq(0),
                                 mp_kind[li].eq(MP_NONE), inf_erase[li].eq(0),
                                 inf_prog[li].eq(0)]
                    m.next = "ERASE_WALK"

        with m.State("ERASE_WALK"):
            li = idx
            with plane_walk(unpack(mp_row[li][walk_plane])[1], "ERASE_WALK_WR"):
                end = after(t.t_bers_ns, walk_stamp)
                m.d.sync += [rdy_dl[li].eq(end), ardy_dl[li].eq(end),
                             cache_mode[li].eq(CACHE_NONE), lrr_valid[li].eq(0)]
                schedule_fail(li, end, walk_fail, 0)
                m.next = "IDLE"

        with m.State("ERASE_WALK_WR"):
            li = idx
            e = tb_entry
            _, blk, _, _ = unpack(mp_row[li][walk_plane])
            pe = (e.pe + 1)[:PE_BITS]
            worn = (emu.cfg_pe_limit != 0) & (pe > emu.cfg_pe_limit)
            m.d.comb += [tb_wr.addr.eq(tb_index(walk_way, p_lun, blk)),
                         tb_wr.data.eq(tb_rd.data)]
            with m.If(~emu.wp_n | e.fbad | e.bad):
                m.d.sync += walk_fail.eq(1)
                m.d.comb += stat_inc[4].eq(1)
            with m.Elif(worn):
                m.d.sync += walk_fail.eq(1)
                m.d.comb += [stat_inc[4].eq(1), stat_inc[2].eq(1), tb_wr.en.eq(1),
                             wr_entry.pe.eq(pe), wr_entry.bad.eq(1), wr_entry.erased.eq(0)]
            with m.Else():
                m.d.comb += [stat_inc[2].eq(1), tb_wr.en.eq(1), wr_entry.pe.eq(pe),
                             wr_entry.next_page.eq(0), wr_entry.erased.eq(1)]
                m.d.sync += [inf_erase[li].bit_select(walk_plane, 1).eq(1),
                             inf_block[li][walk_plane].eq(blk)]
            m.d.sync += walk_plane.eq(walk_plane + 1)
            m.next = "ERASE_WALK"
