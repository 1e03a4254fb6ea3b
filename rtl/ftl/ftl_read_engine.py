# SPDX-License-Identifier: BSD-2-Clause
"""The hardware read path of the FTL (Verilog module `ftl_read_engine`).

A fast-path block request from the NVMe front end (`s_req`, the back-end contract of
ARCHITECTURE.md) that is a plain Read of whole 4 KiB units mapped to flash is carried to its
completion here with no firmware instruction: the engine reads the logical-to-physical map
(`m_map` / `s_map`, the firmware's `l2p` words), decodes each physical unit number into a
flash READ (die -> channel, way, LUN; block, plane, page, column), merges the following units
of one plane page into the same READ as the firmware does, issues the READs to the flash back
end (`m_op`) within a per-die credit, counts their completions (`s_fcpl`) and completes the
request (`m_cpl`). Every other request, and a Read touching a unit that is unmapped or in the
write buffer, goes to the firmware unchanged (`m_fw`), which answers it as before. So does a
Read one of whose READs failed (an ECC beyond its correction, a die's FAIL), once all its
READs are back: the firmware reads it again with read retry, and it alone reports an
Unrecovered Read Error (with its error log entry and media error count). See
rtl/ftl/README.md ("ftl_read_engine").
"""

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from rtl.nand.nand_die_scheduler import FlashCompletion, FlashOp, flash_op_layout
from spec.fw_streams import (
    FLASH_BLOCK_BITS,
    FLASH_BUFFER_BITS,
    FLASH_PAGE_BITS,
    FLASH_TAG_BITS,
    be_cpl_layout,
    be_req_layout,
)
from spec.nvme import NvmOpcode

__all__ = ["FtlReadEngine", "MAP_NONE", "MAP_WB", "UNIT_BYTES", "MAX_READ_UNITS",
           "req_layout", "cpl_layout", "slc_layout"]

# The firmware's map words (sw/firmware/ftl.h): a physical unit number, or these.
MAP_NONE = 0xFFFF_FFFF      # unmapped: reads as zeroes (the firmware fills the buffer)
MAP_WB = 0x8000_0000        # in the write buffer (low bits: the slot): the firmware copies it
UNIT_BYTES = 4096           # the FTL's unit and the buffer's slot
MAX_READ_UNITS = 8          # units one READ carries at most (sw/firmware/ftl.c: the same)


def req_layout(tag_width):
    return data.StructLayout({n: unsigned(w) for n, w in be_req_layout(tag_width)})


def cpl_layout(tag_width):
    return data.StructLayout({n: unsigned(w) for n, w in be_cpl_layout(tag_width)})


def slc_layout(block_index_bits):
    """`s_slc`: block `block` (die x blocks_per_die + block) is (1) or is not (0) an SLC block."""
    return data.StructLayout({"block": unsigned(block_index_bits), "slc": unsigned(1)})


def _log2(n):
    return n.bit_length() - 1


