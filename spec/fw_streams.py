# SPDX-License-Identifier: BSD-2-Clause
"""The streams between the hardware and the firmware, described once: payload layouts and the
rule that packs a payload into the 32-bit words of the firmware's CSR ports.

Each layout is a list of (field name, width in bits) in payload order (the first field in the
lowest bits), the form LiteX stream descriptions take; the RTL builds its LiteX endpoints
(rtl/nvme) and Amaranth struct layouts (rtl/nand) from these lists, soc/fw_ports.py turns
them into CSRs and generates the firmware's C pack / unpack code with `pack()`, so the RTL and
the C cannot disagree on a bit.

`PORTS` names the firmware's ports (soc/ssdlab_soc.py FirmwarePorts, generated/fw_ports.h):

  port     direction   layout                  what
  cmd      to_fw       sqe_layout              admin and non-fast-path NVMe commands
  cpl      from_fw     cq_cpl_layout           their completions
  sqcfg    from_fw     fw_sq_cfg_layout        create / delete an SQ
  cqcfg    from_fw     cq_cfg_layout           create / delete a CQ
  sqpage   from_fw     sq_page_layout          a page of a non-contiguous SQ
  cqpage   from_fw     cq_page_layout          a page of a non-contiguous CQ
  xfer     from_fw     fw_xfer_layout          move a command's data (PRPs <-> buffer)
  xfercpl  to_fw       fw_xfer_cpl_layout      its end
  ivc      from_fw     ivc_layout              Interrupt Vector Configuration
  aer      to_fw       fw_aer_layout           asynchronous events
  bereq    to_fw       be_req_layout           fast-path block requests
  becpl    from_fw     be_cpl_layout           their completions
  fop      from_fw     flash_op_layout         flash operations
  fcpl     to_fw       flash_cpl_layout        their completions

`FLASH_OPS` names the values of a flash op's `op` field: the RTL's `FlashOp`
(rtl/nand/nand_die_scheduler.py) and the firmware's `enum flash_opcode` are built from it;
`c_header()` writes the firmware's copy, `ssdlab/fw_streams.h` (sw/firmware/Makefile):

    python -m spec.fw_streams --c-header build/include/ssdlab/fw_streams.h

This module imports nothing of ours (the bottom of the tree: spec/__init__.py).
"""

import argparse
from pathlib import Path

__all__ = [
    "QID_BITS", "QSIZE_BITS", "VECTOR_BITS", "SQE_BITS", "LEN_BITS", "STATUS_BITS",
    "FLASH_TAG_BITS", "FLASH_OP_BITS", "FLASH_BUFFER_BITS", "FLASH_BLOCK_BITS",
    "FLASH_PAGE_BITS", "FLASH_MAX_PLANES", "FLASH_OPS",
    "sqe_layout", "cq_cpl_layout", "sq_cfg_layout", "fw_sq_cfg_layout", "cq_cfg_layout",
    "sq_page_layout", "cq_page_layout", "fw_xfer_layout", "fw_xfer_cpl_layout", "ivc_layout",
    "fw_aer_layout", "be_req_layout", "be_cpl_layout", "flash_op_layout", "flash_cpl_layout",
    "TO_FW", "FROM_FW", "PORTS", "port_layouts", "pack", "c_header",
]

# Field widths -----------------------------------------------------------------------------------

QID_BITS    = 16        # NVMe queue identifiers.
QSIZE_BITS  = 16        # 0's based queue size, head and tail pointers.
VECTOR_BITS = 11        # MSI-X allows 2048 vectors.
SQE_BITS    = 8 * 64    # One submission queue entry (NVMe 1.4 figure 104).
LEN_BITS    = 32        # Transfer length in bytes.
STATUS_BITS = 15        # NVMe status field (CQE DW3 31:17): DNR 14, M 13, CRD 12:11, SCT 10:8, SC.

