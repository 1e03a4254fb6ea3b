/* SPDX-License-Identifier: BSD-2-Clause */
/* ftl_ckpt.c - persistence: the map, block table and counters as a checkpoint in one of two
 * alternating system areas (sequence number + checksum), loaded at boot; and format. */
#include "ftl.h"

#define CKPT_MAGIC   0x43445353u        /* "SSDC" */
#define CKPT_VERSION 1u
#define HDR_WORDS    64u
#define N_CTR        ((uint32_t)(sizeof(struct fw_counters) / 8))
#define FLAG_BAD     1u
_Static_assert(16 + 2 * sizeof(struct fw_counters) / 8 <= HDR_WORDS,
               "the SMART / FTL counters must fit in the checkpoint header");

/* Stream of words through the checkpoint stage (one multi-plane page). */
struct stream {
    uint32_t area, page, word, sum_a, sum_b;
    bool ok;
};

static uint32_t stage_words(void)
{
    return F.pu_units * UNIT_BYTES / 4;
}

static void area_op(struct hal_flash_op *op, uint32_t area, uint32_t page)
{
    uint32_t blk = F.sys_blk[area * F.area_blocks + page / F.ppb];
    op->plane_mask = (uint8_t)((1u << F.planes) - 1);
    op->block = (uint16_t)(blk << F.plane_bits);
    op->page = (uint16_t)(page % F.ppb);
    op->length = (uint16_t)G.id.page_bytes;
    op->buffer = (uint16_t)F.ckpt_stage;
    flash_op_addr(op, 0);
}

static void sum(struct stream *s, uint32_t w)
{
    s->sum_a += w;
    s->sum_b += s->sum_a ^ (s->sum_b >> 3);
}

static void put(struct stream *s, uint32_t w)
{
    if (!s->ok)
        return;
    buf_write32(slot_addr(F.ckpt_stage) + 4 * s->word, w);
    if (++s->word == stage_words()) {
        struct hal_flash_op op = { .op = FLASH_PROGRAM };
        area_op(&op, s->area, s->page++);
        struct hal_flash_cpl c = flash_sync(&op);
        s->ok = !(c.fail || c.error);
        s->word = 0;
    }
}

static bool fetch(struct stream *s)
{
    struct hal_flash_op op = { .op = FLASH_READ };
    area_op(&op, s->area, s->page++);
    struct hal_flash_cpl c = flash_sync(&op);
    return !(c.fail || c.error);
}

static uint32_t get(struct stream *s)
{
    if (s->word == stage_words()) {
        s->ok = s->ok && fetch(s);
        s->word = 0;
    }
    return buf_read32(slot_addr(F.ckpt_stage) + 4 * s->word++);
}

static uint32_t blk_word(uint32_t b)
{
    return (F.blk[b].erase_count & 0xFFFFFF) |
           (uint32_t)(F.blk[b].state == BLK_BAD || F.blk[b].state == BLK_RETIRING) << 24;
}

static void header(uint32_t *h, uint32_t seq, bool clean, uint32_t body)
{
    memset(h, 0, HDR_WORDS * 4);
    h[0] = CKPT_MAGIC;
    h[1] = CKPT_VERSION;
    h[2] = seq;
    h[3] = clean;
    h[4] = body;
    h[6] = F.n_dies;
    h[7] = F.nblk;
    h[8] = F.ppb;
    h[9] = F.pu_units;
    h[10] = F.user_units;
    h[11] = G.id.lbads;
    const uint64_t *ctr = (const uint64_t *)&C;
    for (uint32_t i = 0; i < N_CTR; i++) {
        h[16 + 2 * i] = (uint32_t)ctr[i];
        h[17 + 2 * i] = (uint32_t)(ctr[i] >> 32);
    }
}

static uint64_t boot_cycles;

static void update_power_on(void)
{
    uint64_t now = hal_cycles();
    if (G.id.clk_hz)
        C.power_on_seconds += (now - boot_cycles) / G.id.clk_hz;
    boot_cycles = now - (now - boot_cycles) % (G.id.clk_hz ? G.id.clk_hz : 1);
}

/* Write the whole state into the other area. The write buffer is flushed first, so every
 * map entry names a flash unit (or none). */
void ckpt_save(bool clean)
{
    if (!F.ready)
        return;
    bool was = F.in_ckpt;
    F.in_ckpt = true;
    ftl_flush_sync();
    update_power_on();
    C.ckpt_saves++;
    uint32_t seq = F.ckpt_seq + 1, area = seq & 1;
    uint32_t body = F.user_units + F.n_dies * F.nblk;
    uint32_t h[HDR_WORDS];
    struct stream s = { .area = area, .ok = true };
    /* erase first: the erase counts of the area's own blocks are part of the body */
    for (uint32_t k = 0; k < F.area_blocks; k++) {
        uint32_t blk = F.sys_blk[area * F.area_blocks + k];
        struct hal_flash_op op = { .op = FLASH_ERASE,
                                   .plane_mask = (uint8_t)((1u << F.planes) - 1),
                                   .block = (uint16_t)(blk << F.plane_bits) };
        flash_op_addr(&op, 0);
        F.blk[bidx(0, blk)].erase_count++;
        struct hal_flash_cpl c = flash_sync(&op);
        if (c.fail || c.error)
            s.ok = false;
    }
    header(h, seq, clean, body);
    for (uint32_t i = 6; i < HDR_WORDS; i++)
        sum(&s, h[i]);
    for (uint32_t l = 0; l < F.user_units; l++)
        sum(&s, F.l2p[l]);
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        sum(&s, blk_word(b));
    h[5] = s.sum_a ^ s.sum_b << 1;
    for (uint32_t i = 0; i < HDR_WORDS; i++)
        put(&s, h[i]);
    for (uint32_t l = 0; l < F.user_units; l++)
        put(&s, F.l2p[l]);
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
        put(&s, blk_word(b));
    while (s.word)
        put(&s, 0);
    F.in_ckpt = was;
    if (!s.ok) {
        fw_puts("checkpoint: write failed, previous one kept\n");
        return;
    }
    F.ckpt_seq = seq;
    F.dirty = false;
    blk_release_pending();
}

