# SPDX-License-Identifier: BSD-2-Clause
"""Raw NVMe access for the drive tests, through libssdlab (the C driver) by ctypes.

`sw/ssdlab/drive.py` binds the convenient calls; the tests also need the raw ones: any admin
or I/O command with hand-made PRPs (sl_admin / sl_io with no data: the caller's PRP1/PRP2
stay), DMA memory (sl_dma_alloc), asynchronous submission (sl_submit / sl_wait, for
Asynchronous Event Requests) and BAR0 writes through the transport's ops table (doorbells of
queues the test created in its own memory).
"""

import ctypes
import struct

from sw.ssdlab.drive import load_library

# NVMe status field values (SCT 10:8, SC 7:0; DNR 14 masked off by `sc_of`).
INVALID_OPCODE = 0x001
INVALID_FIELD = 0x002
INVALID_NS = 0x00B
CMD_SEQ_ERROR = 0x00C
PRP_OFFSET = 0x013
LBA_RANGE = 0x080
CQ_INVALID = 0x100
INVALID_QID = 0x101
INVALID_QSIZE = 0x102
AER_LIMIT = 0x105
INVALID_LOG_PAGE = 0x109
INVALID_FORMAT = 0x10A
INVALID_Q_DELETE = 0x10C
NOT_SAVEABLE = 0x10D

DNR = 1 << 14


def sc_of(status):
    """SCT and SC of a status field (CRD, More and DNR dropped): 0x101 = SCT 1 SC 01h."""
    return status & 0x7FF


class Sqe(ctypes.Structure):
    _fields_ = [("opc", ctypes.c_uint8), ("flags", ctypes.c_uint8), ("cid", ctypes.c_uint16),
                ("nsid", ctypes.c_uint32), ("cdw2", ctypes.c_uint32), ("cdw3", ctypes.c_uint32),
                ("mptr", ctypes.c_uint64), ("prp1", ctypes.c_uint64), ("prp2", ctypes.c_uint64),
                ("cdw10", ctypes.c_uint32), ("cdw11", ctypes.c_uint32),
                ("cdw12", ctypes.c_uint32), ("cdw13", ctypes.c_uint32),
                ("cdw14", ctypes.c_uint32), ("cdw15", ctypes.c_uint32)]


assert ctypes.sizeof(Sqe) == 64


class Dma(ctypes.Structure):
    _fields_ = [("vaddr", ctypes.c_void_p), ("bus", ctypes.c_uint64), ("len", ctypes.c_size_t)]


class Cpl(ctypes.Structure):
    _fields_ = [("user", ctypes.c_void_p), ("submit_ns", ctypes.c_uint64),
                ("complete_ns", ctypes.c_uint64), ("dw0", ctypes.c_uint32),
                ("status", ctypes.c_uint16), ("cid", ctypes.c_uint16), ("qid", ctypes.c_uint16)]


CB = ctypes.CFUNCTYPE(None, ctypes.POINTER(Cpl), ctypes.c_void_p)

_vp, _u32, _u64, _i = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
_W32 = ctypes.CFUNCTYPE(_i, _vp, _u32, _u32)
_R32 = ctypes.CFUNCTYPE(_i, _vp, _u32, ctypes.POINTER(_u32))


class TransportOps(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("read32", _R32), ("read64", _vp),
                ("write32", _W32), ("write64", _vp), ("dma_alloc", _vp), ("dma_free", _vp),
                ("wait", _vp), ("time_ns", _vp), ("reset", _vp), ("power_cut", _vp),
                ("stats", _vp), ("close", _vp)]


class TransportHead(ctypes.Structure):
    _fields_ = [("ops", ctypes.POINTER(TransportOps)), ("n_vectors", ctypes.c_uint),
                ("events", ctypes.c_uint)]


