/* SPDX-License-Identifier: BSD-2-Clause */
/* flash.c - the flash back end as the FTL uses it: op tags with their context, the
 * completion dispatcher, synchronous ops (bring-up, checkpoints, GC reads) and bring-up.
 * A completion runs the function its op's client gave flash_tag_get (flash.h). */
#include "flash.h"
#include "ftl.h"

#define N_FTAGS ((int)HW_READ_FTAG_BASE)  /* the rest are the hardware read path's */
#define MAX_DIES 256

/* One per tag. done_fn NULL: a synchronous op (flash_sync, the batch), whose waiter reads
 * done / fail / error and frees the tag. */
struct fop_ctx {
    flash_done_fn done_fn;
    uint32_t a, b;              /* the client's context, handed back to done_fn */
    struct hal_flash_op op;     /* a READ as pushed: read retry reads it again */
    uint16_t die;               /* for the per-die count of ops in the back end */
    int16_t  next;              /* the next read waiting for its target's retry */
    uint8_t  busy, done, fail, error, ecc_fail, timeout;
    uint8_t  retry_sf;          /* a read retry's SET FEATURES (a: the target) */
};
static struct fop_ctx ctx[N_FTAGS];
static uint32_t next_tag, n_inflight;
static bool probing;            /* flash_probe: reads may find erased pages */

/* Read retry (ONFI SET FEATURES 89h, read-retry level; spec/nand_errors.py). A READ whose
 * ECC gave up is not failed at once: it waits for its target (features are the target's,
 * so one read retries per target at a time) and is read again at levels 1 .. levels - 1,
 * each after a SET FEATURES, until a read passes the ECC; the sequence ends with level 0
 * and, if nothing passed, one last read there (a read that failed while another read of the
 * target had the level moved may need level 0 itself). Only then does the read fail (an
 * Unrecovered Read Error to its client). The sequence runs from flash_poll and never waits:
 * an op that cannot go out now (no tag, the firmware's die queue full) goes on a later poll. */
enum rt_state { RT_IDLE, RT_SET, RT_SET_WAIT, RT_READ, RT_READ_WAIT };
struct retry {
    int16_t head, tail;         /* reads waiting (tags, linked by ctx.next) */
    int16_t cur;                /* the read in retry (-1: none) */
    uint8_t state, level;       /* enum rt_state; the level set / to set */
    bool    step;               /* the op out completed: step_ok says how */
    bool    step_ok;
    bool    restore;            /* SET FEATURES back to level 0 after the read completed */
};
static struct retry rt[MAX_DIES];
static uint32_t rt_levels = 1;  /* the dies' levels (1: no read retry) */
static uint32_t rt_work;        /* reads waiting or in retry */

/* The back end's op stream blocks head-of-line while the named die's queue is full
 * (rtl/nand/README.md, nand_die_scheduler), which would stall every die and the main loop.
 * So the firmware keeps at most DIE_DEPTH ops per die in the back end and queues the rest
 * itself, per die, in order; they go out as that die's ops complete. */
#define DIE_DEPTH 4             /* nand_die_scheduler queue_depth (hal_ident has no field) */
#define POOL      512
static struct hal_flash_op pool[POOL];
static int16_t pool_next[POOL], pool_free = -1;
static int16_t q_head[MAX_DIES], q_tail[MAX_DIES];
static uint8_t die_out[MAX_DIES];
static uint32_t n_queued;

static void queues_init(void)
{
    pool_free = -1;
    for (int i = POOL - 1; i >= 0; i--) {
        pool_next[i] = pool_free;
        pool_free = (int16_t)i;
    }
    for (int d = 0; d < MAX_DIES; d++) {
        q_head[d] = q_tail[d] = -1;
        die_out[d] = 0;
    }
    n_queued = 0;
    next_tag = n_inflight = 0;
    for (int t = 0; t < N_FTAGS; t++)
        ctx[t].busy = 0;
    for (int t = 0; t < MAX_DIES; t++)
        rt[t] = (struct retry){ .head = -1, .tail = -1, .cur = -1 };
    rt_work = 0;
}

