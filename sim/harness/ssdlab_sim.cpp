// SPDX-License-Identifier: BSD-2-Clause
// ssdlab_sim: the fast full-system simulation of the drive. Verilator model of
// ssdlab_sim_top (the SoC of soc/ and a fast NAND die model on every chip enable), and the
// host bridge of sim/bridge/ssdlab_bridge.h: host RAM is a shared file, MMIO and interrupts
// cross a Unix socket, and the simulation advances only while it serves a host request
// (lockstep), so that simulated time never depends on the speed of either process.
//
// The bridge stands where the root complex would: it turns MMIO requests into MWr/MRd TLPs
// to BAR0, serves the device's memory reads from host RAM after a modelled read latency
// (completions split at MPS boundaries), writes the device's memory writes into host RAM,
// models the MSI-X capability of configuration space, and reports MSIs and MSI-X messages
// (memory writes into the interrupt window) as interrupts, counted per vector. See
// sim/harness/README.md.

#include <verilated.h>
#if VM_TRACE
#include <verilated_fst_c.h>
#endif
#include "Vssdlab_sim_top.h"
#include <verilated_syms.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <unordered_map>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <vector>

extern "C" {
#include "ssdlab_bridge.h"
// sim/nand/cpp/nand_die_fast_dpi.cpp: the dies' earliest scheduled output edge, eval calls
long long nand_die_fast_next_ps(void);
unsigned long long nand_die_fast_evals(void);
// ... and the power cut of every die (SB_RESET with SB_RESET_POWER_CUT); returns the dies
int nand_die_fast_power_cut(long long now_ps, long long *torn);
int nand_die_fast_bake(double hours);
int nand_die_fast_precycle(long long cycles);
void nand_die_fast_error_stats(long long *bits_read, long long *bit_errors);
int nand_die_fast_bad_block(int die_id, int lun, int block);
int nand_die_fast_bit_errors(int die_id, int lun, double rber);
int nand_die_fast_die_fail(int die_id, int lun);
int nand_die_fast_stuck_busy(int die_id, int lun, int for_good);
}
#include "tlp_beats.h"
#include "pcie_link_pacer.h"

namespace {

struct Options {
    std::string socket_path = "build/sim/drive.sock";
    std::string ram_path;                   // default: socket path + ".ram"
    uint64_t ram_bytes = 256ull << 20;
    uint64_t period_ps = 8000;
    uint64_t host_delay_ns = 200;           // each host MMIO request, before it is sent
    uint64_t read_latency_ns = 400;         // device memory read -> first completion
    uint64_t mmio_timeout_us = 1000;
    unsigned mps_code = 1;                  // 256 B
    unsigned mrrs_code = 2;                 // 512 B
    uint64_t boot_us = 0;                   // run this long before serving the first host
    std::string trace_path;
    uint64_t trace_from_us = 0;             // start dumping at this simulated time
    uint64_t trace_for_us = 0;              // and stop after this long (0: to the end)
    bool once = false;                      // exit when the first host disconnects
    bool quiet_uart = false;
    PcieLinkParams link;                    // spec/pcie_link.py harness_args; 0 fs: unpaced
    bool fast_forward = true;               // jump over quiet time (README "Fast-forward")
    bool ff_check = false;                  // clock through every window instead, and check it
    uint64_t ff_settle = 1024;              // quiet this many cycles before a window opens
    uint64_t ff_margin = 2;                 // stop this many cycles before the next event
    std::string fw_profile_path;            // the firmware's cycle profile (Drive::profile_write)
};

constexpr uint64_t BAR0_BASE = 0xF7000000ull;
constexpr uint16_t ROOT_ID = 0x0000;

uint32_t bswap32(uint32_t v) { return __builtin_bswap32(v); }

volatile sig_atomic_t stop_requested = 0;     // SIGINT / SIGTERM: leave any loop
bool write_full(int fd, const void *buf, size_t n);     // below: the socket's writes

struct Tlp {
    std::vector<uint32_t> dw;               // header + payload, dword n = TLP bytes 4n..4n+3
    uint64_t not_before;                    // cycle
};

struct Arrival {                            // a device TLP or MSI on its way to the host
    uint64_t at;                            // cycle its last byte has crossed the link
    std::vector<uint32_t> dw;               // the TLP (empty for an MSI)
    uint32_t msi_vec;
};

struct PendingRead {                        // a device memory read being answered
    uint64_t due;                           // cycle of its first completion
    uint16_t requester;
    uint8_t tag;
    uint64_t addr;                          // first byte
    uint32_t bytes;
    uint64_t dw_addr;                       // dword-aligned start
    uint8_t fault;                          // CPL_OK, CPL_POISON or CPL_DROP (SB_FAULT_CPL_*)
    bool logged;                            // its fault is on stderr
};
enum { CPL_OK = 0, CPL_POISON = 1, CPL_DROP = 2 };

class Drive {
  public:
    Drive(const Options &o, VerilatedContext *ctx)
        : to_host(o.link), from_host(o.link), opt(o), ctx(ctx) {
        top = new Vssdlab_sim_top(ctx);
        half_ps = opt.period_ps / 2;
#if VM_TRACE
        if (!opt.trace_path.empty()) {
            ctx->traceEverOn(true);
            trace = new VerilatedFstC;
            top->trace(trace, 99);
            trace->open(opt.trace_path.c_str());
        }
#endif
        top->cfg_bus_dev_fn = 0x0100;
        top->cfg_max_payload = opt.mps_code;
        top->cfg_max_read_req = opt.mrrs_code;
        top->m_tlp_tready = 1;
        top->m_msi_ready = 1;
        if (opt.fast_forward) find_counters();
        instret = find_var("CsrPlugin_minstret");
        if (!opt.fw_profile_path.empty()) {
            for (auto [want, to] : {std::pair{"execute_to_memory_PC", &profile_pc},
                                    std::pair{"memory_to_writeBack_PC", &profile_wb_pc}}) {
                std::vector<Counter> pc = find_var(want);
                if (pc.size() != 1 || instret.size() != 1) {
                    fprintf(stderr, "ssdlab_sim: --fw-profile: the model has %zu public '%s' "
                            "(one expected: rebuild the drive)\n", pc.size(), want);
                    exit(2);
                }
                *to = pc[0];
            }
        }
        reset(100);
    }
    ~Drive() {
#if VM_TRACE
        if (trace) { trace->close(); delete trace; }
#endif
        top->final();
        delete top;
    }

    void map_ram(uint8_t *p, uint64_t n) { ram = p; ram_bytes = n; }

