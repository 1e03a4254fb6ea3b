# SPDX-License-Identifier: BSD-2-Clause
"""A wear-out run on the simulated drive: the drive's NAND worn step by step (pre-cycled parts,
SB_PRECYCLE) until its reads fail, with what the dies flipped, what the ECC corrected, the
read retries and refreshes, the first Unrecovered Read Error the host sees and SMART before
and after (issue 24, "a wear-out run on a scaled drive").

The drive: a persona with a BCH code (default crucial-m500-960: t = 32 on 1 KiB), its ECC
on every channel and dies that flip bits at their part's own rates (spec/nand_errors.py),
scaled (2 channels x 1 way, 16 blocks x 16 pages). The host writes `fill_mib` of a seeded
pattern once; then, per step, every block is pre-cycled up to the step's P/E count, an
optional retention bake ages the data, the host reads the whole fill back (32 KiB reads,
then each 4 KiB unit of a failed read alone) and a QD 1 random read benchmark. Each step
records:

- the raw bit error rate the dies gave (the harness's nand_bit_errors / nand_bits_read of
  the step: the die's truth, read retries' reads at shifted levels included) and, beside it,
  the part's wear rate at the step's P/E count (spec/nand_errors.py) and the analytic chance
  that a codeword's weak cells outnumber t at that rate (binomial tail): the units a read
  must lose;
- the firmware's ECC counters (vendor log C0h): reads with bits corrected, the most bits in a
  codeword, reads again at a retry level and those recovered, refreshed blocks, hardware
  hand-backs;
- the host's view: units read, units that failed (NVMe Unrecovered Read Error), units whose
  data came back wrong (must be none: a failed read is an error, never wrong data), QD 1
  latency percentiles, and SMART (media errors, error log entries, available spare,
  critical warning, percentage used).

All times are simulated. The firmware's erase counts (SMART's Percentage Used) do not see
the pre-cycling, as a drive built from pre-cycled parts would not. The dies' wear errors are
each page's weak cells, the same bits on every read (spec/nand_errors.py), so a read retry
does not recover them: a codeword fails for the host once its weak cells outnumber t, at the
rate the binomial tail beside the figures predicts.
"""

import json
import math
import time
from pathlib import Path

__all__ = ["DEFAULT_STEPS", "WearoutRun", "codeword_fail_probability", "run_wearout"]

DEFAULT_STEPS = (0, 3000, 10000, 20000, 23000, 26000)
PARAMS = {"n_channels": 2, "n_ways": 1, "ecc": "persona", "nand_bit_errors": True}
SCALE = {"blocks_per_plane": 16, "pages_per_block": 16}
BOOT_US = 60000
CHUNK_UNITS = 8                     # host reads of 8 units (32 KiB)
LOG_KEYS = ("ecc_corrected_reads", "ecc_failed_reads", "read_retries", "retry_recovered",
            "refreshed_blocks", "hw_handbacks", "units_lost", "erases", "bad_blocks")
SMART_KEYS = ("critical_warning", "available_spare", "percentage_used", "media_errors",
              "num_err_log_entries")


def codeword_fail_probability(rber, n_bits, t):
    """P(more than t of n_bits bits flipped) at a bit error rate rber: a codeword one read
    cannot correct. The binomial tail, summed in log space from t + 1 (exact to double
    precision for the rates a die gives)."""
    if rber <= 0:
        return 0.0
    if rber >= 1:
        return 1.0
    lp, lq = math.log(rber), math.log1p(-rber)
    mean = n_bits * rber
    hi = min(n_bits, int(mean + 40 * math.sqrt(mean + 1) + t + 40))
    total = 0.0
    for k in range(t + 1, hi + 1):
        total += math.exp(math.lgamma(n_bits + 1) - math.lgamma(k + 1)
                          - math.lgamma(n_bits - k + 1) + k * lp + (n_bits - k) * lq)
    return min(total, 1.0)


