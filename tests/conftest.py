# SPDX-License-Identifier: BSD-2-Clause
"""pytest set-up for every ssdlab test: harness on the path, tiers, Verilator in the header."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "lib"))

import ssdlab_harness  # noqa: E402


def pytest_report_header(config):
    binary = ssdlab_harness.verilator()
    version = ssdlab_harness.verilator_version(binary)
    return [f"ssdlab: {version} ({binary})", f"ssdlab: builds in {ssdlab_harness.BUILD_ROOT}"]


# The modules whose tests run longest (a drive build and minutes of simulation each, or a
# large back-end build) go first, so that with several xdist workers the short tests fill in
# at the end rather than one worker finishing a drive test alone while the others idle (the
# smoke tier's last minutes ran on one core). Order within a module is kept.
SLOW_FIRST = ("tests/system/drive/", "tests/sw/fio/", "tests/sw/ssdlab/bench/",
              "tests/nand/nand_backend/", "tests/nand/nand_emulator/")


def pytest_collection_modifyitems(session, config, items):
    root = Path(str(config.rootpath))

    def slow(item):
        rel = Path(str(item.path)).relative_to(root).as_posix()
        return 0 if rel.startswith(SLOW_FIRST) else 1
    items.sort(key=slow)
