// SPDX-License-Identifier: BSD-2-Clause
// test_init.c - the driver against the scripted controller (fake_dev): bring-up register
// order as Linux does it, RDY timeouts, queue set-up, shutdown, I/O with PRPs, MDTS, async
// submission with queue wrap, interrupts, status and timeout errors.
#include <errno.h>
#include <stdlib.h>

#include "fake_dev.h"
#include "../../../sw/lib/src/sl_priv.h"
#include "tinytest.h"

#define RAM (64u << 20)

static struct fake_dev dev;

static struct sl_ctrl *open_ctrl(struct sl_ctrl_opts *o, int expect)
{
    struct sl_ctrl_opts def;
    if (!o) {
        sl_ctrl_opts_default(&def);
        o = &def;
    }
    struct sl_ctrl *c = NULL;
    int rc = sl_ctrl_open(fake_transport(&dev, RAM), o, &c);
    CHECK_EQ(rc, expect);
    if (rc != expect)
        fprintf(stderr, "sl_ctrl_open: %d %s\n", rc, sl_errmsg(c));
    return c;
}

static void init_register_order(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl *c = open_ctrl(NULL, 0);
    /* Linux: nvme_pci_configure_admin_queue -> nvme_disable_ctrl -> AQA/ASQ/ACQ ->
     * nvme_enable_ctrl (CC without EN, re-read CAP, CC with EN) -> nvme_wait_ready */
    const char *expect[] = {
        "R64 0x00 = 0x20020103ff",            /* CAP */
        "R32 0x08 = 0x10400",                   /* VS */
        "W32 0x14 = 0x0",                       /* CC.EN = 0 */
        "R32 0x1c = 0x0",                       /* CSTS.RDY = 0 */
        "W32 0x24 = 0x1f001f",                  /* AQA: 32 entries each */
        NULL,                                   /* ASQ low, high; ACQ low, high */
        NULL, NULL, NULL,
        "W32 0x14 = 0x460000",                  /* IOCQES 4, IOSQES 6, MPS 0, CSS NVM */
        "R64 0x00 = 0x20020103ff",
        "W32 0x14 = 0x460001",                  /* enable */
        "R32 0x1c = 0x1",                       /* ready */
    };
    int n = (int)(sizeof(expect) / sizeof(expect[0]));
    CHECK(dev.nlog >= n);
    for (int i = 0; i < n && i < dev.nlog; i++)
        if (expect[i] && strcmp(dev.log[i], expect[i])) {
            fprintf(stderr, "log[%d] = \"%s\", expected \"%s\"\n", i, dev.log[i], expect[i]);
            tt_failures++;
        }
    CHECK(!strncmp(dev.log[5], "W32 0x28 = ", 11));
    CHECK(!strncmp(dev.log[6], "W32 0x2c = ", 11));
    CHECK(!strncmp(dev.log[7], "W32 0x30 = ", 11));
    CHECK(!strncmp(dev.log[8], "W32 0x34 = ", 11));
    CHECK(dev.asq != 0 && dev.acq != 0 && dev.asq != dev.acq);
    /* then the admin commands: Identify Controller, Number of Queues, CQ 1, SQ 1, Identify
     * Namespace 1 */
    CHECK_EQ(dev.ncmds, 5);
    CHECK_EQ(dev.cmds[0].opc, NVME_ADMIN_IDENTIFY);
    CHECK_EQ(dev.cmds[0].cdw10, NVME_ID_CNS_CONTROLLER);
    CHECK_EQ(dev.cmds[1].opc, NVME_ADMIN_SET_FEATURES);
    CHECK_EQ(dev.cmds[1].cdw10, NVME_FEAT_NUMBER_OF_QUEUES);
    CHECK_EQ(dev.cmds[1].cdw11, 0);                     /* one queue, 0's based */
    CHECK_EQ(dev.cmds[2].opc, NVME_ADMIN_CREATE_IO_CQ);
    CHECK_EQ(dev.cmds[2].cdw10, (63u << 16) | 1);       /* 64 entries, qid 1 */
    CHECK_EQ(dev.cmds[2].cdw11, NVME_QUEUE_PHYS_CONTIG); /* polled: no IEN */
    CHECK_EQ(dev.cmds[3].opc, NVME_ADMIN_CREATE_IO_SQ);
    CHECK_EQ(dev.cmds[3].cdw11, (1u << 16) | NVME_QUEUE_PHYS_CONTIG);
    CHECK_EQ(dev.cmds[4].opc, NVME_ADMIN_IDENTIFY);
    CHECK_EQ(dev.cmds[4].cdw10, NVME_ID_CNS_NAMESPACE);
    struct sl_info info;
    sl_ctrl_info(c, &info);
    CHECK_STR(info.model, "ssdlab fake controller");
    CHECK_EQ(strlen(info.model), strlen("ssdlab fake controller"));  /* padding stripped */
    CHECK_EQ(info.lba_bytes, 4096);
    CHECK_EQ(info.ns_blocks, 2048);
    CHECK_EQ(info.max_transfer, 4096u << 5);
    CHECK_EQ(info.n_io_queues, 1);
    CHECK_EQ(info.io_depth, 64);
    if (tt_failures)
        fake_log_dump(&dev);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void init_rdy_timeout(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.rdy_never = 1;                  /* CAP.TO = 2: (2 + 1) / 2 = 1 s */
    uint64_t t0 = dev.now_ns;
    struct sl_ctrl *c = open_ctrl(NULL, -ETIMEDOUT);
    CHECK_STR(sl_errmsg(c), "device not ready; aborting initialisation after 1000 ms");
    CHECK_STR(sl_errmsg(c), "CSTS=0x0");
    uint64_t waited = dev.now_ns - t0;
    CHECK(waited >= 1000000000ull && waited < 1001000000ull);
    /* CSTS was polled every 100 us, not busy-read */
    int reads = 0;
    for (int i = 0; i < dev.nlog; i++)
        reads += !strncmp(dev.log[i], "R32 0x1c", 8);
    CHECK(reads > 100 && reads <= FAKE_LOG_MAX);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void disable_timeout(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.csts = 1;                       /* handed over enabled, and RDY never drops */
    dev.cc = 1;
    dev.rdy_stuck = 1;
    dev.cap |= 0xffull << 24;           /* CAP.TO = 255: 128 s */
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.ready_poll_ns = 10000000;         /* 10 ms, to keep the log short */
    struct sl_ctrl *c = open_ctrl(&o, -ETIMEDOUT);
    CHECK_STR(sl_errmsg(c), "aborting reset after 128000 ms");
    CHECK_STR(sl_errmsg(c), "CSTS=0x1");
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void bad_cap(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.cap &= ~(1ull << 37);           /* no NVM command set */
    struct sl_ctrl *c = open_ctrl(NULL, -ENOTSUP);
    CHECK_STR(sl_errmsg(c), "NVM command set is not supported");
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
    fake_dev_init(&dev, NULL, 0);
    dev.cap |= 1ull << 48;              /* MPSMIN 8 KiB */
    c = open_ctrl(NULL, -ENOTSUP);
    CHECK_STR(sl_errmsg(c), "MPSMIN");
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void shutdown_order(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.n_io_queues = 2;
    struct sl_ctrl *c = open_ctrl(&o, 0);
    int n0 = dev.ncmds, l0 = dev.nlog;
    CHECK_EQ(sl_ctrl_close(c), 0);
    /* every SQ is deleted before any CQ, then CC.SHN = 01b and CSTS.SHST = 10b is awaited */
    CHECK_EQ(dev.ncmds - n0, 4);
    CHECK_EQ(dev.cmds[n0 + 0].opc, NVME_ADMIN_DELETE_IO_SQ);
    CHECK_EQ(dev.cmds[n0 + 1].opc, NVME_ADMIN_DELETE_IO_SQ);
    CHECK_EQ(dev.cmds[n0 + 2].opc, NVME_ADMIN_DELETE_IO_CQ);
    CHECK_EQ(dev.cmds[n0 + 3].opc, NVME_ADMIN_DELETE_IO_CQ);
    int at = l0;
    CHECK(fake_log_find(&dev, "W32 0x14 = 0x464001", &at));
    CHECK(fake_log_find(&dev, "R32 0x1c = 0x9", &at));
    fake_dev_fini(&dev);
}

/* detach: the same queue deletions, then CC.EN = 0 and RDY = 0 awaited, no CC.SHN */
static void detach_disables(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.n_io_queues = 2;
    struct sl_ctrl *c = open_ctrl(&o, 0);
    int n0 = dev.ncmds, l0 = dev.nlog;
    CHECK_EQ(sl_ctrl_detach(c), 0);
    CHECK_EQ(dev.ncmds - n0, 4);
    CHECK_EQ(dev.cmds[n0 + 0].opc, NVME_ADMIN_DELETE_IO_SQ);
    CHECK_EQ(dev.cmds[n0 + 3].opc, NVME_ADMIN_DELETE_IO_CQ);
    int at = l0;
    CHECK(fake_log_find(&dev, "W32 0x14 = 0x460000", &at));
    CHECK(fake_log_find(&dev, "R32 0x1c = 0x0", &at));
    at = l0;
    CHECK(!fake_log_find(&dev, "W32 0x14 = 0x464001", &at));
    fake_dev_fini(&dev);
}

static void shutdown_timeout(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.shst_never = 1;                 /* SHST stays 01b (processing) */
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.ready_poll_ns = 10000000;
    struct sl_ctrl *c = open_ctrl(&o, 0);
    uint64_t t0 = dev.now_ns;
    CHECK_EQ(sl_ctrl_close(c), -ETIMEDOUT);         /* Linux's default: 5 s */
    CHECK_STR(sl_errmsg(NULL), "aborting shutdown after 5000 ms, CSTS=0x5");
    CHECK(dev.now_ns - t0 >= 5000000000ull && dev.now_ns - t0 < 5100000000ull);
    fake_dev_fini(&dev);
    fake_dev_init(&dev, NULL, 0);
    dev.shst_never = 1;
    dev.rtd3e = 8000000;                /* RTD3E 8 s: the longer bound wins */
    c = open_ctrl(&o, 0);
    t0 = dev.now_ns;
    CHECK_EQ(sl_ctrl_close(c), -ETIMEDOUT);
    CHECK(dev.now_ns - t0 >= 8000000000ull && dev.now_ns - t0 < 8100000000ull);
    fake_dev_fini(&dev);
}

static void queue_count_and_depth(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.nsqa = 1;                       /* the device grants 2 queues */
    dev.cap = (dev.cap & ~0xffffull) | 15;  /* MQES: 16 entries */
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.n_io_queues = 4;
    o.io_depth = 1024;
    struct sl_ctrl *c = open_ctrl(&o, 0);
    CHECK_EQ(dev.cmds[1].cdw11, 3u | (3u << 16));
    struct sl_info info;
    sl_ctrl_info(c, &info);
    CHECK_EQ(info.n_io_queues, 2);
    CHECK_EQ(info.io_depth, 16);
    CHECK(dev.sq[2].on && !dev.sq[3].on);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void rw_roundtrip(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl *c = open_ctrl(NULL, 0);
    size_t n = 100, bs = 4096;
    uint8_t *buf = malloc(n * bs), *back = malloc(n * bs);
    for (size_t i = 0; i < n; i++)
        sl_pattern_fill(3, 10 + i, buf + i * bs, bs);
    /* 100 blocks > MDTS (32 blocks): split into 4 commands, each with a PRP list */
    int cmds0 = dev.ncmds;
    CHECK_EQ(sl_write(c, 1, 10, (uint32_t)n, buf), 0);
    CHECK_EQ(dev.ncmds - cmds0, 4);
    CHECK(!memcmp(dev.media + 10 * bs, buf, n * bs));
    CHECK_EQ(sl_read(c, 1, 10, (uint32_t)n, back), 0);
    CHECK(!memcmp(back, buf, n * bs));
    /* single block, two blocks (PRP2 as a pointer), flush, write zeroes, trim */
    CHECK_EQ(sl_read(c, 1, 11, 1, back), 0);
    CHECK_EQ(sl_pattern_check(3, 11, back, bs), (unsigned long long)-1);
    CHECK_EQ(sl_read(c, 1, 11, 2, back), 0);
    CHECK_EQ(sl_pattern_check(3, 12, back + bs, bs), (unsigned long long)-1);
    CHECK_EQ(sl_flush(c, 1), 0);
    CHECK_EQ(sl_write_zeroes(c, 1, 10, 2), 0);
    CHECK_EQ(sl_read(c, 1, 10, 3, back), 0);
    CHECK_EQ(back[0] | back[bs + 5], 0);
    CHECK_EQ(sl_pattern_check(3, 12, back + 2 * bs, bs), (unsigned long long)-1);
    CHECK_EQ(sl_trim(c, 1, 12, 5), 0);
    CHECK_EQ(sl_read(c, 1, 12, 1, back), 0);
    CHECK_EQ(back[100], 0);
    CHECK_EQ(sl_pattern_check(3, 17, dev.media + 17 * bs, bs), (unsigned long long)-1);
    /* admin: SMART log, format */
    struct nvme_smart_log smart;
    CHECK_EQ(sl_get_log_page(c, 0xffffffffu, NVME_LOG_SMART_HEALTH, &smart, sizeof(smart)), 0);
    CHECK_EQ(smart.temperature[0] | (smart.temperature[1] << 8), 315);
    CHECK(smart.host_writes[0] >= 4);
    CHECK_EQ(sl_format(c, 1, 0, 1), 0);
    CHECK_EQ(sl_read(c, 1, 20, 1, back), 0);
    CHECK_EQ(back[7], 0);
    free(buf);
    free(back);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void mdts_limit(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.mdts = 1;                       /* 8 KiB */
    struct sl_ctrl *c = open_ctrl(NULL, 0);
    struct sl_dma d;
    CHECK_EQ(sl_dma_alloc(c, 16384, &d), 0);
    CHECK_EQ(sl_submit_rw(c, 1, 0, 0, 3, &d, 0, NULL, NULL), -E2BIG);
    CHECK_STR(sl_errmsg(c), "exceeds the maximum transfer (MDTS) of 8192 bytes");
    CHECK_EQ(sl_submit_rw(c, 1, 0, 0, 2, &d, 0, NULL, NULL), 0);
    CHECK_EQ(sl_submit_rw(c, 1, 0, 0, 4, &d, 0, NULL, NULL), -E2BIG);
    CHECK_EQ(sl_wait(c, 1, 1, 1000000), 1);
    /* buffer bounds */
    CHECK_EQ(sl_submit_rw(c, 1, 0, 0, 2, &d, 12288, NULL, NULL), -EINVAL);
    CHECK_STR(sl_errmsg(c), "outside the DMA buffer");
    sl_dma_free(c, &d);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static struct sl_cpl cpls[64];
static int ncpl;

static void cb(const struct sl_cpl *cpl, void *user)
{
    (void)user;
    if (ncpl < 64)
        cpls[ncpl++] = *cpl;
}

static void async_wrap(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.io_depth = 4;                     /* 3 commands in flight at most */
    struct sl_ctrl *c = open_ctrl(&o, 0);
    struct sl_dma d;
    CHECK_EQ(sl_dma_alloc(c, 4 * 4096, &d), 0);
    ncpl = 0;
    for (int round = 0; round < 5; round++) {
        for (int i = 0; i < 3; i++)
            CHECK_EQ(sl_submit_rw(c, 1, 1, (uint64_t)(round * 3 + i), 1, &d, (size_t)i * 4096,
                                  cb, (void *)(intptr_t)(round * 3 + i + 1)), 0);
        CHECK_EQ(sl_submit_rw(c, 1, 1, 99, 1, &d, 0, cb, NULL), -EBUSY);
        CHECK_EQ(sl_inflight(c, 1), 3);
        CHECK_EQ(sl_wait(c, 1, 3, 1000000000ull), 3);
        CHECK_EQ(sl_inflight(c, 1), 0);
    }
    CHECK_EQ(ncpl, 15);
    for (int i = 0; i < ncpl; i++) {
        CHECK_EQ(cpls[i].status, 0);
        CHECK_EQ((intptr_t)cpls[i].user, i + 1);
        CHECK(cpls[i].complete_ns > cpls[i].submit_ns);
        CHECK(cpls[i].complete_ns - cpls[i].submit_ns >= dev.cmd_ns);
    }
    /* 15 completions on a 4-entry CQ: wrapped 3 times, phase now flipped */
    CHECK_EQ(c->q[1].ring.cq_head, 15 % 4);
    CHECK_EQ(c->q[1].ring.cq_phase, 0);
    /* sl_queue + one sl_ring: one doorbell for two commands */
    dev.log_doorbells = 1;
    int l0 = dev.nlog;
    CHECK_EQ(sl_queue(c, 1, &(struct nvme_sqe){.opc = NVME_CMD_FLUSH, .nsid = 1}, NULL, 0, 0,
                      cb, NULL), 0);
    CHECK_EQ(sl_queue(c, 1, &(struct nvme_sqe){.opc = NVME_CMD_FLUSH, .nsid = 1}, NULL, 0, 0,
                      cb, NULL), 0);
    CHECK_EQ(dev.nlog, l0);
    CHECK_EQ(sl_ring(c, 1), 0);
    CHECK_EQ(dev.nlog, l0 + 1);
    CHECK_EQ(sl_wait(c, 1, 2, 1000000000ull), 2);
    sl_dma_free(c, &d);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void interrupts(void)
{
    fake_dev_init(&dev, NULL, 0);
    dev.n_vectors = 3;
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.use_irq = 1;
    o.n_io_queues = 3;
    struct sl_ctrl *c = open_ctrl(&o, 0);
    /* I/O CQs get vectors 1, 2, then 1 again (vector 0 is the admin queue's) */
    CHECK_EQ(dev.cq[1].iv, 1);
    CHECK_EQ(dev.cq[2].iv, 2);
    CHECK_EQ(dev.cq[3].iv, 1);
    CHECK(dev.cq[1].ien && dev.cq[3].ien);
    uint8_t buf[4096];
    memset(buf, 0x5a, sizeof(buf));
    for (unsigned q = 1; q <= 3; q++) {
        CHECK_EQ(sl_write(c, q, q, 1, buf), 0);
        CHECK_EQ(dev.media[q * 4096 + 9], 0x5a);
    }
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void nvme_errors(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl *c = open_ctrl(NULL, 0);
    uint8_t buf[8192];
    int rc = sl_read(c, 1, 2047, 2, buf);
    CHECK_EQ(rc, NVME_SC_LBA_OUT_OF_RANGE);
    CHECK_STR(sl_errmsg(c), "Read (queue 1): LBA Out of Range (SCT 0 SC 80h)");
    dev.force_status = NVME_STATUS(2, 0x81) | NVME_STATUS_DNR;
    rc = sl_read(c, 1, 0, 1, buf);
    CHECK_EQ(rc, NVME_STATUS(2, 0x81) | NVME_STATUS_DNR);
    CHECK_STR(sl_errmsg(c), "Unrecovered Read Error (SCT 2 SC 81h) DNR");
    struct nvme_sqe cmd = {.opc = NVME_ADMIN_IDENTIFY, .nsid = 5, .cdw10 = NVME_ID_CNS_NAMESPACE};
    CHECK_EQ(sl_admin(c, &cmd, buf, 4096, NULL), NVME_SC_INVALID_NAMESPACE);
    CHECK_STR(sl_errmsg(c), "Identify (queue 0): Invalid Namespace or Format");
    CHECK_EQ(sl_read(c, 7, 0, 1, buf), -EINVAL);
    CHECK_STR(sl_errmsg(c), "no I/O queue 7");
    /* the queue still works after errors */
    CHECK_EQ(sl_read(c, 1, 0, 1, buf), 0);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void io_timeout(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.io_timeout_ns = 5000000;          /* 5 ms */
    struct sl_ctrl *c = open_ctrl(&o, 0);
    dev.lose_io = 1;
    uint8_t buf[4096];
    uint64_t t0 = dev.now_ns;
    CHECK_EQ(sl_read(c, 1, 0, 1, buf), -ETIMEDOUT);
    CHECK_STR(sl_errmsg(c), "Read (queue 1, CID 0): no completion within 5000000 ns");
    CHECK(dev.now_ns - t0 >= 5000000 && dev.now_ns - t0 < 6000000);
    /* a completion that comes after the timeout is reaped without calling back into the
     * returned sl_read (ASan would see the stack use), and its CID is freed then */
    dev.lose_io = 0;
    dev.late_io_ns = 8000000;           /* 8 ms: after the 5 ms timeout */
    CHECK_EQ(sl_read(c, 1, 0, 1, buf), -ETIMEDOUT);
    CHECK_EQ(sl_inflight(c, 1), 2);
    dev.late_io_ns = 0;
    CHECK_EQ(sl_wait(c, 1, 1, 10000000), 1);        /* the late one */
    CHECK_EQ(sl_inflight(c, 1), 1);                 /* the lost one stays */
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

/* A Write that timed out still owns its data: the device may read it late. The next
 * command gets another bounce buffer, so the late Write stores its own data, not the next
 * command's; the late completion frees the retired buffer. */
static void late_write_keeps_its_buffer(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl_opts o;
    sl_ctrl_opts_default(&o);
    o.io_timeout_ns = 5000000;          /* 5 ms */
    struct sl_ctrl *c = open_ctrl(&o, 0);
    struct sl_info info;
    sl_ctrl_info(c, &info);
    size_t n = info.lba_bytes;
    CHECK(n <= 4096);
    static uint8_t x[4096], y[4096], got[4096];
    memset(x, 0x11, sizeof(x));
    memset(y, 0x22, sizeof(y));
    dev.late_io_ns = 8000000;           /* the device takes the Write after the timeout */
    CHECK_EQ(sl_write(c, 1, 0, 1, x), -ETIMEDOUT);
    dev.late_io_ns = 0;
    CHECK_EQ(sl_write(c, 1, 8, 1, y), 0);           /* meanwhile, the next Write */
    CHECK_EQ(sl_inflight(c, 1), 0);                 /* the late one completed meanwhile */
    CHECK_EQ(sl_read(c, 1, 0, 1, got), 0);
    CHECK(memcmp(got, x, n) == 0);                  /* its own data, not the next Write's */
    CHECK_EQ(sl_read(c, 1, 8, 1, got), 0);
    CHECK(memcmp(got, y, n) == 0);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

static void bench(void)
{
    fake_dev_init(&dev, NULL, 0);
    struct sl_ctrl *c = open_ctrl(NULL, 0);
    struct sl_bench_opts o = {.write = 1, .random = 0, .io_blocks = 2, .qd = 8, .n_ios = 100,
                              .lba_first = 100, .lba_count = 64, .seed = 3};
    struct sl_bench_result r;
    CHECK_EQ(sl_bench(c, &o, &r), 0);
    CHECK_EQ(r.ios, 100);
    CHECK_EQ(r.bytes, 100 * 2 * 4096);
    CHECK_EQ(r.errors, 0);
    CHECK(r.elapsed_ns > 0);
    CHECK(r.lat_min_ns >= dev.cmd_ns);
    CHECK(r.lat_min_ns <= r.lat_p50_ns && r.lat_p50_ns <= r.lat_p99_ns &&
          r.lat_p99_ns <= r.lat_p999_ns && r.lat_p999_ns <= r.lat_max_ns);
    CHECK(r.lat_mean_ns >= r.lat_min_ns && r.lat_mean_ns <= r.lat_max_ns);
    /* sequential writes covered the region with the per-LBA pattern, nothing outside it */
    for (uint64_t lba = 100; lba < 164; lba++)
        CHECK_EQ(sl_pattern_check(3, lba, dev.media + lba * 4096, 4096), (unsigned long long)-1);
    CHECK_EQ(dev.media[164 * 4096], 0);
    CHECK_EQ(dev.media[99 * 4096 + 4095], 0);
    /* QD 8 overlaps commands (fake_dev serves a doorbell's batch together); QD 1 does not */
    struct sl_bench_result r1;
    o.qd = 1;
    o.write = 0;
    o.random = 1;
    CHECK_EQ(sl_bench(c, &o, &r1), 0);
    CHECK_EQ(r1.ios, 100);
    CHECK(r1.elapsed_ns > r.elapsed_ns);
    CHECK(r1.elapsed_ns >= 100 * dev.cmd_ns);           /* one at a time */
    CHECK(r.elapsed_ns < 100 * dev.cmd_ns / 4);         /* eight at a time */
    /* errors are counted with the first status */
    o.lba_count = 0;
    o.lba_first = 2047;
    o.io_blocks = 1;
    dev.force_status = NVME_STATUS(2, 0x81);
    CHECK_EQ(sl_bench(c, &o, &r), 0);
    CHECK_EQ(r.errors, 1);
    CHECK_EQ(r.first_error, NVME_STATUS(2, 0x81));
    /* The deepest QD the queue holds (63 of 64 entries) while the device reports its SQ head
     * one entry late: the ring looks full with commands completed; the host waits for a
     * completion that moves the head instead of failing part-way. */
    dev.sq_head_lag = 1;
    o.qd = 63;
    o.n_ios = 300;
    CHECK_EQ(sl_bench(c, &o, &r), 0);
    CHECK_EQ(r.ios, 300);
    CHECK_EQ(r.errors, 0);
    dev.sq_head_lag = 0;
    o.n_ios = 100;
    /* bad options */
    o.qd = 64;
    CHECK_EQ(sl_bench(c, &o, &r), -EINVAL);
    CHECK_STR(sl_errmsg(c), "QD 64 needs a queue deeper than 64");
    o.qd = 1;
    o.io_blocks = 64;
    o.lba_first = 0;
    CHECK_EQ(sl_bench(c, &o, &r), -E2BIG);
    sl_ctrl_close(c);
    fake_dev_fini(&dev);
}

TT_MAIN(TT_CASE(init_register_order), TT_CASE(init_rdy_timeout), TT_CASE(disable_timeout),
        TT_CASE(bad_cap), TT_CASE(shutdown_order), TT_CASE(detach_disables),
        TT_CASE(shutdown_timeout), TT_CASE(queue_count_and_depth),
        TT_CASE(rw_roundtrip), TT_CASE(mdts_limit), TT_CASE(async_wrap), TT_CASE(interrupts),
        TT_CASE(nvme_errors), TT_CASE(io_timeout), TT_CASE(late_write_keeps_its_buffer),
        TT_CASE(bench))
