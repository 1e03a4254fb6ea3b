# SPDX-License-Identifier: BSD-2-Clause
"""NVMe 1.4 BAR0 controller registers, described once.

`REGISTERS` is the one description of the controller registers at BAR0 (NVMe 1.4 section 3.1).
Everything else is generated from it, so the RTL, the software and the documentation cannot
disagree:

- `rtl.nvme.nvme_regs.RegDecode`: the Migen register decode (storage, byte-strobed writes,
  read mux) built from it;
- `c_header()`: offsets, field shifts and masks and the doorbell offset macro for `sw/`;
- Python constants for tests: `REGS`, `reset_value()`, `rw_mask()`, `doorbell_offset()`;
- `markdown()`: the register table in rtl/nvme/README.md.

    python -m spec.nvme_regmap --c-header build/nvme_regs.h
    python -m spec.nvme_regmap --markdown            # print the table
    python -m spec.nvme_regmap --update-readme       # rewrite it between the markers

Access kinds: RO (reads the reset value or, for `hw` fields, a value driven by the core),
RW (storage), RW1S / RW1C (writing 1 sets / clears bits of a storage shared with another
register: INTMS and INTMC both act on the interrupt mask). Bits not listed are reserved: they
read 0 and ignore writes. Offsets not listed read 0 and ignore writes.
"""

import argparse
import sys
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path

__all__ = [
    "Field", "Register", "REGISTERS", "REGS", "DOORBELL_BASE", "DEFAULT_PARAMS",
    "doorbell_offset", "doorbell_span", "field_reset", "reset_value", "rw_mask", "field_get",
    "field_put", "c_header", "markdown", "update_readme", "readme_is_current",
]

ACCESS = ("RO", "RW", "RW1S", "RW1C")

# Defaults of the NvmeRegs parameters that appear in register values.
DEFAULT_PARAMS = {"n_io_queues": 64, "mqes": 4095, "dstrd": 0, "timeout_500ms": 20,
                  "mpsmin": 0, "mpsmax": 0, "cqr": 1}

DOORBELL_BASE = 0x1000


@dataclass(frozen=True)
class Field:
    """A field of a register.

    reset:   an int, or the name of an NvmeRegs parameter whose value the field reads.
    hw:      RO field whose value is driven by the core (named input of RegDecode).
    storage: name of the storage bits (defaults to "<REG>_<FIELD>"); RW1S/RW1C fields of two
             registers name the same storage to act on one value.
    """
    name: str
    msb: int
    lsb: int
    access: str
    reset: object = 0
    desc: str = ""
    hw: bool = False
    storage: str = None

    @property
    def width(self):
        return self.msb - self.lsb + 1

    @property
    def mask(self):
        return ((1 << self.width) - 1) << self.lsb

    @property
    def writable(self):
        return self.access != "RO"


@dataclass(frozen=True)
class Register:
    name: str
    offset: int
    width: int
    desc: str
    fields: tuple = dc_field(default_factory=tuple)

    def field(self, name):
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"{self.name} has no field {name}")


F, R = Field, Register

# NVMe 1.4, section 3.1. Only the registers the controller implements are listed; CMB, BP,
# PMR and NSSR are absent (CAP.CMBS/BPS/PMRS/NSSRS = 0) and read 0.
REGISTERS = (
    R("CAP", 0x00, 64, "Controller Capabilities", (
        F("MQES", 15, 0, "RO", "mqes", "Maximum Queue Entries Supported, 0's based"),
        F("CQR", 16, 16, "RO", "cqr", "Contiguous Queues Required"),
        F("AMS", 18, 17, "RO", 0, "Arbitration Mechanism Supported: round robin only"),
        F("TO", 31, 24, "RO", "timeout_500ms", "Timeout for CSTS.RDY changes, 500 ms units"),
        F("DSTRD", 35, 32, "RO", "dstrd", "Doorbell Stride: 4 << DSTRD bytes"),
        F("NSSRS", 36, 36, "RO", 0, "NVM Subsystem Reset Supported"),
        F("CSS", 44, 37, "RO", 0x01, "Command Sets Supported: bit 37 NVM command set"),
        F("MPSMIN", 51, 48, "RO", "mpsmin", "Memory Page Size Minimum: 2^(12+MPSMIN)"),
        F("MPSMAX", 55, 52, "RO", "mpsmax", "Memory Page Size Maximum: 2^(12+MPSMAX)"),
    )),
    R("VS", 0x08, 32, "Version: 1.4.0", (
        F("TER", 7, 0, "RO", 0, "Tertiary version"),
        F("MNR", 15, 8, "RO", 4, "Minor version"),
        F("MJR", 31, 16, "RO", 1, "Major version"),
    )),
    R("INTMS", 0x0C, 32, "Interrupt Mask Set", (
        F("IVMS", 31, 0, "RW1S", 0, "Write 1 to mask a vector; reads the mask",
          storage="INTM"),
    )),
    R("INTMC", 0x10, 32, "Interrupt Mask Clear", (
        F("IVMC", 31, 0, "RW1C", 0, "Write 1 to unmask a vector; reads the mask",
          storage="INTM"),
    )),
    R("CC", 0x14, 32, "Controller Configuration", (
        F("EN", 0, 0, "RW", 0, "Enable"),
        F("CSS", 6, 4, "RW", 0, "I/O Command Set Selected"),
        F("MPS", 10, 7, "RW", 0, "Memory Page Size: 2^(12+MPS)"),
        F("AMS", 13, 11, "RW", 0, "Arbitration Mechanism Selected"),
        F("SHN", 15, 14, "RW", 0, "Shutdown Notification: 01b normal, 10b abrupt"),
        F("IOSQES", 19, 16, "RW", 0, "I/O Submission Queue Entry Size: 2^n bytes"),
        F("IOCQES", 23, 20, "RW", 0, "I/O Completion Queue Entry Size: 2^n bytes"),
    )),
    R("CSTS", 0x1C, 32, "Controller Status", (
        F("RDY", 0, 0, "RO", 0, "Ready: follows CC.EN once the engines acknowledge", hw=True),
        F("CFS", 1, 1, "RO", 0, "Controller Fatal Status", hw=True),
        F("SHST", 3, 2, "RO", 0, "Shutdown Status: 00b normal, 01b processing, 10b complete",
          hw=True),
    )),
    R("AQA", 0x24, 32, "Admin Queue Attributes", (
        F("ASQS", 11, 0, "RW", 0, "Admin Submission Queue Size, 0's based"),
        F("ACQS", 27, 16, "RW", 0, "Admin Completion Queue Size, 0's based"),
    )),
    R("ASQ", 0x28, 64, "Admin Submission Queue Base Address", (
        F("ASQB", 63, 12, "RW", 0, "Base address bits 63:12 (4 KiB aligned)"),
    )),
    R("ACQ", 0x30, 64, "Admin Completion Queue Base Address", (
        F("ACQB", 63, 12, "RW", 0, "Base address bits 63:12 (4 KiB aligned)"),
    )),
)
del F, R

