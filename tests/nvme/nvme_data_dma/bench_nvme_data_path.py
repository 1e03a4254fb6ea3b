# SPDX-License-Identifier: BSD-2-Clause
"""Throughput of the NVMe data path in simulated time (a benchmark, not a test).

    .venv/bin/python tests/nvme/nvme_data_dma/bench_nvme_data_path.py \
        [--size 131072] [--count 16] [--in-flight 4] [--mps 256] [--mrrs 512] \
        [--max-pending-requests 4]

Builds the nvme_data_path test top (PCIeSimPHY -> LitePCIe -> NvmePrpWalk -> NvmeDataDma ->
RAM) and, against the cocotbext-pcie root complex, runs `count` transfers of `size` bytes
(page-aligned PRP1, a PRP list) back to back with `in-flight` commands outstanding, three
ways: all NVM Writes (host -> buffer: memory reads), all NVM Reads (buffer -> host: memory
writes), and alternating. It prints the configuration and, per run, bytes / simulated time as
a fraction of the PHY datapath limit (data_width x clock, per direction). The time runs from
the first request to the last completion. Data is not checked here (the tests do that).
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import cocotb
from cocotb.triggers import ClockCycles, RisingEdge
from cocotb.utils import get_sim_time

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]

RESULT_ENV = "NDP_BENCH_RESULT"
CONFIG_ENV = "NDP_BENCH_CONFIG"

if os.environ.get(CONFIG_ENV):      # inside the simulator, run by main() below
    from test_nvme_data_path import PAGE, TB

    @cocotb.test(timeout_time=200, timeout_unit="ms")
    async def bench_throughput(dut):
        cfg = json.loads(os.environ[CONFIG_ENV])
        tb = TB(dut)
        await tb.init()
        code = {128: 0, 256: 1, 512: 2}
        tb.set_sizes(mps=code[cfg["mps"]], mrrs=code[cfg["mrrs"]], rc_mps=code[cfg["mps"]])
        await ClockCycles(dut.clk, 5)
        size, count, in_flight = cfg["size"], cfg["count"], cfg["in_flight"]
        n_bufs = 2 ** tb.p["buf_width"]
        results = {}
        tag = 0
        for mode in ["write", "read", "mixed"]:
            ts = []
            for i in range(count):
                to_host = {"write": 0, "read": 1, "mixed": i % 2}[mode]
                ts.append(tb.build(tag, i % n_bufs, size, to_host))
                tag = (tag + 1) % 256
            for t in ts:
                tb.done.pop(t.tag, None)
            start = get_sim_time("ns")
            sent = 0
            while True:
                outstanding = [t for t in ts[:sent] if t.tag not in tb.done]
                if sent < count and len(outstanding) < in_flight:
                    await tb.send_req(ts[sent])
                    sent += 1
                    continue
                if sent == count and not outstanding:
                    break
                await RisingEdge(dut.clk)
            elapsed = get_sim_time("ns") - start
            bad = [t.tag for t in ts if tb.done[t.tag] != 0]
            assert not bad, f"{mode}: failed transfers {bad}"
            for t in ts:
                tb.release(t)
            results[mode] = {"bytes": size * count, "ns": elapsed}
            tb.log.info("%s: %d bytes in %d ns", mode, size * count, elapsed)
        results["clk_ns"] = tb.CLK_PERIOD_NS
        results["page"] = PAGE
        Path(os.environ[RESULT_ENV]).write_text(json.dumps(results))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=131072, help="bytes per transfer")
    ap.add_argument("--count", type=int, default=16, help="transfers per run")
    ap.add_argument("--in-flight", type=int, default=4, help="commands outstanding")
    ap.add_argument("--mps", type=int, default=256, choices=[128, 256, 512])
    ap.add_argument("--mrrs", type=int, default=512, choices=[128, 256, 512])
    ap.add_argument("--max-pending-requests", type=int, default=4, choices=[2, 4, 8],
                    help="LitePCIe endpoint's outstanding reads")
    args = ap.parse_args()

    sys.path.insert(0, str(REPO / "tests" / "lib"))
    sys.path.insert(0, str(REPO))
    from ssdlab_harness import run
    from test_nvme_data_path import CORE, DEFAULTS

    params = {**DEFAULTS, "max_pending_requests": args.max_pending_requests,
              "rd_fifo_depth": max(512, 128 * args.max_pending_requests)}
    cfg = {"size": args.size, "count": args.count, "in_flight": args.in_flight,
           "mps": args.mps, "mrrs": args.mrrs}
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        run(CORE.with_params(**params), __file__,
            extra_env={CONFIG_ENV: json.dumps(cfg), RESULT_ENV: str(result)})
        res = json.loads(result.read_text())

    clk_ns = res["clk_ns"]
    dw = params["data_width"]
    limit = dw / 8 / clk_ns          # bytes per ns per direction = GB/s
    print(f"config: data_width {dw} bit, clock {1000 / clk_ns:.0f} MHz "
          f"(PHY limit {limit:.3f} GB/s per direction), MPS {args.mps}, MRRS {args.mrrs}, "
          f"{args.in_flight} commands in flight, {args.count} x {args.size} bytes, "
          f"endpoint max_pending_requests {args.max_pending_requests}, "
          f"rd_fifo_depth {params['rd_fifo_depth']}, root complex completions <= MPS")
    for mode, label, dirs in [("write", "NVM Write (host -> buffer, MRd)", 1),
                              ("read", "NVM Read  (buffer -> host, MWr)", 1),
                              ("mixed", "mixed (alternating)", 2)]:
        r = res[mode]
        gbs = r["bytes"] / r["ns"]
        print(f"{label:34s} {r['bytes']:>9d} B in {r['ns'] / 1000:9.2f} us: "
              f"{gbs:.3f} GB/s = {gbs / limit:.3f} of one direction's limit"
              + (f", {gbs / (dirs * limit):.3f} of both" if dirs == 2 else ""))


if __name__ == "__main__":
    main()
