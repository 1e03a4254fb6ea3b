# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab drive`: argument handling (pure Python, no device), and the commands end to end
against tests/sw/lib/fake_harness (a scripted NVMe controller behind the bridge protocol -
the CLI, ctypes binding, library and sim transport are real; the drive is not)."""

import fcntl
import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sw.ssdlab.cli import main
from sw.ssdlab.drive import Pattern

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "build" / "lib"
TESTS_BUILD = BUILD / "tests"

pytestmark = pytest.mark.smoke


def run(*args, env=None):
    return CliRunner().invoke(main, ["drive", *args], env=env or {"SSDLAB_SIM_SOCKET": None})


@pytest.mark.parametrize("args,needle", [
    (["identify"], "give --sim SOCKET or --vfio PCI_ADDR"),
    (["identify", "--sim", "a.sock", "--vfio", "0000:01:00.0"], "not both"),
    (["identify", "--vfio", "01:00"], "Invalid value for '--vfio'"),
    (["write", "--sim", "s", "--lba", "0", "--count", "0"], "Invalid value for '--count'"),
    (["write", "--sim", "s", "--lba", "-1", "--count", "1"], "Invalid value for '--lba'"),
    (["write", "--sim", "s", "--count", "1"], "Missing option '--lba'"),
    (["verify", "--sim", "s", "--lba", "0", "--count", "1", "--pattern", "seed:x"],
     "Invalid value for '--pattern'"),
    (["write", "--sim", "s", "--lba", "0", "--count", "1", "--pattern", "byte:300"],
     "Invalid value for '--pattern'"),
    (["format", "--sim", "s"], "add --yes"),
    (["format", "--sim", "s", "--yes", "--ses", "3"], "Invalid value for '--ses'"),
    (["trim", "--sim", "s", "--lba", "0"], "Missing option '--count'"),
    (["quit", "--vfio", "0000:01:00.0"], "takes --sim, not --vfio"),
    (["bake", "--vfio", "0000:01:00.0", "10"], "takes --sim, not --vfio"),
    (["bake", "--sim", "s", "0"], "Invalid value for 'HOURS'"),
    (["precycle", "--vfio", "0000:01:00.0", "10"], "takes --sim, not --vfio"),
    (["precycle", "--sim", "s", "0"], "Invalid value for 'CYCLES'"),
    (["precycle", "--sim", "s", "1.5"], "Invalid value for 'CYCLES'"),
    (["bake", "--sim", "s", "2e6"], "Invalid value for 'HOURS'"),
    (["bad-block", "--sim", "s", "--channel", "0"], "Missing option '--block'"),
    (["bad-block", "--sim", "s", "--channel", "-1", "--block", "3"],
     "Invalid value for '--channel'"),
    (["pe-count", "--sim", "s", "--channel", "0", "--block", "3"], "Missing option '--count'"),
    (["pe-count", "--sim", "s", "--channel", "0", "--block", "3", "--count", "1048576"],
     "Invalid value for '--count'"),
    (["pe-limit", "--sim", "s", "1048576"], "Invalid value for 'LIMIT'"),
    (["bit-errors", "--sim", "s", "--channel", "0", "--rber", "0.6"],
     "Invalid value for '--rber'"),
    (["bit-errors", "--vfio", "0000:01:00.0", "--channel", "0", "--rber", "1e-3"],
     "takes --sim, not --vfio"),
    (["die-fail", "--sim", "s"], "Missing option '--channel'"),
    (["cpl-fault", "--sim", "s"], "Missing option '--kind'"),
    (["cpl-fault", "--sim", "s", "--kind", "lost"], "Invalid value for '--kind'"),
    (["cpl-fault", "--sim", "s", "--kind", "poison", "--reads", "256"],
     "Invalid value for '--reads'"),
    (["cpl-fault", "--vfio", "0000:01:00.0", "--kind", "timeout"], "takes --sim, not --vfio"),
    (["identify", "--sim", "s", "--timeout", "0"], "Invalid value for '--timeout'"),
])
def test_usage_errors(args, needle):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert needle in r.output


def test_patterns():
    assert Pattern("zero").data(5, 2, 512) == bytes(1024)
    assert Pattern("byte:0xa5").data(0, 1, 512) == b"\xa5" * 512
    s = Pattern("seed:7")
    a = s.data(10, 3, 4096)
    assert a == s.data(10, 3, 4096) and a[4096:8192] == s.data(11, 1, 4096)
    assert a != Pattern("seed:8").data(10, 3, 4096)
    assert s.mismatches(10, a, 4096) == []
    bad = bytearray(a)
    bad[4096 + 7] ^= 1
    assert s.mismatches(10, bytes(bad), 4096) == [11]
    for spec in ("seed", "seed:-1", "byte:256", "zero:1", "random", ""):
        with pytest.raises(ValueError):
            Pattern(spec)


def test_no_harness_is_a_clear_error(tmp_path):
    r = run("identify", "--sim", str(tmp_path / "none.sock"))
    assert r.exit_code == 1
    assert "connecting to the harness" in r.output and "is it running?" in r.output


def test_vfio_without_device():
    r = run("identify", "--vfio", "0000:ff:1f.7")
    assert r.exit_code == 1
    assert "vfio: no PCI device 0000:ff:1f.7" in r.output


def start_harness(tmp_path, env=None):
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(BUILD / ".make.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-j1", "-s", "-C", "tests/sw/lib"], cwd=ROOT, check=True)
    sock = tmp_path / "drive.sock"
    p = subprocess.Popen([str(TESTS_BUILD / "fake_harness"), str(sock), str(tmp_path / "ram")],
                         stdout=subprocess.PIPE, env={**os.environ, **(env or {})})
    for _ in range(100):
        if sock.exists():
            break
        time.sleep(0.02)
    return p, {"SSDLAB_SIM_SOCKET": str(sock)}


@pytest.mark.parametrize("hang,ok", [("busy3000@3", True), ("stuck@3", False)])
def test_watchdog_tells_stuck_from_busy(tmp_path, hang, ok):
    """A harness that takes 3 s of wall time over a request but sends keepalives is waited
    for; one that goes silent is reported as stuck once $SSDLAB_SIM_WATCHDOG_S (1 s here) has
    passed, instead of blocking the host forever."""
    p, env = start_harness(tmp_path, {"FAKE_HARNESS_HANG": hang})
    try:
        t0 = time.monotonic()
        r = run("identify", "--json", "--timeout", "0.5",
                env={**env, "SSDLAB_SIM_WATCHDOG_S": "1"})
        wall = time.monotonic() - t0
        if ok:
            assert r.exit_code == 0, r.output
            assert wall >= 3, wall
        else:
            assert r.exit_code != 0
            assert "sent nothing for 1 s of wall time" in r.output and "stuck" in r.output, \
                r.output
            assert wall < 10, wall
    finally:
        p.kill()
        p.wait(timeout=10)


@pytest.fixture
def harness(tmp_path):
    p, env = start_harness(tmp_path)
    yield env
    p.terminate()
    p.wait(timeout=10)


def test_end_to_end_on_fake_harness(harness):
    r = run("identify", "--json", "--timeout", "0.5", env=harness)
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["model"] == "ssdlab fake controller" and info["lba_bytes"] == 4096
    assert info["transport"] == "sim"
    r = run("write", "--lba", "0", "--count", "256", "--pattern", "seed:7", env=harness)
    assert r.exit_code == 0 and "simulated time" in r.output, r.output
    r = run("verify", "--lba", "0", "--count", "256", "--pattern", "seed:7", env=harness)
    assert r.exit_code == 0 and "all 256 blocks match" in r.output, r.output
    assert run("trim", "--lba", "16", "--count", "8", env=harness).exit_code == 0
    r = run("verify", "--lba", "12", "--count", "16", "--pattern", "seed:7", "--json",
            env=harness)
    assert r.exit_code == 1
    assert json.loads(r.output)["mismatched_lbas"] == list(range(16, 24))
    r = run("verify", "--lba", "16", "--count", "8", "--pattern", "zero", "--irq", env=harness)
    assert r.exit_code == 0, r.output
    r = run("smart-log", "--json", env=harness)
    assert r.exit_code == 0 and json.loads(r.output)["host_write_commands"] >= 2
    # past the end: the CLI refuses (exit 2); --unchecked sends it and names the drive's answer
    assert run("read", "--lba", "2047", "--count", "2", env=harness).exit_code == 2
    r = run("read", "--lba", "2047", "--count", "2", "--unchecked", env=harness)
    assert r.exit_code == 1 and "LBA Out of Range (SCT 0 SC 80h)" in r.output
    assert run("format", "--yes", env=harness).exit_code == 0
    r = run("verify", "--lba", "0", "--count", "256", "--pattern", "zero", env=harness)
    assert r.exit_code == 0, r.output
    r = run("bench", "--rw", "randwrite", "--qd", "8", "--ios", "200", "--lba", "256",
            "--count", "512", "--seed", "4", "--json", env=harness)
    assert r.exit_code == 0, r.output
    b = json.loads(r.output)
    assert b["ios"] == 200 and b["errors"] == 0 and b["config"]["clock"] == "simulated"
    assert 0 < b["lat_p50_ns"] <= b["lat_p99_ns"] and b["sim_cycles"] > 0
    assert b["sim_speed"]["ios"] == 200 and b["sim_speed"]["sim_ns"] > 0
    r = run("bench", "--rw", "read", "--bs", "1000", env=harness)
    assert r.exit_code == 2 and "'--bs'" in r.output
    # power cycle keeps the data (the fake keeps its media); statistics; the harness exits
    assert run("write", "--lba", "5", "--count", "3", "--pattern", "seed:9", env=harness
               ).exit_code == 0
    assert run("power-cycle", env=harness).exit_code == 0
    r = run("bake", "8760", env=harness)        # no NAND in the fake: nothing ages
    assert r.exit_code == 0 and "nothing baked" in r.output, r.output
    r = run("precycle", "3000", env=harness)    # nor wears
    assert r.exit_code == 0 and "nothing pre-cycled" in r.output, r.output
    # no die models in the fake: ssdlab's admin C1h, which the fake does not know
    r = run("bad-block", "--channel", "1", "--block", "6", env=harness)
    assert r.exit_code == 1 and "bad_block (channel 1, way 0, lun 0, block 6): admin C1h" \
        in r.output and "Invalid Command Opcode" in r.output, r.output
    r = run("pe-limit", "100", env=harness)
    assert r.exit_code == 1 and "pe_limit (limit 100): admin C1h" in r.output, r.output
    r = run("bit-errors", "--channel", "1", "--rber", "1e-3", env=harness)
    assert r.exit_code == 0 and "nothing injected" in r.output, r.output
    r = run("die-fail", "--channel", "1", "--lun", "1", env=harness)
    assert r.exit_code == 0 and "nothing injected" in r.output, r.output
    r = run("verify", "--lba", "5", "--count", "3", "--pattern", "seed:9", env=harness)
    assert r.exit_code == 0, r.output
    r = run("stats", "--json", env=harness)
    assert r.exit_code == 0 and json.loads(r.output)["model"] == "fake_dev", r.output
    assert int(json.loads(r.output)["sim_ps"]) > 0
    assert run("quit", env=harness).exit_code == 0
    assert os.environ.get("SSDLAB_SIM_SOCKET") != harness["SSDLAB_SIM_SOCKET"]


def test_trace_logs_bridge_traffic(harness):
    env = dict(os.environ, **harness)
    r = subprocess.run([str(ROOT / ".venv" / "bin" / "python"), "-m", "sw.ssdlab", "drive",
                        "identify", "--trace"], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert "HELLO" in lines[0] and "model" in r.stdout
    assert any("MMIO_WRITE addr 0x14 size 4 data 0x460001" in ln for ln in lines)
    assert any("WAIT" in ln and "..." in ln for ln in lines)
