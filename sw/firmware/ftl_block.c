/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_block.c - block management: wear-aware allocation (erase on allocate), invalidation,
 * erase completions, grown bad blocks (retire) and the factory bad-block scan. */
#include "ftl.h"

/* Block k of `die` (free, nothing in flight) erased now for writing, in native or SLC mode,
 * a member of its die-parity band or not; returns k. */
int32_t blk_take_at(uint32_t die, uint32_t k, bool slc, bool band)
{
    struct die_info *di = &F.die[die];
    struct blk_info *b = &F.blk[bidx(die, k)];
    /* the hardware read path may still be issuing a READ decoded from an old map word that
     * names this block: it must reach the die before the ERASE does */
    hal_hw_read_fence();
    hal_hw_read_slc(bidx(die, k), slc);
    b->state = BLK_ACTIVE;
    b->slc = slc;
    b->band = band;
    b->refresh = 0;
    b->erase_count++;
    jnl_append_erase(bidx(die, k), slc, band);
    b->inflight++;
    di->n_free--;
    if (di->n_free < ftl_config.gc_low)
        F.gc_wanted = true;
    if (di->n_free + di->n_pending < ftl_config.gc_low)
        F.gc_pacing = true;
    C.erases++;
    struct hal_flash_op op = { .op = FLASH_ERASE, .plane_mask = (uint8_t)((1u << F.planes) - 1),
                               .block = (uint16_t)(k << F.plane_bits), .slc = slc };
    flash_op_addr(&op, die);
    op.tag = flash_tag_get(blk_erase_done, die, k);
    flash_push(&op);
    return (int32_t)k;
}

/* The free block of `die` with the lowest erase count, erased now in native or SLC mode
 * (the erase is queued ahead of the die's programs, and ops to one die run in order); -1:
 * none. GC and the pending-block release belong to gc_ensure (top level); here only as an
 * emergency. */
static int32_t blk_take(uint32_t die, bool slc)
{
    struct die_info *di = &F.die[die];
    /* emergency only (gc_ensure keeps gc_low free blocks between requests) */
    if (di->n_free == 0 && !F.in_gc && !F.in_ckpt)
        while (di->n_free + di->n_pending == 0 && gc_one(die))
            ;
    int32_t best = -1;
    uint32_t best_ec = 0xFFFFFFFFu;
    for (uint32_t k = 0; k < F.nblk; k++) {
        struct blk_info *b = &F.blk[bidx(die, k)];
        if (b->state == BLK_FREE && b->inflight == 0 && b->erase_count < best_ec) {
            best = (int32_t)k;
            best_ec = b->erase_count;
        }
    }
    if (best < 0) {
        /* last resort: a block emptied but not yet released (a power loss before the next
         * journal commit may then lose flushed data the durable map points to); never one
         * of the release under way (gc_ensure keeps a free block on every die that has
         * them): the caller tries the next die */
        for (uint32_t k = 0; k < F.nblk && best < 0; k++)
            if (F.blk[bidx(die, k)].state == BLK_PENDING && !F.blk[bidx(die, k)].inflight)
                best = (int32_t)k;
        if (best < 0)
            return -1;
        F.blk[bidx(die, (uint32_t)best)].state = BLK_FREE;
        C.pending_reuse++;
        di->n_pending--;
        di->n_free++;
    }
    return blk_take_at(die, (uint32_t)best, slc, false);
}

int32_t blk_alloc(uint32_t die)
{
    int32_t k = blk_take(die, false);
    if (k >= 0) {
        F.die[die].active = k;
        F.die[die].next_page = 0;
    }
    return k;
}

int32_t blk_alloc_slc(uint32_t die)
{
    int32_t k = blk_take(die, true);
    if (k >= 0) {
        F.die[die].slc_active = k;
        F.die[die].slc_next_page = 0;
        F.die[die].n_slc++;
    }
    return k;
}

/* A release starts: the pending blocks are the ones its commit frees. */
void blk_mark_releasing(void)
{
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        if (F.blk[b].state == BLK_PENDING) {
            F.blk[b].state = BLK_RELEASING;
            F.die[b / F.nblk].n_releasing++;
        }
}

/* A release's commit is on flash: its blocks are no longer referenced by the durable map.
 * A checkpoint (all) covers every map change: the other pending blocks too, and the release
 * under way is over. */
void blk_release_pending(bool all)
{
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        struct die_info *di = &F.die[b / F.nblk];
        if (F.blk[b].state == BLK_RELEASING)
            di->n_releasing--;
        else if (!(all && F.blk[b].state == BLK_PENDING))
            continue;
        F.blk[b].state = BLK_FREE;
        di->n_free++;
        di->n_pending--;
    }
    F.rel_state = REL_IDLE;
}

void blk_erase_done(uint32_t die, uint32_t blk, bool fail)
{
    F.blk[bidx(die, blk)].inflight--;
    if (fail) {
        die_strike(die);
        blk_retire(die, blk);
    } else {
        die_good(die);
    }
}

