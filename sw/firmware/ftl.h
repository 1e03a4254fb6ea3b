/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ftl.h - the flash translation layer: page-level map with a 4 KiB unit, write buffer in
 * firmware buffer slots, striping, greedy GC, TRIM, bad blocks, wear-aware allocation,
 * checkpoints. Theory of operation: sw/firmware/README.md.
 */
#ifndef SSDLAB_FTL_H
#define SSDLAB_FTL_H

#include "flash.h"
#include "fw.h"

#define UNIT_BYTES      4096u
#define MAP_NONE        0xFFFFFFFFu     /* unmapped: reads as zeroes */
#define MAP_WB          0x80000000u     /* in the write buffer: low bits = buffer index */
/* lost: GC or a refresh could not read the unit (past read retry): its reads are an
 * Unrecovered Read Error until the host writes or deallocates it (never garbage) */
#define MAP_UNC         0xFFFFFFFEu
/* the unit is in a write-buffer slot (MAP_WB | slot) */
static inline int map_in_wb(uint32_t v) { return (v & MAP_WB) && v < MAP_UNC; }
#define JNL_GROUPS_MAX  128u            /* write-buffer groups at most (ftl.c) */

/* Run-time parameters; the SoC (or a test) may change them before fw_init(). */
struct ftl_config {
    uint32_t op_permille;       /* over-provisioning, per mille of the raw capacity */
    uint32_t pe_budget;         /* program/erase cycles of the part (percentage used) */
    uint32_t gc_low;            /* GC a die when it has fewer free blocks than this */
    uint32_t gc_idle_us;        /* host idle this long: background GC starts (0: never) */
    uint32_t gc_idle_free;      /* background GC target, free blocks per die (0: nblk / 4) */
};
extern struct ftl_config ftl_config;

/* PENDING: emptied by GC, but the durable map (checkpoint + journal) may still point into
 * it: it is erased only after a release's journal commit (ftl_release_start) or a
 * checkpoint, so a Flush stays durable across power loss. RELEASING: pending, and in the
 * release under way (counted in n_pending and n_releasing); never taken before its commit. */
enum blk_state { BLK_FREE, BLK_ACTIVE, BLK_FULL, BLK_RETIRING, BLK_BAD, BLK_SYS,
                 BLK_PENDING, BLK_VICTIM, BLK_RELEASING };
/* the release of GC's emptied blocks (F.rel_state): none, waiting for the groups issued
 * before rel_seq to be programmed, waiting for journal commit rel_jnl to be on flash */
enum { REL_IDLE, REL_GROUPS, REL_COMMIT };

struct blk_info {
    uint32_t erase_count;
    uint16_t valid;             /* valid units */
    uint8_t  inflight;          /* programs pushed, not completed */
    uint8_t  state : 5;         /* enum blk_state */
    uint8_t  band : 1;          /* erased for its band (die parity, ftl_parity.c): a member of
                                 * the stripes of its block index, until the band reopens */
    uint8_t  refresh : 1;       /* its reads needed read retry or many corrected bits: its
                                 * data moves to a fresh block (refresh_poll) */
    uint8_t  slc : 1;           /* erased in SLC mode: its programs and reads are SLC ops */
};

struct die_info {
    int32_t  active;            /* block being filled, -1 none */
    uint32_t next_page;
    uint32_t n_free;
    uint32_t n_pending;         /* pending blocks, the releasing ones included */
    uint32_t n_releasing;
    /* the die's part (mixed parts: a second part type may have a smaller page); the plane
     * stride of every group and of the physical unit numbers is the main part's (F.upp):
     * a smaller page leaves units col >= upp of each plane unused */
    uint16_t upp;               /* units per page per plane */
    uint16_t pu;                /* units per multi-plane page (planes x upp) */
    uint32_t upb;               /* units per (multi-plane) block */
    uint32_t page_bytes, spare_bytes;
    int32_t  slc_active;        /* SLC-cache block being filled, -1 none */
    uint32_t slc_next_page;
    uint32_t n_slc;             /* SLC blocks holding or taking data (active + full) */
    int32_t  gc_blk;            /* GC victim being relocated page by page (BLK_VICTIM), -1 */
    uint32_t gc_page;           /* its next page to look at */
    uint32_t gc_valid0;         /* its valid units when chosen (the pace's rate) */
    uint8_t  dead;              /* failed as a whole: out of service (ftl_die.c) */
    uint8_t  hung;              /* an op of it was given up: busy past the timeout */
    uint8_t  strikes;           /* its failures in a row (ftl_die.c) */
};