    // One clock cycle: inputs change at the falling edge (where the die models evaluate),
    // outputs are sampled before the rising edge, which transfers the handshakes.
    void cycle() {
        drive_s_tlp();
        // device -> host: the PHY holds one TLP while the previous one is on the wire
        top->m_tlp_tready = !rx.empty() || !to_host.holding(time_fs());
        top->m_msi_ready = !to_host.holding(time_fs());
        top->clk = 0;
        ctx->timeInc(half_ps);
        top->eval();
#if VM_TRACE
        if (tracing()) trace->dump(ctx->time());
#endif
        bool s_fire = top->s_tlp_tvalid && top->s_tlp_tready;
        bool m_fire = top->m_tlp_tvalid && top->m_tlp_tready;
        auto m_data = top->m_tlp_tdata;        // uint64_t, or VlWide above 64 bits
        uint64_t m_keep = top->m_tlp_tkeep;
        bool m_last = top->m_tlp_tlast;
        bool msi = top->m_msi_valid && top->m_msi_ready;
        unsigned msi_vec = top->m_msi_data;
        bool uart = top->uart_valid;
        char uart_c = (char)top->uart_data;
        top->clk = 1;
        ctx->timeInc(opt.period_ps - half_ps);
        top->eval();
#if VM_TRACE
        if (tracing()) trace->dump(ctx->time());
#endif
        cycles++;
        if (profiling) profile_cycle();
        // quiet since how long: a TLP into the device and a die evaluation (a pin the
        // controller changed, or a die's output edge) restart the count; the engines react
        // to them, or pause inside an ONFI op, for less than ff_settle cycles
        unsigned long long evals = nand_die_fast_evals();
        quiet_run = top->ff_quiet && !top->m_tlp_tvalid && !top->m_msi_valid &&
                    !top->uart_valid && !top->s_tlp_tvalid && evals == last_evals
                        ? quiet_run + 1 : 0;
        last_evals = evals;
        if (s_fire) advance_s_tlp();
        if (m_fire) take_m_beat(m_data, m_keep, m_last);
        if (msi) arrivals.push_back({link_arrival(to_host, 12, 4), {}, msi_vec});
        deliver_arrivals();
        if (uart && !opt.quiet_uart) { fputc(uart_c, stdout); if (uart_c == '\n') fflush(stdout); }
        serve_reads();
    }

    void reset(unsigned n) {
        top->rst = 1;
        for (unsigned i = 0; i < n; i++) cycle();
        top->rst = 0;
        quiet_run = 0;
        to_dev.clear(); beat = 0; rx.clear(); reads.clear(); msis.clear(); arrivals.clear();
        set_msix_control(0);                // a power cycle clears configuration space
        dma_pending = false;
        cpl_waiting = false;
    }

    // Host requests -------------------------------------------------------------------
    void host_delay() { run_cycles(ns_to_cycles(opt.host_delay_ns)); }

    void mmio_write(uint64_t off, unsigned size, uint64_t v) {
        host_delay();
        Tlp t;
        uint32_t len = size / 4;
        t.dw.push_back((0b010u << 29) | len);
        t.dw.push_back((uint32_t(ROOT_ID) << 16) | (uint32_t(next_tag++) << 8) |
                       (len == 2 ? 0xF0 : 0x00) | 0xF);
        t.dw.push_back(uint32_t(BAR0_BASE + off) & ~3u);
        for (unsigned k = 0; k < len; k++) t.dw.push_back(bswap32(uint32_t(v >> (32 * k))));
        t.not_before = link_arrival(from_host, 12, 4 * len);
        to_dev.push_back(t);
        n_mmio++;
    }

    // returns false on a completion timeout
    bool mmio_read(uint64_t off, unsigned size, uint64_t *v) {
        host_delay();
        Tlp t;
        uint32_t len = size / 4;
        uint8_t tag = next_tag++;
        t.dw.push_back(len);
        t.dw.push_back((uint32_t(ROOT_ID) << 16) | (uint32_t(tag) << 8) |
                       (len == 2 ? 0xF0 : 0x00) | 0xF);
        t.dw.push_back(uint32_t(BAR0_BASE + off) & ~3u);
        t.not_before = link_arrival(from_host, 12, 0);
        to_dev.push_back(t);
        cpl_waiting = true; cpl_tag = tag; cpl_got = false;
        uint64_t limit = cycles + ns_to_cycles(opt.mmio_timeout_us * 1000);
        while (!cpl_got && cycles < limit && !stop_requested) {
            alive();
            cycle();
        }
        cpl_waiting = false;
        n_mmio++;
        if (!cpl_got) return false;
        *v = cpl_value;
        return true;
    }

    // Configuration space: only the MSI-X capability (SB_CFG_MSIX_CAP) is modelled; false
    // for any other offset, or when the drive has no MSI-X.
    bool cfg_read(uint64_t off, uint64_t *v) {
        host_delay();
        unsigned n = top->msix_table_size;
        if (n == 0) return false;
        if (off == SB_CFG_MSIX_CAP)
            *v = 0x11u | (uint32_t(msix_control | (n - 1)) << 16);     // next pointer 0
        else if (off == SB_CFG_MSIX_CAP + 4) *v = top->msix_table_offset;     // BIR 0
        else if (off == SB_CFG_MSIX_CAP + 8) *v = top->msix_pba_offset;       // BIR 0
        else return false;
        return true;
    }
    bool cfg_write(uint64_t off, unsigned size, uint64_t v) {
        host_delay();
        if (top->msix_table_size == 0) return false;
        if (off == SB_CFG_MSIX_CAP + 2 && size == 2) set_msix_control(uint16_t(v));
        else if (off == SB_CFG_MSIX_CAP && size == 4) set_msix_control(uint16_t(v >> 16));
        else return false;
        return true;
    }
    bool msix_enabled() const { return msix_control & SB_MSIX_ENABLE; }

    // Keepalive (ssdlab_bridge.h): while a request runs the simulation, SB_ALIVE every
    // SB_ALIVE_MS of wall time to `alive_fd` (the host's connection; -1 none). The clock is
    // read every 4096 loop iterations only.
    int alive_fd = -1;
    unsigned alive_n = 0;
    std::chrono::steady_clock::time_point alive_last = std::chrono::steady_clock::now();
    void alive() {
        if (alive_fd < 0 || (++alive_n & 4095u)) return;
        auto now = std::chrono::steady_clock::now();
        if (now - alive_last < std::chrono::milliseconds(SB_ALIVE_MS)) return;
        alive_last = now;
        sb_msg a{};
        a.type = SB_ALIVE;
        a.time_ps = time_ps();
        a.data = cycles;
        if (!write_full(alive_fd, &a, sizeof a)) alive_fd = -1;
    }

