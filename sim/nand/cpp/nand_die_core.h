// SPDX-License-Identifier: BSD-2-Clause
// NandDieCore, the array/command model of the fast NAND die (the golden NandDie, method for
// method): LUNs, sparse block and page storage, busy times, status, rules, faults.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <string>
#include <unordered_map>
#include <vector>

#include "nand_part.h"
#include "nand_random.h"

namespace nandfast {

// Status register bits (ONFI).
constexpr int SR_FAIL = 0x01, SR_FAILC = 0x02, SR_ARDY = 0x20, SR_RDY = 0x40, SR_WP_N = 0x80;

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
    bool slc = false;                       // erased in SLC mode (DAh): an SLC block
    std::unordered_map<int, Bytes> pages;   // page -> register image (data + spare)
    // page -> (time ns, the die's bake hours) when it was programmed (retention age)
    std::unordered_map<int, std::pair<double, double>> written;
    int64_t reads = 0;                      // page reads since the last erase (read disturb)
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
    bool slc;           // the plane's sequence had the DAh prefix (SLC mode)
};

struct Lun {
    int index = 0;
    double busy_until = 0, array_busy_until = 0;
    bool fail = false, failc = false;
    double fault_rber = 0;                          // injected bit errors (inject_bit_errors)
    bool dead = false;                              // the die failed (inject_die_failure)
    int stuck = 0;          // inject_stuck_busy: 0 no, 1 until a RESET, 2 for good
    double stuck_at = 0;    // ... from the first busy period ending after this
    std::unordered_map<int, Block> blocks;
    std::map<int, Bytes> registers;                 // plane -> image
    bool data_reg_valid = false;
    int data_reg_plane = 0;
    Bytes data_reg;
    int column = 0, out_plane = 0;
    CacheMode cache_mode = CACHE_NONE;
    int64_t last_read_row = -1;
    bool last_read_slc = false;                     // ... and its mode (DAh)
    std::vector<MpEntry> mp_queue;
    std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events;
    std::vector<Inflight> inflight;
    bool factory_erased = true;

    // R/B# stuck low (inject_stuck_busy): a busy period began after the fault
    bool hung() const { return stuck != 0 && busy_until > stuck_at; }
    bool rdy(double now) const { return now >= busy_until && !hung(); }
    bool ardy(double now) const { return now >= array_busy_until && !hung(); }
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
    uint64_t weak_key = 0;          // the weak cells' seeds (NandDie._weak_key)
    double baked_h = 0;             // retention bake hours so far (bake)
    int64_t precycled = 0;          // P/E cycles every block took before (precycle)
    Bytes param_page;

    void advance(double now);
    double ready_ns() const;
    int rb_n(double now);
    int timing_mode() const;
    int data_interface() const;     // 0 SDR, 2 NV-DDR2 (SET FEATURES 01h P1 bits 5:4)
    bool is_factory_bad(int lun, int block) const;
    void inject_bad_block(int lun, int block, const std::string &reason = "injected");
    // Fault injection: every read of the LUN flips bits at `rber` more (NandDie.inject_bit_errors)
    void inject_bit_errors(int lun, double rber) { luns[lun].fault_rber = rber; }
    // Fault injection: the LUN fails for good (NandDie.inject_die_failure)
    void inject_die_failure(int lun) { luns[lun].dead = true; }
    // Fault injection: the LUN hangs in its next busy period (NandDie.inject_stuck_busy)
    void inject_stuck_busy(int lun, bool until_reset) {
        luns[lun].stuck = until_reset ? 1 : 2;
        luns[lun].stuck_at = std::max(now, luns[lun].busy_until);
    }
    // Not an ONFI command: a retention bake, every programmed page ages `hours` (NandDie.bake)
    void bake(double hours) { baked_h += hours; }
    // Not an ONFI command: every block takes `cycles` more P/E cycles, as a lab pre-cycles
    // parts (NandDie.precycle): the bit error rate and the P/E limit count them
    void precycle(int64_t cycles) { precycled += cycles; }
    int status(double now, int lun);

    double reset(double now);
    // Not an ONFI command: the supply drops at `now` and comes back (NandDie.power_cut).
    int power_cut(double now);     // returns the pages and blocks torn
    bool read_id(double now, int address, Bytes &out);
    bool read_parameter_page(double now, int address, Bytes &out);
    bool set_features(double now, int address, const Bytes &params);
    bool get_features(double now, int address, Bytes &out);
    void set_wp_n(double now, bool value);
    int read_status(double now);
    int read_status_enhanced(double now, uint64_t row);
    void read_mode(double now);
    // slc: the sequence had the DAh prefix (SLC mode; spec/nand_geometry.py)
    OpResult read_page(double now, uint64_t row, int column, int confirm, bool slc = false);
    OpResult read_cache(double now, int64_t row, bool slc = false);  // row -1: sequential
    OpResult read_cache_end(double now);
    bool change_read_column(double now, int column, int64_t row);
    bool read_data(double now, int n, Bytes &out);
    OpResult program_page(double now, uint64_t row,
                          const std::vector<std::pair<int, Bytes>> &chunks, int confirm,
                          bool slc = false);
    OpResult erase_block(double now, uint64_t row, int confirm, bool slc = false);

  private:
    bool violate(const std::string &rule, int lun, const std::string &message);
    void fail_event(const std::string &op);
    int tear(Lun &lun);
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
    bool slc_check(int lun, int block, int page, bool slc, const char *what,
                   std::vector<Violation> &found);
    void raise_late(const std::vector<Violation> &found);
    int64_t t_r_of(int page, bool slc) const;
    int64_t t_prog_of(int page, bool slc) const;
    std::vector<uint64_t> flip_positions(uint64_t n_bits, double p, PyRandom &r);
    Bytes array_read(int lun, int block, int page, size_t &nflips);
};

}  // namespace nandfast
