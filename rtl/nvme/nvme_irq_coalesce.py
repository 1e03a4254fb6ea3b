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
from migen import Array, Cat, If, Signal

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

        # Per-vector state, in registers.
        req = []
        counting = []
        for v in range(n):
            cnt = Signal(9, name=f"cnt{v}")            # requests since the last interrupt
            deadline = Signal(tw, name=f"deadline{v}")
            expired = Signal(name=f"expired{v}")
            cd = Signal(name=f"cd{v}") if v else None     # vector 0 is never coalesced
            fire = Signal(name=f"fire{v}")
            hit = Signal(name=f"hit{v}")
            cleared = Signal(name=f"cleared{v}")
            r = Signal(name=f"req{v}")
            self.comb += [
                hit.eq(s_irq.valid & (s_irq.vector == v)),
                cleared.eq(sent & (out_vector == v)),
                fire.eq((cnt != 0) & ((cnt > self.agg_thr) | expired | immediate_all
                                      | (cd if v else 1))),
                # The vector held in the output register is not picked again, nor a masked one.
                r.eq(fire & ~self.mask[v] & ~(out_valid & (out_vector == v))),
            ]
            req.append(r)
            counting.append(cnt != 0)
            start = (cnt == 0) | cleared
            self.sync += [
                If(hit & start,
                    cnt.eq(1),
                    deadline.eq(now + delay),
                    expired.eq(0),
                ).Elif(cleared,
                    cnt.eq(0),
                    expired.eq(0),
                ).Else(
                    If(hit & (cnt <= self.agg_thr),
                        cnt.eq(cnt + 1),
                    ),
                    If((cnt != 0) & (now == deadline),
                        expired.eq(1),
                    ),
                ),
            ]
            if v:
                self.sync += If(s_ivc.valid & (s_ivc.vector == v), cd.eq(s_ivc.cd))

        self.comb += self.pending.eq(out_valid | (Cat(*counting) != 0))

        # Round robin: the lowest requesting vector above the last one loaded, else the lowest.
        # The picked vector's state is cleared when m_msi takes it (`cleared`), not at load:
        # requests that arrive while it waits are covered by it.
        pick_hi, any_hi = Signal(VECTOR_BITS, name="pick_hi"), Signal(name="any_hi")
        pick_lo, any_lo = Signal(VECTOR_BITS, name="pick_lo"), Signal(name="any_lo")
        for v in reversed(range(n)):
            if v:
                self.comb += If(req[v] & (out_vector < v),
                    pick_hi.eq(v),
                    any_hi.eq(1),
                )
            self.comb += [
                If(req[v],
                    pick_lo.eq(v),
                    any_lo.eq(1),
                ),
            ]
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
                + [self.agg_thr, self.agg_time, self.bad_vector, self.mask])