    // SB_EV_HOST: the host's next request is readable on its connection. Looked at on the
    // wait's first iteration and every 1024 after (a poll() costs about a microsecond).
    unsigned host_n = 0;
    bool host_request_waiting() {
        if (alive_fd < 0 || (host_n++ & 1023u)) return false;
        pollfd p{alive_fd, POLLIN, 0};
        return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR));
    }

    // run until an event in mask, or the deadline (ps, 0 = none); returns the event
    uint32_t wait(uint32_t mask, uint64_t deadline_ps, uint64_t *addr) {
        host_n = 0;
        for (;;) {
            alive();
            if ((mask & SB_EV_HOST) && host_request_waiting()) return SB_EV_HOST;
            if ((mask & SB_EV_MSI) && !msis.empty()) {
                *addr = msis.front(); msis.pop_front(); return SB_EV_MSI;
            }
            if ((mask & SB_EV_DMA_WRITE) && dma_pending) {
                *addr = dma_addr; dma_pending = false; return SB_EV_DMA_WRITE;
            }
            if (deadline_ps && time_ps() >= deadline_ps) return 0;
            if (stop_requested) return 0;
            if (fast_forward(deadline_ps ? (deadline_ps + opt.period_ps - 1) / opt.period_ps
                                         : UINT64_MAX))
                continue;
            cycle();
        }
    }

    void run_cycles(uint64_t n) {
        uint64_t end = cycles + n;
        while (cycles < end && !stop_requested) {
            alive();
            if (!fast_forward(end)) cycle();
        }
    }

    // Fast-forward (sim/harness/README.md). When the drive is quiet (the SoC's ff_quiet: the
    // firmware waits in soc/fw_wait.py, nothing pending in the front end; held for ff_settle
    // cycles with the top's outputs idle) and the harness has nothing of its own under way,
    // every cycle up to the next event is the same: jump over them, advancing the model's
    // time and its free-running counters as the cycles would have. The next event is the
    // earliest of `host_end` (the first cycle the host request needs), the firmware's wake
    // deadline and every die's next output edge, less ff_margin cycles. With ff_check the
    // window is clocked through instead and checked. Returns true when it moved time.
    bool fast_forward(uint64_t host_end) {
        if (!opt.fast_forward || quiet_run < opt.ff_settle || !harness_idle()) return false;
        uint64_t rtl = UINT64_MAX;
        uint64_t wake_at = top->ff_wake_at;
        if (wake_at != UINT64_MAX) {
            uint64_t up = counter_value(0);
            rtl = wake_at > up ? cycles + (wake_at - up) : cycles;
        }
        long long die_ps = nand_die_fast_next_ps();
        // a flash op waits with no die edge to come: a hung die (its R/B# stuck busy);
        // clock through, so that the back end gives it up at its busy timeout's cycle
        if (die_ps == LLONG_MAX && top->ff_flash_busy) return false;
        if (die_ps != LLONG_MAX) {
            // a die evaluates at the negedge of cycle c (time c * P + P / 2) when that time
            // plus P / 2 has reached its next edge (nand_die_fast.sv)
            long long first = die_ps - (long long)(half_ps + opt.period_ps / 2);
            uint64_t c = first <= 0 ? 0 : (uint64_t(first) + opt.period_ps - 1) / opt.period_ps;
            rtl = std::min(rtl, c);
        }
        if (rtl == UINT64_MAX && host_end == UINT64_MAX) return false;  // nothing will come
        uint64_t end = std::min(host_end, rtl < opt.ff_margin ? 0 : rtl - opt.ff_margin);
        if (end <= cycles + 1) return false;
        uint64_t k = end - cycles;
        if (opt.ff_check) check_window(k);
        else jump(k);
        return true;
    }

    uint64_t ff_skipped = 0, ff_checked = 0, ff_windows = 0;

  private:
    // The free-running counters a jump advances: every register that changes on a quiet
    // cycle (the firmware's uptime first). sw/ssdlab/flows/sim_gateware.py reads this list
    // (the lines below, verbatim) into the build's fast_forward.vlt, which makes them public.
    // FF_COUNTERS: ssdlab_soc.timer0_uptime_cycles VexRiscv.CsrPlugin_mcycle
    // FF_COUNTERS: ssdlab_soc.nvme_irq_now
    static constexpr const char *FF_COUNTERS[] = {"timer0_uptime_cycles", "CsrPlugin_mcycle",
                                                  "nvme_irq_now"};
    // STAT_COUNTERS: VexRiscv.CsrPlugin_minstret VexRiscv.execute_to_memory_PC
    // STAT_COUNTERS: VexRiscv.memory_to_writeBack_PC
    // (read only: SB_INFO's fw_instret, the firmware's instructions retired; --fw-profile's
    // PCs)
    struct Counter { std::string name; void *data; unsigned bytes, bits; };
    std::vector<Counter> counters;
    std::vector<Counter> instret;           // the CPU's minstret (none: an older build)

    // Every public variable `want` of the model (one per scope that has it).
    std::vector<Counter> find_var(const char *want) {
        std::vector<Counter> out;
        for (const auto &sc : *ctx->scopeNameMap()) {
            const VerilatedVarNameMap *vars = sc.second->varsp();
            auto it = vars ? vars->find(want) : VerilatedVarNameMap::iterator();
            if (!vars || it == vars->end()) continue;
            const VerilatedVar &var = it->second;
            out.push_back({std::string(sc.first) + "." + want, var.datap(), var.entSize(),
                           var.entBits()});
            if (var.entBits() > 64 || var.udims()) {
                fprintf(stderr, "ssdlab_sim: %s is not a counter of <= 64 bits\n",
                        out.back().name.c_str());
                exit(1);
            }
        }
        return out;
    }

    void find_counters() {
        for (const char *want : FF_COUNTERS) {
            std::vector<Counter> found = find_var(want);
            if (found.size() != 1) {
                fprintf(stderr, "ssdlab_sim: fast-forward: the model has %zu public '%s' (one "
                        "expected: gateware/fast_forward.vlt); run with --fast-forward 0\n",
                        found.size(), want);
                exit(1);
            }
            counters.push_back(found[0]);
        }
    }
    static uint64_t read_counter(const Counter &c) {
        uint64_t v = 0;
        memcpy(&v, c.data, c.bytes);                          // little endian host
        return c.bits == 64 ? v : v & ((1ull << c.bits) - 1);
    }
    uint64_t counter_value(size_t i) const { return read_counter(counters[i]); }

  public:
    // --fw-profile: from the first host connection on (written at each SB_INFO, at each
    // disconnect and at exit), every clocked cycle counts once for the PC in the CPU's
    // memory stage (the instruction a bus wait stalls there, or the last one that passed
    // during a fetch bubble), so a function's count is the cycles it held the CPU; and each
    // instruction retired counts for its PC. A fast-forward jump (the CPU stalled in the
    // firmware's wait) counts apart.
    bool profiling = false;
    Counter profile_pc{}, profile_wb_pc{};
    struct PcCount { uint64_t cycles = 0, retired = 0; };
    std::unordered_map<uint32_t, PcCount> profile;
    uint64_t profile_last_instret = 0;
    uint32_t profile_last_wb = 0;

    // minstret counts the instruction the write-back stage held before this clock edge:
    // that one retired, at the PC the stage had then
    void profile_cycle() {
        profile[uint32_t(read_counter(profile_pc))].cycles++;
        uint64_t n = read_counter(instret[0]);
        if (n > profile_last_instret)       // (a CPU reset clears minstret)
            profile[profile_last_wb].retired += n - profile_last_instret;
        profile_last_instret = n;
        profile_last_wb = uint32_t(read_counter(profile_wb_pc));
    }
    uint64_t profile_skipped = 0, profile_from = 0;
    long long profile_instret0 = 0;

    void profile_start() {
        if (opt.fw_profile_path.empty() || profiling) return;
        profiling = true;
        profile_from = cycles;
        profile_instret0 = fw_instret();
        profile_last_instret = uint64_t(profile_instret0);
        profile_last_wb = uint32_t(read_counter(profile_wb_pc));
    }

    // the whole profile since the first connection, replaced at once (a reader never sees
    // half a file); a failure is reported, the run goes on
    void profile_write() const {
        if (!profiling) return;
        std::string tmp = opt.fw_profile_path + ".new";
        FILE *f = fopen(tmp.c_str(), "w");
        if (!f) {
            fprintf(stderr, "ssdlab_sim: --fw-profile %s: %s\n", tmp.c_str(), strerror(errno));
            return;
        }
        std::vector<std::pair<uint32_t, PcCount>> rows(profile.begin(), profile.end());
        std::sort(rows.begin(), rows.end(), [](auto &a, auto &b) { return a.first < b.first; });
        fprintf(f, "# ssdlab_sim fw-profile: cycles %llu skipped %llu instret %lld "
                "period_ps %llu\n# pc clocked_cycles instructions_retired\n",
                (unsigned long long)(cycles - profile_from), (unsigned long long)profile_skipped,
                fw_instret() - profile_instret0, (unsigned long long)opt.period_ps);
        for (auto &r : rows)
            fprintf(f, "%08x %llu %llu\n", r.first, (unsigned long long)r.second.cycles,
                    (unsigned long long)r.second.retired);
        if (fclose(f) != 0 || rename(tmp.c_str(), opt.fw_profile_path.c_str()) != 0)
            fprintf(stderr, "ssdlab_sim: --fw-profile %s: %s\n", opt.fw_profile_path.c_str(),
                    strerror(errno));
    }

    // The firmware's instructions retired (VexRiscv minstret), -1 when the build has none.
    long long fw_instret() const {
        return instret.size() == 1 ? (long long)read_counter(instret[0]) : -1;
    }

  private:
    void counter_add(size_t i, uint64_t k) {
        uint64_t v = counter_value(i) + k;
        if (counters[i].bits < 64) v &= (1ull << counters[i].bits) - 1;
        memcpy(counters[i].data, &v, counters[i].bytes);
    }

    bool harness_idle() {
        return to_dev.empty() && reads.empty() && arrivals.empty() && rx.empty() &&
               !cpl_waiting && !to_host.holding(time_fs()) && !from_host.holding(time_fs());
    }

    void jump(uint64_t k) {
        ctx->timeInc(k * opt.period_ps);
        cycles += k;
        for (size_t i = 0; i < counters.size(); i++) counter_add(i, k);
        ff_skipped += k;
        ff_windows++;
        if (profiling) profile_skipped += k;
    }

    // --fast-forward-check: the window must be really quiet, cycle by cycle.
    void check_window(uint64_t k) {
        uint64_t c0 = cycles, evals = nand_die_fast_evals();
        std::vector<uint64_t> before;
        for (size_t i = 0; i < counters.size(); i++) before.push_back(counter_value(i));
        uint64_t wake_at = top->ff_wake_at;
        for (uint64_t i = 0; i < k; i++) {
            cycle();
            const char *why = !top->ff_quiet ? "the SoC left its quiet state"
                : quiet_run == 0 ? "an output of the top became active"
                : nand_die_fast_evals() != evals ? "a die pin changed or a die output edge came"
                : uint64_t(top->ff_wake_at) != wake_at ? "the firmware's deadline changed"
                : !harness_idle() ? "the harness got work" : nullptr;
            if (why) {
                fprintf(stderr, "ssdlab_sim: fast-forward check failed: %s at cycle %llu, "
                        "inside the window %llu..%llu the jump would skip (wake_at %llu, next "
                        "die edge %lld ps)\n", why, (unsigned long long)cycles,
                        (unsigned long long)c0, (unsigned long long)(c0 + k),
                        (unsigned long long)wake_at, nand_die_fast_next_ps());
                exit(3);
            }
        }
        for (size_t i = 0; i < counters.size(); i++) {
            uint64_t want = before[i] + k;
            if (counters[i].bits < 64) want &= (1ull << counters[i].bits) - 1;
            if (counter_value(i) != want) {
                fprintf(stderr, "ssdlab_sim: fast-forward check failed: counter %s is %llu "
                        "after the window %llu..%llu, a jump would set %llu\n",
                        counters[i].name.c_str(), (unsigned long long)counter_value(i),
                        (unsigned long long)c0, (unsigned long long)(c0 + k),
                        (unsigned long long)want);
                exit(3);
            }
        }
        ff_checked += k;
        ff_windows++;
    }

  public:
    uint64_t ns_to_cycles(uint64_t ns) { return (ns * 1000 + opt.period_ps - 1) / opt.period_ps; }
    uint64_t time_ps() const { return cycles * opt.period_ps; }
    uint64_t time_fs() const { return time_ps() * 1000; }

    uint64_t cycles = 0, n_msi = 0, n_dma_wr = 0, n_dma_rd = 0, n_read_ur = 0, n_mmio = 0;
    std::vector<uint64_t> irq_count = std::vector<uint64_t>(SB_IRQ_VECTORS);
    uint64_t bytes_to_host = 0, bytes_from_host = 0, n_malformed = 0;
    // SB_DMA_WINDOW: the host memory the host let the device reach ([start, end) each), once
    // a host has named any; before that all of host RAM. A device access outside them is
    // refused (a write dropped, a read answered UR, as an IOMMU would) and counted.
    std::vector<std::pair<uint64_t, uint64_t>> dma_windows;
    bool dma_windowed = false;
    uint64_t n_dma_refused = 0;
    bool dma_allowed(uint64_t a, uint64_t n) const {
        if (a + n > ram_bytes || a + n < a) return false;
        if (!dma_windowed) return true;
        for (auto &w : dma_windows)
            if (a >= w.first && a + n <= w.second) return true;
        return false;
    }
    PcieLinkPacer to_host, from_host;       // the link, one pacer per direction
    unsigned cpl_fault_left[3] = {0, 0, 0};     // reads armed (SB_FAULT_CPL_*), by CPL_POISON
    uint64_t cpl_fault_page[3] = {0, 0, 0};     // / CPL_DROP; their 4 KiB page, 0: any read
    uint32_t rule_violations() const { return top->nand_rule_violations; }
    uint32_t timing_violations() const { return top->nand_timing_violations; }

  private:
    // an MSI (vector number) or MSI-X message (Message Data): an event, counted per vector
    void interrupt(uint32_t vector) {
        msis.push_back(vector);
        n_msi++;
        if (vector < SB_IRQ_VECTORS) irq_count[vector]++;
    }
    void set_msix_control(uint16_t v) {
        msix_control = v & (SB_MSIX_ENABLE | SB_MSIX_FMASK);
        top->cfg_msix_enable = (msix_control & SB_MSIX_ENABLE) != 0;
        top->cfg_msix_fm = (msix_control & SB_MSIX_FMASK) != 0;
    }

