# SPDX-License-Identifier: BSD-2-Clause
"""The vfio-user server (sim/vm_bridge/vfio_user_server.c) alone, against a small vfio-user
client in this file instead of QEMU (the full tier's tests/system/linux runs QEMU and Linux).

The client speaks the protocol as QEMU does (docs/interop/vfio-user.rst in QEMU's source):
version negotiation, device and interrupt info, config space and BAR0 through region reads
and writes, the harness's host RAM file given as the DMA region (its fd over SCM_RIGHTS), an
eventfd per MSI-X vector. On that it brings the NVMe controller up and runs Identify
Controller: BAR reads and writes reach the RTL, the drive's DMA lands in the mapped file, its
MSI-X message arrives on the eventfd. Then bad input: a drive DMA into memory the client did
not map (refused by the harness's DMA windows, counted), an access past BAR0, an unknown
command, a short message (each refused with an error reply and counted); the drive keeps
serving.
"""

import json
import mmap
import os
import select
import socket
import struct
import subprocess
import time

import pytest

PERSONA = "default"
PARAMS = {"n_channels": 2}      # test_drive's build

# vfio-user commands and flags
VERSION, DMA_MAP, GET_INFO, GET_REGION_INFO, GET_IRQ_INFO, SET_IRQS = 1, 2, 4, 5, 7, 8
REGION_READ, REGION_WRITE = 9, 10
F_REPLY, F_ERROR = 1, 1 << 5
BAR0, CONFIG = 0, 7
IRQ_INTX, IRQ_MSIX, IRQ_ERR, IRQ_REQ = 0, 2, 3, 4
SET_DATA_EVENTFD, SET_ACTION_TRIGGER = 1 << 2, 1 << 5
HDR = struct.Struct("<HHIII")   # msg id, command, size, flags, error


