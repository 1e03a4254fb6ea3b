/* SPDX-License-Identifier: BSD-2-Clause */
/* mock_hal.c - the mock HAL (see mock_hal.h). */
#include "mock_hal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mock_stats mock_stats;
uint8_t *mock_host;
struct mock_q mock_sq[65], mock_cq[65];
uint64_t mock_sq_pages[65][8], mock_cq_pages[65][8];
uint8_t mock_agg_thr, mock_agg_time;
bool mock_ivc_cd[65];
uint64_t mock_ns_lbas;
uint16_t mock_abort_sqid, mock_abort_cid;
bool mock_abort_armed;

static struct mock_cfg cfg;
static uint64_t events, cut_event;     /* power cuts (mock_cut_at) */
static jmp_buf *cut_env;
static bool (*cut_pick)(const struct hal_flash_op *op);     /* mock_cut_after_push */
static uint32_t cut_pick_k;
struct mock_cut mock_cut_info;
static uint8_t *buf;                    /* buffer memory */
static uint32_t copy_done;
static uint64_t cycles;

/* flash: die -> lun block -> page; each page page_bytes + spare_bytes */
/* shift: the read-retry level an ECC read of the page must be at to pass (mock_read_shift) */
struct mpage { uint8_t programmed, shift; };
/* grown_bad, pe: the NAND emulator's block table (hal_emu_*, and its P/E limit) */
struct mblk { uint32_t next_page, pe; bool factory_bad, fail_program, fail_erase, slc, grown_bad; };
static uint8_t *flash;
static struct mpage *pages;
static uint8_t *retry_level;      /* each die's read-retry level (its target's SET FEATURES 89h) */
static bool *die_dead;            /* mock_die_fail: the die failed as a whole */
static bool *die_hung;            /* mock_die_hang: the back end gives up its every op */
static struct mblk *blks;
static uint32_t n_dies, lun_blocks, page_total;

/* per-die op queues */
#define QMAX 4096
static struct hal_flash_op *oq;         /* n_dies * QMAX ring */
static uint32_t *oq_head, *oq_n, total_q, rr;

/* NVMe side */
#define CQ_MAX 4096
static struct hal_cmd cmds[CQ_MAX];
static uint32_t cmd_h, cmd_n;
static struct mock_cpl cpls[CQ_MAX];
static uint32_t cpl_h, cpl_n;
static struct hal_be_req bes[256];
static uint32_t be_outstanding;         /* popped by the firmware, not completed */
static uint32_t be_h, be_n;
static struct { uint8_t tag; uint16_t st; } becpl[4096];
static uint32_t becpl_h, becpl_n;
static bool enabled = true, sh_done, abort_hit;
static bool reset_pending;      /* as the front end: latched by a disable until acknowledged */
static uint8_t shn;
static uint64_t sq_pending;
/* an SQ delete the front end drains: done once no fast-path command is queued or in flight
 * (the RTL's DEL_WAIT: the SQ fetched, the decoder empty, io_busy low) */
static bool del_busy;
static uint16_t del_sq;
static uint32_t pending_polls;
struct mock_wdt mock_wdt;
static uint8_t aers[64];
static uint16_t aer_sqid[64];
static uint32_t aer_n;

/* The die's page and spare (mixed parts: the second part type on cfg.part2_mask's targets,
 * bit way x n_channels + channel); storage is laid out for the main part's. */
static bool mock_part2(uint32_t die)
{
    uint32_t t = die % (cfg.n_channels * cfg.n_ways);
    return cfg.part2_page_bytes && (cfg.part2_mask >> t & 1);
}

static uint32_t die_page(uint32_t die)
{
    return mock_part2(die) ? cfg.part2_page_bytes : cfg.page_bytes;
}

static uint32_t die_total(uint32_t die)
{
    return mock_part2(die) ? cfg.part2_page_bytes + cfg.part2_spare_bytes : page_total;
}

static size_t page_off(uint32_t die, uint32_t lb, uint32_t page)
{
    return (((size_t)die * lun_blocks + lb) * cfg.pages_per_block + page);
}