void blk_invalidate(uint32_t ppn)
{
    F.p2l[ppn] = MAP_NONE;
    F.blk[ppn / F.upb].valid--;
}

/* A read of the block needed read retry, or its ECC corrected nearly all it can: the cells
 * have drifted (retention, read disturb, wear), so its data moves to a fresh block before it
 * drifts past what retry recovers (refresh_poll); the block is erased and used again. */
void blk_refresh_mark(uint32_t die, uint32_t blk)
{
    struct blk_info *b = &F.blk[bidx(die, blk)];
    if (b->state != BLK_ACTIVE && b->state != BLK_FULL)
        return;                 /* being emptied already, or not holding data */
    if (b->band && parity_die(die)) {
        band_refresh_mark(die, blk);    /* the band moves as a whole (ftl_parity.c) */
        return;
    }
    b->refresh = 1;
    F.refresh_pending = true;
}

/* A program or erase failed: no more writes to the block; gc_poll moves its valid data
 * out once nothing is in flight to it, then it is bad for good. */
void blk_retire(uint32_t die, uint32_t blk)
{
    struct blk_info *b = &F.blk[bidx(die, blk)];
    if (b->state == BLK_RETIRING || b->state == BLK_BAD)
        return;
    if (b->state == BLK_FREE)
        F.die[die].n_free--;
    if (b->state == BLK_PENDING || b->state == BLK_RELEASING)
        F.die[die].n_pending--;
    if (b->state == BLK_RELEASING)
        F.die[die].n_releasing--;
    if (b->slc && (b->state == BLK_ACTIVE || b->state == BLK_FULL || b->state == BLK_VICTIM))
        slc_block_left(die, blk);
    b->state = BLK_RETIRING;
    F.retire_pending = true;
    blk_spare_update();
    if (F.die[die].active == (int32_t)blk)
        F.die[die].active = -1;
    F.dirty = true;
}

/* Factory bad blocks: the first spare byte of page 0 is not FFh on any plane. Only ever
 * read on blocks we have not written spare bytes of (we never program the spare area). */
static bool blk_marked_bad(uint32_t die, uint32_t blk)
{
    uint32_t len = F.die[die].spare_bytes < 8 ? F.die[die].spare_bytes : 8;
    for (uint32_t p = 0; p < F.planes; p++) {
        struct hal_flash_op op = {
            .op = FLASH_READ, .plane_mask = (uint8_t)(1u << p),
            .block = (uint16_t)(blk << F.plane_bits | p), .page = 0,
            .column = (uint16_t)F.die[die].page_bytes, .length = (uint16_t)len,
            .buffer = (uint16_t)(F.scratch - p * F.upp), .raw = 1,    /* a spare byte */
        };
        flash_op_addr(&op, die);
        struct hal_flash_cpl c = flash_sync(&op);
        if (c.error || (buf_read32(slot_addr(F.scratch)) & 0xFF) != 0xFF)
            return true;
    }
    return false;
}

/* All dies at once: a batch of marker reads spread over the dies (die-major order inside the
 * batch, so every die has work), each into its own write-buffer slot (free at format time).
 * Once the system directory is written (the first format), its table instead: the marks of
 * programmed blocks are codeword bytes under an ECC (ftl_sysdir.c). */
void blk_scan_factory_bad(void)
{
    if (F.sysdir && sysdir_load(true))
        return;
    enum { BATCH = 64 };
    static struct hal_flash_op ops[BATCH];
    static struct hal_flash_cpl cpl[BATCH];
    static uint32_t which[BATCH];
    uint32_t total = F.n_dies * F.nblk * F.planes, n = 0;
    for (uint32_t i = 0; i <= total; i++) {
        if (i < total) {
            /* i -> (plane, block, die) with the die varying fastest */
            uint32_t d = i % F.n_dies, k = (i / F.n_dies) % F.nblk;
            uint32_t p = i / (F.n_dies * F.nblk);
            struct blk_info *b = &F.blk[bidx(d, k)];
            if (b->state == BLK_SYS)
                continue;
            if (p == 0)
                b->state = BLK_FREE;
            uint32_t len = F.die[d].spare_bytes < 8 ? F.die[d].spare_bytes : 8;
            ops[n] = (struct hal_flash_op){
                .op = FLASH_READ, .plane_mask = (uint8_t)(1u << p),
                .block = (uint16_t)(k << F.plane_bits | p), .page = 0,
                .column = (uint16_t)F.die[d].page_bytes, .length = (uint16_t)len,
                .buffer = (uint16_t)(grp_slot(n) - p * F.upp), .raw = 1,
            };
            flash_op_addr(&ops[n], d);
            which[n++] = bidx(d, k);
        }
        if (n == BATCH || (i == total && n)) {
            flash_sync_batch(ops, cpl, n);
            for (uint32_t j = 0; j < n; j++)
                if (cpl[j].error || (buf_read32(slot_addr(grp_slot(j))) & 0xFF) != 0xFF)
                    F.blk[which[j]].state = BLK_BAD;
            n = 0;
        }
    }
}

