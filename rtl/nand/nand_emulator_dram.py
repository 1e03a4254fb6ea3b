# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's DRAM mover, on one LiteDRAM native port: the write queue (a page's FFh fill
at 80h, then the program's data bytes gathered into words with byte enables) and its writer
(one command and one data beat a word; a fill expands to `stride` words), and the read
prefetch that streams the selected page register's words into a FIFO for the data-out byte,
restarted when the register, plane or column changes. Writes go first on the command channel.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its logic
to the emulator's Module, so the Verilog stays one module.
"""

import math

from amaranth.hdl import Module, Mux, Signal
from amaranth.lib import data
from amaranth.lib.fifo import SyncFIFOBuffered

__all__ = ["NandEmulatorDram"]


class NandEmulatorDram:
    """Write queue, writer and read prefetch of a NandEmulator.

    - emu: the NandEmulator (dram_* ports; dram_data_width 32..1024, wfifo_depth 4..4096,
      rfifo_depth 4..256 words).
    - geo: its EmuGeometry (page addresses).
    - luns: its NandEmulatorLuns (the page registers the prefetch follows).
    - m: the emulator's Module.

    For the engine: `wq_push` / `wq_in` (a fill entry), `write_byte()` and `flush_acc()` (data
    input), `restart_at()` (point the prefetch). For the data-out byte: `rq` (the prefetch
    FIFO), `lane` (the byte of its head word next out), `pop`.
    """

    def __init__(self, emu, geo, luns, m: Module):
        self.emu, self.geo, self.luns, self.m = emu, geo, luns, m
        self.log_wb = int(math.log2(emu.wb))

    def build(self):
        emu, m = self.emu, self.m
        # --- DRAM write queue: FFh fills and data words --------------------------------------
        wq_layout = data.StructLayout({"fill": 1, "addr": emu.aw, "data": emu.dw,
                                       "be": emu.wb})
        m.submodules.wq = wq = SyncFIFOBuffered(width=wq_layout.size, depth=emu.wfifo_depth)
        self.wq_in = data.View(wq_layout, wq.w_data)
        wq_out = data.View(wq_layout, wq.r_data)
        self.acc_valid = Signal()
        self.acc_word = Signal(emu.aw)
        self.acc_data = Signal(emu.dw)
        self.acc_be = Signal(emu.wb)
        self.wq_push = wq_push = Signal()
        m.d.comb += wq.w_en.eq(wq_push)
        with m.If(wq_push & ~wq.w_rdy):
            m.d.sync += emu.overrun.eq(1)

        # writer: one command + one data beat per word; a fill entry expands to `stride` words
        fill_left = Signal(range(emu.stride + 1))
        fill_addr = Signal(emu.aw)
        w_cmd_done, w_dat_done = Signal(), Signal()
        w_active = Signal()
        w_addr = Signal(emu.aw)
        w_data = Signal(emu.dw)
        w_be = Signal(emu.wb)
        with m.If(~w_active):
            with m.If(fill_left != 0):
                m.d.sync += [w_active.eq(1), w_addr.eq(fill_addr), w_data.eq(~0),
                             w_be.eq(~0), fill_addr.eq(fill_addr + 1),
                             fill_left.eq(fill_left - 1)]
            with m.Elif(wq.r_rdy):
                m.d.comb += wq.r_en.eq(1)
                with m.If(wq_out.fill):
                    m.d.sync += [fill_addr.eq(wq_out.addr), fill_left.eq(emu.stride)]
                with m.Else():
                    m.d.sync += [w_active.eq(1), w_addr.eq(wq_out.addr),
                                 w_data.eq(wq_out.data), w_be.eq(wq_out.be)]
        # the reader shares the command channel: writes go first when both wait
        rd_cmd_want = Signal()
        m.d.comb += [
            emu.dram_wdata_valid.eq(w_active & ~w_dat_done),
            emu.dram_wdata_data.eq(w_data), emu.dram_wdata_we.eq(w_be)]
        w_cmd_fire = Signal()
        rd_cmd_fire = Signal()
        with m.If(w_active & ~w_cmd_done):
            m.d.comb += [emu.dram_cmd_valid.eq(1), emu.dram_cmd_we.eq(1),
                         emu.dram_cmd_addr.eq(w_addr), w_cmd_fire.eq(emu.dram_cmd_ready)]
        with m.Elif(rd_cmd_want):
            m.d.comb += [emu.dram_cmd_valid.eq(1), emu.dram_cmd_we.eq(0),
                         rd_cmd_fire.eq(emu.dram_cmd_ready)]
        cmd_done_next = w_cmd_done | w_cmd_fire
        dat_done_next = w_dat_done | (emu.dram_wdata_valid & emu.dram_wdata_ready)
        with m.If(w_active):
            with m.If(cmd_done_next & dat_done_next):
                m.d.sync += [w_active.eq(0), w_cmd_done.eq(0), w_dat_done.eq(0)]
            with m.Else():
                m.d.sync += [w_cmd_done.eq(cmd_done_next), w_dat_done.eq(dat_done_next)]

        # --- read prefetch: the selected register's words -------------------------------------
        m.submodules.rq = rq = SyncFIFOBuffered(width=emu.dw, depth=emu.rfifo_depth)
        rd_next = Signal(emu.aw)            # next word address to request
        rd_left = Signal(range(emu.stride + 1))
        rd_inflight = Signal(range(emu.rfifo_depth + 1))
        rd_drop = Signal(range(emu.rfifo_depth + 1))
        self.lane = lane = Signal(range(emu.wb))
        self.restart = restart = Signal()
        self.restart_addr = restart_addr = Signal(emu.aw)
        self.restart_left = restart_left = Signal(range(emu.stride + 1))
        self.restart_lane = restart_lane = Signal(range(emu.wb))
        self.pop = pop = Signal()
        flush = Signal()
        m.d.comb += emu.dram_rdata_ready.eq(1)
        flushing = Signal()
        m.d.comb += rd_cmd_want.eq((rd_left != 0) & ~restart & ~flushing
                                   & (rq.r_level + rd_inflight < emu.rfifo_depth - 1))
        with m.If(rd_cmd_want & ~(w_active & ~w_cmd_done)):
            m.d.comb += emu.dram_cmd_addr.eq(rd_next)
        ret = emu.dram_rdata_valid
        keep = ret & (rd_drop == 0) & ~restart
        m.d.comb += [rq.w_en.eq(keep), rq.w_data.eq(emu.dram_rdata_data)]
        m.d.comb += rq.r_en.eq(pop | flush)
        infl = rd_inflight + rd_cmd_fire - ret
        with m.If(restart):
            m.d.sync += [rd_next.eq(restart_addr), rd_left.eq(restart_left),
                         lane.eq(restart_lane), rd_drop.eq(infl)]
            m.d.comb += flush.eq(rq.r_rdy)
        with m.Else():
            with m.If(rd_cmd_fire):
                m.d.sync += [rd_next.eq(rd_next + 1), rd_left.eq(rd_left - 1)]
            with m.If(ret & (rd_drop != 0)):
                m.d.sync += rd_drop.eq(rd_drop - 1)
        m.d.sync += rd_inflight.eq(infl)
        # a restart empties the FIFO over a few cycles (one word a cycle)
        with m.If(restart):
            m.d.sync += flushing.eq(1)
        with m.Elif(flushing):
            m.d.comb += flush.eq(rq.r_rdy)
            with m.If(~rq.r_rdy):
                m.d.sync += flushing.eq(0)
        self.rq = rq

    # --- for the command engine -----------------------------------------------------------------

    def restart_at(self, way, lun_idx, plane, col):
        """Point the prefetch at (register of lun/plane, column)."""
        emu, page_addr = self.emu, self.geo.page_addr
        row = self.luns.reg_row[lun_idx][plane]
        self.m.d.comb += [
            self.restart.eq(1),
            self.restart_addr.eq(page_addr(way, row) + (col >> int(math.log2(emu.wb)))),
            self.restart_lane.eq(col[:max(1, int(math.log2(emu.wb)))]),
            self.restart_left.eq(Mux(col < emu.reg_bytes,
                                     emu.stride - (col >> int(math.log2(emu.wb))), 0))]

    def flush_acc(self):
        """Queue the word being gathered, if any."""
        m, wq_in = self.m, self.wq_in
        acc_valid, acc_be = self.acc_valid, self.acc_be
        with m.If(acc_valid):
            m.d.comb += [self.wq_push.eq(1), wq_in.fill.eq(0), wq_in.addr.eq(self.acc_word),
                         wq_in.data.eq(self.acc_data), wq_in.be.eq(acc_be)]
            m.d.sync += [acc_valid.eq(0), acc_be.eq(0)]

    def write_byte(self, way, row, col, byte):
        """A program's data byte for column `col` of page `row`: gathered into its DRAM word,
        the word before it queued when the byte starts another."""
        m, log_wb, flush_acc = self.m, self.log_wb, self.flush_acc
        acc_valid, acc_word, acc_data, acc_be = (self.acc_valid, self.acc_word, self.acc_data,
                                                 self.acc_be)
        word = self.geo.page_addr(way, row) + (col >> log_wb)
        ln = col[:max(1, log_wb)]
        with m.If(acc_valid & (acc_word != word)):
            flush_acc()
        m.d.sync += [
            acc_valid.eq(1), acc_word.eq(word),
            acc_data.word_select(ln, 8).eq(byte),
            acc_be.bit_select(ln, 1).eq(1)]
        with m.If(acc_valid & (acc_word != word)):
            m.d.sync += acc_be.eq(1 << ln)
