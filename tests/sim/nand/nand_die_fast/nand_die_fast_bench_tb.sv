// SPDX-License-Identifier: BSD-2-Clause
// Speed bench of nand_die_fast: N_DIES dies (the default 64 Gbit part, 18 channels x 4 ways
// = 72) on one clock. Die 0 is polled with READ STATUS (70h + one data-out cycle, SDR mode 0
// timing at 100 MHz) every 64 clocks; the others see idle pins, as most dies of a large back
// end do between commands. The onfi_channel core is built beside it but not used.
module nand_die_fast_bench_tb #(
    parameter int N_DIES = 72
) (
    input  logic        clk,
    input  logic        rst,
    output logic [7:0]  status,         // the last status byte read from die 0
    output logic [31:0] violations      // rule + timing violations of every die
);
    logic [5:0] k;
    logic       ce_n, cle, we_n, re_n, dq_oe;
    logic [7:0] dq_o;
    logic [7:0]  dq_i [N_DIES];
    logic        rb_n [N_DIES];
    logic [31:0] rules [N_DIES];
    logic [31:0] timing [N_DIES];

    // the 70h poll of die 0: CE# 0..25, CLE + DQ 0..8, WE# low 2..6, RE# low 19..23
    always_ff @(posedge clk) begin
        k <= rst ? 6'd0 : k + 6'd1;
        ce_n <= rst || k >= 6'd26;
        cle <= !rst && k < 6'd9;
        dq_oe <= !rst && k < 6'd9;
        dq_o <= 8'h70;
        we_n <= rst || !(k >= 6'd2 && k < 6'd7);
        re_n <= rst || !(k >= 6'd19 && k < 6'd24);
        if (k == 6'd24) status <= dq_i[0];
    end

    always_comb begin
        violations = 32'd0;
        for (int i = 0; i < N_DIES; i++) violations = violations + rules[i] + timing[i];
    end

    for (genvar i = 0; i < N_DIES; i++) begin : g_die
        nand_die_fast #(.CLK_PS(10000), .DIE_ID(i), .SEED(i), .REQUIRE_RESET(0)) die (
            .clk(clk), .rst(rst), .ce_n(i == 0 ? ce_n : 1'b1), .cle(cle), .ale(1'b0),
            .we_n(we_n), .re_n(re_n), .wp_n(1'b1), .dq_o(dq_o), .dq_oe(dq_oe),
            .dq_i(dq_i[i]), .rb_n(rb_n[i]), .rule_violations(rules[i]),
            .timing_violations(timing[i])
        );
    end
endmodule
