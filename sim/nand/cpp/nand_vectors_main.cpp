// SPDX-License-Identifier: BSD-2-Clause
// Replays NAND vector files (sim/nand/vectors/*.vec, format in
// sim/nand/python/nand_vectors.py) against the fast model NandDieFast through the byte-level
// entry points the DPI front end uses (latch, data_out, the timing checker). Exits non-zero
// naming the first mismatch: file, line, expected, got.
//
//   g++ -std=c++17 -O2 -o build/nand_vectors sim/nand/cpp/nand_vectors_main.cpp
//       sim/nand/cpp/nand_{random,part,die_core,die_fast}.cpp
//       sim/nand/cpp/onfi_{timing,nvddr2}_check.cpp
//       && build/nand_vectors sim/nand/vectors/*.vec
// (the model's sources: MODEL_SOURCES in sim/nand/fast_sources.py)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "nand_die_fast.h"

using namespace nandfast;

namespace {

struct Mismatch {
    std::string text;
};

std::vector<std::string> split(const std::string &s) {
    std::istringstream in(s);
    std::vector<std::string> out;
    std::string w;
    while (in >> w) out.push_back(w);
    return out;
}

std::map<std::string, std::string> kv(const std::vector<std::string> &w) {
    std::map<std::string, std::string> m;
    for (size_t i = 1; i < w.size(); i++) {
        auto eq = w[i].find('=');
        if (eq != std::string::npos) m[w[i].substr(0, eq)] = w[i].substr(eq + 1);
    }
    return m;
}

int64_t num(const std::string &v) { return v == "none" ? -1 : std::strtoll(v.c_str(), 0, 0); }

Bytes pattern(uint64_t seed, size_t n) {
    Bytes out(n);
    for (size_t i = 0; i < n; i++) out[i] = (uint8_t)(mix64(((seed & 0xFFFFFFFFULL) << 32) | i));
    return out;
}

std::string hex2(int v) {
    if (v < 0) return "XX (garbage)";
    char b[16];
    snprintf(b, sizeof b, "%02X", v & 0xFF);
    return b;
}

int run_file(const std::string &path) {
    std::ifstream in(path);
    if (!in) throw Mismatch{path + ": cannot open"};
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    auto strip = [](std::string l) {
        auto h = l.find('#');
        if (h != std::string::npos) l = l.substr(0, h);
        return l;
    };
    DieConfig cfg;
    double cycle_ns = 25;
    size_t body = 0;
    bool magic = false;
    for (size_t i = 0; i < lines.size(); i++) {
        auto w = split(strip(lines[i]));
        if (w.empty()) continue;
        if (w[0] == "BEGIN") {
            body = i + 1;
            break;
        }
        auto m = kv(w);
        if (w[0] == "NANDVEC") magic = w.size() > 1 && w[1] == "1";
        if (w[0] == "CYCLE_NS") cycle_ns = std::strtod(w[1].c_str(), 0);
        if (w[0] == "GEOMETRY") {
            Geometry &g = cfg.geometry;
            g.page_bytes = (int)num(m["page_bytes"]);
            g.spare_bytes = (int)num(m["spare_bytes"]);
            g.pages_per_block = (int)num(m["pages_per_block"]);
            g.blocks_per_plane = (int)num(m["blocks_per_plane"]);
            g.planes = (int)num(m["planes"]);
            g.luns = (int)num(m["luns"]);
            g.bits_per_cell = (int)num(m["bits_per_cell"]);
        }
        if (w[0] == "TIMING") {
            ArrayTiming &t = cfg.timing;
            t.t_r_ns = num(m["t_r_ns"]);
            t.t_prog_ns = num(m["t_prog_ns"]);
            t.t_bers_ns = num(m["t_bers_ns"]);
            t.t_r_lower_ns = num(m["t_r_lower_ns"]);
            t.t_r_upper_ns = num(m["t_r_upper_ns"]);
            t.t_prog_lower_ns = num(m["t_prog_lower_ns"]);
            t.t_prog_upper_ns = num(m["t_prog_upper_ns"]);
            t.t_cbsy_ns = num(m["t_cbsy_ns"]);
            t.t_rcbsy_ns = num(m["t_rcbsy_ns"]);
            t.t_dbsy_ns = num(m["t_dbsy_ns"]);
            t.t_feat_ns = num(m["t_feat_ns"]);
            t.t_rst_ns = num(m["t_rst_ns"]);
            t.t_rst_prog_ns = num(m["t_rst_prog_ns"]);
            t.t_rst_erase_ns = num(m["t_rst_erase_ns"]);
            t.t_rst_first_ns = num(m["t_rst_first_ns"]);
            t.t_r_middle_ns = num(m["t_r_middle_ns"]);
            t.t_prog_middle_ns = num(m["t_prog_middle_ns"]);
            t.t_r_typ_ns = num(m["t_r_typ_ns"]);
            t.t_r_lower_typ_ns = num(m["t_r_lower_typ_ns"]);
            t.t_r_middle_typ_ns = num(m["t_r_middle_typ_ns"]);
            t.t_r_upper_typ_ns = num(m["t_r_upper_typ_ns"]);
            t.t_prog_typ_ns = num(m["t_prog_typ_ns"]);
            t.t_prog_lower_typ_ns = num(m["t_prog_lower_typ_ns"]);
            t.t_prog_middle_typ_ns = num(m["t_prog_middle_typ_ns"]);
            t.t_prog_upper_typ_ns = num(m["t_prog_upper_typ_ns"]);
            t.typical = num(m["typical"]) != 0;
            t.t_r_slc_ns = num(m["t_r_slc_ns"]);
            t.t_prog_slc_ns = num(m["t_prog_slc_ns"]);
            t.t_r_slc_typ_ns = num(m["t_r_slc_typ_ns"]);
            t.t_prog_slc_typ_ns = num(m["t_prog_slc_typ_ns"]);
        }
        if (w[0] == "IDENT") {
            cfg.id_bytes.clear();
            const std::string &h = m["id_bytes"];
            for (size_t k = 0; k + 1 < h.size(); k += 2)
                cfg.id_bytes.push_back((uint8_t)std::strtol(h.substr(k, 2).c_str(), 0, 16));
            cfg.manufacturer = m["manufacturer"];
            cfg.model = m["model"];
            cfg.jedec_id = (int)num(m["jedec_id"]);
            cfg.pe_cycles = (int)num(m["pe_cycles"]);
            cfg.ecc_bits = (int)num(m["ecc_bits"]);
            cfg.sdr_modes = (int)num(m["sdr_modes"]);
            cfg.max_bad_blocks = (int)num(m["max_bad_blocks"]);
        }
        if (w[0] == "DIE") {
            cfg.seed = num(m["seed"]);
            cfg.strict = num(m["strict"]) != 0;
            cfg.factory_bad_block_rate = std::strtod(m["factory_bad_block_rate"].c_str(), 0);
            cfg.pe_limit = m["pe_limit"] == "none" ? 0 : num(m["pe_limit"]);
            cfg.rber_base = std::strtod(m["rber_base"].c_str(), 0);
            cfg.rber_per_kcycle = std::strtod(m["rber_per_kcycle"].c_str(), 0);
            cfg.rber_exponent = std::strtod(m["rber_exponent"].c_str(), 0);
            cfg.retention_shift = std::strtod(m["retention_shift"].c_str(), 0);
            cfg.rber_shift = std::strtod(m["rber_shift"].c_str(), 0);
            cfg.rber_per_kread = std::strtod(m["rber_per_kread"].c_str(), 0);
            cfg.retry_levels = (int)num(m["retry_levels"]);
            cfg.factory_erased = num(m["factory_erased"]) != 0;
            cfg.require_reset = num(m["require_reset"]) != 0;
            cfg.param_page_copies = (int)num(m["param_page_copies"]);
        }
    }
    if (!magic || body == 0) throw Mismatch{path + ": not a NANDVEC 1 file"};
    std::string err = cfg.validate();
    if (!err.empty()) throw Mismatch{path + ": header: " + err};

    NandDieFast m(cfg, 0, 10000, false);
    int64_t cycle_ps = (int64_t)std::nearbyint(cycle_ns * 1000);
    int64_t now_ps = 0;
    double last_latch_ns = 0;
    size_t seen_d = 0, seen_o = 0, seen_t = 0;
    std::deque<std::pair<std::string, std::string>> pend_rules, pend_timing;
    int checks = 0;
    size_t lineno = 0;
    auto fail = [&](const std::string &expected, const std::string &got) {
        throw Mismatch{path + ":" + std::to_string(lineno) + ": expected " + expected +
                       ", got " + got};
    };
    auto latch = [&](int kind, int byte) {
        m.latch(now_ps, kind, byte);
        last_latch_ns = now_ps / 1000.0;
        now_ps += cycle_ps;
    };
    auto dout = [&]() {
        // one data-out cycle: an RE# falling edge in SDR, one DQS edge in NV-DDR2
        m.sync(now_ps);
        int v = m.iface() ? m.nvddr2_byte(now_ps) : m.data_out(now_ps);
        now_ps += cycle_ps;
        return v;
    };
    for (size_t i = body; i < lines.size(); i++) {
        lineno = i + 1;
        auto w = split(strip(lines[i]));
        if (w.empty()) continue;
        const std::string &key = w[0];
        if (key == "RULE" || key == "TIMING") {
            checks++;
            auto &pend = key == "RULE" ? pend_rules : pend_timing;
            std::string what = key == "RULE" ? "NAND rule " : "timing violation ";
            if (pend.empty()) fail(what + w[1], "no violation");
            auto got = pend.front();
            pend.pop_front();
            if (got.first != w[1]) fail(what + w[1], got.first + " (" + got.second + ")");
            continue;
        }
        if (!pend_rules.empty())
            fail("no unclaimed NAND rule violation", pend_rules.front().second);
        if (!pend_timing.empty())
            fail("no unclaimed timing violation", pend_timing.front().second);
        m.sync(now_ps);
        if (key == "CMD" || key == "ADDR" || (key == "DIN" && w[1] != "PAT")) {
            int kind = key == "CMD" ? 0 : key == "ADDR" ? 1 : 2;
            for (size_t k = 1; k < w.size(); k++)
                latch(kind, (int)std::strtol(w[k].c_str(), 0, 16));
        } else if (key == "DIN") {
            for (uint8_t b : pattern(std::strtoull(w[2].c_str(), 0, 10), std::stoul(w[3])))
                latch(2, b);
        } else if (key == "DOUT") {
            checks++;
            if (w[1] == "CRC") {
                size_t n = std::stoul(w[2]);
                uint32_t want = (uint32_t)std::strtoul(w[3].c_str(), 0, 16);
                Bytes got(n);
                for (size_t k = 0; k < n; k++) {
                    int v = dout();
                    if (v < 0) fail(std::to_string(n) + " valid bytes",
                                    "garbage at byte " + std::to_string(k));
                    got[k] = (uint8_t)v;
                }
                uint32_t c = crc32(got.data(), n);
                char b[64];
                snprintf(b, sizeof b, "CRC %08x", want);
                std::string e = b;
                snprintf(b, sizeof b, "CRC %08x", c);
                if (c != want) fail(e, b);
            } else {
                std::vector<int> want;
                if (w[1] == "PAT") {
                    for (uint8_t b : pattern(std::strtoull(w[2].c_str(), 0, 10),
                                             std::stoul(w[3])))
                        want.push_back(b);
                } else {
                    for (size_t k = 1; k < w.size(); k++)
                        want.push_back(w[k] == "XX" || w[k] == "xx"
                                           ? -1
                                           : (int)std::strtol(w[k].c_str(), 0, 16));
                }
                for (size_t k = 0; k < want.size(); k++) {
                    int v = dout();
                    if (v != want[k])
                        fail("byte " + std::to_string(k) + " = " + hex2(want[k]), hex2(v));
                }
            }
        } else if (key == "WAIT_RB") {
            checks++;
            double ready = m.die.ready_ns();
            double busy = ready > now_ps / 1000.0 ? std::max(0.0, ready - last_latch_ns) : 0.0;
            int64_t fs = (int64_t)std::nearbyint(ready * 1e6);
            now_ps = std::max(now_ps, (fs + 999) / 1000);
            double want = std::strtod(w[1].c_str(), 0);
            if (std::fabs(busy - want) > 1e-3) {
                char b[64];
                snprintf(b, sizeof b, "busy %.3f ns", busy);
                fail("busy " + w[1] + " ns", b);
            }
        } else if (key == "ADVANCE") {
            now_ps += (int64_t)std::nearbyint(std::strtod(w[1].c_str(), 0) * 1000);
        } else if (key == "RB") {
            checks++;
            int got = m.die.rb_n(now_ps / 1000.0);
            if (got != std::stoi(w[1])) fail("R/B# " + w[1], std::to_string(got));
        } else if (key == "MODE") {
            checks++;
            if (m.mode != std::stoi(w[1])) fail("timing mode " + w[1], std::to_string(m.mode));
            std::string iface = m.iface() ? "nvddr2" : "sdr";
            if (w.size() > 2 && w[2] != iface) fail("interface " + w[2], iface);
        } else if (key == "STATS") {
            checks++;
            for (auto &p : kv(w)) {
                int64_t got = m.die.stats.count(p.first) ? m.die.stats[p.first] : 0;
                if (got != std::stoll(p.second))
                    fail(p.first + "=" + p.second, p.first + "=" + std::to_string(got));
            }
        } else if (key == "WEAR") {
            m.die.luns[std::stoi(w[1])].block(std::stoi(w[2])).erase_count = std::stoll(w[3]);
        } else if (key == "DISTURB") {
            m.die.luns[std::stoi(w[1])].block(std::stoi(w[2])).reads = std::stoll(w[3]);
        } else if (key == "BAKE") {
            m.die.bake(std::strtod(w[1].c_str(), 0));
        } else if (key == "DIE_FAIL") {
            m.die.inject_die_failure(std::stoi(w[1]));
        } else if (key == "BITERR") {
            m.die.inject_bit_errors(std::stoi(w[1]), std::strtod(w[2].c_str(), 0));
        } else if (key == "PRECYCLE") {
            m.die.precycle(std::stoll(w[1]));
        } else if (key == "BAD") {
            m.die.inject_bad_block(std::stoi(w[1]), std::stoi(w[2]));
        } else if (key == "STUCK") {
            m.die.inject_stuck_busy(std::stoi(w[1]), std::stoi(w[2]) != 0);
        } else if (key == "WP") {
            m.set_wp(now_ps, std::stoi(w[1]));
        } else if (key == "POWER_CUT") {
            m.power_cut(now_ps);
        } else if (key == "PINS") {
            double t = std::strtod(w[1].c_str(), 0);
            int64_t t_ps = (int64_t)std::nearbyint(t * 1000);
            now_ps = std::max(now_ps, t_ps);
            Pins p;
            p.ce_n = std::stoi(w[2]);
            p.cle = std::stoi(w[3]);
            p.ale = std::stoi(w[4]);
            p.we_n = std::stoi(w[5]);
            p.re_n = std::stoi(w[6]);
            p.dq = w[7] == "--" ? -1 : (int)std::strtol(w[7].c_str(), 0, 16);
            p.rb_n = std::stoi(w[8]);
            if (w.size() > 9) p.dqs = w[9] == "--" ? -1 : std::stoi(w[9]);
            m.checker_observe(t_ps, p);
        } else {
            fail("a known line", "'" + key + "'");
        }
        for (; seen_d < m.die.violations.size(); seen_d++)
            pend_rules.push_back({m.die.violations[seen_d].rule, m.die.violations[seen_d].str()});
        for (; seen_o < m.own_violations.size(); seen_o++)
            pend_rules.push_back({m.own_violations[seen_o].rule, m.own_violations[seen_o].str()});
        for (; seen_t < m.checker.violations.size(); seen_t++)
            pend_timing.push_back({m.checker.violations[seen_t].param,
                                   m.checker.violations[seen_t].message});
    }
    lineno = lines.size();
    if (!pend_rules.empty())
        fail("no unclaimed NAND rule violation at the end", pend_rules.front().second);
    if (!pend_timing.empty())
        fail("no unclaimed timing violation at the end", pend_timing.front().second);
    return checks;
}

}  // namespace

