/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * driver.h - the ssdlab user-space NVMe driver: controller bring-up as the Linux nvme driver
 * does it, admin and I/O queues, PRPs, polled or interrupt-driven completions; a synchronous
 * API and an asynchronous one (submit with a callback, reap) for fio-style engines.
 *
 * Return convention of every int function below:
 *   0    success
 *   > 0  the NVMe status field of the completion (nvme.h: SC 7:0, SCT 10:8, ..., DNR 14);
 *        sl_status_str() names it
 *   < 0  a negative errno (transport failure, timeout, bad argument); sl_errmsg() says what
 * Not thread-safe: one thread per controller (or per queue with external locking).
 */
#ifndef SSDLAB_DRIVER_H
#define SSDLAB_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "ssdlab/nvme.h"
#include "ssdlab/transport.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sl_ctrl;

struct sl_ctrl_opts {
    unsigned n_io_queues;       /* I/O SQ/CQ pairs to create, 1..64 (capped by the device) */
    unsigned io_depth;          /* entries per I/O queue, 2..CAP.MQES+1 */
    unsigned admin_depth;       /* entries of the admin queue, 2..4096 */
    int      use_irq;           /* 0: poll completions (phase tag); 1: wait for interrupts */
    uint64_t admin_timeout_ns;  /* per admin command (Linux: 60 s) */
    uint64_t io_timeout_ns;     /* per I/O command (Linux: 30 s) */
    uint64_t ready_poll_ns;     /* CSTS poll interval during enable/disable/shutdown */
    uint64_t shutdown_timeout_ns; /* CSTS.SHST wait; the larger of this and Identify RTD3E */
};
void sl_ctrl_opts_default(struct sl_ctrl_opts *o);

/* Bring the controller up: disable, admin queue, enable, Identify Controller, Number of
 * Queues, I/O queue pairs, Identify Namespace 1. Takes ownership of t. *out is set whenever
 * memory allowed it, also on failure: read sl_errmsg(*out), then sl_ctrl_close(*out). */
int  sl_ctrl_open(struct sl_transport *t, const struct sl_ctrl_opts *o, struct sl_ctrl **out);
/* Delete the I/O queues, shut down (CC.SHN normal, wait CSTS.SHST complete), free
 * everything, close the transport. Returns the shutdown's result; on failure
 * sl_errmsg(NULL) says why. */
int  sl_ctrl_close(struct sl_ctrl *c);
/* As sl_ctrl_close, but without a shutdown notification: the I/O queues are deleted and the
 * controller disabled (CC.EN = 0, wait CSTS.RDY = 0), as a driver resetting it does. The
 * drive keeps its volatile write cache and does not save its state; what a workload tool
 * leaves behind between runs (the kernel never shuts a drive down after an fio job). */
int  sl_ctrl_detach(struct sl_ctrl *c);
/* The last error of c (NULL: of the last failed sl_ctrl_close or transport open). */
const char *sl_errmsg(const struct sl_ctrl *c);
struct sl_transport *sl_ctrl_transport(struct sl_ctrl *c);

/* What the controller and namespace 1 are (filled by sl_ctrl_open). */
struct sl_info {
    char     model[41], serial[21], firmware[9], transport[16];
    uint16_t vid;
    uint32_t version;           /* VS */
    uint64_t cap;               /* CAP */
    uint32_t max_transfer;      /* bytes per command: MDTS, capped by the library's limit */
    uint32_t nn;                /* namespaces */
    uint16_t oncs;
    uint8_t  vwc;
    uint32_t lba_bytes;         /* namespace 1 */
    uint64_t ns_blocks, ns_capacity, ns_used;
    uint32_t n_io_queues, io_depth;
    int32_t  use_irq;
    uint32_t n_vectors;
};
void sl_ctrl_info(const struct sl_ctrl *c, struct sl_info *info);
const struct nvme_id_ctrl *sl_id_ctrl(const struct sl_ctrl *c);
const struct nvme_id_ns *sl_id_ns(const struct sl_ctrl *c);
/* Transport time: simulated ns on sim, CLOCK_MONOTONIC ns on VFIO. */
uint64_t sl_time_ns(struct sl_ctrl *c);

/* DMA memory for the asynchronous API (zero copy). */
int  sl_dma_alloc(struct sl_ctrl *c, size_t len, struct sl_dma *out);
void sl_dma_free(struct sl_ctrl *c, struct sl_dma *d);

/* --- synchronous API (data goes through a bounce buffer; any length up to max_transfer) - */
/* Any admin command; data direction from opcode bits 1:0 (01b to the device, 10b from it).
 * cmd->cid and the PRPs are filled in. dw0 (may be NULL) receives CQE DW0. */
int sl_admin(struct sl_ctrl *c, struct nvme_sqe *cmd, void *buf, size_t len, uint32_t *dw0);
/* Any I/O command on queue qid (1..n_io_queues). */
int sl_io(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, void *buf, size_t len,
          uint32_t *dw0);
int sl_read(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint32_t nlb, void *buf);
int sl_write(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint32_t nlb, const void *buf);
int sl_flush(struct sl_ctrl *c, unsigned qid);
int sl_write_zeroes(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint32_t nlb);
/* Dataset Management with nr (1..256) ranges; attr: NVME_DSM_AD to deallocate. */
int sl_dsm(struct sl_ctrl *c, unsigned qid, const struct nvme_dsm_range *ranges, unsigned nr,
           uint32_t attr);
