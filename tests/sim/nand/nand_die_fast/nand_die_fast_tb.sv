// SPDX-License-Identifier: BSD-2-Clause
// Test top of nand_die_fast: the onfi_channel core (n_ways = 2, row_cycles 2, col_cycles 2,
// max_len 2112) driving two nand_die_fast targets on its CE#s, with the scaled-down geometry
// of the onfi_channel tests (2 KB + 64 B pages, 16 pages/block, 2 x 8 blocks, 2 LUNs) and
// the part's real array times. The channel's stream ports come out to cocotb.
module nand_die_fast_tb (
    input  logic         clk,
    input  logic         rst,
    input  logic         s_op__valid,
    output logic         s_op__ready,
    input  logic [69:0]  s_op__payload,
    input  logic         s_wdata__valid,
    output logic         s_wdata__ready,
    input  logic [7:0]   s_wdata__payload,
    output logic         m_rdata__valid,
    input  logic         m_rdata__ready,
    output logic [8:0]   m_rdata__payload,
    output logic         m_cpl__valid,
    input  logic         m_cpl__ready,
    output logic [17:0]  m_cpl__payload,
    input  logic [143:0] timing,
    input  logic         write_protect,
    // the bus, for the test to look at (and for a golden model on the same pins)
    output logic [1:0]   ce_n,
    output logic [1:0]   rb_n,
    output logic         we_n,
    output logic         re_n,
    output logic         cle,
    output logic         ale,
    output logic         wp_n,
    output logic [7:0]   dq_o,
    output logic         dq_oe,
    // what a golden model (OnfiPinTarget) on the same pins drives: compared by the test
    input  logic [7:0]   gold_dq_i,
    input  logic [1:0]   gold_rb_n,
    output logic [7:0]   dq_bus,        // what the DPI dies put on the shared DQ (dq_i)
    // per die: rule and timing violation counts
    output logic [31:0]  rules0,
    output logic [31:0]  timing0,
    output logic [31:0]  rules1,
    output logic [31:0]  timing1
);
    logic [7:0] dq_i, dq_i0, dq_i1;

    onfi_channel channel (
        .clk(clk), .rst(rst),
        .s_op__valid(s_op__valid), .s_op__ready(s_op__ready), .s_op__payload(s_op__payload),
        .s_wdata__valid(s_wdata__valid), .s_wdata__ready(s_wdata__ready),
        .s_wdata__payload(s_wdata__payload),
        .m_rdata__valid(m_rdata__valid), .m_rdata__ready(m_rdata__ready),
        .m_rdata__payload(m_rdata__payload),
        .m_cpl__valid(m_cpl__valid), .m_cpl__ready(m_cpl__ready),
        .m_cpl__payload(m_cpl__payload),
        .timing(timing), .write_protect(write_protect),
        .dq_o(dq_o), .dq_oe(dq_oe), .dq_i(dq_i), .ce_n(ce_n), .cle(cle), .ale(ale),
        .we_n(we_n), .re_n(re_n), .wp_n(wp_n), .rb_n(rb_n)
    );

    // the shared DQ bus: the selected target drives it, the last one selected after CE#
    // rises (its tCOH hold, then its garbage)
    logic sel, sel_last = 1'b0;
    assign sel = !ce_n[1] ? 1'b1 : !ce_n[0] ? 1'b0 : sel_last;
    always_ff @(posedge clk) sel_last <= sel;
    assign dq_i = sel ? dq_i1 : dq_i0;
    assign dq_bus = dq_i;

    nand_die_fast #(
        .CLK_PS(10000), .DIE_ID(0), .SEED(1000),
        .PAGE_BYTES(2048), .SPARE_BYTES(64), .PAGES_PER_BLOCK(16), .BLOCKS_PER_PLANE(8),
        .PLANES(2), .LUNS(2)
    ) die0 (
        .clk(clk), .rst(rst), .ce_n(ce_n[0]), .cle(cle), .ale(ale), .we_n(we_n), .re_n(re_n),
        .wp_n(wp_n), .dq_o(dq_o), .dq_oe(dq_oe), .dqs_o(1'b0), .dqs_oe(1'b0),
        .dq_i(dq_i0), .dqs_i(), .rb_n(rb_n[0]),
        .rule_violations(rules0), .timing_violations(timing0)
    );

    nand_die_fast #(
        .CLK_PS(10000), .DIE_ID(1), .SEED(1001),
        .PAGE_BYTES(2048), .SPARE_BYTES(64), .PAGES_PER_BLOCK(16), .BLOCKS_PER_PLANE(8),
        .PLANES(2), .LUNS(2), .FACTORY_BAD_BLOCK_RATE(0.25)
    ) die1 (
        .clk(clk), .rst(rst), .ce_n(ce_n[1]), .cle(cle), .ale(ale), .we_n(we_n), .re_n(re_n),
        .wp_n(wp_n), .dq_o(dq_o), .dq_oe(dq_oe), .dqs_o(1'b0), .dqs_oe(1'b0),
        .dq_i(dq_i1), .dqs_i(), .rb_n(rb_n[1]),
        .rule_violations(rules1), .timing_violations(timing1)
    );
endmodule
