# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's page program: at 80h's row the block table decides whether the data go
to DRAM (the page filled with FFh first); the confirm (10h, 15h cache, 11h a plane of a
multi-plane group) checks every plane of the group against the golden's rules before it
writes any (a strict refusal leaves no trace), then updates the block table (next page) and
sets the LUN's busy deadlines (tPROG per page type, tCBSY for a cache program) and FAIL.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its states
to the command engine's FSM in the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Mux, Signal

from .nand_emulator_defs import (
    CACHE_NONE,
    CACHE_PROG,
    MP_NONE,
    MP_PROG,
    REG_DATA,
    REG_FF,
    RULE_INDEX,
)

__all__ = ["NandEmulatorProgram"]


class NandEmulatorProgram:
    """The PROG_OPEN, PROG_CONFIRM, PROG_WALK and PROG_WALK_CHK states of a NandEmulator.

    - engine: the NandEmulatorEngine (walk registers, helpers and the other parts).
    """

    def __init__(self, engine):
        self.engine = engine

    def states(self):
        """80h's row known, then the confirm and its two passes over the planes."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        L, lun_index, page_addr = geo.L, geo.lun_index, geo.page_addr
        plane_of, t, tb_index, unpack = geo.plane_of, geo.t, geo.tb_index, geo.unpack
        ardy_dl, cache_mode = luns.ardy_dl, luns.cache_mode
        inf_block, inf_erase = luns.inf_block, luns.inf_erase
        inf_prog, inf_prog_q = luns.inf_prog, luns.inf_prog_q
        lrr_valid, mp_kind = luns.lrr_valid, luns.mp_kind
        mp_mask, mp_page, mp_row, rdy_dl = luns.mp_mask, luns.mp_page, luns.mp_row, luns.rdy_dl
        ready, reg_kind = luns.ready, luns.reg_kind
        reg_row, schedule_fail, sel_lun = luns.reg_row, luns.schedule_fail, luns.sel_lun
        tb_entry, tb_rd = eng.tables.tb_entry, eng.tables.tb_rd
        tb_wr, wr_entry = eng.tables.tb_wr, eng.tables.wr_entry
        rule_count, stat_inc = eng.counters.rule_count, eng.counters.stat_inc
        wq_in, wq_push = eng.dram.wq_in, eng.dram.wq_push
        p_lun, p_ok, p_range, p_row = dec.p_lun, dec.p_ok, dec.p_range, dec.p_row
        group_checks, idx, page_cycles = eng.group_checks, eng.idx, eng.page_cycles
        plane_walk, queue_plane = eng.plane_walk, eng.queue_plane
        walk_conf, walk_fail = eng.walk_conf, eng.walk_fail
        walk_mask, walk_page = eng.walk_mask, eng.walk_page
        walk_pass, walk_plane = eng.walk_pass, eng.walk_plane
        walk_rule, walk_ruled = eng.walk_rule, eng.walk_ruled
        walk_stamp, walk_way = eng.walk_stamp, eng.walk_way

        # ---- 80h: the row is known; may its data go to DRAM? ----
        with m.State("PROG_OPEN"):
            e = tb_entry
            _, _, pg, _ = unpack(p_row)
            allowed = (emu.wp_n & ~e.fbad & ~e.bad & e.erased & (e.next_page == pg))
            with m.If(allowed):
                m.d.comb += [wq_push.eq(1), wq_in.fill.eq(1),
                             wq_in.addr.eq(page_addr(walk_way, p_row))]
                m.d.sync += p_ok.eq(1)
            m.next = "IDLE"

        # ---- program confirm: 10h (the group) or 11h (queue a plane) ----
        confirm_lun = lun_index(walk_way, p_lun) if L > 1 else walk_way
        with m.State("PROG_CONFIRM"):
            li = confirm_lun
            lun_c, blk_c, page_c, ok_c = unpack(p_row)
            pl = plane_of(blk_c)
            m.d.sync += idx.eq(li)
            cache_ok = ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                            | (cache_mode[li] == CACHE_PROG))
            with group_checks(li, ok_c, cache_ok, p_range, MP_PROG, pl,
                              mp_page[li] != page_c):
                m.d.sync += [sel_lun[walk_way].eq(lun_c), mp_row[li][pl].eq(p_row),
                             reg_row[li][pl].eq(p_row),
                             reg_kind[li][pl].eq(Mux(p_ok, REG_DATA, REG_FF))]
                with m.If(walk_conf == 0x11):
                    queue_plane(li, MP_PROG, pl, page_c)
                with m.Else():
                    m.d.sync += [walk_mask.eq(mp_mask[li] | (1 << pl)), walk_plane.eq(0),
                                 walk_pass.eq(0), walk_fail.eq(0), walk_ruled.eq(0),
                                 walk_page.eq(page_c), mp_mask[li].eq(0),
                                 mp_kind[li].eq(MP_NONE), inf_prog[li].eq(0),
                                 inf_erase[li].eq(0),
                                 inf_prog_q[li].eq((inf_prog[li] != 0)
                                                   & ~ready(ardy_dl[li]))]
                    m.next = "PROG_WALK"

        # pass 0 checks every plane (a strict refusal leaves no trace), pass 1 writes
        with m.State("PROG_WALK"):
            li = idx
            with plane_walk(unpack(mp_row[li][walk_plane])[1], "PROG_WALK_CHK"):
                with m.If(walk_pass == 0):
                    with m.If(walk_ruled & emu.cfg_strict):
                        m.d.sync += [rule_count.eq(rule_count + 1),
                                     emu.rule_code.eq(walk_rule)]
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += [walk_pass.eq(1), walk_plane.eq(0)]
                with m.Else():
                    with m.If(walk_ruled):
                        m.d.sync += [rule_count.eq(rule_count + 1),
                                     emu.rule_code.eq(walk_rule)]
                    cycles = page_cycles(t.t_prog, walk_page)
                    start = Mux(ready(ardy_dl[li]), walk_stamp, ardy_dl[li])
                    end = start + cycles
                    # 15h: the cache register is free tCBSY after the array takes the
                    # page; FAILC carries the previous FAIL along a cache program
                    schedule_fail(li, end, walk_fail,
                                  (walk_conf == 0x15) | (cache_mode[li] == CACHE_PROG))
                    m.d.sync += lrr_valid[li].eq(0)
                    with m.If(walk_conf == 0x15):
                        cb = start + emu._cyc(t.t_cbsy_ns)
                        m.d.sync += [rdy_dl[li].eq(cb),
                                     ardy_dl[li].eq(Mux(cb > end, cb, end)),
                                     cache_mode[li].eq(CACHE_PROG)]
                    with m.Else():
                        m.d.sync += [rdy_dl[li].eq(end), ardy_dl[li].eq(end),
                                     cache_mode[li].eq(CACHE_NONE)]
                    m.next = "IDLE"

        with m.State("PROG_WALK_CHK"):
            li = idx
            e = tb_entry
            _, blk, pg, _ = unpack(mp_row[li][walk_plane])
            reason = ~emu.wp_n | e.fbad | e.bad
            rule = Signal(4)
            ruled = Signal()
            with m.If(~reason):
                with m.If(~e.erased):
                    m.d.comb += [ruled.eq(1), rule.eq(RULE_INDEX["erase-before-program"])]
                with m.Elif(pg < e.next_page):
                    m.d.comb += [ruled.eq(1), rule.eq(RULE_INDEX["page-reprogram"])]
                with m.Elif(pg > e.next_page):
                    m.d.comb += [ruled.eq(1), rule.eq(RULE_INDEX["page-order"])]
            with m.If(walk_pass == 0):
                with m.If(ruled & ~walk_ruled):
                    m.d.sync += [walk_ruled.eq(1), walk_rule.eq(rule)]
            with m.Else():
                with m.If(reason | ruled):
                    m.d.sync += walk_fail.eq(1)
                    m.d.comb += stat_inc[3].eq(1)
                    m.d.sync += reg_kind[li][walk_plane].eq(REG_FF)
                with m.Else():
                    m.d.comb += [tb_wr.addr.eq(tb_index(walk_way, p_lun, blk)),
                                 tb_wr.data.eq(tb_rd.data), wr_entry.next_page.eq(pg + 1),
                                 tb_wr.en.eq(1), stat_inc[1].eq(1)]
                    m.d.sync += [inf_prog[li].bit_select(walk_plane, 1).eq(1),
                                 inf_block[li][walk_plane].eq(blk)]
            m.d.sync += walk_plane.eq(walk_plane + 1)
            m.next = "PROG_WALK"
