# SPDX-License-Identifier: BSD-2-Clause
"""From a drive persona (spec/persona) to the parameters and run-time register values of the
RTL cores it is built of: rtl/nand/nand_backend and rtl/nvme/nvme_controller (`rtl_params`).
It knows what those cores can do (channels, ways, planes, queues; SDR channels, and NV-DDR2
channels behind an ONFI PHY: a board's, or the simulated drive's onfi_phy_sim) and refuses,
naming each persona field, what they cannot. soc/sim_config.py builds the simulated drive
from it; `ssdlab persona show --rtl` prints it."""

from dataclasses import replace

from spec.onfi_timing import SDR_MODES, engine_registers, nvddr2_engine_registers
from spec.pcie_link import SATA_NCQ_DEPTH, SATA_NCQ_QUEUES, front_end
from spec.persona import Onfi, PersonaError, display_path

__all__ = ["rtl_params", "link_params"]


def link_params(persona, mps=256, mrrs=512, read_latency_ns=400):
    """The host link of `persona` (spec/pcie_link.py via `Host.link`) and the LitePCIe data
    path that carries it: {"link": PcieLink | SataLink, "pcie_data_width": 64..512,
    "clk_hz": 125e6 | 250e6, "limits": Persona.link_limits()}. A link no data path carries
    (e.g. Gen5 x16) raises PersonaError naming host.pcie_gen / host.pcie_lanes and the
    supported range. mps, mrrs: 128, 256, 512; read_latency_ns >= 0."""
    src = display_path(persona.path) if persona.path else persona.name
    link = persona.host.link(mps, mrrs, read_latency_ns)
    try:
        fe = front_end(link)
    except ValueError as e:
        raise PersonaError(src, [str(e)]) from None
    return {"link": link, "pcie_data_width": fe.data_width, "clk_hz": fe.clk_hz,
            "limits": persona.link_limits(mps, mrrs, read_latency_ns)}


