/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * test_fw.c - host unit tests of the firmware (sw/firmware) on the mock HAL. One program,
 * one test per argument: `test_fw <name> [seed]`; exit 0 on pass. test_firmware.py runs
 * them. A shadow copy of the namespace is the reference for every read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mock_hal.h"
#include "fw.h"
#include "ftl.h"

#define CHECK(cond, ...) do { if (!(cond)) { fail_at(__LINE__, #cond, __VA_ARGS__); } } while (0)

static unsigned seed = 1;
static const char *test_name = "?";

static void fail_at(int line, const char *cond, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "FAIL %s (seed %u) line %d: %s: ", test_name, seed, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  replay: test_fw %s %u\n", test_name, seed);
    exit(1);
}

/* xorshift64* */
static uint64_t rng_state;
static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 2685821657736338717ull;
}

/* --- drive set-up ------------------------------------------------------------------------ */

static struct mock_cfg cfg_default(void)
{
    return (struct mock_cfg){
        .n_channels = 2, .n_ways = 2, .planes = 2, .page_bytes = 8192, .spare_bytes = 448,
        .pages_per_block = 16, .blocks_per_plane = 32, .tag_width = 4, .max_transfer = 32768,
        .lbads = 9, .buf_slots = 256, .n_io_queues = 8, .fw_bufs = 2, .flash_queue = 64,
        .onfi_ok = true,
    };
}

static struct mock_cfg cfg;
static uint8_t *shadow;         /* the namespace as the host wrote it */
static uint64_t ns_bytes, lba_bytes;
static uint32_t hs;             /* slots per tag */

static void boot(void)
{
    CHECK(fw_init(), "fw_init failed");
    ns_bytes = F.ns_lbas << cfg.lbads;
    lba_bytes = 1u << cfg.lbads;
    hs = cfg.max_transfer / SLOT_BYTES;
    CHECK(mock_ns_lbas == F.ns_lbas, "hal_ns_size %llu != %llu",
          (unsigned long long)mock_ns_lbas, (unsigned long long)F.ns_lbas);
}

static void setup(struct mock_cfg c)
{
    cfg = c;
    mock_init(&cfg);
    boot();
    shadow = calloc(1, ns_bytes);
}

/* --- admin helpers --------------------------------------------------------------------- */

static uint16_t next_cid = 1;

static struct mock_cpl admin_on(uint16_t sqid, uint32_t dw[16])
{
    dw[0] = (dw[0] & 0xFFFF) | (uint32_t)next_cid << 16;
    uint16_t cid = next_cid++;
    mock_push_cmd(sqid, dw);
    struct mock_cpl c;
    for (int i = 0; i < 1000; i++) {
        fw_poll();
        if (mock_pop_cpl(&c)) {
            CHECK(c.cid == cid, "completion cid %u for command %u", c.cid, cid);
            return c;
        }
    }
    CHECK(0, "no completion for opcode %02x", dw[0] & 0xFF);
    return c;
}

static struct mock_cpl admin(uint32_t dw[16])
{
    return admin_on(0, dw);
}

#define SQE(...) ((uint32_t[16]){ __VA_ARGS__ })
#define HOST_DATA 0x10000u      /* host buffer for PRP1 */

static struct mock_cpl id_cmd(uint32_t cns, uint32_t nsid)
{
    memset(mock_host + HOST_DATA, 0xEE, 4096);
    uint32_t *d = SQE(0x06, nsid);
    d[6] = HOST_DATA;
    d[10] = cns;
    return admin(d);
}

static uint64_t le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static struct mock_cpl get_log(uint32_t lid, uint32_t bytes, uint64_t offset, bool rae)
{
    uint32_t numd = bytes / 4 - 1;
    memset(mock_host + HOST_DATA, 0xEE, bytes + 64);
    uint32_t *d = SQE(0x02, NVME_NSID_ALL);
    d[6] = HOST_DATA;
    d[8] = HOST_DATA + 4096;
    d[10] = lid | (uint32_t)rae << 15 | (numd & 0xFFFF) << 16;
    d[11] = numd >> 16;
    d[12] = (uint32_t)offset;
    d[13] = (uint32_t)(offset >> 32);
    return admin(d);
}

static uint64_t vendor(int off)
{
    struct mock_cpl c = get_log(0xC0, 512, 0, false);
    CHECK(c.status == 0, "log C0h status %x", c.status);
    return le(mock_host + HOST_DATA + off, 8);
}

/* --- I/O helpers ------------------------------------------------------------------------- */

static uint8_t *tag_buf(uint8_t tag)
{
    return (uint8_t *)hal_buf() + (size_t)tag * hs * SLOT_BYTES;
}

static uint32_t inflight;
static uint16_t last_status[256];
static bool tag_busy[256];
struct rd { uint64_t slba; uint32_t nlb; bool check; };
static struct rd rds[256];
static uint64_t io_polls, io_count;

static void reap(void)
{
    uint8_t t;
    uint16_t st;
    while (mock_pop_be_cpl(&t, &st)) {
        CHECK(tag_busy[t], "completion of idle tag %u", t);
        tag_busy[t] = false;
        last_status[t] = st;
        inflight--;
        if (rds[t].check) {
            rds[t].check = false;
            CHECK(st == 0, "read status %x", st);
            uint64_t off = rds[t].slba * lba_bytes;
            uint32_t n = rds[t].nlb * (uint32_t)lba_bytes;
            if (memcmp(tag_buf(t), shadow + off, n)) {
                uint32_t i = 0;
                while (tag_buf(t)[i] == shadow[off + i])
                    i++;
                CHECK(0, "data mismatch: LBA %llu + byte %u: got %02x want %02x (unit %llu)",
                      (unsigned long long)rds[t].slba, i, tag_buf(t)[i], shadow[off + i],
                      (unsigned long long)((off + i) / 4096));
            }
        }
    }
}

/* Called after every poll of drain and free_tag when set (a test's invariant). */
static void (*poll_check)(void);

static void drain(void)
{
    for (uint64_t i = 0; inflight; i++) {
        fw_poll();
        if (poll_check)
            poll_check();
        io_polls++;
        reap();
        CHECK(i < 100000, "%u requests never completed", inflight);
    }
}

static uint8_t free_tag(uint32_t qd)
{
    for (;;) {
        if (inflight < qd)
            for (uint32_t t = 0; t < (1u << cfg.tag_width); t++)
                if (!tag_busy[t])
                    return (uint8_t)t;
        fw_poll();
        if (poll_check)
            poll_check();
        io_polls++;
        reap();
    }
}

static void fill_pattern(uint8_t *p, uint64_t n, uint64_t key)
{
    uint64_t s = key * 0x9E3779B97F4A7C15ull + 1;
    for (uint64_t i = 0; i < n; i += 8) {
        s ^= s << 13; s ^= s >> 7; s ^= s << 17;
        memcpy(p + i, &s, n - i < 8 ? n - i : 8);
    }
}

/* Write nlb LBAs at slba with a seeded pattern (into the shadow too), up to qd in flight. */
static void wr(uint64_t slba, uint32_t nlb, uint64_t key, uint32_t qd, uint16_t flags)
{
    uint8_t t = free_tag(qd);
    fill_pattern(tag_buf(t), nlb * lba_bytes, key);
    memcpy(shadow + slba * lba_bytes, tag_buf(t), nlb * lba_bytes);
    tag_busy[t] = true;
    inflight++;
    io_count++;
    mock_push_be(t, 0x01, slba, (uint16_t)(nlb - 1), flags, 1);
    if (qd == 1)
        drain();
}

static void rd(uint64_t slba, uint32_t nlb, uint32_t qd)
{
    uint8_t t = free_tag(qd);
    memset(tag_buf(t), 0xC3, nlb * lba_bytes);
    rds[t] = (struct rd){ slba, nlb, true };
    tag_busy[t] = true;
    inflight++;
    io_count++;
    mock_push_be(t, 0x02, slba, (uint16_t)(nlb - 1), 0, 1);
    if (qd == 1)
        drain();
}

static uint8_t raw_tag;         /* raw_io's last request */

static uint16_t raw_io(uint8_t opc, uint64_t slba, uint32_t nlb, uint32_t nsid)
{
    uint8_t t = raw_tag = free_tag(1);
    tag_busy[t] = true;
    inflight++;
    mock_push_be(t, opc, slba, (uint16_t)(nlb - 1), 0, nsid);
    drain();
    return last_status[t];
}

static void flush(void)
{
    CHECK(raw_io(0x00, 0, 1, 1) == 0, "flush failed");
}

static void verify_all(uint32_t chunk_lbas, uint32_t qd)
{
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += chunk_lbas)
        rd(l, (uint32_t)(n - l < chunk_lbas ? n - l : chunk_lbas), qd);
    drain();
}

static void deallocate(uint64_t slba, uint32_t nlb)
{
    uint32_t range[4] = { 0, nlb, (uint32_t)slba, (uint32_t)(slba >> 32) };
    memcpy(mock_host + HOST_DATA, range, 16);
    uint32_t *d = SQE(0x09, 1);
    d[6] = HOST_DATA;
    d[10] = 0;
    d[11] = 0x4;
    struct mock_cpl c = admin_on(1, d);
    CHECK(c.status == 0, "DSM status %x", c.status);
    memset(shadow + slba * lba_bytes, 0, nlb * lba_bytes);
}

static void create_io_queue_pair(void)
{
    uint32_t *d = SQE(0x05);
    d[6] = 0x100000;
    d[10] = 1 | 63u << 16;
    d[11] = 1 | 2;
    CHECK(admin(d).status == 0, "create CQ");
    d = SQE(0x01);
    d[6] = 0x200000;
    d[10] = 1 | 63u << 16;
    d[11] = 1 | 1u << 16;
    CHECK(admin(d).status == 0, "create SQ");
}

static uint32_t spu(void)
{
    return 4096u >> cfg.lbads;
}

/* --- tests ------------------------------------------------------------------------------ */

static void t_identify(void)
{
    setup(cfg_default());
    CHECK(mock_stats.resets == 4 && mock_stats.read_params == 1, "bring-up resets %llu",
          (unsigned long long)mock_stats.resets);
    CHECK(mock_stats.set_features == 4 && mock_stats.timing_mode == 5, "SET FEATURES / mode");
    struct mock_cpl c = id_cmd(1, 0);
    uint8_t *p = mock_host + HOST_DATA;
    CHECK(c.status == 0, "identify controller %x", c.status);
    CHECK(le(p, 2) == 0x1D1D && p[77] == 3 && le(p + 80, 4) == 0x10400, "vid/mdts/ver");
    CHECK(p[512] == 0x66 && p[513] == 0x44 && le(p + 516, 4) == 1, "sqes/cqes/nn");
    CHECK(le(p + 520, 2) == 0x0C && p[525] == 1 && p[258] == 3 && p[259] == 3, "oncs/vwc");
    CHECK(le(p + 280, 8) == (uint64_t)F.user_units * 4096, "tnvmcap");
    CHECK(!memcmp(p + 24, "ssdlab NVMe controller  ", 24), "mn");
    CHECK(!memcmp(p + 64, "1234abcd", 8), "fr from git hash");
    /* SUBNQN (NVMe 1.4 7.9): prefix, VID SSVID, SN, MN, NUL padded */
    static const char nqn[] = "nqn.2014-08.org.nvmexpress:1d1d1d1dSSDLAB0001          "
                              "ssdlab NVMe controller                  ";
    CHECK(!memcmp(p + 768, nqn, sizeof nqn - 1) && p[768 + sizeof nqn - 1] == 0 &&
          p[1023] == 0, "subnqn '%.*s'", (int)sizeof nqn, (const char *)p + 768);
    c = id_cmd(0, 1);
    CHECK(c.status == 0 && le(p, 8) == F.ns_lbas && le(p + 8, 8) == F.ns_lbas, "nsze");
    CHECK(p[130] == 9 && p[25] == 0 && (p[33] & 7) == 1, "lbads / nlbaf / dlfeat");
    CHECK(F.ns_lbas == (uint64_t)F.user_units * 8, "namespace = user units");
    /* over-provisioning at least ftl_config's 7 % of the raw capacity */
    CHECK(F.user_units <= F.raw_units * 93 / 100, "op: user %u raw %u", F.user_units,
          F.raw_units);
    c = id_cmd(2, 0);
    CHECK(c.status == 0 && le(p, 4) == 1 && le(p + 4, 4) == 0, "active ns list");
    c = id_cmd(2, 1);
    CHECK(c.status == 0 && le(p, 4) == 0, "active ns list after 1");
    CHECK(id_cmd(2, 0xFFFFFFFF).status == NVME_SC_INVALID_NAMESPACE, "ns list nsid FFFFFFFF");
    c = id_cmd(3, 1);
    CHECK(c.status == 0 && p[0] == 1 && p[1] == 8, "ns descriptor list");
    CHECK(id_cmd(0, 2).status == NVME_SC_INVALID_NAMESPACE, "identify ns 2");
    /* ssdlab's fault injection: unarmed, or an unknown fault, is an Invalid Field */
    CHECK(admin(SQE(0xC1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NVME_FAULT_FIRMWARE_PANIC)).status ==
          NVME_SC_INVALID_FIELD, "fault unarmed");
    CHECK(admin(SQE(0xC1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 99, 0, NVME_FAULT_ARM)).status ==
          NVME_SC_INVALID_FIELD, "unknown fault");
    CHECK(!mock_stats.fatal, "CFS set");
    /* the NAND emulator's faults on a build without it (this one): Invalid Field */
    for (uint32_t f = NVME_FAULT_NAND_BAD_BLOCK; f <= NVME_FAULT_NAND_PE_LIMIT; f++)
        CHECK(admin(SQE(0xC1, 0, 0, 0, 0, 0, 0, 0, 0, 0, f, 0, NVME_FAULT_ARM, 0, 4, 10))
              .status == NVME_SC_INVALID_FIELD, "NAND fault %u without the emulator", f);
    CHECK(mock_stats.emu_calls == 0 && mock_stats.emu_pe_limit == 0, "emulator touched");
    CHECK(id_cmd(0x10, 0).status == NVME_SC_INVALID_FIELD, "cns 10h");
    uint32_t *d = SQE(0x7F);
    CHECK(admin(d).status == NVME_SC_INVALID_OPCODE, "admin opcode 7Fh");
    d = SQE(0x18);
    CHECK(admin(d).status == 0, "keep alive");
}

/* A build with NV-DDR2: after the SDR bring-up every die gets SET FEATURES with the NV-DDR2
 * interface bits, the engines switch and every die's parameter page is read back; a board
 * whose read capture fails goes back to SDR (SET FEATURES again, engines off). */
static void t_bringup_nvddr2(void)
{
    struct mock_cfg c = cfg_default();
    c.nvddr2_mode = 4;
    setup(c);
    CHECK(mock_stats.set_features == 8 && mock_stats.features_p1 == 0x24,
          "NV-DDR2 SET FEATURES %llu P1 %x", (unsigned long long)mock_stats.set_features,
          mock_stats.features_p1);
    CHECK(mock_stats.nvddr2 && mock_stats.nvddr2_switches == 1, "engines switched");
    CHECK(mock_stats.dqs_calibrations == 1, "DQS calibration after the switch");
    CHECK(mock_stats.read_params == 1 + 4 && mock_stats.timing_mode == 5, "read back");
    CHECK(mock_ns_lbas != 0, "namespace with NV-DDR2");

    c.nvddr2_broken = true;
    free(shadow);
    mock_free();
    setup(c);
    CHECK(mock_stats.set_features == 12 && mock_stats.features_p1 == 5,
          "back to SDR: SET FEATURES %llu P1 %x", (unsigned long long)mock_stats.set_features,
          mock_stats.features_p1);
    CHECK(!mock_stats.nvddr2 && mock_stats.nvddr2_switches == 2, "engines back to SDR");
    CHECK(mock_ns_lbas != 0, "namespace in SDR after the fallback");

    /* A channel without a read window: back to SDR before any parameter page is read. */
    c.nvddr2_broken = false;
    c.dqs_cal_fail = true;
    free(shadow);
    mock_free();
    setup(c);
    CHECK(!mock_stats.nvddr2 && mock_stats.nvddr2_switches == 2 &&
          mock_stats.features_p1 == 5 && mock_stats.read_params == 1, "no eye: SDR");
}

static void t_bringup_fail(void)
{
    struct mock_cfg c = cfg_default();
    c.onfi_ok = false;
    cfg = c;
    mock_init(&cfg);
    CHECK(!fw_init(), "fw_init must fail without an ONFI parameter page");
    CHECK(mock_stats.set_features == 0, "no SET FEATURES without a parameter page");
    CHECK(mock_ns_lbas == 0, "namespace size 0 without flash");
    /* the loop still serves admin commands; I/O gets LBA Out of Range; shutdown completes
     * without touching the flash */
    hs = cfg.max_transfer / SLOT_BYTES;
    lba_bytes = 512;
    CHECK(id_cmd(1, 0).status == 0, "identify controller without flash");
    CHECK(raw_io(0x02, 0, 1, 1) == NVME_SC_LBA_OUT_OF_RANGE, "read without flash");
    uint64_t p0 = mock_stats.programs + mock_stats.erases;
    mock_set_shutdown(1);
    fw_poll();
    CHECK(mock_shutdown_done() && mock_stats.programs + mock_stats.erases == p0,
          "shutdown without flash");
}

/* flash.c completes each op through the function its client gave flash_tag_get, with the
 * client's context, once, from flash_poll, in order per die; fail when the op failed (FAIL)
 * or the back end refused it; the tag is free afterwards. */
struct cb_call { uint32_t a, b; bool fail; };
static struct cb_call cb_log[8];
static uint32_t cb_n;

static void cb_record(uint32_t a, uint32_t b, bool fail)
{
    if (cb_n < 8)
        cb_log[cb_n] = (struct cb_call){ a, b, fail };
    cb_n++;
}

