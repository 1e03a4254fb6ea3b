/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_gc.c - greedy garbage collection per die and the relocation it shares with bad-block
 * retirement: valid units go back through the ordinary write path (striped, buffered). */
#include "ftl.h"

/* Move every valid unit of (die, blk) into the write buffer, one multi-plane page at a
 * time through the GC stage. */
void gc_relocate(uint32_t die, uint32_t blk)
{
    bool was = F.in_gc;
    F.in_gc = true;
    uint32_t pages = blk_pages(die, blk);
    for (uint32_t page = 0; page < pages && F.blk[bidx(die, blk)].valid; page++) {
        uint32_t live = 0;
        for (uint32_t u = 0; u < F.pu_units; u++) {
            uint32_t ppn = ppn_of(die, blk, page, u);
            uint32_t lpn = F.p2l[ppn];
            if (lpn != MAP_NONE && F.l2p[lpn] == ppn)
                live |= 1u << u;
        }
        if (!live)
            continue;
        copy_wait();            /* the stage's previous contents have been copied out */
        struct hal_flash_op op = {
            .op = FLASH_READ, .plane_mask = (uint8_t)((1u << F.planes) - 1),
            .block = (uint16_t)(blk << F.plane_bits), .page = (uint16_t)page,
            .column = 0, .length = (uint16_t)F.die[die].page_bytes,
            .buffer = (uint16_t)F.gc_stage,
            .slc = F.blk[bidx(die, blk)].slc,
        };
        flash_op_addr(&op, die);
        struct hal_flash_cpl c = flash_sync(&op);
        if (c.fail || c.error)
            C.media_errors++;
        for (uint32_t u = 0; u < F.pu_units; u++) {
            if (!(live >> u & 1))
                continue;
            uint32_t ppn = ppn_of(die, blk, page, u);
            uint32_t lpn = F.p2l[ppn];
            /* the write path may have moved it meanwhile (wb_alloc waits on programs) */
            if (lpn == MAP_NONE || F.l2p[lpn] != ppn)
                continue;
            ftl_write_unit_from(lpn, slot_addr(F.gc_stage + u));
            C.gc_units_moved++;
        }
    }
    copy_wait();
    F.in_gc = was;
}

/* Greedy: the full block of `die` with the fewest valid units (fewer than max_valid),
 * nothing in flight to it; -1 when there is none. */
static int32_t gc_victim(uint32_t die, uint32_t max_valid)
{
    int32_t best = -1;
    uint32_t best_valid = max_valid;
    for (uint32_t k = 0; k < F.nblk; k++) {
        struct blk_info *b = &F.blk[bidx(die, k)];
        if (b->state == BLK_FULL && b->inflight == 0 && b->valid < best_valid) {
            best = (int32_t)k;
            best_valid = b->valid;
        }
    }
    return best;
}

/* One victim of `die` relocated and left pending; false when no block would gain space. */
bool gc_one(uint32_t die)
{
    int32_t best = gc_victim(die, F.die[die].upb);
    if (best < 0)
        return false;
    gc_relocate(die, (uint32_t)best);
    struct blk_info *b = &F.blk[bidx(die, (uint32_t)best)];
    if (b->valid)
        fw_panic("GC victim still has valid units");
    if (b->slc)
        slc_block_left(die, (uint32_t)best);
    b->state = BLK_PENDING;
    F.die[die].n_pending++;
    return true;
}

/* Retire blocks that failed once nothing is in flight to them. */
void retire_poll(void)
{
    if (F.in_gc || !F.retire_pending)
        return;
    {
        bool left = false;
        for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
            struct blk_info *bi = &F.blk[b];
            if (bi->state != BLK_RETIRING)
                continue;
            if (bi->inflight) {
                left = true;
                continue;
            }
            gc_relocate(b / F.nblk, b % F.nblk);
            bi->state = BLK_BAD;
            jnl_append_bad(b);
        }
        F.retire_pending = left;
    }
}

