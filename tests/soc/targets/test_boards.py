# SPDX-License-Identifier: BSD-2-Clause
"""Board targets (soc/targets, issue 7): every board generates, its top lints, its committed
constraints are what the target generates, and the PCIe function is the NVMe one. The cards
without NAND (sqrl_acorn, sqrl_xcu1525) carry nand_emulators on their DDR: the PHY, the
emulators, the DDR pins and the firmware's liblitedram initialisation are checked.

Nothing here runs Vivado or touches a card: what is checked is what can be checked without
them (soc/targets/README.md lists the rest). The resource estimate (Yosys synth_xilinx of a
whole board SoC, tens of minutes each) is the full tier.
"""

import json
import re
from pathlib import Path

import pytest
import ssdlab_harness
from litex.gen.signal import Open

from rtl.nvme.nvme_msix import PBA_OFFSET as MSIX_PBA_OFFSET
from rtl.nvme.nvme_msix import TABLE_OFFSET as MSIX_TABLE_OFFSET
from soc.ssdlab_soc import NVME_PCIE
from soc.targets import BOARDS, get_board
from soc.targets.board import channels_ways, onfi_pin_count
from sw.ssdlab.flows.board import GROUPS, check_ports, generate, lint, port_widths

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / "build" / "sim" / "boards"


