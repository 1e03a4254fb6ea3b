# SPDX-License-Identifier: BSD-2-Clause
"""SQRL / Xilinx XCU1525 (XCVU9P-2L, PCIe Gen3 x16, used at x4): UltraScale+, USPPCIEPHY at
Gen3 (the VU9P's PCIE4 blocks are Gen3; litex-boards 2023.12 has no Alinx AXAU15, the
Artix UltraScale+ Gen4 card the issue names).

No FMC or expansion header (two QSFP28 cages only), so no NAND daughter card: one flash
channel without pins, as on the Acorn (the NAND emulator's place).
"""

from litex_boards.platforms import sqrl_xcu1525

from soc.targets.board import Board

BOARD = Board(
    name="sqrl_xcu1525", platform=sqrl_xcu1525, family="xcup", phy="usp", nlanes=4,
    speed="gen3", clk=("clk300", 300), reset=None, uart="serial", fmc=[], n_ways=1,
    onfi=None, io_standard="LVCMOS18",
    capacity=dict(part="xcvu9p", lut=1182240, ff=2364480, bram18=4320, dsp=6840),
    soc=dict(n_channels=1, n_ways=1, buf_size=4 << 20, tag_width=4, max_transfer=64 << 10,
             main_ram_size=1 << 20),
    notes=["no connector for a NAND daughter card: 1 flash channel without pins",
           "Gen3 only (VU9P); no AXAU15 (Gen4) platform in litex-boards 2023.12",
           "MSI: 8 vectors (UltraScale+ one-hot MSI through LitePCIe's 8-bit msi stream)"],
)
