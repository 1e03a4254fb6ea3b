# SPDX-License-Identifier: BSD-2-Clause
"""Test top of the flash array run: `nand_backend` with a `nand_bist` on every channel's data
streams (program data generated, read data checked in the simulation, at simulator speed),
so the cocotb side only moves ops and completions. The ONFI pins of every channel are ports;
`nand_backend_array_tb.sv` (written by test_nand_backend_array.write_tb) puts nand_die_fast
models on them. ecc_t > 0 builds the back end with nand_ecc on every channel (the BCH code
ecc_m, ecc_t, ecc_data_bytes, ecc_parity_bytes), so the BIST programs and checks data bytes
while the dies hold codewords; rber_base only names the dies' raw bit error rate in the
build (write_tb uses it).
"""

from amaranth.hdl import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.nand.nand_backend import NandBackend
from rtl.nand.nand_bist import NandBist
from rtl.nand.nand_die_scheduler import (
    ChannelCompletion,
    FlashCompletion,
    flash_op_layout,
    geometry_layout,
)
from rtl.nand.nand_subsystem import PINS, pins_signature
from rtl.nand.onfi_sdr_engine import timing_layout


class NandBackendArrayTop(wiring.Component):
    def __init__(self, n_channels=18, n_ways=4, max_len=17408, row_cycles=3, queue_depth=4,
                 max_planes=2, ecc_m=0, ecc_t=0, ecc_data_bytes=0, ecc_parity_bytes=0,
                 rber_base=0.0, ecc_gate_clocks=False):
        self.params = dict(n_channels=n_channels, n_ways=n_ways, max_len=max_len,
                           row_cycles=row_cycles, queue_depth=queue_depth,
                           max_planes=max_planes)
        self.ecc = (dict(m=ecc_m, t=ecc_t, data_bytes=ecc_data_bytes,
                         parity_bytes=ecc_parity_bytes, gate_clocks=ecc_gate_clocks)
                    if ecc_t else None)
        ch_bits = max(1, (n_channels - 1).bit_length())
        super().__init__({
            "s_op": In(stream.Signature(flash_op_layout(max_len, ch_bits))),
            "m_cpl": Out(stream.Signature(FlashCompletion if self.ecc else ChannelCompletion)),
            "geometry": In(geometry_layout),
            "timing": In(timing_layout(8)),
            "write_protect": In(1),
            "check": In(1, init=1),
            "fixed": In(32),
            "busy": Out(1),
            "bist_written": Out(32),
            "bist_read": Out(32),
            "bist_mismatches": Out(32),
            "ch": Out(pins_signature(n_ways)).array(n_channels),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.params
        be = m.submodules.backend = NandBackend(**p, ecc=self.ecc)
        wiring.connect(m, wiring.flipped(self.s_op), be.s_op)
        wiring.connect(m, wiring.flipped(self.m_cpl), be.m_cpl)
        m.d.comb += [be.geometry.eq(self.geometry), be.timing.eq(self.timing),
                     be.write_protect.eq(self.write_protect), self.busy.eq(be.busy)]
        written, read, bad = 0, 0, 0
        for i in range(p["n_channels"]):
            bist = NandBist(p["max_len"])
            m.submodules[f"bist{i}"] = bist
            port = be.ch[i]
            wiring.connect(m, port.m_wreq, bist.s_wreq)
            wiring.connect(m, bist.m_wdata, port.s_wdata)
            wiring.connect(m, port.m_rdata, bist.s_rdata)
            m.d.comb += [bist.check.eq(self.check), bist.fixed.eq(self.fixed)]
            written, read, bad = written + bist.written, read + bist.read, bad + bist.mismatches
            for name in PINS:
                if name in ("dq_i", "rb_n"):
                    m.d.comb += getattr(port, name).eq(getattr(self.ch[i], name))
                else:
                    m.d.comb += getattr(self.ch[i], name).eq(getattr(port, name))
        m.d.comb += [self.bist_written.eq(written), self.bist_read.eq(read),
                     self.bist_mismatches.eq(bad)]
        return m
