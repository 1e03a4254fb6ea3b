# SPDX-License-Identifier: BSD-2-Clause
"""One bench run end to end, as `ssdlab bench` and each sweep cell do it: the drive's
configuration (persona, --param overrides, simulation scale), its build (cached; builds of
one configuration are serialised by a file lock, so sweep workers never race), the target,
the suite, then charts and the report.

    out = bench(BenchSpec(suite="qdscan", persona="default", params={"n_channels": 2},
                          scale=profile("quick")))
"""

import datetime
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sw.ssdlab.bench.charts import draw_all
from sw.ssdlab.bench.report import write_report
from sw.ssdlab.bench.runner import run_suite
from sw.ssdlab.bench.scale import Scale
from sw.ssdlab.bench.target import DeviceTarget, SimTarget

__all__ = ["BenchSpec", "bench", "drive_for", "default_out_dir", "ParamError", "parse_params",
           "check_params", "SIM_PARAM_RANGES"]

ROOT = Path(__file__).resolve().parents[3]

# SocConfig fields a user may override, with their legal ranges (soc/ssdlab_soc.py, the
# cores' docstrings); anything else a sweep wants can still be given, typed as a number.
SIM_PARAM_RANGES = {"n_channels": (1, 32), "n_ways": (1, 8), "n_io_queues": (1, 64),
                    "tag_width": (1, 6), "onfi_mode": (0, 5), "t_r_ns": (1, 10**8),
                    "t_prog_ns": (1, 10**8), "t_bers_ns": (1, 10**9),
                    "max_transfer": (8192, 131072), "lbads": (9, 12)}


class ParamError(ValueError):
    """A bad --param (the message names it)."""


def parse_params(items, multi=False):
    """["k=v", ...] -> {k: v} (numbers as numbers). multi: values may be comma lists (a
    sweep's grid) -> {k: [v, ...]}."""
    import yaml
    out = {}
    for item in items or ():
        k, sep, v = item.partition("=")
        k = k.strip()
        if not sep or not k or not v.strip():
            raise ParamError(f"{item!r}: expected key=value")
        vals = [x.strip() for x in v.split(",")] if multi else [v.strip()]
        parsed = []
        for x in vals:
            try:
                parsed.append(yaml.safe_load(x))
            except yaml.YAMLError:
                parsed.append(x)
        out[k] = parsed if multi else parsed[0]
    return out


# Drive parameters that take a word, and their words (SocConfig).
SIM_PARAM_CHOICES = {"nand_model": ("die", "emulator")}


# Build options that are not SocConfig fields (sw/ssdlab/flows/sim.drive_config): booleans.
SIM_BUILD_FLAGS = ("sdr_fallback",)     # an NV-DDR2 persona's channels built SDR


def check_params(params):
    """ParamError naming the first unknown key or out-of-range value."""
    from soc.ssdlab_soc import SocConfig
    known = set(SocConfig().as_dict()) - {"notes", "scale_note", "fw_slot_first", "persona"}
    known |= set(SIM_BUILD_FLAGS)
    for k, v in params.items():
        if k in SIM_BUILD_FLAGS and not isinstance(v, bool):
            raise ParamError(f"{k}={v}: must be true or false")
        if k not in known:
            raise ParamError(f"{k}={v}: unknown drive parameter (known: "
                             f"{', '.join(sorted(known))})")
        if k in SIM_PARAM_RANGES:
            lo, hi = SIM_PARAM_RANGES[k]
            if not isinstance(v, int) or isinstance(v, bool) or not lo <= v <= hi:
                raise ParamError(f"{k}={v}: must be an integer in {lo}..{hi}")
        if k in SIM_PARAM_CHOICES and v not in SIM_PARAM_CHOICES[k]:
            raise ParamError(f"{k}={v}: must be one of {', '.join(SIM_PARAM_CHOICES[k])}")


@dataclass
class BenchSpec:
    suite: str = "review"
    persona: str = "default"
    params: dict = field(default_factory=dict)
    scale: Scale = field(default_factory=Scale)
    profile: str | None = None
    seed: int = 1
    tests: list | None = None
    blocks_per_plane: int | None = None
    pages_per_block: int | None = None
    pgo: bool = False                   # the simulated drive's model built with gcc's PGO
    device: str | None = None
    ioengine: str = "io_uring"
    direct: bool = True
    device_size: int | None = None
    label: str | None = None
    out: str | None = None


def drive_for(spec, log=sys.stderr):
    """(config dict, build directory) of the spec's simulated drive, built if needed."""
    from sw.ssdlab.flows.sim import build_drive, drive_config
    scale = {k: v for k, v in (("blocks_per_plane", spec.blocks_per_plane),
                               ("pages_per_block", spec.pages_per_block)) if v is not None}
    cfg = drive_config(spec.persona, spec.params or None, **scale)
    out = build_drive(cfg, log=log, pgo=spec.pgo)   # one build per configuration at a time
    return json.loads((Path(out) / "config.json").read_text()), out


def link_limits(configuration):
    """The payload limits of the host link the simulated drive of `configuration` (its
    config.json) runs behind (the harness paces it: spec/pcie_link.py), or None."""
    from sw.ssdlab.flows.sim import config_link
    link = config_link(configuration)
    if link is None:
        return None
    return {"read_mb_s": round(link.payload_mb_s("to_host"), 1),
            "write_mb_s": round(link.payload_mb_s("from_host"), 1),
            "describe": link.describe()}


def default_out_dir(spec):
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    name = Path(spec.device).name if spec.device else spec.persona
    return ROOT / "build" / "bench" / f"{name}-{spec.suite}-{stamp}"


def bench(spec, progress=None, log=sys.stderr):
    """Run spec; returns (result, out_dir). Result files, charts and report in out_dir."""
    out = (Path(spec.out) if spec.out else default_out_dir(spec)).resolve()
    out.mkdir(parents=True, exist_ok=True)
    link = None
    if spec.device:
        target = DeviceTarget(spec.device, spec.ioengine, spec.direct, spec.device_size)
        configuration = {"device": spec.device}
    else:
        configuration, build = drive_for(spec, log=log)
        target = SimTarget(build)
        link = link_limits(configuration)
    with target:
        result = run_suite(spec.suite, target, spec.scale, out, seed=spec.seed,
                           persona=spec.persona if not spec.device else Path(spec.device).name,
                           params=spec.params, label=spec.label, profile=spec.profile,
                           configuration=configuration, tests=spec.tests, progress=progress,
                           log=None if progress else log, link=link)
    finish(result, out)
    return result, out


def finish(result, out):
    """Charts and report of a result in out."""
    charts = draw_all([(result.get("label") or result["persona"], result)], out / "charts")
    write_report(result, out, charts)
    return charts
