/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * hal_soc.c - hal.h on the SoC (soc/ssdlab_soc.py): LiteX's generated csr.h for the plain
 * registers, soc/fw_ports.py's generated fw_ports.h for the packed stream ports.
 *
 * A stream towards the firmware is read as its status words, then popped; a stream from the
 * firmware is written as storage words, then pushed, and the next push waits until the
 * previous beat was taken (busy = 0). Multi-word LiteX CSRs hold their most significant
 * word first; the stream ports' words are ours, least significant first.
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

#include "hal.h"

#define BUF_WINDOW 0x90000000u

static inline uint32_t rd(unsigned long a) { return *(volatile uint32_t *)a; }
static inline void wr(unsigned long a, uint32_t v) { *(volatile uint32_t *)a = v; }

/* field (word, shift, width <= 32) of a packed beat */
#define GET(w, F) ((F##_WIDTH == 32) ? (w)[F##_WORD] : \
                   (((w)[F##_WORD] >> F##_SHIFT) & ((1u << (F##_WIDTH & 31)) - 1u)))
#define GET64(w, F) ((uint64_t)(w)[F##_WORD] | ((uint64_t)(w)[F##_WORD + 1] << 32))
#define PUT(w, F, v) ((w)[F##_WORD] |= ((uint32_t)(v) & ((F##_WIDTH == 32) ? ~0u : \
                      ((1u << (F##_WIDTH & 31)) - 1u))) << F##_SHIFT)
#define PUT64(w, F, v) do { (w)[F##_WORD] = (uint32_t)(v); \
                            (w)[F##_WORD + 1] = (uint32_t)((uint64_t)(v) >> 32); } while (0)

static void read_words(const unsigned long *addrs, uint32_t *w, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        w[i] = rd(addrs[i]);
}

static void push_words(const unsigned long *addrs, const uint32_t *w, unsigned n,
                       unsigned long push, unsigned long busy)
{
    while (rd(busy))
        ;
    for (unsigned i = 0; i < n; i++)
        wr(addrs[i], w[i]);
    wr(push, 1);
}

/* push, then wait until the front end has taken the beat (config writes take effect then) */
static void push_sync(const unsigned long *addrs, const uint32_t *w, unsigned n,
                      unsigned long push, unsigned long busy)
{
    push_words(addrs, w, n, push, busy);
    while (rd(busy))
        ;
}

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
    id->n_io_queues = ssdlab_ident_n_io_queues_read();
    id->tag_width = ssdlab_ident_tag_width_read();
    id->max_transfer = ssdlab_ident_max_transfer_read();
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
    for (unsigned i = 0; i < 8; i++) {
        uint32_t w = rd(CSR_SSDLAB_IDENT_PERSONA0_ADDR + 4 * i);
        for (unsigned b = 0; b < 4; b++)
            id->persona[4 * i + b] = (char)(w >> (8 * b));
    }
    id->persona[31] = 0;
}

uint64_t hal_cycles(void)
{
    timer0_uptime_latch_write(1);
    return timer0_uptime_cycles_read();
}

void hal_putc(char c)
{
    while (uart_txfull_read())
        ;
    uart_rxtx_write((unsigned char)c);
}

/* --- NVMe front end ---------------------------------------------------------------------- */

static const unsigned long cmd_addrs[] = FW_CMD_ADDRS;

bool hal_cmd_pop(struct hal_cmd *cmd)
{
    uint32_t w[FW_CMD_WORDS];
    if (!fw_cmd_valid_read())
        return false;
    read_words(cmd_addrs, w, FW_CMD_WORDS);
    fw_cmd_pop_write(1);
    cmd->sqid = (uint16_t)GET(w, FW_CMD_SQID);
    cmd->sq_head = (uint16_t)GET(w, FW_CMD_SQ_HEAD);
    for (unsigned i = 0; i < 16; i++)
        cmd->dw[i] = w[FW_CMD_SQE_WORD + i];
    return true;
}

static const unsigned long cpl_addrs[] = FW_CPL_ADDRS;

void hal_cpl_push(uint16_t cqid, uint16_t sqid, uint16_t sq_head, uint16_t cid,
                  uint16_t status, uint32_t dw0)
{
    uint32_t w[FW_CPL_WORDS] = {0};
    PUT(w, FW_CPL_CQID, cqid);
    PUT(w, FW_CPL_SQID, sqid);
    PUT(w, FW_CPL_SQ_HEAD, sq_head);
    PUT(w, FW_CPL_CID, cid);
    PUT(w, FW_CPL_STATUS, status);
    PUT(w, FW_CPL_DW0, dw0);
    push_sync(cpl_addrs, w, FW_CPL_WORDS, CSR_FW_CPL_PUSH_ADDR, CSR_FW_CPL_BUSY_ADDR);
}

static const unsigned long sqcfg_addrs[] = FW_SQCFG_ADDRS;
static const unsigned long cqcfg_addrs[] = FW_CQCFG_ADDRS;
static const unsigned long sqpage_addrs[] = FW_SQPAGE_ADDRS;
static const unsigned long cqpage_addrs[] = FW_CQPAGE_ADDRS;

void hal_sq_config(uint16_t sqid, uint64_t base, uint16_t qsize, bool enable, bool nc,
                   uint16_t cqid)
{
    uint32_t w[FW_SQCFG_WORDS] = {0};
    PUT(w, FW_SQCFG_SQID, sqid);
    PUT64(w, FW_SQCFG_BASE, base);
    PUT(w, FW_SQCFG_QSIZE, qsize);
    PUT(w, FW_SQCFG_ENABLE, enable);
    PUT(w, FW_SQCFG_NC, nc);
    PUT(w, FW_SQCFG_CQID, cqid);
    /* a delete handshakes once the SQ is gone */
    push_sync(sqcfg_addrs, w, FW_SQCFG_WORDS, CSR_FW_SQCFG_PUSH_ADDR, CSR_FW_SQCFG_BUSY_ADDR);
}

void hal_cq_config(uint16_t cqid, uint64_t base, uint16_t qsize, uint16_t iv, bool ien,
                   bool enable, bool nc)
{
    uint32_t w[FW_CQCFG_WORDS] = {0};
    PUT(w, FW_CQCFG_CQID, cqid);
    PUT64(w, FW_CQCFG_BASE, base);
    PUT(w, FW_CQCFG_QSIZE, qsize);
    PUT(w, FW_CQCFG_IV, iv);
    PUT(w, FW_CQCFG_IEN, ien);
    PUT(w, FW_CQCFG_ENABLE, enable);
    PUT(w, FW_CQCFG_NC, nc);
    push_sync(cqcfg_addrs, w, FW_CQCFG_WORDS, CSR_FW_CQCFG_PUSH_ADDR, CSR_FW_CQCFG_BUSY_ADDR);
}

/* page fields hold address >> 12 */
void hal_sq_page(uint16_t sqid, uint32_t index, uint64_t page_addr)
{
    uint32_t w[FW_SQPAGE_WORDS] = {0};
    PUT(w, FW_SQPAGE_SQID, sqid);
    PUT(w, FW_SQPAGE_INDEX, index);
    PUT64(w, FW_SQPAGE_PAGE, page_addr >> 12);
    push_sync(sqpage_addrs, w, FW_SQPAGE_WORDS, CSR_FW_SQPAGE_PUSH_ADDR,
               CSR_FW_SQPAGE_BUSY_ADDR);
}

void hal_cq_page(uint16_t cqid, uint32_t index, uint64_t page_addr)
{
    uint32_t w[FW_CQPAGE_WORDS] = {0};
    PUT(w, FW_CQPAGE_CQID, cqid);
    PUT(w, FW_CQPAGE_INDEX, index);
    PUT64(w, FW_CQPAGE_PAGE, page_addr >> 12);
    push_sync(cqpage_addrs, w, FW_CQPAGE_WORDS, CSR_FW_CQPAGE_PUSH_ADDR,
               CSR_FW_CQPAGE_BUSY_ADDR);
}

static const unsigned long xfer_addrs[] = FW_XFER_ADDRS;
static const unsigned long xfercpl_addrs[] = FW_XFERCPL_ADDRS;

uint16_t hal_xfer(uint32_t buf, uint64_t prp1, uint64_t prp2, uint32_t length, bool to_host)
{
    uint32_t w[FW_XFER_WORDS] = {0};
    uint32_t c[FW_XFERCPL_WORDS];
    PUT(w, FW_XFER_BUF, buf);
    PUT64(w, FW_XFER_PRP1, prp1);
    PUT64(w, FW_XFER_PRP2, prp2);
    PUT(w, FW_XFER_LENGTH, length);
    PUT(w, FW_XFER_TO_HOST, to_host);
    push_words(xfer_addrs, w, FW_XFER_WORDS, CSR_FW_XFER_PUSH_ADDR, CSR_FW_XFER_BUSY_ADDR);
    while (!fw_xfercpl_valid_read())
        ;
    read_words(xfercpl_addrs, c, FW_XFERCPL_WORDS);
    fw_xfercpl_pop_write(1);
    return (uint16_t)GET(c, FW_XFERCPL_STATUS);
}

static const unsigned long ivc_addrs[] = FW_IVC_ADDRS;

void hal_ivc(uint16_t vector, bool cd)
{
    uint32_t w[FW_IVC_WORDS] = {0};
    PUT(w, FW_IVC_VECTOR, vector);
    PUT(w, FW_IVC_CD, cd);
    push_sync(ivc_addrs, w, FW_IVC_WORDS, CSR_FW_IVC_PUSH_ADDR, CSR_FW_IVC_BUSY_ADDR);
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

static const unsigned long aer_addrs[] = FW_AER_ADDRS;

bool hal_aer_pop(uint8_t *info)
{
    uint32_t w[FW_AER_WORDS];
    if (!fw_aer_valid_read())
        return false;
    read_words(aer_addrs, w, FW_AER_WORDS);
    fw_aer_pop_write(1);
    *info = (uint8_t)GET(w, FW_AER_INFO);
    return true;
}

bool hal_ctrl_reset_pending(void) { return fw_reset_pending_read() != 0; }
void hal_ctrl_reset_ack(void) { fw_reset_ack_write(1); }
bool hal_io_busy(void) { return fw_io_busy_read() != 0; }
uint8_t hal_shutdown_request(void) { return (uint8_t)fw_shn_read(); }
void hal_shutdown_done(bool done) { fw_shn_done_write(done); }

/* --- fast path --------------------------------------------------------------------------- */

static const unsigned long bereq_addrs[] = FW_BEREQ_ADDRS;
static const unsigned long becpl_addrs[] = FW_BECPL_ADDRS;

bool hal_be_req_pop(struct hal_be_req *req)
{
    uint32_t w[FW_BEREQ_WORDS];
    if (!fw_bereq_valid_read())
        return false;
    read_words(bereq_addrs, w, FW_BEREQ_WORDS);
    fw_bereq_pop_write(1);
    req->tag = (uint8_t)GET(w, FW_BEREQ_TAG);
    req->opcode = (uint8_t)GET(w, FW_BEREQ_OPCODE);
    req->nsid = GET(w, FW_BEREQ_NSID);
    req->slba = GET64(w, FW_BEREQ_SLBA);
    req->nlb = (uint16_t)GET(w, FW_BEREQ_NLB);
    req->flags = (uint16_t)GET(w, FW_BEREQ_FLAGS);
    return true;
}

void hal_be_cpl_push(uint8_t tag, uint16_t status)
{
    uint32_t w[FW_BECPL_WORDS] = {0};
    PUT(w, FW_BECPL_TAG, tag);
    PUT(w, FW_BECPL_STATUS, status);
    push_words(becpl_addrs, w, FW_BECPL_WORDS, CSR_FW_BECPL_PUSH_ADDR, CSR_FW_BECPL_BUSY_ADDR);
}

/* --- buffer memory ----------------------------------------------------------------------- */

volatile uint8_t *hal_buf(void) { return (volatile uint8_t *)BUF_WINDOW; }

static bool copy_job(uint32_t dst, uint32_t src, uint64_t pattern, uint32_t bytes, bool fill)
{
    if (!bufcopy_room_read())
        return false;
    bufcopy_dst_write(dst);
    bufcopy_src_write(src);
    bufcopy_bytes_write(bytes);
    bufcopy_pattern_write(pattern);
    bufcopy_fill_write(fill);
    bufcopy_push_write(1);
    return true;
}

bool hal_copy(uint32_t dst, uint32_t src, uint32_t bytes)
{
    return copy_job(dst, src, 0, bytes, false);
}

bool hal_fill(uint32_t dst, uint64_t pattern, uint32_t bytes)
{
    return copy_job(dst, 0, pattern, bytes, true);
}

uint32_t hal_copy_done(void) { return bufcopy_done_read(); }

/* --- flash ------------------------------------------------------------------------------- */

static const unsigned long fop_addrs[] = FW_FOP_ADDRS;
static const unsigned long fcpl_addrs[] = FW_FCPL_ADDRS;

bool hal_flash_push(const struct hal_flash_op *op)
{
    uint32_t w[FW_FOP_WORDS] = {0};
    if (rd(CSR_FW_FOP_BUSY_ADDR))
        return false;
    PUT(w, FW_FOP_TAG, op->tag);
    PUT(w, FW_FOP_OP, op->op);
    PUT(w, FW_FOP_WAY, op->way);
    PUT(w, FW_FOP_LUN, op->lun);
    PUT(w, FW_FOP_PLANE_MASK, op->plane_mask);
    PUT(w, FW_FOP_BLOCK, op->block);
    PUT(w, FW_FOP_PAGE, op->page);
    PUT(w, FW_FOP_COLUMN, op->column);
    PUT(w, FW_FOP_LENGTH, op->length);
    PUT(w, FW_FOP_BUFFER, op->buffer);
    PUT(w, FW_FOP_CHANNEL, op->channel);
    push_words(fop_addrs, w, FW_FOP_WORDS, CSR_FW_FOP_PUSH_ADDR, CSR_FW_FOP_BUSY_ADDR);
    return true;
}

bool hal_flash_pop(struct hal_flash_cpl *cpl)
{
    uint32_t w[FW_FCPL_WORDS];
    if (!fw_fcpl_valid_read())
        return false;
    read_words(fcpl_addrs, w, FW_FCPL_WORDS);
    fw_fcpl_pop_write(1);
    cpl->tag = (uint8_t)GET(w, FW_FCPL_TAG);
    cpl->status = (uint8_t)GET(w, FW_FCPL_STATUS);
    cpl->fail = GET(w, FW_FCPL_FAIL) != 0;
    cpl->error = GET(w, FW_FCPL_ERROR) != 0;
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
