# SPDX-License-Identifier: BSD-2-Clause
"""Drive personas (spec/persona: schema, model, limits; personas/*.yaml) and the `ssdlab
persona` commands, without a simulator: every shipped persona loads and validates; capacities
and topology match shared/reference/personas.md; scaling keeps die geometry, timings and
topology; each kind of bad input gets an error naming the file and the field; the analytic
limits; the CLI through click's CliRunner. The RTL mapping (soc/persona_params.py) is tested in
tests/soc/persona_params."""

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from spec.nand_geometry import PARTS
from spec.onfi_timing import engine_registers
from spec.persona import (
    PERSONA_DIR,
    PersonaError,
    analytic_limits,
    idema_lba_count,
    load_persona,
    persona_names,
    schema_markdown,
)
from sw.ssdlab.cli import main

pytestmark = pytest.mark.smoke
GIB = 1 << 30
SHIPPED = ["crucial-m500-120", "crucial-m500-240", "crucial-m500-480", "crucial-m500-960",
           "default", "intel-750-1.2t", "intel-750-400g", "kioxia-cm6v-3.2t",
           "samsung-750-evo-250", "samsung-950pro-512"]


def per_channel(p):
    out = {}
    for c, _w, _l, _part in p.dies:
        out[c] = out.get(c, 0) + 1
    return out


# -- shipped personas ----------------------------------------------------------------------

def test_shipped_list():
    assert persona_names() == SHIPPED


@pytest.mark.parametrize("name", SHIPPED)
def test_persona_loads(name):
    p = load_persona(name)
    assert p.name == name and p.sources and p.die_count > 0
    assert p.user_bytes < p.raw_bytes
    assert p.user_bytes <= p.raw_bytes - p.parity_bytes - p.slc_reserved_bytes
    assert sorted(per_channel(p)) == list(range(p.controller.channels))   # no empty channel
    if p.based_on is None:
        assert p.scale is None and p.scale_note == "full size (not scaled)"
        assert p.assumptions, "every shipped persona states what it assumes"
        assert p.user_bytes == idema_lba_count(p.user_gb, p.host.lba_bytes) * p.host.lba_bytes
    lim = p.flash_limits()
    for kind in ("read", "program"):
        assert 0 < lim[f"channel_{kind}"] <= lim[f"array_{kind}"]
        assert lim[kind] == min(lim[f"channel_{kind}"], lim["host"])
    assert lim["channel_read"] <= lim["bus_peak"]
    json.dumps(p.to_dict())


def test_intel_750_400g():
    p = load_persona("intel-750-400g")
    assert p.parts == {"imft-20nm-mlc-128gbit": 24, "imft-20nm-mlc-64gbit": 12}
    assert p.die_count == 36 and p.controller.channels == 18
    assert set(per_channel(p).values()) == {2}
    assert p.raw_bytes == 480 * GIB == 24 * 16 * GIB + 12 * 8 * GIB
    assert p.user_bytes == 781_422_768 * 512                  # 400 GB, IDEMA
    assert 77 < p.exposed_pct < 78.5                           # "about 78 % exposed"
    assert (p.host.interface, p.host.pcie_gen, p.host.pcie_lanes) == ("nvme", 3, 4)
    assert p.controller.clock_mhz == 400 and p.dram.mib == 1280
    assert p.parity.scheme == "die-raid5" and p.power_loss_protection
    assert (p.endurance.gb_per_day, p.endurance.years) == (70, 5)
    t128 = PARTS["imft-20nm-mlc-128gbit"].timing
    g = next(g for g in p.groups if g.part_name == "imft-20nm-mlc-128gbit")
    assert g.part.timing.t_r_ns == 115_000 == t128.t_r_ns and t128.t_prog_ns == 1_600_000


def test_intel_750_1t2():
    p = load_persona("intel-750-1.2t")
    assert p.parts == {"imft-20nm-mlc-128gbit": 72}
    assert p.controller.channels == 18 and set(per_channel(p).values()) == {4}
    assert p.raw_bytes == 72 * 16 * GIB and round(p.user_bytes / 1e9) == 1200


@pytest.mark.parametrize("gb,dies,dram", [(120, 8, 256), (240, 16, 256), (480, 32, 512),
                                          (960, 64, 512)])
