/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl.c - geometry, the L2P map, the write buffer (groups of one multi-plane page), the
 * striped program path and the fast-path block requests (Read, Write, Flush). */
#include "ftl.h"

struct ftl F;
struct ftl_config ftl_config = {
    .op_permille = 70,          /* 7 %: what consumer drives keep (the persona's, if given) */
    .pe_budget = 3000,          /* MLC budget when the part says nothing */
    .gc_low = 2,
    .gc_idle_us = 1000,
};
extern uint32_t fw_buf_limit;
static uint32_t n_active;       /* fast-path requests in progress (below) */
static uint32_t n_rq;           /* ... reads of theirs to rebuild (rebuild_poll) */
/* durable requests (FUA, write-through, Flush) in progress, and the newest one's group seq */
static uint32_t n_durable, durable_seq;

#define MAX_GROUPS   JNL_GROUPS_MAX  /* the journal's list is sized for them */
#define MAX_READ_UNITS 8         /* READ length is 16 bits: 8 x 4 KiB at most */
#define N_SCRATCH    8
#define CKPT_HDR_WORDS 96         /* ftl_ckpt.c HDR_WORDS */
#define CKPT_TRAILER_WORDS 3
#define JNL_MIN_PAGES 8          /* journal pages an area holds after its checkpoint, at least */

/* --- geometry and tables -------------------------------------------------------------- */

/* Each die's part: the main one, or the second part type on the targets the SoC names
 * (mixed parts share the row geometry; the second page may be smaller). */
static void ftl_init_dies(void)
{
    const struct hal_ident *id = &G.id;
    uint32_t upp2 = id->part2_page_bytes / UNIT_BYTES;
    F.mixed = id->part2_page_bytes != 0;
    if (F.mixed && (upp2 == 0 || upp2 > F.upp || id->part2_page_bytes % UNIT_BYTES))
        fw_panic("second part's page is not a multiple of 4 KiB up to the main part's");
    if (F.mixed && F.n_targets > 64)
        fw_panic("second part on a drive of more than 64 targets");
    F.data_units = 0;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        struct die_info *di = &F.die[d];
        uint32_t t = d % F.n_targets;
        uint32_t mask = t < 32 ? id->part2_mask_lo : id->part2_mask_hi;
        bool two = F.mixed && (mask >> (t % 32) & 1);
        if (two && d == 0)
            fw_panic("the second part on die 0 (the checkpoint area's die)");
        di->upp = (uint16_t)(two ? upp2 : F.upp);
        di->pu = (uint16_t)(di->upp * F.planes);
        di->upb = F.ppb * di->pu;
        di->page_bytes = two ? id->part2_page_bytes : id->page_bytes;
        di->spare_bytes = two ? id->part2_spare_bytes : id->spare_bytes;
        F.data_units += F.nblk * di->upb;
    }
}

