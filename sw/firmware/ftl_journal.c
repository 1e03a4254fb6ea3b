/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ftl_journal.c - the map journal: every map change that reaches flash (a group's program
 * done, a deallocation, a block gone bad) is appended to a RAM list and written as journal
 * pages into the pages of the current checkpoint area after the checkpoint itself. The
 * durable map is the checkpoint plus its journal pages, replayed at boot in order.
 *
 * A commit programs one journal page on the system die without the CPU waiting on it; FUA writes,
 * writes with the volatile write cache off and Flush complete once the commit holding their
 * map entries is done (ftl.c), and GC's emptied blocks are erased once a commit covers their
 * moved units (ftl_release_start, ftl.c). A whole checkpoint is written only when the area's
 * journal pages run out (a live one, beside host I/O: ftl_ckpt.c), or a journal
 * program fails, or at shutdown and format.
 *
 * Page layout (words): magic, checkpoint sequence number, page index since the checkpoint,
 * entry count, the SMART / FTL counters (so power cycles and unsafe shutdowns counted at a
 * boot survive the next power loss), then (lpn, value) pairs, then a checksum of everything
 * before it. value: a physical unit or MAP_NONE (deallocated); lpn JNL_BAD: value is a block
 * gone bad; lpn JNL_ERASE: a block erased for writing (value: block | band member << 30 | SLC
 * mode << 31), so its mode, erase count and die-parity band survive too; lpn JNL_UNBAND: a
 * block its band's reopening left out (bad, or on a failed die). A page cut short by a power loss fails its checksum: the
 * replay stops there.
 */
#include "ftl.h"

#define JNL_MAGIC   0x4A445353u         /* "SSDJ" */
#define JNL_HDR     (4u + 2 * N_CTR)    /* the SMART / FTL counters ride in every page */
#define JNL_BAD     0xFFFFFFFEu         /* lpn of an entry naming a block gone bad */
#define JNL_ERASE   0xFFFFFFFDu         /* ... a block erased for writing, and its mode */
#define JNL_UNBAND  0xFFFFFFFCu         /* ... a block no longer in its band */

struct jnl J;

/* Entries of one page. */
static uint32_t page_cap(void)
{
    return (page_words() - JNL_HDR - 1) / 2;
}

static volatile uint32_t *stage(void)
{
    return (volatile uint32_t *)(hal_buf() + slot_addr(F.jstage));
}

static uint32_t checksum(const volatile uint32_t *w, uint32_t n)
{
    uint32_t a = 0x9E3779B9u, b = 0;
    for (uint32_t i = 0; i < n; i++) {
        a = (a ^ w[i]) * 0x01000193u;
        b += a ^ (b >> 7);
    }
    return a ^ (b << 1);
}

/* What one pass of flash completions can append (every group's units). */
static uint32_t pass_room(void)
{
    return JNL_GROUPS_MAX * F.pu_units + 64 + 2 * F.stripe;
}

/* The RAM list holds what one pass of flash completions can add on top of three pages'
 * worth: a page committed as it fills, and what host writes journal while a live
 * checkpoint is written (no commit then), so an append inside a completion never has to
 * commit and a live save rarely makes a write wait (jnl_poll). */
void jnl_init_geometry(void)
{
    J = (struct jnl){ 0 };
    J.max = 3 * page_cap() + pass_room();
    if (J.max > 0x7FFFFFFFu / 8)
        fw_panic("journal list too large");
    J.ent = fw_alloc(J.max * 8);
}

/* A checkpoint was written into `area`, taking its first `ckpt_pages` pages: the journal
 * starts after them, holding only the list's entries from kept_from on (the checkpoint holds
 * every map change before; a full checkpoint passes J.n: none kept). */
void jnl_reset(uint32_t area, uint32_t ckpt_pages, uint32_t kept_from)
{
    J.area = area;
    J.first = J.next = ckpt_pages;
    J.pages = F.area_blocks * F.ppb;
    /* entries appended while a live checkpoint was written, from kept_from on: the body may
     * predate them; they go into the new area's journal (ckpt_live_start). An erase among
     * them counts up from the block table the save took at its start. */
    for (uint32_t i = kept_from; i < J.n; i++) {
        J.ent[2 * (i - kept_from)] = J.ent[2 * i];
        J.ent[2 * (i - kept_from) + 1] = J.ent[2 * i + 1];
    }
    J.n -= kept_from;
    J.done = J.issued;
    J.failed = false;
}

