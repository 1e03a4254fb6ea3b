# SPDX-License-Identifier: BSD-2-Clause
"""ONFI PHY for Xilinx UltraScale / UltraScale+ FPGAs (Verilog module `onfi_phy_xilinxus`).

The UltraScale counterpart of `onfi_phy_xilinx7`: the same engine side (`OnfiPhySignature`,
rtl/nand/onfi_phy_if.py), the same pads and latencies, with UltraScale component-mode I/O
primitives as Amaranth Instances. Elaborated, Verilator-linted and synthesised (Yosys
synth_xilinx -family xcu), not simulated and not yet placed, routed or run on hardware.

- Outputs: every pin through an ODDRE1 (D1 = phase 0 after the rising edge, D2 = phase 1
  after the falling edge, both sampled on the rising edge of the engine clock, like the
  7-series ODDR in SAME_EDGE), then an OBUF (RE# an OBUFDS with `diff_re`). DQ and DQS are
  IOBUFs (DQS an IOBUFDS with `diff_dqs`) whose T also comes from an ODDRE1 (D1 = D2), which
  Vivado packs as the 3-state flip-flop of the same OSERDESE3 ("ODDR with serialized
  3-state"). PHY_OUT_LATENCY = 1.
- DQ input: IOBUF -> IDELAYE3 (DELAY_FORMAT "COUNT", DELAY_TYPE "VAR_LOAD", 512 taps) -> the
  SDR sampler, an IDDRE1 per bit on the engine clock (Q1, the rising-edge sample) plus one
  fabric register: PHY_IN_LATENCY = 2, and -> the DQS capture registers.
- DQS capture for NV-DDR2 data-out: DQS from its IOBUF straight into a BUFGCE (UltraScale has
  no BUFR/BUFIO; a global buffer is the only clock buffer a pin can drive), whose output
  clocks `add_dqs_capture` exactly as in onfi_phy_sim / onfi_phy_xilinx7.
- Where the delay is, and why it is not on DQS as on 7-series: an IDELAYE3 output has no
  route to a global clock buffer (UG571/UG861: "Clocks should not be delayed using an
  IDELAYE3, because the IDELAY cannot directly route to the global clock buffers"), and the
  BUFGCE and its clock tree already delay the strobe by a few ns (insertion delay), more
  than the quarter tDSC the 7-series IDELAY adds. So here the strobe is not delayed and the
  DQ inputs are: the capture instant inside the DQ eye is (DQS path: IBUF + BUFGCE + tree)
  - (DQ path: IBUF + IDELAYE3 + route), and `dqs_delay` taps on the eight DQ IDELAYE3s move
  it *earlier* in the eye (on 7-series more taps move it later). The port keeps its name
  and meaning as the one run-time knob of the DQS-to-DQ offset, a tap count, 9 bits here.
- COUNT mode: taps are uncalibrated (about 2.5..5 ps each, 512 taps, up to ~1.1 ns on
  UltraScale / ~1.25 ns on UltraScale+ per the data sheets) and drift with voltage and
  temperature; no IDELAYCTRL is needed or allowed, EN_VTC is tied low, REFCLK_FREQUENCY
  stays at its default. TIME mode (calibrated ps, needs an IDELAYCTRL per nibble and EN_VTC
  handling around every load) buys nothing for a delay that is found by a sweep on the
  board anyway. IDELAYE3 RST is the engine reset: the DQ taps return to `dqs_delay_taps`.
- DQS must be on a global-clock-capable pin (GC / HDGC) for a dedicated pin-to-BUFGCE route;
  one BUFGCE per channel.

Yosys synth_xilinx -family xcu (`ssdlab synth onfi_phy_xilinxus --family xcu`, default
parameters, n_ways 1): 68 LUT, 163 FF (28 FDRE, 135 FDRE_1: mostly the capture buffer),
2 CARRY4, 5 INV; the core's own primitives, all kept by Yosys as Xilinx cells: ODDRE1 24,
IDDRE1 8, IDELAYE3 8, BUFGCE 1, IOBUF 9, OBUF 6, IBUF 1 (n_ways 8 with diff_dqs and diff_re:
the same LUT/FF, ODDRE1 31, IOBUF 8 + IOBUFDS 1, OBUF 12 + OBUFDS 1, IBUF 8). The flow adds
an IBUF/OBUF to every engine-side port and a BUFG on `clk`, since the core is its top.
See rtl/nand/README.md ("onfi_phy_xilinxus").
"""

