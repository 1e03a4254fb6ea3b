# SPDX-License-Identifier: BSD-2-Clause
"""NVMe front-end benchmark in simulated time (a benchmark, not a test).

    .venv/bin/python tests/nvme/nvme_controller/bench_nvme_controller.py \
        [--clock-mhz 250] [--mps 256] [--mrrs 512] [--be-latency 8] [--count-iops 2048]

Builds nvme_controller_top (PCIeSimPHY -> LitePCIe -> NvmeController -> buffer RAM) with the
RAM back end model and the firmware model, brings it up with the host driver model the way
the Linux driver does (4 I/O queue pairs, MSI per queue), and measures against the
cocotbext-pcie root complex:

1. 128 KiB sequential writes and reads, 8 commands outstanding on one queue: MB/s as a
   fraction of the PHY datapath limit (64 bits x clock, per direction);
2. random 4 KiB and 512 B reads at queue depth 64 over 4 queues (16 per queue): IOPS;
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

    class BenchTB(PcieSystemTB):
        CLK_PERIOD_NS = 1000 / CFG["clock_mhz"]

        def __init__(self, dut):
            super().__init__(dut)
            self.rc.log.setLevel(logging.WARNING)
            self.p = core_params()

    async def _workers(host, n_cmds, depth_per_queue, op, nlb, rng, span):
        """`n_cmds` commands spread over the I/O queues, `depth_per_queue` outstanding on
        each; returns the elapsed simulated ns."""
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
        tasks = [cocotb.start_soon(worker(q)) for q in range(1, N_QUEUES + 1)
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
            # A TLP's wire time on the 64-bit PHY: header (3 or 4 DW) plus payload, in beats.
            data_beats = sum(-(-(tlp.get_header_size() + 4 * tlp.length) // 8)
                             for _, tlp in data)
            total = (cqe[0] - t_db) / clk
            host_mem = (t_cpl - t_mrd) / clk
            backend = (cpl - req) / clk
            rows.append({"total": total, "host_mem": host_mem, "backend": backend,
                         "data_beats": data_beats,
                         "overhead": total - host_mem - backend - data_beats})
        mon.cancel()
        return rows

    @cocotb.test(timeout_time=500, timeout_unit="ms")
    async def bench_controller(dut):
        tb = BenchTB(dut)
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
        await host.init(n_io_queues=N_QUEUES, qdepth=256, msi_vectors=8)
        rng = random.Random(1)
        res = {"clk_ns": tb.CLK_PERIOD_NS}
        span = ns_size // 2

        n = CFG["count_seq"]
        nlb = 131072 >> lbads
        res["seq_write"] = {"bytes": n * 131072,
                            "ns": await _workers(host, n, 2, "write", nlb, rng, span)}
        res["seq_read"] = {"bytes": n * 131072,
                           "ns": await _workers(host, n, 2, "read", nlb, rng, span)}
        for size in (4096, 512):
            k = CFG["count_iops"]
            res[f"rand_read_{size}"] = {
                "cmds": k, "ns": await _workers(host, k, 16, "read", size >> lbads, rng, span)}
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
    ap.add_argument("--n-io-queues", type=int, default=8, help="controller I/O queue pairs")
    ap.add_argument("--tag-width", type=int, default=6, help="2**tag_width in flight")
    args = ap.parse_args()

    sys.path.insert(0, str(REPO / "tests" / "lib"))
    sys.path.insert(0, str(REPO))
    from ssdlab_harness import run
    from test_nvme_controller import CORE

    params = {"n_io_queues": args.n_io_queues, "tag_width": args.tag_width,
              "max_transfer": 131072, "clk_freq_hz": args.clock_mhz * 1e6}
    cfg = {"clock_mhz": args.clock_mhz, "mps": args.mps, "mrrs": args.mrrs,
           "be_latency": args.be_latency, "count_seq": args.count_seq,
           "count_iops": args.count_iops, "latency_samples": args.latency_samples}
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        run(CORE.with_params(**params), __file__,
            extra_env={CONFIG_ENV: json.dumps(cfg), RESULT_ENV: str(result)})
        res = json.loads(result.read_text())

    clk_ns = res["clk_ns"]
    limit = 8 / clk_ns          # GB/s per direction: 64-bit datapath
    print(f"config: nvme_controller_top {params}; PHY 64 bit at {args.clock_mhz:g} MHz "
          f"(limit {limit:.3f} GB/s per direction); MPS {args.mps}, MRRS {args.mrrs}; "
          f"RAM back end {args.be_latency} cycles; host: NvmeHost, {N_QUEUES} I/O queue pairs "
          f"of 256 entries, MSI per queue, a doorbell per command")
    for key, label in [("seq_write", "128 KiB writes, QD 8 (2/queue x 4)"),
                       ("seq_read", "128 KiB reads,  QD 8 (2/queue x 4)")]:
        r = res[key]
        gbs = r["bytes"] / r["ns"]
        print(f"{label:40s} {r['bytes'] >> 20:4d} MiB in {r['ns'] / 1000:9.1f} us: "
              f"{gbs:.3f} GB/s = {gbs / limit:.3f} of the datapath limit")
    for size in (4096, 512):
        r = res[f"rand_read_{size}"]
        iops = r["cmds"] / r["ns"] * 1e9
        print(f"{f'random {size} B reads, QD 64 (16/queue x 4)':40s} {r['cmds']:5d} cmds in "
              f"{r['ns'] / 1000:9.1f} us: {iops / 1e6:.3f} M IOPS "
              f"({iops * size / 1e9:.3f} GB/s)")
    lat = res["latency"]

    def mean(k):
        return sum(r[k] for r in lat) / len(lat)
    print(f"4 KiB read at QD 1, {len(lat)} samples, mean cycles: doorbell->CQE "
          f"{mean('total'):.0f} = host memory (SQE fetch) {mean('host_mem'):.0f} + back end "
          f"{mean('backend'):.0f} + data on the link {mean('data_beats'):.0f} + controller "
          f"overhead {mean('overhead'):.0f} (max {max(r['overhead'] for r in lat):.0f})")


if __name__ == "__main__":
    main()
