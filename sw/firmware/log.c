/* SPDX-License-Identifier: BSD-2-Clause */
/* log.c - Get Log Page (01h error information, 02h SMART / health, 03h firmware slot, C0h
 * vendor FTL counters; offset and NUMDL/NUMDU) and Asynchronous Event Requests. */
#include "ftl.h"

#define N_ERR   64              /* ELPE + 1 */
#define AERL    3               /* 0's based */
#define N_EVENT 16

struct err_entry { uint64_t count; uint16_t sqid, cid, status; uint32_t nsid; uint64_t lba; };
static struct err_entry errs[N_ERR];    /* ring, newest at err_head - 1 */
static uint32_t err_head;
static uint64_t err_count;

struct aer { uint16_t sqid, sq_head, cid; };
static struct aer aers[AERL + 1];
static uint32_t n_aers;
struct event { uint8_t type, info, lid; };
static struct event events[N_EVENT];
static uint32_t n_events;
static uint32_t masked;         /* event types reported, waiting for their log page read */

static uint8_t page[4096];

/* Controller reset drops outstanding AERs and events; the error log survives. */
void log_reset(void)
{
    n_aers = 0;
    n_events = 0;
    masked = 0;
}

void log_error(uint16_t sqid, uint16_t cid, uint16_t status, uint32_t nsid, uint64_t lba)
{
    errs[err_head] = (struct err_entry){ ++err_count, sqid, cid, status, nsid, lba };
    err_head = (err_head + 1) % N_ERR;
}

static void aer_event(uint8_t type, uint8_t info, uint8_t lid)
{
    if (n_events < N_EVENT)
        events[n_events++] = (struct event){ type, info, lid };
}

void log_aer_event(uint8_t type, uint8_t info, uint8_t lid)
{
    log_error(0xFFFF, 0xFFFF, 0, 0, 0);
    aer_event(type, info, lid);
}

/* An error event of the front end: its error log entry names the SQ it concerns (an SQ
 * whose entries could not be read: no command, so CID FFFFh). */
void log_aer_error(uint8_t info, uint16_t sqid)
{
    log_error(sqid, 0xFFFF, 0, 0, 0);
    aer_event(NVME_AER_TYPE_ERROR, info, NVME_LOG_ERROR_INFORMATION);
}

uint16_t log_aer_request(const struct hal_cmd *c)
{
    if (n_aers > AERL)
        return NVME_SC_AER_LIMIT_EXCEEDED;
    aers[n_aers++] = (struct aer){ c->sqid, c->sq_head, (uint16_t)(c->dw[0] >> 16) };
    return AER_HELD;
}

/* Complete outstanding AERs with unmasked events, oldest first; a reported type is masked
 * until its log page is read (NVMe 1.4 section 5.2). */
void log_aer_poll(void)
{
    while (n_aers) {
        uint32_t e = 0;
        while (e < n_events && (masked >> events[e].type & 1))
            e++;
        if (e == n_events)
            return;
        struct event ev = events[e];
        for (uint32_t i = e + 1; i < n_events; i++)
            events[i - 1] = events[i];
        n_events--;
        masked |= 1u << ev.type;
        struct aer a = aers[0];
        for (uint32_t i = 1; i < n_aers; i++)
            aers[i - 1] = aers[i];
        n_aers--;
        hal_cpl_push(0, a.sqid, a.sq_head, a.cid, 0,
                     ev.type | (uint32_t)ev.info << 8 | (uint32_t)ev.lid << 16);
    }
}

/* Field offsets: NVME_ERROR_LOG_* (nvme_spec.h, spec/nvme.py's table). */
#define ERR(f) (p + NVME_ERROR_LOG_##f##_OFFSET)

static uint32_t build_error(void)
{
    for (uint32_t i = 0; i < N_ERR; i++) {
        const struct err_entry *e = &errs[(err_head + N_ERR - 1 - i) % N_ERR];
        uint8_t *p = page + NVME_ERROR_LOG_ENTRY_BYTES * i;
        if (!e->count)
            break;
        put_le(ERR(ERROR_COUNT), 8, e->count);
        put_le(ERR(SQID), 2, e->sqid);
        put_le(ERR(CID), 2, e->cid);
        put_le(ERR(STATUS), 2, (uint32_t)(e->status & 0x7FFF) << 1);
        put_le(ERR(PARAM_ERROR_LOCATION), 2, 0xFFFF);  /* unknown */
        put_le(ERR(LBA), 8, e->lba);
        put_le(ERR(NSID), 4, e->nsid);
    }
    return NVME_ERROR_LOG_ENTRY_BYTES * N_ERR;
}

