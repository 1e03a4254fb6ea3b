# SPDX-License-Identifier: BSD-2-Clause
"""Die scheduler of one ONFI channel (Verilog module `nand_die_scheduler`).

Takes tagged flash operations for the dies (way x LUN) of one channel into per-die queues and
runs them on an `OnfiChannel` it instantiates, interleaving the dies: a die's array phase (tR,
tPROG, tBERS) overlaps the bus transfers of the others, the LUNs of one target included (their
shared R/B# is helped by 78h status polls). Operations to one die run in order; operations to
different dies proceed in parallel and complete out of order. Multi-plane reads, programs and
erases come from a plane mask; an op's `slc` bit goes with each of its per-plane channel ops
(a DAh prefix before each plane's 00h / 80h / 60h). Page reads are started before programs and
erases (never reordered within a die). See rtl/nand/README.md ("nand_die_scheduler").
"""

import types

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from spec.fw_streams import (
    FLASH_BLOCK_BITS,
    FLASH_BUFFER_BITS,
    FLASH_MAX_PLANES,
    FLASH_OP_BITS,
    FLASH_OPS,
    FLASH_PAGE_BITS,
    FLASH_TAG_BITS,
    flash_cpl_layout,
)
from spec.fw_streams import flash_op_layout as spec_flash_op_layout

from .nand_common import bad_int, busy_timer
from .onfi_channel import FEATURE_BYTES, ROW_BITS, ChannelOp, OnfiChannel, bus_members
from .onfi_dqs_calibration import OnfiDqsCalibration

__all__ = ["NandDieScheduler", "FlashOp", "flash_op_layout", "FlashCompletion",
           "ChannelCompletion",
           "geometry_layout", "wreq_layout", "rdata_layout", "TAG_BITS", "BUFFER_BITS",
           "BLOCK_BITS", "PAGE_BITS", "MAX_PLANES"]

# The op and completion layouts are the firmware's ports': spec/fw_streams.py.
TAG_BITS = FLASH_TAG_BITS
BUFFER_BITS = FLASH_BUFFER_BITS
BLOCK_BITS = FLASH_BLOCK_BITS   # block number within a LUN (plane in its low bits)
PAGE_BITS = FLASH_PAGE_BITS     # page number within a block
MAX_PLANES = FLASH_MAX_PLANES


def _flash_op_members(namespace):
    namespace["__module__"] = __name__
    namespace["__doc__"] = ("Flash operations of `s_op`: spec/fw_streams.py FLASH_OPS (other "
                            "values are refused with `error`).")
    for name, value, _ in FLASH_OPS:
        namespace[name] = value


# Built from spec's table, the one the firmware's C enum is generated from.
FlashOp = types.new_class("FlashOp", (enum.Enum,), {"shape": FLASH_OP_BITS}, _flash_op_members)


def flash_op_layout(max_len=18432, channel_bits=0):
    """An `s_op` payload: the FTL's flash operation (ARCHITECTURE.md), spec/fw_streams.py's
    fields with `op` typed as FlashOp. A function because the length field follows max_len
    (1..65535) and the back end adds the channel (channel_bits 0, or 1..5)."""
    return data.StructLayout({name: FlashOp if name == "op" else unsigned(width)
                              for name, width in spec_flash_op_layout(max_len, channel_bits)})


# One completion per op (`m_cpl`), after the op's last read byte: tag, status (70h status byte
# of a program or erase), fail (status bit 0), error (refused op); spec/fw_streams.py.
FlashCompletion = data.StructLayout({name: unsigned(width)
                                     for name, width in flash_cpl_layout()})
# A channel's completion, before nand_ecc adds the ECC outcome (the ecc_* fields, last):
# the scheduler's, and the back end's when it is built without ECC.
ChannelCompletion = data.StructLayout({name: unsigned(width)
                                       for name, width in flash_cpl_layout()
                                       if not name.startswith("ecc_")})


