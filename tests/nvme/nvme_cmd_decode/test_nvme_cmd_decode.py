# SPDX-License-Identifier: BSD-2-Clause
"""Tests of nvme_cmd_decode: which output an SQE leaves on, the status of an immediate
completion, and the fields of a fast-path command.

The expected output of every SQE comes from `decode()` below, the decoder's contract written
from rtl/nvme/README.md and NVMe 1.4 (opcodes 00h/01h/02h on an I/O SQ are the fast path; every
other SQE goes to the firmware unchanged; the statuses of figure 128 with DNR); the directed
test also states the expected port and status per case, so the model is not the only judge.
Outputs are checked in order (one input register, one output per SQE).
"""

import random

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly
from ssdlab_harness import LiteXCore, core_params, run

CORE = LiteXCore("tests.nvme.nvme_cmd_decode.nvme_cmd_decode_top:NvmeCmdDecodeTop",
                 toplevel="nvme_cmd_decode")
DEFAULTS = {"n_sqs": 65, "lbads": 9, "max_transfer": 131072}
SMOKE = {"n_sqs": 9, "lbads": 9, "max_transfer": 131072}

DNR = 1 << 14
SC_INVALID_FIELD = 0x02 | DNR
SC_ABORT_REQUESTED = 0x07
SC_ABORTED_SQ_DELETION = 0x08
SC_INVALID_NAMESPACE = 0x0B | DNR
SC_LBA_OUT_OF_RANGE = 0x80 | DNR
FLUSH, WRITE, READ = 0x00, 0x01, 0x02
NS_SIZE = 1 << 20                   # namespace 1, in logical blocks


def sqe(opcode, cid=0, nsid=1, slba=0, nlb=0, flags=0, prp1=0, prp2=0, fuse=0, psdt=0,
        dws=None):
    """A 64-byte SQE as a 512-bit integer (byte k at bits 8k+7:8k)."""
    dw = list(dws) if dws else [0] * 16
    dw[0] = opcode | fuse << 8 | psdt << 14 | cid << 16
    dw[1] = nsid
    dw[6], dw[7] = prp1 & 0xFFFF_FFFF, prp1 >> 32
    dw[8], dw[9] = prp2 & 0xFFFF_FFFF, prp2 >> 32
    dw[10], dw[11] = slba & 0xFFFF_FFFF, slba >> 32
    dw[12] = nlb | flags << 16
    return sum(d << 32 * n for n, d in enumerate(dw))


def decode(p, cfg, sqid, sq_head, entry):
    """The decoder's contract: (port, fields) of one SQE, or None when `drop` eats it."""
    if cfg["drop"]:
        return None
    dw = [(entry >> 32 * n) & 0xFFFF_FFFF for n in range(16)]
    opcode, fuse, psdt, cid = dw[0] & 0xFF, (dw[0] >> 8) & 3, (dw[0] >> 14) & 3, dw[0] >> 16
    nsid, slba, nlb, flags = dw[1], dw[10] | dw[11] << 32, dw[12] & 0xFFFF, dw[12] >> 16
    fast = sqid != 0 and opcode in (FLUSH, WRITE, READ)
    rw = opcode in (WRITE, READ)
    length = (nlb + 1) << p["lbads"]
    status = 0
    if sqid < p["n_sqs"] and (cfg["sq_abort"] >> sqid) & 1:
        status = SC_ABORTED_SQ_DELETION
    elif cfg["abort_arm"] and (sqid, cid) == (cfg["abort_sqid"], cfg["abort_cid"]):
        status = SC_ABORT_REQUESTED
    elif fast and (fuse or psdt or (rw and length > p["max_transfer"])):
        status = SC_INVALID_FIELD
    elif fast and nsid != 1 and not (opcode == FLUSH and nsid == 0xFFFF_FFFF):
        status = SC_INVALID_NAMESPACE
    elif fast and rw and slba + nlb + 1 > cfg["ns_size"]:
        status = SC_LBA_OUT_OF_RANGE
    if status:
        return "m_err", {"sqid": sqid, "sq_head": sq_head, "cid": cid, "status": status}
    if fast:
        return "m_fast", {"sqid": sqid, "sq_head": sq_head, "cid": cid, "opcode": opcode,
                          "nsid": nsid, "slba": slba, "nlb": nlb, "flags": flags,
                          "prp1": dw[6] | dw[7] << 32, "prp2": dw[8] | dw[9] << 32,
                          "length": 0 if opcode == FLUSH else length}
    return "m_fw", {"sqid": sqid, "sq_head": sq_head, "sqe": entry}


