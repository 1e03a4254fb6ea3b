/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ftl_parity.c - die parity (the persona's parity.scheme die-raid5).
 *
 * The dies are cut into stripe groups of F.stripe dies (die d in group d / F.stripe; a last
 * group of one die has no parity). A group writes one band at a time: the same block index
 * on each of its dies, the members (erased for the band; a bad block or a failed die is left
 * out). Row r of band b is page r of every member: one member (in turn, with b + r) holds the
 * XOR of the others' pages, so any one member's page is rebuilt from the rest. The write
 * path deals a row's data pages to its members one write-buffer group each, in the stripe's
 * round-robin order (grp_submit); the copy engine XORs each group into the row's accumulator
 * when its program is pushed, and the parity page is pushed after the row's last data page.
 * A die's ops run in order, so every page of a row is programmed (or failed) as it was pushed.
 *
 * A band is erased only as a whole: GC collects bands (ftl_gc.c), a refresh moves every
 * member, so a row stays as it was written until all of it is reused. A member that goes bad
 * (a program or erase failure) leaves its band without protection (its failed page is not
 * what the parity covers): a rebuild there is refused (an Unrecovered Read Error, never
 * wrong data). A failed die is the one failure a stripe bears: its units are rebuilt on
 * reads and moved off it in the background, block by block (ftl_die.c, retire_poll).
 *
 * Membership survives power loss in each block's `band` bit (journal JNL_ERASE / JNL_UNBAND,
 * checkpoint FLAG_BAND). A row whose parity page was never programmed (a power loss) reads
 * as an erased page: with an ECC no codeword, a failed read; without one, all FFh, refused.
 */
#include "ftl.h"

#define MAX_PGROUPS 128u
#define MAX_STRIPE  64u

struct pgroup {
    uint32_t first, n;          /* its dies */
    int32_t  band;              /* the band being written (block index), -1: none */
    uint32_t row;               /* its row being filled */
    uint64_t left;              /* members (bit: die - first) still to take the row's data */
    uint32_t pdie;              /* the row's parity die */
    bool     has_parity;        /* ... alive: the row's data is XORed and its parity written */
    bool     closing;           /* a member failed: the band ends with this row */
    bool     started;           /* a data page of the row was pushed */
    uint32_t acc_busy[2];       /* parity programs in flight from accumulator i (row & 1) */
};
static struct pgroup pg[MAX_PGROUPS];
static uint32_t n_pg;
static struct hal_flash_op rb_op[MAX_STRIPE];
static struct hal_flash_cpl rb_cpl[MAX_STRIPE];

static uint32_t acc_slot_of(uint32_t g, uint32_t i)
{
    return F.acc_slot + (2 * g + i) * F.pu_units;
}

void parity_init_geometry(void)
{
    F.stripe = G.id.parity_stripe;
    n_pg = 0;
    /* one page size across a stripe: the parity page covers every member's columns */
    if (F.stripe < 2 || (F.mixed && G.id.part2_page_bytes != G.id.page_bytes)) {
        F.stripe = 0;
        return;
    }
    if (F.stripe > MAX_STRIPE)
        fw_panic("parity stripe of more than 64 dies");
    for (uint32_t d = 0; d + 1 < F.n_dies && n_pg < MAX_PGROUPS; d += F.stripe) {
        uint32_t n = F.n_dies - d < F.stripe ? F.n_dies - d : F.stripe;
        if (n >= 2)
            pg[n_pg++] = (struct pgroup){ .first = d, .n = n, .band = -1 };
    }
    /* no SLC cache on parity dies: its blocks would be written outside the bands */
    F.slc_max = 0;
    F.slc_policy = SLC_NONE;
}

uint32_t parity_slots(void)
{
    return F.stripe ? F.stripe + 2 * n_pg * F.pu_units : 0;
}

void parity_reset(void)
{
    for (uint32_t g = 0; g < n_pg; g++) {
        pg[g].band = -1;
        pg[g].left = 0;
        pg[g].closing = false;
    }
}

bool parity_die(uint32_t die)
{
    return F.stripe && die / F.stripe < n_pg;
}

static struct pgroup *group_of(uint32_t die)
{
    return &pg[die / F.stripe];
}