/* write buffer group: one multi-plane page of one die (pu_units slots) */
enum grp_state { GRP_FREE, GRP_FILLING, GRP_PROGRAMMING, GRP_REQUEUE };

struct grp {
    uint8_t  state;
    uint8_t  upp;               /* units per plane page of the dies it may go to */
    uint16_t fill;              /* slots handed out */
    uint8_t  plane, in_plane;   /* the next slot's plane and unit in it (no division) */
    uint32_t die, blk, page;
    uint32_t seq;               /* submit order (FUA / Flush wait for it) */
};

struct ftl {
    /* geometry */
    /* a die is a LUN: n_dies = n_ch * n_ways * n_luns, n_targets = n_ch * n_ways */
    uint32_t n_dies, n_ch, n_ways, n_luns, n_targets;
    uint32_t nblk, ppb, planes, plane_bits, page_bits, block_bits;
    uint32_t upp;               /* units per page per plane */
    uint32_t pu_units;          /* units per multi-plane page */
    uint32_t upb;               /* units per (multi-plane) block */
    uint32_t raw_units, user_units, spu_shift;  /* spu_shift: log2 LBAs per unit */
    uint32_t data_units;        /* units the dies hold (raw_units numbers the main part's) */
    bool     mixed;             /* two part types */
    /* SLC write cache (ftl_slc.c): pages of an SLC block (ppb / bits per cell), SLC blocks
     * a die may hold (0: no cache), the policy (SLC_*) */
    uint32_t slc_ppb, slc_max, slc_policy;
    uint64_t ns_lbas;
    /* tables */
    uint32_t *l2p;              /* user_units */
    uint32_t *p2l;              /* raw_units */
    struct blk_info *blk;       /* n_dies * nblk */
    struct die_info *die;       /* n_dies */
    struct grp *grp;            /* n_grp */
    uint32_t *grp_lpn;          /* n_grp * pu_units */
    uint32_t *wb_old;           /* ... the unit's copy on flash before it (what a checkpoint saves) */
    uint32_t n_grp, filling;    /* filling: group being filled, or n_grp */
    uint32_t grp_scan;          /* ftl_wb_alloc's next group to look at (round robin) */
    uint32_t rr_die;            /* striping cursor */
    uint32_t seq_next;
    uint32_t n_requeue;         /* groups waiting to be programmed again */
    /* firmware slots */
    uint32_t gc_stage, scratch, jstage, grp_base;
    uint32_t retry_slot;        /* read retry: slot retry_slot + L holds level L (flash.c) */
    uint32_t probe_slot;        /* read retry of probes: room for a plane's raw page */
    /* die parity (ftl_parity.c): dies per stripe (0: none), the rebuild's slots (one per
     * die of a stripe), the stripe groups' parity accumulators (2 x pu_units each) */
    uint32_t stripe, rebuild_slot, acc_slot;
    uint32_t n_scratch;
    /* system area (checkpoints): blocks of die 0 */
    uint32_t sys_blk[64], n_sys, area_blocks;
    uint32_t sys_die;           /* the die of the checkpoint areas (sys_blk): 0, or the one
                                 * they moved to when it failed (sys_area_move) */
    bool     sysdir;            /* the system directory (ftl_sysdir.c) is on flash */
    bool     sysdir_lost;       /* ... but unreadable: the checkpoint areas are unknown */
    uint32_t ckpt_seq;
    uint32_t ckpt_loaded;       /* the checkpoint the last boot loaded (0: none, formatted) */
    bool     dirty;             /* map changed since the last checkpoint */
    bool     in_gc;
    bool     gc_wanted;         /* a die fell below gc_low free blocks: gc_ensure looks */
    bool     gc_pacing;         /* a die fell below gc_low free + pending: gc_pace works */
    /* the longest the firmware waited since boot (cycles), where metadata or GC can hold a
     * host write: a journal commit releasing GC's blocks, a whole checkpoint, a write
     * waiting for a free write-buffer group (vendor log; the item 7 figures) */
    uint32_t stall_release, stall_ckpt, stall_wb;
    uint32_t stall_gc;          /* ... and the GC work (paced moves, releases) before a write */
    uint32_t rel_state, rel_seq, rel_jnl;       /* the release under way (REL_*) */
    uint32_t rel_waits;         /* releases a write waited for: a die had no free block */
    /* the other checkpoint area erased ahead, beside host I/O (ckpt_prepare): erases in
     * flight, and the area ready for the next checkpoint (not known after a boot) */
    uint32_t area_erasing;
    bool     area_ready[2], area_erase_failed;
    uint32_t gc_credit;         /* units paced GC may still move (x GC_CREDIT_ONE) */
    bool     in_ckpt;
    bool     ready;             /* flash up, system area found: the FTL may touch flash */
    bool     quiesced;          /* shut down: no background GC until the host writes */
    bool     retire_pending;
    bool     rebuild_pending;   /* a failed die has blocks of units to move off (parity) */
    bool     refresh_pending;   /* a block has `refresh` set, or one is being refreshed */
    int32_t  rf_blk;            /* the block being refreshed (die x nblk + block; BLK_VICTIM,
                                 * moved a page per refresh_poll), -1: none */
    uint32_t rf_page;           /* its next page to move */
    uint64_t rf_due;            /* uptime cycle of the next page a busy host waits for */
    bool     die_check;         /* a die reached its strikes: die_poll tests it */
    bool     die_warned;        /* the reliability event of a failed die was raised */
    uint32_t boot_cycles;       /* the last boot: cycles from fw_init to ready */
    uint32_t jnl_replayed;      /* the last boot: journal pages applied */
    bool     ckpt_clean;        /* the checkpoint loaded at boot was written by a shutdown */
    bool     jnl_fresh;         /* ... and no journal page follows it: none to replace */
    bool     in_use;            /* a journal page marks the drive in use since the last
                                 * checkpoint (a power loss now is an unsafe shutdown) */
    bool     failed;            /* the map was lost (no checkpoint loads): reads fail, writes
                                 * are refused, until a Format NVM */
    bool     spare_warned;      /* the spare warning's event was raised */
    int32_t  spare_left;        /* spare blocks (blk_spare_update) */
    uint32_t spare_design;      /* ... with no bad block */
};
extern struct ftl F;