void ftl_init_geometry(void)
{
    const struct hal_ident *id = &G.id;
    F.n_ch = id->n_channels;
    F.n_ways = id->n_ways;
    F.n_luns = id->luns ? id->luns : 1;
    if (F.n_luns > 4)
        fw_panic("more than 4 LUNs per chip enable (the flash op's lun field)");
    F.n_targets = F.n_ch * F.n_ways;
    F.n_dies = F.n_targets * F.n_luns;
    F.nblk = id->blocks_per_plane;
    F.ppb = id->pages_per_block;
    F.planes = id->planes;
    F.upp = id->page_bytes / UNIT_BYTES;
    if (F.upp == 0 || id->lbads < 9 || id->lbads > 12 || F.nblk < 8 || F.planes == 0)
        fw_panic("unsupported geometry (page < 4 KiB, LBA size, or too few blocks)");
    /* the persona's over-provisioning and P/E budget, when the SoC states them */
    if (id->op_permille && id->op_permille < 1000)
        ftl_config.op_permille = id->op_permille;
    if (id->pe_cycles)
        ftl_config.pe_budget = id->pe_cycles;
    F.pu_units = F.upp * F.planes;
    F.upb = F.ppb * F.pu_units;
    F.raw_units = F.n_dies * F.nblk * F.upb;
    F.spu_shift = 12 - id->lbads;
    fw_alloc_reset();
    F.die = fw_alloc(F.n_dies * sizeof(struct die_info));
    ftl_init_dies();
    slc_init_geometry();
    parity_init_geometry();

    /* firmware slots: GC stage, scratch, the journal's page, the read-retry levels' SET
     * FEATURES parameters, then write-buffer groups
     * (checkpoints are staged in the groups' slots) */
    F.gc_stage = id->fw_slot_first;
    F.scratch = F.gc_stage + F.pu_units;
    F.n_scratch = N_SCRATCH;
    F.jstage = F.scratch + N_SCRATCH;
    F.retry_slot = F.jstage + F.pu_units;
    F.probe_slot = F.retry_slot + (id->retry_levels > 1 ? id->retry_levels : 0);
    F.rebuild_slot = F.probe_slot + (id->retry_levels > 1 ?
                 (id->page_bytes + id->spare_bytes + SLOT_BYTES - 1) / SLOT_BYTES : 0);
    F.acc_slot = F.rebuild_slot + F.stripe;
    F.grp_base = F.rebuild_slot + parity_slots();
    fw_buf_limit = F.grp_base + 4 * F.pu_units;        /* at least 4 groups */
    if (fw_buf_limit > id->buf_slots)
        fw_panic("buffer memory too small for the write buffer");

    /* system area: two checkpoint areas big enough for any capacity of this geometry, each
     * with room for its journal (ftl_journal.c) */
    uint32_t words = CKPT_HDR_WORDS + F.raw_units + F.n_dies * F.nblk + CKPT_TRAILER_WORDS +
                     JNL_MIN_PAGES * F.pu_units * (UNIT_BYTES / 4);
    uint64_t blk_bytes = (uint64_t)F.upb * UNIT_BYTES;
    F.area_blocks = (uint32_t)(((uint64_t)words * 4 + blk_bytes - 1) / blk_bytes);
    F.n_sys = 2 * F.area_blocks;
    if (F.n_sys > 64 || F.n_sys + 1 + 4 > F.nblk)       /* + the system directory */
        fw_panic("checkpoint area does not fit in die 0");

    /* user capacity: raw minus system blocks, minus over-provisioning, but always leaving
     * each die gc_low + 1 blocks (the GC reserve and the open block) */
    uint64_t avail = F.data_units - (uint64_t)(F.n_sys + 1) * F.upb;
    uint64_t user = avail * (1000 - ftl_config.op_permille) / 1000;
    /* a static SLC cache's blocks are reserved too (the persona's user capacity leaves
     * their native capacity out) */
    uint32_t slc_reserved = F.slc_policy == SLC_STATIC ? F.slc_max : 0;
    uint64_t reserve = 0;
    for (uint32_t d = 0; d < F.n_dies; d++)
        reserve += (uint64_t)(ftl_config.gc_low + 1 + slc_reserved) * F.die[d].upb;
    /* die parity: a page of every stripe's row holds no data (the persona's spare pays) */
    if (F.stripe)
        avail -= avail / F.stripe;
    if (user + reserve > avail)
        user = avail > reserve ? avail - reserve : 0;
    F.user_units = (uint32_t)user;
    F.ns_lbas = (uint64_t)F.user_units << F.spu_shift;

    F.l2p = fw_alloc(F.user_units * 4);
    F.p2l = fw_alloc(F.raw_units * 4);
    F.blk = fw_alloc(F.n_dies * F.nblk * sizeof(struct blk_info));
    jnl_init_geometry();
    ckpt_init_geometry();
    uint32_t top = id->buf_slots - (fw_alloc_used_buf() + SLOT_BYTES - 1) / SLOT_BYTES;
    uint32_t n = (top - F.grp_base) / F.pu_units;
    F.n_grp = n > MAX_GROUPS ? MAX_GROUPS : n;
    F.grp = fw_alloc(F.n_grp * sizeof(struct grp));
    F.grp_lpn = fw_alloc(F.n_grp * F.pu_units * 4);
    F.wb_old = fw_alloc(F.n_grp * F.pu_units * 4);
    for (uint32_t g = 0; g < F.n_grp; g++)
        F.grp[g].state = GRP_FREE;
    F.filling = F.n_grp;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        F.blk[b] = (struct blk_info){ .state = BLK_FREE };
    n_active = n_rq = 0;        /* no request survives a reset (the host unit tests' too) */
    n_durable = durable_seq = 0;
}

/* Every unit unmapped; blocks keep erase counts, bad and system marks. */
void ftl_reset_map(void)
{
    for (uint32_t i = 0; i < F.user_units; i++)
        F.l2p[i] = MAP_NONE;
    ftl_rebuild();
    F.dirty = true;
}

/* p2l, valid counts, block states and free counts from the l2p (boot, format). A block with
 * valid data is full (its unwritten pages wait for GC); one without is free (erased when
 * allocated). */
void ftl_rebuild(void)
{
    for (uint32_t p = 0; p < F.raw_units; p++)
        F.p2l[p] = MAP_NONE;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        F.blk[b].valid = 0;
        F.blk[b].inflight = 0;
    }
    for (uint32_t l = 0; l < F.user_units; l++) {
        uint32_t p = F.l2p[l];
        if (p == MAP_NONE || p == MAP_UNC)
            continue;
        if ((p & MAP_WB) || p >= F.raw_units)
            fw_panic("map entry out of range");
        F.p2l[p] = l;
        F.blk[p / F.upb].valid++;
    }
    F.rf_blk = -1;
    F.rf_page = 0;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        struct die_info *di = &F.die[d];
        di->active = di->slc_active = -1;
        di->next_page = di->slc_next_page = 0;
        di->n_free = di->n_pending = di->n_releasing = di->n_slc = 0;
        di->gc_blk = -1;
        di->gc_page = 0;
        for (uint32_t k = 0; k < F.nblk; k++) {
            struct blk_info *b = &F.blk[bidx(d, k)];
            if (b->state == BLK_BAD || b->state == BLK_SYS)
                continue;
            if (b->state == BLK_RETIRING) {
                b->state = BLK_BAD;
                continue;
            }
            /* pending blocks too: the map being rebuilt no longer points into them */
            b->state = b->valid ? BLK_FULL : BLK_FREE;
            if (!b->valid)
                F.die[d].n_free++;
            else if (b->slc)
                F.die[d].n_slc++;
        }
    }
    for (uint32_t g = 0; g < F.n_grp; g++)
        F.grp[g].state = GRP_FREE;
    F.filling = F.n_grp;
    F.n_requeue = 0;
    F.gc_wanted = F.gc_pacing = true;
    F.gc_credit = 0;
    F.rel_state = REL_IDLE;
    parity_reset();
    blk_spare_update();
    /* a failed die under parity whose data was not all moved off before the power loss:
     * its blocks that still hold units are moved again (rebuilt, retire_poll) */
    for (uint32_t b = 0; F.stripe && b < F.n_dies * F.nblk; b++)
        if (F.die[b / F.nblk].dead && F.blk[b].valid && F.blk[b].state == BLK_BAD) {
            F.blk[b].state = BLK_RETIRING;
            F.retire_pending = F.rebuild_pending = true;
        }
}