#if VM_TRACE
    bool tracing() const {
        if (!trace) return false;
        uint64_t t = ctx->time(), from = opt.trace_from_us * 1000000ull;
        return t >= from && (!opt.trace_for_us || t < from + opt.trace_for_us * 1000000ull);
    }
#endif
    // host -> device: beats of the TLP at the head of the queue
    void drive_s_tlp() {
        if (to_dev.empty() || to_dev.front().not_before > cycles) {
            top->s_tlp_tvalid = 0;
            return;
        }
        const Tlp &t = to_dev.front();
        bool last;
        top->s_tlp_tvalid = 1;
        top->s_tlp_tkeep = tlp_beats::pack(t.dw, beat, top->s_tlp_tdata, last);
        top->s_tlp_tlast = last;
    }
    void advance_s_tlp() {
        const Tlp &t = to_dev.front();
        if (tlp_beats::is_last(t.dw.size(), beat, tlp_beats::lanes(top->s_tlp_tdata))) {
            to_dev.pop_front(); beat = 0;
            to_host.received_tlp(time_fs());     // the device's Ack / UpdateFC
        } else beat++;
    }

    // device -> host
    template <class D> void take_m_beat(const D &data, uint64_t keep, bool last) {
        tlp_beats::unpack(data, keep, rx);
        if (last && !rx.empty()) {
            size_t hdr = std::min<size_t>(rx.size(), (rx[0] >> 29) & 1 ? 4 : 3);
            arrivals.push_back({link_arrival(to_host, unsigned(4 * hdr),
                                             unsigned(4 * (rx.size() - hdr))), rx, 0});
            rx.clear();
        }
    }

    // The cycle a TLP handed to `link` now has crossed it (now when the link is unpaced).
    uint64_t link_arrival(PcieLinkPacer &link, unsigned header_bytes, unsigned payload_bytes) {
        uint64_t fs = link.send_tlp(time_fs(), header_bytes, payload_bytes);
        uint64_t period_fs = opt.period_ps * 1000;
        return std::max(cycles, (fs + period_fs - 1) / period_fs);
    }

    // Device TLPs and MSIs reach the host in order, when they have crossed the link.
    void deliver_arrivals() {
        while (!arrivals.empty() && arrivals.front().at <= cycles) {
            Arrival a = std::move(arrivals.front());
            arrivals.pop_front();
            from_host.received_tlp(time_fs());   // the root complex's Ack / UpdateFC
            if (a.dw.empty()) interrupt(a.msi_vec);
            else handle_tlp(a.dw);
        }
    }

    void handle_tlp(const std::vector<uint32_t> &d) {
        if (d.size() < 3) { n_malformed++; return; }
        unsigned fmt = d[0] >> 29, type = (d[0] >> 24) & 0x1F, len = d[0] & 0x3FF;
        if (len == 0) len = 1024;
        bool four = fmt & 1, data = fmt & 2;
        size_t hdr = four ? 4 : 3;
        if (type == 0x00) {                                    // memory request
            uint64_t addr = four ? (uint64_t(d[2]) << 32) | (d[3] & ~3u) : (d[2] & ~3u);
            unsigned first_be = d[1] & 0xF, last_be = (d[1] >> 4) & 0xF;
            if (data && addr >= SB_MSI_WINDOW_BASE &&
                addr < SB_MSI_WINDOW_BASE + SB_MSI_WINDOW_BYTES) {     // an MSI-X message
                if (len != 1 || first_be != 0xF || d.size() != hdr + 1) {
                    n_malformed++;
                    return;
                }
                interrupt(bswap32(d[hdr]));
                return;
            }
            if (data) {
                if (d.size() != hdr + len) { n_malformed++; return; }
                if (dma_windowed && !dma_allowed(addr, 4ull * len)) {
                    n_dma_refused++;            // outside what the host mapped: dropped
                    return;
                }
                for (unsigned k = 0; k < len; k++) {
                    uint32_t w = bswap32(d[hdr + k]);
                    unsigned be = k == 0 ? first_be : (k == len - 1 ? last_be : 0xF);
                    for (unsigned b = 0; b < 4; b++) {
                        uint64_t a = addr + 4 * k + b;
                        if ((be >> b & 1) && a < ram_bytes) ram[a] = uint8_t(w >> (8 * b));
                    }
                }
                n_dma_wr++;
                bytes_to_host += 4 * len;
                if (!dma_pending) { dma_pending = true; dma_addr = addr; }
            } else {
                if (d.size() != hdr) { n_malformed++; return; }
                unsigned lead = first_be ? __builtin_ctz(first_be) : 0;
                unsigned trail = len == 1 ? (first_be ? 3 - (31 - __builtin_clz(first_be)) : 0)
                                          : (last_be ? 3 - (31 - __builtin_clz(last_be)) : 0);
                PendingRead r;
                r.due = cycles + ns_to_cycles(opt.read_latency_ns);
                r.requester = d[1] >> 16;
                r.tag = (d[1] >> 8) & 0xFF;
                r.dw_addr = addr;
                r.addr = addr + lead;
                r.bytes = 4 * len - lead - trail;
                r.fault = CPL_OK;
                r.logged = false;
                if (cpl_fault_left[CPL_DROP] && cpl_fault_hits(CPL_DROP, r)) r.fault = CPL_DROP;
                else if (cpl_fault_left[CPL_POISON] && cpl_fault_hits(CPL_POISON, r))
                    r.fault = CPL_POISON;
                if (r.fault) cpl_fault_left[r.fault]--;
                reads.push_back(r);
                n_dma_rd++;
            }
        } else if (type == 0x0A) {                             // completion (MMIO read)
            uint8_t tag = (d[2] >> 8) & 0xFF;
            if (cpl_waiting && tag == cpl_tag && data) {
                uint64_t v = bswap32(d[3]);
                if (len >= 2 && d.size() >= 5) v |= uint64_t(bswap32(d[4])) << 32;
                cpl_value = v; cpl_got = true;
            }
        } else {
            n_malformed++;
        }
    }

    // completions for the device's reads, in order, one per cycle budget of the link
    // SB_FAULT_CPL_POISON / SB_FAULT_CPL_TIMEOUT: read `r` is one the armed fault takes
    // (any read, or one touching the armed 4 KiB page).
    bool cpl_fault_hits(int f, const PendingRead &r) const {
        uint64_t page = cpl_fault_page[f];
        return page == 0 || (r.addr < page + 4096 && r.addr + r.bytes > page);
    }
    void cpl_fault_log(PendingRead &r) {
        fprintf(stderr, "ssdlab_sim: fault injected at %.3f us: DMA read of %u bytes at "
                "0x%llx (tag %u) %s\n", double(time_ps()) / 1e6, r.bytes,
                (unsigned long long)r.addr, unsigned(r.tag),
                r.fault == CPL_DROP ? "never answered (completion timeout)"
                                    : "answered with poisoned completions (EP)");
        r.logged = true;
    }

    void serve_reads() {
        if (reads.empty() || reads.front().due > cycles || from_host.holding(time_fs())) return;
        PendingRead &r = reads.front();
        if (r.fault == CPL_DROP) {          // the host loses it: no completion ever
            cpl_fault_log(r);
            reads.pop_front();
            return;
        }
        if (r.fault == CPL_POISON && !r.logged) cpl_fault_log(r);
        if (!dma_allowed(r.addr, r.bytes)) {
            // beyond host RAM or outside the host's DMA windows: Unsupported Request, as a
            // root complex (or its IOMMU) answers a read of memory that is not there or not
            // mapped; no data, byte count 0 (cocotbext-pcie's)
            if (r.addr + r.bytes <= ram_bytes) n_dma_refused++;
            Tlp t;
            t.dw.push_back(0x0Au << 24);
            t.dw.push_back((uint32_t(ROOT_ID) << 16) | (1u << 13));
            t.dw.push_back((uint32_t(r.requester) << 16) | (uint32_t(r.tag) << 8));
            t.not_before = link_arrival(from_host, 12, 0);
            to_dev.push_back(t);
            n_read_ur++;
            reads.pop_front();
            return;
        }
        unsigned mps = std::min(128u << opt.mps_code, 512u);
        uint64_t end = r.addr + r.bytes;
        uint64_t stop = std::min<uint64_t>(end, (r.addr / mps + 1) * mps);
        uint64_t first_dw = r.addr & ~3ull, last_dw = (stop + 3) & ~3ull;
        uint32_t ndw = uint32_t((last_dw - first_dw) / 4);
        Tlp t;
        t.dw.push_back((0b010u << 29) | (0x0Au << 24) | (r.fault == CPL_POISON ? 1u << 14 : 0) |
                       (ndw & 0x3FF));
        t.dw.push_back((uint32_t(ROOT_ID) << 16) | (r.bytes & 0xFFF));
        t.dw.push_back((uint32_t(r.requester) << 16) | (uint32_t(r.tag) << 8) | (r.addr & 0x7F));
        for (uint32_t k = 0; k < ndw; k++) {
            uint64_t a = first_dw + 4 * k;
            uint32_t w = 0;
            for (unsigned b = 0; b < 4; b++)
                w |= uint32_t(a + b < ram_bytes ? ram[a + b] : 0xFF) << (8 * b);
            t.dw.push_back(bswap32(w));
        }
        t.not_before = link_arrival(from_host, 12, 4 * ndw);
        to_dev.push_back(t);
        bytes_from_host += 4 * ndw;
        r.bytes -= uint32_t(stop - r.addr);
        r.addr = stop;
        if (r.bytes == 0) reads.pop_front();
    }

    const Options &opt;
    VerilatedContext *ctx;
    Vssdlab_sim_top *top;
