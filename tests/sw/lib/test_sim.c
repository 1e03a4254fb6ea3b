// SPDX-License-Identifier: BSD-2-Clause
// test_sim.c - the simulation transport against a fake harness: a thread in this process
// that serves the bridge protocol (sim/bridge/ssdlab_bridge.h) on a Unix socket, records
// every request and plays scripted replies - or, in device mode, serves fake_dev so the whole
// driver runs over the socket and the shared RAM file. It tests framing, time and waiting,
// not an NVMe device.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "fake_dev.h"
#include "ssdlab_bridge.h"
#include "../../../sw/lib/src/sl_priv.h"
#include "tinytest.h"

#define RAM_BYTES   (16u << 20)
#define HOST_PS     100000u          /* modelled host delay per MMIO: 100 ns */
#define MAX_REQ     4096

struct server {
    char sock[108], ramfile[108];
    int  lfd;
    pthread_t th;
    uint8_t *ram;
    uint32_t vectors, hello_status, read_status;
    uint64_t read_value, time_ps;
    int  close_after;               /* close the connection after this many requests */
    /* scripted WAIT events: kind (SB_EV_*; 0: run to the deadline) and addr */
    struct { uint32_t kind; uint64_t addr; } ev[16];
    int  nev, next_ev;
    struct fake_dev *dev;           /* device mode */
    uint32_t msix_n;                /* MSI-X table entries (0: no MSI-X capability) */
    uint32_t msix_ctrl;             /* Message Control bits 15:14 as the host wrote them */
    struct sb_msg req[MAX_REQ];
    int  nreq;
};

static struct server srv;

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

