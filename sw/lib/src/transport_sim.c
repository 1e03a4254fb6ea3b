// SPDX-License-Identifier: BSD-2-Clause
// transport_sim.c - the simulation transport: the Verilator harness's host bridge
// (sim/bridge/ssdlab_bridge.h). MMIO, waiting and time over a Unix socket; host RAM is the
// harness's file, mmap()ed shared, bus address A = byte A.
//
// Interrupts as the VFIO transport gets them from the kernel: where the drive has an MSI-X
// capability, the transport (standing where the kernel's PCI core stands) writes every table
// entry (address SB_MSI_WINDOW_BASE, data = the entry's index, unmasked) and sets MSI-X
// Enable, so vector v of a queue is table entry v; otherwise MSI with HELLO's vector count.
// $SSDLAB_SIM_IRQ=msi keeps MSI on an MSI-X drive (a host without MSI-X). A power cycle
// (SB_RESET) clears configuration space: the transport sets MSI-X up again after it.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sl_priv.h"
#include "ssdlab_bridge.h"

struct sim {
    struct sl_transport t;
    int      fd;
    uint8_t *ram;
    uint64_t ram_bytes;
    uint64_t period_ps;
    uint64_t time_ps;
    char     path[108];
    int      trace;             /* $SSDLAB_SIM_TRACE set: every request and reply to stderr */
    unsigned msi_vectors;       /* HELLO's MSI vector count */
    unsigned msix_vectors;      /* MSI-X table entries in use (0: MSI) */
    int      watchdog_ms;       /* wall time with no byte from the harness: stuck (0: never) */
    struct sl_pagealloc pa;
};

