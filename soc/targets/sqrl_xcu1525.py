# SPDX-License-Identifier: BSD-2-Clause
"""SQRL / Xilinx XCU1525 (XCVU9P-2L, PCIe Gen3 x16, used at x4; four DDR4 channels):
UltraScale+, USPPCIEPHY at Gen3 (the VU9P's PCIE4 blocks are Gen3; litex-boards 2023.12 has no
Alinx AXAU15, the Artix UltraScale+ Gen4 card the issue names).

No FMC or expansion header (two QSFP28 cages only), so no NAND daughter card. Its flash
channels are nand_emulators on DDR4 channel 0 (soc/nand_emulation.py): LiteDRAM's USPDDRPHY
with 8 x MT40A512M8 (64 bits, 4 GiB), 125 MHz sys, as litex-boards' target for the card
(litex_boards/targets/sqrl_xcu1525.py) builds it; the firmware calibrates it with LiteX's
liblitedram before the flash back end starts (sw/firmware/dram_init.c). The native port is 512
bits, so each emulator moves a 64-byte word a DRAM command.

8 channels x 8 ways: the pages of 64 ways at 16 pages per block take 1088 MiB of the 4 GiB;
the VU9P has logic for more channels, 8 keeps the Yosys estimate and the firmware's tables
in the range this repository has measured (soc/targets/README.md, "Resources").
"""

from litex_boards.platforms import sqrl_xcu1525

from soc.targets.board import Board, BoardDdr

BOARD = Board(
    name="sqrl_xcu1525", platform=sqrl_xcu1525, family="xcup", phy="usp", nlanes=4,
    speed="gen3", clk=("clk300", 300), reset=None, uart="serial", fmc=[], n_ways=8,
    onfi=None, io_standard="LVCMOS18",
    capacity=dict(part="xcvu9p", lut=1182240, ff=2364480, bram18=4320, dsp=6840),
    ddr=BoardDdr(phy="USPDDRPHY", module="MT40A512M8", memtype="DDR4", channel=0,
                 iodelay_mhz=500),
    soc=dict(n_channels=8, n_ways=8, nand_model="emulator", pages_per_block=16,
             buf_size=4 << 20, tag_width=4, max_transfer=64 << 10, main_ram_size=1 << 20),
    notes=["no connector for a NAND daughter card: 8 channels x 8 ways of nand_emulator on "
           "DDR4 channel 0 (USPDDRPHY, 8 x MT40A512M8)",
           "pages per block scaled to 16",
           "Gen3 only (VU9P); no AXAU15 (Gen4) platform in litex-boards 2023.12",
           "MSI: 8 vectors (UltraScale+ one-hot MSI through LitePCIe's 8-bit msi stream)"],
)
