/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ssdlab_bridge.h - the host bridge protocol between the simulated drive (sim/harness, the
 * Verilator C++ harness) and host software (sw/lib's simulation transport).
 *
 * Two processes. The harness owns the simulation; the host (one process: the CLI, fio, a
 * test) owns the driver. They share:
 *
 *   host RAM   a file of `ram_bytes` bytes (HELLO reply), mmap()ed MAP_SHARED by both. A
 *              host physical (bus) address A is byte A of the file: the DUT's memory reads
 *              and writes (DMA) land there; the host builds queues and PRPs there.
 *   channel    a Unix stream socket; fixed-size little-endian messages (struct sb_msg).
 *
 * Lockstep: the simulation advances only while it serves a host request, so simulated time
 * does not depend on how fast either process runs. The host's own reaction time is modelled:
 * every MMIO request first advances the simulation by the harness's host delay
 * (--host-delay-ns, the same for every request), then puts the TLP on the link. Reading host
 * RAM costs the host nothing; to let time pass the host sends WAIT (until an event) or
 * ADVANCE (a fixed time). Every reply carries the simulated time `time_ps` after the request.
 * The same request sequence therefore gives the same cycle counts, run after run.
 *
 * Requests (host -> harness), each answered by exactly one reply of the same type:
 *   SB_HELLO       data = SB_VERSION. Reply: data = ram_bytes, addr = clock period in ps,
 *                  size = n_msi_vectors, name = the RAM file's path (NUL-terminated).
 *   SB_MMIO_WRITE  BAR0 offset `addr`, `size` 4 or 8 bytes, value `data` (posted: the reply
 *                  only acknowledges; the write reaches the device after the host delay).
 *   SB_MMIO_READ   BAR0 offset `addr`, `size` 4 or 8. Reply: data = the value read, at the
 *                  time its completion reached the host (a completion timeout: status != 0).
 *   SB_WAIT        run until an event or until simulated time `data` ps (0: no deadline).
 *                  size = event mask (SB_EV_*). Reply: size = the event that stopped it (0: the
 *                  deadline), addr = MSI vector, or the host address of the DMA write.
 *   SB_ADVANCE     run `data` ps. Reply: time.
 *   SB_INFO        Reply: data = cycles simulated, addr = MSIs sent, size = DMA writes seen;
 *                  name = "key=value ..." statistics (TLPs, bytes, wall seconds).
 *   SB_RESET       power cycle of the device: everything but the NAND dies (and host RAM) is
 *                  reset for `data` ns (0: 1 us), as at power-on; then the firmware boots again.
 *   SB_QUIT        the harness finishes (flushes waves, prints statistics) and exits.
 * A request the harness cannot take (unknown type, bad size, offset outside BAR0) gets a reply
 * with status = SB_ERR_* and the simulation unchanged.
 */
#ifndef SSDLAB_BRIDGE_H
#define SSDLAB_BRIDGE_H

#include <stdint.h>

#define SB_VERSION 1u

enum sb_type {
    SB_HELLO      = 1,
    SB_MMIO_WRITE = 2,
    SB_MMIO_READ  = 3,
    SB_WAIT       = 4,
    SB_ADVANCE    = 5,
    SB_INFO       = 6,
    SB_QUIT       = 7,
    SB_RESET      = 8,
};

/* SB_WAIT event mask bits (and the reply's `size`: the one that happened). */
enum sb_event {
    SB_EV_MSI       = 1u << 0,  /* the device sent an MSI; addr = vector */
    SB_EV_DMA_WRITE = 1u << 1,  /* the device wrote host RAM; addr = first byte written */
};

enum sb_status {
    SB_OK           = 0,
    SB_ERR_TYPE     = 1,        /* unknown request type */
    SB_ERR_ARG      = 2,        /* bad size or offset */
    SB_ERR_TIMEOUT  = 3,        /* MMIO read: no completion within the harness's limit */
    SB_ERR_VERSION  = 4,        /* HELLO: protocol version differs */
};

#define SB_NAME_BYTES 192

struct sb_msg {
    uint32_t type;              /* enum sb_type */
    uint32_t status;            /* replies: enum sb_status; requests: 0 */
    uint32_t size;
    uint32_t reserved;
    uint64_t addr;
    uint64_t data;
    uint64_t time_ps;           /* replies: simulated time when the reply was made */
    char     name[SB_NAME_BYTES];
};

#endif /* SSDLAB_BRIDGE_H */
