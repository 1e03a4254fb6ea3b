// SPDX-License-Identifier: BSD-2-Clause
// transport_vfio.c - a real card through VFIO: the device's IOMMU group, a type-1 container,
// BAR0 mmap()ed through the device fd, DMA memory mmap()ed anonymously and mapped into the
// IOMMU, interrupts as MSI-X (or MSI) eventfds. Every system call goes through struct
// sl_vfio_sys so that tests can replay the sequence against a fake.
#include <errno.h>
#include <fcntl.h>
#include <linux/vfio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sl_priv.h"
#include "ssdlab/vfio_sys.h"

#define VFIO_MAX_IRQS   32u
#define IOVA_BASE       (1ull << 20)                /* page numbers from here */
#define IOVA_PAGES      (1ull << 20)                /* 4 GiB of IOVA space */

struct vfio {
    struct sl_transport t;
    const struct sl_vfio_sys *sys;
    int      container, group, device;
    volatile uint8_t *bar0;
    size_t   bar0_size;
    int      irq_fd[VFIO_MAX_IRQS];
    unsigned n_irq, irq_index;
    char     pci[32];
    struct sl_pagealloc iova;
};

static struct vfio *vf(struct sl_transport *t)
{
    return (struct vfio *)t;
}

static int in_bar(struct vfio *v, uint32_t off, unsigned size)
{
    if ((uint64_t)off + size > v->bar0_size || (off & (size - 1)))
        return sl_terr(&v->t, -EINVAL, "vfio: BAR0 offset 0x%x (%u bytes) outside the %zu-byte "
                       "BAR or unaligned", off, size, v->bar0_size);
    return 0;
}

static int vfio_read32(struct sl_transport *t, uint32_t off, uint32_t *val)
{
    int rc = in_bar(vf(t), off, 4);
    if (rc == 0)
        *val = *(volatile uint32_t *)(vf(t)->bar0 + off);
    return rc;
}

static int vfio_read64(struct sl_transport *t, uint32_t off, uint64_t *val)
{
    int rc = in_bar(vf(t), off, 8);
    if (rc == 0)
        *val = *(volatile uint64_t *)(vf(t)->bar0 + off);
    return rc;
}

static int vfio_write32(struct sl_transport *t, uint32_t off, uint32_t val)
{
    int rc = in_bar(vf(t), off, 4);
    if (rc == 0) {
        __atomic_thread_fence(__ATOMIC_RELEASE);
        *(volatile uint32_t *)(vf(t)->bar0 + off) = val;
    }
    return rc;
}

static int vfio_write64(struct sl_transport *t, uint32_t off, uint64_t val)
{
    int rc = in_bar(vf(t), off, 8);
    if (rc == 0) {
        __atomic_thread_fence(__ATOMIC_RELEASE);
        *(volatile uint64_t *)(vf(t)->bar0 + off) = val;
    }
    return rc;
}

static int vfio_dma_alloc(struct sl_transport *t, size_t len, struct sl_dma *out)
{
    struct vfio *v = vf(t);
    size_t size = ((len ? len : 1) + SL_PAGE - 1) & ~(size_t)(SL_PAGE - 1);
    void *p = v->sys->mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                           -1, 0);
    if (p == MAP_FAILED)
        return sl_terr(t, -errno, "vfio: mmap of %zu bytes of DMA memory", size);
    uint64_t page = sl_pa_alloc(&v->iova, size / SL_PAGE);
    if (page == 0) {
        v->sys->munmap(p, size);
        return sl_terr(t, -ENOMEM, "vfio: IOVA space exhausted (%zu bytes)", size);
    }
    struct vfio_iommu_type1_dma_map map = {
        .argsz = sizeof(map), .flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE,
        .vaddr = (uint64_t)(uintptr_t)p, .iova = page * SL_PAGE, .size = size,
    };
    if (v->sys->ioctl(v->container, VFIO_IOMMU_MAP_DMA, &map) < 0) {
        int rc = -errno;
        sl_pa_free(&v->iova, page, size / SL_PAGE);
        v->sys->munmap(p, size);
        return sl_terr(t, rc, "vfio: VFIO_IOMMU_MAP_DMA of %zu bytes (locked memory limit? "
                       "ulimit -l)", size);
    }
    out->vaddr = p;
    out->bus = map.iova;
    out->len = size;
    return 0;
}

