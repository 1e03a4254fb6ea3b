# SPDX-License-Identifier: BSD-2-Clause
"""ONFI asynchronous SDR interface timing: the mode table, the conversion to engine
registers, and a pin-level timing checker.

- `SDR_MODES[m]`: the ONFI 4.x asynchronous SDR timing modes 0..5, in ns (`OnfiSdrTimings`).
- `engine_registers(mode, clk_mhz)`: register values (clock cycles) for `OnfiSdrEngine`'s
  `timing` port that meet a mode at a clock frequency.
- `NVDDR2_MODES[m]`: the ONFI NV-DDR2 timing modes 0..7 (`OnfiNvddr2Timings`), and
  `nvddr2_engine_registers(mode, clk_mhz)` for `OnfiNvddr2Engine`.
- `OnfiTimingChecker`: watches the ONFI pins of one die (one CE#), records edge times and
  reports every violated parameter, e.g. "tWH violated: 8.0 ns < 10 ns". Its rules are plain
  Python (`observe()`), so a die model can feed it from its own pin watcher; `start()` runs it
  as a cocotb coroutine that samples the pins after every clock edge.

All table values are minimums except tREA, tCEA, tWB, tRHZ and tCHZ, which are maximums the
die guarantees (the controller must wait at least that long). tCCS is 500 ns unless the
parameter page says otherwise; tADL is 400 ns (ONFI 3.0 and later).
"""

import math
from dataclasses import dataclass, replace

__all__ = ["OnfiSdrTimings", "SDR_MODES", "engine_registers", "ENGINE_REGISTERS",
           "TimingViolation", "Violation", "OnfiPins", "OnfiTimingChecker", "with_overrides",
           "OnfiNvddr2Timings", "NVDDR2_MODES", "nvddr2_engine_registers",
           "NVDDR2_ENGINE_REGISTERS"]


@dataclass(frozen=True)
class OnfiSdrTimings:
    """One asynchronous SDR timing set, all values in ns."""
    tADL: float     # ALE (last address WE# high) to data-in WE# high, min
    tALH: float     # ALE hold after WE# high, min
    tALS: float     # ALE setup before WE# high, min
    tAR: float      # ALE low to RE# low, min
    tCCS: float     # change column setup (E0h / 85h address to data), min
    tCEA: float     # CE# low to data out valid, max
    tCEH: float     # CE# high hold, min
    tCH: float      # CE# hold after WE# high, min
    tCHZ: float     # CE# high to DQ hi-Z, max
    tCLH: float     # CLE hold after WE# high, min
    tCLR: float     # CLE low to RE# low, min
    tCLS: float     # CLE setup before WE# high, min
    tCOH: float     # CE# high to data out hold, min
    tCS: float      # CE# setup before WE# high, min
    tDH: float      # data hold after WE# high, min
    tDS: float      # data setup before WE# high, min
    tRC: float      # RE# cycle, min
    tREA: float     # RE# low to data out valid, max
    tREH: float     # RE# high, min
    tRHOH: float    # RE# high to data out hold, min
    tRHW: float     # RE# high to WE# low, min
    tRHZ: float     # RE# high to DQ hi-Z, max
    tRLOH: float    # RE# low to data out hold (EDO), min
    tRP: float      # RE# low, min
    tRR: float      # R/B# high to RE# low, min
    tWB: float      # WE# high to R/B# low, max
    tWC: float      # WE# cycle, min
    tWH: float      # WE# high, min
    tWHR: float     # WE# high (command/address) to RE# low, min
    tWP: float      # WE# low, min
    tWW: float      # WP# transition to WE# low, min


def _modes():
    # name: (mode 0, 1, 2, 3, 4, 5), ns; ONFI 4.x table "asynchronous timing parameters".
    table = {
        "tADL": (400, 400, 400, 400, 400, 400),
        "tALH": (20, 10, 10, 5, 5, 5),
        "tALS": (50, 25, 15, 10, 10, 10),
        "tAR": (25, 10, 10, 10, 10, 10),
        "tCCS": (500, 500, 500, 500, 500, 500),
        "tCEA": (100, 45, 30, 25, 25, 25),
        "tCEH": (20, 20, 20, 20, 20, 20),
        "tCH": (20, 10, 10, 5, 5, 5),
        "tCHZ": (100, 50, 50, 50, 30, 30),
        "tCLH": (20, 10, 10, 5, 5, 5),
        "tCLR": (20, 10, 10, 10, 10, 10),
        "tCLS": (50, 25, 15, 10, 10, 10),
        "tCOH": (0, 15, 15, 15, 15, 15),
        "tCS": (70, 35, 25, 25, 20, 15),
        "tDH": (20, 10, 5, 5, 5, 5),
        "tDS": (40, 20, 15, 10, 10, 7),
        "tRC": (100, 50, 35, 30, 25, 20),
        "tREA": (40, 30, 25, 20, 20, 16),
        "tREH": (30, 15, 15, 10, 10, 7),
        "tRHOH": (0, 15, 15, 15, 15, 15),
        "tRHW": (200, 100, 100, 100, 100, 100),
        "tRHZ": (200, 100, 100, 100, 100, 100),
        "tRLOH": (0, 0, 0, 0, 5, 5),
        "tRP": (50, 25, 17, 15, 12, 10),
        "tRR": (40, 20, 20, 20, 20, 20),
        "tWB": (200, 100, 100, 100, 100, 100),
        "tWC": (100, 45, 35, 30, 25, 20),
        "tWH": (30, 15, 15, 10, 10, 7),
        "tWHR": (120, 80, 80, 80, 80, 80),
        "tWP": (50, 25, 17, 15, 12, 10),
        "tWW": (100, 100, 100, 100, 100, 100),
    }
    return {m: OnfiSdrTimings(**{k: float(v[m]) for k, v in table.items()}) for m in range(6)}