#if VM_TRACE
    VerilatedFstC *trace = nullptr;
#endif
    uint64_t half_ps;
    uint64_t quiet_run = 0;                 // cycles ff_quiet has held with idle outputs
    unsigned long long last_evals = 0;      // nand_die_fast_evals() after the last cycle
    uint8_t *ram = nullptr;
    uint64_t ram_bytes = 0;
    std::deque<Tlp> to_dev;
    size_t beat = 0;
    std::vector<uint32_t> rx;
    std::deque<Arrival> arrivals;
    std::deque<PendingRead> reads;
    std::deque<uint32_t> msis;
    uint16_t msix_control = 0;              // MSI-X Message Control bits 15:14
    bool dma_pending = false;
    uint64_t dma_addr = 0;
    uint8_t next_tag = 0;
    bool cpl_waiting = false, cpl_got = false;
    uint8_t cpl_tag = 0;
    uint64_t cpl_value = 0;
};

bool read_full(int fd, void *buf, size_t n) {
    auto *p = static_cast<uint8_t *>(buf);
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR && !stop_requested) continue;
        if (r <= 0) return false;
        p += r; n -= size_t(r);
    }
    return true;
}

bool write_full(int fd, const void *buf, size_t n) {
    auto *p = static_cast<const uint8_t *>(buf);
    while (n) {
        ssize_t r = write(fd, p, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        p += r; n -= size_t(r);
    }
    return true;
}

void usage() {
    fprintf(stderr,
            "usage: ssdlab_sim [--socket PATH] [--ram PATH] [--ram-mib N] [--period-ps N]\n"
            "                  [--host-delay-ns N] [--read-latency-ns N] [--mps 128|256|512]\n"
            "                  [--mrrs 128|256|512] [--boot-us N] [--trace FILE.fst]\n"
            "                  [--trace-from-us N] [--trace-for-us N] [--once]\n"
            "                  [--quiet-uart] [--link-fs-per-byte N] [--link-tlp-overhead N]\n"
            "                  [--link-header-on-wire 0|1] [--link-dllp-bytes N]\n"
            "                  [--link-ack-every N] [--link-fc-every N]\n"
            "                  [--fast-forward 0|1] [--fast-forward-check]\n"
            "                  [--ff-settle N] [--ff-margin N] [--fw-profile FILE]\n");
}

bool parse(int argc, char **argv, Options &o) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&](const char *name) -> const char * {
            if (i + 1 >= argc) { fprintf(stderr, "ssdlab_sim: %s needs a value\n", name); exit(2); }
            return argv[++i];
        };
        auto num = [&](const char *name) -> uint64_t {
            const char *v = val(name);
            char *end;
            errno = 0;
            unsigned long long n = strtoull(v, &end, 0);
            if (errno || *end || !*v) {
                fprintf(stderr, "ssdlab_sim: %s: '%s' is not a number\n", name, v);
                exit(2);
            }
            return n;
        };
        auto code = [&](const char *name) -> unsigned {
            uint64_t b = num(name);
            if (b != 128 && b != 256 && b != 512) {
                fprintf(stderr, "ssdlab_sim: %s must be 128, 256 or 512, got %llu\n", name,
                        (unsigned long long)b);
                exit(2);
            }
            return b == 128 ? 0 : b == 256 ? 1 : 2;
        };
        if (a == "--socket") o.socket_path = val("--socket");
        else if (a == "--ram") o.ram_path = val("--ram");
        else if (a == "--ram-mib") o.ram_bytes = num("--ram-mib") << 20;
        else if (a == "--period-ps") o.period_ps = num("--period-ps");
        else if (a == "--host-delay-ns") o.host_delay_ns = num("--host-delay-ns");
        else if (a == "--read-latency-ns") o.read_latency_ns = num("--read-latency-ns");
        else if (a == "--mps") o.mps_code = code("--mps");
        else if (a == "--mrrs") o.mrrs_code = code("--mrrs");
        else if (a == "--boot-us") o.boot_us = num("--boot-us");
        else if (a == "--trace") o.trace_path = val("--trace");
        else if (a == "--trace-from-us") o.trace_from_us = num("--trace-from-us");
        else if (a == "--trace-for-us") o.trace_for_us = num("--trace-for-us");
        else if (a == "--once") o.once = true;
        else if (a == "--quiet-uart") o.quiet_uart = true;
        else if (a == "--link-fs-per-byte") o.link.fs_per_byte = num(a.c_str());
        else if (a == "--link-tlp-overhead") o.link.tlp_overhead = unsigned(num(a.c_str()));
        else if (a == "--link-header-on-wire") o.link.header_on_wire = num(a.c_str()) != 0;
        else if (a == "--link-dllp-bytes") o.link.dllp_bytes = unsigned(num(a.c_str()));
        else if (a == "--link-ack-every") o.link.ack_every = unsigned(num(a.c_str()));
        else if (a == "--link-fc-every") o.link.fc_every = unsigned(num(a.c_str()));
        else if (a == "--fast-forward") {
            uint64_t v = num("--fast-forward");
            if (v > 1) {
                fprintf(stderr, "ssdlab_sim: --fast-forward must be 0 or 1, got %llu\n",
                        (unsigned long long)v);
                exit(2);
            }
            o.fast_forward = v != 0;
        }
        else if (a == "--fast-forward-check") o.ff_check = o.fast_forward = true;
        else if (a == "--ff-settle") o.ff_settle = num("--ff-settle");
        else if (a == "--ff-margin") o.ff_margin = num("--ff-margin");
        else if (a == "--fw-profile") o.fw_profile_path = val("--fw-profile");
        else if (a == "-h" || a == "--help") { usage(); exit(0); }
        else if (a.rfind("+verilator", 0) == 0) continue;
        else { fprintf(stderr, "ssdlab_sim: unknown option '%s'\n", a.c_str()); usage(); return false; }
    }
    if (o.ram_path.empty()) o.ram_path = o.socket_path + ".ram";
    if (o.ram_path[0] != '/') {              // HELLO names it to a host in another directory
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd)) o.ram_path = std::string(cwd) + "/" + o.ram_path;
    }
    if (o.period_ps < 2) { fprintf(stderr, "ssdlab_sim: --period-ps must be >= 2\n"); return false; }
    if (o.ram_bytes < (1u << 20)) { fprintf(stderr, "ssdlab_sim: --ram-mib must be >= 1\n"); return false; }
    return true;
}

