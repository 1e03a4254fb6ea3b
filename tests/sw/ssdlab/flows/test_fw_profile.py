# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab sim fw-profile`'s pure part: a --fw-profile file read, two snapshots of one run
subtracted (and a pair that is not refused), source lines summed per function. The harness
side runs in tests/system/drive/test_fw_profile.py."""

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
    lines = {("f", "a.c:1"): (5, 1), ("g", "b.c:9"): (3, 3), ("f", "a.c:2"): (7, 2),
             ("[no line info]", "??"): (1, 0)}
    out = by_function(lines)
    assert out == {"f": (12, 3), "g": (3, 3), "[no line info]": (1, 0)}
    assert list(out) == ["f", "g", "[no line info]"]        # most cycles first
