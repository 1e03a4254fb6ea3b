/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ftl_slc.c - the SLC write cache: host data is programmed into blocks erased in pseudo-SLC
 * mode (one bit per cell: ppb / bits_per_cell pages, the part's SLC tPROG) while the die has
 * room in its cache, then straight into native (MLC/TLC) blocks; in the host's idle time the
 * cache is folded: each SLC block's valid units go through the ordinary GC relocation into
 * native blocks and the block returns to the free pool. Static cache: at most slc_max blocks
 * per die, reserved (left out of the user capacity). Dynamic cache: at most slc_max blocks
 * per die, taken from free space only while the die keeps its GC reserve and a margin, so
 * the cache shrinks as the drive fills. Theory: sw/firmware/README.md, "SLC write cache".
 */
#include "ftl.h"

/* free blocks a die keeps beyond the GC reserve before a dynamic cache may take one */
#define SLC_DYNAMIC_MARGIN 2u

void slc_init_geometry(void)
{
    const struct hal_ident *id = &G.id;
    uint32_t bits = id->bits_per_cell ? id->bits_per_cell : 2;
    F.slc_policy = id->slc_policy;
    F.slc_ppb = F.ppb / bits;
    F.slc_max = 0;
    if (F.slc_policy == SLC_NONE || bits < 2 || F.slc_ppb == 0)
        return;
    if (F.slc_policy != SLC_STATIC && F.slc_policy != SLC_DYNAMIC)
        fw_panic("unknown SLC cache policy");
    /* the cache's native footprint, rounded to whole blocks: every die has at least one */
    F.slc_max = (F.nblk * id->slc_permille + 500) / 1000;
    if (F.slc_max == 0)
        F.slc_max = 1;
    if (F.slc_max + ftl_config.gc_low + 2 > F.nblk)
        F.slc_max = F.nblk > ftl_config.gc_low + 3 ? F.nblk - ftl_config.gc_low - 3 : 0;
}

/* The die's SLC block being filled has room, or one can be opened: host data goes there. */
bool slc_take(uint32_t die)
{
    struct die_info *di = &F.die[die];
    if (!F.slc_max || F.in_ckpt)
        return false;
    if (di->slc_active >= 0 && di->slc_next_page < F.slc_ppb &&
        F.blk[bidx(die, (uint32_t)di->slc_active)].state == BLK_ACTIVE)
        return true;
    if (di->n_slc >= F.slc_max)
        return false;           /* the cache is full: native until idle time folds it */
    if (F.slc_policy == SLC_DYNAMIC &&
        di->n_free <= ftl_config.gc_low + SLC_DYNAMIC_MARGIN)
        return false;           /* free space is short: the dynamic cache gives way */
    return blk_alloc_slc(die) >= 0;
}

/* An SLC block stops holding data (GC emptied it, it failed): the cache has room again. */
void slc_block_left(uint32_t die, uint32_t blk)
{
    struct die_info *di = &F.die[die];
    if (di->n_slc)
        di->n_slc--;
    if (di->slc_active == (int32_t)blk)
        di->slc_active = -1;
}

/* One SLC block of the die holding the most folded: its valid units relocated into native
 * blocks (gc_relocate: in_gc, so the write path goes native), the block pending until the
 * next checkpoint frees it. A partly filled block is closed first. false: nothing to fold. */
bool slc_fold_one(void)
{
    if (!F.slc_max)
        return false;
    int32_t die = -1, pick = -1;
    uint32_t most = 0;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        struct die_info *di = &F.die[d];
        if (di->n_slc <= most)
            continue;
        int32_t c = -1;
        for (uint32_t k = 0; k < F.nblk && c < 0; k++) {
            struct blk_info *b = &F.blk[bidx(d, k)];
            if (b->slc && b->state == BLK_FULL && !b->inflight)
                c = (int32_t)k;
        }
        if (c < 0 && di->slc_active >= 0 && di->slc_next_page > 0 &&
            !F.blk[bidx(d, (uint32_t)di->slc_active)].inflight)
            c = di->slc_active;
        if (c >= 0) {
            most = di->n_slc;
            die = (int32_t)d;
            pick = c;
        }
    }
    if (die < 0)
        return false;           /* nothing to fold, or only programs in flight */
    struct die_info *di = &F.die[die];
    struct blk_info *b = &F.blk[bidx((uint32_t)die, (uint32_t)pick)];
    if (di->slc_active == pick) {
        /* close the open block: the rest of its pages stay unwritten until its erase */
        b->state = BLK_FULL;
        di->slc_active = -1;
    }
    uint64_t moved = C.gc_units_moved;
    gc_relocate((uint32_t)die, (uint32_t)pick);
    if (b->valid)
        fw_panic("folded SLC block still has valid units");
    C.slc_units_folded += C.gc_units_moved - moved;
    C.slc_blocks_folded++;
    slc_block_left((uint32_t)die, (uint32_t)pick);
    b->state = BLK_PENDING;
    di->n_pending++;
    F.dirty = true;
    return true;
}