static void t_flash_cb(void)
{
    setup(cfg_default());
    while (flash_inflight())
        flash_poll();
    uint32_t die = 1, free_blk = F.nblk;
    for (uint32_t k = 0; k < F.nblk && free_blk == F.nblk; k++)
        if (F.blk[bidx(die, k)].state == BLK_FREE)
            free_blk = k;
    CHECK(free_blk < F.nblk, "a free block on die %u", die);
    struct hal_flash_op ops[3] = {
        { .op = FLASH_RESET, .plane_mask = 1 },
        { .op = FLASH_READ, .plane_mask = 0 },                  /* refused: no plane */
        { .op = FLASH_ERASE, .plane_mask = (uint8_t)((1u << F.planes) - 1),
          .block = (uint16_t)(free_blk << F.plane_bits) },      /* FAIL status */
    };
    mock_fail_next_erase(die, free_blk << F.plane_bits);
    cb_n = 0;
    for (uint32_t i = 0; i < 3; i++) {
        flash_op_addr(&ops[i], die);
        ops[i].tag = flash_tag_get(cb_record, 0x1000 + i, 7 * i);
        flash_push(&ops[i]);
    }
    CHECK(flash_inflight() == 3 && cb_n == 0, "%u tags, %u calls before flash_poll",
          flash_inflight(), cb_n);
    while (flash_inflight())
        flash_poll();
    CHECK(cb_n == 3, "%u completion calls for 3 ops", cb_n);
    for (uint32_t i = 0; i < 3; i++)
        CHECK(cb_log[i].a == 0x1000 + i && cb_log[i].b == 7 * i && cb_log[i].fail == (i > 0),
              "call %u: a %x b %u fail %d", i, cb_log[i].a, cb_log[i].b, cb_log[i].fail);
    /* the FTL's own ops still complete through theirs: a whole drive written and read back */
    for (uint64_t l = 0; l < F.ns_lbas; l += 64)
        wr(l, (uint32_t)(F.ns_lbas - l < 64 ? F.ns_lbas - l : 64), l, 8, 0);
    drain();
    verify_all(64, 8);
    CHECK(cb_n == 3 && mock_stats.violations == 0, "no stray calls, no violations");
}

/* The front end's CAP.MQES (a SATA persona's NCQ: one queue of 32) bounds Create I/O CQ/SQ. */
static void t_queues_mqes(void)
{
    struct mock_cfg c = cfg_default();
    c.mqes = 31;
    setup(c);
    uint32_t *d = SQE(0x05);
    d[6] = 0x100000;
    d[11] = 1;
    d[10] = 1 | 32u << 16;
    CHECK(admin(d).status == NVME_SC_INVALID_QUEUE_SIZE, "CQ of 33 entries over MQES 31");
    d[10] = 1 | 31u << 16;
    CHECK(admin(d).status == 0, "CQ of 32 entries");
    d = SQE(0x01);
    d[6] = 0x200000;
    d[11] = 1 | 1u << 16;
    d[10] = 1 | 32u << 16;
    CHECK(admin(d).status == NVME_SC_INVALID_QUEUE_SIZE, "SQ of 33 entries over MQES 31");
    d[10] = 1 | 31u << 16;
    CHECK(admin(d).status == 0, "SQ of 32 entries");
}

static void t_queues(void)
{
    setup(cfg_default());
    uint32_t *d = SQE(0x05);
    d[6] = 0x100000;
    d[10] = 0 | 15u << 16;
    d[11] = 1;
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "CQ id 0");
    d[10] = 9 | 15u << 16;
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "CQ id beyond Number of Queues");
    d[10] = 1;
    CHECK(admin(d).status == NVME_SC_INVALID_QUEUE_SIZE, "CQ qsize 0");
    d[10] = 1 | 4096u << 16;
    CHECK(admin(d).status == NVME_SC_INVALID_QUEUE_SIZE, "CQ qsize > MQES");
    d[10] = 1 | 15u << 16;
    d[11] = 1 | 9u << 16;
    CHECK(admin(d).status == NVME_SC_INVALID_INTERRUPT_VECTOR, "CQ vector 9");
    d[11] = 1 | 2 | 1u << 16;
    d[6] = 0x100010;
    CHECK(admin(d).status == NVME_SC_PRP_OFFSET_INVALID, "CQ base offset");
    d[6] = 0x100000;
    CHECK(admin(d).status == 0, "CQ 1");
    CHECK(mock_cq[1].enabled && mock_cq[1].base == 0x100000 && mock_cq[1].qsize == 15 &&
          mock_cq[1].iv == 1 && mock_cq[1].ien && !mock_cq[1].nc, "hal_cq_config");
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "CQ 1 again");
    /* PC=0: PRP list of 2 pages (256 entries x 16 B = 4 KiB -> 1 page; use 300 entries) */
    uint64_t list[2] = { 0x300000, 0x305000 };
    memcpy(mock_host + 0x108000, list, 16);
    d = SQE(0x05);
    d[6] = 0x108000;
    d[10] = 2 | 299u << 16;
    d[11] = 0;
    CHECK(admin(d).status == 0, "CQ 2 PC=0");
    CHECK(mock_cq[2].nc && mock_cq_pages[2][0] == 0x300000 && mock_cq_pages[2][1] == 0x305000,
          "cq pages");
    list[1] = 0x305008;
    memcpy(mock_host + 0x108000, list, 16);
    d[10] = 3 | 299u << 16;
    CHECK(admin(d).status == NVME_SC_PRP_OFFSET_INVALID, "PC=0 list entry with an offset");
    /* SQs */
    d = SQE(0x01);
    d[6] = 0x200000;
    d[10] = 1 | 15u << 16;
    d[11] = 1 | 5u << 16;
    CHECK(admin(d).status == NVME_SC_CQ_INVALID, "SQ on CQ 5");
    d[11] = 1;
    CHECK(admin(d).status == NVME_SC_CQ_INVALID, "SQ on CQ 0");
    d[11] = 1 | 1u << 16;
    d[10] = 0 | 15u << 16;
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "SQ id 0");
    d[10] = 1;
    CHECK(admin(d).status == NVME_SC_INVALID_QUEUE_SIZE, "SQ qsize 0");
    d[10] = 1 | 15u << 16;
    CHECK(admin(d).status == 0, "SQ 1");
    CHECK(mock_sq[1].enabled && mock_sq[1].cqid == 1 && mock_sq[1].base == 0x200000, "sq cfg");
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "SQ 1 again");
    /* an I/O command the firmware serves completes on the SQ's CQ */
    uint32_t *io = SQE(0x7E, 1);
    struct mock_cpl c = admin_on(1, io);
    CHECK(c.status == NVME_SC_INVALID_OPCODE && c.cqid == 1 && c.sqid == 1, "I/O opcode 7Eh");
    /* Number of Queues once queues exist */
    d = SQE(0x09, 0);
    d[10] = 0x07;
    d[11] = 3 | 3u << 16;
    CHECK(admin(d).status == NVME_SC_COMMAND_SEQUENCE_ERROR, "Number of Queues after creates");
    /* deletes */
    d = SQE(0x04);
    d[10] = 1;
    CHECK(admin(d).status == NVME_SC_INVALID_QUEUE_DELETION, "delete CQ with an SQ on it");
    d = SQE(0x00);
    d[10] = 0;
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "delete SQ 0");
    d[10] = 1;
    CHECK(admin(d).status == 0 && !mock_sq[1].enabled, "delete SQ 1");
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "delete SQ 1 again");
    d = SQE(0x04);
    d[10] = 1;
    CHECK(admin(d).status == 0 && !mock_cq[1].enabled, "delete CQ 1");
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "delete CQ 1 again");
    d[10] = 0;
    CHECK(admin(d).status == NVME_SC_INVALID_QID, "delete CQ 0");
}

/* Delete I/O SQ with its commands in flight (NVMe 1.4 5.6): the front end drains the SQ, which
 * needs the main loop to serve block requests and flash completions, so the Delete completes
 * only after every command; queue commands behind it wait for it, in order; others do not. */
static void t_sq_delete(void)
{
    setup(cfg_default());
    create_io_queue_pair();
    uint32_t ntags = 1u << cfg.tag_width, nlb = cfg.max_transfer >> cfg.lbads;
    for (uint32_t i = 0; i < ntags; i++)
        wr((uint64_t)i * nlb, nlb, 100 + i, ntags, 1u << 14);  /* FUA: in flight longer */
    uint16_t cid0 = next_cid;
    uint32_t *d = SQE(NVME_ADMIN_DELETE_IO_SQ | (uint32_t)cid0 << 16);
    d[10] = 1;
    mock_push_cmd(0, d);
    d = SQE(NVME_ADMIN_CREATE_IO_SQ | (uint32_t)(cid0 + 1) << 16);
    d[6] = 0x300000;
    d[10] = 2 | 63u << 16;
    d[11] = 1 | 1u << 16;
    mock_push_cmd(0, d);                                /* SQ 2 on CQ 1: held */
    d = SQE(NVME_ADMIN_KEEP_ALIVE | (uint32_t)(cid0 + 2) << 16);
    mock_push_cmd(0, d);                                /* no queue command: not held */
    d = SQE(NVME_ADMIN_DELETE_IO_CQ | (uint32_t)(cid0 + 3) << 16);
    d[10] = 1;
    mock_push_cmd(0, d);                                /* held; SQ 2 is on CQ 1 by then */
    next_cid += 4;
    /* the firmware takes one command a pass: the writes must outlast the first three */
    static const uint16_t order[4] = { 2, 0, 1, 3 };
    uint32_t got = 0;
    for (uint32_t i = 0; got < 4; i++) {
        CHECK(i < 100000, "%u of 4 admin commands completed (%u writes in flight)", got,
              inflight);
        fw_poll();
        if (i == 1)
            CHECK(inflight && !mock_sq[2].enabled, "the writes ended too soon for this test");
        reap();
        struct mock_cpl c;
        while (mock_pop_cpl(&c)) {
            CHECK(got < 4 && c.cid == cid0 + order[got], "completion %u: cid %u, want %u", got,
                  c.cid, cid0 + order[got]);
            switch (order[got++]) {
            case 0:
                CHECK(c.status == 0, "Delete I/O SQ status %x", c.status);
                CHECK(!inflight, "Delete I/O SQ completed with %u writes in flight", inflight);
                CHECK(!mock_sq[1].enabled, "SQ 1 still on at the Delete's completion");
                break;
            case 1:
                CHECK(c.status == 0 && mock_sq[2].enabled, "Create I/O SQ 2 status %x",
                      c.status);
                break;
            case 2:
                CHECK(c.status == 0, "Keep Alive status %x", c.status);
                break;
            default:
                CHECK(c.status == NVME_SC_INVALID_QUEUE_DELETION, "Delete I/O CQ 1 status %x",
                      c.status);
            }
        }
    }
    CHECK(mock_stats.queue_violations == 0, "%llu queue configurations while a delete drained",
          (unsigned long long)mock_stats.queue_violations);
    /* no command on the SQ: the delete completes on the same pass */
    d = SQE(NVME_ADMIN_DELETE_IO_SQ);
    d[10] = 2;
    CHECK(admin(d).status == 0 && !mock_sq[2].enabled, "delete SQ 2");
    d = SQE(NVME_ADMIN_DELETE_IO_CQ);
    d[10] = 1;
    CHECK(admin(d).status == 0 && !mock_cq[1].enabled, "delete CQ 1");
    verify_all(nlb, ntags);     /* the writes the host got completions for are there */
}

static struct mock_cpl getf(uint32_t fid, uint32_t sel, uint32_t cdw11)
{
    uint32_t *d = SQE(0x0A);
    d[10] = fid | sel << 8;
    d[11] = cdw11;
    return admin(d);
}

static struct mock_cpl setf(uint32_t fid, uint32_t v, bool save)
{
    uint32_t *d = SQE(0x09);
    d[10] = fid | (uint32_t)save << 31;
    d[11] = v;
    return admin(d);
}

static void t_features(void)
{
    setup(cfg_default());
    CHECK(getf(0x07, 0, 0).dw0 == (7 | 7u << 16), "default number of queues");
    struct mock_cpl c = setf(0x07, 20 | 2u << 16, false);
    CHECK(c.status == 0 && c.dw0 == (7 | 2u << 16), "NQ capped: %x", c.dw0);
    CHECK(setf(0x07, 0xFFFF, false).status == NVME_SC_INVALID_FIELD, "NQ FFFFh");
    CHECK(getf(0x07, 0, 0).dw0 == (7 | 2u << 16), "NQ current");
    CHECK(getf(0x07, 1, 0).dw0 == (7 | 7u << 16), "NQ default");
    CHECK(getf(0x07, 2, 0).dw0 == (7 | 7u << 16), "NQ saved = default");
    CHECK(getf(0x07, 3, 0).dw0 == 0x4, "NQ supported capabilities");
    CHECK(getf(0x07, 4, 0).status == NVME_SC_INVALID_FIELD, "SEL 4");
    CHECK(setf(0x01, 0x01020303, false).status == 0 && getf(0x01, 0, 0).dw0 == 0x01020303,
          "arbitration");
    CHECK(setf(0x02, 1, false).status == NVME_SC_INVALID_FIELD, "power state 1");
    CHECK(setf(0x02, 0, false).status == 0, "power state 0");
    CHECK(getf(0x04, 0, 0).dw0 == 343, "over temperature default");
    CHECK(setf(0x04, 350, false).status == 0 && getf(0x04, 0, 0).dw0 == 350, "temp set");
    CHECK(setf(0x04, 260 | 1u << 20, false).status == 0 &&
          getf(0x04, 0, 1u << 20).dw0 == (260 | 1u << 20), "under temperature");
    CHECK(setf(0x04, 2u << 20, false).status == NVME_SC_INVALID_FIELD, "THSEL 2");
    CHECK(getf(0x04, 0, 1u << 16).status == NVME_SC_INVALID_FIELD, "TMPSEL 1");
    CHECK(getf(0x06, 0, 0).dw0 == 1, "VWC on by default");
    CHECK(setf(0x06, 0, false).status == 0 && getf(0x06, 0, 0).dw0 == 0, "VWC off");
    CHECK(setf(0x08, 0x0A05, false).status == 0 && mock_agg_thr == 5 && mock_agg_time == 10,
          "interrupt coalescing -> hal_aggregation");
    CHECK(getf(0x08, 0, 0).dw0 == 0x0A05, "coalescing readback");
    CHECK(setf(0x09, 3 | 1u << 16, false).status == 0 && mock_ivc_cd[3], "IV config -> hal_ivc");
    CHECK(getf(0x09, 0, 3).dw0 == (3 | 1u << 16), "IV config readback");
    CHECK(setf(0x09, 9, false).status == NVME_SC_INVALID_FIELD, "IV 9 of 8 queues");
    CHECK(getf(0x09, 0, 9).status == NVME_SC_INVALID_FIELD, "get IV 9");
    CHECK(setf(0x0B, 0xFFFF, false).status == 0 && getf(0x0B, 0, 0).dw0 == 0x3FF, "AEC");
    CHECK(setf(0x01, 0, true).status == NVME_SC_FEATURE_NOT_SAVEABLE, "save bit");
    CHECK(setf(0x03, 0, false).status == NVME_SC_INVALID_FIELD, "LBA range type unsupported");
    CHECK(getf(0x0C, 0, 0).status == NVME_SC_INVALID_FIELD, "APST unsupported");
    uint32_t *d = SQE(0x09, 1);
    d[10] = 0x01;
    CHECK(admin(d).status == NVME_SC_FEATURE_NOT_NS_SPECIFIC, "arbitration with nsid 1");
    /* controller reset: features back to their defaults */
    mock_set_enabled(false);
    fw_poll();
    mock_set_enabled(true);
    CHECK(getf(0x07, 0, 0).dw0 == (7 | 7u << 16) && getf(0x06, 0, 0).dw0 == 1 &&
          getf(0x01, 0, 0).dw0 == 0 && mock_agg_thr == 0, "defaults after controller reset");
    /* a reset the firmware was too busy to see (disabled and enabled again between two
     * polls) is handled all the same: the front end latched it */
    CHECK(setf(0x07, 3 | 3u << 16, false).status == 0, "number of queues");
    mock_set_enabled(false);
    mock_set_enabled(true);
    fw_poll();
    CHECK(getf(0x07, 0, 0).dw0 == (7 | 7u << 16), "defaults after a reset between two polls");
}

static void t_logs(void)
{
    setup(cfg_default());
    /* SMART counters from known I/O: 3 writes of 8 LBAs, 2 reads of 16 */
    for (int i = 0; i < 3; i++)
        wr(8 * i, 8, 1 + i, 1, 0);
    rd(0, 16, 1);
    rd(4, 16, 1);
    struct mock_cpl c = get_log(0x02, 512, 0, false);
    uint8_t *p = mock_host + HOST_DATA;
    CHECK(c.status == 0, "SMART status %x", c.status);
    CHECK(le(p + 48, 8) == 1 && le(p + 32, 8) == 1, "data units (24 and 32 LBAs -> 1)");
    CHECK(le(p + 64, 8) == 2 && le(p + 80, 8) == 3, "host commands %llu %llu",
          (unsigned long long)le(p + 64, 8), (unsigned long long)le(p + 80, 8));
    CHECK(le(p + 112, 8) == 1 && p[3] == 100 && p[5] == 0, "power cycles / spare / used");
    CHECK(le(p + 1, 2) == 313 && p[4] == 10, "temperature / spare threshold");
    for (int i = 0; i < 250; i++)          /* 2000 + 24 LBAs written = 3 data units */
        wr(64 + 8 * i, 8, 9 + i, 4, 0);
    drain();
    get_log(0x02, 512, 0, false);
    CHECK(le(p + 48, 8) == 3, "data units written rounded up: %llu",
          (unsigned long long)le(p + 48, 8));
    /* offset / NUMD: the second half of the SMART page */
    c = get_log(0x02, 256, 256, false);
    CHECK(c.status == 0 && le(p, 4) == 0 && p[256] == 0xEE, "offset 256 length 256");
    CHECK(get_log(0x02, 512, 2, false).status == NVME_SC_INVALID_FIELD, "offset not dword aligned");
    CHECK(get_log(0x02, 512, 512, false).status == NVME_SC_INVALID_FIELD, "offset past the page");
    CHECK(get_log(0x02, 65536, 0, false).status == NVME_SC_INVALID_FIELD, "length > MDTS");
    CHECK(get_log(0x07, 512, 0, false).status == NVME_SC_INVALID_LOG_PAGE, "log 07h");
    /* longer than the page: zero padded */
    c = get_log(0x03, 1024, 0, false);
    CHECK(c.status == 0 && p[0] == 1 && !memcmp(p + 8, "1234abcd", 8) && p[1000] == 0,
          "firmware slot page, padded");
    /* error log: the errors above, newest first */
    c = get_log(0x01, 4096, 0, false);
    uint64_t n_err = le(p, 8);
    CHECK(c.status == 0 && n_err >= 4 && le(p + 64, 8) == n_err - 1, "error log %llu",
          (unsigned long long)n_err);
    CHECK(le(p + 12, 2) >> 1 == (NVME_SC_INVALID_LOG_PAGE & 0x7FFF) || n_err, "status in entry");
    c = get_log(0x02, 512, 0, false);
    CHECK(le(p + 176, 8) >= n_err, "SMART error entries");
    /* AER: an event completes a held AER with type | info << 8 | log page << 16 */
    uint32_t *d = SQE(0x0C);
    d[0] |= (uint32_t)900 << 16;
    mock_push_cmd(0, d);
    for (int i = 0; i < 10; i++)
        fw_poll();
    CHECK(!mock_pop_cpl(&c), "AER completed without an event");
    mock_push_aer(1, 0xFFFF);
    fw_poll();
    CHECK(mock_pop_cpl(&c) && c.cid == 900 && c.dw0 == (0 | 1u << 8 | 1u << 16),
          "AER completion dw0 %x", c.dw0);
    /* a second error event waits (masked) until the error log is read */
    d[0] = 0x0C | (uint32_t)901 << 16;
    mock_push_cmd(0, d);
    mock_push_aer(0, 0xFFFF);
    for (int i = 0; i < 10; i++)
        fw_poll();
    CHECK(!mock_pop_cpl(&c), "masked event reported");
    get_log(0x01, 64, 0, false);
    fw_poll();
    CHECK(mock_pop_cpl(&c) && c.cid == 901 && c.dw0 == (1u << 16), "unmasked after log read");
    /* an SQ whose entries could not be read: a transient internal error (04h) whose error log
     * entry names the SQ (SQID at byte 8, CID FFFFh at 10) */
    d[0] = 0x0C | (uint32_t)902 << 16;
    mock_push_cmd(0, d);
    mock_push_aer(4, 3);
    for (int i = 0; i < 10; i++)
        fw_poll();
    get_log(0x01, 64, 0, false);
    CHECK(le(p + 8, 2) == 3 && le(p + 10, 2) == 0xFFFF, "fetch error entry: sqid %llu cid %llx",
          (unsigned long long)le(p + 8, 2), (unsigned long long)le(p + 10, 2));
    fw_poll();
    CHECK(mock_pop_cpl(&c) && c.cid == 902 && c.dw0 == (0 | 4u << 8 | 1u << 16),
          "fetch error AER dw0 %x", c.dw0);
    /* AER limit: AERL + 1 = 4 outstanding */
    for (int i = 0; i < 4; i++) {
        d[0] = 0x0C | (uint32_t)(910 + i) << 16;
        mock_push_cmd(0, d);
    }
    for (int i = 0; i < 10; i++)
        fw_poll();
    CHECK(!mock_pop_cpl(&c), "4 AERs held");
    d[0] = 0x0C;
    CHECK(admin(d).status == NVME_SC_AER_LIMIT_EXCEEDED, "fifth AER");
    /* Abort: caught before fetch -> dw0 0; not caught -> dw0 1 */
    mock_set_sq_pending(1u << 1, 3);
    mock_set_abort_hit(true);
    d = SQE(0x08);
    d[10] = 0 | 77u << 16;
    c = admin(d);
    CHECK(c.status == 0 && c.dw0 == 0 && mock_abort_sqid == 0 && mock_abort_cid == 77 &&
          !mock_abort_armed, "abort hit");
    mock_set_abort_hit(false);
    c = admin(d);
    CHECK(c.status == 0 && c.dw0 == 1, "abort miss");
    d[10] = 5;
    c = admin(d);
    CHECK(c.status == 0 && c.dw0 == 1, "abort on a queue that does not exist");
    /* vendor page */
    CHECK(vendor(0) == 3 + 250 + 0 && vendor(48) == F.user_units && vendor(112) == 4,
          "vendor page counters");
    /* controller reset drops the held AERs: a new one is accepted again x4 */
    mock_set_enabled(false);
    fw_poll();
    mock_set_enabled(true);
    for (int i = 0; i < 4; i++) {
        d = SQE(0x0C);
        d[0] |= (uint32_t)(920 + i) << 16;
        mock_push_cmd(0, d);
    }
    for (int i = 0; i < 10; i++)
        fw_poll();
    CHECK(!mock_pop_cpl(&c), "4 AERs held after reset (old ones dropped)");
}

