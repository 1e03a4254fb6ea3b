# SPDX-License-Identifier: BSD-2-Clause
"""spec.nvme.c_header(): the one C header of NVMe opcodes, identifiers, status codes and
structure offsets (`ssdlab/nvme_spec.h`) that sw/firmware and sw/lib build from spec/nvme.py.

- every constant of spec/nvme.py is in it with the same value (checked by the C compiler);
- both builds (sw/firmware and sw/lib Makefiles) generate exactly the current text;
- the C code no longer types these facts by hand.
"""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from spec import nvme

pytestmark = pytest.mark.smoke

ROOT = Path(__file__).resolve().parents[3]
CC = shutil.which("cc") or shutil.which("gcc")


def expected():
    """C name -> value, from spec/nvme.py's own tables."""
    out = {"NVME_SQE_BYTES": nvme.SQE_BYTES, "NVME_CQE_BYTES": nvme.CQE_BYTES,
           "NVME_IDENTIFY_BYTES": nvme.IDENTIFY_BYTES, "NVME_PAGE_SIZE": nvme.PAGE_SIZE,
           "NVME_SMART_LOG_BYTES": nvme.SMART_LOG_BYTES,
           "NVME_ERROR_LOG_ENTRY_BYTES": nvme.ERROR_LOG_ENTRY_BYTES,
           "NVME_VERSION": nvme.NVME_VERSION, "NVME_NSID_ALL": nvme.NSID_ALL,
           "NVME_STATUS_DNR": nvme.STATUS_DNR, "NVME_STATUS_MORE": nvme.STATUS_MORE,
           "NVME_DSM_AD": nvme.DSM_AD, "NVME_ONCS_WRITE_ZEROES": nvme.ONCS_WRITE_ZEROES}
    for prefix, cls in (("NVME_ADMIN_", nvme.AdminOpcode), ("NVME_CMD_", nvme.NvmOpcode),
                        ("NVME_FEAT_", nvme.FeatureId), ("NVME_LOG_", nvme.LogPage),
                        ("NVME_ID_CNS_", nvme.Cns), ("NVME_AER_TYPE_", nvme.AerType),
                        ("NVME_AER_ERROR_", nvme.AerErrorInfo), ("NVME_SC_", nvme.SC)):
        names = [k for k in vars(cls) if k.isupper()]
        assert names, cls
        out.update({prefix + k: getattr(cls, k) for k in names})
    for prefix, table in (("NVME_ID_CTRL_", nvme.ID_CTRL_FIELDS),
                          ("NVME_ID_NS_", nvme.ID_NS_FIELDS), ("NVME_SMART_", nvme.SMART_FIELDS)):
        out.update({f"{prefix}{name.upper()}_OFFSET": offset for name, offset, *_ in table})
    # Entry layouts: offsets from the packing Sqe / Cqe themselves.
    out["NVME_SQE_PRP1_OFFSET"] = nvme.Sqe(prp1=1).pack().index(1)
    out["NVME_SQE_CDW10_OFFSET"] = nvme.Sqe(cdw10=1).pack().index(1)
    out["NVME_CQE_CID_OFFSET"] = nvme.Cqe(cid=1).pack().index(1)
    # Error log entry: each field of a packed ErrorLogEntry marked with its own first byte.
    marks = {"error_count": 0xA1, "sqid": 0xA2, "cid": 0xA3, "status": 0xA4 >> 1,
             "param_error_location": 0xA5, "lba": 0xA6, "nsid": 0xA7, "vs_info": 0xA8,
             "trtype": 0xA9, "cs_info": 0xAA, "trtype_info": 0xAB}
    raw = nvme.ErrorLogEntry(**marks).pack()
    for name, mark in marks.items():
        mark = 0xA4 if name == "status" else mark      # stored as status << 1
        out[f"NVME_ERROR_LOG_{name.upper()}_OFFSET"] = raw.index(mark)
    return out