class WearoutRun:
    """One run's drive and figures. `drive`: an open sw.ssdlab.drive.Drive of a build made
    by `build()`; `code`: the persona's BchCode."""

    def __init__(self, drive, code, model, fill_mib=4, seed=1, bench_ios=200, log=print):
        from sw.ssdlab.drive import Pattern
        self.d, self.code, self.model, self.log = drive, code, model, log
        info = drive.info()
        self.lba_bytes = info["lba_bytes"]
        self.unit_lbas = 4096 // self.lba_bytes
        self.units = fill_mib * 256
        if self.units * self.unit_lbas > info["ns_blocks"]:
            raise ValueError(f"wearout: fill_mib={fill_mib} exceeds the namespace "
                             f"({info['ns_lbas'] * self.lba_bytes >> 20} MiB)")
        self.pattern = Pattern(f"seed:{seed}")
        self.seed, self.bench_ios = seed, bench_ios
        self.pe = 0
        self.bake_h = 0.0
        self.steps = []
        self.first_ure = None

    def _harness(self):
        s = self.d.stats()
        return int(s.get("nand_bits_read", 0)), int(s.get("nand_bit_errors", 0))

    def fill(self):
        """Write the fill once (128 KiB writes) and flush it."""
        step = 32 * self.unit_lbas
        total = self.units * self.unit_lbas
        for lba in range(0, total, step):
            n = min(step, total - lba)
            self.d.write(lba, self.pattern.data(lba, n, self.lba_bytes))
        self.d.flush()

    def _read_back(self):
        """Read the fill back; returns (units read, units failed, units wrong, (first failed
        LBA, its status, the error log right after it))."""
        from sw.ssdlab.drive import NvmeStatusError
        failed = wrong = 0
        first = None
        u = self.unit_lbas
        for unit in range(0, self.units, CHUNK_UNITS):
            n = min(CHUNK_UNITS, self.units - unit)
            try:
                data = self.d.read(unit * u, n * u)
                wrong += len({lba // u for lba in self.pattern.mismatches(unit * u, data,
                                                                          self.lba_bytes)})
                continue
            except NvmeStatusError:
                pass
            for k in range(unit, unit + n):          # the failed read's units, one by one
                try:
                    data = self.d.read(k * u, u)
                    wrong += int(bool(self.pattern.mismatches(k * u, data, self.lba_bytes)))
                except NvmeStatusError as e:
                    failed += 1
                    if first is None:       # its error log entry is the newest now
                        first = (k * u, e.status, self.error_log())
        return self.units, failed, wrong, first

    def error_log(self, n=4):
        """The first n entries of the Error Information log (01h)."""
        raw = self.d.get_log_page(0x01, 64 * n)
        out = []
        for i in range(n):
            e = raw[64 * i:64 * (i + 1)]
            count = int.from_bytes(e[0:8], "little")
            if not count:
                break
            out.append({"error_count": count, "sqid": int.from_bytes(e[8:10], "little"),
                        "cid": int.from_bytes(e[10:12], "little"),
                        "status": int.from_bytes(e[12:14], "little") >> 1,
                        "lba": int.from_bytes(e[16:24], "little"),
                        "nsid": int.from_bytes(e[24:28], "little")})
        return out

    def smart(self):
        s = self.d.smart_log()
        return {k: s[k] for k in SMART_KEYS}

    def step(self, pe, bake_h=0.0):
        """Pre-cycle every block up to `pe` P/E cycles, bake `bake_h` hours, read everything
        back and run the latency benchmark; returns the step's figures."""
        if pe < self.pe:
            raise ValueError(f"wearout: steps must not decrease ({pe} after {self.pe})")
        if pe > self.pe:
            self.d.precycle(pe - self.pe)
            self.pe = pe
        if bake_h:
            self.d.bake(bake_h)
            self.bake_h += bake_h
        log0, bits0 = self.d.ftl_log(), self._harness()
        t0, w0 = self.d.time_ns(), time.monotonic()
        units, failed, wrong, first = self._read_back()
        bench = self.d.bench(random=True, io_blocks=self.unit_lbas, qd=1,
                             n_ios=self.bench_ios, lba_count=self.units * self.unit_lbas,
                             seed=self.seed + pe)
        log1, bits1 = self.d.ftl_log(), self._harness()
        bits, flips = bits1[0] - bits0[0], bits1[1] - bits0[1]
        rber = flips / bits if bits else 0.0
        c = self.code
        n_bits = 8 * c.data_bytes + c.ecc_bits
        wear = self.model.wear_rber(pe)
        p_cw = codeword_fail_probability(wear, n_bits, c.t)
        per_unit = 4096 // c.data_bytes
        p_unit = 1 - (1 - p_cw) ** per_unit
        row = {
            "pe": pe, "bake_h_total": self.bake_h,
            "rber": rber, "die_bits_read": bits, "die_bit_errors": flips, "model_rber": wear,
            "codeword_fail_p": p_cw, "unit_fail_p": p_unit,
            "units_read": units, "units_failed": failed, "units_wrong": wrong,
            "bench_ios": bench["ios"],
            "bench_errors": bench["errors"],
            "lat_p50_ns": bench["lat_p50_ns"], "lat_p99_ns": bench["lat_p99_ns"],
            "lat_max_ns": bench["lat_max_ns"],
            "ecc_max_bits_so_far": log1["ecc_max_bits"],
            **{k: log1[k] - log0[k] for k in LOG_KEYS},
            "smart": self.smart(),
            "sim_ms": (self.d.time_ns() - t0) / 1e6, "wall_s": time.monotonic() - w0,
        }
        if failed and self.first_ure is None:
            self.first_ure = {"pe": pe, "lba": first[0], "status": first[1],
                              "error_log": first[2]}
        self.steps.append(row)
        self.log(row_text(row))
        return row


