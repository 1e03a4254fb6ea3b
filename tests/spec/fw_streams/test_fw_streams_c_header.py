# SPDX-License-Identifier: BSD-2-Clause
"""spec.fw_streams.FLASH_OPS, the flash op codes written once: the RTL's `FlashOp` is built
from the table and the firmware's `enum flash_opcode` comes from the generated C header
(`ssdlab/fw_streams.h`, `c_header()`).

- the RTL enum has the table's names, values and width;
- the header has the table's values (checked by the C compiler), and a changed header fails;
- the firmware Makefile generates exactly the current text (and regenerates a stale one);
- neither the firmware, its mock HAL nor the RTL types an opcode value by hand again.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spec import fw_streams as fs

pytestmark = pytest.mark.smoke

ROOT = Path(__file__).resolve().parents[3]
CC = shutil.which("cc") or shutil.which("gcc")

# Codes fixed since the first drive build, so that renumbering the table also fails here.
KNOWN = {"READ": 0, "PROGRAM": 1, "ERASE": 2, "RESET": 3, "READ_STATUS": 8}


def test_table():
    names = [n for n, _, _ in fs.FLASH_OPS]
    values = [v for _, v, _ in fs.FLASH_OPS]
    assert len(set(names)) == len(names) and len(set(values)) == len(values)
    assert all(0 <= v < 1 << fs.FLASH_OP_BITS for v in values)
    assert {n: v for n, v, _ in fs.FLASH_OPS if n in KNOWN} == KNOWN


def test_rtl_enum_is_spec():
    from amaranth.hdl import Shape

    from rtl.nand.nand_die_scheduler import FlashOp

    assert [(m.name, m.value) for m in FlashOp] == [(n, v) for n, v, _ in fs.FLASH_OPS]
    assert Shape.cast(FlashOp) == Shape(fs.FLASH_OP_BITS)
    src = (ROOT / "rtl" / "nand" / "nand_die_scheduler.py").read_text()
    hand = [n for n, _, _ in fs.FLASH_OPS if re.search(rf"^\s+{n}\s*=\s*\d", src, re.M)]
    assert not hand, f"nand_die_scheduler.py types {hand}: FlashOp comes from FLASH_OPS"


def compile_check(tmp_path, header_text):
    """Compile _Static_asserts of the table's values against `header_text`."""
    if CC is None:
        pytest.skip("no C compiler")
    (tmp_path / "ssdlab").mkdir(exist_ok=True)
    (tmp_path / "ssdlab" / "fw_streams.h").write_text(header_text)
    lines = ['#include "ssdlab/fw_streams.h"']
    lines += [f'_Static_assert(FLASH_{n} == {v}, "FLASH_{n}");' for n, v, _ in fs.FLASH_OPS]
    lines += [f"enum flash_opcode max = FLASH_{fs.FLASH_OPS[-1][0]};"]
    src = tmp_path / "t.c"
    src.write_text("\n".join(lines) + "\n")
    return subprocess.run([CC, "-fsyntax-only", "-std=c11", "-Wall", "-Werror", "-I",
                           str(tmp_path), str(src)], capture_output=True, text=True)


def test_header_matches_spec(tmp_path):
    text = fs.c_header()
    r = compile_check(tmp_path, text)
    assert r.returncode == 0, r.stderr
    assert len(re.findall(r"^\s+FLASH_\w+ = \d+,", text, re.M)) == len(fs.FLASH_OPS)


def test_header_disagreeing_fails(tmp_path):
    """The check above can fail: a header with one value changed does not compile."""
    text = fs.c_header().replace("FLASH_ERASE = 2,", "FLASH_ERASE = 9,")
    assert text != fs.c_header()
    assert compile_check(tmp_path, text).returncode != 0


def test_firmware_build_generates_current_header(tmp_path):
    """sw/firmware's Makefile generates $(BUILD)/include/ssdlab/fw_streams.h from
    spec/fw_streams.py, with today's text (and regenerates it when the spec is newer)."""
    header = tmp_path / "include" / "ssdlab" / "fw_streams.h"
    make = ["make", "-s", "-C", str(ROOT / "sw" / "firmware"), f"BUILD={tmp_path}", str(header)]
    subprocess.run(make, check=True, capture_output=True)
    assert header.read_text() == fs.c_header()
    header.write_text("/* stale */\n")
    old = (ROOT / "spec" / "fw_streams.py").stat().st_mtime - 60
    os.utime(header, (old, old))
    subprocess.run(make, check=True, capture_output=True)
    assert header.read_text() == fs.c_header(), "a stale header was not regenerated"


def test_no_hand_typed_opcodes():
    """hal.h takes the enum from the generated header; no C source of the firmware or its
    mock HAL gives a FLASH_* opcode a value of its own."""
    hal_h = (ROOT / "sw" / "firmware" / "hal.h").read_text()
    assert '#include "ssdlab/fw_streams.h"' in hal_h
    names = "|".join(n for n, _, _ in fs.FLASH_OPS)
    for folder in (ROOT / "sw" / "firmware", ROOT / "tests" / "sw" / "firmware"):
        for path in sorted(folder.glob("*.[ch]")):
            hand = re.findall(rf"\bFLASH_(?:{names})\s*=\s*\d|#define\s+FLASH_(?:{names})\b",
                              path.read_text())
            assert not hand, f"{path.relative_to(ROOT)}: {hand}; the codes are spec's"