def test_crucial_m500(gb, dies, dram):
    p = load_persona(f"crucial-m500-{gb}")
    assert p.parts == {"imft-20nm-mlc-128gbit": dies} and p.controller.channels == 8
    assert p.raw_bytes == dies * 16 * GIB and round(p.user_bytes / 1e9) == gb
    assert (p.host.interface, p.host.sata_mb_s, p.host.link_mb_s) == ("sata", 550, 550.0)
    assert p.dram.mib == dram


def test_other_drives():
    evo = load_persona("samsung-750-evo-250")
    assert evo.host.interface == "sata" and evo.slc_cache.policy == "static"
    assert evo.slc_cache_bytes == 3 * 10**9
    assert evo.groups[0].part.geometry.bits_per_cell == 3
    k = load_persona("kioxia-cm6v-3.2t")
    assert (k.host.pcie_gen, k.host.pcie_lanes, k.controller.channels) == (4, 4, 18)
    assert abs(k.raw_bytes / (4 << 40) - 1) < 0.001 and round(k.user_bytes / 1e12, 1) == 3.2
    assert k.slc_cache.policy == "none" and k.die_count == 64
    s = load_persona("samsung-950pro-512")
    assert (s.controller.channels, set(per_channel(s).values())) == (8, {4})
    assert s.parts == {"samsung-vnand-32l-mlc-128gbit": 32}


def test_default_persona():
    p = load_persona("default")
    assert p.based_on == "samsung-950pro-512" and p.scale.requested == "16 blocks per plane"
    base = load_persona("samsung-950pro-512")
    assert p.die_count == base.die_count and p.raw_bytes == base.raw_bytes // 128
    # an NVMe drive with several queues (issue 18: the default bench measures NVMe)
    assert p.host.interface == "nvme" and p.host.io_queues >= 8
    assert "scaled" in p.scale_note    # its RTL mapping: tests/soc/persona_params


# -- scaling -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["intel-750-400g", "kioxia-cm6v-3.2t", "samsung-750-evo-250"])
def test_scaled_keeps_geometry_timing_topology(name):
    full = load_persona(name)
    s = full.scaled(capacity_factor=1 / 64)
    assert s.dies and [d[:3] for d in s.dies] == [d[:3] for d in full.dies]
    assert s.controller == full.controller and s.host == full.host
    for a, b in zip(full.groups, s.groups, strict=True):
        ga, gb = a.part.geometry, b.part.geometry
        assert a.part.timing == b.part.timing
        assert (ga.page_bytes, ga.spare_bytes, ga.pages_per_block, ga.planes,
                ga.bits_per_cell) == (gb.page_bytes, gb.spare_bytes, gb.pages_per_block,
                                      gb.planes, gb.bits_per_cell)
        assert gb.blocks_per_plane == round(ga.blocks_per_plane / 64)
        assert s.scale.blocks_per_plane[a.part_name] == (ga.blocks_per_plane,
                                                          gb.blocks_per_plane)
    assert s.raw_bytes == pytest.approx(full.raw_bytes / 64, rel=0.02)
    assert s.scale.capacity_factor == s.raw_bytes / full.raw_bytes
    assert s.exposed_pct == pytest.approx(full.exposed_pct, rel=1e-3)
    assert s.slc_cache_bytes == pytest.approx(full.slc_cache_bytes * s.scale.capacity_factor,
                                              abs=1)
    assert "capacity factor 0.015625" in s.scale_note and s.to_dict()["scale"]
    assert full.scale is None                                # the original is unchanged


def test_scaled_blocks_per_plane_and_errors():
    full = load_persona("intel-750-400g")
    s = full.scaled(blocks_per_plane=8)
    assert {g.part.geometry.blocks_per_plane for g in s.groups} == {8}
    assert s.raw_bytes == 24 * 2 * 8 * (16384 * 512) + 12 * 2 * 8 * (8192 * 256)
    again = s.scaled(blocks_per_plane=4)                     # from the full drive again
    assert again.scale.blocks_per_plane["imft-20nm-mlc-64gbit"] == (2048, 4)
    for kw, text in (({"capacity_factor": 0}, "scale.capacity_factor = 0: out of range"),
                     ({"capacity_factor": 1.5}, "scale.capacity_factor = 1.5"),
                     ({"blocks_per_plane": 5000}, "scale.blocks_per_plane = 5000: out of "
                                                  "range 1..1024"),
                     ({}, "exactly one of"),
                     ({"capacity_factor": 0.5, "blocks_per_plane": 2}, "exactly one of")):
        with pytest.raises(PersonaError, match=text):
            full.scaled(**kw)


