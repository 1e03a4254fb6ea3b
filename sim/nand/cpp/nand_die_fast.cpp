// SPDX-License-Identifier: BSD-2-Clause
// Fast NAND die model: the C++ port of the golden model (see nand_die_fast.h). Every method
// follows its Python counterpart line by line; comments name the golden function.
#include "nand_die_fast.h"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>

namespace nandfast {

// --- Python's random.Random -----------------------------------------------------------

void PyRandom::init_genrand(uint32_t s) {
    mt_[0] = s;
    for (mti_ = 1; mti_ < 624; mti_++)
        mt_[mti_] = 1812433253U * (mt_[mti_ - 1] ^ (mt_[mti_ - 1] >> 30)) + (uint32_t)mti_;
}

void PyRandom::seed_int(int64_t seed) {
    // random.seed(int): init_by_array over the 32-bit words of abs(seed), LSW first.
    uint64_t a = seed < 0 ? (uint64_t)(-(seed + 1)) + 1 : (uint64_t)seed;
    uint32_t key[2];
    size_t klen = 0;
    if (a == 0) {
        key[klen++] = 0;
    } else {
        while (a) {
            key[klen++] = (uint32_t)a;
            a >>= 32;
        }
    }
    init_genrand(19650218U);
    size_t i = 1, j = 0;
    for (size_t k = std::max<size_t>(624, klen); k; k--) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525U)) + key[j] +
                 (uint32_t)j;
        i++;
        j++;
        if (i >= 624) {
            mt_[0] = mt_[623];
            i = 1;
        }
        if (j >= klen) j = 0;
    }
    for (size_t k = 623; k; k--) {
        mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= 624) {
            mt_[0] = mt_[623];
            i = 1;
        }
    }
    mt_[0] = 0x80000000U;
    mti_ = 624;
}

uint32_t PyRandom::genrand() {
    static const uint32_t mag01[2] = {0, 0x9908b0dfU};
    uint32_t y;
    if (mti_ >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (mt_[kk] & 0x80000000U) | (mt_[kk + 1] & 0x7fffffffU);
            mt_[kk] = mt_[kk + 397] ^ (y >> 1) ^ mag01[y & 1];
        }
        for (; kk < 623; kk++) {
            y = (mt_[kk] & 0x80000000U) | (mt_[kk + 1] & 0x7fffffffU);
            mt_[kk] = mt_[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 1];
        }
        y = (mt_[623] & 0x80000000U) | (mt_[0] & 0x7fffffffU);
        mt_[623] = mt_[396] ^ (y >> 1) ^ mag01[y & 1];
        mti_ = 0;
    }
    y = mt_[mti_++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}

double PyRandom::random() {
    uint32_t a = genrand() >> 5, b = genrand() >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

Bytes PyRandom::randbytes(size_t n) {
    // getrandbits(n * 8).to_bytes(n, "little"): 32-bit words LSW first, the last one short.
    Bytes out(n);
    size_t k = n * 8, pos = 0;
    while (k > 0) {
        uint32_t r = genrand();
        size_t bits = k < 32 ? k : 32;
        if (k < 32) r >>= (32 - k);
        for (size_t b = 0; b < bits; b += 8) out[pos++] = (uint8_t)(r >> b);
        k -= bits;
    }
    return out;
}

// --- hashes -----------------------------------------------------------------------------

uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

uint16_t onfi_crc16(const uint8_t *data, size_t n) {
    uint32_t crc = 0x4F4E;
    for (size_t i = 0; i < n; i++) {
        crc ^= (uint32_t)data[i] << 8;
        for (int b = 0; b < 8; b++) crc = (crc & 0x8000) ? ((crc << 1) ^ 0x8005) : crc << 1;
        crc &= 0xFFFF;
    }
    return (uint16_t)crc;
}

uint32_t crc32(const uint8_t *data, size_t n) {
    uint32_t crc = 0xFFFFFFFFU;
    for (size_t i = 0; i < n; i++) {
        crc ^= data[i];
        for (int b = 0; b < 8; b++) crc = (crc >> 1) ^ (0xEDB88320U & (0U - (crc & 1)));
    }
    return ~crc;
}

static std::string fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static std::string fmt(const char *f, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, f);
    vsnprintf(buf, sizeof buf, f, ap);
    va_end(ap);
    return buf;
}