/* Push what the dies have room for; stop at the first refusal (the stream is busy). */
static void drain(void)
{
    if (!n_queued)
        return;
    for (uint32_t d = 0; d < F.n_dies; d++) {
        while (q_head[d] >= 0 && die_out[d] < DIE_DEPTH) {
            int16_t i = q_head[d];
            if (!hal_flash_push(&pool[i]))
                return;
            die_out[d]++;
            q_head[d] = pool_next[i];
            if (q_head[d] < 0)
                q_tail[d] = -1;
            pool_next[i] = pool_free;
            pool_free = i;
            n_queued--;
        }
    }
}

static uint32_t log2u(uint32_t v)
{
    uint32_t n = 0;
    while ((1u << n) < v)
        n++;
    return n;
}

/* The op of tag t is over: its client learns how. */
static void complete(uint8_t t, bool fail, bool error, bool ecc_fail)
{
    struct fop_ctx *x = &ctx[t];
    if (!x->done_fn) {
        x->done = 1;
        x->fail = fail || ecc_fail;
        x->error = error;
        x->ecc_fail = ecc_fail;
        return;             /* flash_sync / flash_batch_wait frees the tag */
    }
    x->done_fn(x->a, x->b, fail || ecc_fail || error);
    x->busy = 0;
    n_inflight--;
}

/* A read of a data block that needed read retry, or whose ECC corrected more than 3/4 of
 * what it can: the block is marked for refresh (ftl_block.c). */
static void read_health(const struct fop_ctx *x, bool retried, uint32_t bits)
{
    if (x->op.op != FLASH_READ || x->op.raw ||
        (!retried && bits * 4 <= G.id.ecc_t * 3))
        return;
    blk_refresh_mark(x->die, (uint32_t)x->op.block >> F.plane_bits);
}

static bool retryable(const struct fop_ctx *x)
{
    return rt_levels > 1 && x->op.op == FLASH_READ && !x->op.raw;
}

/* Read tag t again at the retry levels: it waits for its target (retry_run). */
static void retry_queue(uint8_t t)
{
    struct retry *r = &rt[ctx[t].die % F.n_targets];
    ctx[t].next = -1;
    if (r->tail >= 0)
        ctx[r->tail].next = (int16_t)t;
    else
        r->head = (int16_t)t;
    r->tail = (int16_t)t;
    rt_work++;
}

static bool page_erased(const struct hal_flash_op *read, const struct hal_flash_cpl *c,
                        uint32_t scratch, bool count);

/* A probe's READ (synchronous, flash_probe on) the ECC failed, tag t done: most probes find
 * erased pages, which no retry level reads, so the page is first read raw; an erased one
 * stays failed (its caller tells erased from damaged), a programmed one (aged while the
 * drive was off, say) goes through read retry like any read, and t is done again after. */
static void probe_retry(uint8_t t)
{
    struct fop_ctx *x = &ctx[t];
    if (!x->ecc_fail || x->error || !retryable(x))
        return;
    struct hal_flash_cpl c = { .tag = t, .ecc_fail = true };
    if (page_erased(&x->op, &c, F.probe_slot, false))
        return;
    x->done = 0;
    retry_queue(t);
    while (!x->done)
        flash_poll_wait();
}

/* Completion functions never push ops, so dispatch cannot recurse into the push paths. */
/* A read whose ECC gave up goes to read retry (above); one that retry could not recover
 * fails like a program or erase that failed: its callers count a media error and report an
 * Unrecovered Read Error. */
static void dispatch(const struct hal_flash_cpl *c)
{
    struct fop_ctx *x = &ctx[c->tag];
    if (die_out[x->die])
        die_out[x->die]--;
    if (!x->busy)
        fw_panic("flash completion for a free tag");
    x->timeout = c->timeout;
    if (c->timeout) {
        C.flash_timeouts++;
        die_hung(x->die);       /* fenced: no op of it will pass until a power cycle */
    }
    if (c->ecc_bits && !c->ecc_fail)
        C.ecc_corrected_reads++;
    if (c->ecc_bits > C.ecc_max_bits)
        C.ecc_max_bits = c->ecc_bits;
    if (x->retry_sf) {
        struct retry *r = &rt[x->a];
        r->step = true;
        r->step_ok = !(c->fail || c->error);
        x->busy = 0;
        n_inflight--;
        return;
    }
    uint32_t t = x->die % F.n_targets;
    if (rt[t].cur == (int16_t)c->tag) {         /* a read again at a retry level */
        rt[t].step = true;
        rt[t].step_ok = !(c->fail || c->error || c->ecc_fail);
        return;
    }
    if (c->ecc_fail && !c->error && retryable(x) && !probing) {
        retry_queue(c->tag);
        return;
    }
    if (c->ecc_fail && !probing) {
        C.ecc_failed_reads++;
        die_strike(x->die);
    } else if (c->ecc_bits && !c->error)
        read_health(x, false, c->ecc_bits);
    complete(c->tag, c->fail, c->error, c->ecc_fail);
}