void mock_init(const struct mock_cfg *c)
{
    cfg = *c;
    if (!cfg.luns)
        cfg.luns = 1;
    n_dies = cfg.n_channels * cfg.n_ways * cfg.luns;
    lun_blocks = cfg.blocks_per_plane * cfg.planes;
    page_total = cfg.page_bytes + cfg.spare_bytes;
    size_t np = (size_t)n_dies * lun_blocks * cfg.pages_per_block;
    flash = malloc(np * page_total);
    memset(flash, 0xFF, np * page_total);
    pages = calloc(np, sizeof(*pages));
    retry_level = calloc(n_dies, 1);
    die_dead = calloc(n_dies, sizeof(*die_dead));
    die_hung = calloc(n_dies, sizeof(*die_hung));
    blks = calloc((size_t)n_dies * lun_blocks, sizeof(*blks));
    buf = calloc(cfg.buf_slots, SLOT_BYTES);
    mock_host = calloc(1, MOCK_HOST_BYTES);
    oq = calloc((size_t)n_dies * QMAX, sizeof(*oq));
    oq_head = calloc(n_dies, 4);
    oq_n = calloc(n_dies, 4);
    mock_power_cycle();
}

void mock_power_cycle(void)
{
    memset(buf, 0x5A, (size_t)cfg.buf_slots * SLOT_BYTES);    /* garbage, not zeroes */
    for (uint32_t d = 0; d < n_dies; d++)
        oq_head[d] = oq_n[d] = 0;
    total_q = 0;
    copy_done = 1000;           /* the engine's count does not start at 0 */
    cmd_h = cmd_n = cpl_h = cpl_n = be_h = be_n = becpl_h = becpl_n = aer_n = 0;
    be_outstanding = 0;
    enabled = true;
    reset_pending = false;
    sh_done = false;
    shn = 0;
    sq_pending = 0;
    del_busy = false;
    memset(mock_sq, 0, sizeof(mock_sq));
    memset(mock_cq, 0, sizeof(mock_cq));
    memset(&mock_stats, 0, sizeof(mock_stats));
}

void mock_free(void)
{
    free(flash); free(pages); free(retry_level); free(die_dead); free(die_hung); free(blks);
    free(buf);
    free(mock_host);
    free(oq); free(oq_head); free(oq_n);
}

uint32_t mock_dies(void)
{
    return n_dies;
}

void mock_factory_bad(uint32_t die, uint32_t lb)
{
    blks[die * lun_blocks + lb].factory_bad = true;
    flash[page_off(die, lb, 0) * page_total + die_page(die)] = 0x00;
}

void mock_fail_next_program(uint32_t die, uint32_t lb)
{
    blks[die * lun_blocks + lb].fail_program = true;
}

void mock_die_fail(uint32_t die)
{
    die_dead[die] = true;
}

void mock_die_hang(uint32_t die)
{
    die_hung[die] = true;
}

void mock_fail_next_erase(uint32_t die, uint32_t lb)
{
    blks[die * lun_blocks + lb].fail_erase = true;
}

void mock_clear_faults(void)
{
    for (size_t i = 0; i < (size_t)n_dies * lun_blocks; i++)
        blks[i].fail_erase = blks[i].fail_program = false;
}

void mock_read_shift_all(uint32_t level)
{
    size_t np = (size_t)n_dies * lun_blocks * cfg.pages_per_block;
    for (size_t i = 0; i < np; i++)
        if (pages[i].programmed)
            pages[i].shift = (uint8_t)level;
}

uint32_t mock_retry_level(uint32_t die)
{
    return retry_level[die];
}

void mock_read_shift(uint32_t die, uint32_t lb, uint32_t page, uint32_t level)
{
    pages[page_off(die, lb, page)].shift = (uint8_t)level;
}

void mock_corrupt(uint32_t die, uint32_t lb, uint32_t page, uint32_t byte)
{
    flash[page_off(die, lb, page) * page_total + byte] ^= 0x10;
}

bool mock_block_programmed(uint32_t die, uint32_t lb)
{
    return blks[die * lun_blocks + lb].next_page > 0;
}

bool mock_block_bad(uint32_t die, uint32_t lb)
{
    return blks[die * lun_blocks + lb].grown_bad;
}

uint32_t mock_block_pe(uint32_t die, uint32_t lb)
{
    return blks[die * lun_blocks + lb].pe;
}

static uint32_t mock_bits(void)
{
    return cfg.bits_per_cell ? cfg.bits_per_cell : 2;
}

/* --- HAL: identity, console, cycles ------------------------------------------------------ */

