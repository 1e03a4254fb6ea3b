// SPDX-License-Identifier: BSD-2-Clause
// NandDieCore (see nand_die_core.h): every method follows its NandDie counterpart line by
// line; comments name the golden function.
#include "nand_die_core.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>

#include "nand_hash.h"
#include "nand_text.h"

namespace nandfast {

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
    weak_key = mix64((uint64_t)cfg.seed ^ 0x5745414BULL);
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

// _slc_check: an slc-mode violation (recorded, not thrown: the command goes on) when the
// mode of a read or program does not match its block's.
bool NandDieCore::slc_check(int lun, int block, int page, bool slc, const char *what,
                            std::vector<Violation> &found) {
    if (g.bits_per_cell == 1) return false;
    auto &blocks = luns[lun].blocks;
    auto it = blocks.find(block);
    bool block_slc = it != blocks.end() && it->second.slc;
    std::string msg;
    if (slc && !block_slc)
        msg = fmt("SLC-mode (DAh) %s of block %d page %d: a native block", what, block, page);
    else if (!slc && block_slc)
        msg = fmt("%s of block %d page %d without DAh: an SLC block", what, block, page);
    else if (slc && page >= g.slc_pages_per_block())
        msg = fmt("SLC-mode (DAh) %s of block %d page %d: past its SLC pages (0..%d)", what,
                  block, page, g.slc_pages_per_block() - 1);
    else
        return false;
    Violation v{now, "slc-mode", lun, msg};
    violations.push_back(v);
    found.push_back(v);
    return true;
}

void NandDieCore::raise_late(const std::vector<Violation> &found) {
    if (!found.empty() && cfg.strict) throw RuleError{found[0]};
}

int64_t NandDieCore::t_r_of(int page, bool slc) const {
    return t.t_r(slc ? SLC_TYPE : g.page_type(page));
}

int64_t NandDieCore::t_prog_of(int page, bool slc) const {
    return t.t_prog(slc ? SLC_TYPE : g.page_type(page));
}

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

std::vector<uint64_t> NandDieCore::flip_positions(uint64_t n_bits, double p, PyRandom &r) {
    std::vector<uint64_t> out;
    if (p <= 0) return out;
    p = std::min(p, 0.5);
    double log_q = std::log1p(-p);
    int64_t pos = -1;
    while (true) {
        pos += (int64_t)(std::log1p(-r.random()) / log_q) + 1;
        if (pos >= (int64_t)n_bits) return out;
        out.push_back((uint64_t)pos);
    }
}

Bytes NandDieCore::array_read(int lun_i, int block, int page, size_t &nflips) {
    nflips = 0;
    stats["reads"] += 1;
    if (luns[lun_i].dead) {             // a failed die: noise, whatever the page held
        Bytes img(g.register_bytes, 0xFF);
        auto bit = luns[lun_i].blocks.find(block);
        if (bit != luns[lun_i].blocks.end()) {
            auto pit = bit->second.pages.find(page);
            if (pit != bit->second.pages.end()) img = pit->second;
        }
        stats["bits_read"] += 8 * (int64_t)img.size();
        auto flips = flip_positions(8 * img.size(), 0.5, rng);
        for (uint64_t f : flips) img[f >> 3] ^= (uint8_t)(1 << (f & 7));
        stats["bit_errors"] += (int64_t)flips.size();
        nflips = flips.size();
        return img;
    }
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
    Block &b = it->second;
    auto wit = b.written.find(page);
    std::pair<double, double> born = wit == b.written.end()
        ? std::make_pair(now, baked_h) : wit->second;
    // spec/nand_errors.age_hours: bake hours plus whole seconds of simulated time
    double seconds = std::floor((now - born.first) / 1e9);
    double age_h = (baked_h - born.second) + seconds / 3600;
    auto fit = features.find(0x89);     // read retry level (RETRY_FEATURE)
    int level = fit == features.end() ? 0 : fit->second[0];
    double pe = (double)(b.erase_count + precycled);
    double wear = cfg.wear_rber(pe);
    double rber = cfg.read_rber(pe, age_h, (double)b.reads, level) + luns[lun_i].fault_rber;
    b.reads += 1;
    uint64_t n = 8 * data.size();
    stats["bits_read"] += (int64_t)n;
    // the page's weak cells (the same bits on every read of this program of the page), then
    // this read's own errors (NandDie._array_read)
    std::vector<uint64_t> weak;
    if (wear > 0) {
        uint64_t h = mix64(weak_key ^ ((uint64_t)lun_i << 48 | (uint64_t)block << 24 |
                                       (uint64_t)page));
        PyRandom wr((int64_t)(mix64(h ^ (uint64_t)b.erase_count) >> 1));
        weak = flip_positions(n, wear, wr);
    }
    auto flips = flip_positions(n, rber, rng);
    if (!weak.empty()) {
        std::vector<uint64_t> all;
        std::set_union(weak.begin(), weak.end(), flips.begin(), flips.end(),
                       std::back_inserter(all));
        flips.swap(all);
    }
    if (flips.empty()) return data;
    Bytes img = data;
    for (uint64_t bit : flips) img[bit >> 3] ^= (uint8_t)(1 << (bit & 7));
    stats["bit_errors"] += (int64_t)flips.size();
    nflips = flips.size();
    return img;
}

// _tear: abort the LUN's array operations in flight (an aborted program leaves seeded random
// contents, an aborted erase a block needing another erase); returns 1 (a program) | 2 (an
// erase) for what was aborted.
int NandDieCore::tear(Lun &lun) {
    int kinds = 0;
    for (auto &op : lun.inflight) {
        if (op.program) {
            kinds |= 1;
            for (auto &bp : op.items) {
                Block &b = lun.block(bp.first);
                b.pages[bp.second] = rng.randbytes(g.register_bytes);
                b.written[bp.second] = {now, baked_h};
                fail_event("program");
            }
        } else {
            kinds |= 2;
            for (auto &bp : op.items) {
                lun.block(bp.first).erased = false;
                fail_event("erase");
            }
        }
    }
    return kinds;
}

// power_cut: the supply drops at `now` and comes back. In-flight array operations are torn
// as RESET tears them; registers, queued planes, cache mode, FAIL bits, features and pending
// events are lost; the die needs its first RESET again. The array stays (non-volatile).
// Returns the pages and blocks torn.
int NandDieCore::power_cut(double n) {
    advance(n);
    int torn = 0;
    for (auto &lun : luns) {
        for (auto &op : lun.inflight) torn += (int)op.items.size();
        tear(lun);
        while (!lun.events.empty()) lun.events.pop();
        lun.inflight.clear();
        lun.mp_queue.clear();
        lun.cache_mode = CACHE_NONE;
        lun.last_read_row = -1;
        lun.last_read_slc = false;
        lun.registers.clear();
        lun.data_reg_valid = false;
        lun.data_reg.clear();
        lun.data_reg_plane = 0;
        lun.fail = lun.failc = false;
        lun.column = lun.out_plane = 0;
        lun.busy_until = lun.array_busy_until = n;
        // a transient hang ends with the power; one for good hangs again at the next busy
        if (lun.stuck == 1) lun.stuck = 0;
        lun.stuck_at = n;
    }
    features.clear();
    reset_seen = false;
    selected_lun = 0;
    output_status = false;
    stats["power_cuts"] += 1;
    return torn;
}

double NandDieCore::reset(double n) {
    advance(n);
    double rdy = n;
    for (auto &lun : luns) {
        int64_t busy_for = t.t_rst_ns;
        int kinds = tear(lun);
        if (kinds & 1) busy_for = std::max(busy_for, t.t_rst_prog_ns);
        if (kinds & 2) busy_for = std::max(busy_for, t.t_rst_erase_ns);
        if (!reset_seen) busy_for = std::max(busy_for, t.t_rst_first_ns);
        while (!lun.events.empty()) lun.events.pop();
        lun.inflight.clear();
        lun.mp_queue.clear();
        lun.cache_mode = CACHE_NONE;
        lun.last_read_row = -1;
        lun.data_reg_valid = false;
        lun.fail = lun.failc = false;
        lun.column = 0;
        if (lun.stuck == 1) lun.stuck = 0;     // a transient hang: the RESET brings it back
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
    } else if (address == 0x89 && params[0] >= cfg.retry_levels) {
        violate("feature-value", -1,
                fmt("read retry feature P1=%d: levels 0..%d supported", params[0],
                    cfg.retry_levels - 1));
        return false;
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
    for (auto &lun : luns)
        r = std::max(r, lun.hung() ? std::numeric_limits<double>::infinity() : lun.busy_until);
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

OpResult NandDieCore::read_page(double n, uint64_t row, int column, int confirm, bool slc) {
    advance(n);
    slc = slc && g.bits_per_cell > 1;
    OpResult r;
    if (!powered("READ PAGE")) return r;
    int64_t li, block, page;
    if (!decode(row, "READ PAGE", li, block, page)) return r;
    Lun &lun = luns[li];
    if (!ready(lun, "READ PAGE") || !check_column(lun, column, 0)) return r;
    std::vector<MpEntry> group;
    if (!multi_plane(lun, 0, MpEntry{0, row, {}, column, slc}, confirm == 0x32, group))
        return r;
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
    std::vector<Violation> found;
    for (auto &e : group) {
        int64_t l, b, p;
        g.unpack_row(e.row, l, b, p);
        slc_check(lun.index, (int)b, (int)p, e.slc, "read", found);
        size_t nf;
        Bytes data = array_read(lun.index, (int)b, (int)p, nf);
        loads->push_back({g.plane_of((int)b), std::move(data)});
        t_r = std::max(t_r, t_r_of((int)p, e.slc));
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
    lun.last_read_slc = slc;
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    raise_late(found);
    return r;
}

OpResult NandDieCore::read_cache(double n, int64_t row, bool slc) {
    advance(n);
    slc = slc && g.bits_per_cell > 1;
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
        slc = lun.last_read_slc;
    }
    int64_t l, block, page;
    g.unpack_row((uint64_t)row, l, block, page);
    std::vector<Violation> found;
    slc_check(lun.index, (int)block, (int)page, slc, "read", found);
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
    lun.array_busy_until = std::max(lun.busy_until, start + (double)t_r_of((int)page, slc));
    lun.cache_mode = CACHE_READ;
    lun.last_read_row = row;
    lun.last_read_slc = slc;
    output_status = false;
    r.valid = true;
    r.ready = lun.busy_until;
    r.array_ready = lun.array_busy_until;
    raise_late(found);
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
    if (lun.dead) return "die failed";
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
                                   int confirm, bool slc) {
    advance(n);
    slc = slc && g.bits_per_cell > 1;
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
    if (!multi_plane(lun, 1, MpEntry{1, row, img, 0, slc}, confirm == 0x11, group)) return r;
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
        bool slc;
    };
    std::vector<Plane> planes;
    std::vector<Violation> found;
    for (auto &e : group) {
        int64_t l, b, p;
        g.unpack_row(e.row, l, b, p);
        std::string reason = program_allowed(lun, (int)b, (int)p);
        if (reason.empty() && slc_check(lun.index, (int)b, (int)p, e.slc, "program", found))
            reason = "slc-mode";
        planes.push_back({(int)b, (int)p, &e.image, reason, e.slc});
    }
    bool failed = false;
    Inflight inf{0, true, {}};
    int64_t t_prog = 0;
    for (auto &pl : planes) t_prog = std::max(t_prog, t_prog_of(pl.page, pl.slc));
    for (auto &pl : planes) {
        if (!pl.reason.empty()) {
            failed = true;
            fail_event("program");
            continue;
        }
        Block &b = lun.block(pl.block);
        b.pages[pl.page] = *pl.image;
        b.written[pl.page] = {n, baked_h};
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
    raise_late(found);
    return r;
}

OpResult NandDieCore::erase_block(double n, uint64_t row, int confirm, bool slc) {
    advance(n);
    slc = slc && g.bits_per_cell > 1;
    OpResult r;
    if (!powered("ERASE BLOCK")) return r;
    int64_t li, ablock, apage;
    if (!decode(row, "ERASE BLOCK", li, ablock, apage)) return r;
    Lun &lun = luns[li];
    if (!ready(lun, "ERASE BLOCK")) return r;
    std::vector<MpEntry> group;
    if (!multi_plane(lun, 2, MpEntry{2, row, {}, 0, slc}, confirm == 0xD1, group)) return r;
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
        } else if (lun.dead) {
            reason = "die failed";
        } else if (is_factory_bad(lun.index, (int)blk)) {
            reason = "factory bad block";
        } else if (!b.bad.empty()) {
            reason = b.bad;
        } else {
            b.erase_count += 1;
            stats["erases"] += 1;
            if (cfg.pe_limit > 0 && b.erase_count + precycled > cfg.pe_limit) {
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
        b.written.clear();
        b.reads = 0;
        b.next_page = 0;
        b.erased = true;
        b.slc = e.slc;
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

}  // namespace nandfast
