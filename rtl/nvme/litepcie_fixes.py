# SPDX-License-Identifier: BSD-2-Clause
"""LitePCIeFixes: corrections to LitePCIe 2024.12's TLP packetizer and depacketizer, applied once
per endpoint.

Three defects put malformed TLPs on the wire; the first two were found by the cocotbext-pcie
host's checks (tests/system), the third when the data path grew past 64 bits. A fourth cuts
received TLPs short:

- Single-beat completions: the packetizer marks every completion with first & last as 1 DW
  (be = 0x0F), so a 2 DW read completion (the Linux driver's readq of CAP) loses its second
  dword and an error completion (Length 0) carries a stray one. Fixed by setting be from the
  completion's Length (0..data_width / 32 DW). Multi-beat completions are untouched.
- Memory write byte enables: the packetizer marks every beat of an MWr longer than 1 DW as
  full, and its header inserters end the TLP from the byte enables, so an MWr whose last beat
  is not full carries stray dwords (at 256 bits a 4 DW CQE write gets 3 more). Fixed by
  setting the last beat's be from Length (dwords (Length - 1) % (data_width / 32) + 1).
- 3DW/4DW header selection: LitePCIeTLPHeaderInserter3DWs4DWs picks its inserter from the fmt
  of the TLP *at its sink*. A 3DW TLP ending in a trailing beat (an MWr32 of 4 DW on 64 bits)
  lets the next TLP reach the sink before that beat leaves; if the next one is 4DW (MWr64),
  the mux switches mid-TLP and the two are merged under backpressure. Fixed by holding the
  selecting fmt of the TLP in flight until its last beat.

- Completion/request depacketizer, trailing beat: the header extracters (every width) drop the
  3 header dwords by taking lanes 3.. of a beat and lanes 0..2 of the next, and end the TLP
  with the beat that takes the sink's last beat. When that last beat carries more than 3
  dwords (3 % lanes + 1 or more at 64 bits), the dwords past its lane 2 are lost: a
  completion of D dwords whose 3 + D do not end in lanes 0..2 of a beat comes out short (at
  512 bits a PRP list completion of 9..14 entries lost entries 8..: the drive's
  test_random_stream corruption). Fixed by holding the TLP open on that beat and ending it
  with one more beat from the extracter's register (the path it already takes for a TLP
  whose header beat is its last); lanes taken from the sink on such a beat get be = 0.

All override assignments inside the endpoint, so this module must be added to the design
*after* the endpoint (Migen keeps the last assignment), before it is finalized. Cores that
depend on the fixes call `require(endpoint)`, which fails elaboration naming the missing
module. The right long-term home is LitePCIe itself; remove this once the pinned release
carries these fixes.
"""

from litepcie.tlp.packetizer import LitePCIeTLPHeaderInserter3DWs4DWs
from litex.gen import LiteXModule
from migen import Case, If, Mux, NextState, NextValue, Signal
from migen.fhdl.structure import _Assign, _Operator

__all__ = ["LitePCIeFixes", "require"]


def require(endpoint, core):
    """Elaboration check for cores relying on the fixes: `core` names the caller."""
    if not getattr(endpoint, "_ssdlab_fixed", False):
        raise ValueError(f"{core}: endpoint has no LitePCIeFixes; add "
                         "LitePCIeFixes(endpoint) to the design right after the endpoint")


class LitePCIeFixes(LiteXModule):
    """Add once, right after `endpoint` (a LitePCIeEndpoint with a 64..512-bit PHY)."""
    def __init__(self, endpoint):
        if getattr(endpoint, "_ssdlab_fixed", False):
            raise ValueError("LitePCIeFixes: already applied to this endpoint")
        data_width = endpoint.phy.data_width
        if data_width not in (64, 128, 256, 512):
            raise ValueError(f"LitePCIeFixes: endpoint data_width={data_width} not in "
                             "(64, 128, 256, 512)")
        endpoint._ssdlab_fixed = True
        lanes = data_width // 32

        # # #

        # Completion byte enables from Length.
        cmp = getattr(endpoint, "packetizer", None) or endpoint.cmp_packetizer
        sink, tlp = cmp.cmp_sink, cmp.tlp_cmp
        self.comb += If(sink.first & sink.last,
            Case(sink.len, {**{i: tlp.be.eq((1 << 4 * i) - 1) for i in range(lanes)},
                            "default": tlp.be.eq((1 << 4 * lanes) - 1)})
        )

        # Memory write byte enables on the last beat, from Length.
        req = getattr(endpoint, "packetizer", None) or endpoint.req_packetizer
        rs, rt = req.req_sink, req.tlp_req
        tail = Signal(max=lanes + 1)
        self.comb += [
            tail.eq(Mux(rs.len[:lanes.bit_length() - 1] == 0, lanes,
                        rs.len[:lanes.bit_length() - 1])),
            If(rs.we & rs.last & (rs.len > 1),
                Case(tail, {i: rt.be.eq((1 << 4 * i) - 1) for i in range(1, lanes + 1)})
            ),
        ]

        # 3DW/4DW selection held for a whole TLP.
        inserter = next(m for _, m in req._submodules
                        if isinstance(m, LitePCIeTLPHeaderInserter3DWs4DWs))
        # The selecting fmt is the one `tlp_raw_d.connect(inserter.sink)` copies into sink.fmt.
        fmt = next(st.r for st in req._fragment.comb
                   if isinstance(st, _Assign) and st.l is inserter.sink.fmt)
        src = inserter.source
        in_tlp = Signal()
        held = Signal(len(fmt))
        self.sync += If(src.valid & src.ready,
            in_tlp.eq(~src.last),
            If(~in_tlp, held.eq(fmt)),
        )
        self.comb += If(in_tlp, fmt.eq(held))

        # Depacketizer header extracters: a trailing beat when the last one carries > 3 dwords.
        for name in ("depacketizer", "req_depacketizer", "cmp_depacketizer"):
            dep = getattr(endpoint, name, None)
            if dep is not None:
                self._fix_extracter(dep.header_extracter, lanes)

    def _fix_extracter(self, ext, lanes):
        fsm, sink, src = ext.fsm, ext.sink, ext.source
        if fsm.finalized:
            raise ValueError("LitePCIeFixes: add it right after the endpoint, before finalize")
        # `last` (the sink's last beat is already taken: emit one more beat from the register)
        # is the extracter's own; find it in COPY's `source.last.eq(sink.last | last)`.
        last = next(st.r.operands[1] for st in fsm.actions["COPY"]
                    if isinstance(st, _Assign) and st.l is src.last
                    and isinstance(st.r, _Operator) and st.r.op == "|")
        h = 3 % lanes                       # first sink lane not taken by the current beat
        extra = Signal()                    # the sink's last beat holds dwords past lane h - 1
        self.comb += extra.eq(sink.valid & sink.last & (sink.be[4 * h:4 * h + 4] != 0))
        # Appended to COPY: in the generated Verilog COPY's own `If(source.last, NextState(
        # "IDLE"))` reads source.last before this override (one always block, in order), so
        # the state is kept here explicitly too.
        fsm.act("COPY",
            src.last.eq((sink.last & ~extra) | last),
            If(src.valid & src.ready & extra & ~last,
                NextValue(last, 1),
                NextState("COPY")
            )
        )
        s = lanes - h                       # output lanes s.. come from the sink's beat
        self.comb += If(last, src.be[4 * s:].eq(0))
