/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hal_soc.c - hal.h on the SoC (soc/ssdlab_soc.py): LiteX's generated csr.h for the plain
 * registers, soc/fw_ports.py's generated fw_ports.h for the packed stream ports.
 *
 * Every stream port is moved through the functions fw_ports.h generates from the layouts in
 * spec/fw_streams.py: a port towards the firmware is read with fw_<port>_pop (valid? read
 * the status words, unpack, pop); a port from the firmware is written with fw_<port>_push
 * (wait until the previous beat was taken, pack, write the storage words, push). No field's
 * bit position is written here. Multi-word LiteX CSRs hold their most significant word
 * first; the stream ports' words are ours, least significant first.
 */

#include <stdint.h>

#define CSR_ACCESSORS_DEFINED
static inline void csr_write_simple(unsigned long v, unsigned long a)
{
    *(volatile uint32_t *)a = (uint32_t)v;
}
static inline unsigned long csr_read_simple(unsigned long a)
{
    return *(volatile uint32_t *)a;
}

#include <generated/csr.h>
#include <generated/fw_ports.h>
#include <generated/mem.h>
#include <generated/soc.h>

#include "hal.h"

#define BUF_WINDOW 0x90000000u

static inline uint32_t rd(unsigned long a) { return *(volatile uint32_t *)a; }

/* push, then wait until the front end has taken the beat (config writes take effect then) */
#define PUSH_SYNC(port, s) do { fw_##port##_push(s); while (fw_##port##_busy()) ; } while (0)

/* a LiteX CSR of n 32-bit words, most significant first */
static uint64_t csr_wide(unsigned long addr, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v = (v << 32) | rd(addr + 4 * i);
    return v;
}

/* --- identity, time, console ------------------------------------------------------------- */

void hal_ident(struct hal_ident *id)
{
    id->n_channels = ssdlab_ident_n_channels_read();
    id->n_ways = ssdlab_ident_n_ways_read();
    id->luns = ssdlab_ident_luns_read();
    id->n_io_queues = ssdlab_ident_n_io_queues_read();
    id->tag_width = ssdlab_ident_tag_width_read();
    id->max_transfer = ssdlab_ident_max_transfer_read();
    id->mqes = ssdlab_ident_mqes_read();
    id->lbads = ssdlab_ident_lbads_read();
    id->buf_slots = ssdlab_ident_buf_slots_read();
    id->fw_slot_first = ssdlab_ident_fw_slot_first_read();
    id->clk_hz = ssdlab_ident_clk_hz_read();
    id->git_hash = ssdlab_ident_git_hash_read();
    id->page_bytes = ssdlab_ident_page_bytes_read();
    id->spare_bytes = ssdlab_ident_spare_bytes_read();
    id->pages_per_block = ssdlab_ident_pages_per_block_read();
    id->blocks_per_plane = ssdlab_ident_blocks_per_plane_read();
    id->planes = ssdlab_ident_planes_read();
    id->onfi_mode = ssdlab_ident_onfi_mode_read();
    id->nvddr2_mode = ssdlab_ident_nvddr2_mode_read();
    id->op_permille = ssdlab_ident_op_permille_read();
    id->pe_cycles = ssdlab_ident_pe_cycles_read();
    id->bits_per_cell = ssdlab_ident_bits_per_cell_read();
    id->slc_policy = ssdlab_ident_slc_policy_read();
    id->slc_permille = ssdlab_ident_slc_permille_read();
    id->part2_page_bytes = ssdlab_ident_part2_page_bytes_read();
    id->part2_spare_bytes = ssdlab_ident_part2_spare_bytes_read();
    id->part2_mask_lo = ssdlab_ident_part2_mask_lo_read();
    id->part2_mask_hi = ssdlab_ident_part2_mask_hi_read();
    id->ecc_data_bytes = ssdlab_ident_ecc_data_bytes_read();
    id->ecc_room = ssdlab_ident_ecc_room_read();
    id->ecc_t = ssdlab_ident_ecc_t_read();
    id->retry_levels = ssdlab_ident_retry_levels_read();
    id->parity_stripe = ssdlab_ident_parity_stripe_read();
    for (unsigned i = 0; i < 8; i++) {
        uint32_t w = rd(CSR_SSDLAB_IDENT_PERSONA0_ADDR + 4 * i);
        for (unsigned b = 0; b < 4; b++)
            id->persona[4 * i + b] = (char)(w >> (8 * b));
    }
    id->persona[31] = 0;
}

