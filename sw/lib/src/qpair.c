// SPDX-License-Identifier: BSD-2-Clause
// qpair.c - queue pair memory (rings, request slots, PRP list pages) and the admin commands
// that create and delete I/O queues.
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_priv.h"

static size_t round_page(size_t n)
{
    return (n + SL_PAGE - 1) & ~(size_t)(SL_PAGE - 1);
}

int sl_queue_alloc(struct sl_ctrl *c, unsigned qid, unsigned depth)
{
    struct sl_queue *q = &c->q[qid];
    struct sl_transport *t = c->t;
    memset(q, 0, sizeof(*q));
    q->qid = (uint16_t)qid;
    int rc = t->ops->dma_alloc(t, round_page(depth * sizeof(struct nvme_sqe)), &q->sq_mem);
    if (rc == 0)
        rc = t->ops->dma_alloc(t, round_page(depth * sizeof(struct nvme_cqe)), &q->cq_mem);
    q->list_pages = sl_prp_list_pages(c->max_transfer, SL_PAGE);
    if (q->list_pages > 4)
        q->list_pages = 4;
    if (rc == 0 && q->list_pages)
        rc = t->ops->dma_alloc(t, (size_t)(depth - 1) * q->list_pages * SL_PAGE, &q->prp_mem);
    if (rc < 0) {
        sl_err_t(c, rc, "allocating DMA memory for a queue");
        sl_queue_free(c, qid);
        return rc;
    }
    q->reqs = calloc(depth - 1, sizeof(*q->reqs));
    q->free_cids = calloc(depth - 1, sizeof(*q->free_cids));
    if (!q->reqs || !q->free_cids) {
        sl_queue_free(c, qid);
        return sl_err(c, -ENOMEM, "out of memory for queue %u", qid);
    }
    for (unsigned i = 0; i + 1 < depth; i++) {
        struct sl_req *r = &q->reqs[i];
        for (unsigned k = 0; k < q->list_pages; k++) {
            size_t off = ((size_t)i * q->list_pages + k) * SL_PAGE;
            r->list_va[k] = (uint64_t *)((uint8_t *)q->prp_mem.vaddr + off);
            r->list_bus[k] = q->prp_mem.bus + off;
        }
        /* hand out low CIDs first */
        q->free_cids[i] = (uint16_t)(depth - 2 - i);
    }
    q->n_free = depth - 1;
    sl_ring_init(&q->ring, (uint16_t)depth, q->sq_mem.vaddr, q->cq_mem.vaddr);
    q->sq_db = NVME_SQ_TDBL(qid, c->dstrd);
    q->cq_db = NVME_CQ_HDBL(qid, c->dstrd);
    unsigned nv = t->n_vectors ? t->n_vectors : 1;
    q->vector = (qid == 0 || nv == 1) ? 0 : 1 + (qid - 1) % (nv - 1);
    return 0;
}

void sl_queue_free(struct sl_ctrl *c, unsigned qid)
{
    struct sl_queue *q = &c->q[qid];
    struct sl_transport *t = c->t;
    if (q->sq_mem.vaddr)
        t->ops->dma_free(t, &q->sq_mem);
    if (q->cq_mem.vaddr)
        t->ops->dma_free(t, &q->cq_mem);
    if (q->prp_mem.vaddr)
        t->ops->dma_free(t, &q->prp_mem);
    free(q->reqs);
    free(q->free_cids);
    memset(q, 0, sizeof(*q));
}

/* Linux order (nvme_create_queue): the CQ, then the SQ bound to it. */
int sl_queue_create(struct sl_ctrl *c, unsigned qid)
{
    struct sl_queue *q = &c->q[qid];
    uint32_t qsize = (uint32_t)(q->ring.depth - 1u) << 16;
    struct nvme_sqe cmd = {0};
    cmd.opc = NVME_ADMIN_CREATE_IO_CQ;
    cmd.cdw10 = qsize | qid;
    cmd.cdw11 = NVME_QUEUE_PHYS_CONTIG | ((uint32_t)q->vector << 16) |
                (c->opts.use_irq ? NVME_CQ_IRQ_ENABLED : 0);
    /* the queue memory goes in PRP1 by hand: a physically contiguous queue is not data */
    cmd.prp1 = q->cq_mem.bus;
    int rc = sl_exec(c, 0, &cmd, 0, 0, NULL, c->opts.admin_timeout_ns);
    if (rc != 0)
        return rc;
    q->created = 2;
    memset(&cmd, 0, sizeof(cmd));
    cmd.opc = NVME_ADMIN_CREATE_IO_SQ;
    cmd.cdw10 = qsize | qid;
    cmd.cdw11 = NVME_QUEUE_PHYS_CONTIG | ((uint32_t)qid << 16);
    cmd.prp1 = q->sq_mem.bus;
    rc = sl_exec(c, 0, &cmd, 0, 0, NULL, c->opts.admin_timeout_ns);
    if (rc != 0) {
        char keep[sizeof(c->err)];
        memcpy(keep, c->err, sizeof(keep));
        sl_queue_delete(c, qid, 1);
        memcpy(c->err, keep, sizeof(keep));
        return rc;
    }
    q->created = 3;
    return 0;
}

/* One half of a queue pair; Linux (nvme_disable_io_queues) deletes every SQ, then every CQ. */
int sl_queue_delete(struct sl_ctrl *c, unsigned qid, int cq)
{
    struct sl_queue *q = &c->q[qid];
    if (!(q->created & (cq ? 2 : 1)))
        return 0;
    struct nvme_sqe cmd = {.opc = cq ? NVME_ADMIN_DELETE_IO_CQ : NVME_ADMIN_DELETE_IO_SQ,
                           .cdw10 = qid};
    q->created &= cq ? ~2 : ~1;
    return sl_exec(c, 0, &cmd, 0, 0, NULL, c->opts.admin_timeout_ns);
}
