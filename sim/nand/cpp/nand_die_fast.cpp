// SPDX-License-Identifier: BSD-2-Clause
// NandDieFast, the pin-level target of the fast NAND die model (see nand_die_fast.h): the
// port of OnfiPinTarget; comments name the golden function.
#include "nand_die_fast.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "nand_text.h"

namespace nandfast {

constexpr double WB_FRACTION = 0.5;
// NV-DDR2 data-out: the die's DQS (and DQ) edge follows each RE# edge after this fraction of
// tDQSRE (a maximum); the read preamble drives DQS low after this fraction of tDQSD.
constexpr double DQSRE_FRACTION = 0.6;

NandDieFast::NandDieFast(const DieConfig &cfg, int id, int64_t clk_ps, bool verbose)
    : die(cfg), checker(0, fmt("die%d", id)), die_id(id), clk_ps_(clk_ps), verbose_(verbose),
      garbage_(cfg.seed * 7919 + id + 1) {
    mode = die.timing_mode();
    iface_ = die.data_interface();
    checker.set_timings(iface_ != 0, mode);
    dq_out_ = garbage_.genrand() & 0xFF;
    out_cache_ = (uint32_t)dq_out_ | (1u << 8);
    // SSDLAB_DIE_TRACE=all or =<die id>: one stdout line per command latched and per NV-DDR2
    // data-out burst, for per-page timings of a whole drive (sim/nand/README.md)
    const char *e = std::getenv("SSDLAB_DIE_TRACE");
    trace_ = e && (!std::strcmp(e, "all") ||
                   (std::isdigit((unsigned char)e[0]) && std::atoi(e) == id));
}

void NandDieFast::clear() {
    slc_prefix_ = slc_ = false;
    cmd_ = -1;
    addr_.clear();
    chunks_.clear();
    row_ = -1;
    feat_.clear();
    feat_raw_ = 0;
}

int NandDieFast::power_cut(int64_t now_ps) {
    int torn = die.power_cut(now_ps / 1000.0);
    clear();
    out_ = OUT_NONE;
    out_bytes_.clear();
    out_index_ = 0;
    rd_on_ = false;
    switch_pending_ = false;
    iface_ = die.data_interface();
    mode = die.timing_mode();
    checker.set_timings(iface_ != 0, mode);
    drives_.clear();
    rb_base_ = 1;
    rb_fall_ = rb_rise_ = -1;
    rb_checked_ = INT64_MIN;
    have_prev_ = false;
    last_packed_ = 0xFFFFFFFF;
    next_event_ps_ = INT64_MAX;
    out_cache_ = (uint32_t)dq_out_ | (1u << 8);
    return torn;
}

void NandDieFast::own(double now, const std::string &rule, const std::string &message) {
    own_violations.push_back({now, rule, -1, message});
}

template <class F> void NandDieFast::call(double now, F fn, bool rb) {
    try {
        fn();
    } catch (const RuleError &) {
        // recorded in die.violations; reported by report()
    }
    // SET FEATURES 01h or RESET: the new mode applies once the die is ready (sync())
    if (die.timing_mode() != mode || die.data_interface() != iface_) switch_pending_ = true;
    if (rb) update_rb((int64_t)std::llround(now * 1000));
}

void NandDieFast::sync(int64_t now_ps) {
    if (!switch_pending_ || die.ready_ns() > now_ps / 1000.0) return;
    switch_pending_ = false;
    iface_ = die.data_interface();
    mode = die.timing_mode();
    checker.set_timings(iface_ != 0, mode);
    rd_on_ = false;
    if (verbose_) {
        // not "nand_die_fast[<id>]", which starts a violation line
        printf("nand_die_fast %d: t=%.3f ns: interface %s timing mode %d\n", die_id,
               now_ps / 1000.0, iface_ ? "nvddr2" : "sdr", mode);
        fflush(stdout);
    }
}

// The output timings of the interface and mode the pins run (OnfiPinTarget.t).
double NandDieFast::t_wb() const {
    return iface_ ? nvddr2_timing(mode).tWB : sdr_timing(mode, tWB);
}

double NandDieFast::t_coh() const {
    return iface_ ? nvddr2_timing(mode).tCOH : sdr_timing(mode, tCOH);
}

int NandDieFast::rb_at(int64_t t) const {
    if (rb_rise_ >= 0 && t >= rb_rise_) return 1;
    if (rb_fall_ >= 0 && t >= rb_fall_) return 0;
    return rb_base_;
}

void NandDieFast::update_rb(int64_t now_ps) {
    double now = now_ps / 1000.0;
    double rdy = die.ready_ns();
    if (rdy <= now) return;
    int base = rb_at(now_ps);
    double fall = t_wb() * WB_FRACTION;
    int64_t t0 = now_ps;
    rb_fall_ = -1;
    if (now + fall < rdy) {
        rb_fall_ = now_ps + (int64_t)std::nearbyint(fall * 1000);
        t0 = rb_fall_;
    }
    rb_base_ = base;
    double tn = t0 / 1000.0;
    // a hung LUN (inject_stuck_busy) never raises it: a later RESET's update takes over
    rb_rise_ = std::isinf(rdy) ? INT64_MAX
               : rdy <= tn ? t0
                           : t0 + std::max<int64_t>(1, (int64_t)std::nearbyint((rdy - tn) * 1000));
    next_event_ps_ = std::min({next_event_ps_, rb_fall_ >= 0 ? rb_fall_ : INT64_MAX, rb_rise_});
}

void NandDieFast::drive(int64_t t_ps, double delay_ns, int value, int dqs) {
    int64_t at = t_ps + std::max<int64_t>(1, (int64_t)std::nearbyint(delay_ns * 1000));
    drives_.push_back({at, drive_seq_++, value, dqs});
    next_event_ps_ = std::min(next_event_ps_, at);
}

uint64_t NandDieFast::value(size_t from, size_t to) const {
    uint64_t v = 0;
    for (size_t i = to; i > from; i--) v = (v << 8) | (uint64_t)addr_[i - 1];
    return v;
}

bool NandDieFast::expect_addr(double now, size_t n, const std::string &what) {
    if (addr_.size() != n) {
        own(now, "command-sequence",
            fmt("%s after %zu address cycles, needs %zu", what.c_str(), addr_.size(), n));
        return false;
    }
    return true;
}

void NandDieFast::latch(int64_t now_ps, int kind, int byte) {
    sync(now_ps);
    if (kind == 0) {
        command(now_ps, byte);
        if (trace_)
            std::printf("die_trace %d t=%.3f cmd %02X ready=%.3f\n", die_id, now_ps / 1000.0,
                        byte, std::max(die.ready_ns(), now_ps / 1000.0));
    } else if (kind == 1)
        address(now_ps, byte);
    else
        data_in(now_ps, byte);
    report();
}

void NandDieFast::command(int64_t now_ps, int c) {
    double now = now_ps / 1000.0;
    size_t ncol = die.g.column_cycles, nrow = die.g.row_cycles;
    int cmd = cmd_;
    bool prefix = slc_prefix_, slc = slc_;
    slc_prefix_ = false;
    if (prefix && c != 0x60 && c != 0x80 && c != 0x00)
        own(now, "command-sequence",
            fmt("%02Xh after DAh (SLC mode): DAh must precede 60h, 80h or 00h", c));
    if (c == 0x10 || c == 0x11 || c == 0x15) {
        if ((cmd != 0x80 && cmd != 0x85) || row_ < 0) {
            own(now, "command-sequence", fmt("%02Xh without 80h and its address", c));
        } else {
            finish_85(now);
            auto chunks = chunks_;
            uint64_t row = (uint64_t)row_;
            call(now, [&] { die.program_page(now, row, chunks, c, slc); });
        }
        clear();
        return;
    }
    if (c == 0x30 || c == 0x32 || (c == 0x31 && cmd == 0x00 && !addr_.empty())) {
        if (cmd != 0x00) {
            own(now, "command-sequence", fmt("%02Xh without 00h-address", c));
        } else if (expect_addr(now, ncol + nrow, fmt("%02Xh", c))) {
            uint64_t col = value(0, ncol), row = value(ncol, ncol + nrow);
            if (c == 0x31)
                call(now, [&] { die.read_cache(now, (int64_t)row, slc); });
            else
                call(now, [&] { die.read_page(now, row, (int)col, c, slc); });
            out_ = OUT_ARRAY;
        }
        clear();
        return;
    }
    if (c == 0xD0 || c == 0xD1) {
        if (cmd != 0x60) {
            own(now, "command-sequence", fmt("%02Xh without 60h", c));
        } else if (expect_addr(now, nrow, fmt("%02Xh", c))) {
            uint64_t row = value(0, addr_.size());
            call(now, [&] { die.erase_block(now, row, c, slc); });
        }
        clear();
        return;
    }
    if (c == 0xE0) {
        if (cmd == 0x05 && expect_addr(now, ncol, "05h-E0h")) {
            uint64_t col = value(0, addr_.size());
            call(now, [&] { die.change_read_column(now, (int)col, -1); });
        } else if (cmd == 0x06 && expect_addr(now, ncol + nrow, "06h-E0h")) {
            uint64_t col = value(0, ncol), row = value(ncol, ncol + nrow);
            call(now, [&] { die.change_read_column(now, (int)col, (int64_t)row); });
        } else if (cmd != 0x05 && cmd != 0x06) {
            own(now, "command-sequence", "E0h without 05h/06h");
        }
        out_ = OUT_ARRAY;
        clear();
        return;
    }
    if (c == 0x85) {
        if ((cmd != 0x80 && cmd != 0x85) || row_ < 0) {
            own(now, "command-sequence", "85h outside a program");
            clear();
        } else {
            finish_85(now);
            cmd_ = 0x85;
            addr_.clear();
        }
        return;
    }
    if (cmd >= 0 && !(cmd == 0x00 && addr_.empty() && !slc))
        own(now, "command-sequence",
            fmt("%02Xh while the %02Xh sequence is incomplete", c, cmd));
    clear();
    if (c == 0x60 || c == 0x80 || c == 0x00) slc_ = prefix;
    if (c == 0xDA) {
        slc_prefix_ = true;
    } else if (c == 0xFF) {
        // a RESET supersedes any pending R/B# edge
        rb_base_ = rb_at(now_ps);
        rb_fall_ = rb_rise_ = -1;
        call(now, [&] { die.reset(now); });
        out_ = OUT_NONE;
    } else if (c == 0x70) {
        call(now, [&] { die.read_status(now); });
        out_ = OUT_STATUS;
    } else if (c == 0x00) {
        call(now, [&] { die.read_mode(now); });
        if (out_ == OUT_STATUS) out_ = OUT_ARRAY;
        cmd_ = c;
    } else if (c == 0x31) {
        call(now, [&] { die.read_cache(now, -1); });
        out_ = OUT_ARRAY;
    } else if (c == 0x3F) {
        call(now, [&] { die.read_cache_end(now); });
        out_ = OUT_ARRAY;
    } else if (c == 0x05 || c == 0x06 || c == 0x60 || c == 0x78 || c == 0x80 || c == 0x90 ||
               c == 0xEC || c == 0xEE || c == 0xEF) {
        cmd_ = c;
    } else {
        own(now, "command-sequence", fmt("unknown command %02Xh", c));
    }
}

void NandDieFast::finish_85(double now) {
    if (cmd_ != 0x85) return;
    size_t ncol = die.g.column_cycles, nrow = die.g.row_cycles;
    if (addr_.size() == ncol || addr_.size() == ncol + nrow) {
        if (addr_.size() == ncol + nrow) row_ = (int64_t)value(ncol, ncol + nrow);
        chunks_.push_back({(int)value(0, ncol), Bytes()});
    } else {
        own(now, "command-sequence", fmt("85h with %zu address cycles, needs %zu or %zu",
                                         addr_.size(), ncol, ncol + nrow));
    }
    cmd_ = 0x80;
    addr_.clear();
}

void NandDieFast::address(int64_t now_ps, int a) {
    double now = now_ps / 1000.0;
    size_t ncol = die.g.column_cycles, nrow = die.g.row_cycles;
    int cmd = cmd_;
    size_t limit = 0;
    switch (cmd) {
    case 0x00: case 0x06: case 0x80: case 0x85: limit = ncol + nrow; break;
    case 0x05: limit = ncol; break;
    case 0x60: case 0x78: limit = nrow; break;
    case 0x90: case 0xEC: case 0xEE: case 0xEF: limit = 1; break;
    default: limit = 0;
    }
    if (limit == 0 || addr_.size() >= limit || (cmd == 0x80 && !chunks_.empty())) {
        own(now, "command-sequence",
            fmt("address cycle %02Xh unexpected after %s", a,
                cmd < 0 ? "no command" : fmt("%02Xh", cmd).c_str()));
        clear();
        return;
    }
    addr_.push_back(a);
    if (addr_.size() < limit) return;
    if (cmd == 0x90 || cmd == 0xEC || cmd == 0xEE) {
        Bytes out;
        bool ok = false;
        call(now, [&] {
            if (cmd == 0x90)
                ok = die.read_id(now, a, out);
            else if (cmd == 0xEC)
                ok = die.read_parameter_page(now, a, out);
            else
                ok = die.get_features(now, a, out);
        });
        out_ = OUT_BYTES;
        out_bytes_ = ok ? out : Bytes();
        out_index_ = 0;
    } else if (cmd == 0x78) {
        uint64_t row = value(0, addr_.size());
        call(now, [&] { die.read_status_enhanced(now, row); });
        out_ = OUT_STATUS;
    } else if (cmd == 0x80) {
        row_ = (int64_t)value(ncol, ncol + nrow);
        chunks_.clear();
        chunks_.push_back({(int)value(0, ncol), Bytes()});
    }
    if (cmd == 0x90 || cmd == 0xEC || cmd == 0xEE || cmd == 0x78) clear();
}

void NandDieFast::data_in(int64_t now_ps, int d) {
    double now = now_ps / 1000.0;
    if (cmd_ == 0x85) finish_85(now);
    if (cmd_ == 0x80 && !chunks_.empty()) {
        chunks_.back().second.push_back((uint8_t)d);
    } else if (cmd_ == 0xEF && !addr_.empty()) {
        // NV-DDR2: each parameter byte comes twice (both DQS edges); keep the first and
        // take the feature after the second copy of P4
        bool done;
        if (iface_) {
            if (++feat_raw_ % 2) feat_.push_back((uint8_t)d);
            done = feat_raw_ == 8;
        } else {
            feat_.push_back((uint8_t)d);
            done = feat_.size() == 4;
        }
        if (done) {
            int address = addr_[0];
            Bytes params = feat_;
            call(now, [&] { die.set_features(now, address, params); });
            clear();
        }
    } else {
        own(now, "command-sequence",
            fmt("data input %02Xh after %s", d,
                cmd_ < 0 ? "no command" : fmt("%02Xh", cmd_).c_str()));
    }
}

// One data-output byte. `copies`: how often each READ ID / GET FEATURES byte repeats (SDR 1;
// NV-DDR2 2, one per DQS edge). Status and array data are live on every edge.
int NandDieFast::out_byte(int64_t now_ps, int copies) {
    sync(now_ps);
    double now = now_ps / 1000.0;
    int v = -1;
    if (out_ == OUT_STATUS) {
        v = die.status(now, die.selected_lun);
    } else if (out_ == OUT_ARRAY) {
        Bytes data;
        bool ok = false;
        call(now, [&] { ok = die.read_data(now, 1, data); }, false);
        v = ok && !data.empty() ? data[0] : -1;
    } else if (out_ == OUT_BYTES) {
        if (!die.rb_n(now))
            own(now, "busy", "data output while the target is busy");
        else if (out_index_ / copies < out_bytes_.size())
            v = out_bytes_[out_index_++ / copies];
    }
    report();
    return v;
}

int NandDieFast::data_out(int64_t now_ps) { return out_byte(now_ps, 1); }

int NandDieFast::nvddr2_byte(int64_t now_ps) { return out_byte(now_ps, 2); }

void NandDieFast::set_wp(int64_t now_ps, int wp_n) { die.set_wp_n(now_ps / 1000.0, wp_n); }

void NandDieFast::checker_observe(int64_t t_ps, const Pins &pins) {
    sync(t_ps);
    checker.observe(t_ps / 1000.0, pins);
    report();
}

void NandDieFast::observe(int64_t t_ps, const Pins &pins, int wp_n) {
    sync(t_ps);
    double now = t_ps / 1000.0;
    checker.observe(now, pins);
    if (!have_prev_) {
        have_prev_ = true;
        prev_ = pins;
        prev_wp_ = wp_n;
        die.set_wp_n(now, wp_n);
        return;
    }
    Pins prev = prev_;
    int prev_wp = prev_wp_;
    prev_ = pins;
    prev_wp_ = wp_n;
    if (wp_n != prev_wp) die.set_wp_n(now, wp_n);
    if (prev.ce_n && !pins.ce_n) ce_fall_ps_ = t_ps;
    if (!prev.ce_n && pins.ce_n) {
        // output released tCOH after CE# rises (the bus then floats: garbage)
        drive(t_ps, t_coh(), -1);
        rd_on_ = false;
    }
    if (pins.ce_n && prev.ce_n) return;
    if (iface_) {
        observe_nvddr2(t_ps, prev, pins);
        return;
    }
    if (!prev.we_n && pins.we_n && !prev.ce_n) {
        if (prev.cle && prev.ale)
            own(now, "command-sequence", "CLE and ALE both high at a latch");
        else if (prev.dq >= 0)
            latch(t_ps, prev.cle ? 0 : prev.ale ? 1 : 2, prev.dq);
    }
    if (prev.re_n && !pins.re_n && !pins.ce_n) {
        int v = data_out(t_ps);
        double valid_at = std::max(now + sdr_timing(mode, tREA),
                                   ce_fall_ps_ / 1000.0 + sdr_timing(mode, tCEA));
        drive(t_ps, valid_at - now, v);
    }
    if (!prev.re_n && pins.re_n && !prev.ce_n) drive(t_ps, sdr_timing(mode, tRHOH), -1);
}

// OnfiPinTarget._observe_nvddr2: command/address on WE# rising, data in on every DQS edge,
// data out as preamble, one DQS edge (with its byte) per RE# edge, postamble.
void NandDieFast::observe_nvddr2(int64_t t_ps, const Pins &prev, const Pins &pins) {
    double now = t_ps / 1000.0;
    if (!prev.we_n && pins.we_n && !prev.ce_n) {
        if (prev.cle && prev.ale)
            own(now, "command-sequence", "CLE and ALE both high at a latch");
        else if (prev.dq >= 0 && (prev.cle || prev.ale))
            latch(t_ps, prev.cle ? 0 : 1, prev.dq);
    }
    if (prev.dqs >= 0 && pins.dqs >= 0 && prev.dqs != pins.dqs && !prev.ce_n && prev.dq >= 0)
        latch(t_ps, 2, prev.dq);
    const Nvddr2Timings &t = nvddr2_timing(mode);
    if (pins.re_n != prev.re_n && !pins.ce_n) {
        if (!pins.re_n && !rd_on_) {
            rd_on_ = true;
            rd_last_fall_ = -1;
            rd_start_ = t_ps;
            rd_bytes_ = 0;
            drive(t_ps, t.tDQSD * DQSRE_FRACTION, -1, 0);
        } else if (pins.re_n && rd_on_ && rd_last_fall_ >= 0 &&
                   now - rd_last_fall_ / 1000.0 + 1e-3 >= t.tRPST) {
            rd_on_ = false;     // the postamble's rising edge: no data, DQS stays low
            if (trace_)
                std::printf("die_trace %d t=%.3f burst %d bytes from t=%.3f\n", die_id, now,
                            rd_bytes_, rd_start_ / 1000.0);
        } else if (rd_on_) {
            if (!pins.re_n) rd_last_fall_ = t_ps;
            int v = nvddr2_byte(t_ps);
            rd_bytes_++;
            drive(t_ps, t.tDQSRE * DQSRE_FRACTION, v, pins.re_n);
        }
    }
}

void NandDieFast::report() {
    if (!verbose_ || (printed_rules_ == die.violations.size() &&
                      printed_own_ == own_violations.size() &&
                      printed_timing_ == checker.violations.size()))
        return;
    for (; printed_rules_ < die.violations.size(); printed_rules_++) {
        auto &v = die.violations[printed_rules_];
        printf("nand_die_fast[%d] t=%.3f ns: NAND rule %s\n", die_id, v.time_ns, v.str().c_str());
    }
    for (; printed_own_ < own_violations.size(); printed_own_++) {
        auto &v = own_violations[printed_own_];
        printf("nand_die_fast[%d] t=%.3f ns: NAND rule %s\n", die_id, v.time_ns, v.str().c_str());
    }
    for (; printed_timing_ < checker.violations.size(); printed_timing_++) {
        auto &v = checker.violations[printed_timing_];
        printf("nand_die_fast[%d] t=%.3f ns: timing %s\n", die_id, v.t_ns, v.message.c_str());
    }
    fflush(stdout);
}

uint32_t NandDieFast::eval(int64_t now_ps, uint32_t packed) {
    int64_t half = clk_ps_ / 2;
    int64_t edge = now_ps - half, next = now_ps + half;
    if (packed == last_packed_ && next < next_event_ps_) return out_cache_;
    bool changed = packed != last_packed_;
    // R/B# edges before this clock edge: snapshots of their own for the checker
    int64_t limit = changed ? edge - 1 : edge;
    for (int64_t te : {rb_fall_, rb_rise_}) {
        if (te >= 0 && te > rb_checked_ && te <= limit && have_prev_) {
            Pins p = prev_;
            p.rb_n = rb_at(te);
            checker.observe(te / 1000.0, p);
        }
    }
    rb_checked_ = std::max(rb_checked_, limit);
    if (changed) {
        last_packed_ = packed;
        Pins p;
        p.ce_n = packed & 1;
        p.cle = (packed >> 1) & 1;
        p.ale = (packed >> 2) & 1;
        p.we_n = (packed >> 3) & 1;
        p.re_n = (packed >> 4) & 1;
        int wp = (packed >> 5) & 1;
        p.dq = (packed >> 14) & 1 ? (int)((packed >> 6) & 0xFF) : -1;
        p.dqs = (packed >> 16) & 1 ? (int)((packed >> 15) & 1) : -1;
        p.rb_n = rb_at(edge);
        observe(edge, p, wp);
        rb_checked_ = edge;
    }
    // DQ drives due by the next posedge, in time order
    if (!drives_.empty()) {
        std::sort(drives_.begin(), drives_.end(), [](const Drive &a, const Drive &b) {
            return a.t != b.t ? a.t < b.t : a.seq < b.seq;
        });
        size_t i = 0;
        for (; i < drives_.size() && drives_[i].t <= next; i++) {
            dq_out_ = drives_[i].value >= 0 ? drives_[i].value : (int)(garbage_.genrand() & 0xFF);
            if (drives_[i].dqs >= 0) dqs_out_ = drives_[i].dqs;
        }
        drives_.erase(drives_.begin(), drives_.begin() + (long)i);
    }
    next_event_ps_ = drives_.empty() ? INT64_MAX : drives_.front().t;
    for (int64_t te : {rb_fall_, rb_rise_})
        if (te >= 0 && te > rb_checked_) next_event_ps_ = std::min(next_event_ps_, te);
    out_cache_ = (uint32_t)dq_out_ | ((uint32_t)rb_at(next) << 8) | ((uint32_t)dqs_out_ << 9);
    report();
    return out_cache_;
}

}  // namespace nandfast
