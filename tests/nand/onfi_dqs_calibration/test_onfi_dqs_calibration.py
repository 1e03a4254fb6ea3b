# SPDX-License-Identifier: BSD-2-Clause
"""onfi_dqs_calibration in front of onfi_channel (with_nvddr2) on onfi_phy_sim, against golden
dies brought to NV-DDR2 as tests/nand/onfi_channel/test_onfi_channel_nvddr2.py does (whose
TB, geometry and op exercise this reuses), with the test top's model of the data eye
(onfi_dqs_cal_top.py: captured bytes corrupted while the loaded tap is outside [eye_lo,
eye_hi] or inside [hole_lo, hole_hi]).

Every calibration is checked against a Python model of the sweep (pass map, first longest
run, its centre, `min_window`, `fallback`): the taps the PHY is given, in order (0 .. last,
then the chosen one), the tap the eye model latched, the outputs, and that no calibration
byte or completion reaches the op source. Cases: eyes in the middle and at both edges; no
passing tap (fallback loaded, reads through it corrupted); ops before, during and after a
calibration (a page program whose data is still moving when `start` comes); pass maps with
two runs (longer first, longer second, a tie)."""

import random

import cocotb
import pytest
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge
from cocotb.utils import get_sim_time
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits

from rtl.nand.onfi_channel import ChannelOp
from tests.nand.onfi_channel.test_onfi_channel_nvddr2 import GEO, PARAMS, exercise
from tests.nand.onfi_channel.test_onfi_channel_nvddr2 import TB as ChannelTB
from tests.nand.onfi_channel.test_onfi_channel_nvddr2 import ok as op_ok

# Timeouts: a calibration of 32 taps takes about 19 us of simulated time at 100 MHz and a
# test at most about 16 ms, so a hang (e.g. a calibration READ ID taking an op's completion)
# fails within seconds of wall time.
OP = ChannelOp
SIGNATURE = b"ONFI"
CAL_PARAMS = {"tap_bits": 5, "settle_cycles": 8, "min_window": 3}


def expected(n_taps, min_window, eye, hole, fallback):
    """The sweep's result as the core should find it: (passes, ok, lo, hi, tap)."""
    lo, hi = eye
    hlo, hhi = hole
    passing = [lo <= t <= hi and not hlo <= t <= hhi for t in range(n_taps)]
    best_lo, best_len, run_lo, run_len = 0, 0, 0, 0
    for t, p in enumerate(passing):
        if p:
            if run_len == 0:
                run_lo = t
            run_len += 1
            if run_len > best_len:          # strictly longer: the first run wins a tie
                best_lo, best_len = run_lo, run_len
        else:
            run_len = 0
    passes = sum(1 << t for t, p in enumerate(passing) if p)
    good = best_len >= min_window
    hi_tap = best_lo + best_len - 1 if best_len else 0
    tap = best_lo + (best_len - 1) // 2 if good else fallback
    return passes, good, best_lo, hi_tap, tap