static void t_integrity(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    uint32_t big = cfg.max_transfer / (uint32_t)lba_bytes;
    /* the whole drive three times, sequential in big requests, QD 8 */
    for (int pass = 0; pass < 3; pass++) {
        for (uint64_t l = 0; l < n; l += big)
            wr(l, (uint32_t)(n - l < big ? n - l : big), (uint64_t)pass << 40 | l, 8, 0);
        drain();
    }
    uint64_t reads0 = mock_stats.reads;
    verify_all(big, 8);
    /* sequential data: the units of one plane page come in one READ */
    CHECK(mock_stats.reads - reads0 <= F.user_units / F.upp + 64, "%llu READs for %u units",
          (unsigned long long)(mock_stats.reads - reads0), F.user_units);
    /* random 4 KiB overwrites, QD 4 */
    for (int i = 0; i < 3000; i++) {
        uint64_t u = rnd() % (n / spu());
        wr(u * spu(), spu(), rnd(), 4, 0);
    }
    drain();
    /* deallocated ranges read as zeroes (unit aligned and not) */
    for (int i = 0; i < 20; i++) {
        uint64_t s = rnd() % (n - 300);
        deallocate(s, 1 + (uint32_t)(rnd() % 300));
    }
    /* Write Zeroes */
    for (int i = 0; i < 10; i++) {
        uint64_t s = rnd() % (n - 100);
        uint32_t k = 1 + (uint32_t)(rnd() % 100);
        uint32_t *d = SQE(0x08, 1);
        d[10] = (uint32_t)s;
        d[12] = k - 1;
        CHECK(admin_on(1, d).status == 0, "write zeroes");
        memset(shadow + s * lba_bytes, 0, k * lba_bytes);
    }
    verify_all(big, 8);
    verify_all(spu(), 16);
    CHECK(mock_stats.violations == 0, "flash rule violations %llu",
          (unsigned long long)mock_stats.violations);
    /* the back end never holds more than a die queue's worth for one die */
    CHECK(mock_stats.max_die_queue <= 4, "%u ops queued to one die",
          mock_stats.max_die_queue);
    /* bad input: LBA range, namespace, DSM range past the end */
    CHECK(raw_io(0x02, n - 1, 2, 1) == NVME_SC_LBA_OUT_OF_RANGE, "read past the end");
    CHECK(raw_io(0x01, n, 1, 1) == NVME_SC_LBA_OUT_OF_RANGE, "write past the end");
    CHECK(raw_io(0x02, 0, 1, 2) == NVME_SC_INVALID_NAMESPACE, "nsid 2");
    uint32_t range[4] = { 0, 10, (uint32_t)(n - 5), 0 };
    memcpy(mock_host + HOST_DATA, range, 16);
    uint32_t *d = SQE(0x09, 1);
    d[6] = HOST_DATA;
    d[11] = 4;
    CHECK(admin_on(1, d).status == NVME_SC_LBA_OUT_OF_RANGE, "DSM range past the end");
    d[1] = 3;
    CHECK(admin_on(1, d).status == NVME_SC_INVALID_NAMESPACE, "DSM nsid 3");
    verify_all(big, 8);
}

static void t_rmw(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    /* 512 B writes and unaligned multi-LBA writes, reads at odd offsets */
    for (int i = 0; i < 4000; i++) {
        uint64_t s = rnd() % (n - 40);
        uint32_t k = (rnd() & 1) ? 1 : 1 + (uint32_t)(rnd() % 40);
        wr(s, k, rnd(), 1 + (uint32_t)(rnd() % 4), 0);
    }
    drain();
    for (int i = 0; i < 2000; i++) {
        uint64_t s = rnd() % (n - 40);
        rd(s, 1 + (uint32_t)(rnd() % 40), 4);
    }
    drain();
    /* partial-unit Write Zeroes leaves the rest of the unit */
    wr(800, 8, 77, 1, 0);
    uint32_t *d = SQE(0x08, 1);
    d[10] = 802;
    d[12] = 2;
    CHECK(admin_on(1, d).status == 0, "write zeroes");
    memset(shadow + 802 * lba_bytes, 0, 3 * lba_bytes);
    verify_all(64, 8);
    CHECK(mock_stats.violations == 0, "violations");
}

static void t_gc(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    uint64_t moved0 = vendor(16);
    /* random 4 KiB overwrites: twice the drive */
    for (uint64_t i = 0; i < 2 * n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    /* the GC work one write waits for, in page reads (no host reads run): at QD 1, paced
     * GC spreads a victim over the writes that use its room */
    uint64_t worst = 0, total = 0, nw = 2 * n / spu();
    for (uint64_t i = 0; i < nw; i++) {
        uint64_t r0 = mock_stats.reads;
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 1, 0);
        uint64_t r = mock_stats.reads - r0;
        total += r;
        worst = r > worst ? r : worst;
    }
    uint64_t host = vendor(0), nand = vendor(8), moved = vendor(16), erases = vendor(24);
    double wa = (double)nand / (double)host;
    printf("gc: host units %llu nand units %llu moved %llu erases %llu WA %.3f "
           "checkpoints %llu\n", (unsigned long long)host, (unsigned long long)nand,
           (unsigned long long)moved, (unsigned long long)erases, wa,
           (unsigned long long)vendor(88));
    printf("gc: QD 1 writes %llu: page reads per write mean %.2f worst %llu (a victim: %u "
           "pages); paced pages %llu, whole victims before a write %llu, pending reused %llu\n",
           (unsigned long long)nw, (double)total / (double)nw, (unsigned long long)worst,
           F.die[0].upb / F.pu_units, (unsigned long long)vendor(256),
           (unsigned long long)vendor(264), (unsigned long long)vendor(128));
    /* the journal commits that free GC's blocks run beside the writes: few are waited for */
    printf("gc: releases %llu, %llu of them waited for by a write\n",
           (unsigned long long)vendor(232), (unsigned long long)vendor(304));
    /* GC in bursts made one write wait for a victim on every die (8 x 16 pages here) */
    CHECK(worst <= 2 * F.die[0].upb / F.pu_units, "a write waited for %llu page reads",
          (unsigned long long)worst);
    CHECK(vendor(256) > 1000 && vendor(264) <= 4, "paced pages %llu, whole victims %llu",
          (unsigned long long)vendor(256), (unsigned long long)vendor(264));
    CHECK(moved > moved0 && moved > 1000, "GC moved only %llu units", (unsigned long long)moved);
    CHECK(wa > 1.05, "write amplification %.3f", wa);
    CHECK(vendor(64) == nand * 1000 / host, "WA x1000 field");
    /* percentage used: average erase count against the P/E budget */
    ftl_config.pe_budget = 10;
    get_log(0x02, 512, 0, false);
    uint64_t used = vendor(72) * 100 / 10;
    get_log(0x02, 512, 0, false);
    CHECK(used > 0 && mock_host[HOST_DATA + 5] == (used > 255 ? 255 : used),
          "percentage used %u, want %llu", mock_host[HOST_DATA + 5], (unsigned long long)used);
    ftl_config.pe_budget = 3000;
    /* wear: erase counts spread (wear-aware allocation) */
    CHECK(vendor(80) <= vendor(72) * 3 + 3, "max erase %llu avg %llu",
          (unsigned long long)vendor(80), (unsigned long long)vendor(72));
    verify_all(64, 8);
    CHECK(mock_stats.violations == 0, "violations");
}

static void t_badblocks(void)
{
    struct mock_cfg c = cfg_default();
    /* bad blocks come out of the over-provisioning: give this tiny drive enough for 10 and
     * still some spare (t_spare: none left is read-only) */
    ftl_config.op_permille = 200;
    cfg = c;
    mock_init(&cfg);
    /* factory bad: die 1 block 5 plane 1, die 2 block 0 plane 0 (die 3's block 0 holds the
     * system directory: ONFI parts ship block 0 good), die 0 block 1 (sys area) */
    mock_factory_bad(1, 5 * 2 + 1);
    mock_factory_bad(2, 0);
    mock_factory_bad(0, 1 * 2);
    boot();
    shadow = calloc(1, ns_bytes);
    CHECK(vendor(32) == 3, "factory bad blocks counted: %llu", (unsigned long long)vendor(32));
    CHECK(F.sys_blk[0] == 0 && F.sys_blk[1] == 2, "system area skips the bad block");
    CHECK(sysdir_die() == 3, "system directory on die %u, want the last target's",
          sysdir_die());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    CHECK(!mock_block_programmed(1, 11) && !mock_block_programmed(1, 10), "bad pair unused");
    /* grown bad blocks: program and erase failures on blocks in use, then the whole drive
     * rewritten once, so every failed page held data that must come back */
    for (uint64_t i = 0; i < n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    for (int k = 0; k < 6; k++)
        mock_fail_next_program((uint32_t)k % 4, (uint32_t)(2 * (3 + k)));
    mock_fail_next_erase(2, 2 * 7 + 1);
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t l = 0; l < n; l += 64)
            wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l * 3 + (uint64_t)pass, 8, 0);
        drain();
        if (pass == 0)
            verify_all(64, 8);
    }
    uint64_t bad = vendor(32);
    printf("badblocks: %llu bad after grown failures\n", (unsigned long long)bad);
    CHECK(bad == 3 + 7, "grown bad blocks retired: %llu of 3 + 7", (unsigned long long)bad);
    verify_all(64, 8);
    /* the table survives a restart */
    mock_set_shutdown(1);
    fw_poll();
    CHECK(mock_shutdown_done(), "shutdown");
    mock_power_cycle();
    boot();
    CHECK(vendor(32) == bad, "bad blocks after restart %llu", (unsigned long long)vendor(32));
    verify_all(64, 8);
}

/* ssdlab's fault injection C1h, armed, fault `f`: CDW13 target, CDW14 block, CDW15 v */
static uint16_t nand_fault(uint32_t f, uint32_t target, uint32_t block, uint32_t v)
{
    uint32_t *d = SQE(0xC1);
    d[10] = f;
    d[12] = NVME_FAULT_ARM;
    d[13] = target;
    d[14] = block;
    d[15] = v;
    return admin(d).status;
}

#define TARGET(ch, way, lun) ((ch) | (way) << 8 | (lun) << 16)

/* The NAND emulator's faults through admin C1h (spec/nvme.py Fault NAND_*) on a build with
 * it (mock cfg.emulator): every argument out of range, or the command unarmed, is Invalid
 * Field and touches nothing. On the full drive, 7 block pairs of die 1 grow bad and 7 of
 * die 2 get P/E count 100 with the limit at 100, 7 of die 3 P/E count 50 (below it); the
 * drive is rewritten twice: the firmware retires exactly the 14 (each failed its next erase
 * or program), die 3's stay in use with their counts going on, every LBA reads back; after
 * a power cycle (the limit register cleared) the 14 stay retired. The pairs are every
 * other one (3, 5, .., 15): a run of neighbours all failing is a failed die to the firmware
 * (ftl_die.c: its test erases the die's first free blocks), which is not this test. */
static void t_emu_faults(void)
{
    struct mock_cfg c = cfg_default();
    c.emulator = true;
    ftl_config.op_permille = 200;       /* room for 14 bad pairs (t_badblocks) */
    setup(c);
    uint32_t lbs = cfg.blocks_per_plane * cfg.planes, bad0 = (uint32_t)vendor(32);
    const uint32_t inval = NVME_SC_INVALID_FIELD;
    struct { uint32_t f, target, block, v; const char *what; } bad[] = {
        { NVME_FAULT_NAND_BAD_BLOCK, TARGET(2, 0, 0), 4, 0, "channel 2 of 2" },
        { NVME_FAULT_NAND_BAD_BLOCK, TARGET(0, 2, 0), 4, 0, "way 2 of 2" },
        { NVME_FAULT_NAND_BAD_BLOCK, TARGET(0, 0, 1), 4, 0, "LUN 1 of 1" },
        { NVME_FAULT_NAND_BAD_BLOCK, TARGET(0, 0, 0) | 1u << 24, 4, 0, "CDW13 31:24" },
        { NVME_FAULT_NAND_BAD_BLOCK, TARGET(0, 0, 0), lbs, 0, "block past the LUN" },
        { NVME_FAULT_NAND_PE, TARGET(0, 0, 0), lbs, 5, "P/E: block past the LUN" },
        { NVME_FAULT_NAND_PE, TARGET(0, 1, 0), 4, 1u << 20, "P/E count 2^20" },
        { NVME_FAULT_NAND_PE_LIMIT, 0, 0, 1u << 20, "P/E limit 2^20" },
        { 6, TARGET(0, 0, 0), 4, 0, "fault 6" },
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CHECK(nand_fault(bad[i].f, bad[i].target, bad[i].block, bad[i].v) == inval,
              "%s: not Invalid Field", bad[i].what);
    uint32_t *d = SQE(0xC1, 0, 0, 0, 0, 0, 0, 0, 0, 0, NVME_FAULT_NAND_BAD_BLOCK, 0, 0, 0, 4);
    CHECK(admin(d).status == inval, "unarmed");
    /* refused by the firmware against its own geometry, not left to the emulator's check */
    CHECK(mock_stats.emu_calls == 0 && mock_stats.emu_pe_limit == 0, "a refused fault made "
          "%llu calls, limit %u", (unsigned long long)mock_stats.emu_calls,
          mock_stats.emu_pe_limit);
    for (uint32_t die = 0; die < mock_dies(); die++)
        for (uint32_t lb = 0; lb < lbs; lb++)
            CHECK(!mock_block_bad(die, lb) && mock_block_pe(die, lb) <= 2,
                  "die %u block %u touched", die, lb);

    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    /* the firmware's die = (lun x ways + way) x channels + channel: die 1 = ch 1 way 0,
     * die 2 = ch 0 way 1, die 3 = ch 1 way 1; pairs 3, 5, .., 15, both planes */
    for (uint32_t k = 3; k <= 15; k += 2)
        for (uint32_t p = 0; p < cfg.planes; p++) {
            uint32_t blk = k * cfg.planes + p;
            CHECK(nand_fault(NVME_FAULT_NAND_BAD_BLOCK, TARGET(1, 0, 0), blk, 0) == 0, "bad");
            CHECK(nand_fault(NVME_FAULT_NAND_PE, TARGET(0, 1, 0), blk, 100) == 0, "P/E 100");
            CHECK(nand_fault(NVME_FAULT_NAND_PE, TARGET(1, 1, 0), blk, 50) == 0, "P/E 50");
            CHECK(mock_block_bad(1, blk) && mock_block_pe(2, blk) == 100 &&
                  mock_block_pe(3, blk) == 50, "pair %u: not as injected", k);
        }
    CHECK(nand_fault(NVME_FAULT_NAND_PE_LIMIT, 0, 0, 100) == 0 &&
          mock_stats.emu_pe_limit == 100, "P/E limit");
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t l = 0; l < n; l += 64)
            wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l * 5 + (uint64_t)pass, 8, 0);
        drain();
    }
    verify_all(64, 8);
    uint32_t grown = (uint32_t)vendor(32) - bad0, worn = 0, used3 = 0;
    for (uint32_t k = 3; k <= 15; k += 2) {
        CHECK(F.blk[bidx(1, k)].state == BLK_BAD, "die 1 pair %u: state %u, not retired", k,
              F.blk[bidx(1, k)].state);
        CHECK(F.blk[bidx(2, k)].state == BLK_BAD, "die 2 pair %u: state %u, not retired", k,
              F.blk[bidx(2, k)].state);
        worn += mock_block_bad(2, k * cfg.planes);
        CHECK(F.blk[bidx(3, k)].state != BLK_BAD && !mock_block_bad(3, k * cfg.planes),
              "die 3 pair %u retired below the limit", k);
        used3 += mock_block_pe(3, k * cfg.planes) > 50;
    }
    printf("emu_faults: %u pairs retired (7 grown bad, 7 past the P/E limit), die 3's "
           "pairs erased again: %u of 7\n", grown, used3);
    CHECK(grown == 14, "retired %u, want 14", grown);
    CHECK(worn == 7 && used3 > 0, "worn %u, die 3 pairs erased %u", worn, used3);
    CHECK(mock_stats.violations == 0, "violations");
    mock_set_shutdown(1);
    fw_poll();
    CHECK(mock_shutdown_done(), "shutdown");
    mock_power_cycle();
    boot();
    CHECK(vendor(32) == bad0 + 14 && mock_stats.emu_pe_limit == 0,
          "after a power cycle: bad %llu, limit %u", (unsigned long long)vendor(32),
          mock_stats.emu_pe_limit);
    verify_all(64, 8);
}

