# SPDX-License-Identifier: BSD-2-Clause
"""NvmeSqFetch: fetches NVMe submission queue entries from host memory through LitePCIe.

The core keeps per-queue state (base, size, fetch head, host tail, enable, error) for the admin
SQ 0 and the I/O SQs. SQ tail doorbells on `s_tail` make entries pending; a round-robin arbiter
picks a queue with entries pending and reads up to `max_burst` consecutive 64-byte SQEs with one
memory-read TLP (MRd32 below 4 GiB, MRd64 above, when the endpoint has address_width=64)
through a read-only LitePCIe crossbar master port. A request never crosses the queue's wrap
point, a 4 KiB boundary, or the endpoint's negotiated max read request size. The completions
(possibly split by the host, reassembled in order by LitePCIe's TLP controller) are cut into
SQEs and leave on `m_sqe` with their queue id and the SQ head to report in the CQE.

SQE (NVMe 1.4, figure 104), 64 bytes little endian in host memory: `m_sqe_sqe` bits 8n+7:8n
hold byte n (DW0 in bits 31:0: opcode 7:0, CID 31:16).
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import FSM, Array, Case, Cat, Constant, If, Memory, Mux, NextState, NextValue, Signal

from rtl.nvme.litepcie_fixes import require
from rtl.nvme.nvme_common import check_param, stream_port
from spec.fw_streams import QID_BITS, QSIZE_BITS, sq_cfg_layout, sq_page_layout, sqe_layout

__all__ = ["NvmeSqFetch", "sq_cfg_layout", "sq_page_layout", "sq_tail_layout", "sqe_layout"]

# Layouts -----------------------------------------------------------------------------------------

SQE_BYTES  = 64
SQE_SHIFT  = 6      # log2(SQE_BYTES)
# sq_cfg_layout, sq_page_layout, sqe_layout: spec/fw_streams.py (the firmware's ports).


def sq_tail_layout():
    """An SQ tail doorbell write: the host has submitted entries up to `tail` (exclusive)."""
    return [
        ("sqid", QID_BITS),
        ("tail", QSIZE_BITS),
    ]


# Helpers -----------------------------------------------------------------------------------------

def _check(name, value, ok, legal):
    check_param("NvmeSqFetch", name, value, ok, legal)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _min(*values):
    """Combinational minimum of several unsigned expressions."""
    m = values[0]
    for v in values[1:]:
        m = Mux(v < m, v, m)
    return m


# Core --------------------------------------------------------------------------------------------

class NvmeSqFetch(LiteXModule):
    """NVMe submission queue fetch engine (Verilog module `nvme_sq_fetch`).

    Parameters:
      endpoint  (LitePCIeEndpoint): SQEs are read through a read-only master port of its
                crossbar; its PHY's data_width must be 64 and it must carry LitePCIeFixes;
                its address_width gives the reach (32: SQs below 4 GiB; 64: anywhere).
      n_sqs     (1..65, default 2): submission queues 0 (admin) .. n_sqs - 1.
      max_burst (1..8, default 4): most SQEs read by one request; at run time also bounded
                by the PHY's max_request_size (bytes / 64: 2 SQEs at 128 bytes).
      list_pages (0 or a power of two 1..64, default 0): pages of a non-contiguous SQ (one
                created with nc=1, its pages written on `s_page` from the queue's PRP list):
                up to list_pages * 64 entries. 0: no page list, nc=1 is refused.

    Ports:
      s_cfg   create / delete a queue (`sq_cfg_layout`), taken when no read is in flight.
      s_tail  SQ tail doorbells (`sq_tail_layout`), always ready, applied in one cycle.
      s_page  page list writes (`sq_page_layout`), always ready (list_pages > 0 only); write
              a queue's pages before its create.
      m_sqe   fetched SQEs (`sqe_layout`), in queue order per SQ.
      bad_sqid   pulse: an s_tail for a sqid that is not enabled (dropped).
      bad_tail   pulse: an s_tail value above the queue's qsize (dropped, tail unchanged).
      bad_cfg    pulse: an s_cfg with sqid >= n_sqs, or a create with qsize = 0 or a base
                 beyond the endpoint's address_width, or nc=1 with more entries than
                 list_pages * 64 (ignored).
      fetch_err  pulse: a read completion with an error status (UR, CA); the queue stops
                 fetching until it is created again.
      fetch_err_sqid  the queue of that fetch (valid with fetch_err).
      pending    bit q: SQ q is enabled and has entries not fetched yet.
      busy       a read is in flight (entries fetched but not all in the output FIFO).
    """
    def __init__(self, endpoint, n_sqs=2, max_burst=4, list_pages=0):
        # Parameters checks.
        _check("n_sqs", n_sqs, _is_int(n_sqs) and 1 <= n_sqs <= 65, "out of range 1..65")
        _check("max_burst", max_burst, _is_int(max_burst) and 1 <= max_burst <= 8,
               "out of range 1..8")
        _check("list_pages", list_pages, _is_int(list_pages) and 0 <= list_pages <= 64
               and list_pages & (list_pages - 1) == 0, "is not 0 or a power of two 1..64")
        phy = getattr(endpoint, "phy", None)
        data_width = getattr(phy, "data_width", None)
        _check("endpoint", endpoint, data_width == 64 and hasattr(endpoint, "crossbar"),
               "is not a LitePCIeEndpoint with a PHY data_width of 64")
        require(endpoint, "NvmeSqFetch")   # MRd32 and MRd64 mixed with other masters' MWr
        self.n_sqs     = n_sqs
        self.max_burst = max_burst
        address_width = endpoint.crossbar.address_width

        # Ports.
        self.s_cfg  = s_cfg  = stream.Endpoint(sq_cfg_layout())
        self.s_tail = s_tail = stream.Endpoint(sq_tail_layout())
        self.s_page = s_page = stream.Endpoint(sq_page_layout())
        self.list_pages = list_pages
        self.m_sqe  = m_sqe  = stream.Endpoint(sqe_layout())
        self.bad_sqid  = Signal()
        self.bad_tail  = Signal()
        self.bad_cfg   = Signal()
        self.fetch_err = Signal()
        self.fetch_err_sqid = Signal(16)
        self.pending   = Signal(n_sqs)
        self.busy      = Signal()

        # # #

        port = endpoint.crossbar.get_master_port(read_only=True)
        req, cpl = port.source, port.sink

        # Per-queue state, in registers (n_sqs <= 65 keeps the muxes small).
        def array(name, width):
            return Array(Signal(width, name=f"{name}{i}") for i in range(n_sqs))
        q_en   = array("q_en", 1)
        q_err  = array("q_err", 1)              # Stopped by a completion error.
        q_base = array("q_base", 64 - SQE_SHIFT)   # Base address bits 63:6.
        q_size = array("q_size", QSIZE_BITS)
        q_head = array("q_head", QSIZE_BITS)    # Next entry to fetch.
        q_tail = array("q_tail", QSIZE_BITS)    # Host tail (from doorbells).
        q_nc   = array("q_nc", 1)               # Entry pages from the page list.

        def exists(sqid):
            return sqid < n_sqs if n_sqs < 2**QID_BITS else 1

        def index(sqid):
            return sqid[:max(1, (n_sqs - 1).bit_length())]

        # Output FIFO: one burst. A read is issued only when the FIFO has room for all of its
        # SQEs, so completion data is always taken at once (the crossbar is never stalled).
        # (Depth >= 2: LiteX's depth-1 stream FIFO is a buffer without a level.)
        self.fifo = fifo = stream.SyncFIFO(sqe_layout(), max(2, max_burst), buffered=False)
        self.comb += fifo.source.connect(m_sqe)

        # Tail doorbells: always ready. A create on the same cycle wins (it resets the tail).
        t = index(s_tail.sqid)
        t_ok = exists(s_tail.sqid) & q_en[t]
        tail_we = Signal()
        cfg_we  = Signal()
        cfg_bad = Signal()
        self.comb += [
            s_tail.ready.eq(1),
            tail_we.eq(s_tail.valid & t_ok & (s_tail.tail <= q_size[t])),
        ]
        self.sync += [
            self.bad_sqid.eq(s_tail.valid & ~t_ok),
            self.bad_tail.eq(s_tail.valid & t_ok & (s_tail.tail > q_size[t])),
            self.bad_cfg.eq(cfg_bad),
        ]

        cfg_ok = exists(s_cfg.sqid) & (~s_cfg.enable | (s_cfg.qsize != 0))
        if list_pages:
            cfg_ok = cfg_ok & (~s_cfg.enable | ~s_cfg.nc
                               | (s_cfg.qsize < list_pages * (4096 // SQE_BYTES)))
        else:
            cfg_ok = cfg_ok & (~s_cfg.enable | ~s_cfg.nc)
        if address_width < 64:
            # A base the endpoint cannot address would be silently truncated: refuse it.
            cfg_ok = cfg_ok & (~s_cfg.enable | (s_cfg.base[address_width:] == 0))

        # Round-robin arbiter: the first queue with entries pending after the last one served,
        # else the first one with entries pending.
        pending = self.pending
        self.comb += [pending[i].eq(q_en[i] & ~q_err[i] & (q_head[i] != q_tail[i]))
                      for i in range(n_sqs)]
        last    = Signal(max=max(2, n_sqs))
        sel_lo  = Signal(max=max(2, n_sqs))
        sel_hi  = Signal(max=max(2, n_sqs))
        hi_any  = Signal()
        sel     = Signal(max=max(2, n_sqs))
        for i in reversed(range(n_sqs)):       # Lowest index wins: it is assigned last.
            self.comb += If(pending[i], sel_lo.eq(i))
            if i > 0:
                self.comb += If(pending[i] & (last < i), sel_hi.eq(i), hi_any.eq(1))
        self.comb += sel.eq(Mux(hi_any, sel_hi, sel_lo))

        # Burst size for the selected queue: entries pending up to the wrap point, max_burst,
        # the max read request size and the next 4 KiB boundary (PCIe forbids crossing it).
        s_head = q_head[sel]
        s_tl   = q_tail[sel]
        s_adr  = Signal(64 - SQE_SHIFT)
        to_end = Signal(QSIZE_BITS + 1)
        avail  = Signal(QSIZE_BITS + 1)
        to_4k  = Signal(7)
        mrrs   = Signal(7)
        n_sel  = Signal(4)
        self.comb += [
            s_adr.eq(Mux(q_nc[sel], s_head[:6], q_base[sel] + s_head)),
            to_end.eq(q_size[sel] + 1 - s_head),
            avail.eq(Mux(s_tl > s_head, s_tl - s_head, to_end)),
            to_4k.eq(64 - s_adr[:6]),
            mrrs.eq(_min(phy.max_request_size[SQE_SHIFT:], Constant(64, 11))),
            n_sel.eq(_min(avail, Constant(max_burst, 4), to_4k, mrrs)),
        ]

        # Latched request.
        q      = Signal(max=max(2, n_sqs))
        adr    = Signal(64 - SQE_SHIFT)
        n      = Signal(4)
        qsize  = Signal(QSIZE_BITS)
        cur    = Signal(QSIZE_BITS)             # Index of the entry being received.
        issue  = Signal()
        failed = Signal()                       # An error completion for this request.

        # The sum in a signal of its own: Verilog would size `level + n_sel <= max_burst` to the
        # operands' 4 bits and let 8 + 8 wrap to 0.
        fill = Signal(5)
        self.comb += fill.eq(fifo.level + n_sel)
        room = fill <= max_burst

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            # Configuration first (no read is in flight here, so no queue changes under one).
            If(s_cfg.valid,
                s_cfg.ready.eq(1),
                If(~cfg_ok,
                    cfg_bad.eq(1)
                ).Else(
                    cfg_we.eq(1)
                )
            ).Elif((pending != 0) & room & (n_sel != 0),    # n_sel = 0 only if MRRS < 64
                issue.eq(1),
                NextValue(q, sel),
                NextValue(last, sel),
                NextValue(adr, s_adr),
                NextValue(n, n_sel),
                NextValue(qsize, q_size[sel]),
                NextValue(cur, s_head),
                NextValue(failed, 0),
                If(q_nc[sel],
                    NextState("PAGE")
                ).Else(
                    NextState("REQUEST")
                )
            )
        )

        # Page list of non-contiguous queues: one entry per (queue, 4 KiB page), read in the
        # issue cycle; PAGE puts the page address under the entry's offset in its page.
        if list_pages:
            lpw   = max(1, (list_pages - 1).bit_length())
            qbits = max(1, (n_sqs - 1).bit_length())
            self.specials.page_mem = page_mem = Memory(52, 2**(qbits + lpw), name="sq_pages")
            page_wp = page_mem.get_port(write_capable=True)
            page_rp = page_mem.get_port()
            self.specials += page_wp, page_rp
            self.comb += [
                s_page.ready.eq(1),
                page_wp.adr.eq(Cat(s_page.index[:lpw], s_page.sqid[:qbits])),
                page_wp.dat_w.eq(s_page.page),
                page_wp.we.eq(s_page.valid),
                page_rp.adr.eq(Cat(s_head[6:6 + lpw], sel)),
            ]
            fsm.act("PAGE",
                NextValue(adr, Cat(adr[:6], page_rp.dat_r)),
                NextState("REQUEST")
            )
        else:
            self.comb += s_page.ready.eq(1)
            fsm.act("PAGE", NextState("REQUEST"))

        # One MRd of n * 16 DW.
        self.comb += [
            req.channel.eq(port.channel),
            req.user_id.eq(0),
            req.we.eq(0),
            req.adr.eq(Cat(Constant(0, SQE_SHIFT), adr)[:address_width]),
            req.len.eq(n << 4),
            req.req_id.eq(phy.id),
            req.tag.eq(0),
            req.first.eq(1),
            req.last.eq(1),
            req.dat.eq(0),
        ]
        fsm.act("REQUEST",
            req.valid.eq(1),
            If(req.ready,
                NextState("RECEIVE")
            )
        )

        # Completion data: 8 beats of 64 bits per SQE, lowest-addressed dword in bits 31:0.
        # LitePCIe's controller hands the (possibly split) completions of the request in
        # order; its `end` marks the last one. An error completion carries no data.
        beats = 8 * SQE_BYTES // data_width
        beat  = Signal(max=beats)
        words = [Signal(data_width, name=f"sqe_w{i}") for i in range(beats - 1)]
        take     = Signal()                     # A data beat of this request.
        sqe_push = Signal()
        self.sync += [If(take & (beat == i), w.eq(cpl.dat)) for i, w in enumerate(words)]
        self.comb += [
            cpl.ready.eq(1),
            fifo.sink.sqid.eq(q),
            fifo.sink.sq_head.eq(Mux(cur == qsize, 0, cur + 1)),
            fifo.sink.sqe.eq(Cat(*words, cpl.dat)),
            fifo.sink.valid.eq(sqe_push),
        ]
        fsm.act("RECEIVE",
            If(cpl.valid,
                If(cpl.err,
                    NextValue(failed, 1),
                ).Elif(~failed,
                    take.eq(1),
                    NextValue(beat, beat + 1),
                    If(beat == beats - 1,
                        sqe_push.eq(1),
                        NextValue(beat, 0),
                        NextValue(cur, Mux(cur == qsize, 0, cur + 1)),
                    )
                ),
                If(cpl.last & cpl.end,
                    NextValue(beat, 0),
                    NextState("IDLE")
                )
            )
        )
        self.comb += self.busy.eq(~fsm.ongoing("IDLE"))
        fetch_err = Signal()
        self.comb += fetch_err.eq(fsm.ongoing("RECEIVE") & cpl.valid & cpl.err)
        self.sync += [
            self.fetch_err.eq(fetch_err & ~failed),
            self.fetch_err_sqid.eq(q),
        ]

        # Per-queue state updates, one queue at a time (no Array lvalues). The fetch head moves
        # when the request is issued; cfg_we and issue are exclusive (both in IDLE). Each kind
        # of update is a `case` on its queue index under its strobe, so a cycle without one
        # costs the simulator one test instead of a compare per queue; a create, last, still
        # wins over a doorbell to the same queue in the same cycle.
        n_head = Signal(QSIZE_BITS + 1)
        self.comb += n_head.eq(s_head + n_sel)
        self.sync += [
            If(tail_we,
                Case(s_tail.sqid, {i: q_tail[i].eq(s_tail.tail) for i in range(n_sqs)})
            ),
            If(issue,
                Case(sel, {i: q_head[i].eq(Mux(n_head > q_size[i], 0, n_head))
                           for i in range(n_sqs)})
            ),
            If(fetch_err,
                Case(q, {i: q_err[i].eq(1) for i in range(n_sqs)})
            ),
            If(cfg_we,
                Case(s_cfg.sqid, {i: [
                    q_en[i].eq(s_cfg.enable),
                    q_err[i].eq(0),
                    q_base[i].eq(s_cfg.base[SQE_SHIFT:]),
                    q_nc[i].eq(s_cfg.nc),
                    q_size[i].eq(s_cfg.qsize),
                    q_head[i].eq(0),
                    q_tail[i].eq(0),
                ] for i in range(n_sqs)})
            ),
        ]

    def get_ios(self):
        """Core ports only; the endpoint's PHY ports belong to the enclosing top."""
        return (stream_port(self.s_cfg, "s_cfg") + stream_port(self.s_tail, "s_tail")
                + (stream_port(self.s_page, "s_page") if self.list_pages else [])
                + stream_port(self.m_sqe, "m_sqe")
                + [self.bad_sqid, self.bad_tail, self.bad_cfg, self.fetch_err,
                   self.fetch_err_sqid])
