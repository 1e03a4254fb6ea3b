// SPDX-License-Identifier: BSD-2-Clause
// Fast NAND die model: one ONFI target (CE#) with its LUNs, the C++ port of the golden
// Python model (sim/nand/python/nand_die.py NandDie + onfi_die_pins.py OnfiPinTarget +
// onfi_timing.py OnfiTimingChecker) for the full-system Verilator simulation through DPI.
//
// Layers (each mirrors its golden counterpart, same rule and parameter names):
//   NandDieCore     array/command model (NandDie): busy times, status, rules, faults.
//   SdrChecker      controller-side SDR interface timing checks (OnfiTimingChecker).
//   NandDieFast     the byte-level front end (OnfiPinTarget): latch(), data_out(), and the
//                   clocked pin evaluation used by the DPI module (eval()).
// Storage is sparse: only blocks ever touched and pages ever programmed are allocated.
#pragma once

#include <cstdint>
#include <climits>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

namespace nandfast {

using Bytes = std::vector<uint8_t>;

// Status register bits (ONFI).
constexpr int SR_FAIL = 0x01, SR_FAILC = 0x02, SR_ARDY = 0x20, SR_RDY = 0x40, SR_WP_N = 0x80;

// Python's random.Random (MT19937 with CPython's seeding), for bit-exact flips.
class PyRandom {
  public:
    explicit PyRandom(int64_t seed = 0) { seed_int(seed); }
    void seed_int(int64_t seed);
    uint32_t genrand();
    double random();
    Bytes randbytes(size_t n);

  private:
    uint32_t mt_[624];
    int mti_ = 625;
    void init_genrand(uint32_t s);
};

uint64_t mix64(uint64_t x);
uint16_t onfi_crc16(const uint8_t *data, size_t n);
uint32_t crc32(const uint8_t *data, size_t n);

struct Geometry {
    int page_bytes = 8192, spare_bytes = 512, pages_per_block = 256, blocks_per_plane = 2048;
    int planes = 2, luns = 1, bits_per_cell = 2;
    // derived (call derive() after setting the fields)
    int page_bits = 0, block_bits = 0, lun_bits = 0, row_cycles = 1, column_cycles = 1;
    int register_bytes = 0, blocks_per_lun = 0, plane_bits = 0;
    std::string derive();   // "" or the error naming the field
    int plane_of(int block) const { return block % planes; }
    int page_type(int page) const { return page % bits_per_cell; }  // 0 lower, 1 upper...
    uint64_t pack_row(int lun, int block, int page) const {
        return ((((uint64_t)lun << block_bits) | (uint64_t)block) << page_bits) | page;
    }
    void unpack_row(uint64_t row, int64_t &lun, int64_t &block, int64_t &page) const;
    std::string check_row(uint64_t row) const;
};

struct ArrayTiming {
    int64_t t_r_ns = 100000, t_prog_ns = 1300000, t_bers_ns = 3000000;
    int64_t t_r_lower_ns = -1, t_r_upper_ns = -1, t_prog_lower_ns = -1, t_prog_upper_ns = -1;
    int64_t t_cbsy_ns = 3000, t_rcbsy_ns = 3000, t_dbsy_ns = 500, t_feat_ns = 1000;
    int64_t t_rst_ns = 5000, t_rst_prog_ns = 10000, t_rst_erase_ns = 500000;
    int64_t t_rst_first_ns = 1000000;
    int64_t t_r(int page_type) const;
    int64_t t_prog(int page_type) const;
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
    double rber_base = 0.0, rber_per_kcycle = 0.0, rber_exponent = 1.0;
    bool factory_erased = true, require_reset = true;
    int param_page_copies = 3;
    std::string validate();                 // "" or the error naming the field
    int bad_blocks_limit() const;
};

Bytes onfi_parameter_page(const DieConfig &cfg);

struct Violation {
    double time_ns;
    std::string rule;
    int lun;            // -1: none
    std::string message;
    std::string str() const;
};

struct RuleError {      // thrown by a strict die, caught by the front end (as the golden)
    Violation v;
};

struct Block {
    int64_t erase_count = 0;
    int next_page = 0;
    bool erased = true;
    std::string bad;                        // "" or why the block went bad
    std::unordered_map<int, Bytes> pages;   // page -> register image (data + spare)
};

struct Event {
    double time;
    uint64_t seq;
    std::function<void()> fn;
    bool operator>(const Event &o) const {
        return time != o.time ? time > o.time : seq > o.seq;
    }
};

enum CacheMode { CACHE_NONE = 0, CACHE_READ = 1, CACHE_PROGRAM = 2 };

struct Inflight {
    double end;
    bool program;                                   // else erase
    std::vector<std::pair<int, int>> items;         // (block, page) / (block, -1)
};

struct MpEntry {
    int kind;           // 0 read, 1 program, 2 erase
    uint64_t row;
    Bytes image;        // program
    int column;         // read
};

struct Lun {
    int index = 0;
    double busy_until = 0, array_busy_until = 0;
    bool fail = false, failc = false;
    std::unordered_map<int, Block> blocks;
    std::map<int, Bytes> registers;                 // plane -> image
    bool data_reg_valid = false;
    int data_reg_plane = 0;
    Bytes data_reg;
    int column = 0, out_plane = 0;
    CacheMode cache_mode = CACHE_NONE;
    int64_t last_read_row = -1;
    std::vector<MpEntry> mp_queue;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
    std::vector<Inflight> inflight;
    bool factory_erased = true;

