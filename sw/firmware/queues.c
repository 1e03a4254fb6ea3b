/* SPDX-License-Identifier: BSD-2-Clause */
/* queues.c - Create / Delete I/O Submission and Completion Queue with the checks of NVMe 1.4
 * sections 5.3-5.6; PC=0 queues from their PRP list (hal_*q_page); Delete I/O SQ deferred
 * until the front end has drained the SQ (queues_poll). */
#include "fw.h"

#define MAXQ 65
#define NONE 0xFFFFu

static uint16_t sq_cq[MAXQ];            /* I/O SQ -> its CQ, NONE: no such SQ */
static bool cq_on[MAXQ];

/* Delete I/O SQ (NVMe 1.4 5.6): the front end aborts the SQ's unfetched entries and waits for
 * its commands in flight, which need the main loop (block requests, flash completions). So the
 * delete is started and the command held; queues_poll completes it once the SQ is gone. The
 * SQ keeps its CQ meanwhile (the firmware's I/O commands from it complete there). The front
 * end takes no other queue configuration meanwhile: queue commands that come are held, in
 * order, and run after it (admin commands may complete in any order). */
static struct hal_cmd del_cmd;
static bool del_on;
#define HOLD_MAX MAXQ                   /* a host deleting every SQ at once (Linux does) */
static struct hal_cmd held[HOLD_MAX];
static uint32_t held_h, held_n;
#define DELETE_HELD 0xFFFFu

void queues_reset(void)
{
    for (int i = 0; i < MAXQ; i++) {
        sq_cq[i] = NONE;
        cq_on[i] = false;
    }
    del_on = false;             /* a controller reset: the front end dropped the delete */
    held_n = 0;
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

static uint16_t queues_create_cq(const struct hal_cmd *c)
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

static uint16_t queues_create_sq(const struct hal_cmd *c)
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

static uint16_t queues_delete_sq(const struct hal_cmd *c)
{
    uint16_t qid = (uint16_t)c->dw[10];
    if (qid == 0 || qid >= MAXQ || sq_cq[qid] == NONE)
        return NVME_SC_INVALID_QID;
    /* only starts: the front end aborts the SQ's unfetched entries and drains its commands
     * in flight while the main loop serves them; queues_poll completes the command */
    hal_sq_config(qid, 0, 0, false, false, sq_cq[qid]);
    del_cmd = *c;
    del_on = true;
    return DELETE_HELD;
}

static uint16_t queues_delete_cq(const struct hal_cmd *c)
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

static void queues_run(const struct hal_cmd *c)
{
    uint16_t st = NVME_SC_INVALID_OPCODE;
    switch ((uint8_t)c->dw[0]) {
    case NVME_ADMIN_DELETE_IO_SQ: st = queues_delete_sq(c); break;
    case NVME_ADMIN_CREATE_IO_SQ: st = queues_create_sq(c); break;
    case NVME_ADMIN_DELETE_IO_CQ: st = queues_delete_cq(c); break;
    case NVME_ADMIN_CREATE_IO_CQ: st = queues_create_cq(c); break;
    default: break;
    }
    if (st != DELETE_HELD)
        admin_complete(c, st, 0);
}

bool queues_admin(const struct hal_cmd *c)
{
    switch ((uint8_t)c->dw[0]) {
    case NVME_ADMIN_DELETE_IO_SQ:
    case NVME_ADMIN_CREATE_IO_SQ:
    case NVME_ADMIN_DELETE_IO_CQ:
    case NVME_ADMIN_CREATE_IO_CQ:
        break;
    default:
        return false;
    }
    if (del_on || held_n) {
        held[(held_h + held_n++) % HOLD_MAX] = *c;
        return true;
    }
    queues_run(c);
    return true;
}

bool queues_hold_full(void)
{
    return held_n == HOLD_MAX;
}

void queues_poll(void)
{
    if (del_on) {
        if (hal_sq_config_busy())
            return;
        sq_cq[(uint16_t)del_cmd.dw[10]] = NONE;
        del_on = false;
        admin_complete(&del_cmd, 0, 0);
    }
    while (!del_on && held_n) {
        struct hal_cmd c = held[held_h];
        held_h = (held_h + 1) % HOLD_MAX;
        held_n--;
        queues_run(&c);
    }
}
