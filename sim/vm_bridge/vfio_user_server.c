/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * vfio_user_server.c - the simulated drive as a vfio-user PCI device, so a virtual machine's
 * stock Linux nvme driver talks to the RTL (README.md beside this file).
 *
 *   QEMU (vfio-user-pci) --vfio-user socket--> this server --ssdlab bridge--> ssdlab_sim
 *
 * Config space is libvfio-user's: the drive's IDs and class (soc/ssdlab_soc.py NVME_PCIE),
 * BAR0 16 KiB, and the drive's own MSI-X capability (table and PBA where the RTL has them, read
 * from the harness), which QEMU emulates for the guest. BAR0 accesses become the harness's
 * MMIO requests. The guest's RAM is the harness's host RAM file (QEMU's memory-backend-file,
 * share=on), so the drive's DMA lands in guest memory with no copy and no translation; the
 * server checks that every DMA region QEMU maps is that file at offset == guest address.
 * Each MSI-X message the drive sends (the server programs the drive's table with vector v
 * -> data v in the harness's interrupt window) becomes vfu_irq_trigger(v), QEMU's eventfd.
 *
 * Time: the guest runs in wall time, the drive in simulated time. The drive runs in slices
 * (SB_WAIT with SB_EV_HOST, so a guest access ends a slice within about a millisecond) as fast
 * as the simulator goes, but never faster than the wall clock: a slice that simulated more
 * time than it took is followed by a sleep (woken by the guest). An idle drive (fast-forward)
 * therefore keeps real time, a busy one runs slower than real time, and every figure the
 * harness reports (SB_INFO) stays in simulated time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <vfio-user/libvfio-user.h>

#include "ssdlab_bridge.h"

/* The drive's PCIe function (soc/ssdlab_soc.py NVME_PCIE). */
#define DRIVE_VENDOR_ID  0x1D1Du
#define DRIVE_DEVICE_ID  0x5D1Au
#define DRIVE_BAR0_BYTES 0x4000u

static const char *prog = "ssdlab_vfio_user";
static volatile sig_atomic_t stop_requested;

struct server {
    /* the harness */
    int      fd;
    uint64_t ram_bytes, period_ps, time_ps;
    char     ram_path[SB_NAME_BYTES];
    dev_t    ram_dev;
    ino_t    ram_ino;
    bool     wait_pending;          /* a SB_WAIT is out; its reply comes before any other */
    uint64_t wait_sim_ps, wait_wall_ns;
    /* the drive's MSI-X */
    unsigned msix_vectors;
    uint32_t msix_table, msix_pba;
    /* vfio-user */
    vfu_ctx_t *vfu;
    const char *vfu_path;
    /* options */
    uint64_t slice_ps;
    bool     verbose;
    /* counts */
    uint64_t mmio_reads, mmio_writes, irqs, irqs_lost, slices, dma_regions;
    uint64_t refused;               /* client requests libvfio-user refused (logged errors) */
    uint64_t windows[64];           /* guest addresses of the DMA windows given the harness */
    unsigned n_windows;
    bool     in_trigger;
    int      fatal;                 /* set by a callback: the main loop stops with it */
};

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: error: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

static void note(struct server *s, const char *fmt, ...)
{
    if (!s->verbose)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the harness (sim/bridge/ssdlab_bridge.h) ---- */

static void io_all(struct server *s, void *buf, size_t len, bool out)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = out ? send(s->fd, p, len, MSG_NOSIGNAL) : recv(s->fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("the harness closed the connection (%s)", n < 0 ? strerror(errno) : "EOF");
        p += n;
        len -= (size_t)n;
    }
}

/* The next message that is not a keepalive. */
static void recv_msg(struct server *s, struct sb_msg *m)
{
    do
        io_all(s, m, sizeof(*m), false);
    while (m->type == SB_ALIVE);
    s->time_ps = m->time_ps;
}

static void deliver_irq(struct server *s, unsigned vector)
{
    s->irqs++;
    s->in_trigger = true;           /* its "no fd" log is a lost interrupt, not a refusal */
    int rc = vector < s->msix_vectors ? vfu_irq_trigger(s->vfu, vector) : -1;
    s->in_trigger = false;
    if (rc < 0) {
        /* the guest has not set this vector up (MSI-X off, or the vector unused): a lost
         * message, as on a bus where the function sends one its host has not enabled */
        s->irqs_lost++;
        fprintf(stderr, "%s: MSI-X vector %u at %.3f us simulated not delivered: the guest has "
                "not enabled it\n", prog, vector, (double)s->time_ps / 1e6);
    }
}

/* The reply to the outstanding SB_WAIT. */
static void finish_wait(struct server *s)
{
    struct sb_msg r;
    recv_msg(s, &r);
    if (r.type != SB_WAIT)
        fail("the harness answered type %u to SB_WAIT", r.type);
    s->wait_pending = false;
    if (r.size == SB_EV_MSI)
        deliver_irq(s, (unsigned)r.addr);
}

/* One request and its reply; an outstanding SB_WAIT is answered first (the request ends it:
 * SB_EV_HOST). Returns the reply's status. */
static uint32_t call(struct server *s, struct sb_msg *m)
{
    uint32_t type = m->type;
    io_all(s, m, sizeof(*m), true);
    if (s->wait_pending)
        finish_wait(s);
    recv_msg(s, m);
    if (m->type != type)
        fail("the harness answered type %u to request type %u", m->type, type);
    return m->status;
}

static void start_wait(struct server *s)
{
    struct sb_msg m = {.type = SB_WAIT, .size = SB_EV_MSI | SB_EV_HOST,
                       .data = s->time_ps + s->slice_ps};
    io_all(s, &m, sizeof(m), true);
    s->wait_pending = true;
    s->wait_sim_ps = s->time_ps;
    s->wait_wall_ns = wall_ns();
    s->slices++;
}

static uint64_t mmio_read(struct server *s, uint32_t off, unsigned size)
{
    struct sb_msg m = {.type = SB_MMIO_READ, .size = size, .addr = off};
    s->mmio_reads++;
    uint32_t st = call(s, &m);
    if (st == SB_ERR_TIMEOUT)
        return ~0ull;       /* a read the device never completed reads all ones, as on a bus */
    if (st != SB_OK)
        fail("MMIO read of BAR0+0x%x (%u bytes): harness status %u", off, size, st);
    return m.data;
}

static void mmio_write(struct server *s, uint32_t off, unsigned size, uint64_t val)
{
    struct sb_msg m = {.type = SB_MMIO_WRITE, .size = size, .addr = off, .data = val};
    s->mmio_writes++;
    uint32_t st = call(s, &m);
    if (st != SB_OK)
        fail("MMIO write of BAR0+0x%x (%u bytes): harness status %u", off, size, st);
}

/* The harness's DMA windows (SB_DMA_WINDOW): the drive reaches only the guest memory QEMU
 * mapped; an access elsewhere is refused there and counted (SB_INFO dma_refused). */
static void dma_window(struct server *s, uint32_t op, uint64_t addr, uint64_t len)
{
    struct sb_msg m = {.type = SB_DMA_WINDOW, .size = op, .addr = addr, .data = len};
    if (call(s, &m) != SB_OK)
        fail("the harness refused DMA window %u 0x%" PRIx64 "+0x%" PRIx64, op, addr, len);
}

static uint32_t cfg_read(struct server *s, uint32_t off)
{
    struct sb_msg m = {.type = SB_CFG_READ, .size = 4, .addr = off};
    if (call(s, &m) != SB_OK)
        fail("the drive has no MSI-X capability (config read 0x%x refused): build it with "
             "MSI-X (every NVMe persona is)", off);
    return (uint32_t)m.data;
}

/* The drive's MSI-X table, programmed as libssdlab does (transport_sim.c msix_setup): entry
 * v sends data v into the harness's interrupt window, so the harness reports vector v. The
 * guest's own table is QEMU's emulation; the drive's is never seen by the guest. */
static void program_msix(struct server *s)
{
    for (unsigned v = 0; v < s->msix_vectors; v++) {
        uint32_t e = s->msix_table + 16u * v;
        mmio_write(s, e, 8, SB_MSI_WINDOW_BASE);
        mmio_write(s, e + 8, 8, v);         /* Message Data v, Vector Control 0: unmasked */
    }
    struct sb_msg m = {.type = SB_CFG_WRITE, .size = 2, .addr = SB_CFG_MSIX_CAP + 2,
                       .data = SB_MSIX_ENABLE};
    if (call(s, &m) != SB_OK)
        fail("the harness refused MSI-X Enable");
}

static void connect_harness(struct server *s, const char *path)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof a.sun_path)
        fail("--sim %s: path too long for a Unix socket", path);
    strcpy(a.sun_path, path);
    s->fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (s->fd < 0 || connect(s->fd, (struct sockaddr *)&a, sizeof a) < 0)
        fail("--sim %s: cannot connect to the harness (%s); start it first (ssdlab sim run "
             "--ram-mib N)", path, strerror(errno));
    struct sb_msg m = {.type = SB_HELLO, .data = SB_VERSION};
    uint32_t st = call(s, &m);
    if (st == SB_ERR_VERSION)
        fail("the harness speaks bridge version %" PRIu64 ", this server %u: rebuild both",
             m.data, SB_VERSION);
    if (st != SB_OK)
        fail("HELLO refused (status %u)", st);
    s->ram_bytes = m.data;
    s->period_ps = m.addr;
    snprintf(s->ram_path, sizeof s->ram_path, "%.*s", (int)sizeof m.name - 1, m.name);
    struct stat st_ram;
    if (stat(s->ram_path, &st_ram) < 0)
        fail("the harness's host RAM file %s: %s", s->ram_path, strerror(errno));
    s->ram_dev = st_ram.st_dev;
    s->ram_ino = st_ram.st_ino;

    uint32_t cap = cfg_read(s, SB_CFG_MSIX_CAP);
    if ((cap & 0xffu) != 0x11u)
        fail("the MSI-X capability has ID 0x%x, not 0x11", cap & 0xffu);
    s->msix_vectors = ((cap >> 16) & 0x7ffu) + 1;
    s->msix_table = cfg_read(s, SB_CFG_MSIX_CAP + 4);
    s->msix_pba = cfg_read(s, SB_CFG_MSIX_CAP + 8);
    dma_window(s, SB_DMA_WINDOW_ALL, 0, 0);     /* none of an earlier server's */
    if ((s->msix_table & 7u) || (s->msix_pba & 7u))
        fail("the drive's MSI-X table or PBA is not in BAR0");
    program_msix(s);
}

