// SPDX-License-Identifier: BSD-2-Clause
// fake_transport.c - struct sl_transport over fake_dev with an in-process host RAM.
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fake_dev.h"
#include "../../../sw/lib/src/sl_priv.h"

struct fake_t {
    struct sl_transport t;
    struct fake_dev *d;
    uint8_t *ram;
    struct sl_pagealloc pa;
};

static struct fake_dev *dev(struct sl_transport *t)
{
    return ((struct fake_t *)t)->d;
}

static int r32(struct sl_transport *t, uint32_t off, uint32_t *v)
{
    *v = (uint32_t)fake_dev_read(dev(t), off, 4);
    return 0;
}

static int r64(struct sl_transport *t, uint32_t off, uint64_t *v)
{
    *v = fake_dev_read(dev(t), off, 8);
    return 0;
}

static int w32(struct sl_transport *t, uint32_t off, uint32_t v)
{
    fake_dev_write(dev(t), off, 4, v);
    return 0;
}

static int w64(struct sl_transport *t, uint32_t off, uint64_t v)
{
    fake_dev_write(dev(t), off, 8, v);
    return 0;
}

static int dalloc(struct sl_transport *t, size_t len, struct sl_dma *out)
{
    struct fake_t *f = (struct fake_t *)t;
    uint64_t n = (len + 4095) / 4096;
    uint64_t page = sl_pa_alloc(&f->pa, n ? n : 1);
    if (!page)
        return sl_terr(t, -ENOMEM, "fake: out of host RAM");
    out->bus = page * 4096;
    out->vaddr = f->ram + out->bus;
    out->len = (n ? n : 1) * 4096;
    memset(out->vaddr, 0, out->len);
    return 0;
}

static void dfree(struct sl_transport *t, struct sl_dma *d)
{
    struct fake_t *f = (struct fake_t *)t;
    sl_pa_free(&f->pa, d->bus / 4096, d->len / 4096);
    memset(d, 0, sizeof(*d));
}

static int fwait(struct sl_transport *t, unsigned mask, uint64_t timeout_ns, struct sl_event *ev)
{
    struct fake_dev *d = dev(t);
    uint64_t arg = 0;
    memset(ev, 0, sizeof(*ev));
    ev->kind = fake_dev_run(d, mask, d->now_ns + timeout_ns, &arg);
    if (ev->kind == SL_EV_IRQ)
        ev->vector = (unsigned)arg;
    else
        ev->addr = arg;
    return 0;
}

static uint64_t ftime(struct sl_transport *t)
{
    return dev(t)->now_ns;
}

static void fclose_(struct sl_transport *t)
{
    struct fake_t *f = (struct fake_t *)t;
    sl_pa_fini(&f->pa);
    free(f->ram);
    f->d->ram = NULL;
    free(f);
}

static const struct sl_transport_ops fake_ops = {
    .name = "fake", .read32 = r32, .read64 = r64, .write32 = w32, .write64 = w64,
    .dma_alloc = dalloc, .dma_free = dfree, .wait = fwait, .time_ns = ftime,
    .close = fclose_,
};

struct sl_transport *fake_transport(struct fake_dev *d, uint64_t ram_bytes)
{
    struct fake_t *f = calloc(1, sizeof(*f));
    f->t.ops = &fake_ops;
    f->t.n_vectors = d->n_vectors;
    f->t.events = SL_EV_IRQ | SL_EV_DMA_WRITE;
    f->d = d;
    f->ram = aligned_alloc(4096, ram_bytes);
    memset(f->ram, 0, ram_bytes);
    d->ram = f->ram;
    d->ram_bytes = ram_bytes;
    sl_pa_init(&f->pa, 0, ram_bytes / 4096);
    return &f->t;
}
