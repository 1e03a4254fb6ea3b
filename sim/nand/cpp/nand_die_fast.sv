// SPDX-License-Identifier: BSD-2-Clause
// nand_die_fast: one ONFI target (CE#) of 1..16 LUNs, the fast C++ NAND die model
// (nand_die_fast.cpp, the port of the golden sim/nand/python model) behind DPI-C.
//
// Pins are the controller's (rtl/nand/onfi_sdr_engine): they are registers updated at posedge
// clk, so the model evaluates once per clock at NEGEDGE and sees the values set at the
// preceding posedge (edge time = negedge time - CLK_PS/2). Behind a double-edge PHY
// (rtl/nand/onfi_phy_sim: RE#, DQ and DQS change at both edges, NV-DDR2) DDR_PINS = 1 makes
// it evaluate at both edges, each seeing the values set at the edge before. dq_i, dqs_i and
// rb_n are driven so that at the next edge they show what the golden model would show then:
// in SDR data valid from max(RE# fall + tREA, CE# fall + tCEA) until RE# rise + tRHOH (seeded
// garbage otherwise); in NV-DDR2 (after SET FEATURES 01h selects it) DQS low tDQSD x 0.6 into
// the read preamble, then a DQS edge with its byte on DQ tDQSRE x 0.6 after each RE# edge,
// data in latched on every edge of the controller's DQS (dqs_o / dqs_oe); R/B# low from
// tWB/2 after a busy-making latch until the end of the busy time. NAND rule and
// interface timing violations print one line each ("nand_die_fast[<DIE_ID>] t=... ns: ...")
// and are counted on rule_violations / timing_violations. rst high holds the model (the
// pins are not looked at); the die itself has no reset pin.
module nand_die_fast #(
    parameter int    CLK_PS = 10000,                    // clock period, ps (>= 2)
    parameter int    DIE_ID = 0,                        // names the die in messages
    parameter longint SEED = 0,                         // bad blocks, bit errors, garbage
    parameter string PART = "imft-20nm-mlc-64gbit",     // ONFI identity (ID, model string)
    // geometry (NandGeometry ranges)
    parameter int    PAGE_BYTES = 8192,
    parameter int    SPARE_BYTES = 512,
    parameter int    PAGES_PER_BLOCK = 256,
    parameter int    BLOCKS_PER_PLANE = 2048,
    parameter int    PLANES = 2,
    parameter int    LUNS = 1,
    parameter int    BITS_PER_CELL = 2,
    // array timings, ns (-1: per page type value not set)
    parameter int    T_R_NS = 100000,
    parameter int    T_PROG_NS = 1300000,
    parameter int    T_BERS_NS = 3000000,
    parameter int    T_R_LOWER_NS = -1,
    parameter int    T_R_UPPER_NS = -1,
    parameter int    T_PROG_LOWER_NS = -1,
    parameter int    T_PROG_UPPER_NS = -1,
    parameter int    T_CBSY_NS = 3000,
    parameter int    T_RCBSY_NS = 3000,
    parameter int    T_DBSY_NS = 500,
    parameter int    T_FEAT_NS = 1000,
    parameter int    T_RST_NS = 5000,
    parameter int    T_RST_PROG_NS = 10000,
    parameter int    T_RST_ERASE_NS = 500000,
    parameter int    T_RST_FIRST_NS = 1000000,
    // TLC middle page maxima and typical values (-1: not set; NandArrayTiming's fallbacks)
    parameter int    T_R_MIDDLE_NS = -1,
    parameter int    T_PROG_MIDDLE_NS = -1,
    parameter int    T_R_TYP_NS = -1,
    parameter int    T_R_LOWER_TYP_NS = -1,
    parameter int    T_R_MIDDLE_TYP_NS = -1,
    parameter int    T_R_UPPER_TYP_NS = -1,
    parameter int    T_PROG_TYP_NS = -1,
    parameter int    T_PROG_LOWER_TYP_NS = -1,
    parameter int    T_PROG_MIDDLE_TYP_NS = -1,
    parameter int    T_PROG_UPPER_TYP_NS = -1,
    parameter bit    TYPICAL = 1,                       // typical values, else the maxima
    // SLC mode (DAh prefix) maxima and typical values (-1: not set; the uniform ones)
    parameter int    T_R_SLC_NS = -1,
    parameter int    T_PROG_SLC_NS = -1,
    parameter int    T_R_SLC_TYP_NS = -1,
    parameter int    T_PROG_SLC_TYP_NS = -1,
    // die options (NandDie): rules, faults
    parameter bit    STRICT = 1,                        // refuse a rule-breaking command
    parameter real   FACTORY_BAD_BLOCK_RATE = 0.0,      // 0.0..0.5
    parameter int    PE_LIMIT = 0,                      // 0: no wear-out, else 1..10**7
    parameter real   RBER_BASE = 0.0,                   // raw bit error rate: base +
    parameter real   RBER_PER_KCYCLE = 0.0,             //   per_kcycle * (pe/1000)**exponent
    parameter real   RBER_EXPONENT = 1.0,
    // retention, read disturb, read retry (spec/nand_errors.BitErrorModel)
    parameter real   RETENTION_SHIFT = 0.0,             // retry steps per decade of hours
    parameter real   RBER_SHIFT = 0.0,                  // rate per (shift - level)**2
    parameter real   RBER_PER_KREAD = 0.0,              // rate per 1000 reads of the block
    parameter int    RETRY_LEVELS = 1,                  // SET FEATURES 89h levels, 1..16
    parameter bit    FACTORY_ERASED = 1,
    parameter bit    REQUIRE_RESET = 1,
    parameter int    PARAM_PAGE_COPIES = 3,
    parameter bit    VERBOSE = 1,                       // print each violation
    parameter bit    DDR_PINS = 0                       // 1: pins change at both clock edges
) (
    input  logic        clk,
    input  logic        rst,
    // ONFI pins of this target, named as the controller's
    input  logic        ce_n,
    input  logic        cle,
    input  logic        ale,
    input  logic        we_n,
    input  logic        re_n,
    input  logic        wp_n,
    input  logic [7:0]  dq_o,
    input  logic        dq_oe,
    input  logic        dqs_o,                          // NV-DDR2 DQS from the controller
    input  logic        dqs_oe,
    output logic [7:0]  dq_i,
    output logic        dqs_i,                          // NV-DDR2 DQS from the die
    output logic        rb_n,
    // violations so far (NAND rules; interface timing)
    output logic [31:0] rule_violations,
    output logic [31:0] timing_violations
);
    // ps as the unit: $time is the model's time as an integer, no real arithmetic per edge
    timeunit 1ps;
    timeprecision 1ps;

    import "DPI-C" function int nand_die_fast_new(
        input string part, input int die_id, input longint clk_ps, input longint seed,
        input int page_bytes, input int spare_bytes, input int pages_per_block,
        input int blocks_per_plane, input int planes, input int luns, input int bits_per_cell,
        input int t_r_ns, input int t_prog_ns, input int t_bers_ns, input int t_r_lower_ns,
        input int t_r_upper_ns, input int t_prog_lower_ns, input int t_prog_upper_ns,
        input int t_cbsy_ns, input int t_rcbsy_ns, input int t_dbsy_ns, input int t_feat_ns,
        input int t_rst_ns, input int t_rst_prog_ns, input int t_rst_erase_ns,
        input int t_rst_first_ns, input int strict, input real factory_bad_block_rate,
        input int pe_limit, input real rber_base, input real rber_per_kcycle,
        input real rber_exponent, input int factory_erased, input int require_reset,
        input int param_page_copies, input int verbose, input int t_r_middle_ns,
        input int t_prog_middle_ns, input int t_r_typ_ns, input int t_r_lower_typ_ns,
        input int t_r_middle_typ_ns, input int t_r_upper_typ_ns, input int t_prog_typ_ns,
        input int t_prog_lower_typ_ns, input int t_prog_middle_typ_ns,
        input int t_prog_upper_typ_ns, input int typical, input int t_r_slc_ns,
        input int t_prog_slc_ns, input int t_r_slc_typ_ns, input int t_prog_slc_typ_ns,
        input real retention_shift, input real rber_shift, input real rber_per_kread,
        input int retry_levels);
    import "DPI-C" function int nand_die_fast_eval(
        input int handle, input longint now_ps, input int pins, output int rules,
        output int timing, output longint next_ps);

    int handle;
    int last_pins;          // pins at the last call
    longint next_ps;        // the model's next output edge

    initial begin
        handle = nand_die_fast_new(PART, DIE_ID, longint'(CLK_PS), SEED, PAGE_BYTES,
            SPARE_BYTES, PAGES_PER_BLOCK, BLOCKS_PER_PLANE, PLANES, LUNS, BITS_PER_CELL,
            T_R_NS, T_PROG_NS, T_BERS_NS, T_R_LOWER_NS, T_R_UPPER_NS, T_PROG_LOWER_NS,
            T_PROG_UPPER_NS, T_CBSY_NS, T_RCBSY_NS, T_DBSY_NS, T_FEAT_NS, T_RST_NS,
            T_RST_PROG_NS, T_RST_ERASE_NS, T_RST_FIRST_NS, int'(STRICT),
            FACTORY_BAD_BLOCK_RATE, PE_LIMIT, RBER_BASE, RBER_PER_KCYCLE, RBER_EXPONENT,
            int'(FACTORY_ERASED), int'(REQUIRE_RESET), PARAM_PAGE_COPIES, int'(VERBOSE),
            T_R_MIDDLE_NS, T_PROG_MIDDLE_NS, T_R_TYP_NS, T_R_LOWER_TYP_NS, T_R_MIDDLE_TYP_NS,
            T_R_UPPER_TYP_NS, T_PROG_TYP_NS, T_PROG_LOWER_TYP_NS, T_PROG_MIDDLE_TYP_NS,
            T_PROG_UPPER_TYP_NS, int'(TYPICAL), T_R_SLC_NS, T_PROG_SLC_NS, T_R_SLC_TYP_NS,
            T_PROG_SLC_TYP_NS, RETENTION_SHIFT, RBER_SHIFT, RBER_PER_KREAD, RETRY_LEVELS);
        if (handle < 0)
            $fatal(1, "nand_die_fast %m (DIE_ID %0d): illegal parameters (see above)", DIE_ID);
        last_pins = -1;
        next_ps = 0;
        dq_i = 8'h00;
        dqs_i = 1'b0;
        rb_n = 1'b1;
        rule_violations = 32'd0;
        timing_violations = 32'd0;
    end

    // pins: ce_n 0, cle 1, ale 2, we_n 3, re_n 4, wp_n 5, dq_o 13:6, dq_oe 14, dqs_o 15,
    // dqs_oe 16. The model is called when a pin changed or an output edge is due by the next
    // edge (next_ps, which it returns); otherwise nothing can change and the call is skipped.
    task automatic evaluate();
        automatic int pins = {15'd0, dqs_oe, dqs_o, dq_oe, dq_o, wp_n, re_n, we_n, ale, cle,
                              ce_n};
        automatic longint now_ps = longint'($time);
        automatic longint nxt;
        /* verilator lint_off UNUSEDSIGNAL */
        automatic int result;                   // [9:0]: {dqs_i, rb_n, dq_i}
        /* verilator lint_on UNUSEDSIGNAL */
        automatic int rules, timing;
        if (!rst && (pins != last_pins || now_ps + longint'(CLK_PS) / 2 >= next_ps)) begin
            result = nand_die_fast_eval(handle, now_ps, pins, rules, timing, nxt);
            last_pins <= pins;
            next_ps <= nxt;
            dq_i <= result[7:0];
            rb_n <= result[8];
            dqs_i <= result[9];
            rule_violations <= rules;
            timing_violations <= timing;
        end
    endtask

    generate
        if (DDR_PINS) begin : both_edges
            always @(posedge clk or negedge clk) evaluate();
        end else begin : negedge_only
            always @(negedge clk) evaluate();
        end
    endgenerate
endmodule
