# SPDX-License-Identifier: BSD-2-Clause
"""Tests of ftl_read_engine: the FTL's hardware read path.

The test is the engine's whole world: the front end (random requests on s_req, each tag
reused only after its completion), the map (a dict of map words answering m_map in order
after 1..3 cycles), the firmware (takes m_fw with backpressure and completes what it gets
some time later) and the flash back end (takes m_op with backpressure, completes each READ
after 5..300 cycles in any order, some with FAIL). The expected READs of a request come from
`expected_reads`, written from the firmware's read path (sw/firmware/ftl.c do_read: the
division / modulo decode of a physical unit number, the merge of following units of one plane
page), not from the RTL's bit slicing. What is checked:

- a request goes to the firmware, unchanged and in order, exactly when it is not a whole-unit
  Read in range of namespace 1 of at most handle_slots units, or one of its map words is
  unmapped or in the write buffer;
- otherwise the READs issued for it are exactly the expected ones (channel, way, LUN, plane
  mask, block, page, column, length, buffer slot, the block's SLC bit), never more than
  die_credits outstanding on a die, tags only in the engine's range;
- after its last READ completed it ends once: completed with success when every READ
  succeeded, else handed back to the firmware unchanged (which reads it again with read
  retry and reports what it finds; the engine reports no error itself);
- the counters (begun, finished, reads, lbas, punts, handbacks; corrected and max_bits over
  the READs that passed with ecc_bits), `idle` and `quiet` at the end.
"""

import random
from collections import defaultdict, deque

import cocotb
import pytest
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, FallingEdge, ReadOnly, RisingEdge
from ssdlab_harness import AmaranthCore, core_params, run, struct_bits, struct_fields
from ssdlab_streams import StreamSink, StreamSource

from rtl.ftl.ftl_read_engine import (
    MAP_NONE,
    MAP_WB,
    MAX_READ_UNITS,
    FtlReadEngine,
    cpl_layout,
    req_layout,
    slc_layout,
)
from rtl.nand.nand_die_scheduler import FlashCompletion, flash_op_layout
from spec.nvme import NvmOpcode

PARAMS = dict(tag_width=4, handle_slots=8, lbads=12, n_channels=3, n_ways=2, n_luns=1,
              units_per_page=4, planes=2, pages_per_block=16, blocks=16, map_addr_width=16,
              ftag_base=192, n_ftags=8, die_credits=2, max_len=18432)
N_LPN = 1 << 12             # logical units of the namespace
REFRESH_BITS = 32           # a READ with this many bits corrected names its block
N_REQUESTS = 600


