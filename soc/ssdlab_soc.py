# SPDX-License-Identifier: BSD-2-Clause
"""SsdlabSoC: the whole drive, board independent — the thing simulation and boards build.

    PCIe PHY ─ LitePCIeEndpoint ─ NvmeController ─┬─ buffer memory ─┬─ NandFlash ─ ONFI pins
                                                  │  (BufferMemory) │  (nand_subsystem)
                     VexRiscv ─ Wishbone ─────────┴─ window, copy ──┘
                        └─ CSRs: FirmwarePorts (NVMe processor interface, block requests,
                                 flash ops), SsdlabIdent, timer (uptime), UART

The firmware (sw/firmware) runs from the integrated ROM with its data in the integrated main
RAM; it polls the FirmwarePorts. Everything is configured from a persona (personas/): flash
channels and ways, the part's geometry and timing, host queues, MDTS, LBA size.
"""

import math
import subprocess
from pathlib import Path

from litepcie.core import LitePCIeEndpoint
from litex.gen import LiteXModule
from litex.soc.integration.soc import SoCRegion
from litex.soc.integration.soc_core import SoCCore
from litex.soc.interconnect import stream, wishbone
from litex.soc.interconnect.csr import CSR, CSRStatus, CSRStorage
from migen import FSM, Case, Cat, If, NextState, Replicate, Signal
from migen.genlib.io import CRG

from rtl.nand.nand_common import BUSY_NOW_BITS, BUSY_TICK_BITS, BUSY_TIMEOUT_BITS
from rtl.nvme.litepcie_fixes import CPL_TIMEOUT_S, LitePCIeFixes
from rtl.nvme.nvme_controller import NvmeController
from rtl.pcie.pcie_sim_phy import PCIeSimPHY
from soc.buffer_copy import BufferCopy
from soc.buffer_memory import BufferMemory
from soc.ftl_read_path import (
    DIE_CREDITS,
    FTAG_BASE,
    FtlReadPath,
    StreamMerge,
    StreamRoute,
    engine_params,
)
from soc.fw_ports import CSRToStream, StreamToCSR, c_header
from soc.fw_wait import FwWait
from soc.fw_watchdog import FwWatchdog
from soc.nand_flash import NandFlash
from spec.fw_streams import FROM_FW, TO_FW, port_layouts
from spec.onfi_timing import NVDDR2_MODES, engine_registers, nvddr2_engine_registers

__all__ = ["SsdlabSoC", "SocConfig", "BUF_WINDOW", "FW_WAIT_BASE", "NVME_PCIE"]

# Ops the firmware keeps queued per die in the back end (sw/firmware/flash.c DIE_DEPTH).
FW_DIE_DEPTH = 4

BUF_WINDOW = 0x90000000         # the CPU's uncached window on the buffer memory
# Status the hardware I/O path changes on every command: not a wake (FwWait `active` and IDLE
# instead), so a command the hardware carries costs the CPU no instruction. The firmware reads
# sq_pending only while it handles an Abort, io_busy before a shutdown's checkpoint (polled
# with a deadline) and flash_busy nowhere in its loop.
HW_ACTIVITY = ("_sq_pending", "_io_busy", "_flash_busy")
FW_WAIT_BASE = 0xA0000000       # the firmware's wait (soc/fw_wait.py), uncached
SLOT = 4096

# The drive's PCIe function, one table for the simulation (PCIeSimPHY's BAR0; the host model
# tests/lib/pcie_tb.py presents the same values by default) and the boards (soc/targets,
# which put them into the hard IP's configuration): class code 01-08-02 (mass storage, NVM,
# NVM Express), BAR0 16 KiB (registers 0x0000, doorbells 0x1000, dstrd 0), multiple-message
# MSI, one vector per queue pair plus admin, rounded up to a power of two. The IDs are the
# simulation's (the firmware's Identify VID/SSVID carry the same vendor ID); a lab replaces
# them with its own (soc/targets/README.md).
NVME_PCIE = dict(class_code=0x010802, bar0_size=0x4000, vendor_id=0x1D1D, device_id=0x5D1A,
                 msi_vectors=32)


NVDDR2_NONE = 0xFF     # SsdlabIdent nvddr2_mode of an SDR-only build


def busy_timeout_ticks(cfg):
    """The flash busy timeout (a die busy longer has hung): 4 x the longest busy time of the
    build's parts (tBERS, tPROG, tR of any page type, ONFI's 1 ms tRST after power-on), in
    busy ticks of the back end (rtl/nand/nand_common.py), at most its counter's maximum."""
    times = [cfg.t_bers_ns, cfg.t_prog_ns, cfg.t_r_ns, 1_000_000,
             *(v for v in cfg.page_timing.values() if v)]
    if cfg.part2:
        times += [cfg.part2[k] for k in ("t_bers_ns", "t_prog_ns", "t_r_ns")]
        times += [v for v in cfg.part2["page_timing"].values() if v]
    cycles = 4 * max(times) * 1e-9 * cfg.sys_clk_freq
    return min((1 << BUSY_TIMEOUT_BITS) - 1, math.ceil(cycles / (1 << BUSY_TICK_BITS)))


def git_hash():
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             cwd=Path(__file__).parent, check=True).stdout.strip()
        return int(out[:8], 16)
    except (OSError, subprocess.CalledProcessError, ValueError):
        return 0


# The per page type (and SLC mode) array times a build passes to its dies
# (spec.nand_geometry.NandArrayTiming)
PAGE_TIMING_FIELDS = tuple(f"t_{op}{s}_ns" for op in ("r", "prog") for s in (
    "_lower", "_middle", "_upper", "_typ", "_lower_typ", "_middle_typ", "_upper_typ", "_slc",
    "_slc_typ"))


# SocConfig.slc_policy, in the order of hal.h's SLC_NONE, SLC_STATIC, SLC_DYNAMIC
SLC_POLICIES = ("none", "static", "dynamic")


