# SPDX-License-Identifier: BSD-2-Clause
"""spec/pcie_link.py: the host link model and the front end that carries it.

- raw rates after line coding (Gen1 x1 250 MB/s, Gen3 x4 3938 MB/s) for every generation;
- per-TLP wire bytes and the payload limits at MPS 128/256/512, hand-computed here from the
  PCIe framing (8 B + 3 DW header), the SKP share and, from_host, the DLLPs of the reads;
- the 3 DW header: LitePCIe's packetizer sends mem_wr32 below 4 GiB (read from its source);
- SATA: the payload cap itself, NCQ 1 x 32;
- front_end: the smallest LitePCIe path and clock per link; Gen4 x8 / Gen5 x16 refused,
  naming host.pcie_gen / host.pcie_lanes and the supported range;
- bad input (gen 6, lanes 3, MPS 1024, bool) names the field and the legal range.
"""

import inspect

import pytest

from spec import pcie_link as pl
from spec.pcie_link import PcieLink, SataLink, front_end

pytestmark = pytest.mark.smoke


def test_raw_rates():
    assert PcieLink(1, 1).raw_mb_s == 250.0
    assert PcieLink(2, 1).raw_mb_s == 500.0
    assert round(PcieLink(3, 4).raw_mb_s) == 3938
    assert round(PcieLink(4, 4).raw_mb_s) == 7877
    assert round(PcieLink(5, 16).raw_mb_s) == 63015
    for g, gt in pl.GT_S.items():        # 8b/10b up to Gen2, 128b/130b from Gen3
        eff = 0.8 if g <= 2 else 128 / 130
        assert pl.lane_mb_s(g) == pytest.approx(gt * 1000 * eff / 8)


def test_wire_bytes_per_tlp():
    # Gen1/2: STP 1 + sequence 2 + LCRC 4 + END 1; Gen3+: STP token 4 (with sequence) + LCRC 4
    for g in (1, 3, 5):
        link = PcieLink(g, 4)
        assert link.wire_bytes(256) == 8 + 12 + 256
        assert link.wire_bytes(0, pl.HEADER_4DW) == 8 + 16
    assert PcieLink(1, 1).fs_per_byte == round(1e15 / 250e6 * 1542 / 1538)   # SKP 4 / 1538
    assert PcieLink(3, 4).fs_per_byte == round(1e15 / (8e9 * 4 * 128 / 130 / 8) * 376 / 375)


def test_payload_hand_computed():
    # Gen3 x4, MPS 256: 256 of every 276 bytes, SKP one block in 376
    raw = 8e9 * 4 * 128 / 130 / 8 / 1e6 * 375 / 376
    link = PcieLink(3, 4, mps=256, mrrs=512)
    assert link.payload_mb_s("to_host") == pytest.approx(raw * 256 / 276, rel=1e-5)
    # from_host: one 512 B read request per 2 completions, acked every 2nd TLP, credited every
    # 4th: (8/2 + 8/4) / 2 = 3 bytes of DLLPs per completion on the completions' wire
    assert link.payload_mb_s("from_host") == pytest.approx(raw * 256 / 279, rel=1e-5)
    assert round(link.payload_mb_s("to_host")) == 3643
    # Gen1 x1 at MPS 128 and 512
    raw1 = 250 * 1538 / 1542
    assert PcieLink(1, 1, mps=128).payload_mb_s("to_host") == pytest.approx(
        raw1 * 128 / 148, rel=1e-5)
    assert PcieLink(1, 1, mps=512, mrrs=512).payload_mb_s("from_host") == pytest.approx(
        raw1 * 512 / (532 + 6), rel=1e-5)
    # never above the raw rate, and a larger MPS carries more
    for g in pl.GT_S:
        for n in pl.LANES:
            a, b = (PcieLink(g, n, mps=m).payload_mb_s("to_host") for m in (128, 512))
            assert a < b < PcieLink(g, n).raw_mb_s


def test_litepcie_sends_3dw_below_4gib():
    from litepcie.tlp import packetizer
    src = inspect.getsource(packetizer.LitePCIeTLPPacketizer)
    # 64-bit addressing uses WR64/RD64 (4 DW) only when address bits 63:32 are not zero
    assert "If((req_sink.adr[32:] != 0) | force_64b," in src
    assert 'fmt_dict[ f"mem_wr32"]' in src