static void vfio_dma_free(struct sl_transport *t, struct sl_dma *d)
{
    struct vfio *v = vf(t);
    if (!d->vaddr)
        return;
    struct vfio_iommu_type1_dma_unmap unmap = {
        .argsz = sizeof(unmap), .iova = d->bus, .size = d->len,
    };
    v->sys->ioctl(v->container, VFIO_IOMMU_UNMAP_DMA, &unmap);
    sl_pa_free(&v->iova, d->bus / SL_PAGE, d->len / SL_PAGE);
    v->sys->munmap(d->vaddr, d->len);
    memset(d, 0, sizeof(*d));
}

static int vfio_wait(struct sl_transport *t, unsigned mask, uint64_t timeout_ns,
                     struct sl_event *ev)
{
    struct vfio *v = vf(t);
    memset(ev, 0, sizeof(*ev));
    struct pollfd fds[VFIO_MAX_IRQS];
    unsigned n = (mask & SL_EV_IRQ) ? v->n_irq : 0;
    for (unsigned i = 0; i < n; i++)
        fds[i] = (struct pollfd){.fd = v->irq_fd[i], .events = POLLIN};
    uint64_t ms = (timeout_ns + 999999u) / 1000000u;
    int r = v->sys->poll(n ? fds : NULL, n, ms > 0x7fffffff ? 0x7fffffff : (int)ms);
    if (r < 0)
        return errno == EINTR ? 0 : sl_terr(t, -errno, "vfio: poll on interrupt eventfds");
    for (unsigned i = 0; i < n && r > 0; i++)
        if (fds[i].revents & POLLIN) {
            uint64_t count;
            if (v->sys->read(v->irq_fd[i], &count, sizeof(count)) < 0)
                return sl_terr(t, -errno, "vfio: reading the eventfd of vector %u", i);
            ev->kind = SL_EV_IRQ;
            ev->vector = i;
            break;
        }
    return 0;
}

