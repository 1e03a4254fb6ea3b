# SPDX-License-Identifier: BSD-2-Clause
"""Generate the simulated drive: the SoC's Verilog, its software headers and the simulation
top that puts a fast NAND die model (sim/nand/cpp/nand_die_fast.sv) on every chip enable.

`build(out, cfg)` writes into `out` (`ssdlab sim build` calls it):
    gateware/ssdlab_soc.v, nand_subsystem.v, *.init   the SoC (LiteX) and the flash subsystem
    gateware/ssdlab_sim_top.sv                        the SoC + the dies (Verilator's top)
    software/include/generated/{csr.h,mem.h,soc.h}    LiteX's headers, for the firmware
    software/include/generated/fw_ports.h             the firmware ports' packing
    config.json                                       the build's parameters
"""

import json
import os
from pathlib import Path

from litex.build.generic_platform import Pins, Subsignal
from litex.build.sim import SimPlatform
from litex.soc.integration.builder import Builder

from rtl.nvme.nvme_msix import PBA_OFFSET as MSIX_PBA_OFFSET
from rtl.nvme.nvme_msix import TABLE_OFFSET as MSIX_TABLE_OFFSET
from soc.ssdlab_soc import SsdlabSoC

__all__ = ["build", "sim_top", "ff_counters"]

ROOT = Path(__file__).resolve().parents[3]

_IO = [
    ("sys_clk", 0, Pins(1)),
    ("sys_rst", 0, Pins(1)),
    ("serial", 0,
        Subsignal("source_valid", Pins(1)), Subsignal("source_ready", Pins(1)),
        Subsignal("source_data", Pins(8)),
        Subsignal("sink_valid", Pins(1)), Subsignal("sink_ready", Pins(1)),
        Subsignal("sink_data", Pins(8))),
]


class DrivePlatform(SimPlatform):
    """LiteX's simulation platform, building only the Verilog (the harness is ours)."""

    def __init__(self):
        SimPlatform.__init__(self, "SIM", list(_IO))
        self.extra_ios = []

    def build(self, fragment, build_dir="build", build_name="ssdlab_soc", **kwargs):
        build_dir = Path(build_dir)
        build_dir.mkdir(parents=True, exist_ok=True)
        self.finalize(fragment)
        ios = set(self.constraint_manager.get_io_signals()) | set(self.extra_ios)
        v = self.get_verilog(fragment, name=build_name, ios=ios)
        cwd = Path.cwd()
        try:
            os.chdir(build_dir)
            v.write(f"{build_name}.v")
        finally:
            os.chdir(cwd)
        return v.ns