class FtlReadEngine(wiring.Component):
    """Map lookup, flash READ issue and completion counting for fast-path Reads.

    Parameters (each checked at elaboration, the message naming it)
    ----------
    tag_width : int, 1..8
        The front end's request tags (2**tag_width requests in flight); a request's data
        buffer is handle `tag`: slots tag * handle_slots ... + handle_slots - 1.
    handle_slots : int, 1..64
        4 KiB slots per handle (max_transfer / 4096, the firmware's `handle_slots`); a Read of
        more units goes to the firmware.
    lbads : int, 9..12
        log2 of the LBA size: a unit is 2**(12 - lbads) LBAs; Reads not aligned to whole units
        go to the firmware.
    n_channels : int, 1..32;  n_ways : int, 1..8;  n_luns : int, 1..4
        Die d is channel d mod n_channels, way (d / n_channels) mod n_ways, LUN
        d / (n_channels x n_ways) (sw/firmware/README.md, "Geometry").
    units_per_page : power of two, 1..16
        4 KiB units in one plane's page (page_bytes / 4096).
    planes : 1, 2 or 4
    pages_per_block : power of two, 1..2**FLASH_PAGE_BITS
    blocks : power of two
        Multi-plane blocks per die; blocks x planes must fit the op's block field.
    map_addr_width : int, 1..32
        Bits of a logical unit number (the map's index).
    ftag_base, n_ftags : flash tags ftag_base .. ftag_base + n_ftags - 1 are the engine's
        (n_ftags a power of two, 1..128, inside 0..255): the back end's completions of those
        tags must be routed to `s_fcpl`, the others to the firmware.
    die_credits : int, 1..8
        READs the engine may have queued or running on one die (its share of the back end's
        per-die queue: an op for a full die would block the shared op stream).
    max_len : int, 4096..65535
        The back end's max_len (largest plane transfer).
    multi_plane : bool (default True)
        A run of units from the start of a plane page over whole plane pages of the same
        multi-plane page becomes one multi-plane READ (one tR for its planes; the back end's
        32h per plane): column 0, a plane page per plane. A run that ends inside a later
        plane sends its whole planes as one READ and the rest as a second. Needs a whole
        plane page per READ (units_per_page <= MAX_READ_UNITS and max_len); else, and when
        False, the firmware's rule: one READ per plane page.

    Ports
    -----
    s_req : stream of req_layout(tag_width), in: the front end's block requests (m_be_req)
    m_fw : stream of req_layout(tag_width), out: requests for the firmware, unchanged: the
        ones the engine does not take, in order, and the ones it handed back (a READ failed)
    m_cpl : stream of cpl_layout(tag_width), out: completions of the engine's requests whose
        READs all succeeded (status 0)
    m_map : stream of map_addr_width-bit logical unit numbers, out (map reads)
    s_map : stream of 32-bit map words, in: one per read, in order, any latency
    m_op : stream of flash_op_layout(max_len, channel_bits), out: READs
    s_fcpl : stream of FlashCompletion, in: completions of the engine's tags (always ready)
    s_slc : stream of slc_layout(...), in: the firmware marks a block SLC or native before
        it maps data to it (always ready)
    enable : in; 0: every request goes to the firmware
    ns_lbas : in, 64 bits; the namespace's LBAs (a Read beyond them goes to the firmware,
        which answers LBA Out of Range)
    begun, finished : out, 16 bits, wrapping; requests taken from s_req, and requests whose
        READs are all issued (or that went to the firmware). The firmware's fence before it
        erases a block: take `begun`, wait until `finished` has reached it; no READ decoded
        from a map word read before then can still be on its way to the back end.
    idle : out; no request in the engine and no READ outstanding
    quiet : out; no request in lookup or issue and no completion waiting: what the engine
        does next waits for a flash completion or a new request (the simulation's
        fast-forward may skip time then)
    reads, punts, handbacks : out, 32 bits; requests completed here, requests given to the
        firmware untouched, requests handed back to it after a failed READ
    lbas : out, 48 bits; LBAs of the requests completed here (SMART's data units read)
    corrected : out, 32 bits; the engine's READs that passed with bits corrected (ecc_bits
        non-zero), as the firmware counts its own (vendor log C0h, ecc_corrected_reads)
    max_bits : out, 7 bits; the most bits corrected in a codeword of those READs (ecc_bits)
    refresh_bits : in, 7 bits; a READ that passes with at least this many bits corrected in a
        codeword names its block in `hint` (0: never): its cells have drifted, the firmware
        refreshes it (moves its data), as it does for its own reads
    hint, hint_valid : out; the block index (die x blocks + block) of the latest such READ,
        and that one is waiting (a later one replaces it: the firmware polls, and a drifting
        block's next reads name it again)
    hint_ack : in; the firmware took `hint` (clears hint_valid unless a new one arrives)
    """

    def __init__(self, tag_width=6, handle_slots=32, lbads=12, n_channels=18, n_ways=4,
                 n_luns=1, units_per_page=4, planes=2, pages_per_block=512, blocks=1024,
                 map_addr_width=32, ftag_base=128, n_ftags=64, die_credits=2,
                 max_len=18432, multi_plane=True):
        def pow2(v):
            return v > 0 and v & (v - 1) == 0
        checks = [
            ("tag_width", tag_width, 1 <= tag_width <= 8, "1..8"),
            ("handle_slots", handle_slots, 1 <= handle_slots <= 64, "1..64"),
            ("lbads", lbads, 9 <= lbads <= 12, "9..12"),
            ("n_channels", n_channels, 1 <= n_channels <= 32, "1..32"),
            ("n_ways", n_ways, 1 <= n_ways <= 8, "1..8"),
            ("n_luns", n_luns, 1 <= n_luns <= 4, "1..4"),
            ("units_per_page", units_per_page, pow2(units_per_page) and units_per_page <= 16,
             "a power of two in 1..16"),
            ("planes", planes, planes in (1, 2, 4), "1, 2 or 4"),
            ("pages_per_block", pages_per_block,
             pow2(pages_per_block) and pages_per_block <= 1 << FLASH_PAGE_BITS,
             f"a power of two in 1..{1 << FLASH_PAGE_BITS}"),
            ("blocks", blocks, pow2(blocks) and blocks * planes <= 1 << FLASH_BLOCK_BITS,
             f"a power of two, blocks x planes <= {1 << FLASH_BLOCK_BITS}"),
            ("map_addr_width", map_addr_width, 1 <= map_addr_width <= 32, "1..32"),
            ("n_ftags", n_ftags, pow2(n_ftags) and n_ftags <= 128,
             "a power of two in 1..128"),
            ("ftag_base", ftag_base,
             0 <= ftag_base and ftag_base + n_ftags <= 1 << FLASH_TAG_BITS
             if isinstance(n_ftags, int) else False, "0..256 - n_ftags"),
            ("die_credits", die_credits, 1 <= die_credits <= 8, "1..8"),
            ("max_len", max_len, 4096 <= max_len <= 65535, "4096..65535"),
        ]
        for name, value, ok, legal in checks:
            if isinstance(value, bool) or not isinstance(value, int) or not ok:
                self._MustUse__silence = True
                raise ValueError(f"FtlReadEngine: {name} must be {legal}, got {value!r}")
        if not isinstance(multi_plane, bool):
            self._MustUse__silence = True
            raise ValueError(f"FtlReadEngine: multi_plane must be True or False, got "
                             f"{multi_plane!r}")
        self.tag_width, self.handle_slots, self.lbads = tag_width, handle_slots, lbads
        self.n_channels, self.n_ways, self.n_luns = n_channels, n_ways, n_luns
        self.upp, self.planes, self.ppb, self.blocks = units_per_page, planes, pages_per_block, \
            blocks
        self.map_addr_width = map_addr_width
        self.ftag_base, self.n_ftags, self.die_credits = ftag_base, n_ftags, die_credits
        self.max_len = max_len
        self.n_dies = n_channels * n_ways * n_luns
        self.die_bits = max(1, (self.n_dies - 1).bit_length())
        self.channel_bits = max(1, (n_channels - 1).bit_length())
        self.block_index_bits = self.die_bits + _log2(blocks)
        # one READ: up to the rest of its plane page, MAX_READ_UNITS, the back end's max_len
        self.max_run = min(units_per_page, MAX_READ_UNITS, max_len // UNIT_BYTES)
        # a multi-plane READ: whole plane pages of one multi-plane page
        self.multi_plane = multi_plane and planes > 1 and self.max_run == units_per_page
        self.max_units = units_per_page * planes if self.multi_plane else self.max_run
        super().__init__({
            "s_req": In(stream.Signature(req_layout(tag_width))),
            "m_fw": Out(stream.Signature(req_layout(tag_width))),
            "m_cpl": Out(stream.Signature(cpl_layout(tag_width))),
            "m_map": Out(stream.Signature(unsigned(map_addr_width))),
            "s_map": In(stream.Signature(unsigned(32))),
            "m_op": Out(stream.Signature(flash_op_layout(max_len, self.channel_bits))),
            "s_fcpl": In(stream.Signature(FlashCompletion)),
            "s_slc": In(stream.Signature(slc_layout(self.block_index_bits))),
            "enable": In(1),
            "ns_lbas": In(64),
            "begun": Out(16),
            "finished": Out(16),
            "idle": Out(1),
            "quiet": Out(1),
            "reads": Out(32),
            "lbas": Out(48),
            "punts": Out(32),
            "handbacks": Out(32),
            "corrected": Out(32),
            "max_bits": Out(7),
            "refresh_bits": In(7),
            "hint": Out(self.block_index_bits),
            "hint_valid": Out(1),
            "hint_ack": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        tw, n_tags = self.tag_width, 1 << self.tag_width
        spu_shift = 12 - self.lbads                 # log2(LBAs per unit)
        l_upp, l_pl, l_ppb = _log2(self.upp), _log2(self.planes), _log2(self.ppb)
        l_pu = l_upp + l_pl                         # log2(units per multi-plane page)
        l_blk = _log2(self.blocks)
        cnt_bits = (self.handle_slots + 1).bit_length()
        ftag_bits = max(1, _log2(self.n_ftags))

        # -- the request being looked up and issued -------------------------------------------
        req = Signal(req_layout(tw))
        n_units = Signal(cnt_bits)                  # units of the request
        lpn0 = Signal(self.map_addr_width)
        n_asked = Signal(cnt_bits)                  # map reads issued ...
        n_got = Signal(cnt_bits)                    # ... and answered
        exception = Signal()                        # a word the engine does not handle

        entries = m.submodules.entries = memory.Memory(
            shape=32, depth=self.handle_slots, init=[])
        ent_wr = entries.write_port()
        ent_rd = entries.read_port(domain="comb")

        # -- per-request state (by front-end tag) ---------------------------------------------
        active = Signal(n_tags)                     # the engine owns this request
        issued = Signal(n_tags)                     # ... and every READ of it is out
        failed = Signal(n_tags)
        pending = Array(Signal(cnt_bits, name=f"pending{t}") for t in range(n_tags))
        # the requests the engine owns, for a hand-back (a READ failed) and the LBA count
        held = m.submodules.held = memory.Memory(shape=req_layout(tw), depth=n_tags, init=[])
        held_wr = held.write_port()
        held_hb = held.read_port(domain="comb")     # the request to hand back
        held_cpl = held.read_port(domain="comb")    # the request completing

        # -- flash tags and per-die credits ----------------------------------------------------
        fbusy = Signal(self.n_ftags)
        ftab = m.submodules.ftab = memory.Memory(
            shape=data.StructLayout({"tag": unsigned(tw),
                                     "blk": unsigned(self.block_index_bits)}),
            depth=self.n_ftags, init=[])
        ftab_wr = ftab.write_port()
        ftab_rd = ftab.read_port(domain="comb")
        credits = Array(Signal(range(self.die_credits + 1), name=f"used{d}")
                        for d in range(self.n_dies))

        # die -> (channel, way, LUN), a table: n_channels need not be a power of two
        def die_addr(d):
            return (d % self.n_channels) | ((d // self.n_channels % self.n_ways)
                                            << self.channel_bits) | \
                ((d // (self.n_channels * self.n_ways)) << (self.channel_bits + 3))
        dies = m.submodules.dies = memory.Memory(
            shape=self.channel_bits + 3 + 2, depth=1 << self.die_bits,
            init=[die_addr(d) if d < self.n_dies else 0 for d in range(1 << self.die_bits)])
        dies_rd = dies.read_port(domain="comb")

        slc_map = m.submodules.slc_map = memory.Memory(
            shape=1, depth=1 << self.block_index_bits, init=[])
        slc_wr = slc_map.write_port()
        slc_rd = slc_map.read_port(transparent_for=())
        m.d.comb += [
            self.s_slc.ready.eq(1),
            slc_wr.en.eq(self.s_slc.valid),
            slc_wr.addr.eq(self.s_slc.payload.block),
            slc_wr.data.eq(self.s_slc.payload.slc),
        ]

        # -- the run of units one READ carries -------------------------------------------------
        run_v = Signal(32)                          # its first physical unit
        run_k = Signal(range(self.max_units + 1))   # units in it
        run_i = Signal(cnt_bits)                    # its first unit's index in the request
        have_run = Signal()
        idx = Signal(cnt_bits)                      # next entry to look at
        run_col = run_v[:l_upp] if l_upp else Const(0, 1)
        run_plane = run_v[l_upp:l_pu] if l_pl else Const(0, 1)
        run_page = run_v[l_pu:l_pu + l_ppb] if l_ppb else Const(0, 1)
        run_blk = run_v[l_pu + l_ppb:l_pu + l_ppb + l_blk] if l_blk else Const(0, 1)
        run_die = run_v[l_pu + l_ppb + l_blk:][:self.die_bits]
        m.d.comb += [
            ent_rd.addr.eq(idx),
            dies_rd.addr.eq(run_die),
            slc_rd.addr.eq(run_v[l_pu + l_ppb:][:self.block_index_bits]),
        ]

        # a free flash tag: the lowest
        free_any = Signal()
        free_idx = Signal(ftag_bits)
        for i in reversed(range(self.n_ftags)):
            with m.If(~fbusy[i]):
                m.d.comb += [free_any.eq(1), free_idx.eq(i)]

        # A multi-plane run (from column 0, over whole plane pages): its head is `head` whole
        # plane pages, one READ with a plane page per plane; the rest of a run that ended
        # inside a later plane is a second READ (`rest` units from that plane's column 0).
        head, rest = Const(0, 1), Const(0, 1)
        if self.multi_plane:
            head = Signal(range(self.planes + 1))
            rest = Signal(range(self.max_units + 1))
            m.d.comb += [
                head.eq(Mux(run_col == 0, run_k >> l_upp, 0)),
                rest.eq(Mux(head != 0, run_k[:l_upp] if l_upp else 0, 0)),
            ]
        op = self.m_op.payload
        slot = Signal(FLASH_BUFFER_BITS)
        m.d.comb += [
            slot.eq(req.tag * self.handle_slots + run_i),
            op.tag.eq(self.ftag_base + free_idx),
            op.op.eq(FlashOp.READ),
            op.channel.eq(dies_rd.data[:self.channel_bits]),
            op.way.eq(dies_rd.data[self.channel_bits:self.channel_bits + 3]),
            op.lun.eq(dies_rd.data[self.channel_bits + 3:]),
            op.plane_mask.eq(Mux(head != 0, ((Const(1, 5) << head) - 1) << run_plane,
                                 Const(1, 4) << run_plane)),
            op.block.eq(Cat(run_plane[:l_pl], run_blk) if l_pl else run_blk),
            op.page.eq(run_page),
            op.column.eq(run_col * UNIT_BYTES),
            op.length.eq(Mux(head != 0, self.upp, run_k) * UNIT_BYTES),
            # plane p's data lands at (buffer + p x plane_slots): plane_slots = units_per_page
            op.buffer.eq(slot - run_plane * self.upp),
            op.slc.eq(slc_rd.data),
        ]
        emit = Signal()
        m.d.comb += emit.eq(self.m_op.valid & self.m_op.ready)

        # flash completions
        cpl = self.s_fcpl.payload
        cpl_idx = Signal(ftag_bits)
        cpl_fire = Signal()
        m.d.comb += [
            self.s_fcpl.ready.eq(1),
            cpl_fire.eq(self.s_fcpl.valid),
            cpl_idx.eq(cpl.tag - self.ftag_base),
            ftab_rd.addr.eq(cpl_idx),
            ftab_wr.addr.eq(free_idx),
            ftab_wr.data.tag.eq(req.tag),
            ftab_wr.data.blk.eq(run_v[l_pu + l_ppb:][:self.block_index_bits]),
            ftab_wr.en.eq(emit),
        ]
        cpl_tag = ftab_rd.data.tag
        cpl_die = ftab_rd.data.blk[l_blk:]
        fbusy_next = Signal.like(fbusy)
        m.d.comb += fbusy_next.eq(fbusy)
        with m.If(cpl_fire):
            m.d.comb += fbusy_next.bit_select(cpl_idx, 1).eq(0)
        with m.If(emit):
            m.d.comb += fbusy_next.bit_select(free_idx, 1).eq(1)
        m.d.sync += fbusy.eq(fbusy_next)
        for d in range(self.n_dies):
            inc = emit & (run_die == d)
            dec = cpl_fire & (cpl_die == d)
            with m.If(inc & ~dec):
                m.d.sync += credits[d].eq(credits[d] + 1)
            with m.Elif(dec & ~inc):
                m.d.sync += credits[d].eq(credits[d] - 1)
        for t in range(n_tags):
            inc = emit & (req.tag == t)
            dec = cpl_fire & (cpl_tag == t)
            with m.If(inc & ~dec):
                m.d.sync += pending[t].eq(pending[t] + 1)
            with m.Elif(dec & ~inc):
                m.d.sync += pending[t].eq(pending[t] - 1)

        # -- completions: a request whose READs are all out and back ---------------------------
        # Success completes here; a failed READ hands the request back to the firmware (the
        # request FSM's HANDBACK, between requests).
        ready_to_cpl = Signal(n_tags)
        m.d.comb += ready_to_cpl.eq(active & issued & Cat(*(pending[t] == 0
                                                           for t in range(n_tags))))
        ready_ok, ready_fail = Signal(n_tags), Signal(n_tags)
        m.d.comb += [ready_ok.eq(ready_to_cpl & ~failed), ready_fail.eq(ready_to_cpl & failed)]
        done_tag = Signal(tw)
        hb_tag = Signal(tw)
        for t in reversed(range(n_tags)):
            with m.If(ready_ok[t]):
                m.d.comb += done_tag.eq(t)
            with m.If(ready_fail[t]):
                m.d.comb += hb_tag.eq(t)
        m.d.comb += [
            self.m_cpl.valid.eq(ready_ok.any()),
            self.m_cpl.payload.tag.eq(done_tag),
            self.m_cpl.payload.status.eq(0),
            held_cpl.addr.eq(done_tag),
            held_hb.addr.eq(hb_tag),
        ]
        set_active = Signal(n_tags)
        set_issued = Signal(n_tags)
        with m.If(self.m_cpl.valid & self.m_cpl.ready):
            m.d.sync += [self.reads.eq(self.reads + 1),
                         self.lbas.eq(self.lbas + held_cpl.data.nlb + 1)]
        cpl_clear = Signal(n_tags)
        hb_clear = Signal(n_tags)                   # driven by the FSM's HANDBACK
        m.d.comb += cpl_clear.eq(Cat(*((self.m_cpl.valid & self.m_cpl.ready & (done_tag == t))
                                       for t in range(n_tags))))
        m.d.sync += [
            active.eq((active | set_active) & ~cpl_clear & ~hb_clear),
            issued.eq((issued | set_issued) & ~cpl_clear & ~hb_clear),
        ]
        failed_next = Signal.like(failed)
        m.d.comb += failed_next.eq(failed & ~set_active)     # a new request starts clean
        with m.If(cpl_fire & (cpl.fail | cpl.error | cpl.ecc_fail)):    # ECC gave up: URE
            m.d.comb += failed_next.bit_select(cpl_tag, 1).eq(1)
        with m.Elif(cpl_fire & (cpl.ecc_bits != 0)):                  # passed, corrected
            m.d.sync += self.corrected.eq(self.corrected + 1)
            with m.If(cpl.ecc_bits > self.max_bits):
                m.d.sync += self.max_bits.eq(cpl.ecc_bits)
        # a drifting block: the firmware refreshes it (hint_ack loses to a new hint)
        with m.If(self.hint_ack):
            m.d.sync += self.hint_valid.eq(0)
        with m.If(cpl_fire & ~(cpl.fail | cpl.error | cpl.ecc_fail) & (self.refresh_bits != 0)
                  & (cpl.ecc_bits >= self.refresh_bits)):
            m.d.sync += [self.hint.eq(ftab_rd.data.blk), self.hint_valid.eq(1)]
        m.d.sync += failed.eq(failed_next)

        # -- the request FSM ------------------------------------------------------------------
        r = self.s_req.payload
        unit_mask = (1 << spu_shift) - 1
        nlbs = Signal(17)
        end = Signal(65)
        m.d.comb += [nlbs.eq(r.nlb + 1), end.eq(r.slba + nlbs)]
        takes = Signal()
        m.d.comb += takes.eq(
            self.enable & (r.opcode == NvmOpcode.READ) & (r.nsid == 1)
            & (end <= self.ns_lbas)
            & ((r.slba & unit_mask) == 0) & ((nlbs & unit_mask) == 0)
            & ((nlbs >> spu_shift) <= self.handle_slots))
        m.d.comb += [
            self.m_fw.payload.eq(req),
            self.m_map.payload.eq(lpn0 + n_asked),
            self.s_map.ready.eq(1),
            ent_wr.addr.eq(n_got),
            ent_wr.data.eq(self.s_map.payload),
        ]
        e = ent_rd.data
        cred_ok = Signal()
        m.d.comb += cred_ok.eq(credits[run_die] < self.die_credits)
        m.d.comb += [held_wr.addr.eq(req.tag), held_wr.data.eq(req)]
        with m.FSM(name="fsm") as fsm:
            with m.State("IDLE"):
                # a request to hand back goes before the next new one
                m.d.comb += self.s_req.ready.eq(~ready_fail.any())
                with m.If(ready_fail.any()):
                    m.d.sync += req.eq(held_hb.data)
                    m.next = "HANDBACK"
                with m.Elif(self.s_req.valid):
                    m.d.sync += [
                        req.eq(r), n_units.eq(nlbs >> spu_shift),
                        lpn0.eq(r.slba >> spu_shift),
                        n_asked.eq(0), n_got.eq(0), exception.eq(0),
                        idx.eq(0), have_run.eq(0), run_k.eq(0),
                        self.begun.eq(self.begun + 1),
                    ]
                    with m.If(takes):
                        m.next = "LOOKUP"
                    with m.Else():
                        m.next = "PUNT"
            with m.State("LOOKUP"):
                m.d.comb += self.m_map.valid.eq(n_asked != n_units)
                with m.If(self.m_map.valid & self.m_map.ready):
                    m.d.sync += n_asked.eq(n_asked + 1)
                with m.If(self.s_map.valid):
                    m.d.comb += ent_wr.en.eq(1)
                    m.d.sync += n_got.eq(n_got + 1)
                    # MAP_NONE and MAP_WB both have bit 31 set; a unit number never has
                    with m.If(self.s_map.payload[31]):
                        m.d.sync += exception.eq(1)
                    with m.If(n_got + 1 == n_units):
                        m.next = "DECIDE"
            with m.State("DECIDE"):
                with m.If(exception):
                    m.next = "PUNT"
                with m.Else():
                    m.d.comb += [set_active.bit_select(req.tag, 1).eq(1), held_wr.en.eq(1)]
                    m.next = "ISSUE"
            with m.State("PUNT"):
                m.d.comb += self.m_fw.valid.eq(1)
                with m.If(self.m_fw.ready):
                    m.d.sync += [self.punts.eq(self.punts + 1),
                                 self.finished.eq(self.finished + 1)]
                    m.next = "IDLE"
            with m.State("HANDBACK"):
                # not counted in begun / finished: its READs were issued (and are back)
                m.d.comb += self.m_fw.valid.eq(1)
                with m.If(self.m_fw.ready):
                    m.d.comb += hb_clear.bit_select(req.tag, 1).eq(1)
                    m.d.sync += self.handbacks.eq(self.handbacks + 1)
                    m.next = "IDLE"
            with m.State("ISSUE"):
                extend = (have_run & (e == run_v + run_k) & (run_col + run_k < self.upp)
                          & (run_k < self.max_run))
                if self.multi_plane:
                    # from column 0 on, to the end of the multi-plane page
                    extend = extend | (have_run & (e == run_v + run_k) & (run_col == 0)
                                       & (run_v[:l_pu] + run_k < self.upp * self.planes))
                with m.If(idx == n_units):
                    with m.If(have_run):
                        m.next = "SLC"
                    with m.Else():
                        m.d.comb += set_issued.bit_select(req.tag, 1).eq(1)
                        m.d.sync += self.finished.eq(self.finished + 1)
                        m.next = "IDLE"
                with m.Elif(extend):
                    m.d.sync += [run_k.eq(run_k + 1), idx.eq(idx + 1)]
                with m.Elif(have_run):
                    m.next = "SLC"
                with m.Else():
                    m.d.sync += [run_v.eq(e), run_k.eq(1), run_i.eq(idx), have_run.eq(1),
                                 idx.eq(idx + 1)]
            with m.State("SLC"):                    # the block's mode is read (one cycle)
                m.next = "EMIT"
            with m.State("EMIT"):
                m.d.comb += self.m_op.valid.eq(cred_ok & free_any)
                with m.If(emit & (rest != 0)):
                    # the head's planes are out: the rest, from the next plane's column 0
                    m.d.sync += [run_v.eq(run_v + (head << l_upp)),
                                 run_i.eq(run_i + (head << l_upp)), run_k.eq(rest)]
                with m.Elif(emit):
                    m.d.sync += have_run.eq(0)
                    m.next = "ISSUE"
        m.d.comb += [
            self.idle.eq(fsm.ongoing("IDLE") & ~active.any() & ~fbusy.any()),
            self.quiet.eq(fsm.ongoing("IDLE") & ~ready_to_cpl.any()),
        ]
        return m