void hal_ident(struct hal_ident *id)
{
    memset(id, 0, sizeof(*id));
    id->n_channels = cfg.n_channels;
    id->n_ways = cfg.n_ways;
    id->luns = cfg.luns;
    id->n_io_queues = cfg.n_io_queues;
    id->tag_width = cfg.tag_width;
    id->max_transfer = cfg.max_transfer;
    id->mqes = cfg.mqes;
    id->lbads = cfg.lbads;
    id->buf_slots = cfg.buf_slots;
    id->fw_slot_first = ((1u << cfg.tag_width) + cfg.fw_bufs) * (cfg.max_transfer / SLOT_BYTES);
    id->clk_hz = 100000000;
    id->git_hash = 0x1234abcd;
    strcpy(id->persona, "mock");
    id->page_bytes = cfg.page_bytes;
    id->spare_bytes = cfg.spare_bytes;
    id->pages_per_block = cfg.pages_per_block;
    id->blocks_per_plane = cfg.blocks_per_plane;
    id->planes = cfg.planes;
    id->onfi_mode = 5;
    id->nvddr2_mode = cfg.nvddr2_mode ? cfg.nvddr2_mode : NVDDR2_NONE;
    id->op_permille = cfg.op_permille;
    id->pe_cycles = cfg.pe_cycles;
    id->bits_per_cell = cfg.bits_per_cell;
    id->slc_policy = cfg.slc_policy;
    id->slc_permille = cfg.slc_permille;
    id->part2_page_bytes = cfg.part2_page_bytes;
    id->part2_spare_bytes = cfg.part2_spare_bytes;
    id->part2_mask_lo = (uint32_t)cfg.part2_mask;
    id->part2_mask_hi = (uint32_t)(cfg.part2_mask >> 32);
    id->ecc_data_bytes = cfg.ecc_data_bytes;
    id->ecc_room = cfg.ecc_room;
    id->ecc_t = cfg.ecc_t;
    id->retry_levels = cfg.retry_levels ? cfg.retry_levels : 1;
    id->parity_stripe = cfg.parity_stripe;
}

uint64_t hal_cycles(void)
{
    return cycles += 7;
}

/* the wait: nothing in the mock changes by itself, so it returns at once, at the deadline
 * if there is one (the time a real wait would take) */
void hal_wait_arm(void) {}

uint32_t hal_wait(uint64_t deadline)
{
    if (deadline == HAL_NO_DEADLINE)
        return HAL_WAKE_STATUS;
    if (cycles < deadline)
        cycles = deadline;
    return HAL_WAKE_DEADLINE;
}

/* no hardware I/O path in the mock: every command reaches the firmware, which sees it */
uint32_t hal_wait_idle(uint64_t deadline, uint32_t idle_cycles)
{
    (void)idle_cycles;
    return hal_wait(deadline);
}

uint64_t hal_idle_since(void)
{
    return 0;
}


void hal_putc(char c)
{
    if (getenv("FW_VERBOSE"))
        fputc(c, stderr);
}

void fw_panic(const char *why)
{
    fprintf(stderr, "firmware panic: %s\n", why);
    abort();
}

/* --- NVMe front end ----------------------------------------------------------------------- */

void mock_push_cmd(uint16_t sqid, const uint32_t dw[16])
{
    struct hal_cmd *c = &cmds[(cmd_h + cmd_n++) % CQ_MAX];
    c->sqid = sqid;
    c->sq_head = (uint16_t)(cmd_h + cmd_n);
    memcpy(c->dw, dw, 64);
}

bool hal_cmd_pop(struct hal_cmd *c)
{
    if (!cmd_n)
        return false;
    *c = cmds[cmd_h];
    cmd_h = (cmd_h + 1) % CQ_MAX;
    cmd_n--;
    return true;
}

void hal_cpl_push(uint16_t cqid, uint16_t sqid, uint16_t sq_head, uint16_t cid,
                  uint16_t status, uint32_t dw0)
{
    cpls[(cpl_h + cpl_n++) % CQ_MAX] = (struct mock_cpl){ cqid, sqid, sq_head, cid, status,
                                                         dw0 };
}

bool mock_pop_cpl(struct mock_cpl *c)
{
    if (!cpl_n)
        return false;
    *c = cpls[cpl_h];
    cpl_h = (cpl_h + 1) % CQ_MAX;
    cpl_n--;
    return true;
}

bool hal_sq_config_busy(void)
{
    if (del_busy && !hal_io_busy()) {
        mock_sq[del_sq].enabled = false;
        del_busy = false;
    }
    return del_busy;
}

