# SPDX-License-Identifier: BSD-2-Clause
"""PCIeSimPHY: a simulation PCIe PHY with LitePCIe's PHY contract and the TLPs at ports.

It stands where a hard-IP PHY (litepcie.phy.s7pciephy.S7PCIEPHY) stands: LitePCIeEndpoint sees
the same `sink`/`source` streams (phy_layout(data_width)), `data_width`, `bar0_mask`, `id`,
`max_request_size`, `max_payload_size`, `msi`, `endianness` and `qword_aligned`. Behind it there
is no link and no configuration space: a host model (tests/lib/pcie_tb.py in cocotb tests)
plays the hard IP and the root complex, drives the TLP streams and the configuration inputs.

TLP stream format, both directions (the 7-series AXI4-Stream format, `endianness = "big"`,
`qword_aligned = False`, which is what LitePCIe's depacketizer and packetizer expect at every
width 64..512: their header extracters and inserters take the 3DW header from lanes 0..2 and
the payload from lane 3 on; the UltraScale PHYs' adapters hand them the same layout):

- a TLP is a sequence of dwords: header dwords first, then payload dwords; dword n of a TLP
  sits in lane n % (data_width // 32) of beat n // (data_width // 32), lane 0 at bits 31:0;
  every TLP starts in lane 0 of a new beat (no straddling);
- each dword holds TLP bytes 4n..4n+3 with byte 4n in bits 31:24 ("big"): a header dword reads
  as printed in the PCIe specification (Fmt/Type in bits 31:24 of dword 0); a payload dword
  holds the lowest-addressed byte in bits 31:24 (LitePCIe swaps it back to little endian);
- `*_tkeep` has one bit per byte; the dwords of a beat are all valid (tkeep 0xF per dword)
  except the dwords after the end of the TLP on its last beat (`*_tlast`), which are 0;
- 3DW headers for 32-bit addresses; LitePCIe's depacketizer routes only MRd32/MWr32 requests,
  so BAR0 must be placed below 4 GiB (a non-prefetchable BAR is, on any root complex).

Ports (the host model drives s_* and cfg_*, takes m_*):
  s_tlp_tvalid/tready/tdata/tkeep/tlast   TLPs host -> device (requests, completions)
  m_tlp_tvalid/tready/tdata/tkeep/tlast   TLPs device -> host
  m_msi_valid/ready/data                  MSI requests: data is the vector (cfg_interrupt_di)
  cfg_bus_dev_fn                          the function's ID, bus[15:8] dev[7:3] fn[2:0]
  cfg_max_payload, cfg_max_read_req       Device Control MPS / MRRS codes (128 << code bytes)
  cfg_msix_enable, cfg_msix_fm            (with_msix) MSI-X Message Control: MSI-X Enable and
                                          Function Mask, as the 7-series hard IP's
                                          cfg_interrupt_msixenable / cfg_interrupt_msixfm
"""

from litepcie.common import get_bar_mask, msi_layout, phy_layout
from litex.gen import LiteXModule
from litex.soc.interconnect import stream
from migen import Case, If, Signal

__all__ = ["PCIeSimPHY"]

# Helpers -----------------------------------------------------------------------------------------

DATA_WIDTHS = (64, 128, 256, 512)   # LitePCIe's packetizer/depacketizer widths.
MAX_SIZE = 512      # Largest MPS/MRRS LitePCIe handles (litepcie.tlp.common), as S7PCIEPHY caps.


def _check(name, value, ok, legal):
    if not ok:
        raise ValueError(f"PCIeSimPHY: {name}={value!r} not in {legal}")


# Core --------------------------------------------------------------------------------------------

