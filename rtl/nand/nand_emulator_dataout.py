# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's data-out byte: what `dq_i` shows after each RE# falling edge (registered the
cycle after, held until the next one), from the source the last command chose (`out_src`):
the status of the selected LUN, the ID or feature bytes, the parameter page ROM, or the page
register (the head of the read prefetch; FFh for an erased page, a factory bad block's
marker), each with the golden's rules for reading while busy or after a status command.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its logic
to the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Module, Mux, Signal

from .nand_emulator_defs import (
    CACHE_READ,
    OUT_ARRAY,
    OUT_FEAT,
    OUT_ID,
    OUT_PARAM,
    OUT_STATUS,
    REG_DATA,
    REG_MARK,
)

__all__ = ["NandEmulatorDataOut"]


class NandEmulatorDataOut:
    """The data-out byte of a NandEmulator.

    - emu: the NandEmulator (dq_i, wp_n, rb_n, underrun; its parameter page length).
    - geo, luns, tables, dram, counters: its EmuGeometry, NandEmulatorLuns, NandEmulatorTables
      (the parameter page ROM), NandEmulatorDram (the prefetch) and NandEmulatorCounters.
    - m: the emulator's Module.

    Registers the command engine sets: `out_src` (OUT_*), `out_bytes` (ID / feature bytes),
    `out_idx` / `out_len` (the next ID, feature or parameter page byte, and how many there are).
    """

    def __init__(self, emu, geo, luns, tables, dram, counters, m: Module):
        self.emu, self.geo, self.luns, self.tables = emu, geo, luns, tables
        self.dram, self.counters, self.m = dram, counters, m
        self.out_src = Signal(3)
        self.out_idx = Signal(range(max(len(emu.param), 9) + 1))
        self.out_bytes = Signal(64)         # ID / feature bytes
        self.out_len = Signal(range(max(len(emu.param), 8) + 1))

    def build(self, re_fall, re_way):
        """re_fall: an RE# falling edge this cycle; re_way: the target selected."""
        emu, m, g, L = self.emu, self.m, self.geo.g, self.geo.L
        luns, dram, violate = self.luns, self.dram, self.counters.violate
        ready, lun_index, status_of = luns.ready, self.geo.lun_index, luns.status_of
        rdy_dl, ardy_dl, cache_mode = luns.rdy_dl, luns.ardy_dl, luns.cache_mode
        sel_lun, out_plane, column, reg_kind = (luns.sel_lun, luns.out_plane, luns.column,
                                                luns.reg_kind)
        out_status = luns.out_status
        out_src, out_idx, out_bytes, out_len = (self.out_src, self.out_idx, self.out_bytes,
                                                self.out_len)
        rq, lane, pop = dram.rq, dram.lane, dram.pop
        pr_rd = self.tables.pr_rd

        o_way = re_way
        o_lun = lun_index(o_way, sel_lun[o_way]) if L > 1 else o_way
        o_plane = out_plane[o_lun]
        o_col = column[o_lun]
        o_kind = reg_kind[o_lun][o_plane]
        head = rq.r_data.word_select(lane, 8)
        dout = Signal(8)
        with m.If(re_fall):
            m.d.sync += emu.dq_i.eq(dout)       # held until the next RE# falling edge
        o_busy = ~ready(rdy_dl[o_lun]) | (~ready(ardy_dl[o_lun])
                                          & (cache_mode[o_lun] != CACHE_READ))
        with m.If(re_fall):
            with m.Switch(out_src):
                with m.Case(OUT_STATUS):
                    m.d.comb += dout.eq(status_of(o_lun))
                with m.Case(OUT_ID, OUT_FEAT, OUT_PARAM):
                    busy_any = ~emu.rb_n.bit_select(o_way, 1)
                    with m.If(busy_any):
                        violate("busy")
                    with m.Elif(out_idx < out_len):
                        m.d.comb += dout.eq(Mux(out_src == OUT_PARAM, pr_rd.data,
                                                out_bytes.word_select(out_idx[:3], 8)))
                        m.d.sync += out_idx.eq(out_idx + 1)
                with m.Case(OUT_ARRAY):
                    with m.If(out_status[o_way]):
                        violate("data-output-after-status")
                    with m.Elif(o_busy):
                        violate("busy")
                    with m.Elif(o_col >= emu.reg_bytes):
                        violate("address-range")
                    with m.Else():
                        with m.Switch(o_kind):
                            with m.Case(REG_DATA):
                                with m.If(rq.r_rdy):
                                    m.d.comb += dout.eq(head)
                                with m.Else():
                                    m.d.sync += emu.underrun.eq(emu.underrun + 1)
                                m.d.comb += pop.eq(rq.r_rdy & (lane == emu.wb - 1))
                                m.d.sync += lane.eq(lane + 1)
                            with m.Case(REG_MARK):
                                m.d.comb += dout.eq(Mux(o_col == g.page_bytes, 0x00, 0xFF))
                            with m.Default():
                                m.d.comb += dout.eq(0xFF)
                        m.d.sync += column[o_lun].eq(o_col + 1)
        m.d.comb += pr_rd.addr.eq(out_idx)
