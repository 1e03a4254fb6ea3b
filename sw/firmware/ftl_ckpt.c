/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_ckpt.c - persistence: the map, block table and counters as a checkpoint in one of two
 * alternating system areas (sequence number + checksum), loaded at boot; and format. */
#include "ftl.h"

#define CKPT_MAGIC   0x43445353u        /* "SSDC" */
#define CKPT_END     0x45445353u        /* "SSDE": the trailer, the last words written */
#define CKPT_VERSION 5u
#define HDR_WORDS    96u          /* ftl.c CKPT_HDR_WORDS */
#define FLAG_BAD     1u
#define FLAG_SLC     2u      /* erased in SLC mode (its data is read as SLC) */
#define FLAG_BAND    4u      /* a member of its die-parity band (ftl_parity.c) */
#define MAX_BATCH    32u                /* pages staged, then programmed / read in one batch */
_Static_assert(16 + 2 * sizeof(struct fw_counters) / 8 <= HDR_WORDS,
               "the SMART / FTL counters must fit in the checkpoint header");

/*
 * Stream of words into (save) or out of (load) one area, staged in the write buffer's slots
 * (free during a checkpoint: the write buffer was flushed; at boot nothing uses them yet).
 * Save: the area's erase is pushed first, then up to `batch` multi-plane pages are filled by
 * the CPU and programmed as one batch of flash ops, and so on. Load: a batch of pages is read,
 * then consumed. The system die runs the ops back to back; the CPU never waits on one page at a time.
 */
struct stream {
    uint32_t area, page;        /* next area page to program / read */
    uint32_t pages;             /* pages of the whole stream */
    uint32_t batch, staged;     /* pages per batch, pages staged (save) / fetched (load) */
    uint32_t word, sum_a, sum_b;
    uint32_t base;              /* the stage's first slot */
    volatile uint32_t *p;       /* current page in the buffer window */
    bool ok, erase;
};


static volatile uint32_t *stage_page(const struct stream *s, uint32_t k)
{
    return (volatile uint32_t *)(hal_buf() + slot_addr(s->base + k * F.pu_units));
}

/* Staged in the write buffer's groups (flushed), or, with `live` (the write buffer in use),
 * a page at a time in the journal's stage. */
static void stream_open(struct stream *s, uint32_t area, uint32_t words, bool live)
{
    uint32_t pw = page_words(), batch = F.n_grp < MAX_BATCH ? F.n_grp : MAX_BATCH;
    *s = (struct stream){ .area = area, .pages = (words + pw - 1) / pw,
                          .batch = live ? 1 : batch, .ok = true,
                          .base = live ? F.jstage : F.grp_base };
    s->p = stage_page(s, 0);
}

/* A whole multi-plane page `page` of system area `area` (checkpoints, journal pages) from or
 * into the slots at `buffer`. */
void sys_area_op(struct hal_flash_op *op, uint8_t kind, uint32_t area, uint32_t page,
                 uint32_t buffer)
{
    uint32_t blk = F.sys_blk[area * F.area_blocks + page / F.ppb];
    *op = (struct hal_flash_op){ .op = kind, .plane_mask = (uint8_t)((1u << F.planes) - 1),
                                 .block = (uint16_t)(blk << F.plane_bits),
                                 .page = (uint16_t)(page % F.ppb),
                                 .length = (uint16_t)G.id.page_bytes,
                                 .buffer = (uint16_t)buffer };
    flash_op_addr(op, F.sys_die);
}

/* The SMART / FTL counters as 2 x N_CTR words (low word first), and back. */
void counters_put(volatile uint32_t *w)
{
    const uint64_t *ctr = (const uint64_t *)&C;
    for (uint32_t i = 0; i < N_CTR; i++) {
        w[2 * i] = (uint32_t)ctr[i];
        w[2 * i + 1] = (uint32_t)(ctr[i] >> 32);
    }
}

