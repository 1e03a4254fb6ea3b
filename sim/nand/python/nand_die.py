# SPDX-License-Identifier: BSD-2-Clause
"""Golden NAND die model, array and command level: one ONFI target (CE#) with its LUNs.

Time is simulated: every call takes the current time `now` in ns (int or float, never
decreasing); nothing sleeps. An operation makes its LUN busy until `now + tR/tPROG/tBERS`
(`NandLun.busy_until` drives status RDY and R/B#, `array_busy_until` drives ARDY); its effects
that the host can observe (page register contents, the FAIL bit) appear when that time comes.

The command-level API mirrors the ONFI command set, one method per command or confirm byte,
so a pin-level front end can call it at the confirm cycle and tests can call it directly:

    reset()                      FFh            read_id(address)          90h
    read_parameter_page()        ECh            read_status()             70h
    read_status_enhanced(row)    78h            read_mode()               00h (after 70h)
    read_page(row, col, 0x30)    00h-30h        read_page(row, col, 0x32) 00h-32h (multi-plane)
    read_cache(row=None)         31h / 00h-31h  read_cache_end()          3Fh
    change_read_column(col, row) 05h-E0h / 06h-E0h (row selects LUN and plane)
    read_data(n)                 data output from the selected LUN's page register
    program_page(row, data, col, confirm)       80h-10h, 80h-11h (multi-plane), 80h-15h (cache)
    erase_block(row, confirm)    60h-D0h, 60h-D1h (multi-plane)
    set_features(addr, p)        EFh            get_features(addr)        EEh

SLC mode (spec/nand_geometry.py has the contract): erase_block, program_page, read_page and
read_cache take slc=True for a sequence the DAh prefix preceded. An erase with it makes the
block an SLC block; a program or read whose mode does not match its block's (or an SLC
program past slc_pages_per_block) is an `slc-mode` violation: the program FAILs, the read
returns the data; the command is carried out either way, then raised if strict.

Rules of real NAND are enforced: a violation is recorded in `violations` and, with
`strict=True` (the default), raised as `NandRuleError`; its `rule` is one of RULES. A program
or erase that the part would fail (bad block, worn-out block, write protect, or a rule
violation when not strict) sets the FAIL status bit and is recorded in `fail_events`.

Storage is sparse: a block exists in memory only once touched, a page only once programmed;
an erased page reads 0xFF. Factory bad blocks come from a seeded hash (no table is built), so a
1 TB target costs nothing at construction.

Raw bit errors (spec/nand_errors.py): each array read of a programmed page flips bits at the
rate of the die's BitErrorModel for the block's P/E count, the page's retention age (`bake`
adds hours), the block's reads since erase and the read-retry level (SET FEATURES 89h).
"""

import heapq
import math
import random
from collections import Counter
from dataclasses import dataclass, field, replace

from spec.nand_errors import RETRY_FEATURE, BitErrorModel, age_hours
from spec.nand_geometry import (
    MASK64,
    PARTS,
    NandArrayTiming,
    NandGeometry,
    NandPart,
    is_factory_bad,
    mix64,
)
from spec.onfi_param_page import ONFI_SIGNATURE, onfi_crc16, onfi_parameter_page

__all__ = ["NandDie", "NandLun", "NandRuleError", "Violation", "FailEvent", "OpResult",
           "BitErrorModel", "RULES", "onfi_crc16", "onfi_parameter_page",
           "SR_FAIL", "SR_FAILC", "SR_CSP", "SR_ARDY", "SR_RDY", "SR_WP_N", "ONFI_SIGNATURE"]

# Status register bits (ONFI): FAIL 0, FAILC 1, CSP 3, ARDY 5, RDY 6, WP_n 7.
SR_FAIL = 0x01
SR_FAILC = 0x02
SR_CSP = 0x08
SR_ARDY = 0x20
SR_RDY = 0x40
SR_WP_N = 0x80

FEATURE_TIMING_MODE = 0x01

RULES = {
    "reset-after-power-on": "the first command after power-on must be RESET (FFh)",
    "busy": "only READ STATUS and RESET while the LUN is busy (cache ops while only ARDY=0)",
    "address-range": "row, column, LUN or READ ID/parameter page address out of range",
    "erase-before-program": "a block must be erased before any of its pages is programmed",
    "page-order": "the pages of a block must be programmed in order from page 0",
    "page-reprogram": "a programmed page cannot be programmed again before the block erase",
    "multi-plane": "a multi-plane op needs one page per plane, one LUN, the same page address",
    "command-sequence": "a command out of sequence (e.g. 31h without a read, 3Fh without 31h)",
    "data-output-after-status": "after READ STATUS, 00h must precede data output",
    "feature-value": "SET FEATURES value the part does not support",
    "slc-mode": "an SLC-mode (DAh) program or read of a native block, an unprefixed one of an "
                "SLC block, or an SLC program past the block's SLC pages",
}


class NandRuleError(Exception):
    """A NAND rule broken by the caller (the controller under test); `rule` names it."""

    def __init__(self, violation):
        self.violation = violation
        self.rule = violation.rule
        super().__init__(str(violation))


@dataclass(frozen=True)
class Violation:
    time_ns: float
    rule: str
    lun: int | None
    message: str

    def __str__(self):
        where = "" if self.lun is None else f", LUN {self.lun}"
        return f"{self.rule}: {self.message} (t={self.time_ns} ns{where})"


@dataclass(frozen=True)
class FailEvent:
    """A program or erase that ended with FAIL (or was aborted), and why."""
    time_ns: float
    op: str          # "program" | "erase"
    lun: int
    block: int
    page: int | None
    reason: str      # "factory bad block", "grown bad block", "P/E limit", ...


@dataclass(frozen=True)
class OpResult:
    """What an array operation returns at issue time.

    ready_ns: when RDY (and R/B#) returns; array_ready_ns: when ARDY returns (later than
    ready_ns only for cache operations). flips: {row: (bit, ...)} raw bit errors injected into
    each page read, bit = byte offset * 8 + bit number within the page register. ok: False
    when the command was refused or an addressed plane will report FAIL.
    """
    ready_ns: float
    array_ready_ns: float
    ok: bool = True
    flips: dict = field(default_factory=dict)


_MASK64 = MASK64
_mix64 = mix64


class _Block:
    __slots__ = ("erase_count", "next_page", "erased", "bad", "pages", "slc", "written",
                 "reads")

    def __init__(self, erased):
        self.slc = False        # erased in SLC mode (DAh): an SLC block until the next erase
        self.erase_count = 0
        self.next_page = 0      # the only page that may be programmed next
        self.erased = erased    # False: factory state unknown or an erase was aborted
        self.bad = None         # None, or why the block went bad (grown bad block)
        self.pages = {}         # page -> bytes (page register image: data + spare)
        self.written = {}       # page -> (time ns, die bake hours) when it was programmed
        self.reads = 0          # page reads since the last erase (read disturb)


