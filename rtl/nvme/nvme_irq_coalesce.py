# SPDX-License-Identifier: BSD-2-Clause
"""NvmeIrqCoalesce: NVMe 1.4 interrupt coalescing between the CQ poster and the MSI sender.

Every posted CQE asks for an interrupt on `s_irq` (`nvme_cq_post`'s `m_irq`). Per vector the
core counts the requests since the last interrupt and starts a timer at the first one; the
vector's interrupt leaves on `m_msi` when the count reaches the Aggregation Threshold + 1
(feature 08h, THR, 0's based), when the Aggregation Time (TIME, 100 us units) has elapsed,
or at once when coalescing does not apply to the vector (vector 0, feature 09h CD = 1, or
TIME = 0). See rtl/nvme/README.md, section nvme_irq_coalesce.
"""

from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Array, Case, If, Replicate, Signal

from rtl.nvme.nvme_common import check_param, stream_port
from rtl.nvme.nvme_cq_post import cq_irq_layout
from spec.fw_streams import VECTOR_BITS, ivc_layout

__all__ = ["NvmeIrqCoalesce", "irq_layout", "ivc_layout", "cycles_per_100us"]

# Layouts -----------------------------------------------------------------------------------------


def irq_layout():
    """One interrupt request (in) or one interrupt to send (out): the vector."""
    return cq_irq_layout()

# ivc_layout: spec/fw_streams.py (the firmware's port).


# Helpers -----------------------------------------------------------------------------------------

def _check(name, value, ok, legal):
    check_param("NvmeIrqCoalesce", name, value, ok, legal)


def cycles_per_100us(clk_freq_hz):
    """Clock cycles in one Aggregation Time unit (100 us)."""
    return round(clk_freq_hz) // 10_000


# Core --------------------------------------------------------------------------------------------