def test_sata():
    s = SataLink(550)
    assert s.payload_mb_s("to_host") == pytest.approx(550, rel=1e-6)
    assert s.payload_mb_s("from_host") == pytest.approx(550, rel=1e-6)
    assert s.wire_bytes(256) == 256 and s.dllp_fs() == 0
    assert (pl.SATA_NCQ_QUEUES, pl.SATA_NCQ_DEPTH) == (1, 32)
    fe = front_end(s)
    assert (fe.data_width, fe.clk_hz) == (64, 125e6)


@pytest.mark.parametrize("gen, lanes, width, clk", [
    (1, 1, 64, 125e6), (2, 2, 64, 125e6), (2, 4, 128, 125e6), (3, 2, 128, 125e6),
    (3, 4, 512, 125e6), (4, 2, 512, 125e6), (4, 4, 512, 250e6), (3, 8, 512, 250e6),
    (5, 2, 512, 250e6)])
def test_front_end(gen, lanes, width, clk):
    link = PcieLink(gen, lanes)
    fe = front_end(link)
    assert (fe.data_width, fe.clk_hz) == (width, clk)
    # it carries the link, and the next smaller choice does not
    beats = pl.beats(link.mps, width)
    assert link.mps * clk / beats / 1e6 >= link.payload_mb_s("to_host")
    choices = [(c, w) for c in pl.FRONT_END_CLOCKS for w in pl.FRONT_END_WIDTHS]
    i = choices.index((clk, width))
    if i:
        c, w = choices[i - 1]
        assert link.mps * c / pl.beats(link.mps, w) / 1e6 < link.payload_mb_s("to_host")


def test_beats_no_straddling():
    assert pl.beats(256, 64) == 34        # 12 + 256 bytes = 33.5 beats of 8 bytes
    assert pl.beats(256, 256) == 9        # 268 / 32 = 8.4
    assert pl.beats(0, 512) == 1


@pytest.mark.parametrize("gen, lanes", [(5, 16), (4, 16), (4, 8), (3, 16), (5, 4)])
def test_front_end_refuses(gen, lanes):
    with pytest.raises(ValueError) as e:
        front_end(PcieLink(gen, lanes))
    msg = str(e.value)
    assert f"host.pcie_gen = {gen}, host.pcie_lanes = {lanes}" in msg
    assert "512 bits at 250 MHz" in msg
    assert "supported up to Gen1 x16, Gen2 x16, Gen3 x8, Gen4 x4, Gen5 x2" in msg


@pytest.mark.parametrize("kw, text", [
    (dict(gen=6, lanes=4), "gen = 6: out of range 1..5"),
    (dict(gen=0, lanes=4), "gen = 0: out of range 1..5"),
    (dict(gen=3, lanes=3), "lanes = 3: out of range 1, 2, 4, 8, 16"),
    (dict(gen=3, lanes=32), "lanes = 32"),
    (dict(gen=True, lanes=4), "gen = True"),
    (dict(gen=3, lanes=4, mps=1024), "mps = 1024: out of range 128, 256, 512"),
    (dict(gen=3, lanes=4, mrrs=4096), "mrrs = 4096"),
    (dict(gen=3, lanes=4, read_latency_ns=-1), "read_latency_ns = -1: out of range >= 0")])
def test_bad_input(kw, text):
    with pytest.raises(ValueError, match=text):
        PcieLink(**kw)


def test_bad_sata_and_direction():
    with pytest.raises(ValueError, match="sata_mb_s = 0: out of range 1..6000"):
        SataLink(0)
    with pytest.raises(ValueError, match="direction = 'up'"):
        PcieLink(3, 4).payload_mb_s("up")


def test_harness_args():
    args = pl.harness_args(PcieLink(3, 4, mps=512, mrrs=256, read_latency_ns=700))
    d = dict(zip(args[::2], args[1::2], strict=True))
    assert d == {"--link-fs-per-byte": str(PcieLink(3, 4).fs_per_byte),
                 "--link-tlp-overhead": "8", "--link-header-on-wire": "1",
                 "--link-dllp-bytes": "8", "--link-ack-every": "2", "--link-fc-every": "4",
                 "--mps": "512", "--mrrs": "256", "--read-latency-ns": "700"}
    d = dict(zip(*[iter(pl.harness_args(SataLink(550)))] * 2, strict=True))
    assert d["--link-tlp-overhead"] == "0" and d["--link-header-on-wire"] == "0"
    assert d["--link-ack-every"] == "0"