void hal_sq_config(uint16_t sqid, uint64_t base, uint16_t qsize, bool enable, bool nc,
                   uint16_t cqid)
{
    if (hal_sq_config_busy())
        mock_stats.queue_violations++;
    if (!enable) {
        /* only starts: the SQ is gone once its commands are (hal_sq_config_busy) */
        del_busy = true;
        del_sq = sqid;
        return;
    }
    mock_sq[sqid] = (struct mock_q){ enable, nc, base, qsize, cqid, 0, false };
}

void hal_cq_config(uint16_t cqid, uint64_t base, uint16_t qsize, uint16_t iv, bool ien,
                   bool enable, bool nc)
{
    if (hal_sq_config_busy())
        mock_stats.queue_violations++;
    mock_cq[cqid] = (struct mock_q){ enable, nc, base, qsize, 0, iv, ien };
}

void hal_sq_page(uint16_t sqid, uint32_t index, uint64_t a)
{
    if (index < 8)
        mock_sq_pages[sqid][index] = a;
}

void hal_cq_page(uint16_t cqid, uint32_t index, uint64_t a)
{
    if (index < 8)
        mock_cq_pages[cqid][index] = a;
}

/* PRP walk over mock_host: PRP1 (any dword offset), then PRP2 as a page or a list. */
uint16_t hal_xfer(uint32_t b, uint64_t prp1, uint64_t prp2, uint32_t length, bool to_host)
{
    uint32_t hs = cfg.max_transfer / SLOT_BYTES;
    uint8_t *fb = buf + (size_t)(((1u << cfg.tag_width) + b) * hs) * SLOT_BYTES;
    uint32_t done = 0, first = 4096 - (uint32_t)(prp1 % 4096);
    uint64_t addr[64];
    uint32_t n = 0;
    if (prp1 % 4)
        return 0x13 | 0x4000;
    addr[n++] = prp1;
    if (length > first) {
        uint32_t rest = (length - first + 4095) / 4096;
        if (rest == 1) {
            addr[n++] = prp2;
        } else {
            if (prp2 % 8 || prp2 + 8 * rest > MOCK_HOST_BYTES)
                return 0x13 | 0x4000;
            for (uint32_t i = 0; i < rest && n < 64; i++) {
                uint64_t a;
                memcpy(&a, mock_host + prp2 + 8 * i, 8);
                addr[n++] = a;
            }
        }
    }
    for (uint32_t i = 0; i < n && done < length; i++) {
        uint32_t chunk = i == 0 ? first : 4096;
        if (chunk > length - done)
            chunk = length - done;
        if (i && addr[i] % 4096)
            return 0x13 | 0x4000;
        if (addr[i] + chunk > MOCK_HOST_BYTES)
            return 0x04;
        if (to_host)
            memcpy(mock_host + addr[i], fb + done, chunk);
        else
            memcpy(fb + done, mock_host + addr[i], chunk);
        done += chunk;
    }
    return 0;
}

void hal_ivc(uint16_t vector, bool cd)
{
    mock_ivc_cd[vector] = cd;
}

void hal_aggregation(uint8_t thr, uint8_t time)
{
    mock_agg_thr = thr;
    mock_agg_time = time;
}

void hal_ns_size(uint64_t lbas)
{
    mock_ns_lbas = lbas;
}

void hal_abort_arm(uint16_t sqid, uint16_t cid)
{
    mock_abort_armed = true;
    mock_abort_sqid = sqid;
    mock_abort_cid = cid;
}

void hal_abort_disarm(void)
{
    mock_abort_armed = false;
}

bool hal_abort_hit(void)
{
    return mock_abort_armed && abort_hit;
}

void mock_set_abort_hit(bool hit)
{
    abort_hit = hit;
}

void mock_set_sq_pending(uint64_t bits, uint32_t clear_after)
{
    sq_pending = bits;
    pending_polls = clear_after;
}

uint64_t hal_sq_pending(void)
{
    if (pending_polls && --pending_polls == 0)
        sq_pending = 0;
    return sq_pending;
}

void mock_push_aer(uint8_t info, uint16_t sqid)
{
    aer_sqid[aer_n] = sqid;
    aers[aer_n++] = info;
}

bool hal_aer_pop(uint8_t *info, uint16_t *sqid)
{
    if (!aer_n)
        return false;
    *info = aers[0];
    *sqid = aer_sqid[0];
    memmove(aers, aers + 1, --aer_n);
    memmove(aer_sqid, aer_sqid + 1, aer_n * sizeof(aer_sqid[0]));
    return true;
}

bool hal_ctrl_reset_pending(void)
{
    return reset_pending;
}

void hal_watchdog_setup(uint32_t period)
{
    mock_wdt.period = period;
}

