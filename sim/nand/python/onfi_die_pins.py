# SPDX-License-Identifier: BSD-2-Clause
"""Pin-level front end of the golden NAND die model for cocotb: `OnfiPinTarget`.

One `OnfiPinTarget` is one ONFI target (CE#) on a DUT's ONFI pins. It watches CE#, CLE, ALE,
WE#, RE#, WP# and the controller's DQ (`dq_o` / `dq_oe`), latches a byte on every WE# rising
edge (CLE high: command, ALE high: address, else data in), assembles the ONFI command
sequences and calls the `NandDie` method of each at its confirm cycle with `now` = cocotb
simulated time in ns. It drives the model's side of the bus: DQ (`dq_i`) is valid tREA after
RE# falls (and tCEA after CE# falls) and held tRHOH after RE# rises, garbage otherwise, in the
SDR timing mode the die is in (SET FEATURES 01h; RESET returns to mode 0); R/B# falls tWB/2
after a command that makes the die busy and rises exactly when the model's busy time ends. An
`OnfiTimingChecker` per target checks the controller side on the same pin snapshots.

Targets on one channel share an `OnfiBus` (one pin sampler, the DQ and R/B# drivers):

    bus = OnfiBus(dut, seed=cocotb.RANDOM_SEED)
    targets = [OnfiPinTarget(bus, NandDie(...), ce=i) for i in range(n_ways)]
    ...
    bus.assert_clean()      # NAND rule and timing violations fail the test, by name

The pins are sampled in the read-only phase of every time step in which one of them changed,
so the edge times are exact and every snapshot is settled; nothing runs while they rest.

Besides the ONFI command set the front end takes the SLC-mode prefix DAh (spec/nand_geometry.py
has the contract): it flags the next 60h, 80h or 00h sequence as SLC mode (slc=True to the
die at its confirm); DAh followed by any other command is a `command-sequence` violation.
"""

import logging
import math
import random

from spec.onfi_timing import NVDDR2_MODES, SDR_MODES, OnfiPins, OnfiTimingChecker

from .nand_die import NandRuleError, Violation

__all__ = ["OnfiBus", "OnfiPinTarget", "PIN_NAMES"]

# Logical pin -> default DUT signal name (the names of rtl/nand/onfi_sdr_engine).
# dqs_o / dqs_oe (the controller's DQS) and dqs_i (the die's) are optional: NV-DDR2 only.
PIN_NAMES = ("ce_n", "cle", "ale", "we_n", "re_n", "wp_n", "dq_o", "dq_oe", "dq_i", "rb_n",
             "dqs_o", "dqs_oe", "dqs_i")
_WATCHED = ("ce_n", "cle", "ale", "we_n", "re_n", "wp_n", "dq_o", "dq_oe", "rb_n", "dqs_o",
            "dqs_oe")
_OPTIONAL = {"wp_n": 1, "dqs_o": 0, "dqs_oe": 0, "dqs_i": 0}   # value when the DUT lacks it

# NV-DDR2 data-out: the die's DQS (and DQ) edge follows each RE# edge after this fraction of
# tDQSRE (a maximum); the read preamble drives DQS low after this fraction of tDQSD.
DQSRE_FRACTION = 0.6

# R/B# falls this fraction of tWB (a maximum) after the latch that makes the die busy.
WB_FRACTION = 0.5


