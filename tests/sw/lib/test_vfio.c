// SPDX-License-Identifier: BSD-2-Clause
// test_vfio.c - the VFIO transport against a fake system-call table: the open sequence
// (group, container, type-1 IOMMU, device fd, BAR0 mmap, bus master, MSI-X eventfds), DMA
// map/unmap, interrupt waits, close, and the error messages of the usual mistakes.
#include <errno.h>
#include <linux/vfio.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ssdlab/vfio_sys.h"
#include "../../../sw/lib/src/sl_priv.h"
#include "tinytest.h"

enum { CONTAINER = 3, GROUP = 4, DEVICE = 5, EVFD0 = 10 };
#define CFG_OFF 0x70000000000ull

static struct {
    char log[128][96];
    int  n;
    /* knobs */
    int  no_device, no_group, not_viable, no_vfio, msix_count, msi_count, map_fails;
    unsigned irq_fire;              /* vector to report from poll, +1 (0: none) */
    /* observations */
    uint16_t pci_cmd_written;
    uint32_t set_irqs_index, set_irqs_count;
    int32_t  set_irqs_fds[32];
    uint64_t map_iova, map_size, unmap_iova;
    int      next_evfd, closed[64];
} fk;

static uint32_t bar[0x4000 / 4] __attribute__((aligned(4096)));

static void logf_(const char *fmt, ...)
{
    if (fk.n >= 128)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(fk.log[fk.n++], sizeof(fk.log[0]), fmt, ap);
    va_end(ap);
}

static int f_open(const char *path, int flags)
{
    (void)flags;
    logf_("open %s", path);
    if (!strcmp(path, "/dev/vfio/vfio")) {
        if (fk.no_vfio) {
            errno = ENOENT;
            return -1;
        }
        return CONTAINER;
    }
    if (!strcmp(path, "/dev/vfio/42"))
        return GROUP;
    errno = ENOENT;
    return -1;
}

static int f_close(int fd)
{
    logf_("close %d", fd);
    if (fd >= 0 && fd < 64)
        fk.closed[fd]++;
    return 0;
}

static const char *req_name(unsigned long req)
{
    switch (req) {
    case VFIO_GET_API_VERSION: return "GET_API_VERSION";
    case VFIO_CHECK_EXTENSION: return "CHECK_EXTENSION";
    case VFIO_GROUP_GET_STATUS: return "GROUP_GET_STATUS";
    case VFIO_GROUP_SET_CONTAINER: return "GROUP_SET_CONTAINER";
    case VFIO_SET_IOMMU: return "SET_IOMMU";
    case VFIO_GROUP_GET_DEVICE_FD: return "GROUP_GET_DEVICE_FD";
    case VFIO_DEVICE_GET_INFO: return "DEVICE_GET_INFO";
    case VFIO_DEVICE_GET_REGION_INFO: return "DEVICE_GET_REGION_INFO";
    case VFIO_DEVICE_GET_IRQ_INFO: return "DEVICE_GET_IRQ_INFO";
    case VFIO_DEVICE_SET_IRQS: return "DEVICE_SET_IRQS";
    case VFIO_IOMMU_MAP_DMA: return "IOMMU_MAP_DMA";
    case VFIO_IOMMU_UNMAP_DMA: return "IOMMU_UNMAP_DMA";
    case VFIO_DEVICE_RESET: return "DEVICE_RESET";
    default: return "?";
    }
}