#define SPARE_THRESHOLD 10u     /* per cent: below it, the spare warning */

/* The spare warning: once, when Available Spare falls below its threshold (an AER). */
void log_spare_poll(void)
{
    if (F.spare_warned || !F.ready || F.failed || blk_spare_percent() >= SPARE_THRESHOLD)
        return;
    F.spare_warned = true;
    log_aer_event(NVME_AER_TYPE_SMART_HEALTH, NVME_AER_SMART_SPARE_BELOW_THRESHOLD,
                  NVME_LOG_SMART_HEALTH);
}

/* SMART data units: thousands of 512-byte units, rounded up. */
static uint64_t data_units(uint64_t lbas)
{
    return ((lbas << G.id.lbads) / 512 + 999) / 1000;
}

/* Field offsets: NVME_SMART_* (nvme_spec.h, spec/nvme.py's table). */
#define SMART(f) (page + NVME_SMART_##f##_OFFSET)

static uint32_t build_smart(void)
{
    uint32_t used = blk_avg_erase() * 100 / (ftl_config.pe_budget ? ftl_config.pe_budget : 1);
    put_le(SMART(COMPOSITE_TEMPERATURE), 2, 313);      /* 313 K */
    uint32_t spare = blk_spare_percent();
    *SMART(AVAILABLE_SPARE) = (uint8_t)spare;
    *SMART(AVAILABLE_SPARE_THRESHOLD) = SPARE_THRESHOLD;
    *SMART(CRITICAL_WARNING) = (uint8_t)((spare < SPARE_THRESHOLD ? NVME_CRIT_SPARE : 0) |
                                         (F.failed || die_dead_count() ? NVME_CRIT_RELIABILITY
                                                                       : 0) |
                                         (ftl_read_only() ? NVME_CRIT_READ_ONLY : 0));
    *SMART(PERCENTAGE_USED) = (uint8_t)(used > 255 ? 255 : used);
    struct hal_hw_read_counts hw;       /* reads the hardware path carried */
    hal_hw_read_counts(&hw);
    put_le(SMART(DATA_UNITS_READ), 16, data_units(C.lbas_read + hw.lbas));
    put_le(SMART(DATA_UNITS_WRITTEN), 16, data_units(C.lbas_written));
    put_le(SMART(HOST_READ_COMMANDS), 16, C.host_reads + hw.reads);
    put_le(SMART(HOST_WRITE_COMMANDS), 16, C.host_writes);
    put_le(SMART(POWER_CYCLES), 16, C.power_cycles);
    put_le(SMART(POWER_ON_HOURS), 16, fw_power_on_seconds() / 3600);
    put_le(SMART(UNSAFE_SHUTDOWNS), 16, C.unsafe_shutdowns);
    put_le(SMART(MEDIA_ERRORS), 16, C.media_errors);
    put_le(SMART(NUM_ERR_LOG_ENTRIES), 16, err_count);
    return NVME_SMART_LOG_BYTES;
}

const char *fw_revision(void);

static uint32_t build_fw_slot(void)
{
    page[0] = 1;                               /* AFI: slot 1 active */
    put_str(page + 8, 8, fw_revision());
    return 512;
}

