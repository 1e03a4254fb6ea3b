# SPDX-License-Identifier: BSD-2-Clause
"""Tests of the golden NAND die model (sim/nand/python/nand_die.py, nand_geometry.py).

Plain pytest, no RTL. Most tests use a small two-LUN geometry with short array times so
exact busy times are easy to check; the parameter page is also checked on every ready-made
part. The randomised stream prints its seed; `NAND_SEED=<n>` replays one seed.
"""

import os
import random
import tracemalloc
from dataclasses import replace

import pytest

from sim.nand.python.nand_die import (
    RULES,
    SR_ARDY,
    SR_FAIL,
    SR_FAILC,
    SR_RDY,
    SR_WP_N,
    BitErrorModel,
    NandDie,
    NandRuleError,
    onfi_crc16,
    onfi_parameter_page,
)
from spec.nand_geometry import PARTS, NandArrayTiming, NandGeometry, part

GEO = NandGeometry(page_bytes=512, spare_bytes=32, pages_per_block=8, blocks_per_plane=16,
                   planes=2, luns=2, bits_per_cell=2)
TIM = NandArrayTiming(t_r_ns=1000, t_prog_ns=5000, t_bers_ns=20000, t_cbsy_ns=100,
                      t_rcbsy_ns=70, t_dbsy_ns=50, t_feat_ns=200, t_rst_ns=300,
                      t_rst_prog_ns=400, t_rst_erase_ns=600, t_rst_first_ns=1000)
REG = GEO.register_bytes
IDLE = SR_WP_N | SR_RDY | SR_ARDY


def make_die(**kw):
    """A reset die and the time R/B# rose."""
    kw.setdefault("geometry", GEO)
    kw.setdefault("timing", TIM)
    die = NandDie(**kw)
    return die, die.reset(0)


def row(lun, block, page=0):
    return GEO.pack_row(lun, block, page)


def program(die, t, lun, block, page, data, column=0):
    res = die.program_page(t, row(lun, block, page), data, column)
    return res.ready_ns


def read(die, t, lun, block, page, column=0, n=REG):
    res = die.read_page(t, row(lun, block, page), column)
    return die.read_data(res.ready_ns, n), res.ready_ns


def erase(die, t, lun, block):
    return die.erase_block(t, row(lun, block)).ready_ns


def pattern(seed, n=REG):
    return random.Random(seed).randbytes(n)


def crc16_bitwise(data):
    """Independent ONFI CRC-16: bit-serial LFSR, message bits MSB first."""
    crc = 0x4F4E
    for byte in data:
        for i in range(7, -1, -1):
            feedback = ((crc >> 15) & 1) ^ ((byte >> i) & 1)
            crc = (crc << 1) & 0xFFFF
            if feedback:
                crc ^= 0x8005
    return crc


# Identity: parameter page and READ ID ------------------------------------------------------

@pytest.mark.smoke
@pytest.mark.parametrize("name", list(PARTS))
def test_parameter_page(name):
    p = part(name)
    die = NandDie(p)
    t = die.reset(0)
    raw = die.read_parameter_page(t)
    assert die.rb_n(t) == 0 and die.rb_n(t + p.timing.t_r_ns) == 1
    assert len(raw) == 3 * 256
    copies = [raw[i * 256:(i + 1) * 256] for i in range(3)]
    assert copies[0] == copies[1] == copies[2]
    page = copies[0]
    le = lambda off, n: int.from_bytes(page[off:off + n], "little")  # noqa: E731
    assert page[:4] == b"ONFI"
    assert le(4, 2) & (1 << 6)                          # ONFI 3.0
    assert le(254, 2) == crc16_bitwise(page[:254]) == onfi_crc16(page[:254])
    g = p.geometry
    assert le(80, 4) == g.page_bytes and le(84, 2) == g.page_bytes // 16
    assert le(92, 4) == g.pages_per_block and le(96, 4) == g.blocks_per_plane * 2
    assert page[100] == 1 and page[101] == 0x23 and page[102] == g.bits_per_cell
    assert page[14] == 3 and page[113] == 1             # copies, plane address bits
    assert le(129, 2) == 0x3F
    # the maxima over the page types (a part's typical values are not in the page)
    assert le(137, 2) * 1000 == p.timing.t_r_max_ns
    assert le(133, 2) * 1000 == p.timing.t_prog_max_ns
    assert le(135, 2) * 1000 == p.timing.t_bers_ns
    assert page[105] * 10 ** page[106] == p.pe_cycles
    assert page[32:44].rstrip() == p.manufacturer.encode() and page[64] == p.jedec_id
    assert le(8, 2) & 0x0F == 0x0F                      # cache program/read, features, 78h
    # A corrupted byte breaks the CRC (the host then falls back to the next copy).
    bad = bytearray(page)
    bad[80] ^= 1
    assert onfi_crc16(bad[:254]) != le(254, 2)


@pytest.mark.smoke
def test_parameter_page_copies_and_geometry():
    die, t = make_die(param_page_copies=5)
    raw = die.read_parameter_page(t)
    assert len(raw) == 5 * 256 and raw[14] == 5
    assert int.from_bytes(raw[96:100], "little") == 32 and raw[100] == 2
    assert raw[101] == 0x22                             # 2 column + 2 row cycles
    assert onfi_parameter_page(die.part, 5) == raw


@pytest.mark.smoke
def test_read_id():
    die, t = make_die()
    assert die.read_id(t, 0x00) == PARTS["imft-20nm-mlc-64gbit"].id_bytes
    assert die.read_id(t, 0x00)[0] == 0x2C
    assert die.read_id(t, 0x20) == b"ONFI"


# Data path ---------------------------------------------------------------------------

@pytest.mark.smoke
def test_program_read_back_with_columns():
    die, t = make_die()
    data = pattern(1, 512)
    spare = b"\xa5" * 8
    t = program(die, t, 1, 3, 0, [(0, data), (512, spare)])    # 85h moves to the spare
    out, t = read(die, t, 1, 3, 0)
    assert out == data + spare + b"\xff" * 24
    out, t = read(die, t, 1, 3, 0, column=100, n=50)
    assert out == data[100:150]
    assert die.read_data(t, 10) == data[150:160]        # the column advances
    assert die.change_read_column(t, 508)
    assert die.read_data(t, 8) == data[508:] + spare[:4]
    t = program(die, t, 1, 3, 1, b"xyz", column=200)    # unwritten bytes program as FFh
    out, t = read(die, t, 1, 3, 1)
    assert out == b"\xff" * 200 + b"xyz" + b"\xff" * (REG - 203)
    assert read(die, t, 0, 5, 7)[0] == b"\xff" * REG    # erased page
    assert die.page_data(1, 3, 0) == data + spare + b"\xff" * 24


