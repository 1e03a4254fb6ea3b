# SPDX-License-Identifier: BSD-2-Clause
"""SQRL Acorn CLE-215+ (XC7A200T-3, M.2 2280, PCIe Gen2 x4, 1 GiB DDR3): 7-series,
S7PCIEPHY.

The card is an M.2 module: no FMC or expansion header, so no NAND daughter card. Its flash
channels are nand_emulators on the card's DDR3 (soc/nand_emulation.py): LiteDRAM's A7DDRPHY
with the MT41K512M16 (one x16 part, 1 GiB), at 100 MHz sys (DDR3-800), as litex-boards'
target for the card (litex_boards/targets/sqrl_acorn.py) builds it; the firmware calibrates it
with LiteX's liblitedram before the flash back end starts (sw/firmware/dram_init.c).

4 channels x 8 ways: the emulator is about 11.4 k LUT a channel at 8 ways on xc7, so four
leave the XC7A200T room for the rest of the SoC (soc/targets/README.md, "Resources"); the
pages of 32 ways at the simulation's 16 pages per block (16 blocks per plane, 2 planes,
17 KiB pages) take 544 MiB of the 1 GiB. No UART pins: the firmware console is LiteX's JTAG
UART (`litex_term --jtag-config=openocd_xc7_ft232.cfg jtag`).
"""

from litex_boards.platforms import sqrl_acorn

from soc.targets.board import Board, BoardDdr

BOARD = Board(
    name="sqrl_acorn", platform=sqrl_acorn, family="xc7", phy="s7", nlanes=4, speed="gen2",
    clk=("clk200", 200), reset=None, uart="jtag_uart", fmc=[], n_ways=8, onfi=None,
    io_standard="LVCMOS18",
    capacity=dict(part="xc7a200t", lut=133800, ff=267600, bram18=730, dsp=740),
    ddr=BoardDdr(phy="A7DDRPHY", module="MT41K512M16", memtype="DDR3", iodelay_mhz=200),
    soc=dict(n_channels=4, n_ways=8, nand_model="emulator", pages_per_block=16,
             sys_clk_freq=100e6, buf_size=512 << 10, tag_width=2, max_transfer=32 << 10,
             main_ram_size=256 << 10),
    notes=["no connector for a NAND daughter card: 4 channels x 8 ways of nand_emulator on "
           "the card's DDR3 (A7DDRPHY, MT41K512M16, 100 MHz sys)",
           "pages per block scaled to 16 (the emulated pages fit the 1 GiB DDR3)",
           "no UART pins: JTAG UART"],
)
