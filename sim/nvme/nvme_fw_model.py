# SPDX-License-Identifier: BSD-2-Clause
"""NvmeFirmwareModel: the controller firmware's behaviour, in Python, on the processor
interface of nvme_controller_top.

It stands for the VexRiscv firmware until that exists, and keeps serving as the reference
for it. Ports (Verilog names of the test top; streams are valid/ready with one port per field):

    m_fw_cmd     sqid, sq_head, sqe[512]       every admin command, and I/O commands other
                                               than Read / Write / Flush
    s_fw_cpl     cqid, sqid, sq_head, cid, status, dw0
    s_fw_sq_cfg  sqid, base, qsize, enable, cqid (, nc)   (a delete handshakes once the SQ
                                               is gone)
    s_fw_cq_cfg  cqid, base, qsize, iv, ien, enable (, nc)
    s_fw_sq_page sqid, index, page             (queue lists: page `index` of a PC=0 queue,
    s_fw_cq_page cqid, index, page              address >> 12, written before the create)
    s_fw_xfer    buf, prp1, prp2, length, to_host   -> m_fw_xfer_cpl status
    s_fw_ivc     vector, cd
    m_fw_aer     info                          (event type 0, log page 01h)
    fw_agg_thr, fw_agg_time, fw_ns_size        inputs
    fw_abort_arm, fw_abort_sqid, fw_abort_cid  the abort slot; abort_hit, sq_pending outputs
    ctrl_enabled                               output: queues enabled (falls on a reset)

Commands served (NVMe 1.4): Identify (CNS 00h, 01h, 02h, 03h), Get / Set Features (01h, 02h, 04h,
07h, 08h, 09h, 0Bh; SEL current / default / saved / supported), Create / Delete I/O CQ and SQ
with the specification's checks (PC=0 queues when the top has the page list ports: the PRP
list is read with s_fw_xfer, its pages written on s_fw_*_page, the queue created with nc=1),
Get Log Page (01h, 02h, 03h; offset and NUMDU), Abort,
Asynchronous Event Request, Keep Alive; I/O Dataset Management and Write Zeroes on the back
end; every other opcode gets Invalid Command Opcode, and a command with FUSE or PSDT set
Invalid Field in Command. The answers are held equal to the C firmware's (sw/firmware) by the
compliance table both run (tests/lib/nvme_compliance_cases.py). Each command costs
`fw_latency` cycles before it is served (simulated time). Commands run one at a time, in
arrival order, but for Abort, which a second worker serves with the abort slot while the
first goes on.

When `ctrl_enabled` falls (controller reset), the model drops its state silently: queue
table, outstanding AERs and Aborts, queued commands and events, features back to defaults.
"""

import random
from collections import deque

import cocotb
from cocotb.triggers import ClockCycles, Event, FallingEdge, Lock, ReadOnly, RisingEdge

from sim.nvme.nvme_streams import BufferMem, FieldSink, FieldSource
from spec import nvme as ns
from spec.nvme import SC, AdminOpcode, FeatureId, LogPage, NvmOpcode, Sqe

__all__ = ["NvmeFirmwareModel"]

NSID_ALL = 0xFFFFFFFF


