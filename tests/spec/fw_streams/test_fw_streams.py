# SPDX-License-Identifier: BSD-2-Clause
"""spec/fw_streams.py: the word placement rule on known layouts and its invariants on every
port of every legal build; the RTL's layouts are spec's.

The C the firmware uses is checked in tests/soc/fw_ports (round trip through the generated
header); the placement it follows is checked here against hand-worked words.
"""

import pytest

from spec import fw_streams as fs


@pytest.mark.smoke
@pytest.mark.parametrize("layout, placed, n_words", [
    # A wide field starts a new word; small fields share one until the next would straddle.
    (fs.cq_cfg_layout(),
     [("cqid", 16, 0, 0), ("base", 64, 1, 0), ("qsize", 16, 3, 0), ("iv", 11, 3, 16),
      ("ien", 1, 3, 27), ("enable", 1, 3, 28), ("nc", 1, 3, 29)], 4),
    # A 52-bit field takes two words and the next field starts a fresh one.
    (fs.sq_page_layout(), [("sqid", 16, 0, 0), ("index", 6, 0, 16), ("page", 52, 1, 0)], 3),
    # A field filling a word ends it exactly.
    (fs.cq_cpl_layout(),
     [("cqid", 16, 0, 0), ("sqid", 16, 0, 16), ("sq_head", 16, 1, 0), ("cid", 16, 1, 16),
      ("status", 15, 2, 0), ("dw0", 32, 3, 0)], 4),
    # 4 + 3 + 2 + 4 bits after the tag fill word 0 to 21; block would straddle: word 1.
    # slc and raw share word 3 with buffer and channel (the op stays 4 words).
    (fs.flash_op_layout(18432, 5),
     [("tag", 8, 0, 0), ("op", 4, 0, 8), ("way", 3, 0, 12), ("lun", 2, 0, 15),
      ("plane_mask", 4, 0, 17), ("block", 16, 1, 0), ("page", 12, 1, 16),
      ("column", 16, 2, 0), ("length", 15, 2, 16), ("buffer", 16, 3, 0),
      ("slc", 1, 3, 16), ("raw", 1, 3, 17), ("channel", 5, 3, 18)], 4),
    (fs.sqe_layout(), [("sqid", 16, 0, 0), ("sq_head", 16, 0, 16), ("sqe", 512, 1, 0)], 17),
])
def test_pack_known(layout, placed, n_words):
    assert fs.pack(layout) == (placed, n_words)


@pytest.mark.smoke
@pytest.mark.parametrize("tag_width", [1, 5, 8])
@pytest.mark.parametrize("max_len, channel_bits", [(1, 1), (18432, 5), (65535, 3)])
def test_pack_invariants(tag_width, max_len, channel_bits):
    """Fields in payload order, none overlapping, none of <= 32 bits straddling a word, wide
    ones word aligned, no empty word."""
    ports = fs.port_layouts(tag_width, max_len, channel_bits)
    assert [(p, d) for p, d, _ in ports] == [(p, d) for p, d, _ in fs.PORTS]
    for port, _, layout in ports:
        placed, n_words = fs.pack(layout)
        assert [(n, w) for n, w, _, _ in placed] == layout, port
        used = [0] * n_words
        last = -1
        for name, width, word, shift in placed:
            start = 32 * word + shift
            assert start > last, (port, name)
            last = start + width - 1
            if width <= 32:
                assert shift + width <= 32, (port, name)
            else:
                assert shift == 0, (port, name)
            for bit in range(start, start + width):
                assert not used[bit // 32] >> (bit % 32) & 1, (port, name, bit)
                used[bit // 32] |= 1 << (bit % 32)
        assert all(used), port


@pytest.mark.smoke
def test_rtl_layouts_are_spec():
    """The RTL builds its stream layouts from spec's lists (LiteX endpoints and Amaranth
    structs carry the same fields in the same bit order)."""
    from amaranth.hdl import Shape
    from amaranth.lib import data

    from rtl.nand.nand_die_scheduler import FlashCompletion, flash_op_layout
    from rtl.nvme.nvme_controller import NvmeController  # noqa: F401 (imports the layouts)
    from rtl.nvme.nvme_cq_post import cq_cfg_layout, cq_cpl_layout, cq_page_layout
    from rtl.nvme.nvme_io_engine import (
        be_cpl_layout,
        be_req_layout,
        fw_xfer_cpl_layout,
        fw_xfer_layout,
    )
    from rtl.nvme.nvme_sq_fetch import sq_page_layout, sqe_layout

    def struct(layout):
        layout = data.Layout.cast(layout)
        return [(n, Shape.cast(f.shape).width)
                for n, f in sorted(layout, key=lambda m: m[1].offset)]

    assert struct(flash_op_layout(18432, 5)) == fs.flash_op_layout(18432, 5)
    assert struct(FlashCompletion) == fs.flash_cpl_layout()
    for rtl, spec in [(cq_cfg_layout, fs.cq_cfg_layout), (cq_cpl_layout, fs.cq_cpl_layout),
                      (cq_page_layout, fs.cq_page_layout), (sq_page_layout, fs.sq_page_layout),
                      (sqe_layout, fs.sqe_layout), (fw_xfer_cpl_layout, fs.fw_xfer_cpl_layout)]:
        assert rtl() == spec()
    for rtl, spec in [(be_req_layout, fs.be_req_layout), (be_cpl_layout, fs.be_cpl_layout),
                      (fw_xfer_layout, fs.fw_xfer_layout)]:
        assert rtl(6) == spec(6)
