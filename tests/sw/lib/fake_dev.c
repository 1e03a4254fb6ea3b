// SPDX-License-Identifier: BSD-2-Clause
// fake_dev.c - the scripted NVMe controller of fake_dev.h.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_dev.h"
#include "ssdlab/nvme_regs.h"

#define PAGE 4096u

static void logf_(struct fake_dev *d, const char *fmt, unsigned size, uint32_t off, uint64_t v)
{
    if (d->nlog < FAKE_LOG_MAX)
        snprintf(d->log[d->nlog++], sizeof(d->log[0]), fmt, size, off, (unsigned long long)v);
}

void fake_dev_init(struct fake_dev *d, uint8_t *ram, uint64_t ram_bytes)
{
    memset(d, 0, sizeof(*d));
    d->ram = ram;
    d->ram_bytes = ram_bytes;
    d->mmio_ns = 100;
    d->cmd_ns = 2000;
    d->cap = 1023ull | (1ull << 16) | (2ull << 24) | (1ull << 37);
    d->vs = 0x10400;
    d->mdts = 5;
    d->nsqa = 63;
    d->n_vectors = 1;
    d->nsze = 2048;
    d->lbads = 12;
}

void fake_dev_fini(struct fake_dev *d)
{
    free(d->media);
    d->media = NULL;
}

static uint8_t *media(struct fake_dev *d)
{
    if (!d->media)
        d->media = calloc(d->nsze, 1ull << d->lbads);
    return d->media;
}

uint64_t fake_dev_read(struct fake_dev *d, uint32_t off, unsigned size)
{
    d->now_ns += d->mmio_ns;
    uint64_t v = 0;
    switch (off) {
    case NVME_REG_CAP: v = d->cap; break;
    case NVME_REG_CAP + 4: v = d->cap >> 32; break;
    case NVME_REG_VS: v = d->vs; break;
    case NVME_REG_CC: v = d->cc; break;
    case NVME_REG_CSTS: v = d->csts; break;
    case NVME_REG_AQA: v = d->aqa; break;
    case NVME_REG_ASQ: v = d->asq; break;
    case NVME_REG_ACQ: v = d->acq; break;
    default: v = 0;
    }
    if (size == 4)
        v &= 0xffffffffu;
    if (off < 0x1000 || d->log_doorbells)
        logf_(d, "R%u 0x%02x = 0x%llx", size * 8, off, v);
    return v;
}

static void reset_queues(struct fake_dev *d)
{
    memset(d->sq, 0, sizeof(d->sq));
    memset(d->cq, 0, sizeof(d->cq));
}

static void write_cc(struct fake_dev *d, uint32_t v)
{
    uint32_t old = d->cc;
    d->cc = v;
    if ((v & 1u) && !(old & 1u)) {
        reset_queues(d);
        d->sq[0].on = d->cq[0].on = 1;
        d->sq[0].base = d->asq;
        d->sq[0].size = (uint16_t)((d->aqa & 0xfffu) + 1);
        d->cq[0].base = d->acq;
        d->cq[0].size = (uint16_t)(((d->aqa >> 16) & 0xfffu) + 1);
        d->cq[0].phase = 1;
        d->cq[0].ien = 1;
        if (!d->rdy_never)
            d->csts |= 1u;
    } else if (!(v & 1u) && (old & 1u)) {
        reset_queues(d);
        if (!d->rdy_stuck)
            d->csts &= ~1u;
    }
    if ((v & NVME_CC_SHN_MASK) && !(old & NVME_CC_SHN_MASK))
        d->csts = (d->csts & ~NVME_CSTS_SHST_MASK) |
                  ((d->shst_never ? 1u : 2u) << NVME_CSTS_SHST_SHIFT);
}