void ftl_map_set(uint32_t lpn, uint32_t v)
{
    uint32_t old = F.l2p[lpn];
    if (old != MAP_NONE && !(old & MAP_WB))
        blk_invalidate(old);
    F.l2p[lpn] = v;
    F.dirty = true;
    /* a unit in the write buffer reaches the journal when its group is programmed */
    if (v == MAP_NONE || v == MAP_UNC)
        jnl_append(lpn, v);
}

/* --- write buffer ---------------------------------------------------------------------- */

static bool grp_busy(uint32_t g)
{
    return F.grp[g].state == GRP_PROGRAMMING || F.grp[g].state == GRP_REQUEUE;
}

/* A slot in the group being filled; waits for a free group (programs complete). */
uint32_t ftl_wb_alloc(uint32_t lpn)
{
    uint64_t t0 = F.filling == F.n_grp ? hal_cycles() : 0;
    while (F.filling == F.n_grp) {
        /* round robin from the group after the last one taken: programs complete about in
         * the order they were submitted, so the first one looked at is free as a rule (a
         * scan from group 0 cost a look at every busy group, each a load on the soft core) */
        uint32_t g = F.grp_scan < F.n_grp ? F.grp_scan : 0;
        for (uint32_t k = 0; k < F.n_grp; k++, g = g + 1 == F.n_grp ? 0 : g + 1) {
            if (F.grp[g].state == GRP_FREE) {
                /* its units fit the die the stripe goes to next */
                F.grp[g] = (struct grp){ .state = GRP_FILLING, .upp = F.die[F.rr_die].upp };
                for (uint32_t i = 0; i < F.pu_units; i++)
                    F.grp_lpn[g * F.pu_units + i] = MAP_NONE;
                F.filling = g;
                F.grp_scan = g + 1 == F.n_grp ? 0 : g + 1;
                break;
            }
        }
        if (F.filling == F.n_grp) {
            /* no free group until programs finish: wait for the flash when nothing moved */
            hal_wait_arm();
            flash_poll();
            ftl_submit_ready();
            hal_wait(HAL_NO_DEADLINE);
        }
    }
    if (t0)
        stall_note(&F.stall_wb, t0);
    struct grp *gr = &F.grp[F.filling];
    /* plane p's units at p x F.upp (the data movers' plane stride); counted, not divided
     * out of `fill` (a division is some 35 cycles on the soft core) */
    uint32_t wb = F.filling * F.pu_units + gr->plane * F.upp + gr->in_plane;
    gr->fill++;
    if (++gr->in_plane == gr->upp) {
        gr->in_plane = 0;
        gr->plane++;
    }
    F.grp_lpn[wb] = lpn;
    return wb;
}

static void grp_program_done(uint32_t g, uint32_t unused, bool fail);
static int32_t pad_group = -1;  /* grp_submit: only this stripe group's dies (pad_rows) */

/* Program group g on the next die of the stripe (channel first, then way, then LUN). */
static void grp_submit(uint32_t g)
{
    struct grp *gr = &F.grp[g];
    /* the flash data mover reads the slots: every copy into them must have landed */
    copy_wait();
    if (gr->state == GRP_FILLING)
        gr->seq = F.seq_next++;
    else if (gr->state == GRP_REQUEUE)
        F.n_requeue--;
    for (uint32_t tries = 0; tries < F.n_dies; tries++) {
        uint32_t d = F.rr_die;
        F.rr_die = (F.rr_die + 1) % F.n_dies;
        struct die_info *di = &F.die[d];
        if (di->dead)
            continue;           /* out of service (ftl_die.c) */
        if (pad_group >= 0 && !parity_in_group(d, pad_group))
            continue;
        if (di->upp < gr->upp)
            continue;           /* mixed parts: a smaller page cannot take the group's units
                                 * (a larger one can: its extra columns stay unmapped) */
        uint32_t blk;
        /* host data into the die's SLC cache while it has room; GC and folds go native */
        bool band = parity_die(d), slc = !band && !F.in_gc && slc_take(d);
        if (band) {
            if (!band_take(d, &blk, &gr->page))
                continue;       /* the row's page of this die is taken (ftl_parity.c) */
        } else if (slc) {
            blk = (uint32_t)di->slc_active;
            gr->page = di->slc_next_page++;
            if (di->slc_next_page >= F.slc_ppb) {
                F.blk[bidx(d, blk)].state = BLK_FULL;
                di->slc_active = -1;
            }
            C.slc_units_written += di->pu;
        } else {
            if (di->active < 0 || di->next_page >= F.ppb ||
                F.blk[bidx(d, (uint32_t)di->active)].state != BLK_ACTIVE) {
                if (blk_alloc(d) < 0)
                    continue;
            }
            blk = (uint32_t)di->active;
            gr->page = di->next_page++;
            if (di->next_page >= F.ppb) {
                F.blk[bidx(d, blk)].state = BLK_FULL;
                di->active = -1;
            }
        }
        struct blk_info *b = &F.blk[bidx(d, blk)];
        gr->die = d;
        gr->blk = blk;
        gr->state = GRP_PROGRAMMING;
        b->inflight++;
        struct hal_flash_op op = {
            .op = FLASH_PROGRAM, .plane_mask = (uint8_t)((1u << F.planes) - 1),
            .block = (uint16_t)(blk << F.plane_bits), .page = (uint16_t)gr->page,
            .column = 0, .length = (uint16_t)di->page_bytes,
            .buffer = (uint16_t)(F.grp_base + g * F.pu_units), .slc = slc,
        };
        flash_op_addr(&op, d);
        op.tag = flash_tag_get(grp_program_done, g, 0);
        C.nand_units_written += di->pu;
        flash_push(&op);
        if (band)
            band_pushed(d, g);
        return;
    }
    fw_panic("no free block on any die");
}

