# SPDX-License-Identifier: BSD-2-Clause
"""NvmeIoEngine: carries fast-path NVM commands from the decoder to the back end and the CQ.

Each checked command from NvmeCmdDecode takes a free tag (2**tag_width tags, so that many
commands in flight) and an entry of the command table, indexed by the tag. The tag is also the
command's data buffer handle (`buf` = tag). Then, per opcode:

- Write: PRP walk + DMA host -> buffer (`m_walk`), then the back-end request (`m_be_req`),
  then the completion.
- Read:  back-end request (the back end fills the buffer), then PRP walk + DMA buffer -> host,
  then the completion.
- Flush: back-end request, then the completion.

An error on any step (a back-end status, a PRP or DMA status) ends the command with that
status; nothing further moves for it. The completion leaves on `m_cpl` with the CQ the
command's SQ is mapped to (`s_map`), and the tag is free again.

The engine also merges the decoder's immediate completions (`s_err`) and the firmware's
(`s_fw_cpl`) into `m_cpl`, and gives the firmware data transfers (`s_fw_xfer`, one at a time)
to the PRP walker with the reserved walker tag 2**tag_width and buffer handles
2**tag_width + buf.

All of it is one event per cycle: a back-end completion, a DMA completion, an immediate or a
firmware completion, a firmware transfer, or a new command (lowest priority, so completions
drain first); each event reads or writes the command table once and pushes at most one output.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Cat, If, Memory, Mux, Record, Signal

from rtl.nvme.nvme_cmd_decode import err_cpl_layout, fast_cmd_layout
from rtl.nvme.nvme_common import check_param
from rtl.nvme.nvme_data_dma import dma_cpl_layout
from rtl.nvme.nvme_prp_walk import prp_req_layout
from spec.fw_streams import (
    LEN_BITS,
    QID_BITS,
    be_cpl_layout,
    be_req_layout,
    cq_cpl_layout,
    fw_xfer_cpl_layout,
    fw_xfer_layout,
)
from spec.nvme import NvmOpcode

__all__ = ["NvmeIoEngine", "be_req_layout", "be_cpl_layout", "fw_xfer_layout",
           "fw_xfer_cpl_layout", "sq_map_layout"]

# Layouts -----------------------------------------------------------------------------------------
# be_req_layout, be_cpl_layout, fw_xfer_layout, fw_xfer_cpl_layout: spec/fw_streams.py.


def sq_map_layout():
    """SQ `sqid` completes into CQ `cqid`."""
    return [("sqid", QID_BITS), ("cqid", QID_BITS)]


def _table_layout():
    return [
        ("sqid",    QID_BITS),
        ("cqid",    QID_BITS),
        ("sq_head", QID_BITS),
        ("cid",     16),
        ("opcode",  8),
        ("nsid",    32),
        ("slba",    64),
        ("nlb",     16),
        ("flags",   16),
        ("prp1",    64),
        ("prp2",    64),
        ("length",  LEN_BITS),
    ]


# Core --------------------------------------------------------------------------------------------

class NvmeIoEngine(LiteXModule):
    """NVMe fast-path command engine (Verilog module `nvme_io_engine`).

    Parameters:
      tag_width (1..8, default 6): 2**tag_width fast-path commands in flight; the PRP walker
                and DMA run with tag_width + 1 bits of tag and of buffer handle.
      n_sqs     (1..65, default 65): SQ ids mapped by `s_map`.

    Ports:
      s_cmd        fast-path commands (`fast_cmd_layout`), from NvmeCmdDecode.
      s_err        immediate completions (`err_cpl_layout`), from NvmeCmdDecode.
      s_fw_cpl     firmware completions (`cq_cpl_layout`).
      s_map        SQ -> CQ mapping writes (`sq_map_layout`), always ready.
      s_fw_xfer    firmware data transfers (`fw_xfer_layout`); `m_fw_xfer_cpl` their end.
      m_walk       transfer requests to NvmePrpWalk (`prp_req_layout`).
      s_dma_cpl    transfer completions from NvmeDataDma (`dma_cpl_layout`).
      m_be_req     back-end requests (`be_req_layout`); `s_be_cpl` their completions.
      m_cpl        completions to post (`cq_cpl_layout`), to NvmeCqPost.
      busy         a command, a firmware transfer or an output is still in progress.
      in_flight    tags in use.
    """
    def __init__(self, tag_width=6, n_sqs=65):
        def _is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)
        check_param("NvmeIoEngine", "tag_width", tag_width,
                    _is_int(tag_width) and 1 <= tag_width <= 8, "out of range 1..8")
        check_param("NvmeIoEngine", "n_sqs", n_sqs, _is_int(n_sqs) and 1 <= n_sqs <= 65,
                    "out of range 1..65")
        tw = tag_width
        n_tags = 2**tw
        self.tag_width = tw

        # Ports.
        self.s_cmd         = s_cmd    = stream.Endpoint(fast_cmd_layout())
        self.s_err         = s_err    = stream.Endpoint(err_cpl_layout())
        self.s_fw_cpl      = s_fw_cpl = stream.Endpoint(cq_cpl_layout())
        self.s_map         = s_map    = stream.Endpoint(sq_map_layout())
        self.s_fw_xfer     = s_fwx    = stream.Endpoint(fw_xfer_layout(tw))
        self.m_fw_xfer_cpl = stream.Endpoint(fw_xfer_cpl_layout())
        self.m_walk        = stream.Endpoint(prp_req_layout(tw + 1, tw + 1))
        self.s_dma_cpl     = s_dma    = stream.Endpoint(dma_cpl_layout(tw + 1))
        self.m_be_req      = stream.Endpoint(be_req_layout(tw))
        self.s_be_cpl      = s_be     = stream.Endpoint(be_cpl_layout(tw))
        self.m_cpl         = stream.Endpoint(cq_cpl_layout())
        self.busy          = Signal()
        self.in_flight     = Signal(max=n_tags + 1)

        # # #

        # Output FIFOs.
        self.walk_fifo = walk_f = stream.SyncFIFO(prp_req_layout(tw + 1, tw + 1), 4)
        self.be_fifo   = be_f   = stream.SyncFIFO(be_req_layout(tw), 8)
        self.cpl_fifo  = cpl_f  = stream.SyncFIFO(cq_cpl_layout(), 8)
        self.fwx_fifo  = fwx_f  = stream.SyncFIFO(fw_xfer_cpl_layout(), 2)
        self.comb += [
            walk_f.source.connect(self.m_walk),
            be_f.source.connect(self.m_be_req),
            cpl_f.source.connect(self.m_cpl),
            fwx_f.source.connect(self.m_fw_xfer_cpl),
        ]
        # Each event needs room only in the FIFOs it may push to: a DMA completion must not
        # wait for walk FIFO room, or a full walk FIFO (the walker stalled on the DMA's full
        # to-host segment FIFO) and a DMA write waiting to report its completion deadlock.
        walk_rdy, be_rdy, cpl_rdy, fwx_rdy = (walk_f.sink.ready, be_f.sink.ready,
                                              cpl_f.sink.ready, fwx_f.sink.ready)

        # SQ -> CQ map.
        qw = max(1, (n_sqs - 1).bit_length())
        self.specials.map_mem = map_mem = Memory(QID_BITS, 2**qw, name="sq_map")
        map_wp = map_mem.get_port(write_capable=True)
        map_rp = map_mem.get_port(async_read=True)
        self.specials += map_wp, map_rp
        self.comb += [
            s_map.ready.eq(1),
            map_wp.adr.eq(s_map.sqid[:qw]),
            map_wp.dat_w.eq(s_map.cqid),
            map_wp.we.eq(s_map.valid),
        ]

        # Command table, one entry per tag.
        entry_w = Record(_table_layout())
        entry_r = Record(_table_layout())
        self.specials.table = table = Memory(len(entry_w), n_tags, name="cmd_table")
        tport = table.get_port(write_capable=True, async_read=True)
        self.specials += tport
        self.comb += entry_r.raw_bits().eq(tport.dat_r)

        # Free tags: the lowest clear bit of `used`.
        used     = Signal(n_tags)
        free_tag = Signal(tw)
        have_tag = Signal()
        self.comb += have_tag.eq(~used != 0)
        for i in reversed(range(n_tags)):
            self.comb += If(~used[i], free_tag.eq(i))
        fwx_busy = Signal()

        # Event selection, by priority.
        ev_be  = Signal()
        ev_dma = Signal()
        ev_err = Signal()
        ev_fwc = Signal()
        ev_fwx = Signal()
        ev_cmd = Signal()
        dma_fw = Signal()
        ok_be  = Signal()
        ok_dma = Signal()
        ok_err = Signal()
        ok_fwc = Signal()
        ok_fwx = Signal()
        self.comb += [
            dma_fw.eq(s_dma.tag[tw]),
            ok_be.eq(s_be.valid & walk_rdy & cpl_rdy),
            ok_dma.eq(s_dma.valid & fwx_rdy & be_rdy & cpl_rdy),
            ok_err.eq(s_err.valid & cpl_rdy),
            ok_fwc.eq(s_fw_cpl.valid & cpl_rdy),
            ok_fwx.eq(s_fwx.valid & ~fwx_busy & walk_rdy),
            ev_be.eq(ok_be),
            ev_dma.eq(~ok_be & ok_dma),
            ev_err.eq(~ok_be & ~ok_dma & ok_err),
            ev_fwc.eq(~ok_be & ~ok_dma & ~ok_err & ok_fwc),
            ev_fwx.eq(~ok_be & ~ok_dma & ~ok_err & ~ok_fwc & ok_fwx),
            ev_cmd.eq(~ok_be & ~ok_dma & ~ok_err & ~ok_fwc & ~(s_fwx.valid & ~fwx_busy)
                      & s_cmd.valid & have_tag & walk_rdy & be_rdy & cpl_rdy),
            s_be.ready.eq(ev_be),
            s_dma.ready.eq(ev_dma),
            s_err.ready.eq(ev_err),
            s_fw_cpl.ready.eq(ev_fwc),
            s_fwx.ready.eq(ev_fwx),
            s_cmd.ready.eq(ev_cmd),
        ]

        # Table and map addresses.
        tag = Signal(tw)
        self.comb += [
            tag.eq(Mux(ev_be, s_be.tag, Mux(ev_dma, s_dma.tag[:tw], free_tag))),
            tport.adr.eq(tag),
            tport.we.eq(ev_cmd),
            map_rp.adr.eq(Mux(ev_err, s_err.sqid[:qw], s_cmd.sqid[:qw])),
        ]
        for name, _ in _table_layout():
            if name != "cqid":
                self.comb += getattr(entry_w, name).eq(getattr(s_cmd, name))
        self.comb += [
            entry_w.cqid.eq(map_rp.dat_r),
            tport.dat_w.eq(entry_w.raw_bits()),
        ]

        # Actions.
        e = entry_r
        be_read_ok   = Signal()
        dma_write_ok = Signal()
        free         = Signal()
        self.comb += [
            be_read_ok.eq((e.opcode == NvmOpcode.READ) & (s_be.status == 0)),
            dma_write_ok.eq((e.opcode == NvmOpcode.WRITE) & (s_dma.status == 0)),
            free.eq((ev_be & ~be_read_ok) | (ev_dma & ~dma_fw & ~dma_write_ok)),
        ]

        def walk_push(wtag, buf, prp1, prp2, length, to_host):
            return [walk_f.sink.valid.eq(1), walk_f.sink.tag.eq(wtag), walk_f.sink.buf.eq(buf),
                    walk_f.sink.prp1.eq(prp1), walk_f.sink.prp2.eq(prp2),
                    walk_f.sink.length.eq(length), walk_f.sink.to_host.eq(to_host)]

        def be_push(btag, src):
            return [be_f.sink.valid.eq(1), be_f.sink.tag.eq(btag)] + \
                   [getattr(be_f.sink, n).eq(getattr(src, n))
                    for n in ["opcode", "nsid", "slba", "nlb", "flags", "sqid", "cid"]]

        def cpl_push(cqid, sqid, sq_head, cid, status, dw0=0):
            c = cpl_f.sink
            return [c.valid.eq(1), c.cqid.eq(cqid), c.sqid.eq(sqid), c.sq_head.eq(sq_head),
                    c.cid.eq(cid), c.status.eq(status), c.dw0.eq(dw0)]

        self.comb += [
            If(ev_be,
                If(be_read_ok,
                    *walk_push(s_be.tag, s_be.tag, e.prp1, e.prp2, e.length, 1)
                ).Else(
                    *cpl_push(e.cqid, e.sqid, e.sq_head, e.cid, s_be.status)
                )
            ),
            If(ev_dma,
                If(dma_fw,
                    fwx_f.sink.valid.eq(1),
                    fwx_f.sink.status.eq(s_dma.status)
                ).Elif(dma_write_ok,
                    *be_push(s_dma.tag[:tw], e)
                ).Else(
                    *cpl_push(e.cqid, e.sqid, e.sq_head, e.cid, s_dma.status)
                )
            ),
            If(ev_err,
                *cpl_push(map_rp.dat_r, s_err.sqid, s_err.sq_head, s_err.cid, s_err.status)
            ),
            If(ev_fwc,
                *cpl_push(s_fw_cpl.cqid, s_fw_cpl.sqid, s_fw_cpl.sq_head, s_fw_cpl.cid,
                          s_fw_cpl.status, s_fw_cpl.dw0)
            ),
            If(ev_fwx,
                *walk_push(1 << tw, Cat(s_fwx.buf, 1), s_fwx.prp1, s_fwx.prp2, s_fwx.length,
                           s_fwx.to_host)
            ),
            If(ev_cmd,
                If(s_cmd.opcode == NvmOpcode.WRITE,
                    *walk_push(free_tag, free_tag, s_cmd.prp1, s_cmd.prp2, s_cmd.length, 0)
                ).Else(
                    *be_push(free_tag, s_cmd)
                )
            ),
        ]

        # Tag and firmware-transfer state.
        n_used = Signal(max=n_tags + 1)
        self.sync += [
            If(ev_cmd, used.eq(used | (1 << free_tag))),
            If(free, used.eq(used & ~(1 << tag))),
            If(ev_cmd & ~free,
                n_used.eq(n_used + 1)
            ).Elif(free & ~ev_cmd,
                n_used.eq(n_used - 1)
            ),
            If(ev_fwx, fwx_busy.eq(1)),
            If(ev_dma & dma_fw, fwx_busy.eq(0)),
        ]
        self.comb += [
            self.in_flight.eq(n_used),
            self.busy.eq((used != 0) | fwx_busy | walk_f.source.valid | be_f.source.valid
                         | cpl_f.source.valid | fwx_f.source.valid),
        ]