void fake_dev_write(struct fake_dev *d, uint32_t off, unsigned size, uint64_t val)
{
    d->now_ns += d->mmio_ns;
    if (off < 0x1000 || d->log_doorbells)
        logf_(d, "W%u 0x%02x = 0x%llx", size * 8, off, val);
    if (size == 8 && off < 0x1000) {
        fake_dev_write(d, off, 4, val & 0xffffffffu);
        fake_dev_write(d, off + 4, 4, val >> 32);
        d->now_ns -= 2 * d->mmio_ns;
        d->nlog -= 2;
        return;
    }
    switch (off) {
    case NVME_REG_CC: write_cc(d, (uint32_t)val); return;
    case NVME_REG_AQA: d->aqa = (uint32_t)val; return;
    case NVME_REG_ASQ: d->asq = (d->asq & ~0xffffffffull) | (val & 0xfffff000u); return;
    case NVME_REG_ASQ + 4: d->asq = (d->asq & 0xffffffffull) | (val << 32); return;
    case NVME_REG_ACQ: d->acq = (d->acq & ~0xffffffffull) | (val & 0xfffff000u); return;
    case NVME_REG_ACQ + 4: d->acq = (d->acq & 0xffffffffull) | (val << 32); return;
    default: break;
    }
    if (off >= 0x1000) {
        unsigned idx = (off - 0x1000) / 4, qid = idx / 2;
        if (qid > 64)
            return;
        if (idx & 1u) {
            d->cq[qid].head = (uint16_t)val;
        } else {
            d->sq[qid].tail = (uint16_t)val;
            d->busy_until = d->now_ns + (qid && d->late_io_ns ? d->late_io_ns : d->cmd_ns);
        }
    }
}

/* --- DMA ------------------------------------------------------------------------------- */
static int dma(struct fake_dev *d, uint64_t addr, void *buf, size_t len, int to_host)
{
    if (addr >= d->ram_bytes || len > d->ram_bytes - addr)
        return -1;
    if (to_host) {
        memcpy(d->ram + addr, buf, len);
        d->pending_dma = addr + 1;
    } else {
        memcpy(buf, d->ram + addr, len);
    }
    return 0;
}

/* The device's own PRP walker: returns 0, or an NVMe status. */
static uint16_t prp_xfer(struct fake_dev *d, uint64_t prp1, uint64_t prp2, uint8_t *buf,
                         size_t len, int to_host)
{
    size_t first = PAGE - (prp1 & (PAGE - 1));
    if (first > len)
        first = len;
    if (prp1 & 3u)
        return NVME_SC_PRP_OFFSET_INVALID;
    if (dma(d, prp1, buf, first, to_host))
        return NVME_SC_DATA_TRANSFER_ERROR;
    size_t done = first;
    if (done == len)
        return 0;
    if (len - done <= PAGE) {
        if (prp2 & (PAGE - 1))
            return NVME_SC_PRP_OFFSET_INVALID;
        return dma(d, prp2, buf + done, len - done, to_host) ? NVME_SC_DATA_TRANSFER_ERROR : 0;
    }
    if (prp2 & 7u)
        return NVME_SC_PRP_OFFSET_INVALID;
    uint64_t list = prp2 & ~(uint64_t)(PAGE - 1);
    unsigned idx = (unsigned)((prp2 & (PAGE - 1)) / 8);
    while (done < len) {
        uint64_t entry;
        if (dma(d, list + idx * 8u, &entry, 8, 0))
            return NVME_SC_DATA_TRANSFER_ERROR;
        if (idx == PAGE / 8 - 1 && len - done > PAGE) {
            if (entry & (PAGE - 1))
                return NVME_SC_PRP_OFFSET_INVALID;
            list = entry;
            idx = 0;
            continue;
        }
        if (entry & (PAGE - 1))
            return NVME_SC_PRP_OFFSET_INVALID;
        size_t n = len - done < PAGE ? len - done : PAGE;
        if (dma(d, entry, buf + done, n, to_host))
            return NVME_SC_DATA_TRANSFER_ERROR;
        done += n;
        idx++;
    }
    return 0;
}

/* --- commands ---------------------------------------------------------------------------- */
static void str_field(char *dst, size_t n, const char *src)
{
    memset(dst, ' ', n);
    memcpy(dst, src, strlen(src) < n ? strlen(src) : n);
}

