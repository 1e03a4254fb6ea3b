// SPDX-License-Identifier: BSD-2-Clause
// sync.c - the synchronous API: one command at a time through the bounce buffer.
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sl_priv.h"

static void retired_done(const struct sl_cpl *cpl, void *user)
{
    (void)cpl;
    struct sl_retired *r = user;
    r->c->t->ops->dma_free(r->c->t, &r->m);
    r->used = 0;
}

/* The command on `qid` / `cid` timed out holding the bounce buffer: the buffer is retired
 * (its late completion frees it) and a new one takes its place, so the next command's data
 * never shares memory a late DMA could still write. */
static int retire_bounce(struct sl_ctrl *c, unsigned qid, uint16_t cid)
{
    struct sl_retired *r = NULL;
    for (unsigned i = 0; i < SL_RETIRED_MAX && !r; i++)
        if (!c->retired[i].used)
            r = &c->retired[i];
    struct sl_dma fresh;
    if (!r || c->t->ops->dma_alloc(c->t, c->bounce.len, &fresh) < 0) {
        /* nothing left to replace it with: no more data commands on this controller */
        c->bounce.len = 0;
        return -1;
    }
    *r = (struct sl_retired){ .c = c, .m = c->bounce, .used = 1 };
    c->q[qid].reqs[cid].cb = retired_done;
    c->q[qid].reqs[cid].user = r;
    c->bounce = fresh;
    return 0;
}

/* Data direction from the opcode (NVMe 1.4 figure 79): bit 0 host to controller, bit 1
 * controller to host. */
static int exec_bounce(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, void *buf,
                       size_t len, uint32_t *dw0, uint64_t timeout_ns)
{
    if (len > c->bounce.len || len > c->max_transfer)
        return sl_err(c, -E2BIG, "%s of %zu bytes exceeds the maximum transfer (MDTS) of %u "
                      "bytes", sl_opc_name(qid, cmd->opc), len, c->max_transfer);
    if (len && !buf)
        return sl_err(c, -EINVAL, "%s: no buffer for %zu bytes", sl_opc_name(qid, cmd->opc),
                      len);
    if (len && (cmd->opc & 1u))
        memcpy(c->bounce.vaddr, buf, len);
    else if (len)
        memset(c->bounce.vaddr, 0, len);
    if (len && !c->bounce.len)
        return sl_err(c, -EIO, "%s: every bounce buffer is held by a command that timed out "
                      "and never completed: reset the controller",
                      sl_opc_name(qid, cmd->opc));
    int rc = sl_exec(c, qid, cmd, len ? c->bounce.bus : 0, len, dw0, timeout_ns);
    if (rc == -ETIMEDOUT && len && retire_bounce(c, qid, cmd->cid) < 0) {
        size_t n = strlen(c->err);
        snprintf(c->err + n, sizeof(c->err) - n, "; its bounce buffer stays with it and no "
                 "other could be allocated: reset the controller");
    }
    if (rc == 0 && len && (cmd->opc & 2u))
        memcpy(buf, c->bounce.vaddr, len);
    return rc;
}

int sl_admin(struct sl_ctrl *c, struct nvme_sqe *cmd, void *buf, size_t len, uint32_t *dw0)
{
    return exec_bounce(c, 0, cmd, buf, len, dw0, c->opts.admin_timeout_ns);
}

int sl_io(struct sl_ctrl *c, unsigned qid, struct nvme_sqe *cmd, void *buf, size_t len,
          uint32_t *dw0)
{
    if (qid == 0 || qid > c->n_io)
        return sl_err(c, -EINVAL, "no I/O queue %u (the controller has %u)", qid, c->n_io);
    return exec_bounce(c, qid, cmd, buf, len, dw0, c->opts.io_timeout_ns);
}

static int rw(struct sl_ctrl *c, unsigned qid, int write, uint64_t slba, uint32_t nlb,
              uint8_t *buf)
{
    if (c->lba_bytes == 0)
        return sl_err(c, -ENODEV, "namespace 1 does not exist");
    if (nlb == 0)
        return sl_err(c, -EINVAL, "block count 0");
    uint32_t per_cmd = c->max_transfer / c->lba_bytes;
    if (per_cmd > 65536u)
        per_cmd = 65536u;
    while (nlb) {
        uint32_t n = nlb < per_cmd ? nlb : per_cmd;
        struct nvme_sqe cmd = {0};
        cmd.opc = write ? NVME_CMD_WRITE : NVME_CMD_READ;
        cmd.nsid = 1;
        cmd.cdw10 = (uint32_t)slba;
        cmd.cdw11 = (uint32_t)(slba >> 32);
        cmd.cdw12 = n - 1u;
        int rc = sl_io(c, qid, &cmd, buf, (size_t)n * c->lba_bytes, NULL);
        if (rc != 0)
            return rc;
        slba += n;
        nlb -= n;
        buf += (size_t)n * c->lba_bytes;
    }
    return 0;
}