/* Refresh is paced: a block marked for refresh (a drifting block, blk_refresh_mark) moves its
 * pages that hold data one at a time, held BLK_VICTIM meanwhile (GC does not take it), then
 * is left pending and counted (vendor log 368); the data reads back. First with idle-time
 * work off (gc_idle_us 0: a busy host): never more than a page per main loop pass, and pages
 * at least REFRESH_BUSY_US (5 ms) apart. Then in idle time: a page per pass, two blocks
 * marked at once refreshed one after the other. */
static void t_refresh_paced(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    uint32_t picked[2], k = 0;
    for (uint32_t b = 0; b < F.n_dies * F.nblk && k < 2; b++)
        if (F.blk[b].state == BLK_FULL && F.blk[b].valid >= 2 * F.pu_units &&
            !F.blk[b].inflight && (k == 0 || b / F.nblk != picked[0] / F.nblk))
            picked[k++] = b;
    CHECK(k == 2, "no two full blocks with data on two pages or more");
    const uint64_t busy_gap = 5000ull * 100;    /* REFRESH_BUSY_US at the mock's 100 MHz */
    for (uint32_t round = 0; round < 2; round++) {
        uint64_t done0 = vendor(368), last_move = 0, min_gap = UINT64_MAX;
        uint32_t marks = round == 0 ? 1 : 2, polls = 0, moves = 0;
        ftl_config.gc_idle_us = round == 0 ? 0 : 1;
        for (uint32_t i = 0; i < marks; i++)
            blk_refresh_mark(picked[i] / F.nblk, picked[i] % F.nblk);
        uint32_t v[2] = { F.blk[picked[0]].valid, F.blk[picked[1]].valid };
        while (F.refresh_pending && polls < 100000) {
            fw_poll();
            hal_wait(hal_cycles() + 10000);     /* 100 us between passes */
            polls++;
            for (uint32_t i = 0; i < marks; i++) {
                struct blk_info *b = &F.blk[picked[i]];
                CHECK(v[i] - b->valid <= F.pu_units, "block %u: %u units moved in one poll "
                      "(a page holds %u)", picked[i], v[i] - b->valid, F.pu_units);
                if (v[i] != b->valid) {
                    uint64_t now = hal_cycles();
                    if (moves && now - last_move < min_gap)
                        min_gap = now - last_move;
                    last_move = now;
                    moves++;
                }
                v[i] = b->valid;
                CHECK(b->valid == 0 || b->state == BLK_VICTIM || b->state == BLK_FULL,
                      "block %u: state %u while refreshed", picked[i], b->state);
            }
            /* one block at a time */
            CHECK(marks == 1 || F.blk[picked[0]].state != BLK_VICTIM ||
                  F.blk[picked[1]].state != BLK_VICTIM, "two blocks refreshed at once");
        }
        CHECK(!F.refresh_pending, "refresh never ended");
        for (uint32_t i = 0; i < marks; i++)
            CHECK(F.blk[picked[i]].valid == 0 && F.blk[picked[i]].state != BLK_VICTIM,
                  "block %u: %u units left, state %u", picked[i], F.blk[picked[i]].valid,
                  F.blk[picked[i]].state);
        CHECK(vendor(368) == done0 + marks, "refreshed %llu, want %u",
              (unsigned long long)(vendor(368) - done0), marks);
        printf("refresh_paced: %s: %u block(s) refreshed over %u polls, %u of them moving a "
               "page, at least %llu cycles apart\n", round == 0 ? "busy host" : "idle host",
               marks, polls, moves, (unsigned long long)min_gap);
        CHECK(moves >= 2 * marks, "%u page moves", moves);
        CHECK(round == 1 || min_gap >= busy_gap, "busy host: pages moved %llu cycles apart",
              (unsigned long long)min_gap);
        verify_all(64, 8);
        if (round == 0) {       /* the blocks to mark next: rewritten data elsewhere */
            for (uint64_t l = 0; l < n; l += 64)
                wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l * 3 + 1, 8, 0);
            drain();
            k = 0;
            for (uint32_t b = 0; b < F.n_dies * F.nblk && k < 2; b++)
                if (F.blk[b].state == BLK_FULL && F.blk[b].valid >= 2 * F.pu_units &&
                    !F.blk[b].inflight && (k == 0 || b / F.nblk != picked[0] / F.nblk))
                    picked[k++] = b;
            CHECK(k == 2, "no two full blocks after the rewrite");
        }
    }
    ftl_config.gc_idle_us = 1000;       /* the default, for the tests that follow */
    CHECK(mock_stats.violations == 0, "violations");
}

/* The watchdog reset the CPU (the hardware latched FIRED, which is CSTS.CFS): the boot
 * recovers as after a panic, waiting for the host's controller reset before it clears it,
 * and the drive comes back with its data and counts the reset (vendor log +272). */
static void t_watchdog(void)
{
    setup(cfg_default());
    CHECK(mock_wdt.period == FW_WATCHDOG_CYCLES && !mock_wdt.fired, "period %u at boot",
          mock_wdt.period);
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l + 9, 8, 0);
    drain();
    flush();
    /* the CPU reset (the front end and the flash keep their state); the host saw CFS and
     * took CC.EN to 0 */
    mock_wdt.fired = true;
    mock_set_enabled(false);
    mock_set_enabled(true);
    boot();
    CHECK(!mock_wdt.fired && mock_wdt.period == FW_WATCHDOG_CYCLES && !mock_stats.fatal,
          "after the boot: fired %d period %u fatal %d", mock_wdt.fired, mock_wdt.period,
          mock_stats.fatal);
    create_io_queue_pair();
    verify_all(64, 8);
    CHECK(vendor(272) == 1, "watchdog resets %llu", (unsigned long long)vendor(272));
    wr(0, 8, 77, 1, 0);
    verify_all(64, 8);
}

/* Restarts: clean shutdown, power loss after a Flush, a corrupted newest checkpoint, both
 * lost (read-only until Format NVM). n_bad: that many factory bad blocks first (die 0 block
 * 1 in the system area's way, then die 1 block 5), which every format must keep bad and no
 * other. */
static void restart_run(struct mock_cfg mc, uint32_t n_bad)
{
    cfg = mc;
    mock_init(&cfg);
    if (n_bad > 0)
        mock_factory_bad(0, 1 * 2);
    if (n_bad > 1)
        mock_factory_bad(1, 5 * 2 + 1);
    boot();
    shadow = calloc(1, ns_bytes);
    CHECK(vendor(32) == n_bad, "factory bad blocks %llu", (unsigned long long)vendor(32));
    /* new flash: the boot's probes read erased pages (with an ECC they fail the code), which
     * are no media errors */
    CHECK(vendor(328) == 0, "failed ECC reads %llu at the first boot",
          (unsigned long long)vendor(328));
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l + 5, 8, 0);
    for (int i = 0; i < 2000; i++)
        wr(rnd() % (n - 8), 1 + (uint32_t)(rnd() % 8), rnd(), 4, 0);
    drain();
    deallocate(100, 500);
    /* clean shutdown, requested while writes are still queued: they complete first, then
     * the write buffer is flushed, the map saved, and only then done */
    for (int i = 0; i < 6; i++)
        wr((uint64_t)i * 640, 64, 1000 + (uint64_t)i, 8, 0);
    mock_set_shutdown(1);
    for (int i = 0; i < 100 && !mock_shutdown_done(); i++)
        fw_poll();
    CHECK(mock_shutdown_done(), "shutdown not done");
    reap();
    CHECK(inflight == 0, "shutdown done with %u writes in flight", inflight);
    mock_set_shutdown(0);
    fw_poll();
    CHECK(!mock_shutdown_done(), "done not cleared");
    uint64_t seq = F.ckpt_seq;
    mock_power_cycle();
    boot();
    CHECK(F.ckpt_seq == seq, "checkpoint %llu loaded, want %llu",
          (unsigned long long)F.ckpt_seq, (unsigned long long)seq);
    verify_all(64, 8);
    struct mock_cpl c = get_log(0x02, 512, 0, false);
    uint8_t *p = mock_host + HOST_DATA;
    CHECK(c.status == 0 && le(p + 112, 8) == 2 && le(p + 144, 8) == 0, "power cycles %llu",
          (unsigned long long)le(p + 112, 8));
    CHECK(le(p + 80, 8) > 2000, "host write count survives");
    /* Flush persists too; a restart without shutdown counts as unsafe */
    for (int i = 0; i < 500; i++)
        wr(rnd() % (n - 8), 1 + (uint32_t)(rnd() % 8), rnd(), 4, 0);
    drain();
    flush();
    mock_power_cycle();
    boot();
    verify_all(64, 8);
    get_log(0x02, 512, 0, false);
    CHECK(le(p + 112, 8) == 3 && le(p + 144, 8) == 1, "unsafe shutdowns %llu",
          (unsigned long long)le(p + 144, 8));
    CHECK(mock_stats.violations == 0, "violations");
    /* the boot after it replayed the flushed map changes into a checkpoint of its own */
    uint32_t seq2 = F.ckpt_seq;
    CHECK(seq2 > F.ckpt_loaded && F.ckpt_loaded >= seq, "checkpoint %u written after loading %u",
          seq2, F.ckpt_loaded);
    /* a corrupted newest checkpoint: the older one is loaded (with its journal) */
    uint32_t area = seq2 & 1;
    mock_corrupt(0, F.sys_blk[area * F.area_blocks] * 2, 0, 4096 + 100);
    mock_power_cycle();
    boot();
    CHECK(F.ckpt_loaded == seq2 - 1, "loaded checkpoint %u, want the older %u",
          F.ckpt_loaded, seq2 - 1);
    verify_all(64, 8);
    /* both corrupted: the map is lost. Never a silent format: the SMART critical warning
     * (reliability degraded, read-only), an error log entry, reads fail, writes, Write
     * Zeroes and deallocate are refused (DNR); Format NVM brings the drive back, empty */
    for (uint32_t a = 0; a < 2; a++)
        mock_corrupt(0, F.sys_blk[a * F.area_blocks] * 2, 0, 4096 + 100);
    mock_power_cycle();
    boot();
    CHECK(F.failed, "the drive formatted itself over a lost map");
    c = get_log(0x02, 512, 0, false);
    CHECK(c.status == 0 && (p[0] & 0x0C) == 0x0C, "critical warning %02x", p[0]);
    CHECK(le(p + 176, 8) >= 1, "no error log entry");
    CHECK(raw_io(0x02, 0, 8, 1) == NVME_SC_UNRECOVERED_READ_ERROR, "read of a lost map");
    CHECK(raw_io(0x01, 0, 8, 1) == NVME_SC_NAMESPACE_WRITE_PROTECTED, "write to a lost map");
    CHECK(NVME_SC_NAMESPACE_WRITE_PROTECTED & NVME_STATUS_DNR, "DNR");
    uint32_t range[4] = { 0, 8, 0, 0 };
    memcpy(mock_host + HOST_DATA, range, 16);
    uint32_t *dsm = SQE(0x09, 1);
    dsm[6] = HOST_DATA;
    dsm[11] = 0x4;
    CHECK(admin_on(1, dsm).status == NVME_SC_NAMESPACE_WRITE_PROTECTED, "DSM");
    /* still failed after another power cycle (nothing was written over the areas) */
    mock_power_cycle();
    boot();
    CHECK(F.failed, "lost map forgotten by a power cycle");
    uint32_t *fmt = SQE(0x80, 1);
    CHECK(admin(fmt).status == 0, "format");
    CHECK(!F.failed, "format did not clear the failed state");
    c = get_log(0x02, 512, 0, false);
    CHECK(p[0] == 0, "critical warning %02x after format", p[0]);
    memset(shadow, 0, ns_bytes);
    verify_all(64, 8);
    wr(0, 64, 5, 1, 0);
    verify_all(64, 8);
    CHECK(vendor(32) == n_bad, "factory bad blocks after the format %llu",
          (unsigned long long)vendor(32));
}

static void t_restart(void)
{
    restart_run(cfg_default(), 0);
}

/* The same with an ECC in the back end (the personas' code: 1 KiB + 56 B codewords, t = 32;
 * 8 of them fill the mock's 8 KiB + 448 B page). Its codewords run into the spare area, so
 * the bad-block marks of programmed blocks are data: the system directory (block 0 of die
 * 0, ftl_sysdir.c) names the checkpoint areas at every boot and keeps the factory bad blocks
 * for the lost map's format, and the journal's end is told erased by counting zero bits in
 * a raw read (the ECC read of an erased page fails). */
/* cfg_default with the personas' ECC: 1 KiB + 56 B codewords, t = 32 */
static struct mock_cfg cfg_ecc(void)
{
    struct mock_cfg c = cfg_default();
    c.ecc_data_bytes = 1024;
    c.ecc_room = 56;
    c.ecc_t = 32;
    return c;
}

static void t_ecc(void)
{
    restart_run(cfg_ecc(), 2);
    CHECK(F.sysdir && F.sys_blk[0] == 0 && F.sys_blk[1] == 2,
          "system area from the directory: blocks %u, %u", F.sys_blk[0], F.sys_blk[1]);
    CHECK(vendor(328) == 0, "failed ECC reads %llu", (unsigned long long)vendor(328));
}

/* A die that fails as a whole (the mock's: its programs and erases FAIL, its reads are noise
 * the ECC rejects) while the host writes, on a drive whose over-provisioning outlasts a
 * quarter of its NAND (with less, losing a die leaves no spare: read-only, as t_spare): after three failures in a row and a failed erase
 * test the firmware takes it out of service. Every unit it held reads as an Unrecovered
 * Read Error (lost, MAP_UNC: there is no parity), never as garbage; every other unit reads
 * back right; writes go on to the other dies and read back; the vendor log counts the dead
 * die and the lost units, SMART's Critical Warning says reliability is degraded. After a
 * power cycle the die is still out of service (all its blocks bad) and the lost units still
 * fail; written again, they read back. */
static void lba_page(uint64_t lba, uint32_t *die, uint32_t *lb, uint32_t *page);

/* A GC move of a page one of whose planes cannot be read (past every retry level, the mock's
 * shift 0xFF on plane 0): the multi-plane read fails, each live unit is read again alone, and
 * only plane 0's units are lost (Unrecovered Read Error); plane 1's move and read back. */
static void t_gc_partial_loss(void)
{
    struct mock_cfg c = cfg_ecc();
    c.retry_levels = 8;
    setup(c);
    for (uint64_t l = 0; l < F.ns_lbas / 4; l += 64)
        wr(l, 64, l + 9, 8, 0);
    flush();
    uint32_t die, lb, page, d2, lb2, p2;
    lba_page(0, &die, &lb, &page);
    lb &= ~(c.planes - 1);
    mock_read_shift(die, lb, page, 0xFF);           /* plane 0 only */
    uint32_t lost = 0, kept = 0;
    bool gone[64] = {0};
    for (uint64_t l = 0; l < 64 * spu(); l += spu()) {
        lba_page(l, &d2, &lb2, &p2);
        if (d2 == die && (lb2 & ~(c.planes - 1)) == lb && p2 == page) {
            gone[l / spu()] = !(lb2 & (c.planes - 1));
            lost += gone[l / spu()];
            kept += !gone[l / spu()];
        }
    }
    CHECK(lost && kept, "the page's units: %u on plane 0, %u on plane 1", lost, kept);
    gc_relocate(die, lb >> F.plane_bits);
    drain();
    CHECK(vendor(376) == lost, "units lost %llu, want %u (plane 0's only)",
          (unsigned long long)vendor(376), lost);
    for (uint64_t l = 0; l < 64 * spu(); l += spu()) {
        if (gone[l / spu()])
            CHECK(raw_io(0x02, l, spu(), 1) == NVME_SC_UNRECOVERED_READ_ERROR,
                  "LBA %llu of the unreadable plane read back", (unsigned long long)l);
        else
            rd(l, spu(), 1);
    }
    drain();
}

/* Which of units 0..n-1 are on `die` now (their count in *count); the caller frees it. */
static bool *units_on_die(uint32_t n, uint32_t die, uint32_t *count)
{
    bool *on = calloc(n, 1);
    *count = 0;
    for (uint32_t u = 0; u < n; u++) {
        uint32_t d, lb, page;
        lba_page((uint64_t)u << F.spu_shift, &d, &lb, &page);
        on[u] = d == die;
        *count += on[u];
    }
    return on;
}

/* A die fails as a whole at run time (mock_die_fail: its programs and erases FAIL, its pages
 * read noise) while half the drive is written: the FTL takes it out of service, its units
 * read as Unrecovered Read Errors (no parity here), everything else reads back, across power
 * cycles, and written again the lost units read back. `dead` 0 is the die of the checkpoint
 * areas: they move to another die (sys_area_move: the directory rewritten, vendor log 416),
 * and every boot after it loads its checkpoint and journal from there. */