static uint16_t admin(struct fake_dev *d, const struct nvme_sqe *c, uint32_t *dw0)
{
    static uint8_t page[PAGE];
    memset(page, 0, sizeof(page));
    switch (c->opc) {
    case NVME_ADMIN_IDENTIFY: {
        unsigned cns = c->cdw10 & 0xffu;
        if (cns == NVME_ID_CNS_CONTROLLER) {
            struct nvme_id_ctrl *id = (void *)page;
            id->vid = 0x1d1d;
            str_field(id->sn, sizeof(id->sn), "FAKE0001");
            str_field(id->mn, sizeof(id->mn), "ssdlab fake controller");
            str_field(id->fr, sizeof(id->fr), "1.0");
            id->mdts = d->mdts;
            id->rtd3e = d->rtd3e;
            id->nn = 1;
            id->oncs = NVME_ONCS_DSM | NVME_ONCS_WRITE_ZEROES;
            id->sqes = 0x66;
            id->cqes = 0x44;
        } else if (cns == NVME_ID_CNS_NAMESPACE) {
            if (c->nsid != 1)
                return NVME_SC_INVALID_NAMESPACE;
            struct nvme_id_ns *ns = (void *)page;
            ns->nsze = ns->ncap = ns->nuse = d->nsze;
            ns->lbaf[0].lbads = d->lbads;
        } else {
            return NVME_SC_INVALID_FIELD;
        }
        return prp_xfer(d, c->prp1, c->prp2, page, PAGE, 1);
    }
    case NVME_ADMIN_SET_FEATURES:
        if ((c->cdw10 & 0xffu) == NVME_FEAT_NUMBER_OF_QUEUES)
            *dw0 = d->nsqa | ((uint32_t)d->nsqa << 16);
        return 0;
    case NVME_ADMIN_GET_FEATURES:
        return 0;
    case NVME_ADMIN_CREATE_IO_CQ: {
        unsigned qid = c->cdw10 & 0xffffu, size = (c->cdw10 >> 16) + 1;
        unsigned iv = c->cdw11 >> 16;
        if (qid == 0 || qid > 64 || d->cq[qid].on)
            return NVME_SC_INVALID_QID;
        if (size < 2 || size > (d->cap & 0xffffu) + 1)
            return NVME_SC_INVALID_QUEUE_SIZE;
        if (!(c->cdw11 & NVME_QUEUE_PHYS_CONTIG))
            return NVME_SC_INVALID_FIELD;
        if (iv >= d->n_vectors)
            return NVME_SC_INVALID_INTERRUPT_VECTOR;
        d->cq[qid].on = 1;
        d->cq[qid].base = c->prp1;
        d->cq[qid].size = (uint16_t)size;
        d->cq[qid].phase = 1;
        d->cq[qid].iv = (uint16_t)iv;
        d->cq[qid].ien = !!(c->cdw11 & NVME_CQ_IRQ_ENABLED);
        d->cq[qid].tail = d->cq[qid].head = 0;
        return 0;
    }
    case NVME_ADMIN_CREATE_IO_SQ: {
        unsigned qid = c->cdw10 & 0xffffu, size = (c->cdw10 >> 16) + 1;
        unsigned cqid = c->cdw11 >> 16;
        if (qid == 0 || qid > 64 || d->sq[qid].on)
            return NVME_SC_INVALID_QID;
        if (cqid == 0 || cqid > 64 || !d->cq[cqid].on)
            return NVME_SC_CQ_INVALID;
        d->sq[qid].on = 1;
        d->sq[qid].base = c->prp1;
        d->sq[qid].size = (uint16_t)size;
        d->sq[qid].cqid = (uint16_t)cqid;
        d->sq[qid].head = d->sq[qid].tail = 0;
        return 0;
    }
    case NVME_ADMIN_DELETE_IO_SQ: {
        unsigned qid = c->cdw10 & 0xffffu;
        if (qid == 0 || qid > 64 || !d->sq[qid].on)
            return NVME_SC_INVALID_QID;
        d->sq[qid].on = 0;
        return 0;
    }
    case NVME_ADMIN_DELETE_IO_CQ: {
        unsigned qid = c->cdw10 & 0xffffu;
        if (qid == 0 || qid > 64 || !d->cq[qid].on)
            return NVME_SC_INVALID_QID;
        for (unsigned i = 1; i <= 64; i++)
            if (d->sq[i].on && d->sq[i].cqid == qid)
                return NVME_SC_INVALID_QUEUE_DELETION;
        d->cq[qid].on = 0;
        return 0;
    }
    case NVME_ADMIN_GET_LOG_PAGE: {
        unsigned lid = c->cdw10 & 0xffu;
        size_t len = (((c->cdw10 >> 16) | ((size_t)(c->cdw11 & 0xffffu) << 16)) + 1) * 4;
        if (lid != NVME_LOG_SMART_HEALTH || len > PAGE)
            return NVME_SC_INVALID_LOG_PAGE;
        struct nvme_smart_log *s = (void *)page;
        s->temperature[0] = 0x3b;
        s->temperature[1] = 0x01;       /* 315 K */
        s->avail_spare = 100;
        s->host_reads[0] = d->host_reads;
        s->host_writes[0] = d->host_writes;
        s->data_units_written[0] = 7;
        return prp_xfer(d, c->prp1, c->prp2, page, len, 1);
    }
    case NVME_ADMIN_FORMAT_NVM:
        if (c->nsid != 1 && c->nsid != 0xffffffffu)
            return NVME_SC_INVALID_NAMESPACE;
        if ((c->cdw10 & 0xfu) != 0)
            return NVME_SC_INVALID_FORMAT;
        memset(media(d), 0, d->nsze << d->lbads);
        return 0;
    default:
        return NVME_SC_INVALID_OPCODE;
    }
}

