# SPDX-License-Identifier: BSD-2-Clause
"""FtlReadPath: the thin LiteX wrapper of the FTL's hardware read path (rtl/ftl/ftl_read_engine)
and its seams in the SoC (rtl/ftl/README.md, "The split").

The Amaranth core is elaborated to Verilog (module `ftl_read_engine`, written to the build
directory) and instantiated here; its struct ports become LiteX stream endpoints with
spec/fw_streams.py's fields. Around it:

- the map port is a second read port of main RAM (`attach_map_port`): logical unit `lpn` reads
  the 32-bit word at byte address `l2p_base + 4 x lpn` (the firmware's `l2p` array, whose
  address the firmware writes into `l2p_base`), one word at a time, in order, three cycles
  each. Its own port, not a bus master: the firmware's WAIT holds the CPU's bus for as long as
  the drive is idle (soc/fw_wait.py), and a lookup must not wait for the CPU to wake;
- `StreamMerge` (below) merges two single-beat streams round robin (the engine's and the
  firmware's flash ops into the back end; their block-request completions into the front end);
- `StreamRoute` sends each flash completion to the engine (tags from `FTAG_BASE`) or to the
  firmware.

CSRs (the firmware's, sw/firmware/hal_soc.c): `enable`, `l2p_base`, `slc` (write: bits
30:0 a block index, bit 31 its SLC mode), `begun` / `finished` (the fence), `idle`, and the
counters `reads`, `punts`, `handbacks`, `lbas`, `corrected`, `max_bits`; `refresh_bits`,
`hint` / `hint_ack` (a drifting block for the firmware to refresh). Only `hint_valid` is
among the firmware's wake sources: nothing else here wakes the CPU, so a request the engine
carries costs it no instruction.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.csr import CSRStatus, CSRStorage
from migen import Cat, ClockSignal, If, Instance, ResetSignal, Signal
from migen.genlib.fsm import FSM, NextState, NextValue

from rtl.ftl.ftl_read_engine import FtlReadEngine
from soc.nand_flash import emit_verilog
from spec.fw_streams import be_cpl_layout, be_req_layout, flash_cpl_layout, flash_op_layout

__all__ = ["FtlReadPath", "StreamMerge", "StreamRoute", "FTAG_BASE", "N_FTAGS", "DIE_CREDITS",
           "engine_params"]

FTAG_BASE = 192         # flash tags 192..255 are the engine's; the firmware's are 0..191
N_FTAGS = 64
DIE_CREDITS = 8         # the engine's share of a die's queue in the back end (rtl/ftl/README.md)


def engine_params(cfg):
    """FtlReadEngine's parameters for SocConfig `cfg`, or (None, why) when its geometry is
    not one the engine decodes (powers of two)."""
    upp = cfg.page_bytes // 4096
    params = dict(tag_width=cfg.tag_width, handle_slots=cfg.max_transfer // 4096,
                  lbads=cfg.lbads, n_channels=cfg.n_channels, n_ways=cfg.n_ways,
                  n_luns=cfg.luns, units_per_page=upp, planes=cfg.planes,
                  pages_per_block=cfg.pages_per_block, blocks=cfg.blocks_per_plane,
                  map_addr_width=32, ftag_base=FTAG_BASE, n_ftags=N_FTAGS,
                  die_credits=cfg.hw_read_credits, max_len=cfg.page_bytes + cfg.spare_bytes,
                  multi_plane=cfg.hw_read_multi_plane)
    try:
        FtlReadEngine(**params)._MustUse__silence = True
    except ValueError as e:
        return None, str(e)
    return params, None


class StreamMerge(LiteXModule):
    """Two single-beat streams `a`, `b` into `out` (same fields), round robin."""

    def __init__(self, a, b, out):
        turn_b = Signal()           # b goes first when both are valid
        pick_a = Signal()
        self.comb += [
            pick_a.eq(a.valid & (~b.valid | ~turn_b)),
            If(pick_a, a.connect(out, omit={"first", "last"})).Else(
                b.connect(out, omit={"first", "last"})),
            out.last.eq(1),
        ]
        self.sync += If(out.valid & out.ready, turn_b.eq(pick_a))


class StreamRoute(LiteXModule):
    """`sink` to `hw` when `to_hw` (a function of the sink's fields, comb), else to `fw`."""

    def __init__(self, sink, hw, fw, to_hw):
        self.comb += If(to_hw, sink.connect(hw)).Else(sink.connect(fw))


class FtlReadPath(LiteXModule):
    """platform (gets the Verilog source), build_dir, params (engine_params), ns_lbas (the
    namespace size in LBAs: the front end's fw_ns_size). Endpoints: sink_req (the front end's
    block requests), source_fw (to the firmware), source_cpl (completions), source_op (READs),
    sink_fcpl (their completions); `quiet` (for the simulation's fast-forward); the map's RAM
    port comes with attach_map_port."""

    def __init__(self, platform, build_dir, params, ns_lbas):
        core = FtlReadEngine(**params)
        emit_verilog(platform, build_dir, core, "ftl_read_engine")

        tw = params["tag_width"]
        ch_bits = core.channel_bits
        self.req_fields = be_req_layout(tw)
        self.cpl_fields = be_cpl_layout(tw)
        self.op_fields = flash_op_layout(params["max_len"], ch_bits)
        self.fcpl_fields = flash_cpl_layout()
        self.sink_req = sink_req = stream.Endpoint(self.req_fields)
        self.source_fw = source_fw = stream.Endpoint(self.req_fields)
        self.source_cpl = source_cpl = stream.Endpoint(self.cpl_fields)
        self.source_op = source_op = stream.Endpoint(self.op_fields)
        self.sink_fcpl = sink_fcpl = stream.Endpoint(self.fcpl_fields)
        self.quiet = Signal()
        self.comb += [source_fw.last.eq(1), source_cpl.last.eq(1), source_op.last.eq(1)]

        self._enable = CSRStorage(1, description="1: the engine takes the requests it can")
        self._l2p_base = CSRStorage(32, description="byte address of the firmware's l2p[0]")
        self._slc = CSRStorage(32, description="write: bits 30:0 a block index (die x "
                                               "blocks + block), bit 31 its SLC mode")
        self._begun = CSRStatus(16)
        self._finished = CSRStatus(16)
        self._idle = CSRStatus(1)
        self._reads = CSRStatus(32)
        self._punts = CSRStatus(32)
        self._handbacks = CSRStatus(32)
        self._lbas = CSRStatus(48)
        self._corrected = CSRStatus(32, description="READs passed with bits corrected")
        self._max_bits = CSRStatus(7, description="most bits corrected in a codeword")
        self._refresh_bits = CSRStorage(7, description="a READ passing with at least this "
                                                       "many bits corrected names its block "
                                                       "in `hint` (0: never)")
        self._hint = CSRStatus(32, description="bit 31: a block to refresh is waiting; bits "
                                               "30:0 its index (die x blocks + block)")
        self._hint_ack = CSRStorage(1, description="write: the firmware took `hint`")

        # The map port: a read port of the RAM the map lives in (attach_map_port), one word
        # at a time, in order: the address, then the word one cycle later.
        self.map_adr = map_adr = Signal(32)     # word index in that RAM
        self.map_dat = Signal(32)
        self.ram_base = Signal(32)              # its byte address on the CPU's bus
        map_valid, map_ready, map_lpn = Signal(), Signal(), Signal(32)
        rsp_valid, rsp_data = Signal(), Signal(32)
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            map_ready.eq(1),
            If(map_valid,
                NextValue(map_adr,
                          ((self._l2p_base.storage - self.ram_base) >> 2) + map_lpn),
                NextState("READ")))
        fsm.act("READ", NextState("ANSWER"))
        fsm.act("ANSWER",
            rsp_valid.eq(1),            # the engine always takes it
            rsp_data.eq(self.map_dat),
            NextState("IDLE"))

        slc_valid = Signal()
        self.sync += slc_valid.eq(self._slc.re)
        # quiet: neither the engine nor its map port has anything to do until a flash
        # completion or a new request arrives
        engine_quiet = Signal()
        self.comb += self.quiet.eq(engine_quiet & fsm.ongoing("IDLE"))

        def fields(ep, names):
            return Cat(*[getattr(ep, n) for n, _ in names])

        hint = Signal(core.block_index_bits)
        # a block to refresh is waiting: a wake source of the firmware's wait (rare: the
        # engine's reads otherwise never wake the CPU, so a drifting block would wait for
        # the next command the firmware handles)
        self.hint_valid = hint_valid = Signal()

        self._conns = dict(
            i_s_req__valid=sink_req.valid, o_s_req__ready=sink_req.ready,
            i_s_req__payload=fields(sink_req, self.req_fields),
            o_m_fw__valid=source_fw.valid, i_m_fw__ready=source_fw.ready,
            o_m_fw__payload=fields(source_fw, self.req_fields),
            o_m_cpl__valid=source_cpl.valid, i_m_cpl__ready=source_cpl.ready,
            o_m_cpl__payload=fields(source_cpl, self.cpl_fields),
            o_m_map__valid=map_valid, i_m_map__ready=map_ready, o_m_map__payload=map_lpn,
            i_s_map__valid=rsp_valid, i_s_map__payload=rsp_data,
            o_m_op__valid=source_op.valid, i_m_op__ready=source_op.ready,
            o_m_op__payload=fields(source_op, self.op_fields),
            i_s_fcpl__valid=sink_fcpl.valid, o_s_fcpl__ready=sink_fcpl.ready,
            i_s_fcpl__payload=fields(sink_fcpl, self.fcpl_fields),
            i_s_slc__valid=slc_valid,
            i_s_slc__payload=Cat(self._slc.storage[:core.block_index_bits],
                                 self._slc.storage[31]),
            i_enable=self._enable.storage, i_ns_lbas=ns_lbas,
            o_begun=self._begun.status, o_finished=self._finished.status,
            o_idle=self._idle.status, o_quiet=engine_quiet,
            o_reads=self._reads.status, o_punts=self._punts.status,
            o_handbacks=self._handbacks.status, o_lbas=self._lbas.status,
            o_corrected=self._corrected.status, o_max_bits=self._max_bits.status,
            i_refresh_bits=self._refresh_bits.storage, i_hint_ack=self._hint_ack.re,
            o_hint=hint, o_hint_valid=hint_valid,
        )
        self.comb += self._hint.status.eq(Cat(hint, Signal(31 - core.block_index_bits),
                                              hint_valid))

    def attach_map_port(self, port, base):
        """The map's RAM: `port` a synchronous read port (Migen) of the 32-bit RAM the
        firmware's `l2p` lives in, `base` that RAM's byte address on the CPU's bus."""
        self.specials += port
        self.comb += [port.adr.eq(self.map_adr), self.map_dat.eq(port.dat_r),
                      self.ram_base.eq(base)]

    def do_finalize(self):
        conns = dict(self._conns)
        conns["i_clk"] = ClockSignal("sys")
        conns["i_rst"] = ResetSignal("sys")
        # s_map and s_slc are always ready (their ready outputs are left open)
        self.specials += Instance("ftl_read_engine", **conns)
