// SPDX-License-Identifier: BSD-2-Clause
// queue.c - submission and completion rings: tail/head arithmetic and phase tags.
#include <string.h>

#include "sl_priv.h"

void sl_ring_init(struct sl_ring *r, uint16_t depth, void *sq, void *cq)
{
    memset(r, 0, sizeof(*r));
    r->depth = depth;
    r->cq_phase = 1;
    r->sq = sq;
    r->cq = cq;
}

int sl_ring_full(const struct sl_ring *r)
{
    return (uint16_t)((r->sq_tail + 1u) % r->depth) == r->sq_head;
}

void sl_ring_put(struct sl_ring *r, const struct nvme_sqe *sqe)
{
    memcpy(&r->sq[r->sq_tail], sqe, sizeof(*sqe));
    r->sq_tail = (uint16_t)((r->sq_tail + 1u) % r->depth);
    /* the SQE must be in memory before the doorbell write that follows */
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

const struct nvme_cqe *sl_ring_peek(const struct sl_ring *r)
{
    const struct nvme_cqe *e = &r->cq[r->cq_head];
    uint16_t status = __atomic_load_n(&e->status, __ATOMIC_ACQUIRE);
    return (status & 1u) == r->cq_phase ? e : NULL;
}

void sl_ring_pop(struct sl_ring *r)
{
    if (++r->cq_head == r->depth) {
        r->cq_head = 0;
        r->cq_phase ^= 1u;
    }
}
