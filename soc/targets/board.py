# SPDX-License-Identifier: BSD-2-Clause
"""Board targets: what a PCIe FPGA card adds to the board-independent SsdlabSoC.

A target file (soc/targets/<board>.py) is a `Board` record: the litex-boards platform, the
family's LitePCIe PHY (lanes, speed), the clock, the FMC pins that carry the NAND daughter
card, the ONFI pad path of the family, the board's DDR (`BoardDdr`) and the SoC configuration
that fits the part. `BoardSoC` builds the SoC from it: on a card without a NAND connector
(`onfi=None`) with a DDR, the flash channels are answered by nand_emulators on that DDR
(soc/nand_emulation.py; the firmware calibrates it first, sw/firmware/dram_init.c).
sw/ssdlab/flows/board.py generates the Verilog, TCL and the split constraints and runs Vivado when
there is one.

PCIe function (NVME_PCIE in soc/ssdlab_soc.py, the simulation's): class code 01-08-02, BAR0
16 KiB (64-bit, non-prefetchable, so a root complex places it below 4 GiB where LitePCIe's
32-bit request routing reaches it), multiple-message MSI (the hard IPs' cfg_interrupt
interface; the NVMe front end issues vectors through it, it has no MSI-X table).
"""

from dataclasses import dataclass, field

from litex.build.generic_platform import IOStandard, Pins, Subsignal
from litex.gen import LiteXModule
from litex.soc.cores.clock import S7IDELAYCTRL, S7PLL, USMMCM, USPIDELAYCTRL, USPMMCM
from litex.soc.interconnect.csr import CSRStatus
from migen import ClockDomain, Instance, Signal

from rtl.nand.nand_die_scheduler import DQS_CAL_PORTS
from rtl.nvme.nvme_msix import PBA_OFFSET as MSIX_PBA_OFFSET
from rtl.nvme.nvme_msix import TABLE_OFFSET as MSIX_TABLE_OFFSET
from soc.ssdlab_soc import NVME_PCIE, SsdlabSoC

__all__ = ["Board", "BoardDdr", "BoardSoC", "onfi_pin_count", "fmc_pins", "channels_ways"]

# Pins of one ONFI channel on the daughter card: DQ[7:0], DQS, RE#, WE#, CLE, ALE, WP#, and
# per way CE# and R/B#. DQS is wired even though the SDR engine does not use it (NV-DDR2).
ONFI_FIXED_PINS = 8 + 1 + 5


def onfi_pin_count(n_ways):
    return ONFI_FIXED_PINS + 2 * n_ways


@dataclass
class BoardDdr:
    """The board's DDR as litex-boards' own target for the card drives it. phy: "A7DDRPHY"
    (litedram.phy.s7ddrphy, 7-series HR banks, 1:4) or "USPDDRPHY" (litedram.phy.usddrphy,
    UltraScale+); module: a litedram.modules class name (the part on the board, at 1:4);
    memtype: "DDR3" or "DDR4"; channel: the platform's `ddram` index; iodelay_mhz: the
    IDELAYCTRL reference (200 on 7-series, 500 on UltraScale+)."""
    phy: str
    module: str
    memtype: str
    channel: int = 0
    iodelay_mhz: int = 200

    def __post_init__(self):
        if self.phy not in ("A7DDRPHY", "USPDDRPHY"):
            raise ValueError(f"BoardDdr: phy={self.phy!r}: one of A7DDRPHY, USPDDRPHY")
        if self.memtype not in ("DDR3", "DDR4"):
            raise ValueError(f"BoardDdr: memtype={self.memtype!r}: DDR3 or DDR4")


