/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_gc.c - greedy garbage collection per die and the relocation it shares with bad-block
 * retirement: valid units go back through the ordinary write path (striped, buffered). */
#include "ftl.h"

/* Move the valid units of one page of (die, blk) into the write buffer through the GC stage
 * (one multi-plane READ); the units moved. F.in_gc is the caller's. */
static uint32_t gc_move_page(uint32_t die, uint32_t blk, uint32_t page)
{
    uint32_t live = 0, moved = 0;
    for (uint32_t u = 0; u < F.pu_units; u++) {
        uint32_t ppn = ppn_of(die, blk, page, u);
        uint32_t lpn = F.p2l[ppn];
        if (lpn != MAP_NONE && F.l2p[lpn] == ppn)
            live |= 1u << u;
    }
    if (!live)
        return 0;
    copy_wait();                /* the stage's previous contents have been copied out */
    bool page_failed = true;    /* a failed die is not read: its units are rebuilt */
    if (!F.die[die].dead) {
        struct hal_flash_op op = {
            .op = FLASH_READ, .plane_mask = (uint8_t)((1u << F.planes) - 1),
            .block = (uint16_t)(blk << F.plane_bits), .page = (uint16_t)page,
            .column = 0, .length = (uint16_t)F.die[die].page_bytes,
            .buffer = (uint16_t)F.gc_stage,
            .slc = F.blk[bidx(die, blk)].slc,
        };
        flash_op_addr(&op, die);
        struct hal_flash_cpl c = flash_sync(&op);
        /* a codeword of the page failed past read retry: the op says only that, so each live
         * unit is read again alone (and rebuilt from die parity) and only those that fail are
         * lost (one bad codeword must not take the page's other units with it) */
        page_failed = c.fail || c.error;
    }
    for (uint32_t u = 0; u < F.pu_units; u++) {
        if (!(live >> u & 1))
            continue;
        uint32_t ppn = ppn_of(die, blk, page, u);
        uint32_t lpn = F.p2l[ppn];
        /* the write path may have moved it meanwhile (wb_alloc waits on programs) */
        if (lpn == MAP_NONE || F.l2p[lpn] != ppn)
            continue;
        if (page_failed && !read_unit_sync(ppn, F.gc_stage + u)) {
            ftl_map_set(lpn, MAP_UNC);      /* reads of it fail from now on */
            C.units_lost++;
            C.media_errors++;               /* SMART counts what was not recovered */
            continue;
        }
        ftl_write_unit_from(lpn, slot_addr(F.gc_stage + u));
        C.gc_units_moved++;
        moved++;
    }
    return moved;
}

/* Move every valid unit of (die, blk) from page `first` on into the write buffer, one
 * multi-plane page at a time. */
static void gc_relocate_from(uint32_t die, uint32_t blk, uint32_t first)
{
    bool was = F.in_gc;
    F.in_gc = true;
    uint32_t pages = blk_pages(die, blk);
    for (uint32_t page = first; page < pages && F.blk[bidx(die, blk)].valid; page++)
        gc_move_page(die, blk, page);
    copy_wait();
    F.in_gc = was;
}

void gc_relocate(uint32_t die, uint32_t blk)
{
    gc_relocate_from(die, blk, 0);
}

/* Greedy: the full block of `die` with the fewest valid units (fewer than max_valid),
 * nothing in flight to it; -1 when there is none. */