/* Keep gc_low free blocks on every die: GC the dies short of free + pending blocks, then,
 * if a die is short of free ones, a journal commit turns the pending blocks free. Top level
 * only (before a Write, in the main loop), never inside the program path. */
void gc_ensure(void)
{
    if (F.in_gc || F.in_ckpt || F.quiesced)
        return;
    retire_poll();
    /* only after an allocation took a die below gc_low: no per-poll scan of every die */
    if (!F.gc_wanted)
        return;
    F.gc_wanted = false;
    bool short_free = false, pending = false;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        struct die_info *di = &F.die[d];
        while (di->n_free + di->n_pending < ftl_config.gc_low && gc_one(d))
            ;
        short_free |= di->n_free < ftl_config.gc_low;
        pending |= di->n_pending > 0;
    }
    if (short_free && pending)
        ftl_release_pending();
}

void gc_poll(void)
{
    gc_ensure();
}

/*
 * Background GC in the host's idle time, as drives do between bursts: once the host has been
 * idle for gc_idle_us, one victim block per call (a command that arrives meanwhile waits for
 * one block's relocation at most) on the die with the fewest free blocks, while a die is
 * below gc_idle_free and has a block with at least a page of invalid units: the invalid space
 * becomes free blocks again (the recovery a review measures after idle time). When there is
 * nothing left to do, a checkpoint returns the emptied (pending) blocks to the free pool.
 */
static uint64_t idle_since;
static bool was_busy = true;
static bool timer_armed;            /* the last call returned only because it was too early */

/* The host idle time after which gc_idle() acts, in cycles. */
static uint64_t idle_cycles(void)
{
    return (uint64_t)ftl_config.gc_idle_us * (G.id.clk_hz / 1000000u);
}

/* The uptime cycle at which gc_idle() acts next without any other change (the main loop's
 * wait deadline), or HAL_NO_DEADLINE: once the idle time has passed, gc_idle() acts on the
 * FTL's state alone, which changes only with other work. */
uint64_t gc_idle_deadline(void)
{
    if (!timer_armed)
        return HAL_NO_DEADLINE;
    return idle_since + idle_cycles();
}

/* The host idle time the deadline also waits for in hardware (FwWait IDLE): the commands of
 * the hardware I/O path do not wake the firmware, so only the hardware knows when the last
 * one ended. */
uint32_t gc_idle_hw_cycles(void)
{
    uint64_t c = idle_cycles();
    return !timer_armed ? 0 : c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

void gc_idle(bool host_busy)
{
    if (host_busy || F.quiesced || !F.ready || F.in_gc || F.in_ckpt ||
        !ftl_config.gc_idle_us) {
        was_busy = true;
        timer_armed = false;
        return;
    }
    uint64_t now = hal_cycles();
    /* the hardware path's commands: the idle time starts when the last of them ended */
    uint64_t hw = hal_io_busy() ? now : hal_idle_since();
    timer_armed = true;
    if (was_busy) {
        was_busy = false;
        idle_since = now;
        return;
    }
    if (hw > idle_since)
        idle_since = hw > now ? now : hw;
    if (now - idle_since < idle_cycles())
        return;
    timer_armed = false;
    /* the SLC cache first: folded back so the next burst finds it empty */
    if (slc_fold_one())
        return;
    uint32_t target = ftl_config.gc_idle_free ? ftl_config.gc_idle_free : F.nblk / 4;
    int32_t die = -1;
    uint32_t fewest = target;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        uint32_t n = F.die[d].n_free + F.die[d].n_pending;
        if (n < fewest && gc_victim(d, F.die[d].upb - F.die[d].pu + 1) >= 0) {
            fewest = n;
            die = (int32_t)d;
        }
    }
    if (die >= 0) {
        gc_one((uint32_t)die);
        C.idle_gc_blocks++;
        return;
    }
    bool pending = false;
    for (uint32_t d = 0; d < F.n_dies && !pending; d++)
        pending = F.die[d].n_pending > 0;
    if (pending)
        ftl_release_pending();
}