REGS = {r.name: r for r in REGISTERS}

# Doorbells (section 3.1.24/25): 32-bit registers from 0x1000, one SQ tail and one CQ head per
# queue, queue 0 being the admin queue; only bits 15:0 carry a value.
DOORBELLS = (
    ("SQyTDBL", "0x1000 + (2y) * (4 << CAP.DSTRD)", "SQT", "Submission Queue y Tail Doorbell"),
    ("CQyHDBL", "0x1000 + (2y+1) * (4 << CAP.DSTRD)", "CQH", "Completion Queue y Head Doorbell"),
)
DOORBELL_VALUE_BITS = 16


def _check_table():
    seen = {}
    for reg in REGISTERS:
        assert reg.width in (32, 64) and reg.offset % (reg.width // 8) == 0, reg.name
        assert reg.offset + reg.width // 8 <= DOORBELL_BASE, reg.name
        for byte in range(reg.offset, reg.offset + reg.width // 8):
            assert byte not in seen, f"{reg.name} overlaps {seen[byte]}"
            seen[byte] = reg.name
        used = 0
        for f in reg.fields:
            assert f.access in ACCESS, (reg.name, f.name)
            assert 0 <= f.lsb <= f.msb < reg.width, (reg.name, f.name)
            assert not (used & f.mask), f"{reg.name}.{f.name} overlaps another field"
            assert not (f.hw and f.writable), (reg.name, f.name)
            used |= f.mask


_check_table()


# Python constants for tests --------------------------------------------------------------------

def with_defaults(params):
    p = dict(DEFAULT_PARAMS)
    p.update(params or {})
    return p


def field_reset(f, params=None):
    """Reset value of field `f` (not shifted), resolving parameter-derived values."""
    return with_defaults(params)[f.reset] if isinstance(f.reset, str) else f.reset


def reset_value(reg, params=None):
    """Value a read of register `reg` (name or Register) returns after reset."""
    reg = REGS[reg] if isinstance(reg, str) else reg
    return sum(field_reset(f, params) << f.lsb for f in reg.fields)


def rw_mask(reg):
    """Bits of `reg` that a write can change (RW, RW1S, RW1C)."""
    reg = REGS[reg] if isinstance(reg, str) else reg
    return sum(f.mask for f in reg.fields if f.writable)


def field_get(reg, name, value):
    f = (REGS[reg] if isinstance(reg, str) else reg).field(name)
    return (value & f.mask) >> f.lsb


def field_put(reg, name, value, fvalue):
    f = (REGS[reg] if isinstance(reg, str) else reg).field(name)
    return (value & ~f.mask) | ((fvalue << f.lsb) & f.mask)


def doorbell_offset(qid, is_cq, dstrd):
    """BAR0 offset of the SQ tail (is_cq=0) or CQ head (is_cq=1) doorbell of queue `qid`."""
    return DOORBELL_BASE + (2 * qid + int(bool(is_cq))) * (4 << dstrd)


def doorbell_span(n_io_queues, dstrd):
    """First BAR0 offset past the doorbells of queues 0..n_io_queues."""
    return doorbell_offset(n_io_queues + 1, 0, dstrd)


# C header ----------------------------------------------------------------------------------------

def c_header():
    out = ["/* SPDX-License-Identifier: BSD-2-Clause */",
           "/* NVMe 1.4 BAR0 controller registers. Generated by",
           " * `python -m spec.nvme_regmap --c-header`; do not edit. */",
           "#ifndef SSDLAB_NVME_REGS_H", "#define SSDLAB_NVME_REGS_H", ""]

    def define(name, value):
        out.append(f"#define {name:<32} {value}")

    for reg in REGISTERS:
        out.append(f"/* {reg.name}: {reg.desc} ({reg.width}-bit) */")
        define(f"NVME_REG_{reg.name}", f"0x{reg.offset:02x}u")
        for f in reg.fields:
            suffix = "ull" if reg.width == 64 else "u"
            define(f"NVME_{reg.name}_{f.name}_SHIFT", f"{f.lsb}")
            define(f"NVME_{reg.name}_{f.name}_MASK", f"0x{f.mask:x}{suffix}")
        out.append("")
    out.append("/* Doorbells: queue y, stride 4 << CAP.DSTRD bytes. */")
    define("NVME_REG_DBS", f"0x{DOORBELL_BASE:x}u")
    define("NVME_DB_OFFSET(qid, is_cq, dstrd)",
           "(NVME_REG_DBS + (2u * (qid) + ((is_cq) ? 1u : 0u)) * (4u << (dstrd)))")
    define("NVME_SQ_TDBL(qid, dstrd)", "NVME_DB_OFFSET(qid, 0, dstrd)")
    define("NVME_CQ_HDBL(qid, dstrd)", "NVME_DB_OFFSET(qid, 1, dstrd)")
    define("NVME_DB_VALUE_MASK", f"0x{(1 << DOORBELL_VALUE_BITS) - 1:x}u")
    out += ["", "#endif /* SSDLAB_NVME_REGS_H */", ""]
    return "\n".join(out)


# Markdown ----------------------------------------------------------------------------------------

README_BEGIN = "<!-- BEGIN nvme_regmap (generated by python -m spec.nvme_regmap) -->"
README_END = "<!-- END nvme_regmap -->"
README_PATH = Path(__file__).resolve().parents[1] / "rtl" / "nvme" / "README.md"


def markdown():
    out = ["| offset | register | bits | field | access | reset | description |",
           "|---|---|---|---|---|---|---|"]
    for reg in REGISTERS:
        out.append(f"| 0x{reg.offset:02x} | **{reg.name}** | {reg.width - 1}:0 | | | "
                   f"0x{reset_value(reg):x} | {reg.desc} ({reg.width}-bit) |")
        for f in reg.fields:
            bits = f"{f.msb}" if f.msb == f.lsb else f"{f.msb}:{f.lsb}"
            reset = f"`{f.reset}`" if isinstance(f.reset, str) else f"0x{f.reset:x}"
            access = f.access + (" (hw)" if f.hw else "")
            desc = f.desc + (f" (storage shared: {f.storage})" if f.storage else "")
            out.append(f"| | | {bits} | {f.name} | {access} | {reset} | {desc} |")
    for name, offset, fname, desc in DOORBELLS:
        out.append(f"| {offset} | **{name}** | 31:0 | | | 0x0 | {desc}; reads 0 |")
        out.append(f"| | | {DOORBELL_VALUE_BITS - 1}:0 | {fname} | WO (event) | 0x0 | "
                   "Written value goes out as a doorbell event |")
    out += ["", "Reset values shown with a `name` are the NvmeRegs parameter of that name "
            "(reset column of the register row uses the defaults: "
            + ", ".join(f"{k}={v}" for k, v in DEFAULT_PARAMS.items()) + ").",
            "(hw) marks fields driven by the core, not by host writes. Offsets and bits not "
            "listed are reserved: they read 0 and ignore writes."]
    return "\n".join(out) + "\n"


def _readme_with_table(text):
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        raise ValueError(f"{README_PATH}: markers {README_BEGIN!r} / {README_END!r} not found")
    return text[:begin + len(README_BEGIN)] + "\n\n" + markdown() + "\n" + text[end:]


def readme_is_current(path=README_PATH):
    text = Path(path).read_text()
    return _readme_with_table(text) == text


def update_readme(path=README_PATH):
    path = Path(path)
    path.write_text(_readme_with_table(path.read_text()))


# Command line ------------------------------------------------------------------------------------

def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m spec.nvme_regmap", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--c-header", type=Path, metavar="PATH", help="write the C header")
    parser.add_argument("--markdown", action="store_true", help="print the register table")
    parser.add_argument("--update-readme", action="store_true",
                        help=f"rewrite the table in {README_PATH.name} between the markers")
    args = parser.parse_args(argv)
    if not (args.c_header or args.markdown or args.update_readme):
        parser.error("nothing to do: give --c-header PATH, --markdown or --update-readme")
    if args.c_header:
        args.c_header.parent.mkdir(parents=True, exist_ok=True)
        args.c_header.write_text(c_header())
    if args.markdown:
        sys.stdout.write(markdown())
    if args.update_readme:
        update_readme()


if __name__ == "__main__":
    main()