SDR_MODES = _modes()

# The engine's timing registers, in the order of its `timing` struct (rtl/nand/onfi_sdr_engine).
ENGINE_REGISTERS = ("t_wp", "t_wh", "t_rp", "t_reh", "t_rea", "t_cls", "t_clh", "t_ds", "t_dh",
                    "t_cs", "t_ch", "t_cea", "t_whr", "t_adl", "t_rhw", "t_ccs", "t_wb", "t_rr")


def _timings(mode_or_timings):
    if isinstance(mode_or_timings, (OnfiSdrTimings, OnfiNvddr2Timings)):
        return mode_or_timings
    if mode_or_timings not in SDR_MODES:
        raise ValueError(f"SDR timing mode must be 0..5, got {mode_or_timings!r}")
    return SDR_MODES[mode_or_timings]


def engine_registers(mode, clk_mhz=100.0, width=8, sample_margin_ns=1.0, **overrides):
    """Timing register values (clock cycles) for `OnfiSdrEngine` meeting `mode`.

    mode:      0..5, or an `OnfiSdrTimings` (e.g. with tCCS/tADL from the parameter page).
    clk_mhz:   the engine clock, > 0.
    width:     the engine's `timer_width`; a value that does not fit raises ValueError.
    sample_margin_ns: >= 0, added to tREA before rounding: the input flop's setup time and
               board skew, so DQ is never sampled exactly when the die's data becomes valid.
    overrides: register values to force after conversion (e.g. t_wh=1 to break tWH).

    Every value is rounded up to whole cycles and is at least 1. t_wh and t_reh are stretched
    so that WE#/RE# cycles meet tWC/tRC. The read sample point t_rea is ceil(tREA + margin);
    when that lies after RE# rises, it must stay inside the tRHOH data hold, otherwise t_rp
    grows to it.
    """
    t = _timings(mode)
    if not clk_mhz > 0:
        raise ValueError(f"clk_mhz must be > 0, got {clk_mhz!r}")
    if not sample_margin_ns >= 0:
        raise ValueError(f"sample_margin_ns must be >= 0, got {sample_margin_ns!r}")
    period = 1000.0 / clk_mhz

    def cyc(ns):
        return max(1, math.ceil(ns / period - 1e-9))

    regs = {
        "t_wp": cyc(t.tWP), "t_rp": cyc(t.tRP), "t_rea": cyc(t.tREA + sample_margin_ns),
        "t_cls": cyc(max(t.tCLS, t.tALS)), "t_clh": cyc(max(t.tCLH, t.tALH)),
        "t_ds": cyc(t.tDS), "t_dh": cyc(t.tDH), "t_cs": cyc(t.tCS), "t_ch": cyc(t.tCH),
        "t_cea": cyc(t.tCEA), "t_whr": cyc(t.tWHR), "t_adl": cyc(t.tADL),
        "t_rhw": cyc(t.tRHW), "t_ccs": cyc(t.tCCS), "t_wb": cyc(t.tWB), "t_rr": cyc(t.tRR),
    }
    if regs["t_rea"] > regs["t_rp"] and (regs["t_rea"] - regs["t_rp"]) * period >= t.tRHOH:
        regs["t_rp"] = regs["t_rea"]     # sampling after RE# high would miss tRHOH
    regs["t_wh"] = max(cyc(t.tWH), cyc(t.tWC) - regs["t_wp"])
    regs["t_reh"] = max(cyc(t.tREH), cyc(t.tRC) - regs["t_rp"])
    for name, value in overrides.items():
        if name not in ENGINE_REGISTERS:
            raise ValueError(f"unknown engine timing register {name!r}")
        regs[name] = value
    for name, value in regs.items():
        if not 0 <= value < (1 << width):
            raise ValueError(f"timing register {name}={value} cycles does not fit "
                             f"timer_width={width} at {clk_mhz} MHz")
    return {name: regs[name] for name in ENGINE_REGISTERS}


# --- NV-DDR2 --------------------------------------------------------------------------------

