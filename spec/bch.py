# SPDX-License-Identifier: BSD-2-Clause
"""The BCH code of a persona's ECC (`ecc.scheme: bch`), described once: the field, the
generator polynomial and the bit order of a codeword on flash, and the GF(2) linear maps the
RTL (rtl/nand/bch_encoder.py, bch_decoder.py) builds its XOR networks from.

The code is the one the Linux kernel's lib/bch.c implements (so `bchlib`, which wraps it, is
the tests' reference and a host tool can check a page read raw):

- GF(2^m) with Linux's default primitive polynomial for m (`PRIM_POLY`); alpha = x.
- The generator g(x) is the product of the distinct minimal polynomials of alpha^1, alpha^3,
  ..., alpha^(2t-1); its degree is `ecc_bits` (m * t for the personas' codes).
- A codeword is k data bytes then the parity: bits in order, each byte most significant bit
  first; the first data bit is the coefficient of the highest power. The parity is the
  remainder of data(x) * x^ecc_bits modulo g(x), its highest coefficient first, padded with
  zero bits to `ecc_bytes` (ceil(m * t / 8), as lib/bch.c), then with zero bytes to the
  persona's `parity_bytes` (the spare area it owns).
- Bit `loc` of a codeword (bchlib's `errloc`) is bit loc % 8 (0 = least significant) of byte
  loc // 8, counting the parity bytes after the data.
"""

from dataclasses import dataclass
from functools import cached_property

__all__ = ["PRIM_POLY", "BchCode", "gf_tables", "linear_map"]

# lib/bch.c prim_poly_tab: the primitive polynomial it picks for m = 5..15
PRIM_POLY = {5: 0x25, 6: 0x43, 7: 0x83, 8: 0x11d, 9: 0x211, 10: 0x409, 11: 0x805,
             12: 0x1053, 13: 0x201b, 14: 0x402b, 15: 0x8003}


def gf_tables(m):
    """(exp, log) of GF(2^m) over PRIM_POLY[m]: exp[i] = alpha^i for i in 0 .. 2^m - 2."""
    poly, n = PRIM_POLY[m], (1 << m) - 1
    exp, log = [0] * n, [0] * (n + 1)
    x = 1
    for i in range(n):
        exp[i] = x
        log[x] = i
        x <<= 1
        if x >> m:
            x ^= poly
    return exp, log


def linear_map(n_in, n_out, fn):
    """The GF(2) matrix of a linear function of n_in bits, as one input mask per output bit:
    fn is evaluated on each unit vector (an int with bit j set); output bit i is the XOR of
    the inputs whose bit is set in mask i."""
    masks = [0] * n_out
    for j in range(n_in):
        y = fn(1 << j)
        for i in range(n_out):
            if y >> i & 1:
                masks[i] |= 1 << j
    return masks