# Testbench ---------------------------------------------------------------------------------------

class TB:
    """Drives s_sqe and the controls on falling edges, takes the three outputs with optional
    backpressure, and records each handshake (port, fields) in order."""
    FIELDS = {"m_fast": ["sqid", "sq_head", "cid", "opcode", "nsid", "slba", "nlb", "flags",
                         "prp1", "prp2", "length"],
              "m_fw": ["sqid", "sq_head", "sqe"],
              "m_err": ["sqid", "sq_head", "cid", "status"]}

    def __init__(self, dut):
        self.dut = dut
        self.p = {**DEFAULTS, **core_params()}
        self.rng = random.Random(cocotb.RANDOM_SEED)
        dut._log.info("params %s seed %d", self.p, cocotb.RANDOM_SEED)
        self.cfg = {"ns_size": NS_SIZE, "sq_abort": 0, "abort_arm": 0, "abort_sqid": 0,
                    "abort_cid": 0, "drop": 0}
        self.seen = []              # (port, fields) in handshake order
        self.expected = []
        self.ready_prob = 1.0
        self.idle_prob = 0.0
        cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
        dut.s_sqe_valid.value = 0
        for port in self.FIELDS:
            getattr(dut, f"{port}_ready").value = 0
        self.apply()

    def apply(self):
        for name, value in self.cfg.items():
            getattr(self.dut, name).value = value

    async def reset(self):
        self.dut.rst.value = 1
        for _ in range(3):
            await FallingEdge(self.dut.clk)
        self.dut.rst.value = 0

    async def cycle(self, item=None):
        """One clock. Offers `item` (sqid, sq_head, sqe) on s_sqe until it is taken; returns
        when taken (or after one cycle with no item). Records output handshakes."""
        dut = self.dut
        while True:
            await FallingEdge(dut.clk)
            offer = item is not None and self.rng.random() >= self.idle_prob
            dut.s_sqe_valid.value = int(offer)
            if offer:
                dut.s_sqe_sqid.value, dut.s_sqe_sq_head.value, dut.s_sqe_sqe.value = item
            for port in self.FIELDS:
                getattr(dut, f"{port}_ready").value = int(self.rng.random() < self.ready_prob)
            await ReadOnly()
            for port, names in self.FIELDS.items():
                if int(getattr(dut, f"{port}_valid").value) and \
                        int(getattr(dut, f"{port}_ready").value):
                    self.seen.append((port, {n: int(getattr(dut, f"{port}_{n}").value)
                                             for n in names}))
            if item is None or (offer and int(dut.s_sqe_ready.value)):
                return

    async def send(self, sqid, sq_head, entry):
        self.expected.append(decode(self.p, self.cfg, sqid, sq_head, entry))
        await self.cycle((sqid, sq_head, entry))

    async def flush(self, cycles=20):
        """Idle until the pipe has drained, then compare everything sent so far."""
        want = [e for e in self.expected if e is not None]
        for _ in range(cycles * 8):
            await self.cycle()
            if len(self.seen) >= len(want):
                break
        for _ in range(3):
            await self.cycle()
        assert len(self.seen) == len(want), \
            f"{len(self.seen)} outputs for {len(want)} expected: {self.seen[len(want):]}"
        for i, (got, exp) in enumerate(zip(self.seen, want, strict=True)):
            assert got == exp, f"SQE {i}: got {got}, expected {exp}"
        self.seen, self.expected = [], []

    async def configure(self, **cfg):
        await self.flush()
        await FallingEdge(self.dut.clk)     # out of the read-only phase flush() ends in
        self.cfg.update(cfg)
        self.apply()