def row_text(r):
    return (f"P/E {r['pe']:6d}: RBER {r['rber']:.2e} (part's wear rate {r['model_rber']:.2e}: "
            f"codeword > t {r['codeword_fail_p']:.1e}, {r['units_read'] * r['unit_fail_p']:.1f} "
            f"units expected to fail), {r['units_read']} units read, {r['units_failed']} failed, "
            f"{r['units_wrong']} wrong; {r['ecc_corrected_reads']} corrected reads, max "
            f"{r['ecc_max_bits_so_far']} bits; {r['read_retries']} retry reads, "
            f"{r['retry_recovered']} recovered; {r['refreshed_blocks']} refreshed; QD1 p50 "
            f"{r['lat_p50_ns'] / 1000:.1f} us p99 {r['lat_p99_ns'] / 1000:.1f} us; media "
            f"errors {r['smart']['media_errors']} ({r['wall_s']:.0f} s wall)")


def build(persona="crucial-m500-960", log=None):
    """The run's drive: (build directory, SocConfig)."""
    import sys

    from sw.ssdlab.flows.sim import build_drive, drive_config
    cfg = drive_config(persona, PARAMS, **SCALE)
    return build_drive(cfg, log=log or sys.stderr), cfg


def run_wearout(persona="crucial-m500-960", steps=DEFAULT_STEPS, fill_mib=4, bake_h=0.0,
                seed=1, bench_ios=200, out=None, log=print):
    """Build the drive, run every step, write wearout.json, wearout.md and wearout.png into
    `out` (when given); returns the report dict."""
    from spec.bch import BchCode
    from spec.nand_geometry import PARTS
    from spec.persona.model import load_persona
    from sw.ssdlab.drive import Drive
    from sw.ssdlab.flows.sim import SimDrive
    p = load_persona(persona)
    if p.ecc is None or p.ecc.scheme != "bch":
        raise ValueError(f"wearout: persona {persona}: ecc.scheme must be bch")
    code = BchCode.of_persona(p.ecc)
    steps = list(steps)
    if not steps or any(b < a for a, b in zip(steps, steps[1:], strict=False)) or steps[0] < 0:
        raise ValueError(f"wearout: steps={steps}: P/E counts >= 0, not decreasing")
    build_dir, cfg = build(persona)
    c = cfg.as_dict()
    config = {"persona": persona, "part": c["part"], "channels": c["n_channels"],
              "ways": c["n_ways"], "luns": c["luns"], "planes": c["planes"],
              "blocks_per_plane": c["blocks_per_plane"],
              "pages_per_block": c["pages_per_block"], "page_bytes": c["page_bytes"],
              "code": {"m": code.m, "t": code.t, "data_bytes": code.data_bytes,
                       "parity_bytes": code.room},
              "fill_mib": fill_mib, "bake_h_per_step": bake_h, "seed": seed,
              "bench": f"QD 1 4 KiB random reads x {bench_ios}"}
    log(f"wear-out run: {json.dumps(config)}")
    with SimDrive(build_dir, boot_us=BOOT_US) as sim:
        d = Drive(sim=sim.socket)
        try:
            run = WearoutRun(d, code, PARTS[c["part"]].bit_errors, fill_mib, seed, bench_ios,
                             log)
            smart_before = run.smart()
            run.fill()
            for pe in steps:
                run.step(pe, bake_h)
            report = {"config": config, "smart_before": smart_before,
                      "smart_after": run.smart(), "first_ure": run.first_ure,
                      "steps": run.steps}
        finally:
            d.close()
    if out is not None:
        write_report(report, Path(out))
    return report