/* soc/fw_wait.py's registers (word offsets) */
#define FW_WAIT_REG(n) (*(volatile uint32_t *)(FW_WAIT_BASE + 4 * (n)))

/* timer0's uptime through FwWait: reading the time is no register write, so it does not
 * count as work done in a poll pass */
uint64_t hal_cycles(void)
{
    uint32_t lo = FW_WAIT_REG(4);       /* latches the high word */
    return ((uint64_t)FW_WAIT_REG(5) << 32) | lo;
}

void hal_wait_arm(void) { FW_WAIT_REG(2) = 1; }

uint32_t hal_wait_idle(uint64_t deadline, uint32_t idle_cycles)
{
    static uint64_t written = HAL_NO_DEADLINE;      /* FwWait's reset values */
    static uint32_t idle_written;
    if (deadline != written) {
        FW_WAIT_REG(0) = (uint32_t)deadline;
        FW_WAIT_REG(1) = (uint32_t)(deadline >> 32);
        written = deadline;
    }
    if (idle_cycles != idle_written) {
        FW_WAIT_REG(6) = idle_cycles;
        idle_written = idle_cycles;
    }
    return FW_WAIT_REG(3);
}

uint32_t hal_wait(uint64_t deadline) { return hal_wait_idle(deadline, 0); }

uint64_t hal_idle_since(void)
{
    uint32_t lo = FW_WAIT_REG(7);       /* latches the high word */
    return ((uint64_t)FW_WAIT_REG(8) << 32) | lo;
}

void hal_putc(char c)
{
    while (uart_txfull_read())
        ;
    uart_rxtx_write((unsigned char)c);
}

/* --- NVMe front end ---------------------------------------------------------------------- */

bool hal_cmd_pop(struct hal_cmd *cmd)
{
    struct fw_cmd c;
    if (!fw_cmd_pop(&c))
        return false;
    cmd->sqid = c.sqid;
    cmd->sq_head = c.sq_head;
    for (unsigned i = 0; i < 16; i++)
        cmd->dw[i] = c.sqe[i];
    return true;
}

void hal_cpl_push(uint16_t cqid, uint16_t sqid, uint16_t sq_head, uint16_t cid,
                  uint16_t status, uint32_t dw0)
{
    struct fw_cpl c = {.cqid = cqid, .sqid = sqid, .sq_head = sq_head, .cid = cid,
                       .status = status, .dw0 = dw0};
    PUSH_SYNC(cpl, &c);
}

void hal_sq_config(uint16_t sqid, uint64_t base, uint16_t qsize, bool enable, bool nc,
                   uint16_t cqid)
{
    struct fw_sqcfg c = {.sqid = sqid, .base = base, .qsize = qsize, .enable = enable,
                         .nc = nc, .cqid = cqid};
    if (enable)
        PUSH_SYNC(sqcfg, &c);
    else
        fw_sqcfg_push(&c);          /* a delete handshakes once the SQ is gone */
}

bool hal_sq_config_busy(void) { return fw_sqcfg_busy() != 0; }

void hal_cq_config(uint16_t cqid, uint64_t base, uint16_t qsize, uint16_t iv, bool ien,
                   bool enable, bool nc)
{
    struct fw_cqcfg c = {.cqid = cqid, .base = base, .qsize = qsize, .iv = iv, .ien = ien,
                         .enable = enable, .nc = nc};
    PUSH_SYNC(cqcfg, &c);
}

/* page fields hold address >> 12 */
void hal_sq_page(uint16_t sqid, uint32_t index, uint64_t page_addr)
{
    struct fw_sqpage c = {.sqid = sqid, .index = (uint8_t)index, .page = page_addr >> 12};
    PUSH_SYNC(sqpage, &c);
}

