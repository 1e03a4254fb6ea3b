// SPDX-License-Identifier: BSD-2-Clause
// SDR timing checks (see onfi_timing_check.h): the port of onfi_timing.py, same table,
// same rules, same messages. The NV-DDR2 rules: onfi_nvddr2_check.cpp.
#include "onfi_timing_check.h"

#include <cmath>

#include "nand_text.h"

namespace nandfast {

const char *const SDR_PARAM_NAMES[SDR_N_PARAMS] = {
    "tADL", "tALH", "tALS", "tAR", "tCCS", "tCEA", "tCEH", "tCH", "tCHZ", "tCLH", "tCLR",
    "tCLS", "tCOH", "tCS", "tDH", "tDS", "tRC", "tREA", "tREH", "tRHOH", "tRHW", "tRHZ",
    "tRLOH", "tRP", "tRR", "tWB", "tWC", "tWH", "tWHR", "tWP", "tWW"};

static const double SDR_TABLE[SDR_N_PARAMS][6] = {
    {400, 400, 400, 400, 400, 400}, {20, 10, 10, 5, 5, 5},       {50, 25, 15, 10, 10, 10},
    {25, 10, 10, 10, 10, 10},       {500, 500, 500, 500, 500, 500},
    {100, 45, 30, 25, 25, 25},      {20, 20, 20, 20, 20, 20},    {20, 10, 10, 5, 5, 5},
    {100, 50, 50, 50, 30, 30},      {20, 10, 10, 5, 5, 5},       {20, 10, 10, 10, 10, 10},
    {50, 25, 15, 10, 10, 10},       {0, 15, 15, 15, 15, 15},     {70, 35, 25, 25, 20, 15},
    {20, 10, 5, 5, 5, 5},           {40, 20, 15, 10, 10, 7},     {100, 50, 35, 30, 25, 20},
    {40, 30, 25, 20, 20, 16},       {30, 15, 15, 10, 10, 7},     {0, 15, 15, 15, 15, 15},
    {200, 100, 100, 100, 100, 100}, {200, 100, 100, 100, 100, 100},
    {0, 0, 0, 0, 5, 5},             {50, 25, 17, 15, 12, 10},    {40, 20, 20, 20, 20, 20},
    {200, 100, 100, 100, 100, 100}, {100, 45, 35, 30, 25, 20},   {30, 15, 15, 10, 10, 7},
    {120, 80, 80, 80, 80, 80},      {50, 25, 17, 15, 12, 10},
    {100, 100, 100, 100, 100, 100}};

double sdr_timing(int mode, int param) { return SDR_TABLE[param][mode]; }

void OnfiChecker::violate(const std::string &param, double t_ns, double measured,
                         double required, const std::string &what) {
    std::string w = what.empty()
                        ? fmt("%s violated: %.1f ns < %g ns", param.c_str(), measured, required)
                        : what;
    violations.push_back({param, t_ns, fmt("%s: %s (at %.1f ns)", name_.c_str(), w.c_str(),
                                           t_ns)});
}

void OnfiChecker::protocol(double t_ns, const std::string &what) {
    violate("protocol", t_ns, NAN, NAN, "protocol: " + what);
}

void OnfiChecker::min_ns(const char *param, double t_ns, bool has, double since,
                         double required) {
    if (!has || since < 0) return;
    double measured = t_ns - since;
    if (measured + 1e-3 < required) violate(param, t_ns, measured, required);
}

void OnfiChecker::min(int param, double t_ns, int since, double required) {
    if (!has_[since]) return;
    if (required < 0) required = SDR_TABLE[param][mode_];
    double measured = t_ns - last_[since];
    if (measured + 1e-3 < required)
        violate(SDR_PARAM_NAMES[param], t_ns, measured, required);
}

void OnfiChecker::observe(double t, const Pins &pins) {
    Pins prev = prev_;
    prev_ = pins;
    if (!have_prev_) {
        have_prev_ = true;
        return;
    }
    if (iface_)
        observe_nvddr2(t, prev, pins);
    else
        observe_sdr(t, prev, pins);
}

void OnfiChecker::observe_sdr(double t, const Pins &prev, const Pins &pins) {
    auto protocol = [&](const char *what) { this->protocol(t, what); };
    bool sel = !pins.ce_n, was_sel = !prev.ce_n;
    if (prev.ce_n && !pins.ce_n) set(CE_FALL, t);
    if (was_sel && pins.ce_n) {
        double ce_fall = has_[CE_FALL] ? last_[CE_FALL] : 0;
        if (has_[WE_RISE] && ce_fall <= last_[WE_RISE]) min(tCH, t, WE_RISE);
    }
    if (pins.cle != prev.cle) {
        min(tCLH, t, WE_RISE);
        set(CLE_CHG, t);
        if (!pins.cle) set(CLE_FALL, t);
    }
    if (pins.ale != prev.ale) {
        min(tALH, t, WE_RISE);
        set(ALE_CHG, t);
        if (!pins.ale) set(ALE_FALL, t);
    }
    if (pins.dq != prev.dq) {
        if (prev.dq >= 0) min(tDH, t, WE_RISE);
        if (pins.dq >= 0) set(DQ_CHG, t);
    }
    if (prev.rb_n == 0 && pins.rb_n == 1) set(RB_RISE, t);
    if (!pins.we_n && !pins.re_n && sel) protocol("WE# and RE# low together");
    if (prev.we_n && !pins.we_n && sel) {
        min(tWH, t, WE_RISE);
        min(tWC, t, WE_FALL);
        if (has_[RE_RISE] && (!has_[WE_RISE] || last_[RE_RISE] > last_[WE_RISE]))
            min(tRHW, t, RE_RISE);
        set(WE_FALL, t);
    }
    if (!prev.we_n && pins.we_n && sel) {
        min(tWP, t, WE_FALL);
        min(tCLS, t, CLE_CHG);
        min(tALS, t, ALE_CHG);
        min(tCS, t, CE_FALL);
        if (prev.dq < 0)
            protocol("DQ not driven at WE# rising");
        else
            min(tDS, t, DQ_CHG);
        if (prev.cle && prev.ale) protocol("CLE and ALE both high at WE# rising");
        int kind = prev.cle ? 0 : prev.ale ? 1 : 2;
        int byte = prev.dq >= 0 ? prev.dq : 0;
        if (kind == 2) {
            if (last_kind_ == 1) {
                min(tADL, t, ADDR_RISE);
                if (ccs_write_) min(tCCS, t, ADDR_RISE);
            }
            ccs_write_ = false;
            last_kind_ = kind;
        } else {
            latch(kind, byte, t);
        }
        set(WE_RISE, t);
    }
    if (prev.re_n && !pins.re_n && sel) {
        min(tREH, t, RE_RISE);
        min(tRC, t, RE_FALL);
        bool first_read =
            !has_[RE_FALL] || (has_[WE_RISE] && last_[WE_RISE] > last_[RE_FALL]);
        if (first_read) {
            min(tWHR, t, WE_RISE);
            min(tCCS, t, E0_RISE);
        }
        // not inside a burst: R/B# rising there is another LUN of the target going ready
        if (first_read && has_[RB_RISE] && last_cmd_ != 0x70 && last_cmd_ != 0x78 &&
            (!has_[RE_FALL] || last_[RB_RISE] > last_[RE_FALL]))
            min(tRR, t, RB_RISE);
        if (pins.cle || pins.ale) protocol("CLE or ALE high at RE# falling");
        min(tCLR, t, CLE_FALL);
        min(tAR, t, ALE_FALL);
        set(RE_FALL, t);
        has_[E0_RISE] = false;
    }
    if (!prev.re_n && pins.re_n && sel) {
        min(tRP, t, RE_FALL);
        set(RE_RISE, t);
    }
}

// A command (kind 0) or address (kind 1) cycle latched at t: the edges later rules time from.
void OnfiChecker::latch(int kind, int byte, double t) {
    if (kind == 1) {
        set(ADDR_RISE, t);
    } else {
        last_cmd_ = byte;
        ccs_write_ = byte == 0x85;
        if (byte == 0xE0)
            set(E0_RISE, t);
        else
            has_[E0_RISE] = false;
    }
    last_kind_ = kind;
}

}  // namespace nandfast
