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
