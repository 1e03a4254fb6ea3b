// SPDX-License-Identifier: BSD-2-Clause
// ctrl.c - controller bring-up and shutdown in the order of Linux drivers/nvme/host/pci.c
// (nvme_pci_configure_admin_queue, nvme_disable_ctrl, nvme_enable_ctrl, nvme_wait_ready,
// nvme_setup_io_queues, nvme_dev_disable).
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sl_priv.h"

#define CAP_FIELD(cap, f) (((cap) & NVME_CAP_##f##_MASK) >> NVME_CAP_##f##_SHIFT)
#define CC_SET(f, v)      (((uint32_t)(v) << NVME_CC_##f##_SHIFT) & NVME_CC_##f##_MASK)
#define SHN_NORMAL        1u
#define SHST_COMPLETE     2u

void sl_ctrl_opts_default(struct sl_ctrl_opts *o)
{
    memset(o, 0, sizeof(*o));
    o->n_io_queues = 1;
    o->io_depth = 64;
    o->admin_depth = 32;
    o->use_irq = 0;
    o->admin_timeout_ns = 60000000000ull;
    o->io_timeout_ns = 30000000000ull;
    o->ready_poll_ns = 100000;
    o->shutdown_timeout_ns = SL_SHUTDOWN_NS;
}

/* nvme_wait_ready: poll CSTS until (CSTS & mask) == val, sleeping ready_poll_ns between
 * reads, for at most timeout_ns of transport time. */
static int wait_ready(struct sl_ctrl *c, uint32_t mask, uint32_t val, uint64_t timeout_ns,
                      const char *op)
{
    struct sl_transport *t = c->t;
    uint64_t deadline = t->ops->time_ns(t) + timeout_ns;
    for (;;) {
        uint32_t csts;
        int rc = t->ops->read32(t, NVME_REG_CSTS, &csts);
        if (rc < 0)
            return sl_err_t(c, rc, "reading CSTS");
        if (csts == 0xffffffffu)
            return sl_err(c, -ENODEV, "CSTS reads all ones during %s: the device is gone", op);
        if ((csts & mask) == val)
            return 0;
        if (t->ops->time_ns(t) >= deadline)
            return sl_err(c, -ETIMEDOUT, "device not ready; aborting %s after %llu ms, "
                          "CSTS=0x%x%s", op, (unsigned long long)(timeout_ns / 1000000u), csts,
                          (csts & NVME_CSTS_CFS_MASK) ? " (controller fatal status)" : "");
        struct sl_event ev;
        rc = t->ops->wait(t, 0, c->opts.ready_poll_ns, &ev);
        if (rc < 0)
            return sl_err_t(c, rc, "waiting for CSTS");
    }
}

static uint64_t cap_timeout_ns(const struct sl_ctrl *c)
{
    /* Linux: (NVME_CAP_TIMEOUT + 1) / 2 seconds */
    return ((CAP_FIELD(c->cap, TO) + 1) / 2) * 1000000000ull;
}

static int disable(struct sl_ctrl *c)
{
    c->cc &= ~(uint32_t)(NVME_CC_SHN_MASK | NVME_CC_EN_MASK);
    int rc = c->t->ops->write32(c->t, NVME_REG_CC, c->cc);
    if (rc < 0)
        return sl_err_t(c, rc, "writing CC");
    return wait_ready(c, NVME_CSTS_RDY_MASK, 0, cap_timeout_ns(c), "reset");
}

/* lo_hi_writeq, as Linux writes ASQ and ACQ */
static int write64_lo_hi(struct sl_ctrl *c, uint32_t off, uint64_t v)
{
    int rc = c->t->ops->write32(c->t, off, (uint32_t)v);
    if (rc == 0)
        rc = c->t->ops->write32(c->t, off + 4, (uint32_t)(v >> 32));
    return rc;
}