static void wb_maybe_submit(void)
{
    if (F.filling != F.n_grp && F.grp[F.filling].fill == F.planes * F.grp[F.filling].upp) {
        uint32_t g = F.filling;
        F.filling = F.n_grp;
        grp_submit(g);
    }
}

/* Program the partly filled group now (Flush, FUA); unused slots map nothing. */
static void wb_pad_submit(void)
{
    if (F.filling != F.n_grp && F.grp[F.filling].fill) {
        uint32_t g = F.filling;
        F.filling = F.n_grp;
        grp_submit(g);
    }
}

void ftl_submit_ready(void)
{
    if (!F.n_requeue)
        return;
    for (uint32_t g = 0; g < F.n_grp; g++)
        if (F.grp[g].state == GRP_REQUEUE)
            grp_submit(g);
}

/* Program of group g done (its flash_done_fn): map its live units to the page; a failed
 * program (grown bad block) or a block found bad meanwhile sends the group elsewhere (its
 * data is still in the buffer). */
static void grp_program_done(uint32_t g, uint32_t unused, bool fail)
{
    (void)unused;
    struct grp *gr = &F.grp[g];
    struct blk_info *b = &F.blk[bidx(gr->die, gr->blk)];
    b->inflight--;
    if (fail)
        die_strike(gr->die);
    else
        die_good(gr->die);
    if (fail || b->state == BLK_RETIRING || b->state == BLK_BAD) {
        if (fail)
            blk_retire(gr->die, gr->blk);
        gr->state = GRP_REQUEUE;
        F.n_requeue++;
        return;
    }
    for (uint32_t i = 0; i < F.pu_units; i++) {
        uint32_t wb = g * F.pu_units + i;
        uint32_t lpn = F.grp_lpn[wb];
        uint32_t ppn = ppn_of(gr->die, gr->blk, gr->page, i);
        if (lpn != MAP_NONE && F.l2p[lpn] == (MAP_WB | wb)) {
            F.l2p[lpn] = ppn;
            F.p2l[ppn] = lpn;
            b->valid++;
            jnl_append(lpn, ppn);
        } else {
            F.p2l[ppn] = MAP_NONE;
        }
    }
    gr->state = GRP_FREE;
}

/* A unit whose copy is being programmed, and which a FUA write, a write-through or a Flush in
 * progress has promised to make durable, is overwritten only once that program is done: its
 * completion then journals the flash copy (a superseded copy is not journaled), and the
 * promise holds until the newer copy's program completes. Otherwise the overwrite goes on. */
static void wb_settle(uint32_t lpn)
{
    for (;;) {
        uint32_t v = F.l2p[lpn];
        if (!map_in_wb(v) || !n_durable)
            return;
        const struct grp *gr = &F.grp[(v & ~MAP_WB) / F.pu_units];
        if (!grp_busy((v & ~MAP_WB) / F.pu_units) || (int32_t)(gr->seq - durable_seq) >= 0)
            return;
        flash_poll_wait();
        ftl_submit_ready();
    }
}

/* lpn now in write-buffer slot wb; the slot keeps the unit's copy on flash before it (a
 * live checkpoint saves that, ftl_ckpt.c l2p_word) */
static void wb_map(uint32_t lpn, uint32_t wb)
{
    uint32_t old = F.l2p[lpn];
    F.wb_old[wb] = map_in_wb(old) ? F.wb_old[old & ~MAP_WB] : old;
    ftl_map_set(lpn, MAP_WB | wb);
}

/* A whole unit from buffer byte address src (host data or a GC stage). */
void ftl_write_unit_from(uint32_t lpn, uint32_t src)
{
    wb_settle(lpn);
    uint32_t old = F.l2p[lpn];
    if (map_in_wb(old) && F.grp[(old & ~MAP_WB) / F.pu_units].state == GRP_FILLING) {
        /* still in the group being filled: overwrite in place */
        copy_start(slot_addr(grp_slot(old & ~MAP_WB)), src, UNIT_BYTES);
        return;
    }
    uint32_t wb = ftl_wb_alloc(lpn);
    copy_start(slot_addr(grp_slot(wb)), src, UNIT_BYTES);
    wb_map(lpn, wb);
    wb_maybe_submit();
}