class NandLun:
    """One LUN (die) of a target: array state, page registers and status, in simulated time.

    busy_until: RDY (and this LUN's share of R/B#) is 0 while now < busy_until.
    array_busy_until: ARDY is 0 while now < array_busy_until (>= busy_until).
    """

    def __init__(self, index, factory_erased):
        self.index = index
        self.busy_until = 0
        self.array_busy_until = 0
        self.fail = False
        self.failc = False
        self.blocks = {}            # block -> _Block, only blocks ever touched
        self.registers = {}         # plane -> bytes, what data output reads
        self.data_reg = None        # (plane, bytes): the array's result for cache read
        self.column = 0
        self.out_plane = 0
        self.cache_mode = None      # None | "read" | "program"
        self.last_read_row = None   # for sequential cache read (31h)
        self.last_read_slc = False  # ... and its mode (DAh)
        self.mp_queue = []          # queued multi-plane planes: (kind, row, payload, slc)
        self._events = []           # heap of (time, seq, fn)
        self._inflight = []         # (end, kind, items): what RESET would abort
        self._factory_erased = factory_erased
        self.fault_rber = 0.0       # injected bit errors on every read (inject_bit_errors)
        self.dead = False           # the die failed (inject_die_failure)
        self.stuck = 0              # inject_stuck_busy: 0 no, 1 until a RESET, 2 for good
        self.stuck_at = 0.0         # ... from the first busy period ending after this

    def hung(self):
        """R/B# stuck low (inject_stuck_busy): a busy period began after the fault."""
        return self.stuck != 0 and self.busy_until > self.stuck_at

    def rdy(self, now):
        return now >= self.busy_until and not self.hung()

    def ardy(self, now):
        return now >= self.array_busy_until and not self.hung()

    def status(self, now, wp_n=True):
        """Status register value at `now`; FAIL/FAILC are valid only when RDY=1."""
        sr = SR_WP_N if wp_n else 0
        if self.rdy(now):
            sr |= SR_RDY | (SR_FAIL if self.fail else 0) | (SR_FAILC if self.failc else 0)
        if self.ardy(now):
            sr |= SR_ARDY
        return sr

    def block(self, block):
        b = self.blocks.get(block)
        if b is None:
            b = self.blocks[block] = _Block(self._factory_erased)
        return b