/* Vendor page C0h: FTL counters (layout in sw/firmware/README.md). */
static uint32_t build_vendor(void)
{
    uint8_t *p = page;
    uint32_t max_ec = 0;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        if (F.blk[b].erase_count > max_ec && F.blk[b].state != BLK_SYS)
            max_ec = F.blk[b].erase_count;
    uint32_t nfree = 0, n_slc = 0;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        nfree += F.die[d].n_free;
        n_slc += F.die[d].n_slc;
    }
    put_le(p + 0, 8, C.host_units_written);
    put_le(p + 8, 8, C.nand_units_written);
    put_le(p + 16, 8, C.gc_units_moved);
    put_le(p + 24, 8, C.erases);
    put_le(p + 32, 8, blk_count_state(BLK_BAD) + blk_count_state(BLK_RETIRING));
    put_le(p + 40, 8, nfree);
    put_le(p + 48, 8, F.user_units);
    put_le(p + 56, 8, F.data_units);
    put_le(p + 64, 8, C.host_units_written ?
           C.nand_units_written * 1000 / C.host_units_written : 0);
    put_le(p + 72, 8, blk_avg_erase());
    put_le(p + 80, 8, max_ec);
    put_le(p + 88, 8, C.ckpt_saves);
    put_le(p + 96, 8, F.n_grp);
    put_le(p + 104, 8, F.pu_units);
    put_le(p + 112, 8, F.n_dies);
    struct hal_hw_read_counts hw;
    hal_hw_read_counts(&hw);
    put_le(p + 120, 8, C.media_errors);
    put_le(p + 128, 8, C.pending_reuse);
    put_le(p + 136, 8, C.ckpt_units_written);
    put_le(p + 144, 8, C.idle_gc_blocks);
    put_le(p + 152, 8, C.slc_units_written);
    put_le(p + 160, 8, C.slc_blocks_folded);
    put_le(p + 168, 8, C.slc_units_folded);
    put_le(p + 176, 8, n_slc);
    put_le(p + 184, 8, (uint64_t)F.slc_max * F.n_dies);
    put_le(p + 192, 8, F.slc_ppb * F.pu_units);
    put_le(p + 200, 8, hw.reads);
    put_le(p + 208, 8, hw.punts);
    put_le(p + 216, 8, hw.lbas);
    put_le(p + 224, 8, C.jnl_pages);
    put_le(p + 232, 8, C.jnl_releases);
    put_le(p + 240, 8, F.jnl_replayed);
    put_le(p + 248, 8, F.boot_cycles);
    put_le(p + 256, 8, C.gc_paced_pages);
    put_le(p + 264, 8, C.gc_fg_blocks);
    put_le(p + 272, 8, C.watchdog_resets);
    put_le(p + 280, 8, F.stall_release);
    put_le(p + 288, 8, F.stall_ckpt);
    put_le(p + 296, 8, F.stall_wb);
    put_le(p + 304, 8, F.rel_waits);
    put_le(p + 312, 8, F.stall_gc);
    /* corrected reads and the most bits: the firmware's flash reads and the hardware
     * path's READs together */
    put_le(p + 320, 8, C.ecc_corrected_reads + hw.corrected);
    put_le(p + 328, 8, C.ecc_failed_reads);
    put_le(p + 336, 8, C.ecc_max_bits > hw.max_bits ? C.ecc_max_bits : hw.max_bits);
    put_le(p + 344, 8, C.read_retries);
    put_le(p + 352, 8, C.retry_recovered);
    put_le(p + 360, 8, hw.handbacks);
    put_le(p + 368, 8, C.refreshed_blocks);
    put_le(p + 376, 8, C.units_lost);
    put_le(p + 384, 8, C.dead_dies);
    put_le(p + 392, 8, C.parity_rebuilt);
    put_le(p + 400, 8, C.parity_failed);
    put_le(p + 408, 8, C.flash_timeouts);
    put_le(p + 416, 8, C.sys_moves);
    put_le(p + 424, 8, C.ckpt_live_saves);
    put_le(p + 432, 8, C.jnl_full_waits);
    return 512;
}

uint16_t log_get_page(const struct hal_cmd *c)
{
    uint32_t lid = c->dw[10] & 0xFF, rae = c->dw[10] >> 15 & 1, nsid = c->dw[1];
    uint64_t numd = ((uint64_t)(c->dw[11] & 0xFFFF) << 16 | c->dw[10] >> 16) + 1;
    uint64_t offset = c->dw[12] | (uint64_t)c->dw[13] << 32, length = 4 * numd;
    if (nsid != 0 && nsid != 1 && nsid != NVME_NSID_ALL)
        return NVME_SC_INVALID_NAMESPACE;
    memset(page, 0, sizeof(page));
    uint32_t len;
    switch (lid) {
    case NVME_LOG_ERROR_INFORMATION: len = build_error(); break;
    case NVME_LOG_SMART_HEALTH: len = build_smart(); break;
    case NVME_LOG_FIRMWARE_SLOT: len = build_fw_slot(); break;
    case NVME_LOG_FTL_COUNTERS: len = build_vendor(); break;
    default: return NVME_SC_INVALID_LOG_PAGE;
    }
    if (offset % 4 || offset >= len || length > G.id.max_transfer)
        return NVME_SC_INVALID_FIELD;
    /* reading the page unmasks its event type (unless Retain Asynchronous Event) */
    if (!rae && lid == NVME_LOG_ERROR_INFORMATION)
        masked &= ~(1u << NVME_AER_TYPE_ERROR);
    if (!rae && lid == NVME_LOG_SMART_HEALTH)
        masked &= ~(1u << NVME_AER_TYPE_SMART_HEALTH);
    uint32_t n = (uint32_t)(len - offset < length ? len - offset : length);
    if (length > n) {
        fill_start(G.xfer_addr, 0, ((uint32_t)length + 7) & ~7u);
        copy_wait();
    }
    buf_write(G.xfer_addr, page + offset, n);
    return hal_xfer(0, c->dw[6] | (uint64_t)c->dw[7] << 32,
                    c->dw[8] | (uint64_t)c->dw[9] << 32, (uint32_t)length, true);
}