/* A tag for the retry's own ops, or -1 while every tag is in use. */
static int tag_try_get(void)
{
    for (uint32_t i = 0; i < N_FTAGS; i++) {
        uint32_t t = (next_tag + i) % N_FTAGS;
        if (!ctx[t].busy) {
            next_tag = t + 1;
            return (int)t;
        }
    }
    return -1;
}

static bool push_nowait(struct hal_flash_op *op);

/* SET FEATURES `addr` on target `target`, P1..P4 from buffer slot `slot` */
static struct hal_flash_op features_op(uint32_t addr, uint32_t slot, uint32_t target)
{
    struct hal_flash_op op = { .op = FLASH_SET_FEATURES, .plane_mask = 1,
                               .column = (uint16_t)addr, .length = 4, .buffer = (uint16_t)slot };
    flash_op_addr(&op, target);
    return op;
}

/* The target's sequence is over: the next waiting read may start. */
static void retry_end(struct retry *r)
{
    r->cur = -1;
    r->state = RT_IDLE;
    rt_work--;
}

/* Target t's retry, as far as it can go now (no waiting). */
static void retry_run(uint32_t t)
{
    struct retry *r = &rt[t];
    for (;;) {
        switch (r->state) {
        case RT_IDLE:
            if (r->head < 0)
                return;
            r->cur = r->head;
            r->head = ctx[r->cur].next;
            if (r->head < 0)
                r->tail = -1;
            r->level = 1;
            r->restore = false;
            r->state = RT_SET;
            break;
        case RT_SET: {
            int tag = tag_try_get();
            if (tag < 0)
                return;
            struct hal_flash_op op = features_op(0x89, F.retry_slot + r->level, t);
            op.tag = (uint8_t)tag;
            ctx[tag] = (struct fop_ctx){ .a = t, .busy = 1, .retry_sf = 1 };
            if (!push_nowait(&op)) {
                ctx[tag].busy = 0;
                return;
            }
            n_inflight++;
            r->step = false;
            r->state = RT_SET_WAIT;
            break;
        }
        case RT_SET_WAIT:
            if (!r->step)
                return;
            if (r->restore || !r->step_ok) {
                /* back at level 0 after the read completed; or the die refused a level:
                 * the read fails as it is */
                if (!r->restore) {
                    C.ecc_failed_reads += !probing;
                    complete((uint8_t)r->cur, false, false, true);
                }
                retry_end(r);
                break;
            }
            r->state = RT_READ;
            break;
        case RT_READ:
            ctx[r->cur].op.tag = (uint8_t)r->cur;
            if (!push_nowait(&ctx[r->cur].op))
                return;
            C.read_retries++;
            r->step = false;
            r->state = RT_READ_WAIT;
            break;
        case RT_READ_WAIT:
            if (!r->step)
                return;
            if (r->step_ok || r->level == 0) {
                if (r->step_ok) {
                    C.retry_recovered++;
                    read_health(&ctx[r->cur], true, 0);
                }
                else if (!probing) {
                    C.ecc_failed_reads++;
                    die_strike(ctx[r->cur].die);    /* the die may have failed as a whole */
                }
                complete((uint8_t)r->cur, false, false, !r->step_ok);
                if (r->level == 0) {
                    retry_end(r);
                    break;
                }
                r->cur = -1;            /* the tag is the client's again (and may be reused) */
                r->restore = true;
                r->level = 0;
            } else {
                r->level = (uint8_t)(r->level + 1u < rt_levels ? r->level + 1u : 0u);
            }
            r->state = RT_SET;
            break;
        }
    }
}

void flash_poll(void)
{
    struct hal_flash_cpl c;
    while (hal_flash_pop(&c))
        dispatch(&c);
    drain();
    if (rt_work)
        for (uint32_t t = 0; t < F.n_targets; t++)
            if (rt[t].cur >= 0 || rt[t].head >= 0)
                retry_run(t);
}

