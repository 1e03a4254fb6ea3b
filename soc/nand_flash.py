# SPDX-License-Identifier: BSD-2-Clause
"""NandFlash: the thin LiteX wrapper of the Amaranth flash subsystem (rtl/nand/nand_subsystem).

The Amaranth core is elaborated to Verilog (module `nand_subsystem`, written to the build
directory and added to the platform's sources) and instantiated here. Its flash op and
completion struct ports become LiteX stream endpoints with spec/fw_streams.py's fields (the
lists the Amaranth structs are built from), so the firmware's CSRs (soc/fw_ports) see named
fields. The ONFI pins of every channel are plain signals (`pins[c][name]`) for the top level,
where the die models attach; built `with_nvddr2`, `pins[c]` are the members of the channel's
PHY interface instead (OnfiPhySignature: two-phase outputs and DQS-captured bytes), for a
board's ONFI PHY.
"""

from pathlib import Path

from amaranth.hdl import Shape
from amaranth.lib import data, wiring
from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Cat, Instance, Signal

from rtl.nand.nand_common import BUSY_NOW_BITS, BUSY_TIMEOUT_BITS
from rtl.nand.nand_subsystem import NandSubsystem
from rtl.nand.onfi_nvddr2_engine import nvddr2_timing_layout
from rtl.nand.onfi_sdr_engine import timing_layout
from spec.fw_streams import flash_cpl_layout, flash_op_layout

__all__ = ["NandFlash", "struct_fields", "emit_verilog"]


def struct_fields(layout):
    """An Amaranth struct layout as [(name, width)] in bit order (low bits first)."""
    layout = data.Layout.cast(layout)
    members = sorted(((f.offset, name, Shape.cast(f.shape).width) for name, f in layout),
                     key=lambda m: m[0])
    return [(name, width) for _, name, width in members]


def emit_verilog(platform, build_dir, core, name):
    """Elaborate the Amaranth `core` to Verilog module `name` in build_dir/<name>.v (rewritten
    only when it changed, so builds keyed on it stay cached) and add it to the platform's
    sources; returns the path."""
    from amaranth.back import verilog
    text = verilog.convert(core, name=name, emit_src=False, strip_internal_attrs=True)
    path = Path(build_dir) / f"{name}.v"
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    platform.add_source(str(path))
    return path


# The flash data movers' ports on the buffer memory (a writer for read data, a reader for
# program data): 64 bits a clock each way, 1,000 MB/s at 125 MHz, below 18 NV-DDR2 channels'
# bus (sw/ssdlab/bench/limits.py states it as a bound).
BUFFER_PORT_BITS = 64


