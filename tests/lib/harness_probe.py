# SPDX-License-Identifier: BSD-2-Clause
"""cocotb side of tests/lib/test_ssdlab_harness.py: a probe that reports what the harness
handed the simulation, and fails on request."""

import json
import os

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles
from ssdlab_harness import core_params


@cocotb.test()
async def params_probe(dut):
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 4)
    assert core_params() == json.loads(os.environ["SSDLAB_PROBE_EXPECT"])
    assert os.environ.get("SSDLAB_PROBE_FAIL") != "1", "probe was asked to fail"


@cocotb.test()
async def dpi_probe(dut):
    """The extra-sources build: the SV top's register follows the C++ DPI function."""
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    dut.rst.value = 1
    dut.probe_in.value = 0
    await ClockCycles(dut.clk, 2)
    dut.rst.value = 0
    for value in (0, 5, 1000):
        dut.probe_in.value = value
        await ClockCycles(dut.clk, 2)
        assert int(dut.probe_out.value) == value * 3 + 1