/* ---- vfio-user callbacks ---- */

static struct server *server_of(vfu_ctx_t *ctx)
{
    return vfu_get_private(ctx);
}

/* BAR0. NVMe registers are accessed 4 or 8 bytes wide (a 64-bit register may be two 4-byte
 * halves); a narrower or unaligned access is done on the dwords it touches (a write
 * read-modify-writes them: fine for registers, wrong for doorbells, which no driver writes
 * narrower than 4 bytes). */
static ssize_t bar0_access(vfu_ctx_t *ctx, char *buf, size_t count, loff_t off, bool is_write)
{
    struct server *s = server_of(ctx);
    if (off < 0 || (uint64_t)off + count > DRIVE_BAR0_BYTES) {
        errno = EINVAL;
        return -1;
    }
    uint32_t o = (uint32_t)off;
    if ((count == 4 || count == 8) && !(o & (count - 1))) {
        uint64_t v = 0;
        if (is_write) {
            memcpy(&v, buf, count);
            mmio_write(s, o, (unsigned)count, v);
        } else {
            v = mmio_read(s, o, (unsigned)count);
            memcpy(buf, &v, count);
        }
        return (ssize_t)count;
    }
    for (size_t done = 0; done < count;) {
        uint32_t dw = (o + (uint32_t)done) & ~3u, at = (o + (uint32_t)done) & 3u;
        size_t n = count - done < 4 - at ? count - done : 4 - at;
        uint32_t v = (uint32_t)mmio_read(s, dw, 4);
        if (is_write) {
            memcpy((uint8_t *)&v + at, buf + done, n);
            mmio_write(s, dw, 4, v);
        } else {
            memcpy(buf + done, (uint8_t *)&v + at, n);
        }
        done += n;
    }
    return (ssize_t)count;
}

