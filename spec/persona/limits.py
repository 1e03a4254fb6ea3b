# SPDX-License-Identifier: BSD-2-Clause
"""The analytic performance model of a persona: host link rates (`PCIE_LANE_MB_S`), the flash
array's and channels' limits of a drive (`flash_limits`), and the pages per second one ONFI
channel sustains from the bus-cycle costs of the engine's timing registers plus the array
times (`analytic_limits` for SDR, used by tests/nand/nand_backend; `analytic_limits_nvddr2`).
"""

from spec.onfi_timing import engine_registers, nvddr2_engine_registers
from spec.pcie_link import GT_S, lane_mb_s

__all__ = ["PCIE_LANE_MB_S", "flash_limits", "analytic_limits", "analytic_limits_nvddr2"]

# per lane and direction, after line coding (spec/pcie_link.py)
PCIE_LANE_MB_S = {g: lane_mb_s(g) for g in GT_S}


def flash_limits(persona, onfi=None):
    """Analytic flash limits of `persona` (a Persona) in MB/s (10^6 B/s of user data):

    - array_read / array_program: every die busy with multi_plane pages per tR / tPROG
      (no bus cost);
    - bus_peak: channels x the ONFI mode's transfer rate;
    - channel_read / channel_program: per channel, the bus cycles of the engine at
      controller.onfi.clock_mhz plus the array times (every page moves page + spare over
      the bus, as a controller with ECC parity in the spare does; the simulated drive's FTL
      moves page data only, sw/ssdlab/bench/limits.py), as
      tests/nand/nand_backend/test_nand_backend_array.py measures (`analytic_limits`, or its
      NV-DDR2 counterpart), summed over the channels;
      `onfi` (an Onfi) replaces controller.onfi, e.g. the SDR mode the RTL runs;
    - host: the link rate per direction;
    - read / program: the smallest of channel and host limits, and which one binds."""
    c = persona.controller
    onfi = onfi or c.onfi
    mp = c.multi_plane
    arr_r = sum(mp * d[3].geometry.page_bytes * 1e9 / d[3].timing.t_r_ns for d in persona.dies)
    arr_p = sum(mp * d[3].geometry.page_bytes * 1e9 / d[3].timing.t_prog_ns
                for d in persona.dies)
    ch = {"read": 0.0, "program": 0.0}
    for channel in range(c.channels):
        dies = [d for d in persona.dies if d[0] == channel]
        for kind, rate in _channel_rates(mp, dies, onfi).items():
            ch[kind] += rate
    out = {"array_read": arr_r / 1e6, "array_program": arr_p / 1e6,
           "bus_peak": c.channels * onfi.mt_s, "channel_read": ch["read"] / 1e6,
           "channel_program": ch["program"] / 1e6, "host": persona.host.link_mb_s}
    for kind in ("read", "program"):
        flash = out[f"channel_{kind}"]
        out[kind] = min(flash, out["host"])
        out[f"{kind}_bound"] = "host link" if out["host"] < flash else "flash"
    return out


def _channel_rates(mp, dies, onfi):
    """User-data bytes/s one channel sustains with these dies, reads and programs: every
    die runs mp (multi_plane) pages per array op; the bus carries one die at a time, in turn."""
    period = 1000.0 / onfi.clock_mhz
    rates = {}
    for kind in ("read", "program"):
        bus_ns = data = array_bound = 0.0
        for d in dies:
            part = d[3]
            g, t = part.geometry, part.timing
            regs = _engine_regs(onfi, period)
            fn = analytic_limits if onfi.interface == "sdr" else analytic_limits_nvddr2
            lim = fn(regs, 1, g.register_bytes, t.t_r_ns, t.t_prog_ns, period_ns=period,
                     column_cycles=g.column_cycles, row_cycles=g.row_cycles)
            _, bus_pages, _, _ = lim[kind]
            one_bus_ns = 1e9 / bus_pages                       # one page's bus phases
            array_ns = t.t_r_ns if kind == "read" else t.t_prog_ns
            bus_ns += mp * one_bus_ns
            data += mp * g.page_bytes
            array_bound += mp * g.page_bytes * 1e9 / (mp * one_bus_ns + array_ns)
        bus_bound = data * 1e9 / bus_ns if bus_ns else 0.0
        rates[kind] = min(bus_bound, array_bound)
    return rates


