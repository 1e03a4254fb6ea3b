// SPDX-License-Identifier: BSD-2-Clause
// submit.c - command submission (CIDs, PRPs, doorbells) and completion reaping/waiting.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sl_priv.h"

static struct sl_queue *queue_of(struct sl_ctrl *c, unsigned qid)
{
    if (qid > c->n_io || !c->q[qid].reqs)
        return NULL;
    return &c->q[qid];
}

int sl_ring(struct sl_ctrl *c, unsigned qid)
{
    struct sl_queue *q = queue_of(c, qid);
    if (!q)
        return sl_err(c, -EINVAL, "no queue %u", qid);
    if (!q->unrung)
        return 0;
    int rc = c->t->ops->write32(c->t, q->sq_db, q->ring.sq_tail);
    if (rc < 0)
        return sl_err_t(c, rc, "SQ tail doorbell write");
    uint64_t now = c->t->ops->time_ns(c->t);
    /* the requests queued since the last ring were submitted now */
    for (unsigned i = 0; i + 1u < q->ring.depth; i++)
        if (q->reqs[i].busy == 2) {
            q->reqs[i].busy = 1;
            q->reqs[i].submit_ns = now;
        }
    q->unrung = 0;
    return 0;
}

int sl_submit_bus(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, uint64_t bus,
                  size_t len, sl_cb cb, void *user, int ring)
{
    struct sl_queue *q = queue_of(c, qid);
    if (!q)
        return sl_err(c, -EINVAL, "no queue %u (the controller has %u I/O queues)", qid,
                      c->n_io);
    if (len > c->max_transfer)
        return sl_err(c, -E2BIG, "%s of %zu bytes exceeds the maximum transfer (MDTS) of %u "
                      "bytes", sl_opc_name(qid, cmd->opc), len, c->max_transfer);
    if (q->n_free == 0 || sl_ring_full(&q->ring))
        return sl_err(c, -EBUSY, "queue %u is full (%u in flight)", qid, q->inflight);
    uint16_t cid = q->free_cids[q->n_free - 1];
    struct sl_req *r = &q->reqs[cid];
    cmd->cid = cid;
    cmd->flags &= (uint8_t)~0xc0u;     /* PSDT 00b: PRPs */
    if (len) {
        int n = sl_prp_build(bus, len, SL_PAGE, r->list_va, r->list_bus, q->list_pages,
                             &cmd->prp1, &cmd->prp2);
        if (n < 0)
            return sl_err(c, n, "%s: cannot describe %zu bytes at bus 0x%llx with PRPs",
                          sl_opc_name(qid, cmd->opc), len, (unsigned long long)bus);
    }   /* len 0: PRP1/PRP2 as the caller set them (Create I/O CQ/SQ: the queue's base) */
    q->n_free--;
    r->cb = cb;
    r->user = user;
    r->busy = 2;
    r->submit_ns = c->t->ops->time_ns(c->t);
    sl_ring_put(&q->ring, cmd);
    q->inflight++;
    q->unrung++;
    return ring ? sl_ring(c, qid) : 0;
}

static int check_buf(struct sl_ctrl *c, const struct sl_dma *buf, size_t off, size_t len)
{
    if (len == 0)
        return 0;
    if (!buf || off > buf->len || len > buf->len - off)
        return sl_err(c, -EINVAL, "data (offset %zu, %zu bytes) outside the DMA buffer", off,
                      len);
    return 0;
}

int sl_queue(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, const struct sl_dma *buf,
             size_t off, size_t len, sl_cb cb, void *user)
{
    int rc = check_buf(c, buf, off, len);
    if (rc < 0)
        return rc;
    return sl_submit_bus(c, qid, cmd, len ? buf->bus + off : 0, len, cb, user, 0);
}

int sl_submit(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, const struct sl_dma *buf,
              size_t off, size_t len, sl_cb cb, void *user)
{
    int rc = check_buf(c, buf, off, len);
    if (rc < 0)
        return rc;
    return sl_submit_bus(c, qid, cmd, len ? buf->bus + off : 0, len, cb, user, 1);
}