# Tests -------------------------------------------------------------------------------------------

@cocotb.test()
async def test_classes_and_statuses(dut):
    """One SQE per rule, with the port and status the contract names."""
    tb = TB(dut)
    await tb.reset()
    p = tb.p
    big = p["max_transfer"] >> p["lbads"]       # blocks in the largest legal transfer
    cases = [
        # (sqid, sqe, port, status)
        (1, sqe(READ, cid=1, nlb=7), "m_fast", None),
        (1, sqe(WRITE, cid=2, nlb=big - 1), "m_fast", None),     # exactly MDTS
        (2, sqe(FLUSH, cid=3, nsid=0xFFFF_FFFF, nlb=0xFFFF), "m_fast", None),
        (0, sqe(READ, cid=4), "m_fw", None),                     # admin SQ: opcode 02h is
        (0, sqe(0x06, cid=5), "m_fw", None),                     # Get Log Page; Identify
        (1, sqe(0x09, cid=6), "m_fw", None),                     # Dataset Management
        (1, sqe(0x7F, cid=7), "m_fw", None),                     # unknown: firmware says 01h
        (1, sqe(0xFF, cid=8, fuse=1), "m_fw", None),             # not fast: not checked here
        (1, sqe(READ, cid=9, fuse=1), "m_err", SC_INVALID_FIELD),
        (1, sqe(WRITE, cid=10, psdt=1), "m_err", SC_INVALID_FIELD),
        (1, sqe(READ, cid=11, nlb=big), "m_err", SC_INVALID_FIELD),  # MDTS + 1 block
        (1, sqe(READ, cid=12, nsid=2), "m_err", SC_INVALID_NAMESPACE),
        (1, sqe(WRITE, cid=13, nsid=0xFFFF_FFFF), "m_err", SC_INVALID_NAMESPACE),
        (1, sqe(FLUSH, cid=14, nsid=0), "m_err", SC_INVALID_NAMESPACE),
        (1, sqe(READ, cid=15, slba=NS_SIZE - 8, nlb=7), "m_fast", None),  # ends at the end
        (1, sqe(READ, cid=16, slba=NS_SIZE - 8, nlb=8), "m_err", SC_LBA_OUT_OF_RANGE),
        (1, sqe(WRITE, cid=17, slba=(1 << 64) - 1), "m_err", SC_LBA_OUT_OF_RANGE),
        (1, sqe(FLUSH, cid=18, slba=(1 << 64) - 1), "m_fast", None),   # Flush has no range
        (1, sqe(READ, cid=19, nsid=2, fuse=1), "m_err", SC_INVALID_FIELD),  # field first
        (1, sqe(READ, cid=20, nsid=2, slba=NS_SIZE), "m_err", SC_INVALID_NAMESPACE),
    ]
    for i, (sqid, entry, _, _) in enumerate(cases):
        await tb.send(sqid, i, entry)
    exp = list(tb.expected)
    await tb.flush()        # the model agrees with the DUT; now the table agrees with both
    for (sqid, _, port, status), e in zip(cases, exp, strict=True):
        assert e[0] == port, (sqid, e)
        if status is not None:
            assert e[1]["status"] == status, (sqid, e)

    # Abort mechanisms apply to every queue and every opcode, SQ deletion first.
    await tb.configure(sq_abort=1 << 3, abort_arm=1, abort_sqid=2, abort_cid=0x55)
    assert int(dut.abort_hit.value) == 0
    await tb.send(3, 0, sqe(READ, cid=1))
    await tb.send(3, 1, sqe(0x7F, cid=0x55))
    await tb.send(0, 2, sqe(0x06, cid=2))                    # admin SQ, not aborted
    await tb.send(2, 3, sqe(WRITE, cid=0x54))                # not the slot's CID
    await tb.send(2, 4, sqe(0x7F, cid=0x55, fuse=1))         # the slot wins over firmware
    exp = list(tb.expected)
    await tb.flush()
    assert [e[0] for e in exp] == ["m_err", "m_err", "m_fw", "m_fast", "m_err"]
    assert [e[1].get("status") for e in exp if e[0] == "m_err"] == \
        [SC_ABORTED_SQ_DELETION, SC_ABORTED_SQ_DELETION, SC_ABORT_REQUESTED]
    assert int(dut.abort_hit.value) == 1, "abort_hit not raised by the slot's SQE"
    await tb.configure(abort_arm=0, sq_abort=0)
    await tb.cycle()
    assert int(dut.abort_hit.value) == 0, "abort_hit held after the slot was disarmed"

    # drop: SQEs are consumed, nothing leaves.
    await tb.configure(drop=1)
    for i in range(4):
        await tb.send(1, i, sqe(READ, cid=i))
    await tb.configure(drop=0)