class OnfiBus:
    """The ONFI pins of one channel, shared by its targets (one per CE#).

    dut:  the cocotb handle holding the pins.
    pins: {logical name: DUT signal name} overriding PIN_NAMES (e.g. {"dq_i": "nand_dq_in"});
          a missing `wp_n` is allowed (WP# then stays high).
    seed: seeds the garbage driven on DQ outside the data-valid window.
    log:  a logging.Logger (default "ssdlab.onfi_die_pins").
    """

    def __init__(self, dut, pins=None, seed=0, log=None):
        names = {name: name for name in PIN_NAMES}
        names.update(pins or {})
        self.h = {}
        for name, signal in names.items():
            handle = getattr(dut, signal, None)
            if handle is None and name not in _OPTIONAL:
                raise ValueError(f"OnfiBus: the DUT has no pin {signal!r} ({name})")
            self.h[name] = handle
        self.log = log or logging.getLogger("ssdlab.onfi_die_pins")
        self.rng = random.Random(seed)
        self.targets = []
        self._tasks = []
        self._prev = None
        self._stamp = None
        self.rb = (1 << len(self.h["rb_n"])) - 1    # every target ready at power-on
        self.h["rb_n"].value = self.rb
        self.h["dq_i"].value = self.rng.randrange(256)
        if self.h["dqs_i"] is not None:
            self.h["dqs_i"].value = 0

    def attach(self, target):
        self.targets.append(target)
        if not self._tasks:
            import cocotb
            self._tasks = [cocotb.start_soon(self._watch(self.h[n])) for n in _WATCHED
                           if self.h[n] is not None]

    def _snapshot(self):
        return tuple(int(self.h[n].value) if self.h[n] is not None else _OPTIONAL[n]
                     for n in _WATCHED)

    async def _watch(self, signal):
        # One long-lived watcher per pin (no task per wake-up, nothing to do while the pins
        # rest, so long busy times cost no Python time). The first watcher to reach the
        # read-only phase of a time step hands the settled snapshot to every target.
        from cocotb.triggers import ReadOnly
        from cocotb.utils import get_sim_time
        while True:
            await signal.value_change
            await ReadOnly()
            now = get_sim_time("step")
            if now == self._stamp:
                continue
            self._stamp = now
            raw = self._snapshot()
            if raw != self._prev:
                self._prev = raw
                now_ns = get_sim_time("ns")
                for t in self.targets:
                    t._observe(now_ns, raw)

    def drive_dq(self, delay_ns, value):
        """Put `value` (None: garbage) on dq_i `delay_ns` from now (a Timer, > 0)."""
        import cocotb
        cocotb.start_soon(self._drive(delay_ns, value))

    async def _drive(self, delay_ns, value):
        from cocotb.triggers import Timer
        await Timer(max(1, round(delay_ns * 1000)), unit="ps")
        self.h["dq_i"].value = self.rng.randrange(256) if value is None else value

    def drive_dqs(self, delay_ns, dqs, value):
        """NV-DDR2 data-out: put `dqs` on dqs_i and `value` (None: garbage) on dq_i together,
        `delay_ns` from now: DQ edge-aligned with DQS, as the die drives them."""
        import cocotb
        cocotb.start_soon(self._drive_dqs(delay_ns, dqs, value))

    async def _drive_dqs(self, delay_ns, dqs, value):
        from cocotb.triggers import Timer
        await Timer(max(1, round(delay_ns * 1000)), unit="ps")
        self.h["dq_i"].value = self.rng.randrange(256) if value is None else value
        self.h["dqs_i"].value = dqs

    def set_rb(self, bit, value):
        self.rb = (self.rb | (1 << bit)) if value else (self.rb & ~(1 << bit))
        self.h["rb_n"].value = self.rb

    def problems(self):
        return [p for t in self.targets for p in t.problems()]

    def assert_clean(self):
        """Fail (AssertionError) naming every unexpected rule and timing violation."""
        for t in self.targets:
            t.assert_clean()


