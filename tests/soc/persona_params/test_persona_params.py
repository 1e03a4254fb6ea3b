# SPDX-License-Identifier: BSD-2-Clause
"""The RTL mapping of a drive persona (soc/persona_params.py, `rtl_params`), without a
simulator: the parameters and register values of nand_backend and nvme_controller for a
shipped persona, the NV-DDR2 channels of an NV-DDR2 persona and its SDR fallback, and a
refusal naming each persona field the cores cannot do."""

import pytest
import yaml

from soc.persona_params import rtl_params
from spec.nand_geometry import PARTS
from spec.onfi_timing import engine_registers, nvddr2_engine_registers
from spec.persona import PERSONA_DIR, PersonaError, load_persona

pytestmark = pytest.mark.smoke


def edited_persona(tmp_path, edit, base="intel-750-1.2t"):
    """`base` with `edit` applied to its YAML document, loaded from tmp_path."""
    doc = yaml.safe_load((PERSONA_DIR / f"{base}.yaml").read_text())
    edit(doc)
    doc["name"] = "bad"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_persona(path)


def test_rtl_params():
    r = rtl_params(load_persona("crucial-m500-240"), sdr_fallback=True)
    g = PARTS["imft-20nm-mlc-128gbit"].geometry
    assert r["nand_backend"] == {"n_channels": 8, "n_ways": 2, "n_luns": 1, "queue_depth": 4,
                                 "max_planes": 2, "max_len": 17408, "row_cycles": 3,
                                 "col_cycles": 2, "timer_width": 8, "with_nvddr2": False}
    assert r["geometry"] == {"page_bits": 9, "block_bits": g.block_bits, "plane_bits": 1}
    assert r["timing"] == engine_registers(5, 100.0)
    assert r["onfi"] == {"interface": "sdr", "mode": 5, "clk_mhz": 100.0, "sdr_mode": 5}
    assert r["nvddr2_timing"] is None
    assert r["nvme_controller"] == {"n_io_queues": 1, "max_transfer": 262144, "lbads": 9,
                                    "mqes": 32}
    assert any("nv-ddr2 mode 6" in s for s in r["substitutions"])
    assert r["limits_mb_s"]["channel_read"] < load_persona("crucial-m500-240").flash_limits()[
        "channel_read"]                                     # SDR 5 is slower than NV-DDR2 6


def test_luns(tmp_path):
    """crucial-m500-960 (4 ways x 2 LUNs): the back end gets n_luns 2 and a row address with
    the LUN bit, the simulated drive two LUNs per target; nothing says they are dropped. 5 LUNs
    per target (the schema allows 8) are refused naming the field and the 2-bit lun field."""
    from soc.sim_config import soc_config
    r = rtl_params(load_persona("crucial-m500-960"), sdr_fallback=True)
    assert (r["nand_backend"]["n_ways"], r["nand_backend"]["n_luns"], r["luns"]) == (4, 2, 2)
    g = PARTS["imft-20nm-mlc-128gbit"].geometry
    bits = g.page_bits + g.block_bits + 1
    assert r["nand_backend"]["row_cycles"] == (bits + 7) // 8
    assert not any("LUN" in n for n in r["notes"] + r["substitutions"])
    c = soc_config("crucial-m500-960", {"n_channels": 2}, pages_per_block=16)
    assert (c.n_ways, c.luns) == (4, 2)
    assert c.row_cycles == (4 + g.block_bits + 1 + 7) // 8
    assert soc_config("crucial-m500-480", {"n_channels": 2}).luns == 1
    p = edited_persona(tmp_path, lambda d: d["controller"].update(dies_per_way=5))
    with pytest.raises(PersonaError) as e:
        rtl_params(p, sdr_fallback=True)
    assert e.value.messages == ["controller.dies_per_way = 5: the flash op's lun field has 2 "
                                "bits (nand_backend n_luns): 1..4 dies per way"]
    with pytest.raises(PersonaError, match="controller.dies_per_way = 5"):
        soc_config(p.path)


def test_default_persona():
    assert rtl_params(load_persona("default"), sdr_fallback=True)["nand_backend"]


def test_nvddr2_channels():
    """An NV-DDR2 persona maps to NV-DDR2 channels (brought up in SDR), its limits on that
    bus at the engine clock, the clock's cap on the mode's rate said; SDR when asked for."""
    p = load_persona("crucial-m500-240")                    # NV-DDR2 mode 6 (333 MT/s)
    r = rtl_params(p, clk_mhz=125.0)
    assert r["nand_backend"]["with_nvddr2"] is True
    assert r["onfi"] == {"interface": "nv-ddr2", "mode": 6, "clk_mhz": 125.0, "sdr_mode": 5}
    assert r["timing"] == engine_registers(5, 125.0)
    assert r["nvddr2_timing"] == nvddr2_engine_registers(6, 125.0)
    assert any("one byte per clock, 125 MT/s" in s for s in r["substitutions"])
    sdr = rtl_params(p, clk_mhz=125.0, sdr_fallback=True)
    assert sdr["onfi"]["interface"] == "sdr" and not sdr["nand_backend"]["with_nvddr2"]
    assert r["limits_mb_s"]["channel_read"] > 2 * sdr["limits_mb_s"]["channel_read"]
    assert r["limits_mb_s"]["channel_read"] <= p.controller.channels * 125.0


