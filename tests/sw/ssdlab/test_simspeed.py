# SPDX-License-Identifier: BSD-2-Clause
"""sw.ssdlab.simspeed: the simulation-speed figures of a stretch of a run, from two readings
of the harness's statistics and the host's wall time."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from sw.ssdlab import simspeed  # noqa: E402

pytestmark = pytest.mark.smoke


def test_speed_of_a_stretch():
    a = simspeed.mark({"cycles": "1000", "sim_ps": "8000000", "msis": "3"})
    b = simspeed.mark({"cycles": "2501000", "sim_ps": "20008000000", "ff_skipped": "500000"})
    s = simspeed.speed(a, b, 2.0, ios=300)
    assert s["cycles"] == 2_500_000 and s["sim_ns"] == 20_000_000
    assert s["cycles_per_s"] == 1_250_000 and s["sim_us_per_s"] == 10_000
    assert s["ios_per_s"] == 150 and s["ff_skipped_pct"] == 20.0
    assert simspeed.text(s) == ("1,250 K cycles/s, 10.00 ms simulated per wall s, "
                                "150.0 I/Os per wall s, 20.0 % skipped")


def test_firmware_instructions():
    """fw_instret (the CPU's minstret) differenced over the stretch, per I/O; absent or -1 (a
    build without the counter) in either reading: None, and not in the text."""
    a = simspeed.mark({"cycles": "0", "sim_ps": "0", "fw_instret": "1000"})
    b = simspeed.mark({"cycles": "100", "sim_ps": "800", "fw_instret": "1600"})
    s = simspeed.speed(a, b, 1.0, ios=300)
    assert s["fw_instr"] == 600 and s["fw_instr_per_io"] == 2.0
    assert simspeed.text(s).endswith(", 2.0 firmware instructions per I/O")
    z = simspeed.speed(b, b, 1.0, ios=300)
    assert z["fw_instr"] == 0 and z["fw_instr_per_io"] == 0.0
    assert simspeed.text(z).endswith(", 0.0 firmware instructions per I/O")
    old = simspeed.mark({"cycles": "100", "sim_ps": "800", "fw_instret": "-1"})
    for x, y in ((a, old), ({"cycles": 0, "sim_ps": 0, "ff_skipped": 0}, b)):
        s = simspeed.speed(x, y, 1.0, ios=300)
        assert s["fw_instr"] is None and "firmware" not in simspeed.text(s)
    both = simspeed.add([simspeed.speed(a, b, 1.0, 300), z])
    assert both["fw_instr"] == 600 and both["fw_instr_per_io"] == 1.0
    assert simspeed.add([simspeed.speed(a, b, 1.0, 300),
                         simspeed.speed(a, old, 1.0, 1)])["fw_instr"] is None


def test_harness_without_fast_forward_and_device():
    a = simspeed.mark({"cycles": "0", "sim_ps": "0"})
    s = simspeed.speed(a, simspeed.mark({"cycles": "10", "sim_ps": "80"}), 0.5)
    assert s["ff_skipped"] == 0 and s["ff_skipped_pct"] == 0.0 and s["ios"] == 0
    assert "I/Os" not in simspeed.text(s)
    assert simspeed.mark({}) is None and simspeed.mark(None) is None
    assert simspeed.speed(None, a, 1.0) is None and simspeed.text(None) == "-"


def test_add_stretches():
    one = simspeed.speed({"cycles": 0, "sim_ps": 0, "ff_skipped": 0},
                         {"cycles": 100, "sim_ps": 800_000, "ff_skipped": 50}, 1.0, 4)
    two = simspeed.speed({"cycles": 0, "sim_ps": 0, "ff_skipped": 0},
                         {"cycles": 300, "sim_ps": 2_400_000, "ff_skipped": 0}, 3.0, 8)
    s = simspeed.add([one, None, two])
    assert s["cycles"] == 400 and s["sim_ns"] == 3_200 and s["wall_s"] == 4.0
    assert s["cycles_per_s"] == 100 and s["ios_per_s"] == 3 and s["ff_skipped_pct"] == 12.5
    assert simspeed.add([None]) is None


@pytest.mark.parametrize("wall", [0, -1])
def test_no_wall_time(wall):
    s = simspeed.speed({"cycles": 0, "sim_ps": 0, "ff_skipped": 0},
                       {"cycles": 5, "sim_ps": 40, "ff_skipped": 0}, wall)
    assert s["cycles_per_s"] is None and simspeed.text(s) == "-"