void flash_poll_wait(void)
{
    hal_wait_arm();
    flash_poll();
    hal_wait(HAL_NO_DEADLINE);
}

uint8_t flash_tag_get(flash_done_fn done, uint32_t a, uint32_t b)
{
    int t;
    while ((t = tag_try_get()) < 0)
        flash_poll_wait();
    ctx[t] = (struct fop_ctx){ .done_fn = done, .a = a, .b = b, .busy = 1 };
    n_inflight++;
    return (uint8_t)t;
}

/* To the back end, or behind the die's queued ops; false (nothing done) if the pool of
 * queued ops is full. */
static bool push_nowait(struct hal_flash_op *op)
{
    uint32_t d = ((uint32_t)op->lun * F.n_ways + op->way) * F.n_ch + op->channel;
    ctx[op->tag].die = (uint16_t)d;
    if (op->op == FLASH_READ && op != &ctx[op->tag].op)
        ctx[op->tag].op = *op;
    if (q_head[d] < 0 && die_out[d] < DIE_DEPTH && hal_flash_push(op)) {
        die_out[d]++;
        return true;
    }
    if (pool_free < 0)
        return false;
    int16_t i = pool_free;
    pool_free = pool_next[i];
    pool[i] = *op;
    pool_next[i] = -1;
    if (q_tail[d] >= 0)
        pool_next[q_tail[d]] = i;
    else
        q_head[d] = i;
    q_tail[d] = i;
    n_queued++;
    return true;
}

void flash_push(struct hal_flash_op *op)
{
    while (!push_nowait(op))
        flash_poll_wait();
}

uint32_t flash_inflight(void)
{
    return n_inflight;
}

struct hal_flash_cpl flash_sync(struct hal_flash_op *op)
{
    uint8_t t = flash_tag_get(NULL, 0, 0);
    op->tag = t;
    flash_push(op);
    while (!ctx[t].done)
        flash_poll_wait();
    if (probing)
        probe_retry(t);
    struct hal_flash_cpl c = { .tag = t, .fail = ctx[t].fail, .error = ctx[t].error,
                               .timeout = ctx[t].timeout, .ecc_fail = ctx[t].ecc_fail };
    ctx[t].busy = 0;
    n_inflight--;
    return c;
}

/* Several independent ops at once (different dies run in parallel): push all, wait for all.
 * cpl[i] is op i's completion. For boot work that would otherwise take one die at a time. */
/* A batch in two halves, so the CPU can work while the ops run: push (n <= N_FTAGS / 2; the
 * tags go in ops[i].tag), then wait for all of them. */
void flash_batch_push(struct hal_flash_op *ops, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        ops[i].tag = flash_tag_get(NULL, 0, 0);
        flash_push(&ops[i]);
    }
}

void flash_batch_wait(const struct hal_flash_op *ops, struct hal_flash_cpl *cpl, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        struct fop_ctx *x = &ctx[ops[i].tag];
        while (!x->done)
            flash_poll_wait();
        if (probing)
            probe_retry(ops[i].tag);
        cpl[i] = (struct hal_flash_cpl){ .tag = ops[i].tag, .fail = x->fail,
                                         .error = x->error, .timeout = x->timeout,
                                         .ecc_fail = x->ecc_fail };
        x->busy = 0;
        n_inflight--;
    }
}

void flash_sync_batch(struct hal_flash_op *ops, struct hal_flash_cpl *cpl, uint32_t n)
{
    for (uint32_t done = 0; done < n; ) {
        uint32_t k = n - done < N_FTAGS / 2 ? n - done : N_FTAGS / 2;
        flash_batch_push(ops + done, k);
        flash_batch_wait(ops + done, cpl + done, k);
        done += k;
    }
}

/* Is the page `read` (a READ of whole planes' pages, completed as c) erased? Without an
 * ECC: every byte it read is FFh. With one, an erased page is no codeword (the code is
 * shortened, so all-ones is not one of its words) and its read fails the ECC: the page is
 * read again raw, plane by plane into the slots at `scratch` (room for a page and its
 * spare), and it is erased when no codeword holds more zero bits than the code corrects,
 * as controllers tell an erased page from a damaged one. */