class SocConfig:
    """The build's parameters, derived from a persona (spec/persona) and overrides.

    n_channels, n_ways: flash array; luns: LUNs (dies) per chip enable, 1..4 (the persona's
    controller.dies_per_way; "die" model only); page_bytes, spare_bytes, pages_per_block,
    blocks_per_plane, planes: the part; t_r_ns, t_prog_ns, t_bers_ns: its array times;
    page_timing: the part's per page type tR/tPROG maxima and typical values
    ({NandArrayTiming field: ns}, fields PAGE_TIMING_FIELDS, absent: not set); nand_timing:
    "typical" (the dies run the typical values, as real drives do) or "maximum" (worst case);
    onfi_mode: the SDR mode to run the bus at; n_io_queues (1..64); mqes (1..4095: entries
    per queue - 1, CAP.MQES: the persona's queue depth - 1, 31 for SATA NCQ); slc_policy
    ("none", "static", "dynamic") and slc_permille (0..500): the persona's SLC write cache
    and its native footprint per mille of raw capacity ("die" model only); tag_width (1..6),
    max_transfer (bytes, 8192..131072), lbads (9 or 12); buf_size (bytes, power of two);
    sys_clk_freq (Hz); pcie_data_width (64, 128, 256 or 512 bits: the front end's data path
    and the buffer memory's word); persona: name; main_ram_size: the firmware's data RAM;
    nand_model:
    "die" (the ONFI pins leave the SoC) or "emulator" (nand_emulator on DRAM inside it);
    nvddr2_mode: None (SDR only), or the NV-DDR2 timing mode the firmware switches the bus
    to after the SDR bring-up (a board with an ONFI PHY: the channels are built with the
    NV-DDR2 engine and the pins are each channel's PHY interface).
    Two part types (a persona such as intel-750-400g): part is the main part, on channel 0
    way 0 and every target not in part2_targets; part2: None (one part type) or the second
    part's fields {"part", "page_bytes", "spare_bytes", "t_r_ns", "t_prog_ns", "t_bers_ns",
    "page_timing" ({PAGE_TIMING_FIELDS name: ns}, may be absent)}: page_bytes no larger than
    the main part's and page + spare no larger than its (the buffer's plane stride, the back
    end's max_len and the firmware's checkpoint die are the main part's); every other
    field, the row geometry (pages_per_block, blocks_per_plane, planes), bits_per_cell and
    the address cycles among them, is shared by every die (the back end's geometry register,
    soc/persona_params.part_types). part2_targets: the (channel, way) pairs carrying part2,
    never (0, 0); the firmware reads them as SsdlabIdent's part2_mask (bit way x n_channels
    + channel), so n_channels x n_ways is at most 64 with part2; "die" model only (the NAND
    emulator emulates one part).
    Host link (spec/pcie_link.py; the simulation harness paces its TLPs by it):
    host_interface "nvme" or "sata"; pcie_gen (1..5), pcie_lanes (1..16); mps, mrrs (128,
    256, 512 B); link_mb_s_cap (SATA: payload MB/s; None for PCIe); read_latency_ns (the root
    complex's, >= 0); pcie_data_width (64, 128, 256, 512: the front end's TLP data path).
    hw_read (bool, default True): the FTL's hardware read path (rtl/ftl/README.md) carries
    whole-unit Reads of mapped data with no firmware instruction; built only where the
    geometry is one it decodes (units per page, planes, pages per block and blocks per plane
    powers of two), else the build's notes say why not.
    hw_read_credits (1..8, default 8): READs the hardware path may have queued on one die; the
    back end's per-die queue grows by as many (the firmware keeps its 4), so the engine never
    stalls the shared op stream, and a die whose credits are taken holds up the READs behind
    it (rtl/ftl/README.md, "Measured: multi-plane READs and per-die credits").
    hw_read_multi_plane (bool, default True): the hardware path reads whole plane pages of a
    multi-plane page as one multi-plane READ (one tR); False: a READ per plane page, as the
    firmware does.
    ecc: None (no ECC: the firmware reads what the dies return) or the BCH code of every
    channel's nand_ecc, {"m", "t", "data_bytes", "parity_bytes"} (spec/bch.BchCode; the
    persona's `ecc` where its scheme is bch): a page holds page_bytes / data_bytes codewords
    back to back, which must fit the page and its spare (every part's); "die" model only.
    nand_bit_errors (default False): whether the dies flip bits: False (never), True (at their
    part's raw bit error rate, spec/nand_errors.BitErrorModel: wear, retention, read
    disturb, read retry) or a dict of BitErrorModel fields replacing the part's (an
    experiment's error rates, {"rber_base": 1e-4}).
    """

    def __init__(self, **kw):
        self.persona = kw.pop("persona", "custom")
        self.n_channels = kw.pop("n_channels", 18)
        self.n_ways = kw.pop("n_ways", 2)
        self.luns = kw.pop("luns", 1)
        self.page_bytes = kw.pop("page_bytes", 16384)
        self.spare_bytes = kw.pop("spare_bytes", 1024)
        self.pages_per_block = kw.pop("pages_per_block", 512)
        self.blocks_per_plane = kw.pop("blocks_per_plane", 16)
        self.planes = kw.pop("planes", 2)
        self.row_cycles = kw.pop("row_cycles", 3)
        self.part = kw.pop("part", "imft-20nm-mlc-128gbit")
        self.bits_per_cell = kw.pop("bits_per_cell", 2)
        self.t_r_ns = kw.pop("t_r_ns", 115000)
        self.t_prog_ns = kw.pop("t_prog_ns", 1600000)
        self.t_bers_ns = kw.pop("t_bers_ns", 3000000)
        self.page_timing = dict(kw.pop("page_timing", {}))
        self.nand_timing = kw.pop("nand_timing", "typical")
        self.onfi_mode = kw.pop("onfi_mode", 5)
        self.n_io_queues = kw.pop("n_io_queues", 16)
        self.mqes = kw.pop("mqes", 4095)
        self.tag_width = kw.pop("tag_width", 5)
        self.max_transfer = kw.pop("max_transfer", 131072)
        self.lbads = kw.pop("lbads", 9)
        self.buf_size = kw.pop("buf_size", 16 << 20)
        self.sys_clk_freq = kw.pop("sys_clk_freq", 125e6)
        self.main_ram_size = kw.pop("main_ram_size", 4 << 20)
        self.factory_bad_block_rate = kw.pop("factory_bad_block_rate", 0.0)
        self.op_pct = kw.pop("op_pct", 7.0)
        self.pe_cycles = kw.pop("pe_cycles", 3000)
        # SLC write cache (sw/firmware/ftl_slc.c): "none", "static" or "dynamic", and its
        # native footprint in per mille of the raw capacity (0..500)
        self.slc_policy = kw.pop("slc_policy", "none")
        self.slc_permille = kw.pop("slc_permille", 0)
        self.scale_note = kw.pop("scale_note", "")
        self.notes = list(kw.pop("notes", []))
        # "die": the pins go out to NAND dies (the simulation's die models, a card's
        # daughter card); "emulator": nand_emulator on DRAM inside the SoC (soc/nand_emulation)
        self.nand_model = kw.pop("nand_model", "die")
        self.nvddr2_mode = kw.pop("nvddr2_mode", None)
        self.host_interface = kw.pop("host_interface", "nvme")
        self.pcie_gen = kw.pop("pcie_gen", None)
        self.pcie_lanes = kw.pop("pcie_lanes", None)
        self.mps = kw.pop("mps", 256)
        self.mrrs = kw.pop("mrrs", 512)
        self.link_mb_s_cap = kw.pop("link_mb_s_cap", None)
        self.read_latency_ns = kw.pop("read_latency_ns", 400)
        # The PCIe data path (PCIeSimPHY, NvmeDataDma, the buffer memory's word) in bits; the
        # link model (soc/sim_config.py) sets it per persona.
        self.pcie_data_width = kw.pop("pcie_data_width", 64)
        # A second part type on some targets (intel-750-400g): its page, spare and array
        # times; every other field is the main part's (see the docstring).
        self.part2 = kw.pop("part2", None)
        self.part2_targets = tuple(tuple(t) for t in kw.pop("part2_targets", ()))
        # The FTL's hardware read path (rtl/ftl, soc/ftl_read_path.py): built where the
        # geometry allows it (powers of two); False: every request goes to the firmware.
        self.hw_read = kw.pop("hw_read", True)
        self.hw_read_credits = kw.pop("hw_read_credits", DIE_CREDITS)
        self.hw_read_multi_plane = kw.pop("hw_read_multi_plane", True)
        # The BCH code of every channel's nand_ecc (rtl/nand/nand_ecc.py), None: no ECC; and
        # whether the dies flip bits by their part's BitErrorModel (spec/nand_errors.py).
        self.ecc = kw.pop("ecc", None)
        self.nand_bit_errors = kw.pop("nand_bit_errors", False)
        # Die parity (the firmware's ftl_parity.c, die-raid5): dies per stripe, 0: none (the
        # persona's, soc/sim_config.py); the copy engine's XOR mode builds its parity.
        self.parity_stripe = kw.pop("parity_stripe", 0)
        if kw:
            raise ValueError(f"SocConfig: unknown parameter(s) {', '.join(sorted(kw))}")
        if (not isinstance(self.parity_stripe, int) or isinstance(self.parity_stripe, bool)
                or not (self.parity_stripe == 0 or 2 <= self.parity_stripe <= 64)):
            raise ValueError(f"SocConfig: parity_stripe={self.parity_stripe!r}: 0 (none) or "
                             "2..64 dies")
        for name in ("hw_read", "hw_read_multi_plane"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"SocConfig: {name}={getattr(self, name)!r}: True or False")
        if (not isinstance(self.hw_read_credits, int) or isinstance(self.hw_read_credits, bool)
                or not 1 <= self.hw_read_credits <= 8):
            raise ValueError(f"SocConfig: hw_read_credits={self.hw_read_credits!r}: an integer "
                             "1..8")
        if self.pcie_data_width not in (64, 128, 256, 512):
            raise ValueError(f"SocConfig: pcie_data_width={self.pcie_data_width!r}: one of "
                             "64, 128, 256, 512")
        if self.nand_timing not in ("typical", "maximum"):
            raise ValueError(f"SocConfig: nand_timing={self.nand_timing!r}: one of typical, "
                             "maximum")
        bad = sorted(set(self.page_timing) - set(PAGE_TIMING_FIELDS))
        if bad:
            raise ValueError(f"SocConfig: page_timing: unknown field(s) {', '.join(bad)}; "
                             f"one of {', '.join(PAGE_TIMING_FIELDS)}")
        if self.slc_policy not in SLC_POLICIES:
            raise ValueError(f"SocConfig: slc_policy={self.slc_policy!r}: one of "
                             f"{', '.join(SLC_POLICIES)}")
        if isinstance(self.slc_permille, bool) or not isinstance(self.slc_permille, int) \
                or not 0 <= self.slc_permille <= 500:
            raise ValueError(f"SocConfig: slc_permille={self.slc_permille!r}: an integer "
                             f"0..500 (per mille of the raw capacity)")
        if self.slc_policy != "none" and self.nand_model != "die":
            raise ValueError(f"SocConfig: slc_policy={self.slc_policy!r} needs "
                             f"nand_model='die' (the NAND emulator has no SLC mode)")
        if self.nand_model not in ("die", "emulator"):
            raise ValueError(f"SocConfig: nand_model={self.nand_model!r}: one of die, emulator")
        if isinstance(self.luns, bool) or self.luns not in (1, 2, 3, 4):
            raise ValueError(f"SocConfig: luns={self.luns!r}: 1..4 (the flash op's 2-bit lun "
                             f"field)")
        if self.luns > 1 and self.nand_model != "die":
            raise ValueError(f"SocConfig: luns={self.luns} needs nand_model='die' (the NAND "
                             f"emulator models one LUN per chip enable)")
        if self.nvddr2_mode is not None and self.nvddr2_mode not in NVDDR2_MODES:
            raise ValueError(f"SocConfig: nvddr2_mode={self.nvddr2_mode!r}: None or one of "
                             f"{sorted(NVDDR2_MODES)}")
        if self.nvddr2_mode is not None and self.nand_model != "die":
            raise ValueError("SocConfig: nvddr2_mode needs nand_model='die' (the emulator "
                             "speaks SDR)")
        self._check_part2()
        self._check_ecc()
        handles = 2 * (1 << self.tag_width) * self.max_transfer
        if handles >= self.buf_size:
            raise ValueError(f"SocConfig: buf_size={self.buf_size} leaves no firmware slots "
                             f"after the {handles} bytes of command buffers")
        self.fw_slot_first = handles // SLOT

    PART2_FIELDS = ("part", "page_bytes", "spare_bytes", "t_r_ns", "t_prog_ns", "t_bers_ns")

    def _check_part2(self):
        if self.part2 is None:
            if self.part2_targets:
                raise ValueError("SocConfig: part2_targets given without part2")
            return
        if not isinstance(self.part2, dict):
            raise ValueError(f"SocConfig: part2={self.part2!r}: None or a dict of the second "
                             f"part's fields")
        p2 = self.part2 = {**self.part2, "page_timing": dict(self.part2.get("page_timing", {}))}
        bad = sorted(set(p2) - set(self.PART2_FIELDS) - {"page_timing"})
        missing = [k for k in self.PART2_FIELDS if k not in p2]
        if bad or missing:
            raise ValueError("SocConfig: part2: " + "; ".join(
                ([f"unknown field(s) {', '.join(bad)}"] if bad else [])
                + ([f"missing {', '.join(missing)}"] if missing else []))
                + f" (fields: {', '.join(self.PART2_FIELDS)}, page_timing)")
        bad = sorted(set(p2["page_timing"]) - set(PAGE_TIMING_FIELDS))
        if bad:
            raise ValueError(f"SocConfig: part2 page_timing: unknown field(s) "
                             f"{', '.join(bad)}; one of {', '.join(PAGE_TIMING_FIELDS)}")
        if p2["page_bytes"] > self.page_bytes or \
                p2["page_bytes"] + p2["spare_bytes"] > self.page_bytes + self.spare_bytes:
            raise ValueError(f"SocConfig: part2 page {p2['page_bytes']} + {p2['spare_bytes']} "
                             f"B: no larger than the main part's {self.page_bytes} + "
                             f"{self.spare_bytes} (the buffer's plane stride and the back "
                             f"end's max_len are the main part's)")
        if self.nand_model != "die":
            raise ValueError("SocConfig: part2 needs nand_model='die' (the NAND emulator "
                             "emulates one part)")
        if self.n_channels * self.n_ways > 64:
            raise ValueError(f"SocConfig: part2 with {self.n_channels} x {self.n_ways} "
                             f"targets: at most 64 (SsdlabIdent's part2_mask_lo/hi)")
        t = self.part2_targets
        if not t:
            raise ValueError("SocConfig: part2 without part2_targets (the (channel, way) "
                             "pairs carrying it)")
        if len(set(t)) != len(t):
            raise ValueError(f"SocConfig: part2_targets {t}: a target twice")
        for c, w in t:
            if not (0 <= c < self.n_channels and 0 <= w < self.n_ways):
                raise ValueError(f"SocConfig: part2_targets: ({c}, {w}) is outside "
                                 f"{self.n_channels} channels x {self.n_ways} ways")
        if (0, 0) in t:
            raise ValueError("SocConfig: part2_targets: (0, 0) carries the main part (the "
                             "firmware's checkpoint die)")
        self.part2_targets = tuple(sorted(t))

    ECC_FIELDS = ("m", "t", "data_bytes", "parity_bytes")

    def _check_ecc(self):
        if isinstance(self.nand_bit_errors, dict):
            from dataclasses import fields, replace

            from spec.nand_errors import BitErrorModel
            names = [f.name for f in fields(BitErrorModel)]
            bad = sorted(set(self.nand_bit_errors) - set(names))
            if bad:
                raise ValueError(f"SocConfig: nand_bit_errors: unknown field(s) "
                                 f"{', '.join(bad)}; one of {', '.join(names)}")
            try:
                replace(BitErrorModel(), **self.nand_bit_errors)
            except ValueError as e:
                raise ValueError(f"SocConfig: nand_bit_errors: {e}") from None
        elif not isinstance(self.nand_bit_errors, bool):
            raise ValueError(f"SocConfig: nand_bit_errors={self.nand_bit_errors!r}: True, "
                             f"False or a dict of BitErrorModel fields")
        if self.ecc is None:
            return
        if not isinstance(self.ecc, dict) or sorted(self.ecc) != sorted(self.ECC_FIELDS):
            raise ValueError(f"SocConfig: ecc={self.ecc!r}: None or a dict of "
                             f"{', '.join(self.ECC_FIELDS)} (a BCH code, spec/bch.py)")
        from spec.bch import BchCode
        try:
            code = BchCode(**self.ecc)
        except ValueError as e:
            raise ValueError(f"SocConfig: ecc: {e}") from None
        d = code.data_bytes
        if d & (d - 1):
            raise ValueError(f"SocConfig: ecc data_bytes={d}: a power of two (whole codewords "
                             f"per page)")
        if self.nand_model != "die":
            raise ValueError("SocConfig: ecc needs nand_model='die' (the NAND emulator's "
                             "data path has no ECC)")
        pages = [(self.part, self.page_bytes, self.spare_bytes)]
        if self.part2 is not None:
            pages.append((self.part2["part"], self.part2["page_bytes"],
                          self.part2["spare_bytes"]))
        for part, page, spare in pages:
            if page % d or page // d * (d + code.room) > page + spare:
                raise ValueError(
                    f"SocConfig: ecc: {page // d if page % d == 0 else page / d} codewords "
                    f"of {d} + {code.room} bytes do not fill the {page} + {spare} byte page "
                    f"of {part} (data bytes a multiple of codewords, parity in the spare)")

    def ecc_page_bytes(self):
        """The bytes of a page an ECC program writes (codewords back to back), 0: no ECC."""
        if self.ecc is None:
            return 0
        from spec.bch import BchCode
        code = BchCode(**self.ecc)
        return self.page_bytes // code.data_bytes * (code.data_bytes + code.room)

    def part2_mask(self):
        """The targets carrying part2 as a bitmap: bit way x n_channels + channel (the
        firmware's target index; die d is channel d % n_channels, way (d / n_channels) %
        n_ways)."""
        return sum(1 << (w * self.n_channels + c) for c, w in self.part2_targets)

    def die_part(self, channel, way):
        """{"part", "page_bytes", "spare_bytes", "t_r_ns", "t_prog_ns", "t_bers_ns",
        "page_timing"} of the dies on target (channel, way)."""
        if (channel, way) in self.part2_targets:
            return dict(self.part2)
        return {k: getattr(self, k) for k in self.PART2_FIELDS + ("page_timing",)}

    def as_dict(self):
        return dict(vars(self))