/* The members of band blk (bit: die - first). */
static uint64_t members(const struct pgroup *p, uint32_t blk)
{
    uint64_t m = 0;
    for (uint32_t i = 0; i < p->n; i++)
        if (F.blk[bidx(p->first + i, blk)].band)
            m |= 1ull << i;
    return m;
}

/* The parity die of row `row` of band blk: its members in turn. */
static uint32_t parity_of(const struct pgroup *p, uint64_t m, uint32_t blk, uint32_t row)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < p->n; i++)
        n += (uint32_t)(m >> i & 1);
    uint32_t k = (blk + row) % n;
    for (uint32_t i = 0; i < p->n; i++)
        if ((m >> i & 1) && k-- == 0)
            return p->first + i;
    fw_panic("band without members");
}

/* Row `row` of group g's band: its parity die, the members that take its data (alive), the
 * accumulator zeroed once the parity program two rows back has read it. */
static void row_start(uint32_t g, uint32_t row)
{
    struct pgroup *p = &pg[g];
    uint32_t blk = (uint32_t)p->band;
    uint64_t m = members(p, blk), live = 0;
    for (uint32_t i = 0; i < p->n; i++)
        if ((m >> i & 1) && !F.die[p->first + i].dead &&
            F.blk[bidx(p->first + i, blk)].state == BLK_ACTIVE)
            live |= 1ull << i;
    p->row = row;
    p->started = false;
    p->pdie = parity_of(p, m, blk, row);
    p->has_parity = (live >> (p->pdie - p->first) & 1) != 0;
    p->left = live & ~(1ull << (p->pdie - p->first));
    uint32_t i = row & 1;
    while (p->acc_busy[i])
        flash_poll_wait();
    if (p->has_parity)
        fill_start(slot_addr(acc_slot_of(g, i)), 0, F.pu_units * UNIT_BYTES);
}

static void band_close(uint32_t g)
{
    struct pgroup *p = &pg[g];
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t d = p->first + i;
        struct blk_info *b = &F.blk[bidx(d, (uint32_t)p->band)];
        if (b->band && b->state == BLK_ACTIVE)
            b->state = BLK_FULL;
        if (F.die[d].active == p->band)
            F.die[d].active = -1;
    }
    p->band = -1;
    p->left = 0;
}

/* Parity program of group a / 2's accumulator a % 2 done (its flash_done_fn); bi: the block. */
static void parity_done(uint32_t a, uint32_t bi, bool fail)
{
    struct pgroup *p = &pg[a / 2];
    if (p->acc_busy[a % 2])
        p->acc_busy[a % 2]--;
    F.blk[bi].inflight--;
    if (fail) {
        die_strike(bi / F.nblk);
        blk_retire(bi / F.nblk, bi % F.nblk);  /* the band loses its protection */
    } else {
        die_good(bi / F.nblk);
    }
}

/* Every data page of the row pushed: its parity page next (the XORs into the accumulator
 * landed first), then the next row, or the band is full. */
static void row_done(uint32_t g)
{
    struct pgroup *p = &pg[g];
    uint32_t blk = (uint32_t)p->band, i = p->row & 1;
    struct blk_info *b = &F.blk[bidx(p->pdie, blk)];
    if (p->has_parity && b->state == BLK_ACTIVE) {
        copy_wait();
        b->inflight++;
        p->acc_busy[i]++;
        struct hal_flash_op op = {
            .op = FLASH_PROGRAM, .plane_mask = (uint8_t)((1u << F.planes) - 1),
            .block = (uint16_t)(blk << F.plane_bits), .page = (uint16_t)p->row,
            .column = 0, .length = (uint16_t)F.die[p->pdie].page_bytes,
            .buffer = (uint16_t)acc_slot_of(g, i),
        };
        flash_op_addr(&op, p->pdie);
        op.tag = flash_tag_get(parity_done, 2 * g + i, bidx(p->pdie, blk));
        C.nand_units_written += F.pu_units;
        flash_push(&op);
    }
    F.die[p->pdie].next_page = p->row + 1;
    if (p->closing || p->row + 1 >= F.ppb)
        band_close(g);
    else
        row_start(g, p->row + 1);
}

/* A block of index k in group p is in the release under way (never taken before its
 * commit). */
static bool releasing_at(const struct pgroup *p, uint32_t k)
{
    for (uint32_t i = 0; i < p->n; i++)
        if (F.blk[bidx(p->first + i, k)].state == BLK_RELEASING)
            return true;
    return false;
}

