# SPDX-License-Identifier: BSD-2-Clause
"""Steady state, the SNIA PTS rule (Solid State Storage Performance Test Specification,
Enterprise 1.1, "steady state"): a measurement window of five consecutive rounds is steady
when

- data excursion: every round lies within ±20 % of the window's mean, and
- slope excursion: the least-squares line through the window moves by at most ±10 % of the
  mean across the window (fit at the last round minus fit at the first).

`verdict(rounds)` judges the last `window` rounds of a series (a round: one per-second sample
of a point, or one pass of a test); the verdict goes into result.json and the report, and a
point that did not reach a steady state is marked, not hidden.
"""

__all__ = ["verdict", "WINDOW", "EXCURSION", "SLOPE"]

WINDOW = 5
EXCURSION = 0.20
SLOPE = 0.10


def verdict(rounds, window=WINDOW, excursion=EXCURSION, slope=SLOPE):
    """{steady, window, mean, excursion_pct, slope_pct, rule} for the last `window` values
    of `rounds`; steady is None (not judged) when there are fewer rounds than the window or
    their mean is not positive."""
    rule = (f"SNIA PTS: last {window} rounds within ±{excursion:.0%} of their mean, "
            f"best-fit slope across them within ±{slope:.0%}")
    values = [float(v) for v in rounds][-window:]
    out = {"steady": None, "window": values, "rule": rule, "mean": None,
           "excursion_pct": None, "slope_pct": None}
    if len(values) < window:
        out["why"] = f"{len(values)} rounds, the rule needs {window}"
        return out
    n = len(values)
    mean = sum(values) / n
    if mean <= 0:
        out["why"] = "no I/O in the window"
        return out
    xm = (n - 1) / 2
    k = sum((i - xm) * (v - mean) for i, v in enumerate(values)) / \
        sum((i - xm) ** 2 for i in range(n))
    exc = max(abs(v - mean) for v in values) / mean
    slp = abs(k * (n - 1)) / mean
    out.update(mean=round(mean, 1), excursion_pct=round(100 * exc, 1),
               slope_pct=round(100 * slp, 1),
               steady=bool(exc <= excursion + 1e-12 and slp <= slope + 1e-12))
    return out