def _engine_regs(onfi, period, width=16):
    clk = 1000.0 / period
    if onfi.interface == "sdr":
        return engine_registers(onfi.mode, clk, width=width)
    return nvddr2_engine_registers(onfi.mode, clk, width=width)


# -- one channel ------------------------------------------------------------------------------

def analytic_limits(regs, n_ways, length, t_r_ns, t_prog_ns, period_ns=10, *, column_cycles,
                    row_cycles):
    """Pages per second one SDR channel can sustain, for reads and programs, from the bus cycle
    costs the timing registers give (rtl/nand/README.md, onfi_sdr_engine: a write cycle is
    t_wp + max(t_wh, t_clh, t_dh) cycles, a read cycle max(t_rp + t_reh, max(t_rp, t_rea) + 1))
    and the array times. A die cannot start its next array operation before its own bus
    phases are done; the bus carries one die at a time. `length` bytes move per page (data +
    spare); the address has column_cycles + row_cycles cycles.

    Returns {kind: (limit pages/s, bus-bound pages/s, array-bound pages/s, which)}."""
    w = regs["t_wp"] + max(regs["t_wh"], regs["t_clh"], regs["t_dh"])
    r = max(regs["t_rp"] + regs["t_reh"], max(regs["t_rp"], regs["t_rea"]) + 1)
    addr = 1 + column_cycles + row_cycles                # command + address cycles
    # read: 00h-addr-30h; then 06h-addr-E0h, tCCS, `length` data-out cycles
    read_start = (addr + 1) * w
    read_data = (addr + 1) * w + regs["t_ccs"] + length * r
    # program: 80h-addr, tADL, `length` data-in cycles, 10h; then 70h, tWHR, one read cycle
    prog_load = addr * w + regs["t_adl"] + length * w + w
    prog_status = w + regs["t_whr"] + r
    return _limits(read_start + read_data, prog_load + prog_status, n_ways, t_r_ns, t_prog_ns,
                   period_ns)


def analytic_limits_nvddr2(regs, n_ways, length, t_r_ns, t_prog_ns, period_ns=10, *,
                           column_cycles, row_cycles):
    """`analytic_limits` with the NV-DDR2 engine's costs (rtl/nand/README.md,
    onfi_nvddr2_engine): a command/address cycle t_wp + t_wh, a data-in burst
    t_wpre + n t_dqs + t_wpst, a data-out burst t_rpre + n t_re + t_rpst; the status byte is
    a two-byte burst. The engine streams one byte per RE# edge within a burst (its capture
    path keeps up: tests/nand/onfi_nvddr2_engine test_read_rate), so a page's data-out is one
    burst; the scheduler's and channel's own cycles between ops are not counted."""
    w = regs["t_wp"] + regs["t_wh"]
    addr = 1 + column_cycles + row_cycles
    read_start = (addr + 1) * w
    read_data = (addr + 1) * w + regs["t_ccs"] + regs["t_rpre"] + length * regs["t_re"] + \
        regs["t_rpst"]
    prog_load = addr * w + regs["t_adl"] + regs["t_wpre"] + length * regs["t_dqs"] + \
        regs["t_wpst"] + w
    prog_status = w + regs["t_whr"] + regs["t_rpre"] + 2 * regs["t_re"] + regs["t_rpst"]
    return _limits(read_start + read_data, prog_load + prog_status, n_ways, t_r_ns, t_prog_ns,
                   period_ns)


def _limits(read_cycles, prog_cycles, n_ways, t_r_ns, t_prog_ns, period_ns):
    out = {}
    for kind, bus_cycles, array_ns in (("read", read_cycles, t_r_ns),
                                       ("program", prog_cycles, t_prog_ns)):
        bus_ns = bus_cycles * period_ns
        bus_bound = 1e9 / bus_ns
        array_bound = n_ways * 1e9 / (bus_ns + array_ns)
        which = "bus-bound" if bus_bound <= array_bound else "array-bound"
        out[kind] = (min(bus_bound, array_bound), bus_bound, array_bound, which)
    return out
