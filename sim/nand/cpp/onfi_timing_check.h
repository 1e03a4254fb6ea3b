// SPDX-License-Identifier: BSD-2-Clause
// Controller-side interface timing checks of the fast NAND die model: the ONFI SDR timing
// mode table and OnfiChecker, the port of spec/onfi_timing.py's OnfiTimingChecker. Its SDR
// rules are in onfi_timing_check.cpp, its NV-DDR2 rules (and the NV-DDR2 mode table,
// onfi_nvddr2_check.h) in onfi_nvddr2_check.cpp.
#pragma once

#include <string>
#include <vector>

#include "onfi_nvddr2_check.h"

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
    int dqs = -1;       // NV-DDR2: the controller's DQS level, -1: not driven
    bool operator==(const Pins &o) const {
        return ce_n == o.ce_n && cle == o.cle && ale == o.ale && we_n == o.we_n &&
               re_n == o.re_n && dq == o.dq && rb_n == o.rb_n && dqs == o.dqs;
    }
};

struct TimingViolation {
    std::string param;
    double t_ns;
    std::string message;
};

// The golden OnfiTimingChecker: the SDR rules in an SDR timing mode, the NV-DDR2 rules in an
// NV-DDR2 one (set_timings), over one history of edge times, as the golden keeps.
class OnfiChecker {
  public:
    OnfiChecker(int mode, std::string name) : mode_(mode), name_(std::move(name)) {}
    // iface 0: SDR mode 0..5; 1: NV-DDR2 mode 0..7. Forgets a burst in progress.
    void set_timings(int iface, int mode) {
        iface_ = iface;
        mode_ = mode;
        rd_.on = wr_.on = false;
    }
    void observe(double t_ns, const Pins &pins);
    std::vector<TimingViolation> violations;

  private:
    int iface_ = 0;
    int mode_;
    std::string name_;
    bool have_prev_ = false;
    Pins prev_;
    enum { WE_FALL, WE_RISE, RE_FALL, RE_RISE, CLE_CHG, ALE_CHG, CLE_FALL, ALE_FALL, DQ_CHG,
           CE_FALL, RB_RISE, ADDR_RISE, E0_RISE, RD_END, WPST_END, RD_START, N_EDGES };
    double last_[N_EDGES];
    bool has_[N_EDGES] = {};
    void latch(int kind, int byte, double t);
    int last_kind_ = -1;    // 0 cmd, 1 addr, 2 data
    int last_cmd_ = -1;
    bool ccs_write_ = false;
    // NV-DDR2 bursts in progress (the golden's rd / wr dicts); an edge time < 0: none yet
    struct { bool on = false; double start = 0, last_rise = -1, last_fall = -1; } rd_;
    struct { bool on = false; double start = 0, last_edge = -1, rise = -1, fall = -1;
             int n = 0; } wr_;
    void set(int e, double t) { last_[e] = t; has_[e] = true; }
    void violate(const std::string &param, double t_ns, double measured, double required,
                 const std::string &what = "");
    void protocol(double t_ns, const std::string &what);
    void min(int param, double t_ns, int since, double required = -1);
    // NV-DDR2: `param` (a name of Nvddr2Timings, value `required`) since an edge time
    void min_ns(const char *param, double t_ns, bool has, double since, double required);
    void min_edge(const char *param, double t_ns, int since, double required) {
        min_ns(param, t_ns, has_[since], last_[since], required);
    }
    void observe_sdr(double t_ns, const Pins &prev, const Pins &pins);
    void observe_nvddr2(double t_ns, const Pins &prev, const Pins &pins);
    void end_read(double t_ns, const char *why);
};

}  // namespace nandfast
