# SPDX-License-Identifier: BSD-2-Clause
"""spec/bch.py against bchlib (the Linux kernel's lib/bch.c): the generator's degree is
bchlib's ecc_bits for every field and several t, the parity of a long division by the
generator (data first bit highest, remainder top-aligned in whole bytes) is bchlib's encode,
and the persona helpers pick the field the ECC cores build. Pure Python, no build."""

import random

import bchlib
import pytest

from spec.bch import PRIM_POLY, BchCode, gf_tables, linear_map
from spec.persona import load_persona, persona_names


def parity(code, data):
    e, g = code.ecc_bits, code.generator
    r = 0
    for byte in data:
        for i in range(7, -1, -1):
            fb = (byte >> i & 1) ^ (r >> (e - 1))
            r = (r << 1) & ((1 << e) - 1)
            if fb:
                r ^= g & ((1 << e) - 1)
    return (r << (8 * code.ecc_bytes - e)).to_bytes(code.ecc_bytes, "big")  # top-aligned


@pytest.mark.smoke
@pytest.mark.parametrize("m", sorted(PRIM_POLY))
def test_code_matches_bchlib(m):
    rng = random.Random(m)
    n = (1 << m) - 1
    for t in (1, 2, 5, min(32, n // (2 * m))):
        room = -(-m * t // 8)
        if 8 * (1 + room) > n:
            continue                        # no data byte fits beside this parity
        k = max(1, (n - 8 * room) // 8 // 2)
        code = BchCode(m, t, k)
        ref = bchlib.BCH(t, m=m)
        assert ref.prim_poly == PRIM_POLY[m]
        assert code.ecc_bits == ref.ecc_bits and code.ecc_bytes == ref.ecc_bytes, (m, t)
        for _ in range(3):
            data = bytes(rng.getrandbits(8) for _ in range(k))
            assert parity(code, data) == ref.encode(data), (m, t)


@pytest.mark.smoke
def test_field_and_linear_map():
    exp, log = gf_tables(8)
    assert len(set(exp)) == 255 and exp[0] == 1 and all(log[exp[i]] == i for i in range(255))
    code = BchCode(8, 2, 8)
    c = code.alpha(37)
    masks = linear_map(8, 8, lambda v: code.mul(v, c))
    for v in range(256):
        y = sum((bin(v & mk).count("1") & 1) << i for i, mk in enumerate(masks))
        assert y == code.mul(v, c)


@pytest.mark.smoke
def test_persona_codes():
    """Every BCH persona's code fits its parity bytes; the smallest field is chosen."""
    for name in persona_names():
        ecc = load_persona(name).ecc
        if ecc.scheme != "bch":
            continue
        code = BchCode.of_persona(ecc)
        assert (1 << (code.m - 1)) <= 8 * ecc.codeword_bytes + code.ecc_bits < (1 << code.m)
        assert code.ecc_bytes <= ecc.parity_bytes == code.room
    assert BchCode.smallest(32, 1020).m == 14          # 8160 + 448 bits: not GF(2^13)
    assert BchCode.smallest(8, 512).m == 13


@pytest.mark.smoke
@pytest.mark.parametrize("args, name", [
    ((4, 1, 16), "m"), ((16, 1, 16), "m"), ((13, 0, 16), "t"), ((13, 4, 0), "data_bytes"),
    ((13, 32, 1020), "data_bytes"), ((14, 32, 1024, 55), "parity_bytes"),
])
def test_refused(args, name):
    with pytest.raises(ValueError, match=rf"^BchCode: {name}"):
        BchCode(*args)
