# SPDX-License-Identifier: BSD-2-Clause
"""soc/ftl_read_path.py: which builds get the hardware read path and with what parameters.
Pure Python, no simulation: the
engine itself is tested in tests/ftl/ftl_read_engine, the drive with it in tests/system/drive
(test_integrity_short: reads after a flush take the hardware path)."""

import pytest

from soc.ftl_read_path import DIE_CREDITS, FTAG_BASE, N_FTAGS, engine_params
from soc.sim_config import soc_config
from soc.ssdlab_soc import SocConfig

pytestmark = pytest.mark.smoke


def test_default_drive_gets_it():
    cfg = soc_config("default", blocks_per_plane=16, pages_per_block=16)
    params, why = engine_params(cfg)
    assert why is None and cfg.hw_read
    assert params["n_channels"] == cfg.n_channels and params["n_ways"] == cfg.n_ways
    assert params["units_per_page"] * 4096 == cfg.page_bytes
    assert params["handle_slots"] * 4096 == cfg.max_transfer
    # the engine's flash tags are the top of the 8-bit tag space the firmware leaves it
    assert FTAG_BASE + N_FTAGS == 256 and DIE_CREDITS >= 1


@pytest.mark.parametrize("field, value", [("blocks_per_plane", 12), ("pages_per_block", 24),
                                          ("planes", 3)])
def test_geometry_it_cannot_decode(field, value):
    """A geometry that is not a power of two keeps the firmware path; the reason names the
    engine's parameter."""
    cfg = SocConfig(**{"n_channels": 2, "n_ways": 2, "pages_per_block": 16,
                       "blocks_per_plane": 16, field: value})
    params, why = engine_params(cfg)
    assert params is None
    name = {"blocks_per_plane": "blocks"}.get(field, field)
    assert name in why


def test_hw_read_is_a_bool():
    with pytest.raises(ValueError, match="hw_read"):
        SocConfig(hw_read="yes")


@pytest.mark.smoke
@pytest.mark.parametrize("field,value", [("hw_read_credits", 0), ("hw_read_credits", 9),
                                         ("hw_read_credits", True),
                                         ("hw_read_multi_plane", 1)])
def test_engine_options_checked(field, value):
    with pytest.raises(ValueError, match=field):
        SocConfig(**{field: value})


@pytest.mark.smoke
def test_engine_options_reach_the_engine():
    cfg = soc_config("default", {"n_channels": 2, "hw_read_credits": 3,
                                 "hw_read_multi_plane": False}, blocks_per_plane=16,
                     pages_per_block=16)
    params, why = engine_params(cfg)
    assert why is None and params["die_credits"] == 3 and params["multi_plane"] is False
    cfg = soc_config("default", {"n_channels": 2}, blocks_per_plane=16, pages_per_block=16)
    assert engine_params(cfg)[0]["die_credits"] == DIE_CREDITS