@dataclass
class Board:
    """name: target name (soc/targets/<name>.py); platform: the litex-boards platform module;
    family: Yosys synth_xilinx family (xc7, xcu, xcup); phy: "s7", "us" or "usp"; nlanes,
    speed ("gen2", "gen3", "gen4"); clk: (pad name, MHz); reset: pad name or None; uart: a
    pad name ("serial") or "stub"; fmc: [(connector, (prefixes))] whose single-ended pins carry
    the daughter card, in order; n_ways: ways per channel on the card; onfi: "xilinx7" (the
    7-series ONFI PHY), "xilinxus" / "xilinxusp" (the UltraScale / UltraScale+ ONFI PHY),
    "generic" (plain I/O buffers, SDR only) or None (no connector: the flash channels have no
    pins, or with `ddr` the NAND emulator on it); io_standard: of the ONFI pins (the FMC's VADJ);
    ddr: the board's DDR (BoardDdr) or None; used only when onfi is None, for the emulators;
    capacity: the part's LUT/FF/BRAM18/DSP; soc: SocConfig overrides that fit the part;
    notes: what this board cannot do, said in the README and the build log."""
    name: str
    platform: object
    family: str
    phy: str
    nlanes: int
    speed: str
    clk: tuple
    reset: str | None
    uart: str
    fmc: list
    n_ways: int
    onfi: str | None
    io_standard: str
    capacity: dict
    soc: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    ddr: BoardDdr | None = None

    def emulated(self):
        """The flash channels are nand_emulators on the board's DDR."""
        return self.onfi is None and self.ddr is not None

    def onfi_pins(self):
        """The connector pins for the daughter card, in allocation order."""
        return fmc_pins(self.platform, self.fmc)

    def n_channels(self):
        return channels_ways(len(self.onfi_pins()), self.n_ways)[0] if self.onfi else 0


def fmc_pins(platform_module, fmc):
    """["HPC:LA00_P", ...]: the connectors' single-ended pins whose names start with the given
    prefixes (LA, HA, HB: the FMC user I/O; clock and gigabit pins excluded), sorted by
    prefix then name, for litex's "connector:pin" syntax."""
    connectors = dict(platform_module._connectors)
    pins = []
    for conn, prefixes in fmc:
        names = connectors[conn]
        for prefix in prefixes:
            pins += [f"{conn}:{n}" for n in sorted(names)
                     if n.startswith(prefix) and n[len(prefix):len(prefix) + 2].isdigit()
                     and names[n] not in ("", "None")]
    return pins


