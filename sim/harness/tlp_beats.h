// SPDX-License-Identifier: BSD-2-Clause
// tlp_beats.h: a TLP's dwords <-> the beats of PCIeSimPHY's s_tlp / m_tlp streams, at any
// data_width 64..512 (rtl/pcie/pcie_sim_phy.py states the format: dword n of a TLP in lane
// n % L of beat n / L, L = data_width / 32, lane 0 at bits 31:0; tkeep one bit per byte, 0
// past the TLP's end; every TLP starts a new beat). Verilator gives tdata as uint64_t up to
// 64 bits and as VlWide<N> (N 32-bit words, operator[]) above; tkeep is an integer type
// (up to 64 bits at 512). A beat with tkeep 0 carries no dwords (LitePCIe may end an MWr
// with one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <verilated.h>

namespace tlp_beats {

inline constexpr unsigned lanes(const uint64_t &) { return 2; }
template <std::size_t N> inline constexpr unsigned lanes(const VlWide<N> &) { return N; }

inline void set_lane(uint64_t &d, unsigned i, uint32_t v) {
    d = i ? (d & 0xFFFFFFFFull) | (uint64_t(v) << 32) : (d & ~0xFFFFFFFFull) | v;
}
template <std::size_t N> inline void set_lane(VlWide<N> &d, unsigned i, uint32_t v) { d[i] = v; }

inline uint32_t get_lane(const uint64_t &d, unsigned i) { return uint32_t(d >> (32 * i)); }
template <std::size_t N> inline uint32_t get_lane(const VlWide<N> &d, unsigned i) {
    return d[i];
}

// Beat `beat` of the TLP `dw` into `data`; returns tkeep, sets `last`.
template <class D>
uint64_t pack(const std::vector<uint32_t> &dw, std::size_t beat, D &data, bool &last) {
    const unsigned L = lanes(data);
    const std::size_t first = beat * L, n = dw.size();
    uint64_t keep = 0;
    for (unsigned i = 0; i < L; i++) {
        bool in = first + i < n;
        set_lane(data, i, in ? dw[first + i] : 0);
        if (in) keep |= 0xFull << (4 * i);
    }
    last = first + L >= n;
    return keep;
}

// Whether beat `beat` is the last of a TLP of `n` dwords on `lanes` lanes.
inline bool is_last(std::size_t n, std::size_t beat, unsigned lanes) {
    return (beat + 1) * lanes >= n;
}

// The dwords of a device -> host beat (those whose tkeep nibble is set) appended to `rx`.
template <class D> void unpack(const D &data, uint64_t keep, std::vector<uint32_t> &rx) {
    const unsigned L = lanes(data);
    for (unsigned i = 0; i < L; i++)
        if ((keep >> (4 * i)) & 0xF) rx.push_back(get_lane(data, i));
}

}  // namespace tlp_beats