bool flash_page_erased(const struct hal_flash_op *read, const struct hal_flash_cpl *c,
                       uint32_t scratch)
{
    return page_erased(read, c, scratch, true);
}

/* count: a programmed page past the code counts as a failed read (not while read retry may
 * still bring it back) */
static bool page_erased(const struct hal_flash_op *read, const struct hal_flash_cpl *c,
                        uint32_t scratch, bool count)
{
    const struct hal_ident *id = &G.id;
    volatile uint32_t *w;
    if (c->error)
        return false;
    if (!c->ecc_fail) {
        if (c->fail)
            return false;
        for (uint32_t p = 0; p < F.planes; p++) {
            if (!(read->plane_mask >> p & 1))
                continue;
            w = (volatile uint32_t *)(hal_buf() + slot_addr((read->buffer + p * F.upp) & 0xFFFF));
            for (uint32_t i = 0; i < read->length / 4u; i++)
                if (w[i] != 0xFFFFFFFFu)
                    return false;
        }
        return true;
    }
    uint32_t cw_bytes = id->ecc_data_bytes + id->ecc_room;
    uint32_t n_cw = read->length / id->ecc_data_bytes;
    for (uint32_t p = 0; p < F.planes; p++) {
        if (!(read->plane_mask >> p & 1))
            continue;
        struct hal_flash_op op = *read;
        op.plane_mask = (uint8_t)(1u << p);
        op.column = (uint16_t)(read->column / id->ecc_data_bytes * cw_bytes);
        op.length = (uint16_t)(n_cw * cw_bytes);
        op.buffer = (uint16_t)(scratch - p * F.upp);
        op.raw = 1;
        struct hal_flash_cpl rc = flash_sync(&op);
        if (rc.fail || rc.error)
            return false;
        volatile uint8_t *b = hal_buf() + slot_addr(scratch);
        for (uint32_t k = 0; k < n_cw; k++) {
            uint32_t zeros = 0;
            for (uint32_t i = 0; i < cw_bytes && zeros <= id->ecc_t; i++)
                zeros += (uint32_t)__builtin_popcount((uint8_t)~b[k * cw_bytes + i]);
            if (zeros > id->ecc_t) {
                C.ecc_failed_reads += count;    /* programmed, beyond the code: a failure */
                return false;
            }
        }
    }
    return true;
}

void flash_probe(bool on)
{
    probing = on;
}

/* Die d: channel first, then way, then LUN, so successive dies are on successive channels
 * and the LUNs of a target are n_targets dies apart (dies below n_targets are LUN 0). */
void flash_op_addr(struct hal_flash_op *op, uint32_t die)
{
    op->channel = (uint8_t)(die % F.n_ch);
    op->way = (uint8_t)(die / F.n_ch % F.n_ways);
    op->lun = (uint8_t)(die / F.n_targets);
}

/* SET FEATURES 01h (timing mode) on every target (LUN 0: features are the target's):
 * P1 = mode | interface (bits 5:4, 10b NV-DDR2). */
/* SET FEATURES `addr` on every target at once, P1..P4 from slot `slot`. */
static void set_features_all(uint32_t addr, uint32_t slot)
{
    struct hal_flash_op ops[MAX_DIES];
    struct hal_flash_cpl cpls[MAX_DIES];
    for (uint32_t d = 0; d < F.n_targets; d++)
        ops[d] = features_op(addr, slot, d);
    flash_sync_batch(ops, cpls, F.n_targets);
}

static void set_timing_mode(uint32_t p1)
{
    buf_write32(slot_addr(F.scratch), p1);
    set_features_all(0x01, F.scratch);
}

/* READ PARAMETER PAGE of target `die` (< n_targets) on the bus as it runs now: the "ONFI"
 * signature, and byte 100 (LUNs per target) what the SoC was built for? */
static bool onfi_signature(uint32_t die)
{
    uint32_t s = F.scratch;
    struct hal_flash_op op = { .op = FLASH_READ_PARAM, .plane_mask = 1, .length = 256,
                               .buffer = (uint16_t)s };
    flash_op_addr(&op, die);
    buf_write32(slot_addr(s), 0);                       /* no stale signature */
    buf_write32(slot_addr(s) + 100, 0);
    struct hal_flash_cpl c = flash_sync(&op);
    if (c.error || buf_read32(slot_addr(s)) != ('O' | 'N' << 8 | 'F' << 16 |
                                                (uint32_t)'I' << 24))
        return false;
    uint32_t luns = buf_read32(slot_addr(s) + 100) & 0xFF;
    if (luns != F.n_luns) {
        fw_puts("flash: parameter page says 0x");
        fw_put_hex(luns);
        fw_puts(" LUNs per target, the build has 0x");
        fw_put_hex(F.n_luns);
        fw_puts("\n");
        return false;
    }
    return true;
}

