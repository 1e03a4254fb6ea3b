// SPDX-License-Identifier: BSD-2-Clause
// The part and die options of the fast NAND die model: geometry (NandGeometry), array
// timing (NandArrayTiming), the ONFI identity and NandDie's options, with the golden
// model's range checks, and the ONFI parameter page built from them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nandfast {

using Bytes = std::vector<uint8_t>;

struct Geometry {
    int page_bytes = 8192, spare_bytes = 512, pages_per_block = 256, blocks_per_plane = 2048;
    int planes = 2, luns = 1, bits_per_cell = 2;
    // derived (call derive() after setting the fields)
    int page_bits = 0, block_bits = 0, lun_bits = 0, row_cycles = 1, column_cycles = 1;
    int register_bytes = 0, blocks_per_lun = 0, plane_bits = 0;
    std::string derive();   // "" or the error naming the field
    int plane_of(int block) const { return block % planes; }
    // Page type (spec.nand_geometry.PAGE_TYPES): 0 lower, 1 middle, 2 upper, 3 top; page
    // p is type PAGE_TYPES_OF[bits_per_cell][p % bits_per_cell] (MLC: lower, upper).
    // SLC_TYPE (4) is the timing type of SLC-mode (DAh) reads and programs.
    int page_type(int page) const {
        int k = page % bits_per_cell;
        return bits_per_cell == 2 && k == 1 ? 2 : k;
    }
    int slc_pages_per_block() const { return pages_per_block / bits_per_cell; }
    uint64_t pack_row(int lun, int block, int page) const {
        return ((((uint64_t)lun << block_bits) | (uint64_t)block) << page_bits) | page;
    }
    void unpack_row(uint64_t row, int64_t &lun, int64_t &block, int64_t &page) const;
    std::string check_row(uint64_t row) const;
};

constexpr int SLC_TYPE = 4;     // spec.nand_geometry.SLC ("slc") among the timing types

struct ArrayTiming {
    int64_t t_r_ns = 100000, t_prog_ns = 1300000, t_bers_ns = 3000000;
    int64_t t_r_lower_ns = -1, t_r_upper_ns = -1, t_prog_lower_ns = -1, t_prog_upper_ns = -1;
    int64_t t_cbsy_ns = 3000, t_rcbsy_ns = 3000, t_dbsy_ns = 500, t_feat_ns = 1000;
    int64_t t_rst_ns = 5000, t_rst_prog_ns = 10000, t_rst_erase_ns = 500000;
    int64_t t_rst_first_ns = 1000000;
    // TLC middle page maxima; typical values (uniform, then per page type); -1: not set
    int64_t t_r_middle_ns = -1, t_prog_middle_ns = -1;
    int64_t t_r_typ_ns = -1, t_r_lower_typ_ns = -1, t_r_middle_typ_ns = -1;
    int64_t t_r_upper_typ_ns = -1, t_prog_typ_ns = -1, t_prog_lower_typ_ns = -1;
    int64_t t_prog_middle_typ_ns = -1, t_prog_upper_typ_ns = -1;
    bool typical = true;    // run the typical values (else the maxima), as NandArrayTiming
    // SLC mode (type SLC_TYPE) maxima and typical values; -1: not set (the uniform ones)
    int64_t t_r_slc_ns = -1, t_prog_slc_ns = -1, t_r_slc_typ_ns = -1, t_prog_slc_typ_ns = -1;
    int64_t t_r(int page_type) const;
    int64_t t_prog(int page_type) const;
    int64_t t_r_max_of(int page_type) const;      // the maximum, whatever `typical` says
    int64_t t_prog_max_of(int page_type) const;
    int64_t t_r_typ_of(int page_type) const;      // the typical value, -1 if none
    int64_t t_prog_typ_of(int page_type) const;
    int64_t t_r_max() const;
    int64_t t_prog_max() const;
};

// The part (NandPart) plus the die options of NandDie.
struct DieConfig {
    Geometry geometry;
    ArrayTiming timing;
    Bytes id_bytes = {0x2c, 0x64, 0x44, 0x4b, 0xa9};
    std::string manufacturer = "MICRON", model = "SSDLAB-IMFT20-64G";
    int jedec_id = 0x2C, pe_cycles = 3000, ecc_bits = 40, sdr_modes = 0x3F;
    int max_bad_blocks = -1;                // -1: 2 % of the blocks of a LUN
    int64_t seed = 0;
    bool strict = true;
    double factory_bad_block_rate = 0.0;
    int64_t pe_limit = 0;                   // 0: no wear-out (None)
    // BitErrorModel (spec/nand_errors.py): wear, retention, read disturb, read retry
    double rber_base = 0.0, rber_per_kcycle = 0.0, rber_exponent = 1.0;
    double retention_shift = 0.0, rber_shift = 0.0, rber_per_kread = 0.0;
    int retry_levels = 1;
    // the formula of BitErrorModel.rber, operation for operation
    double rber(double pe, double age_h, double reads, int level) const;
    double wear_rber(double pe) const;                              // BitErrorModel.wear_rber
    double read_rber(double pe, double age_h, double reads, int level) const;  // .read_rber
    bool factory_erased = true, require_reset = true;
    int param_page_copies = 3;
    std::string validate();                 // "" or the error naming the field
    int bad_blocks_limit() const;
};

Bytes onfi_parameter_page(const DieConfig &cfg);

}  // namespace nandfast
