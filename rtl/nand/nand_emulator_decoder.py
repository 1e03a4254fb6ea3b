# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's command-address-data decoder: the command engine's IDLE state, which pops
one latch a cycle from the latch FIFO and follows the golden's sequences. A command completes
a sequence (a confirm: on to the state that checks and runs it), opens one (its address
cycles collected in `addr_buf`), acts at once (70h, 00h, FFh, 31h, 3Fh) or breaks an open
sequence (a rule); the last address cycle of 90h, ECh, EEh, EFh, 78h, 80h and 85h acts; data
input goes to the program's DRAM words or to the SET FEATURES parameters. Between latches,
IDLE hands the block-table backdoor to the BACKDOOR state.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its state
to the command engine's FSM in the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Cat, Signal

from .nand_emulator_defs import (
    K_ADDR,
    K_CMD,
    OUT_ARRAY,
    OUT_FEAT,
    OUT_ID,
    OUT_NONE,
    OUT_PARAM,
    OUT_STATUS,
)

__all__ = ["NandEmulatorDecoder"]


class NandEmulatorDecoder:
    """The sequence a NandEmulator's command engine is collecting, and its IDLE state.

    - engine: the NandEmulatorEngine (the walk registers a confirm loads, and the other
      parts: pins, luns, tables, dram, dataout, counters).

    Registers: `cmd` / `cmd_open` the command whose address or data cycles are collected,
    `addr_n` / `addr_buf` its address cycles so far; a program's row `p_row`, next data column
    `p_col`, `p_ok` (the block table allows the page: data go to DRAM), `p_lun`, `p_range` (a
    data byte fell beyond the page register), `chunks` (80h: data may follow); `c_row` /
    `c_col` the row and column of a confirmed sequence; SET FEATURES' `feat_addr`, `feat_buf`,
    `feat_n`.
    """

    def __init__(self, engine):
        self.engine = e = engine
        self.emu, self.geo, self.m = e.emu, e.geo, e.m
        geo = self.geo
        self.cur_way = Signal(self.emu.way_bits)
        self.cmd = Signal(8)        # the command whose address/data cycles are collected
        self.cmd_open = Signal()
        self.addr_n = Signal(range(geo.ncol + geo.nrow + 1))
        self.addr_buf = Signal(8 * (geo.ncol + geo.nrow))
        self.chunks = Signal()      # 80h: a chunk is open (data may follow)
        self.p_row = Signal(geo.row_w)      # program row
        self.p_col = Signal(geo.col_w + 1)  # next data column
        self.p_ok = Signal()        # the table allows this page: data go to DRAM
        self.p_lun = Signal(geo.lb)
        self.p_range = Signal()     # a data byte fell beyond the page register
        self.feat_n = Signal(3)
        self.feat_buf = Signal(32)
        self.feat_addr = Signal(8)
        self.c_row = Signal(geo.row_w)      # the row / column of a confirmed sequence
        self.c_col = Signal(geo.col_w)

    def build(self):
        """The address cycles so far with the byte at the latch FIFO's head merged in."""
        m, ev, geo = self.m, self.engine.pins.ev, self.geo
        ncol, nrow, col_w, row_w = geo.ncol, geo.nrow, geo.col_w, geo.row_w
        self.cur_byte = cur_byte = ev.byte
        self.st = ev.stamp
        self.w = ev.way
        addr_all = Signal(8 * (ncol + nrow))
        m.d.comb += addr_all.eq(self.addr_buf | (cur_byte << (8 * self.addr_n)))
        self.addr_all = addr_all
        self.col_of = addr_all[:col_w]
        self.row_of = addr_all[col_w:col_w + row_w]

    def clear_seq(self):
        """End the sequence being collected."""
        self.m.d.sync += [self.cmd_open.eq(0), self.addr_n.eq(0), self.addr_buf.eq(0),
                          self.chunks.eq(0), self.feat_n.eq(0), self.feat_buf.eq(0)]

    def powered(self):
        """The latch's target has seen its first RESET (or need not)."""
        return self.engine.luns.reset_seen[self.w] | ~self.emu.cfg_require_reset

    def idle_state(self):
        """IDLE: a backdoor operation, else the latch at the FIFO's head."""
        emu, m, e = self.emu, self.m, self.engine
        evq, ev, tb_rd = e.pins.evq, e.pins.ev, e.tables.tb_rd
        unpack = self.geo.unpack
        w, row_of = self.w, self.row_of
        with m.State("IDLE"):
            with m.If(emu.bd_valid):
                m.d.comb += tb_rd.addr.eq(emu.bd_index)
                m.next = "BACKDOOR"
            with m.Elif(evq.r_rdy):
                m.d.comb += evq.r_en.eq(1)
                m.d.sync += self.cur_way.eq(w)
                lun_c, blk_c, page_c, ok_c = unpack(row_of)
                with m.Switch(ev.kind):
                    # ---------------- commands ----------------
                    with m.Case(K_CMD):
                        self._command()
                    # ---------------- address cycles ----------------
                    with m.Case(K_ADDR):
                        self._address(lun_c, blk_c, ok_c)
                    # ---------------- data input ----------------
                    with m.Default():
                        self._data_input()

    def _command(self):
        """A command cycle: a confirm, a sequence opened or one that acts at once."""
        m, e, ncol, nrow = self.m, self.engine, self.geo.ncol, self.geo.nrow
        col_w, row_w = self.geo.col_w, self.geo.row_w
        cur_byte, st, w = self.cur_byte, self.st, self.w
        cmd, cmd_open, addr_n, addr_buf, chunks = (self.cmd, self.cmd_open, self.addr_n,
                                                   self.addr_buf, self.chunks)
        c_row, c_col = self.c_row, self.c_col
        violate, clear_seq, flush_acc = e.counters.violate, self.clear_seq, e.dram.flush_acc
        out_src, out_status = e.dataout.out_src, e.luns.out_status
        walk_conf, walk_stamp, walk_way, walk_pass, walk_col = (
            e.walk_conf, e.walk_stamp, e.walk_way, e.walk_pass, e.walk_col)
        c = cur_byte
        with m.If(c.matches(0x10, 0x11, 0x15)):
            with m.If(~cmd_open | ~cmd.matches(0x80, 0x85) | ~chunks):
                violate("command-sequence")
                clear_seq()
            with m.Else():
                flush_acc()
                clear_seq()
                m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                             walk_way.eq(w)]
                m.next = "PROG_CONFIRM"
        with m.Elif(c.matches(0x30, 0x32) | ((c == 0x31) & cmd_open
                                             & (cmd == 0x00)
                                             & (addr_n != 0))):
            with m.If(~cmd_open | (cmd != 0x00) | (addr_n != ncol + nrow)):
                violate("command-sequence")
                clear_seq()
            with m.Else():
                clear_seq()
                m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                             walk_way.eq(w), out_src.eq(OUT_ARRAY),
                             c_col.eq(addr_buf[:col_w]),
                             c_row.eq(addr_buf[col_w:col_w + row_w]),
                             walk_pass.eq(1)]
                with m.If(c == 0x31):
                    m.next = "CACHE_READ"
                with m.Else():
                    m.next = "READ_CONFIRM"
        with m.Elif(c.matches(0xD0, 0xD1)):
            with m.If(~cmd_open | (cmd != 0x60) | (addr_n != nrow)):
                violate("command-sequence")
                clear_seq()
            with m.Else():
                clear_seq()
                m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                             walk_way.eq(w), c_row.eq(addr_buf[:row_w])]
                m.next = "ERASE_CONFIRM"
        with m.Elif(c == 0xE0):
            m.d.sync += out_src.eq(OUT_ARRAY)
            clear_seq()
            with m.If(cmd_open & (cmd == 0x05) & (addr_n == ncol)):
                m.d.sync += [walk_col.eq(addr_buf[:col_w]),
                             walk_way.eq(w), walk_stamp.eq(st)]
                m.next = "CHCOL"
            with m.Elif(cmd_open & (cmd == 0x06) & (addr_n == ncol + nrow)):
                m.d.sync += [walk_col.eq(addr_buf[:col_w]),
                             walk_way.eq(w), walk_stamp.eq(st),
                             c_row.eq(addr_buf[col_w:col_w + row_w])]
                m.next = "CHCOL_ENH"
            with m.Elif(cmd_open & cmd.matches(0x05, 0x06)):
                violate("command-sequence")
            with m.Else():
                violate("command-sequence")
        with m.Elif(c == 0x85):
            with m.If(~cmd_open | ~cmd.matches(0x80, 0x85) | ~chunks):
                violate("command-sequence")
                clear_seq()
            with m.Else():
                flush_acc()
                m.d.sync += [cmd.eq(0x85), addr_n.eq(0), addr_buf.eq(0)]
        with m.Else():
            # any other command ends an incomplete sequence
            with m.If(cmd_open & ~((cmd == 0x00) & (addr_n == 0))):
                violate("command-sequence")
            flush_acc()
            clear_seq()
            with m.Switch(c):
                with m.Case(0xFF):
                    m.d.sync += [walk_stamp.eq(st), walk_way.eq(w),
                                 out_src.eq(OUT_NONE)]
                    m.next = "RESET"
                with m.Case(0x70):
                    m.d.sync += [out_status[w].eq(1), out_src.eq(OUT_STATUS)]
                with m.Case(0x00):
                    m.d.sync += [out_status[w].eq(0), cmd.eq(0x00),
                                 cmd_open.eq(1)]
                    with m.If(out_src == OUT_STATUS):
                        m.d.sync += out_src.eq(OUT_ARRAY)
                with m.Case(0x05, 0x06, 0x60, 0x78, 0x80, 0x90, 0xEC,
                            0xEE, 0xEF):
                    m.d.sync += [cmd.eq(c), cmd_open.eq(1)]
                with m.Case(0x31, 0x3F):
                    m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                                 walk_way.eq(w), out_src.eq(OUT_ARRAY),
                                 walk_pass.eq(0)]
                    m.next = "CACHE_READ"
                with m.Default():
                    violate("command-sequence")

    def _address(self, lun_c, blk_c, ok_c):
        """An address cycle of the open command (as many as it takes, else a rule);
        lun_c, blk_c, ok_c: the row the cycles so far give (`unpack` of row_of)."""
        m, e, ncol, nrow = self.m, self.engine, self.geo.ncol, self.geo.nrow
        cmd, cmd_open, addr_n, addr_buf, chunks = (self.cmd, self.cmd_open, self.addr_n,
                                                   self.addr_buf, self.chunks)
        addr_all, col_of, p_col = self.addr_all, self.col_of, self.p_col
        violate, clear_seq = e.counters.violate, self.clear_seq
        limit = Signal(range(ncol + nrow + 1))
        with m.Switch(cmd):
            with m.Case(0x00, 0x06, 0x80, 0x85):
                m.d.comb += limit.eq(ncol + nrow)
            with m.Case(0x05):
                m.d.comb += limit.eq(ncol)
            with m.Case(0x60, 0x78):
                m.d.comb += limit.eq(nrow)
            with m.Case(0x90, 0xEC, 0xEE, 0xEF):
                m.d.comb += limit.eq(1)
        bad_addr = (~cmd_open | (limit == 0) | (addr_n >= limit)
                    | ((cmd == 0x80) & chunks))
        with m.If(bad_addr):
            violate("command-sequence")
            clear_seq()
        with m.Else():
            m.d.sync += [addr_buf.eq(addr_all), addr_n.eq(addr_n + 1)]
            last = addr_n + 1 == limit
            with m.If(last):
                self._address_complete(lun_c, blk_c, ok_c)
            with m.If((cmd == 0x85) & (addr_n + 1 == ncol)):
                m.d.sync += p_col.eq(col_of)

    def _address_complete(self, lun_c, blk_c, ok_c):
        """The last address cycle of a command (the row or column is known)."""
        emu, m, e, t, geo = self.emu, self.m, self.engine, self.geo.t, self.geo
        L, pb, bb, lb, row_w = geo.L, geo.pb, geo.bb, geo.lb, geo.row_w
        cur_byte, st, w = self.cur_byte, self.st, self.w
        cmd, chunks, addr_all = self.cmd, self.chunks, self.addr_all
        col_of, row_of = self.col_of, self.row_of
        p_row, p_col, p_ok, p_range, p_lun = (self.p_row, self.p_col, self.p_ok, self.p_range,
                                              self.p_lun)
        feat_addr, walk_way = self.feat_addr, e.walk_way
        violate, clear_seq, powered = e.counters.violate, self.clear_seq, self.powered
        target_ready, busy_target = e.luns.target_ready, e.luns.busy_target
        out_status, sel_lun = e.luns.out_status, e.luns.sel_lun
        out_src, out_idx, out_bytes, out_len = (e.dataout.out_src, e.dataout.out_idx,
                                                e.dataout.out_bytes, e.dataout.out_len)
        tb_rd, ft_rd, tb_index = e.tables.tb_rd, e.tables.ft_rd, geo.tb_index
        with m.Switch(cmd):
            with m.Case(0x90):
                clear_seq()
                m.d.sync += [out_src.eq(OUT_ID), out_idx.eq(0), out_len.eq(0)]
                with m.If(~powered()):
                    violate("reset-after-power-on")
                with m.Elif(~target_ready(w)):
                    violate("busy")
                with m.Elif(cur_byte == 0x00):
                    ident = int.from_bytes(emu.part.id_bytes[:8], "little")
                    m.d.sync += [out_bytes.eq(ident), out_len.eq(min(8, len(emu.part.id_bytes)))]
                with m.Elif(cur_byte == 0x20):
                    m.d.sync += [out_bytes.eq(int.from_bytes(b"ONFI", "little")), out_len.eq(4)]
                with m.Else():
                    violate("address-range")
            with m.Case(0xEC):
                clear_seq()
                m.d.sync += [out_src.eq(OUT_PARAM), out_idx.eq(0), out_len.eq(0)]
                with m.If(~powered()):
                    violate("reset-after-power-on")
                with m.Elif(~target_ready(w)):
                    violate("busy")
                with m.Elif(cur_byte != 0x00):
                    violate("address-range")
                with m.Else():
                    m.d.sync += [out_len.eq(len(emu.param)), out_status[w].eq(0)]
                    busy_target(w, t.t_r_ns, st)
            with m.Case(0xEE):
                clear_seq()
                m.d.sync += [out_src.eq(OUT_FEAT), out_idx.eq(0), out_len.eq(0)]
                with m.If(~powered()):
                    violate("reset-after-power-on")
                with m.Elif(~target_ready(w)):
                    violate("busy")
                with m.Else():
                    m.d.comb += ft_rd.addr.eq(Cat(cur_byte, w))
                    m.d.sync += [out_len.eq(4), out_status[w].eq(0)]
                    busy_target(w, t.t_feat_ns, st)
                    m.next = "GETFEAT"
            with m.Case(0xEF):
                m.d.sync += feat_addr.eq(cur_byte)
            with m.Case(0x78):
                clear_seq()
                m.d.sync += out_src.eq(OUT_STATUS)
                # 78h has row cycles only
                lun78 = addr_all[pb + bb:row_w]
                with m.If(lun78 >= L):
                    violate("address-range")
                with m.Else():
                    m.d.sync += [sel_lun[w].eq(lun78[:lb]), out_status[w].eq(1)]
            with m.Case(0x80):
                m.d.sync += [chunks.eq(1), p_row.eq(row_of), p_col.eq(col_of), p_ok.eq(0),
                             p_range.eq(0), p_lun.eq(lun_c), walk_way.eq(w)]
                with m.If(ok_c):
                    m.d.comb += tb_rd.addr.eq(tb_index(w, lun_c, blk_c))
                    m.next = "PROG_OPEN"
            with m.Case(0x85):
                # column (and row) of the next chunk
                m.d.sync += [p_col.eq(col_of), cmd.eq(0x80)]

    def _data_input(self):
        """A data input cycle: a program's byte (to DRAM when the page is allowed) or a SET
        FEATURES parameter; anything else breaks the sequence."""
        emu, m, e, ncol = self.emu, self.m, self.engine, self.geo.ncol
        cur_byte, st, w = self.cur_byte, self.st, self.w
        cmd, cmd_open, addr_n, chunks = self.cmd, self.cmd_open, self.addr_n, self.chunks
        p_row, p_col, p_ok, p_range = self.p_row, self.p_col, self.p_ok, self.p_range
        feat_n, feat_buf = self.feat_n, self.feat_buf
        walk_stamp, walk_way = e.walk_stamp, e.walk_way
        violate, clear_seq = e.counters.violate, self.clear_seq
        with m.If(cmd_open & (cmd == 0x85)):
            # 85h with only column cycles: the chunk starts here
            with m.If(addr_n != ncol):
                violate("command-sequence")
            m.d.sync += cmd.eq(0x80)
        with m.If(cmd_open & cmd.matches(0x80, 0x85) & chunks):
            col = p_col
            with m.If(col >= emu.reg_bytes):
                m.d.sync += p_range.eq(1)
            with m.Elif(p_ok):
                e.dram.write_byte(walk_way, p_row, col, cur_byte)
            m.d.sync += p_col.eq(col + 1)
        with m.Elif(cmd_open & (cmd == 0xEF) & (addr_n == 1)):
            nb = Cat(feat_buf[8:], cur_byte)
            m.d.sync += [feat_buf.eq(nb), feat_n.eq(feat_n + 1)]
            with m.If(feat_n == 3):
                clear_seq()
                m.d.sync += [walk_stamp.eq(st), walk_way.eq(w),
                             feat_buf.eq(nb)]
                m.next = "SETFEAT"
        with m.Else():
            violate("command-sequence")
            clear_seq()

