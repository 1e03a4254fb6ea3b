# SPDX-License-Identifier: BSD-2-Clause
"""Scale factors of a bench run and the named profiles.

- time_scale: every duration of a suite (runs, idle periods) is multiplied by it; per-second
  sampling becomes one sample per max(1 ms, 1 s x time_scale) (fio logs in whole ms).
- write_multiple: the degradation run writes write_multiple x the user capacity (the 2 h of
  the methodology do not fit a simulation; workloads.md: 3x).
- min_ios: (at 4 KiB, at 128 KiB) the fewest I/Os a point may rest on (issue 18: fewer
  measure the set-up, not the drive); between the two sizes the count falls geometrically
  (log-linear in the block size), below 4 KiB and above 128 KiB it stays at the end values.
  A point that ran fewer (a time-based point that ended first, or --max-ios below it) is
  marked "short" in the report and the JSON, not hidden.
- by_count: points end by I/O count (min(min_ios(bs), max_ios) I/Os; the scaled time is not
  a limit), as the quick profile does: a scaled 3-minute point is milliseconds, a handful of
  I/Os on a slow point. Otherwise a point runs its scaled time, capped at max_ios.
- max_ios: a point stops after this many I/Os even if its (scaled) time is not over, so no
  point runs away (io_size = max_ios x block size).
- region_mib: the test region of tests that read what they wrote (None: the whole drive);
  cdm_mib: the CrystalDiskMark area (1 GiB in the methodology), both capped by capacity.
- fill: the fraction of the drive written by a suite's preconditioning (1.0: all of it).
- max_points: a sweep (queue depths, block sizes, read shares) keeps at most this many
  points, evenly spread with both ends (None: all of them).
The capacity scale is the drive's own (the persona built with fewer blocks per plane and
pages per block, `--blocks-per-plane`, `--pages-per-block`); the report prints it.
"""

import math
from dataclasses import asdict, dataclass, replace

__all__ = ["Scale", "PROFILES", "profile", "thin"]


@dataclass(frozen=True)
class Scale:
    time_scale: float = 1.0
    write_multiple: float = 3.0
    max_ios: int = 1 << 24
    min_ios: tuple = (1, 1)
    by_count: bool = False
    region_mib: float | None = None
    cdm_mib: float = 1024
    fill: float = 1.0
    max_points: int | None = None

    def check(self):
        """(field, message) of the first bad value, or None."""
        for f in ("time_scale", "write_multiple", "max_ios", "cdm_mib", "fill"):
            v = getattr(self, f)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                return f, f"{f} = {v}: must be a positive number"
        if self.fill > 1:
            return "fill", f"fill = {self.fill}: must be in (0, 1]"
        if self.region_mib is not None and not self.region_mib > 0:
            return "region_mib", f"region_mib = {self.region_mib}: must be positive"
        lo = self.min_ios
        if not (isinstance(lo, (tuple, list)) and len(lo) == 2
                and all(isinstance(n, int) and n >= 1 for n in lo)):
            return "min_ios", f"min_ios = {lo}: must be two integers >= 1 (4 KiB, 128 KiB)"
        if self.max_points is not None and self.max_points < 2:
            return "max_points", f"max_points = {self.max_points}: must be >= 2"
        return None

    def seconds(self, s):
        """Scaled duration in ms of the drive's time (at least 1 ms)."""
        return max(1, round(s * self.time_scale * 1000))

    def point_min_ios(self, bs):
        """The fewest I/Os a point of block size bs (bytes) may rest on."""
        small, large = self.min_ios
        if bs <= 4096:
            return small
        if bs >= 131072:
            return large
        f = (math.log2(bs) - 12) / 5                    # 0 at 4 KiB, 1 at 128 KiB
        return max(1, round(small * (large / small) ** f))

    def point_ios(self, bs):
        """I/Os a by_count point runs (min_ios, capped by max_ios)."""
        return min(self.point_min_ios(bs), self.max_ios)

    @property
    def sample_ms(self):
        return max(1, round(1000 * self.time_scale))

    def as_dict(self):
        return asdict(self)

    def with_(self, **kw):
        return replace(self, **{k: v for k, v in kw.items() if v is not None})


PROFILES = {
    # make bench: a review of the default persona's 2-channel build (README, Benchmarks);
    # every point rests on at least 2,000 4 KiB or 256 128 KiB I/Os (issue 18)
    "quick": Scale(time_scale=5e-5, write_multiple=0.5, region_mib=2, cdm_mib=2, fill=0.25,
                   max_points=3, min_ios=(2000, 256), by_count=True),
    # the methodology unscaled in time (days of wall time in simulation: use on a device or
    # with an explicit --time-scale)
    "full": Scale(min_ios=(2000, 256)),
}


def profile(name):
    return PROFILES[name]


def thin(points, max_points):
    """At most max_points of each series of `points`, evenly spread, ends kept."""
    if not max_points:
        return list(points)
    series = {}
    for p in points:
        series.setdefault(p.series, []).append(p)
    keep = set()
    for ps in series.values():
        n = len(ps)
        if n <= max_points:
            keep.update(id(p) for p in ps)
            continue
        idx = {round(i * (n - 1) / (max_points - 1)) for i in range(max_points)}
        keep.update(id(ps[i]) for i in idx)
    return [p for p in points if id(p) in keep]
