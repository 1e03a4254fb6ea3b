# SPDX-License-Identifier: BSD-2-Clause
"""ONFI channel controller, one 8-bit channel (Verilog module `onfi_channel`).

Turns tagged flash operations (`s_op`) into ONFI command sequences on an `OnfiSdrEngine` it
instantiates: a command sequencer in RTL. Program data and feature parameters come in on
`s_wdata`, read bytes go out on `m_rdata` (with `last` on the op's final byte), and every op
ends with one completion on `m_cpl` {tag, status, fail, error}, after its data. The engine's
pins and timing registers pass through to the top.

Ops run one at a time. The whole-operation ops (READ_PAGE, PROGRAM_PAGE, ERASE_BLOCK) hold the
channel while their die is busy; the split-phase ops (READ_ARRAY/READ_DATA, PROGRAM_LOAD,
ERASE_START, STATUS_FINISH) release it, so that a die scheduler (nand_die_scheduler) can
interleave ways: start a die, use the bus for others while it is busy, finish it when its
R/B# (`rb_ready`) is high. An op with `slc` set that starts an array operation (READ_PAGE,
READ_ARRAY, PROGRAM_PAGE, PROGRAM_LOAD, PROGRAM_CACHE, ERASE_BLOCK, ERASE_START) sends the
pseudo-SLC prefix DAh as a command cycle right before its first command (00h, 80h, 60h), so
that one sequence runs in SLC mode; other ops ignore `slc`. With several LUNs per target
(`n_luns` > 1) R/B# is low while any LUN of the target is busy, so the waits of one LUN (before
READ_DATA and STATUS_FINISH, after a multi-plane confirm) poll that LUN's READ STATUS ENHANCED
(78h) instead. See rtl/nand/README.md ("onfi_channel").
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out

from .nand_common import BUSY_NOW_BITS, BUSY_TIMEOUT_BITS, bad_int, busy_timer
from .onfi_nvddr2_engine import OnfiNvddr2Engine, nvddr2_timing_layout
from .onfi_phy_if import OnfiPhySignature, connect_sdr_engine
from .onfi_sdr_engine import CycleKind, OnfiSdrEngine, ReadData, channel_members

__all__ = ["OnfiChannel", "bus_members", "ChannelOp", "Completion", "op_layout", "ROW_BITS",
           "COLUMN_BITS", "FEATURE_BYTES", "SLC_PREFIX"]

ROW_BITS = 24           # page | block | LUN, as the part packs them
COLUMN_BITS = 16
FEATURE_BYTES = 4       # SET/GET FEATURES move P1..P4
SLC_PREFIX = 0xDA       # pseudo-SLC: the next array operation (00h, 80h, 60h) in SLC mode


class ChannelOp(enum.Enum, shape=5):
    """Flash operations of `s_op` (values 18..31 are refused with `error`)."""
    RESET = 0           # FFh, wait R/B#
    READ_ID = 1         # 90h, addr column[7:0], `length` bytes out
    READ_PARAM = 2      # ECh, addr 00h, wait R/B#, `length` bytes out
    READ_PAGE = 3       # 00h, column, row, 30h, wait R/B#, `length` bytes out
    PROGRAM_PAGE = 4    # 80h, column, row, `length` bytes in, 10h, wait R/B#, 70h, status
    ERASE_BLOCK = 5     # 60h, row, D0h, wait R/B#, 70h, status
    SET_FEATURES = 6    # EFh, addr column[7:0], 4 bytes in, wait R/B#
    GET_FEATURES = 7    # EEh, addr column[7:0], wait R/B#, 4 bytes out
    READ_STATUS = 8     # 70h, 1 byte out
    # Split phases: the bus is free while the die works. `multi` marks a plane that is not the
    # last of a multi-plane group: its confirm is 32h/11h/D1h and the op waits out tDBSY.
    READ_ARRAY = 9      # 00h, column, row, 30h (multi: 32h, wait R/B#)
    READ_DATA = 10      # wait R/B#, 06h, column, row, E0h, tCCS, `length` bytes out
    PROGRAM_LOAD = 11   # 80h, column, row, `length` bytes in, 10h (multi: 11h, wait R/B#)
    ERASE_START = 12    # 60h, row, D0h (multi: D1h, wait R/B#)
    STATUS_FINISH = 13  # wait R/B#, 70h, status (kept)
    # Cache operations and the remaining reads of the command set
    PROGRAM_CACHE = 14  # 80h, column, row, `length` bytes in, 15h, wait R/B# (tCBSY), 70h
    READ_CACHE = 15     # wait R/B#, 31h (multi: 3Fh, the last), wait R/B# (tRCBSY), bytes out
    READ_STATUS_ENHANCED = 16   # 78h, row, 1 byte out (status of the row's LUN)
    CHANGE_READ_COLUMN = 17     # 05h, column, E0h, tCCS, `length` bytes out


def op_layout(max_len=18432):
    """The `s_op` payload. A function, not a data.Struct class, because the width of `length`
    follows the max_len parameter."""
    return data.StructLayout({
        "tag": unsigned(8),
        "op": ChannelOp,
        "way": unsigned(3),
        "row": unsigned(ROW_BITS),
        "column": unsigned(COLUMN_BITS),
        "length": unsigned(max_len.bit_length()),
        "multi": unsigned(1),       # READ_ARRAY, PROGRAM_LOAD, ERASE_START: more planes follow
        "slc": unsigned(1),         # pseudo-SLC: DAh before the first command of READ_PAGE,
        #                             READ_ARRAY, PROGRAM_PAGE, PROGRAM_LOAD, PROGRAM_CACHE,
        #                             ERASE_BLOCK, ERASE_START; ignored by the other ops
    })


class Completion(data.Struct):
    """One completion (the `m_cpl` payload), one per op, in op order."""
    tag: unsigned(8)
    status: unsigned(8)     # the 70h status byte of a program or erase; 0 for other ops
    fail: unsigned(1)       # status bit 0 (FAIL)
    error: unsigned(1)      # op refused before the bus: unknown op, way >= n_ways,
    #                         length > max_len (its s_wdata bytes are consumed and dropped)
    timeout: unsigned(1)    # the die stayed busy past busy_timeout (hung): its R/B# wait or
    #                         78h poll was given up (fail set too); what followed the wait
    #                         ran on a busy die


def bus_members(n_ways, timer_width, with_nvddr2=False):
    """The channel's configuration and bus members, as every core above it (die scheduler,
    back end) passes them through: SDR only, the engine's pins (`channel_members`); with
    NV-DDR2, the SDR and NV-DDR2 timing, the engine choice `nvddr2` and the PHY interface."""
    if not with_nvddr2:
        return channel_members(n_ways, timer_width)
    return {
        "timing": In(channel_members(n_ways, timer_width)["timing"].shape),
        "nvddr2_timing": In(nvddr2_timing_layout(timer_width)),
        "nvddr2": In(1),
        "write_protect": In(1),
        "busy_timeout": In(BUSY_TIMEOUT_BITS),
        "busy_now": In(BUSY_NOW_BITS),
        "phy": Out(OnfiPhySignature(n_ways)),
    }


class OnfiChannel(wiring.Component):
    """ONFI channel controller: op sequencer on an asynchronous SDR bus-cycle engine.

    Parameters
    ----------
    n_ways : int, 1..8 (default 1)
        Chip enables (and R/B# inputs) on this channel.
    row_cycles : int, 2..4 (default 3)
        Row address cycles (parameter page byte 101 bits 3:0). `row` has 24 bits; a fourth
        cycle sends 00h.
    col_cycles : int, 1..2 (default 2)
        Column address cycles (parameter page byte 101 bits 7:4).
    max_len : int, 1..65536 (default 18432, 16 KiB + 2 KiB)
        Largest `length` (page + spare bytes); sets the width of the length field.
    timer_width : int, 6..16 (default 8)
        Width of the engine's timing registers (see OnfiSdrEngine).
    with_nvddr2 : bool (default False)
        Also hold an OnfiNvddr2Engine; the run-time input `nvddr2` picks the engine, and the
        pins become the engine side of a PHY (`phy`, OnfiPhySignature) for onfi_phy_sim or
        onfi_phy_xilinx7. Without it the SDR engine's pins are the ports (no PHY needed).
    n_luns : int, 1..4 (default 1)
        LUNs per target (the flash op's 2-bit lun field). Above 1, READ_DATA, STATUS_FINISH
        and the multi-plane confirms wait for their row's LUN by polling 78h (RDY, bit 6)
        instead of waiting for R/B#, which the target's LUNs share; STATUS_FINISH's status is
        the last poll's byte (that LUN's FAIL). The other ops still wait for R/B#.

    Ports
    -----
    s_op : stream of op_layout(max_len), in
    s_wdata : stream of unsigned(8), in: program data, then feature parameters, in op order
    m_rdata : stream of ReadData, out: read bytes, `last` on the final byte of an op
    m_cpl : stream of Completion, out
    timing, write_protect, dq_o, dq_oe, dq_i, ce_n, cle, ale, we_n, re_n, wp_n, rb_n :
        the engine's ports (rtl/nand/onfi_sdr_engine.py), passed through
    with with_nvddr2: timing (SDR), nvddr2_timing, nvddr2 (1: NV-DDR2 engine), write_protect
        and `phy` instead of the pins; change `nvddr2` only while the channel is idle
        (after the SET FEATURES that switched the dies, before the next op)
    """

    def __init__(self, n_ways=1, row_cycles=3, col_cycles=2, max_len=18432, timer_width=8,
                 with_nvddr2=False, n_luns=1):
        error = (bad_int("n_ways", n_ways, 1, 8) or bad_int("row_cycles", row_cycles, 2, 4) or
                 bad_int("col_cycles", col_cycles, 1, 2) or
                 bad_int("max_len", max_len, 1, 1 << 16) or
                 bad_int("timer_width", timer_width, 6, 16) or
                 bad_int("n_luns", n_luns, 1, 4))
        if not error and not isinstance(with_nvddr2, bool):
            error = f"with_nvddr2 must be a bool, got {with_nvddr2!r}"
        if error:
            self._MustUse__silence = True   # no "created but never used" warning on top
            raise ValueError(f"OnfiChannel: {error}")
        self.n_ways = n_ways
        self.row_cycles = row_cycles
        self.col_cycles = col_cycles
        self.max_len = max_len
        self.timer_width = timer_width
        self.with_nvddr2 = with_nvddr2
        self.n_luns = n_luns
        bus = bus_members(n_ways, timer_width, with_nvddr2)
        super().__init__({
            # ops, data and completions
            "s_op": In(stream.Signature(op_layout(max_len))),
            "s_wdata": In(stream.Signature(unsigned(8))),
            "m_rdata": Out(stream.Signature(ReadData)),
            "m_cpl": Out(stream.Signature(Completion)),
            # configuration and ONFI pins (or the PHY interface), passed through to the engine
            **bus,
            # R/B# after the engine's synchroniser, for a scheduler
            "rb_ready": Out(n_ways, init=(1 << n_ways) - 1),
        })

    def elaborate(self, platform):
        m = Module()
        rb_timed_out = Signal()         # the engine gave up a WAIT_RB (busy_timeout)
        if self.with_nvddr2:
            eng = self._two_engines(m, rb_timed_out)
        else:
            eng = m.submodules.engine = OnfiSdrEngine(self.n_ways, self.timer_width)
            m.d.comb += [
                eng.timing.eq(self.timing), eng.write_protect.eq(self.write_protect),
                eng.busy_timeout.eq(self.busy_timeout), eng.busy_now.eq(self.busy_now),
                rb_timed_out.eq(eng.rb_timed_out),
                eng.dq_i.eq(self.dq_i), eng.rb_n.eq(self.rb_n),
                self.dq_o.eq(eng.dq_o), self.dq_oe.eq(eng.dq_oe), self.ce_n.eq(eng.ce_n),
                self.cle.eq(eng.cle), self.ale.eq(eng.ale), self.we_n.eq(eng.we_n),
                self.re_n.eq(eng.re_n), self.wp_n.eq(eng.wp_n), self.rb_ready.eq(eng.rb_ready),
            ]

        op = Signal(op_layout(self.max_len))      # the op being run
        error = Signal()                          # ... was refused
        timed_out = Signal()                      # ... gave up waiting for a hung die
        status = Signal(8)                        # its 70h status byte
        idx = Signal(max(op.length.shape().width, 2) + 1)   # byte / address-cycle counter
        kind = op.op

        # Per-op constants of the sequence
        first_cmd = Signal(8)
        confirm = Signal(8)
        n_in = Signal.like(idx)         # s_wdata bytes the op takes
        n_out = Signal.like(idx)        # bytes it reads
        with m.Switch(kind):
            with m.Case(ChannelOp.RESET):
                m.d.comb += first_cmd.eq(0xFF)
            with m.Case(ChannelOp.READ_ID):
                m.d.comb += [first_cmd.eq(0x90), n_out.eq(op.length)]
            with m.Case(ChannelOp.READ_PARAM):
                m.d.comb += [first_cmd.eq(0xEC), n_out.eq(op.length)]
            with m.Case(ChannelOp.READ_PAGE):
                m.d.comb += [first_cmd.eq(0x00), confirm.eq(0x30), n_out.eq(op.length)]
            with m.Case(ChannelOp.PROGRAM_PAGE):
                m.d.comb += [first_cmd.eq(0x80), confirm.eq(0x10), n_in.eq(op.length)]
            with m.Case(ChannelOp.ERASE_BLOCK):
                m.d.comb += [first_cmd.eq(0x60), confirm.eq(0xD0)]
            with m.Case(ChannelOp.SET_FEATURES):
                m.d.comb += [first_cmd.eq(0xEF), n_in.eq(FEATURE_BYTES)]
            with m.Case(ChannelOp.GET_FEATURES):
                m.d.comb += [first_cmd.eq(0xEE), n_out.eq(FEATURE_BYTES)]
            with m.Case(ChannelOp.READ_STATUS):
                m.d.comb += [first_cmd.eq(0x70), n_out.eq(1)]
            with m.Case(ChannelOp.READ_ARRAY):
                m.d.comb += [first_cmd.eq(0x00), confirm.eq(Mux(op.multi, 0x32, 0x30))]
            with m.Case(ChannelOp.READ_DATA):
                m.d.comb += [first_cmd.eq(0x06), confirm.eq(0xE0), n_out.eq(op.length)]
            with m.Case(ChannelOp.PROGRAM_LOAD):
                m.d.comb += [first_cmd.eq(0x80), confirm.eq(Mux(op.multi, 0x11, 0x10)),
                             n_in.eq(op.length)]
            with m.Case(ChannelOp.ERASE_START):
                m.d.comb += [first_cmd.eq(0x60), confirm.eq(Mux(op.multi, 0xD1, 0xD0))]
            with m.Case(ChannelOp.STATUS_FINISH):
                m.d.comb += first_cmd.eq(0x70)
            with m.Case(ChannelOp.PROGRAM_CACHE):
                m.d.comb += [first_cmd.eq(0x80), confirm.eq(0x15), n_in.eq(op.length)]
            with m.Case(ChannelOp.READ_CACHE):
                m.d.comb += [first_cmd.eq(Mux(op.multi, 0x3F, 0x31)), n_out.eq(op.length)]
            with m.Case(ChannelOp.READ_STATUS_ENHANCED):
                m.d.comb += [first_cmd.eq(0x78), n_out.eq(1)]
            with m.Case(ChannelOp.CHANGE_READ_COLUMN):
                m.d.comb += [first_cmd.eq(0x05), confirm.eq(0xE0), n_out.eq(op.length)]
        # Program and erase end with a 70h read the channel keeps (the completion's status);
        # every other byte read goes out on m_rdata.
        keep_status = ((kind == ChannelOp.PROGRAM_PAGE) | (kind == ChannelOp.ERASE_BLOCK) |
                       (kind == ChannelOp.STATUS_FINISH) | (kind == ChannelOp.PROGRAM_CACHE))
        programs = ((kind == ChannelOp.PROGRAM_PAGE) | (kind == ChannelOp.PROGRAM_LOAD) |
                    (kind == ChannelOp.PROGRAM_CACHE))
        # ops that wait for a ready die before their first command
        waits_first = ((kind == ChannelOp.READ_DATA) | (kind == ChannelOp.STATUS_FINISH) |
                       (kind == ChannelOp.READ_CACHE))
        after_cmd = Signal()            # CMD1 has run (tells the two WAIT_RBs apart)
        # NV-DDR2 moves the bytes of READ ID, READ PARAMETER PAGE, GET and SET FEATURES twice
        # (one per DQS edge): each parameter goes out twice, and of each pair read the second
        # byte (which carries the request's `last`) is kept.
        nvddr2 = self.nvddr2 if self.with_nvddr2 else Const(0)
        doubled = nvddr2 & ((kind == ChannelOp.READ_ID) | (kind == ChannelOp.READ_PARAM) |
                            (kind == ChannelOp.GET_FEATURES) |
                            (kind == ChannelOp.SET_FEATURES))
        second = Signal()               # DIN: the byte's second copy; read: the pair's second
        if self.with_nvddr2:
            n_dout = Signal.like(idx)       # DOUT requests: doubled in NV-DDR2 where due
            m.d.comb += n_dout.eq(Mux(doubled, n_out << 1, n_out))
        else:
            n_dout = n_out
        # A start phase ends at its confirm (CE# rises), unless a multi-plane confirm's tDBSY
        # must pass first.
        start_phase = ((kind == ChannelOp.READ_ARRAY) | (kind == ChannelOp.PROGRAM_LOAD) |
                       (kind == ChannelOp.ERASE_START))
        ends_at_confirm = start_phase & ~op.multi
        # Pseudo-SLC: DAh goes before the first command of these ops when `slc` is set.
        SLC_OPS = (ChannelOp.READ_PAGE, ChannelOp.READ_ARRAY, ChannelOp.PROGRAM_PAGE,
                   ChannelOp.PROGRAM_LOAD, ChannelOp.PROGRAM_CACHE, ChannelOp.ERASE_BLOCK,
                   ChannelOp.ERASE_START)

        # Read bytes: from the engine's one-entry register straight to m_rdata, or to `status`.
        rd_second = Signal()            # the next read byte is a pair's second (doubled)
        drop = doubled & ~rd_second
        # n_luns > 1: a 78h poll of the op's LUN is under way; its byte goes to `poll_byte`
        polling = Signal()
        poll_byte = Signal(8)
        kept = keep_status | polling
        m.d.comb += [
            self.m_rdata.payload.eq(eng.m_rdata.payload),
            self.m_rdata.valid.eq(eng.m_rdata.valid & ~kept & ~drop),
            eng.m_rdata.ready.eq(self.m_rdata.ready | kept | drop),
        ]
        with m.If(eng.m_rdata.valid & eng.m_rdata.ready & doubled):
            m.d.sync += rd_second.eq(~rd_second)
        # DOUT requests whose byte has not come back yet: the NV-DDR2 engine takes requests
        # ahead of its DQS-captured data, so "engine ready" does not mean "all bytes back".
        pending = Signal(len(idx) + 1)
        dout_taken = eng.s_cycle.valid & eng.s_cycle.ready & \
            (eng.s_cycle.payload.kind == CycleKind.DOUT)
        byte_back = eng.m_rdata.valid & eng.m_rdata.ready
        m.d.sync += pending.eq(pending + dout_taken - byte_back)
        with m.If(eng.m_rdata.valid & keep_status & ~polling):
            m.d.sync += status.eq(eng.m_rdata.payload.data)

        # Engine requests: one per state, offered until the engine takes it.
        req = eng.s_cycle.payload
        taken = Signal()
        m.d.comb += [req.way.eq(op.way), taken.eq(eng.s_cycle.valid & eng.s_cycle.ready)]

        def emit(cycle_kind, byte=0, last=0):
            m.d.comb += [eng.s_cycle.valid.eq(1), req.kind.eq(cycle_kind), req.data.eq(byte),
                         req.last.eq(last)]

        row = Cat(op.row, Const(0, 32 - ROW_BITS))     # a fourth row cycle sends 00h

        with m.If(rb_timed_out):
            m.d.sync += timed_out.eq(1)
        in_poll = Signal()              # 78h polls of a busy LUN (n_luns > 1), timed as a wait
        poll_expired = busy_timer(m, self.busy_now, in_poll, self.busy_timeout, "poll")
        with m.FSM(name="seq") as seq:
            with m.State("IDLE"):
                m.d.comb += self.s_op.ready.eq(1)
                with m.If(self.s_op.valid):
                    p = self.s_op.payload
                    refuse = p.op.as_value() > ChannelOp.CHANGE_READ_COLUMN.value
                    # only the checks a field's width can fail (no constant comparisons)
                    if self.n_ways < 8:
                        refuse |= p.way >= self.n_ways
                    if self.max_len < (1 << len(p.length)) - 1:
                        refuse |= p.length > self.max_len
                    m.d.sync += [op.eq(p), status.eq(0), idx.eq(0), error.eq(refuse),
                                 timed_out.eq(0),
                                 after_cmd.eq(0), second.eq(0), rd_second.eq(0)]
                    lun_wait = (p.op == ChannelOp.READ_DATA) | (p.op == ChannelOp.STATUS_FINISH)
                    with m.If(refuse):
                        m.next = "DROP"
                    with m.Elif(lun_wait & (self.n_luns > 1)):
                        m.next = "POLL_CMD"     # this LUN must be ready first (78h)
                    with m.Elif(lun_wait | (p.op == ChannelOp.READ_CACHE)):
                        m.next = "WAIT_RB"      # the die must be ready first (and tRR)
                    with m.Elif(p.slc & p.op.as_value().matches(*SLC_OPS)):
                        m.next = "SLC"          # pseudo-SLC prefix first
                    with m.Else():
                        m.next = "CMD1"

            with m.State("DROP"):
                # a refused op still consumes its write data, so later ops stay aligned
                with m.If(idx == n_in):
                    m.next = "CPL"
                with m.Else():
                    m.d.comb += self.s_wdata.ready.eq(1)
                    with m.If(self.s_wdata.valid):
                        m.d.sync += idx.eq(idx + 1)

            with m.State("SLC"):
                # DAh: one command cycle (no address, data or busy) that makes the array
                # operation whose first command follows run in pseudo-SLC mode
                emit(CycleKind.CMD, SLC_PREFIX)
                with m.If(taken):
                    m.next = "CMD1"

            with m.State("CMD1"):
                emit(CycleKind.CMD, first_cmd)
                with m.If(taken):
                    m.d.sync += after_cmd.eq(1)
                    with m.Switch(kind):
                        with m.Case(ChannelOp.RESET):
                            m.next = "WAIT_RB"
                        with m.Case(ChannelOp.READ_PAGE, ChannelOp.PROGRAM_PAGE,
                                    ChannelOp.READ_ARRAY, ChannelOp.READ_DATA,
                                    ChannelOp.PROGRAM_LOAD, ChannelOp.PROGRAM_CACHE,
                                    ChannelOp.CHANGE_READ_COLUMN):
                            m.next = "ADDR_COL"
                        with m.Case(ChannelOp.ERASE_BLOCK, ChannelOp.ERASE_START,
                                    ChannelOp.READ_STATUS_ENHANCED):
                            m.next = "ADDR_ROW"
                        with m.Case(ChannelOp.READ_CACHE):
                            m.next = "WAIT_RB"
                        with m.Case(ChannelOp.READ_STATUS):
                            m.next = "DOUT"
                        with m.Case(ChannelOp.STATUS_FINISH):
                            m.next = "STATUS_DOUT"
                        with m.Default():       # READ_ID, READ_PARAM, SET/GET_FEATURES
                            m.next = "ADDR1"

            with m.State("ADDR1"):
                emit(CycleKind.ADDR, Mux(kind == ChannelOp.READ_PARAM, 0, op.column[:8]))
                with m.If(taken):
                    with m.Switch(kind):
                        with m.Case(ChannelOp.READ_ID):
                            m.next = "DOUT"
                        with m.Case(ChannelOp.SET_FEATURES):
                            m.next = "DIN"
                        with m.Default():       # READ_PARAM, GET_FEATURES
                            m.next = "WAIT_RB"

            with m.State("ADDR_COL"):
                emit(CycleKind.ADDR, op.column.word_select(idx[0], 8))
                with m.If(taken):
                    with m.If(idx == self.col_cycles - 1):
                        m.d.sync += idx.eq(0)
                        with m.If(kind == ChannelOp.CHANGE_READ_COLUMN):
                            m.next = "CMD2"
                        with m.Else():
                            m.next = "ADDR_ROW"
                    with m.Else():
                        m.d.sync += idx.eq(idx + 1)

            with m.State("ADDR_ROW"):
                emit(CycleKind.ADDR, row.word_select(idx[:2], 8))
                with m.If(taken):
                    with m.If(idx == self.row_cycles - 1):
                        m.d.sync += idx.eq(0)
                        with m.If(programs):
                            m.next = "DIN"
                        with m.Elif(kind == ChannelOp.READ_STATUS_ENHANCED):
                            m.next = "DOUT"
                        with m.Else():
                            m.next = "CMD2"
                    with m.Else():
                        m.d.sync += idx.eq(idx + 1)

            with m.State("DIN"):
                # s_wdata passes straight into the engine's request
                with m.If(idx == n_in):
                    with m.If(programs):
                        m.next = "CMD2"
                    with m.Else():
                        m.next = "WAIT_RB"
                with m.Else():
                    # a doubled byte is taken from s_wdata with its second copy
                    m.d.comb += [eng.s_cycle.valid.eq(self.s_wdata.valid),
                                 req.kind.eq(CycleKind.DIN), req.data.eq(self.s_wdata.payload),
                                 self.s_wdata.ready.eq(eng.s_cycle.ready &
                                                       (second | ~doubled))]
                    with m.If(taken):
                        with m.If(doubled & ~second):
                            m.d.sync += second.eq(1)
                        with m.Else():
                            m.d.sync += [second.eq(0), idx.eq(idx + 1)]

            with m.State("CMD2"):
                emit(CycleKind.CMD, confirm, last=ends_at_confirm)
                with m.If(taken):
                    with m.If(ends_at_confirm):
                        m.next = "FINISH"
                    with m.Elif(start_phase & (self.n_luns > 1)):
                        m.next = "POLL_CMD"     # tDBSY of a multi-plane confirm, this LUN
                    with m.Elif((kind == ChannelOp.READ_DATA) |
                                (kind == ChannelOp.CHANGE_READ_COLUMN)):
                        m.next = "CCS"
                    with m.Else():
                        m.next = "WAIT_RB"

            with m.State("CCS"):
                # 06h-E0h: tCCS before the first data output cycle
                emit(CycleKind.WAIT_CCS)
                with m.If(taken):
                    m.d.sync += idx.eq(0)
                    m.next = "DOUT"

            with m.State("WAIT_RB"):
                ends = ((kind == ChannelOp.RESET) | (kind == ChannelOp.SET_FEATURES) |
                        start_phase)
                emit(CycleKind.WAIT_RB, last=ends)
                with m.If(taken):
                    m.d.sync += idx.eq(0)
                    with m.If(ends):
                        m.next = "FINISH"
                    with m.Elif(waits_first & ~after_cmd):
                        m.next = "CMD1"
                    with m.Elif(keep_status):
                        m.next = "STATUS_CMD"
                    with m.Else():
                        m.next = "DOUT"

            # n_luns > 1: 78h, row, one status byte (CE# up after it), until RDY (bit 6).
            with m.State("POLL_CMD"):
                emit(CycleKind.CMD, 0x78)
                m.d.sync += [polling.eq(1), idx.eq(0)]
                with m.If(taken):
                    m.next = "POLL_ROW"

            with m.State("POLL_ROW"):
                emit(CycleKind.ADDR, row.word_select(idx[:2], 8))
                with m.If(taken):
                    with m.If(idx == self.row_cycles - 1):
                        m.d.sync += idx.eq(0)
                        m.next = "POLL_DOUT"
                    with m.Else():
                        m.d.sync += idx.eq(idx + 1)

            with m.State("POLL_DOUT"):
                emit(CycleKind.DOUT, last=1)
                with m.If(taken):
                    m.next = "POLL_BYTE"

            with m.State("POLL_BYTE"):
                with m.If(eng.m_rdata.valid):
                    m.d.sync += [poll_byte.eq(eng.m_rdata.payload.data), polling.eq(0)]
                    m.next = "POLL_CHECK"

            with m.State("POLL_CHECK"):
                with m.If(~poll_byte[6] & poll_expired):
                    m.d.sync += timed_out.eq(1)     # hung: give up (busy_timeout)
                    m.next = "FINISH"
                with m.Elif(~poll_byte[6]):
                    m.next = "POLL_CMD"             # the LUN is still busy
                with m.Elif(kind == ChannelOp.READ_DATA):
                    m.next = "CMD1"                 # 06h-E0h selects the LUN for output
                with m.Else():
                    with m.If(kind == ChannelOp.STATUS_FINISH):
                        m.d.sync += status.eq(poll_byte)
                    m.next = "FINISH"               # a multi-plane start phase ends here

            with m.State("STATUS_CMD"):
                emit(CycleKind.CMD, 0x70)
                with m.If(taken):
                    m.next = "STATUS_DOUT"

            with m.State("STATUS_DOUT"):
                emit(CycleKind.DOUT, last=1)
                with m.If(taken):
                    m.next = "FINISH"

            with m.State("DOUT"):
                with m.If(n_out == 0):
                    # no byte to read: a WAIT_CCS with `last` just raises CE#
                    emit(CycleKind.WAIT_CCS, last=1)
                    with m.If(taken):
                        m.next = "FINISH"
                with m.Else():
                    final = idx == n_dout - 1
                    emit(CycleKind.DOUT, last=final)
                    with m.If(taken):
                        m.d.sync += idx.eq(idx + 1)
                        with m.If(final):
                            m.next = "FINISH"

            with m.State("FINISH"):
                # Entered a cycle after the last request was taken: the engine is ready again
                # once it has run every request, and its read register empty once the last
                # byte has left. Only then does the completion follow the data.
                with m.If(eng.s_cycle.ready & ~eng.m_rdata.valid & (pending == 0)):
                    m.next = "CPL"

            with m.State("CPL"):
                m.d.comb += [
                    self.m_cpl.valid.eq(1),
                    self.m_cpl.payload.tag.eq(op.tag),
                    self.m_cpl.payload.status.eq(status),
                    self.m_cpl.payload.fail.eq(status[0] | timed_out),
                    self.m_cpl.payload.error.eq(error),
                    self.m_cpl.payload.timeout.eq(timed_out),
                ]
                with m.If(self.m_cpl.ready):
                    m.next = "IDLE"

        m.d.comb += in_poll.eq(seq.ongoing("POLL_CMD") | seq.ongoing("POLL_ROW") |
                               seq.ongoing("POLL_DOUT") | seq.ongoing("POLL_BYTE") |
                               seq.ongoing("POLL_CHECK"))
        return m

    def _two_engines(self, m, rb_timed_out):
        """The SDR and NV-DDR2 engines behind one request/read interface, `nvddr2` picking
        one: requests go to it, read data and R/B# come from it, and its side of the PHY
        interface drives `phy` (the SDR engine's flat pins through connect_sdr_engine, both
        phases equal). Returns an object with the engine ports the sequencer uses."""
        n, w = self.n_ways, self.timer_width
        sdr = m.submodules.engine = OnfiSdrEngine(n, w)
        nv = m.submodules.nvddr2_engine = OnfiNvddr2Engine(n, w)
        sel = self.nvddr2
        m.d.comb += [sdr.timing.eq(self.timing), nv.timing.eq(self.nvddr2_timing),
                     sdr.write_protect.eq(self.write_protect),
                     nv.write_protect.eq(self.write_protect),
                     sdr.busy_timeout.eq(self.busy_timeout), nv.busy_timeout.eq(self.busy_timeout),
                     sdr.busy_now.eq(self.busy_now), nv.busy_now.eq(self.busy_now),
                     rb_timed_out.eq(Mux(sel, nv.rb_timed_out, sdr.rb_timed_out))]
        front = wiring.Signature({
            "s_cycle": In(sdr.s_cycle.signature.flip()),
            "m_rdata": Out(sdr.m_rdata.signature),
        }).flip().create(path=("engines",))
        for eng, on in ((nv, sel), (sdr, ~sel)):
            m.d.comb += [eng.s_cycle.payload.eq(front.s_cycle.payload),
                         eng.s_cycle.valid.eq(front.s_cycle.valid & on),
                         eng.m_rdata.ready.eq(front.m_rdata.ready & on)]
        m.d.comb += [
            front.s_cycle.ready.eq(Mux(sel, nv.s_cycle.ready, sdr.s_cycle.ready)),
            front.m_rdata.valid.eq(Mux(sel, nv.m_rdata.valid, sdr.m_rdata.valid)),
            front.m_rdata.payload.eq(Mux(sel, nv.m_rdata.payload, sdr.m_rdata.payload)),
            self.rb_ready.eq(Mux(sel, nv.rb_ready, sdr.rb_ready)),
        ]
        sdr_if = OnfiPhySignature(n).create(path=("sdr_if",))
        connect_sdr_engine(m, sdr, sdr_if)
        for name, member in OnfiPhySignature(n).members.items():
            ours, theirs, port = getattr(nv.phy, name), getattr(sdr_if, name), \
                getattr(self.phy, name)
            if member.flow == Out:
                m.d.comb += port.eq(Mux(sel, ours, theirs))
            else:
                m.d.comb += [ours.eq(port), theirs.eq(port)]
        return front