class Client:
    """A vfio-user client: one request, one reply."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(120)
        self.sock.connect(path)
        self.msg_id = 0
        caps = json.dumps({"capabilities": {"max_msg_fds": 8}}).encode() + b"\0"
        self.version = self.request(VERSION, struct.pack("<HH", 0, 1) + caps)

    def send(self, cmd, payload=b"", fds=(), size=None):
        self.msg_id += 1
        data = HDR.pack(self.msg_id, cmd, size or HDR.size + len(payload), 0, 0) + payload
        anc = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack(f"{len(fds)}i", *fds))] \
            if fds else []
        self.sock.sendmsg([data], anc)

    def reply(self):
        head = self._recv(HDR.size)
        msg_id, cmd, size, flags, err = HDR.unpack(head)
        assert flags & 0xF == F_REPLY and msg_id == self.msg_id, (msg_id, flags)
        return err, self._recv(size - HDR.size)

    def request(self, cmd, payload=b"", fds=(), expect=0):
        self.send(cmd, payload, fds)
        err, body = self.reply()
        assert err == expect, f"command {cmd}: error {err} ({os.strerror(err)}), not {expect}"
        return body

    def _recv(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.sock.recv(n - len(buf))
            assert chunk, "the server closed the connection"
            buf += chunk
        return buf

    def read(self, region, off, n, expect=0):
        body = self.request(REGION_READ, struct.pack("<QII", off, region, n), expect=expect)
        return body[16:] if not expect else None

    def write(self, region, off, data, expect=0):
        self.request(REGION_WRITE, struct.pack("<QII", off, region, len(data)) + data,
                     expect=expect)

    def r32(self, off):
        return struct.unpack("<I", self.read(BAR0, off, 4))[0]

    def w32(self, off, v):
        self.write(BAR0, off, struct.pack("<I", v))

    def w64(self, off, v):
        self.write(BAR0, off, struct.pack("<Q", v))

    def irq_count(self, index):
        body = self.request(GET_IRQ_INFO, struct.pack("<IIII", 16, 0, index, 0))
        return struct.unpack("<IIII", body)[3]


@pytest.fixture(scope="module")
def server_binary():
    """The server, built against the project's libvfio-user (from QEMU's Debian source)."""
    from sw.ssdlab.flows.linux import build_server
    return build_server()


@pytest.fixture(scope="module")
def build():
    from sw.ssdlab.flows.sim import build_drive, drive_config
    return build_drive(drive_config(PERSONA, PARAMS))


@pytest.fixture
def served(build, server_binary, tmp_path):
    """The harness, the server on it, a connected client and the mapped host RAM."""
    from sw.ssdlab.flows.sim import SimDrive
    with SimDrive(build, socket=tmp_path / "drive.sock") as drive:
        vfu_path = tmp_path / "vfu.sock"
        log = open(tmp_path / "server.log", "w")
        server = subprocess.Popen([str(server_binary), "--sim", drive.socket, "--socket",
                                   str(vfu_path), "--once"], stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + 60
            while not vfu_path.exists():
                assert server.poll() is None and time.monotonic() < deadline, \
                    (tmp_path / "server.log").read_text()
                time.sleep(0.05)
            client = Client(str(vfu_path))
            ram_fd = os.open(drive.socket + ".ram", os.O_RDWR)
            size = os.fstat(ram_fd).st_size
            ram = mmap.mmap(ram_fd, size)
            yield client, ram, ram_fd, server, tmp_path / "server.log"
            client.sock.close()
            server.wait(60)
            ram.close()
            os.close(ram_fd)
        finally:
            if server.poll() is None:
                server.kill()
                server.wait()
            log.close()


# In the host RAM file = guest memory: the client maps only [0, MAPPED) for the drive.
ASQ, ACQ, IDBUF, MAPPED, UNMAPPED = 0x100000, 0x101000, 0x102000, 0x200000, 0x300000


def _wait_irq(efd, limit_s=120):
    r, _, _ = select.select([efd], [], [], limit_s)
    assert r, f"no MSI-X interrupt on the eventfd in {limit_s} s"
    return os.eventfd_read(efd)


@pytest.mark.smoke
def test_identify_through_vfio_user(served):
    client, ram, ram_fd, server, log = served
    # config space: the drive's IDs and class, its MSI-X capability (from the harness)
    cfg = client.read(CONFIG, 0, 64)
    vid, did = struct.unpack_from("<HH", cfg, 0)
    assert (vid, did) == (0x1D1D, 0x5D1A) and cfg[9:12] == bytes([0x02, 0x08, 0x01])
    cap, found = cfg[0x34], None
    caps = client.read(CONFIG, 0, 256)
    while cap:
        if caps[cap] == 0x11:
            found = cap
        cap = caps[cap + 1]
    assert found, "no MSI-X capability"
    vectors = (struct.unpack_from("<H", caps, found + 2)[0] & 0x7FF) + 1
    assert client.irq_count(IRQ_MSIX) == vectors >= 2
    # ERR, REQ and INTx off: libvfio-user would keep their eventfds in vector 0's slot
    # (the second boot of the acceptance run stopped the VM before this)
    assert [client.irq_count(i) for i in (IRQ_ERR, IRQ_REQ, IRQ_INTX)] == [0, 0, 0]

    # DMA: the host RAM file, file offset = bus address, its first MAPPED bytes only
    client.request(DMA_MAP, struct.pack("<IIQQQ", 32, 3, 0, 0, MAPPED), fds=[ram_fd])
    efd = os.eventfd(0, os.EFD_NONBLOCK)
    client.request(SET_IRQS, struct.pack("<IIIII", 20, SET_DATA_EVENTFD | SET_ACTION_TRIGGER,
                                         IRQ_MSIX, 0, 1), fds=[efd])
    ctrl = struct.unpack_from("<H", caps, found + 2)[0]
    client.write(CONFIG, found + 2, struct.pack("<H", ctrl | 0x8000))     # MSI-X Enable

    # the controller up: admin queues of 2 entries, CC.EN, CSTS.RDY
    assert client.r32(0x14) & 1 == 0
    client.w32(0x24, (1 << 16) | 1)                 # AQA: 2 entries each
    client.w64(0x28, ASQ)
    client.w64(0x30, ACQ)
    ram[ACQ:ACQ + 32] = bytes(32)
    client.w32(0x14, (4 << 20) | (6 << 16) | 1)     # IOCQES 16 B, IOSQES 64 B, EN
    deadline = time.monotonic() + 300
    while client.r32(0x1C) & 1 == 0:
        assert time.monotonic() < deadline, "CSTS.RDY never set"
        time.sleep(0.05)
    # Identify Controller, first into memory the client did not map: the drive's write is
    # refused (the harness drops it, as an IOMMU would) and counted; then into IDBUF
    for slot, (cid, buf) in enumerate([(0x1233, UNMAPPED), (0x1234, IDBUF)]):
        sqe = struct.pack("<BBHIQQQQIIIIII", 0x06, 0, cid, 0, 0, 0, buf, 0, 1, 0, 0, 0, 0, 0)
        ram[ASQ + 64 * slot:ASQ + 64 * slot + 64] = sqe
        ram[buf:buf + 4096] = bytes(4096)
        client.w32(0x1000, (slot + 1) % 2)          # SQ 0 tail doorbell
        assert _wait_irq(efd) >= 1
        dw2, dw3 = struct.unpack_from("<II", ram, ACQ + 16 * slot + 8)
        assert dw3 & 0xFFFF == cid and (dw3 >> 16) & 1 == 1, f"no completion of {cid:#x}"
        client.w32(0x1004, (slot + 1) % 2)          # CQ 0 head doorbell
    assert ram[UNMAPPED:UNMAPPED + 4096] == bytes(4096), "the drive wrote unmapped memory"
    assert dw3 >> 17 == 0, f"Identify failed: status {dw3 >> 17:#x}"
    assert struct.unpack_from("<H", ram, IDBUF)[0] == 0x1D1D
    assert ram[IDBUF + 768:IDBUF + 795] == b"nqn.2014-08.org.nvmexpress:"
    os.close(efd)

    # bad input: refused with an error reply, counted; the drive keeps serving
    client.read(BAR0, 0x4000, 4, expect=22)                 # past BAR0: EINVAL
    client.read(BAR0, 0x3FFE, 4, expect=22)                 # straddling its end
    client.send(99)                                         # no such command
    err, _ = client.reply()
    assert err != 0
    client.send(REGION_READ, b"\0" * 4)                     # shorter than its header
    err, _ = client.reply()
    assert err != 0
    assert client.r32(0x08) == 0x10400, "the drive stopped serving after bad input"
    client.sock.close()
    server.wait(60)
    text = log.read_text()
    assert server.returncode == 0, text
    refused = int(text.split(" client requests refused")[0].rsplit(" ", 1)[1])
    assert refused >= 4, text
    assert "(0 not delivered)" in text, text
    refused_dma = int(text.split(" dma_refused=")[1].split()[0])
    assert refused_dma >= 1, text