@pytest.fixture(scope="module")
def generated():
    """{board: (soc, out)}, each generated once (no firmware: no RISC-V toolchain needed)."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = generate(name, BUILD / name, firmware=False, quiet=True)
        return cache[name]
    return get


# Linting a whole SoC takes up to a minute a board: two boards (a 7-series and an UltraScale
# card) in the smoke tier, every board in the full tier.
LINT_SMOKE = ("xilinx_ac701", "xilinx_kcu105")


@pytest.mark.parametrize("name", [
    pytest.param(b, marks=pytest.mark.smoke if b in LINT_SMOKE else pytest.mark.full)
    for b in BOARDS])
def test_board_generates_and_lints(generated, name):
    soc, out = generated(name)
    b = get_board(name)
    gw = out / "gateware"
    for f in ("ssdlab_soc.v", "nand_subsystem.v", "ssdlab_soc.tcl", "build_ssdlab_soc.sh"):
        assert (gw / f).exists(), f"{name}: {f} not generated"
    assert (gw / "onfi_board_phy.v").exists() == (b.onfi in ("xilinx7", "xilinxus",
                                                            "xilinxusp"))
    # The committed split constraints are the target's, and the TCL reads exactly them.
    assert not soc.stale_constraints, f"{name}: stale {soc.stale_constraints}: run " \
        f"ssdlab board build --board {name} --update-constraints"
    tcl = (gw / "ssdlab_soc.tcl").read_text()
    reads = re.findall(r"^read_xdc \{(.*)\}$", tcl, re.M)
    assert reads == [str(REPO / "constraints" / name / f"{g}.xdc") for g in GROUPS]
    ok, text = lint(soc, out, str(ssdlab_harness.verilator()))
    assert ok, f"{name}: lint failed:\n{text[-6000:]}"


@pytest.mark.smoke
@pytest.mark.parametrize("name", BOARDS)
def test_board_pcie_function(generated, name):
    """The hard IP is configured as the NVMe function of NVME_PCIE."""
    soc, out = generated(name)
    tcl = (out / "gateware" / "ssdlab_soc.tcl").read_text()
    cfg = dict(re.findall(r"^CONFIG\.(\w+) \{(.*)\} \\$", tcl, re.M))
    vid, did = f"{NVME_PCIE['vendor_id']:04X}", f"{NVME_PCIE['device_id']:04X}"
    kib = str(NVME_PCIE["bar0_size"] // 1024)
    if get_board(name).phy == "s7":
        assert (cfg["Class_Code_Base"], cfg["Class_Code_Sub"], cfg["Class_Code_Interface"]) \
            == ("01", "08", "02")
        assert (cfg["Vendor_ID"], cfg["Device_ID"]) == (vid, did)
        assert (cfg["Bar0_64bit"], cfg["Bar0_Scale"], cfg["Bar0_Size"]) == \
            ("True", "Kilobytes", kib)
        assert cfg["Multiple_Message_Capable"] == f"{NVME_PCIE['msi_vectors']}_vectors"
        # MSI-X beside MSI: the table (one entry a vector) and PBA where nvme_msix decodes
        # them, and Message Control's bits reach the front end.
        n_vec = soc.cfg.n_io_queues + 1
        assert (cfg["MSIx_Enabled"], cfg["MSIx_Table_Size"], cfg["MSIx_Table_BIR"],
                cfg["MSIx_Table_Offset"], cfg["MSIx_PBA_BIR"], cfg["MSIx_PBA_Offset"]) == \
            ("True", f"{n_vec:X}", "BAR_0", f"{MSIX_TABLE_OFFSET:X}", "BAR_0",
             f"{MSIX_PBA_OFFSET:X}")
        assert "MSI_Enabled" not in cfg or cfg["MSI_Enabled"] == "True"
        assert soc.nvme.msix.n_vectors == n_vec
        assert not isinstance(soc.pcie_phy.pcie_phy_params["o_cfg_interrupt_msixfm"], Open)
    else:
        assert cfg["PF0_CLASS_CODE"] == "010802"
        assert (cfg["vendor_id"], cfg["PF0_DEVICE_ID"]) == (vid, did)
        assert (cfg["pf0_bar0_64bit"], cfg["pf0_bar0_scale"], cfg["pf0_bar0_size"]) == \
            ("True", "Kilobytes", kib)
        assert cfg["PF0_MSI_CAP_MULTIMSGCAP"] == "8_vectors"
        assert not hasattr(soc.nvme, "msix"), "MSI-X without the PHY carrying it"
    # BAR0 as the depacketizer decodes it, and the NVMe front end's doorbells fit.
    assert soc.pcie_phy.bar0_size == NVME_PCIE["bar0_size"] >= 0x2000


@pytest.mark.smoke
@pytest.mark.parametrize("name", BOARDS)
def test_board_onfi_pins(generated, name):
    """The daughter card's channels x ways fit the connector pins the target names, and the
    build uses that count."""
    soc, out = generated(name)
    b = get_board(name)
    cfg = json.loads((out / "config.json").read_text())
    if b.onfi is None:
        assert not (REPO / "constraints" / name / "onfi.xdc").read_text().count("LOC")
        return
    pins = b.onfi_pins()
    assert len(set(pins)) == len(pins)
    assert (cfg["n_channels"], cfg["n_ways"]) == channels_ways(len(pins), b.n_ways)
    assert cfg["n_channels"] * onfi_pin_count(cfg["n_ways"]) <= len(pins)
    xdc = (REPO / "constraints" / name / "onfi.xdc").read_text()
    locs = re.findall(r"^set_property LOC (\S+)", xdc, re.M)
    assert len(locs) == len(set(locs)) == cfg["n_channels"] * onfi_pin_count(cfg["n_ways"])


@pytest.mark.smoke
def test_pcie_function_one_source():
    """NVME_PCIE is what the simulation's host model presents, what the firmware's
    Identify Controller reports as VID/SSVID and what the vfio-user server presents."""
    import inspect

    from pcie_tb import NVME_CLASS_CODE, NvmeBridgeDevice
    defaults = {k: v.default for k, v in
                inspect.signature(NvmeBridgeDevice.__init__).parameters.items()}
    assert NVME_CLASS_CODE == NVME_PCIE["class_code"]
    for k in ("bar0_size", "vendor_id", "device_id", "msi_vectors"):
        assert defaults[k] == NVME_PCIE[k], k
    admin = (REPO / "sw" / "firmware" / "admin.c").read_text()
    vid = f"0x{NVME_PCIE['vendor_id']:04X}"
    assert re.search(rf"#define PCI_VID {vid}\b", admin)
    assert re.search(r"put_le\(IDC\(VID\), 2, PCI_VID\);", admin)
    assert re.search(r"put_le\(IDC\(SSVID\), 2, PCI_VID\);", admin)
    # the vfio-user server presents the same function to a virtual machine
    server = (REPO / "sim" / "vm_bridge" / "vfio_user_server.c").read_text()
    for name, key in (("DRIVE_VENDOR_ID", "vendor_id"), ("DRIVE_DEVICE_ID", "device_id"),
                      ("DRIVE_BAR0_BYTES", "bar0_size")):
        assert re.search(rf"#define {name} +0x{NVME_PCIE[key]:X}u\b", server, re.I), name


@pytest.mark.smoke
def test_check_ports_catches_a_width_mismatch(generated, monkeypatch):
    """check_ports is not vacuous: a declared width that differs from the connection fails."""
    soc, out = generated("xilinx_ac701")
    assert check_ports(soc, out) == []
    real = port_widths

    def narrow(text, module):
        d = real(text, module)
        if module == "onfi_board_phy":
            d["ch__ce_n"] = ("input", 1)
        return d
    monkeypatch.setattr("sw.ssdlab.flows.board.port_widths", narrow)
    problems = check_ports(soc, out)
    assert problems and all("ch__ce_n" in p for p in problems)


@pytest.mark.full
@pytest.mark.parametrize("name", BOARDS)
def test_board_resources(name):
    """Yosys synth_xilinx of the whole board SoC (tens of minutes): within the part."""
    from sw.ssdlab.flows.board_synth import synth_board
    # Yosys 0.70 cannot map this SoC's LUT RAMs for UltraScale(+) (sw/ssdlab/flows/board_synth.py).
    r = synth_board(name, yosys_opts="" if get_board(name).family == "xc7" else "-nolutram")
    cap = get_board(name).capacity
    for k in ("lut", "ff", "bram18", "dsp"):
        assert r[k] <= cap[k], f"{name}: {k} {r[k]} > {cap[k]}"


@pytest.mark.smoke
def test_build_without_vivado_stops_after_generation(tmp_path, monkeypatch, capsys):
    """`make bitstream` on a machine without Vivado: exit status 0, the generated files named
    and what needs Vivado said."""
    from sw.ssdlab.flows import board as board_flow
    monkeypatch.setattr(board_flow, "have_vivado", lambda: False)
    out = BUILD / "cli-sqrl_acorn"
    rc = board_flow.build_board("sqrl_acorn", firmware=False, out=out)
    text = capsys.readouterr().out
    assert rc == 0
    assert "Vivado not found" in text and "bitstream need Vivado" in text
    for f in ("gateware/ssdlab_soc.v", "gateware/ssdlab_soc.tcl", "constraints/pcie.xdc"):
        assert f"  {f}" in text and (out / f).exists()
    assert not (out / "gateware" / "ssdlab_soc.bit").exists()


# The NAND emulator on the cards without NAND (board DDR) -----------------------------------

EMULATED = [n for n in BOARDS if get_board(n).emulated()]
DDR_CELLS = {"A7DDRPHY": ("ISERDESE2", "OSERDESE2", "IDELAYE2"),
             "USPDDRPHY": ("ISERDESE3", "OSERDESE3", "IDELAYE3")}


def _cells(verilog, cell):
    """Instances of module `cell` in LiteX's flat top (`<cell> [#(...)] <name> (`)."""
    return len(re.findall(rf"^{cell}\s+(?:#\(|\w+\s*\()", verilog, re.M))