/* The READ of one unit of flash into `slot` (whole unit). */
void unit_read_op(uint32_t ppn, uint32_t slot, struct hal_flash_op *op)
{
    uint32_t u = ppn % F.pu_units, b = ppn / F.upb;
    uint32_t page = (ppn / F.pu_units) % F.ppb;
    uint32_t plane = u / F.upp, off = u % F.upp;
    *op = (struct hal_flash_op){
        .op = FLASH_READ, .plane_mask = (uint8_t)(1u << plane),
        .block = (uint16_t)((b % F.nblk) << F.plane_bits | plane), .page = (uint16_t)page,
        .column = (uint16_t)(off * UNIT_BYTES), .length = UNIT_BYTES,
        .buffer = (uint16_t)(slot - plane * F.upp), .slc = F.blk[b].slc,
    };
    flash_op_addr(op, b / F.nblk);
}

/* One unit of flash into `slot` (whole unit), synchronously; false: it could not be read
 * (past read retry, and not rebuilt from die parity). A failed die is not read at all. */
bool read_unit_sync(uint32_t ppn, uint32_t slot)
{
    if (!F.die[ppn / F.upb / F.nblk].dead) {
        struct hal_flash_op op;
        unit_read_op(ppn, slot, &op);
        struct hal_flash_cpl c = flash_sync(&op);
        if (!(c.fail || c.error))
            return true;
    }
    return parity_rebuild(ppn, slot);
}

/* Part of a unit (bytes at `off`) from src, or zeroes when zero: read-modify-write. */
static void write_partial(uint32_t lpn, uint32_t off, uint32_t bytes, uint32_t src, bool zero)
{
    wb_settle(lpn);
    uint32_t old = F.l2p[lpn], dst;
    if (map_in_wb(old) && F.grp[(old & ~MAP_WB) / F.pu_units].state == GRP_FILLING) {
        dst = slot_addr(grp_slot(old & ~MAP_WB));
    } else {
        copy_wait();            /* nothing may still be reading the slot we take */
        uint32_t wb = ftl_wb_alloc(lpn);
        dst = slot_addr(grp_slot(wb));
        if (old == MAP_NONE || old == MAP_UNC)
            fill_start(dst, 0, UNIT_BYTES);     /* a lost unit's other LBAs: zeroes */
        else if (old & MAP_WB)
            copy_start(dst, slot_addr(grp_slot(old & ~MAP_WB)), UNIT_BYTES);
        else if (!read_unit_sync(old, grp_slot(wb)))
            C.media_errors++;
        wb_map(lpn, wb);
    }
    if (zero)
        fill_start(dst + off, 0, bytes);
    else
        copy_start(dst + off, src, bytes);
    wb_maybe_submit();
}

/* Deallocate (DSM) and Write Zeroes: whole units unmapped, partial ones zeroed. */
uint16_t ftl_zero_range(uint64_t slba, uint64_t nlb)
{
    if (!F.in_use)
        jnl_session();
    uint32_t spu = 1u << F.spu_shift, lbads = G.id.lbads;
    uint64_t end = slba + nlb;
    while (slba < end) {
        uint32_t lpn = (uint32_t)(slba >> F.spu_shift);
        uint32_t s0 = (uint32_t)(slba & (spu - 1));
        uint64_t s1 = s0 + (end - slba);
        if (s1 > spu)
            s1 = spu;
        if (s0 == 0 && s1 == spu) {
            if (F.l2p[lpn] != MAP_NONE)
                ftl_map_set(lpn, MAP_NONE);
        } else if (F.l2p[lpn] != MAP_NONE) {
            write_partial(lpn, s0 << lbads, (uint32_t)(s1 - s0) << lbads, 0, true);
        }
        slba += s1 - s0;
    }
    return 0;
}

/* --- fast-path requests ------------------------------------------------------------------ */

struct req {
    uint8_t  active, durable, committed;
    uint16_t status;
    uint16_t pending;           /* flash reads outstanding (+1 while issuing) */
    uint32_t copy_target;
    uint32_t seq;               /* durable: groups with seq < this must be programmed */
    uint32_t jnl;               /* committed: the journal commit holding their map entries */
    uint64_t slba;
    uint16_t sqid, cid;         /* the command's, for its error log entry */
    uint32_t err_off;           /* media error: its first LBA, from slba */
    bool     media;             /* a flash read failed (error log entry at completion) */
};
static struct req reqs[256];
static uint8_t active[256];

/* A fast-path READ of request `tag` done (its flash_done_fn). */
static void media_error(struct req *q, uint32_t off)
{
    q->status = NVME_SC_UNRECOVERED_READ_ERROR;
    C.media_errors++;
    if (!q->media || off < q->err_off)
        q->err_off = off;
    q->media = true;
}

/* Fast-path READs that failed where die parity may rebuild them: read again unit by unit
 * by ftl_poll (rebuild_poll: a completion cannot push ops). */
static struct rq { uint8_t tag; uint16_t off, k; } rq[256];