static void diefail_on(uint32_t dead)
{
    struct mock_cfg c = cfg_ecc();
    c.op_permille = 400;        /* a quarter of the raw capacity lost still leaves spare */
    setup(c);
    uint64_t half = F.ns_lbas / 2;
    for (uint64_t l = 0; l < half; l += 64)
        wr(l, 64, l + 3, 8, 0);
    flush();
    CHECK(F.sys_die == 0, "system areas on die %u at first", F.sys_die);
    uint32_t n_units = (uint32_t)(half >> F.spu_shift), lost;
    bool *on_dead = units_on_die(n_units, dead, &lost);
    CHECK(lost > 0 && lost < n_units, "units on die %u: %u of %u", dead, lost, n_units);
    mock_die_fail(dead);
    for (uint64_t l = half; l < F.ns_lbas; l += 64)
        wr(l, 64, l + 5, 8, 0);
    drain();
    flush();
    CHECK(F.die[dead].dead, "die %u still in service", dead);
    for (uint64_t u = half >> F.spu_shift; u < (F.ns_lbas >> F.spu_shift); u++)
        CHECK(F.l2p[u] != MAP_NONE && F.l2p[u] != MAP_UNC, "unit %llu written after the "
              "failure is not mapped: %08x", (unsigned long long)u, F.l2p[u]);
    CHECK(vendor(384) == 1 && vendor(376) == lost, "dead dies %llu, units lost %llu (want %u)",
          (unsigned long long)vendor(384), (unsigned long long)vendor(376), lost);
    uint32_t sys_die = F.sys_die;
    CHECK(dead == 0 ? sys_die != 0 && !F.die[sys_die].dead && vendor(416) == 1
                    : sys_die == 0 && vendor(416) == 0,
          "system areas on die %u after die %u failed, moves %llu", sys_die, dead,
          (unsigned long long)vendor(416));
    for (uint32_t d = 0; d < mock_dies(); d++)
        CHECK(d == dead || !F.die[d].dead, "die %u taken out of service too", d);
    uint8_t *p = mock_host + HOST_DATA;
    struct mock_cpl cl = get_log(0x02, 512, 0, false);
    CHECK(cl.status == 0 && (p[0] & NVME_CRIT_RELIABILITY), "critical warning %02x", p[0]);
    for (int boots = 0; boots < 2; boots++) {
        for (uint32_t u = 0; u < n_units; u++) {
            uint64_t l = (uint64_t)u << F.spu_shift;
            if (on_dead[u])
                CHECK(raw_io(0x02, l, spu(), 1) == NVME_SC_UNRECOVERED_READ_ERROR,
                      "LBA %llu of the failed die read back", (unsigned long long)l);
            else
                rd(l, spu(), 8);
        }
        for (uint64_t l = half; l < F.ns_lbas; l += 64)
            rd(l, 64, 8);
        drain();
        flush();
        mock_set_shutdown(1);
        fw_poll();
        mock_power_cycle();
        boot();
        CHECK(F.die[dead].dead, "after a power cycle die %u is in service again", dead);
        CHECK(F.sys_die == sys_die && F.ckpt_seq > 1, "after a power cycle: system areas on "
              "die %u (want %u), checkpoint %u", F.sys_die, sys_die, F.ckpt_seq);
        cl = get_log(0x02, 512, 0, false);
        CHECK(p[0] & NVME_CRIT_RELIABILITY, "critical warning %02x after a boot", p[0]);
    }
    /* written again, the lost units read back (from the other dies) */
    for (uint32_t u = 0; u < n_units; u++)
        if (on_dead[u])
            wr((uint64_t)u << F.spu_shift, spu(), u + 11, 8, 0);
    drain();
    for (uint32_t u = 0; u < n_units; u++)
        if (on_dead[u])
            rd((uint64_t)u << F.spu_shift, spu(), 8);
    drain();
    free(on_dead);
    ftl_config.op_permille = 70;        /* the default, for the tests that follow */
}

static void t_diefail(void) { diefail_on(1); }
static void t_diefail_sys(void) { diefail_on(0); }

/* The same die failure seen by reads alone (no write reaches the die): its reads fail past
 * the ECC, three Unrecovered Read Errors in a row start the erase test, and once it fails
 * the die is out of service and all its units are lost, the others read back right. */
static void t_diefail_reads(void)
{
    struct mock_cfg c = cfg_ecc();
    c.op_permille = 400;
    setup(c);
    for (uint64_t l = 0; l < F.ns_lbas; l += 64)
        wr(l, 64, l + 3, 8, 0);
    flush();
    const uint32_t dead = 2;
    uint32_t n_units = (uint32_t)(F.ns_lbas >> F.spu_shift), lost, ures = 0;
    bool *on_dead = units_on_die(n_units, dead, &lost);
    mock_die_fail(dead);
    for (uint32_t u = 0; u < n_units; u++) {
        if (!on_dead[u]) {
            rd((uint64_t)u << F.spu_shift, spu(), 1);
            continue;
        }
        CHECK(raw_io(0x02, (uint64_t)u << F.spu_shift, spu(), 1) ==
              NVME_SC_UNRECOVERED_READ_ERROR, "unit %u of the failed die read back", u);
        ures++;
        if (ures == 3)
            fw_poll();      /* the main loop's die_poll: the erase test */
        CHECK(ures < 3 || F.die[dead].dead, "die %u in service after %u errors", dead, ures);
    }
    CHECK(vendor(384) == 1 && vendor(376) == lost && vendor(328) == 3,
          "dead dies %llu, units lost %llu of %u, failed ECC reads %llu (want 3)",
          (unsigned long long)vendor(384), (unsigned long long)vendor(376), lost,
          (unsigned long long)vendor(328));
    free(on_dead);
    ftl_config.op_permille = 70;
}

/* Die parity (die-raid5, ftl_parity.c): 8 dies in two stripe groups of 4. A die lost
 * leaves its group's rows 2 data pages + parity: over-provisioning for that. */
static struct mock_cfg cfg_parity(void)
{
    struct mock_cfg c = cfg_ecc();
    c.n_channels = 4;
    c.parity_stripe = 4;
    c.op_permille = 600;
    return c;
}

/* Whole namespace written, then overwritten at random (8 LBAs, queue depth 8) `passes` times
 * its size: GC collects bands. */
static void parity_fill(uint32_t passes)
{
    for (uint64_t l = 0; l < F.ns_lbas; l += 64)
        wr(l, (uint32_t)(F.ns_lbas - l < 64 ? F.ns_lbas - l : 64), l + 3, 8, 0);
    uint64_t n = F.ns_lbas / 8 * passes;
    for (uint64_t i = 0; i < n; i++)
        wr(rnd() % (F.ns_lbas / 8) * 8, 8, i + 77, 8, 0);
    drain();
    flush();
}

/* Blocks of `die` still to move off it (a failed die's, retire_poll). */
static uint32_t retiring_on(uint32_t die)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < F.nblk; k++)
        n += F.blk[bidx(die, k)].state == BLK_RETIRING;
    return n;
}

/* A die killed mid-run on a parity drive, after GC has collected bands: every read returns
 * the right data, rebuilt from the other dies (no Unrecovered Read Error, no unit lost); the
 * die is taken out of service (strikes, erase test), its data moved off it in the background
 * a block at a time; writes go on (bands of the 3 dies left) and read back; after a power
 * cycle every LBA still reads back right. */
static void t_parity_diefail(void)
{
    setup(cfg_parity());
    CHECK(F.stripe == 4, "stripe %u", F.stripe);
    parity_fill(2);
    CHECK(vendor(16) > 0, "GC moved no unit");
    /* die_rebuild_poll's scan of every block runs before each write only while a failed
     * die has blocks to move: none yet */
    CHECK(!F.rebuild_pending, "a rebuild pending with every die in service");
    const uint32_t dead = 1;
    uint32_t n_units = (uint32_t)(F.ns_lbas >> F.spu_shift), on;
    free(units_on_die(n_units, dead, &on));
    CHECK(on > 0, "no unit on die %u", dead);
    mock_die_fail(dead);
    verify_all(64, 8);
    CHECK(vendor(376) == 0 && vendor(392) > 0 && vendor(400) == 0,
          "units lost %llu, rebuilt %llu, rebuilds failed %llu", (unsigned long long)vendor(376),
          (unsigned long long)vendor(392), (unsigned long long)vendor(400));
    uint8_t *p = mock_host + HOST_DATA;
    struct mock_cpl cl = get_log(0x02, 512, 0, false);
    CHECK(cl.status == 0 && le(p + 160, 8) == 0, "SMART media errors %llu: all rebuilt",
          (unsigned long long)le(p + 160, 8));
    for (uint32_t i = 0; i < 100000 && (!F.die[dead].dead || retiring_on(dead)); i++)
        fw_poll();
    CHECK(F.die[dead].dead && !retiring_on(dead), "die %u: dead %u, %u blocks to move", dead,
          F.die[dead].dead, retiring_on(dead));
    on = 0;
    for (uint32_t u = 0; u < n_units; u++)
        on += F.l2p[u] < F.raw_units && F.l2p[u] / F.upb / F.nblk == dead;
    CHECK(on == 0, "%u units still on the failed die", on);
    CHECK(!F.rebuild_pending, "the rebuild still pending with the die's blocks moved off");
    for (uint64_t i = 0; i < F.ns_lbas / 8; i++)
        wr(rnd() % (F.ns_lbas / 8) * 8, 8, i + 91, 8, 0);
    drain();
    flush();
    verify_all(64, 8);
    CHECK(vendor(376) == 0, "units lost %llu", (unsigned long long)vendor(376));
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    CHECK(F.die[dead].dead, "die %u in service again after a power cycle", dead);
    verify_all(64, 8);
    ftl_config.op_permille = 70;
}

/* The same failure seen by reads alone, after a power cycle (the bands' membership from the
 * checkpoint; the shutdown padded the rows it found partly written): every read rebuilt,
 * right; then writes go on. */
static void t_parity_reads(void)
{
    setup(cfg_parity());
    parity_fill(1);
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    const uint32_t dead = 2;
    mock_die_fail(dead);
    verify_all(8, 8);
    CHECK(F.die[dead].dead, "die %u still in service", dead);
    CHECK(vendor(376) == 0 && vendor(400) == 0, "units lost %llu, rebuilds failed %llu",
          (unsigned long long)vendor(376), (unsigned long long)vendor(400));
    parity_fill(1);
    verify_all(64, 8);
    ftl_config.op_permille = 70;
}

/* A hung die (its R/B# stuck busy: the back end gives up its ops with `timeout` and fences
 * it) seen by reads: the first given-up read tests the die at once (no read retry, no three
 * strikes): out of service, its units Unrecovered Read Errors, the others read right, the
 * timeouts counted (vendor log 408); writes go on to the other dies. */
static void t_die_hang(void)
{
    struct mock_cfg c = cfg_ecc();
    c.op_permille = 400;
    c.retry_levels = 8;
    setup(c);
    for (uint64_t l = 0; l < F.ns_lbas; l += 64)
        wr(l, 64, l + 3, 8, 0);
    flush();
    const uint32_t hung = 1;
    uint32_t n_units = (uint32_t)(F.ns_lbas >> F.spu_shift), lost, ures = 0;
    bool *on_hung = units_on_die(n_units, hung, &lost);
    mock_die_hang(hung);
    uint64_t retries = vendor(344);
    for (uint32_t u = 0; u < n_units; u++) {
        if (!on_hung[u]) {
            rd((uint64_t)u << F.spu_shift, spu(), 1);
            continue;
        }
        CHECK(raw_io(0x02, (uint64_t)u << F.spu_shift, spu(), 1) ==
              NVME_SC_UNRECOVERED_READ_ERROR, "unit %u of the hung die read back", u);
        if (ures++ == 0) {
            fw_poll();          /* the main loop tests the die */
            CHECK(F.die[hung].dead, "die %u in service after a given-up read", hung);
        }
    }
    CHECK(ures == lost && ures > 0, "%u Unrecovered Read Errors, %u units on the die", ures,
          lost);
    CHECK(vendor(344) == retries, "a given-up read went to read retry (%llu retries)",
          (unsigned long long)(vendor(344) - retries));
    CHECK(vendor(408) >= 2 && vendor(408) == mock_stats.timeouts, "flash timeouts %llu, "
          "the back end gave up %llu", (unsigned long long)vendor(408),
          (unsigned long long)mock_stats.timeouts);
    for (uint32_t d = 0; d < mock_dies(); d++)
        CHECK(d == hung || !F.die[d].dead, "die %u taken out of service too", d);
    uint64_t gave_up = mock_stats.timeouts;
    for (uint64_t l = 0; l < F.ns_lbas / 2; l += 64)
        wr(l, 64, l + 9, 8, 0);
    drain();
    flush();
    CHECK(mock_stats.timeouts == gave_up, "%llu ops went to the hung die after it was taken "
          "out", (unsigned long long)(mock_stats.timeouts - gave_up));
    for (uint64_t l = 0; l < F.ns_lbas / 2; l += 64)
        rd(l, 64, 8);
    drain();
    free(on_hung);
    ftl_config.op_permille = 70;
}

/* Under die parity a hung die is rebuilt like a failed one: every read right, none lost. */
static void t_parity_hang(void)
{
    setup(cfg_parity());
    parity_fill(1);
    const uint32_t hung = 3;
    mock_die_hang(hung);
    verify_all(8, 8);
    CHECK(F.die[hung].dead, "die %u still in service", hung);
    CHECK(vendor(376) == 0 && vendor(400) == 0 && vendor(392) > 0 && vendor(408) > 0,
          "units lost %llu, rebuilds failed %llu, rebuilt %llu, timeouts %llu",
          (unsigned long long)vendor(376), (unsigned long long)vendor(400),
          (unsigned long long)vendor(392), (unsigned long long)vendor(408));
    parity_fill(1);
    verify_all(64, 8);
    ftl_config.op_permille = 70;
}

/* A second failure in a stripe is not rebuilt: with a die dead, a page of another die of the
 * same band that no retry level reads is an Unrecovered Read Error, never wrong data. */
static void t_parity_double(void)
{
    struct mock_cfg c = cfg_parity();
    c.retry_levels = 8;
    setup(c);
    for (uint64_t l = 0; l < F.ns_lbas / 2; l += 64)
        wr(l, 64, l + 3, 8, 0);
    flush();
    uint32_t die, lb, page;
    lba_page(0, &die, &lb, &page);
    uint32_t dead = die ^ 1;     /* the same group of 4 */
    mock_read_shift(die, lb, page, 0xFF);
    mock_die_fail(dead);
    uint16_t st = raw_io(0x02, 0, spu(), 1);
    CHECK(st == NVME_SC_UNRECOVERED_READ_ERROR, "LBA 0 with two failures in its stripe: "
          "status %04x", st);
    CHECK(vendor(400) > 0, "no failed rebuild counted");
    ftl_config.op_permille = 70;
}

/* The flash page holding LBA `lba` now: die, LUN block (the mock's numbering), page. */
static void lba_page(uint64_t lba, uint32_t *die, uint32_t *lb, uint32_t *page)
{
    uint32_t v = F.l2p[(uint32_t)(lba >> F.spu_shift)];
    CHECK(v != MAP_NONE && !(v & MAP_WB), "LBA %llu is not on flash", (unsigned long long)lba);
    uint32_t b = v / F.upb, plane = v % F.pu_units / F.upp;
    *die = b / F.nblk;
    *lb = (b % F.nblk) << F.plane_bits | plane;
    *page = v / F.pu_units % F.ppb;
}

/* Read retry (SET FEATURES 89h): with an ECC and a part with 8 retry levels, pages whose
 * ECC reads pass only at levels 1..7 (the mock's retention shift) are read again at the
 * levels in turn and come back right; reads of the target that meet a moved level fail and
 * are recovered at level 0; a page that passes at no level is an Unrecovered Read Error
 * with SMART's media errors and an error log entry naming its LBA. The blocks that needed
 * retry are refreshed (their data moved to fresh pages, which read at level 0 again); the
 * unreadable page's units, moved by a refresh, are lost (MAP_UNC): they read as Unrecovered
 * Read Error, never as garbage, until written again. Every target ends at level 0, and a
 * boot puts back level 0 whatever the dies kept. */