void counters_get(const volatile uint32_t *w)
{
    uint64_t *ctr = (uint64_t *)&C;
    for (uint32_t i = 0; i < N_CTR; i++)
        ctr[i] = w[2 * i] | (uint64_t)w[2 * i + 1] << 32;
}

/* Erase the area: pushed when the save starts, so the system die erases while the CPU fills
 * the first batch; program_staged waits for it. */
static struct hal_flash_op erase_ops[64];

/* The erase of block k of an area (every plane of the system die). */
static struct hal_flash_op area_erase_op(uint32_t area, uint32_t k)
{
    uint32_t blk = F.sys_blk[area * F.area_blocks + k];
    struct hal_flash_op op = { .op = FLASH_ERASE, .plane_mask = (uint8_t)((1u << F.planes) - 1),
                               .block = (uint16_t)(blk << F.plane_bits) };
    flash_op_addr(&op, F.sys_die);
    return op;
}

static void erase_area(struct stream *s)
{
    for (uint32_t k = 0; k < F.area_blocks; k++)
        erase_ops[k] = area_erase_op(s->area, k);
    flash_batch_push(erase_ops, F.area_blocks);
    s->erase = true;
}

/* Program the staged pages (once the area's erase is done). */
/*
 * The next checkpoint's area erased ahead (the journal calls this once its area is three
 * quarters full): the erases run beside host I/O, so the checkpoint that follows only
 * programs its pages, where it used to wait for the area's erases (tBERS per block, one die).
 * The area then no longer holds the older checkpoint, the fallback if the newest cannot be
 * read; it is erased late, not right after the newest is written, to keep that fallback as
 * long as it costs nothing. A power loss during the erases leaves the area torn: the newest
 * checkpoint is what the boot loads either way.
 */
static void area_erase_done(uint32_t area, uint32_t unused, bool fail)
{
    (void)unused;
    F.area_erase_failed |= fail;
    if (--F.area_erasing == 0 && !F.area_erase_failed)
        F.area_ready[area] = true;
}

void ckpt_prepare(void)
{
    uint32_t area = (F.ckpt_seq + 1) & 1;
    /* (never the area a live save is writing: it is the next one until the save ends) */
    if (!F.ready || F.area_erasing || F.area_ready[area] || ckpt_live_busy())
        return;
    F.area_erase_failed = false;
    F.area_erasing = F.area_blocks;
    for (uint32_t k = 0; k < F.area_blocks; k++) {
        struct hal_flash_op op = area_erase_op(area, k);
        op.tag = flash_tag_get(area_erase_done, area, 0);
        flash_push(&op);
    }
}

static void program_staged(struct stream *s)
{
    static struct hal_flash_op ops[MAX_BATCH];
    static struct hal_flash_cpl cpl[64];
    if (s->erase) {
        flash_batch_wait(erase_ops, cpl, F.area_blocks);
        for (uint32_t k = 0; k < F.area_blocks; k++)
            s->ok = s->ok && !(cpl[k].fail || cpl[k].error);
        s->erase = false;
    }
    for (uint32_t k = 0; k < s->staged; k++) {
        sys_area_op(&ops[k], FLASH_PROGRAM, s->area, s->page++, s->base + k * F.pu_units);
    }
    C.ckpt_units_written += s->staged * F.pu_units;
    flash_sync_batch(ops, cpl, s->staged);
    for (uint32_t i = 0; i < s->staged; i++)
        s->ok = s->ok && !(cpl[i].fail || cpl[i].error);
    s->staged = 0;
    s->p = stage_page(s, 0);
}

static void sum(struct stream *s, uint32_t w)
{
    s->sum_a += w;
    s->sum_b += s->sum_a ^ (s->sum_b >> 3);
}

static uint32_t sum_value(const struct stream *s)
{
    return s->sum_a ^ s->sum_b << 1;
}

static inline void put(struct stream *s, uint32_t w)
{
    s->p[s->word] = w;
    if (++s->word == page_words()) {
        s->word = 0;
        if (++s->staged == s->batch)
            program_staged(s);
        else
            s->p = stage_page(s, s->staged);
    }
}