static uint16_t io(struct fake_dev *d, const struct nvme_sqe *c)
{
    if (d->force_status) {
        uint16_t s = d->force_status;
        d->force_status = 0;
        return s;
    }
    if (c->opc == NVME_CMD_FLUSH)
        return (c->nsid == 1 || c->nsid == 0xffffffffu) ? 0 : NVME_SC_INVALID_NAMESPACE;
    if (c->nsid != 1)
        return NVME_SC_INVALID_NAMESPACE;
    uint64_t slba = c->cdw10 | ((uint64_t)c->cdw11 << 32);
    uint32_t nlb = (c->cdw12 & 0xffffu) + 1;
    size_t bs = 1u << d->lbads;
    switch (c->opc) {
    case NVME_CMD_READ:
    case NVME_CMD_WRITE: {
        if (slba >= d->nsze || nlb > d->nsze - slba)
            return NVME_SC_LBA_OUT_OF_RANGE;
        uint8_t *p = media(d) + slba * bs;
        if (c->opc == NVME_CMD_READ)
            d->host_reads++;
        else
            d->host_writes++;
        return prp_xfer(d, c->prp1, c->prp2, p, nlb * bs, c->opc == NVME_CMD_READ);
    }
    case NVME_CMD_WRITE_ZEROES:
        if (slba >= d->nsze || nlb > d->nsze - slba)
            return NVME_SC_LBA_OUT_OF_RANGE;
        memset(media(d) + slba * bs, 0, nlb * bs);
        return 0;
    case NVME_CMD_DATASET_MANAGEMENT: {
        unsigned nr = (c->cdw10 & 0xffu) + 1;
        struct nvme_dsm_range r[256];
        uint16_t s = prp_xfer(d, c->prp1, c->prp2, (uint8_t *)r, nr * sizeof(r[0]), 0);
        if (s)
            return s;
        for (unsigned i = 0; i < nr; i++)
            if (r[i].slba >= d->nsze || r[i].nlb > d->nsze - r[i].slba)
                return NVME_SC_LBA_OUT_OF_RANGE;
        if (c->cdw11 & NVME_DSM_AD)
            for (unsigned i = 0; i < nr; i++)
                memset(media(d) + r[i].slba * bs, 0, (size_t)r[i].nlb * bs);
        return 0;
    }
    default:
        return NVME_SC_INVALID_OPCODE;
    }
}