static void t_retry(void)
{
    struct mock_cfg c = cfg_ecc();
    c.retry_levels = 8;
    setup(c);
    /* a new drive's boot probes erased pages: a raw read tells them, no retry level */
    CHECK(vendor(344) == 0, "the first boot read %llu pages again",
          (unsigned long long)vendor(344));
    uint64_t n = F.ns_lbas / 2;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, 64, l + 7, 8, 0);
    flush();
    /* every other written multi-plane page shifted (levels 1..7 in turn; its planes were
     * programmed together: the same shift), one beyond every level */
    uint32_t shifted = 0, die, lb, page, last_key = UINT32_MAX;
    uint64_t bad_lba = 0;
    for (uint64_t l = 0; l < n; l += spu()) {
        lba_page(l, &die, &lb, &page);
        lb &= ~(c.planes - 1);
        uint32_t key = (die * 4096 + lb) * 64 + page;
        if (key == last_key)
            continue;
        last_key = key;
        for (uint32_t pl = 0; pl < c.planes; pl++) {
            if (l == n / 2)
                mock_read_shift(die, lb | pl, page, 0xFF);
            else if (shifted % 2 == 0)
                mock_read_shift(die, lb | pl, page, 1 + shifted / 2 % 7);
        }
        if (l == n / 2)
            bad_lba = l;
        else
            shifted++;
    }
    /* the bad page's LBAs excluded from the data check (the read of them fails) */
    lba_page(bad_lba, &die, &lb, &page);
    lb &= ~(c.planes - 1);
    uint64_t bad_lo = bad_lba, bad_hi = bad_lba;
    uint32_t d2, lb2, p2;
    for (; bad_lo >= spu(); bad_lo -= spu()) {
        lba_page(bad_lo - spu(), &d2, &lb2, &p2);
        if (d2 != die || (lb2 & ~(c.planes - 1)) != lb || p2 != page)
            break;
    }
    for (; bad_hi + spu() < n; bad_hi += spu()) {
        lba_page(bad_hi + spu(), &d2, &lb2, &p2);
        if (d2 != die || (lb2 & ~(c.planes - 1)) != lb || p2 != page)
            break;
    }
    bad_hi += spu();
    struct mock_cpl cl = get_log(0x02, 512, 0, false);
    uint8_t *p = mock_host + HOST_DATA;
    uint64_t media0 = le(p + 160, 8), errlog0 = le(p + 176, 8);
    for (uint64_t l = 0; l < n; l += spu())
        if (l < bad_lo || l >= bad_hi)
            rd(l, spu(), 8);
    drain();
    for (int i = 0; i < 100000 && F.refresh_pending; i++)
        fw_poll();              /* the refreshes still to run (one block per poll) */
    CHECK(!F.refresh_pending, "refreshes never ended");
    uint64_t retries = vendor(344), recovered = vendor(352), failed = vendor(328);
    uint64_t refreshed = vendor(368), lost = vendor(376);
    CHECK(recovered >= shifted / 2 && retries > recovered, "read retries %llu, recovered "
          "%llu, pages shifted %u", (unsigned long long)retries, (unsigned long long)recovered,
          shifted / 2);
    /* only the bad page's, by a refresh: its page read, then each of its units alone */
    CHECK(failed == (vendor(376) ? 1 + vendor(376) : 0), "failed ECC reads %llu, units lost "
          "%llu", (unsigned long long)failed, (unsigned long long)vendor(376));
    CHECK(vendor(320) >= shifted / 2, "corrected reads %llu", (unsigned long long)vendor(320));
    CHECK(refreshed >= 1, "no block refreshed");
    CHECK(lost == (failed ? (bad_hi - bad_lo) / spu() : 0), "units lost %llu",
          (unsigned long long)lost);
    /* moved data reads at level 0 again: no more retries */
    for (uint64_t l = 0; l < n; l += spu())
        if (l < bad_lo || l >= bad_hi)
            rd(l, spu(), 8);
    drain();
    CHECK(vendor(344) == retries, "reads again after the refreshes: %llu",
          (unsigned long long)(vendor(344) - retries));
    uint64_t media1 = media0 + lost;    /* the units the refresh could not read */
    CHECK(raw_io(0x02, bad_lba, spu(), 1) == NVME_SC_UNRECOVERED_READ_ERROR,
          "a page past every level reads back");
    CHECK(vendor(328) == (lost ? failed : 1), "failed ECC reads %llu",
          (unsigned long long)vendor(328));
    cl = get_log(0x02, 512, 0, false);
    CHECK(cl.status == 0 && le(p + 160, 8) == media1 + 1 && le(p + 176, 8) == errlog0 + 1,
          "media errors %llu -> %llu, error log entries %llu -> %llu",
          (unsigned long long)media0, (unsigned long long)le(p + 160, 8),
          (unsigned long long)errlog0, (unsigned long long)le(p + 176, 8));
    cl = get_log(0x01, 64, 0, false);
    CHECK(cl.status == 0 && le(p + 16, 8) == bad_lba && (le(p + 12, 2) >> 1) ==
          (NVME_SC_UNRECOVERED_READ_ERROR & 0x7FFF) && le(p + 24, 4) == 1,
          "error log entry: LBA %llu (want %llu), status %llx",
          (unsigned long long)le(p + 16, 8), (unsigned long long)bad_lba,
          (unsigned long long)le(p + 12, 2));
    /* the command's SQ and CID, which came with its block request */
    CHECK(le(p + 8, 2) == MOCK_BE_SQID(raw_tag) && le(p + 10, 2) == MOCK_BE_CID(raw_tag),
          "error log entry: SQID %llu CID %llxh, want %u %xh", (unsigned long long)le(p + 8, 2),
          (unsigned long long)le(p + 10, 2), MOCK_BE_SQID(raw_tag), MOCK_BE_CID(raw_tag));
    for (uint32_t d = 0; d < mock_dies(); d++)
        CHECK(mock_retry_level(d) == 0, "die %u left at read-retry level %u", d,
              mock_retry_level(d));
    CHECK(mock_stats.violations == 0, "violations %llu",
          (unsigned long long)mock_stats.violations);
    /* a boot puts the dies back at level 0: one left at level 5 by a lost retry */
    uint32_t l5 = F.retry_slot + 5;
    buf_write32(slot_addr(l5), 5);
    struct hal_flash_op sf = { .op = FLASH_SET_FEATURES, .plane_mask = 1, .column = 0x89,
                               .length = 4, .buffer = (uint16_t)l5 };
    flash_op_addr(&sf, 1);
    flash_sync(&sf);
    CHECK(mock_retry_level(1) == 5, "SET FEATURES 89h to level 5: level %u",
          mock_retry_level(1));
    flush();
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    CHECK(mock_retry_level(1) == 0, "after a boot: level %u", mock_retry_level(1));
    for (uint64_t l = 0; l < n; l += spu())
        if (l < bad_lo || l >= bad_hi)
            rd(l, spu(), 8);
    drain();
    CHECK(raw_io(0x02, bad_lba, spu(), 1) == NVME_SC_UNRECOVERED_READ_ERROR,
          "the lost page after a power cycle");
    /* written again, it reads back */
    wr(bad_lo, (uint32_t)(bad_hi - bad_lo), 99, 1, 0);
    rd(bad_lo, (uint32_t)(bad_hi - bad_lo), 1);
    /* the drive off for a long while: every page it holds (directory, checkpoint, journal,
     * data) reads only at level 2; the boot's probes go through read retry and find them */
    flush();
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    mock_read_shift_all(2);
    boot();
    CHECK(!F.failed && F.ckpt_loaded, "aged checkpoint not loaded (failed %d)", F.failed);
    /* (the counters the boot loads are the checkpoint's: the mock counts its retries) */
    CHECK(mock_stats.retry_sets > F.n_targets, "the boot set %llu read-retry levels",
          (unsigned long long)mock_stats.retry_sets);
    for (uint64_t l = 0; l < n; l += spu())
        rd(l, spu(), 8);        /* the lost page's LBAs too: written again above */
    drain();
    printf("retry: %u pages shifted, %llu reads again, %llu recovered, %llu blocks refreshed, "
           "%llu units lost, 1 unrecoverable page\n", shifted / 2, (unsigned long long)retries,
           (unsigned long long)recovered, (unsigned long long)refreshed,
           (unsigned long long)lost);
}

/* Grown bad blocks eat the spare: Available Spare falls, below 10 % the spare warning (bit 0,
 * an AER); with none left the drive goes read-only (bit 3): writes refused with Namespace
 * Is Write Protected, reads still return every byte, across a power cycle. */
static void t_spare(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    struct mock_cpl c = get_log(0x02, 512, 0, false);
    uint8_t *p = mock_host + HOST_DATA;
    CHECK(c.status == 0 && p[0] == 0 && p[3] == 100 && p[4] == 10, "new drive: warning %02x "
          "spare %u threshold %u", p[0], p[3], p[4]);
    uint32_t design = F.spare_design, last = 100;
    CHECK(design >= 2, "the test drive has %u spare blocks", design);
    /* one erase failure at a time: the free block each die takes next (the lowest erase
     * count) fails its erase, until one of them has */
    for (uint32_t k = 0; k < design + 2; k++) {
        int32_t before = F.spare_left;
        for (uint32_t d = 0; d < F.n_dies; d++) {
            int32_t best = -1;
            for (uint32_t b = 0; b < F.nblk; b++) {
                const struct blk_info *bi = &F.blk[bidx(d, b)];
                if (bi->state == BLK_FREE &&
                    (best < 0 || bi->erase_count < F.blk[bidx(d, (uint32_t)best)].erase_count))
                    best = (int32_t)b;
            }
            if (best >= 0)
                mock_fail_next_erase(d, (uint32_t)best * F.planes);
        }
        for (int i = 0; i < 4000 && F.spare_left >= before; i++)
            wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 1, 0);
        mock_clear_faults();
        c = get_log(0x02, 512, 0, false);
        CHECK(p[3] < last || p[3] == 0, "spare %u after %u failures", p[3], k + 1);
        last = p[3];
        if (F.spare_left <= 0)
            break;
        CHECK(p[3] >= 10 || (p[0] & 1), "spare %u%% with no warning", p[3]);
    }
    CHECK(F.spare_left <= 0, "spare left %d", F.spare_left);
    c = get_log(0x02, 512, 0, false);
    CHECK(p[3] == 0 && (p[0] & 0x09) == 0x09, "no spare: warning %02x spare %u", p[0], p[3]);
    CHECK(raw_io(0x01, 0, 8, 1) == NVME_SC_NAMESPACE_WRITE_PROTECTED, "write when read-only");
    verify_all(64, 8);
    flush();
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    CHECK(ftl_read_only(), "read-only forgotten by a power cycle");
    verify_all(64, 8);
    printf("spare: %u spare blocks by design; read-only after they went bad\n", design);
}

static void t_format(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    uint32_t *d = SQE(0x80, 1);
    d[10] = 1;
    CHECK(admin(d).status == NVME_SC_INVALID_FORMAT, "LBAF 1");
    d[10] = 1u << 5;
    CHECK(admin(d).status == NVME_SC_INVALID_FORMAT, "PI 1");
    d[10] = 3u << 9;
    CHECK(admin(d).status == NVME_SC_INVALID_FIELD, "SES 3");
    d[1] = 2;
    d[10] = 0;
    CHECK(admin(d).status == NVME_SC_INVALID_NAMESPACE, "nsid 2");
    uint64_t erases = vendor(24);
    d[1] = 1;
    d[10] = 1u << 9;
    CHECK(admin(d).status == 0, "format SES 1");
    CHECK(vendor(24) >= erases + F.n_dies * F.nblk - 4, "every block erased");
    memset(shadow, 0, ns_bytes);
    verify_all(64, 8);
    /* the drive works after format and across a restart */
    for (int i = 0; i < 500; i++)
        wr(rnd() % (n - 8), 1 + (uint32_t)(rnd() % 8), rnd(), 4, 0);
    drain();
    d[1] = NVME_NSID_ALL;
    d[10] = 2u << 9;
    CHECK(admin(d).status == 0, "format SES 2 (crypto -> user data erase)");
    memset(shadow, 0, ns_bytes);
    mock_power_cycle();
    boot();
    verify_all(64, 8);
}

static void t_fua(void)
{
    setup(cfg_default());
    create_io_queue_pair();
    /* FUA writes reach the flash before completing: programs were issued and done */
    uint64_t p0 = mock_stats.programs;
    wr(0, 8, 1, 1, 1u << 14);
    CHECK(mock_stats.programs > p0, "FUA write completed without a program");
    /* with the volatile write cache off, every write is written through */
    CHECK(setf(0x06, 0, false).status == 0, "VWC off");
    p0 = mock_stats.programs;
    wr(8, 8, 2, 1, 0);
    CHECK(mock_stats.programs > p0, "write-through without VWC");
    /* with it on, a 4 KiB write stays in the buffer */
    CHECK(setf(0x06, 1, false).status == 0, "VWC on");
    p0 = mock_stats.programs;
    wr(16, 8, 3, 1, 0);
    CHECK(mock_stats.programs == p0, "cached write programmed at once");
    verify_all(64, 8);
}

/* Power loss (no shutdown) after a Flush and a drive's worth of unflushed writes with GC:
 * every unit reads as its flushed version or its newer one, never anything else. */
static void t_powerloss(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas, units = n / spu(), ub = 4096;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l + 11, 8, 0);
    drain();
    flush();
    uint8_t *flushed = malloc(ns_bytes);
    memcpy(flushed, shadow, ns_bytes);
    uint32_t *perm = malloc(units * 4);
    for (uint32_t i = 0; i < units; i++)
        perm[i] = i;
    for (uint32_t i = units - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(rnd() % (i + 1)), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    uint64_t saves0 = vendor(88);
    for (uint32_t i = 0; i < units * 9 / 10; i++)
        wr((uint64_t)perm[i] * spu(), spu(), rnd(), 8, 0);
    drain();
    CHECK(vendor(16) > 0, "no GC after the flush");
    CHECK(vendor(88) > saves0, "GC released no blocks through a checkpoint");
    CHECK(vendor(128) == 0, "pending blocks reused: %llu", (unsigned long long)vendor(128));
    mock_power_cycle();
    boot();
    uint64_t old = 0, cur = 0;
    for (uint64_t u = 0; u < units; u++) {
        uint8_t t = free_tag(1);
        tag_busy[t] = true;
        inflight++;
        mock_push_be(t, 0x02, u * spu(), (uint16_t)(spu() - 1), 0, 1);
        drain();
        CHECK(last_status[t] == 0, "read status");
        if (!memcmp(tag_buf(t), flushed + u * ub, ub))
            old++;
        else if (!memcmp(tag_buf(t), shadow + u * ub, ub))
            cur++;
        else
            CHECK(0, "unit %llu is neither its flushed nor its newer data",
                  (unsigned long long)u);
    }
    printf("powerloss: %llu units flushed version, %llu newer\n", (unsigned long long)old,
           (unsigned long long)cur);
    get_log(0x02, 512, 0, false);
    CHECK(le(mock_host + HOST_DATA + 144, 8) == 1, "unsafe shutdown counted");
    free(flushed);
    free(perm);
}

/* 4 KiB LBAs (lbads 12), one plane, 16 KiB pages, 1 channel x 4 ways: random writes,
 * deallocate, restart. */
static void t_lba4k(void)
{
    struct mock_cfg c = cfg_default();
    c.lbads = 12;
    c.planes = 1;
    c.page_bytes = 16384;
    c.n_channels = 1;
    c.n_ways = 4;
    setup(c);
    uint64_t n = F.ns_lbas;
    CHECK(n == F.user_units, "one LBA per unit");
    for (uint64_t l = 0; l < n; l += 8)
        wr(l, (uint32_t)(n - l < 8 ? n - l : 8), l, 8, 0);
    for (int i = 0; i < 3000; i++)
        wr(rnd() % (n - 4), 1 + (uint32_t)(rnd() % 4), rnd(), 8, 0);
    drain();
    deallocate(100, 37);
    verify_all(8, 8);
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    verify_all(8, 8);
    CHECK(mock_stats.violations == 0, "violations");
}

/* A main RAM too small for the p2l table: it goes to buffer memory (above the write
 * buffer), the drive still keeps every byte across writes, GC and a restart. */
extern uint32_t fw_host_heap_bytes;
static void t_smallram(void)
{
    struct mock_cfg c = cfg_default();
    c.buf_slots = 320;
    fw_host_heap_bytes = 40u << 10;
    setup(c);
    CHECK(fw_alloc_used_buf() >= F.raw_units * 4, "p2l not in buffer memory (%u bytes)",
          fw_alloc_used_buf());
    CHECK(F.grp_base + F.n_grp * F.pu_units <=
          c.buf_slots - (fw_alloc_used_buf() + SLOT_BYTES - 1) / SLOT_BYTES,
          "write buffer overlaps the tables");
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    for (uint64_t i = 0; i < n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    verify_all(64, 8);
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    verify_all(64, 8);
}

/* Few blocks per die (like the scaled personas): GC with its reserve only, random
 * overwrites of 3 drives' worth, sub-unit writes, all data back. */
static void t_tight(void)
{
    struct mock_cfg c = cfg_default();
    c.blocks_per_plane = 10;
    c.n_ways = 1;
    setup(c);
    uint64_t n = F.ns_lbas;
    printf("tight: %u user units of %u raw\n", F.user_units, F.raw_units);
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    for (uint64_t i = 0; i < 3 * n / spu(); i++) {
        if (i % 7 == 0)
            wr(rnd() % (n - 3), 1 + (uint32_t)(rnd() % 3), rnd(), 8, 0);
        else
            wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    }
    drain();
    verify_all(64, 8);
    CHECK(vendor(16) > 0 && mock_stats.violations == 0, "GC ran, no violations");
}

/* Two LUNs per chip enable (a LUN is a die): bring-up resets and sets each target once, the
 * stripe and GC use every (channel, way, LUN), whole drive plus random overwrites (GC),
 * deallocate (TRIM) and a restart keep every byte; a parameter page stating another LUN
 * count fails the bring-up. */
static void t_luns(void)
{
    struct mock_cfg c = cfg_default();
    c.luns = 2;
    c.param_luns = 1;
    cfg = c;
    mock_init(&cfg);
    CHECK(!fw_init(), "bring-up must fail when the parameter page has 1 LUN, the build 2");
    mock_free();
    c.param_luns = 0;
    setup(c);
    CHECK(F.n_dies == 8 && F.n_targets == 4, "dies %u targets %u", F.n_dies, F.n_targets);
    CHECK(mock_stats.resets == 4 && mock_stats.set_features == 4,
          "bring-up: %llu resets, %llu SET FEATURES (one per target)",
          (unsigned long long)mock_stats.resets, (unsigned long long)mock_stats.set_features);
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    for (uint32_t d = 0; d < F.n_dies; d++) {
        bool any = false;
        for (uint32_t b = 0; b < cfg.blocks_per_plane * cfg.planes && !any; b++)
            any = mock_block_programmed(d, b);
        CHECK(any, "die %u (LUN %u) never programmed", d, d / F.n_targets);
    }
    for (uint64_t i = 0; i < 2 * n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    CHECK(vendor(16) > 1000, "GC moved only %llu units", (unsigned long long)vendor(16));
    deallocate(100, 300);
    verify_all(64, 8);
    mock_set_shutdown(1);
    fw_poll();
    mock_power_cycle();
    boot();
    verify_all(64, 8);
    CHECK(mock_stats.violations == 0, "violations");
}

/* The shape of tests/system/drive/test_drive_luns.py (crucial-m500-960 at 2 channels x 1 way
 * x 2 LUNs, 16 KiB pages, 16 x 16 blocks and pages, one queue of 32): the whole drive in 128
 * KiB writes in random order, half as many 4 KiB overwrites, eight trims, every LBA read back
 * at QD 1. */
static void t_luns_drive(void)
{
    struct mock_cfg c = cfg_default();
    c.luns = 2;
    c.n_ways = 1;
    c.page_bytes = 16384;
    c.spare_bytes = 1024;
    c.tag_width = 5;
    c.max_transfer = 131072;
    c.n_io_queues = 1;
    c.buf_slots = 4096;
    setup(c);
    uint64_t n = F.ns_lbas, chunk = 256, nc = (n + chunk - 1) / chunk;
    uint64_t *order = malloc(nc * sizeof(*order));
    for (uint64_t i = 0; i < nc; i++)
        order[i] = i * chunk;
    for (uint64_t i = nc - 1; i > 0; i--) {
        uint64_t j = rnd() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (uint64_t i = 0; i < nc; i++)
        wr(order[i], (uint32_t)(n - order[i] < chunk ? n - order[i] : chunk), rnd(), 1, 0);
    free(order);
    for (uint64_t i = 0; i < n / spu() / 2; i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 1, 0);
    for (int i = 0; i < 8; i++) {
        uint32_t k = 1 + rnd() % 2047;
        deallocate(rnd() % (n - k), k);
    }
    verify_all(chunk, 1);
    CHECK(vendor(16) > 0 && mock_stats.violations == 0, "GC moved %llu, violations",
          (unsigned long long)vendor(16));
}

/* Per-request firmware time on the host (mock included): 4 KiB writes and reads, QD 16. */
static void t_perf(void)
{
    setup(cfg_default());
    uint64_t units = F.ns_lbas / spu(), nreq = 20000;
    if (getenv("PERF_N"))
        nreq = strtoull(getenv("PERF_N"), NULL, 0);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (uint64_t i = 0; i < nreq; i++)
        wr((i % units) * spu(), spu(), i, 16, 0);
    drain();
    clock_gettime(CLOCK_MONOTONIC, &b);
    double w = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)nreq;
    if (getenv("PERF_WRITES_ONLY"))     /* for instruction counts of the write phase alone */
        return;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (uint64_t i = 0; i < nreq; i++)
        rd((rnd() % units) * spu(), spu(), 16);
    drain();
    clock_gettime(CLOCK_MONOTONIC, &b);
    double r = ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) / (double)nreq;
    printf("perf: %.0f ns per 4 KiB write, %.0f ns per 4 KiB read (host, mock and checks "
           "included)\n", w, r);
}

/* The release of GC's emptied blocks runs beside host writes, and frees its blocks only once
 * its journal commit is on flash: checked after every poll of a random-overwrite run. */
static uint8_t *rel_in;                 /* blocks of the release being watched */
static bool rel_watch;
static uint64_t rel_watched, rel_by_ckpt, rel_open_writes, rel_writes, rel_ckpt0;
static uint32_t rel_jnl_w;              /* its commit, once seen */
static bool rel_jnl_seen;

static void release_check(void)
{
    if (!rel_watch && F.rel_state == REL_GROUPS) {
        for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
            rel_in[b] = F.blk[b].state == BLK_RELEASING;
            CHECK(!rel_in[b] || F.blk[b].valid == 0, "releasing block %u holds %u units", b,
                  F.blk[b].valid);
        }
        rel_watch = true;
        rel_jnl_seen = false;
        rel_ckpt0 = C.ckpt_saves;
        return;
    }
    if (!rel_watch)
        return;
    bool freed = false;
    for (uint32_t b = 0; b < F.n_dies * F.nblk && !freed; b++)
        freed = rel_in[b] && F.blk[b].state != BLK_RELEASING;
    if (!freed) {
        if (F.rel_state == REL_COMMIT) {
            rel_jnl_w = F.rel_jnl;
            rel_jnl_seen = true;
        }
        return;
    }
    /* its commit on flash; or a whole checkpoint (the journal's area full) covered them; or
     * it ended inside one poll and the next release is under way (a write waited for it:
     * ftl_release_pending returns only once the commit is on flash) */
    bool ok = rel_jnl_seen ? jnl_durable(rel_jnl_w)
                           : F.rel_state != REL_IDLE || jnl_durable(F.rel_jnl);
    CHECK(ok || C.ckpt_saves != rel_ckpt0,
          "a release freed its blocks before its commit was on flash");
    rel_by_ckpt += C.ckpt_saves != rel_ckpt0;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        CHECK(!rel_in[b] || F.blk[b].state != BLK_RELEASING, "block %u freed alone", b);
    rel_watched++;
    rel_watch = false;
}

