# SPDX-License-Identifier: BSD-2-Clause
"""NandEmulation: every flash channel's ONFI pins answered by a nand_emulator on DRAM.

The SoC without NAND dies (SocConfig nand_model="emulator"): one `nand_emulator`
(rtl/nand/nand_emulator.py) per channel, emulating the persona's part (geometry scaled as the
build's, timings, identity) on the channel's ways, each on its own LiteDRAM crossbar port
with its own DRAM region:

    NandFlash ch<c> pins ── nand_emulator (c) ── crossbar port c ── LiteDRAMCore ── DDR PHY

The DRAM comes from the caller. The simulated drive (SsdlabSoC, `dram=None`) gets LiteDRAM's
SDRAMPHYModel (DDR3 at 1:4, the smallest Micron x16 part that holds the pages), built here as
`sdrphy` / `sdram`. A card without NAND (soc/targets/board.py, `Board.ddr`) passes its own
LiteDRAMCore on the board's DDR PHY (A7DDRPHY, USPDDRPHY), which the SoC owns as `sdram` so
that LiteX's liblitedram finds its DFII; the firmware calibrates it before the flash back end
starts (sw/firmware/dram_init.c). Ports, regions and emulators are the same code either way,
so a drive simulated this way is the card's behaviour.
"""

from dataclasses import replace
from pathlib import Path

from litex.gen import LiteXModule
from migen import ClockSignal, Instance, ResetSignal, Signal

__all__ = ["NandEmulation", "emulated_part"]


def emulated_part(cfg):
    """The NandPart the emulators present: the persona's part with the build's geometry
    and array times (as the die models get them)."""
    from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry
    base = PARTS[cfg.part]
    g = NandGeometry(page_bytes=cfg.page_bytes, spare_bytes=cfg.spare_bytes,
                     pages_per_block=cfg.pages_per_block,
                     blocks_per_plane=cfg.blocks_per_plane, planes=cfg.planes, luns=1,
                     bits_per_cell=cfg.bits_per_cell)
    from soc.ssdlab_soc import PAGE_TIMING_FIELDS
    t = replace(base.timing, t_r_ns=cfg.t_r_ns, t_prog_ns=cfg.t_prog_ns,
                t_bers_ns=cfg.t_bers_ns, typical=cfg.nand_timing == "typical",
                **{k: cfg.page_timing.get(k) for k in PAGE_TIMING_FIELDS})
    assert isinstance(t, NandArrayTiming)
    return replace(base, geometry=g, timing=t)


def _sim_dram(clk_freq, need_bytes):
    """LiteDRAM core on the simulation model: the smallest DDR3 x16 that holds need_bytes."""
    from litedram.core import LiteDRAMCore
    from litedram.modules import MT41K128M16, MT41K256M16, MT41K512M16
    from litedram.phy.model import SDRAMPHYModel
    fits = [c for c, size in ((MT41K128M16, 256 << 20), (MT41K256M16, 512 << 20),
                              (MT41K512M16, 1 << 30)) if need_bytes <= size]
    if not fits:
        raise ValueError(f"SocConfig: the emulated NAND needs {need_bytes >> 20} MiB of DRAM, "
                         f"more than the 1024 MiB simulation model; fewer channels or ways, "
                         f"or a smaller blocks_per_plane")
    module = fits[0](clk_freq, "1:4")
    phy = SDRAMPHYModel(module, data_width=16, clk_freq=clk_freq)
    return phy, LiteDRAMCore(phy, module.geom_settings, module.timing_settings, clk_freq)


