# SPDX-License-Identifier: BSD-2-Clause
"""sim/harness/pcie_link_pacer.h agrees with spec/pcie_link.py: ONE formula.

A small probe program includes the header, takes spec.pcie_link.harness_args(link) as the
harness does and replays TLP streams; the times it gives are held against the model's
`wire_fs`, `dllp_fs` and `payload_mb_s`:

- a to_host stream of max-size memory writes leaves at the model's payload rate, exactly;
- a from_host stream of completions, with the device's read requests acked and credited on
  the same wire, leaves at the model's from_host payload rate, exactly;
- a PHY with one TLP of buffering: `holding` while a handed-over TLP waits for the wire;
- SATA: payload only on the wire; no link (fs_per_byte 0): everything at once;
- the harness parses every option harness_args gives.
"""

import shutil
import subprocess
from pathlib import Path

import pytest

from spec.pcie_link import HEADER_3DW, PcieLink, SataLink, harness_args

pytestmark = pytest.mark.smoke

ROOT = Path(__file__).resolve().parents[4]
HARNESS = ROOT / "sim" / "harness"
CXX = shutil.which("g++") or shutil.which("c++")

PROBE = r"""
#include "pcie_link_pacer.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char **argv) {
    PcieLinkParams p;
    for (int i = 1; i + 1 < argc; i += 2) {
        unsigned long long v = strtoull(argv[i + 1], nullptr, 0);
        if (!strcmp(argv[i], "--link-fs-per-byte")) p.fs_per_byte = v;
        else if (!strcmp(argv[i], "--link-tlp-overhead")) p.tlp_overhead = unsigned(v);
        else if (!strcmp(argv[i], "--link-header-on-wire")) p.header_on_wire = v != 0;
        else if (!strcmp(argv[i], "--link-dllp-bytes")) p.dllp_bytes = unsigned(v);
        else if (!strcmp(argv[i], "--link-ack-every")) p.ack_every = unsigned(v);
        else if (!strcmp(argv[i], "--link-fc-every")) p.fc_every = unsigned(v);
    }
    PcieLinkPacer link(p);
    char op[8];
    unsigned long long now, hdr, payload;
    while (scanf("%7s %llu", op, &now) == 2) {
        if (!strcmp(op, "tlp") && scanf("%llu %llu", &hdr, &payload) == 2)
            printf("%llu\n", (unsigned long long)link.send_tlp(now, hdr, payload));
        else if (!strcmp(op, "rx")) link.received_tlp(now);
        else if (!strcmp(op, "hold")) printf("%d\n", int(link.holding(now)));
    }
    printf("busy %llu tlp %llu dllp %llu\n", (unsigned long long)link.busy_fs,
           (unsigned long long)link.n_tlp, (unsigned long long)link.n_dllp);
}
"""


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    if CXX is None:
        pytest.skip("no C++ compiler")
    d = tmp_path_factory.mktemp("pacer")
    (d / "probe.cpp").write_text(PROBE)
    subprocess.run([CXX, "-O1", "-std=c++17", "-Wall", "-Werror", f"-I{HARNESS}",
                    str(d / "probe.cpp"), "-o", str(d / "probe")], check=True)

    def run(link, script):
        args = harness_args(link) if link else []
        out = subprocess.run([str(d / "probe"), *args], input="\n".join(script) + "\n",
                             capture_output=True, text=True, check=True).stdout.split("\n")
        return [int(x) for x in out if x and not x.startswith("busy")], \
            [x for x in out if x.startswith("busy")][0].split()
    return run


@pytest.mark.parametrize("gen, lanes, mps", [(1, 1, 256), (3, 4, 256), (4, 4, 512),
                                             (2, 8, 128)])
def test_to_host_stream_at_the_model_rate(probe, gen, lanes, mps):
    link = PcieLink(gen, lanes, mps=mps)
    n = 1000
    times, _ = probe(link, [f"tlp 0 {HEADER_3DW} {mps}"] * n)
    assert times == [k * link.wire_fs(mps) for k in range(1, n + 1)]
    mb_s = n * mps / times[-1] * 1e9
    assert mb_s == pytest.approx(link.payload_mb_s("to_host"), rel=1e-12)


@pytest.mark.parametrize("mps, mrrs", [(256, 512), (128, 512), (512, 512), (256, 256)])
def test_from_host_stream_at_the_model_rate(probe, mps, mrrs):
    """Completions of MRRS-byte reads, split at MPS; each read request reaching the host makes
    the host's receiver ack / credit it on the completions' wire."""
    link = PcieLink(3, 4, mps=mps, mrrs=mrrs)
    reads = 400
    script = []
    for _ in range(reads):
        script.append("rx 0")
        script += [f"tlp 0 {HEADER_3DW} {mps}"] * (mrrs // mps)
    times, stats = probe(link, script)
    cpls = reads * mrrs // mps
    dllps = reads // link.ack_every + reads // link.fc_every
    assert times[-1] == cpls * link.wire_fs(mps) + dllps * link.dllp_fs()
    assert int(stats[5]) == dllps
    mb_s = cpls * mps / times[-1] * 1e9
    assert mb_s == pytest.approx(link.payload_mb_s("from_host"), rel=1e-12)


def test_one_tlp_of_buffering(probe):
    link = PcieLink(1, 1)
    w = link.wire_fs(256)
    times, _ = probe(link, ["tlp 0 12 256", "hold 0", "tlp 0 12 256", "hold 0",
                            f"hold {w - 1}", f"hold {w}", f"tlp {3 * w} 12 0"])
    # the first goes on the wire at once (nothing waits); the second waits until w
    assert times == [w, 0, 2 * w, 1, 1, 0, 3 * w + link.wire_fs(0)]


def test_sata_and_unpaced(probe):
    s = SataLink(550)
    times, _ = probe(s, ["tlp 0 12 256", "rx 0", "rx 0", "rx 0", "rx 0", "tlp 0 16 4096"])
    assert times == [256 * s.fs_per_byte, (256 + 4096) * s.fs_per_byte]
    times, _ = probe(None, ["tlp 5 12 256", "tlp 5 12 256", "hold 5"])
    assert times == [5, 5, 0]


def test_harness_takes_every_option():
    src = (HARNESS / "ssdlab_sim.cpp").read_text()
    assert '#include "pcie_link_pacer.h"' in src
    for opt in harness_args(PcieLink(3, 4))[::2]:
        assert f'"{opt}"' in src, opt