/* Deallocate slba..slba+nlb-1 (split in ranges of at most 2^32-1 blocks). */
int sl_trim(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint64_t nlb);
int sl_identify(struct sl_ctrl *c, uint32_t cns, uint32_t nsid, void *buf4096);
int sl_get_log_page(struct sl_ctrl *c, uint32_t nsid, uint32_t lid, void *buf, size_t len);
int sl_get_features(struct sl_ctrl *c, uint32_t fid, uint32_t dw11, uint32_t *dw0);
int sl_set_features(struct sl_ctrl *c, uint32_t fid, uint32_t dw11, uint32_t *dw0);
/* Format NVM namespace nsid with LBA format lbaf, secure erase setting ses (0..2); then
 * re-reads Identify Namespace. */
int sl_format(struct sl_ctrl *c, uint32_t nsid, uint32_t lbaf, uint32_t ses);

/* --- asynchronous API ------------------------------------------------------------------- */
struct sl_cpl {
    void    *user;
    uint64_t submit_ns;         /* transport time when the doorbell write was sent */
    uint64_t complete_ns;       /* transport time when the host saw the CQE */
    uint32_t dw0;
    uint16_t status;            /* 0: success; else the NVMe status field */
    uint16_t cid;
    uint16_t qid;
};
typedef void (*sl_cb)(const struct sl_cpl *cpl, void *user);

/* Queue cmd on qid's SQ with data buf->vaddr+off .. +len (len 0: no data) and ring the
 * doorbell (sl_queue: don't ring; sl_ring rings once for everything queued). -EBUSY when the
 * queue is full, -E2BIG above max_transfer, -EINVAL for a bad qid or buffer. */
int sl_submit(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, const struct sl_dma *buf,
              size_t off, size_t len, sl_cb cb, void *user);
int sl_queue(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, const struct sl_dma *buf,
             size_t off, size_t len, sl_cb cb, void *user);
int sl_ring(struct sl_ctrl *c, unsigned qid);
/* Read/Write of nlb blocks at slba, data in buf at off. */
int sl_submit_rw(struct sl_ctrl *c, unsigned qid, int write, uint64_t slba, uint32_t nlb,
                 const struct sl_dma *buf, size_t off, sl_cb cb, void *user);
/* Process the completions already posted on qid (no waiting), at most max (0: all); calls
 * the callbacks; returns how many, or < 0. */
int sl_reap(struct sl_ctrl *c, unsigned qid, unsigned max);
/* Wait (interrupts or DMA-write events, per the open options) until at least min
 * completions were reaped on qid: returns the count reaped (>= min), or -ETIMEDOUT when
 * timeout_ns passed first (the completions reaped meanwhile had their callbacks called). */
int sl_wait(struct sl_ctrl *c, unsigned qid, unsigned min, uint64_t timeout_ns);
unsigned sl_inflight(const struct sl_ctrl *c, unsigned qid);
unsigned sl_queue_depth(const struct sl_ctrl *c, unsigned qid);

/* --- a built-in workload (the async API at a fixed queue depth) --------------------------- */
struct sl_bench_opts {
    int      write;             /* 0: Read, 1: Write (data: sl_pattern of seed, per LBA) */
    int      random;            /* 0: sequential from lba_first, wrapping; 1: uniform random */
    uint32_t io_blocks;         /* logical blocks per I/O (bs / LBA size), >= 1 */
    uint32_t qd;                /* commands kept in flight, 1..queue depth - 1 */
    uint64_t n_ios;             /* I/Os to complete */
    uint64_t lba_first, lba_count;  /* the region (lba_count 0: to the namespace's end) */
    uint64_t seed;              /* random offsets and write data */
    uint32_t qid;               /* I/O queue (0: 1) */
};
struct sl_bench_result {
    uint64_t ios, bytes, errors;
    uint16_t first_error;       /* NVMe status of the first failed I/O */
    uint64_t elapsed_ns;        /* first submission to last completion, transport time */
    uint64_t lat_min_ns, lat_mean_ns, lat_p50_ns, lat_p99_ns, lat_p999_ns, lat_max_ns;
};
/* Run the workload; latencies are submit (doorbell) to completion seen by the host, in
 * transport time (simulated on sim). Returns 0 (I/O errors are counted, not fatal) or < 0. */
int sl_bench(struct sl_ctrl *c, const struct sl_bench_opts *o, struct sl_bench_result *r);

/* --- status, patterns ------------------------------------------------------------------- */
/* "LBA Out of Range (SCT 0 SC 80h)"; " DNR"/" More" appended when set. Returns buf. */
char *sl_status_str(uint16_t status, char *buf, size_t len);
/* The name alone ("LBA Out of Range"; "Unknown" for codes the table lacks). */
const char *sl_status_name(uint16_t status);
/* Deterministic test data: block lba of a pattern with seed, len bytes. */
void sl_pattern_fill(uint64_t seed, uint64_t lba, void *buf, size_t len);
/* Compares buf to the pattern; returns the index of the first differing byte, or -1. */
long sl_pattern_check(uint64_t seed, uint64_t lba, const void *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SSDLAB_DRIVER_H */