int sl_read(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint32_t nlb, void *buf)
{
    return rw(c, qid, 0, slba, nlb, buf);
}

int sl_write(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint32_t nlb, const void *buf)
{
    return rw(c, qid, 1, slba, nlb, (uint8_t *)(uintptr_t)buf);
}

int sl_flush(struct sl_ctrl *c, unsigned qid)
{
    struct nvme_sqe cmd = {.opc = NVME_CMD_FLUSH, .nsid = 1};
    return sl_io(c, qid, &cmd, NULL, 0, NULL);
}

int sl_write_zeroes(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint32_t nlb)
{
    if (nlb == 0 || nlb > 65536u)
        return sl_err(c, -EINVAL, "Write Zeroes: block count %u outside 1..65536", nlb);
    struct nvme_sqe cmd = {.opc = NVME_CMD_WRITE_ZEROES, .nsid = 1};
    cmd.cdw10 = (uint32_t)slba;
    cmd.cdw11 = (uint32_t)(slba >> 32);
    cmd.cdw12 = nlb - 1u;
    return sl_io(c, qid, &cmd, NULL, 0, NULL);
}

int sl_dsm(struct sl_ctrl *c, unsigned qid, const struct nvme_dsm_range *ranges, unsigned nr,
           uint32_t attr)
{
    if (nr == 0 || nr > 256)
        return sl_err(c, -EINVAL, "Dataset Management: %u ranges (1..256)", nr);
    struct nvme_sqe cmd = {.opc = NVME_CMD_DATASET_MANAGEMENT, .nsid = 1, .cdw10 = nr - 1u,
                           .cdw11 = attr};
    return sl_io(c, qid, &cmd, (void *)(uintptr_t)ranges, nr * sizeof(*ranges), NULL);
}

int sl_trim(struct sl_ctrl *c, unsigned qid, uint64_t slba, uint64_t nlb)
{
    struct nvme_dsm_range r[256];
    while (nlb) {
        unsigned nr = 0;
        while (nlb && nr < 256) {
            uint32_t n = nlb > 0xffffffffull ? 0xffffffffu : (uint32_t)nlb;
            r[nr++] = (struct nvme_dsm_range){.cattr = 0, .nlb = n, .slba = slba};
            slba += n;
            nlb -= n;
        }
        int rc = sl_dsm(c, qid, r, nr, NVME_DSM_AD);
        if (rc != 0)
            return rc;
    }
    return 0;
}

int sl_identify(struct sl_ctrl *c, uint32_t cns, uint32_t nsid, void *buf4096)
{
    struct nvme_sqe cmd = {.opc = NVME_ADMIN_IDENTIFY, .nsid = nsid, .cdw10 = cns};
    return sl_admin(c, &cmd, buf4096, 4096, NULL);
}

int sl_get_log_page(struct sl_ctrl *c, uint32_t nsid, uint32_t lid, void *buf, size_t len)
{
    if (len == 0 || (len & 3u))
        return sl_err(c, -EINVAL, "Get Log Page: length %zu is not a positive multiple of 4",
                      len);
    uint32_t numd = (uint32_t)(len / 4u) - 1u;
    struct nvme_sqe cmd = {.opc = NVME_ADMIN_GET_LOG_PAGE, .nsid = nsid};
    cmd.cdw10 = (lid & 0xffu) | ((numd & 0xffffu) << 16);
    cmd.cdw11 = numd >> 16;
    return sl_admin(c, &cmd, buf, len, NULL);
}

int sl_get_features(struct sl_ctrl *c, uint32_t fid, uint32_t dw11, uint32_t *dw0)
{
    struct nvme_sqe cmd = {.opc = NVME_ADMIN_GET_FEATURES, .cdw10 = fid & 0xffu, .cdw11 = dw11};
    return sl_admin(c, &cmd, NULL, 0, dw0);
}

int sl_set_features(struct sl_ctrl *c, uint32_t fid, uint32_t dw11, uint32_t *dw0)
{
    struct nvme_sqe cmd = {.opc = NVME_ADMIN_SET_FEATURES, .cdw10 = fid & 0xffu, .cdw11 = dw11};
    return sl_admin(c, &cmd, NULL, 0, dw0);
}

int sl_format(struct sl_ctrl *c, uint32_t nsid, uint32_t lbaf, uint32_t ses)
{
    if (lbaf > 15 || ses > 2)
        return sl_err(c, -EINVAL, "Format NVM: LBA format %u (0..15), SES %u (0..2)", lbaf, ses);
    struct nvme_sqe cmd = {.opc = NVME_ADMIN_FORMAT_NVM, .nsid = nsid};
    cmd.cdw10 = lbaf | (ses << 9);
    int rc = sl_admin(c, &cmd, NULL, 0, NULL);
    if (rc != 0)
        return rc;
    return sl_identify_ns1(c);
}