bool hal_watchdog_fired(void)
{
    return mock_wdt.fired;
}

void hal_watchdog_clear(void)
{
    mock_wdt.fired = false;
}

void hal_fatal(bool fatal)
{
    mock_stats.fatal = fatal;
}

void hal_ctrl_reset_ack(void)
{
    reset_pending = false;
}

void mock_set_enabled(bool en)
{
    if (enabled && !en) {
        reset_pending = true;
        del_busy = false;       /* the front end drops its queues */
    }
    enabled = en;
}

uint8_t hal_shutdown_request(void)
{
    return shn;
}

void mock_set_shutdown(uint8_t s)
{
    shn = s;
}

void hal_shutdown_done(bool d)
{
    sh_done = d;
}

bool mock_shutdown_done(void)
{
    return sh_done;
}

bool hal_io_busy(void)
{
    return be_n || be_outstanding;
}

void mock_push_be(uint8_t tag, uint8_t opcode, uint64_t slba, uint16_t nlb, uint16_t flags,
                  uint32_t nsid)
{
    bes[(be_h + be_n++) % 256] = (struct hal_be_req){ tag, opcode, nlb, nsid, slba, flags,
                                                      MOCK_BE_SQID(tag), MOCK_BE_CID(tag) };
}

bool hal_be_req_pop(struct hal_be_req *r)
{
    if (!be_n)
        return false;
    *r = bes[be_h];
    be_h = (be_h + 1) % 256;
    be_n--;
    be_outstanding++;
    return true;
}

void mock_cut_at(uint64_t event, jmp_buf *env)
{
    cut_event = event;
    cut_env = env;
    cut_pick = NULL;
}

void mock_cut_after_push(bool (*pick)(const struct hal_flash_op *op), uint32_t k,
                         jmp_buf *env)
{
    cut_event = 0;
    cut_env = env;
    cut_pick = pick;
    cut_pick_k = k;
}

uint64_t mock_events(void)
{
    return events;
}

/* The event about to happen is the armed one: cut. */
static bool cut_now(void)
{
    return cut_event && ++events == cut_event;
}

static void cut(uint32_t kind, uint32_t die, uint32_t lb)
{
    mock_cut_info = (struct mock_cut){ kind, die, lb };
    cut_event = 0;
    longjmp(*cut_env, 1);
}

void hal_be_cpl_push(uint8_t tag, uint16_t status)
{
    if (cut_now())
        cut(MOCK_CUT_CPL, 0, 0);
    be_outstanding--;
    becpl[(becpl_h + becpl_n) % 4096].tag = tag;
    becpl[(becpl_h + becpl_n++) % 4096].st = status;
}

bool mock_pop_be_cpl(uint8_t *tag, uint16_t *status)
{
    if (!becpl_n)
        return false;
    *tag = becpl[becpl_h].tag;
    *status = becpl[becpl_h].st;
    becpl_h = (becpl_h + 1) % 4096;
    becpl_n--;
    return true;
}

/* --- buffer memory and the copy engine (runs each job at once) ---------------------------- */

volatile uint8_t *hal_buf(void)
{
    return buf;
}

static void check_range(uint32_t a, uint32_t bytes)
{
    if (a % 8 || bytes % 8 || (uint64_t)a + bytes > (uint64_t)cfg.buf_slots * SLOT_BYTES) {
        fprintf(stderr, "mock: copy engine address %u + %u out of range / unaligned\n", a,
                bytes);
        abort();
    }
}

bool hal_copy(uint32_t dst, uint32_t src, uint32_t bytes)
{
    check_range(dst, bytes);
    check_range(src, bytes);
    memmove(buf + dst, buf + src, bytes);
    mock_stats.copies++;
    copy_done++;
    return true;
}

bool hal_fill(uint32_t dst, uint64_t pattern, uint32_t bytes)
{
    check_range(dst, bytes);
    for (uint32_t i = 0; i < bytes; i += 8)
        memcpy(buf + dst + i, &pattern, 8);
    mock_stats.fills++;
    copy_done++;
    return true;
}

bool hal_xor(uint32_t dst, uint32_t src, uint32_t bytes)
{
    check_range(dst, bytes);
    check_range(src, bytes);
    for (uint32_t i = 0; i < bytes; i++)
        buf[dst + i] ^= buf[src + i];
    mock_stats.copies++;
    copy_done++;
    return true;
}

uint32_t hal_copy_done(void)
{
    return copy_done;
}