class NandEmulation(LiteXModule):
    """platform (gets the Verilog), build_dir, cfg (SocConfig), flash (NandFlash: its pins);
    dram: None (the simulation model, made here) or the caller's LiteDRAMCore (a board's PHY
    and module), which must hold cfg.n_channels regions of the emulated ways' pages.
    `rule_count`: the NAND rule violations of every channel, summed (the controller's bugs);
    `dram_bytes`: the DRAM the emulators use, from address 0 of the core."""

    def __init__(self, platform, build_dir, cfg, flash, dram=None):
        from amaranth.back import verilog

        from rtl.nand.nand_emulator import NandEmulator, factory_bad_table
        part = emulated_part(cfg)
        if dram is None:
            probe = NandEmulator(part, n_ways=cfg.n_ways, clk_freq=cfg.sys_clk_freq,
                                 dram_data_width=128, dram_addr_width=40)
            probe._MustUse__silence = True              # sizes only, never elaborated
            need = cfg.n_channels * (1 << probe.index_bits) * probe.stride * probe.wb
            self.sdrphy, self.sdram = _sim_dram(cfg.sys_clk_freq, need)
            dram = self.sdram
        ports = [dram.crossbar.get_port() for _ in range(cfg.n_channels)]
        dw, aw = ports[0].data_width, ports[0].address_width
        probe = NandEmulator(part, n_ways=cfg.n_ways, clk_freq=cfg.sys_clk_freq,
                             dram_data_width=dw, dram_addr_width=40)
        probe._MustUse__silence = True
        span = (1 << probe.index_bits) * probe.stride       # port words a channel uses
        need, have = cfg.n_channels * span * probe.wb, (1 << aw) * dw // 8
        if need > have:
            raise ValueError(f"SocConfig: the emulated NAND ({cfg.n_channels} channels x "
                             f"{cfg.n_ways} ways) needs {need >> 20} MiB of DRAM, the DRAM "
                             f"holds {have >> 20} MiB; fewer channels or ways, or a smaller "
                             f"pages_per_block / blocks_per_plane")
        self.rule_count = Signal(32, name_override="nand_emulation_rule_count")
        counts = []
        texts = {}
        for c, pins in enumerate(flash.pins):
            # The die models' seeds (sim_build: die + 1), so bad blocks fall where theirs do.
            seeds = [c * cfg.n_ways + w + 1 for w in range(cfg.n_ways)]
            bad = factory_bad_table(part, seeds, cfg.factory_bad_block_rate) \
                if cfg.factory_bad_block_rate else set()
            emu = NandEmulator(part, n_ways=cfg.n_ways, clk_freq=cfg.sys_clk_freq,
                               dram_data_width=dw, dram_addr_width=aw, factory_bad=bad)
            name = "nand_emulator" if not bad else f"nand_emulator_ch{c}"
            if name not in texts:
                texts[name] = verilog.convert(emu, name=name, emit_src=False,
                                              strip_internal_attrs=True)
            else:
                emu._MustUse__silence = True            # the same module as an earlier channel
            port = ports[c]
            addr = Signal(aw)
            count = Signal(16)
            counts.append(count)
            self.comb += port.cmd.addr.eq(addr + c * span)
            self.specials += Instance(
                name, name=f"nand_emu{c}", i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
                i_dq_o=pins["dq_o"], i_dq_oe=pins["dq_oe"], o_dq_i=pins["dq_i"],
                i_ce_n=pins["ce_n"], i_cle=pins["cle"], i_ale=pins["ale"],
                i_we_n=pins["we_n"], i_re_n=pins["re_n"], i_wp_n=pins["wp_n"],
                o_rb_n=pins["rb_n"],
                i_cfg_strict=1, i_cfg_require_reset=1, i_cfg_pe_limit=0,
                i_bd_valid=0, i_bd_op=0, i_bd_index=0, i_bd_entry=0,
                o_dram_cmd_valid=port.cmd.valid, i_dram_cmd_ready=port.cmd.ready,
                o_dram_cmd_we=port.cmd.we, o_dram_cmd_addr=addr,
                o_dram_wdata_valid=port.wdata.valid, i_dram_wdata_ready=port.wdata.ready,
                o_dram_wdata_data=port.wdata.data, o_dram_wdata_we=port.wdata.we,
                i_dram_rdata_valid=port.rdata.valid, o_dram_rdata_ready=port.rdata.ready,
                i_dram_rdata_data=port.rdata.data, o_rule_count=count)
        self.comb += self.rule_count.eq(sum(counts))
        for name, text in texts.items():
            path = Path(build_dir) / f"{name}.v"
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            platform.add_source(str(path))
        self.dram_bytes = need