def sim_top(soc, cfg):
    """ssdlab_sim_top.sv: the SoC with clock, reset, UART, PCIe PHY ports at the top and one
    nand_die_fast per (channel, way), a target of cfg.luns LUNs: of cfg.part2 on the
    targets in cfg.part2_targets, of the main part (cfg.part) on the others."""
    period_ps = int(round(1e12 / cfg.sys_clk_freq))
    phy_ios = soc.pcie_phy.get_ios()
    ports = ["    input  wire clk,", "    input  wire rst,",
             "    output wire uart_valid,", "    output wire [7:0] uart_data,",
             "    output wire [31:0] nand_rule_violations,",
             "    output wire [31:0] nand_timing_violations,",
             # fast-forward (soc/ssdlab_soc.py, sim/harness/README.md)
             "    output wire ff_quiet,", "    output wire [63:0] ff_wake_at,",
             "    output wire ff_flash_busy,"]
    conns = ["        .sys_clk(clk),", "        .sys_rst(rst_q),",
             "        .serial_source_valid(uart_valid),", "        .serial_source_ready(1'b1),",
             "        .serial_source_data(uart_data),", "        .serial_sink_valid(1'b0),",
             "        .serial_sink_data(8'd0),", "        .serial_sink_ready(),",
             "        .sim_trace(1'b0),", "        .ff_quiet(ff_quiet),",
             "        .ff_wake_at(ff_wake_at),", "        .ff_flash_busy(ff_flash_busy),"]
    # PHY signal directions: what the PHY drives is an output of the top.
    outs = {"s_tlp_tready", "m_tlp_tvalid", "m_tlp_tdata", "m_tlp_tkeep", "m_tlp_tlast",
            "m_msi_valid", "m_msi_data"}
    # The SoC's inputs come from registers loaded at the falling edge, where the harness
    # changes them: cycle for cycle what the SoC saw of the ports, but the logic behind them
    # is evaluated once per cycle in Verilator's NBA region, not in its input-combo region
    # (ico), which runs at each of the two evals of every cycle.
    regs = ["    reg rst_q = 1'b1;  // in reset from the first cycle, as the harness starts",
            "    always @(negedge clk) rst_q <= rst;"]
    for s in phy_ios:
        name = s.name_override or s.backtrace[-1][0]
        d = "output" if name in outs else "input "
        ports.append(f"    {d} wire [{len(s) - 1}:0] {name},")
        if name in outs:
            conns.append(f"        .{name}({name}),")
        else:
            regs += [f"    reg [{len(s) - 1}:0] {name}_q;",
                     f"    always @(negedge clk) {name}_q <= {name};"]
            conns.append(f"        .{name}({name}_q),")
    # The MSI-X capability the harness presents in configuration space (0 vectors: none).
    msix = getattr(soc.nvme, "msix", None)
    msix_consts = [("msix_table_size", 12, msix.n_vectors if msix else 0),
                   ("msix_table_offset", 32, MSIX_TABLE_OFFSET if msix else 0),
                   ("msix_pba_offset", 32, MSIX_PBA_OFFSET if msix else 0)]
    ports += [f"    output wire [{w - 1}:0] {name}," for name, w, _ in msix_consts]
    lines = ["// SPDX-License-Identifier: BSD-2-Clause",
             "// Generated by sw/ssdlab/flows/sim_gateware.py: do not edit.",
             "module ssdlab_sim_top (", *ports]
    lines[-1] = lines[-1].rstrip(",")
    lines.append(");")
    lines += [f"    assign {name} = {w}'d{v};" for name, w, v in msix_consts]
    lines += regs
    if cfg.nand_model == "emulator":
        # the NAND is inside the SoC (soc/nand_emulation.py): no dies, no timing checker
        # no dies, so no timing checker: nand_timing counts the emulators' own failures (a
        # data-out byte not served in time, a write queue overflow: NandEmulation.failures)
        conns.append("        .nand_emulation_rule_count(nand_rule_violations),")
        conns.append("        .nand_emulation_failures(nand_timing_violations)")
        lines += ["    ssdlab_soc soc (", *conns, "    );", "endmodule", ""]
        return "\n".join(lines)
    pins = [("dq_o", 8, "o"), ("dq_oe", 1, "o"), ("dq_i", 8, "i"), ("ce_n", cfg.n_ways, "o"),
            ("cle", 1, "o"), ("ale", 1, "o"), ("we_n", 1, "o"), ("re_n", 1, "o"),
            ("wp_n", 1, "o"), ("rb_n", cfg.n_ways, "i")]
    nvddr2 = soc.flash.with_nvddr2
    phys = []
    if nvddr2:
        # The channels are PHY interfaces: one sim_onfi_phy each (sim_onfi_phy.py) makes the
        # pins, DQS among them; the dies then see pins change at both clock edges.
        from rtl.nand.onfi_phy_if import OnfiPhySignature
        pins += [("dqs_o", 1, "o"), ("dqs_oe", 1, "o"), ("dqs_i", 1, "i")]
        members = OnfiPhySignature(cfg.n_ways).members
        for c in range(cfg.n_channels):
            pconns = ["        .clk(clk), .rst(rst_q),"]
            for name in members:
                width = len(soc.flash.pins[c][name])
                lines.append(f"    wire [{width - 1}:0] ch{c}_phy_{name};")
                conns.append(f"        .nand_ch{c}_{name}(ch{c}_phy_{name}),")
                pconns.append(f"        .ch__{name}(ch{c}_phy_{name}),")
            pconns += [f"        .{pin}(ch{c}_{pin})," for pin, _, _ in pins]
            pconns[-1] = pconns[-1].rstrip(",")
            phys += [f"    sim_onfi_phy phy{c} (", *pconns, "    );"]
    for c in range(cfg.n_channels):
        for pin, width, _ in pins:
            lines.append(f"    wire [{width - 1}:0] ch{c}_{pin};")
            if not nvddr2:
                conns.append(f"        .nand_ch{c}_{pin}(ch{c}_{pin}),")
    conns[-1] = conns[-1].rstrip(",")
    lines += ["    ssdlab_soc soc (", *conns, "    );", *phys]
    rules, timings = [], []
    for c in range(cfg.n_channels):
        for w in range(cfg.n_ways):
            d = f"d{c}_{w}"
            die = c * cfg.n_ways + w            # its seed; DIE_ID channel x 8 + way names it
            # for the harness's fault injection (SB_FAULT), which knows no n_ways
            part = cfg.die_part(c, w)          # the main part's, or part2's on its targets
            lines += [
                f"    wire [7:0] {d}_dq;", f"    wire {d}_rb, {d}_dqs;",
                f"    wire [31:0] {d}_rv, {d}_tv;",
                f"    nand_die_fast #(.CLK_PS({period_ps}), .DIE_ID({c * 8 + w}), "
                f".SEED({die + 1}), "
                f".PART(\"{part['part']}\"), .PAGE_BYTES({part['page_bytes']}), "
                f".SPARE_BYTES({part['spare_bytes']}), "
                f".PAGES_PER_BLOCK({cfg.pages_per_block}), "
                f".BLOCKS_PER_PLANE({cfg.blocks_per_plane}), .PLANES({cfg.planes}), "
                f".LUNS({cfg.luns}), .BITS_PER_CELL({cfg.bits_per_cell}), "
                f".T_R_NS({part['t_r_ns']}), .T_PROG_NS({part['t_prog_ns']}), "
                f".T_BERS_NS({part['t_bers_ns']}), "
                + "".join(f".{k.upper()}({v}), " for k, v in sorted(part["page_timing"].items()))
                + f".TYPICAL({int(cfg.nand_timing == 'typical')}), "
                f".FACTORY_BAD_BLOCK_RATE({cfg.factory_bad_block_rate}), "
                + _bit_error_params(part["part"], cfg.nand_bit_errors) + ".VERBOSE(1), "
                f".DDR_PINS({int(nvddr2)})) die_{c}_{w} (",
                f"        .clk(clk), .rst(rst), .ce_n(ch{c}_ce_n[{w}]), .cle(ch{c}_cle),",
                f"        .ale(ch{c}_ale), .we_n(ch{c}_we_n), .re_n(ch{c}_re_n), "
                f".wp_n(ch{c}_wp_n),",
                f"        .dq_o(ch{c}_dq_o), .dq_oe(ch{c}_dq_oe), .dq_i({d}_dq), .rb_n({d}_rb),",
                (f"        .dqs_o(ch{c}_dqs_o), .dqs_oe(ch{c}_dqs_oe), .dqs_i({d}_dqs),"
                 if nvddr2 else f"        .dqs_o(1'b0), .dqs_oe(1'b0), .dqs_i({d}_dqs),"),
                f"        .rule_violations({d}_rv), .timing_violations({d}_tv));"]
            rules.append(f"{d}_rv")
            timings.append(f"{d}_tv")
        mux = " : ".join(f"!ch{c}_ce_n[{w}] ? d{c}_{w}_dq" for w in range(cfg.n_ways))
        lines.append(f"    assign ch{c}_dq_i = {mux} : 8'hFF;")
        if nvddr2:
            mux = " : ".join(f"!ch{c}_ce_n[{w}] ? d{c}_{w}_dqs" for w in range(cfg.n_ways))
            lines.append(f"    assign ch{c}_dqs_i = {mux} : 1'b0;")
        rb = ", ".join(f"d{c}_{w}_rb" for w in reversed(range(cfg.n_ways)))
        lines.append(f"    assign ch{c}_rb_n = {{{rb}}};")
    lines += [f"    assign nand_rule_violations = {' + '.join(rules)};",
              f"    assign nand_timing_violations = {' + '.join(timings)};", "endmodule", ""]
    return "\n".join(lines)


