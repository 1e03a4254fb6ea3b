# SPDX-License-Identifier: BSD-2-Clause
"""BufferMemory: the SoC's data buffer memory, shared by the NVMe data DMA, the flash data
movers, the copy engine and the CPU.

On-chip memory (a simple dual-port RAM: one write port, one read port, words of `data_width`
bits: the NVMe data path's width, so the front end moves a word a cycle), chosen
over LiteDRAM for the simulated drive: the capacity-scaled drives need a few MiB of buffers,
which Verilator models as one array, and a DRAM controller's refresh and bank timing would add
simulation cost without changing what the buffer memory is measured for. A board target with
more buffers than block RAM holds swaps this module for a LiteDRAM port pair (issue 7).

Clients attach with `add_writer()` / `add_reader()`; each port is arbitrated round robin
among its clients, without bubbles (the grant is combinatorial). A reader's data comes back
one cycle after its request is accepted, in order, and must be accepted at once.

A client may ask for a narrower port (`width` 32 .. data_width, a power of two): its
addresses count its own words, the low bits select a lane of the memory word; a write goes
to that lane by its strobes (the data is replicated across the word), a read returns that
lane of the word (the lane is kept for the cycle the data comes back). The NAND data movers
(64 bits) and the CPU window (32 bits) are narrow clients; a narrow port moves one narrow word
per grant, which is what those clients need.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Array, Case, Cat, Constant, If, Memory, Replicate, Signal

__all__ = ["BufferMemory", "wr_layout", "rd_layout", "rdata_layout", "rr_pick"]


def wr_layout(aw, width=64):
    return [("addr", aw), ("data", width), ("strb", width // 8)]


def rd_layout(aw):
    return [("addr", aw)]


def rdata_layout(width=64):
    return [("data", width)]


def _log2(n):
    return (n - 1).bit_length()


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
    """Parameters: size (bytes, power of two, 4096..2**32): the memory is size / (data_width
    / 8) words; data_width (64, 128, 256 or 512, default 64): the word width.
    Attributes: addr_width (word address bits), data_width; port_addr_width(width)."""

    def __init__(self, size=16 << 20, data_width=64):
        if not isinstance(size, int) or size < 4096 or size & (size - 1) or size > 1 << 32:
            raise ValueError(f"BufferMemory: size={size!r} is not a power of two in "
                             f"4096..2**32 bytes")
        if data_width not in (64, 128, 256, 512):
            raise ValueError(f"BufferMemory: data_width={data_width!r} not in "
                             "(64, 128, 256, 512)")
        self.size = size
        self.data_width = data_width
        self.addr_width = (size // (data_width // 8) - 1).bit_length()
        self._writers, self._readers = [], []

    def _width(self, name, width):
        width = self.data_width if width is None else width
        if width not in (32, 64, 128, 256, 512) or width > self.data_width:
            raise ValueError(f"BufferMemory: port {name!r} width={width!r} is not a power of "
                             f"two in 32..{self.data_width}")
        return width

    def port_addr_width(self, width):
        """Address bits of a port `width` bits wide (its own words)."""
        return self.addr_width + (self.data_width // width - 1).bit_length()

    def add_writer(self, name, width=None):
        """A write port `width` bits wide (default: the memory's)."""
        width = self._width(name, width)
        ep = stream.Endpoint(wr_layout(self.port_addr_width(width), width), name=f"{name}_wr")
        self._writers.append((ep, width))
        return ep

    def add_reader(self, name, width=None):
        """Returns (request endpoint, data endpoint) of a read port `width` bits wide."""
        width = self._width(name, width)
        req = stream.Endpoint(rd_layout(self.port_addr_width(width)), name=f"{name}_rd")
        rsp = stream.Endpoint(rdata_layout(width), name=f"{name}_rdata")
        self._readers.append((req, rsp, width))
        return req, rsp

    def do_finalize(self):
        aw, dw = self.addr_width, self.data_width
        mem = Memory(dw, 2**aw, name="buf_mem")
        wp = mem.get_port(write_capable=True, we_granularity=8)
        rp = mem.get_port()
        self.specials += mem, wp, rp

        # Every port as a full-width one: narrow ones by lane.
        def lane_bits(width):
            return (dw // width - 1).bit_length()

        def as_wide(w, width):
            """A writer's (word address, data, byte strobes) on the full-width port."""
            k = lane_bits(width)
            return (w.addr[k:], Replicate(w.data, dw // width),
                    # Shift amounts as Cat, not products: Verilog sizes a product in a shift
                    # amount by its operands and would drop its top bits.
                    w.strb << Cat(Constant(0, _log2(width // 8)), w.addr[:k]) if k else w.strb)

        rs = []
        for r, rsp, width in self._readers:
            k = lane_bits(width)
            lane = Signal(max(k, 1))
            self.comb += rsp.data.eq(
                (rp.dat_r >> Cat(Constant(0, _log2(width)), lane))[:width] if k else rp.dat_r)
            if k:
                self.sync += If(r.valid & r.ready, lane.eq(r.addr[:k]))
            rs.append((r, rsp, k))

        # Write port. The picked writer's address, data and strobes go to the port only in a
        # cycle with a write (idle, the port holds zeros: no strobe, nothing written), so the
        # simulator does not rebuild the wide data word of an idle port every cycle.
        ws = self._writers
        w_any, w_pick, w_adv = rr_pick(self, [w.valid for w, _ in ws], "wr")
        cases = {}
        for i, (w, width) in enumerate(ws):
            adr, dat, strb = as_wide(w, width)
            cases[i] = [wp.adr.eq(adr), wp.dat_w.eq(dat), wp.we.eq(strb)]
        self.comb += [
            If(w_any, Case(w_pick, cases)),
            w_adv.eq(w_any),
        ]
        for i, (w, _) in enumerate(ws):
            self.comb += w.ready.eq(w_pick == i)

        # Read port: data one cycle after the request, to the reader that made it.
        r_any, r_pick, r_adv = rr_pick(self, [r.valid for r, _, _ in rs], "rd")
        r_sel = Array([r.addr[k:] for r, _, k in rs])[r_pick]
        r_valid = Signal()
        r_who = Signal(max=max(len(rs), 2))
        self.comb += [rp.adr.eq(r_sel), r_adv.eq(r_any)]
        self.sync += [r_valid.eq(r_any), r_who.eq(r_pick)]
        for i, (req, rsp, _) in enumerate(rs):
            self.comb += [
                req.ready.eq(r_pick == i),
                rsp.valid.eq(r_valid & (r_who == i)),
            ]
