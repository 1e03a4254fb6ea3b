# SPDX-License-Identifier: BSD-2-Clause
"""NAND die geometry, array timing and ONFI address packing, plus ready-made parts.

- `NandGeometry`: page and spare size, pages per block, blocks per plane, planes, LUNs per
  target (CE), bits per cell. Derived: block/LUN/target sizes, row-address bit fields, address
  cycle counts, plane of a block, MLC page type.
- `NandArrayTiming`: array busy times in ns (tR, tPROG, tBERS; tR and tPROG per page type
  and in SLC mode, maxima and typical values, and the switch choosing which the die runs) and
  the short busy times of cache, multi-plane, feature and reset operations.
- `NandPart` and `PARTS`: the dies of `personas.md` (IMFT MLC; Samsung planar TLC and V-NAND
  MLC; Kioxia BiCS4 TLC) with their ONFI identity and the source of every array time
  (`NandPart.timing_source`).

Page types (`NandGeometry.page_type`): page p of a block is type PAGE_TYPES_OF[bits][p % bits]
("lower"/"upper" for MLC, "lower"/"middle"/"upper" for TLC). This modulo order is assumed:
real parts program word lines in a staggered shared-page order, which changes which page
index is slow, not how many of each type a block holds (a sequential write programs every
type equally often). Both die models (sim/nand/python, sim/nand/cpp) use this rule.

SLC mode (pseudo-SLC): an MLC/TLC/QLC die can erase and program a block in SLC mode, one bit
per cell: the block then holds `NandGeometry.slc_pages_per_block` (pages_per_block //
bits_per_cell) pages, programmed and read faster (NandArrayTiming.t_r("slc"),
t_prog("slc")). ONFI has no SLC command; the die models take a vendor prefix, modelled after
Samsung's DAh SLC-mode command and Toshiba's A2h pSLC prefix:

- DAh: one command cycle (no address, data or busy) right before the first command cycle of
  one array-operation sequence: 60h (ERASE, and each plane's 60h of a multi-plane erase
  ending D1h/D0h), 80h (PROGRAM ending 10h, 11h or 15h), 00h (READ ending 30h, 32h or 31h;
  the 31h sequential cache reads that follow a read go on in its mode). It sets the SLC flag
  of that one sequence (each plane of a multi-plane op carries its own DAh); the sequence's
  confirm clears it. DAh followed by any other command is a `command-sequence` violation.
- ERASE with DAh makes the block an SLC block until its next erase (tBERS as native); without
  DAh, a native block.
- PROGRAM with DAh: the block must be an SLC block and the page below slc_pages_per_block
  (in order, as usual); busy t_prog("slc"). A mismatch (DAh on a native block, none on an SLC
  block, a page past the SLC pages) FAILs the program (status FAIL, nothing stored) and is an
  `slc-mode` violation naming the block and page.
- READ with DAh of an SLC block: busy t_r("slc"). A mismatch is an `slc-mode` violation; the
  data comes back as stored. Busy times follow the command's mode either way.
- A part with bits_per_cell == 1 takes DAh with native timing and no mode checks.

ONFI row address (LSB first): page bits, then block bits (the plane is the block's low bits),
then LUN bits; each field is ceil(log2(count)) bits wide. The column address is a byte offset
into the page register (data then spare). Both go out least-significant byte first.

Every dataclass checks itself on construction and raises ValueError naming the field and its
legal range, e.g. "NandGeometry.planes = 3: must be one of 1, 2, 4, 8".
"""

from dataclasses import dataclass, field

from spec.nand_errors import NO_BIT_ERRORS, BitErrorModel

__all__ = ["NandGeometry", "NandArrayTiming", "NandPart", "PARTS", "part", "PAGE_TYPES",
           "PAGE_TYPES_OF", "SLC", "TIMING_TYPES"]

PAGE_TYPES = ("lower", "middle", "upper", "top")    # the index is the die models' type number
PAGE_TYPES_OF = {1: ("lower",), 2: ("lower", "upper"), 3: ("lower", "middle", "upper"),
                 4: ("lower", "middle", "upper", "top")}     # by page % bits_per_cell


def _bits(count):
    """Address bits needed for `count` values (0 for a single value)."""
    return (count - 1).bit_length()


