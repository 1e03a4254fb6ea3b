// SPDX-License-Identifier: BSD-2-Clause
// DPI-C front end of the fast NAND die model for the SystemVerilog module nand_die_fast
// (nand_die_fast.sv): one NandDieFast per module instance, addressed by a handle.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "nand_die_fast.h"

using nandfast::DieConfig;
using nandfast::NandDieFast;

namespace {
std::vector<std::unique_ptr<NandDieFast>> models;
unsigned long long n_evals = 0;         // nand_die_fast_eval calls, all dies

struct Ident {
    const char *name;
    uint8_t id[5];
    const char *manufacturer, *model;
    int jedec_id, pe_cycles;
};
// The identity of every part of spec/nand_geometry.PARTS (geometry and timings come from the
// module's parameters). tests/sim/nand/nand_die_fast checks this table against PARTS.
const Ident PARTS[] = {
    {"imft-20nm-mlc-64gbit", {0x2c, 0x64, 0x44, 0x4b, 0xa9}, "MICRON", "SSDLAB-IMFT20-64G",
     0x2c, 3000},
    {"imft-20nm-mlc-128gbit", {0x2c, 0x84, 0x64, 0x3c, 0xa5}, "MICRON", "SSDLAB-IMFT20-128G",
     0x2c, 3000},
    {"imft-25nm-mlc-64gbit", {0x2c, 0x88, 0x04, 0x4b, 0xa9}, "MICRON", "SSDLAB-IMFT25-64G",
     0x2c, 3000},
    {"samsung-16nm-tlc-128gbit", {0xec, 0xde, 0x94, 0xc3, 0x00}, "SAMSUNG",
     "SSDLAB-SEC16-TLC128G", 0xec, 1000},
    {"samsung-vnand-32l-mlc-128gbit", {0xec, 0xd7, 0x14, 0x7e, 0x00}, "SAMSUNG",
     "SSDLAB-SECV2-MLC128G", 0xec, 6000},
    {"kioxia-bics4-tlc-512gbit", {0x98, 0x3c, 0x99, 0xb3, 0x76}, "TOSHIBA",
     "SSDLAB-BICS4-TLC512G", 0x98, 3000},
};
}  // namespace