def markdown(report):
    cfg = report["config"]
    code = cfg["code"]
    lines = [f"# Wear-out run: {cfg['persona']} ({cfg['part']}), {cfg['channels']} ch x "
             f"{cfg['ways']} way x {cfg['luns']} LUNs, BCH t = {code['t']} on "
             f"{code['data_bytes']} B (GF(2^{code['m']}))", "",
             f"Fill {cfg['fill_mib']} MiB written once, read back whole at every step; "
             f"bake {cfg['bake_h_per_step']} h per step; {cfg['bench']}. Simulated time.", "",
             "| P/E | die RBER | part's wear RBER | P(codeword > t) | units read | failed "
             "(expected) | wrong | corrected reads | max bits | retry reads | recovered | "
             "refreshed | QD1 p50 us | p99 us | media errors |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in report["steps"]:
        lines.append(
            f"| {r['pe']} | {r['rber']:.2e} | {r['model_rber']:.2e} | "
            f"{r['codeword_fail_p']:.1e} | {r['units_read']} | {r['units_failed']} "
            f"({r['units_read'] * r['unit_fail_p']:.1f}) | {r['units_wrong']} | "
            f"{r['ecc_corrected_reads']} | "
            f"{r['ecc_max_bits_so_far']} | {r['read_retries']} | {r['retry_recovered']} | "
            f"{r['refreshed_blocks']} | {r['lat_p50_ns'] / 1000:.1f} | "
            f"{r['lat_p99_ns'] / 1000:.1f} | {r['smart']['media_errors']} |")
    lines += ["", f"SMART before: {report['smart_before']}",
              f"SMART after: {report['smart_after']}",
              f"First Unrecovered Read Error: {report['first_ure']}", ""]
    return "\n".join(lines)


def write_report(report, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    out.mkdir(parents=True, exist_ok=True)
    (out / "wearout.json").write_text(json.dumps(report, indent=1))
    (out / "wearout.md").write_text(markdown(report))
    st = report["steps"]
    pe = [r["pe"] for r in st]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.semilogy(pe, [max(r["rber"], 1e-9) for r in st], "o-", label="die RBER (measured)")
    ax.semilogy(pe, [max(r["model_rber"], 1e-9) for r in st], ":",
                label="the part's wear RBER (model)")
    ax.semilogy(pe, [max(r["units_failed"] / r["units_read"], 1e-9) for r in st], "s-",
                label="units failed / read (host)")
    ax.semilogy(pe, [max(r["unit_fail_p"], 1e-9) for r in st], "--",
                label="P(unit > t in one read), analytic")
    ax.set_xlabel("P/E cycles")
    ax.set_ylim(1e-8, 1.5)
    code = report["config"]["code"]
    ax.set_title(f"{report['config']['persona']}: BCH t={code['t']} on {code['data_bytes']} B")
    ax.legend(fontsize=8)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "wearout.png", dpi=110)
    plt.close(fig)