@pytest.mark.smoke
def test_status_output_mode_and_lun_select():
    die, t = make_die()
    t = program(die, t, 1, 0, 0, b"L1")
    t = program(die, t, 0, 0, 0, b"L0")
    res = die.read_page(t, row(1, 0, 0))
    assert die.read_status_enhanced(t, row(0, 0)) == IDLE   # LUN 0 idle, LUN 1 reading
    assert die.read_status_enhanced(t, row(1, 0)) == SR_WP_N
    assert die.rb_n(t) == 0
    t = res.ready_ns
    assert die.read_status(t) == IDLE
    with pytest.raises(NandRuleError, match="data-output-after-status"):
        die.read_data(t, 2)
    die.read_mode(t)
    assert die.read_data(t, 2) == b"L1"


# Rules ---------------------------------------------------------------------------------

def _no_reset(die, t):
    NandDie(geometry=GEO, timing=TIM).read_id(0)


def _busy(die, t):
    die.program_page(t, row(0, 1, 0), b"a")
    die.read_page(t + 10, row(0, 2, 0))


def _busy_data_out(die, t):
    die.read_page(t, row(0, 2, 0))
    die.read_data(t + 999, 1)


def _row_range(die, t):
    die.read_page(t, row(1, 31, 7) + 1)


def _column_range(die, t):
    die.program_page(t, row(0, 1, 0), b"12345", column=REG - 4)


def _read_id_address(die, t):
    die.read_id(t, 0x40)


def _not_erased(die, t):
    d, t = make_die(factory_erased=False)
    d.program_page(t, row(0, 1, 0), b"a")


def _page_order(die, t):
    die.program_page(t, row(0, 1, 2), b"a")


def _reprogram(die, t):
    t = program(die, t, 0, 1, 0, b"a")
    die.program_page(t, row(0, 1, 0), b"b")


def _same_plane(die, t):
    die.program_multi_plane(t, [(row(0, 2, 0), b"a"), (row(0, 4, 0), b"b")])


def _page_mismatch(die, t):
    t = program(die, t, 0, 3, 0, b"a")
    die.program_multi_plane(t, [(row(0, 2, 0), b"a"), (row(0, 3, 1), b"b")])


def _cache_without_read(die, t):
    die.read_cache(t)


def _cache_end_without_cache(die, t):
    t = die.read_page(t, row(0, 1, 0)).ready_ns
    die.read_cache_end(t)


def _status_then_data(die, t):
    t = die.read_page(t, row(0, 1, 0)).ready_ns
    die.read_status(t)
    die.read_data(t, 1)


def _bad_timing_mode(die, t):
    die.set_features(t, 0x01, bytes([6, 0, 0, 0]))


def _slc_program_native_block(die, t):
    die.program_page(t, row(0, 1, 0), b"a", slc=True)


VIOLATIONS = [
    ("reset-after-power-on", _no_reset),
    ("busy", _busy),
    ("busy", _busy_data_out),
    ("address-range", _row_range),
    ("address-range", _column_range),
    ("address-range", _read_id_address),
    ("erase-before-program", _not_erased),
    ("page-order", _page_order),
    ("page-reprogram", _reprogram),
    ("multi-plane", _same_plane),
    ("multi-plane", _page_mismatch),
    ("command-sequence", _cache_without_read),
    ("command-sequence", _cache_end_without_cache),
    ("data-output-after-status", _status_then_data),
    ("feature-value", _bad_timing_mode),
    ("slc-mode", _slc_program_native_block),
]


@pytest.mark.smoke
@pytest.mark.parametrize("rule,scenario", VIOLATIONS,
                         ids=[f"{r}-{f.__name__.strip('_')}" for r, f in VIOLATIONS])
def test_rule_violation_raises_with_its_name(rule, scenario):
    die, t = make_die()
    with pytest.raises(NandRuleError) as info:
        scenario(die, t)
    assert info.value.rule == rule
    assert str(info.value).startswith(rule + ":")


@pytest.mark.smoke
def test_every_rule_has_a_test():
    assert {r for r, _ in VIOLATIONS} == set(RULES)


@pytest.mark.smoke
def test_non_strict_records_and_fails():
    die, t = make_die(strict=False)
    t = program(die, t, 0, 1, 0, b"first")
    res = die.program_page(t, row(0, 1, 0), b"second")   # reprogram: recorded, FAIL
    assert res.ok is False
    assert die.status(t, 0) & SR_RDY == 0
    assert die.read_page(res.ready_ns - 1, row(0, 1, 0)) is None    # refused while busy
    assert die.status(res.ready_ns, 0) == IDLE | SR_FAIL
    assert die.fail_events[-1].reason == "page-reprogram"
    assert die.page_data(0, 1, 0)[:5] == b"first"
    assert [v.rule for v in die.violations] == ["page-reprogram", "busy"]
    res = die.read_page(res.ready_ns, row(0, 1, 0))
    assert die.read_data(res.ready_ns, 5) == b"first"


@pytest.mark.smoke
def test_time_must_not_go_backwards():
    die, t = make_die()
    die.read_status(t + 10)
    with pytest.raises(ValueError, match="backwards"):
        die.read_status(t)


# Timing --------------------------------------------------------------------------------

def _assert_busy_exactly(die, t0, duration, lun=0):
    assert die.status(t0, lun) & (SR_RDY | SR_ARDY) == 0
    assert die.rb_n(t0 + duration - 1) == 0
    assert die.status(t0 + duration - 1, lun) & SR_RDY == 0
    assert die.rb_n(t0 + duration) == 1
    assert die.status(t0 + duration, lun) & (SR_RDY | SR_ARDY) == SR_RDY | SR_ARDY


@pytest.mark.smoke
def test_busy_times_are_exact():
    die, t = make_die()
    assert die.rb_n(0) == 0 and die.rb_n(TIM.t_rst_first_ns) == 1
    res = die.program_page(t, row(0, 1, 0), b"a")
    assert res.ready_ns == res.array_ready_ns == t + TIM.t_prog_ns
    _assert_busy_exactly(die, t, TIM.t_prog_ns)
    t = res.ready_ns + 123
    res = die.read_page(t, row(0, 1, 0))
    assert res.ready_ns == t + TIM.t_r_ns
    _assert_busy_exactly(die, t, TIM.t_r_ns)
    t = res.ready_ns + 7
    res = die.erase_block(t, row(0, 1))
    assert res.ready_ns == t + TIM.t_bers_ns
    _assert_busy_exactly(die, t, TIM.t_bers_ns)
    t = res.ready_ns
    assert die.set_features(t, 0x01, bytes([3, 0, 0, 0])) == t + TIM.t_feat_ns
    assert die.rb_n(t + TIM.t_feat_ns - 1) == 0 and die.rb_n(t + TIM.t_feat_ns) == 1