void hal_cq_page(uint16_t cqid, uint32_t index, uint64_t page_addr)
{
    struct fw_cqpage c = {.cqid = cqid, .index = (uint8_t)index, .page = page_addr >> 12};
    PUSH_SYNC(cqpage, &c);
}

uint16_t hal_xfer(uint32_t buf, uint64_t prp1, uint64_t prp2, uint32_t length, bool to_host)
{
    struct fw_xfer x = {.buf = (uint8_t)buf, .prp1 = prp1, .prp2 = prp2, .length = length,
                        .to_host = to_host};
    struct fw_xfercpl c;
    fw_xfer_push(&x);
    while (!fw_xfercpl_pop(&c))
        ;
    return c.status;
}

void hal_ivc(uint16_t vector, bool cd)
{
    struct fw_ivc c = {.vector = vector, .cd = cd};
    PUSH_SYNC(ivc, &c);
}

void hal_aggregation(uint8_t thr, uint8_t time)
{
    fw_agg_thr_write(thr);
    fw_agg_time_write(time);
}

void hal_ns_size(uint64_t lbas) { fw_ns_size_write(lbas); }

void hal_abort_arm(uint16_t sqid, uint16_t cid)
{
    fw_abort_sqid_write(sqid);
    fw_abort_cid_write(cid);
    fw_abort_arm_write(1);
}

void hal_abort_disarm(void) { fw_abort_arm_write(0); }
bool hal_abort_hit(void) { return fw_abort_hit_read() != 0; }
uint64_t hal_sq_pending(void) { return csr_wide(CSR_FW_SQ_PENDING_ADDR, CSR_FW_SQ_PENDING_SIZE); }

bool hal_aer_pop(uint8_t *info, uint16_t *sqid)
{
    struct fw_aer a;
    if (!fw_aer_pop(&a))
        return false;
    *info = a.info;
    *sqid = a.sqid;
    return true;
}

bool hal_ctrl_reset_pending(void) { return fw_reset_pending_read() != 0; }
void hal_ctrl_reset_ack(void) { fw_reset_ack_write(1); }
void hal_fatal(bool fatal) { fw_fatal_write(fatal); }
void hal_watchdog_setup(uint32_t period) { fw_watchdog_period_write(period); }
bool hal_watchdog_fired(void) { return fw_watchdog_fired_read() != 0; }
void hal_watchdog_clear(void) { fw_watchdog_clear_write(1); }
bool hal_io_busy(void) { return fw_io_busy_read() != 0; }
uint8_t hal_shutdown_request(void) { return (uint8_t)fw_shn_read(); }
void hal_shutdown_done(bool done) { fw_shn_done_write(done); }

/* --- fast path --------------------------------------------------------------------------- */

bool hal_be_req_pop(struct hal_be_req *req)
{
    struct fw_bereq b;
    if (!fw_bereq_pop(&b))
        return false;
    req->tag = b.tag;
    req->opcode = b.opcode;
    req->nsid = b.nsid;
    req->slba = b.slba;
    req->nlb = b.nlb;
    req->flags = b.flags;
    req->sqid = b.sqid;
    req->cid = b.cid;
    return true;
}

void hal_be_cpl_push(uint8_t tag, uint16_t status)
{
    struct fw_becpl c = {.tag = tag, .status = status};
    fw_becpl_push(&c);
}

/* --- buffer memory ----------------------------------------------------------------------- */

volatile uint8_t *hal_buf(void) { return (volatile uint8_t *)BUF_WINDOW; }

/* One job of the copy engine (soc/buffer_copy.py): every field is written for every job (the
 * CSRs keep their values), so a copy or fill never inherits the xor flag of the job before. */
static bool copy_job(uint32_t dst, uint32_t src, uint64_t pattern, uint32_t bytes, bool fill,
                     bool do_xor)
{
    if (!bufcopy_room_read())
        return false;
    bufcopy_dst_write(dst);
    bufcopy_src_write(src);
    bufcopy_bytes_write(bytes);
    bufcopy_pattern_write(pattern);
    bufcopy_fill_write(fill);
    bufcopy_xor_write(do_xor);
    bufcopy_push_write(1);
    return true;
}