/* The map journal (ftl_journal.c): the map changes since the checkpoint, on their way into
 * the checkpoint area's pages after it. */
struct jnl {
    uint32_t area;              /* the current checkpoint's area */
    uint32_t first, next, pages;    /* its first journal page, the next one, area pages */
    uint32_t *ent;              /* (lpn, value) pairs not yet in a page */
    uint32_t n, max;
    uint32_t issued, done;      /* commits pushed / on flash (in order) */
    bool     failed;            /* a journal program failed: a checkpoint replaces it */
};
extern struct jnl J;

static inline uint32_t bidx(uint32_t die, uint32_t blk) { return die * F.nblk + blk; }
static inline uint32_t ppn_of(uint32_t die, uint32_t blk, uint32_t page, uint32_t u)
{
    return (bidx(die, blk) * F.ppb + page) * F.pu_units + u;
}
static inline uint32_t slot_addr(uint32_t slot) { return slot * SLOT_BYTES; }
/* 32-bit words of a multi-plane page (checkpoint streams, journal pages) */
static inline uint32_t page_words(void) { return F.pu_units * UNIT_BYTES / 4; }

static inline void stall_note(uint32_t *worst, uint64_t since)
{
    uint64_t d = hal_cycles() - since;
    if (d > *worst)
        *worst = d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}