/* System area: as the system directory names it; on new flash (no directory yet), the
 * first 2 x area_blocks good blocks of die 0 (but the directory's block), by their marks
 * (then written into the directory by the first format). */
void ckpt_find_area(void)
{
    if (sysdir_load(false))
        return;
    F.sysdir = false;
    /* not new flash: the areas below are a guess (marks of programmed blocks are data
     * under an ECC), and no checkpoint found there may be taken for new flash */
    F.sysdir_lost = !sysdir_erased();
    F.n_sys = 0;
    F.sys_die = 0;
    F.blk[bidx(sysdir_die(), SYSDIR_BLOCK)].state = BLK_SYS;
    for (uint32_t k = 0; k < F.nblk && F.n_sys < 2 * F.area_blocks; k++) {
        if (sysdir_die() == 0 && k == SYSDIR_BLOCK)
            continue;
        struct blk_info *b = &F.blk[bidx(0, k)];
        if (blk_marked_bad(0, k)) {
            b->state = BLK_BAD;
        } else {
            b->state = BLK_SYS;
            F.sys_blk[F.n_sys++] = k;
        }
    }
    if (F.n_sys < 2 * F.area_blocks)
        fw_panic("not enough good blocks for the checkpoint area");
}

uint32_t blk_count_state(uint8_t state)
{
    uint32_t n = 0;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        n += F.blk[b].state == state;
    return n;
}

uint32_t blk_avg_erase(void)
{
    uint64_t sum = 0;
    uint32_t n = 0;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        if (F.blk[b].state != BLK_BAD && F.blk[b].state != BLK_SYS) {
            sum += F.blk[b].erase_count;
            n++;
        }
    return n ? (uint32_t)(sum / n) : 0;
}

/* Spare blocks: good data blocks beyond the fewest the drive can work with (the user
 * capacity, each die's open block and one more per die for GC to move data into, one for the
 * pending release); the geometry's
 * with no bad block is the design figure. Counted again when a block goes bad (blk_retire),
 * at boot and after format, not per command. */
/* The blocks of data `blocks` good blocks of a stripe group of `live` dies hold: one block
 * of each band is parity, so (live - 1) / live of them; a group of one live die writes no
 * band. Without parity (live 0), all of them. */
static uint32_t data_blocks(uint32_t blocks, uint32_t live)
{
    if (!live)
        return blocks;
    return live > 1 ? (uint32_t)((uint64_t)blocks * (live - 1) / live) : 0;
}

void blk_spare_update(void)
{
    uint32_t good = 0, total = 0;
    for (uint32_t d = 0; d < F.n_dies; ) {
        /* a stripe group at once (a die without parity on its own): under die parity the
         * spare is what the group's live dies hold beside their parity, which a failed die
         * narrows (its share is gone and the others' parity share grows) */
        uint32_t first = d, n = 1, g_good = 0, g_total = 0, live = 0;
        if (parity_die(d))
            parity_group(d, &first, &n);
        for (d = first; d < first + n; d++) {
            uint32_t die_good = 0, die_data = 0;
            for (uint32_t b = d * F.nblk; b < (d + 1) * F.nblk; b++) {
                die_data += F.blk[b].state != BLK_SYS;
                die_good += F.blk[b].state != BLK_BAD && F.blk[b].state != BLK_RETIRING &&
                            F.blk[b].state != BLK_SYS;
            }
            /* no block left to write: out of service (also at boot, after ftl_die.c) */
            if (die_data && !die_good)
                F.die[d].dead = 1;
            g_good += die_good;
            g_total += die_data;
            live += !F.die[d].dead;
        }
        bool band = parity_die(first);
        good += data_blocks(g_good, band ? live : 0);
        total += data_blocks(g_total, band ? n : 0);
    }
    total -= total ? 1 : 0;             /* the directory */
    uint32_t need = (F.user_units + F.upb - 1) / F.upb + 2 * F.n_dies + 1;
    if (need >= total)
        need = total - 1;       /* a drive of one or two dies: one spare block by design */
    F.spare_design = total > need ? total - need : 0;
    F.spare_left = (int32_t)good - (int32_t)need;
}

uint32_t blk_spare_percent(void)
{
    if (F.spare_left <= 0 || !F.spare_design)
        return 0;
    uint32_t left = (uint32_t)F.spare_left;
    return left >= F.spare_design ? 100 : left * 100 / F.spare_design;
}

/* No more writes: the map is lost, or the grown bad blocks took every spare one (the drive
 * could no longer hold its capacity and reclaim space). */
bool ftl_read_only(void)
{
    return F.failed || (F.ready && F.spare_left <= 0);
}