bool hal_copy(uint32_t dst, uint32_t src, uint32_t bytes)
{
    return copy_job(dst, src, 0, bytes, false, false);
}

bool hal_fill(uint32_t dst, uint64_t pattern, uint32_t bytes)
{
    return copy_job(dst, 0, pattern, bytes, true, false);
}

/* dst ^= src in place (die parity); src and dst must not overlap. */
bool hal_xor(uint32_t dst, uint32_t src, uint32_t bytes)
{
    return copy_job(dst, src, 0, bytes, false, true);
}

uint32_t hal_copy_done(void) { return bufcopy_done_read(); }

/* --- flash ------------------------------------------------------------------------------- */

bool hal_flash_push(const struct hal_flash_op *op)
{
    struct fw_fop f = {.tag = op->tag, .op = op->op, .way = op->way, .lun = op->lun,
                       .plane_mask = op->plane_mask, .block = op->block, .page = op->page,
                       .column = op->column, .length = op->length, .buffer = op->buffer,
                       .slc = op->slc, .raw = op->raw, .channel = op->channel};
    if (fw_fop_busy())
        return false;
    fw_fop_push(&f);
    return true;
}

bool hal_flash_pop(struct hal_flash_cpl *cpl)
{
    struct fw_fcpl c;
    if (!fw_fcpl_pop(&c))
        return false;
    cpl->tag = c.tag;
    cpl->status = c.status;
    cpl->fail = c.fail != 0;
    cpl->error = c.error != 0;
    cpl->timeout = c.timeout != 0;
    cpl->ecc_bits = c.ecc_bits;
    cpl->ecc_fail = c.ecc_fail != 0;
    return true;
}

void hal_flash_setup(uint32_t mode, uint32_t page_bits, uint32_t block_bits,
                     uint32_t plane_bits, uint32_t plane_slots)
{
    /* geometry register: page_bits[3:0], block_bits[8:4], plane_bits[10:9] */
    fw_geometry_write((page_bits & 0xF) | ((block_bits & 0x1F) << 4) | ((plane_bits & 3) << 9));
    fw_plane_slots_write(plane_slots);
    fw_timing_fast_write(mode != 0);
}

void hal_flash_write_protect(bool on) { fw_write_protect_write(on); }

void hal_flash_nvddr2(bool on)
{
#ifdef CSR_FW_NVDDR2_ADDR
    fw_nvddr2_write(on);
#else
    (void)on;
#endif
}

uint32_t hal_flash_dqs_calibrate(uint32_t way, uint32_t *tap)
{
    uint32_t n = ssdlab_ident_n_channels_read();
    uint32_t all = n >= 32 ? 0xFFFFFFFFu : (1u << n) - 1;
#ifdef CSR_FW_DQS_CAL_START_ADDR
    fw_dqs_cal_way_write(way);
    fw_dqs_cal_start_write(1);
    while (fw_dqs_cal_busy_read())      /* 2^taps READ IDs a channel: well under a ms */
        ;
    for (uint32_t c = 0; tap && c < n; c++) {
        fw_dqs_cal_sel_write(c);
        tap[c] = fw_dqs_cal_result_read() & 0x1FF;
    }
    return fw_dqs_cal_ok_read() & all;
#else
    (void)way;
    (void)tap;
    return all;
#endif
}

/* --- the FTL's hardware read path (soc/ftl_read_path.py) ------------------------------ */

#ifdef CSR_FTL_READ_BASE
bool hal_hw_read_present(void) { return true; }

void hal_hw_read_setup(const uint32_t *l2p, bool enable)
{
    ftl_read_l2p_base_write((uint32_t)(uintptr_t)l2p);
    ftl_read_enable_write(enable ? 1 : 0);
}

void hal_hw_read_slc(uint32_t block, bool slc)
{
    ftl_read_slc_write((block & 0x7FFFFFFFu) | (slc ? 0x80000000u : 0));
}

void hal_hw_read_fence(void)
{
    uint16_t begun = (uint16_t)ftl_read_begun_read();
    while ((int16_t)((uint16_t)ftl_read_finished_read() - begun) < 0)
        ;
}

bool hal_hw_read_idle(void) { return ftl_read_idle_read() != 0; }