static inline uint32_t grp_slot(uint32_t wb) { return F.grp_base + wb; }

/* ftl.c */
void ftl_init_geometry(void);
void ftl_reset_map(void);                       /* every unit unmapped, blocks rebuilt */
void ftl_rebuild(void);                         /* p2l, valid counts, states from l2p */
void ftl_be_request(const struct hal_be_req *r);
void ftl_poll(void);                            /* request completions, deferred work */
uint16_t ftl_zero_range(uint64_t slba, uint64_t nlb);
void ftl_flush_sync(void);                      /* write buffer -> flash, wait */
bool ftl_requests_idle(void);                   /* no fast-path request in progress */
void ftl_hw_read_start(void);                   /* the hardware read path on (map in place) */
void ftl_hw_read_stop(void);                    /* ... off, its reads finished */
void ftl_map_set(uint32_t lpn, uint32_t v);
uint32_t ftl_wb_alloc(uint32_t lpn);
void ftl_wb_commit(uint32_t wb);
void ftl_write_unit_from(uint32_t lpn, uint32_t src_addr);
void ftl_submit_ready(void);
void ftl_release_start(bool pad);               /* GC's emptied blocks freed beside host I/O */
void ftl_release_pending(void);                 /* ... and finished now: the caller waits */

/* ftl_block.c: allocation, erase, bad blocks */
int32_t blk_alloc(uint32_t die);                /* erased block for writing, -1 none */
int32_t blk_alloc_slc(uint32_t die);            /* erased in SLC mode for the cache, -1 none */
void blk_invalidate(uint32_t ppn);
void blk_erase_done(uint32_t die, uint32_t blk, bool fail);   /* an erase's flash_done_fn */
void blk_retire(uint32_t die, uint32_t blk);
void blk_scan_factory_bad(void);
uint32_t blk_count_state(uint8_t state);
uint32_t blk_avg_erase(void);
void blk_spare_update(void);
uint32_t blk_spare_percent(void);               /* SMART Available Spare */
bool ftl_read_only(void);                       /* metadata lost, or no spare left */

/* ftl_gc.c */
bool gc_one(uint32_t die);
void gc_relocate(uint32_t die, uint32_t blk);
void gc_poll(void);
void gc_ensure(void);
void gc_pace(uint32_t units);
void gc_idle(bool host_busy);
uint64_t gc_idle_deadline(void);
uint32_t gc_idle_hw_cycles(void);
void retire_poll(void);
void refresh_poll(void);
void die_rebuild_poll(void);
bool read_unit_sync(uint32_t ppn, uint32_t slot);  /* ftl.c */
void die_strike(uint32_t die);      /* ftl_die.c: a program, erase or read of it failed */
void die_good(uint32_t die);        /* ... a program or erase of it passed */
void die_poll(void);
uint32_t die_dead_count(void);
void die_hung(uint32_t die);
void blk_refresh_mark(uint32_t die, uint32_t blk);   /* ftl_block.c */
void blk_mark_releasing(void);                  /* the pending blocks join a release */
void blk_release_pending(bool all);             /* its commit is on flash (all: a checkpoint) */

