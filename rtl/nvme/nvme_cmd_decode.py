# SPDX-License-Identifier: BSD-2-Clause
"""NvmeCmdDecode: sorts fetched SQEs into the hardware fast path, firmware, and immediate errors.

An SQE of an I/O submission queue (sqid != 0) with opcode Flush (00h), Write (01h) or Read
(02h) is a fast-path command: its fields are checked here and, if they are good, it leaves on
`m_fast` for NvmeIoEngine. A fast-path command that fails a check leaves on `m_err` with the
status the NVMe 1.4 specification names (all SCT 0, generic):

- Invalid Field in Command (02h, DNR): fused operation (FUSE != 0), SGL data pointer
  (PSDT != 0: SGLs are not supported), or a transfer of more than `max_transfer` bytes
  (Identify Controller MDTS).
- Invalid Namespace or Format (0Bh, DNR): NSID other than 1 (Flush also takes FFFFFFFFh).
- LBA Out of Range (80h, DNR): SLBA + NLB + 1 beyond the namespace size `ns_size`.

Every other SQE (the admin set, Dataset Management, Write Zeroes, unknown opcodes) goes to the
firmware on `m_fw` unchanged. Before any of that, two abort mechanisms apply to every queue:

- `sq_abort` bit q set (SQ q is being deleted): the SQE completes on `m_err` with Command
  Aborted due to SQ Deletion (08h).
- The abort slot (`abort_arm`, `abort_sqid`, `abort_cid`: the firmware serving an Abort
  command): the matching SQE completes with Command Abort Requested (07h) and `abort_hit`
  rises (held until the slot is disarmed).

`drop` (controller reset in progress) consumes SQEs without any output.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Cat, If, Mux, Signal

from rtl.nvme.nvme_common import check_param
from rtl.nvme.nvme_prp_walk import LEN_BITS, STATUS_BITS
from rtl.nvme.nvme_sq_fetch import QID_BITS, QSIZE_BITS, sqe_layout
from spec.nvme import SC, NvmOpcode

__all__ = ["NvmeCmdDecode", "fast_cmd_layout", "err_cpl_layout"]

# Layouts -----------------------------------------------------------------------------------------


def fast_cmd_layout():
    """One checked NVM Flush / Write / Read command."""
    return [
        ("sqid",    QID_BITS),
        ("sq_head", QSIZE_BITS),
        ("cid",     16),
        ("opcode",  8),
        ("nsid",    32),
        ("slba",    64),
        ("nlb",     16),          # Number of logical blocks, 0's based (CDW12 15:0).
        ("flags",   16),          # CDW12 31:16: LR, FUA, PRINFO, DTYPE.
        ("prp1",    64),
        ("prp2",    64),
        ("length",  LEN_BITS),    # Bytes: (nlb + 1) << lbads; 0 for Flush.
    ]


def err_cpl_layout():
    """A command completed by the decoder itself (no CQ id yet: NvmeIoEngine maps the SQ)."""
    return [
        ("sqid",    QID_BITS),
        ("sq_head", QSIZE_BITS),
        ("cid",     16),
        ("status",  STATUS_BITS),
    ]


def sqe_dw(sqe, n):
    """Dword n of a 512-bit SQE (byte k at bits 8k+7:8k)."""
    return sqe[32 * n:32 * n + 32]


# Core --------------------------------------------------------------------------------------------

class NvmeCmdDecode(LiteXModule):
    """NVMe command decoder (Verilog module `nvme_cmd_decode`).

    Parameters:
      n_sqs        (1..65, default 65): submission queues (width of `sq_abort`).
      lbads        (9..12, default 9): LBA data size 2^lbads bytes (namespace format 0).
      max_transfer (power of two 8192..16 MiB, default 131072): most bytes per command (MDTS).

    Ports:
      s_sqe    fetched SQEs (`sqe_layout`), from NvmeSqFetch.
      m_fast   checked fast-path commands (`fast_cmd_layout`).
      m_fw     SQEs for the firmware (`sqe_layout`).
      m_err    immediate completions (`err_cpl_layout`).
      ns_size  (in, 64) namespace 1 size in logical blocks.
      sq_abort (in, n_sqs) per-SQ: abort its SQEs (SQ deletion).
      abort_arm, abort_sqid, abort_cid (in): the abort slot; abort_hit (out).
      drop     (in) consume SQEs with no output.
    """
    def __init__(self, n_sqs=65, lbads=9, max_transfer=131072):
        # Parameters checks.
        def _is_int(v):
            return isinstance(v, int) and not isinstance(v, bool)
        check_param("NvmeCmdDecode", "n_sqs", n_sqs, _is_int(n_sqs) and 1 <= n_sqs <= 65,
                    "out of range 1..65")
        check_param("NvmeCmdDecode", "lbads", lbads, _is_int(lbads) and 9 <= lbads <= 12,
                    "out of range 9..12")
        check_param("NvmeCmdDecode", "max_transfer", max_transfer,
                    _is_int(max_transfer) and 8192 <= max_transfer <= 2**24
                    and max_transfer & (max_transfer - 1) == 0,
                    "is not a power of two in 8192..16777216")

        # Ports.
        self.s_sqe  = s_sqe  = stream.Endpoint(sqe_layout())
        self.m_fast = m_fast = stream.Endpoint(fast_cmd_layout())
        self.m_fw   = m_fw   = stream.Endpoint(sqe_layout())
        self.m_err  = m_err  = stream.Endpoint(err_cpl_layout())
        self.ns_size    = Signal(64)
        self.sq_abort   = Signal(n_sqs)
        self.abort_arm  = Signal()
        self.abort_sqid = Signal(QID_BITS)
        self.abort_cid  = Signal(16)
        self.abort_hit  = Signal()
        self.drop       = Signal()

        # # #

        # Input register: the checks below start from flops (a 64-bit add and compare).
        self.pipe = pipe = stream.PipeValid(sqe_layout())
        self.comb += s_sqe.connect(pipe.sink)
        src = pipe.source
        sqe = src.sqe

        dw0    = sqe_dw(sqe, 0)
        opcode = dw0[0:8]
        fuse   = dw0[8:10]
        psdt   = dw0[14:16]
        cid    = dw0[16:32]
        nsid   = sqe_dw(sqe, 1)
        slba   = Cat(sqe_dw(sqe, 10), sqe_dw(sqe, 11))
        nlb    = sqe_dw(sqe, 12)[0:16]
        flags  = sqe_dw(sqe, 12)[16:32]

        # Classification.
        is_flush = opcode == NvmOpcode.FLUSH
        is_rw    = (opcode == NvmOpcode.WRITE) | (opcode == NvmOpcode.READ)
        fast     = Signal()
        self.comb += fast.eq((src.sqid != 0) & (is_flush | is_rw))

        # Checks, in the order the status is chosen.
        n_blocks = Signal(17)
        length   = Signal(17 + lbads)
        lba_end  = Signal(65)
        self.comb += [
            n_blocks.eq(nlb + 1),
            length.eq(n_blocks << lbads),
            lba_end.eq(slba + n_blocks),
        ]
        bad_field = Signal()
        bad_ns    = Signal()
        bad_lba   = Signal()
        self.comb += [
            bad_field.eq((fuse != 0) | (psdt != 0) | (is_rw & (length > max_transfer))),
            bad_ns.eq(Mux(is_flush, (nsid != 1) & (nsid != 0xFFFF_FFFF), nsid != 1)),
            bad_lba.eq(is_rw & (lba_end > self.ns_size)),
        ]

        sq_aborted = Signal()
        slot_hit   = Signal()
        self.comb += [
            sq_aborted.eq((self.sq_abort >> src.sqid)[0] & (src.sqid < n_sqs)),
            slot_hit.eq(self.abort_arm & (src.sqid == self.abort_sqid)
                        & (cid == self.abort_cid)),
        ]
        status = Signal(STATUS_BITS)
        is_err = Signal()
        self.comb += [
            If(sq_aborted,
                status.eq(SC.ABORT_SQ_DELETION)
            ).Elif(slot_hit,
                status.eq(SC.ABORT_REQUESTED)
            ).Elif(fast & bad_field,
                status.eq(SC.INVALID_FIELD)
            ).Elif(fast & bad_ns,
                status.eq(SC.INVALID_NAMESPACE)
            ).Elif(fast & bad_lba,
                status.eq(SC.LBA_OUT_OF_RANGE)
            ),
            is_err.eq(status != 0),
        ]

        # Routing: exactly one output takes the SQE.
        self.comb += [
            m_fast.sqid.eq(src.sqid),
            m_fast.sq_head.eq(src.sq_head),
            m_fast.cid.eq(cid),
            m_fast.opcode.eq(opcode),
            m_fast.nsid.eq(nsid),
            m_fast.slba.eq(slba),
            m_fast.nlb.eq(nlb),
            m_fast.flags.eq(flags),
            m_fast.prp1.eq(Cat(sqe_dw(sqe, 6), sqe_dw(sqe, 7))),
            m_fast.prp2.eq(Cat(sqe_dw(sqe, 8), sqe_dw(sqe, 9))),
            m_fast.length.eq(Mux(is_flush, 0, length)),
            m_fw.sqid.eq(src.sqid),
            m_fw.sq_head.eq(src.sq_head),
            m_fw.sqe.eq(sqe),
            m_err.sqid.eq(src.sqid),
            m_err.sq_head.eq(src.sq_head),
            m_err.cid.eq(cid),
            m_err.status.eq(status),
            If(self.drop,
                src.ready.eq(1)
            ).Elif(is_err,
                m_err.valid.eq(src.valid),
                src.ready.eq(m_err.ready)
            ).Elif(fast,
                m_fast.valid.eq(src.valid),
                src.ready.eq(m_fast.ready)
            ).Else(
                m_fw.valid.eq(src.valid),
                src.ready.eq(m_fw.ready)
            ),
        ]
        self.sync += [
            If(~self.abort_arm,
                self.abort_hit.eq(0)
            ).Elif(src.valid & src.ready & ~self.drop & slot_hit & ~sq_aborted,
                self.abort_hit.eq(1)
            )
        ]