FLASH_TAG_BITS    = 8
FLASH_OP_BITS     = 4   # the `op` field: FLASH_OPS
FLASH_BUFFER_BITS = 16  # buffer memory slot
FLASH_BLOCK_BITS  = 16  # block number within a LUN (plane in its low bits)
FLASH_PAGE_BITS   = 12  # page number within a block
FLASH_MAX_PLANES  = 4

# NVMe processor interface (rtl/nvme/nvme_controller.py) -----------------------------------------


def sqe_layout():
    """One fetched submission queue entry: `sqe` bits 8n+7:8n hold byte n (DW0 in 31:0)."""
    return [
        ("sqid",    QID_BITS),
        ("sq_head", QSIZE_BITS),   # SQ head once this entry is consumed (for the CQE).
        ("sqe",     SQE_BITS),
    ]


def cq_cpl_layout():
    """One completion to post."""
    return [
        ("cqid",    QID_BITS),
        ("sqid",    QID_BITS),
        ("sq_head", QSIZE_BITS),
        ("cid",     16),
        ("status",  STATUS_BITS),  # Status field: DNR, M, CRD, SCT, SC (CQE DW3 bits 31:17).
        ("dw0",     32),
    ]


def sq_cfg_layout():
    """Create (enable=1) or delete (enable=0) submission queue `sqid`."""
    return [
        ("sqid",   QID_BITS),
        ("base",   64),            # Byte address of entry 0; bits 5:0 must be 0.
        ("qsize",  QSIZE_BITS),    # Entries - 1 (0's based), >= 1.
        ("enable", 1),
        ("nc",     1),             # Non-contiguous: entry pages from the page list, not base.
    ]


def fw_sq_cfg_layout():
    """Create / delete an I/O SQ; a create also maps it to CQ `cqid`."""
    return sq_cfg_layout() + [("cqid", QID_BITS)]


def cq_cfg_layout():
    """Create (enable=1) or delete (enable=0) completion queue `cqid`."""
    return [
        ("cqid",   QID_BITS),
        ("base",   64),            # Byte address of entry 0; bits 3:0 must be 0.
        ("qsize",  QSIZE_BITS),    # Entries - 1 (0's based), >= 1.
        ("iv",     VECTOR_BITS),   # Interrupt vector.
        ("ien",    1),             # Interrupts enabled.
        ("enable", 1),
        ("nc",     1),             # Non-contiguous: entry pages from the page list, not base.
    ]


def sq_page_layout():
    """Page `index` of non-contiguous SQ `sqid` (from its PRP list) is at byte address
    `page` << 12."""
    return [
        ("sqid",  QID_BITS),
        ("index", 6),
        ("page",  52),
    ]


def cq_page_layout():
    """Page `index` of non-contiguous CQ `cqid` (from its PRP list) is at byte address
    `page` << 12."""
    return [
        ("cqid",  QID_BITS),
        ("index", 4),
        ("page",  52),
    ]


def fw_xfer_layout(tag_width):
    """A firmware data transfer between the command's PRPs and firmware buffer `buf`.
    tag_width: the front end's tag width, 1..8."""
    return [
        ("buf",     tag_width),
        ("prp1",    64),
        ("prp2",    64),
        ("length",  LEN_BITS),
        ("to_host", 1),
    ]


def fw_xfer_cpl_layout():
    """The end of a firmware transfer: 0, or the NVMe status of the failed transfer."""
    return [("status", STATUS_BITS)]


def ivc_layout():
    """One Interrupt Vector Configuration write (feature 09h): vector and Coalescing Disable."""
    return [("vector", VECTOR_BITS), ("cd", 1)]


def fw_aer_layout():
    """An asynchronous event: its information byte (event type 0, log page 01h) and the
    submission queue it concerns (0xFFFF: none), for the error log entry."""
    return [("info", 8), ("sqid", 16)]


# Block requests (NVMe front end <-> back end, ARCHITECTURE.md) ----------------------------------


