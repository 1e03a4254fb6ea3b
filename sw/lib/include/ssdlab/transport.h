/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * transport.h - how the driver reaches a controller: BAR0 MMIO, DMA-able host memory,
 * interrupts/events and a clock, behind one ops table.
 *
 *   sim   the Verilator harness through sim/bridge/ssdlab_bridge.h (time = simulated time)
 *   vfio  a real PCIe card through /dev/vfio (time = CLOCK_MONOTONIC)
 *
 * Every function returning int returns 0 or a negative errno; the transport then keeps a
 * message (sl_transport_errmsg) that says what failed, with the errno text.
 */
#ifndef SSDLAB_TRANSPORT_H
#define SSDLAB_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A piece of DMA-able host memory: the CPU's pointer and the device's (bus) address. */
struct sl_dma {
    void    *vaddr;
    uint64_t bus;
    size_t   len;               /* bytes, a multiple of the 4 KiB page */
};

/* Events to wait for (mask) and the one that happened. */
enum sl_event_kind {
    SL_EV_NONE      = 0,        /* deadline reached (or, on VFIO, polling: re-check queues) */
    SL_EV_IRQ       = 1u << 0,  /* an interrupt (MSI/MSI-X); vector */
    SL_EV_DMA_WRITE = 1u << 1,  /* the device wrote host memory (sim only); addr */
};

struct sl_event {
    unsigned kind;              /* enum sl_event_kind */
    unsigned vector;
    uint64_t addr;
};

struct sl_transport;

struct sl_transport_ops {
    const char *name;
    int  (*read32)(struct sl_transport *t, uint32_t off, uint32_t *val);
    int  (*read64)(struct sl_transport *t, uint32_t off, uint64_t *val);
    int  (*write32)(struct sl_transport *t, uint32_t off, uint32_t val);
    int  (*write64)(struct sl_transport *t, uint32_t off, uint64_t val);
    /* len rounded up to 4 KiB; memory zeroed, page aligned, bus address never 0. */
    int  (*dma_alloc)(struct sl_transport *t, size_t len, struct sl_dma *out);
    void (*dma_free)(struct sl_transport *t, struct sl_dma *d);
    /* Let time pass until one of the events in mask, or timeout_ns (mask 0: just sleep).
     * Returns 0 with ev->kind = SL_EV_NONE when the timeout passed. */
    int  (*wait)(struct sl_transport *t, unsigned mask, uint64_t timeout_ns,
                 struct sl_event *ev);
    uint64_t (*time_ns)(struct sl_transport *t);
    /* Optional (NULL: -ENOTSUP): power cycle / function reset of the device. */
    int  (*reset)(struct sl_transport *t);
    /* Optional (NULL: -ENOTSUP): a power cut: as reset, and the NAND loses power too (sim:
     * in-flight programs and erases torn; returns how many pages and blocks). */
    int  (*power_cut)(struct sl_transport *t);
    /* Optional: statistics as "key=value ..." text. */
    int  (*stats)(struct sl_transport *t, char *buf, size_t len);
    void (*close)(struct sl_transport *t);
};

struct sl_transport {
    const struct sl_transport_ops *ops;
    unsigned n_vectors;         /* interrupt vectors the device can raise (>= 1) */
    unsigned events;            /* SL_EV_* the transport can wait for */
    char     err[256];          /* the last error */
    void    *priv;
};

/* Simulation transport: socket path, or NULL for $SSDLAB_SIM_SOCKET. With $SSDLAB_SIM_TRACE
 * set (not "0"), every request and reply goes to stderr with the simulated time. */
int sl_transport_open_sim(const char *socket_path, struct sl_transport **out);
/* Sim only: ask the harness to finish (SB_QUIT); simulated time in ps. */
int sl_sim_quit(struct sl_transport *t);
uint64_t sl_sim_time_ps(struct sl_transport *t);
/* Sim only: a retention bake (SB_BAKE): every die's programmed pages age `millihours`
 * (1 .. 10^9) thousandths of an hour at once. Returns the dies baked (0: the NAND emulator,
 * whose pages never age) or a negative errno. */
int sl_sim_bake(struct sl_transport *t, uint64_t millihours);

/* Sim only: pre-cycling (SB_PRECYCLE): every block of every die takes `cycles` (1 .. 10^7)
 * more P/E cycles at once. Returns the dies pre-cycled (0: the NAND emulator, which does not
 * wear) or a negative errno. */
