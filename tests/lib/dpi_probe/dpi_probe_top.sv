// SPDX-License-Identifier: BSD-2-Clause
// Test top of the harness's extra-sources self-test: the core under a top module, plus a
// register that a C++ DPI function updates every clock.
module dpi_probe_top (
    input  logic        clk,
    input  logic        rst,
    input  logic [31:0] probe_in,
    output logic [31:0] probe_out
);
    import "DPI-C" function int ssdlab_dpi_probe_mix(input int value);

    always_ff @(posedge clk)
        probe_out <= rst ? 32'd0 : ssdlab_dpi_probe_mix(probe_in);
endmodule