void jnl_append(uint32_t lpn, uint32_t v)
{
    if (!F.ready)
        return;
    if (J.n == J.max)
        fw_panic("journal list full");
    J.ent[2 * J.n] = lpn;
    J.ent[2 * J.n + 1] = v;
    J.n++;
}

void jnl_append_bad(uint32_t b)
{
    jnl_append(JNL_BAD, b);
}

void jnl_append_erase(uint32_t b, bool slc, bool band)
{
    jnl_append(JNL_ERASE, b | (uint32_t)band << 30 | (uint32_t)slc << 31);
}

void jnl_append_unband(uint32_t b)
{
    jnl_append(JNL_UNBAND, b);
}

static void page_done(uint32_t id, uint32_t unused, bool fail)
{
    (void)unused;
    if (fail)
        J.failed = true;        /* jnl_poll writes a whole checkpoint instead */
    else if (!J.failed && (int32_t)(id - J.done) > 0)
        J.done = id;
}

/* Program the next journal page with up to a page of the list's oldest entries; returns the
 * commit's number (jnl_durable). A full area, or a failed page, is a whole checkpoint. */
static uint32_t commit_page(void)
{
    /* a live save under way: the journal goes on in its area once it is on flash */
    ckpt_live_finish();
    /* one stage: the previous page's program must have read it */
    while (J.done != J.issued && !J.failed)
        flash_poll_wait();
    if (J.failed) {
        ckpt_save(false);       /* resets the journal: every entry is in the checkpoint */
        return J.issued;
    }
    if (J.next >= J.pages) {
        /* a live save, waited for here: this loop's caller needs the new area. It resets
         * the journal: the entries so far are in the checkpoint, those appended while it
         * was written are kept, and the caller commits them to the new area */
        while (J.next >= J.pages && !ckpt_live_start())
            flash_poll_wait();  /* the area's erase; a failed system die: a full save */
        ckpt_live_finish();
        if (!J.n || J.next >= J.pages)      /* nothing kept, or the save failed: a retry */
            return J.issued;
    }
    /* three quarters of the area used: the next checkpoint's area is erased ahead */
    if ((J.next - J.first) * 4 >= (J.pages - J.first) * 3)
        ckpt_prepare();
    uint32_t n = J.n < page_cap() ? J.n : page_cap();
    volatile uint32_t *w = stage();
    uint32_t words = JNL_HDR + 2 * n;
    w[0] = JNL_MAGIC;
    w[1] = F.ckpt_seq;
    w[2] = J.next - J.first;
    w[3] = n;
    counters_put(w + 4);
    for (uint32_t i = 0; i < 2 * n; i++)
        w[JNL_HDR + i] = J.ent[i];
    w[words] = checksum(w, words);
    for (uint32_t i = 2 * n; i < 2 * J.n; i++)
        J.ent[i - 2 * n] = J.ent[i];
    J.n -= n;
    struct hal_flash_op op;
    sys_area_op(&op, FLASH_PROGRAM, J.area, J.next++, F.jstage);
    op.tag = flash_tag_get(page_done, ++J.issued, 0);
    C.jnl_pages++;
    flash_push(&op);
    return J.issued;
}

/* Everything appended so far on its way to flash; the number jnl_durable waits for. */
uint32_t jnl_commit(void)
{
    uint32_t id = J.issued;
    while (J.n)
        id = commit_page();
    return id;
}

bool jnl_durable(uint32_t id)
{
    return !J.failed && (int32_t)(J.done - id) >= 0;
}

/* A commit now would first wait for the page in flight (one stage buffer). */
bool jnl_busy(void)
{
    return (J.done != J.issued && !J.failed) || ckpt_live_busy();
}