BIG, SMALL = "imft-20nm-mlc-128gbit", "imft-20nm-mlc-64gbit"


def test_two_part_types():
    """intel-750-400g: refused at full size naming its row geometry (512 vs 256 pages per
    block, 1024 vs 2048 blocks per plane: the back end's geometry register is one); built at
    the simulation's 16 x 16 with the 64 Gbit part on way 1 of channels 6-17."""
    p = load_persona("intel-750-400g")
    with pytest.raises(PersonaError) as e:
        rtl_params(p)
    assert e.value.messages == [
        f"nand.groups = [{BIG}, {SMALL}]: row geometry differs (pages per block 512 vs 256, "
        "blocks per plane 1024 vs 2048): the back end's geometry register (page_bits, "
        "block_bits, plane_bits) is shared by every die, so mixed parts need the same "
        "planes, pages per block and blocks per plane after the build's scaling (e.g. 16 x "
        "16 as `ssdlab fidelity` builds)"]
    with pytest.raises(PersonaError, match="row geometry differs \\(pages per block 512 vs "
                       "256\\)"):                         # blocks per plane alike, pages not
        rtl_params(p.scaled(blocks_per_plane=16))
    r = rtl_params(p.scaled(blocks_per_plane=16), clk_mhz=125.0, pages_per_block=16)
    assert r["parts"] == {"main": BIG, "part2": SMALL,
                          "part2_targets": [(c, 1) for c in range(6, 18)]}
    assert r["geometry"] == {"page_bits": 4, "block_bits": 5, "plane_bits": 1}
    assert r["nand_backend"]["max_len"] == 16384 + 1024       # the main part's page + spare
    assert f"two part types: {BIG} (16384 B pages) on way 0 of channels 0-17, way 1 of " \
        f"channels 0-5, {SMALL} (8192 B pages) on way 1 of channels 6-17; one row geometry " \
        "(16 pages per block, 16 blocks per plane, 2 planes)" in r["notes"]
    assert rtl_params(load_persona("default"))["parts"]["part2"] is None


def test_two_part_types_refused(tmp_path):
    """The small part on channel 0 way 0 (the main part's target), a third part type and
    more targets than the ident bitmap holds are refused naming nand.groups and the limit."""
    def swap(d):        # same die counts, the 64 Gbit part on (0, 0) and on (7..17, 1)
        d["nand"]["groups"] = [
            {"part": BIG, "channels": "1-17", "ways": [0]},
            {"part": SMALL, "channels": "0", "ways": [0]},
            {"part": BIG, "channels": "0-6", "ways": [1]},
            {"part": SMALL, "channels": "7-17", "ways": [1]}]
    p = edited_persona(tmp_path, swap, base="intel-750-400g")
    with pytest.raises(PersonaError) as e:
        rtl_params(p.scaled(blocks_per_plane=16), pages_per_block=16)
    assert e.value.messages == [
        f"nand.groups = [{BIG}, {SMALL}]: the part on channel 0 way 0 ({SMALL}, 8192 + 512 B "
        f"pages) is the main part and its page must be the larger or equal ({BIG}: 16384 + "
        "1024 B): the firmware's checkpoint area is on die 0 and the buffer's plane stride "
        "is the main part's"]

    def three(d):
        d["nand"]["groups"][1]["part"] = "imft-25nm-mlc-64gbit"      # channels 0-5 way 1
    p = edited_persona(tmp_path, three, base="intel-750-400g")
    with pytest.raises(PersonaError) as e:
        rtl_params(p.scaled(blocks_per_plane=16), pages_per_block=16)
    assert e.value.messages == [
        f"nand.groups = [{BIG}, imft-25nm-mlc-64gbit, {SMALL}]: 3 part types; at most two "
        "per drive (the main part on channel 0 way 0 and one more, SocConfig part2)"]

    def wide(d):        # 18 x 4 = 72 targets: more than the ident bitmap's 64
        d["controller"]["ways_per_channel"] = 4
        d["nand"]["groups"].append({"part": BIG, "channels": "0-17", "ways": [2, 3]})
    p = edited_persona(tmp_path, wide, base="intel-750-400g")
    with pytest.raises(PersonaError) as e:
        rtl_params(p.scaled(blocks_per_plane=16), pages_per_block=16)
    assert e.value.messages == [
        f"nand.groups = [{BIG}, {SMALL}]: two part types on 18 x 4 targets: at most 64 (the "
        "firmware's part2 target bitmap, SsdlabIdent part2_mask_lo/hi)"]