class NandDie:
    """One ONFI target (CE#) with `geometry.luns` LUNs: the golden array/command model.

    Parameters (legal ranges):
    - part: a NandPart or a key of PARTS (default "imft-20nm-mlc-64gbit").
    - geometry, timing: override the part's NandGeometry / NandArrayTiming.
    - seed: any int; drives factory bad blocks, bit errors and aborted-program contents.
    - strict: True raises NandRuleError on a rule violation; False records it, refuses the
      command and sets FAIL where the command was a program or erase.
    - factory_bad_block_rate: probability that a block is factory bad, 0.0..0.5 (block 0 of
      LUN 0 is always good, as ONFI guarantees).
    - pe_limit: None (no wear-out) or 1..10**7: the erase that takes a block past this many
      P/E cycles fails and the block becomes grown bad (program and erase FAIL from then on).
    - bit_errors: a BitErrorModel, or "part" for the part's (NandPart.bit_errors); default
      no raw bit errors.
    - factory_erased: True (blocks ship erased) or False (every block must be erased first).
    - require_reset: True enforces RESET as the first command after power-on.
    - param_page_copies: redundant parameter page copies, 3..16.
    """

    def __init__(self, part="imft-20nm-mlc-64gbit", *, geometry=None, timing=None, seed=0,
                 strict=True, factory_bad_block_rate=0.0, pe_limit=None, bit_errors=None,
                 factory_erased=True, require_reset=True, param_page_copies=3):
        if isinstance(part, str):
            if part not in PARTS:
                raise ValueError(f"NandDie.part = {part!r}: one of {', '.join(PARTS)}")
            part = PARTS[part]
        if not isinstance(part, NandPart):
            raise ValueError(f"NandDie.part = {part!r}: must be a NandPart or a PARTS key")
        if geometry is not None:
            if not isinstance(geometry, NandGeometry):
                raise ValueError("NandDie.geometry: must be a NandGeometry")
            part = replace(part, geometry=geometry)
        if timing is not None:
            if not isinstance(timing, NandArrayTiming):
                raise ValueError("NandDie.timing: must be a NandArrayTiming")
            part = replace(part, timing=timing)
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise ValueError(f"NandDie.seed = {seed!r}: must be an integer")
        rate = factory_bad_block_rate
        if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 <= rate <= 0.5:
            raise ValueError(f"NandDie.factory_bad_block_rate = {rate!r}: must be in 0.0..0.5")
        if pe_limit is not None and (isinstance(pe_limit, bool) or not isinstance(pe_limit, int)
                                     or not 1 <= pe_limit <= 10**7):
            raise ValueError(f"NandDie.pe_limit = {pe_limit!r}: must be None or 1..10**7")
        if bit_errors is None:
            bit_errors = BitErrorModel()
        elif bit_errors == "part":
            bit_errors = part.bit_errors
        if not isinstance(bit_errors, BitErrorModel):
            raise ValueError("NandDie.bit_errors: must be a BitErrorModel")
        if (isinstance(param_page_copies, bool) or not isinstance(param_page_copies, int)
                or not 3 <= param_page_copies <= 16):
            raise ValueError(f"NandDie.param_page_copies = {param_page_copies!r}: "
                             f"must be 3..16")
        self.part = part
        self.geometry = part.geometry
        self.timing = part.timing
        self.seed = seed
        self._weak_key = mix64(seed ^ 0x5745414B)      # the weak cells' seeds ("WEAK")
        self.strict = strict
        self.factory_bad_block_rate = float(rate)
        self.pe_limit = pe_limit
        self.bit_errors = bit_errors
        self.require_reset = require_reset
        self.param_page_copies = param_page_copies
        self.luns = [NandLun(i, factory_erased) for i in range(self.geometry.luns)]
        self.wp_n = True            # WP# pin: False write-protects (program/erase FAIL)
        self.now = 0
        self.violations = []
        self.fail_events = []
        # reads, programs, erases, bit_errors, bits_read (of programmed pages: the bits the
        # bit error rate applies to), *_fail
        self.stats = Counter()
        self.baked_h = 0.0          # retention bake hours so far (bake)
        self.precycled = 0          # P/E cycles every block took before (precycle)
        self.features = {}          # feature address -> 4 bytes
        self.selected_lun = 0       # the LUN 70h reports and data output reads
        self.output_mode = "data"   # "data" | "status": what RE# would return
        self._reset_seen = False
        self._rng = random.Random(seed)
        self._seq = 0

    # Time and bookkeeping -----------------------------------------------------------------

    def advance(self, now):
        """Move simulated time to `now` and apply every effect due by then."""
        if now < self.now:
            raise ValueError(f"time went backwards: {now} ns < {self.now} ns")
        self.now = now
        for lun in self.luns:
            while lun._events and lun._events[0][0] <= now:
                heapq.heappop(lun._events)[2]()
            if lun._inflight:
                lun._inflight = [op for op in lun._inflight if op[0] > now]

    def _at(self, lun, time, fn):
        self._seq += 1
        heapq.heappush(lun._events, (time, self._seq, fn))

    def _violate(self, rule, lun, message):
        v = Violation(self.now, rule, lun, message)
        self.violations.append(v)
        if self.strict:
            raise NandRuleError(v)
        return False

    def _slc_check(self, lun, block, page, slc, what):
        """An `slc-mode` violation (recorded, not raised: the command goes on) if an SLC-mode
        (`slc`) or native `what` does not match the block's mode; returns it or None."""
        g = self.geometry
        if g.bits_per_cell == 1:
            return None
        b = self.luns[lun].blocks.get(block)
        block_slc = b is not None and b.slc
        if slc and not block_slc:
            msg = f"SLC-mode (DAh) {what} of block {block} page {page}: a native block"
        elif not slc and block_slc:
            msg = f"{what} of block {block} page {page} without DAh: an SLC block"
        elif slc and page >= g.slc_pages_per_block:
            msg = (f"SLC-mode (DAh) {what} of block {block} page {page}: past its SLC pages "
                   f"(0..{g.slc_pages_per_block - 1})")
        else:
            return None
        v = Violation(self.now, "slc-mode", lun, msg)
        self.violations.append(v)
        return v

    def _raise_late(self, found):
        """A strict die raises the first of the `slc-mode` violations found once the command
        has been carried out."""
        if found and self.strict:
            raise NandRuleError(found[0])

    def _t_r(self, page, slc):
        return self.timing.t_r("slc" if slc else self.geometry.page_type(page))

    def _t_prog(self, page, slc):
        return self.timing.t_prog("slc" if slc else self.geometry.page_type(page))

    def _fail_event(self, op, lun, block, page, reason):
        self.fail_events.append(FailEvent(self.now, op, lun, block, page, reason))
        self.stats[f"{op}_fail"] += 1

    def _powered(self, what):
        if self.require_reset and not self._reset_seen:
            return self._violate("reset-after-power-on", None,
                                 f"{what} before the first RESET (FFh)")
        return True

    def _ready(self, lun, what, cache=None):
        """True if `lun` may accept `what`; cache="read"/"program" also allows ARDY=0 while
        that cache operation runs."""
        now = self.now
        array_ok = lun.ardy(now) or (cache is not None and lun.cache_mode == cache)
        if lun.rdy(now) and array_ok:
            return True
        return self._violate("busy", lun.index,
                             f"{what} while busy (RDY until {lun.busy_until} ns, ARDY until "
                             f"{lun.array_busy_until} ns)")

    def _target_ready(self, what):
        return all([self._ready(lun, what) for lun in self.luns])

    def _decode(self, row, what):
        """(lun, block, page) of `row`, or None after an address-range violation."""
        msg = self.geometry.check_row(row)
        if msg is not None:
            self._violate("address-range", None, f"{what}: {msg}")
            return None
        return self.geometry.unpack_row(row)

    def _busy(self, lun, ready, array_ready=None):
        lun.busy_until = max(lun.busy_until, ready)
        lun.array_busy_until = max(lun.array_busy_until, lun.busy_until,
                                   ready if array_ready is None else array_ready)

    def _set_fail(self, lun, time, failed, cache=False):
        # FAILC carries the previous FAIL only along a cache program sequence (ONFI).
        def apply():
            lun.failc, lun.fail = (lun.fail if cache else False), failed
        self._at(lun, time, apply)

    # Blocks, bad blocks, bit errors ------------------------------------------------------

    def is_factory_bad(self, lun, block):
        """True if (lun, block) is a factory bad block (seeded hash, nothing stored)."""
        return is_factory_bad(self.seed, self.factory_bad_block_rate, lun, block)

    def factory_bad_blocks(self, lun=0):
        """Every factory bad block of a LUN (walks all blocks: call it on small geometries)."""
        return [b for b in range(self.geometry.blocks_per_lun) if self.is_factory_bad(lun, b)]

    def inject_bit_errors(self, lun, rber):
        """Fault injection: every read of LUN `lun` from now on flips bits at `rber` (0..0.5)
        more, drawn afresh at each read (a degraded die; 0 ends it)."""
        if isinstance(rber, bool) or not isinstance(rber, int | float) or not 0 <= rber <= 0.5:
            raise ValueError(f"NandDie.inject_bit_errors rber = {rber!r}: must be in 0..0.5")
        self.luns[lun].fault_rber = float(rber)

    def inject_die_failure(self, lun):
        """Fault injection: LUN `lun` fails for good, as a whole die does: every program and
        erase FAILs, every page reads back noise (each bit flipped with probability 1/2, so
        no ECC passes it). Commands, status and R/B# still answer."""
        self.luns[lun].dead = True

    def inject_stuck_busy(self, lun, until_reset=True):
        """Fault injection: LUN `lun` hangs in its next busy period (the one under way ends
        as it would): RDY, ARDY and its share of R/B# stay 0 for good, as a die whose
        internal controller hung does. Status reads (70h/78h) and RESET (FFh) are still taken;
        until_reset: the RESET brings it back (a transient hang; a power cut does too), else
        it hangs again in the RESET's own busy time (a die that never answers again)."""
        lu = self.luns[lun]
        lu.stuck = 1 if until_reset else 2
        lu.stuck_at = max(self.now, lu.busy_until)

    def inject_bad_block(self, lun, block, reason="injected"):
        """Make (lun, block) a grown bad block: its programs and erases FAIL from now on."""
        self.luns[lun].block(block).bad = f"grown bad block ({reason})"

    def bake(self, hours):
        """Backdoor: a retention bake of `hours` (0..1e6): every programmed page of the
        target ages that many hours (spec/nand_errors.py), as a lab bakes a powered-off
        drive to stand for months on a shelf. Simulated time does not move."""
        if isinstance(hours, bool) or not isinstance(hours, int | float) \
                or not 0 <= hours <= 1e6:
            raise ValueError(f"NandDie.bake hours = {hours!r}: must be a number in 0..1e6")
        self.baked_h += float(hours)

    def precycle(self, cycles):
        """Backdoor: every block of every LUN takes `cycles` (0..10**7) more P/E cycles, as a
        lab pre-cycles parts on a tester before a wear-out or retention test. The bit error
        rate and the P/E limit count them with each block's own erases (block_info's
        erase_count stays the die's own erases). Simulated time does not move."""
        if isinstance(cycles, bool) or not isinstance(cycles, int) or not 0 <= cycles <= 10**7:
            raise ValueError(f"NandDie.precycle cycles = {cycles!r}: must be an int in 0..10**7")
        self.precycled += cycles

    def block_info(self, lun, block):
        """Backdoor: {erase_count, next_page, erased, bad, programmed_pages, slc} of a block
        (slc: erased in SLC mode)."""
        b = self.luns[lun].blocks.get(block)
        bad = "factory bad block" if self.is_factory_bad(lun, block) else None
        if b is None:
            return {"erase_count": 0, "next_page": 0, "erased": self.luns[lun]._factory_erased,
                    "bad": bad, "programmed_pages": 0, "slc": False}
        return {"erase_count": b.erase_count, "next_page": b.next_page, "erased": b.erased,
                "bad": bad or b.bad, "programmed_pages": len(b.pages), "slc": b.slc}

    def page_data(self, lun, block, page):
        """Backdoor: the stored page register image (no bit errors), or None if erased."""
        b = self.luns[lun].blocks.get(block)
        return None if b is None else b.pages.get(page)

    def _flip_positions(self, n_bits, p, rng=None):
        """Bernoulli(p) over n_bits, sampled as geometric gaps from rng (default: the die's
        own): cost ~ number of flips."""
        if p <= 0:
            return ()
        rng = rng or self._rng
        p = min(p, 0.5)
        log_q = math.log1p(-p)
        out, pos = [], -1
        while True:
            pos += int(math.log1p(-rng.random()) / log_q) + 1
            if pos >= n_bits:
                return tuple(out)
            out.append(pos)

    def weak_cells(self, lun, block, page):
        """The page's weak cells at its block's wear now (register bit positions): drawn at
        the wear rate (BitErrorModel.wear_rber) from a seed of the die, the page and the
        block's erase count, so every read of one program of the page flips them; more wear
        draws a new, larger set. () for an erased page or a die without bit errors."""
        b = self.luns[lun].blocks.get(block)
        if b is None or page not in b.pages:
            return ()
        wear = self.bit_errors.wear_rber(b.erase_count + self.precycled)
        if wear <= 0:
            return ()
        h = mix64(self._weak_key ^ (lun << 48 | block << 24 | page))
        return self._flip_positions(8 * self.geometry.register_bytes, wear,
                                    random.Random(mix64(h ^ b.erase_count) >> 1))

    def _array_read(self, lun_i, block, page):
        """Array read of one page: (page register image, flipped bit positions). A read of a
        programmed page counts towards its block's read disturb after its own errors."""
        g = self.geometry
        self.stats["reads"] += 1
        if self.luns[lun_i].dead:           # a failed die: noise, whatever the page held
            b = self.luns[lun_i].blocks.get(block)
            data = (None if b is None else b.pages.get(page)) or b"\xff" * g.register_bytes
            n = 8 * len(data)
            self.stats["bits_read"] += n
            flips = self._flip_positions(n, 0.5)
            img = bytearray(data)
            for bit in flips:
                img[bit >> 3] ^= 1 << (bit & 7)
            self.stats["bit_errors"] += len(flips)
            return bytes(img), flips
        if self.is_factory_bad(lun_i, block):
            img = bytearray(b"\xff" * g.register_bytes)
            if page in (0, g.pages_per_block - 1):
                img[g.page_bytes] = 0x00    # ONFI bad-block marker: first spare byte
            return bytes(img), ()
        b = self.luns[lun_i].blocks.get(block)
        data = None if b is None else b.pages.get(page)
        if data is None:
            return b"\xff" * g.register_bytes, ()
        born_ns, born_baked = b.written.get(page, (self.now, self.baked_h))
        age_h = age_hours(self.now, born_ns, self.baked_h, born_baked)
        level = self.features.get(RETRY_FEATURE, bytes(4))[0]
        pe = b.erase_count + self.precycled
        p = self.bit_errors.read_rber(pe, age_h, b.reads, level) + self.luns[lun_i].fault_rber
        b.reads += 1
        n = 8 * len(data)
        self.stats["bits_read"] += n
        # the page's weak cells (read retry cannot recover them), then this read's own
        # retention and disturb errors
        weak = self.weak_cells(lun_i, block, page)
        flips = self._flip_positions(n, p)
        if weak:
            flips = tuple(sorted(set(weak) | set(flips)))
        if not flips:
            return data, ()
        img = bytearray(data)
        for bit in flips:
            img[bit >> 3] ^= 1 << (bit & 7)
        self.stats["bit_errors"] += len(flips)
        return bytes(img), flips

    # Target-level commands ---------------------------------------------------------------

    def reset(self, now):
        """RESET (FFh): abort every LUN's operation; busy tRST (longer during program/erase,
        and t_rst_first_ns for the first RESET after power-on). An aborted program leaves
        its page programmed with undefined (seeded random) contents; an aborted erase leaves
        the block needing another erase. Returns when R/B# rises."""
        self.advance(now)
        t = self.timing
        ready = now
        for lun in self.luns:
            busy_for = t.t_rst_ns
            kinds = self._tear(lun, "aborted by RESET")
            if "program" in kinds:
                busy_for = max(busy_for, t.t_rst_prog_ns)
            if "erase" in kinds:
                busy_for = max(busy_for, t.t_rst_erase_ns)
            if not self._reset_seen:
                busy_for = max(busy_for, t.t_rst_first_ns)
            lun._events.clear()
            lun._inflight.clear()
            lun.mp_queue.clear()
            lun.cache_mode = lun.last_read_row = lun.data_reg = None
            lun.fail = lun.failc = False
            lun.column = 0
            if lun.stuck == 1:
                lun.stuck = 0           # a transient hang: the RESET brings the LUN back
            lun.busy_until = lun.array_busy_until = now + busy_for
            ready = max(ready, lun.busy_until)
        # FFh returns the target to SDR timing mode 0 (Linux's nand_reset() relies on it).
        self.features.pop(FEATURE_TIMING_MODE, None)
        self._reset_seen = True
        self.selected_lun = 0
        self.output_mode = "data"
        self.stats["resets"] += 1
        return ready

    def _tear(self, lun, reason):
        """Abort the LUN's array operations in flight: an aborted program leaves its page
        programmed with undefined (seeded random) contents, an aborted erase leaves the block
        needing another erase. Returns the kinds aborted."""
        kinds = set()
        for _, kind, items in lun._inflight:
            kinds.add(kind)
            if kind == "program":
                for block, page in items:
                    b = lun.block(block)
                    b.pages[page] = self._rng.randbytes(self.geometry.register_bytes)
                    b.written[page] = (self.now, self.baked_h)
                    self._fail_event("program", lun.index, block, page, reason)
            elif kind == "erase":
                for block in items:
                    lun.block(block).erased = False
                    self._fail_event("erase", lun.index, block, None, reason)
        return kinds

    def power_cut(self, now):
        """The supply drops at `now` and comes back (not an ONFI command: a test's power cut).
        Array operations in flight are torn as RESET tears them (random page contents, a block
        needing another erase); everything volatile is lost: page and data (cache) registers,
        queued multi-plane planes, cache mode, FAIL/FAILC, features (the timing mode and
        interface go back to SDR mode 0), pending events. The die needs its first RESET again
        (reset-after-power-on; that RESET is busy t_rst_first_ns). The array (pages, erase
        counts, SLC mode, grown bad blocks) stays: NAND is non-volatile. WP# is a pin: it
        keeps what the controller drives. Returns the pages and blocks torn."""
        self.advance(now)
        torn = 0
        for lun in self.luns:
            torn += sum(len(items) for _, _, items in lun._inflight)
            self._tear(lun, "torn by a power cut")
            lun._events.clear()
            lun._inflight.clear()
            lun.mp_queue.clear()
            lun.cache_mode = lun.last_read_row = lun.data_reg = None
            lun.last_read_slc = False
            lun.registers = {}
            lun.fail = lun.failc = False
            lun.column = lun.out_plane = 0
            lun.busy_until = lun.array_busy_until = now
            # a transient hang ends with the power; a die hung for good hangs again in its
            # first busy period (the RESET after power-on)
            lun.stuck, lun.stuck_at = (0 if lun.stuck == 1 else lun.stuck), now
        self.features = {}
        self._reset_seen = False
        self.selected_lun = 0
        self.output_mode = "data"
        self.stats["power_cuts"] += 1
        return torn

    def read_id(self, now, address=0x00):
        """READ ID (90h): address 00h -> the part's ID bytes (manufacturer first), 20h ->
        b"ONFI". No busy time. Returns None if refused (non-strict)."""
        self.advance(now)
        if not self._powered("READ ID") or not self._target_ready("READ ID"):
            return None
        if address == 0x00:
            return self.part.id_bytes
        if address == 0x20:
            return ONFI_SIGNATURE
        self._violate("address-range", None, f"READ ID address 0x{address:02x}: 00h or 20h")
        return None

    def read_parameter_page(self, now, address=0x00):
        """READ PARAMETER PAGE (ECh-00h): the target is busy tR, then outputs the returned
        bytes (256 * param_page_copies). Returns None if refused."""
        self.advance(now)
        if not self._powered("READ PARAMETER PAGE") or not self._target_ready(
                "READ PARAMETER PAGE"):
            return None
        if address != 0x00:
            self._violate("address-range", None,
                          f"READ PARAMETER PAGE address 0x{address:02x}: only 00h (ONFI)")
            return None
        for lun in self.luns:
            self._busy(lun, now + self.timing.t_r_ns)
        self.output_mode = "data"
        return onfi_parameter_page(self.part, self.param_page_copies)

    @property
    def timing_mode(self):
        """The timing mode selected with SET FEATURES 01h (0 after RESET), of the interface
        `data_interface` names."""
        return self.features.get(FEATURE_TIMING_MODE, bytes(4))[0] & 0x0F

    @property
    def data_interface(self):
        """The data interface selected with SET FEATURES 01h P1 bits 5:4: "sdr" (00b, and
        after RESET) or "nvddr2" (10b)."""
        iface = (self.features.get(FEATURE_TIMING_MODE, bytes(4))[0] >> 4) & 0x03
        return "nvddr2" if iface == 2 else "sdr"

    def set_features(self, now, address, params):
        """SET FEATURES (EFh): 4 parameter bytes to feature `address` (0..255); busy tFEAT.
        Feature 01h (timing mode): P1 bits 3:0 mode, bits 5:4 interface: 00b SDR (a mode the
        part does not list in sdr_modes is a feature-value violation) or 10b NV-DDR2 (modes
        0..7); 01b (NV-DDR) and 11b are feature-value violations.
        Feature 89h (read retry, Micron's): P1 the level of the reads that follow, below
        bit_errors.retry_levels (a feature-value violation otherwise); kept over RESET,
        lost at a power cut.
        Returns when R/B# rises, or None if refused."""
        self.advance(now)
        if not self._powered("SET FEATURES") or not self._target_ready("SET FEATURES"):
            return None
        params = bytes(params)
        if len(params) != 4 or not 0 <= address <= 0xFF:
            self._violate("address-range", None,
                          f"SET FEATURES 0x{address:02x} with {len(params)} bytes: needs 4")
            return None
        if address == FEATURE_TIMING_MODE:
            mode, iface = params[0] & 0x0F, (params[0] >> 4) & 0x03
            if iface == 2 and mode <= 7:
                pass                        # NV-DDR2 timing mode 0..7
            elif iface != 0 or mode > 5 or not (self.part.sdr_modes >> mode) & 1:
                self._violate("feature-value", None,
                              f"timing mode feature P1=0x{params[0]:02x}: SDR modes mask "
                              f"0x{self.part.sdr_modes:02x} or NV-DDR2 modes 0..7 supported")
                return None
        elif address == RETRY_FEATURE and params[0] >= self.bit_errors.retry_levels:
            self._violate("feature-value", None,
                          f"read retry feature P1={params[0]}: levels 0.."
                          f"{self.bit_errors.retry_levels - 1} supported")
            return None
        self.features[address] = params
        ready = now + self.timing.t_feat_ns
        for lun in self.luns:
            self._busy(lun, ready)
        return ready

    def get_features(self, now, address):
        """GET FEATURES (EEh): the 4 parameter bytes of `address` (zeros if never set); the
        target is busy tFEAT before they can be read out. None if refused."""
        self.advance(now)
        if not self._powered("GET FEATURES") or not self._target_ready("GET FEATURES"):
            return None
        for lun in self.luns:
            self._busy(lun, now + self.timing.t_feat_ns)
        self.output_mode = "data"
        return self.features.get(address, bytes(4))

    def set_wp_n(self, now, value):
        """Drive the WP# pin: False (low) protects the array, programs and erases FAIL."""
        self.advance(now)
        self.wp_n = bool(value)

    # Status and R/B# -------------------------------------------------------------------

    def read_status(self, now):
        """READ STATUS (70h): status of the last addressed LUN. Allowed while busy."""
        self.advance(now)
        self.output_mode = "status"
        return self.luns[self.selected_lun].status(now, self.wp_n)

    def read_status_enhanced(self, now, row):
        """READ STATUS ENHANCED (78h): status of the LUN of `row` (page bits ignored), which
        also becomes the LUN for data output. None if `row` is out of range."""
        self.advance(now)
        lun = self.geometry.unpack_row(row)[0] if isinstance(row, int) and row >= 0 else -1
        if not 0 <= lun < len(self.luns):
            self._violate("address-range", None, f"READ STATUS ENHANCED row {row!r}: LUN "
                                                 f"not in 0..{len(self.luns) - 1}")
            return None
        self.selected_lun = lun
        self.output_mode = "status"
        return self.luns[lun].status(now, self.wp_n)

    def status(self, now, lun=0):
        """Backdoor status of a LUN (no command, no output mode change)."""
        self.advance(now)
        return self.luns[lun].status(now, self.wp_n)

    def rb_n(self, now):
        """R/B# of the target: 1 (ready) when every LUN has RDY=1 (ONFI: the AND of RDY)."""
        self.advance(now)
        return int(all(lun.rdy(now) for lun in self.luns))

    def ready_ns(self):
        """When R/B# will rise given what has been issued (for scheduling the pin model);
        math.inf while a LUN is hung (inject_stuck_busy)."""
        return max(math.inf if lun.hung() else lun.busy_until for lun in self.luns)

    # Reads -----------------------------------------------------------------------------

    def read_mode(self, now):
        """00h after READ STATUS: data output resumes from the page register."""
        self.advance(now)
        self.output_mode = "data"

    def read_page(self, now, row, column=0, confirm=0x30, slc=False):
        """READ PAGE 00h-<column><row>-30h: the LUN is busy tR (of the page type; the longest
        one for multi-plane), then the page is in the page register, output from `column`.
        confirm 32h queues a plane of a multi-plane read (busy tDBSY); the final 30h reads
        every queued plane. slc: DAh-00h, an SLC-mode read (t_r("slc")). Returns an OpResult
        (flips per row), or None if refused."""
        self.advance(now)
        slc = bool(slc) and self.geometry.bits_per_cell > 1
        if confirm not in (0x30, 0x32):
            raise ValueError(f"read_page confirm 0x{confirm:02x}: must be 0x30 or 0x32")
        if not self._powered("READ PAGE"):
            return None
        addr = self._decode(row, "READ PAGE")
        if addr is None:
            return None
        lun = self.luns[addr[0]]
        if not self._ready(lun, "READ PAGE") or not self._check_column(lun, column, 0):
            return None
        group = self._multi_plane(lun, "read", row, column, confirm == 0x32, slc)
        if group is None:
            return None
        self.selected_lun, self.output_mode = lun.index, "data"
        lun.cache_mode = None
        if confirm == 0x32:
            self._busy(lun, now + self.timing.t_dbsy_ns)
            return OpResult(lun.busy_until, lun.array_busy_until)
        g = self.geometry
        flips, loads, t_r, found = {}, [], 0, []
        for r, _, mode in group:
            _, block, page = g.unpack_row(r)
            v = self._slc_check(lun.index, block, page, mode, "read")
            if v is not None:
                found.append(v)
            data, flips[r] = self._array_read(lun.index, block, page)
            loads.append((g.plane_of(block), data))
            t_r = max(t_r, self._t_r(page, mode))
        end = now + t_r

        def load():
            for plane, data in loads:
                lun.registers[plane] = data
            lun.data_reg = loads[-1]
            lun.out_plane = loads[-1][0]
            lun.column = column
        self._at(lun, end, load)
        self._busy(lun, end)
        lun.last_read_row, lun.last_read_slc = row, slc
        self._raise_late(found)
        return OpResult(lun.busy_until, lun.array_busy_until, True, flips)

    def read_cache(self, now, row=None, slc=False):
        """READ CACHE SEQUENTIAL (31h, row None: the next page of the block) or RANDOM
        (00h-<row>-31h). The page last read moves to the cache register (RDY after
        tRCBSY) and the array reads the next page meanwhile (ARDY after tR). Needs a
        preceding READ PAGE on the same LUN. slc: DAh-00h-<row>-31h, an SLC-mode read; a
        sequential one goes on in the mode of the read before it. Returns an OpResult for
        the new array read."""
        self.advance(now)
        slc = bool(slc) and self.geometry.bits_per_cell > 1
        if not self._powered("READ CACHE"):
            return None
        g, t = self.geometry, self.timing
        lun = self.luns[self.selected_lun]
        if row is not None:
            addr = self._decode(row, "READ CACHE RANDOM")
            if addr is None:
                return None
            if addr[0] != lun.index:
                self._violate("command-sequence", addr[0],
                              f"READ CACHE RANDOM to LUN {addr[0]}: the read was on LUN "
                              f"{lun.index}")
                return None
        if lun.last_read_row is None:
            self._violate("command-sequence", lun.index, "READ CACHE (31h) without a "
                                                         "preceding READ PAGE (00h-30h)")
            return None
        if not self._ready(lun, "READ CACHE", cache="read"):
            return None
        if row is None:
            lun_i, block, page = g.unpack_row(lun.last_read_row)
            if page + 1 >= g.pages_per_block:
                self._violate("address-range", lun.index,
                              f"READ CACHE SEQUENTIAL past the last page of block {block}")
                return None
            row = g.pack_row(lun_i, block, page + 1)
            slc = lun.last_read_slc
        _, block, page = g.unpack_row(row)
        found = [v for v in (self._slc_check(lun.index, block, page, slc, "read"),) if v]
        start = max(now, lun.array_busy_until)
        data, flips = self._array_read(lun.index, block, page)
        new = (g.plane_of(block), data)

        def to_cache():
            # The page the array finished (data register) moves to the cache register.
            plane, img = lun.data_reg
            lun.registers[plane] = img
            lun.out_plane, lun.column = plane, 0
            lun.data_reg = new
        self._at(lun, start, to_cache)
        lun.busy_until = start + t.t_rcbsy_ns
        lun.array_busy_until = max(lun.busy_until, start + self._t_r(page, slc))
        lun.cache_mode = "read"
        lun.last_read_row, lun.last_read_slc = row, slc
        self.output_mode = "data"
        self._raise_late(found)
        return OpResult(lun.busy_until, lun.array_busy_until, True, {row: flips})

    def read_cache_end(self, now):
        """READ CACHE END (3Fh): the last page read by the array moves to the cache register
        (RDY and ARDY after tRCBSY once the array is done); no new array read."""
        self.advance(now)
        if not self._powered("READ CACHE END"):
            return None
        lun = self.luns[self.selected_lun]
        if lun.cache_mode != "read":
            self._violate("command-sequence", lun.index, "READ CACHE END (3Fh) without "
                                                         "READ CACHE (31h)")
            return None
        if not self._ready(lun, "READ CACHE END", cache="read"):
            return None
        start = max(now, lun.array_busy_until)

        def to_cache():
            plane, img = lun.data_reg
            lun.registers[plane] = img
            lun.out_plane, lun.column = plane, 0
        self._at(lun, start, to_cache)
        lun.busy_until = lun.array_busy_until = start + self.timing.t_rcbsy_ns
        lun.cache_mode = lun.last_read_row = None   # a new 31h needs a new 00h-30h
        self.output_mode = "data"
        return OpResult(lun.busy_until, lun.array_busy_until)

    def change_read_column(self, now, column, row=None):
        """CHANGE READ COLUMN (05h-E0h), or ENHANCED (06h-E0h) when `row` is given: it
        selects the LUN and plane (multi-plane read) whose page register is output."""
        self.advance(now)
        if not self._powered("CHANGE READ COLUMN"):
            return False
        lun = self.luns[self.selected_lun]
        plane = lun.out_plane
        if row is not None:
            addr = self._decode(row, "CHANGE READ COLUMN ENHANCED")
            if addr is None:
                return False
            lun = self.luns[addr[0]]
            plane = self.geometry.plane_of(addr[1])
        if not self._ready(lun, "CHANGE READ COLUMN", cache="read"):
            return False
        if not self._check_column(lun, column, 0):
            return False
        self.selected_lun = lun.index
        lun.out_plane, lun.column = plane, column
        self.output_mode = "data"
        return True

    def read_data(self, now, nbytes):
        """Data output: `nbytes` from the selected LUN's page register at the current column
        (which advances). Needs RDY=1 (ARDY may be 0 during cache read) and data output mode
        (00h after 70h). Reading past the register is an address-range violation."""
        self.advance(now)
        lun = self.luns[self.selected_lun]
        if self.output_mode != "data":
            self._violate("data-output-after-status", lun.index,
                          "data output after READ STATUS without 00h")
            return None
        if not self._ready(lun, "data output", cache="read"):
            return None
        if not self._check_column(lun, lun.column, nbytes):
            return None
        reg = lun.registers.get(lun.out_plane)
        if reg is None:
            reg = b"\xff" * self.geometry.register_bytes
        out = reg[lun.column:lun.column + nbytes]
        lun.column += nbytes
        return bytes(out)

    # Program and erase -------------------------------------------------------------------

    def _check_column(self, lun, column, nbytes):
        size = self.geometry.register_bytes
        if isinstance(column, int) and 0 <= column < size and column + nbytes <= size:
            return True
        return self._violate("address-range", lun.index,
                             f"column {column} + {nbytes} bytes beyond the page register "
                             f"(0..{size - 1})")

    def _multi_plane(self, lun, kind, row, payload, queue, slc=False):
        """Queue or close a multi-plane group: the planes so far plus (row, payload, slc).
        Returns the group [(row, payload, slc)] (empty list while queueing), or None."""
        g = self.geometry
        if lun.mp_queue and lun.mp_queue[0][0] != kind:
            first = lun.mp_queue[0][0]
            lun.mp_queue.clear()
            self._violate("command-sequence", lun.index,
                          f"{kind} confirm while a multi-plane {first} is queued")
            return None
        group = [(r, p, m) for _, r, p, m in lun.mp_queue] + [(row, payload, slc)]
        if len(group) > 1:
            _, block, page = g.unpack_row(row)
            _, block0, page0 = g.unpack_row(group[0][0])
            planes = [g.plane_of(g.unpack_row(r)[1]) for r, _, _ in group]
            problem = None
            if len(set(planes)) != len(planes):
                problem = f"two addresses on plane {g.plane_of(block)}"
            elif kind != "erase" and page != page0:
                problem = f"page {page} differs from page {page0} of the first plane"
            if problem is not None:
                lun.mp_queue.clear()
                self._violate("multi-plane", lun.index, f"multi-plane {kind}: {problem}")
                return None
        if queue:
            lun.mp_queue.append((kind, row, payload, slc))
            return []
        lun.mp_queue.clear()
        return group

    def _image(self, lun, data, column):
        """Page register image after 80h (register cleared to FFh) and data input chunks."""
        chunks = [(column, data)] if isinstance(data, bytes | bytearray | memoryview) else data
        img = bytearray(b"\xff" * self.geometry.register_bytes)
        for col, chunk in chunks:
            chunk = bytes(chunk)
            if not self._check_column(lun, col, len(chunk)):
                return None
            img[col:col + len(chunk)] = chunk
        return bytes(img)

    def _program_allowed(self, lun, block, page):
        """None if (block, page) may be programmed, else the failure reason."""
        b = lun.block(block)
        if not self.wp_n:
            return "write protect"
        if lun.dead:
            return "die failed"
        if self.is_factory_bad(lun.index, block):
            return "factory bad block"
        if b.bad:
            return b.bad
        rule = msg = None
        if not b.erased:
            rule, msg = "erase-before-program", f"block {block} is not erased"
        elif page < b.next_page:
            rule, msg = "page-reprogram", f"block {block} page {page} is already programmed"
        elif page > b.next_page:
            rule, msg = "page-order", (f"block {block} page {page} programmed before page "
                                       f"{b.next_page}")
        if rule is None:
            return None
        self._violate(rule, lun.index, msg)
        return rule

    def program_page(self, now, row, data, column=0, confirm=0x10, slc=False):
        """PROGRAM PAGE 80h-<column><row>-<data>-<confirm>; slc: DAh-80h (SLC mode, busy
        t_prog("slc"); a block or page that does not match FAILs: module docstring).

        data: bytes written from `column`, or a list of (column, bytes) chunks (85h CHANGE
        WRITE COLUMN). The page register is cleared to FFh first, so unwritten bytes program
        as FFh. confirm: 10h program (busy tPROG), 11h queue a multi-plane plane (busy tDBSY),
        15h cache program (RDY after tCBSY once the array is free, ARDY after tPROG).
        Returns an OpResult (ok=False if a plane will FAIL), or None if refused.
        """
        self.advance(now)
        slc = bool(slc) and self.geometry.bits_per_cell > 1
        if confirm not in (0x10, 0x11, 0x15):
            raise ValueError(f"program_page confirm 0x{confirm:02x}: must be 0x10, 0x11, 0x15")
        if not self._powered("PROGRAM PAGE"):
            return None
        addr = self._decode(row, "PROGRAM PAGE")
        if addr is None:
            return None
        lun = self.luns[addr[0]]
        if not self._ready(lun, "PROGRAM PAGE", cache="program"):
            return None
        img = self._image(lun, data, column)
        if img is None:
            return None
        group = self._multi_plane(lun, "program", row, img, confirm == 0x11, slc)
        if group is None:
            return None
        self.selected_lun = lun.index
        g, t = self.geometry, self.timing
        lun.registers[g.plane_of(addr[1])] = img
        if confirm == 0x11:
            self._busy(lun, now + t.t_dbsy_ns)
            return OpResult(lun.busy_until, lun.array_busy_until)
        # Check every plane before changing anything, so a refused group leaves no trace.
        planes, found = [], []
        for r, image, mode in group:
            _, block, page = g.unpack_row(r)
            reason = self._program_allowed(lun, block, page)
            if reason is None:
                v = self._slc_check(lun.index, block, page, mode, "program")
                if v is not None:
                    found.append(v)
                    reason = "slc-mode"
            planes.append((block, page, image, reason, mode))
        failed, written = False, []
        t_prog = max(self._t_prog(page, mode) for _, page, _, _, mode in planes)
        for block, page, image, reason, _ in planes:
            if reason is not None:
                failed = True
                self._fail_event("program", lun.index, block, page, reason)
                continue
            b = lun.block(block)
            b.pages[page] = image      # visible only to the array; the LUN is busy
            b.written[page] = (now, self.baked_h)
            b.next_page = page + 1
            written.append((block, page))
            self.stats["programs"] += 1
        lun.last_read_row = None
        start = max(now, lun.array_busy_until)   # a cache program waits for the array
        end = start + t_prog
        lun._inflight.append((end, "program", written))
        self._set_fail(lun, end, failed, cache=confirm == 0x15 or lun.cache_mode == "program")
        if confirm == 0x15:
            lun.busy_until = start + t.t_cbsy_ns
            lun.array_busy_until = max(lun.busy_until, end)
            lun.cache_mode = "program"
        else:
            lun.busy_until = lun.array_busy_until = end
            lun.cache_mode = None
        self._raise_late(found)
        return OpResult(lun.busy_until, lun.array_busy_until, not failed)

    def erase_block(self, now, row, confirm=0xD0, slc=False):
        """ERASE BLOCK 60h-<row>-D0h (page bits ignored): busy tBERS. confirm D1h queues a
        plane of a multi-plane erase (busy tDBSY). A bad block, or the erase that takes a
        block past pe_limit, FAILs. slc: DAh-60h, the block becomes an SLC block (without:
        a native one). Returns an OpResult, or None if refused."""
        self.advance(now)
        slc = bool(slc) and self.geometry.bits_per_cell > 1
        if confirm not in (0xD0, 0xD1):
            raise ValueError(f"erase_block confirm 0x{confirm:02x}: must be 0xD0 or 0xD1")
        if not self._powered("ERASE BLOCK"):
            return None
        addr = self._decode(row, "ERASE BLOCK")
        if addr is None:
            return None
        lun = self.luns[addr[0]]
        if not self._ready(lun, "ERASE BLOCK"):
            return None
        group = self._multi_plane(lun, "erase", row, None, confirm == 0xD1, slc)
        if group is None:
            return None
        self.selected_lun = lun.index
        lun.cache_mode = lun.last_read_row = None
        if confirm == 0xD1:
            self._busy(lun, now + self.timing.t_dbsy_ns)
            return OpResult(lun.busy_until, lun.array_busy_until)
        failed, erased = False, []
        for r, _, mode in group:
            block = self.geometry.unpack_row(r)[1]
            b = lun.block(block)
            reason = None
            if not self.wp_n:
                reason = "write protect"
            elif lun.dead:
                reason = "die failed"
            elif self.is_factory_bad(lun.index, block):
                reason = "factory bad block"
            elif b.bad:
                reason = b.bad
            else:
                b.erase_count += 1
                self.stats["erases"] += 1
                if self.pe_limit is not None \
                        and b.erase_count + self.precycled > self.pe_limit:
                    reason = b.bad = f"grown bad block (P/E limit {self.pe_limit})"
                    b.erased = False
            if reason is not None:
                failed = True
                self._fail_event("erase", lun.index, block, None, reason)
                continue
            b.pages.clear()
            b.written.clear()
            b.next_page, b.erased, b.slc, b.reads = 0, True, mode, 0
            erased.append(block)
        end = now + self.timing.t_bers_ns
        lun._inflight.append((end, "erase", erased))
        self._set_fail(lun, end, failed)
        self._busy(lun, end)
        return OpResult(lun.busy_until, lun.array_busy_until, not failed)

    # Conveniences: whole multi-plane sequences --------------------------------------------

    def program_multi_plane(self, now, pages, slc=False):
        """80h-11h ... 80h-10h over pages = [(row, data[, column])]: each 11h at the time the
        previous tDBSY ends; slc: every plane's sequence DAh-prefixed. Returns the OpResult of
        the final 10h."""
        return self._sequence(now, pages, lambda t, p, last: self.program_page(
            t, p[0], p[1], p[2] if len(p) > 2 else 0, 0x10 if last else 0x11, slc))

    def read_multi_plane(self, now, rows, column=0, slc=False):
        """00h-32h ... 00h-30h over rows; returns the OpResult of the final 30h."""
        return self._sequence(now, rows, lambda t, r, last: self.read_page(
            t, r, column, 0x30 if last else 0x32, slc))

    def erase_multi_plane(self, now, rows, slc=False):
        """60h-D1h ... 60h-D0h over rows; returns the OpResult of the final D0h."""
        return self._sequence(now, rows, lambda t, r, last: self.erase_block(
            t, r, 0xD0 if last else 0xD1, slc))

    def _sequence(self, now, items, issue):
        result = None
        for i, item in enumerate(items):
            result = issue(now, item, i == len(items) - 1)
            if result is None:
                return None
            now = max(now, result.ready_ns)
        return result