@pytest.mark.smoke
def test_page_type_timing():
    timing = NandArrayTiming(t_r_ns=1000, t_prog_ns=5000, t_bers_ns=20000,
                             t_r_upper_ns=1500, t_prog_lower_ns=3000, t_prog_upper_ns=9000)
    die, t = make_die(timing=timing)
    assert GEO.page_type(0) == "lower" and GEO.page_type(1) == "upper"
    r0 = die.program_page(t, row(0, 1, 0), b"a")
    assert r0.ready_ns - t == 3000
    r1 = die.program_page(r0.ready_ns, row(0, 1, 1), b"b")
    assert r1.ready_ns - r0.ready_ns == 9000
    r2 = die.read_page(r1.ready_ns, row(0, 1, 1))
    assert r2.ready_ns - r1.ready_ns == 1500
    assert die.read_parameter_page(r2.ready_ns)[137] == 2        # tR max 1.5 us, rounded up


@pytest.mark.smoke
def test_tlc_page_types_typical_and_maximum():
    """TLC pages are lower, middle, upper by page % 3; the die runs the typical values unless
    the timing says maximum; a type without a typical value falls back to the uniform
    typical, then to its maximum."""
    g = replace(GEO, pages_per_block=6, bits_per_cell=3)
    timing = NandArrayTiming(t_r_ns=1000, t_r_lower_ns=700, t_r_middle_ns=900,
                             t_r_upper_ns=1200, t_r_typ_ns=800, t_r_lower_typ_ns=500,
                             t_prog_ns=5000, t_prog_lower_ns=3000, t_prog_middle_ns=6000,
                             t_prog_upper_ns=9000, t_prog_lower_typ_ns=2000,
                             t_prog_middle_typ_ns=4000, t_bers_ns=20000)
    assert [g.page_type(p) for p in range(6)] == ["lower", "middle", "upper"] * 2
    want = {True: ([2000, 4000, 9000], [500, 800, 800]),
            False: ([3000, 6000, 9000], [700, 900, 1200])}
    for typical, (progs, reads) in want.items():
        die, t = make_die(geometry=g, timing=replace(timing, typical=typical))
        for p in range(6):
            r = die.program_page(t, g.pack_row(0, 1, p), b"x")
            assert r.ready_ns - t == progs[p % 3], (typical, p)
            t = r.ready_ns
        for p in range(6):
            r = die.read_page(t, g.pack_row(0, 1, p))
            assert r.ready_ns - t == reads[p % 3], (typical, p)
            t = r.ready_ns
        page = die.read_parameter_page(t)
        assert page[133] == 9 and page[137] == 2         # maxima, us: 9000 ns, 1200 ns
    assert timing.t_prog_mean(3) == (2000 + 4000 + 9000) / 3
    assert timing.t_prog_mean(3, typical=False) == 6000
    assert timing.t_r_mean(2) == (500 + 800) / 2     # MLC: lower, upper


@pytest.mark.smoke
def test_part_table_page_types():
    """Every part has a typical and a maximum tR and tPROG per page type of its cell, typical
    at most the maximum, a named source or "assumed" for each; the means of typical tPROG
    keep the headline figure (split only)."""
    for p in PARTS.values():
        rows = p.page_timing()
        assert [r[1] for r in rows] == list(p.geometry.page_types + ("slc",)) * 2, p.name
        for op, ptype, typ, typ_src, most, most_src in rows:
            assert 0 < typ <= most, (p.name, op, ptype)
            assert typ_src and most_src, (p.name, op, ptype)
        t = p.timing
        assert t.t_prog_mean(p.geometry.bits_per_cell) == pytest.approx(t.t_prog_ns, rel=1e-3)
        assert t.t_prog_mean(p.geometry.bits_per_cell, typical=False) > t.t_prog_ns
    l85a = PARTS["imft-20nm-mlc-64gbit"]
    assert "datasheet" in l85a.timing_source("t_r_ns")
    assert l85a.timing.t_prog("lower") < l85a.timing.t_prog("upper")
    assert l85a.timing_source("t_prog_upper_typ_ns").startswith("assumed")
    assert PARTS["samsung-16nm-tlc-128gbit"].geometry.page_types == ("lower", "middle", "upper")


SLC_TIM = replace(TIM, t_r_slc_ns=600, t_r_slc_typ_ns=400, t_prog_slc_ns=2000,
                  t_prog_slc_typ_ns=1500)


def _slc_rules(die):
    return [v for v in die.violations if v.rule == "slc-mode"]


@pytest.mark.smoke
def test_slc_mode_timing_and_blocks():
    """An SLC-mode erase makes an SLC block until its next erase: its pages 0..ppb/bits-1
    program in t_prog("slc") and read in t_r("slc") (typical or maximum), while a native block
    of the same LUN keeps the page type times; multi-plane ops carry the mode per plane."""
    for typical, (t_prog, t_r) in {True: (1500, 400), False: (2000, 600)}.items():
        die, t = make_die(timing=replace(SLC_TIM, typical=typical))
        assert GEO.slc_pages_per_block == 4
        t = die.erase_block(t, row(0, 1), slc=True).ready_ns
        assert die.block_info(0, 1)["slc"] and not die.block_info(0, 2)["slc"]
        for page in range(4):
            r = die.program_page(t, row(0, 1, page), bytes([page]) * 4, slc=True)
            assert r.ok and r.ready_ns - t == t_prog, (typical, page)
            t = r.ready_ns
        t = program(die, t, 0, 2, 0, b"native")         # native block: page type timing
        for page in range(4):
            r = die.read_page(t, row(0, 1, page), slc=True)
            assert r.ready_ns - t == t_r
            assert die.read_data(r.ready_ns, 4) == bytes([page]) * 4
            t = r.ready_ns
        r = die.read_page(t, row(0, 2, 0))
        assert r.ready_ns - t == TIM.t_r_ns and die.read_data(r.ready_ns, 6) == b"native"
        assert die.status(r.ready_ns, 0) == IDLE and die.violations == []
        t = erase(die, r.ready_ns, 0, 1)                    # native erase: native again
        assert not die.block_info(0, 1)["slc"]
        t = die.program_page(t, row(0, 1, 0), b"x").ready_ns
        assert die.violations == []
    die, t = make_die(timing=SLC_TIM)
    rows = [row(1, 4), row(1, 5)]
    t = die.erase_multi_plane(t, rows, slc=True).ready_ns
    assert die.block_info(1, 4)["slc"] and die.block_info(1, 5)["slc"]
    t0 = die.program_multi_plane(t, [(rows[0], b"p0"), (rows[1], b"p1")], slc=True)
    t = t0.ready_ns
    res = die.read_multi_plane(t, rows, slc=True)
    assert res.ready_ns - t == TIM.t_dbsy_ns + 400
    assert die.read_data(res.ready_ns, 2) == b"p1" and die.violations == []
    t = die.read_cache(res.ready_ns).ready_ns               # 31h: the read's mode goes on
    assert die.violations == []


