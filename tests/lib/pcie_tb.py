# SPDX-License-Identifier: BSD-2-Clause
"""NvmeBridgeDevice: the hard IP's side of PCIeSimPHY, as a cocotbext-pcie device.

The device plugs into a cocotbext-pcie RootComplex port like any cocotbext-pcie device model.
Its one function emulates the configuration space a hard IP presents (IDs, class code
01-08-02 NVMe, a 64-bit non-prefetchable BAR0, MSI and MSI-X capabilities, the PCIe
capability with MPS/MRRS), and it moves TLPs between the root complex and the DUT:

- memory requests that hit BAR0 and completions for the DUT's own requests go to the DUT's
  `s_tlp_*` stream (cocotbext-axi AxiStreamSource);
- TLPs from the DUT's `m_tlp_*` stream (AxiStreamSink) go upstream: completions to the root
  complex's requests, and the DUT's own memory requests (DMA);
- each `m_msi_*` request (vector number) becomes the MSI write the function's MSI capability
  describes (the hard IP's cfg_interrupt);
- `cfg_bus_dev_fn`, `cfg_max_payload` and `cfg_max_read_req` follow the function's ID and its
  Device Control register.

The stream format is PCIeSimPHY's (see rtl/pcie/pcie_sim_phy.py): dwords in lane order, each
dword holding TLP bytes 4n..4n+3 with byte 4n in bits 31:24. A TLP from the DUT whose length on
the wire disagrees with its header (3 or 4 header dwords plus Length payload dwords) is
malformed: it is logged, kept in `malformed` and dropped, as a root port would drop it.
"""

import logging

import cocotb
from cocotb.clock import Clock
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time
from cocotbext.axi import AxiStreamBus, AxiStreamFrame, AxiStreamSink, AxiStreamSource
from cocotbext.pcie.core import Device, Endpoint, RootComplex
from cocotbext.pcie.core.caps import MsiCapability, MsixCapability
from cocotbext.pcie.core.tlp import Tlp, TlpType

__all__ = ["CplFault", "NvmeBridgeDevice", "NvmeBridgeFunction", "tlp_to_stream",
           "stream_to_tlp"]

NVME_CLASS_CODE = 0x010802      # Mass storage, Non-Volatile Memory controller, NVM Express.

_TO_DUT = {TlpType.MEM_READ, TlpType.MEM_READ_64, TlpType.MEM_WRITE, TlpType.MEM_WRITE_64}


# Stream format -----------------------------------------------------------------------------------

def tlp_to_stream(tlp):
    """TLP -> AXI-Stream bytes (byte lane order): each dword's TLP bytes reversed, so TLP byte
    4n lands in bits 31:24 of dword n."""
    pkt = bytes(tlp.pack())
    return b"".join(pkt[i:i + 4][::-1] for i in range(0, len(pkt), 4))


def stream_to_tlp(data):
    """AXI-Stream bytes -> (TLP bytes, expected size in bytes from the header)."""
    data = bytes(data)
    if len(data) % 4:
        return data, None
    pkt = b"".join(data[i:i + 4][::-1] for i in range(0, len(data), 4))
    if len(pkt) < 12:
        return pkt, None
    hdr = Tlp.unpack_header(pkt + bytes(4))     # 3DW headers read a 4th dword they ignore.
    size = hdr.get_header_size() + (hdr.length * 4 if hdr.has_data() else 0)
    return pkt, size


# Function ----------------------------------------------------------------------------------------

class NvmeBridgeFunction(Endpoint):
    """Configuration space of the NVMe function (what the hard IP would present)."""
    def __init__(self, bridge, vendor_id, device_id, bar0_size, msi_vectors, msix_vectors,
                 msix_table_offset, msix_pba_offset):
        super().__init__()
        self.bridge = bridge
        self.vendor_id = vendor_id
        self.device_id = device_id
        self.class_code = NVME_CLASS_CODE
        self.subsystem_vendor_id = vendor_id
        self.subsystem_id = device_id
        # NVMe 1.4 section 2.1.10: MLBAR/MUBAR, 64-bit, not prefetchable.
        self.configure_bar(0, bar0_size, ext=True, prefetch=False)

        self.msi_cap = MsiCapability()
        self.msi_cap.msi_64bit_address_capable = 1
        self.msi_cap.msi_multiple_message_capable = (msi_vectors - 1).bit_length()
        self.register_capability(self.msi_cap)

        self.msix_cap = MsixCapability()
        self.msix_cap.msix_table_size = msix_vectors - 1
        self.msix_cap.msix_table_bar_indicator_register = 0
        self.msix_cap.msix_table_offset = msix_table_offset
        self.msix_cap.msix_pba_bar_indicator_register = 0
        self.msix_cap.msix_pba_offset = msix_pba_offset
        self.register_capability(self.msix_cap)

        for t in _TO_DUT:
            self.register_rx_tlp_handler(t, self.bridge.to_dut)

    async def handle_tlp(self, tlp):
        # Completions are for the DUT's requests: this function issues only posted MSI writes.
        if tlp.fmt_type in {TlpType.CPL, TlpType.CPL_DATA, TlpType.CPL_LOCKED,
                            TlpType.CPL_LOCKED_DATA}:
            tlp.release_fc()
            await self.bridge.to_dut(tlp)
        else:
            await super().handle_tlp(tlp)


