/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_sysdir.c - the system directory: block 0 of a die (the block ONFI parts ship good)
 * names the checkpoint areas' blocks and keeps the factory bad-block table. The die is the
 * last target's LUN 0 of the main part (die 0 on a drive of one target): not die 0, which
 * already holds the checkpoint areas, so no die runs shorter of blocks than before.
 *
 * Why: a factory bad block is marked by a non-FFh first spare byte of its page 0, readable
 * only while the block was never programmed. With an ECC (hal_ident ecc_data_bytes) a page's
 * codewords run on into the spare area, so a programmed block's mark is codeword data. The
 * marks are therefore read once, on new flash (the first format), and kept here; every later
 * boot finds the checkpoint areas and every later format (Format NVM after a lost map) the
 * bad blocks from the directory instead of the marks.
 *
 * Layout: words in multi-plane pages of the block, written by ordinary (ECC) programs:
 * magic, version, n_dies, nblk, area_blocks | sys_die << 16 (version 1: die 0), n_sys, total
 * words, checksum (of every other word), then sys_blk[n_sys] (blocks of sys_die), then one
 * bit per block (die x nblk + block): bad (factory; grown too once rewritten at run time,
 * sys_area_move). Two
 * copies, from page 0 and from page `copy_pages()` (one where the block has no room), read
 * in turn: a boot that reads neither from a block that is not erased does not take the
 * flash for new (main.c: the map is lost, never silently formatted). */
#include "ftl.h"

#define SYSDIR_MAGIC   0x44445353u      /* "SSDD" */
#define SYSDIR_VERSION 2u              /* 1: the areas on die 0, no sys_die in word 4 */
#define SYSDIR_HDR     8u

uint32_t sysdir_die(void)
{
    for (uint32_t d = F.n_targets; d-- > 1; )
        if (F.die[d].upp == F.upp)      /* the main part's page (mixed parts) */
            return d;
    return 0;
}

static uint32_t dir_words(void)
{
    return SYSDIR_HDR + F.n_sys + (F.n_dies * F.nblk + 31) / 32;
}

static uint32_t copy_pages(void)
{
    return (dir_words() + page_words() - 1) / page_words();
}

static uint32_t n_copies(void)
{
    return 2 * copy_pages() <= F.ppb ? 2 : 1;
}

static volatile uint32_t *dir_page(void)
{
    return (volatile uint32_t *)(hal_buf() + slot_addr(F.grp_base));
}

/* The whole multi-plane page `page` of the directory block, at the first write-buffer group
 * (free at boot and at format: nothing is staged there yet, or it was flushed). */
static struct hal_flash_cpl dir_op(uint8_t kind, uint32_t page)
{
    struct hal_flash_op op = {
        .op = kind, .plane_mask = (uint8_t)((1u << F.planes) - 1),
        .block = (uint16_t)(SYSDIR_BLOCK << F.plane_bits), .page = (uint16_t)page,
        .length = (uint16_t)G.id.page_bytes, .buffer = (uint16_t)F.grp_base };
    flash_op_addr(&op, sysdir_die());
    return flash_sync(&op);
}

/* Word i of the directory being written (the header given). */
static uint32_t word_of(uint32_t i, const uint32_t *hdr)
{
    uint32_t nb = F.n_dies * F.nblk;
    if (i < SYSDIR_HDR)
        return hdr[i];
    i -= SYSDIR_HDR;
    if (i < F.n_sys)
        return F.sys_blk[i];
    i -= F.n_sys;
    uint32_t w = 0;
    for (uint32_t b = 0; b < 32 && i * 32 + b < nb; b++)
        w |= (uint32_t)(F.blk[i * 32 + b].state == BLK_BAD) << b;
    return w;
}

static uint32_t checksum(uint32_t acc, uint32_t w)
{
    return (acc << 5 | acc >> 27) ^ w;
}

/* Write the directory: the system blocks (F.sys_blk on F.sys_die) and the bad blocks F.blk
 * has now (the marks' scan of new flash). At the drive's first format, and again when the
 * system areas move (sys_area_move). Uses the first write-buffer group's slots. */