    bool rdy(double now) const { return now >= busy_until; }
    bool ardy(double now) const { return now >= array_busy_until; }
    int status(double now, bool wp_n) const;
    Block &block(int b);
};

struct OpResult {
    bool valid = false;     // false: None (refused)
    double ready = 0, array_ready = 0;
    bool ok = true;
};

// The golden NandDie, method for method.
class NandDieCore {
  public:
    explicit NandDieCore(const DieConfig &cfg);
    DieConfig cfg;
    const Geometry &g;
    const ArrayTiming &t;
    std::vector<Lun> luns;
    bool wp_n = true;
    double now = 0;
    std::vector<Violation> violations;
    std::map<std::string, int64_t> stats;
    std::map<int, Bytes> features;
    int selected_lun = 0;
    bool output_status = false;     // output_mode == "status"
    bool reset_seen = false;
    PyRandom rng;
    uint64_t seq = 0, bad_key = 0;
    Bytes param_page;

    void advance(double now);
    double ready_ns() const;
    int rb_n(double now);
    int timing_mode() const;
    int data_interface() const;     // 0 SDR, 2 NV-DDR2 (SET FEATURES 01h P1 bits 5:4)
    bool is_factory_bad(int lun, int block) const;
    void inject_bad_block(int lun, int block, const std::string &reason = "injected");
    int status(double now, int lun);

    double reset(double now);
    bool read_id(double now, int address, Bytes &out);
    bool read_parameter_page(double now, int address, Bytes &out);
    bool set_features(double now, int address, const Bytes &params);
    bool get_features(double now, int address, Bytes &out);
    void set_wp_n(double now, bool value);
    int read_status(double now);
    int read_status_enhanced(double now, uint64_t row);
    void read_mode(double now);
    OpResult read_page(double now, uint64_t row, int column, int confirm);
    OpResult read_cache(double now, int64_t row);       // row -1: sequential
    OpResult read_cache_end(double now);
    bool change_read_column(double now, int column, int64_t row);
    bool read_data(double now, int n, Bytes &out);
    OpResult program_page(double now, uint64_t row,
                          const std::vector<std::pair<int, Bytes>> &chunks, int confirm);
    OpResult erase_block(double now, uint64_t row, int confirm);

  private:
    bool violate(const std::string &rule, int lun, const std::string &message);
    void fail_event(const std::string &op);
    bool powered(const char *what);
    bool ready(Lun &lun, const std::string &what, CacheMode cache = CACHE_NONE);
    bool target_ready(const char *what);
    bool decode(uint64_t row, const char *what, int64_t &lun, int64_t &block, int64_t &page);
    void busy(Lun &lun, double ready, double array_ready = -1);
    void set_fail(Lun &lun, double time, bool failed, bool cache);
    void at(Lun &lun, double time, std::function<void()> fn);
    bool check_column(Lun &lun, int64_t column, int64_t nbytes);
    bool multi_plane(Lun &lun, int kind, MpEntry entry, bool queue,
                     std::vector<MpEntry> &group);
    std::string program_allowed(Lun &lun, int block, int page);
    std::vector<uint64_t> flip_positions(uint64_t n_bits, double p);
    Bytes array_read(int lun, int block, int page, size_t &nflips);
};

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

// One ONFI target: the golden OnfiPinTarget's byte-level front end plus the pin evaluation.
class NandDieFast {
  public:
    NandDieFast(const DieConfig &cfg, int die_id, int64_t clk_ps, bool verbose = true);
    NandDieCore die;
    SdrChecker checker;
    std::vector<Violation> own_violations;
    int mode = 0;
    int die_id;