/* rtl/nand/README.md "Bring-up": mode 0, RESET every die, READ PARAMETER PAGE of one die
 * (signature "ONFI"), SET FEATURES 01h = timing mode on every die, then that mode. A build
 * with NV-DDR2 then sets every die to the NV-DDR2 mode, switches the channels' engines and
 * reads every die's parameter page back; if one fails (read capture on a board), every die
 * goes back to the SDR mode. */
bool flash_bringup(void)
{
    const struct hal_ident *id = &G.id;
    uint32_t pb = log2u(id->pages_per_block), plb = log2u(id->planes);
    uint32_t bb = log2u(id->blocks_per_plane * id->planes);
    uint32_t plane_slots = id->page_bytes / SLOT_BYTES;
    if (F.n_dies > MAX_DIES)
        fw_panic("more dies than the flash queues hold");
    queues_init();
    F.page_bits = pb;
    F.block_bits = bb;
    F.plane_bits = plb;
    hal_flash_write_protect(false);
    hal_flash_setup(0, pb, bb, plb, plane_slots);
    struct hal_flash_op ops[MAX_DIES];
    struct hal_flash_cpl cpls[MAX_DIES];
    for (uint32_t d = 0; d < F.n_targets; d++) {   /* every target at once: tRST overlaps */
        ops[d] = (struct hal_flash_op){ .op = FLASH_RESET, .plane_mask = 1 };
        flash_op_addr(&ops[d], d);
    }
    flash_sync_batch(ops, cpls, F.n_targets);
    /* a target that never came out of its RESET (hung: dispatch has marked its die) is
     * fenced by the back end: its SET FEATURES fail at once; the signature is another's */
    uint32_t first = 0;
    while (first + 1 < F.n_targets && cpls[first].timeout)
        first++;
    /* read retry needs an ECC to fail reads, and levels: P1 of level L in slot retry_slot
     * + L; every target back at level 0 (a die keeps its level over RESET) */
    rt_levels = id->ecc_data_bytes && id->retry_levels > 1 ? id->retry_levels : 1;
    if (rt_levels > 1) {
        for (uint32_t l = 0; l < rt_levels; l++)
            buf_write32(slot_addr(F.retry_slot + l), l);
        set_features_all(0x89, F.retry_slot);
    }
    if (!onfi_signature(first)) {
        fw_puts("flash: no ONFI parameter page\n");
        return false;
    }
    /* SET FEATURES takes P1..P4 from the buffer: P1 = timing mode. */
    set_timing_mode(id->onfi_mode & 0xF);
    hal_flash_setup(id->onfi_mode, pb, bb, plb, plane_slots);
    if (id->nvddr2_mode != NVDDR2_NONE) {
        set_timing_mode(0x20 | (id->nvddr2_mode & 0xF));
        hal_flash_nvddr2(true);
        /* The read-capture delay of every channel, on way 0's signature, then every die's
         * parameter page at that delay. */
        uint32_t cal = hal_flash_dqs_calibrate(0, NULL);
        uint32_t all = F.n_ch >= 32 ? 0xFFFFFFFFu : (1u << F.n_ch) - 1;
        bool ok = cal == all;
        if (!ok) {
            fw_puts("flash: DQS calibration found no read window on channels 0x");
            fw_put_hex(~cal & all);
            fw_puts("\n");
        }
        for (uint32_t d = 0; d < F.n_targets && ok; d++)
            ok = cpls[d].timeout || onfi_signature(d);
        if (!ok) {
            fw_puts("flash: NV-DDR2 failed, back to SDR mode 0x");
            fw_put_hex(id->onfi_mode);
            fw_puts("\n");
            set_timing_mode(id->onfi_mode & 0xF);       /* sent by the NV-DDR2 engine */
            hal_flash_nvddr2(false);
        }
    }
    return true;
}
