// SPDX-License-Identifier: BSD-2-Clause
// Controller-side SDR interface timing checks of the fast NAND die model: the ONFI SDR
// timing mode table and SdrChecker, the port of spec/onfi_timing.py's OnfiTimingChecker.
#pragma once

#include <string>
#include <vector>

namespace nandfast {

// ONFI SDR timing mode table (ns), in the order of SDR_PARAM_NAMES.
enum SdrParam {
    tADL, tALH, tALS, tAR, tCCS, tCEA, tCEH, tCH, tCHZ, tCLH, tCLR, tCLS, tCOH, tCS, tDH, tDS,
    tRC, tREA, tREH, tRHOH, tRHW, tRHZ, tRLOH, tRP, tRR, tWB, tWC, tWH, tWHR, tWP, tWW,
    SDR_N_PARAMS
};
extern const char *const SDR_PARAM_NAMES[SDR_N_PARAMS];
double sdr_timing(int mode, int param);

struct Pins {
    int ce_n = 1, cle = 0, ale = 0, we_n = 1, re_n = 1;
    int dq = -1;        // -1: not driven
    int rb_n = 1;
    bool operator==(const Pins &o) const {
        return ce_n == o.ce_n && cle == o.cle && ale == o.ale && we_n == o.we_n &&
               re_n == o.re_n && dq == o.dq && rb_n == o.rb_n;
    }
};

struct TimingViolation {
    std::string param;
    double t_ns;
    std::string message;
};

// The golden OnfiTimingChecker.
class SdrChecker {
  public:
    explicit SdrChecker(int mode, std::string name) : mode_(mode), name_(std::move(name)) {}
    void set_mode(int mode) { mode_ = mode; }
    void observe(double t_ns, const Pins &pins);
    std::vector<TimingViolation> violations;

  private:
    int mode_;
    std::string name_;
    bool have_prev_ = false;
    Pins prev_;
    enum { WE_FALL, WE_RISE, RE_FALL, RE_RISE, CLE_CHG, ALE_CHG, CLE_FALL, ALE_FALL, DQ_CHG,
           CE_FALL, RB_RISE, ADDR_RISE, E0_RISE, N_EDGES };
    double last_[N_EDGES];
    bool has_[N_EDGES] = {};
    int last_kind_ = -1;    // 0 cmd, 1 addr, 2 data
    int last_cmd_ = -1;
    bool ccs_write_ = false;
    void set(int e, double t) { last_[e] = t; has_[e] = true; }
    void violate(const std::string &param, double t_ns, double measured, double required,
                 const std::string &what = "");
    void min(int param, double t_ns, int since, double required = -1);
};

}  // namespace nandfast
