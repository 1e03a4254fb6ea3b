# SPDX-License-Identifier: BSD-2-Clause
"""ctypes binding of libssdlab (sw/lib): an NVMe drive behind the simulation bridge or VFIO.

    with Drive(sim="build/sim/drive.sock") as d:       # or Drive(vfio="0000:01:00.0")
        print(d.info()["model"])
        d.write(0, d.pattern_data("seed:7", 0, 8))
        data = d.read(0, 8)

The library is built on demand (`make -C sw/lib`) when build/lib/libssdlab.so is missing or
older than its sources. Errors raise DriveError (transport, timeouts, bad arguments: the
library's message with the errno text) or NvmeStatusError (the drive answered a status, named
as "LBA Out of Range (SCT 0 SC 80h)").
"""

import ctypes
import os
import struct
import subprocess
import threading
from pathlib import Path

from spec.nvme import SC, AdminOpcode, Fault

__all__ = ["Drive", "DriveError", "NvmeStatusError", "Pattern", "Transport", "load_library",
           "LIB_PATH"]

ROOT = Path(__file__).resolve().parents[2]
LIB_DIR = ROOT / "sw" / "lib"
LIB_PATH = ROOT / "build" / "lib" / "libssdlab.so"

_lib = None
_lock = threading.Lock()


class DriveError(Exception):
    """A transport or driver failure; `code` is the negative errno."""

    def __init__(self, message, code=None):
        super().__init__(message)
        self.code = code


class NvmeStatusError(DriveError):
    """The drive completed a command with a non-zero NVMe status (`status`: the 15-bit field:
    SC 7:0, SCT 10:8, CRD 12:11, More 13, DNR 14)."""

    def __init__(self, message, status):
        super().__init__(message, status)
        self.status = status
        self.sct = (status >> 8) & 7
        self.sc = status & 0xFF


class _Opts(ctypes.Structure):
    _fields_ = [("n_io_queues", ctypes.c_uint), ("io_depth", ctypes.c_uint),
                ("admin_depth", ctypes.c_uint), ("use_irq", ctypes.c_int),
                ("admin_timeout_ns", ctypes.c_uint64), ("io_timeout_ns", ctypes.c_uint64),
                ("ready_poll_ns", ctypes.c_uint64), ("shutdown_timeout_ns", ctypes.c_uint64)]


class _Info(ctypes.Structure):
    _fields_ = [("model", ctypes.c_char * 41), ("serial", ctypes.c_char * 21),
                ("firmware", ctypes.c_char * 9), ("transport", ctypes.c_char * 16),
                ("vid", ctypes.c_uint16), ("version", ctypes.c_uint32),
                ("cap", ctypes.c_uint64), ("max_transfer", ctypes.c_uint32),
                ("nn", ctypes.c_uint32), ("oncs", ctypes.c_uint16), ("vwc", ctypes.c_uint8),
                ("lba_bytes", ctypes.c_uint32), ("ns_blocks", ctypes.c_uint64),
                ("ns_capacity", ctypes.c_uint64), ("ns_used", ctypes.c_uint64),
                ("n_io_queues", ctypes.c_uint32), ("io_depth", ctypes.c_uint32),
                ("use_irq", ctypes.c_int32), ("n_vectors", ctypes.c_uint32)]


class _BenchOpts(ctypes.Structure):
    _fields_ = [("write", ctypes.c_int), ("random", ctypes.c_int),
                ("io_blocks", ctypes.c_uint32), ("qd", ctypes.c_uint32),
                ("n_ios", ctypes.c_uint64), ("lba_first", ctypes.c_uint64),
                ("lba_count", ctypes.c_uint64), ("seed", ctypes.c_uint64),
                ("qid", ctypes.c_uint32)]


