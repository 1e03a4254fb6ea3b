# SPDX-License-Identifier: BSD-2-Clause
"""BufferMemory: the SoC's data buffer memory, shared by the NVMe data DMA, the flash data
movers, the copy engine and the CPU.

On-chip memory (a simple dual-port RAM: one write port, one read port, 64-bit words), chosen
over LiteDRAM for the simulated drive: the capacity-scaled drives need a few MiB of buffers,
which Verilator models as one array, and a DRAM controller's refresh and bank timing would add
simulation cost without changing what the buffer memory is measured for. A board target with
more buffers than block RAM holds swaps this module for a LiteDRAM port pair (issue 7).

Clients attach with `add_writer()` / `add_reader()`; each port is arbitrated round robin
among its clients, without bubbles (the grant is combinatorial). A reader's data comes back
one cycle after its request is accepted, in order, and must be accepted at once.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Array, Case, Cat, If, Memory, Signal

__all__ = ["BufferMemory", "wr_layout", "rd_layout", "rdata_layout", "rr_pick"]


def wr_layout(aw):
    return [("addr", aw), ("data", 64), ("strb", 8)]


def rd_layout(aw):
    return [("addr", aw)]


def rdata_layout():
    return [("data", 64)]


def rr_pick(module, requests, name):
    """Round robin among `requests` (list of Signals): returns (any, pick, advance) where
    `advance` (to be driven by the caller) moves the priority past `pick`."""
    n = len(requests)
    last = Signal(max=max(n, 2), name=f"{name}_last")
    pick = Signal(max=max(n, 2), name=f"{name}_pick")
    advance = Signal(name=f"{name}_advance")
    req = Cat(*requests)
    cases = {}
    for i in range(n):
        chain = []
        for j in reversed(range(i + 1, i + 1 + n)):
            t = j % n
            chain = [If(req[t], pick.eq(t)).Else(*chain)]
        cases[i] = chain
    module.comb += Case(last, cases)
    module.sync += If(advance, last.eq(pick))
    return req != 0, pick, advance


class BufferMemory(LiteXModule):
    """Parameters: size (bytes, power of two, 4096..2**32): the memory is size / 8 words.
    Attributes: addr_width (word address bits)."""

    def __init__(self, size=16 << 20):
        if not isinstance(size, int) or size < 4096 or size & (size - 1) or size > 1 << 32:
            raise ValueError(f"BufferMemory: size={size!r} is not a power of two in "
                             f"4096..2**32 bytes")
        self.size = size
        self.addr_width = (size // 8 - 1).bit_length()
        self._writers, self._readers = [], []

    def add_writer(self, name):
        ep = stream.Endpoint(wr_layout(self.addr_width), name=f"{name}_wr")
        self._writers.append(ep)
        return ep

    def add_reader(self, name):
        """Returns (request endpoint, data endpoint)."""
        req = stream.Endpoint(rd_layout(self.addr_width), name=f"{name}_rd")
        rsp = stream.Endpoint(rdata_layout(), name=f"{name}_rdata")
        self._readers.append((req, rsp))
        return req, rsp

    def do_finalize(self):
        aw = self.addr_width
        mem = Memory(64, 2**aw, name="buf_mem")
        wp = mem.get_port(write_capable=True, we_granularity=8)
        rp = mem.get_port()
        self.specials += mem, wp, rp

        # Write port.
        ws = self._writers
        w_any, w_pick, w_adv = rr_pick(self, [w.valid for w in ws], "wr")
        w_sel = Array(ws)[w_pick]
        self.comb += [
            wp.adr.eq(w_sel.addr), wp.dat_w.eq(w_sel.data),
            If(w_any, wp.we.eq(w_sel.strb)),
            w_adv.eq(w_any),
        ]
        for i, w in enumerate(ws):
            self.comb += w.ready.eq(w_pick == i)

        # Read port: data one cycle after the request, to the reader that made it.
        rs = self._readers
        r_any, r_pick, r_adv = rr_pick(self, [r.valid for r, _ in rs], "rd")
        r_sel = Array([r for r, _ in rs])[r_pick]
        r_valid = Signal()
        r_who = Signal(max=max(len(rs), 2))
        self.comb += [rp.adr.eq(r_sel.addr), r_adv.eq(r_any)]
        self.sync += [r_valid.eq(r_any), r_who.eq(r_pick)]
        for i, (req, rsp) in enumerate(rs):
            self.comb += [
                req.ready.eq(r_pick == i),
                rsp.valid.eq(r_valid & (r_who == i)),
                rsp.data.eq(rp.dat_r),
            ]