class NandFlash(LiteXModule):
    """Parameters: platform (gets the Verilog source), build_dir (where nand_subsystem.v is
    written), memory (BufferMemory: one reader and one writer are added), and NandSubsystem's
    parameters (n_channels, n_ways, n_luns, queue_depth, max_planes, max_len, row_cycles,
    col_cycles, timer_width, with_nvddr2); the word address width comes from the memory."""

    def __init__(self, platform, build_dir, memory, **params):
        core = NandSubsystem(addr_width=memory.port_addr_width(BUFFER_PORT_BITS), **params)
        self.n_channels, self.n_ways = core.n_channels, params.get("n_ways", 4)
        self.with_nvddr2 = core.with_nvddr2
        tap_bits = params.get("dqs_tap_bits", 5)
        self.verilog_path = emit_verilog(platform, build_dir, core, "nand_subsystem")

        ch_bits = max(1, (core.n_channels - 1).bit_length())
        # The op and completion payloads: spec/fw_streams.py, the layouts the Amaranth core's
        # structs are built from (same fields, low bits first).
        self.op_fields = flash_op_layout(params.get("max_len", 18432), ch_bits)
        self.cpl_fields = flash_cpl_layout()
        self.timing_fields = struct_fields(timing_layout(params.get("timer_width", 8)))
        self.s_op = s_op = stream.Endpoint(self.op_fields)
        self.m_cpl = m_cpl = stream.Endpoint(self.cpl_fields)
        self.geometry = Signal(11)          # page_bits[3:0], block_bits[8:4], plane_bits[10:9]
        self.timing = {name: Signal(width, name=f"nand_t_{name}")
                       for name, width in self.timing_fields}
        self.write_protect = Signal()
        self.busy_timeout = Signal(BUSY_TIMEOUT_BITS)     # busy ticks, 0: no timeout
        self.busy_now = Signal(BUSY_NOW_BITS)             # the uptime's busy ticks
        if self.with_nvddr2:
            self.nvddr2_fields = struct_fields(nvddr2_timing_layout(params.get("timer_width", 8)))
            self.nvddr2_timing = {name: Signal(width, name=f"nand_nvddr2_t_{name}")
                                  for name, width in self.nvddr2_fields}
            self.nvddr2 = Signal()
            # The DQS calibration, started on every channel at once (results: pins[c]).
            self.dqs_cal_start = Signal()
            self.dqs_cal_way = Signal(3)
            self.dqs_cal_fallback = Signal(tap_bits)
        self.plane_slots = Signal(8)
        self.busy = Signal()
        self.ecc_busy = Signal()        # the ECC decodes, no pin moves (fast-forward)

        wr = memory.add_writer("nand", width=64)        # the data movers' 64-bit words
        rd, rdata = memory.add_reader("nand", width=64)

        conns = dict(
            i_s_op__valid=s_op.valid, o_s_op__ready=s_op.ready,
            i_s_op__payload=Cat(*[getattr(s_op, n) for n, _ in self.op_fields]),
            o_m_cpl__valid=m_cpl.valid, i_m_cpl__ready=m_cpl.ready,
            # without ECC the core's completion ends before the ecc_* fields (zero here)
            o_m_cpl__payload=Cat(*[getattr(m_cpl, n) for n, _ in self.cpl_fields
                                   if params.get("ecc") or not n.startswith("ecc_")]),
            i_geometry=self.geometry,
            i_timing=Cat(*[self.timing[n] for n, _ in self.timing_fields]),
            i_write_protect=self.write_protect, i_plane_slots=self.plane_slots,
            i_busy_timeout=self.busy_timeout, i_busy_now=self.busy_now,
            o_busy=self.busy, o_ecc_busy=self.ecc_busy,
            o_m_rd__valid=rd.valid, i_m_rd__ready=rd.ready, o_m_rd__payload=rd.addr,
            i_s_rdd__valid=rdata.valid, o_s_rdd__ready=rdata.ready,
            i_s_rdd__payload=rdata.data,
            o_m_wr__valid=wr.valid, i_m_wr__ready=wr.ready,
            o_m_wr__payload=Cat(wr.addr, wr.data, wr.strb),
        )
        if self.with_nvddr2:
            conns.update(i_nvddr2=self.nvddr2, i_nvddr2_timing=Cat(
                *[self.nvddr2_timing[n] for n, _ in self.nvddr2_fields]),
                i_dqs_cal_start=self.dqs_cal_start, i_dqs_cal_way=self.dqs_cal_way,
                i_dqs_cal_fallback=self.dqs_cal_fallback)
        self.pins = []
        sig = core.signature.members["ch"].signature     # the subsystem's channel
        for c in range(core.n_channels):
            pins = {}
            for name, member in sig.members.items():
                width = Shape.cast(member.shape).width
                s = Signal(width, name=f"nand_ch{c}_{name}")
                pins[name] = s
                d = "i" if member.flow == wiring.In else "o"
                conns[f"{d}_ch__{c}__{name}"] = s
            self.pins.append(pins)
        self._conns = conns

    def do_finalize(self):
        from migen import ClockSignal, ResetSignal
        conns = dict(self._conns)
        conns["i_clk"] = ClockSignal("sys")
        conns["i_rst"] = ResetSignal("sys")
        self.specials += Instance("nand_subsystem", **conns)

    def pin_ios(self):
        """Every ONFI pin signal, for the top level's port list."""
        return [s for pins in self.pins for s in pins.values()]
