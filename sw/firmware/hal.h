/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hal.h - what the firmware sees of the SoC (soc/ssdlab_soc.py). The firmware above this
 * header (admin command set, FTL) is hardware independent: on the SoC, hal_soc.c implements
 * it on the generated CSR header; in host unit tests, tests/sw/firmware's mock implements it.
 *
 * Everything is polled: the firmware is one loop (main.c) that serves the NVMe command
 * stream, the back-end request stream and the flash completion stream in turn.
 *
 * Buffer memory (BUF_BYTES, 64-bit words) is shared by the NVMe data DMA, the flash data
 * movers, the copy engine and the CPU. It is addressed in 4 KiB slots (slot s = bytes
 * s * 4096 .. s * 4096 + 4095):
 *   - fast-path command with tag t: slots t * HANDLE_SLOTS .. + HANDLE_SLOTS - 1 (the data
 *     of its Write has arrived there when hal_be_req_pop returns it; a Read's data must be
 *     there before hal_be_cpl_push);
 *   - firmware transfer buffer b (hal_xfer): slots (N_TAGS + b) * HANDLE_SLOTS ..;
 *   - slots FW_SLOT_FIRST .. BUF_SLOTS - 1: the firmware's own (write buffer, GC, map pages).
 */
#ifndef SSDLAB_FW_HAL_H
#define SSDLAB_FW_HAL_H

#include <stdbool.h>
#include <stdint.h>
/* enum flash_opcode, generated from spec/fw_streams.py into $(BUILD)/include. */
#include "ssdlab/fw_streams.h"

#define SLOT_BYTES      4096u

/* Build constants: hal_ident() reports the values of the running SoC. */
struct hal_ident {
    uint32_t n_channels;        /* flash channels (1..32) */
    uint32_t n_ways;            /* chip enables per channel (1..8) */
    uint32_t luns;              /* LUNs (dies) per chip enable (1..4; 0: an older SoC, 1) */
    uint32_t n_io_queues;       /* I/O queue pairs the front end has (1..64) */
    uint32_t mqes;              /* CAP.MQES: entries per queue - 1 (1..4095; 0: 4095) */
    uint32_t tag_width;         /* fast-path tags: 1 << tag_width */
    uint32_t max_transfer;      /* bytes per command (MDTS), = HANDLE_SLOTS * SLOT_BYTES */
    uint32_t lbads;             /* LBA size 2^lbads */
    uint32_t buf_slots;         /* buffer memory size in slots */
    uint32_t fw_slot_first;     /* the first slot the firmware owns */
    uint32_t clk_hz;            /* system clock */
    uint32_t git_hash;          /* first 8 hex digits of the build's commit */
    char     persona[32];       /* persona name (NUL-terminated) */
    /* the flash part of every die (the drive has one part type), as the persona gives it */
    uint32_t page_bytes, spare_bytes, pages_per_block, blocks_per_plane, planes;
    uint32_t onfi_mode;         /* SDR timing mode to run the bus at */
    uint32_t nvddr2_mode;       /* NV-DDR2 mode to switch to after bring-up, or NVDDR2_NONE */
    /* the persona's over-provisioning (per mille of raw capacity) and the part's P/E cycles;
     * 0: the firmware's defaults (ftl_config) */
    uint32_t op_permille, pe_cycles;
    /* bits per cell of the part (1..4; 0: an older SoC, 2) and the persona's SLC write
     * cache: policy (SLC_*) and its native footprint in per mille of the raw capacity (a
     * static cache's reserve; a dynamic cache's largest size) */
    uint32_t bits_per_cell, slc_policy, slc_permille;
    /* a second part type (mixed parts: the same row geometry, a smaller or equal page):
     * its page and spare bytes (0: one part type) and the targets carrying it, bit
     * t = way x n_channels + channel (the firmware's die mod n_channels x n_ways) */
    uint32_t part2_page_bytes, part2_spare_bytes, part2_mask_lo, part2_mask_hi;
    /* the back end's ECC (rtl/nand/nand_ecc.py): data bytes per codeword (0: no ECC: READ
     * and PROGRAM move bytes as they are), the parity's room after each (a page holds
     * page_bytes / ecc_data_bytes codewords back to back) and the bits it corrects per
     * codeword; the dies' read-retry levels (SET FEATURES 89h P1 = 0 .. retry_levels - 1;
     * 1: no read retry) */
    uint32_t ecc_data_bytes, ecc_room, ecc_t, retry_levels;
    /* die parity (the persona's parity.scheme die-raid5): dies per stripe (0: none) */
    uint32_t parity_stripe;
};
#define SLC_NONE    0u
#define SLC_STATIC  1u
#define SLC_DYNAMIC 2u
void hal_ident(struct hal_ident *id);