def channels_ways(n_pins, n_ways, max_channels=18):
    """(channels, ways) the pins carry at n_ways per channel."""
    return min(max_channels, n_pins // onfi_pin_count(n_ways)), n_ways


# Clocks -------------------------------------------------------------------------------------------

class BoardCRG(LiteXModule):
    """sys (the SoC's clock) from the board oscillator through a PLL/MMCM; on 7-series with
    the ONFI PHY also `idelay` (200 MHz) and the IDELAYCTRL of the PHY's IODELAY_GROUP.

    With the board's DDR in use (Board.emulated()), the clocks its LiteDRAM PHY needs, as
    litex-boards' CRGs for these cards make them: on 7-series (A7DDRPHY) `sys4x` and
    `sys4x_dqs` (4 x sys, the latter 90 degrees later) from the same PLL, `idelay` at 200 MHz
    and LiteX's S7IDELAYCTRL (no IODELAY_GROUP: the PHY's IDELAYE2s have none); on
    UltraScale+ (USPDDRPHY) a 4 x sys MMCM output without buffer, `sys4x` on a BUFGCE and
    `sys` on a BUFGCE_DIV /4 of it (so the OSERDESE3/ISERDESE3 CLK and CLKDIV are aligned),
    `idelay` at 500 MHz and LiteX's USPIDELAYCTRL, which holds sys in reset until the
    IDELAYCTRL is ready."""

    def __init__(self, platform, board, sys_clk_freq):
        self.rst = Signal()
        self.cd_sys = ClockDomain()
        name, mhz = board.clk
        clk = platform.request(name)
        rst = platform.request(board.reset) if board.reset else 0
        ddr = board.ddr if board.emulated() else None
        if ddr and (board.family, ddr.phy) not in (("xc7", "A7DDRPHY"), ("xcup", "USPDDRPHY")):
            raise ValueError(f"{board.name}: the DDR clocking is written for A7DDRPHY on xc7 "
                             f"and USPDDRPHY on xcup, not {ddr.phy} on {board.family}")
        if board.family == "xc7":
            self.pll = pll = S7PLL(speedgrade=-2)
            pll.register_clkin(clk, mhz * 1e6)
            pll.create_clkout(self.cd_sys, sys_clk_freq)
            if ddr:
                self.cd_sys4x = ClockDomain()
                self.cd_sys4x_dqs = ClockDomain()
                self.cd_idelay = ClockDomain()
                pll.create_clkout(self.cd_sys4x, 4 * sys_clk_freq)
                pll.create_clkout(self.cd_sys4x_dqs, 4 * sys_clk_freq, phase=90)
                pll.create_clkout(self.cd_idelay, ddr.iodelay_mhz * 1e6)
                self.idelayctrl = S7IDELAYCTRL(self.cd_idelay)
            if board.onfi == "xilinx7":
                self.cd_idelay = ClockDomain()
                pll.create_clkout(self.cd_idelay, 200e6)
                self.specials += Instance("IDELAYCTRL", attr={("IODELAY_GROUP", "onfi")},
                                          i_REFCLK=self.cd_idelay.clk, i_RST=self.rst,
                                          o_RDY=Signal(name="idelayctrl_rdy"))
        elif ddr:
            self.cd_sys4x = ClockDomain()
            self.cd_pll4x = ClockDomain()
            self.cd_idelay = ClockDomain()
            self.pll = pll = USPMMCM(speedgrade=-2)
            pll.register_clkin(clk, mhz * 1e6)
            pll.create_clkout(self.cd_pll4x, 4 * sys_clk_freq, buf=None, with_reset=False)
            pll.create_clkout(self.cd_idelay, ddr.iodelay_mhz * 1e6)
            self.specials += [
                Instance("BUFGCE_DIV", p_BUFGCE_DIVIDE=4, i_CE=1, i_CLR=0,
                         i_I=self.cd_pll4x.clk, o_O=self.cd_sys.clk),
                Instance("BUFGCE", i_CE=1, i_I=self.cd_pll4x.clk, o_O=self.cd_sys4x.clk),
            ]
            self.idelayctrl = USPIDELAYCTRL(cd_ref=self.cd_idelay, cd_sys=self.cd_sys)
        else:
            self.pll = pll = USMMCM(speedgrade=-2)
            pll.register_clkin(clk, mhz * 1e6)
            pll.create_clkout(self.cd_sys, sys_clk_freq)
        self.comb += pll.reset.eq(rst | self.rst)
        platform.add_false_path_constraints(self.cd_sys.clk, pll.clkin)


# PCIe -----------------------------------------------------------------------------------------

class OneHotMsi(LiteXModule):
    """UltraScale(+) hard IPs take MSI requests one-hot (cfg_interrupt_msi_int[31:0], one bit
    per vector), where the NVMe front end (and 7-series' cfg_interrupt_di) give the vector's
    number. LitePCIe's msi stream carries 8 bits, so 8 vectors: the capability says 8."""

    def __init__(self, phy):
        self.sink = sink = type(phy.msi)(phy.msi.description)
        self.comb += [phy.msi.valid.eq(sink.valid), sink.ready.eq(phy.msi.ready),
                      phy.msi.dat.eq(1 << sink.dat[:3])]


def pcie_phy(platform, board, n_vectors):
    """The family's LitePCIe PHY configured as the NVMe function (NVME_PCIE); n_vectors: the
    front end's interrupt vectors (I/O queues + admin), the MSI-X table size."""
    pads = platform.request(f"pcie_x{board.nlanes}")
    f = NVME_PCIE
    cc = f"{f['class_code']:06X}"
    kib = f["bar0_size"] // 1024
    if board.phy == "s7":
        from litepcie.phy.s7pciephy import S7PCIEPHY
        phy = S7PCIEPHY(platform, pads, data_width=64, bar0_size=f["bar0_size"],
                        msi_type="msi-multi-vector")
        phy.update_config({
            "Vendor_ID": f"{f['vendor_id']:04X}", "Device_ID": f"{f['device_id']:04X}",
            "Subsystem_Vendor_ID": f"{f['vendor_id']:04X}",
            "Subsystem_ID": f"{f['device_id']:04X}",
            "Base_Class_Menu": "Mass_storage_controller",
            "Sub_Class_Interface_Menu": "Other_mass_storage_controller",
            "Class_Code_Base": cc[0:2], "Class_Code_Sub": cc[2:4],
            "Class_Code_Interface": cc[4:6],
            "Bar0_64bit": True, "Bar0_Prefetchable": False,
            "Bar0_Scale": "Kilobytes", "Bar0_Size": kib,
            "MSI_64b": True, "Multiple_Message_Capable": f"{f['msi_vectors']}_vectors",
            # MSI-X beside MSI (Linux's nvme driver takes MSI-X first): the capability is the
            # hard IP's, the table and PBA in BAR0 are the front end's (rtl/nvme/nvme_msix.py)
            # and its messages are memory writes. Sizes and offsets in hex, as LitePCIe's own
            # msi-x configuration gives them.
            "mode_selection": "Advanced",
            "MSIx_Enabled": True, "MSIx_Table_Size": f"{n_vectors:X}",
            "MSIx_Table_BIR": "BAR_0", "MSIx_Table_Offset": f"{MSIX_TABLE_OFFSET:X}",
            "MSIx_PBA_BIR": "BAR_0", "MSIx_PBA_Offset": f"{MSIX_PBA_OFFSET:X}",
        })
        # Message Control's MSI-X Enable and Function Mask into the sys domain for the front
        # end (S7PCIEPHY resyncs the enable for its CSR and leaves the mask open).
        phy.msix_enable = phy._msix_enable.status
        phy.msix_function_mask = Signal()
        phy.pcie_phy_params["o_cfg_interrupt_msixfm"] = phy.add_resync(phy.msix_function_mask,
                                                                       "sys")
        return phy, phy
    if board.phy == "us":
        from litepcie.phy.uspciephy import USPCIEPHY as Phy
    else:
        from litepcie.phy.usppciephy import USPPCIEPHY as Phy
    # The hard IP's AXI4-Stream is 128 bits at x4 (250 MHz); the NVMe front end is 64 bits
    # (LitePCIeFixes), LitePCIe converts.
    phy = Phy(platform, pads, speed=board.speed, data_width=64, pcie_data_width=128,
              bar0_size=f["bar0_size"])
    phy.update_config({
        "PF0_DEVICE_ID": f"{f['device_id']:04X}", "PF0_SUBSYSTEM_ID": f"{f['device_id']:04X}",
        "PF0_SUBSYSTEM_VENDOR_ID": f"{f['vendor_id']:04X}",
        "vendor_id": f"{f['vendor_id']:04X}",
        "PF0_CLASS_CODE": cc,
        "pf0_base_class_menu": "Mass_storage_controller",
        "pf0_class_code_base": cc[0:2], "pf0_class_code_sub": cc[2:4],
        "pf0_class_code_interface": cc[4:6],
        "pf0_bar0_64bit": True, "pf0_bar0_prefetchable": False,
        "pf0_bar0_scale": "Kilobytes", "pf0_bar0_size": kib,
        "PF0_MSI_CAP_MULTIMSGCAP": "8_vectors",
    })
    # The front end sees a PHY whose msi stream takes vector numbers.
    return phy, _MsiProxy(phy)


class _MsiProxy:
    """The PHY as the endpoint and NVMe front end see it, with a vector-number MSI stream."""

    def __init__(self, phy):
        self._phy = phy
        self.onehot = OneHotMsi(phy)
        self.msi = self.onehot.sink

    def __getattr__(self, name):
        return getattr(self._phy, name)


# ONFI pins ----------------------------------------------------------------------------------


def onfi_extension(board, n_channels, n_ways):
    """litex IO records nand_onfi:<c> on the connector pins, allocated channel by channel."""
    pins = board.onfi_pins()
    need = n_channels * onfi_pin_count(n_ways)
    if need > len(pins):
        raise ValueError(f"{board.name}: {n_channels} channels x {n_ways} ways need {need} "
                         f"pins, the connectors carry {len(pins)}")
    # DQS (the NV-DDR2 read strobe, a BUFR clock in onfi_phy_xilinx7) on clock-capable pins
    # (the _CC_P of a pair) while there are some; everything else in connector order.
    cc = [p for p in pins if p.endswith("_CC_P")][:n_channels]
    it = iter([p for p in pins if p not in cc])
    dqs = iter(cc + [next(it) for _ in range(n_channels - len(cc))])

    def take(n):
        return Pins(" ".join(next(it) for _ in range(n)))
    ios = []
    for c in range(n_channels):
        ios.append(("nand_onfi", c,
                    Subsignal("dq", take(8)), Subsignal("dqs", Pins(next(dqs))),
                    Subsignal("re_n", take(1)), Subsignal("we_n", take(1)),
                    Subsignal("cle", take(1)), Subsignal("ale", take(1)),
                    Subsignal("wp_n", take(1)), Subsignal("ce_n", take(n_ways)),
                    Subsignal("rb_n", take(n_ways)),
                    IOStandard(board.io_standard)))
    return ios


class GenericOnfiPads(LiteXModule):
    """One channel's SDR engine pins on plain I/O buffers (the FPGA families without an ONFI
    PHY): outputs straight out, DQ through a tristate buffer sampled by one input register
    (LATENCY 1), R/B# through a two-flop synchroniser. No DQS, so SDR modes only."""
    LATENCY = 1

    def __init__(self, pins, pads):
        from migen import TSTriple
        from migen.genlib.cdc import MultiReg
        t = TSTriple(8)
        self.specials += t.get_tristate(pads.dq), MultiReg(pads.rb_n, pins["rb_n"])
        dq_i = Signal(8)
        self.sync += dq_i.eq(t.i)
        self.comb += [
            t.o.eq(pins["dq_o"]), t.oe.eq(pins["dq_oe"]), pins["dq_i"].eq(dq_i),
            pads.ce_n.eq(pins["ce_n"]), pads.cle.eq(pins["cle"]), pads.ale.eq(pins["ale"]),
            pads.we_n.eq(pins["we_n"]), pads.re_n.eq(pins["re_n"]), pads.wp_n.eq(pins["wp_n"]),
        ]
        # DQS: placed for the daughter card's NV-DDR2 wiring, held high-impedance.
        dqs = TSTriple(1)
        self.specials += dqs.get_tristate(pads.dqs)
        self.comb += [dqs.o.eq(0), dqs.oe.eq(0)]


# DDR and the NAND emulators -------------------------------------------------------------------

class EmulatorStatus(LiteXModule):
    """The emulators' NAND rule violations for the firmware and a lab (CSR `rule_count`):
    on the simulated drive they leave at a top-level port, a card has none to leave by."""

    def __init__(self, rule_count):
        self._rule_count = CSRStatus(32, name="rule_count")
        self.comb += self._rule_count.status.eq(rule_count)


def ddr_phy(platform, board, sys_clk_freq):
    """(LiteDRAM PHY on the board's `ddram` pads, the module at 1:4), as litex-boards'
    target for the card builds them."""
    import litedram.modules
    ddr = board.ddr
    pads = platform.request("ddram", ddr.channel)
    if ddr.phy == "A7DDRPHY":
        from litedram.phy.s7ddrphy import A7DDRPHY
        phy = A7DDRPHY(pads, memtype=ddr.memtype, nphases=4, sys_clk_freq=sys_clk_freq,
                       iodelay_clk_freq=ddr.iodelay_mhz * 1e6)
    else:
        from litedram.phy.usddrphy import USPDDRPHY
        phy = USPDDRPHY(pads, memtype=ddr.memtype, sys_clk_freq=sys_clk_freq,
                        iodelay_clk_freq=ddr.iodelay_mhz * 1e6)
    return phy, getattr(litedram.modules, ddr.module)(sys_clk_freq, "1:4")


# SoC ----------------------------------------------------------------------------------------

class BoardSoC(SsdlabSoC):
    """SsdlabSoC on `board`: its PHY, clock, UART and the ONFI pins on the daughter card.
    build_dir receives nand_subsystem.v and (7-series) onfi_board_phy.v.

    A card without NAND connector but with a DDR (Board.emulated(), cfg.nand_model
    "emulator"): the board's LiteDRAM PHY (`ddrphy`) and core (`sdram`, LiteX's add_sdram
    without a CPU bus region, with its BIST generator and checker) and one nand_emulator per
    channel on the core's crossbar (soc/nand_emulation.py, `nand_emulation`; build_dir also
    receives nand_emulator.v). The CSR names are LiteX's (`sdram_dfii_*`, `ddrphy_*`,
    `sdram_generator_*`, `sdram_checker_*`), so the firmware runs liblitedram on them.
    SsdlabSoC asks `nand_dram()` for the emulators' DRAM: here the board's DDR."""

    def nand_dram(self):
        """The board's LiteDRAM core (PHY `ddrphy`, core `sdram`) for the emulators."""
        self.ddrphy, module = ddr_phy(self.platform, self.board, self.cfg.sys_clk_freq)
        self.add_sdram("sdram", phy=self.ddrphy, module=module, with_bist=True,
                       with_soc_interconnect=False)
        return self.sdram

    def __init__(self, board, cfg, build_dir, rom_init=()):
        from pathlib import Path
        platform = board.platform.Platform()
        self.board = board
        crg = BoardCRG(platform, board, cfg.sys_clk_freq)
        phy, phy_view = pcie_phy(platform, board, cfg.n_io_queues + 1)
        latency = {"xilinx7": 3, "xilinxus": 3, "xilinxusp": 3,
                   "generic": GenericOnfiPads.LATENCY, None: 0}[board.onfi]
        emulated = cfg.nand_model == "emulator"
        from soc.targets.onfi_board_phy import PHYS
        tap_bits = PHYS[board.onfi][1].TAP_BITS if board.onfi in PHYS else 5
        if emulated != board.emulated():
            raise ValueError(f"{board.name}: nand_model={cfg.nand_model!r}, but the board "
                             f"{'has' if board.emulated() else 'has no'} emulator DDR "
                             f"(onfi={board.onfi!r}, ddr={board.ddr!r})")
        SsdlabSoC.__init__(self, platform, cfg, build_dir, rom_init=rom_init,
                           pcie_phy=phy_view, crg=crg, uart_name=board.uart,
                           onfi_phy_latency=latency, onfi_dqs_tap_bits=tap_bits)
        if phy_view is not phy:
            self.pcie_phy = phy                     # the real PHY in the design
            self.pcie_msi = phy_view.onehot
        platform.add_false_path_constraints(crg.cd_sys.clk, phy.cd_pcie.clk)

        # ONFI pins.
        flash = self.flash
        if emulated:
            self.nand_emulator_status = EmulatorStatus(self.nand_emulation.rule_count)
            # The DDR region the firmware's BIST checks after calibration (dram_init.c).
            self.add_constant("NAND_EMULATION_DRAM_BYTES", self.nand_emulation.dram_bytes)
            if board.ddr.phy == "USPDDRPHY":
                # litex-boards' XCU1525 target: a Vivado DRC on the DDR4 pins, not an error.
                platform.add_platform_command(
                    "set_property SEVERITY {{Warning}} [get_drc_checks PDCN-2736]")
            return
        if board.onfi is None:
            # No connector and no DDR: the channels have no pins (reads see FFh).
            for pins in flash.pins:
                self.comb += [pins["dq_i"].eq(0xFF), pins["rb_n"].eq(-1)]
            return
        platform.add_extension(onfi_extension(board, cfg.n_channels, cfg.n_ways))
        if board.onfi != "generic":
            from soc.targets.onfi_board_phy import LATENCY, verilog
            assert LATENCY == latency
            path = Path(build_dir) / "onfi_board_phy.v"
            path.parent.mkdir(parents=True, exist_ok=True)
            text = verilog(cfg.n_ways, board.onfi, nvddr2=flash.with_nvddr2)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            platform.add_source(str(path))
        for c, pins in enumerate(flash.pins):
            pads = platform.request("nand_onfi", c)
            if board.onfi == "generic":
                setattr(self, f"onfi_pads{c}", GenericOnfiPads(pins, pads))
                continue
            # The channel's outputs are the PHY module's inputs; the DQS delay comes from the
            # channel's calibration (NV-DDR2), its results stay in the SoC (FirmwarePorts).
            ins = ("dq_i", "rb_n", "rx_valid", "rx_data")
            conns = {f"{'o' if n in ins else 'i'}_ch__{n}": s for n, s in pins.items()
                     if n not in DQS_CAL_PORTS}
            if flash.with_nvddr2:
                conns.update(i_dqs_delay=pins["dqs_delay"], i_dqs_delay_load=pins["dqs_delay_load"])
            self.specials += Instance(
                "onfi_board_phy", name=f"onfi_phy{c}", i_clk=self.crg.cd_sys.clk,
                i_rst=self.crg.cd_sys.rst, io_dq=pads.dq, io_dqs=pads.dqs, o_re_n=pads.re_n,
                o_we_n=pads.we_n, o_cle=pads.cle, o_ale=pads.ale, o_wp_n=pads.wp_n,
                o_ce_n=pads.ce_n, i_rb_n=pads.rb_n, **conns)