class geometry_layout(data.Struct):
    """Run-time geometry (from the parameter page): how block, page and LUN pack into the
    row address, and how many planes there are."""
    page_bits: unsigned(4)      # log2(pages per block)
    block_bits: unsigned(5)     # log2(blocks per LUN)
    plane_bits: unsigned(2)     # log2(planes): the low bits of the block number


def wreq_layout(max_len=18432):
    """`m_wreq`: the scheduler wants `length` bytes for (tag, buffer, plane) on s_wdata next;
    `ecc`: they are an ECC program's data (nand_ecc adds the parity)."""
    return data.StructLayout({
        "tag": unsigned(TAG_BITS), "buffer": unsigned(BUFFER_BITS),
        "plane": unsigned(2), "length": unsigned(max_len.bit_length()), "ecc": unsigned(1),
    })


class rdata_layout(data.Struct):
    """`m_rdata`: one read byte with the op it belongs to."""
    data: unsigned(8)
    last: unsigned(1)           # the last byte of this plane's data
    tag: unsigned(TAG_BITS)
    buffer: unsigned(BUFFER_BITS)
    plane: unsigned(2)
    ecc: unsigned(1)            # an ECC read's bus byte (nand_ecc decodes it)


class _Class(enum.Enum, shape=2):
    """What the bus does next for a die, in priority order."""
    START_READ = 0      # a page read's array phase (short on the bus)
    FINISH = 1          # a die that has gone ready: data out or status
    START_OTHER = 2     # program load, erase, or a whole op (reset, ID, features, ...)
    POLL = 3            # n_luns > 1: 78h status of a busy LUN whose target R/B# is low


def dqs_cal_members(tap_bits):
    """A channel's DQS calibration (OnfiDqsCalibration) as the scheduler and the back end pass
    it on: start / way / fallback in, results and the PHY's delay out. Member name -> the
    calibration core's port: DQS_CAL_PORTS."""
    return {
        "dqs_cal_start": In(1), "dqs_cal_way": In(3), "dqs_cal_fallback": In(tap_bits),
        "dqs_cal_busy": Out(1), "dqs_cal_done": Out(1), "dqs_cal_ok": Out(1),
        "dqs_cal_window_lo": Out(tap_bits), "dqs_cal_window_hi": Out(tap_bits),
        "dqs_cal_tap": Out(tap_bits), "dqs_delay": Out(tap_bits), "dqs_delay_load": Out(1),
    }


DQS_CAL_PORTS = {name: name.removeprefix("dqs_cal_") for name in dqs_cal_members(1)}