from amaranth.hdl import ClockSignal, Const, Instance, ResetSignal, Signal

from .onfi_phy_if import OnfiPhyXilinx

__all__ = ["OnfiPhyXilinxUS", "LINT_BLACKBOXES", "SIM_DEVICES"]

# SIM_DEVICE values of the UltraScale primitives (ODDRE1, IDELAYE3, BUFGCE) this core accepts.
SIM_DEVICES = ("ULTRASCALE", "ULTRASCALE_PLUS")

# Port-compatible empty models of the UltraScale primitives used here, for Verilator lint only
# (`ssdlab lint` adds a core module's LINT_BLACKBOXES); synthesis uses Yosys's own cells. Port
# names and widths as in UG974 and Yosys's share/xilinx/cells_xtra.v / cells_sim.v.
LINT_BLACKBOXES = """\
// verilator lint_off UNUSEDSIGNAL
// verilator lint_off UNUSEDPARAM
// verilator lint_off DECLFILENAME
module ODDRE1 #(parameter [0:0] IS_C_INVERTED = 1'b0, parameter [0:0] IS_D1_INVERTED = 1'b0,
                parameter [0:0] IS_D2_INVERTED = 1'b0, parameter SIM_DEVICE = "ULTRASCALE",
                parameter [0:0] SRVAL = 1'b0)
  (output Q, input C, input D1, input D2, input SR);
  assign Q = D1;
endmodule
module IDDRE1 #(parameter DDR_CLK_EDGE = "OPPOSITE_EDGE", parameter [0:0] IS_CB_INVERTED = 1'b0,
                parameter [0:0] IS_C_INVERTED = 1'b0)
  (output Q1, output Q2, input C, input CB, input D, input R);
  assign Q1 = D;
  assign Q2 = D;
endmodule
module IDELAYE3 #(parameter CASCADE = "NONE", parameter DELAY_FORMAT = "TIME",
                  parameter DELAY_SRC = "IDATAIN", parameter DELAY_TYPE = "FIXED",
                  parameter integer DELAY_VALUE = 0, parameter [0:0] IS_CLK_INVERTED = 1'b0,
                  parameter [0:0] IS_RST_INVERTED = 1'b0, parameter LOOPBACK = "FALSE",
                  parameter real REFCLK_FREQUENCY = 300.0, parameter SIM_DEVICE = "ULTRASCALE",
                  parameter real SIM_VERSION = 2.0, parameter UPDATE_MODE = "ASYNC")
  (output CASC_OUT, output [8:0] CNTVALUEOUT, output DATAOUT, input CASC_IN,
   input CASC_RETURN, input CE, input CLK, input [8:0] CNTVALUEIN, input DATAIN,
   input EN_VTC, input IDATAIN, input INC, input LOAD, input RST);
  assign DATAOUT = IDATAIN;
  assign CASC_OUT = 1'b0;
  assign CNTVALUEOUT = CNTVALUEIN;
endmodule
module BUFGCE #(parameter CE_TYPE = "SYNC", parameter [0:0] IS_CE_INVERTED = 1'b0,
                parameter [0:0] IS_I_INVERTED = 1'b0, parameter SIM_DEVICE = "ULTRASCALE",
                parameter STARTUP_SYNC = "FALSE")
  (output O, input CE, input I);
  assign O = I;
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
"""