/* --- flash ----------------------------------------------------------------------------- */

void hal_flash_setup(uint32_t mode, uint32_t page_bits, uint32_t block_bits,
                     uint32_t plane_bits, uint32_t plane_slots)
{
    (void)page_bits; (void)block_bits; (void)plane_bits; (void)plane_slots;
    mock_stats.timing_mode = mode;
}

void hal_flash_write_protect(bool on)
{
    (void)on;
}

void hal_flash_nvddr2(bool on)
{
    mock_stats.nvddr2 = on;
    mock_stats.nvddr2_switches++;
}

uint32_t hal_flash_dqs_calibrate(uint32_t way, uint32_t *tap)
{
    uint32_t all = (1u << cfg.n_channels) - 1;
    mock_stats.dqs_calibrations++;
    for (uint32_t c = 0; tap && c < cfg.n_channels; c++)
        tap[c] = 15;
    (void)way;
    return cfg.dqs_cal_fail ? all & ~1u : all;      /* channel 0 without an eye */
}

bool hal_flash_push(const struct hal_flash_op *op)
{
    /* the firmware's die order (flash_op_addr): channel, then way, then LUN */
    uint32_t die = (op->lun * cfg.n_ways + op->way) * cfg.n_channels + op->channel;
    if (total_q >= cfg.flash_queue || op->channel >= cfg.n_channels || op->way >= cfg.n_ways ||
        op->lun >= cfg.luns)
        return false;
    oq[die * QMAX + (oq_head[die] + oq_n[die]++) % QMAX] = *op;
    if (cut_pick && cut_pick(op)) {
        cut_event = events + 1 + cut_pick_k;
        cut_pick = NULL;
    }
    if (oq_n[die] > mock_stats.max_die_queue)
        mock_stats.max_die_queue = oq_n[die];
    total_q++;
    return true;
}

static uint8_t *pg(uint32_t die, uint32_t lb, uint32_t page)
{
    return flash + page_off(die, lb, page) * page_total;
}