// Python's str() of a float time (repr): shortest round trip, ".0" for integral values.
static std::string pyfloat(double v) {
    char buf[64];
    if (v == std::floor(v) && std::fabs(v) < 1e16) {
        snprintf(buf, sizeof buf, "%.1f", v);
        return buf;
    }
    for (int p = 1; p < 18; p++) {
        snprintf(buf, sizeof buf, "%.*g", p, v);
        if (std::strtod(buf, nullptr) == v) return buf;
    }
    snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// --- geometry and timing ----------------------------------------------------------------

static int bits(int64_t count) {
    int n = 0;
    for (uint64_t v = (uint64_t)(count - 1); v; v >>= 1) n++;
    return n;
}

std::string Geometry::derive() {
    auto bad = [](const char *name, int64_t v, const char *range) {
        return fmt("NandGeometry.%s = %" PRId64 ": must be %s", name, v, range);
    };
    if (page_bytes < 512 || page_bytes > 32768 || (page_bytes & (page_bytes - 1)))
        return bad("page_bytes", page_bytes, "a power of two in 512..32768");
    if (spare_bytes < 0 || spare_bytes > page_bytes / 2)
        return bad("spare_bytes", spare_bytes, "an integer in 0..page_bytes/2");
    if (pages_per_block < 1 || pages_per_block > 4096)
        return bad("pages_per_block", pages_per_block, "an integer in 1..4096");
    if (blocks_per_plane < 1 || blocks_per_plane > (1 << 20))
        return bad("blocks_per_plane", blocks_per_plane, "an integer in 1..1048576");
    if (planes != 1 && planes != 2 && planes != 4 && planes != 8)
        return bad("planes", planes, "one of 1, 2, 4, 8");
    if (luns < 1 || luns > 16) return bad("luns", luns, "an integer in 1..16");
    if (bits_per_cell < 1 || bits_per_cell > 4)
        return bad("bits_per_cell", bits_per_cell, "an integer in 1..4");
    register_bytes = page_bytes + spare_bytes;
    blocks_per_lun = blocks_per_plane * planes;
    page_bits = bits(pages_per_block);
    plane_bits = bits(planes);
    block_bits = bits(blocks_per_lun);
    lun_bits = bits(luns);
    int row_bits = page_bits + block_bits + lun_bits;
    if (row_bits > 40) return fmt("NandGeometry: row address needs %d bits: at most 40", row_bits);
    row_cycles = std::max(1, (row_bits + 7) / 8);
    column_cycles = std::max(1, (bits(register_bytes) + 7) / 8);
    return "";
}

void Geometry::unpack_row(uint64_t row, int64_t &lun, int64_t &block, int64_t &page) const {
    page = (int64_t)(row & ((1ULL << page_bits) - 1));
    block = (int64_t)((row >> page_bits) & ((1ULL << block_bits) - 1));
    lun = (int64_t)(row >> (page_bits + block_bits));
}

std::string Geometry::check_row(uint64_t row) const {
    int64_t lun, block, page;
    unpack_row(row, lun, block, page);
    if (lun >= luns)
        return fmt("row 0x%" PRIx64 ": LUN %" PRId64 " not in 0..%d", row, lun, luns - 1);
    if (block >= blocks_per_lun)
        return fmt("row 0x%" PRIx64 ": block %" PRId64 " not in 0..%d", row, block,
                   blocks_per_lun - 1);
    if (page >= pages_per_block)
        return fmt("row 0x%" PRIx64 ": page %" PRId64 " not in 0..%d", row, page,
                   pages_per_block - 1);
    return "";
}

int64_t ArrayTiming::t_r(int type) const {
    int64_t s = type == 0 ? t_r_lower_ns : type == 1 ? t_r_upper_ns : -1;
    return s < 0 ? t_r_ns : s;
}

int64_t ArrayTiming::t_prog(int type) const {
    int64_t s = type == 0 ? t_prog_lower_ns : type == 1 ? t_prog_upper_ns : -1;
    return s < 0 ? t_prog_ns : s;
}

int64_t ArrayTiming::t_r_max() const {
    return std::max({t_r_ns, t_r_lower_ns, t_r_upper_ns});
}

int64_t ArrayTiming::t_prog_max() const {
    return std::max({t_prog_ns, t_prog_lower_ns, t_prog_upper_ns});
}

std::string DieConfig::validate() {
    std::string e = geometry.derive();
    if (!e.empty()) return e;
    const int64_t NS_MAX = 1000000000;
    struct {
        const char *name;
        int64_t v, lo;
    } ts[] = {{"t_r_ns", timing.t_r_ns, 1}, {"t_prog_ns", timing.t_prog_ns, 1},
              {"t_bers_ns", timing.t_bers_ns, 1}, {"t_cbsy_ns", timing.t_cbsy_ns, 0},
              {"t_rcbsy_ns", timing.t_rcbsy_ns, 0}, {"t_dbsy_ns", timing.t_dbsy_ns, 0},
              {"t_feat_ns", timing.t_feat_ns, 0}, {"t_rst_ns", timing.t_rst_ns, 0},
              {"t_rst_prog_ns", timing.t_rst_prog_ns, 0},
              {"t_rst_erase_ns", timing.t_rst_erase_ns, 0},
              {"t_rst_first_ns", timing.t_rst_first_ns, 0}};
    for (auto &t : ts)
        if (t.v < t.lo || t.v > NS_MAX)
            return fmt("NandArrayTiming.%s = %" PRId64 ": must be an integer in %" PRId64
                       "..1000000000", t.name, t.v, t.lo);
    if (id_bytes.size() < 2 || id_bytes.size() > 8) return "NandPart.id_bytes: must be 2..8 bytes";
    if (manufacturer.size() > 12) return "NandPart.manufacturer: at most 12 characters";
    if (model.size() > 20) return "NandPart.model: at most 20 characters";
    if (!(sdr_modes & 1) || sdr_modes > 0x3F) return "NandPart.sdr_modes: 0x01..0x3F with bit 0";
    if (!(factory_bad_block_rate >= 0 && factory_bad_block_rate <= 0.5))
        return "NandDie.factory_bad_block_rate: must be in 0.0..0.5";
    if (pe_limit < 0 || pe_limit > 10000000)
        return "NandDie.pe_limit: must be 0 (none) or 1..10**7";
    if (!(rber_base >= 0 && rber_base <= 0.01)) return "BitErrorModel.rber_base: 0..0.01";
    if (!(rber_per_kcycle >= 0 && rber_per_kcycle <= 0.01))
        return "BitErrorModel.rber_per_kcycle: 0..0.01";
    if (!(rber_exponent >= 0.5 && rber_exponent <= 4)) return "BitErrorModel.exponent: 0.5..4";
    if (param_page_copies < 3 || param_page_copies > 16)
        return "NandDie.param_page_copies: must be 3..16";
    return "";
}

int DieConfig::bad_blocks_limit() const {
    if (max_bad_blocks >= 0) return max_bad_blocks;
    return std::min(65535, std::max(1, geometry.blocks_per_lun / 50));
}

static void endurance(int cycles, uint8_t &value, uint8_t &exp) {
    int e = 0;
    while (cycles > 255) {
        cycles /= 10;
        e++;
    }
    value = (uint8_t)cycles;
    exp = (uint8_t)e;
}

Bytes onfi_parameter_page(const DieConfig &cfg) {
    const Geometry &g = cfg.geometry;
    const ArrayTiming &t = cfg.timing;
    Bytes p(256, 0);
    auto put = [&p](int off, uint64_t v, int size) {
        for (int i = 0; i < size; i++) p[off + i] = (uint8_t)(v >> (8 * i));
    };
    memcpy(&p[0], "ONFI", 4);
    put(4, 0x7E, 2);
    int features = 0;
    if (g.luns > 1) features |= 1 << 1;
    if (g.planes > 1) features |= (1 << 3) | (1 << 6);
    put(6, features, 2);
    put(8, 0x004F, 2);
    p[14] = (uint8_t)cfg.param_page_copies;
    std::string man = cfg.manufacturer, mod = cfg.model;
    man.resize(12, ' ');
    mod.resize(20, ' ');
    memcpy(&p[32], man.data(), 12);
    memcpy(&p[44], mod.data(), 20);
    p[64] = (uint8_t)cfg.jedec_id;
    put(80, g.page_bytes, 4);
    put(84, g.spare_bytes, 2);
    put(92, g.pages_per_block, 4);
    put(96, g.blocks_per_lun, 4);
    p[100] = (uint8_t)g.luns;
    p[101] = (uint8_t)((g.column_cycles << 4) | g.row_cycles);
    p[102] = (uint8_t)g.bits_per_cell;
    put(103, cfg.bad_blocks_limit(), 2);
    endurance(cfg.pe_cycles, p[105], p[106]);
    p[107] = 1;
    endurance(cfg.pe_cycles, p[108], p[109]);
    p[110] = 1;
    p[112] = (uint8_t)cfg.ecc_bits;
    p[113] = (uint8_t)g.plane_bits;
    p[114] = g.planes > 1 ? 0x06 : 0;
    p[128] = 5;
    put(129, cfg.sdr_modes, 2);
    auto us = [](int64_t ns) { return (uint64_t)((ns + 999) / 1000); };
    put(133, us(t.t_prog_max()), 2);
    put(135, us(t.t_bers_ns), 2);
    put(137, us(t.t_r_max()), 2);
    put(139, 500, 2);
    put(152, us(t.t_r_max()), 2);
    put(254, onfi_crc16(p.data(), 254), 2);
    Bytes out;
    for (int i = 0; i < cfg.param_page_copies; i++) out.insert(out.end(), p.begin(), p.end());
    return out;
}

std::string Violation::str() const {
    std::string where = lun < 0 ? "" : fmt(", LUN %d", lun);
    return rule + ": " + message + " (t=" + pyfloat(time_ns) + " ns" + where + ")";
}

// --- LUN ----------------------------------------------------------------------------

int Lun::status(double now, bool wp_n) const {
    int sr = wp_n ? SR_WP_N : 0;
    if (rdy(now)) sr |= SR_RDY | (fail ? SR_FAIL : 0) | (failc ? SR_FAILC : 0);
    if (ardy(now)) sr |= SR_ARDY;
    return sr;
}

Block &Lun::block(int b) {
    auto it = blocks.find(b);
    if (it != blocks.end()) return it->second;
    Block &blk = blocks[b];
    blk.erased = factory_erased;
    return blk;
}

// --- NandDieCore (NandDie) --------------------------------------------------------------

static const char *KIND[] = {"read", "program", "erase"};

NandDieCore::NandDieCore(const DieConfig &c)
    : cfg(c), g(cfg.geometry), t(cfg.timing), rng(c.seed) {
    luns.resize(g.luns);
    for (int i = 0; i < g.luns; i++) {
        luns[i].index = i;
        luns[i].factory_erased = cfg.factory_erased;
    }
    bad_key = mix64((uint64_t)cfg.seed);
    param_page = onfi_parameter_page(cfg);
}

void NandDieCore::advance(double n) {
    now = n;
    for (auto &lun : luns) {
        while (!lun.events.empty() && lun.events.top().time <= n) {
            auto fn = lun.events.top().fn;
            lun.events.pop();
            fn();
        }
        if (!lun.inflight.empty()) {
            auto &v = lun.inflight;
            v.erase(std::remove_if(v.begin(), v.end(),
                                   [n](const Inflight &op) { return !(op.end > n); }),
                    v.end());
        }
    }
}

void NandDieCore::at(Lun &lun, double time, std::function<void()> fn) {
    seq++;
    lun.events.push(Event{time, seq, std::move(fn)});
}

bool NandDieCore::violate(const std::string &rule, int lun, const std::string &message) {
    Violation v{now, rule, lun, message};
    violations.push_back(v);
    if (cfg.strict) throw RuleError{v};
    return false;
}

void NandDieCore::fail_event(const std::string &op) { stats[op + "_fail"] += 1; }

bool NandDieCore::powered(const char *what) {
    if (cfg.require_reset && !reset_seen)
        return violate("reset-after-power-on", -1,
                       std::string(what) + " before the first RESET (FFh)");
    return true;
}

bool NandDieCore::ready(Lun &lun, const std::string &what, CacheMode cache) {
    bool array_ok = lun.ardy(now) || (cache != CACHE_NONE && lun.cache_mode == cache);
    if (lun.rdy(now) && array_ok) return true;
    return violate("busy", lun.index,
                   what + " while busy (RDY until " + pyfloat(lun.busy_until) +
                       " ns, ARDY until " + pyfloat(lun.array_busy_until) + " ns)");
}

bool NandDieCore::target_ready(const char *what) {
    bool all = true;
    for (auto &lun : luns) all = ready(lun, what) && all;
    return all;
}

bool NandDieCore::decode(uint64_t row, const char *what, int64_t &lun, int64_t &block,
                         int64_t &page) {
    std::string msg = g.check_row(row);
    if (!msg.empty()) {
        violate("address-range", -1, std::string(what) + ": " + msg);
        return false;
    }
    g.unpack_row(row, lun, block, page);
    return true;
}

void NandDieCore::busy(Lun &lun, double rdy, double array_ready) {
    lun.busy_until = std::max(lun.busy_until, rdy);
    lun.array_busy_until = std::max({lun.array_busy_until, lun.busy_until,
                                     array_ready < 0 ? rdy : array_ready});
}

void NandDieCore::set_fail(Lun &lun, double time, bool failed, bool cache) {
    Lun *l = &lun;
    at(lun, time, [l, failed, cache]() {
        l->failc = cache ? l->fail : false;
        l->fail = failed;
    });
}

bool NandDieCore::is_factory_bad(int lun, int block) const {
    if (cfg.factory_bad_block_rate <= 0 || (lun == 0 && block == 0)) return false;
    uint64_t h = mix64(bad_key ^ (((uint64_t)lun << 32) | (uint64_t)block));
    // Python compares the int with the float exactly: h < rate * 2**64.
    double limit = std::ceil(cfg.factory_bad_block_rate * 18446744073709551616.0);
    return h < (uint64_t)limit;     // limit <= 2**63: exact
}

void NandDieCore::inject_bad_block(int lun, int block, const std::string &reason) {
    luns[lun].block(block).bad = "grown bad block (" + reason + ")";
}

std::vector<uint64_t> NandDieCore::flip_positions(uint64_t n_bits, double p) {
    std::vector<uint64_t> out;
    if (p <= 0) return out;
    p = std::min(p, 0.5);
    double log_q = std::log1p(-p);
    int64_t pos = -1;
    while (true) {
        pos += (int64_t)(std::log1p(-rng.random()) / log_q) + 1;
        if (pos >= (int64_t)n_bits) return out;
        out.push_back((uint64_t)pos);
    }
}

Bytes NandDieCore::array_read(int lun_i, int block, int page, size_t &nflips) {
    nflips = 0;
    stats["reads"] += 1;
    if (is_factory_bad(lun_i, block)) {
        Bytes img(g.register_bytes, 0xFF);
        if (page == 0 || page == g.pages_per_block - 1) img[g.page_bytes] = 0x00;
        return img;
    }
    auto &blocks = luns[lun_i].blocks;
    auto it = blocks.find(block);
    if (it == blocks.end()) return Bytes(g.register_bytes, 0xFF);
    auto pit = it->second.pages.find(page);
    if (pit == it->second.pages.end()) return Bytes(g.register_bytes, 0xFF);
    const Bytes &data = pit->second;
    double pe = (double)it->second.erase_count;
    double rber = cfg.rber_base + cfg.rber_per_kcycle * std::pow(pe / 1000, cfg.rber_exponent);
    auto flips = flip_positions(8 * data.size(), rber);
    if (flips.empty()) return data;
    Bytes img = data;
    for (uint64_t bit : flips) img[bit >> 3] ^= (uint8_t)(1 << (bit & 7));
    stats["bit_errors"] += (int64_t)flips.size();
    nflips = flips.size();
    return img;
}

double NandDieCore::reset(double n) {
    advance(n);
    double rdy = n;
    for (auto &lun : luns) {
        int64_t busy_for = t.t_rst_ns;
        for (auto &op : lun.inflight) {
            if (op.program) {
                busy_for = std::max(busy_for, t.t_rst_prog_ns);
                for (auto &bp : op.items) {
                    lun.block(bp.first).pages[bp.second] = rng.randbytes(g.register_bytes);
                    fail_event("program");
                }
            } else {
                busy_for = std::max(busy_for, t.t_rst_erase_ns);
                for (auto &bp : op.items) {
                    lun.block(bp.first).erased = false;
                    fail_event("erase");
                }
            }
        }
        if (!reset_seen) busy_for = std::max(busy_for, t.t_rst_first_ns);
        while (!lun.events.empty()) lun.events.pop();
        lun.inflight.clear();
        lun.mp_queue.clear();
        lun.cache_mode = CACHE_NONE;
        lun.last_read_row = -1;
        lun.data_reg_valid = false;
        lun.fail = lun.failc = false;
        lun.column = 0;
        lun.busy_until = lun.array_busy_until = n + (double)busy_for;
        rdy = std::max(rdy, lun.busy_until);
    }
    features.erase(1);
    reset_seen = true;
    selected_lun = 0;
    output_status = false;
    stats["resets"] += 1;
    return rdy;
}

bool NandDieCore::read_id(double n, int address, Bytes &out) {
    advance(n);
    if (!powered("READ ID") || !target_ready("READ ID")) return false;
    if (address == 0x00) {
        out = cfg.id_bytes;
        return true;
    }
    if (address == 0x20) {
        out = {'O', 'N', 'F', 'I'};
        return true;
    }
    violate("address-range", -1, fmt("READ ID address 0x%02x: 00h or 20h", address));
    return false;
}

bool NandDieCore::read_parameter_page(double n, int address, Bytes &out) {
    advance(n);
    if (!powered("READ PARAMETER PAGE") || !target_ready("READ PARAMETER PAGE")) return false;
    if (address != 0) {
        violate("address-range", -1,
                fmt("READ PARAMETER PAGE address 0x%02x: only 00h (ONFI)", address));
        return false;
    }
    for (auto &lun : luns) busy(lun, n + (double)t.t_r_ns);
    output_status = false;
    out = param_page;
    return true;
}

int NandDieCore::timing_mode() const {
    auto it = features.find(1);
    return it == features.end() ? 0 : it->second[0] & 0x0F;
}

int NandDieCore::data_interface() const {
    auto it = features.find(1);
    return it != features.end() && ((it->second[0] >> 4) & 3) == 2 ? 2 : 0;
}

bool NandDieCore::set_features(double n, int address, const Bytes &params) {
    advance(n);
    if (!powered("SET FEATURES") || !target_ready("SET FEATURES")) return false;
    if (params.size() != 4 || address < 0 || address > 0xFF) {
        violate("address-range", -1,
                fmt("SET FEATURES 0x%02x with %zu bytes: needs 4", address, params.size()));
        return false;
    }
    if (address == 1) {
        int m = params[0] & 0x0F, iface = (params[0] >> 4) & 3;
        if (iface == 2 && m <= 7) {
            // NV-DDR2 timing mode 0..7 (accepted as the golden does; see data_interface)
        } else if (iface != 0 || m > 5 || !((cfg.sdr_modes >> m) & 1)) {
            violate("feature-value", -1,
                    fmt("timing mode feature P1=0x%02x: SDR modes mask 0x%02x or NV-DDR2 "
                        "modes 0..7 supported", params[0], cfg.sdr_modes));
            return false;
        }
    }
    features[address] = params;
    double rdy = n + (double)t.t_feat_ns;
    for (auto &lun : luns) busy(lun, rdy);
    return true;
}

bool NandDieCore::get_features(double n, int address, Bytes &out) {
    advance(n);
    if (!powered("GET FEATURES") || !target_ready("GET FEATURES")) return false;
    for (auto &lun : luns) busy(lun, n + (double)t.t_feat_ns);
    output_status = false;
    auto it = features.find(address);
    out = it == features.end() ? Bytes(4, 0) : it->second;
    return true;
}

void NandDieCore::set_wp_n(double n, bool value) {
    advance(n);
    wp_n = value;
}

int NandDieCore::read_status(double n) {
    advance(n);
    output_status = true;
    return luns[selected_lun].status(n, wp_n);
}

int NandDieCore::read_status_enhanced(double n, uint64_t row) {
    advance(n);
    int64_t lun, block, page;
    g.unpack_row(row, lun, block, page);
    if (!(lun >= 0 && lun < (int64_t)luns.size())) {
        violate("address-range", -1,
                fmt("READ STATUS ENHANCED row %" PRIu64 ": LUN not in 0..%zu", row,
                    luns.size() - 1));
        return -1;
    }
    selected_lun = (int)lun;
    output_status = true;
    return luns[lun].status(n, wp_n);
}

int NandDieCore::status(double n, int lun) {
    advance(n);
    return luns[lun].status(n, wp_n);
}

int NandDieCore::rb_n(double n) {
    advance(n);
    for (auto &lun : luns)
        if (!lun.rdy(n)) return 0;
    return 1;
}

double NandDieCore::ready_ns() const {
    double r = luns[0].busy_until;
    for (auto &lun : luns) r = std::max(r, lun.busy_until);
    return r;
}

void NandDieCore::read_mode(double n) {
    advance(n);
    output_status = false;
}

bool NandDieCore::check_column(Lun &lun, int64_t column, int64_t nbytes) {
    int64_t size = g.register_bytes;
    if (column >= 0 && column < size && column + nbytes <= size) return true;
    return violate("address-range", lun.index,
                   fmt("column %" PRId64 " + %" PRId64 " bytes beyond the page register "
                       "(0..%" PRId64 ")", column, nbytes, size - 1));
}

bool NandDieCore::multi_plane(Lun &lun, int kind, MpEntry entry, bool queue,
                              std::vector<MpEntry> &group) {
    group.clear();
    if (!lun.mp_queue.empty() && lun.mp_queue[0].kind != kind) {
        int first = lun.mp_queue[0].kind;
        lun.mp_queue.clear();
        violate("command-sequence", lun.index,
                fmt("%s confirm while a multi-plane %s is queued", KIND[kind], KIND[first]));
        return false;
    }
    group = lun.mp_queue;
    group.push_back(entry);
    if (group.size() > 1) {
        int64_t l, block, page, block0, page0;
        g.unpack_row(entry.row, l, block, page);
        g.unpack_row(group[0].row, l, block0, page0);
        std::vector<int> planes;
        bool dup = false;
        for (auto &e : group) {
            int64_t b, p;
            g.unpack_row(e.row, l, b, p);
            int pl = g.plane_of((int)b);
            if (std::find(planes.begin(), planes.end(), pl) != planes.end()) dup = true;
            planes.push_back(pl);
        }
        std::string problem;
        if (dup)
            problem = fmt("two addresses on plane %d", g.plane_of((int)block));
        else if (kind != 2 && page != page0)
            problem = fmt("page %" PRId64 " differs from page %" PRId64 " of the first plane",
                          page, page0);
        if (!problem.empty()) {
            lun.mp_queue.clear();
            violate("multi-plane", lun.index,
                    std::string("multi-plane ") + KIND[kind] + ": " + problem);
            return false;
        }
    }
    if (queue) {
        lun.mp_queue.push_back(entry);
        group.clear();
        return true;
    }
    lun.mp_queue.clear();
    return true;
}

OpResult NandDieCore::read_page(double n, uint64_t row, int column, int confirm) {
    advance(n);
    OpResult r;
    if (!powered("READ PAGE")) return r;
    int64_t li, block, page;
    if (!decode(row, "READ PAGE", li, block, page)) return r;
    Lun &lun = luns[li];
    if (!ready(lun, "READ PAGE") || !check_column(lun, column, 0)) return r;
    std::vector<MpEntry> group;
    if (!multi_plane(lun, 0, MpEntry{0, row, {}, column}, confirm == 0x32, group)) return r;
    selected_lun = lun.index;
    output_status = false;
    lun.cache_mode = CACHE_NONE;
    r.valid = true;
    if (confirm == 0x32) {
        busy(lun, n + (double)t.t_dbsy_ns);
        r.ready = lun.busy_until;
        r.array_ready = lun.array_busy_until;
        return r;
    }
    auto loads = std::make_shared<std::vector<std::pair<int, Bytes>>>();
    int64_t t_r = 0;
    for (auto &e : group) {
        int64_t l, b, p;
        g.unpack_row(e.row, l, b, p);
        size_t nf;
        Bytes data = array_read(lun.index, (int)b, (int)p, nf);
        loads->push_back({g.plane_of((int)b), std::move(data)});
        t_r = std::max(t_r, t.t_r(g.page_type((int)p)));
    }
    double end = n + (double)t_r;
    Lun *lp = &lun;
    at(lun, end, [lp, loads, column]() {
        for (auto &ld : *loads) lp->registers[ld.first] = ld.second;
        lp->data_reg_valid = true;
        lp->data_reg_plane = loads->back().first;
        lp->data_reg = loads->back().second;
        lp->out_plane = loads->back().first;
        lp->column = column;
    });
    busy(lun, end);
    lun.last_read_row = (int64_t)row;
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    return r;
}

OpResult NandDieCore::read_cache(double n, int64_t row) {
    advance(n);
    OpResult r;
    if (!powered("READ CACHE")) return r;
    Lun &lun = luns[selected_lun];
    if (row >= 0) {
        int64_t l, b, p;
        if (!decode((uint64_t)row, "READ CACHE RANDOM", l, b, p)) return r;
        if (l != lun.index) {
            violate("command-sequence", (int)l,
                    fmt("READ CACHE RANDOM to LUN %" PRId64 ": the read was on LUN %d", l,
                        lun.index));
            return r;
        }
    }
    if (lun.last_read_row < 0) {
        violate("command-sequence", lun.index,
                "READ CACHE (31h) without a preceding READ PAGE (00h-30h)");
        return r;
    }
    if (!ready(lun, "READ CACHE", CACHE_READ)) return r;
    if (row < 0) {
        int64_t l, b, p;
        g.unpack_row((uint64_t)lun.last_read_row, l, b, p);
        if (p + 1 >= g.pages_per_block) {
            violate("address-range", lun.index,
                    fmt("READ CACHE SEQUENTIAL past the last page of block %" PRId64, b));
            return r;
        }
        row = (int64_t)g.pack_row((int)l, (int)b, (int)p + 1);
    }
    int64_t l, block, page;
    g.unpack_row((uint64_t)row, l, block, page);
    double start = std::max(n, lun.array_busy_until);
    size_t nf;
    Bytes data = array_read(lun.index, (int)block, (int)page, nf);
    int plane = g.plane_of((int)block);
    Lun *lp = &lun;
    auto img = std::make_shared<Bytes>(std::move(data));
    at(lun, start, [lp, plane, img]() {
        if (lp->data_reg_valid) {
            lp->registers[lp->data_reg_plane] = lp->data_reg;
            lp->out_plane = lp->data_reg_plane;
            lp->column = 0;
        }
        lp->data_reg_valid = true;
        lp->data_reg_plane = plane;
        lp->data_reg = *img;
    });
    lun.busy_until = start + (double)t.t_rcbsy_ns;
    lun.array_busy_until =
        std::max(lun.busy_until, start + (double)t.t_r(g.page_type((int)page)));
    lun.cache_mode = CACHE_READ;
    lun.last_read_row = row;
    output_status = false;
    r.valid = true;
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    return r;
}

OpResult NandDieCore::read_cache_end(double n) {
    advance(n);
    OpResult r;
    if (!powered("READ CACHE END")) return r;
    Lun &lun = luns[selected_lun];
    if (lun.cache_mode != CACHE_READ) {
        violate("command-sequence", lun.index, "READ CACHE END (3Fh) without READ CACHE (31h)");
        return r;
    }
    if (!ready(lun, "READ CACHE END", CACHE_READ)) return r;
    double start = std::max(n, lun.array_busy_until);
    Lun *lp = &lun;
    at(lun, start, [lp]() {
        if (lp->data_reg_valid) {
            lp->registers[lp->data_reg_plane] = lp->data_reg;
            lp->out_plane = lp->data_reg_plane;
            lp->column = 0;
        }
    });
    lun.busy_until = lun.array_busy_until = start + (double)t.t_rcbsy_ns;
    lun.cache_mode = CACHE_NONE;
    lun.last_read_row = -1;
    output_status = false;
    r.valid = true;
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    return r;
}

bool NandDieCore::change_read_column(double n, int column, int64_t row) {
    advance(n);
    if (!powered("CHANGE READ COLUMN")) return false;
    Lun *lun = &luns[selected_lun];
    int plane = lun->out_plane;
    if (row >= 0) {
        int64_t l, b, p;
        if (!decode((uint64_t)row, "CHANGE READ COLUMN ENHANCED", l, b, p)) return false;
        lun = &luns[l];
        plane = g.plane_of((int)b);
    }
    if (!ready(*lun, "CHANGE READ COLUMN", CACHE_READ)) return false;
    if (!check_column(*lun, column, 0)) return false;
    selected_lun = lun->index;
    lun->out_plane = plane;
    lun->column = column;
    output_status = false;
    return true;
}

bool NandDieCore::read_data(double n, int nbytes, Bytes &out) {
    advance(n);
    Lun &lun = luns[selected_lun];
    if (output_status) {
        violate("data-output-after-status", lun.index,
                "data output after READ STATUS without 00h");
        return false;
    }
    if (!ready(lun, "data output", CACHE_READ)) return false;
    if (!check_column(lun, lun.column, nbytes)) return false;
    auto it = lun.registers.find(lun.out_plane);
    out.resize(nbytes);
    for (int i = 0; i < nbytes; i++)
        out[i] = it == lun.registers.end() ? 0xFF : it->second[lun.column + i];
    lun.column += nbytes;
    return true;
}

std::string NandDieCore::program_allowed(Lun &lun, int block, int page) {
    Block &b = lun.block(block);
    if (!wp_n) return "write protect";
    if (is_factory_bad(lun.index, block)) return "factory bad block";
    if (!b.bad.empty()) return b.bad;
    std::string rule, msg;
    if (!b.erased) {
        rule = "erase-before-program";
        msg = fmt("block %d is not erased", block);
    } else if (page < b.next_page) {
        rule = "page-reprogram";
        msg = fmt("block %d page %d is already programmed", block, page);
    } else if (page > b.next_page) {
        rule = "page-order";
        msg = fmt("block %d page %d programmed before page %d", block, page, b.next_page);
    }
    if (rule.empty()) return "";
    violate(rule, lun.index, msg);
    return rule;
}

OpResult NandDieCore::program_page(double n, uint64_t row,
                                   const std::vector<std::pair<int, Bytes>> &chunks,
                                   int confirm) {
    advance(n);
    OpResult r;
    if (!powered("PROGRAM PAGE")) return r;
    int64_t li, ablock, apage;
    if (!decode(row, "PROGRAM PAGE", li, ablock, apage)) return r;
    Lun &lun = luns[li];
    if (!ready(lun, "PROGRAM PAGE", CACHE_PROGRAM)) return r;
    Bytes img(g.register_bytes, 0xFF);
    for (auto &ch : chunks) {
        if (!check_column(lun, ch.first, (int64_t)ch.second.size())) return r;
        std::copy(ch.second.begin(), ch.second.end(), img.begin() + ch.first);
    }
    std::vector<MpEntry> group;
    if (!multi_plane(lun, 1, MpEntry{1, row, img, 0}, confirm == 0x11, group)) return r;
    selected_lun = lun.index;
    lun.registers[g.plane_of((int)ablock)] = img;
    r.valid = true;
    if (confirm == 0x11) {
        busy(lun, n + (double)t.t_dbsy_ns);
        r.ready = lun.busy_until;
        r.array_ready = lun.array_busy_until;
        return r;
    }
    struct Plane {
        int block, page;
        const Bytes *image;
        std::string reason;
    };
    std::vector<Plane> planes;
    for (auto &e : group) {
        int64_t l, b, p;
        g.unpack_row(e.row, l, b, p);
        std::string reason = program_allowed(lun, (int)b, (int)p);
        planes.push_back({(int)b, (int)p, &e.image, reason});
    }
    bool failed = false;
    Inflight inf{0, true, {}};
    int64_t t_prog = 0;
    for (auto &pl : planes) t_prog = std::max(t_prog, t.t_prog(g.page_type(pl.page)));
    for (auto &pl : planes) {
        if (!pl.reason.empty()) {
            failed = true;
            fail_event("program");
            continue;
        }
        Block &b = lun.block(pl.block);
        b.pages[pl.page] = *pl.image;
        b.next_page = pl.page + 1;
        inf.items.push_back({pl.block, pl.page});
        stats["programs"] += 1;
    }
    lun.last_read_row = -1;
    double start = std::max(n, lun.array_busy_until);
    double end = start + (double)t_prog;
    inf.end = end;
    lun.inflight.push_back(inf);
    set_fail(lun, end, failed, confirm == 0x15 || lun.cache_mode == CACHE_PROGRAM);
    if (confirm == 0x15) {
        lun.busy_until = start + (double)t.t_cbsy_ns;
        lun.array_busy_until = std::max(lun.busy_until, end);
        lun.cache_mode = CACHE_PROGRAM;
    } else {
        lun.busy_until = lun.array_busy_until = end;
        lun.cache_mode = CACHE_NONE;
    }
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    r.ok = !failed;
    return r;
}

OpResult NandDieCore::erase_block(double n, uint64_t row, int confirm) {
    advance(n);
    OpResult r;
    if (!powered("ERASE BLOCK")) return r;
    int64_t li, ablock, apage;
    if (!decode(row, "ERASE BLOCK", li, ablock, apage)) return r;
    Lun &lun = luns[li];
    if (!ready(lun, "ERASE BLOCK")) return r;
    std::vector<MpEntry> group;
    if (!multi_plane(lun, 2, MpEntry{2, row, {}, 0}, confirm == 0xD1, group)) return r;
    selected_lun = lun.index;
    lun.cache_mode = CACHE_NONE;
    lun.last_read_row = -1;
    r.valid = true;
    if (confirm == 0xD1) {
        busy(lun, n + (double)t.t_dbsy_ns);
        r.ready = lun.busy_until;
        r.array_ready = lun.array_busy_until;
        return r;
    }
    bool failed = false;
    Inflight inf{0, false, {}};
    for (auto &e : group) {
        int64_t l, blk, p;
        g.unpack_row(e.row, l, blk, p);
        Block &b = lun.block((int)blk);
        std::string reason;
        if (!wp_n) {
            reason = "write protect";
        } else if (is_factory_bad(lun.index, (int)blk)) {
            reason = "factory bad block";
        } else if (!b.bad.empty()) {
            reason = b.bad;
        } else {
            b.erase_count += 1;
            stats["erases"] += 1;
            if (cfg.pe_limit > 0 && b.erase_count > cfg.pe_limit) {
                reason = b.bad = fmt("grown bad block (P/E limit %" PRId64 ")", cfg.pe_limit);
                b.erased = false;
            }
        }
        if (!reason.empty()) {
            failed = true;
            fail_event("erase");
            continue;
        }
        b.pages.clear();
        b.next_page = 0;
        b.erased = true;
        inf.items.push_back({(int)blk, -1});
    }
    double end = n + (double)t.t_bers_ns;
    inf.end = end;
    lun.inflight.push_back(inf);
    set_fail(lun, end, failed, false);
    busy(lun, end);
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    r.ok = !failed;
    return r;
}

// --- SDR timing (onfi_timing.py) ------------------------------------------------------

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

void SdrChecker::violate(const std::string &param, double t_ns, double measured,
                         double required, const std::string &what) {
    std::string w = what.empty()
                        ? fmt("%s violated: %.1f ns < %g ns", param.c_str(), measured, required)
                        : what;
    violations.push_back({param, t_ns, fmt("%s: %s (at %.1f ns)", name_.c_str(), w.c_str(),
                                           t_ns)});
}

void SdrChecker::min(int param, double t_ns, int since, double required) {
    if (!has_[since]) return;
    if (required < 0) required = SDR_TABLE[param][mode_];
    double measured = t_ns - last_[since];
    if (measured + 1e-3 < required)
        violate(SDR_PARAM_NAMES[param], t_ns, measured, required);
}

void SdrChecker::observe(double t, const Pins &pins) {
    Pins prev = prev_;
    prev_ = pins;
    if (!have_prev_) {
        have_prev_ = true;
        return;
    }
    auto protocol = [&](const char *what) {
        violate("protocol", t, NAN, NAN, std::string("protocol: ") + what);
    };
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
        } else if (kind == 1) {
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
        if (has_[RB_RISE] && last_cmd_ != 0x70 && last_cmd_ != 0x78 &&
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

// --- NandDieFast (OnfiPinTarget) --------------------------------------------------------

constexpr double WB_FRACTION = 0.5;

NandDieFast::NandDieFast(const DieConfig &cfg, int id, int64_t clk_ps, bool verbose)
    : die(cfg), checker(0, fmt("die%d", id)), die_id(id), clk_ps_(clk_ps), verbose_(verbose),
      garbage_(cfg.seed * 7919 + id + 1) {
    mode = die.timing_mode();
    checker.set_mode(mode);
    dq_out_ = garbage_.genrand() & 0xFF;
    out_cache_ = (uint32_t)dq_out_ | (1u << 8);
}

void NandDieFast::clear() {
    cmd_ = -1;
    addr_.clear();
    chunks_.clear();
    row_ = -1;
    feat_.clear();
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
    if (iface_ != 0 && !nvddr2_warned_ && verbose_) {
        nvddr2_warned_ = true;
        printf("nand_die_fast[%d] t=%.3f ns: NV-DDR2 selected: not modelled by nand_die_fast, "
               "the pins keep SDR timing mode %d\n", die_id, now_ps / 1000.0, std::min(mode, 5));
    }
    checker.set_mode(std::min(mode, 5));
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
    double fall = sdr_timing(std::min(mode, 5), tWB) * WB_FRACTION;
    int64_t t0 = now_ps;
    rb_fall_ = -1;
    if (now + fall < rdy) {
        rb_fall_ = now_ps + (int64_t)std::nearbyint(fall * 1000);
        t0 = rb_fall_;
    }
    rb_base_ = base;
    double tn = t0 / 1000.0;
    rb_rise_ = rdy <= tn ? t0
                         : t0 + std::max<int64_t>(1, (int64_t)std::nearbyint((rdy - tn) * 1000));
    next_event_ps_ = std::min({next_event_ps_, rb_fall_ >= 0 ? rb_fall_ : INT64_MAX, rb_rise_});
}

void NandDieFast::drive(int64_t t_ps, double delay_ns, int value) {
    int64_t at = t_ps + std::max<int64_t>(1, (int64_t)std::nearbyint(delay_ns * 1000));
    drives_.push_back({at, drive_seq_++, value});
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
    if (kind == 0)
        command(now_ps, byte);
    else if (kind == 1)
        address(now_ps, byte);
    else
        data_in(now_ps, byte);
    report();
}

void NandDieFast::command(int64_t now_ps, int c) {
    double now = now_ps / 1000.0;
    size_t ncol = die.g.column_cycles, nrow = die.g.row_cycles;
    int cmd = cmd_;
    if (c == 0x10 || c == 0x11 || c == 0x15) {
        if ((cmd != 0x80 && cmd != 0x85) || row_ < 0) {
            own(now, "command-sequence", fmt("%02Xh without 80h and its address", c));
        } else {
            finish_85(now);
            auto chunks = chunks_;
            uint64_t row = (uint64_t)row_;
            call(now, [&] { die.program_page(now, row, chunks, c); });
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
                call(now, [&] { die.read_cache(now, (int64_t)row); });
            else
                call(now, [&] { die.read_page(now, row, (int)col, c); });
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
            call(now, [&] { die.erase_block(now, row, c); });
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
    if (cmd >= 0 && !(cmd == 0x00 && addr_.empty()))
        own(now, "command-sequence",
            fmt("%02Xh while the %02Xh sequence is incomplete", c, cmd));
    clear();
    if (c == 0xFF) {
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
        feat_.push_back((uint8_t)d);
        if (feat_.size() == 4) {
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

int NandDieFast::data_out(int64_t now_ps) {
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
        else if (out_index_ < out_bytes_.size())
            v = out_bytes_[out_index_++];
    }
    report();
    return v;
}

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
    if (!prev.ce_n && pins.ce_n) drive(t_ps, sdr_timing(std::min(mode, 5), tCOH), -1);
    if (pins.ce_n && prev.ce_n) return;
    if (!prev.we_n && pins.we_n && !prev.ce_n) {
        if (prev.cle && prev.ale)
            own(now, "command-sequence", "CLE and ALE both high at a latch");
        else if (prev.dq >= 0)
            latch(t_ps, prev.cle ? 0 : prev.ale ? 1 : 2, prev.dq);
    }
    if (prev.re_n && !pins.re_n && !pins.ce_n) {
        int v = data_out(t_ps);
        double valid_at = std::max(now + sdr_timing(std::min(mode, 5), tREA),
                                   ce_fall_ps_ / 1000.0 + sdr_timing(std::min(mode, 5), tCEA));
        drive(t_ps, valid_at - now, v);
    }
    if (!prev.re_n && pins.re_n && !prev.ce_n)
        drive(t_ps, sdr_timing(std::min(mode, 5), tRHOH), -1);
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
        for (; i < drives_.size() && drives_[i].t <= next; i++)
            dq_out_ = drives_[i].value >= 0 ? drives_[i].value : (int)(garbage_.genrand() & 0xFF);
        drives_.erase(drives_.begin(), drives_.begin() + (long)i);
    }
    next_event_ps_ = drives_.empty() ? INT64_MAX : drives_.front().t;
    for (int64_t te : {rb_fall_, rb_rise_})
        if (te >= 0 && te > rb_checked_) next_event_ps_ = std::min(next_event_ps_, te);
    out_cache_ = (uint32_t)dq_out_ | ((uint32_t)rb_at(next) << 8);
    report();
    return out_cache_;
}

}  // namespace nandfast
