/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * fw.h - the firmware's internal interfaces: NVMe constants (generated from spec/nvme.py), the
 * shared state of the admin side and the FTL, and the small freestanding helpers (no libc on
 * the target).
 */
#ifndef SSDLAB_FW_H
#define SSDLAB_FW_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#include "hal.h"
/* NVMe opcodes, identifiers and status field values (NVME_SC_*, DNR included where the
 * error is permanent), generated from spec/nvme.py into $(BUILD)/include. */
#include "ssdlab/nvme_spec.h"

/* --- freestanding helpers (util.c) ------------------------------------------------------- */
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void fw_puts(const char *s);
void fw_put_hex(uint32_t v);
void fw_panic(const char *why) __attribute__((noreturn));
void fw_recover(void);
/* the watchdog's period (soc/fw_watchdog.py): running cycles without a wait. The longest
 * loop that does not wait is a die's RESET timeout at bring-up (10 M cycles). */
#define FW_WATCHDOG_CYCLES (1u << 26)
/* The board DDR under the NAND emulators (dram_init.c): true when ready or none. */
bool dram_init(void);
/* Put `size` bytes of `v` little endian at p (Identify and log page fields). */
void put_le(uint8_t *p, unsigned size, uint64_t v);
void put_str(uint8_t *p, unsigned size, const char *s);   /* ASCII, space padded */
/* CPU word copies between RAM and buffer memory (control structures only, never data). */
void buf_write(uint32_t byte_addr, const void *src, uint32_t bytes);
void buf_read(void *dst, uint32_t byte_addr, uint32_t bytes);
uint32_t buf_read32(uint32_t byte_addr);
void buf_write32(uint32_t byte_addr, uint32_t v);
/* Copy engine with retry on a full queue; copy_wait() waits for every job issued so far. */
void copy_start(uint32_t dst, uint32_t src, uint32_t bytes);
void fill_start(uint32_t dst, uint64_t pattern, uint32_t bytes);
void xor_start(uint32_t dst, uint32_t src, uint32_t bytes);    /* dst ^= src */
uint32_t copy_issued(void);
bool copy_reached(uint32_t target);
void copy_wait(void);
void copy_reset(void);
/* Bump allocator over main RAM (falls back to firmware-owned buffer memory). */
void *fw_alloc(uint32_t bytes);
void fw_alloc_reset(void);
uint32_t fw_alloc_used_ram(void);
uint32_t fw_alloc_used_buf(void);

/* --- controller-wide state (main.c) -------------------------------------------------------- */
struct fw_geom {
    struct hal_ident id;
    uint32_t n_tags, handle_slots;
    uint32_t xfer_addr;         /* byte address of firmware transfer buffer 0 */
    uint32_t mqes;              /* largest QSIZE accepted (0's based) */
};
extern struct fw_geom G;

/* --- the main loop (main.c): tests step it -------------------------------------------- */
bool fw_init(void);                             /* boot; false: flash bring-up failed */
void fw_poll(void);                             /* one iteration of the main loop */
uint64_t fw_power_on_seconds(void);             /* ftl_ckpt.c */

/* --- admin side (admin.c, features.c, log.c, queues.c) -------------------------------------- */
void admin_reset(void);                         /* controller reset: defaults */
void admin_dispatch(const struct hal_cmd *c);   /* admin and firmware I/O commands */
void admin_complete(const struct hal_cmd *c, uint16_t status, uint32_t dw0);
uint16_t queue_cqid_of(uint16_t sqid);
void queues_reset(void);
/* Create / Delete I/O SQ / CQ: false for any other command. Completes it, or holds it (a
 * Delete I/O SQ until the front end has drained the SQ; queue commands behind one). */
bool queues_admin(const struct hal_cmd *c);
void queues_poll(void);                 /* main loop: held queue commands */
bool queues_hold_full(void);            /* the main loop takes no command meanwhile */
bool queues_any_io(void);
void features_reset(void);
uint16_t features_get(const struct hal_cmd *c, uint32_t *dw0);
uint16_t features_set(const struct hal_cmd *c, uint32_t *dw0);
uint32_t features_nq(void);                     /* Number of Queues value (0's based) */
bool features_vwc(void);                        /* volatile write cache enabled */
void log_reset(void);
/* An error log entry; lba: the first LBA in error (0: none). An I/O command's entry has
 * SQID and CID FFFFh: the back end's requests carry neither (rtl/nvme). */