/* Block index k of group p as a band: every block on the group's live dies free, or (with
 * `pending`) emptied and waiting for a release (*waiting: some are), bad or system blocks
 * left out, at least two members; *ec: their highest erase count. A failed die's block not
 * yet moved off keeps the index: its stripes are still needed. */
static bool band_index_free(const struct pgroup *p, uint32_t k, bool pending, uint32_t *ec,
                            bool *waiting)
{
    uint32_t take = 0;
    *ec = 0;
    *waiting = false;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t d = p->first + i;
        const struct blk_info *b = &F.blk[bidx(d, k)];
        if (F.die[d].dead && b->band && b->valid)
            return false;
        if (F.die[d].dead || b->state == BLK_BAD || b->state == BLK_SYS)
            continue;
        bool wait = b->state == BLK_PENDING || b->state == BLK_RELEASING;
        if (b->inflight || !(b->state == BLK_FREE || (pending && wait)))
            return false;
        *waiting |= wait;
        take++;
        if (b->erase_count > *ec)
            *ec = b->erase_count;
    }
    return take >= 2;
}

/* Open a band for group g: the least worn free block index (band_index_free); emptied blocks
 * not yet released (never those of the release under way) only when no index is free
 * (blk_take's last resort). */
static bool band_open(uint32_t g)
{
    struct pgroup *p = &pg[g];
    int32_t best = -1;
    uint32_t best_ec = 0xFFFFFFFFu;
    for (int pass = 0; pass < 2 && best < 0; pass++) {
        for (uint32_t k = 0; k < F.nblk; k++) {
            uint32_t ec;
            bool waiting;
            if (band_index_free(p, k, pass, &ec, &waiting) && ec < best_ec &&
                !(pass && waiting && releasing_at(p, k))) {
                best = (int32_t)k;
                best_ec = ec;
            }
        }
    }
    if (best < 0)
        return false;
    uint32_t k = (uint32_t)best;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t d = p->first + i;
        struct blk_info *b = &F.blk[bidx(d, k)];
        if (!F.die[d].dead && (b->state == BLK_FREE || b->state == BLK_PENDING)) {
            if (b->state == BLK_PENDING) {
                b->state = BLK_FREE;
                C.pending_reuse++;
                F.die[d].n_pending--;
                F.die[d].n_free++;
            }
            blk_take_at(d, k, false, true);
            F.die[d].active = (int32_t)k;
            F.die[d].next_page = 0;
        } else if (b->band) {
            b->band = 0;        /* not in this band: its old rows are gone with the rest */
            jnl_append_unband(bidx(d, k));
        }
    }
    p->band = (int32_t)k;
    p->closing = false;
    F.gc_wanted = F.gc_pacing = true;   /* gc_ensure counts the free bands left */
    row_start(g, 0);
    return true;
}

/* The page of die's row that a write-buffer group may take now: false when the die has had
 * its data page of the row (or holds the row's parity, or is out of the band). */
bool band_take(uint32_t die, uint32_t *blk, uint32_t *page)
{
    struct pgroup *p = group_of(die);
    uint32_t g = die / F.stripe;
    if (p->band < 0 && !band_open(g)) {
        /* emergency only (gc_ensure keeps free bands between requests) */
        if (F.in_gc || F.in_ckpt)
            return false;
        while (!band_open(g))
            if (!gc_one(die))
                return false;
    }
    uint64_t bit = 1ull << (die - p->first);
    if (!(p->left & bit))
        return false;
    if (F.blk[bidx(die, (uint32_t)p->band)].state != BLK_ACTIVE) {
        p->left &= ~bit;        /* retired meanwhile: out of the row (the band is unprotected) */
        if (!p->left)
            row_done(g);
        return false;
    }
    p->left &= ~bit;
    *blk = (uint32_t)p->band;
    *page = p->row;
    F.die[die].active = p->band;
    F.die[die].next_page = p->row + 1;
    return true;
}

/* The program of write-buffer group gw to die's row was pushed: its data into the row's
 * parity (queued behind the copies that filled it), the parity once the row is complete. */