static int enable(struct sl_ctrl *c)
{
    struct sl_transport *t = c->t;
    c->cc = CC_SET(CSS, 0) | CC_SET(MPS, SL_PAGE_SHIFT - 12) | CC_SET(AMS, 0) |
            CC_SET(SHN, 0) | CC_SET(IOSQES, 6) | CC_SET(IOCQES, 4);
    int rc = t->ops->write32(t, NVME_REG_CC, c->cc);
    if (rc == 0)    /* CAP may change after the first CC write */
        rc = t->ops->read64(t, NVME_REG_CAP, &c->cap);
    if (rc < 0)
        return sl_err_t(c, rc, "configuring CC");
    c->cc |= NVME_CC_EN_MASK;
    rc = t->ops->write32(t, NVME_REG_CC, c->cc);
    if (rc < 0)
        return sl_err_t(c, rc, "writing CC.EN");
    rc = wait_ready(c, NVME_CSTS_RDY_MASK, NVME_CSTS_RDY_MASK, cap_timeout_ns(c),
                    "initialisation");
    if (rc == 0)
        c->enabled = 1;
    return rc;
}

static int configure_admin_queue(struct sl_ctrl *c)
{
    struct sl_transport *t = c->t;
    int rc = t->ops->read64(t, NVME_REG_CAP, &c->cap);
    if (rc == 0)
        rc = t->ops->read32(t, NVME_REG_VS, &c->vs);
    if (rc < 0)
        return sl_err_t(c, rc, "reading CAP/VS");
    if (c->cap == ~0ull)
        return sl_err(c, -ENODEV, "CAP reads all ones: no device behind BAR0");
    if (!(CAP_FIELD(c->cap, CSS) & 1u))
        return sl_err(c, -ENOTSUP, "CAP.CSS=0x%llx: the NVM command set is not supported",
                      (unsigned long long)CAP_FIELD(c->cap, CSS));
    if (CAP_FIELD(c->cap, MPSMIN) > 0)
        return sl_err(c, -ENOTSUP, "CAP.MPSMIN=%llu: the device's minimum page size exceeds "
                      "4 KiB", (unsigned long long)CAP_FIELD(c->cap, MPSMIN));
    c->dstrd = (unsigned)CAP_FIELD(c->cap, DSTRD);
    rc = disable(c);
    if (rc < 0)
        return rc;
    unsigned depth = c->opts.admin_depth;
    unsigned mqes = (unsigned)CAP_FIELD(c->cap, MQES) + 1;
    if (depth > mqes)
        depth = mqes;
    if (depth > 4096)
        depth = 4096;
    rc = sl_queue_alloc(c, 0, depth);
    if (rc < 0)
        return rc;
    uint32_t aqa = depth - 1u;
    aqa |= aqa << 16;
    rc = t->ops->write32(t, NVME_REG_AQA, aqa);
    if (rc == 0)
        rc = write64_lo_hi(c, NVME_REG_ASQ, c->q[0].sq_mem.bus);
    if (rc == 0)
        rc = write64_lo_hi(c, NVME_REG_ACQ, c->q[0].cq_mem.bus);
    if (rc < 0)
        return sl_err_t(c, rc, "writing AQA/ASQ/ACQ");
    return enable(c);
}

static void copy_str(char *dst, const char *src, size_t n)
{
    memcpy(dst, src, n);
    dst[n] = 0;
    for (size_t i = n; i > 0 && (dst[i - 1] == ' ' || dst[i - 1] == 0); i--)
        dst[i - 1] = 0;
}

int sl_identify_ns1(struct sl_ctrl *c)
{
    if (c->id.nn == 0) {
        memset(&c->ns, 0, sizeof(c->ns));
        c->lba_bytes = 0;
        return 0;
    }
    int rc = sl_identify(c, NVME_ID_CNS_NAMESPACE, 1, &c->ns);
    if (rc != 0)
        return rc;
    unsigned lbaf = c->ns.flbas & 0xfu;
    unsigned lbads = c->ns.lbaf[lbaf].lbads;
    if (lbads < 9 || lbads > 16)
        return sl_err(c, -EPROTO, "namespace 1: LBA format %u has LBADS %u (not 9..16)", lbaf,
                      lbads);
    c->lba_bytes = 1u << lbads;
    return 0;
}

