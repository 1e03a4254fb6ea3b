/* SPDX-License-Identifier: BSD-2-Clause */
/* features.c - Get / Set Features (NVMe 1.4 section 5.21): 01h arbitration, 02h power
 * management, 04h temperature threshold, 06h volatile write cache, 07h number of queues,
 * 08h interrupt coalescing, 09h interrupt vector configuration, 0Bh async event config.
 * Nothing is saveable; SEL saved reports the default. */
#include "ftl.h"

#define MAXV 65

struct feats {
    uint32_t arb, pm, temp[2], vwc, nq, coal, aec;
    uint8_t  ivc_cd[MAXV];
};
static struct feats cur;

static void defaults(struct feats *f)
{
    uint32_t n = G.id.n_io_queues - 1;
    memset(f, 0, sizeof(*f));
    f->temp[0] = 343;           /* over-temperature threshold = WCTEMP */
    f->temp[1] = 0;             /* under-temperature threshold */
    f->vwc = 1;
    f->nq = n | n << 16;
}

void features_reset(void)
{
    defaults(&cur);
}

uint32_t features_nq(void)
{
    return cur.nq;
}

bool features_vwc(void)
{
    return cur.vwc & 1;
}

static bool known(uint32_t fid)
{
    switch (fid) {
    case NVME_FEAT_ARBITRATION: case NVME_FEAT_POWER_MANAGEMENT:
    case NVME_FEAT_TEMPERATURE_THRESHOLD: case NVME_FEAT_VOLATILE_WRITE_CACHE:
    case NVME_FEAT_NUMBER_OF_QUEUES: case NVME_FEAT_INTERRUPT_COALESCING:
    case NVME_FEAT_INTERRUPT_VECTOR_CONFIG: case NVME_FEAT_ASYNC_EVENT_CONFIG:
        return true;
    default:
        return false;
    }
}

uint16_t features_get(const struct hal_cmd *c, uint32_t *dw0)
{
    uint32_t fid = c->dw[10] & 0xFF, sel = c->dw[10] >> 8 & 7, v11 = c->dw[11];
    if (!known(fid) || sel > 3)
        return NVME_SC_INVALID_FIELD;
    if (sel == 3) {
        *dw0 = 0x4;             /* changeable; not saveable, not namespace specific */
        return 0;
    }
    struct feats def, *f = &cur;
    if (sel != 0) {
        defaults(&def);
        f = &def;
    }
    switch (fid) {
    case NVME_FEAT_ARBITRATION: *dw0 = f->arb; break;
    case NVME_FEAT_POWER_MANAGEMENT: *dw0 = f->pm; break;
    case NVME_FEAT_TEMPERATURE_THRESHOLD: {
        uint32_t tmpsel = v11 >> 16 & 0xF, thsel = v11 >> 20 & 3;
        if (tmpsel != 0 || thsel > 1)
            return NVME_SC_INVALID_FIELD;
        *dw0 = f->temp[thsel] | tmpsel << 16 | thsel << 20;
        break;
    }
    case NVME_FEAT_VOLATILE_WRITE_CACHE: *dw0 = f->vwc; break;
    case NVME_FEAT_NUMBER_OF_QUEUES: *dw0 = f->nq; break;
    case NVME_FEAT_INTERRUPT_COALESCING: *dw0 = f->coal; break;
    case NVME_FEAT_INTERRUPT_VECTOR_CONFIG: {
        uint32_t iv = v11 & 0xFFFF;
        if (iv > G.id.n_io_queues)
            return NVME_SC_INVALID_FIELD;
        *dw0 = iv | (uint32_t)f->ivc_cd[iv] << 16;
        break;
    }
    case NVME_FEAT_ASYNC_EVENT_CONFIG: *dw0 = f->aec; break;
    }
    return 0;
}

uint16_t features_set(const struct hal_cmd *c, uint32_t *dw0)
{
    uint32_t fid = c->dw[10] & 0xFF, v = c->dw[11], nsid = c->dw[1];
    if (!known(fid))
        return NVME_SC_INVALID_FIELD;
    if (c->dw[10] >> 31)
        return NVME_SC_FEATURE_NOT_SAVEABLE;
    if (nsid != 0 && nsid != NVME_NSID_ALL)
        return NVME_SC_FEATURE_NOT_NS_SPECIFIC;
    switch (fid) {
    case NVME_FEAT_ARBITRATION:
        cur.arb = v & 0xFFFFFF07;
        break;
    case NVME_FEAT_POWER_MANAGEMENT:
        if ((v & 0x1F) > 0)     /* NPSS 0: power state 0 only */
            return NVME_SC_INVALID_FIELD;
        cur.pm = v & 0xFF;
        break;
    case NVME_FEAT_TEMPERATURE_THRESHOLD: {
        uint32_t tmpsel = v >> 16 & 0xF, thsel = v >> 20 & 3;
        if (thsel > 1 || (tmpsel != 0 && tmpsel != 0xF))
            return NVME_SC_INVALID_FIELD;
        cur.temp[thsel] = v & 0xFFFF;
        break;
    }
    case NVME_FEAT_VOLATILE_WRITE_CACHE:
        if ((cur.vwc & 1) && !(v & 1))
            ftl_flush_sync();   /* write-through from now on: nothing left cached */
        cur.vwc = v & 1;
        break;
    case NVME_FEAT_NUMBER_OF_QUEUES: {
        uint32_t nsqr = v & 0xFFFF, ncqr = v >> 16, cap = G.id.n_io_queues - 1;
        if (nsqr == 0xFFFF || ncqr == 0xFFFF)
            return NVME_SC_INVALID_FIELD;
        if (queues_any_io())
            return NVME_SC_COMMAND_SEQUENCE_ERROR;
        cur.nq = (nsqr < cap ? nsqr : cap) | (ncqr < cap ? ncqr : cap) << 16;
        *dw0 = cur.nq;
        break;
    }
    case NVME_FEAT_INTERRUPT_COALESCING:
        cur.coal = v & 0xFFFF;
        hal_aggregation((uint8_t)v, (uint8_t)(v >> 8));
        break;
    case NVME_FEAT_INTERRUPT_VECTOR_CONFIG: {
        uint32_t iv = v & 0xFFFF, cd = v >> 16 & 1;
        if (iv > G.id.n_io_queues)
            return NVME_SC_INVALID_FIELD;
        cur.ivc_cd[iv] = (uint8_t)cd;
        hal_ivc((uint16_t)iv, cd);
        break;
    }
    case NVME_FEAT_ASYNC_EVENT_CONFIG:
        cur.aec = v & 0x3FF;
        break;
    }
    return 0;
}
