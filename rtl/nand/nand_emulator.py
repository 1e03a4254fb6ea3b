# SPDX-License-Identifier: BSD-2-Clause
"""NAND emulator: ONFI SDR targets in front of DRAM (Verilog module `nand_emulator`).

For a card without NAND: one channel's ONFI pins (the controller's `dq_o`/`dq_oe`/`dq_i`,
`ce_n`, `cle`, `ale`, `we_n`, `re_n`, `wp_n`, `rb_n`) answered by `n_ways` emulated targets
of `luns` LUNs each, with the golden die model's (sim/nand/python/nand_die.py) behaviour and
array timing, and every page stored in DRAM through a LiteDRAM native port.

    onfi_channel pins ──► pin sampler ──► latch FIFO ──► command engine ──► block table (BRAM)
                          (WE# rising,                   (sequences,        per-LUN state
                           RE# falling)                   rules, timing)    (busy deadlines)
                               │                               │
                               ▼                               ▼
                        data-out byte ◄── read prefetch ◄── DRAM port ◄── write queue
                        (status, ID,      (page words)      (LiteDRAM     (FFh fill, data
                         param page, ...)                    native)       words, byte mask)

Theory of operation.
- Time: a free-running cycle counter stamps every latch; a command sets its LUN's RDY/ARDY
  deadlines to stamp + ceil(t x f), so R/B# rises on the first clock edge at or after the
  golden model's instant (never early, less than one clock late). FAIL/FAILC land at the
  array's deadline.
- Pages live in DRAM at `dram_base + index x stride` (index = way|lun|block|page, stride the
  page register rounded up to DRAM words). The page registers are pointers (row + what the
  read found: data, erased, or a factory bad block's marker), so a read costs no copy.
- Program: when the row of 80h is known and the block table allows the page, the page is
  filled with FFh (ONFI clears the register at 80h) and the data bytes follow into DRAM as
  they latch, gathered into words with byte enables; a page the table refuses is not
  touched. The confirm updates the block table (next page), in both cases as the golden does.
- Erase updates the table only (next page 0, erased): an erased page reads FFh without DRAM.
- Data out: the byte for the next RE# falling edge is always ready: status, ID, parameter
  page (ROM), features, or the head of a prefetch FIFO that streams the selected register's
  words from DRAM, restarted when the register, plane or column changes (a read's tR, a
  change of column's tCCS and a status poll hide the DRAM latency).
- Rules: the golden's (RULES), each counted and named by `rule_code` (its index in
  RULES); `cfg_strict` refuses the command as the golden's strict die raises, lenient runs
  it and a program or erase reports FAIL.

Not emulated (the golden models them): raw bit errors, the seeded random contents a RESET
leaves in an aborted program's page (it keeps the data sent), NV-DDR2 data transfer (SET
FEATURES accepts the interface, the pins stay SDR), interface timing checks (a real die does
not report them), 85h with a new row. See rtl/nand/README.md ("nand_emulator").

The parts above live in nand_emulator_<part>.py (pins, luns, tables, counters, dram, dataout,
engine with decoder, target, program, erase, read; names in nand_emulator_defs.py); each adds
its logic to this component's one Module, in the order elaborate() builds them.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from .nand_common import bad_int
from .nand_emulator_counters import NandEmulatorCounters
from .nand_emulator_dataout import NandEmulatorDataOut
from .nand_emulator_defs import PE_BITS, RULE_CODES, TIME_BITS, EmuGeometry, cycles, entry_layout
from .nand_emulator_dram import NandEmulatorDram
from .nand_emulator_engine import NandEmulatorEngine
from .nand_emulator_luns import NandEmulatorLuns
from .nand_emulator_pins import NandEmulatorPins
from .nand_emulator_tables import NandEmulatorTables

__all__ = ["NandEmulator", "RULE_CODES", "entry_layout", "factory_bad_table"]


def factory_bad_table(part, seeds, rate):
    """{(way, lun, block)} of the factory bad blocks the golden NandDie(seed) of each way has
    at `rate` (spec.nand_geometry.is_factory_bad, so the emulator and the models agree)."""
    from spec.nand_geometry import is_factory_bad
    g = part.geometry
    return {(way, lun, b) for way, seed in enumerate(seeds) for lun in range(g.luns)
            for b in range(g.blocks_per_lun) if is_factory_bad(seed, rate, lun, b)}


class NandEmulator(wiring.Component):
    """Parameters:
    - part: a spec.nand_geometry NandPart (identity, geometry, array timing), or a PARTS key.
    - n_ways: targets (CE#) on the channel, 1..8.
    - clk_freq: the clock, Hz (the busy times are counted in its cycles).
    - dram_data_width: LiteDRAM native port data width, 32..1024 bits, a power of two.
    - dram_addr_width: its address width (in data words), 8..40.
    - dram_base: word address of this channel's pages.
    - factory_bad: {(way, lun, block)} factory bad blocks (factory_bad_table()).
    - factory_erased: blocks ship erased (the block table's power-on state).
    - param_page_copies: 3..16.
    - wfifo_depth / rfifo_depth: DRAM write queue and read prefetch depth, in words.
    """

    def __init__(self, part="imft-20nm-mlc-64gbit", *, n_ways=1, clk_freq=100e6,
                 dram_data_width=64, dram_addr_width=24, dram_base=0, factory_bad=(),
                 factory_erased=True, param_page_copies=3, wfifo_depth=256, rfifo_depth=16):
        from spec.nand_geometry import PARTS
        from spec.onfi_param_page import onfi_parameter_page
        if isinstance(part, str):
            if part not in PARTS:
                raise ValueError(f"NandEmulator.part = {part!r}: one of {', '.join(PARTS)}")
            part = PARTS[part]
        problems = [p for p in (
            bad_int("n_ways", n_ways, 1, 8),
            bad_int("dram_addr_width", dram_addr_width, 8, 40),
            bad_int("dram_base", dram_base, 0, (1 << dram_addr_width) - 1),
            bad_int("param_page_copies", param_page_copies, 3, 16),
            bad_int("wfifo_depth", wfifo_depth, 4, 4096),
            bad_int("rfifo_depth", rfifo_depth, 4, 256)) if p]
        if dram_data_width not in (32, 64, 128, 256, 512, 1024):
            problems.append(f"dram_data_width must be 32, 64, ..., 1024, got {dram_data_width!r}")
        if not 1e6 <= clk_freq <= 1e9:
            problems.append(f"clk_freq must be 1e6..1e9 Hz, got {clk_freq!r}")
        if problems:
            raise ValueError("NandEmulator: " + "; ".join(problems))
        g = part.geometry
        self.part, self.g, self.t = part, g, part.timing
        self.n_ways, self.luns, self.clk_freq = n_ways, g.luns, clk_freq
        self.dw, self.wb = dram_data_width, dram_data_width // 8
        self.aw, self.dram_base = dram_addr_width, dram_base
        self.reg_bytes = g.register_bytes
        self.stride = -(-self.reg_bytes // self.wb)          # words per page
        self.way_bits = max(1, (n_ways - 1).bit_length())
        self.index_bits = g.page_bits + g.block_bits + max(1, g.lun_bits) + self.way_bits
        top = self.dram_base + (n_ways << (self.index_bits - self.way_bits)) * self.stride
        if top > (1 << dram_addr_width):
            raise ValueError(f"NandEmulator: the pages need {top} words of DRAM, more than "
                             f"dram_addr_width={dram_addr_width} addresses")
        self.factory_bad = frozenset(factory_bad)
        self.factory_erased = factory_erased
        self.param = onfi_parameter_page(part, param_page_copies)
        self.wfifo_depth, self.rfifo_depth = wfifo_depth, rfifo_depth
        all_ones = (1 << n_ways) - 1
        self.entry = entry_layout(g.pages_per_block)
        super().__init__({
            # ONFI pins, from the controller
            "dq_o": In(8), "dq_oe": In(1), "dq_i": Out(8),
            "ce_n": In(n_ways, init=all_ones), "cle": In(1), "ale": In(1),
            "we_n": In(1, init=1), "re_n": In(1, init=1), "wp_n": In(1, init=1),
            "rb_n": Out(n_ways, init=all_ones),
            # run-time configuration (the golden die's options)
            "cfg_strict": In(1, init=1),
            "cfg_require_reset": In(1, init=1),
            "cfg_pe_limit": In(PE_BITS),          # 0: no wear-out
            # block-table backdoor (lab: inject a grown bad block, set wear): one op a pulse
            "bd_valid": In(1), "bd_ready": Out(1),
            "bd_op": In(2),                       # 0 write whole entry, 1 set pe, 2 set bad
            "bd_index": In(self.way_bits + max(1, g.lun_bits) + g.block_bits),
            "bd_entry": In(self.entry),
            # LiteDRAM native port (user side)
            "dram_cmd_valid": Out(1), "dram_cmd_ready": In(1), "dram_cmd_we": Out(1),
            "dram_cmd_addr": Out(dram_addr_width),
            "dram_wdata_valid": Out(1), "dram_wdata_ready": In(1),
            "dram_wdata_data": Out(dram_data_width), "dram_wdata_we": Out(self.wb),
            "dram_rdata_valid": In(1), "dram_rdata_ready": Out(1),
            "dram_rdata_data": In(dram_data_width),
            # observation
            "rule_count": Out(16), "rule_code": Out(4),
            "timing_mode": Out(4 * n_ways),       # SET FEATURES 01h P1[3:0] per target
            "stat_reads": Out(32), "stat_programs": Out(32), "stat_erases": Out(32),
            "stat_program_fail": Out(32), "stat_erase_fail": Out(32), "stat_resets": Out(32),
            "overrun": Out(1),      # a program byte found the write queue full (sticky)
            "underrun": Out(16),    # data-out edges the prefetch had not yet reached
        })

    # --- helpers ---------------------------------------------------------------------------

    def _cyc(self, ns):
        return cycles(ns, self.clk_freq)

    def elaborate(self, platform):
        # The parts add their logic to this one Module, in this order (the Verilog is one
        # module; the order of the statements is the order of its text).
        m = Module()
        geo = EmuGeometry(self)
        now = Signal(TIME_BITS)
        m.d.sync += now.eq(now + 1)

        pins = NandEmulatorPins(self, m, now)
        luns = NandEmulatorLuns(self, geo, m, now)
        tables = NandEmulatorTables(self, geo, m)
        counters = NandEmulatorCounters(self, m)
        dram = NandEmulatorDram(self, geo, luns, m)
        dataout = NandEmulatorDataOut(self, geo, luns, tables, dram, counters, m)
        engine = NandEmulatorEngine(self, geo, m, pins=pins, luns=luns, tables=tables,
                                    counters=counters, dram=dram, dataout=dataout)
        pins.build()
        luns.build()
        tables.build()
        counters.build()
        dram.build()
        dataout.build(pins.re_fall, pins.re_way)
        engine.build()
        return m
