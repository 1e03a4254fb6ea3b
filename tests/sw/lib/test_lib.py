# SPDX-License-Identifier: BSD-2-Clause
"""sw/lib (libssdlab): the C unit tests, built with ASan/UBSan and run one case at a time.

Each test_<x>.c here is a tinytest binary; its cases (the TT_CASE names) become pytest items
test_c[<x>:<case>]. The build runs once per session under a file lock (pytest-xdist workers
share build/lib/tests). Also checks that the library itself builds clean (-Werror) as static
and shared libraries.
"""

import fcntl
import re
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
BUILD = ROOT / "build" / "lib"
TESTS_BUILD = BUILD / "tests"

pytestmark = pytest.mark.smoke


def _cases():
    out = []
    for src in sorted(HERE.glob("test_*.c")):
        text = src.read_text()
        main = text[text.index("TT_MAIN("):]
        out += [(src.stem, name) for name in re.findall(r"TT_CASE\((\w+)\)", main)]
    return out


def _make(*args):
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        r = subprocess.run(["make", "-j1", "-s", *args], cwd=ROOT, capture_output=True,
                           text=True)
    assert r.returncode == 0, f"make {' '.join(args)} failed:\n{r.stdout}\n{r.stderr}"


@pytest.fixture(scope="session")
def c_tests():
    _make("-C", "tests/sw/lib")
    return TESTS_BUILD


def test_library_builds():
    _make("-C", "sw/lib")
    for name in ("libssdlab.a", "libssdlab.so", "include/ssdlab/nvme_regs.h"):
        assert (BUILD / name).exists(), name
    syms = subprocess.run(["nm", "-D", "--defined-only", str(BUILD / "libssdlab.so")],
                          capture_output=True, text=True, check=True).stdout
    for sym in ("sl_ctrl_open", "sl_transport_open_sim", "sl_transport_open_vfio", "sl_read",
                "sl_submit_rw", "sl_reap", "sl_status_str"):
        assert re.search(rf"\bT {sym}$", syms, re.M), sym


@pytest.mark.parametrize("binary,case", _cases(), ids=[f"{b}:{c}" for b, c in _cases()])
def test_c(c_tests, binary, case):
    cmd = [str(c_tests / binary), case]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and f"PASS {case}" in r.stdout, (
        f"{' '.join(cmd)} exited {r.returncode}\n{r.stdout}\n{r.stderr}")
