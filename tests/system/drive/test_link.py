# SPDX-License-Identifier: BSD-2-Clause
"""The host link on the built drive: a link-bound sequential read is never above the modelled
payload limit (spec/pcie_link.py) and lands within 5 % of it.

A drive is read sequentially in 128 KiB commands of never-written LBAs at QD 32, which the FTL
serves as zeroes from the buffer (the fill engine) without flash operations: only the host
side is measured, since no simulated flash back end (SDR channels, at most 50 MB/s each) can
feed a PCIe 3.0 x4 link. MB/s come from libssdlab's sl_bench, first submit to last completion
in simulated ns.

- smoke, the drive of test_drive.py (persona default = samsung-950pro-512, PCIe 3.0 x4,
  2 channels; its front end a 512-bit TLP path at 125 MHz): the persona's own link (from the
  build's config.json), and the same build behind a SATA 550 MB/s cap (SimDrive(link=...));
- full: PCIe Gen1 x1 and x2 on the same build; PCIe 4.0 x4 on a build of
  kioxia-cm6v-3.2t (1 channel: the flash does not matter here), whose front end is a 512-bit
  path at 250 MHz.
"""

import time

import pytest

from spec.pcie_link import PcieLink, SataLink
from sw.ssdlab.drive import Drive

PERSONA, PARAMS = "default", {"n_channels": 2}
BLOCKS, QD, N_IOS = 256, 32, 256        # 128 KiB x 256 at QD 32: 32 MiB


def _build(persona, params):
    from sw.ssdlab.flows.sim import build_drive, drive_config
    return build_drive(drive_config(persona, params))   # build_drive locks its directory


@pytest.fixture(scope="module")
def build():
    return _build(PERSONA, PARAMS)


def seq_read(build, link):
    from sw.ssdlab.flows.sim import SimDrive
    t0 = time.monotonic()
    with SimDrive(build, boot_us=1000, link=link, extra_args=["--quiet-uart"]) as sim:
        with Drive(sim=sim.socket) as d:
            ns = d.info()["ns_blocks"]
            # CAP.MQES from the persona's queue depth (samsung-950pro-512: 1024 entries)
            assert d.info()["cap"] & 0xFFFF == 1023
            before = d.stats()
            r = d.bench(io_blocks=BLOCKS, qd=QD, n_ios=N_IOS, lba_first=0,
                        lba_count=ns // BLOCKS * BLOCKS)
            after = d.stats()
        link = sim.link
    assert r["errors"] == 0 and r["ios"] == N_IOS
    mb_s = r["bytes"] / r["elapsed_ns"] * 1e3
    limit = link.payload_mb_s("to_host")
    busy_ns = int(after["link_to_ns"]) - int(before["link_to_ns"])
    print(f"\n{link.describe()}: 128 KiB sequential read QD {QD}, {N_IOS} I/Os of never-written "
          f"LBAs: {mb_s:.1f} MB/s in {r['elapsed_ns'] / 1e6:.3f} ms simulated = "
          f"{100 * mb_s / limit:.1f} % of the modelled {limit:.1f} MB/s; link to host busy "
          f"{busy_ns / 1e6:.3f} ms; {time.monotonic() - t0:.0f} s wall; build {build.name}")
    return mb_s, limit


def check(mb_s, limit):
    assert mb_s <= limit, f"{mb_s:.1f} MB/s above the link's payload limit {limit:.1f}"
    assert mb_s >= 0.95 * limit, f"{mb_s:.1f} MB/s: not within 5 % of {limit:.1f} MB/s"


@pytest.mark.smoke
def test_gen3_x4_from_the_config(build):
    """The default persona's PCIe 3.0 x4, from the build's config.json."""
    mb_s, limit = seq_read(build, None)
    assert 3500 < limit < 3938
    check(mb_s, limit)


@pytest.mark.smoke
def test_sata_cap(build):
    """The same drive behind a SATA persona's cap: never above 550 MB/s."""
    mb_s, limit = seq_read(build, SataLink(550))
    assert limit == pytest.approx(550, rel=1e-6)
    check(mb_s, limit)


@pytest.mark.full
@pytest.mark.parametrize("lanes", [1, 2])
def test_pcie_gen1(build, lanes):
    mb_s, limit = seq_read(build, PcieLink(1, lanes))
    check(mb_s, limit)


@pytest.mark.full
def test_gen4_x4():
    """PCIe 4.0 x4 (kioxia-cm6v-3.2t): a 512-bit front end at 250 MHz."""
    b = _build("kioxia-cm6v-3.2t", {"n_channels": 1})
    mb_s, limit = seq_read(b, None)
    assert 7000 < limit < 7877
    check(mb_s, limit)