/* One area: header, then the body applied to the tables as it streams in. false (tables
 * undefined) when the header or the checksum does not match. */
static bool load_area(uint32_t area, uint32_t *seq_out, bool apply)
{
    struct stream s = { .area = area, .ok = true };
    if (!fetch(&s))
        return false;
    uint32_t h[HDR_WORDS];
    for (uint32_t i = 0; i < HDR_WORDS; i++)
        h[i] = get(&s);
    if (h[0] != CKPT_MAGIC || h[1] != CKPT_VERSION || h[6] != F.n_dies || h[7] != F.nblk ||
        h[8] != F.ppb || h[9] != F.pu_units || h[10] != F.user_units || h[11] != G.id.lbads ||
        h[4] != F.user_units + F.n_dies * F.nblk || (h[2] & 1) != area)
        return false;
    *seq_out = h[2];
    if (!apply)
        return true;
    for (uint32_t i = 6; i < HDR_WORDS; i++)
        sum(&s, h[i]);
    for (uint32_t l = 0; l < F.user_units; l++) {
        uint32_t w = get(&s);
        sum(&s, w);
        F.l2p[l] = w;
    }
    for (uint32_t b = 0; b < F.n_dies * F.nblk; b++) {
        uint32_t w = get(&s);
        sum(&s, w);
        F.blk[b].erase_count = w & 0xFFFFFF;
        if (F.blk[b].state != BLK_SYS)
            F.blk[b].state = (w >> 24 & FLAG_BAD) ? BLK_BAD : BLK_FREE;
    }
    if (!s.ok || h[5] != (s.sum_a ^ s.sum_b << 1))
        return false;
    for (uint32_t l = 0; l < F.user_units; l++)
        if (F.l2p[l] != MAP_NONE && F.l2p[l] >= F.raw_units)
            return false;
    uint64_t *ctr = (uint64_t *)&C;
    for (uint32_t i = 0; i < N_CTR; i++)
        ctr[i] = h[16 + 2 * i] | (uint64_t)h[17 + 2 * i] << 32;
    if (!h[3])
        C.unsafe_shutdowns++;
    return true;
}

/* Boot: the newest valid checkpoint of the two areas. */
bool ckpt_load(void)
{
    uint32_t seq[2] = { 0, 0 };
    bool ok[2];
    boot_cycles = hal_cycles();
    for (uint32_t a = 0; a < 2; a++)
        ok[a] = load_area(a, &seq[a], false);
    for (uint32_t n = 0; n < 2; n++) {
        uint32_t a;
        if (ok[0] && ok[1])
            a = (int32_t)(seq[1] - seq[0]) > 0 ? 1 : 0;
        else if (ok[0] || ok[1])
            a = ok[1];
        else
            return false;
        if (load_area(a, &seq[a], true)) {
            F.ckpt_seq = seq[a];
            C.power_cycles++;
            ftl_rebuild();
            F.dirty = false;
            return true;
        }
        ok[a] = false;
    }
    return false;
}

/* Format: every good block erased (erase_all) or marked free (erased when allocated),
 * the map emptied, a checkpoint written. */
void ftl_format(bool erase_all)
{
    if (!F.ready)
        return;
    F.quiesced = false;
    ftl_flush_sync();
    if (erase_all) {
        for (uint32_t d = 0; d < F.n_dies; d++)
            for (uint32_t k = 0; k < F.nblk; k++) {
                struct blk_info *b = &F.blk[bidx(d, k)];
                if (b->state == BLK_BAD || b->state == BLK_SYS)
                    continue;
                b->erase_count++;
                b->inflight++;
                C.erases++;
                struct hal_flash_op op = {
                    .op = FLASH_ERASE, .plane_mask = (uint8_t)((1u << F.planes) - 1),
                    .block = (uint16_t)(k << F.plane_bits) };
                flash_op_addr(&op, d);
                op.tag = flash_tag_get(FOP_ERASE, d, k);
                flash_push(&op);
            }
        while (flash_inflight())
            flash_poll();
        /* failed erases are retiring with no data: bad now */
        for (uint32_t b = 0; b < F.n_dies * F.nblk; b++)
            if (F.blk[b].state == BLK_RETIRING)
                F.blk[b].state = BLK_BAD;
        F.retire_pending = false;
    }
    ftl_reset_map();
    ckpt_save(false);
}

uint64_t fw_power_on_seconds(void)
{
    uint64_t s = C.power_on_seconds;
    if (G.id.clk_hz)
        s += (hal_cycles() - boot_cycles) / G.id.clk_hz;
    return s;
}