def be_req_layout(tag_width):
    """A tagged block request to the back end; data buffer handle = tag.
    tag_width: 1..8."""
    return [
        ("tag",    tag_width),
        ("opcode", 8),             # NVM opcode: 00h Flush, 01h Write, 02h Read.
        ("nsid",   32),
        ("slba",   64),
        ("nlb",    16),            # 0's based.
        ("flags",  16),            # CDW12 31:16 (FUA, LR, ...).
        ("sqid",   16),            # the command's SQ and CID: the error log entry of a
        ("cid",    16),            # request that fails in the back end names them.
    ]


def be_cpl_layout(tag_width):
    """A block request's completion: its tag and NVMe status field. tag_width: 1..8."""
    return [("tag", tag_width), ("status", STATUS_BITS)]


# Flash operations (FTL <-> flash back end, ARCHITECTURE.md; rtl/nand) ---------------------------


# The `op` field's values: (name, value, what). Values not listed (9..15) are refused (the
# completion's `error`). The RTL's FlashOp members and the C FLASH_<name> take these names.
FLASH_OPS = (
    ("READ",         0, "page read of every plane in plane_mask, `length` bytes each"),
    ("PROGRAM",      1, "page program of every plane in plane_mask, `length` bytes each"),
    ("ERASE",        2, "block erase of every plane in plane_mask"),
    ("RESET",        3, "the die's RESET (FFh)"),
    ("READ_ID",      4, "column[7:0] is the address (00h, 20h); `length` bytes"),
    ("READ_PARAM",   5, "`length` bytes of the parameter page"),
    ("SET_FEATURES", 6, "column[7:0] is the feature address; 4 bytes in"),
    ("GET_FEATURES", 7, "4 bytes out"),
    ("READ_STATUS",  8, "1 byte out"),
)


def flash_op_layout(max_len=18432, channel_bits=0):
    """A flash operation. max_len: the largest `length` in bytes (1..65535), which sets the
    field's width; channel_bits: 0 (a channel's die scheduler: no channel field) or the width
    of `channel` (1..5), which the back end adds last."""
    fields = [
        ("tag",        FLASH_TAG_BITS),
        ("op",         FLASH_OP_BITS),
        ("way",        3),
        ("lun",        2),
        ("plane_mask", FLASH_MAX_PLANES),
        ("block",      FLASH_BLOCK_BITS),
        ("page",       FLASH_PAGE_BITS),
        ("column",     16),
        ("length",     max_len.bit_length()),
        ("buffer",     FLASH_BUFFER_BITS),
        ("slc",        1),      # pseudo-SLC: a DAh prefix before each plane's array command
        #                         (ERASE, PROGRAM, READ); ignored by the other ops
        ("raw",        1),      # READ / PROGRAM without ECC: column and length are bytes of
        #                         the page register (with ECC: data bytes, whole codewords;
        #                         rtl/nand/nand_ecc.py); ignored by the other ops
    ]
    if channel_bits:
        fields.append(("channel", channel_bits))
    return fields


def flash_cpl_layout():
    """One completion per flash operation, after the op's last read byte."""
    return [
        ("tag",    FLASH_TAG_BITS),
        ("status", 8),      # the 70h status byte of a program or erase (last plane's group)
        ("fail",   1),      # status bit 0
        ("error",  1),      # refused: unknown op, way >= n_ways, length > max_len, empty or
        #                     out-of-range plane mask, an ECC op not in whole codewords (no
        #                     pin was touched, no data moved)
        ("timeout", 1),     # the die stayed busy past busy_timeout (hung): the op was given
        #                     up (fail set too) and the die fenced until a RESET it answers
        ("ecc_bits", 7),    # an ECC read: the most bits corrected in one of its codewords
        ("ecc_fail", 1),    # an ECC read: a codeword had more errors than the code corrects
    ]


