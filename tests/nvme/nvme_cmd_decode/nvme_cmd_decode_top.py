# SPDX-License-Identifier: BSD-2-Clause
"""NvmeCmdDecodeTop: nvme_cmd_decode with its streams and controls as Verilog ports.

The core has no get_ios() (it lives inside nvme_controller, which wires it); this subclass
only names the boundary, so the simulated Verilog module is the core itself, `nvme_cmd_decode`.
"""

from rtl.nvme.nvme_cmd_decode import NvmeCmdDecode
from rtl.nvme.nvme_common import stream_port

__all__ = ["NvmeCmdDecodeTop"]


class NvmeCmdDecodeTop(NvmeCmdDecode):
    """Parameters: NvmeCmdDecode's (n_sqs 1..65, lbads 9..12, max_transfer power of two
    8192..16 MiB)."""
    def get_ios(self):
        ios = []
        for ep, prefix in [(self.s_sqe, "s_sqe"), (self.m_fast, "m_fast"), (self.m_fw, "m_fw"),
                           (self.m_err, "m_err")]:
            ios += stream_port(ep, prefix)
        for name in ["ns_size", "sq_abort", "abort_arm", "abort_sqid", "abort_cid", "abort_hit",
                     "drop"]:
            sig = getattr(self, name)
            sig.name_override = name
            ios.append(sig)
        return ios
