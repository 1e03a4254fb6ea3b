/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * flash.h - the flash layer (flash.c) as its clients see it: op tags, each carrying the
 * completion function and context its client gave, per-die op queues, synchronous ops and
 * bring-up. flash.c knows nothing of its clients: a completion runs the op's function.
 */
#ifndef SSDLAB_FLASH_H
#define SSDLAB_FLASH_H

#include <stdbool.h>
#include <stdint.h>

#include "hal.h"

/* An op's completion, called from flash_poll with the context (a, b) given to flash_tag_get;
 * fail: the op failed (FAIL status) or the back end refused it. The tag is freed when the
 * function returns. It must not push ops (flash_poll does not recurse into the push paths). */
typedef void (*flash_done_fn)(uint32_t a, uint32_t b, bool fail);

/* A free tag for an op that completes through done(a, b, fail); waits (polling completions)
 * while all 256 are in use. done NULL is flash.c's own: flash_sync and the batch wait. */
uint8_t flash_tag_get(flash_done_fn done, uint32_t a, uint32_t b);
void flash_push(struct hal_flash_op *op);      /* op->tag from flash_tag_get */
void flash_poll(void);                          /* run every waiting completion */
/* flash_poll for a loop that waits on the flash: when it found nothing, the CPU waits
 * (hal_wait) until the hardware shows something new, as the main loop does */
void flash_poll_wait(void);
struct hal_flash_cpl flash_sync(struct hal_flash_op *op);
void flash_sync_batch(struct hal_flash_op *ops, struct hal_flash_cpl *cpl, uint32_t n);
void flash_batch_push(struct hal_flash_op *ops, uint32_t n);     /* n <= 128 */
void flash_batch_wait(const struct hal_flash_op *ops, struct hal_flash_cpl *cpl, uint32_t n);
void flash_op_addr(struct hal_flash_op *op, uint32_t die);
/* The page a READ read (completed as *c) is erased: flash.c; scratch: slots with room for a
 * page and its spare */
bool flash_page_erased(const struct hal_flash_op *read, const struct hal_flash_cpl *c,
                       uint32_t scratch);
/* While on (the boot's search for the directory, checkpoints and the journal's end), a read
 * the ECC fails is not counted (vendor log ecc_failed_reads): it may be an erased page;
 * flash_page_erased counts the ones it finds programmed. */
void flash_probe(bool on);
bool flash_bringup(void);
uint32_t flash_inflight(void);                  /* tags in use */

#endif /* SSDLAB_FLASH_H */
