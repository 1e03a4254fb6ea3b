# SPDX-License-Identifier: BSD-2-Clause
"""Helpers shared by the NVMe front-end cores (rtl/nvme/), as litepcie/common.py is for LitePCIe."""

__all__ = ["check_param", "stream_port"]


def check_param(core, name, value, ok, legal):
    """Elaboration check: raise ValueError naming the core and the parameter unless `ok`.
    `legal` completes the message, e.g. "out of range 1..65"."""
    if not ok:
        raise ValueError(f"{core}: {name}={value!r} {legal}")


def stream_port(endpoint, prefix):
    """Name a LiteX stream endpoint's signals `<prefix>_<field>` for the Verilog boundary, so
    cocotbext and tests find them by prefix; returns the signals, for get_ios()."""
    sigs = [endpoint.valid, endpoint.ready]
    endpoint.valid.name_override = f"{prefix}_valid"
    endpoint.ready.name_override = f"{prefix}_ready"
    for name, _ in endpoint.description.payload_layout:
        sig = getattr(endpoint, name)
        sig.name_override = f"{prefix}_{name}"
        sigs.append(sig)
    return sigs
