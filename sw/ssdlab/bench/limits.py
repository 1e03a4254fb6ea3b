# SPDX-License-Identifier: BSD-2-Clause
"""The analytic limit beside every measured point (issue 18, item 7): what the built drive
could at best do for that point's I/O, so a reader sees the fraction of it reached.

The flash side comes from the build's configuration (config.json: channels, ways, planes,
the part's page and array times, the bus interface and mode the channels run after bring-up,
the engine clock) through the same per-channel bus and array model as
`persona.flash_limits()` (spec/persona/limits.py): `analytic_limits_nvddr2` with the NV-DDR2
engine's registers at the engine clock where the build runs NV-DDR2 (`nvddr2_mode`: the
firmware switches the bus after bring-up; one byte per clock at most), `analytic_limits` with
the SDR registers of `onfi_mode` otherwise. It is applied to what the firmware's FTL issues:

- reads: one array READ per I/O of up to a plane page (the FTL reads whole 4 KiB units from
  one plane, sequential units of a page riding in one READ), so an I/O smaller than a page
  moves only its own units over the bus but still costs a whole tR; where the build's
  hardware read path merges plane pages (SocConfig `hw_read`, `hw_read_multi_plane`), an
  I/O of several plane pages reads up to `planes` of them under one tR (each plane's
  data-out its own bus phase);
- writes: the FTL gathers writes into multi-plane PROGRAMs of full pages (every plane of a
  die, one tPROG), whatever the host's I/O size; the limit is before write amplification
  (GC moves and map checkpoints share the same programs);
- LUNs: each LUN of a target is a die with its own array time, on the target's bus (the bus
  carries one die's phases at a time).

A build of two part types (SocConfig part2 on part2_targets: intel-750-400g) is summed
target by target, each die with its own page and array times (`die_cfg`), as
`persona.flash_limits()` sums its dies.

The array times are the means over the part's page types (tR and tPROG per page type, the
corner the build's dies run: config.json `page_timing`, `nand_timing`): a sequential write
programs every type in turn and reads hit them evenly, so a die's pages per second are the
page count over the summed busy times.

Spare bytes are moved only as ECC parity. Without ECC the FTL's reads and programs name the
data area only (column 0 and `page_bytes`, or whole units: sw/firmware/ftl.c; the spare is
read only at boot, for the factory bad-block marks), so the bus carries page data only.
`persona.flash_limits()` moves page + spare per page (a real controller's ECC parity lives
there): for the same build it is lower by up to page / (page + spare). A build with the
persona's BCH code on every channel (SocConfig `ecc`, rtl/nand/nand_ecc.py) moves each
codeword's parity room after its data (`bus_length`), and its decoder takes `(data_bytes +
room) + 3` cycles for an error-free codeword (rtl/nand/README.md, bch_decoder: one byte a
clock, 2t more for a codeword with errors): a channel's reads are bound by the slower of the
two.

Between the two, the flash data movers: every byte read from the flash is written into the
buffer memory through one port of `BUFFER_PORT_BITS` (soc/nand_flash.py) a clock, every byte
programmed read through another (1,000 MB/s each at 125 MHz): a bound of its own per
direction where the channels' bus is faster (18 NV-DDR2 channels: 2,232 MB/s of reads).

The host side is the link's payload limit per direction (`link`: {"read_mb_s",
"write_mb_s", "describe"}: NVMe reads are device-to-host, writes host-to-device). A mixed
point shares the flash between reads and writes (time-sharing: 1 / (r / R + (1 - r) / W))
while the link's two directions are independent.
"""

from soc.nand_flash import BUFFER_PORT_BITS
from spec.nand_geometry import PARTS, NandArrayTiming
from spec.onfi_timing import engine_registers, nvddr2_engine_registers
from spec.persona.limits import analytic_limits, analytic_limits_nvddr2

__all__ = ["bus_of", "array_ns", "die_cfg", "ecc_bus_bytes", "ecc_decoder_mb_s",
           "flash_limit_mb_s", "mover_limit_mb_s", "point_limit"]


