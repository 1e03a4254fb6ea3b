# SPDX-License-Identifier: BSD-2-Clause
"""The RTL mapping of a drive persona (soc/persona_params.py, `rtl_params`), without a
simulator: the parameters and register values of nand_backend and nvme_controller for a
shipped persona, the SDR fallback of an NV-DDR2 persona, and a refusal naming each persona
field the cores cannot do."""

import pytest
import yaml

from soc.persona_params import rtl_params
from spec.nand_geometry import PARTS
from spec.onfi_timing import engine_registers
from spec.persona import PERSONA_DIR, PersonaError, load_persona

pytestmark = pytest.mark.smoke


def edited_persona(tmp_path, edit):
    """intel-750-1.2t with `edit` applied to its YAML document, loaded from tmp_path."""
    doc = yaml.safe_load((PERSONA_DIR / "intel-750-1.2t.yaml").read_text())
    edit(doc)
    doc["name"] = "bad"
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return load_persona(path)


def test_rtl_params():
    r = rtl_params(load_persona("crucial-m500-240"), sdr_fallback=True)
    g = PARTS["imft-20nm-mlc-128gbit"].geometry
    assert r["nand_backend"] == {"n_channels": 8, "n_ways": 2, "queue_depth": 4,
                                 "max_planes": 2, "max_len": 17408, "row_cycles": 3,
                                 "col_cycles": 2, "timer_width": 8}
    assert r["geometry"] == {"page_bits": 9, "block_bits": g.block_bits, "plane_bits": 1}
    assert r["timing"] == engine_registers(5, 100.0)
    assert r["onfi"] == {"interface": "sdr", "mode": 5, "clk_mhz": 100.0}
    assert r["nvme_controller"] == {"n_io_queues": 1, "max_transfer": 262144, "lbads": 9,
                                    "mqes": 31}
    assert any("nv-ddr2 mode 6" in s for s in r["substitutions"])
    assert r["limits_mb_s"]["channel_read"] < load_persona("crucial-m500-240").flash_limits()[
        "channel_read"]                                     # SDR 5 is slower than NV-DDR2 6


def test_default_persona():
    assert rtl_params(load_persona("default"), sdr_fallback=True)["nand_backend"]


def test_rtl_params_refused(tmp_path):
    with pytest.raises(PersonaError) as e:
        rtl_params(load_persona("intel-750-400g"))
    text = str(e.value)
    assert "nand.groups = [imft-20nm-mlc-128gbit, imft-20nm-mlc-64gbit]: nand_backend shares" \
        in text
    assert "controller.onfi.interface = 'nv-ddr2'" in text and "sdr_fallback" in text

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
