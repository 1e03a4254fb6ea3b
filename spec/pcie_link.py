# SPDX-License-Identifier: BSD-2-Clause
"""The host link of a drive, analytically: a PCIe link (generation 1..5, x1..x16) or a SATA
link capped at its MB/s, each direction on its own, and the LitePCIe data path that carries
it (`front_end`). The simulation harness paces its TLPs with the very same figures
(`harness_args` -> sim/harness/pcie_link_pacer.h), so a measured figure can be held against
`payload_mb_s`.

Directions: "to_host" (device memory writes: the data of NVMe reads, CQEs, MSIs) and
"from_host" (completions of the device's memory reads: the data of NVMe writes, SQEs).
MB/s are 10^6 B/s of TLP payload.

What one TLP costs on the wire (PCI Express Base Specification 4.0/5.0, ch. 3 and 4):

- line coding: 8b/10b at 2.5 and 5 GT/s (4.2.1), 128b/130b at 8, 16, 32 GT/s (4.2.2);
- framing: Gen1/2 STP symbol + END symbol (4.2.1.1.2), Gen3+ the 4-byte STP token, which
  carries the sequence number (4.2.2.3.2); Gen1/2 send the 2-byte sequence number on its own
  (3.6.2.1); every TLP has a 4-byte LCRC (3.6.2.1); ECRC is not used (TD = 0). Per TLP:
  1 + 2 + 4 + 1 = 8 bytes (Gen1/2), 4 + 4 = 8 bytes (Gen3+), plus the header;
- header: 3 DW for memory requests below 4 GiB and for completions. LitePCIe's packetizer
  (litepcie/tlp/packetizer.py, LitePCIeTLPPacketizer with address_width=64, as our endpoint
  is built) sends mem_wr32/mem_rd32 (3 DW) when address bits 63:32 are zero, 4 DW only above
  4 GiB (or on UltraScale at 256 bits); the harness's host RAM lies below 4 GiB;
- SKP ordered sets (clock compensation, 4.2.7): Gen1/2 four symbols every 1180..1538 symbol
  times, Gen3+ one block every 370..375 blocks; we take the longest interval (the least
  overhead: the limit stays an upper bound);
- DLLPs: Ack and UpdateFC DLLPs are 8 bytes on the wire at every generation (Gen1/2: SDP +
  6 bytes + END; Gen3+: the 2-byte SDP token + 6 bytes). They travel opposite to the TLPs
  they acknowledge and credit: the receiver of ACK_EVERY_TLPS TLPs sends one Ack, of
  UPDATEFC_EVERY_TLPS TLPs one UpdateFC. A stream of memory writes (to_host) therefore pays
  no DLLPs on its own wire; a stream of read completions (from_host) pays those of the
  device's read requests (one per MRRS bytes) going the other way.
"""

from dataclasses import dataclass
from math import ceil

__all__ = ["GT_S", "LANES", "MPS_CHOICES", "MRRS_CHOICES", "TLP_FRAMING_BYTES", "DLLP_BYTES",
           "ACK_EVERY_TLPS", "UPDATEFC_EVERY_TLPS", "HEADER_3DW", "HEADER_4DW",
           "FRONT_END_WIDTHS", "FRONT_END_CLOCKS", "SATA_NCQ_QUEUES", "SATA_NCQ_DEPTH",
           "PcieLink", "SataLink", "FrontEnd", "lane_mb_s", "front_end", "harness_args"]

GT_S = {1: 2.5, 2: 5.0, 3: 8.0, 4: 16.0, 5: 32.0}     # per lane (PCIe Base 5.0, 4.2)
LANES = (1, 2, 4, 8, 16)
MPS_CHOICES = (128, 256, 512)           # LitePCIe's endpoint advertises at most 512 B
MRRS_CHOICES = (128, 256, 512)          # what the harness's cfg_max_read_req codes take
TLP_FRAMING_BYTES = 8                   # framing + sequence number + LCRC, see above
DLLP_BYTES = 8
# Ack coalescing: the Ack latency limit of PCIe Base (3.6.3.1, tables 3-7..3-9) is about 1.5
# to 2 max-size TLP times at MPS 256, so a streaming receiver acks about every second TLP.
ACK_EVERY_TLPS = 2
# Credit return: a receive buffer of about 8 max-size TLPs returns its credits at least every
# half buffer; one UpdateFC carries header and data credits of one type.
UPDATEFC_EVERY_TLPS = 4
HEADER_3DW, HEADER_4DW = 12, 16
FRONT_END_WIDTHS = (64, 128, 256, 512)  # LitePCIe's data paths (bits)
FRONT_END_CLOCKS = (125e6, 250e6)       # 250 MHz only when 512 bits at 125 MHz do not carry it
SATA_NCQ_QUEUES, SATA_NCQ_DEPTH = 1, 32  # NCQ: one queue of 32 commands (SATA 3.x, 13.6)

_CODING = {1: (8, 10), 2: (8, 10), 3: (128, 130), 4: (128, 130), 5: (128, 130)}
_SKP = {1: (1538, 4), 2: (1538, 4), 3: (375, 1), 4: (375, 1), 5: (375, 1)}  # (interval, len)
DIRECTIONS = ("to_host", "from_host")


