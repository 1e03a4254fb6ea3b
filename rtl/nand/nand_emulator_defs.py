# SPDX-License-Identifier: BSD-2-Clause
"""Names shared by the parts of nand_emulator (not a core): rule codes, status bits, the
block-table entry, the enumerations of the engine, and `EmuGeometry`, the emulator's sizes with
its row-address arithmetic (expressions only: nothing here adds logic to a module)."""

import math

from amaranth.hdl import Cat, Const
from amaranth.lib import data

__all__ = ["RULE_CODES", "RULE_INDEX", "entry_layout", "cycles", "EmuGeometry",
           "SR_FAIL", "SR_FAILC", "SR_ARDY", "SR_RDY", "SR_WP_N", "PE_BITS", "TIME_BITS",
           "OUT_NONE", "OUT_STATUS", "OUT_ARRAY", "OUT_ID", "OUT_PARAM", "OUT_FEAT",
           "REG_FF", "REG_DATA", "REG_MARK", "MP_NONE", "MP_READ", "MP_PROG", "MP_ERASE",
           "CACHE_NONE", "CACHE_READ", "CACHE_PROG", "K_CMD", "K_ADDR"]

# The golden's RULES, in its order: rule_code is the index.
RULE_CODES = ("reset-after-power-on", "busy", "address-range", "erase-before-program",
              "page-order", "page-reprogram", "multi-plane", "command-sequence",
              "data-output-after-status", "feature-value")
RULE_INDEX = {name: i for i, name in enumerate(RULE_CODES)}

SR_FAIL, SR_FAILC, SR_ARDY, SR_RDY, SR_WP_N = 0x01, 0x02, 0x20, 0x40, 0x80
PE_BITS = 20
TIME_BITS = 48          # cycle counter: never wraps in practice (2^48 cycles)

# Output sources of the data-out path
OUT_NONE, OUT_STATUS, OUT_ARRAY, OUT_ID, OUT_PARAM, OUT_FEAT = range(6)
# What a page register points at
REG_FF, REG_DATA, REG_MARK = 0, 1, 2
# Multi-plane group kinds
MP_NONE, MP_READ, MP_PROG, MP_ERASE = 0, 1, 2, 3
# Cache operation in progress on a LUN
CACHE_NONE, CACHE_READ, CACHE_PROG = 0, 1, 2
# Kind of a latched bus cycle (the latch FIFO's `kind`); anything else is data input
K_CMD, K_ADDR = 0, 1


def entry_layout(pages_per_block):
    """One block-table entry."""
    return data.StructLayout({
        "next_page": pages_per_block.bit_length(),  # pages below it are programmed
        "erased": 1,        # 0: factory state unknown or an erase was aborted
        "bad": 1,           # grown bad block (injected, or past the P/E limit)
        "fbad": 1,          # factory bad block (marker on its first and last page)
        "pe": PE_BITS,      # erase count
    })


def cycles(ns, clk_freq):
    """Clock cycles of `ns` at `clk_freq` Hz, rounded up (at least one)."""
    return max(1, math.ceil(ns * clk_freq / 1e9 - 1e-9))


class EmuGeometry:
    """The sizes of one NandEmulator and its row-address arithmetic.

    - emu: the NandEmulator (its part's geometry and timing, n_ways, DRAM page layout).

    Short names, as the parts use them: W targets, L LUNs a target, N = W x L LUNs, P planes;
    pb / bb / lb the page, block and LUN bits of a row; ncol / nrow the column and row address
    cycles, col_w / row_w their widths; plane_bits the width of a plane number.
    """

    def __init__(self, emu):
        g = emu.g
        self.g, self.t = g, emu.t
        self.W, self.L = emu.n_ways, emu.luns
        self.N = self.W * self.L
        self.P = g.planes
        self.pb, self.bb = g.page_bits, g.block_bits
        self.lb = max(1, g.lun_bits)
        self.ncol, self.nrow = g.column_cycles, g.row_cycles
        self.row_w, self.col_w = 8 * self.nrow, 8 * self.ncol
        self.plane_bits = max(1, (self.P - 1).bit_length())
        self.dram_base, self.stride = emu.dram_base, emu.stride

    def lun_index(self, way, lun):
        """The flat index (way x L + lun) of a LUN in the per-LUN state."""
        return way * self.L + lun if self.L > 1 else way

    @staticmethod
    def field(v, lo, n):
        return v[lo:lo + n] if n else Const(0, 1)

    def unpack(self, row):
        """(lun, block, page, in_range) of a row address."""
        pb, bb, g = self.pb, self.bb, self.g
        page = self.field(row, 0, pb)
        block = self.field(row, pb, bb)
        lun_hi = row[pb + bb:]
        ok = (lun_hi < self.L) & (block < g.blocks_per_lun) & (page < g.pages_per_block)
        return lun_hi[:self.lb], block, page, ok

    def plane_of(self, block):
        return block[:self.plane_bits] if self.P > 1 else Const(0, 1)

    def tb_index(self, way, lun, block):
        """The block-table address of (way, lun, block)."""
        bb = self.bb
        return Cat(self.field(block, 0, bb) if bb else Const(0, 0), lun[:self.lb], way)

    def page_index(self, way, row):
        lun, block, page, _ = self.unpack(row)
        return Cat(page if self.pb else Const(0, 0), block if self.bb else Const(0, 0),
                   lun[:self.lb], way)

    def page_addr(self, way, row):
        """The DRAM word address of a page's first word."""
        return self.dram_base + self.page_index(way, row) * self.stride
