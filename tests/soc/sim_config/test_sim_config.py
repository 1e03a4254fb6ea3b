# SPDX-License-Identifier: BSD-2-Clause
"""soc_config's NAND array times: the persona's part's per page type tR / tPROG go to the
build (`page_timing`) with the corner the dies run (`nand_timing`, typical by default); a tR
or tPROG given as a parameter replaces that op's page types; a bad corner names the field."""

import pytest

from soc.sim_config import soc_config
from soc.ssdlab_soc import PAGE_TIMING_FIELDS, SocConfig
from spec.nand_geometry import PARTS

pytestmark = pytest.mark.smoke


def test_page_timing_from_the_part():
    c = soc_config("samsung-750-evo-250", {"n_channels": 2})
    t = PARTS[c.part].timing
    want = {k: getattr(t, k) for k in PAGE_TIMING_FIELDS if getattr(t, k) is not None}
    assert c.page_timing == want and c.nand_timing == "typical"
    assert {"t_r_middle_typ_ns", "t_prog_middle_ns", "t_prog_middle_typ_ns"} <= set(want)
    assert any("typical tR and tPROG per page type (lower/middle/upper, page % 3)" in n
               for n in c.notes)
    worst = soc_config("samsung-750-evo-250", {"n_channels": 2, "nand_timing": "maximum"})
    assert worst.nand_timing == "maximum" and worst.page_timing == want


def test_a_given_array_time_is_uniform():
    c = soc_config("default", {"n_channels": 2, "t_prog_ns": 500_000})
    assert c.t_prog_ns == 500_000
    assert not any(k.startswith("t_prog_") for k in c.page_timing)
    assert any(k.startswith("t_r_") for k in c.page_timing)
    assert any("t_prog_ns=500000 given" in n for n in c.notes)


def test_bad_corner_and_field():
    with pytest.raises(ValueError, match=r"nand_timing='fast': one of typical, maximum"):
        SocConfig(nand_timing="fast")
    with pytest.raises(ValueError, match=r"page_timing: unknown field\(s\) t_r_top_ns"):
        SocConfig(page_timing={"t_r_top_ns": 5})


# -- two part types (intel-750-400g) ---------------------------------------------------------

BIG, SMALL = "imft-20nm-mlc-128gbit", "imft-20nm-mlc-64gbit"


def test_two_part_types():
    """The 400g at 16 x 16: the 128 Gbit part is the main one, the 64 Gbit part is part2 on
    way 1 of channels 6-17 with its own page, spare and array times; the notes say so."""
    c = soc_config("intel-750-400g", blocks_per_plane=16, pages_per_block=16)
    small = PARTS[SMALL]
    t = small.timing
    assert (c.part, c.page_bytes, c.spare_bytes) == (BIG, 16384, 1024)
    assert c.part2 == {"part": SMALL, "page_bytes": 8192, "spare_bytes": 512,
                       "t_r_ns": t.t_r_ns, "t_prog_ns": t.t_prog_ns, "t_bers_ns": t.t_bers_ns,
                       "page_timing": {k: getattr(t, k) for k in PAGE_TIMING_FIELDS
                                       if getattr(t, k) is not None}}
    assert c.part2_targets == tuple((ch, 1) for ch in range(6, 18))
    assert c.part2_mask() == 0xFFF << 24
    assert c.die_part(6, 1)["page_bytes"] == 8192 and c.die_part(5, 1)["page_bytes"] == 16384
    assert any(f"{SMALL} (8192 B pages) on way 1 of channels 6-17" in n for n in c.notes)
    assert not any("first part type" in n or "not buildable" in n for n in c.notes)
    # one part type: no part2
    one = soc_config("default", {"n_channels": 2})
    assert (one.part2, one.part2_targets, one.part2_mask()) == (None, (), 0)


