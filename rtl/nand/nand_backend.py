# SPDX-License-Identifier: BSD-2-Clause
"""Flash back end: N ONFI channels x W ways (Verilog module `nand_backend`).

One `nand_die_scheduler` (with its `onfi_channel`) per channel behind one tagged flash-op
interface: ops are routed by their `channel` field, completions of all channels are merged
round robin. Data moves per channel (`ch[i].m_wreq` / `s_wdata` / `m_rdata`) because each
channel streams at its own bus rate; a buffer-memory DMA or `nand_bist` sits on them. Timing
and geometry registers are shared: one NAND part type per drive. See rtl/nand/README.md
("nand_backend").
"""

from amaranth.hdl import Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from .nand_common import BUSY_NOW_BITS, BUSY_TIMEOUT_BITS
from .nand_die_scheduler import (
    TAG_BITS,
    ChannelCompletion,
    FlashCompletion,
    NandDieScheduler,
    dqs_cal_members,
    flash_op_layout,
    geometry_layout,
    rdata_layout,
    wreq_layout,
)
from .nand_ecc import NandEcc
from .onfi_nvddr2_engine import nvddr2_timing_layout
from .onfi_phy_if import OnfiPhySignature
from .onfi_sdr_engine import timing_layout

__all__ = ["NandBackend", "channel_signature"]

PIN_MEMBERS = ("dq_o", "dq_oe", "dq_i", "ce_n", "cle", "ale", "we_n", "re_n", "wp_n", "rb_n")


def channel_signature(n_ways, max_len, with_nvddr2=False, dqs_tap_bits=5):
    """The ports of one channel: its data streams and its ONFI pins (towards the PHY), or with
    NV-DDR2 the engine side of its PHY (`phy`, OnfiPhySignature), its DQS delay and its
    calibration's results (the outputs of `dqs_cal_members`)."""
    all_ones = (1 << n_ways) - 1
    cal_out = {name: member for name, member in dqs_cal_members(dqs_tap_bits).items()
               if member.flow == Out}
    bus = ({"phy": Out(OnfiPhySignature(n_ways)), **cal_out} if with_nvddr2 else {
        "dq_o": Out(8), "dq_oe": Out(1), "dq_i": In(8),
        "ce_n": Out(n_ways, init=all_ones), "cle": Out(1), "ale": Out(1),
        "we_n": Out(1, init=1), "re_n": Out(1, init=1), "wp_n": Out(1, init=0),
        "rb_n": In(n_ways, init=all_ones),
    })
    return wiring.Signature({
        "m_wreq": Out(stream.Signature(wreq_layout(max_len))),
        "s_wdata": In(stream.Signature(unsigned(8))),
        "m_rdata": Out(stream.Signature(rdata_layout)),
        **bus,
    })


