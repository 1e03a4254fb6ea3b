# SPDX-License-Identifier: BSD-2-Clause
"""NvmeNarrowPort: a 64-bit view of a LitePCIe endpoint whose PHY is wider (128..512 bits).

The NVMe front end's control engines (BAR0, SQ fetch, CQ post, PRP walk, MSI-X) move a few
dwords per TLP and are written for a 64-bit crossbar. Behind a wider PHY they are handed this
view instead of the endpoint: it has the endpoint's interface as those engines use it (`phy`
with `data_width = 64` and the PHY's `id`, `max_request_size`, `max_payload_size`, `msi`,
MSI-X inputs; `crossbar.get_master_port()` / `get_slave_port()`; `crossbar.address_width`),
and every port it gives out is a width adapter on a real port of the wide crossbar:

- towards the link (master requests, slave completions): the 64-bit beats of one TLP are
  packed into wide beats, beat k in lanes 64k % W; a wide beat leaves when it is full or on
  the TLP's last beat (so a TLP of one narrow beat passes in the same cycle);
- from the link (master completions, slave requests): each wide beat is cut into the 64-bit
  beats that carry the TLP's dwords (from `len`: ceil(dwords left / 2), at least one), so
  the engine sees exactly the beats a 64-bit endpoint would give it.

This costs no link bandwidth worth counting: those TLPs are 1..16 dwords (an SQE is 16, a
CQE 4), and the data path (NvmeDataDma) is on the wide endpoint itself.

Parameters: endpoint (LitePCIeEndpoint with LitePCIeFixes, PHY data_width 128, 256 or 512).
"""

from litepcie.common import completion_layout, request_layout
from litepcie.core.common import LitePCIeMasterPort, LitePCIeSlavePort
from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Array, Cat, If, Mux, Signal

from rtl.nvme.nvme_common import check_param

__all__ = ["NvmeNarrowPort", "narrow_endpoint"]

NARROW = 64


def narrow_endpoint(endpoint):
    """`endpoint` itself when its PHY is 64 bits wide, else a new NvmeNarrowPort on it (the
    caller adds it as a submodule)."""
    if endpoint.phy.data_width == NARROW:
        return endpoint
    return NvmeNarrowPort(endpoint)


class _Phy:
    """The PHY as the narrow engines see it: the real one's signals, data_width 64."""
    data_width = NARROW

    def __init__(self, phy):
        self._phy = phy

    def __getattr__(self, name):
        return getattr(self._phy, name)


class _InternalPort:
    def __init__(self, sink, source, channel=None, address_decoder=None):
        self.sink, self.source = sink, source
        self.channel, self.address_decoder = channel, address_decoder


class _Crossbar:
    def __init__(self, owner, crossbar):
        self._owner, self._xbar = owner, crossbar
        self.address_width = crossbar.address_width
        self.data_width = NARROW

    def get_master_port(self, write_only=False, read_only=False):
        wide = self._xbar.get_master_port(write_only=write_only, read_only=read_only)
        aw = self.address_width
        req = stream.Endpoint(request_layout(NARROW, aw))        # engine -> link
        cpl = stream.Endpoint(completion_layout(NARROW))         # link -> engine
        self._owner._pack(req, wide.source)
        self._owner._unpack(wide.sink, cpl)
        return LitePCIeMasterPort(_InternalPort(sink=req, source=cpl, channel=wide.channel))

    def get_slave_port(self, address_decoder):
        wide = self._xbar.get_slave_port(address_decoder)
        req = stream.Endpoint(request_layout(NARROW))            # link -> engine
        cpl = stream.Endpoint(completion_layout(NARROW))         # engine -> link
        self._owner._unpack(wide.sink, req, data=wide.sink.we)    # a read carries no dwords
        self._owner._pack(cpl, wide.source)
        return LitePCIeSlavePort(_InternalPort(sink=cpl, source=req,
                                               address_decoder=address_decoder))


class NvmeNarrowPort(LiteXModule):
    """64-bit view of a wide endpoint (Verilog: inside its parent; no ports of its own)."""

    def __init__(self, endpoint):
        phy = getattr(endpoint, "phy", None)
        width = getattr(phy, "data_width", None)
        check_param("NvmeNarrowPort", "endpoint", endpoint,
                    width in (128, 256, 512) and hasattr(endpoint, "crossbar"),
                    "is not a LitePCIeEndpoint with PHY data_width 128, 256 or 512")
        self.wide_width = width
        self.ratio = width // NARROW
        self.phy = _Phy(phy)
        self.crossbar = _Crossbar(self, endpoint.crossbar)
        self._ssdlab_fixed = getattr(endpoint, "_ssdlab_fixed", False)

    def _pack(self, narrow, wide):
        """narrow (64-bit beats of a TLP) -> wide: lanes filled in order, out when full or
        last. Header fields are the ones of the beat that completes the wide beat (the engines
        hold them for a whole TLP)."""
        r = self.ratio
        held = [Signal(NARROW) for _ in range(r - 1)]
        idx = Signal(max=r)
        wfirst = Signal(reset=1)          # the next wide beat starts its TLP
        out = Signal()
        lanes = [Mux(idx == k, narrow.dat, held[k]) if k < r - 1 else narrow.dat
                 for k in range(r)]
        self.comb += [
            narrow.connect(wide, omit={"valid", "ready", "first", "dat"}),
            out.eq(narrow.last | (idx == r - 1)),
            wide.valid.eq(narrow.valid & out),
            wide.first.eq(wfirst),
            wide.dat.eq(Cat(*lanes)),
            narrow.ready.eq(~out | wide.ready),
        ]
        self.sync += If(narrow.valid & narrow.ready,
            *[If(idx == k, held[k].eq(narrow.dat)) for k in range(r - 1)],
            If(out,
                idx.eq(0),
                wfirst.eq(narrow.last),
            ).Else(
                idx.eq(idx + 1),
            )
        )

    def _unpack(self, wide, narrow, data=1):
        """wide -> narrow 64-bit beats, only those carrying the TLP's dwords (`data`: the TLP
        carries `len` dwords; else one beat)."""
        r = self.ratio
        k = Signal(max=r)
        rem = Signal(11)                  # dwords of the TLP not yet passed (before this beat)
        in_tlp = Signal()
        left = Signal(11)
        need = Signal(max=r + 1)          # narrow beats this wide beat carries
        self.comb += [
            left.eq(Mux(in_tlp, rem, Mux(data, wide.len, 0))),
            If(left >= 2 * r,
                need.eq(r)
            ).Else(
                need.eq(Mux(left == 0, 1, (left + 1) >> 1))
            ),
        ]
        end = Signal()
        self.comb += [
            wide.connect(narrow, omit={"valid", "ready", "first", "last", "dat"}),
            end.eq(k == need - 1),
            narrow.valid.eq(wide.valid),
            narrow.first.eq(wide.first & (k == 0)),
            narrow.last.eq(wide.last & end),
            narrow.dat.eq(Array(wide.dat[NARROW * i:NARROW * (i + 1)]
                                for i in range(r))[k]),
            wide.ready.eq(narrow.ready & end),
        ]
        self.sync += If(narrow.valid & narrow.ready,
            If(end,
                k.eq(0),
                in_tlp.eq(~wide.last),
                rem.eq(Mux(left > 2 * r, left - 2 * r, 0)),
            ).Else(
                k.eq(k + 1),
            )
        )