def _check(name, value, ok, legal):
    if isinstance(value, bool) or not ok:
        raise ValueError(f"pcie_link: {name} = {value!r}: out of range {legal}")


def lane_mb_s(gen):
    """MB/s per lane and direction after line coding (before SKP, TLP and DLLP overhead):
    GT/s x coding efficiency / 8 bits. gen: 1..5. Gen1 250, Gen2 500, Gen3 984.6,
    Gen4 1969.2, Gen5 3938.5."""
    _check("gen", gen, gen in GT_S, "1..5")
    k, n = _CODING[gen]
    return GT_S[gen] * 1000 * k / n / 8


@dataclass(frozen=True)
class PcieLink:
    """A PCIe link, one direction's figures each (the two are symmetric on the wire).

    gen: 1..5; lanes: 1, 2, 4, 8, 16; mps (Max Payload Size, bytes): 128, 256, 512;
    mrrs (Max Read Request Size, bytes): 128, 256, 512; read_latency_ns: the root complex's
    time from a memory read request to its first completion, >= 0 (the harness's
    --read-latency-ns)."""
    gen: int
    lanes: int
    mps: int = 256
    mrrs: int = 512
    read_latency_ns: int = 400

    def __post_init__(self):
        _check("gen", self.gen, self.gen in GT_S, "1..5")
        _check("lanes", self.lanes, self.lanes in LANES, "1, 2, 4, 8, 16")
        _check("mps", self.mps, self.mps in MPS_CHOICES, "128, 256, 512")
        _check("mrrs", self.mrrs, self.mrrs in MRRS_CHOICES, "128, 256, 512")
        _check("read_latency_ns", self.read_latency_ns,
               isinstance(self.read_latency_ns, int) and self.read_latency_ns >= 0, ">= 0")

    interface = "nvme"
    tlp_overhead_bytes = TLP_FRAMING_BYTES
    header_on_wire = True
    dllp_bytes = DLLP_BYTES
    ack_every = ACK_EVERY_TLPS
    fc_every = UPDATEFC_EVERY_TLPS

    @property
    def raw_mb_s(self):
        """Per direction after line coding: lanes x `lane_mb_s(gen)` (Gen3 x4: 3938.5)."""
        return lane_mb_s(self.gen) * self.lanes

    @property
    def fs_per_byte(self):
        """Wire time of one byte in femtoseconds (an integer the harness uses as is): the raw
        rate less the SKP ordered sets' share."""
        interval, length = _SKP[self.gen]
        return round(1e9 / (self.raw_mb_s * interval / (interval + length)))

    def wire_bytes(self, payload, header=HEADER_3DW):
        """Bytes one TLP of `payload` bytes (0..4096, a multiple of 4 as on the wire) with a
        `header` of 12 or 16 bytes occupies: framing + sequence + LCRC + header + payload."""
        return self.tlp_overhead_bytes + header + payload

    def wire_fs(self, payload, header=HEADER_3DW):
        """Wire time of one TLP in fs (`wire_bytes` x `fs_per_byte`)."""
        return self.wire_bytes(payload, header) * self.fs_per_byte

    def wire_ns(self, payload, header=HEADER_3DW):
        return self.wire_fs(payload, header) / 1e6

    def dllp_fs(self):
        return self.dllp_bytes * self.fs_per_byte

    def payload_mb_s(self, direction):
        """Payload limit of a long stream of max-size TLPs in `direction`, MB/s:

        - "to_host": memory writes of MPS bytes, 3 DW headers; no DLLPs on this wire
          (their Acks and UpdateFCs go the other way);
        - "from_host": completions of MPS bytes (the harness splits at MPS boundaries),
          3 DW headers, plus the Ack and UpdateFC DLLPs answering the device's read requests
          (one per MRRS bytes), which share this wire.
        Formula: mps / (wire bytes per TLP) / fs_per_byte."""
        if direction not in DIRECTIONS:
            raise ValueError(f"pcie_link: direction = {direction!r}: one of {DIRECTIONS}")
        per_tlp = self.wire_bytes(self.mps)
        if direction == "from_host":
            reqs_per_tlp = self.mps / self.mrrs
            per_tlp += reqs_per_tlp * self.dllp_bytes * (1 / self.ack_every + 1 / self.fc_every)
        return self.mps / (per_tlp * self.fs_per_byte) * 1e9

    def describe(self):
        return (f"PCIe {self.gen}.0 x{self.lanes} ({self.raw_mb_s:.0f} MB/s raw), MPS "
                f"{self.mps} B, MRRS {self.mrrs} B, read latency {self.read_latency_ns} ns")


