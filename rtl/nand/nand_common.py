# SPDX-License-Identifier: BSD-2-Clause
"""Helpers shared by the rtl/nand cores (not a core)."""

__all__ = ["bad_int"]


def bad_int(name, value, lo, hi):
    """The message for a parameter that is not an int in lo..hi (bools refused), else None."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        return f"{name} must be an int in {lo}..{hi}, got {value!r}"
    return None