static const char *type_name(uint32_t type)
{
    static const char *names[] = {"?", "HELLO", "MMIO_WRITE", "MMIO_READ", "WAIT", "ADVANCE",
                                  "INFO", "QUIT", "RESET", "CFG_READ", "CFG_WRITE",
                                  "IRQ_COUNTS", "ALIVE", "BAKE", "FAULT"};
    return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

static int io_all(struct sim *s, void *buf, size_t len, int out)
{
    uint8_t *p = buf;
    while (len) {
        if (!out && s->watchdog_ms > 0) {
            /* a busy harness sends SB_ALIVE every SB_ALIVE_MS: silence this long is a stuck
             * one (a hung model, a stopped process), not a slow simulation */
            struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
            int r = poll(&pfd, 1, s->watchdog_ms);
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                return -ETIME;
        }
        ssize_t n = out ? send(s->fd, p, len, MSG_NOSIGNAL) : recv(s->fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return -ECONNRESET;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* One request, one reply of the same type; the reply's time becomes the transport's time. */
static int xfer(struct sim *s, struct sb_msg *m)
{
    uint32_t type = m->type;
    uint64_t addr = m->addr;
    struct sb_msg req = *m;
    if (s->trace && (type == SB_WAIT || type == SB_ADVANCE))  /* the long ones: say so first */
        fprintf(stderr, "ssdlab sim %14.3f us  %-10s size %u data 0x%llx ...\n",
                (double)s->time_ps / 1e6, type_name(type), m->size, (unsigned long long)m->data);
    if (s->fd < 0)
        return sl_terr(&s->t, -ENOTCONN, "sim %s: not connected", type_name(type));
    int rc = io_all(s, m, sizeof(*m), 1);
    do {                        /* keepalives until the reply */
        if (rc == 0)
            rc = io_all(s, m, sizeof(*m), 0);
    } while (rc == 0 && m->type == SB_ALIVE && m->type != type);
    if (rc == -ETIME) {
        close(s->fd);
        s->fd = -1;
        return sl_terr(&s->t, rc, "sim %s: the harness at %s sent nothing for %d s of wall "
                       "time (not even a keepalive): it is stuck, not busy ($SSDLAB_SIM_"
                       "WATCHDOG_S sets the limit; 0 turns it off)", type_name(type), s->path,
                       s->watchdog_ms / 1000);
    }
    if (rc < 0) {
        close(s->fd);
        s->fd = -1;
        return sl_terr(&s->t, rc, "sim %s: the harness at %s %s", type_name(type), s->path,
                       rc == -ECONNRESET ? "closed the connection" : "failed");
    }
    if (m->type != type)
        return sl_terr(&s->t, -EPROTO, "sim %s: reply of type %u (%s)", type_name(type),
                       m->type, type_name(m->type));
    s->time_ps = m->time_ps;
    if (s->trace)
        fprintf(stderr, "ssdlab sim %14.3f us  %-10s addr 0x%llx size %u data 0x%llx -> status %u "
                "addr 0x%llx size %u data 0x%llx\n", (double)m->time_ps / 1e6, type_name(type),
                (unsigned long long)req.addr, req.size, (unsigned long long)req.data, m->status,
                (unsigned long long)m->addr, m->size, (unsigned long long)m->data);
    switch (m->status) {
    case SB_OK:
        return 0;
    case SB_ERR_TIMEOUT:
        return sl_terr(&s->t, -ETIMEDOUT, "sim %s of BAR0+0x%llx: completion timeout",
                       type_name(type), (unsigned long long)addr);
    case SB_ERR_ARG:
        return sl_terr(&s->t, -EINVAL, "sim %s: the harness refused the size or offset "
                       "(BAR0+0x%llx)", type_name(type), (unsigned long long)addr);
    case SB_ERR_VERSION:
        return sl_terr(&s->t, -EPROTONOSUPPORT, "sim HELLO: the harness speaks protocol "
                       "version %llu, this library %u", (unsigned long long)m->data,
                       SB_VERSION);
    default:
        return sl_terr(&s->t, -EPROTO, "sim %s: the harness answered status %u",
                       type_name(type), m->status);
    }
}

static struct sim *sim_of(struct sl_transport *t)
{
    return (struct sim *)t;
}

static int mmio_read(struct sl_transport *t, uint32_t off, uint32_t size, uint64_t *val)
{
    struct sb_msg m = {.type = SB_MMIO_READ, .size = size, .addr = off};
    int rc = xfer(sim_of(t), &m);
    if (rc == 0)
        *val = m.data;
    return rc;
}

static int sim_read32(struct sl_transport *t, uint32_t off, uint32_t *val)
{
    uint64_t v = 0;
    int rc = mmio_read(t, off, 4, &v);
    *val = (uint32_t)v;
    return rc;
}

static int sim_read64(struct sl_transport *t, uint32_t off, uint64_t *val)
{
    return mmio_read(t, off, 8, val);
}

static int sim_write32(struct sl_transport *t, uint32_t off, uint32_t val)
{
    struct sb_msg m = {.type = SB_MMIO_WRITE, .size = 4, .addr = off, .data = val};
    return xfer(sim_of(t), &m);
}

static int sim_write64(struct sl_transport *t, uint32_t off, uint64_t val)
{
    struct sb_msg m = {.type = SB_MMIO_WRITE, .size = 8, .addr = off, .data = val};
    return xfer(sim_of(t), &m);
}

static int sim_dma_alloc(struct sl_transport *t, size_t len, struct sl_dma *out)
{
    struct sim *s = sim_of(t);
    uint64_t pages = (len + SL_PAGE - 1) / SL_PAGE;
    uint64_t page = sl_pa_alloc(&s->pa, pages ? pages : 1);
    if (page == 0)
        return sl_terr(t, -ENOMEM, "sim: no %llu contiguous pages free in the %llu-byte host "
                       "RAM", (unsigned long long)pages, (unsigned long long)s->ram_bytes);
    out->bus = page * SL_PAGE;
    out->vaddr = s->ram + out->bus;
    out->len = (size_t)(pages ? pages : 1) * SL_PAGE;
    memset(out->vaddr, 0, out->len);
    return 0;
}

static void sim_dma_free(struct sl_transport *t, struct sl_dma *d)
{
    struct sim *s = sim_of(t);
    if (d->vaddr)
        sl_pa_free(&s->pa, d->bus / SL_PAGE, d->len / SL_PAGE);
    memset(d, 0, sizeof(*d));
}

static int sim_wait(struct sl_transport *t, unsigned mask, uint64_t timeout_ns,
                    struct sl_event *ev)
{
    struct sim *s = sim_of(t);
    memset(ev, 0, sizeof(*ev));
    if (timeout_ns == 0)
        return 0;
    struct sb_msg m = {0};
    if (mask == 0) {
        m.type = SB_ADVANCE;
        m.data = timeout_ns > UINT64_MAX / 1000u ? UINT64_MAX : timeout_ns * 1000u;
        return xfer(s, &m);
    }
    m.type = SB_WAIT;
    /* absolute deadline in ps; one past 2^64 ps (213 days) means none (0) */
    m.data = timeout_ns > (UINT64_MAX - s->time_ps) / 1000u ? 0 : s->time_ps + timeout_ns * 1000u;
    m.size = ((mask & SL_EV_IRQ) ? SB_EV_MSI : 0) | ((mask & SL_EV_DMA_WRITE) ?
             SB_EV_DMA_WRITE : 0);
    int rc = xfer(s, &m);
    if (rc < 0)
        return rc;
    if (m.size & SB_EV_MSI) {
        ev->kind = SL_EV_IRQ;
        ev->vector = (unsigned)m.addr;
    } else if (m.size & SB_EV_DMA_WRITE) {
        ev->kind = SL_EV_DMA_WRITE;
        ev->addr = m.addr;
    }
    return 0;
}

static uint64_t sim_time_ns(struct sl_transport *t)
{
    return sim_of(t)->time_ps / 1000u;
}

/* Message Control of the MSI-X capability (MSI-X Enable, Function Mask). */
static int msix_control(struct sim *s, uint32_t ctrl)
{
    struct sb_msg m = {.type = SB_CFG_WRITE, .size = 2, .addr = SB_CFG_MSIX_CAP + 2,
                       .data = ctrl};
    return xfer(s, &m);
}

/* The kernel's part of MSI-X set-up (drivers/pci/msi: msix_capability_init): read the
 * capability, program every table entry, then set MSI-X Enable. A drive without the
 * capability (SB_ERR_ARG) stays on MSI; with $SSDLAB_SIM_IRQ=msi MSI-X is turned off (a
 * previous host may have left it on). */
static int msix_setup(struct sim *s)
{
    struct sl_transport *t = &s->t;
    s->msix_vectors = 0;
    t->n_vectors = s->msi_vectors;
    const char *mode = getenv("SSDLAB_SIM_IRQ");
    if (mode && *mode && strcmp(mode, "msix") && strcmp(mode, "msi"))
        return sl_terr(t, -EINVAL, "sim: SSDLAB_SIM_IRQ=%s: use msi or msix", mode);
    struct sb_msg m = {.type = SB_CFG_READ, .size = 4, .addr = SB_CFG_MSIX_CAP};
    int rc = xfer(s, &m);
    if (rc == -EINVAL)          /* no MSI-X capability: MSI */
        return 0;
    if (rc < 0)
        return rc;
    if (mode && !strcmp(mode, "msi"))
        return msix_control(s, 0);
    uint32_t cap = (uint32_t)m.data;
    if ((cap & 0xffu) != 0x11u)
        return sl_terr(t, -EPROTO, "sim: the MSI-X capability at 0x%x has ID 0x%x, not 0x11",
                       SB_CFG_MSIX_CAP, cap & 0xffu);
    unsigned n = ((cap >> 16) & 0x7ffu) + 1;
    m = (struct sb_msg){.type = SB_CFG_READ, .size = 4, .addr = SB_CFG_MSIX_CAP + 4};
    if ((rc = xfer(s, &m)) < 0)
        return rc;
    uint32_t table = (uint32_t)m.data;
    if (table & 7u)
        return sl_terr(t, -EPROTO, "sim: the MSI-X table is in BAR%u; BAR0 is the only BAR",
                       table & 7u);
    for (unsigned v = 0; v < n; v++) {
        uint32_t e = table + 16u * v;
        /* qword 0: Message Address; qword 1: Message Data, Vector Control 0 (unmasked) */
        if ((rc = t->ops->write64(t, e, SB_MSI_WINDOW_BASE)) < 0 ||
            (rc = t->ops->write64(t, e + 8, v)) < 0)
            return rc;
    }
    if ((rc = msix_control(s, SB_MSIX_ENABLE)) < 0)
        return rc;
    s->msix_vectors = n;
    t->n_vectors = n;
    return 0;
}

static int sim_reset(struct sl_transport *t)
{
    struct sb_msg m = {.type = SB_RESET};
    int rc = xfer(sim_of(t), &m);
    return rc < 0 ? rc : msix_setup(sim_of(t));
}

static int sim_power_cut(struct sl_transport *t)
{
    struct sb_msg m = {.type = SB_RESET, .size = SB_RESET_POWER_CUT};
    int rc = xfer(sim_of(t), &m);
    if (rc < 0 || (rc = msix_setup(sim_of(t))) < 0)
        return rc;
    return m.addr > INT32_MAX ? INT32_MAX : (int)m.addr;
}

static int sim_stats(struct sl_transport *t, char *buf, size_t len)
{
    struct sb_msg m = {.type = SB_INFO};
    int rc = xfer(sim_of(t), &m);
    if (rc < 0)
        return rc;
    m.name[SB_NAME_BYTES - 1] = 0;
    snprintf(buf, len, "cycles=%llu msis=%llu dma_writes=%u sim_ps=%llu irq=%s vectors=%u %s",
             (unsigned long long)m.data, (unsigned long long)m.addr, m.size,
             (unsigned long long)m.time_ps, sim_of(t)->msix_vectors ? "msix" : "msi",
             t->n_vectors, m.name);
    return 0;
}

static void sim_close(struct sl_transport *t)
{
    struct sim *s = sim_of(t);
    if (s->msix_vectors && s->fd >= 0)
        msix_control(s, 0);     /* as the kernel's release: the next host starts on MSI */
    if (s->ram)
        munmap(s->ram, s->ram_bytes);
    if (s->fd >= 0)
        close(s->fd);
    sl_pa_fini(&s->pa);
    free(s);
}

static const struct sl_transport_ops sim_ops = {
    .name = "sim",
    .read32 = sim_read32, .read64 = sim_read64,
    .write32 = sim_write32, .write64 = sim_write64,
    .dma_alloc = sim_dma_alloc, .dma_free = sim_dma_free,
    .wait = sim_wait, .time_ns = sim_time_ns,
    .reset = sim_reset, .power_cut = sim_power_cut, .stats = sim_stats, .close = sim_close,
};

int sl_sim_quit(struct sl_transport *t)
{
    if (t->ops != &sim_ops)
        return sl_terr(t, -EINVAL, "not a sim transport");
    struct sb_msg m = {.type = SB_QUIT};
    return xfer(sim_of(t), &m);
}

int sl_sim_precycle(struct sl_transport *t, uint64_t cycles)
{
    if (t->ops != &sim_ops)
        return sl_terr(t, -EINVAL, "not a sim transport");
    if (cycles < 1 || cycles > 10000000ull)
        return sl_terr(t, -EINVAL, "precycle: %llu P/E cycles outside 1..10^7",
                       (unsigned long long)cycles);
    struct sb_msg m = {.type = SB_PRECYCLE, .data = cycles};
    int rc = xfer(sim_of(t), &m);
    return rc < 0 ? rc : (int)m.data;
}

int sl_sim_bake(struct sl_transport *t, uint64_t millihours)
{
    if (t->ops != &sim_ops)
        return sl_terr(t, -EINVAL, "not a sim transport");
    if (millihours < 1 || millihours > 1000000000ull)
        return sl_terr(t, -EINVAL, "bake: %llu thousandths of an hour outside 1..10^9",
                       (unsigned long long)millihours);
    struct sb_msg m = {.type = SB_BAKE, .data = millihours};
    int rc = xfer(sim_of(t), &m);
    return rc < 0 ? rc : (int)m.data;
}

/* SB_FAULT `kind` on LUN `lun` of the die on channel `channel`, way `way`, with `addr`;
 * `what` names the fault in the messages. The reply as sl_sim_bad_block's. */
static int sim_fault(struct sl_transport *t, uint32_t kind, const char *what, unsigned channel,
                     unsigned way, unsigned lun, uint64_t addr)
{
    if (t->ops != &sim_ops)
        return sl_terr(t, -EINVAL, "not a sim transport");
    if (channel > 0xFF || way > 0xFF || lun > 0xFF)
        return sl_terr(t, -EINVAL, "%s: channel %u, way %u, LUN %u out of range", what,
                       channel, way, lun);
    struct sb_msg m = {.type = SB_FAULT, .size = kind,
                       .data = channel | way << 8 | lun << 16, .addr = addr};
    int rc = xfer(sim_of(t), &m);
    if (rc == -EINVAL)
        return sl_terr(t, -EINVAL, "%s: no LUN %u on channel %u, way %u (or %llu out of "
                       "range)", what, lun, channel, way, (unsigned long long)addr);
    return rc < 0 ? rc : (int)m.data;
}

int sl_sim_bad_block(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun,
                     unsigned block)
{
    return sim_fault(t, SB_FAULT_BAD_BLOCK, "bad block", channel, way, lun, block);
}

int sl_sim_bit_errors(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun,
                      uint64_t rber_ppb)
{
    if (rber_ppb > 500000000ull)
        return sl_terr(t, -EINVAL, "bit errors: %llu per 10^9 out of range 0..5 x 10^8",
                       (unsigned long long)rber_ppb);
    return sim_fault(t, SB_FAULT_BIT_ERRORS, "bit errors", channel, way, lun, rber_ppb);
}

int sl_sim_die_fail(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun)
{
    return sim_fault(t, SB_FAULT_DIE_FAIL, "die failure", channel, way, lun, 0);
}

int sl_sim_stuck_busy(struct sl_transport *t, unsigned channel, unsigned way, unsigned lun,
                      bool for_good)
{
    return sim_fault(t, SB_FAULT_STUCK_BUSY, "stuck busy", channel, way, lun, for_good);
}

int sl_sim_cpl_fault(struct sl_transport *t, enum sl_cpl_fault kind, unsigned reads,
                     uint64_t addr)
{
    _Static_assert(SL_CPL_POISON == SB_FAULT_CPL_POISON &&
                   SL_CPL_TIMEOUT == SB_FAULT_CPL_TIMEOUT, "sl_cpl_fault != SB_FAULT_CPL_*");
    if (t->ops != &sim_ops)
        return sl_terr(t, -EINVAL, "not a sim transport");
    if (kind != SL_CPL_POISON && kind != SL_CPL_TIMEOUT)
        return sl_terr(t, -EINVAL, "completion fault: kind %d is not SL_CPL_POISON (%d) or "
                       "SL_CPL_TIMEOUT (%d)", (int)kind, SL_CPL_POISON, SL_CPL_TIMEOUT);
    if (reads < 1 || reads > 255)
        return sl_terr(t, -EINVAL, "completion fault: reads %u outside 1..255", reads);
    struct sb_msg m = {.type = SB_FAULT, .size = kind, .data = reads, .addr = addr};
    int rc = xfer(sim_of(t), &m);
    return rc < 0 ? rc : (int)m.data;
}

uint64_t sl_sim_time_ps(struct sl_transport *t)
{
    return t->ops == &sim_ops ? sim_of(t)->time_ps : 0;
}

int sl_sim_irq_counts(struct sl_transport *t, unsigned first, unsigned n, uint64_t *counts)
{
    if (t->ops != &sim_ops)
        return sl_terr(t, -EINVAL, "not a sim transport");
    unsigned got = 0;
    while (got < n) {
        struct sb_msg m = {.type = SB_IRQ_COUNTS, .addr = first + got};
        int rc = xfer(sim_of(t), &m);
        if (rc < 0)
            return rc;
        if (m.size == 0 || m.size > SB_IRQ_COUNTS_MAX)
            break;
        for (unsigned k = 0; k < m.size && got < n; k++, got++)
            memcpy(&counts[got], m.name + 8 * k, 8);
    }
    return (int)got;
}

static int fail(struct sim *s, int rc)
{
    sl_terr(NULL, 0, "%s", s->t.err);
    sim_close(&s->t);
    return rc;
}

int sl_transport_open_sim(const char *path, struct sl_transport **out)
{
    *out = NULL;
    if (!path || !*path)
        path = getenv("SSDLAB_SIM_SOCKET");
    if (!path || !*path)
        return sl_terr(NULL, -EINVAL, "sim: no socket given and SSDLAB_SIM_SOCKET is not set");
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof(sa.sun_path))
        return sl_terr(NULL, -ENAMETOOLONG, "sim: socket path %s", path);
    struct sim *s = calloc(1, sizeof(*s));
    if (!s)
        return sl_terr(NULL, -ENOMEM, "sim: allocating the transport");
    s->t.ops = &sim_ops;
    s->t.priv = s;
    s->t.events = SL_EV_IRQ | SL_EV_DMA_WRITE;
    s->fd = -1;
    const char *trace = getenv("SSDLAB_SIM_TRACE");
    s->trace = trace && *trace && strcmp(trace, "0");
    /* the stuck-harness watchdog: 60 s of wall time with no byte, 30 keepalives missed */
    const char *wd = getenv("SSDLAB_SIM_WATCHDOG_S");
    char *end = NULL;
    long wd_s = wd && *wd ? strtol(wd, &end, 10) : 60;
    if (wd && *wd && (*end || wd_s < 0 || wd_s > 86400))
        return fail(s, sl_terr(&s->t, -EINVAL, "sim: $SSDLAB_SIM_WATCHDOG_S=%s is not a "
                               "number of seconds from 0 (off) to 86400", wd));
    s->watchdog_ms = (int)wd_s * 1000;
    strcpy(sa.sun_path, path);
    snprintf(s->path, sizeof(s->path), "%s", path);
    s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        return fail(s, sl_terr(&s->t, -errno, "sim: socket()"));
    if (connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        return fail(s, sl_terr(&s->t, -errno, "sim: connecting to the harness at %s (is it "
                               "running?)", path));
    struct sb_msg m = {.type = SB_HELLO, .data = SB_VERSION};
    int rc = xfer(s, &m);
    if (rc < 0)
        return fail(s, rc);
    m.name[SB_NAME_BYTES - 1] = 0;
    s->ram_bytes = m.data;
    s->period_ps = m.addr;
    s->msi_vectors = m.size ? m.size : 1;
    s->t.n_vectors = s->msi_vectors;
    if (s->ram_bytes < 4 * SL_PAGE)
        return fail(s, sl_terr(&s->t, -EPROTO, "sim HELLO: host RAM of %llu bytes is too small",
                               (unsigned long long)s->ram_bytes));
    int fd = open(m.name, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return fail(s, sl_terr(&s->t, -errno, "sim: opening the host RAM file %s (HELLO's "
                               "path; a relative one is taken from this process's working "
                               "directory)", m.name));
    struct stat st;
    if (fstat(fd, &st) < 0 || (uint64_t)st.st_size < s->ram_bytes) {
        close(fd);
        return fail(s, sl_terr(&s->t, -EPROTO, "sim: host RAM file %s is smaller than the %llu "
                               "bytes HELLO announced", m.name,
                               (unsigned long long)s->ram_bytes));
    }
    void *p = mmap(NULL, s->ram_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    rc = -errno;
    close(fd);
    if (p == MAP_FAILED)
        return fail(s, sl_terr(&s->t, rc, "sim: mmap of the host RAM file %s", m.name));
    s->ram = p;
    rc = sl_pa_init(&s->pa, 0, s->ram_bytes / SL_PAGE);
    if (rc < 0)
        return fail(s, sl_terr(&s->t, rc, "sim: page allocator"));
    rc = msix_setup(s);
    if (rc < 0)
        return fail(s, rc);
    *out = &s->t;
    return 0;
}
