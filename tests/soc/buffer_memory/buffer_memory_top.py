# SPDX-License-Identifier: BSD-2-Clause
"""BufferMemoryTop: test top with a BufferMemory of `data_width`-bit words and one writer and
one reader of each width 32, 64 and data_width (ports `w<width>_*`, `r<width>_*`,
`d<width>_*`)."""

from litex.gen import LiteXModule

from rtl.nvme.nvme_common import stream_port
from soc.buffer_memory import BufferMemory

__all__ = ["BufferMemoryTop"]


class BufferMemoryTop(LiteXModule):
    """Parameters: data_width (64..512), size (bytes, default 4096)."""
    def __init__(self, data_width=64, size=4096):
        self.mem = mem = BufferMemory(size, data_width=data_width)
        self.widths = sorted({32, 64, data_width})
        self.ports = []
        for w in self.widths:
            wr = mem.add_writer(f"w{w}", width=w)
            rd, rdata = mem.add_reader(f"r{w}", width=w)
            self.ports += (stream_port(wr, f"w{w}") + stream_port(rd, f"r{w}")
                           + stream_port(rdata, f"d{w}"))

    def get_ios(self):
        return self.ports