def test_two_part_types_params():
    """A topology narrowed by params keeps the part2 targets it still has; an emulator build
    has the main part only; a tPROG given as a parameter is every die's."""
    c = soc_config("intel-750-400g", {"n_channels": 8}, blocks_per_plane=16,
                   pages_per_block=16)
    assert c.part2_targets == ((6, 1), (7, 1)) and c.part2_mask() == 0b11 << 14
    c = soc_config("intel-750-400g", {"n_channels": 2}, blocks_per_plane=16,
                   pages_per_block=16)
    assert c.part2 is None and any(f"no target of {SMALL} left" in n for n in c.notes)
    c = soc_config("intel-750-400g", {"nand_model": "emulator"}, blocks_per_plane=16,
                   pages_per_block=16)          # the emulator emulates one part (a board's)
    assert c.part2 is None and c.part2_targets == ()
    assert any(f"the NAND emulator emulates one part, {BIG} on every die" in n
               for n in c.notes)
    c = soc_config("intel-750-400g", {"t_prog_ns": 500_000}, blocks_per_plane=16,
                   pages_per_block=16)
    assert c.part2["t_prog_ns"] == 500_000
    assert not any(k.startswith("t_prog_") for k in c.part2["page_timing"])
    assert any(k.startswith("t_r_") for k in c.part2["page_timing"])


P2 = {"part": SMALL, "page_bytes": 8192, "spare_bytes": 512, "t_r_ns": 1, "t_prog_ns": 2,
      "t_bers_ns": 3}


@pytest.mark.parametrize("kw, err", [
    ({"part2_targets": ((1, 1),)}, "part2_targets given without part2"),
    ({"part2": P2}, "part2 without part2_targets"),
    ({"part2": P2, "part2_targets": ((0, 0), (1, 1))}, r"part2_targets: \(0, 0\) carries "
     "the main part"),
    ({"part2": P2, "part2_targets": ((2, 1),), "n_channels": 2},
     r"\(2, 1\) is outside 2 channels x 2 ways"),
    ({"part2": {**P2, "page_bytes": 32768}, "part2_targets": ((1, 1),)},
     r"part2 page 32768 \+ 512 B: no larger than the main part's 16384 \+ 1024"),
    ({"part2": P2, "part2_targets": ((1, 1),), "nand_model": "emulator"},
     "part2 needs nand_model='die'"),
    ({"part2": P2, "part2_targets": ((1, 1),), "n_channels": 33},
     "part2 with 33 x 2 targets: at most 64"),
    ({"part2": {"part": SMALL, "page_byte": 1}, "part2_targets": ((1, 1),)},
     "unknown field.s. page_byte; missing page_bytes"),
    ({"part2": {**P2, "page_timing": {"t_r_top_ns": 5}}, "part2_targets": ((1, 1),)},
     r"part2 page_timing: unknown field\(s\) t_r_top_ns"),
])
def test_part2_checked(kw, err):
    with pytest.raises(ValueError, match=err):
        SocConfig(**kw)


def test_slc_cache():
    """The persona's SLC cache: policy and native footprint per mille of raw (the full-size
    drive's, so every scale keeps it); none on an emulator build (said in the notes), and
    SocConfig refuses one there or with a bad field, naming it."""
    from soc.sim_config import soc_config
    from soc.ssdlab_soc import SocConfig
    for bpp in (16, 64):
        c = soc_config("samsung-750-evo-250", blocks_per_plane=bpp)
        assert (c.slc_policy, c.slc_permille, c.bits_per_cell) == ("static", 33, 3)
    assert soc_config("default").slc_policy == "none"
    e = soc_config("samsung-750-evo-250", {"nand_model": "emulator"}, blocks_per_plane=16)
    assert e.slc_policy == "none" and any("no SLC mode" in n for n in e.notes), e.notes
    with pytest.raises(ValueError, match="slc_policy='static' needs nand_model='die'"):
        SocConfig(slc_policy="static", slc_permille=33, nand_model="emulator")
    with pytest.raises(ValueError, match="slc_policy='big'"):
        SocConfig(slc_policy="big")
    with pytest.raises(ValueError, match="slc_permille=900"):
        SocConfig(slc_policy="dynamic", slc_permille=900)