static int32_t gc_victim(uint32_t die, uint32_t max_valid)
{
    if (parity_die(die))
        return band_victim(die, max_valid);     /* bands are collected whole */
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

/* The die's victim, chosen now (greedy) when it has none: BLK_VICTIM until it is empty, so
 * no other path (SLC fold, idle GC, a second victim) takes it. -1: no block would gain
 * space. A victim a failure retired meanwhile is dropped (retire_poll moves it). */
static int32_t gc_victim_open(uint32_t die)
{
    struct die_info *di = &F.die[die];
    if (di->gc_blk >= 0 && F.blk[bidx(die, (uint32_t)di->gc_blk)].state != BLK_VICTIM)
        di->gc_blk = -1;
    if (di->gc_blk < 0 && parity_die(die)) {
        /* every member of the band at once; none while another band is being collected */
        if (band_victim_open(die))
            return -1;
        int32_t best = gc_victim(die, di->upb);
        if (best < 0)
            return -1;
        band_victim_set(die, (uint32_t)best);
        return di->gc_blk;
    }
    if (di->gc_blk < 0) {
        int32_t best = gc_victim(die, di->upb);
        if (best < 0)
            return -1;
        F.blk[bidx(die, (uint32_t)best)].state = BLK_VICTIM;
        di->gc_blk = best;
        di->gc_page = 0;
        di->gc_valid0 = F.blk[bidx(die, (uint32_t)best)].valid;
    }
    return di->gc_blk;
}

/* The die's victim is empty: pending until the next journal commit frees it. */
static void gc_victim_close(uint32_t die)
{
    struct die_info *di = &F.die[die];
    uint32_t blk = (uint32_t)di->gc_blk;
    struct blk_info *b = &F.blk[bidx(die, blk)];
    if (b->valid)
        fw_panic("GC victim still has valid units");
    if (b->slc)
        slc_block_left(die, blk);
    b->state = BLK_PENDING;
    di->n_pending++;
    di->gc_blk = -1;
}

/* The die's victim (one is chosen when none is open) relocated to its end and left
 * pending; false when no block would gain space. */
bool gc_one(uint32_t die)
{
    if (parity_die(die)) {
        /* the band: every member relocated and left pending */
        gc_victim_open(die);
        if (!band_victim_open(die))
            return false;
        uint32_t first, n;
        parity_group(die, &first, &n);
        for (uint32_t d = first; d < first + n; d++) {
            struct die_info *di = &F.die[d];
            if (di->gc_blk < 0 || F.blk[bidx(d, (uint32_t)di->gc_blk)].state != BLK_VICTIM)
                continue;
            gc_relocate_from(d, (uint32_t)di->gc_blk, di->gc_page);
            gc_victim_close(d);
        }
        return true;
    }
    int32_t blk = gc_victim_open(die);
    if (blk < 0)
        return false;
    gc_relocate_from(die, (uint32_t)blk, F.die[die].gc_page);
    gc_victim_close(die);
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
            if (bi->state != BLK_RETIRING || (F.die[b / F.nblk].dead && bi->valid))
                continue;       /* a failed die's data: die_rebuild_poll */
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

/* The background rebuild of a failed die under die parity: one of its blocks a call, its
 * units rebuilt from their stripes (read_unit_sync) and moved to the other dies, so the
 * host waits for a block's move at most; GC looks for room after each. The scan of every
 * block runs only while a failed die has some to move (F.rebuild_pending): it runs before
 * every write, and on the soft core a scan of 72 dies' blocks took longer than the write. */
void die_rebuild_poll(void)
{
    /* read-only (the spare could not cover the die): no room to move its data to, which
     * stays where it is, rebuilt from parity on every read */
    if (F.in_gc || F.in_ckpt || !F.rebuild_pending || ftl_read_only())
        return;
    bool left = false;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        struct blk_info *bi = &F.blk[b];
        if (bi->state != BLK_RETIRING || !F.die[b / F.nblk].dead || !bi->valid)
            continue;
        if (bi->inflight) {
            left = true;        /* programs still in flight to it: a later call */
            continue;
        }
        gc_relocate(b / F.nblk, b % F.nblk);
        bi->state = BLK_BAD;
        jnl_append_bad(b);
        F.gc_wanted = true;
        return;
    }
    F.rebuild_pending = left;
}

/* The next marked block to refresh, once it is full and nothing is in flight to it: held as
 * BLK_VICTIM (neither GC nor a band takes it meanwhile) in F.rf_blk. A marked block that is
 * no longer full (a GC victim, retired, emptied) is dropped. False: none ready now;
 * F.refresh_pending says whether marks are left for later. */
static bool refresh_open(void)
{
    bool left = false;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        struct blk_info *bi = &F.blk[b];
        if (!bi->refresh)
            continue;
        if (bi->state == BLK_ACTIVE || (bi->state == BLK_FULL && bi->inflight) ||
            F.rf_blk >= 0) {
            left = true;        /* being filled, programs in flight, or a later call's */
            continue;
        }
        bi->refresh = 0;
        if (bi->state != BLK_FULL)
            continue;
        bi->state = BLK_VICTIM;
        F.rf_blk = (int32_t)b;
        F.rf_page = 0;
    }
    F.refresh_pending = left || F.rf_blk >= 0;
    return F.rf_blk >= 0;
}

/* The block being refreshed moves its next page that holds data, as a GC victim's pages
 * move; emptied, it is left pending, erased when taken again. One dropped meanwhile (retired
 * by a failure) stops being refreshed. True: a page moved or the block finished. */
