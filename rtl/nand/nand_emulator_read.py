# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's page reads and data-output selection: the read confirm (30h, 32h a plane
of a multi-plane group) points each plane's page register at its row and records what the
block table says it holds (data, erased, a factory bad block's marker); change read column
(05h-E0h, 06h-E0h with LUN and plane); cache reads (31h sequential or random, 3Fh last) that
move the array's page to the cache register; each ends by restarting the read prefetch at
the selected register and column.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its states
to the command engine's FSM in the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Mux

from .nand_emulator_defs import (
    CACHE_NONE,
    CACHE_READ,
    MP_NONE,
    MP_READ,
    REG_DATA,
    REG_FF,
    REG_MARK,
)

__all__ = ["NandEmulatorRead"]


class NandEmulatorRead:
    """The READ_*, CHCOL*, CACHE_READ* and RESTART states of a NandEmulator.

    - engine: the NandEmulatorEngine (walk registers, helpers and the other parts).
    """

    def __init__(self, engine):
        self.engine = engine

    def read_states(self):
        """30h / 32h: the confirm, then the walk over the group's planes."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        L, g, lun_index = geo.L, geo.g, geo.lun_index
        plane_of, t, unpack = geo.plane_of, geo.t, geo.unpack
        ardy_dl, cache_mode = luns.ardy_dl, luns.cache_mode
        column, dreg_kind, dreg_plane = luns.column, luns.dreg_kind, luns.dreg_plane
        dreg_row, inf_erase = luns.dreg_row, luns.inf_erase
        inf_prog, lrr_row, lrr_valid = luns.inf_prog, luns.lrr_row, luns.lrr_valid
        mp_kind, mp_mask = luns.mp_kind, luns.mp_mask
        mp_page, mp_row, out_plane = luns.mp_page, luns.mp_row, luns.out_plane
        out_status, rdy_dl, ready = luns.out_status, luns.rdy_dl, luns.ready
        reg_kind, reg_row, sel_lun = luns.reg_kind, luns.reg_row, luns.sel_lun
        tb_entry = eng.tables.tb_entry
        stat_inc = eng.counters.stat_inc
        c_col, c_row, p_lun = dec.c_col, dec.c_row, dec.p_lun
        group_checks, idx = eng.group_checks, eng.idx
        page_cycles, plane_walk, queue_plane = eng.page_cycles, eng.plane_walk, eng.queue_plane
        walk_conf, walk_mask, walk_page = eng.walk_conf, eng.walk_mask, eng.walk_page
        walk_plane, walk_stamp, walk_way = eng.walk_plane, eng.walk_stamp, eng.walk_way

        # ---- read confirm: 30h (the group) or 32h (queue a plane) ----
        with m.State("READ_CONFIRM"):
            lun_c, blk_c, page_c, ok_c = unpack(c_row)
            li = lun_index(walk_way, lun_c) if L > 1 else walk_way
            pl = plane_of(blk_c)
            m.d.sync += [idx.eq(li), p_lun.eq(lun_c)]
            with group_checks(li, ok_c, ready(rdy_dl[li]) & ready(ardy_dl[li]),
                              c_col >= emu.reg_bytes, MP_READ, pl, mp_page[li] != page_c):
                m.d.sync += [sel_lun[walk_way].eq(lun_c), out_status[walk_way].eq(0),
                             mp_row[li][pl].eq(c_row)]
                with m.If(walk_conf == 0x32):
                    queue_plane(li, MP_READ, pl, page_c)
                with m.Else():
                    m.d.sync += [walk_mask.eq(mp_mask[li] | (1 << pl)), walk_plane.eq(0),
                                 walk_page.eq(page_c), mp_mask[li].eq(0),
                                 mp_kind[li].eq(MP_NONE), out_plane[li].eq(pl),
                                 column[li].eq(c_col), inf_prog[li].eq(0),
                                 inf_erase[li].eq(0), lrr_valid[li].eq(1),
                                 lrr_row[li].eq(c_row), cache_mode[li].eq(CACHE_NONE),
                                 dreg_plane[li].eq(pl), dreg_row[li].eq(c_row)]
                    cycles = page_cycles(t.t_r, page_c)
                    end = walk_stamp + cycles
                    m.d.sync += [rdy_dl[li].eq(end),
                                 ardy_dl[li].eq(Mux(ardy_dl[li] > end, ardy_dl[li], end))]
                    m.next = "READ_WALK"

        with m.State("READ_WALK"):
            li = idx
            with plane_walk(unpack(mp_row[li][walk_plane])[1], "READ_WALK_KIND"):
                m.next = "RESTART"

        with m.State("READ_WALK_KIND"):
            li = idx
            e = tb_entry
            row = mp_row[li][walk_plane]
            _, _, pg, _ = unpack(row)
            edge_page = (pg == 0) | (pg == g.pages_per_block - 1)
            kind = Mux(e.fbad, Mux(edge_page, REG_MARK, REG_FF),
                       Mux(pg < e.next_page, REG_DATA, REG_FF))
            m.d.sync += [reg_row[li][walk_plane].eq(row), reg_kind[li][walk_plane].eq(kind),
                         walk_plane.eq(walk_plane + 1)]
            with m.If(walk_plane == dreg_plane[li]):
                m.d.sync += dreg_kind[li].eq(kind)
            m.d.comb += stat_inc[0].eq(1)
            m.next = "READ_WALK"

    def column_states(self):
        """05h-E0h / 06h-E0h: a new column (and LUN, plane) for data output."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        L, lun_index, plane_of, unpack = geo.L, geo.lun_index, geo.plane_of, geo.unpack
        ardy_dl, cache_mode = luns.ardy_dl, luns.cache_mode
        column, out_plane = luns.column, luns.out_plane
        out_status, rdy_dl = luns.out_status, luns.rdy_dl
        ready, reset_seen, sel_lun = luns.ready, luns.reset_seen, luns.sel_lun
        violate = eng.counters.violate
        c_row = dec.c_row
        idx, walk_col, walk_way = eng.idx, eng.walk_col, eng.walk_way

        # ---- 05h-E0h / 06h-E0h: a new column (and LUN, plane) for data output ----
        with m.State("CHCOL"):
            lw = walk_way
            li = lun_index(lw, sel_lun[lw]) if L > 1 else lw
            with m.If(~(reset_seen[lw] | ~emu.cfg_require_reset)):
                violate("reset-after-power-on")
                m.next = "IDLE"
            with m.Elif(~(ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                               | (cache_mode[li] == CACHE_READ)))):
                violate("busy")
                m.next = "IDLE"
            with m.Elif(walk_col >= emu.reg_bytes):
                violate("address-range")
                m.next = "IDLE"
            with m.Else():
                m.d.sync += [column[li].eq(walk_col), out_status[lw].eq(0), idx.eq(li)]
                m.next = "RESTART"

        with m.State("CHCOL_ENH"):
            lw = walk_way
            lun_c, blk_c, _, ok_c = unpack(c_row)
            li = lun_index(lw, lun_c) if L > 1 else lw
            with m.If(~(reset_seen[lw] | ~emu.cfg_require_reset)):
                violate("reset-after-power-on")
                m.next = "IDLE"
            with m.Elif(~ok_c):
                violate("address-range")
                m.next = "IDLE"
            with m.Elif(~(ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                               | (cache_mode[li] == CACHE_READ)))):
                violate("busy")
                m.next = "IDLE"
            with m.Elif(walk_col >= emu.reg_bytes):
                violate("address-range")
                m.next = "IDLE"
            with m.Else():
                m.d.sync += [column[li].eq(walk_col), out_status[lw].eq(0), idx.eq(li),
                             sel_lun[lw].eq(lun_c), out_plane[li].eq(plane_of(blk_c))]
                m.next = "RESTART"

    def cache_read_states(self):
        """31h (sequential; walk_pass=1: 00h-row-31h random) and 3Fh."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        L, g, lun_index = geo.L, geo.g, geo.lun_index
        plane_of, t, tb_index, unpack = geo.plane_of, geo.t, geo.tb_index, geo.unpack
        ardy_dl, cache_mode = luns.ardy_dl, luns.cache_mode
        column, dreg_kind = luns.column, luns.dreg_kind
        dreg_plane, dreg_row = luns.dreg_plane, luns.dreg_row
        lrr_row, lrr_valid = luns.lrr_row, luns.lrr_valid
        out_plane, out_status = luns.out_plane, luns.out_status
        rdy_dl, ready = luns.rdy_dl, luns.ready
        reg_kind, reg_row = luns.reg_kind, luns.reg_row
        reset_seen, sel_lun = luns.reset_seen, luns.sel_lun
        tb_entry, tb_rd = eng.tables.tb_entry, eng.tables.tb_rd
        stat_inc, violate = eng.counters.stat_inc, eng.counters.violate
        c_row, p_lun = dec.c_row, dec.p_lun
        idx, page_cycles, walk_conf = eng.idx, eng.page_cycles, eng.walk_conf
        walk_pass, walk_stamp, walk_way = eng.walk_pass, eng.walk_stamp, eng.walk_way

        # ---- 31h (sequential; walk_pass=1: 00h-row-31h random) and 3Fh ----
        with m.State("CACHE_READ"):
            cw = walk_way
            li = lun_index(cw, sel_lun[cw]) if L > 1 else cw
            r_lun, _, _, r_ok = unpack(c_row)
            _, s_blk, s_page, _ = unpack(lrr_row[li])
            m.d.sync += [idx.eq(li), p_lun.eq(sel_lun[cw])]
            ok_ready = ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                            | (cache_mode[li] == CACHE_READ))
            with m.If(~(reset_seen[cw] | ~emu.cfg_require_reset)):
                violate("reset-after-power-on")
                m.next = "IDLE"
            with m.Elif(walk_conf == 0x3F):
                with m.If(cache_mode[li] != CACHE_READ):
                    violate("command-sequence")
                    m.next = "IDLE"
                with m.Elif(~ok_ready):
                    violate("busy")
                    m.next = "IDLE"
                with m.Else():
                    # the array's last page moves to the cache register; no new read
                    start = Mux(ready(ardy_dl[li]), walk_stamp, ardy_dl[li])
                    end = start + emu._cyc(t.t_rcbsy_ns)
                    dp = dreg_plane[li]
                    m.d.sync += [reg_row[li][dp].eq(dreg_row[li]),
                                 reg_kind[li][dp].eq(dreg_kind[li]),
                                 out_plane[li].eq(dp), column[li].eq(0),
                                 rdy_dl[li].eq(end), ardy_dl[li].eq(end),
                                 cache_mode[li].eq(CACHE_NONE), lrr_valid[li].eq(0),
                                 out_status[cw].eq(0)]
                    m.next = "RESTART"
            with m.Elif(walk_pass & ~r_ok):
                violate("address-range")
                m.next = "IDLE"
            with m.Elif(walk_pass & (r_lun != sel_lun[cw])):
                violate("command-sequence")
                m.next = "IDLE"
            with m.Elif(~lrr_valid[li]):
                violate("command-sequence")
                m.next = "IDLE"
            with m.Elif(~ok_ready):
                violate("busy")
                m.next = "IDLE"
            with m.Elif(~walk_pass & (s_page + 1 >= g.pages_per_block)):
                violate("address-range")
                m.next = "IDLE"
            with m.Else():
                nrow_ = Mux(walk_pass, c_row, lrr_row[li] + 1)
                _, n_blk, _, _ = unpack(nrow_)
                m.d.sync += [c_row.eq(nrow_)]
                m.d.comb += tb_rd.addr.eq(tb_index(cw, sel_lun[cw], n_blk))
                m.next = "CACHE_READ_KIND"

        with m.State("CACHE_READ_KIND"):
            li = idx
            cw = walk_way
            e = tb_entry
            _, n_blk, n_page, _ = unpack(c_row)
            edge_page = (n_page == 0) | (n_page == g.pages_per_block - 1)
            kind = Mux(e.fbad, Mux(edge_page, REG_MARK, REG_FF),
                       Mux(n_page < e.next_page, REG_DATA, REG_FF))
            start = Mux(ready(ardy_dl[li]), walk_stamp, ardy_dl[li])
            t_r = page_cycles(t.t_r, n_page)
            rb = start + emu._cyc(t.t_rcbsy_ns)
            ab = start + t_r
            dp = dreg_plane[li]
            # the page the array finished goes to the cache register, the new one to the
            # data register (pointers: applying it now is what RDY=0 until rb shows)
            m.d.sync += [reg_row[li][dp].eq(dreg_row[li]), reg_kind[li][dp].eq(dreg_kind[li]),
                         out_plane[li].eq(dp), column[li].eq(0),
                         dreg_row[li].eq(c_row), dreg_kind[li].eq(kind),
                         dreg_plane[li].eq(plane_of(n_blk)),
                         rdy_dl[li].eq(rb), ardy_dl[li].eq(Mux(ab > rb, ab, rb)),
                         cache_mode[li].eq(CACHE_READ), lrr_valid[li].eq(1),
                         lrr_row[li].eq(c_row), out_status[cw].eq(0)]
            m.d.comb += stat_inc[0].eq(1)
            m.next = "RESTART"

    def restart_state(self):
        """RESTART: the prefetch follows the selected register from its column."""
        eng = self.engine
        m, luns = eng.m, eng.luns
        column, out_plane = luns.column, luns.out_plane
        restart_at = eng.dram.restart_at
        idx, walk_way = eng.idx, eng.walk_way

        # the prefetch follows the selected register from its column
        with m.State("RESTART"):
            li = idx
            restart_at(walk_way, li, out_plane[li], column[li])
            m.next = "IDLE"
