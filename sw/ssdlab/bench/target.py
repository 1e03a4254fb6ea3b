# SPDX-License-Identifier: BSD-2-Clause
"""Where a bench runs: the simulated drive (`SimTarget`) or a device / file (`DeviceTarget`).
Both run the same generated fio job files section by section and report fio's JSON; they
differ in how fio is started, how the drive is deallocated and how idle time passes:

- fio: `sw/fio/ssdlab-fio --sim SOCKET --direct=1` (Sim) or the host's `fio
  --ioengine=io_uring --filename=DEV` (Device);
- time: simulated (fio's clock is the drive's) or the host's;
- deallocate: NVMe Dataset Management of the whole namespace (Drive.trim), or fio `rw=trim`
  on a block device and hole punching on a regular file;
- idle: the drive simulated for that long with no command (Drive.idle), or a real sleep.
"""

import ctypes
import json
import os
import stat
import subprocess
import time
from pathlib import Path

from sw.ssdlab.bench.fiojobs import Geometry

__all__ = ["BenchError", "SimTarget", "DeviceTarget", "fio_binary", "parse_fio_json"]

ROOT = Path(__file__).resolve().parents[3]
SSDLAB_FIO = ROOT / "sw" / "fio" / "ssdlab-fio"


class BenchError(Exception):
    """A step that failed: fio's or the drive's message."""


def fio_binary():
    r = subprocess.run([str(ROOT / "setup" / "fio.sh")], capture_output=True,
                       text=True)
    if r.returncode != 0 or not r.stdout.strip():
        raise BenchError(f"setup/fio.sh found no fio:\n{r.stderr[-2000:]}")
    return r.stdout.strip().splitlines()[-1]


def parse_fio_json(text):
    """fio's JSON output (anything printed before it skipped)."""
    try:
        return json.loads(text[text.index("{"):])
    except ValueError as e:
        raise BenchError(f"no fio JSON in the output ({e}):\n{text[-2000:]}") from None


class _Target:
    kind = "?"
    time_domain = "?"

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def fio_version(self):
        r = subprocess.run([self.fio_path, "--version"], capture_output=True, text=True)
        return r.stdout.strip()

    def run_fio(self, jobfile, section, cwd, iolog=None):
        """Run one section of a job file; returns (fio JSON job, wall seconds, stderr).
        iolog: a file for the ioengine's per-command log in nanoseconds, where the target's
        engine writes one (the simulated drive's: sw/fio/README.md); it is started afresh."""
        args = [*self.fio_cmd(), "--output-format=json", f"--section={section}", str(jobfile)]
        env = self.env()
        if iolog is not None and self.kind == "sim":
            Path(iolog).unlink(missing_ok=True)
            env = {**(env or os.environ), "SSDLAB_IOLOG": str(iolog)}
        t0 = time.monotonic()
        r = subprocess.run(args, capture_output=True, text=True, cwd=cwd, env=env)
        wall = time.monotonic() - t0
        if r.returncode != 0:
            raise BenchError(f"fio failed ({r.returncode}) on [{section}] of {jobfile}:\n"
                             f"{r.stderr[-3000:]}\n{r.stdout[-1000:]}")
        jobs = parse_fio_json(r.stdout).get("jobs") or []
        if not jobs:
            raise BenchError(f"fio ran no job for [{section}] of {jobfile}")
        if jobs[0].get("error"):
            raise BenchError(f"fio job [{section}] error {jobs[0]['error']}:\n{r.stderr[-2000:]}")
        return jobs[0], wall, r.stderr

    def env(self):
        return None

    def mark(self):
        """A reading for sw.ssdlab.simspeed (None: the target has no simulation)."""
        return None


