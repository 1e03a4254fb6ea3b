# SPDX-License-Identifier: BSD-2-Clause
"""NvmeController: the NVMe front end on a LitePCIe endpoint, from BAR0 to the back end.

    BAR0 ── NvmeBar0 ── NvmeRegs ──doorbells──► NvmeSqFetch ──SQEs──► NvmeCmdDecode
                           ▲ CC/CSTS                                   │ fast │ firmware │ errors
                           │                                          ▼      ▼          │
    MSI ◄─ NvmeIrqCoalesce ◄─ NvmeCqPost ◄──────── NvmeIoEngine ◄─────┘  m_fw_cmd ...   │
                                                   │  ▲                                  │
                         NvmePrpWalk ─► NvmeDataDma ┘  └─ back end (m_be_req / s_be_cpl) ┘

The controller owns the queue life cycle: on CC.EN 0 -> 1 it creates the admin queue pair from
AQA/ASQ/ACQ and sets CSTS.RDY; on CC.EN 1 -> 0 it stops fetching (every SQ deleted), lets the
commands in flight finish without posting their completions, deletes every CQ, resets the
interrupt state and only then clears CSTS.RDY, so a re-enable starts clean. CC.SHN reports
shutdown complete once no command is in flight.

Firmware (the processor interface) serves every command that is not a fast-path NVM Read,
Write or Flush: it takes them on `m_fw_cmd`, posts completions on `s_fw_cpl`, creates and
deletes I/O queues (`s_fw_sq_cfg`, `s_fw_cq_cfg`), moves command data with `s_fw_xfer` between
the command's PRPs and its buffers, configures interrupts (`s_fw_ivc`, `fw_agg_thr`,
`fw_agg_time`), sets the namespace size (`fw_ns_size`), serves Abort with the abort slot and
Asynchronous Event Requests with `m_fw_aer`. A delete on `s_fw_sq_cfg` first aborts the SQ's
remaining entries (Command Aborted due to SQ Deletion) and waits for the commands in flight;
its handshake completes when the queue is gone.

Buffer memory (`m_bw`, `m_br`, `s_brd`, as NvmeDataDma's, words of the PHY's data_width W):
buffer handle h at word address h * max_transfer * 8 / W; handles 0 .. 2**tag_width - 1 are
the fast-path commands' (handle = tag),
2**tag_width + b is firmware buffer b.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import FSM, If, Mux, NextState, NextValue, Replicate, ResetInserter, Signal

from rtl.nvme.litepcie_fixes import require
from rtl.nvme.nvme_bar0 import NvmeBar0
from rtl.nvme.nvme_cmd_decode import NvmeCmdDecode
from rtl.nvme.nvme_common import check_param, stream_port
from rtl.nvme.nvme_cq_post import NvmeCqPost
from rtl.nvme.nvme_data_dma import NvmeDataDma
from rtl.nvme.nvme_io_engine import NvmeIoEngine
from rtl.nvme.nvme_irq_coalesce import NvmeIrqCoalesce
from rtl.nvme.nvme_msix import TABLE_OFFSET as MSIX_TABLE_OFFSET
from rtl.nvme.nvme_msix import NvmeMsix
from rtl.nvme.nvme_narrow_port import narrow_endpoint
from rtl.nvme.nvme_prp_walk import NvmePrpWalk
from rtl.nvme.nvme_regs import NvmeRegs
from rtl.nvme.nvme_sq_fetch import NvmeSqFetch
from spec.fw_streams import (
    be_cpl_layout,
    be_req_layout,
    cq_cfg_layout,
    cq_cpl_layout,
    fw_aer_layout,
    fw_sq_cfg_layout,
    fw_xfer_cpl_layout,
    fw_xfer_layout,
    ivc_layout,
    sqe_layout,
)
from spec.nvme import AerErrorInfo

__all__ = ["NvmeController", "fw_sq_cfg_layout", "fw_aer_layout"]

# Layouts -----------------------------------------------------------------------------------------

# fw_sq_cfg_layout, fw_aer_layout and the other processor interface layouts:
# spec/fw_streams.py.


# Core --------------------------------------------------------------------------------------------

class NvmeController(LiteXModule):
    """NVMe controller front end (Verilog module `nvme_controller` inside a top).

    Parameters:
      endpoint     (LitePCIeEndpoint): PHY data_width 64, 128, 256 or 512, address_width 64,
                   LitePCIeFixes added right after it. BAR0 is the PHY's bar0_size (>= the
                   doorbells). The data DMA (and the buffer ports m_bw / m_br / s_brd) run at
                   the PHY's width; the control engines (BAR0, SQ fetch, PRP walk, CQ post,
                   MSI-X) stay 64-bit behind NvmeNarrowPort when the PHY is wider.
      n_io_queues  (1..64, default 64): I/O queue pairs; interrupt vectors 0 .. n_io_queues.
      tag_width    (1..8, default 6): 2**tag_width fast-path commands in flight.
      max_transfer (power of two 8192..16 MiB, default 131072): most bytes per command
                   (Identify MDTS) and the size of one data buffer.
      lbads        (9..12, default 9): LBA size 2^lbads bytes.
      mqes         (1..4095, default 4095), dstrd (0..3, default 0), timeout_500ms (1..255,
                   default 20): CAP fields.
      max_burst    (1..8, default 4): SQEs per fetch.
      with_queue_lists (default True): I/O queues may also live in PRP-list memory (Create
                   I/O SQ/CQ with PC=0; the firmware writes their pages on `s_fw_sq_page` /
                   `s_fw_cq_page`); CAP.CQR = 0. False: CAP.CQR = 1, contiguous queues only.
      clk_freq_hz  (default 250e6): for the interrupt aggregation time.
      with_msix    (default False): also MSI-X (NvmeMsix: table at BAR0 + 0x2000, PBA at
                   + 0x3000, BAR0 >= 0x4000); the PHY gives `msix_enable` and
                   `msix_function_mask` (its configuration space's Message Control bits).
                   Interrupts go out as MSI-X while MSI-X is enabled, as MSI otherwise.
    """
    def __init__(self, endpoint, n_io_queues=64, tag_width=6, max_transfer=131072, lbads=9,
                 mqes=4095, dstrd=0, timeout_500ms=20, max_burst=4, clk_freq_hz=250e6,
                 with_queue_lists=True, with_msix=False):
        def _is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)
        check_param("NvmeController", "n_io_queues", n_io_queues,
                    _is_int(n_io_queues) and 1 <= n_io_queues <= 64, "out of range 1..64")
        check_param("NvmeController", "mqes", mqes, _is_int(mqes) and 1 <= mqes <= 4095,
                    "out of range 1..4095")
        check_param("NvmeController", "dstrd", dstrd, _is_int(dstrd) and 0 <= dstrd <= 3,
                    "out of range 0..3")
        require(endpoint, "NvmeController")
        phy = endpoint.phy
        check_param("NvmeController", "endpoint", endpoint,
                    getattr(phy, "data_width", None) in (64, 128, 256, 512),
                    "has a PHY data_width not in (64, 128, 256, 512)")
        self.data_width = phy.data_width
        # The control engines' 64-bit view (the endpoint itself on a 64-bit PHY).
        ctl = narrow_endpoint(endpoint)
        if ctl is not endpoint:
            self.narrow = ctl
        bar0_size = getattr(phy, "bar0_size", None)
        check_param("NvmeController", "endpoint", endpoint,
                    _is_int(bar0_size) and bar0_size >= 0x2000,
                    "has no PHY bar0_size >= 0x2000")
        address_width = (bar0_size - 1).bit_length()
        n_q = n_io_queues + 1
        if with_msix:
            # Registers and doorbells below the MSI-X table.
            db_end = 0x1000 + 2 * n_q * (4 << dstrd)
            check_param("NvmeController", "dstrd", dstrd, db_end <= MSIX_TABLE_OFFSET,
                        f"puts the doorbells of {n_q} queue pairs beyond the MSI-X table at "
                        f"0x{MSIX_TABLE_OFFSET:x} (with_msix)")
            for name in ("msix_enable", "msix_function_mask"):
                check_param("NvmeController", "endpoint", endpoint, hasattr(phy, name),
                            f"has a PHY without `{name}` (with_msix)")

        def list_pages(entry_bytes):
            pages = -(-(mqes + 1) * entry_bytes // 4096)
            return 1 << (pages - 1).bit_length() if with_queue_lists else 0
        tw = tag_width
        self.params = dict(n_io_queues=n_io_queues, tag_width=tag_width,
                           max_transfer=max_transfer, lbads=lbads, mqes=mqes, dstrd=dstrd)

        # Cores.
        self.bar0   = bar0   = NvmeBar0(
            ctl, address_width=min(32, address_width),
            address_decoder=(lambda a: a < MSIX_TABLE_OFFSET) if with_msix else None)
        self.regs   = regs   = NvmeRegs(n_io_queues=n_io_queues, mqes=mqes, dstrd=dstrd,
                                        timeout_500ms=timeout_500ms,
                                        address_width=min(32, address_width),
                                        cqr=0 if with_queue_lists else 1)
        self.sq     = sq     = NvmeSqFetch(ctl, n_sqs=n_q, max_burst=max_burst,
                                           list_pages=list_pages(64))
        self.decode = decode = NvmeCmdDecode(n_sqs=n_q, lbads=lbads, max_transfer=max_transfer)
        self.io     = io     = NvmeIoEngine(tag_width=tw, n_sqs=n_q)
        self.walk   = walk   = NvmePrpWalk(ctl, tag_width=tw + 1, buf_width=tw + 1,
                                           max_transfer=max_transfer)
        self.dma    = dma    = NvmeDataDma(endpoint, tag_width=tw + 1, buf_width=tw + 1,
                                           max_transfer=max_transfer)
        self.cq     = cq     = NvmeCqPost(ctl, n_cqs=n_q, list_pages=list_pages(16))
        irq_reset = Signal()
        self.irq    = irq    = ResetInserter()(NvmeIrqCoalesce(n_vectors=n_q,
                                                               clk_freq_hz=clk_freq_hz))

        # Processor interface.
        self.m_fw_cmd      = m_fw_cmd  = stream.Endpoint(sqe_layout())
        self.s_fw_cpl      = s_fw_cpl  = stream.Endpoint(cq_cpl_layout())
        self.s_fw_sq_cfg   = fw_sq     = stream.Endpoint(fw_sq_cfg_layout())
        self.s_fw_cq_cfg   = fw_cq     = stream.Endpoint(cq_cfg_layout())
        self.s_fw_sq_page  = sq.s_page
        self.s_fw_cq_page  = cq.s_page
        self.s_fw_xfer     = stream.Endpoint(fw_xfer_layout(tw))
        self.m_fw_xfer_cpl = stream.Endpoint(fw_xfer_cpl_layout())
        self.s_fw_ivc      = stream.Endpoint(ivc_layout())
        self.m_fw_aer      = stream.Endpoint(fw_aer_layout())
        self.fw_agg_thr    = Signal(8)
        self.fw_agg_time   = Signal(8)
        self.fw_ns_size    = Signal(64)
        self.fw_abort_arm  = Signal()
        self.fw_abort_sqid = Signal(16)
        self.fw_abort_cid  = Signal(16)
        self.abort_hit     = Signal()
        self.sq_pending    = Signal(n_q)
        self.io_busy       = Signal()
        self.ctrl_enabled  = Signal()
        # Shutdown: CC.SHN as the host wrote it, and the firmware's "done" (map saved); SHST
        # reaches 10b only with it. Not a port of the test tops: their firmware model saves
        # nothing, so it stays 1 there.
        self.fw_shn        = Signal(2)
        self.fw_shn_done   = Signal(reset=1)
        # Controller reset handshake: after a reset (CC.EN 1 -> 0) the controller stays
        # disabled until the firmware has reset its own state (queues, features, AERs) and
        # pulsed fw_reset_ack, so a host that re-enables at once never meets a firmware that
        # missed the reset. fw_reset_gate = 0 (the test tops: their firmware model keeps no
        # such state) turns the wait off.
        self.fw_reset_gate    = Signal()
        self.fw_reset_pending = Signal()
        self.fw_reset_ack     = Signal()
        # The firmware has failed (a panic; or a watchdog): CSTS.CFS, until the firmware,
        # restarted by the host's controller reset, clears it.
        self.fw_fatal         = Signal()
        # Back end and buffer memory.
        self.m_be_req = stream.Endpoint(be_req_layout(tw))
        self.s_be_cpl = stream.Endpoint(be_cpl_layout(tw))
        self.m_bw, self.m_br, self.s_brd = dma.m_bw, dma.m_br, dma.s_brd

        # # #

        # Host side: BAR0 -> registers -> doorbells to the engines (both always ready).
        db = regs.m_db
        self.comb += [
            bar0.m_axil.connect(regs.s_axil),
            db.ready.eq(1),
            sq.s_tail.valid.eq(db.valid & ~db.is_cq),
            sq.s_tail.sqid.eq(db.qid),
            sq.s_tail.tail.eq(db.value),
            cq.s_head.valid.eq(db.valid & db.is_cq),
            cq.s_head.cqid.eq(db.qid),
            cq.s_head.head.eq(db.value),
        ]

        # Command path.
        drop = Signal()     # controller reset in progress: no command output survives
        self.comb += [
            sq.m_sqe.connect(decode.s_sqe),
            decode.m_fast.connect(io.s_cmd),
            decode.m_err.connect(io.s_err),
            decode.m_fw.connect(m_fw_cmd),
            decode.ns_size.eq(self.fw_ns_size),
            decode.abort_arm.eq(self.fw_abort_arm),
            decode.abort_sqid.eq(self.fw_abort_sqid),
            decode.abort_cid.eq(self.fw_abort_cid),
            decode.drop.eq(drop),
            self.abort_hit.eq(decode.abort_hit),
            s_fw_cpl.connect(io.s_fw_cpl),
            self.s_fw_xfer.connect(io.s_fw_xfer),
            io.m_fw_xfer_cpl.connect(self.m_fw_xfer_cpl),
            io.m_walk.connect(walk.s_req),
            walk.m_seg.connect(dma.s_seg),
            dma.m_cpl.connect(io.s_dma_cpl),
            io.m_be_req.connect(self.m_be_req),
            self.s_be_cpl.connect(io.s_be_cpl),
            # Completions: posted, or dropped during a controller reset.
            cq.s_cpl.valid.eq(io.m_cpl.valid & ~drop),
            io.m_cpl.ready.eq(cq.s_cpl.ready | drop),
        ]
        for name, _ in cq_cpl_layout():
            self.comb += getattr(cq.s_cpl, name).eq(getattr(io.m_cpl, name))

        # Interrupts: per-CQE requests -> coalescing -> MSI (vectors masked by INTMS held), or
        # MSI-X while the host has enabled it (per-vector masks in its table; INTMS/INTMC are
        # not for MSI-X, NVMe 1.4 3.1.3 and 3.1.4).
        msi = phy.msi
        masked = Signal()
        msix_on = Signal()
        if with_msix:
            self.msix = msix = NvmeMsix(ctl, n_vectors=n_q)
            self.comb += [
                msix_on.eq(msix.enable),
                msix.enable.eq(phy.msix_enable),
                msix.function_mask.eq(phy.msix_function_mask),
                msix.clear.eq(irq_reset),
                msix.s_irq.valid.eq(irq.m_msi.valid & msix_on),
                msix.s_irq.vector.eq(irq.m_msi.vector),
            ]
        msi_ready = Signal()
        self.comb += [
            cq.m_irq.connect(irq.s_irq),
            self.s_fw_ivc.connect(irq.s_ivc),
            irq.agg_thr.eq(self.fw_agg_thr),
            irq.agg_time.eq(self.fw_agg_time),
            irq.reset.eq(irq_reset),
            masked.eq((irq.m_msi.vector < 32) & (regs.intm >> irq.m_msi.vector)[0] & ~msix_on),
            # Masked vectors stay pending in the coalescer without blocking the other vectors
            # (INTMS/INTMC mask per vector with multiple-message MSI, NVMe 1.4 3.1.3).
            irq.mask.eq(Mux(msix_on, 0, regs.intm[:min(32, n_q)])),
            msi.valid.eq(irq.m_msi.valid & ~masked & ~msix_on),
            msi.dat.eq(irq.m_msi.vector),
            msi_ready.eq(msi.ready & ~masked),
            irq.m_msi.ready.eq(Mux(msix_on, 1, msi_ready)),    # NvmeMsix is always ready
        ]

        # Asynchronous events, while enabled (a small queue; the firmware reports them through
        # Asynchronous Event Requests and the error log): invalid doorbell writes, and an SQ
        # whose entries could not be read (an error completion: that queue stops fetching
        # until it is created again, the others go on, so a transient internal error).
        self.aer_fifo = aer = stream.SyncFIFO(fw_aer_layout(), 4)
        ev_reg = Signal()
        ev_val = Signal()
        ev_fetch = Signal()
        self.comb += [
            ev_reg.eq(regs.db_invalid | sq.bad_sqid | cq.bad_cqid),
            ev_val.eq(sq.bad_tail | cq.bad_head),
            ev_fetch.eq(sq.fetch_err),
            aer.sink.valid.eq((ev_reg | ev_val | ev_fetch) & self.ctrl_enabled),
            If(ev_reg,
                aer.sink.info.eq(AerErrorInfo.INVALID_DOORBELL_REGISTER),
                aer.sink.sqid.eq(0xFFFF),
            ).Elif(ev_val,
                aer.sink.info.eq(AerErrorInfo.INVALID_DOORBELL_VALUE),
                aer.sink.sqid.eq(0xFFFF),
            ).Else(
                aer.sink.info.eq(AerErrorInfo.TRANSIENT_INTERNAL_ERROR),
                aer.sink.sqid.eq(sq.fetch_err_sqid),
            ),
            aer.source.connect(self.m_fw_aer),
        ]


        # Queue life cycle ------------------------------------------------------------------
        idx      = Signal(max=n_q + 1)
        sq_abort = Signal(n_q)
        qw       = max(1, (n_q - 1).bit_length())
        del_q    = Signal(qw)
        fetch_idle = Signal()
        self.comb += [
            decode.sq_abort.eq(sq_abort),
            fetch_idle.eq(~sq.busy & ~sq.m_sqe.valid & ~decode.pipe.source.valid),
            # For the firmware: SQ q still has entries not through the decoder (any SQE on its
            # way from a fetch to the decoder counts for every queue).
            self.sq_pending.eq(sq.pending | Replicate(~fetch_idle, n_q)),
            self.io_busy.eq(io.busy),
        ]
        reset_done = Signal()           # a controller reset completes (RST_CQ -> DISABLED)
        self.fsm = fsm = FSM(reset_state="DISABLED")
        fsm.act("DISABLED",
            fw_sq.ready.eq(1),          # no queues to configure: dropped
            fw_cq.ready.eq(1),
            If(regs.cc_en & (regs.cc_shn == 0) & ~(self.fw_reset_gate & self.fw_reset_pending),
                NextState("EN_SQ")
            )
        )
        fsm.act("EN_SQ",
            sq.s_cfg.valid.eq(1),
            sq.s_cfg.sqid.eq(0),
            sq.s_cfg.base.eq(regs.asq),
            sq.s_cfg.qsize.eq(regs.aqa_asqs),
            sq.s_cfg.enable.eq(1),
            io.s_map.valid.eq(1),       # SQ 0 -> CQ 0
            io.s_map.sqid.eq(0),
            io.s_map.cqid.eq(0),
            If(sq.s_cfg.ready, NextState("EN_CQ"))
        )
        fsm.act("EN_CQ",
            cq.s_cfg.valid.eq(1),
            cq.s_cfg.cqid.eq(0),
            cq.s_cfg.base.eq(regs.acq),
            cq.s_cfg.qsize.eq(regs.aqa_acqs),
            cq.s_cfg.iv.eq(0),
            cq.s_cfg.ien.eq(1),
            cq.s_cfg.enable.eq(1),
            If(cq.s_cfg.ready, NextState("ENABLED"))
        )
        fsm.act("ENABLED",
            self.ctrl_enabled.eq(1),
            regs.ctrl_ready.eq(1),
            If(~regs.cc_en,
                NextValue(idx, 0),
                NextState("RST_SQ")
            ).Else(
                # I/O queue configuration by the firmware.
                If(fw_sq.valid & fw_sq.enable,
                    sq.s_cfg.valid.eq(1),
                    fw_sq.ready.eq(sq.s_cfg.ready),
                    io.s_map.valid.eq(sq.s_cfg.ready),
                ).Elif(fw_sq.valid,
                    NextValue(del_q, fw_sq.sqid[:qw]),
                    NextValue(sq_abort, sq_abort | (1 << fw_sq.sqid[:qw])),
                    NextState("DEL_WAIT")
                ),
                fw_cq.connect(cq.s_cfg),
            )
        )
        # Default field routing for the firmware's SQ configuration (EN_SQ overrides).
        fsm.act("ENABLED",
            sq.s_cfg.sqid.eq(fw_sq.sqid),
            sq.s_cfg.base.eq(fw_sq.base),
            sq.s_cfg.qsize.eq(fw_sq.qsize),
            sq.s_cfg.enable.eq(fw_sq.enable),
            sq.s_cfg.nc.eq(fw_sq.nc),
            io.s_map.sqid.eq(fw_sq.sqid),
            io.s_map.cqid.eq(fw_sq.cqid),
        )
        # SQ deletion: its remaining entries are fetched and aborted, the commands in flight
        # finish (their completions come before the firmware's for the Delete command).
        fsm.act("DEL_WAIT",
            self.ctrl_enabled.eq(1),
            regs.ctrl_ready.eq(1),
            If(~(sq.pending >> del_q)[0] & fetch_idle & ~io.busy,
                NextState("DEL_APPLY")
            )
        )
        fsm.act("DEL_APPLY",
            self.ctrl_enabled.eq(1),
            regs.ctrl_ready.eq(1),
            sq.s_cfg.valid.eq(1),
            sq.s_cfg.sqid.eq(del_q),
            sq.s_cfg.enable.eq(0),
            If(sq.s_cfg.ready,
                fw_sq.ready.eq(1),
                NextValue(sq_abort, sq_abort & ~(1 << del_q)),
                NextState("ENABLED")
            )
        )
        # Controller reset: stop fetching, drain, forget. CSTS.RDY stays 1 (ctrl_ready: the
        # reset not done yet) until the drain is over: a host reclaims the queues' and the
        # commands' memory once RDY reads 0, so no DMA may follow it (a read in flight still
        # moves its data while it drains; its completion is dropped).
        fsm.act("RST_SQ",
            regs.ctrl_ready.eq(1),
            drop.eq(1),
            fw_sq.ready.eq(1),
            fw_cq.ready.eq(1),
            sq.s_cfg.valid.eq(1),
            sq.s_cfg.sqid.eq(idx),
            sq.s_cfg.enable.eq(0),
            If(sq.s_cfg.ready,
                NextValue(idx, idx + 1),
                If(idx == n_q - 1,
                    NextState("RST_DRAIN")
                )
            )
        )
        fsm.act("RST_DRAIN",
            regs.ctrl_ready.eq(1),
            drop.eq(1),
            fw_sq.ready.eq(1),
            fw_cq.ready.eq(1),
            If(fetch_idle & ~io.busy,
                NextValue(idx, 0),
                NextState("RST_CQ")
            )
        )
        fsm.act("RST_CQ",
            regs.ctrl_ready.eq(1),
            drop.eq(1),
            fw_sq.ready.eq(1),
            fw_cq.ready.eq(1),
            cq.s_cfg.valid.eq(1),
            cq.s_cfg.cqid.eq(idx),
            cq.s_cfg.enable.eq(0),
            If(cq.s_cfg.ready,
                NextValue(idx, idx + 1),
                If(idx == n_q - 1,
                    irq_reset.eq(1),
                    NextValue(sq_abort, 0),
                    reset_done.eq(1),
                    NextState("DISABLED")
                )
            )
        )
        self.sync += If(reset_done, self.fw_reset_pending.eq(1)
                     ).Elif(self.fw_reset_ack, self.fw_reset_pending.eq(0))
        self.comb += [
            regs.shutdown_done.eq((regs.cc_shn != 0) & ~io.busy & fetch_idle &
                                  self.fw_shn_done),
            self.fw_shn.eq(regs.cc_shn),
            regs.fatal.eq(self.fw_fatal),
        ]

    def get_ios(self):
        """Processor interface, back end and buffer ports (the PHY's belong to the top)."""
        ios = []
        for ep, prefix in [(self.m_fw_cmd, "m_fw_cmd"), (self.s_fw_cpl, "s_fw_cpl"),
                           (self.s_fw_sq_cfg, "s_fw_sq_cfg"), (self.s_fw_cq_cfg, "s_fw_cq_cfg"),
                           (self.s_fw_sq_page, "s_fw_sq_page"),
                           (self.s_fw_cq_page, "s_fw_cq_page"),
                           (self.s_fw_xfer, "s_fw_xfer"), (self.m_fw_xfer_cpl, "m_fw_xfer_cpl"),
                           (self.s_fw_ivc, "s_fw_ivc"), (self.m_fw_aer, "m_fw_aer"),
                           (self.m_be_req, "m_be_req"), (self.s_be_cpl, "s_be_cpl")]:
            ios += stream_port(ep, prefix)
        for sig, name in [(self.fw_agg_thr, "fw_agg_thr"), (self.fw_agg_time, "fw_agg_time"),
                          (self.fw_ns_size, "fw_ns_size"), (self.fw_abort_arm, "fw_abort_arm"),
                          (self.fw_abort_sqid, "fw_abort_sqid"),
                          (self.fw_abort_cid, "fw_abort_cid"), (self.abort_hit, "abort_hit"),
                          (self.sq_pending, "sq_pending"), (self.io_busy, "io_busy"),
                          (self.irq.pending, "irq_pending"),
                          (self.ctrl_enabled, "ctrl_enabled"), (self.fw_fatal, "fw_fatal")]:
            sig.name_override = name
            ios.append(sig)
        return ios

    def buffer_ios(self):
        """The buffer memory ports, for a top that leaves the RAM outside."""
        return (stream_port(self.m_bw, "m_bw") + stream_port(self.m_br, "m_br")
                + stream_port(self.s_brd, "s_brd"))