def test_rtl_params_refused(tmp_path):

    def edit(d):
        d["controller"]["channels"] = 40
        d["nand"]["groups"][0]["channels"] = "0-39"
        d["controller"]["ways_per_channel"] = 12
        d["nand"]["groups"][0]["ways"] = "0-11"
        d["host"]["io_queues"] = 128
    p = edited_persona(tmp_path, edit)
    with pytest.raises(PersonaError) as e:
        rtl_params(p, sdr_fallback=True)
    assert e.value.messages == [
        "controller.channels = 40: nand_backend supports 1..32 channels "
        "(rtl/nand/nand_backend.py)",
        "controller.ways_per_channel = 12: nand_backend supports 1..8 ways (n_ways)",
        "host.io_queues = 128: NvmeController n_io_queues is 1..64"]


# -- the host link ---------------------------------------------------------------------------

@pytest.mark.parametrize("gen, lanes", [(5, 16), (4, 8)])
def test_link_the_front_end_cannot_build(tmp_path, gen, lanes):
    """A link no LitePCIe data path carries: rtl_params, link_params and soc_config refuse it,
    naming host.pcie_gen / host.pcie_lanes and the supported range."""
    from soc.persona_params import link_params
    from soc.sim_config import soc_config
    p = edited_persona(tmp_path, lambda d: d["host"].update(pcie_gen=gen, pcie_lanes=lanes))
    assert p.host.pcie_gen == gen                   # a valid description of a drive
    want = f"host.pcie_gen = {gen}, host.pcie_lanes = {lanes}: the link carries"
    for call in (lambda: rtl_params(p, sdr_fallback=True), lambda: link_params(p),
                 lambda: soc_config(p.path)):
        with pytest.raises(PersonaError) as e:
            call()
        msg = str(e.value)
        assert want in msg and "supported up to Gen1 x16, Gen2 x16, Gen3 x8, Gen4 x4, " \
            "Gen5 x2" in msg, msg
        assert msg.startswith(f"{p.path}: ") or "bad.yaml: " in msg


def test_link_params_and_soc_config():
    from soc.persona_params import link_params
    from soc.sim_config import soc_config
    r = rtl_params(load_persona("intel-750-1.2t"), sdr_fallback=True)["host_link"]
    assert (r["pcie_data_width"], r["clk_mhz"], r["mps"], r["mrrs"]) == (512, 125.0, 256, 512)
    assert r["read_mb_s"] == pytest.approx(3643.4, abs=0.05)
    lk = link_params(load_persona("kioxia-cm6v-3.2t"))
    assert (lk["pcie_data_width"], lk["clk_hz"]) == (512, 250e6)
    c = soc_config("kioxia-cm6v-3.2t", blocks_per_plane=4, pages_per_block=16).as_dict()
    assert (c["host_interface"], c["pcie_gen"], c["pcie_lanes"], c["pcie_data_width"],
            c["sys_clk_freq"], c["link_mb_s_cap"]) == ("nvme", 4, 4, 512, 250e6, None)
    assert c["mqes"] == 4095                    # queue_depth 4096
    assert soc_config("default").mqes == 1023   # samsung-950pro-512: 1024 entries
    # a board keeps its own clock
    assert soc_config("intel-750-1.2t", sys_clk_freq=100e6).sys_clk_freq == 100e6
    # SATA: NVMe with NCQ's one queue of 32 commands (33 entries) behind the persona's cap,
    # 64 bits at 125 MHz
    c = soc_config("crucial-m500-240", {"n_channels": 2}).as_dict()
    assert (c["host_interface"], c["link_mb_s_cap"], c["n_io_queues"], c["mqes"],
            c["pcie_data_width"], c["sys_clk_freq"], c["mps"], c["mrrs"],
            c["read_latency_ns"]) == ("sata", 550, 1, 32, 64, 125e6, 256, 512, 400)
    assert any("host link: SATA, payload capped at 550 MB/s" in n for n in c["notes"])


def test_sata_ncq(tmp_path):
    def edit(d):
        d["host"].update(interface="sata", pcie_gen=None, pcie_lanes=None, sata_mb_s=550,
                         io_queues=4)
    p = edited_persona(tmp_path, edit)
    with pytest.raises(PersonaError, match=r"host.io_queues = 4 \(queue_depth 4096\): a SATA "
                       r"drive has NCQ: 1 queue of 32"):
        rtl_params(p, sdr_fallback=True)