def scaled(n_taps, *taps):
    """Taps given for 32 taps, scaled to this build's tap count."""
    return tuple(min(n_taps - 1, t * n_taps // 32) for t in taps)


NO_HOLE = (1, 0)


class TB(ChannelTB):
    """The channel's NV-DDR2 test bench, plus the calibration's inputs, the eye, a monitor of
    the PHY's tap loads and counts of what reaches the op source."""

    def __init__(self, dut, salt, pause=0.0):
        p = core_params()
        self.n_taps = 1 << p["tap_bits"]
        self.min_window = p["min_window"]
        dut.start.value = 0
        dut.way.value = 0
        dut.fallback.value = 0
        super().__init__(dut, mode=4, clk_mhz=100, salt=salt, pause=pause)
        self._eye((0, self.n_taps - 1), NO_HOLE)
        self.rdata_beats = 0
        self.cpl_beats = 0
        self.loads = []                 # taps loaded into the PHY, in order
        self.seen_at_load = []          # (bytes, completions) the op source had at each load
        cocotb.start_soon(self._watch_loads())

    async def set_eye(self, eye, hole=NO_HOLE):
        await RisingEdge(self.dut.clk)      # a writable phase (after run(), it is ReadOnly)
        self._eye(eye, hole)

    def _eye(self, eye, hole):
        self.eye, self.hole = eye, hole
        self.dut.eye_lo.value, self.dut.eye_hi.value = eye
        self.dut.hole_lo.value, self.dut.hole_hi.value = hole

    def _rdata(self, value):
        self.rdata_beats += 1
        super()._rdata(value)

    def _cpl(self, value):
        self.cpl_beats += 1
        super()._cpl(value)             # an unexpected completion fails here (no tag queued)

    async def _watch_loads(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.dqs_delay_load)    # one-cycle pulses, never back to back
            await ReadOnly()
            self.loads.append(int(dut.dqs_delay.value))
            self.seen_at_load.append((self.rdata_beats, self.cpl_beats))

    def issue(self, op, way, row=0, column=0, length=0, wdata=b""):
        """Queue an op without waiting; returns its tag (results in self.results)."""
        tag = self.next_tag
        self.next_tag = (tag + 1) % 256
        self.expected.append((tag, op))
        self.ops.put(struct_bits(self.layout, tag=tag, op=op, way=way, row=row, column=column,
                                 length=length, multi=0))
        for b in wdata:
            self.wdata.put(b)
        return tag

    async def result(self, tag):
        while tag not in self.results:
            self.ev.clear()
            await self.ev.wait()
        return self.results.pop(tag)

    async def calibrate(self, way=0, fallback=0, restart=False, refused=False):
        """Pulse `start`, wait for `done`, check everything against the model.
        `restart`: pulse `start` again (with another way) half-way through the sweep, which
        a busy core ignores. `refused`: `way` is one the channel refuses (no tap passes)."""
        dut = self.dut
        loads0 = len(self.loads)
        await RisingEdge(dut.clk)
        assert not int(dut.busy.value)
        dut.way.value, dut.fallback.value, dut.start.value = way, fallback, 1
        await RisingEdge(dut.clk)
        dut.start.value = 0
        t0 = get_sim_time("ns")
        await ReadOnly()
        assert int(dut.busy.value), "busy not raised by start"
        if restart:
            while len(self.loads) < loads0 + self.n_taps // 2 + 1:
                await RisingEdge(dut.clk)
            dut.way.value, dut.start.value = (way + 1) % self.n_ways, 1
            await RisingEdge(dut.clk)
            dut.start.value = 0
        await RisingEdge(dut.done)
        await ReadOnly()
        got = (int(dut.passes.value), int(dut.ok.value), int(dut.window_lo.value),
               int(dut.window_hi.value), int(dut.tap.value))
        want = expected(self.n_taps, self.min_window, (1, 0) if refused else self.eye,
                        self.hole, fallback)
        self.log.info("eye %s hole %s way %d: passes %0*x ok %d window %d..%d tap %d (%.2f us)",
                      self.eye, self.hole, way, self.n_taps // 4 or 1, *got,
                      (get_sim_time("ns") - t0) / 1000)
        assert got == want, f"eye {self.eye} hole {self.hole}: got {got}, expected {want}"
        assert int(dut.dqs_delay.value) == want[4]
        assert int(dut.eye_tap.value) == want[4], "the PHY holds another tap"
        assert self.loads[loads0:] == [*range(self.n_taps), want[4]], self.loads[loads0:]
        await RisingEdge(dut.clk)
        await ReadOnly()
        assert not int(dut.busy.value) and not int(dut.done.value)
        # from the first tap load on, nothing reaches the op source (ops it had forwarded
        # before have completed by then)
        assert (self.rdata_beats, self.cpl_beats) == self.seen_at_load[loads0], \
            "calibration bytes or completions reached the op source"
        await RisingEdge(dut.clk)
        return want

    async def read_signature(self, way):
        cpl, got = await self.run(OP.READ_ID, way, column=0x20, length=4)
        assert not cpl["error"]
        return got


async def start_tb(dut, salt, pause=0.0):
    tb = TB(dut, salt, pause)
    await tb.start()                    # RESET, SET FEATURES to NV-DDR2, through the core
    return tb


@cocotb.test(timeout_time=25, timeout_unit="ms")
async def test_windows(dut):
    """Eyes in the middle, at the low and the high edge, everywhere, narrower than
    min_window; each result read through afterwards on both ways."""
    tb = await start_tb(dut, salt=1)
    n = tb.n_taps
    cases = [scaled(n, 9, 20), (0, scaled(n, 3)[0]), (n - 1 - scaled(n, 3)[0], n - 1),
             (0, n - 1), (n // 2, n // 2)]
    for i, eye in enumerate(cases):
        await tb.set_eye(eye)
        way = i % tb.n_ways
        _, good, _, _, tap = await tb.calibrate(way=way, fallback=n - 1)
        in_eye = eye[0] <= tap <= eye[1]
        for w in range(tb.n_ways):
            got = await tb.read_signature(w)
            assert (got == SIGNATURE) == in_eye, (eye, tap, got)
        if good:
            cpl, got = await tb.run(OP.GET_FEATURES, way, column=0x01)
            assert got == bytes([0x20 | tb.mode, 0, 0, 0]), got
    assert tb.packet == b"" and not tb.packets
    tb.bus.assert_clean()


@cocotb.test(timeout_time=25, timeout_unit="ms")
async def test_no_passing_tap(dut):
    """An eye that no tap reaches: ok 0, passes 0, `fallback` loaded (reads through it come
    back corrupted until the eye is moved over it). A `way` the channel refuses (error
    completions) passes no tap either."""
    tb = await start_tb(dut, salt=2)
    n = tb.n_taps
    await tb.set_eye((1, 0))
    fallback = n * 3 // 4
    passes, good, _, _, tap = await tb.calibrate(way=tb.n_ways - 1, fallback=fallback)
    assert (passes, good, tap) == (0, False, fallback)
    got = await tb.read_signature(0)
    assert got == bytes(b ^ 1 for b in SIGNATURE), got      # the eye model's corruption
    await tb.set_eye((fallback, fallback))
    assert await tb.read_signature(0) == SIGNATURE
    if tb.n_ways < 8:
        await tb.set_eye((0, n - 1))
        passes, good, _, _, tap = await tb.calibrate(way=tb.n_ways, fallback=1, refused=True)
        assert (passes, good, tap) == (0, False, 1)
    tb.bus.assert_clean()


@cocotb.test(timeout_time=50, timeout_unit="ms")
async def test_ops_around_calibration(dut):
    """Ops queued before `start` (a page program whose data is still moving through the
    pass-through, READ ID, GET FEATURES) all complete with the right data, in order, the
    program before the first tap load; nothing of the calibration reaches m_rdata / m_cpl;
    afterwards the channel's NV-DDR2 exercise (pages, split reads, status) passes through,
    with read backpressure."""
    tb = await start_tb(dut, salt=3, pause=0.3)
    n = tb.n_taps
    await tb.set_eye((0, scaled(n, 12)[0]))         # tap 0 (after reset) is in the eye
    way, lun, block = 1 % tb.n_ways, 1 % GEO.luns, 5
    row = GEO.pack_row(lun, block, 0)
    assert op_ok((await tb.run(OP.ERASE_BLOCK, way, row=row))[0])
    page = tb.rng.randbytes(GEO.register_bytes)
    tags = [tb.issue(OP.PROGRAM_PAGE, way, row=row, length=len(page), wdata=page),
            tb.issue(OP.READ_ID, 0, column=0x20, length=4),
            tb.issue(OP.GET_FEATURES, way, column=0x01),
            tb.issue(OP.READ_ID, way, column=0x20, length=4)]
    cpl0 = tb.cpl_beats
    await ClockCycles(dut.clk, 40)            # the program is taking its data
    assert tb.wdata.queue and tags[0] not in tb.results, "program no longer in flight"
    cal = cocotb.start_soon(tb.calibrate(way=0))
    results = [await tb.result(tag) for tag in tags]
    await cal
    # the program (forwarded before start) completed before the first tap load, the other
    # three (held back) after the calibration
    assert tb.seen_at_load[-n - 1][1] == cpl0 + 1, (tb.seen_at_load[-n - 1], cpl0)
    assert op_ok(results[0][0]), results[0]
    assert tb.dies[way].page_data(lun, block, 0) == page
    assert results[1][1] == SIGNATURE and results[3][1] == SIGNATURE, results
    assert results[2][1] == bytes([0x20 | tb.mode, 0, 0, 0]), results[2]
    _, got = await tb.run(OP.READ_PAGE, way, row=row, length=len(page))
    assert got == page, "read after calibration differs"
    await exercise(tb)                        # every op type through the pass-through
    assert tb.packet == b"" and not tb.packets and not tb.expected
    tb.bus.assert_clean()


@cocotb.test(timeout_time=25, timeout_unit="ms")
async def test_two_runs(dut):
    """Pass maps with two runs: the longer one is picked wherever it is, the first on a
    tie; a `start` pulse in the middle of a sweep is ignored."""
    tb = await start_tb(dut, salt=4)
    n = tb.n_taps
    cases = [((0, n - 1), scaled(n, 12, 14)),       # longer second
             (scaled(n, 2, 25), scaled(n, 8, 10)),   # longer second, inside the eye
             (scaled(n, 0, 20), scaled(n, 12, 14)),  # longer first
             (scaled(n, 4, 14), scaled(n, 9, 9))]    # a tie: the first
    for i, (eye, hole) in enumerate(cases):
        await tb.set_eye(eye, hole)
        await tb.calibrate(way=i % tb.n_ways, fallback=0, restart=i > 0)
        assert await tb.read_signature(0) == SIGNATURE
    tb.bus.assert_clean()


def core(**params):
    return AmaranthCore("tests.nand.onfi_dqs_calibration.onfi_dqs_cal_top:OnfiDqsCalTop",
                        toplevel="onfi_dqs_cal_top",
                        params={**PARAMS, **CAL_PARAMS, **params})


@pytest.mark.smoke
def test_onfi_dqs_calibration():
    run(core(), __file__)


@pytest.mark.full
@pytest.mark.parametrize("params", [
    {"tap_bits": 3, "settle_cycles": 0, "min_window": 1, "n_ways": 1},
    {"tap_bits": 6, "settle_cycles": 40, "min_window": 5},
], ids=["taps8", "taps64"])
def test_onfi_dqs_calibration_sweep(params):
    run(core(**params), __file__)


@pytest.mark.smoke
def test_parameters_refused():
    """Illegal parameters stop elaboration with the parameter's name."""
    from rtl.nand.onfi_dqs_calibration import OnfiDqsCalibration
    for kwargs, name in [({"tap_bits": 0}, "tap_bits"), ({"tap_bits": 10}, "tap_bits"),
                         ({"tap_bits": True}, "tap_bits"),
                         ({"settle_cycles": -1}, "settle_cycles"),
                         ({"settle_cycles": 1 << 16}, "settle_cycles"),
                         ({"min_window": 0}, "min_window"),
                         ({"tap_bits": 2, "min_window": 5}, "min_window"),
                         ({"max_len": 0}, "max_len")]:
        with pytest.raises(ValueError, match=name):
            OnfiDqsCalibration(**kwargs)



@pytest.mark.smoke
def test_pass_through_is_combinational():
    """Idle, every stream signal reaches the other side in the same cycle (Amaranth's
    simulator, no clock edge between setting an input and reading the output)."""
    from amaranth.hdl import Value
    from amaranth.sim import Simulator

    from rtl.nand.onfi_dqs_calibration import OnfiDqsCalibration
    dut = OnfiDqsCalibration(tap_bits=2, min_window=1, max_len=2112)
    rng = random.Random(1)
    pairs = [(dut.s_op, dut.m_op), (dut.s_wdata, dut.m_wdata), (dut.s_rdata, dut.m_rdata),
             (dut.s_cpl, dut.m_cpl)]

    async def bench(ctx):
        for _ in range(50):
            for src, dst in pairs:
                payload = rng.getrandbits(len(Value.cast(src.payload)))
                valid, ready = rng.getrandbits(1), rng.getrandbits(1)
                ctx.set(Value.cast(src.payload), payload)
                ctx.set(src.valid, valid)
                ctx.set(dst.ready, ready)
                assert ctx.get(Value.cast(dst.payload)) == payload
                assert (ctx.get(dst.valid), ctx.get(src.ready)) == (valid, ready)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