# Device ------------------------------------------------------------------------------------------

class NvmeBridgeDevice(Device):
    """cocotbext-pcie device standing for the hard IP in front of a PCIeSimPHY DUT.

    dut, clock, reset: the DUT handle (ports s_tlp_*, m_tlp_*, m_msi_*, cfg_*) and its clock and
    active-high reset. bar0_size must equal the PCIeSimPHY's. msi_vectors (1..32, power of two)
    and msix_vectors (1..2048) size the capabilities; the MSI-X table and PBA sit in BAR0 at
    msix_table_offset / msix_pba_offset (the table itself belongs to the DUT).
    """
    def __init__(self, dut, clock=None, reset=None, bar0_size=0x4000, vendor_id=0x1D1D,
                 device_id=0x5D1A, msi_vectors=32, msix_vectors=65, msix_table_offset=0x2000,
                 msix_pba_offset=0x3000):
        if msi_vectors not in (1, 2, 4, 8, 16, 32):
            raise ValueError(f"NvmeBridgeDevice: msi_vectors={msi_vectors} not a power of two "
                             "1..32")
        if not 1 <= msix_vectors <= 2048:
            raise ValueError(f"NvmeBridgeDevice: msix_vectors={msix_vectors} out of 1..2048")
        super().__init__()
        self.log = logging.getLogger("cocotb.pcie.NvmeBridgeDevice")
        self.dut = dut
        self.clock = clock if clock is not None else dut.clk
        self.reset = reset if reset is not None else dut.rst
        self.function = NvmeBridgeFunction(self, vendor_id, device_id, bar0_size, msi_vectors,
                                           msix_vectors, msix_table_offset, msix_pba_offset)
        self.append_function(self.function)

        self.tlp_source = AxiStreamSource(AxiStreamBus.from_prefix(dut, "s_tlp"), self.clock,
                                          self.reset)
        self.tlp_sink = AxiStreamSink(AxiStreamBus.from_prefix(dut, "m_tlp"), self.clock,
                                      self.reset)
        self.tlp_source.log.setLevel(logging.WARNING)    # one INFO line per TLP otherwise
        self.tlp_sink.log.setLevel(logging.WARNING)
        self.malformed = []          # (TLP bytes, expected size) of dropped TLPs from the DUT
        self.from_dut = []           # every well-formed TLP the DUT sent, in order
        self.from_dut_ns = []        # ... and the simulated time its last beat left the DUT
        self.to_dut_log = None       # a list to record (time handed to the link, TLP) into
        self.msi_requests = []       # MSI vectors the DUT requested
        self.msi_ready_prob = 1.0    # m_msi_ready probability per cycle (backpressure knob)
        self._msi_rng = None

        dut.m_msi_ready.value = 0
        # A DUT built with MSI-X (PCIeSimPHY with_msix) takes the Message Control bits.
        self._with_msix = hasattr(dut, "cfg_msix_enable")
        self._update_cfg()
        cocotb.start_soon(self._run_tx())
        cocotb.start_soon(self._run_msi())
        cocotb.start_soon(self._run_cfg())

    async def enable(self, rc):
        """What a host driver does before touching the device: enumerate the hierarchy, then
        enable memory space and bus mastering (the DUT's own memory writes need it). Returns
        the root complex's handle of this function."""
        await rc.enumerate()
        pdev = rc.find_device(self.function.pcie_id)
        await pdev.enable_device()
        await pdev.set_master()
        return pdev

    # Root complex -> DUT
    async def to_dut(self, tlp):
        self.log.debug("to DUT: %r", tlp)
        if self.to_dut_log is not None:
            self.to_dut_log.append((get_sim_time("ns"), tlp))
        await self.tlp_source.send(AxiStreamFrame(tlp_to_stream(tlp)))

    # DUT -> root complex
    async def _run_tx(self):
        while True:
            frame = await self.tlp_sink.recv()
            pkt, size = stream_to_tlp(frame.tdata)
            if size is None or size != len(pkt):
                self.log.error("malformed TLP from DUT: %d bytes on the wire, header says %s: %s",
                               len(pkt), size, pkt.hex())
                self.malformed.append((pkt, size))
                continue
            tlp = Tlp.unpack(pkt)
            self.log.debug("from DUT: %r", tlp)
            self.from_dut.append(tlp)
            self.from_dut_ns.append(get_sim_time("ns"))
            if tlp.is_completion():
                await self.function.upstream_send(tlp)
            else:
                await self.function.send(tlp)

    async def _run_msi(self):
        import random
        rng = random.Random(cocotb.RANDOM_SEED)
        dut = self.dut
        while True:
            ready = rng.random() < self.msi_ready_prob
            dut.m_msi_ready.value = int(ready)
            await RisingEdge(self.clock)
            if ready and int(dut.m_msi_valid.value):
                vector = int(dut.m_msi_data.value)
                self.msi_requests.append(vector)
                cocotb.start_soon(self._issue_msi(vector))

    async def _issue_msi(self, vector):
        cap = self.function.msi_cap
        if not cap.msi_enable:
            self.log.warning("MSI %d requested while MSI is disabled: dropped", vector)
            return
        await cap.issue_msi_interrupt(vector)

    def _update_cfg(self):
        f = self.function
        self.dut.cfg_bus_dev_fn.value = int(f.pcie_id)
        self.dut.cfg_max_payload.value = f.pcie_cap.max_payload_size & 7
        self.dut.cfg_max_read_req.value = f.pcie_cap.max_read_request_size & 7
        if self._with_msix:
            self.dut.cfg_msix_enable.value = int(f.msix_cap.msix_enable)
            self.dut.cfg_msix_fm.value = int(f.msix_cap.msix_function_mask)

    async def _run_cfg(self):
        # The hard IP's cfg_* outputs follow config writes; sampled once per clock.
        last = None
        while True:
            await RisingEdge(self.clock)
            f = self.function
            now = (int(f.pcie_id), f.pcie_cap.max_payload_size, f.pcie_cap.max_read_request_size,
                   f.msix_cap.msix_enable, f.msix_cap.msix_function_mask)
            if now != last:
                self._update_cfg()
                last = now