static int f_ioctl(int fd, unsigned long req, void *arg)
{
    switch (req) {
    case VFIO_GET_API_VERSION:
        logf_("ioctl %d %s", fd, req_name(req));
        return VFIO_API_VERSION;
    case VFIO_CHECK_EXTENSION:
    case VFIO_SET_IOMMU:
        logf_("ioctl %d %s %lu", fd, req_name(req), (unsigned long)(uintptr_t)arg);
        return (uintptr_t)arg == VFIO_TYPE1_IOMMU ? (req == VFIO_SET_IOMMU ? 0 : 1) : 0;
    case VFIO_GROUP_GET_STATUS: {
        struct vfio_group_status *s = arg;
        logf_("ioctl %d %s", fd, req_name(req));
        s->flags = fk.not_viable ? 0 : VFIO_GROUP_FLAGS_VIABLE;
        return 0;
    }
    case VFIO_GROUP_SET_CONTAINER:
        logf_("ioctl %d %s %d", fd, req_name(req), *(int *)arg);
        return 0;
    case VFIO_GROUP_GET_DEVICE_FD:
        logf_("ioctl %d %s %s", fd, req_name(req), (const char *)arg);
        return DEVICE;
    case VFIO_DEVICE_GET_INFO: {
        struct vfio_device_info *i = arg;
        logf_("ioctl %d %s", fd, req_name(req));
        i->flags = VFIO_DEVICE_FLAGS_PCI;
        i->num_regions = 9;
        i->num_irqs = 5;
        return 0;
    }
    case VFIO_DEVICE_GET_REGION_INFO: {
        struct vfio_region_info *r = arg;
        logf_("ioctl %d %s %u", fd, req_name(req), r->index);
        if (r->index == VFIO_PCI_BAR0_REGION_INDEX) {
            r->size = sizeof(bar);
            r->offset = 0;
            r->flags = VFIO_REGION_INFO_FLAG_MMAP | VFIO_REGION_INFO_FLAG_READ |
                       VFIO_REGION_INFO_FLAG_WRITE;
        } else {
            r->size = 256;
            r->offset = CFG_OFF;
            r->flags = VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE;
        }
        return 0;
    }
    case VFIO_DEVICE_GET_IRQ_INFO: {
        struct vfio_irq_info *i = arg;
        logf_("ioctl %d %s %u", fd, req_name(req), i->index);
        i->count = i->index == VFIO_PCI_MSIX_IRQ_INDEX ? (uint32_t)fk.msix_count
                 : i->index == VFIO_PCI_MSI_IRQ_INDEX ? (uint32_t)fk.msi_count : 0;
        return 0;
    }
    case VFIO_DEVICE_SET_IRQS: {
        struct vfio_irq_set *s = arg;
        logf_("ioctl %d %s index %u count %u", fd, req_name(req), s->index, s->count);
        fk.set_irqs_index = s->index;
        fk.set_irqs_count = s->count;
        if (s->count && (s->flags & VFIO_IRQ_SET_DATA_EVENTFD))
            memcpy(fk.set_irqs_fds, s->data, s->count * 4);
        return 0;
    }
    case VFIO_IOMMU_MAP_DMA: {
        struct vfio_iommu_type1_dma_map *m = arg;
        logf_("ioctl %d %s", fd, req_name(req));
        if (fk.map_fails) {
            errno = ENOMEM;
            return -1;
        }
        fk.map_iova = m->iova;
        fk.map_size = m->size;
        return 0;
    }
    case VFIO_IOMMU_UNMAP_DMA:
        logf_("ioctl %d %s", fd, req_name(req));
        fk.unmap_iova = ((struct vfio_iommu_type1_dma_unmap *)arg)->iova;
        return 0;
    default:
        logf_("ioctl %d %s", fd, req_name(req));
        return 0;
    }
}

static void *f_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    logf_("mmap fd %d len 0x%zx off 0x%llx", fd, len, (unsigned long long)off);
    if (fd == DEVICE)
        return bar;
    return mmap(addr, len, prot, flags, fd, off);
}

static int f_munmap(void *addr, size_t len)
{
    logf_("munmap len 0x%zx", len);
    return addr == (void *)bar ? 0 : munmap(addr, len);
}

static ssize_t f_readlink(const char *path, char *buf, size_t len)
{
    logf_("readlink %s", path);
    if (fk.no_group) {
        errno = ENOENT;
        return -1;
    }
    const char *target = "../../../kernel/iommu_groups/42";
    size_t n = strlen(target) < len ? strlen(target) : len;
    memcpy(buf, target, n);
    return (ssize_t)n;
}

