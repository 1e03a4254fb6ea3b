# SPDX-License-Identifier: BSD-2-Clause
"""The persona file format: every field's type, unit and legal range (`SCHEMA`, and
`DERIVED_SCHEMA` for a persona that scales another), the checker that reports every error of
a file at once, the field table of personas/README.md (`schema_markdown`), and `PersonaError`.
"""

import math
import re
from dataclasses import dataclass

__all__ = ["PersonaError", "F", "SCHEMA", "DERIVED_SCHEMA", "SCHEMA_VERSION", "schema_markdown"]

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
