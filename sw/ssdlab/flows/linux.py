# SPDX-License-Identifier: BSD-2-Clause
"""A virtual machine's stock Linux on the simulated drive: `ssdlab linux` (`make linux`).

    ssdlab linux [--persona default] [--script FILE | --acceptance] [--guest-ram-mib 512]

Four processes (sim/vm_bridge/README.md):

    qemu-system-x86_64 (Debian's kernel, the project's initramfs)
        -device vfio-user-pci ──vfio-user──► ssdlab_vfio_user ──bridge──► ssdlab_sim
        guest RAM = the harness's host RAM file (memory-backend-file, share=on)

The tools come from the project's set-up, cached per user: QEMU >= 10.1 with the vfio-user
client (setup/qemu.sh), libvfio-user (setup/libvfio_user.sh), the guest image
(setup/linux_guest.sh: Debian's linux-image, busybox, nvme-cli, fio, e2fsprogs), qboot as its
firmware (setup/qboot.sh: SeaBIOS's own NVMe driver would touch the drive first). A script
given with --script runs in the guest (through QEMU's fw_cfg) and its exit status is this
command's; without one the guest gives a shell on this terminal.
"""

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

__all__ = ["GuestRun", "LinuxSession", "run_linux", "run_acceptance", "tools", "build_server",
           "ACCEPTANCE_SCRIPT"]

ACCEPTANCE_SCRIPT = ROOT / "sw" / "linux" / "acceptance.sh"

# The guest's kernel command line. The nvme driver's timeouts are wall time in the guest, and
# the drive runs slower than real time (a simulated millisecond takes a wall second or more
# on a busy machine): the kernel's own module parameters give it room (no patch).
# ssdlab.wait: how long the guest's init waits for the drive's namespace (sw/linux/init).
KERNEL_ARGS = ("console=ttyS0 panic=-1 loglevel=6 nvme_core.io_timeout=600 "
               "nvme_core.admin_timeout=600 nvme_core.shutdown_timeout=600 ssdlab.wait=900")

SCRIPT_EXIT = re.compile(r"ssdlab-guest: script exit (\d+)")


def _setup(script, *args):
    """Run one of the set-up scripts; its stdout (a path)."""
    r = subprocess.run([str(ROOT / "setup" / script), *args], stdout=subprocess.PIPE,
                       text=True)
    if r.returncode != 0:
        raise RuntimeError(f"setup/{script} failed (exit {r.returncode}); its messages are "
                           "above")
    return r.stdout.strip()


@dataclass
class Tools:
    qemu: str
    server: str
    guest: Path
    bios: str       # qboot (setup/qboot.sh says why not SeaBIOS)


def build_server(log=sys.stderr):
    """The vfio-user server (sim/vm_bridge), built against the project's libvfio-user
    (setup/libvfio_user.sh); its path."""
    vfu = _setup("libvfio_user.sh")
    out = ROOT / "build" / "vm_bridge"
    r = subprocess.run(["make", "-s", "-C", str(ROOT / "sim" / "vm_bridge"),
                        f"LIBVFIO_USER={vfu}", f"BUILD={out}"], stdout=log, stderr=log)
    if r.returncode != 0:
        raise RuntimeError("building sim/vm_bridge (the vfio-user server) failed")
    return out / "ssdlab_vfio_user"


def tools(log=sys.stderr):
    """Find or build QEMU, the vfio-user server and the guest image."""
    qemu = _setup("qemu.sh")
    server = build_server(log)
    guest = Path(_setup("linux_guest.sh"))
    return Tools(qemu, str(server), guest, _setup("qboot.sh"))


def qemu_args(t, ram_path, ram_mib, vfu_socket, script=None, interactive=False):
    """QEMU's command line: q35, guest RAM = the harness's RAM file, the drive on
    vfio-user-pci, the serial console on stdio, nothing else."""
    # TCG unless asked: a /dev/kvm that exists is not one that works (a nested or
    # paravirtual one may hang the guest: seen on this project's 2-core machines)
    accel = ["-accel", os.environ.get("SSDLAB_QEMU_ACCEL", "tcg")]
    args = [t.qemu, "-machine", "q35,memory-backend=ram", *accel, "-cpu", "max", "-smp", "2",
            "-bios", t.bios,
            "-m", f"{ram_mib}M",
            "-object", f"memory-backend-file,id=ram,size={ram_mib}M,mem-path={ram_path},"
                       "share=on",
            "-nodefaults", "-vga", "none", "-display", "none", "-no-reboot",
            "-serial", "mon:stdio" if interactive else "stdio",
            "-kernel", str(t.guest / "vmlinuz"), "-initrd", str(t.guest / "initramfs.cpio.gz"),
            "-append", KERNEL_ARGS,
            "-device", '{"driver":"vfio-user-pci","socket":{"type":"unix","path":"%s"}}'
                       % vfu_socket]
    if script:
        args += ["-fw_cfg", f"name=opt/ssdlab/script,file={script}"]
    return args


@dataclass
class GuestRun:
    exit_status: int | None     # the guest script's, None when it did not report one
    console: str                # everything the guest printed
    server_log: str             # the vfio-user server's messages, with the drive's figures
    wall_s: float


