// SPDX-License-Identifier: BSD-2-Clause
// NV-DDR2 timing of the fast NAND die model: the mode table of spec/onfi_timing.py
// (NVDDR2_MODES, OnfiNvddr2Timings, same values and parameter names). The NV-DDR2 rules of
// OnfiChecker (onfi_timing_check.h) are in onfi_nvddr2_check.cpp.
#pragma once

namespace nandfast {

// One NV-DDR2 timing set, ns; minimums unless noted (see OnfiNvddr2Timings for each).
struct Nvddr2Timings {
    int mode;
    double tRC, tDSC, tCS, tCH, tCEH, tCR, tCALS, tCALH, tCAS, tCAH, tWP, tWH, tWC, tWHR,
        tADL, tCCS, tRR, tWB, tRHW, tWPRE, tWPST, tWPSTH, tRPRE, tRPST, tRPSTH, tDQSRE,
        tDQSD, tDS, tDH, tDQSH, tDQSL, tRP, tREH, tCOH;
};

constexpr int NVDDR2_N_MODES = 8;
// NVDDR2_MODES[mode], mode 0..7.
const Nvddr2Timings &nvddr2_timing(int mode);

}  // namespace nandfast