static uint64_t vfio_time_ns(struct sl_transport *t)
{
    (void)t;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int vfio_reset(struct sl_transport *t)
{
    struct vfio *v = vf(t);
    if (v->sys->ioctl(v->device, VFIO_DEVICE_RESET, NULL) < 0)
        return sl_terr(t, -errno, "vfio: VFIO_DEVICE_RESET of %s", v->pci);
    return 0;
}

static int vfio_stats(struct sl_transport *t, char *buf, size_t len)
{
    struct vfio *v = vf(t);
    snprintf(buf, len, "pci=%s bar0_bytes=%zu irqs=%u irq_type=%s", v->pci, v->bar0_size,
             v->n_irq, v->irq_index == VFIO_PCI_MSIX_IRQ_INDEX ? "msix" : "msi");
    return 0;
}

static void vfio_close(struct sl_transport *t)
{
    struct vfio *v = vf(t);
    const struct sl_vfio_sys *s = v->sys;
    if (v->n_irq) {
        struct vfio_irq_set off = {
            .argsz = sizeof(off), .flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER,
            .index = v->irq_index, .start = 0, .count = 0,
        };
        s->ioctl(v->device, VFIO_DEVICE_SET_IRQS, &off);
        for (unsigned i = 0; i < v->n_irq; i++)
            s->close(v->irq_fd[i]);
    }
    if (v->bar0)
        s->munmap((void *)(uintptr_t)v->bar0, v->bar0_size);
    if (v->device >= 0)
        s->close(v->device);
    if (v->group >= 0)
        s->close(v->group);
    if (v->container >= 0)
        s->close(v->container);
    sl_pa_fini(&v->iova);
    free(v);
}

static const struct sl_transport_ops vfio_ops = {
    .name = "vfio",
    .read32 = vfio_read32, .read64 = vfio_read64,
    .write32 = vfio_write32, .write64 = vfio_write64,
    .dma_alloc = vfio_dma_alloc, .dma_free = vfio_dma_free,
    .wait = vfio_wait, .time_ns = vfio_time_ns,
    .reset = vfio_reset, .stats = vfio_stats, .close = vfio_close,
};

static int fail(struct vfio *v, int rc)
{
    sl_terr(NULL, 0, "%s", v->t.err);
    vfio_close(&v->t);
    return rc;
}

/* "0000:01:00.0" or "01:00.0" (domain 0) into the canonical form. */
static int canonical_pci(const char *in, char *out, size_t len)
{
    unsigned dom = 0, bus, dev, fn;
    char extra;
    if (sscanf(in, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &extra) == 4 ||
        (dom = 0, sscanf(in, "%x:%x.%x%c", &bus, &dev, &fn, &extra) == 3)) {
        if (dom > 0xffff || bus > 0xff || dev > 0x1f || fn > 7)
            return -EINVAL;
        snprintf(out, len, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
        return 0;
    }
    return -EINVAL;
}

static int setup_irqs(struct vfio *v)
{
    const struct sl_vfio_sys *s = v->sys;
    unsigned indexes[2] = {VFIO_PCI_MSIX_IRQ_INDEX, VFIO_PCI_MSI_IRQ_INDEX};
    for (unsigned k = 0; k < 2; k++) {
        struct vfio_irq_info info = {.argsz = sizeof(info), .index = indexes[k]};
        if (s->ioctl(v->device, VFIO_DEVICE_GET_IRQ_INFO, &info) < 0 || info.count == 0)
            continue;
        unsigned n = info.count < VFIO_MAX_IRQS ? info.count : VFIO_MAX_IRQS;
        size_t sz = sizeof(struct vfio_irq_set) + n * sizeof(int32_t);
        struct vfio_irq_set *set = calloc(1, sz);
        if (!set)
            return sl_terr(&v->t, -ENOMEM, "vfio: irq set");
        set->argsz = (uint32_t)sz;
        set->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
        set->index = indexes[k];
        set->start = 0;
        set->count = n;
        int32_t *fds = (int32_t *)set->data;
        for (unsigned i = 0; i < n; i++) {
            int fd = s->eventfd(0, EFD_CLOEXEC);
            if (fd < 0) {
                int rc = -errno;
                free(set);
                return sl_terr(&v->t, rc, "vfio: eventfd for vector %u", i);
            }
            v->irq_fd[v->n_irq++] = fd;
            fds[i] = fd;
        }
        v->irq_index = indexes[k];
        int r = s->ioctl(v->device, VFIO_DEVICE_SET_IRQS, set);
        int rc = -errno;
        free(set);
        if (r < 0)
            return sl_terr(&v->t, rc, "vfio: VFIO_DEVICE_SET_IRQS (%s, %u vectors)",
                           k == 0 ? "MSI-X" : "MSI", n);
        v->t.n_vectors = n;
        v->t.events = SL_EV_IRQ;
        return 0;
    }
    v->t.n_vectors = 1;         /* no MSI/MSI-X: polling only */
    return 0;
}

int sl_transport_open_vfio_sys(const char *pci_addr, const struct sl_vfio_sys *s,
                               struct sl_transport **out)
{
    *out = NULL;
    char pci[32], path[256], link[256];
    if (!pci_addr || canonical_pci(pci_addr, pci, sizeof(pci)) < 0)
        return sl_terr(NULL, -EINVAL, "vfio: '%s' is not a PCI address (like 0000:01:00.0)",
                       pci_addr ? pci_addr : "");
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s", pci);
    if (s->access(path, F_OK) < 0)
        return sl_terr(NULL, -ENODEV, "vfio: no PCI device %s (lspci -D lists them)", pci);
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/iommu_group", pci);
    ssize_t n = s->readlink(path, link, sizeof(link) - 1);
    if (n < 0)
        return sl_terr(NULL, -ENODEV, "vfio: %s has no IOMMU group: enable the IOMMU "
                       "(intel_iommu=on or amd_iommu=on on the kernel command line)", pci);
    link[n] = 0;
    const char *base = strrchr(link, '/');
    base = base ? base + 1 : link;
    char *end;
    unsigned long group = strtoul(base, &end, 10);
    if (end == base || *end)
        return sl_terr(NULL, -EPROTO, "vfio: %s: unexpected iommu_group link %s", pci, link);

    struct vfio *v = calloc(1, sizeof(*v));
    if (!v)
        return sl_terr(NULL, -ENOMEM, "vfio: allocating the transport");
    v->t.ops = &vfio_ops;
    v->t.priv = v;
    v->sys = s;
    v->container = v->group = v->device = -1;
    snprintf(v->pci, sizeof(v->pci), "%s", pci);
    int rc = sl_pa_init(&v->iova, IOVA_BASE, IOVA_PAGES);
    if (rc < 0)
        return fail(v, sl_terr(&v->t, rc, "vfio: IOVA allocator"));

    v->container = s->open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
    if (v->container < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: opening /dev/vfio/vfio (modprobe "
                               "vfio-pci)"));
    if (s->ioctl(v->container, VFIO_GET_API_VERSION, NULL) != VFIO_API_VERSION)
        return fail(v, sl_terr(&v->t, -EPROTO, "vfio: unknown VFIO API version"));
    if (s->ioctl(v->container, VFIO_CHECK_EXTENSION, (void *)(uintptr_t)VFIO_TYPE1_IOMMU) <= 0)
        return fail(v, sl_terr(&v->t, -ENOTSUP, "vfio: the kernel lacks the type-1 IOMMU"));
    snprintf(path, sizeof(path), "/dev/vfio/%lu", group);
    v->group = s->open(path, O_RDWR | O_CLOEXEC);
    if (v->group < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: opening %s (is %s bound to vfio-pci, and "
                               "may this user open it?)", path, pci));
    struct vfio_group_status gs = {.argsz = sizeof(gs)};
    if (s->ioctl(v->group, VFIO_GROUP_GET_STATUS, &gs) < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: VFIO_GROUP_GET_STATUS of group %lu",
                               group));
    if (!(gs.flags & VFIO_GROUP_FLAGS_VIABLE))
        return fail(v, sl_terr(&v->t, -EBUSY, "vfio: IOMMU group %lu is not viable: bind every "
                               "device in it to vfio-pci", group));
    if (s->ioctl(v->group, VFIO_GROUP_SET_CONTAINER, &v->container) < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: VFIO_GROUP_SET_CONTAINER"));
    if (s->ioctl(v->container, VFIO_SET_IOMMU, (void *)(uintptr_t)VFIO_TYPE1_IOMMU) < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: VFIO_SET_IOMMU type 1"));
    v->device = s->ioctl(v->group, VFIO_GROUP_GET_DEVICE_FD, pci);
    if (v->device < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: VFIO_GROUP_GET_DEVICE_FD %s", pci));
    struct vfio_device_info di = {.argsz = sizeof(di)};
    if (s->ioctl(v->device, VFIO_DEVICE_GET_INFO, &di) < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: VFIO_DEVICE_GET_INFO"));
    if (!(di.flags & VFIO_DEVICE_FLAGS_PCI) || di.num_regions <= VFIO_PCI_CONFIG_REGION_INDEX)
        return fail(v, sl_terr(&v->t, -ENODEV, "vfio: %s is not a PCI device with BARs", pci));

    struct vfio_region_info bar = {.argsz = sizeof(bar), .index = VFIO_PCI_BAR0_REGION_INDEX};
    if (s->ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &bar) < 0)
        return fail(v, sl_terr(&v->t, -errno, "vfio: region info of BAR0"));
    if (!(bar.flags & VFIO_REGION_INFO_FLAG_MMAP) || bar.size < 0x2000)
        return fail(v, sl_terr(&v->t, -ENODEV, "vfio: BAR0 of %s (%llu bytes) cannot be "
                               "mmap()ed or is too small for NVMe", pci,
                               (unsigned long long)bar.size));
    void *p = s->mmap(NULL, bar.size, PROT_READ | PROT_WRITE, MAP_SHARED, v->device,
                      (off_t)bar.offset);
    if (p == MAP_FAILED)
        return fail(v, sl_terr(&v->t, -errno, "vfio: mmap of BAR0"));
    v->bar0 = p;
    v->bar0_size = bar.size;

    /* PCI command register: memory space and bus master on */
    struct vfio_region_info cfg = {.argsz = sizeof(cfg), .index = VFIO_PCI_CONFIG_REGION_INDEX};
    uint16_t cmd;
    if (s->ioctl(v->device, VFIO_DEVICE_GET_REGION_INFO, &cfg) < 0 ||
        s->pread(v->device, &cmd, 2, (off_t)cfg.offset + 4) != 2)
        return fail(v, sl_terr(&v->t, -EIO, "vfio: reading the PCI command register"));
    cmd |= 0x6;
    if (s->pwrite(v->device, &cmd, 2, (off_t)cfg.offset + 4) != 2)
        return fail(v, sl_terr(&v->t, -EIO, "vfio: enabling bus mastering"));
    rc = setup_irqs(v);
    if (rc < 0)
        return fail(v, rc);
    *out = &v->t;
    return 0;
}

int sl_transport_open_vfio(const char *pci_addr, struct sl_transport **out)
{
    return sl_transport_open_vfio_sys(pci_addr, &sl_vfio_sys_real, out);
}
