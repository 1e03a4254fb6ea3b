# SPDX-License-Identifier: BSD-2-Clause
"""soc/nand_emulation.py: NandEmulatorBackdoor, the CSRs of the emulators' block-table
backdoor, in Migen's simulator against a model of each channel's emulator side.

The model is the emulator's handshake as rtl/nand/nand_emulator_decoder.py (IDLE) and
nand_emulator_tables.py (BACKDOOR) build it: in IDLE with `bd_valid` it reads the entry at
`bd_index` and goes to BACKDOOR, where `bd_ready` is high for one cycle and the entry is written
(op 0 whole, 1 its P/E count, 2 its bad bit); outside IDLE (a bus event being served, for a
seeded number of cycles) it does not look at `bd_valid`. Its block table is indexed the way
the emulator's is (block | LUN | way, nand_emulator_tables.build).

Checked, on the default drive's emulated part at several channels x ways: each `go` is
exactly one operation on the selected channel's emulator and on the block named (no other
channel or block touched, none done twice), whatever the engine's idle pattern; `status.busy`
until it is done and `done` counts it; the registers are taken at `go` (changed while busy,
the operation keeps the old ones); a `go` while busy, or naming a channel, way, LUN or block
the build does not have, does nothing and sets `status.refused`, cleared by the next `go`
taken; and the parameter check names n_channels.
"""

import os
import random

import pytest
from migen import run_simulation

from soc.nand_emulation import BD_OPS, NandEmulatorBackdoor, emulated_part

SEED = int(os.environ.get("SEED") or random.randrange(1 << 30))


def probe(n_ways):
    """A NandEmulator of the default drive's emulated part (sizes only, never elaborated)."""
    from rtl.nand.nand_emulator import NandEmulator
    from sw.ssdlab.flows.sim import drive_config
    cfg = drive_config("default", {"n_channels": 2, "nand_model": "emulator",
                                   "sdr_fallback": True})     # the emulator speaks SDR
    emu = NandEmulator(emulated_part(cfg), n_ways=n_ways, clk_freq=cfg.sys_clk_freq,
                       dram_data_width=128, dram_addr_width=40)
    emu._MustUse__silence = True
    return emu


class EmulatorModel:
    """One channel's emulator side of the backdoor: IDLE / BACKDOOR, busy spells (a bus
    event being served) drawn from `rng`, and the block table the operations write."""

    def __init__(self, emu, port, rng, busy_rate):
        g = emu.g
        self.bb, self.lb = g.block_bits, max(1, g.lun_bits)
        self.pe_mask = (1 << 20) - 1
        self.pe_off = dict((n, f.offset) for n, f in emu.entry)["pe"]
        self.bad_off = dict((n, f.offset) for n, f in emu.entry)["bad"]
        self.port, self.rng, self.busy_rate = port, rng, busy_rate
        self.table = {}             # index -> entry value (absent: 0)
        self.ops = []               # (op, index) in order
        self.state, self.engine = "IDLE", 0

    def index(self, way, lun, block):
        return (way << (self.lb + self.bb)) | (lun << self.bb) | block

    def step(self):
        """One clock edge: what the emulator does on it, from the cycle before it."""
        p = self.port
        valid = yield p["valid"]
        if self.state == "BACKDOOR":
            op, idx, ent = (yield p["op"]), (yield p["index"]), (yield p["entry"])
            old = self.table.get(idx, 0)
            if op == BD_OPS["entry"]:
                new = ent
            elif op == BD_OPS["pe"]:
                mask = self.pe_mask << self.pe_off
                new = (old & ~mask) | (ent & mask)
            else:
                new = old | (1 << self.bad_off)
            self.table[idx] = new
            self.ops.append((op, idx))
            self.state = "IDLE"
        elif self.engine:
            self.engine -= 1
        elif valid:
            self.state = "BACKDOOR"
        elif self.rng.random() < self.busy_rate:
            self.engine = self.rng.randrange(1, 12)
        yield p["ready"].eq(int(self.state == "BACKDOOR"))


def run(n_channels, n_ways, body, busy_rate=0.3, seed=SEED):
    emu = probe(n_ways)
    dut = NandEmulatorBackdoor(n_channels, emu)
    rng = random.Random(seed)
    models = [EmulatorModel(emu, dut.bd[c], rng, busy_rate) for c in range(n_channels)]
    out = {"done": False}

    def emulators():
        while not out["done"]:
            for m in models:
                yield from m.step()
            yield

    def host():
        yield from body(dut, models, out)
        out["done"] = True

    run_simulation(dut, [emulators(), host()])
    return dut, models, out


def target(channel, way, lun=0):
    return channel | way << 8 | lun << 16


def setup(dut, channel, way, lun, block, op, entry=0):
    # LiteX's own simulation writes (storage and fields: no CSR bank here)
    yield from dut._target.write(target(channel, way, lun))
    yield from dut._block.write(block)
    yield from dut._op.write(op)
    yield from dut._entry.write(entry)
    yield


def go(dut):
    yield dut._go.re.eq(1)
    yield
    yield dut._go.re.eq(0)
    yield


def wait_done(dut, limit=200):
    for n in range(limit):
        if not ((yield dut._status.fields.busy)):
            return n
        yield
    raise AssertionError(f"the backdoor stayed busy {limit} cycles")


