# SPDX-License-Identifier: BSD-2-Clause
"""SQRL Acorn CLE-215+ (XC7A200T-3, M.2 2280, PCIe Gen2 x4): 7-series, S7PCIEPHY.

The card is an M.2 module: no FMC or expansion header, so no NAND daughter card. The flash
subsystem is built with one channel whose pins stay inside the FPGA (reads see FFh, R/B#
high): a PCIe / NVMe bring-up target (enumeration, BAR0, admin commands, MSI) and the place
for the in-FPGA NAND emulator (issue 7, item 2). No UART pins: the firmware console is
LiteX's JTAG UART (`litex_term --jtag-config=openocd_xc7_ft232.cfg jtag`).
"""

from litex_boards.platforms import sqrl_acorn

from soc.targets.board import Board

BOARD = Board(
    name="sqrl_acorn", platform=sqrl_acorn, family="xc7", phy="s7", nlanes=4, speed="gen2",
    clk=("clk200", 200), reset=None, uart="jtag_uart", fmc=[], n_ways=1, onfi=None,
    io_standard="LVCMOS18",
    capacity=dict(part="xc7a200t", lut=133800, ff=267600, bram18=730, dsp=740),
    soc=dict(n_channels=1, n_ways=1, buf_size=512 << 10, tag_width=2,
             max_transfer=32 << 10, main_ram_size=256 << 10),
    notes=["no connector for a NAND daughter card: 1 flash channel without pins "
           "(the NAND emulator's place)",
           "no UART pins: JTAG UART"],
)