static int setup_io_queues(struct sl_ctrl *c)
{
    unsigned n = c->opts.n_io_queues;
    if (n < 1)
        n = 1;
    if (n > SL_MAX_QUEUES)
        n = SL_MAX_QUEUES;
    uint32_t dw0 = 0;
    int rc = sl_set_features(c, NVME_FEAT_NUMBER_OF_QUEUES, (n - 1) | ((n - 1) << 16), &dw0);
    if (rc != 0)
        return rc;
    unsigned nsq = (dw0 & 0xffffu) + 1, ncq = (dw0 >> 16) + 1;
    if (n > nsq)
        n = nsq;
    if (n > ncq)
        n = ncq;
    unsigned depth = c->opts.io_depth;
    unsigned mqes = (unsigned)CAP_FIELD(c->cap, MQES) + 1;
    if (depth > mqes)
        depth = mqes;
    if (depth < 2)
        depth = 2;
    for (unsigned qid = 1; qid <= n; qid++) {
        rc = sl_queue_alloc(c, qid, depth);
        if (rc < 0)
            return rc;
        c->n_io = qid;      /* so that close frees it */
        rc = sl_queue_create(c, qid);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int sl_ctrl_open(struct sl_transport *t, const struct sl_ctrl_opts *o, struct sl_ctrl **out)
{
    *out = NULL;
    struct sl_ctrl *c = calloc(1, sizeof(*c));
    if (!c) {
        sl_transport_close(t);
        return sl_terr(NULL, -ENOMEM, "allocating the controller");
    }
    *out = c;
    c->t = t;
    if (o)
        c->opts = *o;
    else
        sl_ctrl_opts_default(&c->opts);
    if (c->opts.use_irq && !(t->events & SL_EV_IRQ))
        return sl_err(c, -ENOTSUP, "the %s transport has no interrupts", t->ops->name);
    if (c->opts.admin_depth < 2)
        c->opts.admin_depth = 2;
    /* the admin queue and Identify move at most a page until MDTS is known */
    c->max_transfer = SL_PAGE;
    int rc = t->ops->dma_alloc(t, SL_PAGE, &c->bounce);    /* grown once MDTS is known */
    if (rc < 0)
        return sl_err_t(c, rc, "allocating the bounce buffer");
    rc = configure_admin_queue(c);
    if (rc != 0)
        return rc;
    rc = sl_identify(c, NVME_ID_CNS_CONTROLLER, 0, &c->id);
    if (rc != 0)
        return rc;
    uint64_t mdts = c->id.mdts ? (uint64_t)SL_PAGE << c->id.mdts : SL_MAX_TRANSFER;
    c->max_transfer = mdts < SL_MAX_TRANSFER ? (uint32_t)mdts : SL_MAX_TRANSFER;
    if (c->bounce.len < c->max_transfer) {
        t->ops->dma_free(t, &c->bounce);
        rc = t->ops->dma_alloc(t, c->max_transfer, &c->bounce);
        if (rc < 0)
            return sl_err_t(c, rc, "allocating the bounce buffer");
    }
    /* the admin queue's PRP list pages were sized for one page: re-size them */
    unsigned need = sl_prp_list_pages(c->max_transfer, SL_PAGE);
    if (need > c->q[0].list_pages) {
        struct sl_queue *q = &c->q[0];
        struct sl_dma mem;
        need = need > 4 ? 4 : need;
        rc = t->ops->dma_alloc(t, (size_t)(q->ring.depth - 1) * need * SL_PAGE, &mem);
        if (rc < 0)
            return sl_err_t(c, rc, "allocating PRP lists");
        if (q->prp_mem.vaddr)
            t->ops->dma_free(t, &q->prp_mem);
        q->prp_mem = mem;
        q->list_pages = need;
        for (unsigned i = 0; i + 1u < q->ring.depth; i++)
            for (unsigned k = 0; k < need; k++) {
                size_t off = ((size_t)i * need + k) * SL_PAGE;
                q->reqs[i].list_va[k] = (uint64_t *)((uint8_t *)mem.vaddr + off);
                q->reqs[i].list_bus[k] = mem.bus + off;
            }
    }
    rc = setup_io_queues(c);
    if (rc != 0)
        return rc;
    rc = sl_identify_ns1(c);
    if (rc != 0)
        return rc;
    c->err[0] = 0;
    return 0;
}

static int shutdown_ctrl(struct sl_ctrl *c)
{
    c->cc &= ~(uint32_t)NVME_CC_SHN_MASK;
    c->cc |= CC_SET(SHN, SHN_NORMAL);
    int rc = c->t->ops->write32(c->t, NVME_REG_CC, c->cc);
    if (rc < 0)
        return sl_err_t(c, rc, "writing CC.SHN");
    /* Linux: shutdown_timeout, raised to RTD3E when the controller reports a longer one */
    uint64_t timeout = c->opts.shutdown_timeout_ns;
    if ((uint64_t)c->id.rtd3e * 1000u > timeout)
        timeout = (uint64_t)c->id.rtd3e * 1000u;
    return wait_ready(c, NVME_CSTS_SHST_MASK, SHST_COMPLETE << NVME_CSTS_SHST_SHIFT, timeout,
                      "shutdown");
}

/* Both ways of letting the controller go: every SQ deleted before any CQ, then either a
 * normal shutdown (CC.SHN) or a plain disable (CC.EN = 0), then everything freed. */
static int release(struct sl_ctrl *c, bool shutdown)
{
    if (!c)
        return 0;
    int rc = 0;
    if (c->enabled) {
        for (unsigned qid = c->n_io; qid >= 1; qid--)
            sl_queue_delete(c, qid, 0);
        for (unsigned qid = c->n_io; qid >= 1; qid--)
            sl_queue_delete(c, qid, 1);
        rc = shutdown ? shutdown_ctrl(c) : disable(c);
        if (rc < 0)     /* c goes away: keep the message where sl_errmsg(NULL) finds it */
            sl_terr(NULL, 0, "%s", c->err);
    }
    for (unsigned qid = 0; qid <= c->n_io; qid++)
        sl_queue_free(c, qid);
    if (c->bounce.vaddr)
        c->t->ops->dma_free(c->t, &c->bounce);
    for (unsigned i = 0; i < SL_RETIRED_MAX; i++)
        if (c->retired[i].used)
            c->t->ops->dma_free(c->t, &c->retired[i].m);
    sl_transport_close(c->t);
    free(c);
    return rc;
}

int sl_ctrl_close(struct sl_ctrl *c)
{
    return release(c, true);
}

int sl_ctrl_detach(struct sl_ctrl *c)
{
    return release(c, false);
}

struct sl_transport *sl_ctrl_transport(struct sl_ctrl *c)
{
    return c->t;
}

uint64_t sl_time_ns(struct sl_ctrl *c)
{
    return c->t->ops->time_ns(c->t);
}

int sl_dma_alloc(struct sl_ctrl *c, size_t len, struct sl_dma *out)
{
    int rc = c->t->ops->dma_alloc(c->t, len, out);
    return rc < 0 ? sl_err_t(c, rc, "allocating DMA memory") : 0;
}

void sl_dma_free(struct sl_ctrl *c, struct sl_dma *d)
{
    c->t->ops->dma_free(c->t, d);
}

const struct nvme_id_ctrl *sl_id_ctrl(const struct sl_ctrl *c)
{
    return &c->id;
}

const struct nvme_id_ns *sl_id_ns(const struct sl_ctrl *c)
{
    return &c->ns;
}

void sl_ctrl_info(const struct sl_ctrl *c, struct sl_info *info)
{
    memset(info, 0, sizeof(*info));
    copy_str(info->model, c->id.mn, sizeof(c->id.mn));
    copy_str(info->serial, c->id.sn, sizeof(c->id.sn));
    copy_str(info->firmware, c->id.fr, sizeof(c->id.fr));
    strncpy(info->transport, c->t->ops->name, sizeof(info->transport) - 1);
    info->vid = c->id.vid;
    info->version = c->vs;
    info->cap = c->cap;
    info->max_transfer = c->max_transfer;
    info->nn = c->id.nn;
    info->oncs = c->id.oncs;
    info->vwc = c->id.vwc;
    info->lba_bytes = c->lba_bytes;
    info->ns_blocks = c->ns.nsze;
    info->ns_capacity = c->ns.ncap;
    info->ns_used = c->ns.nuse;
    info->n_io_queues = c->n_io;
    info->io_depth = c->n_io ? c->q[1].ring.depth : 0;
    info->use_irq = c->opts.use_irq;
    info->n_vectors = c->t->n_vectors;
}
