/* SPDX-License-Identifier: BSD-2-Clause */
/* queues.c - Create / Delete I/O Submission and Completion Queue with the checks of NVMe 1.4
 * sections 5.3-5.6; PC=0 queues from their PRP list (hal_*q_page). */
#include "fw.h"

#define MAXQ 65
#define NONE 0xFFFFu

static uint16_t sq_cq[MAXQ];            /* I/O SQ -> its CQ, NONE: no such SQ */
static bool cq_on[MAXQ];

void queues_reset(void)
{
    for (int i = 0; i < MAXQ; i++) {
        sq_cq[i] = NONE;
        cq_on[i] = false;
    }
}

uint16_t queue_cqid_of(uint16_t sqid)
{
    if (sqid == 0)
        return 0;
    return sqid < MAXQ ? sq_cq[sqid] : NONE;
}

bool queues_any_io(void)
{
    for (int i = 1; i < MAXQ; i++)
        if (sq_cq[i] != NONE || cq_on[i])
            return true;
    return false;
}

static inline uint64_t prp1_of(const struct hal_cmd *c)
{
    return c->dw[6] | (uint64_t)c->dw[7] << 32;
}

/* PC=0: the PRP list at prp1 has one page-aligned entry per queue page. */
static uint16_t queue_pages(bool sq, uint16_t qid, uint32_t qsize, uint32_t esize,
                            uint64_t prp1)
{
    uint32_t n = ((qsize + 1) * esize + 4095) / 4096;
    uint16_t st = hal_xfer(0, prp1, 0, 8 * n, false);
    if (st)
        return st;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = buf_read32(G.xfer_addr + 8 * i) |
                     (uint64_t)buf_read32(G.xfer_addr + 8 * i + 4) << 32;
        if (a % 4096)
            return NVME_SC_PRP_OFFSET_INVALID;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = buf_read32(G.xfer_addr + 8 * i) |
                     (uint64_t)buf_read32(G.xfer_addr + 8 * i + 4) << 32;
        if (sq)
            hal_sq_page(qid, i, a);
        else
            hal_cq_page(qid, i, a);
    }
    return 0;
}

uint16_t queues_create_cq(const struct hal_cmd *c)
{
    uint16_t qid = (uint16_t)c->dw[10];
    uint32_t qsize = c->dw[10] >> 16;
    bool pc = c->dw[11] & 1, ien = c->dw[11] >> 1 & 1;
    uint16_t iv = (uint16_t)(c->dw[11] >> 16);
    uint32_t ncqa = (features_nq() >> 16) + 1;
    if (qid == 0 || qid > ncqa || qid >= MAXQ || cq_on[qid])
        return NVME_SC_INVALID_QID;
    if (qsize == 0 || qsize > G.mqes)
        return NVME_SC_INVALID_QUEUE_SIZE;
    if (iv > G.id.n_io_queues)
        return NVME_SC_INVALID_INTERRUPT_VECTOR;
    if (prp1_of(c) % 4096)
        return NVME_SC_PRP_OFFSET_INVALID;
    if (!pc) {
        uint16_t st = queue_pages(false, qid, qsize, 16, prp1_of(c));
        if (st)
            return st;
    }
    hal_cq_config(qid, pc ? prp1_of(c) : 0, (uint16_t)qsize, iv, ien, true, !pc);
    cq_on[qid] = true;
    return 0;
}

uint16_t queues_create_sq(const struct hal_cmd *c)
{
    uint16_t qid = (uint16_t)c->dw[10];
    uint32_t qsize = c->dw[10] >> 16;
    bool pc = c->dw[11] & 1;
    uint16_t cqid = (uint16_t)(c->dw[11] >> 16);
    uint32_t nsqa = (features_nq() & 0xFFFF) + 1;
    if (qid == 0 || qid > nsqa || qid >= MAXQ || sq_cq[qid] != NONE)
        return NVME_SC_INVALID_QID;
    if (qsize == 0 || qsize > G.mqes)
        return NVME_SC_INVALID_QUEUE_SIZE;
    if (cqid == 0 || cqid >= MAXQ || !cq_on[cqid])
        return NVME_SC_CQ_INVALID;
    if (prp1_of(c) % 4096)
        return NVME_SC_PRP_OFFSET_INVALID;
    if (!pc) {
        uint16_t st = queue_pages(true, qid, qsize, 64, prp1_of(c));
        if (st)
            return st;
    }
    hal_sq_config(qid, pc ? prp1_of(c) : 0, (uint16_t)qsize, true, !pc, cqid);
    sq_cq[qid] = cqid;
    return 0;
}

uint16_t queues_delete_sq(const struct hal_cmd *c)
{
    uint16_t qid = (uint16_t)c->dw[10];
    if (qid == 0 || qid >= MAXQ || sq_cq[qid] == NONE)
        return NVME_SC_INVALID_QID;
    /* the front end aborts the SQ's unfetched entries and drains its commands in flight */
    hal_sq_config(qid, 0, 0, false, false, sq_cq[qid]);
    sq_cq[qid] = NONE;
    return 0;
}

uint16_t queues_delete_cq(const struct hal_cmd *c)
{
    uint16_t qid = (uint16_t)c->dw[10];
    if (qid == 0 || qid >= MAXQ || !cq_on[qid])
        return NVME_SC_INVALID_QID;
    for (int i = 1; i < MAXQ; i++)
        if (sq_cq[i] == qid)
            return NVME_SC_INVALID_QUEUE_DELETION;
    hal_cq_config(qid, 0, 0, 0, false, false, false);
    cq_on[qid] = false;
    return 0;
}
