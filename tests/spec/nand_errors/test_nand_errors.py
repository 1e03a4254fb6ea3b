# SPDX-License-Identifier: BSD-2-Clause
"""Tests of spec/nand_errors.py: the raw bit error model's checks, its terms, and what the
parts' assumed numbers claim (spec/nand_geometry.PARTS)."""

import math

import pytest

from spec.nand_errors import NO_BIT_ERRORS, BitErrorModel, age_hours
from spec.nand_geometry import PARTS, NandPart


@pytest.mark.smoke
@pytest.mark.parametrize("field, value", [
    ("rber_base", -1e-9), ("rber_per_kcycle", 0.02), ("exponent", 0.1),
    ("retention_shift", 5.0), ("rber_shift", True), ("rber_per_kread", "1e-6"),
    ("retry_levels", 0), ("retry_levels", 17), ("retry_levels", 2.0)])
def test_fields_are_checked_by_name(field, value):
    with pytest.raises(ValueError, match=rf"BitErrorModel\.{field} = "):
        BitErrorModel(**{field: value})


@pytest.mark.smoke
def test_each_term_of_the_formula():
    m = BitErrorModel(rber_base=1e-6, rber_per_kcycle=1e-5, exponent=2.0,
                      retention_shift=0.5, rber_shift=1e-4, rber_per_kread=1e-6,
                      retry_levels=8)
    assert m.rber(0) == 1e-6
    assert m.rber(2000) == pytest.approx(1e-6 + 1e-5 * 4)
    # 999 hours: log10(1000) = 3 decades, x (1 + 2) at 2000 P/E = 4.5 steps
    assert m.shift(2000, 999) == pytest.approx(4.5)
    assert m.rber(2000, 999) == pytest.approx(m.rber(2000) + 1e-4 * 4.5 ** 2)
    assert m.rber(2000, 999, level=4) == pytest.approx(m.rber(2000) + 1e-4 * 0.25)
    assert m.best_level(2000, 999) in (4, 5)
    assert m.best_level(2000, 1e6) == 7                     # clamped to the part's levels
    assert m.rber(0, 0, reads=50000) == pytest.approx(1e-6 + 5e-5)
    assert m.rber(0, 0, level=2) == pytest.approx(1e-6 + 4e-4)  # over-shifted read
    assert not NO_BIT_ERRORS.enabled and m.enabled
    assert NO_BIT_ERRORS.rber(10000, 1e5, 10**6, 0) == 0.0


@pytest.mark.smoke
def test_age_counts_bake_hours_and_whole_seconds():
    assert age_hours(0, 0, 10.0, 4.0) == 6.0
    assert age_hours(3_599_999_999_999, 0, 0.0, 0.0) == 3599 / 3600   # whole seconds only
    assert age_hours(7.2e12, 0, 0.0, 0.0) == 2.0


@pytest.mark.smoke
@pytest.mark.parametrize("name", sorted(PARTS))
def test_parts_numbers_are_of_the_stated_order(name):
    """What spec/nand_geometry.py says of the assumed numbers: an RBER of the order 1e-4 at
    the rated P/E count, retention dominating after a year at the rated wear, the best
    read-retry level taking it back near the wear level (within the half step a level
    misses by), read disturb adding of the order 1e-4 per 100 K reads."""
    p = PARTS[name]
    m, pe = p.bit_errors, p.pe_cycles
    assert m.retry_levels == 8
    assert 3e-5 <= m.rber(pe) <= 5e-4
    year = m.rber(pe, 8760)
    assert year >= 10 * m.rber(pe)
    best = m.best_level(pe, 8760)
    assert 1 <= best < m.retry_levels - 1
    assert m.rber(pe, 8760, level=best) <= 2 * m.rber(pe)
    assert 2e-5 <= m.rber(0, 0, reads=100_000) - m.rber(0) <= 5e-4
    # the part's ECC (bits per 512 B) corrects the year-old data at its best level with a
    # wide margin: the mean errors per codeword are well under the limit
    assert m.rber(pe, 8760, level=best) * 8 * 512 < p.ecc_bits / 10
    assert not math.isnan(year)


def test_a_part_takes_only_a_bit_error_model():
    p = PARTS["imft-20nm-mlc-64gbit"]
    with pytest.raises(ValueError, match=r"NandPart\.bit_errors"):
        NandPart(name="x", geometry=p.geometry, timing=p.timing, bit_errors=1e-4)