def _lib():
    lib = load_library()
    if not hasattr(lib, "_raw_sigs"):
        sq = ctypes.POINTER(Sqe)
        sigs = {
            "sl_admin": (_i, [_vp, sq, _vp, ctypes.c_size_t, ctypes.POINTER(_u32)]),
            "sl_io": (_i, [_vp, ctypes.c_uint, sq, _vp, ctypes.c_size_t, ctypes.POINTER(_u32)]),
            "sl_dma_alloc": (_i, [_vp, ctypes.c_size_t, ctypes.POINTER(Dma)]),
            "sl_dma_free": (None, [_vp, ctypes.POINTER(Dma)]),
            "sl_submit": (_i, [_vp, ctypes.c_uint, sq, ctypes.POINTER(Dma), ctypes.c_size_t,
                               ctypes.c_size_t, CB, _vp]),
            "sl_wait": (_i, [_vp, ctypes.c_uint, ctypes.c_uint, _u64]),
            "sl_reap": (_i, [_vp, ctypes.c_uint, ctypes.c_uint]),
            "sl_inflight": (ctypes.c_uint, [_vp, ctypes.c_uint]),
            "sl_ctrl_transport": (_vp, [_vp]),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        lib._raw_sigs = True
    return lib


def sqe(opc, nsid=0, prp1=0, prp2=0, **cdw):
    """An SQE; cdw: cdw10=..., cdw15=..."""
    s = Sqe(opc=opc, nsid=nsid, prp1=prp1, prp2=prp2)
    for k, v in cdw.items():
        setattr(s, k, v & 0xFFFFFFFF)
    return s


class Raw:
    """Raw commands on an open sw.ssdlab.drive.Drive `d`."""

    def __init__(self, d):
        self.d = d
        self.lib = _lib()
        self.c = d._c
        self._dma = []
        self._cbs = []
        self.completions = []          # (cid, status, dw0) of asynchronous commands

    # --- synchronous --------------------------------------------------------------------
    def admin(self, cmd, data=None, length=0):
        """(status, dw0, bytes read). data: bytes to send (write direction opcodes);
        length: bytes to receive. No data: PRP1/PRP2 stay as cmd has them."""
        return self._exec(None, cmd, data, length)

    def io(self, cmd, data=None, length=0, qid=1):
        return self._exec(qid, cmd, data, length)

    def _exec(self, qid, cmd, data, length):
        n = len(data) if data else length
        buf = ctypes.create_string_buffer(data if data else b"", max(n, 1)) if n else None
        dw0 = _u32()
        if qid is None:
            rc = self.lib.sl_admin(self.c, ctypes.byref(cmd), buf, n, ctypes.byref(dw0))
        else:
            rc = self.lib.sl_io(self.c, qid, ctypes.byref(cmd), buf, n, ctypes.byref(dw0))
        if rc < 0:
            raise OSError(-rc, self.lib.sl_errmsg(self.c).decode())
        return rc, dw0.value, (buf.raw[:n] if buf else b"")

    # --- DMA memory ---------------------------------------------------------------------
    def dma(self, nbytes):
        m = Dma()
        rc = self.lib.sl_dma_alloc(self.c, nbytes, ctypes.byref(m))
        if rc < 0:
            raise OSError(-rc, self.lib.sl_errmsg(self.c).decode())
        self._dma.append(m)
        return m

    @staticmethod
    def poke(m, off, data):
        ctypes.memmove(m.vaddr + off, data, len(data))

    @staticmethod
    def peek(m, off, n):
        return ctypes.string_at(m.vaddr + off, n)

    def free(self):
        for m in self._dma:
            self.lib.sl_dma_free(self.c, ctypes.byref(m))
        self._dma = []

    # --- asynchronous (admin queue: AER) ------------------------------------------------
    def submit(self, cmd, qid=0):
        """Submit without waiting; completions land in self.completions."""
        def cb(cpl, _user):
            c = cpl.contents
            self.completions.append((c.cid, c.status, c.dw0))
        fn = CB(cb)
        self._cbs.append(fn)
        rc = self.lib.sl_submit(self.c, qid, ctypes.byref(cmd), None, 0, 0, fn, None)
        if rc < 0:
            raise OSError(-rc, self.lib.sl_errmsg(self.c).decode())
        return cmd.cid

    def wait(self, qid, n, timeout_ns):
        """Reap until n more completions or timeout; returns how many were reaped."""
        rc = self.lib.sl_wait(self.c, qid, n, timeout_ns)
        return 0 if rc == -110 else rc

    def reap(self, qid=0):
        return self.lib.sl_reap(self.c, qid, 0)

    def inflight(self, qid=0):
        return self.lib.sl_inflight(self.c, qid)

    # --- BAR0 -----------------------------------------------------------------------------
    def _transport(self):
        t = self.lib.sl_ctrl_transport(self.c)
        return t, ctypes.cast(t, ctypes.POINTER(TransportHead)).contents.ops.contents

    def bar_write32(self, off, val):
        t, ops = self._transport()
        rc = ops.write32(t, off, val)
        if rc < 0:
            raise OSError(-rc, "BAR0 write failed")

    def bar_read32(self, off):
        t, ops = self._transport()
        v = _u32()
        rc = ops.read32(t, off, ctypes.byref(v))
        if rc < 0:
            raise OSError(-rc, "BAR0 read failed")
        return v.value

    def doorbell(self, qid, cq, value):
        dstrd = (self.d.info()["cap"] >> 32) & 0xF
        self.bar_write32(0x1000 + (2 * qid + int(cq)) * (4 << dstrd), value)


def cqe_unpack(raw):
    """(dw0, sq_head, sqid, cid, phase, status) of a 16-byte CQE."""
    dw0, _dw1, sq_head, sqid, cid, st = struct.unpack("<IIHHHH", raw)
    return dw0, sq_head, sqid, cid, st & 1, st >> 1