/* A fast-path READ of request `tag` done (its flash_done_fn); b: its first LBA, from the
 * request's, and (bits 16..) its units. */
static void req_read_done(uint32_t tag, uint32_t b, bool fail)
{
    if (fail && F.stripe && n_rq < 256) {
        rq[n_rq++] = (struct rq){ (uint8_t)tag, (uint16_t)b, (uint16_t)(b >> 16) };
        return;                 /* still pending */
    }
    if (fail)
        media_error(&reqs[tag], b & 0xFFFF);
    reqs[tag].pending--;
}

/* The units of the failed READs again, each alone (read_unit_sync: read retry, then the
 * rebuild from die parity); only those that fail both are Unrecovered Read Errors. The map
 * is looked up again: a unit written meanwhile is read where it is now. */
static void rebuild_poll(void)
{
    if (!n_rq)
        return;
    uint32_t spu = 1u << F.spu_shift, lbads = G.id.lbads;
    while (n_rq) {
        struct rq e = rq[--n_rq];
        struct req *q = &reqs[e.tag];
        uint32_t base = e.tag * G.handle_slots * SLOT_BYTES;
        for (uint32_t i = 0; i < e.k; i++) {
            uint32_t off = e.off + i * spu, dst = base + (off << lbads);
            uint32_t v = F.l2p[(uint32_t)((q->slba + off) >> F.spu_shift)];
            if (v == MAP_NONE)
                fill_start(dst, 0, UNIT_BYTES);
            else if (map_in_wb(v))
                copy_start(dst, slot_addr(grp_slot(v & ~MAP_WB)), UNIT_BYTES);
            else if (v == MAP_UNC || !read_unit_sync(v, dst / SLOT_BYTES))
                media_error(q, off);
        }
        q->pending--;
    }
    copy_wait();
}

static bool durable_upto(uint32_t seq)
{
    for (uint32_t g = 0; g < F.n_grp; g++)
        if (grp_busy(g) && (int32_t)(F.grp[g].seq - seq) < 0)
            return false;
    return true;
}

static void do_write(const struct hal_be_req *r, struct req *q)
{
    uint32_t spu = 1u << F.spu_shift, lbads = G.id.lbads;
    uint32_t base = r->tag * G.handle_slots * SLOT_BYTES;
    uint64_t lba = r->slba, end = r->slba + r->nlb + 1u;
    uint64_t t0 = hal_cycles();
    gc_ensure();
    gc_pace((uint32_t)(((end - 1) >> F.spu_shift) - (r->slba >> F.spu_shift) + 1));
    stall_note(&F.stall_gc, t0);
    while (lba < end) {
        uint32_t lpn = (uint32_t)(lba >> F.spu_shift);
        uint32_t s0 = (uint32_t)(lba & (spu - 1));
        uint64_t s1 = s0 + (end - lba);
        if (s1 > spu)
            s1 = spu;
        uint32_t src = base + ((uint32_t)(lba - r->slba) << lbads);
        if (s0 == 0 && s1 == spu)
            ftl_write_unit_from(lpn, src);
        else
            write_partial(lpn, s0 << lbads, (uint32_t)(s1 - s0) << lbads, src, false);
        C.host_units_written++;
        lba += s1 - s0;
    }
    C.host_writes++;
    C.lbas_written += r->nlb + 1u;
    if ((r->flags & (1u << 14)) || !features_vwc()) {
        wb_pad_submit();
        q->durable = 1;
        q->seq = durable_seq = F.seq_next;
        n_durable++;
    }
}

