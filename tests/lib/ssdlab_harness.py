# SPDX-License-Identifier: BSD-2-Clause
"""Test harness: elaborate a core, build it with Verilator through cocotb's runner (cached),
run the cocotb tests of a test file under pytest.

A test file holds its cocotb tests and its pytest entry points (tests/lib/HARNESS_API.md):

    @pytest.mark.smoke
    @pytest.mark.parametrize("n_ways", [1, 8])
    def test_onfi_sdr_engine(n_ways):
        run(CORE.with_params(n_ways=n_ways), __file__)

Environment: WAVES=1 records build/sim/<test-id>/run/<test>/dump.fst; SEED=n replays a seed;
VERILATOR=/path picks the Verilator binary (else setup/verilator.sh finds or builds one).
"""

import fcntl
import functools
import hashlib
import json
import os
import random
import re
import shlex
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sw.ssdlab.flows.elaborate import AmaranthCore, Core, LiteXCore  # noqa: E402
from sw.ssdlab.flows.sim_build import drop_precompiled_headers, use_ccache  # noqa: E402

__all__ = ["AmaranthCore", "LiteXCore", "run", "core_params", "struct_bits", "struct_fields",
           "verilator", "BUILD_ROOT"]

BUILD_ROOT = REPO / "build" / "sim"
PARAMS_ENV = "SSDLAB_PARAMS"
# Extra Verilator options for every build. -Wno-fatal: lint is `make lint`'s job, and
# generated Verilog (Yosys, Migen) trips style warnings that say nothing about behaviour.
BUILD_ARGS = ["-Wno-fatal", "--x-assign", "unique", "--x-initial", "unique"]
WAVE_ARGS = ["--trace-fst", "--trace-structs"]


def core_params() -> dict:
    """Inside a cocotb test: the HDL parameters the running build was elaborated with."""
    return json.loads(os.environ.get(PARAMS_ENV, "{}"))


def struct_bits(layout, **fields) -> int:
    """The bits of an Amaranth `data.Struct`/`Layout` value, to drive a struct port from cocotb.
    Fields left out take their layout default; enum fields take enum members."""
    from amaranth.lib import data
    return data.Layout.cast(layout).const(fields).as_value().value


def struct_fields(layout, bits: int) -> dict:
    """The fields of a struct port's value read in cocotb, as integers by field name."""
    from amaranth.lib import data
    return {name: (bits >> field.offset) & ((1 << field.width) - 1)
            for name, field in data.Layout.cast(layout)}


_verilator_path = None


def verilator() -> Path:
    """The Verilator binary (>= 5.036): $VERILATOR, or whatever setup/verilator.sh finds or
    builds. Resolved once per process."""
    global _verilator_path
    if _verilator_path is None:
        try:
            out = subprocess.run([str(REPO / "setup" / "verilator.sh")], check=True,
                                 stdout=subprocess.PIPE, text=True).stdout.strip()
        except subprocess.CalledProcessError:
            pytest.exit("no usable Verilator >= 5.036 (see the message above)", returncode=3)
        _verilator_path = Path(out)
        # cocotb's runner looks `verilator` up on PATH.
        os.environ["PATH"] = f"{_verilator_path.parent}{os.pathsep}{os.environ['PATH']}"
    return _verilator_path


@functools.cache
def verilator_version(binary: Path) -> str:
    return subprocess.run([str(binary), "--version"], check=True, stdout=subprocess.PIPE,
                          text=True).stdout.strip()


def test_id(core: Core) -> str:
    """build/sim/<test-id>: the core name and its parameters, readable when short."""
    slug = "-".join(f"{k}{v}" for k, v in sorted(core.params.items()))
    slug = re.sub(r"[^A-Za-z0-9_.=-]+", "_", slug)
    if len(slug) > 60:
        slug = hashlib.sha256(slug.encode()).hexdigest()[:16]
    return f"{core.toplevel}-{slug}" if slug else core.toplevel


