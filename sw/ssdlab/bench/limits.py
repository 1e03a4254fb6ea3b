# SPDX-License-Identifier: BSD-2-Clause
"""The analytic limit beside every measured point (issue 18, item 7): what the built drive
could at best do for that point's I/O, so a reader sees the fraction of it reached.

The flash side comes from the build's configuration (config.json: channels, ways, planes,
the part's page and array times, the SDR mode the engines run, the clock) through the same
per-channel bus and array model as `persona.flash_limits()` (spec/persona/limits.py,
`analytic_limits`), applied to what the firmware's FTL issues:

- reads: one array READ per I/O of up to a plane page (the FTL reads whole 4 KiB units from
  one plane, sequential units of a page riding in one READ), so an I/O smaller than a page
  moves only its own units over the bus but still costs a whole tR;
- writes: the FTL gathers writes into multi-plane PROGRAMs of full pages (every plane of a
  die, one tPROG), whatever the host's I/O size; the limit is before write amplification
  (GC moves and map checkpoints share the same programs).

The host side is the link's payload limit per direction (`link`: {"read_mb_s",
"write_mb_s", "describe"}: NVMe reads are device-to-host, writes host-to-device). A mixed
point shares the flash between reads and writes (time-sharing: 1 / (r / R + (1 - r) / W))
while the link's two directions are independent.
"""

from spec.nand_geometry import PARTS
from spec.onfi_timing import engine_registers
from spec.persona.limits import analytic_limits

__all__ = ["flash_limit_mb_s", "point_limit"]

UNIT = 4096             # the FTL's mapping unit (sw/firmware/ftl.h UNIT_BYTES)


def flash_limit_mb_s(cfg, kind, bs):
    """The flash's limit in MB/s (10^6 B/s of user data) for I/Os of bs bytes, kind "read"
    or "write", on the drive of `cfg` (a SocConfig dict, config.json)."""
    clk_mhz = cfg["sys_clk_freq"] / 1e6
    period = 1000.0 / clk_mhz
    regs = engine_registers(cfg["onfi_mode"], clk_mhz, width=16)
    page = cfg["page_bytes"]
    if kind == "read":
        moved = min(page, -(-bs // UNIT) * UNIT)        # whole units, at most one page
        user = min(bs, page)
    else:
        moved = user = cfg["planes"] * page             # a multi-plane program of full pages
    lim = analytic_limits(regs, cfg["n_ways"], moved, cfg["t_r_ns"], cfg["t_prog_ns"],
                          period_ns=period, column_cycles=PARTS[cfg["part"]].geometry.column_cycles,
                          row_cycles=cfg["row_cycles"])
    pages_s = lim["read" if kind == "read" else "program"][0]
    return cfg["n_channels"] * pages_s * user / 1e6


def point_limit(cfg, link, rw, bs, rwmixread=None):
    """{"mb_s", "iops", "bound"} for a point (fio rw, block size, read share in %): the
    smaller of the flash limit and the link's (None: no link limit known)."""
    if rw in ("read", "randread"):
        share = 1.0
    elif rw in ("write", "randwrite"):
        share = 0.0
    else:
        share = (50 if rwmixread is None else rwmixread) / 100
    flash = {k: flash_limit_mb_s(cfg, k, bs) for k in ("read", "write")}
    f = 1 / (share / flash["read"] + (1 - share) / flash["write"])
    bound, mb_s = "flash", f
    if link:
        # each direction carries its share of the total: the total is capped where the
        # busier direction hits its payload limit
        caps = [link["read_mb_s"] / share if share else None,
                link["write_mb_s"] / (1 - share) if share < 1 else None]
        host = min(c for c in caps if c is not None)
        if host < f:
            bound, mb_s = "host link", host
    return {"mb_s": round(mb_s, 1), "iops": round(mb_s * 1e6 / bs, 1), "bound": bound}
