# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab elaborate | lint | synth | sim | board`: the front door's arguments and errors
(the flows themselves are exercised by the tests of what they build)."""

import hashlib

import pytest
from click.testing import CliRunner

from sw.ssdlab.cli import main
from sw.ssdlab.flows.elaborate import CATALOGUE

pytestmark = pytest.mark.smoke


def run(*args):
    return CliRunner().invoke(main, list(args))


def test_every_flow_is_on_the_front_door():
    r = run("--help")
    for cmd in ("elaborate", "lint", "synth", "sim", "board", "bench", "persona", "drive"):
        assert f"  {cmd} " in r.output, cmd
    assert all(c in run("sim", "--help").output for c in ("build", "run", "wearout"))
    assert all(c in run("board", "--help").output for c in ("build", "load", "flash", "synth"))


def test_elaborate_one_core_and_hashes():
    r = run("elaborate", "nvme_irq_coalesce", "-p", "n_vectors=3")
    assert r.exit_code == 0, r.output
    assert "module nvme_irq_coalesce" in r.output
    text = CATALOGUE["nvme_irq_coalesce"].with_params(n_vectors=3).verilog()
    assert r.output == text
    r = run("elaborate", "nvme_irq_coalesce", "onfi_phy_sim", "--hash")
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[0] == (
        f"{hashlib.sha256(CATALOGUE['nvme_irq_coalesce'].verilog().encode()).hexdigest()}"
        "  nvme_irq_coalesce")
    assert r.output.splitlines()[1].endswith("  onfi_phy_sim")


@pytest.mark.parametrize("args, message", [
    (("elaborate", "no_such_core"),
     "unknown core no_such_core; known: bch_decoder, bch_encoder, ftl_read_engine"),
    (("elaborate", "nvme_regs", "-p", "oops"), "--param 'oops': expected NAME=VALUE"),
    (("elaborate", "nvme_regs", "-p", "n_io_queues=0"), "n_io_queues=0 out of range"),
    (("elaborate", "--all"), "several cores: use --hash"),
    (("elaborate",), "name a core, or --all"),
    (("lint", "nope"), "unknown core nope"),
    (("synth", "--soc", "nvme_regs"), "--soc takes no CORE"),
    (("sim", "build", "--persona", "no-such-persona"), "no-such-persona"),
    (("board", "build", "--board", "no_board"), "'no_board' is not one of"),
    (("sim", "wearout", "--steps", "0,3000,1000"), "--steps': '0,3000,1000': P/E counts"),
    (("sim", "wearout", "--steps", "0,x"), "--steps': '0,x': comma-separated P/E counts"),
    (("sim", "wearout", "--fill-mib", "0"), "Invalid value for '--fill-mib'"),
    (("sim", "wearout", "--persona", "kioxia-cm6v-3.2t"), "ecc.scheme must be bch"),
])
def test_bad_arguments_name_the_field(args, message):
    r = run(*args)
    assert r.exit_code != 0
    assert message in r.output, r.output
