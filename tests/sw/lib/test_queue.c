// SPDX-License-Identifier: BSD-2-Clause
// test_queue.c - SQ tail wrap and fullness, CQ phase tags across wraps.
#include "../../../sw/lib/src/sl_priv.h"
#include "tinytest.h"

static struct nvme_sqe sq[4];
static struct nvme_cqe cq[4];

static void post(struct nvme_cqe *e, uint16_t cid, unsigned phase)
{
    e->cid = cid;
    e->status = (uint16_t)phase;
}

static void sq_full_and_wrap(void)
{
    struct sl_ring r;
    sl_ring_init(&r, 4, sq, cq);
    struct nvme_sqe c = {.opc = 2};
    for (int i = 0; i < 3; i++) {
        CHECK(!sl_ring_full(&r));
        c.cid = (uint16_t)i;
        sl_ring_put(&r, &c);
    }
    CHECK(sl_ring_full(&r));            /* depth 4 holds 3 */
    CHECK_EQ(r.sq_tail, 3);
    r.sq_head = 2;                      /* the device consumed two (CQE sq_head) */
    CHECK(!sl_ring_full(&r));
    c.cid = 9;
    sl_ring_put(&r, &c);
    CHECK_EQ(r.sq_tail, 0);             /* wrapped */
    c.cid = 10;
    sl_ring_put(&r, &c);
    CHECK_EQ(r.sq_tail, 1);
    CHECK(sl_ring_full(&r));
    CHECK_EQ(sq[3].cid, 9);
    CHECK_EQ(sq[0].cid, 10);
}

static void cq_phase(void)
{
    struct sl_ring r;
    memset(cq, 0, sizeof(cq));
    sl_ring_init(&r, 4, sq, cq);
    CHECK(sl_ring_peek(&r) == NULL);    /* zeroed memory: phase 0 is old */
    for (unsigned i = 0; i < 4; i++)
        post(&cq[i], (uint16_t)i, 1);
    for (unsigned i = 0; i < 4; i++) {
        const struct nvme_cqe *e = sl_ring_peek(&r);
        CHECK(e != NULL);
        if (e)
            CHECK_EQ(e->cid, i);
        sl_ring_pop(&r);
    }
    CHECK_EQ(r.cq_head, 0);
    CHECK_EQ(r.cq_phase, 0);            /* flipped on wrap */
    CHECK(sl_ring_peek(&r) == NULL);    /* entries of the last pass (phase 1) are old now */
    post(&cq[0], 7, 0);
    CHECK(sl_ring_peek(&r) != NULL);
    sl_ring_pop(&r);
    CHECK(sl_ring_peek(&r) == NULL);    /* cq[1] still has phase 1 */
    /* second wrap flips back */
    for (unsigned i = 1; i < 4; i++) {
        post(&cq[i], (uint16_t)i, 0);
        sl_ring_pop(&r);
    }
    CHECK_EQ(r.cq_phase, 1);
}

TT_MAIN(TT_CASE(sq_full_and_wrap), TT_CASE(cq_phase))
