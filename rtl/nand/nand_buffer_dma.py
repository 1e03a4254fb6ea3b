# SPDX-License-Identifier: BSD-2-Clause
"""Flash data movers between the channels of `nand_backend` and a 64-bit buffer memory
(Verilog module `nand_buffer_dma`).

Every channel streams bytes at its own bus rate; buffer memory moves 64-bit words. Per
channel, a program-data mover answers the scheduler's `m_wreq` {buffer, plane, length} with
`length` bytes read from buffer memory, and a read-data mover packs the `m_rdata` bytes of a
plane into words and writes them. The data of plane p of an op with buffer handle b lies at
byte address ((b + p * plane_slots) mod 2**16) * 4096 (4 KiB slots, the FTL's unit; the word
address wraps at the memory's size). The channels share one read port and one write port,
each round robin, so the movers need no more memory ports than a simple dual-port RAM has.
See rtl/nand/README.md ("nand_buffer_dma").
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, fifo, stream, wiring
from amaranth.lib.wiring import In, Out

from .nand_die_scheduler import BUFFER_BITS, rdata_layout, wreq_layout

__all__ = ["NandBufferDma", "channel_data_signature", "mem_wr_layout"]

SLOT_SHIFT = 12     # 4 KiB slots


def channel_data_signature(max_len):
    """One channel's data streams, as seen from the movers (the scheduler's, flipped)."""
    return wiring.Signature({
        "s_wreq": In(stream.Signature(wreq_layout(max_len))),
        "m_wdata": Out(stream.Signature(unsigned(8))),
        "s_rdata": In(stream.Signature(rdata_layout)),
    })


def mem_wr_layout(addr_width):
    return data.StructLayout({"addr": unsigned(addr_width), "data": unsigned(64),
                              "strb": unsigned(8)})


def _round_robin(m, requests, last, name):
    """The first of `requests` (a Value) after `last`, rotating; returns (any, pick)."""
    n = len(requests)
    pick = Signal(range(max(n, 2)), name=f"{name}_pick")
    doubled = Cat(requests, requests)
    for k in reversed(range(n)):
        with m.If(doubled.bit_select(last + 1 + k, 1)):
            m.d.comb += pick.eq(Mux(last + 1 + k >= n, last + 1 + k - n, last + 1 + k))
    return requests.any(), pick


class NandBufferDma(wiring.Component):
    """Flash data movers for `n_channels` channels on one buffer-memory read and write port.

    Parameters
    ----------
    n_channels : int, 1..32
    max_len : int, 1..65536
        The schedulers' max_len (largest plane transfer, bytes).
    addr_width : int, 9..29
        Buffer memory word (8-byte) address bits: the memory is 8 * 2**addr_width bytes.
    words : int, 2..16 (default 4)
        Program-data words buffered per channel (reads in flight count against it).

    Ports
    -----
    ch[i] : channel_data_signature(max_len): connect to nand_backend's ch[i] data streams
    plane_slots : in, 8 bits; slots between the data of consecutive planes
    m_rd : out stream of word addresses (read requests); `s_rdd` : in, their data, in request
        order, any latency, always accepted
    m_wr : out stream of mem_wr_layout(addr_width) (word writes with byte strobes)
    """

    def __init__(self, n_channels=18, max_len=18432, addr_width=21, words=4):
        for name, value, lo, hi in (("n_channels", n_channels, 1, 32),
                                    ("max_len", max_len, 1, 1 << 16),
                                    ("addr_width", addr_width, 9, 29), ("words", words, 2, 16)):
            if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
                self._MustUse__silence = True
                raise ValueError(f"NandBufferDma: {name} must be an int in {lo}..{hi}, "
                                 f"got {value!r}")
        self.n_channels, self.max_len = n_channels, max_len
        self.addr_width, self.words = addr_width, words
        super().__init__({
            "ch": Out(channel_data_signature(max_len)).array(n_channels),
            "plane_slots": In(8),
            "m_rd": Out(stream.Signature(unsigned(addr_width))),
            "s_rdd": In(stream.Signature(unsigned(64))),
            "m_wr": Out(stream.Signature(mem_wr_layout(addr_width))),
        })

    def _word_address(self, m, buffer, plane, name):
        """Word address of the first byte of (buffer, plane)."""
        slot = Signal(BUFFER_BITS, name=f"{name}_slot")
        m.d.comb += slot.eq(buffer + plane * self.plane_slots)
        return (slot << (SLOT_SHIFT - 3))[:self.addr_width]

    def elaborate(self, platform):
        m = Module()
        n, aw, words = self.n_channels, self.addr_width, self.words
        len_bits = self.max_len.bit_length()
        cnt_bits = (words + 1).bit_length()

        # -- program data: buffer memory -> channel ------------------------------------------
        rd_want = Signal(n)         # channel i may issue a read request now
        rd_addr = [Signal(aw, name=f"rd_addr{i}") for i in range(n)]
        rd_fire = Signal()
        rd_last = Signal(range(max(n, 2)))
        rd_any, rd_pick = _round_robin(m, rd_want, rd_last, "rd")
        # channel of each read in flight, in order (the data comes back in order, one cycle
        # or more after the request: SyncFIFO shows an entry the cycle after its write, where
        # SyncFIFOBuffered would take two and route the first data word to a stale channel)
        route = m.submodules.route = fifo.SyncFIFO(width=max(1, (n - 1).bit_length()),
                                                   depth=2 * words)
        m.d.comb += [
            self.m_rd.valid.eq(rd_any & route.w_rdy),
            rd_fire.eq(self.m_rd.valid & self.m_rd.ready),
            route.w_en.eq(rd_fire),
            route.w_data.eq(rd_pick),
            self.s_rdd.ready.eq(1),
            route.r_en.eq(self.s_rdd.valid),
        ]
        for i in range(n):
            with m.If(rd_pick == i):
                m.d.comb += self.m_rd.payload.eq(rd_addr[i])
        with m.If(rd_fire):
            m.d.sync += rd_last.eq(rd_pick)

        for i in range(n):
            port = self.ch[i]
            wq = m.submodules[f"wq{i}"] = fifo.SyncFIFOBuffered(width=64, depth=words)
            credit = Signal(cnt_bits, name=f"credit{i}")     # words requested, not yet used
            to_request = Signal(len_bits, name=f"to_request{i}")   # words still to request
            left = Signal(len_bits, name=f"left{i}")          # bytes still to deliver
            lane = Signal(3, name=f"lane{i}")
            busy = Signal(name=f"wbusy{i}")
            mine = rd_fire & (rd_pick == i)
            back = self.s_rdd.valid & (route.r_data == i)
            used = Signal(name=f"used{i}")
            m.d.comb += [
                rd_want[i].eq(busy & (to_request != 0) & (credit < words)),
                wq.w_en.eq(back),
                wq.w_data.eq(self.s_rdd.payload),
            ]
            m.d.sync += credit.eq(credit + mine - used)
            with m.If(mine):
                m.d.sync += [rd_addr[i].eq(rd_addr[i] + 1), to_request.eq(to_request - 1)]
            # a request starts once the previous one has delivered all its bytes
            wreq = port.s_wreq.payload
            m.d.comb += port.s_wreq.ready.eq(~busy)
            with m.If(port.s_wreq.valid & ~busy & (wreq.length != 0)):
                m.d.sync += [busy.eq(1), left.eq(wreq.length), lane.eq(0),
                             to_request.eq((wreq.length + 7) >> 3),
                             rd_addr[i].eq(self._word_address(m, wreq.buffer, wreq.plane,
                                                              f"w{i}"))]
            # bytes out, little endian within each word
            m.d.comb += [port.m_wdata.valid.eq(busy & wq.r_rdy),
                         port.m_wdata.payload.eq(wq.r_data.word_select(lane, 8))]
            with m.If(port.m_wdata.valid & port.m_wdata.ready):
                m.d.sync += [lane.eq(lane + 1), left.eq(left - 1)]
                with m.If((lane == 7) | (left == 1)):
                    m.d.comb += [wq.r_en.eq(1), used.eq(1)]
                with m.If(left == 1):
                    m.d.sync += busy.eq(0)

        # -- read data: channel -> buffer memory ---------------------------------------------
        wr_valid = Signal(n)
        wr_last = Signal(range(max(n, 2)))
        wr_any, wr_pick = _round_robin(m, wr_valid, wr_last, "wr")
        outs = []
        for i in range(n):
            port = self.ch[i]
            oq = m.submodules[f"oq{i}"] = fifo.SyncFIFOBuffered(width=aw + 64 + 8, depth=2)
            outs.append(oq)
            word = Signal(64, name=f"pack{i}")
            strb = Signal(8, name=f"strb{i}")
            addr = Signal(aw, name=f"waddr{i}")
            lane = Signal(3, name=f"plane_lane{i}")
            started = Signal(name=f"started{i}")   # inside a plane's data
            beat = port.s_rdata.payload
            first_addr = self._word_address(m, beat.buffer, beat.plane, f"r{i}")
            cur_addr = Mux(started, addr, first_addr)
            byte_word = Signal(64, name=f"byte_word{i}")
            byte_strb = Signal(8, name=f"byte_strb{i}")
            m.d.comb += [byte_word.eq(beat.data << (lane * 8)),
                         byte_strb.eq(Const(1, 8) << lane)]
            full = (lane == 7) | beat.last
            m.d.comb += port.s_rdata.ready.eq(~full | oq.w_rdy)
            with m.If(port.s_rdata.valid & port.s_rdata.ready):
                with m.If(full):
                    m.d.comb += [oq.w_en.eq(1),
                                 oq.w_data.eq(Cat(cur_addr, word | byte_word, strb | byte_strb))]
                    m.d.sync += [word.eq(0), strb.eq(0), lane.eq(0), addr.eq(cur_addr + 1),
                                 started.eq(~beat.last)]
                with m.Else():
                    m.d.sync += [word.eq(word | byte_word), strb.eq(strb | byte_strb),
                                 lane.eq(lane + 1), addr.eq(cur_addr), started.eq(1)]
            m.d.comb += wr_valid[i].eq(oq.r_rdy)
        for i, oq in enumerate(outs):
            with m.If(wr_pick == i):
                m.d.comb += [self.m_wr.payload.eq(oq.r_data), oq.r_en.eq(self.m_wr.ready)]
        m.d.comb += self.m_wr.valid.eq(wr_any)
        with m.If(self.m_wr.valid & self.m_wr.ready):
            m.d.sync += wr_last.eq(wr_pick)
        return m
