# SPDX-License-Identifier: BSD-2-Clause
"""Python NVMe models for tests: the specification's constants and structures (`nvme_spec`),
a host driver model on a cocotbext-pcie root complex (`nvme_host`), and a firmware model with
a RAM back end serving the controller's processor and back-end ports (`nvme_fw_model`,
`nvme_ram_backend`)."""