@pytest.mark.smoke
@pytest.mark.parametrize("n_channels,n_ways", [(2, 4), (3, 8), (1, 1)])
def test_each_go_is_one_operation_on_its_block(n_channels, n_ways):
    """Seeded operations over every channel: the model's tables end as the operations say,
    one operation per go, on the channel and block named, counted by `done`."""
    print(f"SEED={SEED}")
    rng = random.Random(f"{SEED}-{n_channels}-{n_ways}")
    emu = probe(n_ways)
    n_blocks = emu.g.blocks_per_lun
    pe_off = dict((n, f.offset) for n, f in emu.entry)["pe"]
    plan = []
    for _ in range(40):
        c, w, b = rng.randrange(n_channels), rng.randrange(n_ways), rng.randrange(n_blocks)
        op = rng.choice(list(BD_OPS.values()))
        entry = rng.randrange(1 << emu.entry.size) if op == 0 else \
            rng.randrange(1 << 20) << pe_off
        plan.append((c, w, b, op, entry))

    def body(dut, models, out):
        for c, w, b, op, entry in plan:
            yield from setup(dut, c, w, 0, b, op, entry)
            yield from go(dut)
            yield from wait_done(dut)
            assert not (yield dut._status.fields.refused)
        out["count"] = yield dut._done.status
    dut, models, out = run(n_channels, n_ways, body)
    want = [{} for _ in range(n_channels)]
    wops = [[] for _ in range(n_channels)]
    for c, w, b, op, entry in plan:
        m = models[c]
        idx = m.index(w, 0, b)
        old = want[c].get(idx, 0)
        if op == 0:
            new = entry
        elif op == 1:
            mask = ((1 << 20) - 1) << pe_off
            new = (old & ~mask) | entry
        else:
            new = old | 1 << m.bad_off
        want[c][idx] = new
        wops[c].append((op, idx))
    assert out["count"] == len(plan)
    for c, m in enumerate(models):
        assert m.ops == wops[c], f"channel {c}: operations {m.ops} != {wops[c]}"
        assert m.table == want[c], f"channel {c}"


@pytest.mark.smoke
def test_registers_taken_at_go_and_busy_refused():
    """An emulator busy for a while: the operation waits with `busy`; registers changed
    meanwhile do not change it; a second go while busy is refused and does nothing; the next
    go taken clears `refused`."""
    def body(dut, models, out):
        m = models[1]
        m.engine = 50                       # channel 1's engine serves a long bus event
        yield from setup(dut, 1, 2, 0, 5, BD_OPS["bad"])
        yield from go(dut)
        yield from setup(dut, 0, 3, 0, 7, BD_OPS["bad"])     # meanwhile: another block
        out["busy"] = yield dut._status.fields.busy
        yield from go(dut)                                    # refused: still busy
        out["refused"] = yield dut._status.fields.refused
        out["waited"] = yield from wait_done(dut)
        out["count"] = yield dut._done.status
        yield from go(dut)                                    # now taken: channel 0
        out["refused_after"] = yield dut._status.fields.refused
        yield from wait_done(dut)
        out["count2"] = yield dut._done.status
    dut, models, out = run(2, 4, body, busy_rate=0)
    assert out["busy"] == 1 and out["refused"] == 1 and out["waited"] > 30, out
    assert out["count"] == 1 and out["count2"] == 2 and out["refused_after"] == 0, out
    assert models[1].ops == [(2, models[1].index(2, 0, 5))]
    assert models[0].ops == [(2, models[0].index(3, 0, 7))]


@pytest.mark.smoke
@pytest.mark.parametrize("what", ["channel", "way", "lun", "block"])
def test_out_of_range_refused(what):
    """A channel, way, LUN or block the build does not have (2 channels x 4 ways, one LUN,
    the part's blocks) is refused: no operation anywhere, `done` unchanged."""
    emu = probe(4)
    addr = {"channel": 0, "way": 1, "lun": 0, "block": 3}
    addr[what] = {"channel": 2, "way": 4, "lun": 1, "block": emu.g.blocks_per_lun}[what]

    def body(dut, models, out):
        yield from setup(dut, addr["channel"], addr["way"], addr["lun"], addr["block"],
                         BD_OPS["bad"])
        yield from go(dut)
        out["busy"] = yield dut._status.fields.busy
        out["refused"] = yield dut._status.fields.refused
        for _ in range(20):
            yield
        out["count"] = yield dut._done.status
    dut, models, out = run(2, 4, body)
    assert out == {"done": True, "busy": 0, "refused": 1, "count": 0}, out
    assert all(not m.ops for m in models)


@pytest.mark.smoke
def test_parameters_checked():
    with pytest.raises(ValueError, match="n_channels must be 1..32"):
        NandEmulatorBackdoor(33, probe(1))


@pytest.mark.smoke
def test_emulated_part_states_its_tccs():
    """The emulated part's parameter page states EMU_T_CCS_NS (the prefetch's DRAM latency
    bound) and the SoC's channels wait it, where the persona's part says the ONFI 500 ns; a
    part's tCCS below ONFI's 500 ns is refused, naming the field."""
    from dataclasses import replace

    from soc.nand_emulation import EMU_T_CCS_NS
    from soc.ssdlab_soc import flash_part
    from spec.nand_geometry import PARTS
    from spec.onfi_param_page import onfi_parameter_page, parse_parameter_page
    from sw.ssdlab.flows.sim import drive_config
    emu_cfg = drive_config("default", {"n_channels": 2, "nand_model": "emulator",
                                       "sdr_fallback": True})
    die_cfg = drive_config("default", {"n_channels": 2})
    assert EMU_T_CCS_NS > 500
    assert parse_parameter_page(onfi_parameter_page(flash_part(emu_cfg)))["t_ccs_ns"] == \
        EMU_T_CCS_NS
    assert parse_parameter_page(onfi_parameter_page(flash_part(die_cfg)))["t_ccs_ns"] == 500
    with pytest.raises(ValueError, match="t_ccs_ns"):
        replace(PARTS[die_cfg.part], t_ccs_ns=400)
