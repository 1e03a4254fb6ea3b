# SPDX-License-Identifier: BSD-2-Clause
"""NVMe front-end benchmark in simulated time (a benchmark, not a test).

    .venv/bin/python tests/nvme/nvme_controller/bench_nvme_controller.py \
        [--clock-mhz 250] [--data-width 64] [--queues 1,4,16,64] [--qd 64] \
        [--sizes 512,4096] [--mps 256] [--mrrs 512] [--be-latency 8] [--count-iops 2048]

Builds nvme_controller_top (PCIeSimPHY -> LitePCIe -> NvmeController -> buffer RAM, the
front end's data path `--data-width` bits wide) with the RAM back end model (a responder:
`--be-latency` cycles from request to completion) and the firmware model, brings it up with
the host driver model the way the Linux driver does (as many I/O queue pairs as the largest
`--queues`, an MSI-X vector per queue), and measures against the cocotbext-pcie root complex:

1. 128 KiB sequential writes and reads, 8 commands outstanding over 4 queues: MB/s as a
   fraction of the PHY datapath limit (data_width x clock, per direction);
2. random reads of each `--sizes` from each count of `--queues`, `--qd` commands outstanding
   in all (qd / queues per queue, at least 1): commands per second at the build's clock and
   cycles per command (the front end's throughput: the back end answers at once);
3. 4 KiB reads at queue depth 1: cycles from the SQ tail doorbell entering the controller to
   the CQE leaving it, split into the host's memory latency (SQE fetch round trip), the back
   end's time, the data's own link time (payload and TLP header beats) and what remains:
   the controller's overhead.

Every time is simulated time at the given clock; the host model reacts in zero simulated
time but its MMIO writes and memory completions cross the modelled link. The configuration
is printed with the figures.
"""

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

RESULT_ENV = "NVME_BENCH_RESULT"
CONFIG_ENV = "NVME_BENCH_CONFIG"
N_QUEUES = 4
MPS_CODE = {128: 0, 256: 1, 512: 2}

