# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's target-wide commands: GET FEATURES (EEh, the parameters read for the
data-out bytes), SET FEATURES (EFh: the golden's value check; feature 01h sets the timing
mode, in force once R/B# is high), and RESET (FFh: every LUN busy tRST, longer when it aborts
a program or an erase, tRST of the first RESET after power-on; an aborted erase leaves its
blocks needing another erase, an aborted program counts as failed).

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its states
to the command engine's FSM in the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Cat, Const, Mux

from .nand_emulator_defs import CACHE_NONE, MP_NONE

__all__ = ["NandEmulatorTarget"]


class NandEmulatorTarget:
    """The GETFEAT, SETFEAT, RESET, RESET_ERASE and RESET_ERASE_WR states of a NandEmulator.

    - engine: the NandEmulatorEngine (walk registers, helpers and the other parts).
    """

    def __init__(self, engine):
        self.engine = engine

    def feature_states(self):
        """GETFEAT: the features read; SETFEAT: the four parameters written."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        t = geo.t
        busy_target, reset_seen = luns.busy_target, luns.reset_seen
        target_ready, tmode = luns.target_ready, luns.tmode
        ft_rd, ft_wr = eng.tables.ft_rd, eng.tables.ft_wr
        violate = eng.counters.violate
        out_bytes = eng.dataout.out_bytes
        feat_addr, feat_buf = dec.feat_addr, dec.feat_buf
        walk_stamp, walk_way = eng.walk_stamp, eng.walk_way

        with m.State("GETFEAT"):
            m.d.sync += out_bytes.eq(ft_rd.data)
            m.next = "IDLE"

        with m.State("SETFEAT"):
            fw = walk_way
            p1 = feat_buf[:8]
            mode, iface = p1[:4], p1[4:6]
            sdr_ok = Const(emu.part.sdr_modes, 8).bit_select(mode[:3], 1) & (mode <= 5)
            bad_value = (feat_addr == 0x01) & ~(((iface == 2) & (mode <= 7))
                                                | ((iface == 0) & sdr_ok))
            with m.If(~(reset_seen[fw] | ~emu.cfg_require_reset)):
                violate("reset-after-power-on")
            with m.Elif(~target_ready(fw)):
                violate("busy")
            with m.Elif(bad_value):
                violate("feature-value")
            with m.Else():
                m.d.comb += [ft_wr.addr.eq(Cat(feat_addr, fw)), ft_wr.data.eq(feat_buf),
                             ft_wr.en.eq(1)]
                with m.If(feat_addr == 0x01):
                    m.d.sync += tmode[fw].eq(p1)
                busy_target(fw, t.t_feat_ns, walk_stamp)
            m.next = "IDLE"

    def reset_states(self):
        """RESET, then a walk over the operations it aborted, LUN by LUN."""
        eng = self.engine
        emu, m, geo, luns, dec = eng.emu, eng.m, eng.geo, eng.luns, eng.decoder
        L, lun_index, t, tb_index = geo.L, geo.lun_index, geo.t, geo.tb_index
        ardy_dl, cache_mode = luns.ardy_dl, luns.cache_mode
        column, evf2_valid, evf_valid = luns.column, luns.evf2_valid, luns.evf_valid
        fail, failc = luns.fail, luns.failc
        inf_block, inf_erase, inf_prog = luns.inf_block, luns.inf_erase, luns.inf_prog
        inf_prog_q, lrr_valid = luns.inf_prog_q, luns.lrr_valid
        mp_kind, mp_mask, out_status = luns.mp_kind, luns.mp_mask, luns.out_status
        rdy_dl, ready = luns.rdy_dl, luns.ready
        reset_seen, sel_lun, tmode = luns.reset_seen, luns.sel_lun, luns.tmode
        ft_wr, tb_rd = eng.tables.ft_wr, eng.tables.tb_rd
        tb_wr, wr_entry = eng.tables.tb_wr, eng.tables.wr_entry
        stat_inc = eng.counters.stat_inc
        p_lun = dec.p_lun
        idx, plane_walk, walk_lun, walk_mask = eng.idx, eng.plane_walk, eng.walk_lun, eng.walk_mask
        walk_pass, walk_plane = eng.walk_pass, eng.walk_plane
        walk_stamp, walk_way = eng.walk_stamp, eng.walk_way

        with m.State("RESET"):
            rw = walk_way
            first = ~reset_seen[rw]
            for l in range(L):
                i = lun_index(rw, l)
                busy_for = Mux((inf_prog[i] != 0) & ~ready(ardy_dl[i]),
                               emu._cyc(t.t_rst_prog_ns), emu._cyc(t.t_rst_ns))
                busy_for = Mux((inf_erase[i] != 0) & ~ready(ardy_dl[i]),
                               emu._cyc(t.t_rst_erase_ns), busy_for)
                busy_for = Mux(first & (emu._cyc(t.t_rst_first_ns) > busy_for),
                               emu._cyc(t.t_rst_first_ns), busy_for)
                dl = walk_stamp + busy_for
                m.d.sync += [rdy_dl[i].eq(dl), ardy_dl[i].eq(dl), fail[i].eq(0),
                             failc[i].eq(0), evf_valid[i].eq(0), evf2_valid[i].eq(0),
                             cache_mode[i].eq(CACHE_NONE), lrr_valid[i].eq(0),
                             mp_kind[i].eq(MP_NONE),
                             mp_mask[i].eq(0), column[i].eq(0)]
                with m.If(ready(ardy_dl[i])):
                    m.d.sync += [inf_erase[i].eq(0), inf_prog[i].eq(0), inf_prog_q[i].eq(0)]
            m.d.sync += [reset_seen[rw].eq(1), sel_lun[rw].eq(0), out_status[rw].eq(0),
                         tmode[rw].eq(0)]
            m.d.comb += [ft_wr.addr.eq(Cat(Const(0x01, 8), rw)), ft_wr.data.eq(0),
                         ft_wr.en.eq(1), stat_inc[5].eq(1)]
            m.d.sync += [walk_lun.eq(0), walk_mask.eq(0)]
            m.next = "RESET_ERASE"

        # An erase aborted by RESET leaves its blocks needing another erase.
        with m.State("RESET_ERASE"):
            li = lun_index(walk_way, walk_lun) if L > 1 else walk_way
            with m.If(walk_mask == 0):
                # the next LUN's aborted erase planes
                m.d.sync += [walk_mask.eq(inf_erase[li] | inf_prog[li]),
                             walk_pass.eq(inf_prog[li] != 0), inf_erase[li].eq(0),
                             inf_prog[li].eq(0), walk_plane.eq(0), idx.eq(li)]
                with m.If(inf_prog_q[li]):
                    m.d.comb += stat_inc[3].eq(1)       # the queued cache page
                m.d.sync += inf_prog_q[li].eq(0)
                with m.If((inf_erase[li] | inf_prog[li]) == 0):
                    with m.If(walk_lun == L - 1):
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += walk_lun.eq(walk_lun + 1)
                with m.Else():
                    m.d.sync += p_lun.eq(walk_lun)
            with plane_walk(inf_block[idx][walk_plane], "RESET_ERASE_WR", first=False):
                m.d.sync += walk_mask.eq(0)
                with m.If(walk_lun == L - 1):
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += walk_lun.eq(walk_lun + 1)

        # walk_pass: 1 an aborted program (its page stays programmed), 0 an erase
        with m.State("RESET_ERASE_WR"):
            with m.If(walk_pass):
                m.d.comb += stat_inc[3].eq(1)
            with m.Else():
                m.d.comb += [tb_wr.addr.eq(tb_index(walk_way, p_lun,
                                                    inf_block[idx][walk_plane])),
                             tb_wr.data.eq(tb_rd.data), wr_entry.erased.eq(0),
                             tb_wr.en.eq(1), stat_inc[4].eq(1)]
            m.d.sync += walk_plane.eq(walk_plane + 1)
            m.next = "RESET_ERASE"