static void put_end(struct stream *s)
{
    while (s->word)
        put(s, 0);
    if (s->staged)
        program_staged(s);
}

/* Read the next batch of pages (no more than the stream has). */
static void fetch(struct stream *s)
{
    static struct hal_flash_op ops[MAX_BATCH];
    static struct hal_flash_cpl cpl[MAX_BATCH];
    uint32_t n = s->pages - s->page < s->batch ? s->pages - s->page : s->batch;
    for (uint32_t k = 0; k < n; k++) {
        sys_area_op(&ops[k], FLASH_READ, s->area, s->page++, s->base + k * F.pu_units);
    }
    flash_sync_batch(ops, cpl, n);
    for (uint32_t k = 0; k < n; k++)
        s->ok = s->ok && !(cpl[k].fail || cpl[k].error);
    s->ok = s->ok && n > 0;
    s->staged = 0;
    s->word = 0;
    s->p = stage_page(s, 0);
}

static inline uint32_t get(struct stream *s)
{
    if (s->word == page_words()) {
        s->word = 0;
        if (++s->staged == s->batch)
            fetch(s);
        else
            s->p = stage_page(s, s->staged);
    }
    return s->p[s->word++];
}

static uint32_t blk_word(uint32_t b)
{
    return (F.blk[b].erase_count & 0xFFFFFF) |
           (uint32_t)(F.blk[b].state == BLK_BAD || F.blk[b].state == BLK_RETIRING) << 24 |
           (uint32_t)(F.blk[b].slc ? FLAG_SLC : 0) << 24 |
           (uint32_t)(F.blk[b].band ? FLAG_BAND : 0) << 24;
}

static void header(uint32_t *h, uint32_t seq, bool clean, uint32_t body)
{
    memset(h, 0, HDR_WORDS * 4);
    h[0] = CKPT_MAGIC;
    h[1] = CKPT_VERSION;
    h[2] = seq;
    h[3] = clean;
    h[4] = body;                        /* h[5]: unused (the sum is in the trailer) */
    h[6] = F.n_dies;
    h[7] = F.nblk;
    h[8] = F.ppb;
    h[9] = F.pu_units;
    h[10] = F.user_units;
    h[11] = G.id.lbads;
    counters_put(h + 16);
}

static uint64_t boot_cycles;

static void update_power_on(void)
{
    uint64_t now = hal_cycles();
    if (G.id.clk_hz)
        C.power_on_seconds += (now - boot_cycles) / G.id.clk_hz;
    boot_cycles = now - (now - boot_cycles) % (G.id.clk_hz ? G.id.clk_hz : 1);
}

/* A map word as the checkpoint holds it: a unit still in the write buffer is saved as its
 * copy on flash before the write (F.wb_old), the value the durable map held for it until
 * the journal holds the new copy (emptied blocks are erased through releases, ftl.c). */
static uint32_t l2p_word(uint32_t l)
{
    uint32_t w = F.l2p[l];
    return map_in_wb(w) ? F.wb_old[w & ~MAP_WB] : w;
}

/* Write the whole state into the other area, in one pass: header, body, then the trailer
 * (magic, sequence number, checksum of everything before it). A save cut short by a power
 * loss has no trailer, and the previous area stays valid. This is the full save (shutdown,
 * format, boot, a failed journal page, a failed system die): it flushes the write buffer
 * first, so every map entry names a flash unit, and then frees every emptied block. The
 * journal's area running out in the middle of host writes starts a live save instead
 * (ckpt_live_start, below), which the host does not wait for. */
/* What every save does first: the power-on time and the save counted, and the erase counts
 * of the area's own blocks, which are part of the body. */
static void save_begin(uint32_t area)
{
    update_power_on();
    C.ckpt_saves++;
    for (uint32_t k = 0; k < F.area_blocks; k++)
        F.blk[bidx(F.sys_die, F.sys_blk[area * F.area_blocks + k])].erase_count++;
}