/* The file and offset behind a mapped address, from /proc/self/maps. */
static bool backing_of(const void *addr, dev_t *dev, ino_t *ino, uint64_t *file_off)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, ino_l;
        unsigned maj, min;
        if (sscanf(line, "%lx-%lx %*s %lx %x:%x %lu", &lo, &hi, &off, &maj, &min, &ino_l) != 6)
            continue;
        if ((uintptr_t)addr < lo || (uintptr_t)addr >= hi)
            continue;
        *dev = makedev(maj, min);
        *ino = (ino_t)ino_l;
        *file_off = off + ((uintptr_t)addr - lo);
        found = true;
    }
    fclose(f);
    return found;
}

/* A guest memory region QEMU lets the device reach. The drive writes the harness's RAM file
 * directly, so guest RAM must be that file, at file offset == guest physical address. */
static void dma_register(vfu_ctx_t *ctx, vfu_dma_info_t *info)
{
    struct server *s = server_of(ctx);
    uint64_t iova = (uint64_t)(uintptr_t)info->iova.iov_base, len = info->iova.iov_len;
    s->dma_regions++;
    note(s, "DMA region 0x%" PRIx64 "..0x%" PRIx64 " %s", iova, iova + len - 1,
         info->vaddr ? "mapped" : "not mappable");
    /* QEMU also maps the ROM and option-ROM areas below 1 MiB read-only, with no file
     * behind them: never a DMA target of a driver. Writable guest RAM below the drive's
     * reach must be the file. */
    if (iova >= s->ram_bytes || !info->vaddr || !(info->prot & PROT_WRITE))
        return;
    dev_t dev;
    ino_t ino;
    uint64_t file_off;
    if (!backing_of(info->vaddr, &dev, &ino, &file_off) || dev != s->ram_dev ||
        ino != s->ram_ino || file_off != iova) {
        fprintf(stderr, "%s: error: guest memory at 0x%" PRIx64 " is not the harness's host "
                "RAM file %s at the same offset, so the drive's DMA would miss it: start QEMU "
                "with -object memory-backend-file,id=ram,size=<=%" PRIu64 "M,mem-path=%s,"
                "share=on -machine q35,memory-backend=ram\n", prog, iova, s->ram_path,
                s->ram_bytes >> 20, s->ram_path);
        s->fatal = 1;
        return;
    }
    if (len > s->ram_bytes - iova)
        len = s->ram_bytes - iova;
    if (s->n_windows == sizeof s->windows / sizeof s->windows[0])
        fail("more than %u guest memory regions mapped", s->n_windows);
    dma_window(s, SB_DMA_WINDOW_ADD, iova, len);
    s->windows[s->n_windows++] = iova;
}