    // Byte-level entry points (times in ps): what OnfiPinTarget._latch/_data_out do.
    void latch(int64_t now_ps, int kind, int byte);   // kind 0 cmd, 1 addr, 2 data
    int data_out(int64_t now_ps);                     // the byte, or -1 (garbage)
    void set_wp(int64_t now_ps, int wp_n);
    void checker_observe(int64_t t_ps, const Pins &pins);
    // Apply a pending interface/timing mode switch (after SET FEATURES 01h or RESET) once
    // the die is ready again, as OnfiPinTarget._switch does; the entry points call it.
    void sync(int64_t now_ps);

    // Clocked pin evaluation: the pins as set at the last posedge (edge_ps), returns the
    // outputs for the next posedge (dq_i | rb_n << 8). Called once per clock at negedge.
    uint32_t eval(int64_t now_ps, uint32_t packed_pins);
    size_t rule_count() const { return die.violations.size() + own_violations.size(); }
    size_t timing_count() const { return checker.violations.size(); }
    double ready_ns() const { return die.ready_ns(); }
    int64_t rb_rise_ps() const { return rb_rise_; }
    // The earliest pending DQ or R/B# edge (INT64_MAX: none): with unchanged pins, eval()
    // returns its cached outputs until the next posedge reaches this time.
    int64_t next_event_ps() const { return next_event_ps_; }

  private:
    int64_t clk_ps_;
    bool verbose_;
    int iface_ = 0;
    bool switch_pending_ = false, nvddr2_warned_ = false;
    size_t printed_rules_ = 0, printed_own_ = 0, printed_timing_ = 0;
    const double *tm_;      // output timings of the mode in force
    int64_t ce_fall_ps_ = 0;
    // command assembly
    int cmd_ = -1;
    std::vector<int> addr_;
    std::vector<std::pair<int, Bytes>> chunks_;
    int64_t row_ = -1;
    Bytes feat_;
    enum Out { OUT_NONE, OUT_STATUS, OUT_ARRAY, OUT_BYTES } out_ = OUT_NONE;
    Bytes out_bytes_;
    size_t out_index_ = 0;
    // pins
    bool have_prev_ = false;
    Pins prev_;
    int prev_wp_ = 1;
    uint32_t last_packed_ = 0xFFFFFFFF;
    // DQ drive events (time ps, value or -1 garbage), applied in order
    struct Drive { int64_t t; uint64_t seq; int value; };
    std::vector<Drive> drives_;
    uint64_t drive_seq_ = 0;
    int dq_out_ = 0;
    PyRandom garbage_;
    // R/B#: the current task (OnfiPinTarget._busy): base value, fall at, rise at
    int rb_base_ = 1;
    int64_t rb_fall_ = -1, rb_rise_ = -1, rb_task_start_ = 0;
    int64_t rb_checked_ = INT64_MIN;   // rb edges up to here have been fed to the checker
    int rb_at(int64_t t) const;
    int64_t next_event_ps_ = INT64_MAX;
    uint32_t out_cache_ = 0x1FF;

    void clear();
    void own(double now, const std::string &rule, const std::string &message);
    template <class F> void call(double now, F fn, bool rb = true);
    void update_rb(int64_t now_ps);
    void command(int64_t now_ps, int c);
    void address(int64_t now_ps, int a);
    void data_in(int64_t now_ps, int d);
    void finish_85(double now);
    bool expect_addr(double now, size_t n, const std::string &what);
    uint64_t value(size_t from, size_t to) const;
    void drive(int64_t t_ps, double delay_ns, int value);
    void observe(int64_t t_ps, const Pins &pins, int wp_n);
    void report();
};

}  // namespace nandfast
