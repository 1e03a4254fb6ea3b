# SPDX-License-Identifier: BSD-2-Clause
"""The source files of nand_die_fast, the fast C++ NAND die model in sim/nand/cpp: the one list
every build that compiles the model uses (the simulated drive's Verilator build in
sw/ssdlab/flows/sim_build.py, the cocotb tests that put the model behind DPI, the standalone
vector runner). A new model file is added here only.

    CPP             sim/nand/cpp
    MODEL_SOURCES   the model's .cpp files, without a main or the DPI front end
    HEADERS         its headers (a build that tracks changes depends on them too)
    DPI_SOURCES     what a Verilator build adds: the SystemVerilog module nand_die_fast, the
                    model and its DPI-C front end
    VECTOR_MAIN     main() of the vector runner (linked with MODEL_SOURCES)
"""

from pathlib import Path

__all__ = ["CPP", "MODEL_SOURCES", "HEADERS", "DPI_SOURCES", "VECTOR_MAIN"]

CPP = Path(__file__).resolve().parent / "cpp"

# Bottom layer first: Python's random, the part, the die, the timing checks (SDR, NV-DDR2),
# the pin-level target.
MODEL_SOURCES = tuple(CPP / name for name in (
    "nand_random.cpp", "nand_part.cpp", "nand_die_core.cpp", "onfi_timing_check.cpp",
    "onfi_nvddr2_check.cpp", "nand_die_fast.cpp"))

HEADERS = tuple(CPP / name for name in (
    "nand_random.h", "nand_hash.h", "nand_text.h", "nand_part.h", "nand_die_core.h",
    "onfi_nvddr2_check.h", "onfi_timing_check.h", "nand_die_fast.h"))

DPI_SOURCES = (CPP / "nand_die_fast.sv", *MODEL_SOURCES, CPP / "nand_die_fast_dpi.cpp")

VECTOR_MAIN = CPP / "nand_vectors_main.cpp"
