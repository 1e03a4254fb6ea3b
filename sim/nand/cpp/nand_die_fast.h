// SPDX-License-Identifier: BSD-2-Clause
// Fast NAND die model: one ONFI target (CE#) with its LUNs, the C++ port of the golden
// Python model (sim/nand/python/nand_die.py NandDie + onfi_die_pins.py OnfiPinTarget +
// onfi_timing.py OnfiTimingChecker) for the full-system Verilator simulation through DPI.
//
// This is the model's public header: it includes the other layers' headers. Layers (each
// mirrors its golden counterpart, same rule and parameter names), one file pair each:
//   nand_random     PyRandom: Python's random.Random, for bit-exact flips.
//   nand_hash.h     mix64 (_mix64), the ONFI CRC-16, CRC-32.
//   nand_part       Geometry, ArrayTiming, DieConfig (NandPart + die options), parameter page.
//   nand_die_core   NandDieCore: array/command model (NandDie): busy times, status, rules,
//                   faults.
//   onfi_timing_check  OnfiChecker: controller-side interface timing checks
//                   (OnfiTimingChecker), its SDR rules and SDR mode table;
//   onfi_nvddr2_check  its NV-DDR2 rules and the NV-DDR2 mode table.
//   nand_die_fast   NandDieFast: the byte-level front end (OnfiPinTarget): latch(),
//                   data_out(), and the clocked pin evaluation used by the DPI module (eval()).
// nand_text.h (fmt, pyfloat) is internal to the .cpp files. The list of sources every build
// compiles is sim/nand/fast_sources.py.
// Storage is sparse: only blocks ever touched and pages ever programmed are allocated.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nand_die_core.h"
#include "nand_hash.h"
#include "nand_part.h"
#include "nand_random.h"
#include "onfi_timing_check.h"

namespace nandfast {

// One ONFI target: the golden OnfiPinTarget's byte-level front end plus the pin evaluation.
class NandDieFast {
  public:
    NandDieFast(const DieConfig &cfg, int die_id, int64_t clk_ps, bool verbose = true);
    NandDieCore die;
    OnfiChecker checker;
    std::vector<Violation> own_violations;
    int mode = 0;
    int die_id;

    // Byte-level entry points (times in ps): what OnfiPinTarget._latch/_data_out do.
    void latch(int64_t now_ps, int kind, int byte);   // kind 0 cmd, 1 addr, 2 data
    int data_out(int64_t now_ps);                     // SDR: the byte, or -1 (garbage)
    int nvddr2_byte(int64_t now_ps);                  // NV-DDR2: the byte of one DQS edge
    int iface() const { return iface_; }              // as the pins run: 0 SDR, 2 NV-DDR2
    void set_wp(int64_t now_ps, int wp_n);
    // The target loses power at now_ps and gets it back (OnfiPinTarget.power_cut): the die's
    // NandDieCore::power_cut, and the front end's own state as at construction (no sequence,
    // no data output or DQ drive pending, R/B# high, SDR mode 0, pins seen afresh).
    int power_cut(int64_t now_ps);     // the pages and blocks torn
    void checker_observe(int64_t t_ps, const Pins &pins);
    // Apply a pending interface/timing mode switch (after SET FEATURES 01h or RESET) once
    // the die is ready again, as OnfiPinTarget._switch does; the entry points call it.
    void sync(int64_t now_ps);

    // Clocked pin evaluation: the pins as set at the last clock edge (now - half a period),
    // returns the outputs for the next edge (dq_i | rb_n << 8 | dqs_i << 9). Called once per
    // clock at negedge, or at both edges when the pins change at both (a DDR PHY).
    uint32_t eval(int64_t now_ps, uint32_t packed_pins);
    size_t rule_count() const { return die.violations.size() + own_violations.size(); }
    size_t timing_count() const { return checker.violations.size(); }
    double ready_ns() const { return die.ready_ns(); }
    int64_t rb_rise_ps() const { return rb_rise_; }
    // The earliest pending DQ or R/B# edge (INT64_MAX: none): with unchanged pins, eval()
    // returns its cached outputs until the next posedge reaches this time.
    int64_t next_event_ps() const { return next_event_ps_; }

  private:
    int out_byte(int64_t now_ps, int copies);
    int64_t clk_ps_;
    bool verbose_;
    int iface_ = 0;
    bool switch_pending_ = false;
    size_t printed_rules_ = 0, printed_own_ = 0, printed_timing_ = 0;
    int64_t ce_fall_ps_ = 0;
    // NV-DDR2 data-out burst (OnfiPinTarget.rd): in progress, the last RE# falling edge
    bool rd_on_ = false;
    int64_t rd_last_fall_ = -1;
    int64_t rd_start_ = 0;  // its preamble's RE# falling edge; bytes (RE# edges) so far
    int rd_bytes_ = 0;
    bool trace_ = false;    // SSDLAB_DIE_TRACE names this die (or "all")
    int feat_raw_ = 0;      // NV-DDR2 SET FEATURES bytes seen (each comes twice)
    // command assembly
    bool slc_prefix_ = false;   // DAh latched: the next command must start 60h/80h/00h
    bool slc_ = false;          // the sequence being collected is in SLC mode (DAh)
    int cmd_ = -1;
    std::vector<int> addr_;
    std::vector<std::pair<int, Bytes>> chunks_;
    int64_t row_ = -1;
    Bytes feat_;
    enum Out { OUT_NONE, OUT_STATUS, OUT_ARRAY, OUT_BYTES } out_ = OUT_NONE;
    Bytes out_bytes_;
    size_t out_index_ = 0;
    // pins
    bool have_prev_ = false;
    Pins prev_;
    int prev_wp_ = 1;
    uint32_t last_packed_ = 0xFFFFFFFF;
    // DQ (and DQS) drive events (time ps, value or -1 garbage, DQS level or -1 unchanged),
    // applied in order
    struct Drive { int64_t t; uint64_t seq; int value; int dqs; };
    std::vector<Drive> drives_;
    uint64_t drive_seq_ = 0;
    int dq_out_ = 0, dqs_out_ = 0;
    PyRandom garbage_;
    // R/B#: the current task (OnfiPinTarget._busy): base value, fall at, rise at
    int rb_base_ = 1;
    int64_t rb_fall_ = -1, rb_rise_ = -1, rb_task_start_ = 0;
    int64_t rb_checked_ = INT64_MIN;   // rb edges up to here have been fed to the checker
    int rb_at(int64_t t) const;
    int64_t next_event_ps_ = INT64_MAX;
    uint32_t out_cache_ = 0x1FF;

    void clear();
    void own(double now, const std::string &rule, const std::string &message);
    template <class F> void call(double now, F fn, bool rb = true);
    void update_rb(int64_t now_ps);
    void command(int64_t now_ps, int c);
    void address(int64_t now_ps, int a);
    void data_in(int64_t now_ps, int d);
    void finish_85(double now);
    bool expect_addr(double now, size_t n, const std::string &what);
    uint64_t value(size_t from, size_t to) const;
    void drive(int64_t t_ps, double delay_ns, int value, int dqs = -1);
    void observe(int64_t t_ps, const Pins &pins, int wp_n);
    void observe_nvddr2(int64_t t_ps, const Pins &prev, const Pins &pins);
    double t_wb() const;
    double t_coh() const;
    void report();
};

}  // namespace nandfast