static void dma_unregister(vfu_ctx_t *ctx, vfu_dma_info_t *info)
{
    struct server *s = server_of(ctx);
    uint64_t iova = (uint64_t)(uintptr_t)info->iova.iov_base;
    for (unsigned i = 0; i < s->n_windows; i++) {
        if (s->windows[i] != iova)
            continue;
        dma_window(s, SB_DMA_WINDOW_REMOVE, iova, 0);
        s->windows[i] = s->windows[--s->n_windows];
        return;
    }
}

/* A function-level or system reset from the guest: the drive's power cycle (SB_RESET), its
 * MSI-X table then programmed again. */
static int device_reset(vfu_ctx_t *ctx, vfu_reset_type_t type)
{
    struct server *s = server_of(ctx);
    note(s, "reset (type %d)", (int)type);
    /* A lost connection is the VM gone, not a reset: the drive stays as it is (the host may
     * cut its power next, or attach another VM, whose machine reset power-cycles it). */
    if (type == VFU_RESET_LOST_CONN)
        return 0;
    struct sb_msg m = {.type = SB_RESET};
    if (call(s, &m) != SB_OK)
        fail("the harness refused the reset");
    program_msix(s);
    return 0;
}

/* libvfio-user's messages. At LOG_ERR and worse they are requests it refused (a malformed
 * message, an access outside a region, ...): counted, and the device keeps serving. */
static void log_message(vfu_ctx_t *ctx, int level, const char *msg)
{
    struct server *s = server_of(ctx);
    if (level <= LOG_ERR && !s->in_trigger)
        s->refused++;
    fprintf(stderr, "%s: libvfio-user (%d): %s\n", prog, level, msg);
}