@dataclass(frozen=True)
class OnfiNvddr2Timings:
    """One NV-DDR2 timing set (ONFI 3.x/4.x), all values in ns; minimums unless noted."""
    mode: int
    tRC: float      # RE# cycle = tDSC, DQS cycle (data in); the mode's period
    tDSC: float     # DQS cycle time (data in)
    tCS: float      # CE# setup (to the first WE# rising / DQS edge)
    tCH: float      # CE# hold after WE# rising
    tCEH: float     # CE# high hold
    tCR: float      # CE# low to RE# low
    tCALS: float    # CLE/ALE setup before WE# rising
    tCALH: float    # CLE/ALE hold after WE# rising
    tCAS: float     # command/address DQ setup before WE# rising
    tCAH: float     # command/address DQ hold after WE# rising
    tWP: float      # WE# low (command/address)
    tWH: float      # WE# high (command/address)
    tWC: float      # WE# cycle (command/address)
    tWHR: float     # WE# high to RE# low (read preamble start)
    tADL: float     # last address WE# high to the first data-in DQS edge
    tCCS: float     # change column setup
    tRR: float      # R/B# high to RE# low
    tWB: float      # WE# high to R/B# low, max
    tRHW: float     # RE# high to WE# low
    tWPRE: float    # write preamble: DQS low before the first rising edge
    tWPST: float    # write postamble: DQS low after the last falling edge
    tWPSTH: float   # DQS write postamble hold (DQS released to the next WE# low)
    tRPRE: float    # read preamble: RE# low before the first RE# rising edge
    tRPST: float    # read postamble: RE# low after the last falling edge = tDQSRE + tRC/2
    tRPSTH: float   # RE# high after the postamble to the next cycle / CE# high
    tDQSRE: float   # RE# edge to DQS edge (read), max
    tDQSD: float    # RE# low to DQS driven low (read preamble), max
    tDS: float      # DQ setup before a DQS edge (data in)
    tDH: float      # DQ hold after a DQS edge (data in)
    tDQSH: float    # DQS high (data in)
    tDQSL: float    # DQS low (data in)
    tRP: float      # RE# low (data out)
    tREH: float     # RE# high (data out)
    tCOH: float = 0.0   # CE# high to DQ hold (the SDR parameter; the die model releases DQ)


def _nvddr2_modes():
    # Sources: the NV-DDR2/NV-DDR3 timing table of ONFI 4.0 (Table "NV-DDR2 and NV-DDR3
    # timing parameters") as reproduced per mode in public NAND tester code (tCS 20, tCH 5,
    # tCALS 15, tCALH 5, tCAS 5, tCAH 5, tWP 11, tWH 11, tWPRE 15, tWPST 6.5, tWPSTH 25,
    # tRPRE 15, tRPSTH 15, tDQSRE 25 max, tDQSD 18 max, tRPST = tDQSRE + 0.5 tRC, tDS/tDH
    # per mode) and a public NAND part table (tWC 25, tWHR 80, tADL 400, tCCS 400, tRR 20,
    # tWB 100, tRHW 100). Mode periods tRC = tDSC: 30, 25, 15, 12, 10, 7.5, 6, 5 ns (33..200
    # MHz strobes, 66..400 MT/s). Assumed, not cross-checked here: tCR 10, tCEH 20, tRP = tREH
    # = tDQSH = tDQSL = 0.43 of the period (ONFI gives them in units of tRC / tDSC). tDQSS
    # belongs to NV-DDR (DQS against CLK) and has no NV-DDR2 counterpart.
    periods = (30, 25, 15, 12, 10, 7.5, 6, 5)
    t_ds = (4, 3.3, 2.0, 1.1, 0.7, 0.6, 0.55, 0.4)
    modes = {}
    for m, tck in enumerate(periods):
        modes[m] = OnfiNvddr2Timings(
            mode=m, tRC=tck, tDSC=tck, tCS=20, tCH=5, tCEH=20, tCR=10, tCALS=15, tCALH=5,
            tCAS=5, tCAH=5, tWP=11, tWH=11, tWC=25, tWHR=80, tADL=400, tCCS=400, tRR=20,
            tWB=100, tRHW=100, tWPRE=15, tWPST=6.5, tWPSTH=25, tRPRE=15,
            tRPST=25 + 0.5 * tck, tRPSTH=15, tDQSRE=25, tDQSD=18, tDS=t_ds[m], tDH=t_ds[m],
            tDQSH=0.43 * tck, tDQSL=0.43 * tck, tRP=0.43 * tck, tREH=0.43 * tck)
    return modes


NVDDR2_MODES = _nvddr2_modes()

# OnfiNvddr2Engine's timing registers, in the order of its `timing` struct
# (rtl/nand/onfi_nvddr2_engine.NVDDR2_TIMING_REGISTERS).
NVDDR2_ENGINE_REGISTERS = (
    "t_wp", "t_wh", "t_cals", "t_calh", "t_cas", "t_cah", "t_cs", "t_ch", "t_cr", "t_whr",
    "t_adl", "t_ccs", "t_wb", "t_rr", "t_rhw", "t_wpre", "t_wpst", "t_wpsth", "t_dqs",
    "t_rpre", "t_re", "t_rpst", "t_rpsth")


