# SPDX-License-Identifier: BSD-2-Clause
"""The host link on the built drive: a link-bound sequential read is never above the modelled
payload limit (spec/pcie_link.py) and lands within 5 % of it.

The drive of test_drive.py (persona default = SATA crucial-m500-240, 2 channels, simulation
scale; the same build) is read sequentially in 128 KiB commands of never-written LBAs, which
the FTL serves as zeroes from the buffer without flash operations: only the host side is
measured. MB/s come from libssdlab's sl_bench, first submit to last completion in simulated
ns. Links slower than the 64-bit, 125 MHz front end (941 MB/s), so the link binds: the SATA
cap of the build's own configuration (smoke), PCIe Gen1 x1 and x2 on the same build through
SimDrive(link=...) (full). The drive alone (unpaced) reads about 700 MB/s at this depth.
"""

import fcntl
import time
from pathlib import Path

import pytest

from spec.pcie_link import PcieLink
from sw.ssdlab.drive import Drive

ROOT = Path(__file__).resolve().parents[3]
PERSONA, PARAMS = "default", {"n_channels": 2}
BLOCKS, QD, N_IOS = 256, 16, 128        # 128 KiB x 128 at QD 16: 16 MiB


@pytest.fixture(scope="module")
def build():
    from sw.ssdlab.flows.sim import build_drive, drive_config
    lock_path = ROOT / "build" / "sim" / "system-drive.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return build_drive(drive_config(PERSONA, PARAMS))


def seq_read(build, link):
    from sw.ssdlab.flows.sim import SimDrive
    t0 = time.monotonic()
    with SimDrive(build, boot_us=1000, link=link, extra_args=["--quiet-uart"]) as sim:
        with Drive(sim=sim.socket) as d:
            ns = d.info()["ns_blocks"]
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
def test_sata_cap_from_the_config(build):
    """The default persona's SATA cap (550 MB/s), from the build's config.json."""
    mb_s, limit = seq_read(build, None)
    assert limit == pytest.approx(550, rel=1e-6)
    check(mb_s, limit)


@pytest.mark.full
@pytest.mark.parametrize("lanes", [1, 2])
def test_pcie_gen1(build, lanes):
    mb_s, limit = seq_read(build, PcieLink(1, lanes))
    check(mb_s, limit)