class OnfiPhyXilinxUS(OnfiPhyXilinx):
    """ONFI PHY for Xilinx UltraScale / UltraScale+.

    Parameters
    ----------
    n_ways : int, 1..8 (default 1)
        Chip enables and R/B# inputs.
    dqs_delay_taps : int, 0..511 (default 0)
        IDELAYE3 tap (COUNT mode) of the DQ inputs after configuration and after reset.
    diff_dqs : bool (default False)
        Complementary DQS (DQS_t/DQS_c, IOBUFDS); single-ended DQS otherwise.
    diff_re : bool (default False)
        Complementary RE# (RE_t/RE_c, OBUFDS); single-ended RE# otherwise.
    sim_device : "ULTRASCALE" or "ULTRASCALE_PLUS" (default "ULTRASCALE")
        SIM_DEVICE of the ODDRE1s, IDELAYE3s and the BUFGCE; must match the target part.

    Ports
    -----
    phy : In(OnfiPhySignature(n_ways)); the engine side
    dqs_delay[9], dqs_delay_load : in; load a new DQS-to-DQ delay tap, applied to every DQ
        input's IDELAYE3 (engine clock domain; more taps = DQ sampled earlier in its eye)
    pads (inout/out/in IOPorts): dq[8], dqs (or dqs_p/dqs_n), re_n (or re_p/re_c as
    RE_t/RE_c), we_n, ce_n[n_ways], cle, ale, wp_n, rb_n[n_ways]
    """

    TAP_BITS = 9

    def __init__(self, n_ways=1, dqs_delay_taps=0, diff_dqs=False, diff_re=False,
                 sim_device="ULTRASCALE"):
        self.sim_device = sim_device
        bad_device = (None if sim_device in SIM_DEVICES else
                      f"sim_device must be one of {', '.join(SIM_DEVICES)}, got {sim_device!r}")
        super().__init__(n_ways, dqs_delay_taps, diff_dqs, diff_re, bad_device)

    def _oddr(self, d1, d2, q):
        """ODDRE1: d1 after the rising edge, d2 after the falling edge (both sampled on the
        rising edge)."""
        return Instance(
            "ODDRE1", p_IS_C_INVERTED=Const(0, 1), p_IS_D1_INVERTED=Const(0, 1),
            p_IS_D2_INVERTED=Const(0, 1), p_SIM_DEVICE=self.sim_device, p_SRVAL=Const(0, 1),
            i_C=ClockSignal("sync"), i_D1=d1, i_D2=d2, i_SR=Const(0), o_Q=q)

    def _dq_input(self, m, i, pad_in, sdr, sdr_fall):
        """An IDELAYE3 (the DQS-to-DQ offset), then an IDDRE1 on the engine clock for SDR;
        the DQS capture takes the delayed bit."""
        dly = Signal(name=f"dq_dly{i}")
        clk = ClockSignal("sync")
        m.submodules[f"idelay_dq{i}"] = Instance(
            "IDELAYE3",
            p_CASCADE="NONE", p_DELAY_FORMAT="COUNT", p_DELAY_SRC="IDATAIN",
            p_DELAY_TYPE="VAR_LOAD", p_DELAY_VALUE=self.dqs_delay_taps,
            p_IS_CLK_INVERTED=Const(0, 1), p_IS_RST_INVERTED=Const(0, 1),
            p_LOOPBACK="FALSE", p_SIM_DEVICE=self.sim_device, p_UPDATE_MODE="ASYNC",
            i_CLK=clk, i_RST=ResetSignal("sync"), i_CE=Const(0), i_INC=Const(0),
            i_LOAD=self.dqs_delay_load, i_CNTVALUEIN=self.dqs_delay,
            i_EN_VTC=Const(0), i_IDATAIN=pad_in, i_DATAIN=Const(0),
            i_CASC_IN=Const(0), i_CASC_RETURN=Const(0),
            o_DATAOUT=dly,
            # CNTVALUEOUT: the tap is known (dqs_delay); CASC_OUT: no cascade
            o_CNTVALUEOUT=Signal(9, name=f"dq{i}_tap_unused"),
            o_CASC_OUT=Signal(name=f"dq{i}_casc_unused"))
        m.submodules[f"iddr_dq{i}"] = Instance(
            "IDDRE1", p_DDR_CLK_EDGE="OPPOSITE_EDGE", p_IS_C_INVERTED=Const(0, 1),
            p_IS_CB_INVERTED=Const(1, 1),   # CB is C inverted at the pin, no fabric LUT
            i_C=clk, i_CB=clk, i_D=dly, i_R=Const(0), o_Q1=sdr, o_Q2=sdr_fall)
        return dly

    def _dqs_clock(self, m, dqs_in):
        """DQS straight to a BUFGCE (no IDELAY: see the module docstring)."""
        dqs_clk = Signal()
        m.submodules.bufg_dqs = Instance("BUFGCE", p_CE_TYPE="SYNC",
                                         p_IS_CE_INVERTED=Const(0, 1),
                                         p_IS_I_INVERTED=Const(0, 1),
                                         p_SIM_DEVICE=self.sim_device,
                                         i_I=dqs_in, i_CE=Const(1), o_O=dqs_clk)
        return dqs_clk
