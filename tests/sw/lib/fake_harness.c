// SPDX-License-Identifier: BSD-2-Clause
// fake_harness.c - a stand-in for the Verilator harness in tests: serves fake_dev (a scripted
// NVMe controller, not the RTL) over the bridge protocol, so that the CLI and the library can
// be exercised end to end before the real harness exists. One connection at a time; the
// device (and its media) lives on across connections; exits on SB_QUIT.
//
//   fake_harness SOCKET RAMFILE [n_vectors]
//
// $FAKE_HARNESS_HANG=busy<ms>@<n> or stuck@<n>: the n-th MMIO read (from 1) takes <ms> of wall
// time sending SB_ALIVE every 200 ms (a busy harness), or never answers and sends nothing (a
// stuck one), for the library's keepalive and watchdog tests.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake_dev.h"
#include "ssdlab_bridge.h"

#define RAM_BYTES (32u << 20)

static int recv_all(int fd, void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = recv(fd, p, len, 0);
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* $FAKE_HARNESS_HANG at the n-th MMIO read: busy (keepalives) or stuck (silence). */
static void hang(int fd, uint64_t now_ns)
{
    static unsigned reads;
    const char *h = getenv("FAKE_HARNESS_HANG");
    const char *at = h ? strchr(h, '@') : NULL;
    if (!at || ++reads != (unsigned)atoi(at + 1))
        return;
    if (!strncmp(h, "stuck", 5))
        for (;;)
            pause();
    long ms = strtol(h + 4, NULL, 10);
    for (long t = 0; t < ms; t += 200) {
        usleep(200000);
        struct sb_msg a = { .type = SB_ALIVE, .time_ps = now_ns * 1000u };
        if (send(fd, &a, sizeof(a), MSG_NOSIGNAL) != (ssize_t)sizeof(a))
            return;
    }
}

static int serve(struct fake_dev *d, struct sb_msg *m, const char *ramfile, unsigned nvec,
                 int fd)
{
    m->status = SB_OK;
    uint64_t arg = 0;
    switch (m->type) {
    case SB_HELLO:
        if (m->data != SB_VERSION) {
            m->status = SB_ERR_VERSION;
            m->data = SB_VERSION;
            break;
        }
        m->data = RAM_BYTES;
        m->addr = 10000;
        m->size = nvec;
        snprintf(m->name, sizeof(m->name), "%s", ramfile);
        break;
    case SB_MMIO_WRITE:
        if ((m->size != 4 && m->size != 8) || m->addr >= 0x4000) {
            m->status = SB_ERR_ARG;
            break;
        }
        fake_dev_write(d, (uint32_t)m->addr, m->size, m->data);
        break;
    case SB_MMIO_READ:
        if ((m->size != 4 && m->size != 8) || m->addr >= 0x4000) {
            m->status = SB_ERR_ARG;
            break;
        }
        hang(fd, d->now_ns);
        m->data = fake_dev_read(d, (uint32_t)m->addr, m->size);
        break;
    case SB_WAIT: {
        unsigned mask = ((m->size & SB_EV_MSI) ? SL_EV_IRQ : 0) |
                        ((m->size & SB_EV_DMA_WRITE) ? SL_EV_DMA_WRITE : 0);
        unsigned k = fake_dev_run(d, mask, m->data / 1000u, &arg);
        m->size = k == SL_EV_IRQ ? SB_EV_MSI : k == SL_EV_DMA_WRITE ? SB_EV_DMA_WRITE : 0;
        m->addr = arg;
        break;
    }
    case SB_ADVANCE:
        fake_dev_run(d, 0, d->now_ns + m->data / 1000u, &arg);
        break;
    case SB_INFO:
        m->data = d->now_ns / 10u;
        m->addr = 0;
        m->size = 0;
        snprintf(m->name, sizeof(m->name), "model=fake_dev host_reads=%llu host_writes=%llu",
                 (unsigned long long)d->host_reads, (unsigned long long)d->host_writes);
        break;
    case SB_CFG_READ:       /* fake_dev has no MSI-X capability: the host stays on MSI */
    case SB_CFG_WRITE:
        m->status = SB_ERR_ARG;
        break;
    case SB_IRQ_COUNTS:     /* not counted */
        m->size = 0;
        m->data = 0;
        break;
    case SB_RESET:          /* a power cut (SB_RESET_POWER_CUT) as well: no NAND here */
        if (m->size & ~(uint32_t)SB_RESET_POWER_CUT) {
            m->status = SB_ERR_ARG;
            break;
        }
        d->cc = d->csts = 0;
        m->data = m->addr = 0;
        break;
    case SB_FAULT:          /* no die models here: nothing injected */
        if (m->size != SB_FAULT_BAD_BLOCK && m->size != SB_FAULT_BIT_ERRORS &&
            m->size != SB_FAULT_DIE_FAIL)
            m->status = SB_ERR_ARG;
        m->data = 0;
        break;
    case SB_PRECYCLE:       /* no NAND here: nothing wears */
        if (m->data < 1 || m->data > 10000000ull)
            m->status = SB_ERR_ARG;
        m->data = 0;
        break;
    case SB_BAKE:           /* no NAND here: nothing ages */
        if (m->data < 1 || m->data > 1000000000ull)
            m->status = SB_ERR_ARG;
        m->data = 0;
        break;
    case SB_QUIT:
        break;
    default:
        m->status = SB_ERR_TYPE;
    }
    m->time_ps = d->now_ns * 1000u;
    return m->type == SB_QUIT;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s SOCKET RAMFILE [n_vectors]\n", argv[0]);
        return 2;
    }
    unsigned nvec = argc > 3 ? (unsigned)atoi(argv[3]) : 2;
    signal(SIGPIPE, SIG_IGN);
    int rf = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (rf < 0 || ftruncate(rf, RAM_BYTES) != 0) {
        perror(argv[2]);
        return 1;
    }
    uint8_t *ram = mmap(NULL, RAM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, rf, 0);
    close(rf);
    if (ram == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    static struct fake_dev d;
    fake_dev_init(&d, ram, RAM_BYTES);
    d.n_vectors = nvec;
    int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
    unlink(argv[1]);
    if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
        perror(argv[1]);
        return 1;
    }
    printf("fake_harness: listening on %s\n", argv[1]);
    fflush(stdout);
    int quit = 0;
    while (!quit) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0)
            break;
        struct sb_msg m;
        while (!quit && recv_all(fd, &m, sizeof(m)) == 0) {
            quit = serve(&d, &m, argv[2], nvec, fd);
            if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
                break;
        }
        close(fd);
    }
    close(lfd);
    unlink(argv[1]);
    munmap(ram, RAM_BYTES);
    fake_dev_fini(&d);
    return 0;
}