@dataclass(frozen=True)
class BchCode:
    """A binary BCH code over GF(2^m) correcting t bits in codewords of data_bytes bytes.

    m: 5..15; t: 1.. (ecc_bits = deg g must leave room: 8 * data_bytes + ecc_bits <= 2^m - 1);
    parity_bytes (default ecc_bytes): the parity's room on flash, >= ecc_bytes."""

    m: int
    t: int
    data_bytes: int
    parity_bytes: int = 0

    def __post_init__(self):
        if self.m not in PRIM_POLY:
            raise ValueError(f"BchCode: m={self.m!r}: out of range 5..15")
        if not isinstance(self.t, int) or self.t < 1:
            raise ValueError(f"BchCode: t={self.t!r}: must be a positive integer")
        if not isinstance(self.data_bytes, int) or self.data_bytes < 1:
            raise ValueError(f"BchCode: data_bytes={self.data_bytes!r}: must be positive")
        n = (1 << self.m) - 1
        if 2 * self.t >= n or self.ecc_bits >= n:
            raise ValueError(f"BchCode: t={self.t}: too strong for GF(2^{self.m})")
        if 8 * (self.data_bytes + self.room) > n:
            raise ValueError(f"BchCode: data_bytes={self.data_bytes}: {self.data_bytes} data "
                             f"and {self.room} parity bytes exceed GF(2^{self.m})'s {n}-bit "
                             "codeword")
        if self.parity_bytes and self.parity_bytes < self.ecc_bytes:
            raise ValueError(f"BchCode: parity_bytes={self.parity_bytes}: the parity needs "
                             f"{self.ecc_bytes}")

    @classmethod
    def smallest(cls, t, data_bytes, parity_bytes=0):
        """The code over the smallest field whose codeword holds the data and the parity
        (ValueError, naming the largest field's reason, when none does)."""
        error = None
        for m in sorted(PRIM_POLY):
            if (1 << m) <= 8 * data_bytes:
                continue
            try:
                return cls(m, t, data_bytes, parity_bytes)
            except ValueError as e:
                error = e
        raise error or ValueError(f"BchCode: data_bytes={data_bytes}: too long for GF(2^15)")

    @classmethod
    def of_persona(cls, ecc):
        """The code of a persona's `ecc` section (spec.persona Ecc or its dict): `smallest`."""
        get = ecc.get if isinstance(ecc, dict) else lambda k: getattr(ecc, k)
        if get("scheme") != "bch":
            raise ValueError(f"BchCode: ecc.scheme={get('scheme')!r}: not bch")
        return cls.smallest(get("correctable_bits"), get("codeword_bytes"),
                            get("parity_bytes"))

    # The field ----------------------------------------------------------------------------

    @cached_property
    def _tables(self):
        return gf_tables(self.m)

    @property
    def n(self):
        """2^m - 1: the full code length, and the order of alpha."""
        return (1 << self.m) - 1

    def alpha(self, i):
        """alpha^i (any integer i)."""
        return self._tables[0][i % self.n]

    def mul(self, a, b):
        if a == 0 or b == 0:
            return 0
        exp, log = self._tables
        return exp[(log[a] + log[b]) % self.n]

    # The code ----------------------------------------------------------------------------

    @cached_property
    def generator(self):
        """g(x) as an int (bit i: coefficient of x^i)."""
        g, seen = 1, set()
        for i in range(1, 2 * self.t, 2):
            coset, j = [], i
            while j not in coset:
                coset.append(j)
                j = 2 * j % self.n
            if coset[0] in seen:
                continue
            seen.update(coset)
            # minimal polynomial: prod over the coset of (x + alpha^j), coefficients in GF(2)
            poly = [1]                                  # coefficients in GF(2^m), low first
            for j in coset:
                a = self.alpha(j)
                nxt = [0] * (len(poly) + 1)
                for d, c in enumerate(poly):
                    nxt[d + 1] ^= c
                    nxt[d] ^= self.mul(c, a)
                poly = nxt
            mp = sum((c & 1) << d for d, c in enumerate(poly))   # all coefficients are 0 / 1
            g = _clmul(g, mp)
        return g

    @property
    def ecc_bits(self):
        return self.generator.bit_length() - 1

    @property
    def ecc_bytes(self):
        """The parity's bytes as lib/bch.c counts them: ceil(m * t / 8) (deg g can be less than
        m * t: the bits after the parity are zero)."""
        return -(-self.m * self.t // 8)

    @property
    def room(self):
        """Parity bytes on flash: parity_bytes, or ecc_bytes when not given."""
        return self.parity_bytes or self.ecc_bytes

    @property
    def frame_bits(self):
        """Bits a codeword occupies on flash: data and the parity room."""
        return 8 * (self.data_bytes + self.room)


def _clmul(a, b):
    """Product of two GF(2)[x] polynomials (ints)."""
    r = 0
    while b:
        if b & 1:
            r ^= a
        a <<= 1
        b >>= 1
    return r