@cocotb.test()
async def test_random_fields(dut):
    """Seeded random SQEs (fast path mostly, with every error and firmware case mixed in),
    with idle cycles and backpressure on all three outputs; every field compared."""
    tb = TB(dut)
    await tb.reset()
    p, rng = tb.p, tb.rng
    tb.ready_prob, tb.idle_prob = 0.6, 0.3
    big = p["max_transfer"] >> p["lbads"]
    for n in range(300):
        if n % 100 == 0:
            await tb.configure(ns_size=rng.choice([NS_SIZE, 1 << 40, rng.randrange(1, 1 << 64)]),
                               sq_abort=rng.choice([0, rng.getrandbits(p["n_sqs"])]),
                               abort_arm=rng.randrange(2), abort_sqid=rng.randrange(4),
                               abort_cid=rng.randrange(4))
        opcode = rng.choice([READ, WRITE, FLUSH] * 4 + [rng.randrange(256)])
        nlb = rng.choice([0, 7, big - 1, big, rng.randrange(1 << 16)])
        slba = rng.choice([0, rng.randrange(NS_SIZE), NS_SIZE - nlb - 1, NS_SIZE - nlb,
                           rng.getrandbits(64)])
        entry = sqe(opcode, cid=rng.randrange(1 << 16) if rng.random() < 0.8 else rng.randrange(4),
                    nsid=rng.choice([1] * 8 + [0, 2, 0xFFFF_FFFF]), slba=slba % (1 << 64),
                    nlb=nlb, flags=rng.getrandbits(16), prp1=rng.getrandbits(64),
                    prp2=rng.getrandbits(64), fuse=rng.choice([0] * 9 + [1, 2, 3]),
                    psdt=rng.choice([0] * 9 + [1, 2]),
                    dws=[rng.getrandbits(32) for _ in range(16)])
        sqid = rng.choice([0, 1, 2, 3, p["n_sqs"] - 1, rng.randrange(1 << 16)])
        await tb.send(sqid, rng.randrange(1 << 16), entry)
    await tb.flush()


# pytest entry ------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_nvme_cmd_decode():
    run(CORE.with_params(**SMOKE), __file__)


@pytest.mark.full
@pytest.mark.parametrize("params", [{"n_sqs": 65, "lbads": 12, "max_transfer": 8192},
                                    {"n_sqs": 1, "lbads": 10, "max_transfer": 1 << 24}],
                         ids=["n_sqs65-lbads12", "n_sqs1-mdts16m"])
def test_nvme_cmd_decode_sweep(params):
    run(CORE.with_params(**params), __file__)


@pytest.mark.smoke
@pytest.mark.parametrize("kwargs,field", [
    ({"n_sqs": 0}, "n_sqs"), ({"n_sqs": 66}, "n_sqs"), ({"lbads": 8}, "lbads"),
    ({"lbads": 13}, "lbads"), ({"max_transfer": 4096}, "max_transfer"),
    ({"max_transfer": 3 * 8192}, "max_transfer"), ({"max_transfer": True}, "max_transfer"),
])
def test_nvme_cmd_decode_bad_params(kwargs, field):
    from rtl.nvme.nvme_cmd_decode import NvmeCmdDecode
    with pytest.raises(ValueError, match=rf"NvmeCmdDecode: {field}="):
        NvmeCmdDecode(**kwargs)