static void ckpt_write(bool clean)
{
    if (!F.ready)
        return;
    /* a live save under way completes first: its stage is the journal's, its area this one */
    ckpt_live_finish();
    bool was = F.in_ckpt;
    uint64_t t0 = hal_cycles();
    F.in_ckpt = true;
    ftl_flush_sync();
    while (jnl_busy())          /* the journal's page in flight reads its stage */
        flash_poll_wait();
    while (F.area_erasing)      /* the next area erased ahead, not yet done */
        flash_poll_wait();
    if (F.die[F.sys_die].dead && !sys_area_move())
        fw_panic("checkpoint: the system areas' die failed and no live die can take them");
    uint32_t seq = F.ckpt_seq + 1, area = seq & 1;
    uint32_t body = F.user_units + F.n_dies * F.nblk;
    save_begin(area);
    uint32_t h[HDR_WORDS];
    struct stream s;
    stream_open(&s, area, HDR_WORDS + body + 3, false);
    if (!F.area_ready[area])
        erase_area(&s);
    F.area_ready[0] = F.area_ready[1] = false;
    header(h, seq, clean, body);
    for (uint32_t i = 0; i < HDR_WORDS; i++) {
        sum(&s, h[i]);
        put(&s, h[i]);
    }
    /* the block table first: the journal's erase entries count up from it, so an erase
     * journaled while the map's pages are written must not be in it already */
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        uint32_t w = blk_word(b);
        sum(&s, w);
        put(&s, w);
    }
    for (uint32_t l = 0; l < F.user_units; l++) {
        uint32_t w = l2p_word(l);
        sum(&s, w);
        put(&s, w);
    }
    uint32_t check = sum_value(&s);
    put(&s, CKPT_END);
    put(&s, seq);
    put(&s, check);
    put_end(&s);
    F.in_ckpt = was;
    if (!clean)                 /* a shutdown's checkpoint holds no host write */
        stall_note(&F.stall_ckpt, t0);
    if (!s.ok) {
        fw_puts("checkpoint: write failed, previous one kept\n");
        return;
    }
    F.ckpt_seq = seq;
    F.dirty = false;
    F.in_use = !clean;          /* a shutdown's checkpoint: the next write marks the drive */
    jnl_reset(area, s.pages, J.n);
    blk_release_pending(true);
}

void ckpt_save(bool clean)
{
    ckpt_write(clean);
}

/*
 * The live save (issue 22, item 7): the journal's area is full in the middle of host
 * writes. The checkpoint is written beside host I/O, a chunk of words per main-loop pass,
 * one page at a time through the journal's stage (the journal commits nothing meanwhile:
 * its area is full), each page's program not waited for by the CPU. Host commands go on
 * meanwhile; a FUA write, a write with the cache off or a Flush completes after it (its
 * commit needs the new area), and only a caller that must commit at once (a write waiting
 * for a release, a Write Zeroes with FUA or the cache off, a full save) or a journal RAM
 * list about to overflow (jnl_poll) waits for it (ckpt_live_finish).
 *
 * Consistency: the header and the block table are taken at the start (the block table into
 * `live_blk`), and from then on every map change that reaches flash is journaled and kept
 * for the new area's journal (J.ent from kept_from on), replayed over the body in order at
 * boot. A map word streamed later than the start is either the value at the start or one a
 * kept entry sets again, so the replay ends at the same map; an erase after the start is a
 * kept entry counting up from the snapshot. A unit in the write buffer is saved as its copy
 * on flash before the write (l2p_word). Emptied blocks stay with the release protocol, whose
 * commit waits for the save (jnl_busy), so no block the body names is erased before the
 * journal after it is on flash. A power loss before the trailer's page is programmed leaves
 * the new area torn: the boot loads the previous checkpoint and its (full) journal.
 */
#define LIVE_CHUNK 256u          /* words staged per pass: some 8 K CPU cycles */

