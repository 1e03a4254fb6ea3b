# SPDX-License-Identifier: BSD-2-Clause
"""NvmePrpWalk: turns an NVMe command's PRP1/PRP2 into host-memory segments (MPS 4 KiB).

A transfer request {tag, buf, prp1, prp2, length, to_host} becomes segments {tag, buf,
to_host, addr, count, offset, status}, each within one 4 KiB host memory page, in transfer
order, the last one marked with the stream's `last`. `offset` is the segment's byte offset in
the transfer (and in the data buffer `buf`). PRP1 gives the first segment (it may start
anywhere in its page, dword aligned); PRP2 is the second page when the rest fits in one page,
else a PRP list pointer. PRP lists are read from host memory by memory-read TLPs (several
entries per read, up to the negotiated max read request size and never past the list page);
a list longer than its page chains through the page's last entry.

The whole list is read and checked before the first segment leaves: a command with a bad PRP
gets one segment with a non-zero `status` (NVMe status field, SCT 0) and no data segment, so
no data moves for it:

- PRP Offset Invalid (SC 13h, DNR): PRP1 not dword aligned; PRP2 used as a data pointer with a
  non-zero offset; a PRP list pointer (PRP2 or a chain entry) not qword aligned or, for chain
  entries, with a non-zero offset; a PRP list data entry with a non-zero offset.
- Data Transfer Error (SC 04h): a list read completed with an error status (UR, CA).
- Invalid Field in Command (SC 02h, DNR): length 0, not a dword multiple, or above
  `max_transfer` (the front end derives it from NLB and the LBA size; MDTS bounds it).
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import FSM, Cat, Constant, If, Memory, Mux, NextState, NextValue, Signal

from rtl.nvme.litepcie_fixes import require
from rtl.nvme.nvme_common import check_param, stream_port
from spec.fw_streams import LEN_BITS, STATUS_BITS
from spec.nvme import SC

__all__ = ["NvmePrpWalk", "prp_req_layout", "prp_seg_layout", "PAGE_BYTES"]

# Layouts -----------------------------------------------------------------------------------------

PAGE_BYTES = 4096       # CC.MPS = 0: 4 KiB memory pages.
PAGE_SHIFT = 12
COUNT_BITS = 13         # Segment byte count, 4..4096.
# LEN_BITS (transfer length in bytes), STATUS_BITS (NVMe status field): spec/fw_streams.py.


def prp_req_layout(tag_width, buf_width):
    """One data transfer of a command."""
    return [
        ("tag",     tag_width),
        ("buf",     buf_width),    # Data buffer handle (passed through to the segments).
        ("prp1",    64),           # SQE DW7:6.
        ("prp2",    64),           # SQE DW9:8.
        ("length",  LEN_BITS),     # Bytes: (NLB + 1) << LBADS.
        ("to_host", 1),            # 1: buffer -> host (NVM Read); 0: host -> buffer (NVM Write).
    ]


def prp_seg_layout(tag_width, buf_width, offset_width):
    """One host-memory segment of a transfer, within one page; the stream's `last` marks the
    transfer's last segment. A segment with status != 0 carries no data (count 0)."""
    return [
        ("tag",     tag_width),
        ("buf",     buf_width),
        ("to_host", 1),
        ("addr",    64),           # Host byte address, dword aligned.
        ("count",   COUNT_BITS),   # Bytes, dword multiple, 4..4096, within addr's page.
        ("offset",  offset_width), # Byte offset in the transfer / buffer.
        ("status",  STATUS_BITS),  # 0, or the NVMe status of the failed transfer.
    ]


# Helpers -----------------------------------------------------------------------------------------

def _check(name, value, ok, legal):
    check_param("NvmePrpWalk", name, value, ok, legal)


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _is_pow2(v):
    return _is_int(v) and v > 0 and v & (v - 1) == 0


