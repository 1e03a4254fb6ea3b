# SPDX-License-Identifier: BSD-2-Clause
"""Build (when needed) and start the simulated drive: `ssdlab sim build | run` (`make sim`).

    ssdlab sim run [--persona default] [--channels N] [--blocks-per-plane N]
                   [--pages-per-block N] [--host-delay-ns N] [--socket PATH]

A build is keyed by its configuration: build/sim/drive-<hash>/ holds the SoC, firmware and
Verilator model of one configuration and is reused while the RTL, firmware and harness
sources are unchanged. `SimDrive` is the same for tests and benchmarks: a context manager
that starts the harness on a private socket and stops it at the end.
"""

import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

__all__ = ["drive_config", "build_drive", "SimDrive", "SIM_SCALE", "config_link"]

# The simulation scale of `make sim` and the tests: few enough pages per block that a drive
# can be written end to end in Verilator (soc/sim_config.py says why it is reported).
SIM_SCALE = dict(blocks_per_plane=16, pages_per_block=16)

# The model's sources; the firmware is not among them: it is rebuilt (make, incremental) and
# loaded into the ROM image at every start, without rebuilding the model.
_SOURCE_DIRS = ["spec", "rtl", "soc", "sim/bridge", "sim/nand/cpp", "sim/nand/fast_sources.py",
                "sim/harness", "sw/ssdlab/flows/sim_build.py",
                "sw/ssdlab/flows/sim_gateware.py", "sw/ssdlab/flows/sim_onfi_phy.py"]


def drive_config(persona=None, params=None, **scale):
    """The simulated drive's SocConfig: an NV-DDR2 persona gets NV-DDR2 channels (the sim PHY,
    DQS calibration, the persona's mode after bring-up) unless params has sdr_fallback=True
    (then its part's fastest SDR mode, reported in the notes)."""
    from soc.sim_config import soc_config
    params = dict(params or {})
    fallback = params.pop("sdr_fallback", False)
    if fallback not in (True, False, 0, 1):
        raise ValueError(f"sdr_fallback={fallback!r}: True or False")
    return soc_config(persona, params or None, nvddr2=not fallback, **{**SIM_SCALE, **scale})


def _digest(cfg):
    h = hashlib.sha256(json.dumps(cfg.as_dict(), sort_keys=True).encode())
    for d in _SOURCE_DIRS:
        top = ROOT / d
        for p in sorted(top.rglob("*")) if top.is_dir() else [top]:
            if p.is_file() and p.suffix in (".py", ".c", ".h", ".cpp", ".sv", ".v", ".S",
                                            ".ld") or p.name == "Makefile":
                h.update(p.relative_to(ROOT).as_posix().encode())
                h.update(p.read_bytes())
    return h.hexdigest()[:12]


# The training workload of a PGO build (`pgo=True`): fill, sequential writes, random reads
# (sw/ssdlab/flows/sim_profile.py default_workload), smaller than the profile's.
PGO_TRAINING = dict(fill_kib=1024, write_ios=12, read_ios=300)