/* ftl_parity.c: die parity (die-raid5) over bands of one block index across a stripe's dies */
void parity_init_geometry(void);                /* slots counted from F.acc_slot */
uint32_t parity_slots(void);
void parity_reset(void);                        /* no band open (boot, format) */
bool parity_die(uint32_t die);                  /* die's writes go to its stripe group's band */
bool band_take(uint32_t die, uint32_t *blk, uint32_t *page);  /* a data page of its row */
void band_pushed(uint32_t die, uint32_t g);     /* ... its program pushed from group g */
bool parity_rebuild(uint32_t ppn, uint32_t slot);   /* a unit from its stripe, into slot */
void band_die_failed(uint32_t die);
int32_t band_victim(uint32_t die, uint32_t max_valid);  /* GC: the group's band to collect */
bool band_victim_open(uint32_t die);            /* a band of die's group is being collected */
void band_victim_set(uint32_t die, uint32_t blk);   /* every member of band blk a victim */
void band_refresh_mark(uint32_t die, uint32_t blk);
void parity_group(uint32_t die, uint32_t *first, uint32_t *n);
void band_room(uint32_t die, uint32_t *free, uint32_t *pend);
bool band_lead(uint32_t die);
int32_t band_row_partial(void);
bool parity_in_group(uint32_t die, int32_t g);
void unit_read_op(uint32_t ppn, uint32_t slot, struct hal_flash_op *op);  /* ftl.c */
int32_t blk_take_at(uint32_t die, uint32_t k, bool slc, bool band);   /* ftl_block.c */

/* ftl_slc.c: the SLC write cache */
void slc_init_geometry(void);
bool slc_take(uint32_t die);                    /* host data may go to die's SLC cache now */
bool slc_fold_one(void);                        /* idle: one SLC block folded to native */
void slc_block_left(uint32_t die, uint32_t blk);    /* an SLC block stops holding data */
static inline uint32_t blk_pages(uint32_t die, uint32_t blk)
{
    return F.blk[bidx(die, blk)].slc ? F.slc_ppb : F.ppb;
}

/* ftl_ckpt.c */
void ckpt_find_area(void);
/* ftl_sysdir.c: block SYSDIR_BLOCK of die sysdir_die() names the checkpoint areas and keeps
 * the factory bad-block table (written at the first format) */
#define SYSDIR_BLOCK 0u
uint32_t sysdir_die(void);
void sysdir_save(void);
bool sysdir_load(bool apply_bad);
bool sysdir_erased(void);
bool sys_area_move(void);
enum ckpt_result { CKPT_OK, CKPT_BLANK, CKPT_LOST };
enum ckpt_result ckpt_load(void);
void ckpt_save(bool clean);
/* the live save (the journal's area full): written beside host I/O, a chunk per pass */
void ckpt_init_geometry(void);
bool ckpt_live_start(void);                     /* false: not yet (area erase, page in flight) */
void ckpt_live_poll(void);
void ckpt_live_finish(void);                    /* wait for the save under way */
bool ckpt_live_busy(void);
bool ckpt_live_has_work(void);                  /* words to stage: the main loop must not wait */
void ckpt_prepare(void);                        /* erase the next checkpoint's area ahead */
void ftl_format(bool erase_all);
uint32_t ckpt_pages(void);                      /* area pages a checkpoint takes */
void sys_area_op(struct hal_flash_op *op, uint8_t kind, uint32_t area, uint32_t page,
                 uint32_t buffer);
#define N_CTR ((uint32_t)(sizeof(struct fw_counters) / 8))
void counters_put(volatile uint32_t *w);        /* SMART / FTL counters: 2 x N_CTR words */
void counters_get(const volatile uint32_t *w);

/* ftl_journal.c */
void jnl_init_geometry(void);
void jnl_reset(uint32_t area, uint32_t ckpt_pages, uint32_t kept_from);
void jnl_append(uint32_t lpn, uint32_t v);      /* a map change that is on flash */
void jnl_append_bad(uint32_t b);                /* a block gone bad for good */
void jnl_append_erase(uint32_t b, bool slc, bool band);    /* a block erased for writing */
void jnl_append_unband(uint32_t b);             /* a block left out of its band's reopening */
uint32_t jnl_commit(void);                      /* everything appended: its commit number */
bool jnl_durable(uint32_t id);
bool jnl_busy(void);                            /* a journal page or a live checkpoint
                                                 * is being programmed */
bool jnl_room(void);                            /* a commit needs no live checkpoint first */
void jnl_wait(uint32_t id);
void jnl_poll(void);
uint32_t jnl_replay(uint32_t area, uint32_t ckpt_pages, bool *erased);
void jnl_session(void);                         /* a page marks the drive in use */

#endif /* SSDLAB_FTL_H */
