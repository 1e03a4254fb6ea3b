# SPDX-License-Identifier: BSD-2-Clause
"""NvmeMsix: the MSI-X table and Pending Bit Array in BAR0, and the MSI-X message writes.

PCIe 3.0 §6.8.2 (MSI-X). The hard IP presents the MSI-X capability in configuration space
(table and PBA in BAR0 at TABLE_OFFSET / PBA_OFFSET, the table size); the table itself, the
PBA and the messages are the function's, i.e. this core's:

- **Table**: one 16-byte entry a vector, dwords 0/1 Message Address (bits 1:0 read 0), 2 Message
  Data, 3 Vector Control (bit 0 Mask Bit, the rest read 0). Address and data are in a memory,
  the mask bits in registers (the send pick looks at all of them). Reset: every vector masked,
  as the specification requires; the table survives a controller reset (CC.EN), it is the PCI
  function's state.
- **PBA**: bit v is vector v's Pending Bit, one qword per 64 vectors; read only (writes are
  dropped). An interrupt request (`s_irq`, one per coalesced interrupt) sets the vector's bit.
- **Messages**: a pending vector that is not masked, with MSI-X enabled and the function not
  masked, is sent as a 1 DW memory write of the entry's Message Data to its Message Address
  (MWr32 or MWr64 by the address) on a write-only LitePCIe master port, the lowest such vector
  above the last one sent first (round robin). Its Pending Bit clears when the message is
  started; a request arriving after that sets it again (one interrupt more, never one less).
  A vector masked, or MSI-X disabled or function-masked, before the write is taken is put
  back pending (or dropped when MSI-X was disabled) instead of sent.
- **Ordering**: the completion queue entry writes (nvme_cq_post) leave on a write-only master
  port as well, so they and these messages share LitePCIe's write arbiter; a CQE's interrupt
  request comes after its last beat was taken, so its message follows it on the link and PCIe
  posted-write ordering puts the CQE in host memory first.

BAR0 requests in the window [TABLE_OFFSET, bar0_size) come to this core on its own crossbar
slave port (NvmeBar0 keeps the registers and doorbells below). Supported as NvmeBar0 does:
1 DW anywhere, 2 DW at a qword-aligned offset; anything longer gets a UR completion (reads)
or is dropped (writes). Offsets of the window outside the table and PBA read 0, writes to
them are dropped.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import FSM, Array, Cat, If, Memory, Mux, NextState, NextValue, Replicate, Signal

from rtl.nvme.litepcie_fixes import require
from rtl.nvme.nvme_common import check_param
from rtl.nvme.nvme_irq_coalesce import irq_layout

__all__ = ["NvmeMsix", "TABLE_OFFSET", "PBA_OFFSET", "MAX_VECTORS"]

TABLE_OFFSET = 0x2000       # BAR0 offsets the hard IP's MSI-X capability points at.
PBA_OFFSET   = 0x3000
MAX_VECTORS  = 65           # one per CQ of the 64-I/O-queue front end (the pick is parallel)


class NvmeMsix(LiteXModule):
    """MSI-X table, PBA and message writes of the NVMe function.

    Parameters:
      endpoint   LitePCIeEndpoint (data_width 64, LitePCIeFixes added): one slave port for
                 BAR0 offsets TABLE_OFFSET.. bar0_size - 1, one write-only master port.
      n_vectors  (1..65): table entries (vectors 0 .. n_vectors - 1).

    Interfaces:
      s_irq      interrupt requests (`irq_layout`: vector); always ready. Vectors >=
                 n_vectors are ignored.
      enable     in: MSI-X Enable (Message Control bit 15, from the hard IP).
      function_mask in: Function Mask (Message Control bit 14).
      clear      in: drop every pending bit (controller reset: the queues are gone).
      pending    out: the PBA bits.
      bad_req    pulse: a BAR request was refused (UR completion or dropped write).
    """
    def __init__(self, endpoint, n_vectors=MAX_VECTORS):
        check_param("NvmeMsix", "n_vectors", n_vectors,
                    isinstance(n_vectors, int) and not isinstance(n_vectors, bool)
                    and 1 <= n_vectors <= MAX_VECTORS, f"out of range 1..{MAX_VECTORS}")
        phy = endpoint.phy
        check_param("NvmeMsix", "endpoint", endpoint, phy.data_width == 64,
                    "has a PHY data_width other than 64")
        bar0_size = getattr(phy, "bar0_size", 0)
        table_end = TABLE_OFFSET + 16 * n_vectors
        pba_qwords = (n_vectors + 63) // 64
        check_param("NvmeMsix", "endpoint", endpoint,
                    table_end <= PBA_OFFSET and PBA_OFFSET + 8 * pba_qwords <= bar0_size,
                    f"has a BAR0 of {bar0_size} bytes; the table and PBA need "
                    f"{PBA_OFFSET + 8 * pba_qwords}")
        require(endpoint, "NvmeMsix")
        n = n_vectors
        vw = max(1, (n - 1).bit_length())

        self.s_irq         = s_irq = stream.Endpoint(irq_layout())
        self.enable        = Signal()
        self.function_mask = Signal()
        self.clear         = Signal()
        self.pending       = pending = Signal(n)
        self.bad_req       = Signal()
        self.n_vectors     = n

        # # #

        mask = Signal(n, reset=2**n - 1)        # Vector Control Mask Bits.
        # Table memory: qword 2v = Message Address, qword 2v + 1 = Message Data in bits 31:0.
        table = Memory(64, 2 * n, name="msix_table")
        bar_port = table.get_port(write_capable=True, we_granularity=32)
        send_port = table.get_port()
        self.specials += table, bar_port, send_port

        # Interrupt requests and sends both update the pending bits, each at most once a cycle.
        set_irq  = Signal(n)        # a request
        set_back = Signal(n)        # a message that was not sent after all
        clr_bits = Signal(n)        # a message started
        self.comb += [
            s_irq.ready.eq(1),
            If(s_irq.valid & (s_irq.vector < n), set_irq.eq(1 << s_irq.vector[:vw])),
        ]
        self.sync += If(self.clear,
            pending.eq(0)
        ).Else(
            pending.eq((pending & ~clr_bits) | set_irq | set_back)
        )

        # BAR0 requests ----------------------------------------------------------------------------
        port = endpoint.crossbar.get_slave_port(
            lambda a: (a[12:] >= TABLE_OFFSET >> 12) & (a[12:] < bar0_size >> 12))
        sink, source = port.sink, port.source

        we     = Signal()
        adr    = Signal(32)
        length = Signal(10)
        tag    = Signal(8)
        req_id = Signal(16)
        dat    = Signal(64)
        rdata  = Signal(64)
        err    = Signal()
        supported = (length == 1) | ((length == 2) & ~adr[2])
        lane      = adr[2]
        in_table  = (adr >= TABLE_OFFSET) & (adr < table_end)
        in_pba    = (adr >= PBA_OFFSET) & (adr < PBA_OFFSET + 8 * pba_qwords)
        entry     = Signal(vw)
        qword     = Signal(max=2 * n)
        pba_q     = Signal(max=max(2, pba_qwords))
        self.comb += [
            entry.eq(adr[4:] - (TABLE_OFFSET >> 4)),
            qword.eq(adr[3:] - (TABLE_OFFSET >> 3)),
            pba_q.eq((adr - PBA_OFFSET)[3:]),
        ]
        # A write's two dwords in their lanes of the qword (1 DW: its lane only).
        wdat  = Mux(length == 1, Cat(dat[:32], dat[:32]), dat)
        wlane = Mux(length == 1, Mux(lane, 0b10, 0b01), 0b11)
        pba_words = Array(Signal(64, name=f"pba_q{i}") for i in range(pba_qwords))
        for i, w in enumerate(pba_words):
            self.comb += w.eq(pending[64 * i:64 * (i + 1)])

        self.comb += [
            source.first.eq(1),
            source.last.eq(1),
            source.tag.eq(tag),
            source.req_id.eq(req_id),
            source.cmp_id.eq(phy.id),
            source.adr.eq(adr),
            source.err.eq(err),
            source.len.eq(Mux(err, 0, length)),
            source.dat.eq(Mux(length == 1, Mux(lane, rdata[32:], rdata[:32]), rdata)),
            bar_port.adr.eq(qword),
            bar_port.dat_w.eq(wdat & Mux(qword[0], 0xFFFF_FFFF,   # address: bits 1:0 are 0
                                         0xFFFF_FFFF_FFFF_FFFC)),
        ]

        self.bar_fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            sink.ready.eq(1),
            If(sink.valid & sink.first,
                NextValue(we, sink.we),
                NextValue(adr, sink.adr),
                NextValue(length, sink.len),
                NextValue(tag, sink.tag),
                NextValue(req_id, sink.req_id),
                NextValue(dat, sink.dat),
                NextValue(err, 0),
                If(sink.last, NextState("DECODE")).Else(NextState("DRAIN"))
            )
        )
        fsm.act("DRAIN",
            sink.ready.eq(1),
            If(sink.valid & sink.last, NextState("DECODE"))
        )
        fsm.act("DECODE",
            If(~supported,
                self.bad_req.eq(1),
                NextValue(err, 1),
                If(we, NextState("IDLE")).Else(NextState("COMPLETION"))
            ).Elif(we,
                If(in_table,
                    # Dwords 0..2 of an entry are memory; dword 3 (the high lane of the odd
                    # qword) is the Vector Control register.
                    bar_port.we.eq(wlane & Mux(qword[0], 0b01, 0b11)),
                    If(qword[0] & wlane[1],
                        NextValue(mask, (mask & ~(1 << entry)) | (wdat[32] << entry))
                    )
                ),
                NextState("IDLE")
            ).Else(
                NextState("READ")
            )
        )
        # The memory's read data is there the cycle after DECODE presented the address.
        fsm.act("READ",
            If(in_table,
                NextValue(rdata, Mux(qword[0],
                                     Cat(bar_port.dat_r[:32], (mask >> entry)[0],
                                         Replicate(0, 31)),
                                     bar_port.dat_r))
            ).Elif(in_pba,
                NextValue(rdata, pba_words[pba_q])
            ).Else(
                NextValue(rdata, 0)
            ),
            NextState("COMPLETION")
        )
        fsm.act("COMPLETION",
            source.valid.eq(1),
            If(source.ready, NextState("IDLE"))
        )

        # Messages ---------------------------------------------------------------------------------
        mport = endpoint.crossbar.get_master_port(write_only=True)
        req = mport.source
        self.comb += mport.sink.ready.eq(1)    # Posted writes: no completion comes back.

        can_send = Signal(n)
        above    = Signal(n)
        last     = Signal(vw)
        pick     = Signal(vw)
        vector   = Signal(vw)
        msg_adr  = Signal(64)
        self.comb += [
            can_send.eq(Mux(self.enable & ~self.function_mask, pending & ~mask, 0)),
            above.eq(can_send & ~((2 << last) - 1)),
        ]
        # Lowest sendable vector above the last one sent, else the lowest.
        for i in reversed(range(n)):
            self.comb += If(can_send[i], pick.eq(i))
        for i in reversed(range(n)):
            self.comb += If(above[i], pick.eq(i))

        v_blocked = ~self.enable | self.function_mask | (mask >> vector)[0]
        self.send_fsm = sfsm = FSM(reset_state="IDLE")
        sfsm.act("IDLE",
            send_port.adr.eq(Cat(0, pick)),
            If(can_send != 0,
                NextValue(vector, pick),
                NextValue(last, pick),
                clr_bits.eq(1 << pick),
                NextState("ADDRESS")
            )
        )
        sfsm.act("ADDRESS",
            send_port.adr.eq(Cat(1, vector)),
            NextValue(msg_adr, send_port.dat_r),
            NextState("DATA")
        )
        self.comb += [
            req.channel.eq(mport.channel),
            req.we.eq(1),
            req.adr.eq(msg_adr[:len(req.adr)]),
            req.len.eq(1),
            req.req_id.eq(phy.id),
            req.tag.eq(0),
            req.first.eq(1),
            req.last.eq(1),
            req.dat.eq(Cat(send_port.dat_r[:32], Replicate(0, 32))),
        ]
        sfsm.act("DATA",
            send_port.adr.eq(Cat(1, vector)),
            If(v_blocked,
                # Masked or disabled since the pick: back to pending (dropped if disabled).
                If(self.enable & ~self.clear, set_back.eq(1 << vector)),
                NextState("IDLE")
            ).Else(
                req.valid.eq(1),
                If(req.ready, NextState("IDLE"))
            )
        )