@pytest.mark.smoke
@pytest.mark.parametrize("case", ["prefix-on-native", "native-on-slc", "past-slc-pages"])
def test_slc_mode_program_mismatch_fails(case):
    """A program whose mode does not match its block (or past the SLC pages) FAILs, stores
    nothing and is an slc-mode violation naming block and page; busy the command mode's
    tPROG. Lenient records it; strict carries the program out, then raises."""
    for strict in (False, True):
        die, t = make_die(timing=SLC_TIM, strict=strict)
        t = die.erase_block(t, row(0, 3), slc=case != "prefix-on-native").ready_ns
        page, slc = 0, case != "native-on-slc"
        if case == "past-slc-pages":
            for p in range(4):
                t = die.program_page(t, row(0, 3, p), b"ok", slc=True).ready_ns
            page = 4
        if strict:
            with pytest.raises(NandRuleError) as info:
                die.program_page(t, row(0, 3, page), b"bad", slc=slc)
            assert info.value.rule == "slc-mode"
        else:
            assert die.program_page(t, row(0, 3, page), b"bad", slc=slc).ok is False
        busy = SLC_TIM.t_prog_slc_typ_ns if slc else SLC_TIM.t_prog(GEO.page_type(page))
        assert die.status(t + busy - 1, 0) & SR_RDY == 0
        assert die.status(t + busy, 0) == IDLE | SR_FAIL
        assert die.page_data(0, 3, page) is None
        assert die.block_info(0, 3)["next_page"] == page
        v = _slc_rules(die)
        assert len(v) == 1 and v[0].lun == 0 and v[0].time_ns == t
        assert f"block 3 page {page}" in v[0].message
        assert die.fail_events[-1].reason == "slc-mode"


@pytest.mark.smoke
def test_slc_mode_read_mismatch_returns_data():
    """A read whose mode does not match its block is an slc-mode violation, the data comes
    back as stored and the busy time is the command mode's tR; strict raises after."""
    die, t = make_die(timing=SLC_TIM, strict=False)
    t = die.erase_block(t, row(0, 1), slc=True).ready_ns
    t = die.program_page(t, row(0, 1, 0), b"slc", slc=True).ready_ns
    t = program(die, t, 0, 2, 0, b"mlc")
    r = die.read_page(t, row(0, 1, 0))                      # SLC block, no prefix
    assert r.ready_ns - t == TIM.t_r_ns and die.read_data(r.ready_ns, 3) == b"slc"
    t = r.ready_ns
    r = die.read_page(t, row(0, 2, 0), slc=True)            # native block, prefix
    assert r.ready_ns - t == 400 and die.read_data(r.ready_ns, 3) == b"mlc"
    r = die.read_page(r.ready_ns, row(0, 1, 6), slc=True)   # past the SLC pages
    assert [v.message for v in _slc_rules(die)] == [
        "read of block 1 page 0 without DAh: an SLC block",
        "SLC-mode (DAh) read of block 2 page 0: a native block",
        "SLC-mode (DAh) read of block 1 page 6: past its SLC pages (0..3)"]
    assert die.status(r.ready_ns, 0) == IDLE
    die, t = make_die(timing=SLC_TIM)
    with pytest.raises(NandRuleError, match="slc-mode: SLC-mode"):
        die.read_page(t, row(0, 2, 0), slc=True)
    assert die.read_data(t + 400, 2) == b"\xff\xff"


@pytest.mark.smoke
def test_slc_mode_on_an_slc_part():
    """bits_per_cell 1: the prefix is taken with native timing and no mode checks."""
    g = replace(GEO, bits_per_cell=1)
    assert g.slc_pages_per_block == g.pages_per_block
    die, t = make_die(geometry=g, timing=SLC_TIM)
    t = die.erase_block(t, row(0, 1), slc=True).ready_ns
    r = die.program_page(t, row(0, 1, 0), b"a", slc=True)
    assert r.ok and r.ready_ns - t == TIM.t_prog_ns
    r2 = die.program_page(r.ready_ns, row(0, 1, 1), b"b")
    r3 = die.read_page(r2.ready_ns, row(0, 1, 0), slc=True)
    assert r3.ready_ns - r2.ready_ns == TIM.t_r_ns and die.violations == []


@pytest.mark.smoke
def test_part_table_slc_mode():
    """Every part has an SLC-mode typical and maximum tR and tPROG with a source, faster than
    its native pages (tPROG below the lower page's, several times below a TLC mean), at most
    the native maxima, outside the parameter page's maxima and the means."""
    for p in PARTS.values():
        t, g = p.timing, p.geometry
        assert g.slc_pages_per_block == g.pages_per_block // g.bits_per_cell
        for name in ("t_r_slc_ns", "t_prog_slc_ns", "t_r_slc_typ_ns", "t_prog_slc_typ_ns"):
            assert getattr(t, name) is not None, (p.name, name)
            assert p.timing_source(name).startswith("assumed: "), (p.name, name)
            assert len(p.timing_source(name)) > len("assumed: ") + 20, (p.name, name)
        for typical in (True, False):
            assert t.t_prog("slc", typical) < t.t_prog("lower", typical), p.name
            assert t.t_r("slc", typical) <= t.t_r("lower", typical), p.name
            assert t.t_r("slc", typical) <= t.t_r("slc", False)
        if g.bits_per_cell == 3:
            assert t.t_prog("slc") * 4 < t.t_prog_mean(3), p.name
        assert t.t_r_max_ns == max(t.t_r(pt, False) for pt in g.page_types)
        rows = [r for r in p.page_timing() if r[1] == "slc"]
        assert [(r[0], r[2], r[4]) for r in rows] == [
            ("tR", t.t_r_slc_typ_ns, t.t_r_slc_ns), ("tPROG", t.t_prog_slc_typ_ns,
                                                     t.t_prog_slc_ns)]
    assert "TurboWrite" in PARTS["samsung-16nm-tlc-128gbit"].timing_source("t_prog_slc_typ_ns")
    assert NandArrayTiming(t_r_ns=1000).t_r("slc") == 1000        # unset: falls back
    with pytest.raises(ValueError, match=r"typical t_prog of slc pages = 3000 ns"):
        NandArrayTiming(t_prog_slc_ns=2000, t_prog_slc_typ_ns=3000)
    with pytest.raises(ValueError, match=r"NandArrayTiming\.t_r_slc_ns"):
        NandArrayTiming(t_r_slc_ns=0)


@pytest.mark.smoke
def test_features_and_reset():
    die, t = make_die()
    assert die.timing_mode == 0
    t = die.set_features(t, 0x01, bytes([4, 0, 0, 0]))
    assert die.get_features(t, 0x01) == bytes([4, 0, 0, 0]) and die.timing_mode == 4
    t += TIM.t_feat_ns
    assert die.reset(t) == t + TIM.t_rst_ns
    assert die.timing_mode == 0