void band_pushed(uint32_t die, uint32_t gw)
{
    struct pgroup *p = group_of(die);
    uint32_t g = die / F.stripe;
    p->started = true;
    if (p->has_parity)
        xor_start(slot_addr(acc_slot_of(g, p->row & 1)), slot_addr(grp_slot(gw * F.pu_units)),
                  F.pu_units * UNIT_BYTES);
    if (!p->left)
        row_done(g);
}

/* A group whose row is partly written (its parity not yet), -1: none. A checkpoint or a
 * shutdown completes such rows (ftl_flush_sync pads them), so that after a clean power
 * cycle every unit has its parity. */
int32_t band_row_partial(void)
{
    for (uint32_t g = 0; g < n_pg; g++)
        if (pg[g].band >= 0 && pg[g].started && pg[g].left)
            return (int32_t)g;
    return -1;
}

bool parity_in_group(uint32_t die, int32_t g)
{
    return parity_die(die) && die / F.stripe == (uint32_t)g;
}

/* A die of the group failed: its band ends with the row being written (its remaining pages
 * would go without parity); the next band leaves the die out. */
void band_die_failed(uint32_t die)
{
    if (!parity_die(die))
        return;
    struct pgroup *p = group_of(die);
    if (p->band < 0)
        return;
    p->closing = true;
    p->left &= ~(1ull << (die - p->first));
    if (die == p->pdie)
        p->has_parity = false;
    if (!p->left)
        row_done(die / F.stripe);
}

/* The unit at ppn rebuilt into `slot` from the other pages of its row: false when it cannot
 * be (not in a band, a member gone bad, a second failure, a row without parity). */
bool parity_rebuild(uint32_t ppn, uint32_t slot)
{
    uint32_t b = ppn / F.upb, die = b / F.nblk, blk = b % F.nblk;
    uint32_t page = (ppn / F.pu_units) % F.ppb, u = ppn % F.pu_units;
    if (!parity_die(die))
        return false;
    if (!F.blk[b].band)
        goto fail;
    const struct pgroup *p = group_of(die);
    uint64_t m = members(p, blk);
    uint32_t pdie = parity_of(p, m, blk, page), n = 0, pidx = 0;
    /* the row being written: its parity is still the accumulator, over the pages pushed */
    bool open_row = (int32_t)blk == p->band && page == p->row;
    if (open_row && !p->has_parity)
        goto fail;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t e = p->first + i;
        if (!(m >> i & 1) || e == die || (open_row && (e == pdie || (p->left >> i & 1))))
            continue;
        const struct blk_info *eb = &F.blk[bidx(e, blk)];
        if (F.die[e].dead || eb->state == BLK_BAD || eb->state == BLK_RETIRING)
            goto fail;          /* a second failure in the stripe */
        if (e == pdie)
            pidx = n;
        unit_read_op(ppn_of(e, blk, page, u), F.rebuild_slot + n, &rb_op[n]);
        n++;
    }
    if (!n && !open_row)
        goto fail;
    flash_sync_batch(rb_op, rb_cpl, n);
    for (uint32_t k = 0; k < n; k++)
        if (rb_cpl[k].fail || rb_cpl[k].error || rb_cpl[k].ecc_fail)
            goto fail;
    if (open_row) {
        copy_wait();            /* the XORs into the accumulator landed */
        copy_start(slot_addr(F.rebuild_slot + n), slot_addr(acc_slot_of(die / F.stripe,
                   page & 1) + u), UNIT_BYTES);
        n++;
    } else if (!G.id.ecc_data_bytes) {
        /* no ECC: an erased parity page (never programmed) reads as FFh */
        const volatile uint32_t *w =
            (const volatile uint32_t *)(hal_buf() + slot_addr(F.rebuild_slot + pidx));
        bool erased = true;
        for (uint32_t i = 0; i < UNIT_BYTES / 4 && erased; i++)
            erased = w[i] == 0xFFFFFFFFu;
        if (erased)
            goto fail;
    }
    copy_wait();
    copy_start(slot_addr(slot), slot_addr(F.rebuild_slot), UNIT_BYTES);
    for (uint32_t k = 1; k < n; k++)
        xor_start(slot_addr(slot), slot_addr(F.rebuild_slot + k), UNIT_BYTES);
    copy_wait();
    C.parity_rebuilt++;
    return true;
fail:
    C.parity_failed++;
    return false;
}

/* --- GC and refresh collect whole bands -------------------------------------------------- */