int sl_submit_rw(struct sl_ctrl *c, unsigned qid, int write, uint64_t slba, uint32_t nlb,
                 const struct sl_dma *buf, size_t off, sl_cb cb, void *user)
{
    if (nlb == 0 || nlb > 65536u)
        return sl_err(c, -EINVAL, "block count %u outside 1..65536", nlb);
    struct nvme_sqe cmd = {0};
    cmd.opc = write ? NVME_CMD_WRITE : NVME_CMD_READ;
    cmd.nsid = 1;
    cmd.cdw10 = (uint32_t)slba;
    cmd.cdw11 = (uint32_t)(slba >> 32);
    cmd.cdw12 = nlb - 1u;
    return sl_submit(c, qid, &cmd, buf, off, (size_t)nlb * c->lba_bytes, cb, user);
}

int sl_reap(struct sl_ctrl *c, unsigned qid, unsigned max)
{
    struct sl_queue *q = queue_of(c, qid);
    if (!q)
        return sl_err(c, -EINVAL, "no queue %u", qid);
    int n = 0, bad = 0;
    const struct nvme_cqe *e;
    while ((max == 0 || (unsigned)n < max) && (e = sl_ring_peek(&q->ring))) {
        struct nvme_cqe cqe = *e;
        sl_ring_pop(&q->ring);
        if (cqe.sq_head < q->ring.depth)
            q->ring.sq_head = cqe.sq_head;
        n++;
        if (cqe.cid + 1u >= q->ring.depth || q->reqs[cqe.cid].busy != 1) {
            bad = sl_err(c, -EPROTO, "queue %u: completion for CID %u, which is not in flight",
                         qid, cqe.cid);
            continue;
        }
        struct sl_req *r = &q->reqs[cqe.cid];
        struct sl_cpl cpl = {
            .user = r->user, .submit_ns = r->submit_ns, .complete_ns = 0, .dw0 = cqe.dw0,
            .status = (uint16_t)(cqe.status >> 1), .cid = cqe.cid, .qid = (uint16_t)qid,
        };
        cpl.complete_ns = c->t->ops->time_ns(c->t);
        sl_cb cb = r->cb;
        r->busy = 0;
        r->cb = NULL;
        q->free_cids[q->n_free++] = cqe.cid;
        q->inflight--;
        if (cb)
            cb(&cpl, cpl.user);
    }
    if (n) {
        int rc = c->t->ops->write32(c->t, q->cq_db, q->ring.cq_head);
        if (rc < 0)
            return sl_err_t(c, rc, "CQ head doorbell write");
    }
    return bad ? bad : n;
}

int sl_wait(struct sl_ctrl *c, unsigned qid, unsigned min, uint64_t timeout_ns)
{
    struct sl_queue *q = queue_of(c, qid);
    if (!q)
        return sl_err(c, -EINVAL, "no queue %u", qid);
    struct sl_transport *t = c->t;
    unsigned mask = c->opts.use_irq ? SL_EV_IRQ : (t->events & SL_EV_DMA_WRITE);
    uint64_t deadline = t->ops->time_ns(t) + timeout_ns;
    int got = 0;
    for (;;) {
        /* Look first, then wait: in lockstep nothing happens between the look and the wait,
         * so an interrupt or DMA write that came before the wait is never waited for. */
        int n = sl_reap(c, qid, 0);
        if (n < 0)
            return n;
        got += n;
        if ((unsigned)got >= min)
            return got;
        uint64_t now = t->ops->time_ns(t);
        if (now >= deadline)
            return sl_err(c, -ETIMEDOUT, "queue %u: %u of %u completions after %llu ns (%u in "
                          "flight)", qid, (unsigned)got, min,
                          (unsigned long long)timeout_ns, q->inflight);
        if (!mask)
            continue;                   /* polling without events: spin on the phase tag */
        struct sl_event ev;
        int rc = t->ops->wait(t, mask, deadline - now, &ev);
        if (rc < 0)
            return sl_err_t(c, rc, "waiting for completions");
    }
}