class OnfiPinTarget:
    """One ONFI target (CE#) at pin level: an `OnfiBus` front end for a `NandDie`.

    bus:  the channel's OnfiBus, or a cocotb DUT handle (a bus of its own is made).
    die:  the NandDie (array/command model) behind this CE#.
    ce:   this target's bit of ce_n and rb_n, 0..len(ce_n)-1; None when ce_n is one bit.
    name: for messages (default "ce<ce>").

    Violations: `rule_violations` (NAND rules broken by the controller, from the die, plus
    command sequences this front end cannot assemble, as rule "command-sequence") and
    `checker.violations` (interface timing). `expect_rule(rule)` takes one expected rule
    violation out; `assert_clean()` fails on whatever is left.
    """

    def __init__(self, bus, die, ce=None, name=None):
        if not isinstance(bus, OnfiBus):
            bus = OnfiBus(bus)
        self.bus, self.die = bus, die
        width = len(bus.h["ce_n"])
        if ce is None and width != 1:
            raise ValueError(f"OnfiPinTarget.ce: ce_n has {width} bits, give the index")
        if ce is not None and not 0 <= ce < width:
            raise ValueError(f"OnfiPinTarget.ce = {ce}: must be in 0..{width - 1}")
        self.ce = ce
        self.bit = 0 if ce is None else ce
        self.name = name or f"ce{self.bit}"
        self.log = bus.log
        self.iface = die.data_interface     # "sdr" | "nvddr2", as the pins run now
        self.mode = die.timing_mode
        self.t = self._timing_set(self.iface, self.mode)
        self.checker = OnfiTimingChecker(self.t, ce=ce, log=self.log, name=self.name)
        self._switch_gen = 0
        self.rd = None              # NV-DDR2 read burst: {"last_fall": t or None}
        self.feat_raw = 0           # NV-DDR2 SET FEATURES bytes seen (each comes twice)
        self.own_violations = []    # sequences the front end could not assemble
        self._expected = set()      # ids of violations taken out by expect_rule
        self.latched = []           # (kind, byte) for tests
        self._prev = None
        self._ce_fall = 0.0
        self._rb_gen = 0
        self._clear()
        self.out = None             # None | "status" | "array" | [bytes, index]
        bus.attach(self)

    # -- reporting --

    @property
    def rule_violations(self):
        return [v for v in self.die.violations + self.own_violations
                if id(v) not in self._expected]

    def expect_rule(self, rule):
        """Take out the first unexpected violation of `rule` and return it (AssertionError if
        the model saw none): for tests that break a rule on purpose."""
        for v in self.rule_violations:
            if v.rule == rule:
                self._expected.add(id(v))
                return v
        raise AssertionError(f"{self.name}: expected a {rule!r} NAND rule violation, "
                             f"model reported {[str(v) for v in self.rule_violations]}")

    def problems(self):
        return ([f"{self.name}: NAND rule {v}" for v in self.rule_violations] +
                [str(v) for v in self.checker.violations])

    def assert_clean(self):
        p = self.problems()
        assert not p, f"{len(p)} ONFI violations:\n  " + "\n  ".join(p)

    def _own(self, now, rule, message):
        v = Violation(now, rule, None, message)
        self.own_violations.append(v)
        self.log.error("%s: NAND rule %s", self.name, v)

    # -- pins --

    @staticmethod
    def _timing_set(iface, mode):
        return NVDDR2_MODES[mode] if iface == "nvddr2" else SDR_MODES[mode]

    def _observe(self, now, raw):
        ce_n, cle, ale, we_n, re_n, wp_n, dq_o, dq_oe, rb_n, dqs_o, dqs_oe = raw
        pins = OnfiPins(ce_n=(ce_n >> self.bit) & 1, cle=cle, ale=ale, we_n=we_n, re_n=re_n,
                        dq=dq_o if dq_oe else None, rb_n=(rb_n >> self.bit) & 1,
                        dqs=dqs_o if dqs_oe else None)
        prev, self._prev = self._prev, (pins, wp_n)
        self.checker.observe(now, pins)
        if prev is None:
            self.die.set_wp_n(now, wp_n)
            return
        prev, prev_wp = prev
        if wp_n != prev_wp:
            self.die.set_wp_n(now, wp_n)
        if prev.ce_n and not pins.ce_n:
            self._ce_fall = now
        if not prev.ce_n and pins.ce_n:
            # output released tCOH after CE# rises (the bus then floats: garbage)
            self.bus.drive_dq(self.t.tCOH, None)
            self.rd = None
        if pins.ce_n and prev.ce_n:
            return
        if self.iface == "nvddr2":
            self._observe_nvddr2(now, prev, pins)
            return
        # a latch uses the values before the WE# rising edge
        if not prev.we_n and pins.we_n and not prev.ce_n:
            if prev.cle and prev.ale:
                self._own(now, "command-sequence", "CLE and ALE both high at a latch")
            elif prev.dq is not None:
                kind = "cmd" if prev.cle else "addr" if prev.ale else "data"
                self.latched.append((kind, prev.dq))
                self._latch(now, kind, prev.dq)
        if prev.re_n and not pins.re_n and not pins.ce_n:
            self._data_out(now)
        if not prev.re_n and pins.re_n and not prev.ce_n:
            self.bus.drive_dq(self.t.tRHOH, None)

    # -- NV-DDR2 --

    def _observe_nvddr2(self, now, prev, pins):
        # command / address latches on WE# rising, as in SDR (data goes with DQS)
        if not prev.we_n and pins.we_n and not prev.ce_n:
            if prev.cle and prev.ale:
                self._own(now, "command-sequence", "CLE and ALE both high at a latch")
            elif prev.dq is not None and (prev.cle or prev.ale):
                kind = "cmd" if prev.cle else "addr"
                self.latched.append((kind, prev.dq))
                self._latch(now, kind, prev.dq)
        # data in: a byte on every edge of the controller's DQS (driven on both sides)
        if prev.dqs is not None and pins.dqs is not None and prev.dqs != pins.dqs \
                and not prev.ce_n and prev.dq is not None:
            self.latched.append(("data", prev.dq))
            self._latch(now, "data", prev.dq)
        # data out: RE# preamble, one byte per RE# edge, postamble
        t = self.t
        dqsre = t.tDQSRE * DQSRE_FRACTION
        if pins.re_n != prev.re_n and not pins.ce_n:
            rd = self.rd
            if not pins.re_n and rd is None:
                self.rd = {"last_fall": None}
                self.bus.drive_dqs(t.tDQSD * DQSRE_FRACTION, 0, None)
            elif pins.re_n and rd is not None and rd["last_fall"] is not None \
                    and now - rd["last_fall"] + 1e-3 >= t.tRPST:
                self.rd = None          # the postamble's rising edge: no data, DQS stays low
            elif rd is not None:
                if not pins.re_n:
                    rd["last_fall"] = now
                self.bus.drive_dqs(dqsre, pins.re_n, self._nvddr2_byte(now))

    def _nvddr2_byte(self, now):
        out = self.out
        if out == "status":
            return self.die.status(now, self.die.selected_lun)
        if out == "array":
            data = self._call(now, self.die.read_data, 1, rb=False)
            return data[0] if data else None
        if isinstance(out, list):
            # READ ID and GET FEATURES bytes come twice each (on both DQS edges)
            if not self.die.rb_n(now):
                self._own(now, "busy", "data output while the target is busy")
            elif out[1] // 2 < len(out[0]):
                value = out[0][out[1] // 2]
                out[1] += 1
                return value
        return None

    # -- data output --

    def _data_out(self, now):
        value, out = None, self.out
        if out == "status":
            value = self.die.status(now, self.die.selected_lun)  # live status register
        elif out == "array":
            data = self._call(now, self.die.read_data, 1, rb=False)
            value = data[0] if data else None
        elif isinstance(out, list):
            if not self.die.rb_n(now):
                self._own(now, "busy", "data output while the target is busy")
            elif out[1] < len(out[0]):
                value = out[0][out[1]]
                out[1] += 1
        valid_at = max(now + self.t.tREA, self._ce_fall + self.t.tCEA)
        self.bus.drive_dq(valid_at - now, value)

    # -- R/B# --

    def _update_rb(self, now):
        ready = self.die.ready_ns()
        if ready <= now:
            return
        import cocotb
        self._rb_gen += 1
        cocotb.start_soon(self._busy(now, self._rb_gen))

    async def _busy(self, now, gen):
        from cocotb.triggers import Timer
        from cocotb.utils import get_sim_time
        fall = self.t.tWB * WB_FRACTION
        if now + fall < self.die.ready_ns():
            await Timer(round(fall * 1000), unit="ps")
            if gen == self._rb_gen:
                self.bus.set_rb(self.bit, 0)
        # rise exactly when the model's busy time ends (a later command may extend it);
        # a hung LUN (inject_stuck_busy) never ends it: a later RESET's task takes over
        while True:
            t, ready = get_sim_time("ns"), self.die.ready_ns()
            if ready <= t:
                break
            if ready == math.inf:
                return
            await Timer(max(1, round((ready - t) * 1000)), unit="ps")
        if gen == self._rb_gen:
            self.bus.set_rb(self.bit, 1)

    # -- power --

    def power_cut(self, now):
        """The target loses power at `now` and gets it back (NandDie.power_cut): the die's
        in-flight operations are torn and its volatile state lost; the front end drops the
        sequence it was assembling and its data output, cancels a pending interface switch
        and busy task, releases R/B# and runs SDR timing mode 0 again. A test calls it while
        the controller is held in reset (the pins carry nothing)."""
        torn = self.die.power_cut(now)
        self._clear()
        self.out = None
        self.rd = None
        self._switch_gen += 1
        self._rb_gen += 1
        self.bus.set_rb(self.bit, 1)
        self.iface, self.mode = self.die.data_interface, self.die.timing_mode
        self.t = self._timing_set(self.iface, self.mode)
        self.checker.set_timings(self.t)
        return torn

    # -- command sequences --

    def _clear(self):
        self.slc_prefix = False     # DAh latched: the next command must start 60h/80h/00h
        self.slc = False            # the sequence being collected is in SLC mode (DAh)
        self.cmd = None         # the command whose address/data cycles are being collected
        self.addr = []
        self.chunks = []        # program data: [column, bytearray]
        self.row = None
        self.feat = bytearray()
        self.feat_raw = 0

    def _call(self, now, fn, *args, rb=True):
        """Call a die method; a broken rule (strict die) is logged and recorded, not raised
        into the simulator."""
        try:
            result = fn(now, *args)
        except NandRuleError as e:
            self.log.error("%s: NAND rule %s", self.name, e)
            result = None
        if (self.die.data_interface, self.die.timing_mode) != (self.iface, self.mode):
            # SET FEATURES 01h, or RESET: the new interface and timing mode apply once the
            # command has completed (R/B# high), as ONFI has it
            self._switch_gen += 1
            import cocotb
            cocotb.start_soon(self._switch(now, self._switch_gen))
        if rb:
            self._update_rb(now)
        return result

    async def _switch(self, now, gen):
        from cocotb.triggers import Timer
        from cocotb.utils import get_sim_time
        while True:
            t, ready = get_sim_time("ns"), self.die.ready_ns()
            if ready <= t:
                break
            if ready == math.inf:
                return          # hung: the mode applies only if a later command completes
            await Timer(max(1, round((ready - t) * 1000)), unit="ps")
        if gen != self._switch_gen:
            return
        self.iface, self.mode = self.die.data_interface, self.die.timing_mode
        self.t = self._timing_set(self.iface, self.mode)
        self.checker.set_timings(self.t)
        self.rd = None
        self.log.info("%s: interface %s timing mode %d", self.name, self.iface, self.mode)

    def _cycles(self):
        g = self.die.geometry
        return g.column_cycles, g.row_cycles

    def _value(self, cycles):
        return int.from_bytes(bytes(cycles), "little")

    def _expect_addr(self, now, n, what):
        if len(self.addr) != n:
            self._own(now, "command-sequence",
                      f"{what} after {len(self.addr)} address cycles, needs {n}")
            return False
        return True

    def _latch(self, now, kind, byte):
        if kind == "cmd":
            self._command(now, byte)
        elif kind == "addr":
            self._address(now, byte)
        else:
            self._data_in(now, byte)

    def _command(self, now, c):
        ncol, nrow = self._cycles()
        die, cmd = self.die, self.cmd
        prefix, self.slc_prefix = self.slc_prefix, False
        if prefix and c not in (0x60, 0x80, 0x00):
            self._own(now, "command-sequence", f"{c:02X}h after DAh (SLC mode): DAh must "
                                               f"precede 60h, 80h or 00h")
        if c in (0x10, 0x11, 0x15):
            if cmd not in (0x80, 0x85) or self.row is None:
                self._own(now, "command-sequence", f"{c:02X}h without 80h and its address")
            else:
                self._finish_85(now)
                self._call(now, die.program_page, self.row, [(col, bytes(d)) for col, d in
                                                              self.chunks], 0, c, self.slc)
            self._clear()
            return
        if c in (0x30, 0x32) or (c == 0x31 and cmd == 0x00 and self.addr):
            if cmd != 0x00 or not self._expect_addr(now, ncol + nrow, f"{c:02X}h"):
                if cmd != 0x00:
                    self._own(now, "command-sequence", f"{c:02X}h without 00h-address")
            else:
                col, row = self._value(self.addr[:ncol]), self._value(self.addr[ncol:])
                if c == 0x31:
                    self._call(now, die.read_cache, row, self.slc)
                else:
                    self._call(now, die.read_page, row, col, c, self.slc)
                self.out = "array"
            self._clear()
            return
        if c in (0xD0, 0xD1):
            if cmd != 0x60:
                self._own(now, "command-sequence", f"{c:02X}h without 60h")
            elif self._expect_addr(now, nrow, f"{c:02X}h"):
                self._call(now, die.erase_block, self._value(self.addr), c, self.slc)
            self._clear()
            return
        if c == 0xE0:
            if cmd == 0x05 and self._expect_addr(now, ncol, "05h-E0h"):
                self._call(now, die.change_read_column, self._value(self.addr))
            elif cmd == 0x06 and self._expect_addr(now, ncol + nrow, "06h-E0h"):
                self._call(now, die.change_read_column, self._value(self.addr[:ncol]),
                           self._value(self.addr[ncol:]))
            elif cmd not in (0x05, 0x06):
                self._own(now, "command-sequence", "E0h without 05h/06h")
            self.out = "array"
            self._clear()
            return
        if c == 0x85:
            if cmd not in (0x80, 0x85) or self.row is None:
                self._own(now, "command-sequence", "85h outside a program")
                self._clear()
            else:
                self._finish_85(now)
                self.cmd, self.addr = 0x85, []
            return
        if cmd is not None and not (cmd == 0x00 and not self.addr and not self.slc):
            self._own(now, "command-sequence",
                      f"{c:02X}h while the {cmd:02X}h sequence is incomplete")
        self._clear()
        if c in (0x60, 0x80, 0x00):
            self.slc = prefix
        if c == 0xDA:
            self.slc_prefix = True
        elif c == 0xFF:
            self._rb_gen += 1           # a RESET supersedes any pending R/B# edge
            self._call(now, die.reset)
            self.out = None
        elif c == 0x70:
            self._call(now, die.read_status)
            self.out = "status"
        elif c == 0x00:
            # 00h starts a page read, or after 70h returns to data output (read mode)
            self._call(now, die.read_mode)
            if self.out == "status":
                self.out = "array"
            self.cmd = c
        elif c == 0x31:
            self._call(now, die.read_cache)
            self.out = "array"
        elif c == 0x3F:
            self._call(now, die.read_cache_end)
            self.out = "array"
        elif c in (0x05, 0x06, 0x60, 0x78, 0x80, 0x90, 0xEC, 0xEE, 0xEF):
            self.cmd = c
        else:
            self._own(now, "command-sequence", f"unknown command {c:02X}h")

    def _finish_85(self, now):
        # The address of 85h: a new column (and, with row cycles, a new row) for the data.
        if self.cmd != 0x85:
            return
        ncol, nrow = self._cycles()
        if len(self.addr) in (ncol, ncol + nrow):
            if len(self.addr) == ncol + nrow:
                self.row = self._value(self.addr[ncol:])
            self.chunks.append([self._value(self.addr[:ncol]), bytearray()])
        else:
            self._own(now, "command-sequence",
                      f"85h with {len(self.addr)} address cycles, needs {ncol} or {ncol + nrow}")
        self.cmd = 0x80
        self.addr = []

    def _address(self, now, a):
        ncol, nrow = self._cycles()
        cmd, die = self.cmd, self.die
        limits = {0x00: ncol + nrow, 0x05: ncol, 0x06: ncol + nrow, 0x60: nrow, 0x78: nrow,
                  0x80: ncol + nrow, 0x85: ncol + nrow, 0x90: 1, 0xEC: 1, 0xEE: 1, 0xEF: 1}
        if cmd not in limits or len(self.addr) >= limits[cmd] or (cmd == 0x80 and self.chunks):
            self._own(now, "command-sequence", f"address cycle {a:02X}h unexpected after "
                                               f"{'no command' if cmd is None else f'{cmd:02X}h'}")
            self._clear()
            return
        self.addr.append(a)
        if len(self.addr) < limits[cmd]:
            return
        if cmd == 0x90:
            self.out = [self._call(now, die.read_id, a) or b"", 0]
        elif cmd == 0xEC:
            self.out = [self._call(now, die.read_parameter_page, a) or b"", 0]
        elif cmd == 0xEE:
            self.out = [self._call(now, die.get_features, a) or b"", 0]
        elif cmd == 0x78:
            self._call(now, die.read_status_enhanced, self._value(self.addr))
            self.out = "status"
        elif cmd == 0x80:
            self.row = self._value(self.addr[ncol:])
            self.chunks = [[self._value(self.addr[:ncol]), bytearray()]]
        if cmd in (0x90, 0xEC, 0xEE, 0x78):
            self._clear()

    def _data_in(self, now, d):
        if self.cmd == 0x85:
            self._finish_85(now)
        if self.cmd == 0x80 and self.chunks:
            self.chunks[-1][1].append(d)
        elif self.cmd == 0xEF and self.addr:
            if self.iface == "nvddr2":
                # NV-DDR2: each parameter byte comes twice (both DQS edges); keep the first
                # and take the feature after the second copy of P4
                self.feat_raw += 1
                if self.feat_raw % 2:
                    self.feat.append(d)
                done = self.feat_raw == 8
            else:
                self.feat.append(d)
                done = len(self.feat) == 4
            if done:
                self._call(now, self.die.set_features, self.addr[0], bytes(self.feat))
                self._clear()
        else:
            what = "no command" if self.cmd is None else f"{self.cmd:02X}h"
            self._own(now, "command-sequence", f"data input {d:02X}h after {what}")