def flash_part(cfg):
    """The NandPart on the channels of SocConfig cfg: the persona's (its main part), or the one
    the NAND emulators present (soc/nand_emulation.py emulated_part)."""
    from spec.nand_geometry import PARTS
    if cfg.nand_model == "emulator":
        from soc.nand_emulation import emulated_part
        return emulated_part(cfg)
    return PARTS[cfg.part]


class SsdlabIdent(LiteXModule):
    """The build, for the firmware and for `ssdlab identify`: constant CSRs."""

    def __init__(self, cfg):
        consts = [("git_hash", git_hash()), ("n_channels", cfg.n_channels),
                  ("n_ways", cfg.n_ways), ("luns", cfg.luns),
                  ("n_io_queues", cfg.n_io_queues),
                  ("mqes", cfg.mqes),
                  ("tag_width", cfg.tag_width), ("max_transfer", cfg.max_transfer),
                  ("lbads", cfg.lbads), ("buf_slots", cfg.buf_size // SLOT),
                  ("fw_slot_first", cfg.fw_slot_first), ("clk_hz", int(cfg.sys_clk_freq)),
                  ("page_bytes", cfg.page_bytes), ("spare_bytes", cfg.spare_bytes),
                  ("pages_per_block", cfg.pages_per_block),
                  ("blocks_per_plane", cfg.blocks_per_plane), ("planes", cfg.planes),
                  ("onfi_mode", cfg.onfi_mode),
                  # the NV-DDR2 mode to switch to after bring-up, NVDDR2_NONE if SDR only
                  ("nvddr2_mode", NVDDR2_NONE if cfg.nvddr2_mode is None else cfg.nvddr2_mode),
                  # the FTL's over-provisioning (per mille of raw) and the part's P/E budget
                  ("op_permille", round(cfg.op_pct * 10)), ("pe_cycles", cfg.pe_cycles),
                  # the SLC write cache (hal.h SLC_*) and the part's bits per cell
                  ("bits_per_cell", cfg.bits_per_cell),
                  ("slc_policy", SLC_POLICIES.index(cfg.slc_policy)),
                  ("slc_permille", cfg.slc_permille)]
        name = cfg.persona.encode()[:31].ljust(32, b"\0")
        consts += [(f"persona{i}", int.from_bytes(name[4 * i:4 * i + 4], "little"))
                   for i in range(8)]
        # A second part type (SocConfig part2): its page and spare bytes (0: one part type)
        # and the targets carrying it, bit t = way x n_channels + channel (the firmware's
        # target index). Last, so the registers above keep their addresses.
        p2 = cfg.part2 or {"page_bytes": 0, "spare_bytes": 0}
        mask = cfg.part2_mask()
        consts += [("part2_page_bytes", p2["page_bytes"]),
                   ("part2_spare_bytes", p2["spare_bytes"]),
                   ("part2_mask_lo", mask & 0xFFFFFFFF), ("part2_mask_hi", mask >> 32)]
        # The ECC (SocConfig ecc): data bytes per codeword (0: none), the parity's room after
        # each on flash and the bits it corrects; the read-retry levels of SET FEATURES 89h
        # (1: the part has none).
        from spec.bch import BchCode
        from spec.nand_geometry import PARTS
        code = BchCode(**cfg.ecc) if cfg.ecc else None
        part = PARTS.get(cfg.part)
        consts += [("ecc_data_bytes", code.data_bytes if code else 0),
                   ("ecc_room", code.room if code else 0), ("ecc_t", code.t if code else 0),
                   ("retry_levels", part.bit_errors.retry_levels if part else 1),
                   # die parity: dies per stripe (0: none)
                   ("parity_stripe", cfg.parity_stripe)]
        for n, v in consts:
            csr = CSRStatus(32, name=n, reset=v)
            setattr(self, f"_{n}", csr)


class BufferWindow(LiteXModule):
    """The CPU's 32-bit Wishbone window on the buffer memory: a 32-bit reader and writer (the
    memory picks the lane of its wider word)."""

    def __init__(self, memory):
        self.bus = bus = wishbone.Interface(data_width=32, address_width=32, addressing="word")
        wr = memory.add_writer("cpu", width=32)
        rd, rdata = memory.add_reader("cpu", width=32)
        aw = memory.port_addr_width(32)
        self.comb += [
            wr.addr.eq(bus.adr[:aw]), rd.addr.eq(bus.adr[:aw]),
            wr.data.eq(bus.dat_w),
            wr.strb.eq(bus.sel),
        ]
        self.fsm = fsm = FSM()
        fsm.act("IDLE",
            If(bus.cyc & bus.stb,
                If(bus.we,
                    wr.valid.eq(1),
                    If(wr.ready, bus.ack.eq(1))
                ).Else(
                    rd.valid.eq(1),
                    If(rd.ready, NextState("DATA"))
                )
            )
        )
        fsm.act("DATA",
            If(rdata.valid,
                bus.ack.eq(1),
                bus.dat_r.eq(rdata.data),
                NextState("IDLE")
            )
        )
        self.comb += rdata.ready.eq(1)


class FirmwarePorts(LiteXModule):
    """Every stream between the hardware and the firmware as CSRs (soc/fw_ports), plus the
    NVMe controller's and the flash subsystem's configuration and status signals."""

    def __init__(self, nvme, flash, cfg, be_depth, sample_margin_ns=1.0, read_path=None):
        n = nvme
        # NVMe processor interface.
        self.cmd     = StreamToCSR(n.m_fw_cmd)
        self.cpl     = CSRToStream(n.s_fw_cpl)
        self.sqcfg   = CSRToStream(n.s_fw_sq_cfg)
        self.cqcfg   = CSRToStream(n.s_fw_cq_cfg)
        self.sqpage  = CSRToStream(n.s_fw_sq_page)
        self.cqpage  = CSRToStream(n.s_fw_cq_page)
        self.xfer    = CSRToStream(n.s_fw_xfer)
        self.xfercpl = StreamToCSR(n.m_fw_xfer_cpl)
        self.ivc     = CSRToStream(n.s_fw_ivc)
        self.aer     = StreamToCSR(n.m_fw_aer)
        # Fast path: block requests queue (one per tag at most), completions.
        # With the hardware read path (soc/ftl_read_path.py), the requests pass through it
        # first: the firmware gets what it hands over; both complete into the front end.
        be_fifo = stream.SyncFIFO(n.m_be_req.description, be_depth)
        self.be_fifo = be_fifo
        if read_path is None:
            self.comb += n.m_be_req.connect(be_fifo.sink)
            becpl = n.s_be_cpl
        else:
            self.comb += [n.m_be_req.connect(read_path.sink_req),
                          read_path.source_fw.connect(be_fifo.sink)]
            becpl = stream.Endpoint(n.s_be_cpl.description)
            self.cpl_merge = StreamMerge(read_path.source_cpl, becpl, n.s_be_cpl)
        self.bereq   = StreamToCSR(be_fifo.source)
        self.becpl   = CSRToStream(becpl)
        # Flash: ops queue in, completions queue out (the read path's by their tags).
        op_fifo = stream.SyncFIFO(flash.s_op.description, 16)
        cpl_fifo = stream.SyncFIFO(flash.m_cpl.description, 64)
        self.op_fifo, self.cpl_fifo = op_fifo, cpl_fifo
        if read_path is None:
            self.comb += [op_fifo.source.connect(flash.s_op),
                          flash.m_cpl.connect(cpl_fifo.sink)]
        else:
            self.op_merge = StreamMerge(read_path.source_op, op_fifo.source, flash.s_op)
            self.cpl_route = StreamRoute(flash.m_cpl, read_path.sink_fcpl, cpl_fifo.sink,
                                         flash.m_cpl.tag >= FTAG_BASE)
        self.fop     = CSRToStream(op_fifo.sink)
        self.fcpl    = StreamToCSR(cpl_fifo.source)
        self.ports = [("cmd", self.cmd), ("cpl", self.cpl), ("sqcfg", self.sqcfg),
                      ("cqcfg", self.cqcfg), ("sqpage", self.sqpage),
                      ("cqpage", self.cqpage), ("xfer", self.xfer),
                      ("xfercpl", self.xfercpl), ("ivc", self.ivc), ("aer", self.aer),
                      ("bereq", self.bereq), ("becpl", self.becpl), ("fop", self.fop),
                      ("fcpl", self.fcpl)]
        # They are spec/fw_streams.py's ports (the firmware's C is generated from it).
        ch_bits = max(1, (cfg.n_channels - 1).bit_length())
        want = port_layouts(cfg.tag_width, cfg.page_bytes + cfg.spare_bytes, ch_bits)
        have = [(name, a.direction, [(f, w) for f, w, _, _ in a.placed]) for name, a in self.ports]
        if have != want:
            raise ValueError(f"FirmwarePorts: ports {have} differ from spec/fw_streams {want}")

        # Plain registers.
        self._agg_thr    = CSRStorage(8)
        self._agg_time   = CSRStorage(8)
        self._ns_size    = CSRStorage(64)
        self._abort_arm  = CSRStorage(1)
        self._abort_sqid = CSRStorage(16)
        self._abort_cid  = CSRStorage(16)
        self._abort_hit  = CSRStatus(1)
        self._sq_pending = CSRStatus(len(n.sq_pending))
        self._io_busy    = CSRStatus(1)
        self._ctrl_enabled = CSRStatus(1)
        self._shn        = CSRStatus(2)
        self._shn_done   = CSRStorage(1)
        self._reset_pending = CSRStatus(1)
        self._reset_ack  = CSR(1)           # write: the firmware has handled the reset
        self._fatal      = CSRStorage(1)    # the firmware has failed: CSTS.CFS
        self.wdt_fired   = Signal()         # the watchdog fired: CSTS.CFS too
        self.comb += [
            n.fw_agg_thr.eq(self._agg_thr.storage), n.fw_agg_time.eq(self._agg_time.storage),
            n.fw_ns_size.eq(self._ns_size.storage),
            n.fw_abort_arm.eq(self._abort_arm.storage),
            n.fw_abort_sqid.eq(self._abort_sqid.storage),
            n.fw_abort_cid.eq(self._abort_cid.storage),
            self._abort_hit.status.eq(n.abort_hit),
            self._sq_pending.status.eq(n.sq_pending),
            self._io_busy.status.eq(n.io_busy),
            self._ctrl_enabled.status.eq(n.ctrl_enabled),
            self._shn.status.eq(n.fw_shn),
            n.fw_shn_done.eq(self._shn_done.storage),
            n.fw_reset_gate.eq(1),
            self._reset_pending.status.eq(n.fw_reset_pending),
            n.fw_reset_ack.eq(self._reset_ack.re),
            n.fw_fatal.eq(self._fatal.storage | self.wdt_fired),
        ]

        # Flash configuration: geometry, plane stride, write protect, and the bus timing of
        # mode 0 (after power-on) or of the persona's mode, chosen by `timing_mode`.
        self._geometry    = CSRStorage(11)
        self._plane_slots = CSRStorage(8)
        self._write_protect = CSRStorage(1)
        self._busy_timeout = CSRStorage(BUSY_TIMEOUT_BITS, reset=busy_timeout_ticks(cfg),
                                        description="a die busy this long is hung (busy "
                                                    "ticks of 4096 cycles; 0: never)")
        self._timing_fast = CSRStorage(1, description="0: SDR mode 0 timing; 1: the build's "
                                                      "onfi_mode")
        self._flash_busy  = CSRStatus(1)
        clk_mhz = cfg.sys_clk_freq / 1e6
        # tCCS: the part's (its parameter page's), where longer than the mode's 500 ns: the
        # NAND emulator's covers its DRAM latency (soc/nand_emulation.py EMU_T_CCS_NS)
        part_ccs = math.ceil(flash_part(cfg).t_ccs_ns * clk_mhz / 1000 - 1e-9)
        slow = engine_registers(0, clk_mhz, 8, sample_margin_ns=sample_margin_ns)
        fast = engine_registers(cfg.onfi_mode, clk_mhz, 8, sample_margin_ns=sample_margin_ns)
        for regs in (slow, fast):
            regs["t_ccs"] = max(regs["t_ccs"], part_ccs)
        self.comb += [
            flash.geometry.eq(self._geometry.storage),
            flash.plane_slots.eq(self._plane_slots.storage),
            flash.write_protect.eq(self._write_protect.storage),
            flash.busy_timeout.eq(self._busy_timeout.storage),
            self._flash_busy.status.eq(flash.busy),
        ]
        for name, sig in flash.timing.items():
            self.comb += If(self._timing_fast.storage, sig.eq(fast[name])).Else(
                sig.eq(slow[name]))
        if flash.with_nvddr2:
            # The engine choice (switched by the firmware while the flash is idle, after the
            # dies took SET FEATURES) and the NV-DDR2 mode's timing at this clock.
            self._nvddr2 = CSRStorage(1, description="1: the channels' NV-DDR2 engines")
            regs = nvddr2_engine_registers(cfg.nvddr2_mode, clk_mhz, 8)
            self.comb += [flash.nvddr2.eq(self._nvddr2.storage)]
            self.comb += [sig.eq(regs[name]) for name, sig in flash.nvddr2_timing.items()]
            # DQS calibration: a write of dqs_cal_start sweeps every channel's delay at once
            # (reading die `way`'s ONFI signature); busy / ok per channel; the selected
            # channel's window and loaded tap.
            n, tb = flash.n_channels, len(flash.dqs_cal_fallback)
            self._dqs_cal_start = CSR(1)
            self._dqs_cal_way = CSRStorage(3)
            self._dqs_cal_fallback = CSRStorage(tb, reset=(1 << tb) // 4)
            self._dqs_cal_busy = CSRStatus(n)
            self._dqs_cal_ok = CSRStatus(n)
            self._dqs_cal_sel = CSRStorage(max(1, (n - 1).bit_length()))
            self._dqs_cal_result = CSRStatus(32, description="selected channel: tap [8:0], "
                                             "window_lo [17:9], window_hi [26:18]")
            pins = flash.pins
            self.comb += [
                flash.dqs_cal_start.eq(self._dqs_cal_start.re),
                flash.dqs_cal_way.eq(self._dqs_cal_way.storage),
                flash.dqs_cal_fallback.eq(self._dqs_cal_fallback.storage),
                self._dqs_cal_busy.status.eq(Cat(*[p["dqs_cal_busy"] for p in pins])),
                self._dqs_cal_ok.status.eq(Cat(*[p["dqs_cal_ok"] for p in pins])),
                Case(self._dqs_cal_sel.storage, {c: self._dqs_cal_result.status.eq(
                    Cat(p["dqs_cal_tap"], Replicate(0, 9 - tb), p["dqs_cal_window_lo"],
                        Replicate(0, 9 - tb), p["dqs_cal_window_hi"]))
                    for c, p in enumerate(pins)}),
            ]

    def wake_signals(self):
        """(sources, status) for FwWait, from the ports themselves so the list cannot drift:
        sources are levels that need the firmware (a stream towards it is valid, a controller
        reset is pending); status is every other register the firmware reads in its loop (a
        stream from it is busy, and each plain status register): a change wakes it."""
        sources = [a._valid.status for _, a in self.ports if a.direction == TO_FW]
        sources.append(self._reset_pending.status)
        status = [a._busy.status for _, a in self.ports if a.direction == FROM_FW]
        status += [v.status for k, v in sorted(vars(self).items())
                   if isinstance(v, CSRStatus) and k not in ("_reset_pending", *HW_ACTIVITY)]
        return sources, status

    def c_header(self):
        return c_header("fw", self.ports)


class SsdlabSoC(SoCCore):
    """The drive. platform: the simulation platform (sw/ssdlab/flows/sim_gateware.py:
    `sys_clk`, `sys_rst`, `serial` pads) or a board's (soc/targets); cfg: SocConfig;
    build_dir: where generated Verilog goes; rom_init: the firmware image as 32-bit words (or
    [] for none).

    Board targets also pass: pcie_phy, a LitePCIe PHY (64-bit, bar0_size = NVME_PCIE's; None:
    PCIeSimPHY); crg, the module making the `sys` clock domain (None: a CRG on the `sys_clk`
    and `sys_rst` pads); uart_name, LiteX's UART choice (default "sim"); onfi_phy_latency,
    the cycles a board's ONFI PHY adds between the engine's pins and DQ sampling
    (PHY_OUT_LATENCY + PHY_IN_LATENCY, rtl/nand/onfi_phy_if.connect_sdr_engine; 0: pins
    straight to the dies, as in simulation), added to tREA's sampling margin.
    ecc_gate_clocks: the ECC decoders' stages on gated clocks (rtl/nand/bch_decoder.py
    gate_clocks): for the simulated drive, where an idle stage then costs nothing; a card's
    fabric keeps them on the system clock (False)."""

    def __init__(self, platform, cfg, build_dir, rom_init=(), pcie_phy=None, crg=None,
                 uart_name="sim", onfi_phy_latency=0, onfi_dqs_tap_bits=5,
                 ecc_gate_clocks=False):
        SoCCore.__init__(self, platform, cfg.sys_clk_freq,
                         cpu_type="vexriscv", cpu_variant="standard",
                         integrated_rom_size=128 * 1024, integrated_rom_init=list(rom_init),
                         integrated_sram_size=8 * 1024, bus_bursting=True,
                         integrated_main_ram_size=cfg.main_ram_size,
                         uart_name=uart_name, with_timer=True, timer_uptime=True,
                         # The firmware's WAIT (soc/fw_wait.py) stalls a load for as long as
                         # the drive is idle (minutes): no bus timeout may cut it short.
                         bus_timeout=None,
                         ident=f"ssdlab {cfg.persona}", ident_version=False)
        self.cfg = cfg
        self.crg = crg if crg is not None else CRG(platform.request("sys_clk"),
                                                   rst=platform.request("sys_rst"))

        # PCIe and the NVMe front end.
        if pcie_phy is None:
            # MSI-X as on a card: the host enables it in configuration space (the harness's
            # SB_CFG_WRITE drives the PHY's Message Control inputs); MSI until it does.
            pcie_phy = PCIeSimPHY(data_width=cfg.pcie_data_width,
                                  bar0_size=NVME_PCIE["bar0_size"], with_msix=True)
        self.pcie_phy = phy = pcie_phy
        self.pcie_endpoint = endpoint = LitePCIeEndpoint(phy, endianness=phy.endianness,
                                                         address_width=64,
                                                         max_pending_requests=8)
        self.pcie_fixes = LitePCIeFixes(
            endpoint, cpl_timeout_cycles=round(cfg.sys_clk_freq * CPL_TIMEOUT_S))
        self.nvme = nvme = NvmeController(endpoint, n_io_queues=cfg.n_io_queues, mqes=cfg.mqes,
                                          tag_width=cfg.tag_width,
                                          max_transfer=cfg.max_transfer, lbads=cfg.lbads,
                                          clk_freq_hz=cfg.sys_clk_freq,
                                          with_msix=hasattr(phy, "msix_enable"))
        # The front end's queue and table RAMs are its own, not CPU-visible CSR memories.
        nvme.get_memories = list

        # Buffer memory and its clients.
        # Words as wide as the front end's data path (the PHY's data_width).
        self.bufmem = mem = BufferMemory(cfg.buf_size, data_width=phy.data_width)
        nw = mem.add_writer("nvme")
        nr, nrd = mem.add_reader("nvme")
        self.comb += [
            nw.valid.eq(nvme.m_bw.valid), nvme.m_bw.ready.eq(nw.ready),
            nw.addr.eq(nvme.m_bw.addr), nw.data.eq(nvme.m_bw.data), nw.strb.eq(nvme.m_bw.strb),
            nr.valid.eq(nvme.m_br.valid), nvme.m_br.ready.eq(nr.ready),
            nr.addr.eq(nvme.m_br.addr),
            nvme.s_brd.valid.eq(nrd.valid), nvme.s_brd.data.eq(nrd.data), nrd.ready.eq(1),
        ]
        self.bufcopy = BufferCopy(mem)
        self.bufwin = BufferWindow(mem)
        self.bus.add_slave("bufwin", self.bufwin.bus,
                           SoCRegion(origin=BUF_WINDOW, size=cfg.buf_size, cached=False))

        # The FTL's hardware read path, where the geometry allows it; its READs get their own
        # share of every die's queue in the back end.
        read_params, why = engine_params(cfg) if cfg.hw_read else (None, None)
        if cfg.hw_read and read_params is None:
            cfg.notes.append(f"hardware read path not built ({why}): the firmware reads")

        # Flash.
        engine_depth = cfg.hw_read_credits if read_params else 0
        self.flash = flash = NandFlash(platform, build_dir, mem, n_channels=cfg.n_channels,
                                       queue_depth=FW_DIE_DEPTH + engine_depth,
                                       n_ways=cfg.n_ways, n_luns=cfg.luns,
                                       max_planes=cfg.planes,
                                       max_len=cfg.page_bytes + cfg.spare_bytes,
                                       row_cycles=cfg.row_cycles,
                                       with_nvddr2=cfg.nvddr2_mode is not None,
                                       dqs_tap_bits=onfi_dqs_tap_bits,
                                       ecc=None if cfg.ecc is None else
                                       {**cfg.ecc, "gate_clocks": ecc_gate_clocks})

        if cfg.nand_model == "emulator":
            from soc.nand_emulation import NandEmulation
            self.nand_emulation = NandEmulation(platform, build_dir, cfg, flash,
                                                dram=self.nand_dram())

        # Firmware interface and the build's identity.
        margin = 1.0 + onfi_phy_latency * 1e9 / cfg.sys_clk_freq
        self.ftl_read = None
        if read_params is not None:
            self.ftl_read = FtlReadPath(platform, build_dir, read_params, nvme.fw_ns_size)
            # the map lives in main RAM: a second read port of it
            self.ftl_read.attach_map_port(self.main_ram.mem.get_port(),
                                          self.mem_map["main_ram"])
        self.fw = FirmwarePorts(nvme, flash, cfg, be_depth=1 << cfg.tag_width,
                                sample_margin_ns=margin, read_path=self.ftl_read)
        self.ssdlab_ident = SsdlabIdent(cfg)

        # The firmware's wait, and the drive's quiet state for the simulation's fast-forward.
        sources, status = self.fw.wake_signals()
        if self.ftl_read is not None:
            sources.append(self.ftl_read.hint_valid)
        status += [self.bufcopy._done.status, self.bufcopy._room.status]
        self.fw_wait = fw_wait = FwWait(len(Cat(*sources)), len(Cat(*status)),
                                        self.timer0.uptime_cycles)
        self.comb += [fw_wait.sources.eq(Cat(*sources)), fw_wait.status.eq(Cat(*status)),
                      fw_wait.active.eq(nvme.io_busy | (nvme.sq_pending != 0))]
        self.bus.add_slave("fw_wait", fw_wait.bus,
                           SoCRegion(origin=FW_WAIT_BASE, size=0x1000, cached=False))
        # The watchdog: a CPU that runs its period without waiting is stuck; CSTS.CFS and a
        # CPU reset (do_finalize), and the firmware recovers at boot.
        self.fw_watchdog = FwWatchdog()
        self.comb += [self.fw_watchdog.waiting.eq(fw_wait.waiting),
                      self.fw.wdt_fired.eq(self.fw_watchdog.fired)]
        # quiet: the CPU stalls in WAIT, timer0's down-counter is off and no interrupt is
        # pending in the front end. The harness adds its own conditions (nothing on the link,
        # no request of its own, the top's outputs stable) (sim/harness/README.md).
        # The free-running counters the harness advances over a skipped window, named for it
        # (sw/ssdlab/flows/sim_gateware.FF_COUNTERS; the CPU's mcycle is VexRiscv's own).
        self.timer0.uptime_cycles.name_override = "timer0_uptime_cycles"
        nvme.irq.time_base.name_override = "nvme_irq_now"
        self.ff_quiet = Signal(name_override="ff_quiet")
        self.ff_wake_at = Signal(64, name_override="ff_wake_at")
        # a flash op queued or running: with no die's R/B# edge to come, a die has hung and
        # the back end's busy timeout must be clocked through, not jumped over
        self.ff_flash_busy = Signal(name_override="ff_flash_busy")
        # The NAND emulator counts its busy times in RTL counters: never quiet.
        emulated = cfg.nand_model == "emulator"
        self.comb += [
            # BufferCopy works inside the SoC with no output of the top changing: a fill of
            # a deallocated 128 KiB read outlasts the harness's settle, and a jump would
            # freeze it with the CPU waiting for its `done` (a read that never completes).
            # The same for the flash ECC: it decodes a codeword after its last bus byte.
            self.ff_quiet.eq(fw_wait.waiting & ~self.timer0._en.storage & ~nvme.irq.pending
                             & ~self.bufcopy.busy & ~self.flash.ecc_busy & (0 if emulated else 1)
                             & (self.ftl_read.quiet if self.ftl_read else 1)
                             # a DMA read awaits the host: its completion timeout counts
                             & ~self.pcie_fixes.reads_pending),
            self.ff_wake_at.eq(fw_wait.wake_at),
            self.ff_flash_busy.eq(self.flash.busy),
        ]
        # The back end's busy ticks: from the uptime the fast-forward advances, so that the
        # cycles it skips count towards a busy timeout. Registered: the harness writes the
        # uptime between evaluations (a public read-write variable), so Verilator evaluates
        # every combinational block reading it at every evaluation, and each channel's die
        # scheduler reads `busy_now` in its one next-state block (simulation speed, issue 19).
        # A register reads it only at the clock. After a jump it lags for one cycle, which
        # no scheduler can see: nothing starts a busy wait in the first cycle after a quiet
        # window, and a timeout that expired inside a jump is late by that jump anyway.
        self.sync += self.flash.busy_now.eq(
            self.timer0.uptime_cycles[BUSY_TICK_BITS:BUSY_TICK_BITS + BUSY_NOW_BITS])

    def do_finalize(self):
        SoCCore.do_finalize(self)
        # The CSR bridge exists only now: FwWait sees every register write the CPU makes.
        self.comb += self.fw_wait.wrote.eq(self.csr_bridge.csr.we)
        # The CPU's reset as LiteX drives it (SoC controller) or by the watchdog: a later
        # assignment than add_cpu's, so this one holds.
        self.comb += self.cpu.reset.eq(getattr(self.ctrl, "soc_rst", 0) |
                                       getattr(self.ctrl, "cpu_rst", 0) |
                                       self.fw_watchdog.cpu_reset)

    def nand_dram(self):
        """The LiteDRAM core the NAND emulators sit on (nand_model "emulator"): None here,
        so NandEmulation makes LiteDRAM's simulation model; a board returns its own DDR
        (soc/targets/board.py)."""
        return None

    def extra_ios(self):
        """Ports besides the platform's pads: the PCIe PHY's and the ONFI pins."""
        ios = getattr(self.pcie_phy, "get_ios", None)       # a board's PHY has pads instead
        ios = list(ios()) if ios else []
        ios += [self.ff_quiet, self.ff_wake_at, self.ff_flash_busy]
        if self.cfg.nand_model == "emulator":
            return ios + [self.nand_emulation.rule_count, self.nand_emulation.failures]
        return ios + self.flash.pin_ios()