def _bit_error_params(part, enabled):
    """nand_die_fast's bit-error parameters: the part's BitErrorModel (spec/nand_errors.py),
    with a dict's fields replacing its, when the build's dies flip bits (SocConfig
    nand_bit_errors), else none (an error-free die). The read-retry levels stay the part's
    either way: SET FEATURES 89h is a feature."""
    from dataclasses import replace

    from spec.nand_geometry import PARTS
    model = PARTS[part].bit_errors if part in PARTS else None
    if model is None:
        return ""
    if isinstance(enabled, dict):
        model = replace(model, **enabled)
    params = {"RETRY_LEVELS": model.retry_levels}
    if enabled:
        params.update(RBER_BASE=model.rber_base, RBER_PER_KCYCLE=model.rber_per_kcycle,
                      RBER_EXPONENT=model.exponent, RETENTION_SHIFT=model.retention_shift,
                      RBER_SHIFT=model.rber_shift, RBER_PER_KREAD=model.rber_per_kread)
    return "".join(f".{k}({v!r}), " for k, v in params.items())


def _harness_list(marker):
    """[(module, variable)] of the harness's `// <marker>:` lines."""
    text = (ROOT / "sim" / "harness" / "ssdlab_sim.cpp").read_text()
    lines = [ln for ln in text.splitlines() if ln.strip().startswith(f"// {marker}:")]
    return [tuple(item.split(".")) for ln in lines for item in ln.split(":", 1)[1].split()]