static void setup_device(struct server *s)
{
    unlink(s->vfu_path);        /* a stale socket of an earlier run would make the bind fail */
    s->vfu = vfu_create_ctx(VFU_TRANS_SOCK, s->vfu_path, LIBVFIO_USER_FLAG_ATTACH_NB, s,
                            VFU_DEV_TYPE_PCI);
    if (!s->vfu)
        fail("vfio-user socket %s: %s", s->vfu_path, strerror(errno));
    vfu_setup_log(s->vfu, log_message, s->verbose ? LOG_DEBUG : LOG_ERR);
    if (vfu_pci_init(s->vfu, VFU_PCI_TYPE_EXPRESS, PCI_HEADER_TYPE_NORMAL, 0) < 0)
        fail("vfu_pci_init: %s", strerror(errno));
    vfu_pci_set_id(s->vfu, DRIVE_VENDOR_ID, DRIVE_DEVICE_ID, DRIVE_VENDOR_ID, DRIVE_DEVICE_ID);
    vfu_pci_set_class(s->vfu, 0x01, 0x08, 0x02);   /* mass storage, NVM, NVM Express */
    if (vfu_setup_region(s->vfu, VFU_PCI_DEV_BAR0_REGION_IDX, DRIVE_BAR0_BYTES, bar0_access,
                         VFU_REGION_FLAG_RW | VFU_REGION_FLAG_MEM, NULL, 0, -1, 0) < 0)
        fail("BAR0 region: %s", strerror(errno));

    struct msixcap cap = {0};
    cap.hdr.id = PCI_CAP_ID_MSIX;
    cap.mxc.ts = s->msix_vectors - 1;
    cap.mtab.tbir = 0;
    cap.mtab.to = s->msix_table >> 3;
    cap.mpba.pbir = 0;
    cap.mpba.pbao = s->msix_pba >> 3;
    if (vfu_pci_add_capability(s->vfu, 0, 0, &cap) < 0)
        fail("MSI-X capability: %s", strerror(errno));
    if (vfu_setup_device_nr_irqs(s->vfu, VFU_DEV_MSIX_IRQ, s->msix_vectors) < 0)
        fail("MSI-X vectors: %s", strerror(errno));
    /* MSI-X only. libvfio-user (0b28d20) keeps the eventfds of every interrupt index in the
     * MSI-X array, so the ERR and REQ eventfds QEMU registers at start-up would sit in vector
     * 0's slot: a drive interrupt on vector 0 before the guest enables MSI-X would fire QEMU's
     * error notifier (the VM stops: seen on the second boot of the acceptance run) or its
     * release request. No ERR, REQ or INTx interrupt, then. */
    if (vfu_setup_device_nr_irqs(s->vfu, VFU_DEV_ERR_IRQ, 0) < 0 ||
        vfu_setup_device_nr_irqs(s->vfu, VFU_DEV_REQ_IRQ, 0) < 0 ||
        vfu_setup_device_nr_irqs(s->vfu, VFU_DEV_INTX_IRQ, 0) < 0)
        fail("interrupt indexes: %s", strerror(errno));
    if (vfu_setup_device_dma(s->vfu, dma_register, dma_unregister) < 0)
        fail("DMA callbacks: %s", strerror(errno));
    if (vfu_setup_device_reset_cb(s->vfu, device_reset) < 0)
        fail("reset callback: %s", strerror(errno));
    if (vfu_realize_ctx(s->vfu) < 0)
        fail("vfu_realize_ctx: %s", strerror(errno));
}

/* ---- the loop ---- */

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void print_stats(struct server *s)
{
    struct sb_msg m = {.type = SB_INFO};
    if (call(s, &m) != SB_OK)
        return;
    fprintf(stderr, "%s: %.3f us simulated, %" PRIu64 " cycles; guest MMIO %" PRIu64
            " reads, %" PRIu64 " writes; interrupts %" PRIu64 " (%" PRIu64 " not delivered); "
            "%" PRIu64 " slices; %" PRIu64 " client requests refused; harness: %.*s\n", prog,
            (double)s->time_ps / 1e6, m.data, s->mmio_reads, s->mmio_writes, s->irqs,
            s->irqs_lost, s->slices, s->refused,
            (int)sizeof m.name, m.name);
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: %s --sim HARNESS_SOCKET --socket VFIO_USER_SOCKET [--slice-us N] [--once] [-v]\n"
        "  Serves the simulated drive (ssdlab_sim on HARNESS_SOCKET) as a vfio-user PCI device\n"
        "  on VFIO_USER_SOCKET, for QEMU's -device vfio-user-pci. The guest's RAM must be the\n"
        "  harness's host RAM file (memory-backend-file, share=on).\n"
        "  --slice-us N  simulated time run between looks at the wall clock (default 1000)\n"
        "  --once        exit when the client disconnects (default: wait for the next one)\n",
        prog);
}