@pytest.mark.smoke
def test_reset_aborts_program_and_erase():
    die, t = make_die()
    res = die.program_page(t, row(0, 1, 0), b"data")
    t = die.reset(t + 100)
    assert t == res.ready_ns - TIM.t_prog_ns + 100 + TIM.t_rst_prog_ns
    assert die.fail_events[-1].reason == "aborted by RESET"
    assert die.page_data(0, 1, 0)[:4] != b"data"            # undefined contents
    with pytest.raises(NandRuleError, match="page-reprogram"):
        die.program_page(t, row(0, 1, 0), b"again")
    die.erase_block(t, row(0, 1))
    t0 = t + 5
    t = die.reset(t0)
    assert t == t0 + TIM.t_rst_erase_ns and die.block_info(0, 1)["erased"] is False
    with pytest.raises(NandRuleError, match="erase-before-program"):
        die.program_page(t, row(0, 1, 0), b"x")
    t = erase(die, t, 0, 1)
    assert program(die, t, 0, 1, 0, b"ok")


@pytest.mark.smoke
def test_power_cut():
    """A power cut tears what is in flight as RESET does, loses registers and features, and
    needs the first RESET again; the array keeps its pages."""
    die, t = make_die()
    t = program(die, t, 0, 1, 0, pattern(1))
    t = die.set_features(t, 0x01, bytes([4, 0, 0, 0])) + TIM.t_feat_ns
    die.program_page(t, row(0, 1, 1), pattern(2))
    die.erase_block(t, row(1, 2))
    assert die.power_cut(t + 100) == 2
    assert [e.reason for e in die.fail_events] == ["torn by a power cut"] * 2
    assert die.page_data(0, 1, 1) != pattern(2)             # undefined contents
    assert die.block_info(1, 2)["erased"] is False
    assert die.timing_mode == 0 and die.stats["power_cuts"] == 1
    with pytest.raises(NandRuleError, match="reset-after-power-on"):
        die.read_page(t + 200, row(0, 1, 0))
    t0 = t + 300
    t = die.reset(t0)
    assert t == t0 + TIM.t_rst_first_ns                  # the first RESET after power-on
    data, t = read(die, t, 0, 1, 0)
    assert data == pattern(1)
    with pytest.raises(NandRuleError, match="page-reprogram"):
        die.program_page(t, row(0, 1, 1), b"again")
    with pytest.raises(NandRuleError, match="erase-before-program"):
        die.program_page(t, row(1, 2, 0), b"x")


# Multi-plane, cache, multi-LUN -----------------------------------------------------------

@pytest.mark.smoke
def test_multi_plane_program_read_erase():
    die, t = make_die()
    a, b = pattern(10), pattern(11)
    res = die.program_multi_plane(t, [(row(0, 4, 0), a), (row(0, 7, 0), b)])
    assert res.ready_ns == t + TIM.t_dbsy_ns + TIM.t_prog_ns   # planes program together
    t = res.ready_ns
    res = die.read_multi_plane(t, [row(0, 4, 0), row(0, 7, 0)])
    assert res.ready_ns == t + TIM.t_dbsy_ns + TIM.t_r_ns
    t = res.ready_ns
    assert die.read_data(t, REG) == b                      # output starts on the last plane
    assert die.change_read_column(t, 0, row=row(0, 4, 0))  # 06h-E0h selects plane 0
    assert die.read_data(t, REG) == a
    res = die.erase_multi_plane(t, [row(0, 4), row(0, 7)])
    assert res.ready_ns == t + TIM.t_dbsy_ns + TIM.t_bers_ns
    t = res.ready_ns
    assert die.page_data(0, 4, 0) is None and die.page_data(0, 7, 0) is None
    assert die.block_info(0, 4)["erase_count"] == die.block_info(0, 7)["erase_count"] == 1


@pytest.mark.smoke
def test_cache_program():
    die, t0 = make_die()
    pages = [pattern(20 + i) for i in range(3)]
    r0 = die.program_page(t0, row(0, 2, 0), pages[0], confirm=0x15)
    assert (r0.ready_ns, r0.array_ready_ns) == (t0 + TIM.t_cbsy_ns, t0 + TIM.t_prog_ns)
    assert die.status(r0.ready_ns, 0) == SR_WP_N | SR_RDY        # RDY=1, ARDY=0
    r1 = die.program_page(r0.ready_ns, row(0, 2, 1), pages[1], confirm=0x15)
    assert r1.ready_ns == t0 + TIM.t_prog_ns + TIM.t_cbsy_ns     # waits for the array
    assert r1.array_ready_ns == t0 + 2 * TIM.t_prog_ns
    with pytest.raises(NandRuleError, match="busy"):
        die.erase_block(r1.ready_ns, row(0, 5))                  # ARDY=0: no erase
    r2 = die.program_page(r1.ready_ns, row(0, 2, 2), pages[2], confirm=0x10)
    assert r2.ready_ns == r2.array_ready_ns == t0 + 3 * TIM.t_prog_ns
    assert die.status(r2.ready_ns - 1, 0) & (SR_RDY | SR_ARDY) == 0
    t = r2.ready_ns
    for i, data in enumerate(pages):
        out, t = read(die, t, 0, 2, i)
        assert out == data


@pytest.mark.smoke
def test_cache_program_failc():
    die, t = make_die()
    die.inject_bad_block(0, 3)
    r0 = die.program_page(t, row(0, 3, 0), b"a", confirm=0x15)     # will FAIL
    r1 = die.program_page(r0.ready_ns, row(0, 2, 0), b"b", confirm=0x10)
    assert die.status(r0.array_ready_ns, 0) & (SR_FAIL | SR_RDY) == 0   # still busy
    assert die.status(r1.ready_ns - 1, 0) & SR_RDY == 0
    assert die.status(r1.ready_ns, 0) == IDLE | SR_FAILC            # FAIL moved to FAILC


@pytest.mark.smoke
def test_cache_read():
    die, t = make_die()
    pages = [pattern(30 + i) for i in range(4)]
    for i, data in enumerate(pages):
        t = program(die, t, 1, 6, i, data)
    t = die.read_page(t, row(1, 6, 0)).ready_ns
    r = die.read_cache(t)                                      # 31h: page 1 into the array
    assert (r.ready_ns, r.array_ready_ns) == (t + TIM.t_rcbsy_ns, t + TIM.t_r_ns)
    assert die.status(r.ready_ns, 1) == SR_WP_N | SR_RDY
    assert die.read_data(r.ready_ns, REG) == pages[0]          # while ARDY=0
    t1 = r.ready_ns
    r = die.read_cache(t1)
    assert r.ready_ns == t + TIM.t_r_ns + TIM.t_rcbsy_ns        # waits for page 1
    assert die.read_data(r.ready_ns, REG) == pages[1]
    r = die.read_cache(r.ready_ns, row=row(1, 6, 3))            # random: page 3 next
    assert die.read_data(r.ready_ns, REG) == pages[2]
    r = die.read_cache_end(r.ready_ns)
    assert r.ready_ns == r.array_ready_ns
    assert die.read_data(r.ready_ns, REG) == pages[3]
    assert die.status(r.ready_ns, 1) == IDLE