@pytest.mark.smoke
def test_emulated_boards_are_the_cards_without_nand():
    """The boards without a NAND connector carry the emulator on their DDR; the daughter-card
    boards keep their ONFI pins."""
    assert set(EMULATED) == {"sqrl_acorn", "sqrl_xcu1525"}
    for name in BOARDS:
        b = get_board(name)
        assert b.emulated() == (b.onfi is None)


@pytest.mark.smoke
@pytest.mark.parametrize("name", EMULATED)
def test_board_ddr_phy_and_emulators(generated, name):
    """The generated design has the board's LiteDRAM PHY on its `ddram` pads (the PHY's I/O
    primitives, one ISERDES a DQ bit, IDELAYCTRL), one nand_emulator per channel on the
    DRAM, LiteX's DFII/PHY/BIST CSRs for liblitedram, and the emulators' pages fit the DRAM."""
    soc, out = generated(name)
    b = get_board(name)
    cfg = json.loads((out / "config.json").read_text())
    assert cfg["nand_model"] == "emulator" and cfg["n_channels"] == b.soc["n_channels"]
    top = (out / "gateware" / "ssdlab_soc.v").read_text()
    assert (out / "gateware" / "nand_emulator.v").exists()
    emus = re.findall(r"^nand_emulator\s+nand_emu(\d+)\s*\(", top, re.M)
    assert sorted(map(int, emus)) == list(range(cfg["n_channels"]))
    phy = (out / "software" / "include" / "generated" / "sdram_phy.h").read_text()
    assert f"#define SDRAM_PHY_{b.ddr.phy}\n" in phy
    databits = int(re.search(r"#define SDRAM_PHY_DATABITS (\d+)", phy)[1])
    iserdes, oserdes, idelay = DDR_CELLS[b.ddr.phy]
    assert _cells(top, iserdes) == databits
    assert _cells(top, oserdes) > databits and _cells(top, idelay) >= databits
    assert _cells(top, "IDELAYCTRL") == 1
    csr = (out / "software" / "include" / "generated" / "csr.h").read_text()
    for bank in ("SDRAM", "DDRPHY", "SDRAM_GENERATOR", "SDRAM_CHECKER",
                 "NAND_EMULATOR_STATUS"):
        assert f"#define CSR_{bank}_BASE " in csr, bank
    # the emulators' region (exported for the firmware's BIST) fits the board's DRAM
    geom = soc.sdram.controller.settings.geom
    size = (1 << (geom.bankbits + geom.rowbits + geom.colbits)) * databits // 8
    soc_h = (out / "software" / "include" / "generated" / "soc.h").read_text()
    used = int(re.search(r"#define NAND_EMULATION_DRAM_BYTES (\d+)", soc_h)[1])
    assert used == soc.nand_emulation.dram_bytes and 0 < used <= size


