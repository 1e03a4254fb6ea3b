# SPDX-License-Identifier: BSD-2-Clause
"""NvmeRegs: the NVMe 1.4 controller register file at BAR0, with the doorbells.

The host reaches it through a 64-bit AXI4-Lite slave (`s_axil_*`); 64-bit accesses serve the
Linux driver's readq/writeq of CAP/ASQ/ACQ, 32-bit accesses use byte strobes. The registers
themselves are generated from the table in `spec.nvme_regmap`; this file adds the bus
protocol, the CSTS handshakes with the queue engines and the doorbell event stream.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from litex.soc.interconnect.axi import AXILiteInterface
from migen import FSM, Cat, Constant, If, Mux, NextState, NextValue, Signal

from spec.nvme_regmap import (
    DOORBELL_BASE,
    DOORBELL_VALUE_BITS,
    REGISTERS,
    doorbell_span,
    field_reset,
    with_defaults,
)

__all__ = ["NvmeRegs", "RegDecode", "doorbell_layout"]

# Layouts -----------------------------------------------------------------------------------------

QID_BITS = 16


def doorbell_layout():
    """One doorbell write: queue id, SQ tail (is_cq=0) or CQ head (is_cq=1), written value."""
    return [
        ("qid", QID_BITS),
        ("is_cq", 1),
        ("value", DOORBELL_VALUE_BITS),
    ]


# Helpers -----------------------------------------------------------------------------------------

def _check(name, value, lo, hi):
    if not isinstance(value, int) or isinstance(value, bool) or not lo <= value <= hi:
        raise ValueError(f"NvmeRegs: {name}={value!r} out of range {lo}..{hi}")


# Register decode (generated from spec.nvme_regmap's table) --------------------------------------

def RegDecode(params=None, data_width=64):
    """Build the Migen register decode for the table (a `migen.Module`).

    Interface (all in the sys domain):
      we, waddr (byte offset, word aligned), wdata, wstrb : one write per cycle with `we`;
      raddr, rdata : combinational read of the word at `raddr` (unimplemented words read 0);
      storage[name] : the stored bits of each writable field (not shifted; ASQB = bits 63:12);
      hw[name]      : inputs for RO (hw) fields, "<REG>_<FIELD>", driven by the core.
    """
    import migen as m
    Signal, If, Case, Cat = m.Signal, m.If, m.Case, m.Cat
    p = with_defaults(params)
    nbytes = data_width // 8
    word_shift = (nbytes - 1).bit_length()

    class _RegDecode(m.Module):
        def __init__(self):
            self.we = Signal()
            self.waddr = Signal(16)
            self.wdata = Signal(data_width)
            self.wstrb = Signal(nbytes)
            self.raddr = Signal(16)
            self.rdata = Signal(data_width)
            self.storage = {}
            self.hw = {}

            words = {}  # word index -> list of (bit position in word, value expression)
            for reg in REGISTERS:
                assert reg.width <= data_width
                word, base = reg.offset >> word_shift, (reg.offset % nbytes) * 8
                hit = None
                if any(f.writable for f in reg.fields):
                    hit = Signal(name=f"{reg.name.lower()}_we")
                    self.comb += hit.eq(self.we & (self.waddr[word_shift:] == word))
                for f in reg.fields:
                    if f.hw:
                        value = Signal(f.width, name=f"{reg.name}_{f.name}".lower())
                        self.hw[f"{reg.name}_{f.name}"] = value
                    elif f.writable:
                        key = f.storage or f"{reg.name}_{f.name}"
                        if key not in self.storage:
                            self.storage[key] = Signal(f.width, reset=field_reset(f, p),
                                                       name=key.lower())
                        value = self.storage[key]
                        self._write(hit, f, value, base)
                    else:
                        value = m.Constant(field_reset(f, p), f.width)
                    words.setdefault(word, []).append((base + f.lsb, value))

            cases = {"default": self.rdata.eq(0)}
            for word, parts in sorted(words.items()):
                expr, pos = [], 0
                for lsb, value in sorted(parts, key=lambda x: x[0]):
                    if lsb > pos:
                        expr.append(m.Constant(0, lsb - pos))
                    expr.append(value)
                    pos = lsb + len(value)
                cases[word] = self.rdata.eq(Cat(*expr))
            self.comb += Case(self.raddr[word_shift:], cases)

        def _write(self, hit, f, store, base):
            # Byte strobes apply bit by bit: split the field at byte boundaries of the word.
            for byte in range((base + f.lsb) // 8, (base + f.msb) // 8 + 1):
                lo = max(byte * 8, base + f.lsb)
                hi = min(byte * 8 + 8, base + f.msb + 1)
                s = store[lo - base - f.lsb:hi - base - f.lsb]
                d = self.wdata[lo:hi]
                new = {"RW": d, "RW1S": s | d, "RW1C": s & ~d}[f.access]
                self.sync += If(hit & self.wstrb[byte], s.eq(new))

    return _RegDecode()


# Core --------------------------------------------------------------------------------------------

class NvmeRegs(LiteXModule):
    """NVMe controller registers and doorbells (Verilog module `nvme_regs`).

    Parameters:
      n_io_queues   (1..65535, default 64): I/O queue pairs; doorbells exist for queues
                    0 (admin) .. n_io_queues.
      mqes          (1..65535, default 4095): CAP.MQES, maximum queue entries minus 1.
      dstrd         (0..15, default 0): CAP.DSTRD, doorbell stride 4 << dstrd bytes.
      timeout_500ms (1..255, default 20): CAP.TO, worst-case CSTS.RDY transition, 500 ms units.
      mpsmin        (0..15, default 0): CAP.MPSMIN, smallest page 2^(12+mpsmin) bytes.
      mpsmax        (mpsmin..15, default 0): CAP.MPSMAX.
      cqr           (0..1, default 1): CAP.CQR, 1 when the queue engines need physically
                    contiguous queues (0: they also take queues in PRP-list memory).
      address_width (13..64, default 32): AXI-Lite address bits (BAR0 offset); must cover
                    the doorbells, 0x1000 + 2 * (n_io_queues + 1) * (4 << dstrd) bytes.
    """
    def __init__(self, n_io_queues=64, mqes=4095, dstrd=0, timeout_500ms=20, mpsmin=0,
                 mpsmax=0, address_width=32, cqr=1):
        # Parameters checks.
        _check("n_io_queues", n_io_queues, 1, 65535)
        _check("mqes", mqes, 1, 65535)
        _check("dstrd", dstrd, 0, 15)
        _check("timeout_500ms", timeout_500ms, 1, 255)
        _check("mpsmin", mpsmin, 0, 15)
        _check("mpsmax", mpsmax, mpsmin, 15)
        _check("address_width", address_width, 13, 64)
        _check("cqr", cqr, 0, 1)
        if doorbell_span(n_io_queues, dstrd) > 2**address_width:
            raise ValueError(f"NvmeRegs: address_width={address_width} does not cover the "
                             f"doorbells of {n_io_queues} queues at dstrd={dstrd} "
                             f"(0x{doorbell_span(n_io_queues, dstrd):x} bytes)")
        self.params = dict(n_io_queues=n_io_queues, mqes=mqes, dstrd=dstrd,
                           timeout_500ms=timeout_500ms, mpsmin=mpsmin, mpsmax=mpsmax, cqr=cqr)

        # Host side: AXI4-Lite slave, 64-bit data.
        self.s_axil = s_axil = AXILiteInterface(data_width=64, address_width=address_width)
        for ch in ["aw", "w", "b", "ar", "r"]:
            ep = getattr(s_axil, ch)
            for name, _ in [("valid", 1), ("ready", 1)] + ep.description.payload_layout:
                getattr(ep, name).name_override = f"s_axil_{ch}{name}"

        # Doorbell events towards the queue engines (backpressured: no event is dropped).
        self.m_db = m_db = stream.Endpoint(doorbell_layout())
        for name in ["valid", "ready"] + [n for n, _ in doorbell_layout()]:
            getattr(m_db, name).name_override = f"m_db_{name}"
        self.db_invalid = Signal()        # Pulse: doorbell of a queue above n_io_queues.

        # Controller configuration, towards the engines.
        self.cc_en = Signal()             # CC.EN.
        self.cc_css = Signal(3)           # CC.CSS.
        self.cc_mps = Signal(4)           # CC.MPS: host page 2^(12+mps) bytes.
        self.cc_ams = Signal(3)           # CC.AMS.
        self.cc_shn = Signal(2)           # CC.SHN: 01b normal, 10b abrupt shutdown.
        self.cc_iosqes = Signal(4)        # CC.IOSQES.
        self.cc_iocqes = Signal(4)        # CC.IOCQES.
        self.aqa_asqs = Signal(12)        # AQA.ASQS, 0's based.
        self.aqa_acqs = Signal(12)        # AQA.ACQS, 0's based.
        self.asq = Signal(64)             # ASQ byte address, bits 11:0 zero.
        self.acq = Signal(64)             # ACQ byte address, bits 11:0 zero.
        self.intm = Signal(32)            # Interrupt vector mask (INTMS/INTMC).

        # Status, from the engines.
        self.ctrl_ready = Signal()        # Engines enabled (with cc_en=1) / reset (cc_en=0).
        self.shutdown_done = Signal()     # Shutdown processing complete (while cc_shn != 0).
        self.fatal = Signal()             # Controller fatal status, held by the engines.

        # # #

        # Register decode, generated from the table.
        self.decode = decode = RegDecode(self.params, data_width=64)
        st = decode.storage
        self.comb += [
            self.cc_en.eq(st["CC_EN"]),
            self.cc_css.eq(st["CC_CSS"]),
            self.cc_mps.eq(st["CC_MPS"]),
            self.cc_ams.eq(st["CC_AMS"]),
            self.cc_shn.eq(st["CC_SHN"]),
            self.cc_iosqes.eq(st["CC_IOSQES"]),
            self.cc_iocqes.eq(st["CC_IOCQES"]),
            self.aqa_asqs.eq(st["AQA_ASQS"]),
            self.aqa_acqs.eq(st["AQA_ACQS"]),
            self.asq.eq(Cat(Constant(0, 12), st["ASQ_ASQB"])),
            self.acq.eq(Cat(Constant(0, 12), st["ACQ_ACQB"])),
            self.intm.eq(st["INTM"]),
        ]

        # CSTS. RDY changes only once the engines acknowledge the new CC.EN, so the host's
        # wait for RDY covers the engines' own enable / reset.
        rdy = Signal(name="csts_rdy")
        cfs = Signal(name="csts_cfs")
        shst = Signal(2, name="csts_shst")
        self.sync += [
            If(self.cc_en & self.ctrl_ready,
                rdy.eq(1)
            ).Elif(~self.cc_en & ~self.ctrl_ready,
                rdy.eq(0)
            ),
            cfs.eq(self.fatal),
            # SHST: 01b on a shutdown notification, 10b when the engines are done; back to
            # 00b when the host clears CC.SHN (before re-enabling).
            If(self.cc_shn == 0,
                shst.eq(0b00)
            ).Elif(shst == 0b00,
                shst.eq(0b01)
            ).Elif((shst == 0b01) & self.shutdown_done,
                shst.eq(0b10)
            ),
        ]
        self.comb += [
            decode.hw["CSTS_RDY"].eq(rdy),
            decode.hw["CSTS_CFS"].eq(cfs),
            decode.hw["CSTS_SHST"].eq(shst),
        ]

        # Read path: one outstanding read; data registered from the combinational decode.
        is_reg_raddr = s_axil.ar.addr < DOORBELL_BASE
        self.comb += [
            decode.raddr.eq(s_axil.ar.addr),
            s_axil.ar.ready.eq(~s_axil.r.valid),
            s_axil.r.resp.eq(0b00),
        ]
        self.sync += [
            If(s_axil.r.valid & s_axil.r.ready,
                s_axil.r.valid.eq(0)
            ),
            If(s_axil.ar.valid & s_axil.ar.ready,
                s_axil.r.valid.eq(1),
                s_axil.r.data.eq(Mux(is_reg_raddr, decode.rdata, 0)),  # Doorbells read 0.
            ),
        ]

        # Write path: AW and W taken together; registers are written in that cycle. A doorbell
        # word may hold two doorbells (dstrd=0, 64-bit write): each 32-bit lane becomes its own
        # event, and B waits until every event is accepted.
        waddr = Signal(address_width)
        wdata = Signal(64)
        wstrb = Signal(8)
        take = Signal()
        self.comb += [
            take.eq(s_axil.aw.valid & s_axil.w.valid),
            decode.waddr.eq(s_axil.aw.addr),
            decode.wdata.eq(s_axil.w.data),
            decode.wstrb.eq(s_axil.w.strb),
            s_axil.b.resp.eq(0b00),
        ]

        # Doorbell decode of each 32-bit lane of the latched word.
        lanes = []
        for lane in range(2):
            offset = Signal(address_width, name=f"db_offset{lane}")
            index = offset[2 + dstrd:]              # 2y for SQ y, 2y+1 for CQ y.
            aligned = (offset[2:2 + dstrd] == 0) if dstrd else 1
            written = wstrb[4*lane] & wstrb[4*lane + 1]   # Both bytes of the 16-bit value.
            l = dict(
                valid   = Signal(name=f"db_valid{lane}"),
                invalid = Signal(name=f"db_invalid{lane}"),
                qid     = index[1:],
                is_cq   = index[0],
                value   = wdata[32*lane:32*lane + DOORBELL_VALUE_BITS],
            )
            exists = index[1:] <= n_io_queues
            self.comb += [
                offset.eq(Cat(Constant(lane << 2, 3), waddr[3:]) - DOORBELL_BASE),
                l["valid"].eq(written & aligned & exists),
                l["invalid"].eq(written & aligned & ~exists),
            ]
            lanes.append(l)

        self.fsm = fsm = FSM(reset_state="IDLE")
        fsm.act("IDLE",
            s_axil.aw.ready.eq(take),
            s_axil.w.ready.eq(take),
            If(take,
                If(s_axil.aw.addr < DOORBELL_BASE,
                    decode.we.eq(1),
                    NextState("RESP")
                ).Else(
                    NextValue(waddr, s_axil.aw.addr),
                    NextValue(wdata, s_axil.w.data),
                    NextValue(wstrb, s_axil.w.strb),
                    NextState("DB0")
                )
            )
        )
        for lane, nxt in [(0, "DB1"), (1, "RESP")]:
            l = lanes[lane]
            fsm.act(f"DB{lane}",
                m_db.valid.eq(l["valid"]),
                m_db.qid.eq(l["qid"]),
                m_db.is_cq.eq(l["is_cq"]),
                m_db.value.eq(l["value"]),
                self.db_invalid.eq(l["invalid"]),
                If(~l["valid"] | m_db.ready,
                    NextState(nxt)
                )
            )
        fsm.act("RESP",
            s_axil.b.valid.eq(1),
            If(s_axil.b.ready,
                NextState("IDLE")
            )
        )

    def get_ios(self):
        ios = []
        for ch in ["aw", "w", "b", "ar", "r"]:
            ep = getattr(self.s_axil, ch)
            ios += [ep.valid, ep.ready] + [getattr(ep, n) for n, _ in
                                          ep.description.payload_layout]
        ios += [self.m_db.valid, self.m_db.ready] + [getattr(self.m_db, n)
                                                     for n, _ in doorbell_layout()]
        ios += [self.db_invalid,
                self.cc_en, self.cc_css, self.cc_mps, self.cc_ams, self.cc_shn,
                self.cc_iosqes, self.cc_iocqes, self.aqa_asqs, self.aqa_acqs,
                self.asq, self.acq, self.intm,
                self.ctrl_ready, self.shutdown_done, self.fatal]
        return ios