@pytest.mark.smoke
def test_luns_work_in_parallel():
    die, t = make_die()
    r0 = die.program_page(t, row(0, 1, 0), b"zero")
    r1 = die.program_page(t + 10, row(1, 1, 0), b"one")      # other LUN: allowed
    assert die.status(r0.ready_ns, 0) == IDLE and die.status(r0.ready_ns, 1) == SR_WP_N
    assert die.rb_n(r0.ready_ns) == 0 and die.rb_n(r1.ready_ns) == 1


# Bad blocks, wear, bit errors -----------------------------------------------------------

@pytest.mark.smoke
def test_factory_bad_blocks():
    geo = NandGeometry(page_bytes=512, spare_bytes=16, pages_per_block=4,
                       blocks_per_plane=512, planes=2, luns=1)
    die, t = make_die(geometry=geo, factory_bad_block_rate=0.05, seed=7)
    bad = die.factory_bad_blocks(0)
    assert 20 <= len(bad) <= 90 and 0 not in bad
    assert bad == NandDie(geometry=geo, factory_bad_block_rate=0.05, seed=7
                          ).factory_bad_blocks(0)
    assert bad != NandDie(geometry=geo, factory_bad_block_rate=0.05, seed=8
                          ).factory_bad_blocks(0)
    good = next(b for b in range(1, 100) if b not in bad)
    blk = bad[0]
    for page, marked in ((0, True), (1, False), (3, True)):
        res = die.read_page(t, geo.pack_row(0, blk, page))
        t = res.ready_ns
        assert die.read_data(t, geo.register_bytes)[geo.page_bytes] == (0 if marked else 0xFF)
    res = die.read_page(t, geo.pack_row(0, good, 0))
    t = res.ready_ns
    assert die.read_data(t, geo.register_bytes)[geo.page_bytes] == 0xFF
    res = die.program_page(t, geo.pack_row(0, blk, 0), b"x")
    assert res.ok is False
    assert die.status(res.ready_ns, 0) == IDLE | SR_FAIL
    res = die.erase_block(res.ready_ns, geo.pack_row(0, blk, 0))
    assert die.status(res.ready_ns, 0) == IDLE | SR_FAIL
    assert [e.reason for e in die.fail_events] == ["factory bad block"] * 2
    assert die.read_id(res.ready_ns) and die.violations == []


@pytest.mark.smoke
def test_grown_bad_blocks():
    die, t = make_die(pe_limit=3)
    for _ in range(3):
        res = die.erase_block(t, row(0, 9))
        t = res.ready_ns
        assert res.ok and die.status(t, 0) == IDLE
    res = die.erase_block(t, row(0, 9))                       # the 4th erase wears it out
    t = res.ready_ns
    assert not res.ok and die.status(t, 0) == IDLE | SR_FAIL
    assert "P/E limit" in die.block_info(0, 9)["bad"]
    res = die.program_page(t, row(0, 9, 0), b"x")
    assert not res.ok and die.status(res.ready_ns, 0) == IDLE | SR_FAIL
    t = program(die, res.ready_ns, 0, 10, 0, b"y")            # other blocks still fine
    assert die.status(t, 0) == IDLE
    die.inject_bad_block(0, 10)
    res = die.program_page(t, row(0, 10, 1), b"z")
    assert not res.ok and die.status(res.ready_ns, 0) == IDLE | SR_FAIL


@pytest.mark.smoke
def test_write_protect():
    die, t = make_die()
    die.set_wp_n(t, False)
    assert die.read_status(t) == SR_RDY | SR_ARDY
    res = die.program_page(t, row(0, 1, 0), b"x")
    assert die.read_status(res.ready_ns) == SR_RDY | SR_ARDY | SR_FAIL
    assert die.page_data(0, 1, 0) is None


def _flip_counts(seed, pe_cycles, reads=10):
    """Bit errors per read of one page of a block cycled pe_cycles times."""
    model = BitErrorModel(rber_base=1e-5, rber_per_kcycle=1e-2)
    die, t = make_die(seed=seed, bit_errors=model)
    for _ in range(pe_cycles):
        t = erase(die, t, 0, 1)
    data = pattern(99)
    t = program(die, t, 0, 1, 0, data)
    counts, flips_all = [], []
    for _ in range(reads):
        res = die.read_page(t, row(0, 1, 0))
        t = res.ready_ns
        out = die.read_data(t, REG)
        flips = res.flips[row(0, 1, 0)]
        diff = {i * 8 + b for i in range(REG) for b in range(8)
                if (out[i] ^ data[i]) >> b & 1}
        assert diff == set(flips)                             # the model reports them all
        counts.append(len(flips))
        flips_all.append(flips)
    assert die.stats["bit_errors"] == sum(counts)
    return counts, flips_all


@pytest.mark.smoke
def test_bit_errors_grow_with_pe_and_replay_from_seed():
    low, _ = _flip_counts(1, 0)
    high, flips = _flip_counts(1, 300)
    # rber 1e-5 vs 3e-3 over 4352 bits: about 0.04 vs 13 flips per read.
    assert sum(low) <= 3 and sum(high) > 60
    # wear errors are the page's weak cells: the same bits on every read
    assert all(f == flips[0] for f in flips) and flips[0]
    assert _flip_counts(1, 301)[1][0] != flips[0]              # another program: others
    assert _flip_counts(1, 300)[1] == flips                    # same seed, same flips
    assert _flip_counts(2, 300)[1] != flips
    die, t = make_die(bit_errors=BitErrorModel(rber_base=1e-2))
    assert read(die, t, 0, 1, 0)[0] == b"\xff" * REG           # erased pages read clean


def _mean_flips(die, t, lun, block, page, reads):
    """Flips per read of one page over `reads` reads, and the time after them."""
    total = 0
    for _ in range(reads):
        res = die.read_page(t, row(lun, block, page))
        t = res.ready_ns
        total += len(res.flips[row(lun, block, page)])
    return total / reads, t


def _expected(model, pe, age_h, reads_before, reads, level, weak=0):
    """Mean flips per read the model's formula predicts over reads_before.. of a block:
    the page's `weak` cells (its wear errors, on every read) and the read part's mean."""
    bits = 8 * REG
    return weak + sum(model.read_rber(pe, age_h, reads_before + i, level) * bits
                      for i in range(reads)) / reads