static void run(const struct hal_flash_op *op, uint32_t die, struct hal_flash_cpl *c)
{
    uint32_t plane_slots = cfg.page_bytes / SLOT_BYTES;
    uint32_t pmask = cfg.planes - 1;
    c->tag = op->tag;
    if (op->plane_mask == 0 || op->plane_mask >> cfg.planes || op->page >= cfg.pages_per_block) {
        c->error = true;
        return;
    }
    if (die_hung[die]) {
        /* the back end gave up the op (the die's R/B# stuck busy past the timeout) or the
         * fenced die's later ops, RESET too: no data moved, nothing done on the die */
        c->timeout = c->fail = true;
        mock_stats.timeouts++;
        return;
    }
    if (op->op == FLASH_RESET) {
        mock_stats.resets++;
        return;
    }
    if (op->op == FLASH_READ_PARAM) {
        uint8_t *d = buf + (size_t)op->buffer * SLOT_BYTES;
        memset(d, 0, op->length);
        if (cfg.onfi_ok && !(cfg.nvddr2_broken && mock_stats.nvddr2))
            memcpy(d, "ONFI", 4);
        if (op->length > 100)
            d[100] = (uint8_t)(cfg.param_luns ? cfg.param_luns : cfg.luns);
        mock_stats.read_params++;
        return;
    }
    if (op->op == FLASH_SET_FEATURES) {
        uint8_t p1 = buf[(size_t)op->buffer * SLOT_BYTES];
        mock_stats.set_features++;
        mock_stats.features_p1 = p1;
        if ((op->column & 0xFF) == 0x89) {      /* read retry: the target's level */
            if (p1 >= (cfg.retry_levels ? cfg.retry_levels : 1)) {
                mock_stats.violations++;        /* a level the part does not have */
                c->fail = true;
                return;
            }
            for (uint32_t l = 0; l < cfg.luns; l++)
                retry_level[die % (n_dies / cfg.luns) + l * (n_dies / cfg.luns)] = p1;
            mock_stats.retry_sets++;
        }
        return;
    }
    for (uint32_t p = 0; p < cfg.planes; p++) {
        if (!(op->plane_mask >> p & 1))
            continue;
        uint32_t lb = ((uint32_t)op->block & ~pmask) | p;
        if (lb >= lun_blocks) {
            c->error = true;
            return;
        }
        struct mblk *b = &blks[die * lun_blocks + lb];
        uint8_t *d = buf + (size_t)((op->buffer + p * plane_slots) & 0xFFFF) * SLOT_BYTES;
        if (die_dead[die] && (op->op == FLASH_READ || op->op == FLASH_PROGRAM ||
                              op->op == FLASH_ERASE)) {
            /* a failed die: noise no ECC takes, every program and erase FAILs */
            if (op->op == FLASH_READ) {
                memset(d, 0xA5, op->length);
                c->ecc_fail = cfg.ecc_data_bytes && !op->raw;
                mock_stats.reads++;
            } else {
                c->fail = true;
                c->status = 0xE1;
            }
            continue;
        }
        if (op->op == FLASH_READ) {
            if ((uint32_t)op->column + op->length > die_total(die)) {
                c->error = true;
                mock_stats.violations++;    /* past the die's page + spare */
                return;
            }
            if (op->slc != b->slc && b->next_page)
                mock_stats.slc_violations++;   /* the die's slc-mode rule (sim/nand) */
            if (op->slc)
                mock_stats.slc_reads++;
            memcpy(d, pg(die, lb, op->page) + op->column, op->length);
            mock_stats.reads++;
            struct mpage *mp = &pages[page_off(die, lb, op->page)];
            if (cfg.ecc_data_bytes && !op->raw && !mp->programmed)
                c->ecc_fail = true;     /* an erased page is no codeword */
            if (cfg.ecc_data_bytes && !op->raw && mp->programmed) {
                if (mp->shift != retry_level[die])
                    c->ecc_fail = true; /* read at the wrong level: beyond the code */
                else if (mp->shift)
                    c->ecc_bits = 3;    /* right level: a few bits corrected */
                mock_stats.retry_level_reads += retry_level[die] != 0;
            }
        } else if (op->op == FLASH_PROGRAM) {
            mock_stats.programs++;
            if ((uint32_t)op->column + op->length > die_page(die)) {
                c->error = true;
                mock_stats.violations++;    /* more than the die's page */
                return;
            }
            if (b->grown_bad) {
                /* the emulator refuses it: FAIL, the page untouched */
                c->fail = true;
                c->status = 0xE1;
                continue;
            }
            if (b->factory_bad)
                mock_stats.violations++;
            if (op->page != b->next_page || pages[page_off(die, lb, op->page)].programmed) {
                mock_stats.violations++;
                c->fail = true;
                c->status = 0xE1;
                continue;
            }
            if (op->slc != b->slc ||
                (b->slc && op->page >= cfg.pages_per_block / mock_bits())) {
                /* the die's slc-mode rule: a program in the other mode fails, nothing stored */
                mock_stats.slc_violations++;
                c->fail = true;
                c->status = 0xE1;
                continue;
            }
            if (op->slc)
                mock_stats.slc_programs++;
            b->next_page = op->page + 1u;
            pages[page_off(die, lb, op->page)].programmed = 1;
            if (b->fail_program || b->factory_bad) {
                b->fail_program = false;
                memset(pg(die, lb, op->page), 0xA5, cfg.page_bytes);      /* garbage */
                c->fail = true;
                c->status = 0xE1;
                continue;
            }
            memcpy(pg(die, lb, op->page) + op->column, d, op->length);
            if (cfg.ecc_data_bytes && !op->raw)     /* the codewords' parity in the spare */
                for (uint32_t i = die_page(die); i < die_total(die); i++)
                    pg(die, lb, op->page)[i] = (uint8_t)(d[i % op->length] ^ 0x5A ^ i);
        } else if (op->op == FLASH_ERASE) {
            mock_stats.erases++;
            if (b->fail_erase || b->factory_bad || b->grown_bad) {
                b->fail_erase = false;
                c->fail = true;
                c->status = 0xE1;
                continue;
            }
            /* the emulator's wear-out: the erase past the limit FAILs, the block goes bad */
            if (++b->pe > mock_stats.emu_pe_limit && mock_stats.emu_pe_limit) {
                b->grown_bad = true;
                c->fail = true;
                c->status = 0xE1;
                continue;
            }
            for (uint32_t k = 0; k < cfg.pages_per_block; k++) {
                memset(pg(die, lb, k), 0xFF, page_total);
                pages[page_off(die, lb, k)].programmed = 0;
            }
            b->next_page = 0;
            b->slc = op->slc != 0;
            if (op->slc)
                mock_stats.slc_erases++;
        } else {
            c->error = true;
        }
    }
}

/* Power lost during the op: a program's pages (or an erase's block) are left neither
 * written nor erased: garbage that reads back without an error, as an interrupted cell
 * array would (the firmware's checksums, not the die, have to catch it). */