/* A commit now goes to the journal's area (or, after a failed page, to a full checkpoint)
 * without waiting for a live checkpoint; else the caller starts one (ckpt_live_start) and
 * commits once it is on flash. */
bool jnl_room(void)
{
    return J.failed || (!ckpt_live_busy() && J.next < J.pages);
}

/* Main loop: full pages go out as they fill, one at a time without waiting for the page in
 * flight; a failed page becomes a checkpoint; a full area a live checkpoint, written a
 * chunk per pass. Only a list about to overflow makes the pass wait (a commit, or the save
 * under way). */
void jnl_poll(void)
{
    if (!F.ready || F.in_ckpt)
        return;
    if (J.failed) {
        ckpt_save(false);
        return;
    }
    if (J.next >= J.pages && J.n >= page_cap())
        ckpt_live_start();
    ckpt_live_poll();
    if (J.n + pass_room() > J.max) {
        C.jnl_full_waits++;
        jnl_commit();
        return;
    }
    if (ckpt_live_busy() || J.next >= J.pages)
        return;
    while (J.n >= page_cap() && !jnl_busy())
        commit_page();
}

/* Wait until commit `id` is on flash (or a checkpoint replaced the journal). */
void jnl_wait(uint32_t id)
{
    while (!jnl_durable(id)) {
        if (J.failed) {
            ckpt_save(false);
            return;
        }
        flash_poll_wait();
    }
}

/* Boot: apply the journal pages after the checkpoint just loaded from `area` (F.l2p and the
 * block table as the checkpoint left them), in order, up to the first page that is not a
 * valid journal page of this checkpoint. Returns the pages applied; *erased: the page where
 * it stopped is erased (or the area is full), so the journal could go on there. */
uint32_t jnl_replay(uint32_t area, uint32_t ckpt_pages, bool *erased)
{
    J.area = area;
    J.pages = F.area_blocks * F.ppb;
    J.first = J.next = ckpt_pages;
    J.n = 0;
    J.done = J.issued;
    J.failed = false;
    uint32_t k = 0;
    *erased = true;
    for (uint32_t page = ckpt_pages; page < J.pages; page++, k++) {
        struct hal_flash_op op;
        sys_area_op(&op, FLASH_READ, J.area, page, F.jstage);
        struct hal_flash_cpl c = flash_sync(&op);
        volatile uint32_t *w = stage();
        uint32_t n = w[3];
        if (c.fail || c.error || w[0] != JNL_MAGIC || w[1] != F.ckpt_seq || w[2] != k ||
            n > page_cap() || w[JNL_HDR + 2 * n] != checksum(w, JNL_HDR + 2 * n)) {
            /* a page cut short reads as neither: it must not be programmed again (the
             * write-buffer groups are free at boot: room for a raw page) */
            *erased = flash_page_erased(&op, &c, F.grp_base);
            break;
        }
        J.next = page + 1;
        counters_get(w + 4);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t lpn = w[JNL_HDR + 2 * i], v = w[JNL_HDR + 2 * i + 1];
            uint32_t b = v & 0x3FFFFFFFu;
            bool blk_ok = b < F.n_dies * F.nblk && F.blk[b].state != BLK_SYS;
            if (lpn == JNL_BAD && blk_ok) {
                F.blk[b].state = BLK_BAD;
            } else if (lpn == JNL_ERASE && blk_ok) {
                F.blk[b].erase_count++;
                F.blk[b].slc = v >> 31;
                F.blk[b].band = v >> 30 & 1;
            } else if (lpn == JNL_UNBAND && blk_ok) {
                F.blk[b].band = 0;
            } else if (lpn < F.user_units && (v == MAP_NONE || v == MAP_UNC || v < F.raw_units))
                F.l2p[lpn] = v;
        }
    }
    return k;
}

/* A boot from a shutdown's checkpoint, or the first write (or deallocation) after a
 * shutdown without a power cycle: a page, no entries, on flash before the command is taken,
 * so that a power loss before the next shutdown's checkpoint is seen at the next boot as an
 * unsafe shutdown. */
void jnl_session(void)
{
    F.in_use = true;
    jnl_wait(commit_page());
}