@pytest.mark.smoke
def test_retention_read_retry_and_disturb_follow_the_model():
    """Each term of spec/nand_errors.BitErrorModel shows in the flips the die returns: a
    bake raises them, the read-retry level nearest the shift takes them back to the wear
    level, a level past it raises them, reads of the block add disturb errors. Counts are
    within 5 sigma (Poisson) of the formula."""
    model = BitErrorModel(rber_base=1e-5, rber_per_kcycle=2e-4, exponent=1.5,
                          retention_shift=0.2, rber_shift=2e-3, rber_per_kread=1e-3,
                          retry_levels=8)
    die, t = make_die(seed=3, bit_errors=model)
    die.luns[0].block(1).erase_count = 2999
    t = erase(die, t, 0, 1)                         # the 3000th P/E cycle
    t = program(die, t, 0, 1, 0, pattern(7))
    n, reads_done = 200, 0

    weak = len(die.weak_cells(0, 1, 0))
    # one draw at the wear rate over the register: 5 sigma of its Poisson count
    mean_weak = model.wear_rber(3000) * 8 * REG
    assert abs(weak - mean_weak) <= 5 * mean_weak ** 0.5, (weak, mean_weak)

    def check(age_h, level):
        nonlocal t, reads_done
        got, t = _mean_flips(die, t, 0, 1, 0, n)
        want = _expected(model, 3000, age_h, reads_done, n, level, weak)
        reads_done += n
        spread = want - weak
        assert abs(got - want) <= 5 * (spread / n) ** 0.5 + 0.05, (age_h, level, got, want)
        return got

    fresh = check(0.0, 0)
    die.bake(8760)                  # a year on the shelf: shift 0.2 * 3.94 * 4 = 3.2 steps
    assert model.best_level(3000, 8760) == 3
    aged = check(8760.0, 0)
    t = die.set_features(t, 0x89, bytes([3, 0, 0, 0]))
    retried = check(8760.0, 3)
    t = die.set_features(t, 0x89, bytes([7, 0, 0, 0]))
    over = check(8760.0, 7)
    assert aged > 5 * fresh and retried < aged / 5 and over > 5 * retried
    # read disturb: 10 K more reads of the block (counted by the backdoor) add 1e-3 * 10
    t = die.set_features(t, 0x89, bytes([3, 0, 0, 0]))
    die.luns[0].block(1).reads += 10000
    reads_done += 10000
    disturbed = check(8760.0, 3)
    assert disturbed > 5 * retried
    # an erase ends both: the page written after it is young and undisturbed
    t = erase(die, t, 0, 1)
    t = program(die, t, 0, 1, 0, pattern(8))
    assert die.block_info(0, 1)["erase_count"] == 3001
    reads_done = 0
    t = die.set_features(t, 0x89, bytes([0, 0, 0, 0]))
    got, t = _mean_flips(die, t, 0, 1, 0, n)
    assert got <= 3 * _expected(model, 3001, 0.0, 0, n, 0, len(die.weak_cells(0, 1, 0))) + 1


@pytest.mark.smoke
def test_read_retry_feature_and_bake_are_checked():
    model = BitErrorModel(retry_levels=4)
    die, t = make_die(bit_errors=model)
    t = die.set_features(t, 0x89, bytes([3, 0, 0, 0]))
    assert die.get_features(t, 0x89) == bytes([3, 0, 0, 0])
    with pytest.raises(NandRuleError, match="feature-value"):
        die.set_features(t + 1000, 0x89, bytes([4, 0, 0, 0]))
    die, t = make_die()                             # no read retry: only level 0
    with pytest.raises(NandRuleError, match="feature-value"):
        die.set_features(t, 0x89, bytes([1, 0, 0, 0]))
    with pytest.raises(ValueError, match=r"NandDie\.bake hours = -1"):
        die.bake(-1)
    die, t = make_die(part="kioxia-bics4-tlc-512gbit", bit_errors="part")
    assert die.bit_errors == PARTS["kioxia-bics4-tlc-512gbit"].bit_errors
    assert die.bit_errors.retry_levels == 8


# Scale and validation ---------------------------------------------------------------