@contextmanager
def _locked(path: Path):
    """Serialise builds of one directory across pytest-xdist workers."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _split_sources(sources):
    """Extra files of a build: Verilog/SystemVerilog and Verilator control files go to the
    runner as sources, C/C++ files (DPI models) to Verilator's command line, which compiles
    them into the simulator."""
    hdl, cxx = [], []
    for path in map(Path, sources):
        path = path.resolve()
        if not path.is_file():
            raise FileNotFoundError(f"extra source {path} does not exist")
        if path.suffix in (".v", ".sv", ".vlt"):
            hdl.append(path)
        elif path.suffix in (".c", ".cc", ".cpp"):
            cxx.append(path)
        else:
            raise ValueError(f"extra source {path}: unknown kind (want .v .sv .vlt .c .cc .cpp)")
    return hdl, cxx


def _build(core: Core, waves: bool, sources=(), toplevel=None):
    """Elaborate and build `core` unless an identical build exists.

    sources:  extra files built with it (a test top, a DPI model: see _split_sources);
    toplevel: the simulated top module when it is not the core itself (a test top in
              `sources` that instantiates the core).

    Returns (runner, build_dir, root): root is build/sim/<test-id>.

    The cache key covers everything that changes the simulator binary: the Verilog text (so
    any change to the core's source or parameters), the extra sources' contents, the
    Verilator and cocotb versions and the build options. An unchanged core is neither
    re-elaborated into a new file nor rebuilt.
    """
    import cocotb
    from cocotb_tools.runner import get_runner

    binary = verilator()
    top = toplevel or core.toplevel
    tid = test_id(core) + (f"-{top}" if top != core.toplevel else "")
    root = BUILD_ROOT / tid
    build_dir = root / ("verilator-fst" if waves else "verilator")
    hdl, cxx = _split_sources(sources)
    include = sorted({f"-CFLAGS -I{path.parent}" for path in cxx})
    build_args = BUILD_ARGS + (WAVE_ARGS if waves else []) + \
        [arg for flag in include for arg in flag.split(" ", 1)] + [str(path) for path in cxx]

    with _locked(root / ".lock"):
        source = root / f"{core.toplevel}.v"
        text = core.verilog()
        if not source.exists() or source.read_text() != text:
            source.write_text(text)    # keep the mtime when nothing changed
        extra = [path.read_text() for path in hdl + cxx]
        extra += [h.read_text() for path in cxx for h in sorted(path.parent.glob("*.h"))]
        key = hashlib.sha256("\n".join([
            text, top, " ".join(build_args), verilator_version(binary),
            cocotb.__version__, *extra]).encode()).hexdigest()
        stamp = build_dir / "ssdlab-build-key"
        runner = get_runner("verilator")
        if not (stamp.exists() and stamp.read_text() == key
                and (build_dir / top).exists()):
            stamp.unlink(missing_ok=True)
            use_ccache()
            runner.build(sources=[source, *hdl], hdl_toplevel=top, build_dir=build_dir,
                         build_args=build_args, waves=waves, always=True,
                         timescale=("1ns", "1ps"), log_file=root / "build.log")
            drop_precompiled_headers(build_dir)
            stamp.write_text(key)
    return runner, build_dir, root


def _replay_command(seed) -> str:
    node = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]
    return f"make test T={shlex.quote(node)} SEED={seed}" if node else f"SEED={seed}"


def run(core: Core, test_file: str, testcase=None, extra_env=None, sources=(), toplevel=None):
    """Build `core` and run the cocotb tests in `test_file` (the calling pytest module).

    sources / toplevel: extra files and a test top that instantiates the core (see _build),
    e.g. a top with DPI die models around a flash back end.

    Fails the calling pytest test when any cocotb test fails, naming the seed and the command
    that replays it.
    """
    waves = os.environ.get("WAVES", "0") not in ("", "0")
    seed = int(os.environ["SEED"]) if os.environ.get("SEED") else random.randrange(1 << 31)
    try:
        runner, build_dir, root = _build(core, waves, sources, toplevel)
    except RuntimeError as e:
        top = toplevel or core.toplevel
        log = BUILD_ROOT / (test_id(core) + (f"-{top}" if top != core.toplevel else "")) \
            / "build.log"
        tail = "".join(log.read_text(errors="replace").splitlines(True)[-40:]) \
            if log.exists() else ""
        pytest.fail(f"{core.toplevel} {core.params}: build failed: {e}\n{tail}\nlog: {log}",
                    pytrace=False)
    test_path = Path(test_file).resolve()
    # cocotb's runner hands the simulator this process's sys.path as PYTHONPATH.
    if str(test_path.parent) not in sys.path:
        sys.path.insert(0, str(test_path.parent))
    # One run directory per pytest test: tests sharing a build may run at once under xdist.
    node = os.environ.get("PYTEST_CURRENT_TEST", "manual").rsplit(" ", 1)[0]
    run_dir = root / "run" / re.sub(r"[^A-Za-z0-9_.=-]+", "_", node.split("::")[-1])
    run_dir.mkdir(parents=True, exist_ok=True)
    env = {PARAMS_ENV: json.dumps(core.params), **(extra_env or {})}
    print(f"ssdlab: {core.toplevel} params={core.params} seed={seed} waves={waves}")
    try:
        results = runner.test(test_module=test_path.stem,
                              hdl_toplevel=toplevel or core.toplevel,
                              hdl_toplevel_lang="verilog", testcase=testcase, seed=seed,
                              waves=waves, extra_env=env, test_dir=run_dir,
                              build_dir=build_dir, log_file=run_dir / "sim.log")
        # cocotb's runner checks results only under pytest, and counts no test as no failure:
        # a test module that ran nothing (import error, a testcase name that matches nothing)
        # must not pass.
        from cocotb_tools.check_results import get_results
        try:
            n_tests, n_failed = get_results(Path(results))
        except RuntimeError as e:
            raise SystemExit(str(e)) from None
        if n_failed:
            raise SystemExit(f"{n_failed} of {n_tests} cocotb tests failed")
        if n_tests == 0:
            raise SystemExit("no cocotb test ran (import error, or testcase matched nothing)")
    except SystemExit as e:
        # cocotb's runner exits under pytest when a cocotb test fails or the simulator dies.
        log = run_dir / "sim.log"
        tail = "".join(log.read_text(errors="replace").splitlines(True)[-40:]) \
            if log.exists() else ""
        pytest.fail(f"{core.toplevel} {core.params}: cocotb tests failed (exit {e.code}).\n"
                    f"{tail}\n"
                    f"seed {seed}; replay: {_replay_command(seed)}\nlog: {log}",
                    pytrace=False)
    if waves:
        print(f"ssdlab: waves in {run_dir / 'dump.fst'}")