class NandBackend(wiring.Component):
    """Flash back end: die schedulers and ONFI channel controllers for N channels.

    Parameters
    ----------
    n_channels : int, 1..32 (default 18)
    n_ways : int, 1..8 (default 4)
        Targets (chip enables) per channel.
    n_luns : int, 1..4 (default 1)
        LUNs (dies) per target, interleaved like ways (NandDieScheduler n_luns).
    queue_depth, max_planes, max_len, row_cycles, col_cycles, timer_width, with_nvddr2 :
        Passed to every NandDieScheduler (see there). with_nvddr2: every channel also has
        the NV-DDR2 engine, its PHY interface is the port instead of the pins, and
        `nvddr2_timing` / `nvddr2` (all channels: one NAND part) are inputs; so are the DQS
        calibration's start / way / fallback (every channel at once), and each channel has
        its results and PHY delay (dqs_tap_bits wide: the board PHY's).
    ecc : None (default) or dict(m, t, data_bytes, parity_bytes)
        The BCH code of every channel's `nand_ecc` (between its scheduler and its data ports):
        READ and PROGRAM ops without `raw` are then ECC ops (NandDieScheduler ecc_data_bytes)
        and their completions carry ecc_bits / ecc_fail.

    Ports
    -----
    s_op : stream of flash_op_layout(max_len, channel_bits), in; `channel` >= n_channels is
        refused with an error completion
    m_cpl : stream of FlashCompletion (with `ecc`; else ChannelCompletion, no ecc_* fields),
        out; all channels, round robin
    ch[i] : channel_signature(n_ways, max_len) for channel i: m_wreq, s_wdata, m_rdata, pins
    geometry, timing, write_protect (with_nvddr2: nvddr2_timing, nvddr2) : run-time
        configuration, shared
    busy : out; some op is queued or running, or a channel's ECC still holds its data
    ecc_busy : out; a channel's ECC holds data or a completion: work inside the back end with
        no pin moving (the simulation's fast-forward must not skip it); 0 without `ecc`
    """

    def __init__(self, n_channels=18, n_ways=4, queue_depth=4, max_planes=2, max_len=18432,
                 row_cycles=3, col_cycles=2, timer_width=8, with_nvddr2=False,
                 dqs_tap_bits=5, n_luns=1, ecc=None):
        if (isinstance(n_channels, bool) or not isinstance(n_channels, int)
                or not 1 <= n_channels <= 32):
            self._MustUse__silence = True
            raise ValueError(f"NandBackend: n_channels must be an int in 1..32, "
                             f"got {n_channels!r}")
        self.n_channels = n_channels
        self.channel_bits = max(1, (n_channels - 1).bit_length())
        # the schedulers check the rest (and name the parameter)
        self.ecc = None
        ecc_sched = {}
        if ecc is not None:
            try:
                code = NandEcc(**ecc, max_len=max_len)
                code._MustUse__silence = True
            except (TypeError, ValueError) as e:
                self._MustUse__silence = True
                raise ValueError(f"NandBackend: ecc {ecc!r}: {e}") from None
            self.ecc = dict(ecc)
            ecc_sched = dict(ecc_data_bytes=code.code.data_bytes, ecc_room=code.code.room)
        self.sched_params = dict(n_ways=n_ways, queue_depth=queue_depth, max_planes=max_planes,
                                 max_len=max_len, row_cycles=row_cycles, col_cycles=col_cycles,
                                 timer_width=timer_width, with_nvddr2=with_nvddr2,
                                 dqs_tap_bits=dqs_tap_bits, n_luns=n_luns, **ecc_sched)
        try:
            NandDieScheduler(**self.sched_params)._MustUse__silence = True
        except ValueError as e:
            self._MustUse__silence = True
            raise ValueError(str(e).replace("NandDieScheduler", "NandBackend")) from None
        self.n_ways = n_ways
        self.n_luns = n_luns
        self.max_len = max_len
        self.timer_width = timer_width
        self.with_nvddr2 = with_nvddr2
        self.dqs_tap_bits = dqs_tap_bits
        cal_in = {name: member for name, member in dqs_cal_members(dqs_tap_bits).items()
                  if member.flow == In}
        nvddr2 = ({"nvddr2_timing": In(nvddr2_timing_layout(timer_width)), "nvddr2": In(1),
                   **cal_in} if with_nvddr2 else {})
        super().__init__({
            "s_op": In(stream.Signature(flash_op_layout(max_len, self.channel_bits))),
            "m_cpl": Out(stream.Signature(FlashCompletion if ecc is not None
                                          else ChannelCompletion)),
            "ch": Out(channel_signature(n_ways, max_len, with_nvddr2,
                                        dqs_tap_bits)).array(n_channels),
            "geometry": In(geometry_layout),
            "timing": In(timing_layout(timer_width)),
            **nvddr2,
            "write_protect": In(1),
            "busy_timeout": In(BUSY_TIMEOUT_BITS),
            "busy_now": In(BUSY_NOW_BITS),
            "busy": Out(1),
            "ecc_busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n_channels
        scheds, cpls = [], []
        for i in range(n):
            s = NandDieScheduler(**self.sched_params)
            m.submodules[f"sched{i}"] = s
            scheds.append(s)
            port = self.ch[i]
            m.d.comb += [s.geometry.eq(self.geometry), s.timing.eq(self.timing),
                         s.write_protect.eq(self.write_protect),
                         s.busy_timeout.eq(self.busy_timeout), s.busy_now.eq(self.busy_now)]
            if self.ecc is None:
                wiring.connect(m, wiring.flipped(port.m_wreq), s.m_wreq)
                wiring.connect(m, wiring.flipped(port.s_wdata), s.s_wdata)
                wiring.connect(m, wiring.flipped(port.m_rdata), s.m_rdata)
                cpls.append(s.m_cpl)
            else:
                e = m.submodules[f"ecc{i}"] = NandEcc(**self.ecc, max_len=self.max_len)
                wiring.connect(m, s.m_wreq, e.s_wreq)
                wiring.connect(m, wiring.flipped(port.m_wreq), e.m_wreq)
                wiring.connect(m, wiring.flipped(port.s_wdata), e.s_wdata)
                wiring.connect(m, e.m_wdata, s.s_wdata)
                wiring.connect(m, s.m_rdata, e.s_rdata)
                wiring.connect(m, wiring.flipped(port.m_rdata), e.m_rdata)
                wiring.connect(m, s.m_cpl, e.s_cpl)
                cpls.append(e.m_cpl)
            if self.with_nvddr2:
                m.d.comb += [s.nvddr2_timing.eq(self.nvddr2_timing), s.nvddr2.eq(self.nvddr2)]
                wiring.connect(m, wiring.flipped(port.phy), s.phy)
                # Calibration: started on every channel at once, results per channel.
                for name, member in dqs_cal_members(self.dqs_tap_bits).items():
                    if member.flow == In:
                        m.d.comb += getattr(s, name).eq(getattr(self, name))
                    else:
                        m.d.comb += getattr(port, name).eq(getattr(s, name))
                continue
            for name in PIN_MEMBERS:
                if name in ("dq_i", "rb_n"):
                    m.d.comb += getattr(s, name).eq(getattr(port, name))
                else:
                    m.d.comb += getattr(port, name).eq(getattr(s, name))
        # an ECC still decoding (or holding a completion) is busy too
        eccs = [m.submodules[f"ecc{i}"] for i in range(n)] if self.ecc is not None else []
        m.d.comb += [self.ecc_busy.eq(Cat(0, *(e.busy for e in eccs)).any()),
                     self.busy.eq(Cat(*(s.busy for s in scheds)).any() | self.ecc_busy)]

        # Ops: routed by channel; a channel that does not exist gets an error completion.
        p = self.s_op.payload
        bad = p.channel >= n if n < (1 << self.channel_bits) else 0
        err_valid = Signal()
        err_tag = Signal(TAG_BITS)
        for i, s in enumerate(scheds):
            for name, _ in s.s_op.payload.shape():
                m.d.comb += getattr(s.s_op.payload, name).eq(getattr(p, name))
            m.d.comb += s.s_op.valid.eq(self.s_op.valid & (p.channel == i))
            with m.If(p.channel == i):
                m.d.comb += self.s_op.ready.eq(s.s_op.ready)
        with m.If(bad):
            m.d.comb += self.s_op.ready.eq(~err_valid)
            with m.If(self.s_op.valid & ~err_valid):
                m.d.sync += [err_valid.eq(1), err_tag.eq(p.tag)]

        # Completions: round robin over the channels, then the refused-op register.
        valid = Cat(c.valid for c in cpls)
        rr = Signal(range(max(n, 2)))
        pick = Signal(range(max(n, 2)))
        doubled = Cat(valid, valid)
        for k in reversed(range(n)):
            with m.If(doubled.bit_select(rr + k, 1)):
                m.d.comb += pick.eq(Mux(rr + k >= n, rr + k - n, rr + k))
        with m.If(valid.any()):
            for i, c in enumerate(cpls):
                with m.If(pick == i):
                    m.d.comb += [self.m_cpl.valid.eq(1), self.m_cpl.payload.eq(c.payload),
                                 c.ready.eq(self.m_cpl.ready)]
            with m.If(self.m_cpl.ready):
                m.d.sync += rr.eq(Mux(pick == n - 1, 0, pick + 1))
        with m.Elif(err_valid):
            m.d.comb += [self.m_cpl.valid.eq(1), self.m_cpl.payload.tag.eq(err_tag),
                         self.m_cpl.payload.error.eq(1)]
            with m.If(self.m_cpl.ready):
                m.d.sync += err_valid.eq(0)
        return m