@pytest.mark.smoke
def test_sparse_terabyte_target():
    geo = NandGeometry(page_bytes=16384, spare_bytes=1024, pages_per_block=512,
                       blocks_per_plane=16384, planes=2, luns=4)
    assert geo.target_bytes == 1 << 40 and geo.address_cycles == (2, 4)
    tracemalloc.start()
    try:
        die = NandDie(geometry=geo, factory_bad_block_rate=0.02, seed=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, f"construction allocated {peak} bytes"
    t = die.reset(0)
    last = geo.blocks_per_lun - 1
    good = next(b for b in range(last, 0, -1) if not die.is_factory_bad(3, b))
    r = geo.pack_row(3, good, 0)
    t = die.program_page(t, r, b"end of the terabyte").ready_ns
    t = die.read_page(t, r).ready_ns
    assert die.read_data(t, 19) == b"end of the terabyte"
    assert sum(len(lun.blocks) for lun in die.luns) == 1


@pytest.mark.smoke
@pytest.mark.parametrize("kwargs,field", [
    (dict(page_bytes=1000), "page_bytes"),
    (dict(page_bytes=256), "page_bytes"),
    (dict(spare_bytes=-1), "spare_bytes"),
    (dict(spare_bytes=5000), "spare_bytes"),
    (dict(pages_per_block=0), "pages_per_block"),
    (dict(blocks_per_plane=0), "blocks_per_plane"),
    (dict(planes=3), "planes"),
    (dict(luns=0), "luns"),
    (dict(luns=17), "luns"),
    (dict(bits_per_cell=5), "bits_per_cell"),
    (dict(pages_per_block="8"), "pages_per_block"),
])
def test_geometry_validation(kwargs, field):
    with pytest.raises(ValueError, match=rf"NandGeometry\.{field} = .*: must be"):
        NandGeometry(**kwargs)


@pytest.mark.smoke
def test_timing_and_die_validation():
    with pytest.raises(ValueError, match=r"NandArrayTiming\.t_r_ns = 0: must be .* 1\.\."):
        NandArrayTiming(t_r_ns=0)
    with pytest.raises(ValueError, match=r"NandArrayTiming\.t_prog_upper_ns"):
        NandArrayTiming(t_prog_upper_ns=-5)
    with pytest.raises(ValueError, match=r"NandArrayTiming\.t_prog_middle_typ_ns"):
        NandArrayTiming(t_prog_middle_typ_ns=0)
    with pytest.raises(ValueError, match=r"typical t_prog of lower pages = 3000 ns: must be at "
                                         r"most its maximum, 2000 ns"):
        NandArrayTiming(t_prog_ns=2000, t_prog_typ_ns=3000)
    with pytest.raises(ValueError, match=r"NandArrayTiming\.typical = 1: must be True or"):
        NandArrayTiming(typical=1)
    with pytest.raises(ValueError, match=r"NandGeometry\.die_gbit"):
        NandGeometry.from_capacity(1, 16384, 384)
    with pytest.raises(ValueError, match=r"NandDie\.factory_bad_block_rate"):
        NandDie(factory_bad_block_rate=0.9)
    with pytest.raises(ValueError, match=r"NandDie\.pe_limit"):
        NandDie(pe_limit=0)
    with pytest.raises(ValueError, match=r"NandDie\.param_page_copies"):
        NandDie(param_page_copies=2)
    with pytest.raises(ValueError, match=r"BitErrorModel\.rber_base"):
        BitErrorModel(rber_base=0.5)
    with pytest.raises(ValueError, match="unknown NAND part"):
        part("nope")


@pytest.mark.smoke
def test_parts_and_address_packing():
    assert PARTS["imft-20nm-mlc-64gbit"].geometry.blocks_per_plane == 2048
    assert PARTS["imft-20nm-mlc-128gbit"].geometry.blocks_per_plane == 1024
    assert PARTS["imft-20nm-mlc-128gbit"].geometry.spare_bytes == 1024
    assert PARTS["imft-25nm-mlc-64gbit"].timing.t_r_ns == 75_000
    for p in PARTS.values():
        nominal = {"64gbit": 64, "128gbit": 128, "512gbit": 512}[p.name.rsplit("-", 1)[1]]
        if p.name.startswith("imft-"):
            assert p.geometry.lun_bytes * 8 == nominal << 30
        else:                                       # whole TLC blocks: within 0.1 % over
            assert 0 <= p.geometry.lun_bytes * 8 - (nominal << 30) < (nominal << 30) // 1000
    g = PARTS["imft-20nm-mlc-128gbit"].geometry
    assert (g.page_bits, g.block_bits, g.plane_bits, g.row_cycles) == (9, 11, 1, 3)
    r = g.pack_row(0, 1234, 321)
    assert r == (1234 << 9) | 321 and g.unpack_row(r) == (0, 1234, 321)
    assert g.plane_of(1234) == 0 and g.plane_of(1235) == 1
    assert g.address_bytes(0x1234, r) == bytes([0x34, 0x12, r & 0xFF, r >> 8 & 0xFF, r >> 16])
    rng = random.Random(5)
    for _ in range(200):
        lun, blk, pg = rng.randrange(2), rng.randrange(32), rng.randrange(8)
        assert GEO.unpack_row(GEO.pack_row(lun, blk, pg)) == (lun, blk, pg)
    with pytest.raises(ValueError, match="block = 32"):
        GEO.pack_row(0, 32, 0)


# Randomised stream against a dict reference -----------------------------------------------

def _random_stream(seed, n_ops):
    """Legal and illegal program/read/erase traffic checked against a plain dict."""
    rng = random.Random(seed)
    die, t = make_die(seed=seed)
    ref = {}                                   # (lun, block, page) -> page register image
    next_page = {}                             # (lun, block) -> next page to program
    counts = {"program": 0, "read": 0, "erase": 0, "violation": 0, "multi": 0}
    for _ in range(n_ops):
        t += rng.randrange(0, 50)
        lun, block = rng.randrange(GEO.luns), rng.randrange(GEO.blocks_per_lun)
        nxt = next_page.get((lun, block), 0)
        op = rng.random()
        if op < 0.4 and nxt < GEO.pages_per_block:
            col = rng.choice((0, 0, rng.randrange(REG - 16)))
            data = rng.randbytes(rng.randrange(1, REG - col + 1))
            t = program(die, t, lun, block, nxt, data, col)
            ref[(lun, block, nxt)] = b"\xff" * col + data + b"\xff" * (REG - col - len(data))
            next_page[(lun, block)] = nxt + 1
            counts["program"] += 1
        elif op < 0.75:
            page, col = rng.randrange(GEO.pages_per_block), rng.randrange(REG)
            n = rng.randrange(1, REG - col + 1)
            out, t = read(die, t, lun, block, page, col, n)
            expect = ref.get((lun, block, page), b"\xff" * REG)[col:col + n]
            assert out == expect, f"seed {seed}: LUN {lun} block {block} page {page}"
            counts["read"] += 1
        elif op < 0.85:
            t = erase(die, t, lun, block)
            for page in range(GEO.pages_per_block):
                ref.pop((lun, block, page), None)
            next_page.pop((lun, block), None)
            counts["erase"] += 1
        elif op < 0.93:
            # Two planes at once: blocks 2k and 2k+1 with the same next page.
            b0 = 2 * rng.randrange(GEO.blocks_per_plane)
            p0, p1 = next_page.get((lun, b0), 0), next_page.get((lun, b0 + 1), 0)
            if p0 == p1 and p0 < GEO.pages_per_block:
                d0, d1 = rng.randbytes(REG), rng.randbytes(REG)
                res = die.program_multi_plane(t, [(row(lun, b0, p0), d0),
                                                  (row(lun, b0 + 1, p0), d1)])
                t = res.ready_ns
                ref[(lun, b0, p0)], ref[(lun, b0 + 1, p0)] = d0, d1
                next_page[(lun, b0)] = next_page[(lun, b0 + 1)] = p0 + 1
                counts["multi"] += 1
        else:
            # An illegal program: predict the rule, expect exactly that one.
            if nxt == 0:
                page, rule = rng.randrange(1, GEO.pages_per_block), "page-order"
            elif nxt < GEO.pages_per_block and rng.random() < 0.5:
                page, rule = rng.randrange(nxt + 1, GEO.pages_per_block + 1), "page-order"
                if page == GEO.pages_per_block:
                    page, rule = rng.randrange(nxt), "page-reprogram"
            else:
                page, rule = rng.randrange(nxt), "page-reprogram"
            with pytest.raises(NandRuleError) as info:
                die.program_page(t, row(lun, block, page), b"bad")
            assert info.value.rule == rule, f"seed {seed}"
            counts["violation"] += 1
        assert die.status(t, lun) == IDLE
    for (lun, block, page), data in ref.items():
        assert die.page_data(lun, block, page) == data, f"seed {seed}"
    return counts


def _seeds(default):
    return [int(os.environ["NAND_SEED"])] if "NAND_SEED" in os.environ else default


@pytest.mark.smoke
@pytest.mark.parametrize("seed", _seeds([1, 2]))
def test_random_stream_smoke(seed):
    print(f"seed {seed} (replay: NAND_SEED={seed})")
    counts = _random_stream(seed, 400)
    assert min(counts.values()) > 0, counts


@pytest.mark.full
@pytest.mark.parametrize("seed", _seeds(list(range(100, 104))))
def test_random_stream_full(seed):
    print(f"seed {seed} (replay: NAND_SEED={seed})")
    counts = _random_stream(seed, 12_000)
    assert min(counts.values()) > 50, counts