/* Band k of p: its valid units and full members, false when it cannot be collected now
 * (being written, collected or moved off a failed die, programs in flight). */
static bool band_collectable(const struct pgroup *p, uint32_t k, uint32_t *valid,
                             uint32_t *full)
{
    if ((int32_t)k == p->band)
        return false;
    *valid = *full = 0;
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t d = p->first + i;
        const struct blk_info *b = &F.blk[bidx(d, k)];
        if (F.die[d].dead) {
            if (b->state == BLK_RETIRING || (b->band && b->valid))
                return false;   /* its units are still to be rebuilt from this band */
            continue;
        }
        if (b->state == BLK_FULL) {
            if (b->inflight)
                return false;
            *valid += b->valid;
            (*full)++;
        } else if (b->state == BLK_ACTIVE || b->state == BLK_VICTIM ||
                   b->state == BLK_RETIRING) {
            return false;
        }
    }
    return *full > 0;
}

/* Greedy over bands: the band of die's group with the fewest valid units, fewer than
 * max_valid per full member; -1 when there is none. */
int32_t band_victim(uint32_t die, uint32_t max_valid)
{
    const struct pgroup *p = group_of(die);
    int32_t best = -1;
    uint32_t best_valid = 0xFFFFFFFFu;
    for (uint32_t k = 0; k < F.nblk; k++) {
        uint32_t valid, full;
        if (band_collectable(p, k, &valid, &full) && valid < max_valid * full &&
            valid < best_valid) {
            best = (int32_t)k;
            best_valid = valid;
        }
    }
    return best;
}

bool band_victim_open(uint32_t die)
{
    const struct pgroup *p = group_of(die);
    for (uint32_t i = 0; i < p->n; i++) {
        const struct die_info *di = &F.die[p->first + i];
        if (di->gc_blk >= 0 &&
            F.blk[bidx(p->first + i, (uint32_t)di->gc_blk)].state == BLK_VICTIM)
            return true;
    }
    return false;
}

/* Every full member of band blk becomes its die's GC victim. */
void band_victim_set(uint32_t die, uint32_t blk)
{
    const struct pgroup *p = group_of(die);
    for (uint32_t i = 0; i < p->n; i++) {
        uint32_t d = p->first + i;
        struct blk_info *b = &F.blk[bidx(d, blk)];
        if (F.die[d].dead || b->state != BLK_FULL)
            continue;
        b->state = BLK_VICTIM;
        F.die[d].gc_blk = (int32_t)blk;
        F.die[d].gc_page = 0;
        F.die[d].gc_valid0 = b->valid;
    }
}

/* The members of die's group (GC of a whole band). */
void parity_group(uint32_t die, uint32_t *first, uint32_t *n)
{
    const struct pgroup *p = group_of(die);
    *first = p->first;
    *n = p->n;
}

/* A drifting block: its whole band moves (refresh_poll, one block at a time). */
void band_refresh_mark(uint32_t die, uint32_t blk)
{
    const struct pgroup *p = group_of(die);
    for (uint32_t i = 0; i < p->n; i++) {
        struct blk_info *b = &F.blk[bidx(p->first + i, blk)];
        if (!F.die[p->first + i].dead && b->band &&
            (b->state == BLK_ACTIVE || b->state == BLK_FULL)) {
            b->refresh = 1;
            F.refresh_pending = true;
        }
    }
}

/* The free and pending room of die's group, in bands: block indexes whose blocks on the
 * group's live dies are all free (or bad), at least two of them; and those that will be once
 * a release frees the emptied (pending) ones. GC keeps bands free, not blocks: a free block
 * whose index has no free partner on the other dies takes no data. */
void band_room(uint32_t die, uint32_t *free, uint32_t *pend)
{
    const struct pgroup *p = group_of(die);
    *free = *pend = 0;
    for (uint32_t k = 0; k < F.nblk; k++) {
        uint32_t ec;
        bool waiting;
        if (band_index_free(p, k, true, &ec, &waiting)) {
            *free += !waiting;
            *pend += waiting;
        }
    }
}

/* The group's GC is done by its lowest live die (its others have the same room). */
bool band_lead(uint32_t die)
{
    const struct pgroup *p = group_of(die);
    for (uint32_t d = p->first; d < p->first + p->n; d++)
        if (!F.die[d].dead)
            return d == die;
    return false;
}
