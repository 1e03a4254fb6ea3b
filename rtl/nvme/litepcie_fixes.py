# SPDX-License-Identifier: BSD-2-Clause
"""LitePCIeFixes: corrections to LitePCIe 2024.12's TLP packetizer and depacketizer, applied once
per endpoint.

Three defects put malformed TLPs on the wire; the first two were found by the cocotbext-pcie
host's checks (tests/system), the third when the data path grew past 64 bits. A fourth cuts
received TLPs short:

- Single-beat completions: the packetizer marks every completion with first & last as 1 DW
  (be = 0x0F), so a 2 DW read completion (the Linux driver's readq of CAP) loses its second
  dword and an error completion (Length 0) carries a stray one. Fixed by setting be from the
  completion's Length (0..data_width / 32 DW). Multi-beat completions are untouched.
- Memory write byte enables: the packetizer marks every beat of an MWr longer than 1 DW as
  full, and its header inserters end the TLP from the byte enables, so an MWr whose last beat
  is not full carries stray dwords (at 256 bits a 4 DW CQE write gets 3 more). Fixed by
  setting the last beat's be from Length (dwords (Length - 1) % (data_width / 32) + 1).
- 3DW/4DW header selection: LitePCIeTLPHeaderInserter3DWs4DWs picks its inserter from the fmt
  of the TLP *at its sink*. A 3DW TLP ending in a trailing beat (an MWr32 of 4 DW on 64 bits)
  lets the next TLP reach the sink before that beat leaves; if the next one is 4DW (MWr64),
  the mux switches mid-TLP and the two are merged under backpressure. Fixed by holding the
  selecting fmt of the TLP in flight until its last beat.

- Completion/request depacketizer, trailing beat: the header extracters (every width) drop the
  3 header dwords by taking lanes 3.. of a beat and lanes 0..2 of the next, and end the TLP
  with the beat that takes the sink's last beat. When that last beat carries more than 3
  dwords (3 % lanes + 1 or more at 64 bits), the dwords past its lane 2 are lost: a
  completion of D dwords whose 3 + D do not end in lanes 0..2 of a beat comes out short (at
  512 bits a PRP list completion of 9..14 entries lost entries 8..: the drive's
  test_random_stream corruption). Fixed by holding the TLP open on that beat and ending it
  with one more beat from the extracter's register (the path it already takes for a TLP
  whose header beat is its last); lanes taken from the sink on such a beat get be = 0.

- Poisoned completions: the depacketizer sets a completion's `err` from its status only, so a
  Completion with Data whose EP bit (DW0 bit 14) is set passes as good data. Fixed by setting
  `err` when EP is set too; the data beats still flow (Length > 0, unlike a UR), each with
  err = 1, and every reader drops them (see rtl/nvme/README.md, "Host link errors").

One addition, not a fix: LitePCIe has no completion timeout, and its TLP controller hands the
completions of the crossbar's read ports in request order, so one read the host never answers
stops every later read of every port. The controller gets one (PCIe 4.0 section 2.8): when the
oldest outstanding read has waited `cpl_timeout_cycles` with nothing of its data buffered, an
error completion (err = 1, end = 1, no data) is handed to its port in place of the missing
data, as a UR would be, and the read is retired. Its tag is quarantined, not reused: a late
completion for it (an Unexpected Completion) is dropped whole at the controller's input and
frees the tag; one that never comes frees it `cpl_timeout_cycles` to twice that later. Any
completion for a tag with no read in flight is dropped too, never buffered for a later read
of that tag (LitePCIe would hand it to the next one). The wait is counted from the read
reaching the head of the controller's queue, so a read times out between cpl_timeout_cycles
and max_pending_requests times that after it was issued. `reads_pending` (a read awaits its
completion) tells a simulation's fast-forward that the timeout is counting.

All override assignments inside the endpoint, so this module must be added to the design
*after* the endpoint (Migen keeps the last assignment), before it is finalized. Cores that
depend on the fixes call `require(endpoint)`, which fails elaboration naming the missing
module. The right long-term home is LitePCIe itself; remove this once the pinned release
carries these fixes.
"""