static int f_access(const char *path, int mode)
{
    (void)mode;
    logf_("access %s", path);
    if (fk.no_device) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

static ssize_t f_pread(int fd, void *buf, size_t len, off_t off)
{
    logf_("pread fd %d off 0x%llx len %zu", fd, (unsigned long long)off, len);
    memset(buf, 0, len);
    return (ssize_t)len;
}

static ssize_t f_pwrite(int fd, const void *buf, size_t len, off_t off)
{
    logf_("pwrite fd %d off 0x%llx len %zu", fd, (unsigned long long)off, len);
    memcpy(&fk.pci_cmd_written, buf, 2);
    return (ssize_t)len;
}

static int f_eventfd(unsigned int init, int flags)
{
    (void)init;
    (void)flags;
    logf_("eventfd");
    return EVFD0 + fk.next_evfd++;
}

static ssize_t f_read(int fd, void *buf, size_t len)
{
    logf_("read fd %d", fd);
    memset(buf, 0, len);
    return (ssize_t)len;
}

static int f_poll(struct pollfd *fds, nfds_t n, int ms)
{
    logf_("poll n %lu ms %d", (unsigned long)n, ms);
    if (fk.irq_fire && fk.irq_fire - 1 < n) {
        fds[fk.irq_fire - 1].revents = POLLIN;
        return 1;
    }
    return 0;
}

static const struct sl_vfio_sys fake_sys = {
    .open = f_open, .close = f_close, .ioctl = f_ioctl, .mmap = f_mmap, .munmap = f_munmap,
    .readlink = f_readlink, .access = f_access, .pread = f_pread, .pwrite = f_pwrite,
    .eventfd = f_eventfd, .read = f_read, .poll = f_poll,
};

static void reset_fake(void)
{
    memset(&fk, 0, sizeof(fk));
    fk.msix_count = 4;
    fk.msi_count = 1;
}

static int find(const char *line, int *from)
{
    for (int i = *from; i < fk.n; i++)
        if (!strcmp(fk.log[i], line)) {
            *from = i + 1;
            return 1;
        }
    fprintf(stderr, "not found after %d: \"%s\"\n", *from, line);
    for (int i = 0; i < fk.n; i++)
        fprintf(stderr, "  %d %s\n", i, fk.log[i]);
    return 0;
}

static void open_sequence(void)
{
    reset_fake();
    struct sl_transport *t = NULL;
    int rc = sl_transport_open_vfio_sys("01:00.0", &fake_sys, &t);
    CHECK_EQ(rc, 0);
    if (rc) {
        fprintf(stderr, "%s\n", sl_transport_open_errmsg());
        return;
    }
    const char *seq[] = {
        "access /sys/bus/pci/devices/0000:01:00.0",
        "readlink /sys/bus/pci/devices/0000:01:00.0/iommu_group",
        "open /dev/vfio/vfio",
        "ioctl 3 GET_API_VERSION",
        "ioctl 3 CHECK_EXTENSION 1",
        "open /dev/vfio/42",
        "ioctl 4 GROUP_GET_STATUS",
        "ioctl 4 GROUP_SET_CONTAINER 3",
        "ioctl 3 SET_IOMMU 1",
        "ioctl 4 GROUP_GET_DEVICE_FD 0000:01:00.0",
        "ioctl 5 DEVICE_GET_INFO",
        "ioctl 5 DEVICE_GET_REGION_INFO 0",
        "mmap fd 5 len 0x4000 off 0x0",
        "ioctl 5 DEVICE_GET_REGION_INFO 7",
        "pread fd 5 off 0x70000000004 len 2",
        "pwrite fd 5 off 0x70000000004 len 2",
        "ioctl 5 DEVICE_GET_IRQ_INFO 2",
        "eventfd", "eventfd", "eventfd", "eventfd",
        "ioctl 5 DEVICE_SET_IRQS index 2 count 4",
    };
    int at = 0;
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
        CHECK(find(seq[i], &at));
    CHECK_EQ(at, fk.n);                 /* nothing else, in exactly this order */
    CHECK_EQ(fk.n, (int)(sizeof(seq) / sizeof(seq[0])));
    CHECK_EQ(fk.pci_cmd_written & 0x6, 0x6);    /* memory space + bus master */
    CHECK_EQ(fk.set_irqs_fds[0], EVFD0);
    CHECK_EQ(fk.set_irqs_fds[3], EVFD0 + 3);
    CHECK_EQ(t->n_vectors, 4);
    CHECK_EQ(t->events, SL_EV_IRQ);
    /* MMIO goes to the mapped BAR */
    bar[0x1c / 4] = 0x1;
    uint32_t v;
    CHECK_EQ(t->ops->read32(t, 0x1c, &v), 0);
    CHECK_EQ(v, 1);
    CHECK_EQ(t->ops->write32(t, 0x14, 0x460001), 0);
    CHECK_EQ(bar[0x14 / 4], 0x460001);
    CHECK_EQ(t->ops->write32(t, 0x4000, 1), -EINVAL);
    CHECK_STR(sl_transport_errmsg(t), "outside the 16384-byte BAR");
    /* DMA: anonymous memory mapped into the IOMMU at a nonzero IOVA, unmapped on free */
    struct sl_dma d;
    CHECK_EQ(t->ops->dma_alloc(t, 5000, &d), 0);
    CHECK_EQ(fk.map_size, 8192);
    CHECK_EQ(fk.map_iova, d.bus);
    CHECK(d.bus != 0 && (d.bus & 4095) == 0);
    memset(d.vaddr, 1, d.len);          /* usable memory */
    t->ops->dma_free(t, &d);
    CHECK_EQ(fk.unmap_iova, fk.map_iova);
    /* interrupts: poll on the eventfds, the readable one is the vector */
    struct sl_event ev;
    fk.irq_fire = 3;
    CHECK_EQ(t->ops->wait(t, SL_EV_IRQ, 2500000, &ev), 0);
    CHECK_EQ(ev.kind, SL_EV_IRQ);
    CHECK_EQ(ev.vector, 2);
    CHECK_STR(fk.log[fk.n - 2], "poll n 4 ms 3");
    CHECK_STR(fk.log[fk.n - 1], "read fd 12");
    fk.irq_fire = 0;
    CHECK_EQ(t->ops->wait(t, SL_EV_IRQ, 1000, &ev), 0);
    CHECK_EQ(ev.kind, SL_EV_NONE);
    /* close: interrupts off, eventfds, BAR, device, group, container */
    int n0 = fk.n;
    sl_transport_close(t);
    at = n0;
    CHECK(find("ioctl 5 DEVICE_SET_IRQS index 2 count 0", &at));
    CHECK(find("close 13", &at));
    CHECK(find("munmap len 0x4000", &at));
    CHECK(find("close 5", &at));
    CHECK(find("close 4", &at));
    CHECK(find("close 3", &at));
}

static void msi_fallback(void)
{
    reset_fake();
    fk.msix_count = 0;
    struct sl_transport *t = NULL;
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), 0);
    CHECK_EQ(fk.set_irqs_index, VFIO_PCI_MSI_IRQ_INDEX);
    CHECK_EQ(fk.set_irqs_count, 1);
    if (t) {
        CHECK_EQ(t->n_vectors, 1);
        sl_transport_close(t);
    }
    reset_fake();
    fk.msix_count = fk.msi_count = 0;   /* no interrupts at all: polling only */
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), 0);
    if (t) {
        CHECK_EQ(t->events, 0);
        sl_transport_close(t);
    }
}

