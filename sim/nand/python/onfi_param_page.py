# SPDX-License-Identifier: BSD-2-Clause
"""The host (controller) side of the ONFI parameter page: check its CRC and read the geometry.

What controller firmware does to discover a part: take the first of the redundant 256-byte
copies whose signature and CRC hold. Written from the ONFI definition independently of
`nand_die`, which writes the page, so tests that read a page through RTL check the model too.
"""

__all__ = ["crc16_onfi", "parse_parameter_page"]

PAGE_BYTES = 256


def crc16_onfi(buf) -> int:
    """ONFI parameter page CRC-16: polynomial 8005h, initial value 4F4Eh, bit-serial MSB first,
    over bytes 0..253 of a copy."""
    crc = 0x4F4E
    for byte in buf:
        for i in range(7, -1, -1):
            top = ((crc >> 15) ^ (byte >> i)) & 1
            crc = ((crc << 1) & 0xFFFF) ^ (0x8005 if top else 0)
    return crc


def parse_parameter_page(buf) -> dict:
    """Geometry from the first copy in `buf` (one or more 256-byte copies) whose "ONFI"
    signature and CRC hold. Raises ValueError when none does."""
    for i in range(0, len(buf) - PAGE_BYTES + 1, PAGE_BYTES):
        p = bytes(buf[i:i + PAGE_BYTES])
        if p[:4] == b"ONFI" and crc16_onfi(p[:254]) == int.from_bytes(p[254:256], "little"):
            def u(off, n, p=p):
                return int.from_bytes(p[off:off + n], "little")
            return {"page_bytes": u(80, 4), "spare_bytes": u(84, 2),
                    "pages_per_block": u(92, 4), "blocks_per_lun": u(96, 4), "luns": p[100],
                    "column_cycles": p[101] >> 4, "row_cycles": p[101] & 0xF,
                    "bits_per_cell": p[102], "planes": 1 << p[113], "copy": i // PAGE_BYTES}
    raise ValueError(f"no parameter page copy in {len(buf)} bytes passes the ONFI CRC")