class NvmeIrqCoalesce(LiteXModule):
    """NVMe interrupt coalescing (Verilog module `nvme_irq_coalesce`).

    Parameters:
      n_vectors   (1..65, default 65): interrupt vectors 0 (admin) .. n_vectors - 1, one per
                  CQ of a 64-I/O-queue front end. The per-vector state is in registers with a
                  parallel round-robin pick, which does not scale to NVMe's 2048 vectors.
      clk_freq_hz (1e6..1e9, a multiple of 10 kHz, default 250e6): sys clock frequency; one
                  Aggregation Time unit (100 us) is clk_freq_hz / 10000 cycles.

    Ports:
      s_irq   interrupt requests, one per posted CQE (`irq_layout`); always ready.
      s_ivc   Interrupt Vector Configuration writes (`ivc_layout`); always ready.
      agg_thr   Aggregation Threshold (feature 08h bits 7:0), 0's based.
      agg_time  Aggregation Time (feature 08h bits 15:8), 100 us units; 0 = no delay.
      m_msi   interrupts to send (`irq_layout`), held stable until taken or masked.
      mask    vectors held back (INTMS): not picked while set, their requests kept; a masked
              vector in the output register gives way to the others.
      bad_vector  pulse: an s_irq or s_ivc with vector >= n_vectors (ignored).
      pending     some vector has requests not yet sent, or m_msi is valid: a deadline or an
                  interrupt is ahead (the simulation's fast-forward does not skip then).
    """
    def __init__(self, n_vectors=65, clk_freq_hz=250e6):
        # Parameters checks.
        _check("n_vectors", n_vectors, isinstance(n_vectors, int)
               and not isinstance(n_vectors, bool) and 1 <= n_vectors <= 65,
               "out of range 1..65 (per-vector state is in registers)")
        _check("clk_freq_hz", clk_freq_hz, isinstance(clk_freq_hz, (int, float))
               and not isinstance(clk_freq_hz, bool) and 1e6 <= clk_freq_hz <= 1e9
               and float(clk_freq_hz).is_integer() and round(clk_freq_hz) % 10_000 == 0,
               "out of range 1e6..1e9 or not a multiple of 10 kHz")
        self.n_vectors = n = n_vectors
        unit = cycles_per_100us(clk_freq_hz)
        t_max = 255 * unit
        tw = (t_max + 1).bit_length()           # timer width: deadlines within 2**tw cycles

        # Ports.
        self.s_irq = s_irq = stream.Endpoint(irq_layout())
        self.s_ivc = s_ivc = stream.Endpoint(ivc_layout())
        self.m_msi = m_msi = stream.Endpoint(irq_layout())
        self.agg_thr = Signal(8)
        self.agg_time = Signal(8)
        self.bad_vector = Signal()
        self.mask = Signal(n)
        self.pending = Signal()
        # `agg_` prefix: `time` is a Verilog keyword.
        for sig, name in [(self.agg_thr, "agg_thr"), (self.agg_time, "agg_time"),
                          (self.bad_vector, "bad_vector"), (self.mask, "mask")]:
            sig.name_override = name

        # # #

        self.comb += [s_irq.ready.eq(1), s_ivc.ready.eq(1)]
        if n < 2**VECTOR_BITS:
            self.sync += self.bad_vector.eq(
                (s_irq.valid & (s_irq.vector >= n)) | (s_ivc.valid & (s_ivc.vector >= n)))

        # Time base: a free-running cycle counter; a vector's deadline is an equality match
        # against it, at most t_max cycles ahead, so the wrap is harmless. `delay` is set so
        # that m_msi_valid is first sampled high exactly time * unit cycles after the edge
        # that took the first request (2 cycles of pipeline: expiry flag, output register).
        now = Signal(tw)
        self.time_base = now            # free running (the simulation's fast-forward advances it)
        delay = Signal(tw)
        immediate_all = Signal()
        self.sync += [
            now.eq(now + 1),
            delay.eq(self.agg_time * unit - 2),
        ]
        self.comb += immediate_all.eq(self.agg_time == 0)

        # Output register; the vector it last loaded is also the round-robin pointer.
        out_valid = Signal()
        out_vector = Signal(VECTOR_BITS)
        sent = Signal()
        self.comb += [
            m_msi.valid.eq(out_valid),
            m_msi.vector.eq(out_vector),
            sent.eq(out_valid & m_msi.ready),
        ]
        # A masked vector in the output register is reloaded over (it stays pending: its state
        # clears only when sent), so one masked vector does not hold back the others' MSIs.
        load = Signal()
        out_masked = Array(self.mask[i] for i in range(n))[out_vector]
        self.comb += load.eq(~out_valid | m_msi.ready | out_masked)

        # Per-vector state, in registers: a request count and a deadline per vector, and bit
        # vectors of the per-vector flags (active: count != 0; expired; cd), so that a cycle
        # without a request, a sent interrupt or an active vector costs the simulator a few
        # tests instead of a few per vector. Each update is a `case` on its vector under its
        # strobe; statements later in the list win (a vector restarted by a request in the
        # cycle its interrupt is sent starts again at a count of 1).
        cnt = [Signal(9, name=f"cnt{v}") for v in range(n)]    # requests since the last MSI
        deadline = [Signal(tw, name=f"deadline{v}") for v in range(n)]
        active = Signal(n, name="active")
        expired = Signal(n, name="expired")
        cd = Signal(n, name="cd", reset=1)      # bit 0 stays 1: vector 0 is never coalesced
        timing = Signal(n, name="timing")
        self.comb += timing.eq(active & ~expired)
        # A request to the vector held in the output register in the cycle it is sent: the
        # vector starts again (its state is cleared when sent).
        restart = Signal()
        self.comb += restart.eq(sent & (out_vector == s_irq.vector))
        self.sync += [
            # Expiry: the deadline of an active vector not yet expired.
            If(timing != 0, *[
                If(timing[v] & (now == deadline[v]), expired[v].eq(1)) for v in range(n)
            ]),
            # A request: the first one since the last interrupt starts the timer.
            If(s_irq.valid, Case(s_irq.vector, {v: [
                If(~active[v] | restart,
                    cnt[v].eq(1),
                    deadline[v].eq(now + delay),
                    expired[v].eq(0),
                    active[v].eq(1),
                ).Elif(cnt[v] <= self.agg_thr,
                    cnt[v].eq(cnt[v] + 1),
                )] for v in range(n)})
            ),
            # The vector's interrupt is sent (and no request restarts it): cleared.
            If(sent & ~(s_irq.valid & (s_irq.vector == out_vector)), Case(out_vector, {v: [
                cnt[v].eq(0),
                expired[v].eq(0),
                active[v].eq(0),
            ] for v in range(n)})),
        ]
        if n > 1:
            self.sync += If(s_ivc.valid, Case(s_ivc.vector, {
                v: cd[v].eq(s_ivc.cd) for v in range(1, n)}))

        # Vectors that want an interrupt: count over the threshold, expired, not coalesced
        # (CD, vector 0, TIME = 0); not masked, not the one in the output register.
        over = Signal(n, name="over")
        held = Signal(n, name="held")
        req = Signal(n, name="req")
        self.comb += [
            If(out_valid, Case(out_vector, {v: held.eq(1 << v) for v in range(n)})),
            If(active != 0,
                *[over[v].eq(cnt[v] > self.agg_thr) for v in range(n)],
                req.eq(active & (over | expired | cd | Replicate(immediate_all, n))
                       & ~self.mask & ~held),
            ),
        ]

        self.comb += self.pending.eq(out_valid | (active != 0))

        # Round robin: the lowest requesting vector above the last one loaded, else the lowest.
        # The picked vector's state is cleared when m_msi takes it (`cleared`), not at load:
        # requests that arrive while it waits are covered by it.
        pick_hi, any_hi = Signal(VECTOR_BITS, name="pick_hi"), Signal(name="any_hi")
        pick_lo, any_lo = Signal(VECTOR_BITS, name="pick_lo"), Signal(name="any_lo")
        chains = []
        for v in reversed(range(n)):
            if v:
                chains.append(If(req[v] & (out_vector < v),
                    pick_hi.eq(v),
                    any_hi.eq(1),
                ))
            chains.append(If(req[v],
                pick_lo.eq(v),
                any_lo.eq(1),
            ))
        self.comb += If(req != 0, *chains)
        self.sync += If(load,
            out_valid.eq(any_hi | any_lo),
            If(any_hi,
                out_vector.eq(pick_hi),
            ).Elif(any_lo,
                out_vector.eq(pick_lo),
            ),
        )

    def get_ios(self):
        return (stream_port(self.s_irq, "s_irq") + stream_port(self.s_ivc, "s_ivc")
                + stream_port(self.m_msi, "m_msi")
                + [self.agg_thr, self.agg_time, self.bad_vector, self.mask, self.pending])