static void serve(struct server *s, struct sb_msg *m)
{
    struct fake_dev *d = s->dev;
    if (d)
        s->time_ps = d->now_ns * 1000u;
    m->status = SB_OK;
    switch (m->type) {
    case SB_HELLO:
        if (m->data != SB_VERSION || s->hello_status) {
            m->status = s->hello_status ? s->hello_status : SB_ERR_VERSION;
            m->data = 99;
            break;
        }
        m->data = RAM_BYTES;
        m->addr = 10000;
        m->size = s->vectors;
        snprintf(m->name, sizeof(m->name), "%s", s->ramfile);
        break;
    case SB_MMIO_WRITE:
        if (d)
            fake_dev_write(d, (uint32_t)m->addr, m->size, m->data);
        else
            s->time_ps += HOST_PS;
        break;
    case SB_MMIO_READ:
        if (d) {
            m->data = fake_dev_read(d, (uint32_t)m->addr, m->size);
        } else {
            s->time_ps += HOST_PS;
            m->data = s->read_value;
            m->status = s->read_status;
        }
        break;
    case SB_WAIT:
        if (d) {
            uint64_t arg = 0;
            unsigned mask = ((m->size & SB_EV_MSI) ? SL_EV_IRQ : 0) |
                            ((m->size & SB_EV_DMA_WRITE) ? SL_EV_DMA_WRITE : 0);
            unsigned k = fake_dev_run(d, mask, m->data / 1000u, &arg);
            m->size = k == SL_EV_IRQ ? SB_EV_MSI : k == SL_EV_DMA_WRITE ? SB_EV_DMA_WRITE : 0;
            m->addr = arg;
        } else if (s->next_ev < s->nev && s->ev[s->next_ev].kind) {
            s->time_ps += 1000000;
            m->size = s->ev[s->next_ev].kind;
            m->addr = s->ev[s->next_ev++].addr;
        } else {
            s->next_ev += s->next_ev < s->nev;
            s->time_ps = m->data;
            m->size = 0;
            m->addr = 0;
        }
        break;
    case SB_ADVANCE:
        if (d)
            fake_dev_run(d, 0, d->now_ns + m->data / 1000u, &(uint64_t){0});
        else
            s->time_ps += m->data;
        break;
    case SB_INFO:
        m->data = s->time_ps / 10000u;
        m->addr = 3;
        m->size = 12;
        snprintf(m->name, sizeof(m->name), "tlps=42 wall_s=0.01");
        break;
    case SB_CFG_READ:
        if (!s->msix_n || m->size != 4)
            m->status = SB_ERR_ARG;
        else if (m->addr == SB_CFG_MSIX_CAP)
            m->data = 0x11u | (s->msix_ctrl | (s->msix_n - 1)) << 16;
        else if (m->addr == SB_CFG_MSIX_CAP + 4)
            m->data = 0x2000;
        else if (m->addr == SB_CFG_MSIX_CAP + 8)
            m->data = 0x3000;
        else
            m->status = SB_ERR_ARG;
        break;
    case SB_CFG_WRITE:
        if (s->msix_n && m->addr == SB_CFG_MSIX_CAP + 2 && m->size == 2)
            s->msix_ctrl = (uint32_t)m->data & (SB_MSIX_ENABLE | SB_MSIX_FMASK);
        else
            m->status = SB_ERR_ARG;
        break;
    case SB_IRQ_COUNTS:     /* 30 vectors counted, vector v saw 10 v + 1 */
        m->size = m->addr < 30 ? (uint32_t)(30 - m->addr) : 0;
        if (m->size > SB_IRQ_COUNTS_MAX)
            m->size = SB_IRQ_COUNTS_MAX;
        for (uint32_t k = 0; k < m->size; k++) {
            uint64_t c = 10 * (m->addr + k) + 1;
            memcpy(m->name + 8 * k, &c, 8);
        }
        m->data = 30;
        break;
    case SB_RESET:          /* a power cut: 3 pages and blocks torn */
        s->msix_ctrl = 0;
        m->addr = m->size & SB_RESET_POWER_CUT ? 3 : 0;
        break;
    case SB_BAKE:           /* 4 dies baked */
        m->data = 4;
        break;
    case SB_PRECYCLE:       /* 4 dies pre-cycled */
        m->data = 4;
        break;
    case SB_FAULT:          /* one die: channel 1, way 0, LUN 0, 64 blocks */
        if (m->size == SB_FAULT_CPL_POISON || m->size == SB_FAULT_CPL_TIMEOUT)
            m->status = m->data < 1 || m->data > 255 ? SB_ERR_ARG : 0;  /* data: reads armed */
        else if (m->size == SB_FAULT_BIT_ERRORS || m->size == SB_FAULT_DIE_FAIL)
            m->status = m->data != 1 ? SB_ERR_ARG : 0, m->data = m->data == 1;
        else if (m->size != SB_FAULT_BAD_BLOCK)
            m->status = SB_ERR_ARG;
        else if (m->data != 1 || m->addr >= 64)
            m->status = SB_ERR_ARG;
        else
            m->data = 1;
        break;
    case SB_QUIT:
        break;
    default:
        m->status = SB_ERR_TYPE;
    }
    if (d)
        s->time_ps = d->now_ns * 1000u;
    m->time_ps = s->time_ps;
}

static void *server_main(void *arg)
{
    struct server *s = arg;
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        return NULL;
    struct sb_msg m;
    while (recv_all(fd, &m, sizeof(m)) == 0) {
        if (s->nreq < MAX_REQ)
            s->req[s->nreq++] = m;
        if (s->close_after && s->nreq >= s->close_after)
            break;
        serve(s, &m);
        if (send(fd, &m, sizeof(m), MSG_NOSIGNAL) != (ssize_t)sizeof(m))
            break;
        if (m.type == SB_QUIT)
            break;
    }
    close(fd);
    return NULL;
}

