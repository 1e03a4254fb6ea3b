# SPDX-License-Identifier: BSD-2-Clause
"""Simulation speed of a stretch of a run on the simulated drive: cycles per wall second,
simulated time per wall second, simulated I/Os per wall second and the share of cycles the
harness skipped by fast-forward (sim/harness/README.md); and the firmware's instructions
(the CPU's minstret: issue 21's "0 per command on the hardware path"). Built from two
readings of the harness's statistics (`Transport.stats()`, `Drive.stats()`: `cycles`,
`sim_ps`, `ff_skipped` where the harness fast-forwards, `fw_instret` where the build counts)
around the stretch and the host's wall time of it. A device has no such figures: `mark`
returns None and `speed` passes it on."""

__all__ = ["mark", "speed", "add", "text"]


def mark(stats):
    """The counters of one reading of the harness statistics (None for a device)."""
    if not stats or "cycles" not in stats:
        return None
    instret = int(stats.get("fw_instret", -1))
    return {"cycles": int(stats["cycles"]), "sim_ps": int(stats.get("sim_ps", 0)),
            "ff_skipped": int(stats.get("ff_skipped", 0)),
            "fw_instret": instret if instret >= 0 else None}


def speed(before, after, wall_s, ios=0):
    """The figures of the stretch between two marks that took wall_s host seconds and
    completed `ios` I/Os; None when either mark is None."""
    if before is None or after is None:
        return None
    d = {k: after[k] - before[k] for k in ("cycles", "sim_ps", "ff_skipped")}
    a, b = before.get("fw_instret"), after.get("fw_instret")
    fw = b - a if a is not None and b is not None else None
    return _figures(d["cycles"], d["sim_ps"], d["ff_skipped"], wall_s, ios, fw)


def _figures(cycles, sim_ps, skipped, wall_s, ios, fw_instr=None):
    per = (lambda n: n / wall_s) if wall_s > 0 else (lambda n: None)
    return {"cycles": cycles, "sim_ns": sim_ps // 1000, "ff_skipped": skipped,
            "wall_s": round(wall_s, 3), "ios": ios,
            "cycles_per_s": per(cycles), "sim_us_per_s": per(sim_ps / 1e6),
            "ios_per_s": per(ios),
            "ff_skipped_pct": 100.0 * skipped / cycles if cycles else 0.0,
            "fw_instr": fw_instr,
            "fw_instr_per_io": fw_instr / ios if fw_instr is not None and ios else None}


def add(speeds):
    """The figures of several stretches taken together (Nones are left out; None if all)."""
    s = [x for x in speeds if x]
    if not s:
        return None
    fw = [x.get("fw_instr") for x in s]
    return _figures(sum(x["cycles"] for x in s), 1000 * sum(x["sim_ns"] for x in s),
                    sum(x["ff_skipped"] for x in s), sum(x["wall_s"] for x in s),
                    sum(x["ios"] for x in s), None if None in fw else sum(fw))


def text(s):
    """One line: '412 K cycles/s, 3.30 ms simulated per wall s, 35.2 I/Os per wall s,
    0.0 % skipped'."""
    if not s or s["cycles_per_s"] is None:
        return "-"
    out = (f"{s['cycles_per_s'] / 1e3:,.0f} K cycles/s, {s['sim_us_per_s'] / 1e3:,.2f} ms "
           "simulated per wall s")
    if s["ios"]:
        out += f", {s['ios_per_s']:,.1f} I/Os per wall s"
    out += f", {s['ff_skipped_pct']:.1f} % skipped"
    if s.get("fw_instr_per_io") is not None:
        out += f", {s['fw_instr_per_io']:,.1f} firmware instructions per I/O"
    return out