void sysdir_save(void)
{
    uint32_t words = dir_words(), pw = page_words();
    uint32_t hdr[SYSDIR_HDR] = { SYSDIR_MAGIC, SYSDIR_VERSION, F.n_dies, F.nblk,
                                 F.area_blocks | F.sys_die << 16, F.n_sys, words, 0 };
    uint32_t sum = 0;
    for (uint32_t i = 0; i < words; i++)
        if (i != 7)
            sum = checksum(sum, word_of(i, hdr));
    hdr[7] = sum;
    struct hal_flash_op erase = {
        .op = FLASH_ERASE, .plane_mask = (uint8_t)((1u << F.planes) - 1),
        .block = (uint16_t)(SYSDIR_BLOCK << F.plane_bits) };
    flash_op_addr(&erase, sysdir_die());
    struct hal_flash_cpl c = flash_sync(&erase);
    bool ok = !(c.fail || c.error);
    for (uint32_t page = 0; ok && page < n_copies() * copy_pages(); page++) {
        /* Only the directory's own words: the rest of the page is left as the buffer has
         * it (nothing reads it; the checksum covers the words alone). Filling whole pages
         * word by word through the CPU's buffer window cost the simulated drive's
         * fast-forward an eighth of its skipped cycles at the first format. */
        volatile uint32_t *p = dir_page();
        for (uint32_t j = 0, i = page % copy_pages() * pw; j < pw && i < words; j++, i++)
            p[j] = word_of(i, hdr);
        c = dir_op(FLASH_PROGRAM, page);
        ok = !(c.fail || c.error);
    }
    if (!ok)
        fw_panic("system directory: its block failed to erase or program");
    F.blk[bidx(sysdir_die(), SYSDIR_BLOCK)].state = BLK_SYS;
    F.sysdir = true;
}

/* Reading: word i of copy `first / copy_pages()`, the page holding it read when it is not
 * the one in the buffer. */
struct reader {
    uint32_t first;             /* the copy's first page */
    uint32_t page;              /* page in the buffer, UINT32_MAX: none */
    bool ok;
};

static uint32_t read_word(struct reader *r, uint32_t i)
{
    uint32_t pw = page_words();
    if (r->page != r->first + i / pw) {
        r->page = r->first + i / pw;
        struct hal_flash_cpl c = dir_op(FLASH_READ, r->page);
        r->ok = r->ok && !(c.fail || c.error);
    }
    return dir_page()[i % pw];
}

/* Read the directory. apply_bad: every block but the system blocks becomes BLK_BAD (in the
 * table) or BLK_FREE, as blk_scan_factory_bad does from the marks. Returns false when no
 * copy reads back whole (new flash: an erased block fails the ECC or reads FFh) or it is not
 * this geometry's; then nothing was changed. */
static bool load_copy(uint32_t copy, bool apply_bad)
{
    struct reader r = { .first = copy * copy_pages(), .page = UINT32_MAX, .ok = true };
    uint32_t hdr[SYSDIR_HDR], nb = F.n_dies * F.nblk, sum = 0;
    for (uint32_t i = 0; i < SYSDIR_HDR; i++)
        hdr[i] = read_word(&r, i);
    uint32_t n_sys = hdr[5], words = hdr[6], sys_die = hdr[4] >> 16;
    if (!r.ok || hdr[0] != SYSDIR_MAGIC || (hdr[1] != 1 && hdr[1] != SYSDIR_VERSION) ||
        hdr[2] != F.n_dies || hdr[3] != F.nblk || (hdr[4] & 0xFFFF) != F.area_blocks ||
        sys_die >= F.n_dies || (hdr[1] == 1 && sys_die) || n_sys != 2 * F.area_blocks ||
        n_sys > 64 || words != SYSDIR_HDR + n_sys + (nb + 31) / 32)
        return false;
    for (uint32_t i = 0; i < words; i++) {
        uint32_t w = read_word(&r, i);
        if (i != 7)
            sum = checksum(sum, w);
        if (i >= SYSDIR_HDR && i < SYSDIR_HDR + n_sys &&
            ((sysdir_die() == sys_die && w == SYSDIR_BLOCK) || w >= F.nblk))
            return false;
    }
    if (!r.ok || sum != hdr[7])
        return false;
    F.n_sys = n_sys;
    F.sys_die = sys_die;
    for (uint32_t k = 0; k < n_sys; k++)
        F.sys_blk[k] = read_word(&r, SYSDIR_HDR + k);
    if (apply_bad) {
        for (uint32_t b = 0; b < nb; b++) {
            uint32_t w = read_word(&r, SYSDIR_HDR + n_sys + b / 32);
            F.blk[b].state = (w >> (b % 32) & 1) ? BLK_BAD : BLK_FREE;
        }
    }
    for (uint32_t k = 0; k < n_sys; k++)
        F.blk[bidx(sys_die, F.sys_blk[k])].state = BLK_SYS;
    F.blk[bidx(sysdir_die(), SYSDIR_BLOCK)].state = BLK_SYS;
    F.sysdir = true;
    return r.ok;
}