def mover_limit_mb_s(cfg):
    """The flash data movers' buffer-memory port in MB/s, each direction (a word a clock)."""
    return BUFFER_PORT_BITS // 8 * cfg["sys_clk_freq"] / 1e6


def array_ns(cfg, slc=False):
    """(tR, tPROG) in ns the dies of the build `cfg` (config.json dict) average over their
    page types, in the corner they run; a build without page_timing (older config.json): the
    uniform t_r_ns / t_prog_ns. slc: the part's pseudo-SLC tR and tPROG instead (an SLC
    cache's blocks)."""
    t = NandArrayTiming(t_r_ns=cfg["t_r_ns"], t_prog_ns=cfg["t_prog_ns"],
                        t_bers_ns=cfg["t_bers_ns"], **cfg.get("page_timing", {}),
                        typical=cfg.get("nand_timing", "typical") == "typical")
    if slc:
        return t.t_r("slc"), t.t_prog("slc")
    bits = cfg.get("bits_per_cell", 2)
    return t.t_r_mean(bits), t.t_prog_mean(bits)

UNIT = 4096             # the FTL's mapping unit (sw/firmware/ftl.h UNIT_BYTES)


def bus_of(cfg):
    """The bus the build's channels run after bring-up: {"interface": "sdr" | "nv-ddr2",
    "mode", "clk_mhz" (the engine clock), "mt_s" (the mode's rate, at most one byte per
    engine clock; SDR cycles are whole clocks, so slower still), "describe"} from `cfg` (a
    SocConfig dict, config.json)."""
    from spec.onfi_timing import NVDDR2_MODES, SDR_MODES
    clk = cfg["sys_clk_freq"] / 1e6
    if cfg.get("nvddr2_mode") is not None:
        mode = cfg["nvddr2_mode"]
        mt_s = min(2000.0 / NVDDR2_MODES[mode].tDSC, clk)
        name = "NV-DDR2"
    else:
        mode = cfg["onfi_mode"]
        mt_s = min(1000.0 / SDR_MODES[mode].tRC, clk)
        name = "SDR"
    return {"interface": name.lower(), "mode": mode, "clk_mhz": clk, "mt_s": mt_s,
            "describe": f"{name} mode {mode}, engine at {clk:g} MHz ({mt_s:.0f} MT/s)"}


def die_cfg(cfg, channel, way):
    """The build `cfg` (config.json dict) as seen by the dies of target (channel, way): the
    main part's fields, or on a part2 target (SocConfig part2, part2_targets) the second
    part's part, page, spare and array times."""
    p2 = cfg.get("part2")
    if p2 and [channel, way] in [list(t) for t in cfg.get("part2_targets", ())]:
        return {**cfg, "page_timing": {}, **p2}
    return cfg


def ecc_bus_bytes(cfg, length):
    """Bytes on a channel's bus for `length` data bytes on the build `cfg`: whole codewords,
    each followed by its parity room where the build has ECC (nand_ecc's rule)."""
    if not cfg.get("ecc"):
        return length
    from rtl.nand.nand_ecc import bus_length
    from spec.bch import BchCode
    return bus_length(BchCode(**cfg["ecc"]), length)


def ecc_decoder_mb_s(cfg, errors=False):
    """One channel's BCH decoder in MB/s of data (None without ECC): a codeword of data_bytes
    per (data_bytes + room) + 3 engine clocks when it is error-free, 2t clocks more
    (Berlekamp-Massey) when `errors` (every codeword has some: a worn die)."""
    if not cfg.get("ecc"):
        return None
    from spec.bch import BchCode
    code = BchCode(**cfg["ecc"])
    cycles = code.data_bytes + code.room + 3 + (2 * code.t if errors else 0)
    return code.data_bytes * cfg["sys_clk_freq"] / cycles / 1e6