class PcieSystemTB:
    """The bench every system test of a PCIeSimPHY design shares: the clock, reset held, a
    cocotbext-pcie root complex with an NvmeBridgeDevice on its port. `init()` releases reset,
    starts the subclass's `_monitor()` and enables the function as a host driver would.

    Subclasses idle their own inputs after calling this constructor (all before time moves).
    """
    CLK_PERIOD_NS = 8

    def __init__(self, dut, **bridge_kwargs):
        self.dut = dut
        self.log = dut._log
        cocotb.start_soon(Clock(dut.clk, self.CLK_PERIOD_NS, unit="ns").start())
        dut.rst.value = 1
        dut.s_tlp_tvalid.value = 0
        self.rc = RootComplex()
        self.bridge = NvmeBridgeDevice(dut, **bridge_kwargs)
        self.rc.make_port().connect(self.bridge)
        self.pdev = None

    async def _monitor(self):
        """The subclass's watcher of the DUT's own outputs; none by default."""

    async def raw_request(self, fmt_type, offset, length_dw, data=None):
        """Send one memory request at BAR0 + offset from the root complex, sizes the host
        driver model never uses (a 3 DW read, a 4 DW write); return the completions (a
        read's) or [] (a write)."""
        req = Tlp()
        req.fmt_type = fmt_type
        req.requester_id = self.rc.pcie_id
        addr = self.pdev.bar_addr[0] + offset
        if data is None:
            req.set_addr_be(addr, 4 * length_dw)
            return await self.rc.perform_nonposted_operation(req, timeout=10, timeout_unit="us")
        req.set_addr_be_data(addr, data)
        await self.rc.perform_posted_operation(req)
        return []

    async def init(self):
        await ClockCycles(self.dut.clk, 5)
        self.dut.rst.value = 0
        await ClockCycles(self.dut.clk, 5)
        cocotb.start_soon(self._monitor())
        self.pdev = await self.bridge.enable(self.rc)


class CplFault:
    """A host link fault on the completions of one of the DUT's memory reads: the next read
    (with `lo`/`hi`: the next one whose address is in lo..hi - 1). kind "poison" sets their EP
    bit (a poisoned Completion with Data); "hold" keeps them back until `release()` (never
    called: a completion timeout). Every completion of that read (by tag, up to the one whose
    byte count ends the request) is affected; `hit` counts them, `tag` is -1 once the last
    has passed. Installed on `bridge` (an NvmeBridgeDevice) at construction."""
    def __init__(self, bridge, kind, lo=0, hi=2**64):
        if kind not in ("poison", "hold"):
            raise ValueError(f"CplFault: kind={kind!r} not 'poison' or 'hold'")
        self.bridge, self.kind, self.lo, self.hi = bridge, kind, lo, hi
        self.tag, self.hit, self.held = None, 0, []
        self._send = bridge.to_dut
        bridge.to_dut = self._to_dut

    def _address(self, tag):
        """Address of the DUT's latest read with `tag`."""
        return next((t.address for t in reversed(self.bridge.from_dut)
                     if t.fmt_type in (TlpType.MEM_READ, TlpType.MEM_READ_64) and t.tag == tag),
                    None)

    async def _to_dut(self, tlp):
        if tlp.fmt_type == TlpType.CPL_DATA and (
                self.tag == tlp.tag
                or (self.tag is None and self.lo <= (self._address(tlp.tag) or -1) < self.hi)):
            self.tag = tlp.tag
            self.hit += 1
            if tlp.byte_count + (tlp.lower_address & 3) <= 4 * tlp.length:
                self.tag = -1                  # the request's last completion
            if self.kind == "poison":
                tlp.ep = True
            else:
                self.held.append(tlp)
                return
        await self._send(tlp)

    async def release(self):
        """Deliver the held completions now (late: Unexpected Completions if timed out)."""
        held, self.held = self.held, []
        for tlp in held:
            await self._send(tlp)