from litepcie.tlp.packetizer import LitePCIeTLPHeaderInserter3DWs4DWs
from litex.gen import LiteXModule
from litex.soc.interconnect.stream import SyncFIFO
from migen import Array, Case, If, Mux, NextState, NextValue, Signal
from migen.fhdl.structure import _Assign, _Operator

__all__ = ["CPL_TIMEOUT_S", "LitePCIeFixes", "require"]

# The drive's completion timeout: 1 ms, inside the PCIe Device Control 2 default range (50 us
# to 50 ms) and range A (50 us to 10 ms). The simulated host answers a read in 400 ns
# (ssdlab_sim --read-latency-ns) plus the link's queueing, microseconds under full load.
CPL_TIMEOUT_S = 1e-3


def require(endpoint, core):
    """Elaboration check for cores relying on the fixes: `core` names the caller."""
    if not getattr(endpoint, "_ssdlab_fixed", False):
        raise ValueError(f"{core}: endpoint has no LitePCIeFixes; add "
                         "LitePCIeFixes(endpoint) to the design right after the endpoint")


class LitePCIeFixes(LiteXModule):
    """Add once, right after `endpoint` (a LitePCIeEndpoint with a 64..512-bit PHY).

    cpl_timeout_cycles (64..2**26, default 125000: CPL_TIMEOUT_S at 125 MHz): the completion
    timeout in clock cycles; the SoC passes CPL_TIMEOUT_S times its clock, unit benches a few
    microseconds to keep timeout tests short.
    """
    def __init__(self, endpoint, cpl_timeout_cycles=125_000):
        if getattr(endpoint, "_ssdlab_fixed", False):
            raise ValueError("LitePCIeFixes: already applied to this endpoint")
        data_width = endpoint.phy.data_width
        if data_width not in (64, 128, 256, 512):
            raise ValueError(f"LitePCIeFixes: endpoint data_width={data_width} not in "
                             "(64, 128, 256, 512)")
        if not (isinstance(cpl_timeout_cycles, int) and 64 <= cpl_timeout_cycles <= 2**26):
            raise ValueError(f"LitePCIeFixes: cpl_timeout_cycles={cpl_timeout_cycles!r} not an "
                             "integer in 64..2**26")
        endpoint._ssdlab_fixed = True
        self._endpoint = (endpoint,)       # a tuple: not made a submodule by LiteXModule
        self.cpl_timeout_cycles = cpl_timeout_cycles
        # A read of the crossbar's master ports awaits its completion: its timeout is counting
        # (a simulation's fast-forward must clock through it, not jump over it).
        self.reads_pending = Signal()
        lanes = data_width // 32

        # # #

        # Completion byte enables from Length.
        cmp = getattr(endpoint, "packetizer", None) or endpoint.cmp_packetizer
        sink, tlp = cmp.cmp_sink, cmp.tlp_cmp
        self.comb += If(sink.first & sink.last,
            Case(sink.len, {**{i: tlp.be.eq((1 << 4 * i) - 1) for i in range(lanes)},
                            "default": tlp.be.eq((1 << 4 * lanes) - 1)})
        )

        # Memory write byte enables on the last beat, from Length.
        req = getattr(endpoint, "packetizer", None) or endpoint.req_packetizer
        rs, rt = req.req_sink, req.tlp_req
        tail = Signal(max=lanes + 1)
        self.comb += [
            tail.eq(Mux(rs.len[:lanes.bit_length() - 1] == 0, lanes,
                        rs.len[:lanes.bit_length() - 1])),
            If(rs.we & rs.last & (rs.len > 1),
                Case(tail, {i: rt.be.eq((1 << 4 * i) - 1) for i in range(1, lanes + 1)})
            ),
        ]

        # 3DW/4DW selection held for a whole TLP.
        inserter = next(m for _, m in req._submodules
                        if isinstance(m, LitePCIeTLPHeaderInserter3DWs4DWs))
        # The selecting fmt is the one `tlp_raw_d.connect(inserter.sink)` copies into sink.fmt.
        fmt = next(st.r for st in req._fragment.comb
                   if isinstance(st, _Assign) and st.l is inserter.sink.fmt)
        src = inserter.source
        in_tlp = Signal()
        held = Signal(len(fmt))
        self.sync += If(src.valid & src.ready,
            in_tlp.eq(~src.last),
            If(~in_tlp, held.eq(fmt)),
        )
        self.comb += If(in_tlp, fmt.eq(held))

        # Depacketizer header extracters: a trailing beat when the last one carries > 3 dwords.
        for name in ("depacketizer", "req_depacketizer", "cmp_depacketizer"):
            dep = getattr(endpoint, name, None)
            if dep is not None:
                self._fix_extracter(dep.header_extracter, lanes)
                # Poisoned completions are errors (EP, DW0 bit 14).
                if hasattr(dep, "tlp_cmp"):
                    self.comb += If(dep.tlp_cmp.ep, dep.cmp_source.err.eq(1))

    def do_finalize(self):
        # The crossbar builds its TLP controller when it is finalized, which the endpoint, added
        # before this module, already was.
        xbar = self._endpoint[0].crossbar
        ctrl = getattr(xbar, "controller", None)
        if not xbar.finalized:
            raise ValueError("LitePCIeFixes: add it right after the endpoint, before finalize")
        if ctrl is not None:
            self._cpl_timeout(ctrl, xbar.max_pending_requests)

    def _cpl_timeout(self, ctrl, n):
        """Completion timeout in LitePCIeTLPController `ctrl` (`n` tags); see the docstring."""
        req_q, tag_q, fsm = ctrl.req_queue, ctrl.tag_queue, ctrl.cmp_fsm
        cmp_in, cmp_out = ctrl.master_out.source, ctrl.master_in.source
        bufs = [m for _, m in ctrl._submodules
                if isinstance(m, SyncFIFO) and m is not req_q and m is not tag_q]
        assert len(bufs) == n, "LitePCIeFixes: unexpected LitePCIeTLPController structure"
        tag_bits = max(1, (n - 1).bit_length())
        t_max = self.cpl_timeout_cycles

        # The oldest read waits on the host: its buffer is empty (a consumer's backpressure
        # holds data in it and stops the count).
        head = req_q.source.tag[:tag_bits]
        head_empty = Signal()
        waiting = Signal()
        count = Signal(max=t_max + 1)
        expire = Signal()
        fire = Signal()
        self.comb += [
            head_empty.eq(~Array(b.source.valid for b in bufs)[head]),
            waiting.eq(req_q.source.valid & head_empty),
            expire.eq(waiting & (count == t_max)),
            fire.eq(expire & cmp_out.ready),
            # In place of the buffer: one error beat, no data; retires the read (two statements,
            # as below).
            If(expire,
                cmp_out.valid.eq(1),
                cmp_out.first.eq(1),
                cmp_out.last.eq(1),
                cmp_out.end.eq(1),
                cmp_out.err.eq(1),
                cmp_out.len.eq(0),
                cmp_out.dat.eq(0),
                cmp_out.tag.eq(head),
            ),
            If(expire, req_q.source.ready.eq(cmp_out.ready)),
        ]
        self.sync += If(~waiting | fire, count.eq(0)).Elif(count != t_max, count.eq(count + 1))
        self.comb += self.reads_pending.eq(req_q.source.valid)

        # Unexpected completions: for a tag with no read in flight (`live`), or a quarantined
        # one (`stale`: timed out), dropped whole (the buffers do not see it). The last beat of
        # one for a stale tag gives the tag back (the controller's own return); for any other
        # tag that return is suppressed (the tag is already free).
        live  = Signal(n)
        stale = Signal(n)
        aged  = Signal(n)                   # stale at the last period tick
        ripe  = Signal(n)                   # stale at two ticks: free to reuse
        in_run = Signal()
        drop = Signal()
        hit_stale = Signal()
        in_tag = cmp_in.tag[:tag_bits]
        in_end = Signal()
        self.comb += [
            in_run.eq(fsm.state == fsm.encoding["RUN"]),
            in_end.eq(in_run & cmp_in.valid & cmp_in.ready & cmp_in.last & cmp_in.end),
            hit_stale.eq(Array(stale[i] for i in range(n))[in_tag] | (fire & (in_tag == head))),
            drop.eq(in_run & cmp_in.valid
                    & (hit_stale | ~Array(live[i] for i in range(n))[in_tag])),
            # Separate statements: one with targets of two of the controller's always blocks
            # would merge them, and the buffers' block reads what its FSM's block drives.
            If(drop, *[b.sink.valid.eq(0) for b in bufs]),
            If(drop & ~hit_stale, tag_q.sink.valid.eq(0)),
        ]
        fire_m = Signal(n)
        ret_m  = Signal(n)
        rel_m  = Signal(n)
        iss_m  = Signal(n)
        done_m = Signal(n)
        self.comb += [
            fire_m.eq(Mux(fire, 1 << head, 0)),
            ret_m.eq(Mux(in_end & drop & hit_stale, 1 << in_tag, 0)),
            iss_m.eq(Mux(tag_q.source.valid & tag_q.source.ready, 1 << tag_q.source.tag, 0)),
            done_m.eq(Mux(in_end & ~drop, 1 << in_tag, 0)),
        ]
        # Never answered: given back one to two timeouts later, in the controller's WAIT state
        # (where it pushes no tag itself).
        period = Signal(max=t_max)
        tick = Signal()
        cand = Signal(n)
        rel_tag = Signal(tag_bits)
        self.comb += [
            tick.eq(period == t_max - 1),
            cand.eq(ripe & stale),
            rel_tag.eq(0),
        ]
        for i in reversed(range(n)):        # lowest candidate
            self.comb += If(cand[i], rel_tag.eq(i))
        self.comb += If((fsm.state == fsm.encoding["WAIT"]) & (cand != 0),
            tag_q.sink.valid.eq(1),
            tag_q.sink.tag.eq(rel_tag),
            If(tag_q.sink.ready, rel_m.eq(1 << rel_tag)),
        )
        self.sync += [
            period.eq(Mux(tick, 0, period + 1)),
            live.eq((live | iss_m) & ~done_m & ~fire_m),
            stale.eq((stale | fire_m) & ~ret_m & ~rel_m),
            aged.eq(Mux(tick, stale, aged) & ~fire_m),
            ripe.eq(Mux(tick, ripe | (aged & stale), ripe) & ~fire_m & ~rel_m),
        ]

    def _fix_extracter(self, ext, lanes):
        fsm, sink, src = ext.fsm, ext.sink, ext.source
        if fsm.finalized:
            raise ValueError("LitePCIeFixes: add it right after the endpoint, before finalize")
        # `last` (the sink's last beat is already taken: emit one more beat from the register)
        # is the extracter's own; find it in COPY's `source.last.eq(sink.last | last)`.
        last = next(st.r.operands[1] for st in fsm.actions["COPY"]
                    if isinstance(st, _Assign) and st.l is src.last
                    and isinstance(st.r, _Operator) and st.r.op == "|")
        h = 3 % lanes                       # first sink lane not taken by the current beat
        extra = Signal()                    # the sink's last beat holds dwords past lane h - 1
        self.comb += extra.eq(sink.valid & sink.last & (sink.be[4 * h:4 * h + 4] != 0))
        # Appended to COPY: in the generated Verilog COPY's own `If(source.last, NextState(
        # "IDLE"))` reads source.last before this override (one always block, in order), so
        # the state is kept here explicitly too.
        fsm.act("COPY",
            src.last.eq((sink.last & ~extra) | last),
            If(src.valid & src.ready & extra & ~last,
                NextValue(last, 1),
                NextState("COPY")
            )
        )
        s = lanes - h                       # output lanes s.. come from the sink's beat
        self.comb += If(last, src.be[4 * s:].eq(0))