static void error_paths(void)
{
    struct sl_transport *t = NULL;
    reset_fake();
    fk.no_device = 1;
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), -ENODEV);
    CHECK_STR(sl_transport_open_errmsg(), "vfio: no PCI device 0000:01:00.0");
    CHECK(t == NULL);
    reset_fake();
    fk.no_group = 1;
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), -ENODEV);
    CHECK_STR(sl_transport_open_errmsg(), "vfio: 0000:01:00.0 has no IOMMU group: enable the "
              "IOMMU");
    reset_fake();
    CHECK_EQ(sl_transport_open_vfio_sys("not-a-bdf", &fake_sys, &t), -EINVAL);
    CHECK_STR(sl_transport_open_errmsg(), "'not-a-bdf' is not a PCI address");
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:20.0", &fake_sys, &t), -EINVAL);
    reset_fake();
    fk.no_vfio = 1;
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), -ENOENT);
    CHECK_STR(sl_transport_open_errmsg(), "opening /dev/vfio/vfio (modprobe vfio-pci): No such");
    reset_fake();
    fk.not_viable = 1;
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), -EBUSY);
    CHECK_STR(sl_transport_open_errmsg(), "IOMMU group 42 is not viable");
    CHECK_EQ(fk.closed[GROUP], 1);      /* what was opened is closed again */
    CHECK_EQ(fk.closed[CONTAINER], 1);
    reset_fake();
    CHECK_EQ(sl_transport_open_vfio_sys("0000:01:00.0", &fake_sys, &t), 0);
    if (t) {
        struct sl_dma d;
        fk.map_fails = 1;
        CHECK_EQ(t->ops->dma_alloc(t, 4096, &d), -ENOMEM);
        CHECK_STR(sl_transport_errmsg(t), "VFIO_IOMMU_MAP_DMA of 4096 bytes");
        sl_transport_close(t);
    }
    /* the real system calls on this machine: no such device */
    CHECK(sl_transport_open_vfio("0000:ff:1f.7", &t) < 0);
    CHECK_STR(sl_transport_open_errmsg(), "0000:ff:1f.7");
}

TT_MAIN(TT_CASE(open_sequence), TT_CASE(msi_fallback), TT_CASE(error_paths))