def rtl_params(persona, clk_mhz=100.0, sdr_fallback=False, queue_depth=4, timer_width=8):
    """Parameters and register values of `persona` (a spec.persona.Persona) for the RTL cores,
    or PersonaError naming each field the RTL cannot do:

    - "nand_backend": NandBackend(**...) (rtl/nand/nand_backend.py): n_channels (1..32),
      n_ways (1..8), n_luns (1..4: controller.dies_per_way, interleaved like ways),
      queue_depth, max_planes (1..4), max_len (page + spare), row_cycles (page, block and
      LUN bits), col_cycles, timer_width, with_nvddr2;
    - "geometry": the `geometry` register {page_bits, block_bits, plane_bits};
    - "timing": the SDR engine's `timing` registers at clk_mhz (onfi_timing): the bus's mode,
      or on an NV-DDR2 bus the bring-up's (before the PHY's sampling margin, which the SoC
      adds); "nvddr2_timing": the NV-DDR2 engine's registers (None on an SDR bus);
      "onfi": {interface, mode, clk_mhz, sdr_mode} the bus runs after bring-up (sdr_mode:
      the SDR mode of the bring-up or of the whole run);
    - "nvme_controller": NvmeController's n_io_queues (1..64), max_transfer, lbads, mqes;
    - "host_link": the link the harness paces (spec/pcie_link.py): interface, raw MB/s,
      payload MB/s per direction, MPS, MRRS and the front end's data path and clock
      (`link_params`; a link no data path carries is an error naming host.pcie_gen /
      host.pcie_lanes);
    - "limits_mb_s": the persona's analytic limits on the bus the RTL runs (its interface and
      mode at clk_mhz: the engines move at most one byte per clock);
    - "substitutions" (what differs from the drive) and "notes".
    An nv-ddr2 persona gets NV-DDR2 channels (nand_backend with_nvddr2; the SoC needs an
    ONFI PHY: a board's, or onfi_phy_sim in the simulated drive): the firmware brings the bus
    up in the part's fastest SDR mode, then switches every die and engine to the persona's
    NV-DDR2 mode and calibrates the DQS capture. A clk_mhz below the mode's rate is recorded
    in "substitutions". sdr_fallback=True keeps the whole run in that SDR mode (recorded).

    clk_mhz: the NAND engine clock, > 0. queue_depth: ops per die queue, passed through to
    NandBackend (its legal range: 1..16). timer_width: the engine's timing-counter bits
    (a register value that does not fit is an error)."""
    c = persona.controller
    src = display_path(persona.path) if persona.path else persona.name
    errs, subs, notes = [], [], []

    def need(ok, path, value, why):
        if not ok:
            errs.append(f"{path} = {value}: {why}")

    need(c.channels <= 32, "controller.channels", c.channels,
         "nand_backend supports 1..32 channels (rtl/nand/nand_backend.py)")
    need(c.ways_per_channel <= 8, "controller.ways_per_channel", c.ways_per_channel,
         "nand_backend supports 1..8 ways (n_ways)")
    need(c.dies_per_way <= 4, "controller.dies_per_way", c.dies_per_way,
         "the flash op's lun field has 2 bits (nand_backend n_luns): 1..4 dies per way")
    need(c.multi_plane <= 4, "controller.multi_plane", c.multi_plane,
         "nand_backend max_planes is 1..4")
    kinds = {(g.part.geometry, g.part.timing) for g in persona.groups}
    need(len(kinds) == 1, "nand.groups", f"[{', '.join(persona.parts)}]",
         "nand_backend shares one geometry and timing register set: one part type per "
         "drive")
    # the part's geometry with the persona's LUNs per target (row address: page, block, LUN)
    g = replace(persona.groups[0].part.geometry, luns=min(c.dies_per_way, 4))
    part = persona.groups[0].part
    need(g.pages_per_block <= 4096, "nand.groups[0].part", persona.groups[0].part_name,
         f"{g.pages_per_block} pages per block: the flash op's page field holds 0..4095")
    need(g.blocks_per_lun <= 65536, "nand.groups[0].part", persona.groups[0].part_name,
         f"{g.blocks_per_lun} blocks per LUN: the flash op's block field holds 0..65535")
    need(g.register_bytes <= 65536, "nand.groups[0].part", persona.groups[0].part_name,
         f"page + spare {g.register_bytes} B: max_len is 1..65536")
    need(2 <= g.row_cycles <= 4, "nand.groups[0].part", persona.groups[0].part_name,
         f"{g.row_cycles} row address cycles: the channel does 2..4")
    onfi = c.onfi
    mode = onfi.mode
    nvddr2 = onfi.interface == "nv-ddr2" and not sdr_fallback
    if onfi.interface == "nv-ddr2":
        mode = part.sdr_modes.bit_length() - 1      # the bring-up's, or the fallback's
        if sdr_fallback:
            subs.append(f"controller.onfi: nv-ddr2 mode {onfi.mode} ({onfi.mt_s:.0f} MT/s) -> "
                        f"sdr mode {mode} ({1000 / SDR_MODES[mode].tRC:.0f} MT/s): "
                        f"sdr_fallback")
        else:
            notes.append(f"NV-DDR2 mode {onfi.mode} after bring-up in SDR mode {mode} and "
                         f"DQS calibration")
            if clk_mhz < onfi.mt_s:
                subs.append(f"controller.onfi: nv-ddr2 mode {onfi.mode} ({onfi.mt_s:.0f} "
                            f"MT/s) with the engine at {clk_mhz:g} MHz (persona: "
                            f"{onfi.clock_mhz:g}): one byte per clock, {clk_mhz:.0f} MT/s")
    h = persona.host
    need(h.io_queues <= 64, "host.io_queues", h.io_queues,
         "NvmeController n_io_queues is 1..64")
    need(h.queue_depth <= 4096, "host.queue_depth", h.queue_depth,
         "NvmeController mqes is 1..4095 (queue_depth - 1; SATA: the NCQ depth)")
    need(h.max_transfer_kib >= 8, "host.max_transfer_kib", h.max_transfer_kib,
         "NvmeController max_transfer is 8 KiB..16 MiB")
    if h.interface == "sata":
        need(h.io_queues == SATA_NCQ_QUEUES and h.queue_depth == SATA_NCQ_DEPTH,
             "host.io_queues", f"{h.io_queues} (queue_depth {h.queue_depth})",
             f"a SATA drive has NCQ: {SATA_NCQ_QUEUES} queue of {SATA_NCQ_DEPTH}")
    link = None
    try:
        link = link_params(persona)
    except PersonaError as e:
        errs.extend(e.messages)
    timing = nv_timing = None
    try:
        timing = engine_registers(mode, clk_mhz, width=timer_width)
    except ValueError as e:
        errs.append(f"controller.onfi.mode = {mode}: {e}")
    if nvddr2:
        try:
            nv_timing = nvddr2_engine_registers(onfi.mode, clk_mhz, width=timer_width)
        except ValueError as e:
            errs.append(f"controller.onfi.mode = {onfi.mode}: {e}")
    if errs:
        raise PersonaError(src, errs)
    if h.interface == "sata":
        subs.append(f"host: SATA drive simulated as NVMe behind a link capped at "
                    f"{h.sata_mb_s} MB/s of payload (NCQ = {h.io_queues} queue x "
                    f"{h.queue_depth})")
    return {
        "persona": persona.name,
        "scale": persona.scale_note,
        "nand_backend": {"n_channels": c.channels, "n_ways": c.ways_per_channel,
                         "n_luns": c.dies_per_way,
                         "queue_depth": queue_depth, "max_planes": c.multi_plane,
                         "max_len": g.register_bytes, "row_cycles": g.row_cycles,
                         "col_cycles": g.column_cycles, "timer_width": timer_width,
                         "with_nvddr2": nvddr2},
        "geometry": {"page_bits": g.page_bits, "block_bits": g.block_bits,
                     "plane_bits": g.plane_bits},
        "luns": c.dies_per_way,
        "timing": timing,
        "nvddr2_timing": nv_timing,
        "onfi": {"interface": "nv-ddr2" if nvddr2 else "sdr",
                 "mode": onfi.mode if nvddr2 else mode, "clk_mhz": clk_mhz, "sdr_mode": mode},
        "nvme_controller": {"n_io_queues": h.io_queues,
                            "max_transfer": h.max_transfer_kib * 1024,
                            "lbads": h.lba_bytes.bit_length() - 1,
                            "mqes": h.mqes},
        "host_link": {"interface": h.interface, "mb_s": round(h.link_mb_s, 1),
                      "read_mb_s": round(link["limits"]["read_mb_s"], 1),
                      "write_mb_s": round(link["limits"]["write_mb_s"], 1),
                      "mps": link["link"].mps, "mrrs": link["link"].mrrs,
                      "pcie_data_width": link["pcie_data_width"],
                      "clk_mhz": link["clk_hz"] / 1e6},
        "limits_mb_s": {k: (round(x, 1) if isinstance(x, float) else x) for k, x in
                        persona.flash_limits(Onfi("nv-ddr2", onfi.mode, clk_mhz) if nvddr2
                                             else Onfi("sdr", mode, clk_mhz)).items()},
        "substitutions": subs,
        "notes": notes,
    }
