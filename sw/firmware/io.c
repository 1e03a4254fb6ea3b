/* SPDX-License-Identifier: BSD-2-Clause */
/* io.c - the NVM commands the fast path hands to the firmware: Dataset Management
 * (deallocate ranges) and Write Zeroes; both unmap, so the LBAs read as zeroes. */
#include "ftl.h"

uint16_t io_dsm(const struct hal_cmd *c)
{
    if (c->dw[1] != 1)
        return NVME_SC_INVALID_NAMESPACE;
    uint32_t nr = (c->dw[10] & 0xFF) + 1;
    uint16_t st = hal_xfer(0, c->dw[6] | (uint64_t)c->dw[7] << 32,
                           c->dw[8] | (uint64_t)c->dw[9] << 32, 16 * nr, false);
    if (st)
        return st;
    if (ftl_read_only())
        return NVME_SC_NAMESPACE_WRITE_PROTECTED;
    /* every range is checked before any is applied: an error changes nothing */
    for (uint32_t i = 0; i < nr; i++) {
        uint32_t a = G.xfer_addr + 16 * i;
        uint64_t nlb = buf_read32(a + 4);
        uint64_t slba = buf_read32(a + 8) | (uint64_t)buf_read32(a + 12) << 32;
        if (slba + nlb > F.ns_lbas || slba + nlb < slba)
            return NVME_SC_LBA_OUT_OF_RANGE;
    }
    if (!(c->dw[11] & 0x4))     /* AD clear: attributes are hints only */
        return 0;
    F.quiesced = false;
    for (uint32_t i = 0; i < nr; i++) {
        uint32_t a = G.xfer_addr + 16 * i;
        uint64_t nlb = buf_read32(a + 4);
        uint64_t slba = buf_read32(a + 8) | (uint64_t)buf_read32(a + 12) << 32;
        ftl_zero_range(slba, nlb);
    }
    return 0;
}

uint16_t io_write_zeroes(const struct hal_cmd *c)
{
    if (c->dw[1] != 1)
        return NVME_SC_INVALID_NAMESPACE;
    uint64_t slba = c->dw[10] | (uint64_t)c->dw[11] << 32;
    uint64_t nlb = (c->dw[12] & 0xFFFF) + 1u;
    if (slba + nlb > F.ns_lbas || slba + nlb < slba)
        return NVME_SC_LBA_OUT_OF_RANGE;
    if (ftl_read_only())
        return NVME_SC_NAMESPACE_WRITE_PROTECTED;
    F.quiesced = false;
    ftl_zero_range(slba, nlb);
    /* FUA or write-through (the cache off), as for a write: the zeroed partial units reach
     * the flash, and the journal commit holding the whole units' unmapping too (without it a
     * power cut brought the old data back: tests/system/drive/test_powercut.py) */
    if ((c->dw[12] >> 30 & 1) || !features_vwc()) {
        ftl_flush_sync();
        jnl_wait(jnl_commit());
    }
    return 0;
}