# A few values straight from the NVMe 1.4 specification, so that a wrong spec/nvme.py also fails.
SPEC_VALUES = {
    "NVME_ADMIN_IDENTIFY": 0x06, "NVME_ADMIN_ASYNC_EVENT_REQUEST": 0x0C,
    "NVME_ADMIN_FORMAT_NVM": 0x80, "NVME_CMD_READ": 0x02, "NVME_CMD_DATASET_MANAGEMENT": 0x09,
    "NVME_FEAT_NUMBER_OF_QUEUES": 0x07, "NVME_LOG_SMART_HEALTH": 0x02,
    "NVME_ID_CNS_CONTROLLER": 0x01, "NVME_SC_INVALID_FIELD": 0x4002,
    "NVME_SC_INVALID_QID": 0x4101, "NVME_SC_DATA_TRANSFER_ERROR": 0x0004,
    "NVME_SC_UNRECOVERED_READ_ERROR": 0x0281, "NVME_SQE_PRP1_OFFSET": 24,
    "NVME_ID_CTRL_ONCS_OFFSET": 520, "NVME_STATUS_DNR": 0x4000,
    "NVME_ID_CTRL_PSD0_MP_OFFSET": 2048, "NVME_ID_NS_LBAF0_LBADS_OFFSET": 130,
    "NVME_SMART_NUM_ERR_LOG_ENTRIES_OFFSET": 176, "NVME_ERROR_LOG_NSID_OFFSET": 24,
}


def compile_check(tmp_path, header_text, values):
    """Compile _Static_asserts of `values` against `header_text` with the C compiler."""
    if CC is None:
        pytest.skip("no C compiler")
    (tmp_path / "ssdlab").mkdir(exist_ok=True)
    (tmp_path / "ssdlab" / "nvme_spec.h").write_text(header_text)
    lines = ['#include "ssdlab/nvme_spec.h"']
    lines += [f'_Static_assert({name} == {value}ull, "{name}");' for name, value in values.items()]
    lines += ["_Static_assert(NVME_STATUS_SCT(NVME_SC_INVALID_QID) == NVME_SCT_COMMAND_SPECIFIC"
              " && NVME_STATUS_SC(NVME_SC_INVALID_QID) == 0x01, \"status macros\");",
              "_Static_assert(NVME_STATUS(1, 0x01) == (NVME_SC_INVALID_QID & ~NVME_STATUS_DNR),"
              " \"NVME_STATUS\");",
              "#define COUNT(sct, sc, name) + 1",
              f"_Static_assert(0 NVME_STATUS_NAMES(COUNT) == {len(nvme._STATUS_TABLE)},"
              " \"names\");",
              "static const char *names[] = {",
              "#define NAME(sct, sc, name) [(sct) << 8 | (sc)] = name,",
              "NVME_STATUS_NAMES(NAME)};"]
    src = tmp_path / "t.c"
    src.write_text("\n".join(lines) + "\n")
    return subprocess.run([CC, "-fsyntax-only", "-std=c11", "-Wall", "-Werror", "-I",
                           str(tmp_path), str(src)], capture_output=True, text=True)


def test_header_matches_spec(tmp_path):
    text = nvme.c_header()
    want = expected()
    for name, value in SPEC_VALUES.items():
        assert want[name] == value, f"spec/nvme.py: {name} = {want[name]:#x}, NVMe 1.4: {value:#x}"
    r = compile_check(tmp_path, text, want)
    assert r.returncode == 0, r.stderr
    for (sct, sc), (name, _) in nvme._STATUS_TABLE.items():
        assert f'X({sct}, 0x{sc:02x}, "{name}")' in text, name
    # every name defined once, nothing more than the spec's constants and the status macros
    defined = re.findall(r"^#define (\w+)", text, re.M)
    assert len(defined) == len(set(defined)), "a name is defined twice"


def test_header_disagreeing_fails(tmp_path):
    """The check above can fail: a header with one value changed does not compile."""
    text = re.sub(r"(#define NVME_SC_INVALID_FIELD\s+)0x", r"\g<1>0x1", nvme.c_header())
    assert text != nvme.c_header()
    assert compile_check(tmp_path, text, expected()).returncode != 0