static bool refresh_step(void)
{
    if (F.in_gc || !F.refresh_pending || (F.rf_blk < 0 && !refresh_open()))
        return false;
    struct blk_info *bi = &F.blk[F.rf_blk];
    uint32_t die = (uint32_t)F.rf_blk / F.nblk, blk = (uint32_t)F.rf_blk % F.nblk;
    uint32_t pages = blk_pages(die, blk);
    if (bi->state == BLK_VICTIM) {
        F.in_gc = true;
        while (bi->valid && F.rf_page < pages && !gc_move_page(die, blk, F.rf_page++))
            ;
        copy_wait();
        F.in_gc = false;
        if (bi->valid && F.rf_page < pages)
            return true;        /* the next call's page */
        if (bi->valid)
            fw_panic("refreshed block still has valid units");
        if (bi->slc)
            slc_block_left(die, blk);
        bi->state = BLK_PENDING;
        F.die[die].n_pending++;
        C.refreshed_blocks++;
    }
    F.rf_blk = -1;
    refresh_open();             /* the next marked block, or refresh_pending cleared */
    return true;
}

/* Refresh is paced: a page's move (its read may go through every read-retry level: the
 * block has drifted) is what a host command waits for behind it, so pages move while the
 * host is idle (gc_idle, one per call, continuously), and while it is busy only one every
 * REFRESH_BUSY_US, so a refresh still ends under a load that never pauses. A whole block
 * moved at once cost the wear-out run's QD 1 reads p99 4.1 ms at 20,000 P/E; a page per main
 * loop pass, p50 383 us and p99 3.0 ms. */
#define REFRESH_BUSY_US 5000u

void refresh_poll(void)
{
    uint32_t hint;              /* a block the hardware read path found drifting */
    if (hal_hw_read_hint(&hint) && hint < F.n_dies * F.nblk)
        blk_refresh_mark(hint / F.nblk, hint % F.nblk);
    if (!F.refresh_pending)
        return;
    uint64_t now = hal_cycles();
    if (now < F.rf_due)
        return;
    /* also when nothing was ready: the scan of every block for a mark is not a per-pass
     * cost either */
    refresh_step();
    F.rf_due = now + (uint64_t)REFRESH_BUSY_US * (G.id.clk_hz / 1000000u);
}

/* The floor below which a write waits for whole victims (gc_low - 1, at least 1): paced GC
 * (gc_pace) works at the floor, below gc_low. gc_low 1 turns pacing off. */
static uint32_t gc_floor(void)
{
    return ftl_config.gc_low > 2 ? ftl_config.gc_low - 1 : 1;
}

/* The pages one write can put on a die: its units (the largest transfer) and paced GC's
 * moves (one victim at most), in groups dealt to the dies in turn, one more for the group
 * being filled. A die with less room than this and no free block may need a new block in
 * the write. */
static uint32_t write_pages_per_die(uint32_t die)
{
    uint32_t units = G.id.max_transfer / UNIT_BYTES + F.die[die].upb;
    return (units / F.pu_units + 1) / F.n_dies + 2;
}

/* The die's free and pending blocks; a parity die's: its group's bands (band_room). */
static void die_room(uint32_t die, uint32_t *free, uint32_t *pend)
{
    if (parity_die(die)) {
        band_room(die, free, pend);
    } else {
        *free = F.die[die].n_free;
        *pend = F.die[die].n_pending;
    }
}

/* A die that may need a block in the next write and has none free, only pending ones. */
static bool die_needs_release(uint32_t die)
{
    struct die_info *di = &F.die[die];
    uint32_t free, pend;
    die_room(die, &free, &pend);
    if (free || !pend)
        return false;
    uint32_t room = di->active < 0 ? 0 : blk_pages(die, (uint32_t)di->active) - di->next_page;
    return room < write_pages_per_die(die);
}

/* Keep every die at or above the floor of free + pending blocks: whole victims moved before
 * a write (a pause the host sees, C.gc_fg_blocks: paced GC normally keeps the dies above
 * it); then, if a die is short of free blocks, a release (journal commit) turns the pending
 * blocks free beside host I/O. The write waits for it only when a die without a free block
 * has less room than a write may take (die_needs_release); should a block still run out
 * mid-write, blk_take never takes a releasing one and the group goes to the next die. Top
 * level only (before a Write, in the main loop), never inside the program path. */
void gc_ensure(void)
{
    if (F.in_gc || F.in_ckpt || F.quiesced)
        return;
    die_poll();
    retire_poll();
    refresh_poll();
    die_rebuild_poll();
    /* only after an allocation took a die below gc_low: no per-poll scan of every die */
    if (!F.gc_wanted)
        return;
    F.gc_wanted = false;
    bool short_free = false, pending = false, none_free = false;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        struct die_info *di = &F.die[d];
        if (di->dead || (parity_die(d) && !band_lead(d)))
            continue;
        uint32_t free, pend;
        for (;;) {
            die_room(d, &free, &pend);
            if (free + pend >= gc_floor() || !gc_one(d))
                break;
            C.gc_fg_blocks++;
        }
        short_free |= free < ftl_config.gc_low;
        /* a parity group's pending blocks: whether on this die or another of the band */
        pending |= parity_die(d) ? pend > 0 : di->n_pending > di->n_releasing;
        none_free |= die_needs_release(d);
    }
    /* twice at most: the release under way may not hold that die's blocks */
    for (int i = 0; i < 2 && none_free; i++) {
        ftl_release_pending();
        none_free = false;
        for (uint32_t d = 0; d < F.n_dies; d++)
            none_free |= die_needs_release(d);
    }
    if (short_free && pending)
        ftl_release_start(false);
    /* a release under way: look again before the next write */
    F.gc_wanted |= F.rel_state != REL_IDLE;
}