unsigned sl_inflight(const struct sl_ctrl *c, unsigned qid)
{
    return qid <= c->n_io ? c->q[qid].inflight : 0;
}

unsigned sl_queue_depth(const struct sl_ctrl *c, unsigned qid)
{
    return qid <= c->n_io ? c->q[qid].ring.depth : 0;
}

struct sl_sync {
    int      done;
    uint16_t status;
    uint32_t dw0;
};

static void sync_cb(const struct sl_cpl *cpl, void *user)
{
    struct sl_sync *s = user;
    s->done = 1;
    s->status = cpl->status;
    s->dw0 = cpl->dw0;
}

int sl_exec(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, uint64_t bus, size_t len,
            uint32_t *dw0, uint64_t timeout_ns)
{
    struct sl_sync s = {0};
    int rc = sl_submit_bus(c, qid, cmd, bus, len, sync_cb, &s, 1);
    if (rc < 0)
        return rc;
    struct sl_transport *t = c->t;
    uint64_t deadline = t->ops->time_ns(t) + timeout_ns;
    while (!s.done) {
        uint64_t now = t->ops->time_ns(t);
        rc = sl_wait(c, qid, 1, now < deadline ? deadline - now : 0);
        if (rc == -ETIMEDOUT) {
            /* the command stays in flight (its CID is not reused until the controller
             * completes it) but nobody waits for it any more: a late CQE must not call back
             * into this returned stack frame */
            c->q[qid].reqs[cmd->cid].cb = NULL;
            c->q[qid].reqs[cmd->cid].user = NULL;
            return sl_err(c, -ETIMEDOUT, "%s (queue %u, CID %u): no completion within %llu ns",
                          sl_opc_name(qid, cmd->opc), qid, cmd->cid,
                          (unsigned long long)timeout_ns);
        }
        if (rc < 0) {
            c->q[qid].reqs[cmd->cid].cb = NULL;
            c->q[qid].reqs[cmd->cid].user = NULL;
            return rc;
        }
    }
    if (dw0)
        *dw0 = s.dw0;
    if (s.status) {
        char what[96];
        snprintf(what, sizeof(what), "%s (queue %u)", sl_opc_name(qid, cmd->opc), qid);
        return sl_nvme_err(c, s.status, what);
    }
    return 0;
}

const char *sl_opc_name(unsigned qid, unsigned opc)
{
    if (qid == 0) {
        switch (opc) {
        case NVME_ADMIN_DELETE_IO_SQ: return "Delete I/O SQ";
        case NVME_ADMIN_CREATE_IO_SQ: return "Create I/O SQ";
        case NVME_ADMIN_GET_LOG_PAGE: return "Get Log Page";
        case NVME_ADMIN_DELETE_IO_CQ: return "Delete I/O CQ";
        case NVME_ADMIN_CREATE_IO_CQ: return "Create I/O CQ";
        case NVME_ADMIN_IDENTIFY: return "Identify";
        case NVME_ADMIN_ABORT: return "Abort";
        case NVME_ADMIN_SET_FEATURES: return "Set Features";
        case NVME_ADMIN_GET_FEATURES: return "Get Features";
        case NVME_ADMIN_ASYNC_EVENT_REQUEST: return "Asynchronous Event Request";
        case NVME_ADMIN_FORMAT_NVM: return "Format NVM";
        default: return "admin command";
        }
    }
    switch (opc) {
    case NVME_CMD_FLUSH: return "Flush";
    case NVME_CMD_WRITE: return "Write";
    case NVME_CMD_READ: return "Read";
    case NVME_CMD_COMPARE: return "Compare";
    case NVME_CMD_WRITE_ZEROES: return "Write Zeroes";
    case NVME_CMD_DATASET_MANAGEMENT: return "Dataset Management";
    default: return "I/O command";
    }
}