static void post(struct fake_dev *d, unsigned sqid, uint16_t cid, uint16_t status, uint32_t dw0)
{
    unsigned cqid = d->sq[sqid].cqid;
    if (!d->cq[cqid].on)
        return;
    struct nvme_cqe e = {
        .dw0 = dw0, .sq_id = (uint16_t)sqid, .cid = cid,
        .sq_head = (uint16_t)((d->sq[sqid].head + d->sq[sqid].size -
                               (sqid ? d->sq_head_lag % d->sq[sqid].size : 0)) %
                              d->sq[sqid].size),
        .status = (uint16_t)((status << 1) | d->cq[cqid].phase),
    };
    if ((uint16_t)((d->cq[cqid].tail + 1) % d->cq[cqid].size) == d->cq[cqid].head)
        fprintf(stderr, "fake_dev: CQ %u overflow (the host did not free entries)\n", cqid);
    dma(d, d->cq[cqid].base + d->cq[cqid].tail * 16u, &e, sizeof(e), 1);
    if (++d->cq[cqid].tail == d->cq[cqid].size) {
        d->cq[cqid].tail = 0;
        d->cq[cqid].phase ^= 1u;
    }
    if (d->cq[cqid].ien)
        d->pending_irq |= 1u << d->cq[cqid].iv;
}

static int has_work(struct fake_dev *d)
{
    for (unsigned q = 0; q <= 64; q++)
        if (d->sq[q].on && d->sq[q].head != d->sq[q].tail)
            return 1;
    return 0;
}

static void process(struct fake_dev *d)
{
    for (unsigned q = 0; q <= 64; q++) {
        while (d->sq[q].on && d->sq[q].head != d->sq[q].tail) {
            struct nvme_sqe c;
            dma(d, d->sq[q].base + d->sq[q].head * 64u, &c, sizeof(c), 0);
            d->sq[q].head = (uint16_t)((d->sq[q].head + 1) % d->sq[q].size);
            if (d->ncmds < FAKE_LOG_MAX) {
                d->cmds[d->ncmds].qid = (uint8_t)q;
                d->cmds[d->ncmds].opc = c.opc;
                d->cmds[d->ncmds].cdw10 = c.cdw10;
                d->cmds[d->ncmds++].cdw11 = c.cdw11;
            }
            uint32_t dw0 = 0;
            if (q == 0) {
                uint16_t s = admin(d, &c, &dw0);
                post(d, 0, c.cid, s, dw0);
            } else if (!d->lose_io) {
                uint16_t s = io(d, &c);
                post(d, q, c.cid, s, 0);
            }
        }
    }
}

unsigned fake_dev_run(struct fake_dev *d, unsigned mask, uint64_t deadline_ns, uint64_t *arg)
{
    for (;;) {
        if (has_work(d) && d->now_ns >= d->busy_until)
            process(d);
        if ((mask & SL_EV_IRQ) && d->pending_irq) {
            unsigned v = (unsigned)__builtin_ctz(d->pending_irq);
            d->pending_irq &= ~(1u << v);
            *arg = v;
            return SL_EV_IRQ;
        }
        if ((mask & SL_EV_DMA_WRITE) && d->pending_dma) {
            *arg = d->pending_dma - 1;
            d->pending_dma = 0;
            return SL_EV_DMA_WRITE;
        }
        if (has_work(d) && d->busy_until > d->now_ns &&
            (deadline_ns == 0 || d->busy_until <= deadline_ns)) {
            d->now_ns = d->busy_until;
            continue;
        }
        if (deadline_ns > d->now_ns)
            d->now_ns = deadline_ns;
        return SL_EV_NONE;
    }
}

int fake_log_find(struct fake_dev *d, const char *line, int *from)
{
    for (int i = *from; i < d->nlog; i++)
        if (!strcmp(d->log[i], line)) {
            *from = i + 1;
            return 1;
        }
    return 0;
}

void fake_log_dump(struct fake_dev *d)
{
    for (int i = 0; i < d->nlog; i++)
        fprintf(stderr, "  log[%d] %s\n", i, d->log[i]);
}