static struct {
    bool active;
    bool page_busy;             /* the stage's page is being programmed */
    bool fail;                  /* a page's program failed */
    uint32_t seq, area, kept_from;
    uint32_t next;              /* the stream's next word */
    uint32_t summed;            /* its words before the trailer (header and body) */
    uint32_t words;             /* its length: the trailer and the last page's zeros too */
    struct stream s;
    uint32_t hdr[HDR_WORDS];
} L;
static uint32_t *live_blk;      /* the block table at the start (n_dies x nblk words) */

void ckpt_init_geometry(void)
{
    memset(&L, 0, sizeof L);
    live_blk = fw_alloc(F.n_dies * F.nblk * 4);
}

bool ckpt_live_busy(void)
{
    return L.active;
}

/* The pass has words to stage: the main loop must not wait for the hardware. */
bool ckpt_live_has_work(void)
{
    return L.active && !L.page_busy;
}

static void live_page_done(uint32_t unused_a, uint32_t unused_b, bool fail)
{
    (void)unused_a;
    (void)unused_b;
    L.fail |= fail;
    L.page_busy = false;
}

/* Push the staged page's program (the stage is then the die's until its completion). */
static void live_program(void)
{
    struct hal_flash_op op;
    sys_area_op(&op, FLASH_PROGRAM, L.area, L.s.page++, L.s.base);
    op.tag = flash_tag_get(live_page_done, 0, 0);
    C.ckpt_units_written += F.pu_units;
    L.page_busy = true;
    flash_push(&op);
}

/* Word i of the stream: header, block table, map, trailer (magic, sequence number, the
 * checksum of every word before it), then zeros to the end of the last page. */
static uint32_t live_word(uint32_t i)
{
    uint32_t nb = F.n_dies * F.nblk;
    if (i < HDR_WORDS)
        return L.hdr[i];
    if (i < HDR_WORDS + nb)
        return live_blk[i - HDR_WORDS];
    if (i < L.summed)
        return l2p_word(i - HDR_WORDS - nb);
    switch (i - L.summed) {
    case 0: return CKPT_END;
    case 1: return L.seq;
    case 2: return sum_value(&L.s);
    default: return 0;
    }
}

/* Start a live save (the journal's area is full). The next area must be erased: if it is
 * not, its erase is started and the save waits for it (the journal's page in flight too,
 * which reads the same stage). Returns whether the save is under way. */
bool ckpt_live_start(void)
{
    if (L.active || !F.ready)
        return L.active;
    uint32_t seq = F.ckpt_seq + 1, area = seq & 1;
    if (F.die[F.sys_die].dead) {
        ckpt_save(false);       /* the areas move first (a full save) */
        return false;
    }
    if (!F.area_ready[area]) {
        ckpt_prepare();         /* erases in flight, or a failed one started again */
        return false;
    }
    if (jnl_busy())
        return false;
    save_begin(area);
    C.ckpt_live_saves++;
    uint32_t nb = F.n_dies * F.nblk, body = F.user_units + nb;
    header(L.hdr, seq, false, body);
    for (uint32_t b = 0; b < nb; b++)
        live_blk[b] = blk_word(b);
    L.active = true;
    L.page_busy = L.fail = false;
    L.seq = seq;
    L.area = area;
    L.kept_from = J.n;
    L.next = 0;
    L.summed = HDR_WORDS + body;
    F.area_ready[0] = F.area_ready[1] = false;
    stream_open(&L.s, area, L.summed + 3, true);
    L.words = L.s.pages * page_words();
    return true;
}

/* One step: stage up to LIVE_CHUNK words; a full page is programmed; after the last page
 * is on flash the checkpoint is the current one and the kept entries its journal. */
