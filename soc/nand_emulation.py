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

The lab's fault injection (`NandEmulatorBackdoor`, CSR bank `nand_emulation`): the emulators'
block-table backdoor (`bd_*`: grow a bad block, set a block's P/E count, write a whole entry)
behind one set of CSRs for every channel, and `pe_limit`, the P/E count past which an erase
fails and its block goes bad (0: no wear-out), for every emulator. The firmware drives them for
the host's admin C1h (sw/firmware/admin.c, spec/nvme.py `Fault`).
"""

from dataclasses import replace
from pathlib import Path

from litex.gen import LiteXModule
from litex.soc.interconnect.csr import CSR, CSRConstant, CSRField, CSRStatus, CSRStorage
from migen import Cat, ClockSignal, If, Instance, ResetSignal, Signal

__all__ = ["NandEmulation", "NandEmulatorBackdoor", "BD_OPS", "emulated_part"]

# The tCCS the emulated part's parameter page states (the persona's part says 500 ns), and the
# controller then waits: a change of column restarts the emulator's prefetch from DRAM, and
# its first word must be there by the first RE#. On the simulated drive (2 channels x 4 ways,
# LiteDRAM's DDR3 model, whose refresh and other ports share the core) a restart took up to
# about 700 ns: 500 ns read 25 of 512 random 16 KiB units with their first bytes lost.
EMU_T_CCS_NS = 1000

# The emulator's bd_op values (rtl/nand/nand_emulator_tables.py, BACKDOOR).
BD_OPS = {"entry": 0, "pe": 1, "bad": 2}


def emulated_part(cfg):
    """The NandPart the emulators present: the persona's part with the build's geometry
    and array times (as the die models get them), and tCCS EMU_T_CCS_NS."""
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
    return replace(base, geometry=g, timing=t, t_ccs_ns=max(base.t_ccs_ns, EMU_T_CCS_NS))


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


class NandEmulatorBackdoor(LiteXModule):
    """The block-table backdoor of `n_channels` nand_emulators behind one set of CSRs.

    - n_channels: the emulators, 1..32.
    - emu: one of them (a NandEmulator: its ways, LUNs, blocks, bd_index packing and entry
      layout; every channel's emulator has the same).

    Ports: `bd[c]` (dict: `valid` out, `ready` in, `op`, `index`, `entry` out) to channel c's
    emulator.

    Registers: the block (`target`: channel, way, LUN; `block`: the LUN's block, plane in its
    low bits), `op` (BD_OPS, exported as the constants `op_*`), `entry` (the emulator's entry
    layout, as fields; op 0 writes it whole, op 1 takes its `pe`); a write of `go` takes them
    and holds the channel's `bd_valid` until its `bd_ready` (the emulator takes it as soon as
    its command engine is idle, ahead of the next bus event: a few cycles). `status.busy`
    until then; `done` counts the operations done. A `go` while busy, or naming a channel,
    way, LUN or block the build does not have, does nothing but set `status.refused` (until
    the next `go` taken), so no other block can be hit.
    """

    def __init__(self, n_channels, emu):
        if not 1 <= n_channels <= 32:
            raise ValueError(f"NandEmulatorBackdoor: n_channels must be 1..32, got "
                             f"{n_channels!r}")
        g = emu.g
        bb, lb, wb = g.block_bits, max(1, g.lun_bits), emu.way_bits
        assert bb >= 1 and bb + lb + wb == len(emu.bd_index)
        entry = [(name, f.offset, f.width) for name, f in emu.entry]
        entry_bits = emu.entry.size

        # Ports.
        self.bd = [dict(valid=Signal(name=f"bd{c}_valid"), ready=Signal(name=f"bd{c}_ready"),
                        op=Signal(2), index=Signal(bb + lb + wb), entry=Signal(entry_bits))
                   for c in range(n_channels)]

        # Registers.
        self._target = CSRStorage(fields=[
            CSRField("channel", size=8, offset=0, description="flash channel"),
            CSRField("way", size=8, offset=8, description="chip enable on the channel"),
            CSRField("lun", size=8, offset=16, description="LUN of the target")],
            description="the block's target (the layout of admin C1h's CDW13)")
        self._block = CSRStorage(16, description="block of the LUN, the plane in its low bits")
        self._op = CSRStorage(2, description="0: write `entry` whole; 1: set the block's P/E "
                                             "count to entry.pe; 2: mark it bad (grown)")
        self._entry = CSRStorage(fields=[
            CSRField(name, size=width, offset=offset) for name, offset, width in entry],
            description="a block-table entry (rtl/nand/nand_emulator_defs.entry_layout)")
        self._go = CSR(1)
        self._status = CSRStatus(fields=[
            CSRField("busy", size=1, offset=0, description="an operation waits for its "
                                                           "emulator"),
            CSRField("refused", size=1, offset=1, description="the last go did nothing: "
                     "busy, or a channel, way, LUN or block the build does not have")])
        self._done = CSRStatus(32, description="operations done since reset (wraps)")
        # the op values for the firmware (soc.h NAND_EMULATION_BD_OP_*)
        for name, value in BD_OPS.items():
            setattr(self, f"op_{name}", CSRConstant(value, name=f"op_{name}"))

        # # #

        t = self._target.fields
        blk = self._block.storage
        fits = ((t.channel < n_channels) & (t.way < emu.n_ways) & (t.lun < emu.luns) &
                (blk < g.blocks_per_lun))
        busy, refused, done = Signal(), Signal(), Signal(32)
        chan = Signal(max=max(2, n_channels))
        # taken at go: the firmware may set up the next operation while this one runs
        op, index, ent = Signal(2), Signal(bb + lb + wb), Signal(entry_bits)
        ready = Signal()
        self.comb += [
            self._status.fields.busy.eq(busy),
            self._status.fields.refused.eq(refused),
            self._done.status.eq(done),
        ]
        for c, port in enumerate(self.bd):
            self.comb += [
                port["valid"].eq(busy & (chan == c)),
                port["op"].eq(op), port["index"].eq(index), port["entry"].eq(ent),
                If(chan == c, ready.eq(port["ready"])),
            ]
        self.sync += [
            # the emulator writes the entry on this edge: valid falls before it is in IDLE
            # again, so one go is one operation
            If(busy & ready, busy.eq(0), done.eq(done + 1)),
            If(self._go.re,
                If(busy | ~fits,
                    refused.eq(1),
                ).Else(
                    refused.eq(0), busy.eq(1), chan.eq(t.channel), op.eq(self._op.storage),
                    # the emulator's block-table address: block | LUN | way
                    index.eq(Cat(blk[:bb], t.lun[:lb], t.way[:wb])),
                    ent.eq(self._entry.storage),
                ),
            ),
        ]


class NandEmulation(LiteXModule):
    """platform (gets the Verilog), build_dir, cfg (SocConfig), flash (NandFlash: its pins);
    dram: None (the simulation model, made here) or the caller's LiteDRAMCore (a board's PHY
    and module), which must hold cfg.n_channels regions of the emulated ways' pages.
    `rule_count`: the NAND rule violations of every channel, summed (the controller's bugs);
    `failures`: the emulators' own failures, summed: data-out edges an emulator could not serve
    from DRAM in time (the byte read is wrong), and 1 for each emulator whose DRAM write queue
    overflowed (a program's data lost); CSRs `underruns` and `overrun`;
    `dram_bytes`: the DRAM the emulators use, from address 0 of the core.
    Registers (bank `nand_emulation`): `bd_*` (NandEmulatorBackdoor), `pe_limit`,
    `underruns`, `overrun`."""

    def __init__(self, platform, build_dir, cfg, flash, dram=None):
        from amaranth.back import verilog

        from rtl.nand.nand_emulator import NandEmulator, factory_bad_table
        from rtl.nand.nand_emulator_defs import PE_BITS
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
        self.failures = Signal(32, name_override="nand_emulation_failures")
        # the lab's fault injection: this bank's bd_* and pe_limit
        self.bd = bd = NandEmulatorBackdoor(cfg.n_channels, probe)
        self._pe_limit = CSRStorage(PE_BITS, description="every emulator's cfg_pe_limit: the "
                                    "P/E count past which an erase fails and the block goes "
                                    "bad (0: no wear-out)")
        self._underruns = CSRStatus(32, description="data-out edges the emulators could not "
                                    "serve from DRAM in time, every channel's (each wraps at "
                                    "2^16): a nonzero count means bytes read were wrong")
        self._overrun = CSRStatus(cfg.n_channels, description="bit c: channel c's emulator "
                                  "overflowed its DRAM write queue (a program's data lost)")
        counts, unders, overs = [], [], []
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
            count, under, over = Signal(16), Signal(16), Signal()
            counts.append(count)
            unders.append(under)
            overs.append(over)
            self.comb += port.cmd.addr.eq(addr + c * span)
            self.specials += Instance(
                name, name=f"nand_emu{c}", i_clk=ClockSignal("sys"), i_rst=ResetSignal("sys"),
                i_dq_o=pins["dq_o"], i_dq_oe=pins["dq_oe"], o_dq_i=pins["dq_i"],
                i_ce_n=pins["ce_n"], i_cle=pins["cle"], i_ale=pins["ale"],
                i_we_n=pins["we_n"], i_re_n=pins["re_n"], i_wp_n=pins["wp_n"],
                o_rb_n=pins["rb_n"],
                i_cfg_strict=1, i_cfg_require_reset=1, i_cfg_pe_limit=self._pe_limit.storage,
                i_bd_valid=bd.bd[c]["valid"], o_bd_ready=bd.bd[c]["ready"],
                i_bd_op=bd.bd[c]["op"], i_bd_index=bd.bd[c]["index"],
                i_bd_entry=bd.bd[c]["entry"],
                o_dram_cmd_valid=port.cmd.valid, i_dram_cmd_ready=port.cmd.ready,
                o_dram_cmd_we=port.cmd.we, o_dram_cmd_addr=addr,
                o_dram_wdata_valid=port.wdata.valid, i_dram_wdata_ready=port.wdata.ready,
                o_dram_wdata_data=port.wdata.data, o_dram_wdata_we=port.wdata.we,
                i_dram_rdata_valid=port.rdata.valid, o_dram_rdata_ready=port.rdata.ready,
                i_dram_rdata_data=port.rdata.data, o_rule_count=count, o_underrun=under,
                o_overrun=over)
        self.comb += [self.rule_count.eq(sum(counts)), self._underruns.status.eq(sum(unders)),
                      self._overrun.status.eq(Cat(*overs)),
                      self.failures.eq(sum(unders) + sum(overs))]
        for name, text in texts.items():
            path = Path(build_dir) / f"{name}.v"
            path.parent.mkdir(parents=True, exist_ok=True)
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
            platform.add_source(str(path))
        self.dram_bytes = need
