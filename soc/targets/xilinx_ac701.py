# SPDX-License-Identifier: BSD-2-Clause
"""Xilinx AC701 (XC7A200T-2, PCIe Gen2 x4 edge connector, one FMC HPC): 7-series,
S7PCIEPHY, and the 7-series ONFI PHY (rtl/nand/onfi_phy_xilinx7) on the FMC.

The AC701's HPC connector wires only the LA bank: 68 single-ended pins (LA00..LA33, P and N),
so the daughter card carries 3 channels x 4 ways (22 pins a channel: DQ[7:0], DQS, RE#, WE#,
CLE, ALE, WP#, 4 CE#, 4 R/B#; 66 pins). VADJ (the FMC banks' supply) must be set to 1.8 V,
the NAND's VccQ: the pins are LVCMOS18.
"""

from litex_boards.platforms import xilinx_ac701

from soc.targets.board import Board

BOARD = Board(
    name="xilinx_ac701", platform=xilinx_ac701, family="xc7", phy="s7", nlanes=4, speed="gen2",
    clk=("clk200", 200), reset="cpu_reset", uart="serial", fmc=[("HPC", ("LA",))], n_ways=4,
    onfi="xilinx7", io_standard="LVCMOS18",
    capacity=dict(part="xc7a200t", lut=133800, ff=267600, bram18=730, dsp=740),
    soc=dict(buf_size=512 << 10, tag_width=2, max_transfer=32 << 10,
             main_ram_size=256 << 10),
    notes=["FMC HPC carries the LA bank only: 3 channels x 4 ways",
           "VADJ must be 1.8 V"],
)