void ckpt_live_poll(void)
{
    if (!L.active || L.page_busy)
        return;
    struct stream *s = &L.s;
    for (uint32_t n = 0; n < LIVE_CHUNK && L.next < L.words; n++) {
        uint32_t w = live_word(L.next);
        if (L.next++ < L.summed)
            sum(s, w);
        s->p[s->word] = w;
        if (++s->word == page_words()) {
            s->word = 0;
            live_program();
            return;
        }
    }
    if (L.next < L.words)
        return;
    /* the last page is on flash */
    L.active = false;
    if (L.fail) {
        fw_puts("checkpoint: write failed, previous one kept\n");
        return;                 /* the journal's area is still full: the next pass retries */
    }
    F.ckpt_seq = L.seq;
    F.dirty = false;
    F.in_use = true;
    jnl_reset(L.area, s->pages, L.kept_from);
}

/* A caller that needs the new area at once (a commit it waits for, a full save) waits for
 * the save under way, if any. */
void ckpt_live_finish(void)
{
    if (!L.active)
        return;
    uint64_t t0 = hal_cycles();
    while (L.active) {
        ckpt_live_poll();
        if (L.active && L.page_busy)
            flash_poll_wait();
    }
    stall_note(&F.stall_ckpt, t0);
}

uint32_t ckpt_pages(void)
{
    uint32_t words = HDR_WORDS + F.user_units + F.n_dies * F.nblk + 3;
    return (words + page_words() - 1) / page_words();
}

/* One area: header, then the body applied to the tables as it streams in, then the
 * trailer. false (tables undefined) when the header, the trailer or the checksum does not
 * match. apply = false: the header only (its sequence number). *ours: the area holds (or
 * held) a checkpoint of this firmware: unreadable, or its first word is the magic. */
static bool load_area(uint32_t area, uint32_t *seq_out, bool apply, bool *ours)
{
    uint32_t body = F.user_units + F.n_dies * F.nblk;
    struct stream s;
    stream_open(&s, area, apply ? HDR_WORDS + body + 3 : HDR_WORDS, false);
    fetch(&s);
    *ours = true;
    if (!s.ok) {
        /* a read failed: an unreadable checkpoint, unless the area is erased (the ECC read
         * of an erased page fails too) */
        struct hal_flash_op op;
        sys_area_op(&op, FLASH_READ, area, 0, F.grp_base);
        struct hal_flash_cpl c = flash_sync(&op);
        *ours = !flash_page_erased(&op, &c, F.grp_base);
        return false;
    }
    uint32_t h[HDR_WORDS];
    for (uint32_t i = 0; i < HDR_WORDS; i++) {
        h[i] = get(&s);
        sum(&s, h[i]);
    }
    *ours = h[0] == CKPT_MAGIC;
    if (h[0] != CKPT_MAGIC || h[1] != CKPT_VERSION || h[6] != F.n_dies || h[7] != F.nblk ||
        h[8] != F.ppb || h[9] != F.pu_units || h[10] != F.user_units || h[11] != G.id.lbads ||
        h[4] != body || (h[2] & 1) != area)
        return false;
    *seq_out = h[2];
    if (!apply)
        return true;
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        uint32_t w = get(&s);
        sum(&s, w);
        F.blk[b].erase_count = w & 0xFFFFFF;
        F.blk[b].slc = (w >> 24 & FLAG_SLC) != 0;
        F.blk[b].band = (w >> 24 & FLAG_BAND) != 0;
        if (F.blk[b].state != BLK_SYS)
            F.blk[b].state = (w >> 24 & FLAG_BAD) ? BLK_BAD : BLK_FREE;
    }
    for (uint32_t l = 0; l < F.user_units; l++) {
        uint32_t w = get(&s);
        sum(&s, w);
        F.l2p[l] = w;
    }
    uint32_t check = sum_value(&s);
    uint32_t end = get(&s), seq = get(&s), got = get(&s);
    if (!s.ok || end != CKPT_END || seq != h[2] || got != check)
        return false;
    for (uint32_t l = 0; l < F.user_units; l++)
        if (F.l2p[l] != MAP_NONE && F.l2p[l] != MAP_UNC && F.l2p[l] >= F.raw_units)
            return false;
    counters_get(h + 16);
    F.ckpt_clean = h[3] != 0;
    return true;
}