static void do_read(const struct hal_be_req *r, struct req *q)
{
    uint32_t spu = 1u << F.spu_shift, lbads = G.id.lbads;
    uint32_t base = r->tag * G.handle_slots * SLOT_BYTES;
    uint64_t lba = r->slba, end = r->slba + r->nlb + 1u;
    while (lba < end) {
        uint32_t lpn = (uint32_t)(lba >> F.spu_shift);
        uint32_t s0 = (uint32_t)(lba & (spu - 1));
        uint64_t s1 = s0 + (end - lba);
        if (s1 > spu)
            s1 = spu;
        uint32_t dst = base + ((uint32_t)(lba - r->slba) << lbads);
        uint32_t bytes = (uint32_t)(s1 - s0) << lbads, off = s0 << lbads;
        uint32_t v = F.l2p[lpn];
        if (v == MAP_UNC) {
            media_error(q, (uint32_t)(lba - r->slba));     /* its data was lost: say so */
        } else if (v == MAP_NONE) {
            /* a run of never-written (or deallocated) units is one fill job: reading a
             * deallocated range then costs the buffer's fill rate, not a job per unit */
            uint64_t run = s1 - s0;
            while (lba + run < end && F.l2p[(uint32_t)((lba + run) >> F.spu_shift)] == MAP_NONE)
                run += (end - (lba + run) < spu) ? end - (lba + run) : spu;
            fill_start(dst, 0, (uint32_t)run << lbads);
            lba += run;
            continue;
        } else if (v & MAP_WB) {
            copy_start(dst, slot_addr(grp_slot(v & ~MAP_WB)) + off, bytes);
        } else if (bytes == UNIT_BYTES && dst % SLOT_BYTES == 0) {
            /* the common case: the flash data mover lands the unit in the tag's slot; the
             * following units of the same plane page (sequential data) ride along in the
             * same READ, one tR for all of them */
            uint32_t u = v % F.pu_units, b = v / F.upb;
            uint32_t page = (v / F.pu_units) % F.ppb, plane = u / F.upp;
            uint32_t slot = dst / SLOT_BYTES, col = u % F.upp, k = 1;
            while (col + k < F.upp && k < MAX_READ_UNITS &&
                   lba + ((uint64_t)(k + 1) << F.spu_shift) <= end &&
                   F.l2p[lpn + k] == v + k)
                k++;
            struct hal_flash_op op = {
                .op = FLASH_READ, .plane_mask = (uint8_t)(1u << plane),
                .block = (uint16_t)((b % F.nblk) << F.plane_bits | plane),
                .page = (uint16_t)page, .column = (uint16_t)(col * UNIT_BYTES),
                .length = (uint16_t)(k * UNIT_BYTES), .buffer = (uint16_t)(slot - plane * F.upp),
                .slc = F.blk[b].slc,
            };
            flash_op_addr(&op, b / F.nblk);
            uint32_t ctx = (uint32_t)(lba - r->slba) | k << 16;
            q->pending++;
            if (F.stripe && F.die[b / F.nblk].dead) {
                req_read_done(r->tag, ctx, true);       /* not read: rebuilt (rebuild_poll) */
            } else {
                op.tag = flash_tag_get(req_read_done, r->tag, ctx);
                flash_push(&op);
            }
            lba += (uint64_t)(k - 1) << F.spu_shift;   /* the loop adds the first unit */
        } else {
            /* unaligned part: through a scratch slot */
            copy_wait();
            if (!read_unit_sync(v, F.scratch))
                media_error(q, (uint32_t)(lba - r->slba));
            copy_start(dst, slot_addr(F.scratch) + off, bytes);
        }
        lba += s1 - s0;
    }
    C.host_reads++;
    C.lbas_read += r->nlb + 1u;
}

void ftl_be_request(const struct hal_be_req *r)
{
    struct req *q = &reqs[r->tag];
    *q = (struct req){ .active = 1, .pending = 1, .slba = r->slba, .sqid = r->sqid,
                       .cid = r->cid };
    if (r->opcode != NVME_CMD_FLUSH && (r->nsid != 1 || r->slba + r->nlb + 1u > F.ns_lbas)) {
        q->status = r->nsid != 1 ? NVME_SC_INVALID_NAMESPACE : NVME_SC_LBA_OUT_OF_RANGE;
    } else if (r->opcode == NVME_CMD_READ && F.failed) {
        q->status = NVME_SC_UNRECOVERED_READ_ERROR;     /* the map that located it is lost */
    } else if (r->opcode == NVME_CMD_WRITE && ftl_read_only()) {
        q->status = NVME_SC_NAMESPACE_WRITE_PROTECTED;
    } else if (r->opcode == NVME_CMD_WRITE) {
        F.quiesced = false;
        if (!F.in_use)
            jnl_session();
        do_write(r, q);
    } else if (r->opcode == NVME_CMD_READ) {
        do_read(r, q);
    } else if (r->opcode == NVME_CMD_FLUSH) {
        if (r->nsid != 1 && r->nsid != NVME_NSID_ALL) {
            q->status = NVME_SC_INVALID_NAMESPACE;
        } else {
            wb_pad_submit();
            q->durable = 1;
            q->seq = durable_seq = F.seq_next;
            n_durable++;
        }
    } else {
        q->status = NVME_SC_INVALID_OPCODE;
    }
    q->copy_target = copy_issued();
    q->pending--;
    active[n_active++] = r->tag;
}

/* The hardware read path (hal.h, rtl/ftl/README.md) reads F.l2p itself: it is on while the
 * map is in place, told every block's mode first; Format turns it off while it rewrites the
 * map. The erase of a block waits for its fence (blk_take). */
void ftl_hw_read_start(void)
{
    if (!hal_hw_read_present() || !F.ready || F.failed)
        return;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        hal_hw_read_slc(b, F.blk[b].slc);
    /* its READs name a block for refresh as the firmware's own do (flash.c read_health:
     * more than 3/4 of t corrected in a codeword) */
    hal_hw_read_refresh(G.id.ecc_t ? G.id.ecc_t * 3 / 4 + 1 : 0);
    hal_hw_read_setup(F.l2p, true);
}

void ftl_hw_read_stop(void)
{
    if (!hal_hw_read_present())
        return;
    hal_hw_read_setup(F.l2p, false);
    while (!hal_hw_read_idle())
        ;
}

bool ftl_requests_idle(void)
{
    return n_active == 0;
}

/* Rows of die parity partly written: the rest of each row padded (groups mapping nothing),
 * so its parity page is written too. */
static void pad_rows(void)
{
    for (int32_t pgr; (pgr = band_row_partial()) >= 0;) {
        uint32_t g = F.n_grp;
        while (g == F.n_grp) {
            for (g = 0; g < F.n_grp && F.grp[g].state != GRP_FREE; g++)
                ;
            if (g == F.n_grp)
                flash_poll_wait();
        }
        F.grp[g] = (struct grp){ .state = GRP_FILLING, .upp = (uint8_t)F.upp,
                                 .fill = (uint16_t)F.pu_units };
        for (uint32_t i = 0; i < F.pu_units; i++)
            F.grp_lpn[g * F.pu_units + i] = MAP_NONE;
        pad_group = pgr;
        grp_submit(g);
        pad_group = -1;
    }
}