class LinuxSession:
    """The simulated drive with a virtual machine around it: build what is needed, start the
    harness (guest RAM = its host RAM file); `boot()` runs the guest once (a vfio-user server
    and QEMU), `power_cycle()` power-cycles the drive between boots. A context manager."""

    def __init__(self, persona="default", ram_mib=512, channels=None, log=sys.stderr):
        from sw.ssdlab.flows.sim import SimDrive, build_drive, drive_config
        self.log = log
        self.tools = tools(log)
        self.cfg = drive_config(persona, {"n_channels": channels} if channels else None)
        out = build_drive(self.cfg, log=log)
        self.run_dir = out / f"linux-{os.getpid()}"
        self.run_dir.mkdir(exist_ok=True)
        self.ram_mib = ram_mib
        self.drive = SimDrive(out, socket=self.run_dir / "drive.sock",
                              log_path=self.run_dir / "harness.log",
                              extra_args=["--ram-mib", str(ram_mib)])
        self.boots = 0

    def __enter__(self):
        version = subprocess.run([self.tools.qemu, "--version"], stdout=subprocess.PIPE,
                                 text=True).stdout.splitlines()[0]
        print(f"linux: {version}; guest {self.tools.guest.name}; drive {self.cfg.persona}, "
              f"{self.cfg.n_channels} channels x {self.cfg.n_ways} ways", file=self.log)
        self.drive.start()
        return self

    def __exit__(self, *exc):
        self.drive.stop()

    def boot(self, script=None, files=None, timeout_s=3600, echo=True):
        """One boot of the guest: `script` (a path) runs in it, `files` ({name: text}) are
        fw_cfg files opt/ssdlab/<name>; None: an interactive shell. Returns a GuestRun."""
        self.boots += 1
        tag = f"boot{self.boots}"
        vfu_socket = self.run_dir / f"{tag}.vfio-user.sock"
        vfu_socket.unlink(missing_ok=True)
        extra = []
        for name, text in (files or {}).items():
            path = self.run_dir / f"{tag}.{name}"
            path.write_text(text)
            extra += ["-fw_cfg", f"name=opt/ssdlab/{name},file={path}"]
        t0 = time.monotonic()
        log_path = self.run_dir / f"{tag}.server.log"
        with open(log_path, "w") as server_log:
            server = subprocess.Popen([self.tools.server, "--sim", self.drive.socket,
                                       "--socket", str(vfu_socket), "--once"],
                                      stdout=server_log, stderr=subprocess.STDOUT)
            try:
                deadline = time.monotonic() + 60
                while not vfu_socket.exists():
                    if server.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError("the vfio-user server did not start: "
                                           + log_path.read_text()[-2000:])
                    time.sleep(0.05)
                args = qemu_args(self.tools, self.drive.socket + ".ram", self.ram_mib,
                                 vfu_socket, script, interactive=not script) + extra
                print(f"linux: {' '.join(args)}", file=self.log)
                console = _run_guest(args, self.run_dir / f"{tag}.console.log",
                                     interactive=not script, timeout_s=timeout_s, echo=echo)
            finally:
                try:
                    server.wait(60)
                except subprocess.TimeoutExpired:
                    server.terminate()
                    server.wait()
        m = SCRIPT_EXIT.search(console)
        return GuestRun(int(m.group(1)) if m else None, console, log_path.read_text(),
                        time.monotonic() - t0)

    def power_cycle(self, cut=False):
        """Between boots: the drive's power cycle (SB_RESET), or a power cut (the NAND loses
        power at this instant too)."""
        from sw.ssdlab.drive import Transport
        t = Transport(sim=self.drive.socket)
        try:
            return t.power_cut() if cut else t.power_cycle()
        finally:
            t.close()


def run_linux(persona="default", script=None, ram_mib=512, channels=None, timeout_s=3600,
              log=sys.stderr):
    """`ssdlab linux`: one boot, `script` run in the guest (None: a shell)."""
    with LinuxSession(persona, ram_mib, channels, log) as s:
        return s.boot(script, timeout_s=timeout_s)


MANIFEST = re.compile(r"^ssdlab-manifest: (\S+  \S+)\s*$", re.M)


def run_acceptance(persona="default", ram_mib=512, channels=None, cut=False, timeout_s=3600,
                   log=sys.stderr):
    """`ssdlab linux --acceptance`: sw/linux/acceptance.sh phase 1, the drive power-cycled
    (or its power cut), phase 2. Returns (phase 1 GuestRun, phase 2 GuestRun or None)."""
    with LinuxSession(persona, ram_mib, channels, log) as s:
        first = s.boot(ACCEPTANCE_SCRIPT, {"phase": "1"}, timeout_s)
        files = MANIFEST.findall(first.console)
        if first.exit_status is None or not files:
            return first, None
        s.power_cycle(cut)
        second = s.boot(ACCEPTANCE_SCRIPT, {"phase": "2", "manifest": "\n".join(files) + "\n"},
                        timeout_s)
        return first, second


def _run_guest(args, console_path, interactive, timeout_s, echo):
    """QEMU in the foreground; the console goes to console_path (and stdout when echo)."""
    if interactive:
        subprocess.run(args)
        return ""
    lines = []
    with open(console_path, "w") as f:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace")
        timer = threading.Timer(timeout_s, proc.kill)
        timer.start()
        try:
            for line in proc.stdout:
                f.write(line)
                f.flush()
                lines.append(line)
                if echo:
                    sys.stdout.write(line)
                    sys.stdout.flush()
            proc.wait()
        finally:
            timer.cancel()
    if proc.returncode not in (0, None):
        lines.append(f"ssdlab linux: qemu exited with status {proc.returncode}\n")
    return "".join(lines)
