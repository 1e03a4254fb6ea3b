# SPDX-License-Identifier: BSD-2-Clause
"""`ssdlab sim profile`'s pure part: a `perf report` listing (a real one, trimmed: the default
drive's profiling build) parsed and grouped per source module, die models, harness, kernel,
libc; the workload's bad input."""

import pytest

from sw.ssdlab.flows.sim_profile import (
    classify,
    default_workload,
    group_samples,
    parse_perf_report,
    source_map,
)

pytestmark = pytest.mark.smoke

R = "Vssdlab_sim_top_ssdlab_soc___"
N = f"{R}nba_sequent__TOP__ssdlab_sim_top__soc__"    # the names as Verilator gives them
I = f"{R}ico_sequent__TOP__ssdlab_sim_top__soc__"
T = "Vssdlab_sim_top_ssdlab_sim_top___nba_sequent__TOP__ssdlab_sim_top__"
V = "Vssdlab_sim_top_VexRiscv___nba_sequent__TOP__ssdlab_sim_top__soc__VexRiscv__"
REPORT = f"""\
# Samples: 200K of event 'cpu-clock'
# Event count (approx.): 100128539250
#
# Overhead  Shared Object        Symbol
# ........  ...................  ......
#
    29.79%  ssdlab_sim           [.] Vssdlab_sim_top___024root___eval_nba
     1.82%  ssdlab_sim           [.] {N}2150__PROF__ssdlab_soc__l3
     0.54%  ssdlab_sim           [.] nandfast::NandDieFast::eval
     0.41%  ssdlab_sim           [.] {I}75__PROF__ssdlab_soc__l7
     0.38%  [kernel.kallsyms]    [k] _raw_spin_unlock_irqrestore
     0.30%  ssdlab_sim           [.] {N}2306__PROF__ssdlab_soc__l10
     0.25%  ssdlab_sim           [.] (anonymous namespace)::Drive::cycle
     0.25%  ssdlab_sim           [.] nand_die_fast_eval
     0.20%  ssdlab_sim           [.] {T}48__PROF__nand_die_fast__l3
     0.18%  ssdlab_sim           [.] {N}4408__PROF__nand_subsystem__l6
     0.16%  ssdlab_sim           [.] {N}4409__PROF__nand_subsystem__l9
     0.13%  libc.so.6            [.] pthread_mutex_trylock@@GLIBC_2.34
     0.12%  ssdlab_sim           [.] {V}216__PROF__VexRiscv__l4587
     0.10%  ssdlab_sim           [.] VL_WRITEF_NX
"""

SOC_V = """\
module ssdlab_soc (
always @(posedge sys_clk) begin
    soc_nvme_nvmeirqcoalesce_now <= (soc_nvme_nvmeirqcoalesce_now + 1'd1);
    soc_nvme_nvmeirqcoalesce_delay <= 14'd2;
end
always @(*) begin
    soc_nvme_msix_pick <= 6'd0;
    litepcieendpoint_master_x <= 1'd0;
end
always @(posedge sys_clk_1) begin
\tif (wp_we[0])
\t\tbuf_mem[wp_adr][7:0] <= wp_dat_w[7:0];
end
"""

NAND_V = """\
module nand_subsystem(a, b);
  assign a = b;
endmodule
module \\nand_subsystem.backend.sched0.channel.engine (clk, rst);
  reg x;
  always @(posedge clk) x <= 1'h0;
endmodule
module \\nand_subsystem.backend.sched1.queue3 (clk);
  reg y;
endmodule
"""


@pytest.fixture
def smap(tmp_path):
    (tmp_path / "ssdlab_soc.v").write_text(SOC_V)
    (tmp_path / "nand_subsystem.v").write_text(NAND_V)
    (tmp_path / "nand_die_fast.sv").write_text("// die\n\nmodule nand_die_fast;\n")
    return source_map(sorted(tmp_path.iterdir()))


def test_parse_skips_comments_and_reads_every_row():
    rows = parse_perf_report(REPORT)
    assert len(rows) == 14
    assert rows[0] == (29.79, "ssdlab_sim", "Vssdlab_sim_top___024root___eval_nba")
    assert rows[4] == (0.38, "[kernel.kallsyms]", "_raw_spin_unlock_irqrestore")
    assert rows[6][2] == "(anonymous namespace)::Drive::cycle"


def test_source_map_lines(smap):
    soc = smap["ssdlab_soc"]
    assert soc[2] == "litex: nvme_nvmeirqcoalesce"       # the always block at line 2
    assert soc[6] == "litex: nvme_msix"                  # a tie: the first name in order
    assert soc[10] == "litex: data buffer memory (buf_mem)"
    nand = smap["nand_subsystem"]
    assert nand[2] == "amaranth: nand_subsystem"
    assert nand[6] == "amaranth: nand_subsystem.backend.sched.channel.engine"
    assert nand[9] == "amaranth: nand_subsystem.backend.sched.queue"
    assert smap["nand_die_fast"][3] == "nand_die_fast.sv (die wrapper)"


def test_groups(smap):
    groups, regions = group_samples(parse_perf_report(REPORT), smap)
    want = {
        "Verilator scheduler (eval, triggers)": 29.79,
        "litex: nvme_nvmeirqcoalesce": 1.82,
        "die models (C++)": 0.54 + 0.25,
        "litex: nvme_msix": 0.41,
        "kernel": 0.38,
        "litex: data buffer memory (buf_mem)": 0.30,
        "harness + bridge": 0.25,
        "nand_die_fast.sv (die wrapper)": 0.20,
        "amaranth: nand_subsystem.backend.sched.channel.engine": 0.18,
        "amaranth: nand_subsystem.backend.sched.queue": 0.16,
        "libc/libstdc++": 0.13,
        "VexRiscv.v": 0.12,                 # no source given for it: named by its file
        "Verilator library": 0.10,
    }
    assert groups.keys() == want.keys()
    for k, v in want.items():
        assert groups[k] == pytest.approx(v), k
    assert regions == pytest.approx({"nba": 1.82 + 0.30 + 0.20 + 0.18 + 0.16 + 0.12,
                                     "ico": 0.41})


def test_classify_unknown_symbols():
    assert classify("ssdlab_sim", "frobnicate") == ("other (harness binary)", "")
    assert classify("libstdc++.so.6", "operator new") == ("libc/libstdc++", "")


def test_workload_bad_input():
    with pytest.raises(ValueError, match="fill_kib=100"):
        default_workload(512, fill_kib=100)
    with pytest.raises(ValueError, match="read_ios=-1"):
        default_workload(512, read_ios=-1)
    w = default_workload(512, fill_kib=256, write_ios=0, read_ios=10)
    assert [(p.name, p.ios, p.count) for p in w] == [("fill", 2, 512), ("randread", 10, 512)]