extern "C" {

// Returns a handle (>= 0), or -1 after printing why the parameters are illegal.
int nand_die_fast_new(const char *part, int die_id, long long clk_ps, long long seed,
                      int page_bytes, int spare_bytes, int pages_per_block,
                      int blocks_per_plane, int planes, int luns, int bits_per_cell,
                      int t_r_ns, int t_prog_ns, int t_bers_ns, int t_r_lower_ns,
                      int t_r_upper_ns, int t_prog_lower_ns, int t_prog_upper_ns,
                      int t_cbsy_ns, int t_rcbsy_ns, int t_dbsy_ns, int t_feat_ns,
                      int t_rst_ns, int t_rst_prog_ns, int t_rst_erase_ns, int t_rst_first_ns,
                      int strict, double factory_bad_block_rate, int pe_limit,
                      double rber_base, double rber_per_kcycle, double rber_exponent,
                      int factory_erased, int require_reset, int param_page_copies,
                      int verbose, int t_r_middle_ns, int t_prog_middle_ns, int t_r_typ_ns,
                      int t_r_lower_typ_ns, int t_r_middle_typ_ns, int t_r_upper_typ_ns,
                      int t_prog_typ_ns, int t_prog_lower_typ_ns, int t_prog_middle_typ_ns,
                      int t_prog_upper_typ_ns, int typical, int t_r_slc_ns,
                      int t_prog_slc_ns, int t_r_slc_typ_ns, int t_prog_slc_typ_ns,
                      double retention_shift, double rber_shift, double rber_per_kread,
                      int retry_levels) {
    DieConfig c;
    const Ident *ident = nullptr;
    for (const Ident &p : PARTS)
        if (!strcmp(p.name, part)) ident = &p;
    if (!ident) {
        std::string names;
        for (const Ident &p : PARTS) names += std::string(names.empty() ? "" : ", ") + p.name;
        printf("nand_die_fast[%d]: PART \"%s\": one of %s\n", die_id, part, names.c_str());
        return -1;
    }
    c.id_bytes.assign(ident->id, ident->id + 5);
    c.manufacturer = ident->manufacturer;
    c.model = ident->model;
    c.jedec_id = ident->jedec_id;
    c.pe_cycles = ident->pe_cycles;
    c.geometry.page_bytes = page_bytes;
    c.geometry.spare_bytes = spare_bytes;
    c.geometry.pages_per_block = pages_per_block;
    c.geometry.blocks_per_plane = blocks_per_plane;
    c.geometry.planes = planes;
    c.geometry.luns = luns;
    c.geometry.bits_per_cell = bits_per_cell;
    auto &t = c.timing;
    t.t_r_ns = t_r_ns;
    t.t_prog_ns = t_prog_ns;
    t.t_bers_ns = t_bers_ns;
    t.t_r_lower_ns = t_r_lower_ns;
    t.t_r_upper_ns = t_r_upper_ns;
    t.t_prog_lower_ns = t_prog_lower_ns;
    t.t_prog_upper_ns = t_prog_upper_ns;
    t.t_cbsy_ns = t_cbsy_ns;
    t.t_rcbsy_ns = t_rcbsy_ns;
    t.t_dbsy_ns = t_dbsy_ns;
    t.t_feat_ns = t_feat_ns;
    t.t_rst_ns = t_rst_ns;
    t.t_rst_prog_ns = t_rst_prog_ns;
    t.t_rst_erase_ns = t_rst_erase_ns;
    t.t_rst_first_ns = t_rst_first_ns;
    t.t_r_middle_ns = t_r_middle_ns;
    t.t_prog_middle_ns = t_prog_middle_ns;
    t.t_r_typ_ns = t_r_typ_ns;
    t.t_r_lower_typ_ns = t_r_lower_typ_ns;
    t.t_r_middle_typ_ns = t_r_middle_typ_ns;
    t.t_r_upper_typ_ns = t_r_upper_typ_ns;
    t.t_prog_typ_ns = t_prog_typ_ns;
    t.t_prog_lower_typ_ns = t_prog_lower_typ_ns;
    t.t_prog_middle_typ_ns = t_prog_middle_typ_ns;
    t.t_prog_upper_typ_ns = t_prog_upper_typ_ns;
    t.typical = typical != 0;
    t.t_r_slc_ns = t_r_slc_ns;
    t.t_prog_slc_ns = t_prog_slc_ns;
    t.t_r_slc_typ_ns = t_r_slc_typ_ns;
    t.t_prog_slc_typ_ns = t_prog_slc_typ_ns;
    c.seed = seed;
    c.strict = strict != 0;
    c.factory_bad_block_rate = factory_bad_block_rate;
    c.pe_limit = pe_limit;
    c.rber_base = rber_base;
    c.rber_per_kcycle = rber_per_kcycle;
    c.rber_exponent = rber_exponent;
    c.retention_shift = retention_shift;
    c.rber_shift = rber_shift;
    c.rber_per_kread = rber_per_kread;
    c.retry_levels = retry_levels;
    c.factory_erased = factory_erased != 0;
    c.require_reset = require_reset != 0;
    c.param_page_copies = param_page_copies;
    std::string err = c.validate();
    if (clk_ps < 2) err = "CLK_PS must be at least 2";
    if (!err.empty()) {
        printf("nand_die_fast[%d]: %s\n", die_id, err.c_str());
        return -1;
    }
    models.emplace_back(new NandDieFast(c, die_id, clk_ps, verbose != 0));
    return (int)models.size() - 1;
}

// One clock of a die, called at negedge clk: pins as set at the preceding posedge; returns
// dq_i | rb_n << 8 for the next posedge, the violation counts, and the time of the next
// output edge the model has scheduled (the module need not call again before it unless a
// pin changes).
int nand_die_fast_eval(int handle, long long now_ps, int pins, int *rules, int *timing,
                       long long *next_ps) {
    NandDieFast &m = *models[handle];
    n_evals++;
    int out = (int)m.eval(now_ps, (uint32_t)pins);
    *rules = (int)m.rule_count();
    *timing = (int)m.timing_count();
    *next_ps = m.next_event_ps();
    return out;
}

// For the harness's fast-forward (sim/harness/README.md): the earliest output edge any die
// has scheduled (ps; INT64_MAX: none, or no dies), and the eval calls so far (a window the
// harness skips must not contain one).
long long nand_die_fast_next_ps(void) {
    long long t = INT64_MAX;
    for (auto &m : models) t = std::min<long long>(t, m->next_event_ps());
    return t;
}

unsigned long long nand_die_fast_evals(void) { return n_evals; }

// For the harness's power cut (SB_RESET with SB_RESET_POWER_CUT): every die instance loses
// power at now_ps and gets it back (NandDieFast::power_cut: in-flight programs and erases
// torn, registers and features lost, a RESET needed again; the array stays). Returns the
// number of dies; *torn = the pages and blocks whose program or erase was torn.
int nand_die_fast_power_cut(long long now_ps, long long *torn) {
    *torn = 0;
    for (auto &m : models) *torn += m->power_cut(now_ps);
    return (int)models.size();
}

// For the harness's fault injection (SB_FAULT_BAD_BLOCK): block `block` of LUN `lun` of the
// die DIE_ID `die_id` grows bad (every program and erase of it fails). 1: done; 0: no die
// models (a drive built with the NAND emulator); -1: no such die, LUN or block.
int nand_die_fast_bad_block(int die_id, int lun, int block) {
    if (models.empty()) return 0;
    for (auto &m : models) {
        if (m->die_id != die_id) continue;
        const auto &g = m->die.g;
        if (lun < 0 || lun >= g.luns || block < 0 || block >= g.blocks_per_lun) return -1;
        m->die.inject_bad_block(lun, block, "SB_FAULT");
        return 1;
    }
    return -1;
}

// For the harness's fault injection (SB_FAULT_BIT_ERRORS): every read of LUN `lun` of the
// die DIE_ID `die_id` flips bits at `rber` more (0 ends it). 1: done; 0: no die models;
// -1: no such die or LUN, or rber outside 0..0.5.
int nand_die_fast_bit_errors(int die_id, int lun, double rber) {
    if (models.empty()) return 0;
    for (auto &m : models) {
        if (m->die_id != die_id) continue;
        if (lun < 0 || lun >= m->die.g.luns || !(rber >= 0 && rber <= 0.5)) return -1;
        m->die.inject_bit_errors(lun, rber);
        return 1;
    }
    return -1;
}

// For the harness's fault injection (SB_FAULT_DIE_FAIL): LUN `lun` of the die DIE_ID
// `die_id` fails for good (NandDie.inject_die_failure). 1: done; 0: no die models; -1: no
// such die or LUN.
int nand_die_fast_die_fail(int die_id, int lun) {
    if (models.empty()) return 0;
    for (auto &m : models) {
        if (m->die_id != die_id) continue;
        if (lun < 0 || lun >= m->die.g.luns) return -1;
        m->die.inject_die_failure(lun);
        return 1;
    }
    return -1;
}

// For the harness's fault injection (SB_FAULT_STUCK_BUSY): LUN `lun` of the die DIE_ID
// `die_id` hangs from its next busy period (NandDie.inject_stuck_busy): until a RESET or a
// power cut (for_good 0), or for good. 1: done; 0: no die models; -1: no such die or LUN.
int nand_die_fast_stuck_busy(int die_id, int lun, int for_good) {
    if (models.empty()) return 0;
    for (auto &m : models) {
        if (m->die_id != die_id) continue;
        if (lun < 0 || lun >= m->die.g.luns) return -1;
        m->die.inject_stuck_busy(lun, !for_good);
        return 1;
    }
    return -1;
}

// For the harness's retention bake (SB_BAKE): every die's programmed pages age `hours`
// (NandDie.bake; spec/nand_errors.py). Returns the number of dies.
int nand_die_fast_bake(double hours) {
    for (auto &m : models) m->die.bake(hours);
    return (int)models.size();
}

// For the harness's statistics (SB_INFO): the bits read from programmed pages and the bits
// the dies flipped in them, over every die (their ratio: the raw bit error rate the reads saw)
void nand_die_fast_error_stats(long long *bits_read, long long *bit_errors) {
    *bits_read = *bit_errors = 0;
    for (auto &m : models) {
        *bits_read += m->die.stats["bits_read"];
        *bit_errors += m->die.stats["bit_errors"];
    }
}

// For the harness's pre-cycling (SB_PRECYCLE): every block of every die takes `cycles` more
// P/E cycles (NandDie.precycle). Returns the number of dies.
int nand_die_fast_precycle(long long cycles) {
    for (auto &m : models) m->die.precycle((int64_t)cycles);
    return (int)models.size();
}
}
