# SPDX-License-Identifier: BSD-2-Clause
"""Board targets of the drive (issue 7): one `Board` record a file; see README.md."""

import importlib

__all__ = ["BOARDS", "get_board"]

BOARDS = ("sqrl_acorn", "xilinx_ac701", "xilinx_kcu105", "sqrl_xcu1525")


def get_board(name):
    """The Board record of target `name` (one of BOARDS)."""
    if name not in BOARDS:
        raise ValueError(f"unknown board {name!r}; known: {', '.join(BOARDS)}")
    return importlib.import_module(f"soc.targets.{name}").BOARD
