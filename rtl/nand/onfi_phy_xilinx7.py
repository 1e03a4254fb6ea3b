# SPDX-License-Identifier: BSD-2-Clause
"""ONFI PHY for Xilinx 7-series FPGAs (Verilog module `onfi_phy_xilinx7`).

The PHY of `OnfiPhySignature` (rtl/nand/onfi_phy_if.py) with 7-series I/O primitives as
Amaranth Instances, the same engine-side interface as `onfi_phy_sim`; the pads are top-level
ports of the module (Amaranth IOPorts). Elaborated and synthesised (Yosys synth_xilinx), not
simulated and not yet placed, routed or run on hardware.

- Outputs: every pin through an ODDR (DDR_CLK_EDGE="SAME_EDGE", D1 = phase 0, D2 = phase 1,
  clocked by the engine clock), so all pins share one clock-to-pad path and RE#, DQ and DQS
  move on both clock edges; DQ/DQS output enables through ODDRs too (T of the IOBUF). DQ and
  DQS are IOBUFs (DQS an IOBUFDS with `diff_dqs`, RE# an OBUFDS with `diff_re`), the other
  outputs OBUFs, R/B# IBUFs.
- DQ sampling for SDR: an IDDR per DQ bit clocked by the engine clock (Q1, the rising-edge
  sample) and one fabric register: PHY_IN_LATENCY = 2.
- DQS capture for NV-DDR2 data-out: DQS from its IOBUF goes through an IDELAYE2 (VAR_LOAD,
  tap from `dqs_delay` when `dqs_delay_load` pulses; 78 ps per tap with a 200 MHz IDELAYCTRL
  reference) that moves its edges into the middle of the DQ eye (about a quarter of tDSC),
  then a BUFR; the delayed strobe clocks the capture registers exactly as in onfi_phy_sim
  (rising edge: byte 0 kept; falling edge: the pair written into an 8-entry buffer whose Gray
  write pointer crosses to the engine clock). The pair is written by the falling edge itself
  because a read burst's last falling edge has no later DQS edge (the read postamble ends
  with DQS low), so an IDDR, whose outputs need a further edge to be stored, cannot hold the
  last pair; the capture registers are fabric flip-flops next to the pads.
- One IDELAYCTRL (REFCLK 200 MHz, same IODELAY_GROUP `iodelay_group`) must be instantiated by
  the board top for the bank; it is not part of this core (one per clock region, shared).
See rtl/nand/README.md ("onfi_phy_xilinx7").
"""

from amaranth.hdl import ClockSignal, Const, Instance, Signal

from .onfi_phy_if import OnfiPhyXilinx

__all__ = ["OnfiPhyXilinx7", "LINT_BLACKBOXES"]

# Port-compatible empty models of the 7-series primitives used here, for Verilator lint only
# (sw/ssdlab/flows/lint.py adds a core module's LINT_BLACKBOXES); synthesis uses Yosys's own cells.
LINT_BLACKBOXES = """\
// verilator lint_off UNUSEDSIGNAL
// verilator lint_off UNUSEDPARAM
// verilator lint_off DECLFILENAME
module ODDR #(parameter DDR_CLK_EDGE = "SAME_EDGE", parameter INIT = 1'b0,
              parameter SRTYPE = "SYNC")
  (output Q, input C, input CE, input D1, input D2, input R, input S);
  assign Q = D1;
endmodule
module IDDR #(parameter DDR_CLK_EDGE = "OPPOSITE_EDGE", parameter SRTYPE = "SYNC")
  (output Q1, output Q2, input C, input CE, input D, input R, input S);
  assign Q1 = D;
  assign Q2 = D;
endmodule
module IOBUF (output O, inout IO, input I, input T);
  assign O = IO;
  assign IO = T ? 1'bz : I;
endmodule
module IOBUFDS (output O, inout IO, inout IOB, input I, input T);
  assign O = IO;
  assign IO = T ? 1'bz : I;
  assign IOB = T ? 1'bz : ~I;
endmodule
module OBUF (output O, input I);
  assign O = I;
endmodule
module OBUFDS (output O, output OB, input I);
  assign O = I;
  assign OB = ~I;
endmodule
module IBUF (output O, input I);
  assign O = I;
endmodule
module IDELAYE2 #(parameter IDELAY_TYPE = "FIXED", parameter DELAY_SRC = "IDATAIN",
                  parameter IDELAY_VALUE = 0, parameter HIGH_PERFORMANCE_MODE = "FALSE",
                  parameter SIGNAL_PATTERN = "DATA", parameter REFCLK_FREQUENCY = 200.0,
                  parameter CINVCTRL_SEL = "FALSE", parameter PIPE_SEL = "FALSE")
  (output DATAOUT, output [4:0] CNTVALUEOUT, input C, input CE, input INC, input LD,
   input LDPIPEEN, input REGRST, input CINVCTRL, input DATAIN, input IDATAIN,
   input [4:0] CNTVALUEIN);
  assign DATAOUT = IDATAIN;
  assign CNTVALUEOUT = CNTVALUEIN;
endmodule
module BUFR #(parameter BUFR_DIVIDE = "BYPASS", parameter SIM_DEVICE = "7SERIES")
  (output O, input I, input CE, input CLR);
  assign O = I;
endmodule
"""


