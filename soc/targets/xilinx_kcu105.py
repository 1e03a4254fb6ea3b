# SPDX-License-Identifier: BSD-2-Clause
"""Xilinx KCU105 (XCKU040-2, PCIe Gen3 x8 edge connector, used at x4; FMC HPC and LPC):
UltraScale, USPCIEPHY.

x4, not x8: the NVMe front end's datapath is 64 bits at 125 MHz (1 GB/s a direction), which
Gen3 x4 already exceeds. The daughter card takes HPC LA + HA and LPC LA: 184 single-ended
pins, 8 channels x 4 ways (176 pins), through the UltraScale ONFI PHY
(rtl/nand/onfi_phy_xilinxus: ODDRE1 outputs, IDDRE1 + IDELAYE3 on DQ, DQS on a BUFGCE);
the SoC runs the bus in SDR (nand_subsystem has the SDR engine only). VADJ 1.8 V.
"""

from litex_boards.platforms import xilinx_kcu105

from soc.targets.board import Board

BOARD = Board(
    name="xilinx_kcu105", platform=xilinx_kcu105, family="xcu", phy="us", nlanes=4,
    speed="gen3", clk=("clk125", 125), reset="cpu_reset", uart="serial",
    fmc=[("HPC", ("LA", "HA")), ("LPC", ("LA",))], n_ways=4, onfi="xilinxus",
    io_standard="LVCMOS18",
    capacity=dict(part="xcku040", lut=242400, ff=484800, bram18=1200, dsp=1920),
    soc=dict(buf_size=1 << 20, tag_width=3, max_transfer=32 << 10, main_ram_size=256 << 10),
    notes=["ONFI pins through onfi_phy_xilinxus; the bus runs SDR (no NV-DDR2 engine in "
           "nand_subsystem)",
           "MSI: 8 vectors (UltraScale one-hot MSI through LitePCIe's 8-bit msi stream)",
           "Gen3 x4 link, front end 64-bit at 125 MHz (1 GB/s a direction)"],
)