@dataclass(frozen=True)
class SataLink:
    """A SATA drive simulated as NVMe behind a link that carries `mb_s` MB/s of payload each
    way (TLP headers, framing and DLLPs are not charged: the cap is the SATA drive's own);
    NCQ: SATA_NCQ_QUEUES queue of SATA_NCQ_DEPTH. mb_s: 1..6000 (600 MB/s is SATA 3's
    6 Gb/s after 8b/10b; the persona states what its drive reaches, e.g. 550)."""
    mb_s: int
    mps: int = 256
    mrrs: int = 512
    read_latency_ns: int = 400

    def __post_init__(self):
        _check("sata_mb_s", self.mb_s, isinstance(self.mb_s, int) and 1 <= self.mb_s <= 6000,
               "1..6000")
        _check("mps", self.mps, self.mps in MPS_CHOICES, "128, 256, 512")
        _check("mrrs", self.mrrs, self.mrrs in MRRS_CHOICES, "128, 256, 512")

    interface = "sata"
    tlp_overhead_bytes = 0
    header_on_wire = False
    dllp_bytes = 0
    ack_every = 0
    fc_every = 0

    @property
    def raw_mb_s(self):
        return float(self.mb_s)

    @property
    def fs_per_byte(self):
        return round(1e9 / self.mb_s)

    def wire_bytes(self, payload, header=HEADER_3DW):
        return payload

    def wire_fs(self, payload, header=HEADER_3DW):
        return self.wire_bytes(payload, header) * self.fs_per_byte

    def wire_ns(self, payload, header=HEADER_3DW):
        return self.wire_fs(payload, header) / 1e6

    def dllp_fs(self):
        return 0

    def payload_mb_s(self, direction):
        """`mb_s` (to the femtosecond of fs_per_byte) in either direction."""
        if direction not in DIRECTIONS:
            raise ValueError(f"pcie_link: direction = {direction!r}: one of {DIRECTIONS}")
        return 1e9 / self.fs_per_byte

    def describe(self):
        return (f"SATA, payload capped at {self.mb_s} MB/s, NCQ {SATA_NCQ_QUEUES} queue x "
                f"{SATA_NCQ_DEPTH}, read latency {self.read_latency_ns} ns")


@dataclass(frozen=True)
class FrontEnd:
    """A LitePCIe data path: `data_width` bits at `clk_hz`, and the payload MB/s its beats
    carry per direction with max-size TLPs (`mb_s`)."""
    data_width: int
    clk_hz: float
    mb_s: dict


def beats(payload, width, header=HEADER_3DW):
    """Beats of one TLP on a `width`-bit LitePCIe stream: header and payload dwords, each TLP
    starting on a new beat (LitePCIe does not straddle)."""
    return ceil((header + payload) * 8 / width)


def _carries(link, width, clk):
    mb = link.mps * clk / beats(link.mps, width) / 1e6     # 3 DW MWr and CplD alike
    return {d: mb for d in DIRECTIONS}


def front_end(link):
    """The smallest LitePCIe data path (64, 128, 256, 512 bits) at 125 MHz, else at 250 MHz,
    whose beats carry `link.payload_mb_s` in both directions: MPS payload + 3 DW header per
    TLP, rounded up to whole beats (each TLP starts on a new beat). `link`: a PcieLink or a
    SataLink. Returns a FrontEnd; a link no path carries raises ValueError naming
    host.pcie_gen / host.pcie_lanes and what the widest path carries (512 bits at 250 MHz:
    at MPS 256 up to Gen3 x8 or Gen4 x4)."""
    need = {d: link.payload_mb_s(d) for d in DIRECTIONS}
    for clk in FRONT_END_CLOCKS:
        for w in FRONT_END_WIDTHS:
            got = _carries(link, w, clk)
            if all(got[d] >= need[d] for d in DIRECTIONS):
                return FrontEnd(w, clk, got)
    top = _carries(link, FRONT_END_WIDTHS[-1], FRONT_END_CLOCKS[-1])["to_host"]
    fits = []
    for g in GT_S:
        ok = [n for n in LANES
              if PcieLink(g, n, link.mps, link.mrrs).payload_mb_s("to_host") <= top]
        if ok:
            fits.append(f"Gen{g} x{ok[-1]}")
    raise ValueError(
        f"host.pcie_gen = {getattr(link, 'gen', None)}, host.pcie_lanes = "
        f"{getattr(link, 'lanes', None)}: the link carries {need['to_host']:.0f} MB/s per "
        f"direction at MPS {link.mps}; the front end's widest data path ("
        f"{FRONT_END_WIDTHS[-1]} bits at {FRONT_END_CLOCKS[-1] / 1e6:.0f} MHz) carries "
        f"{top:.0f} MB/s: supported up to {', '.join(fits)}")


def harness_args(link):
    """The ssdlab_sim options that make the harness pace its TLPs exactly as this model does
    (sim/harness/pcie_link_pacer.h): per byte fs, per-TLP overhead bytes, whether headers
    occupy the wire, DLLP bytes and their rates, MPS, MRRS, read latency."""
    return ["--link-fs-per-byte", str(link.fs_per_byte),
            "--link-tlp-overhead", str(link.tlp_overhead_bytes),
            "--link-header-on-wire", str(int(link.header_on_wire)),
            "--link-dllp-bytes", str(link.dllp_bytes),
            "--link-ack-every", str(link.ack_every),
            "--link-fc-every", str(link.fc_every),
            "--mps", str(link.mps), "--mrrs", str(link.mrrs),
            "--read-latency-ns", str(link.read_latency_ns)]