def _nvddr2_timings(mode_or_timings):
    if isinstance(mode_or_timings, OnfiNvddr2Timings):
        return mode_or_timings
    if mode_or_timings not in NVDDR2_MODES:
        raise ValueError(f"NV-DDR2 timing mode must be 0..7, got {mode_or_timings!r}")
    return NVDDR2_MODES[mode_or_timings]


def nvddr2_engine_registers(mode, clk_mhz=100.0, width=8, **overrides):
    """Timing register values (clock cycles) for `OnfiNvddr2Engine` meeting NV-DDR2 `mode`.

    mode:      0..7, or an `OnfiNvddr2Timings` (e.g. with tCCS/tADL from the parameter page).
    clk_mhz:   the engine clock, > 0.
    width:     the engine's `timer_width`; a value that does not fit raises ValueError.
    overrides: register values to force after conversion (e.g. t_whr=1 to break tWHR).

    Every value is rounded up to whole cycles and is at least 1. `t_dqs` (clocks per data-in
    byte) meets tDSC/2, tDQSH/tDQSL and, with the DQS edge in the middle of a byte slot,
    tDS/tDH within half a slot; `t_re` (clocks per data-out byte) meets tRC/2, tRP, tREH;
    `t_rpst` covers tDQSRE plus half the RE# cycle actually used; `t_wh` is stretched to
    meet tWC. A `t_re` whose RE# low time reaches tRPST would read as a postamble: ValueError.
    """
    t = _nvddr2_timings(mode)
    if not clk_mhz > 0:
        raise ValueError(f"clk_mhz must be > 0, got {clk_mhz!r}")
    period = 1000.0 / clk_mhz

    def cyc(ns):
        return max(1, math.ceil(ns / period - 1e-9))

    regs = {
        "t_wp": cyc(t.tWP), "t_cals": cyc(t.tCALS), "t_calh": cyc(t.tCALH),
        "t_cas": cyc(t.tCAS), "t_cah": cyc(t.tCAH), "t_cs": cyc(t.tCS), "t_ch": cyc(t.tCH),
        "t_cr": cyc(t.tCR), "t_whr": cyc(t.tWHR), "t_adl": cyc(t.tADL), "t_ccs": cyc(t.tCCS),
        "t_wb": cyc(t.tWB), "t_rr": cyc(t.tRR), "t_rhw": cyc(t.tRHW), "t_wpre": cyc(t.tWPRE),
        "t_wpst": cyc(t.tWPST), "t_wpsth": cyc(t.tWPSTH), "t_rpre": cyc(t.tRPRE),
        "t_rpsth": cyc(t.tRPSTH),
        "t_dqs": max(cyc(t.tDSC / 2), cyc(t.tDQSH), cyc(t.tDQSL), cyc(2 * max(t.tDS, t.tDH))),
        "t_re": max(cyc(t.tRC / 2), cyc(t.tRP), cyc(t.tREH)),
    }
    regs["t_wh"] = max(cyc(t.tWH), cyc(t.tWC) - regs["t_wp"])
    regs["t_rpst"] = cyc(t.tDQSRE + max(t.tRC / 2, regs["t_re"] * period))
    if regs["t_re"] * period + 1e-9 >= t.tRPST:
        raise ValueError(f"t_re={regs['t_re']} cycles at {clk_mhz} MHz holds RE# low as long "
                         f"as the read postamble (tRPST {t.tRPST:g} ns)")
    for name, value in overrides.items():
        if name not in NVDDR2_ENGINE_REGISTERS:
            raise ValueError(f"unknown NV-DDR2 engine timing register {name!r}")
        regs[name] = value
    for name, value in regs.items():
        if not 0 <= value < (1 << width):
            raise ValueError(f"timing register {name}={value} cycles does not fit "
                             f"timer_width={width} at {clk_mhz} MHz")
    return {name: regs[name] for name in NVDDR2_ENGINE_REGISTERS}


# --- timing checker ------------------------------------------------------------------------

class TimingViolation(AssertionError):
    """Raised by a checker built with raise_on_violation=True."""


@dataclass(frozen=True)
class Violation:
    param: str          # ONFI parameter name, or "protocol"
    t_ns: float         # simulation time of the offending edge
    measured: float     # ns (nan for protocol errors)
    required: float     # ns
    message: str

    def __str__(self):
        return self.message


@dataclass(frozen=True)
class OnfiPins:
    """A snapshot of one die's pins. dq is the controller-driven byte or None when released."""
    ce_n: int
    cle: int
    ale: int
    we_n: int
    re_n: int
    dq: object
    rb_n: int = 1
    dqs: object = None      # NV-DDR2: the controller-driven DQS level, None when released


_EPS = 1e-3     # ns; sim times are exact multiples of the time precision


