# SPDX-License-Identifier: BSD-2-Clause
"""Drive personas: what a drive is built of, loaded from `personas/<name>.yaml` and checked.

- `load_persona(name_or_path) -> Persona`: a shipped persona by name (`intel-750-400g`) or a
  YAML file by path. A bad file raises `PersonaError`, whose message names the file, the field
  path and the legal range or choices, e.g.
  "personas/x.yaml: controller.channels = 40: out of range 1..64". Unknown and missing fields
  are errors too; every error of a file is reported at once.
- `Persona`: the validated inputs as dataclasses, NAND parts resolved from
  `spec/nand_geometry.PARTS`, plus derived values: die count, raw and user
  capacity, over-provisioning, analytic flash-array and channel-bus limits, host link rate.
- `Persona.scaled(capacity_factor=F | blocks_per_plane=N)`: the same drive with fewer blocks
  per plane; per-die geometry, timings and the channel/way topology stay; `Persona.scale`
  records it and `scale_note` says it in words for every report.
- `Persona.rtl_params()`: parameters and run-time register values for `rtl/nand/nand_backend`
  and `rtl/nvme/nvme_controller`; `PersonaError` when the persona needs more than they do.
- `SCHEMA`: every field, its type, unit and range (personas/README.md prints it).
- `analytic_limits()`: pages per second one ONFI SDR channel sustains (bus-cycle costs of the
  engine's timing registers plus array times), used by tests/nand/nand_array.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from spec.nand_geometry import PARTS, NandPart
from spec.onfi_timing import (
    NVDDR2_MODES,
    SDR_MODES,
    engine_registers,
    nvddr2_engine_registers,
)

__all__ = ["load_persona", "persona_names", "persona_path", "Persona", "PersonaError", "SCHEMA",
           "Scale", "analytic_limits", "analytic_limits_nvddr2", "schema_markdown",
           "PERSONA_DIR", "DEFAULT_PERSONA", "display_path", "idema_lba_count"]

REPO = Path(__file__).resolve().parents[1]
PERSONA_DIR = REPO / "personas"
DEFAULT_PERSONA = "default"
SCHEMA_VERSION = 1


class PersonaError(ValueError):
    """A persona that cannot be used: `messages` are "<field path> = <value>: <why>" lines,
    `source` the file (or persona name) they belong to."""

    def __init__(self, source, messages):
        self.source = str(source)
        self.messages = list(messages)
        super().__init__("\n".join(f"{self.source}: {m}" for m in self.messages))


# -- schema ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class F:
    """One leaf field: kind int | number | str | bool | list[str] | range | choice."""
    kind: str
    doc: str
    unit: str = ""
    lo: float | None = None
    hi: float | None = None
    choices: tuple = ()
    nullable: bool = False
    power_of_two: bool = False

    def describe(self):
        if self.choices:
            legal = ", ".join(str(c) for c in self.choices)
        elif self.lo is not None:
            legal = f"{_num(self.lo)}..{_num(self.hi)}"
            if self.power_of_two:
                legal = f"power of two {legal}"
        else:
            legal = {"str": "text", "bool": "true, false", "list[str]": "list of text",
                     "range": "list or ranges (\"0-5\", [6, 7])"}.get(self.kind, "")
        if self.nullable:
            legal += " or null"
        return legal


def _num(v):
    return str(int(v)) if float(v).is_integer() else str(v)


_ASSUMPTION = {"field": F("str", "field path of the assumed value, e.g. controller.onfi.mode"),
               "reason": F("str", "why this value was chosen")}
_GROUP = {
    "part": F("str", "NAND part, a key of spec/nand_geometry.PARTS",
              choices=()),
    "channels": F("range", "channels this group's dies sit on (0-based)"),
    "ways": F("range", "ways (chip enables) on those channels (0-based)"),
}

SCHEMA = {
    "schema": F("int", "persona file format version", lo=1, hi=1),
    "name": F("str", "persona name; equals the file name without .yaml"),
    "description": F("str", "the drive in one line"),
    "sources": F("list[str]", "where the values come from (personas.md section, datasheets)"),
    "host": {
        "interface": F("choice", "host protocol of the real drive (the simulated drive is "
                       "always NVMe; sata is modelled as a capped link)",
                       choices=("nvme", "sata")),
        "pcie_gen": F("int", "PCIe generation (nvme; null for sata)", lo=1, hi=5, nullable=True),
        "pcie_lanes": F("choice", "PCIe lanes (nvme; null for sata)", choices=(1, 2, 4, 8, 16),
                        nullable=True),
        "sata_mb_s": F("int", "link cap in MB/s (10^6 B/s) (sata; null for nvme)", unit="MB/s",
                       lo=1, hi=600, nullable=True),
        "io_queues": F("int", "I/O queue pairs (SATA NCQ: 1)", lo=1, hi=65535),
        "queue_depth": F("int", "entries per I/O queue (SATA NCQ: 32)", lo=2, hi=65536),
        "max_transfer_kib": F("int", "largest command (NVMe MDTS)", unit="KiB", lo=4,
                              hi=16384, power_of_two=True),
        "lba_bytes": F("choice", "logical block size", unit="B", choices=(512, 4096)),
    },
    "controller": {
        "channels": F("int", "NAND channels", lo=1, hi=64),
        "ways_per_channel": F("int", "chip enables (targets) per channel", lo=1, hi=16),
        "dies_per_way": F("int", "dies (LUNs) per target", lo=1, hi=8),
        "multi_plane": F("choice", "planes one operation addresses (<= the part's planes)",
                         choices=(1, 2, 4, 8)),
        "clock_mhz": F("number", "controller core clock; null when not published",
                       unit="MHz", lo=1, hi=5000, nullable=True),
        "onfi": {
            "interface": F("choice", "NAND bus interface (Toggle DDR is modelled as nv-ddr2)",
                           choices=("sdr", "nv-ddr2")),
            "mode": F("int", "ONFI timing mode: sdr 0..5, nv-ddr2 0..7", lo=0, hi=7),
            "clock_mhz": F("number", "bus-engine clock the channel limit is computed at",
                           unit="MHz", lo=10, hi=1000),
        },
    },
    "nand": {
        "groups": [_GROUP],
    },
    "capacity": {
        "user_gb": F("number", "user capacity; LBA count by IDEMA LBA1-03 from 50 GB up",
                     unit="GB (10^9 B)", lo=1, hi=1_000_000),
    },
    "dram": {
        "mib": F("int", "DRAM size (0: DRAM-less)", unit="MiB", lo=0, hi=1 << 20),
        "type": F("str", "DRAM type, e.g. DDR3-1600; null when not published", nullable=True),
    },
    "slc_cache": {
        "policy": F("choice", "SLC write cache: none, static (reserved), dynamic (free space)",
                    choices=("none", "static", "dynamic")),
        "size_gb": F("number", "cache size in SLC bytes (null for none)", unit="GB (10^9 B)",
                     lo=0.001, hi=10_000, nullable=True),
    },
    "ecc": {
        "scheme": F("choice", "ECC code", choices=("bch", "ldpc")),
        "codeword_bytes": F("choice", "data bytes per codeword", unit="B",
                            choices=(512, 1024, 2048, 4096)),
        "correctable_bits": F("int", "bits corrected per codeword (bch); null for ldpc",
                              lo=1, hi=1024, nullable=True),
        "parity_bytes": F("int", "ECC parity bytes per codeword, stored in the spare area",
                          unit="B", lo=1, hi=4096),
    },
    "parity": {
        "scheme": F("choice", "die-level parity: none, or die-raid5 (one die-page of parity "
                    "per stripe, a whole die can fail)", choices=("none", "die-raid5")),
        "stripe_dies": F("int", "dies per parity stripe, parity included (null for none)",
                         lo=2, hi=4096, nullable=True),
    },
    "power_loss_protection": F("bool", "capacitors hold up the drive to flush its buffers"),
    "endurance": {
        "gb_per_day": F("number", "rated writes per day; null when not given", unit="GB/day",
                        lo=0.001, hi=1e6, nullable=True),
        "years": F("number", "warranty period of that rating; null when not given",
                   unit="years", lo=0.1, hi=20, nullable=True),
    },
    "assumptions": [_ASSUMPTION],
}

# A persona made of another: `base` (a shipped persona) scaled down, e.g. personas/default.yaml.
DERIVED_SCHEMA = {
    "schema": SCHEMA["schema"],
    "name": SCHEMA["name"],
    "description": SCHEMA["description"],
    "base": F("str", "the shipped persona this one scales"),
    "scale": {
        "capacity_factor": F("number", "raw capacity x F (null: use blocks_per_plane)",
                             lo=1e-9, hi=1, nullable=True),
        "blocks_per_plane": F("int", "blocks per plane of every die (null: use "
                              "capacity_factor)", lo=1, hi=1 << 20, nullable=True),
    },
    "reason": F("str", "why this base and this scale"),
}


def _leaf_paths(schema, prefix=""):
    """(path, F) of every leaf; list items as `path[]`."""
    for key, spec in schema.items():
        path = f"{prefix}{key}"
        if isinstance(spec, F):
            yield path, spec
        elif isinstance(spec, list):
            yield from _leaf_paths(spec[0], f"{path}[].")
        else:
            yield from _leaf_paths(spec, f"{path}.")


def _all_paths(schema, prefix=""):
    """Every field path a persona has, sections included (for `assumptions[].field`)."""
    for key, spec in schema.items():
        path = f"{prefix}{key}"
        yield path
        if isinstance(spec, list):
            yield from _all_paths(spec[0], f"{path}[].")
        elif isinstance(spec, dict):
            yield from _all_paths(spec, f"{path}.")


def schema_markdown():
    """The field table of personas/README.md (generated here, checked by the tests)."""
    rows = ["| field | unit | legal values | meaning |", "|---|---|---|---|"]
    for path, spec in _leaf_paths(SCHEMA):
        legal = spec.describe() if path != "nand.groups[].part" else "a PARTS key"
        rows.append(f"| `{path}` | {spec.unit} | {legal} | {spec.doc} |")
    return "\n".join(rows)


# -- checking --------------------------------------------------------------------------------

class _Checker:
    def __init__(self):
        self.errors = []

    def err(self, path, value, why):
        shown = "(missing)" if value is _MISSING else repr(value) if isinstance(value, str) \
            else value
        self.errors.append(f"{path} = {shown}: {why}")

    def leaf(self, path, spec, value):
        """The checked value, or None (an error recorded)."""
        if value is None:
            if spec.nullable:
                return None
            self.err(path, value, f"must not be null ({spec.describe()})")
            return None
        kind = spec.kind
        if kind in ("int", "choice", "number"):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                    kind == "int" and not isinstance(value, int)):
                if kind == "choice" and isinstance(value, str):
                    pass
                else:
                    want = "an integer" if kind == "int" else "a number"
                    if kind == "choice":
                        want = f"one of {spec.describe()}"
                    self.err(path, value, f"wrong type: must be {want}")
                    return None
            if kind == "choice":
                if value not in spec.choices:
                    self.err(path, value, f"not one of {spec.describe()}")
                    return None
                return value
            if kind == "number" and isinstance(value, float) and not math.isfinite(value):
                self.err(path, value, "must be a finite number")
                return None
            if spec.power_of_two and (value <= 0 or int(value) & (int(value) - 1)):
                self.err(path, value, f"must be a {spec.describe()}")
                return None
            if not spec.lo <= value <= spec.hi:
                self.err(path, value, f"out of range {_num(spec.lo)}..{_num(spec.hi)}")
                return None
            return value
        if kind == "str":
            if not isinstance(value, str) or not value.strip():
                self.err(path, value, "wrong type: must be non-empty text")
                return None
            return value
        if kind == "bool":
            if not isinstance(value, bool):
                self.err(path, value, "wrong type: must be true or false")
                return None
            return value
        if kind == "list[str]":
            if not isinstance(value, list) or not value or not all(
                    isinstance(v, str) and v.strip() for v in value):
                self.err(path, value, "wrong type: must be a non-empty list of text")
                return None
            return value
        if kind == "range":
            return self.index_range(path, value)
        raise AssertionError(kind)

    def index_range(self, path, value):
        """0-based indices from 3, "0-5", "0-5,8" or [0, 1, "4-6"]; sorted tuple."""
        items = value if isinstance(value, list) else [value]
        out = []
        for item in items:
            if isinstance(item, int) and not isinstance(item, bool) and item >= 0:
                out.append(item)
                continue
            if isinstance(item, str):
                ok = True
                for part in item.split(","):
                    m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
                    if not m or (m[2] is not None and int(m[2]) < int(m[1])):
                        ok = False
                        break
                    out.extend(range(int(m[1]), int(m[2] or m[1]) + 1))
                if ok:
                    continue
            self.err(path, value, "wrong type: must be an index, \"a-b\" ranges or a list of "
                     "them (0-based)")
            return None
        if not out:
            self.err(path, value, "must name at least one index")
            return None
        if len(set(out)) != len(out):
            self.err(path, value, "names an index twice")
            return None
        return tuple(sorted(out))

    def section(self, path, schema, value):
        """Check a mapping against `schema`; returns {key: checked value} (None where bad)."""
        if not isinstance(value, dict):
            self.err(path or "(top level)", value, "wrong type: must be a mapping of fields")
            return None
        out = {}
        prefix = f"{path}." if path else ""
        for key in value:
            if key not in schema:
                close = [k for k in schema if _similar(str(key), k)]
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                self.err(f"{prefix}{key}", value[key],
                         f"unknown field{hint}; known: {', '.join(schema)}")
        for key, spec in schema.items():
            p = f"{prefix}{key}"
            if key not in value:
                self.err(p, _MISSING, "missing field")
                out[key] = None
                continue
            v = value[key]
            if isinstance(spec, F):
                out[key] = self.leaf(p, spec, v)
            elif isinstance(spec, list):
                if not isinstance(v, list) or not v:
                    self.err(p, v, "wrong type: must be a non-empty list of mappings")
                    out[key] = None
                else:
                    out[key] = [self.section(f"{p}[{i}]", spec[0], item)
                                for i, item in enumerate(v)]
            else:
                out[key] = self.section(p, spec, v)
        return out


_MISSING = object()


def _similar(a, b):
    """A likely typo: same letters give or take one edit."""
    if abs(len(a) - len(b)) > 2:
        return False
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] <= 2


# -- the persona ---------------------------------------------------------------------------

def idema_lba_count(user_gb, lba_bytes):
    """LBAs of a drive sold as `user_gb` GB: IDEMA LBA1-03 from 50 GB up
    (97 696 368 + 1 953 504 x (GB - 50) sectors of 512 B, an eighth of that for 4 KiB LBAs),
    else user_gb x 10^9 bytes rounded down to whole LBAs."""
    if user_gb >= 50:
        sectors = 97_696_368 + round(1_953_504 * (user_gb - 50))
        return sectors if lba_bytes == 512 else sectors // 8
    return int(user_gb * 10**9) // lba_bytes


PCIE_LANE_MB_S = {1: 250.0, 2: 500.0, 3: 8000 * 128 / 130 / 8, 4: 16000 * 128 / 130 / 8,
                  5: 32000 * 128 / 130 / 8}  # per lane and direction, after line coding


@dataclass(frozen=True)
class Host:
    interface: str
    pcie_gen: int | None
    pcie_lanes: int | None
    sata_mb_s: int | None
    io_queues: int
    queue_depth: int
    max_transfer_kib: int
    lba_bytes: int

    @property
    def link_mb_s(self):
        """Link rate per direction in MB/s (10^6 B/s): PCIe after line coding (before TLP
        overhead), or the SATA cap."""
        if self.interface == "sata":
            return float(self.sata_mb_s)
        return PCIE_LANE_MB_S[self.pcie_gen] * self.pcie_lanes

    def describe(self):
        if self.interface == "sata":
            return f"SATA, link capped at {self.sata_mb_s} MB/s"
        return f"NVMe over PCIe {self.pcie_gen}.0 x{self.pcie_lanes} ({self.link_mb_s:.0f} MB/s)"


@dataclass(frozen=True)
class Onfi:
    interface: str
    mode: int
    clock_mhz: float

    @property
    def mt_s(self):
        """Transfers per second on the 8-bit bus, millions (= MB/s peak)."""
        if self.interface == "sdr":
            return 1000.0 / SDR_MODES[self.mode].tRC
        return 2000.0 / NVDDR2_MODES[self.mode].tRC


@dataclass(frozen=True)
class Controller:
    channels: int
    ways_per_channel: int
    dies_per_way: int
    multi_plane: int
    clock_mhz: float | None
    onfi: Onfi


@dataclass(frozen=True)
class DieGroup:
    """Dies of one part on channels x ways (x controller.dies_per_way LUNs each)."""
    part_name: str
    part: NandPart
    channels: tuple
    ways: tuple

    def slots(self):
        return [(c, w) for c in self.channels for w in self.ways]


@dataclass(frozen=True)
class Dram:
    mib: int
    type: str | None


@dataclass(frozen=True)
class SlcCache:
    policy: str
    size_gb: float | None


@dataclass(frozen=True)
class Ecc:
    scheme: str
    codeword_bytes: int
    correctable_bits: int | None
    parity_bytes: int


@dataclass(frozen=True)
class Parity:
    scheme: str
    stripe_dies: int | None


@dataclass(frozen=True)
class Endurance:
    gb_per_day: float | None
    years: float | None


@dataclass(frozen=True)
class Assumption:
    field: str
    reason: str


@dataclass(frozen=True)
class Scale:
    """How a persona was scaled: the factor on raw capacity actually reached and the blocks
    per plane of each part, full size -> scaled."""
    capacity_factor: float
    blocks_per_plane: dict
    requested: str
    row_cycles: dict = field(default_factory=dict)

    def note(self):
        bpp = ", ".join(f"{p} {a} -> {b}" for p, (a, b) in self.blocks_per_plane.items())
        rows = "".join(f"; {p}: {a} -> {b} row address cycles"
                       for p, (a, b) in self.row_cycles.items() if a != b)
        return (f"scaled ({self.requested}): raw capacity x {self.capacity_factor:.6g}, blocks "
                f"per plane {bpp}{rows}; page geometry, timings and topology as the full drive")


@dataclass(frozen=True)
class Persona:
    name: str
    description: str
    sources: tuple
    host: Host
    controller: Controller
    groups: tuple
    user_gb: float
    dram: Dram
    slc_cache: SlcCache
    ecc: Ecc
    parity: Parity
    power_loss_protection: bool
    endurance: Endurance
    assumptions: tuple
    path: Path | None = None
    scale: Scale | None = None
    full: Persona | None = field(default=None, repr=False, compare=False)
    based_on: str | None = None

    # -- topology and capacity --

    @property
    def dies(self):
        """(channel, way, lun, part) of every die, by channel then way."""
        out = []
        for g in self.groups:
            for c, w in g.slots():
                for lun in range(self.controller.dies_per_way):
                    out.append((c, w, lun, g.part))
        return sorted(out, key=lambda d: d[:3])

    @property
    def die_count(self):
        return len(self.dies)

    @property
    def parts(self):
        """{part name: die count}."""
        out = {}
        for g in self.groups:
            out[g.part_name] = out.get(g.part_name, 0) + len(g.slots()) * \
                self.controller.dies_per_way
        return out

    @property
    def raw_bytes(self):
        """Data bytes of every die (spare areas excluded)."""
        return sum(d[3].geometry.lun_bytes for d in self.dies)

    @property
    def lba_count(self):
        if self.full is not None:
            full = self.full
            return int(full.lba_count * self.raw_bytes / full.raw_bytes)
        return idema_lba_count(self.user_gb, self.host.lba_bytes)

    @property
    def user_bytes(self):
        return self.lba_count * self.host.lba_bytes

    @property
    def exposed_pct(self):
        """User capacity as a share of raw, %."""
        return 100.0 * self.user_bytes / self.raw_bytes

    @property
    def op_pct(self):
        """Over-provisioning (raw - user) / user, %."""
        return 100.0 * (self.raw_bytes - self.user_bytes) / self.user_bytes

    @property
    def parity_bytes(self):
        if self.parity.scheme == "none":
            return 0
        return self.raw_bytes // self.parity.stripe_dies

    @property
    def slc_cache_bytes(self):
        """SLC cache size (SLC bytes), scaled with the drive."""
        if self.slc_cache.policy == "none":
            return 0
        size = int(self.slc_cache.size_gb * 10**9)
        if self.full is not None:
            size = int(size * self.scale.capacity_factor)
        return size

    @property
    def slc_reserved_bytes(self):
        """Native capacity a static SLC cache takes out (size x bits per cell)."""
        if self.slc_cache.policy != "static":
            return 0
        bits = max(g.part.geometry.bits_per_cell for g in self.groups)
        return self.slc_cache_bytes * bits

    @property
    def scale_note(self):
        return self.scale.note() if self.scale else "full size (not scaled)"

    # -- limits --

    def flash_limits(self, onfi=None):
        """Analytic flash limits in MB/s (10^6 B/s of user data):

        - array_read / array_program: every die busy with multi_plane pages per tR / tPROG
          (no bus cost);
        - bus_peak: channels x the ONFI mode's transfer rate;
        - channel_read / channel_program: per channel, the bus cycles of the engine at
          controller.onfi.clock_mhz plus the array times, as tests/nand/nand_array measures
          (`analytic_limits`, or its NV-DDR2 counterpart), summed over the channels;
          `onfi` (an Onfi) replaces controller.onfi, e.g. the SDR mode the RTL runs;
        - host: the link rate per direction;
        - read / program: the smallest of channel and host limits, and which one binds."""
        c = self.controller
        onfi = onfi or c.onfi
        mp = c.multi_plane
        arr_r = sum(mp * d[3].geometry.page_bytes * 1e9 / d[3].timing.t_r_ns for d in self.dies)
        arr_p = sum(mp * d[3].geometry.page_bytes * 1e9 / d[3].timing.t_prog_ns
                    for d in self.dies)
        ch = {"read": 0.0, "program": 0.0}
        for channel in range(c.channels):
            dies = [d for d in self.dies if d[0] == channel]
            for kind, rate in self._channel_rates(dies, onfi).items():
                ch[kind] += rate
        out = {"array_read": arr_r / 1e6, "array_program": arr_p / 1e6,
               "bus_peak": c.channels * onfi.mt_s, "channel_read": ch["read"] / 1e6,
               "channel_program": ch["program"] / 1e6, "host": self.host.link_mb_s}
        for kind in ("read", "program"):
            flash = out[f"channel_{kind}"]
            out[kind] = min(flash, out["host"])
            out[f"{kind}_bound"] = "host link" if out["host"] < flash else "flash"
        return out

    def _channel_rates(self, dies, onfi):
        """User-data bytes/s one channel sustains with these dies, reads and programs: every
        die runs multi_plane pages per array op; the bus carries one die at a time, in turn."""
        mp = self.controller.multi_plane
        period = 1000.0 / onfi.clock_mhz
        rates = {}
        for kind in ("read", "program"):
            bus_ns = data = array_bound = 0.0
            for d in dies:
                part = d[3]
                g, t = part.geometry, part.timing
                regs = self._engine_regs(onfi, period)
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

    @staticmethod
    def _engine_regs(onfi, period, width=16):
        clk = 1000.0 / period
        if onfi.interface == "sdr":
            return engine_registers(onfi.mode, clk, width=width)
        return nvddr2_engine_registers(onfi.mode, clk, width=width)

    # -- scaling --

    def scaled(self, capacity_factor=None, blocks_per_plane=None):
        """This drive with fewer blocks per plane: raw capacity x capacity_factor (each part's
        blocks per plane rounded, at least 1), or exactly `blocks_per_plane` blocks per plane
        on every die. Factors are relative to the full-size drive (scaling a scaled persona
        starts again from full size). User capacity and a static SLC cache keep their share
        of raw capacity; page geometry, timings, channels, ways and dies are unchanged."""
        full = self.full or self
        src = f"{full.name} (scaled)"
        if (capacity_factor is None) == (blocks_per_plane is None):
            raise PersonaError(src, ["scale: give exactly one of capacity_factor, "
                                     "blocks_per_plane"])
        bpp_full = {g.part_name: g.part.geometry.blocks_per_plane for g in full.groups}
        if capacity_factor is not None:
            if isinstance(capacity_factor, bool) or not isinstance(
                    capacity_factor, (int, float)) or not 0 < capacity_factor <= 1:
                raise PersonaError(src, [f"scale.capacity_factor = {capacity_factor!r}: out "
                                         f"of range (0, 1]"])
            new = {p: max(1, round(n * capacity_factor)) for p, n in bpp_full.items()}
            requested = f"capacity factor {capacity_factor:g}"
        else:
            hi = min(bpp_full.values())
            if isinstance(blocks_per_plane, bool) or not isinstance(blocks_per_plane, int) or \
                    not 1 <= blocks_per_plane <= hi:
                raise PersonaError(src, [f"scale.blocks_per_plane = {blocks_per_plane!r}: out "
                                         f"of range 1..{hi}"])
            new = {p: blocks_per_plane for p in bpp_full}
            requested = f"{blocks_per_plane} blocks per plane"
        groups = tuple(replace(g, part=replace(g.part, geometry=replace(
            g.part.geometry, blocks_per_plane=new[g.part_name]))) for g in full.groups)
        raw = sum(g.part.geometry.lun_bytes * len(g.slots()) for g in groups) * \
            full.controller.dies_per_way
        factor = raw / full.raw_bytes
        scale = Scale(capacity_factor=factor,
                      blocks_per_plane={p: (bpp_full[p], new[p]) for p in bpp_full},
                      requested=requested,
                      row_cycles={g.part_name: (f.part.geometry.row_cycles,
                                                g.part.geometry.row_cycles)
                                  for f, g in zip(full.groups, groups, strict=True)})
        out = replace(full, groups=groups, scale=scale, full=full)
        if out.lba_count < 1:
            raise PersonaError(src, [f"scale: {requested} leaves no user capacity"])
        return out

    # -- RTL --

    def rtl_params(self, clk_mhz=100.0, sdr_fallback=False, queue_depth=4, timer_width=8):
        """Parameters and register values for the RTL cores, or PersonaError naming each field
        the RTL cannot do:

        - "nand_backend": NandBackend(**...) (rtl/nand/nand_backend.py): n_channels (1..32),
          n_ways (1..8), queue_depth, max_planes (1..4), max_len (page + spare), row_cycles,
          col_cycles, timer_width;
        - "geometry": the `geometry` register {page_bits, block_bits, plane_bits};
        - "timing": the SDR engine's `timing` registers at clk_mhz (onfi_timing);
          "onfi": {interface, mode, clk_mhz} actually used;
        - "nvme_controller": NvmeController's n_io_queues (1..64), max_transfer, lbads, mqes;
        - "host_link": what the host model must cap (interface, MB/s);
        - "substitutions" (what differs from the drive) and "notes".
        The back end is built of SDR channels only: an nv-ddr2 persona needs sdr_fallback=True
        (then the part's fastest SDR mode, recorded in "substitutions")."""
        c = self.controller
        src = display_path(self.path) if self.path else self.name
        errs, subs, notes = [], [], []

        def need(ok, path, value, why):
            if not ok:
                errs.append(f"{path} = {value}: {why}")

        need(c.channels <= 32, "controller.channels", c.channels,
             "nand_backend supports 1..32 channels (rtl/nand/nand_backend.py)")
        need(c.ways_per_channel <= 8, "controller.ways_per_channel", c.ways_per_channel,
             "nand_backend supports 1..8 ways (n_ways)")
        need(c.dies_per_way <= 4, "controller.dies_per_way", c.dies_per_way,
             "the flash op's lun field has 2 bits: 1..4 dies per way")
        need(c.multi_plane <= 4, "controller.multi_plane", c.multi_plane,
             "nand_backend max_planes is 1..4")
        kinds = {(g.part.geometry, g.part.timing) for g in self.groups}
        need(len(kinds) == 1, "nand.groups", f"[{', '.join(self.parts)}]",
             "nand_backend shares one geometry and timing register set: one part type per "
             "drive")
        g = self.groups[0].part.geometry
        part = self.groups[0].part
        need(g.pages_per_block <= 4096, "nand.groups[0].part", self.groups[0].part_name,
             f"{g.pages_per_block} pages per block: the flash op's page field holds 0..4095")
        need(g.blocks_per_lun <= 65536, "nand.groups[0].part", self.groups[0].part_name,
             f"{g.blocks_per_lun} blocks per LUN: the flash op's block field holds 0..65535")
        need(g.register_bytes <= 65536, "nand.groups[0].part", self.groups[0].part_name,
             f"page + spare {g.register_bytes} B: max_len is 1..65536")
        need(2 <= g.row_cycles <= 4, "nand.groups[0].part", self.groups[0].part_name,
             f"{g.row_cycles} row address cycles: the channel does 2..4")
        onfi = c.onfi
        mode = onfi.mode
        if onfi.interface == "nv-ddr2":
            if not sdr_fallback:
                errs.append("controller.onfi.interface = 'nv-ddr2': nand_backend's channels "
                            "are SDR builds (no with_nvddr2); use sdr_fallback=True "
                            "(CLI --sdr-fallback) to run the drive in SDR")
            mode = part.sdr_modes.bit_length() - 1
            subs.append(f"controller.onfi: nv-ddr2 mode {onfi.mode} ({onfi.mt_s:.0f} MT/s) -> "
                        f"sdr mode {mode} ({1000 / SDR_MODES[mode].tRC:.0f} MT/s): nand_backend "
                        f"is SDR only")
        h = self.host
        need(h.io_queues <= 64, "host.io_queues", h.io_queues,
             "NvmeController n_io_queues is 1..64")
        need(h.queue_depth <= 4096, "host.queue_depth", h.queue_depth,
             "NvmeController mqes is 1..4095 (queue_depth - 1)")
        need(h.max_transfer_kib >= 8, "host.max_transfer_kib", h.max_transfer_kib,
             "NvmeController max_transfer is 8 KiB..16 MiB")
        timing = None
        try:
            timing = engine_registers(mode, clk_mhz, width=timer_width)
        except ValueError as e:
            errs.append(f"controller.onfi.mode = {mode}: {e}")
        if errs:
            raise PersonaError(src, errs)
        if c.dies_per_way > 1:
            notes.append("dies_per_way > 1: nand_die_scheduler keeps one queue per way; the "
                         "LUNs of a target are not interleaved")
        if h.interface == "sata":
            subs.append(f"host: SATA drive simulated as NVMe behind a link capped at "
                        f"{h.sata_mb_s} MB/s (NCQ = {h.io_queues} queue x {h.queue_depth})")
        return {
            "persona": self.name,
            "scale": self.scale_note,
            "nand_backend": {"n_channels": c.channels, "n_ways": c.ways_per_channel,
                             "queue_depth": queue_depth, "max_planes": c.multi_plane,
                             "max_len": g.register_bytes, "row_cycles": g.row_cycles,
                             "col_cycles": g.column_cycles, "timer_width": timer_width},
            "geometry": {"page_bits": g.page_bits, "block_bits": g.block_bits,
                         "plane_bits": g.plane_bits},
            "luns": c.dies_per_way,
            "timing": timing,
            "onfi": {"interface": "sdr", "mode": mode, "clk_mhz": clk_mhz},
            "nvme_controller": {"n_io_queues": h.io_queues,
                                "max_transfer": h.max_transfer_kib * 1024,
                                "lbads": h.lba_bytes.bit_length() - 1,
                                "mqes": h.queue_depth - 1},
            "host_link": {"interface": h.interface, "mb_s": round(h.link_mb_s, 1)},
            "limits_mb_s": {k: (round(x, 1) if isinstance(x, float) else x) for k, x in
                            self.flash_limits(Onfi("sdr", mode, clk_mhz)).items()},
            "substitutions": subs,
            "notes": notes,
        }

    # -- output --

    def to_dict(self):
        """Inputs, derived values and the scale, for JSON reports."""
        c = self.controller
        return {
            "name": self.name,
            "description": self.description,
            "based_on": self.based_on,
            "scale": None if self.scale is None else {
                "capacity_factor": self.scale.capacity_factor,
                "blocks_per_plane": {p: list(v) for p, v in self.scale.blocks_per_plane.items()},
                "requested": self.scale.requested},
            "scale_note": self.scale_note,
            "sources": list(self.sources),
            "host": {**self.host.__dict__, "link_mb_s": round(self.host.link_mb_s, 1)},
            "controller": {"channels": c.channels, "ways_per_channel": c.ways_per_channel,
                           "dies_per_way": c.dies_per_way, "multi_plane": c.multi_plane,
                           "clock_mhz": c.clock_mhz, "onfi": {**c.onfi.__dict__,
                                                              "mt_s": round(c.onfi.mt_s, 1)}},
            "nand": {"groups": [{
                "part": g.part_name, "channels": list(g.channels), "ways": list(g.ways),
                "dies": len(g.slots()) * c.dies_per_way,
                "page_bytes": g.part.geometry.page_bytes,
                "spare_bytes": g.part.geometry.spare_bytes,
                "pages_per_block": g.part.geometry.pages_per_block,
                "blocks_per_plane": g.part.geometry.blocks_per_plane,
                "planes": g.part.geometry.planes, "bits_per_cell": g.part.geometry.bits_per_cell,
                "t_r_ns": g.part.timing.t_r_ns, "t_prog_ns": g.part.timing.t_prog_ns,
                "t_bers_ns": g.part.timing.t_bers_ns, "pe_cycles": g.part.pe_cycles,
                "part_notes": g.part.notes} for g in self.groups]},
            "capacity": {"user_gb": self.user_gb, "die_count": self.die_count,
                         "raw_bytes": self.raw_bytes, "raw_gib": self.raw_bytes / 2**30,
                         "user_bytes": self.user_bytes, "lba_count": self.lba_count,
                         "exposed_pct": round(self.exposed_pct, 2),
                         "op_pct": round(self.op_pct, 2), "parity_bytes": self.parity_bytes,
                         "slc_cache_bytes": self.slc_cache_bytes},
            "dram": self.dram.__dict__,
            "slc_cache": self.slc_cache.__dict__,
            "ecc": self.ecc.__dict__,
            "parity": self.parity.__dict__,
            "power_loss_protection": self.power_loss_protection,
            "endurance": self.endurance.__dict__,
            "limits_mb_s": {k: (round(v, 1) if isinstance(v, float) else v)
                            for k, v in self.flash_limits().items()},
            "assumptions": [a.__dict__ for a in self.assumptions],
        }


# -- loading ----------------------------------------------------------------------------------

def persona_names():
    """Names of the shipped personas (personas/*.yaml), sorted."""
    return sorted(p.stem for p in PERSONA_DIR.glob("*.yaml"))


def persona_path(name_or_path):
    """The file of a persona name or path; PersonaError if there is none."""
    p = Path(name_or_path)
    if p.suffix in (".yaml", ".yml") or p.parent != Path("."):
        if not p.is_file():
            raise PersonaError(p, ["no such persona file"])
        return p
    q = PERSONA_DIR / f"{name_or_path}.yaml"
    if not q.is_file():
        raise PersonaError(name_or_path, [f"unknown persona: one of {', '.join(persona_names())}"])
    return q


def display_path(path):
    """`path` relative to the repository when inside it (for messages)."""
    try:
        return path.resolve().relative_to(REPO)
    except ValueError:
        return path


def load_persona(name_or_path):
    """The persona `name_or_path` (a shipped name or a YAML file), validated."""
    path = persona_path(name_or_path)
    shown = display_path(path)
    try:
        doc = yaml.safe_load(path.read_text())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        what = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise PersonaError(shown, [f"not valid YAML: {what}{where}"]) from None
    if isinstance(doc, dict) and "base" in doc:
        return _load_derived(doc, path, shown)
    ck = _Checker()
    v = ck.section("", SCHEMA, doc)
    if v is None:
        raise PersonaError(shown, ck.errors)
    persona = _build(ck, v, path)
    if ck.errors:
        raise PersonaError(shown, ck.errors)
    return persona


def _load_derived(doc, path, shown):
    ck = _Checker()
    v = ck.section("", DERIVED_SCHEMA, doc)
    if v["name"] is not None and v["name"] != path.stem:
        ck.err("name", v["name"], f"must equal the file name {path.stem!r}")
    base = None
    if v["base"] is not None:
        if v["base"] not in persona_names() or v["base"] == path.stem:
            ck.err("base", v["base"], f"not a shipped persona: one of "
                   f"{', '.join(n for n in persona_names() if n != path.stem)}")
        else:
            base = load_persona(v["base"])
            if base.based_on:
                ck.err("base", v["base"], "is itself a scaled persona: name a full-size one")
                base = None
    s = v["scale"] or {}
    if s and (s.get("capacity_factor") is None) == (s.get("blocks_per_plane") is None):
        ck.err("scale", doc.get("scale"), "give exactly one of capacity_factor, "
               "blocks_per_plane (the other null)")
    if ck.errors:
        raise PersonaError(shown, ck.errors)
    try:
        scaled = base.scaled(capacity_factor=s["capacity_factor"],
                             blocks_per_plane=s["blocks_per_plane"])
    except PersonaError as e:
        raise PersonaError(shown, e.messages) from None
    return replace(scaled, name=v["name"], description=v["description"], path=path,
                   based_on=base.name,
                   sources=(*base.sources, f"{shown}: {v['reason']}"))


def _build(ck, v, path):
    """The Persona from checked sections, with the cross-field checks."""
    if v["name"] is not None and v["name"] != path.stem:
        ck.err("name", v["name"], f"must equal the file name {path.stem!r}")
    sections = ("host", "controller", "nand", "capacity", "dram", "slc_cache", "ecc", "parity",
                "endurance")
    if any(v[s] is None for s in sections) or v["controller"]["onfi"] is None:
        return None
    h, c, o = v["host"], v["controller"], v["controller"]["onfi"]
    if h["interface"] == "nvme":
        for key in ("pcie_gen", "pcie_lanes"):
            if h[key] is None and f"host.{key} = None" not in " ".join(ck.errors):
                ck.err(f"host.{key}", None, "must be given for interface nvme")
        if h["sata_mb_s"] is not None:
            ck.err("host.sata_mb_s", h["sata_mb_s"], "must be null for interface nvme")
    elif h["interface"] == "sata":
        if h["sata_mb_s"] is None:
            ck.err("host.sata_mb_s", None, "must be given for interface sata")
        for key in ("pcie_gen", "pcie_lanes"):
            if h[key] is not None:
                ck.err(f"host.{key}", h[key], "must be null for interface sata")
    if o["interface"] == "sdr" and o["mode"] is not None and o["mode"] > 5:
        ck.err("controller.onfi.mode", o["mode"], "out of range 0..5 for interface sdr")

    # NAND groups: known parts, slots inside the topology, each slot once, no empty channel.
    groups, used = [], {}
    for i, gv in enumerate(v["nand"]["groups"] or []):
        if gv is None:
            continue
        p = f"nand.groups[{i}]"
        part = None
        if gv["part"] is not None:
            if gv["part"] not in PARTS:
                ck.err(f"{p}.part", gv["part"], f"unknown NAND part: one of {', '.join(PARTS)}")
            else:
                part = PARTS[gv["part"]]
        for key, count in (("channels", c["channels"]), ("ways", c["ways_per_channel"])):
            if gv[key] is not None and count is not None and gv[key][-1] >= count:
                ck.err(f"{p}.{key}", gv[key][-1], f"out of range 0..{count - 1} "
                       f"(controller.{'channels' if key == 'channels' else 'ways_per_channel'} "
                       f"= {count})")
                gv[key] = None
        if part is None or gv["channels"] is None or gv["ways"] is None:
            continue
        g = DieGroup(part_name=gv["part"], part=part, channels=gv["channels"], ways=gv["ways"])
        for slot in g.slots():
            if slot in used:
                ck.err(f"{p}", f"channel {slot[0]} way {slot[1]}",
                       f"already holds a die of nand.groups[{used[slot]}]")
            used.setdefault(slot, i)
        if c["multi_plane"] is not None and c["multi_plane"] > part.geometry.planes:
            ck.err("controller.multi_plane", c["multi_plane"],
                   f"more than the {part.geometry.planes} planes of {gv['part']}")
        groups.append(g)
    if c["channels"] is not None and len(groups) == len(v["nand"]["groups"] or []):
        empty = sorted(set(range(c["channels"])) - {s[0] for s in used})
        if empty:
            ck.err("nand.groups", f"channels {empty}", "have no die (every channel needs one)")
    sc, par, ecc = v["slc_cache"], v["parity"], v["ecc"]
    if sc["policy"] == "none" and sc["size_gb"] is not None:
        ck.err("slc_cache.size_gb", sc["size_gb"], "must be null for policy none")
    if sc["policy"] in ("static", "dynamic") and sc["size_gb"] is None:
        ck.err("slc_cache.size_gb", None, f"must be given for policy {sc['policy']}")
    if par["scheme"] == "none" and par["stripe_dies"] is not None:
        ck.err("parity.stripe_dies", par["stripe_dies"], "must be null for scheme none")
    if par["scheme"] == "die-raid5" and par["stripe_dies"] is None:
        ck.err("parity.stripe_dies", None, "must be given for scheme die-raid5")
    if ecc["scheme"] == "bch" and ecc["correctable_bits"] is None:
        ck.err("ecc.correctable_bits", None, "must be given for scheme bch")
    if ecc["scheme"] == "ldpc" and ecc["correctable_bits"] is not None:
        ck.err("ecc.correctable_bits", ecc["correctable_bits"], "must be null for scheme ldpc")
    if None not in (ecc["codeword_bytes"], ecc["parity_bytes"]):
        if ecc["scheme"] == "bch" and ecc["correctable_bits"] is not None:
            m = (ecc["codeword_bytes"] * 8).bit_length()      # BCH over GF(2^m)
            need = -(-ecc["correctable_bits"] * m // 8)
            if ecc["parity_bytes"] < need:
                ck.err("ecc.correctable_bits", ecc["correctable_bits"],
                       f"BCH over GF(2^{m}) needs {need} parity bytes per codeword, "
                       f"ecc.parity_bytes = {ecc['parity_bytes']}")
        for g in groups:
            geo = g.part.geometry
            per_page = geo.page_bytes // ecc["codeword_bytes"] * ecc["parity_bytes"]
            if geo.page_bytes % ecc["codeword_bytes"] or per_page > geo.spare_bytes:
                ck.err("ecc.parity_bytes", ecc["parity_bytes"],
                       f"{geo.page_bytes // ecc['codeword_bytes']} codewords x "
                       f"{ecc['parity_bytes']} B do not fit the {geo.spare_bytes} B spare "
                       f"area of {g.part_name} ({geo.page_bytes} B pages)")
                break
    assumptions = []
    known = set(_all_paths(SCHEMA))
    for i, a in enumerate(v["assumptions"] or []):
        if a is None:
            continue
        fp = a["field"]
        if fp is not None and re.sub(r"\[\d+\]", "[]", fp) not in known:
            ck.err(f"assumptions[{i}].field", fp, "no such field")
        assumptions.append(Assumption(**a))
    if ck.errors:
        return None
    persona = Persona(
        name=v["name"], description=v["description"], sources=tuple(v["sources"]),
        host=Host(**h), controller=Controller(**{**c, "onfi": Onfi(**o)}),
        groups=tuple(groups), user_gb=v["capacity"]["user_gb"], dram=Dram(**v["dram"]),
        slc_cache=SlcCache(**sc), ecc=Ecc(**ecc), parity=Parity(**par),
        power_loss_protection=v["power_loss_protection"], endurance=Endurance(**v["endurance"]),
        assumptions=tuple(assumptions), path=path)
    if persona.parity.scheme == "die-raid5" and persona.parity.stripe_dies > persona.die_count:
        ck.err("parity.stripe_dies", persona.parity.stripe_dies,
               f"more than the {persona.die_count} dies of the drive")
        return None
    avail = persona.raw_bytes - persona.parity_bytes - persona.slc_reserved_bytes
    if persona.user_bytes > avail:
        ck.err("capacity.user_gb", persona.user_gb,
               f"{persona.user_bytes} user bytes exceed raw {persona.raw_bytes} B minus parity "
               f"{persona.parity_bytes} B minus static SLC cache {persona.slc_reserved_bytes} B")
        return None
    return persona


# -- analytic channel limits ------------------------------------------------------------------

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
    a two-byte burst. An estimate: the scheduler does not run NV-DDR2 yet."""
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