class OnfiPhyXilinx7(OnfiPhyXilinx):
    """ONFI PHY for Xilinx 7-series.

    Parameters
    ----------
    n_ways : int, 1..8 (default 1)
        Chip enables and R/B# inputs.
    dqs_delay_taps : int, 0..31 (default 8)
        IDELAYE2 tap of DQS after configuration (78 ps per tap at a 200 MHz reference).
    diff_dqs : bool (default False)
        Complementary DQS (DQS_t/DQS_c, IOBUFDS); single-ended DQS otherwise.
    diff_re : bool (default False)
        Complementary RE# (RE_t/RE_c, OBUFDS); single-ended RE# otherwise.
    iodelay_group : str (default "onfi")
        IODELAY_GROUP of the IDELAYE2, to pair it with the board's IDELAYCTRL.

    Ports
    -----
    phy : In(OnfiPhySignature(n_ways)); the engine side
    dqs_delay[5], dqs_delay_load : in; load a new DQS delay tap (engine clock domain)
    pads (inout/out/in IOPorts): dq[8], dqs (or dqs_p/dqs_n), re_n (or re_p/re_n as
    RE_t/RE_c), we_n, ce_n[n_ways], cle, ale, wp_n, rb_n[n_ways]
    """

    TAP_BITS = 5

    def __init__(self, n_ways=1, dqs_delay_taps=8, diff_dqs=False, diff_re=False,
                 iodelay_group="onfi"):
        self.iodelay_group = iodelay_group
        bad_group = (None if isinstance(iodelay_group, str) and iodelay_group
                     else f"iodelay_group must be a non-empty str, got {iodelay_group!r}")
        super().__init__(n_ways, dqs_delay_taps, diff_dqs, diff_re, bad_group)

    def _oddr(self, d1, d2, q):
        """ODDR, SAME_EDGE: d1 after the rising edge, d2 after the falling edge."""
        return Instance(
            "ODDR", p_DDR_CLK_EDGE="SAME_EDGE", p_INIT=Const(0, 1), p_SRTYPE="SYNC",
            i_C=ClockSignal("sync"), i_CE=Const(1), i_D1=d1, i_D2=d2, i_R=Const(0),
            i_S=Const(0), o_Q=q)

    def _dq_input(self, m, i, pad_in, sdr, sdr_fall):
        """An IDDR on the engine clock for SDR; the DQS capture takes the pad directly."""
        m.submodules[f"iddr_dq{i}"] = Instance(
            "IDDR", p_DDR_CLK_EDGE="OPPOSITE_EDGE", p_SRTYPE="SYNC", i_C=ClockSignal("sync"),
            i_CE=Const(1), i_D=pad_in, i_R=Const(0), i_S=Const(0), o_Q1=sdr, o_Q2=sdr_fall)
        return pad_in

    def _dqs_clock(self, m, dqs_in):
        """DQS through an IDELAYE2 (the run-time tap) and a BUFR."""
        dqs_dly = Signal()
        dqs_tap_unused = Signal(5)      # IDELAYE2 CNTVALUEOUT (the tap is known: dqs_delay)
        m.submodules.idelay_dqs = Instance(
            "IDELAYE2", a_IODELAY_GROUP=self.iodelay_group,
            p_IDELAY_TYPE="VAR_LOAD", p_DELAY_SRC="IDATAIN", p_IDELAY_VALUE=self.dqs_delay_taps,
            p_HIGH_PERFORMANCE_MODE="TRUE", p_SIGNAL_PATTERN="CLOCK", p_REFCLK_FREQUENCY=200.0,
            p_CINVCTRL_SEL="FALSE", p_PIPE_SEL="FALSE",
            i_C=ClockSignal("sync"), i_CE=Const(0), i_INC=Const(0), i_LD=self.dqs_delay_load,
            i_LDPIPEEN=Const(0), i_CNTVALUEIN=self.dqs_delay, i_REGRST=Const(0),
            i_CINVCTRL=Const(0), i_DATAIN=Const(0), i_IDATAIN=dqs_in, o_DATAOUT=dqs_dly,
            o_CNTVALUEOUT=dqs_tap_unused)
        dqs_clk = Signal()
        m.submodules.bufr_dqs = Instance("BUFR", p_BUFR_DIVIDE="BYPASS", p_SIM_DEVICE="7SERIES",
                                         i_I=dqs_dly, i_CE=Const(1), i_CLR=Const(0),
                                         o_O=dqs_clk)
        return dqs_clk