void ftl_flush_sync(void)
{
    for (;;) {
        wb_pad_submit();
        flash_poll();
        ftl_submit_ready();
        retire_poll();          /* retiring blocks move their data into the buffer */
        bool busy = F.filling != F.n_grp || F.retire_pending;
        for (uint32_t g = 0; g < F.n_grp && !busy; g++)
            busy = grp_busy(g);
        if (!busy && band_row_partial() >= 0) {
            pad_rows();
            continue;
        }
        if (!busy)
            break;
    }
    while (flash_inflight())
        flash_poll_wait();
}

static void release_poll(void);

void ftl_poll(void)
{
    flash_poll();
    ftl_submit_ready();
    rebuild_poll();
    for (uint32_t i = 0; i < n_active;) {
        uint8_t t = active[i];
        struct req *q = &reqs[t];
        if (q->pending || !copy_reached(q->copy_target) ||
            (q->durable && !durable_upto(q->seq))) {
            i++;
            continue;
        }
        /* FUA, write-through and Flush: their units are mapped to flash now; they complete
         * once a journal commit holding those map entries is on flash too */
        if (q->durable && !q->committed) {
            if (!jnl_room()) {
                /* the journal's area is full: a live checkpoint first, beside host I/O */
                ckpt_live_start();
                i++;
                continue;
            }
            q->jnl = jnl_commit();
            q->committed = 1;
        }
        if (q->durable && !jnl_durable(q->jnl)) {
            i++;
            continue;
        }
        if (q->durable && --n_durable == 0)
            durable_seq = 0;
        q->active = 0;
        active[i] = active[--n_active];
        if (q->media)               /* an Unrecovered Read Error: the entry names the LBA */
            log_error(q->sqid, q->cid, q->status, 1, q->slba + q->err_off);
        hal_be_cpl_push(t, q->status);
    }
    release_poll();
    jnl_poll();
    gc_poll();
}

/*
 * GC's emptied blocks (pending) may be erased once the durable map (checkpoint + journal) no
 * longer names them: every unit moved out of them, and every unit overwritten meanwhile,
 * programmed and its map entry committed. A release does that beside host I/O, as the FUA
 * path does: ftl_release_start marks the pending blocks releasing and notes the groups
 * issued so far (the one being filled too: host writes fill it); release_poll (main loop)
 * commits the journal once those groups are programmed and no journal page is in flight,
 * then frees the blocks once that commit is on flash. Blocks emptied meanwhile wait for
 * the next release. A write waits for it (ftl_release_pending) only when a die without a
 * free block has less room than one write may take (gc_ensure, die_needs_release): no
 * allocation ever takes a releasing block.
 */
void ftl_release_start(bool pad)
{
    if (!F.ready)
        return;
    bool pending = false;
    for (uint32_t d = 0; d < F.n_dies && !pending; d++)
        pending = F.die[d].n_pending > 0;
    if (F.rel_state == REL_IDLE && pending) {
        bool filling = F.filling != F.n_grp && F.grp[F.filling].fill;
        blk_mark_releasing();
        F.rel_seq = F.seq_next + filling;
        F.rel_state = REL_GROUPS;
    }
    /* pad (the host is idle, or a write waits): the group filling at the start is
     * programmed now rather than when host writes fill it */
    if (pad && F.rel_state == REL_GROUPS && (int32_t)(F.seq_next - F.rel_seq) < 0)
        wb_pad_submit();
}

static void release_poll(void)
{
    /* every group before rel_seq issued (the one filling at the start too) and programmed */
    if (F.rel_state == REL_GROUPS && (int32_t)(F.seq_next - F.rel_seq) >= 0 &&
        durable_upto(F.rel_seq) && !jnl_busy()) {
        if (!jnl_room()) {
            /* the journal's area is full: a live checkpoint first (it holds every map
             * entry journaled before it starts), then the commit of what came after */
            ckpt_live_start();
            return;
        }
        F.rel_state = REL_COMMIT;       /* before: a checkpoint inside ends the release */
        F.rel_jnl = jnl_commit();
    }
    if (F.rel_state == REL_COMMIT && jnl_durable(F.rel_jnl)) {
        blk_release_pending(false);
        C.jnl_releases++;
    }
}

/* The release (started if none is under way) finished now: the caller waits. */
void ftl_release_pending(void)
{
    if (!F.ready)
        return;
    uint64_t t0 = hal_cycles();
    ftl_release_start(true);
    if (F.rel_state != REL_IDLE)
        F.rel_waits++;
    while (F.rel_state != REL_IDLE) {
        ckpt_live_finish();             /* the release's commit needs the new area */
        if (F.rel_state == REL_COMMIT && !jnl_durable(F.rel_jnl))
            jnl_wait(F.rel_jnl);        /* a failed page: the checkpoint frees them */
        else if (F.rel_state == REL_GROUPS &&
                 (!durable_upto(F.rel_seq) || jnl_busy() || !jnl_room()))
            flash_poll_wait();          /* (the area's erase, before a live checkpoint) */
        ftl_submit_ready();
        release_poll();
    }
    stall_note(&F.stall_release, t0);
}
