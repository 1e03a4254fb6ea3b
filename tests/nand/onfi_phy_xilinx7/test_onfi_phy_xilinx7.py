# SPDX-License-Identifier: BSD-2-Clause
"""Smoke tests of onfi_phy_xilinx7, which cannot be simulated here (vendor primitives):

- elaboration across parameters, with the primitives each pad needs (an ODDR behind every
  output pin and every DQ/DQS tri-state, an IDDR per DQ bit, one IDELAYE2 and one BUFR for the
  DQS capture clock, the I/O buffers single-ended or differential as asked) and the pads;
- illegal parameters refused with a message naming the parameter;
- Verilator -Wall lint as `make lint` runs it (with the LINT_BLACKBOXES models).

The engine-side behaviour shared with onfi_phy_xilinxus (OnfiPhyXilinx in onfi_phy_if.py) is
traced pin by pin in tests/nand/onfi_phy_xilinxus/test_onfi_phy_xilinxus.py's netlist test;
the board top that instantiates this PHY is linted by tests/soc/targets/test_boards.py.
"""

import re
from collections import Counter

import pytest
from ssdlab_harness import BUILD_ROOT, AmaranthCore, verilator
from ssdlab_harness import test_id as build_id

from rtl.nand.onfi_phy_xilinx7 import OnfiPhyXilinx7
from sw.ssdlab.flows.lint import lint

CORE = AmaranthCore("rtl.nand.onfi_phy_xilinx7:OnfiPhyXilinx7", toplevel="onfi_phy_xilinx7")
PRIMITIVES = ("ODDR", "IDDR", "IDELAYE2", "BUFR", "IOBUF", "IOBUFDS", "OBUF", "OBUFDS", "IBUF")


def expected_counts(n_ways, diff_dqs, diff_re):
    return {
        "ODDR": 4 + n_ways + 1 + 2 * 8 + 2,       # we/cle/ale/wp, ce_n, re, dq + T, dqs + T
        "IDDR": 8, "IDELAYE2": 1, "BUFR": 1,
        "IOBUF": 8 + (not diff_dqs), "IOBUFDS": int(diff_dqs),
        "OBUF": 4 + n_ways + (not diff_re), "OBUFDS": int(diff_re),
        "IBUF": n_ways,
    }


def primitive_counts(text):
    """Vendor instances in Yosys's Verilog: `  PRIM #(` or `  PRIM name (` at the line start."""
    found = Counter(m[1] for m in re.finditer(r"^  (\w+) (?:#\(|\S+ \()$", text, re.M))
    return {p: found[p] for p in PRIMITIVES}


@pytest.mark.smoke
@pytest.mark.parametrize("n_ways,diff_dqs,diff_re", [(1, False, False), (8, True, True),
                                                     (3, True, False), (5, False, True)])
def test_onfi_phy_xilinx7_elaborate(n_ways, diff_dqs, diff_re):
    text = CORE.with_params(n_ways=n_ways, diff_dqs=diff_dqs, diff_re=diff_re).verilog()
    assert re.search(r"^module onfi_phy_xilinx7\(", text, re.M)
    assert primitive_counts(text) == expected_counts(n_ways, diff_dqs, diff_re)
    pads = ["dq", "we_n", "ce_n", "cle", "ale", "wp_n", "rb_n",
            *(["dqs_p", "dqs_n"] if diff_dqs else ["dqs"]),
            *(["re_p", "re_c"] if diff_re else ["re_n"])]
    header = text[text.index("module onfi_phy_xilinx7("):text.index(");")]
    for pad in pads:
        assert re.search(rf"\b{pad}\b", header), pad
    assert re.search(r"input \[4:0\] dqs_delay;", text)
    assert 'IODELAY_GROUP = "onfi"' in text


@pytest.mark.smoke
@pytest.mark.parametrize("kwargs,field", [
    ({"n_ways": 0}, "n_ways"), ({"n_ways": 9}, "n_ways"), ({"n_ways": True}, "n_ways"),
    ({"dqs_delay_taps": -1}, "dqs_delay_taps"), ({"dqs_delay_taps": 32}, "dqs_delay_taps"),
    ({"dqs_delay_taps": 1.5}, "dqs_delay_taps"), ({"diff_dqs": 1}, "diff_dqs"),
    ({"diff_re": "yes"}, "diff_re"), ({"iodelay_group": ""}, "iodelay_group"),
    ({"iodelay_group": None}, "iodelay_group"),
])
def test_onfi_phy_xilinx7_bad_params(kwargs, field):
    with pytest.raises(ValueError, match=rf"OnfiPhyXilinx7: {field}\b"):
        OnfiPhyXilinx7(**kwargs)


@pytest.mark.smoke
@pytest.mark.parametrize("params", [{}, {"n_ways": 8, "diff_dqs": True, "diff_re": True}],
                         ids=["defaults", "n_ways8-diff"])
def test_onfi_phy_xilinx7_lint(params):
    core = CORE.with_params(**params)
    out = BUILD_ROOT / f"{build_id(core)}-lint"
    out.mkdir(parents=True, exist_ok=True)
    assert lint(core, out, str(verilator()))