def expected_reads(p, tag, words, slc):
    """The READs of a request whose map words are `words` (sw/firmware/ftl.c do_read)."""
    upp, pu = p["units_per_page"], p["units_per_page"] * p["planes"]
    ppb, nblk = p["pages_per_block"], p["blocks"]
    upb = ppb * pu
    n_ch, targets = p["n_channels"], p["n_channels"] * p["n_ways"]
    max_run = min(upp, MAX_READ_UNITS, p["max_len"] // 4096)
    plane_bits = p["planes"].bit_length() - 1
    multi = p.get("multi_plane", True) and p["planes"] > 1 and max_run == upp
    ops, i = [], 0

    def read(v, i, planes, col, k):
        u, b = v % pu, v // upb
        plane, die = u // upp, b // nblk
        ops.append(dict(channel=die % n_ch, way=die // n_ch % p["n_ways"], lun=die // targets,
                        plane_mask=((1 << planes) - 1) << plane,
                        block=(b % nblk) << plane_bits | plane,
                        page=v // pu % ppb, column=col * 4096, length=k * 4096,
                        buffer=(tag * p["handle_slots"] + i - plane * upp) % (1 << 16),
                        slc=slc.get(b, 0), raw=0))     # data bytes: ECC ops

    while i < len(words):
        v = words[i]
        u = v % pu
        col = u % upp
        k = 1
        if multi and col == 0:
            # from a plane page's start: on over whole plane pages of the multi-plane page
            while u + k < pu and i + k < len(words) and words[i + k] == v + k:
                k += 1
            head, rest = divmod(k, upp)
            if head:
                read(v, i, head, 0, upp)
                if rest:
                    read(v + head * upp, i + head * upp, 1, 0, rest)
            else:
                read(v, i, 1, 0, k)
        else:
            while (col + k < upp and k < max_run and i + k < len(words)
                   and words[i + k] == v + k):
                k += 1
            read(v, i, 1, col, k)
        i += k
    return ops


class TB:
    def __init__(self, dut, rng):
        self.dut, self.rng = dut, rng
        self.p = p = {**PARAMS, **core_params()}
        self.spu = 1 << (12 - p["lbads"])
        self.n_dies = p["n_channels"] * p["n_ways"] * p["n_luns"]
        self.raw_units = self.n_dies * p["blocks"] * p["pages_per_block"] * \
            p["units_per_page"] * p["planes"]
        self.op_layout = flash_op_layout(p["max_len"], max(1, (p["n_channels"] - 1)
                                                          .bit_length()))
        self.map = {}
        self.slc = {}
        self.map_q = deque()            # (due cycle, word)
        self.cycle = 0
        self.fw_got = []                # requests the firmware took
        self.ops = defaultdict(list)    # front-end tag -> READs issued
        self.out = {}                   # flash tag -> (front-end tag, die, block index)
        self.per_die = defaultdict(int)
        self.per_tag = defaultdict(int)
        self.fail = defaultdict(bool)
        self.owned = {}                 # front-end tag -> request the engine took
        self.completions = []           # (tag, status)
        self.handed = []                # requests handed back (a READ failed)
        self.done_reqs = []             # requests completed by the engine
        self.flash_q = []               # (due cycle, flash tag, fail)
        self.corrected, self.max_bits = 0, 0    # READs passed with bits corrected, most bits
        self.drifting = set()           # blocks of READs passed with >= REFRESH_BITS corrected
        self.last_drifting = None
        self.hints = []                 # the engine's refresh hints, as taken
        self.free_tags = list(range(1 << p["tag_width"]))
        self.current_hw_tag = None
        self.n_ops = 0
        self.n_multi = 0                # READs of more than one plane

    def start(self):
        dut, rng = self.dut, self.rng
        self.req = StreamSource(dut, "s_req", rng, idle=0.3)
        self.slc_src = StreamSource(dut, "s_slc", rng, idle=0.0)
        StreamSink(dut, "m_map", rng, self._map_read, pause=0.2)
        StreamSink(dut, "m_fw", rng, self._fw_take, pause=0.3)
        StreamSink(dut, "m_op", rng, self._op, pause=0.2)
        StreamSink(dut, "m_cpl", rng, self._cpl, pause=0.2)
        dut.s_map__valid.value = 0
        dut.s_fcpl__valid.value = 0
        cocotb.start_soon(self._clock_work())
        cocotb.start_soon(self._take_hints())

    async def _take_hints(self):
        """The firmware's poll of the refresh hint: now and then, take it and ack."""
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            take = int(dut.hint_valid.value) and self.rng.random() < 0.2
            if take:
                self.hints.append(int(dut.hint.value))
            await FallingEdge(dut.clk)
            dut.hint_ack.value = int(bool(take))

    # -- the map ---------------------------------------------------------------------------
    def _map_read(self, lpn):
        due = max(self.cycle + self.rng.randint(1, 3), self.map_q[-1][0] + 1 if self.map_q
                  else 0)
        self.map_q.append((due, self.map.get(lpn, MAP_NONE)))

    # -- the firmware ----------------------------------------------------------------------
    def _fw_take(self, bits):
        f = struct_fields(req_layout(self.p["tag_width"]), bits)
        t = f["tag"]
        if t in self.owned:             # handed back: all its READs back, one failed
            assert f == self.owned.pop(t), f"tag {t} handed back changed: {f}"
            assert self.fail[t], f"tag {t} handed back with no failed READ"
            assert self.per_tag[t] == 0, f"tag {t} handed back with {self.per_tag[t]} READs out"
            self.handed.append(f)
        else:
            self.fw_got.append(f)
        # the firmware answers it later: its tag is free again then
        cocotb.start_soon(self._fw_done(f["tag"]))

    async def _fw_done(self, tag):
        await ClockCycles(self.dut.clk, self.rng.randint(1, 40))
        self.free_tags.append(tag)

    # -- the flash back end ----------------------------------------------------------------
    def _op(self, bits):
        f = struct_fields(self.op_layout, bits)
        p = self.p
        ftag = f.pop("tag")
        assert f.pop("op") == 0, "not a READ"
        assert p["ftag_base"] <= ftag < p["ftag_base"] + p["n_ftags"], f"flash tag {ftag}"
        assert ftag not in self.out, f"flash tag {ftag} reused while outstanding"
        owner = self.current_hw_tag     # the engine issues one request's READs at a time
        die = f["channel"] + p["n_channels"] * (f["way"] + p["n_ways"] * f["lun"])
        self.per_die[die] += 1
        assert self.per_die[die] <= p["die_credits"], f"die {die}: {self.per_die[die]} READs"
        self.per_tag[owner] += 1
        bidx = die * p["blocks"] + (f["block"] >> (p["planes"].bit_length() - 1))
        self.out[ftag] = (owner, die, bidx)
        self.ops[owner].append(f)
        self.n_ops += 1
        self.n_multi += bin(f["plane_mask"]).count("1") > 1
        fail = self.rng.random() < 0.04
        self.flash_q.append((self.cycle + self.rng.randint(5, 300), ftag, fail))

    def _cpl(self, bits):
        f = struct_fields(cpl_layout(self.p["tag_width"]), bits)
        t = f["tag"]
        assert self.per_tag[t] == 0, f"tag {t} completed with {self.per_tag[t]} READs out"
        assert t in self.owned, f"completion of tag {t}, not the engine's"
        assert not self.fail[t] and f["status"] == 0, \
            f"tag {t}: status {f['status']:#x}, failed READ {self.fail[t]}"
        self.done_reqs.append(self.owned.pop(t))
        self.completions.append((t, f["status"]))
        self.free_tags.append(t)

    async def _clock_work(self):
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            self.cycle += 1
            if self.map_q and self.map_q[0][0] <= self.cycle:
                dut.s_map__valid.value = 1
                dut.s_map__payload.value = self.map_q.popleft()[1]
            else:
                dut.s_map__valid.value = 0
            due = [e for e in self.flash_q if e[0] <= self.cycle]
            if due:
                e = self.rng.choice(due)
                self.flash_q.remove(e)
                _, ftag, fail = e
                owner, die, bidx = self.out.pop(ftag)
                self.per_die[die] -= 1
                self.per_tag[owner] -= 1
                self.fail[owner] |= fail
                # a passed READ may carry corrected bits; a failed one is a program-style
                # FAIL or the ECC's ecc_fail (its ecc_bits count nothing)
                bits = self.rng.choice([0, 0, 0, 1, 5, 32, 127])
                ecc_fail = fail and self.rng.random() < 0.5
                if bits and not fail:
                    self.corrected += 1
                    self.max_bits = max(self.max_bits, bits)
                if bits >= REFRESH_BITS and not fail:
                    self.drifting.add(bidx)
                    self.last_drifting = bidx
                dut.s_fcpl__valid.value = 1
                dut.s_fcpl__payload.value = struct_bits(
                    FlashCompletion, tag=ftag, fail=int(fail and not ecc_fail),
                    ecc_fail=int(ecc_fail), ecc_bits=bits,
                    status=0xE1 if fail and not ecc_fail else 0xE0)
            else:
                dut.s_fcpl__valid.value = 0


def _map_image(tb, rng):
    """Map words: runs of consecutive units (sequential data, crossing plane pages), single
    units, and some unmapped or write-buffer words."""
    lpn = 0
    while lpn < N_LPN:
        kind = rng.random()
        n = rng.randint(1, 20)
        if kind < 0.05:
            for i in range(n):
                tb.map[lpn + i] = MAP_WB | rng.randrange(64)
        elif kind < 0.1:
            pass                                        # unmapped
        elif kind < 0.55:
            start = rng.randrange(tb.raw_units - n)
            if rng.random() < 0.3:                      # from a multi-plane page's start
                pu = tb.p["units_per_page"] * tb.p["planes"]
                start -= start % pu
            for i in range(n):
                tb.map[lpn + i] = start + i
        else:
            for i in range(n):
                tb.map[lpn + i] = rng.randrange(tb.raw_units)
        lpn += n


@cocotb.test(timeout_time=200, timeout_unit="ms")
async def test_reads(dut):
    seed = cocotb.RANDOM_SEED
    rng = random.Random(seed)
    dut._log.info("seed %d", seed)
    tb = TB(dut, rng)
    p = tb.p
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start())
    dut.rst.value = 1
    dut.enable.value = 1
    dut.refresh_bits.value = REFRESH_BITS
    dut.hint_ack.value = 0
    ns_lbas = N_LPN * tb.spu - rng.randrange(tb.spu)        # the last unit partly outside
    dut.ns_lbas.value = ns_lbas
    tb.start()
    await ClockCycles(dut.clk, 3)
    dut.rst.value = 0
    _map_image(tb, rng)
    blocks_total = tb.n_dies * p["blocks"]
    slc_bits = slc_layout(FtlReadEngine(**p).block_index_bits)
    for b in rng.sample(range(blocks_total), blocks_total // 4):
        tb.slc[b] = 1
        tb.slc_src.put(struct_bits(slc_bits, block=b, slc=1))
    await ClockCycles(dut.clk, blocks_total + 5)

    layout = req_layout(p["tag_width"])
    pu = p["units_per_page"] * p["planes"]
    page_starts = [lpn for lpn in range(N_LPN - 2 * pu) if lpn in tb.map
                   and tb.map[lpn] < MAP_WB and tb.map[lpn] % pu == 0
                   and tb.map.get(lpn + 1) == tb.map[lpn] + 1]
    want_fw = []
    hw_count = 0
    for n_put in range(1, N_REQUESTS + 1):
        while not tb.free_tags:
            await RisingEdge(dut.clk)
        tag = tb.free_tags.pop(rng.randrange(len(tb.free_tags)))
        kind = rng.random()
        spu = tb.spu
        units = rng.choice([1, 1, 1, 2, 3, 4, 5, 8, p["handle_slots"]])
        slba = rng.randrange(N_LPN - units) * spu
        if rng.random() < 0.2 and page_starts:
            # sequential data from a multi-plane page's start: whole planes, or planes and
            # a part of the next (multi-plane READs, and a head and a rest)
            units = min(p["handle_slots"], rng.randint(2, 2 * pu))
            slba = rng.choice(page_starts) * spu
        nlb = units * spu - 1
        opcode, nsid = NvmOpcode.READ, 1
        if kind < 0.05:
            opcode = rng.choice([NvmOpcode.WRITE, NvmOpcode.FLUSH, 0x7F])
        elif kind < 0.08:
            nsid = rng.choice([0, 2, 0xFFFFFFFF])
        elif kind < 0.10:
            slba = N_LPN * spu - units * spu + rng.randrange(1, spu + 1)   # past the end
        elif kind < 0.12 and spu > 1:
            slba += rng.randrange(1, spu)                                    # unaligned
        elif kind < 0.14:
            nlb = (p["handle_slots"] + 1) * spu - 1                         # too many units
            slba = 0
        elif kind < 0.16 and spu > 1:
            nlb -= rng.randrange(1, spu)                                     # partial unit
        req = dict(tag=tag, opcode=int(opcode), nsid=nsid, slba=slba, nlb=nlb,
                   flags=rng.getrandbits(16), sqid=rng.randrange(1, 65),
                   cid=rng.getrandbits(16))
        n_lbas = nlb + 1
        takes = (opcode == NvmOpcode.READ and nsid == 1 and slba + n_lbas <= ns_lbas
                 and slba % spu == 0 and n_lbas % spu == 0
                 and n_lbas // spu <= p["handle_slots"])
        words = [tb.map.get(slba // spu + i, MAP_NONE) for i in range(n_lbas // spu)] \
            if takes else []
        want = None
        if takes and not any(w & MAP_WB for w in words):
            hw_count += 1
            tb.current_hw_tag = tag
            tb.owned[tag] = req
            want = expected_reads(p, tag, words, tb.slc)
            tb.ops[tag] = []
            tb.fail[tag] = False
        else:
            want_fw.append(req)
        tb.req.put(struct_bits(layout, **req))
        # the engine issues one request at a time: wait until this one's READs are all out
        # (or it went to the firmware), then compare them
        while True:
            await ReadOnly()
            if int(dut.finished.value) == n_put % (1 << 16):
                break
            await RisingEdge(dut.clk)
        await RisingEdge(dut.clk)
        if want is not None:
            assert tb.ops[tag] == want, f"tag {tag}: READs\n{tb.ops[tag]}\nexpected\n{want}"

    for _ in range(20000):
        await RisingEdge(dut.clk)
        if not tb.flash_q and not tb.owned and len(tb.fw_got) == len(want_fw):
            break
    await ClockCycles(dut.clk, 5)
    await ReadOnly()
    assert tb.fw_got == want_fw, "the requests the firmware got differ from the expected"
    assert not tb.owned, f"{len(tb.owned)} requests never ended"
    n_err = len(tb.handed)
    assert len(tb.completions) + n_err == hw_count, \
        f"{len(tb.completions)} completed + {n_err} handed back of {hw_count}"
    assert int(dut.reads.value) == len(tb.completions)
    assert int(dut.handbacks.value) == n_err
    assert int(dut.corrected.value) == tb.corrected and tb.corrected > 0
    assert int(dut.max_bits.value) == tb.max_bits
    # refresh hints: only blocks whose READ passed with >= REFRESH_BITS; the latest one
    # taken or still waiting
    assert tb.hints and set(tb.hints) <= tb.drifting, (tb.hints, tb.drifting)
    waiting = int(dut.hint.value) if int(dut.hint_valid.value) else None
    assert tb.last_drifting in (waiting, tb.hints[-1]), (tb.last_drifting, waiting, tb.hints)
    done_lbas = sum(r["nlb"] + 1 for r in tb.done_reqs)
    assert int(dut.lbas.value) == done_lbas, f"lbas {int(dut.lbas.value)}, want {done_lbas}"
    assert int(dut.quiet.value) == 1
    assert int(dut.punts.value) == len(want_fw)
    assert int(dut.begun.value) == int(dut.finished.value) == N_REQUESTS % (1 << 16)
    assert int(dut.idle.value) == 1
    assert n_err > 0 and hw_count > N_REQUESTS // 2 and len(want_fw) > N_REQUESTS // 10, \
        "the random mix missed a case"
    multi = FtlReadEngine(**p).multi_plane
    assert (tb.n_multi > 0) == multi, f"{tb.n_multi} multi-plane READs"
    dut._log.info("%d requests: %d read in hardware (%d READs, %d multi-plane, %d with a "
                  "failed READ, handed back), %d to the firmware", N_REQUESTS, hw_count, tb.n_ops,
                  tb.n_multi, n_err, len(want_fw))


def core(**params):
    return AmaranthCore("rtl.ftl.ftl_read_engine:FtlReadEngine", toplevel="ftl_read_engine",
                        params={**PARAMS, **params})


@pytest.mark.smoke
def test_ftl_read_engine_params():
    """Illegal parameters stop elaboration with a message naming the parameter."""
    for name, value in (("tag_width", 0), ("handle_slots", 65), ("lbads", 13),
                        ("n_channels", 33), ("units_per_page", 3), ("planes", 3),
                        ("pages_per_block", 24), ("blocks", 1 << 16), ("n_ftags", 6),
                        ("ftag_base", 250), ("die_credits", 0), ("max_len", 100),
                        ("n_ways", True), ("multi_plane", 1)):
        with pytest.raises(ValueError, match=name):
            FtlReadEngine(**{name: value})


@pytest.mark.smoke
def test_ftl_read_engine():
    run(core(), __file__)


@pytest.mark.full
@pytest.mark.parametrize("params", [
    dict(lbads=9, n_luns=2, die_credits=1),
    dict(units_per_page=2, planes=4, n_channels=4, n_ways=1, n_ftags=4),
    dict(units_per_page=1, planes=1, handle_slots=32, n_ftags=32, die_credits=4),
    dict(multi_plane=False),
], ids=["lba512-luns2", "4planes", "1unit-pages", "plane-by-plane"])
def test_ftl_read_engine_sweep(params):
    run(core(**params), __file__)