// --bench N CYCLES: N default-part dies (one 1 TB-class target each costs nothing until
// written) evaluated CYCLES clocks at 100 MHz as the DPI module does, pins idle except a
// READ STATUS poll on die 0 every 64 clocks; prints evaluations per second.
static int bench(int n, long cycles) {
    DieConfig cfg;
    cfg.require_reset = false;
    std::string err = cfg.validate();
    if (!err.empty()) return fprintf(stderr, "%s\n", err.c_str()), 2;
    std::vector<std::unique_ptr<NandDieFast>> dies;
    for (int i = 0; i < n; i++) dies.emplace_back(new NandDieFast(cfg, i, 10000, true));
    const uint32_t idle = 1 | (1 << 3) | (1 << 4) | (1 << 5);   // CE#, WE#, RE#, WP# high
    // READ STATUS (70h, one data-out cycle) on die 0, mode 0 timing at 10 ns per clock:
    // CE# low at 0, CLE + DQ 70h at 0, WE# low 2..6, rises at 7, CLE/DQ released at 9,
    // RE# low 19..23 (tWHR 120 ns, tRP 50 ns), CE# high at 26.
    auto poll = [idle](long k) -> uint32_t {
        if (k >= 27) return idle;
        uint32_t p = idle & ~1u;
        if (k < 9) p |= 2 | (0x70u << 6) | (1u << 14);
        if (k >= 2 && k < 7) p &= ~(1u << 3);
        if (k >= 19 && k < 24) p &= ~(1u << 4);
        if (k == 26) p |= 1;
        return p;
    };
    auto t0 = std::chrono::steady_clock::now();
    uint64_t sink = 0;
    for (long c = 0; c < cycles; c++) {
        int64_t now_ps = c * 10000 + 5000;
        for (int i = 0; i < n; i++) {
            uint32_t pins = idle;
            if (i == 0) pins = poll(c & 63);
            sink += dies[i]->eval(now_ps, pins);
        }
    }
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("bench: %d dies x %ld cycles in %.3f s: %.3g die-evaluations/s, %.3g cycles/s "
           "(all dies); violations %zu/%zu (checksum %llu)\n", n, cycles, s,
           n * (double)cycles / s, cycles / s, dies[0]->rule_count(), dies[0]->timing_count(),
           (unsigned long long)(sink & 0xFFFF));
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 4 && std::string(argv[1]) == "--bench")
        return bench(std::atoi(argv[2]), std::atol(argv[3]));
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE.vec... | --bench N_DIES CYCLES\n", argv[0]);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        try {
            int n = run_file(argv[i]);
            printf("%s: %d checks pass\n", argv[i], n);
        } catch (const Mismatch &e) {
            printf("FAIL %s\n", e.text.c_str());
            return 1;
        }
    }
    return 0;
}
