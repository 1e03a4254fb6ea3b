# SPDX-License-Identifier: BSD-2-Clause
"""NvmeDataDma: moves NVMe command data between host memory and the data buffer by PCIe DMA.

It takes the segments of NvmePrpWalk (`prp_seg_layout`: host address, byte count within one
4 KiB page, byte offset in the transfer, buffer handle, direction, status) and moves them:

- host -> buffer (NVM Write, `to_host = 0`): memory reads through a read-only LitePCIe
  crossbar master port, split at the negotiated max read request size (naturally aligned, so
  never across 4 KiB), up to the endpoint's `max_pending_requests` outstanding. LitePCIe's TLP
  controller hands back each request's completions in request order; each completion's
  dwords are realigned to the buffer and written through the buffer write port `m_bw`. A read
  is issued only when the core's completion FIFO has room reserved for all of its data, so
  backpressure on `m_bw` never stalls the crossbar's completion path.
- buffer -> host (NVM Read, `to_host = 1`): buffer words are read through `m_br` / `s_brd`,
  realigned to the host address and sent as memory writes through a write-only crossbar
  master port, split at the negotiated max payload size (naturally aligned).

The two directions run in parallel. Each transfer ends with one completion {tag, status} on
`m_cpl`: 0, Data Transfer Error (04h) when a read of its data completed with an error status,
or the status of a failed segment from the walker (no data moved for it).

Width: the data path, the completion FIFO and the buffer words are the PHY's data_width W
(64, 128, 256 or 512 bits; L = W / 32 dwords a beat), so one beat a cycle carries the link:
W bits at the sys clock (64 bits at 125 MHz: 1 GB/s; 256 bits: 4 GB/s; 512 bits at 250 MHz:
16 GB/s). Dwords are realigned between a TLP's lanes (payload dword 0 in lane 0) and the
buffer's (byte offset / 4 % L) by an L-lane rotation; a realigned beat may straddle two buffer
words, whose first part waits in a pending word, so each direction still moves one beat a
cycle.

Buffer memory: word address = {buf, offset / (W / 8)} (`buf_width + offset_width - log2(W/8)`
bits), W-bit words, byte n of a word at bits 8n+7:8n, byte strobes on writes (dword
granular).
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import FSM, Array, Cat, Constant, If, Mux, NextState, NextValue, Replicate, Signal

from rtl.nvme.litepcie_fixes import require
from rtl.nvme.nvme_common import check_param, stream_port
from rtl.nvme.nvme_prp_walk import COUNT_BITS, STATUS_BITS, prp_seg_layout
from spec.nvme import SC

__all__ = ["NvmeDataDma", "dma_cpl_layout", "buf_wr_layout", "buf_rd_layout",
           "buf_rdata_layout"]

# Layouts -----------------------------------------------------------------------------------------

DATA_WIDTHS = (64, 128, 256, 512)       # Datapath and buffer word widths (the PHY's).


def dma_cpl_layout(tag_width):
    """End of one transfer."""
    return [
        ("tag",    tag_width),
        ("status", STATUS_BITS),   # NVMe status field (0: success).
    ]


def buf_wr_layout(addr_width, data_width=64):
    return [("addr", addr_width), ("data", data_width), ("strb", data_width // 8)]


def buf_rd_layout(addr_width):
    return [("addr", addr_width)]


def buf_rdata_layout(data_width=64):
    return [("data", data_width)]


# Helpers -----------------------------------------------------------------------------------------

def _check(name, value, ok, legal):
    check_param("NvmeDataDma", name, value, ok, legal)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _min(*values):
    m = values[0]
    for v in values[1:]:
        m = Mux(v < m, v, m)
    return m


def _chunk_bytes(addr, left, limit, lanes):
    """Bytes of the next TLP: up to the next `limit`-aligned boundary (limit a power of two,
    128..512, a signal), at most `left`; and 1 dword or a multiple of `lanes` dwords.

    LitePCIe 2024.12's depacketizer ends a 3DW completion with the beat that holds its last
    dword *after* header removal, so it drops the dwords of a TLP whose last beat carries
    more than lanes - 3 of them (on 64 bits: the last dword of an odd length; on 256 bits: up
    to 5). Every TLP here is therefore 1 dword, or a multiple of `lanes` dwords from an
    address aligned to `lanes` dwords, whose completions (split at 64-byte boundaries, a
    multiple of `lanes` dwords for every W <= 512) all end on full beats: the dwords before
    the first aligned boundary and after the last one go alone. (LitePCIeFixes gives the
    packetizer correct byte enables; the MWr side would not need this, but one rule for both
    keeps the two directions alike.)"""
    lb = (lanes - 1).bit_length()
    to_lim = limit[:COUNT_BITS] - (addr[:10] & (limit[:10] - 1))
    n = _min(left, to_lim)
    nr = Cat(Constant(0, 2 + lb), n[2 + lb:])
    return Mux((addr[2:2 + lb] != 0) | (nr == 0), 4, nr)


def _rotl(x, sh, lanes):
    """`x` (lanes dwords) rotated up by `sh` dwords (a signal): lane i gets lane i - sh."""
    if lanes == 1:
        return x
    lane = [x[32 * i:32 * (i + 1)] for i in range(lanes)]
    return Array(Cat(*[lane[(i - s) % lanes] for i in range(lanes)])
                 for s in range(lanes))[sh]


def _dword_strb(mask, lanes):
    return Cat(*[Replicate(mask[i], 4) for i in range(lanes)])


# Core --------------------------------------------------------------------------------------------

class NvmeDataDma(LiteXModule):
    """NVMe data DMA engine (Verilog module `nvme_data_dma`).

    Parameters:
      endpoint      (LitePCIeEndpoint): PHY data_width W in 64, 128, 256 or 512 (the
                    buffer word width follows), address_width 64, LitePCIeFixes; one
                    read-only and one write-only master port of its crossbar are used.
      tag_width     (1..16, default 8), buf_width (1..16, default 4), max_transfer (power of
                    two 8192..16 MiB, default 262144): as NvmePrpWalk's, which feeds `s_seg`.
      rd_fifo_depth (power of two 16..4096, default 512): completion FIFO in W-bit beats;
                    bounds the read data in flight (a 512-byte read reserves 128 / L +
                    128 / 16 + 2 beats: 74 at 64 bits, 18 at 512).
      wr_fifo_depth (power of two 4..512, default 32): buffer words read ahead for writes.
      seg_fifo_depth (power of two 2..1024, default 64): segments queued per direction; the
                    walker feeds both directions in command order, so a command of one
                    direction overlaps with the other's only while its segments fit here
                    (64 = two 128 KiB commands).

    Ports:
      s_seg   segments (`prp_seg_layout`), `s_seg_last` on a transfer's last segment.
      m_cpl   one {tag, status} per transfer (`dma_cpl_layout`).
      m_bw    buffer writes {addr, data, strb} (host -> buffer).
      m_br    buffer read addresses; `s_brd` their data, in order, always accepted.
    """
    def __init__(self, endpoint, tag_width=8, buf_width=4, max_transfer=262144,
                 rd_fifo_depth=512, wr_fifo_depth=32, seg_fifo_depth=64):
        # Parameters checks.
        def pow2(v, lo, hi):
            return _is_int(v) and lo <= v <= hi and v & (v - 1) == 0
        _check("tag_width", tag_width, _is_int(tag_width) and 1 <= tag_width <= 16,
               "out of range 1..16")
        _check("buf_width", buf_width, _is_int(buf_width) and 1 <= buf_width <= 16,
               "out of range 1..16")
        _check("max_transfer", max_transfer, pow2(max_transfer, 8192, 2**24),
               "is not a power of two in 8192..16777216")
        _check("rd_fifo_depth", rd_fifo_depth, pow2(rd_fifo_depth, 16, 4096),
               "is not a power of two in 16..4096")
        _check("wr_fifo_depth", wr_fifo_depth, pow2(wr_fifo_depth, 4, 512),
               "is not a power of two in 4..512")
        _check("seg_fifo_depth", seg_fifo_depth, pow2(seg_fifo_depth, 2, 1024),
               "is not a power of two in 2..1024")
        phy = getattr(endpoint, "phy", None)
        _check("endpoint", endpoint,
               getattr(phy, "data_width", None) in DATA_WIDTHS and hasattr(endpoint, "crossbar")
               and endpoint.crossbar.address_width == 64,
               f"is not a LitePCIeEndpoint with PHY data_width in {DATA_WIDTHS} and "
               "address_width 64")
        require(endpoint, "NvmeDataDma")
        self.data_width = DW = phy.data_width
        L = DW // 32                                        # Dwords a beat / a buffer word.
        LB = (L - 1).bit_length()
        _check("rd_fifo_depth", rd_fifo_depth, rd_fifo_depth >= 128 // L + 8 + 2,
               f"cannot hold one 512-byte read ({128 // L + 10} beats of {DW} bits)")
        offset_width = (max_transfer - 1).bit_length()
        self.addr_width = aw = buf_width + offset_width - 2 - LB
        dwa_width = buf_width + offset_width - 2           # Buffer dword address.

        # Ports.
        self.s_seg = s_seg = stream.Endpoint(prp_seg_layout(tag_width, buf_width, offset_width))
        self.m_cpl = m_cpl = stream.Endpoint(dma_cpl_layout(tag_width))
        self.m_bw  = m_bw  = stream.Endpoint(buf_wr_layout(aw, DW))
        self.m_br  = m_br  = stream.Endpoint(buf_rd_layout(aw))
        self.s_brd = s_brd = stream.Endpoint(buf_rdata_layout(DW))

        # # #

        seg_layout = prp_seg_layout(tag_width, buf_width, offset_width)
        rd_seg = stream.SyncFIFO(seg_layout, seg_fifo_depth, buffered=True)
        wr_seg = stream.SyncFIFO(seg_layout, seg_fifo_depth, buffered=True)
        self.submodules += rd_seg, wr_seg
        self.comb += [
            If(s_seg.to_host,
                s_seg.connect(wr_seg.sink)
            ).Else(
                s_seg.connect(rd_seg.sink)
            ),
        ]

        rd_cpl = stream.SyncFIFO(dma_cpl_layout(tag_width), 2)
        wr_cpl = stream.SyncFIFO(dma_cpl_layout(tag_width), 2)
        self.submodules += rd_cpl, wr_cpl

        # Completions: round robin between the two directions.
        prio_wr = Signal()
        pick_wr = Signal()
        self.comb += [
            pick_wr.eq(wr_cpl.source.valid & (~rd_cpl.source.valid | prio_wr)),
            If(pick_wr,
                wr_cpl.source.connect(m_cpl)
            ).Else(
                rd_cpl.source.connect(m_cpl)
            ),
        ]
        self.sync += If(m_cpl.valid & m_cpl.ready, prio_wr.eq(~pick_wr))

        def dword_addr(seg, offset):
            return Cat(offset[2:], seg.buf)

        # Host -> buffer ==========================================================================

        rport = endpoint.crossbar.get_master_port(read_only=True)
        rreq, rcmp = rport.source, rport.sink

        # Issued reads, in order: where their data goes.
        info_layout = [("tag", tag_width), ("bdw", dwa_width), ("need", 8), ("final", 1),
                       ("null", 1), ("status", STATUS_BITS)]
        info = stream.SyncFIFO(info_layout, 8, buffered=True)
        # Completion beats (each TLP's dwords from lane 0).
        cfifo = stream.SyncFIFO([("dat", DW), ("len", 10), ("err", 1), ("end", 1)],
                                rd_fifo_depth, buffered=True)
        self.submodules += info, cfifo
        self.comb += [
            rcmp.connect(cfifo.sink, keep={"valid", "ready", "first", "last", "dat", "len",
                                           "err", "end"}),
        ]

        # Issuer.
        r_addr   = Signal(64)
        r_left   = Signal(COUNT_BITS)
        r_off    = Signal(offset_width)
        r_busy   = Signal()            # r_addr/r_left/r_off hold the head segment's rest.
        reserved = Signal(max=rd_fifo_depth + 1)
        release  = Signal(8)
        r_bytes  = Signal(COUNT_BITS)
        r_dw     = Signal(8)
        r_need   = Signal(8)
        rs = rd_seg.source
        cur_addr = Mux(r_busy, r_addr, rs.addr)
        cur_left = Mux(r_busy, r_left, rs.count)
        cur_off  = Mux(r_busy, r_off, rs.offset)
        self.comb += [
            r_bytes.eq(_chunk_bytes(cur_addr, cur_left, phy.max_request_size, L)),
            r_dw.eq(r_bytes[2:]),
            # Beats of the read's completions, whatever their split: n / L plus one per
            # completion ending on a partial beat; completions split at 64-byte boundaries
            # at most.
            r_need.eq(r_dw[LB:] + r_dw[4:] + 2),
        ]
        room = Signal()
        fill = Signal(max=rd_fifo_depth + 256)     # The sum in a signal of its own (sizing).
        self.comb += [
            fill.eq(reserved + r_need),
            room.eq(fill <= rd_fifo_depth),
        ]
        r_fire = Signal()
        r_null = Signal()
        self.comb += [
            r_null.eq(rs.valid & (rs.status != 0)),
            rreq.channel.eq(rport.channel),
            rreq.user_id.eq(0),
            rreq.we.eq(0),
            rreq.adr.eq(cur_addr),
            rreq.len.eq(r_dw),
            rreq.req_id.eq(phy.id),
            rreq.tag.eq(0),
            rreq.first.eq(1),
            rreq.last.eq(1),
            rreq.dat.eq(0),
            rreq.valid.eq(rs.valid & ~r_null & info.sink.ready & room),
            r_fire.eq(rreq.valid & rreq.ready),
            info.sink.tag.eq(rs.tag),
            info.sink.bdw.eq(dword_addr(rs, cur_off)),
            info.sink.need.eq(Mux(r_null, 0, r_need)),
            info.sink.final.eq(rs.last & (r_null | (r_bytes == cur_left))),
            info.sink.null.eq(r_null),
            info.sink.status.eq(rs.status),
            info.sink.valid.eq(r_fire | (r_null & info.sink.ready)),
            rs.ready.eq((r_null & info.sink.ready) | (r_fire & (r_bytes == cur_left))),
        ]
        self.sync += [
            If(r_fire,
                r_busy.eq(r_bytes != cur_left),
                r_addr.eq(cur_addr + r_bytes),
                r_left.eq(cur_left - r_bytes),
                r_off.eq(cur_off + r_bytes),
            ),
            reserved.eq(reserved + Mux(r_fire, r_need, 0) - release),
        ]

        # Drainer: completion dwords -> buffer words. A beat's dwords, rotated to their buffer
        # lanes, complete the pending word (lanes below sh = cur_dw % L) and leave the rest
        # pending; the word is written when its top lane is filled, the rest at the end.
        cs = cfifo.source
        hd = info.source
        cur_dw  = Signal(dwa_width)
        pw      = Signal(DW)           # Pending word (lanes with pm set are valid).
        pm      = Signal(L)
        tlp_rem = Signal(10)           # Dwords left in the completion TLP being received.
        in_tlp  = Signal()
        cmd_err = Signal()
        dws     = Signal(LB + 1)
        avail   = Signal(10)
        self.comb += [
            avail.eq(Mux(in_tlp, tlp_rem, Mux(cs.err, 0, cs.len))),
            dws.eq(_min(avail, Constant(L, 10))),
        ]
        sh   = Signal(max=max(L, 2))
        top  = Signal(LB + 2)          # sh + dws: one past the last lane filled.
        rot  = Signal(DW)
        m_dat = Signal(DW)             # pending lanes below sh, the beat's lanes above
        m_msk = Signal(L)
        r_msk = Signal(L)              # lanes of `rot` left for the next word
        self.comb += [
            sh.eq(cur_dw[:LB] if LB else 0),
            top.eq(sh + dws),
            rot.eq(_rotl(cs.dat, sh, L)),
        ]
        for i in range(L):
            # lane L - 1 is never below sh (sh < L): a constant, which lint flags
            lo = (i < sh) if i < L - 1 else 0
            self.comb += [
                m_dat[32 * i:32 * (i + 1)].eq(Mux(lo, pw[32 * i:32 * (i + 1)],
                                                 rot[32 * i:32 * (i + 1)])),
                m_msk[i].eq(Mux(lo, pm[i], i < top)),
                r_msk[i].eq(i + L < top),
            ]
        need_wr = Signal()
        self.comb += need_wr.eq(top >= L)
        req_end  = cs.last & cs.end
        n_pm     = Signal(L)           # pm after this beat.
        self.comb += n_pm.eq(Mux(need_wr, r_msk, m_msk))
        take = Signal()
        rd_fsm = FSM(reset_state="IDLE")
        self.submodules.rd_fsm = rd_fsm
        rd_fsm.act("IDLE",
            If(hd.valid,
                If(hd.null,
                    NextState("CPL")
                ).Else(
                    NextValue(cur_dw, hd.bdw),
                    NextValue(pm, 0),
                    NextState("DATA")
                )
            )
        )
        rd_fsm.act("DATA",
            If(cs.valid,
                If(need_wr,
                    m_bw.valid.eq(1),
                    m_bw.addr.eq(cur_dw[LB:]),
                    m_bw.data.eq(m_dat),
                    m_bw.strb.eq(_dword_strb(m_msk, L)),
                    take.eq(m_bw.ready),
                ).Else(
                    take.eq(1)
                )
            ),
            If(take,
                cs.ready.eq(1),
                NextValue(cur_dw, cur_dw + dws),
                NextValue(pw, Mux(need_wr, rot, m_dat)),
                NextValue(pm, n_pm),
                NextValue(in_tlp, ~cs.last),
                NextValue(tlp_rem, avail - dws),
                If(cs.err, NextValue(cmd_err, 1)),
                If(req_end,
                    If(n_pm != 0,
                        NextState("FLUSH")
                    ).Else(
                        NextState("DONE")
                    )
                )
            )
        )
        rd_fsm.act("FLUSH",
            m_bw.valid.eq(1),
            m_bw.addr.eq(cur_dw[LB:]),
            m_bw.data.eq(pw),
            m_bw.strb.eq(_dword_strb(pm, L)),
            If(m_bw.ready,
                NextState("DONE")
            )
        )
        rd_fsm.act("DONE",
            release.eq(hd.need),
            If(hd.final,
                NextState("CPL")          # hd is popped with the completion.
            ).Else(
                hd.ready.eq(1),
                NextState("IDLE")
            )
        )
        rd_fsm.act("CPL",
            rd_cpl.sink.valid.eq(1),
            rd_cpl.sink.tag.eq(hd.tag),
            rd_cpl.sink.status.eq(Mux(hd.null, hd.status,
                                      Mux(cmd_err, SC.DATA_TRANSFER_ERROR, 0))),
            If(rd_cpl.sink.ready,
                hd.ready.eq(1),
                NextValue(cmd_err, 0),
                NextState("IDLE")
            )
        )

        # Buffer -> host ==========================================================================

        wport = endpoint.crossbar.get_master_port(write_only=True)
        wreq = wport.source
        self.comb += wport.sink.ready.eq(1)

        chunk_layout = [("tag", tag_width), ("adr", 64), ("n", 8), ("bdw", dwa_width),
                        ("final", 1), ("null", 1), ("status", STATUS_BITS)]
        cka = stream.SyncFIFO(chunk_layout, 4, buffered=True)   # To the buffer reader.
        ckb = stream.SyncFIFO(chunk_layout, 8, buffered=True)   # To the TLP emitter.
        wfifo = stream.SyncFIFO(buf_rdata_layout(DW), wr_fifo_depth, buffered=True)
        self.submodules += cka, ckb, wfifo

        # Chunker.
        w_addr = Signal(64)
        w_left = Signal(COUNT_BITS)
        w_off  = Signal(offset_width)
        w_busy = Signal()
        w_bytes = Signal(COUNT_BITS)
        ws = wr_seg.source
        wc_addr = Mux(w_busy, w_addr, ws.addr)
        wc_left = Mux(w_busy, w_left, ws.count)
        wc_off  = Mux(w_busy, w_off, ws.offset)
        w_null = Signal()
        w_push = Signal()
        self.comb += [
            w_bytes.eq(_chunk_bytes(wc_addr, wc_left, phy.max_payload_size, L)),
            w_null.eq(ws.status != 0),
            w_push.eq(ws.valid & cka.sink.ready & ckb.sink.ready),
        ]
        for ck in (cka, ckb):
            self.comb += [
                ck.sink.valid.eq(w_push),
                ck.sink.tag.eq(ws.tag),
                ck.sink.adr.eq(wc_addr),
                ck.sink.n.eq(w_bytes[2:]),
                ck.sink.bdw.eq(dword_addr(ws, wc_off)),
                ck.sink.final.eq(ws.last & (w_null | (w_bytes == wc_left))),
                ck.sink.null.eq(w_null),
                ck.sink.status.eq(ws.status),
            ]
        self.comb += ws.ready.eq(w_push & (w_null | (w_bytes == wc_left)))
        self.sync += If(w_push & ~w_null,
            w_busy.eq(w_bytes != wc_left),
            w_addr.eq(wc_addr + w_bytes),
            w_left.eq(wc_left - w_bytes),
            w_off.eq(wc_off + w_bytes),
        )

        # Buffer reader: the words of each chunk, read ahead as far as the word FIFO has room.
        ra = cka.source
        br_adr  = Signal(aw)
        br_last = Signal(aw)
        br_busy = Signal()
        credit  = Signal(max=wr_fifo_depth + 1)    # Words read or in flight, not yet taken.
        br_fire = Signal()
        w_pop   = Signal()
        self.comb += [
            m_br.valid.eq(br_busy & (credit < wr_fifo_depth)),
            m_br.addr.eq(br_adr),
            br_fire.eq(m_br.valid & m_br.ready),
            s_brd.connect(wfifo.sink),
            w_pop.eq(wfifo.source.valid & wfifo.source.ready),
        ]
        self.sync += [
            credit.eq(credit + br_fire - w_pop),
            If(~br_busy,
                If(ra.valid & ~ra.null,
                    br_busy.eq(1),
                    br_adr.eq(ra.bdw[LB:]),
                    br_last.eq((ra.bdw + ra.n - 1)[LB:]),
                )
            ).Elif(br_fire,
                br_adr.eq(br_adr + 1),
                If(br_adr == br_last, br_busy.eq(0))
            ),
        ]
        self.comb += ra.ready.eq(~br_busy & ra.valid)

        # TLP emitter: payload beat j = buffer dwords bdw + jL .. bdw + jL + L - 1, from the
        # held word's lanes e_sh.. and the next word's lanes below e_sh.
        eh = ckb.source
        e_rem  = Signal(8)             # Dwords still to send.
        hold   = Signal(DW)
        e_sh   = Signal(max=max(L, 2)) # The chunk's first buffer lane.
        e_first = Signal()
        wd = wfifo.source.data
        e_pop  = Signal()
        e_dat  = Signal(DW)
        both = Cat(hold, wd)
        self.comb += e_dat.eq(Array(both[32 * k:32 * k + DW] for k in range(L))[e_sh])
        self.comb += [
            wreq.channel.eq(wport.channel),
            wreq.user_id.eq(0),
            wreq.we.eq(1),
            wreq.adr.eq(eh.adr),
            wreq.len.eq(eh.n),
            wreq.req_id.eq(phy.id),
            wreq.tag.eq(0),
            wreq.first.eq(e_first),
            wreq.last.eq(e_rem <= L),
            wreq.dat.eq(Mux(e_sh == 0, wd, e_dat)),
        ]
        need_word = (e_sh == 0) | (e_rem + e_sh > L)
        wr_fsm = FSM(reset_state="IDLE")
        self.submodules.wr_fsm = wr_fsm
        wr_fsm.act("IDLE",
            If(eh.valid,
                NextValue(e_rem, eh.n),
                NextValue(e_sh, eh.bdw[:LB] if LB else 0),
                NextValue(e_first, 1),
                If(eh.null,
                    NextState("CPL")
                ).Elif(eh.bdw[:LB] != 0,
                    NextState("PRIME")
                ).Else(
                    NextState("SEND")
                )
            )
        )
        wr_fsm.act("PRIME",
            If(wfifo.source.valid,
                e_pop.eq(1),
                NextValue(hold, wd),
                NextState("SEND")
            )
        )
        wr_fsm.act("SEND",
            wreq.valid.eq(~need_word | wfifo.source.valid),
            If(wreq.valid & wreq.ready,
                e_pop.eq(need_word),
                NextValue(hold, wd),
                NextValue(e_first, 0),
                NextValue(e_rem, e_rem - L),
                If(e_rem <= L,
                    If(eh.final,
                        NextState("CPL")
                    ).Else(
                        eh.ready.eq(1),
                        NextState("IDLE")
                    )
                )
            )
        )
        wr_fsm.act("CPL",
            wr_cpl.sink.valid.eq(1),
            wr_cpl.sink.tag.eq(eh.tag),
            wr_cpl.sink.status.eq(Mux(eh.null, eh.status, 0)),
            If(wr_cpl.sink.ready,
                eh.ready.eq(1),
                NextState("IDLE")
            )
        )
        self.comb += wfifo.source.ready.eq(e_pop)

    def get_ios(self):
        """Core ports only; the endpoint's PHY ports belong to the enclosing top."""
        self.s_seg.last.name_override = "s_seg_last"
        return (stream_port(self.s_seg, "s_seg") + [self.s_seg.last]
                + stream_port(self.m_cpl, "m_cpl") + stream_port(self.m_bw, "m_bw")
                + stream_port(self.m_br, "m_br") + stream_port(self.s_brd, "s_brd"))