@pytest.mark.parametrize("makedir,inc", [("sw/firmware", "include"), ("sw/lib", "include")])
def test_builds_generate_current_header(tmp_path, makedir, inc):
    """Each Makefile generates $(BUILD)/include/ssdlab/nvme_spec.h from spec/nvme.py, with
    today's text (and regenerates it when spec/nvme.py is newer)."""
    header = tmp_path / inc / "ssdlab" / "nvme_spec.h"
    make = ["make", "-s", "-C", str(ROOT / makedir), f"BUILD={tmp_path}", str(header)]
    subprocess.run(make, check=True, capture_output=True)
    assert header.read_text() == nvme.c_header()
    header.write_text("/* stale */\n")
    old = (ROOT / "spec" / "nvme.py").stat().st_mtime - 60
    os.utime(header, (old, old))
    subprocess.run(make, check=True, capture_output=True)
    assert header.read_text() == nvme.c_header(), "a stale header was not regenerated"


def test_no_hand_typed_constants():
    """fw.h and nvme.h take the facts from the generated header; the firmware's dispatchers
    switch on named opcodes, feature and log page identifiers."""
    fw_h = (ROOT / "sw" / "firmware" / "fw.h").read_text()
    lib_h = (ROOT / "sw" / "lib" / "include" / "ssdlab" / "nvme.h").read_text()
    for name, text in (("fw.h", fw_h), ("nvme.h", lib_h)):
        assert '#include "ssdlab/nvme_spec.h"' in text, name
        hand = re.findall(r"^#define\s+((?:NVME_)?(?:SC|SCT|ADMIN|CMD|FEAT|LOG|ID_CNS|STATUS)_\w+)",
                          text, re.M)
        hand += re.findall(r"\b(NVME_(?:SC|ADMIN|CMD|FEAT|LOG|ID_CNS)_\w+)\s*=", text)
        assert not hand, f"{name} defines {hand}: they come from spec/nvme.py"
    status_c = (ROOT / "sw" / "lib" / "src" / "status.c").read_text()
    assert "NVME_STATUS_NAMES" in status_c and "Invalid Field in Command" not in status_c
    for src in ("admin.c", "features.c", "log.c"):
        text = (ROOT / "sw" / "firmware" / src).read_text()
        bare = re.findall(r"case 0x[0-9A-Fa-f]+:", text)
        assert not bare, f"sw/firmware/{src}: {bare}; use the NVME_* names of nvme_spec.h"


def c_function(text, name):
    """The body of C function `name` in `text` (from its opening line to its closing brace)."""
    start = re.search(rf"^\w[^\n;]*\b{name}\(void\)\n\{{\n", text, re.M)
    assert start, name
    return text[start.end():text.index("\n}\n", start.end())]


@pytest.mark.parametrize("src, builders", [
    ("admin.c", ("id_controller", "id_namespace")),
    ("log.c", ("build_smart", "build_error"))])
def test_no_hand_typed_offsets(src, builders):
    """The firmware's Identify and log page builders place fields at the generated
    NVME_*_OFFSET names, never at a byte offset typed by hand (`p + 520`, `p[77]`)."""
    text = (ROOT / "sw" / "firmware" / src).read_text()
    for name in builders:
        body = c_function(text, name)
        bare = re.findall(r"\b(?:p|page)\s*(?:\+\s*\d+|\[\d+\])", body)
        assert not bare, f"sw/firmware/{src} {name}(): {bare}; use nvme_spec.h's offsets"
        # fields by name: IDC(ONCS) = (page + NVME_ID_CTRL_##f##_OFFSET) and the like
        assert re.search(r"\b[A-Z]+\([A-Z][A-Z0-9_]*\)", body), name
        assert re.search(r"#define [A-Z]+\(f\) \(\w+ \+ NVME_\w+_##f##_OFFSET\)", text), src