class _BenchResult(ctypes.Structure):
    _fields_ = [("ios", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("errors", ctypes.c_uint64), ("first_error", ctypes.c_uint16),
                ("elapsed_ns", ctypes.c_uint64), ("lat_min_ns", ctypes.c_uint64),
                ("lat_mean_ns", ctypes.c_uint64), ("lat_p50_ns", ctypes.c_uint64),
                ("lat_p99_ns", ctypes.c_uint64), ("lat_p999_ns", ctypes.c_uint64),
                ("lat_max_ns", ctypes.c_uint64)]


def _stale():
    if not LIB_PATH.exists():
        return True
    built = LIB_PATH.stat().st_mtime
    sources = list(LIB_DIR.glob("src/*")) + list(LIB_DIR.glob("include/ssdlab/*.h"))
    sources += [LIB_DIR / "Makefile", ROOT / "sim" / "bridge" / "ssdlab_bridge.h"]
    return any(p.stat().st_mtime > built for p in sources)


def load_library(build=True):
    """The loaded libssdlab (ctypes.CDLL), built first if missing or stale."""
    global _lib
    with _lock:
        if _lib is not None:
            return _lib
        if build and _stale():
            r = subprocess.run(["make", "-s", "-j1", "-C", str(LIB_DIR)], capture_output=True,
                               text=True)
            if r.returncode != 0:
                raise DriveError(f"building libssdlab failed (make -C sw/lib):\n{r.stderr}")
        if not LIB_PATH.exists():
            raise DriveError(f"{LIB_PATH} is missing: run make -C sw/lib")
        lib = ctypes.CDLL(str(LIB_PATH))
        vp, u32, u64, i32 = ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int
        sigs = {
            "sl_transport_open_sim": (i32, [ctypes.c_char_p, ctypes.POINTER(vp)]),
            "sl_transport_open_vfio": (i32, [ctypes.c_char_p, ctypes.POINTER(vp)]),
            "sl_transport_open_errmsg": (ctypes.c_char_p, []),
            "sl_transport_errmsg": (ctypes.c_char_p, [vp]),
            "sl_transport_close": (None, [vp]),
            "sl_transport_stats": (i32, [vp, ctypes.c_char_p, ctypes.c_size_t]),
            "sl_transport_reset": (i32, [vp]),
            "sl_transport_power_cut": (i32, [vp]),
            "sl_transport_name": (ctypes.c_char_p, [vp]),
            "sl_transport_sleep": (i32, [vp, u64]),
            "sl_sim_quit": (i32, [vp]),
            "sl_sim_bake": (i32, [vp, u64]),
            "sl_sim_precycle": (i32, [vp, u64]),
            "sl_sim_bit_errors": (i32, [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint, u64]),
            "sl_sim_die_fail": (i32, [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint]),
            "sl_sim_stuck_busy": (i32, [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                        ctypes.c_bool]),
            "sl_sim_bad_block": (i32, [vp, ctypes.c_uint, ctypes.c_uint, ctypes.c_uint,
                                       ctypes.c_uint]),
            "sl_sim_cpl_fault": (i32, [vp, ctypes.c_int, ctypes.c_uint, u64]),
            "sl_sim_time_ps": (u64, [vp]),
            "sl_sim_irq_counts": (i32, [vp, ctypes.c_uint, ctypes.c_uint,
                                        ctypes.POINTER(u64)]),
            "sl_ctrl_opts_default": (None, [ctypes.POINTER(_Opts)]),
            "sl_ctrl_open": (i32, [vp, ctypes.POINTER(_Opts), ctypes.POINTER(vp)]),
            "sl_ctrl_close": (i32, [vp]),
            "sl_ctrl_transport": (vp, [vp]),
            "sl_errmsg": (ctypes.c_char_p, [vp]),
            "sl_ctrl_info": (None, [vp, ctypes.POINTER(_Info)]),
            "sl_time_ns": (u64, [vp]),
            "sl_read": (i32, [vp, ctypes.c_uint, u64, u32, ctypes.c_char_p]),
            "sl_write": (i32, [vp, ctypes.c_uint, u64, u32, ctypes.c_char_p]),
            "sl_flush": (i32, [vp, ctypes.c_uint]),
            "sl_write_zeroes": (i32, [vp, ctypes.c_uint, u64, u32]),
            "sl_trim": (i32, [vp, ctypes.c_uint, u64, u64]),
            "sl_identify": (i32, [vp, u32, u32, ctypes.c_char_p]),
            "sl_get_log_page": (i32, [vp, u32, u32, ctypes.c_char_p, ctypes.c_size_t]),
            "sl_get_features": (i32, [vp, u32, u32, ctypes.POINTER(u32)]),
            "sl_set_features": (i32, [vp, u32, u32, ctypes.POINTER(u32)]),
            "sl_format": (i32, [vp, u32, u32, u32]),
            "sl_bench": (i32, [vp, ctypes.POINTER(_BenchOpts), ctypes.POINTER(_BenchResult)]),
            "sl_status_str": (ctypes.c_char_p, [ctypes.c_uint16, ctypes.c_char_p,
                                                ctypes.c_size_t]),
            "sl_pattern_fill": (None, [u64, u64, ctypes.c_char_p, ctypes.c_size_t]),
            "sl_pattern_check": (ctypes.c_long, [u64, u64, ctypes.c_char_p, ctypes.c_size_t]),
        }
        for name, (res, args) in sigs.items():
            fn = getattr(lib, name)
            fn.restype, fn.argtypes = res, args
        _lib = lib
        return lib


def status_str(status):
    """'LBA Out of Range (SCT 0 SC 80h)' for an NVMe status field."""
    lib = load_library()
    buf = ctypes.create_string_buffer(160)
    return lib.sl_status_str(status, buf, len(buf)).decode()


class Pattern:
    """Data for write/verify, per LBA so any sub-range verifies on its own.

    spec: "seed:N" (libssdlab's per-LBA pseudo-random data, N >= 0), "zero", "byte:V"
    (0 <= V <= 255, decimal or 0x..). Raises ValueError with the reason.
    """

    def __init__(self, spec):
        self.spec = spec
        kind, _, arg = spec.partition(":")
        try:
            if kind == "seed" and arg:
                self.kind, self.value = "seed", int(arg, 0)
                if self.value < 0 or self.value >= 2**64:
                    raise ValueError
            elif kind == "byte" and arg:
                self.kind, self.value = "byte", int(arg, 0)
                if not 0 <= self.value <= 255:
                    raise ValueError
            elif kind == "zero" and not arg:
                self.kind, self.value = "byte", 0
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"{spec!r} is not a pattern: use seed:N (N >= 0), zero or byte:V "
                             "(0..255)") from None

    def data(self, lba, count, lba_bytes):
        if self.kind == "byte":
            return bytes([self.value]) * (count * lba_bytes)
        lib = load_library()
        buf = ctypes.create_string_buffer(count * lba_bytes)
        for i in range(count):
            block = ctypes.cast(ctypes.addressof(buf) + i * lba_bytes, ctypes.c_char_p)
            lib.sl_pattern_fill(self.value, lba + i, block, lba_bytes)
        return buf.raw

    def mismatches(self, lba, data, lba_bytes):
        """LBAs in `data` (starting at lba) that differ from the pattern."""
        expect = self.data(lba, len(data) // lba_bytes, lba_bytes)
        return [lba + i for i in range(len(data) // lba_bytes)
                if data[i * lba_bytes:(i + 1) * lba_bytes]
                != expect[i * lba_bytes:(i + 1) * lba_bytes]]


def _open_transport(lib, sim, vfio):
    t = ctypes.c_void_p()
    if vfio:
        rc = lib.sl_transport_open_vfio(vfio.encode(), ctypes.byref(t))
    else:
        path = sim or os.environ.get("SSDLAB_SIM_SOCKET")
        rc = lib.sl_transport_open_sim(path.encode() if path else None, ctypes.byref(t))
    if rc < 0:
        raise DriveError(lib.sl_transport_open_errmsg().decode(), rc)
    return t


class Transport:
    """The transport alone, no controller bring-up: statistics, power cycle, harness exit."""

    def __init__(self, sim=None, vfio=None):
        self._lib = load_library()
        self._t = _open_transport(self._lib, sim, vfio)
        self.name = self._lib.sl_transport_name(self._t).decode()

    def close(self):
        if self._t:
            self._lib.sl_transport_close(self._t)
            self._t = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _check(self, rc):
        if rc < 0:
            raise DriveError(self._lib.sl_transport_errmsg(self._t).decode(), rc)

    def stats(self):
        """'key=value' statistics as a dict (sim: cycles, msis, dma_writes, sim_ps, and the
        harness's own keys)."""
        buf = ctypes.create_string_buffer(1024)
        self._check(self._lib.sl_transport_stats(self._t, buf, len(buf)))
        return dict(kv.split("=", 1) for kv in buf.value.decode().split() if "=" in kv)

    def power_cycle(self):
        """sim: SB_RESET (everything but the NAND and host RAM); vfio: function reset."""
        self._check(self._lib.sl_transport_reset(self._t))

    def power_cut(self):
        """sim only: a power cut (SB_RESET with SB_RESET_POWER_CUT): reset as power_cycle, and
        the NAND dies lose power at this instant (in-flight programs and erases torn).
        Returns the pages and blocks torn."""
        rc = self._lib.sl_transport_power_cut(self._t)
        self._check(rc)
        return rc

    def quit(self):
        """sim only: the harness finishes and exits (SB_QUIT)."""
        self._check(self._lib.sl_sim_quit(self._t))

    def bake(self, hours):
        """sim only: a retention bake (SB_BAKE): every die's programmed pages age `hours`
        (0.001 .. 10^6) at once, as a lab's bake ages a drive's data (spec/nand_errors.py).
        Returns the dies baked (0: a drive with the NAND emulator, whose pages never age).
        The harness serves one connection at a time: with a Drive open, use Drive.bake."""
        return _sim_bake(self._lib, self._t, hours)

    def precycle(self, cycles):
        """sim only: pre-cycling (SB_PRECYCLE): every block of every die takes `cycles`
        (1 .. 10^7) more P/E cycles at once, as a lab pre-cycles parts before a wear-out test:
        raw bit errors and the part's P/E limit count them; the firmware's erase counts do
        not. Returns the dies pre-cycled (0: the NAND emulator, which does not wear). With a
        Drive open, use Drive.precycle."""
        return _sim_precycle(self._lib, self._t, cycles)

    def bit_errors(self, channel, way, lun, rber):
        """sim only: injected bit errors (SB_FAULT_BIT_ERRORS): every read of that LUN flips
        bits at `rber` (0 .. 0.5, to 1e-9; 0 ends it) more, a degraded die. True; False for
        a drive with the NAND emulator. With a Drive open, use Drive.bit_errors."""
        return _sim_bit_errors(self._lib, self._t, channel, way, lun, rber)

    def die_fail(self, channel, way, lun):
        """sim only: a die failure (SB_FAULT_DIE_FAIL): that LUN fails for good, its programs
        and erases FAIL and its reads return noise. True; False for a drive with the NAND
        emulator. With a Drive open, use Drive.die_fail."""
        return _sim_die_fail(self._lib, self._t, channel, way, lun)

    def stuck_busy(self, channel, way, lun, for_good=False):
        """sim only: a hung die (SB_FAULT_STUCK_BUSY): that LUN's R/B# sticks low from its
        next busy period on, until a RESET or a power cut (for_good: for good). True; False
        for a drive with the NAND emulator. With a Drive open, use Drive.stuck_busy."""
        return _sim_stuck_busy(self._lib, self._t, channel, way, lun, for_good)

    def cpl_fault(self, kind, reads=1, addr=0):
        """sim only: host link faults (SB_FAULT_CPL_POISON / SB_FAULT_CPL_TIMEOUT): the next
        `reads` (1..255) DMA reads of the drive (addr != 0: the next ones touching the 4 KiB
        host page holding addr) get poisoned completions (kind "poison") or none at all
        ("timeout"). Returns the reads armed. With a Drive open, use Drive.cpl_fault."""
        return _sim_cpl_fault(self._lib, self._t, kind, reads, addr)

    def bad_block(self, channel, way, lun, block):
        """sim only: a grown bad block (SB_FAULT): that block of that die fails every
        program and erase from now on. True; False for a drive with the NAND emulator (no
        die models: Drive.bad_block has its firmware do it). A die, LUN or block the drive
        does not have is a DriveError. With a Drive open, use Drive.bad_block."""
        return _sim_bad_block(self._lib, self._t, channel, way, lun, block)

    def irq_counts(self, n=65):
        """sim only: interrupts the harness saw per vector since it started (MSI vector, or
        MSI-X table index), vectors 0..n-1 (1 <= n <= 2048), as a list."""
        if not 1 <= n <= 2048:
            raise ValueError(f"irq_counts: n={n} outside 1..2048")
        return _irq_counts(self._lib, self._t, n)


def _check_ints(what, top=None, **fields):
    """Each field an integer 0..top[name] (no bound where top does not name it), else a
    ValueError naming the call and the field."""
    for name, v in fields.items():
        hi = (top or {}).get(name)
        if isinstance(v, bool) or not isinstance(v, int) or v < 0 or (hi is not None and v > hi):
            raise ValueError(f"{what}: {name}={v!r} must be an integer "
                             + (f"0..{hi}" if hi is not None else ">= 0"))


def _sim_check(lib, t, rc):
    if rc < 0:
        raise DriveError(lib.sl_transport_errmsg(t).decode(), rc)
    return rc


def _sim_bake(lib, t, hours):
    if isinstance(hours, bool) or not isinstance(hours, int | float) or \
            not 0.001 <= hours <= 1e6:
        raise ValueError(f"bake: hours={hours!r} outside 0.001..1e6")
    return _sim_check(lib, t, lib.sl_sim_bake(t, round(hours * 1000)))


def _sim_precycle(lib, t, cycles):
    if isinstance(cycles, bool) or not isinstance(cycles, int) or not 1 <= cycles <= 10**7:
        raise ValueError(f"precycle: cycles={cycles!r} outside 1..10^7")
    return _sim_check(lib, t, lib.sl_sim_precycle(t, cycles))


def _sim_die_fail(lib, t, channel, way, lun):
    _check_ints("die_fail", channel=channel, way=way, lun=lun)
    return _sim_check(lib, t, lib.sl_sim_die_fail(t, channel, way, lun)) == 1


def _sim_stuck_busy(lib, t, channel, way, lun, for_good):
    _check_ints("stuck_busy", channel=channel, way=way, lun=lun)
    if not isinstance(for_good, bool):
        raise ValueError(f"stuck_busy: for_good={for_good!r} must be a bool")
    return _sim_check(lib, t, lib.sl_sim_stuck_busy(t, channel, way, lun, for_good)) == 1


# sl_sim_cpl_fault's kinds (enum sl_cpl_fault, = SB_FAULT_CPL_*).
CPL_FAULTS = {"poison": 5, "timeout": 6}


def _sim_cpl_fault(lib, t, kind, reads, addr):
    if kind not in CPL_FAULTS:
        raise ValueError(f"cpl_fault: kind={kind!r} not one of {sorted(CPL_FAULTS)}")
    if isinstance(reads, bool) or not isinstance(reads, int) or not 1 <= reads <= 255:
        raise ValueError(f"cpl_fault: reads={reads!r} outside 1..255")
    if isinstance(addr, bool) or not isinstance(addr, int) or not 0 <= addr < 2**64:
        raise ValueError(f"cpl_fault: addr={addr!r} not a 64-bit address")
    return _sim_check(lib, t, lib.sl_sim_cpl_fault(t, CPL_FAULTS[kind], reads, addr))


def _sim_bit_errors(lib, t, channel, way, lun, rber):
    _check_ints("bit_errors", channel=channel, way=way, lun=lun)
    if isinstance(rber, bool) or not isinstance(rber, int | float) or not 0 <= rber <= 0.5:
        raise ValueError(f"bit_errors: rber={rber!r} outside 0..0.5")
    return _sim_check(lib, t, lib.sl_sim_bit_errors(t, channel, way, lun,
                                                    round(rber * 1e9))) == 1


def _sim_bad_block(lib, t, channel, way, lun, block):
    _check_ints("bad_block", channel=channel, way=way, lun=lun, block=block)
    return _sim_check(lib, t, lib.sl_sim_bad_block(t, channel, way, lun, block)) == 1


def _sl_admin(lib):
    """libssdlab's sl_admin with an untyped SQE pointer, a function object of its own (the
    tests' raw binding, nvme_raw.py, types lib.sl_admin with its own SQE structure)."""
    fn = getattr(lib, "_drive_sl_admin", None)
    if fn is None:
        fn = lib["sl_admin"]
        fn.restype = ctypes.c_int
        fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                       ctypes.POINTER(ctypes.c_uint32)]
        lib._drive_sl_admin = fn
    return fn


def _nand_fault(lib, c, what, fault, fields):
    """ssdlab's fault injection (admin C1h, spec/nvme.py Fault) into the NAND emulator's
    block table (a drive whose NAND is the emulator: a card without NAND chips, or a
    simulated drive built with it). fields: channel, way, lun (CDW13), block (CDW14), count
    or limit (CDW15). True once injected; Invalid Field is a NvmeStatusError that says why."""
    _check_ints(what, {"channel": 255, "way": 255, "lun": 255, "block": 2**32 - 1,
                       "count": 2**32 - 1, "limit": 2**32 - 1}, **fields)
    cmd = (ctypes.c_uint32 * 16)()
    cmd[0] = AdminOpcode.SSDLAB_FAULT
    cmd[10], cmd[12] = fault, Fault.ARM
    cmd[13] = fields.get("channel", 0) | fields.get("way", 0) << 8 | fields.get("lun", 0) << 16
    cmd[14] = fields.get("block", 0)
    cmd[15] = fields.get("count", fields.get("limit", 0))
    rc = _sl_admin(lib)(c, ctypes.addressof(cmd), None, 0, None)
    if rc < 0:
        raise DriveError(lib.sl_errmsg(c).decode(), rc)
    if rc > 0:
        msg = f"{what} ({', '.join(f'{k} {v}' for k, v in fields.items())}): admin C1h: " \
              f"{lib.sl_errmsg(c).decode()}"
        if (rc & 0x7FF) == (SC.INVALID_FIELD & 0x7FF):
            msg += (" - the drive has no NAND emulator (NAND chips, or a simulated drive's "
                    "die models), or " + "/".join(fields) + " is beyond it (its channels, "
                    "ways, one LUN, its blocks; P/E counts up to 2^20 - 1)")
        raise NvmeStatusError(msg, rc)
    return True


def _irq_counts(lib, t, n):
    """sl_sim_irq_counts for vectors 0..n-1 of transport t: a list of n counts."""
    counts = (ctypes.c_uint64 * n)()
    rc = lib.sl_sim_irq_counts(t, 0, n, counts)
    if rc < 0:
        raise DriveError(lib.sl_transport_errmsg(t).decode(), rc)
    return list(counts)


def _u128(raw, off):
    lo, hi = struct.unpack_from("<QQ", raw, off)
    return lo | (hi << 64)


class Drive:
    """An opened, initialised controller (namespace 1). Close it (or use `with`) to delete the
    I/O queues and shut the controller down cleanly."""

    def __init__(self, sim=None, vfio=None, irq=False, queues=1, depth=64,
                 admin_timeout_s=60.0, io_timeout_s=30.0):
        self._lib = lib = load_library()
        self._c = None
        t = _open_transport(lib, sim, vfio)
        opts = _Opts()
        lib.sl_ctrl_opts_default(ctypes.byref(opts))
        opts.n_io_queues, opts.io_depth, opts.use_irq = queues, depth, int(irq)
        opts.admin_timeout_ns = int(admin_timeout_s * 1e9)
        opts.io_timeout_ns = int(io_timeout_s * 1e9)
        c = ctypes.c_void_p()
        rc = lib.sl_ctrl_open(t, ctypes.byref(opts), ctypes.byref(c))
        if rc != 0:
            msg = (lib.sl_errmsg(c) if c else lib.sl_transport_open_errmsg()).decode()
            if c:
                lib.sl_ctrl_close(c)
            raise self._error(rc, msg or "controller initialisation failed")
        self._c = c
        self.transport = lib.sl_transport_name(lib.sl_ctrl_transport(c)).decode()
        self.simulated = self.transport == "sim"

    # --- life cycle ---------------------------------------------------------------------
    def close(self):
        if self._c:
            c, self._c = self._c, None
            rc = self._lib.sl_ctrl_close(c)
            if rc != 0:
                raise DriveError(self._lib.sl_errmsg(None).decode(), rc)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _error(self, rc, msg=None):
        if msg is None:
            msg = self._lib.sl_errmsg(self._c).decode()
        if rc > 0:
            return NvmeStatusError(msg, rc)
        return DriveError(msg, rc)

    def _check(self, rc):
        if rc != 0:
            raise self._error(rc)

    # --- information --------------------------------------------------------------------
    def info(self):
        i = _Info()
        self._lib.sl_ctrl_info(self._c, ctypes.byref(i))
        out = {name: getattr(i, name) for name, _ in _Info._fields_}
        for k in ("model", "serial", "firmware", "transport"):
            out[k] = out[k].decode(errors="replace")
        out["version"] = f"{i.version >> 16}.{(i.version >> 8) & 0xFF}.{i.version & 0xFF}"
        out["use_irq"] = bool(i.use_irq)
        return out

    def time_ns(self):
        """Transport time: simulated ns (sim), CLOCK_MONOTONIC ns (vfio)."""
        return self._lib.sl_time_ns(self._c)

    def idle(self, ns):
        """Let `ns` of transport time pass with no command outstanding: on sim the drive runs
        on for ns of simulated time (its background work, if any, goes on); on VFIO a sleep.
        Returns the transport time afterwards."""
        t = self._lib.sl_ctrl_transport(self._c)
        rc = self._lib.sl_transport_sleep(t, int(ns))
        if rc < 0:
            raise DriveError(self._lib.sl_transport_errmsg(t).decode(), rc)
        return self.time_ns()

    def stats(self):
        buf = ctypes.create_string_buffer(1024)
        t = self._lib.sl_ctrl_transport(self._c)
        rc = self._lib.sl_transport_stats(t, buf, len(buf))
        if rc < 0:
            raise DriveError(self._lib.sl_transport_errmsg(t).decode(), rc)
        return dict(kv.split("=", 1) for kv in buf.value.decode().split() if "=" in kv)

    def bake(self, hours):
        """sim only: a retention bake of the drive's NAND through this controller's
        connection (Transport.bake)."""
        return _sim_bake(self._lib, self._lib.sl_ctrl_transport(self._c), hours)

    def precycle(self, cycles):
        """sim only: pre-cycling of the drive's NAND through this controller's connection
        (Transport.precycle)."""
        return _sim_precycle(self._lib, self._lib.sl_ctrl_transport(self._c), cycles)

    def bit_errors(self, channel, way, lun, rber):
        """sim only: injected bit errors through this controller's connection
        (Transport.bit_errors)."""
        return _sim_bit_errors(self._lib, self._lib.sl_ctrl_transport(self._c), channel, way,
                               lun, rber)

    def die_fail(self, channel, way, lun):
        """sim only: a die failure through this controller's connection
        (Transport.die_fail)."""
        return _sim_die_fail(self._lib, self._lib.sl_ctrl_transport(self._c), channel, way,
                             lun)

    def stuck_busy(self, channel, way, lun, for_good=False):
        """sim only: a hung die through this controller's connection
        (Transport.stuck_busy)."""
        return _sim_stuck_busy(self._lib, self._lib.sl_ctrl_transport(self._c), channel, way,
                               lun, for_good)

    def cpl_fault(self, kind, reads=1, addr=0):
        """sim only: host link faults through this controller's connection
        (Transport.cpl_fault)."""
        return _sim_cpl_fault(self._lib, self._lib.sl_ctrl_transport(self._c), kind, reads,
                              addr)

    def bad_block(self, channel, way, lun, block):
        """A grown bad block: that block of that die (the LUN's block, the plane in its low
        bits) fails every program and erase from now on. A simulated drive's die models get
        it from the harness through this controller's connection (Transport.bad_block); the
        NAND emulator (a card without NAND chips, or a simulated drive built with it) from
        the firmware, by ssdlab's admin C1h (NAND_BAD_BLOCK). True once injected; a die, LUN
        or block the drive does not have is a DriveError."""
        if self.simulated and _sim_bad_block(self._lib, self._lib.sl_ctrl_transport(self._c),
                                             channel, way, lun, block):
            return True
        return _nand_fault(self._lib, self._c, "bad_block", Fault.NAND_BAD_BLOCK,
                           dict(channel=channel, way=way, lun=lun, block=block))

    def pe_count(self, channel, way, lun, block, count):
        """The NAND emulator only (admin C1h NAND_PE): that block's P/E count set to `count`
        (0 .. 2^20 - 1), e.g. at or past its limit (pe_limit) so that its next erase FAILs.
        True; a drive without the emulator, or a block it does not have, is a DriveError."""
        return _nand_fault(self._lib, self._c, "pe_count", Fault.NAND_PE,
                           dict(channel=channel, way=way, lun=lun, block=block, count=count))

    def pe_limit(self, limit):
        """The NAND emulator only (admin C1h NAND_PE_LIMIT): every block's P/E limit (0 ..
        2^20 - 1; 0: none, the default): an erase that takes a block's count past it FAILs
        and the block goes bad. The SoC's register: a power cycle clears it. True; a drive
        without the emulator is a DriveError."""
        return _nand_fault(self._lib, self._c, "pe_limit", Fault.NAND_PE_LIMIT,
                           dict(limit=limit))

    def irq_counts(self):
        """sim only: interrupts the harness saw per vector since it started, for the
        controller's vectors 0 .. n_vectors - 1 (info()): with MSI-X the table index, so
        vector 0 is the admin queue and I/O queue q's CQ has vector q (one table entry each
        while there are enough); with MSI the MSI vector number. A list; take differences
        around what you measure (stats()["irq"] says msi or msix)."""
        if not self.simulated:
            raise DriveError(f"irq_counts: the {self.transport} transport does not count "
                             "interrupts (sim only)", -95)
        n = max(1, self.info()["n_vectors"])
        return _irq_counts(self._lib, self._lib.sl_ctrl_transport(self._c), n)

    def identify_raw(self, cns=1, nsid=0):
        buf = ctypes.create_string_buffer(4096)
        self._check(self._lib.sl_identify(self._c, cns, nsid, buf))
        return buf.raw

    def get_log_page(self, lid, length, nsid=0xFFFFFFFF):
        buf = ctypes.create_string_buffer(length)
        self._check(self._lib.sl_get_log_page(self._c, nsid, lid, buf, length))
        return buf.raw

    # The firmware's FTL counters, vendor log page C0h (sw/firmware/README.md), in order.
    FTL_COUNTERS = ("host_units_written", "nand_units_written", "gc_units_moved", "erases",
                    "bad_blocks", "free_blocks", "user_units", "raw_units", "wa_x1000",
                    "avg_erase", "max_erase", "ckpt_saves", "wb_groups", "pu_units", "dies",
                    "media_errors", "pending_reuse", "ckpt_units_written", "idle_gc_blocks",
                    "slc_units_written", "slc_blocks_folded", "slc_units_folded", "slc_blocks",
                    "slc_blocks_max", "slc_block_units", "hw_reads", "hw_punts",
                    "hw_lbas_read", "jnl_pages", "jnl_releases", "jnl_replayed_pages",
                    "boot_cycles", "gc_paced_pages", "gc_fg_blocks", "watchdog_resets",
                    "stall_release_cycles", "stall_ckpt_cycles", "stall_wb_cycles",
                    "release_waits", "stall_gc_cycles", "ecc_corrected_reads",
                    "ecc_failed_reads", "ecc_max_bits", "read_retries", "retry_recovered",
                    "hw_handbacks", "refreshed_blocks", "units_lost", "dead_dies",
                    "parity_rebuilt", "parity_failed", "flash_timeouts", "sys_moves",
                    "ckpt_live_saves", "jnl_full_waits")

    def ftl_log(self):
        """The vendor log page C0h: the FTL's counters as a dict (FTL_COUNTERS)."""
        raw = self.get_log_page(0xC0, 512)
        n = len(self.FTL_COUNTERS)
        return dict(zip(self.FTL_COUNTERS, struct.unpack_from(f"<{n}Q", raw), strict=True))

    def smart_log(self):
        raw = self.get_log_page(0x02, 512)
        kelvin = struct.unpack_from("<H", raw, 1)[0]
        names = ("data_units_read", "data_units_written", "host_read_commands",
                 "host_write_commands", "controller_busy_time", "power_cycles",
                 "power_on_hours", "unsafe_shutdowns", "media_errors", "num_err_log_entries")
        out = {"critical_warning": raw[0], "temperature_k": kelvin,
               "available_spare": raw[3], "available_spare_threshold": raw[4],
               "percentage_used": raw[5]}
        for k, name in enumerate(names):
            out[name] = _u128(raw, 32 + 16 * k)
        return out

    # --- I/O (queue 1) --------------------------------------------------------------------
    def read(self, lba, count, qid=1):
        lba_bytes = self.info()["lba_bytes"]
        buf = ctypes.create_string_buffer(count * lba_bytes)
        self._check(self._lib.sl_read(self._c, qid, lba, count, buf))
        return buf.raw

    def write(self, lba, data, qid=1):
        lba_bytes = self.info()["lba_bytes"]
        if not data or len(data) % lba_bytes:
            raise DriveError(f"write of {len(data)} bytes: not a multiple of the "
                             f"{lba_bytes}-byte LBA", -22)
        self._check(self._lib.sl_write(self._c, qid, lba, len(data) // lba_bytes, data))

    def flush(self, qid=1):
        self._check(self._lib.sl_flush(self._c, qid))

    def write_zeroes(self, lba, count, qid=1):
        self._check(self._lib.sl_write_zeroes(self._c, qid, lba, count))

    def trim(self, lba, count, qid=1):
        self._check(self._lib.sl_trim(self._c, qid, lba, count))

    def format(self, lbaf=0, ses=0, nsid=1):
        self._check(self._lib.sl_format(self._c, nsid, lbaf, ses))

    def bench(self, write=False, random=False, io_blocks=1, qd=1, n_ios=1000, lba_first=0,
              lba_count=0, seed=0, qid=1):
        """libssdlab's fixed-QD workload (sl_bench): a dict of I/Os, bytes, errors, elapsed
        and latency percentiles in ns of transport time (simulated on sim)."""
        o = _BenchOpts(int(write), int(random), io_blocks, qd, n_ios, lba_first, lba_count,
                       seed, qid)
        r = _BenchResult()
        rc = self._lib.sl_bench(self._c, ctypes.byref(o), ctypes.byref(r))
        if rc != 0:
            raise self._error(rc)
        out = {name: getattr(r, name) for name, _ in _BenchResult._fields_}
        out["first_error"] = status_str(r.first_error) if r.errors else None
        return out