static void t_release(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    rel_in = calloc(F.n_dies * F.nblk, 1);
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    poll_check = release_check;
    uint64_t waits0 = vendor(304), rel0 = vendor(232);
    for (uint64_t i = 0; i < 2 * n / spu(); i++) {
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
        rel_writes++;
        rel_open_writes += F.rel_state != REL_IDLE;
    }
    drain();
    poll_check = NULL;
    uint64_t releases = vendor(232) - rel0, waits = vendor(304) - waits0;
    printf("release: %llu releases, %llu watched to their end (%llu ended by a checkpoint), "
           "%llu waited for by a write; %llu of %llu writes submitted while one was under "
           "way\n", (unsigned long long)releases, (unsigned long long)rel_watched,
           (unsigned long long)rel_by_ckpt,
           (unsigned long long)waits, (unsigned long long)rel_open_writes,
           (unsigned long long)rel_writes);
    CHECK(rel_watched - rel_by_ckpt > 50, "only %llu releases watched",
          (unsigned long long)(rel_watched - rel_by_ckpt));
    /* a good part run beside the writes (the mock's flash moves only when polled, so a
     * release there takes more writes than on a drive: half of them are still waited for;
     * the drive's figures are in the README) */
    CHECK(waits * 4 < releases * 3, "%llu of %llu releases waited for",
          (unsigned long long)waits, (unsigned long long)releases);
    CHECK(rel_open_writes > releases, "no write went on during a release");
    verify_all(64, 8);
    free(rel_in);
}

/* A live checkpoint (the journal's area full in the middle of host writes) is written
 * beside them: writes keep completing while its pages are programmed, the journal's RAM
 * list does not overflow, and after a Flush and a power cycle every unit reads back. */
static bool live_was;
static uint64_t live_starts, live_done_during, live_done_last, live_polls;

static void live_check(void)
{
    bool busy = ckpt_live_busy();
    uint64_t done = io_count - inflight;
    live_starts += busy && !live_was;
    if (busy && live_was)
        live_done_during += done - live_done_last;
    live_polls += busy;
    live_done_last = done;
    live_was = busy;
    CHECK(J.n <= J.max, "journal list %u of %u", J.n, J.max);
}

static void t_live_ckpt(void)
{
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    drain();
    poll_check = live_check;
    uint64_t live0 = vendor(424), waits0 = vendor(432), saves0 = vendor(88);
    uint64_t writes = 3 * n / spu();
    for (uint64_t i = 0; i < writes; i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    poll_check = NULL;
    uint64_t live = vendor(424) - live0, waits = vendor(432) - waits0;
    printf("live_ckpt: %llu writes, %llu live checkpoints (%llu across polls, %llu "
           "checkpoints in all), %llu writes completed while one was written (%llu polls), %llu passes waited for a "
           "full journal list\n", (unsigned long long)writes, (unsigned long long)live,
           (unsigned long long)live_starts, (unsigned long long)(vendor(88) - saves0), (unsigned long long)live_done_during,
           (unsigned long long)live_polls, (unsigned long long)waits);
    /* most run across polls with host writes completing meanwhile; the rest start and end
     * inside one poll, where a write waits for a release of GC's blocks anyway (the mock's
     * small geometry keeps its dies short of free blocks) and the release needs the new
     * area */
    CHECK(live >= 2 && live_starts * 3 >= live * 2, "%llu live checkpoints, %llu across polls",
          (unsigned long long)live, (unsigned long long)live_starts);
    CHECK(live_done_during >= 4 * live_starts, "only %llu writes completed during %llu live "
          "saves", (unsigned long long)live_done_during, (unsigned long long)live_starts);
    flush();
    mock_power_cycle();
    boot();
    verify_all(64, 8);
    CHECK(mock_stats.violations == 0, "violations");
}

/* Room to write without GC: the free blocks' units and the unwritten pages of the blocks
 * being filled. GC's moves fill the open blocks first, so the free block count alone can
 * stand still while idle GC gains room (it then depends on how full the open blocks were
 * when the host stopped). */
static uint64_t room_units(void)
{
    uint64_t u = 0;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        const struct die_info *di = &F.die[d];
        u += (uint64_t)di->n_free * di->upb;
        if (di->active >= 0)
            u += (uint64_t)(F.ppb - di->next_page) * di->pu;
    }
    return u;
}

/* Idle-time GC: after random overwrites an idle host gets room back without writing, and
 * every byte stays. */
static void t_idle_gc(void)
{
    ftl_config.gc_idle_us = 0;          /* off while the drive is written */
    setup(cfg_default());
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l, 8, 0);
    for (uint64_t i = 0; i < n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    /* the release of GC's blocks under way finishes (beside host I/O, not idle GC) */
    for (int i = 0; i < 100; i++)
        fw_poll();
    uint64_t free0 = vendor(40), moved0 = vendor(16), room0 = room_units();
    for (int i = 0; i < 2000; i++)
        fw_poll();
    CHECK(vendor(144) == 0 && vendor(40) == free0, "no idle GC while it is off");
    ftl_config.gc_idle_us = 1;
    for (int i = 0; i < 20000; i++)
        fw_poll();
    uint64_t free1 = vendor(40), blocks = vendor(144), room1 = room_units();
    printf("idle_gc: free blocks %llu -> %llu, room %llu -> %llu units, %llu blocks reclaimed, "
           "%llu units moved\n", (unsigned long long)free0, (unsigned long long)free1,
           (unsigned long long)room0, (unsigned long long)room1, (unsigned long long)blocks,
           (unsigned long long)(vendor(16) - moved0));
    CHECK(blocks > 0 && room1 > room0, "idle GC: room %llu -> %llu units, blocks %llu",
          (unsigned long long)room0, (unsigned long long)room1, (unsigned long long)blocks);
    /* it stops: no die below the target has a block with a page of invalid units left */
    for (int i = 0; i < 2000; i++)
        fw_poll();
    CHECK(vendor(144) == blocks, "idle GC keeps going: %llu", (unsigned long long)vendor(144));
    ftl_config.gc_idle_us = 1000;
    verify_all(64, 8);
    CHECK(mock_stats.violations == 0, "violations");
}

/* The persona's over-provisioning and P/E budget, stated by the SoC, size the namespace and
 * the SMART percentage used. */
static void t_persona_op(void)
{
    struct mock_cfg c = cfg_default();
    c.op_permille = 224;                /* intel-750-400g: 400 GB of 480 GiB */
    c.pe_cycles = 10;
    setup(c);
    uint64_t avail = F.raw_units - (uint64_t)(F.n_sys + 1) * F.upb;  /* + the directory */
    CHECK(F.user_units == avail * 776 / 1000, "user units %u of %llu available", F.user_units,
          (unsigned long long)avail);
    CHECK(ftl_config.pe_budget == 10, "P/E budget %u", ftl_config.pe_budget);
    ftl_config.op_permille = 70;        /* the defaults, for the tests that follow */
    ftl_config.pe_budget = 3000;
}


/* The SLC write cache (ftl_slc.c) on a TLC drive: a burst lands in SLC blocks (5 of 16
 * pages), the cache fills and writes go native, idle time folds it back, the next burst is
 * cached again, and the blocks' SLC mode survives a restart (reads of SLC data are SLC
 * reads: the mock, like the dies, counts an op in the wrong mode). */
static void t_slc_static(void)
{
    ftl_config.gc_idle_us = 0;
    struct mock_cfg c = cfg_default();
    c.bits_per_cell = 3;
    c.slc_policy = SLC_STATIC;
    c.slc_permille = 125;               /* 4 of 32 blocks per die */
    setup(c);
    CHECK(F.slc_ppb == 5 && F.slc_max == 4, "SLC pages %u, blocks per die %u", F.slc_ppb,
          F.slc_max);
    uint64_t cache_units = vendor(184) * vendor(192);
    CHECK(cache_units == 4ull * 4 * 5 * F.pu_units, "cache units %llu",
          (unsigned long long)cache_units);
    /* a burst under the cache size: every program is an SLC program */
    uint32_t burst = (uint32_t)(cache_units / 2) * spu();
    for (uint32_t l = 0; l < burst; l += 64)
        wr(l, 64, l + 11, 8, 0);
    drain();
    flush();
    CHECK(vendor(152) > 0 && vendor(152) == vendor(8),
          "burst: %llu SLC units of %llu programmed", (unsigned long long)vendor(152),
          (unsigned long long)(vendor(8)));
    /* past the cache: it fills (every die at its limit), then the writes go native */
    uint64_t n = F.ns_lbas;
    for (uint64_t l = burst; l < n / 2; l += 64)
        wr(l, 64, l + 11, 8, 0);
    drain();
    uint64_t slc1 = vendor(152), nand1 = vendor(8);
    printf("slc_static: cache %llu units; %llu of %llu units programmed in SLC, %llu SLC "
           "blocks\n", (unsigned long long)cache_units, (unsigned long long)slc1,
           (unsigned long long)nand1, (unsigned long long)vendor(176));
    CHECK(slc1 <= cache_units + F.n_dies * F.pu_units && nand1 > slc1 + cache_units,
          "cache overflowed: %llu SLC of %llu", (unsigned long long)slc1,
          (unsigned long long)nand1);
    CHECK(vendor(176) == vendor(184), "cache not full: %llu of %llu blocks",
          (unsigned long long)vendor(176), (unsigned long long)vendor(184));
    verify_all(64, 8);
    CHECK(mock_stats.slc_reads > 0, "no SLC read");
    /* idle time folds the cache into native blocks */
    ftl_config.gc_idle_us = 1;
    for (int k = 0; k < 20 && vendor(176); k++)
        for (int i = 0; i < 2000; i++)
            fw_poll();
    printf("slc_static: idle folded %llu blocks (%llu units)\n",
           (unsigned long long)vendor(160), (unsigned long long)vendor(168));
    CHECK(vendor(176) == 0 && vendor(160) >= 16 && vendor(168) > 0,
          "fold: %llu SLC blocks left, %llu folded", (unsigned long long)vendor(176),
          (unsigned long long)vendor(160));
    ftl_config.gc_idle_us = 0;
    verify_all(64, 8);
    /* the next burst is cached again */
    for (uint32_t l = 0; l < burst; l += 64)
        wr(l, 64, l + 77, 8, 0);
    drain();
    flush();
    CHECK(vendor(152) - slc1 >= (uint64_t)burst / spu(), "after idle: %llu SLC units",
          (unsigned long long)(vendor(152) - slc1));
    /* SLC data across a restart: the checkpoint keeps each block's mode */
    mock_power_cycle();
    boot();
    uint64_t reads0 = mock_stats.slc_reads;
    verify_all(64, 8);
    CHECK(mock_stats.slc_reads > reads0, "no SLC read after the restart");
    CHECK(mock_stats.slc_violations == 0 && mock_stats.violations == 0,
          "%llu ops in the wrong mode, %llu violations",
          (unsigned long long)mock_stats.slc_violations,
          (unsigned long long)mock_stats.violations);
    ftl_config.gc_idle_us = 1000;
}

/* A dynamic cache on an MLC drive: taken from free space, so it gives way as the drive
 * fills; the whole drive written and overwritten at random through GC stays intact. */
static void t_slc_dynamic(void)
{
    struct mock_cfg c = cfg_default();
    c.slc_policy = SLC_DYNAMIC;
    c.slc_permille = 250;
    setup(c);
    CHECK(F.slc_ppb == 8 && F.slc_max == 8, "SLC pages %u, blocks per die %u", F.slc_ppb,
          F.slc_max);
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l + 3, 8, 0);
    for (uint64_t i = 0; i < 2 * n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    printf("slc_dynamic: %llu of %llu units programmed in SLC, %llu SLC blocks now, "
           "%llu units moved by GC\n", (unsigned long long)vendor(152),
           (unsigned long long)(vendor(8)), (unsigned long long)vendor(176),
           (unsigned long long)vendor(16));
    CHECK(vendor(152) > 0, "no SLC program");
    verify_all(64, 8);
    CHECK(mock_stats.slc_violations == 0 && mock_stats.violations == 0,
          "%llu ops in the wrong mode, %llu violations",
          (unsigned long long)mock_stats.slc_violations,
          (unsigned long long)mock_stats.violations);
}

/* Mixed parts (intel-750-400g's two dies): die 3 (channel 1, way 1) has half the page of the
 * others. Its groups hold half the units (plane p's at p x the main part's stride), its
 * programs and GC reads are its page long, its factory markers sit after its own page; the
 * capacity counts what the dies hold. The whole drive written, overwritten through GC,
 * trimmed, read back, and again after a restart. */
static void t_mixed(void)
{
    struct mock_cfg c = cfg_default();
    c.part2_page_bytes = 4096;
    c.part2_spare_bytes = 224;
    c.part2_mask = 1u << 3;             /* target 3 = way 1 x 2 channels + channel 1 */
    mock_init(&c);
    mock_factory_bad(3, 7 * 2);         /* found at the small die's own spare column */
    /* the first programs of die 2 fail: their groups go to the next die of the stripe, and
     * die 3's page cannot take them (blocks 1 and 2: block 0 holds the system directory) */
    mock_fail_next_program(2, 2);
    mock_fail_next_program(2, 4);
    cfg = c;
    boot();
    shadow = calloc(1, ns_bytes);
    CHECK(F.mixed && F.die[3].pu == 2 && F.die[2].pu == 4 && F.die[7 % F.n_dies].upp,
          "die units per page: %u %u", F.die[3].pu, F.die[2].pu);
    CHECK(vendor(56) == 32ull * 16 * (3 * 4 + 2), "data units %llu",
          (unsigned long long)vendor(56));
    CHECK(F.blk[bidx(3, 7)].state == BLK_BAD, "the small die's factory bad block");
    uint64_t n = F.ns_lbas;
    for (uint64_t l = 0; l < n; l += 64)
        wr(l, (uint32_t)(n - l < 64 ? n - l : 64), l + 9, 8, 0);
    for (uint64_t i = 0; i < n / spu(); i++)
        wr((rnd() % (n / spu())) * spu(), spu(), rnd(), 8, 0);
    drain();
    deallocate(300, 700);
    verify_all(64, 8);
    printf("mixed: %u user units, %llu programmed, GC moved %llu\n", F.user_units,
           (unsigned long long)vendor(8), (unsigned long long)vendor(16));
    CHECK(vendor(16) > 0, "GC never ran");
    CHECK(vendor(32) >= 3, "%llu bad blocks", (unsigned long long)vendor(32));
    CHECK(mock_stats.violations == 0, "%llu violations",
          (unsigned long long)mock_stats.violations);
    flush();
    mock_power_cycle();
    boot();
    verify_all(64, 8);
    CHECK(mock_stats.violations == 0, "%llu violations",
          (unsigned long long)mock_stats.violations);
}


/* --- power cuts ------------------------------------------------------------------------- */

/*
 * The power-cut campaign: random writes (some FUA), sequential writes, Flush and deallocate
 * at up to 8 in flight on a full drive (so GC, journal pages and checkpoints run), with the
 * volatile write cache off in some rounds; power is cut at a random event of the mock (a
 * flash op torn, or a completion never posted; mock_cut_at), sometimes again during the boot
 * that follows. After each boot every LBA is read and checked against a host model:
 *  - it holds its own data (LBA number and key in its first words, the key's pattern after
 *    them) or zeroes, never another LBA's data or garbage;
 *  - its key is the newest durable write's (a FUA write, any write with the cache off, a
 *    write completed before a completed Flush was submitted) or a newer one's; never older;
 *  - the SMART unsafe shutdown count went up by one.
 */
#define PC_MAX_RECS 4096
struct pc_rec { uint64_t slba; uint32_t nlb, key; uint8_t trim, flush, done, tag; uint64_t at; };
static struct pc_rec pc[PC_MAX_RECS];
static uint32_t pc_n, pc_key = 1;
static uint32_t *pc_base;       /* per LBA: the key it held when the round started (0: zeroes) */
static int32_t *pc_dur;         /* per LBA: the newest durable record of the round, -1 none */
static int32_t pc_tag_rec[256];
static uint64_t pc_clock;       /* completions and submissions, in order */
static bool pc_vwc;
static bool pc_clean;           /* the cut found the flash as a shutdown left it */
/* flash programs + erases when this round's last shutdown completed (UINT64_MAX: none): a
 * power loss that finds the flash as the shutdown left it is not one the drive can count */
static uint64_t pc_flash_mark;
static bool pc_shn;             /* a shutdown was requested and had not completed */

static void pc_fill(uint8_t *p, uint64_t lba, uint32_t key)
{
    uint32_t w[2] = { (uint32_t)lba, key };
    fill_pattern(p, lba_bytes, (uint64_t)key << 32 | (uint32_t)lba);
    memcpy(p, w, 8);
}

static void pc_durable(int32_t j)
{
    for (uint64_t l = pc[j].slba; l < pc[j].slba + pc[j].nlb; l++)
        if (pc_dur[l] < j)
            pc_dur[l] = j;
}