@pytest.mark.smoke
@pytest.mark.parametrize("name", EMULATED)
def test_board_ddr_pins_in_ddr_xdc(generated, name):
    """ddr.xdc places every pin of the platform's `ddram` resource the board uses, and no
    other group does: as generated, and as committed in constraints/<board>/."""
    soc, out = generated(name)
    b = get_board(name)
    want = set()
    for res in b.platform._io:
        if res[0] == "ddram" and res[1] == b.ddr.channel:
            for sub in res[2:]:
                for c in getattr(sub, "constraints", []):
                    if type(c).__name__ == "Pins":
                        want |= set(c.identifiers)
    for where in (out / "constraints", REPO / "constraints" / name):
        xdc = {g: (where / f"{g}.xdc").read_text() for g in GROUPS}
        locs = re.findall(r"^set_property LOC (\S+) \[get_ports \{?ddram", xdc["ddr"], re.M)
        assert want and set(locs) == want and len(locs) == len(want), where
        for g in GROUPS:
            if g != "ddr":
                assert "ddram" not in xdc[g], (where, g)


@pytest.mark.smoke
@pytest.mark.parametrize("name", ["xilinx_ac701", "xilinx_kcu105"])
def test_onfi_boards_have_no_emulator(generated, name):
    """The daughter-card boards keep their ONFI pins: no emulator, no DDR."""
    soc, out = generated(name)
    top = (out / "gateware" / "ssdlab_soc.v").read_text()
    assert "nand_emulator" not in top and not hasattr(soc, "sdram")
    assert "LOC" not in (REPO / "constraints" / name / "ddr.xdc").read_text()


def _riscv_gcc():
    import shutil
    return shutil.which("riscv64-unknown-elf-gcc")


