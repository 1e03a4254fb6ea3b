# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's memories: the block table (one entry a block of every LUN and target: next
page, erased, bad, factory bad, P/E count; its power-on contents from `factory_bad` and
`factory_erased`), the features (256 x 32 bits a target) and the parameter page ROM; and the
block-table backdoor (`bd_*`), served by the command engine's BACKDOOR state.

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its
memories and the backdoor state to the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Module
from amaranth.lib import data
from amaranth.lib.memory import Memory

__all__ = ["NandEmulatorTables"]


class NandEmulatorTables:
    """The block table, features RAM and parameter page ROM of a NandEmulator.

    - emu: the NandEmulator (factory_bad, factory_erased, its parameter page, bd_* ports).
    - geo: its EmuGeometry.
    - m: the emulator's Module.

    After `build()`: `tb_rd` (synchronous, not transparent) / `tb_wr` the block table's ports
    with `tb_entry` / `wr_entry` their data as entries; `ft_rd` / `ft_wr` the features
    (address: way, feature address); `pr_rd` the parameter page ROM (asynchronous).
    """

    def __init__(self, emu, geo, m: Module):
        self.emu, self.geo, self.m = emu, geo, m

    def build(self):
        emu, m = self.emu, self.m
        W, lb, bb = self.geo.W, self.geo.lb, self.geo.bb
        tb_depth = W << (lb + bb)
        init_entry = []
        for idx in range(tb_depth):
            block = idx & ((1 << bb) - 1)
            lun = (idx >> bb) & ((1 << lb) - 1)
            way = idx >> (bb + lb)
            fbad = (way, lun, block) in emu.factory_bad
            init_entry.append({"next_page": 0, "erased": int(emu.factory_erased), "bad": 0,
                               "fbad": int(fbad), "pe": 0})
        m.submodules.table = table = Memory(shape=emu.entry, depth=tb_depth, init=init_entry)
        self.tb_rd = table.read_port(transparent_for=())
        self.tb_wr = table.write_port()
        m.submodules.feat = feat_mem = Memory(shape=32, depth=W * 256, init=[])
        self.ft_rd = feat_mem.read_port(transparent_for=())
        self.ft_wr = feat_mem.write_port()
        m.submodules.param = param_rom = Memory(shape=8, depth=len(emu.param),
                                                init=list(emu.param))
        self.pr_rd = param_rom.read_port(domain="comb")
        self.tb_entry = data.View(emu.entry, self.tb_rd.data)
        self.wr_entry = data.View(emu.entry, self.tb_wr.data)

    def backdoor_state(self):
        """The engine's BACKDOOR state (entered from IDLE with tb_rd reading bd_index): one
        bd_op, acknowledged on bd_ready."""
        emu, m = self.emu, self.m
        tb_rd, tb_wr, wr_entry = self.tb_rd, self.tb_wr, self.wr_entry
        with m.State("BACKDOOR"):
            m.d.comb += [emu.bd_ready.eq(1), tb_wr.addr.eq(emu.bd_index), tb_wr.en.eq(1)]
            with m.Switch(emu.bd_op):
                with m.Case(0):
                    m.d.comb += tb_wr.data.eq(emu.bd_entry)
                with m.Case(1):
                    m.d.comb += [tb_wr.data.eq(tb_rd.data), wr_entry.pe.eq(emu.bd_entry.pe)]
                with m.Default():
                    m.d.comb += [tb_wr.data.eq(tb_rd.data), wr_entry.bad.eq(1)]
            m.next = "IDLE"