# -- bad input -----------------------------------------------------------------------------

def write(tmp_path, doc, name="bad"):
    path = tmp_path / f"{name}.yaml"
    doc = dict(doc, name=name) if "name" in doc else doc
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def good_doc():
    return yaml.safe_load((PERSONA_DIR / "intel-750-1.2t.yaml").read_text())


def errors(path):
    with pytest.raises(PersonaError) as e:
        load_persona(path)
    for line in str(e.value).splitlines():
        assert line.startswith(f"{path}: ") or line.startswith(f"{Path(path).name}: ")
    return e.value.messages


def mutate(edit):
    doc = good_doc()
    edit(doc)
    return doc


BAD = {
    "out_of_range": (lambda d: d["controller"].update(channels=100),
                     "controller.channels = 100: out of range 1..64"),
    "wrong_type": (lambda d: d["controller"].update(channels="eight"),
                   "controller.channels = 'eight': wrong type: must be an integer"),
    "float_for_int": (lambda d: d["controller"].update(ways_per_channel=2.5),
                      "controller.ways_per_channel = 2.5: wrong type: must be an integer"),
    "bool_type": (lambda d: d.update(power_loss_protection="yes"),
                  "power_loss_protection = 'yes': wrong type: must be true or false"),
    "wrong_type_bool": (lambda d: d["host"].update(io_queues=True),
                        "host.io_queues = True: wrong type"),
    "bad_choice": (lambda d: d["host"].update(interface="usb"),
                   "host.interface = 'usb': not one of nvme, sata"),
    "unknown_field": (lambda d: d["controller"].update(chanels=18),
                      "controller.chanels = 18: unknown field (did you mean 'channels'?)"),
    "unknown_top_field": (lambda d: d.update(colour="red"), "colour = 'red': unknown field"),
    "missing_field": (lambda d: d["host"].pop("lba_bytes"),
                      "host.lba_bytes = (missing): missing field"),
    "missing_section": (lambda d: d.pop("ecc"), "ecc = (missing): missing field"),
    "unknown_part": (lambda d: d["nand"]["groups"][0].update(part="imft-9nm"),
                     "nand.groups[0].part = 'imft-9nm': unknown NAND part: one of imft-"),
    "group_range": (lambda d: d["nand"]["groups"][0].update(ways="0-4"),
                    "nand.groups[0].ways = 4: out of range 0..3 "
                    "(controller.ways_per_channel = 4)"),
    "bad_range_text": (lambda d: d["nand"]["groups"][0].update(channels="0-x"),
                       "nand.groups[0].channels = '0-x': wrong type"),
    "overlap": (lambda d: d["nand"]["groups"].append(
        {"part": "imft-20nm-mlc-128gbit", "channels": 3, "ways": 1}),
        "nand.groups[1] = 'channel 3 way 1': already holds a die of nand.groups[0]"),
    "empty_channel": (lambda d: d["nand"]["groups"][0].update(channels="0-16"),
                      "nand.groups = 'channels [17]': have no die"),
    "too_big": (lambda d: d["capacity"].update(user_gb=1300), "capacity.user_gb = 1300: "),
    "sdr_mode": (lambda d: d["controller"]["onfi"].update(interface="sdr", mode=6),
                 "controller.onfi.mode = 6: out of range 0..5 for interface sdr"),
    "nvme_with_sata_cap": (lambda d: d["host"].update(sata_mb_s=550),
                           "host.sata_mb_s = 550: must be null for interface nvme"),
    "null_required": (lambda d: d["host"].update(pcie_gen=None),
                      "host.pcie_gen = None: must be given for interface nvme"),
    "not_nullable": (lambda d: d["controller"].update(channels=None),
                     "controller.channels = None: must not be null"),
    "ecc_spare": (lambda d: d["ecc"].update(parity_bytes=100),
                  "ecc.parity_bytes = 100: 16 codewords x 100 B do not fit the 1024 B spare"),
    "bch_strength": (lambda d: d["ecc"].update(correctable_bits=40),
                     "ecc.correctable_bits = 40: BCH over GF(2^14) needs 70 parity bytes"),
    "multi_plane": (lambda d: d["controller"].update(multi_plane=4),
                    "controller.multi_plane = 4: more than the 2 planes"),
    "assumption_field": (lambda d: d["assumptions"].append({"field": "controler.channels",
                                                           "reason": "typo"}),
                         "assumptions[13].field = 'controler.channels': no such field"),
    "assumption_shape": (lambda d: d["assumptions"].append({"field": "host"}),
                         "assumptions[13].reason = (missing): missing field"),
    "power_of_two": (lambda d: d["host"].update(max_transfer_kib=100),
                     "host.max_transfer_kib = 100: must be a power of two 4..16384"),
    "schema_version": (lambda d: d.update(schema=2), "schema = 2: out of range 1..1"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_names_the_field(tmp_path, case):
    edit, text = BAD[case]
    path = write(tmp_path, mutate(edit))
    messages = errors(path)
    assert any(text in m for m in messages), messages


def test_host_link(tmp_path):
    def edit(d):
        d["host"].update(pcie_gen=2, pcie_lanes=16)
    p = load_persona(write(tmp_path, mutate(edit)))
    assert p.host.link_mb_s == 16 * 500
    assert load_persona("kioxia-cm6v-3.2t").host.link_mb_s == pytest.approx(4 * 1969.23, 1e-4)


def test_good_copy_loads(tmp_path):
    """The base document of the bad-input cases is itself valid (so each case tests one
    thing)."""
    assert load_persona(write(tmp_path, good_doc())).die_count == 72


def test_all_errors_at_once(tmp_path):
    def edit(d):
        d["controller"]["channels"] = 100
        d["host"]["lba_bytes"] = 520
        d["dram"]["sizee"] = 1
    messages = errors(write(tmp_path, mutate(edit)))
    assert len(messages) == 3, messages


def test_name_must_match_file(tmp_path):
    path = tmp_path / "other.yaml"
    path.write_text(yaml.safe_dump(good_doc()))
    assert any("name = 'intel-750-1.2t': must equal the file name 'other'" in m
               for m in errors(path))


@pytest.mark.parametrize("text,msg", [("a: [1, 2", "not valid YAML: expected ',' or ']', but "
                                                  "got '<stream end>' at line 1, column 9"),
                                      ("- 1\n- 2\n", "(top level) = [1, 2]: wrong type")])
def test_not_a_persona(tmp_path, text, msg):
    path = tmp_path / "junk.yaml"
    path.write_text(text)
    assert any(msg in m for m in errors(path))


def test_unknown_persona_name():
    with pytest.raises(PersonaError, match="unknown persona: one of crucial-m500-120"):
        load_persona("intel-9000")


def test_bad_derived_persona(tmp_path):
    doc = yaml.safe_load((PERSONA_DIR / "default.yaml").read_text())
    doc.update(name="small", base="nope")
    doc["scale"]["capacity_factor"] = 0.5
    messages = errors(write(tmp_path, doc, "small"))
    assert any(m.startswith("base = 'nope': not a shipped persona") for m in messages)
    assert any("scale = " in m and "exactly one of" in m for m in messages)


# -- limits --------------------------------------------------------------------------------

def test_analytic_limits_match_the_measured_array():
    """rtl/nand/README.md (nand_backend, Measured): 18 x 4 of imft-20nm-mlc-128gbit at 100 MHz
    in SDR mode 5: limits 33.28 MB/s per channel (reads, bus-bound) and 35.73 MB/s (programs,
    array-bound), page + spare bytes."""
    g, t = PARTS["imft-20nm-mlc-128gbit"].geometry, PARTS["imft-20nm-mlc-128gbit"].timing
    lim = analytic_limits(engine_registers(5, 100), 4, g.register_bytes, t.t_r_ns, t.t_prog_ns,
                          10, column_cycles=g.column_cycles, row_cycles=g.row_cycles)
    assert round(lim["read"][0] * g.register_bytes / 1e6, 2) == 33.28
    assert round(lim["program"][0] * g.register_bytes / 1e6, 2) == 35.73
    assert (lim["read"][3], lim["program"][3]) == ("bus-bound", "array-bound")


def test_array_limits():
    """The array limits run every die at the mean over its page types (typical: MLC lower
    57.5 / upper 92 us tR, 640 / 2560 us tPROG of imft-20nm-mlc-128gbit)."""
    p = load_persona("crucial-m500-120")                    # 8 dies, 2-plane, 16 KiB pages
    lim = p.flash_limits()
    assert lim["array_read"] == pytest.approx(8 * 2 * 16384 / 74.75e-6 / 1e6)
    assert lim["array_program"] == pytest.approx(8 * 2 * 16384 / 1600e-6 / 1e6)
    assert lim["bus_peak"] == pytest.approx(8 * 2000 / 6)   # NV-DDR2 mode 6: 333 MT/s
    assert lim["host"] == 550 and lim["read_bound"] == "host link"


def test_array_times_are_page_type_means():
    """A sequential write programs every page type: the limits use the mean, typical unless
    the part's timing says maximum; TLC averages three types."""
    from dataclasses import replace

    from spec.persona.limits import array_times
    mlc = PARTS["imft-20nm-mlc-128gbit"]
    assert array_times(mlc) == (pytest.approx(74_750), pytest.approx(1_600_000))
    worst = replace(mlc, timing=replace(mlc.timing, typical=False))
    assert array_times(worst) == (pytest.approx(115_000), pytest.approx((960 + 3840) * 500))
    tlc = PARTS["samsung-16nm-tlc-128gbit"]
    assert array_times(tlc) == (pytest.approx((50 + 70 + 90) * 1000 / 3),
                                pytest.approx((1000 + 2000 + 3000) * 1000 / 3))


# -- docs ----------------------------------------------------------------------------------

def test_readme_schema_table_is_current():
    readme = (PERSONA_DIR / "README.md").read_text()
    assert schema_markdown() in readme, "regenerate: python -m sw.ssdlab persona schema"


# -- CLI -----------------------------------------------------------------------------------

def cli(*args):
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def test_cli_list():
    r = cli("persona", "list")
    assert r.exit_code == 0
    lines = r.output.splitlines()
    assert [line.split()[0] for line in lines] == SHIPPED
    assert "36 dies" in r.output and "480.00 GiB" in r.output


def test_cli_show():
    r = cli("persona", "show", "intel-750-400g")
    assert r.exit_code == 0, r.output
    assert "raw 480.00 GiB" in r.output and "full size (not scaled)" in r.output
    assert "assumed:" in r.output and "nand.groups:" in r.output
    r = cli("persona", "show", "intel-750-400g", "--scale", "0.01", "--json")
    d = json.loads(r.output)
    assert d["scale"]["blocks_per_plane"]["imft-20nm-mlc-128gbit"] == [1024, 10]
    assert d["capacity"]["die_count"] == 36 and "scaled" in d["scale_note"]
    r = cli("persona", "show", "crucial-m500-240", "--rtl", "--sdr-fallback")
    assert r.exit_code == 0 and "n_channels': 8" in r.output and "substituted:" in r.output
    r = cli("persona", "show", "default", "--rtl", "--sdr-fallback", "--json")
    d = json.loads(r.output)
    assert d["rtl"]["nand_backend"]["n_ways"] == 4 and d["based_on"] == "samsung-950pro-512"
    assert d["rtl"]["onfi"]["interface"] == "sdr"
    r = cli("persona", "show", "default", "--rtl", "--json")
    d = json.loads(r.output)
    assert d["rtl"]["onfi"]["interface"] == "nv-ddr2" and d["rtl"]["onfi"]["mode"] == 7


def test_cli_show_page_types():
    """persona show names each page type's typical and maximum tR / tPROG and where each
    comes from (a datasheet, or assumed); --json carries the same rows."""
    r = cli("persona", "show", "crucial-m500-120")      # imft-20nm-mlc-128gbit, MLC
    assert r.exit_code == 0, r.output
    assert "page types (page % 2)" in r.output and "the dies run typical" in r.output
    rows = [ln.split() for ln in r.output.splitlines() if ln.strip().startswith(("tR ", "tPROG"))]
    assert [(row[0], row[1]) for row in rows] == [("tR", "lower"), ("tR", "upper"),
                                                  ("tR", "slc"), ("tPROG", "lower"),
                                                  ("tPROG", "upper"), ("tPROG", "slc")]
    assert rows[4][2] == "2560" and rows[4][5] == "3840"    # upper tPROG, us: typical / max
    assert "slc: SLC mode, DAh-prefixed" in r.output and "SLC mode at 0.33" in r.output
    assert "assumed: page-type split" in r.output
    r = cli("persona", "show", "samsung-750-evo-250", "--json")
    rows = json.loads(r.output)["nand"]["groups"][0]["page_timing"]
    assert [x["page_type"] for x in rows] == ["lower", "middle", "upper", "slc"] * 2
    assert all(x["typ_source"] and x["max_source"] for x in rows)
    r = cli("persona", "show", "crucial-m500-480")
    assert "Micron" not in r.output and "no datasheet named" in r.output     # 128 Gbit
    from spec.nand_geometry import PARTS
    assert "datasheet" in PARTS["imft-20nm-mlc-64gbit"].timing_source("t_r_ns")


def test_cli_show_errors():
    r = cli("persona", "show", "intel-750-400g", "--rtl")
    assert r.exit_code == 1 and "nand.groups = [imft-20nm-mlc-128gbit, imft-20nm-mlc-64gbit]: " \
        "row geometry differs (pages per block 512 vs 256, blocks per plane 1024 vs 2048)" \
        in r.output
    r = cli("persona", "show", "intel-750-400g", "--rtl", "--blocks-per-plane", "16",
            "--pages-per-block", "16")
    assert r.exit_code == 0 and "'part2': 'imft-20nm-mlc-64gbit'" in r.output, r.output
    r = cli("persona", "show", "intel-750-400g", "--rtl", "--pages-per-block", "3")
    assert r.exit_code == 2 and "pages_per_block=3: must be a power of two" in r.output
    r = cli("persona", "show", "nope")
    assert r.exit_code == 1 and "unknown persona" in r.output
    r = cli("persona", "show", "intel-750-400g", "--scale", "2")
    assert r.exit_code == 1 and "scale.capacity_factor = 2.0: out of range" in r.output
    r = cli("persona", "show", "intel-750-400g", "--scale", "0.5", "--blocks-per-plane", "2")
    assert r.exit_code == 2


def test_cli_validate(tmp_path):
    files = [str(PERSONA_DIR / f"{n}.yaml") for n in SHIPPED]
    r = cli("persona", "validate", *files)
    assert r.exit_code == 0 and r.output.count(": ok (") == len(SHIPPED)
    bad = write(tmp_path, mutate(BAD["out_of_range"][0]))
    r = cli("persona", "validate", files[0], str(bad))
    assert r.exit_code == 1
    assert f"{bad}: controller.channels = 100: out of range 1..64" in r.output
    assert "1 of 2 persona file(s) invalid" in r.output


def test_cli_schema():
    r = cli("persona", "schema")
    assert r.exit_code == 0 and "| `controller.channels` |" in r.output


def test_link_limits():
    """Persona.link_limits: the host link's payload limits from spec/pcie_link.py."""
    from spec.pcie_link import PcieLink, SataLink
    lk = load_persona("intel-750-400g").link_limits()
    assert lk["read_mb_s"] == PcieLink(3, 4).payload_mb_s("to_host")
    assert lk["write_mb_s"] == PcieLink(3, 4).payload_mb_s("from_host")
    assert round(lk["raw_mb_s"]) == 3938 and (lk["mps"], lk["mrrs"]) == (256, 512)
    assert lk["front_end"] == {"data_width": 512, "clk_mhz": 125.0, "mb_s": 6400.0}
    assert "PCIe 3.0 x4" in lk["description"]
    lk = load_persona("crucial-m500-240").link_limits(mps=128)
    assert lk["read_mb_s"] == SataLink(550).payload_mb_s("to_host") and lk["mps"] == 128
    assert load_persona("crucial-m500-240").to_dict()["link_limits"]["read_mb_s"] == 550.0


def test_link_limits_unbuildable(tmp_path):
    def edit(d):
        d["host"].update(pcie_gen=5, pcie_lanes=16)
    p = load_persona(write(tmp_path, mutate(edit)))
    fe = p.link_limits()["front_end"]
    assert "host.pcie_gen = 5, host.pcie_lanes = 16" in fe["error"]
    r = cli("persona", "show", str(p.path))
    assert r.exit_code == 0 and "front end: none: host.pcie_gen = 5" in r.output


def test_cli_show_link():
    r = cli("persona", "show", "intel-750-400g")
    assert "host link limits, MB/s of payload" in r.output
    assert "read (to host): 3643.4; write (from host): 3604.2; raw 3938.5" in r.output
    assert "front end: 512-bit TLP path at 125 MHz" in r.output