class OnfiTimingChecker:
    """Checks the controller side of the ONFI asynchronous SDR interface of one die.

    timings:  a mode 0..5 or an `OnfiSdrTimings` (minimum values the controller must meet).
    ce:       the index of this die's CE# in the ce_n vector (None: ce_n is a single bit).
    raise_on_violation: raise `TimingViolation` at the first violation instead of recording.

    Rules (all referenced to this die, i.e. only while its CE# is low): WE# low/high/cycle
    (tWP, tWH, tWC); CLE/ALE/DQ/CE# setup to and hold after WE# rising (tCLS, tALS, tDS, tCS,
    tCLH, tALH, tDH, tCH); tADL from the last address to the first data-in latch; RE#
    low/high/cycle (tRP, tREH, tRC); tWHR from a WE# rising edge to the next RE# falling edge;
    tCLR/tAR; tRHW from RE# high to WE# low; tRR from R/B# high to RE# low (except after
    a status command, 70h/78h, which may be polled across R/B# rising); tCCS after
    E0h (change read column) and after the address of 85h (change write column); and
    protocol errors (WE# and RE# low together, CLE and ALE both latched, DQ not driven at a
    latch, CLE/ALE high at RE# falling).
    """

    def __init__(self, timings=0, ce=None, raise_on_violation=False, log=None, name=None):
        self.t = _timings(timings)
        self.ce = ce
        self.raise_on_violation = raise_on_violation
        self.log = log
        self.name = name or (f"onfi[ce{ce}]" if ce is not None else "onfi")
        self.violations = []
        self.latched = []       # (kind, byte) latched on WE# rising: kind "cmd"/"addr"/"data"
        self.edges = {}         # counts of observed edges by name, for tests of the checker
        self._prev = None
        self._task = None
        self.reset_history()

    def reset_history(self):
        """Forget edge times (e.g. after changing the timing set between test phases)."""
        self.last = dict.fromkeys([
            "we_fall", "we_rise", "re_fall", "re_rise", "cle_chg", "ale_chg", "cle_fall",
            "ale_fall", "dq_chg", "ce_fall", "rb_rise", "addr_rise", "e0_rise"], None)
        self.last_kind = None
        self.last_cmd = None
        self.ccs_write = False      # 85h seen: its data-in needs tCCS
        self._prev = None
        # NV-DDR2 bursts: None, or the edge times of the burst in progress
        self.rd = None
        self.wr = None
        self.last.update(rd_end=None, wpst_end=None, rd_start=None)

    def set_timings(self, timings):
        """Switch the timing set, e.g. to `NVDDR2_MODES[m]` when the die's interface changes;
        the NV-DDR2 rules apply while an `OnfiNvddr2Timings` is set."""
        self.t = _timings(timings)
        self.rd = self.wr = None

    # -- reporting --

    def _violate(self, param, t_ns, measured, required, what=None):
        if what is None:
            what = f"{param} violated: {measured:.1f} ns < {required:g} ns"
        msg = f"{self.name}: {what} (at {t_ns:.1f} ns)"
        v = Violation(param, t_ns, measured, required, msg)
        self.violations.append(v)
        if self.log is not None:
            self.log.error(msg)
        if self.raise_on_violation:
            raise TimingViolation(msg)

    def _min(self, param, t_ns, since, required=None):
        """Check that `since` (an edge time or None) is at least tX before t_ns."""
        if since is None:
            return
        required = getattr(self.t, param) if required is None else required
        measured = t_ns - since
        if measured + _EPS < required:
            self._violate(param, t_ns, measured, required)

    def _protocol(self, t_ns, what):
        self._violate("protocol", t_ns, math.nan, math.nan, f"protocol: {what}")

    def violated(self, param):
        """The recorded violations of one parameter."""
        return [v for v in self.violations if v.param == param]

    def _count(self, edge):
        self.edges[edge] = self.edges.get(edge, 0) + 1

    # -- the rules --

    def observe(self, t_ns, pins):
        """Feed one pin snapshot taken at time t_ns (ns). Call at every instant pins may change;
        edges are detected against the previous snapshot."""
        prev, self._prev = self._prev, pins
        if prev is None:
            return
        if isinstance(self.t, OnfiNvddr2Timings):
            self._observe_nvddr2(t_ns, prev, pins)
            return
        last = self.last
        sel = not pins.ce_n                 # this die selected after the change
        was_sel = not prev.ce_n

        # CE# edges
        if prev.ce_n and not pins.ce_n:
            last["ce_fall"] = t_ns
            self._count("ce_fall")
        if was_sel and pins.ce_n:
            self._count("ce_rise")
            if last["we_rise"] is not None and (last["ce_fall"] or 0) <= last["we_rise"]:
                self._min("tCH", t_ns, last["we_rise"])

        # hold checks, referenced to this die's last latch
        hold_from = last["we_rise"]
        if pins.cle != prev.cle:
            if hold_from is not None:
                self._min("tCLH", t_ns, hold_from)
            last["cle_chg"] = t_ns
            if not pins.cle:
                last["cle_fall"] = t_ns
        if pins.ale != prev.ale:
            if hold_from is not None:
                self._min("tALH", t_ns, hold_from)
            last["ale_chg"] = t_ns
            if not pins.ale:
                last["ale_fall"] = t_ns
        if pins.dq != prev.dq:
            if hold_from is not None and prev.dq is not None:
                self._min("tDH", t_ns, hold_from)
            if pins.dq is not None:
                last["dq_chg"] = t_ns

        if prev.rb_n == 0 and pins.rb_n == 1:
            last["rb_rise"] = t_ns

        if not pins.we_n and not pins.re_n and sel:
            self._protocol(t_ns, "WE# and RE# low together")

        # WE# falling
        if prev.we_n and not pins.we_n and sel:
            self._count("we_fall")
            self._min("tWH", t_ns, last["we_rise"])
            self._min("tWC", t_ns, last["we_fall"])
            if last["re_rise"] is not None and (last["we_rise"] is None
                                                or last["re_rise"] > last["we_rise"]):
                self._min("tRHW", t_ns, last["re_rise"])
            last["we_fall"] = t_ns

        # WE# rising: the die latches CLE/ALE/DQ
        if not prev.we_n and pins.we_n and sel:
            self._count("we_rise")
            self._min("tWP", t_ns, last["we_fall"])
            # setup is referenced to the values before the edge (prev snapshot)
            self._min("tCLS", t_ns, last["cle_chg"])
            self._min("tALS", t_ns, last["ale_chg"])
            self._min("tCS", t_ns, last["ce_fall"])
            if prev.dq is None:
                self._protocol(t_ns, "DQ not driven at WE# rising")
            else:
                self._min("tDS", t_ns, last["dq_chg"])
            if prev.cle and prev.ale:
                self._protocol(t_ns, "CLE and ALE both high at WE# rising")
            kind = "cmd" if prev.cle else "addr" if prev.ale else "data"
            byte = prev.dq if prev.dq is not None else 0
            if kind == "data":
                if self.last_kind == "addr":
                    self._min("tADL", t_ns, last["addr_rise"])
                    if self.ccs_write:
                        self._min("tCCS", t_ns, last["addr_rise"])
                self.ccs_write = False
            elif kind == "addr":
                last["addr_rise"] = t_ns
            else:
                self.last_cmd = byte
                self.ccs_write = byte == 0x85
                last["e0_rise"] = t_ns if byte == 0xE0 else None
            self.last_kind = kind
            self.latched.append((kind, byte))
            last["we_rise"] = t_ns

        # RE# falling: start of a data-out cycle
        if prev.re_n and not pins.re_n and sel:
            self._count("re_fall")
            self._min("tREH", t_ns, last["re_rise"])
            self._min("tRC", t_ns, last["re_fall"])
            first_read = last["re_fall"] is None or (
                last["we_rise"] is not None and last["we_rise"] > last["re_fall"])
            if first_read:
                self._min("tWHR", t_ns, last["we_rise"])
                if last["e0_rise"] is not None:
                    self._min("tCCS", t_ns, last["e0_rise"])
            # tRR is for data output; a status read (70h/78h) may meet R/B# rising anyhow, and
            # so may a burst under way: R/B# rising inside it is another LUN of the target
            # going ready (the one being read was ready before its first RE#)
            if first_read and last["rb_rise"] is not None and \
                    self.last_cmd not in (0x70, 0x78) and (
                    last["re_fall"] is None or last["rb_rise"] > last["re_fall"]):
                self._min("tRR", t_ns, last["rb_rise"])
            if pins.cle or pins.ale:
                self._protocol(t_ns, "CLE or ALE high at RE# falling")
            self._min("tCLR", t_ns, last["cle_fall"])
            self._min("tAR", t_ns, last["ale_fall"])
            last["re_fall"] = t_ns
            last["e0_rise"] = None
        if not prev.re_n and pins.re_n and sel:
            self._count("re_rise")
            self._min("tRP", t_ns, last["re_fall"])
            last["re_rise"] = t_ns

    # -- NV-DDR2 rules --

    def _end_read(self, t_ns, why):
        """A read burst still open when `why` happens: the RE# rising edge that ended it must
        have come tRPST after the last falling edge (else it looked like data)."""
        rd, self.rd = self.rd, None
        if rd is None:
            return
        if rd["last_fall"] is None or rd["last_rise"] is None:
            self._protocol(t_ns, f"{why} ends a read burst that has no falling data edge")
        elif rd["last_rise"] > rd["last_fall"]:
            # the last rising edge came too early for a postamble
            self._violate("tRPST", t_ns, rd["last_rise"] - rd["last_fall"], self.t.tRPST)
            self.last["rd_end"] = rd["last_rise"]
        else:
            self._protocol(t_ns, f"{why} during a read burst with RE# low")

    def _observe_nvddr2(self, t_ns, prev, pins):
        t, last = self.t, self.last
        sel = not pins.ce_n
        was_sel = not prev.ce_n

        if prev.ce_n and not pins.ce_n:
            last["ce_fall"] = t_ns
            self._count("ce_fall")
        if was_sel and pins.ce_n:
            self._count("ce_rise")
            self._end_read(t_ns, "CE# high")
            if self.wr is not None:
                self._protocol(t_ns, "CE# high during a write burst")
                self.wr = None
            if last["we_rise"] is not None and (last["ce_fall"] or 0) <= last["we_rise"]:
                self._min("tCH", t_ns, last["we_rise"])
            self._min("tRPSTH", t_ns, last["rd_end"])
        if not (sel or was_sel):
            return

        # holds after a command/address latch
        if pins.cle != prev.cle:
            self._min("tCALH", t_ns, last["we_rise"])
            last["cle_chg"] = t_ns
        if pins.ale != prev.ale:
            self._min("tCALH", t_ns, last["we_rise"])
            last["ale_chg"] = t_ns
        if pins.dq != prev.dq:
            if prev.dq is not None:
                wr = self.wr
                if wr is not None and wr["last_edge"] is not None:
                    self._min("tDH", t_ns, wr["last_edge"])
                elif wr is None:
                    self._min("tCAH", t_ns, last["we_rise"])
            if pins.dq is not None:
                last["dq_chg"] = t_ns
        if prev.rb_n == 0 and pins.rb_n == 1:
            last["rb_rise"] = t_ns
        if not pins.we_n and not pins.re_n and sel:
            self._protocol(t_ns, "WE# and RE# low together")

        # WE# falling: a command or address cycle begins
        if prev.we_n and not pins.we_n and sel:
            self._count("we_fall")
            self._end_read(t_ns, "WE# low")
            self._min("tWH", t_ns, last["we_rise"])
            self._min("tWC", t_ns, last["we_fall"])
            if last["re_rise"] is not None and (last["we_rise"] is None
                                                or last["re_rise"] > last["we_rise"]):
                self._min("tRHW", t_ns, last["re_rise"])
            self._min("tRPSTH", t_ns, last["rd_end"])
            self._min("tWPSTH", t_ns, last["wpst_end"])
            last["rd_end"] = last["wpst_end"] = None
            if self.wr is not None:
                self._protocol(t_ns, "WE# low during a write burst")
            last["we_fall"] = t_ns

        # WE# rising: the die latches a command (CLE) or an address (ALE)
        if not prev.we_n and pins.we_n and sel:
            self._count("we_rise")
            self._min("tWP", t_ns, last["we_fall"])
            if prev.cle:
                self._min("tCALS", t_ns, last["cle_chg"])
            if prev.ale:
                self._min("tCALS", t_ns, last["ale_chg"])
            self._min("tCS", t_ns, last["ce_fall"])
            if prev.dq is None:
                self._protocol(t_ns, "DQ not driven at WE# rising")
            else:
                self._min("tCAS", t_ns, last["dq_chg"])
            if prev.cle == prev.ale:
                self._protocol(t_ns, "WE# latch needs exactly one of CLE and ALE high "
                                     "(NV-DDR2 data goes with DQS)")
            else:
                kind = "cmd" if prev.cle else "addr"
                byte = prev.dq if prev.dq is not None else 0
                if kind == "addr":
                    last["addr_rise"] = t_ns
                else:
                    self.last_cmd = byte
                    self.ccs_write = byte == 0x85
                    last["e0_rise"] = t_ns if byte == 0xE0 else None
                self.last_kind = kind
                self.latched.append((kind, byte))
            last["we_rise"] = t_ns

        # DQS driven by the controller: write preamble, data edges, postamble
        if pins.dqs != prev.dqs and sel:
            wr = self.wr
            if prev.dqs is None:                    # driven: the write preamble begins
                self._count("wpre")
                self._end_read(t_ns, "DQS driven")
                if pins.dqs != 0:
                    self._protocol(t_ns, "write preamble must drive DQS low")
                if not pins.re_n:
                    self._protocol(t_ns, "DQS driven while RE# is low")
                self.wr = {"start": t_ns, "last_edge": None, "rise": None, "fall": None,
                           "n": 0}
            elif pins.dqs is None:                  # released: the write postamble ends
                self._count("wpst")
                if wr is not None and prev.dqs == 0:
                    self._min("tWPST", t_ns, wr["fall"] if wr["fall"] is not None
                              else wr["start"])
                else:
                    self._protocol(t_ns, "DQS released high (no write postamble)")
                last["wpst_end"] = t_ns
                self.wr = None
            elif wr is not None:                    # a data edge
                rising = pins.dqs == 1
                self._count("dqs_rise" if rising else "dqs_fall")
                if wr["n"] == 0:
                    self._min("tWPRE", t_ns, wr["start"])
                    self._min("tCS", t_ns, last["ce_fall"])
                    if self.last_kind == "addr":
                        self._min("tADL", t_ns, last["addr_rise"])
                        if self.ccs_write:
                            self._min("tCCS", t_ns, last["addr_rise"])
                    self.ccs_write = False
                else:
                    self._min("tDQSL" if rising else "tDQSH", t_ns, wr["last_edge"])
                    self._min("tDSC", t_ns, wr["rise"] if rising else wr["fall"])
                if prev.dq is None:
                    self._protocol(t_ns, "DQ not driven at a DQS edge")
                else:
                    self._min("tDS", t_ns, last["dq_chg"])
                    self.latched.append(("data", prev.dq))
                if pins.cle or pins.ale:
                    self._protocol(t_ns, "CLE or ALE high at a DQS edge")
                self.last_kind = "data"
                wr["n"] += 1
                wr["last_edge"] = t_ns
                wr["rise" if rising else "fall"] = t_ns

        # RE#: read preamble, data edges, postamble
        if pins.re_n != prev.re_n and sel:
            rd = self.rd
            if not pins.re_n and rd is None:        # the read preamble begins
                self._count("re_fall")
                self._count("rpre")
                first_read = last["rd_start"] is None or (
                    last["we_rise"] is not None and last["we_rise"] > last["rd_start"])
                if first_read:
                    self._min("tWHR", t_ns, last["we_rise"])
                    if last["e0_rise"] is not None:
                        self._min("tCCS", t_ns, last["e0_rise"])
                if last["rb_rise"] is not None and self.last_cmd not in (0x70, 0x78) and (
                        last["rd_start"] is None or last["rb_rise"] > last["rd_start"]):
                    self._min("tRR", t_ns, last["rb_rise"])
                self._min("tCR", t_ns, last["ce_fall"])
                self._min("tRPSTH", t_ns, last["rd_end"])
                self._min("tWPSTH", t_ns, last["wpst_end"])
                last["rd_end"] = last["wpst_end"] = None
                if pins.cle or pins.ale:
                    self._protocol(t_ns, "CLE or ALE high at RE# falling")
                if pins.dqs is not None:
                    self._protocol(t_ns, "DQS driven by the controller in a read")
                self.rd = {"start": t_ns, "last_rise": None, "last_fall": None, "n": 0}
                last["rd_start"] = t_ns
                last["e0_rise"] = None
            elif pins.re_n and rd is not None:      # a rising edge: data, or postamble end
                self._count("re_rise")
                if rd["last_fall"] is None:
                    self._min("tRPRE", t_ns, rd["start"])
                    rd["n"] += 1
                elif t_ns - rd["last_fall"] + _EPS >= t.tRPST:
                    # RE# low for the postamble: this edge ends the burst (no data)
                    self.rd = None
                    last["rd_end"] = t_ns
                else:
                    self._min("tRP", t_ns, rd["last_fall"])
                    self._min("tRC", t_ns, rd["last_rise"])
                    rd["n"] += 1
                rd["last_rise"] = t_ns
                last["re_rise"] = t_ns
            elif not pins.re_n and rd is not None:  # a falling edge: data
                self._count("re_fall")
                self._min("tREH", t_ns, rd["last_rise"])
                self._min("tRC", t_ns, rd["last_fall"])
                rd["last_fall"] = t_ns
                rd["n"] += 1

    # -- cocotb front end --

    def sample(self, dut):
        """A snapshot of this die's pins from an `OnfiSdrEngine`-style DUT."""
        ce_n = int(dut.ce_n.value)
        if self.ce is not None:
            ce_n = (ce_n >> self.ce) & 1
        rb_n = int(dut.rb_n.value)
        if self.ce is not None:
            rb_n = (rb_n >> self.ce) & 1
        dq = int(dut.dq_o.value) if int(dut.dq_oe.value) else None
        dqs = None
        if hasattr(dut, "dqs_oe") and int(dut.dqs_oe.value):
            dqs = int(dut.dqs_o.value)
        return OnfiPins(ce_n=ce_n, cle=int(dut.cle.value), ale=int(dut.ale.value),
                        we_n=int(dut.we_n.value), re_n=int(dut.re_n.value), dq=dq, rb_n=rb_n,
                        dqs=dqs)

    async def run(self, dut, clock=None):
        """Sample the pins in the read-only phase after every edge of `clock` (default
        dut.clk) for ever. The engine's pins are registers, so their edge times are exact."""
        from cocotb.triggers import ReadOnly, RisingEdge
        from cocotb.utils import get_sim_time
        clock = dut.clk if clock is None else clock
        while True:
            await RisingEdge(clock)
            await ReadOnly()
            self.observe(get_sim_time("ns"), self.sample(dut))

    def start(self, dut, clock=None):
        import cocotb
        self._task = cocotb.start_soon(self.run(dut, clock))
        return self._task

    def stop(self):
        if self._task is not None:
            self._task.cancel()
            self._task = None


def with_overrides(mode, **ns):
    """`SDR_MODES[mode]` with some values replaced (ns), e.g. tCCS from a parameter page."""
    return replace(_timings(mode), **ns)

