# SPDX-License-Identifier: BSD-2-Clause
"""The harness itself: builds are cached by content, parameters reach the cocotb side, and a
failing cocotb test fails pytest with its seed and replay command."""

import json
from pathlib import Path

import pytest
import ssdlab_harness
from ssdlab_harness import run

from sw.ssdlab.flows.elaborate import CATALOGUE

PROBE = str(Path(__file__).with_name("harness_probe.py"))
CORE = CATALOGUE["nvme_regs"].with_params(n_io_queues=2)


def _binary(core):
    return ssdlab_harness.BUILD_ROOT / ssdlab_harness.test_id(core) / "verilator" / core.toplevel


@pytest.mark.smoke
def test_build_cache():
    """A second build of an unchanged core reuses the first; other parameters build anew."""
    _, build_dir, _ = ssdlab_harness._build(CORE, waves=False)
    first = _binary(CORE).stat().st_mtime_ns
    _, again, _ = ssdlab_harness._build(CORE, waves=False)
    assert again == build_dir
    assert _binary(CORE).stat().st_mtime_ns == first, "unchanged core was rebuilt"
    other = CORE.with_params(n_io_queues=3)
    assert ssdlab_harness.test_id(other) != ssdlab_harness.test_id(CORE)


@pytest.mark.smoke
def test_params_reach_cocotb():
    run(CORE, PROBE, testcase="params_probe",
        extra_env={"SSDLAB_PROBE_EXPECT": json.dumps(CORE.params)})


@pytest.mark.smoke
def test_failure_reports_seed(monkeypatch):
    monkeypatch.setenv("SEED", "1234")
    with pytest.raises(pytest.fail.Exception) as failure:
        run(CORE, PROBE, testcase="params_probe",
            extra_env={"SSDLAB_PROBE_EXPECT": json.dumps(CORE.params), "SSDLAB_PROBE_FAIL": "1"})
    message = str(failure.value)
    assert "seed 1234" in message
    assert "SEED=1234" in message and "make test T=" in message
    assert "probe was asked to fail" in message


@pytest.mark.smoke
def test_extra_sources_dpi():
    """A test top (SV) and a C++ DPI model build beside the core; the top is simulated."""
    probe = Path(__file__).with_name("dpi_probe")
    sources = [probe / "dpi_probe_top.sv", probe / "dpi_probe.cpp"]
    run(CORE, PROBE, testcase="dpi_probe", sources=sources, toplevel="dpi_probe_top")


@pytest.mark.smoke
def test_no_test_ran_fails():
    """A testcase name that matches no cocotb test fails instead of passing empty."""
    with pytest.raises(pytest.fail.Exception, match="no cocotb test ran"):
        run(CORE, PROBE, testcase="no_such_test",
            extra_env={"SSDLAB_PROBE_EXPECT": json.dumps(CORE.params)})
