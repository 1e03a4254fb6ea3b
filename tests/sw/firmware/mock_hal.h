/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mock_hal.h - a host implementation of sw/firmware/hal.h for unit tests: buffer memory as
 * an array, a flash array with ONFI-like rules (erase before program, pages of a block in
 * order, erased pages read FFh, factory bad-block markers, injectable program / erase
 * failures; ops queue per die and complete later, in order per die), and an NVMe side the
 * test drives (commands, block requests, their completions, host memory for PRPs).
 */
#ifndef SSDLAB_MOCK_HAL_H
#define SSDLAB_MOCK_HAL_H

#include <stdbool.h>
#include <stdint.h>

#include "hal.h"

struct mock_cfg {
    uint32_t n_channels, n_ways, planes, page_bytes, spare_bytes, pages_per_block;
    uint32_t blocks_per_plane, tag_width, max_transfer, lbads, buf_slots, n_io_queues;
    uint32_t mqes;              /* CAP.MQES the front end states (0: 4095) */
    uint32_t fw_bufs;           /* firmware transfer buffers after the tags' slots */
    uint32_t flash_queue;       /* ops the back end accepts before hal_flash_push says full */
    bool     onfi_ok;           /* parameter page carries the "ONFI" signature */
    uint32_t op_permille, pe_cycles;    /* the persona's, as the SoC states them (0: none) */
    uint32_t nvddr2_mode;       /* the build's NV-DDR2 mode; 0 here means NVDDR2_NONE */
    bool     nvddr2_broken;     /* parameter pages read garbage once the NV-DDR2 engines run */
    bool     dqs_cal_fail;      /* the DQS calibration finds no eye on channel 0 */
    uint32_t luns;              /* LUNs per chip enable (0: 1) */
    uint32_t param_luns;        /* LUNs the parameter page states (0: luns) */
    uint32_t bits_per_cell;     /* the part's (0: 2) */
    uint32_t slc_policy, slc_permille;  /* the persona's SLC cache (hal.h SLC_*) */
    /* a second part type (0: none) on the targets of part2_mask (bit way x n_channels +
     * channel), its page and spare bytes */
    uint32_t part2_page_bytes, part2_spare_bytes;
    uint64_t part2_mask;
    /* an ECC in the back end (0: none): data bytes per codeword, the parity's room after each,
     * bits corrected. The mock keeps an ECC page's data where a raw page's is and fills its
     * spare with parity (so a programmed block's bad-block mark is no longer FFh), and an
     * ECC read of an erased page fails the code, as the RTL's does */
    uint32_t ecc_data_bytes, ecc_room, ecc_t;
    /* the dies' read-retry levels (0: 1, none); SET FEATURES 89h sets a target's (every LUN
     * of it), a level past them fails. With an ECC, a programmed page passes only at the
     * level mock_read_shift gave it (0 unless given; 0xFF: none) */
    uint32_t retry_levels;
    uint32_t parity_stripe;     /* die parity: dies per stripe (0: none) */
    /* the flash is the NAND emulator (soc/nand_emulation.py): hal_emu_* reach its block
     * table (grown bad blocks, P/E counts, the P/E limit); else they find none */
    bool     emulator;
};

struct mock_cpl { uint16_t cqid, sqid, sq_head, cid, status; uint32_t dw0; };

struct mock_stats {
    uint64_t programs, erases, reads, copies, fills;
    uint64_t violations;        /* program of a non-erased page / out of order, op to bad */
    uint64_t set_features, resets, read_params;
    uint64_t retry_sets;        /* SET FEATURES 89h */
    uint64_t retry_level_reads; /* ECC reads of programmed pages at a level other than 0 */
    uint32_t timing_mode;       /* last hal_flash_setup mode */
    uint32_t features_p1;       /* P1 of the last SET FEATURES */
    bool     nvddr2;            /* hal_flash_nvddr2's state */
    uint64_t nvddr2_switches;   /* hal_flash_nvddr2 calls */
    uint64_t dqs_calibrations;  /* hal_flash_dqs_calibrate calls */
    uint32_t max_die_queue;     /* most ops queued to one die at once */
    uint64_t slc_erases, slc_programs, slc_reads;   /* ops in SLC mode */
    uint64_t slc_violations;    /* an op whose mode is not its block's (the die's slc-mode) */
    bool     fatal;             /* hal_fatal's state (CSTS.CFS) */
    uint64_t queue_violations;  /* a queue configured while an SQ delete drains (the front
                                 * end takes none then: the firmware would hang) */
    uint64_t timeouts;          /* ops given up on a hung die (mock_die_hang) */
    uint64_t emu_calls;         /* hal_emu_bad_block / hal_emu_set_pe calls */
    uint64_t emu_ops;           /* the emulator's backdoor operations done (not refused) */
    uint32_t emu_pe_limit;      /* its P/E limit (hal_emu_pe_limit; a power cycle clears it,
                                 * as the SoC's reset does the register) */
};

