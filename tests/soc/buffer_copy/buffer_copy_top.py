# SPDX-License-Identifier: BSD-2-Clause
"""BufferCopyTop: test top with a BufferMemory of `data_width`-bit words, a BufferCopy on it,
and one full-width writer and reader of the memory for the testbench (ports `w_*`, `r_*`,
`d_*`), which compete with the engine's.

BufferCopy's CSRs have no CSR bank here: their storage and `push`'s `re` are driven from input
ports `csr_<name>` (`csr_dst`, `csr_src`, `csr_bytes`, `csr_pattern`, `csr_fill`, `csr_xor`,
`csr_push`; a CSR holds its value until the next write, as these ports do), their status comes
out as `csr_room`, `csr_done`, and the engine's `busy` as `busy`."""

from litex.gen import LiteXModule
from migen import Signal

from rtl.nvme.nvme_common import stream_port
from soc.buffer_copy import BufferCopy
from soc.buffer_memory import BufferMemory

__all__ = ["BufferCopyTop"]


class BufferCopyTop(LiteXModule):
    """Parameters: data_width (64, 128, 256 or 512), size (bytes, power of two >= 4096,
    default 16384), depth (job queue, 2..64, default 16)."""
    def __init__(self, data_width=64, size=16384, depth=16):
        self.mem = mem = BufferMemory(size, data_width=data_width)
        # The testbench's ports first: the round robin order does not matter to the test.
        wr = mem.add_writer("w")
        rd, rdata = mem.add_reader("r")
        self.copy = copy = BufferCopy(mem, depth=depth)
        self.ports = stream_port(wr, "w") + stream_port(rd, "r") + stream_port(rdata, "d")

        for name in ("dst", "src", "bytes", "pattern", "fill", "xor"):
            csr = getattr(copy, f"_{name}")
            port = Signal(len(csr.storage), name_override=f"csr_{name}")
            self.comb += csr.storage.eq(port)
            self.ports.append(port)
        push = Signal(name_override="csr_push")
        self.comb += copy._push.re.eq(push)
        self.ports.append(push)
        for name, sig in (("csr_room", copy._room.status), ("csr_done", copy._done.status),
                         ("busy", copy.busy)):
            port = Signal(len(sig), name_override=name)
            self.comb += port.eq(sig)
            self.ports.append(port)

    def get_ios(self):
        return self.ports