def build_drive(cfg, out=None, trace=False, log=sys.stderr, profile=False, pgo=False):
    """Build the drive of `cfg` unless an identical model exists (the firmware is always
    brought up to date); returns its directory. profile: the profiling variant (`ssdlab sim
    profile`), in its own directory drive-<hash>-prof. pgo: the model compiled with gcc's
    profile-guided optimisation (an instrumented build, a training run of PGO_TRAINING, a
    rebuild with its profile; about a minute more), in drive-<hash>-pgo: the same RTL and
    Verilated code, so the same cycles, only faster."""
    from sw.ssdlab.flows.sim_build import build_firmware, build_model, pgo_rebuild, write_rom_init
    from sw.ssdlab.flows.sim_gateware import build as soc_build
    if pgo and (trace or profile):
        raise ValueError("build_drive: pgo is for the plain model (not with trace or profile)")
    digest = (_digest(cfg) + ("-trace" if trace else "") + ("-prof" if profile else "")
              + ("-pgo" if pgo else ""))
    out = Path(out) if out else ROOT / "build" / "sim" / f"drive-{digest}"
    out.parent.mkdir(parents=True, exist_ok=True)
    # one builder at a time per directory: parallel tests (pytest -n) that want the same
    # drive wait for the first one's build instead of building it twice over each other
    with open(out.parent / f"{out.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = out / "built.stamp"
        if stamp.exists() and stamp.read_text() == digest:
            write_rom_init(out, build_firmware(out, quiet=True))
            return out
        t0 = time.monotonic()
        print(f"ssdlab sim: building {cfg.persona} ({cfg.n_channels} ch x {cfg.n_ways} "
              f"ways) into {out}", file=log)
        soc_build(out, cfg)
        write_rom_init(out, build_firmware(out))
        build_model(out, trace=trace, profile=profile, pgo=pgo)
        if pgo:
            from sw.ssdlab.flows.sim_profile import profile as run_workload
            print(f"ssdlab sim: PGO training run ({PGO_TRAINING})", file=log)
            run_workload(out, out_dir=out / "pgo-training", use_perf=False, log=log,
                         **PGO_TRAINING)
            pgo_rebuild(out)
        stamp.write_text(digest)
        print(f"ssdlab sim: built in {time.monotonic() - t0:.0f} s", file=log)
        return out


def config_link(cfg, read_latency_ns=None):
    """The host link (spec.pcie_link PcieLink or SataLink) of a build's configuration (a
    SocConfig or its config.json dict); None for a configuration without link fields (an
    older build: unpaced). read_latency_ns replaces the configuration's."""
    from spec.pcie_link import PcieLink, SataLink
    c = cfg if isinstance(cfg, dict) else cfg.as_dict()
    lat = c.get("read_latency_ns", 400) if read_latency_ns is None else read_latency_ns
    if c.get("host_interface") == "sata":
        return SataLink(c["link_mb_s_cap"], c["mps"], c["mrrs"], lat)
    if c.get("pcie_gen"):
        return PcieLink(c["pcie_gen"], c["pcie_lanes"], c["mps"], c["mrrs"], lat)
    return None


def _link_args(cfg, link, read_latency_ns):
    from spec.pcie_link import harness_args
    link = link or config_link(cfg, read_latency_ns)
    if link is None:
        return ["--read-latency-ns", str(400 if read_latency_ns is None else read_latency_ns)]
    return harness_args(link)


class SimDrive:
    """The harness of a built drive, running on `socket` (default: a new one in the build
    directory). Use as a context manager; `.socket` is what sw/ssdlab.drive.Drive(sim=...)
    takes. boot_us: simulated time run before the host attaches (the firmware's boot).
    The harness paces its TLPs by the build's host link (config.json, `config_link`), or by
    `link` (a spec.pcie_link PcieLink or SataLink: the same build behind another link, as
    long as its front end carries it); read_latency_ns (None: the link's) replaces the
    link's read latency. `.link` is the link in use."""

    def __init__(self, build_dir, socket=None, host_delay_ns=200, read_latency_ns=None,
                 boot_us=0, log_path=None, extra_args=(), link=None):
        self.build_dir = Path(build_dir)
        self.socket = str(socket or self.build_dir / f"drive-{os.getpid()}.sock")
        self.log_path = Path(log_path or self.build_dir / f"drive-{os.getpid()}.log")
        cfg = json.loads((self.build_dir / "config.json").read_text())
        period_ps = int(round(1e12 / cfg["sys_clk_freq"]))
        if link is not None and read_latency_ns is not None:
            from dataclasses import replace
            link = replace(link, read_latency_ns=read_latency_ns)
        self.link = link or config_link(cfg, read_latency_ns)
        self.args = [str(self.build_dir / "obj" / "ssdlab_sim"), "--socket", self.socket,
                     "--period-ps", str(period_ps), "--host-delay-ns", str(host_delay_ns),
                     *_link_args(cfg, self.link, read_latency_ns), "--boot-us", str(boot_us),
                     *extra_args]
        self.proc = None

    def start(self, timeout=600):
        Path(self.socket).unlink(missing_ok=True)
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(self.args, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while not Path(self.socket).exists():
            if self.proc.poll() is not None:
                raise RuntimeError(f"ssdlab_sim exited ({self.proc.returncode}): "
                                   f"{self.log_path.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(f"ssdlab_sim did not open {self.socket} in {timeout} s")
            time.sleep(0.05)
        return self

    def output(self):
        """What the harness and the firmware's console printed so far."""
        self.log.flush()
        return self.log_path.read_text()

    def stop(self, timeout=60):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if self.proc:
            self.log.close()
        Path(self.socket).unlink(missing_ok=True)
        Path(self.socket + ".ram").unlink(missing_ok=True)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


def run_drive(persona="default", channels=None, blocks_per_plane=SIM_SCALE["blocks_per_plane"],
              pages_per_block=SIM_SCALE["pages_per_block"], host_delay_ns=200,
              socket=None, trace=False, pgo=False, sdr_fallback=False):
    """Build (when needed) and start the simulated drive in this process (`ssdlab sim run`):
    the harness replaces the Python process and serves `socket` until stopped."""
    socket = socket or str(ROOT / "build" / "sim" / "drive.sock")
    params = {"n_channels": channels} if channels else {}
    if sdr_fallback:
        params["sdr_fallback"] = True
    cfg = drive_config(persona, params, blocks_per_plane=blocks_per_plane,
                       pages_per_block=pages_per_block)   # PersonaError names the field
    out = build_drive(cfg, trace=trace, pgo=pgo)
    print(f"drive: {cfg.persona}, {cfg.n_channels} channels x {cfg.n_ways} ways, "
          f"{cfg.part}" + (f" and {cfg.part2['part']} on {len(cfg.part2_targets)} targets"
                           if cfg.part2 else "")
          + f", {cfg.pages_per_block} pages/block x {cfg.blocks_per_plane} "
          f"blocks/plane x {cfg.planes} planes; {cfg.scale_note}")
    for note in cfg.notes:
        print(f"  note: {note}")
    print(f"attach:  export SSDLAB_SIM_SOCKET={socket}\n"
          f"         .venv/bin/python -m sw.ssdlab drive identify --sim {socket}\n"
          f"stop:    Ctrl-C, or .venv/bin/python -m sw.ssdlab drive quit --sim {socket}")
    sys.stdout.flush()
    binary = out / "obj" / "ssdlab_sim"
    period_ps = int(round(1e12 / cfg.sys_clk_freq))
    link = config_link(cfg)
    print(f"link:    {link.describe()}; payload limits read "
          f"{link.payload_mb_s('to_host'):.1f} MB/s, write {link.payload_mb_s('from_host'):.1f}"
          f" MB/s (spec/pcie_link.py)")
    sys.stdout.flush()
    os.execv(str(binary), [str(binary), "--socket", socket, "--period-ps", str(period_ps),
                           "--host-delay-ns", str(host_delay_ns), *_link_args(cfg, link, None)])
