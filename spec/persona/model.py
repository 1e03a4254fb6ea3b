# SPDX-License-Identifier: BSD-2-Clause
"""What a drive is, as validated dataclasses, and the loader that builds them from
`personas/<name>.yaml`: `load_persona`, `persona_names`, `persona_path`; `Persona` with its
derived values (dies, capacities, over-provisioning, `flash_limits`), `Persona.scaled()` and
`Persona.to_dict()`. NAND parts are resolved from `spec/nand_geometry.PARTS`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from spec import pcie_link
from spec.bch import BchCode
from spec.nand_geometry import PARTS, NandPart
from spec.onfi_timing import NVDDR2_MODES, SDR_MODES
from spec.persona import limits
from spec.persona.limits import PCIE_LANE_MB_S
from spec.persona.schema import DERIVED_SCHEMA, SCHEMA, PersonaError, _all_paths, _Checker

__all__ = ["load_persona", "persona_names", "persona_path", "display_path", "idema_lba_count",
           "Persona", "Scale", "Host", "Onfi", "Controller", "DieGroup", "Dram", "SlcCache",
           "Ecc", "Parity", "Endurance", "Assumption", "PERSONA_DIR", "DEFAULT_PERSONA"]

REPO = Path(__file__).resolve().parents[2]
PERSONA_DIR = REPO / "personas"
DEFAULT_PERSONA = "default"


# -- the persona ---------------------------------------------------------------------------

def idema_lba_count(user_gb, lba_bytes):
    """LBAs of a drive sold as `user_gb` GB: IDEMA LBA1-03 from 50 GB up
    (97 696 368 + 1 953 504 x (GB - 50) sectors of 512 B, an eighth of that for 4 KiB LBAs),
    else user_gb x 10^9 bytes rounded down to whole LBAs."""
    if user_gb >= 50:
        sectors = 97_696_368 + round(1_953_504 * (user_gb - 50))
        return sectors if lba_bytes == 512 else sectors // 8
    return int(user_gb * 10**9) // lba_bytes



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

    def link(self, mps=256, mrrs=512, read_latency_ns=400):
        """The host link as spec.pcie_link models it: a PcieLink (pcie_gen, pcie_lanes) or a
        SataLink (sata_mb_s), at the negotiated mps and mrrs (128, 256, 512 B; 256 B is what
        client root ports commonly grant, 512 B Linux's default MRRS) and the root
        complex's read latency (ns, >= 0)."""
        if self.interface == "sata":
            return pcie_link.SataLink(self.sata_mb_s, mps, mrrs, read_latency_ns)
        return pcie_link.PcieLink(self.pcie_gen, self.pcie_lanes, mps, mrrs, read_latency_ns)

    @property
    def mqes(self):
        """The NVMe queue size the simulated drive offers (CAP.MQES, entries - 1): an NVMe
        persona's queue_depth entries; a SATA persona's NCQ depth is commands in flight, and
        an NVMe ring of N entries holds N - 1 commands, so NCQ's 32 take 33 entries."""
        return self.queue_depth if self.interface == "sata" else self.queue_depth - 1

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
        """Analytic flash-array, channel and host limits in MB/s (`limits.flash_limits`);
        `onfi` (an Onfi) replaces controller.onfi."""
        return limits.flash_limits(self, onfi)

    def link_limits(self, mps=256, mrrs=512, read_latency_ns=400):
        """The host link's payload limits in MB/s (spec/pcie_link.py, `Host.link` for the
        parameters): read_mb_s (to_host: the device's memory writes carry NVMe reads),
        write_mb_s (from_host: completions of its memory reads carry NVMe writes), raw_mb_s
        (after line coding), mps, mrrs, read_latency_ns, description, and front_end: the
        LitePCIe data path that carries it ({data_width, clk_mhz}) or {error: why not}."""
        link = self.host.link(mps, mrrs, read_latency_ns)
        try:
            fe = pcie_link.front_end(link)
            front = {"data_width": fe.data_width, "clk_mhz": fe.clk_hz / 1e6,
                     "mb_s": round(fe.mb_s["to_host"], 1)}
        except ValueError as e:
            front = {"error": str(e)}
        return {"read_mb_s": link.payload_mb_s("to_host"),
                "write_mb_s": link.payload_mb_s("from_host"), "raw_mb_s": link.raw_mb_s,
                "mps": mps, "mrrs": mrrs, "read_latency_ns": read_latency_ns,
                "description": link.describe(), "front_end": front}

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
                "page_timing": [dict(zip(("op", "page_type", "typ_ns", "typ_source", "max_ns",
                                          "max_source"), row, strict=True))
                                for row in g.part.page_timing()],
                "timing_corner": "typical" if g.part.timing.typical else "maximum",
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
            "link_limits": {k: (round(v, 1) if isinstance(v, float) else v)
                            for k, v in self.link_limits().items()},
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
            # the code the ECC cores build (spec/bch.py), over the smallest field it fits
            try:
                code = BchCode.smallest(ecc["correctable_bits"], ecc["codeword_bytes"])
            except ValueError as e:
                ck.err("ecc.correctable_bits", ecc["correctable_bits"],
                       f"no BCH code fits: {str(e).removeprefix('BchCode: ')}")
            else:
                if ecc["parity_bytes"] < code.ecc_bytes:
                    ck.err("ecc.correctable_bits", ecc["correctable_bits"],
                           f"BCH over GF(2^{code.m}) needs {code.ecc_bytes} parity bytes "
                           f"per codeword, ecc.parity_bytes = {ecc['parity_bytes']}")
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