def flash_limit_mb_s(cfg, kind, bs, slc=False):
    """The flash's limit in MB/s (10^6 B/s of user data) for I/Os of bs bytes, kind "read"
    or "write", on the drive of `cfg` (a SocConfig dict, config.json): page data (and ECC
    parity where the build has ECC) over the bus, on the interface and mode `bus_of(cfg)`
    names. A build of two part types (part2) is summed target by target: on a channel the
    bus carries one die's phases at a time (the channel's bus bound is its dies' data over
    their summed bus times) and each die (each LUN of a target) is bound by its own bus
    phases plus array time, as persona.flash_limits() does (spec/persona/limits.py); with one
    part type this is `analytic_limits` x n_ways x luns.
    slc: the dies at their pseudo-SLC array times (writes into an SLC cache)."""
    clk_mhz = cfg["sys_clk_freq"] / 1e6
    period = 1000.0 / clk_mhz
    if cfg.get("nvddr2_mode") is not None:
        regs = nvddr2_engine_registers(cfg["nvddr2_mode"], clk_mhz, width=16)
        model = analytic_limits_nvddr2
    else:
        regs = engine_registers(cfg["onfi_mode"], clk_mhz, width=16)
        model = analytic_limits
    op = "read" if kind == "read" else "program"
    luns = cfg.get("luns", 1)
    total = 0.0
    for channel in range(cfg["n_channels"]):
        user = bus_ns = array_bound = 0.0
        for way in range(cfg["n_ways"]):
            d = die_cfg(cfg, channel, way)
            page = d["page_bytes"]
            if kind == "read":
                moved = min(page, -(-bs // UNIT) * UNIT)    # whole units, at most one page
                planes = 1
                if cfg.get("hw_read") and cfg.get("hw_read_multi_plane"):
                    planes = max(1, min(cfg["planes"], bs // page))
                data = planes * min(bs, page)
            else:
                planes = 1                                  # one op of every plane's page
                moved = data = cfg["planes"] * page
            bus_bytes = ecc_bus_bytes(cfg, moved)
            t_r, t_prog = array_ns(d, slc)
            lim = model(regs, 1, bus_bytes, t_r, t_prog, period_ns=period,
                        column_cycles=PARTS[d["part"]].geometry.column_cycles,
                        row_cycles=cfg["row_cycles"])
            _, bus_pages, _, _ = lim[op]
            op_bus_ns = planes * 1e9 / bus_pages            # each plane's bus phases
            op_ns = op_bus_ns + (t_r if kind == "read" else t_prog)
            user += luns * data
            bus_ns += luns * op_bus_ns
            array_bound += luns * data * 1e9 / op_ns
        bound = min(user * 1e9 / bus_ns, array_bound)
        decoder = ecc_decoder_mb_s(cfg) if kind == "read" else None
        total += bound if decoder is None else min(bound, decoder * 1e6)
    return total / 1e6


def _directions_cap(read_mb_s, write_mb_s, share):
    """The total MB/s when reads (a `share` of it) and writes each have their own path of
    the given MB/s: capped where the busier direction hits its limit."""
    caps = [read_mb_s / share if share else None,
            write_mb_s / (1 - share) if share < 1 else None]
    return min(c for c in caps if c is not None)


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
    # the data movers' ports, one per direction (as the link's)
    port = mover_limit_mb_s(cfg)
    mover = _directions_cap(port, port, share)
    if mover < mb_s:
        bound, mb_s = "flash data movers", mover
    if link:
        # each direction carries its share of the total: the total is capped where the
        # busier direction hits its payload limit
        host = _directions_cap(link["read_mb_s"], link["write_mb_s"], share)
        if host < mb_s:
            bound, mb_s = "host link", host
    out = {"mb_s": round(mb_s, 1), "iops": round(mb_s * 1e6 / bs, 1), "bound": bound}
    if share < 1 and cfg.get("slc_policy", "none") != "none":
        # while the SLC cache takes the writes: the dies at their SLC program time
        w = flash_limit_mb_s(cfg, "write", bs, slc=True)
        f = 1 / (share / flash["read"] + (1 - share) / w) if share else w
        f = min(f, mover)
        if link:
            f = min(f, host)
        out["slc_mb_s"] = round(f, 1)
    return out
