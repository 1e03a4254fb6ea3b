// SPDX-License-Identifier: BSD-2-Clause
// NV-DDR2 timing of the fast NAND die model: the NVDDR2_MODES table and OnfiChecker's NV-DDR2
// rules, the port of spec/onfi_timing.py (_nvddr2_modes, OnfiTimingChecker._observe_nvddr2,
// _end_read): same values, rules, parameter names and messages.
#include <string>

#include "onfi_timing_check.h"

namespace nandfast {

namespace {
Nvddr2Timings make_mode(int m) {
    // Sources and assumptions: spec/onfi_timing.py _nvddr2_modes.
    static const double periods[NVDDR2_N_MODES] = {30, 25, 15, 12, 10, 7.5, 6, 5};
    static const double t_ds[NVDDR2_N_MODES] = {4, 3.3, 2.0, 1.1, 0.7, 0.6, 0.55, 0.4};
    double tck = periods[m];
    Nvddr2Timings t;
    t.mode = m;
    t.tRC = t.tDSC = tck;
    t.tCS = 20, t.tCH = 5, t.tCEH = 20, t.tCR = 10, t.tCALS = 15, t.tCALH = 5;
    t.tCAS = 5, t.tCAH = 5, t.tWP = 11, t.tWH = 11, t.tWC = 25, t.tWHR = 80, t.tADL = 400;
    t.tCCS = 400, t.tRR = 20, t.tWB = 100, t.tRHW = 100, t.tWPRE = 15, t.tWPST = 6.5;
    t.tWPSTH = 25, t.tRPRE = 15, t.tRPST = 25 + 0.5 * tck, t.tRPSTH = 15, t.tDQSRE = 25;
    t.tDQSD = 18, t.tDS = t_ds[m], t.tDH = t_ds[m];
    t.tDQSH = t.tDQSL = t.tRP = t.tREH = 0.43 * tck;
    t.tCOH = 0.0;
    return t;
}

struct Table {
    Nvddr2Timings modes[NVDDR2_N_MODES];
    Table() {
        for (int m = 0; m < NVDDR2_N_MODES; m++) modes[m] = make_mode(m);
    }
};
}  // namespace

const Nvddr2Timings &nvddr2_timing(int mode) {
    static const Table table;
    return table.modes[mode];
}

void OnfiChecker::end_read(double t, const char *why) {
    if (!rd_.on) return;
    rd_.on = false;
    const Nvddr2Timings &tm = nvddr2_timing(mode_);
    if (rd_.last_fall < 0 || rd_.last_rise < 0) {
        protocol(t, std::string(why) + " ends a read burst that has no falling data edge");
    } else if (rd_.last_rise > rd_.last_fall) {
        // the last rising edge came too early for a postamble
        violate("tRPST", t, rd_.last_rise - rd_.last_fall, tm.tRPST);
        set(RD_END, rd_.last_rise);
    } else {
        protocol(t, std::string(why) + " during a read burst with RE# low");
    }
}

void OnfiChecker::observe_nvddr2(double t, const Pins &prev, const Pins &pins) {
    const Nvddr2Timings &tm = nvddr2_timing(mode_);
    bool sel = !pins.ce_n, was_sel = !prev.ce_n;
    auto need = [&](const char *param, int since, double required) {
        min_edge(param, t, since, required);
    };

    if (prev.ce_n && !pins.ce_n) set(CE_FALL, t);
    if (was_sel && pins.ce_n) {
        end_read(t, "CE# high");
        if (wr_.on) {
            protocol(t, "CE# high during a write burst");
            wr_.on = false;
        }
        double ce_fall = has_[CE_FALL] ? last_[CE_FALL] : 0;
        if (has_[WE_RISE] && ce_fall <= last_[WE_RISE]) need("tCH", WE_RISE, tm.tCH);
        need("tRPSTH", RD_END, tm.tRPSTH);
    }
    if (!(sel || was_sel)) return;

    // holds after a command/address latch
    if (pins.cle != prev.cle) {
        need("tCALH", WE_RISE, tm.tCALH);
        set(CLE_CHG, t);
    }
    if (pins.ale != prev.ale) {
        need("tCALH", WE_RISE, tm.tCALH);
        set(ALE_CHG, t);
    }
    if (pins.dq != prev.dq) {
        if (prev.dq >= 0) {
            if (wr_.on && wr_.last_edge >= 0)
                min_ns("tDH", t, true, wr_.last_edge, tm.tDH);
            else if (!wr_.on)
                need("tCAH", WE_RISE, tm.tCAH);
        }
        if (pins.dq >= 0) set(DQ_CHG, t);
    }
    if (prev.rb_n == 0 && pins.rb_n == 1) set(RB_RISE, t);
    if (!pins.we_n && !pins.re_n && sel) protocol(t, "WE# and RE# low together");

    // WE# falling: a command or address cycle begins
    if (prev.we_n && !pins.we_n && sel) {
        end_read(t, "WE# low");
        need("tWH", WE_RISE, tm.tWH);
        need("tWC", WE_FALL, tm.tWC);
        if (has_[RE_RISE] && (!has_[WE_RISE] || last_[RE_RISE] > last_[WE_RISE]))
            need("tRHW", RE_RISE, tm.tRHW);
        need("tRPSTH", RD_END, tm.tRPSTH);
        need("tWPSTH", WPST_END, tm.tWPSTH);
        has_[RD_END] = has_[WPST_END] = false;
        if (wr_.on) protocol(t, "WE# low during a write burst");
        set(WE_FALL, t);
    }

    // WE# rising: the die latches a command (CLE) or an address (ALE)
    if (!prev.we_n && pins.we_n && sel) {
        need("tWP", WE_FALL, tm.tWP);
        if (prev.cle) need("tCALS", CLE_CHG, tm.tCALS);
        if (prev.ale) need("tCALS", ALE_CHG, tm.tCALS);
        need("tCS", CE_FALL, tm.tCS);
        if (prev.dq < 0)
            protocol(t, "DQ not driven at WE# rising");
        else
            need("tCAS", DQ_CHG, tm.tCAS);
        if (prev.cle == prev.ale) {
            protocol(t, "WE# latch needs exactly one of CLE and ALE high (NV-DDR2 data goes "
                        "with DQS)");
        } else {
            latch(prev.cle ? 0 : 1, prev.dq >= 0 ? prev.dq : 0, t);
        }
        set(WE_RISE, t);
    }

    // DQS driven by the controller: write preamble, data edges, postamble
    if (pins.dqs != prev.dqs && sel) {
        if (prev.dqs < 0) {                         // driven: the write preamble begins
            end_read(t, "DQS driven");
            if (pins.dqs != 0) protocol(t, "write preamble must drive DQS low");
            if (!pins.re_n) protocol(t, "DQS driven while RE# is low");
            wr_.on = true;
            wr_.start = t;
            wr_.last_edge = wr_.rise = wr_.fall = -1;
            wr_.n = 0;
        } else if (pins.dqs < 0) {                  // released: the write postamble ends
            if (wr_.on && prev.dqs == 0)
                min_ns("tWPST", t, true, wr_.fall >= 0 ? wr_.fall : wr_.start, tm.tWPST);
            else
                protocol(t, "DQS released high (no write postamble)");
            set(WPST_END, t);
            wr_.on = false;
        } else if (wr_.on) {                        // a data edge
            bool rising = pins.dqs == 1;
            if (wr_.n == 0) {
                min_ns("tWPRE", t, true, wr_.start, tm.tWPRE);
                need("tCS", CE_FALL, tm.tCS);
                if (last_kind_ == 1) {
                    need("tADL", ADDR_RISE, tm.tADL);
                    if (ccs_write_) need("tCCS", ADDR_RISE, tm.tCCS);
                }
                ccs_write_ = false;
            } else {
                if (rising)
                    min_ns("tDQSL", t, true, wr_.last_edge, tm.tDQSL);
                else
                    min_ns("tDQSH", t, true, wr_.last_edge, tm.tDQSH);
                min_ns("tDSC", t, true, rising ? wr_.rise : wr_.fall, tm.tDSC);
            }
            if (prev.dq < 0)
                protocol(t, "DQ not driven at a DQS edge");
            else
                need("tDS", DQ_CHG, tm.tDS);
            if (pins.cle || pins.ale) protocol(t, "CLE or ALE high at a DQS edge");
            last_kind_ = 2;
            wr_.n++;
            wr_.last_edge = t;
            (rising ? wr_.rise : wr_.fall) = t;
        }
    }

    // RE#: read preamble, data edges, postamble
    if (pins.re_n != prev.re_n && sel) {
        if (!pins.re_n && !rd_.on) {                // the read preamble begins
            bool first_read =
                !has_[RD_START] || (has_[WE_RISE] && last_[WE_RISE] > last_[RD_START]);
            if (first_read) {
                need("tWHR", WE_RISE, tm.tWHR);
                need("tCCS", E0_RISE, tm.tCCS);
            }
            if (has_[RB_RISE] && last_cmd_ != 0x70 && last_cmd_ != 0x78 &&
                (!has_[RD_START] || last_[RB_RISE] > last_[RD_START]))
                need("tRR", RB_RISE, tm.tRR);
            need("tCR", CE_FALL, tm.tCR);
            need("tRPSTH", RD_END, tm.tRPSTH);
            need("tWPSTH", WPST_END, tm.tWPSTH);
            has_[RD_END] = has_[WPST_END] = false;
            if (pins.cle || pins.ale) protocol(t, "CLE or ALE high at RE# falling");
            if (pins.dqs >= 0) protocol(t, "DQS driven by the controller in a read");
            rd_.on = true;
            rd_.start = t;
            rd_.last_rise = rd_.last_fall = -1;
            set(RD_START, t);
            has_[E0_RISE] = false;
        } else if (pins.re_n && rd_.on) {           // a rising edge: data, or postamble end
            if (rd_.last_fall < 0) {
                min_ns("tRPRE", t, true, rd_.start, tm.tRPRE);
            } else if (t - rd_.last_fall + 1e-3 >= tm.tRPST) {
                // RE# low for the postamble: this edge ends the burst (no data)
                rd_.on = false;
                set(RD_END, t);
            } else {
                min_ns("tRP", t, true, rd_.last_fall, tm.tRP);
                min_ns("tRC", t, true, rd_.last_rise, tm.tRC);
            }
            rd_.last_rise = t;
            set(RE_RISE, t);
        } else if (!pins.re_n && rd_.on) {          // a falling edge: data
            min_ns("tREH", t, true, rd_.last_rise, tm.tREH);
            min_ns("tRC", t, true, rd_.last_fall, tm.tRC);
            rd_.last_fall = t;
        }
    }
}

}  // namespace nandfast