def test_ecc_from_the_persona():
    """ecc="persona": a bch persona's code goes to every channel (SocConfig ecc); without it
    none is built and the notes say how to; an ldpc persona builds none and says so, the NAND
    emulator has none; the die models get the part's bit errors only when asked, a dict
    replacing the part's fields."""
    from sw.ssdlab.flows.sim_gateware import _bit_error_params
    c = soc_config("default", {"n_channels": 2, "ecc": "persona"})
    assert c.ecc == {"m": 14, "t": 32, "data_bytes": 1024, "parity_bytes": 56}
    assert c.ecc_page_bytes() == 16 * 1080 <= c.page_bytes + c.spare_bytes
    assert any(n.startswith("ECC: the persona's BCH over GF(2^14), t = 32") for n in c.notes)
    off = soc_config("default", {"n_channels": 2})
    assert off.ecc is None and any("param ecc=persona builds it" in n for n in off.notes)
    ldpc = soc_config("kioxia-cm6v-3.2t", {"n_channels": 2, "ecc": "persona"})
    assert ldpc.ecc is None and any("no ldpc core" in n for n in ldpc.notes)
    emu = soc_config("default", {"n_channels": 2, "nand_model": "emulator", "ecc": "persona"})
    assert emu.ecc is None and any("has no ECC" in n for n in emu.notes)
    assert "RBER_BASE" not in _bit_error_params(c.part, c.nand_bit_errors)
    assert ".RETRY_LEVELS(8)" in _bit_error_params(c.part, False)
    model = PARTS[c.part].bit_errors
    on = _bit_error_params(c.part, True)
    assert f".RBER_BASE({model.rber_base!r})" in on
    assert f".RBER_PER_KCYCLE({model.rber_per_kcycle!r})" in on
    assert ".RBER_BASE(0.001)" in _bit_error_params(c.part, {"rber_base": 1e-3})


@pytest.mark.parametrize("kw, err", [
    ({"ecc": {"m": 14, "t": 32}}, "ecc=.*None or a dict of m, t, data_bytes, parity_bytes"),
    ({"ecc": {"m": 14, "t": 32, "data_bytes": 1000, "parity_bytes": 56}},
     "data_bytes=1000: a power of two"),
    ({"ecc": {"m": 15, "t": 40, "data_bytes": 2048, "parity_bytes": 200}},
     "do not fill the 16384 \\+ 1024 byte page"),
    ({"ecc": {"m": 14, "t": 99, "data_bytes": 1024, "parity_bytes": 56}}, "ecc: BchCode"),
    ({"nand_bit_errors": "yes"}, "nand_bit_errors='yes': True, False or a dict"),
    ({"nand_bit_errors": {"rber": 1e-3}}, "unknown field\\(s\\) rber"),
    ({"nand_bit_errors": {"rber_base": 0.5}}, "rber_base = 0.5: must be a number"),
])
def test_ecc_checked(kw, err):
    with pytest.raises(ValueError, match=err):
        soc_config("default", {"n_channels": 2, **kw})


def test_parity_from_the_persona():
    """die-raid5 reaches the build as parity_stripe: no wider than the simulated dies, a
    persona stripe over 64 dies split evenly (the firmware's limit), none where a stripe
    would mix page sizes (intel-750-400g) or the persona has none; a bad value names the
    field."""
    narrow = soc_config("intel-750-1.2t", {"n_channels": 4, "n_ways": 1})
    assert narrow.parity_stripe == 4
    assert any("stripes of 4 dies (persona: 72; the simulated drive has 4)" in n
               for n in narrow.notes)
    assert soc_config("intel-750-1.2t").parity_stripe == 36
    mixed = soc_config("intel-750-400g", blocks_per_plane=16, pages_per_block=16)
    assert mixed.parity_stripe == 0 and any("16384 and 8192" in n for n in mixed.notes)
    assert soc_config("crucial-m500-960").parity_stripe == 0
    assert soc_config("intel-750-1.2t", {"n_channels": 4, "n_ways": 1,
                                         "parity_stripe": 0}).parity_stripe == 0
    with pytest.raises(ValueError, match="parity_stripe=1"):
        SocConfig(parity_stripe=1)