/* Free-running cycle counter of the system clock (for latencies and timeouts). */
uint64_t hal_cycles(void);

/* The firmware's wait (soc/fw_wait.py), the low-power idle of the main loop. hal_wait_arm()
 * at the start of a poll pass latches every status the loop reads; hal_wait(deadline) then
 * stalls the CPU until a stream towards the firmware is valid, a controller reset is pending,
 * a latched status has changed, hal_cycles() >= deadline (HAL_NO_DEADLINE: none), or at once
 * when the pass wrote a register since the arm (it did something, so the next pass may find
 * more: a pass that wrote none changed nothing outside the firmware); it returns the reason
 * (HAL_WAKE_* bits). */
#define HAL_NO_DEADLINE UINT64_MAX
#define HAL_WAKE_SOURCE 1u
#define HAL_WAKE_STATUS 2u
#define HAL_WAKE_DEADLINE 4u
#define HAL_WAKE_WROTE 8u
void hal_wait_arm(void);
uint32_t hal_wait(uint64_t deadline);
/* The same wait, but the deadline also waits until the hardware I/O path has had no command
 * for idle_cycles (0: a plain deadline). The hardware path's commands do not wake the
 * firmware: idle-time work asks for the host's idle time this way. hal_idle_since(): the
 * cycle the hardware path's current idle time began (about now while it works). */
uint32_t hal_wait_idle(uint64_t deadline, uint32_t idle_cycles);
uint64_t hal_idle_since(void);

/* Console (UART): one byte. */
void hal_putc(char c);

/* --- NVMe front end (rtl/nvme/nvme_controller.py, processor interface) ------------------- */

/* A command for the firmware: every admin command, and I/O commands other than Read,
 * Write and Flush. dw[] is the SQE, little endian dwords (dw[0] = CDW0). */
struct hal_cmd {
    uint16_t sqid;
    uint16_t sq_head;           /* the SQ head for this command's CQE */
    uint32_t dw[16];
};
bool hal_cmd_pop(struct hal_cmd *cmd);          /* false: none waiting */

/* Post a completion. status = the CQE Status Field (DW3 31:17): bits 7:0 SC, 10:8 SCT,
 * 14 DNR. Blocks until the front end takes it. */
void hal_cpl_push(uint16_t cqid, uint16_t sqid, uint16_t sq_head, uint16_t cid,
                  uint16_t status, uint32_t dw0);

/* Create (enable) or delete an I/O queue. A create, and a CQ delete, return when the front
 * end has done it. An SQ delete only starts: the front end aborts the SQ's unfetched entries
 * and waits for its commands in flight, which need the main loop to go on (block requests,
 * flash completions); hal_sq_config_busy() is true until the SQ is gone (a change of it wakes
 * hal_wait). Meanwhile the front end takes no other hal_sq_config or hal_cq_config.
 * nc: non-contiguous (PC=0): write the pages with hal_*q_page before the create. */
void hal_sq_config(uint16_t sqid, uint64_t base, uint16_t qsize, bool enable, bool nc,
                   uint16_t cqid);
bool hal_sq_config_busy(void);
void hal_cq_config(uint16_t cqid, uint64_t base, uint16_t qsize, uint16_t iv, bool ien,
                   bool enable, bool nc);
void hal_sq_page(uint16_t sqid, uint32_t index, uint64_t page_addr);
void hal_cq_page(uint16_t cqid, uint32_t index, uint64_t page_addr);

/* Move `length` bytes between the command's PRP1/PRP2 and firmware buffer `buf` (slot
 * (N_TAGS + buf) * HANDLE_SLOTS). to_host: buffer -> host. Blocks; returns the NVMe status
 * (0 success; a PRP error gives the front end's status, e.g. Invalid PRP Offset). */
uint16_t hal_xfer(uint32_t buf, uint64_t prp1, uint64_t prp2, uint32_t length, bool to_host);

/* Interrupts: per-vector coalescing disable, aggregation threshold (0's based) and time
 * (100 us units), as Set Features 08h/09h give them. */
void hal_ivc(uint16_t vector, bool cd);
void hal_aggregation(uint8_t thr, uint8_t time);

/* Namespace 1 size in LBAs: the fast path answers LBA Out of Range beyond it. */
void hal_ns_size(uint64_t lbas);

/* Abort: arm the slot for (sqid, cid); once the SQ has no unfetched entries (see
 * hal_sq_pending), hal_abort_hit() says whether the command was caught before fetch. */
void hal_abort_arm(uint16_t sqid, uint16_t cid);
void hal_abort_disarm(void);
bool hal_abort_hit(void);
uint64_t hal_sq_pending(void);  /* bit q: SQ q has entries not yet fetched */

