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
 *                  size = n_msi_vectors (MSI), name = the RAM file's path (NUL-terminated).
 *   SB_MMIO_WRITE  BAR0 offset `addr`, `size` 4 or 8 bytes, value `data` (posted: the reply
 *                  only acknowledges; the write reaches the device after the host delay).
 *   SB_MMIO_READ   BAR0 offset `addr`, `size` 4 or 8. Reply: data = the value read, at the
 *                  time its completion reached the host (a completion timeout: status != 0).
 *   SB_WAIT        run until an event or until simulated time `data` ps (0: no deadline).
 *                  size = event mask (SB_EV_*). Reply: size = the event that stopped it (0: the
 *                  deadline), addr = the interrupt's vector (SB_EV_MSI), or the host address
 *                  of the DMA write. With SB_EV_HOST the wait also ends as soon as the
 *                  host's next request is on the socket (the harness looks every 1024
 *                  cycles, and at once when the wait starts): a host that serves someone
 *                  else (sim/vm_bridge: a virtual machine) lets the drive run while nothing
 *                  happens and gets it back within about a millisecond of wall time when
 *                  its client speaks. The reply comes first, then the request is served.
 *   SB_ADVANCE     run `data` ps. Reply: time.
 *   SB_INFO        Reply: data = cycles simulated, addr = interrupts sent (MSI and MSI-X),
 *                  size = DMA writes seen; name = "key=value ..." statistics (TLPs, bytes,
 *                  wall seconds, ff_skipped=<cycles the fast-forward jumped over>, msix=0|1:
 *                  MSI-X Enable, fw_instret=<the firmware's instructions retired: the CPU's
 *                  minstret; -1 for a build without it>, dma_refused=<device accesses
 *                  outside the DMA windows>).
 *   SB_CFG_READ    configuration space dword at offset `addr` (size 4). Reply: data. The
 *                  bridge models only the MSI-X capability at SB_CFG_MSIX_CAP (below); other
 *                  offsets, or a drive built without MSI-X, get SB_ERR_ARG.
 *   SB_CFG_WRITE   configuration space write at `addr`, `size` 2 or 4 bytes, value `data`;
 *                  only the MSI-X Message Control word (SB_CFG_MSIX_CAP + 2) is writable, its
 *                  bits 15 (MSI-X Enable) and 14 (Function Mask) reach the device. Non-posted:
 *                  the reply comes after the host delay, with the device seeing the new value.
 *   SB_IRQ_COUNTS  interrupts sent per vector since the harness started, vectors `addr` ..
 *                  addr + n - 1. Reply: size = n (<= SB_IRQ_COUNTS_MAX, 0 past the last
 *                  counted vector), data = vectors counted (SB_IRQ_VECTORS), name = n
 *                  little-endian uint64 counts.
 *   SB_RESET       power cycle of the device: everything but the NAND dies (and host RAM) is
 *                  reset for `data` ns (0: 1 us), as at power-on; then the firmware boots again.
 *                  size = SB_RESET_POWER_CUT: a power cut: the NAND dies lose power too, at
 *                  the request's time (any cycle the host chose by WAIT / ADVANCE): a program
 *                  or erase in flight is torn (the page holds random data, the block needs
 *                  another erase), page registers and features are lost, and each die needs
 *                  its first RESET again; the arrays keep what they hold. Reply: data = the
 *                  dies cut (0 for a drive built with the NAND emulator, which is reset as
 *                  for a power cycle), addr = the pages and blocks whose program or erase
 *                  the cut tore. Other size bits: SB_ERR_ARG.
 *   SB_QUIT        the harness finishes (flushes waves, prints statistics) and exits.
 *   SB_BAKE        a retention bake of the NAND: every die's programmed pages age `data`
 *                  thousandths of an hour (1 .. 10^9: up to 10^6 hours) on top of the
 *                  simulated time (spec/nand_errors.py), at once: no simulated time passes.
 *                  Reply: data = the dies baked (0 for a drive built with the NAND emulator,
 *                  whose pages never age). Other `data`: SB_ERR_ARG.
 *   SB_PRECYCLE    pre-cycling of the NAND: every block of every die takes `data` more P/E
 *                  cycles (1 .. 10^7), as a lab pre-cycles parts on a tester before a
 *                  wear-out test: the raw bit errors and the part's P/E limit count them
 *                  (spec/nand_errors.py); the firmware's own erase counts do not. At once:
 *                  no simulated time passes. Reply: data = the dies pre-cycled (0 for a
 *                  drive built with the NAND emulator, which does not wear). Other `data`:
 *                  SB_ERR_ARG.
 *   SB_FAULT       fault injection, `size` the fault (SB_FAULT_*):
 *                  SB_FAULT_BAD_BLOCK: a grown bad block, block `addr` (of its LUN, plane in
 *                  its low bits) of LUN data[23:16] of the die on channel data[7:0], way
 *                  data[15:8]: every program and erase of it fails from now on (FAIL).
 *                  Reply: data = 1, or 0 when the drive has no die models (the NAND
 *                  emulator). A die, LUN or block the drive lacks, another fault: SB_ERR_ARG.
 *                  SB_FAULT_BIT_ERRORS: every read of LUN data[23:16] of that die flips bits
 *                  at `addr` parts per billion (0 .. 5 x 10^8; 0 ends it) more, drawn afresh
 *                  at each read (a degraded die). Reply as for SB_FAULT_BAD_BLOCK.
 *                  SB_FAULT_DIE_FAIL: LUN data[23:16] of that die fails for good: every
 *                  program and erase FAILs, every page reads back noise. Reply as above.
 *                  SB_FAULT_STUCK_BUSY: LUN data[23:16] of that die hangs: its R/B# (and
 *                  status RDY) stays low from its next busy period on; `addr` 0: until a
 *                  RESET or a power cut brings it back, 1: for good (also through them).
 *                  Reply as above; other `addr`: SB_ERR_ARG.
 *                  SB_FAULT_CPL_POISON: the next `data` (1..255) memory reads of the
 *                  drive (with `addr` != 0: the next ones touching the 4 KiB host page at
 *                  `addr`) are answered with poisoned completions (EP, DW0 bit 14, set on
 *                  every CplD of the read; the data is sent as usual).
 *                  SB_FAULT_CPL_TIMEOUT: as SB_FAULT_CPL_POISON, but those reads are never
 *                  answered (the drive's completion timeout ends them). Arming one again
 *                  replaces its count and page. Reply to both: data = the reads armed;
 *                  data 0 or above 255: SB_ERR_ARG. The harness logs each read it hits on
 *                  stderr; armed reads stay armed through SB_RESET.
 *
 *   SB_DMA_WINDOW  the host memory the device may reach, as an IOMMU would allow it:
 *                  size = SB_DMA_WINDOW_ADD: bytes [addr, addr + data) of host RAM (the
 *                  first one ends "all of host RAM"); SB_DMA_WINDOW_REMOVE: the window that
 *                  starts at addr; SB_DMA_WINDOW_ALL: none, all of host RAM again (what a
 *                  host that never sends this gets). A device write outside them is dropped,
 *                  a read answered Unsupported Request, each counted (SB_INFO dma_refused).
 *                  sim/vm_bridge names the guest memory QEMU maps. Reply: data = the windows
 *                  now; a window past host RAM, an unknown one to remove: SB_ERR_ARG.
 *
 * Keepalive (harness -> host, not a reply): while a request keeps the simulation running
 * (WAIT, ADVANCE, an MMIO read, a RESET) the harness sends SB_ALIVE every SB_ALIVE_MS of wall
 * time: time_ps = the simulated time so far, data = cycles. The host skips them while it
 * waits for its reply; a host that hears nothing at all for much longer (sw/lib: 60 s,
 * $SSDLAB_SIM_WATCHDOG_S) knows the harness is stuck, not busy, and says so.
 *
 * Interrupts. Without MSI-X Enable the device signals MSI (the PHY's m_msi port; the vector is
 * the MSI vector number). With it, the device sends each vector's message as a memory write
 * of the Message Data to the Message Address the host put into the MSI-X table (BAR0 +
 * table offset): the harness takes a 1-dword memory write into SB_MSI_WINDOW (the x86
 * interrupt address range 0xFEE0_0000..0xFEEF_FFFF, outside host RAM) as an interrupt whose
 * vector is the Message Data, never as a DMA write. libssdlab writes entry v with address
 * SB_MSI_WINDOW_BASE and data v, so the reported vector is the table index.
 *
 * A request the harness cannot take (unknown type, bad size, offset outside BAR0) gets a reply
 * with status = SB_ERR_* and the simulation unchanged.
 */
#ifndef SSDLAB_BRIDGE_H
#define SSDLAB_BRIDGE_H

#include <stdint.h>

#define SB_VERSION 7u
#define SB_ALIVE_MS 2000u

enum sb_type {
    SB_HELLO      = 1,
    SB_MMIO_WRITE = 2,
    SB_MMIO_READ  = 3,
    SB_WAIT       = 4,
    SB_ADVANCE    = 5,
    SB_INFO       = 6,
    SB_QUIT       = 7,
    SB_RESET      = 8,
    SB_CFG_READ   = 9,
    SB_CFG_WRITE  = 10,
    SB_IRQ_COUNTS = 11,
    SB_ALIVE      = 12,
    SB_BAKE       = 13,
    SB_FAULT      = 14,
    SB_PRECYCLE   = 15,
    SB_DMA_WINDOW = 16,
};

/* SB_DMA_WINDOW's size. */
#define SB_DMA_WINDOW_ALL    0u
#define SB_DMA_WINDOW_ADD    1u
#define SB_DMA_WINDOW_REMOVE 2u

/* SB_FAULT's size: the fault injected. */
#define SB_FAULT_BAD_BLOCK  1u
#define SB_FAULT_BIT_ERRORS 2u
#define SB_FAULT_DIE_FAIL   3u
#define SB_FAULT_STUCK_BUSY 4u
#define SB_FAULT_CPL_POISON 5u
#define SB_FAULT_CPL_TIMEOUT 6u

/* SB_RESET's size: the dies lose power too (a power cut, not a power cycle). */
#define SB_RESET_POWER_CUT  1u

/* The MSI-X capability in the bridge's configuration space (PCIe 3.0 section 7.7):
 * +0 Capability ID 11h, Next Pointer, Message Control (bits 10:0 Table Size - 1, 14 Function
 * Mask, 15 MSI-X Enable); +4 Table Offset / Table BIR; +8 PBA Offset / PBA BIR. */
#define SB_CFG_MSIX_CAP     0x70u
#define SB_MSIX_ENABLE      (1u << 15)
#define SB_MSIX_FMASK       (1u << 14)

/* Memory writes into this window are interrupt messages (x86's MSI address range). */
#define SB_MSI_WINDOW_BASE  0xFEE00000ull
#define SB_MSI_WINDOW_BYTES 0x00100000ull

#define SB_IRQ_VECTORS      2048u   /* vectors (Message Data values) counted per vector */
#define SB_IRQ_COUNTS_MAX   24u     /* counts in one SB_IRQ_COUNTS reply (name: 24 x 8 B) */

/* SB_WAIT event mask bits (and the reply's `size`: the one that happened). */
enum sb_event {
    SB_EV_MSI       = 1u << 0,  /* the device sent an MSI or MSI-X; addr = vector */
    SB_EV_DMA_WRITE = 1u << 1,  /* the device wrote host RAM; addr = first byte written */
    SB_EV_HOST      = 1u << 2,  /* the host's next request is waiting (SB_WAIT above) */
};

enum sb_status {
    SB_OK           = 0,
    SB_ERR_TYPE     = 1,        /* unknown request type */
    SB_ERR_ARG      = 2,        /* bad size or offset */
    SB_ERR_TIMEOUT  = 3,        /* MMIO read: no completion within the harness's limit */
    SB_ERR_VERSION  = 4,        /* HELLO: protocol version differs */
};

#define SB_NAME_BYTES 320

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
