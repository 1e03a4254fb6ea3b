/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fake_dev.h - a scripted NVMe controller for the driver's unit tests: BAR0 registers (CAP,
 * VS, CC, CSTS, AQA, ASQ, ACQ, doorbells) with a log of every access, admin and I/O command
 * processing on a RAM "medium" with its own PRP walker, and knobs for the failures the
 * driver must handle (RDY never rising, lost completions, forced status).
 *
 * Lockstep like the harness: the device works only while time passes (fake_dev_run), so a
 * doorbell write alone completes nothing. fake_transport() wraps it as a struct
 * sl_transport over an in-process "host RAM"; test_sim.c serves it over the bridge socket.
 */
#ifndef FAKE_DEV_H
#define FAKE_DEV_H

#include <stdint.h>

#include "ssdlab/driver.h"
#include "ssdlab/nvme.h"

#define FAKE_LOG_MAX 512

struct fake_dev {
    /* host RAM the device DMAs to (bus address = offset) */
    uint8_t *ram;
    uint64_t ram_bytes;
    uint64_t now_ns;
    uint64_t mmio_ns;           /* time one MMIO costs (the modelled host delay) */
    uint64_t cmd_ns;            /* time from doorbell to completion */
    /* registers */
    uint64_t cap;
    uint32_t vs, cc, csts, aqa;
    uint64_t asq, acq;
    /* knobs */
    int      rdy_never;         /* CSTS.RDY stays 0 after CC.EN=1 */
    int      rdy_stuck;         /* CSTS.RDY stays 1 after CC.EN=0 */
    int      shst_never;        /* CSTS.SHST never reaches 10b (complete) */
    uint32_t rtd3e;             /* Identify RTD3E, us */
    int      lose_io;           /* I/O commands never complete */
    uint64_t late_io_ns;        /* I/O commands complete this late (0: cmd_ns) */
    uint16_t force_status;      /* next I/O command completes with this status */
    uint16_t sq_head_lag;       /* CQEs report the SQ head this many entries behind (a device
                                 * that reports the head as of the command's fetch) */
    uint8_t  mdts;
    uint16_t nsqa;              /* 0's based queues granted by Set Features */
    uint32_t n_vectors;
    uint64_t nsze;
    uint8_t  lbads;
    /* log of register accesses, "R64 0x00 = ...", "W32 0x14 = 0x460001" */
    char     log[FAKE_LOG_MAX][64];
    int      nlog;
    int      log_doorbells;
    /* commands seen: opcode and qid, in order */
    struct { uint8_t qid, opc; uint32_t cdw10, cdw11; } cmds[FAKE_LOG_MAX];
    int      ncmds;
    /* queues */
    struct { int on; uint64_t base; uint16_t size, head, tail, cqid; } sq[65];
    struct { int on; uint64_t base; uint16_t size, tail, head; uint8_t phase; uint16_t iv;
             int ien; } cq[65];
    unsigned pending_irq;       /* vectors raised, bit per vector */
    uint64_t pending_dma;       /* 0: none; else address + 1 of the last DMA write */
    uint64_t busy_until;        /* commands submitted are processed at this time */
    uint8_t *media;
    uint64_t host_reads, host_writes;
};

void fake_dev_init(struct fake_dev *d, uint8_t *ram, uint64_t ram_bytes);
void fake_dev_fini(struct fake_dev *d);
uint64_t fake_dev_read(struct fake_dev *d, uint32_t off, unsigned size);
void fake_dev_write(struct fake_dev *d, uint32_t off, unsigned size, uint64_t val);
/* Let time pass until an event in mask (SL_EV_*) or deadline_ns; returns the event kind and
 * sets *arg (vector or address). */
unsigned fake_dev_run(struct fake_dev *d, unsigned mask, uint64_t deadline_ns, uint64_t *arg);
/* Does the log contain this line (exact), at or after index *from? Advances *from. */
int fake_log_find(struct fake_dev *d, const char *line, int *from);
void fake_log_dump(struct fake_dev *d);

/* A transport over fake_dev with an in-process RAM (vectors from d->n_vectors). */
struct sl_transport *fake_transport(struct fake_dev *d, uint64_t ram_bytes);

#endif /* FAKE_DEV_H */
