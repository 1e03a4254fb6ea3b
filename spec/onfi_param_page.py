# SPDX-License-Identifier: BSD-2-Clause
"""The ONFI parameter page, both sides.

- The die's side, `onfi_parameter_page(part)`: the page a part's die returns (the golden die
  model and the RTL NAND emulator both serve it).
- The host (controller) side, `parse_parameter_page(buf)`: what controller firmware does to
  discover a part: take the first of the redundant 256-byte copies whose signature and CRC
  hold. It is written from the ONFI definition independently of the page writer (its own
  CRC, `crc16_onfi`, bit-serial), so tests that read a page through RTL check the writer too.
"""

__all__ = ["ONFI_SIGNATURE", "onfi_crc16", "onfi_parameter_page", "crc16_onfi",
           "parse_parameter_page"]

ONFI_SIGNATURE = b"ONFI"

PAGE_BYTES = 256


# The die's side ---------------------------------------------------------------------------------

def onfi_crc16(data):
    """ONFI parameter page CRC-16: polynomial 0x8005, initial value 0x4F4E, MSB first."""
    crc = 0x4F4E
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) if crc & 0x8000 else crc << 1
        crc &= 0xFFFF
    return crc


def _endurance(cycles):
    """ONFI endurance encoding (value, multiplier): value * 10**multiplier <= cycles, value
    <= 255 (rounded down: never claim more than the part does)."""
    exp = 0
    while cycles > 255:
        cycles //= 10
        exp += 1
    return cycles, exp


def onfi_parameter_page(part, copies=3):
    """The ONFI 3.0 parameter page of `part` (256 bytes, CRC at 254..255) repeated `copies`
    times (3..16). Field offsets follow the ONFI parameter page definition."""
    g, t = part.geometry, part.timing
    p = bytearray(256)

    def put(offset, value, size):
        p[offset:offset + size] = int(value).to_bytes(size, "little")

    # Revision information and features block.
    p[0:4] = ONFI_SIGNATURE
    put(4, 0x7E, 2)                     # supports ONFI 1.0, 2.0, 2.1, 2.2, 2.3, 3.0
    features = 0
    if g.luns > 1:
        features |= 1 << 1              # multiple LUN operations
    if g.planes > 1:
        features |= (1 << 3) | (1 << 6)  # multi-plane program/erase, multi-plane read
    put(6, features, 2)
    # Optional commands: page cache program, read cache, get/set features, read status
    # enhanced, change read column enhanced.
    put(8, 0x004F, 2)
    p[14] = copies                      # number of parameter pages
    # Manufacturer information block.
    p[32:44] = part.manufacturer.ljust(12).encode("ascii")
    p[44:64] = part.model.ljust(20).encode("ascii")
    p[64] = part.jedec_id
    # Memory organisation block.
    put(80, g.page_bytes, 4)
    put(84, g.spare_bytes, 2)
    put(92, g.pages_per_block, 4)
    put(96, g.blocks_per_lun, 4)
    p[100] = g.luns
    p[101] = (g.column_cycles << 4) | g.row_cycles
    p[102] = g.bits_per_cell
    put(103, part.bad_blocks_limit, 2)
    p[105], p[106] = _endurance(part.pe_cycles)
    p[107] = 1                          # block 0 guaranteed valid
    p[108], p[109] = _endurance(part.pe_cycles)
    p[110] = 1                          # programs per page
    p[112] = part.ecc_bits
    p[113] = g.plane_bits
    # Multi-plane attributes: no block address restriction, program cache supported.
    p[114] = 0x06 if g.planes > 1 else 0
    # Electrical parameters block.
    p[128] = 5                          # I/O pin capacitance, pF (assumed)
    put(129, part.sdr_modes, 2)
    put(133, -(-t.t_prog_max_ns // 1000), 2)    # tPROG max, us
    put(135, -(-t.t_bers_ns // 1000), 2)        # tBERS max, us
    put(137, -(-t.t_r_max_ns // 1000), 2)       # tR max, us
    put(139, part.t_ccs_ns, 2)                  # tCCS, ns (ONFI default 500)
    put(152, -(-t.t_r_max_ns // 1000), 2)       # tR multi-plane max, us
    put(254, onfi_crc16(p[:254]), 2)
    return bytes(p) * copies


# The host's side --------------------------------------------------------------------------------

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
                    "bits_per_cell": p[102], "planes": 1 << p[113], "t_ccs_ns": u(139, 2),
                    "copy": i // PAGE_BYTES}
    raise ValueError(f"no parameter page copy in {len(buf)} bytes passes the ONFI CRC")