static void pc_complete(int32_t j)
{
    pc[j].done = 1;
    uint64_t at = ++pc_clock;
    if (pc[j].flush) {
        /* every write completed before the Flush was submitted is durable */
        for (int32_t i = 0; i < (int32_t)pc_n; i++)
            if (!pc[i].flush && pc[i].done && pc[i].at < pc[j].at)
                pc_durable(i);
    } else if (!pc[j].trim) {
        bool fua = pc[j].tag & 0x80;
        if (fua || !pc_vwc)
            pc_durable(j);
    }
    pc[j].at = at;
}

static void pc_reap(void)
{
    uint8_t t;
    uint16_t st;
    while (mock_pop_be_cpl(&t, &st)) {
        CHECK(tag_busy[t] && pc_tag_rec[t] >= 0, "completion of idle tag %u", t);
        CHECK(st == 0, "status %x of record %d", st, pc_tag_rec[t]);
        tag_busy[t] = false;
        inflight--;
        pc_complete(pc_tag_rec[t]);
        pc_tag_rec[t] = -1;
    }
}

static bool pc_overlaps(uint64_t slba, uint32_t nlb)
{
    for (uint32_t t = 0; t < (1u << cfg.tag_width); t++)
        if (tag_busy[t] && pc_tag_rec[t] >= 0) {
            const struct pc_rec *r = &pc[pc_tag_rec[t]];
            if (!r->flush && slba < r->slba + r->nlb && r->slba < slba + nlb)
                return true;
        }
    return false;
}

static uint8_t pc_tag(void)
{
    for (;;) {
        if (inflight < 8)
            for (uint32_t t = 0; t < (1u << cfg.tag_width); t++)
                if (!tag_busy[t])
                    return (uint8_t)t;
        fw_poll();
        pc_reap();
    }
}

static void pc_submit(uint8_t opc, uint64_t slba, uint32_t nlb, bool fua)
{
    uint8_t t = pc_tag();
    CHECK(pc_n < PC_MAX_RECS, "too many records in a round");
    int32_t j = (int32_t)pc_n++;
    pc[j] = (struct pc_rec){ .slba = slba, .nlb = nlb, .key = opc == 0x01 ? pc_key++ : 0,
                             .flush = opc == 0x00, .tag = (uint8_t)(fua ? 0x80 : 0),
                             .at = ++pc_clock };
    if (opc == 0x01)
        for (uint32_t i = 0; i < nlb; i++)
            pc_fill(tag_buf(t) + i * lba_bytes, slba + i, pc[j].key);
    tag_busy[t] = true;
    pc_tag_rec[t] = j;
    inflight++;
    mock_push_be(t, opc, slba, (uint16_t)(nlb - 1), fua ? 1u << 14 : 0, 1);
}

static void pc_trim(uint64_t slba, uint32_t nlb)
{
    int32_t j = (int32_t)pc_n++;
    pc[j] = (struct pc_rec){ .slba = slba, .nlb = nlb, .trim = 1, .at = ++pc_clock };
    uint32_t range[4] = { 0, nlb, (uint32_t)slba, (uint32_t)(slba >> 32) };
    memcpy(mock_host + HOST_DATA, range, 16);
    uint32_t *d = SQE(0x09, 1);
    d[6] = HOST_DATA;
    d[11] = 0x4;
    CHECK(admin_on(1, d).status == 0, "DSM");
    pc_complete(j);
}

static void pc_drain(void)
{
    while (inflight) {
        fw_poll();
        pc_reap();
    }
}

/* Format NVM (SES 0): every LBA deallocated, durable once it completes. */
static void pc_format(void)
{
    pc_drain();
    int32_t j = (int32_t)pc_n++;
    pc[j] = (struct pc_rec){ .slba = 0, .nlb = (uint32_t)F.ns_lbas, .trim = 1, .at = ++pc_clock };
    uint32_t *d = SQE(0x80, 1);
    CHECK(admin(d).status == 0, "format");
    pc_complete(j);
    pc_durable(j);
}

/* A normal shutdown (its checkpoint), then the controller in use again: everything completed
 * before it is durable. */
static void pc_shutdown(void)
{
    pc_drain();
    int32_t j = (int32_t)pc_n++;
    pc[j] = (struct pc_rec){ .flush = 1, .at = ++pc_clock };
    mock_set_shutdown(1);
    pc_shn = true;
    for (int i = 0; i < 100000 && !mock_shutdown_done(); i++)
        fw_poll();
    CHECK(mock_shutdown_done(), "shutdown");
    pc_shn = false;
    pc_complete(j);
    pc_flash_mark = mock_stats.programs + mock_stats.erases;
    mock_set_shutdown(0);
    fw_poll();
}

/* One round of the workload, `ops` commands. */
/* One round of commands. gc: small random overwrites, Flushes and polls only (no trim,
 * format or shutdown, whose checkpoints free GC's blocks at once): GC and its releases. */
static void pc_round(uint32_t ops, uint64_t *seq_lba, bool gc)
{
    uint64_t n = F.ns_lbas;
    for (uint32_t k = 0; k < ops; k++) {
        uint32_t r = (uint32_t)(rnd() % 100);
        if (gc)
            r = r < 80 ? r * 60 / 80 : r < 88 ? 80 : 99;
        uint64_t slba;
        uint32_t nlb;
        if (r < 60) {
            nlb = 1 + (uint32_t)(rnd() % 16);
            slba = rnd() % (n - nlb);
        } else if (r < 78) {
            nlb = 64;
            if (*seq_lba + nlb > n)
                *seq_lba = 0;
            slba = *seq_lba;
            *seq_lba += nlb;
        } else if (r < 84) {
            pc_submit(0x00, 0, 1, false);
            continue;
        } else if (r < 87) {
            nlb = 8 + (uint32_t)(rnd() % 249);
            slba = rnd() % (n - nlb);
            if (!pc_overlaps(slba, nlb))
                pc_trim(slba, nlb);
            continue;
        } else if (r == 87 && rnd() % 4 == 0) {
            pc_format();
            continue;
        } else if (r == 88) {
            pc_shutdown();
            continue;
        } else {
            for (int i = 0; i < 20; i++) {
                fw_poll();
                pc_reap();
            }
            continue;
        }
        if (pc_overlaps(slba, nlb))
            continue;
        pc_submit(0x01, slba, nlb, rnd() % 8 == 0);
    }
    pc_drain();
}

/* After a boot: every LBA against the model; the contents found become the next round's
 * starting point. Returns the LBAs that held a round's newer (not durable) data. */
static uint64_t pc_check(void)
{
    uint64_t n = F.ns_lbas, newer = 0;
    uint8_t *want = malloc(lba_bytes);
    for (uint64_t base = 0; base < n; base += 64) {
        uint32_t nlb = (uint32_t)(n - base < 64 ? n - base : 64);
        uint8_t t = 0;
        tag_busy[t] = true;
        inflight = 1;
        pc_tag_rec[t] = -1;
        mock_push_be(t, 0x02, base, (uint16_t)(nlb - 1), 0, 1);
        uint16_t st = 0xFFFF;
        for (int i = 0; i < 100000 && st == 0xFFFF; i++) {
            fw_poll();
            mock_pop_be_cpl(&t, &st);
        }
        tag_busy[0] = false;
        inflight = 0;
        CHECK(st == 0, "read status %x at LBA %llu", st, (unsigned long long)base);
        for (uint32_t i = 0; i < nlb; i++) {
            uint64_t l = base + i;
            const uint8_t *p = tag_buf(0) + i * lba_bytes;
            uint32_t w[2];
            memcpy(w, p, 8);
            uint32_t key = 0;
            bool zero = true;
            for (uint32_t b = 0; b < lba_bytes && zero; b++)
                zero = p[b] == 0;
            if (!zero) {
                CHECK(w[0] == (uint32_t)l, "LBA %llu holds LBA %u's data (key %u)",
                      (unsigned long long)l, w[0], w[1]);
                pc_fill(want, l, w[1]);
                CHECK(!memcmp(p, want, lba_bytes), "LBA %llu: garbage (key %u)",
                      (unsigned long long)l, w[1]);
                key = w[1];
            }
            int32_t d = pc_dur[l];
            uint32_t dkey = d < 0 ? pc_base[l] : pc[d].key;
            bool ok = key == dkey;
            for (int32_t j = d + 1; j < (int32_t)pc_n && !ok; j++)
                ok = !pc[j].flush && l >= pc[j].slba && l < pc[j].slba + pc[j].nlb &&
                     pc[j].key == key;
            CHECK(ok, "LBA %llu holds key %u: the durable one is %u (record %d of %u)%s",
                  (unsigned long long)l, key, dkey, d, pc_n,
                  key && key < dkey ? ": older data came back" : "");
            newer += key != dkey;
            pc_base[l] = key;
            pc_dur[l] = -1;
        }
    }
    free(want);
    pc_n = 0;
    return newer;
}

static uint64_t smart_unsafe(void)
{
    get_log(0x02, 512, 0, false);
    return le(mock_host + HOST_DATA + 144, 8);
}

/* The journal page of a release's commit (GC's emptied blocks freed once it is on flash):
 * pushed while the release waits for it. A cut in the window after it finds the blocks
 * taken and erased if the firmware freed them early. */
static bool pc_release_commit(const struct hal_flash_op *op)
{
    return op->op == FLASH_PROGRAM && F.rel_state == REL_COMMIT;
}

/* A page of a checkpoint written beside host I/O (the journal's area full, ckpt_live_start):
 * a cut after it finds the new area torn, the old one with its journal. */
static uint64_t pc_live0;        /* live checkpoints before the round */

static bool pc_live_ckpt(const struct hal_flash_op *op)
{
    return op->op == FLASH_PROGRAM && ckpt_live_busy() && C.ckpt_live_saves > pc_live0;
}

static void powercut(uint32_t cuts)
{
    struct mock_cfg c = cfg_default();
    setup(c);
    uint64_t n = F.ns_lbas;
    pc_base = calloc(n, 4);
    pc_dur = malloc(n * 4);
    for (uint64_t l = 0; l < n; l++)
        pc_dur[l] = -1;
    for (int t = 0; t < 256; t++)
        pc_tag_rec[t] = -1;
    create_io_queue_pair();
    /* the whole drive written once: every later write overwrites, GC has work */
    pc_vwc = true;
    for (uint64_t l = 0; l + 64 <= n; l += 64)
        pc_submit(0x01, l, 64, false);
    while (inflight) {
        fw_poll();
        pc_reap();
    }
    flush();
    pc_check();
    static jmp_buf env;
    static uint64_t kinds[5], in_ckpt, in_gc, sys, boot_cuts, newer, durable_recs, idle;
    static uint64_t in_release, release_aimed, ckpt_aimed, in_live_ckpt;
    static uint64_t seq_lba;
    uint32_t window = 1200;
    for (uint32_t k = 0; k < cuts; k++) {
        pc_vwc = rnd() % 4 != 0;
        CHECK(setf(0x06, pc_vwc, false).status == 0, "VWC %d", pc_vwc);
        uint64_t unsafe0 = smart_unsafe();
        pc_flash_mark = UINT64_MAX;
        pc_shn = false;
        uint64_t ev0 = mock_events();
        /* a third of the cuts aimed at the window after a release's commit is issued, a
         * sixth at a live checkpoint's pages, in turn */
        bool aim = k % 3 == 0, aim_ckpt = k % 6 == 1;
        pc_live0 = C.ckpt_live_saves;
        if (!setjmp(env)) {
            if (aim)
                mock_cut_after_push(pc_release_commit, rnd() % 24, &env);
            else if (aim_ckpt)
                mock_cut_after_push(pc_live_ckpt, rnd() % 4, &env);
            else
                mock_cut_at(ev0 + 1 + rnd() % window, &env);
            pc_round(aim || aim_ckpt ? 2000 : 300, &seq_lba, aim);
            mock_cut_at(0, NULL);
            idle++;
        } else {
            kinds[mock_cut_info.kind]++;
            in_ckpt += F.in_ckpt || ckpt_live_busy();
            in_live_ckpt += ckpt_live_busy() && C.ckpt_live_saves > pc_live0;
            ckpt_aimed += aim_ckpt;
            in_gc += F.in_gc;
            in_release += F.rel_state != REL_IDLE;
            release_aimed += aim;
            sys += mock_cut_info.die == 0 &&
                   F.blk[bidx(0, mock_cut_info.lun_block / F.planes)].state == BLK_SYS;
        }
        for (int32_t j = 0; j < (int32_t)pc_n; j++)
            durable_recs += !pc[j].flush && !pc[j].trim && pc[j].done &&
                            (pc[j].tag & 0x80 || !pc_vwc);
        /* what the next boot can know: a shutdown's checkpoint and no program or erase
         * since (a write the drive had not taken yet, a Flush with nothing to write) */
        pc_clean = pc_flash_mark == mock_stats.programs + mock_stats.erases &&
                   mock_cut_info.kind != MOCK_CUT_PROGRAM && mock_cut_info.kind != MOCK_CUT_ERASE;
        /* power off; sometimes cut again while booting */
        memset(tag_busy, 0, sizeof(tag_busy));
        inflight = 0;
        for (int t = 0; t < 256; t++)
            pc_tag_rec[t] = -1;
        mock_power_cycle();
        volatile bool boot_cut = rnd() % 8 == 0, boot_seen = false;
        if (boot_cut) {
            uint64_t ops0 = mock_stats.programs + mock_stats.erases;
            mock_cut_info = (struct mock_cut){ 0 };
            if (!setjmp(env)) {
                mock_cut_at(mock_events() + 1 + rnd() % 64, &env);
                boot();
                mock_cut_at(0, NULL);
            } else {
                boot_cuts++;
            }
            /* a boot cut before it changed the flash left nothing the next boot can see */
            boot_seen = ops0 != mock_stats.programs + mock_stats.erases ||
                        mock_cut_info.kind == MOCK_CUT_PROGRAM ||
                        mock_cut_info.kind == MOCK_CUT_ERASE;
            mock_power_cycle();
        }
        boot();
        create_io_queue_pair();
        mock_cut_info = (struct mock_cut){ 0 };
        uint64_t unsafe1 = smart_unsafe();
        /* a cut during a shutdown (CC.SHN received, SHST not yet complete) may count or not;
         * a boot cut before the boot wrote its own checkpoint or journal page and the cut
         * before it are one unsafe shutdown to the next boot */
        uint64_t cut_lo = pc_shn ? 0 : !pc_clean, cut_hi = pc_shn ? 1 : !pc_clean;
        uint64_t lo = unsafe0 + (cut_lo > boot_seen ? cut_lo : boot_seen);
        uint64_t hi = unsafe0 + cut_hi + boot_seen;
        CHECK(unsafe1 >= lo && unsafe1 <= hi, "unsafe shutdowns %llu -> %llu (clean %d, during "
              "a shutdown %d, a boot cut the flash saw %d)", (unsigned long long)unsafe0,
              (unsigned long long)unsafe1, pc_clean, pc_shn, boot_seen);
        newer += pc_check();
        CHECK(mock_stats.violations == 0, "%llu NAND rule violations",
              (unsigned long long)mock_stats.violations);
    }
    printf("powercut: %u cuts (%llu mid-program, %llu mid-erase, %llu mid-read, %llu before a "
           "completion, %llu with nothing in flight; %llu in a checkpoint (%llu in a live "
           "one, %llu aimed there), %llu in GC, %llu "
           "during a release of GC's blocks (%llu aimed after its commit), %llu on the system "
           "area, %llu again during the boot), %llu durable writes checked, %llu LBAs kept "
           "newer data, 0 lost; last boot %u cycles, %u journal pages replayed\n",
           cuts, (unsigned long long)kinds[MOCK_CUT_PROGRAM],
           (unsigned long long)kinds[MOCK_CUT_ERASE], (unsigned long long)kinds[MOCK_CUT_READ],
           (unsigned long long)kinds[MOCK_CUT_CPL], (unsigned long long)idle,
           (unsigned long long)in_ckpt, (unsigned long long)in_live_ckpt,
           (unsigned long long)ckpt_aimed, (unsigned long long)in_gc,
           (unsigned long long)in_release, (unsigned long long)release_aimed,
           (unsigned long long)sys,
           (unsigned long long)boot_cuts, (unsigned long long)durable_recs,
           (unsigned long long)newer, F.boot_cycles, F.jnl_replayed);
    CHECK(kinds[MOCK_CUT_PROGRAM] && kinds[MOCK_CUT_CPL] && durable_recs && release_aimed &&
          in_live_ckpt, "the campaign never cut a program, a completion, after a release's "
          "commit or in a live checkpoint");
    free(pc_base);
    free(pc_dur);
}

static void t_powercut(void)
{
    powercut(40);
}

static void t_powercut_full(void)
{
    powercut(1500);
}

struct test { const char *name; void (*fn)(void); };
static const struct test tests[] = {
    { "identify", t_identify }, { "bringup_fail", t_bringup_fail },
    { "bringup_nvddr2", t_bringup_nvddr2 }, { "flash_cb", t_flash_cb }, { "queues", t_queues },
    { "sq_delete", t_sq_delete },
    { "queues_mqes", t_queues_mqes },
    { "features", t_features }, { "logs", t_logs }, { "integrity", t_integrity },
    { "rmw", t_rmw }, { "gc", t_gc }, { "watchdog", t_watchdog }, { "badblocks", t_badblocks },
    { "emu_faults", t_emu_faults }, { "refresh_paced", t_refresh_paced },
    { "restart", t_restart },
    { "format", t_format }, { "fua", t_fua }, { "tight", t_tight }, { "smallram", t_smallram },
    { "lba4k", t_lba4k }, { "powerloss", t_powerloss }, { "ecc", t_ecc }, { "retry", t_retry }, { "diefail", t_diefail }, { "diefail_sys", t_diefail_sys }, { "gc_partial_loss", t_gc_partial_loss }, { "diefail_reads", t_diefail_reads },
    { "parity_diefail", t_parity_diefail }, { "parity_reads", t_parity_reads },
    { "parity_double", t_parity_double }, { "die_hang", t_die_hang },
    { "parity_hang", t_parity_hang }, { "persona_op", t_persona_op },
    { "idle_gc", t_idle_gc }, { "luns", t_luns }, { "luns_drive", t_luns_drive },
    { "perf", t_perf }, { "slc_static", t_slc_static }, { "slc_dynamic", t_slc_dynamic },
    { "mixed", t_mixed }, { "powercut", t_powercut }, { "powercut_full", t_powercut_full },
    { "spare", t_spare }, { "release", t_release },
    { "live_ckpt", t_live_ckpt },
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
            printf("%s\n", tests[i].name);
        return 0;
    }
    if (argc > 2)
        seed = (unsigned)strtoul(argv[2], NULL, 0);
    rng_state = 0x853c49e6748fea9bull ^ seed;
    for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
        if (!strcmp(argv[1], tests[i].name)) {
            test_name = tests[i].name;
            tests[i].fn();
            printf("PASS %s (seed %u)\n", test_name, seed);
            return 0;
        }
    fprintf(stderr, "unknown test %s\n", argv[1]);
    return 2;
}
