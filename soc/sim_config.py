# SPDX-License-Identifier: BSD-2-Clause
"""From a drive persona to the SoC's build parameters (SocConfig).

The persona gives channels, ways, the part (geometry, array times), host queues, MDTS and LBA
size (spec/persona, soc/persona_params.py `rtl_params`). Two things the RTL cannot take as
they are:

- NV-DDR2 personas run their bus in the part's fastest SDR mode (`sdr_fallback`, reported),
  unless the build has NV-DDR2 (`nvddr2=True`: a board with an ONFI PHY, or the simulated
  drive's onfi_phy_sim), where that SDR mode is the bring-up's and the firmware then switches
  to the persona's NV-DDR2 mode (its timing, at the engine's clock: one byte per clock at
  most, reported);
- a persona mixing part types (intel-750-400g: 128 and 64 Gbit dies) is built with both
  (SocConfig `part2`, `part2_targets`: each die model gets its own part's page, spare and
  array times) only where their row geometry is one after the build's scaling, since the
  back end's geometry register is shared by every die: the full-size 400g (512 vs 256 pages
  per block) is refused naming nand.groups, 16 blocks per plane x 16 pages per block builds
  (soc/persona_params.py `part_types`; the notes say which part is on which targets).

The host link: the persona's PCIe generation and lanes (or SATA cap) become the SoC's link
fields, which the simulation harness paces its TLPs by (spec/pcie_link.py), and the front
end's data path and clock are the smallest that carry that link (`front_end`): 64 bits at
125 MHz up to about Gen2 x2 / SATA, 512 bits at 125 MHz for Gen3 x4, at 250 MHz for Gen4 x4
and Gen3 x8. A SATA persona runs as NVMe with NCQ's one queue behind a link capped at its
sata_mb_s. A link no data path carries (Gen4 x8 and above) is a PersonaError naming
host.pcie_gen / host.pcie_lanes.

Simulation scale: a capacity-scaled persona keeps per-die geometry (blocks per plane shrink).
A drive small enough to be written end to end in Verilator also needs fewer pages per block:
`pages_per_block` does that, and it is reported as a change of per-die geometry.
"""

from soc.persona_params import link_params, part_types, rtl_params, targets_text
from soc.ssdlab_soc import PAGE_TIMING_FIELDS, SocConfig
from spec.pcie_link import SATA_NCQ_QUEUES
from spec.persona import PersonaError

__all__ = ["slc_params", "soc_config"]


def slc_params(p):
    """The persona's SLC write cache as SocConfig fields: the policy and the cache's native
    footprint (SLC bytes x bits per cell) in per mille of the raw capacity, from the
    full-size drive (a scaled drive keeps the share). A part of one bit per cell has none."""
    full = p.full if p.full is not None else p
    bits = max(g.part.geometry.bits_per_cell for g in full.groups)
    if full.slc_cache.policy == "none" or bits < 2:
        return {"slc_policy": "none", "slc_permille": 0}
    native = full.slc_cache.size_gb * 1e9 * bits
    return {"slc_policy": full.slc_cache.policy,
            "slc_permille": max(1, min(500, round(1000 * native / full.raw_bytes)))}


def _page_timing(part):
    """The part's per page type tR / tPROG as SocConfig page_timing."""
    return {k: getattr(part.timing, k) for k in PAGE_TIMING_FIELDS
            if getattr(part.timing, k, None) is not None}


def _part2(part):
    """SocConfig part2 of `part` (a NandPart)."""
    geo, t = part.geometry, part.timing
    return {"part": part.name, "page_bytes": geo.page_bytes, "spare_bytes": geo.spare_bytes,
            "t_r_ns": t.t_r_ns, "t_prog_ns": t.t_prog_ns, "t_bers_ns": t.t_bers_ns,
            "page_timing": _page_timing(part)}