class PCIeSimPHY(LiteXModule):
    """Simulation PCIe PHY for LitePCIeEndpoint, TLP streams at top-level ports.

    Parameters:
      data_width (64, 128, 256 or 512, default 64): TLP stream width in bits, the LitePCIe
             datapath width; the host model's beats are this wide (tkeep data_width / 8).
      bar0_size  (power of two, 0x1000..0x80000000, default 0x4000): BAR0 size in bytes; gives
                 `bar0_mask`, which the depacketizer uses to turn addresses into BAR offsets.
                 The host model must present a BAR0 of this size.
      with_msix  (default False): the MSI-X Message Control inputs, as `msix_enable` and
                 `msix_function_mask` (what NvmeController(with_msix=True) reads).
    """
    endianness    = "big"
    qword_aligned = False

    def __init__(self, data_width=64, bar0_size=0x4000, with_msix=False):
        # Parameters checks.
        _check("data_width", data_width, data_width in DATA_WIDTHS, str(DATA_WIDTHS))
        _check("bar0_size", bar0_size,
               isinstance(bar0_size, int) and 0x1000 <= bar0_size <= 0x8000_0000
               and bar0_size & (bar0_size - 1) == 0, "powers of two 0x1000..0x80000000")
        self.data_width = data_width
        self.bar0_size  = bar0_size
        self.bar0_mask  = get_bar_mask(bar0_size)

        # LitePCIe PHY contract.
        self.sink   = stream.Endpoint(phy_layout(data_width))   # TLPs from the packetizer.
        self.source = stream.Endpoint(phy_layout(data_width))   # TLPs to the depacketizer.
        self.msi    = stream.Endpoint(msi_layout())             # MSI requests from LitePCIeMSI.
        self.id               = Signal(16)
        self.max_request_size = Signal(16)
        self.max_payload_size = Signal(16)

        # Host-side ports.
        def port(name, width=1):
            s = Signal(width)
            s.name_override = name
            return s
        nbytes = data_width // 8
        self.s_tlp = {n: port(f"s_tlp_t{n}", w) for n, w in
                      [("valid", 1), ("ready", 1), ("data", data_width), ("keep", nbytes),
                       ("last", 1)]}
        self.m_tlp = {n: port(f"m_tlp_t{n}", w) for n, w in
                      [("valid", 1), ("ready", 1), ("data", data_width), ("keep", nbytes),
                       ("last", 1)]}
        self.m_msi = {n: port(f"m_msi_{n}", w) for n, w in
                      [("valid", 1), ("ready", 1), ("data", 8)]}
        self.cfg_bus_dev_fn   = port("cfg_bus_dev_fn", 16)
        self.cfg_max_payload  = port("cfg_max_payload", 3)
        self.cfg_max_read_req = port("cfg_max_read_req", 3)
        self.with_msix = with_msix
        if with_msix:
            self.msix_enable        = port("cfg_msix_enable")
            self.msix_function_mask = port("cfg_msix_fm")

        # # #

        # Host -> device. `first` marks the beat after a `last`, as the hard-IP PHYs mark it.
        s, m = self.s_tlp, self.m_tlp
        in_packet = Signal()
        self.sync += If(s["valid"] & s["ready"], in_packet.eq(~s["last"]))
        self.comb += [
            self.source.valid.eq(s["valid"]),
            s["ready"].eq(self.source.ready),
            self.source.first.eq(~in_packet),
            self.source.last.eq(s["last"]),
            self.source.dat.eq(s["data"]),
            self.source.be.eq(s["keep"]),
        ]

        # Device -> host.
        self.comb += [
            m["valid"].eq(self.sink.valid),
            self.sink.ready.eq(m["ready"]),
            m["last"].eq(self.sink.last),
            m["data"].eq(self.sink.dat),
            m["keep"].eq(self.sink.be),
            self.m_msi["valid"].eq(self.msi.valid),
            self.msi.ready.eq(self.m_msi["ready"]),
            self.m_msi["data"].eq(self.msi.dat),
        ]

        # Configuration, decoded like S7PCIEPHY decodes the hard IP's Device Control register.
        def convert_size(code, size):
            return Case(code, {i: size.eq(min(128 << i, MAX_SIZE)) for i in range(8)})
        self.comb += [
            self.id.eq(self.cfg_bus_dev_fn),
            convert_size(self.cfg_max_payload, self.max_payload_size),
            convert_size(self.cfg_max_read_req, self.max_request_size),
        ]

    def get_ios(self):
        msix = [self.msix_enable, self.msix_function_mask] if self.with_msix else []
        return ([*self.s_tlp.values(), *self.m_tlp.values(), *self.m_msi.values(),
                 self.cfg_bus_dev_fn, self.cfg_max_payload, self.cfg_max_read_req, *msix])
