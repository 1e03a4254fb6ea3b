// SPDX-License-Identifier: BSD-2-Clause
// bench.c - a fixed-queue-depth workload on the asynchronous API: sequential or random
// reads/writes, latency percentiles in transport (simulated) time.
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sl_priv.h"

struct bench {
    struct sl_bench_result *r;
    uint64_t *lat;
    uint32_t *free_slots;
    unsigned n_free;
};

struct slot_tag {
    struct bench *b;
    uint32_t slot;
};

static void on_cpl(const struct sl_cpl *cpl, void *user)
{
    struct slot_tag *t = user;
    struct bench *b = t->b;
    b->lat[b->r->ios++] = cpl->complete_ns - cpl->submit_ns;
    if (cpl->status) {
        if (!b->r->errors)
            b->r->first_error = cpl->status;
        b->r->errors++;
    }
    b->free_slots[b->n_free++] = t->slot;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int sl_bench(struct sl_ctrl *c, const struct sl_bench_opts *o, struct sl_bench_result *r)
{
    memset(r, 0, sizeof(*r));
    unsigned qid = o->qid ? o->qid : 1;
    if (qid > c->n_io)
        return sl_err(c, -EINVAL, "bench: no I/O queue %u", qid);
    if (!c->lba_bytes)
        return sl_err(c, -ENODEV, "bench: namespace 1 does not exist");
    uint64_t end = c->ns.nsze;
    uint64_t count = o->lba_count ? o->lba_count : (end > o->lba_first ? end - o->lba_first : 0);
    if (o->io_blocks == 0 || o->qd == 0 || o->n_ios == 0 || o->lba_first + count > end ||
        count < o->io_blocks)
        return sl_err(c, -EINVAL, "bench: %u blocks per I/O, QD %u, %llu I/Os in LBA %llu + "
                      "%llu of %llu", o->io_blocks, o->qd, (unsigned long long)o->n_ios,
                      (unsigned long long)o->lba_first, (unsigned long long)count,
                      (unsigned long long)end);
    if (o->qd + 1u > c->q[qid].ring.depth)
        return sl_err(c, -EINVAL, "bench: QD %u needs a queue deeper than %u", o->qd,
                      c->q[qid].ring.depth);
    size_t io_bytes = (size_t)o->io_blocks * c->lba_bytes;
    if (io_bytes > c->max_transfer)
        return sl_err(c, -E2BIG, "bench: %zu-byte I/Os exceed the maximum transfer of %u",
                      io_bytes, c->max_transfer);
    struct bench b = {.r = r};
    struct sl_dma buf = {0};
    struct slot_tag *tags = calloc(o->qd, sizeof(*tags));
    b.lat = malloc(o->n_ios * sizeof(*b.lat));
    b.free_slots = calloc(o->qd, sizeof(*b.free_slots));
    int rc = 0;
    if (!tags || !b.lat || !b.free_slots) {
        rc = sl_err(c, -ENOMEM, "bench: out of memory for %llu latencies",
                    (unsigned long long)o->n_ios);
        goto out;
    }
    rc = sl_dma_alloc(c, io_bytes * o->qd, &buf);
    if (rc < 0)
        goto out;
    for (uint32_t i = 0; i < o->qd; i++) {
        tags[i] = (struct slot_tag){.b = &b, .slot = i};
        b.free_slots[b.n_free++] = o->qd - 1 - i;
    }
    uint64_t units = count / o->io_blocks, next = 0, submitted = 0;
    uint64_t rnd = o->seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull;
    uint64_t t0 = sl_time_ns(c);
    while (r->ios < o->n_ios) {
        while (submitted < o->n_ios && b.n_free) {
            uint64_t unit = o->random ? xorshift(&rnd) % units : next++ % units;
            uint64_t lba = o->lba_first + unit * o->io_blocks;
            uint32_t slot = b.free_slots[--b.n_free];
            uint8_t *p = (uint8_t *)buf.vaddr + (size_t)slot * io_bytes;
            if (o->write)
                for (uint32_t k = 0; k < o->io_blocks; k++)
                    sl_pattern_fill(o->seed, lba + k, p + (size_t)k * c->lba_bytes,
                                    c->lba_bytes);
            rc = sl_queue(c, qid, &(struct nvme_sqe){
                              .opc = o->write ? NVME_CMD_WRITE : NVME_CMD_READ, .nsid = 1,
                              .cdw10 = (uint32_t)lba, .cdw11 = (uint32_t)(lba >> 32),
                              .cdw12 = o->io_blocks - 1u},
                          &buf, (size_t)slot * io_bytes, io_bytes, on_cpl, &tags[slot]);
            if (rc == -EBUSY && sl_inflight(c, qid)) {
                /* The SQ ring is full as far as the host knows: the device has not yet
                 * consumed entries whose commands completed (a CQE's SQ head lags). A host
                 * waits for a completion that moves the head, as a driver does. */
                b.free_slots[b.n_free++] = slot;
                rc = 0;
                break;
            }
            if (rc < 0)
                goto drain;
            submitted++;
        }
        rc = sl_ring(c, qid);   /* one doorbell for the batch, as fio's commit does */
        if (rc == 0)
            rc = sl_wait(c, qid, 1, c->opts.io_timeout_ns);
        if (rc < 0)
            goto drain;
    }
    r->elapsed_ns = sl_time_ns(c) - t0;
    r->bytes = r->ios * io_bytes;
    qsort(b.lat, r->ios, sizeof(*b.lat), cmp_u64);
    uint64_t sum = 0;
    for (uint64_t i = 0; i < r->ios; i++)
        sum += b.lat[i];
    r->lat_min_ns = b.lat[0];
    r->lat_max_ns = b.lat[r->ios - 1];
    r->lat_mean_ns = sum / r->ios;
    r->lat_p50_ns = b.lat[(r->ios - 1) * 50 / 100];
    r->lat_p99_ns = b.lat[(r->ios - 1) * 99 / 100];
    r->lat_p999_ns = b.lat[(r->ios - 1) * 999 / 1000];
    rc = 0;
    goto out;
drain:
    /* the DMA buffer and tags must outlive every command in flight */
    if (sl_inflight(c, qid)) {
        char keep[sizeof(c->err)];
        memcpy(keep, c->err, sizeof(keep));
        sl_wait(c, qid, sl_inflight(c, qid), c->opts.io_timeout_ns);
        memcpy(c->err, keep, sizeof(keep));
        /* still in flight after a timeout: forget their callbacks (they point here) and
         * leave their DMA buffer allocated, since the device may still write it */
        struct sl_queue *q = &c->q[qid];
        for (unsigned i = 0; i + 1u < q->ring.depth; i++)
            if (q->reqs[i].busy && q->reqs[i].cb == on_cpl) {
                q->reqs[i].cb = NULL;
                q->reqs[i].user = NULL;
            }
    }
out:
    if (buf.vaddr && !sl_inflight(c, qid))
        sl_dma_free(c, &buf);
    free(tags);
    free(b.lat);
    free(b.free_slots);
    return rc;
}