def _parity(p, fields, notes):
    """SocConfig parity_stripe of persona p on the drive `fields` describe: its die-raid5
    stripe, no wider than the simulated drive's dies; 0 (none) when the scheme is none, a
    stripe would hold dies of two page sizes (the firmware's parity page covers every
    member's columns), or fewer than 2 dies are left."""
    par = p.parity
    if par.scheme != "die-raid5":
        return 0
    dies = fields["n_channels"] * fields["n_ways"] * fields["luns"]
    p2 = fields.get("part2")
    if p2 is not None and p2["page_bytes"] != fields["page_bytes"]:
        notes.append(f"parity.scheme die-raid5: not built (the drive's two parts have pages of "
                     f"{fields['page_bytes']} and {p2['page_bytes']} bytes; the firmware's "
                     f"stripes need one page size)")
        return 0
    stripe = min(par.stripe_dies, dies)
    if stripe > 64:             # the firmware's stripes hold 64 dies at most: even ones
        k = -(-stripe // 64)
        notes.append(f"die parity: stripes of at most 64 dies in the firmware: {stripe} "
                     f"dies in {k} stripes of {-(-stripe // k)}")
        stripe = -(-stripe // k)
    if stripe < 2:
        notes.append(f"parity.scheme die-raid5: not built ({dies} die simulated)")
        return 0
    notes.append(f"die parity: die-raid5 over stripes of {stripe} dies" +
                 ("" if par.stripe_dies <= dies else
                  f" (persona: {par.stripe_dies}; the simulated drive has {dies})"))
    return stripe


def _ecc(p, wanted, notes):
    """SocConfig ecc of persona p when `wanted` ("persona": its BCH code,
    spec/bch.BchCode.of_persona), else None; None too for a scheme the RTL has no core of.
    The build's notes say which."""
    from spec.bch import BchCode
    if p.ecc.scheme != "bch":
        notes.append(f"ecc.scheme {p.ecc.scheme}: no {p.ecc.scheme} core in the RTL, built "
                     f"without ECC (rtl/nand/README.md, limits)")
        return None
    code = BchCode.of_persona(p.ecc)
    what = (f"BCH over GF(2^{code.m}), t = {code.t} in {code.data_bytes} + {code.room} byte "
            f"codewords")
    if wanted != "persona":
        notes.append(f"ECC: the persona's {what} not built (param ecc=persona builds it: "
                     f"every read then waits for its decode; about half the simulation's "
                     f"speed at 2 channels)")
        return None
    notes.append(f"ECC: the persona's {what} (nand_ecc per channel)")
    return {"m": code.m, "t": code.t, "data_bytes": code.data_bytes,
            "parity_bytes": code.parity_bytes}


def soc_config(persona=None, params=None, blocks_per_plane=None, pages_per_block=None,
               sys_clk_freq=None, nvddr2=False):
    """SocConfig for persona (name or path; None: "default"), with `params` (a dict of
    SocConfig fields) applied last. sys_clk_freq: Hz, None = the clock the host link's
    front end needs (125 or 250 MHz; a board gives its own). nvddr2: the build can run
    NV-DDR2 (a board's ONFI PHY), so an NV-DDR2 persona gets its mode as `nvddr2_mode`.
    params["ecc"] = "persona" builds the persona's BCH code on every channel (not by default
    yet: it halves the simulation's speed, rtl/nand/README.md nand_ecc).
    Returns the config; its `notes` say what differs from the persona."""
    from spec.persona import load_persona
    p = load_persona(persona or "default")
    notes = []
    if blocks_per_plane is not None:
        p = p.scaled(blocks_per_plane=blocks_per_plane)
    link = link_params(p)                  # PersonaError: a link the front end cannot carry
    if sys_clk_freq is None:
        sys_clk_freq = link["clk_hz"]
    ppb_parts = {g.part.geometry.pages_per_block for g in p.groups}
    if pages_per_block is not None and (not 1 <= pages_per_block <= min(ppb_parts)
                                        or pages_per_block & (pages_per_block - 1)):
        raise ValueError(f"pages_per_block={pages_per_block}: must be a power of two in "
                         f"1..{min(ppb_parts)} (the part's)")
    rtl = None
    try:
        rtl = rtl_params(p, clk_mhz=sys_clk_freq / 1e6, sdr_fallback=True,
                         pages_per_block=pages_per_block)
    except PersonaError as e:
        # no substitute for LUNs the back end cannot address, nor for part types it cannot
        # build side by side (part_types: their row geometry must be one)
        fatal = [m for m in e.messages if m.startswith(("controller.dies_per_way",
                                                          "nand.groups ="))]
        if fatal:
            raise PersonaError(e.source, fatal) from None
        notes.append(f"persona not buildable as is ({e}); built with what the back end takes")
    mixed = part_types(p, pages_per_block)
    g = mixed["main"]
    geo = p.groups[mixed["main_group"]].part.geometry
    c, h = p.controller, p.host
    mode = rtl["onfi"]["mode"] if rtl else mixed["sdr_modes"].bit_length() - 1
    if rtl:
        notes += rtl["substitutions"] + rtl["notes"]
    ppb = geo.pages_per_block
    if pages_per_block is not None:
        parts = ", ".join(f"{q}: {n}" for q, n in sorted(
            {gr.part_name: gr.part.geometry.pages_per_block for gr in p.groups}.items()))
        notes.append(f"simulation scale: {pages_per_block} pages per block (part: "
                     f"{ppb if len(ppb_parts) == 1 else parts})")
        ppb = pages_per_block
    from dataclasses import replace
    # the row address holds page, block and LUN (controller.dies_per_way LUNs per target)
    row_cycles = replace(geo, pages_per_block=ppb, luns=c.dies_per_way).row_cycles
    fields = dict(row_cycles=row_cycles,
        persona=p.name, part=g.name, n_channels=c.channels, n_ways=c.ways_per_channel,
        luns=c.dies_per_way,
        page_bytes=geo.page_bytes, spare_bytes=geo.spare_bytes, pages_per_block=ppb,
        blocks_per_plane=geo.blocks_per_plane, planes=geo.planes,
        bits_per_cell=geo.bits_per_cell, t_r_ns=g.timing.t_r_ns, t_prog_ns=g.timing.t_prog_ns,
        t_bers_ns=g.timing.t_bers_ns, onfi_mode=mode, n_io_queues=min(h.io_queues, 64),
        page_timing=_page_timing(g),
        part2=None if mixed["part2"] is None else _part2(mixed["part2"]),
        part2_targets=mixed["part2_targets"],
        mqes=min(h.mqes, 4095),
        max_transfer=min(h.max_transfer_kib * 1024, 131072),
        lbads=h.lba_bytes.bit_length() - 1, sys_clk_freq=sys_clk_freq,
        op_pct=round(p.op_pct, 2), pe_cycles=g.pe_cycles,
        **slc_params(p),
        scale_note=p.scale_note or "full size", notes=notes,
        host_interface=h.interface, pcie_gen=h.pcie_gen, pcie_lanes=h.pcie_lanes,
        mps=link["link"].mps, mrrs=link["link"].mrrs,
        link_mb_s_cap=h.sata_mb_s if h.interface == "sata" else None,
        read_latency_ns=link["link"].read_latency_ns,
        pcie_data_width=link["pcie_data_width"])
    lim = link["limits"]
    notes.append(f"host link: {lim['description']}; payload limits read {lim['read_mb_s']:.1f} "
                 f"MB/s, write {lim['write_mb_s']:.1f} MB/s; front end {link['pcie_data_width']}"
                 f"-bit TLP path at {link['clk_hz'] / 1e6:.0f} MHz")
    if h.interface == "sata":
        fields["n_io_queues"] = SATA_NCQ_QUEUES
    onfi = c.onfi
    if nvddr2 and onfi is not None and onfi.interface == "nv-ddr2":
        fields["nvddr2_mode"] = onfi.mode
        # not the SDR substitution rtl_params reports: the bus runs NV-DDR2
        notes[:] = [n for n in notes if not n.startswith("controller.onfi: nv-ddr2")]
        clk = sys_clk_freq / 1e6
        rate = min(onfi.mt_s, clk)
        notes.append(f"NV-DDR2 mode {onfi.mode} ({onfi.mt_s:.0f} MT/s) after bring-up in SDR "
                     f"mode {mode}; the engine at {clk:.0f} MHz moves one byte per clock: "
                     f"{rate:.0f} MT/s" + ("" if rate >= onfi.mt_s else
                                          f" (persona: engine at {onfi.clock_mhz:g} MHz)"))
    fields["ecc"] = _ecc(p, (params or {}).get("ecc"), notes)
    fields.update({k: v for k, v in (params or {}).items() if k != "ecc" or v != "persona"})
    if fields["ecc"] is not None and fields.get("nand_model", "die") != "die" \
            and (params or {}).get("ecc") in (None, "persona"):
        notes.append(f"nand_model={fields['nand_model']}: the NAND emulator's data path has "
                     f"no ECC (persona: {p.ecc.scheme}, t = {p.ecc.correctable_bits})")
        fields["ecc"] = None
    for op in ("r", "prog"):     # a tR / tPROG given as a parameter: one value for every type
        if f"t_{op}_ns" in (params or {}) and "page_timing" not in params:
            fields["page_timing"] = {k: v for k, v in fields["page_timing"].items()
                                     if not k.startswith(f"t_{op}_")}
            two = fields["part2"] is not None and "part2" not in params
            if two:                                         # and for every die
                p2 = fields["part2"]
                fields["part2"] = {**p2, f"t_{op}_ns": params[f"t_{op}_ns"], "page_timing": {
                    k: v for k, v in p2["page_timing"].items() if not k.startswith(f"t_{op}_")}}
            notes.append(f"t_{op}_ns={params[f't_{op}_ns']} given: the same for every page "
                         f"type and corner" + (" on both part types" if two else ""))
    if fields["slc_policy"] != "none" and fields.get("nand_model", "die") != "die" \
            and "slc_policy" not in (params or {}):
        notes.append(f"nand_model={fields['nand_model']}: the NAND emulator has no SLC mode, "
                     f"so no SLC cache (persona: {fields['slc_policy']}, "
                     f"{fields['slc_permille']} per mille of raw)")
        fields["slc_policy"], fields["slc_permille"] = "none", 0
    if fields["part2"] is not None and fields.get("nand_model", "die") != "die" \
            and "part2" not in (params or {}):
        notes.append(f"nand_model={fields['nand_model']}: the NAND emulator emulates one "
                     f"part, {fields['part']} on every die (persona: {fields['part2']['part']} "
                     f"on {targets_text(fields['part2_targets'])})")
        fields["part2"], fields["part2_targets"] = None, ()
    if fields["part2"] is not None and "part2_targets" not in (params or {}):
        # a topology narrowed by params (n_channels=2) keeps the targets it still has
        keep = tuple(t for t in fields["part2_targets"]
                     if t[0] < fields["n_channels"] and t[1] < fields["n_ways"])
        if keep != fields["part2_targets"]:
            fields["part2_targets"] = keep
            notes.append(f"{fields['n_channels']} channels x {fields['n_ways']} ways: "
                         + (f"{fields['part2']['part']} on "
                            f"{targets_text(keep)} only" if keep else
                            f"no target of {fields['part2']['part']} left: one part type"))
            if not keep:
                fields["part2"] = None
    if "parity_stripe" not in (params or {}):
        fields["parity_stripe"] = _parity(p, fields, notes)
    corner = fields.get("nand_timing", "typical")
    types = "/".join(geo.page_types)
    notes.append(f"NAND array times: {corner} tR and tPROG per page type ({types}, page % "
                 f"{geo.bits_per_cell}); sources: ssdlab persona show {p.name}")
    return SocConfig(**fields)