/* Asynchronous error events the front end raised (invalid doorbell writes, an SQ whose
 * entries could not be read): info byte, and the SQ concerned (0xFFFF: none). */
bool hal_aer_pop(uint8_t *info, uint16_t *sqid);

/* A controller reset (CC.EN 1 -> 0) happened: the front end has dropped its queues and
 * stays disabled (the host's CC.EN = 1 waits) until the firmware has reset its state too and
 * acknowledged. Latched, so a reset is never missed however long the firmware was busy. */
bool hal_ctrl_reset_pending(void);
void hal_ctrl_reset_ack(void);

/* The firmware has failed (fw_panic): CSTS.CFS reads 1 until cleared here (the firmware's
 * restart after the host's controller reset). */
void hal_fatal(bool fatal);

/* The watchdog (soc/fw_watchdog.py): fires when the CPU runs `period` cycles without waiting
 * in hal_wait (0: off): CSTS.CFS and a CPU reset. The boot finds it fired and recovers. */
void hal_watchdog_setup(uint32_t period);
bool hal_watchdog_fired(void);
void hal_watchdog_clear(void);

/* Shutdown (CC.SHN): 0 none, 1 normal, 2 abrupt. CSTS.SHST reaches 10b (complete) only once
 * the firmware says done (map saved) and no fast-path command is in flight. Clear `done`
 * when hal_shutdown_request() returns to 0. */
uint8_t hal_shutdown_request(void);
void hal_shutdown_done(bool done);
bool hal_io_busy(void);         /* a fast-path command is in flight */

/* --- fast path: block requests from the front end ------------------------------------- */

struct hal_be_req {
    uint8_t  tag;
    uint8_t  opcode;            /* 00h Flush, 01h Write, 02h Read */
    uint16_t nlb;               /* 0's based */
    uint32_t nsid;
    uint64_t slba;
    uint16_t flags;             /* CDW12 31:16 (FUA bit 14) */
    uint16_t sqid, cid;         /* the command's: its error log entry names them */
};
bool hal_be_req_pop(struct hal_be_req *req);
void hal_be_cpl_push(uint8_t tag, uint16_t status);

/* --- the FTL's hardware read path (rtl/ftl/README.md) --------------------------------- */

/* Builds with it (soc/ftl_read_path.py) take whole-unit Reads whose units the map puts on
 * flash from the front end to flash READs and back with no firmware instruction; every other
 * request still comes through hal_be_req_pop. It reads `l2p[lpn]` from the firmware's RAM
 * and uses flash tags HW_READ_FTAG_BASE..255 (the firmware's: 0..HW_READ_FTAG_BASE - 1).
 * Builds without it: hal_hw_read_present() is false and the rest does nothing. */
#define HW_READ_FTAG_BASE 192u
bool hal_hw_read_present(void);
void hal_hw_read_setup(const uint32_t *l2p, bool enable);
/* Block `block` (die x blocks + block) is an SLC block (or native): before data is mapped
 * to it. */
void hal_hw_read_slc(uint32_t block, bool slc);
/* Returns once every lookup the engine began before the call has issued its READs (or gone
 * to the firmware): then no READ decoded from an older map word can still reach a die after
 * an ERASE pushed now. */
void hal_hw_read_fence(void);
bool hal_hw_read_idle(void);    /* no request in the engine and no READ outstanding */
struct hal_hw_read_counts {
    uint32_t reads, punts;              /* completed, given to the firmware untouched */
    uint32_t handbacks;                 /* given back after a failed READ (read again here) */
    uint64_t lbas;                      /* LBAs of the requests it completed */
    uint32_t corrected;                 /* its READs that passed with bits corrected */
    uint32_t max_bits;                  /* the most bits corrected in one of their codewords */
};
void hal_hw_read_counts(struct hal_hw_read_counts *c);
/* A READ of the engine that passes with at least `bits` corrected in a codeword names its
 * block (0: never); hal_hw_read_hint takes the latest one named (false: none waiting). */
void hal_hw_read_refresh(uint32_t bits);
bool hal_hw_read_hint(uint32_t *block);

/* --- buffer memory ------------------------------------------------------------------- */

/* The CPU's window on the buffer memory (uncached): byte `s * SLOT_BYTES + o` is
 * hal_buf()[s * SLOT_BYTES + o]. Word (32-bit) accesses are the fast ones. */
volatile uint8_t *hal_buf(void);

/* Copy engine: copy `bytes` (multiple of 8) from src to dst (byte addresses in buffer
 * memory, multiples of 8), or fill dst with the 64-bit `pattern`. Up to COPY_QUEUE jobs
 * queue; hal_copy_done() counts finished jobs since reset (wraps at 2^32). */
