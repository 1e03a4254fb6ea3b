# SPDX-License-Identifier: BSD-2-Clause
"""NvmeCqPost: posts NVMe completion queue entries into host memory through LitePCIe.

Each completion on `s_cpl` becomes one 16-byte CQE written by a memory-write TLP (MWr32 below
4 GiB, MWr64 above when the endpoint has address_width=64) at `base + tail * 16` of its
completion queue, through a write-only LitePCIe crossbar master port. The core keeps per-queue
state (base, size, tail, phase tag, host head, interrupt vector, enable) for the admin CQ 0 and
the I/O CQs, respects CQ full (never overwrites an entry the host has not consumed), and asks
for one interrupt per posted CQE on `m_irq`.

CQE (NVMe 1.4, figure 124), little endian in host memory:
  DW0  command specific            DW1  reserved (0)
  DW2  [15:0] SQ head pointer, [31:16] SQ identifier
  DW3  [15:0] command identifier, [16] phase tag, [31:17] status field
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import FSM, Array, Case, Cat, Constant, If, Memory, Mux, NextState, NextValue, Signal

from rtl.nvme.litepcie_fixes import require
from rtl.nvme.nvme_common import check_param, stream_port
from spec.fw_streams import (
    QID_BITS,
    QSIZE_BITS,
    VECTOR_BITS,
    cq_cfg_layout,
    cq_cpl_layout,
    cq_page_layout,
)

__all__ = ["NvmeCqPost", "cq_cfg_layout", "cq_page_layout", "cq_head_layout", "cq_cpl_layout",
           "cq_irq_layout"]

# Layouts -----------------------------------------------------------------------------------------

CQE_BYTES   = 16
# cq_cfg_layout, cq_page_layout, cq_cpl_layout: spec/fw_streams.py (the firmware's ports).


def cq_head_layout():
    """A CQ head doorbell write: the host has consumed entries up to `head` (exclusive)."""
    return [
        ("cqid", QID_BITS),
        ("head", QSIZE_BITS),
    ]


def cq_irq_layout():
    return [("vector", VECTOR_BITS)]


# Helpers -----------------------------------------------------------------------------------------

def _check(name, value, ok, legal):
    check_param("NvmeCqPost", name, value, ok, legal)


# Core --------------------------------------------------------------------------------------------

class NvmeCqPost(LiteXModule):
    """NVMe completion queue posting engine (Verilog module `nvme_cq_post`).

    Parameters:
      endpoint (LitePCIeEndpoint): the CQEs go out through a write-only master port of its
               crossbar; its PHY's data_width must be 64 (128 would need only
               the beat split, but is untested) and its address_width gives
               the reach (32: CQs below 4 GiB; 64: anywhere).
      n_cqs    (1..65, default 2): completion queues 0 (admin) .. n_cqs - 1.
      list_pages (0 or a power of two 1..16, default 0): pages of a non-contiguous CQ (one
               created with nc=1, its pages written on `s_page` from the queue's PRP list):
               up to list_pages * 256 entries. 0: no page list, nc=1 is refused.

    Ports:
      s_cfg   create / delete a queue (`cq_cfg_layout`), taken when no CQE is in flight.
      s_head  CQ head doorbells (`cq_head_layout`), always ready, applied in one cycle.
      s_page  page list writes (`cq_page_layout`), always ready (list_pages > 0 only); write
              a queue's pages before its create.
      s_cpl   completions to post (`cq_cpl_layout`), taken when the CQE can be written.
      m_irq   one interrupt request per posted CQE of a queue with ien=1 (`cq_irq_layout`).
      bad_cqid   pulse: an s_cpl or s_head for a cqid that is not enabled (dropped).
      bad_head   pulse: an s_head value above the queue's qsize (ignored, head unchanged).
      bad_cfg    pulse: an s_cfg with cqid >= n_cqs, or a create with qsize = 0 or a base
                 beyond the endpoint's address_width (ignored).
    """
    def __init__(self, endpoint, n_cqs=2, list_pages=0):
        # Parameters checks.
        _check("n_cqs", n_cqs, isinstance(n_cqs, int) and not isinstance(n_cqs, bool)
               and 1 <= n_cqs <= 65, "out of range 1..65")
        _check("list_pages", list_pages, isinstance(list_pages, int)
               and not isinstance(list_pages, bool) and 0 <= list_pages <= 16
               and list_pages & (list_pages - 1) == 0, "is not 0 or a power of two 1..16")
        phy = getattr(endpoint, "phy", None)
        data_width = getattr(phy, "data_width", None)
        _check("endpoint", endpoint, data_width == 64 and hasattr(endpoint, "crossbar"),
               "is not a LitePCIeEndpoint with a PHY data_width of 64")
        require(endpoint, "NvmeCqPost")
        self.list_pages = list_pages    # MWr32 and MWr64 mixed under backpressure
        self.n_cqs = n_cqs
        address_width = endpoint.crossbar.address_width

        # Ports.
        self.s_cfg  = s_cfg  = stream.Endpoint(cq_cfg_layout())
        self.s_head = s_head = stream.Endpoint(cq_head_layout())
        self.s_page = s_page = stream.Endpoint(cq_page_layout())
        self.s_cpl  = s_cpl  = stream.Endpoint(cq_cpl_layout())
        self.m_irq  = m_irq  = stream.Endpoint(cq_irq_layout())
        self.bad_cqid = Signal()
        self.bad_head = Signal()
        self.bad_cfg  = Signal()

        # # #

        port = endpoint.crossbar.get_master_port(write_only=True)
        req = port.source
        self.comb += port.sink.ready.eq(1)     # Writes are posted: no completion ever comes.

        # Per-queue state, in registers (n_cqs <= 65 keeps the muxes small).
        def array(name, width, reset=0):
            return Array(Signal(width, name=f"{name}{i}", reset=reset) for i in range(n_cqs))
        q_en    = array("q_en", 1)
        q_ien   = array("q_ien", 1)
        q_base  = array("q_base", 60)          # Base address bits 63:4.
        q_size  = array("q_size", QSIZE_BITS)
        q_iv    = array("q_iv", VECTOR_BITS)
        q_tail  = array("q_tail", QSIZE_BITS)
        q_head  = array("q_head", QSIZE_BITS)
        q_phase = array("q_phase", 1, reset=1)
        q_nc    = array("q_nc", 1)             # Entry pages from the page list.

        def exists(cqid):
            return cqid < n_cqs if n_cqs < 2**QID_BITS else 1

        def index(cqid):
            return cqid[:max(1, (n_cqs - 1).bit_length())]

        # Head doorbells: always ready so a waiting completion can never block the doorbell
        # that frees its slot. A create on the same cycle wins (it resets the head).
        h = index(s_head.cqid)
        h_ok = exists(s_head.cqid) & q_en[h]
        head_bad = Signal()
        cpl_bad  = Signal()
        cfg_bad  = Signal()
        self.comb += [
            s_head.ready.eq(1),
            head_bad.eq(s_head.valid & ~h_ok),
        ]
        head_we  = Signal()
        cfg_we   = Signal()
        post_done = Signal()
        self.comb += head_we.eq(s_head.valid & h_ok & (s_head.head <= q_size[h]))
        self.sync += [
            self.bad_cqid.eq(head_bad | cpl_bad),
            self.bad_cfg.eq(cfg_bad),
            self.bad_head.eq(s_head.valid & h_ok & (s_head.head > q_size[h])),
        ]

        # Completion to post, latched when accepted. The queue's config cannot change while it
        # is in flight (s_cfg waits for IDLE); its head only moves forward (frees slots).
        cq     = Signal(max=max(2, n_cqs))
        cqe    = Signal(4 * 32)
        adr    = Signal(64)
        c      = index(s_cpl.cqid)
        c_ok   = exists(s_cpl.cqid) & q_en[c]
        c_next = Mux(q_tail[c] == q_size[c], 0, q_tail[c] + 1)
        c_full = c_next == q_head[c]

        cfg_ok = exists(s_cfg.cqid) & (~s_cfg.enable | (s_cfg.qsize != 0))
        if list_pages:
            cfg_ok = cfg_ok & (~s_cfg.enable | ~s_cfg.nc
                               | (s_cfg.qsize < list_pages * (4096 // CQE_BYTES)))
        else:
            cfg_ok = cfg_ok & (~s_cfg.enable | ~s_cfg.nc)
        if address_width < 64:
            # A base the endpoint cannot address would be silently truncated: refuse it.
            cfg_ok = cfg_ok & (~s_cfg.enable | (s_cfg.base[address_width:] == 0))

        beats = 128 // data_width
        beat  = Signal(max=max(2, beats))

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            # Configuration first: a delete can then release a completion waiting on a full
            # queue (it becomes a bad cqid and is dropped).
            If(s_cfg.valid,
                s_cfg.ready.eq(1),
                If(~cfg_ok,
                    cfg_bad.eq(1)
                ).Else(
                    cfg_we.eq(1)
                )
            ).Elif(s_cpl.valid,
                If(~c_ok,
                    s_cpl.ready.eq(1),
                    cpl_bad.eq(1)
                ).Elif(~c_full,
                    # Head-of-line: a completion for a full queue holds s_cpl (and so every
                    # other queue's completions) until the host frees a slot.
                    s_cpl.ready.eq(1),
                    NextValue(cq, c),
                    NextValue(adr, Mux(q_nc[c], Cat(Constant(0, 4), q_tail[c][:8]),
                                       Cat(Constant(0, 4), q_base[c] + q_tail[c]))),
                    NextValue(cqe, Cat(
                        s_cpl.dw0,                               # DW0
                        Constant(0, 32),                         # DW1 reserved
                        s_cpl.sq_head, s_cpl.sqid,               # DW2
                        s_cpl.cid, q_phase[c], s_cpl.status,     # DW3
                    )),
                    NextValue(beat, 0),
                    If(q_nc[c],
                        NextState("PAGE")
                    ).Else(
                        NextState("WRITE")
                    )
                )
            )
        )

        # Page list of non-contiguous queues: one entry per (queue, 4 KiB page), read when the
        # completion is taken; PAGE puts the page address above the entry's offset.
        if list_pages:
            lpw   = max(1, (list_pages - 1).bit_length())
            qbits = max(1, (n_cqs - 1).bit_length())
            self.specials.page_mem = page_mem = Memory(52, 2**(qbits + lpw), name="cq_pages")
            page_wp = page_mem.get_port(write_capable=True)
            page_rp = page_mem.get_port()
            self.specials += page_wp, page_rp
            self.comb += [
                s_page.ready.eq(1),
                page_wp.adr.eq(Cat(s_page.index[:lpw], s_page.cqid[:qbits])),
                page_wp.dat_w.eq(s_page.page),
                page_wp.we.eq(s_page.valid),
                page_rp.adr.eq(Cat(q_tail[c][8:8 + lpw], c)),
            ]
            fsm.act("PAGE",
                NextValue(adr, Cat(adr[:12], page_rp.dat_r)),
                NextState("WRITE")
            )
        else:
            self.comb += s_page.ready.eq(1)
            fsm.act("PAGE", NextState("WRITE"))

        # One MWr of 4 DW: beats of data_width bits, lowest-addressed dword in bits 31:0.
        beat_dat = Array(cqe[i * data_width:(i + 1) * data_width] for i in range(beats))
        self.comb += [
            req.channel.eq(port.channel),
            req.we.eq(1),
            req.adr.eq(adr[:address_width]),
            req.len.eq(4),
            req.req_id.eq(phy.id),
            req.tag.eq(0),
            req.first.eq(beat == 0),
            req.last.eq(beat == beats - 1),
            req.dat.eq(beat_dat[beat]),
        ]
        fsm.act("WRITE",
            req.valid.eq(1),
            If(req.ready,
                NextValue(beat, beat + 1),
                If(req.last,
                    post_done.eq(1),
                    If(q_ien[cq],
                        NextState("IRQ")
                    ).Else(
                        NextState("IDLE")
                    )
                )
            )
        )
        # Per-queue state updates, one queue at a time (no Array lvalues: plain non-blocking
        # registers). cfg_we (IDLE) and post_done (WRITE) never coincide; a create wins over
        # a doorbell to the same queue in the same cycle (it comes last). Each kind of update
        # is a `case` on its queue index under its strobe, so a cycle without one costs the
        # simulator one test instead of a compare per queue.
        def post(i):
            wrap = q_tail[i] == q_size[i]
            return [
                q_tail[i].eq(Mux(wrap, 0, q_tail[i] + 1)),
                If(wrap,
                    q_phase[i].eq(~q_phase[i])      # Next pass of the ring.
                ),
            ]
        self.sync += [
            If(head_we,
                Case(s_head.cqid, {i: q_head[i].eq(s_head.head) for i in range(n_cqs)})
            ),
            If(post_done,
                Case(cq, {i: post(i) for i in range(n_cqs)})
            ),
            If(cfg_we,
                Case(s_cfg.cqid, {i: [
                    q_en[i].eq(s_cfg.enable),
                    q_ien[i].eq(s_cfg.ien),
                    q_base[i].eq(s_cfg.base[4:]),
                    q_nc[i].eq(s_cfg.nc),
                    q_size[i].eq(s_cfg.qsize),
                    q_iv[i].eq(s_cfg.iv),
                    q_tail[i].eq(0),
                    q_head[i].eq(0),
                    q_phase[i].eq(1),
                ] for i in range(n_cqs)})
            ),
        ]

        # The interrupt follows the last beat of the MWr on the same path out of the endpoint,
        # so the CQE is in host memory before the MSI(-X) write lands (PCIe posted ordering;
        # see the README's assumption).
        self.comb += m_irq.vector.eq(q_iv[cq])
        fsm.act("IRQ",
            m_irq.valid.eq(1),
            If(m_irq.ready,
                NextState("IDLE")
            )
        )

    def get_ios(self):
        """Core ports only; the endpoint's PHY ports belong to the enclosing top."""
        return (stream_port(self.s_cfg, "s_cfg") + stream_port(self.s_head, "s_head")
                + (stream_port(self.s_page, "s_page") if self.list_pages else [])
                + stream_port(self.s_cpl, "s_cpl") + stream_port(self.m_irq, "m_irq")
                + [self.bad_cqid, self.bad_head, self.bad_cfg])
