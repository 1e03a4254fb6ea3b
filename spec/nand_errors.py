# SPDX-License-Identifier: BSD-2-Clause
"""Raw bit errors of a NAND die: the rate each read sees, from wear, retention, read disturb
and the read-retry level. Both die models (sim/nand/python/nand_die.py,
sim/nand/cpp/nand_die_core.cpp) evaluate `BitErrorModel.rber` with the same operations in
the same order, so a seeded die flips the same bits in both.

The rate of one page read (per bit; the flips are Bernoulli draws over the page register):

    wear    = rber_base + rber_per_kcycle * (pe / 1000) ** exponent
    shift   = retention_shift * log10(1 + age_h) * (1 + pe / 1000)      (read-retry steps)
    miss    = shift - level
    rber    = wear + rber_shift * miss**2 + rber_per_kread * (reads / 1000)

- pe: the block's erase count (P/E cycles).
- age_h: the page's retention age in hours: the bake hours (`NandDie.bake`, a lab
  retention bake: hours at the drive's temperature) since it was programmed, plus the whole
  seconds of simulated time since then.
- Retention moves the cells' threshold voltages: `shift` is that move in read-retry steps,
  growing with the log of the age and faster in worn blocks (the (1 + pe / 1000) factor).
- level: the read-retry level in effect (SET FEATURES 89h P1, as Micron's MLC parts: level
  0 is the default read reference, level L moves it L steps the way retention moves the
  cells). A read at the level nearest `shift` sees only the wear and disturb errors; a read
  at a level past it sees the over-shift errors, as on a real part.
- reads: the block's page reads since its erase (read disturb: every read of a block stresses
  its other word lines).
- Which bits flip: the wear errors are the page's weak cells, the same bits on every read of
  one program of the page at one wear (the die models draw them from a seed of the die, the
  page and the block's erase count: a read retry cannot recover them, as on a real part);
  the retention and disturb errors are drawn afresh at each read. A bit in both flips once.

The numbers per part (spec/nand_geometry.PARTS) are assumed, of the order the NAND
characterisation literature reports for 2x nm MLC (raw error rates of 1e-4 at the rated
P/E count, retention errors dominating after months, tens of thousands of reads before read
disturb matters); no datasheet publishes them.
"""

import math
from dataclasses import dataclass

__all__ = ["BitErrorModel", "RETRY_FEATURE", "NO_BIT_ERRORS", "age_hours"]

RETRY_FEATURE = 0x89    # SET FEATURES address of the read-retry level (Micron's "read retry")
SECONDS_PER_HOUR = 3600


@dataclass(frozen=True)
class BitErrorModel:
    """The raw bit error rate of a die (module docstring for the formula). Ranges:
    rber_base, rber_per_kcycle, rber_shift, rber_per_kread 0..0.01; exponent 0.5..4;
    retention_shift 0..4 read-retry steps per decade of hours; retry_levels 1..16 (1: the
    part has no read retry, SET FEATURES 89h takes only level 0)."""

    rber_base: float = 0.0
    rber_per_kcycle: float = 0.0
    exponent: float = 1.0
    retention_shift: float = 0.0
    rber_shift: float = 0.0
    rber_per_kread: float = 0.0
    retry_levels: int = 1

    def __post_init__(self):
        for name, lo, hi in (("rber_base", 0.0, 0.01), ("rber_per_kcycle", 0.0, 0.01),
                             ("exponent", 0.5, 4.0), ("retention_shift", 0.0, 4.0),
                             ("rber_shift", 0.0, 0.01), ("rber_per_kread", 0.0, 0.01)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | float) or not lo <= v <= hi:
                raise ValueError(f"BitErrorModel.{name} = {v!r}: must be a number in "
                                 f"{lo}..{hi}")
        v = self.retry_levels
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 16:
            raise ValueError(f"BitErrorModel.retry_levels = {v!r}: must be an integer in 1..16")

    @property
    def enabled(self):
        """True if any read can see a bit error."""
        return any((self.rber_base, self.rber_per_kcycle, self.rber_shift,
                    self.rber_per_kread))

    def shift(self, pe_cycles, age_h):
        """The retention shift of the threshold voltages in read-retry steps."""
        return self.retention_shift * math.log10(1.0 + age_h) * (1.0 + pe_cycles / 1000)

    def rber(self, pe_cycles, age_h=0.0, reads=0, level=0):
        """Raw bit error rate of one read (module docstring): wear_rber + read_rber."""
        return self.wear_rber(pe_cycles) + self.read_rber(pe_cycles, age_h, reads, level)

    def wear_rber(self, pe_cycles):
        """The wear part: the page's weak cells, the same bits on every read of it."""
        return self.rber_base + self.rber_per_kcycle * (pe_cycles / 1000) ** self.exponent

    def read_rber(self, pe_cycles, age_h=0.0, reads=0, level=0):
        """The part each read draws afresh: the retention shift the read level misses, and
        read disturb."""
        miss = self.shift(pe_cycles, age_h) - level
        return self.rber_shift * (miss * miss) + self.rber_per_kread * (reads / 1000)

    def best_level(self, pe_cycles, age_h):
        """The read-retry level with the fewest errors for this wear and age."""
        return min(range(self.retry_levels),
                   key=lambda lv: abs(self.shift(pe_cycles, age_h) - lv))


def age_hours(now_ns, written_ns, baked_h, baked_at_write_h):
    """A page's retention age in hours (the die models' rule): bake hours since it was
    written plus the whole seconds of simulated time (whole seconds, so a model keeping time
    in ps and one keeping it in ns agree exactly)."""
    seconds = math.floor((now_ns - written_ns) / 1e9)
    return (baked_h - baked_at_write_h) + seconds / SECONDS_PER_HOUR


NO_BIT_ERRORS = BitErrorModel()