int sl_sim_precycle(struct sl_transport *t, uint64_t cycles);
/* Sim only: fault injection (SB_FAULT). A grown bad block: block `block` (of its LUN, plane in
 * its low bits) of LUN `lun` of the die on channel `channel`, way (chip enable) `way` fails
 * every program and erase from now on (its FAIL status bit), as a block that wears out does.
 * Returns 1, 0 when the drive has no die models (the NAND emulator), or a negative errno
 * (-EINVAL: no such die, LUN or block). sl_sim_bit_errors (SB_FAULT_BIT_ERRORS): every read
 * of that LUN flips bits at `rber_ppb` parts per billion (0 .. 5 x 10^8; 0 ends it) more;
 * returns as sl_sim_bad_block. sl_sim_die_fail (SB_FAULT_DIE_FAIL): that LUN fails for good
 * (programs and erases FAIL, reads return noise); returns as sl_sim_bad_block. */
int sl_sim_die_fail(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun);
int sl_sim_bit_errors(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun,
                      uint64_t rber_ppb);
int sl_sim_bad_block(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun,
                     unsigned block);
/* Sim only: a hung die (SB_FAULT_STUCK_BUSY): that LUN's R/B# sticks low (busy) from its next
 * busy period on, until a RESET or a power cut brings it back, or (for_good) for good. The
 * back end gives its ops up after its busy timeout. Returns as sl_sim_bad_block. */
int sl_sim_stuck_busy(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun,
                      bool for_good);
/* Sim only: host link faults on the drive's DMA memory reads (SB_FAULT_CPL_POISON /
 * SB_FAULT_CPL_TIMEOUT). The next `reads` (1..255) reads of host memory the drive issues (with
 * `addr` != 0: the next ones touching the 4 KiB page holding `addr`) are answered with
 * poisoned completions (SL_CPL_POISON: EP set, the data sent as usual) or never answered
 * (SL_CPL_TIMEOUT: the drive's completion timeout ends them). Arming a kind again replaces
 * its count and page. Returns the reads armed or a negative errno (-EINVAL: bad kind or
 * count). */
enum sl_cpl_fault { SL_CPL_POISON = 5, SL_CPL_TIMEOUT = 6 };    /* = SB_FAULT_CPL_* */
int sl_sim_cpl_fault(struct sl_transport *t, enum sl_cpl_fault kind, unsigned reads,
                     uint64_t addr);
/* Sim only: interrupts the harness saw per vector (MSI vector number, or MSI-X Message Data =
 * table index) since it started, vectors first .. first + n - 1 into counts[]. Returns the
 * number filled (fewer past the last vector the harness counts) or a negative errno. */
int sl_sim_irq_counts(struct sl_transport *t, unsigned first, unsigned n, uint64_t *counts);
/* VFIO transport: PCI address "0000:01:00.0" bound to vfio-pci. */
int sl_transport_open_vfio(const char *pci_addr, struct sl_transport **out);

/* Errors of a failed open are kept here (no transport exists to hold them). */
const char *sl_transport_open_errmsg(void);
const char *sl_transport_errmsg(const struct sl_transport *t);
void sl_transport_close(struct sl_transport *t);
/* The optional ops, -ENOTSUP where the transport lacks them. */
int sl_transport_stats(struct sl_transport *t, char *buf, size_t len);
int sl_transport_reset(struct sl_transport *t);
/* Sim: SB_RESET with SB_RESET_POWER_CUT (sim/bridge/ssdlab_bridge.h): everything is reset as
 * for sl_transport_reset, and the NAND dies lose power at this instant: an in-flight program
 * or erase is torn, registers and features are lost. No shutdown: the host's open controller
 * is gone (drop it without closing). Returns the pages and blocks whose program or erase the
 * cut tore (>= 0), or a negative errno (VFIO: -ENOTSUP). */
int sl_transport_power_cut(struct sl_transport *t);
const char *sl_transport_name(const struct sl_transport *t);
/* Let ns of transport time pass with no request to the device: simulated time on sim (the
 * drive runs on, idle), a real sleep on VFIO. 0 or a negative errno. */
int sl_transport_sleep(struct sl_transport *t, uint64_t ns);

/* Records a message "fmt...: strerror(-err)" in t->err (t may be NULL: the open message);
 * returns err (a negative errno) so callers can `return sl_terr(t, -EIO, "...")`. */
int sl_terr(struct sl_transport *t, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#ifdef __cplusplus
}
#endif

#endif /* SSDLAB_TRANSPORT_H */
