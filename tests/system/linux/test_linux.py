# SPDX-License-Identifier: BSD-2-Clause
"""A virtual machine's stock Linux on the simulated drive (sim/vm_bridge/README.md).

Smoke: the harness's SB_EV_HOST, the part of the VM bridge every build has: a wait with no
deadline ends when the host's next request arrives (without it the drive could not run while
the guest is quiet and still answer the guest's next access). Full: `ssdlab linux
--acceptance` end to end: QEMU's vfio-user-pci, the server, Debian's kernel and nvme driver,
nvme-cli, fio, ext4, a power cycle between two boots, every file's checksum.
"""

import re
import socket
import struct
import time

import pytest

PERSONA = "default"
PARAMS = {"n_channels": 2}      # test_drive's build

# struct sb_msg (sim/bridge/ssdlab_bridge.h): type, status, size, reserved, addr, data,
# time_ps, name[320].
SB_MSG = struct.Struct("<IIIIQQQ320s")
SB_HELLO, SB_WAIT, SB_INFO = 1, 4, 6
SB_ALIVE = 12
SB_VERSION = 7
SB_EV_MSI, SB_EV_HOST = 1, 4


def _send(s, type_, size=0, addr=0, data=0):
    s.sendall(SB_MSG.pack(type_, 0, size, 0, addr, data, 0, b""))


def _recv(s, limit_s=60):
    """The next reply, skipping keepalives (which a waiting harness sends every 2 s, so the
    socket's own timeout never fires): at most limit_s of wall time."""
    deadline = time.monotonic() + limit_s
    while True:
        assert time.monotonic() < deadline, f"no reply in {limit_s} s (only keepalives)"
        buf = b""
        while len(buf) < SB_MSG.size:
            chunk = s.recv(SB_MSG.size - len(buf))
            assert chunk, "the harness closed the connection"
            buf += chunk
        m = SB_MSG.unpack(buf)
        if m[0] != SB_ALIVE:
            return m


@pytest.fixture(scope="module")
def build():
    from sw.ssdlab.flows.sim import build_drive, drive_config
    return build_drive(drive_config(PERSONA, PARAMS))


@pytest.mark.smoke
def test_wait_ends_on_host_request(build):
    from sw.ssdlab.flows.sim import SimDrive
    with SimDrive(build) as drive:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(120)
        s.connect(drive.socket)
        _send(s, SB_HELLO, data=SB_VERSION)
        assert _recv(s)[1] == 0
        # no deadline, no interrupt expected: only the next request can end this wait
        _send(s, SB_WAIT, size=SB_EV_MSI | SB_EV_HOST, data=0)
        time.sleep(0.5)
        _send(s, SB_INFO)
        t0 = time.monotonic()
        wait = _recv(s)
        took = time.monotonic() - t0
        assert wait[0] == SB_WAIT and wait[1] == 0
        assert wait[2] == SB_EV_HOST, f"the wait ended with event {wait[2]}, not SB_EV_HOST"
        assert wait[6] > 0, "the drive did not run during the wait"
        info = _recv(s)
        assert info[0] == SB_INFO and info[1] == 0
        assert info[6] >= wait[6]
        assert took < 30, f"the request waited {took:.1f} s of wall time for the wait to end"
        # a wait with a deadline and no request ends at its deadline, as before
        _send(s, SB_WAIT, size=SB_EV_HOST, data=wait[6] + 2_000_000)
        r = _recv(s)
        assert r[0] == SB_WAIT and r[2] == 0 and r[6] >= wait[6] + 2_000_000
        s.close()


@pytest.mark.full
def test_linux_acceptance():
    """The issue's acceptance run, phase 1 and (after the drive's power cycle) phase 2."""
    from sw.ssdlab.flows.linux import run_acceptance
    first, second = run_acceptance(PERSONA, channels=PARAMS["n_channels"], timeout_s=3600)
    fails = [x for r in (first, second) if r for x in r.console.splitlines()
             if x.startswith("FAIL ")]
    assert not fails, "\n".join(fails)
    assert first.exit_status == 0, first.console[-3000:]
    assert second is not None and second.exit_status == 0, (second or first).console[-3000:]
    for check in ("id-ctrl (vendor 1d1d)", "smart-log", "error-log", "Command Sequence Error",
                  "get-feature 6 reads 0", "get-feature 8 reads 2565", "nvme format",
                  "nvme dsm --ad", "nvme flush", "fio io_uring", "interrupts on 2 I/O queues",
                  "mkfs.ext4", "files written", "dmesg"):
        assert re.search(rf"^PASS .*{re.escape(check)}", first.console, re.M), check
    for check in ("files' checksums after power cycle", "e2fsck", "dmesg"):
        assert re.search(rf"^PASS .*{re.escape(check)}", second.console, re.M), check
    for r in (first, second):
        assert " us simulated" in r.server_log and "(0 not delivered)" in r.server_log, \
            r.server_log[-2000:]