if os.environ.get(CONFIG_ENV):      # inside the simulator, run by main() below
    import logging

    from cocotbext.pcie.core.tlp import TlpType
    from pcie_tb import PcieSystemTB
    from ssdlab_harness import core_params

    from sim.nvme.nvme_fw_model import NvmeFirmwareModel
    from sim.nvme.nvme_host import NvmeHost
    from sim.nvme.nvme_ram_backend import NvmeRamBackend

    CFG = json.loads(os.environ[CONFIG_ENV])

    def p_queues():
        """The I/O queue pairs the host creates: the build's (the largest --queues)."""
        return core_params()["n_io_queues"]

    class BenchTB(PcieSystemTB):
        CLK_PERIOD_NS = 1000 / CFG["clock_mhz"]

        def __init__(self, dut, **bridge_kw):
            super().__init__(dut, **bridge_kw)
            self.rc.log.setLevel(logging.WARNING)
            self.p = core_params()

    async def _workers(host, n_cmds, n_queues, depth_per_queue, op, nlb, rng, span):
        """`n_cmds` commands spread over I/O queues 1..n_queues, `depth_per_queue` outstanding
        on each; returns the elapsed simulated ns."""
        left = [n_cmds]

        async def worker(qid):
            while left[0] > 0:
                left[0] -= 1
                slba = rng.randrange(span // nlb) * nlb
                if op == "read":
                    await host.read(qid, slba, nlb)
                else:
                    await host.write(qid, slba, bytes(nlb * host.lba_size))

        start = get_sim_time("ns")
        tasks = [cocotb.start_soon(worker(q)) for q in range(1, n_queues + 1)
                 for _ in range(depth_per_queue)]
        for t in tasks:
            await t
        return get_sim_time("ns") - start

    async def _latency(tb, host, samples):
        """QD1 4 KiB reads on queue 1, with every TLP and back-end handshake timestamped."""
        dut, bridge = tb.dut, tb.bridge
        be_times = []

        async def be_monitor():
            while True:
                await RisingEdge(dut.clk)
                if int(dut.m_be_req_valid.value) and int(dut.m_be_req_ready.value):
                    be_times.append(("req", get_sim_time("ns")))
                if int(dut.s_be_cpl_valid.value) and int(dut.s_be_cpl_ready.value):
                    be_times.append(("cpl", get_sim_time("ns")))

        mon = cocotb.start_soon(be_monitor())
        sq_db = host.db_offset(1, 0)
        bar_base = tb.pdev.bar_addr[0]
        clk = tb.CLK_PERIOD_NS
        rows = []
        for i in range(samples):
            bridge.to_dut_log = []
            n_from = len(bridge.from_dut)
            be_times.clear()
            await host.read(1, 8 * i, 8)
            await ClockCycles(dut.clk, 20)
            to_dut = bridge.to_dut_log
            bridge.to_dut_log = None
            sent = list(zip(bridge.from_dut_ns[n_from:], bridge.from_dut[n_from:], strict=True))
            t_db = next(t for t, tlp in to_dut if tlp.fmt_type in
                        (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)
                        and tlp.address == bar_base + sq_db)
            t_mrd = next(t for t, tlp in sent if tlp.fmt_type in
                         (TlpType.MEM_READ, TlpType.MEM_READ_64))
            t_cpl = [t for t, tlp in to_dut if tlp.is_completion() and t >= t_mrd][-1]
            mwr = [(t, tlp) for t, tlp in sent if tlp.fmt_type in
                   (TlpType.MEM_WRITE, TlpType.MEM_WRITE_64)]
            data = [(t, tlp) for t, tlp in mwr if tlp.length > 4]
            cqe = [(t, tlp) for t, tlp in mwr if tlp.length == 4][0]
            req = next(t for k, t in be_times if k == "req")
            cpl = next(t for k, t in be_times if k == "cpl")
            # A TLP's wire time on the PHY: header (3 or 4 DW) plus payload, in beats.
            beat = CFG["data_width"] // 8
            data_beats = sum(-(-(tlp.get_header_size() + 4 * tlp.length) // beat)
                             for _, tlp in data)
            total = (cqe[0] - t_db) / clk
            host_mem = (t_cpl - t_mrd) / clk
            backend = (cpl - req) / clk
            rows.append({"total": total, "host_mem": host_mem, "backend": backend,
                         "data_beats": data_beats,
                         "overhead": total - host_mem - backend - data_beats})
        mon.cancel()
        return rows

    @cocotb.test(timeout_time=2000, timeout_unit="ms")
    async def bench_controller(dut):
        tb = BenchTB(dut, msix_vectors=p_queues() + 1)
        p = tb.p
        lbads = p.get("lbads", 9)
        ns_size = 1 << 22
        be = NvmeRamBackend(dut, tag_width=p["tag_width"], max_transfer=p["max_transfer"],
                            lbads=lbads, ns_size=ns_size, latency=CFG["be_latency"])
        fw = NvmeFirmwareModel(dut, be, n_io_queues=p["n_io_queues"],
                               max_transfer=p["max_transfer"], lbads=lbads, ns_size=ns_size,
                               tag_width=p["tag_width"])
        await tb.init()
        cap = tb.bridge.function.pcie_cap
        cap.max_payload_size = MPS_CODE[CFG["mps"]]
        cap.max_read_request_size = MPS_CODE[CFG["mrrs"]]
        tb.rc.max_payload_size = MPS_CODE[CFG["mps"]]
        await ClockCycles(dut.clk, 5)
        fw.start()
        host = NvmeHost(tb, cmd_timeout_us=100_000)
        await host.init(n_io_queues=p_queues(), qdepth=256, msix_vectors=p_queues() + 1)
        assert tb.pdev.msix_enabled
        rng = random.Random(1)
        res = {"clk_ns": tb.CLK_PERIOD_NS}
        span = ns_size // 2

        n = CFG["count_seq"]
        nlb = 131072 >> lbads
        res["seq_write"] = {"bytes": n * 131072,
                            "ns": await _workers(host, n, N_QUEUES, 2, "write", nlb, rng, span)}
        res["seq_read"] = {"bytes": n * 131072,
                           "ns": await _workers(host, n, N_QUEUES, 2, "read", nlb, rng, span)}
        res["rand_read"] = []
        for size in CFG["sizes"]:
            for nq in CFG["queues"]:
                k, depth = CFG["count_iops"], max(1, CFG["qd"] // nq)
                ns = await _workers(host, k, nq, depth, "read", size >> lbads, rng, span)
                res["rand_read"].append({"size": size, "queues": nq, "depth": depth,
                                         "cmds": k, "ns": ns})
        res["latency"] = await _latency(tb, host, CFG["latency_samples"])
        assert not host.unexpected, f"unexpected CQEs {host.unexpected[:4]}"
        Path(os.environ[RESULT_ENV]).write_text(json.dumps(res))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clock-mhz", type=float, default=250.0, help="controller clock")
    ap.add_argument("--mps", type=int, default=256, choices=[128, 256, 512])
    ap.add_argument("--mrrs", type=int, default=512, choices=[128, 256, 512])
    ap.add_argument("--be-latency", type=int, default=8, help="RAM back end cycles")
    ap.add_argument("--count-seq", type=int, default=32, help="128 KiB commands per direction")
    ap.add_argument("--count-iops", type=int, default=2048, help="commands per IOPS run")
    ap.add_argument("--latency-samples", type=int, default=16)
    ap.add_argument("--data-width", type=int, default=64, choices=[64, 128, 256, 512],
                    help="the PHY's and the front end's data path, bits")
    ap.add_argument("--queues", type=_ints, default=[1, 4, 16, 64],
                    help="I/O queue counts of the random-read sweep (1..64), comma-separated")
    ap.add_argument("--qd", type=int, default=64,
                    help="commands outstanding in all in the random-read sweep")
    ap.add_argument("--sizes", type=_ints, default=[512, 4096],
                    help="random-read sizes in bytes (multiples of 512)")
    ap.add_argument("--tag-width", type=int, default=6, help="2**tag_width in flight")
    args = ap.parse_args()
    for q in args.queues:
        if not 1 <= q <= 64:
            ap.error(f"--queues: {q} out of 1..64 (the front end's I/O queues)")
    for size in args.sizes:
        if size <= 0 or size % 512 or size > 131072:
            ap.error(f"--sizes: {size} not a multiple of 512 in 512..131072")
    if args.qd < 1:
        ap.error(f"--qd: {args.qd} < 1")

    sys.path.insert(0, str(REPO / "tests" / "lib"))
    sys.path.insert(0, str(REPO))
    from ssdlab_harness import run
    from test_nvme_controller import CORE

    n_queues = max(max(args.queues), N_QUEUES)
    params = {"n_io_queues": n_queues, "tag_width": args.tag_width, "with_msix": True,
              "max_transfer": 131072, "clk_freq_hz": args.clock_mhz * 1e6,
              "data_width": args.data_width}
    cfg = {"clock_mhz": args.clock_mhz, "mps": args.mps, "mrrs": args.mrrs,
           "be_latency": args.be_latency, "count_seq": args.count_seq,
           "count_iops": args.count_iops, "latency_samples": args.latency_samples,
           "data_width": args.data_width, "queues": args.queues, "qd": args.qd,
           "sizes": args.sizes}
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        run(CORE.with_params(**params), __file__,
            extra_env={CONFIG_ENV: json.dumps(cfg), RESULT_ENV: str(result)})
        res = json.loads(result.read_text())

    clk_ns = res["clk_ns"]
    limit = args.data_width / 8 / clk_ns          # GB/s per direction
    print(f"config: nvme_controller_top {params}; PHY {args.data_width} bit at "
          f"{args.clock_mhz:g} MHz (limit {limit:.3f} GB/s per direction); MPS {args.mps}, "
          f"MRRS {args.mrrs}; RAM back end {args.be_latency} cycles; host: NvmeHost, "
          f"{n_queues} I/O queue pairs of 256 entries, an MSI-X vector per queue, a doorbell "
          f"per command; seed as printed above")
    for key, label in [("seq_write", "128 KiB writes, QD 8 (2/queue x 4)"),
                       ("seq_read", "128 KiB reads,  QD 8 (2/queue x 4)")]:
        r = res[key]
        gbs = r["bytes"] / r["ns"]
        print(f"{label:40s} {r['bytes'] / 2**20:6.1f} MiB in {r['ns'] / 1000:9.1f} us: "
              f"{gbs:.3f} GB/s = {gbs / limit:.3f} of the datapath limit")
    print(f"random reads, {args.qd} outstanding in all, {args.count_iops} commands per row:")
    print("| size B | queues | QD per queue | M commands/s | cycles per command | GB/s | "
          "of the datapath limit |")
    print("|---|---|---|---|---|---|---|")
    for r in res["rand_read"]:
        iops = r["cmds"] / r["ns"] * 1e9
        gbs = iops * r["size"] / 1e9
        print(f"| {r['size']} | {r['queues']} | {r['depth']} | {iops / 1e6:.3f} | "
              f"{r['ns'] / clk_ns / r['cmds']:.1f} | {gbs:.3f} | {gbs / limit:.3f} |")
    lat = res["latency"]

    def mean(k):
        return sum(r[k] for r in lat) / len(lat)
    print(f"4 KiB read at QD 1, {len(lat)} samples, mean cycles: doorbell->CQE "
          f"{mean('total'):.0f} ({mean('total') * clk_ns / 1000:.2f} us) = host memory "
          f"(SQE fetch) {mean('host_mem'):.0f} + back end {mean('backend'):.0f} + data on the "
          f"link {mean('data_beats'):.0f} + controller overhead {mean('overhead'):.0f} "
          f"(max {max(r['overhead'] for r in lat):.0f})")


def _ints(text):
    return [int(x) for x in text.split(",") if x]


if __name__ == "__main__":
    main()
