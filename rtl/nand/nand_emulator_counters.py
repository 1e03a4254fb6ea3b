# SPDX-License-Identifier: BSD-2-Clause
"""nand_emulator's observation counters: the golden's rules broken (`rule_count`, and
`rule_code` the last one's index in RULE_CODES) and its statistics (`stat_reads`,
`stat_programs`, `stat_erases`, `stat_program_fail`, `stat_erase_fail`, `stat_resets`).

A part of NandEmulator (rtl/nand/nand_emulator.py), not a core of its own: it adds its logic
to the emulator's Module, so the Verilog stays one module.
"""

from amaranth.hdl import Signal

from .nand_emulator_defs import RULE_INDEX

__all__ = ["NandEmulatorCounters"]


class NandEmulatorCounters:
    """Rule and statistics counters of a NandEmulator.

    - emu: the NandEmulator (its rule_* and stat_* outputs).
    - m: the emulator's Module.

    `violate(rule)` counts a rule (a name of RULE_CODES) in the current branch; `stat_inc[i]`
    (comb) counts one event of the i-th statistic, in the order above.
    """

    def __init__(self, emu, m):
        self.emu, self.m = emu, m
        self.rule_count = Signal(16)
        self.stats = [emu.stat_reads, emu.stat_programs, emu.stat_erases,
                      emu.stat_program_fail, emu.stat_erase_fail, emu.stat_resets]
        self.stat_inc = [Signal(name=f"inc_{i}") for i in range(len(self.stats))]

    def build(self):
        m, rule_count = self.m, self.rule_count
        m.d.comb += self.emu.rule_count.eq(rule_count)
        for s, inc in zip(self.stats, self.stat_inc, strict=True):
            with m.If(inc):
                m.d.sync += s.eq(s + 1)

    def violate(self, rule):
        rule_count = self.rule_count
        self.m.d.sync += [rule_count.eq(rule_count + 1), self.emu.rule_code.eq(RULE_INDEX[rule])]
