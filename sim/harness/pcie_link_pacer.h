// SPDX-License-Identifier: BSD-2-Clause
// pcie_link_pacer.h: one direction of the host link in the harness. A TLP occupies the wire
// for its wire time; the next TLP in that direction starts when the previous one has left;
// the Ack and UpdateFC DLLPs that answer the other direction's TLPs share this wire.
//
// The figures are spec/pcie_link.py's, passed by `harness_args(link)`: femtoseconds per byte
// (line coding and SKP ordered sets included), bytes of framing + sequence number + LCRC per
// TLP, whether TLP headers occupy the wire (PCIe yes; a SATA cap counts payload only), DLLP
// bytes, and one Ack per `ack_every`, one UpdateFC per `fc_every` TLPs received (0: none).
// fs_per_byte = 0 means no link: every TLP leaves at once (the unpaced harness).
#pragma once

#include <algorithm>
#include <cstdint>

struct PcieLinkParams {
    uint64_t fs_per_byte = 0;
    unsigned tlp_overhead = 8;
    bool header_on_wire = true;
    unsigned dllp_bytes = 8;
    unsigned ack_every = 2;
    unsigned fc_every = 4;
};

class PcieLinkPacer {
  public:
    explicit PcieLinkPacer(const PcieLinkParams &p) : p(p) {}

    // A TLP of header_bytes + payload_bytes handed to the link at now_fs: returns the time its
    // last byte has crossed (the receiver has it whole, LCRC checked).
    uint64_t send_tlp(uint64_t now_fs, unsigned header_bytes, unsigned payload_bytes) {
        uint64_t bytes = p.tlp_overhead + (p.header_on_wire ? header_bytes : 0) + payload_bytes;
        uint64_t start = std::max(now_fs, free_fs);
        last_start = start;
        free_fs = start + bytes * p.fs_per_byte;
        busy_fs += bytes * p.fs_per_byte;
        n_tlp++;
        return free_fs;
    }

    // The other direction delivered a TLP at now_fs: its receiver's Ack / UpdateFC DLLPs
    // go out on this wire.
    void received_tlp(uint64_t now_fs) {
        n_rx++;
        if (p.ack_every && n_rx % p.ack_every == 0) send_dllp(now_fs);
        if (p.fc_every && n_rx % p.fc_every == 0) send_dllp(now_fs);
    }

    // A TLP handed over is still waiting for the wire (a PHY with one TLP of buffering is
    // full): the sender must hold the next one.
    bool holding(uint64_t now_fs) const { return last_start > now_fs; }

    void reset() { free_fs = last_start = 0; n_rx = 0; }

    uint64_t busy_fs = 0, n_tlp = 0, n_dllp = 0;

  private:
    void send_dllp(uint64_t now_fs) {
        uint64_t start = std::max(now_fs, free_fs);
        free_fs = start + uint64_t(p.dllp_bytes) * p.fs_per_byte;
        busy_fs += uint64_t(p.dllp_bytes) * p.fs_per_byte;
        n_dllp++;
    }

    PcieLinkParams p;
    uint64_t free_fs = 0, last_start = 0, n_rx = 0;
};
