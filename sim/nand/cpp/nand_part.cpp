// SPDX-License-Identifier: BSD-2-Clause
// Geometry and timing of the fast NAND die model (see nand_part.h): the golden
// NandGeometry / NandArrayTiming / NandPart checks and onfi_param_page's page, line by line.
#include "nand_part.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstring>

#include "nand_hash.h"
#include "nand_text.h"

namespace nandfast {

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

// Per page type values (type: 0 lower, 1 middle, 2 upper, 3 top, 4 SLC mode): the type's
// own field, else the uniform one; typical falls back to the maximum (NandArrayTiming).
static int64_t pick(int type, int64_t lower, int64_t middle, int64_t upper, int64_t slc,
                    int64_t all) {
    int64_t s = type == 0 ? lower : type == 1 ? middle : type == 2 ? upper
                                  : type == SLC_TYPE ? slc : -1;
    return s < 0 ? all : s;
}

int64_t ArrayTiming::t_r_max_of(int type) const {
    return pick(type, t_r_lower_ns, t_r_middle_ns, t_r_upper_ns, t_r_slc_ns, t_r_ns);
}

int64_t ArrayTiming::t_prog_max_of(int type) const {
    return pick(type, t_prog_lower_ns, t_prog_middle_ns, t_prog_upper_ns, t_prog_slc_ns,
                t_prog_ns);
}

int64_t ArrayTiming::t_r_typ_of(int type) const {
    return pick(type, t_r_lower_typ_ns, t_r_middle_typ_ns, t_r_upper_typ_ns, t_r_slc_typ_ns,
                t_r_typ_ns);
}

int64_t ArrayTiming::t_prog_typ_of(int type) const {
    return pick(type, t_prog_lower_typ_ns, t_prog_middle_typ_ns, t_prog_upper_typ_ns,
                t_prog_slc_typ_ns, t_prog_typ_ns);
}

int64_t ArrayTiming::t_r(int type) const {
    int64_t typ = typical ? t_r_typ_of(type) : -1;
    return typ < 0 ? t_r_max_of(type) : typ;
}

int64_t ArrayTiming::t_prog(int type) const {
    int64_t typ = typical ? t_prog_typ_of(type) : -1;
    return typ < 0 ? t_prog_max_of(type) : typ;
}

int64_t ArrayTiming::t_r_max() const {
    return std::max({t_r_ns, t_r_lower_ns, t_r_middle_ns, t_r_upper_ns});
}

int64_t ArrayTiming::t_prog_max() const {
    return std::max({t_prog_ns, t_prog_lower_ns, t_prog_middle_ns, t_prog_upper_ns});
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
    const ArrayTiming &a = timing;
    struct {
        const char *name;
        int64_t v;
    } opt[] = {{"t_r_lower_ns", a.t_r_lower_ns}, {"t_r_middle_ns", a.t_r_middle_ns},
               {"t_r_upper_ns", a.t_r_upper_ns}, {"t_prog_lower_ns", a.t_prog_lower_ns},
               {"t_prog_middle_ns", a.t_prog_middle_ns}, {"t_prog_upper_ns", a.t_prog_upper_ns},
               {"t_r_typ_ns", a.t_r_typ_ns}, {"t_r_lower_typ_ns", a.t_r_lower_typ_ns},
               {"t_r_middle_typ_ns", a.t_r_middle_typ_ns},
               {"t_r_upper_typ_ns", a.t_r_upper_typ_ns}, {"t_prog_typ_ns", a.t_prog_typ_ns},
               {"t_prog_lower_typ_ns", a.t_prog_lower_typ_ns},
               {"t_prog_middle_typ_ns", a.t_prog_middle_typ_ns},
               {"t_prog_upper_typ_ns", a.t_prog_upper_typ_ns}, {"t_r_slc_ns", a.t_r_slc_ns},
               {"t_prog_slc_ns", a.t_prog_slc_ns}, {"t_r_slc_typ_ns", a.t_r_slc_typ_ns},
               {"t_prog_slc_typ_ns", a.t_prog_slc_typ_ns}};
    for (auto &t : opt)     // -1: not set (None)
        if (t.v != -1 && (t.v < 1 || t.v > NS_MAX))
            return fmt("NandArrayTiming.%s = %" PRId64 ": must be none or an integer in "
                       "1..1000000000", t.name, t.v);
    static const char *const TYPES[] = {"lower", "middle", "upper", "top", "slc"};
    for (int k = 0; k <= SLC_TYPE; k++) {
        if (a.t_r_typ_of(k) > a.t_r_max_of(k))
            return fmt("NandArrayTiming: typical t_r of %s pages = %" PRId64 " ns: must be at "
                       "most its maximum, %" PRId64 " ns", TYPES[k], a.t_r_typ_of(k),
                       a.t_r_max_of(k));
        if (a.t_prog_typ_of(k) > a.t_prog_max_of(k))
            return fmt("NandArrayTiming: typical t_prog of %s pages = %" PRId64 " ns: must be "
                       "at most its maximum, %" PRId64 " ns", TYPES[k], a.t_prog_typ_of(k),
                       a.t_prog_max_of(k));
    }
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
    if (!(retention_shift >= 0 && retention_shift <= 4))
        return "BitErrorModel.retention_shift: 0..4";
    if (!(rber_shift >= 0 && rber_shift <= 0.01)) return "BitErrorModel.rber_shift: 0..0.01";
    if (!(rber_per_kread >= 0 && rber_per_kread <= 0.01))
        return "BitErrorModel.rber_per_kread: 0..0.01";
    if (retry_levels < 1 || retry_levels > 16) return "BitErrorModel.retry_levels: 1..16";
    if (param_page_copies < 3 || param_page_copies > 16)
        return "NandDie.param_page_copies: must be 3..16";
    return "";
}

double DieConfig::rber(double pe, double age_h, double reads, int level) const {
    return wear_rber(pe) + read_rber(pe, age_h, reads, level);
}

double DieConfig::wear_rber(double pe) const {
    return rber_base + rber_per_kcycle * std::pow(pe / 1000, rber_exponent);
}

double DieConfig::read_rber(double pe, double age_h, double reads, int level) const {
    double shift = retention_shift * std::log10(1.0 + age_h) * (1.0 + pe / 1000);
    double miss = shift - level;
    return rber_shift * (miss * miss) + rber_per_kread * (reads / 1000);
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

}  // namespace nandfast