class SimTarget(_Target):
    """A built drive (sw.ssdlab.flows.sim.build_drive's directory), started on its own
    socket; fio through sw/fio/ssdlab-fio. All times are simulated."""
    kind = "sim"
    time_domain = "simulated"
    avg_logs = False            # fio's log averaging is not in simulated time: per-I/O logs

    def __init__(self, build_dir, log=None):
        self.build_dir = Path(build_dir)
        self.config = json.loads((self.build_dir / "config.json").read_text())
        self.sim = None
        self.fio_path = fio_binary()
        self.log = log

    def start(self):
        from sw.ssdlab.drive import Drive
        from sw.ssdlab.flows.sim import SimDrive
        self.sim = SimDrive(self.build_dir, boot_us=1000, extra_args=["--quiet-uart"]).start()
        # waits for the firmware's first boot; asks for every queue to learn how many there are
        with Drive(sim=self.sim.socket, queues=64, depth=2) as d:
            self.info = d.info()
        i = self.info
        mqes = (i["cap"] & 0xFFFF)                   # 0's based: entries - 1
        self.geometry = Geometry(capacity=i["ns_blocks"] * i["lba_bytes"],
                                 lba_bytes=i["lba_bytes"],
                                 max_transfer=i["max_transfer"] or 131072,
                                 max_qd=max(1, mqes), n_io_queues=i["n_io_queues"])
        return self

    def stop(self):
        if self.sim:
            self.sim.stop()
            self.sim = None

    def fio_cmd(self):
        return [str(SSDLAB_FIO), "--sim", self.sim.socket, "--direct=1"]

    def now_ns(self):
        from sw.ssdlab.drive import Transport
        with Transport(sim=self.sim.socket) as t:
            return int(t.stats().get("sim_ps", 0)) // 1000

    def mark(self):
        from sw.ssdlab import simspeed
        from sw.ssdlab.drive import Transport
        with Transport(sim=self.sim.socket) as t:
            return simspeed.mark(t.stats())

    def settle(self, trim=False, idle_ms=0):
        """Deallocate the whole namespace and/or leave the drive idle for idle_ms of simulated
        time, in one controller session; returns simulated ns it took."""
        from sw.ssdlab.drive import Drive, DriveError
        try:
            with Drive(sim=self.sim.socket) as d:
                t0 = d.time_ns()
                if trim:
                    d.trim(0, self.info["ns_blocks"])
                if idle_ms:
                    d.idle(int(idle_ms * 1e6))
                return d.time_ns() - t0
        except DriveError as e:
            raise BenchError(f"deallocate/idle on the simulated drive: {e}") from None

    def ftl_log(self):
        """The drive's FTL counters (vendor log page C0h), to count what a test wrote to
        the flash."""
        from sw.ssdlab.drive import Drive, DriveError
        try:
            with Drive(sim=self.sim.socket) as d:
                return d.ftl_log()
        except DriveError as e:
            raise BenchError(f"vendor log page C0h of the simulated drive: {e}") from None

    def describe(self):
        return {"kind": "sim", "build_dir": str(self.build_dir),
                "model": self.info["model"].strip(), "firmware": self.info["firmware"].strip(),
                "time": "simulated"}


class DeviceTarget(_Target):
    """A block device (/dev/nvme0n1) or a regular file, with the host's fio. ioengine:
    io_uring (default), libaio, psync...; direct: O_DIRECT (a file on tmpfs needs False).
    size: bytes to use (default: the device's size, or the file's)."""
    kind = "device"
    time_domain = "host"
    avg_logs = True

    def __init__(self, path, ioengine="io_uring", direct=True, size=None, log=None):
        self.path = str(path)
        self.ioengine, self.direct, self.size = ioengine, direct, size
        self.fio_path = fio_binary()
        self.log = log

    def _is_block(self):
        return stat.S_ISBLK(os.stat(self.path).st_mode)

    def start(self):
        p = Path(self.path)
        if not p.exists():
            if self.size is None:
                raise BenchError(f"{self.path} does not exist (give --device-size to create "
                                 "a file)")
            with open(p, "wb") as f:
                f.truncate(self.size)
        if self._is_block():
            with open(p, "rb") as f:
                cap = f.seek(0, os.SEEK_END)
        else:
            cap = p.stat().st_size
            if self.size and cap < self.size:
                with open(p, "r+b") as f:
                    f.truncate(self.size)
                cap = self.size
        if self.size:
            cap = min(cap, self.size)
        if cap < 1 << 20:
            raise BenchError(f"{self.path}: {cap} bytes is too small (at least 1 MiB)")
        self.geometry = Geometry(capacity=cap, lba_bytes=512, max_transfer=1 << 20,
                                 max_qd=4096)
        return self

    def stop(self):
        pass

    def fio_cmd(self):
        return [self.fio_path, f"--ioengine={self.ioengine}", f"--filename={self.path}",
                f"--direct={int(self.direct)}"]

    def now_ns(self):
        return time.monotonic_ns()

    def settle(self, trim=False, idle_ms=0):
        t0 = time.monotonic_ns()
        if trim:
            self.deallocate()
        if idle_ms:
            time.sleep(idle_ms / 1000)
        return time.monotonic_ns() - t0

    def deallocate(self):
        cap = self.geometry.capacity
        if self._is_block():
            r = subprocess.run([self.fio_path, "--name=deallocate", f"--filename={self.path}",
                                "--rw=trim", "--bs=1m", f"--size={cap}", "--ioengine=psync",
                                "--output-format=json"], capture_output=True, text=True)
            if r.returncode != 0:
                raise BenchError(f"fio trim of {self.path} failed:\n{r.stderr[-2000:]}")
            return
        # a regular file: punch the whole range out (what a discard does to a file)
        libc = ctypes.CDLL(None, use_errno=True)
        libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
        fd = os.open(self.path, os.O_RDWR)
        try:
            if libc.fallocate(fd, 0x01 | 0x02, 0, cap) != 0:   # KEEP_SIZE | PUNCH_HOLE
                err = ctypes.get_errno()
                raise BenchError(f"hole punching {self.path}: {os.strerror(err)}")
        finally:
            os.close(fd)

    def describe(self):
        return {"kind": "device", "path": self.path, "ioengine": self.ioengine,
                "direct": self.direct, "block_device": self._is_block(), "time": "host"}
