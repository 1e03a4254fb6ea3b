# SPDX-License-Identifier: BSD-2-Clause
"""ssdlab's interface facts, at the bottom of the tree: everything else may import `spec`,
`spec` imports nothing of ours (tests/test_layers.py checks it).

- `spec.nvme`: the NVMe specification's opcodes, status codes, SQE/CQE layout, feature and log
  identifiers, Identify and log page structures; generates ssdlab/nvme_spec.h, the one C header
  of these facts for the firmware and the host library;
- `spec.nvme_regmap`: the controller registers at BAR0 (generates the RTL decode's table, the
  C header and the README table);
- `spec.nand_geometry`, `spec.onfi_timing`, `spec.onfi_param_page`: the NAND parts, the ONFI
  timing modes and parameter pages;
- `spec.fw_streams`: the hardware/firmware stream layouts (the NVMe processor interface, block
  requests, flash ops) and their packing into CSR words (soc/fw_ports.py generates the C);
  the flash op codes (generates ssdlab/fw_streams.h for the firmware and its mock HAL);
- `spec.persona`: drive personas (`personas/*.yaml`): schema, model and loader, analytic
  limits.
"""
