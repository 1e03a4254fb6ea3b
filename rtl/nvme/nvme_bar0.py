# SPDX-License-Identifier: BSD-2-Clause
"""NvmeBar0: BAR0 memory requests from LitePCIe's crossbar to the NVMe registers' AXI4-Lite.

The host's MMIO to the controller registers and doorbells arrives as memory read / write TLPs
on a LitePCIe crossbar slave port; this core turns each into one 64-bit AXI4-Lite access to
`rtl.nvme.nvme_regs.NvmeRegs` and answers reads with a completion.

Supported requests are what the Linux nvme driver and user-space drivers issue: 1 DW (readl /
writel) anywhere, and 2 DW (readq / writeq) at a qword-aligned offset. Anything else, i.e.
longer than 2 DW or a 2 DW access crossing a qword, is a request the register block's
programming model does not support: a read gets a completion with status UR (Unsupported
Request; LitePCIe encodes an error completion as UR, Length 0, no data) and a write is dropped
(writes are posted: no completion exists to carry an error). Either way every beat of the
request is consumed, so a bad request never stalls the port.

Completions carry the request's tag and requester ID, the function's ID (`phy.id`) as
completer ID, Length = the request's length, Byte Count = 4 * Length and Lower Address = the
request's address bits 6:0, which is right for the full-dword accesses above.

2 DW completions need `rtl.nvme.litepcie_fixes.LitePCIeFixes` on the endpoint: LitePCIe
2024.12's packetizer otherwise sends every single-beat completion as 1 DW.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect.axi import AXILiteInterface
from migen import FSM, Cat, If, Mux, NextState, NextValue, Signal

from rtl.nvme.litepcie_fixes import require

__all__ = ["NvmeBar0"]

# Helpers -----------------------------------------------------------------------------------------


def _check(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"NvmeBar0: {name}={value!r} out of range {lo}..{hi}")




# Core --------------------------------------------------------------------------------------------

class NvmeBar0(LiteXModule):
    """BAR0 memory requests -> 64-bit AXI4-Lite master (for NvmeRegs' s_axil).

    Parameters:
      endpoint        LitePCIeEndpoint whose PHY has data_width 64, with LitePCIeFixes
                      added after it (2 DW completions).
      address_width   (13..32, default 32): AXI-Lite address bits; BAR0 offsets above are
                      dropped (the BAR is at most 2**address_width bytes).
      address_decoder crossbar address decoder of this slave port (default: BAR0 offsets
                      below 2**address_width). A decoder must read the address: a constant
                      (LitePCIe's usual `lambda a: 1`) becomes an always @(*) block without
                      inputs, which Verilator never evaluates, so nothing would be routed.

    Interfaces:
      m_axil          AXI4-Lite master, 64-bit data; addresses are qword aligned, 32-bit
                      accesses select their dword with the strobes.
      bad_req         pulse: a request was refused (UR completion or dropped write).
    """
    def __init__(self, endpoint, address_width=32, address_decoder=None):
        # Parameters checks.
        _check("address_width", address_width, 13, 32)
        data_width = endpoint.phy.data_width
        if data_width != 64:
            raise ValueError(f"NvmeBar0: endpoint data_width={data_width} unsupported, must "
                             "be 64")
        require(endpoint, "NvmeBar0")

        self.m_axil  = m_axil = AXILiteInterface(data_width=64, address_width=address_width)
        self.bad_req = Signal()

        # # #

        if address_decoder is None:
            def address_decoder(a):
                return (a >> address_width) == 0
        port = endpoint.crossbar.get_slave_port(address_decoder)
        sink, source = port.sink, port.source

        # Request, latched from its first beat.
        we     = Signal()
        adr    = Signal(32)
        length = Signal(10)
        tag    = Signal(8)
        req_id = Signal(16)
        dat    = Signal(64)
        rdata  = Signal(64)
        err    = Signal()
        # 1 DW anywhere, 2 DW inside one qword; nothing else.
        supported = (length == 1) | ((length == 2) & ~adr[2])
        lane      = adr[2]          # 32-bit lane of a 1 DW access in the 64-bit word.

        self.comb += [
            m_axil.aw.addr.eq(Cat(0, 0, 0, adr[3:address_width])),
            m_axil.ar.addr.eq(Cat(0, 0, 0, adr[3:address_width])),
            # LitePCIe puts the first payload dword in bits 31:0 (qword_aligned=False).
            m_axil.w.data.eq(Mux(length == 1, Cat(dat[:32], dat[:32]), dat)),
            m_axil.w.strb.eq(Mux(length == 1, Mux(lane, 0xF0, 0x0F), 0xFF)),
            source.first.eq(1),
            source.last.eq(1),
            source.tag.eq(tag),
            source.req_id.eq(req_id),
            source.cmp_id.eq(endpoint.phy.id),
            source.adr.eq(adr),
            source.err.eq(err),
            source.len.eq(Mux(err, 0, length)),     # A Cpl without data has Length 0.
            source.dat.eq(Mux(length == 1, Mux(lane, rdata[32:], rdata[:32]), rdata)),
        ]

        aw_done = Signal()
        w_done  = Signal()
        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            sink.ready.eq(1),
            If(sink.valid & sink.first,
                NextValue(we, sink.we),
                NextValue(adr, sink.adr),
                NextValue(length, sink.len),
                NextValue(tag, sink.tag),
                NextValue(req_id, sink.req_id),
                NextValue(dat, sink.dat),
                NextValue(err, 0),
                NextValue(aw_done, 0),
                NextValue(w_done, 0),
                If(sink.last,
                    NextState("DECODE")
                ).Else(
                    NextState("DRAIN")
                )
            )
        )
        # Longer requests: take the remaining beats, then refuse in DECODE.
        fsm.act("DRAIN",
            sink.ready.eq(1),
            If(sink.valid & sink.last,
                NextState("DECODE")
            )
        )
        fsm.act("DECODE",
            If(~supported,
                self.bad_req.eq(1),
                NextValue(err, 1),
                If(we,
                    NextState("IDLE")
                ).Else(
                    NextState("COMPLETION")
                )
            ).Elif(we,
                NextState("WRITE")
            ).Else(
                NextState("READ")
            )
        )
        fsm.act("WRITE",
            m_axil.aw.valid.eq(~aw_done),
            m_axil.w.valid.eq(~w_done),
            If(m_axil.aw.ready, NextValue(aw_done, 1)),
            If(m_axil.w.ready, NextValue(w_done, 1)),
            If((aw_done | m_axil.aw.ready) & (w_done | m_axil.w.ready),
                NextState("WRITE-RESP")
            )
        )
        fsm.act("WRITE-RESP",
            m_axil.b.ready.eq(1),
            If(m_axil.b.valid,
                NextState("IDLE")
            )
        )
        fsm.act("READ",
            m_axil.ar.valid.eq(1),
            If(m_axil.ar.ready,
                NextState("READ-DATA")
            )
        )
        fsm.act("READ-DATA",
            m_axil.r.ready.eq(1),
            If(m_axil.r.valid,
                NextValue(rdata, m_axil.r.data),
                NextValue(err, m_axil.r.resp != 0),     # SLVERR/DECERR: refuse as well.
                NextState("COMPLETION")
            )
        )
        fsm.act("COMPLETION",
            source.valid.eq(1),
            If(source.ready,
                NextState("IDLE")
            )
        )
