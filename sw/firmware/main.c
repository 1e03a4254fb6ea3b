/* SPDX-License-Identifier: BSD-2-Clause */
/* main.c - boot (identity, flash bring-up, checkpoint or format) and the polled main loop:
 * controller enable/shutdown, the NVMe command stream, block requests, flash completions. */
#include "ftl.h"

struct fw_geom G;
struct fw_counters C;

static bool shutdown_done;
/* A shutdown waits for the front end's commands to end: FwWait does not wake on io_busy (the
 * hardware path's commands cost the CPU nothing), so the loop polls it this often meanwhile. */
static bool io_drain;
#define IO_DRAIN_POLL_CYCLES 256u

/* Boot. false: the flash did not come up (the loop still answers admin commands). */
bool fw_init(void)
{
    uint64_t boot_start = hal_cycles();
    memset(&C, 0, sizeof(C));
    memset(&F, 0, sizeof(F));
    hal_ident(&G.id);
    /* the watchdog reset the CPU (a loop that never waited): CSTS.CFS holds until the host
     * resets the controller, as after a panic */
    bool watchdog = hal_watchdog_fired();
    if (watchdog) {
        fw_puts("watchdog: the firmware ran without waiting; recovering\n");
        fw_recover();
        hal_watchdog_clear();
    }
    hal_watchdog_setup(FW_WATCHDOG_CYCLES);
    hal_fatal(false);           /* a restart after a panic: the controller reset is done */
    copy_reset();
    G.n_tags = 1u << G.id.tag_width;
    G.handle_slots = G.id.max_transfer / SLOT_BYTES;
    G.xfer_addr = G.n_tags * G.handle_slots * SLOT_BYTES;
    G.mqes = G.id.mqes ? G.id.mqes : 4095;     /* Create I/O SQ/CQ refuse larger queues */
    shutdown_done = false;
    fw_puts("ssdlab firmware: persona ");
    fw_puts(G.id.persona);
    hal_putc('\n');
    ftl_init_geometry();
    admin_reset();
    log_reset();
    /* a card's emulated NAND lives in its DDR: calibrated first, or no flash back end */
    if (!dram_init() || !flash_bringup()) {
        /* no flash: an empty namespace, so the fast path refuses every LBA */
        F.user_units = 0;
        F.ns_lbas = 0;
        hal_ns_size(0);
        return false;
    }
    flash_probe(true);          /* pages that may be erased: not media errors */
    ckpt_find_area();
    F.ready = true;
    enum ckpt_result ck = ckpt_load();
    flash_probe(false);
    if (ck == CKPT_BLANK && F.sysdir_lost)
        ck = CKPT_LOST;         /* the directory is unreadable: not new flash */
    C.watchdog_resets += watchdog;      /* after the load: the counters come from flash */
    if (ck == CKPT_LOST) {
        /* a checkpoint was there and none loads: the map is gone. Never a silent format:
         * the drive reports it (SMART critical warning, error log, AER) and refuses I/O
         * until the host formats it */
        fw_puts("checkpoints unreadable: map lost, read-only until Format NVM\n");
        F.failed = true;
        ftl_reset_map();
        C.power_cycles = 1;
        log_error(0, 0xFFFF, NVME_SC_INTERNAL_ERROR, 0, 0);
        log_aer_event(NVME_AER_TYPE_SMART_HEALTH, NVME_AER_SMART_NVM_SUBSYSTEM_RELIABILITY,
                      NVME_LOG_SMART_HEALTH);
        F.in_use = true;        /* no journal, no checkpoint until a format */
    } else if (ck == CKPT_BLANK) {
        fw_puts("no checkpoint: formatting new flash\n");
        blk_scan_factory_bad();
        if (!F.sysdir)
            sysdir_save();      /* the marks as read on new flash, and the areas */
        ftl_reset_map();
        C.power_cycles = 1;
        ckpt_save(false);
    } else if (!F.jnl_fresh) {
        /* journal pages replayed (or one cut short): a checkpoint of the replayed map in
         * the other area, whose journal starts on erased pages */
        ckpt_save(false);
    }
    if (!F.in_use)
        jnl_session();
    F.boot_cycles = (uint32_t)(hal_cycles() - boot_start);
    /* the stall maxima are the host's: the boot's own checkpoint held no command */
    F.stall_ckpt = F.stall_release = F.stall_wb = F.stall_gc = 0;
    hal_ns_size(F.ns_lbas);
    ftl_hw_read_start();
    fw_puts("ready: user units ");
    fw_put_hex(F.user_units);
    hal_putc('\n');
    return true;
}

/* One iteration of the main loop. */
void fw_poll(void)
{
    if (hal_ctrl_reset_pending()) {
        /* controller reset: queues, AERs and features back to their defaults, then the
         * front end may be enabled again */
        admin_reset();
        hal_ctrl_reset_ack();
    }

    /* the checkpoint must hold every write the host got a completion for: wait until no
     * fast-path command is in flight (the front end reports SHST complete only then too) */
    uint8_t shn = hal_shutdown_request();
    /* io_busy does not wake the firmware (hardware-path commands): poll it meanwhile */
    io_drain = shn && !shutdown_done && hal_io_busy();
    if (shn && !shutdown_done && !hal_io_busy() && ftl_requests_idle()) {
        ftl_flush_sync();
        ckpt_save(true);
        F.quiesced = true;
        shutdown_done = true;
        hal_shutdown_done(true);
    } else if (!shn && shutdown_done) {
        shutdown_done = false;
        hal_shutdown_done(false);
    }

    struct hal_cmd cmd;
    bool busy = false;
    if (!queues_hold_full() && hal_cmd_pop(&cmd)) {
        admin_dispatch(&cmd);
        busy = true;
    }

    struct hal_be_req r;
    for (int i = 0; i < 8 && hal_be_req_pop(&r); i++) {
        ftl_be_request(&r);
        busy = true;
    }

    ftl_poll();
    queues_poll();
    gc_idle(busy || !ftl_requests_idle());
    log_spare_poll();
    uint8_t info;
    uint16_t sqid;
    while (hal_aer_pop(&info, &sqid))
        log_aer_error(info, sqid);
    log_aer_poll();
}

#ifndef FW_HOST
/* A pass that wrote no register changed nothing outside the firmware: the next one would
 * find the same, so the CPU waits (soc/fw_wait.py) until the hardware shows something new
 * or gc_idle's time comes. FwWait itself sees whether the pass wrote a register (then the
 * wait returns at once), and the arm before the pass makes a change during it wake at once. */
int main(void)
{
    fw_init();
    for (;;) {
        hal_wait_arm();
        fw_poll();
        if (io_drain)
            hal_wait(hal_cycles() + IO_DRAIN_POLL_CYCLES);
        else if (!ckpt_live_has_work())     /* a live checkpoint's words are staged by the
                                             * CPU: no register write wakes it for them */
            hal_wait_idle(gc_idle_deadline(), gc_idle_hw_cycles());
    }
}
#endif