bool hal_copy(uint32_t dst, uint32_t src, uint32_t bytes);     /* false: queue full */
bool hal_fill(uint32_t dst, uint64_t pattern, uint32_t bytes);
bool hal_xor(uint32_t dst, uint32_t src, uint32_t bytes);      /* dst ^= src */
uint32_t hal_copy_done(void);

/* --- flash back end (rtl/nand/nand_backend.py) ---------------------------------------- */

/* One flash operation. Data of plane p moves at buffer memory byte address
 * ((buffer + p * plane_slots) mod 2^16) * SLOT_BYTES (plane_slots: hal_flash_setup), so a
 * single-plane op on plane 1 whose data is at slot s uses buffer = s - plane_slots. A READ
 * moves `length` bytes from `column` of the page; a PROGRAM writes `length` bytes from
 * `column`. Ops to one die run in order, to different dies in parallel. */
struct hal_flash_op {
    uint8_t  tag;               /* returned in the completion */
    uint8_t  op;                /* enum flash_opcode (ssdlab/fw_streams.h) */
    uint8_t  channel, way, lun;
    uint8_t  plane_mask;
    uint16_t block;             /* block within the LUN (plane in its low bits) */
    uint16_t page;
    uint16_t column;
    uint16_t length;
    uint16_t buffer;            /* slot */
    uint8_t  slc;               /* pseudo-SLC (ERASE, PROGRAM, READ of an SLC block): the
                                 * channel sends the DAh prefix before each plane's command */
    uint8_t  raw;               /* READ / PROGRAM without ECC: column and length in bytes of
                                 * the page register (else data bytes, whole codewords) */
};
bool hal_flash_push(const struct hal_flash_op *op);             /* false: queue full */

struct hal_flash_cpl {
    uint8_t tag;
    uint8_t status;             /* 70h status byte of a program or erase */
    bool    fail;               /* status bit 0: program / erase failed */
    bool    error;              /* refused op (bad channel, way, length, plane mask) */
    bool    timeout;            /* the die stayed busy past the busy timeout (hung): the op
                                 * was given up (fail set too), the die fenced in the back end
                                 * (every later op but RESET gets timeout at once) */
    uint8_t ecc_bits;           /* an ECC read: most bits corrected in one codeword */
    bool    ecc_fail;           /* an ECC read: a codeword beyond the code's correction */
};
bool hal_flash_pop(struct hal_flash_cpl *cpl);

/* Bus timing of SDR mode `mode` at the system clock, row geometry (log2 pages per block,
 * log2 blocks per LUN, log2 planes) and the plane stride of the data movers. */
void hal_flash_setup(uint32_t mode, uint32_t page_bits, uint32_t block_bits,
                     uint32_t plane_bits, uint32_t plane_slots);
void hal_flash_write_protect(bool on);
/* The channels' NV-DDR2 engines (on) or SDR engines (off); only while no flash op is queued
 * or running, after the dies were switched by SET FEATURES 01h. Builds without NV-DDR2
 * (hal_ident.nvddr2_mode == NVDDR2_NONE) ignore it. */
void hal_flash_nvddr2(bool on);
/* DQS (read-capture) delay calibration of every channel at once, reading die `way`'s ONFI
 * signature at each tap (rtl/nand/onfi_dqs_calibration); waits for the end. Returns the
 * channels that found an eye (bit c: channel c; all of them on a build whose PHY needs
 * none); `tap[c]` gets the tap loaded (NULL: not wanted). Only while the flash is idle. */
uint32_t hal_flash_dqs_calibrate(uint32_t way, uint32_t *tap);
#define NVDDR2_NONE 0xFFu

/* --- the NAND emulator's block table (soc/nand_emulation.py) ------------------------- */

/* Builds whose flash is the NAND emulator (cards without NAND chips): a lab's fault
 * injection into the emulated dies (admin C1h). hal_emu_pe_max(): the largest P/E count the
 * emulator holds (2^20 - 1); 0 on any other build, where the rest does nothing and returns
 * false. A block is numbered within its LUN, the plane in its low bits (hal_flash_op). */
uint32_t hal_emu_pe_max(void);
/* Mark the block bad (grown): its every program and erase FAILs from now on; its pages still
 * read. True once done; false if the emulator refused it (a block the build does not have). */
bool hal_emu_bad_block(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block);
/* Set the block's P/E count (0 .. hal_emu_pe_max()); the same return. */
bool hal_emu_set_pe(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block, uint32_t pe);
/* Every emulated block's P/E limit (0 .. hal_emu_pe_max(); 0: none): an erase that takes a
 * block's count past it FAILs and the block goes bad. */
void hal_emu_pe_limit(uint32_t limit);

#endif /* SSDLAB_FW_HAL_H */