bool sysdir_load(bool apply_bad)
{
    for (uint32_t copy = 0; copy < n_copies(); copy++)
        if (load_copy(copy, apply_bad))
            return true;
    return false;
}

/* No copy loads: is that new flash (the block's first page erased) or a lost directory? */
bool sysdir_erased(void)
{
    struct hal_flash_op op = {
        .op = FLASH_READ, .plane_mask = (uint8_t)((1u << F.planes) - 1),
        .block = (uint16_t)(SYSDIR_BLOCK << F.plane_bits), .page = 0,
        .length = (uint16_t)G.id.page_bytes, .buffer = (uint16_t)F.grp_base };
    flash_op_addr(&op, sysdir_die());
    struct hal_flash_cpl c = flash_sync(&op);
    return flash_page_erased(&op, &c, F.grp_base);
}

/* The die of the system areas failed (ftl_die.c took it out of service): from ckpt_save,
 * with the write buffer flushed, the areas move to the live die with the most free blocks
 * (2 x area_blocks of them, the least worn) and the directory is written again to name them,
 * with every block bad now (the failed die's, the old areas' among them). The checkpoint that
 * follows goes there, and the journal after it. false: no live die has the blocks, or the
 * directory's own die failed too (a drive of one target): nothing changed. A power cut in the
 * directory's rewrite leaves no directory (the next boot reports the map lost, never formats
 * silently): the same window as the first format's. */
bool sys_area_move(void)
{
    uint32_t from = F.sys_die, to = F.n_dies, most = 0;
    if (F.die[sysdir_die()].dead)
        return false;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        uint32_t n = 0;
        for (uint32_t k = 0; !F.die[d].dead && d != from && k < F.nblk; k++)
            n += F.blk[bidx(d, k)].state == BLK_FREE && !F.blk[bidx(d, k)].inflight;
        if (n > most) {
            most = n;
            to = d;
        }
    }
    if (to == F.n_dies || most < F.n_sys)
        return false;
    for (uint32_t i = 0; i < F.n_sys; i++) {
        F.blk[bidx(from, F.sys_blk[i])].state = BLK_BAD;
        int32_t pick = -1;
        for (uint32_t k = 0; k < F.nblk; k++) {
            const struct blk_info *b = &F.blk[bidx(to, k)];
            if (b->state == BLK_FREE && !b->inflight &&
                (pick < 0 || b->erase_count < F.blk[bidx(to, (uint32_t)pick)].erase_count))
                pick = (int32_t)k;
        }
        F.blk[bidx(to, (uint32_t)pick)].state = BLK_SYS;
        F.die[to].n_free--;
        F.sys_blk[i] = (uint32_t)pick;
    }
    F.sys_die = to;
    F.area_ready[0] = F.area_ready[1] = false;
    sysdir_save();
    blk_spare_update();
    C.sys_moves++;
    fw_puts("system areas moved off a failed die\n");
    return true;
}
