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

__all__ = ["rtl_params", "link_params", "part_types", "targets_text"]


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


def _ranges(xs):
    """0-5, 7: a sorted list of integers as ranges."""
    out, xs = [], sorted(xs)
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(f"{xs[i]}" if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return ", ".join(out)


def targets_text(targets):
    """'way 0 of channels 0-17, way 1 of channels 0-5' for [(channel, way)]."""
    ways = sorted({w for _, w in targets})
    return ", ".join(f"way {w} of channels {_ranges([c for c, x in targets if x == w])}"
                     for w in ways)


def part_types(persona, pages_per_block=None):
    """The drive's part types as the back end builds them: the main part (the one on channel
    0, way 0: the back end's geometry, the buffer's plane stride, the firmware's checkpoint
    die) and at most one more, `part2`, on the targets `part2_targets` ((channel, way) pairs,
    sorted). The back end's row geometry register (page_bits, block_bits, plane_bits) and the
    channels' address cycles are shared by every die, so the two must have, after the
    build's scaling, the same planes, pages per block and blocks per plane, bits per cell
    and row and column address cycles; they may differ in page and spare size (part2's no
    larger than the main part's) and in every array time.

    pages_per_block: None, or the simulation's pages per block (a power of two, at most
    every part's), applied to every part. Returns {"main", "part2" (NandPart, scaled; part2
    None for one part type), "main_group" (its index in nand.groups), "main_targets",
    "part2_targets", "sdr_modes" (the SDR modes every part has, a bit mask), "errors" (the
    `nand.groups = [...]: why` messages; empty when buildable)}."""
    c = persona.controller
    ppbs = {g.part.geometry.pages_per_block for g in persona.groups}
    if pages_per_block is not None and (
            isinstance(pages_per_block, bool) or not isinstance(pages_per_block, int)
            or not 1 <= pages_per_block <= min(ppbs)
            or pages_per_block & (pages_per_block - 1)):
        raise ValueError(f"pages_per_block={pages_per_block}: must be a power of two in "
                         f"1..{min(ppbs)} (the parts')")

    def scaled(part):
        if pages_per_block is None:
            return part
        return replace(part, geometry=replace(part.geometry, pages_per_block=pages_per_block))

    slot = {s: i for i, g in enumerate(persona.groups) for s in g.slots()}
    main_group = slot.get((0, 0), 0)
    main = scaled(persona.groups[main_group].part)
    names = [main.name] + sorted({g.part_name for g in persona.groups} - {main.name})
    errs = []
    value = f"[{', '.join(persona.parts)}]"
    out = {"main": main, "part2": None, "main_group": main_group,
           "main_targets": tuple(sorted(s for s, i in slot.items()
                                        if persona.groups[i].part_name == main.name)),
           "part2_targets": (), "sdr_modes": main.sdr_modes, "errors": errs}
    if len(names) == 1:
        return out
    if len(names) > 2:
        errs.append(f"nand.groups = {value}: {len(names)} part types; at most two per drive "
                    f"(the main part on channel 0 way 0 and one more, SocConfig part2)")
        return out
    part2 = scaled(next(g.part for g in persona.groups if g.part_name == names[1]))
    out["part2"] = part2
    out["part2_targets"] = tuple(sorted(s for s, i in slot.items()
                                        if persona.groups[i].part_name == part2.name))
    out["sdr_modes"] = main.sdr_modes & part2.sdr_modes
    a = replace(main.geometry, luns=c.dies_per_way)
    b = replace(part2.geometry, luns=c.dies_per_way)
    diff = [f"{what} {x} vs {y}" for what, x, y in (
        ("planes", a.planes, b.planes),
        ("pages per block", a.pages_per_block, b.pages_per_block),
        ("blocks per plane", a.blocks_per_plane, b.blocks_per_plane)) if x != y]
    if diff:
        errs.append(f"nand.groups = {value}: row geometry differs ({', '.join(diff)}): the "
                    f"back end's geometry register (page_bits, block_bits, plane_bits) is "
                    f"shared by every die, so mixed parts need the same planes, pages per "
                    f"block and blocks per plane after the build's scaling (e.g. 16 x 16 "
                    f"as `ssdlab fidelity` builds)")
    diff = [f"{what} {x} vs {y}" for what, x, y in (
        ("bits per cell", a.bits_per_cell, b.bits_per_cell),
        ("row address cycles", a.row_cycles, b.row_cycles),
        ("column address cycles", a.column_cycles, b.column_cycles)) if x != y]
    if diff:
        errs.append(f"nand.groups = {value}: {', '.join(diff)}: the channels' address "
                    f"cycles and the firmware's page types are one for every die")
    if b.page_bytes > a.page_bytes or b.register_bytes > a.register_bytes:
        errs.append(f"nand.groups = {value}: the part on channel 0 way 0 ({main.name}, "
                    f"{a.page_bytes} + {a.spare_bytes} B pages) is the main part and its "
                    f"page must be the larger or equal ({part2.name}: {b.page_bytes} + "
                    f"{b.spare_bytes} B): the firmware's checkpoint area is on die 0 and the "
                    f"buffer's plane stride is the main part's")
    targets = c.channels * c.ways_per_channel
    if targets > 64:
        errs.append(f"nand.groups = {value}: two part types on {c.channels} x "
                    f"{c.ways_per_channel} targets: at most 64 (the firmware's part2 target "
                    f"bitmap, SsdlabIdent part2_mask_lo/hi)")
    if not out["sdr_modes"]:
        errs.append(f"nand.groups = {value}: the parts share no SDR timing mode to bring "
                    f"the bus up in")
    return out


def rtl_params(persona, clk_mhz=100.0, sdr_fallback=False, queue_depth=4, timer_width=8,
               pages_per_block=None):
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
    - "parts": {"main": the part on channel 0 way 0, "part2": None or the second part type,
      "part2_targets": its [(channel, way)]} (`part_types`: two part types are built when
      their row geometry is the same after the build's scaling);
    - "substitutions" (what differs from the drive) and "notes".
    An nv-ddr2 persona gets NV-DDR2 channels (nand_backend with_nvddr2; the SoC needs an
    ONFI PHY: a board's, or onfi_phy_sim in the simulated drive): the firmware brings the bus
    up in the part's fastest SDR mode, then switches every die and engine to the persona's
    NV-DDR2 mode and calibrates the DQS capture. A clk_mhz below the mode's rate is recorded
    in "substitutions". sdr_fallback=True keeps the whole run in that SDR mode (recorded).

    clk_mhz: the NAND engine clock, > 0. queue_depth: ops per die queue, passed through to
    NandBackend (its legal range: 1..16). timer_width: the engine's timing-counter bits
    (a register value that does not fit is an error). pages_per_block: None, or the
    simulation's pages per block on every part (a power of two up to the smallest part's;
    soc_config's), which the geometry and the mixed-part check then use."""
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
    mixed = part_types(persona, pages_per_block)
    errs += mixed["errors"]
    part = mixed["main"]
    # the part's geometry with the persona's LUNs per target (row address: page, block, LUN)
    g = replace(part.geometry, luns=min(c.dies_per_way, 4))
    need(g.pages_per_block <= 4096, f"nand.groups[{mixed['main_group']}].part", part.name,
         f"{g.pages_per_block} pages per block: the flash op's page field holds 0..4095")
    need(g.blocks_per_lun <= 65536, f"nand.groups[{mixed['main_group']}].part", part.name,
         f"{g.blocks_per_lun} blocks per LUN: the flash op's block field holds 0..65535")
    need(g.register_bytes <= 65536, f"nand.groups[{mixed['main_group']}].part", part.name,
         f"page + spare {g.register_bytes} B: max_len is 1..65536")
    need(2 <= g.row_cycles <= 4, f"nand.groups[{mixed['main_group']}].part", part.name,
         f"{g.row_cycles} row address cycles: the channel does 2..4")
    if mixed["part2"] is not None and not mixed["errors"]:
        p2 = mixed["part2"]
        notes.append(f"two part types: {part.name} ({part.geometry.page_bytes} B pages) on "
                     f"{targets_text(mixed['main_targets'])}, {p2.name} "
                     f"({p2.geometry.page_bytes} B pages) on "
                     f"{targets_text(mixed['part2_targets'])}; one row geometry "
                     f"({g.pages_per_block} pages per block, {g.blocks_per_plane} blocks per "
                     f"plane, {g.planes} planes)")
    onfi = c.onfi
    mode = onfi.mode
    nvddr2 = onfi.interface == "nv-ddr2" and not sdr_fallback
    if onfi.interface == "nv-ddr2":
        # the bring-up's, or the fallback's: the fastest SDR mode every part has
        mode = mixed["sdr_modes"].bit_length() - 1
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
        "parts": {"main": part.name,
                  "part2": mixed["part2"].name if mixed["part2"] is not None else None,
                  "part2_targets": list(mixed["part2_targets"])},
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