/* Boot: the newest valid checkpoint of the two areas. CKPT_BLANK: neither area ever held
 * one (new flash: format); CKPT_LOST: one did, and none can be loaded (the map is gone). */
enum ckpt_result ckpt_load(void)
{
    uint32_t seq[2] = { 0, 0 };
    bool ok[2], ours[2], any = false;
    boot_cycles = hal_cycles();
    for (uint32_t a = 0; a < 2; a++) {
        ok[a] = load_area(a, &seq[a], false, &ours[a]);
        any |= ours[a];
    }
    for (uint32_t n = 0; n < 2; n++) {
        uint32_t a;
        if (ok[0] && ok[1])
            a = (int32_t)(seq[1] - seq[0]) > 0 ? 1 : 0;
        else if (ok[0] || ok[1])
            a = ok[1];
        else
            return any ? CKPT_LOST : CKPT_BLANK;
        bool mine;
        if (load_area(a, &seq[a], true, &mine)) {
            F.ckpt_seq = seq[a];
            F.ckpt_loaded = seq[a];
            /* the map changes committed after it, and the counters of the last page; a boot
             * from a shutdown's checkpoint commits a journal page (main.c), so a power loss
             * without a shutdown leaves at least one */
            bool erased;
            F.jnl_replayed = jnl_replay(a, ckpt_pages(), &erased);
            C.power_cycles++;
            if (!F.ckpt_clean || F.jnl_replayed || !erased)
                C.unsafe_shutdowns++;
            ftl_rebuild();
            F.dirty = false;
            /* the journal goes on after its last page only if the page there is erased */
            F.jnl_fresh = F.ckpt_clean && !F.jnl_replayed && erased;
            return CKPT_OK;
        }
        ok[a] = false;
    }
    return CKPT_LOST;
}

/* Format: the map emptied and a checkpoint of it written first (a power loss during the
 * erases then leaves a formatted drive, not a map into erased blocks), then every good block
 * erased (erase_all; else each is erased when allocated). */
void ftl_format(bool erase_all)
{
    if (!F.ready)
        return;
    F.quiesced = false;
    ftl_flush_sync();
    if (F.failed) {
        /* the block table went with the map: the directory's factory bad blocks, or, with
         * the directory lost too, the marks (under an ECC, programmed blocks' marks are
         * data, so those are lost to the drive) and a new directory */
        blk_scan_factory_bad();
        if (!F.sysdir) {
            sysdir_save();
            F.sysdir_lost = false;
        }
        F.failed = false;
    }
    ftl_reset_map();
    ckpt_save(false);
    if (erase_all) {
        for (uint32_t d = 0; d < F.n_dies; d++)
            for (uint32_t k = 0; k < F.nblk; k++) {
                struct blk_info *b = &F.blk[bidx(d, k)];
                if (b->state == BLK_BAD || b->state == BLK_SYS)
                    continue;
                b->erase_count++;
                b->inflight++;
                b->slc = 0;
                C.erases++;
                struct hal_flash_op op = {
                    .op = FLASH_ERASE, .plane_mask = (uint8_t)((1u << F.planes) - 1),
                    .block = (uint16_t)(k << F.plane_bits) };
                flash_op_addr(&op, d);
                op.tag = flash_tag_get(blk_erase_done, d, k);
                flash_push(&op);
            }
        while (flash_inflight())
            flash_poll_wait();
        /* failed erases are retiring with no data: bad now */
        for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
            if (F.blk[b].state == BLK_RETIRING)
                F.blk[b].state = BLK_BAD;
        F.retire_pending = false;
        /* the erase counts and the blocks found bad */
        ckpt_save(false);
    }
}

uint64_t fw_power_on_seconds(void)
{
    uint64_t s = C.power_on_seconds;
    if (G.id.clk_hz)
        s += (hal_cycles() - boot_cycles) / G.id.clk_hz;
    return s;
}