static void cut_op(const struct hal_flash_op *op, uint32_t die)
{
    uint32_t pmask = cfg.planes - 1, kind = MOCK_CUT_READ, lb0 = 0;
    for (uint32_t p = 0; p < cfg.planes; p++) {
        uint32_t lb = ((uint32_t)op->block & ~pmask) | p;
        if (!(op->plane_mask >> p & 1) || lb >= lun_blocks)
            continue;
        struct mblk *b = &blks[die * lun_blocks + lb];
        lb0 = lb;
        if (op->op == FLASH_PROGRAM && op->page < cfg.pages_per_block &&
            !pages[page_off(die, lb, op->page)].programmed) {
            kind = MOCK_CUT_PROGRAM;
            for (uint32_t i = 0; i < cfg.page_bytes; i++)
                pg(die, lb, op->page)[i] = (uint8_t)(i * 131u + events);
            pages[page_off(die, lb, op->page)].programmed = 1;
            b->next_page = op->page + 1u;
        } else if (op->op == FLASH_ERASE) {
            kind = MOCK_CUT_ERASE;
            for (uint32_t k = 0; k < cfg.pages_per_block; k++) {
                for (uint32_t i = 0; i < cfg.page_bytes; i++)
                    pg(die, lb, k)[i] = (uint8_t)(i * 37u + k);
                pages[page_off(die, lb, k)].programmed = 1;
            }
            b->next_page = cfg.pages_per_block;
        }
    }
    cut(kind, die, lb0);
}

/* The oldest op of the next die (round robin) with one queued: in order per die, out of
 * order across dies. */
bool hal_flash_pop(struct hal_flash_cpl *c)
{
    if (!total_q)
        return false;
    for (uint32_t i = 0; i < n_dies; i++) {
        uint32_t d = (rr + i) % n_dies;
        if (!oq_n[d])
            continue;
        rr = d + 1;
        struct hal_flash_op op = oq[d * QMAX + oq_head[d]];
        oq_head[d] = (oq_head[d] + 1) % QMAX;
        oq_n[d]--;
        total_q--;
        memset(c, 0, sizeof(*c));
        if (cut_now())
            cut_op(&op, d);
        run(&op, d, c);
        if (c->fail)
            c->status |= 1;
        cycles += 1000;
        return true;
    }
    return false;
}

/* --- the hardware read path: the mock SoC has none (every request comes to the FTL) --- */

bool hal_hw_read_present(void) { return false; }
void hal_hw_read_setup(const uint32_t *l2p, bool enable) { (void)l2p; (void)enable; }
void hal_hw_read_refresh(uint32_t bits) { (void)bits; }
bool hal_hw_read_hint(uint32_t *block) { (void)block; return false; }
void hal_hw_read_slc(uint32_t block, bool slc) { (void)block; (void)slc; }
void hal_hw_read_fence(void) { }
bool hal_hw_read_idle(void) { return true; }
void hal_hw_read_counts(struct hal_hw_read_counts *c)
{
    *c = (struct hal_hw_read_counts){ 0 };
}

/* --- the NAND emulator's block table (cfg.emulator) ------------------------------------ */

uint32_t hal_emu_pe_max(void)
{
    return cfg.emulator ? (1u << 20) - 1 : 0;
}

/* The block, or NULL where the emulator (soc/nand_emulation.py) refuses one: not built, or
 * a channel, way, LUN or block the drive does not have. */
static struct mblk *emu_block(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block)
{
    mock_stats.emu_calls++;
    if (!cfg.emulator || channel >= cfg.n_channels || way >= cfg.n_ways || lun >= cfg.luns ||
        block >= lun_blocks)
        return NULL;
    mock_stats.emu_ops++;
    return &blks[((lun * cfg.n_ways + way) * cfg.n_channels + channel) * lun_blocks + block];
}

bool hal_emu_bad_block(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block)
{
    struct mblk *b = emu_block(channel, way, lun, block);
    if (b)
        b->grown_bad = true;
    return b != NULL;
}

bool hal_emu_set_pe(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block, uint32_t pe)
{
    struct mblk *b = emu_block(channel, way, lun, block);
    if (b)
        b->pe = pe & hal_emu_pe_max();
    return b != NULL;
}

void hal_emu_pe_limit(uint32_t limit)
{
    if (cfg.emulator)
        mock_stats.emu_pe_limit = limit & hal_emu_pe_max();
}
