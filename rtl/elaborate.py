# SPDX-License-Identifier: BSD-2-Clause
"""Elaborate one ssdlab core, Amaranth or LiteX, to Verilog with the house boundary.

A core is named by a descriptor: the Python factory that builds it, the Verilog module name
and the HDL parameters. Tests, `make lint` and later synthesis all elaborate through here, so
every core meets the same boundary rules: the synchronous clock and reset are ports `clk` and
`rst` (active high), and the Verilog module carries the core's own name.

    python -m rtl.elaborate onfi_sdr_engine -o build/onfi_sdr_engine.v -p n_ways=8
"""

import argparse
import ast
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Core", "AmaranthCore", "LiteXCore", "CATALOGUE", "main"]


@dataclass(frozen=True)
class Core:
    """A core to elaborate.

    factory:  "package.module:Class", called with **params.
    toplevel: Verilog module name, the core's one name (STYLE.md).
    params:   HDL parameters, passed as keyword arguments.
    """
    factory: str
    toplevel: str
    params: dict = field(default_factory=dict)

    def instantiate(self):
        module_name, _, attr = self.factory.partition(":")
        if not attr:
            raise ValueError(f"core {self.toplevel}: factory {self.factory!r} is not "
                             "'package.module:Class'")
        return getattr(importlib.import_module(module_name), attr)(**self.params)

    def with_params(self, **params):
        return type(self)(self.factory, self.toplevel, {**self.params, **params})

    def verilog(self) -> str:
        raise NotImplementedError


class AmaranthCore(Core):
    """An Amaranth 0.5 `wiring.Component`; its signature is the port list."""

    def verilog(self) -> str:
        from amaranth.back import verilog
        return verilog.convert(self.instantiate(), name=self.toplevel,
                               emit_src=False, strip_internal_attrs=True)


class LiteXCore(Core):
    """A LiteX/Migen module whose `get_ios()` lists its boundary signals.

    The module's `sys` clock domain becomes the ports `clk` and `rst`.
    """

    def verilog(self) -> str:
        from litex.gen.fhdl.verilog import convert
        from migen import ClockDomain

        module = self.instantiate()
        if not hasattr(module, "get_ios"):
            raise TypeError(f"core {self.toplevel}: {self.factory} has no get_ios()")
        ios = list(module.get_ios())
        cd_sys = ClockDomain("sys")
        cd_sys.clk.name_override = "clk"
        cd_sys.rst.name_override = "rst"
        module.clock_domains += cd_sys
        ios += [cd_sys.clk, cd_sys.rst]
        return str(convert(module, ios=set(ios), name=self.toplevel))


# Every core with its default parameters: what `make lint` checks and the catalogue lists.
CATALOGUE = {core.toplevel: core for core in [
    AmaranthCore("rtl.nand.onfi_sdr_engine:OnfiSdrEngine", "onfi_sdr_engine"),
    LiteXCore("rtl.nvme.nvme_regs:NvmeRegs", "nvme_regs"),
]}


def _parse_value(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m rtl.elaborate", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("core", choices=sorted(CATALOGUE), help="core name")
    parser.add_argument("-o", "--output", type=Path, help="Verilog file (default: stdout)")
    parser.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                        help="HDL parameter, may repeat")
    args = parser.parse_args(argv)
    params = {}
    for item in args.param:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            parser.error(f"--param {item!r}: expected NAME=VALUE")
        params[name] = _parse_value(value)
    try:
        text = CATALOGUE[args.core].with_params(**params).verilog()
    except (TypeError, ValueError) as e:
        parser.error(f"{args.core}: {e}")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