void log_error(uint16_t sqid, uint16_t cid, uint16_t status, uint32_t nsid, uint64_t lba);
uint16_t log_get_page(const struct hal_cmd *c);
uint16_t log_aer_request(const struct hal_cmd *c);  /* 0xFFFF: held */
void log_aer_event(uint8_t type, uint8_t info, uint8_t lid);
void log_aer_error(uint8_t info, uint16_t sqid);
void log_aer_poll(void);
void log_spare_poll(void);                      /* spare below threshold: AER */
uint16_t identify(const struct hal_cmd *c);
uint16_t io_dsm(const struct hal_cmd *c);
uint16_t io_write_zeroes(const struct hal_cmd *c);
uint16_t admin_format(const struct hal_cmd *c);
#define AER_HELD 0xFFFFu

/* --- SMART and FTL counters, saved in the checkpoint --------------------------------------- */
struct fw_counters {
    uint64_t lbas_read, lbas_written;           /* host data, in LBAs */
    uint64_t host_reads, host_writes;           /* host read / write commands */
    uint64_t host_units_written;                /* 4 KiB units the host wrote (partial: 1) */
    uint64_t nand_units_written;                /* units programmed (GC and padding included) */
    uint64_t gc_units_moved;
    uint64_t erases;
    uint64_t media_errors;
    uint64_t power_cycles;
    uint64_t power_on_seconds;
    uint64_t unsafe_shutdowns;
    uint64_t ckpt_saves;
    uint64_t pending_reuse;                     /* emptied blocks erased before a checkpoint */
    uint64_t ckpt_units_written;                /* units programmed by checkpoints */
    uint64_t idle_gc_blocks;                    /* blocks reclaimed by idle-time GC */
    uint64_t slc_units_written;                 /* units programmed into the SLC cache */
    uint64_t slc_blocks_folded;                 /* SLC blocks emptied into native blocks */
    uint64_t slc_units_folded;                  /* units those folds moved */
    uint64_t jnl_pages;                         /* map journal pages programmed */
    uint64_t jnl_releases;                      /* GC's emptied blocks freed by a commit */
    uint64_t gc_paced_pages;                    /* victim pages moved paced by host writes */
    uint64_t gc_fg_blocks;                      /* victims moved whole before a write */
    uint64_t watchdog_resets;                   /* boots the watchdog caused */
    uint64_t ecc_corrected_reads;               /* flash reads whose ECC corrected bits */
    uint64_t ecc_failed_reads;                  /* flash reads beyond the ECC's correction */
    uint64_t ecc_max_bits;                      /* most bits corrected in one codeword */
    uint64_t read_retries;                      /* reads again at a read-retry level */
    uint64_t retry_recovered;                   /* failed reads a read retry recovered */
    uint64_t refreshed_blocks;                  /* blocks whose data moved (drifting cells) */
    uint64_t units_lost;                        /* units GC could not read, or on a failed
                                                 * die (MAP_UNC) */
    uint64_t dead_dies;                         /* dies taken out of service (ftl_die.c) */
    uint64_t parity_rebuilt;                    /* units rebuilt from die parity */
    uint64_t parity_failed;                     /* rebuilds that could not be done */
    uint64_t flash_timeouts;                    /* flash ops given up: a hung die (its
                                                 * R/B# stuck busy past the timeout) */
    uint64_t sys_moves;                         /* the system areas moved off a failed
                                                 * die (sys_area_move) */
    uint64_t ckpt_live_saves;                   /* checkpoints written beside the write
                                                 * buffer (the journal's area full) */
    uint64_t jnl_full_waits;                    /* main-loop passes that waited for a
                                                 * commit: the journal's RAM list was
                                                 * nearly full (a live save under way) */
};
extern struct fw_counters C;

#endif /* SSDLAB_FW_H */
