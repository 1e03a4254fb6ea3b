# SPDX-License-Identifier: BSD-2-Clause
"""The simulated drive's generated top (sw/ssdlab/flows/sim_gateware.py `sim_top`) and the
build's identity (soc/ssdlab_soc.py SsdlabIdent) for a drive of two part types
(intel-750-400g at the simulation's 16 x 16 scale): each die model gets its own part's
PART, page, spare and array times; the firmware's part2 target bitmap. No SoC is built: the
top only needs the PHY's ports (none here: an SDR build without MSI-X) and the flash's
interface kind."""

import re
from types import SimpleNamespace

import pytest

from soc.sim_config import soc_config
from soc.ssdlab_soc import SsdlabIdent
from spec.nand_geometry import PARTS
from spec.persona import PersonaError
from sw.ssdlab.flows.sim_gateware import sim_top

pytestmark = pytest.mark.smoke

SMALL, BIG = "imft-20nm-mlc-64gbit", "imft-20nm-mlc-128gbit"


@pytest.fixture(scope="module")
def cfg():
    return soc_config("intel-750-400g", blocks_per_plane=16, pages_per_block=16)


def die_params(top):
    """{(channel, way): {PARAMETER: value text}} of every nand_die_fast in `top`."""
    out = {}
    for params, c, w in re.findall(r"nand_die_fast #\((.*?)\) die_(\d+)_(\d+) \(", top):
        out[(int(c), int(w))] = dict(re.findall(r"\.(\w+)\(([^()]*)\)", params))
    return out


def test_each_die_gets_its_part(cfg):
    soc = SimpleNamespace(pcie_phy=SimpleNamespace(get_ios=list), nvme=SimpleNamespace(),
                          flash=SimpleNamespace(with_nvddr2=False))
    dies = die_params(sim_top(soc, cfg))
    assert len(dies) == 36
    small, big = PARTS[SMALL], PARTS[BIG]
    for (c, w), p in dies.items():
        part = small if w == 1 and c >= 6 else big
        t = part.timing
        assert (p["PART"], p["PAGE_BYTES"], p["SPARE_BYTES"]) == (
            f'"{part.name}"', str(part.geometry.page_bytes),
            str(part.geometry.spare_bytes)), (c, w)
        assert (p["T_R_NS"], p["T_PROG_NS"], p["T_BERS_NS"]) == (
            str(t.t_r_ns), str(t.t_prog_ns), str(t.t_bers_ns)), (c, w)
        assert p["T_PROG_UPPER_TYP_NS"] == str(t.t_prog_upper_typ_ns)
        # the row geometry is the build's, one for every die
        assert (p["PAGES_PER_BLOCK"], p["BLOCKS_PER_PLANE"], p["PLANES"]) == ("16", "16", "2")
    assert dies[(6, 1)]["PAGE_BYTES"] == "8192" and dies[(6, 1)]["PART"] == f'"{SMALL}"'
    assert dies[(0, 1)]["PAGE_BYTES"] == "16384" and dies[(0, 1)]["PART"] == f'"{BIG}"'


def test_ident_part2_bitmap(cfg):
    """part2_page_bytes / part2_spare_bytes and the target bitmap, bit way x n_channels +
    channel, then the ECC's code, the part's read-retry levels and the die-parity stripe, as
    the last ident registers (the others keep their addresses)."""
    ident = SsdlabIdent(soc_config("intel-750-400g", {"ecc": "persona"}, blocks_per_plane=16,
                                   pages_per_block=16))
    csrs = [c.name for c in ident.get_csrs()]                 # in address order
    assert csrs[-10:] == ["persona7", "part2_page_bytes", "part2_spare_bytes",
                          "part2_mask_lo", "part2_mask_hi",
                          "ecc_data_bytes", "ecc_room", "ecc_t", "retry_levels", "parity_stripe"]
    want = sum(1 << (1 * 18 + c) for c in range(6, 18))      # way 1 of channels 6-17
    v = {n: getattr(ident, f"_{n}").status.reset.value for n in csrs[-9:]}
    assert v == {"part2_page_bytes": 8192, "part2_spare_bytes": 512,
                 "part2_mask_lo": want & 0xFFFFFFFF, "part2_mask_hi": want >> 32,
                 # the persona's BCH code (1 KiB + 56 B, t = 32), the part's 8 retry levels
                 "ecc_data_bytes": 1024, "ecc_room": 56, "ecc_t": 32, "retry_levels": 8,
                 # no die parity: its two part types' pages differ (soc/sim_config.py)
                 "parity_stripe": 0}
    assert v["part2_mask_lo"] == 0xFF000000 and v["part2_mask_hi"] == 0xF
    one = SsdlabIdent(soc_config("default", {"n_channels": 2}))
    assert [getattr(one, f"_{n}").status.reset.value for n in csrs[-9:-2]] == [0] * 7
    par = SsdlabIdent(soc_config("intel-750-1.2t", {"n_channels": 4, "n_ways": 1},
                                 blocks_per_plane=16, pages_per_block=16))
    assert par._parity_stripe.status.reset.value == 4


def test_full_size_refused():
    with pytest.raises(PersonaError) as e:
        soc_config("intel-750-400g")
    msg = str(e.value)
    assert f"nand.groups = [{BIG}, {SMALL}]: row geometry differs (pages per block 512 vs " \
        "256, blocks per plane 1024 vs 2048)" in msg, msg


def test_build_key_has_part2(cfg):
    """The drive's build directory (drive-<digest>) differs with part2 and its targets."""
    from soc.ssdlab_soc import SocConfig
    from sw.ssdlab.flows.sim import _digest
    d = {k: v for k, v in cfg.as_dict().items() if k != "fw_slot_first"}   # derived
    keys = {_digest(SocConfig(**{**d, **kw})) for kw in (
        {}, {"part2": None, "part2_targets": ()}, {"part2_targets": d["part2_targets"][1:]},
        {"part2": {**d["part2"], "t_r_ns": 1}})}
    assert len(keys) == 4