class NandDieScheduler(wiring.Component):
    """Die scheduler of one channel, with its ONFI channel controller.

    Parameters
    ----------
    n_ways : int, 1..8 (default 4)
        Targets (chip enables) on the channel.
    n_luns : int, 1..4 (default 1)
        LUNs (dies) per target, the flash op's `lun`; one queue per (way, LUN). Above 1 the
        LUNs of a target are interleaved like ways: a busy LUN whose target's R/B# is low (some
        LUN of it busy) is polled with 78h when the bus has nothing else to do, and the
        channel waits for a LUN by 78h (OnfiChannel n_luns). Target-wide ops (RESET, READ ID,
        READ PARAMETER PAGE, SET/GET FEATURES, READ STATUS) wait until no LUN of their target
        is busy.
    queue_depth : int, 1..16 (default 4)
        Ops each die's queue holds.
    max_planes : int, 1..4 (default 2)
        Planes a multi-plane op may name (width of the used plane mask).
    max_len, row_cycles, col_cycles, timer_width, with_nvddr2 :
        Passed to OnfiChannel (see there). With NV-DDR2 an OnfiDqsCalibration sits between
        the scheduler and the channel (pass-through until `dqs_cal_start`).
    dqs_tap_bits : int, 1..9 (default 5)
        With NV-DDR2: the board PHY's DQS delay width (5: onfi_phy_xilinx7, 9: xilinxus).
    ecc_data_bytes, ecc_room : int (default 0, 0: no ECC)
        The ECC codeword (nand_ecc): data bytes (a power of two, 1..4096) and parity room
        bytes (1..512). A READ or PROGRAM without `raw` is then an ECC op: its column and
        length count data bytes, whole codewords (anything else is refused); on the bus it
        covers column / ecc_data_bytes codewords of (ecc_data_bytes + ecc_room) bytes, and
        its bus length must fit max_len. Its `m_wreq` asks for the data bytes (`ecc` set) and
        its read bytes carry `ecc`.

    Ports
    -----
    s_op : stream of flash_op_layout(max_len), in
    m_cpl : stream of ChannelCompletion, out; one per op, per die in op order
    m_wreq : stream of wreq_layout(max_len), out; announces the s_wdata bytes wanted next
    s_wdata : stream of unsigned(8), in; program data and feature bytes, as announced
    m_rdata : stream of rdata_layout, out
    geometry : geometry_layout, in (run time)
    timing, write_protect and the ONFI pins : as OnfiChannel (with_nvddr2: also
        nvddr2_timing, nvddr2, and `phy` instead of the pins)
    dqs_cal_*, dqs_delay, dqs_delay_load : with_nvddr2, the calibration's control, results
        and the delay for the PHY (`dqs_cal_members`)
    busy : out; an op is queued or running (for a measurement harness)
    """

    def __init__(self, n_ways=4, queue_depth=4, max_planes=2, max_len=18432, row_cycles=3,
                 col_cycles=2, timer_width=8, with_nvddr2=False, dqs_tap_bits=5, n_luns=1,
                 ecc_data_bytes=0, ecc_room=0):
        error = (bad_int("n_ways", n_ways, 1, 8) or bad_int("queue_depth", queue_depth, 1, 16) or
                 bad_int("n_luns", n_luns, 1, 4) or
                 bad_int("max_planes", max_planes, 1, MAX_PLANES) or
                 bad_int("max_len", max_len, 1, 1 << 16) or
                 bad_int("row_cycles", row_cycles, 2, 4) or
                 bad_int("col_cycles", col_cycles, 1, 2) or
                 bad_int("timer_width", timer_width, 6, 16) or
                 bad_int("dqs_tap_bits", dqs_tap_bits, 1, 9) or
                 bad_int("ecc_data_bytes", ecc_data_bytes, 0, 4096) or
                 bad_int("ecc_room", ecc_room, 0, 512))
        if not error and ecc_data_bytes & (ecc_data_bytes - 1):
            error = f"ecc_data_bytes must be 0 or a power of two, got {ecc_data_bytes}"
        if not error and bool(ecc_data_bytes) != bool(ecc_room):
            error = (f"ecc_data_bytes ({ecc_data_bytes}) and ecc_room ({ecc_room}) must both "
                     f"be 0 (no ECC) or both set")
        if error:
            self._MustUse__silence = True
            raise ValueError(f"NandDieScheduler: {error}")
        if not isinstance(with_nvddr2, bool):
            self._MustUse__silence = True
            raise ValueError(f"NandDieScheduler: with_nvddr2 must be a bool, got "
                             f"{with_nvddr2!r}")
        self.with_nvddr2 = with_nvddr2
        self.dqs_tap_bits = dqs_tap_bits
        self.n_ways = n_ways
        self.n_luns = n_luns
        self.queue_depth = queue_depth
        self.max_planes = max_planes
        self.max_len = max_len
        self.row_cycles = row_cycles
        self.col_cycles = col_cycles
        self.timer_width = timer_width
        self.ecc_data_bytes, self.ecc_room = ecc_data_bytes, ecc_room
        super().__init__({
            # ops, completions, data
            "s_op": In(stream.Signature(flash_op_layout(max_len))),
            "m_cpl": Out(stream.Signature(ChannelCompletion)),
            "m_wreq": Out(stream.Signature(wreq_layout(max_len))),
            "s_wdata": In(stream.Signature(unsigned(8))),
            "m_rdata": Out(stream.Signature(rdata_layout)),
            # run-time geometry, status
            "geometry": In(geometry_layout),
            "busy": Out(1),
            # timing registers and ONFI pins or PHY interface (the channel's)
            **bus_members(n_ways, timer_width, with_nvddr2),
            # NV-DDR2: the read-capture delay calibration in front of the channel
            **(dqs_cal_members(dqs_tap_bits) if with_nvddr2 else {}),
        })

    def _ecc_bus(self, value):
        """Bus bytes of `value` data bytes of an ECC op: whole codewords with their room."""
        if not self.ecc_data_bytes:
            return value
        shift = self.ecc_data_bytes.bit_length() - 1
        return value + (value >> shift) * self.ecc_room

    def elaborate(self, platform):
        m = Module()
        n_ways, n_luns = self.n_ways, self.n_luns
        n = n_ways * n_luns                     # dies: queue q = way * n_luns + lun
        layout = flash_op_layout(self.max_len)
        chan = m.submodules.channel = OnfiChannel(
            n_ways=n_ways, row_cycles=self.row_cycles, col_cycles=self.col_cycles,
            max_len=self.max_len, timer_width=self.timer_width, with_nvddr2=self.with_nvddr2,
            n_luns=n_luns)
        for name, member in bus_members(n_ways, self.timer_width, self.with_nvddr2).items():
            if member.is_signature:                 # the PHY interface
                wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(chan, name))
            elif member.flow == In:
                m.d.comb += getattr(chan, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(chan, name))
        # The ops and data go to the channel; with NV-DDR2 through the DQS calibration, which
        # passes them straight through except while it sweeps the PHY's delay.
        link = chan
        if self.with_nvddr2:
            link = cal = m.submodules.dqs_cal = OnfiDqsCalibration(
                tap_bits=self.dqs_tap_bits, max_len=self.max_len)
            wiring.connect(m, cal.m_op, chan.s_op)
            wiring.connect(m, cal.m_wdata, chan.s_wdata)
            wiring.connect(m, chan.m_rdata, cal.s_rdata)
            wiring.connect(m, chan.m_cpl, cal.s_cpl)
            for name, member in dqs_cal_members(self.dqs_tap_bits).items():
                port = DQS_CAL_PORTS[name]
                if member.flow == In:
                    m.d.comb += getattr(cal, port).eq(getattr(self, name))
                else:
                    m.d.comb += getattr(self, name).eq(getattr(cal, port))

        # Per-die queues ---------------------------------------------------------------------
        queues = []
        heads = []
        for w in range(n):
            q = fifo.SyncFIFOBuffered(width=layout.size, depth=self.queue_depth)
            m.submodules[f"queue{w}"] = q
            queues.append(q)
            heads.append(layout(q.r_data))

        # Admission: refuse bad ops with an error completion, queue the rest by die.
        p = self.s_op.payload
        planes_ok = (p.plane_mask != 0)
        if self.max_planes < MAX_PLANES:
            planes_ok &= (p.plane_mask >> self.max_planes) == 0
        plane_op = (p.op == FlashOp.READ) | (p.op == FlashOp.PROGRAM) | (p.op == FlashOp.ERASE)
        refuse = (p.op.as_value() > FlashOp.READ_STATUS.value) | (plane_op & ~planes_ok)
        if n_ways < 8:
            refuse |= p.way >= n_ways
        if n_luns < 1 << len(p.lun):
            refuse |= p.lun >= n_luns
        if self.max_len < (1 << len(p.length)) - 1:
            refuse |= p.length > self.max_len
        if self.ecc_data_bytes:
            # an ECC op is whole codewords, and its bus bytes fit the channel's max_len
            cw_mask = self.ecc_data_bytes - 1
            ecc_in = ((p.op == FlashOp.READ) | (p.op == FlashOp.PROGRAM)) & ~p.raw
            refuse |= ecc_in & (((p.column & cw_mask) != 0) | ((p.length & cw_mask) != 0) |
                                (p.length == 0) | (self._ecc_bus(p.length) > self.max_len))
        err_valid = Signal()
        err_tag = Signal(TAG_BITS)
        # the op's queue (valid when not refused); one LUN: the way's low bits themselves (a
        # Signal would be a mere alias, left unread in the Verilog: Verilator UNUSEDSIGNAL)
        die_bits = len(Signal(range(max(n, 2))))
        if n_luns > 1:
            die_in = Signal(die_bits)
            m.d.comb += die_in.eq(p.way * n_luns + p.lun)
        else:
            die_in = p.way[:die_bits]
        w_rdy = Array([q.w_rdy for q in queues] + [Const(0)] * ((1 << len(die_in)) - n))
        with m.If(refuse):
            m.d.comb += self.s_op.ready.eq(~err_valid)
            with m.If(self.s_op.valid & ~err_valid):
                m.d.sync += [err_valid.eq(1), err_tag.eq(p.tag)]
        with m.Else():
            m.d.comb += self.s_op.ready.eq(w_rdy[die_in])
        for w, q in enumerate(queues):
            m.d.comb += [q.w_data.eq(self.s_op.payload.as_value()),
                         q.w_en.eq(self.s_op.valid & ~refuse & (die_in == w))]

        # Per-die state ----------------------------------------------------------------------
        # busy[q]: the head op's start phase is done and the die works on it; settle[q] holds
        # off trusting R/B# (or polling) until the die has had tWB to pull it low and it has
        # crossed the engine's synchroniser. lun_rdy[q] (n_luns > 1): a 78h poll saw the busy
        # LUN ready while its target's R/B# was still low (another LUN busy).
        die_busy = Signal(n)
        lun_rdy = Signal(n)
        settle = [Signal(self.timer_width + 1, name=f"settle{w}") for w in range(n)]
        for s in settle:
            with m.If(s != 0):
                m.d.sync += s.eq(s - 1)
        has = Cat(q.r_rdy for q in queues)
        is_read = Cat(h.op == FlashOp.READ for h in heads)
        settled = Cat(s == 0 for s in settle)
        rb = Cat(chan.rb_ready[q // n_luns] for q in range(n))     # the die's target R/B#
        ready = settled & (rb | lun_rdy)
        # A target-wide op (not READ / PROGRAM / ERASE) waits until its target is idle.
        target_idle = Cat(~die_busy[w * n_luns:(w + 1) * n_luns].any() for w in range(n_ways))
        lun_op = Cat((h.op == FlashOp.READ) | (h.op == FlashOp.PROGRAM) |
                     (h.op == FlashOp.ERASE) for h in heads)
        may_start = Cat(lun_op[q] | target_idle[q // n_luns] for q in range(n))
        # A hung die (busy past busy_timeout): its op is given up (completed with `timeout`)
        # and the die fenced: nothing but a RESET goes to it again (a busy die must not get
        # commands); each later op completes at once with `timeout`. A RESET that sees the
        # die ready again lifts the fence.
        expired = Cat(busy_timer(m, self.busy_now, die_busy[q] & ~ready[q], self.busy_timeout,
                                 f"die{q}_busy") for q in range(n))
        fence = Signal(n)
        is_reset = Cat(h.op == FlashOp.RESET for h in heads)
        drop = fence & ~is_reset                # heads completed without the bus
        cand = Array([
            has & ~die_busy & is_read & ~fence,     # START_READ
            die_busy & (ready | expired),           # FINISH (or given up)
            has & ~die_busy & ((~is_read & may_start & ~drop) | drop),     # START_OTHER
            die_busy & settled & ~rb & ~lun_rdy if n_luns > 1 else Const(0, n),    # POLL
        ])

        # Round robin inside a class: the first candidate at or after `rr`, wrapping.
        rr = Signal(range(max(n, 2)))
        sel_class = Signal(_Class)
        sel_any = Signal()
        sel_die = Signal(range(max(n, 2)))
        chosen = Signal(n)
        with m.If(cand[0].any()):
            m.d.comb += [sel_class.eq(_Class.START_READ), chosen.eq(cand[0])]
        with m.Elif(cand[1].any()):
            m.d.comb += [sel_class.eq(_Class.FINISH), chosen.eq(cand[1])]
        with m.Elif(cand[2].any()):
            m.d.comb += [sel_class.eq(_Class.START_OTHER), chosen.eq(cand[2])]
        with m.Else():
            m.d.comb += [sel_class.eq(_Class.POLL), chosen.eq(cand[3])]
        m.d.comb += sel_any.eq(chosen.any())
        doubled = Cat(chosen, chosen)
        for k in reversed(range(n)):            # lowest k wins: the nearest after rr
            with m.If(doubled.bit_select(rr + k, 1)):
                m.d.comb += sel_die.eq(Mux(rr + k >= n, rr + k - n, rr + k))

        # The op on the bus --------------------------------------------------------------------
        die = Signal(range(max(n, 2)))         # the die (queue) whose op is on the bus
        cls = Signal(_Class)
        cur = Signal(layout)                    # its queue entry
        planes = Signal(MAX_PLANES)             # planes still to do in this phase
        status = Signal(8)
        timed_out = Signal()                    # the op is given up: the die is hung
        heads_arr = Array(heads)
        plane = Signal(2)                       # lowest set bit of `planes`
        for i in reversed(range(MAX_PLANES)):
            with m.If(planes[i]):
                m.d.comb += plane.eq(i)
        more = Signal()                         # planes after this one
        m.d.comb += more.eq((planes & (planes - 1)) != 0)

        g = self.geometry
        plane_lo = (Const(1, MAX_PLANES) << g.plane_bits) - 1
        block = Signal(BLOCK_BITS)
        m.d.comb += block.eq((cur.block & ~plane_lo) | (plane & plane_lo))
        row = Signal(ROW_BITS)
        m.d.comb += row.eq(cur.page | (block << g.page_bits) |
                           (cur.lun << (g.page_bits + g.block_bits)))

        cop = link.s_op.payload
        # an ECC op's column and length count data bytes; the bus carries their codewords
        ecc_op = Const(0)                       # no ECC: every op as the page register has it
        if self.ecc_data_bytes:
            ecc_op = Signal()
            m.d.comb += ecc_op.eq(((cur.op == FlashOp.READ) | (cur.op == FlashOp.PROGRAM)) &
                                  ~cur.raw)
        m.d.comb += [cop.tag.eq(cur.tag), cop.way.eq(cur.way), cop.row.eq(row),
                     cop.column.eq(Mux(ecc_op, self._ecc_bus(cur.column), cur.column)),
                     cop.length.eq(Mux(ecc_op, self._ecc_bus(cur.length), cur.length)),
                     cop.multi.eq(more),
                     cop.slc.eq(cur.slc)]      # every plane's start phase gets its DAh
        # channel op of the current phase
        phase_op = Signal(ChannelOp)
        with m.Switch(cur.op):
            with m.Case(FlashOp.READ):
                m.d.comb += phase_op.eq(Mux(cls == _Class.FINISH, ChannelOp.READ_DATA,
                                            ChannelOp.READ_ARRAY))
            with m.Case(FlashOp.PROGRAM):
                m.d.comb += phase_op.eq(Mux(cls == _Class.FINISH, ChannelOp.STATUS_FINISH,
                                            ChannelOp.PROGRAM_LOAD))
            with m.Case(FlashOp.ERASE):
                m.d.comb += phase_op.eq(Mux(cls == _Class.FINISH, ChannelOp.STATUS_FINISH,
                                            ChannelOp.ERASE_START))
            with m.Case(FlashOp.RESET):
                m.d.comb += phase_op.eq(ChannelOp.RESET)
            with m.Case(FlashOp.READ_ID):
                m.d.comb += phase_op.eq(ChannelOp.READ_ID)
            with m.Case(FlashOp.READ_PARAM):
                m.d.comb += phase_op.eq(ChannelOp.READ_PARAM)
            with m.Case(FlashOp.SET_FEATURES):
                m.d.comb += phase_op.eq(ChannelOp.SET_FEATURES)
            with m.Case(FlashOp.GET_FEATURES):
                m.d.comb += phase_op.eq(ChannelOp.GET_FEATURES)
            with m.Case(FlashOp.READ_STATUS):
                m.d.comb += phase_op.eq(ChannelOp.READ_STATUS)
        # a poll is 78h on the die's row (its LUN); its status byte stays here
        polling = Signal()
        m.d.comb += [polling.eq(cls == _Class.POLL),
                     cop.op.eq(Mux(polling, ChannelOp.READ_STATUS_ENHANCED, phase_op))]
        wants_data = (cop.op == ChannelOp.PROGRAM_LOAD) | (cop.op == ChannelOp.SET_FEATURES)
        split = (cur.op == FlashOp.READ) | (cur.op == FlashOp.PROGRAM) | \
                (cur.op == FlashOp.ERASE)
        # status/finish phase of a program or erase runs once for the whole plane group
        one_shot = (cls == _Class.FINISH) & (cur.op != FlashOp.READ)

        # Data: write bytes pass straight to the channel; read bytes get the op's context.
        m.d.comb += [
            link.s_wdata.payload.eq(self.s_wdata.payload),
            link.s_wdata.valid.eq(self.s_wdata.valid),
            self.s_wdata.ready.eq(link.s_wdata.ready),
            self.m_rdata.valid.eq(link.m_rdata.valid & ~polling),
            self.m_rdata.payload.data.eq(link.m_rdata.payload.data),
            self.m_rdata.payload.last.eq(link.m_rdata.payload.last),
            self.m_rdata.payload.tag.eq(cur.tag),
            self.m_rdata.payload.buffer.eq(cur.buffer),
            self.m_rdata.payload.plane.eq(Mux(split, plane, 0)),
            self.m_rdata.payload.ecc.eq(ecc_op),
            link.m_rdata.ready.eq(self.m_rdata.ready | polling),
        ]
        m.d.comb += [
            self.m_wreq.payload.tag.eq(cur.tag),
            self.m_wreq.payload.buffer.eq(cur.buffer),
            self.m_wreq.payload.plane.eq(Mux(split, plane, 0)),
            self.m_wreq.payload.length.eq(Mux(cop.op == ChannelOp.SET_FEATURES, FEATURE_BYTES,
                                              cur.length)),
            self.m_wreq.payload.ecc.eq(ecc_op & (cop.op == ChannelOp.PROGRAM_LOAD)),
        ]

        # Completions: the bus op's, else a refused op's.
        cpl_valid = Signal()
        m.d.comb += self.busy.eq(has.any() | die_busy.any() | err_valid)
        with m.If(cpl_valid):
            m.d.comb += [self.m_cpl.valid.eq(1), self.m_cpl.payload.tag.eq(cur.tag),
                         self.m_cpl.payload.status.eq(status),
                         self.m_cpl.payload.fail.eq(status[0] | timed_out),
                         self.m_cpl.payload.timeout.eq(timed_out)]
        with m.Elif(err_valid):
            m.d.comb += [self.m_cpl.valid.eq(1), self.m_cpl.payload.tag.eq(err_tag),
                         self.m_cpl.payload.error.eq(1)]
            with m.If(self.m_cpl.ready):
                m.d.sync += err_valid.eq(0)

        pop = Signal()
        for w, q in enumerate(queues):
            m.d.comb += q.r_en.eq(pop & (die == w))
        t_wb = self.timing.t_wb

        with m.FSM(name="bus"):
            with m.State("SELECT"):
                with m.If(sel_any):
                    h = heads_arr[sel_die]
                    multi = ((h.op == FlashOp.READ) | (h.op == FlashOp.PROGRAM) |
                             (h.op == FlashOp.ERASE)) & (sel_class != _Class.POLL)
                    m.d.sync += [die.eq(sel_die), cls.eq(sel_class), cur.eq(h), status.eq(0),
                                 planes.eq(Mux(multi, h.plane_mask, 1)),
                                 rr.eq(Mux(sel_die == n - 1, 0, sel_die + 1))]
                    give_up = Mux(sel_class == _Class.FINISH,
                                  expired.bit_select(sel_die, 1) & ~ready.bit_select(sel_die, 1),
                                  (sel_class == _Class.START_OTHER) &
                                  drop.bit_select(sel_die, 1))
                    m.d.sync += timed_out.eq(give_up)
                    with m.If(give_up):
                        m.d.sync += fence.bit_select(sel_die, 1).eq(1)
                        m.next = "CPL"
                    with m.Else():
                        m.next = "ISSUE"

            with m.State("ISSUE"):
                with m.If(wants_data):
                    m.next = "WREQ"
                with m.Else():
                    m.next = "OP"

            with m.State("WREQ"):
                m.d.comb += self.m_wreq.valid.eq(1)
                with m.If(self.m_wreq.ready):
                    m.next = "OP"

            with m.State("OP"):
                m.d.comb += link.s_op.valid.eq(1)
                with m.If(link.s_op.ready):
                    m.next = "WAIT"

            with m.State("WAIT"):
                m.d.comb += link.m_cpl.ready.eq(1)
                with m.If(polling & link.m_rdata.valid):
                    # the LUN's status byte: RDY (bit 6) lets it finish with R/B# still low
                    m.d.sync += lun_rdy.bit_select(die, 1).eq(link.m_rdata.payload.data[6])
                with m.If(link.m_cpl.valid):
                    m.d.sync += status.eq(link.m_cpl.payload.status)
                    with m.If(cur.op == FlashOp.RESET):
                        # a RESET the die answered lifts its fence; one it did not keeps it
                        m.d.sync += fence.bit_select(die, 1).eq(link.m_cpl.payload.timeout)
                    with m.If(polling):
                        m.next = "SELECT"
                    with m.Elif(link.m_cpl.payload.timeout):
                        # the channel gave up on a hung die (a multi-plane tDBSY, a RESET)
                        m.d.sync += [timed_out.eq(1), fence.bit_select(die, 1).eq(1)]
                        m.next = "CPL"
                    with m.Elif(more & ~one_shot):
                        m.d.sync += planes.eq(planes & (planes - 1))
                        m.next = "ISSUE"
                    with m.Elif(split & (cls != _Class.FINISH)):
                        # start phase done: the die works; free the bus
                        m.d.sync += [die_busy.bit_select(die, 1).eq(1),
                                     lun_rdy.bit_select(die, 1).eq(0),
                                     Array(settle)[die].eq(t_wb + 4)]
                        m.next = "SELECT"
                    with m.Else():
                        m.next = "CPL"

            with m.State("CPL"):
                m.d.comb += cpl_valid.eq(1)
                with m.If(self.m_cpl.ready):
                    m.d.comb += pop.eq(1)
                    m.d.sync += [die_busy.bit_select(die, 1).eq(0),
                                 lun_rdy.bit_select(die, 1).eq(0)]
                    m.next = "SELECT"

        return m