void hal_hw_read_refresh(uint32_t bits)
{
    ftl_read_refresh_bits_write(bits);
}

bool hal_hw_read_hint(uint32_t *block)
{
    uint32_t v = ftl_read_hint_read();
    if (!(v >> 31))
        return false;
    ftl_read_hint_ack_write(1);
    *block = v & 0x7FFFFFFFu;
    return true;
}

void hal_hw_read_counts(struct hal_hw_read_counts *c)
{
    c->reads = ftl_read_reads_read();
    c->punts = ftl_read_punts_read();
    c->handbacks = ftl_read_handbacks_read();
    c->lbas = ftl_read_lbas_read();
    c->corrected = ftl_read_corrected_read();
    c->max_bits = ftl_read_max_bits_read();
}
#else
bool hal_hw_read_present(void) { return false; }
void hal_hw_read_setup(const uint32_t *l2p, bool enable) { (void)l2p; (void)enable; }
void hal_hw_read_slc(uint32_t block, bool slc) { (void)block; (void)slc; }
void hal_hw_read_fence(void) { }
bool hal_hw_read_idle(void) { return true; }
void hal_hw_read_refresh(uint32_t bits) { (void)bits; }
bool hal_hw_read_hint(uint32_t *block) { (void)block; return false; }
void hal_hw_read_counts(struct hal_hw_read_counts *c)
{
    *c = (struct hal_hw_read_counts){ 0 };
}
#endif

/* --- the NAND emulator's block table (soc/nand_emulation.py, NandEmulatorBackdoor) ----- */

#ifdef CSR_NAND_EMULATION_BD_GO_ADDR
#define EMU_BUSY    (1u << CSR_NAND_EMULATION_BD_STATUS_BUSY_OFFSET)
#define EMU_REFUSED (1u << CSR_NAND_EMULATION_BD_STATUS_REFUSED_OFFSET)

uint32_t hal_emu_pe_max(void)
{
    return (1u << CSR_NAND_EMULATION_BD_ENTRY_PE_SIZE) - 1;
}

/* One backdoor operation (op: NAND_EMULATION_BD_OP_*, the emulator's bd_op) */
static bool emu_op(uint32_t op, uint32_t channel, uint32_t way, uint32_t lun, uint32_t block,
                   uint32_t pe)
{
    nand_emulation_bd_target_write(channel << CSR_NAND_EMULATION_BD_TARGET_CHANNEL_OFFSET |
                                   way << CSR_NAND_EMULATION_BD_TARGET_WAY_OFFSET |
                                   lun << CSR_NAND_EMULATION_BD_TARGET_LUN_OFFSET);
    nand_emulation_bd_block_write(block);
    nand_emulation_bd_op_write(op);
    /* the entry is wider than 32 bits on parts of 512 pages a block and more */
    nand_emulation_bd_entry_write((uint64_t)pe << CSR_NAND_EMULATION_BD_ENTRY_PE_OFFSET);
    nand_emulation_bd_go_write(1);
    uint32_t st;
    /* the emulator takes it when its command engine is next idle: a few cycles */
    while ((st = nand_emulation_bd_status_read()) & EMU_BUSY)
        ;
    return !(st & EMU_REFUSED);
}

bool hal_emu_bad_block(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block)
{
    return emu_op(NAND_EMULATION_BD_OP_BAD, channel, way, lun, block, 0);
}

bool hal_emu_set_pe(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block, uint32_t pe)
{
    return emu_op(NAND_EMULATION_BD_OP_PE, channel, way, lun, block, pe);
}

void hal_emu_pe_limit(uint32_t limit) { nand_emulation_pe_limit_write(limit); }
#else
uint32_t hal_emu_pe_max(void) { return 0; }
bool hal_emu_bad_block(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block)
{
    (void)channel; (void)way; (void)lun; (void)block;
    return false;
}
bool hal_emu_set_pe(uint32_t channel, uint32_t way, uint32_t lun, uint32_t block, uint32_t pe)
{
    (void)channel; (void)way; (void)lun; (void)block; (void)pe;
    return false;
}
void hal_emu_pe_limit(uint32_t limit) { (void)limit; }
#endif
