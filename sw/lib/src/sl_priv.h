/* SPDX-License-Identifier: BSD-2-Clause */
/* sl_priv.h - the library's internal types and helpers (not installed). */
#ifndef SSDLAB_SL_PRIV_H
#define SSDLAB_SL_PRIV_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ssdlab/driver.h"
#include "ssdlab/nvme.h"
#include "ssdlab/nvme_regs.h"
#include "ssdlab/transport.h"

#define SL_PAGE             4096u
#define SL_PAGE_SHIFT       12u
#define SL_MAX_QUEUES       64u
#define SL_MAX_TRANSFER     (2u << 20)      /* the library's own cap on MDTS */
#define SL_SHUTDOWN_NS      5000000000ull   /* Linux's default shutdown_timeout */

/* --- prp.c: PRP entries and lists ------------------------------------------------------ */
/* PRP1/PRP2 for the contiguous buffer at bus address `bus`, `len` bytes (> 0, dword
 * aligned), memory pages of `page` bytes. When more than two pages are touched, PRP2 points
 * at a PRP list written into lists_va[0..], chained through the last entry of each full list
 * page. Returns the number of list pages used, -EINVAL (alignment, len 0) or -E2BIG (more
 * list pages needed than n_lists). */
int sl_prp_build(uint64_t bus, size_t len, uint32_t page, uint64_t *const *lists_va,
                 const uint64_t *lists_bus, unsigned n_lists, uint64_t *prp1, uint64_t *prp2);
/* List pages a transfer of up to max_len bytes needs at worst (any dword offset). */
unsigned sl_prp_list_pages(size_t max_len, uint32_t page);

/* --- queue.c: SQ/CQ rings -------------------------------------------------------------- */
struct sl_req {
    sl_cb    cb;
    void    *user;
    uint64_t submit_ns;
    int      busy;
    uint64_t *list_va[4];       /* this slot's PRP list pages */
    uint64_t list_bus[4];
};

struct sl_ring {
    uint16_t depth;             /* entries */
    uint16_t sq_tail, sq_head;  /* sq_head as last reported by a CQE */
    uint16_t cq_head;
    uint8_t  cq_phase;          /* the phase tag a new CQE carries (starts at 1) */
    struct nvme_sqe *sq;
    struct nvme_cqe *cq;
};
void sl_ring_init(struct sl_ring *r, uint16_t depth, void *sq, void *cq);
int  sl_ring_full(const struct sl_ring *r);
/* Copies sqe into the SQ tail slot and advances the tail (caller checked sl_ring_full). */
void sl_ring_put(struct sl_ring *r, const struct nvme_sqe *sqe);
/* The CQE at the head if its phase tag says it is new, else NULL. */
const struct nvme_cqe *sl_ring_peek(const struct sl_ring *r);
/* Consume the head CQE (wrap flips the expected phase). */
void sl_ring_pop(struct sl_ring *r);

struct sl_queue {
    uint16_t qid;
    struct sl_ring ring;
    struct sl_dma sq_mem, cq_mem, prp_mem;
    uint32_t sq_db, cq_db;      /* doorbell offsets */
    unsigned vector;
    unsigned inflight, unrung;
    unsigned list_pages;        /* per request slot */
    int      created;           /* bit 0: SQ, bit 1: CQ exist on the device */
    struct sl_req *reqs;        /* depth - 1 slots, indexed by cid */
    uint16_t *free_cids;
    unsigned n_free;
};

/* --- pagealloc.c: page allocator over a bus-address range (sim transport, tests) ------- */
struct sl_pagealloc {
    uint8_t *used;              /* one byte per page */
    uint64_t first, n_pages;    /* page numbers first .. first + n_pages - 1 */
};
int  sl_pa_init(struct sl_pagealloc *pa, uint64_t first_page, uint64_t n_pages);
void sl_pa_fini(struct sl_pagealloc *pa);
/* First fit of n contiguous pages: returns the first page number, or 0 when none fits
 * (page 0 is never handed out). */
uint64_t sl_pa_alloc(struct sl_pagealloc *pa, uint64_t n);
void sl_pa_free(struct sl_pagealloc *pa, uint64_t page, uint64_t n);

/* --- ctrl.c / qpair.c / submit.c ------------------------------------------------------- */
#define SL_RETIRED_MAX 8
struct sl_ctrl {
    struct sl_transport *t;
    struct sl_ctrl_opts opts;
    uint64_t cap;
    uint32_t vs, cc;
    unsigned dstrd;
    int      enabled;
    uint32_t max_transfer;
    uint32_t lba_bytes;         /* namespace 1 */
    unsigned n_io;
    struct sl_queue q[SL_MAX_QUEUES + 1];     /* q[0]: admin */
    struct sl_dma bounce;
    /* Bounce buffers of commands that timed out while the controller still owned them: a
     * late completion may yet DMA into one, so none is reused; each is freed when its command
     * completes after all, or when the controller is released. */
    struct sl_retired { struct sl_ctrl *c; struct sl_dma m; int used; } retired[SL_RETIRED_MAX];
    struct nvme_id_ctrl id;
    struct nvme_id_ns ns;
    char     err[512];
};

int  sl_err(struct sl_ctrl *c, int err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies the transport's message into c->err with a prefix; returns err. */
int  sl_err_t(struct sl_ctrl *c, int err, const char *what);
int  sl_nvme_err(struct sl_ctrl *c, int status, const char *what);

int  sl_identify_ns1(struct sl_ctrl *c);
int  sl_queue_alloc(struct sl_ctrl *c, unsigned qid, unsigned depth);
void sl_queue_free(struct sl_ctrl *c, unsigned qid);
int  sl_queue_create(struct sl_ctrl *c, unsigned qid);
int  sl_queue_delete(struct sl_ctrl *c, unsigned qid, int cq);

/* Submit cmd with data at bus address `bus` (len 0: none) on qid, wait for it (timeout),
 * return status / -errno. dw0 may be NULL. */
int  sl_exec(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, uint64_t bus, size_t len,
             uint32_t *dw0, uint64_t timeout_ns);
int  sl_submit_bus(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, uint64_t bus,
                   size_t len, sl_cb cb, void *user, int ring);
const char *sl_opc_name(unsigned qid, unsigned opc);

#endif /* SSDLAB_SL_PRIV_H */
