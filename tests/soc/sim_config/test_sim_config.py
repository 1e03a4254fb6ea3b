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
