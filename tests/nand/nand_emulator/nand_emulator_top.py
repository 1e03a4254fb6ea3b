# SPDX-License-Identifier: BSD-2-Clause
"""Test top of nand_emulator: the emulator on a LiteDRAM core whose PHY is LiteDRAM's
simulation model (SDRAMPHYModel, a DDR3 MT41K128M16 x16 at 1:4, 128-bit native port), the
configuration a card's DDR3 gives it. The ONFI pins and the emulator's observation ports are
the top's ports; cocotb drives the pins as a controller would.
"""

from litedram.core import LiteDRAMCore
from litedram.modules import MT41K128M16
from litedram.phy.model import SDRAMPHYModel
from litex.gen import LiteXModule
from migen import Instance, Signal

__all__ = ["NandEmulatorTop", "PINS_IN", "PINS_OUT", "CLK_FREQ"]

CLK_FREQ = 200e6     # DDR3-1600 at 1:4; a 25 ns bus cycle is 5 clocks
# (name, width) of the emulator ports the top passes through
PINS_IN = [("dq_o", 8), ("dq_oe", 1), ("cle", 1), ("ale", 1), ("we_n", 1), ("re_n", 1),
           ("wp_n", 1), ("cfg_strict", 1), ("cfg_require_reset", 1), ("cfg_pe_limit", 20),
           ("bd_valid", 1), ("bd_op", 2)]
PINS_OUT = [("dq_i", 8), ("bd_ready", 1), ("rule_count", 16), ("rule_code", 4),
            ("stat_reads", 32), ("stat_programs", 32), ("stat_erases", 32),
            ("stat_program_fail", 32), ("stat_erase_fail", 32), ("stat_resets", 32),
            ("overrun", 1), ("underrun", 16)]


class NandEmulatorTop(LiteXModule):
    """n_ways: the emulator's; index_bits / entry_bits: widths of bd_index / bd_entry (the
    emulator's, given by the test that elaborated it); variant: which emulator build (the
    part), only to keep the builds apart."""

    def __init__(self, variant="small", n_ways=1, index_bits=6, entry_bits=28):
        module = MT41K128M16(CLK_FREQ, "1:4")
        self.sdrphy = phy = SDRAMPHYModel(module, data_width=16, clk_freq=CLK_FREQ)
        self.sdram = LiteDRAMCore(phy, module.geom_settings, module.timing_settings, CLK_FREQ)
        port = self.sdram.crossbar.get_port()
        self.data_width, self.address_width = port.data_width, port.address_width
        self.ios = []

        def io(name, width):
            s = Signal(width, name=name)
            self.ios.append(s)
            return s

        conn = {f"i_{n}": io(n, w) for n, w in PINS_IN}
        conn.update({f"o_{n}": io(n, w) for n, w in PINS_OUT})
        conn.update({
            "i_ce_n": io("ce_n", n_ways), "o_rb_n": io("rb_n", n_ways),
            "o_timing_mode": io("timing_mode", 4 * n_ways),
            "i_bd_index": io("bd_index", index_bits), "i_bd_entry": io("bd_entry", entry_bits),
            "o_dram_cmd_valid": port.cmd.valid, "i_dram_cmd_ready": port.cmd.ready,
            "o_dram_cmd_we": port.cmd.we, "o_dram_cmd_addr": port.cmd.addr,
            "o_dram_wdata_valid": port.wdata.valid, "i_dram_wdata_ready": port.wdata.ready,
            "o_dram_wdata_data": port.wdata.data, "o_dram_wdata_we": port.wdata.we,
            "i_dram_rdata_valid": port.rdata.valid, "o_dram_rdata_ready": port.rdata.ready,
            "i_dram_rdata_data": port.rdata.data,
        })
        self.specials += Instance("nand_emulator", i_clk=self.cd_sys_clk(), i_rst=self.cd_sys_rst(),
                                  **conn)

    def cd_sys_clk(self):
        from migen import ClockSignal
        return ClockSignal("sys")

    def cd_sys_rst(self):
        from migen import ResetSignal
        return ResetSignal("sys")

    def get_ios(self):
        return set(self.ios)
