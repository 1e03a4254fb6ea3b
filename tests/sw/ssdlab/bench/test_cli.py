# SPDX-License-Identifier: BSD-2-Clause
"""Bad input to bench, compare and sweep: a clear message naming the option, exit 2; an
invalid persona file: its message, exit 1. None of these starts a drive."""

import pytest
from click.testing import CliRunner

from sw.ssdlab.cli import main

pytestmark = pytest.mark.smoke


def run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.parametrize("args,option,needle", [
    (["bench", "--suite", "nope"], "--suite", "'nope' is not one of"),
    (["bench", "--profile", "slow"], "--profile", "'slow' is not one of"),
    (["bench", "--persona", "no-such-drive"], "--persona", "no persona 'no-such-drive'"),
    (["bench", "--param", "n_channels"], "--param", "expected key=value"),
    (["bench", "--param", "n_chanels=2"], "--param", "unknown drive parameter"),
    (["bench", "--param", "n_channels=0"], "--param", "integer in 1..32"),
    (["bench", "--param", "n_ways=two"], "--param", "integer in 1..8"),
    (["bench", "--param", "nand_model=fpga"], "--param", "one of die, emulator"),
    (["bench", "--param", "sdr_fallback=2"], "--param", "true or false"),
    (["bench", "--time-scale", "0"], "--time-scale", "range x>0"),
    (["bench", "--time-scale", "-1"], "--time-scale", "range x>0"),
    (["bench", "--write-multiple", "0"], "--write-multiple", "range x>0"),
    (["bench", "--max-ios", "0"], "--max-ios", "x>=1"),
    (["bench", "--min-ios", "2000"], "--min-ios", "two integers >= 1"),
    (["bench", "--min-ios", "0,256"], "--min-ios", "two integers >= 1"),
    (["bench", "--fill", "1.5"], "--fill", "0<x<=1"),
    (["bench", "--suite", "qdscan", "--tests", "seq"], "--tests", "suite qdscan has no test"),
    (["bench", "--device", "/tmp/x", "--param", "n_channels=2"], "--param", "simulated drive"),
    (["bench", "--device", "/tmp/x", "--device-size", "-5"], "--device-size", "positive"),
    (["sweep", "--param", "n_channels=2,0"], "--param", "integer in 1..32"),
    (["sweep", "--suite", "x"], "--suite", "'x' is not one of"),
    (["sweep", "--workers", "0"], "--workers", "x>=1"),
    (["compare", "only-one"], "RESULTS", "two or more"),
])
def test_usage_errors(args, option, needle):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert option in r.output and needle in r.output, r.output


def test_invalid_persona_file_exits_1(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema: 1\nname: bad\nbase: crucial-m500-240\ncontroller:\n"
                   "  channels: 400\n")
    r = run("bench", "--persona", str(bad))
    assert r.exit_code == 1, r.output
    assert "bad.yaml" in r.output and "channels" in r.output


def test_compare_refusal_exits_1(tmp_path, result_factory):
    from sw.ssdlab.bench.results import write_result
    write_result(result_factory("qdscan"), tmp_path / "a")
    write_result(result_factory("review"), tmp_path / "b")
    r = run("compare", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "c"))
    assert r.exit_code == 1 and "differs" in r.output, r.output


def test_persona_commands_still_there():
    r = run("persona", "list")
    assert r.exit_code == 0 and "default" in r.output
    r = run("--help")
    for cmd in ("bench", "compare", "sweep", "persona", "drive"):
        assert cmd in r.output


def test_sdr_fallback_is_a_bench_parameter():
    """--param sdr_fallback=true reaches the drive's configuration: SDR channels."""
    from sw.ssdlab.bench.session import check_params, parse_params
    from sw.ssdlab.flows.sim import drive_config
    params = parse_params(["sdr_fallback=true"])
    check_params(params)
    assert drive_config("default", dict(params)).nvddr2_mode is None
    assert drive_config("default", {}).nvddr2_mode is not None