def _min(*values):
    m = values[0]
    for v in values[1:]:
        m = Mux(v < m, v, m)
    return m


# Core --------------------------------------------------------------------------------------------

class NvmePrpWalk(LiteXModule):
    """NVMe PRP walker (Verilog module `nvme_prp_walk`).

    Parameters:
      endpoint     (LitePCIeEndpoint): PRP lists are read through a read-only master port of
                   its crossbar; PHY data_width 64, address_width 64, LitePCIeFixes applied.
      tag_width    (1..16, default 8): command tag bits.
      buf_width    (1..16, default 4): data buffer handle bits.
      max_transfer (power of two, 8192..16 MiB, default 262144): largest transfer in bytes;
                   sizes the PRP entry memory (max_transfer / 4096 entries).

    Ports:
      s_req   transfer requests (`prp_req_layout`), one walked at a time.
      m_seg   segments (`prp_seg_layout`), `m_seg_last` on the transfer's last one.
    """
    def __init__(self, endpoint, tag_width=8, buf_width=4, max_transfer=262144):
        # Parameters checks.
        _check("tag_width", tag_width, _is_int(tag_width) and 1 <= tag_width <= 16,
               "out of range 1..16")
        _check("buf_width", buf_width, _is_int(buf_width) and 1 <= buf_width <= 16,
               "out of range 1..16")
        _check("max_transfer", max_transfer,
               _is_pow2(max_transfer) and 8192 <= max_transfer <= 2**24,
               "is not a power of two in 8192..16777216")
        phy = getattr(endpoint, "phy", None)
        _check("endpoint", endpoint,
               getattr(phy, "data_width", None) == 64 and hasattr(endpoint, "crossbar")
               and endpoint.crossbar.address_width == 64,
               "is not a LitePCIeEndpoint with PHY data_width 64 and address_width 64")
        require(endpoint, "NvmePrpWalk")
        self.tag_width    = tag_width
        self.buf_width    = buf_width
        self.max_transfer = max_transfer
        offset_width = (max_transfer - 1).bit_length()
        self.offset_width = offset_width
        n_entries = max_transfer // PAGE_BYTES

        # Ports.
        self.s_req = s_req = stream.Endpoint(prp_req_layout(tag_width, buf_width))
        self.m_seg = m_seg = stream.Endpoint(prp_seg_layout(tag_width, buf_width, offset_width))

        # # #

        port = endpoint.crossbar.get_master_port(read_only=True)
        req, cpl = port.source, port.sink

        # PRP list data entries of the command being walked (page base addresses 63:12).
        mem = Memory(64 - PAGE_SHIFT, n_entries, name="prp_entries")
        wp = mem.get_port(write_capable=True)
        rp = mem.get_port(async_read=True)
        self.specials += mem, wp, rp

        # Latched request.
        tag    = Signal(tag_width)
        buf    = Signal(buf_width)
        prp1   = Signal(64)
        prp2   = Signal(64)
        length = Signal(LEN_BITS)
        to_h   = Signal()
        self.sync += If(s_req.valid & s_req.ready,
            tag.eq(s_req.tag), buf.eq(s_req.buf), prp1.eq(s_req.prp1), prp2.eq(s_req.prp2),
            length.eq(s_req.length), to_h.eq(s_req.to_host),
        )

        # First segment and the rest.
        first  = Signal(COUNT_BITS)
        rem    = Signal(LEN_BITS)
        to_end = Signal(COUNT_BITS)
        self.comb += to_end.eq(PAGE_BYTES - prp1[:PAGE_SHIFT])
        n_data = Signal(LEN_BITS - PAGE_SHIFT + 1)    # List data entries: ceil(rem / 4096).
        self.comb += n_data.eq((rem + PAGE_BYTES - 1)[PAGE_SHIFT:])

        status = Signal(STATUS_BITS)
        mode   = Signal(2)                 # 0: PRP1 only, 1: PRP1 + PRP2, 2: PRP1 + list.

        # List walk state.
        lptr     = Signal(64)              # Next list entry to read.
        n_left   = Signal(LEN_BITS - PAGE_SHIFT + 1)   # Data entries not yet read.
        page_rem = Signal(10)              # Entries still to read in this list page.
        chain    = Signal()                # This page ends in a chain pointer.
        next_ptr = Signal(64)              # The chain pointer read.
        k        = Signal(7)               # Entries in the read in flight.
        widx     = Signal(max=n_entries + 1)
        in_page  = Signal(10)
        mrrs_e   = Signal(7)
        self.comb += [
            in_page.eq((PAGE_BYTES - lptr[:PAGE_SHIFT])[3:]),
            mrrs_e.eq(_min(phy.max_request_size[3:], Constant(64, 7))),
        ]
        err_off = Signal()                 # A bad offset seen in the list.
        err_cpl = Signal()                 # An error completion seen.

        # Emission state.
        eidx   = Signal(max=n_entries + 2)  # 0: PRP1; then PRP2 or entry eidx - 1.
        e_off  = Signal(offset_width + 1)   # Bytes emitted so far.
        e_rem  = Signal(LEN_BITS)           # Bytes still to emit after this segment.

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            s_req.ready.eq(1),
            If(s_req.valid,
                NextState("CHECK")
            )
        )
        fsm.act("CHECK",
            NextValue(first, _min(length, to_end)),
            NextValue(rem, length - _min(length, to_end)),
            NextValue(err_off, 0),
            NextValue(err_cpl, 0),
            NextValue(widx, 0),
            If((length == 0) | (length[:2] != 0) | (length > max_transfer),
                NextValue(status, SC.INVALID_FIELD),
                NextState("ERROR")
            ).Elif(prp1[:2] != 0,
                NextValue(status, SC.PRP_OFFSET_INVALID),
                NextState("ERROR")
            ).Else(
                NextState("ROUTE")
            )
        )
        fsm.act("ROUTE",
            NextValue(eidx, 0),
            NextValue(e_off, 0),
            NextValue(lptr, prp2),
            NextValue(n_left, n_data),
            If(rem == 0,
                NextValue(mode, 0),
                NextState("EMIT")
            ).Elif(rem <= PAGE_BYTES,
                NextValue(mode, 1),
                If(prp2[:PAGE_SHIFT] != 0,
                    NextValue(status, SC.PRP_OFFSET_INVALID),
                    NextState("ERROR")
                ).Else(
                    NextState("EMIT")
                )
            ).Else(
                NextValue(mode, 2),
                If(prp2[:3] != 0,
                    NextValue(status, SC.PRP_OFFSET_INVALID),
                    NextState("ERROR")
                ).Else(
                    NextState("PAGE")
                )
            )
        )
        # A new list page at lptr: how many entries to read in it, and whether it chains.
        fsm.act("PAGE",
            If(n_left > in_page,
                NextValue(page_rem, in_page),
                NextValue(chain, 1),
            ).Else(
                NextValue(page_rem, n_left),
                NextValue(chain, 0),
            ),
            NextState("REQUEST")
        )
        self.comb += [
            req.channel.eq(port.channel),
            req.user_id.eq(0),
            req.we.eq(0),
            req.adr.eq(lptr),
            req.len.eq(Cat(Constant(0, 1), k)),
            req.req_id.eq(phy.id),
            req.tag.eq(0),
            req.first.eq(1),
            req.last.eq(1),
            req.dat.eq(0),
        ]
        fsm.act("REQUEST",
            NextValue(k, _min(page_rem, mrrs_e)),
            NextState("ISSUE")
        )
        fsm.act("ISSUE",
            req.valid.eq(1),
            If(req.ready,
                NextState("RECEIVE")
            )
        )
        # One 64-bit beat per entry (the list pointer is qword aligned and completions split
        # at qword boundaries). Every beat is taken at once: the memory holds all entries.
        is_chain = Signal()
        data_ok  = Signal()
        self.comb += [
            cpl.ready.eq(1),
            is_chain.eq(chain & (page_rem == 1)),
            data_ok.eq(fsm.ongoing("RECEIVE") & cpl.valid & ~cpl.err & ~err_cpl & ~err_off),
            wp.adr.eq(widx),
            wp.dat_w.eq(cpl.dat[PAGE_SHIFT:]),
            wp.we.eq(data_ok & ~is_chain & (widx < n_entries)),
        ]
        fsm.act("RECEIVE",
            If(cpl.valid,
                If(cpl.err,
                    NextValue(err_cpl, 1)
                ).Elif(data_ok,
                    NextValue(page_rem, page_rem - 1),
                    NextValue(lptr, lptr + 8),
                    If(cpl.dat[:PAGE_SHIFT] != 0,
                        NextValue(err_off, 1)
                    ),
                    If(is_chain,
                        NextValue(next_ptr, cpl.dat)
                    ).Else(
                        NextValue(widx, widx + 1),
                        NextValue(n_left, n_left - 1)
                    )
                ),
                If(cpl.last & cpl.end,
                    NextState("NEXT")
                )
            )
        )
        fsm.act("NEXT",
            If(err_cpl,
                NextValue(status, SC.DATA_TRANSFER_ERROR),
                NextState("ERROR")
            ).Elif(err_off,
                NextValue(status, SC.PRP_OFFSET_INVALID),
                NextState("ERROR")
            ).Elif(page_rem != 0,
                NextState("REQUEST")
            ).Elif(chain,
                NextValue(lptr, next_ptr),
                NextState("PAGE")
            ).Else(
                NextState("EMIT")
            )
        )

        # Segments: PRP1 (first bytes), then PRP2 or the list entries, 4 KiB each but the last.
        seg_addr  = Signal(64)
        seg_count = Signal(COUNT_BITS)
        seg_left  = Signal(LEN_BITS)       # Bytes after this segment.
        self.comb += [
            rp.adr.eq(eidx - 1),
            If(eidx == 0,
                seg_addr.eq(prp1),
                seg_count.eq(first),
                seg_left.eq(rem),
            ).Else(
                seg_addr.eq(Mux(mode == 1, prp2, Cat(Constant(0, PAGE_SHIFT), rp.dat_r))),
                seg_count.eq(_min(e_rem, Constant(PAGE_BYTES, LEN_BITS))),
                seg_left.eq(e_rem - _min(e_rem, Constant(PAGE_BYTES, LEN_BITS))),
            ),
            m_seg.tag.eq(tag),
            m_seg.buf.eq(buf),
            m_seg.to_host.eq(to_h),
        ]
        fsm.act("EMIT",
            m_seg.valid.eq(1),
            m_seg.addr.eq(seg_addr),
            m_seg.count.eq(seg_count),
            m_seg.offset.eq(e_off),
            m_seg.status.eq(0),
            m_seg.last.eq(seg_left == 0),
            If(m_seg.ready,
                NextValue(eidx, eidx + 1),
                NextValue(e_off, e_off + seg_count),
                NextValue(e_rem, seg_left),
                If(seg_left == 0,
                    NextState("IDLE")
                )
            )
        )
        fsm.act("ERROR",
            m_seg.valid.eq(1),
            m_seg.addr.eq(0),
            m_seg.count.eq(0),
            m_seg.offset.eq(0),
            m_seg.status.eq(status),
            m_seg.last.eq(1),
            If(m_seg.ready,
                NextState("IDLE")
            )
        )

    def get_ios(self):
        """Core ports only; the endpoint's PHY ports belong to the enclosing top."""
        self.m_seg.last.name_override = "m_seg_last"
        return (stream_port(self.s_req, "s_req") + stream_port(self.m_seg, "m_seg")
                + [self.m_seg.last])