static void start(struct fake_dev *dev)
{
    memset(&srv, 0, sizeof(srv));
    srv.vectors = 4;
    snprintf(srv.sock, sizeof(srv.sock), "/tmp/sl_test_sim_%d.sock", (int)getpid());
    snprintf(srv.ramfile, sizeof(srv.ramfile), "/tmp/sl_test_sim_%d.ram", (int)getpid());
    int rf = open(srv.ramfile, O_RDWR | O_CREAT | O_TRUNC, 0600);
    CHECK(rf >= 0 && ftruncate(rf, RAM_BYTES) == 0);
    srv.ram = mmap(NULL, RAM_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, rf, 0);
    close(rf);
    unlink(srv.sock);
    srv.lfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    strcpy(sa.sun_path, srv.sock);
    CHECK(bind(srv.lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
    CHECK(listen(srv.lfd, 1) == 0);
    if (dev) {
        fake_dev_init(dev, srv.ram, RAM_BYTES);
        dev->mmio_ns = HOST_PS / 1000u;
        srv.dev = dev;
    }
}

static void run(void)
{
    pthread_create(&srv.th, NULL, server_main, &srv);
}

static void stop(void)
{
    shutdown(srv.lfd, SHUT_RDWR);
    pthread_join(srv.th, NULL);
    close(srv.lfd);
    munmap(srv.ram, RAM_BYTES);
    unlink(srv.sock);
    unlink(srv.ramfile);
}

static struct sl_transport *open_sim(void)
{
    struct sl_transport *t = NULL;
    int rc = sl_transport_open_sim(srv.sock, &t);
    CHECK_EQ(rc, 0);
    if (rc)
        fprintf(stderr, "%s\n", sl_transport_open_errmsg());
    return t;
}

static void hello_and_ram(void)
{
    start(NULL);
    run();
    struct sl_transport *t = open_sim();
    CHECK_EQ(srv.req[0].type, SB_HELLO);
    CHECK_EQ(srv.req[0].data, SB_VERSION);
    CHECK_EQ(t->n_vectors, 4);
    struct sl_dma a, b, c;
    CHECK_EQ(t->ops->dma_alloc(t, 100, &a), 0);
    CHECK_EQ(t->ops->dma_alloc(t, 3 * 4096, &b), 0);
    CHECK(a.bus != 0 && (a.bus & 4095) == 0 && a.len == 4096);
    CHECK(b.bus >= a.bus + a.len || b.bus + b.len <= a.bus);
    /* shared: what the host writes at vaddr, the harness sees at byte `bus` of the file */
    memcpy((uint8_t *)b.vaddr + 5, "ssdlab", 6);
    CHECK(!memcmp(srv.ram + b.bus + 5, "ssdlab", 6));
    srv.ram[a.bus + 7] = 0xa5;
    CHECK_EQ(((uint8_t *)a.vaddr)[7], 0xa5);
    t->ops->dma_free(t, &a);
    CHECK_EQ(t->ops->dma_alloc(t, 4096, &c), 0);
    CHECK_EQ(c.bus, 4096);              /* freed page reused; page 0 never handed out */
    CHECK_EQ(((uint8_t *)c.vaddr)[7], 0);   /* zeroed */
    CHECK_EQ(t->ops->dma_alloc(t, RAM_BYTES, &a), -ENOMEM);
    CHECK_STR(sl_transport_errmsg(t), "no 4096 contiguous pages free");
    sl_transport_close(t);
    stop();
}

static void mmio_framing(void)
{
    start(NULL);
    run();
    struct sl_transport *t = open_sim();
    int n0 = srv.nreq;
    CHECK_EQ(t->ops->write32(t, 0x14, 0x460001), 0);
    CHECK_EQ(t->ops->write64(t, 0x28, 0x123456789000ull), 0);
    srv.read_value = 0xdeadbeefcafef00dull;
    uint32_t v32;
    uint64_t v64;
    CHECK_EQ(t->ops->read64(t, 0x00, &v64), 0);
    CHECK_EQ(v64, 0xdeadbeefcafef00dull);
    srv.read_value = 0x1;
    CHECK_EQ(t->ops->read32(t, 0x1c, &v32), 0);
    CHECK_EQ(v32, 1);
    struct sb_msg *r = &srv.req[n0];
    CHECK_EQ(r[0].type, SB_MMIO_WRITE);
    CHECK_EQ(r[0].size, 4);
    CHECK_EQ(r[0].addr, 0x14);
    CHECK_EQ(r[0].data, 0x460001);
    CHECK_EQ(r[0].status, 0);
    CHECK_EQ(r[1].size, 8);
    CHECK_EQ(r[1].data, 0x123456789000ull);
    CHECK_EQ(r[2].type, SB_MMIO_READ);
    CHECK_EQ(r[2].size, 8);
    CHECK_EQ(r[3].size, 4);
    CHECK_EQ(r[3].addr, 0x1c);
    /* time: each MMIO cost the modelled host delay */
    CHECK_EQ(t->ops->time_ns(t), 4 * HOST_PS / 1000u);
    CHECK_EQ(sl_sim_time_ps(t), 4 * HOST_PS);
    sl_transport_close(t);
    stop();
}

static void wait_events(void)
{
    start(NULL);
    srv.ev[0].kind = SB_EV_MSI;
    srv.ev[0].addr = 3;
    srv.ev[1].kind = SB_EV_DMA_WRITE;
    srv.ev[1].addr = 0x5000;
    srv.ev[2].kind = 0;
    srv.nev = 3;
    run();
    struct sl_transport *t = open_sim();
    struct sl_event ev;
    int n0 = srv.nreq;
    CHECK_EQ(t->ops->wait(t, SL_EV_IRQ, 5000, &ev), 0);
    CHECK_EQ(srv.req[n0].type, SB_WAIT);
    CHECK_EQ(srv.req[n0].size, SB_EV_MSI);
    CHECK_EQ(srv.req[n0].data, 0 + 5000ull * 1000u);    /* absolute deadline in ps */
    CHECK_EQ(ev.kind, SL_EV_IRQ);
    CHECK_EQ(ev.vector, 3);
    CHECK_EQ(t->ops->time_ns(t), 1000);
    CHECK_EQ(t->ops->wait(t, SL_EV_DMA_WRITE | SL_EV_IRQ, 5000, &ev), 0);
    CHECK_EQ(srv.req[n0 + 1].size, SB_EV_MSI | SB_EV_DMA_WRITE);
    CHECK_EQ(srv.req[n0 + 1].data, (1000ull + 5000) * 1000u);
    CHECK_EQ(ev.kind, SL_EV_DMA_WRITE);
    CHECK_EQ(ev.addr, 0x5000);
    CHECK_EQ(t->ops->wait(t, SL_EV_DMA_WRITE, 7000, &ev), 0);
    CHECK_EQ(ev.kind, SL_EV_NONE);                      /* the deadline */
    CHECK_EQ(t->ops->time_ns(t), 2000 + 7000);
    CHECK_EQ(t->ops->wait(t, 0, 500, &ev), 0);          /* sleep: ADVANCE */
    CHECK_EQ(srv.req[n0 + 3].type, SB_ADVANCE);
    CHECK_EQ(srv.req[n0 + 3].data, 500000);
    CHECK_EQ(t->ops->time_ns(t), 9500);
    CHECK_EQ(t->ops->wait(t, SL_EV_IRQ, 0, &ev), 0);     /* zero timeout: no request */
    CHECK_EQ(srv.nreq, n0 + 4);
    CHECK_EQ(sl_transport_sleep(t, 2500), 0);           /* idle: ADVANCE by 2.5 us */
    CHECK_EQ(srv.req[n0 + 4].type, SB_ADVANCE);
    CHECK_EQ(srv.req[n0 + 4].data, 2500000);
    CHECK_EQ(t->ops->time_ns(t), 9500 + 2500);
    sl_transport_close(t);
    stop();
}

static void harness_errors(void)
{
    start(NULL);
    run();
    struct sl_transport *t = open_sim();
    uint32_t v;
    srv.read_status = SB_ERR_TIMEOUT;
    CHECK_EQ(t->ops->read32(t, 0x1c, &v), -ETIMEDOUT);
    CHECK_STR(sl_transport_errmsg(t), "sim MMIO_READ of BAR0+0x1c: completion timeout");
    srv.read_status = SB_ERR_ARG;
    CHECK_EQ(t->ops->read32(t, 0x9000, &v), -EINVAL);
    CHECK_STR(sl_transport_errmsg(t), "refused the size or offset (BAR0+0x9000)");
    srv.close_after = srv.nreq + 1;      /* the harness dies on the next request */
    CHECK_EQ(t->ops->write32(t, 0x14, 0), -ECONNRESET);
    CHECK_STR(sl_transport_errmsg(t), "closed the connection");
    CHECK_EQ(t->ops->write32(t, 0x14, 0), -ENOTCONN);
    sl_transport_close(t);
    stop();
}

static void open_errors(void)
{
    struct sl_transport *t = NULL;
    CHECK_EQ(sl_transport_open_sim("/tmp/sl_no_such_harness.sock", &t), -ENOENT);
    CHECK_STR(sl_transport_open_errmsg(),
              "connecting to the harness at /tmp/sl_no_such_harness.sock (is it running?): "
              "No such file or directory");
    CHECK(t == NULL);
    unsetenv("SSDLAB_SIM_SOCKET");
    CHECK_EQ(sl_transport_open_sim(NULL, &t), -EINVAL);
    CHECK_STR(sl_transport_open_errmsg(), "SSDLAB_SIM_SOCKET is not set");
    /* version mismatch */
    start(NULL);
    srv.hello_status = SB_ERR_VERSION;
    run();
    CHECK_EQ(sl_transport_open_sim(srv.sock, &t), -EPROTONOSUPPORT);
    CHECK_STR(sl_transport_open_errmsg(), "the harness speaks protocol version 99");
    stop();
    /* the environment variable names the socket */
    start(NULL);
    run();
    setenv("SSDLAB_SIM_SOCKET", srv.sock, 1);
    CHECK_EQ(sl_transport_open_sim(NULL, &t), 0);
    unsetenv("SSDLAB_SIM_SOCKET");
    if (t) {
        char buf[256];
        CHECK_EQ(t->ops->stats(t, buf, sizeof(buf)), 0);
        CHECK_STR(buf, "msis=3 dma_writes=12");
        CHECK_STR(buf, "tlps=42");
        CHECK_EQ(t->ops->reset(t), 0);
        CHECK_EQ(srv.req[srv.nreq - 2].type, SB_RESET);
        CHECK_EQ(srv.req[srv.nreq - 1].type, SB_CFG_READ);     /* MSI-X? none: MSI */
        CHECK_EQ(sl_sim_quit(t), 0);
        CHECK_EQ(srv.req[srv.nreq - 1].type, SB_QUIT);
        sl_transport_close(t);
    }
    stop();
}

/* A drive with an MSI-X capability: the transport programs every table entry and enables
 * MSI-X, again after a power cycle; $SSDLAB_SIM_IRQ=msi keeps MSI; per-vector counts. */
static void msix_setup(void)
{
    start(NULL);
    srv.msix_n = 5;
    run();
    struct sl_transport *t = open_sim();
    if (!t) {
        stop();
        return;
    }
    CHECK_EQ(t->n_vectors, 5);
    CHECK_EQ(srv.msix_ctrl, SB_MSIX_ENABLE);
    struct sb_msg *r = &srv.req[1];
    CHECK_EQ(r[0].type, SB_CFG_READ);
    CHECK_EQ(r[0].addr, SB_CFG_MSIX_CAP);
    CHECK_EQ(r[1].type, SB_CFG_READ);
    CHECK_EQ(r[1].addr, SB_CFG_MSIX_CAP + 4);
    for (unsigned v = 0; v < 5; v++) {
        struct sb_msg *a = &r[2 + 2 * v], *dd = &r[3 + 2 * v];
        CHECK_EQ(a->type, SB_MMIO_WRITE);
        CHECK_EQ(a->addr, 0x2000 + 16 * v);
        CHECK_EQ(a->size, 8);
        CHECK_EQ(a->data, SB_MSI_WINDOW_BASE);
        CHECK_EQ(dd->addr, 0x2000 + 16 * v + 8);
        CHECK_EQ(dd->size, 8);
        CHECK_EQ(dd->data, v);              /* data = index; Vector Control 0: unmasked */
    }
    CHECK_EQ(r[12].type, SB_CFG_WRITE);
    CHECK_EQ(r[12].addr, SB_CFG_MSIX_CAP + 2);
    CHECK_EQ(r[12].size, 2);
    CHECK_EQ(r[12].data, SB_MSIX_ENABLE);
    char buf[256];
    CHECK_EQ(t->ops->stats(t, buf, sizeof(buf)), 0);
    CHECK_STR(buf, "irq=msix vectors=5");
    /* a power cycle clears Message Control: set up again */
    int n0 = srv.nreq;
    CHECK_EQ(t->ops->reset(t), 0);
    CHECK_EQ(srv.req[n0].type, SB_RESET);
    CHECK_EQ(srv.req[n0].size, 0);
    CHECK_EQ(srv.req[srv.nreq - 1].type, SB_CFG_WRITE);
    CHECK_EQ(srv.msix_ctrl, SB_MSIX_ENABLE);
    /* a power cut: SB_RESET with SB_RESET_POWER_CUT, then MSI-X again */
    srv.msix_ctrl = 0;
    n0 = srv.nreq;
    CHECK_EQ(sl_transport_power_cut(t), 3);
    CHECK_EQ(srv.req[n0].type, SB_RESET);
    CHECK_EQ(srv.req[n0].size, SB_RESET_POWER_CUT);
    CHECK_EQ(srv.req[srv.nreq - 1].type, SB_CFG_WRITE);
    CHECK_EQ(srv.msix_ctrl, SB_MSIX_ENABLE);
    /* a retention bake: thousandths of an hour, range checked before anything is sent */
    n0 = srv.nreq;
    CHECK_EQ(sl_sim_bake(t, 8760000), 4);
    CHECK_EQ(srv.req[n0].type, SB_BAKE);
    CHECK_EQ(srv.req[n0].data, 8760000);
    CHECK_EQ(sl_sim_bake(t, 0), -EINVAL);
    CHECK_EQ(sl_sim_bake(t, 1000000001ull), -EINVAL);
    CHECK_EQ(srv.nreq, n0 + 1);
    /* pre-cycling: P/E cycles, range checked before anything is sent */
    n0 = srv.nreq;
    CHECK_EQ(sl_sim_precycle(t, 3000), 4);
    CHECK_EQ(srv.req[n0].type, SB_PRECYCLE);
    CHECK_EQ(srv.req[n0].data, 3000);
    CHECK_EQ(sl_sim_precycle(t, 0), -EINVAL);
    CHECK_EQ(sl_sim_precycle(t, 10000001ull), -EINVAL);
    CHECK_EQ(srv.nreq, n0 + 1);
    /* a grown bad block: the die's address in data, the block in addr */
    CHECK_EQ(sl_sim_bad_block(t, 1, 0, 0, 5), 1);
    CHECK_EQ(srv.req[srv.nreq - 1].type, SB_FAULT);
    CHECK_EQ(srv.req[srv.nreq - 1].addr, 5);
    CHECK_EQ(sl_sim_bad_block(t, 2, 0, 0, 5), -EINVAL);
    CHECK_EQ(sl_sim_bad_block(t, 1, 0, 0, 64), -EINVAL);
    CHECK_EQ(sl_sim_bad_block(t, 256, 0, 0, 5), -EINVAL);
    /* injected bit errors: parts per billion, range checked before anything is sent */
    CHECK_EQ(sl_sim_bit_errors(t, 1, 0, 0, 1000000), 1);
    CHECK_EQ(srv.req[srv.nreq - 1].size, SB_FAULT_BIT_ERRORS);
    CHECK_EQ(srv.req[srv.nreq - 1].addr, 1000000);
    CHECK_EQ(sl_sim_bit_errors(t, 2, 0, 0, 1000), -EINVAL);
    n0 = srv.nreq;
    CHECK_EQ(sl_sim_bit_errors(t, 1, 0, 0, 500000001ull), -EINVAL);
    CHECK_EQ(srv.nreq, n0);
    /* a die failure */
    CHECK_EQ(sl_sim_die_fail(t, 1, 0, 0), 1);
    CHECK_EQ(srv.req[srv.nreq - 1].size, SB_FAULT_DIE_FAIL);
    CHECK_EQ(sl_sim_die_fail(t, 2, 0, 0), -EINVAL);
    CHECK_EQ(sl_sim_die_fail(t, 1, 256, 0), -EINVAL);
    /* host link faults: kind in size, reads in data, the page's address in addr; kind and
     * count checked before anything is sent */
    CHECK_EQ(sl_sim_cpl_fault(t, SL_CPL_POISON, 3, 0x12345), 3);
    CHECK_EQ(srv.req[srv.nreq - 1].size, SB_FAULT_CPL_POISON);
    CHECK_EQ(srv.req[srv.nreq - 1].data, 3);
    CHECK_EQ(srv.req[srv.nreq - 1].addr, 0x12345);
    CHECK_EQ(sl_sim_cpl_fault(t, SL_CPL_TIMEOUT, 255, 0), 255);
    CHECK_EQ(srv.req[srv.nreq - 1].size, SB_FAULT_CPL_TIMEOUT);
    n0 = srv.nreq;
    CHECK_EQ(sl_sim_cpl_fault(t, SL_CPL_TIMEOUT, 0, 0), -EINVAL);
    CHECK_EQ(sl_sim_cpl_fault(t, SL_CPL_POISON, 256, 0), -EINVAL);
    CHECK_EQ(sl_sim_cpl_fault(t, (enum sl_cpl_fault)4, 1, 0), -EINVAL);
    CHECK_EQ(srv.nreq, n0);
    /* per-vector counts, several requests of SB_IRQ_COUNTS_MAX */
    uint64_t c[40] = {0};
    CHECK_EQ(sl_sim_irq_counts(t, 0, 40, c), 30);
    CHECK_EQ(c[0], 1);
    CHECK_EQ(c[23], 231);
    CHECK_EQ(c[29], 291);
    CHECK_EQ(c[30], 0);
    CHECK_EQ(sl_sim_irq_counts(t, 28, 1, c), 1);
    CHECK_EQ(c[0], 281);
    sl_transport_close(t);
    CHECK_EQ(srv.msix_ctrl, 0);             /* closing turns MSI-X off again */
    stop();
    /* a host without MSI-X */
    start(NULL);
    srv.msix_n = 5;
    run();
    srv.msix_ctrl = SB_MSIX_ENABLE;         /* left on by a previous host */
    setenv("SSDLAB_SIM_IRQ", "msi", 1);
    t = open_sim();
    unsetenv("SSDLAB_SIM_IRQ");
    if (t) {
        CHECK_EQ(t->n_vectors, srv.vectors);
        CHECK_EQ(srv.nreq, 3);              /* HELLO, the capability, MSI-X off */
        CHECK_EQ(srv.req[2].type, SB_CFG_WRITE);
        CHECK_EQ(srv.req[2].data, 0);
        sl_transport_close(t);
    }
    stop();
    /* a bad mode names the variable and the choices */
    start(NULL);
    run();
    setenv("SSDLAB_SIM_IRQ", "msi-x", 1);
    CHECK_EQ(sl_transport_open_sim(srv.sock, &t), -EINVAL);
    unsetenv("SSDLAB_SIM_IRQ");
    CHECK_STR(sl_transport_open_errmsg(), "SSDLAB_SIM_IRQ=msi-x: use msi or msix");
    stop();
}

static struct fake_dev dev;

static void driver_over_socket(int use_irq)
{
    start(&dev);
    dev.n_vectors = srv.vectors = 2;
    run();
    struct sl_transport *t = open_sim();
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.use_irq = use_irq;
    struct sl_ctrl *c = NULL;
    CHECK_EQ(sl_ctrl_open(t, &o, &c), 0);
    uint8_t buf[16 * 4096], back[sizeof(buf)];
    for (unsigned i = 0; i < 16; i++)
        sl_pattern_fill(5, 100 + i, buf + i * 4096, 4096);
    uint64_t t0 = sl_time_ns(c);
    CHECK_EQ(sl_write(c, 1, 100, 16, buf), 0);
    CHECK_EQ(sl_read(c, 1, 100, 16, back), 0);
    CHECK(!memcmp(buf, back, sizeof(buf)));
    CHECK(sl_time_ns(c) - t0 >= 2 * dev.cmd_ns);      /* simulated time passed */
    int waits = 0, msi = 0, dmaw = 0;
    for (int i = 0; i < srv.nreq; i++)
        if (srv.req[i].type == SB_WAIT) {
            waits++;
            msi += srv.req[i].size == SB_EV_MSI;
            dmaw += srv.req[i].size == SB_EV_DMA_WRITE;
        }
    CHECK(waits > 0);
    CHECK_EQ(use_irq ? msi : dmaw, waits);
    CHECK_EQ(sl_ctrl_close(c), 0);
    stop();
    fake_dev_fini(&dev);
}

static void driver_polled(void)
{
    driver_over_socket(0);
}

static void driver_interrupts(void)
{
    driver_over_socket(1);
}

TT_MAIN(TT_CASE(hello_and_ram), TT_CASE(mmio_framing), TT_CASE(wait_events),
        TT_CASE(harness_errors), TT_CASE(open_errors), TT_CASE(driver_polled),
        TT_CASE(driver_interrupts), TT_CASE(msix_setup))