def ff_counters():
    """The free-running counters the harness advances when it jumps over quiet time, as
    [(module, variable)]: the harness's own list (its `// FF_COUNTERS:` lines), so the two
    cannot drift (sim/harness/README.md, "Fast-forward")."""
    return _harness_list("FF_COUNTERS")


def stat_counters():
    """The counters the harness only reads for its statistics (its `// STAT_COUNTERS:` lines:
    the CPU's instructions retired), as [(module, variable)]."""
    return _harness_list("STAT_COUNTERS")


def ff_config():
    """The Verilator configuration file that makes ff_counters() public (and writable) and
    stat_counters() public (read only)."""
    lines = ["`verilator_config", "// Generated by sw/ssdlab/flows/sim_gateware.py: do not edit."]
    lines += [f'public_flat_rw -module "{m}" -var "{v}"' for m, v in ff_counters()]
    lines += [f'public_flat_rd -module "{m}" -var "{v}"' for m, v in stat_counters()]
    return "\n".join(lines) + "\n"


def _write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def build(out, cfg, rom_init=()):
    """Generate everything into `out` (a Path); returns the SoC."""
    out = Path(out)
    gw = out / "gateware"
    platform = DrivePlatform()
    latency = {}
    if cfg.nvddr2_mode is not None and cfg.nand_model == "die":
        # the channels through sim_onfi_phy: the SDR engine samples DQ that much later
        from sw.ssdlab.flows.sim_onfi_phy import LATENCY, verilog
        latency = {"onfi_phy_latency": LATENCY}
        _write(gw / "sim_onfi_phy.v", verilog(cfg.n_ways))
        platform.add_source(str(gw / "sim_onfi_phy.v"))
    soc = SsdlabSoC(platform, cfg, gw, rom_init=rom_init, ecc_gate_clocks=True, **latency)
    platform.extra_ios = soc.extra_ios()
    builder = Builder(soc, output_dir=str(out), gateware_dir=str(gw),
                      software_dir=str(out / "software"), compile_software=False,
                      compile_gateware=True)
    builder.build(build_name="ssdlab_soc")
    _write(gw / "ssdlab_sim_top.sv", sim_top(soc, cfg))
    _write(out / "software" / "include" / "generated" / "fw_ports.h", soc.fw.c_header())
    # LiteX's csr.h includes the CPU's <system.h>; the firmware needs nothing from it.
    _write(out / "software" / "include" / "system.h",
           "/* Generated by sw/ssdlab/flows/sim_gateware.py: csr.h includes <system.h>; "
           "nothing needed. */\n")
    _write(gw / "fast_forward.vlt", ff_config())
    _write(out / "sources.txt", "\n".join([str(Path(p).resolve()) for p, *_ in
                                           platform.sources] + [str(gw / "fast_forward.vlt")])
           + "\n")
    _write(out / "config.json", json.dumps(cfg.as_dict(), indent=2, sort_keys=True) + "\n")
    return soc