class NvmeFirmwareModel:
    """dut:          the test top; backend: an NvmeRamBackend (deallocate / write_zeroes,
                  SMART counters);
    n_io_queues:  the controller's n_io_queues (1..64): queue ids 1..n, vectors 0..n;
    max_transfer: the controller's max_transfer (buffer size, MDTS = log2(max / 4096));
    lbads:        LBA size 2^lbads; ns_size: namespace 1's size in LBAs (drives fw_ns_size);
    tag_width:    the controller's TAG_WIDTH; firmware buffer b is handle (1 << tag_width) + b;
    mqes:         CAP.MQES (the largest QSIZE accepted);
    fw_latency:   cycles of firmware time per command (>= 0);
    acl, aerl:    Identify ACL / AERL (0's based limits of outstanding Abort / AER commands);
    identify:     overrides of Identify Controller fields (name -> value);
    aer_mask:     True: after an error event is reported, further error events wait until
                  the host reads log page 01h (NVMe 1.4 section 5.2); False: no masking;
    cmd_pause:    probability of m_fw_cmd_ready low per cycle (backpressure knob);
    abort_settle: cycles between sq_pending[sqid] reading 0 and sampling abort_hit;
    queue_lists:  PC=0 (non-contiguous) queues supported (CAP.CQR=0); None: when the top has
                  the `s_fw_sq_page` port. False: PC=0 gets Invalid Field.
    """
    def __init__(self, dut, backend, n_io_queues=8, max_transfer=131072, lbads=9,
                 ns_size=1 << 20, tag_width=6, mqes=4095, fw_latency=20, acl=3, aerl=3,
                 identify=None, aer_mask=True, cmd_pause=0.0, abort_settle=32,
                 queue_lists=None, seed=None):
        if not 1 <= n_io_queues <= 64:
            raise ValueError(f"NvmeFirmwareModel: n_io_queues={n_io_queues} out of 1..64")
        if max_transfer < 4096 or max_transfer & (max_transfer - 1):
            raise ValueError(f"NvmeFirmwareModel: max_transfer={max_transfer}")
        self.dut, self.backend = dut, backend
        self.n_io_queues, self.max_transfer = n_io_queues, max_transfer
        self.lbads, self.ns_size, self.tag_width, self.mqes = lbads, ns_size, tag_width, mqes
        self.fw_latency, self.acl, self.aerl = fw_latency, acl, aerl
        self.aer_mask = aer_mask
        self.abort_settle = abort_settle
        if queue_lists is None:
            queue_lists = hasattr(dut, "s_fw_sq_page_valid")
        self.queue_lists = queue_lists
        self._slot = Lock()
        self.rng = random.Random(cocotb.RANDOM_SEED if seed is None else seed)
        self.cmd_pause = cmd_pause
        self.buf = BufferMem(dut, max_transfer)
        self.fw_buf = 1 << tag_width            # handle of firmware buffer 0
        self.log = dut._log
        mdts = (max_transfer // 4096).bit_length() - 1
        self.id_ctrl_fields = dict(mdts=mdts, acl=acl, aerl=aerl, nn=1)
        self.id_ctrl_fields.update(identify or {})
        # namespace 1's IEEE EUI-64 (NVMe 1.4 section 7.11: a namespace has a globally unique
        # identifier; locally administered, like the C firmware's)
        self.eui64 = (0x02 << 56 | 0x55AA_0001).to_bytes(8, "big")
        self.served = []                        # (sqid, Sqe, status, dw0) in completion order
        self.error_log = []                     # ErrorLogEntry, newest first
        self.error_count = 0
        self.started = False
        self._reset_state()

    # State --------------------------------------------------------------------------------------

    def _default_features(self):
        n = self.n_io_queues - 1
        return {
            FeatureId.ARBITRATION: 0,
            FeatureId.POWER_MANAGEMENT: 0,
            FeatureId.TEMPERATURE_THRESHOLD: {0: self.id_ctrl_fields.get("wctemp", 343),
                                              1: 0},
            FeatureId.NUMBER_OF_QUEUES: n | n << 16,
            FeatureId.INTERRUPT_COALESCING: 0,
            FeatureId.INTERRUPT_VECTOR_CONFIG: {v: 0 for v in range(self.n_io_queues + 1)},
            FeatureId.ASYNC_EVENT_CONFIG: 0,
        }

    def _reset_state(self):
        self.sqs = {0: 0}                       # sqid -> cqid
        self.cqs = {0: set()}                   # cqid -> attached sqids (admin: implicit)
        self.features = self._default_features()
        self.aers = deque()                     # outstanding AER commands (sqid, sq_head, Sqe)
        self.events = deque()                   # (type, info, log page) not yet reported
        self.masked = set()                     # event types waiting for their log read
        self.cmds = deque()                     # commands taken, not yet served
        self.aborts = deque()
        self.n_aborts = 0                       # Abort commands outstanding
        self.generation = getattr(self, "generation", -1) + 1

    def start(self):
        """Start the stream drivers and the command workers (once, after tb.init())."""
        if self.started:
            return
        self.started = True
        dut = self.dut
        dut.fw_ns_size.value = self.ns_size
        dut.fw_agg_thr.value = 0
        dut.fw_agg_time.value = 0
        dut.fw_abort_arm.value = 0
        dut.fw_abort_sqid.value = 0
        dut.fw_abort_cid.value = 0
        self.cpl = FieldSource(dut, "s_fw_cpl", ["cqid", "sqid", "sq_head", "cid", "status",
                                                 "dw0"])
        nc = ["nc"] if self.queue_lists else []
        self.sq_cfg = FieldSource(dut, "s_fw_sq_cfg", ["sqid", "base", "qsize", "enable",
                                                       "cqid"] + nc)
        self.cq_cfg = FieldSource(dut, "s_fw_cq_cfg", ["cqid", "base", "qsize", "iv", "ien",
                                                       "enable"] + nc)
        if self.queue_lists:
            self.sq_page = FieldSource(dut, "s_fw_sq_page", ["sqid", "index", "page"])
            self.cq_page = FieldSource(dut, "s_fw_cq_page", ["cqid", "index", "page"])
        self.xfer_src = FieldSource(dut, "s_fw_xfer", ["buf", "prp1", "prp2", "length",
                                                       "to_host"])
        self.ivc = FieldSource(dut, "s_fw_ivc", ["vector", "cd"])
        self.xfer_done = deque()
        self.xfer_event = Event()
        self.cmd_event = Event()
        self.abort_event = Event()
        FieldSink(dut, "m_fw_cmd", ["sqid", "sq_head", "sqe"], self._on_cmd, rng=self.rng,
                  pause=self.cmd_pause)
        FieldSink(dut, "m_fw_xfer_cpl", ["status"], self._on_xfer_cpl)
        FieldSink(dut, "m_fw_aer", ["info"], self._on_aer)
        self._workers = []
        self._spawn()
        cocotb.start_soon(self._watch_enable())

    def _spawn(self):
        self._workers = [cocotb.start_soon(self._cmd_worker()),
                         cocotb.start_soon(self._abort_worker())]

    async def _watch_enable(self):
        while True:
            await FallingEdge(self.dut.ctrl_enabled)
            await RisingEdge(self.dut.clk)
            self.log.info("firmware model: controller reset, state dropped")
            for t in self._workers:
                t.cancel()
            for src in (self.cpl, self.sq_cfg, self.cq_cfg, self.xfer_src, self.ivc,
                        getattr(self, "sq_page", None), getattr(self, "cq_page", None)):
                if src is not None:
                    src.clear()
            self.dut.fw_abort_arm.value = 0
            self.dut.fw_agg_thr.value = 0
            self.dut.fw_agg_time.value = 0
            self.xfer_done.clear()
            self._reset_state()
            self._spawn()

    # Inputs ---------------------------------------------------------------------------------------

    def _on_cmd(self, beat):
        sqe = Sqe.from_int(beat["sqe"])
        item = (beat["sqid"], beat["sq_head"], sqe)
        if beat["sqid"] == 0 and sqe.opcode == AdminOpcode.ABORT:
            self.aborts.append(item)
            self.abort_event.set()
        else:
            self.cmds.append(item)
            self.cmd_event.set()

    def _on_xfer_cpl(self, beat):
        self.xfer_done.append(beat["status"])
        self.xfer_event.set()

    def _on_aer(self, beat):
        info = beat["info"]
        self.error_count += 1
        self._log_error(ns.ErrorLogEntry(error_count=self.error_count, sqid=0xFFFF,
                                         cid=0xFFFF, status=0))
        self.events.append((ns.AerType.ERROR, info, LogPage.ERROR_INFORMATION))
        cocotb.start_soon(self._report_events(self.generation))

    def _log_error(self, entry):
        self.error_log.insert(0, entry)
        del self.error_log[self.id_ctrl_fields.get("elpe", 63) + 1:]

    # Outputs --------------------------------------------------------------------------------------

    def cqid_of(self, sqid):
        return self.sqs.get(sqid, sqid)

    async def complete(self, sqid, sq_head, sqe, status=0, dw0=0):
        """Post the completion of `sqe` (taken from SQ `sqid`) on its CQ."""
        self.served.append((sqid, sqe, status, dw0))
        if status and status != SC.ABORT_REQUESTED:
            self.error_count += 1
            self._log_error(ns.ErrorLogEntry(error_count=self.error_count, sqid=sqid,
                                             cid=sqe.cid, status=status, nsid=sqe.nsid))
        await self.cpl.send(cqid=self.cqid_of(sqid), sqid=sqid, sq_head=sq_head, cid=sqe.cid,
                            status=status, dw0=dw0)

    async def xfer(self, prp1, prp2, length, to_host, data=None, buf=0):
        """Move `length` bytes between the command's PRPs and firmware buffer `buf`; for
        to_host, `data` is written into the buffer first. Returns (status, bytes read)."""
        handle = self.fw_buf + buf
        if to_host:
            self.buf.write(handle, 0, data)
        await self.xfer_src.send(buf=buf, prp1=prp1, prp2=prp2, length=length,
                                 to_host=int(bool(to_host)))
        while not self.xfer_done:
            self.xfer_event.clear()
            await self.xfer_event.wait()
        status = self.xfer_done.popleft()
        return status, (None if to_host or status else self.buf.read(handle, 0, length))

    # Workers --------------------------------------------------------------------------------------

    async def _cmd_worker(self):
        while True:
            while not self.cmds:
                self.cmd_event.clear()
                await self.cmd_event.wait()
            sqid, sq_head, sqe = self.cmds.popleft()
            # Woken from a sink's ReadOnly phase: to a clock edge before driving anything.
            await ClockCycles(self.dut.clk, max(1, self.fw_latency))
            result = await self.serve(sqid, sq_head, sqe)
            if result is not None:
                status, dw0 = result
                await self.complete(sqid, sq_head, sqe, status, dw0)
            if self.events and self.aers:   # a log page read may have unmasked events
                await self._report_events(self.generation)

    async def serve(self, sqid, sq_head, sqe):
        """Serve one command; returns (status, dw0), or None when it completes later (AER)."""
        if sqe.fuse or sqe.psdt:
            # FUSES 0 (no fused operations), PRPs only: an unsupported value in a defined
            # field (NVMe 1.4 figure 126, Invalid Field in Command); the front end answers
            # the I/O commands it executes itself the same way
            return SC.INVALID_FIELD, 0
        if sqid == 0:
            handler = self._admin.get(sqe.opcode)
        else:
            handler = self._io.get(sqe.opcode)
        if handler is None:
            return SC.INVALID_OPCODE, 0
        return await handler(self, sqid, sq_head, sqe)

    # Admin commands ---------------------------------------------------------------------------

    async def _identify(self, sqid, sq_head, sqe):
        cns = sqe.cdw10 & 0xFF
        if cns == ns.Cns.NAMESPACE:
            if sqe.nsid != 1:
                return SC.INVALID_NAMESPACE, 0
            data = ns.build_identify_namespace(self.ns_size, lbads=self.lbads,
                                               eui64=self.eui64)
        elif cns == ns.Cns.CONTROLLER:
            data = ns.build_identify_controller(**self.id_ctrl_fields)
        elif cns == ns.Cns.NS_DESCRIPTOR_LIST:
            if sqe.nsid != 1:
                return SC.INVALID_NAMESPACE, 0
            data = ns.build_ns_descriptor_list(eui64=self.eui64)
        elif cns == ns.Cns.ACTIVE_NS_LIST:
            if sqe.nsid in (0xFFFFFFFE, NSID_ALL):
                return SC.INVALID_NAMESPACE, 0
            data = ns.build_active_ns_list([1], sqe.nsid)
        else:
            return SC.INVALID_FIELD, 0
        status, _ = await self.xfer(sqe.prp1, sqe.prp2, ns.IDENTIFY_BYTES, True, data)
        return status, 0

    def _data_units(self, blocks):
        """SMART data units: thousands of 512-byte units, rounded up."""
        return (blocks * (1 << self.lbads) // 512 + 999) // 1000

    def _log_page(self, lid, rae):
        if lid == LogPage.ERROR_INFORMATION:
            n = self.id_ctrl_fields.get("elpe", 63) + 1
            if not rae:
                self.masked.discard(ns.AerType.ERROR)
            return ns.build_error_log(self.error_log, n)
        if lid == LogPage.SMART_HEALTH:
            be = self.backend
            if not rae:
                self.masked.discard(ns.AerType.SMART_HEALTH)
            return ns.build_smart_log(
                data_units_read=self._data_units(be.blocks_read),
                data_units_written=self._data_units(be.blocks_written),
                host_read_commands=be.reads, host_write_commands=be.writes, power_cycles=1,
                num_err_log_entries=self.error_count)
        if lid == LogPage.FIRMWARE_SLOT:
            return ns.build_fw_slot_log([self.id_ctrl_fields.get("fr", "0.1")])
        return None

    async def _get_log_page(self, sqid, sq_head, sqe):
        lid, rae = sqe.cdw10 & 0xFF, bool(sqe.cdw10 >> 15 & 1)
        numd = ((sqe.cdw11 & 0xFFFF) << 16 | sqe.cdw10 >> 16) + 1
        offset = sqe.cdw12 | sqe.cdw13 << 32
        length = 4 * numd
        if sqe.nsid not in (0, 1, NSID_ALL):
            return SC.INVALID_NAMESPACE, 0
        data = self._log_page(lid, rae)
        if data is None:
            return SC.INVALID_LOG_PAGE, 0
        if offset % 4 or offset >= len(data) or length > self.max_transfer:
            return SC.INVALID_FIELD, 0
        out = data[offset:offset + length]
        out += bytes(length - len(out))
        status, _ = await self.xfer(sqe.prp1, sqe.prp2, length, True, out)
        return status, 0

    async def _get_features(self, sqid, sq_head, sqe):
        fid, sel = sqe.cdw10 & 0xFF, (sqe.cdw10 >> 8) & 7
        if fid not in self.features:
            return SC.INVALID_FIELD, 0
        if sel > 3:
            return SC.INVALID_FIELD, 0
        if sel == 3:
            return 0, 0b100                         # changeable, not saveable, not per ns
        feats = self.features if sel == 0 else self._default_features()
        value = feats[fid]
        if fid == FeatureId.TEMPERATURE_THRESHOLD:
            tmpsel, thsel = (sqe.cdw11 >> 16) & 0xF, (sqe.cdw11 >> 20) & 3
            if tmpsel != 0 or thsel > 1:
                return SC.INVALID_FIELD, 0
            return 0, value[thsel] | tmpsel << 16 | thsel << 20
        if fid == FeatureId.INTERRUPT_VECTOR_CONFIG:
            iv = sqe.cdw11 & 0xFFFF
            if iv not in value:
                return SC.INVALID_FIELD, 0
            return 0, iv | value[iv] << 16
        return 0, value

    async def _set_features(self, sqid, sq_head, sqe):
        fid, save = sqe.cdw10 & 0xFF, bool(sqe.cdw10 >> 31)
        v = sqe.cdw11
        if fid not in self.features:
            return SC.INVALID_FIELD, 0
        if save:
            return SC.FEATURE_NOT_SAVEABLE, 0
        if sqe.nsid not in (0, NSID_ALL):
            return SC.FEATURE_NOT_NS_SPECIFIC, 0
        f = self.features
        if fid == FeatureId.ARBITRATION:
            f[fid] = v & 0xFFFFFF07
        elif fid == FeatureId.POWER_MANAGEMENT:
            if v & 0x1F > self.id_ctrl_fields.get("npss", 0):
                return SC.INVALID_FIELD, 0
            f[fid] = v & 0xFF
        elif fid == FeatureId.TEMPERATURE_THRESHOLD:
            tmpsel, thsel = (v >> 16) & 0xF, (v >> 20) & 3
            if thsel > 1 or tmpsel not in (0, 0xF):
                return SC.INVALID_FIELD, 0
            f[fid][thsel] = v & 0xFFFF
        elif fid == FeatureId.NUMBER_OF_QUEUES:
            nsqr, ncqr = v & 0xFFFF, v >> 16
            if nsqr == 0xFFFF or ncqr == 0xFFFF:
                return SC.INVALID_FIELD, 0
            if len(self.sqs) > 1 or len(self.cqs) > 1:
                return SC.COMMAND_SEQUENCE_ERROR, 0
            cap = self.n_io_queues - 1
            f[fid] = min(nsqr, cap) | min(ncqr, cap) << 16
            return 0, f[fid]
        elif fid == FeatureId.INTERRUPT_COALESCING:
            f[fid] = v & 0xFFFF
            self.dut.fw_agg_thr.value = v & 0xFF
            self.dut.fw_agg_time.value = (v >> 8) & 0xFF
        elif fid == FeatureId.INTERRUPT_VECTOR_CONFIG:
            iv, cd = v & 0xFFFF, (v >> 16) & 1
            if iv > self.n_io_queues:
                return SC.INVALID_FIELD, 0
            f[fid][iv] = cd
            await self.ivc.send(vector=iv, cd=cd)
        elif fid == FeatureId.ASYNC_EVENT_CONFIG:
            f[fid] = v & 0x3FF
        return 0, 0

    def _allocated(self):
        nq = self.features[FeatureId.NUMBER_OF_QUEUES]
        return (nq & 0xFFFF) + 1, (nq >> 16) + 1

    async def _create_io_cq(self, sqid, sq_head, sqe):
        qid, qsize = sqe.cdw10 & 0xFFFF, sqe.cdw10 >> 16
        pc, ien, iv = sqe.cdw11 & 1, (sqe.cdw11 >> 1) & 1, sqe.cdw11 >> 16
        if qid == 0 or qid > self._allocated()[1] or qid in self.cqs:
            return SC.INVALID_QID, 0
        if qsize == 0 or qsize > self.mqes:
            return SC.INVALID_QUEUE_SIZE, 0
        if not pc and not self.queue_lists:
            return SC.INVALID_FIELD, 0                  # CAP.CQR = 1
        if iv > self.n_io_queues:
            return SC.INVALID_INTERRUPT_VECTOR, 0
        if sqe.prp1 % ns.PAGE_SIZE:
            return SC.PRP_OFFSET_INVALID, 0
        extra = {}
        if self.queue_lists:
            extra["nc"] = int(not pc)
            if not pc:
                status = await self._queue_pages(self.cq_page, "cqid", qid, qsize,
                                                 ns.CQE_BYTES, sqe.prp1)
                if status:
                    return status, 0
        await self.cq_cfg.send(cqid=qid, base=0 if not pc else sqe.prp1, qsize=qsize, iv=iv,
                               ien=ien, enable=1, **extra)
        self.cqs[qid] = set()
        return 0, 0

    async def _queue_pages(self, src, key, qid, qsize, esize, prp1):
        """PC=0: read the queue's PRP list at `prp1` (one entry per page, each page aligned)
        and write the pages to the hardware's page list."""
        n = ((qsize + 1) * esize + ns.PAGE_SIZE - 1) // ns.PAGE_SIZE
        status, raw = await self.xfer(prp1, 0, 8 * n, False)
        if status:
            return status
        pages = [int.from_bytes(raw[8 * i:8 * i + 8], "little") for i in range(n)]
        if any(p % ns.PAGE_SIZE for p in pages):
            return SC.PRP_OFFSET_INVALID
        for i, p in enumerate(pages):
            await src.send(**{key: qid, "index": i, "page": p >> 12})
        return 0

    async def _create_io_sq(self, sqid, sq_head, sqe):
        qid, qsize = sqe.cdw10 & 0xFFFF, sqe.cdw10 >> 16
        pc, cqid = sqe.cdw11 & 1, sqe.cdw11 >> 16
        if qid == 0 or qid > self._allocated()[0] or qid in self.sqs:
            return SC.INVALID_QID, 0
        if qsize == 0 or qsize > self.mqes:
            return SC.INVALID_QUEUE_SIZE, 0
        if cqid == 0 or cqid not in self.cqs:
            return SC.CQ_INVALID, 0
        if not pc and not self.queue_lists:
            return SC.INVALID_FIELD, 0
        if sqe.prp1 % ns.PAGE_SIZE:
            return SC.PRP_OFFSET_INVALID, 0
        extra = {}
        if self.queue_lists:
            extra["nc"] = int(not pc)
            if not pc:
                status = await self._queue_pages(self.sq_page, "sqid", qid, qsize,
                                                 ns.SQE_BYTES, sqe.prp1)
                if status:
                    return status, 0
        await self.sq_cfg.send(sqid=qid, base=0 if not pc else sqe.prp1, qsize=qsize,
                               enable=1, cqid=cqid, **extra)
        self.sqs[qid] = cqid
        self.cqs[cqid].add(qid)
        return 0, 0

    async def _delete_io_sq(self, sqid, sq_head, sqe):
        qid = sqe.cdw10 & 0xFFFF
        if qid == 0 or qid not in self.sqs:
            return SC.INVALID_QID, 0
        cqid = self.sqs[qid]
        # Commands of the SQ the firmware holds are aborted before the handshake (the
        # hardware does not wait for them) and after it (fetched meanwhile); the handshake
        # completes once the hardware aborted the SQ's remaining entries (status 08h) and
        # drained its commands in flight. Then the Delete completes.
        await self._abort_held(qid)
        await self.sq_cfg.send(sqid=qid, base=0, qsize=0, enable=0, cqid=cqid)
        await self._abort_held(qid)
        del self.sqs[qid]
        self.cqs[cqid].discard(qid)
        return 0, 0

    async def _abort_held(self, qid):
        for item in [c for c in self.cmds if c[0] == qid]:
            self.cmds.remove(item)
            await self.complete(item[0], item[1], item[2], SC.ABORT_SQ_DELETION)

    async def _delete_io_cq(self, sqid, sq_head, sqe):
        qid = sqe.cdw10 & 0xFFFF
        if qid == 0 or qid not in self.cqs:
            return SC.INVALID_QID, 0
        if self.cqs[qid]:
            return SC.INVALID_QUEUE_DELETION, 0
        await self.cq_cfg.send(cqid=qid, base=0, qsize=0, iv=0, ien=0, enable=0)
        del self.cqs[qid]
        return 0, 0

    async def _aer(self, sqid, sq_head, sqe):
        if len(self.aers) > self.aerl:
            return SC.AER_LIMIT_EXCEEDED, 0
        self.aers.append((sqid, sq_head, sqe))
        await self._report_events(self.generation)
        return None

    async def _report_events(self, generation):
        """Complete outstanding AERs with queued, unmasked events (oldest first)."""
        while self.aers and generation == self.generation:
            ev = next((e for e in self.events if e[0] not in self.masked), None)
            if ev is None:
                return
            self.events.remove(ev)
            if self.aer_mask:
                self.masked.add(ev[0])
            sqid, sq_head, sqe = self.aers.popleft()
            await self.complete(sqid, sq_head, sqe, 0, ev[0] | ev[1] << 8 | ev[2] << 16)

    async def _keep_alive(self, sqid, sq_head, sqe):
        return 0, 0

    # Abort: the abort slot ------------------------------------------------------------------

    async def _abort_worker(self):
        while True:
            while not self.aborts:
                self.abort_event.clear()
                await self.abort_event.wait()
            sqid, sq_head, sqe = self.aborts.popleft()
            if self.n_aborts > self.acl:
                await self.complete(sqid, sq_head, sqe, SC.ABORT_LIMIT_EXCEEDED)
                continue
            self.n_aborts += 1
            cocotb.start_soon(self._abort_one(sqid, sq_head, sqe, self.generation))

    async def _abort_one(self, sqid, sq_head, sqe, generation):
        """One Abort: arm the slot, wait until the target SQ has nothing unfetched, read
        abort_hit, disarm. Commands still queued in the firmware are aborted here."""
        dut = self.dut
        await ClockCycles(dut.clk, max(1, self.fw_latency))
        async with self._slot:
            t_sqid, t_cid = sqe.cdw10 & 0xFFFF, sqe.cdw10 >> 16
            aborted = False
            if generation != self.generation:
                return
            if t_sqid in self.sqs:
                await RisingEdge(dut.clk)
                dut.fw_abort_sqid.value = t_sqid
                dut.fw_abort_cid.value = t_cid
                dut.fw_abort_arm.value = 1
                while True:
                    await RisingEdge(dut.clk)
                    await ReadOnly()
                    pending = int(dut.sq_pending.value) >> t_sqid & 1
                    if not pending or generation != self.generation:
                        break
                # The last fetched entries still go through the decoder: abort_hit is sticky
                # while armed, sample it after abort_settle cycles.
                await ClockCycles(dut.clk, max(1, self.abort_settle))
                await ReadOnly()
                aborted = bool(int(dut.abort_hit.value))
                await RisingEdge(dut.clk)
                dut.fw_abort_arm.value = 0
                if not aborted:
                    item = next((c for c in self.cmds
                                 if c[0] == t_sqid and c[2].cid == t_cid), None)
                    if item is not None:
                        self.cmds.remove(item)
                        await self.complete(item[0], item[1], item[2], SC.ABORT_REQUESTED)
                        aborted = True
            if generation != self.generation:
                return
            self.n_aborts -= 1
            await self.complete(sqid, sq_head, sqe, 0, 0 if aborted else 1)

    # I/O commands ---------------------------------------------------------------------------

    async def _dsm(self, sqid, sq_head, sqe):
        if sqe.nsid != 1:
            return SC.INVALID_NAMESPACE, 0
        nr = (sqe.cdw10 & 0xFF) + 1
        status, raw = await self.xfer(sqe.prp1, sqe.prp2, 16 * nr, False)
        if status:
            return status, 0
        ranges = ns.parse_dsm_ranges(raw, nr)
        for r in ranges:
            if r.slba + r.nlb > self.ns_size:
                return SC.LBA_OUT_OF_RANGE, 0
        if sqe.cdw11 & ns.DSM_AD:
            for r in ranges:
                self.backend.deallocate(r.slba, r.nlb)
        return 0, 0

    async def _write_zeroes(self, sqid, sq_head, sqe):
        if sqe.nsid != 1:
            return SC.INVALID_NAMESPACE, 0
        slba, nlb = sqe.slba, sqe.nlb + 1
        if slba + nlb > self.ns_size:
            return SC.LBA_OUT_OF_RANGE, 0
        self.backend.write_zeroes(slba, nlb)
        return 0, 0

    _admin = {
        AdminOpcode.IDENTIFY: _identify,
        AdminOpcode.GET_LOG_PAGE: _get_log_page,
        AdminOpcode.GET_FEATURES: _get_features,
        AdminOpcode.SET_FEATURES: _set_features,
        AdminOpcode.CREATE_IO_CQ: _create_io_cq,
        AdminOpcode.CREATE_IO_SQ: _create_io_sq,
        AdminOpcode.DELETE_IO_SQ: _delete_io_sq,
        AdminOpcode.DELETE_IO_CQ: _delete_io_cq,
        AdminOpcode.ASYNC_EVENT_REQUEST: _aer,
        AdminOpcode.KEEP_ALIVE: _keep_alive,
    }
    _io = {
        NvmOpcode.DATASET_MANAGEMENT: _dsm,
        NvmOpcode.WRITE_ZEROES: _write_zeroes,
    }