@pytest.mark.smoke
@pytest.mark.skipif(not _riscv_gcc(), reason="no RISC-V toolchain (riscv64-unknown-elf-gcc)")
@pytest.mark.parametrize("name", [*EMULATED, "xilinx_ac701"])
def test_board_firmware_links_dram_init(generated, name, tmp_path):
    """The firmware built against a board's headers links liblitedram's sdram_init and BIST
    test into dram_init (with --gc-sections only what main reaches stays) when the SoC has
    the DDR, and nothing of it otherwise. dram_init itself is not looked for: the link-time
    optimiser inlines it into main; liblitedram, compiled apart, keeps its symbols."""
    import subprocess
    soc, out = generated(name)
    fw = tmp_path / "firmware"                      # a fresh build: make tracks no flags
    subprocess.run(["make", "-C", str(REPO / "sw" / "firmware"), "-s", f"BUILD={fw}",
                    f"GEN_INC={out / 'software' / 'include'}"], check=True,
                   stdout=subprocess.DEVNULL)
    syms = subprocess.run(["riscv64-unknown-elf-nm", str(fw / "firmware.elf")], check=True,
                          capture_output=True, text=True).stdout
    defined = {line.split()[-1] for line in syms.splitlines() if line.split()[-2] in "Tt"}
    litedram = {"sdram_init", "sdram_hw_test", "sdram_read_leveling", "sdram_leveling"}
    if get_board(name).emulated():
        assert litedram <= defined
    else:
        assert not litedram & defined


@pytest.mark.smoke
def test_emulated_nand_must_fit_the_board_dram(tmp_path):
    """More emulated pages than the board's DRAM holds stop the build with a message."""
    from dataclasses import replace
    b = get_board("sqrl_acorn")
    big = replace(b, soc=dict(b.soc, pages_per_block=256))     # the part's full 256
    with pytest.raises(ValueError, match=r"needs \d+ MiB of DRAM, the DRAM holds 1024 MiB"):
        generate(big, tmp_path / "big", firmware=False, quiet=True)


# The 7-series card in the smoke tier; the UltraScale one (the same channels, its PHY the
# other ONFI PHY: about two minutes) in the full tier, to keep the smoke tier in its budget.
@pytest.mark.parametrize("name", [pytest.param("xilinx_ac701", marks=pytest.mark.smoke),
                                  pytest.param("xilinx_kcu105", marks=pytest.mark.full)])
def test_board_nvddr2(name, tmp_path):
    """An NV-DDR2 persona on a board with an ONFI PHY: the channels carry both engines and
    go to the PHY as its engine-side interface (both phases, DQS capture) and its DQS delay
    comes from the channel's calibration; the firmware sees the mode to switch to, the
    engine and calibration CSRs; the top lints clean. A
    board without ONFI pads (the emulators speak SDR) keeps the SDR fallback."""
    soc, out = generate(name, tmp_path / name, persona="crucial-m500-240", firmware=False,
                        quiet=True)
    assert soc.cfg.nvddr2_mode == 6 and soc.cfg.onfi_mode == 5     # the persona's; SDR first
    assert soc.flash.with_nvddr2
    csr = (out / "software" / "include" / "generated" / "csr.h").read_text()
    for reg in ("CSR_FW_NVDDR2_ADDR", "CSR_FW_DQS_CAL_START_ADDR", "CSR_FW_DQS_CAL_OK_ADDR",
                "CSR_FW_DQS_CAL_RESULT_ADDR",
                "CSR_SSDLAB_IDENT_NVDDR2_MODE_ADDR"):
        assert f"#define {reg}" in csr, reg
    phy_v = (out / "gateware" / "onfi_board_phy.v").read_text()
    assert re.search(r"input \[15:0\] ch__dq_o;", phy_v) and "output [15:0] ch__rx_data" in \
        phy_v and re.search(r"input \[\d\:0\] dqs_delay;", phy_v)
    ok, text = lint(soc, out, str(ssdlab_harness.verilator()))
    assert ok, f"{name}: lint failed:\n{text[-6000:]}"
    from sw.ssdlab.flows.board import board_config
    assert board_config(get_board("sqrl_acorn"), "crucial-m500-240").nvddr2_mode is None