/*
 * Paced GC: a die below gc_low free + pending blocks (so at the floor, gc_low - 1) has its
 * victim moved a page at a time, before each host write, in proportion to the units the
 * write takes. A victim of v valid units out of upb frees upb - v units net, so every host
 * unit earns v / (upb - v) units of moving: the victim is done before its die has used the
 * room of its open block (its moved units included), and no write waits for a whole
 * block's relocation. GC starts where it used to (a die below gc_low) and the dies hold no
 * more free blocks than before, so write amplification does not grow. The neediest die
 * (fewest free + pending blocks) works first.
 */
#define GC_CREDIT_ONE 256u          /* fixed point: credit per unit */

void gc_pace(uint32_t units)
{
    if (F.in_gc || F.in_ckpt || F.quiesced || !F.gc_pacing)
        return;
    int32_t die = -1;
    uint32_t fewest = ftl_config.gc_low;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        uint32_t free, pend;
        if (parity_die(d) && !band_lead(d))
            continue;       /* a group's room is its lead's: one band_room scan per group */
        die_room(d, &free, &pend);
        uint32_t n = free + pend;
        if (n < fewest && !F.die[d].dead && (F.die[d].gc_blk >= 0 ||
            ((!parity_die(d) || !band_victim_open(d)) && gc_victim(d, F.die[d].upb) >= 0))) {
            fewest = n;
            die = (int32_t)d;
        }
    }
    if (die < 0) {
        F.gc_pacing = false;
        F.gc_credit = 0;
        return;
    }
    struct die_info *di = &F.die[die];
    int32_t blk = gc_victim_open((uint32_t)die);
    if (blk < 0)
        return;
    struct blk_info *b = &F.blk[bidx((uint32_t)die, (uint32_t)blk)];
    /* the rate of the victim as chosen: its valid count falls as it is moved */
    uint32_t gain = di->upb > di->gc_valid0 ? di->upb - di->gc_valid0 : 1;
    /* a quarter more than the balance: the dies of a stripe fall below gc_low together and
     * are served one after another, so the last ones served use some of their room before
     * their turn */
    uint64_t credit = F.gc_credit + GC_CREDIT_ONE / 2 +
                      (uint64_t)units * di->gc_valid0 * GC_CREDIT_ONE * 5 / 4 / gain;
    /* at most one victim's worth of moving per write */
    uint64_t cap = (uint64_t)di->upb * GC_CREDIT_ONE;
    if (credit > cap)
        credit = cap;
    bool was = F.in_gc;
    F.in_gc = true;
    uint32_t pages = blk_pages((uint32_t)die, (uint32_t)blk);
    while (credit >= GC_CREDIT_ONE && b->valid && di->gc_page < pages) {
        uint32_t moved = gc_move_page((uint32_t)die, (uint32_t)blk, di->gc_page++);
        if (moved) {
            C.gc_paced_pages++;
            credit -= (uint64_t)moved * GC_CREDIT_ONE > credit ? credit
                                                               : (uint64_t)moved * GC_CREDIT_ONE;
        }
    }
    copy_wait();
    F.in_gc = was;
    F.gc_credit = (uint32_t)credit;
    if (!b->valid || di->gc_page >= pages)
        gc_victim_close((uint32_t)die);
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
    /* a drifting block's refresh first, a page a call; then the SLC cache, folded back so
     * the next burst finds it empty */
    if (refresh_step() || slc_fold_one())
        return;
    uint32_t target = ftl_config.gc_idle_free ? ftl_config.gc_idle_free : F.nblk / 4;
    int32_t die = -1;
    uint32_t fewest = target;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        uint32_t free, pend;
        if (parity_die(d) && !band_lead(d))
            continue;       /* as in gc_pace */
        die_room(d, &free, &pend);
        uint32_t n = free + pend;
        if (n < fewest && !F.die[d].dead &&
            gc_victim(d, F.die[d].upb - F.die[d].pu + 1) >= 0) {
            fewest = n;
            die = (int32_t)d;
        }
    }
    if (die >= 0) {
        gc_one((uint32_t)die);
        C.idle_gc_blocks++;
        return;
    }
    /* the host is idle: the group being filled is programmed now, not left waiting */
    ftl_release_start(true);
}
