/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_die.c - a die that fails as a whole: told apart from a bad block or a weak page by
 * repeated failures and an erase test, then taken out of service. No write goes to it again;
 * the SMART Critical Warning says reliability is degraded. Under die parity (ftl_parity.c)
 * its data is rebuilt: on reads at once, and moved off it in the background, a block at a
 * time (retire_poll). Without, its data is lost: every unit it held reads as an Unrecovered
 * Read Error, never as garbage. */
#include "ftl.h"

/* Failures of a die's programs, erases or reads (past read retry) in a row, with no program
 * or erase passing between them, before the die is tested. */
#define DIE_STRIKES 3u

/* A program, erase or read (past retry) of the die failed. */
void die_strike(uint32_t die)
{
    struct die_info *di = &F.die[die];
    if (di->dead)
        return;
    if (++di->strikes >= DIE_STRIKES)
        F.die_check = true;
}

/* An op of the die was given up: it stayed busy past the back end's busy timeout (a hung
 * die, its R/B# stuck low). The back end fences it, so every later op fails at once; no
 * RESET is tried at run time (it would put the target back in timing mode 0 while its
 * channel runs the fast mode: see README "A hung die"). The die is tested at once. */
void die_hung(uint32_t die)
{
    struct die_info *di = &F.die[die];
    if (di->dead || di->strikes >= DIE_STRIKES)
        return;
    if (!di->hung) {
        fw_puts("flash: die 0x");
        fw_put_hex(die);
        fw_puts(" hung (busy past the timeout)\n");
        di->hung = 1;
    }
    di->strikes = DIE_STRIKES;
    F.die_check = true;
}

/* A program or erase of the die passed: a failure before it was the block's, not the die's. */
void die_good(uint32_t die)
{
    F.die[die].strikes = 0;
}

/* The test: erase free blocks of the die (blocks no one wrote; their next erase, when taken,
 * repeats it), DIE_TESTS of them: a die whose erases of all of them fail has failed as a
 * whole; one whose erase of a block passes has not (the block that failed is retired: a bad
 * block, the strikes a run of bad luck). A die with no free block now is tested once a
 * release has freed GC's emptied (pending) ones, a victim of it collected first if it has
 * none; with nothing to collect, or once an op of it timed out (a hung die: the back end
 * fences it, nothing of it will pass), its failures judge it. */
#define DIE_TESTS 2u
enum die_test { DIE_PASSED, DIE_FAILED, DIE_UNTESTED };
static enum die_test die_test(uint32_t die)
{
    uint32_t tested = 0;
    for (uint32_t k = 0; k < F.nblk && tested < DIE_TESTS; k++) {
        struct blk_info *b = &F.blk[bidx(die, k)];
        if (b->state != BLK_FREE || b->inflight)
            continue;
        struct hal_flash_op op = { .op = FLASH_ERASE,
                                   .plane_mask = (uint8_t)((1u << F.planes) - 1),
                                   .block = (uint16_t)(k << F.plane_bits) };
        flash_op_addr(&op, die);
        hal_hw_read_fence();    /* no READ decoded from an old map word may follow it (blk_take) */
        b->erase_count++;
        C.erases++;
        struct hal_flash_cpl c = flash_sync(&op);
        if (!(c.fail || c.error))
            return DIE_PASSED;
        blk_retire(die, k);
        tested++;
    }
    if (tested || F.die[die].hung)
        return DIE_FAILED;
    /* GC's emptied blocks, freed by a release: tested then (a victim collected first when
     * there is none); with nothing to collect, its failures judge it */
    return F.die[die].n_pending || gc_one(die) ? DIE_UNTESTED : DIE_FAILED;
}

/* Take the die out of service: every block retired (its data is lost: MAP_UNC, journaled),
 * none allocated again (grp_submit skips a dead die, GC and the spare count leave it). */
static void die_fail(uint32_t die)
{
    struct die_info *di = &F.die[die];
    di->dead = 1;
    C.dead_dies++;
    band_die_failed(die);
    for (uint32_t k = 0; k < F.nblk; k++) {
        struct blk_info *b = &F.blk[bidx(die, k)];
        if (b->state == BLK_BAD || b->state == BLK_SYS)
            continue;
        if (parity_die(die)) {
            blk_retire(die, k);     /* its units stay mapped: rebuilt, then moved */
            F.rebuild_pending = true;
            continue;
        }
        uint32_t per_blk = F.ppb * F.pu_units, first = bidx(die, k) * per_blk;
        for (uint32_t ppn = first; b->valid && ppn < first + per_blk; ppn++) {
            uint32_t lpn = F.p2l[ppn];
            if (lpn != MAP_NONE && F.l2p[lpn] == ppn) {
                ftl_map_set(lpn, MAP_UNC);     /* invalidates ppn */
                C.units_lost++;
            }
        }
        blk_retire(die, k);
    }
    if (!F.die_warned) {
        F.die_warned = true;
        log_aer_event(NVME_AER_TYPE_SMART_HEALTH, NVME_AER_SMART_NVM_SUBSYSTEM_RELIABILITY,
                      NVME_LOG_SMART_HEALTH);
    }
}

/* From the main loop (gc_ensure), never inside a completion: test each die that reached its
 * strikes; take it out of service when the test fails. */
void die_poll(void)
{
    if (!F.die_check || F.in_gc || F.in_ckpt)
        return;
    F.die_check = false;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        struct die_info *di = &F.die[d];
        if (di->dead || di->strikes < DIE_STRIKES)
            continue;
        enum die_test t = die_test(d);
        if (t == DIE_FAILED)
            die_fail(d);
        if (t != DIE_UNTESTED) {
            di->strikes = 0;
            continue;
        }
        F.die_check = true;             /* again once a release has freed a block */
        ftl_release_start(false);
    }
}

uint32_t die_dead_count(void)
{
    uint32_t n = 0;
    for (uint32_t d = 0; d < F.n_dies; d++)
        n += F.die[d].dead;
    return n;
}