def _check_int(cls, name, value, lo, hi, *, power_of_two=False, choices=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{cls}.{name} = {value!r}: must be an integer")
    if choices is not None:
        if value not in choices:
            legal = ", ".join(str(c) for c in choices)
            raise ValueError(f"{cls}.{name} = {value}: must be one of {legal}")
        return
    if power_of_two and (value <= 0 or value & (value - 1)):
        raise ValueError(f"{cls}.{name} = {value}: must be a power of two in {lo}..{hi}")
    if not lo <= value <= hi:
        kind = "a power of two" if power_of_two else "an integer"
        raise ValueError(f"{cls}.{name} = {value}: must be {kind} in {lo}..{hi}")


@dataclass(frozen=True)
class NandGeometry:
    """Geometry of one ONFI target (one CE#): `luns` dies sharing the bus.

    Parameters (legal ranges):
    - page_bytes: data bytes per page, a power of two in 512..32768.
    - spare_bytes: spare (OOB) bytes per page, 0..page_bytes // 2.
    - pages_per_block: 1..4096 (any integer: TLC parts use 384 or 576).
    - blocks_per_plane: 1..1 048 576.
    - planes: planes per LUN, 1, 2, 4 or 8 (the plane is the low bits of the block address).
    - luns: LUNs (dies) per target, 1..16.
    - bits_per_cell: 1 (SLC) .. 4 (QLC); sets the page types reported by `page_type`.
    The row address must fit in 40 bits (5 address cycles).
    """

    page_bytes: int = 8192
    spare_bytes: int = 512
    pages_per_block: int = 256
    blocks_per_plane: int = 2048
    planes: int = 2
    luns: int = 1
    bits_per_cell: int = 2

    def __post_init__(self):
        c = "NandGeometry"
        _check_int(c, "page_bytes", self.page_bytes, 512, 32768, power_of_two=True)
        _check_int(c, "spare_bytes", self.spare_bytes, 0, self.page_bytes // 2)
        _check_int(c, "pages_per_block", self.pages_per_block, 1, 4096)
        _check_int(c, "blocks_per_plane", self.blocks_per_plane, 1, 1 << 20)
        _check_int(c, "planes", self.planes, 1, 8, choices=(1, 2, 4, 8))
        _check_int(c, "luns", self.luns, 1, 16)
        _check_int(c, "bits_per_cell", self.bits_per_cell, 1, 4)
        if self.row_bits > 40:
            raise ValueError(f"{c}: row address needs {self.row_bits} bits (pages_per_block, "
                             f"blocks_per_plane, planes, luns): must be at most 40")

    @classmethod
    def from_capacity(cls, die_gbit, page_bytes, pages_per_block, *, planes=2, luns=1,
                      spare_bytes=None, bits_per_cell=2):
        """Geometry of a die of `die_gbit` Gbit (2**30 bits, data area only) per LUN.

        blocks_per_plane = die bytes / page_bytes / pages_per_block / planes, which must come
        out a whole number. spare_bytes defaults to page_bytes // 16 (assumed, personas.md).
        """
        if isinstance(die_gbit, bool) or not isinstance(die_gbit, int) or not (
                1 <= die_gbit <= 8192):
            raise ValueError(f"NandGeometry.die_gbit = {die_gbit!r}: must be an integer "
                             f"in 1..8192")
        if spare_bytes is None:
            spare_bytes = page_bytes // 16
        die_bytes = die_gbit << 27
        per_plane, rest = divmod(die_bytes, page_bytes * pages_per_block * planes)
        if rest or per_plane == 0:
            raise ValueError(f"NandGeometry.die_gbit = {die_gbit}: not a whole number of "
                             f"blocks of {page_bytes} x {pages_per_block} bytes per plane")
        return cls(page_bytes=page_bytes, spare_bytes=spare_bytes,
                   pages_per_block=pages_per_block, blocks_per_plane=per_plane,
                   planes=planes, luns=luns, bits_per_cell=bits_per_cell)

    # Sizes -----------------------------------------------------------------------------

    @property
    def register_bytes(self):
        """Page register size (data + spare): the legal column range is 0..register_bytes-1."""
        return self.page_bytes + self.spare_bytes

    @property
    def blocks_per_lun(self):
        return self.blocks_per_plane * self.planes

    @property
    def block_bytes(self):
        return self.page_bytes * self.pages_per_block

    @property
    def lun_bytes(self):
        return self.block_bytes * self.blocks_per_lun

    @property
    def target_bytes(self):
        """Data capacity of the target (all LUNs), spare excluded."""
        return self.lun_bytes * self.luns

    # Address fields ----------------------------------------------------------------------

    @property
    def page_bits(self):
        return _bits(self.pages_per_block)

    @property
    def plane_bits(self):
        return _bits(self.planes)

    @property
    def block_bits(self):
        return _bits(self.blocks_per_lun)

    @property
    def lun_bits(self):
        return _bits(self.luns)

    @property
    def row_bits(self):
        return self.page_bits + self.block_bits + self.lun_bits

    @property
    def row_cycles(self):
        """Row address cycles (ONFI parameter page byte 101, bits 3:0); at least 1."""
        return max(1, -(-self.row_bits // 8))

    @property
    def column_bits(self):
        return _bits(self.register_bytes)

    @property
    def column_cycles(self):
        """Column address cycles (ONFI parameter page byte 101, bits 7:4)."""
        return max(1, -(-self.column_bits // 8))

    @property
    def address_cycles(self):
        """(column cycles, row cycles) of a page read or program."""
        return self.column_cycles, self.row_cycles

    def plane_of(self, block):
        """Plane of a block: the low `plane_bits` of the block address (ONFI)."""
        return block % self.planes

    @property
    def page_types(self):
        """The page types of a word line, in page order (PAGE_TYPES_OF[bits_per_cell])."""
        return PAGE_TYPES_OF[self.bits_per_cell]

    @property
    def slc_pages_per_block(self):
        """Pages of a block erased and programmed in SLC mode: pages_per_block //
        bits_per_cell (one bit per cell; module docstring)."""
        return self.pages_per_block // self.bits_per_cell

    def page_type(self, page):
        """Page type of page `page` (0..pages_per_block-1): page_types[page % bits_per_cell].

        Assumed mapping (MLC: even lower, odd upper; TLC: lower, middle, upper in turn); real
        parts use a shared-page table that staggers the types, which only changes which page
        is slow (module docstring).
        """
        return self.page_types[page % self.bits_per_cell]

    def pack_row(self, lun, block, page):
        """ONFI row address of (lun, block, page); each must be in range (ValueError)."""
        for name, value, count in (("lun", lun, self.luns), ("block", block,
                                   self.blocks_per_lun), ("page", page, self.pages_per_block)):
            if not 0 <= value < count:
                raise ValueError(f"{name} = {value}: must be in 0..{count - 1}")
        return (((lun << self.block_bits) | block) << self.page_bits) | page

    def unpack_row(self, row):
        """(lun, block, page) fields of a row address, not range-checked (see check_row)."""
        page = row & ((1 << self.page_bits) - 1)
        block = (row >> self.page_bits) & ((1 << self.block_bits) - 1)
        lun = row >> (self.page_bits + self.block_bits)
        return lun, block, page

    def check_row(self, row):
        """None if `row` addresses an existing page, else a message naming the bad field."""
        if not isinstance(row, int) or row < 0:
            return f"row address {row!r} is not a non-negative integer"
        lun, block, page = self.unpack_row(row)
        if lun >= self.luns:
            return f"row 0x{row:x}: LUN {lun} not in 0..{self.luns - 1}"
        if block >= self.blocks_per_lun:
            return f"row 0x{row:x}: block {block} not in 0..{self.blocks_per_lun - 1}"
        if page >= self.pages_per_block:
            return f"row 0x{row:x}: page {page} not in 0..{self.pages_per_block - 1}"
        return None

    def row_address_bytes(self, row):
        """The row address cycles, least significant byte first."""
        return row.to_bytes(self.row_cycles, "little")

    def column_address_bytes(self, column):
        """The column address cycles, least significant byte first."""
        return column.to_bytes(self.column_cycles, "little")

    def address_bytes(self, column, row):
        """All address cycles of a page read/program: column cycles then row cycles."""
        return self.column_address_bytes(column) + self.row_address_bytes(row)


_NS_MAX = 10**9  # 1 s: far above any NAND array time, low enough to catch unit mistakes


_TYPED = ("lower", "middle", "upper", "slc")    # types with their own tR / tPROG fields
SLC = "slc"     # the timing type of SLC-mode (DAh) reads and programs (module docstring)
TIMING_TYPES = PAGE_TYPES + (SLC,)      # every argument of NandArrayTiming.t_r / t_prog


@dataclass(frozen=True)
class NandArrayTiming:
    """Array busy times of one die, integer ns of simulated time.

    tR and tPROG come as maxima and as typical values, each per page type and for SLC mode
    (type "slc": DAh-prefixed reads and programs of SLC blocks); `typical` chooses which the
    die runs. A page of type T reads in t_r(T):
    typical: t_r_T_typ_ns, else t_r_typ_ns, else the maximum below;
    maximum: t_r_T_ns, else t_r_ns. Likewise tPROG. The ONFI parameter page reports maxima.

    Parameters (legal ranges, ns):
    - t_r_ns, t_prog_ns, t_bers_ns: page read, page program, block erase; 1..1e9 (tR, tPROG:
      the maximum of a page type without its own value).
    - t_r_{lower,middle,upper}_ns, t_prog_{lower,middle,upper}_ns: per page type maxima
      (middle: TLC); None (use t_r_ns / t_prog_ns) or 1..1e9. "top" (QLC) has no own fields.
    - t_r_typ_ns, t_prog_typ_ns, t_r_{lower,middle,upper}_typ_ns,
      t_prog_{lower,middle,upper}_typ_ns: typical values, None (fall back as above) or
      1..1e9, at most the maximum of the same page type.
    - t_r_slc_ns, t_prog_slc_ns, t_r_slc_typ_ns, t_prog_slc_typ_ns: SLC-mode maxima and
      typical values, as a page type's (None: fall back to t_r_ns / t_r_typ_ns ...). They are
      not in t_r_max_ns / t_prog_max_ns (the parameter page's native maxima) nor the means.
    - typical: True (default) the die runs the typical values, False the maxima (worst case).
    - t_cbsy_ns: cache program busy (80h-15h until the cache register is free), 0..1e9.
    - t_rcbsy_ns: cache read busy (31h/3Fh until the cache register holds the page), 0..1e9.
    - t_dbsy_ns: multi-plane dummy busy after 11h/32h/D1h, 0..1e9.
    - t_feat_ns: SET/GET FEATURES busy, 0..1e9.
    - t_rst_ns, t_rst_prog_ns, t_rst_erase_ns: RESET busy when idle or reading, during a
      program, during an erase; t_rst_first_ns: the first RESET after power-on; 0..1e9.
    Defaults of the short times are assumed (Micron-class ONFI 3.0 parts).
    """

    t_r_ns: int = 100_000
    t_prog_ns: int = 1_300_000
    t_bers_ns: int = 3_000_000
    t_r_lower_ns: int | None = None
    t_r_upper_ns: int | None = None
    t_prog_lower_ns: int | None = None
    t_prog_upper_ns: int | None = None
    t_cbsy_ns: int = 3_000
    t_rcbsy_ns: int = 3_000
    t_dbsy_ns: int = 500
    t_feat_ns: int = 1_000
    t_rst_ns: int = 5_000
    t_rst_prog_ns: int = 10_000
    t_rst_erase_ns: int = 500_000
    t_rst_first_ns: int = 1_000_000
    t_r_middle_ns: int | None = None
    t_prog_middle_ns: int | None = None
    t_r_typ_ns: int | None = None
    t_r_lower_typ_ns: int | None = None
    t_r_middle_typ_ns: int | None = None
    t_r_upper_typ_ns: int | None = None
    t_prog_typ_ns: int | None = None
    t_prog_lower_typ_ns: int | None = None
    t_prog_middle_typ_ns: int | None = None
    t_prog_upper_typ_ns: int | None = None
    typical: bool = True
    t_r_slc_ns: int | None = None
    t_prog_slc_ns: int | None = None
    t_r_slc_typ_ns: int | None = None
    t_prog_slc_typ_ns: int | None = None

    def __post_init__(self):
        c = "NandArrayTiming"
        for name in ("t_r_ns", "t_prog_ns", "t_bers_ns"):
            _check_int(c, name, getattr(self, name), 1, _NS_MAX)
        for op in ("r", "prog"):
            for suffix in [f"_{t}" for t in _TYPED] + ["_typ"] + [f"_{t}_typ" for t in _TYPED]:
                name = f"t_{op}{suffix}_ns"
                if getattr(self, name) is not None:
                    _check_int(c, name, getattr(self, name), 1, _NS_MAX)
            for ptype in TIMING_TYPES:
                typ, most = self._typ(op, ptype), self._max(op, ptype)
                if typ is not None and typ > most:
                    raise ValueError(f"{c}: typical t_{op} of {ptype} pages = {typ} ns: must be "
                                     f"at most its maximum, {most} ns")
        for name in ("t_cbsy_ns", "t_rcbsy_ns", "t_dbsy_ns", "t_feat_ns", "t_rst_ns",
                     "t_rst_prog_ns", "t_rst_erase_ns", "t_rst_first_ns"):
            _check_int(c, name, getattr(self, name), 0, _NS_MAX)
        if not isinstance(self.typical, bool):
            raise ValueError(f"{c}.typical = {self.typical!r}: must be True or False")

    def _max_field(self, op, page_type):
        """The field holding the maximum of `op` ("r"/"prog") for a page type."""
        own = f"t_{op}_{page_type}_ns"
        return own if getattr(self, own, None) is not None else f"t_{op}_ns"

    def _typ_field(self, op, page_type):
        """The field holding the typical value, or None when there is none."""
        for name in (f"t_{op}_{page_type}_typ_ns", f"t_{op}_typ_ns"):
            if getattr(self, name, None) is not None:
                return name
        return None

    def _max(self, op, page_type):
        return getattr(self, self._max_field(op, page_type))

    def _typ(self, op, page_type):
        name = self._typ_field(op, page_type)
        return None if name is None else getattr(self, name)

    def _of(self, op, page_type, typical):
        typical = self.typical if typical is None else typical
        typ = self._typ(op, page_type) if typical else None
        return self._max(op, page_type) if typ is None else typ

    def t_r(self, page_type="lower", typical=None):
        """tR of a page of `page_type` (PAGE_TYPES, see NandGeometry.page_type; or "slc", an
        SLC-mode read), typical or maximum as `typical` says (None: the timing's own)."""
        return self._of("r", page_type, typical)

    def t_prog(self, page_type="lower", typical=None):
        """tPROG of a page of `page_type`, as t_r."""
        return self._of("prog", page_type, typical)

    def t_r_mean(self, bits_per_cell, typical=None):
        """Mean tR over the page types of a `bits_per_cell` part (every type equally often, as
        a sequential or uniformly random workload reads them), ns (float)."""
        types = PAGE_TYPES_OF[bits_per_cell]
        return sum(self.t_r(t, typical) for t in types) / len(types)

    def t_prog_mean(self, bits_per_cell, typical=None):
        """Mean tPROG over the page types (a sequential write programs every type), ns."""
        types = PAGE_TYPES_OF[bits_per_cell]
        return sum(self.t_prog(t, typical) for t in types) / len(types)

    @property
    def t_r_max_ns(self):
        return max(self._max("r", t) for t in PAGE_TYPES)

    @property
    def t_prog_max_ns(self):
        return max(self._max("prog", t) for t in PAGE_TYPES)


@dataclass(frozen=True)
class NandPart:
    """A NAND part: geometry, timing and ONFI identity (READ ID, parameter page fields).

    - id_bytes: READ ID (90h-00h) bytes, manufacturer ID first; 2..8 bytes.
    - manufacturer (<= 12 ASCII), model (<= 20 ASCII), jedec_id (0..255): parameter page.
    - pe_cycles: rated block endurance, 1..10**7 (parameter page bytes 105-106).
    - ecc_bits: ECC bits per 512-byte codeword the part needs, 0..254 (byte 112).
    - sdr_modes: supported SDR timing modes, a bit mask 0x01..0x3F with mode 0 set.
    - max_bad_blocks: bad blocks per LUN allowed over life (bytes 103-104), 0..65535.
    - t_ccs_ns: tCCS, change column setup (bytes 139-140), 500..65535 ns: a controller waits
      this long (at least the timing mode's 500 ns) from a change of column to its data.
    - timing_sources: {NandArrayTiming field: where its value comes from}; a field not
      named is assumed (`timing_source`).
    - bit_errors: the part's raw bit errors (spec/nand_errors.BitErrorModel; assumed values
      for every part here). A die model sees them only when asked (NandDie(bit_errors="part"),
      the drive's `nand_bit_errors`).
    """

    name: str
    geometry: NandGeometry
    timing: NandArrayTiming
    id_bytes: bytes = b"\x2c\x64\x44\x4b\xa9"
    manufacturer: str = "MICRON"
    model: str = "SSDLAB-NAND"
    jedec_id: int = 0x2C
    pe_cycles: int = 3000
    ecc_bits: int = 24
    sdr_modes: int = 0x3F
    max_bad_blocks: int | None = None
    t_ccs_ns: int = 500
    notes: str = field(default="", compare=False)
    timing_sources: dict = field(default_factory=dict, compare=False, hash=False)
    bit_errors: BitErrorModel = NO_BIT_ERRORS

    def __post_init__(self):
        c = "NandPart"
        if not isinstance(self.bit_errors, BitErrorModel):
            raise ValueError(f"{c}.bit_errors = {self.bit_errors!r}: must be a BitErrorModel")
        if not isinstance(self.id_bytes, bytes) or not 2 <= len(self.id_bytes) <= 8:
            raise ValueError(f"{c}.id_bytes = {self.id_bytes!r}: must be 2..8 bytes")
        for name, limit in (("manufacturer", 12), ("model", 20)):
            text = getattr(self, name)
            if not isinstance(text, str) or len(text) > limit or not text.isascii():
                raise ValueError(f"{c}.{name} = {text!r}: must be ASCII, at most {limit} "
                                 f"characters")
        _check_int(c, "jedec_id", self.jedec_id, 0, 255)
        _check_int(c, "pe_cycles", self.pe_cycles, 1, 10**7)
        _check_int(c, "ecc_bits", self.ecc_bits, 0, 254)
        _check_int(c, "sdr_modes", self.sdr_modes, 1, 0x3F)
        if not self.sdr_modes & 1:
            raise ValueError(f"{c}.sdr_modes = 0x{self.sdr_modes:x}: must include mode 0 "
                             f"(bit 0)")
        if self.max_bad_blocks is not None:
            _check_int(c, "max_bad_blocks", self.max_bad_blocks, 0, 65535)
        _check_int(c, "t_ccs_ns", self.t_ccs_ns, 500, 65535)

    def timing_source(self, name):
        """Where the array time `name` (a NandArrayTiming field) comes from: a datasheet or
        paper, or a text starting "assumed"."""
        return self.timing_sources.get(name, "assumed")

    def page_timing(self):
        """Per page type tR and tPROG of the part, typical and maximum, each with the field
        that supplies it and that field's source: [(op "tR"/"tPROG", page type, typ_ns,
        typ_source, max_ns, max_source)] over the geometry's page types, then "slc" (SLC
        mode) unless the part is SLC (bits_per_cell 1)."""
        t, rows = self.timing, []
        types = self.geometry.page_types + ((SLC,) if self.geometry.bits_per_cell > 1 else ())
        for op, key in (("tR", "r"), ("tPROG", "prog")):
            for ptype in types:
                most = t._max_field(key, ptype)
                typ = t._typ_field(key, ptype) or most
                rows.append((op, ptype, getattr(t, typ), self.timing_source(typ),
                             getattr(t, most), self.timing_source(most)))
        return rows

    @property
    def bad_blocks_limit(self):
        """max_bad_blocks, or 2 % of the blocks of a LUN when not given (assumed)."""
        if self.max_bad_blocks is not None:
            return self.max_bad_blocks
        return min(65535, max(1, self.geometry.blocks_per_lun // 50))


# Per page type array times. Datasheets give tR as a maximum and tPROG as a typical value,
# page-averaged; neither splits them by page type. The splits below are assumed, after the
# published behaviour of multi-level cells: a lower page reads with one sense and programs a
# coarse two-level step, later pages need more senses and finer steps (Grupp et al.,
# "Characterizing flash memory: anomalies, observations, and applications", MICRO 2009:
# MLC program latency alternates fast/slow pages, several times apart). Typical tPROG per
# type averages to the part's headline tPROG; tPROG maxima are 1.5x the typical values; tR
# maxima are the headline tR for every type. 3D NAND (V-NAND, BiCS) programs a word line's
# pages in one pass, so its tPROG is the same for every page type; its reads still split.
_SPLIT = {2: {"r": (0.5, 0.8), "prog": (0.4, 1.6)},
          3: {"r": (0.5, 0.7, 0.9), "prog": (0.5, 1.0, 1.5)}}
_MAX_OVER_TYP = 1.5
_SPLIT_NOTE = ("assumed: page-type split of the headline figure (spec/nand_geometry.py, "
               "_SPLIT; after Grupp et al., MICRO 2009)")


# SLC mode (pseudo-SLC, DAh prefix) array times: no datasheet at hand gives them for these
# parts, so they are the headline figures scaled by the SLC : MLC and SLC : TLC ratios of the
# class values in HP's white paper (read 25 : 50 : ~75 us, program 200-300 : 600-900 :
# ~900-1350 us, mid-points). pSLC on an MLC die programs faster than the MLC lower page
# (1/3 of the headline against 0.4, _SPLIT) and reads with one sense, as the lower page does;
# on planar TLC it programs 4.5x faster than the TLC mean, in line with Samsung's TurboWrite
# SLC buffer writing several times faster than native TLC. Maxima are 1.5x the typical
# values, as tPROG's are.
_SLC_RATIO = {2: {"r": 0.5, "prog": 1 / 3}, 3: {"r": 1 / 3, "prog": 2 / 9}}
_SLC_NOTE = ("assumed: SLC mode at {ratio} of the headline {op} (the SLC : {cell} class "
             "ratio of HP's white paper 'Solid state drive technology: differences between "
             "SLC, MLC and TLC NAND', table 1: pSLC {why})")
_SLC_WHY = {("r", 2): "reads with one sense, as the MLC lower page",
            ("prog", 2): "programs faster than the MLC lower page",
            ("r", 3): "reads with one sense, a TLC page with two or more",
            ("prog", 3): "programs several times faster than TLC, as Samsung's TurboWrite "
                         "SLC buffer"}


def _slc_timing(bits, t_r_us, t_prog_us):
    """The SLC-mode fields of a `bits`-per-cell part and their sources."""
    kw, sources = {}, {}
    cell = {2: "MLC", 3: "TLC"}[bits]
    for op, head in (("r", t_r_us), ("prog", t_prog_us)):
        ratio = _SLC_RATIO[bits][op]
        kw[f"t_{op}_slc_typ_ns"] = typ = round(head * ratio * 1000)
        kw[f"t_{op}_slc_ns"] = round(typ * _MAX_OVER_TYP)
        sources[f"t_{op}_slc_typ_ns"] = _SLC_NOTE.format(
            ratio=f"{ratio:.2f}", op="tR" if op == "r" else "tPROG", cell=cell,
            why=_SLC_WHY[(op, bits)])
        sources[f"t_{op}_slc_ns"] = "assumed: 1.5x the typical SLC-mode value"
    return kw, sources


def _typed_timing(bits, t_r_us, t_prog_us, t_bers_us, one_pass_program, headline):
    """NandArrayTiming with per page type values and the sources of each field: t_r_ns,
    t_prog_ns, t_bers_ns are the headline figures (sources in `headline`: {field: text});
    every page type has its own tPROG maximum, tR maxima are the headline tR; SLC mode has
    its own typical and maximum tR and tPROG (_slc_timing)."""
    types = PAGE_TYPES_OF[bits]
    kw = dict(t_r_ns=t_r_us * 1000, t_prog_ns=t_prog_us * 1000, t_bers_ns=t_bers_us * 1000)
    sources = dict(headline)
    for ptype, f in zip(types, _SPLIT[bits]["r"], strict=True):
        kw[f"t_r_{ptype}_typ_ns"] = round(t_r_us * f * 1000)
        sources[f"t_r_{ptype}_typ_ns"] = _SPLIT_NOTE
    if one_pass_program:
        kw["t_prog_typ_ns"] = t_prog_us * 1000
        sources["t_prog_typ_ns"] = sources["t_prog_ns"]
        for ptype in types:
            kw[f"t_prog_{ptype}_ns"] = round(t_prog_us * _MAX_OVER_TYP * 1000)
            sources[f"t_prog_{ptype}_ns"] = ("assumed: 1.5x the typical tPROG (one-pass "
                                             "program: the same for every page type)")
    else:
        for ptype, f in zip(types, _SPLIT[bits]["prog"], strict=True):
            kw[f"t_prog_{ptype}_typ_ns"] = round(t_prog_us * f * 1000)
            kw[f"t_prog_{ptype}_ns"] = round(t_prog_us * f * _MAX_OVER_TYP * 1000)
            sources[f"t_prog_{ptype}_typ_ns"] = _SPLIT_NOTE
            sources[f"t_prog_{ptype}_ns"] = "assumed: 1.5x the typical value of the page type"
    slc, slc_sources = _slc_timing(bits, t_r_us, t_prog_us)
    kw.update(slc)
    sources.update(slc_sources)
    return NandArrayTiming(**kw), sources


_L85A = ("Micron MT29F64G08CBAB[A/B] (L85A) datasheet, features: read page 100 us (MAX), "
         "program page 1300 us (TYP), erase block 3 ms (TYP)")
_PERSONAS_MD = "personas.md class value (no datasheet named): assumed"


def _imft(name, die_gbit, page_bytes, pages_per_block, t_r_us, t_prog_us, id_bytes, model,
          note, bit_errors, source=_PERSONAS_MD):
    geometry = NandGeometry.from_capacity(die_gbit, page_bytes, pages_per_block)
    timing, sources = _typed_timing(2, t_r_us, t_prog_us, 3000, False,
                                    {"t_r_ns": source, "t_prog_ns": source,
                                     "t_bers_ns": source})
    return NandPart(name=name, geometry=geometry, timing=timing, id_bytes=id_bytes,
                    manufacturer="MICRON", model=model, jedec_id=0x2C, pe_cycles=3000,
                    ecc_bits=40, notes=note, timing_sources=sources, bit_errors=bit_errors)


_ASSUMED = ("planes 2 and spare = page/16 assumed (personas.md); ID bytes, model string, "
            "ECC requirement, the raw bit error model and the short busy times are assumed, "
            "Micron-class")

# Raw bit errors (spec/nand_errors.py), assumed: 2x nm MLC raw error rates of about 1e-4 at
# the rated 3000 P/E cycles, a year's retention at the rated wear moving the read reference
# about 3 of the part's 8 read-retry steps (an RBER of a few 1e-3 read at level 0), read
# disturb adding 1e-4 per 100 K reads of a block. The 25 nm part wears and leaks less.
_MLC_20NM_ERRORS = BitErrorModel(rber_base=5e-7, rber_per_kcycle=2e-5, exponent=1.5,
                                 retention_shift=0.19, rber_shift=3e-4, rber_per_kread=1e-6,
                                 retry_levels=8)
_MLC_25NM_ERRORS = BitErrorModel(rber_base=3e-7, rber_per_kcycle=1.2e-5, exponent=1.5,
                                 retention_shift=0.15, rber_shift=3e-4, rber_per_kread=7e-7,
                                 retry_levels=8)

# The IMFT dies of personas.md (one LUN per target; make more with dataclasses.replace).
# Headline tR / tPROG: the imft-20nm-mlc-64gbit figures are the L85A datasheet's; the others
# are personas.md's (L95B 128 Gbit 20 nm, L74A 64 Gbit 25 nm), no datasheet at hand.
PARTS = {p.name: p for p in (
    _imft("imft-20nm-mlc-64gbit", 64, 8192, 256, 100, 1300, b"\x2c\x64\x44\x4b\xa9",
          "SSDLAB-IMFT20-64G", _ASSUMED, _MLC_20NM_ERRORS, source=_L85A),
    _imft("imft-20nm-mlc-128gbit", 128, 16384, 512, 115, 1600, b"\x2c\x84\x64\x3c\xa5",
          "SSDLAB-IMFT20-128G", _ASSUMED, _MLC_20NM_ERRORS),
    _imft("imft-25nm-mlc-64gbit", 64, 8192, 256, 75, 1300, b"\x2c\x88\x04\x4b\xa9",
          "SSDLAB-IMFT25-64G", _ASSUMED, _MLC_25NM_ERRORS),
)}


def _other(name, geometry, t_r_us, t_prog_us, t_bers_us, pe_cycles, id_bytes, manufacturer,
           jedec_id, model, note, one_pass_program, bit_errors):
    assumed = "assumed: class value (personas.md gives none)"
    timing, sources = _typed_timing(geometry.bits_per_cell, t_r_us, t_prog_us, t_bers_us,
                                    one_pass_program, {"t_r_ns": assumed, "t_prog_ns": assumed,
                                                       "t_bers_ns": assumed})
    return NandPart(name=name, geometry=geometry, timing=timing, id_bytes=id_bytes,
                    manufacturer=manufacturer, model=model, jedec_id=jedec_id,
                    pe_cycles=pe_cycles, ecc_bits=40, notes=note, timing_sources=sources,
                    bit_errors=bit_errors)


_ASSUMED_OTHER = ("everything but the cell type, node and die size is assumed (personas.md "
                  "gives none): geometry, array times (class values), P/E cycles, planes 2, "
                  "spare = page/16, the raw bit error model; the real part speaks Toggle "
                  "DDR, modelled as ONFI")

# The other dies of personas.md (Samsung and Kioxia drives). TLC dies hold a whole number of
# blocks of 3-bit word lines, so they are built from blocks per plane, not from die_gbit:
# their capacity is the nominal one within 0.1 % (over, like real TLC dies). Planar TLC
# programs its pages in steps (per page type tPROG); V-NAND and BiCS in one pass.
PARTS.update({p.name: p for p in (
    _other("samsung-16nm-tlc-128gbit",
           NandGeometry(page_bytes=16384, spare_bytes=1024, pages_per_block=384,
                        blocks_per_plane=1366, planes=2, bits_per_cell=3),
           100, 2000, 5000, 1000, b"\xec\xde\x94\xc3\x00", "SAMSUNG", 0xEC,
           "SSDLAB-SEC16-TLC128G", _ASSUMED_OTHER, False,
           # planar 16 nm TLC: the weakest cells of the set (1000 P/E rated)
           BitErrorModel(rber_base=2e-6, rber_per_kcycle=2e-4, exponent=1.5,
                         retention_shift=0.35, rber_shift=5e-4, rber_per_kread=3e-6,
                         retry_levels=8)),
    _other("samsung-vnand-32l-mlc-128gbit",
           NandGeometry.from_capacity(128, 16384, 256),
           60, 700, 4000, 6000, b"\xec\xd7\x14\x7e\x00", "SAMSUNG", 0xEC,
           "SSDLAB-SECV2-MLC128G", _ASSUMED_OTHER, True,
           # 3D MLC: large cells, 6000 P/E rated
           BitErrorModel(rber_base=1e-7, rber_per_kcycle=5e-6, exponent=1.5,
                         retention_shift=0.12, rber_shift=2e-4, rber_per_kread=3e-7,
                         retry_levels=8)),
    _other("kioxia-bics4-tlc-512gbit",
           NandGeometry(page_bytes=16384, spare_bytes=1024, pages_per_block=1152,
                        blocks_per_plane=1821, planes=2, bits_per_cell=3),
           70, 600, 5000, 3000, b"\x98\x3c\x99\xb3\x76", "TOSHIBA", 0x98,
           "SSDLAB-BICS4-TLC512G", _ASSUMED_OTHER, True,
           # 3D TLC, 3000 P/E rated
           BitErrorModel(rber_base=1e-6, rber_per_kcycle=3e-5, exponent=1.5,
                         retention_shift=0.25, rber_shift=4e-4, rber_per_kread=1e-6,
                         retry_levels=8)),
)})


def part(name):
    """The ready-made part `name` (a key of PARTS); ValueError listing the names otherwise."""
    try:
        return PARTS[name]
    except KeyError:
        raise ValueError(f"unknown NAND part {name!r}: one of {', '.join(PARTS)}") from None


# Factory bad blocks ---------------------------------------------------------------------------
# A die's factory bad-block map is a seeded hash, nothing stored: the golden die model
# (sim/nand/python/nand_die.py), the fast C++ model and the RTL emulator's build-time table
# (rtl/nand/nand_emulator.py) all compute it from here, so they agree block for block.

MASK64 = (1 << 64) - 1


def mix64(x):
    """splitmix64 finaliser: a seeded hash with a uniform 64-bit output."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def is_factory_bad(seed, rate, lun, block):
    """True if (lun, block) of the die seeded `seed` is factory bad at `rate` (0.0..0.5).
    Block 0 of LUN 0 is always good (ONFI guarantees it)."""
    if rate <= 0 or (lun == 0 and block == 0):
        return False
    return mix64(mix64(seed & MASK64) ^ ((lun << 32) | block)) < rate * 2**64