extern struct mock_stats mock_stats;
/* the watchdog: the firmware's period; a test sets `fired` as the hardware does on expiry */
struct mock_wdt { uint32_t period; bool fired; };
extern struct mock_wdt mock_wdt;
extern uint8_t *mock_host;      /* host memory: PRP address a = mock_host[a] */
#define MOCK_HOST_BYTES (8u << 20)

void mock_init(const struct mock_cfg *cfg);
void mock_power_cycle(void);    /* the flash keeps its contents; the rest is reset */
void mock_free(void);
uint32_t mock_dies(void);

/* flash faults */
void mock_factory_bad(uint32_t die, uint32_t lun_block);       /* marker 00h, never erases */
void mock_fail_next_program(uint32_t die, uint32_t lun_block);
void mock_fail_next_erase(uint32_t die, uint32_t lun_block);
void mock_die_fail(uint32_t die);   /* for good: programs and erases FAIL, reads are noise */
void mock_die_hang(uint32_t die);   /* for good: every op given up (timeout), no data moved */
void mock_clear_faults(void);                   /* every armed failure disarmed */
bool mock_block_programmed(uint32_t die, uint32_t lun_block);
/* the emulator's block table: grown bad (its programs and erases FAIL), and its P/E count */
bool mock_block_bad(uint32_t die, uint32_t lun_block);
uint32_t mock_block_pe(uint32_t die, uint32_t lun_block);
void mock_corrupt(uint32_t die, uint32_t lun_block, uint32_t page, uint32_t byte);
/* an ECC read of the page passes only at read-retry level `level` (0xFF: at none) */
void mock_read_shift(uint32_t die, uint32_t lun_block, uint32_t page, uint32_t level);
uint32_t mock_retry_level(uint32_t die);
/* every programmed page passes only at `level` (a bake: the data the drive holds aged) */
void mock_read_shift_all(uint32_t level);          /* the die's read-retry level now */

/* Power cuts: every flash op the mock runs and every block-request completion it posts is
 * an event; armed at event n, that event is cut: a PROGRAM leaves its pages garbage (read
 * back as neither the data nor erased), an ERASE leaves the block's pages garbage, a
 * completion is never posted; then the mock longjmps to `env` (the test power-cycles).
 * mock_cut_kind: the cut event (MOCK_CUT_*), die, block and what the firmware was doing. */
#include <setjmp.h>
enum { MOCK_CUT_NONE, MOCK_CUT_PROGRAM, MOCK_CUT_ERASE, MOCK_CUT_READ, MOCK_CUT_CPL };
struct mock_cut { uint32_t kind, die, lun_block; };
void mock_cut_at(uint64_t event, jmp_buf *env);      /* event 0: disarmed */
/* ... or armed at the k-th event after the firmware pushes an op `pick` chooses (the window
 * between an op's issue and its completion); pick NULL: disarmed */
void mock_cut_after_push(bool (*pick)(const struct hal_flash_op *op), uint32_t k,
                         jmp_buf *env);
uint64_t mock_events(void);
extern struct mock_cut mock_cut_info;

/* NVMe side */
void mock_push_cmd(uint16_t sqid, const uint32_t dw[16]);
bool mock_pop_cpl(struct mock_cpl *c);
/* a block request; the command it stands for is SQ MOCK_BE_SQID(tag), CID MOCK_BE_CID(tag) */
void mock_push_be(uint8_t tag, uint8_t opcode, uint64_t slba, uint16_t nlb, uint16_t flags,
                  uint32_t nsid);
#define MOCK_BE_SQID(tag) ((uint16_t)(1u + ((tag) & 3u)))
#define MOCK_BE_CID(tag)  ((uint16_t)(0x4000u | (tag)))
bool mock_pop_be_cpl(uint8_t *tag, uint16_t *status);
void mock_set_enabled(bool en);
void mock_set_shutdown(uint8_t shn);
bool mock_shutdown_done(void);
void mock_set_sq_pending(uint64_t bits, uint32_t clear_after_polls);
void mock_set_abort_hit(bool hit);
void mock_push_aer(uint8_t info, uint16_t sqid);  /* sqid 0xFFFF: none */

/* what the firmware told the front end */
struct mock_q { bool enabled, nc; uint64_t base; uint16_t qsize, cqid, iv; bool ien; };
extern struct mock_q mock_sq[65], mock_cq[65];
extern uint64_t mock_sq_pages[65][8], mock_cq_pages[65][8];
extern uint8_t mock_agg_thr, mock_agg_time;
extern bool mock_ivc_cd[65];
extern uint64_t mock_ns_lbas;
extern uint16_t mock_abort_sqid, mock_abort_cid;
extern bool mock_abort_armed;

#endif /* SSDLAB_MOCK_HAL_H */
