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
"""

import math
from contextlib import contextmanager

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.fifo import SyncFIFOBuffered
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from .nand_common import bad_int

__all__ = ["NandEmulator", "RULE_CODES", "entry_layout", "factory_bad_table"]

# The golden's RULES, in its order: rule_code is the index.
RULE_CODES = ("reset-after-power-on", "busy", "address-range", "erase-before-program",
              "page-order", "page-reprogram", "multi-plane", "command-sequence",
              "data-output-after-status", "feature-value")
_R = {name: i for i, name in enumerate(RULE_CODES)}

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


def entry_layout(pages_per_block):
    """One block-table entry."""
    return data.StructLayout({
        "next_page": pages_per_block.bit_length(),  # pages below it are programmed
        "erased": 1,        # 0: factory state unknown or an erase was aborted
        "bad": 1,           # grown bad block (injected, or past the P/E limit)
        "fbad": 1,          # factory bad block (marker on its first and last page)
        "pe": PE_BITS,      # erase count
    })


def factory_bad_table(part, seeds, rate):
    """{(way, lun, block)} of the factory bad blocks the golden NandDie(seed) of each way has
    at `rate` (spec.nand_geometry.is_factory_bad, so the emulator and the models agree)."""
    from spec.nand_geometry import is_factory_bad
    g = part.geometry
    return {(way, lun, b) for way, seed in enumerate(seeds) for lun in range(g.luns)
            for b in range(g.blocks_per_lun) if is_factory_bad(seed, rate, lun, b)}


def _cycles(ns, clk_freq):
    return max(1, math.ceil(ns * clk_freq / 1e9 - 1e-9))


class NandEmulator(wiring.Component):
    """Parameters:
    - part: a sim.nand NandPart (identity, geometry, array timing), or a PARTS key.
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
        return _cycles(ns, self.clk_freq)

    def elaborate(self, platform):
        m = Module()
        g, t, W, L = self.g, self.t, self.n_ways, self.luns
        N = W * L
        P = g.planes
        pb, bb = g.page_bits, g.block_bits
        lb = max(1, g.lun_bits)
        ncol, nrow = g.column_cycles, g.row_cycles
        row_w, col_w = 8 * nrow, 8 * ncol
        plane_bits = max(1, (P - 1).bit_length())

        now = Signal(TIME_BITS)
        m.d.sync += now.eq(now + 1)

        def after(ns, stamp):
            """The deadline ns after a latch stamped `stamp` (see the docstring)."""
            return stamp + self._cyc(ns)

        def ready(dl):
            return now >= dl

        # --- pin sampler: a latch on WE# rising (the byte before the edge), RE# falling ----
        p_we, p_re = Signal(init=1), Signal(init=1)
        p_ce, p_cle, p_ale, p_dq = Signal(W, init=(1 << W) - 1), Signal(), Signal(), Signal(8)
        m.d.sync += [p_we.eq(self.we_n), p_re.eq(self.re_n), p_ce.eq(self.ce_n),
                     p_cle.eq(self.cle), p_ale.eq(self.ale), p_dq.eq(self.dq_o)]

        def way_of(ce):
            w = Signal(self.way_bits)
            for i in reversed(range(W)):
                with m.If(~ce[i]):
                    m.d.comb += w.eq(i)
            return w

        sel_prev = p_ce != (1 << W) - 1
        latch = self.we_n & ~p_we & sel_prev
        latch_way = way_of(p_ce)
        re_fall = ~self.re_n & p_re & (self.ce_n != (1 << W) - 1)
        re_way = way_of(self.ce_n)

        ev_layout = data.StructLayout({"stamp": TIME_BITS, "kind": 2, "byte": 8,
                                       "way": self.way_bits})
        m.submodules.evq = evq = SyncFIFOBuffered(width=ev_layout.size, depth=8)
        ev_in = data.View(ev_layout, evq.w_data)
        m.d.comb += [evq.w_en.eq(latch), ev_in.stamp.eq(now), ev_in.byte.eq(p_dq),
                     ev_in.kind.eq(Mux(p_cle, 0, Mux(p_ale, 1, 2))), ev_in.way.eq(latch_way)]
        ev = data.View(ev_layout, evq.r_data)
        K_CMD, K_ADDR = 0, 1          # else data input

        # --- per-target and per-LUN state ---------------------------------------------------
        def arr(width, n, init=0, name=None):
            return Array(Signal(width, init=init, name=f"{name}{i}" if name else None)
                         for i in range(n))

        reset_seen = arr(1, W, name="reset_seen")
        sel_lun = arr(lb, W, name="sel_lun")
        out_status = arr(1, W, name="out_status")       # output_mode "status"
        tmode = arr(8, W, name="tmode")                   # feature 01h P1
        tmode_act = arr(8, W, name="tmode_act")           # ... in force (R/B# was high)
        rdy_dl = arr(TIME_BITS, N, name="rdy_dl")
        ardy_dl = arr(TIME_BITS, N, name="ardy_dl")
        fail = arr(1, N, name="fail")
        failc = arr(1, N, name="failc")
        # FAIL/FAILC updates due at an array deadline: two slots (a cache program queues a
        # second page behind the array's current one)
        evf_valid = arr(1, N, name="evf_valid")
        evf_dl = arr(TIME_BITS, N, name="evf_dl")
        evf_fail = arr(1, N, name="evf_fail")
        evf_cache = arr(1, N, name="evf_cache")
        evf2_valid = arr(1, N, name="evf2_valid")
        evf2_dl = arr(TIME_BITS, N, name="evf2_dl")
        evf2_fail = arr(1, N, name="evf2_fail")
        evf2_cache = arr(1, N, name="evf2_cache")
        cache_mode = arr(2, N, name="cache_mode")       # CACHE_NONE / _READ / _PROG
        lrr_valid = arr(1, N, name="lrr_valid")         # last_read_row (for 31h)
        lrr_row = arr(row_w, N, name="lrr_row")
        dreg_row = arr(row_w, N, name="dreg_row")       # the data register (cache read)
        dreg_kind = arr(2, N, name="dreg_kind")
        dreg_plane = arr(plane_bits, N, name="dreg_plane")
        reg_row = Array(arr(row_w, P) for _ in range(N))
        reg_kind = Array(arr(2, P) for _ in range(N))
        column = arr(col_w, N, name="column")
        out_plane = arr(plane_bits, N, name="out_plane")
        mp_kind = arr(2, N, name="mp_kind")
        mp_mask = arr(P, N, name="mp_mask")
        mp_page = arr(max(1, pb), N, name="mp_page")
        mp_row = Array(arr(row_w, P) for _ in range(N))
        inf_erase = arr(P, N, name="inf_erase")          # planes of an erase in flight
        inf_prog = arr(P, N, name="inf_prog")            # planes of a program in flight
        inf_prog_q = arr(1, N, name="inf_prog_q")        # a cache page queued behind it
        inf_block = Array(arr(max(1, bb), P) for _ in range(N))

        engine_idle = Signal()
        for i in range(N):
            # applied while the engine is idle (it schedules them), a few cycles at most late
            with m.If(evf_valid[i] & ready(evf_dl[i]) & engine_idle):
                m.d.sync += [fail[i].eq(evf_fail[i]),
                             failc[i].eq(Mux(evf_cache[i], fail[i], 0)),
                             evf_valid[i].eq(evf2_valid[i]), evf_dl[i].eq(evf2_dl[i]),
                             evf_fail[i].eq(evf2_fail[i]), evf_cache[i].eq(evf2_cache[i]),
                             evf2_valid[i].eq(0)]

        # a confirm shows busy from the latch on, while the engine walks the block table
        walking = Signal()
        walking_way = Signal(self.way_bits)
        for w in range(W):
            m.d.comb += [
                self.rb_n[w].eq(Cat(ready(rdy_dl[w * L + l]) for l in range(L)).all()
                                & ~(walking & (walking_way == w))),
                self.timing_mode[4 * w:4 * w + 4].eq(tmode_act[w][:4])]
            # a new timing mode (SET FEATURES 01h, RESET) applies once the target is ready
            with m.If(self.rb_n[w]):
                m.d.sync += tmode_act[w].eq(tmode[w])

        def lun_index(way, lun):
            return way * L + lun if L > 1 else way

        def status_of(idx):
            rdy, ardy = ready(rdy_dl[idx]), ready(ardy_dl[idx])
            return Cat(rdy & fail[idx], rdy & failc[idx], Const(0, 3), ardy, rdy, self.wp_n)

        # --- memories -------------------------------------------------------------------------
        tb_depth = W << (lb + bb)
        init_entry = []
        for idx in range(tb_depth):
            block = idx & ((1 << bb) - 1)
            lun = (idx >> bb) & ((1 << lb) - 1)
            way = idx >> (bb + lb)
            fbad = (way, lun, block) in self.factory_bad
            init_entry.append({"next_page": 0, "erased": int(self.factory_erased), "bad": 0,
                               "fbad": int(fbad), "pe": 0})
        m.submodules.table = table = Memory(shape=self.entry, depth=tb_depth, init=init_entry)
        tb_rd = table.read_port(transparent_for=())
        tb_wr = table.write_port()
        m.submodules.feat = feat_mem = Memory(shape=32, depth=W * 256, init=[])
        ft_rd = feat_mem.read_port(transparent_for=())
        ft_wr = feat_mem.write_port()
        m.submodules.param = param_rom = Memory(shape=8, depth=len(self.param),
                                                init=list(self.param))
        pr_rd = param_rom.read_port(domain="comb")

        # --- the command engine's registers ---------------------------------------------------
        cur_way = Signal(self.way_bits)
        cmd = Signal(8)             # the command whose address/data cycles are collected
        cmd_open = Signal()
        addr_n = Signal(range(ncol + nrow + 1))
        addr_buf = Signal(8 * (ncol + nrow))
        chunks = Signal()           # 80h: a chunk is open (data may follow)
        p_row = Signal(row_w)       # program row
        p_col = Signal(col_w + 1)   # next data column
        p_ok = Signal()             # the table allows this page: data go to DRAM
        p_lun = Signal(lb)
        p_range = Signal()          # a data byte fell beyond the page register
        feat_n = Signal(3)
        feat_buf = Signal(32)
        feat_addr = Signal(8)
        out_src = Signal(3)
        out_idx = Signal(range(max(len(self.param), 9) + 1))
        out_bytes = Signal(64)      # ID / feature bytes
        out_len = Signal(range(max(len(self.param), 8) + 1))
        c_row = Signal(row_w)       # the row / column of a confirmed sequence
        c_col = Signal(col_w)

        rule_count = Signal(16)
        m.d.comb += self.rule_count.eq(rule_count)
        stats = [self.stat_reads, self.stat_programs, self.stat_erases, self.stat_program_fail,
                 self.stat_erase_fail, self.stat_resets]
        stat_inc = [Signal(name=f"inc_{i}") for i in range(len(stats))]
        for s, inc in zip(stats, stat_inc, strict=True):
            with m.If(inc):
                m.d.sync += s.eq(s + 1)

        def violate(rule):
            m.d.sync += [rule_count.eq(rule_count + 1), self.rule_code.eq(_R[rule])]

        def field(v, lo, n):
            return v[lo:lo + n] if n else Const(0, 1)

        def unpack(row):
            """(lun, block, page, in_range) of a row address."""
            page = field(row, 0, pb)
            block = field(row, pb, bb)
            lun_hi = row[pb + bb:]
            ok = (lun_hi < L) & (block < g.blocks_per_lun) & (page < g.pages_per_block)
            return lun_hi[:lb], block, page, ok

        def plane_of(block):
            return block[:plane_bits] if P > 1 else Const(0, 1)

        def tb_index(way, lun, block):
            return Cat(field(block, 0, bb) if bb else Const(0, 0), lun[:lb], way)

        def page_index(way, row):
            lun, block, page, _ = unpack(row)
            return Cat(page if pb else Const(0, 0), block if bb else Const(0, 0), lun[:lb], way)

        def page_addr(way, row):
            return self.dram_base + page_index(way, row) * self.stride

        # --- DRAM write queue: FFh fills and data words --------------------------------------
        wq_layout = data.StructLayout({"fill": 1, "addr": self.aw, "data": self.dw,
                                       "be": self.wb})
        m.submodules.wq = wq = SyncFIFOBuffered(width=wq_layout.size, depth=self.wfifo_depth)
        wq_in = data.View(wq_layout, wq.w_data)
        wq_out = data.View(wq_layout, wq.r_data)
        acc_valid = Signal()
        acc_word = Signal(self.aw)
        acc_data = Signal(self.dw)
        acc_be = Signal(self.wb)
        wq_push = Signal()
        m.d.comb += wq.w_en.eq(wq_push)
        with m.If(wq_push & ~wq.w_rdy):
            m.d.sync += self.overrun.eq(1)

        # writer: one command + one data beat per word; a fill entry expands to `stride` words
        fill_left = Signal(range(self.stride + 1))
        fill_addr = Signal(self.aw)
        w_cmd_done, w_dat_done = Signal(), Signal()
        w_active = Signal()
        w_addr = Signal(self.aw)
        w_data = Signal(self.dw)
        w_be = Signal(self.wb)
        with m.If(~w_active):
            with m.If(fill_left != 0):
                m.d.sync += [w_active.eq(1), w_addr.eq(fill_addr), w_data.eq(~0),
                             w_be.eq(~0), fill_addr.eq(fill_addr + 1),
                             fill_left.eq(fill_left - 1)]
            with m.Elif(wq.r_rdy):
                m.d.comb += wq.r_en.eq(1)
                with m.If(wq_out.fill):
                    m.d.sync += [fill_addr.eq(wq_out.addr), fill_left.eq(self.stride)]
                with m.Else():
                    m.d.sync += [w_active.eq(1), w_addr.eq(wq_out.addr),
                                 w_data.eq(wq_out.data), w_be.eq(wq_out.be)]
        # the reader shares the command channel: writes go first when both wait
        rd_cmd_want = Signal()
        m.d.comb += [
            self.dram_wdata_valid.eq(w_active & ~w_dat_done),
            self.dram_wdata_data.eq(w_data), self.dram_wdata_we.eq(w_be)]
        w_cmd_fire = Signal()
        rd_cmd_fire = Signal()
        with m.If(w_active & ~w_cmd_done):
            m.d.comb += [self.dram_cmd_valid.eq(1), self.dram_cmd_we.eq(1),
                         self.dram_cmd_addr.eq(w_addr), w_cmd_fire.eq(self.dram_cmd_ready)]
        with m.Elif(rd_cmd_want):
            m.d.comb += [self.dram_cmd_valid.eq(1), self.dram_cmd_we.eq(0),
                         rd_cmd_fire.eq(self.dram_cmd_ready)]
        cmd_done_next = w_cmd_done | w_cmd_fire
        dat_done_next = w_dat_done | (self.dram_wdata_valid & self.dram_wdata_ready)
        with m.If(w_active):
            with m.If(cmd_done_next & dat_done_next):
                m.d.sync += [w_active.eq(0), w_cmd_done.eq(0), w_dat_done.eq(0)]
            with m.Else():
                m.d.sync += [w_cmd_done.eq(cmd_done_next), w_dat_done.eq(dat_done_next)]

        # --- read prefetch: the selected register's words -------------------------------------
        m.submodules.rq = rq = SyncFIFOBuffered(width=self.dw, depth=self.rfifo_depth)
        rd_next = Signal(self.aw)           # next word address to request
        rd_left = Signal(range(self.stride + 1))
        rd_inflight = Signal(range(self.rfifo_depth + 1))
        rd_drop = Signal(range(self.rfifo_depth + 1))
        lane = Signal(range(self.wb))
        restart = Signal()
        restart_addr = Signal(self.aw)
        restart_left = Signal(range(self.stride + 1))
        restart_lane = Signal(range(self.wb))
        pop = Signal()
        flush = Signal()
        m.d.comb += self.dram_rdata_ready.eq(1)
        flushing = Signal()
        m.d.comb += rd_cmd_want.eq((rd_left != 0) & ~restart & ~flushing
                                   & (rq.r_level + rd_inflight < self.rfifo_depth - 1))
        with m.If(rd_cmd_want & ~(w_active & ~w_cmd_done)):
            m.d.comb += self.dram_cmd_addr.eq(rd_next)
        ret = self.dram_rdata_valid
        keep = ret & (rd_drop == 0) & ~restart
        m.d.comb += [rq.w_en.eq(keep), rq.w_data.eq(self.dram_rdata_data)]
        m.d.comb += rq.r_en.eq(pop | flush)
        infl = rd_inflight + rd_cmd_fire - ret
        with m.If(restart):
            m.d.sync += [rd_next.eq(restart_addr), rd_left.eq(restart_left),
                         lane.eq(restart_lane), rd_drop.eq(infl)]
            m.d.comb += flush.eq(rq.r_rdy)
        with m.Else():
            with m.If(rd_cmd_fire):
                m.d.sync += [rd_next.eq(rd_next + 1), rd_left.eq(rd_left - 1)]
            with m.If(ret & (rd_drop != 0)):
                m.d.sync += rd_drop.eq(rd_drop - 1)
        m.d.sync += rd_inflight.eq(infl)
        # a restart empties the FIFO over a few cycles (one word a cycle)
        with m.If(restart):
            m.d.sync += flushing.eq(1)
        with m.Elif(flushing):
            m.d.comb += flush.eq(rq.r_rdy)
            with m.If(~rq.r_rdy):
                m.d.sync += flushing.eq(0)

        def restart_at(way, lun_idx, plane, col):
            """Point the prefetch at (register of lun/plane, column)."""
            row = reg_row[lun_idx][plane]
            m.d.comb += [restart.eq(1),
                         restart_addr.eq(page_addr(way, row) + (col >> int(math.log2(self.wb)))),
                         restart_lane.eq(col[:max(1, int(math.log2(self.wb)))]),
                         restart_left.eq(Mux(col < self.reg_bytes,
                                             self.stride - (col >> int(math.log2(self.wb))),
                                             0))]

        # --- data out: the byte for the next RE# falling edge ---------------------------------
        o_way = re_way
        o_lun = lun_index(o_way, sel_lun[o_way]) if L > 1 else o_way
        o_plane = out_plane[o_lun]
        o_col = column[o_lun]
        o_kind = reg_kind[o_lun][o_plane]
        head = rq.r_data.word_select(lane, 8)
        dout = Signal(8)
        with m.If(re_fall):
            m.d.sync += self.dq_i.eq(dout)      # held until the next RE# falling edge
        o_busy = ~ready(rdy_dl[o_lun]) | (~ready(ardy_dl[o_lun])
                                          & (cache_mode[o_lun] != CACHE_READ))
        with m.If(re_fall):
            with m.Switch(out_src):
                with m.Case(OUT_STATUS):
                    m.d.comb += dout.eq(status_of(o_lun))
                with m.Case(OUT_ID, OUT_FEAT, OUT_PARAM):
                    busy_any = ~self.rb_n.bit_select(o_way, 1)
                    with m.If(busy_any):
                        violate("busy")
                    with m.Elif(out_idx < out_len):
                        m.d.comb += dout.eq(Mux(out_src == OUT_PARAM, pr_rd.data,
                                                out_bytes.word_select(out_idx[:3], 8)))
                        m.d.sync += out_idx.eq(out_idx + 1)
                with m.Case(OUT_ARRAY):
                    with m.If(out_status[o_way]):
                        violate("data-output-after-status")
                    with m.Elif(o_busy):
                        violate("busy")
                    with m.Elif(o_col >= self.reg_bytes):
                        violate("address-range")
                    with m.Else():
                        with m.Switch(o_kind):
                            with m.Case(REG_DATA):
                                with m.If(rq.r_rdy):
                                    m.d.comb += dout.eq(head)
                                with m.Else():
                                    m.d.sync += self.underrun.eq(self.underrun + 1)
                                m.d.comb += pop.eq(rq.r_rdy & (lane == self.wb - 1))
                                m.d.sync += lane.eq(lane + 1)
                            with m.Case(REG_MARK):
                                m.d.comb += dout.eq(Mux(o_col == g.page_bytes, 0x00, 0xFF))
                            with m.Default():
                                m.d.comb += dout.eq(0xFF)
                        m.d.sync += column[o_lun].eq(o_col + 1)
        m.d.comb += pr_rd.addr.eq(out_idx)

        # --- the command engine ------------------------------------------------------------
        # A latch is popped when the engine is idle; most take one cycle, the block-table
        # walks of a program/erase/read confirm one or two cycles a plane.
        idx = Signal(range(max(N, 2)))          # the LUN of the current table walk
        walk_mask = Signal(P)                   # planes left to walk
        walk_plane = Signal(range(P + 1))
        walk_pass = Signal()                    # program: 0 check every plane, 1 write
        walk_fail = Signal()
        walk_rule = Signal(4)
        walk_ruled = Signal()
        walk_page = Signal(max(1, pb))
        walk_stamp = Signal(TIME_BITS)
        walk_conf = Signal(8)
        walk_way = Signal(self.way_bits)
        walk_col = Signal(col_w)
        walk_lun = Signal(lb)
        tb_entry = data.View(self.entry, tb_rd.data)
        wr_entry = data.View(self.entry, tb_wr.data)

        cur_byte = ev.byte
        st = ev.stamp
        w = ev.way
        addr_all = Signal(8 * (ncol + nrow))
        m.d.comb += addr_all.eq(addr_buf | (cur_byte << (8 * addr_n)))
        col_of = addr_all[:col_w]
        row_of = addr_all[col_w:col_w + row_w]

        def powered():
            return reset_seen[w] | ~self.cfg_require_reset

        def target_ready(way):
            return Cat(ready(rdy_dl[lun_index(way, l)]) & ready(ardy_dl[lun_index(way, l)])
                       for l in range(L)).all()

        def busy_target(way, ns, stamp):
            for l in range(L):
                i = lun_index(way, l)
                dl = after(ns, stamp)
                m.d.sync += rdy_dl[i].eq(dl)
                m.d.sync += ardy_dl[i].eq(Mux(ardy_dl[i] > dl, ardy_dl[i], dl))

        def schedule_fail(li, dl, value, cache):
            """FAIL (and FAILC along a cache program) take `value` at deadline dl."""
            with m.If(evf_valid[li]):
                m.d.sync += [evf2_valid[li].eq(1), evf2_dl[li].eq(dl), evf2_fail[li].eq(value),
                             evf2_cache[li].eq(cache)]
            with m.Else():
                m.d.sync += [evf_valid[li].eq(1), evf_dl[li].eq(dl), evf_fail[li].eq(value),
                             evf_cache[li].eq(cache)]

        def clear_seq():
            m.d.sync += [cmd_open.eq(0), addr_n.eq(0), addr_buf.eq(0), chunks.eq(0),
                         feat_n.eq(0), feat_buf.eq(0)]

        def flush_acc():
            with m.If(acc_valid):
                m.d.comb += [wq_push.eq(1), wq_in.fill.eq(0), wq_in.addr.eq(acc_word),
                             wq_in.data.eq(acc_data), wq_in.be.eq(acc_be)]
                m.d.sync += [acc_valid.eq(0), acc_be.eq(0)]

        log_wb = int(math.log2(self.wb))

        @contextmanager
        def group_checks(li, ok, busy_ok, out_of_range, kind, pl, page_differs):
            """The golden's checks of one plane of a (multi-plane) program, erase or read, in
            its order; the body runs when every check passes, else the rule is counted.
            out_of_range / page_differs: None where the operation has no such check."""
            with m.If(~(reset_seen[walk_way] | ~self.cfg_require_reset)):
                violate("reset-after-power-on")
                m.next = "IDLE"
            with m.Elif(~ok):
                violate("address-range")
                m.next = "IDLE"
            with m.Elif(~busy_ok):
                violate("busy")
                m.next = "IDLE"
            if out_of_range is not None:       # (a constant condition trips Verilator lint)
                with m.Elif(out_of_range):
                    violate("address-range")
                    m.next = "IDLE"
            with m.Elif((mp_mask[li] != 0) & (mp_kind[li] != kind)):
                violate("command-sequence")
                m.d.sync += [mp_mask[li].eq(0), mp_kind[li].eq(MP_NONE)]
                m.next = "IDLE"
            same_plane = mp_mask[li].bit_select(pl, 1)
            clash = same_plane if page_differs is None else same_plane | page_differs
            with m.Elif((mp_mask[li] != 0) & clash):
                violate("multi-plane")
                m.d.sync += [mp_mask[li].eq(0), mp_kind[li].eq(MP_NONE)]
                m.next = "IDLE"
            with m.Else():
                yield

        def queue_plane(li, kind, pl, page):
            """11h / 32h / D1h: the plane joins the group; the LUN is busy tDBSY."""
            dl = after(t.t_dbsy_ns, walk_stamp)
            m.d.sync += [mp_kind[li].eq(kind), mp_page[li].eq(page),
                         mp_mask[li].eq(mp_mask[li] | (1 << pl)), rdy_dl[li].eq(dl),
                         ardy_dl[li].eq(Mux(ardy_dl[li] > dl, ardy_dl[li], dl))]
            m.next = "IDLE"

        @contextmanager
        def plane_walk(block, per_plane, first=True):
            """One step of a walk over the planes of walk_mask (a state that comes back to
            itself): a plane in the mask has the table entry of `block` read and goes to the
            `per_plane` state, which steps walk_plane; a plane not in it is skipped; the
            body runs once every plane is done. first=False: an Elif of the caller's If."""
            with (m.If if first else m.Elif)(walk_plane == P):
                yield
            with m.Elif(walk_mask.bit_select(walk_plane, 1)):
                m.d.comb += tb_rd.addr.eq(tb_index(walk_way, p_lun, block))
                m.next = per_plane
            with m.Else():
                m.d.sync += walk_plane.eq(walk_plane + 1)

        def page_cycles(ns, lower, upper, page):
            """Cycles of an array time that may differ by MLC page type (lower/upper)."""
            if (lower is None and upper is None) or g.bits_per_cell < 2:
                return Const(self._cyc(ns), 32)
            return Mux(page[0], self._cyc(upper if upper is not None else ns),
                       self._cyc(lower if lower is not None else ns))

        with m.FSM(name="engine") as fsm:
            m.d.comb += walking.eq(Cat(fsm.ongoing(n) for n in (
                "PROG_CONFIRM", "PROG_WALK", "PROG_WALK_CHK", "ERASE_CONFIRM", "ERASE_WALK",
                "ERASE_WALK_WR", "READ_CONFIRM", "READ_WALK", "READ_WALK_KIND", "RESET",
                "RESET_ERASE", "RESET_ERASE_WR", "SETFEAT", "CACHE_READ",
                "CACHE_READ_KIND")).any())
            m.d.comb += [walking_way.eq(walk_way), engine_idle.eq(fsm.ongoing("IDLE"))]
            with m.State("IDLE"):
                with m.If(self.bd_valid):
                    m.d.comb += tb_rd.addr.eq(self.bd_index)
                    m.next = "BACKDOOR"
                with m.Elif(evq.r_rdy):
                    m.d.comb += evq.r_en.eq(1)
                    m.d.sync += cur_way.eq(w)
                    lun_c, blk_c, page_c, ok_c = unpack(row_of)
                    li = lun_index(w, lun_c) if L > 1 else w
                    with m.Switch(ev.kind):
                        # ---------------- commands ----------------
                        with m.Case(K_CMD):
                            c = cur_byte
                            with m.If(c.matches(0x10, 0x11, 0x15)):
                                with m.If(~cmd_open | ~cmd.matches(0x80, 0x85) | ~chunks):
                                    violate("command-sequence")
                                    clear_seq()
                                with m.Else():
                                    flush_acc()
                                    clear_seq()
                                    m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                                                 walk_way.eq(w)]
                                    m.next = "PROG_CONFIRM"
                            with m.Elif(c.matches(0x30, 0x32) | ((c == 0x31) & cmd_open
                                                                 & (cmd == 0x00)
                                                                 & (addr_n != 0))):
                                with m.If(~cmd_open | (cmd != 0x00) | (addr_n != ncol + nrow)):
                                    violate("command-sequence")
                                    clear_seq()
                                with m.Else():
                                    clear_seq()
                                    m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                                                 walk_way.eq(w), out_src.eq(OUT_ARRAY),
                                                 c_col.eq(addr_buf[:col_w]),
                                                 c_row.eq(addr_buf[col_w:col_w + row_w]),
                                                 walk_pass.eq(1)]
                                    with m.If(c == 0x31):
                                        m.next = "CACHE_READ"
                                    with m.Else():
                                        m.next = "READ_CONFIRM"
                            with m.Elif(c.matches(0xD0, 0xD1)):
                                with m.If(~cmd_open | (cmd != 0x60) | (addr_n != nrow)):
                                    violate("command-sequence")
                                    clear_seq()
                                with m.Else():
                                    clear_seq()
                                    m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                                                 walk_way.eq(w), c_row.eq(addr_buf[:row_w])]
                                    m.next = "ERASE_CONFIRM"
                            with m.Elif(c == 0xE0):
                                m.d.sync += out_src.eq(OUT_ARRAY)
                                clear_seq()
                                with m.If(cmd_open & (cmd == 0x05) & (addr_n == ncol)):
                                    m.d.sync += [walk_col.eq(addr_buf[:col_w]),
                                                 walk_way.eq(w), walk_stamp.eq(st)]
                                    m.next = "CHCOL"
                                with m.Elif(cmd_open & (cmd == 0x06) & (addr_n == ncol + nrow)):
                                    m.d.sync += [walk_col.eq(addr_buf[:col_w]),
                                                 walk_way.eq(w), walk_stamp.eq(st),
                                                 c_row.eq(addr_buf[col_w:col_w + row_w])]
                                    m.next = "CHCOL_ENH"
                                with m.Elif(cmd_open & cmd.matches(0x05, 0x06)):
                                    violate("command-sequence")
                                with m.Else():
                                    violate("command-sequence")
                            with m.Elif(c == 0x85):
                                with m.If(~cmd_open | ~cmd.matches(0x80, 0x85) | ~chunks):
                                    violate("command-sequence")
                                    clear_seq()
                                with m.Else():
                                    flush_acc()
                                    m.d.sync += [cmd.eq(0x85), addr_n.eq(0), addr_buf.eq(0)]
                            with m.Else():
                                # any other command ends an incomplete sequence
                                with m.If(cmd_open & ~((cmd == 0x00) & (addr_n == 0))):
                                    violate("command-sequence")
                                flush_acc()
                                clear_seq()
                                with m.Switch(c):
                                    with m.Case(0xFF):
                                        m.d.sync += [walk_stamp.eq(st), walk_way.eq(w),
                                                     out_src.eq(OUT_NONE)]
                                        m.next = "RESET"
                                    with m.Case(0x70):
                                        m.d.sync += [out_status[w].eq(1), out_src.eq(OUT_STATUS)]
                                    with m.Case(0x00):
                                        m.d.sync += [out_status[w].eq(0), cmd.eq(0x00),
                                                     cmd_open.eq(1)]
                                        with m.If(out_src == OUT_STATUS):
                                            m.d.sync += out_src.eq(OUT_ARRAY)
                                    with m.Case(0x05, 0x06, 0x60, 0x78, 0x80, 0x90, 0xEC,
                                                0xEE, 0xEF):
                                        m.d.sync += [cmd.eq(c), cmd_open.eq(1)]
                                    with m.Case(0x31, 0x3F):
                                        m.d.sync += [walk_conf.eq(c), walk_stamp.eq(st),
                                                     walk_way.eq(w), out_src.eq(OUT_ARRAY),
                                                     walk_pass.eq(0)]
                                        m.next = "CACHE_READ"
                                    with m.Default():
                                        violate("command-sequence")
                        # ---------------- address cycles ----------------
                        with m.Case(K_ADDR):
                            limit = Signal(range(ncol + nrow + 1))
                            with m.Switch(cmd):
                                with m.Case(0x00, 0x06, 0x80, 0x85):
                                    m.d.comb += limit.eq(ncol + nrow)
                                with m.Case(0x05):
                                    m.d.comb += limit.eq(ncol)
                                with m.Case(0x60, 0x78):
                                    m.d.comb += limit.eq(nrow)
                                with m.Case(0x90, 0xEC, 0xEE, 0xEF):
                                    m.d.comb += limit.eq(1)
                            bad_addr = (~cmd_open | (limit == 0) | (addr_n >= limit)
                                        | ((cmd == 0x80) & chunks))
                            with m.If(bad_addr):
                                violate("command-sequence")
                                clear_seq()
                            with m.Else():
                                m.d.sync += [addr_buf.eq(addr_all), addr_n.eq(addr_n + 1)]
                                last = addr_n + 1 == limit
                                with m.If(last):
                                    with m.Switch(cmd):
                                        with m.Case(0x90):
                                            clear_seq()
                                            m.d.sync += [out_src.eq(OUT_ID), out_idx.eq(0),
                                                         out_len.eq(0)]
                                            with m.If(~powered()):
                                                violate("reset-after-power-on")
                                            with m.Elif(~target_ready(w)):
                                                violate("busy")
                                            with m.Elif(cur_byte == 0x00):
                                                ident = int.from_bytes(
                                                    self.part.id_bytes[:8], "little")
                                                m.d.sync += [out_bytes.eq(ident),
                                                             out_len.eq(min(
                                                                 8, len(self.part.id_bytes)))]
                                            with m.Elif(cur_byte == 0x20):
                                                m.d.sync += [out_bytes.eq(int.from_bytes(
                                                    b"ONFI", "little")), out_len.eq(4)]
                                            with m.Else():
                                                violate("address-range")
                                        with m.Case(0xEC):
                                            clear_seq()
                                            m.d.sync += [out_src.eq(OUT_PARAM), out_idx.eq(0),
                                                         out_len.eq(0)]
                                            with m.If(~powered()):
                                                violate("reset-after-power-on")
                                            with m.Elif(~target_ready(w)):
                                                violate("busy")
                                            with m.Elif(cur_byte != 0x00):
                                                violate("address-range")
                                            with m.Else():
                                                m.d.sync += [out_len.eq(len(self.param)),
                                                             out_status[w].eq(0)]
                                                busy_target(w, t.t_r_ns, st)
                                        with m.Case(0xEE):
                                            clear_seq()
                                            m.d.sync += [out_src.eq(OUT_FEAT), out_idx.eq(0),
                                                         out_len.eq(0)]
                                            with m.If(~powered()):
                                                violate("reset-after-power-on")
                                            with m.Elif(~target_ready(w)):
                                                violate("busy")
                                            with m.Else():
                                                m.d.comb += ft_rd.addr.eq(Cat(cur_byte, w))
                                                m.d.sync += [out_len.eq(4), out_status[w].eq(0)]
                                                busy_target(w, t.t_feat_ns, st)
                                                m.next = "GETFEAT"
                                        with m.Case(0xEF):
                                            m.d.sync += feat_addr.eq(cur_byte)
                                        with m.Case(0x78):
                                            clear_seq()
                                            m.d.sync += out_src.eq(OUT_STATUS)
                                            # 78h has row cycles only
                                            lun78 = addr_all[pb + bb:row_w]
                                            with m.If(lun78 >= L):
                                                violate("address-range")
                                            with m.Else():
                                                m.d.sync += [sel_lun[w].eq(lun78[:lb]),
                                                             out_status[w].eq(1)]
                                        with m.Case(0x80):
                                            m.d.sync += [chunks.eq(1), p_row.eq(row_of),
                                                         p_col.eq(col_of), p_ok.eq(0),
                                                         p_range.eq(0), p_lun.eq(lun_c),
                                                         walk_way.eq(w)]
                                            with m.If(ok_c):
                                                m.d.comb += tb_rd.addr.eq(
                                                    tb_index(w, lun_c, blk_c))
                                                m.next = "PROG_OPEN"
                                        with m.Case(0x85):
                                            # column (and row) of the next chunk
                                            m.d.sync += [p_col.eq(col_of), cmd.eq(0x80)]
                                with m.If((cmd == 0x85) & (addr_n + 1 == ncol)):
                                    m.d.sync += p_col.eq(col_of)
                        # ---------------- data input ----------------
                        with m.Default():
                            with m.If(cmd_open & (cmd == 0x85)):
                                # 85h with only column cycles: the chunk starts here
                                with m.If(addr_n != ncol):
                                    violate("command-sequence")
                                m.d.sync += cmd.eq(0x80)
                            with m.If(cmd_open & cmd.matches(0x80, 0x85) & chunks):
                                col = p_col
                                with m.If(col >= self.reg_bytes):
                                    m.d.sync += p_range.eq(1)
                                with m.Elif(p_ok):
                                    word = page_addr(walk_way, p_row) + (col >> log_wb)
                                    ln = col[:max(1, log_wb)]
                                    with m.If(acc_valid & (acc_word != word)):
                                        flush_acc()
                                    m.d.sync += [
                                        acc_valid.eq(1), acc_word.eq(word),
                                        acc_data.word_select(ln, 8).eq(cur_byte),
                                        acc_be.bit_select(ln, 1).eq(1)]
                                    with m.If(acc_valid & (acc_word != word)):
                                        m.d.sync += acc_be.eq(1 << ln)
                                m.d.sync += p_col.eq(col + 1)
                            with m.Elif(cmd_open & (cmd == 0xEF) & (addr_n == 1)):
                                nb = Cat(feat_buf[8:], cur_byte)
                                m.d.sync += [feat_buf.eq(nb), feat_n.eq(feat_n + 1)]
                                with m.If(feat_n == 3):
                                    clear_seq()
                                    m.d.sync += [walk_stamp.eq(st), walk_way.eq(w),
                                                 feat_buf.eq(nb)]
                                    m.next = "SETFEAT"
                            with m.Else():
                                violate("command-sequence")
                                clear_seq()

            with m.State("BACKDOOR"):
                m.d.comb += [self.bd_ready.eq(1), tb_wr.addr.eq(self.bd_index), tb_wr.en.eq(1)]
                with m.Switch(self.bd_op):
                    with m.Case(0):
                        m.d.comb += tb_wr.data.eq(self.bd_entry)
                    with m.Case(1):
                        m.d.comb += [tb_wr.data.eq(tb_rd.data), wr_entry.pe.eq(self.bd_entry.pe)]
                    with m.Default():
                        m.d.comb += [tb_wr.data.eq(tb_rd.data), wr_entry.bad.eq(1)]
                m.next = "IDLE"

            with m.State("GETFEAT"):
                m.d.sync += out_bytes.eq(ft_rd.data)
                m.next = "IDLE"

            with m.State("SETFEAT"):
                fw = walk_way
                p1 = feat_buf[:8]
                mode, iface = p1[:4], p1[4:6]
                sdr_ok = Const(self.part.sdr_modes, 8).bit_select(mode[:3], 1) & (mode <= 5)
                bad_value = (feat_addr == 0x01) & ~(((iface == 2) & (mode <= 7))
                                                    | ((iface == 0) & sdr_ok))
                with m.If(~(reset_seen[fw] | ~self.cfg_require_reset)):
                    violate("reset-after-power-on")
                with m.Elif(~target_ready(fw)):
                    violate("busy")
                with m.Elif(bad_value):
                    violate("feature-value")
                with m.Else():
                    m.d.comb += [ft_wr.addr.eq(Cat(feat_addr, fw)), ft_wr.data.eq(feat_buf),
                                 ft_wr.en.eq(1)]
                    with m.If(feat_addr == 0x01):
                        m.d.sync += tmode[fw].eq(p1)
                    busy_target(fw, t.t_feat_ns, walk_stamp)
                m.next = "IDLE"

            with m.State("RESET"):
                rw = walk_way
                first = ~reset_seen[rw]
                for l in range(L):
                    i = lun_index(rw, l)
                    busy_for = Mux((inf_prog[i] != 0) & ~ready(ardy_dl[i]),
                                   self._cyc(t.t_rst_prog_ns), self._cyc(t.t_rst_ns))
                    busy_for = Mux((inf_erase[i] != 0) & ~ready(ardy_dl[i]),
                                   self._cyc(t.t_rst_erase_ns), busy_for)
                    busy_for = Mux(first & (self._cyc(t.t_rst_first_ns) > busy_for),
                                   self._cyc(t.t_rst_first_ns), busy_for)
                    dl = walk_stamp + busy_for
                    m.d.sync += [rdy_dl[i].eq(dl), ardy_dl[i].eq(dl), fail[i].eq(0),
                                 failc[i].eq(0), evf_valid[i].eq(0), evf2_valid[i].eq(0),
                                 cache_mode[i].eq(CACHE_NONE), lrr_valid[i].eq(0),
                                 mp_kind[i].eq(MP_NONE),
                                 mp_mask[i].eq(0), column[i].eq(0)]
                    with m.If(ready(ardy_dl[i])):
                        m.d.sync += [inf_erase[i].eq(0), inf_prog[i].eq(0), inf_prog_q[i].eq(0)]
                m.d.sync += [reset_seen[rw].eq(1), sel_lun[rw].eq(0), out_status[rw].eq(0),
                             tmode[rw].eq(0)]
                m.d.comb += [ft_wr.addr.eq(Cat(Const(0x01, 8), rw)), ft_wr.data.eq(0),
                             ft_wr.en.eq(1), stat_inc[5].eq(1)]
                m.d.sync += [walk_lun.eq(0), walk_mask.eq(0)]
                m.next = "RESET_ERASE"

            # An erase aborted by RESET leaves its blocks needing another erase.
            with m.State("RESET_ERASE"):
                li = lun_index(walk_way, walk_lun) if L > 1 else walk_way
                with m.If(walk_mask == 0):
                    # the next LUN's aborted erase planes
                    m.d.sync += [walk_mask.eq(inf_erase[li] | inf_prog[li]),
                                 walk_pass.eq(inf_prog[li] != 0), inf_erase[li].eq(0),
                                 inf_prog[li].eq(0), walk_plane.eq(0), idx.eq(li)]
                    with m.If(inf_prog_q[li]):
                        m.d.comb += stat_inc[3].eq(1)       # the queued cache page
                    m.d.sync += inf_prog_q[li].eq(0)
                    with m.If((inf_erase[li] | inf_prog[li]) == 0):
                        with m.If(walk_lun == L - 1):
                            m.next = "IDLE"
                        with m.Else():
                            m.d.sync += walk_lun.eq(walk_lun + 1)
                    with m.Else():
                        m.d.sync += p_lun.eq(walk_lun)
                with plane_walk(inf_block[idx][walk_plane], "RESET_ERASE_WR", first=False):
                    m.d.sync += walk_mask.eq(0)
                    with m.If(walk_lun == L - 1):
                        m.next = "IDLE"
                    with m.Else():
                        m.d.sync += walk_lun.eq(walk_lun + 1)

            # walk_pass: 1 an aborted program (its page stays programmed), 0 an erase
            with m.State("RESET_ERASE_WR"):
                with m.If(walk_pass):
                    m.d.comb += stat_inc[3].eq(1)
                with m.Else():
                    m.d.comb += [tb_wr.addr.eq(tb_index(walk_way, p_lun,
                                                        inf_block[idx][walk_plane])),
                                 tb_wr.data.eq(tb_rd.data), wr_entry.erased.eq(0),
                                 tb_wr.en.eq(1), stat_inc[4].eq(1)]
                m.d.sync += walk_plane.eq(walk_plane + 1)
                m.next = "RESET_ERASE"

            # ---- 80h: the row is known; may its data go to DRAM? ----
            with m.State("PROG_OPEN"):
                e = tb_entry
                _, _, pg, _ = unpack(p_row)
                allowed = (self.wp_n & ~e.fbad & ~e.bad & e.erased & (e.next_page == pg))
                with m.If(allowed):
                    m.d.comb += [wq_push.eq(1), wq_in.fill.eq(1),
                                 wq_in.addr.eq(page_addr(walk_way, p_row))]
                    m.d.sync += p_ok.eq(1)
                m.next = "IDLE"

            # ---- program confirm: 10h (the group) or 11h (queue a plane) ----
            confirm_lun = lun_index(walk_way, p_lun) if L > 1 else walk_way
            with m.State("PROG_CONFIRM"):
                li = confirm_lun
                lun_c, blk_c, page_c, ok_c = unpack(p_row)
                pl = plane_of(blk_c)
                m.d.sync += idx.eq(li)
                cache_ok = ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                                | (cache_mode[li] == CACHE_PROG))
                with group_checks(li, ok_c, cache_ok, p_range, MP_PROG, pl,
                                  mp_page[li] != page_c):
                    m.d.sync += [sel_lun[walk_way].eq(lun_c), mp_row[li][pl].eq(p_row),
                                 reg_row[li][pl].eq(p_row),
                                 reg_kind[li][pl].eq(Mux(p_ok, REG_DATA, REG_FF))]
                    with m.If(walk_conf == 0x11):
                        queue_plane(li, MP_PROG, pl, page_c)
                    with m.Else():
                        m.d.sync += [walk_mask.eq(mp_mask[li] | (1 << pl)), walk_plane.eq(0),
                                     walk_pass.eq(0), walk_fail.eq(0), walk_ruled.eq(0),
                                     walk_page.eq(page_c), mp_mask[li].eq(0),
                                     mp_kind[li].eq(MP_NONE), inf_prog[li].eq(0),
                                     inf_erase[li].eq(0),
                                     inf_prog_q[li].eq((inf_prog[li] != 0)
                                                       & ~ready(ardy_dl[li]))]
                        m.next = "PROG_WALK"

            # pass 0 checks every plane (a strict refusal leaves no trace), pass 1 writes
            with m.State("PROG_WALK"):
                li = idx
                with plane_walk(unpack(mp_row[li][walk_plane])[1], "PROG_WALK_CHK"):
                    with m.If(walk_pass == 0):
                        with m.If(walk_ruled & self.cfg_strict):
                            m.d.sync += [rule_count.eq(rule_count + 1),
                                         self.rule_code.eq(walk_rule)]
                            m.next = "IDLE"
                        with m.Else():
                            m.d.sync += [walk_pass.eq(1), walk_plane.eq(0)]
                    with m.Else():
                        with m.If(walk_ruled):
                            m.d.sync += [rule_count.eq(rule_count + 1),
                                         self.rule_code.eq(walk_rule)]
                        cycles = page_cycles(t.t_prog_ns, t.t_prog_lower_ns,
                                             t.t_prog_upper_ns, walk_page)
                        start = Mux(ready(ardy_dl[li]), walk_stamp, ardy_dl[li])
                        end = start + cycles
                        # 15h: the cache register is free tCBSY after the array takes the
                        # page; FAILC carries the previous FAIL along a cache program
                        schedule_fail(li, end, walk_fail,
                                      (walk_conf == 0x15) | (cache_mode[li] == CACHE_PROG))
                        m.d.sync += lrr_valid[li].eq(0)
                        with m.If(walk_conf == 0x15):
                            cb = start + self._cyc(t.t_cbsy_ns)
                            m.d.sync += [rdy_dl[li].eq(cb),
                                         ardy_dl[li].eq(Mux(cb > end, cb, end)),
                                         cache_mode[li].eq(CACHE_PROG)]
                        with m.Else():
                            m.d.sync += [rdy_dl[li].eq(end), ardy_dl[li].eq(end),
                                         cache_mode[li].eq(CACHE_NONE)]
                        m.next = "IDLE"

            with m.State("PROG_WALK_CHK"):
                li = idx
                e = tb_entry
                _, blk, pg, _ = unpack(mp_row[li][walk_plane])
                reason = ~self.wp_n | e.fbad | e.bad
                rule = Signal(4)
                ruled = Signal()
                with m.If(~reason):
                    with m.If(~e.erased):
                        m.d.comb += [ruled.eq(1), rule.eq(_R["erase-before-program"])]
                    with m.Elif(pg < e.next_page):
                        m.d.comb += [ruled.eq(1), rule.eq(_R["page-reprogram"])]
                    with m.Elif(pg > e.next_page):
                        m.d.comb += [ruled.eq(1), rule.eq(_R["page-order"])]
                with m.If(walk_pass == 0):
                    with m.If(ruled & ~walk_ruled):
                        m.d.sync += [walk_ruled.eq(1), walk_rule.eq(rule)]
                with m.Else():
                    with m.If(reason | ruled):
                        m.d.sync += walk_fail.eq(1)
                        m.d.comb += stat_inc[3].eq(1)
                        m.d.sync += reg_kind[li][walk_plane].eq(REG_FF)
                    with m.Else():
                        m.d.comb += [tb_wr.addr.eq(tb_index(walk_way, p_lun, blk)),
                                     tb_wr.data.eq(tb_rd.data), wr_entry.next_page.eq(pg + 1),
                                     tb_wr.en.eq(1), stat_inc[1].eq(1)]
                        m.d.sync += [inf_prog[li].bit_select(walk_plane, 1).eq(1),
                                     inf_block[li][walk_plane].eq(blk)]
                m.d.sync += walk_plane.eq(walk_plane + 1)
                m.next = "PROG_WALK"

            # ---- erase confirm: D0h (the group) or D1h (queue a plane) ----
            with m.State("ERASE_CONFIRM"):
                lun_c, blk_c, _, ok_c = unpack(c_row)
                li = lun_index(walk_way, lun_c) if L > 1 else walk_way
                pl = plane_of(blk_c)
                m.d.sync += [idx.eq(li), p_lun.eq(lun_c)]
                with group_checks(li, ok_c, ready(rdy_dl[li]) & ready(ardy_dl[li]), None,
                                  MP_ERASE, pl, None):
                    m.d.sync += [sel_lun[walk_way].eq(lun_c), mp_row[li][pl].eq(c_row)]
                    with m.If(walk_conf == 0xD1):
                        queue_plane(li, MP_ERASE, pl, Const(0))
                    with m.Else():
                        m.d.sync += [walk_mask.eq(mp_mask[li] | (1 << pl)), walk_plane.eq(0),
                                     walk_fail.eq(0), mp_mask[li].eq(0),
                                     mp_kind[li].eq(MP_NONE), inf_erase[li].eq(0),
                                     inf_prog[li].eq(0)]
                        m.next = "ERASE_WALK"

            with m.State("ERASE_WALK"):
                li = idx
                with plane_walk(unpack(mp_row[li][walk_plane])[1], "ERASE_WALK_WR"):
                    end = after(t.t_bers_ns, walk_stamp)
                    m.d.sync += [rdy_dl[li].eq(end), ardy_dl[li].eq(end),
                                 cache_mode[li].eq(CACHE_NONE), lrr_valid[li].eq(0)]
                    schedule_fail(li, end, walk_fail, 0)
                    m.next = "IDLE"

            with m.State("ERASE_WALK_WR"):
                li = idx
                e = tb_entry
                _, blk, _, _ = unpack(mp_row[li][walk_plane])
                pe = (e.pe + 1)[:PE_BITS]
                worn = (self.cfg_pe_limit != 0) & (pe > self.cfg_pe_limit)
                m.d.comb += [tb_wr.addr.eq(tb_index(walk_way, p_lun, blk)),
                             tb_wr.data.eq(tb_rd.data)]
                with m.If(~self.wp_n | e.fbad | e.bad):
                    m.d.sync += walk_fail.eq(1)
                    m.d.comb += stat_inc[4].eq(1)
                with m.Elif(worn):
                    m.d.sync += walk_fail.eq(1)
                    m.d.comb += [stat_inc[4].eq(1), stat_inc[2].eq(1), tb_wr.en.eq(1),
                                 wr_entry.pe.eq(pe), wr_entry.bad.eq(1), wr_entry.erased.eq(0)]
                with m.Else():
                    m.d.comb += [stat_inc[2].eq(1), tb_wr.en.eq(1), wr_entry.pe.eq(pe),
                                 wr_entry.next_page.eq(0), wr_entry.erased.eq(1)]
                    m.d.sync += [inf_erase[li].bit_select(walk_plane, 1).eq(1),
                                 inf_block[li][walk_plane].eq(blk)]
                m.d.sync += walk_plane.eq(walk_plane + 1)
                m.next = "ERASE_WALK"

            # ---- read confirm: 30h (the group) or 32h (queue a plane) ----
            with m.State("READ_CONFIRM"):
                lun_c, blk_c, page_c, ok_c = unpack(c_row)
                li = lun_index(walk_way, lun_c) if L > 1 else walk_way
                pl = plane_of(blk_c)
                m.d.sync += [idx.eq(li), p_lun.eq(lun_c)]
                with group_checks(li, ok_c, ready(rdy_dl[li]) & ready(ardy_dl[li]),
                                  c_col >= self.reg_bytes, MP_READ, pl, mp_page[li] != page_c):
                    m.d.sync += [sel_lun[walk_way].eq(lun_c), out_status[walk_way].eq(0),
                                 mp_row[li][pl].eq(c_row)]
                    with m.If(walk_conf == 0x32):
                        queue_plane(li, MP_READ, pl, page_c)
                    with m.Else():
                        m.d.sync += [walk_mask.eq(mp_mask[li] | (1 << pl)), walk_plane.eq(0),
                                     walk_page.eq(page_c), mp_mask[li].eq(0),
                                     mp_kind[li].eq(MP_NONE), out_plane[li].eq(pl),
                                     column[li].eq(c_col), inf_prog[li].eq(0),
                                     inf_erase[li].eq(0), lrr_valid[li].eq(1),
                                     lrr_row[li].eq(c_row), cache_mode[li].eq(CACHE_NONE),
                                     dreg_plane[li].eq(pl), dreg_row[li].eq(c_row)]
                        cycles = page_cycles(t.t_r_ns, t.t_r_lower_ns, t.t_r_upper_ns, page_c)
                        end = walk_stamp + cycles
                        m.d.sync += [rdy_dl[li].eq(end),
                                     ardy_dl[li].eq(Mux(ardy_dl[li] > end, ardy_dl[li], end))]
                        m.next = "READ_WALK"

            with m.State("READ_WALK"):
                li = idx
                with plane_walk(unpack(mp_row[li][walk_plane])[1], "READ_WALK_KIND"):
                    m.next = "RESTART"

            with m.State("READ_WALK_KIND"):
                li = idx
                e = tb_entry
                row = mp_row[li][walk_plane]
                _, _, pg, _ = unpack(row)
                edge_page = (pg == 0) | (pg == g.pages_per_block - 1)
                kind = Mux(e.fbad, Mux(edge_page, REG_MARK, REG_FF),
                           Mux(pg < e.next_page, REG_DATA, REG_FF))
                m.d.sync += [reg_row[li][walk_plane].eq(row), reg_kind[li][walk_plane].eq(kind),
                             walk_plane.eq(walk_plane + 1)]
                with m.If(walk_plane == dreg_plane[li]):
                    m.d.sync += dreg_kind[li].eq(kind)
                m.d.comb += stat_inc[0].eq(1)
                m.next = "READ_WALK"

            # ---- 05h-E0h / 06h-E0h: a new column (and LUN, plane) for data output ----
            with m.State("CHCOL"):
                lw = walk_way
                li = lun_index(lw, sel_lun[lw]) if L > 1 else lw
                with m.If(~(reset_seen[lw] | ~self.cfg_require_reset)):
                    violate("reset-after-power-on")
                    m.next = "IDLE"
                with m.Elif(~(ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                                   | (cache_mode[li] == CACHE_READ)))):
                    violate("busy")
                    m.next = "IDLE"
                with m.Elif(walk_col >= self.reg_bytes):
                    violate("address-range")
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [column[li].eq(walk_col), out_status[lw].eq(0), idx.eq(li)]
                    m.next = "RESTART"

            with m.State("CHCOL_ENH"):
                lw = walk_way
                lun_c, blk_c, _, ok_c = unpack(c_row)
                li = lun_index(lw, lun_c) if L > 1 else lw
                with m.If(~(reset_seen[lw] | ~self.cfg_require_reset)):
                    violate("reset-after-power-on")
                    m.next = "IDLE"
                with m.Elif(~ok_c):
                    violate("address-range")
                    m.next = "IDLE"
                with m.Elif(~(ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                                   | (cache_mode[li] == CACHE_READ)))):
                    violate("busy")
                    m.next = "IDLE"
                with m.Elif(walk_col >= self.reg_bytes):
                    violate("address-range")
                    m.next = "IDLE"
                with m.Else():
                    m.d.sync += [column[li].eq(walk_col), out_status[lw].eq(0), idx.eq(li),
                                 sel_lun[lw].eq(lun_c), out_plane[li].eq(plane_of(blk_c))]
                    m.next = "RESTART"

            # ---- 31h (sequential; walk_pass=1: 00h-row-31h random) and 3Fh ----
            with m.State("CACHE_READ"):
                cw = walk_way
                li = lun_index(cw, sel_lun[cw]) if L > 1 else cw
                r_lun, _, _, r_ok = unpack(c_row)
                _, s_blk, s_page, _ = unpack(lrr_row[li])
                m.d.sync += [idx.eq(li), p_lun.eq(sel_lun[cw])]
                ok_ready = ready(rdy_dl[li]) & (ready(ardy_dl[li])
                                                | (cache_mode[li] == CACHE_READ))
                with m.If(~(reset_seen[cw] | ~self.cfg_require_reset)):
                    violate("reset-after-power-on")
                    m.next = "IDLE"
                with m.Elif(walk_conf == 0x3F):
                    with m.If(cache_mode[li] != CACHE_READ):
                        violate("command-sequence")
                        m.next = "IDLE"
                    with m.Elif(~ok_ready):
                        violate("busy")
                        m.next = "IDLE"
                    with m.Else():
                        # the array's last page moves to the cache register; no new read
                        start = Mux(ready(ardy_dl[li]), walk_stamp, ardy_dl[li])
                        end = start + self._cyc(t.t_rcbsy_ns)
                        dp = dreg_plane[li]
                        m.d.sync += [reg_row[li][dp].eq(dreg_row[li]),
                                     reg_kind[li][dp].eq(dreg_kind[li]),
                                     out_plane[li].eq(dp), column[li].eq(0),
                                     rdy_dl[li].eq(end), ardy_dl[li].eq(end),
                                     cache_mode[li].eq(CACHE_NONE), lrr_valid[li].eq(0),
                                     out_status[cw].eq(0)]
                        m.next = "RESTART"
                with m.Elif(walk_pass & ~r_ok):
                    violate("address-range")
                    m.next = "IDLE"
                with m.Elif(walk_pass & (r_lun != sel_lun[cw])):
                    violate("command-sequence")
                    m.next = "IDLE"
                with m.Elif(~lrr_valid[li]):
                    violate("command-sequence")
                    m.next = "IDLE"
                with m.Elif(~ok_ready):
                    violate("busy")
                    m.next = "IDLE"
                with m.Elif(~walk_pass & (s_page + 1 >= g.pages_per_block)):
                    violate("address-range")
                    m.next = "IDLE"
                with m.Else():
                    nrow_ = Mux(walk_pass, c_row, lrr_row[li] + 1)
                    _, n_blk, _, _ = unpack(nrow_)
                    m.d.sync += [c_row.eq(nrow_)]
                    m.d.comb += tb_rd.addr.eq(tb_index(cw, sel_lun[cw], n_blk))
                    m.next = "CACHE_READ_KIND"

            with m.State("CACHE_READ_KIND"):
                li = idx
                cw = walk_way
                e = tb_entry
                _, n_blk, n_page, _ = unpack(c_row)
                edge_page = (n_page == 0) | (n_page == g.pages_per_block - 1)
                kind = Mux(e.fbad, Mux(edge_page, REG_MARK, REG_FF),
                           Mux(n_page < e.next_page, REG_DATA, REG_FF))
                start = Mux(ready(ardy_dl[li]), walk_stamp, ardy_dl[li])
                t_r = page_cycles(t.t_r_ns, t.t_r_lower_ns, t.t_r_upper_ns, n_page)
                rb = start + self._cyc(t.t_rcbsy_ns)
                ab = start + t_r
                dp = dreg_plane[li]
                # the page the array finished goes to the cache register, the new one to the
                # data register (pointers: applying it now is what RDY=0 until rb shows)
                m.d.sync += [reg_row[li][dp].eq(dreg_row[li]), reg_kind[li][dp].eq(dreg_kind[li]),
                             out_plane[li].eq(dp), column[li].eq(0),
                             dreg_row[li].eq(c_row), dreg_kind[li].eq(kind),
                             dreg_plane[li].eq(plane_of(n_blk)),
                             rdy_dl[li].eq(rb), ardy_dl[li].eq(Mux(ab > rb, ab, rb)),
                             cache_mode[li].eq(CACHE_READ), lrr_valid[li].eq(1),
                             lrr_row[li].eq(c_row), out_status[cw].eq(0)]
                m.d.comb += stat_inc[0].eq(1)
                m.next = "RESTART"

            # the prefetch follows the selected register from its column
            with m.State("RESTART"):
                li = idx
                restart_at(walk_way, li, out_plane[li], column[li])
                m.next = "IDLE"

        return m