int main(int argc, char **argv)
{
    struct server s = {.fd = -1, .slice_ps = 1000ull * 1000 * 1000};
    const char *sim_path = NULL;
    bool once = false;
    static const struct option opts[] = {
        {"sim", required_argument, 0, 's'}, {"socket", required_argument, 0, 'u'},
        {"slice-us", required_argument, 0, 't'}, {"once", no_argument, 0, 'o'},
        {"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        switch (c) {
        case 's': sim_path = optarg; break;
        case 'u': s.vfu_path = optarg; break;
        case 't': {
            char *end;
            errno = 0;
            unsigned long long us = strtoull(optarg, &end, 10);
            if (errno || *end || !*optarg || us < 1 || us > 1000000)
                fail("--slice-us: '%s' is not a number of microseconds from 1 to 1000000",
                     optarg);
            s.slice_ps = us * 1000000ull;
            break;
        }
        case 'o': once = true; break;
        case 'v': s.verbose = true; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (!sim_path || !s.vfu_path || optind != argc) {
        usage(stderr);
        return 2;
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    connect_harness(&s, sim_path);
    setup_device(&s);
    fprintf(stderr, "%s: drive on %s (host RAM %s, %" PRIu64 " MiB, %u MSI-X vectors); "
            "vfio-user on %s\n", prog, sim_path, s.ram_path, s.ram_bytes >> 20,
            s.msix_vectors, s.vfu_path);

    bool attached = false;
    uint64_t not_before = 0;        /* wall ns: the next slice waits for the wall clock */
    while (!stop_requested && !s.fatal) {
        if (!attached) {
            if (vfu_attach_ctx(s.vfu) == 0) {
                attached = true;
                fprintf(stderr, "%s: client attached\n", prog);
            } else if (errno != EAGAIN && errno != EINTR) {
                fail("vfu_attach_ctx: %s", strerror(errno));
            }
        }
        uint64_t now = wall_ns();
        if (!s.wait_pending && now >= not_before)
            start_wait(&s);
        struct pollfd p[2] = {{.fd = s.fd, .events = POLLIN},
                              {.fd = vfu_get_poll_fd(s.vfu), .events = POLLIN}};
        int timeout_ms = s.wait_pending ? -1 : (int)((not_before - now + 999999) / 1000000);
        int n = poll(p, 2, timeout_ms);
        if (n < 0 && errno != EINTR)
            fail("poll: %s", strerror(errno));
        if (n <= 0)
            continue;
        if (p[1].revents) {
            if (!attached)
                continue;               /* the attach above takes the connection */
            if (vfu_run_ctx(s.vfu) < 0 && errno != EAGAIN && errno != EINTR) {
                if (errno != ENOTCONN && errno != ESHUTDOWN)
                    fprintf(stderr, "%s: vfu_run_ctx: %s\n", prog, strerror(errno));
                fprintf(stderr, "%s: client detached\n", prog);
                if (once)
                    break;
                print_stats(&s);
                attached = false;
            }
        }
        if (s.wait_pending && (p[0].revents & POLLIN)) {
            uint64_t sim0 = s.wait_sim_ps, wall0 = s.wait_wall_ns;
            finish_wait(&s);
            /* never faster than the wall clock: sleep off what this slice gained */
            uint64_t sim_ns = (s.time_ps - sim0) / 1000, took = wall_ns() - wall0;
            not_before = sim_ns > took ? wall0 + sim_ns : 0;
        }
    }
    if (s.wait_pending)
        finish_wait(&s);
    if (s.fatal)
        return 1;
    print_stats(&s);
    vfu_destroy_ctx(s.vfu);
    dma_window(&s, SB_DMA_WINDOW_ALL, 0, 0);    /* all of host RAM again, for the next host */
    unlink(s.vfu_path);         /* libvfio-user leaves it */
    return 0;
}
