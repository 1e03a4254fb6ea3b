# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab sim fw-profile`'s pure part: a --fw-profile file read, two snapshots of one run
subtracted (and a pair that is not refused), PCs attributed to the symbol that holds them
(none past a symbol's end). The harness side runs in tests/system/drive/test_fw_profile.py."""

import pytest

from sw.ssdlab.flows.fw_profile import by_function, read_profile, subtract

pytestmark = pytest.mark.smoke

HEAD = "# ssdlab_sim fw-profile: cycles {c} skipped {s} instret {i} period_ps 8000\n" \
       "# pc clocked_cycles instructions_retired\n"


def write(tmp_path, name, c, s, i, rows):
    p = tmp_path / name
    p.write_text(HEAD.format(c=c, s=s, i=i) + "".join(f"{pc:08x} {n} {k}\n"
                                                      for pc, n, k in rows))
    return p


def test_read_and_subtract(tmp_path):
    a = read_profile(write(tmp_path, "a", 100, 10, 30, [(0x100, 50, 20), (0x104, 40, 10)]))
    b = read_profile(write(tmp_path, "b", 250, 40, 70, [(0x100, 80, 35), (0x104, 40, 10),
                                                        (0x200, 90, 25)]))
    assert a[0] == {"cycles": 100, "skipped": 10, "instret": 30, "period_ps": 8000}
    assert a[1] == {0x100: (50, 20), 0x104: (40, 10)}
    head, pcs = subtract(b, a)
    assert head == {"cycles": 150, "skipped": 30, "instret": 40, "period_ps": 8000}
    assert pcs == {0x100: (30, 15), 0x200: (90, 25)}        # 0x104 did not move
    with pytest.raises(ValueError, match="not a snapshot of the same run"):
        subtract(a, b)


def test_not_a_profile(tmp_path):
    p = tmp_path / "x"
    p.write_text("00000100 5 1\n")
    with pytest.raises(ValueError, match="not a --fw-profile file"):
        read_profile(p)


def test_by_function():
    syms = [(0x100, 0x10, "f"), (0x110, 0x8, "g"), (0x200, 0, "h")]
    pcs = {0x100: (5, 1), 0x10C: (7, 2), 0x110: (3, 3), 0x118: (4, 4), 0x200: (1, 1),
           0x50: (2, 0)}
    out = by_function(pcs, syms)
    # 0x118 is past g's 8 bytes; h has no size: its first instruction only
    assert out == {"f": (12, 3), "g": (3, 3), "[pc 0x00000118]": (4, 4), "h": (1, 1),
                   "[pc 0x00000050]": (2, 0)}
