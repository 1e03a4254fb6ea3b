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
async def probe(dut):
    cocotb.start_soon(Clock(dut.clk, 4, unit="ns").start())
    dut.rst.value = 1
    await ClockCycles(dut.clk, 4)
    dut.rst.value = 0
    await ClockCycles(dut.clk, 4)
    assert core_params() == json.loads(os.environ["SSDLAB_PROBE_EXPECT"])
    assert os.environ.get("SSDLAB_PROBE_FAIL") != "1", "probe was asked to fail"