# The firmware's ports ---------------------------------------------------------------------------

TO_FW   = "to_fw"       # hardware -> firmware: status words, valid, pop
FROM_FW = "from_fw"     # firmware -> hardware: storage words, push, busy

PORTS = (
    ("cmd",     TO_FW,   sqe_layout),
    ("cpl",     FROM_FW, cq_cpl_layout),
    ("sqcfg",   FROM_FW, fw_sq_cfg_layout),
    ("cqcfg",   FROM_FW, cq_cfg_layout),
    ("sqpage",  FROM_FW, sq_page_layout),
    ("cqpage",  FROM_FW, cq_page_layout),
    ("xfer",    FROM_FW, fw_xfer_layout),
    ("xfercpl", TO_FW,   fw_xfer_cpl_layout),
    ("ivc",     FROM_FW, ivc_layout),
    ("aer",     TO_FW,   fw_aer_layout),
    ("bereq",   TO_FW,   be_req_layout),
    ("becpl",   FROM_FW, be_cpl_layout),
    ("fop",     FROM_FW, flash_op_layout),
    ("fcpl",    TO_FW,   flash_cpl_layout),
)


def port_layouts(tag_width, max_len, channel_bits):
    """[(port, direction, layout)] of a build: tag_width (1..8) of the front end, max_len
    (bytes, 1..65535) and channel_bits (1..5) of the flash back end."""
    params = {fw_xfer_layout: (tag_width,), be_req_layout: (tag_width,),
              be_cpl_layout: (tag_width,), flash_op_layout: (max_len, channel_bits)}
    return [(name, direction, layout(*params.get(layout, ())))
            for name, direction, layout in PORTS]


# Word placement ---------------------------------------------------------------------------------


def pack(fields):
    """[(name, width)] -> ([(name, width, word, shift)], n_words): the fields in payload order
    in 32-bit words; a field of 32 bits or fewer never straddles two words (it starts a new
    word when it would); a wider field starts a word and takes as many as it needs."""
    out, word, used = [], 0, 0
    for name, width in fields:
        if width > 32:
            if used:
                word, used = word + 1, 0
            out.append((name, width, word, 0))
            word += -(-width // 32)
            continue
        if used + width > 32:
            word, used = word + 1, 0
        out.append((name, width, word, used))
        used += width
        if used == 32:
            word, used = word + 1, 0
    return out, word + (1 if used else 0)


# C header ---------------------------------------------------------------------------------------


def c_header():
    """The C header of the stream facts the firmware names (`ssdlab/fw_streams.h`): the flash
    op codes. The pack / unpack code of the ports is soc/fw_ports.py's (it needs a build's
    widths); this header needs none, so the mock HAL build has it too."""
    width = max(len(name) for name, _, _ in FLASH_OPS) + len("FLASH_ = 0,")
    out = ["/* SPDX-License-Identifier: BSD-2-Clause */",
           "/* The hardware/firmware stream facts the firmware names.",
           " * Generated from spec/fw_streams.py by `python -m spec.fw_streams --c-header`;"
           " do not edit. */",
           "#ifndef SSDLAB_FW_STREAMS_H", "#define SSDLAB_FW_STREAMS_H", "",
           f"/* A flash op's `op` field ({FLASH_OP_BITS} bits; other values are refused) */",
           "enum flash_opcode {"]
    for name, value, what in FLASH_OPS:
        out.append(f"    {f'FLASH_{name} = {value},':<{width}}  /* {what} */")
    out += ["};", "", "#endif /* SSDLAB_FW_STREAMS_H */", ""]
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m spec.fw_streams", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--c-header", type=Path, metavar="PATH", required=True,
                        help="write the C header (ssdlab/fw_streams.h)")
    args = parser.parse_args(argv)
    args.c_header.parent.mkdir(parents=True, exist_ok=True)
    args.c_header.write_text(c_header())


if __name__ == "__main__":
    main()