void on_signal(int) { stop_requested = 1; }

}  // namespace

int main(int argc, char **argv) {
    Options opt;
    if (!parse(argc, argv, opt)) return 2;
    auto ctx = new VerilatedContext;
    ctx->commandArgs(argc, argv);
    ctx->timeunit(-12);
    ctx->timeprecision(-12);

    // Host RAM.
    int rfd = open(opt.ram_path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (rfd < 0 || ftruncate(rfd, off_t(opt.ram_bytes)) != 0) {
        fprintf(stderr, "ssdlab_sim: host RAM file %s: %s\n", opt.ram_path.c_str(), strerror(errno));
        return 1;
    }
    auto *ram = static_cast<uint8_t *>(mmap(nullptr, opt.ram_bytes, PROT_READ | PROT_WRITE,
                                            MAP_SHARED, rfd, 0));
    if (ram == MAP_FAILED) { perror("ssdlab_sim: mmap"); return 1; }

    // Socket.
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    // bound and listening under a temporary name, then renamed: a host that finds the socket's
    // path can connect at once (between bind and listen a connect is refused)
    const std::string bind_path = opt.socket_path + ".new";
    if (bind_path.size() >= sizeof sa.sun_path) {
        fprintf(stderr, "ssdlab_sim: socket path too long (at most %zu characters): %s\n",
                sizeof sa.sun_path - 5, opt.socket_path.c_str());
        return 2;
    }
    strcpy(sa.sun_path, bind_path.c_str());
    unlink(opt.socket_path.c_str());
    unlink(bind_path.c_str());
    struct sigaction sa_stop {};
    sa_stop.sa_handler = on_signal;          // no SA_RESTART: a blocked read or accept returns
    sigaction(SIGINT, &sa_stop, nullptr);
    sigaction(SIGTERM, &sa_stop, nullptr);
    signal(SIGPIPE, SIG_IGN);

    Drive drive(opt, ctx);
    drive.map_ram(ram, opt.ram_bytes);
    auto wall0 = std::chrono::steady_clock::now();
    if (opt.boot_us) drive.run_cycles(drive.ns_to_cycles(opt.boot_us * 1000));
    // the socket appears once the boot has run: a host that finds it gets its HELLO answered
    // at once (during the boot no keepalive could reach it)
    if (bind(lfd, (sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 1) != 0 ||
        rename(bind_path.c_str(), opt.socket_path.c_str()) != 0) {
        fprintf(stderr, "ssdlab_sim: socket %s: %s\n", opt.socket_path.c_str(), strerror(errno));
        return 1;
    }
    fprintf(stderr, "ssdlab_sim: drive up at %.3f us simulated; attach with "
            "SSDLAB_SIM_SOCKET=%s (host RAM %s, %llu MiB)\n", drive.time_ps() / 1e6,
            opt.socket_path.c_str(), opt.ram_path.c_str(),
            (unsigned long long)(opt.ram_bytes >> 20));

    bool quit = false;
    while (!quit && !stop_requested) {
        int cfd = accept(lfd, nullptr, nullptr);
        if (cfd < 0) { if (errno == EINTR) continue; perror("ssdlab_sim: accept"); break; }
        drive.profile_start();
        sb_msg m;
        while (!stop_requested && read_full(cfd, &m, sizeof m)) {
            drive.alive_fd = cfd;
            drive.alive_last = std::chrono::steady_clock::now();
            sb_msg r{};
            r.type = m.type;
            switch (m.type) {
            case SB_HELLO:
                if (m.data != SB_VERSION) { r.status = SB_ERR_VERSION; break; }
                r.data = opt.ram_bytes;
                r.addr = opt.period_ps;
                r.size = 32;
                snprintf(r.name, sizeof r.name, "%s", opt.ram_path.c_str());
                break;
            case SB_MMIO_WRITE:
            case SB_MMIO_READ:
                if ((m.size != 4 && m.size != 8) || (m.addr & (m.size - 1)) ||
                    m.addr + m.size > 0x4000) { r.status = SB_ERR_ARG; break; }
                if (m.type == SB_MMIO_WRITE) drive.mmio_write(m.addr, m.size, m.data);
                else if (!drive.mmio_read(m.addr, m.size, &r.data)) r.status = SB_ERR_TIMEOUT;
                break;
            case SB_WAIT: {
                uint64_t a = 0;
                r.size = drive.wait(m.size, m.data, &a);
                r.addr = a;
                break;
            }
            case SB_ADVANCE:
                drive.run_cycles((m.data + opt.period_ps - 1) / opt.period_ps);
                break;
            case SB_CFG_READ:
                if (m.size != 4 || !drive.cfg_read(m.addr, &r.data)) r.status = SB_ERR_ARG;
                break;
            case SB_CFG_WRITE:
                if ((m.size != 2 && m.size != 4) || !drive.cfg_write(m.addr, m.size, m.data))
                    r.status = SB_ERR_ARG;
                break;
            case SB_IRQ_COUNTS: {
                uint64_t n = 0;
                for (; n < SB_IRQ_COUNTS_MAX && m.addr + n < SB_IRQ_VECTORS; n++) {
                    uint64_t c = drive.irq_count[m.addr + n];
                    memcpy(r.name + 8 * n, &c, 8);          // little endian (x86, RISC-V hosts)
                }
                r.size = uint32_t(n);
                r.data = SB_IRQ_VECTORS;
                break;
            }
            case SB_RESET:
                if (m.size & ~uint32_t(SB_RESET_POWER_CUT)) { r.status = SB_ERR_ARG; break; }
                // a power cut: the dies lose power too, now (in-flight programs and erases
                // torn, registers and features lost); then the reset as for a power cycle
                if (m.size & SB_RESET_POWER_CUT) {
                    long long torn = 0;
                    r.data = uint64_t(nand_die_fast_power_cut((long long)drive.time_ps(), &torn));
                    r.addr = uint64_t(torn);
                }
                drive.reset(unsigned(drive.ns_to_cycles(m.data ? m.data : 1000)));
                break;
            case SB_INFO: {
                drive.profile_write();          // a snapshot the host's window starts or ends at
                double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                            wall0).count();
                r.data = drive.cycles;
                r.addr = drive.n_msi;
                r.size = uint32_t(drive.n_dma_wr);
                long long bits_read, bit_errors;
                nand_die_fast_error_stats(&bits_read, &bit_errors);
                snprintf(r.name, sizeof r.name,
                         "wall_s=%.3f ff_skipped=%llu dma_rd=%llu to_host_B=%llu "
                         "from_host_B=%llu mmio=%llu malformed=%llu nand_rules=%u "
                         "nand_timing=%u link_to_ns=%llu link_from_ns=%llu msix=%d "
                         "fw_instret=%lld nand_bits_read=%lld nand_bit_errors=%lld "
                         "dma_refused=%llu", wall,
                         (unsigned long long)(drive.ff_skipped + drive.ff_checked),
                         (unsigned long long)drive.n_dma_rd,
                         (unsigned long long)drive.bytes_to_host,
                         (unsigned long long)drive.bytes_from_host,
                         (unsigned long long)drive.n_mmio,
                         (unsigned long long)drive.n_malformed, drive.rule_violations(),
                         drive.timing_violations(),
                         (unsigned long long)(drive.to_host.busy_fs / 1000000),
                         (unsigned long long)(drive.from_host.busy_fs / 1000000),
                         int(drive.msix_enabled()), drive.fw_instret(), bits_read,
                         bit_errors, (unsigned long long)drive.n_dma_refused);
                break;
            }
            case SB_QUIT:
                quit = true;
                break;
            case SB_FAULT: {
                // the sim top names die (channel, way) DIE_ID channel x 8 + way
                // (sw/ssdlab/flows/sim_gateware.py)
                unsigned ch = m.data & 0xFF, way = m.data >> 8 & 0xFF, lun = m.data >> 16 & 0xFF;
                int rc = -1;
                if (m.size == SB_FAULT_BAD_BLOCK && way < 8 && m.addr <= 0xFFFFFF)
                    rc = nand_die_fast_bad_block(int(ch * 8 + way), int(lun), int(m.addr));
                else if (m.size == SB_FAULT_BIT_ERRORS && way < 8 && m.addr <= 500000000ull)
                    rc = nand_die_fast_bit_errors(int(ch * 8 + way), int(lun),
                                                  double(m.addr) / 1e9);
                else if (m.size == SB_FAULT_DIE_FAIL && way < 8)
                    rc = nand_die_fast_die_fail(int(ch * 8 + way), int(lun));
                else if (m.size == SB_FAULT_STUCK_BUSY && way < 8 && m.addr <= 1)
                    rc = nand_die_fast_stuck_busy(int(ch * 8 + way), int(lun), int(m.addr));
                else if ((m.size == SB_FAULT_CPL_POISON || m.size == SB_FAULT_CPL_TIMEOUT) &&
                         m.data >= 1 && m.data <= 255) {
                    // host link faults: logged when a read is hit (serve_reads), not here
                    int f = m.size == SB_FAULT_CPL_POISON ? CPL_POISON : CPL_DROP;
                    drive.cpl_fault_left[f] = unsigned(m.data);
                    drive.cpl_fault_page[f] = m.addr & ~0xFFFull;
                    r.data = m.data;
                    break;
                }
                if (rc < 0) r.status = SB_ERR_ARG;
                else r.data = uint64_t(rc);
                if (rc > 0 && m.size == SB_FAULT_DIE_FAIL)
                    fprintf(stderr, "ssdlab_sim: fault injected at %.3f us: channel %u way %u "
                            "LUN %u failed\n", double(drive.time_ps()) / 1e6, ch, way, lun);
                else if (rc > 0 && m.size == SB_FAULT_STUCK_BUSY)
                    fprintf(stderr, "ssdlab_sim: fault injected at %.3f us: channel %u way %u "
                            "LUN %u hangs (R/B# stuck busy %s)\n",
                            double(drive.time_ps()) / 1e6, ch, way, lun,
                            m.addr ? "for good" : "until a RESET");
                else if (rc > 0 && m.size == SB_FAULT_BAD_BLOCK)
                    fprintf(stderr, "ssdlab_sim: fault injected at %.3f us: channel %u way %u "
                            "LUN %u block %llu grown bad\n", double(drive.time_ps()) / 1e6, ch,
                            way, lun, (unsigned long long)m.addr);
                else if (rc > 0)
                    fprintf(stderr, "ssdlab_sim: fault injected at %.3f us: channel %u way %u "
                            "LUN %u reads flip bits at %g more\n",
                            double(drive.time_ps()) / 1e6, ch, way, lun, double(m.addr) / 1e9);
                break;
            }
            case SB_BAKE:
                if (m.data < 1 || m.data > 1000000000ull) { r.status = SB_ERR_ARG; break; }
                r.data = uint64_t(nand_die_fast_bake(double(m.data) / 1000.0));
                break;
            case SB_DMA_WINDOW:
                if (m.size == SB_DMA_WINDOW_ALL) {
                    drive.dma_windows.clear();
                    drive.dma_windowed = false;
                } else if (m.size == SB_DMA_WINDOW_ADD && m.data && m.addr + m.data > m.addr &&
                           m.addr + m.data <= opt.ram_bytes) {
                    drive.dma_windows.emplace_back(m.addr, m.addr + m.data);
                    drive.dma_windowed = true;
                } else if (m.size == SB_DMA_WINDOW_REMOVE) {
                    auto &w = drive.dma_windows;
                    auto it = std::find_if(w.begin(), w.end(),
                                           [&](auto &x) { return x.first == m.addr; });
                    if (it == w.end()) { r.status = SB_ERR_ARG; break; }
                    w.erase(it);            // still windowed: none left allows nothing
                } else {
                    r.status = SB_ERR_ARG;
                }
                r.data = drive.dma_windows.size();
                break;
            case SB_PRECYCLE:
                if (m.data < 1 || m.data > 10000000ull) { r.status = SB_ERR_ARG; break; }
                r.data = uint64_t(nand_die_fast_precycle((long long)m.data));
                if (r.data)
                    fprintf(stderr, "ssdlab_sim: %llu dies pre-cycled %llu P/E cycles at "
                            "%.3f us\n", (unsigned long long)r.data,
                            (unsigned long long)m.data, double(drive.time_ps()) / 1e6);
                break;
            default:
                r.status = SB_ERR_TYPE;
            }
            r.time_ps = drive.time_ps();
            drive.alive_fd = -1;
            if (!write_full(cfd, &r, sizeof r) || quit) break;
        }
        close(cfd);
        drive.profile_write();              // a host's window ends at its disconnect
        if (opt.once) break;
    }
    double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
    fprintf(stderr, "ssdlab_sim: %llu cycles (%.3f ms simulated) in %.1f s wall: %.0f cycles/s; "
            "NAND rule violations %u, timing violations %u, malformed TLPs %llu, device reads "
            "beyond host RAM (UR) %llu, outside the host's DMA windows (refused) %llu; fast-forward %s: %llu cycles %s in %llu windows (%.1f %%)\n",
            (unsigned long long)drive.cycles, drive.time_ps() / 1e9, wall,
            wall > 0 ? drive.cycles / wall : 0.0, drive.rule_violations(),
            drive.timing_violations(), (unsigned long long)drive.n_malformed,
            (unsigned long long)drive.n_read_ur, (unsigned long long)drive.n_dma_refused,
            !opt.fast_forward ? "off" : opt.ff_check ? "checked" : "on",
            (unsigned long long)(drive.ff_skipped + drive.ff_checked),
            opt.ff_check ? "checked" : "skipped", (unsigned long long)drive.ff_windows,
            drive.cycles ? 100.0 * (drive.ff_skipped + drive.ff_checked) / drive.cycles : 0.0);
    drive.profile_write();
    close(lfd);
    unlink(opt.socket_path.c_str());
    munmap(ram, opt.ram_bytes);
    close(rfd);
    return 0;
}
